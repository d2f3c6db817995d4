use super::*;

fn get(path: &str, query: Option<&str>) -> Tracked {
    classify(&http::Method::GET, path, query, None)
}

#[test]
fn verbs_and_scopes_as_upstream_reports_them() {
    let l = |t: Tracked| {
        let l = t.labels.unwrap();
        (l.verb, l.scope)
    };
    let s = |v: &str, sc: &str| (v.to_owned(), sc.to_owned());
    assert_eq!(
        l(get("/api/v1/namespaces/d/pods/a", None)),
        s("GET", "resource")
    );
    assert_eq!(
        l(get("/api/v1/namespaces/d/pods", None)),
        s("LIST", "namespace")
    );
    assert_eq!(l(get("/api/v1/pods", None)), s("LIST", "cluster"));
    assert_eq!(
        l(get("/api/v1/pods", Some("watch=true"))),
        s("WATCH", "cluster")
    );
    let post = classify(&http::Method::POST, "/api/v1/namespaces/d/pods", None, None);
    assert_eq!(l(post), s("POST", "resource"));
    let apply = classify(
        &http::Method::PATCH,
        "/apis/apps/v1/namespaces/d/deployments/x",
        Some("fieldManager=m"),
        Some("application/apply-patch+yaml"),
    );
    assert_eq!(l(apply.clone()), s("APPLY", "resource"));
    let labels = apply.labels.unwrap();
    assert_eq!(
        (labels.group.as_str(), labels.version.as_str()),
        ("apps", "v1")
    );
    assert_eq!(labels.component, "apiserver");
    let del = classify(
        &http::Method::DELETE,
        "/api/v1/namespaces/d/pods",
        Some("dryRun=All"),
        None,
    );
    assert_eq!(del.request_kind, Some("mutating"));
    assert_eq!(del.labels.unwrap().dry_run, "All");
    let watch = get("/api/v1/pods", Some("watch=1"));
    assert!(watch.is_long_running());
    assert_eq!(get("/healthz", None).labels, None);
}

#[test]
fn counts_requests_with_their_codes_and_durations() {
    let m = Metrics::new();
    let t = get("/api/v1/namespaces/d/pods/a", None);
    m.request_started(&t);
    assert!(m
        .render(&[])
        .contains("apiserver_current_inflight_requests{request_kind=\"readOnly\"} 1\n"));
    m.request_finished(&t, 404, Duration::from_millis(30));
    m.request_started(&t);
    m.request_finished(&t, 404, Duration::from_millis(3));
    let text = m.render(&[("pods".to_owned(), 2)]);
    let total = "apiserver_request_total{code=\"404\",component=\"apiserver\",dry_run=\"\",group=\"\",resource=\"pods\",scope=\"resource\",subresource=\"\",verb=\"GET\",version=\"v1\"} 2\n";
    assert!(text.contains(total), "{text}");
    let labels = "component=\"apiserver\",dry_run=\"\",group=\"\",resource=\"pods\",scope=\"resource\",subresource=\"\",verb=\"GET\",version=\"v1\"";
    assert!(
        text.contains(&format!(
            "apiserver_request_duration_seconds_bucket{{{labels},le=\"0.005\"}} 1\n"
        )),
        "{text}"
    );
    assert!(text.contains(&format!(
        "apiserver_request_duration_seconds_bucket{{{labels},le=\"0.025\"}} 1\n"
    )));
    assert!(text.contains(&format!(
        "apiserver_request_duration_seconds_bucket{{{labels},le=\"0.05\"}} 2\n"
    )));
    assert!(text.contains(&format!(
        "apiserver_request_duration_seconds_bucket{{{labels},le=\"+Inf\"}} 2\n"
    )));
    assert!(text.contains(&format!(
        "apiserver_request_duration_seconds_count{{{labels}}} 2\n"
    )));
    assert!(text.contains(&format!(
        "apiserver_request_duration_seconds_sum{{{labels}}} 0.033"
    )));
    assert!(text.contains("apiserver_current_inflight_requests{request_kind=\"readOnly\"} 0\n"));
    assert!(text.contains("apiserver_storage_objects{resource=\"pods\"} 2\n"));
}

#[test]
fn watches_are_long_running_and_not_timed() {
    let m = Metrics::new();
    let mut t = get("/api/v1/namespaces/d/pods", Some("watch=true"));
    t.watch_kind = Some((String::new(), "v1".into(), "Pod".into()));
    m.request_started(&t);
    m.watch_started(&t);
    let text = m.render(&[]);
    assert!(text.contains("apiserver_longrunning_requests{component=\"apiserver\",group=\"\",resource=\"pods\",scope=\"namespace\",subresource=\"\",verb=\"WATCH\",version=\"v1\"} 1\n"), "{text}");
    assert!(
        text.contains("apiserver_registered_watchers{group=\"\",kind=\"Pod\",version=\"v1\"} 1\n")
    );
    assert!(text.contains("apiserver_current_inflight_requests{request_kind=\"readOnly\"} 0\n"));
    m.watch_finished(&t, 200);
    let text = m.render(&[]);
    assert!(
        text.contains("apiserver_registered_watchers{group=\"\",kind=\"Pod\",version=\"v1\"} 0\n")
    );
    assert!(text.contains("verb=\"WATCH\",version=\"v1\"} 1\n"));
    assert!(!text.contains("apiserver_request_duration_seconds_count"));
}

