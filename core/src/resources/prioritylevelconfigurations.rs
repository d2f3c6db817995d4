//! PriorityLevelConfigurations (flowcontrol.apiserver.k8s.io/v1): the priority levels
//! of API Priority and Fairness, with a status only `/status` writes. Defaults as
//! upstream's v1: a limited level's nominal concurrency shares 30 and lendable percent
//! 0, queuing of 64 queues, hand size 8 and queue length limit 50, an exempt level's
//! shares and lendable percent 0. Validation is upstream's
//! `ValidatePriorityLevelConfiguration` in its order and words; the mandatory levels
//! keep their fixed spec (`exempt` but for its `spec.exempt`). Spec changes count in
//! `metadata.generation`.

use super::columns::{at, Column};
use super::defaults::{object, object_at, or_insert, or_insert_int};
use super::flowschemas::{conditions, go_int, go_ptr, go_str, go_struct, invalid_int};
use super::{Columns, Strategy};
use crate::bootstrap::flowcontrol::{mandatory_spec, same_spec};
use crate::rest::object::{meta_str, Object};
use crate::validation::value::{int, present, text};
use crate::validation::{FieldError, FieldPath};
use serde_json::{json, Value};

pub struct PriorityLevelConfigurations;

/// A number in the limited configuration at `path`, or `<none>`.
fn limited_cell(o: &Object, path: &[&str]) -> Value {
    let mut full = vec!["spec", "limited"];
    full.extend_from_slice(path);
    match at(o, &["spec", "limited"]).filter(|l| l.is_object()) {
        Some(_) => at(o, &full).filter(|v| !v.is_null()).cloned().unwrap_or_else(|| json!("<none>")),
        None => json!("<none>"),
    }
}

/// A queuing number, or `<none>` for a level that does not queue.
fn queuing_cell(o: &Object, key: &str) -> Value {
    match at(o, &["spec", "limited", "limitResponse", "queuing"]).filter(|q| q.is_object()) {
        Some(q) => json!(int(q, key).unwrap_or(0)),
        None => json!("<none>"),
    }
}

static COLUMNS: &[Column] = &[
    Column {
        name: "Type",
        kind: "string",
        format: "",
        description: "`type` indicates whether this priority level is subject to limitation on request execution.  A value of `\"Exempt\"` means that requests of this priority level are not subject to a limit (and thus are never queued) and do not detract from the capacity made available to other priority levels.  A value of `\"Limited\"` means that (a) requests of this priority level _are_ subject to limits and (b) some of the server's limited capacity is made available exclusively to this priority level. Required.",
        priority: 0,
        cell: |o| json!(at(o, &["spec", "type"]).and_then(Value::as_str).unwrap_or("")),
    },
    Column {
        name: "NominalConcurrencyShares",
        kind: "string",
        format: "",
        description: "`nominalConcurrencyShares` (NCS) contributes to the computation of the NominalConcurrencyLimit (NominalCL) of this level. This is the number of execution seats available at this priority level. This is used both for requests dispatched from this priority level as well as requests dispatched from other priority levels borrowing seats from this level. The server's concurrency limit (ServerCL) is divided among the Limited priority levels in proportion to their NCS values:\n\nNominalCL(i)  = ceil( ServerCL * NCS(i) / sum_ncs ) sum_ncs = sum[priority level k] NCS(k)\n\nBigger numbers mean a larger nominal concurrency limit, at the expense of every other priority level.\n\nIf not specified, this field defaults to a value of 30.\n\nSetting this field to zero supports the construction of a \"jail\" for this priority level that is used to hold some request(s)",
        priority: 0,
        cell: |o| limited_cell(o, &["nominalConcurrencyShares"]),
    },
    Column {
        name: "Queues",
        kind: "string",
        format: "",
        description: "`queues` is the number of queues for this priority level. The queues exist independently at each apiserver. The value must be positive.  Setting it to 1 effectively precludes shufflesharding and thus makes the distinguisher method of associated flow schemas irrelevant.  This field has a default value of 64.",
        priority: 0,
        cell: |o| queuing_cell(o, "queues"),
    },
    Column {
        name: "HandSize",
        kind: "string",
        format: "",
        description: "`handSize` is a small positive number that configures the shuffle sharding of requests into queues.  When enqueuing a request at this priority level the request's flow identifier (a string pair) is hashed and the hash value is used to shuffle the list of queues and deal a hand of the size specified here.  The request is put into one of the shortest queues in that hand. `handSize` must be no larger than `queues`, and should be significantly smaller (so that a few heavy flows do not saturate most of the queues).  See the user-facing documentation for more extensive guidance on setting this field.  This field has a default value of 8.",
        priority: 0,
        cell: |o| queuing_cell(o, "handSize"),
    },
    Column {
        name: "QueueLengthLimit",
        kind: "string",
        format: "",
        description: "`queueLengthLimit` is the maximum number of requests allowed to be waiting in a given queue of this priority level at a time; excess requests are rejected.  This value must be positive.  If not specified, it will be defaulted to 50.",
        priority: 0,
        cell: |o| queuing_cell(o, "queueLengthLimit"),
    },
];

