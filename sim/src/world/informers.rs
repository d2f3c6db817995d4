//! Informers: list, then watch from the list's version; when the watch ends cleanly,
//! watch again from the last revision seen, and list again when it ends with an error
//! (410 Gone among them), as client-go's reflector does.

use super::{one_reply, World, LIMITS};
use crate::object::Version;
use crate::watch_order::{ChangeKind, Delivered};
use crate::wire;
use apiary_core::harness::OpenWatch;
use apiary_core::http1::client::{BodyPiece, ResponseReader};
use std::collections::BTreeMap;

/// A client that lists and watches: what client-go's reflector does.
pub(super) struct Informer {
    pub(super) replica: usize,
    pub(super) generation: u64,
    pub(super) cache: BTreeMap<String, (u64, Version)>,
    pub(super) watch: Option<Session>,
    /// Where its next watch starts, without a list: the last revision its last watch
    /// delivered, when that watch ended cleanly.
    resume: Option<Version>,
    /// (A slow client) it reads nothing before this step.
    pub(super) stalled_until: u64,
}

/// One watch of an informer, and what it delivered.
pub(super) struct Session {
    pub(super) open: OpenWatch<crate::store::SimWatch>,
    pub(super) delivery: Delivery,
}

/// What a watch delivered from where it started, and the reading of its stream.
pub(super) struct Delivery {
    reader: ResponseReader,
    pending: Vec<u8>,
    pub(super) from: Version,
    pub(super) delivered: Vec<Delivered>,
}

/// How a watch went on, after a look at its stream.
#[derive(Debug, PartialEq, Eq)]
enum Stream {
    Open,
    /// The server ended it without an error: the informer watches on from where it is.
    Ended,
    /// The server ended it with an ERROR event: the informer lists again.
    Failed(wire::WatchError),
}

impl Informer {
    /// An informer that will list through `replica` first.
    pub(super) fn new(replica: usize) -> Informer {
        Informer { replica, generation: 0, cache: BTreeMap::new(), watch: None, resume: None, stalled_until: 0 }
    }

}

impl World {
    /// An informer's step.
    pub(super) fn inform(&mut self, i: usize) {
        if self.now < self.informers[i].stalled_until {
            return;
        }
        let informer = &mut self.informers[i];
        let replica = &self.replicas[informer.replica];
        let alive = replica.harness.is_some() && replica.generation == informer.generation;
        // A server shutting down refuses new watches and lists: go elsewhere.
        let leaving = replica.terminating.is_some() && informer.watch.is_none();
        if !alive || leaving {
            // Its server went away: what its watch delivered is checked, and it carries
            // on elsewhere.
            if let Some(session) = informer.watch.take() {
                informer.resume = Some(session.delivery.seen());
                self.sessions.push((session.delivery.from, session.delivery.delivered));
            }
            let Some(replica) = self.live_replica() else { return };
            let informer = &mut self.informers[i];
            informer.replica = replica;
            informer.generation = self.replicas[replica].generation;
            return;
        }
        let harness = replica.harness.as_ref().expect("alive");
        match informer.watch.as_mut() {
            None => {
                let from = match informer.resume.take() {
                    Some(from) => {
                        self.tally.resumed_watches += 1;
                        from
                    }
                    None => {
                        let Some(reply) = one_reply(&harness.send(&wire::list())) else { return };
                        if reply.status != 200 {
                            return;
                        }
                        let listed = wire::list_of(&reply.json());
                        let Some(from) = listed.version else { return };
                        informer.cache = listed
                            .items
                            .into_iter()
                            .map(|(name, value, version)| (format!("{}{name}", wire::STORE_PREFIX), (value, version)))
                            .collect();
                        from
                    }
                };
                // Refused (410 for a compacted version, or the server is not ready):
                // list again later.
                if let Ok((open, bytes)) = harness.open_watch(&wire::watch(from)) {
                    let mut session = Session { open, delivery: Delivery::new(from) };
                    let stream = session.delivery.feed(&bytes, &mut informer.cache, &mut self.duplicate_next);
                    informer.watch = Some(session);
                    if stream != Stream::Open {
                        self.end_session(i, stream);
                    }
                }
            }
            Some(session) => {
                let bytes = harness.pump_watch(&mut session.open);
                let stream = session.delivery.feed(&bytes, &mut informer.cache, &mut self.duplicate_next);
                // The client's own timeout ends a watch cleanly now and then.
                if stream != Stream::Open || session.open.is_done() || self.rng.chance(20) {
                    let stream = if stream == Stream::Open { Stream::Ended } else { stream };
                    self.end_session(i, stream);
                }
            }
        }
    }

