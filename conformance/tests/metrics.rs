//! `GET /metrics` as kube-apiserver serves it, read with `kubectl get --raw /metrics`:
//! request counters and durations with upstream's labels, stored objects, storage
//! operation durations, open watches, and a strict check of the text format.

use apiary_conformance::harness::{ok, Apiary};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

const VERSION: &str = "1.33";

/// One sample: its name and its labels, sorted.
type Key = (String, BTreeMap<String, String>);

/// Parse the text exposition strictly: every line is `# HELP name text`,
/// `# TYPE name kind`, or `name{labels} value`; each family has HELP and TYPE once,
/// before its samples; every sample belongs to a declared family.
fn parse(text: &str) -> BTreeMap<Key, f64> {
    let mut helps = BTreeSet::new();
    let mut types: BTreeMap<String, String> = BTreeMap::new();
    let mut samples = BTreeMap::new();
    assert!(text.ends_with('\n'), "the exposition ends with a newline");
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, help) = rest.split_once(' ').expect("HELP has a name and a text");
            assert!(!help.is_empty(), "{line}");
            assert!(helps.insert(name.to_owned()), "HELP twice for {name}");
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').expect("TYPE has a name and a kind");
            assert!(
                ["counter", "gauge", "histogram", "summary", "untyped"].contains(&kind),
                "{line}"
            );
            assert!(helps.contains(name), "TYPE before HELP for {name}");
            assert!(
                types.insert(name.to_owned(), kind.to_owned()).is_none(),
                "TYPE twice for {name}"
            );
            continue;
        }
        assert!(
            !line.starts_with('#') && !line.is_empty(),
            "unexpected line {line:?}"
        );
        let name_end = line
            .find(|c: char| c == '{' || c == ' ')
            .unwrap_or_else(|| panic!("no value: {line}"));
        let name = &line[..name_end];
        assert!(
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
                && !name.starts_with(|c: char| c.is_ascii_digit()),
            "bad metric name in {line}"
        );
        let mut rest = &line[name_end..];
        let mut labels = BTreeMap::new();
        if let Some(body) = rest.strip_prefix('{') {
            let mut chars = body.char_indices().peekable();
            let end;
            loop {
                let start = chars.peek().expect("unterminated labels").0;
                if body[start..].starts_with('}') {
                    end = start + 1;
                    break;
                }
                let eq = body[start..].find("=\"").expect("label=\"value\"") + start;
                let label = &body[start..eq];
                assert!(
                    !label.is_empty()
                        && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
                    "bad label name {label:?} in {line}"
                );
                while chars.peek().is_some_and(|(i, _)| *i <= eq + 1) {
                    chars.next();
                }
                let mut value = String::new();
                loop {
                    let (_, c) = chars.next().expect("unterminated label value");
                    match c {
                        '"' => break,
                        '\\' => match chars.next().expect("escape").1 {
                            '\\' => value.push('\\'),
                            '"' => value.push('"'),
                            'n' => value.push('\n'),
                            other => panic!("bad escape \\{other} in {line}"),
                        },
                        '\n' => panic!("raw newline in {line}"),
                        c => value.push(c),
                    }
                }
                assert!(
                    labels.insert(label.to_owned(), value).is_none(),
                    "label {label} twice in {line}"
                );
                match chars.next().expect("unterminated labels") {
                    (_, ',') => {}
                    (i, '}') => {
                        end = i + 1;
                        break;
                    }
                    (_, c) => panic!("unexpected {c:?} after a label in {line}"),
                }
            }
            rest = &body[end..];
        }
        let value = rest
            .strip_prefix(' ')
            .unwrap_or_else(|| panic!("no value: {line}"));
        assert!(
            !value.contains(' '),
            "timestamps or junk after the value: {line}"
        );
        let value: f64 = match value {
            "+Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            v => v.parse().unwrap_or_else(|_| panic!("bad value in {line}")),
        };
        let family = ["_bucket", "_sum", "_count"]
            .iter()
            .filter_map(|s| name.strip_suffix(s))
            .find(|f| types.get(*f).is_some_and(|k| k == "histogram"))
            .unwrap_or(name);
        assert!(
            types.contains_key(family),
            "sample of undeclared family: {line}"
        );
        if types[family] == "histogram" && name.ends_with("_bucket") {
            assert!(labels.contains_key("le"), "bucket without le: {line}");
        }
        assert!(
            samples.insert((name.to_owned(), labels), value).is_none(),
            "sample twice: {line}"
        );
    }
    samples
}

fn scrape(apiary: &Apiary) -> BTreeMap<Key, f64> {
    parse(&ok(&apiary.kubectl(VERSION, &["get", "--raw", "/metrics"])))
}

fn key(name: &str, labels: &[(&str, &str)]) -> Key {
    (
        name.to_owned(),
        labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    )
}

/// `apiserver_request_total` for configmaps in the default namespace.
fn requests(verb: &str, scope: &str, code: &str) -> Key {
    key(
        "apiserver_request_total",
        &[
            ("code", code),
            ("component", "apiserver"),
            ("dry_run", ""),
            ("group", ""),
            ("resource", "configmaps"),
            ("scope", scope),
            ("subresource", ""),
            ("verb", verb),
            ("version", "v1"),
        ],
    )
}

fn get(samples: &BTreeMap<Key, f64>, key: &Key) -> f64 {
    samples.get(key).copied().unwrap_or(0.0)
}

