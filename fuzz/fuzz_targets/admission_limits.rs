#![no_main]
//! The LimitRanger and ResourceQuota decisions (`apiary_core::admission::limit_ranger`,
//! `resource_quota`) over any LimitRange, ResourceQuota and object JSON: never panic;
//! the same answers twice; defaulting twice is defaulting once; an admitted quota
//! check never takes a limited resource it charges above its hard limit (nor one
//! within it past it), and a release never leaves usage below zero.
//!
//! Input: a byte picking the resource (pods, pods/resize, services, claims, configmaps,
//! deployments.apps) the operation and whether a clock is given, then up to four JSON documents split by zero
//! bytes: the LimitRange (or array of them), the ResourceQuota, the object, the stored
//! object of an update.

use apiary_core::admission::resource_quota::{self, QuotaRequest};
use apiary_core::admission::{limit_ranger, Operation};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

const RESOURCES: [(&str, &str, &str); 6] = [
    ("", "pods", ""),
    ("", "pods", "resize"),
    ("", "services", ""),
    ("", "persistentvolumeclaims", ""),
    ("", "configmaps", ""),
    ("apps", "deployments", ""),
];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let (group, resource, subresource) = RESOURCES[usize::from(pick & 0x3f) % RESOURCES.len()];
    let operation = if pick & 0x80 == 0 { Operation::Create } else { Operation::Update };
    let mut docs = rest.split(|b| *b == 0).map(|d| serde_json::from_slice::<Value>(d).unwrap_or(Value::Null));
    let ranges = match docs.next().unwrap_or(Value::Null) {
        Value::Array(items) => items,
        one => vec![one],
    };
    let quota = docs.next().unwrap_or(Value::Null);
    let object = docs.next().unwrap_or(Value::Null);
    let old = docs.next();

    // LimitRanger: deterministic, and its defaults settle after one pass.
    let mut first = object.clone();
    let outcome = limit_ranger::admit(&ranges, resource, subresource, operation, &mut first, old.as_ref());
    let mut again = object.clone();
    assert_eq!(outcome, limit_ranger::admit(&ranges, resource, subresource, operation, &mut again, old.as_ref()));
    assert_eq!(first, again);
    for range in &ranges {
        let mut once = object.clone();
        limit_ranger::apply_defaults(range, &mut once);
        let mut twice = once.clone();
        limit_ranger::apply_defaults(range, &mut twice);
        assert_eq!(once, twice);
        let _ = limit_ranger::validate_pod(range, &object);
        let _ = limit_ranger::validate_claim(range, &object);
    }
    if let Err(e) = &outcome {
        assert_eq!(e.code, 403);
    }

    // ResourceQuota over what LimitRanger let through.
    // A clock at the recordings' time or none.
    let now = (pick & 0x40 != 0).then_some(1_764_000_000);
    let request = QuotaRequest { group, resource, operation, object: &first, old_object: old.as_ref(), now };
    let checked = resource_quota::check(std::slice::from_ref(&quota), &request);
    assert_eq!(checked, resource_quota::check(std::slice::from_ref(&quota), &request));
    let hard = resource_quota::hard(&quota);
    let used = resource_quota::used(&quota);
    match checked {
        Ok(charges) => {
            for charge in charges {
                assert_eq!(charge.index, 0);
                for (name, now) in &charge.used {
                    let before = used.get(name);
                    if before.is_some_and(|b| b.canonical() == now.canonical()) {
                        continue;
                    }
                    if let Some(limit) = hard.get(name) {
                        assert!(now <= limit, "{name}: {} over {}", now.canonical(), limit.canonical());
                    }
                }
                let charged = resource_quota::apply_charge(&quota, &charge);
                // Written and read back, the usage is the same amounts (a zero's
                // format is not kept: `0Gi` is written `0`).
                let text = |l: &apiary_core::admission::ResourceList| -> Vec<(String, String)> {
                    l.iter().map(|(k, q)| (k.clone(), q.canonical())).collect()
                };
                assert_eq!(text(&resource_quota::used(&charged)), text(&charge.used));
            }
        }
        Err(message) => {
            let status = resource_quota::forbidden(group, resource, &first, &message);
            assert_eq!(status.code, 403);
            assert!(status.message.ends_with(&message));
        }
    }
    let released = resource_quota::release(&quota, group, resource, &first, now);
    for (name, q) in resource_quota::used(&released) {
        if used.get(&name).is_some_and(|b| !b.is_negative()) {
            assert!(!q.is_negative(), "{name} below zero");
        }
    }
    let _ = resource_quota::usage(group, resource, &first, now);
    let _ = resource_quota::scopes_match(&quota, group, resource, &first);
});
