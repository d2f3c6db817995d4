//! Upstream's internal CRD types as Go's `json.Marshal` writes them: Go field names,
//! every field, in struct order. Field errors whose value is a struct or a list of
//! structs print it so (`Invalid value: [{"Name":"v1","Served":true,…}]`).
//!
//! The same rendering, with empty lists taken as absent ones, compares versions' fields
//! as upstream's semantic equality does when it decides what they share.

use super::internal::{present, text, Version};
use crate::schema::structural::props::{Props, Shape, FIELDS};
use crate::validation::{go_json, go_json_string};
use serde_json::Value;

/// How to write: as Go prints (nil and empty lists differ), or for comparing
/// (apimachinery's semantic equality, where they do not).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Print,
    Compare,
}

/// `spec.versions` in internal form.
pub(crate) fn versions(versions: Option<&[Version<'_>]>) -> String {
    let Some(versions) = versions else {
        return "null".to_owned();
    };
    let items: Vec<String> = versions.iter().map(version).collect();
    format!("[{}]", items.join(","))
}

fn version(v: &Version<'_>) -> String {
    let m = Mode::Print;
    format!(
        "{{\"Name\":{},\"Served\":{},\"Storage\":{},\"Deprecated\":{},\"DeprecationWarning\":{},\"Schema\":{},\"Subresources\":{},\"AdditionalPrinterColumns\":{},\"SelectableFields\":{}}}",
        go_json_string(v.name),
        v.served,
        v.storage,
        v.deprecated,
        v.deprecation_warning.map(go_json_string).unwrap_or_else(|| "null".to_owned()),
        validation(v.schema, m),
        subresources(v.subresources, m),
        columns(v.columns, m),
        selectable_fields(v.selectable_fields, m),
    )
}

/// One schema node (`JSONSchemaProps`).
pub(crate) fn schema(v: &Value) -> String {
    props(v, Mode::Print)
}

/// Whether two values of the version field `key` (`schema`, `subresources`,
/// `additionalPrinterColumns`, `selectableFields`) are semantically equal.
pub(crate) fn semantically_equal(key: &str, a: Option<&Value>, b: Option<&Value>) -> bool {
    let render = |v: Option<&Value>| match key {
        "schema" => validation(v, Mode::Compare),
        "subresources" => subresources(v, Mode::Compare),
        "additionalPrinterColumns" => columns(v.and_then(Value::as_array).map(Vec::as_slice), Mode::Compare),
        _ => selectable_fields(v.and_then(Value::as_array).map(Vec::as_slice), Mode::Compare),
    };
    render(a) == render(b)
}

fn validation(v: Option<&Value>, m: Mode) -> String {
    match v {
        None => "null".to_owned(),
        Some(v) => format!("{{\"OpenAPIV3Schema\":{}}}", optional(present(Some(v), "openAPIV3Schema"), |s| props(s, m))),
    }
}

fn subresources(v: Option<&Value>, _: Mode) -> String {
    let Some(v) = v else {
        return "null".to_owned();
    };
    let status = present(Some(v), "status").map(|_| "{}".to_owned()).unwrap_or_else(|| "null".to_owned());
    let scale = optional(present(Some(v), "scale"), |s| {
        format!(
            "{{\"SpecReplicasPath\":{},\"StatusReplicasPath\":{},\"LabelSelectorPath\":{}}}",
            go_json_string(text(Some(s), "specReplicasPath")),
            go_json_string(text(Some(s), "statusReplicasPath")),
            optional(present(Some(s), "labelSelectorPath"), |p| go_json_string(p.as_str().unwrap_or(""))),
        )
    });
    format!("{{\"Status\":{status},\"Scale\":{scale}}}")
}

fn columns(v: Option<&[Value]>, m: Mode) -> String {
    slice(v, m, |c| {
        format!(
            "{{\"Name\":{},\"Type\":{},\"Format\":{},\"Description\":{},\"Priority\":{},\"JSONPath\":{}}}",
            go_json_string(text(Some(c), "name")),
            go_json_string(text(Some(c), "type")),
            go_json_string(text(Some(c), "format")),
            go_json_string(text(Some(c), "description")),
            present(Some(c), "priority").and_then(Value::as_i64).unwrap_or(0),
            go_json_string(text(Some(c), "jsonPath")),
        )
    })
}

fn selectable_fields(v: Option<&[Value]>, m: Mode) -> String {
    slice(v, m, |f| format!("{{\"JSONPath\":{}}}", go_json_string(text(Some(f), "jsonPath"))))
}

fn props(v: &Value, m: Mode) -> String {
    let p = Props(v);
    let mut out = String::from("{");
    for (i, field) in FIELDS.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&format!("\"{}\":", field.go));
        let value = p.get(field.json);
        let rendered = match field.shape {
            Shape::Str => go_json_string(p.str(field.json)),
            Shape::Bool => p.bool(field.json).to_string(),
            Shape::Float | Shape::Int | Shape::OptBool | Shape::Json => optional(value, go_json),
            Shape::OptStr => optional(value, |s| go_json_string(s.as_str().unwrap_or(""))),
            Shape::JsonList => slice(value.and_then(Value::as_array).map(Vec::as_slice), m, go_json),
            Shape::Strings => slice(value.and_then(Value::as_array).map(Vec::as_slice), m, go_json),
            Shape::Schema => optional(value, |s| props(s, m)),
            Shape::Schemas => slice(value.and_then(Value::as_array).map(Vec::as_slice), m, |s| props(s, m)),
            Shape::SchemaMap => map(value, m, |s| props(s, m)),
            Shape::OrArray => optional(value, |items| or_array(items, m)),
            Shape::OrBool => optional(value, |b| match b {
                Value::Object(_) => format!("{{\"Allows\":true,\"Schema\":{}}}", props(b, m)),
                other => format!("{{\"Allows\":{},\"Schema\":null}}", other.as_bool().unwrap_or(false)),
            }),
            Shape::Dependencies => map(value, m, |d| match d {
                Value::Array(names) => format!("{{\"Schema\":null,\"Property\":{}}}", slice(Some(names), m, go_json)),
                schema => format!("{{\"Schema\":{},\"Property\":null}}", props(schema, m)),
            }),
            Shape::Docs => optional(value, |d| {
                format!(
                    "{{\"Description\":{},\"URL\":{}}}",
                    go_json_string(text(Some(d), "description")),
                    go_json_string(text(Some(d), "url"))
                )
            }),
            Shape::Rules => slice(value.and_then(Value::as_array).map(Vec::as_slice), m, rule),
        };
        out.push_str(&rendered);
    }
    out.push('}');
    out
}

