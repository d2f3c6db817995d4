//! Sets of field paths — what a manager owns — and their FieldsV1 form, the JSON
//! object `metadata.managedFields[].fieldsV1` holds.

use super::path::{Path, PathElement};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// A set of paths, as a tree: the elements that are members at this level, and the
/// sets below each element that has members further down.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSet {
    members: BTreeSet<PathElement>,
    children: BTreeMap<PathElement, FieldSet>,
}

/// The deepest FieldsV1 nesting read; deeper input is refused rather than recursed.
const MAX_DEPTH: usize = 256;

impl FieldSet {
    pub fn new() -> FieldSet {
        FieldSet::default()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.is_empty()
    }

    pub fn insert(&mut self, path: &[PathElement]) {
        match path {
            [] => {}
            [last] => {
                self.members.insert(last.clone());
            }
            [first, rest @ ..] => self.children.entry(first.clone()).or_default().insert(rest),
        }
    }

    pub fn has(&self, path: &[PathElement]) -> bool {
        match path {
            [] => false,
            [last] => self.members.contains(last),
            [first, rest @ ..] => self.children.get(first).is_some_and(|c| c.has(rest)),
        }
    }

    /// Whether `element` itself is a member at this level.
    pub fn has_member(&self, element: &PathElement) -> bool {
        self.members.contains(element)
    }

    /// The paths below `element`, relative to it.
    pub fn child(&self, element: &PathElement) -> Option<&FieldSet> {
        self.children.get(element)
    }

    pub fn union(&self, other: &FieldSet) -> FieldSet {
        let mut out = self.clone();
        out.members.extend(other.members.iter().cloned());
        for (element, set) in &other.children {
            let merged = match out.children.get(element) {
                Some(mine) => mine.union(set),
                None => set.clone(),
            };
            out.children.insert(element.clone(), merged);
        }
        out
    }

    pub fn intersection(&self, other: &FieldSet) -> FieldSet {
        let members = self.members.intersection(&other.members).cloned().collect();
        let children = self
            .children
            .iter()
            .filter_map(|(element, mine)| {
                let common = mine.intersection(other.children.get(element)?);
                (!common.is_empty()).then(|| (element.clone(), common))
            })
            .collect();
        FieldSet { members, children }
    }

    /// The paths of `self` not in `other` (a member of `other` removes only that
    /// path, not what lies below it).
    pub fn difference(&self, other: &FieldSet) -> FieldSet {
        let members = self.members.difference(&other.members).cloned().collect();
        let children = self
            .children
            .iter()
            .filter_map(|(element, mine)| {
                let left = match other.children.get(element) {
                    Some(theirs) => mine.difference(theirs),
                    None => mine.clone(),
                };
                (!left.is_empty()).then(|| (element.clone(), left))
            })
            .collect();
        FieldSet { members, children }
    }

    /// The paths of `self` neither in `other` nor below one of its members.
    pub fn recursive_difference(&self, other: &FieldSet) -> FieldSet {
        let members = self.members.difference(&other.members).cloned().collect();
        let children = self
            .children
            .iter()
            .filter(|(element, _)| !other.members.contains(element))
            .filter_map(|(element, mine)| {
                let left = match other.children.get(element) {
                    Some(theirs) => mine.recursive_difference(theirs),
                    None => mine.clone(),
                };
                (!left.is_empty()).then(|| (element.clone(), left))
            })
            .collect();
        FieldSet { members, children }
    }

    /// Every member path, members of a level before the levels below it.
    pub fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        self.collect_paths(&mut Vec::new(), &mut out);
        out
    }

    fn collect_paths(&self, prefix: &mut Vec<PathElement>, out: &mut Vec<Path>) {
        for member in &self.members {
            prefix.push(member.clone());
            out.push(Path(prefix.clone()));
            prefix.pop();
        }
        for (element, set) in &self.children {
            prefix.push(element.clone());
            set.collect_paths(prefix, out);
            prefix.pop();
        }
    }

    pub(super) fn members(&self) -> impl Iterator<Item = &PathElement> {
        self.members.iter()
    }

    pub(super) fn children(&self) -> impl Iterator<Item = (&PathElement, &FieldSet)> {
        self.children.iter()
    }

    pub(super) fn insert_member(&mut self, element: PathElement) {
        self.members.insert(element);
    }

    pub(super) fn set_child(&mut self, element: PathElement, set: FieldSet) {
        if set.is_empty() {
            self.children.remove(&element);
        } else {
            self.children.insert(element, set);
        }
    }

    /// The FieldsV1 object: each element a key, `{}` for a member, its set for a
    /// child, and `".": {}` in a child that is also a member.
    pub fn to_fields_v1(&self) -> Value {
        self.emit(false)
    }

    fn emit(&self, include_self: bool) -> Value {
        let mut out = Map::new();
        if include_self && !self.is_empty() {
            out.insert(".".into(), Value::Object(Map::new()));
        }
        for member in &self.members {
            if !self.children.contains_key(member) {
                out.insert(member.encode(), Value::Object(Map::new()));
            }
        }
        for (element, set) in &self.children {
            out.insert(element.encode(), set.emit(self.members.contains(element)));
        }
        Value::Object(out)
    }

    /// Read a FieldsV1 object. Keys of unknown element kinds are skipped, as upstream
    /// skips them; anything else malformed is an error.
    pub fn from_fields_v1(fields: &Value) -> Result<FieldSet, String> {
        let (set, _) = read(fields, 0)?;
        Ok(set)
    }
}

/// The set a FieldsV1 object describes, and whether the object marks its own path a
/// member (`"."`, or no children at all).
fn read(fields: &Value, depth: usize) -> Result<(FieldSet, bool), String> {
    if depth > MAX_DEPTH {
        return Err("fieldsV1 is nested too deeply".into());
    }
    let Value::Object(map) = fields else {
        return Err("fieldsV1 must be a JSON object".into());
    };
    let mut set = FieldSet::new();
    let mut is_member = false;
    for (key, value) in map {
        if key == "." {
            is_member = true;
            continue;
        }
        let element = match PathElement::decode(key) {
            Some(Some(element)) => element,
            Some(None) => continue,
            None => return Err(format!("parsing key as path element: {key}")),
        };
        let (below, member) = read(value, depth + 1)?;
        if member {
            set.members.insert(element.clone());
        }
        if !below.is_empty() {
            set.children.insert(element, below);
        }
    }
    let member = is_member || set.is_empty();
    Ok((set, member))
}
