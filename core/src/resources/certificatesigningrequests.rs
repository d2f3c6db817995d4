//! CertificateSigningRequests (certificates.k8s.io/v1), for when the resource is
//! served: selectable by `spec.signerName` (pkg/apis/certificates/v1/conversion.go).

use super::Strategy;
use crate::selection::table::{FieldLabels, Rejection, SelectableFields, NAME};

static SELECTABLE_FIELDS: SelectableFields = SelectableFields {
    rejection: Rejection::NotSupported,
    fields: &[NAME, ("spec.signerName", "spec.signerName")],
};

pub struct CertificateSigningRequests;

impl Strategy for CertificateSigningRequests {
    fn name(&self) -> &'static str {
        "certificatesigningrequests"
    }

    fn selectable_fields(&self) -> FieldLabels<'_> {
        FieldLabels::Builtin(&SELECTABLE_FIELDS)
    }
}
