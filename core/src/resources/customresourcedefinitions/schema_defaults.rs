//! The `default`s of a CRD's structural schema checked as upstream checks them
//! (`apiserver/schema/defaulting.ValidateDefaults`): a default holds no field its
//! schema would prune, keeps the type and object meta of the resources in it valid, and
//! is a valid value of its schema. A default inside `apiVersion`, `kind` or `metadata`
//! is checked in the resource it would land in.

use crate::schema::go_quote;
use crate::schema::structural::{meta, prune, Structural};
use crate::validation::{ErrorKind, FieldError, FieldPath};
use serde_json::{json, Map, Value};

const META_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];

/// One step from a resource down to a default: into a field, or into an item.
#[derive(Clone, Debug)]
enum Step {
    Field(String),
    Item,
}

/// Every default in `s` (the root of a version's schema, at `path`).
pub(super) fn validate(path: &FieldPath, s: &Structural, require_pruned: bool) -> Vec<FieldError> {
    // The root is a resource, whether or not the schema says so.
    let mut root = s.clone();
    root.extensions.embedded_resource = true;
    let mut errors = Vec::new();
    walk(path, &root, &root, &[], false, require_pruned, &mut errors);
    errors
}

/// `resource`: the schema of the (embedded) resource `s` is in; `steps`: the way from
/// it to `s`.
fn walk(path: &FieldPath, s: &Structural, resource: &Structural, steps: &[Step], inside_meta: bool, require_pruned: bool, errors: &mut Vec<FieldError>) {
    let (resource, steps, inside_meta) = if s.extensions.embedded_resource { (s, &[][..], false) } else { (resource, steps, inside_meta) };
    if let Some(default) = &s.generic.default {
        let at = path.child("default");
        if inside_meta {
            errors.extend(default_in_meta(&at, default, s, resource, steps));
        } else {
            errors.extend(default_value(&at, default, s, require_pruned));
        }
    }
    // Defaults under additionalProperties are refused elsewhere.
    if let Some(items) = &s.items {
        let steps = [steps, &[Step::Item]].concat();
        walk(&path.child("items"), items, resource, &steps, inside_meta, require_pruned, errors);
    }
    for (name, field) in &s.properties {
        let steps = [steps, &[Step::Field(name.clone())]].concat();
        let inside = inside_meta || (s.extensions.embedded_resource && META_FIELDS.contains(&name.as_str()));
        walk(&path.child("properties").key(name), field, resource, &steps, inside, require_pruned, errors);
    }
}

/// A default outside type and object meta.
fn default_value(at: &FieldPath, default: &Value, s: &Structural, require_pruned: bool) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if require_pruned {
        let mut pruned = default.clone();
        prune::prune(&mut pruned, s, s.extensions.embedded_resource);
        if &pruned != default {
            errors.push(FieldError::invalid_json(at.as_str(), default, "must not have unknown fields"));
        }
    }
    if let Some(e) = meta::coerce(at, default, s, s.extensions.embedded_resource) {
        errors.push(e);
        return errors;
    }
    let meta_errors = meta::validate(at, default, s, s.extensions.embedded_resource);
    if !meta_errors.is_empty() {
        errors.extend(meta_errors);
        return errors;
    }
    errors.extend(value_errors(at, default, s));
    errors
}

/// A default inside a resource's `apiVersion`, `kind` or `metadata`: the resource with
/// only that default set must have valid meta.
fn default_in_meta(at: &FieldPath, default: &Value, s: &Structural, resource: &Structural, steps: &[Step]) -> Vec<FieldError> {
    let object = surrounding_object(default, steps);
    let invalid = |detail: String| vec![FieldError::invalid_json(at.as_str(), default, format!("must result in valid metadata: {detail}"))];
    if let Some(e) = meta::coerce(&FieldPath::default(), &object, resource, true) {
        return invalid(e.to_string());
    }
    let meta_errors = meta::validate(&FieldPath::default(), &object, resource, true);
    if !meta_errors.is_empty() {
        return invalid(aggregate(&meta_errors));
    }
    value_errors(at, default, s)
}

