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
        entropy: [0; 32],
        peer_certificates: Vec::new(),
        remote_addr: None,
    };
    // Anonymous clients are refused, as on every non-public path.
    let crate::Step::Respond(r) = server.handle(request.clone(), inputs.clone()) else {
        panic!("metrics answer at once")
    };
    assert_eq!(r.status(), 401);
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