/// `items` (`JSONSchemaPropsOrArray`): one schema, or a list of them.
pub(crate) fn items(v: &Value) -> String {
    or_array(v, Mode::Print)
}

fn or_array(items: &Value, m: Mode) -> String {
    match items {
        Value::Array(list) => format!("{{\"Schema\":null,\"JSONSchemas\":{}}}", slice(Some(list), m, |s| props(s, m))),
        schema => format!("{{\"Schema\":{},\"JSONSchemas\":null}}", props(schema, m)),
    }
}

fn rule(r: &Value) -> String {
    let r = Some(r);
    format!(
        "{{\"Rule\":{},\"Message\":{},\"MessageExpression\":{},\"Reason\":{},\"FieldPath\":{},\"OptionalOldSelf\":{}}}",
        go_json_string(text(r, "rule")),
        go_json_string(text(r, "message")),
        go_json_string(text(r, "messageExpression")),
        optional(present(r, "reason"), go_json),
        go_json_string(text(r, "fieldPath")),
        optional(present(r, "optionalOldSelf"), go_json),
    )
}

fn optional(v: Option<&Value>, write: impl Fn(&Value) -> String) -> String {
    v.map(write).unwrap_or_else(|| "null".to_owned())
}

/// A Go slice: `null` when nil (and, when comparing, when empty).
fn slice(v: Option<&[Value]>, m: Mode, write: impl Fn(&Value) -> String) -> String {
    match v {
        None => "null".to_owned(),
        Some([]) if m == Mode::Compare => "null".to_owned(),
        Some(items) => format!("[{}]", items.iter().map(write).collect::<Vec<_>>().join(",")),
    }
}

/// A Go map: keys sorted.
fn map(v: Option<&Value>, m: Mode, write: impl Fn(&Value) -> String) -> String {
    let Some(entries) = v.and_then(Value::as_object) else {
        return "null".to_owned();
    };
    if entries.is_empty() && m == Mode::Compare {
        return "null".to_owned();
    }
    let mut keys: Vec<&String> = entries.keys().collect();
    keys.sort();
    let body: Vec<String> = keys.iter().map(|k| format!("{}:{}", go_json_string(k), write(&entries[*k]))).collect();
    format!("{{{}}}", body.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn versions_print_as_go_prints_the_internal_structs() {
        let crd = json!({"spec": {"versions": [{"name": "v1", "served": true, "storage": false}]}});
        let spec = super::super::internal::spec(&crd);
        assert_eq!(
            versions(spec.versions.as_deref()),
            r#"[{"Name":"v1","Served":true,"Storage":false,"Deprecated":false,"DeprecationWarning":null,"Schema":null,"Subresources":null,"AdditionalPrinterColumns":null,"SelectableFields":null}]"#
        );
    }

    #[test]
    fn empty_and_absent_lists_compare_equal() {
        let a = json!({"openAPIV3Schema": {"type": "object", "required": []}});
        let b = json!({"openAPIV3Schema": {"type": "object"}});
        assert!(semantically_equal("schema", Some(&a), Some(&b)));
        assert!(!semantically_equal("schema", Some(&a), None));
        assert!(schema(&b["openAPIV3Schema"]).starts_with(r#"{"ID":"","Schema":"","Ref":null,"Description":"","Type":"object","#));
    }
}