impl Strategy for PriorityLevelConfigurations {
    fn name(&self) -> &'static str {
        "prioritylevelconfigurations"
    }

    fn columns(&self) -> Columns<'_> {
        Columns::Builtin(COLUMNS)
    }

    fn tracks_generation(&self) -> bool {
        true
    }

    fn default(&self, obj: &mut Object) {
        let Some(spec) = object(obj, "spec") else {
            return;
        };
        if let Some(limited) = object(spec, "limited") {
            // v1 keeps an explicit 0 (a "jail" level); only an unset share count is 30.
            or_insert(limited, "nominalConcurrencyShares", || json!(30));
            or_insert(limited, "lendablePercent", || json!(0));
        }
        if let Some(queuing) = object_at(spec, &["limited", "limitResponse", "queuing"]) {
            or_insert_int(queuing, "handSize", 8);
            or_insert_int(queuing, "queues", 64);
            or_insert_int(queuing, "queueLengthLimit", 50);
        }
        if let Some(exempt) = object(spec, "exempt") {
            or_insert(exempt, "nominalConcurrencyShares", || json!(0));
            or_insert(exempt, "lendablePercent", || json!(0));
        }
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate(new)
    }

    fn validate_update(&self, new: &Object, _old: &Object) -> Vec<FieldError> {
        validate(new)
    }

    fn validate_status_update(&self, new: &Object, _old: &Object) -> Vec<FieldError> {
        conditions(new)
    }
}

const TYPES: [&str; 2] = ["Exempt", "Limited"];
const LIMIT_RESPONSES: [&str; 2] = ["Queue", "Reject"];
const MAX_QUEUES: i64 = 10_000_000;
/// The most hash bits shuffle sharding may need.
const MAX_HASH_BITS: i64 = 60;

/// Upstream's `ValidatePriorityLevelConfiguration` after the metadata.
fn validate(pl: &Object) -> Vec<FieldError> {
    let name = meta_str(pl, "name");
    let spec = pl.get("spec").unwrap_or(&Value::Null);
    let path = FieldPath::new("spec");
    let mut errs = Vec::new();
    let kind = text(spec, "type");
    if (name == "exempt") != (kind == "Exempt") {
        errs.push(FieldError::invalid(path.child("type").as_str(), kind, "must be 'Exempt' if and only if `name` is 'exempt'"));
    }
    match kind {
        "Exempt" => {
            if present(spec, "limited") {
                errs.push(FieldError::forbidden(path.child("limited").as_str(), "must be nil if the type is not Limited"));
            }
            if let Some(exempt) = spec.get("exempt").filter(|e| e.is_object()) {
                let at = path.child("exempt");
                errs.extend(non_negative_shares(exempt, &at));
                errs.extend(lendable(exempt, &at));
            }
        }
        "Limited" => {
            if present(spec, "exempt") {
                errs.push(FieldError::forbidden(path.child("exempt").as_str(), "must be nil if the type is Limited"));
            }
            match spec.get("limited").filter(|l| !l.is_null()) {
                None => errs.push(FieldError::required(path.child("limited").as_str(), "must not be empty when type is Limited")),
                Some(limited) => errs.extend(validate_limited(limited, &path.child("limited"))),
            }
        }
        _ => errs.push(FieldError::not_supported(path.child("type").as_str(), kind, &TYPES)),
    }
    if let Some(fixed) = mandatory_spec("PriorityLevelConfiguration", name) {
        // The exempt level's `spec.exempt` is the administrator's to tune.
        let mut have = spec.clone();
        let detail = if name == "exempt" {
            if let Some(h) = have.as_object_mut() {
                h.insert("exempt".into(), fixed["exempt"].clone());
            }
            format!("spec of '{name}' except the 'spec.exempt' field must equal the fixed value")
        } else {
            format!("spec of '{name}' must equal the fixed value")
        };
        if !same_spec(&have, fixed) {
            errs.push(FieldError::invalid_unquoted("spec", &internal_spec(spec), &detail));
        }
    }
    errs.extend(conditions(pl));
    errs
}

