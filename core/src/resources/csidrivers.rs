//! CSIDrivers (storage.k8s.io/v1). Defaults: a driver needs attaching, wants no pod
//! information, capacity tracking, republishing or SELinux mounts, applies fsGroup to
//! read-write-once volumes with a filesystem type, and serves persistent volumes.
//!
//! Its policy and modes are known ones, each token audience is asked for once and
//! for at least ten minutes; whether it attaches and its modes never change
//! (upstream's `ValidateCSIDriver*`, which reports the first as `spec.attachedRequired`).

use super::defaults::{object_or_new, or_insert};
use super::{Column, Columns, Strategy};
use crate::rest::object::Object;
use crate::validation::value::{int, list, text};
use crate::validation::FieldError;
use serde_json::{json, Value};

pub struct CsiDrivers;

const FS_GROUP_POLICIES: [&str; 3] = ["File", "None", "ReadWriteOnceWithFSType"];
const LIFECYCLE_MODES: [&str; 2] = ["Persistent", "Ephemeral"];
const MIN_TOKEN_SECONDS: i64 = 10 * 60;
const MAX_TOKEN_SECONDS: i64 = 1 << 32;

static COLUMNS: &[Column] = &[
    Column { name: "AttachRequired", kind: "boolean", description: "attachRequired indicates this CSI volume driver requires an attach operation (because it implements the CSI ControllerPublishVolume() method), and that the Kubernetes attach detach controller should call the attach volume interface which checks the volumeattachment status and waits until the volume is attached before proceeding to mounting. The CSI external-attacher coordinates with CSI volume driver and updates the volumeattachment status when the attach operation is complete. If the value is specified to false, the attach operation will be skipped. Otherwise the attach operation will be called.\n\nThis field is immutable.", format: "", priority: 0, cell: |o| flag(o, "attachRequired") },
    Column { name: "PodInfoOnMount", kind: "boolean", description: "podInfoOnMount indicates this CSI volume driver requires additional pod information (like podName, podUID, etc.) during mount operations, if set to true. If set to false, pod information will not be passed on mount. Default is false.\n\nThe CSI driver specifies podInfoOnMount as part of driver deployment. If true, Kubelet will pass pod information as VolumeContext in the CSI NodePublishVolume() calls. The CSI driver is responsible for parsing and validating the information passed in as VolumeContext.\n\nThe following VolumeContext will be passed if podInfoOnMount is set to true. This list might grow, but the prefix will be used. \"csi.storage.k8s.io/pod.name\": pod.Name \"csi.storage.k8s.io/pod.namespace\": pod.Namespace \"csi.storage.k8s.io/pod.uid\": string(pod.UID) \"csi.storage.k8s.io/ephemeral\": \"true\" if the volume is an ephemeral inline volume\n                                defined by a CSIVolumeSource, otherwise \"false\"\n\n\"csi.storage.k8s.io/ephemeral\" is a new feature in Kubernetes 1.16. It is only required for drivers which support both the \"Persistent\" and \"Ephemeral\" VolumeLifecycleMode. Other drivers can leave pod info disabled and/or ignore this field. As Kubernetes 1.15 doesn't support this field, drivers can only support one mode when deployed on such a cluster and the deployment determines which mode that is, for example via a command line parameter of the driver.\n\nThis field was immutable in Kubernetes < 1.29 and now is mutable.", format: "", priority: 0, cell: |o| flag(o, "podInfoOnMount") },
    Column { name: "StorageCapacity", kind: "boolean", description: "storageCapacity indicates that the CSI volume driver wants pod scheduling to consider the storage capacity that the driver deployment will report by creating CSIStorageCapacity objects with capacity information, if set to true.\n\nThe check can be enabled immediately when deploying a driver. In that case, provisioning new volumes with late binding will pause until the driver deployment has published some suitable CSIStorageCapacity object.\n\nAlternatively, the driver can be deployed with the field unset or false and it can be flipped later when storage capacity information has been published.\n\nThis field was immutable in Kubernetes <= 1.22 and now is mutable.", format: "", priority: 0, cell: |o| flag(o, "storageCapacity") },
    Column { name: "TokenRequests", kind: "string", description: "tokenRequests indicates the CSI driver needs pods' service account tokens it is mounting volume for to do necessary authentication. Kubelet will pass the tokens in VolumeContext in the CSI NodePublishVolume calls. The CSI driver should parse and validate the following VolumeContext: \"csi.storage.k8s.io/serviceAccount.tokens\": {\n  \"<audience>\": {\n    \"token\": <token>,\n    \"expirationTimestamp\": <expiration timestamp in RFC3339>,\n  },\n  ...\n}\n\nNote: Audience in each TokenRequest should be different and at most one token is empty string. To receive a new token after expiry, RequiresRepublish can be used to trigger NodePublishVolume periodically.", format: "", priority: 0, cell: token_audiences },
    Column { name: "RequiresRepublish", kind: "boolean", description: "requiresRepublish indicates the CSI driver wants `NodePublishVolume` being periodically called to reflect any possible change in the mounted volume. This field defaults to false.\n\nNote: After a successful initial NodePublishVolume call, subsequent calls to NodePublishVolume should only update the contents of the volume. New mount points will not be seen by a running container.", format: "", priority: 0, cell: |o| flag(o, "requiresRepublish") },
    Column { name: "Modes", kind: "string", description: "volumeLifecycleModes defines what kind of volumes this CSI volume driver supports. The default if the list is empty is \"Persistent\", which is the usage defined by the CSI specification and implemented in Kubernetes via the usual PV/PVC mechanism.\n\nThe other mode is \"Ephemeral\". In this mode, volumes are defined inline inside the pod spec with CSIVolumeSource and their lifecycle is tied to the lifecycle of that pod. A driver has to be aware of this because it is only going to get a NodePublishVolume call for such a volume.\n\nFor more information about implementing this mode, see https://kubernetes-csi.github.io/docs/ephemeral-local-volumes.html A driver can support one or more of these modes and more modes may be added in the future.\n\nThis field is beta. This field is immutable.", format: "", priority: 0, cell: modes },
];

