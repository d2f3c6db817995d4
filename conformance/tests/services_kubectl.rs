//! Services on the real binary through kubectl 1.33 and 1.27: `kubectl create service
//! clusterip` and `nodeport` get an address of `--service-cluster-ip-range` and a
//! port of `--service-node-port-range`, `kubectl expose` makes a Service of a
//! Deployment, `kubectl get svc kubernetes` shows the API's own Service at the first
//! address (and the range and addresses taken as ServiceCIDR and IPAddress objects), a
//! changed `spec.clusterIP` is refused with upstream's message, and after a restart
//! over the same (sqlite) data nothing is handed out twice.

use apiary_conformance::harness::{ok, Apiary};
use serde_json::Value;
use std::collections::HashSet;

const RANGE: &str = "--service-cluster-ip-range=10.96.0.0/16";

fn service(apiary: &Apiary, name: &str) -> Value {
    serde_json::from_str(&ok(&apiary.kubectl("1.33", &["get", "svc", name, "-o", "json"]))).unwrap()
}

fn in_range(ip: &str) -> bool {
    ip.starts_with("10.96.") && ip != "10.96.0.0" && ip != "10.96.255.255"
}

#[test]
fn kubectl_creates_services_with_addresses_and_ports_from_the_ranges() {
    let tmp = tempfile::tempdir().unwrap();
    let mut apiary = Apiary::start_in(tmp.path(), &[RANGE]);
    let listed = ok(&apiary.kubectl("1.33", &["get", "svc", "kubernetes"]));
    assert!(listed.contains("10.96.0.1") && listed.contains("443/TCP"), "{listed}");
    let cidrs = ok(&apiary.kubectl("1.33", &["get", "servicecidrs"]));
    assert!(cidrs.contains("kubernetes") && cidrs.contains("10.96.0.0/16"), "{cidrs}");
    let taken = ok(&apiary.kubectl("1.33", &["get", "ipaddresses"]));
    assert!(taken.contains("10.96.0.1") && taken.contains("services/default/kubernetes"), "{taken}");
    let mut ips = HashSet::from(["10.96.0.1".to_owned()]);
    let mut ports = HashSet::new();
    for version in ["1.33", "1.27"] {
        let tag = version.replace('.', "-");
        let web = format!("web-{tag}");
        ok(&apiary.kubectl(version, &["create", "service", "clusterip", &web, "--tcp=80:8080"]));
        let svc = service(&apiary, &web);
        let ip = svc["spec"]["clusterIP"].as_str().unwrap().to_owned();
        assert!(in_range(&ip) && ips.insert(ip.clone()), "{svc}");
        assert_eq!(svc["spec"]["type"], "ClusterIP");
        assert_eq!(svc["spec"]["ipFamilies"], serde_json::json!(["IPv4"]));
        assert_eq!(svc["spec"]["sessionAffinity"], "None");

        let np = format!("np-{tag}");
        ok(&apiary.kubectl(version, &["create", "service", "nodeport", &np, "--tcp=80:8080"]));
        let svc = service(&apiary, &np);
        let port = svc["spec"]["ports"][0]["nodePort"].as_u64().unwrap();
        assert!((30000..=32767).contains(&port) && ports.insert(port), "{svc}");
        assert!(ips.insert(svc["spec"]["clusterIP"].as_str().unwrap().to_owned()));

        let app = format!("app-{tag}");
        ok(&apiary.kubectl(version, &["create", "deployment", &app, "--image=registry.k8s.io/pause:3.9"]));
        ok(&apiary.kubectl(version, &["expose", "deployment", &app, "--port=80", "--target-port=8080", "--type=NodePort"]));
        let svc = service(&apiary, &app);
        assert_eq!(svc["spec"]["selector"]["app"], app.as_str());
        assert_eq!(svc["spec"]["ports"][0]["targetPort"], 8080);
        assert!(ports.insert(svc["spec"]["ports"][0]["nodePort"].as_u64().unwrap()), "{svc}");
        assert!(ips.insert(svc["spec"]["clusterIP"].as_str().unwrap().to_owned()));

        let patch = r#"{"spec":{"clusterIP":"10.96.9.9"}}"#;
        let out = apiary.kubectl(version, &["patch", "svc", &web, "-p", patch]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        let want = format!(
            "The Service \"{web}\" is invalid: spec.clusterIPs[0]: Invalid value: [\"10.96.9.9\"]: may not change once set"
        );
        assert!(err.contains(&want), "{err}");

        let out = apiary.kubectl(version, &["create", "service", "nodeport", &format!("low-{tag}"), "--tcp=80", "--node-port=80"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("provided port is not in the valid range. The range of valid ports is 30000-32767"), "{err}");
    }
    // Deleting a NodePort Service gives its port back; a restart loses nothing.
    ok(&apiary.kubectl("1.33", &["delete", "svc", "np-1-27"]));
    apiary.stop();
    let apiary = Apiary::start_in(tmp.path(), &[RANGE]);
    for i in 0..3 {
        let name = format!("after-{i}");
        ok(&apiary.kubectl("1.33", &["create", "service", "nodeport", &name, "--tcp=80"]));
        let svc = service(&apiary, &name);
        assert!(ips.insert(svc["spec"]["clusterIP"].as_str().unwrap().to_owned()), "{svc}");
        let port = svc["spec"]["ports"][0]["nodePort"].as_u64().unwrap();
        assert!(!ports.contains(&port) || port == 0, "{port} handed out twice: {svc}");
        ports.insert(port);
    }
    let listed = ok(&apiary.kubectl("1.27", &["get", "svc", "kubernetes", "-o", "jsonpath={.spec.clusterIP}"]));
    assert_eq!(listed, "10.96.0.1");
}
