//! LimitRanges (core/v1). Defaults, for a Container limit: the default limit is the
//! maximum where none is given, and the default request the default limit, else the
//! minimum.
//!
//! Each limit has a known type, names resources as its type allows, and its bounds
//! are ordered: min ≤ default request ≤ default ≤ max, a ratio of at least 1 and no
//! more than max/min (upstream's `ValidateLimitRange`, on create and update alike).

use super::defaults::{fill_missing, objects, str_of};
use super::Strategy;
use crate::rest::object::Object;
use crate::validation::names::qualified_name;
use crate::validation::quantity::Quantity;
use crate::validation::resource_names::{container_resource_name, overcommit_allowed, resource_name};
use crate::validation::value::{list, map, text};
use crate::validation::{FieldError, FieldPath};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

pub struct LimitRanges;

impl Strategy for LimitRanges {
    fn name(&self) -> &'static str {
        "limitranges"
    }

    fn columns(&self) -> super::columns::Columns<'_> {
        super::columns::CREATED_AT
    }

    fn default(&self, obj: &mut Object) {
        let Some(spec) = super::defaults::object(obj, "spec") else {
            return;
        };
        for item in objects(spec, "limits") {
            if str_of(item, "type") == "Container" {
                fill_missing(item, "max", "default");
                fill_missing(item, "default", "defaultRequest");
                fill_missing(item, "min", "defaultRequest");
            }
        }
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate(new)
    }

    fn validate_update(&self, new: &Object, _old: &Object) -> Vec<FieldError> {
        validate(new)
    }
}

const LIMIT_TYPES: [&str; 3] = ["Pod", "Container", "PersistentVolumeClaim"];

/// The bounds a limit gives, each by resource name.
type Bounds = BTreeMap<String, Quantity>;

fn validate(lr: &Object) -> Vec<FieldError> {
    let spec = lr.get("spec").unwrap_or(&Value::Null);
    let path = FieldPath::new("spec").child("limits");
    let mut errs = Vec::new();
    let mut types: Vec<&str> = Vec::new();
    for (i, limit) in list(spec, "limits").iter().enumerate() {
        let at = path.index(i);
        let kind = text(limit, "type");
        errs.extend(limit_type(kind, &at.child("type")));
        if types.contains(&kind) {
            errs.push(FieldError::duplicate(at.child("type").as_str(), kind));
        }
        types.push(kind);
        let mut names = BTreeSet::new();
        let mut bounds = |field: &str, errs: &mut Vec<FieldError>| -> Bounds {
            let mut found = Bounds::new();
            for (name, amount) in map(limit, field).into_iter().flatten() {
                let key = at.child(field).key(name);
                errs.extend(match kind {
                    "Pod" | "Container" => container_resource_name(name, &key),
                    _ => resource_name(name, &key),
                });
                names.insert(name.clone());
                if let Some(q) = Quantity::from_json(amount) {
                    found.insert(name.clone(), q);
                }
            }
            found
        };
        let max = bounds("max", &mut errs);
        let min = bounds("min", &mut errs);
        let (mut defaults, mut requests) = (Bounds::new(), Bounds::new());
        if kind == "Pod" {
            for field in ["default", "defaultRequest"] {
                if map(limit, field).is_some_and(|m| !m.is_empty()) {
                    errs.push(FieldError::forbidden(at.child(field).as_str(), "may not be specified when `type` is 'Pod'"));
                }
            }
        } else {
            defaults = bounds("default", &mut errs);
            requests = bounds("defaultRequest", &mut errs);
        }
        let storage_bounded = |f: &str| map(limit, f).is_some_and(|m| m.contains_key("storage"));
        if kind == "PersistentVolumeClaim" && !storage_bounded("min") && !storage_bounded("max") {
            errs.push(FieldError::required(
                at.child("limits").as_str(),
                "either minimum or maximum storage value is required, but neither was provided",
            ));
        }
        let ratios = bounds("maxLimitRequestRatio", &mut errs);
        // Upstream walks a set, in no fixed order; by name here.
        for name in &names {
            let get = |b: &Bounds| b.get(name).copied();
            errs.extend(ordered(name, &at, get(&min), get(&max), get(&defaults), get(&requests), get(&ratios)));
        }
    }
    errs
}

