//! Server-side apply of a custom resource on the real binary, through kubectl 1.33 and
//! 1.27: two field managers merge a list map (by its key) and a set of the CRD's
//! schema, a conflicting apply is refused as upstream refuses it, and
//! `--force-conflicts` takes the field over.

use apiary_conformance::harness::{ok, widget_crd, Apiary};
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

/// Widgets: a map list of ports keyed by port, and a set of tags.
fn crd() -> String {
    widget_crd(
        "{type: object, properties: {ports: {type: array, x-kubernetes-list-type: map, x-kubernetes-list-map-keys: [port], \
         items: {type: object, required: [port], properties: {port: {type: integer}, name: {type: string}}}}, \
         tags: {type: array, x-kubernetes-list-type: set, items: {type: string}}}}",
    )
}

fn widget(dir: &Path, name: &str, manager: &str, port: u16, port_name: &str, tag: &str) -> String {
    let path = dir.join(format!("{name}-{manager}-{port_name}.yaml"));
    let yaml = format!(
        "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: {name}\nspec:\n  ports:\n  - port: {port}\n    name: {port_name}\n  tags: [{tag}]\n"
    );
    std::fs::write(&path, yaml).unwrap();
    path.to_str().unwrap().to_owned()
}

fn apply(apiary: &Apiary, version: &str, manager: &str, file: &str, force: bool) -> std::process::Output {
    let manager = format!("--field-manager={manager}");
    let mut args = vec!["apply", "--server-side", manager.as_str(), "-f", file];
    if force {
        args.push("--force-conflicts");
    }
    apiary.kubectl(version, &args)
}

fn get(apiary: &Apiary, version: &str, name: &str) -> Value {
    let out = ok(&apiary.kubectl(version, &["get", "widget", name, "-o", "json", "--show-managed-fields"]));
    serde_json::from_str(&out).unwrap()
}

/// `manager/operation` of each managed fields entry.
fn managers(widget: &Value) -> Vec<String> {
    widget["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| format!("{}/{}", e["manager"].as_str().unwrap(), e["operation"].as_str().unwrap()))
        .collect()
}

#[test]
fn kubectl_server_side_apply_merges_a_custom_resource_by_its_schema() {
    let apiary = Apiary::start();
    let dir = &apiary.data_dir;
    let crd_file = dir.join("crd.yaml");
    std::fs::write(&crd_file, crd()).unwrap();
    ok(&apiary.kubectl("1.33", &["apply", "-f", crd_file.to_str().unwrap()]));
    ok(&apiary.kubectl("1.33", &["wait", "--for=condition=Established", "crd/widgets.example.com", "--timeout=30s"]));

    for version in ["1.33", "1.27"] {
        let name = format!("w-{}", version.replace('.', "-"));
        let alice = widget(dir, &name, "alice", 80, "http", "a");
        // Discovery may lag a moment behind in kubectl's cache: retry briefly.
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let out = apply(&apiary, version, "alice", &alice, false);
            if out.status.success() {
                break;
            }
            assert!(Instant::now() < deadline, "{version}: {}", String::from_utf8_lossy(&out.stderr));
            std::thread::sleep(Duration::from_millis(200));
        }
        let out = ok(&apply(&apiary, version, "bob", &widget(dir, &name, "bob", 443, "https", "b"), false));
        assert!(out.contains("serverside-applied"), "{version}: {out}");

        let merged = get(&apiary, version, &name);
        let ports: Vec<(u64, &str)> = merged["spec"]["ports"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p["port"].as_u64().unwrap(), p["name"].as_str().unwrap()))
            .collect();
        assert_eq!(ports, [(80, "http"), (443, "https")], "{version}: the list map merged by port");
        assert_eq!(merged["spec"]["tags"], serde_json::json!(["a", "b"]), "{version}: the set merged");
        assert_eq!(managers(&merged), ["alice/Apply", "bob/Apply"], "{version}");

        // Bob renaming alice's port conflicts, shown as upstream shows it.
        let rename = widget(dir, &name, "bob", 80, "web", "b");
        let out = apply(&apiary, version, "bob", &rename, false);
        assert!(!out.status.success(), "{version}: a conflicting apply fails");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("Apply failed with 1 conflict: conflict with \"alice\": .spec.ports[port=80].name"),
            "{version}: {stderr}"
        );
        assert!(stderr.contains("--force-conflicts"), "{version}: kubectl explains the way out: {stderr}");
        assert_eq!(get(&apiary, version, &name)["spec"]["ports"][0]["name"], "http", "{version}");

        // Forced, bob takes the name; 443, which he no longer applies, goes.
        ok(&apply(&apiary, version, "bob", &rename, true));
        let forced = get(&apiary, version, &name);
        assert_eq!(forced["spec"]["ports"], serde_json::json!([{"port": 80, "name": "web"}]), "{version}");
        let alice_fields = forced["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["manager"] == "alice")
            .map(|e| e["fieldsV1"].clone())
            .unwrap();
        assert_eq!(
            alice_fields["f:spec"]["f:ports"]["k:{\"port\":80}"],
            serde_json::json!({".": {}, "f:port": {}}),
            "{version}: alice keeps the item, not its name"
        );
    }
}
