//! Upstream's pass and fail cases for each check (pod-security-admission v1.33's
//! policy tests, rewritten over JSON), which checks apply at which version, label
//! parsing, and the plugin's decision and messages.

use super::checks::{self as c, CheckFn, Violation};
use super::decision::{admit, forbidden_detail, Request};
use super::namespace::{admit_namespace, existing_pod_warnings, NamespaceDecision};
use super::level::{Level, LevelVersion, Version};
use super::pod::Pod;
use super::policy::{Configuration, Exemptions, Policy};
use super::registry::checks_for;
use crate::admission::Operation;
use serde_json::{json, Map, Value};

/// Runs one check over a pod written as `{"metadata": …, "spec": …}`.
fn run(check: CheckFn, pod: Value) -> Option<Violation> {
    run_relaxed(check, pod, false)
}

fn run_relaxed(check: CheckFn, pod: Value, relax: bool) -> Option<Violation> {
    let metadata = pod.get("metadata").cloned().unwrap_or(Value::Null);
    let spec = pod.get("spec").cloned().unwrap_or(Value::Null);
    let pod = Pod { relax_for_user_namespaces: relax, ..Pod::new(&metadata, &spec) };
    check(&pod)
}

#[track_caller]
fn fails(check: CheckFn, pod: Value, reason: &str, detail: &str) {
    let violation = run(check, pod).expect("expected the check to fail");
    assert_eq!(violation.reason, reason);
    assert_eq!(violation.detail, detail);
}

#[track_caller]
fn passes(check: CheckFn, pod: Value) {
    assert_eq!(run(check, pod), None);
}

fn containers(list: Value) -> Value {
    json!({"spec": {"containers": list}})
}

#[test]
fn pod_security_host_namespaces() {
    fails(
        c::host_namespaces,
        json!({"spec": {"hostNetwork": true, "hostIPC": true, "hostPID": true}}),
        "host namespaces",
        "hostNetwork=true, hostPID=true, hostIPC=true",
    );
    passes(c::host_namespaces, json!({"spec": {"hostNetwork": false}}));
}

#[test]
fn pod_security_host_path_volumes() {
    fails(
        c::host_path_volumes,
        json!({"spec": {"volumes": [
            {"name": "a", "hostPath": {}}, {"name": "b", "hostPath": {"path": "/"}}, {"name": "c", "emptyDir": {}}
        ]}}),
        "hostPath volumes",
        r#"volumes "a", "b""#,
    );
    passes(c::host_path_volumes, json!({"spec": {"volumes": [{"name": "c", "emptyDir": {}, "hostPath": null}]}}));
}

#[test]
fn pod_security_host_ports() {
    fails(
        c::host_ports,
        containers(json!([
            {"name": "a", "ports": [{"hostPort": 0}]},
            {"name": "b", "ports": [{"hostPort": 0}, {"hostPort": 20}]}
        ])),
        "hostPort",
        r#"container "b" uses hostPort 20"#,
    );
    fails(
        c::host_ports,
        containers(json!([
            {"name": "a", "ports": [{"hostPort": 0}]},
            {"name": "b", "ports": [{"hostPort": 0}, {"hostPort": 10}, {"hostPort": 20}]},
            {"name": "c", "ports": [{"hostPort": 0}, {"hostPort": 10}, {"hostPort": 30}]}
        ])),
        "hostPort",
        r#"containers "b", "c" use hostPorts 10, 20, 30"#,
    );
    // Sorted as strings, as upstream's string set sorts them.
    fails(
        c::host_ports,
        containers(json!([{"name": "a", "ports": [{"hostPort": 9}, {"hostPort": 10}]}])),
        "hostPort",
        r#"container "a" uses hostPorts 10, 9"#,
    );
    passes(c::host_ports, containers(json!([{"name": "a", "ports": [{"containerPort": 80}]}])));
}

#[test]
fn pod_security_privileged() {
    fails(
        c::privileged,
        containers(json!([
            {"name": "a", "securityContext": null},
            {"name": "b", "securityContext": {}},
            {"name": "c", "securityContext": {"privileged": false}},
            {"name": "d", "securityContext": {"privileged": true}},
            {"name": "e", "securityContext": {"privileged": true}}
        ])),
        "privileged",
        r#"containers "d", "e" must not set securityContext.privileged=true"#,
    );
    // Init containers first, then containers, then ephemeral containers.
    fails(
        c::privileged,
        json!({"spec": {
            "ephemeralContainers": [{"name": "z", "securityContext": {"privileged": true}}],
            "containers": [{"name": "y", "securityContext": {"privileged": true}}],
            "initContainers": [{"name": "x", "securityContext": {"privileged": true}}]
        }}),
        "privileged",
        r#"containers "x", "y", "z" must not set securityContext.privileged=true"#,
    );
    passes(c::privileged, containers(json!([{"name": "a"}])));
}

#[test]
fn pod_security_capabilities_baseline() {
    fails(
        c::capabilities_baseline,
        containers(json!([
            {"name": "a", "securityContext": {"capabilities": {"add": ["FOO", "BAR"]}}},
            {"name": "b", "securityContext": {"capabilities": {"add": ["BAR", "BAZ"]}}}
        ])),
        "non-default capabilities",
        r#"containers "a", "b" must not include "BAR", "BAZ", "FOO" in securityContext.capabilities.add"#,
    );
    passes(
        c::capabilities_baseline,
        containers(json!([{"name": "a", "securityContext": {"capabilities": {"add": ["CHOWN", "NET_BIND_SERVICE"]}}}])),
    );
}

