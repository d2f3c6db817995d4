//! The labels kube-apiserver gives a request in its metrics: those of
//! `apiserver_request_total` and its kin ([`classify`]), and those of a request the
//! server ended in self-defense ([`termination_labels`]). Apart from the metrics
//! themselves so that what counts requests (the in-flight limits) can label them
//! without depending on the registry that reports them.

/// Upstream's component label of requests served by the API server.
pub const COMPONENT: &str = "apiserver";

/// The labels of a resource request, as upstream reports them.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct RequestLabels {
    /// GET, LIST, WATCH, POST, PUT, PATCH, APPLY, DELETE.
    pub verb: String,
    /// `All` for a dry run, empty otherwise.
    pub dry_run: String,
    pub group: String,
    pub version: String,
    pub resource: String,
    pub subresource: String,
    /// `resource`, `namespace` or `cluster`.
    pub scope: String,
    pub component: String,
}

/// A request the metrics follow from its start to its end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tracked {
    /// `None` for non-resource requests, which upstream does not count here.
    pub labels: Option<RequestLabels>,
    /// `readOnly` or `mutating`; `None` for long-running requests (watches), which the
    /// in-flight count leaves out as upstream's max-in-flight filter does.
    pub request_kind: Option<&'static str>,
    /// The group, version and kind of a watch's objects, for `apiserver_registered_watchers`.
    pub watch_kind: Option<(String, String, String)>,
}

impl Tracked {
    /// Whether the request is long-running (a watch).
    pub fn is_long_running(&self) -> bool {
        self.request_kind.is_none()
    }
}

/// The metric labels of a request: upstream's `CleanScope`, `CanonicalVerb` and
/// `CleanVerb`, and `cleanDryRun`.
pub fn classify(
    method: &http::Method,
    path: &str,
    query: Option<&str>,
    content_type: Option<&str>,
) -> Tracked {
    let info = crate::request_info::resolve(method, path, query);
    track(&info, method, query, content_type)
}

/// [`classify`] for a request whose [`crate::request_info::RequestInfo`] is known.
pub fn track(
    info: &crate::request_info::RequestInfo,
    method: &http::Method,
    query: Option<&str>,
    content_type: Option<&str>,
) -> Tracked {
    let long_running = info.verb == "watch";
    let request_kind =
        (!long_running).then_some(if matches!(info.verb.as_str(), "get" | "list" | "watch") {
            "readOnly"
        } else {
            "mutating"
        });
    if !info.is_resource_request {
        return Tracked {
            labels: None,
            request_kind,
            watch_kind: None,
        };
    }
    let scope = if !info.name.is_empty() || info.verb == "create" {
        "resource"
    } else if !info.namespace.is_empty() {
        "namespace"
    } else {
        "cluster"
    };
    let method = method.as_str().to_ascii_uppercase();
    let mut verb = match method.as_str() {
        "GET" | "HEAD" if scope != "resource" => "LIST".to_owned(),
        "GET" | "HEAD" => "GET".to_owned(),
        _ => method,
    };
    if info.verb == "watch" {
        verb = "WATCH".to_owned();
    }
    if verb == "PATCH"
        && content_type.is_some_and(|t| t.trim().starts_with("application/apply-patch"))
    {
        verb = "APPLY".to_owned();
    }
    let mut dry_run: Vec<String> = query
        .unwrap_or("")
        .split('&')
        .filter_map(|p| p.strip_prefix("dryRun="))
        .map(crate::request_info::percent_decode)
        .filter(|v| !v.is_empty())
        .collect();
    dry_run.sort();
    dry_run.dedup();
    Tracked {
        labels: Some(RequestLabels {
            verb,
            dry_run: dry_run.join(","),
            group: info.api_group.clone(),
            version: info.api_version.clone(),
            resource: info.resource.clone(),
            subresource: info.subresource.clone(),
            scope: scope.to_owned(),
            component: COMPONENT.to_owned(),
        }),
        request_kind,
        watch_kind: None,
    }
}

/// The verbs upstream reports; any other is reported as `other`.
const VALID_VERBS: [&str; 14] = [
    "APPLY",
    "CONNECT",
    "CREATE",
    "DELETE",
    "DELETECOLLECTION",
    "GET",
    "LIST",
    "PATCH",
    "POST",
    "PROXY",
    "PUT",
    "UPDATE",
    "WATCH",
    "WATCHLIST",
];

/// The labels upstream's `RecordRequestTermination` gives a request the server ended in
/// self-defense (`apiserver_request_terminations_total`): those of [`classify`] without
/// `dry_run`; a non-resource request has no group, version or resource, its path as the
/// subresource and an empty scope. A verb upstream does not know is `other`.
pub fn termination_labels(
    method: &http::Method,
    path: &str,
    query: Option<&str>,
    content_type: Option<&str>,
) -> RequestLabels {
    let mut labels = match classify(method, path, query, content_type).labels {
        Some(labels) => RequestLabels {
            dry_run: String::new(),
            ..labels
        },
        None => {
            let info = crate::request_info::resolve(method, path, query);
            let verb = match method.as_str().to_ascii_uppercase().as_str() {
                "GET" | "HEAD" if info.verb == "watch" => "WATCH".to_owned(),
                "GET" | "HEAD" => "GET".to_owned(),
                "PATCH"
                    if content_type
                        .is_some_and(|t| t.trim().starts_with("application/apply-patch")) =>
                {
                    "APPLY".to_owned()
                }
                other => other.to_owned(),
            };
            RequestLabels {
                verb,
                subresource: path.to_owned(),
                component: COMPONENT.to_owned(),
                ..RequestLabels::default()
            }
        }
    };
    if !VALID_VERBS.contains(&labels.verb.as_str()) {
        labels.verb = "other".to_owned();
    }
    labels
}
