//! A kube-rs controller over a custom resource on the real binary: the CRD made by
//! `#[derive(CustomResource)]` is installed and established, a `Controller` reconciles
//! each object into its status through the status subresource, and deleting the CRD
//! reaches a `watcher` as a Delete of every object.

mod kube_support;

use apiary_conformance::harness::Apiary;
use futures::StreamExt;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::{conditions, wait::await_condition, watcher};
use kube::{CustomResource, CustomResourceExt, ResourceExt};
use kube_support::client;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;

#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Gizmo", namespaced, status = "GizmoStatus", shortname = "gz")]
pub struct GizmoSpec {
    size: i32,
}

#[derive(Deserialize, Serialize, Clone, Debug, Default, JsonSchema)]
pub struct GizmoStatus {
    observed: i32,
}

/// The reconciler: the status says what size it saw.
async fn reconcile(gizmo: Arc<Gizmo>, api: Arc<Api<Gizmo>>) -> Result<Action, kube::Error> {
    let status = serde_json::json!({"status": {"observed": gizmo.spec.size}});
    api.patch_status(&gizmo.name_any(), &PatchParams::default(), &Patch::Merge(&status)).await?;
    Ok(Action::await_change())
}

fn retry(_: Arc<Gizmo>, _: &kube::Error, _: Arc<Api<Gizmo>>) -> Action {
    Action::requeue(Duration::from_millis(100))
}

async fn observed(api: &Api<Gizmo>, name: &str, want: i32) {
    let reached = await_condition(api.clone(), name, move |g: Option<&Gizmo>| {
        g.and_then(|g| g.status.as_ref()).is_some_and(|s| s.observed == want)
    });
    tokio::time::timeout(Duration::from_secs(20), reached).await.expect("the controller reconciles in time").expect("watch");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kube_rs_controller_reconciles_a_custom_resource() {
    let apiary = Apiary::start();
    let client = client(&apiary).await;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(&PostParams::default(), &Gizmo::crd()).await.expect("the derived CRD is accepted");
    let established = await_condition(crds.clone(), "gizmos.example.com", conditions::is_crd_established());
    tokio::time::timeout(Duration::from_secs(10), established).await.expect("established in time").expect("watch");

    let api: Api<Gizmo> = Api::namespaced(client.clone(), "default");
    let controller = tokio::spawn(
        Controller::new(api.clone(), watcher::Config::default())
            .run(reconcile, retry, Arc::new(api.clone()))
            .for_each(|_| async {}),
    );
    let (deleted_tx, mut deleted_rx) = tokio::sync::mpsc::unbounded_channel();
    let watching = tokio::spawn({
        let api = api.clone();
        async move {
            let mut events = watcher(api, watcher::Config::default()).boxed();
            while let Some(Ok(event)) = events.next().await {
                if let watcher::Event::Delete(gizmo) = event {
                    let _ = deleted_tx.send(gizmo.name_any());
                }
            }
        }
    });

    for (name, size) in [("small", 1), ("large", 9)] {
        api.create(&PostParams::default(), &Gizmo::new(name, GizmoSpec { size })).await.expect("created");
    }
    observed(&api, "small", 1).await;
    observed(&api, "large", 9).await;
    let grow = serde_json::json!({"spec": {"size": 2}});
    let grown = api.patch("small", &PatchParams::default(), &Patch::Merge(&grow)).await.expect("patched");
    assert_eq!(grown.metadata.generation, Some(2), "a spec change counts a generation");
    observed(&api, "small", 2).await;
    let after_status = api.get("small").await.unwrap();
    assert_eq!(after_status.metadata.generation, Some(2), "status writes do not");

    crds.delete("gizmos.example.com", &DeleteParams::default()).await.expect("deleted");
    let mut gone = Vec::new();
    while gone.len() < 2 {
        let name = tokio::time::timeout(Duration::from_secs(20), deleted_rx.recv()).await.expect("a Delete in time");
        gone.push(name.expect("the watcher runs"));
    }
    gone.sort();
    assert_eq!(gone, ["large", "small"]);
    controller.abort();
    watching.abort();
}
