//! Two Apiaries chained, as an extension API server behind kube-apiserver: the
//! extension serves a CRD's group, the front registers it by an APIService; kubectl
//! against the front applies and reads the extension's objects through it. The
//! extension trusts the front's generated front-proxy certificate
//! (`--requestheader-client-ca-file`) and acts as the user the front names in
//! `X-Remote-User`: a user the front lets through but the extension does not is
//! refused there, by name. Stopped, the group answers 503; restarted, it is back.
//! Watches through the front see the extension's events as they happen: kubectl
//! (HTTP/2 to the front) and kube-rs (HTTP/1.1).

mod limits_support;

use apiary_conformance::chained::Chained;
use apiary_conformance::harness::{eventually, ok};
use apiary_conformance::kubectl_watch::Watcher;

#[test]
fn an_apiary_serves_a_group_behind_another() {
    let mut chained = Chained::start();
    let (front, extension) = (&chained.front, &chained.extension);

    // Applied and read through the front; stored by the extension.
    let widget = "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: sprocket\n  namespace: default\nspec:\n  size: 3\n";
    let applied = ok(&front.kubectl_with_input("1.33", &["apply", "-f", "-"], widget));
    assert!(applied.contains("widget.example.com/sprocket created"), "{applied}");
    assert!(front.kubectl_until_served("1.33", &["get", "widgets"]).contains("sprocket"));
    let stored = ok(&extension.kubectl("1.33", &["get", "widget", "sprocket", "-o", "jsonpath={.spec.size}"]));
    assert_eq!(stored, "3");
    // The admin's apply reached the extension as the admin (system:masters there).
    let again = ok(&front.kubectl_with_input("1.33", &["apply", "-f", "-"], widget));
    assert!(again.contains("unchanged"), "{again}");

    // alice may read widgets on the front, not on the extension: refused there, by name.
    for args in [
        &["create", "clusterrole", "widget-reader", "--verb=get,list", "--resource=widgets.example.com"][..],
        &["create", "clusterrolebinding", "widget-reader", "--clusterrole=widget-reader", "--user=alice"],
    ] {
        ok(&front.kubectl("1.33", args));
    }
    let refused = front.kubectl("1.33", &["--as=alice", "get", "widgets"]);
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("User \"alice\" cannot list resource \"widgets\""), "{said}");
    for args in [
        &["create", "clusterrole", "widget-reader", "--verb=get,list", "--resource=widgets.example.com"][..],
        &["create", "clusterrolebinding", "widget-reader", "--clusterrole=widget-reader", "--user=alice"],
    ] {
        ok(&extension.kubectl("1.33", args));
    }
    let allowed = ok(&front.kubectl("1.33", &["--as=alice", "get", "widgets"]));
    assert!(allowed.contains("sprocket"), "{allowed}");

    // Stopped: unavailable and 503 through the front; restarted (sqlite keeps the
    // widget): back.
    chained.extension.stop();
    eventually("the APIService to be unavailable", || chained.available() == "False");
    let gone = chained.front.kubectl("1.33", &["get", "--raw", "/apis/example.com/v1/namespaces/default/widgets"]);
    assert!(!gone.status.success());
    let said = String::from_utf8_lossy(&gone.stderr);
    assert!(said.contains("503") || said.contains("service unavailable") || said.contains("ServiceUnavailable"), "{said}");
    chained.restart_extension();
    eventually("the APIService to be Available again", || chained.available() == "True");
    assert!(ok(&chained.front.kubectl("1.33", &["get", "widgets"])).contains("sprocket"));
}

#[test]
fn watches_through_the_front_see_the_extensions_events_as_they_happen() {
    let chain = Chained::start();
    let front = &chain.front;
    let widget = |name: &str| format!("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: {name}\n  namespace: default\nspec:\n  size: 1\n");
    // kubectl 1.33 and 1.27 speak HTTP/2 to the front; the front's proxy speaks
    // HTTP/1.1 to the extension. A watch answered whole would show nothing until the
    // proxy's 60 s timeout.
    for (version, name) in [("1.33", "first"), ("1.27", "second")] {
        let mut watcher = Watcher::start(front, version, &["get", "widgets", "-w", "--output-watch-events", "--request-timeout=0"]);
        // A marker made on the extension itself, once printed, shows the stream is
        // live before the changes that count.
        let marker = format!("{name}-marker");
        ok(&chain.extension.kubectl_with_input("1.33", &["apply", "-f", "-"], &widget(&marker)));
        watcher.wait_for(&format!("ADDED {marker}"), |row| row[0] == "ADDED" && row.get(1) == Some(&marker));
        ok(&front.kubectl_with_input(version, &["apply", "-f", "-"], &widget(name)));
        ok(&front.kubectl(version, &["delete", "widget", name]));
        watcher.wait_for(&format!("DELETED {name}"), |row| row[0] == "DELETED" && row.get(1).is_some_and(|n| n == name));
        let printed = watcher.stop();
        let events: Vec<(&str, &str)> = printed
            .iter()
            .filter(|row| row.get(1).is_some_and(|n| n == name))
            .map(|row| (row[0].as_str(), row[1].as_str()))
            .collect();
        assert_eq!(events.first(), Some(&("ADDED", name)), "kubectl {version}: {printed:?}");
        assert_eq!(events.last(), Some(&("DELETED", name)), "kubectl {version}: {printed:?}");
    }

    // kube-rs (HTTP/1.1 to the front): a watch sees an object made on the extension.
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        use futures::StreamExt as _;
        use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, WatchEvent, WatchParams};
        let client = limits_support::admin_client(front).await;
        let resource = ApiResource::from_gvk(&GroupVersionKind::gvk("example.com", "v1", "Widget"));
        let widgets: Api<DynamicObject> = Api::namespaced_with(client, "default", &resource);
        let list = widgets.list(&Default::default()).await.expect("a list through the front");
        let version = list.metadata.resource_version.expect("the list's resourceVersion");
        let mut stream = widgets.watch(&WatchParams::default().timeout(60), &version).await.expect("a watch through the front").boxed();
        ok(&chain.extension.kubectl_with_input("1.33", &["apply", "-f", "-"], &widget("third")));
        let event = tokio::time::timeout(std::time::Duration::from_secs(30), stream.next())
            .await
            .expect("an event within 30 s")
            .expect("the stream goes on")
            .expect("a well-formed event");
        match event {
            WatchEvent::Added(object) => assert_eq!(object.metadata.name.as_deref(), Some("third")),
            other => panic!("expected ADDED third, got {other:?}"),
        }
    });
}
