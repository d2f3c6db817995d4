//! Upstream's namespace controller (kube-controller-manager's `namespace-controller`)
//! over a namespace being deleted: every object in it is deleted, resource by
//! resource; its status reports progress in upstream's five conditions; once nothing
//! is left, its `kubernetes` finalizer is taken away through `finalize`, which lets it
//! go (or, when it was already finalized, it is deleted).
//!
//! A pure decision over what the watch caches hold: [`terminating`] says what one
//! namespace needs next.

use crate::rest::object::strings;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The finalizer this controller owns in a namespace's spec.
pub(crate) const FINALIZER: &str = "kubernetes";

/// The objects of one namespaced resource in the namespace, as its cache holds them.
#[derive(Debug)]
pub(crate) struct Content<'a> {
    /// `resource.group` as upstream's messages name it (`configmaps.`, `deployments.apps`).
    pub name: String,
    pub objects: &'a [Value],
}

/// What a terminating namespace needs now.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Next {
    /// Delete what is left of these resources (by their index in the content given).
    pub delete: Vec<usize>,
    /// Write these conditions (the status changed).
    pub conditions: Option<Vec<Value>>,
    /// Take the `kubernetes` finalizer away: nothing is left.
    pub finalize: bool,
    /// Delete the namespace itself: it was finalized already.
    pub delete_namespace: bool,
}

