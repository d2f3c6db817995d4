//! What each kind does on its way in and out of storage: its **strategy**, as
//! kube-apiserver's generic store takes one per kind (`pkg/registry/<group>/<kind>/strategy.go`).
//!
//! The REST handlers (`rest/`) are generic: they ask the strategy of the resource they
//! serve how to prepare, check and answer, and never look at which resource it is. Every
//! registry entry holds one ([`SharedStrategy`]); the built-in kinds set theirs in
//! `registry/builtin.rs`, a custom resource brings its own through `Registry::insert`.
//! A kind with nothing of its own uses [`Plain`]; each other kind has a file here.
//!
//! Strategies are plain rules over plain data — no storage, no request — so that the
//! registry can hold them and the handlers can use them without either knowing the other.
//! The kinds never stored (the reviews) answer a create from what a [`CreateRequest`]
//! tells them of the request and the server (who asks, the authorizers, the bearer-token
//! authenticators), an interface the REST scope provides.

pub mod claims;
pub mod columns;
pub mod defaults;
pub mod pod_spec;

pub mod apiservices;
pub mod bindings;
pub mod certificatesigningrequests;
pub mod componentstatuses;
pub mod configmaps;
pub mod controllerrevisions;
pub mod cronjobs;
pub mod csidrivers;
pub mod csinodes;
pub mod csistoragecapacities;
pub mod customresourcedefinitions;
pub mod customresources;
pub mod daemonsets;
pub mod deployments;
pub mod endpoints;
pub mod endpointslices;
pub mod events;
pub mod flowschemas;
pub mod horizontalpodautoscalers;
pub mod ingressclasses;
pub mod ingresses;
pub mod ipaddresses;
pub mod jobs;
pub mod limitranges;
pub mod leases;
pub mod localsubjectaccessreviews;
pub mod namespaces;
pub mod networkpolicies;
pub mod nodes;
pub mod persistentvolumeclaims;
pub mod persistentvolumes;
pub mod poddisruptionbudgets;
pub mod pods;
pub mod podtemplates;
pub mod priorityclasses;
pub mod prioritylevelconfigurations;
pub mod replicasets;
pub mod rolebindings;
pub mod roles;
pub mod replicationcontrollers;
pub mod resourcequotas;
pub mod runtimeclasses;
pub mod reviews;
pub mod secrets;
pub mod selfsubjectaccessreviews;
pub mod selfsubjectreviews;
pub mod selfsubjectrulesreviews;
pub mod serviceaccounts;
pub mod servicecidrs;
pub mod services;
pub mod statefulsets;
pub mod storageclasses;
pub mod subjectaccessreviews;
pub mod tokenreviews;
pub mod validatingadmissionpolicies;
pub mod validatingadmissionpolicybindings;
pub mod volumeattachments;
pub mod webhookconfigurations;

#[cfg(test)]
mod tests;

pub use columns::{Column, Columns};

use crate::authn::{TokenUser, UserInfo};
use crate::authorization::escalation::Grants;
use crate::authorization::{Attributes, Decision, Rules};
use crate::rest::object::{meta_mut, spec_changed, Object};
use crate::selection::table::{FieldLabels, DEFAULT};
use crate::status::ApiError;
use crate::rest::finalizers::{Deletion, GcPolicy, OnDelete};
use crate::validation::object_meta::MetaRules;
use crate::validation::FieldError;
use serde_json::{json, Value};
use std::sync::Arc;