#[test]
fn storage_durations_and_text_format() {
    let m = Metrics::new();
    m.storage_observed("create", "deployments.apps", Duration::from_secs(100));
    let text = m.render(&[]);
    assert!(text.contains("etcd_request_duration_seconds_bucket{operation=\"create\",type=\"deployments.apps\",le=\"60\"} 0\n"), "{text}");
    assert!(text.contains("etcd_request_duration_seconds_bucket{operation=\"create\",type=\"deployments.apps\",le=\"+Inf\"} 1\n"));
    assert!(text.contains(
        "etcd_request_duration_seconds_sum{operation=\"create\",type=\"deployments.apps\"} 100\n"
    ));
    assert!(text.contains("# HELP apiserver_request_total [STABLE] Counter of"));
    assert!(text.contains("# TYPE etcd_request_duration_seconds histogram\n"));
    // Every line is a comment or `name{labels} value`; every family has HELP and TYPE once.
    let mut helps = std::collections::BTreeMap::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            *helps
                .entry(rest.split(' ').next().unwrap().to_owned())
                .or_insert(0) += 1;
        } else if !line.starts_with("# TYPE ") {
            let (_, value) = line.rsplit_once(' ').unwrap();
            assert!(value == "+Inf" || value.parse::<f64>().is_ok(), "{line}");
        }
    }
    assert!(helps.values().all(|n| *n == 1));
    assert_eq!(escape_label_value("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
}

#[test]
fn storage_operations_as_upstream_names_them() {
    use crate::storage::StorageOp;
    let op = StorageOp::Get {
        key: "/registry/pods/d/a".into(),
    };
    assert_eq!(storage_operation(&op), Some(("get", "/registry/pods/d/a")));
    assert_eq!(storage_operation(&StorageOp::CurrentRevision), None);
}

#[test]
fn served_at_metrics_with_each_resource_counted_once() {
    let server = crate::Server::new(crate::Config::default());
    let request = http::Request::get("/metrics")
        .body(bytes::Bytes::new())
        .unwrap();
    let inputs = crate::Inputs {
        now: std::time::SystemTime::UNIX_EPOCH,
        monotonic: std::time::Duration::ZERO,
        entropy: [0; 48],
        peer_certificates: Vec::new(),
        peer_certificates_rejected: false,
        request_header_common_name: None,
        remote_addr: None,
    };
    // Anonymous clients are forbidden: no role grants them /metrics.
    let crate::Step::Respond(r) = server.handle(request.clone(), inputs.clone()) else {
        panic!("metrics answer at once")
    };
    assert_eq!(r.status(), 403);
    let crate::Step::Respond(r) = server.handle_as_system(request, inputs) else {
        panic!("metrics answer at once")
    };
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()[http::header::CONTENT_TYPE], CONTENT_TYPE);
    let text = std::str::from_utf8(r.body()).unwrap();
    // Until a reflector syncs a cache, its count is unknown: -1, as upstream on error.
    assert!(
        text.contains("apiserver_storage_objects{resource=\"pods\"} -1\n"),
        "{text}"
    );
    let hpa = "apiserver_storage_objects{resource=\"horizontalpodautoscalers.autoscaling\"}";
    assert_eq!(text.matches(hpa).count(), 1);
}

#[test]
fn termination_labels_as_upstream_records_them() {
    let labels = termination_labels(
        &http::Method::DELETE,
        "/apis/apps/v1/namespaces/d/deployments/x",
        Some("dryRun=All"),
        None,
    );
    assert_eq!(
        labels,
        RequestLabels {
            verb: "DELETE".into(),
            dry_run: String::new(),
            group: "apps".into(),
            version: "v1".into(),
            resource: "deployments".into(),
            subresource: String::new(),
            scope: "resource".into(),
            component: "apiserver".into(),
        }
    );
    // A non-resource request: its path in place of the subresource, no scope.
    let labels = termination_labels(&http::Method::HEAD, "/openapi/v2", None, None);
    assert_eq!(
        (
            labels.verb.as_str(),
            labels.subresource.as_str(),
            labels.scope.as_str(),
            labels.resource.as_str()
        ),
        ("GET", "/openapi/v2", "", "")
    );
    let options = http::Method::OPTIONS;
    assert_eq!(
        termination_labels(&options, "/api/v1/pods", None, None).verb,
        "other"
    );
}

