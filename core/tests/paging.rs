//! Paging through 1,000 objects with limit=7 while writes continue returns every object
//! that existed at the first page's revision, exactly once.

mod support;

use serde_json::{json, Value};
use std::collections::BTreeSet;
use support::Harness;

const CMS: &str = "/api/v1/namespaces/default/configmaps";

fn cm(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}})
}

#[test]
fn pages_are_consistent_while_writes_continue() {
    let h = Harness::new();
    let before: BTreeSet<String> = (0..1000).map(|i| format!("cm-{i:04}")).collect();
    for name in &before {
        assert_eq!(h.call("POST", CMS, cm(name)).status, 201);
    }

    let mut seen = Vec::new();
    let mut uri = format!("{CMS}?limit=7");
    let mut first_revision = None;
    let mut page = 0;
    loop {
        let list = h.call("GET", &uri, Value::Null).json();
        let rv = list["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .to_owned();
        assert_eq!(
            first_revision.get_or_insert(rv.clone()),
            &rv,
            "every page is read at the first page's revision"
        );
        let items = list["items"].as_array().unwrap();
        assert!(items.len() <= 7);
        seen.extend(
            items
                .iter()
                .map(|i| i["metadata"]["name"].as_str().unwrap().to_owned()),
        );
        // Writes between pages: new objects, deletions of ones not yet listed and of
        // ones already listed, and updates.
        h.call("POST", CMS, cm(&format!("new-{page:04}")));
        let victim = format!("cm-{:04}", 999 - page);
        h.call("DELETE", &format!("{CMS}/{victim}"), Value::Null);
        if let Some(listed) = seen.first() {
            let mut changed = cm(listed);
            changed["data"] = json!({"page": page.to_string()});
            h.call("PUT", &format!("{CMS}/{listed}"), changed);
        }
        page += 1;
        match list["metadata"]["continue"].as_str() {
            Some(token) => uri = format!("{CMS}?limit=7&continue={token}"),
            None => break,
        }
    }
    assert_eq!(seen.len(), 1000, "each object exactly once");
    assert_eq!(seen.iter().cloned().collect::<BTreeSet<_>>(), before);
}
