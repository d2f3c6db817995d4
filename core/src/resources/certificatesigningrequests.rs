//! CertificateSigningRequests (certificates.k8s.io/v1), selectable by
//! `spec.signerName` (pkg/apis/certificates/v1/conversion.go).
//!
//! A new request names its requester (`spec.username`, `uid`, `groups`, `extra`), taken
//! from who creates it whatever the body says, and starts with an empty status. A PUT
//! changes neither spec nor status; `/status` changes the status but the Approved and
//! Denied conditions, `/approval` the conditions alone. The request is a PEM certificate
//! request (its shape is checked, not its signature: see `validation::csr`), the signer
//! a domain-qualified name, usages known and each once, a duration at least ten
//! minutes; Approved and Denied exclude each other, no condition type repeats, and an
//! update removes no Approved, Denied or Failed condition and changes no issued
//! certificate (upstream's `ValidateCertificateSigningRequest*`).
//!
//! Upstream's field manager cannot track these objects (it fails on `spec.request`, a
//! byte string marked as a list) and drops `managedFields` when it fails: none is kept.

use super::{Column, Columns, Handler, Strategy};
use crate::authn::UserInfo;
use crate::rest::object::Object;
use crate::selection::table::{FieldLabels, Rejection, SelectableFields, NAME};
use crate::validation::value::{list, text};
use crate::validation::{names, FieldError};
use base64::Engine;
use serde_json::{json, Map, Value};

static SELECTABLE_FIELDS: SelectableFields = SelectableFields {
    rejection: Rejection::NotSupported,
    fields: &[NAME, ("spec.signerName", "spec.signerName")],
};

const USAGES: &[&str] = &[
    "any", "cert sign", "client auth", "code signing", "content commitment", "crl sign", "data encipherment",
    "decipher only", "digital signature", "email protection", "encipher only", "ipsec end system", "ipsec tunnel",
    "ipsec user", "key agreement", "key encipherment", "microsoft sgc", "netscape sgc", "ocsp signing", "s/mime",
    "server auth", "signing", "timestamping",
];
const LEGACY_SIGNER: &str = "kubernetes.io/legacy-unknown";
const MIN_SECONDS: i64 = 600;
const SUBDOMAIN_MAX: usize = 253;
const APPROVAL: [&str; 2] = ["Approved", "Denied"];
const CONDITIONS_PATH: &str = "status.conditions";

static COLUMNS: &[Column] = &[
    Column { name: "SignerName", kind: "string", description: "Requested signer for the request. It is a qualified name in the form: `scope-hostname.io/name`. If empty, it will be defaulted:\n 1. If it's a kubelet client certificate, it is assigned\n    \"kubernetes.io/kube-apiserver-client-kubelet\".\n 2. If it's a kubelet serving certificate, it is assigned\n    \"kubernetes.io/kubelet-serving\".\n 3. Otherwise, it is assigned \"kubernetes.io/legacy-unknown\".\nDistribution of trust for signers happens out of band. You can select on this field using `spec.signerName`.", format: "", priority: 0, cell: |o| super::columns::str_at(o, &["spec", "signerName"]) },
    Column { name: "Requestor", kind: "string", description: "Base64-encoded PKCS#10 CSR data", format: "", priority: 0, cell: |o| super::columns::str_at(o, &["spec", "username"]) },
    Column { name: "RequestedDuration", kind: "string", description: "expirationSeconds is the requested duration of validity of the issued certificate. The certificate signer may issue a certificate with a different validity duration so a client must check the delta between the notBefore and and notAfter fields in the issued certificate to determine the actual duration.\n\nThe v1.22+ in-tree implementations of the well-known Kubernetes signers will honor this field as long as the requested duration is not greater than the maximum duration they will honor per the --cluster-signing-duration CLI flag to the Kubernetes controller manager.\n\nCertificate signers may not honor this field for various reasons:\n\n  1. Old signer that is unaware of the field (such as the in-tree\n     implementations prior to v1.22)\n  2. Signer whose configured maximum is shorter than the requested duration\n  3. Signer whose configured minimum is longer than the requested duration\n\nThe minimum valid value for expirationSeconds is 600, i.e. 10 minutes.", format: "", priority: 0, cell: requested_duration },
    Column { name: "Condition", kind: "string", description: "Conditions applied to the request, such as approval or denial.", format: "", priority: 0, cell: condition },
];

