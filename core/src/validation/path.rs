//! Field paths as kube-apiserver writes them in field errors (apimachinery's
//! `field.Path`): `spec.versions[0].schema`, `properties[spec]`.

use std::fmt;

/// A path to a field of an object; the empty path is the object itself.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FieldPath(String);

impl FieldPath {
    /// A path of one field.
    pub fn new(name: &str) -> FieldPath {
        FieldPath(name.to_owned())
    }

    /// The field `name` of this one (`a.name`, or `name` from the empty path).
    pub fn child(&self, name: &str) -> FieldPath {
        if self.0.is_empty() {
            FieldPath(name.to_owned())
        } else {
            FieldPath(format!("{}.{name}", self.0))
        }
    }

    /// The entry `key` of this map (`a[key]`).
    pub fn key(&self, key: &str) -> FieldPath {
        FieldPath(format!("{}[{key}]", self.0))
    }

    /// The item `i` of this list (`a[i]`).
    pub fn index(&self, i: usize) -> FieldPath {
        FieldPath(format!("{}[{i}]", self.0))
    }

    /// The first field of the path (`spec` of `spec.names`).
    pub fn root(&self) -> &str {
        let end = self.0.find(['.', '[']).unwrap_or(self.0.len());
        &self.0[..end]
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_read_like_go_field_paths() {
        let p = FieldPath::new("spec").child("versions").index(0).child("schema");
        assert_eq!(p.as_str(), "spec.versions[0].schema");
        assert_eq!(p.key("spec").as_str(), "spec.versions[0].schema[spec]");
        assert_eq!(FieldPath::default().child("type").as_str(), "type");
        assert_eq!(FieldPath::default().key("a").as_str(), "[a]");
        assert_eq!(FieldPath::new("metadata").child("name").root(), "metadata");
    }
}
