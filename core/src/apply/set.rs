//! Sets of field paths — what a manager owns — and their FieldsV1 form, the JSON
//! object `metadata.managedFields[].fieldsV1` holds.

use super::path::{Path, PathElement};
use serde_json::{Map, Value};
use std::cmp::Ordering;

/// A set of paths, as a tree: per element (sorted), whether it is a member itself and
/// the set of paths below it. One sorted vector per level: few allocations, and set
/// operations are merges of sorted runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSet {
    /// Never an entry that is neither a member nor has anything below.
    entries: Vec<Entry>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    element: PathElement,
    member: bool,
    below: FieldSet,
}

/// The deepest FieldsV1 nesting read; deeper input is refused rather than recursed.
const MAX_DEPTH: usize = 256;

impl FieldSet {
    pub fn new() -> FieldSet {
        FieldSet::default()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn find(&self, element: &PathElement) -> Result<usize, usize> {
        self.entries.binary_search_by(|e| e.element.cmp(element))
    }

    fn entry_mut(&mut self, element: &PathElement) -> &mut Entry {
        let i = match self.find(element) {
            Ok(i) => i,
            Err(i) => {
                self.entries.insert(
                    i,
                    Entry {
                        element: element.clone(),
                        member: false,
                        below: FieldSet::new(),
                    },
                );
                i
            }
        };
        &mut self.entries[i]
    }

    pub fn insert(&mut self, path: &[PathElement]) {
        match path {
            [] => {}
            [last] => self.entry_mut(last).member = true,
            [first, rest @ ..] => self.entry_mut(first).below.insert(rest),
        }
    }

    pub fn has(&self, path: &[PathElement]) -> bool {
        match path {
            [] => false,
            [last] => self.has_member(last),
            [first, rest @ ..] => self.child(first).is_some_and(|c| c.has(rest)),
        }
    }

    /// Whether `element` itself is a member at this level.
    pub fn has_member(&self, element: &PathElement) -> bool {
        self.find(element).is_ok_and(|i| self.entries[i].member)
    }

    /// The paths below `element`, relative to it.
    pub fn child(&self, element: &PathElement) -> Option<&FieldSet> {
        let i = self.find(element).ok()?;
        let below = &self.entries[i].below;
        (!below.is_empty()).then_some(below)
    }

    pub fn union(&self, other: &FieldSet) -> FieldSet {
        let mut out = self.clone();
        out.add(other);
        out
    }

    /// Add every path of `other` to `self`.
    pub fn add(&mut self, other: &FieldSet) {
        if self.entries.is_empty() {
            self.entries = other.entries.clone();
            return;
        }
        for theirs in &other.entries {
            match self.find(&theirs.element) {
                Ok(i) => {
                    let mine = &mut self.entries[i];
                    mine.member |= theirs.member;
                    mine.below.add(&theirs.below);
                }
                Err(i) => self.entries.insert(i, theirs.clone()),
            }
        }
    }

    /// Walk the entries of `self` and `other` together, keeping what `keep` makes of
    /// each entry of `self` (with `other`'s entry for the same element, if any).
    fn zip(
        &self,
        other: &FieldSet,
        keep: impl Fn(&Entry, Option<&Entry>) -> Option<Entry>,
    ) -> FieldSet {
        let mut entries = Vec::new();
        let mut theirs = other.entries.iter().peekable();
        for mine in &self.entries {
            while theirs.peek().is_some_and(|t| t.element < mine.element) {
                theirs.next();
            }
            let matching = theirs
                .peek()
                .filter(|t| t.element.cmp(&mine.element) == Ordering::Equal);
            if let Some(entry) = keep(mine, matching.copied()) {
                if entry.member || !entry.below.is_empty() {
                    entries.push(entry);
                }
            }
        }
        FieldSet { entries }
    }

    pub fn intersection(&self, other: &FieldSet) -> FieldSet {
        self.zip(other, |mine, theirs| {
            let theirs = theirs?;
            Some(Entry {
                element: mine.element.clone(),
                member: mine.member && theirs.member,
                below: mine.below.intersection(&theirs.below),
            })
        })
    }

    /// The paths of `self` not in `other` (a member of `other` removes only that
    /// path, not what lies below it).
    pub fn difference(&self, other: &FieldSet) -> FieldSet {
        self.zip(other, |mine, theirs| match theirs {
            None => Some(mine.clone()),
            Some(theirs) => Some(Entry {
                element: mine.element.clone(),
                member: mine.member && !theirs.member,
                below: mine.below.difference(&theirs.below),
            }),
        })
    }

    /// The paths of `self` neither in `other` nor below one of its members.
    pub fn recursive_difference(&self, other: &FieldSet) -> FieldSet {
        self.zip(other, |mine, theirs| match theirs {
            None => Some(mine.clone()),
            Some(theirs) if theirs.member => None,
            Some(theirs) => Some(Entry {
                element: mine.element.clone(),
                member: mine.member,
                below: mine.below.recursive_difference(&theirs.below),
            }),
        })
    }

    /// A level built whole: `(element, member, below)` per element, in any order,
    /// elements distinct.
    pub(super) fn from_level(mut level: Vec<(PathElement, bool, FieldSet)>) -> FieldSet {
        level.sort_by(|a, b| a.0.cmp(&b.0));
        let entries = level
            .into_iter()
            .filter(|(_, member, below)| *member || !below.is_empty())
            .map(|(element, member, below)| Entry { element, member, below })
            .collect();
        FieldSet { entries }
    }

    /// Add `below` under `path`, and `path` itself when `member`: one descent where
    /// inserting each path of `below` would make one per path.
    pub(super) fn graft(&mut self, path: &[PathElement], member: bool, below: FieldSet) {
        let Some((last, rest)) = path.split_last() else {
            self.add(&below);
            return;
        };
        if !member && below.is_empty() {
            return;
        }
        let mut level = self;
        for element in rest {
            level = &mut level.entry_mut(element).below;
        }
        let entry = level.entry_mut(last);
        entry.member |= member;
        if entry.below.is_empty() {
            entry.below = below;
        } else {
            entry.below.add(&below);
        }
    }

    /// Remove the paths of `other` from `self` in place: [`FieldSet::difference`], or
    /// with `recursive` [`FieldSet::recursive_difference`], without copying what stays
    /// (every write takes its sets apart this way).
    pub fn remove(&mut self, other: &FieldSet, recursive: bool) {
        if self.entries.is_empty() || other.entries.is_empty() {
            return;
        }
        let mut theirs = other.entries.iter().peekable();
        self.entries.retain_mut(|mine| {
            while theirs.peek().is_some_and(|t| t.element < mine.element) {
                theirs.next();
            }
            let Some(t) = theirs.peek().filter(|t| t.element == mine.element) else {
                return true;
            };
            if recursive && t.member {
                return false;
            }
            if !recursive {
                mine.member &= !t.member;
            }
            mine.below.remove(&t.below, recursive);
            mine.member || !mine.below.is_empty()
        });
    }

    /// `self` with every path of `other` added, taking `other` whole when `self` is
    /// empty.
    pub fn merged(mut self, other: FieldSet) -> FieldSet {
        if self.entries.is_empty() {
            return other;
        }
        self.add(&other);
        self
    }

    /// Every member path, members of a level before the levels below it.
    pub fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        self.collect_paths(&mut Vec::new(), &mut out);
        out
    }

