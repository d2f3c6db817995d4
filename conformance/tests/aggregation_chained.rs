//! Two Apiaries chained, as an extension API server behind kube-apiserver: the
//! extension serves a CRD's group, the front registers it by an APIService; kubectl
//! against the front applies and reads the extension's objects through it. The
//! extension trusts the front's generated front-proxy certificate
//! (`--requestheader-client-ca-file`) and acts as the user the front names in
//! `X-Remote-User`: a user the front lets through but the extension does not is
//! refused there, by name. Stopped, the group answers 503; restarted, it is back.

use apiary_conformance::harness::{eventually, ok, widget_crd, Apiary};

const APISERVICE: &str = "v1.example.com";

fn available(apiary: &Apiary) -> String {
    let out = apiary.kubectl("1.33", &["get", "apiservice", APISERVICE, "-o", "jsonpath={.status.conditions[?(@.type==\"Available\")].status}"]);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[test]
fn an_apiary_serves_a_group_behind_another() {
    let front = Apiary::start_with(&["--storage", "memory"]);
    let ca = front.data_dir.join("pki").join("front-proxy-ca.crt");
    let ca = ca.to_str().unwrap().to_owned();
    let port = free_port().to_string();
    let extension_dir = tempfile::tempdir().unwrap();
    let extension_args = [
        "--secure-port",
        port.as_str(),
        "--requestheader-client-ca-file",
        ca.as_str(),
        "--requestheader-allowed-names=front-proxy-client",
        "--requestheader-username-headers=X-Remote-User",
        "--requestheader-group-headers=X-Remote-Group",
        "--requestheader-extra-headers-prefix=X-Remote-Extra-",
    ];
    let mut extension = Apiary::start_in(extension_dir.path(), &extension_args);
    ok(&extension.kubectl_with_input("1.33", &["apply", "-f", "-"], &widget_crd("{type: object, x-kubernetes-preserve-unknown-fields: true}")));
    extension.kubectl_until_served("1.33", &["get", "widgets"]);

    // The extension's group on the front: an ExternalName Service (endpoints may not
    // be loopback addresses) and an APIService; the extension's serving certificate
    // names 127.0.0.1, not the Service, so it is not verified.
    let objects = format!(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: extension\n  namespace: default\nspec:\n  type: ExternalName\n  externalName: 127.0.0.1\n---\n\
         apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata:\n  name: {APISERVICE}\nspec:\n  group: example.com\n  version: v1\n  \
         groupPriorityMinimum: 1000\n  versionPriority: 15\n  insecureSkipTLSVerify: true\n  service:\n    namespace: default\n    name: extension\n    port: {port}\n"
    );
    ok(&front.kubectl_with_input("1.33", &["apply", "-f", "-"], &objects));
    eventually("the APIService to be Available", || available(&front) == "True");

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
    let _extension = Apiary::start_in(extension_dir.path(), &extension_args);
    eventually("the APIService to be Available again", || available(&front) == "True");
    assert!(ok(&front.kubectl("1.33", &["get", "widgets"])).contains("sprocket"));
}
