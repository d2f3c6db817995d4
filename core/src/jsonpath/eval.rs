//! Evaluation of parsed templates over JSON, as client-go's `JSONPath.FindResults`:
//! each top-level node gives one list of results; `{range …}…{end}` repeats the nodes
//! between them once per item.
//!
//! Upstream keeps its range bookkeeping in the JSONPath value itself (and rewrites the
//! parsed nodes while it loops), so a template shared by many rows can change between
//! them; here every evaluation starts afresh and gives what upstream's first one gives.
//! Maps are walked in key order (Go's order is random). Work is bounded: an evaluation
//! that would produce more than [`BUDGET`] values, or nest ranges deeper than
//! [`MAX_RANGES`], stops with an error, where upstream would run on.

use super::item::{compare, Item};
use super::parser::{Node, Param};
use serde_json::Value;

/// The most values one evaluation may produce.
const BUDGET: usize = 1_000_000;
/// The most ranges one evaluation may be inside at once.
const MAX_RANGES: usize = 32;

/// The state of one evaluation.
pub(super) struct Evaluation {
    /// Whether a missing key yields nothing rather than an error.
    allow_missing_keys: bool,
    /// What may still be produced.
    budget: usize,
    /// What the identifiers of the node being walked asked for.
    saw_range: bool,
    saw_end: bool,
}

/// Where a run of top-level nodes stopped.
#[derive(Debug)]
enum Stop {
    /// At the end of the template.
    End,
    /// At an `{end}`: the index of its node.
    RangeEnd(usize),
}

impl Evaluation {
    pub(super) fn new(allow_missing_keys: bool) -> Evaluation {
        Evaluation { allow_missing_keys, budget: BUDGET, saw_range: false, saw_end: false }
    }

    /// The results of each top-level node of `nodes` over `data`.
    pub(super) fn run<'a>(&mut self, nodes: &'a [Node], data: Item<'a>) -> Result<Vec<Vec<Item<'a>>>, String> {
        let mut results = Vec::new();
        self.nodes(nodes, data, 0, &mut results)?;
        Ok(results)
    }

    fn nodes<'a>(
        &mut self,
        nodes: &'a [Node],
        data: Item<'a>,
        ranges: usize,
        out: &mut Vec<Vec<Item<'a>>>,
    ) -> Result<Stop, String> {
        let mut i = 0;
        while i < nodes.len() {
            self.saw_range = false;
            self.saw_end = false;
            let results = self.walk(vec![data], &nodes[i])?;
            if self.saw_end {
                if ranges == 0 {
                    return Err("not in range, nothing to end".to_owned());
                }
                return Ok(Stop::RangeEnd(i));
            }
            if !self.saw_range {
                out.push(results);
                i += 1;
                continue;
            }
            if ranges >= MAX_RANGES {
                return Err("jsonpath ranges nested too deeply".to_owned());
            }
            let body = &nodes[i + 1..];
            // Upstream walks an empty range once over nothing, to find its end.
            let mut stop = Stop::End;
            if results.is_empty() {
                stop = self.nodes(body, Item::Json(&Value::Null), ranges + 1, &mut Vec::new())?;
            }
            for item in results {
                self.spend(1)?;
                stop = self.nodes(body, item, ranges + 1, out)?;
            }
            match stop {
                Stop::RangeEnd(end) => i += 1 + end + 1,
                // Without an `{end}`, upstream goes on after the range's own node.
                Stop::End => i += 1,
            }
        }
        Ok(Stop::End)
    }

    fn spend(&mut self, n: usize) -> Result<(), String> {
        self.budget = self.budget.checked_sub(n).ok_or("jsonpath evaluation too large")?;
        Ok(())
    }

    fn walk<'a>(&mut self, input: Vec<Item<'a>>, node: &'a Node) -> Result<Vec<Item<'a>>, String> {
        let out = match node {
            Node::List(nodes) => self.list(input, nodes)?,
            Node::Text(text) => vec![Item::Text(text)],
            Node::Int(i) => vec![Item::Int(*i); input.len()],
            Node::Float(f) => vec![Item::Float(*f); input.len()],
            Node::Bool(b) => vec![Item::Bool(*b); input.len()],
            Node::Field(name) => self.field(input, name)?,
            Node::Array(params) => array(input, params)?,
            Node::Filter { left, right, operator } => self.filter(input, left, right, operator)?,
            Node::Wildcard => input.iter().flat_map(children).collect(),
            Node::Recursive => recursive(&input),
            Node::Union(members) => {
                let mut out = Vec::new();
                for member in members {
                    out.extend(self.list(input.clone(), member)?);
                }
                out
            }
            Node::Identifier(name) => match name.as_str() {
                "range" => {
                    self.saw_range = true;
                    input
                }
                "end" => {
                    self.saw_end = true;
                    Vec::new()
                }
                other => return Err(format!("unrecognized identifier {other}")),
            },
        };
        self.spend(out.len())?;
        Ok(out)
    }

    fn list<'a>(&mut self, input: Vec<Item<'a>>, nodes: &'a [Node]) -> Result<Vec<Item<'a>>, String> {
        nodes.iter().try_fold(input, |values, node| self.walk(values, node))
    }

    fn field<'a>(&mut self, input: Vec<Item<'a>>, name: &str) -> Result<Vec<Item<'a>>, String> {
        if input.is_empty() {
            return Ok(input);
        }
        let found: Vec<Item<'a>> = input
            .iter()
            .filter_map(|item| item.as_map()?.get(name).map(Item::Json))
            .collect();
        if found.is_empty() && !self.allow_missing_keys {
            return Err(format!("{name} is not found"));
        }
        Ok(found)
    }

    fn filter<'a>(
        &mut self,
        input: Vec<Item<'a>>,
        left: &'a [Node],
        right: &'a [Node],
        operator: &str,
    ) -> Result<Vec<Item<'a>>, String> {
        let mut out = Vec::new();
        for value in input {
            let Item::Json(Value::Array(items)) = value else {
                let shown = match value {
                    Item::Json(Value::Null) => "<nil>".to_owned(),
                    other => other.sprint(),
                };
                return Err(format!("{shown} is not array or slice and cannot be filtered"));
            };
            for item in items {
                if operator == "exists" {
                    if self.exists(Item::Json(item), left) {
                        out.push(Item::Json(item));
                    }
                    continue;
                }
                let Some(l) = single(self.list(vec![Item::Json(item)], left)?)? else { continue };
                let Some(r) = single(self.list(vec![Item::Json(item)], right)?)? else { continue };
                if compare(&l, operator, &r)? {
                    out.push(Item::Json(item));
                }
            }
        }
        Ok(out)
    }
}

