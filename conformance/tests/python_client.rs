//! The Python kubernetes client's DynamicClient against the real binary: it discovers
//! resources through /api and /apis and creates, reads and lists objects.

use apiary_conformance::harness::Apiary;
use std::process::Command;

const SCRIPT: &str = r#"
import sys
from kubernetes import config, dynamic
from kubernetes.client import api_client

client = dynamic.DynamicClient(
    api_client.ApiClient(configuration=config.load_kube_config(config_file=sys.argv[1]))
)
cms = client.resources.get(api_version="v1", kind="ConfigMap")
cms.create(
    body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "py"}, "data": {"k": "v"}},
    namespace="default",
)
got = cms.get(name="py", namespace="default")
print("data", got.data.k)
print("listed", len(cms.get(namespace="default").items))
deployments = client.resources.get(api_version="apps/v1", kind="Deployment")
print("deployments namespaced", deployments.namespaced)
namespaces = client.resources.get(api_version="v1", kind="Namespace")
print("namespaces", sorted(n.metadata.name for n in namespaces.get().items))
"#;

#[test]
fn dynamic_client_discovers_and_round_trips() {
    let apiary = Apiary::start();
    let script = apiary.data_dir.join("dynamic_client.py");
    std::fs::write(&script, SCRIPT).unwrap();
    let out = Command::new("python3")
        .arg(&script)
        .arg(&apiary.kubeconfig)
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the Python client failed (is `pip install kubernetes` done? .ci/run does it):\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("data v"), "{stdout}");
    // Its ConfigMap and the namespace's kube-root-ca.crt.
    assert!(stdout.contains("listed 2"), "{stdout}");
    assert!(stdout.contains("deployments namespaced True"), "{stdout}");
    assert!(
        stdout.contains("namespaces ['default', 'kube-node-lease', 'kube-public', 'kube-system']"),
        "{stdout}"
    );
}