pub struct CertificateSigningRequests;

impl Strategy for CertificateSigningRequests {
    fn name(&self) -> &'static str {
        "certificatesigningrequests"
    }

    fn selectable_fields(&self) -> FieldLabels<'_> {
        FieldLabels::Builtin(&SELECTABLE_FIELDS)
    }

    fn columns(&self) -> Columns<'_> {
        Columns::Laid { columns: COLUMNS, age_at: Some(0) }
    }

    fn tracks_managed_fields(&self) -> bool {
        false
    }

    fn subresource(&self, name: &str) -> Option<Handler> {
        match name {
            "status" => Some(Handler::Status),
            "approval" => Some(Handler::Approval),
            _ => None,
        }
    }

    fn stamp_requester(&self, new: &mut Object, user: &UserInfo) {
        let Some(spec) = super::defaults::object_or_new(new, "spec") else { return };
        for cleared in ["username", "uid", "groups", "extra"] {
            spec.remove(cleared);
        }
        spec.insert("username".into(), json!(user.name));
        if !user.uid.is_empty() {
            spec.insert("uid".into(), json!(user.uid));
        }
        if !user.groups.is_empty() {
            spec.insert("groups".into(), json!(user.groups));
        }
        if !user.extra.is_empty() {
            spec.insert("extra".into(), json!(user.extra));
        }
    }

    fn prepare_for_create(&self, new: &mut Object, _has_status: bool) {
        super::reset_status(new);
    }

    fn prepare_for_update(&self, new: &mut Object, old: &Object, _has_status: bool) {
        for kept in ["spec", "status"] {
            match old.get(kept) {
                Some(v) => new.insert(kept.into(), v.clone()),
                None => new.remove(kept),
            };
        }
    }

    fn prepare_for_status_update(&self, new: &Object, old: Object) -> Object {
        let mut kept = super::status_only(new, old.clone());
        // The approval conditions stay as they were, where the write keeps their number.
        let mut written = conditions(&kept).to_vec();
        let stored = conditions(&old);
        for kind in APPROVAL {
            let (was, now) = (indices(stored, kind), indices(&written, kind));
            if was.len() == now.len() {
                for (from, to) in was.into_iter().zip(now) {
                    written[to] = stored[from].clone();
                }
            }
        }
        if let Some(status) = kept.get_mut("status").and_then(Value::as_object_mut) {
            if !written.is_empty() {
                status.insert("conditions".into(), Value::Array(written));
            }
        }
        kept
    }

    fn prepare_for_approval_update(&self, new: &Object, old: Object) -> Object {
        let mut kept = old;
        // A stored status that is not an object (written by another client) is left
        // for validation to refuse, not replaced here.
        let Some(status) = super::defaults::object_or_new(&mut kept, "status") else { return kept };
        match new.get("status").and_then(|s| s.get("conditions")) {
            Some(c) => status.insert("conditions".into(), c.clone()),
            None => status.remove("conditions"),
        };
        kept
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        let mut errs = validate_spec(&new.get("spec").cloned().unwrap_or(json!({})));
        errs.extend(validate_conditions(new));
        errs
    }

    fn validate_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        validate_update(new, old, false)
    }

    fn validate_status_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        validate_update(new, old, false)
    }

    fn validate_approval_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        validate_update(new, old, true)
    }
}

fn conditions(csr: &Object) -> &[Value] {
    csr.get("status").map(|s| list(s, "conditions")).unwrap_or(&[])
}

fn indices(conditions: &[Value], kind: &str) -> Vec<usize> {
    conditions.iter().enumerate().filter(|(_, c)| text(c, "type") == kind).map(|(i, _)| i).collect()
}

