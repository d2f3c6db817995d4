//! Admission: the last decisions before a write is stored. Mutating plugins run first
//! and may change the object; validating plugins then accept or refuse it, as
//! kube-apiserver's admission chain runs them. [`plugins`] says which run; of them
//! only NamespaceLifecycle acts yet (the namespace checks of create and delete ask
//! [`AdmissionChain::runs`]); the REST handlers call both phases so that plugins (and
//! webhooks, through `Step::Call`) only need to be added here. The decisions of the
//! PodSecurity, LimitRanger and ResourceQuota plugins are written, as pure functions
//! over the objects the caller reads, and are not yet in the chain.

pub mod plugins;

/// PodSecurity's evaluation (levels, checks, messages), written but not yet a plugin
/// of the chain.
pub mod pod_security;

pub mod limit_ranger;
pub mod matching;
pub mod policy;
mod pod_resources;
pub mod resource_quota;

pub use pod_resources::ResourceList;

use crate::authn::UserInfo;
use crate::status::ApiError;
use serde_json::{Map, Value};

/// The operation being admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    Create,
    Update,
    Delete,
    Connect,
}

/// What admission is told about a write: upstream's `admission.Attributes`.
#[derive(Clone, Copy, Debug)]
pub struct Attributes<'a> {
    pub operation: Operation,
    pub group: &'a str,
    pub version: &'a str,
    pub resource: &'a str,
    pub subresource: &'a str,
    pub namespace: Option<&'a str>,
    pub name: &'a str,
    pub user: Option<&'a UserInfo>,
    pub dry_run: bool,
}

/// The enabled plugins, in order.
#[derive(Clone, Debug, Default)]
pub struct AdmissionChain {
    plugins: plugins::Plugins,
}

impl AdmissionChain {
    pub fn new(plugins: plugins::Plugins) -> AdmissionChain {
        AdmissionChain { plugins }
    }

    /// Whether `plugin` is enabled.
    pub fn runs(&self, plugin: plugins::Plugin) -> bool {
        self.plugins.runs(plugin)
    }

    /// The mutating phase: may change `object` (the new object; the old one for a
    /// delete).
    pub fn mutate(
        &self,
        _attributes: Attributes<'_>,
        _object: &mut Map<String, Value>,
    ) -> Result<(), ApiError> {
        Ok(())
    }

    /// The validating phase: accepts or refuses the object as mutation left it.
    pub fn validate(
        &self,
        _attributes: Attributes<'_>,
        _object: &Map<String, Value>,
    ) -> Result<(), ApiError> {
        Ok(())
    }
}