    fn collect_paths(&self, prefix: &mut Vec<PathElement>, out: &mut Vec<Path>) {
        for entry in self.entries.iter().filter(|e| e.member) {
            prefix.push(entry.element.clone());
            out.push(Path(prefix.clone()));
            prefix.pop();
        }
        for entry in &self.entries {
            prefix.push(entry.element.clone());
            entry.below.collect_paths(prefix, out);
            prefix.pop();
        }
    }

    pub(super) fn members(&self) -> impl Iterator<Item = &PathElement> {
        self.entries.iter().filter(|e| e.member).map(|e| &e.element)
    }

    pub(super) fn children(&self) -> impl Iterator<Item = (&PathElement, &FieldSet)> {
        self.entries
            .iter()
            .filter(|e| !e.below.is_empty())
            .map(|e| (&e.element, &e.below))
    }

    pub(super) fn insert_member(&mut self, element: PathElement) {
        self.entry_mut(&element).member = true;
    }

    pub(super) fn set_child(&mut self, element: PathElement, set: FieldSet) {
        if set.is_empty() {
            if let Ok(i) = self.find(&element) {
                self.entries[i].below = set;
                if !self.entries[i].member {
                    self.entries.remove(i);
                }
            }
        } else {
            self.entry_mut(&element).below = set;
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
        for entry in &self.entries {
            out.insert(entry.element.encode(), entry.below.emit(entry.member));
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
            set.insert_member(element.clone());
        }
        if !below.is_empty() {
            set.set_child(element, below);
        }
    }
    let member = is_member || set.is_empty();
    Ok((set, member))
}
