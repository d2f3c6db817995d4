//! The HTTP/2 settings kube-apiserver serves with (`secure_serving.go`), and the limits
//! against clients that reset streams in a loop.

use crate::serve::MAX_HEADER_BYTES;

/// Most API request bodies fit in one frame of this size (upstream's measure: 99 % of
/// serialized resources in surveyed clusters were smaller).
const RESOURCE_BODY_99TH_PERCENTILE: u32 = 256 * 1024;

/// Streams a connection may have open when `--http2-max-streams-per-connection` is 0:
/// kube-apiserver's default since the 2023 "rapid reset" fixes (Go's own is 250).
pub const DEFAULT_MAX_STREAMS: u32 = 100;

/// Streams reset by the client before they were accepted, at most (h2's pending-accept
/// limit; past it the connection gets GOAWAY with ENHANCE_YOUR_CALM).
const MAX_PENDING_ACCEPT_RESETS: usize = 20;

/// Streams the server itself had to reset for the client's protocol errors, at most.
const MAX_LOCAL_ERROR_RESETS: usize = 1024;

/// Streams reset before their answer a connection may have before the share of them
/// counts (a client that cancels a watch now and then is no flood).
const MIN_PREMATURE_RESETS: u64 = 100;

/// The largest window HTTP/2 allows.
const MAX_WINDOW: u32 = (1 << 31) - 1;

/// How a server's HTTP/2 connections are configured.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    max_streams: u32,
    /// `--goaway-chance`.
    goaway_chance: f64,
}

impl Settings {
    /// The settings for `--http2-max-streams-per-connection` (0: the default) and
    /// `--goaway-chance`.
    pub fn new(max_streams_flag: u32, goaway_chance: f64) -> Settings {
        let max_streams = match max_streams_flag {
            0 => DEFAULT_MAX_STREAMS,
            n => n,
        };
        Settings { max_streams, goaway_chance }
    }

    /// Whether this request's answer sends its client away (`--goaway-chance`), as
    /// upstream's probabilistic GOAWAY filter draws for every HTTP/2 request.
    pub fn goaway_now(&self) -> bool {
        self.goaway_chance > 0.0 && fastrand::f64() < self.goaway_chance
    }

    /// Whether a connection's client floods it with streams it resets (the 2023 "rapid
    /// reset" attack), and how: `opened` streams so far, `reset` of them reset by the
    /// client before they were answered, `running` handlers. A reset stream leaves its
    /// handler running, so such a client piles handlers up past four times the stream
    /// limit (where Go's server cuts it off), or, if handlers are quick, resets most of
    /// the streams it opens (Envoy's rule: half of them, once there are enough).
    pub fn reset_flood(&self, opened: u64, reset: u64, running: usize) -> Option<&'static str> {
        if running >= 4 * self.max_streams as usize {
            return Some("too many handlers still running");
        }
        if reset >= MIN_PREMATURE_RESETS && reset * 2 >= opened {
            return Some("most of its streams reset before they were answered");
        }
        None
    }

    /// The h2 server configuration.
    pub fn builder(&self) -> h2::server::Builder {
        let mut builder = h2::server::Builder::new();
        builder
            .max_concurrent_streams(self.max_streams)
            .max_frame_size(RESOURCE_BODY_99TH_PERCENTILE)
            .initial_window_size(RESOURCE_BODY_99TH_PERCENTILE)
            .initial_connection_window_size(
                RESOURCE_BODY_99TH_PERCENTILE.saturating_mul(self.max_streams).min(MAX_WINDOW),
            )
            .max_header_list_size(MAX_HEADER_BYTES as u32)
            .max_pending_accept_reset_streams(MAX_PENDING_ACCEPT_RESETS)
            .max_local_error_reset_streams(Some(MAX_LOCAL_ERROR_RESETS));
        builder
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goaway_chance_is_a_share_of_requests() {
        assert!(!(0..10_000).any(|_| Settings::new(0, 0.0).goaway_now()));
        let settings = Settings::new(0, 0.02);
        let sent = (0..100_000).filter(|_| settings.goaway_now()).count();
        // 2,000 expected; the binomial's standard deviation is 44.
        assert!((1_700..2_300).contains(&sent), "{sent}");
    }

    #[test]
    fn the_stream_limit_defaults_to_upstreams() {
        assert_eq!(Settings::new(0, 0.0).max_streams, 100);
        assert_eq!(Settings::new(250, 0.0).max_streams, 250);
    }

    #[test]
    fn a_reset_flood_is_told_from_a_client_that_cancels_now_and_then() {
        let settings = Settings::new(0, 0.0);
        // A watch cancelled now and then.
        assert_eq!(settings.reset_flood(1_000, 30, 5), None);
        // Few streams yet: no verdict.
        assert_eq!(settings.reset_flood(60, 50, 1), None);
        assert!(settings.reset_flood(200, 100, 1).is_some());
        assert!(settings.reset_flood(500, 10, 400).is_some());
    }
}