/// The rules of one kind. Every method but [`Strategy::name`] has the answer of a kind
/// with no rules of its own.
pub trait Strategy: Send + Sync + 'static {
    /// A name for the strategy (the resource it was written for): registry entries
    /// compare and print their strategies by it.
    fn name(&self) -> &'static str;

    /// What a strategy made at run time was made from (a CRD version's declaration):
    /// strategies of one name compare by it.
    fn definition(&self) -> Option<&Value> {
        None
    }

    /// Whether `metadata.generation` starts at 1 and counts spec changes.
    fn tracks_generation(&self) -> bool {
        false
    }

    /// Fill in what the kind's upstream defaulting (`SetDefaults_*` and declarative
    /// defaults) sets where the object leaves it unset, as kube-apiserver does whenever
    /// it decodes an object: on every write of the whole object (before the writer's
    /// managed fields are recorded and before mutating admission), on every decoded
    /// read, and on objects a list puts into the watch cache. Idempotent, and it
    /// changes (and allocates) nothing on an object that has its defaults. Pod spec
    /// defaults are shared in [`pod_spec`], the small moves in [`defaults`].
    fn default(&self, _obj: &mut Object) {}

    /// Make a new object what the kind starts with, after the generic metadata is
    /// stamped: defaults, and a status only the status subresource may set
    /// (`has_status`: the resource serves one).
    fn prepare_for_create(&self, new: &mut Object, has_status: bool) {
        if has_status {
            reset_status(new);
        }
    }

    /// Record who creates a new object in it, where the kind keeps that (a
    /// CertificateSigningRequest's requester), after [`Strategy::prepare_for_create`].
    fn stamp_requester(&self, _new: &mut Object, _user: &UserInfo) {}

    /// Whether writes record their managers in `metadata.managedFields`.
    fn tracks_managed_fields(&self) -> bool {
        true
    }

    /// Make a PUT of the whole object what the kind stores: by default the status
    /// stays the stored one where a status subresource owns it.
    fn prepare_for_update(&self, new: &mut Object, old: &Object, has_status: bool) {
        if has_status {
            keep_status(new, old);
        }
    }

    /// The object a write to the status subresource stores: by default the stored
    /// object with only its status replaced.
    fn prepare_for_status_update(&self, new: &Object, old: Object) -> Object {
        status_only(new, old)
    }

    /// What upstream's decoding of the kind's objects does beyond reading the JSON: the
    /// conversion to its internal type (a Secret's `stringData` becomes `data`).
    fn decoded(&self, _obj: &mut Object) {}

    /// The group a 422 qualifies the kind with: upstream names the group of the
    /// internal type the object was validated as, which for a kind served in two
    /// groups is one of them (events.k8s.io Events are core Events).
    fn invalid_group<'a>(&self, served: &'a str) -> &'a str {
        served
    }

    /// Which of upstream's metadata rules the kind's objects follow.
    fn meta_rules(&self) -> MetaRules {
        MetaRules::Builtin
    }

    /// The kind's own checks of a new object (after its metadata's).
    fn validate_create(&self, _new: &Object) -> Vec<FieldError> {
        Vec::new()
    }

    /// The kind's own checks of an updated object (after its metadata's).
    fn validate_update(&self, _new: &Object, _old: &Object) -> Vec<FieldError> {
        Vec::new()
    }

    /// The kind's own checks of a write to the status subresource, once it is prepared
    /// (after its metadata's).
    fn validate_status_update(&self, _new: &Object, _old: &Object) -> Vec<FieldError> {
        Vec::new()
    }

    /// The object a write to the approval subresource ([`Handler::Approval`]) stores.
    fn prepare_for_approval_update(&self, _new: &Object, old: Object) -> Object {
        old
    }

    /// The kind's own checks of a write to the approval subresource, once prepared.
    fn validate_approval_update(&self, _new: &Object, _old: &Object) -> Vec<FieldError> {
        Vec::new()
    }

    /// A write that grants permissions (RBAC roles and bindings) is checked against
    /// what its author holds, after mutating admission and before the object is
    /// prepared (`old` is the stored object of an update).
    fn check_grants(&self, _grants: &Grants<'_>, _new: &Object, _old: Option<&Object>) -> Result<(), ApiError> {
        Ok(())
    }

    /// Put a list's objects in the order the kind's Table rows show them: as listed,
    /// unless upstream's printer sorts them (FlowSchemas by matching precedence).
    fn order_table_rows(&self, _objects: &mut [&Object]) {}

    /// The columns of the kind's Tables: a built-in kind's fixed ones, or those a
    /// custom resource's CRD declares.
    fn columns(&self) -> Columns<'_> {
        Columns::Builtin(&[])
    }

    /// The fields a field selector may name, and the 400 for any other: a built-in
    /// kind's fixed table, or those a custom resource's CRD declares.
    fn selectable_fields(&self) -> FieldLabels<'_> {
        FieldLabels::Builtin(&DEFAULT)
    }

    /// Whether objects read from storage are shown changed ([`Strategy::read_stored`]):
    /// the paths that serve stored bytes as they are are then skipped.
    fn transforms_reads(&self) -> bool {
        false
    }

    /// The webhook that converts this resource's objects to and from the version
    /// storage keeps, around every storage operation (`rest::conversion`).
    fn conversion_webhook(&self) -> Option<&customresources::ConversionWebhook> {
        None
    }

    /// The group whose resource of the same name stores this one's objects, when not
    /// its own: the two then share one storage prefix and one watch cache, and objects
    /// are converted on their way in and out ([`Strategy::read_stored`],
    /// [`Strategy::write_stored`]). Upstream's events.k8s.io Events are core Events.
    fn storage_group(&self) -> Option<&'static str> {
        None
    }

    /// Make an object read from storage what this resource serves (a custom resource
    /// stored in another version is shown in this one).
    fn read_stored(&self, _obj: &mut Object) {}

    /// Make an object about to be stored what storage keeps (a custom resource in its
    /// CRD's storage version).
    fn write_stored(&self, _obj: &mut Object) {}

    /// Whether the items of a list keep their kind and apiVersion: custom resources'
    /// do, as upstream's unstructured lists; built-in lists are typed.
    fn typed_list_items(&self) -> bool {
        false
    }

    /// Whether objects of `group`/`resource` may be created at all now.
    fn check_create(&self, _group: &str, _resource: &str) -> Result<(), ApiError> {
        Ok(())
    }

    /// Mark an object a DELETE asks to remove (before it is written as being deleted):
    /// a kind that cleans up before it goes adds its finalizer here.
    fn mark_deleting(&self, _obj: &mut Object, _now: &str) {}

    /// Whether a DELETE answers with the deleted object rather than a success Status
    /// (kube-apiserver's `ReturnDeletedObject` storages).
    fn delete_returns_object(&self) -> bool {
        false
    }

    /// What `deletion` does to `obj`: delete it at once, or mark it as being deleted.
    /// By default it waits for its finalizers: those it has, those
    /// [`Strategy::mark_deleting`] adds, and the garbage collector's the propagation
    /// asks for.
    fn on_delete(&self, obj: &Object, deletion: &Deletion<'_>) -> OnDelete {
        let now = deletion.now_text();
        let mut marked = obj.clone();
        self.mark_deleting(&mut marked, &now);
        deletion.propagation.apply(&mut marked, self.default_gc_policy());
        crate::rest::finalizers::wait_for_finalizers(marked, &now)
    }

    /// What the kind's objects do to their dependents when a DELETE does not say.
    fn default_gc_policy(&self) -> GcPolicy {
        GcPolicy::DeleteDependents
    }

    /// What a write to the kind's `finalize` subresource ([`Handler::Finalize`])
    /// stores, given the object written and the one stored.
    fn finalize_update(&self, _new: &Object, old: &Object) -> Object {
        old.clone()
    }

    /// Whether a write leaves `obj` ready to go (being deleted, nothing left to wait
    /// for): the write then deletes it.
    fn finished_deleting(&self, obj: &Object) -> bool {
        crate::rest::finalizers::finished(obj)
    }

    /// Another object a new one is completed from (see [`Strategy::complete_for_create`]):
    /// its group, resource and name, in the new object's namespace.
    fn create_reads(&self, _new: &Object) -> Option<(&'static str, &'static str, String)> {
        None
    }

    /// Fill in, as the new object is stored, what a controller of upstream's would add
    /// just after: from the object [`Strategy::create_reads`] names (`None` when there
    /// is none) and the server's ServiceAccount token signer. Not on a dry run.
    fn complete_for_create(
        &self,
        _new: &mut Object,
        _read: Option<&Object>,
        _tokens: Option<&crate::authn::ServiceAccountTokens>,
    ) {
    }

    /// Claim in storage what a new or updated object needs beyond what `old` (the
    /// stored object of an update) holds — a Service's cluster IPs and node ports —
    /// and fill it in. Runs after validation, before the object is written; on a
    /// dry run ([`ClaimContext::dry_run`]) it checks and fills in without writing.
    fn claim(&self, _ctx: &claims::ClaimContext, new: Object, _old: Option<&Object>) -> claims::Claim {
        claims::Claim::Done(new)
    }

    /// Give back what `held` holds that `kept` does not (`None`: the object is gone),
    /// once a write or delete has made it so, or after a write that [`Strategy::claim`]
    /// claimed for failed. `None` when there is nothing to give back.
    fn release(&self, _ctx: &claims::ClaimContext, _held: &Object, _kept: Option<&Object>) -> Option<claims::Claim> {
        None
    }

    /// Who serves the subresource `name` (one discovery lists for the resource); `None`
    /// when it is not served (404).
    fn subresource(&self, name: &str) -> Option<Handler> {
        (name == "status").then_some(Handler::Status)
    }

    /// The object a write to a [`Handler::Part`] subresource stores, given the object
    /// written and the one stored: by default the stored one.
    fn prepare_for_part_update(&self, _part: SpecPart, _new: &Object, old: Object) -> Object {
        old
    }

    /// The kind's checks of a write to a [`Handler::Part`] subresource, once prepared.
    fn validate_part_update(&self, _part: SpecPart, _new: &Object, _old: &Object) -> Vec<FieldError> {
        Vec::new()
    }

    /// Where a custom resource's `scale` subresource ([`Handler::CustomScale`]) reads
    /// and writes its object.
    fn scale_paths(&self) -> Option<&customresources::ScalePaths> {
        None
    }

    /// The objects of a kind served by [`Handler::Computed`], made now from `facts`.
    fn computed(&self, _facts: &ServerFacts) -> Vec<Object> {
        Vec::new()
    }

    /// The warning every answer about this resource carries (a deprecated API's).
    fn warning(&self) -> Option<&'static str> {
        None
    }

    /// Who serves the resource itself, when not the generic verbs over stored objects.
    fn handler(&self) -> Option<Handler> {
        None
    }

    /// What a create of a kind served by [`Handler::CreateOnly`] answers, made from the
    /// decoded object (its namespace placed and its managed fields recorded, mutating
    /// admission passed) and what `request` tells. The kind calls
    /// [`CreateRequest::admit`] when its own checks have passed, as upstream's REST
    /// storages call their create validation.
    fn answer_create(&self, _request: &dyn CreateRequest, _object: Object) -> Result<Object, ApiError> {
        Err(ApiError::internal("this kind is stored, not answered"))
    }

    /// Whether the namespace segment of a path names the object itself, for a
    /// cluster-scoped resource (`/api/v1/namespaces/{name}`).
    fn named_by_namespace_path(&self) -> bool {
        false
    }

    /// Count a spec change of `new` over `old` in its `metadata.generation`, when the
    /// kind tracks generations.
    fn count_generation(&self, old: &Object, new: &mut Object) {
        if self.tracks_generation() && spec_changed(old, new) {
            next_generation(old, new);
        }
    }
}

