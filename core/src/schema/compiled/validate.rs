//! Validation of a value against a compiled schema, as kube-openapi's `SchemaValidator`
//! does it for kube-apiserver, with v1.33's validation ratcheting.
//!
//! Per node the checks run in kube-openapi's order: type, `allOf`/`anyOf`/`oneOf`/`not`,
//! string (`maxLength`, `minLength`, `pattern`: the first that fails), format, number
//! (`multipleOf`, `minimum`, `maximum`), array (items, then `minItems`, `maxItems`,
//! `uniqueItems`), `enum`, object (`minProperties`, `maxProperties`, properties matched
//! by `additionalProperties`, declared properties in name order, then `required`). Each
//! message is kept once. Upstream's conversion to field errors follows: a type error is
//! `FieldValueTypeInvalid`, `required` `FieldValueRequired`, `enum` `NotSupported`,
//! `maxLength` `TooLong`, `maxItems` and `maxProperties` `TooMany`, every other check
//! `FieldValueInvalid` with kube-openapi's message; the junctors' failures are
//! path-less (`<nil>`), as upstream reports them.
//!
//! Which failing branch of an `anyOf` or `oneOf` is reported is kube-openapi's choice:
//! the one that got furthest, by its count of checks that applied (its `MatchCount`),
//! which every function here returns.
//!
//! Ratcheting: on an update, each node of the structural tree that has a correlated old
//! value (same property name; for `map` lists, the item with the same keys) drops the
//! errors found at or under it when its value is unchanged, as upstream's
//! `ratchetingValueValidator` does. The junctors' branches and nodes without an old
//! value are validated as on a create.

use super::formats::Format;
use super::node::{Additional, Checks, Node, Types};
use super::path::Path;
use super::ratchet;
use crate::gofmt::{self, GoType};
use crate::schema::go_quote;
use crate::validation::{ErrorKind, FieldError};
use serde_json::{Map, Number, Value};
use std::collections::HashSet;

/// Deepest value validated (and pruned, and defaulted): deeper values are left alone.
/// Bodies parse to 128 levels at most; this keeps every walk within its stack.
pub(crate) const MAX_VALUE_DEPTH: usize = 512;

/// The errors of one validation, each kube-openapi message once, in order.
#[derive(Debug, Default)]
pub(crate) struct Report {
    issues: Vec<Issue>,
    /// The messages kept, made with the first error (valid objects need none).
    seen: Option<HashSet<String>>,
}

#[derive(Debug)]
struct Issue {
    /// kube-openapi's message: what makes two errors the same.
    message: String,
    error: FieldError,
}

impl Report {
    fn push(&mut self, issue: Issue) {
        if self.seen.get_or_insert_with(HashSet::new).insert(issue.message.clone()) {
            self.issues.push(issue);
        }
    }

    fn merge(&mut self, other: Report) {
        for issue in other.issues {
            self.push(issue);
        }
    }

    fn len(&self) -> usize {
        self.issues.len()
    }

    fn truncate(&mut self, len: usize) {
        let seen = self.seen.get_or_insert_with(HashSet::new);
        for issue in self.issues.drain(len..) {
            seen.remove(&issue.message);
        }
    }

    pub fn into_errors(self) -> Vec<FieldError> {
        self.issues.into_iter().map(|i| i.error).collect()
    }
}

/// A value being validated: a JSON value, or an object's map (a resource's root, which
/// the caller holds as a map, not as a value).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Data<'a> {
    Value(&'a Value),
    Object(&'a Map<String, Value>),
}

impl<'a> Data<'a> {
    pub fn object(self) -> Option<&'a Map<String, Value>> {
        match self {
            Data::Object(map) | Data::Value(Value::Object(map)) => Some(map),
            Data::Value(_) => None,
        }
    }

    fn value(self) -> Option<&'a Value> {
        match self {
            Data::Value(v) => Some(v),
            Data::Object(_) => None,
        }
    }

    fn is_null(self) -> bool {
        matches!(self, Data::Value(Value::Null))
    }

    /// As a value, copied for an object's map (only to print it in an error).
    fn to_value(self) -> std::borrow::Cow<'a, Value> {
        match self {
            Data::Value(v) => std::borrow::Cow::Borrowed(v),
            Data::Object(map) => std::borrow::Cow::Owned(Value::Object(map.clone())),
        }
    }
}

