//! WATCH of a collection or of one object: the initial state when the client asks for
//! it, then every change after a revision, from the watch cache or the backend (the
//! core decides which), as a [`WatchStream`] the adapter pumps.

use super::scope::Scope;
use crate::negotiation::Format;
use crate::effect::{Step, WatchSource};
use crate::status::ApiError;
use crate::storage::{Revision, StorageOp, StorageOutput};
use super::watch_stream::WatchStream;
use crate::watch::EventType;
use std::time::Duration;

/// What the query asks of a watch.
struct WatchOptions {
    /// Start after this revision; `None` starts from the current state.
    resource_version: Option<Revision>,
    /// Send the current state first, as ADDED events.
    initial_events: bool,
    /// End the initial state with a BOOKMARK annotated `k8s.io/initial-events-end`.
    initial_events_bookmark: bool,
    bookmarks: bool,
    timeout: Duration,
}

fn options(scope: &Scope) -> Result<WatchOptions, ApiError> {
    let q = &scope.query;
    let resource_version = match q.get("resourceVersion").unwrap_or("") {
        "" | "0" => None,
        rv => Some(
            rv.parse::<Revision>()
                .map_err(|_| ApiError::bad_request(format!("invalid resource version: {rv}")))?,
        ),
    };
    let send_initial = match q.get("sendInitialEvents") {
        None => None,
        Some("true") => Some(true),
        Some("false") => Some(false),
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "invalid value for sendInitialEvents: {other}"
            )))
        }
    };
    let bookmarks = q.flag("allowWatchBookmarks");
    if send_initial == Some(true)
        && (q.get("resourceVersionMatch") != Some("NotOlderThan") || !bookmarks)
    {
        return Err(ApiError::bad_request(
            "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan and allowWatchBookmarks to true",
        ));
    }
    // Without a resourceVersion (or with "0") kube sends the current state first.
    let initial_events = send_initial.unwrap_or(resource_version.is_none());
    let timeout = match q.get("timeoutSeconds").filter(|t| !t.is_empty()) {
        Some(t) => Duration::from_secs(t.parse::<u64>().map_err(|_| {
            ApiError::bad_request(format!("invalid value for timeoutSeconds: {t}"))
        })?),
        None => {
            // Randomized like kube-apiserver, so watches do not all end together.
            let min = scope.shared.config.min_request_timeout;
            let fraction = f64::from(scope.inputs.entropy[0]) / 256.0;
            min + min.mul_f64(fraction)
        }
    };
    Ok(WatchOptions {
        resource_version,
        initial_events,
        initial_events_bookmark: send_initial == Some(true),
        bookmarks,
        timeout,
    })
}

/// Where a watch of `prefix` after `after` reads its events: the resource's watch cache
/// when its window covers `after`, else the backend, which keeps the longer history.
fn source(scope: &Scope, resource_prefix: &str, prefix: String, after: Revision) -> WatchSource {
    let subscription = scope
        .shared
        .served
        .caches()
        .get(resource_prefix)
        .and_then(|cache| cache.subscribe(&prefix, after));
    match subscription {
        Some(subscription) => WatchSource::Cache(subscription),
        None => WatchSource::Backend { prefix, after },
    }
}

pub(super) fn watch(scope: Scope) -> Step {
    if scope.output.format == Format::Yaml {
        // Upstream has no YAML stream serializer: the 406 names those it has, in YAML.
        return scope.fail(ApiError::not_acceptable(&[
            "application/json;stream=watch",
            "application/vnd.kubernetes.protobuf;stream=watch",
        ]));
    }
    let opts = match options(&scope) {
        Ok(o) => o,
        Err(e) => return scope.fail(e),
    };
    let selection = match super::list::selection(&scope) {
        Ok(s) => s,
        Err(e) => return scope.fail(e),
    };
    let exact_key = (!scope.name.is_empty()).then(|| scope.key(&scope.name));
    let prefix = scope.prefix();
    let resource_prefix = scope.resource().storage_prefix(&scope.shared.config.storage_prefix, None);
    if !opts.initial_events {
        let after = opts.resource_version.unwrap_or(0);
        let source = source(&scope, &resource_prefix, prefix, after);
        let stream = WatchStream::new(
            scope,
            exact_key,
            selection,
            after,
            opts.timeout,
            opts.bookmarks,
        );
        return Step::Watch(source, Box::new(stream));
    }
    let op = StorageOp::list_latest(prefix.clone());
    scope.then(op, move |scope, done| {
        let page = match done {
            Ok(StorageOutput::Listed(page)) => page,
            other => return scope.fail_storage("", other),
        };
        let mut objects = Vec::with_capacity(page.items.len());
        for kv in &page.items {
            if exact_key.as_deref().is_some_and(|k| k != kv.key) {
                continue;
            }
            match scope.read(kv) {
                Ok(obj) if selection.matches(&obj) => objects.push(obj),
                Ok(_) => {}
                Err(e) => return scope.fail(ApiError::internal(e)),
            }
        }
        let after = page.revision;
        let source = source(&scope, &resource_prefix, prefix, after);
        let mut stream = WatchStream::new(
            scope,
            exact_key,
            selection,
            after,
            opts.timeout,
            opts.bookmarks,
        );
        for obj in &objects {
            stream.push_initial(EventType::Added, obj);
        }
        if opts.initial_events_bookmark {
            stream.push_initial_bookmark(true);
        }
        Step::Watch(source, Box::new(stream))
    })
}
