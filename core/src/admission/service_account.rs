//! ServiceAccount: a pod runs as a ServiceAccount (`default` unless it names one),
//! which must exist; unless either opts out, every container mounts the projected
//! token volume (`kube-api-access-*`: a bound token, the cluster's CA and the
//! namespace); and a pod naming no image pull secrets takes its ServiceAccount's.

use super::limit_ranger::name_for_errors;
use super::plugin::{Notes, Plugin, Write};
use super::reads::{Fetched, Read, Stored};
use super::request::Request;
use super::{AdmissionChain, Context, Operation};
use crate::rest::object::{generated_name, Object};
use crate::status::ApiError;
use serde_json::{json, Map, Value};

#[derive(Debug)]
pub(super) struct ServiceAccount;

const DEFAULT: &str = "default";
const VOLUME_PREFIX: &str = "kube-api-access-";
const MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
/// A bound token's lifetime: an hour and seven seconds, so that kubelets can tell a
/// projected token from one asked for by hand.
const TOKEN_SECONDS: i64 = 3607;
const MIRROR_ANNOTATION: &str = "kubernetes.io/config.mirror";

fn account_name(pod: &Object) -> &str {
    pod.get("spec").and_then(|s| s.get("serviceAccountName")).and_then(Value::as_str).unwrap_or("")
}

fn mirror(pod: &Object) -> bool {
    pod.get("metadata").and_then(|m| m.get("annotations")).and_then(|a| a.get(MIRROR_ANNOTATION)).is_some()
}

impl Plugin for ServiceAccount {
    fn handles(&self, request: &Request) -> bool {
        request.group.is_empty()
            && request.resource == "pods"
            && request.subresource.is_empty()
            && request.operation == Operation::Create
    }

    fn mutates(&self) -> bool {
        true
    }

    fn validates(&self) -> bool {
        true
    }

    fn reads(&self, chain: &Context, request: &Request, pod: &Object) -> Vec<Read> {
        let name = match account_name(pod) {
            "" => DEFAULT,
            name => name,
        };
        vec![Read::Object { key: chain.key("", "serviceaccounts", request.namespace.as_deref(), name) }]
    }

    fn mutate(
        &self,
        chain: &Context,
        request: &Request,
        pod: &mut Object,
        fetched: &Fetched,
        _notes: &mut Notes,
    ) -> Result<(), ApiError> {
        if mirror(pod) {
            return Ok(());
        }
        let name = match account_name(pod) {
            "" => DEFAULT.to_owned(),
            name => name.to_owned(),
        };
        let account = lookup(chain, request, pod, &name, fetched)?;
        let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else { return Ok(()) };
        spec.insert("serviceAccountName".into(), json!(name));
        // The deprecated field mirrors it, as conversion to v1 writes it.
        spec.insert("serviceAccount".into(), json!(name));
        let account = account.map(|a| &*a.object);
        if automounts(spec, account) {
            mount_token(spec, &request.entropy);
        }
        let pull_secrets = spec.get("imagePullSecrets").and_then(Value::as_array).is_some_and(|l| !l.is_empty());
        if !pull_secrets {
            let theirs = account.and_then(|a| a.get("imagePullSecrets")).and_then(Value::as_array).filter(|l| !l.is_empty());
            if let Some(theirs) = theirs {
                let names: Vec<Value> = theirs.iter().map(|s| json!({"name": s.get("name").cloned().unwrap_or(json!(""))})).collect();
                spec.insert("imagePullSecrets".into(), Value::Array(names));
            }
        }
        Ok(())
    }

    fn validate(
        &self,
        chain: &Context,
        request: &Request,
        pod: &Object,
        fetched: &Fetched,
        _notes: &mut Notes,
    ) -> Result<Vec<Write>, ApiError> {
        if mirror(pod) {
            return Ok(Vec::new());
        }
        let name = account_name(pod);
        if name.is_empty() {
            let pod_name = pod.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str).unwrap_or("");
            let why = format!("no service account specified for pod {}/{pod_name}", request.namespace());
            return Err(ApiError::forbidden("", "pods", &name_for_errors(&Value::Object(pod.clone())), &why));
        }
        // Mutation may have named it after the read: look again only if so.
        let key = chain.key("", "serviceaccounts", request.namespace.as_deref(), name);
        if fetched.object(&key).is_none() && name != DEFAULT {
            lookup(chain, request, pod, name, fetched)?;
        }
        Ok(Vec::new())
    }
}

/// The pod's ServiceAccount. A missing `default` one is taken as an empty account:
/// the ServiceAccount controller creates it with the namespace, and upstream waits
/// for it (retrying for up to a second or two) where Apiary cannot wait.
fn lookup<'a>(
    chain: &AdmissionChain,
    request: &Request,
    pod: &Object,
    name: &str,
    fetched: &'a Fetched,
) -> Result<Option<&'a Stored>, ApiError> {
    let key = chain.key("", "serviceaccounts", request.namespace.as_deref(), name);
    match fetched.object(&key) {
        Some(account) => Ok(Some(account)),
        None if name == DEFAULT => Ok(None),
        None => {
            let why = format!(
                "error looking up service account {}/{name}: serviceaccount \"{name}\" not found",
                request.namespace()
            );
            Err(ApiError::forbidden("", "pods", &name_for_errors(&Value::Object(pod.clone())), &why))
        }
    }
}

/// The pod's choice wins, then the account's; mounted unless either says not to.
fn automounts(spec: &Map<String, Value>, account: Option<&Object>) -> bool {
    if let Some(choice) = spec.get("automountServiceAccountToken").and_then(Value::as_bool) {
        return choice;
    }
    account.and_then(|a| a.get("automountServiceAccountToken")).and_then(Value::as_bool).unwrap_or(true)
}

/// Every init and app container mounts the token volume at the API token path unless
/// something is mounted there already; the volume is added when one does.
fn mount_token(spec: &mut Map<String, Value>, entropy: &[u8]) {
    let existing = spec
        .get("volumes")
        .and_then(Value::as_array)
        .and_then(|vs| vs.iter().filter_map(|v| v.get("name").and_then(Value::as_str)).find(|n| n.starts_with(VOLUME_PREFIX)))
        .map(str::to_owned);
    let volume = existing.clone().unwrap_or_else(|| generated_name(VOLUME_PREFIX, entropy));
    let mount = json!({"name": volume, "readOnly": true, "mountPath": MOUNT_PATH});
    let mut mounted = false;
    for list in ["initContainers", "containers"] {
        let Some(containers) = spec.get_mut(list).and_then(Value::as_array_mut) else { continue };
        for container in containers.iter_mut().filter_map(Value::as_object_mut) {
            let mounts = container.entry("volumeMounts").or_insert_with(|| json!([]));
            if !mounts.is_array() {
                *mounts = json!([]);
            }
            let mounts = mounts.as_array_mut().expect("made a list above");
            if !mounts.iter().any(|m| m.get("mountPath").and_then(Value::as_str) == Some(MOUNT_PATH)) {
                mounts.push(mount.clone());
                mounted = true;
            }
        }
    }
    if mounted && existing.is_none() {
        let volumes = spec.entry("volumes").or_insert_with(|| json!([]));
        if !volumes.is_array() {
            *volumes = json!([]);
        }
        volumes.as_array_mut().expect("made a list above").push(json!({
            "name": volume,
            "projected": {
                "defaultMode": 420,
                "sources": [
                    {"serviceAccountToken": {"expirationSeconds": TOKEN_SECONDS, "path": "token"}},
                    {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                    {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
                ],
            },
        }));
    }
}
