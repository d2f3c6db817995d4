//! Label and field selectors through the whole server over the memory backend: LIST
//! (plain, paged, as a Table) and deletecollection keep only what the selectors
//! match, and a bad selector is a 400 Status worded as kube-apiserver words it.

mod support;

use apiary_core::storage::StorageOp;
use apiary_core::Step;
use bytes::Bytes;
use serde_json::{json, Value};
use support::Harness;

const CMS: &str = "/api/v1/namespaces/default/configmaps";

/// A query value percent-encoded as a client encodes it.
fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            b' ' => "+".to_owned(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn cm(name: &str, labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels}})
}

fn create(h: &Harness, uri: &str, body: Value) {
    let r = h.call("POST", uri, body);
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
}

fn names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .unwrap_or_else(|| panic!("no items: {list}"))
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap().to_owned())
        .collect()
}

/// The names a LIST of `uri` with `query` returns.
fn listed(h: &Harness, uri: &str, query: &str) -> Vec<String> {
    let r = h.call("GET", &format!("{uri}?{query}"), Value::Null);
    assert_eq!(
        r.status,
        200,
        "{query}: {}",
        String::from_utf8_lossy(&r.body)
    );
    names(&r.json())
}

fn labelled(h: &Harness) {
    create(h, CMS, cm("a", json!({"app": "x", "env": "a"})));
    create(
        h,
        CMS,
        cm("b", json!({"app": "x", "env": "b", "tier": "front"})),
    );
    create(h, CMS, cm("c", json!({"app": "y", "env": "c", "n": "10"})));
    create(h, CMS, cm("d", json!({})));
}

#[test]
fn label_selectors_on_list() {
    let h = Harness::new();
    labelled(&h);
    let cases: &[(&str, &[&str])] = &[
        ("", &["a", "b", "c", "d"]),
        ("app=x", &["a", "b"]),
        ("app==x", &["a", "b"]),
        ("app!=x", &["c", "d"]),
        ("env in (a,b)", &["a", "b"]),
        ("env notin (a,b)", &["c", "d"]),
        ("tier", &["b"]),
        ("!tier", &["a", "c", "d"]),
        ("app=x,env!=a", &["b"]),
        ("app in (x, y), !tier", &["a", "c"]),
        ("n>9", &["c"]),
        ("n<10", &[]),
    ];
    for (selector, want) in cases {
        let got = listed(&h, CMS, &format!("labelSelector={}", enc(selector)));
        assert_eq!(got, *want, "labelSelector={selector}");
    }
    // Across namespaces too.
    create(
        &h,
        "/api/v1/namespaces",
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}}),
    );
    create(
        &h,
        "/api/v1/namespaces/other/configmaps",
        cm("e", json!({"app": "x"})),
    );
    assert_eq!(
        listed(&h, "/api/v1/configmaps", "labelSelector=app%3Dx"),
        ["a", "b", "e"]
    );
}

#[test]
fn field_selectors_on_list() {
    let h = Harness::new();
    labelled(&h);
    create(
        &h,
        "/api/v1/namespaces",
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}}),
    );
    create(
        &h,
        "/api/v1/namespaces/other/configmaps",
        cm("b", json!({})),
    );
    assert_eq!(listed(&h, CMS, "fieldSelector=metadata.name%3Db"), ["b"]);
    assert_eq!(listed(&h, CMS, "fieldSelector=metadata.name%3D%3Db"), ["b"]);
    assert_eq!(
        listed(&h, CMS, "fieldSelector=metadata.name!%3Db"),
        ["a", "c", "d"]
    );
    let all = "/api/v1/configmaps";
    assert_eq!(listed(&h, all, "fieldSelector=metadata.name%3Db").len(), 2);
    assert_eq!(
        listed(&h, all, "fieldSelector=metadata.namespace%3Dother"),
        ["b"]
    );
    assert_eq!(
        listed(
            &h,
            all,
            &format!(
                "fieldSelector={}",
                enc("metadata.namespace!=other,metadata.name!=a")
            )
        ),
        ["b", "c", "d"]
    );
    // Labels and fields together.
    assert_eq!(
        listed(
            &h,
            all,
            &format!(
                "labelSelector={}&fieldSelector={}",
                enc("app"),
                enc("metadata.name!=a")
            )
        ),
        ["b", "c"]
    );
    // A value with an escaped comma is one value, not two terms.
    assert!(listed(
        &h,
        CMS,
        &format!("fieldSelector={}", enc(r"metadata.name=a\,b"))
    )
    .is_empty());
}