fn validate_spec(spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let request = text(spec, "request");
    let bytes = base64::engine::general_purpose::STANDARD.decode(request).unwrap_or_default();
    if let Err(why) = crate::validation::csr::check_request(&bytes) {
        errs.push(FieldError::invalid("spec.request", request, why));
    }
    let usages = list(spec, "usages");
    if usages.is_empty() {
        errs.push(FieldError::required("spec.usages", ""));
    }
    for (i, usage) in usages.iter().enumerate() {
        let usage = usage.as_str().unwrap_or("");
        if !USAGES.contains(&usage) {
            errs.push(FieldError::not_supported(&format!("spec.usages[{i}]"), usage, USAGES));
        }
    }
    for (i, usage) in usages.iter().enumerate() {
        if usages[..i].contains(usage) {
            errs.push(FieldError::duplicate(&format!("spec.usages[{i}]"), usage.as_str().unwrap_or("")));
        }
    }
    match text(spec, "signerName") {
        LEGACY_SIGNER => errs.push(FieldError::invalid("spec.signerName", LEGACY_SIGNER, "the legacy signerName is not allowed via this API version")),
        signer => errs.extend(signer_name("spec.signerName", signer)),
    }
    if let Some(seconds) = spec.get("expirationSeconds").and_then(Value::as_i64).filter(|s| *s < MIN_SECONDS) {
        errs.push(FieldError::invalid_unquoted("spec.expirationSeconds", &seconds.to_string(), "may not specify a duration less than 600 seconds (10 minutes)"));
    }
    errs
}

/// `example.com/signer-name`: a domain of at least two DNS labels, then a path of DNS
/// subdomains (upstream's `ValidateSignerName`).
fn signer_name(field: &str, signer: &str) -> Vec<FieldError> {
    if signer.is_empty() {
        return vec![FieldError::required(field, "")];
    }
    let Some((domain, path)) = signer.split_once('/').filter(|(_, p)| !p.contains('/')) else {
        return vec![FieldError::invalid(field, signer, "must be a fully qualified domain and path of the form 'example.com/signer-name'")];
    };
    let mut errs = Vec::new();
    if domain.len() > SUBDOMAIN_MAX {
        errs.push(FieldError::too_long(field, SUBDOMAIN_MAX));
    }
    let labels: Vec<&str> = domain.split('.').collect();
    if let Some((label, problems)) = labels.iter().map(|l| (l, names::dns1123_label(l))).find(|(_, p)| !p.is_empty()) {
        errs.extend(problems.into_iter().map(|m| FieldError::invalid(field, domain, format!("validating label \"{label}\": {m}"))));
    }
    if labels.len() < 2 {
        errs.push(FieldError::invalid(field, domain, "should be a domain with at least two segments separated by dots"));
    }
    if path.len() > SUBDOMAIN_MAX {
        errs.push(FieldError::too_long(field, SUBDOMAIN_MAX));
    }
    let components = path.split('.').map(|c| (c, names::dns1123_subdomain(c)));
    if let Some((component, problems)) = components.into_iter().find(|(_, p)| !p.is_empty()) {
        errs.extend(problems.into_iter().map(|m| FieldError::invalid(field, path, format!("validating component \"{component}\": {m}"))));
    }
    errs
}

fn validate_conditions(csr: &Object) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    let conditions = conditions(csr);
    for (i, c) in conditions.iter().enumerate() {
        let at = format!("{CONDITIONS_PATH}[{i}]");
        let (kind, status) = (text(c, "type"), text(c, "status"));
        if kind.is_empty() {
            errs.push(FieldError::required(&format!("{at}.type"), ""));
        }
        if !["True", "False", "Unknown"].contains(&status) {
            errs.push(FieldError::not_supported(&format!("{at}.status"), status, &["True", "False", "Unknown"]));
        }
        if seen.contains(&kind) {
            errs.push(FieldError::duplicate(&format!("{at}.type"), kind));
        }
        seen.push(kind);
        if ["Approved", "Denied", "Failed"].contains(&kind) && status != "True" {
            errs.push(FieldError::not_supported(&format!("{at}.status"), status, &["True"]));
        }
    }
    if seen.contains(&"Approved") && seen.contains(&"Denied") {
        errs.push(FieldError::invalid_unquoted(CONDITIONS_PATH, &internal_conditions(conditions), "Approved and Denied conditions are mutually exclusive"));
    }
    errs
}

