//! The lifecycle machine under any order of events and times: it never panics, keeps
//! upstream's signal order, drains only when every short request has finished or the
//! request timeout has passed, exits 0 only with the listener closed and 1 only on a
//! second signal, and does nothing once it has exited.
#![no_main]

use apiary_core::lifecycle::{
    Action, Admission, Event, Kind, Lifecycle, LifecycleConfig, RequestClass, Signal,
};
use libfuzzer_sys::fuzz_target;
use std::time::Duration;

/// Upstream's chain of termination signals. HTTPServerStoppedListening is not in it: it
/// follows ShutdownInitiated, before or after the drain (the listener closes at
/// NotAcceptingNewRequest, or after the drain with --shutdown-send-retry-after).
const ORDER: [Signal; 5] = [
    Signal::ShutdownInitiated,
    Signal::AfterShutdownDelayDuration,
    Signal::PreShutdownHooksStopped,
    Signal::NotAcceptingNewRequest,
    Signal::InFlightRequestsDrained,
];

fuzz_target!(|data: &[u8]| {
    let Some((&head, events)) = data.split_first() else { return };
    let config = LifecycleConfig {
        shutdown_delay: Duration::from_millis(u64::from(head & 0x0f) * 100),
        request_timeout: Duration::from_millis(u64::from(head >> 4) * 100 + 100),
        send_retry_after: head & 1 == 1,
    };
    let pre_shutdown = head & 2 == 2;
    let mut machine = Lifecycle::new(config.clone(), &["hook"], pre_shutdown);
    let mut now = Duration::ZERO;
    let mut short = 0usize;
    let mut terminated = 0;
    let mut listening = false;
    let mut exited = None;
    for &byte in events {
        now += Duration::from_millis(u64::from(byte >> 4) * 37);
        let event = match byte & 0x0f {
            0 => Event::ListenerBound,
            1 => Event::PostStartHookFinished("hook".to_owned()),
            2 => Event::HandlersInstalled,
            3 => Event::Terminate,
            4 => Event::PreShutdownHooksFinished,
            5 | 6 => {
                let class = RequestClass { exempt: byte & 0x10 != 0, resource: true };
                if machine.admit(class) != Admission::Serve {
                    continue;
                }
                Event::RequestStarted(Kind::Short)
            }
            7 => Event::RequestStarted(Kind::LongRunning),
            8 | 9 if short > 0 => Event::RequestFinished(Kind::Short),
            10 => Event::RequestFinished(Kind::LongRunning),
            11 => Event::ListenerClosed,
            _ => Event::Tick,
        };
        match &event {
            Event::RequestStarted(Kind::Short) => short += 1,
            Event::RequestFinished(Kind::Short) => short -= 1,
            Event::Terminate => terminated += 1,
            Event::ListenerBound => listening = true,
            Event::ListenerClosed => listening = false,
            _ => {}
        }
        let was_drained = machine.signaled(Signal::InFlightRequestsDrained);
        let actions = machine.handle(event, now);
        if !was_drained && machine.signaled(Signal::InFlightRequestsDrained) {
            let closed_at = machine.fired_at(Signal::NotAcceptingNewRequest).unwrap();
            assert!(
                short == 0 || now >= closed_at + config.request_timeout,
                "drained with {short} requests in flight before the timeout"
            );
        }
        if exited.is_some() {
            assert!(actions.is_empty(), "acted after exiting");
            continue;
        }
        for action in actions {
            if let Action::Exit(code) = action {
                exited = Some(code);
                match code {
                    1 => assert!(terminated >= 2),
                    0 => assert!(!listening, "exited with the listener open"),
                    other => panic!("exit code {other}"),
                }
            }
        }
        // Signals fire in upstream's order, never one without the one before.
        for pair in ORDER.windows(2) {
            if let Some(later) = machine.fired_at(pair[1]) {
                let earlier = machine.fired_at(pair[0]).expect("signal order");
                assert!(earlier <= later);
            }
        }
        if machine.signaled(Signal::HTTPServerStoppedListening) {
            assert!(machine.signaled(Signal::ShutdownInitiated));
        }
        if machine.signaled(Signal::ShutdownInitiated) {
            assert!(!machine.ready());
        }
    }
});
