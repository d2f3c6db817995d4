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

use apiary_conformance::harness::{eventually, ok, widget_crd, Apiary};
use apiary_conformance::kubectl_watch::Watcher;
use std::path::Path;

const APISERVICE: &str = "v1.example.com";

fn available(apiary: &Apiary) -> String {
    let out = apiary.kubectl("1.33", &["get", "apiservice", APISERVICE, "-o", "jsonpath={.status.conditions[?(@.type==\"Available\")].status}"]);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The front, and the extension behind it serving the widget CRD's group.
struct Chain {
    front: Apiary,
    extension: Apiary,
    extension_dir: tempfile::TempDir,
    extension_args: Vec<String>,
}

impl Chain {
    /// Both started, the extension registered on the front and Available.
    fn start() -> Chain {
        let front = Apiary::start_with(&["--storage", "memory"]);
        let ca = front.data_dir.join("pki").join("front-proxy-ca.crt");
        let port = free_port();
        let extension_dir = tempfile::tempdir().unwrap();
        let extension_args: Vec<String> = [
            "--secure-port",
            &port.to_string(),
            "--requestheader-client-ca-file",
            ca.to_str().unwrap(),
            "--requestheader-allowed-names=front-proxy-client",
            "--requestheader-username-headers=X-Remote-User",
            "--requestheader-group-headers=X-Remote-Group",
            "--requestheader-extra-headers-prefix=X-Remote-Extra-",
        ]
        .map(str::to_owned)
        .to_vec();
        let extension = start_extension(extension_dir.path(), &extension_args);
        ok(&extension.kubectl_with_input("1.33", &["apply", "-f", "-"], &widget_crd("{type: object, x-kubernetes-preserve-unknown-fields: true}")));
        extension.kubectl_until_served("1.33", &["get", "widgets"]);

        // The extension's group on the front: an ExternalName Service (endpoints may
        // not be loopback addresses) and an APIService; the extension's serving
        // certificate names 127.0.0.1, not the Service, so it is not verified.
        let objects = format!(
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: extension\n  namespace: default\nspec:\n  type: ExternalName\n  externalName: 127.0.0.1\n---\n\
             apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata:\n  name: {APISERVICE}\nspec:\n  group: example.com\n  version: v1\n  \
             groupPriorityMinimum: 1000\n  versionPriority: 15\n  insecureSkipTLSVerify: true\n  service:\n    namespace: default\n    name: extension\n    port: {port}\n"
        );
        ok(&front.kubectl_with_input("1.33", &["apply", "-f", "-"], &objects));
        eventually("the APIService to be Available", || available(&front) == "True");
        Chain { front, extension, extension_dir, extension_args }
    }
}

fn start_extension(dir: &Path, args: &[String]) -> Apiary {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    Apiary::start_in(dir, &args)
}

#[test]
fn an_apiary_serves_a_group_behind_another() {
    let Chain { front, mut extension, extension_dir, extension_args } = Chain::start();

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
    extension.stop();
    eventually("the APIService to be unavailable", || available(&front) == "False");
    let gone = front.kubectl("1.33", &["get", "--raw", "/apis/example.com/v1/namespaces/default/widgets"]);
    assert!(!gone.status.success());
    let said = String::from_utf8_lossy(&gone.stderr);
    assert!(said.contains("503") || said.contains("service unavailable") || said.contains("ServiceUnavailable"), "{said}");
    let _extension = start_extension(extension_dir.path(), &extension_args);
    eventually("the APIService to be Available again", || available(&front) == "True");
    assert!(ok(&front.kubectl("1.33", &["get", "widgets"])).contains("sprocket"));
}

#[test]
fn watches_through_the_front_see_the_extensions_events_as_they_happen() {
    let chain = Chain::start();
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
