//! The built-in kinds of certificates.k8s.io, node.k8s.io and storage.k8s.io and the
//! deprecated ComponentStatuses on the real binary, through kubectl 1.33 and 1.27: a
//! CertificateSigningRequest created from a manifest, approved by
//! `kubectl certificate approve` and shown Approved; the other kinds created and
//! listed; `kubectl get componentstatuses` with upstream's deprecation warning.

use apiary_conformance::harness::{ok, Apiary};

/// A PEM request of the shape validation checks (its signature is not checked).
const REQUEST: &str = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUFnd0FEQUFBd0lBQUE9PQotLS0tLUVORCBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K";

fn manifest(name: &str, text: &str) -> String {
    let path = std::env::temp_dir().join(format!("apiary-cluster-kinds-{}-{name}.yaml", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn kubectl_approves_a_csr_and_lists_the_cluster_kinds() {
    let apiary = Apiary::start();
    for version in ["1.33", "1.27"] {
        let v = version.replace('.', "-");
        let csr = manifest(&format!("csr-{v}"), &format!(
            "apiVersion: certificates.k8s.io/v1\nkind: CertificateSigningRequest\nmetadata:\n  name: csr-{v}\nspec:\n  request: {REQUEST}\n  signerName: example.com/signer\n  usages: [client auth]\n"
        ));
        ok(&apiary.kubectl(version, &["create", "-f", &csr]));
        let pending = ok(&apiary.kubectl(version, &["get", "csr", &format!("csr-{v}")]));
        assert!(pending.contains("Pending"), "{pending}");
        ok(&apiary.kubectl(version, &["certificate", "approve", &format!("csr-{v}")]));
        let approved = ok(&apiary.kubectl(version, &["get", "csr", &format!("csr-{v}")]));
        assert!(approved.contains("example.com/signer") && approved.contains("Approved"), "{approved}");
    }

    let others = manifest("others", &format!(
        "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata:\n  name: gvisor\nhandler: runsc\n---\n\
         apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata:\n  name: csi.example.com\nspec: {{}}\n---\n\
         apiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata:\n  name: node-a\nspec:\n  drivers: [{{name: csi.example.com, nodeID: a}}]\n---\n\
         apiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata:\n  name: va-a\nspec:\n  attacher: csi.example.com\n  nodeName: node-a\n  source: {{persistentVolumeName: pv-a}}\n---\n\
         apiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\nmetadata:\n  name: cap-a\n  namespace: default\nstorageClassName: standard\ncapacity: 10Gi\n"
    ));
    ok(&apiary.kubectl("1.33", &["create", "-f", &others]));
    for version in ["1.33", "1.27"] {
        let listed = ok(&apiary.kubectl(version, &["get", "runtimeclasses,csidrivers,csinodes,volumeattachments,csistoragecapacities", "-A"]));
        for shown in ["gvisor", "runsc", "csi.example.com", "node-a", "va-a", "pv-a", "cap-a"] {
            assert!(listed.contains(shown), "{version}: {shown} in {listed}");
        }
        let driver = ok(&apiary.kubectl(version, &["get", "csidriver", "csi.example.com", "-o", "jsonpath={.spec.attachRequired} {.spec.volumeLifecycleModes}"]));
        assert_eq!(driver, "true [\"Persistent\"]");
    }
    let refused = apiary.kubectl("1.33", &["patch", "runtimeclass", "gvisor", "--type=merge", "-p", "{\"handler\":\"kata\"}"]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("handler: Invalid value: \"kata\": field is immutable"));
}

#[test]
fn kubectl_get_componentstatuses_shows_the_deprecation_warning() {
    let apiary = Apiary::start();
    for version in ["1.33", "1.27"] {
        let out = apiary.kubectl(version, &["get", "componentstatuses"]);
        assert!(out.status.success(), "{out:?}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("Warning: v1 ComponentStatus is deprecated in v1.19+"), "{version}: {stderr}");
        assert!(stdout.contains("etcd-0") && stdout.contains("Healthy") && stdout.contains("controller-manager"), "{stdout}");
        assert!(stdout.contains("scheduler") && stdout.contains("Unhealthy"), "{stdout}");
    }
}
