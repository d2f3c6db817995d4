//! OpenAPI v3 of the extension servers, as kube-aggregator's OpenAPI v3 controller: the
//! backend's `/openapi/v3` index is read (by the availability pass, once a minute) and
//! its entry for the APIService's group version, `apis/<group>/<version>`, joins this
//! server's index as the backend wrote it (its `serverRelativeURL` pinned to the
//! backend's hash); a request for that document is proxied to the backend, which
//! answers it, `?hash=` and all.
//!
//! Only that group version's entry is taken: upstream merges every path of the
//! backend's index (its `apis`, `version`, …) over the server's own, whichever map
//! iteration puts last.

use super::{backend_of_path, text, Backend};
use crate::shared::Shared;
use serde_json::{Map, Value};

/// The key of `api`'s group version in an OpenAPI v3 index.
fn key_of(api: &Value) -> String {
    format!("apis/{}/{}", text(api, "/spec/group"), text(api, "/spec/version"))
}

/// The entry a backend's OpenAPI v3 index (`{"paths": {…}}`) gives `api`'s group
/// version.
pub(crate) fn index_entry(index: &Value, api: &Value) -> Option<Value> {
    index.get("paths")?.get(key_of(api)).filter(|e| e.is_object()).cloned()
}

/// The index entries of the group versions of Available service-backed APIServices,
/// by key; empty while no APIService names a Service.
pub(crate) fn remote_index(shared: &Shared) -> Map<String, Value> {
    if !super::any_remote(shared) {
        return Map::new();
    }
    super::apiservices(shared)
        .unwrap_or_default()
        .iter()
        .filter(|a| super::is_available(a) && Backend::of(a).is_some())
        .filter_map(|a| Some((key_of(a), shared.backend_documents.openapi_entry(text(a, "/metadata/name"))?)))
        .collect()
}

/// The backend serving `/openapi/v3/apis/<group>/<version>`: that group version's
/// APIService names a Service whose index listed it.
pub(crate) fn backend_of_document(shared: &Shared, path: &str) -> Option<Backend> {
    let group_version = path.strip_prefix("/openapi/v3")?;
    if group_version.split('/').count() != 4 {
        return None;
    }
    let backend = backend_of_path(shared, group_version)?;
    shared.backend_documents.openapi_entry(&backend.name).map(|_| backend)
}