/// Validate `data` against `root`; `old` (an update's stored value) ratchets.
/// `prefix` is where the value sits in its object (`status` for the status subresource,
/// whose schema validates `status` alone); errors are named under it.
pub(crate) fn validate(root: &Node, data: Data<'_>, old: Option<Data<'_>>, prefix: Option<&str>) -> Vec<FieldError> {
    let mut report = Report::default();
    Validator { prefix }.value(root, data, &Path::Root, old, true, &mut report, 0);
    report.into_errors()
}

struct Validator<'p> {
    prefix: Option<&'p str>,
}

impl Validator<'_> {
    /// kube-openapi's `SchemaValidator.Validate` (a ratcheting one when `old` is given;
    /// `top`: the validator's root, whose `kind` and `apiVersion` never ratchet). Returns
    /// the match count.
    #[allow(clippy::too_many_arguments)]
    fn value(&self, node: &Node, data: Data<'_>, path: &Path, old: Option<Data<'_>>, top: bool, report: &mut Report, depth: usize) -> usize {
        let mark = report.len();
        let count = self.checks(node, data, path, old, top, report, depth);
        if let Some(old) = old {
            if report.len() > mark && ratchet::unchanged_data(node, old, data) {
                report.truncate(mark);
            }
        }
        count
    }

    #[allow(clippy::too_many_arguments)]
    fn checks(&self, node: &Node, data: Data<'_>, path: &Path, old: Option<Data<'_>>, top: bool, report: &mut Report, depth: usize) -> usize {
        let checks = node.checks.as_deref();
        let enumeration = checks.map(|c| c.enumeration.as_slice()).unwrap_or_default();
        if data.is_null() {
            // Only the type and the enum look at a null.
            let mut count = 0;
            let nullable = node.nullable || node.types.contains(Types::NULL);
            if node.types.is_empty() || nullable {
                count += 1;
            } else {
                report.push(self.type_error(path, node.type_name.as_deref().unwrap_or(""), "null"));
            }
            if !enumeration.is_empty() {
                // A null never equals an enum value in kube-openapi's comparison.
                report.push(self.not_supported(path, data, enumeration));
            }
            return count;
        }
        if depth > MAX_VALUE_DEPTH {
            return 1;
        }
        let format = checks.and_then(|c| c.format.as_ref());
        let mut count = 0;
        if !node.types.is_empty() || format.is_some() {
            match self.type_check(node, format, data, path) {
                Some(issue) => report.push(issue),
                None => count += 1,
            }
            count += 1;
        }
        count += self.junctors(checks, data, path, report, depth) + 1;
        let value = data.value();
        if let Some(Value::String(s)) = value {
            if let Some(c) = checks {
                if let Some(issue) = self.string_checks(c, s, path) {
                    report.push(issue);
                }
            }
            count += 1;
            if let Some((format, name)) = format {
                if !format.accepts(s) {
                    report.push(self.type_error(path, name, s));
                }
                count += 1;
            }
        }
        if let Some(Value::Number(n)) = value {
            if let Some(c) = checks {
                self.number_checks(c, n, path, report);
            }
            count += 2;
        }
        if let Some(Value::Array(items)) = value {
            count += self.array(node, checks, items, path, old.and_then(Data::value), report, depth) + 2;
        }
        if !enumeration.is_empty() && !enumeration.iter().any(|e| enum_equal(data, e)) {
            report.push(self.not_supported(path, data, enumeration));
        }
        count += 1;
        if let Some(map) = data.object() {
            count += self.object(node, checks, map, path, old, top, report, depth) + 1;
        }
        count + 1
    }

    /// kube-openapi's type validator for a value that is not null.
    fn type_check(&self, node: &Node, format: Option<&(Format, Box<str>)>, data: Data<'_>, path: &Path) -> Option<Issue> {
        let (ty, name, format_of_data) = match data {
            Data::Value(Value::String(_)) => (Types::STRING, "string", ""),
            Data::Value(Value::Bool(_)) => (Types::BOOLEAN, "boolean", ""),
            Data::Value(Value::Array(_)) => (Types::ARRAY, "array", ""),
            Data::Value(Value::Object(_)) | Data::Object(_) => (Types::OBJECT, "object", ""),
            Data::Value(Value::Number(n)) if n.as_i64().is_some() => (Types::INTEGER, "integer", "int64"),
            Data::Value(_) => (Types::NUMBER, "number", "float64"),
        };
        let types = node.types;
        let float_int = ty == Types::NUMBER
            && types.contains(Types::INTEGER)
            && data.value().and_then(Value::as_f64).is_some_and(is_json_integer);
        let int_float = ty == Types::INTEGER && types.contains(Types::NUMBER);
        let fits = types.contains(ty) || float_int || int_float;
        let textual = matches!(data, Data::Value(Value::String(_) | Value::Array(_)));
        if let Some((_, format_name)) = format {
            if !textual && !fits {
                return Some(self.type_error(path, format_name, format_of_data));
            }
            if textual && !(types.contains(Types::NUMBER) || types.contains(Types::INTEGER)) {
                return None;
            }
        }
        (!fits).then(|| self.type_error(path, node.type_name.as_deref().unwrap_or(""), name))
    }

    /// `allOf`, `anyOf`, `oneOf` and `not`: kube-openapi's schema props validator.
    fn junctors(&self, checks: Option<&Checks>, data: Data<'_>, path: &Path, report: &mut Report, depth: usize) -> usize {
        let mut count = 1;
        let Some(c) = checks else {
            return count;
        };
        let quoted = || go_quote(&path.openapi());
        if !c.any_of.is_empty() {
            let mut best: Option<(Report, usize)> = None;
            let mut first_success = None;
            for branch in &c.any_of {
                let (r, n) = self.branch(branch, data, path, depth);
                if r.len() == 0 {
                    best = None;
                    first_success = Some((r, n));
                    break;
                }
                if best.as_ref().is_none_or(|(_, b)| n > *b) {
                    best = Some((r, n));
                }
            }
            if first_success.is_none() {
                report.push(self.composite(format!("{} must validate at least one schema (anyOf)", quoted())));
            }
            if let Some((r, n)) = best.or(first_success) {
                report.merge(r);
                count += n;
            }
        }
        if !c.one_of.is_empty() {
            let mut best: Option<(Report, usize)> = None;
            let mut first_success = None;
            let mut valid = 0;
            for branch in &c.one_of {
                let (r, n) = self.branch(branch, data, path, depth);
                if r.len() == 0 {
                    valid += 1;
                    best = None;
                    first_success.get_or_insert((r, n));
                    continue;
                }
                if valid == 0 && best.as_ref().is_none_or(|(_, b)| n > *b) {
                    best = Some((r, n));
                }
            }
            if valid != 1 {
                let found = if valid == 0 { "Found none valid".to_owned() } else { format!("Found {valid} valid alternatives") };
                report.push(self.composite(format!("{} must validate one and only one schema (oneOf). {found}", quoted())));
                if let Some((r, n)) = best {
                    report.merge(r);
                    count += n;
                }
            } else if let Some((r, n)) = first_success {
                report.merge(r);
                count += n;
            }
        }
        if !c.all_of.is_empty() {
            let mut valid = 0;
            for branch in &c.all_of {
                let (r, n) = self.branch(branch, data, path, depth);
                if r.len() == 0 {
                    valid += 1;
                }
                report.merge(r);
                count += n;
            }
            if valid != c.all_of.len() {
                let none = if valid == 0 { ". None validated" } else { "" };
                report.push(self.composite(format!("{} must validate all the schemas (allOf){none}", quoted())));
            }
        }
        if let Some(not) = &c.not {
            if self.branch(not, data, path, depth).0.len() == 0 {
                report.push(self.composite(format!("{} must not validate the schema (not)", quoted())));
            }
        }
        count
    }

    /// One junctor branch, validated on its own, as on a create.
    fn branch(&self, node: &Node, data: Data<'_>, path: &Path, depth: usize) -> (Report, usize) {
        let mut report = Report::default();
        let count = self.value(node, data, path, None, false, &mut report, depth + 1);
        (report, count)
    }

    /// `maxLength`, `minLength`, `pattern`: the first that fails.
    fn string_checks(&self, c: &Checks, s: &str, path: &Path) -> Option<Issue> {
        let lazy_len = std::cell::OnceCell::new();
        let runes = || *lazy_len.get_or_init(|| s.chars().count() as i64);
        let name = || path.openapi();
        if let Some(max) = c.max_length {
            if runes() > max {
                let name = name();
                let detail = if max >= 0 { format!("may not be more than {max} bytes") } else { "value is too long".to_owned() };
                let message = format!("{name} in body should be at most {max} chars long");
                return Some(Issue { message, error: FieldError::shown(&self.field(&name), ErrorKind::TooLong, None, &detail) });
            }
        }
        if let Some(min) = c.min_length {
            if runes() < min {
                let name = name();
                return Some(self.invalid(&name, go_quote(s), format!("{name} in body should be at least {min} chars long")));
            }
        }
        if let Some(pattern) = &c.pattern {
            let shown = match pattern.is_match(s) {
                Ok(true) => return None,
                Ok(false) => pattern.source.to_string(),
                Err(e) => format!("{}, but pattern is invalid: {e}", pattern.source),
            };
            let name = name();
            return Some(self.invalid(&name, go_quote(s), format!("{name} in body should match '{shown}'")));
        }
        None
    }

    /// `multipleOf`, `minimum`, `maximum`, on the value's own Go type: an integer is
    /// compared with the bounds cut to integers, as kube-openapi does.
    fn number_checks(&self, c: &Checks, n: &Number, path: &Path, report: &mut Report) {
        let int = n.as_i64();
        let float = n.as_f64().unwrap_or(0.0);
        let shown = || match int {
            Some(i) => i.to_string(),
            None => gofmt::float(float),
        };
        if let Some(factor) = c.multiple_of {
            let name = path.openapi();
            let (positive, multiple, factor_shown) = match int {
                Some(i) => {
                    let f = factor as i64;
                    (f > 0, f > 0 && i.wrapping_rem(f) == 0, f.to_string())
                }
                None => {
                    let mult = if factor < 1.0 { 1.0 / factor * float } else { float / factor };
                    (factor > 0.0, factor > 0.0 && is_json_integer(mult), gofmt::float(factor))
                }
            };
            if !positive {
                let message = format!("factor MultipleOf declared for {name} must be positive: {factor_shown}");
                report.push(self.invalid(&name, factor_shown, message));
            } else if !multiple {
                report.push(self.invalid(&name, shown(), format!("{name} in body should be a multiple of {factor_shown}")));
            }
        }
        if let Some(min) = c.minimum {
            let (below, bound) = match int {
                Some(i) => {
                    let m = min as i64;
                    (i < m || (c.exclusive_minimum && i == m), m.to_string())
                }
                None => (float < min || (c.exclusive_minimum && float == min), gofmt::float(min)),
            };
            if below {
                let name = path.openapi();
                let relation = if c.exclusive_minimum { "greater than" } else { "greater than or equal to" };
                report.push(self.invalid(&name, shown(), format!("{name} in body should be {relation} {bound}")));
            }
        }
        if let Some(max) = c.maximum {
            let (above, bound) = match int {
                Some(i) => {
                    let m = max as i64;
                    (i > m || (c.exclusive_maximum && i == m), m.to_string())
                }
                None => (float > max || (c.exclusive_maximum && float == max), gofmt::float(max)),
            };
            if above {
                let name = path.openapi();
                let relation = if c.exclusive_maximum { "less than" } else { "less than or equal to" };
                report.push(self.invalid(&name, shown(), format!("{name} in body should be {relation} {bound}")));
            }
        }
    }

    /// Items, then `minItems`, `maxItems`, `uniqueItems`.
    #[allow(clippy::too_many_arguments)]
    fn array(&self, node: &Node, checks: Option<&Checks>, items: &[Value], path: &Path, old: Option<&Value>, report: &mut Report, depth: usize) -> usize {
        let mut count = 0;
        if let Some(item_node) = node.items.as_deref() {
            for (i, item) in items.iter().enumerate() {
                let item_path = path.index(i);
                let old_item = old.and_then(|old| ratchet::correlated_item(node, old, item));
                count += self.value(item_node, Data::Value(item), &item_path, old_item.map(Data::Value), false, report, depth + 1);
            }
        }
        let Some(c) = checks else {
            return count;
        };
        self.size_checks(path, items.len(), (c.min_items, c.max_items), "items", report);
        if c.unique_items && items.iter().enumerate().any(|(i, a)| items[..i].contains(a)) {
            let name = path.openapi();
            report.push(self.invalid(&name, "\"\"".into(), format!("{name} in body shouldn't contain duplicates")));
        }
        count
    }

    /// `minItems` and `maxItems`, or `minProperties` and `maxProperties` (`what`: items
    /// or properties): too few is an invalid value, too many a `TooMany`.
    fn size_checks(&self, path: &Path, size: usize, (min, max): (Option<i64>, Option<i64>), what: &str, report: &mut Report) {
        let size = size as i64;
        if let Some(min) = min.filter(|min| size < *min) {
            let name = path.openapi();
            report.push(self.invalid(&name, size.to_string(), format!("{name} in body should have at least {min} {what}")));
        }
        if let Some(max) = max.filter(|max| size > *max) {
            let name = path.openapi();
            report.push(self.too_many(&name, size, max, format!("{name} in body should have at most {max} {what}")));
        }
    }

    /// `minProperties`, `maxProperties`, `additionalProperties`, properties, `required`.
    #[allow(clippy::too_many_arguments)]
    fn object(&self, node: &Node, checks: Option<&Checks>, map: &Map<String, Value>, path: &Path, old: Option<Data<'_>>, top: bool, report: &mut Report, depth: usize) -> usize {
        let mut count = 0;
        if let Some(c) = checks {
            self.size_checks(path, map.len(), (c.min_properties, c.max_properties), "properties", report);
        }
        let old_member = |key: &str| {
            let type_meta = top && (key == "kind" || key == "apiVersion");
            old.filter(|_| !type_meta).and_then(Data::object).and_then(|o| o.get(key)).map(Data::Value)
        };
        match &node.additional {
            Additional::Allows(false) => {
                for key in map.keys().filter(|k| node.property(k).is_none()) {
                    let name = path.openapi();
                    report.push(self.invalid(&name, go_quote(key), format!("{name}.{key} in body is a forbidden property")));
                }
            }
            Additional::Schema(extra) => {
                for (key, value) in map.iter().filter(|(k, _)| node.property(k).is_none()) {
                    let member = path.key(key);
                    count += self.value(extra, Data::Value(value), &member, old_member(key), false, report, depth + 1);
                }
            }
            Additional::Allows(true) | Additional::Absent => {}
        }
        for (name, property) in &node.properties {
            if let Some(value) = map.get(&**name) {
                let member = path.field(name);
                count += self.value(property, Data::Value(value), &member, old_member(name), false, report, depth + 1);
            }
        }
        if let Some(c) = checks {
            for required in c.required.iter().filter(|r| !map.contains_key(&***r)) {
                let name = format!("{}.{required}", path.openapi());
                let message = format!("{name} in body is required");
                report.push(Issue { message, error: FieldError::shown(&self.field(&name), ErrorKind::Required, None, "") });
            }
        }
        count
    }

    /// Where an error named `name` by kube-openapi is, as upstream's conversion puts it.
    fn field(&self, name: &str) -> String {
        if name.is_empty() || name == "." {
            return self.prefix.unwrap_or("<nil>").to_owned();
        }
        let name = name.strip_prefix('.').unwrap_or(name);
        match self.prefix {
            Some(prefix) => format!("{prefix}.{name}"),
            None => name.to_owned(),
        }
    }

    fn type_error(&self, path: &Path, type_name: &str, value: &str) -> Issue {
        let name = path.openapi();
        let message = format!("{name} in body must be of type {type_name}: {}", go_quote(value));
        let error = FieldError::shown(&self.field(&name), ErrorKind::TypeInvalid, Some(&go_quote(value)), &message);
        Issue { message, error }
    }

    fn not_supported(&self, path: &Path, data: Data<'_>, values: &[Value]) -> Issue {
        let name = path.openapi();
        let message = format!("{name} in body should be one of {}", gofmt::v(&Value::Array(values.to_vec())));
        let supported: Vec<String> = values
            .iter()
            .map(|v| match v {
                Value::String(s) => go_quote(s),
                other => go_quote(&gofmt::json(other)),
            })
            .collect();
        let detail = format!("supported values: {}", supported.join(", "));
        let error = FieldError::shown(&self.field(&name), ErrorKind::NotSupported, Some(&shown(&data.to_value())), &detail);
        Issue { message, error }
    }

    fn too_many(&self, name: &str, actual: i64, max: i64, message: String) -> Issue {
        let detail = if max >= 0 { format!("must have at most {max} items") } else { "has too many items".to_owned() };
        let actual = (actual >= 0).then(|| actual.to_string());
        let error = FieldError::shown(&self.field(name), ErrorKind::TooMany, actual.as_deref(), &detail);
        Issue { message, error }
    }

    fn invalid(&self, name: &str, shown: String, message: String) -> Issue {
        let error = FieldError::shown(&self.field(name), ErrorKind::Invalid, Some(&shown), &message);
        Issue { message, error }
    }

    /// A junctor's failure: kube-openapi reports it without a field.
    fn composite(&self, message: String) -> Issue {
        let field = self.prefix.unwrap_or("<nil>");
        let error = FieldError::shown(field, ErrorKind::Invalid, Some("\"\""), &message);
        Issue { message, error }
    }
}