/// `new` one generation past `old`.
pub fn next_generation(old: &Object, new: &mut Object) {
    let generation = old
        .get("metadata")
        .and_then(|m| m.get("generation"))
        .and_then(Value::as_i64)
        .unwrap_or(0);
    meta_mut(new).insert("generation".into(), json!(generation + 1));
}

/// Who serves a subresource (or a whole resource) instead of the generic verbs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handler {
    /// The generic verbs over the object, whose writes change only its status.
    Status,
    /// An `autoscaling/v1` Scale made from the object (get, update, patch).
    Scale(ScaleRules),
    /// An `autoscaling/v1` Scale made from a custom resource by the paths its CRD
    /// declares ([`Strategy::scale_paths`]).
    CustomScale,
    /// Binding a pod to a node (`pods/binding`, and the `bindings` collection).
    Binding,
    /// Evicting a pod, as its disruption budget allows (`pods/eviction`).
    Eviction,
    /// Only `create`, answered by the strategy's [`Strategy::answer_create`] and never
    /// stored (the access reviews).
    CreateOnly,
    /// Issuing a ServiceAccount token (`serviceaccounts/token`).
    TokenRequest,
    /// A namespace's `finalize`: an update of its `spec.finalizers` alone.
    Finalize,
    /// Only `get` and `list` of objects never stored, made on each request from what
    /// the server knows ([`Strategy::computed`]).
    Computed,
    /// A CertificateSigningRequest's `approval`: the generic verbs over the object,
    /// whose writes change only its conditions.
    Approval,
    /// The generic get, update and patch over the whole object, whose writes change
    /// only the part of its spec the strategy keeps for the subresource
    /// ([`Strategy::prepare_for_part_update`]).
    Part(SpecPart),
    /// A container's log, read from its pod's node (`pods/log`).
    PodLog,
    /// A stream to a container through its pod's node (`pods/exec`, `attach`,
    /// `portforward`).
    Connect(ConnectKind),
    /// Requests passed on to what the object names: a pod's IP, a node's kubelet, a
    /// service's endpoints (`*/proxy`).
    Proxy(ProxyTarget),
}

