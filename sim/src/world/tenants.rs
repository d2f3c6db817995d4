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
    /// Put `left` more ConfigMaps in namespace `name` (whose uid is `uid`).
    FillNamespace { name: String, uid: String, made: Vec<String>, left: u32 },
    DeleteNamespace { name: String, uid: String, made: Vec<String> },
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
    /// Its owner's deletion was asked for but not answered (it may have happened):
    /// kept, or what the deletion would make of it.
    KeptOr(Gone),
}

/// What an owner's deletion makes of its dependents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Gone {
    Collected,
    Orphaned,
}

/// What must be true once the controllers have finished.
#[derive(Clone, Debug)]
enum Expect {
    /// The namespace of this uid is gone (one of its name made later may be there).
    NamespaceGone { name: String, uid: String },
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
                let made = match request(json_request("POST", "/api/v1/namespaces", "", &body)) {
                    Some(reply) if reply.status == 201 => Some(reply.json()),
                    // Made by an answer that was lost, or an earlier one still going.
                    Some(reply) if reply.status == 409 => self.live_object(r, &format!("/api/v1/namespaces/{name}")),
                    _ => None,
                };
                uid_of(made).map(|uid| {
                    let left = 1 + self.rng.below(3) as u32;
                    Round::FillNamespace { name: name.clone(), uid, made: Vec::new(), left }
                })
            }
            Round::FillNamespace { name, uid, made, left } => {
                let object = format!("c{}-{left}", self.tenants[t].rounds);
                let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": object}}).to_string();
                match request(json_request("POST", &format!("/api/v1/namespaces/{name}/configmaps"), "", &body)) {
                    Some(reply) if matches!(reply.status, 201 | 409) => {
                        let mut made = made.clone();
                        made.push(format!("/api/v1/namespaces/{name}/configmaps/{object}"));
                        let (name, uid) = (name.clone(), uid.clone());
                        Some(match left - 1 {
                            0 => Round::DeleteNamespace { name, uid, made },
                            left => Round::FillNamespace { name, uid, made, left },
                        })
                    }
                    _ => None,
                }
            }
            Round::DeleteNamespace { name, uid, made } => match request(json_request("DELETE", &format!("/api/v1/namespaces/{name}"), "", &preconditions(uid))) {
                Some(reply) if matches!(reply.status, 200 | 202 | 404) => {
                    let expect = &mut self.tenants[t].expect;
                    expect.push(Expect::NamespaceGone { name: name.clone(), uid: uid.clone() });
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
                uid_of(made).map(|uid| {
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
                let gone = if *policy == Policy::Orphan { Gone::Orphaned } else { Gone::Collected };
                set_fates(&mut self.tenants[t].expect, &owner.uid, Fate::KeptOr(gone));
                let options = json!({"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": format!("{policy:?}"), "preconditions": {"uid": owner.uid}});
                match request(json_request("DELETE", &owner_path(&owner.name), "", &options.to_string())) {
                    Some(reply) if matches!(reply.status, 200 | 202 | 404) => {
                        let fate = match gone {
                            Gone::Orphaned => Fate::Orphaned,
                            Gone::Collected => Fate::Collected,
                        };
                        set_fates(&mut self.tenants[t].expect, &owner.uid, fate);
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
                Expect::NamespaceGone { name, uid } => {
                    let reply = get(&format!("/api/v1/namespaces/{name}"))?;
                    if reply.status == 200 && uid_of(Some(reply.json())).as_ref() == Some(uid) {
                        return Some(format!("namespace {name} ({uid}) was deleted but is still there: {}", reply.json()));
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
                    if reply.status == 200 && uid_of(Some(reply.json())).as_ref() == Some(uid) {
                        return Some(format!("owner {name} ({uid}) was deleted but is still there: {}", reply.json()));
                    }
                }
                Expect::Dependent { name, owner, fate } => {
                    let reply = get(&owner_path(name))?;
                    let object = reply.json();
                    let refers = object["metadata"]["ownerReferences"].as_array().into_iter().flatten().any(|o| o["uid"] == json!(owner));
                    let (kept, collected, orphaned) = (reply.status == 200 && refers, reply.status == 404, reply.status == 200 && !refers);
                    let holds = match fate {
                        Fate::Kept => kept,
                        Fate::Collected => collected,
                        Fate::Orphaned => orphaned,
                        Fate::KeptOr(Gone::Collected) => kept || collected,
                        Fate::KeptOr(Gone::Orphaned) => kept || orphaned,
                    };
                    if !holds {
                        return Some(format!("dependent {name} of owner {owner} should be {fate:?}: {} {object}", reply.status));
                    }
                    match (kept, collected) {
                        (true, _) => self.tally.kept += 1,
                        (_, true) => self.tally.collected += 1,
                        _ => self.tally.orphaned += 1,
                    }
                }
            }
        }
        None
    }
}

/// What the dependents of owner `uid` should come to.
fn set_fates(expect: &mut [Expect], uid: &str, fate: Fate) {
    for e in expect {
        if let Expect::Dependent { owner, fate: f, .. } = e {
            if owner == uid {
                *f = fate;
            }
        }
    }
}

/// The uid of an object read.
fn uid_of(object: Option<Value>) -> Option<String> {
    object?.pointer("/metadata/uid").and_then(Value::as_str).map(str::to_owned)
}

/// DeleteOptions that delete only the object of this uid.
fn preconditions(uid: &str) -> String {
    json!({"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"uid": uid}}).to_string()
}

/// Where ConfigMap `name` of the owners' namespace is served.
fn owner_path(name: &str) -> String {
    format!("/api/v1/namespaces/{GC_NAMESPACE}/configmaps/{name}")
}