/// A decoded JSON value as apimachinery's field errors print a bad value: strings
/// quoted, numbers and booleans as Go's `%v`, null as `"null"`, maps and slices as
/// `%#v`.
pub(crate) fn shown(value: &Value) -> String {
    match value {
        Value::String(s) => go_quote(s),
        Value::Null => go_quote("null"),
        Value::Object(_) | Value::Array(_) => gofmt::sharp_v(value),
        scalar => gofmt::v(scalar),
    }
}

/// kube-openapi's enum comparison: the value converted to the enum value's Go type,
/// then compared (so `1.5` matches `1`, and the integer 97 matches `"a"`, as Go's
/// conversions make them).
fn enum_equal(data: Data<'_>, allowed: &Value) -> bool {
    let data = match data {
        Data::Value(v) => v,
        Data::Object(map) => return allowed.as_object() == Some(map),
    };
    match (GoType::of(allowed), data) {
        (GoType::String, Value::String(s)) => allowed.as_str() == Some(s),
        (GoType::String, Value::Number(n)) => n.as_i64().is_some_and(|i| {
            let rune = u32::try_from(i).ok().and_then(char::from_u32).unwrap_or('\u{fffd}');
            allowed.as_str() == Some(rune.encode_utf8(&mut [0; 4]))
        }),
        (GoType::Int, Value::Number(n)) => {
            let converted = n.as_i64().unwrap_or_else(|| n.as_f64().unwrap_or(0.0) as i64);
            allowed.as_i64() == Some(converted)
        }
        (GoType::Float, Value::Number(n)) => n.as_f64() == allowed.as_f64(),
        (GoType::Bool, Value::Bool(b)) => allowed.as_bool() == Some(*b),
        (GoType::Map, Value::Object(_)) | (GoType::Slice, Value::Array(_)) => data == allowed,
        _ => false,
    }
}

/// go-openapi's `IsFloat64AJSONInteger`: an integer within ±(2^53-1), or a positive
/// value within a relative 1e-9 of one.
pub(crate) fn is_json_integer(f: f64) -> bool {
    const MAX: f64 = 9_007_199_254_740_991.0;
    if !f.is_finite() || !(-MAX..=MAX).contains(&f) {
        return false;
    }
    if f.fract() == 0.0 {
        return true;
    }
    // Go's uint64 of a negative float is far from it: never close.
    if f < 0.0 {
        return false;
    }
    let whole = f.trunc();
    if whole == 0.0 {
        return false;
    }
    (f - whole) / (f + whole) < 1e-9
}
