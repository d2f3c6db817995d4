//! The lifecycle machine, event by event, with time as an input.

use super::*;

const S: fn(u64) -> Duration = Duration::from_secs;

fn resource() -> RequestClass {
    RequestClass {
        exempt: false,
        resource: true,
    }
}

fn health() -> RequestClass {
    RequestClass {
        exempt: true,
        resource: false,
    }
}

/// A started, ready server with no hooks.
fn running(config: LifecycleConfig, pre_shutdown: bool) -> Lifecycle {
    let mut l = Lifecycle::new(config, &[], pre_shutdown);
    assert_eq!(
        l.handle(Event::ListenerBound, S(0)),
        [Action::RunPostStartHooks]
    );
    l.handle(Event::HandlersInstalled, S(0));
    assert!(l.ready());
    l
}

fn order(l: &Lifecycle) -> Vec<Signal> {
    let mut fired: Vec<(Duration, Signal)> = l.fired.iter().map(|(s, t)| (*t, *s)).collect();
    fired.sort();
    fired.into_iter().map(|(_, s)| s).collect()
}

#[test]
fn start_up_waits_for_post_start_hooks_and_handlers() {
    let mut l = Lifecycle::new(
        LifecycleConfig::default(),
        &["start-informers", "crd-discovery"],
        false,
    );
    assert!(!l.ready());
    assert_eq!(l.admit(resource()), Admission::NotYetInstalled);
    assert_eq!(
        l.admit(RequestClass {
            exempt: false,
            resource: false
        }),
        Admission::Serve,
        "discovery paths are served"
    );
    assert_eq!(l.admit(health()), Admission::Serve);
    assert_eq!(
        l.handle(Event::ListenerBound, S(0)),
        [Action::RunPostStartHooks]
    );
    l.handle(Event::PostStartHookFinished("start-informers".into()), S(0));
    assert_eq!(
        l.post_start_hooks().collect::<Vec<_>>(),
        [("crd-discovery", false), ("start-informers", true)]
    );
    l.handle(Event::HandlersInstalled, S(1));
    assert_eq!(l.admit(resource()), Admission::Serve);
    assert!(!l.ready(), "a hook is still running");
    l.handle(Event::PostStartHookFinished("crd-discovery".into()), S(1));
    assert!(l.ready());
    assert_eq!(l.next_deadline(), None);
}

#[test]
fn termination_drains_requests_then_ends_watches_then_closes_and_exits_0() {
    let mut l = running(LifecycleConfig::default(), false);
    l.handle(Event::RequestStarted(Kind::Short), S(1));
    l.handle(Event::RequestStarted(Kind::Short), S(1));
    l.handle(Event::RequestStarted(Kind::LongRunning), S(1));

    // No delay, no hooks: straight to not accepting; the listener stops at once.
    assert_eq!(l.handle(Event::Terminate, S(10)), [Action::StopListening]);
    assert!(!l.ready(), "readyz fails at once");
    assert_eq!(
        l.admit(health()),
        Admission::Serve,
        "livez and healthz stay up"
    );
    assert_eq!(l.admit(resource()), Admission::Refuse);
    assert!(l.signaled(Signal::NotAcceptingNewRequest));
    assert!(!l.signaled(Signal::InFlightRequestsDrained));

    assert_eq!(l.handle(Event::RequestFinished(Kind::Short), S(11)), []);
    assert_eq!(
        l.handle(Event::RequestFinished(Kind::Short), S(12)),
        [Action::EndWatches]
    );
    assert!(l.signaled(Signal::InFlightRequestsDrained));
    assert_eq!(
        l.handle(Event::ListenerClosed, S(12)),
        [],
        "a watch is still ending"
    );
    assert_eq!(
        l.handle(Event::RequestFinished(Kind::LongRunning), S(13)),
        [Action::Exit(0)]
    );
    assert_eq!(l.exit_code(), Some(0));
    assert_eq!(
        order(&l),
        [
            Signal::MuxAndDiscoveryComplete,
            Signal::ShutdownInitiated,
            Signal::AfterShutdownDelayDuration,
            Signal::PreShutdownHooksStopped,
            Signal::NotAcceptingNewRequest,
            Signal::InFlightRequestsDrained,
            Signal::HTTPServerStoppedListening,
        ]
    );
    assert_eq!(l.handle(Event::Tick, S(100)), [], "nothing after exit");
}

#[test]
fn the_shutdown_delay_keeps_serving_while_readyz_fails() {
    let config = LifecycleConfig {
        shutdown_delay: S(5),
        ..LifecycleConfig::default()
    };
    let mut l = running(config, false);
    assert_eq!(l.handle(Event::Terminate, S(10)), []);
    assert!(!l.ready());
    assert_eq!(
        l.admit(resource()),
        Admission::Serve,
        "still served during the delay"
    );
    assert_eq!(l.next_deadline(), Some(S(15)));
    assert_eq!(l.handle(Event::Tick, S(14)), []);
    assert!(!l.signaled(Signal::AfterShutdownDelayDuration));
    // Nothing in flight: drained at once; no watches; exits once the listener closed.
    assert_eq!(
        l.handle(Event::Tick, S(15)),
        [Action::StopListening, Action::EndWatches]
    );
    assert_eq!(l.fired_at(Signal::AfterShutdownDelayDuration), Some(S(15)));
    assert_eq!(l.fired_at(Signal::NotAcceptingNewRequest), Some(S(15)));
    assert_eq!(
        l.next_deadline(),
        Some(S(75)),
        "the drain is bounded by the request timeout"
    );
    assert_eq!(l.handle(Event::Tick, S(15)), []);
    assert_eq!(l.handle(Event::ListenerClosed, S(16)), [Action::Exit(0)]);
}

