//! The query of a `pods/{name}/log` request read as upstream reads a PodLogOptions
//! from URL parameters, and checked as its `ValidatePodLogOptions` checks it (with the
//! PodLogsQuerySplitStreams gate off, as in v1.33).
//!
//! Reading follows upstream's parameter conversion: the first value of a parameter
//! counts; a boolean is true unless it is `0` or `false` (any case); a number that does
//! not read fails the request with Go's `strconv.ParseInt` words (400); an empty value
//! leaves a number unset but `sinceTime` set (to the zero time).

use crate::query::Query;
use crate::schema::go_quote;
use crate::status::ApiError;
use crate::validation::{value::invalid_int, FieldError, FieldPath};

/// What a log request asks for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodLogOptions {
    pub container: String,
    pub follow: bool,
    pub previous: bool,
    pub timestamps: bool,
    pub since_seconds: Option<i64>,
    /// As given (RFC 3339); empty for the zero time.
    pub since_time: Option<String>,
    pub tail_lines: Option<i64>,
    pub limit_bytes: Option<i64>,
    pub insecure_skip_tls_verify_backend: bool,
    pub stream: Option<String>,
}

impl PodLogOptions {
    /// The options of `query`, or the 400 upstream answers for one that does not read.
    pub fn parse(query: &Query) -> Result<PodLogOptions, ApiError> {
        let flag = |name: &str| query.get(name).is_some_and(|v| v != "0" && !v.eq_ignore_ascii_case("false"));
        let since_time = match query.get("sinceTime") {
            Some(t) if !t.is_empty() && t != "null" && crate::time::parse_go_rfc3339(t).is_none() => {
                // Go names the first layout element that failed; this names the year.
                let why = format!("parsing time {} as \"2006-01-02T15:04:05Z07:00\": cannot parse {} as \"2006\"", go_quote(t), go_quote(t));
                return Err(ApiError::bad_request(why));
            }
            Some("null") => Some(String::new()),
            other => other.map(str::to_owned),
        };
        Ok(PodLogOptions {
            container: query.get("container").unwrap_or("").to_owned(),
            follow: flag("follow"),
            previous: flag("previous"),
            timestamps: flag("timestamps"),
            since_seconds: number(query, "sinceSeconds")?,
            since_time,
            tail_lines: number(query, "tailLines")?,
            limit_bytes: number(query, "limitBytes")?,
            insecure_skip_tls_verify_backend: flag("insecureSkipTLSVerifyBackend"),
            stream: query.get("stream").map(str::to_owned),
        })
    }

    /// Upstream's checks of the options: the errors of a 422 about `PodLogOptions`.
    pub fn validate(&self) -> Vec<FieldError> {
        let mut errs = Vec::new();
        if let Some(n) = self.tail_lines.filter(|n| *n < 0) {
            errs.push(invalid_int(&FieldPath::new("tailLines"), n, "must be greater than or equal to 0"));
        }
        if let Some(n) = self.limit_bytes.filter(|n| *n < 1) {
            errs.push(invalid_int(&FieldPath::new("limitBytes"), n, "must be greater than 0"));
        }
        match (self.since_seconds, &self.since_time) {
            (Some(_), Some(_)) => {
                errs.push(FieldError::forbidden("[]", "at most one of `sinceTime` or `sinceSeconds` may be specified"));
            }
            (Some(n), None) if n < 1 => {
                errs.push(invalid_int(&FieldPath::new("sinceSeconds"), n, "must be greater than 0"));
            }
            _ => {}
        }
        if self.stream.is_some() {
            // Choosing a stream needs the PodLogsQuerySplitStreams gate, off in v1.33.
            errs.push(FieldError::forbidden("stream", "may not be specified"));
        }
        errs
    }

