//! Evicting pods against the real binary, as `kubectl drain` and controllers do it:
//! kube-rs evicts a pod its PodDisruptionBudget allows to go and is refused one it does
//! not; kubectl 1.33 drains a node through the eviction subresource. No disruption
//! controller runs, so the tests write the budgets' status themselves.

use apiary_conformance::harness::{ok, Apiary};
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::api::{Api, EvictParams, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use serde_json::json;

/// A kube-rs client for the server, without kube-rs's default retries: it retries a
/// 429 with backoff for minutes, and a refused eviction is what these tests look at.
async fn client(apiary: &Apiary) -> Client {
    let kubeconfig = Kubeconfig::read_from(&apiary.kubeconfig).expect("kubeconfig parses");
    let mut config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .expect("kubeconfig is usable");
    config.default_retry = false;
    Client::try_from(config).expect("client")
}

/// A running, ready pod labelled `app=<app>`, on `node` when given.
async fn running_pod(pods: &Api<Pod>, name: &str, app: &str, node: Option<&str>) {
    let mut pod = json!({
        "metadata": {"name": name, "labels": {"app": app}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}
    });
    if let Some(node) = node {
        pod["spec"]["nodeName"] = json!(node);
    }
    let pod: Pod = serde_json::from_value(pod).unwrap();
    pods.create(&PostParams::default(), &pod)
        .await
        .expect("create the pod");
    let status = json!({"status": {"phase": "Running",
        "conditions": [{"type": "Ready", "status": "True"}]}});
    pods.patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect("the pod runs");
}

/// A budget over `app=<app>` whose status allows `allowed` disruptions, written as the
/// disruption controller would write it.
async fn budget(client: &Client, name: &str, app: &str, allowed: i32) -> Api<PodDisruptionBudget> {
    let pdbs: Api<PodDisruptionBudget> = Api::namespaced(client.clone(), "default");
    let pdb: PodDisruptionBudget = serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": app}}}
    }))
    .unwrap();
    pdbs.create(&PostParams::default(), &pdb)
        .await
        .expect("create the budget");
    let status = json!({"status": {"observedGeneration": 1, "disruptionsAllowed": allowed,
        "currentHealthy": 2, "desiredHealthy": 1, "expectedPods": 2}});
    pdbs.patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect("set the budget's status");
    pdbs
}

#[tokio::test(flavor = "current_thread")]
async fn kube_rs_evicts_within_the_budget_and_is_refused_beyond_it() {
    let apiary = Apiary::start();
    let client = client(&apiary).await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    running_pod(&pods, "web-1", "web", None).await;
    running_pod(&pods, "web-2", "web", None).await;
    let pdbs = budget(&client, "web", "web", 1).await;

    let answer = pods
        .evict("web-1", &EvictParams::default())
        .await
        .expect("the budget allows one eviction");
    assert!(answer.is_success(), "{answer:?}");
    assert_eq!(answer.code, 201);
    assert!(pods.get_opt("web-1").await.expect("get").is_none());
    let status = pdbs
        .get("web")
        .await
        .expect("get the budget")
        .status
        .unwrap();
    assert_eq!(status.disruptions_allowed, 0);
    assert!(status.disrupted_pods.unwrap().contains_key("web-1"));

    let err = pods
        .evict("web-2", &EvictParams::default())
        .await
        .expect_err("the budget is spent");
    match err {
        kube::Error::Api(status) => {
            assert_eq!(status.code, 429);
            assert_eq!(status.reason, "TooManyRequests");
            assert_eq!(
                status.message,
                "Cannot evict pod as it would violate the pod's disruption budget."
            );
            let causes = status.details.expect("details").causes;
            assert_eq!(causes.len(), 1);
            assert_eq!(causes[0].reason, "DisruptionBudget");
            assert_eq!(
                causes[0].message,
                "The disruption budget web needs 1 healthy pods and has 2 currently"
            );
        }
        other => panic!("expected a Status, got {other:?}"),
    }
    assert!(pods.get_opt("web-2").await.expect("get").is_some());

    // A dry run of an allowed eviction leaves the pod and the budget as they are.
    let allow = json!({"status": {"disruptionsAllowed": 1}});
    let before = pdbs
        .patch_status("web", &PatchParams::default(), &Patch::Merge(&allow))
        .await
        .unwrap();
    let dry = EvictParams {
        post_options: PostParams {
            dry_run: true,
            ..PostParams::default()
        },
        ..EvictParams::default()
    };
    assert!(pods
        .evict("web-2", &dry)
        .await
        .expect("dry run")
        .is_success());
    assert!(pods.get_opt("web-2").await.unwrap().is_some());
    let after = pdbs.get("web").await.unwrap();
    assert_eq!(after.status.unwrap().disruptions_allowed, 1);
    assert_eq!(
        after.metadata.resource_version,
        before.metadata.resource_version
    );
}

#[tokio::test(flavor = "current_thread")]
async fn kubectl_drains_a_node_through_evictions() {
    let apiary = Apiary::start();
    let client = client(&apiary).await;
    let nodes: Api<Node> = Api::all(client.clone());
    for name in ["node-a", "node-b"] {
        let node: Node = serde_json::from_value(json!({"metadata": {"name": name}})).unwrap();
        nodes
            .create(&PostParams::default(), &node)
            .await
            .expect("create the node");
    }
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    running_pod(&pods, "web-1", "web", Some("node-a")).await;
    running_pod(&pods, "web-2", "web", Some("node-a")).await;
    running_pod(&pods, "db-1", "db", Some("node-b")).await;
    running_pod(&pods, "db-2", "db", Some("node-b")).await;
    let web = budget(&client, "web", "web", 2).await;
    budget(&client, "db", "db", 0).await;

    // The budget allows both: node-a is cordoned and emptied. The pods have no
    // controller, hence --force; no kubelet ends them, hence no grace period.
    let out = ok(&apiary.kubectl("1.33", &["drain", "node-a", "--force", "--grace-period=0", "--timeout=60s"]));
    assert!(out.contains("pod/web-1 evicted"), "{out}");
    assert!(out.contains("pod/web-2 evicted"), "{out}");
    assert!(out.contains("node/node-a drained"), "{out}");
    assert!(pods.get_opt("web-1").await.unwrap().is_none());
    assert!(pods.get_opt("web-2").await.unwrap().is_none());
    let node_a = nodes.get("node-a").await.unwrap();
    assert_eq!(node_a.spec.unwrap().unschedulable, Some(true));
    assert_eq!(
        web.get("web")
            .await
            .unwrap()
            .status
            .unwrap()
            .disruptions_allowed,
        0
    );

    // node-b's budget allows none: the drain keeps being refused until it gives up.
    let out = apiary.kubectl("1.33", &["drain", "node-b", "--force", "--timeout=2s"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Cannot evict pod as it would violate the pod's disruption budget."),
        "{stderr}"
    );
    assert!(pods.get_opt("db-1").await.unwrap().is_some());
    assert!(pods.get_opt("db-2").await.unwrap().is_some());
}
