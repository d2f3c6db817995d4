//! `pattern`: a Go regular expression ([`crate::regexp`]), compiled on its first use so
//! serving a CRD stays cheap.

use regex::Regex;
use std::sync::OnceLock;

/// A `pattern` keyword.
#[derive(Debug)]
pub(crate) struct Pattern {
    /// As the schema writes it (messages quote it).
    pub source: Box<str>,
    compiled: OnceLock<Result<Regex, String>>,
}

impl Pattern {
    pub fn new(source: &str) -> Pattern {
        Pattern { source: source.into(), compiled: OnceLock::new() }
    }

    /// Whether `text` contains a match; the compile error when the pattern is not one.
    pub fn is_match(&self, text: &str) -> Result<bool, &str> {
        match self.compiled.get_or_init(|| crate::regexp::build(&self.source)) {
            Ok(re) => Ok(re.is_match(text)),
            Err(e) => Err(e),
        }
    }
}
