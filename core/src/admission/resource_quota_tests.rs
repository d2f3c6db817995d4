//! Cases after upstream's resourcequota admission and quota evaluator tests, in our words.

use super::*;
use serde_json::json;

fn quota(hard: Value, used: Value) -> Value {
    json!({"metadata": {"name": "quota", "namespace": "ns"}, "spec": {"hard": hard}, "status": {"hard": hard, "used": used}})
}

fn create<'a>(group: &'a str, resource: &'a str, object: &'a Value) -> QuotaRequest<'a> {
    QuotaRequest { group, resource, operation: Operation::Create, object, old_object: None, now: None }
}

fn list(pairs: &[(&str, &str)]) -> ResourceList {
    pairs.iter().map(|(k, v)| (k.to_string(), Quantity::parse(v).unwrap())).collect()
}

fn pod(containers: Value) -> Value {
    json!({"metadata": {"name": "p", "namespace": "ns"}, "spec": {"containers": containers}})
}

fn container(name: &str, requests: Value, limits: Value) -> Value {
    json!({"name": name, "resources": {"requests": requests, "limits": limits}})
}

#[test]
fn an_object_count_over_its_limit_is_refused_with_upstreams_message() {
    let cm = json!({"metadata": {"name": "cm", "namespace": "ns"}});
    let full = quota(json!({"configmaps": "2"}), json!({"configmaps": "2"}));
    let message = check(&[full], &create("", "configmaps", &cm)).unwrap_err();
    assert_eq!(message, "exceeded quota: quota, requested: configmaps=1, used: configmaps=2, limited: configmaps=2");
    let status = forbidden("", "configmaps", &cm, &message).to_value();
    assert_eq!(status["code"], 403);
    assert_eq!(status["reason"], "Forbidden");
    assert_eq!(
        status["message"],
        "configmaps \"cm\" is forbidden: exceeded quota: quota, requested: configmaps=1, used: configmaps=2, limited: configmaps=2"
    );
    assert_eq!(status["details"]["kind"], "configmaps");
}

#[test]
fn an_admitted_create_charges_every_governing_quota() {
    let cm = json!({"metadata": {"name": "cm"}});
    let room = quota(json!({"configmaps": "3", "count/configmaps": "5", "secrets": "1"}),
        json!({"configmaps": "1", "count/configmaps": "1", "secrets": "1"}));
    let other = quota(json!({"pods": "1"}), json!({"pods": "0"}));
    let charges = check(&[other, room.clone()], &create("", "configmaps", &cm)).unwrap();
    assert_eq!(charges.len(), 1);
    assert_eq!(charges[0].index, 1);
    assert_eq!(charges[0].used, list(&[("configmaps", "2"), ("count/configmaps", "2"), ("secrets", "1")]));
    let charged = apply_charge(&room, &charges[0]);
    assert_eq!(charged["status"]["used"], json!({"configmaps": "2", "count/configmaps": "2", "secrets": "1"}));
    // Deleting it gives the usage back, never below zero.
    let released = release(&charged, "", "configmaps", &cm, None);
    assert_eq!(released["status"]["used"], json!({"configmaps": "1", "count/configmaps": "1", "secrets": "1"}));
    let empty = quota(json!({"configmaps": "3"}), json!({"configmaps": "0"}));
    assert_eq!(release(&empty, "", "configmaps", &cm, None)["status"]["used"], json!({"configmaps": "0"}));
}

#[test]
fn object_counts_name_group_and_resource() {
    let d = json!({"metadata": {"name": "d"}});
    assert_eq!(usage("apps", "deployments", &d, None), list(&[("count/deployments.apps", "1")]));
    assert_eq!(usage("", "secrets", &d, None), list(&[("count/secrets", "1"), ("secrets", "1")]));
    assert_eq!(usage("", "serviceaccounts", &d, None), list(&[("count/serviceaccounts", "1")]));
    let q = quota(json!({"count/deployments.apps": "1"}), json!({"count/deployments.apps": "1"}));
    assert_eq!(
        check(&[q], &create("apps", "deployments", &d)).unwrap_err(),
        "exceeded quota: quota, requested: count/deployments.apps=1, used: count/deployments.apps=1, limited: count/deployments.apps=1"
    );
    // Only creates are counted for plain objects.
    assert!(applies_to("", "configmaps", "", Operation::Create));
    assert!(!applies_to("", "configmaps", "", Operation::Update));
    assert!(!applies_to("", "events", "", Operation::Create));
    assert!(applies_to("", "pods", "resize", Operation::Update));
    assert!(!applies_to("", "pods", "status", Operation::Update));
}

