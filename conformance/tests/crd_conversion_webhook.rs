//! A two-version CRD converted by a webhook written here, on the real binary: kubectl
//! 1.33 and 1.27 create, read and patch its objects in both versions, a kube-rs watch
//! sees them in the version it asked for, the webhook is reached by URL and through a
//! Service's endpoints, and a webhook that is gone is a clear error.

mod https_service;
mod kube_support;

use apiary_conformance::harness::{ok, Apiary};
use apiary_core::harness::{conversion_answer, rename_spec_field};
use base64::Engine;
use futures::{StreamExt, TryStreamExt};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};
use kube::runtime::watcher;
use serde_json::{json, Value};
use std::sync::atomic::Ordering;

/// The converter: widgets call their colour `spec.colour` in v1 and `spec.color` in v2.
fn convert(_path: &str, review: &Value) -> Value {
    conversion_answer(review, |object, desired| {
        let (from, to) = if desired.ends_with("/v2") { ("colour", "color") } else { ("color", "colour") };
        rename_spec_field(object, from, to);
    })
}

/// A CRD of `plural` whose webhook is reached through `client_config` (YAML, indented
/// for its place).
fn crd(plural: &str, kind: &str, client_config: &str) -> String {
    let version = |name: &str, storage: bool, field: &str| {
        format!(
            "  - name: {name}\n    served: true\n    storage: {storage}\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          spec:\n            type: object\n            properties:\n              {field}: {{type: string}}\n"
        )
    };
    format!(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: {plural}.example.com\nspec:\n  group: example.com\n  scope: Namespaced\n  names:\n    plural: {plural}\n    kind: {kind}\n  conversion:\n    strategy: Webhook\n    webhook:\n      conversionReviewVersions: [v1]\n      clientConfig:\n{client_config}  versions:\n{}{}",
        version("v1", false, "colour"),
        version("v2", true, "color"),
    )
}

fn apply(apiary: &Apiary, name: &str, yaml: &str) {
    let path = apiary.data_dir.join(name);
    std::fs::write(&path, yaml).unwrap();
    ok(&apiary.kubectl("1.33", &["apply", "-f", path.to_str().unwrap()]));
}

#[test]
fn a_conversion_webhook_serves_both_versions() {
    let (addr, ca_pem, answered) = https_service::serve(&["127.0.0.1", "converter.default.svc"], convert);
    let ca = base64::engine::general_purpose::STANDARD.encode(&ca_pem);
    let apiary = Apiary::start();
    let by_url = format!("        url: https://{addr}/convert\n        caBundle: {ca}\n");
    apply(&apiary, "widgets.yaml", &crd("widgets", "Widget", &by_url));
    ok(&apiary.kubectl("1.33", &["wait", "--for=condition=Established", "crd/widgets.example.com", "--timeout=30s"]));

    for version in ["1.33", "1.27"] {
        let name = format!("w-{}", version.replace('.', "-"));
        let widget = apiary.data_dir.join(format!("{name}.yaml"));
        std::fs::write(&widget, format!("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: {name}\nspec:\n  colour: red\n")).unwrap();
        apiary.kubectl_until_served(version, &["create", "-f", widget.to_str().unwrap()]);
        let v1 = ok(&apiary.kubectl(version, &["get", "widgets.v1.example.com", &name, "-o", "jsonpath={.apiVersion} {.spec.colour}"]));
        assert_eq!(v1, "example.com/v1 red", "{version}");
        let v2 = ok(&apiary.kubectl(version, &["get", "widgets.v2.example.com", &name, "-o", "jsonpath={.apiVersion} {.spec.color}"]));
        assert_eq!(v2, "example.com/v2 red", "{version}");
        ok(&apiary.kubectl(version, &["patch", "widgets.v1.example.com", &name, "--type=merge", "-p", r#"{"spec":{"colour":"blue"}}"#]));
        let listed = ok(&apiary.kubectl(version, &["get", "widgets.v2.example.com", "-o", "jsonpath={.items[*].spec.color}"]));
        assert!(listed.contains("blue"), "{version}: {listed}");
    }
    assert!(answered.load(Ordering::SeqCst) > 0, "the webhook was asked");

    // A kube-rs watch of v1 sees the objects in v1.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let client = kube_support::client(&apiary).await;
        let gvk = GroupVersionKind::gvk("example.com", "v1", "Widget");
        let api: Api<DynamicObject> = Api::namespaced_with(client, "default", &ApiResource::from_gvk(&gvk));
        let seen = watcher(api, watcher::Config::default())
            .try_filter_map(|event| async move {
                Ok(match event {
                    watcher::Event::InitApply(o) | watcher::Event::Apply(o) => Some(o),
                    _ => None,
                })
            })
            .take(2)
            .try_collect::<Vec<_>>();
        let seen = tokio::time::timeout(std::time::Duration::from_secs(20), seen).await.expect("the watch delivers").unwrap();
        for o in seen {
            assert_eq!(o.data["spec"], json!({"colour": "blue"}), "{:?}", o.metadata.name);
        }
    });

    // Through a Service: an ExternalName one, since endpoints may not be loopback
    // addresses; its certificate checked for the Service's in-cluster name.
    let port = addr.rsplit(':').next().unwrap();
    apply(
        &apiary,
        "service.yaml",
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: converter\nspec:\n  type: ExternalName\n  externalName: 127.0.0.1\n",
    );
    let by_service = format!("        service:\n          namespace: default\n          name: converter\n          path: /convert\n          port: {port}\n        caBundle: {ca}\n");
    apply(&apiary, "gadgets.yaml", &crd("gadgets", "Gadget", &by_service));
    ok(&apiary.kubectl("1.33", &["wait", "--for=condition=Established", "crd/gadgets.example.com", "--timeout=30s"]));
    let gadget = apiary.data_dir.join("gadget.yaml");
    std::fs::write(&gadget, "apiVersion: example.com/v1\nkind: Gadget\nmetadata:\n  name: g\nspec:\n  colour: green\n").unwrap();
    apiary.kubectl_until_served("1.33", &["create", "-f", gadget.to_str().unwrap()]);
    let v2 = ok(&apiary.kubectl("1.33", &["get", "gadgets.v2.example.com", "g", "-o", "jsonpath={.spec.color}"]));
    assert_eq!(v2, "green");

    // A webhook that is gone: reads of the other version fail with upstream's words;
    // the storage version is still served.
    // (The Service now routes by endpoints, and has none.)
    apply(
        &apiary,
        "service.yaml",
        &format!("apiVersion: v1\nkind: Service\nmetadata:\n  name: converter\nspec:\n  ports:\n  - name: https\n    port: {port}\n"),
    );
    let failed = apiary.kubectl("1.33", &["get", "gadgets.v1.example.com", "g"]);
    assert!(!failed.status.success());
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert!(
        stderr.contains(r#"conversion webhook for example.com/v2, Kind=Gadget failed: no endpoints available for service "converter""#),
        "{stderr}"
    );
    assert_eq!(ok(&apiary.kubectl("1.33", &["get", "gadgets.v2.example.com", "g", "-o", "jsonpath={.spec.color}"])), "green");
}