impl Evaluation {
    /// Whether `[?(left)]` keeps `item`: whether the left side found anything. Upstream
    /// ignores an error here but keeps what the failing step was given, unless that
    /// step was a field (a missing key gives nothing).
    fn exists<'a>(&mut self, item: Item<'a>, left: &'a [Node]) -> bool {
        let mut values = vec![item];
        for node in left {
            match self.walk(values.clone(), node) {
                Ok(found) => values = found,
                Err(_) => return !matches!(node, Node::Field(_)) && !values.is_empty(),
            }
        }
        !values.is_empty()
    }
}

/// The one value a side of a comparison found, none, or upstream's error for more.
fn single(values: Vec<Item<'_>>) -> Result<Option<Item<'_>>, String> {
    match values.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(*one)),
        _ => Err("can only compare one element at a time".to_owned()),
    }
}

/// What `*` finds in `item`: a map's values, a list's items, a string's bytes.
fn children<'a>(item: &Item<'a>) -> Vec<Item<'a>> {
    let text = match *item {
        Item::Json(Value::String(s)) => s.as_str(),
        Item::Text(s) => s,
        _ => "",
    };
    match *item {
        Item::Json(Value::Object(map)) | Item::Object(map) => map.values().map(Item::Json).collect(),
        Item::Json(Value::Array(items)) => items.iter().map(Item::Json).collect(),
        _ if !text.is_empty() => text.bytes().map(Item::Byte).collect(),
        _ => Vec::new(),
    }
}

/// What `..` finds: every value that has children (maps, lists, non-empty strings),
/// each before what it holds.
fn recursive<'a>(input: &[Item<'a>]) -> Vec<Item<'a>> {
    let mut out = Vec::new();
    let mut stack: Vec<Item<'a>> = input.iter().rev().copied().collect();
    while let Some(item) = stack.pop() {
        let inner = children(&item);
        if !inner.is_empty() {
            out.push(item);
            stack.extend(inner.into_iter().rev());
        }
    }
    out
}

/// `[start:end:step]` over each list of `input`, with upstream's bounds checks.
fn array<'a>(input: Vec<Item<'a>>, params: &[Param; 3]) -> Result<Vec<Item<'a>>, String> {
    let mut out = Vec::new();
    for value in input {
        let items = match value {
            Item::Json(Value::Null) => continue,
            Item::Json(Value::Array(items)) => items,
            other => return Err(format!("{} is not array or slice", other.type_name())),
        };
        let len = items.len() as i64;
        let [mut start, mut end, step] = *params;
        if !start.known {
            start.value = 0;
        }
        if start.value < 0 {
            start.value = start.value.wrapping_add(len);
        }
        if !end.known {
            end.value = len;
        }
        if end.value < 0 || (end.value == 0 && end.derived) {
            end.value = end.value.wrapping_add(len);
        }
        let (start, end) = (start.value, end.value);
        if start == end {
            // Upstream answers an empty slice with what it found so far, skipping the
            // rest of the input.
            return Ok(out);
        }
        if start >= len || start < 0 {
            return Err(format!("array index out of bounds: index {start}, length {len}"));
        }
        if end > len || end < 0 {
            return Err(format!("array index out of bounds: index {}, length {len}", end.wrapping_sub(1)));
        }
        if start > end {
            return Err(format!("starting index {start} is greater than ending index {end}"));
        }
        let step = match step {
            Param { known: true, value, .. } if value <= 0 => return Err("step must be > 0".to_owned()),
            Param { known: true, value, .. } => usize::try_from(value).unwrap_or(usize::MAX),
            _ => 1,
        };
        out.extend(items[start as usize..end as usize].iter().step_by(step).map(Item::Json));
    }
    Ok(out)
}
