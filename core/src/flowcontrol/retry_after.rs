//! The `Retry-After` a rejected request is told, per priority level, as upstream
//! tracks dropped requests: it starts at 1 s, doubles (to at most 32 s) while a level
//! keeps dropping at least three requests per second of it, and comes down a second
//! at a time once the drops fall below one per second of it.

use std::collections::VecDeque;

const MAX_RETRY_AFTER: u64 = 32;

/// One level's drops, per whole second of the clock.
#[derive(Debug, Clone)]
pub struct RetryAfter {
    /// Earlier seconds and their drops, oldest first.
    history: VecDeque<(u64, u64)>,
    current_second: u64,
    current_count: u64,
    retry_after: u64,
    updated_at: u64,
}

impl Default for RetryAfter {
    fn default() -> RetryAfter {
        RetryAfter { history: VecDeque::new(), current_second: 0, current_count: 0, retry_after: 1, updated_at: 0 }
    }
}

impl RetryAfter {
    /// The seconds to tell the next rejected request.
    pub fn seconds(&self) -> u64 {
        self.retry_after
    }

    /// A request was dropped in second `second` of the clock.
    pub fn dropped(&mut self, second: u64) {
        if second == self.current_second {
            self.current_count += 1;
            return;
        }
        self.remember(self.current_second, self.current_count);
        self.current_second = second;
        self.current_count = 1;
        self.adjust(second);
    }

    fn remember(&mut self, second: u64, count: u64) {
        self.history.push_back((second, count));
        let keep = (2 * self.retry_after).min(MAX_RETRY_AFTER);
        while self.history.front().is_some_and(|(s, _)| second.saturating_sub(*s) > keep) {
            self.history.pop_front();
        }
    }

    fn adjust(&mut self, now: u64) {
        let recent: u64 = self
            .history
            .iter()
            .rev()
            .take_while(|(s, _)| now.saturating_sub(*s) <= self.retry_after)
            .filter(|(s, _)| *s < now)
            .map(|(_, n)| n)
            .sum();
        if now.saturating_sub(self.updated_at) >= self.retry_after && recent >= 3 * self.retry_after {
            self.retry_after = (self.retry_after * 2).min(MAX_RETRY_AFTER);
            self.updated_at = now;
        } else if recent < self.retry_after && self.retry_after > 1 {
            self.retry_after -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_under_sustained_drops_and_comes_back_down() {
        let mut r = RetryAfter::default();
        assert_eq!(r.seconds(), 1);
        for second in 100..110 {
            for _ in 0..20 {
                r.dropped(second);
            }
        }
        assert!(r.seconds() >= 8, "{}", r.seconds());
        let high = r.seconds();
        for second in (200..260).step_by(5) {
            r.dropped(second);
        }
        assert!(r.seconds() < high);
    }
}
