//! The Go types of the built-in kinds, as data: for each kind served, its message
//! (generated from the v1.33 API types, see `table.rs`) with its fields in Go
//! declaration order, their JSON names, protobuf numbers and types, and the facts of
//! the Go field (`omitempty`, pointer, inline, slice, map) that decide how Go's
//! `encoding/json` writes it. Protobuf bodies are read with it ([`crate::protobuf`]) and
//! built-in objects written as Go writes them ([`crate::typed_json`]).

pub(crate) mod schema;
pub(crate) mod table;

/// The message of `kind` in `api_version` (`DeleteOptions` in any group version).
pub(crate) fn message_for(api_version: &str, kind: &str) -> Option<u16> {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    message_in(group, version, kind)
}

/// [`message_for`] by group and version, without joining them (asked per request).
pub(crate) fn message_in(group: &str, version: &str, kind: &str) -> Option<u16> {
    let same = |av: &str| match av.split_once('/') {
        Some((g, v)) => g == group && v == version,
        None => av == "*" || (group.is_empty() && av == version),
    };
    table::KINDS
        .iter()
        .find(|(av, k, _)| *k == kind && same(av))
        .map(|&(_, _, index)| index)
}

/// [`message_for`], and the kinds only responses hold (`Status`, `PartialObjectMetadata`
/// and its list).
pub(crate) fn response_message_for(api_version: &str, kind: &str) -> Option<u16> {
    message_for(api_version, kind).or_else(|| {
        table::RESPONSE_KINDS
            .iter()
            .find(|(av, k, _)| *k == kind && (*av == api_version || *av == "*"))
            .map(|&(_, _, index)| index)
    })
}
