//! Services (core/v1), as kube-apiserver shapes them: defaults (`defaults`), the IP
//! families its allocator settles (`families`), validation (`validation`), and the
//! cluster IPs and node ports claimed in storage around each write (`allocation`).
//! A DELETE answers with the deleted object; selectable by cluster IP (since v1.30)
//! and type (since v1.31).

pub mod allocation;
mod defaults;
mod families;
mod printer;
mod spec;
pub mod validation;

use super::claims::{Claim, ClaimContext};
use super::{keep_status, Columns, Handler, Object, ProxyTarget, Strategy};
use crate::selection::table::{FieldLabels, Rejection, SelectableFields, NAME, NAMESPACE};
use crate::validation::FieldError;
use serde_json::json;

/// The resource of services, which their proxy subresource reads.
pub const RESOURCE: &str = "services";

static SELECTABLE_FIELDS: SelectableFields = SelectableFields {
    rejection: Rejection::NotSupported,
    fields: &[
        NAMESPACE,
        NAME,
        ("spec.clusterIP", "spec.clusterIP"),
        ("spec.type", "spec.type"),
    ],
};

pub struct Services;

/// Checks upstream's allocator makes first, answered alone when they fail; then the
/// rest.
fn checked(spec: &spec::Spec, rest: impl FnOnce() -> Vec<FieldError>) -> Vec<FieldError> {
    let first = validation::cluster_ips_related(spec);
    if !first.is_empty() {
        return first;
    }
    rest()
}

impl Strategy for Services {
    fn name(&self) -> &'static str {
        RESOURCE
    }

    fn subresource(&self, name: &str) -> Option<Handler> {
        match name {
            "status" => Some(Handler::Status),
            "proxy" => Some(Handler::Proxy(ProxyTarget::Service)),
            _ => None,
        }
    }

    fn prepare_for_create(&self, new: &mut Object, _has_status: bool) {
        let spec = spec::spec_mut(new);
        defaults::apply(spec);
        defaults::normalize_cluster_ips_on_create(spec);
        new.insert("status".into(), json!({"loadBalancer": {}}));
    }

    fn prepare_for_update(&self, new: &mut Object, old: &Object, has_status: bool) {
        if has_status {
            keep_status(new, old);
        }
        defaults::apply_status(new);
        let old_spec = spec::spec(old).cloned().unwrap_or_default();
        let spec = spec::spec_mut(new);
        defaults::apply(spec);
        defaults::prepare_update(spec, &old_spec);
        defaults::drop_load_balancer_status(new, spec::kind(&old_spec));
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        let spec = spec::spec(new).cloned().unwrap_or_default();
        checked(&spec, || validation::validate(&spec))
    }

    fn validate_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        let spec = spec::spec(new).cloned().unwrap_or_default();
        let old_spec = spec::spec(old).cloned().unwrap_or_default();
        checked(&spec, || {
            let mut errs = validation::validate_update(&spec, &old_spec);
            errs.extend(validation::validate(&spec));
            errs
        })
    }

    fn claim(&self, ctx: &ClaimContext, new: Object, old: Option<&Object>) -> Claim {
        allocation::claim(ctx, new, old)
    }

    fn release(&self, ctx: &ClaimContext, held: &Object, kept: Option<&Object>) -> Option<Claim> {
        allocation::release(ctx, held, kept)
    }

    fn columns(&self) -> Columns<'_> {
        Columns::Builtin(printer::COLUMNS)
    }

    fn delete_returns_object(&self) -> bool {
        true
    }

    fn selectable_fields(&self) -> FieldLabels<'_> {
        FieldLabels::Builtin(&SELECTABLE_FIELDS)
    }
}