/// The conditions as upstream prints its internal type: Go's field names and order.
fn internal_conditions(conditions: &[Value]) -> String {
    let printed: Vec<String> = conditions
        .iter()
        .map(|c| {
            let time = |f: &str| c.get(f).and_then(Value::as_str).map_or("null".to_owned(), |t| format!("{t:?}"));
            format!(
                "{{\"Type\":{:?},\"Status\":{:?},\"Reason\":{:?},\"Message\":{:?},\"LastUpdateTime\":{},\"LastTransitionTime\":{}}}",
                text(c, "type"),
                text(c, "status"),
                text(c, "reason"),
                text(c, "message"),
                time("lastUpdateTime"),
                time("lastTransitionTime"),
            )
        })
        .collect();
    format!("[{}]", printed.join(","))
}

/// An update's checks: the conditions, that none of Approved, Denied and Failed goes,
/// that only `/approval` adds or changes Approved or Denied, and that an issued
/// certificate stays (its spec is the stored one, checked when it was created).
fn validate_update(new: &Object, old: &Object, approving: bool) -> Vec<FieldError> {
    let mut errs = validate_conditions(new);
    let of = |csr: &Object, kind: &str| -> Vec<Value> { conditions(csr).iter().filter(|c| text(c, "type") == kind).cloned().collect() };
    for kind in ["Approved", "Denied", "Failed"] {
        if of(new, kind).len() < of(old, kind).len() {
            errs.push(FieldError::forbidden(CONDITIONS_PATH, format!("updates may not remove a condition of type \"{kind}\"")));
        }
    }
    if !approving {
        for kind in APPROVAL {
            let (was, now) = (of(old, kind), of(new, kind));
            if now.len() > was.len() {
                errs.push(FieldError::forbidden(CONDITIONS_PATH, format!("updates may not add a condition of type \"{kind}\"")));
            } else if now.len() == was.len() && now != was {
                errs.push(FieldError::forbidden(CONDITIONS_PATH, format!("updates may not modify a condition of type \"{kind}\"")));
            }
        }
    }
    let certificate = |csr: &Object| csr.get("status").map(|s| text(s, "certificate").to_owned()).unwrap_or_default();
    if !certificate(old).is_empty() && certificate(new) != certificate(old) {
        errs.push(FieldError::invalid("status.certificate", "[omitted]", "updates may not modify existing certificate content"));
    }
    errs
}

/// How long a certificate is asked for, as upstream prints a duration; `<none>`.
fn requested_duration(o: &Object) -> Value {
    match super::columns::at(o, &["spec", "expirationSeconds"]).and_then(Value::as_u64) {
        Some(seconds) => json!(crate::rest::table::human_duration(seconds)),
        None => json!("<none>"),
    }
}

/// Denied, else Approved, else Pending; then Failed and Issued when so, comma
/// separated (upstream's printer).
fn condition(o: &Object) -> Value {
    let empty = Map::new();
    let status = o.get("status").and_then(Value::as_object).unwrap_or(&empty);
    let types: Vec<&str> = status.get("conditions").and_then(Value::as_array).into_iter().flatten().map(|c| text(c, "type")).collect();
    let mut shown = match (types.contains(&"Denied"), types.contains(&"Approved")) {
        (true, _) => "Denied".to_owned(),
        (false, true) => "Approved".to_owned(),
        _ => "Pending".to_owned(),
    };
    if types.contains(&"Failed") {
        shown.push_str(",Failed");
    }
    if status.get("certificate").and_then(Value::as_str).is_some_and(|c| !c.is_empty()) {
        shown.push_str(",Issued");
    }
    json!(shown)
}