fn non_negative_shares(v: &Value, path: &FieldPath) -> Option<FieldError> {
    let shares = int(v, "nominalConcurrencyShares")?;
    (shares < 0).then(|| invalid_int(&path.child("nominalConcurrencyShares"), shares, "must be a non-negative integer"))
}

fn lendable(v: &Value, path: &FieldPath) -> Option<FieldError> {
    let percent = int(v, "lendablePercent")?;
    (!(0..=100).contains(&percent)).then(|| invalid_int(&path.child("lendablePercent"), percent, "must be between 0 and 100, inclusive"))
}

/// Upstream's `ValidateLimitedPriorityLevelConfiguration` for v1 (zero shares allowed).
fn validate_limited(limited: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs: Vec<FieldError> = non_negative_shares(limited, path).into_iter().collect();
    let response = limited.get("limitResponse").unwrap_or(&Value::Null);
    errs.extend(limit_response(response, &path.child("limitResponse")));
    errs.extend(lendable(limited, path));
    if let Some(borrowing) = int(limited, "borrowingLimitPercent").filter(|b| *b < 0) {
        errs.push(invalid_int(&path.child("borrowingLimitPercent"), borrowing, "if specified, must be a non-negative integer"));
    }
    errs
}

/// Upstream's `ValidateLimitResponse` and `ValidatePriorityLevelQueuingConfiguration`.
fn limit_response(response: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let kind = text(response, "type");
    let queuing = response.get("queuing").filter(|q| !q.is_null());
    match (kind, queuing) {
        ("Reject", Some(_)) => {
            errs.push(FieldError::forbidden(path.child("queuing").as_str(), "must be nil if limited.limitResponse.type is not Limited"))
        }
        ("Reject", None) => {}
        ("Queue", None) => {
            errs.push(FieldError::required(path.child("queuing").as_str(), "must not be empty if limited.limitResponse.type is Limited"))
        }
        ("Queue", Some(q)) => {
            let at = path.child("queuing");
            let (queues, hand, length) = (int(q, "queues").unwrap_or(0), int(q, "handSize").unwrap_or(0), int(q, "queueLengthLimit").unwrap_or(0));
            if length <= 0 {
                errs.push(invalid_int(&at.child("queueLengthLimit"), length, "must be positive"));
            }
            if queues <= 0 {
                errs.push(invalid_int(&at.child("queues"), queues, "must be positive"));
            } else if queues > MAX_QUEUES {
                errs.push(invalid_int(&at.child("queues"), queues, &format!("must not be greater than {MAX_QUEUES}")));
            }
            let hand_at = at.child("handSize");
            if hand <= 0 {
                errs.push(invalid_int(&hand_at, hand, "must be positive"));
            } else if hand > queues {
                errs.push(invalid_int(&hand_at, hand, &format!("should not be greater than queues ({queues})")));
            } else if entropy_bits(queues, hand) > MAX_HASH_BITS {
                let detail = format!("required entropy bits of deckSize {queues} and handSize {hand} should not be greater than {MAX_HASH_BITS}");
                errs.push(invalid_int(&hand_at, hand, &detail));
            }
        }
        _ => errs.push(FieldError::not_supported(path.child("type").as_str(), kind, &LIMIT_RESPONSES)),
    }
    errs
}

/// The hash bits dealing `hand` cards from a deck of `deck` takes.
fn entropy_bits(deck: i64, hand: i64) -> i64 {
    ((deck as f64).log2() * hand as f64).ceil() as i64
}

