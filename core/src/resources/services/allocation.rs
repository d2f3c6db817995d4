//! Claiming and releasing a Service's cluster IPs and node ports in storage.
//!
//! A cluster IP is claimed by creating its IPAddress object (`networking.k8s.io/v1`,
//! named by the address, its `parentRef` the Service): the create either wins or finds
//! the address taken, so no address is handed out twice, by one server or several,
//! before or after a crash. Node ports are claimed by a compare-and-swap of the node
//! port record ([`TakenPorts`]). A claim that fails half-way gives back what it took;
//! so does the REST handler when the Service's own write fails afterwards.
//!
//! The states, in order: [`ClaimIps`] (list the addresses taken once, then create one
//! IPAddress per family), [`ClaimPorts`] (read the record, write it back with the new
//! ports), and on the way out [`Release`] (delete the IPAddresses this Service owns,
//! take its ports out of the record).

use super::spec::{self, Spec};
use crate::resources::claims::{Claim, ClaimContext, ClaimState};
use crate::resources::Object;
use crate::rest::object::uuid_v4;
use crate::service_network::cidr::parse_ip;
use crate::service_network::{Cidr, Family, PortRange, ServiceNetwork, TakenPorts};
use crate::status::ApiError;
use crate::storage::{Completion, KeyValue, StorageError, StorageOp, StorageOutput};
use crate::validation::FieldError;
use bytes::Bytes;
use serde_json::{json, Value};
use std::collections::{BTreeSet, HashSet};
use std::net::IpAddr;

pub const IP_GROUP: &str = "networking.k8s.io";
pub const IP_RESOURCE: &str = "ipaddresses";
/// The label upstream's allocator puts on the IPAddresses it manages.
const MANAGED_BY: &str = "ipallocator.k8s.io";
/// How often a lost race for one address or the port record is run again.
const RETRIES: u32 = 32;

/// What a Service holds: its cluster IPs and its node ports (health check port
/// included).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Holdings {
    pub ips: Vec<IpAddr>,
    pub ports: BTreeSet<u16>,
}

impl Holdings {
    pub fn of(spec: &Spec) -> Holdings {
        let ips = if spec::needs_cluster_ip(spec) {
            spec::strings_of(spec, "clusterIPs").iter().filter_map(|ip| parse_ip(ip)).collect()
        } else {
            Vec::new()
        };
        let mut ports: BTreeSet<u16> = spec::ports(spec)
            .iter()
            .filter_map(|p| u16::try_from(spec::int_of(p.get("nodePort"))).ok())
            .filter(|p| *p != 0)
            .collect();
        if let Ok(port) = u16::try_from(spec::int_of(spec.get("healthCheckNodePort"))) {
            if port != 0 {
                ports.insert(port);
            }
        }
        Holdings { ips, ports }
    }

    /// What `self` holds that `other` does not.
    pub fn without(&self, other: &Holdings) -> Holdings {
        Holdings {
            ips: self.ips.iter().filter(|ip| !other.ips.contains(ip)).copied().collect(),
            ports: self.ports.difference(&other.ports).copied().collect(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.ips.is_empty() && self.ports.is_empty()
    }
}

/// Who an IPAddress belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owner {
    pub namespace: String,
    pub name: String,
}

impl Owner {
    pub fn of(obj: &Object) -> Owner {
        let meta = |f: &str| obj.get("metadata").and_then(|m| m.get(f)).and_then(Value::as_str).unwrap_or("").to_owned();
        Owner { namespace: meta("namespace"), name: meta("name") }
    }

    fn owns(&self, ip_address: &Value) -> bool {
        let parent = ip_address.pointer("/spec/parentRef");
        let field = |f: &str| parent.and_then(|p| p.get(f)).and_then(Value::as_str).unwrap_or("");
        field("resource") == "services" && field("namespace") == self.namespace && field("name") == self.name
    }
}

/// A cluster IP to claim: the one asked for, or any free one of a family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum IpWant {
    Given(IpAddr),
    Next(Family),
}

