//! The `apiserver_flowcontrol_*` families, from the flow control's levels and counts,
//! with upstream's names, help and labels.

use super::{header, sample};
use crate::flowcontrol::{FlowControl, WAIT_BUCKETS};

/// Append the priority-and-fairness families to `out`.
pub fn render(out: &mut String, control: &FlowControl) {
    let (levels, counters) = control.gauges();
    type Gauge = fn(&crate::flowcontrol::LevelGauges) -> u32;
    let per_level: [(&str, &str, Gauge); 5] = [
        ("apiserver_flowcontrol_nominal_limit_seats", "Nominal number of execution seats configured for each priority level", |l| l.nominal),
        ("apiserver_flowcontrol_lower_limit_seats", "Configured lower bound on number of execution seats available to each priority level", |l| l.lower),
        ("apiserver_flowcontrol_upper_limit_seats", "Configured upper bound on number of execution seats available to each priority level", |l| l.upper),
        ("apiserver_flowcontrol_current_limit_seats", "current derived number of execution seats available to each priority level", |l| l.current),
        ("apiserver_flowcontrol_request_concurrency_limit", "Nominal number of execution seats configured for each priority level", |l| l.nominal),
    ];
    for (name, help, value) in per_level {
        header(out, name, help, "gauge");
        for level in &levels {
            sample(out, name, &[("priority_level", &level.name)], f64::from(value(level)));
        }
    }

    let name = "apiserver_flowcontrol_current_inqueue_requests";
    header(out, name, "Number of requests currently pending in queues of the API Priority and Fairness subsystem", "gauge");
    for level in &levels {
        for (schema, n) in &level.waiting_by_schema {
            sample(out, name, &[("flow_schema", schema), ("priority_level", &level.name)], *n as f64);
        }
    }
    let name = "apiserver_flowcontrol_current_executing_requests";
    header(out, name, "Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem", "gauge");
    for ((schema, level), (requests, _)) in &counters.executing {
        sample(out, name, &[("flow_schema", schema), ("priority_level", level)], *requests as f64);
    }
    let name = "apiserver_flowcontrol_current_executing_seats";
    header(out, name, "Concurrency (number of seats) occupied by the currently executing (initial stage for a WATCH, any stage otherwise) requests in the API Priority and Fairness subsystem", "gauge");
    for ((schema, level), (_, seats)) in &counters.executing {
        sample(out, name, &[("flow_schema", schema), ("priority_level", level)], *seats as f64);
    }
    let name = "apiserver_flowcontrol_dispatched_requests_total";
    header(out, name, "Number of requests executed by API Priority and Fairness subsystem", "counter");
    for ((schema, level), n) in &counters.dispatched {
        sample(out, name, &[("flow_schema", schema), ("priority_level", level)], *n as f64);
    }
    let name = "apiserver_flowcontrol_rejected_requests_total";
    header(out, name, "Number of requests rejected by API Priority and Fairness subsystem", "counter");
    for ((schema, level, reason), n) in &counters.rejected {
        sample(out, name, &[("flow_schema", schema), ("priority_level", level), ("reason", reason)], *n as f64);
    }
    let name = "apiserver_flowcontrol_request_wait_duration_seconds";
    header(out, name, "Length of time a request spent waiting in its queue", "histogram");
    for ((schema, level, executed), (count, sum, buckets)) in &counters.waited {
        let execute = if *executed { "true" } else { "false" };
        let labels = [("execute", execute), ("flow_schema", &**schema), ("priority_level", &**level)];
        for (bound, n) in WAIT_BUCKETS.iter().zip(buckets) {
            let le = super::format_value(*bound);
            let mut with_le = labels.to_vec();
            with_le.push(("le", &le));
            sample(out, &format!("{name}_bucket"), &with_le, *n as f64);
        }
        let mut inf = labels.to_vec();
        inf.push(("le", "+Inf"));
        sample(out, &format!("{name}_bucket"), &inf, *count as f64);
        sample(out, &format!("{name}_sum"), &labels, *sum);
        sample(out, &format!("{name}_count"), &labels, *count as f64);
    }
}