/// The spec as upstream prints its internal type in an error: Go's field names.
fn internal_spec(spec: &Value) -> String {
    let queuing = |q: &Value| {
        go_struct(&[("Queues", go_int(q, "queues", false)), ("HandSize", go_int(q, "handSize", false)), ("QueueLengthLimit", go_int(q, "queueLengthLimit", false))])
    };
    let response = |r: &Value| go_struct(&[("Type", go_str(r, "type")), ("Queuing", go_ptr(r, "queuing", queuing))]);
    let limited = |l: &Value| {
        go_struct(&[
            ("NominalConcurrencyShares", go_int(l, "nominalConcurrencyShares", false)),
            ("LimitResponse", response(l.get("limitResponse").unwrap_or(&Value::Null))),
            ("LendablePercent", go_int(l, "lendablePercent", true)),
            ("BorrowingLimitPercent", go_int(l, "borrowingLimitPercent", true)),
        ])
    };
    let exempt = |e: &Value| go_struct(&[("NominalConcurrencyShares", go_int(e, "nominalConcurrencyShares", true)), ("LendablePercent", go_int(e, "lendablePercent", true))]);
    go_struct(&[
        ("Type", go_str(spec, "type")),
        ("Limited", go_ptr(spec, "limited", limited)),
        ("Exempt", go_ptr(spec, "exempt", exempt)),
    ])
}

#[cfg(test)]
mod tests {
    use super::super::flowschemas::tests::messages;
    use super::*;

    fn level(name: &str, spec: Value) -> Object {
        let mut o = json!({"metadata": {"name": name}, "spec": spec}).as_object().unwrap().clone();
        PriorityLevelConfigurations.default(&mut o);
        o
    }

    #[test]
    fn v1_defaults() {
        let o = level("l", json!({"type": "Limited", "limited": {"limitResponse": {"type": "Queue", "queuing": {"queues": 16}}}}));
        assert_eq!(o["spec"]["limited"], json!({"nominalConcurrencyShares": 30, "lendablePercent": 0,
            "limitResponse": {"type": "Queue", "queuing": {"queues": 16, "handSize": 8, "queueLengthLimit": 50}}}));
        let o = level("l", json!({"type": "Limited", "limited": {"nominalConcurrencyShares": 0, "limitResponse": {"type": "Reject"}}}));
        assert_eq!(o["spec"]["limited"]["nominalConcurrencyShares"], 0);
        assert_eq!(level("exempt", json!({"type": "Exempt", "exempt": {}}))["spec"]["exempt"], json!({"nominalConcurrencyShares": 0, "lendablePercent": 0}));
    }

    #[test]
    fn queuing_and_shares_are_checked_in_order() {
        let o = level("l", json!({"type": "Limited", "exempt": {}, "limited": {"nominalConcurrencyShares": -1, "borrowingLimitPercent": -2,
            "limitResponse": {"type": "Queue", "queuing": {"queues": 1_000_000, "handSize": 8, "queueLengthLimit": -1}}}}));
        assert_eq!(messages(validate(&o)), [
            "spec.exempt: Forbidden: must be nil if the type is Limited",
            "spec.limited.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer",
            "spec.limited.limitResponse.queuing.queueLengthLimit: Invalid value: -1: must be positive",
            "spec.limited.limitResponse.queuing.handSize: Invalid value: 8: required entropy bits of deckSize 1000000 and handSize 8 should not be greater than 60",
            "spec.limited.borrowingLimitPercent: Invalid value: -2: if specified, must be a non-negative integer",
        ]);
    }

    #[test]
    fn mandatory_levels_keep_their_spec_but_exempts_shares() {
        let exempt = level("exempt", json!({"type": "Exempt", "exempt": {"nominalConcurrencyShares": 10, "lendablePercent": 50}}));
        assert!(validate(&exempt).is_empty());
        let catch_all = level("catch-all", json!({"type": "Limited", "limited": {"nominalConcurrencyShares": 6, "limitResponse": {"type": "Reject"}}}));
        assert_eq!(messages(validate(&catch_all)), [
            r#"spec: Invalid value: {"Type":"Limited","Limited":{"NominalConcurrencyShares":6,"LimitResponse":{"Type":"Reject","Queuing":null},"LendablePercent":0,"BorrowingLimitPercent":null},"Exempt":null}: spec of 'catch-all' must equal the fixed value"#,
        ]);
    }

    #[test]
    fn cells_of_levels_that_do_not_queue_are_none() {
        let o = level("exempt", json!({"type": "Exempt", "exempt": {}}));
        let cells: Vec<Value> = COLUMNS.iter().map(|c| (c.cell)(&o)).collect();
        assert_eq!(cells, [json!("Exempt"), json!("<none>"), json!("<none>"), json!("<none>"), json!("<none>")]);
    }
}
