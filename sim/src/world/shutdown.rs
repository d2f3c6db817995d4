//! Graceful shutdown: a replica told to terminate (SIGTERM) is followed as its adapter
//! would follow it: its lifecycle's actions carried out (watches ended when it says),
//! and at its exit, every request it accepted must have been answered, or be past its
//! deadline (whose timer would have answered it 504). Then it is down until restarted.

use super::World;
use apiary_core::harness::Stepped;
use apiary_core::lifecycle::Action;

/// How far a replica's shutdown has been followed.
#[derive(Clone, Copy, Debug)]
pub(super) struct Terminating {
    /// How many of its lifecycle's actions were seen.
    actions_seen: usize,
}

impl World {
    /// SIGTERM to replica `r`, if it is up and not shutting down already.
    pub(super) fn terminate(&mut self, r: usize) {
        let replica = &mut self.replicas[r];
        let Some(harness) = replica.harness.as_ref().filter(|_| replica.terminating.is_none()) else { return };
        replica.terminating = Some(Terminating { actions_seen: harness.actions().len() });
        harness.terminate();
        self.store.faults.borrow_mut().injected.terminations += 1;
    }

    /// Carry out what the terminating replicas' lifecycles asked for since the last look.
    pub(super) fn follow_shutdowns(&mut self) {
        for r in 0..self.replicas.len() {
            let replica = &mut self.replicas[r];
            let (Some(seen), Some(harness)) = (replica.terminating, replica.harness.as_ref()) else { continue };
            let actions = harness.actions();
            replica.terminating = Some(Terminating { actions_seen: actions.len() });
            for action in &actions[seen.actions_seen..] {
                match action {
                    Action::EndWatches => self.end_watches_on(r),
                    Action::Exit(code) => {
                        self.exited(r, *code);
                        break;
                    }
                    _ => {}
                }
            }
        }
    }

    /// Replica `r` exits: what it accepted must be answered by now, or be past its
    /// deadline. Those are carried to their answer (the timeout's 504); then it is down.
    fn exited(&mut self, r: usize, code: i32) {
        if code != 0 {
            self.violation = Some(format!("replica {r} exited {code} from a graceful shutdown"));
        }
        let generation = self.replicas[r].generation;
        let timeout = self.server.lifecycle.request_timeout;
        let harness = self.replicas[r].harness.take().expect("exiting replica is up");
        let now = harness.now();
        for i in 0..self.actors.len() {
            let Some(in_flight) = self.actors[i].in_flight.take_if(|f| f.replica == r && f.generation == generation) else {
                continue;
            };
            if now < in_flight.started + timeout {
                self.violation = Some(format!(
                    "replica {r} exited at {now:?} with a request accepted at {:?} neither answered nor past its deadline",
                    in_flight.started
                ));
                return;
            }
            match harness.step(*in_flight.held) {
                Stepped::Answered(bytes) => {
                    self.tally.drained += 1;
                    self.answered(i, in_flight.op, &bytes);
                }
                Stepped::Held(_) => {
                    self.violation = Some(format!("replica {r} exited with a request past its deadline that its timeout did not answer"));
                    return;
                }
            }
        }
        self.tally.shutdowns += 1;
        self.replicas[r].generation += 1;
        self.replicas[r].terminating = None;
    }
}