/// A node port to claim: where it goes in the spec, and the one asked for (0: any).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PortSlot {
    /// `spec.ports[i].nodePort`.
    Port(usize),
    /// `spec.healthCheckNodePort`.
    HealthCheck,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PortWant {
    slot: PortSlot,
    port: u16,
    /// The port is the Service's already (shared with another port of its number).
    held: bool,
}

impl PortSlot {
    fn field(self) -> String {
        match self {
            PortSlot::Port(i) => format!("spec.ports[{i}].nodePort"),
            PortSlot::HealthCheck => "spec.healthCheckNodePort".to_owned(),
        }
    }
}

/// A small random sequence drawn from the request's entropy: where searches start.
#[derive(Clone, Debug)]
struct Draw(u64);

impl Draw {
    fn new(entropy: &[u8; 48]) -> Draw {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for chunk in entropy.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            seed = (seed ^ u64::from_le_bytes(word)).wrapping_mul(0xbf58_476d_1ce4_e5b9).rotate_left(31);
        }
        Draw(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

fn invalid(obj: &Object, errs: Vec<FieldError>) -> ApiError {
    ApiError::invalid("", "Service", &Owner::of(obj).name, errs)
}

fn ip_key(ctx: &ClaimContext, ip: &IpAddr) -> String {
    crate::storage::object_key(&ctx.storage_prefix, IP_GROUP, IP_RESOURCE, None, &ip.to_string())
}

fn ports_key(ctx: &ClaimContext) -> String {
    let mut key = crate::storage::resource_prefix(&ctx.storage_prefix, "", "ranges", None);
    key.push_str("servicenodeports");
    key
}

/// Start claiming what the Service `obj` needs beyond what `old` (the stored Service
/// of an update) holds: its IP families settled, requested values checked against
/// the ranges, then the storage states.
pub fn claim(ctx: &ClaimContext, mut obj: Object, old: Option<&Object>) -> Claim {
    let old_spec = old.and_then(spec::spec).cloned();
    let spec = spec::spec_mut(&mut obj);
    if let Err(errs) = super::families::complete(spec, old_spec.as_ref(), &ctx.network) {
        return Claim::Refused(invalid(&obj, errs));
    }
    let held = old_spec.as_ref().map(Holdings::of).unwrap_or_default();
    let ips = match ip_wants(spec, &held, &ctx.network) {
        Ok(wants) => wants,
        Err(e) => return Claim::Refused(invalid(&obj, vec![e])),
    };
    let ports = match port_wants(spec, &held, ctx.network.node_ports, ctx.dry_run) {
        Ok(wants) => wants,
        Err(e) => return Claim::Refused(invalid(&obj, vec![e])),
    };
    let mut draw = Draw::new(&ctx.entropy);
    if ctx.dry_run {
        // Nothing is written: answer with values that could have been given.
        let chosen: Vec<IpAddr> = ips.iter().map(|w| pick_unchecked(*w, &ctx.network, &mut draw)).collect();
        let range = ctx.network.node_ports;
        let picked: Vec<u16> = ports
            .iter()
            .map(|w| if w.port != 0 { w.port } else { range.base + (draw.next() % u64::from(range.size)) as u16 })
            .collect();
        fill(&mut obj, &chosen, &ports, &picked);
        return Claim::Done(obj);
    }
    ClaimIps {
        ctx: ctx.clone(),
        obj,
        wants: ips,
        ports,
        claimed: Vec::new(),
        taken: None,
        draw,
        retries: 0,
    }
    .next()
}

/// Start giving back what `held` (a Service gone, or as it was before an update) holds
/// that `kept` (the Service as it is now) does not.
pub fn release(ctx: &ClaimContext, held: &Object, kept: Option<&Object>) -> Option<Claim> {
    if ctx.dry_run {
        return None;
    }
    let before = spec::spec(held).map(Holdings::of).unwrap_or_default();
    let after = kept.and_then(spec::spec).map(Holdings::of).unwrap_or_default();
    let gone = before.without(&after);
    if gone.is_empty() {
        return None;
    }
    Some(
        Release {
            ctx: ctx.clone(),
            owner: Owner::of(held),
            ips: gone.ips,
            ports: gone.ports,
            then: Box::new(Claim::Done(Object::new())),
            retries: 0,
        }
        .next(),
    )
}

/// The cluster IPs to claim: one per family the Service asks for, those it holds
/// already excepted.
fn ip_wants(spec: &Spec, held: &Holdings, network: &ServiceNetwork) -> Result<Vec<IpWant>, FieldError> {
    if !spec::needs_cluster_ip(spec) || spec::headless(spec) {
        return Ok(Vec::new());
    }
    let given = spec::strings_of(spec, "clusterIPs");
    let families: Vec<Family> = spec::strings_of(spec, "ipFamilies").iter().filter_map(|f| Family::parse(f)).collect();
    let mut wants = Vec::new();
    for (i, family) in families.iter().enumerate() {
        let Some(text) = given.get(i).filter(|ip| !ip.is_empty()) else {
            wants.push(IpWant::Next(*family));
            continue;
        };
        let Some(ip) = parse_ip(text) else { continue };
        if held.ips.contains(&ip) {
            continue;
        }
        let range = network.range_of(*family);
        if range.and_then(|r| r.index_of(&ip)).is_none() {
            let cidr = range.map(Cidr::to_string).unwrap_or_default();
            let why = format!(
                "failed to allocate IP {text}: the provided IP ({ip}) is not in the valid range. The range of valid IPs is {cidr}"
            );
            let shown = spec.get("clusterIPs").cloned().unwrap_or(Value::Null);
            return Err(FieldError::invalid_json("spec.clusterIPs", &shown, why));
        }
        wants.push(IpWant::Given(ip));
    }
    Ok(wants)
}

/// The node ports to claim: those asked for that the Service does not hold yet, and
/// one for each port (and health check) without. Ports of one number share a node
/// port, as upstream gives a TCP and a UDP port of one number the same.
fn port_wants(spec: &Spec, held: &Holdings, range: PortRange, dry_run: bool) -> Result<Vec<PortWant>, FieldError> {
    let mut wants = Vec::new();
    let check = |slot: PortSlot, port: i64| -> Result<(), FieldError> {
        // Upstream checks the range only when it allocates for real.
        if dry_run || range.contains(port) {
            return Ok(());
        }
        let why = format!("provided port is not in the valid range. The range of valid ports is {range}");
        Err(FieldError::invalid_unquoted(&slot.field(), &port.to_string(), &why))
    };
    if spec::needs_node_ports(spec) {
        let mut by_number: Vec<(i64, u16)> = Vec::new();
        for (i, port) in spec::ports(spec).iter().enumerate() {
            let number = spec::int_of(port.get("port"));
            let node_port = spec::int_of(port.get("nodePort"));
            let slot = PortSlot::Port(i);
            if node_port != 0 {
                let Ok(p) = u16::try_from(node_port) else { continue };
                if !held.ports.contains(&p) {
                    check(slot, node_port)?;
                    if !wants.iter().any(|w: &PortWant| w.port == p) {
                        wants.push(PortWant { slot, port: p, held: false });
                    }
                }
                by_number.push((number, p));
            } else if let Some((_, shared)) = by_number.iter().find(|(n, _)| *n == number) {
                wants.push(PortWant { slot, port: *shared, held: held.ports.contains(shared) });
            } else {
                wants.push(PortWant { slot, port: 0, held: false });
            }
        }
    }
    if spec::needs_health_check_port(spec) {
        let port = spec::int_of(spec.get("healthCheckNodePort"));
        match u16::try_from(port) {
            Ok(0) => wants.push(PortWant { slot: PortSlot::HealthCheck, port: 0, held: false }),
            Ok(p) if !held.ports.contains(&p) => {
                check(PortSlot::HealthCheck, port)?;
                wants.push(PortWant { slot: PortSlot::HealthCheck, port: p, held: false });
            }
            _ => {}
        }
    }
    Ok(wants)
}

/// An address for a dry run: the one asked for, or a random one of the range.
fn pick_unchecked(want: IpWant, network: &ServiceNetwork, draw: &mut Draw) -> IpAddr {
    match want {
        IpWant::Given(ip) => ip,
        IpWant::Next(family) => {
            let range = network.range_of(family).expect("families are checked against the ranges");
            range.nth(draw.next() % range.usable().max(1)).unwrap_or(IpAddr::from([0, 0, 0, 0]))
        }
    }
}

/// Write the claimed values into the Service: the IPs in family order after those it
/// had, each port's node port.
fn fill(obj: &mut Object, ips: &[IpAddr], ports: &[PortWant], picked: &[u16]) {
    let spec = spec::spec_mut(obj);
    if !ips.is_empty() {
        let mut all: Vec<String> = spec::strings_of(spec, "clusterIPs").into_iter().filter(|ip| !ip.is_empty()).collect();
        let given: Vec<IpAddr> = all.iter().filter_map(|ip| parse_ip(ip)).collect();
        for ip in ips.iter().filter(|ip| !given.contains(ip)) {
            all.push(ip.to_string());
        }
        spec.insert("clusterIP".into(), json!(all[0]));
        spec.insert("clusterIPs".into(), json!(all));
    }
    for (want, port) in ports.iter().zip(picked) {
        match want.slot {
            PortSlot::Port(i) => {
                if let Some(p) = spec.get_mut("ports").and_then(|p| p.get_mut(i)).and_then(Value::as_object_mut) {
                    p.insert("nodePort".into(), json!(port));
                }
            }
            PortSlot::HealthCheck => {
                spec.insert("healthCheckNodePort".into(), json!(port));
            }
        }
    }
}

/// Claiming the cluster IPs, one create of an IPAddress at a time.
#[derive(Debug)]
struct ClaimIps {
    ctx: ClaimContext,
    obj: Object,
    /// Still to claim, in family order.
    wants: Vec<IpWant>,
    /// Claimed after the IPs.
    ports: Vec<PortWant>,
    claimed: Vec<IpAddr>,
    /// The addresses taken, once listed (only a search for a free one lists).
    taken: Option<HashSet<IpAddr>>,
    draw: Draw,
    retries: u32,
}

impl ClaimIps {
    fn next(mut self) -> Claim {
        let Some(want) = self.wants.first().copied() else {
            return ClaimPorts::start(self.ctx, self.obj, self.claimed, self.ports);
        };
        let ip = match want {
            IpWant::Given(ip) => ip,
            IpWant::Next(family) => {
                let Some(taken) = &self.taken else {
                    let prefix = crate::storage::resource_prefix(&self.ctx.storage_prefix, IP_GROUP, IP_RESOURCE, None);
                    return Claim::Storage(StorageOp::list_latest(prefix), Box::new(Listing(self)));
                };
                let range = self.ctx.network.range_of(family).expect("families are checked against the ranges");
                match free_address(range, taken, &mut self.draw) {
                    Some(ip) => ip,
                    None => {
                        let e = ApiError::internal("failed to allocate a serviceIP: range is full");
                        return self.give_back(e);
                    }
                }
            }
        };
        let op = StorageOp::Create { key: ip_key(&self.ctx, &ip), value: self.ip_address(&ip) };
        Claim::Storage(op, Box::new(Creating { claim: self, ip }))
    }

    /// The IPAddress object that claims `ip` for this Service.
    fn ip_address(&self, ip: &IpAddr) -> Bytes {
        let owner = Owner::of(&self.obj);
        let mut uid = [0u8; 16];
        let text = ip.to_string();
        for (i, b) in self.ctx.entropy[32..48].iter().enumerate() {
            uid[i] = b ^ text.as_bytes().get(i).copied().unwrap_or(0x5a) ^ (self.claimed.len() as u8);
        }
        let family = Family::of(ip).name();
        let obj = json!({
            "kind": "IPAddress",
            "apiVersion": "networking.k8s.io/v1",
            "metadata": {
                "name": text,
                "uid": uuid_v4(&uid),
                "creationTimestamp": crate::time::rfc3339(self.ctx.now),
                "labels": {
                    "ipaddress.kubernetes.io/ip-family": family,
                    "ipaddress.kubernetes.io/managed-by": MANAGED_BY,
                },
            },
            "spec": {"parentRef": {"resource": "services", "namespace": owner.namespace, "name": owner.name}},
        });
        match obj {
            Value::Object(map) => crate::rest::object::into_storage(map),
            _ => unreachable!("an object literal"),
        }
    }

    /// Give back what was claimed, then answer `e`.
    fn give_back(self, e: ApiError) -> Claim {
        let (ports, ips) = (BTreeSet::new(), self.claimed);
        Release { ctx: self.ctx, owner: Owner::of(&self.obj), ips, ports, then: Box::new(Claim::Refused(e)), retries: 0 }.next()
    }
}

/// A free address of `range`, searched from a random one.
fn free_address(range: &Cidr, taken: &HashSet<IpAddr>, draw: &mut Draw) -> Option<IpAddr> {
    let usable = range.usable();
    let in_range = taken.iter().filter(|ip| range.index_of(ip).is_some()).count() as u64;
    if in_range >= usable {
        return None;
    }
    let start = draw.next() % usable;
    // At most `in_range + 1` addresses are looked at before a free one.
    (0..=in_range).map(|k| (start + k) % usable).filter_map(|n| range.nth(n)).find(|ip| !taken.contains(ip))
}

/// Waiting for the list of the addresses taken.
#[derive(Debug)]
struct Listing(ClaimIps);

impl ClaimState for Listing {
    fn resume(self: Box<Self>, done: Completion) -> Claim {
        let mut claim = self.0;
        match done {
            Ok(StorageOutput::Listed(page)) => {
                let taken = page
                    .items
                    .iter()
                    .filter_map(|kv| kv.key.rsplit('/').next().and_then(parse_ip))
                    .collect();
                claim.taken = Some(taken);
                claim.next()
            }
            other => claim.give_back(unexpected(other)),
        }
    }
}

/// Waiting for the create of one IPAddress.
#[derive(Debug)]
struct Creating {
    claim: ClaimIps,
    ip: IpAddr,
}

impl ClaimState for Creating {
    fn resume(self: Box<Self>, done: Completion) -> Claim {
        let Creating { mut claim, ip } = *self;
        match done {
            Ok(StorageOutput::Written(_)) => {
                claim.wants.remove(0);
                claim.claimed.push(ip);
                claim.retries = 0;
                claim.next()
            }
            Err(StorageError::AlreadyExists { .. }) => match claim.wants[0] {
                IpWant::Given(_) => {
                    let shown = spec::spec(&claim.obj).and_then(|s| s.get("clusterIPs")).cloned().unwrap_or(Value::Null);
                    let why = format!("failed to allocate IP {ip}: provided IP is already allocated");
                    let e = invalid(&claim.obj, vec![FieldError::invalid_json("spec.clusterIPs", &shown, why)]);
                    claim.give_back(e)
                }
                IpWant::Next(_) if claim.retries < RETRIES => {
                    // Someone took it since the list: look again.
                    claim.retries += 1;
                    if let Some(taken) = claim.taken.as_mut() {
                        taken.insert(ip);
                    }
                    claim.next()
                }
                IpWant::Next(_) => claim.give_back(ApiError::internal("failed to allocate a serviceIP: too many attempts")),
            },
            other => claim.give_back(unexpected(other)),
        }
    }
}

/// Claiming the node ports: one compare-and-swap of the record.
#[derive(Debug)]
struct ClaimPorts {
    ctx: ClaimContext,
    obj: Object,
    /// Claimed before: given back if the ports cannot be.
    ips: Vec<IpAddr>,
    wants: Vec<PortWant>,
    draw: Draw,
    retries: u32,
}

impl ClaimPorts {
    fn start(ctx: ClaimContext, mut obj: Object, ips: Vec<IpAddr>, wants: Vec<PortWant>) -> Claim {
        if wants.is_empty() {
            fill(&mut obj, &ips, &[], &[]);
            return Claim::Done(obj);
        }
        let draw = Draw::new(&ctx.entropy);
        ClaimPorts { ctx, obj, ips, wants, draw, retries: 0 }.read()
    }

    fn read(self) -> Claim {
        let op = StorageOp::Get { key: ports_key(&self.ctx) };
        Claim::Storage(op, Box::new(ReadingPorts(self)))
    }

    /// Take the ports out of `taken`, or say why not.
    fn take(&mut self, taken: &mut TakenPorts) -> Result<Vec<u16>, ApiError> {
        let range = self.ctx.network.node_ports;
        let mut picked = Vec::with_capacity(self.wants.len());
        let asked: HashSet<u16> = self.wants.iter().map(|w| w.port).filter(|p| *p != 0).collect();
        for want in &self.wants {
            if want.port != 0 {
                if want.held || picked.contains(&want.port) {
                    picked.push(want.port);
                    continue;
                }
                if !taken.ports.insert(want.port) {
                    let e = FieldError::invalid_unquoted(&want.slot.field(), &want.port.to_string(), "provided port is already allocated");
                    return Err(invalid(&self.obj, vec![e]));
                }
                picked.push(want.port);
                continue;
            }
            let start = (self.draw.next() % u64::from(range.size)) as u16;
            // Ports asked for by a later port of this Service are not handed out first.
            let mut blocked = taken.clone();
            blocked.ports.extend(asked.iter().copied());
            match blocked.free(range, start) {
                Some(port) => {
                    taken.ports.insert(port);
                    picked.push(port);
                }
                None => return Err(ApiError::internal("failed to allocate a nodePort: range is full")),
            }
        }
        Ok(picked)
    }

    fn give_back(self, e: ApiError) -> Claim {
        Release { ctx: self.ctx, owner: Owner::of(&self.obj), ips: self.ips, ports: BTreeSet::new(), then: Box::new(Claim::Refused(e)), retries: 0 }.next()
    }
}

/// Waiting for the node port record.
#[derive(Debug)]
struct ReadingPorts(ClaimPorts);

impl ClaimState for ReadingPorts {
    fn resume(self: Box<Self>, done: Completion) -> Claim {
        let mut claim = self.0;
        let (mut taken, current) = match read_record(done) {
            Ok(read) => read,
            Err(e) => return claim.give_back(e),
        };
        let picked = match claim.take(&mut taken) {
            Ok(picked) => picked,
            Err(e) => return claim.give_back(e),
        };
        let value = Bytes::from(taken.to_bytes(claim.ctx.network.node_ports));
        let key = ports_key(&claim.ctx);
        let op = match current {
            Some(kv) => StorageOp::Update { key, value, expected_revision: kv.mod_revision },
            None => StorageOp::Create { key, value },
        };
        Claim::Storage(op, Box::new(WritingPorts { claim, picked }))
    }
}

/// Waiting for the record to be written with the new ports.
#[derive(Debug)]
struct WritingPorts {
    claim: ClaimPorts,
    picked: Vec<u16>,
}

impl ClaimState for WritingPorts {
    fn resume(self: Box<Self>, done: Completion) -> Claim {
        let WritingPorts { mut claim, picked } = *self;
        match done {
            Ok(StorageOutput::Written(_)) => {
                let ips = std::mem::take(&mut claim.ips);
                fill(&mut claim.obj, &ips, &claim.wants, &picked);
                Claim::Done(claim.obj)
            }
            Err(StorageError::Conflict { .. } | StorageError::AlreadyExists { .. }) if claim.retries < RETRIES => {
                claim.retries += 1;
                claim.read()
            }
            other => claim.give_back(unexpected(other)),
        }
    }
}

/// The record as read (an empty one when there is none yet), and its stored value.
fn read_record(done: Completion) -> Result<(TakenPorts, Option<KeyValue>), ApiError> {
    match done {
        Ok(StorageOutput::Got { kv: None, .. }) => Ok((TakenPorts::default(), None)),
        Ok(StorageOutput::Got { kv: Some(kv), .. }) => {
            let taken = TakenPorts::parse(&kv.value).map_err(ApiError::internal)?;
            Ok((taken, Some(kv)))
        }
        other => Err(unexpected(other)),
    }
}

fn unexpected(outcome: Completion) -> ApiError {
    match outcome {
        Err(StorageError::Unavailable(why)) => ApiError::service_unavailable(why),
        Err(e) => ApiError::internal(format!("{e:?}")),
        Ok(other) => ApiError::internal(format!("unexpected storage answer {other:?}")),
    }
}

/// Giving back addresses and ports, then ending as `then` says.
#[derive(Debug)]
struct Release {
    ctx: ClaimContext,
    owner: Owner,
    ips: Vec<IpAddr>,
    ports: BTreeSet<u16>,
    then: Box<Claim>,
    retries: u32,
}

impl Release {
    fn next(self) -> Claim {
        if let Some(ip) = self.ips.first() {
            let op = StorageOp::Get { key: ip_key(&self.ctx, ip) };
            return Claim::Storage(op, Box::new(ReadingAddress(self)));
        }
        if !self.ports.is_empty() {
            let op = StorageOp::Get { key: ports_key(&self.ctx) };
            return Claim::Storage(op, Box::new(ReleasingPorts(self)));
        }
        *self.then
    }

    fn skip_ip(mut self) -> Claim {
        self.ips.remove(0);
        self.retries = 0;
        self.next()
    }
}

/// Reading an IPAddress to give back: only the Service's own is deleted.
#[derive(Debug)]
struct ReadingAddress(Release);

impl ClaimState for ReadingAddress {
    fn resume(self: Box<Self>, done: Completion) -> Claim {
        let release = self.0;
        match done {
            Ok(StorageOutput::Got { kv: Some(kv), .. }) => {
                let owned = serde_json::from_slice::<Value>(&kv.value).is_ok_and(|v| release.owner.owns(&v));
                if !owned {
                    return release.skip_ip();
                }
                let op = StorageOp::Delete { key: kv.key.clone(), expected_revision: Some(kv.mod_revision) };
                Claim::Storage(op, Box::new(DeletingAddress(release)))
            }
            other => {
                if other.is_err() {
                    tracing::warn!(?other, "could not read a cluster IP to release");
                }
                release.skip_ip()
            }
        }
    }
}

#[derive(Debug)]
struct DeletingAddress(Release);

impl ClaimState for DeletingAddress {
    fn resume(self: Box<Self>, done: Completion) -> Claim {
        let mut release = self.0;
        match done {
            Err(StorageError::Conflict { .. }) if release.retries < RETRIES => {
                release.retries += 1;
                release.next()
            }
            Ok(_) | Err(StorageError::NotFound { .. }) => release.skip_ip(),
            other => {
                tracing::warn!(?other, "could not release a cluster IP");
                release.skip_ip()
            }
        }
    }
}

/// Taking ports out of the record.
#[derive(Debug)]
struct ReleasingPorts(Release);

impl ClaimState for ReleasingPorts {
    fn resume(self: Box<Self>, done: Completion) -> Claim {
        let mut release = self.0;
        let (mut taken, current) = match read_record(done) {
            Ok((taken, Some(kv))) => (taken, kv),
            Ok((_, None)) => return *release.then,
            Err(e) => {
                tracing::warn!(error = %e.message, "could not read the node port record to release ports");
                return *release.then;
            }
        };
        for port in &release.ports {
            taken.ports.remove(port);
        }
        let value = Bytes::from(taken.to_bytes(release.ctx.network.node_ports));
        let op = StorageOp::Update { key: current.key.clone(), value, expected_revision: current.mod_revision };
        release.retries += 1;
        Claim::Storage(op, Box::new(WritingReleased(release)))
    }
}

#[derive(Debug)]
struct WritingReleased(Release);

impl ClaimState for WritingReleased {
    fn resume(self: Box<Self>, done: Completion) -> Claim {
        let release = self.0;
        match done {
            Err(StorageError::Conflict { .. }) if release.retries < RETRIES => {
                let op = StorageOp::Get { key: ports_key(&release.ctx) };
                Claim::Storage(op, Box::new(ReleasingPorts(release)))
            }
            Ok(_) => *release.then,
            other => {
                tracing::warn!(?other, "could not release node ports");
                *release.then
            }
        }
    }
}
