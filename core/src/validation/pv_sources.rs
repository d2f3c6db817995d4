//! Where a PersistentVolume's storage lives: its one source, checked as upstream's
//! `ValidatePersistentVolumeSpec` checks each kind (fields a source cannot do without,
//! paths that do not climb out, well-formed iSCSI names, CSI drivers and secrets).

use super::names::{dns1123_label, dns1123_subdomain};
use super::value::{int, list, map, present, text};
use super::{FieldError, FieldPath};
use regex::Regex;
use serde_json::Value;
use std::sync::OnceLock;

/// Every source, in the order upstream looks for them (with two, the later one is
/// reported), and the path its own checks report under (GCE's is `persistentDisk`).
pub const SOURCES: &[(&str, &str)] = &[
    ("hostPath", "hostPath"),
    ("gcePersistentDisk", "persistentDisk"),
    ("awsElasticBlockStore", "awsElasticBlockStore"),
    ("glusterfs", "glusterfs"),
    ("flocker", "flocker"),
    ("nfs", "nfs"),
    ("rbd", "rbd"),
    ("quobyte", "quobyte"),
    ("cephfs", "cephfs"),
    ("iscsi", "iscsi"),
    ("cinder", "cinder"),
    ("fc", "fc"),
    ("flexVolume", "flexVolume"),
    ("azureFile", "azureFile"),
    ("vsphereVolume", "vsphereVolume"),
    ("photonPersistentDisk", "photonPersistentDisk"),
    ("portworxVolume", "portworxVolume"),
    ("azureDisk", "azureDisk"),
    ("scaleIO", "scaleIO"),
    ("local", "local"),
    ("storageos", "storageos"),
    ("csi", "csi"),
];

/// The sources whose mount options a PersistentVolume may carry in the beta annotation.
pub const MOUNT_OPTION_SOURCES: &[&str] = &[
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "glusterfs",
    "nfs",
    "rbd",
    "quobyte",
    "iscsi",
    "cinder",
    "cephfs",
    "azureFile",
    "vsphereVolume",
    "azureDisk",
    "photonPersistentDisk",
];

const HOST_PATH_TYPES: [&str; 8] = ["", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"];

/// The fields a source cannot do without, checked in this order.
fn required_fields(source: &str) -> &'static [&'static str] {
    match source {
        "gcePersistentDisk" => &["pdName"],
        "awsElasticBlockStore" => &["volumeID"],
        "glusterfs" => &["endpoints", "path"],
        "nfs" => &["server", "path"],
        "rbd" => &["monitors", "image"],
        "cephfs" => &["monitors"],
        "cinder" => &["volumeID"],
        "flexVolume" => &["driver"],
        "azureFile" => &["secretName", "shareName"],
        "vsphereVolume" => &["volumePath"],
        "photonPersistentDisk" => &["pdID"],
        "portworxVolume" => &["volumeID"],
        "azureDisk" => &["diskName", "diskURI"],
        "scaleIO" => &["gateway", "system", "volumeName"],
        _ => &[],
    }
}

/// Whether a field is given (a string not empty, a list not empty, anything else there).
fn given(source: &Value, field: &str) -> bool {
    match source.get(field) {
        None | Some(Value::Null) => false,
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(_) => true,
    }
}