#[test]
fn pod_security_capabilities_restricted() {
    let pod = containers(json!([
        {"name": "a", "securityContext": {"capabilities": {"add": ["FOO", "BAR"]}}},
        {"name": "b", "securityContext": {"capabilities": {"add": ["BAR", "BAZ"]}}},
        {"name": "c", "securityContext": {"capabilities": {"add": ["NET_BIND_SERVICE", "CHOWN"], "drop": ["ALL", "FOO"]}}}
    ]));
    let detail = r#"containers "a", "b" must set securityContext.capabilities.drop=["ALL"]; containers "a", "b", "c" must not include "BAR", "BAZ", "CHOWN", "FOO" in securityContext.capabilities.add"#;
    fails(c::capabilities_restricted_1_22, pod.clone(), "unrestricted capabilities", detail);
    fails(c::capabilities_restricted_1_25, pod, "unrestricted capabilities", detail);
    let windows = json!({"spec": {"os": {"name": "windows"}, "containers": [{"name": "a"}]}});
    passes(c::capabilities_restricted_1_25, windows.clone());
    fails(
        c::capabilities_restricted_1_22,
        windows,
        "unrestricted capabilities",
        r#"container "a" must set securityContext.capabilities.drop=["ALL"]"#,
    );
    fails(
        c::capabilities_restricted_1_25,
        json!({"spec": {"os": {"name": "linux"}, "containers": [{"name": "a"}]}}),
        "unrestricted capabilities",
        r#"container "a" must set securityContext.capabilities.drop=["ALL"]"#,
    );
    passes(
        c::capabilities_restricted_1_25,
        containers(json!([{"name": "a", "securityContext": {"capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}}}])),
    );
}

#[test]
fn pod_security_allow_privilege_escalation() {
    let pod = containers(json!([
        {"name": "a"},
        {"name": "b", "securityContext": {"allowPrivilegeEscalation": null}},
        {"name": "c", "securityContext": {"allowPrivilegeEscalation": true}},
        {"name": "d", "securityContext": {"allowPrivilegeEscalation": false}}
    ]));
    let detail = r#"containers "a", "b", "c" must set securityContext.allowPrivilegeEscalation=false"#;
    fails(c::allow_privilege_escalation_1_8, pod.clone(), "allowPrivilegeEscalation != false", detail);
    fails(c::allow_privilege_escalation_1_25, pod, "allowPrivilegeEscalation != false", detail);
    let windows = json!({"spec": {"os": {"name": "windows"}, "containers": [{"name": "a"}]}});
    passes(c::allow_privilege_escalation_1_25, windows.clone());
    assert!(run(c::allow_privilege_escalation_1_8, windows).is_some());
    fails(
        c::allow_privilege_escalation_1_25,
        json!({"spec": {"os": {"name": "linux"}, "containers": [{"name": "a"}]}}),
        "allowPrivilegeEscalation != false",
        r#"container "a" must set securityContext.allowPrivilegeEscalation=false"#,
    );
}

#[test]
fn pod_security_app_armor_profile() {
    for annotations in [
        json!({"container.apparmor.security.beta.kubernetes.io/test": "runtime/default", "env": "prod"}),
        json!({"container.apparmor.security.beta.kubernetes.io/test": "localhost/sec-profile01", "env": "dev"}),
        json!({"env": "dev"}),
    ] {
        passes(c::app_armor_profile, json!({"metadata": {"annotations": annotations}, "spec": {}}));
    }
    passes(c::app_armor_profile, json!({"spec": {"securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}}}}));
    passes(
        c::app_armor_profile,
        containers(json!([{"name": "foo", "securityContext": {"appArmorProfile": {"type": "Localhost"}}}])),
    );
    fails(
        c::app_armor_profile,
        json!({"spec": {"securityContext": {"appArmorProfile": {"type": "Unconfined"}}}}),
        "forbidden AppArmor profile",
        r#"pod must not set AppArmor profile type to "Unconfined""#,
    );
    fails(
        c::app_armor_profile,
        json!({"spec": {
            "securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}},
            "containers": [{"name": "foo", "securityContext": {"appArmorProfile": {"type": "Unconfined"}}}]
        }}),
        "forbidden AppArmor profile",
        r#"container "foo" must not set AppArmor profile type to "Unconfined""#,
    );
    fails(
        c::app_armor_profile,
        json!({"spec": {
            "containers": [{"name": "foo"}],
            "initContainers": [{"name": "bar", "securityContext": {"appArmorProfile": {"type": "Unconfined"}}}]
        }}),
        "forbidden AppArmor profile",
        r#"container "bar" must not set AppArmor profile type to "Unconfined""#,
    );
    fails(
        c::app_armor_profile,
        json!({"metadata": {"annotations": {
            "container.apparmor.security.beta.kubernetes.io/": "bogus",
            "container.apparmor.security.beta.kubernetes.io/a": "",
            "container.apparmor.security.beta.kubernetes.io/b": "runtime/default",
            "container.apparmor.security.beta.kubernetes.io/c": "localhost/",
            "container.apparmor.security.beta.kubernetes.io/d": "localhost/foo",
            "container.apparmor.security.beta.kubernetes.io/e": "unconfined",
            "container.apparmor.security.beta.kubernetes.io/f": "unknown"
        }}}),
        "forbidden AppArmor profiles",
        concat!(
            r#"annotations must not set AppArmor profile type to "#,
            r#""container.apparmor.security.beta.kubernetes.io/="bogus"", "#,
            r#""container.apparmor.security.beta.kubernetes.io/e="unconfined"", "#,
            r#""container.apparmor.security.beta.kubernetes.io/f="unknown"""#
        ),
    );
    // Pod, containers and annotations together; the reason counts every value.
    fails(
        c::app_armor_profile,
        json!({
            "metadata": {"annotations": {"container.apparmor.security.beta.kubernetes.io/x": "unconfined"}},
            "spec": {
                "securityContext": {"appArmorProfile": {"type": "Unconfined"}},
                "containers": [{"name": "a", "securityContext": {"appArmorProfile": {"type": "Other"}}}]
            }
        }),
        "forbidden AppArmor profiles",
        concat!(
            r#"pod and container "a" and annotation must not set AppArmor profile type to "#,
            r#""Other", "Unconfined", "container.apparmor.security.beta.kubernetes.io/x="unconfined"""#
        ),
    );
}

#[test]
fn pod_security_se_linux_options() {
    let pod = json!({"spec": {
        "securityContext": {"seLinuxOptions": {"type": "foo", "user": "bar", "role": "baz"}},
        "containers": [
            {"name": "a", "securityContext": null},
            {"name": "b", "securityContext": {}},
            {"name": "c", "securityContext": {"seLinuxOptions": {}}},
            {"name": "d", "securityContext": {"seLinuxOptions": {"type": "container_t"}}},
            {"name": "e", "securityContext": {"seLinuxOptions": {"type": "bar"}}},
            {"name": "f", "securityContext": {"seLinuxOptions": {"user": "bar"}}},
            {"name": "g", "securityContext": {"seLinuxOptions": {"role": "baz"}}}
        ]
    }});
    fails(
        c::se_linux_options_1_0,
        pod,
        "seLinuxOptions",
        r#"pod and containers "e", "f", "g" set forbidden securityContext.seLinuxOptions: types "bar", "foo"; user may not be set; role may not be set"#,
    );
    let pod_only = |options: Value| json!({"spec": {"securityContext": {"seLinuxOptions": options}}});
    fails(
        c::se_linux_options_1_0,
        pod_only(json!({"type": "bad"})),
        "seLinuxOptions",
        r#"pod set forbidden securityContext.seLinuxOptions: type "bad""#,
    );
    fails(
        c::se_linux_options_1_0,
        pod_only(json!({"user": "bad"})),
        "seLinuxOptions",
        "pod set forbidden securityContext.seLinuxOptions: user may not be set",
    );
    fails(
        c::se_linux_options_1_0,
        pod_only(json!({"role": "bad"})),
        "seLinuxOptions",
        "pod set forbidden securityContext.seLinuxOptions: role may not be set",
    );
    for allowed in ["", "container_t", "container_init_t", "container_kvm_t"] {
        passes(c::se_linux_options_1_0, pod_only(json!({"type": allowed, "level": "s0:c1"})));
    }
    // container_engine_t is allowed from v1.31.
    fails(
        c::se_linux_options_1_0,
        pod_only(json!({"type": "container_engine_t"})),
        "seLinuxOptions",
        r#"pod set forbidden securityContext.seLinuxOptions: type "container_engine_t""#,
    );
    passes(c::se_linux_options_1_31, pod_only(json!({"type": "container_engine_t"})));
}

#[test]
fn pod_security_proc_mount() {
    let pod = json!({"spec": {"hostUsers": false, "containers": [
        {"name": "a", "securityContext": null},
        {"name": "b", "securityContext": {}},
        {"name": "c", "securityContext": {"procMount": "Default"}},
        {"name": "d", "securityContext": {"procMount": "Unmasked"}},
        {"name": "e", "securityContext": {"procMount": "other"}}
    ]}});
    fails(
        c::proc_mount,
        pod.clone(),
        "procMount",
        r#"containers "d", "e" must not set securityContext.procMount to "Unmasked", "other""#,
    );
    assert_eq!(run_relaxed(c::proc_mount, pod, true), None);
}

#[test]
fn pod_security_seccomp_baseline() {
    let annotated = |annotations: Value| {
        json!({"metadata": {"annotations": annotations}, "spec": {"containers": [{"name": "a"}, {"name": "b"}]}})
    };
    fails(
        c::seccomp_baseline_1_0,
        annotated(json!({"seccomp.security.alpha.kubernetes.io/pod": "unconfined"})),
        "seccompProfile",
        r#"forbidden annotation seccomp.security.alpha.kubernetes.io/pod="unconfined""#,
    );
    fails(
        c::seccomp_baseline_1_0,
        annotated(json!({
            "container.seccomp.security.alpha.kubernetes.io/a": "unconfined",
            "container.seccomp.security.alpha.kubernetes.io/b": "unknown"
        })),
        "seccompProfile",
        r#"forbidden annotations container.seccomp.security.alpha.kubernetes.io/a="unconfined", container.seccomp.security.alpha.kubernetes.io/b="unknown""#,
    );
    fails(
        c::seccomp_baseline_1_0,
        annotated(json!({
            "seccomp.security.alpha.kubernetes.io/pod": "unconfined",
            "container.seccomp.security.alpha.kubernetes.io/a": "unconfined",
            "container.seccomp.security.alpha.kubernetes.io/b": "unknown"
        })),
        "seccompProfile",
        r#"forbidden annotations container.seccomp.security.alpha.kubernetes.io/a="unconfined", container.seccomp.security.alpha.kubernetes.io/b="unknown", seccomp.security.alpha.kubernetes.io/pod="unconfined""#,
    );
    passes(
        c::seccomp_baseline_1_0,
        annotated(json!({
            "seccomp.security.alpha.kubernetes.io/pod": "docker/default",
            "container.seccomp.security.alpha.kubernetes.io/a": "localhost/x",
            "container.seccomp.security.alpha.kubernetes.io/zzz": "unconfined"
        })),
    );

    let typed = |pod_type: Option<&str>, container_types: &[Option<&str>]| {
        let profile = |t: Option<&str>| match t {
            Some(t) => json!({"seccompProfile": {"type": t}}),
            None => json!({}),
        };
        let names = ["a", "b", "c", "d"];
        let list: Vec<Value> = container_types
            .iter()
            .zip(names)
            .map(|(t, name)| json!({"name": name, "securityContext": profile(*t)}))
            .collect();
        json!({"spec": {"securityContext": profile(pod_type), "containers": list}})
    };
    fails(
        c::seccomp_baseline_1_19,
        typed(Some("Unconfined"), &[None]),
        "seccompProfile",
        r#"pod must not set securityContext.seccompProfile.type to "Unconfined""#,
    );
    fails(
        c::seccomp_baseline_1_19,
        typed(None, &[None, Some("RuntimeDefault"), Some("Unconfined"), Some("Unconfined")]),
        "seccompProfile",
        r#"containers "c", "d" must not set securityContext.seccompProfile.type to "Unconfined""#,
    );
    fails(
        c::seccomp_baseline_1_19,
        typed(Some("Unconfined"), &[None, Some("RuntimeDefault"), Some("Unconfined"), Some("Unconfined")]),
        "seccompProfile",
        r#"pod and containers "c", "d" must not set securityContext.seccompProfile.type to "Unconfined""#,
    );
    passes(c::seccomp_baseline_1_19, typed(None, &[None, Some("Localhost")]));

    // Restricted: a profile must be set, by the pod or by each container.
    for check in [c::seccomp_restricted_1_19 as CheckFn, c::seccomp_restricted_1_25] {
        fails(
            check,
            typed(None, &[None]),
            "seccompProfile",
            r#"pod or container "a" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost""#,
        );
        fails(
            check,
            typed(Some("Unconfined"), &[None]),
            "seccompProfile",
            r#"pod must not set securityContext.seccompProfile.type to "Unconfined""#,
        );
        fails(
            check,
            typed(Some("RuntimeDefault"), &[None, None, Some("Unconfined"), Some("Unconfined")]),
            "seccompProfile",
            r#"containers "c", "d" must not set securityContext.seccompProfile.type to "Unconfined""#,
        );
        fails(
            check,
            typed(None, &[None, None, Some("RuntimeDefault")]),
            "seccompProfile",
            r#"pod or containers "a", "b" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost""#,
        );
        passes(check, typed(Some("RuntimeDefault"), &[None, Some("Localhost")]));
    }
    passes(c::seccomp_restricted_1_25, json!({"spec": {"os": {"name": "windows"}, "containers": [{"name": "a"}]}}));
    fails(
        c::seccomp_restricted_1_25,
        json!({"spec": {"os": {"name": "linux"}, "containers": [{"name": "a"}]}}),
        "seccompProfile",
        r#"pod or container "a" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost""#,
    );
}

#[test]
fn pod_security_sysctls() {
    let with = |names: &[&str]| {
        let list: Vec<Value> = names.iter().map(|n| json!({"name": n, "value": "1"})).collect();
        json!({"spec": {"securityContext": {"sysctls": list}}})
    };
    let all: [CheckFn; 4] = [c::sysctls_1_0, c::sysctls_1_27, c::sysctls_1_29, c::sysctls_1_32];
    for check in all {
        fails(check, with(&["a", "b"]), "forbidden sysctls", "a, b");
        passes(check, with(&["kernel.shm_rmid_forced", "net.ipv4.ip_unprivileged_port_start"]));
    }
    // Each name becomes safe at its version, and stays safe after.
    let since = [
        ("net.ipv4.ip_local_reserved_ports", 1),
        ("net.ipv4.tcp_keepalive_time", 2),
        ("net.ipv4.tcp_fin_timeout", 2),
        ("net.ipv4.tcp_keepalive_intvl", 2),
        ("net.ipv4.tcp_keepalive_probes", 2),
        ("net.ipv4.tcp_rmem", 3),
        ("net.ipv4.tcp_wmem", 3),
    ];
    for (name, first) in since {
        for (i, check) in all.iter().enumerate() {
            if i < first {
                fails(*check, with(&[name]), "forbidden sysctls", name);
            } else {
                passes(*check, with(&[name]));
            }
        }
    }
}

#[test]
fn pod_security_windows_host_process() {
    fails(
        c::windows_host_process,
        json!({"spec": {
            "securityContext": {"windowsOptions": {"hostProcess": true}},
            "containers": [
                {"name": "a", "securityContext": {"windowsOptions": {"hostProcess": true}}},
                {"name": "b", "securityContext": {"windowsOptions": {"hostProcess": false}}},
                {"name": "c", "securityContext": {"windowsOptions": {"hostProcess": true}}}
            ]
        }}),
        "hostProcess",
        r#"pod and containers "a", "c" must not set securityContext.windowsOptions.hostProcess=true"#,
    );
    fails(
        c::windows_host_process,
        containers(json!([{"name": "a", "securityContext": {"windowsOptions": {"hostProcess": true}}}])),
        "hostProcess",
        r#"container "a" must not set securityContext.windowsOptions.hostProcess=true"#,
    );
    passes(c::windows_host_process, json!({"spec": {"securityContext": {"windowsOptions": {"hostProcess": false}}}}));
}

#[test]
fn pod_security_restricted_volumes() {
    let mut volumes: Vec<Value> = [
        "emptyDir", "secret", "persistentVolumeClaim", "downwardAPI", "configMap", "projected", "csi", "ephemeral", "image",
    ]
    .iter()
    .enumerate()
    .map(|(i, kind)| json!({"name": format!("a{}", i + 1), *kind: {}}))
    .collect();
    let restricted = [
        "hostPath", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "nfs", "iscsi", "glusterfs", "rbd",
        "flexVolume", "cinder", "cephfs", "flocker", "fc", "azureFile", "vsphereVolume", "quobyte", "azureDisk",
        "photonPersistentDisk", "portworxVolume", "scaleIO", "storageos",
    ];
    volumes.extend(restricted.iter().enumerate().map(|(i, kind)| json!({"name": format!("b{}", i + 1), *kind: {}})));
    volumes.push(json!({"name": "c1"}));
    fails(
        c::restricted_volumes,
        json!({"spec": {"volumes": volumes}}),
        "restricted volume types",
        concat!(
            r#"volumes "b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8", "b9", "b10", "b11", "b12", "b13", "b14", "b15", "b16", "b17", "b18", "b19", "b20", "b21", "c1""#,
            r#" use restricted volume types "#,
            r#""awsElasticBlockStore", "azureDisk", "azureFile", "cephfs", "cinder", "fc", "flexVolume", "flocker", "gcePersistentDisk", "gitRepo", "glusterfs", "#,
            r#""hostPath", "iscsi", "nfs", "photonPersistentDisk", "portworxVolume", "quobyte", "rbd", "scaleIO", "storageos", "unknown", "vsphereVolume""#
        ),
    );
    fails(
        c::restricted_volumes,
        json!({"spec": {"volumes": [{"name": "x", "nfs": {"server": "s", "path": "/"}}]}}),
        "restricted volume types",
        r#"volume "x" uses restricted volume type "nfs""#,
    );
}

#[test]
fn pod_security_run_as_non_root() {
    fails(
        c::run_as_non_root,
        containers(json!([{"name": "a"}])),
        "runAsNonRoot != true",
        r#"pod or container "a" must set securityContext.runAsNonRoot=true"#,
    );
    fails(
        c::run_as_non_root,
        json!({"spec": {"securityContext": {"runAsNonRoot": false}, "containers": [{"name": "a", "securityContext": null}]}}),
        "runAsNonRoot != true",
        "pod must not set securityContext.runAsNonRoot=false",
    );
    let mixed = json!([
        {"name": "a", "securityContext": null},
        {"name": "b", "securityContext": {}},
        {"name": "c", "securityContext": {"runAsNonRoot": false}},
        {"name": "d", "securityContext": {"runAsNonRoot": false}},
        {"name": "e", "securityContext": {"runAsNonRoot": true}}
    ]);
    fails(
        c::run_as_non_root,
        json!({"spec": {"securityContext": {"runAsNonRoot": true}, "containers": mixed}}),
        "runAsNonRoot != true",
        r#"containers "c", "d" must not set securityContext.runAsNonRoot=false"#,
    );
    fails(
        c::run_as_non_root,
        json!({"spec": {"securityContext": {"runAsNonRoot": false}, "containers": mixed}}),
        "runAsNonRoot != true",
        r#"pod and containers "c", "d" must not set securityContext.runAsNonRoot=false"#,
    );
    fails(
        c::run_as_non_root,
        json!({"spec": {"containers": [
            {"name": "a", "securityContext": null},
            {"name": "b", "securityContext": {}},
            {"name": "d", "securityContext": {"runAsNonRoot": true}}
        ]}}),
        "runAsNonRoot != true",
        r#"pod or containers "a", "b" must set securityContext.runAsNonRoot=true"#,
    );
    passes(c::run_as_non_root, json!({"spec": {"securityContext": {"runAsNonRoot": true}, "containers": [{"name": "a"}]}}));
    // With the user-namespace relaxation, only hostUsers: false passes.
    assert_eq!(run_relaxed(c::run_as_non_root, json!({"spec": {"hostUsers": false}}), true), None);
    assert!(run_relaxed(c::run_as_non_root, json!({"spec": {"hostUsers": true, "containers": [{"name": "a"}]}}), true).is_some());
}

#[test]
fn pod_security_run_as_user() {
    fails(
        c::run_as_user,
        json!({"spec": {"securityContext": {"runAsUser": 0}, "containers": [{"name": "a", "securityContext": null}]}}),
        "runAsUser=0",
        "pod must not set runAsUser=0",
    );
    passes(c::run_as_user, json!({"spec": {"securityContext": {"runAsUser": 1000}, "containers": [{"name": "a"}]}}));
    passes(c::run_as_user, json!({"spec": {"containers": [{"name": "a", "securityContext": null}]}}));
    let list = json!([
        {"name": "a", "securityContext": null},
        {"name": "b", "securityContext": {}},
        {"name": "c", "securityContext": {"runAsUser": 0}},
        {"name": "d", "securityContext": {"runAsUser": 0}},
        {"name": "e", "securityContext": {"runAsUser": 1}}
    ]);
    fails(
        c::run_as_user,
        json!({"spec": {"securityContext": {"runAsUser": 1000}, "containers": list}}),
        "runAsUser=0",
        r#"containers "c", "d" must not set runAsUser=0"#,
    );
    fails(
        c::run_as_user,
        json!({"spec": {"securityContext": {"runAsUser": 0}, "containers": list}}),
        "runAsUser=0",
        r#"pod and containers "c", "d" must not set runAsUser=0"#,
    );
    let root_in_userns = json!({"spec": {"hostUsers": false, "securityContext": {"runAsUser": 0}}});
    assert_eq!(run_relaxed(c::run_as_user, root_in_userns.clone(), true), None);
    assert!(run(c::run_as_user, root_in_userns).is_some());
}

fn ids(level: Level, version: Version) -> Vec<&'static str> {
    checks_for(LevelVersion::new(level, version)).into_iter().map(|(id, _)| id).collect()
}

#[test]
fn pod_security_checks_by_level_and_version() {
    let baseline = vec![
        "appArmorProfile",
        "capabilities_baseline",
        "hostNamespaces",
        "hostPathVolumes",
        "hostPorts",
        "privileged",
        "procMount",
        "seLinuxOptions",
        "seccompProfile_baseline",
        "sysctls",
        "windowsHostProcess",
    ];
    assert_eq!(ids(Level::Baseline, Version::Latest), baseline);
    assert_eq!(ids(Level::Baseline, Version::V1(0)), baseline);
    assert!(ids(Level::Privileged, Version::Latest).is_empty());
    assert_eq!(
        ids(Level::Restricted, Version::Latest),
        vec![
            "appArmorProfile",
            "hostNamespaces",
            "hostPorts",
            "privileged",
            "procMount",
            "seLinuxOptions",
            "sysctls",
            "windowsHostProcess",
            "allowPrivilegeEscalation",
            "capabilities_restricted",
            "restrictedVolumes",
            "runAsNonRoot",
            "runAsUser",
            "seccompProfile_restricted",
        ]
    );
    // Before v1.8 no allowPrivilegeEscalation; before v1.19 the seccomp annotations;
    // before v1.22 the baseline capabilities; before v1.23 no runAsUser.
    assert_eq!(
        ids(Level::Restricted, Version::V1(0)),
        vec![
            "appArmorProfile",
            "capabilities_baseline",
            "hostNamespaces",
            "hostPorts",
            "privileged",
            "procMount",
            "seLinuxOptions",
            "seccompProfile_baseline",
            "sysctls",
            "windowsHostProcess",
            "restrictedVolumes",
            "runAsNonRoot",
        ]
    );
    assert!(ids(Level::Restricted, Version::V1(8)).contains(&"allowPrivilegeEscalation"));
    assert!(ids(Level::Restricted, Version::V1(18)).contains(&"seccompProfile_baseline"));
    assert!(!ids(Level::Restricted, Version::V1(19)).contains(&"seccompProfile_baseline"));
    assert!(ids(Level::Restricted, Version::V1(21)).contains(&"capabilities_baseline"));
    assert!(!ids(Level::Restricted, Version::V1(22)).contains(&"capabilities_baseline"));
    assert!(!ids(Level::Restricted, Version::V1(22)).contains(&"runAsUser"));
    assert!(ids(Level::Restricted, Version::V1(23)).contains(&"runAsUser"));
    // Definitions change with the version: sysctls at v1.27, SELinux at v1.31.
    let sysctl = json!({"securityContext": {"sysctls": [{"name": "net.ipv4.ip_local_reserved_ports"}]}});
    let at = |minor| super::evaluate(LevelVersion::new(Level::Baseline, Version::V1(minor)), &Value::Null, &sysctl).len();
    assert_eq!((at(26), at(27), at(33)), (1, 0, 0));
    // Versions past the newest check, and latest, evaluate as v1.32.
    assert_eq!(ids(Level::Restricted, Version::V1(33)), ids(Level::Restricted, Version::Latest));
    assert_eq!(ids(Level::Restricted, Version::V1(1000)), ids(Level::Restricted, Version::V1(32)));
}

/// The pod of upstream's messages: one privileged container, nothing else set.
fn privileged_pod() -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "x", "namespace": "ns"},
        "spec": {"containers": [{"name": "x", "image": "nginx", "securityContext": {"privileged": true}}]}
    })
}

fn labels(pairs: &[(&str, &str)]) -> Map<String, Value> {
    pairs.iter().map(|(k, v)| (k.to_string(), json!(v))).collect()
}

fn request<'a>(resource: &'a str, group: &'a str, object: &'a Value) -> Request<'a> {
    Request {
        operation: Operation::Create,
        group,
        resource,
        subresource: "",
        namespace: "ns",
        name: object.pointer("/metadata/name").and_then(Value::as_str).unwrap_or(""),
        username: "alice",
        object,
        old_object: None,
    }
}

const RESTRICTED_DETAIL: &str = concat!(
    r#"privileged (container "x" must not set securityContext.privileged=true), "#,
    r#"allowPrivilegeEscalation != false (container "x" must set securityContext.allowPrivilegeEscalation=false), "#,
    r#"unrestricted capabilities (container "x" must set securityContext.capabilities.drop=["ALL"]), "#,
    r#"runAsNonRoot != true (pod or container "x" must set securityContext.runAsNonRoot=true), "#,
    r#"seccompProfile (pod or container "x" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")"#
);

#[test]
fn pod_security_enforce_message() {
    let config = Configuration::default();
    let pod = privileged_pod();
    let restricted = labels(&[("pod-security.kubernetes.io/enforce", "restricted")]);
    let decision = admit(&config, &restricted, &request("pods", "", &pod));
    let refusal = decision.refusal.expect("refused");
    assert_eq!(refusal.code, 403);
    assert_eq!(refusal.message, format!(r#"pods "x" is forbidden: violates PodSecurity "restricted:latest": {RESTRICTED_DETAIL}"#));
    // A refused pod is not also warned about (warn defaults to the enforce level).
    assert!(decision.warnings.is_empty());
    assert_eq!(decision.audit_annotations["pod-security.kubernetes.io/enforce-policy"], "restricted:latest");

    let baseline = labels(&[("pod-security.kubernetes.io/enforce", "baseline")]);
    let refusal = admit(&config, &baseline, &request("pods", "", &pod)).refusal.expect("refused");
    assert_eq!(
        refusal.message,
        r#"pods "x" is forbidden: violates PodSecurity "baseline:latest": privileged (container "x" must not set securityContext.privileged=true)"#
    );

    let pinned = labels(&[("pod-security.kubernetes.io/enforce", "baseline"), ("pod-security.kubernetes.io/enforce-version", "v1.29")]);
    let refusal = admit(&config, &pinned, &request("pods", "", &pod)).refusal.expect("refused");
    assert!(refusal.message.contains(r#"violates PodSecurity "baseline:v1.29": privileged"#), "{}", refusal.message);
}

#[test]
fn pod_security_warn_and_audit_text() {
    let config = Configuration::default();
    let pod = privileged_pod();
    let warn = labels(&[("pod-security.kubernetes.io/warn", "restricted"), ("pod-security.kubernetes.io/audit", "baseline")]);
    let decision = admit(&config, &warn, &request("pods", "", &pod));
    assert!(decision.refusal.is_none());
    assert_eq!(decision.warnings, vec![format!(r#"would violate PodSecurity "restricted:latest": {RESTRICTED_DETAIL}"#)]);
    assert_eq!(
        decision.audit_annotations["pod-security.kubernetes.io/audit-violations"],
        r#"would violate PodSecurity "baseline:latest": privileged (container "x" must not set securityContext.privileged=true)"#
    );
    assert_eq!(decision.audit_annotations["pod-security.kubernetes.io/enforce-policy"], "privileged:latest");

    let baseline = labels(&[("pod-security.kubernetes.io/warn", "baseline")]);
    assert_eq!(
        admit(&config, &baseline, &request("pods", "", &pod)).warnings,
        vec![r#"would violate PodSecurity "baseline:latest": privileged (container "x" must not set securityContext.privileged=true)"#]
    );
    // An empty detail prints the reason alone.
    let bare = [Violation { reason: "r".into(), detail: String::new() }, Violation { reason: String::new(), detail: "d".into() }];
    assert_eq!(forbidden_detail(&bare), "r, unknown forbidden reason (d)");
}

#[test]
fn pod_security_templates_are_warned_about_never_enforced() {
    let config = Configuration::default();
    let template = privileged_pod();
    let deployment = json!({"metadata": {"name": "web"}, "spec": {"template": {"metadata": {}, "spec": template["spec"]}}});
    let cronjob = json!({"metadata": {"name": "c"}, "spec": {"jobTemplate": {"spec": {"template": {"spec": template["spec"]}}}}});
    let podtemplate = json!({"metadata": {"name": "t"}, "template": {"spec": template["spec"]}});
    let enforce = labels(&[("pod-security.kubernetes.io/enforce", "baseline")]);
    let expected = r#"would violate PodSecurity "baseline:latest": privileged (container "x" must not set securityContext.privileged=true)"#;
    for (group, resource, object) in [
        ("apps", "deployments", &deployment),
        ("apps", "replicasets", &deployment),
        ("apps", "statefulsets", &deployment),
        ("apps", "daemonsets", &deployment),
        ("batch", "jobs", &deployment),
        ("", "replicationcontrollers", &deployment),
        ("batch", "cronjobs", &cronjob),
        ("", "podtemplates", &podtemplate),
    ] {
        let decision = admit(&config, &enforce, &request(resource, group, object));
        assert!(decision.refusal.is_none(), "{resource}");
        assert_eq!(decision.warnings, vec![expected], "{resource}");
        assert!(!decision.audit_annotations.contains_key("pod-security.kubernetes.io/enforce-policy"));
    }
    // Not a pod-bearing resource, or a template that is absent: nothing to check.
    assert!(admit(&config, &enforce, &request("configmaps", "", &deployment)).warnings.is_empty());
    let bare = json!({"metadata": {"name": "web"}, "spec": {}});
    assert!(admit(&config, &enforce, &request("deployments", "apps", &bare)).warnings.is_empty());
    // A controller's subresource (scale) is not checked; a pod's ephemeralcontainers is.
    let mut scale = request("deployments", "apps", &deployment);
    scale.subresource = "scale";
    assert!(admit(&config, &enforce, &scale).warnings.is_empty());
    let pod = privileged_pod();
    let mut ephemeral = request("pods", "", &pod);
    ephemeral.subresource = "ephemeralcontainers";
    assert!(admit(&config, &enforce, &ephemeral).refusal.is_some());
    ephemeral.subresource = "status";
    assert!(admit(&config, &enforce, &ephemeral).refusal.is_none());
}

#[test]
fn pod_security_exemptions_and_updates() {
    let enforce = labels(&[("pod-security.kubernetes.io/enforce", "restricted")]);
    let config = Configuration {
        exemptions: Exemptions {
            usernames: vec!["admin".into()],
            namespaces: vec!["kube-system".into()],
            runtime_classes: vec!["kata".into()],
        },
        ..Configuration::default()
    };
    let pod = privileged_pod();
    let mut by_user = request("pods", "", &pod);
    by_user.username = "admin";
    let decision = admit(&config, &enforce, &by_user);
    assert!(decision.refusal.is_none());
    assert_eq!(decision.audit_annotations["pod-security.kubernetes.io/exempt"], "user");
    let mut in_namespace = request("pods", "", &pod);
    in_namespace.namespace = "kube-system";
    assert_eq!(admit(&config, &enforce, &in_namespace).audit_annotations["pod-security.kubernetes.io/exempt"], "namespace");
    let mut kata = pod.clone();
    kata["spec"]["runtimeClassName"] = json!("kata");
    let decision = admit(&config, &enforce, &request("pods", "", &kata));
    assert!(decision.refusal.is_none());
    assert_eq!(decision.audit_annotations["pod-security.kubernetes.io/exempt"], "runtimeClass");

    // An update that changes no image is not checked; one that does is.
    let mut relabelled = pod.clone();
    relabelled["metadata"]["labels"] = json!({"a": "b"});
    let mut update = request("pods", "", &relabelled);
    update.operation = Operation::Update;
    update.old_object = Some(&pod);
    assert!(admit(&config, &enforce, &update).refusal.is_none());
    let mut new_image = pod.clone();
    new_image["spec"]["containers"][0]["image"] = json!("nginx:2");
    update.object = &new_image;
    assert!(admit(&config, &enforce, &update).refusal.is_some());
    // Deletes are never checked.
    let mut delete = request("pods", "", &pod);
    delete.operation = Operation::Delete;
    assert!(admit(&config, &enforce, &delete).refusal.is_none());
}

#[test]
fn pod_security_levels_and_versions_parse() {
    assert_eq!(Level::parse("baseline"), Ok(Level::Baseline));
    assert_eq!(Level::parse("Baseline"), Err((Level::Restricted, "must be one of privileged, baseline, restricted")));
    assert_eq!(Version::parse("latest"), Ok(Version::Latest));
    assert_eq!(Version::parse("v1.0"), Ok(Version::V1(0)));
    assert_eq!(Version::parse("v1.33"), Ok(Version::V1(33)));
    for bad in ["", "v1", "v1.", "v1.01", "v2.0", "1.20", "v1.2a", "v1.-1", "v1.99999999999999999999", "v1.20\n"] {
        assert_eq!(Version::parse(bad), Err((Version::Latest, r#"must be "latest" or "v1.x""#)), "{bad:?}");
    }
    assert_eq!(LevelVersion::new(Level::Restricted, Version::V1(25)).to_string(), "restricted:v1.25");
    assert!(Version::V1(1000) < Version::Latest);
}

#[test]
fn pod_security_namespace_labels() {
    let restricted_latest = LevelVersion::new(Level::Restricted, Version::Latest);
    let privileged = LevelVersion::privileged();
    // No labels: the defaults.
    let (policy, errors) = Policy::from_labels(&Map::new(), Policy::default());
    assert_eq!((policy, errors.len()), (Policy::default(), 0));
    // Enforce alone raises warn to its level and version.
    let (policy, _) = Policy::from_labels(
        &labels(&[("pod-security.kubernetes.io/enforce", "baseline"), ("pod-security.kubernetes.io/enforce-version", "v1.25")]),
        Policy::default(),
    );
    assert_eq!(policy.enforce, LevelVersion::new(Level::Baseline, Version::V1(25)));
    assert_eq!(policy.warn, policy.enforce);
    assert_eq!(policy.audit, privileged);
    // …but not past a warn label, nor its version past a warn-version label.
    let (policy, _) = Policy::from_labels(
        &labels(&[("pod-security.kubernetes.io/enforce", "restricted"), ("pod-security.kubernetes.io/warn", "baseline")]),
        Policy::default(),
    );
    assert_eq!(policy.warn.level, Level::Baseline);
    let (policy, _) = Policy::from_labels(
        &labels(&[
            ("pod-security.kubernetes.io/enforce", "restricted"),
            ("pod-security.kubernetes.io/enforce-version", "v1.24"),
            ("pod-security.kubernetes.io/warn-version", "v1.30"),
        ]),
        Policy::default(),
    );
    assert_eq!(policy.warn, LevelVersion::new(Level::Restricted, Version::V1(30)));
    // Invalid values: enforce fails closed (restricted, latest), audit and warn open.
    let (policy, errors) = Policy::from_labels(
        &labels(&[
            ("pod-security.kubernetes.io/enforce", "foo"),
            ("pod-security.kubernetes.io/enforce-version", "v1.0.0"),
            ("pod-security.kubernetes.io/audit", "bar"),
            ("pod-security.kubernetes.io/warn", "baz"),
        ]),
        Policy::default(),
    );
    assert_eq!(policy, Policy { enforce: restricted_latest, audit: privileged, warn: privileged });
    let printed: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        printed,
        vec![
            r#"metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "foo": must be one of privileged, baseline, restricted"#,
            r#"metadata.labels[pod-security.kubernetes.io/enforce-version]: Invalid value: "v1.0.0": must be "latest" or "v1.x""#,
            r#"metadata.labels[pod-security.kubernetes.io/audit]: Invalid value: "bar": must be one of privileged, baseline, restricted"#,
            r#"metadata.labels[pod-security.kubernetes.io/warn]: Invalid value: "baz": must be one of privileged, baseline, restricted"#,
        ]
    );
    // A bad enforce level does not raise warn.
    let (policy, _) = Policy::from_labels(&labels(&[("pod-security.kubernetes.io/enforce", "nope")]), Policy::default());
    assert_eq!((policy.enforce, policy.warn), (restricted_latest, privileged));

    // A pod in a namespace with a bad label is enforced as restricted, and the audit
    // event says why.
    let pod = privileged_pod();
    let decision = admit(&Configuration::default(), &labels(&[("pod-security.kubernetes.io/enforce", "foo")]), &request("pods", "", &pod));
    assert!(decision.refusal.unwrap().message.contains(r#"violates PodSecurity "restricted:latest""#));
    assert_eq!(
        decision.audit_annotations["pod-security.kubernetes.io/error"],
        r#"Failed to parse policy: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "foo": must be one of privileged, baseline, restricted"#
    );

    // Namespaces: bad labels are refused, unless an update keeps the same bad labels.
    let config = Configuration::default();
    let bad = labels(&[("pod-security.kubernetes.io/enforce", "foo")]);
    let decide = |operation, labels: &Map<String, Value>, old: Option<&Map<String, Value>>| {
        admit_namespace(&config, operation, "", "ns", "ns", labels, old)
    };
    match decide(Operation::Create, &bad, None) {
        NamespaceDecision::Refused(err) => {
            assert_eq!(err.code, 422);
            assert_eq!(
                err.message,
                r#"Namespace "ns" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "foo": must be one of privileged, baseline, restricted"#
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(decide(Operation::Update, &bad, Some(&bad)), NamespaceDecision::Allowed { .. }));
    assert!(matches!(decide(Operation::Update, &bad, Some(&Map::new())), NamespaceDecision::Refused(_)));
    let warn_only = labels(&[("pod-security.kubernetes.io/warn", "baseline")]);
    assert!(matches!(decide(Operation::Create, &warn_only, None), NamespaceDecision::Allowed { warnings } if warnings.is_empty()));
}

#[test]
fn pod_security_namespace_tightening() {
    let config = Configuration {
        exemptions: Exemptions { namespaces: vec!["kube-system".into()], runtime_classes: vec!["kata".into()], ..Exemptions::default() },
        ..Configuration::default()
    };
    let baseline = labels(&[("pod-security.kubernetes.io/enforce", "baseline")]);
    let restricted = labels(&[("pod-security.kubernetes.io/enforce", "restricted")]);
    let update = |labels: &Map<String, Value>, old: &Map<String, Value>, ns: &str| {
        admit_namespace(&config, Operation::Update, "", ns, ns, labels, Some(old))
    };
    // Tightening asks for the existing pods; loosening or keeping does not.
    assert!(matches!(
        update(&restricted, &baseline, "ns"),
        NamespaceDecision::CheckExistingPods(lv) if lv == LevelVersion::new(Level::Restricted, Version::Latest)
    ));
    assert!(matches!(update(&baseline, &restricted, "ns"), NamespaceDecision::Allowed { warnings } if warnings.is_empty()));
    assert!(matches!(update(&restricted, &restricted, "ns"), NamespaceDecision::Allowed { .. }));
    // An exempt namespace is told its policy is ignored: the modes its labels set
    // (warn follows enforce here, but no label sets it).
    match update(&restricted, &Map::new(), "kube-system") {
        NamespaceDecision::Allowed { warnings } => assert_eq!(
            warnings,
            vec![r#"namespace "kube-system" is exempt from Pod Security, and the policy (enforce=restricted:latest) will be ignored"#]
        ),
        other => panic!("{other:?}"),
    }

    let pod = |name: &str, privileged: bool, owner: Option<&str>, runtime_class: Option<&str>| {
        let mut pod = json!({
            "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "securityContext": {"privileged": privileged}}]}
        });
        if let Some(uid) = owner {
            pod["metadata"]["ownerReferences"] = json!([{"uid": uid, "controller": true, "kind": "ReplicaSet", "name": "rs"}]);
        }
        if let Some(class) = runtime_class {
            pod["spec"]["runtimeClassName"] = json!(class);
        }
        pod
    };
    let pods = vec![
        pod("web-b", true, Some("rs1"), None),
        pod("web-a", true, Some("rs1"), None),
        pod("web-c", true, Some("rs1"), None),
        pod("fine", false, None, None),
        pod("kata", true, None, Some("kata")),
        pod("lone", true, Some("rs2"), None),
        pod("zed", false, None, Some("other")),
    ];
    let enforce = LevelVersion::new(Level::Baseline, Version::Latest);
    assert_eq!(
        existing_pod_warnings(&config, "ns", enforce, &pods, 3000),
        vec![
            r#"existing pods in namespace "ns" violate the new PodSecurity enforce level "baseline:latest""#.to_owned(),
            "lone (and 3 other pods): privileged".to_owned(),
        ]
    );
    // The first replica of each controller is checked before the other replicas.
    assert_eq!(
        existing_pod_warnings(&config, "ns", enforce, &pods, 3),
        vec![
            "new PodSecurity enforce level only checked against the first 3 of 6 existing pods".to_owned(),
            r#"existing pods in namespace "ns" violate the new PodSecurity enforce level "baseline:latest""#.to_owned(),
            "lone (and 1 other pod): privileged".to_owned(),
        ]
    );
    let restricted_lv = LevelVersion::new(Level::Restricted, Version::Latest);
    let warnings = existing_pod_warnings(&config, "ns", restricted_lv, &pods[3..4], 3000);
    assert_eq!(
        warnings[1],
        "fine: allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile"
    );
}
