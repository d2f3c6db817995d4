//! Request info: what a request is about, resolved from its method and path the way
//! kube-apiserver's RequestInfoFactory resolves it.
//!
//! Resource paths:
//! `/api/v1[/namespaces/{ns}]/{resource}[/{name}[/{subresource}]]`,
//! `/apis/{group}/{version}[/namespaces/{ns}]/{resource}[/{name}[/{subresource}]]`,
//! and the legacy `/api/v1/watch/...` form. Everything else is a non-resource path.

use http::Method;

/// What the request is about.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestInfo {
    /// Whether the path names an API resource (as opposed to /healthz, /api, /apis/apps …).
    pub is_resource_request: bool,
    /// The path, for non-resource requests.
    pub path: String,
    /// get, list, watch, create, update, patch, delete, deletecollection, or for
    /// non-resource requests the lowercase method.
    pub verb: String,
    /// `api` or `apis` (empty for non-resource requests).
    pub api_prefix: String,
    pub api_group: String,
    pub api_version: String,
    pub namespace: String,
    pub resource: String,
    pub subresource: String,
    pub name: String,
    /// The path split on `/`, without empty parts.
    pub parts: Vec<String>,
}

/// Query parameters that change the verb of a collection GET.
#[derive(Clone, Copy, Debug, Default)]
pub struct VerbHints<'a> {
    /// The `watch` query parameter was true.
    pub watch: bool,
    /// The `fieldSelector` query parameter, if any.
    pub field_selector: Option<&'a str>,
}

/// Resolve the request info of a request.
pub fn resolve(method: &Method, path: &str, query: Option<&str>) -> RequestInfo {
    let hints = hints_from_query(query);
    resolve_with(method, path, hints)
}

fn hints_from_query(query: Option<&str>) -> VerbHints<'_> {
    let mut hints = VerbHints::default();
    for pair in query.unwrap_or("").split('&') {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        match k {
            "watch" => hints.watch = matches!(v, "true" | "1" | "True" | "TRUE" | "t" | "T"),
            "fieldSelector" => hints.field_selector = Some(v),
            _ => {}
        }
    }
    hints
}

fn method_verb(method: &Method) -> &'static str {
    match *method {
        Method::POST => "create",
        Method::GET | Method::HEAD => "get",
        Method::PUT => "update",
        Method::PATCH => "patch",
        Method::DELETE => "delete",
        _ => "",
    }
}

/// Resolve with the verb-changing query parameters already extracted.
pub fn resolve_with(method: &Method, path: &str, hints: VerbHints<'_>) -> RequestInfo {
    let non_resource = || RequestInfo {
        is_resource_request: false,
        path: path.to_owned(),
        verb: method.as_str().to_ascii_lowercase(),
        ..RequestInfo::default()
    };

    let parts: Vec<&str> = path.trim_matches('/').split('/').filter(|p| !p.is_empty()).collect();
    let mut rest: &[&str] = &parts;
    let (prefix, group) = match rest.first() {
        Some(&"api") => (rest[0], ""),
        Some(&"apis") if rest.len() >= 3 => (rest[0], rest[1]),
        _ => return non_resource(),
    };
    rest = &rest[if group.is_empty() { 1 } else { 2 }..];
    // `/api/v1` and `/apis/<group>/<version>` alone are discovery documents.
    if rest.len() < 2 {
        return non_resource();
    }
    let version = rest[0];
    rest = &rest[1..];

    let mut info = RequestInfo {
        is_resource_request: true,
        path: path.to_owned(),
        api_prefix: prefix.to_owned(),
        api_group: group.to_owned(),
        api_version: version.to_owned(),
        parts: parts.iter().map(|p| (*p).to_owned()).collect(),
        ..RequestInfo::default()
    };
    let mut verb = method_verb(method);

    // The legacy watch prefix: /api/v1/watch/namespaces/x/pods.
    if rest[0] == "watch" {
        if rest.len() < 2 {
            return non_resource();
        }
        verb = "watch";
        rest = &rest[1..];
    }

    if rest[0] == "namespaces" && rest.len() > 1 {
        info.namespace = rest[1].to_owned();
        // /namespaces/{ns}/status and /finalize are subresources of the namespace itself.
        if rest.len() > 2 && !matches!(rest[2], "status" | "finalize") {
            rest = &rest[2..];
        }
    }

    info.resource = rest[0].to_owned();
    if rest.len() >= 2 {
        info.name = rest[1].to_owned();
    }
    if rest.len() >= 3 {
        info.subresource = rest[2].to_owned();
    }

    if info.name.is_empty() && verb == "get" {
        verb = if hints.watch { "watch" } else { "list" };
    }
    // A list or watch pinned to one name by field selector is about that name.
    if matches!(verb, "list" | "watch") && info.name.is_empty() {
        if let Some(name) = hints.field_selector.and_then(exact_name) {
            if crate::validation::names::path_segment(&name).is_empty() {
                info.name = name;
            }
        }
    }
    if info.name.is_empty() && verb == "delete" {
        verb = "deletecollection";
    }
    info.verb = verb.to_owned();
    info
}

