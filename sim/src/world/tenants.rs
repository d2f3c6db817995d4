//! Tenants: clients whose objects only the built-in controllers finish with. In turn,
//! a tenant makes a namespace, fills it and deletes it (the namespace controller must
//! empty it and remove it), or makes an owner, gives it dependents and deletes it with
//! a propagation policy (the garbage collector must collect the dependents, or orphan
//! them, and must not touch those of a newer owner of the same name). Names come back
//! every other round, so a round may wait for the last one's deletion to finish.
//! What must hold once the controllers are done is written down as it is learnt and
//! checked at the end of the run.

use super::{one_reply, World};
use apiary_core::harness::{json_request, Reply};
use serde_json::{json, Value};

/// The namespace of the owners and dependents.
pub(super) const GC_NAMESPACE: &str = "gc";

/// Where a tenant's round is.
#[derive(Clone, Debug)]
enum Round {
    /// Make namespace `name` (waiting while an earlier one of that name terminates).
    MakeNamespace { name: String },
    /// Put `left` more ConfigMaps in it.
    FillNamespace { name: String, made: Vec<String>, left: u32 },
    DeleteNamespace { name: String, made: Vec<String> },
    /// Make owner ConfigMap `name` (waiting while an earlier one of that name goes).
    MakeOwner { name: String },
    /// Give the owner `left` more dependents.
    AddDependents { owner: Owner, left: u32 },
    DeleteOwner { owner: Owner, policy: Policy },
}

/// An owner as made in this round.
#[derive(Clone, Debug)]
struct Owner {
    name: String,
    uid: String,
}

/// `propagationPolicy` of an owner's deletion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Policy {
    Background,
    Foreground,
    Orphan,
}

/// What a dependent should come to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    /// Its owner lives: it stays, its reference with it.
    Kept,
    /// Its owner was deleted in the background or the foreground: it is gone.
    Collected,
    /// Its owner was deleted orphaning it: it stays, without the reference.
    Orphaned,
}

/// What must be true once the controllers have finished.
#[derive(Clone, Debug)]
enum Expect {
    /// The namespace is gone (unless a later round made it again).
    NamespaceGone { name: String },
    /// An object made in a deleted namespace is gone.
    ObjectGone { path: String },
    Dependent { name: String, owner: String, fate: Fate },
    /// The owner of this uid is gone.
    OwnerGone { name: String, uid: String },
}

/// A tenant: its round, and what it expects.
pub(super) struct Tenant {
    id: usize,
    rounds: u64,
    round: Round,
    expect: Vec<Expect>,
}

impl Tenant {
    pub(super) fn new(id: usize) -> Tenant {
        Tenant { id, rounds: 0, round: Round::MakeNamespace { name: format!("t{id}-0") }, expect: Vec::new() }
    }
}