fn pod(name: &str, node: &str, phase: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"nodeName": node, "restartPolicy": "Never",
                 "containers": [{"name": "c", "image": "busybox"}]},
        "status": {"phase": phase},
    })
}

#[test]
fn pod_fields() {
    let h = Harness::new();
    let pods = "/api/v1/namespaces/default/pods";
    create(&h, pods, pod("p1", "n1", "Running"));
    create(&h, pods, pod("p2", "n2", "Running"));
    create(&h, pods, pod("p3", "n1", "Pending"));
    assert_eq!(
        listed(&h, pods, "fieldSelector=spec.nodeName%3Dn1"),
        ["p1", "p3"]
    );
    assert_eq!(listed(&h, pods, "fieldSelector=spec.host%3Dn2"), ["p2"]);
    assert_eq!(
        listed(&h, pods, "fieldSelector=spec.nodeName!%3Dn1"),
        ["p2"]
    );
    assert_eq!(
        listed(&h, pods, "fieldSelector=spec.restartPolicy%3DNever").len(),
        3
    );
    assert_eq!(
        listed(&h, pods, "fieldSelector=spec.hostNetwork%3Dfalse").len(),
        3
    );
    assert_eq!(
        listed(&h, "/api/v1/pods", "fieldSelector=spec.nodeName%3D"),
        Vec::<String>::new()
    );
}

