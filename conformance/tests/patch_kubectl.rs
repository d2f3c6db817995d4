//! kubectl patch --type=merge and --type=json against the real binary, 1.33 and 1.27.

use apiary_conformance::harness::{ok, Apiary};

#[test]
fn kubectl_patch_with_merge_and_json_patches() {
    let apiary = Apiary::start();
    for version in ["1.33", "1.27"] {
        let name = format!("patched-{}", version.replace('.', "-"));
        ok(&apiary.kubectl(version, &["create", "configmap", &name, "--from-literal=k=v", "--from-literal=gone=x"]));
        ok(&apiary.kubectl(
            version,
            &["patch", "configmap", &name, "--type=merge", "-p", r#"{"data":{"k":"w","gone":null}}"#],
        ));
        ok(&apiary.kubectl(
            version,
            &["patch", "configmap", &name, "--type=json", "-p", r#"[{"op":"add","path":"/data/n","value":"1"}]"#],
        ));
        let data = ok(&apiary.kubectl(version, &["get", "configmap", &name, "-o", "jsonpath={.data}"]));
        let data: serde_json::Value = serde_json::from_str(&data).unwrap();
        assert_eq!(data, serde_json::json!({"k": "w", "n": "1"}));
        // A failing test operation: kubectl reports the server's refusal.
        let out = apiary.kubectl(
            version,
            &["patch", "configmap", &name, "--type=json", "-p", r#"[{"op":"test","path":"/data/k","value":"nope"}]"#],
        );
        assert!(!out.status.success());
        assert!(String::from_utf8_lossy(&out.stderr).contains("testing value /data/k failed"));
    }
}
