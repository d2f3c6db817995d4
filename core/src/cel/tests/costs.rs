//! Static cost estimates against the figures upstream's tests expect (its
//! compilation tests' `TestCostEstimation` and the string library's cost tests), and
//! runtime costs of the same.

use crate::cel::compile::compile_expression;
use crate::cel::decl::{schema_decl_type, ROOT_TYPE_NAME};
use crate::cel::eval::Activation;
use crate::cel::value::Value;
use serde_json::{json, Value as Json};

/// The estimated worst-case cost of `rule` on a node of `schema`.
fn estimated(schema: &Json, rule: &str) -> u64 {
    let decl = schema_decl_type(schema, false, ROOT_TYPE_NAME).expect("typed");
    compile_expression(rule, &decl, false).unwrap_or_else(|e| panic!("{rule}: {e}")).max_cost
}

fn runtime(schema: &Json, object: &Json, rule: &str) -> u64 {
    let decl = schema_decl_type(schema, false, ROOT_TYPE_NAME).expect("typed");
    let compiled = compile_expression(rule, &decl, false).unwrap();
    let activation = Activation {
        self_value: Value::from_json(object, &decl),
        old_self: None,
        named: Vec::new(),
    };
    compiled.program.eval(&activation, u64::MAX).cost
}

fn array(items: Json, max_items: Option<i64>) -> Json {
    let mut s = json!({"type": "array", "items": items});
    if let Some(m) = max_items {
        s["maxItems"] = json!(m);
    }
    s
}

fn map(values: Json, max_properties: Option<i64>) -> Json {
    let mut s = json!({"type": "object", "additionalProperties": values});
    if let Some(m) = max_properties {
        s["maxProperties"] = json!(m);
    }
    s
}

fn string(max_length: Option<i64>) -> Json {
    let mut s = json!({"type": "string"});
    if let Some(m) = max_length {
        s["maxLength"] = json!(m);
    }
    s
}

/// (schema without limits, schema with limits, rule, cost without, cost with).
fn cases() -> Vec<(Json, Json, &'static str, u64, u64)> {
    let number = || json!({"type": "number"});
    let object_items = || {
        json!({"type": "object", "required": ["required"], "properties": {
            "required": {"type": "string"}, "optional": {"type": "string"}
        }})
    };
    vec![
        (array(number(), None), array(number(), Some(10)), "self.all(x, true)", 4718591, 32),
        (array(json!({"type": "string"}), None), array(json!({"type": "string"}), Some(20)), "self.all(x, true)", 3145727, 62),
        (array(json!({"type": "boolean"}), None), array(json!({"type": "boolean"}), Some(5)), "self.all(x, true)", 1887437, 17),
        (
            array(array(number(), None), None),
            array(array(number(), None), Some(100)),
            "self.all(x, true)",
            3145727,
            302,
        ),
        (array(object_items(), None), array(object_items(), Some(50)), "self.all(x, true)", 555128, 152),
        (map(number(), None), map(number(), Some(10)), "self.all(x, true)", 1348169, 32),
        (map(json!({"type": "string"}), None), map(json!({"type": "string"}), Some(3)), "self.all(x, true)", 1179647, 11),
        (map(json!({"type": "boolean"}), None), map(json!({"type": "boolean"}), Some(100)), "self.all(x, true)", 943718, 302),
        (string(None), string(Some(10)), "self.contains('test')", 314574, 5),
        (string(None), string(Some(15)), "self.startsWith('test')", 2, 2),
        (string(None), string(Some(4)), r#"size(self + "hello") > size("hello")"#, 314578, 7),
        (array(number(), None), array(number(), Some(5000)), "self[1] == 0.0", 2, 2),
        (array(json!({"type": "string"}), None), array(json!({"type": "string"}), Some(8)), "self[1] == self[1]", 314577, 314577),
        (array(number(), None), array(number(), Some(10)), "self.all(x, self.all(y, self.all(z, true)))", u64::MAX, 3552),
        (string(None), string(Some(50)), r#"self.matches("x")"#, 314574, 22),
        (string(None), string(Some(10)), r#""".matches("(((((((((())))))))))[0-9]")"#, 7, 7),
        (string(None), string(Some(100)), r#"self.matches("")"#, 1, 1),
        (
            map(string(None), None),
            map(string(Some(10)), Some(10)),
            "self.all(x, x.contains(self[x]))",
            2752507,
            72,
        ),
        (string(None), string(Some(0)), r#"self == "x""#, 2, 1),
        (
            array(json!({"x-kubernetes-int-or-string": true}), None),
            array(json!({"x-kubernetes-int-or-string": true}), Some(10)),
            "self[0] == 5",
            3,
            3,
        ),
        (array(object_items(), None), array(object_items(), Some(422)), "self[0] == null", 2, 2),
    ]
}

#[test]
fn estimates_match_upstream() {
    let mut failures = Vec::new();
    for (unbounded, bounded, rule, want_unbounded, want_bounded) in cases() {
        let got = estimated(&unbounded, rule);
        // `u64::MAX` stands for "past any limit" (upstream checks only that).
        if (want_unbounded == u64::MAX && got < 100_000_000) || (want_unbounded != u64::MAX && got != want_unbounded) {
            failures.push(format!("{rule} without limits: want {want_unbounded}, got {got}"));
        }
        let got = estimated(&bounded, rule);
        if got != want_bounded {
            failures.push(format!("{rule} with limits: want {want_bounded}, got {got}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn string_library_costs_match_upstream() {
    let schema = json!({"type": "object"});
    for (rule, est, run) in [
        ("'ABCDEFGHIJ abcdefghij'.lowerAscii()", 3, 3),
        ("'ABCDEFGHIJ abcdefghij'.lowerAscii() == 'abcdefghij ABCDEFGHIJ'.lowerAscii()", 9, 9),
        ("'ABCDEFGHIJ abcdefghij'.upperAscii()", 3, 3),
        ("strings.quote('ABCDEFGHIJ abcdefghij')", 3, 3),
        ("strings.quote('ABCDEFGHIJ abcdefghij') == strings.quote('ABCDEFGHIJ abcdefghij')", 11, 9),
        ("'abc 123 def 123'.replace('123', '456')", 3, 3),
        ("'abc 123 def 123'.replace('', 'x')", 3, 3),
        ("'abc 123 def 123'.replace('123', '456', 1)", 3, 3),
        ("'abc 123 def 123'.split(' ')", 3, 3),
        ("'abc 123 def 123'.split(' ', 1)", 3, 3),
        ("'abc 123 def 123'.substring(5)", 2, 2),
        ("'abc 123 def 123'.substring(5, 8)", 2, 2),
        ("'  abc 123 def 123  '.trim()", 2, 2),
        ("'abc 123 def 123'.find('123')", 2, 2),
        ("'abc 123 def 123'.findAll('123')", 2, 2),
        ("'abc 123 def 123'.findAll('123', 1)", 2, 2),
    ] {
        assert_eq!(estimated(&schema, rule), est, "estimate of {rule}");
        assert_eq!(runtime(&schema, &json!({}), rule), run, "runtime cost of {rule}");
    }
}

#[test]
fn runtime_costs_follow_the_data() {
    let schema = array(json!({"type": "integer"}), None);
    let small = runtime(&schema, &json!([1, 2, 3]), "self.all(x, x > 0)");
    let large = runtime(&schema, &json!((0..300).map(|i| i + 1).collect::<Vec<_>>()), "self.all(x, x > 0)");
    assert!(large > small * 50, "{small} {large}");
}
