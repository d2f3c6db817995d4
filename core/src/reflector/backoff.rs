//! How long the reflector waits before relisting: short after a watch that worked,
//! doubling while the backend keeps failing, so a store that is down is not hammered.

use std::time::Duration;

/// The wait before the first relist after a success.
pub const FIRST_BACKOFF: Duration = Duration::from_millis(100);
/// The longest wait between two relists.
pub const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// The wait before the next relist.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Backoff {
    next: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            next: FIRST_BACKOFF,
        }
    }
}

impl Backoff {
    /// The wait to take now; the one after it is twice as long, up to [`MAX_BACKOFF`].
    pub(super) fn take(&mut self) -> Duration {
        let wait = self.next;
        self.next = (wait * 2).min(MAX_BACKOFF);
        wait
    }

    /// A list and its watch succeeded: the next failure waits the shortest time again.
    pub(super) fn reset(&mut self) {
        *self = Backoff::default();
    }
}