    /// Informer `i` reads what its watch has to deliver now.
    pub(super) fn catch_up(&mut self, i: usize) {
        let informer = &mut self.informers[i];
        let Some(session) = informer.watch.as_mut() else { return };
        let Some(harness) = self.replicas[informer.replica].harness.as_ref() else { return };
        let bytes = harness.pump_watch(&mut session.open);
        // Whatever ended it, what it delivered is checked.
        let _ = session.delivery.feed(&bytes, &mut informer.cache, &mut self.duplicate_next);
    }

    /// End informer `i`'s watch: closed by the client, its delivery checked; it
    /// watches again from where it is, or (after an error) lists again.
    fn end_session(&mut self, i: usize, stream: Stream) {
        let informer = &mut self.informers[i];
        let Some(Session { open, mut delivery }) = informer.watch.take() else { return };
        let mut stream = stream;
        if let Some(harness) = self.replicas[informer.replica].harness.as_ref() {
            let bytes = harness.close_watch(open);
            if let Stream::Failed(error) = delivery.feed(&bytes, &mut informer.cache, &mut self.duplicate_next) {
                stream = Stream::Failed(error);
            }
        }
        match &stream {
            Stream::Failed(error) => {
                if error.message.contains("fell too far behind") {
                    self.tally.watches_behind += 1;
                }
                informer.resume = None;
            }
            _ => informer.resume = Some(delivery.seen()),
        }
        self.sessions.push((delivery.from, delivery.delivered));
    }

    /// End every watch open on replica `r` cleanly (its server ends them when it shuts
    /// down).
    pub(super) fn end_watches_on(&mut self, r: usize) {
        for i in 0..self.informers.len() {
            if self.informers[i].replica == r && self.informers[i].watch.is_some() {
                self.end_session(i, Stream::Ended);
            }
        }
    }
}

impl Delivery {
    fn new(from: Version) -> Delivery {
        Delivery { reader: ResponseReader::new(&http::Method::GET, LIMITS), pending: Vec::new(), from, delivered: Vec::new() }
    }

    /// The revision its informer has seen up to: the last event, or where the watch
    /// started.
    fn seen(&self) -> Version {
        self.delivered.last().map_or(self.from, |d| d.revision)
    }

    /// Read `bytes` of the stream into `cache`. `duplicate`: (planted) the first event
    /// comes twice.
    fn feed(&mut self, bytes: &[u8], cache: &mut BTreeMap<String, (u64, Version)>, duplicate: &mut bool) -> Stream {
        let (mut events, error) = decode(&mut self.reader, &mut self.pending, bytes);
        if *duplicate && !events.is_empty() {
            *duplicate = false;
            events.insert(0, events[0].clone());
        }
        for e in &events {
            apply(cache, e);
        }
        self.delivered.extend(events);
        error.map_or(Stream::Open, Stream::Failed)
    }
}

/// The watch events in `bytes` of an HTTP stream read by `reader`, with `pending` the
/// part of a line read so far.
fn decode(reader: &mut ResponseReader, pending: &mut Vec<u8>, bytes: &[u8]) -> (Vec<Delivered>, Option<wire::WatchError>) {
    reader.feed(bytes);
    let _ = reader.poll_head();
    while let Ok(BodyPiece::Data(data)) = reader.poll_body() {
        pending.extend_from_slice(&data);
    }
    let Some(end) = pending.iter().rposition(|b| *b == b'\n') else {
        return (Vec::new(), None);
    };
    let whole: Vec<u8> = pending.drain(..=end).collect();
    wire::events(&whole)
}

/// An event applied to an informer's cache.
fn apply(cache: &mut BTreeMap<String, (u64, Version)>, event: &Delivered) {
    match event.kind {
        ChangeKind::Deleted => {
            cache.remove(&event.key);
        }
        _ => {
            cache.insert(event.key.clone(), (event.value, event.revision));
        }
    }
}
