//! Upstream's validation on the real binary, as kubectl 1.33 and 1.27 show it: an
//! invalid ConfigMap or Secret is refused with kube-apiserver's message, so is an edit
//! of an immutable ConfigMap's data; a Secret's `stringData` is stored in `data`; an
//! EndpointSlice naming a loopback address, a PersistentVolume with two sources and an
//! edit of a volume's source are refused in upstream's words. And
//! two small answers: a PUT on a collection is go-restful's 405, and a body over
//! `--max-request-body-bytes` sent whole before the client reads gets its 413, not a
//! reset.

mod raw_tls;

use apiary_conformance::harness::{ok, Apiary};
use std::process::Output;

fn refused(out: &Output) -> String {
    assert!(!out.status.success(), "accepted: {}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn kubectl_shows_upstreams_refusals() {
    let apiary = Apiary::start();
    for version in ["1.33", "1.27"] {
        let tag = version.replace('.', "-");
        let bad = apiary.data_dir.join(format!("bad-{tag}.yaml"));
        std::fs::write(
            &bad,
            format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad-{tag}\n  labels: {{k: 'bad value!'}}\ndata:\n  ..: x\n"),
        )
        .unwrap();
        let stderr = refused(&apiary.kubectl(version, &["create", "-f", bad.to_str().unwrap()]));
        assert!(
            stderr.contains(&format!("ConfigMap \"bad-{tag}\" is invalid: ")),
            "{version}: {stderr}"
        );
        assert!(stderr.contains("metadata.labels: Invalid value: \"bad value!\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"), "{version}: {stderr}");
        assert!(stderr.contains("data[..]: Invalid value: \"..\": must not be '..'"), "{version}: {stderr}");

        let stderr = refused(&apiary.kubectl(
            version,
            &["create", "secret", "generic", &format!("auth-{tag}"), "--type=kubernetes.io/basic-auth", "--from-literal=other=x"],
        ));
        assert!(
            stderr.contains(&format!("Secret \"auth-{tag}\" is invalid: [data[username]: Required value, data[password]: Required value]")),
            "{version}: {stderr}"
        );

        let frozen = format!("frozen-{tag}");
        let spec = apiary.data_dir.join(format!("{frozen}.yaml"));
        std::fs::write(&spec, format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {frozen}\nimmutable: true\ndata:\n  k: v\n")).unwrap();
        ok(&apiary.kubectl(version, &["create", "-f", spec.to_str().unwrap()]));
        let stderr = refused(&apiary.kubectl(version, &["patch", "configmap", &frozen, "-p", r#"{"data":{"k":"v2"}}"#]));
        assert!(
            stderr.contains(&format!("ConfigMap \"{frozen}\" is invalid: data: Forbidden: field is immutable when `immutable` is set")),
            "{version}: {stderr}"
        );
        let stderr = refused(&apiary.kubectl(version, &["patch", "configmap", &frozen, "-p", r#"{"immutable":false}"#]));
        assert!(stderr.contains("immutable: Forbidden: field is immutable when `immutable` is set"), "{version}: {stderr}");
        let label = ok(&apiary.kubectl(version, &["label", "configmap", &frozen, "team=a"]));
        assert!(label.contains("labeled"), "{version}: metadata stays mutable: {label}");

        let secret = apiary.data_dir.join(format!("strings-{tag}.yaml"));
        std::fs::write(&secret, format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: strings-{tag}\nstringData:\n  password: hunter2\n")).unwrap();
        ok(&apiary.kubectl(version, &["create", "-f", secret.to_str().unwrap()]));
        let stored = ok(&apiary.kubectl(version, &["get", "secret", &format!("strings-{tag}"), "-o", "jsonpath={.type} {.data.password} {.stringData}"]));
        assert_eq!(stored.trim(), "Opaque aHVudGVyMg==", "{version}");
    }
}

#[test]
fn kubectl_shows_upstreams_refusals_of_volumes_and_endpoints() {
    let apiary = Apiary::start();
    for version in ["1.33", "1.27"] {
        let tag = version.replace('.', "-");
        let write = |name: &str, text: String| {
            let file = apiary.data_dir.join(format!("{name}.yaml"));
            std::fs::write(&file, text).unwrap();
            file
        };

        let slice = write(
            &format!("eps-{tag}"),
            format!(
                "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: eps-{tag}\naddressType: IPv4\n\
                 endpoints:\n- addresses: ['127.0.0.1']\nports:\n- name: Bad_Name\n  port: 80\n"
            ),
        );
        let stderr = refused(&apiary.kubectl(version, &["create", "-f", slice.to_str().unwrap()]));
        // kubectl names the kind alone, then lists the causes one a line, in the order given.
        assert!(stderr.contains(&format!("The EndpointSlice \"eps-{tag}\" is invalid: \n")), "{version}: {stderr}");
        let port = stderr.find("* ports[0].name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 label");
        let address = stderr.find("* endpoints[0].addresses[0]: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)");
        assert!(port.is_some() && address.is_some() && port < address, "{version}: {stderr}");

        let pv = |name: &str, source: &str| {
            format!("apiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: {name}\nspec:\n  accessModes: [ReadWriteOnce]\n  capacity: {{storage: 1Gi}}\n{source}")
        };
        let two = write(&format!("pv-two-{tag}"), pv(&format!("pv-two-{tag}"), "  hostPath: {path: /a}\n  nfs: {server: s, path: /b}\n"));
        let stderr = refused(&apiary.kubectl(version, &["create", "-f", two.to_str().unwrap()]));
        assert!(
            stderr.contains(&format!("PersistentVolume \"pv-two-{tag}\" is invalid: spec.nfs: Forbidden: may not specify more than 1 volume type")),
            "{version}: {stderr}"
        );

        let name = format!("pv-frozen-{tag}");
        let frozen = write(&name, pv(&name, "  hostPath: {path: /data/a}\n"));
        ok(&apiary.kubectl(version, &["create", "-f", frozen.to_str().unwrap()]));
        let stderr = refused(&apiary.kubectl(version, &["patch", "pv", &name, "-p", r#"{"spec":{"hostPath":{"path":"/data/b"}}}"#]));
        assert!(
            stderr.contains(&format!(
                "PersistentVolume \"{name}\" is invalid: spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation"
            )),
            "{version}: {stderr}"
        );
        let grown = ok(&apiary.kubectl(version, &["patch", "pv", &name, "-p", r#"{"spec":{"capacity":{"storage":"2Gi"}}}"#]));
        assert!(grown.contains("patched"), "{version}: the capacity stays mutable: {grown}");
    }
}

#[test]
fn a_put_on_a_collection_is_405_and_an_oversized_body_gets_its_413() {
    let apiary = Apiary::start();
    let rt = raw_tls::runtime();
    rt.block_on(async {
        let mut raw = raw_tls::connect(&apiary).await.unwrap();
        let body = raw_tls::configmap("x", serde_json::json!({}));
        let put = raw.call("PUT", raw_tls::CONFIGMAPS, Some(&body)).await.unwrap();
        assert_eq!(put.status, 405);
        assert_eq!(put.json()["message"], "the server does not allow this method on the requested resource");

        // 16 MiB, far more than the socket buffers hold: all of it is written before
        // the answer is read, as simple clients do.
        let big = raw_tls::configmap("big", serde_json::json!({"k": "a".repeat(16 << 20)}));
        let mut raw = raw_tls::connect(&apiary).await.unwrap();
        raw.send(&raw_tls::request_bytes("POST", raw_tls::CONFIGMAPS, Some(&big))).await.expect("the whole body is taken");
        let answer = raw.read_response().await.expect("the answer, not a reset");
        assert_eq!(answer.status, 413);
        assert_eq!(answer.json()["message"], "Request entity too large: limit is 3145728");
    });
}
