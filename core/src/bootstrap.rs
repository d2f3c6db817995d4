//! What the server writes of itself after it starts, as kube-apiserver's post-start
//! hooks do: the default namespaces, the system priority classes, then the bootstrap RBAC policy (upstream's
//! `rbac/bootstrap-roles`), each object created when missing and reconciled when
//! present; then the `kubernetes` Service in `default` (its cluster IP the first of
//! `--service-cluster-ip-range`, claimed as any Service's) and its Endpoints and
//! EndpointSlice pointing at this server (upstream's endpoint reconciler); and API
//! Priority and Fairness' mandatory and suggested FlowSchemas and
//! PriorityLevelConfigurations, kept as upstream's APF configuration ensurer keeps
//! them ([`flowcontrol`]), which [`Bootstrap::flowcontrol`] alone writes again on
//! later passes; and `kube-system/extension-apiserver-authentication`
//! ([`authentication_info`]), which [`Bootstrap::authentication_info`] writes again.
//!
//! [`Bootstrap`] is a state machine over requests: the adapter (or the harness) runs
//! each request it hands out as the privileged loopback user and gives back the
//! answer. Objects that fail are tried again on the next pass.

mod api_service;
mod authentication_info;
pub(crate) mod flowcontrol;

use crate::authorization::rbac::reconcile;
use bytes::Bytes;
use serde_json::Value;

/// The bootstrap RBAC policy of kube-apiserver v1.33: every default ClusterRole,
/// ClusterRoleBinding, and the Roles and RoleBindings of kube-system and kube-public,
/// as upstream writes them (aggregated roles without rules: aggregation fills them).
const RBAC_POLICY: &str = include_str!("authorization/rbac/bootstrap_policy.json");

const NAMESPACES: [&str; 4] = ["default", "kube-system", "kube-public", "kube-node-lease"];

/// One object the server writes at start.
#[derive(Debug)]
struct Item {
    /// The collection it is created in.
    collection: String,
    name: String,
    object: Value,
    reconcile: Reconcile,
    /// Read before creating: a create would claim what the stored one holds (the
    /// `kubernetes` Service's cluster IP) and be refused for it.
    read_first: bool,
}

impl Item {
    fn first_step(&self) -> Step {
        if self.read_first {
            Step::Read
        } else {
            Step::Create
        }
    }
}

/// What becomes of an object that exists already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reconcile {
    /// Left as it is (namespaces, the `kubernetes` Service).
    Keep,
    /// Reconciled as upstream reconciles its bootstrap policy (RBAC).
    Rbac,
    /// These fields (JSON pointers) made ours again when they differ (where the
    /// `kubernetes` endpoints point: the address or port may have changed).
    Owned(&'static [&'static str]),
    /// An APF bootstrap object, reconciled by [`flowcontrol::reconcile`].
    Flowcontrol,
    /// `extension-apiserver-authentication`, merged by [`authentication_info::reconcile`].
    AuthenticationInfo,
    /// Not an object: the collection is read and the objects of this kind the server
    /// kept that are no longer bootstrap ones are deleted.
    Sweep(&'static str),
}

/// Where the object at hand stands.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    /// POST it.
    Create,
    /// It exists: GET it to compare.
    Read,
    /// PUT the reconciled object (which carries the stored resourceVersion).
    Update(Bytes),
    /// DELETE these objects of the collection, the first now.
    Delete(Vec<String>),
}

/// The server's writes after start, one request at a time.
#[derive(Debug)]
pub struct Bootstrap {
    items: Vec<Item>,
    done: Vec<bool>,
    at: usize,
    step: Step,
}

impl Default for Bootstrap {
    fn default() -> Self {
        Self::new()
    }
}

