//! Priority: a pod's `priorityClassName` (or the cluster's global default class)
//! resolved into its `priority` and `preemptionPolicy`, which the pod may not give
//! otherwise; and at most one PriorityClass is the global default.

use super::limit_ranger::name_for_errors;
use super::plugin::{Notes, Plugin, Write};
use super::reads::{Fetched, Read, Stored};
use super::request::Request;
use super::{Context, Operation};
use crate::rest::object::Object;
use crate::status::ApiError;
use serde_json::{json, Value};

#[derive(Debug)]
pub(super) struct Priority;

const GROUP: &str = "scheduling.k8s.io";
const CLASSES: &str = "priorityclasses";
/// What a pod gets when it names no class and no class is the global default.
const NO_DEFAULT_PRIORITY: i64 = 0;
const PREEMPT_LOWER: &str = "PreemptLowerPriority";

fn is_pod(request: &Request) -> bool {
    request.is_core("pods", "")
}

fn is_class(request: &Request) -> bool {
    request.group == GROUP && request.resource == CLASSES && request.subresource.is_empty()
}

fn class_name(pod: &Object) -> &str {
    pod.get("spec").and_then(|s| s.get("priorityClassName")).and_then(Value::as_str).unwrap_or("")
}

fn global_default(class: &Object) -> bool {
    class.get("globalDefault").and_then(Value::as_bool).unwrap_or(false)
}

fn value(class: &Object) -> i64 {
    class.get("value").and_then(Value::as_i64).unwrap_or(0)
}

/// The global default class: of several, the lowest.
fn default_class(classes: &[Stored]) -> Option<&Stored> {
    classes.iter().filter(|c| global_default(&c.object)).min_by_key(|c| value(&c.object))
}

impl Plugin for Priority {
    fn handles(&self, request: &Request) -> bool {
        (is_pod(request) && matches!(request.operation, Operation::Create | Operation::Update))
            || (is_class(request) && matches!(request.operation, Operation::Create | Operation::Update))
    }

    fn mutates(&self) -> bool {
        true
    }

    fn validates(&self) -> bool {
        true
    }

    fn reads(&self, chain: &Context, request: &Request, object: &Object) -> Vec<Read> {
        let prefix = chain.prefix(GROUP, CLASSES, None);
        if is_class(request) {
            return vec![Read::Objects { prefix }];
        }
        if request.operation != Operation::Create {
            return Vec::new();
        }
        match class_name(object) {
            "" => vec![Read::Objects { prefix }],
            name => vec![Read::Object { key: chain.key(GROUP, CLASSES, None, name) }],
        }
    }

    fn mutate(
        &self,
        chain: &Context,
        request: &Request,
        pod: &mut Object,
        fetched: &Fetched,
        _notes: &mut Notes,
    ) -> Result<(), ApiError> {
        if !is_pod(request) {
            return Ok(());
        }
        let Some(spec) = pod.get("spec").and_then(Value::as_object) else { return Ok(()) };
        if request.operation == Operation::Update {
            // Set on create; an update that leaves them out keeps them.
            let old_spec = request.old_object.as_ref().and_then(|o| o.get("spec")).cloned();
            let mut spec = spec.clone();
            for field in ["priority", "preemptionPolicy"] {
                if spec.get(field).is_none_or(Value::is_null) {
                    if let Some(old) = old_spec.as_ref().and_then(|s| s.get(field)).filter(|v| !v.is_null()) {
                        spec.insert(field.into(), old.clone());
                    }
                }
            }
            pod.insert("spec".into(), Value::Object(spec));
            return Ok(());
        }
        let forbidden = |pod: &Object, why: String| {
            ApiError::forbidden("", "pods", &name_for_errors(&Value::Object(pod.clone())), &why)
        };
        let name = class_name(pod).to_owned();
        let class = if name.is_empty() {
            default_class(fetched.objects(&chain.prefix(GROUP, CLASSES, None))).map(|c| &c.object)
        } else {
            match fetched.object(&chain.key(GROUP, CLASSES, None, &name)) {
                Some(class) => Some(&class.object),
                None => return Err(forbidden(pod, format!("no PriorityClass with name {name} was found"))),
            }
        };
        let (priority, policy, class_name) = match class {
            Some(c) => (
                value(c),
                c.get("preemptionPolicy").and_then(Value::as_str).unwrap_or(PREEMPT_LOWER).to_owned(),
                c.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str).map(str::to_owned),
            ),
            None => (NO_DEFAULT_PRIORITY, PREEMPT_LOWER.to_owned(), None),
        };
        if let Some(given) = spec.get("priority").and_then(Value::as_i64) {
            if given != priority {
                return Err(forbidden(pod, format!(
                    "the integer value of priority ({given}) must not be provided in pod spec; priority admission controller computed {priority} from the given PriorityClass name"
                )));
            }
        }
        if let Some(given) = spec.get("preemptionPolicy").and_then(Value::as_str) {
            if given != policy {
                return Err(forbidden(pod, format!(
                    "the string value of PreemptionPolicy ({given}) must not be provided in pod spec; priority admission controller computed {policy} from the given PriorityClass name"
                )));
            }
        }
        let spec = pod.get_mut("spec").and_then(Value::as_object_mut).expect("read above");
        spec.insert("priority".into(), json!(priority));
        spec.insert("preemptionPolicy".into(), json!(policy));
        if let Some(class_name) = class_name.filter(|_| name.is_empty()) {
            spec.insert("priorityClassName".into(), json!(class_name));
        }
        Ok(())
    }

    fn validate(
        &self,
        chain: &Context,
        request: &Request,
        class: &Object,
        fetched: &Fetched,
        _notes: &mut Notes,
    ) -> Result<Vec<Write>, ApiError> {
        if !is_class(request) || !global_default(class) {
            return Ok(Vec::new());
        }
        let classes = fetched.objects(&chain.prefix(GROUP, CLASSES, None));
        let own = class.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str).unwrap_or("");
        let other = classes.iter().find(|c| {
            global_default(&c.object) && c.object.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str) != Some(own)
        });
        match other {
            Some(existing) => {
                let existing = existing.object.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str).unwrap_or("");
                Err(ApiError::forbidden(
                    GROUP,
                    CLASSES,
                    &name_for_errors(&Value::Object(class.clone())),
                    &format!("PriorityClass {existing} is already marked as default. Only one default can exist"),
                ))
            }
            None => Ok(Vec::new()),
        }
    }
}
