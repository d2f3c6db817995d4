//! Upstream's resource quota controller: every ResourceQuota's `status` holds its hard
//! limits and what its namespace's objects use of them, recounted from the watch
//! caches whenever they change. Admission charges a quota as it admits a write; this
//! recount is what gives usage back when objects go, and what first fills in a new
//! quota's usage (admission refuses what a quota without usage governs).

use crate::admission::resource_quota::recalculate;
use crate::admission::{read_list, write_list};
use serde_json::{json, Map, Value};

/// The merge patch of a quota's status that brings it up to date, `None` when it is.
pub(crate) fn status_patch(
    quota: &Value,
    objects_of: impl Fn(&str, &str) -> Option<Vec<Value>>,
    now: Option<u64>,
) -> Option<Value> {
    let used = recalculate(quota, objects_of, now)?;
    let hard = quota.pointer("/spec/hard").cloned().unwrap_or_else(|| json!({}));
    let want_used = write_list(&used);
    let have_hard = quota.pointer("/status/hard").cloned().unwrap_or(Value::Null);
    let have_used = quota.pointer("/status/used").cloned().unwrap_or(Value::Null);
    if same(&have_hard, &hard) && same(&have_used, &want_used) {
        return None;
    }
    // Keys no longer limited are taken out (null in a merge patch).
    let mut patch_used = want_used.as_object().cloned().unwrap_or_default();
    let mut patch_hard = hard.as_object().cloned().unwrap_or_default();
    for (have, patch) in [(&have_used, &mut patch_used), (&have_hard, &mut patch_hard)] {
        for key in have.as_object().into_iter().flat_map(Map::keys) {
            patch.entry(key.clone()).or_insert(Value::Null);
        }
    }
    Some(json!({"status": {"hard": patch_hard, "used": patch_used}}))
}

/// Equal as resource lists: quantities compared by value (`1` and `1000m` are the
/// same), none the same as an empty list.
fn same(a: &Value, b: &Value) -> bool {
    let len = |v: &Value| v.as_object().map_or(0, Map::len);
    read_list(Some(a)) == read_list(Some(b)) && len(a) == len(b)
}