impl Strategy for CsiDrivers {
    fn name(&self) -> &'static str {
        "csidrivers"
    }

    fn default(&self, obj: &mut Object) {
        let Some(spec) = object_or_new(obj, "spec") else { return };
        or_insert(spec, "attachRequired", || json!(true));
        or_insert(spec, "podInfoOnMount", || json!(false));
        or_insert(spec, "storageCapacity", || json!(false));
        or_insert(spec, "fsGroupPolicy", || json!("ReadWriteOnceWithFSType"));
        if spec.get("volumeLifecycleModes").and_then(Value::as_array).is_none_or(Vec::is_empty) {
            spec.insert("volumeLifecycleModes".into(), json!(["Persistent"]));
        }
        or_insert(spec, "requiresRepublish", || json!(false));
        or_insert(spec, "seLinuxMount", || json!(false));
    }

    fn columns(&self) -> Columns<'_> {
        Columns::Builtin(COLUMNS)
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate(&spec(new))
    }

    fn validate_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        let (new, old) = (spec(new), spec(old));
        let mut errs = validate(&new);
        for (field, path) in [("attachRequired", "spec.attachedRequired"), ("volumeLifecycleModes", "spec.volumeLifecycleModes")] {
            let value = new.get(field).cloned().unwrap_or(Value::Null);
            if value != old.get(field).cloned().unwrap_or(Value::Null) {
                errs.push(FieldError::immutable(path, &value));
            }
        }
        errs
    }
}

fn spec(o: &Object) -> Value {
    o.get("spec").cloned().unwrap_or(json!({}))
}

fn flag(o: &Object, field: &str) -> Value {
    json!(super::columns::at(o, &["spec", field]).and_then(Value::as_bool).unwrap_or(false))
}

/// The audiences, comma separated; `<unset>` for none, as upstream prints them.
fn token_audiences(o: &Object) -> Value {
    let spec = spec(o);
    let audiences: Vec<&str> = list(&spec, "tokenRequests").iter().map(|t| text(t, "audience")).collect();
    json!(if audiences.is_empty() { "<unset>".to_owned() } else { audiences.join(",") })
}

fn modes(o: &Object) -> Value {
    let spec = spec(o);
    let modes: Vec<&str> = list(&spec, "volumeLifecycleModes").iter().filter_map(Value::as_str).collect();
    json!(if modes.is_empty() { "<none>".to_owned() } else { modes.join(",") })
}

fn validate(spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let policy = text(spec, "fsGroupPolicy");
    if spec.get("fsGroupPolicy").is_some_and(|p| !p.is_null()) && !FS_GROUP_POLICIES.contains(&policy) {
        errs.push(FieldError::not_supported("spec.fsGroupPolicy", policy, &FS_GROUP_POLICIES));
    }
    let mut audiences: Vec<&str> = Vec::new();
    for (i, request) in list(spec, "tokenRequests").iter().enumerate() {
        let audience = text(request, "audience");
        if audiences.contains(&audience) {
            errs.push(FieldError::duplicate(&format!("spec.tokenRequests[{i}].audience"), audience));
            continue;
        }
        audiences.push(audience);
        let field = format!("spec.tokenRequests[{i}].expirationSeconds");
        match int(request, "expirationSeconds") {
            Some(s) if s < MIN_TOKEN_SECONDS => {
                errs.push(FieldError::invalid_unquoted(&field, &s.to_string(), "may not specify a duration less than 10 minutes"))
            }
            Some(s) if s > MAX_TOKEN_SECONDS => {
                errs.push(FieldError::invalid_unquoted(&field, &s.to_string(), "may not specify a duration larger than 2^32 seconds"))
            }
            _ => {}
        }
    }
    for mode in list(spec, "volumeLifecycleModes") {
        let mode = mode.as_str().unwrap_or("");
        if !LIFECYCLE_MODES.contains(&mode) {
            errs.push(FieldError::not_supported("spec.volumeLifecycleModes", mode, &LIFECYCLE_MODES));
        }
    }
    errs
}