/// A limit's type: a known one, or a qualified name with a domain.
fn limit_type(kind: &str, path: &FieldPath) -> Vec<FieldError> {
    let errs: Vec<FieldError> = qualified_name(kind).into_iter().map(|m| FieldError::invalid(path.as_str(), kind, m)).collect();
    if errs.is_empty() && !kind.contains('/') && !LIMIT_TYPES.contains(&kind) {
        return vec![FieldError::invalid(path.as_str(), kind, "must be a standard limit type or fully qualified")];
    }
    errs
}

/// The bounds of one resource against each other, in upstream's order and words.
fn ordered(
    name: &str,
    at: &FieldPath,
    min: Option<Quantity>,
    max: Option<Quantity>,
    default: Option<Quantity>,
    request: Option<Quantity>,
    ratio: Option<Quantity>,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let field = |f: &str| at.child(f).key(name);
    let c = |q: Quantity| q.canonical();
    let mut invalid = |f: &str, shown: Quantity, detail: String| errs.push(FieldError::invalid(field(f).as_str(), &c(shown), detail));
    if let (Some(min), Some(max)) = (min, max) {
        if min > max {
            invalid("min", min, format!("min value {} is greater than max value {}", c(min), c(max)));
        }
    }
    if let (Some(request), Some(min)) = (request, min) {
        if min > request {
            invalid("defaultRequest", request, format!("min value {} is greater than default request value {}", c(min), c(request)));
        }
    }
    if let (Some(request), Some(max)) = (request, max) {
        if request > max {
            invalid("defaultRequest", request, format!("default request value {} is greater than max value {}", c(request), c(max)));
        }
    }
    if let (Some(request), Some(default)) = (request, default) {
        if request > default {
            let detail = format!("default request value {} is greater than default limit value {}", c(request), c(default));
            invalid("defaultRequest", request, detail);
        }
    }
    // Upstream shows the min, and the max, as these two values.
    if let (Some(default), Some(min)) = (default, min) {
        if min > default {
            invalid("default", min, format!("min value {} is greater than default value {}", c(min), c(default)));
        }
    }
    if let (Some(default), Some(max)) = (default, max) {
        if default > max {
            invalid("default", max, format!("default value {} is greater than max value {}", c(default), c(max)));
        }
    }
    if let Some(ratio) = ratio {
        if ratio.milli() < 1000 {
            invalid("maxLimitRequestRatio", ratio, format!("ratio {} is less than 1", c(ratio)));
        }
        if let (Some(min), Some(max)) = (min, max) {
            let limit = max.milli() as f64 / min.milli() as f64;
            if ratio.milli() as f64 / 1000.0 > limit {
                invalid("maxLimitRequestRatio", ratio, format!("ratio {} is greater than max/min = {limit:.6}", c(ratio)));
            }
        }
    }
    if let (Some(default), Some(request)) = (default, request) {
        if !overcommit_allowed(name) && default != request {
            let detail = format!("default value {} must equal to defaultRequest value {} in {name}", c(default), c(request));
            invalid("defaultRequest", request, detail);
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errors(spec: Value) -> Vec<String> {
        let lr = json!({"spec": spec});
        validate(lr.as_object().unwrap()).iter().map(ToString::to_string).collect()
    }

    #[test]
    fn bounds_are_ordered() {
        let errs = errors(json!({"limits": [{"type": "Container", "max": {"memory": "1Gi"}, "min": {"memory": "128Mi"}, "maxLimitRequestRatio": {"memory": "10"}}]}));
        assert_eq!(errs, ["spec.limits[0].maxLimitRequestRatio[memory]: Invalid value: \"10\": ratio 10 is greater than max/min = 8.000000"]);
        let errs = errors(json!({"limits": [{"type": "PersistentVolumeClaim"}, {"type": "PersistentVolumeClaim", "max": {"storage": "1Gi"}}]}));
        assert_eq!(errs, [
            "spec.limits[0].limits: Required value: either minimum or maximum storage value is required, but neither was provided",
            "spec.limits[1].type: Duplicate value: \"PersistentVolumeClaim\"",
        ]);
    }
}