/// The checks of one source, `pv_name` being the volume's (iSCSI initiators need it).
pub fn source_errors(kind: &str, source: &Value, path: &FieldPath, pv_name: &str) -> Vec<FieldError> {
    let mut errs: Vec<FieldError> = required_fields(kind)
        .iter()
        .filter(|f| !given(source, f))
        .map(|f| FieldError::required(path.child(f).as_str(), ""))
        .collect();
    let at = |f: &str| path.child(f).as_str().to_owned();
    match kind {
        "hostPath" | "local" => {
            let p = text(source, "path");
            if p.is_empty() {
                return vec![FieldError::required(&at("path"), "")];
            }
            errs.extend(no_backsteps(p, &path.child("path")));
            let host_type = source.get("type").and_then(Value::as_str);
            if let Some(t) = host_type.filter(|t| kind == "hostPath" && !HOST_PATH_TYPES.contains(t)) {
                errs.push(FieldError::not_supported(&at("type"), t, &HOST_PATH_TYPES));
            }
        }
        "gcePersistentDisk" | "awsElasticBlockStore" => {
            let partition = int(source, "partition").unwrap_or(0);
            if !(0..=255).contains(&partition) {
                errs.push(FieldError::invalid_unquoted(&at("partition"), &partition.to_string(), "must be between 1 and 255, inclusive"));
            }
        }
        "glusterfs" => {
            if let Some(ns) = source.get("endpointsNamespace").and_then(Value::as_str) {
                if ns.is_empty() {
                    errs.push(FieldError::invalid(&at("endpointsNamespace"), ns, "if the endpointnamespace is set, it must be a valid namespace name"));
                }
                errs.extend(dns1123_label(ns).into_iter().filter(|_| !ns.is_empty()).map(|m| FieldError::invalid(&at("endpointsNamespace"), ns, m)));
            }
        }
        "flocker" => {
            let (name, uuid) = (text(source, "datasetName"), text(source, "datasetUUID"));
            if name.is_empty() && uuid.is_empty() {
                errs.push(FieldError::required(path.as_str(), "one of datasetName and datasetUUID is required"));
            }
            if !name.is_empty() && !uuid.is_empty() {
                errs.push(FieldError::invalid(path.as_str(), "resource", "datasetName and datasetUUID can not be specified simultaneously"));
            }
            if name.contains('/') {
                errs.push(FieldError::invalid(&at("datasetName"), name, "must not contain '/'"));
            }
        }
        "nfs" => {
            let p = text(source, "path");
            if !p.starts_with('/') {
                errs.push(FieldError::invalid(&at("path"), p, "must be an absolute path"));
            }
        }
        "quobyte" => errs = quobyte(source, path),
        "iscsi" => errs.extend(iscsi(source, path, pv_name)),
        "cinder" | "storageos" => {
            if kind == "storageos" {
                errs.extend(storageos(source, path));
            }
            if let Some(secret) = source.get("secretRef").filter(|s| !s.is_null()) {
                for field in ["name", "namespace"] {
                    if text(secret, field).is_empty() {
                        errs.push(FieldError::required(path.child("secretRef").child(field).as_str(), ""));
                    }
                }
            }
        }
        "fc" => errs.extend(fibre_channel(source, path)),
        "flexVolume" => {
            for key in map(source, "options").into_iter().flat_map(|m| m.keys()) {
                let domain = key.split_once('/').map_or(key.as_str(), |(d, _)| d);
                let normalized = format!(".{}", domain.to_lowercase());
                if normalized.ends_with(".kubernetes.io") || normalized.ends_with(".k8s.io") {
                    errs.push(FieldError::invalid(path.child("options").key(key).as_str(), key, "kubernetes.io and k8s.io namespaces are reserved"));
                }
            }
        }
        "azureFile" => {
            if source.get("secretNamespace").and_then(Value::as_str) == Some("") {
                errs.push(FieldError::required(&at("secretNamespace"), ""));
            }
        }
        "azureDisk" => errs.extend(azure_disk(source, path)),
        "csi" => errs.extend(csi(source, path)),
        _ => {}
    }
    errs
}

/// A path with no `..` part (upstream's `validatePathNoBacksteps`).
pub fn no_backsteps(p: &str, path: &FieldPath) -> Vec<FieldError> {
    if p.split(['/', '\\']).any(|part| part == "..") {
        return vec![FieldError::invalid(path.as_str(), p, "must not contain '..'")];
    }
    Vec::new()
}

fn quobyte(source: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let registry = text(source, "registry");
    const PAIRS: &str = "must be a host:port pair or multiple pairs separated by commas";
    if registry.is_empty() {
        errs.push(FieldError::required(path.child("registry").as_str(), PAIRS));
    } else if text(source, "tenant").len() >= 65 {
        errs.push(FieldError::required(path.child("tenant").as_str(), "must be a UUID and may not exceed a length of 64 characters"));
    } else {
        for pair in registry.split(',') {
            if !is_host_port(pair) {
                errs.push(FieldError::invalid(path.child("registry").as_str(), registry, PAIRS));
            }
        }
    }
    if text(source, "volume").is_empty() {
        errs.push(FieldError::required(path.child("volume").as_str(), ""));
    }
    errs
}

/// Whether `pair` splits as Go's `net.SplitHostPort` splits: `host:port`, an IPv6 host
/// in brackets.
fn is_host_port(pair: &str) -> bool {
    let Some((host, _port)) = pair.rsplit_once(':') else { return false };
    match host.strip_prefix('[') {
        Some(inner) => inner.ends_with(']') && !inner[..inner.len() - 1].contains(['[', ']']),
        None => !host.contains([':', '[', ']']),
    }
}

