//! Admission: the last decisions before a write is stored. Mutating plugins run first
//! and may change the object; validating plugins then accept or refuse it, as
//! kube-apiserver's admission chain runs them. [`plugins`] says which run and in what
//! order; each built-in plugin is a [`Plugin`] in its own file; a phase over one write
//! is a [`Review`], a state machine the REST handlers drive (reads and writes of
//! storage leave it as steps).

pub mod plugins;

pub mod config_file;
mod certificates;
mod configurations;
mod plugin;
mod reads;
mod request;
mod review;

/// PodSecurity's evaluation (levels, checks, messages) and its plugin.
pub mod pod_security;

mod default_classes;
pub mod limit_ranger;
pub mod matching;
mod namespace_lifecycle;
pub mod policy;
mod pod_resources;
mod pod_tolerations;
mod priority;
pub mod resource_quota;
mod runtime_class;
mod service_account;
mod storage_protection;
mod taint_nodes;
pub mod webhooks;

pub use plugin::{Context, Notes, Plugin, Write};
pub use pod_resources::{read_list, write_list, ResourceList};
pub use reads::{Answer, Fetched, Lookup, NoCaches, Read, Stored};
pub use request::Request;
pub use review::{Next, Phase, Review};

use crate::authn::UserInfo;
use crate::storage;

/// A borrowed view of a [`Request`]: what matching and policies read of it.
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

impl Request {
    pub fn attributes(&self) -> Attributes<'_> {
        Attributes {
            operation: self.operation,
            group: &self.group,
            version: &self.version,
            resource: &self.resource,
            subresource: &self.subresource,
            namespace: self.namespace.as_deref(),
            name: &self.name,
            user: Some(&self.user),
            dry_run: self.dry_run,
        }
    }
}

/// The operation being admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    Create,
    Update,
    Delete,
    Connect,
}

impl Operation {
    /// As upstream spells it (`CREATE`), in AdmissionReviews and rules.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
            Operation::Connect => "CONNECT",
        }
    }
}

/// What the plugins are configured with (`--admission-control-config-file` and the
/// plugins' own flags).
#[derive(Clone, Debug)]
pub struct Settings {
    pub pod_security: pod_security::Configuration,
    /// `--default-not-ready-toleration-seconds` and
    /// `--default-unreachable-toleration-seconds`.
    pub not_ready_toleration_seconds: i64,
    pub unreachable_toleration_seconds: i64,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            pod_security: pod_security::Configuration::default(),
            not_ready_toleration_seconds: 300,
            unreachable_toleration_seconds: 300,
        }
    }
}

/// The enabled plugins, in order, and what they are configured with.
#[derive(Clone, Debug)]
pub struct AdmissionChain {
    plugins: plugins::Plugins,
    mutating: Vec<&'static dyn Plugin>,
    validating: Vec<&'static dyn Plugin>,
    storage_prefix: String,
    pub settings: Settings,
    /// The policies' and webhook configurations' expressions, compiled.
    compiled: std::sync::Arc<configurations::Compiled>,
}

impl Default for AdmissionChain {
    fn default() -> AdmissionChain {
        AdmissionChain::new(plugins::Plugins::default(), "/registry", Settings::default())
    }
}

impl AdmissionChain {
    pub fn new(plugins: plugins::Plugins, storage_prefix: &str, settings: Settings) -> AdmissionChain {
        let built: Vec<&'static dyn Plugin> = plugins.names().iter().filter_map(|n| plugins::built_in(n)).collect();
        AdmissionChain {
            mutating: built.iter().copied().filter(|p| p.mutates()).collect(),
            validating: built.iter().copied().filter(|p| p.validates()).collect(),
            plugins,
            storage_prefix: storage_prefix.to_owned(),
            settings,
            compiled: Default::default(),
        }
    }

    /// Whether `plugin` is enabled.
    pub fn runs(&self, plugin: plugins::Plugin) -> bool {
        self.plugins.runs(plugin)
    }

    /// The plugins of `phase`, in order.
    pub(crate) fn phase_plugins(&self, phase: Phase) -> &[&'static dyn Plugin] {
        match phase {
            Phase::Mutating => &self.mutating,
            Phase::Validating => &self.validating,
        }
    }

    /// The root of every storage key (`--etcd-prefix`).
    pub fn storage_root(&self) -> &str {
        &self.storage_prefix
    }

    /// Where an object is stored.
    pub fn key(&self, group: &str, resource: &str, namespace: Option<&str>, name: &str) -> String {
        storage::object_key(&self.storage_prefix, group, resource, namespace, name)
    }

    /// Where a resource's objects (in one namespace when given) are stored.
    pub fn prefix(&self, group: &str, resource: &str, namespace: Option<&str>) -> String {
        storage::resource_prefix(&self.storage_prefix, group, resource, namespace)
    }

    /// The read of namespace `name`.
    pub(crate) fn namespace_read(&self, name: &str) -> Read {
        Read::Object { key: self.key("", "namespaces", None, name) }
    }

    /// The namespace `name`, when read.
    pub(crate) fn namespace<'a>(&self, fetched: &'a Fetched, name: &str) -> Option<&'a Stored> {
        fetched.object(&self.key("", "namespaces", None, name))
    }
}