#[test]
fn pre_shutdown_hooks_run_after_the_delay_and_before_requests_stop() {
    let config = LifecycleConfig {
        shutdown_delay: S(2),
        ..LifecycleConfig::default()
    };
    let mut l = running(config, true);
    l.handle(Event::Terminate, S(0));
    assert_eq!(
        l.handle(Event::PreShutdownHooksFinished, S(1)),
        [],
        "too early: ignored"
    );
    assert_eq!(l.handle(Event::Tick, S(2)), [Action::RunPreShutdownHooks]);
    assert_eq!(
        l.admit(resource()),
        Admission::Serve,
        "requests are served while hooks run"
    );
    assert_eq!(l.handle(Event::Tick, S(3)), []);
    assert_eq!(
        l.handle(Event::PreShutdownHooksFinished, S(4)),
        [Action::StopListening, Action::EndWatches]
    );
    assert_eq!(l.fired_at(Signal::PreShutdownHooksStopped), Some(S(4)));
    assert_eq!(l.fired_at(Signal::NotAcceptingNewRequest), Some(S(4)));
}

#[test]
fn with_retry_after_requests_get_429_and_the_listener_stays_until_drained() {
    let config = LifecycleConfig {
        shutdown_delay: S(1),
        send_retry_after: true,
        ..LifecycleConfig::default()
    };
    let mut l = running(config, true);
    l.handle(Event::RequestStarted(Kind::Short), S(0));
    l.handle(Event::Terminate, S(0));
    assert_eq!(l.admit(resource()), Admission::Serve, "during the delay");
    assert_eq!(l.handle(Event::Tick, S(1)), [Action::RunPreShutdownHooks]);
    assert_eq!(
        l.admit(resource()),
        Admission::ShuttingDown,
        "429 once the delay passed"
    );
    assert_eq!(l.admit(health()), Admission::Serve);
    assert_eq!(
        l.handle(Event::PreShutdownHooksFinished, S(2)),
        [],
        "the listener stays open"
    );
    assert_eq!(l.admit(resource()), Admission::ShuttingDown);
    assert_eq!(
        l.handle(Event::RequestFinished(Kind::Short), S(3)),
        [Action::EndWatches, Action::StopListening]
    );
    assert_eq!(l.handle(Event::ListenerClosed, S(3)), [Action::Exit(0)]);
}

#[test]
fn the_request_timeout_bounds_the_drain_and_the_watches() {
    let config = LifecycleConfig {
        request_timeout: S(60),
        ..LifecycleConfig::default()
    };
    let mut l = running(config, false);
    l.handle(Event::RequestStarted(Kind::Short), S(0));
    l.handle(Event::RequestStarted(Kind::LongRunning), S(0));
    assert_eq!(l.handle(Event::Terminate, S(10)), [Action::StopListening]);
    assert_eq!(l.handle(Event::ListenerClosed, S(10)), []);
    assert_eq!(l.handle(Event::Tick, S(69)), []);
    // Neither the request nor the watch finished: at the deadline they are given up on.
    assert_eq!(
        l.handle(Event::Tick, S(70)),
        [Action::EndWatches, Action::Exit(0)]
    );
    assert_eq!(l.in_flight(), (1, 1));
}

#[test]
fn a_second_signal_exits_at_once_with_1() {
    let config = LifecycleConfig {
        shutdown_delay: S(30),
        ..LifecycleConfig::default()
    };
    let mut l = running(config, false);
    l.handle(Event::RequestStarted(Kind::Short), S(0));
    assert_eq!(l.handle(Event::Terminate, S(1)), []);
    assert_eq!(l.handle(Event::Terminate, S(2)), [Action::Exit(1)]);
    assert_eq!(l.exit_code(), Some(1));
    assert_eq!(l.handle(Event::Tick, S(40)), []);
}

#[test]
fn a_signal_before_the_listener_is_bound_exits_0_without_waiting() {
    let mut l = Lifecycle::new(LifecycleConfig::default(), &["hook"], false);
    assert_eq!(
        l.handle(Event::Terminate, S(0)),
        [Action::EndWatches, Action::Exit(0)]
    );
}

#[test]
fn health_and_metrics_paths_are_exempt() {
    for path in [
        "/readyz",
        "/readyz/etcd",
        "/livez",
        "/healthz/poststarthook/x",
        "/metrics",
    ] {
        assert!(is_exempt_path(path), "{path}");
    }
    for path in ["/api/v1/pods", "/apis", "/version", "/openapi/v2"] {
        assert!(!is_exempt_path(path), "{path}");
    }
}

#[test]
fn turned_away_answers() {
    let r = turned_away(Admission::ShuttingDown).unwrap();
    assert_eq!(r.status(), 429);
    assert_eq!(r.headers()["retry-after"], "5");
    assert_eq!(r.headers()["connection"], "close");
    let status: serde_json::Value = serde_json::from_slice(r.body()).unwrap();
    assert_eq!(status["reason"], "TooManyRequests");
    assert_eq!(status["details"]["retryAfterSeconds"], 5);
    let r = turned_away(Admission::NotYetInstalled).unwrap();
    assert_eq!(r.status(), 503);
    assert!(turned_away(Admission::Refuse).is_none());
    assert!(turned_away(Admission::Serve).is_none());
    let r = timed_out();
    let status: serde_json::Value = serde_json::from_slice(r.body()).unwrap();
    assert_eq!(status["code"], 504);
    assert_eq!(status["reason"], "Timeout");
    assert_eq!(
        status["message"],
        "Timeout: request did not complete within the allotted timeout"
    );
}