impl Bootstrap {
    pub fn new() -> Bootstrap {
        let mut items: Vec<Item> = NAMESPACES
            .iter()
            .map(|ns| Item {
                collection: "/api/v1/namespaces".to_owned(),
                name: (*ns).to_owned(),
                object: serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
                reconcile: Reconcile::Keep,
                read_first: false,
            })
            .collect();
        // The system priority classes (upstream's scheduling hook), which the Priority
        // admission plugin resolves.
        items.extend(crate::resources::priorityclasses::system_classes().into_iter().map(|object| Item {
            collection: "/apis/scheduling.k8s.io/v1/priorityclasses".to_owned(),
            name: object["metadata"]["name"].as_str().unwrap_or_default().to_owned(),
            object,
            reconcile: Reconcile::Keep,
            read_first: false,
        }));
        let policy: Vec<Value> = serde_json::from_str(RBAC_POLICY).expect("the bootstrap policy is JSON");
        items.extend(policy.into_iter().map(|object| {
            let plural = match object["kind"].as_str() {
                Some("ClusterRole") => "clusterroles",
                Some("ClusterRoleBinding") => "clusterrolebindings",
                Some("Role") => "roles",
                _ => "rolebindings",
            };
            let collection = match object.pointer("/metadata/namespace").and_then(Value::as_str) {
                Some(ns) => format!("/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/{plural}"),
                None => format!("/apis/rbac.authorization.k8s.io/v1/{plural}"),
            };
            let name = object["metadata"]["name"].as_str().unwrap_or_default().to_owned();
            Item {
                collection,
                name,
                object,
                reconcile: Reconcile::Rbac,
                read_first: false,
            }
        }));
        let done = vec![false; items.len()];
        Bootstrap {
            items,
            done,
            at: 0,
            step: Step::Create,
        }
    }

    /// The objects of a server configured so: [`Bootstrap::new`]'s, then the
    /// `kubernetes` Service and, when the server knows the address clients reach it
    /// at, its Endpoints and EndpointSlice.
    pub fn for_config(config: &crate::Config) -> Bootstrap {
        let mut b = Bootstrap::new();
        b.items.extend(flowcontrol_items());
        let items = api_service::items(&config.service_network, config.advertise_address);
        b.items.extend(items.into_iter().map(|(collection, object, owned)| Item {
            collection: collection.to_owned(),
            name: api_service::name_of(&object).to_owned(),
            object,
            reconcile: if owned.is_empty() { Reconcile::Keep } else { Reconcile::Owned(owned) },
            read_first: true,
        }));
        b.items.extend(authentication_info_item(config));
        b.done = vec![false; b.items.len()];
        b
    }

    /// The `extension-apiserver-authentication` ConfigMap alone: this server's data
    /// merged in again when it is missing, as upstream's controller keeps it.
    pub fn authentication_info(config: &crate::Config) -> Bootstrap {
        let items: Vec<Item> = authentication_info_item(config).into_iter().collect();
        Bootstrap {
            done: vec![false; items.len()],
            items,
            at: 0,
            step: Step::Read,
        }
    }

    /// The APF bootstrap objects alone: what upstream's ensurer writes again every
    /// minute after start (mandatory objects recreated and their specs forced back,
    /// suggested ones recreated and updated while their annotation allows, objects it
    /// kept that are no longer bootstrap ones deleted).
    pub fn flowcontrol() -> Bootstrap {
        let items = flowcontrol_items();
        Bootstrap {
            done: vec![false; items.len()],
            items,
            at: 0,
            step: Step::Create,
        }
    }

    /// Whether every object is written.
    pub fn finished(&self) -> bool {
        self.done.iter().all(|d| *d)
    }

    /// Start another pass over the objects not yet written.
    pub fn retry(&mut self) {
        self.at = 0;
        self.begin_item();
    }

    /// Past the objects written already.
    fn skip_done(&mut self) {
        let at = self.at;
        while self.at < self.items.len() && self.done[self.at] {
            self.at += 1;
        }
        if self.at != at {
            self.begin_item();
        }
    }

    /// The object at hand starts at its first step.
    fn begin_item(&mut self) {
        self.skip_done();
        if let Some(item) = self.items.get(self.at) {
            self.step = item.first_step();
        }
    }

    /// The request to run now; `None` at the end of a pass.
    pub fn next_request(&mut self) -> Option<http::Request<Bytes>> {
        self.skip_done();
        let item = self.items.get(self.at)?;
        let object = format!("{}/{}", item.collection, item.name);
        let request = match &self.step {
            Step::Read if item.name.is_empty() => http::Request::get(&item.collection).body(Bytes::new()),
            Step::Delete(names) => http::Request::delete(format!("{}/{}", item.collection, names[0])).body(Bytes::new()),
            Step::Create => http::Request::post(&item.collection)
                .header(http::header::CONTENT_TYPE, "application/json")
                .body(Bytes::from(item.object.to_string())),
            Step::Read => http::Request::get(object).body(Bytes::new()),
            Step::Update(body) => http::Request::put(object)
                .header(http::header::CONTENT_TYPE, "application/json")
                .body(body.clone()),
        };
        Some(request.expect("a well-formed bootstrap request"))
    }

