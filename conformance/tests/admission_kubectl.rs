//! The built-in admission plugins on the real binary, through kubectl 1.33 and 1.27:
//! PodSecurity refuses a pod its namespace's enforce level forbids with upstream's
//! message and warns at the warn level; a ResourceQuota of two ConfigMaps (the
//! namespace's root CA one counts, as upstream's does) refuses the next and, once the
//! quota controller sees a delete, admits again; a pod gets its ServiceAccount's token
//! volume, its priority and its tolerations; `--admission-control-config-file` sets
//! PodSecurity's defaults.

use apiary_conformance::harness::{eventually, ok, Apiary};
use std::process::Output;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `kubectl apply -f` of `yaml` written to a file in the server's data directory.
fn apply(apiary: &Apiary, version: &str, name: &str, yaml: &str) -> Output {
    let file = apiary.data_dir.join(format!("{name}-{}.yaml", version.replace('.', "-")));
    std::fs::write(&file, yaml).unwrap();
    apiary.kubectl(version, &["apply", "-f", file.to_str().unwrap()])
}

fn host_network_pod(name: &str, ns: &str) -> String {
    format!("apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: {ns}\nspec:\n  hostNetwork: true\n  containers:\n  - name: c\n    image: nginx\n")
}

fn plain_pod(name: &str, ns: &str) -> String {
    format!("apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: {ns}\nspec:\n  containers:\n  - name: c\n    image: nginx\n")
}