fn iscsi_name_ok(name: &str) -> Option<bool> {
    static IQN: OnceLock<Regex> = OnceLock::new();
    static EUI: OnceLock<Regex> = OnceLock::new();
    static NAA: OnceLock<Regex> = OnceLock::new();
    let (cell, pattern) = if name.starts_with("iqn") {
        (&IQN, r"iqn\.\d{4}-\d{2}\.([[:alnum:]-.]+)(:[^,;*&$|\s]+)$")
    } else if name.starts_with("eui") {
        (&EUI, r"^eui.[[:alnum:]]{16}$")
    } else if name.starts_with("naa") {
        (&NAA, r"^naa.[[:alnum:]]{32}$")
    } else {
        return None;
    };
    Some(cell.get_or_init(|| Regex::new(pattern).expect("a valid pattern")).is_match(name))
}

fn iscsi(source: &Value, path: &FieldPath, pv_name: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let at = |f: &str| path.child(f).as_str().to_owned();
    let portal = text(source, "targetPortal");
    if portal.is_empty() {
        errs.push(FieldError::required(&at("targetPortal"), ""));
    }
    let initiator = source.get("initiatorName").and_then(Value::as_str);
    if initiator.is_some() && pv_name.len() + 1 + portal.len() > 64 {
        let why = "Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified.";
        errs.push(FieldError::invalid(&at("targetportal"), portal, why));
    }
    let iqn = text(source, "iqn");
    if iqn.is_empty() {
        errs.push(FieldError::required(&at("iqn"), ""));
    } else if iscsi_name_ok(iqn) != Some(true) {
        errs.push(FieldError::invalid(&at("iqn"), iqn, "must be valid format"));
    }
    let lun = int(source, "lun").unwrap_or(0);
    if !(0..=255).contains(&lun) {
        errs.push(FieldError::invalid_unquoted(&at("lun"), &lun.to_string(), "must be between 0 and 255, inclusive"));
    }
    let chap = ["chapAuthDiscovery", "chapAuthSession"].iter().any(|f| source.get(f) == Some(&Value::Bool(true)));
    let secret = source.get("secretRef").filter(|s| !s.is_null());
    if chap && secret.is_none() {
        errs.push(FieldError::required(&at("secretRef"), ""));
    }
    if secret.is_some_and(|s| text(s, "name").is_empty()) {
        errs.push(FieldError::required(path.child("secretRef").child("name").as_str(), ""));
    }
    if let Some(initiator) = initiator {
        // Upstream checks the prefix and then the format, each on its own.
        if iscsi_name_ok(initiator).is_none() {
            errs.push(FieldError::invalid(&at("initiatorname"), initiator, "must be valid format"));
        }
        if iscsi_name_ok(initiator) == Some(false) {
            errs.push(FieldError::invalid(&at("initiatorname"), initiator, "must be valid format"));
        }
    }
    errs
}

fn fibre_channel(source: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let (targets, wwids) = (list(source, "targetWWNs"), list(source, "wwids"));
    let at = |f: &str| path.child(f).as_str().to_owned();
    if targets.is_empty() && wwids.is_empty() {
        errs.push(FieldError::required(&at("targetWWNs"), "must specify either targetWWNs or wwids, but not both"));
    }
    if !targets.is_empty() && !wwids.is_empty() {
        let shown = super::go_json(&Value::Array(targets.to_vec()));
        errs.push(FieldError::invalid_unquoted(&at("targetWWNs"), &shown, "targetWWNs and wwids can not be specified simultaneously"));
    }
    if !targets.is_empty() {
        match int(source, "lun") {
            None => errs.push(FieldError::required(&at("lun"), "lun is required if targetWWNs is specified")),
            Some(lun) if !(0..=255).contains(&lun) => {
                errs.push(FieldError::invalid_unquoted(&at("lun"), &lun.to_string(), "must be between 0 and 255, inclusive"))
            }
            Some(_) => {}
        }
    }
    errs
}

