//! A linearizability checker in the style of Porcupine (Wing & Gong's search with
//! Lowe's memoization): is there an order of the operations, each placed between its
//! call and its return, in which every output is what a sequential `Model` gives?
//!
//! Operations whose outcome is not known (the client timed out, or its connection
//! broke) return "at infinity" with no output: the search may place them anywhere after
//! their call, the end included, where they change nothing a client saw — so they may
//! have happened or not. The history is split into partitions the model says are
//! independent (one per object), each checked on its own.

use std::collections::HashSet;
use std::fmt::Debug;
use std::hash::Hash;

/// A sequential specification.
pub trait Model {
    type State: Clone + Eq + Hash + Debug;
    type Input: Debug;
    type Output: Debug;
    /// The state before any operation.
    fn init(&self) -> Self::State;
    /// The state after `input` gave `output` in `state`, if it could have (`output`
    /// `None`: not known, any outcome the input can have).
    fn step(&self, state: &Self::State, input: &Self::Input, output: Option<&Self::Output>) -> Option<Self::State>;
    /// The partition an operation belongs to (operations of different partitions never
    /// constrain each other).
    fn partition(&self, input: &Self::Input) -> String;
}

/// One operation as a client recorded it, times on one clock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operation<I, O> {
    /// Who sent it (for reports).
    pub client: u32,
    pub input: I,
    /// `None`: the outcome is not known.
    pub output: Option<O>,
    pub call: u64,
    /// `None`: it never returned (its outcome is not known).
    pub ret: Option<u64>,
}

/// What the check found.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    Linearizable,
    /// No order explains partition `partition`: the indices (into the history) of its
    /// operations, and the longest prefix of them (in the order tried) that could be
    /// linearized before the search gave up.
    Illegal { partition: String, operations: Vec<usize>, longest: Vec<usize> },
    /// The search took more than its budget of steps.
    TooLong { partition: String },
}

/// Whether `history` is linearizable under `model`, trying at most `budget` search
/// steps per partition.
pub fn check<M: Model>(model: &M, history: &[Operation<M::Input, M::Output>], budget: u64) -> Verdict {
    let mut partitions: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, op) in history.iter().enumerate() {
        let name = model.partition(&op.input);
        match partitions.iter_mut().find(|(n, _)| *n == name) {
            Some((_, ops)) => ops.push(i),
            None => partitions.push((name, vec![i])),
        }
    }
    for (name, ops) in partitions {
        match check_partition(model, history, &ops, budget) {
            Searched::Linearizable => {}
            Searched::Illegal(longest) => {
                return Verdict::Illegal { partition: name, operations: ops, longest };
            }
            Searched::TooLong => return Verdict::TooLong { partition: name },
        }
    }
    Verdict::Linearizable
}

/// The outcome of one partition's search.
enum Searched {
    Linearizable,
    Illegal(Vec<usize>),
    TooLong,
}

/// An event of the history: an operation's call or return.
#[derive(Clone, Copy, Debug)]
struct Event {
    /// Index into the partition's operations.
    op: usize,
    is_call: bool,
}

/// The events still to linearize, as a doubly linked list over `events` (index
/// `events.len()` is the head sentinel), so that an operation's call and return can be
/// lifted out and put back in O(1).
struct Events {
    events: Vec<Event>,
    next: Vec<usize>,
    prev: Vec<usize>,
    /// For each operation, the positions of its call and return.
    of_op: Vec<(usize, usize)>,
}

const NONE: usize = usize::MAX;

impl Events {
    /// The calls and returns of `ops` in time order; at equal times calls first (the
    /// operations overlap: the lenient reading).
    fn new<I, O>(history: &[Operation<I, O>], ops: &[usize]) -> Events {
        let mut timed: Vec<(u64, bool, Event)> = Vec::with_capacity(ops.len() * 2);
        for (i, &h) in ops.iter().enumerate() {
            let op = &history[h];
            timed.push((op.call, false, Event { op: i, is_call: true }));
            timed.push((op.ret.unwrap_or(u64::MAX), true, Event { op: i, is_call: false }));
        }
        // (time, is-return): calls sort before returns at the same time.
        timed.sort_by_key(|(t, is_return, e)| (*t, *is_return, e.op));
        let n = timed.len();
        let events: Vec<Event> = timed.into_iter().map(|(_, _, e)| e).collect();
        let head = n;
        let mut next = vec![NONE; n + 1];
        let mut prev = vec![NONE; n + 1];
        let mut last = head;
        for (i, before) in prev.iter_mut().enumerate().take(n) {
            next[last] = i;
            *before = last;
            last = i;
        }
        let mut of_op = vec![(NONE, NONE); ops.len()];
        for (i, e) in events.iter().enumerate() {
            if e.is_call {
                of_op[e.op].0 = i;
            } else {
                of_op[e.op].1 = i;
            }
        }
        Events { events, next, prev, of_op }
    }

    fn head(&self) -> usize {
        self.events.len()
    }

    fn first(&self) -> usize {
        self.next[self.head()]
    }

    fn unlink(&mut self, i: usize) {
        let (p, n) = (self.prev[i], self.next[i]);
        self.next[p] = n;
        if n != NONE {
            self.prev[n] = p;
        }
    }