impl World {
    /// Tenant `t`'s step: one request of its round, through a live replica.
    pub(super) fn tend(&mut self, t: usize) {
        let Some(r) = self.live_replica() else { return };
        let round = self.tenants[t].round.clone();
        let request = |bytes: Vec<u8>| -> Option<Reply> {
            let harness = self.replicas[r].harness.as_ref().expect("live");
            one_reply(&harness.send(&bytes))
        };
        // An answer that does not say what happened leaves the round where it is: the
        // step is tried again.
        let next = match &round {
            Round::MakeNamespace { name } => {
                let body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}).to_string();
                match request(json_request("POST", "/api/v1/namespaces", "", &body)) {
                    Some(reply) if reply.status == 201 || (reply.status == 409 && self.is_ours(r, &format!("/api/v1/namespaces/{name}"))) => {
                        self.tenants[t].expect.retain(|e| !matches!(e, Expect::NamespaceGone { name: n } if n == name));
                        let left = 1 + self.rng.below(3) as u32;
                        Some(Round::FillNamespace { name: name.clone(), made: Vec::new(), left })
                    }
                    _ => None,
                }
            }
            Round::FillNamespace { name, made, left } => {
                let object = format!("c{}-{left}", self.tenants[t].rounds);
                let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": object}}).to_string();
                match request(json_request("POST", &format!("/api/v1/namespaces/{name}/configmaps"), "", &body)) {
                    Some(reply) if matches!(reply.status, 201 | 409) => {
                        let mut made = made.clone();
                        made.push(format!("/api/v1/namespaces/{name}/configmaps/{object}"));
                        Some(match left - 1 {
                            0 => Round::DeleteNamespace { name: name.clone(), made },
                            left => Round::FillNamespace { name: name.clone(), made, left },
                        })
                    }
                    _ => None,
                }
            }
            Round::DeleteNamespace { name, made } => match request(json_request("DELETE", &format!("/api/v1/namespaces/{name}"), "", "")) {
                Some(reply) if matches!(reply.status, 200 | 202 | 404) => {
                    let expect = &mut self.tenants[t].expect;
                    expect.push(Expect::NamespaceGone { name: name.clone() });
                    expect.extend(made.iter().map(|path| Expect::ObjectGone { path: path.clone() }));
                    Some(self.next_round(t))
                }
                _ => None,
            },
            Round::MakeOwner { name } => {
                let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}).to_string();
                let answer = request(json_request("POST", &format!("/api/v1/namespaces/{GC_NAMESPACE}/configmaps"), "", &body));
                let made = match answer {
                    Some(reply) if reply.status == 201 => Some(reply.json()),
                    // Made by an answer that was lost, or an earlier owner still going.
                    Some(reply) if reply.status == 409 => self.live_object(r, &owner_path(name)),
                    _ => None,
                };
                made.and_then(|o| o.pointer("/metadata/uid").and_then(Value::as_str).map(str::to_owned)).map(|uid| {
                    let left = 1 + self.rng.below(3) as u32;
                    Round::AddDependents { owner: Owner { name: name.clone(), uid }, left }
                })
            }
            Round::AddDependents { owner, left } => {
                let name = format!("d{}-{}-{left}", self.tenants[t].id, self.tenants[t].rounds);
                let reference = json!({"apiVersion": "v1", "kind": "ConfigMap", "name": owner.name, "uid": owner.uid, "blockOwnerDeletion": true});
                let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "ownerReferences": [reference]}}).to_string();
                match request(json_request("POST", &format!("/api/v1/namespaces/{GC_NAMESPACE}/configmaps"), "", &body)) {
                    Some(reply) if matches!(reply.status, 201 | 409) => {
                        self.tenants[t].expect.push(Expect::Dependent { name, owner: owner.uid.clone(), fate: Fate::Kept });
                        Some(match left - 1 {
                            0 => {
                                let policy = *self.rng.pick(&[Policy::Background, Policy::Foreground, Policy::Orphan]);
                                Round::DeleteOwner { owner: owner.clone(), policy }
                            }
                            left => Round::AddDependents { owner: owner.clone(), left },
                        })
                    }
                    _ => None,
                }
            }
            Round::DeleteOwner { owner, policy } => {
                let options = json!({"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": format!("{policy:?}"), "preconditions": {"uid": owner.uid}});
                match request(json_request("DELETE", &owner_path(&owner.name), "", &options.to_string())) {
                    Some(reply) if matches!(reply.status, 200 | 202 | 404) => {
                        let fate = if *policy == Policy::Orphan { Fate::Orphaned } else { Fate::Collected };
                        for e in &mut self.tenants[t].expect {
                            if let Expect::Dependent { owner: uid, fate: f, .. } = e {
                                if *uid == owner.uid {
                                    *f = fate;
                                }
                            }
                        }
                        self.tenants[t].expect.push(Expect::OwnerGone { name: owner.name.clone(), uid: owner.uid.clone() });
                        Some(self.next_round(t))
                    }
                    _ => None,
                }
            }
        };
        if let Some(next) = next {
            self.tenants[t].round = next;
        }
    }

    /// Tenant `t`'s next round: a namespace or an owner, each of two names.
    fn next_round(&mut self, t: usize) -> Round {
        let tenant = &mut self.tenants[t];
        tenant.rounds += 1;
        let name = format!("{}-{}", tenant.id, tenant.rounds % 2);
        match self.rng.chance(500) {
            true => Round::MakeNamespace { name: format!("t{name}") },
            false => Round::MakeOwner { name: format!("o{name}") },
        }
    }

    /// The object at `path` as replica `r` reads it, unless it is absent or being deleted.
    fn live_object(&self, r: usize, path: &str) -> Option<Value> {
        let reply = one_reply(&self.replicas[r].harness.as_ref()?.send(&json_request("GET", path, "", "")))?;
        let object = reply.json();
        (reply.status == 200 && object.pointer("/metadata/deletionTimestamp").is_none()).then_some(object)
    }

    /// Whether the object at `path` (which this tenant made, its answer lost) is there
    /// and not being deleted.
    fn is_ours(&self, r: usize, path: &str) -> bool {
        self.live_object(r, path).is_some()
    }

    /// What the tenants expect, checked through replica `r` once the controllers are
    /// done; the first thing that does not hold, in words.
    pub(super) fn check_tenants(&mut self, r: usize) -> Option<String> {
        let harness = self.replicas[r].harness.as_ref().expect("all live at the end");
        let get = |path: &str| one_reply(&harness.send(&json_request("GET", path, "", "")));
        let namespaces = get("/api/v1/namespaces")?.json();
        for ns in namespaces["items"].as_array().into_iter().flatten() {
            if ns.pointer("/metadata/deletionTimestamp").is_some() {
                return Some(format!("namespace {} was left terminating: {ns}", ns["metadata"]["name"]));
            }
        }
        let expectations: Vec<Expect> = self.tenants.iter().flat_map(|t| t.expect.clone()).collect();
        for expect in expectations {
            match &expect {
                Expect::NamespaceGone { name } => {
                    let reply = get(&format!("/api/v1/namespaces/{name}"))?;
                    if reply.status != 404 {
                        return Some(format!("namespace {name} was deleted but is still there: {}", reply.json()));
                    }
                    self.tally.namespaces_deleted += 1;
                }
                Expect::ObjectGone { path } => {
                    let reply = get(path)?;
                    if reply.status != 404 {
                        return Some(format!("{path} outlived its deleted namespace: {}", reply.json()));
                    }
                }
                Expect::OwnerGone { name, uid } => {
                    let reply = get(&owner_path(name))?;
                    if reply.status == 200 && reply.json().pointer("/metadata/uid").and_then(Value::as_str) == Some(uid) {
                        return Some(format!("owner {name} ({uid}) was deleted but is still there: {}", reply.json()));
                    }
                }
                Expect::Dependent { name, owner, fate } => {
                    let reply = get(&owner_path(name))?;
                    let object = reply.json();
                    let refers = object["metadata"]["ownerReferences"].as_array().into_iter().flatten().any(|o| o["uid"] == json!(owner));
                    let holds = match fate {
                        Fate::Kept => reply.status == 200 && refers,
                        Fate::Collected => reply.status == 404,
                        Fate::Orphaned => reply.status == 200 && !refers,
                    };
                    if !holds {
                        return Some(format!("dependent {name} of owner {owner} should be {fate:?}: {} {object}", reply.status));
                    }
                    match fate {
                        Fate::Kept => self.tally.kept += 1,
                        Fate::Collected => self.tally.collected += 1,
                        Fate::Orphaned => self.tally.orphaned += 1,
                    }
                }
            }
        }
        None
    }
}

/// Where ConfigMap `name` of the owners' namespace is served.
fn owner_path(name: &str) -> String {
    format!("/api/v1/namespaces/{GC_NAMESPACE}/configmaps/{name}")
}