fn azure_disk(source: &Value, path: &FieldPath) -> Vec<FieldError> {
    const CACHING: [&str; 3] = ["None", "ReadOnly", "ReadWrite"];
    const KINDS: [&str; 3] = ["Dedicated", "Managed", "Shared"];
    let mut errs = Vec::new();
    let at = |f: &str| path.child(f).as_str().to_owned();
    if let Some(mode) = source.get("cachingMode").and_then(Value::as_str).filter(|m| !CACHING.contains(m)) {
        errs.push(FieldError::not_supported(&at("cachingMode"), mode, &CACHING));
    }
    let kind = source.get("kind").and_then(Value::as_str);
    if let Some(k) = kind.filter(|k| !KINDS.contains(k)) {
        errs.push(FieldError::not_supported(&at("kind"), k, &KINDS));
    }
    let uri = text(source, "diskURI");
    match kind {
        Some("Managed") if !uri.starts_with("/subscriptions/") => errs.push(FieldError::not_supported(
            &at("diskURI"),
            uri,
            &["/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}"],
        )),
        Some(k) if k != "Managed" && !uri.starts_with("https://") => errs.push(FieldError::not_supported(
            &at("diskURI"),
            uri,
            &["https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd"],
        )),
        _ => {}
    }
    errs
}

fn storageos(source: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let label = |f: &str, v: &str| dns1123_label(v).into_iter().map(|m| FieldError::invalid(path.child(f).as_str(), v, m)).collect::<Vec<_>>();
    let name = text(source, "volumeName");
    if name.is_empty() {
        errs.push(FieldError::required(path.child("volumeName").as_str(), ""));
    } else {
        errs.extend(label("volumeName", name));
    }
    let namespace = text(source, "volumeNamespace");
    if !namespace.is_empty() {
        errs.extend(label("volumeNamespace", namespace));
    }
    errs
}

fn csi(source: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let driver = text(source, "driver");
    let driver_path = path.child("driver");
    if driver.is_empty() {
        errs.push(FieldError::required(driver_path.as_str(), ""));
    }
    if driver.len() > 63 {
        errs.push(FieldError::too_long(driver_path.as_str(), 63));
    }
    errs.extend(dns1123_subdomain(&driver.to_lowercase()).into_iter().map(|m| FieldError::invalid(driver_path.as_str(), driver, m)));
    if text(source, "volumeHandle").is_empty() {
        errs.push(FieldError::required(path.child("volumeHandle").as_str(), ""));
    }
    for field in ["controllerPublishSecretRef", "controllerExpandSecretRef", "nodePublishSecretRef", "nodeExpandSecretRef"] {
        let Some(secret) = source.get(field).filter(|_| present(source, field)) else { continue };
        let at = path.child(field);
        let (name, namespace) = (text(secret, "name"), text(secret, "namespace"));
        if name.is_empty() {
            errs.push(FieldError::required(at.child("name").as_str(), ""));
        } else {
            errs.extend(dns1123_subdomain(name).into_iter().map(|m| FieldError::invalid(at.child("name").as_str(), name, m)));
        }
        if namespace.is_empty() {
            errs.push(FieldError::required(at.child("namespace").as_str(), ""));
        } else {
            errs.extend(dns1123_label(namespace).into_iter().map(|m| FieldError::invalid(at.child("namespace").as_str(), namespace, m)));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errors(kind: &str, source: Value) -> Vec<String> {
        source_errors(kind, &source, &FieldPath::new("spec").child(kind), "pv").iter().map(ToString::to_string).collect()
    }

    #[test]
    fn sources_need_their_fields() {
        assert_eq!(errors("nfs", json!({"server": "s", "path": "rel"})), ["spec.nfs.path: Invalid value: \"rel\": must be an absolute path"]);
        assert_eq!(errors("hostPath", json!({"path": "/a/../b"})), ["spec.hostPath.path: Invalid value: \"/a/../b\": must not contain '..'"]);
        assert_eq!(errors("csi", json!({"driver": "d.example.com"})), ["spec.csi.volumeHandle: Required value"]);
        assert!(errors("iscsi", json!({"targetPortal": "1.2.3.4:3260", "iqn": "iqn.2001-04.com.example:storage"})).is_empty());
        assert_eq!(errors("iscsi", json!({"targetPortal": "p", "iqn": "bogus"})), ["spec.iscsi.iqn: Invalid value: \"bogus\": must be valid format"]);
        assert!(is_host_port("a:1") && is_host_port("[::1]:7861") && !is_host_port("a"));
    }
}
