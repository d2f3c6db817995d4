//! kube-rs against the real binary: discovery finds the built-in API with the right
//! scopes and verbs, and typed Api calls round-trip objects.

mod kube_support;

use apiary_conformance::harness::Apiary;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube::core::GroupVersionKind;
use kube::discovery::{verbs, Discovery, Scope};
use kube_support::client;

#[tokio::test(flavor = "current_thread")]
async fn discovery_finds_the_built_in_api() {
    let apiary = Apiary::start();
    let client = client(&apiary).await;
    let discovery = Discovery::new(client).run().await.expect("discovery runs");

    let groups: Vec<String> = discovery.groups().map(|g| g.name().to_owned()).collect();
    for group in [
        "",
        "apps",
        "batch",
        "rbac.authorization.k8s.io",
        "apiextensions.k8s.io",
    ] {
        assert!(
            groups.iter().any(|g| g == group),
            "{group:?} missing from {groups:?}"
        );
    }
    let (deployments, caps) = discovery
        .resolve_gvk(&GroupVersionKind::gvk("apps", "v1", "Deployment"))
        .expect("Deployment is discovered");
    assert_eq!(deployments.plural, "deployments");
    assert_eq!(caps.scope, Scope::Namespaced);
    for verb in [
        verbs::CREATE,
        verbs::GET,
        verbs::LIST,
        verbs::UPDATE,
        verbs::DELETE,
    ] {
        assert!(caps.supports_operation(verb), "deployments lack {verb}");
    }
    let (_, caps) = discovery
        .resolve_gvk(&GroupVersionKind::gvk("", "v1", "Namespace"))
        .expect("Namespace is discovered");
    assert_eq!(caps.scope, Scope::Cluster);
    let autoscaling = discovery.get("autoscaling").expect("autoscaling group");
    assert_eq!(autoscaling.preferred_version_or_latest(), "v2");
}

#[tokio::test(flavor = "current_thread")]
async fn typed_api_round_trips_a_config_map() {
    let apiary = Apiary::start();
    let api: Api<ConfigMap> = Api::namespaced(client(&apiary).await, "default");
    let cm: ConfigMap = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "from-kube-rs"},
        "data": {"k": "v"}
    }))
    .unwrap();
    let created = api
        .create(&PostParams::default(), &cm)
        .await
        .expect("create");
    assert!(created.metadata.uid.is_some());
    let got = api.get("from-kube-rs").await.expect("get");
    assert_eq!(got.data.unwrap()["k"], "v");
    // Its ConfigMap, and the namespace's kube-root-ca.crt.
    let listed = api.list(&ListParams::default()).await.expect("list");
    assert_eq!(listed.items.len(), 2);
    assert!(listed.metadata.resource_version.is_some());

    let err = api.create(&PostParams::default(), &cm).await.unwrap_err();
    match err {
        kube::Error::Api(status) => {
            assert_eq!(status.code, 409);
            assert_eq!(status.reason, "AlreadyExists");
        }
        other => panic!("expected a Status, got {other:?}"),
    }
    api.delete("from-kube-rs", &DeleteParams::default())
        .await
        .expect("delete");
    assert!(api
        .get_opt("from-kube-rs")
        .await
        .expect("get_opt")
        .is_none());
}

/// kube-rs's watcher sees every change to a ConfigMap, in both of its initial-list
/// modes: list-then-watch, and the streaming list (sendInitialEvents with the
/// initial-events-end bookmark).
async fn watcher_sees_changes(config: kube::runtime::watcher::Config) {
    use futures::StreamExt;
    use kube::runtime::watcher::{self, Event};

    let apiary = Apiary::start();
    let api: Api<ConfigMap> = Api::namespaced(client(&apiary).await, "default");
    let cm = |v: &str| -> ConfigMap {
        serde_json::from_value(serde_json::json!({"metadata": {"name": "w"}, "data": {"k": v}}))
            .unwrap()
    };
    api.create(&PostParams::default(), &cm("1"))
        .await
        .expect("create");

    // Only its object: the namespace also holds kube-root-ca.crt.
    let mut events = watcher::watcher(api.clone(), config.fields("metadata.name=w")).boxed();
    macro_rules! next {
        () => {
            tokio::time::timeout(std::time::Duration::from_secs(30), events.next())
                .await
                .expect("an event within 30 s")
                .expect("the watcher goes on")
                .expect("no watch error")
        };
    }
    // The initial list: Init, the existing object, InitDone.
    assert!(matches!(next!(), Event::Init));
    match next!() {
        Event::InitApply(o) => assert_eq!(o.data.unwrap()["k"], "1"),
        other => panic!("expected the existing object, got {other:?}"),
    }
    assert!(matches!(next!(), Event::InitDone));

    let mut current = api.get("w").await.unwrap();
    current.data = Some([("k".to_owned(), "2".to_owned())].into());
    api.replace("w", &PostParams::default(), &current)
        .await
        .expect("replace");
    match next!() {
        Event::Apply(o) => assert_eq!(o.data.unwrap()["k"], "2"),
        other => panic!("expected the update, got {other:?}"),
    }
    api.delete("w", &DeleteParams::default())
        .await
        .expect("delete");
    match next!() {
        Event::Delete(o) => assert_eq!(o.metadata.name.as_deref(), Some("w")),
        other => panic!("expected the delete, got {other:?}"),
    }
}

#[tokio::test(flavor = "current_thread")]
async fn watcher_with_list_then_watch() {
    watcher_sees_changes(kube::runtime::watcher::Config::default()).await;
}

#[tokio::test(flavor = "current_thread")]
async fn watcher_with_streaming_list() {
    watcher_sees_changes(kube::runtime::watcher::Config::default().streaming_lists()).await;
}
