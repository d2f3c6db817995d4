//! The RBAC decision alone, in the core: a ServiceAccount reading a ConfigMap, allowed
//! by one of 1,000 RoleBindings to one of 1,000 Roles in its namespace, beside the
//! bootstrap policy's 66 ClusterRoles and 47 ClusterRoleBindings; and the same user
//! denied (every binding that names it is looked at). Also the time to build the
//! index from those objects, which happens once per change to a role or binding.
//!
//! Run: `cargo bench -p apiary-core --bench rbac_authorize`

use apiary_core::authn::UserInfo;
use apiary_core::authorization::rbac::{self, Index, Objects};
use apiary_core::authorization::Attributes;
use apiary_core::storage::KeyValue;
use bytes::Bytes;
use serde_json::{json, Value};
use std::hint::black_box;
use std::time::{Duration, Instant};

const POLICY: &str = include_str!("../src/authorization/rbac/bootstrap_policy.json");
const N: usize = 1000;

fn kv(key: String, value: &Value) -> KeyValue {
    KeyValue {
        key,
        value: Bytes::from(value.to_string()),
        create_revision: 1,
        mod_revision: 1,
    }
}

fn objects() -> [Vec<KeyValue>; 4] {
    let policy: Vec<Value> = serde_json::from_str(POLICY).unwrap();
    let mut lists: [Vec<KeyValue>; 4] = Default::default();
    for (i, o) in policy.iter().enumerate() {
        let slot = match o["kind"].as_str().unwrap() {
            "ClusterRole" => 0,
            "Role" => 1,
            "ClusterRoleBinding" => 2,
            _ => 3,
        };
        lists[slot].push(kv(format!("/bootstrap/{i}"), o));
    }
    for i in 0..N {
        let role = json!({"metadata": {"name": format!("role-{i:04}"), "namespace": "bench"},
            "rules": [{"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["configmaps", "secrets"]},
                      {"verbs": ["get"], "apiGroups": ["apps"], "resources": ["deployments"], "resourceNames": [format!("app-{i}")]}]});
        lists[1].push(kv(format!("/roles/bench/role-{i:04}"), &role));
        let binding = json!({"metadata": {"name": format!("binding-{i:04}"), "namespace": "bench"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": format!("role-{i:04}")},
            "subjects": [{"kind": "ServiceAccount", "name": format!("sa-{i:04}"), "namespace": "bench"}]});
        lists[3].push(kv(format!("/rolebindings/bench/binding-{i:04}"), &binding));
    }
    lists
}

fn median(mut rounds: Vec<Duration>) -> (Duration, Duration, Duration) {
    rounds.sort();
    (rounds[0], rounds[rounds.len() / 2], rounds[rounds.len() - 1])
}

fn main() {
    let lists = objects();
    let build = || {
        Index::build(Objects {
            cluster_roles: &lists[0],
            roles: &lists[1],
            cluster_role_bindings: &lists[2],
            role_bindings: &lists[3],
        })
    };
    let mut builds = Vec::new();
    for _ in 0..9 {
        let start = Instant::now();
        black_box(build());
        builds.push(start.elapsed());
    }
    let index = build();
    let user = UserInfo::named(
        "system:serviceaccount:bench:sa-0500",
        vec![
            "system:serviceaccounts".to_owned(),
            "system:serviceaccounts:bench".to_owned(),
            "system:authenticated".to_owned(),
        ],
    );
    let attributes = |verb: &'static str| Attributes {
        user: &user,
        verb,
        resource_request: true,
        namespace: "bench",
        api_group: "",
        api_version: "v1",
        resource: "configmaps",
        subresource: "",
        name: "settings",
        path: "/api/v1/namespaces/bench/configmaps/settings",
    };
    let allowed = attributes("get");
    let denied = attributes("delete");
    assert_eq!(rbac::authorize(&index, &allowed), apiary_core::authorization::Opinion::Allow);
    assert!(matches!(rbac::authorize(&index, &denied), apiary_core::authorization::Opinion::NoOpinion(_)));
    let per_round = 200_000u32;
    let time = |a: &Attributes<'_>| {
        let mut rounds = Vec::new();
        for _ in 0..9 {
            let start = Instant::now();
            for _ in 0..per_round {
                black_box(rbac::authorize(black_box(&index), black_box(a)));
            }
            rounds.push(start.elapsed() / per_round);
        }
        median(rounds)
    };
    let ns = |d: Duration| d.as_secs_f64() * 1e9;
    for (what, a) in [("allowed", &allowed), ("denied", &denied)] {
        let (min, med, max) = time(a);
        println!(
            "rbac decision ({what}; {N} Roles and {N} RoleBindings in the namespace, the bootstrap policy beside): \
             median {:.0} ns, rounds min {:.0} ns max {:.0} ns",
            ns(med),
            ns(min),
            ns(max)
        );
    }
    let (min, med, max) = median(builds);
    println!(
        "rbac index build ({} objects): median {:.2} ms, min {:.2} ms max {:.2} ms",
        lists.iter().map(Vec::len).sum::<usize>(),
        med.as_secs_f64() * 1e3,
        min.as_secs_f64() * 1e3,
        max.as_secs_f64() * 1e3
    );
}