/// Poll the metrics until `check` holds, for a few seconds.
fn eventually(apiary: &Apiary, what: &str, check: impl Fn(&BTreeMap<Key, f64>) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let samples = scrape(apiary);
        if check(&samples) {
            return;
        }
        assert!(Instant::now() < deadline, "{what}: {samples:#?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn metrics_count_requests_objects_and_watches() {
    let apiary = Apiary::start();
    let before = scrape(&apiary);

    ok(&apiary.kubectl(
        VERSION,
        &["create", "configmap", "m1", "--from-literal=k=v"],
    ));
    ok(&apiary.kubectl(
        VERSION,
        &["create", "configmap", "m2", "--from-literal=k=v"],
    ));
    ok(&apiary.kubectl(VERSION, &["get", "configmap", "m1"]));
    ok(&apiary.kubectl(VERSION, &["get", "configmaps"]));
    let missing = apiary.kubectl(VERSION, &["get", "configmap", "nope"]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("NotFound"));

    let after = scrape(&apiary);
    let delta = |k: &Key| get(&after, k) - get(&before, k);
    assert_eq!(delta(&requests("POST", "resource", "201")), 2.0);
    assert_eq!(delta(&requests("GET", "resource", "200")), 1.0);
    assert_eq!(delta(&requests("GET", "resource", "404")), 1.0);
    assert_eq!(delta(&requests("LIST", "namespace", "200")), 1.0);

    // The duration histogram of the creates: cumulative buckets ending in +Inf = _count.
    let labels = [
        ("component", "apiserver"),
        ("dry_run", ""),
        ("group", ""),
        ("resource", "configmaps"),
        ("scope", "resource"),
        ("subresource", ""),
        ("verb", "POST"),
        ("version", "v1"),
    ];
    check_histogram(&after, "apiserver_request_duration_seconds", &labels, 2.0);
    let create = [("operation", "create"), ("type", "configmaps")];
    check_histogram(&after, "etcd_request_duration_seconds", &create, 2.0);
    assert!(
        get(
            &after,
            &key(
                "etcd_request_duration_seconds_count",
                &[("operation", "get"), ("type", "configmaps")]
            )
        ) >= 1.0,
        "a get of one configmap reads storage"
    );

    // The watch cache counts the stored objects (it follows storage asynchronously).
    let objects = key("apiserver_storage_objects", &[("resource", "configmaps")]);
    // Two, the kube-root-ca.crt of each of the four namespaces, and
    // kube-system/extension-apiserver-authentication.
    eventually(&apiary, "two configmaps stored", |s| {
        get(s, &objects) == 7.0
    });
    let namespaces = key("apiserver_storage_objects", &[("resource", "namespaces")]);
    assert!(get(&after, &namespaces) >= 4.0, "the default namespaces");
    assert!(
        get(
            &after,
            &key(
                "apiserver_current_inflight_requests",
                &[("request_kind", "mutating")]
            )
        ) >= 0.0
    );
    assert!(after.contains_key(&key(
        "apiserver_current_inflight_requests",
        &[("request_kind", "readOnly")]
    )));

    // An open watch is a long-running request and a registered watcher, until it ends.
    let mut watch = apiary_conformance::harness::kubectl_command(VERSION, &apiary.kubeconfig)
        .args(["get", "configmaps", "--watch", "-o", "name"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("kubectl watch starts");
    let longrunning = key(
        "apiserver_longrunning_requests",
        &[
            ("component", "apiserver"),
            ("group", ""),
            ("resource", "configmaps"),
            ("scope", "namespace"),
            ("subresource", ""),
            ("verb", "WATCH"),
            ("version", "v1"),
        ],
    );
    let watchers = key(
        "apiserver_registered_watchers",
        &[("group", ""), ("kind", "ConfigMap"), ("version", "v1")],
    );
    eventually(&apiary, "one open watch", |s| {
        get(s, &longrunning) == 1.0 && get(s, &watchers) == 1.0
    });
    let _ = watch.kill();
    let _ = watch.wait();
    eventually(&apiary, "the watch ended", |s| {
        get(s, &longrunning) == 0.0
            && get(s, &watchers) == 0.0
            && get(s, &requests("WATCH", "namespace", "200")) == 1.0
    });
    // Watches stay out of the duration histogram.
    let last = scrape(&apiary);
    assert!(!last.keys().any(
        |(name, l)| name.starts_with("apiserver_request_duration_seconds")
            && l.get("verb").is_some_and(|v| v == "WATCH")
    ));
}

fn check_histogram(samples: &BTreeMap<Key, f64>, name: &str, labels: &[(&str, &str)], count: f64) {
    let base = key(name, labels).1;
    let mut buckets: Vec<(f64, f64)> = samples
        .iter()
        .filter(|((n, l), _)| {
            n == &format!("{name}_bucket") && {
                let mut l = l.clone();
                l.remove("le");
                l == base
            }
        })
        .map(|((_, l), v)| {
            let le = match l["le"].as_str() {
                "+Inf" => f64::INFINITY,
                le => le.parse().expect("numeric le"),
            };
            (le, *v)
        })
        .collect();
    buckets.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
    assert!(buckets.len() > 1, "{name} has buckets");
    assert!(
        buckets.windows(2).all(|w| w[0].1 <= w[1].1),
        "{name} buckets are cumulative: {buckets:?}"
    );
    let (le, inf) = *buckets.last().unwrap();
    assert!(le.is_infinite(), "{name} ends with +Inf");
    let total = samples[&key(&format!("{name}_count"), labels)];
    assert_eq!(inf, total, "{name}: +Inf equals _count");
    assert!(total >= count, "{name}_count {total} < {count}");
    assert!(samples[&key(&format!("{name}_sum"), labels)] >= 0.0);
}