/// `x` placed at the end of `steps` in an object of kind `Validation`.
fn surrounding_object(x: &Value, steps: &[Step]) -> Value {
    let mut value = x.clone();
    for step in steps.iter().rev() {
        value = match step {
            Step::Field(name) => {
                let mut map = Map::new();
                map.insert(name.clone(), value);
                Value::Object(map)
            }
            Step::Item => Value::Array(vec![value]),
        };
    }
    if let Value::Object(map) = &mut value {
        map.entry("kind").or_insert_with(|| json!("Validation"));
        map.entry("apiVersion").or_insert_with(|| json!("validation/v1"));
    }
    value
}

/// Go's aggregate of errors: one as it is, more in brackets.
fn aggregate(errors: &[FieldError]) -> String {
    let mut texts: Vec<String> = Vec::new();
    for e in errors {
        let text = e.to_string();
        if !texts.contains(&text) {
            texts.push(text);
        }
    }
    match texts.as_slice() {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    }
}

/// HOOK (schema validation of values): the errors of `value` against `s`, as the
/// validator of custom resources reports them (kube-openapi's words). Until that
/// validator is connected here, the types of the value and of what is in it are
/// checked (the common mistake: `default: 5` on a string).
pub(crate) fn value_errors(at: &FieldPath, value: &Value, s: &Structural) -> Vec<FieldError> {
    let mut errors = Vec::new();
    type_errors(at, "", value, s, &mut errors);
    errors
}

/// kube-openapi's type check of `value` (named `name` from the root) and of its
/// fields and items.
fn type_errors(at: &FieldPath, name: &str, value: &Value, s: &Structural, errors: &mut Vec<FieldError>) {
    let types: Vec<&str> = if s.extensions.int_or_string {
        vec!["integer", "string"]
    } else if s.generic.ty.is_empty() {
        Vec::new()
    } else {
        vec![s.generic.ty.as_str()]
    };
    if !types.is_empty() {
        let actual = match value {
            Value::Null if s.generic.nullable => return,
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(n) if n.is_f64() && n.as_f64().is_some_and(|f| f.fract() != 0.0) => "number",
            Value::Number(_) => "integer",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        };
        let fits = types.contains(&actual) || (actual == "integer" && types.contains(&"number"));
        if !fits {
            let field = if name.is_empty() { at.clone() } else { at.child(name) };
            errors.push(FieldError {
                field: field.to_string(),
                kind: ErrorKind::TypeInvalid,
                value: Some(actual.to_owned()),
                detail: format!("{name} in body must be of type {}: {}", types.join(","), go_quote(actual)),
            });
            return;
        }
    }
    let join = |part: &str| if name.is_empty() { part.to_owned() } else { format!("{name}.{part}") };
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            for k in keys {
                if let Some(field) = s.field(k) {
                    type_errors(at, &join(k), &map[k], field, errors);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = &s.items {
                for (i, v) in items.iter().enumerate() {
                    type_errors(at, &format!("{name}[{i}]"), v, item, errors);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(schema: Value) -> Vec<String> {
        let s = Structural::from_json(&schema).unwrap();
        validate(&FieldPath::new("schema"), &s, true).iter().map(|e| e.to_string()).collect()
    }

    #[test]
    fn defaults_must_fit_their_schema_and_be_pruned() {
        assert_eq!(
            errors(json!({"type": "object", "properties": {"a": {"type": "string", "default": 5}}})),
            [r#"schema.properties[a].default: Invalid value: "integer":  in body must be of type string: "integer""#]
        );
        assert_eq!(
            errors(json!({"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}},
                                                            "default": {"b": "x", "c": 1}}}})),
            [r#"schema.properties[a].default: Invalid value: {"b":"x","c":1}: must not have unknown fields"#]
        );
        assert!(errors(json!({"type": "object", "properties": {"a": {"type": "integer", "default": 1}}})).is_empty());
    }

    #[test]
    fn metadata_defaults_must_make_valid_metadata() {
        let schema = json!({"type": "object", "properties": {"embedded": {"type": "object",
            "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true,
            "properties": {"metadata": {"type": "object", "properties": {"name": {"type": "string", "default": "Bad/Name"}}}}}}});
        let found = errors(schema);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with(r#"schema.properties[embedded].properties[metadata].properties[name].default: Invalid value: "Bad/Name": must result in valid metadata: metadata.name: Invalid value: "Bad/Name": may not contain '/'"#), "{}", found[0]);
    }
}