/// `metadata.name=x` (or `==`) as the only requirement of a field selector.
fn exact_name(selector: &str) -> Option<String> {
    let selector = percent_decode(selector);
    if selector.contains(',') {
        return None;
    }
    let value = selector
        .strip_prefix("metadata.name==")
        .or_else(|| selector.strip_prefix("metadata.name="))?;
    Some(value.to_owned())
}

/// Decode `%XX` escapes and `+` (as a space) of a query value.
pub fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' if i + 2 < b.len() => {
                let hex = std::str::from_utf8(&b[i + 1..i + 3]).ok();
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(v) => {
                        out.push(v);
                        i += 3;
                        continue;
                    }
                    None => out.push(b'%'),
                }
            }
            b'+' => out.push(b' '),
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(method: Method, uri: &str) -> RequestInfo {
        let (path, query) = match uri.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (uri, None),
        };
        resolve(&method, path, query)
    }

    fn summary(i: &RequestInfo) -> (String, String, String, String, String, String, String) {
        (
            i.verb.clone(),
            i.api_group.clone(),
            i.api_version.clone(),
            i.namespace.clone(),
            i.resource.clone(),
            i.name.clone(),
            i.subresource.clone(),
        )
    }

    fn s(v: [&str; 7]) -> (String, String, String, String, String, String, String) {
        let v = v.map(str::to_owned);
        (v[0].clone(), v[1].clone(), v[2].clone(), v[3].clone(), v[4].clone(), v[5].clone(), v[6].clone())
    }

    #[test]
    fn resolves_like_kube_apiserver() {
        let cases = [
            (Method::GET, "/api/v1/namespaces", ["list", "", "v1", "", "namespaces", "", ""]),
            (Method::GET, "/api/v1/namespaces/x", ["get", "", "v1", "x", "namespaces", "x", ""]),
            (Method::PUT, "/api/v1/namespaces/x/finalize", ["update", "", "v1", "x", "namespaces", "x", "finalize"]),
            (Method::GET, "/api/v1/namespaces/x/status", ["get", "", "v1", "x", "namespaces", "x", "status"]),
            (Method::GET, "/api/v1/namespaces/x/pods", ["list", "", "v1", "x", "pods", "", ""]),
            (Method::GET, "/api/v1/namespaces/x/pods/p", ["get", "", "v1", "x", "pods", "p", ""]),
            (Method::GET, "/api/v1/namespaces/x/pods/p/log", ["get", "", "v1", "x", "pods", "p", "log"]),
            (Method::POST, "/api/v1/namespaces/x/pods", ["create", "", "v1", "x", "pods", "", ""]),
            (Method::DELETE, "/api/v1/namespaces/x/pods", ["deletecollection", "", "v1", "x", "pods", "", ""]),
            (Method::DELETE, "/api/v1/namespaces/x/pods/p", ["delete", "", "v1", "x", "pods", "p", ""]),
            (Method::PATCH, "/apis/apps/v1/namespaces/x/deployments/d/scale", ["patch", "apps", "v1", "x", "deployments", "d", "scale"]),
            (Method::GET, "/apis/apps/v1/deployments", ["list", "apps", "v1", "", "deployments", "", ""]),
            (Method::GET, "/api/v1/pods?watch=true", ["watch", "", "v1", "", "pods", "", ""]),
            (Method::GET, "/api/v1/watch/namespaces/x/pods", ["watch", "", "v1", "x", "pods", "", ""]),
            (Method::GET, "/api/v1/watch/namespaces/x/pods/p", ["watch", "", "v1", "x", "pods", "p", ""]),
            (Method::GET, "/api/v1/namespaces/x/pods?fieldSelector=metadata.name%3Dp", ["list", "", "v1", "x", "pods", "p", ""]),
            (Method::GET, "/apis/rbac.authorization.k8s.io/v1/clusterroles/system:admin", ["get", "rbac.authorization.k8s.io", "v1", "", "clusterroles", "system:admin", ""]),
        ];
        for (method, uri, want) in cases {
            let got = info(method.clone(), uri);
            assert!(got.is_resource_request, "{uri}");
            assert_eq!(summary(&got), s(want), "{method} {uri}");
        }
    }

    #[test]
    fn non_resource_paths() {
        for uri in ["/", "/healthz", "/readyz/ping", "/api", "/api/v1", "/apis", "/apis/apps", "/apis/apps/v1", "/version", "/api/v1/watch"] {
            let got = info(Method::GET, uri);
            assert!(!got.is_resource_request, "{uri}");
            assert_eq!(got.verb, "get");
            assert_eq!(got.path, uri);
        }
    }

    #[test]
    fn decodes_query_values() {
        assert_eq!(percent_decode("a%3Db+c%"), "a=b c%");
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
    }
}
