//! JSONPath templates in the dialect of client-go's `util/jsonpath`, which
//! kube-apiserver evaluates for a CRD's printer columns (`additionalPrinterColumns`)
//! and selectable fields (`selectableFields`): a path such as `.spec.size` is read as
//! the template `{.spec.size}`, missing keys allowed, and only its first result counts.
//!
//! A template is text with actions in braces; an action walks the data with fields
//! (`.a`, `.*`, `..a`), brackets (`[0]`, `[-1]`, `[1:3]`, `[::2]`, `[*]`, `['a']`,
//! unions `[0,2]`), filters (`[?(@.type=="Ready")]`, `[?(@.x)]`), literals and
//! `{range …}…{end}`. [`parser`] reads it, [`eval`] finds results, [`item`] says how Go
//! prints and compares them.
//!
//! ```
//! # use apiary_core::jsonpath::JsonPath;
//! let path = JsonPath::of_path(".status.conditions[?(@.type==\"Ready\")].status").unwrap();
//! let pod = serde_json::json!({"status": {"conditions": [
//!     {"type": "Scheduled", "status": "True"}, {"type": "Ready", "status": "False"}]}});
//! assert_eq!(path.first(&pod).map(|found| found.text()), Some("False".to_owned()));
//! assert_eq!(JsonPath::parse("{.a[}").unwrap_err().to_string(), "unterminated array");
//! ```

mod eval;
mod item;
mod parser;
#[cfg(test)]
mod tests;

pub use item::Item;

use serde_json::{Map, Value};

/// A parsed template (the empty one by default). Two templates are equal when their
/// text is.
#[derive(Clone, Debug, Default)]
pub struct JsonPath {
    template: String,
    nodes: Vec<parser::Node>,
}

impl PartialEq for JsonPath {
    fn eq(&self, other: &Self) -> bool {
        self.template == other.template
    }
}

impl Eq for JsonPath {}

/// A template that does not parse, with upstream's words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError(String);

/// A template that cannot be evaluated over some data, with upstream's words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvalError(String);

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::fmt::Display for EvalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ParseError {}
impl std::error::Error for EvalError {}

impl JsonPath {
    /// A template: text, with actions in braces.
    pub fn parse(template: &str) -> Result<JsonPath, ParseError> {
        let nodes = parser::parse(template).map_err(ParseError)?;
        Ok(JsonPath { template: template.to_owned(), nodes })
    }

    /// A path as a CRD declares one (`.spec.size`), read as upstream reads it: as the
    /// template `{<path>}`.
    pub fn of_path(path: &str) -> Result<JsonPath, ParseError> {
        JsonPath::parse(&format!("{{{path}}}"))
    }

    /// The template's text.
    pub fn template(&self) -> &str {
        &self.template
    }

    /// What each top-level part of the template finds in `data` (upstream's
    /// `FindResults`); a missing key is an error unless `allow_missing_keys`.
    pub fn find<'a>(&'a self, data: &'a Value, allow_missing_keys: bool) -> Result<Vec<Vec<Item<'a>>>, EvalError> {
        self.find_from(Item::Json(data), allow_missing_keys)
    }

    /// [`JsonPath::find`] over an object.
    pub fn find_in<'a>(
        &'a self,
        object: &'a Map<String, Value>,
        allow_missing_keys: bool,
    ) -> Result<Vec<Vec<Item<'a>>>, EvalError> {
        self.find_from(Item::Object(object), allow_missing_keys)
    }

    fn find_from<'a>(&'a self, data: Item<'a>, allow_missing_keys: bool) -> Result<Vec<Vec<Item<'a>>>, EvalError> {
        eval::Evaluation::new(allow_missing_keys).run(&self.nodes, data).map_err(EvalError)
    }

    /// The template printed over `data` (upstream's `Execute`): each result as Go
    /// prints it, a space between the results of one part.
    pub fn execute(&self, data: &Value, allow_missing_keys: bool) -> Result<String, EvalError> {
        let results = self.find(data, allow_missing_keys)?;
        Ok(results
            .iter()
            .map(|part| part.iter().map(Item::text).collect::<Vec<_>>().join(" "))
            .collect())
    }

    /// The first thing the template finds in `data`, missing keys allowed: what a
    /// printer column or a selectable field shows. `None` when it finds nothing or
    /// fails.
    pub fn first<'a>(&'a self, data: &'a Value) -> Option<Item<'a>> {
        first(self.find(data, true))
    }

    /// [`JsonPath::first`] in an object.
    pub fn first_in<'a>(&'a self, object: &'a Map<String, Value>) -> Option<Item<'a>> {
        first(self.find_in(object, true))
    }
}

fn first<'a>(results: Result<Vec<Vec<Item<'a>>>, EvalError>) -> Option<Item<'a>> {
    results.ok()?.first()?.first().copied()
}

/// What is wrong with a JSON path a CRD declares for a printer column or its scale
/// subresource, as upstream's `validateSimpleJSONPath` words it (the detail of an
/// Invalid value), or `None`. Upstream checks no more than this: a path that passes
/// may still not parse, and then its column and the ones after it are not shown.
pub fn simple_path_problem(path: &str) -> Option<&'static str> {
    match path.as_bytes().first() {
        None => Some("must not be empty"),
        Some(b'.') => None,
        Some(_) => Some("must be a simple json path starting with ."),
    }
}
