//! Which revision a read is served at: kube-apiserver's `resourceVersion` and
//! `resourceVersionMatch` semantics for GET and LIST.
//!
//! Unset: the most recent state. `"0"`: any state (Apiary serves the most recent). A
//! revision `N` with `NotOlderThan` (the default): the most recent state, which must be
//! at least `N`. `Exact`: the state at `N`, from storage history (410 once compacted).

use crate::query::Query;
use crate::status::{ApiError, Cause, Details};
use crate::storage::Revision;
use crate::validation::FieldError;

/// The revision a read must be served at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReadAt {
    Latest,
    /// `"0"`: any state will do; the watch cache serves it when it can.
    Any,
    NotOlderThan(Revision),
    Exact(Revision),
}

impl ReadAt {
    /// The revision to read at, for a storage List.
    pub fn revision(self) -> Option<Revision> {
        match self {
            ReadAt::Exact(n) => Some(n),
            _ => None,
        }
    }

    /// The error when the state read at `current` is older than the client asked for.
    pub fn check(self, current: Revision) -> Result<(), ApiError> {
        match self {
            ReadAt::NotOlderThan(n) if current < n => Err(too_large(n, current)),
            _ => Ok(()),
        }
    }
}

fn parse(rv: &str) -> Result<Revision, ApiError> {
    rv.parse()
        .map_err(|_| ApiError::bad_request(format!("invalid resource version: {rv}")))
}

/// 504 for a revision the store has not reached, as kube-apiserver answers it.
pub(crate) fn too_large(requested: Revision, current: Revision) -> ApiError {
    ApiError {
        code: 504,
        reason: "Timeout",
        message: format!("Too large resource version: {requested}, current: {current}"),
        details: Some(Box::new(Details {
            causes: vec![Cause {
                kind: "ResourceVersionTooLarge".to_owned(),
                message: "Too large resource version".to_owned(),
                field: String::new(),
            }],
            retry_after_seconds: Some(1),
            ..Details::default()
        })),
    }
}

/// The revision a GET reads at.
pub(crate) fn for_get(query: &Query) -> Result<ReadAt, ApiError> {
    match query.get("resourceVersion").unwrap_or("") {
        "" | "0" => Ok(ReadAt::Latest),
        rv => parse(rv).map(ReadAt::NotOlderThan),
    }
}

/// The revision a LIST reads at, after validating the options as upstream's
/// ValidateListOptions does.
pub(crate) fn for_list(query: &Query) -> Result<ReadAt, ApiError> {
    let q = query;
    let rv = q.get("resourceVersion").unwrap_or("");
    let matching = q.get("resourceVersionMatch").unwrap_or("");
    let continued = q.get("continue").is_some_and(|c| !c.is_empty());
    let forbidden = |why: &str| {
        let errs = vec![FieldError::forbidden("resourceVersionMatch", why)];
        ApiError::invalid("meta.k8s.io", "ListOptions", "", errs)
    };
    if !matching.is_empty() && rv.is_empty() {
        return Err(forbidden(
            "resourceVersionMatch is forbidden unless resourceVersion is provided",
        ));
    }
    if !matching.is_empty() && continued {
        return Err(forbidden(
            "resourceVersionMatch is forbidden when continue is provided",
        ));
    }
    if continued && !rv.is_empty() && rv != "0" {
        return Err(ApiError::bad_request(
            "specifying resource version is not allowed when using continue",
        ));
    }
    match (matching, rv) {
        ("Exact", "0") => Err(forbidden(
            "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
        )),
        ("Exact", rv) => parse(rv).map(ReadAt::Exact),
        ("" | "NotOlderThan", "") => Ok(ReadAt::Latest),
        ("" | "NotOlderThan", "0") => Ok(ReadAt::Any),
        ("" | "NotOlderThan", rv) => parse(rv).map(ReadAt::NotOlderThan),
        (other, _) => Err(ApiError::invalid(
            "meta.k8s.io",
            "ListOptions",
            "",
            vec![FieldError::not_supported("resourceVersionMatch", other, &["Exact", "NotOlderThan", ""])],
        )),
    }
}