#[test]
fn inflight_gauge_and_terminations_follow_the_limiter() {
    use crate::inflight::{Admission, Limiter, Limits};
    let m = Metrics::new();
    let limiter = Limiter::new(Limits {
        max_requests_inflight: 2,
        max_mutating_requests_inflight: 1,
    });
    m.follow_inflight(&limiter);
    let admit = |method: http::Method, path: &str, query: Option<&str>, master: bool| {
        // The adapter's order: the metrics see the request, then the limiter.
        let tracked = classify(&method, path, query, None);
        m.request_started(&tracked);
        (tracked, limiter.admit(&method, path, query, || master))
    };
    let list = "/api/v1/namespaces/d/pods";
    let mut held = Vec::new();
    let mut refused = 0;
    for (method, path, query, master) in [
        (http::Method::GET, list, None, false),
        (http::Method::GET, list, None, false),
        // Over the limit: refused, or served without a place for system:masters.
        (http::Method::GET, list, None, false),
        (http::Method::GET, list, None, false),
        (http::Method::GET, list, None, true),
        // Never counted: a probe, a log, a watch.
        (http::Method::GET, "/readyz", None, false),
        (
            http::Method::GET,
            "/api/v1/namespaces/d/pods/p/log",
            None,
            false,
        ),
        (http::Method::GET, list, Some("watch=1"), false),
        (http::Method::POST, list, None, false),
        (http::Method::POST, list, None, false),
    ] {
        match admit(method, path, query, master) {
            (t, Admission::Admitted(slot)) => held.push((t, slot)),
            (t, Admission::Refused(r)) => {
                refused += 1;
                m.request_finished(&t, r.status().as_u16(), Duration::ZERO);
            }
        }
    }
    assert_eq!(refused, 3);
    let text = m.render(&[]);
    // The limiter's counts: never above the limits, though 9 requests are under way.
    assert!(
        text.contains("apiserver_current_inflight_requests{request_kind=\"readOnly\"} 2\n"),
        "{text}"
    );
    assert!(text.contains("apiserver_current_inflight_requests{request_kind=\"mutating\"} 1\n"));
    let terminated = "apiserver_request_terminations_total{code=\"429\",component=\"apiserver\",group=\"\",resource=\"pods\",scope=\"namespace\",subresource=\"\",verb=\"LIST\",version=\"v1\"} 2\n";
    assert!(text.contains(terminated), "{text}");
    assert!(text.contains("apiserver_request_terminations_total{code=\"429\",component=\"apiserver\",group=\"\",resource=\"pods\",scope=\"resource\",subresource=\"\",verb=\"POST\",version=\"v1\"} 1\n"));
    assert!(text.contains("# HELP apiserver_request_terminations_total [ALPHA] Number of requests which apiserver terminated in self-defense.\n"));
    assert!(text.contains("# TYPE apiserver_request_terminations_total counter\n"));
    // The refused requests are in apiserver_request_total with their 429.
    assert!(text.contains("apiserver_request_total{code=\"429\",component=\"apiserver\",dry_run=\"\",group=\"\",resource=\"pods\",scope=\"namespace\",subresource=\"\",verb=\"LIST\",version=\"v1\"} 2\n"));
    // Once the requests end, the next scrape still shows those in flight since the
    // last one, and the one after shows none.
    for (t, slot) in held.drain(..) {
        drop(slot);
        if !t.is_long_running() {
            m.request_finished(&t, 200, Duration::ZERO);
        }
    }
    assert!(m
        .render(&[])
        .contains("apiserver_current_inflight_requests{request_kind=\"readOnly\"} 2\n"));
    assert!(m
        .render(&[])
        .contains("apiserver_current_inflight_requests{request_kind=\"readOnly\"} 0\n"));
    // Terminations of the server's own (a timeout) join the limiter's.
    let labels = termination_labels(&http::Method::GET, list, None, None);
    m.request_terminated(labels, 504);
    let text = m.render(&[]);
    assert!(text.contains("apiserver_request_terminations_total{code=\"504\",component=\"apiserver\",group=\"\",resource=\"pods\",scope=\"namespace\",subresource=\"\",verb=\"LIST\",version=\"v1\"} 1\n"));
    assert!(text.contains(terminated));
}

#[test]
fn timeouts_are_terminations_with_504() {
    let metrics = Metrics::default();
    let request = http::Request::post("/api/v1/namespaces/default/configmaps?dryRun=All")
        .body(bytes::Bytes::new())
        .unwrap();
    let tracked = classify(
        request.method(),
        request.uri().path(),
        request.uri().query(),
        None,
    );
    metrics.request_timed_out(&tracked);
    let text = metrics.render(&[]);
    let line = text
        .lines()
        .find(|l| l.starts_with("apiserver_request_terminations_total{"))
        .expect(&text);
    assert!(line.contains("code=\"504\""), "{line}");
    assert!(line.contains("resource=\"configmaps\""), "{line}");
    assert!(!line.contains("dry_run"), "{line}");
    assert!(line.ends_with(" 1"), "{line}");
}

#[test]
fn refused_requests_are_counted_but_not_timed() {
    let m = Metrics::default();
    let t = get("/api/v1/namespaces/default/configmaps", None);
    m.request_started(&t);
    m.request_refused(&t, 429);
    let text = m.render(&[]);
    assert!(
        text.lines().any(|l| l.starts_with("apiserver_request_total{")
            && l.contains("code=\"429\"")
            && l.ends_with(" 1")),
        "{text}"
    );
    assert!(
        !text.contains("apiserver_request_duration_seconds_count{"),
        "a refused request is not timed: {text}"
    );
}
