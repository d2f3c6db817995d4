//! What a watch must deliver: every change under its prefix after the revision it
//! started from, each once, in revision order, with nothing left out — up to where it
//! ended (cleanly, or with 410 Gone, which its client recovers from by listing again).
//!
//! Checked against the store's own log of changes, the ground truth.

use crate::object::Version;

/// A change the store made: `value` is the written value (for a delete: the value it
/// removed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub revision: Version,
    pub key: String,
    pub kind: ChangeKind,
    pub value: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChangeKind {
    Added,
    Modified,
    Deleted,
}

/// An event a watch delivered (bookmarks left out): the object's key, its
/// resourceVersion and the value it carried.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivered {
    pub kind: ChangeKind,
    pub key: String,
    pub revision: Version,
    pub value: u64,
}

/// What went wrong with a watch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WatchViolation {
    /// An event at or below the revision of the one before it (or of the start).
    OutOfOrder { index: usize, revision: Version, after: Version },
    /// An event the store never made under the prefix.
    Unknown { index: usize, revision: Version },
    /// An event that says other than the store's change at its revision.
    Mismatch { index: usize, expected: Change, delivered: Delivered },
    /// A change under the prefix, between the start and the last event delivered, that
    /// was not delivered.
    Gap { missing: Change },
}

/// Check the events a watch of `prefix` delivered, started after revision `from`
/// (`None`: from whatever revision the server chose, so only what follows the first
/// event is checked for gaps), against the store's `log` (in revision order).
pub fn check_watch(log: &[Change], prefix: &str, from: Option<Version>, delivered: &[Delivered]) -> Result<(), WatchViolation> {
    let under: Vec<&Change> = log.iter().filter(|c| c.key.starts_with(prefix)).collect();
    let mut last = from.unwrap_or(0);
    for (index, event) in delivered.iter().enumerate() {
        if event.revision <= last && (index > 0 || from.is_some()) {
            return Err(WatchViolation::OutOfOrder { index, revision: event.revision, after: last });
        }
        let Some(change) = under.iter().find(|c| c.revision == event.revision) else {
            return Err(WatchViolation::Unknown { index, revision: event.revision });
        };
        if change.key != event.key || change.kind != event.kind || change.value != event.value {
            return Err(WatchViolation::Mismatch { index, expected: (*change).clone(), delivered: event.clone() });
        }
        last = event.revision;
    }
    let Some(end) = delivered.last().map(|e| e.revision) else {
        return Ok(());
    };
    let start = match from {
        Some(from) => from,
        None => delivered[0].revision.saturating_sub(1),
    };
    let delivered_at: std::collections::HashSet<Version> = delivered.iter().map(|e| e.revision).collect();
    match under.iter().find(|c| c.revision > start && c.revision <= end && !delivered_at.contains(&c.revision)) {
        Some(missing) => Err(WatchViolation::Gap { missing: (*missing).clone() }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(revision: Version, key: &str, kind: ChangeKind, value: u64) -> Change {
        Change { revision, key: key.into(), kind, value }
    }

    fn delivered(c: &Change) -> Delivered {
        Delivered { kind: c.kind, key: c.key.clone(), revision: c.revision, value: c.value }
    }

    fn log() -> Vec<Change> {
        vec![
            change(2, "/ns/a", ChangeKind::Added, 1),
            change(3, "/other/x", ChangeKind::Added, 9),
            change(4, "/ns/a", ChangeKind::Modified, 2),
            change(5, "/ns/b", ChangeKind::Added, 3),
            change(6, "/ns/a", ChangeKind::Deleted, 2),
        ]
    }

    #[test]
    fn every_change_under_the_prefix_once_in_order_passes() {
        let log = log();
        let all: Vec<Delivered> = log.iter().filter(|c| c.key.starts_with("/ns/")).map(delivered).collect();
        assert_eq!(check_watch(&log, "/ns/", Some(1), &all), Ok(()));
        // Started later: only what follows.
        assert_eq!(check_watch(&log, "/ns/", Some(4), &all[2..]), Ok(()));
        // Ended early (a 410, or the client stopped): what came is checked.
        assert_eq!(check_watch(&log, "/ns/", Some(1), &all[..2]), Ok(()));
    }

    #[test]
    fn duplicates_reorders_gaps_and_inventions_are_caught() {
        let log = log();
        let all: Vec<Delivered> = log.iter().filter(|c| c.key.starts_with("/ns/")).map(delivered).collect();
        let twice = [all[0].clone(), all[1].clone(), all[1].clone()];
        assert!(matches!(check_watch(&log, "/ns/", Some(1), &twice), Err(WatchViolation::OutOfOrder { index: 2, .. })));
        let swapped = [all[1].clone(), all[0].clone()];
        assert!(matches!(check_watch(&log, "/ns/", Some(1), &swapped), Err(WatchViolation::OutOfOrder { index: 1, .. })));
        let gap = [all[0].clone(), all[2].clone()];
        assert!(matches!(check_watch(&log, "/ns/", Some(1), &gap), Err(WatchViolation::Gap { missing }) if missing.revision == 4));
        let mut wrong = all.clone();
        wrong[1].value = 7;
        assert!(matches!(check_watch(&log, "/ns/", Some(1), &wrong), Err(WatchViolation::Mismatch { index: 1, .. })));
        let outside = [delivered(&log[1])];
        assert!(matches!(check_watch(&log, "/ns/", Some(1), &outside), Err(WatchViolation::Unknown { .. })));
        // The first event after the start is missing.
        assert!(matches!(check_watch(&log, "/ns/", Some(1), &all[1..]), Err(WatchViolation::Gap { missing }) if missing.revision == 2));
    }
}