    /// The query a kubelet's `/containerLogs` is asked with.
    pub fn kubelet_query(&self) -> String {
        let mut pairs: Vec<(&str, String)> = Vec::new();
        for (name, on) in [("follow", self.follow), ("previous", self.previous), ("timestamps", self.timestamps)] {
            if on {
                pairs.push((name, "true".to_owned()));
            }
        }
        if let Some(n) = self.since_seconds {
            pairs.push(("sinceSeconds", n.to_string()));
        }
        if let Some(t) = self.since_time.as_ref().filter(|t| !t.is_empty()) {
            pairs.push(("sinceTime", t.clone()));
        }
        if let Some(n) = self.tail_lines {
            pairs.push(("tailLines", n.to_string()));
        }
        if let Some(n) = self.limit_bytes {
            pairs.push(("limitBytes", n.to_string()));
        }
        // Go's url.Values encodes its keys sorted.
        pairs.sort_by(|a, b| a.0.cmp(b.0));
        pairs
            .iter()
            .map(|(k, v)| format!("{k}={}", super::reach::query_escape(v)))
            .collect::<Vec<_>>()
            .join("&")
    }
}

/// A whole number parameter: unset when absent or empty, else Go's ParseInt.
fn number(query: &Query, name: &str) -> Result<Option<i64>, ApiError> {
    let Some(text) = query.get(name).filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    match text.parse::<i64>() {
        Ok(n) => Ok(Some(n)),
        Err(_) => {
            let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
            let why = if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                "value out of range"
            } else {
                "invalid syntax"
            };
            Err(ApiError::bad_request(format!("strconv.ParseInt: parsing {}: {why}", go_quote(text))))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(q: &str) -> Result<PodLogOptions, ApiError> {
        PodLogOptions::parse(&Query::parse(Some(q)))
    }

    #[test]
    fn parameters_read_as_upstreams_conversion_reads_them() {
        let o = parse("container=c&follow=yes&previous=FALSE&timestamps=0&tailLines=5&limitBytes=").unwrap();
        assert_eq!((o.container.as_str(), o.follow, o.previous, o.timestamps), ("c", true, false, false));
        assert_eq!((o.tail_lines, o.limit_bytes), (Some(5), None));
        assert_eq!(parse("tailLines=abc").unwrap_err().message, "strconv.ParseInt: parsing \"abc\": invalid syntax");
        assert_eq!(
            parse("sinceSeconds=99999999999999999999").unwrap_err().message,
            "strconv.ParseInt: parsing \"99999999999999999999\": value out of range"
        );
        assert_eq!(parse("sinceTime=").unwrap().since_time.as_deref(), Some(""));
        assert!(parse("sinceTime=2026-01-02T03:04:05Z").is_ok());
        assert_eq!(parse("sinceTime=x").unwrap_err().code, 400);
    }

    #[test]
    fn checks_as_upstream() {
        let errs = |q: &str| parse(q).unwrap().validate().iter().map(|e| e.to_string()).collect::<Vec<_>>();
        assert!(errs("tailLines=0&limitBytes=1&sinceSeconds=1").is_empty());
        assert_eq!(errs("tailLines=-1"), ["tailLines: Invalid value: -1: must be greater than or equal to 0"]);
        assert_eq!(errs("limitBytes=0"), ["limitBytes: Invalid value: 0: must be greater than 0"]);
        assert_eq!(errs("sinceSeconds=0"), ["sinceSeconds: Invalid value: 0: must be greater than 0"]);
        assert_eq!(
            errs("sinceSeconds=0&sinceTime=2026-01-02T03:04:05Z"),
            ["[]: Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified"]
        );
        assert_eq!(errs("stream=All"), ["stream: Forbidden: may not be specified"]);
    }

    #[test]
    fn the_kubelet_is_asked_with_sorted_parameters() {
        let o = parse("tailLines=3&follow=1&sinceTime=2026-01-02T03:04:05Z").unwrap();
        assert_eq!(o.kubelet_query(), "follow=true&sinceTime=2026-01-02T03%3A04%3A05Z&tailLines=3");
    }
}
