//! How many seats a request takes, as upstream's work estimator guesses it: a list
//! (and a watch that starts with the current objects) one seat per hundred objects it
//! will go through; a write one seat, and, when ten or more watches will be told of
//! it, a seat per ten watches for a few milliseconds after it ends; anything else one.

use super::queue_set::Work;
use crate::request_info::RequestInfo;
use std::time::Duration;

const OBJECTS_PER_SEAT: f64 = 100.0;
const WATCHES_PER_SEAT: f64 = 10.0;
/// The extra time a write's watch events are reckoned to take.
const EVENT_ADDITIONAL: Duration = Duration::from_millis(5);
/// The most seats a list or a write may be given.
pub const MAXIMUM_SEATS: u32 = 10;

/// What the estimate reads of the server: the objects of the request's resource
/// (none when there is no cache to ask) and the watches open on it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Counts {
    pub objects: Option<usize>,
    pub watches: usize,
}

/// The list options the estimate reads from the query.
#[derive(Debug, Default)]
struct ListOptions {
    limit: usize,
    resource_version: Option<String>,
    selector: bool,
    continued: bool,
    send_initial_events: bool,
}

fn list_options(query: Option<&str>) -> ListOptions {
    let query = crate::query::Query::parse(query);
    let present = |name| query.get(name).is_some_and(|v| !v.is_empty());
    ListOptions {
        limit: query.get("limit").and_then(|l| l.parse().ok()).unwrap_or(0),
        resource_version: query.get("resourceVersion").map(str::to_owned),
        selector: present("labelSelector") || present("fieldSelector"),
        continued: present("continue"),
        send_initial_events: query.flag("sendInitialEvents"),
    }
}

/// The work of a request classified to a level whose widest request is `max_seats`.
pub fn estimate(info: &RequestInfo, query: Option<&str>, max_seats: u32, counts: impl FnOnce() -> Counts) -> Work {
    let max_seats = match max_seats {
        0 => MAXIMUM_SEATS,
        n => n.min(MAXIMUM_SEATS),
    };
    match info.verb.as_str() {
        "list" | "watch" if info.is_resource_request => list(info, query, max_seats, counts()),
        "create" | "update" | "patch" | "delete" if info.is_resource_request => write(info, max_seats, counts()),
        _ => Work::ONE,
    }
}

fn list(info: &RequestInfo, query: Option<&str>, max_seats: u32, counts: Counts) -> Work {
    let options = list_options(query);
    let legacy_watch = matches!(options.resource_version.as_deref(), None | Some("") | Some("0"));
    if info.verb == "watch" && !options.send_initial_events && !legacy_watch {
        return Work::ONE;
    }
    let Some(stored) = counts.objects else {
        return Work::ONE;
    };
    // Served from the watch cache: a watch's initial events, and lists that do not
    // ask for an exact revision or a continuation.
    let from_cache = info.verb == "watch"
        || (!options.continued && !matches!(options.resource_version.as_deref(), Some(rv) if !rv.is_empty() && rv != "0"));
    let limit = match options.limit {
        0 => stored,
        n => n.min(stored),
    };
    let objects = if !info.name.is_empty() {
        1
    } else if from_cache {
        stored
    } else if options.selector {
        stored + limit
    } else {
        2 * limit
    };
    let seats = (objects as f64 / OBJECTS_PER_SEAT).ceil() as u32;
    Work { initial_seats: seats.clamp(1, max_seats), ..Work::ONE }
}

fn write(info: &RequestInfo, max_seats: u32, counts: Counts) -> Work {
    // A token request changes nothing anyone watches.
    if info.resource == "serviceaccounts" && info.subresource == "token" {
        return Work::ONE;
    }
    if (counts.watches as f64) < WATCHES_PER_SEAT {
        return Work::ONE;
    }
    let seats = (counts.watches as f64 / WATCHES_PER_SEAT).ceil() as u32;
    // The same work spread over no more than the level's widest request.
    let work = u128::from(seats) * EVENT_ADDITIONAL.as_nanos();
    let final_seats = seats.min(max_seats);
    Work {
        initial_seats: 1,
        final_seats,
        additional_latency: Duration::from_nanos((work / u128::from(final_seats)) as u64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(method: &str, path: &str, query: Option<&str>) -> RequestInfo {
        crate::request_info::resolve(&method.parse().unwrap(), path, query)
    }

    #[test]
    fn lists_take_a_seat_per_hundred_objects() {
        let counts = |objects| move || Counts { objects: Some(objects), watches: 0 };
        let pods = info("GET", "/api/v1/pods", None);
        assert_eq!(estimate(&pods, None, 0, counts(50)).initial_seats, 1);
        assert_eq!(estimate(&pods, None, 0, counts(450)).initial_seats, 5);
        assert_eq!(estimate(&pods, None, 0, counts(5000)).initial_seats, 10);
        assert_eq!(estimate(&pods, None, 3, counts(5000)).initial_seats, 3);
        // From storage at an exact revision, with a limit: twice the page.
        let exact = Some("limit=250&resourceVersion=7&resourceVersionMatch=Exact");
        assert_eq!(estimate(&info("GET", "/api/v1/pods", exact), exact, 0, counts(5000)).initial_seats, 5);
        // A watch from now on sends nothing first.
        let watch = Some("watch=true&resourceVersion=7");
        assert_eq!(estimate(&info("GET", "/api/v1/pods", watch), watch, 0, counts(5000)), Work::ONE);
        let watch_all = Some("watch=true");
        assert_eq!(estimate(&info("GET", "/api/v1/pods", watch_all), watch_all, 0, counts(5000)).initial_seats, 10);
    }

    #[test]
    fn writes_with_many_watches_hold_seats_after() {
        let create = info("POST", "/api/v1/namespaces/a/configmaps", None);
        let few = estimate(&create, None, 0, || Counts { objects: None, watches: 9 });
        assert_eq!(few, Work::ONE);
        let many = estimate(&create, None, 0, || Counts { objects: None, watches: 35 });
        assert_eq!((many.initial_seats, many.final_seats, many.additional_latency), (1, 4, Duration::from_millis(5)));
        let capped = estimate(&create, None, 2, || Counts { objects: None, watches: 35 });
        assert_eq!((capped.final_seats, capped.additional_latency), (2, Duration::from_millis(10)));
    }
}