    fn relink(&mut self, i: usize) {
        let (p, n) = (self.prev[i], self.next[i]);
        self.next[p] = i;
        if n != NONE {
            self.prev[n] = i;
        }
    }

    /// Take an operation's call and return out of the list.
    fn lift(&mut self, op: usize) {
        let (call, ret) = self.of_op[op];
        self.unlink(call);
        self.unlink(ret);
    }

    /// Put them back (in the reverse order they were taken).
    fn unlift(&mut self, op: usize) {
        let (call, ret) = self.of_op[op];
        self.relink(ret);
        self.relink(call);
    }
}

/// Which operations are linearized so far.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Linearized(Vec<u64>);

impl Linearized {
    fn new(n: usize) -> Linearized {
        Linearized(vec![0; n.div_ceil(64)])
    }
    fn set(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    fn clear(&mut self, i: usize) {
        self.0[i / 64] &= !(1 << (i % 64));
    }
}

fn check_partition<M: Model>(model: &M, history: &[Operation<M::Input, M::Output>], ops: &[usize], budget: u64) -> Searched {
    let mut events = Events::new(history, ops);
    let mut state = model.init();
    let mut linearized = Linearized::new(ops.len());
    let mut seen: HashSet<(Linearized, M::State)> = HashSet::new();
    // What was linearized, with the state before it: popped to backtrack.
    let mut stack: Vec<(usize, M::State)> = Vec::new();
    let mut longest: Vec<usize> = Vec::new();
    let mut at = events.first();
    let mut steps = 0u64;
    while events.first() != NONE {
        steps += 1;
        if steps > budget {
            return Searched::TooLong;
        }
        if at == NONE {
            // Nothing more can be tried at this depth (a return is always met first;
            // this is the defensive end).
            return Searched::Illegal(longest);
        }
        let event = events.events[at];
        if event.is_call {
            let op = &history[ops[event.op]];
            if let Some(after) = model.step(&state, &op.input, op.output.as_ref()) {
                let mut next = linearized.clone();
                next.set(event.op);
                if seen.insert((next.clone(), after.clone())) {
                    stack.push((event.op, std::mem::replace(&mut state, after)));
                    linearized = next;
                    events.lift(event.op);
                    if stack.len() > longest.len() {
                        longest = stack.iter().map(|(o, _)| ops[*o]).collect();
                    }
                    at = events.first();
                    continue;
                }
            }
            at = events.next[at];
        } else {
            // An operation returned before any order placed it: undo the last choice
            // and try the next one after it.
            let Some((op, before)) = stack.pop() else {
                return Searched::Illegal(longest);
            };
            state = before;
            linearized.clear(op);
            events.unlift(op);
            at = events.next[events.of_op[op].0];
        }
    }
    Searched::Linearizable
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A register of integers: write(v), read() → v.
    struct Register;

    #[derive(Clone, Debug)]
    enum Io {
        Write(u32),
        Read,
    }

    impl Model for Register {
        type State = u32;
        type Input = Io;
        type Output = u32;
        fn init(&self) -> u32 {
            0
        }
        fn step(&self, state: &u32, input: &Io, output: Option<&u32>) -> Option<u32> {
            match (input, output) {
                (Io::Write(v), _) => Some(*v),
                (Io::Read, Some(seen)) if seen == state => Some(*state),
                (Io::Read, None) => Some(*state),
                (Io::Read, Some(_)) => None,
            }
        }
        fn partition(&self, _: &Io) -> String {
            String::new()
        }
    }

    fn op(input: Io, output: Option<u32>, call: u64, ret: Option<u64>) -> Operation<Io, u32> {
        Operation { client: 0, input, output, call, ret }
    }

    #[test]
    fn overlapping_operations_may_take_effect_in_either_order() {
        // write 1 overlaps a read that sees 1 and one that sees 0: the read of 0 went first.
        let history = [
            op(Io::Write(1), Some(0), 0, Some(10)),
            op(Io::Read, Some(1), 1, Some(5)),
            op(Io::Read, Some(0), 2, Some(6)),
        ];
        assert_eq!(check(&Register, &history, 10_000), Verdict::Linearizable);
    }

    #[test]
    fn a_read_after_a_write_returned_must_see_it() {
        let history = [op(Io::Write(1), Some(0), 0, Some(1)), op(Io::Read, Some(0), 2, Some(3))];
        assert!(matches!(check(&Register, &history, 10_000), Verdict::Illegal { .. }));
    }

    #[test]
    fn a_write_whose_outcome_is_unknown_may_or_may_not_have_happened() {
        let lost = op(Io::Write(7), None, 0, None);
        let sees_it = [lost.clone(), op(Io::Read, Some(7), 5, Some(6))];
        assert_eq!(check(&Register, &sees_it, 10_000), Verdict::Linearizable);
        let never = [lost.clone(), op(Io::Read, Some(0), 5, Some(6))];
        assert_eq!(check(&Register, &never, 10_000), Verdict::Linearizable);
        // But not undone once seen.
        let undone = [lost, op(Io::Read, Some(7), 5, Some(6)), op(Io::Read, Some(0), 7, Some(8))];
        assert!(matches!(check(&Register, &undone, 10_000), Verdict::Illegal { .. }));
    }
}