/// The part of a pod's spec a subresource writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpecPart {
    /// `spec.ephemeralContainers` (`pods/ephemeralcontainers`).
    EphemeralContainers,
    /// The containers' `resources` and `resizePolicy` (`pods/resize`).
    Resize,
}

/// Which stream a connect subresource opens to a container.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnectKind {
    Exec,
    Attach,
    PortForward,
}

/// What a proxy subresource reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProxyTarget {
    Pod,
    Node,
    Service,
}

/// What the server knows of itself, that a [`Handler::Computed`] kind is made from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServerFacts {
    /// Whether the storage answers its health check (always, for an embedded one).
    pub storage_healthy: bool,
    /// Whether any of the built-in controllers runs (`--disable-controllers`).
    pub controllers_run: bool,
}

/// What a kind that answers its creates without storage ([`Handler::CreateOnly`]) may
/// know of its request and ask of the server.
pub trait CreateRequest {
    /// Who asks (after impersonation).
    fn user(&self) -> &UserInfo;
    /// When the request arrived.
    fn now(&self) -> std::time::SystemTime;
    /// May this be done? The configured authorizers answer.
    fn authorize(&self, attributes: Attributes<'_>) -> Decision;
    /// What `user` may do in `namespace`, as far as the authorizers can list it.
    fn rules_for(&self, user: &UserInfo, namespace: &str) -> Rules;
    /// Who a bearer token names, when meant for `audiences` (the API audiences when
    /// `None`): the server's one door for tokens.
    fn authenticate_token(&self, token: &str, audiences: Option<&[String]>) -> Option<TokenUser>;
    /// `--api-audiences`.
    fn api_audiences(&self) -> Vec<String>;
}

/// The subresources of a kind that has `status` and `scale`.
pub fn status_and_scale(name: &str, scale: ScaleRules) -> Option<Handler> {
    match name {
        "status" => Some(Handler::Status),
        "scale" => Some(Handler::Scale(scale)),
        _ => None,
    }
}

/// How a kind's `scale` subresource reads its object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScaleRules {
    /// The shape of the object's `spec.selector`.
    pub selector: SelectorShape,
    /// The group and resource a NotFound names when the object is missing, where
    /// upstream's ScaleREST names another than the object's own.
    pub not_found_as: Option<(&'static str, &'static str)>,
}

