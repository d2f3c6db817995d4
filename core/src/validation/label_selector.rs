//! A metav1 `LabelSelector` in an object (`matchLabels`, `matchExpressions`), checked
//! as upstream's `ValidateLabelSelector` checks it.

use super::names::{label_key, label_value};
use super::{object_meta, FieldError};
use serde_json::Value;

/// The errors of the selector at `path`. Values that are not label values are allowed
/// where upstream allows them (`allow_invalid_values`).
pub fn validate(path: &str, selector: &Value, allow_invalid_values: bool) -> Vec<FieldError> {
    let mut errs = object_meta::labels(&format!("{path}.matchLabels"), selector.get("matchLabels"));
    let expressions = selector.get("matchExpressions").and_then(Value::as_array);
    for (i, expr) in expressions.into_iter().flatten().enumerate() {
        errs.extend(requirement(&format!("{path}.matchExpressions[{i}]"), expr, allow_invalid_values));
    }
    errs
}

/// [`validate`], and the one error upstream adds when the selector cannot be made
/// into a selector at all (`<path>: Invalid value: null: invalid label selector.`).
pub fn validate_convertible(path: &str, selector: &Value) -> Vec<FieldError> {
    let mut errs = validate(path, selector, false);
    if !errs.is_empty() {
        errs.push(FieldError::invalid_unquoted(path, "null", "invalid label selector."));
    }
    errs
}

fn requirement(path: &str, expr: &Value, allow_invalid_values: bool) -> Vec<FieldError> {
    let text = |f: &str| expr.get(f).and_then(Value::as_str).unwrap_or("");
    let values: Vec<&str> = expr.get("values").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    let mut errs = Vec::new();
    let at = |child: &str| format!("{path}.{child}");
    match text("operator") {
        "In" | "NotIn" if values.is_empty() => {
            errs.push(FieldError::required(&at("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
        }
        "Exists" | "DoesNotExist" if !values.is_empty() => errs.push(FieldError::forbidden(
            &at("values"),
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        )),
        "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
        other => errs.push(FieldError::invalid(&at("operator"), other, "not a valid selector operator")),
    }
    let key = text("key");
    errs.extend(label_key(key).into_iter().map(|msg| FieldError::invalid(&at("key"), key, msg)));
    if !allow_invalid_values {
        for (i, value) in values.iter().enumerate() {
            let field = format!("{path}.values[{i}]");
            errs.extend(label_value(value).into_iter().map(|msg| FieldError::invalid(&field, value, msg)));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn operators_and_values_read_like_upstream() {
        let s = json!({"matchExpressions": [{"key": "a", "operator": "Like"}, {"key": "b", "operator": "In"}]});
        let errs: Vec<String> = validate_convertible("sel", &s).iter().map(ToString::to_string).collect();
        assert_eq!(
            errs,
            [
                "sel.matchExpressions[0].operator: Invalid value: \"Like\": not a valid selector operator",
                "sel.matchExpressions[1].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
                "sel: Invalid value: null: invalid label selector.",
            ]
        );
        assert!(validate("sel", &json!({"matchLabels": {"a": "b"}}), false).is_empty());
    }
}
