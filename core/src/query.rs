//! Query parameters of a request, decoded once.

use crate::request_info::percent_decode;

/// The decoded query string: the first value of each parameter.
#[derive(Clone, Debug, Default)]
pub struct Query {
    pairs: Vec<(String, String)>,
    /// The query as it came, for requests passed on (proxies).
    raw: String,
}

impl Query {
    pub fn parse(query: Option<&str>) -> Query {
        let pairs = query
            .unwrap_or("")
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (k, v) = p.split_once('=').unwrap_or((p, ""));
                (percent_decode(k), percent_decode(v))
            })
            .collect();
        Query {
            pairs,
            raw: query.unwrap_or("").to_owned(),
        }
    }

    /// The query as it came, undecoded.
    pub fn raw(&self) -> &str {
        &self.raw
    }

    /// The first value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// Every value of `name`, in order (a repeated parameter, such as `dryRun`).
    pub fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.pairs.iter().filter(move |(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// A boolean parameter as Go's strconv.ParseBool reads it; a bare `?pretty` is true.
    pub fn flag(&self, name: &str) -> bool {
        matches!(self.get(name), Some("" | "1" | "t" | "T" | "true" | "TRUE" | "True"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_value_wins_and_values_are_decoded() {
        let q = Query::parse(Some("limit=5&fieldSelector=metadata.name%3Da&limit=7&pretty"));
        assert_eq!(q.get("limit"), Some("5"));
        assert_eq!(q.get("fieldSelector"), Some("metadata.name=a"));
        assert!(q.flag("pretty"));
        assert!(!q.flag("watch"));
    }
}