/// The shape of a `spec.selector`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SelectorShape {
    /// A metav1 LabelSelector (`matchLabels`, `matchExpressions`).
    LabelSelector,
    /// A plain map of labels (replicationcontrollers).
    LabelSet,
}

/// The strategy of a kind with no rules of its own.
#[derive(Clone, Copy, Debug)]
pub struct Plain;

impl Strategy for Plain {
    fn name(&self) -> &'static str {
        "plain"
    }
}

/// A registry entry's strategy: a built-in one (static) or one made at run time (a
/// custom resource's). Compared and printed by name, so that a registry stays plain
/// data to compare and print.
#[derive(Clone)]
pub struct SharedStrategy(Shared);

#[derive(Clone)]
enum Shared {
    Static(&'static dyn Strategy),
    Made(Arc<dyn Strategy>),
}

impl SharedStrategy {
    /// A built-in strategy.
    pub const fn of(strategy: &'static dyn Strategy) -> SharedStrategy {
        SharedStrategy(Shared::Static(strategy))
    }

    /// A strategy made at run time.
    pub fn new(strategy: impl Strategy) -> SharedStrategy {
        SharedStrategy(Shared::Made(Arc::new(strategy)))
    }

    /// The strategy of a kind with no rules of its own.
    pub const fn plain() -> SharedStrategy {
        SharedStrategy::of(&Plain)
    }
}

impl std::ops::Deref for SharedStrategy {
    type Target = dyn Strategy;

    fn deref(&self) -> &Self::Target {
        match &self.0 {
            Shared::Static(s) => *s,
            Shared::Made(s) => s.as_ref(),
        }
    }
}

impl std::fmt::Debug for SharedStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Strategy({})", self.name())
    }
}

impl PartialEq for SharedStrategy {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name() && self.definition() == other.definition()
    }
}

impl Eq for SharedStrategy {}

/// A new object's status, emptied: it is the controllers' to write, through the status
/// subresource.
pub fn reset_status(new: &mut Object) {
    new.insert("status".into(), json!({}));
}

/// The stored status carried into `new`, which may not change it.
pub fn keep_status(new: &mut Object, old: &Object) {
    match old.get("status") {
        Some(s) => new.insert("status".into(), s.clone()),
        None => new.remove("status"),
    };
}

/// `old` with only its status taken from `new`.
pub fn status_only(new: &Object, mut old: Object) -> Object {
    match new.get("status") {
        Some(s) => old.insert("status".into(), s.clone()),
        None => old.remove("status"),
    };
    old
}
