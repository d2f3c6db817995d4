//! The columns a kind's Table shows between Name and Age, as kube-apiserver's printers
//! show them, and the small readers their cells are made with.

use super::customresources::PrinterColumns;
use crate::rest::object::Object;
use serde_json::{json, Value};

/// The columns of a kind's Tables.
#[derive(Clone, Copy, Debug)]
pub enum Columns<'a> {
    /// A built-in kind's, fixed: these between Name and Age.
    Builtin(&'static [Column]),
    /// A built-in kind's whose row is laid out otherwise: these after Name, with Age
    /// before the column `age_at` names (after them all when it is their count), or
    /// no Age at all (`None`).
    Laid { columns: &'static [Column], age_at: Option<usize> },
    /// A built-in kind's whose Name comes last, shown with `-o wide`, and which has no
    /// Age (events).
    NameLast(&'static [Column]),
    /// A built-in kind's whose rows end with an Age cell its columns do not declare,
    /// as upstream's IPAddress printer has them.
    AgeUndeclared(&'static [Column]),
    /// A custom resource's: after Name, those its CRD version declares (Age among
    /// them when it declares none).
    Declared(&'a PrinterColumns),
}

/// A column: its header, type, and how to compute a cell from an object.
#[derive(Clone, Copy, Debug)]
pub struct Column {
    pub name: &'static str,
    /// The column's type as a Table names it: `string`, `integer`.
    pub kind: &'static str,
    pub description: &'static str,
    /// The column's format as a Table names it: "" mostly, `name` for a name.
    pub format: &'static str,
    /// 0 for a column always shown, 1 for one `kubectl get -o wide` adds; a built-in
    /// kind's Age comes after its last column of priority 0.
    pub priority: u8,
    pub cell: fn(&Object) -> Value,
}

/// The Table upstream's default convertor makes for kinds without a printer: Name and
/// the creation time as it is (Created At), no Age.
pub const CREATED_AT: Columns<'static> = Columns::Laid {
    columns: &[Column {
        name: "Created At",
        kind: "date",
        format: "",
        description: crate::rest::table::CREATION_TIMESTAMP_DESCRIPTION,
        priority: 0,
        cell: |o| str_at(o, &["metadata", "creationTimestamp"]),
    }],
    age_at: None,
};

/// Where the pod spec of a workload's template is.
pub const TEMPLATE: &[&str] = &["spec", "template", "spec"];

/// The value at `path` of `obj`.
pub fn at<'a>(obj: &'a Object, path: &[&str]) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    rest.iter().try_fold(obj.get(*first)?, |v, p| v.get(p))
}

/// The integer at `path`, 0 when absent.
pub fn int_at(obj: &Object, path: &[&str]) -> i64 {
    at(obj, path).and_then(Value::as_i64).unwrap_or(0)
}

/// The string at `path` as a cell, "" when absent.
pub fn str_at(obj: &Object, path: &[&str]) -> Value {
    Value::String(at(obj, path).and_then(Value::as_str).unwrap_or("").to_owned())
}

/// How many entries the map or list at `path` has.
pub fn count_at(obj: &Object, path: &[&str]) -> Value {
    let n = match at(obj, path) {
        Some(Value::Object(m)) => m.len(),
        Some(Value::Array(a)) => a.len(),
        _ => 0,
    };
    json!(n)
}

/// A cell that reads the clock: the time since `time` (RFC 3339), as an Age column
/// shows it; the Table resolves it (`<unknown>` when `time` is absent).
pub fn since(time: Option<&Value>) -> Value {
    json!({ SINCE: time.and_then(Value::as_str).unwrap_or("") })
}

/// A cell that reads the clock: the time from `start` to `end` (to now when `end` is
/// absent), as upstream's Job Duration shows it; "" without a start.
pub fn between(start: Option<&Value>, end: Option<&Value>) -> Value {
    match start.and_then(Value::as_str) {
        None => json!(""),
        Some(start) => match end.and_then(Value::as_str) {
            None => since(Some(&json!(start))),
            Some(end) => {
                let secs = |t: &str| crate::time::parse_go_rfc3339(t).map(|(s, _)| s);
                match (secs(start), secs(end)) {
                    (Some(a), Some(b)) => json!(crate::rest::table::human_duration(b.saturating_sub(a).max(0) as u64)),
                    _ => json!(""),
                }
            }
        },
    }
}

/// A cell that reads the clock: `template` with `{}` replaced by the time since
/// `time`, as [`since`] shows it.
pub fn since_in(time: &str, template: &str) -> Value {
    json!({ SINCE: time, SINCE_IN: template })
}

/// The key of the template of a cell [`since_in`] makes.
pub const SINCE_IN: &str = "$apiary.since_in";

/// The key of a cell [`since`] makes.
pub const SINCE: &str = "$apiary.since";

/// The strings of the list at `path`.
pub fn strings_at(obj: &Object, path: &[&str]) -> Vec<String> {
    at(obj, path).and_then(Value::as_array).map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect()).unwrap_or_default()
}

/// `s`, or `<none>` when empty.
pub fn or_none(s: String) -> Value {
    json!(if s.is_empty() { "<none>".to_owned() } else { s })
}

/// The names of the containers of the pod spec at `spec`, joined with commas.
pub fn container_names(obj: &Object, spec: &[&str]) -> Value {
    json!(containers(obj, spec, "name"))
}