/// What namespace `ns` (being deleted) needs next, given its content, at `now`.
pub(crate) fn terminating(ns: &Value, content: &[Content<'_>], now: &str) -> Next {
    let spec_finalizers = strings(ns.pointer("/spec/finalizers"));
    if !spec_finalizers.iter().any(|f| f == FINALIZER) {
        let own = strings(ns.pointer("/metadata/finalizers"));
        return Next { delete_namespace: spec_finalizers.is_empty() && own.is_empty(), ..Next::default() };
    }
    let being_deleted = |o: &Value| o.pointer("/metadata/deletionTimestamp").is_some_and(|t| !t.is_null());
    let delete: Vec<usize> = (0..content.len()).filter(|&i| content[i].objects.iter().any(|o| !being_deleted(o))).collect();
    // What stays once this pass's deletes are done: objects held by finalizers.
    let mut remaining: BTreeMap<&str, usize> = BTreeMap::new();
    let mut by_finalizer: BTreeMap<String, usize> = BTreeMap::new();
    let mut present = 0;
    for c in content {
        present += c.objects.len();
        for o in c.objects {
            let finalizers = strings(o.pointer("/metadata/finalizers"));
            if finalizers.is_empty() {
                continue;
            }
            *remaining.entry(&c.name).or_default() += 1;
            for f in finalizers {
                *by_finalizer.entry(f).or_default() += 1;
            }
        }
    }
    let wanted = conditions(&remaining, &by_finalizer);
    let had = ns.pointer("/status/conditions").and_then(Value::as_array).cloned().unwrap_or_default();
    let (updated, changed) = updated_conditions(&had, &wanted, now);
    Next {
        delete,
        conditions: changed.then_some(updated),
        finalize: present == 0,
        delete_namespace: false,
    }
}

/// One condition: type, status, reason, message.
type Condition = (&'static str, &'static str, &'static str, String);

/// Upstream's five conditions for what remains.
fn conditions(remaining: &BTreeMap<&str, usize>, by_finalizer: &BTreeMap<String, usize>) -> Vec<Condition> {
    let listed = |parts: Vec<String>| parts.join(", ");
    let content = if remaining.is_empty() {
        ("NamespaceContentRemaining", "False", "ContentRemoved", "All content successfully removed".to_owned())
    } else {
        let parts = remaining.iter().map(|(r, n)| format!("{r} has {n} resource instances")).collect();
        ("NamespaceContentRemaining", "True", "SomeResourcesRemain", format!("Some resources are remaining: {}", listed(parts)))
    };
    let finalizers = if by_finalizer.is_empty() {
        ("NamespaceFinalizersRemaining", "False", "ContentHasNoFinalizers", "All content-preserving finalizers finished".to_owned())
    } else {
        let parts = by_finalizer.iter().map(|(f, n)| format!("{f} in {n} resource instances")).collect();
        let message = format!("Some content in the namespace has finalizers remaining: {}", listed(parts));
        ("NamespaceFinalizersRemaining", "True", "SomeFinalizersRemain", message)
    };
    vec![
        ("NamespaceDeletionDiscoveryFailure", "False", "ResourcesDiscovered", "All resources successfully discovered".to_owned()),
        ("NamespaceDeletionGroupVersionParsingFailure", "False", "ParsedGroupVersions", "All legacy kube types successfully parsed".to_owned()),
        (
            "NamespaceDeletionContentFailure",
            "False",
            "ContentDeleted",
            "All content successfully deleted, may be waiting on finalization".to_owned(),
        ),
        content,
        finalizers,
    ]
}

/// `had` with `wanted` set, as upstream's `updateConditions`: a condition keeps its
/// transition time while its status stays; whether anything changed.
fn updated_conditions(had: &[Value], wanted: &[Condition], now: &str) -> (Vec<Value>, bool) {
    let mut out: Vec<Value> = had.to_vec();
    let mut changed = false;
    for (kind, status, reason, message) in wanted {
        let made = |since: &str| {
            json!({"type": kind, "status": status, "lastTransitionTime": since, "reason": reason, "message": message})
        };
        match out.iter_mut().find(|c| c["type"] == *kind) {
            None => {
                out.push(made(now));
                changed = true;
            }
            Some(old) if old["status"] != *status || old["reason"] != *reason || old["message"] != *message => {
                let since = if old["status"] == *status { old["lastTransitionTime"].as_str().unwrap_or(now).to_owned() } else { now.to_owned() };
                *old = made(&since);
                changed = true;
            }
            Some(_) => {}
        }
    }
    (out, changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ns(finalizers: &[&str], conditions: Value) -> Value {
        json!({"metadata": {"name": "n", "deletionTimestamp": "2026-11-24T00:00:00Z"},
               "spec": {"finalizers": finalizers}, "status": {"phase": "Terminating", "conditions": conditions}})
    }

    #[test]
    fn content_is_deleted_and_what_finalizers_hold_is_reported_as_upstream_words_it() {
        let held = vec![json!({"metadata": {"name": "a", "deletionTimestamp": "t", "finalizers": ["example.com/hold"]}})];
        let loose = vec![json!({"metadata": {"name": "b"}})];
        let content = [
            Content { name: "configmaps.".into(), objects: &held },
            Content { name: "deployments.apps".into(), objects: &loose },
        ];
        let next = terminating(&ns(&["kubernetes"], json!([])), &content, "now");
        assert_eq!(next.delete, [1], "only what is not being deleted yet is deleted");
        assert!(!next.finalize);
        let conditions = next.conditions.expect("the conditions are written");
        assert_eq!(conditions.len(), 5);
        assert_eq!(conditions[3]["message"], "Some resources are remaining: configmaps. has 1 resource instances");
        assert_eq!(
            conditions[4]["message"],
            "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances"
        );
        // Written once: the next pass over the same content wants nothing new.
        let again = terminating(&ns(&["kubernetes"], json!(conditions)), &content[..1], "later");
        assert_eq!(again, Next::default());
    }

    #[test]
    fn an_empty_namespace_is_finalized_and_a_finalized_one_deleted() {
        let next = terminating(&ns(&["kubernetes"], json!([])), &[], "now");
        assert!(next.finalize);
        assert_eq!(next.conditions.unwrap()[3]["reason"], "ContentRemoved");
        assert!(terminating(&ns(&[], json!([])), &[], "now").delete_namespace);
        assert_eq!(terminating(&ns(&["example.com/other"], json!([])), &[], "now"), Next::default());
    }
}