    /// The answer to the request [`Bootstrap::next_request`] handed out. `Err` says
    /// what failed; the object is tried again on the next pass.
    pub fn answered(&mut self, response: &http::Response<Bytes>) -> Result<(), String> {
        let Some(item) = self.items.get(self.at) else {
            return Ok(());
        };
        let code = response.status().as_u16();
        let next = match (&self.step, code) {
            (Step::Create, 200..=299) => None,
            (Step::Create, 409) if item.reconcile == Reconcile::Keep => None,
            (Step::Create, 409) => Some(Step::Read),
            (Step::Read, 404) if item.read_first => Some(Step::Create),
            (Step::Read, 200) if item.reconcile == Reconcile::Keep => None,
            (Step::Read, 200) if matches!(item.reconcile, Reconcile::Sweep(_)) => {
                let Reconcile::Sweep(kind) = item.reconcile else { unreachable!() };
                match serde_json::from_slice::<Value>(response.body()) {
                    Ok(list) => {
                        let items = list["items"].as_array().map_or(&[][..], Vec::as_slice);
                        let names: Vec<String> = flowcontrol::unwanted(kind, items).into_iter().map(str::to_owned).collect();
                        (!names.is_empty()).then_some(Step::Delete(names))
                    }
                    Err(e) => return self.failed(format!("{}: the list does not parse: {e}", item.collection)),
                }
            }
            (Step::Read, 200) => match serde_json::from_slice::<Value>(response.body()) {
                Ok(stored) => match item.reconcile {
                    Reconcile::Rbac => reconcile::reconcile(&stored, &item.object),
                    Reconcile::Owned(fields) => api_service::reconcile(stored, &item.object, fields),
                    Reconcile::Flowcontrol => flowcontrol::reconcile(&stored, &item.object),
                    Reconcile::AuthenticationInfo => authentication_info::reconcile(&stored, &item.object),
                    Reconcile::Keep | Reconcile::Sweep(_) => None,
                }
                .map(|o| Step::Update(Bytes::from(o.to_string()))),
                Err(e) => {
                    let why = format!("{}/{}: the stored object does not parse: {e}", item.collection, item.name);
                    return self.failed(why);
                }
            },
            // Someone wrote it in between: read it again.
            (Step::Update(_), 409) => Some(Step::Read),
            (Step::Update(_), 200..=299) => None,
            // Gone already or deleted: on to the next.
            (Step::Delete(names), 200..=299 | 404) => {
                let rest = names[1..].to_vec();
                (!rest.is_empty()).then_some(Step::Delete(rest))
            }
            (step, _) => {
                let why = format!(
                    "{step:?} {}/{}: {code} {}",
                    item.collection,
                    item.name,
                    String::from_utf8_lossy(response.body())
                );
                return self.failed(why);
            }
        };
        match next {
            Some(step) => self.step = step,
            None => {
                self.done[self.at] = true;
                self.at += 1;
                self.begin_item();
            }
        }
        Ok(())
    }

    /// The object at hand failed: go on with the next, and try it on the next pass.
    fn failed(&mut self, why: String) -> Result<(), String> {
        self.at += 1;
        self.begin_item();
        Err(why)
    }
}

/// The ConfigMap publishing the client CA and the front proxy, when there is one.
fn authentication_info_item(config: &crate::Config) -> Option<Item> {
    let request_header = config.authenticators.request_header.as_deref();
    let object = authentication_info::config_map(config.client_ca_pem.as_deref(), request_header)?;
    Some(Item {
        collection: format!("/api/v1/namespaces/{}/configmaps", authentication_info::NAMESPACE),
        name: authentication_info::NAME.to_owned(),
        object,
        reconcile: Reconcile::AuthenticationInfo,
        read_first: true,
    })
}