fn bad_request(h: &Harness, uri: &str, message: &str) {
    let r = h.call("GET", uri, Value::Null);
    assert_eq!(r.status, 400, "{uri}");
    assert_eq!(
        r.json(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": message, "reason": "BadRequest", "code": 400}),
        "{uri}"
    );
}

#[test]
fn bad_selectors_are_400_with_upstream_messages() {
    let h = Harness::new();
    bad_request(
        &h,
        "/api/v1/namespaces/default/pods?fieldSelector=spec.bogus%3D1",
        "field label not supported: spec.bogus",
    );
    bad_request(
        &h,
        &format!("{CMS}?fieldSelector=spec.bogus%3D1"),
        r#""spec.bogus" is not a known field selector: only "metadata.name", "metadata.namespace""#,
    );
    bad_request(
        &h,
        "/apis/apps/v1/replicasets?fieldSelector=status.replicas%3D1",
        r#""status.replicas" is not a known field selector: only "metadata.name", "metadata.namespace""#,
    );
    bad_request(
        &h,
        "/apis/batch/v1/jobs?fieldSelector=status.succeeded%3D1",
        r#"field label "status.succeeded" not supported for Job"#,
    );
    bad_request(
        &h,
        "/api/v1/nodes?fieldSelector=metadata.namespace%3Dx",
        "field label not supported: metadata.namespace",
    );
    bad_request(
        &h,
        &format!("{CMS}?fieldSelector=a"),
        "invalid selector: 'a'; can't understand 'a'",
    );
    bad_request(
        &h,
        &format!("{CMS}?fieldSelector={}", enc(r"metadata.name=\q")),
        r"invalid field selector: invalid escape sequence: \q",
    );
    bad_request(
        &h,
        &format!("{CMS}?labelSelector={}", enc("app x")),
        "unable to parse requirement: found 'x', expected: in, notin, =, ==, !=, gt, lt",
    );
    bad_request(
        &h,
        &format!("{CMS}?labelSelector={}", enc("app in (a")),
        "unable to parse requirement: found '', expected: ',' or ')'",
    );
    bad_request(
        &h,
        &format!("{CMS}?labelSelector={}", enc("a,")),
        "found '', expected: identifier after ','",
    );
    bad_request(
        &h,
        &format!("{CMS}?labelSelector={}", enc("app=a b")),
        "found 'b', expected: ',' or 'end of string'",
    );
    bad_request(
        &h,
        &format!("{CMS}?labelSelector={}", enc("-app")),
        "unable to parse requirement: <nil>: Invalid value: \"-app\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    );
    bad_request(
        &h,
        &format!("{CMS}?labelSelector={}", enc("app=a/b")),
        "unable to parse requirement: values[0][app]: Invalid value: \"a/b\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    );
    // The label selector is read before the field selector.
    bad_request(
        &h,
        &format!("{CMS}?labelSelector={}&fieldSelector=bad", enc("a b")),
        "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt",
    );
    // A Table request gets the Status, not a Table.
    let r = h.send(
        "GET",
        "/api/v1/namespaces/default/pods?fieldSelector=spec.bogus%3D1",
        &[(
            "accept",
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
        )],
        "",
    );
    assert_eq!((r.status, r.json()["kind"].as_str()), (400, Some("Status")));
}

/// Follow the continue tokens of a LIST from `query` with `limit`; returns the pages.
fn follow(h: &Harness, query: &str, limit: usize) -> Vec<Value> {
    let mut pages = Vec::new();
    let mut uri = format!("{CMS}?limit={limit}&{query}");
    loop {
        let r = h.call("GET", &uri, Value::Null);
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        let page = r.json();
        let token = page["metadata"]["continue"].as_str().map(str::to_owned);
        pages.push(page);
        match token {
            Some(token) => uri = format!("{CMS}?limit={limit}&{query}&continue={token}"),
            None => return pages,
        }
        assert!(pages.len() < 100, "paging does not end");
    }
}

#[test]
fn paging_with_a_selector_fills_pages_with_matches() {
    let h = Harness::new();
    let mut want = Vec::new();
    for i in 0..30 {
        let name = format!("c{i:02}");
        let labels = if i % 4 == 1 {
            want.push(name.clone());
            json!({"pick": "yes"})
        } else {
            json!({"pick": "no"})
        };
        create(&h, CMS, cm(&name, labels));
    }
    assert_eq!(want.len(), 8);

    let pages = follow(&h, "labelSelector=pick%3Dyes", 3);
    let sizes: Vec<usize> = pages
        .iter()
        .map(|p| p["items"].as_array().unwrap().len())
        .collect();
    assert_eq!(sizes, [3, 3, 2], "every page but the last is full");
    let seen: Vec<String> = pages.iter().flat_map(names).collect();
    assert_eq!(seen, want);
    let rv = &pages[0]["metadata"]["resourceVersion"];
    for p in &pages {
        assert!(p["metadata"].get("remainingItemCount").is_none(), "{p}");
        assert_eq!(
            &p["metadata"]["resourceVersion"], rv,
            "every page is read at the first page's revision"
        );
    }

    // A field selector pages the same way; the last match ends the list exactly.
    let pages_by_name = follow(
        &h,
        &format!("fieldSelector={}", enc("metadata.name!=c29")),
        29,
    );
    assert_eq!(
        pages_by_name.len(),
        2,
        "the 29th match fills the page; the token leads to an empty one"
    );
    assert!(pages_by_name[1]["items"].as_array().unwrap().is_empty());

    // Matches spread thinly: one page, after several storage steps.
    let sparse = follow(
        &h,
        &format!("fieldSelector={}", enc("metadata.name=c29")),
        1,
    );
    assert_eq!(sparse.len(), 1);
    assert_eq!(names(&sparse[0]), ["c29"]);

    // Without a selector the count of what remains is still given.
    let first = h
        .call("GET", &format!("{CMS}?limit=10"), Value::Null)
        .json();
    assert_eq!(first["metadata"]["remainingItemCount"], 20);
    // An empty selector is no selector.
    let first = h
        .call(
            "GET",
            &format!("{CMS}?limit=10&labelSelector=&fieldSelector="),
            Value::Null,
        )
        .json();
    assert_eq!(first["metadata"]["remainingItemCount"], 20);
}

#[test]
fn a_page_is_read_at_one_revision_while_writes_continue() {
    let h = Harness::new();
    for i in 0..10 {
        create(
            &h,
            CMS,
            cm(&format!("c{i}"), json!({"pick": (i % 2).to_string()})),
        );
    }
    let first = h
        .call(
            "GET",
            &format!("{CMS}?limit=2&labelSelector=pick%3D1"),
            Value::Null,
        )
        .json();
    assert_eq!(names(&first), ["c1", "c3"]);
    // Written after the first page: not part of this list.
    create(&h, CMS, cm("c4x", json!({"pick": "1"})));
    let token = first["metadata"]["continue"].as_str().unwrap();
    let rest = h
        .call(
            "GET",
            &format!("{CMS}?limit=10&labelSelector=pick%3D1&continue={token}"),
            Value::Null,
        )
        .json();
    assert_eq!(names(&rest), ["c5", "c7", "c9"]);
    assert_eq!(
        rest["metadata"]["resourceVersion"],
        first["metadata"]["resourceVersion"]
    );
}

/// Drive one request, recording the storage operations it asks for.
fn storage_ops(h: &Harness, uri: &str) -> (u16, Vec<StorageOp>) {
    let req = http::Request::builder()
        .method("GET")
        .uri(uri)
        .body(Bytes::new())
        .unwrap();
    let mut step = h.server.handle_as_system(req, h.inputs());
    let mut ops = Vec::new();
    loop {
        step = match step {
            Step::Respond(r) => return (r.status().as_u16(), ops),
            Step::Storage(op, pending) => {
                ops.push(op.clone());
                pending.resume(h.store.apply(op))
            }
            Step::Watch(..) | Step::Call(..) | Step::Calls(..) | Step::Relay(..) => panic!("a list neither watches nor calls out"),
        }
    }
}

#[test]
fn a_selective_page_reads_on_with_a_growing_step() {
    let h = Harness::new();
    for i in 0..20 {
        create(&h, CMS, cm(&format!("c{i:02}"), json!({})));
    }
    let (status, ops) = storage_ops(
        &h,
        &format!("{CMS}?limit=2&fieldSelector=metadata.name%3Dc19"),
    );
    assert_eq!(status, 200);
    let limits: Vec<Option<usize>> = ops
        .iter()
        .filter_map(|op| match op {
            StorageOp::List { limit, .. } => Some(*limit),
            _ => None,
        })
        .collect();
    assert_eq!(limits, [Some(2), Some(4), Some(8), Some(16)]);
    let revisions: Vec<Option<u64>> = ops
        .iter()
        .filter_map(|op| match op {
            StorageOp::List { revision, .. } => Some(*revision),
            _ => None,
        })
        .collect();
    assert!(
        revisions[0].is_none()
            && revisions[1..]
                .iter()
                .all(|r| *r == revisions[1] && r.is_some())
    );
}

#[test]
fn tables_get_the_filtered_rows() {
    let h = Harness::new();
    labelled(&h);
    let accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
    let r = h.send(
        "GET",
        &format!("{CMS}?labelSelector=app%3Dx"),
        &[("accept", accept)],
        "",
    );
    assert_eq!(r.status, 200);
    let table = r.json();
    assert_eq!(table["kind"], "Table");
    let rows: Vec<&str> = table["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["cells"][0].as_str().unwrap())
        .collect();
    assert_eq!(rows, ["a", "b"]);
}

#[test]
fn deletecollection_deletes_only_matches() {
    let h = Harness::new();
    labelled(&h);
    let r = h.call(
        "DELETE",
        &format!("{CMS}?labelSelector=app%3Dx"),
        Value::Null,
    );
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let deleted = r.json();
    assert_eq!(deleted["kind"], "ConfigMapList");
    assert_eq!(names(&deleted), ["a", "b"]);
    assert_eq!(listed(&h, CMS, ""), ["c", "d"]);

    let r = h.call(
        "DELETE",
        &format!("{CMS}?fieldSelector=metadata.name%3Dd"),
        Value::Null,
    );
    assert_eq!(names(&r.json()), ["d"]);
    assert_eq!(listed(&h, CMS, ""), ["c"]);

    // A bad selector deletes nothing.
    let r = h.call(
        "DELETE",
        &format!("{CMS}?fieldSelector=data.k%3Dv"),
        Value::Null,
    );
    assert_eq!(r.status, 400);
    assert_eq!(
        r.message(),
        r#""data.k" is not a known field selector: only "metadata.name", "metadata.namespace""#
    );
    let r = h.call("DELETE", &format!("{CMS}?labelSelector=%21"), Value::Null);
    assert_eq!(r.status, 400);
    assert_eq!(
        r.message(),
        "unable to parse requirement: found '', expected: identifier"
    );
    assert_eq!(listed(&h, CMS, ""), ["c"]);

    // No selector: everything.
    let r = h.call("DELETE", CMS, Value::Null);
    assert_eq!(names(&r.json()), ["c"]);
    assert!(listed(&h, CMS, "").is_empty());
}