#[test]
fn pod_security_refuses_and_warns_as_upstream() {
    let apiary = Apiary::start();
    for version in ["1.33", "1.27"] {
        let ns = format!("locked-{}", version.replace('.', "-"));
        ok(&apiary.kubectl(version, &["create", "namespace", &ns]));
        ok(&apiary.kubectl(version, &["label", "namespace", &ns, "pod-security.kubernetes.io/enforce=baseline", "pod-security.kubernetes.io/warn=restricted"]));
        let refused = apply(&apiary, version, "host", &host_network_pod("host", &ns));
        assert!(!refused.status.success());
        let message = stderr(&refused);
        assert!(
            message.contains(r#"pods "host" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)"#),
            "{version}: {message}"
        );
        let warned = apply(&apiary, version, "plain", &plain_pod("plain", &ns));
        assert!(warned.status.success(), "{version}: {}", stderr(&warned));
        let warning = stderr(&warned);
        assert!(
            warning.contains(r#"Warning: would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false"#),
            "{version}: {warning}"
        );
        // Tightening the namespace warns about the pod already there.
        let tightened = apiary.kubectl(version, &["label", "--overwrite", "namespace", &ns, "pod-security.kubernetes.io/enforce=restricted"]);
        assert!(tightened.status.success(), "{version}: {}", stderr(&tightened));
        assert!(
            stderr(&tightened).contains(&format!(r#"Warning: existing pods in namespace "{ns}" violate the new PodSecurity enforce level "restricted:latest""#)),
            "{version}: {}",
            stderr(&tightened)
        );
    }
}

#[test]
fn a_quota_of_two_configmaps_refuses_the_next_and_frees_a_slot_on_delete() {
    let apiary = Apiary::start();
    for version in ["1.33", "1.27"] {
        let ns = format!("quota-{}", version.replace('.', "-"));
        ok(&apiary.kubectl(version, &["create", "namespace", &ns]));
        eventually("the root CA ConfigMap", || apiary.kubectl(version, &["get", "configmap", "kube-root-ca.crt", "-n", &ns]).status.success());
        ok(&apiary.kubectl(version, &["create", "quota", "cm", "--hard=count/configmaps=2", "-n", &ns]));
        let used = || ok(&apiary.kubectl(version, &["get", "quota", "cm", "-n", &ns, "-o", "jsonpath={.status.used.count/configmaps}"]));
        eventually("the quota controller counts the root CA ConfigMap", || used() == "1");
        ok(&apiary.kubectl(version, &["create", "configmap", "a", "-n", &ns, "--from-literal=k=v"]));
        let refused = apiary.kubectl(version, &["create", "configmap", "b", "-n", &ns, "--from-literal=k=v"]);
        assert!(!refused.status.success());
        assert!(
            stderr(&refused).contains(r#"configmaps "b" is forbidden: exceeded quota: cm, requested: count/configmaps=1, used: count/configmaps=2, limited: count/configmaps=2"#),
            "{version}: {}",
            stderr(&refused)
        );
        let table = ok(&apiary.kubectl(version, &["get", "quota", "cm", "-n", &ns]));
        assert!(table.contains("count/configmaps: 2/2"), "{version}: {table}");
        ok(&apiary.kubectl(version, &["delete", "configmap", "a", "-n", &ns]));
        eventually("the quota controller frees the slot", || used() == "1");
        ok(&apiary.kubectl(version, &["create", "configmap", "b", "-n", &ns, "--from-literal=k=v"]));
    }
}

#[test]
fn a_pod_gets_its_token_volume_priority_and_tolerations() {
    let apiary = Apiary::start();
    for version in ["1.33", "1.27"] {
        let ns = format!("apps-{}", version.replace('.', "-"));
        ok(&apiary.kubectl(version, &["create", "namespace", &ns]));
        eventually("the default ServiceAccount", || apiary.kubectl(version, &["get", "serviceaccount", "default", "-n", &ns]).status.success());
        let yaml = plain_pod("web", &ns).replace("spec:\n", "spec:\n  priorityClassName: system-cluster-critical\n");
        let created = apply(&apiary, version, "web", &yaml);
        assert!(created.status.success(), "{version}: {}", stderr(&created));
        let get = |path: &str| ok(&apiary.kubectl(version, &["get", "pod", "web", "-n", &ns, "-o", &format!("jsonpath={{{path}}}")]));
        assert_eq!(get(".spec.serviceAccountName"), "default");
        assert!(get(".spec.volumes[0].name").starts_with("kube-api-access-"), "{version}");
        assert_eq!(get(".spec.containers[0].volumeMounts[0].mountPath"), "/var/run/secrets/kubernetes.io/serviceaccount");
        assert_eq!(get(".spec.priority"), "2000000000");
        assert_eq!(get(".spec.tolerations[*].key"), "node.kubernetes.io/not-ready node.kubernetes.io/unreachable");
        let classes = ok(&apiary.kubectl(version, &["get", "priorityclasses", "-o", "name"]));
        assert!(classes.contains("priorityclass.scheduling.k8s.io/system-node-critical"), "{version}: {classes}");
    }
}

#[test]
fn the_admission_config_file_sets_pod_security_defaults() {
    let dir = std::env::temp_dir().join(format!("apiary-admission-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("admission.yaml");
    std::fs::write(&config, "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  path: pod-security.yaml\n").unwrap();
    std::fs::write(
        dir.join("pod-security.yaml"),
        "apiVersion: pod-security.admission.config.k8s.io/v1\nkind: PodSecurityConfiguration\ndefaults:\n  enforce: baseline\nexemptions:\n  namespaces: [trusted]\n",
    )
    .unwrap();
    let flag = format!("--admission-control-config-file={}", config.display());
    let apiary = Apiary::start_with(&[&flag]);
    ok(&apiary.kubectl("1.33", &["create", "namespace", "plain"]));
    ok(&apiary.kubectl("1.33", &["create", "namespace", "trusted"]));
    let refused = apply(&apiary, "1.33", "host", &host_network_pod("host", "plain"));
    assert!(stderr(&refused).contains(r#"violates PodSecurity "baseline:latest""#), "{}", stderr(&refused));
    let exempt = apply(&apiary, "1.33", "host-trusted", &host_network_pod("host", "trusted"));
    assert!(exempt.status.success(), "{}", stderr(&exempt));
    std::fs::remove_dir_all(&dir).ok();
}
