//! The CertificateSigningRequest plugins, as upstream's (`plugin/pkg/admission/
//! certificates`): approving or denying needs the `approve` verb on the request's
//! signer, issuing a certificate through `/status` the `sign` verb (each on
//! `certificates.k8s.io` `signers`, named by the signer or its domain's wildcard), and
//! nobody may ask the kube-apiserver-client signer for a `system:masters` certificate.

use super::plugin::{Notes, Plugin, Write};
use super::reads::Fetched;
use super::request::Request;
use super::{Context, Operation};
use crate::authorization::Attributes;
use crate::rest::object::Object;
use crate::status::ApiError;
use base64::Engine;
use serde_json::Value;

const GROUP: &str = "certificates.k8s.io";
const RESOURCE: &str = "certificatesigningrequests";
const CLIENT_SIGNER: &str = "kubernetes.io/kube-apiserver-client";

fn is_csr(request: &Request, subresource: &str, operation: Operation) -> bool {
    request.group == GROUP && request.resource == RESOURCE && request.subresource == subresource && request.operation == operation
}

fn signer(csr: &Object) -> &str {
    csr.get("spec").and_then(|s| s.get("signerName")).and_then(Value::as_str).unwrap_or("")
}

/// Whether the user may `verb` the signer `name`, or every signer of its domain.
fn may(chain: &Context, request: &Request, verb: &str, name: &str) -> bool {
    let ask = |name: &str| {
        chain.lookup.allows(Attributes {
            user: &request.user,
            verb,
            resource_request: true,
            namespace: "",
            api_group: GROUP,
            api_version: "*",
            resource: "signers",
            subresource: "",
            name,
            path: "",
        })
    };
    let domain = name.split('/').next().unwrap_or("");
    ask(name) || ask(&format!("{domain}/*"))
}

fn forbidden(request: &Request, why: String) -> ApiError {
    ApiError::forbidden(GROUP, RESOURCE, &request.name, &why)
}

#[derive(Debug)]
pub(super) struct CertificateApproval;

impl Plugin for CertificateApproval {
    fn handles(&self, request: &Request) -> bool {
        is_csr(request, "approval", Operation::Update)
    }

    fn validates(&self) -> bool {
        true
    }

    fn validate(&self, chain: &Context, request: &Request, csr: &Object, _: &Fetched, _: &mut Notes) -> Result<Vec<Write>, ApiError> {
        match may(chain, request, "approve", signer(csr)) {
            true => Ok(Vec::new()),
            false => Err(forbidden(request, format!("user not permitted to approve requests with signerName {:?}", signer(csr)))),
        }
    }
}

#[derive(Debug)]
pub(super) struct CertificateSigning;

impl Plugin for CertificateSigning {
    fn handles(&self, request: &Request) -> bool {
        is_csr(request, "status", Operation::Update)
    }

    fn validates(&self) -> bool {
        true
    }

    /// Only a write that changes the issued certificate is judged.
    fn validate(&self, chain: &Context, request: &Request, csr: &Object, _: &Fetched, _: &mut Notes) -> Result<Vec<Write>, ApiError> {
        let certificate = |o: &Object| o.get("status").and_then(|s| s.get("certificate")).cloned();
        let old = request.old_object.as_ref();
        if old.map(certificate) == Some(certificate(csr)) {
            return Ok(Vec::new());
        }
        let name = old.map(signer).unwrap_or_else(|| signer(csr));
        match may(chain, request, "sign", name) {
            true => Ok(Vec::new()),
            false => Err(forbidden(request, format!("user not permitted to sign requests with signerName {name:?}"))),
        }
    }
}

#[derive(Debug)]
pub(super) struct CertificateSubjectRestriction;

impl Plugin for CertificateSubjectRestriction {
    fn handles(&self, request: &Request) -> bool {
        is_csr(request, "", Operation::Create)
    }

    fn validates(&self) -> bool {
        true
    }

    fn validate(&self, _: &Context, request: &Request, csr: &Object, _: &Fetched, _: &mut Notes) -> Result<Vec<Write>, ApiError> {
        if signer(csr) != CLIENT_SIGNER {
            return Ok(Vec::new());
        }
        let pem = csr.get("spec").and_then(|s| s.get("request")).and_then(Value::as_str).unwrap_or("");
        let pem = base64::engine::general_purpose::STANDARD.decode(pem).unwrap_or_default();
        let subject = crate::validation::csr::request_der(&pem).and_then(|der| crate::authn::request_subject_of(&der));
        let Some(subject) = subject else {
            return Err(forbidden(request, "failed to parse CSR: PEM block type must be CERTIFICATE REQUEST".to_owned()));
        };
        match subject.organizations.iter().any(|o| o == "system:masters") {
            true => Err(forbidden(request, format!("use of {CLIENT_SIGNER} signer with system:masters group is not allowed"))),
            false => Ok(Vec::new()),
        }
    }
}