/// The APF bootstrap objects, then a sweep of each kind's collection.
fn flowcontrol_items() -> Vec<Item> {
    let collection = |kind: &str| flowcontrol::collection(kind).to_owned();
    let mut items: Vec<Item> = flowcontrol::objects()
        .iter()
        .map(|object| Item {
            collection: collection(object["kind"].as_str().unwrap_or_default()),
            name: object["metadata"]["name"].as_str().unwrap_or_default().to_owned(),
            object: object.clone(),
            reconcile: Reconcile::Flowcontrol,
            read_first: false,
        })
        .collect();
    items.extend(["FlowSchema", "PriorityLevelConfiguration"].map(|kind| Item {
        collection: collection(kind),
        name: String::new(),
        object: Value::Null,
        reconcile: Reconcile::Sweep(kind),
        read_first: true,
    }));
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(code: u16, body: &str) -> http::Response<Bytes> {
        http::Response::builder()
            .status(code)
            .body(Bytes::from(body.to_owned()))
            .unwrap()
    }

    #[test]
    fn the_policy_has_upstreams_counts() {
        let b = Bootstrap::new();
        let count = |kind: &str| b.items.iter().filter(|i| i.object["kind"] == kind).count();
        assert_eq!(
            [count("ClusterRole"), count("ClusterRoleBinding"), count("Role"), count("RoleBinding")],
            [66, 47, 7, 7]
        );
    }

    #[test]
    fn the_flowcontrol_pass_creates_then_sweeps_what_it_no_longer_ships() {
        let mut b = Bootstrap::flowcontrol();
        for _ in 0..19 {
            let create = b.next_request().unwrap();
            assert_eq!(create.method(), http::Method::POST);
            b.answered(&answer(201, "{}")).unwrap();
        }
        let list = b.next_request().unwrap();
        assert_eq!((list.method(), list.uri().path()), (&http::Method::GET, "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas"));
        let kept = |name: &str, auto: &str| format!(r#"{{"metadata":{{"name":"{name}","annotations":{{"{}":"{auto}"}}}}}}"#, flowcontrol::AUTO_UPDATE);
        let stored = format!(r#"{{"items":[{},{},{}]}}"#, kept("exempt", "true"), kept("old-a", "true"), kept("old-b", "true"));
        b.answered(&answer(200, &stored)).unwrap();
        for (name, code) in [("old-a", 200), ("old-b", 404)] {
            let delete = b.next_request().unwrap();
            assert_eq!(delete.method(), http::Method::DELETE);
            assert_eq!(delete.uri().path(), format!("/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/{name}"));
            b.answered(&answer(code, "{}")).unwrap();
        }
        // Levels: a user's own (no annotation) and one handed over (false) stay.
        assert_eq!(b.next_request().unwrap().uri().path(), "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations");
        let stored = format!(r#"{{"items":[{},{{"metadata":{{"name":"mine"}}}}]}}"#, kept("handed-over", "false"));
        b.answered(&answer(200, &stored)).unwrap();
        assert!(b.next_request().is_none());
        assert!(b.finished());
    }

    #[test]
    fn an_existing_role_is_read_then_updated_and_failures_come_back() {
        let mut b = Bootstrap::new();
        // The namespaces and the system priority classes are kept as they are.
        for _ in 0..NAMESPACES.len() + 2 {
            let r = b.next_request().unwrap();
            assert_eq!(r.method(), http::Method::POST);
            b.answered(&answer(409, "{}")).unwrap();
        }
        let create = b.next_request().unwrap();
        assert_eq!(create.uri().path(), "/apis/rbac.authorization.k8s.io/v1/clusterroles");
        b.answered(&answer(409, "{}")).unwrap();
        let read = b.next_request().unwrap();
        assert_eq!(read.method(), http::Method::GET);
        let stored = r#"{"metadata":{"name":"x","resourceVersion":"5"},"rules":[]}"#;
        b.answered(&answer(200, stored)).unwrap();
        let update = b.next_request().unwrap();
        assert_eq!(update.method(), http::Method::PUT);
        let body: Value = serde_json::from_slice(update.body()).unwrap();
        assert_eq!(body["metadata"]["resourceVersion"], "5");
        b.answered(&answer(200, "{}")).unwrap();
        // A stored object that does not parse fails that object, not the whole pass.
        assert!(b.next_request().is_some());
        b.answered(&answer(409, "{}")).unwrap();
        assert_eq!(b.next_request().unwrap().method(), http::Method::GET);
        assert!(b.answered(&answer(200, "not json")).is_err());
        assert_eq!(b.next_request().unwrap().method(), http::Method::POST, "on to the next object");
        b.answered(&answer(201, "{}")).unwrap();
        // The next object fails, the rest succeed: one more pass writes both.
        assert!(b.next_request().is_some());
        assert!(b.answered(&answer(500, "{}")).is_err());
        while b.next_request().is_some() {
            b.answered(&answer(201, "{}")).unwrap();
        }
        assert!(!b.finished());
        b.retry();
        for _ in 0..2 {
            assert!(b.next_request().is_some());
            b.answered(&answer(201, "{}")).unwrap();
        }
        assert!(b.next_request().is_none());
        assert!(b.finished());
    }
}