#[test]
fn a_pod_counts_its_requests_and_limits_with_init_containers_and_overhead() {
    let mut p = pod(json!([
        container("a", json!({"cpu": "100m", "memory": "1Gi", "ephemeral-storage": "1Gi", "example.com/gpu": "1"}),
            json!({"cpu": "200m", "memory": "2Gi"})),
        container("b", json!({"cpu": "200m", "memory": "1Gi", "hugepages-2Mi": "4Mi"}), json!({"cpu": "400m"})),
    ]));
    p["spec"]["initContainers"] = json!([container("init", json!({"cpu": "1"}), json!({}))]);
    let u = usage("", "pods", &p, None);
    assert_eq!(u, list(&[
        ("count/pods", "1"),
        ("pods", "1"),
        ("cpu", "1"),
        ("requests.cpu", "1"),
        ("limits.cpu", "600m"),
        ("memory", "2Gi"),
        ("requests.memory", "2Gi"),
        ("limits.memory", "2Gi"),
        ("ephemeral-storage", "1Gi"),
        ("requests.ephemeral-storage", "1Gi"),
        ("hugepages-2Mi", "4Mi"),
        ("requests.hugepages-2Mi", "4Mi"),
        ("requests.example.com/gpu", "1"),
    ]));
    // Overhead is added to requests, and to a limit only where one is set.
    p["spec"]["overhead"] = json!({"cpu": "50m", "memory": "100Mi"});
    p["spec"]["containers"][0]["resources"]["limits"] = json!({"cpu": "200m"});
    let u = usage("", "pods", &p, None);
    assert_eq!(u["requests.cpu"].canonical(), "1050m");
    assert_eq!(u["limits.cpu"].canonical(), "650m");
    assert!(!u.contains_key("limits.memory"));
    // A pod past its deletion grace period holds nothing but its object count.
    p["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
    p["metadata"]["deletionGracePeriodSeconds"] = json!(30);
    let deleted = crate::time::parse_rfc3339("2026-01-01T00:00:00Z").unwrap();
    assert!(usage("", "pods", &p, Some(deleted + 30)).contains_key("pods"));
    assert_eq!(usage("", "pods", &p, Some(deleted + 31)), list(&[("count/pods", "1")]));
    assert!(usage("", "pods", &p, None).contains_key("pods"));
    // A finished pod keeps only its object count.
    p["status"] = json!({"phase": "Succeeded"});
    assert_eq!(usage("", "pods", &p, None), list(&[("count/pods", "1")]));
}

#[test]
fn pod_quota_refusals_list_every_exceeded_resource_in_order() {
    let p = pod(json!([container("a", json!({"cpu": "1", "memory": "1Gi"}), json!({"cpu": "2", "memory": "1Gi"}))]));
    let q = quota(
        json!({"requests.cpu": "1500m", "limits.cpu": "2", "requests.memory": "10Gi", "pods": "10"}),
        json!({"requests.cpu": "1", "limits.cpu": "1", "requests.memory": "0", "pods": "3"}),
    );
    assert_eq!(
        check(&[q], &create("", "pods", &p)).unwrap_err(),
        "exceeded quota: quota, requested: limits.cpu=2,requests.cpu=1, used: limits.cpu=1,requests.cpu=1, limited: limits.cpu=2,requests.cpu=1500m"
    );
}

#[test]
fn a_quota_on_cpu_or_memory_requires_every_container_to_name_it() {
    let mut p = pod(json!([container("a", json!({"cpu": "1"}), json!({})), container("b", json!({}), json!({}))]));
    p["spec"]["initContainers"] = json!([container("init", json!({}), json!({"memory": "1Gi"}))]);
    let q = quota(json!({"requests.cpu": "10", "limits.memory": "10Gi"}), json!({"requests.cpu": "0", "limits.memory": "0"}));
    assert_eq!(
        check(&[q], &create("", "pods", &p)).unwrap_err(),
        "failed quota: quota: must specify limits.memory for: a,b; requests.cpu for: b,init"
    );
    // Resources outside that list require nothing.
    let q = quota(json!({"requests.ephemeral-storage": "1Gi"}), json!({"requests.ephemeral-storage": "0"}));
    assert!(check(&[q], &create("", "pods", &p)).is_ok());
}

#[test]
fn a_quota_without_usage_yet_refuses_what_it_governs() {
    let cm = json!({"metadata": {"name": "cm"}});
    let q = json!({"metadata": {"name": "fresh"}, "spec": {"hard": {"configmaps": "2", "count/configmaps": "1", "pods": "1"}}});
    assert_eq!(
        check(&[q], &create("", "configmaps", &cm)).unwrap_err(),
        "status unknown for quota: fresh, resources: configmaps,count/configmaps"
    );
}

#[test]
fn scopes_decide_which_pods_a_quota_governs() {
    let best_effort = pod(json!([{"name": "a"}]));
    let burstable = pod(json!([container("a", json!({"cpu": "100m"}), json!({}))]));
    let mut scoped = quota(json!({"pods": "0"}), json!({"pods": "0"}));
    scoped["spec"]["scopes"] = json!(["BestEffort"]);
    assert!(quota_matches(&scoped, "", "pods", &best_effort));
    assert!(!quota_matches(&scoped, "", "pods", &burstable));
    assert!(check(std::slice::from_ref(&scoped), &create("", "pods", &burstable)).unwrap().is_empty());
    assert!(check(std::slice::from_ref(&scoped), &create("", "pods", &best_effort)).is_err());
    // Scoped quotas govern no other kind.
    let mut counting = quota(json!({"configmaps": "0"}), json!({"configmaps": "0"}));
    counting["spec"]["scopes"] = json!(["NotTerminating"]);
    assert!(!quota_matches(&counting, "", "configmaps", &json!({})));

    let mut terminating = best_effort.clone();
    terminating["spec"]["activeDeadlineSeconds"] = json!(30);
    let req = |scope: &str, op: &str, values: Value| ScopeRequirement {
        scope: scope.into(),
        operator: op.into(),
        values: serde_json::from_value(values).unwrap(),
    };
    assert!(scope_matches(&req("Terminating", "Exists", json!([])), "", "pods", &terminating));
    assert!(!scope_matches(&req("NotTerminating", "Exists", json!([])), "", "pods", &terminating));
    assert!(scope_matches(&req("NotTerminating", "Exists", json!([])), "", "pods", &best_effort));
    assert!(scope_matches(&req("NotBestEffort", "Exists", json!([])), "", "pods", &burstable));

    let mut high = best_effort.clone();
    high["spec"]["priorityClassName"] = json!("high");
    assert!(scope_matches(&req("PriorityClass", "In", json!(["high", "mid"])), "", "pods", &high));
    assert!(!scope_matches(&req("PriorityClass", "In", json!(["low"])), "", "pods", &high));
    assert!(scope_matches(&req("PriorityClass", "NotIn", json!(["low"])), "", "pods", &best_effort));
    assert!(scope_matches(&req("PriorityClass", "Exists", json!([])), "", "pods", &high));
    assert!(scope_matches(&req("PriorityClass", "DoesNotExist", json!([])), "", "pods", &best_effort));

    let mut spread = best_effort.clone();
    spread["spec"]["affinity"] = json!({"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "podAffinityTerm": {"topologyKey": "k", "namespaceSelector": {}}}]}});
    assert!(scope_matches(&req("CrossNamespacePodAffinity", "Exists", json!([])), "", "pods", &spread));
    assert!(!scope_matches(&req("CrossNamespacePodAffinity", "Exists", json!([])), "", "pods", &best_effort));

    // scopeSelector expressions join the scopes: all must hold.
    let mut selected = quota(json!({"pods": "5"}), json!({"pods": "0"}));
    selected["spec"]["scopeSelector"] =
        json!({"matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]});
    assert!(quota_matches(&selected, "", "pods", &high));
    assert!(!quota_matches(&selected, "", "pods", &best_effort));
}

#[test]
fn services_count_node_ports_and_load_balancers() {
    let svc = |kind: &str| json!({"metadata": {"name": "s"}, "spec": {"type": kind, "ports": [{"port": 80}, {"port": 443}]}});
    assert_eq!(usage("", "services", &svc("ClusterIP"), None), list(&[
        ("count/services", "1"), ("services", "1"), ("services.loadbalancers", "0"), ("services.nodeports", "0")]));
    assert_eq!(usage("", "services", &svc("LoadBalancer"), None), list(&[
        ("count/services", "1"), ("services", "1"), ("services.loadbalancers", "1"), ("services.nodeports", "2")]));
    let q = quota(json!({"services.nodeports": "1"}), json!({"services.nodeports": "0"}));
    let node_port = svc("NodePort");
    assert_eq!(
        check(&[q], &create("", "services", &node_port)).unwrap_err(),
        "exceeded quota: quota, requested: services.nodeports=2, used: services.nodeports=0, limited: services.nodeports=1"
    );
    // An update pays only for what it adds: a ClusterIP service becoming a load balancer.
    let q = quota(json!({"services": "1", "services.loadbalancers": "1"}), json!({"services": "1", "services.loadbalancers": "0"}));
    let mut old = svc("ClusterIP");
    old["metadata"]["resourceVersion"] = json!("7");
    let new = svc("LoadBalancer");
    let update = QuotaRequest { group: "", resource: "services", operation: Operation::Update, object: &new, old_object: Some(&old), now: None };
    assert_eq!(delta(&update), list(&[("services.loadbalancers", "1"), ("services.nodeports", "2")]));
    let charges = check(&[q], &update).unwrap();
    assert_eq!(charges[0].used, list(&[("services", "1"), ("services.loadbalancers", "1")]));
    // Without allocated node ports, only the ports naming one count.
    let mut lb = svc("LoadBalancer");
    lb["spec"]["allocateLoadBalancerNodePorts"] = json!(false);
    lb["spec"]["ports"][0]["nodePort"] = json!(30000);
    assert_eq!(usage("", "services", &lb, None)["services.nodeports"].canonical(), "1");
}

#[test]
fn claims_count_storage_in_whole_units_and_per_class() {
    let claim = json!({"metadata": {"name": "c"}, "spec": {"storageClassName": "gold", "resources": {"requests": {"storage": "1500m"}}}});
    assert_eq!(usage("", "persistentvolumeclaims", &claim, None), list(&[
        ("count/persistentvolumeclaims", "1"),
        ("persistentvolumeclaims", "1"),
        ("gold.storageclass.storage.k8s.io/persistentvolumeclaims", "1"),
        ("requests.storage", "2"),
        ("gold.storageclass.storage.k8s.io/requests.storage", "2"),
    ]));
    let q = quota(json!({"gold.storageclass.storage.k8s.io/requests.storage": "10Gi"}),
        json!({"gold.storageclass.storage.k8s.io/requests.storage": "9Gi"}));
    let big = json!({"metadata": {"name": "c"}, "spec": {"storageClassName": "gold", "resources": {"requests": {"storage": "2Gi"}}}});
    assert_eq!(
        check(std::slice::from_ref(&q), &create("", "persistentvolumeclaims", &big)).unwrap_err(),
        "exceeded quota: quota, requested: gold.storageclass.storage.k8s.io/requests.storage=2Gi, \
         used: gold.storageclass.storage.k8s.io/requests.storage=9Gi, limited: gold.storageclass.storage.k8s.io/requests.storage=10Gi"
    );
    // Another class is not that quota's concern.
    let silver = json!({"spec": {"storageClassName": "silver", "resources": {"requests": {"storage": "2Gi"}}}});
    assert!(check(&[q], &create("", "persistentvolumeclaims", &silver)).unwrap().is_empty());
    // The beta annotation names the class first.
    let annotated = json!({"metadata": {"annotations": {"volume.beta.kubernetes.io/storage-class": "bronze"}},
        "spec": {"storageClassName": "gold"}});
    assert!(usage("", "persistentvolumeclaims", &annotated, None).contains_key("bronze.storageclass.storage.k8s.io/persistentvolumeclaims"));
}