/// The images of the containers of the pod spec at `spec`, joined with commas.
pub fn container_images(obj: &Object, spec: &[&str]) -> Value {
    json!(containers(obj, spec, "image"))
}

fn containers(obj: &Object, spec: &[&str], field: &str) -> String {
    let mut path = spec.to_vec();
    path.push("containers");
    at(obj, &path)
        .and_then(Value::as_array)
        .map(|cs| cs.iter().map(|c| c.get(field).and_then(Value::as_str).unwrap_or("")).collect::<Vec<_>>().join(","))
        .unwrap_or_default()
}

/// The LabelSelector at `path` as upstream's `FormatLabelSelector` prints it:
/// requirements sorted by key, `k=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`;
/// `<none>` for no selector or an empty one.
pub fn label_selector_at(obj: &Object, path: &[&str]) -> Value {
    or_none(at(obj, path).map(format_label_selector).unwrap_or_default())
}

/// A LabelSelector as upstream's `labels.Selector.String()` prints it ("" for none).
pub fn format_label_selector(selector: &Value) -> String {
    let mut reqs: Vec<(String, String)> = Vec::new();
    if let Some(m) = selector.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in m {
            reqs.push((k.clone(), format!("{k}={}", v.as_str().unwrap_or(""))));
        }
    }
    for e in selector.get("matchExpressions").and_then(Value::as_array).into_iter().flatten() {
        let key = e.get("key").and_then(Value::as_str).unwrap_or("");
        let mut values: Vec<&str> = e.get("values").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
        values.sort_unstable();
        values.dedup();
        let text = match e.get("operator").and_then(Value::as_str).unwrap_or("") {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.to_owned(),
            "DoesNotExist" => format!("!{key}"),
            op => return format!("{op:?} is not a valid label selector operator"),
        };
        reqs.push((key.to_owned(), text));
    }
    // Upstream sorts by key, stably.
    reqs.sort_by(|a, b| a.0.cmp(&b.0));
    reqs.into_iter().map(|(_, t)| t).collect::<Vec<_>>().join(",")
}

/// A map of strings as upstream's `labels.Set.String()` prints it: `k=v` sorted by
/// key, joined with commas; `<none>` when empty.
pub fn label_map_at(obj: &Object, path: &[&str]) -> Value {
    let mut pairs: Vec<String> = at(obj, path)
        .and_then(Value::as_object)
        .map(|m| m.iter().map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or(""))).collect())
        .unwrap_or_default();
    pairs.sort();
    or_none(pairs.join(","))
}

/// The first three of `items` joined with commas, `+ N more...` for the rest, `none`
/// for no items, as upstream's `listWithMoreString`.
pub fn first_three(items: impl Iterator<Item = String>, none: &str) -> Value {
    let all: Vec<String> = items.collect();
    let shown = all.iter().take(3).cloned().collect::<Vec<_>>().join(",");
    json!(match all.len() {
        n if n > 3 => format!("{shown} + {} more...", n - 3),
        0 => none.to_owned(),
        _ => shown,
    })
}

/// A load balancer status' addresses (each ingress' IP, else its hostname), sorted
/// and without repeats, joined with commas.
pub fn load_balancer_addresses(obj: &Object) -> Value {
    let mut shown: Vec<&str> = at(obj, &["status", "loadBalancer", "ingress"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|i| {
            let field = |k: &str| i.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
            field("ip").or_else(|| field("hostname"))
        })
        .collect();
    shown.sort_unstable();
    shown.dedup();
    json!(shown.join(","))
}

/// The quantity at `path` as written (stored quantities are canonical), `0` when absent.
pub fn quantity_at(obj: &Object, path: &[&str]) -> Value {
    match at(obj, path) {
        Some(Value::String(s)) => json!(s),
        Some(Value::Number(n)) => json!(n.to_string()),
        _ => json!("0"),
    }
}

/// Access modes as upstream's `GetAccessModesAsString`: RWO, ROX, RWX, RWOP in that
/// order, each once.
pub fn access_modes_at(obj: &Object, path: &[&str]) -> Value {
    let modes = strings_at(obj, path);
    let shown: Vec<&str> = [("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"), ("ReadWriteOncePod", "RWOP")]
        .iter()
        .filter(|(mode, _)| modes.iter().any(|m| m == mode))
        .map(|(_, short)| *short)
        .collect();
    json!(shown.join(","))
}

/// `status.phase`, or Terminating once the object is being deleted.
pub fn phase_or_terminating(obj: &Object) -> Value {
    if at(obj, &["metadata", "deletionTimestamp"]).is_some_and(|t| !t.is_null()) {
        return json!("Terminating");
    }
    str_at(obj, &["status", "phase"])
}

/// A volume's or claim's class: the beta annotation, else `spec.storageClassName`.
pub fn storage_class(obj: &Object) -> Value {
    match at(obj, &["metadata", "annotations", "volume.beta.kubernetes.io/storage-class"]).and_then(Value::as_str) {
        Some(class) => json!(class),
        None => str_at(obj, &["spec", "storageClassName"]),
    }
}

/// The string at `path`, `<unset>` when absent.
pub fn unset_or(obj: &Object, path: &[&str]) -> Value {
    json!(at(obj, path).and_then(Value::as_str).unwrap_or("<unset>"))
}

/// An int-or-string at `path` as Go's `IntOrString.String()`, `N/A` when absent.
pub fn int_or_string_or_na(obj: &Object, path: &[&str]) -> Value {
    json!(match at(obj, path) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => "N/A".to_owned(),
    })
}
