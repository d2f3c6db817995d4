//! RuntimeClass: a pod naming a RuntimeClass gets the class's overhead and
//! scheduling (node selector and tolerations merged into its own), and is refused when
//! the class does not exist or the pod's own overhead or node selector disagrees.

use super::limit_ranger::name_for_errors;
use super::plugin::{Notes, Plugin, Write};
use super::reads::{Fetched, Read};
use super::request::Request;
use super::{Context, Operation};
use crate::rest::object::Object;
use crate::status::ApiError;
use serde_json::{Map, Value};

#[derive(Debug)]
pub(super) struct RuntimeClass;

const GROUP: &str = "node.k8s.io";
const CLASSES: &str = "runtimeclasses";

fn class_name(pod: &Object) -> &str {
    pod.get("spec").and_then(|s| s.get("runtimeClassName")).and_then(Value::as_str).unwrap_or("")
}

fn forbidden(pod: &Object, why: &str) -> ApiError {
    ApiError::forbidden("", "pods", &name_for_errors(&Value::Object(pod.clone())), why)
}

impl Plugin for RuntimeClass {
    fn handles(&self, request: &Request) -> bool {
        request.is_core("pods", "") && request.operation == Operation::Create
    }

    fn mutates(&self) -> bool {
        true
    }

    fn validates(&self) -> bool {
        true
    }

    fn reads(&self, chain: &Context, _request: &Request, pod: &Object) -> Vec<Read> {
        match class_name(pod) {
            "" => Vec::new(),
            name => vec![Read::Object { key: chain.key(GROUP, CLASSES, None, name) }],
        }
    }

    fn mutate(
        &self,
        chain: &Context,
        _request: &Request,
        pod: &mut Object,
        fetched: &Fetched,
        _notes: &mut Notes,
    ) -> Result<(), ApiError> {
        let name = class_name(pod).to_owned();
        if name.is_empty() {
            return Ok(());
        }
        let Some(class) = fetched.object(&chain.key(GROUP, CLASSES, None, &name)) else {
            return Err(forbidden(pod, &format!("pod rejected: RuntimeClass \"{name}\" not found")));
        };
        let class = &class.object;
        let pod_name = name_for_errors(&Value::Object(pod.clone()));
        let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else { return Ok(()) };
        if let Some(overhead) = class.get("overhead").and_then(|o| o.get("podFixed")).filter(|o| !o.is_null()) {
            match spec.get("overhead").filter(|o| !o.is_null()) {
                None => {
                    spec.insert("overhead".into(), overhead.clone());
                }
                Some(own) if !same_resources(own, overhead) => {
                    let why = "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead";
                    return Err(ApiError::forbidden("", "pods", &pod_name, why));
                }
                Some(_) => {}
            }
        }
        let Some(scheduling) = class.get("scheduling").filter(|s| !s.is_null()) else { return Ok(()) };
        if let Some(selector) = scheduling.get("nodeSelector").and_then(Value::as_object) {
            let own = spec.entry("nodeSelector").or_insert_with(|| Value::Object(Map::new()));
            if !own.is_object() {
                *own = Value::Object(Map::new());
            }
            let own = own.as_object_mut().expect("made a map above");
            for (key, value) in selector {
                match own.get(key) {
                    Some(theirs) if theirs != value => {
                        let why = format!(
                            "conflict: runtimeClass.scheduling.nodeSelector[{key}] = {}; pod.spec.nodeSelector[{key}] = {}",
                            value.as_str().unwrap_or(""),
                            theirs.as_str().unwrap_or("")
                        );
                        return Err(ApiError::forbidden("", "pods", &pod_name, &why));
                    }
                    Some(_) => {}
                    None => {
                        own.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        if let Some(tolerations) = scheduling.get("tolerations").and_then(Value::as_array) {
            let own = spec.entry("tolerations").or_insert_with(|| Value::Array(Vec::new()));
            if let Some(own) = own.as_array_mut() {
                for t in tolerations {
                    if !own.contains(t) {
                        own.push(t.clone());
                    }
                }
            }
        }
        Ok(())
    }

    fn validate(
        &self,
        chain: &Context,
        _request: &Request,
        pod: &Object,
        fetched: &Fetched,
        _notes: &mut Notes,
    ) -> Result<Vec<Write>, ApiError> {
        let name = class_name(pod);
        if name.is_empty() {
            return Ok(Vec::new());
        }
        let Some(class) = fetched.object(&chain.key(GROUP, CLASSES, None, name)) else {
            return Err(forbidden(pod, &format!("pod rejected: RuntimeClass \"{name}\" not found")));
        };
        let want = class.object.get("overhead").and_then(|o| o.get("podFixed")).filter(|o| !o.is_null());
        let have = pod.get("spec").and_then(|s| s.get("overhead")).filter(|o| !o.is_null());
        let agree = match (want, have) {
            (None, None) => true,
            (Some(w), Some(h)) => same_resources(w, h),
            _ => false,
        };
        if !agree {
            return Err(forbidden(pod, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"));
        }
        Ok(Vec::new())
    }
}

/// Resource lists equal by value.
fn same_resources(a: &Value, b: &Value) -> bool {
    super::read_list(Some(a)) == super::read_list(Some(b))
}
