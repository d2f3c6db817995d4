//! Lending and borrowing seats between priority levels, as upstream adjusts them
//! every 10 s: each limited level's seat demand over the last period (its time-
//! weighted mean plus one standard deviation, smoothed so that it falls slowly)
//! is its target; the server's seats are then shared out in proportion to the
//! targets, each level held between its nominal seats less what it lends and its
//! nominal seats plus what it may borrow.

use std::time::Duration;

/// How often the levels' seats are shared out again.
pub const PERIOD: Duration = Duration::from_secs(10);
/// How slowly a level's smoothed demand falls from one period to the next.
const SMOOTHING: f64 = 0.977;

/// A time-weighted record of one value: its mean, deviation and peak since the last
/// [`Integrator::reset`].
#[derive(Debug, Clone)]
pub struct Integrator {
    value: f64,
    since: Duration,
    started: Duration,
    sum: f64,
    sum_of_squares: f64,
    max: f64,
}

/// What an [`Integrator`] saw over a period.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Observed {
    pub average: f64,
    pub deviation: f64,
    pub max: f64,
    pub seconds: f64,
}

impl Integrator {
    pub fn new(now: Duration) -> Integrator {
        Integrator { value: 0.0, since: now, started: now, sum: 0.0, sum_of_squares: 0.0, max: 0.0 }
    }

    fn integrate(&mut self, now: Duration) {
        let dt = now.saturating_sub(self.since).as_secs_f64();
        self.sum += self.value * dt;
        self.sum_of_squares += self.value * self.value * dt;
        self.since = self.since.max(now);
    }

    /// The value is `value` from `now` on.
    pub fn set(&mut self, value: f64, now: Duration) {
        self.integrate(now);
        self.value = value;
        self.max = self.max.max(value);
    }

    /// What was seen since the last reset, and start again from the current value.
    pub fn reset(&mut self, now: Duration) -> Observed {
        self.integrate(now);
        let seconds = now.saturating_sub(self.started).as_secs_f64();
        let observed = if seconds > 0.0 {
            let average = self.sum / seconds;
            let variance = (self.sum_of_squares / seconds - average * average).max(0.0);
            Observed { average, deviation: variance.sqrt(), max: self.max, seconds }
        } else {
            Observed { average: self.value, deviation: 0.0, max: self.max, seconds }
        };
        let value = self.value;
        *self = Integrator { value, max: value, ..Integrator::new(now) };
        observed
    }
}

/// One level's demand, from period to period.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Demand {
    pub high_watermark: u32,
    pub smoothed: f64,
}

impl Demand {
    pub fn update(&mut self, observed: Observed) {
        self.high_watermark = observed.max.round().max(0.0) as u32;
        if observed.seconds <= 0.0 {
            return;
        }
        let envelope = observed.average + observed.deviation;
        self.smoothed = envelope.max(SMOOTHING * self.smoothed + (1.0 - SMOOTHING) * envelope);
    }
}

/// A level in the sharing: its bounds and target.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Claim {
    pub lower: f64,
    pub upper: f64,
    pub target: f64,
}

/// Share `total` seats among `claims`: each gets `fair × target` held within its
/// bounds, with the one `fair` proportion that makes the shares add up to `total`
/// (found by bisection; the share is a rising function of it). When the bounds alone
/// decide, they do.
pub fn share(total: f64, claims: &[Claim]) -> Vec<f64> {
    let lower: f64 = claims.iter().map(|c| c.lower).sum();
    let upper: f64 = claims.iter().map(|c| c.upper).sum();
    if total <= lower {
        return claims.iter().map(|c| c.lower).collect();
    }
    if total >= upper {
        return claims.iter().map(|c| c.upper).collect();
    }
    let at = |fair: f64| -> f64 { claims.iter().map(|c| (fair * c.target.max(0.001)).clamp(c.lower, c.upper)).sum() };
    let (mut low, mut high) = (0.0f64, 1.0f64);
    while at(high) < total && high < 1e12 {
        high *= 2.0;
    }
    for _ in 0..100 {
        let mid = (low + high) / 2.0;
        if at(mid) < total {
            low = mid;
        } else {
            high = mid;
        }
    }
    claims.iter().map(|c| (high * c.target.max(0.001)).clamp(c.lower, c.upper)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integrator_averages_over_time() {
        let mut i = Integrator::new(Duration::ZERO);
        i.set(10.0, Duration::ZERO);
        i.set(0.0, Duration::from_secs(5));
        let seen = i.reset(Duration::from_secs(10));
        assert!((seen.average - 5.0).abs() < 1e-9);
        assert!((seen.deviation - 5.0).abs() < 1e-9);
        assert_eq!(seen.max, 10.0);
        // The next period starts from the value held now.
        assert_eq!(i.reset(Duration::from_secs(20)).average, 0.0);
    }

    #[test]
    fn shares_follow_targets_within_bounds() {
        let claims = [
            Claim { lower: 10.0, upper: 100.0, target: 90.0 },
            Claim { lower: 10.0, upper: 100.0, target: 10.0 },
        ];
        let shares = share(100.0, &claims);
        assert!((shares[0] - 90.0).abs() < 1e-6 && (shares[1] - 10.0).abs() < 1e-6, "{shares:?}");
        let bounded = share(100.0, &[Claim { lower: 0.0, upper: 30.0, target: 90.0 }, Claim { lower: 0.0, upper: 100.0, target: 10.0 }]);
        assert!((bounded[0] - 30.0).abs() < 1e-6 && (bounded[1] - 70.0).abs() < 1e-6, "{bounded:?}");
        assert_eq!(share(5.0, &claims), vec![10.0, 10.0]);
    }
}
