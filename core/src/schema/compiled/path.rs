//! Where a walk is in an object, kept on the stack and written out only for an error.
//!
//! Upstream writes the same place three ways, and messages must match each:
//! kube-openapi's names (`spec.items[0]`, `spec.labels.key`, and `.key` for a key of the
//! root), apimachinery's `field.Path` (`spec.labels[key]`, `spec.items[0]`), and the
//! pruning's unknown-field paths (`spec.labels.key`, `key` at the root).

use std::fmt::Write as _;

/// One place in an object.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Path<'a> {
    Root,
    /// A declared property.
    Field(&'a Path<'a>, &'a str),
    /// A property matched by `additionalProperties` (or unknown).
    Key(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

/// How a path is written.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    OpenApi,
    Field,
    Unknown,
}

impl<'a> Path<'a> {
    pub fn field(&'a self, name: &'a str) -> Path<'a> {
        Path::Field(self, name)
    }

    pub fn key(&'a self, key: &'a str) -> Path<'a> {
        Path::Key(self, key)
    }

    pub fn index(&'a self, i: usize) -> Path<'a> {
        Path::Index(self, i)
    }

    /// As kube-openapi names it in messages.
    pub fn openapi(&self) -> String {
        self.written(Style::OpenApi)
    }

    /// As apimachinery's `field.Path` prints it.
    pub fn field_path(&self) -> String {
        self.written(Style::Field)
    }

    /// As pruning reports an unknown field.
    pub fn unknown(&self) -> String {
        self.written(Style::Unknown)
    }

    fn written(&self, style: Style) -> String {
        let mut out = String::new();
        self.write(&mut out, style);
        out
    }

    fn write(&self, out: &mut String, style: Style) {
        match *self {
            Path::Root => {}
            Path::Field(parent, name) => {
                parent.write(out, style);
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(name);
            }
            Path::Key(parent, key) => {
                parent.write(out, style);
                match style {
                    Style::OpenApi => {
                        out.push('.');
                        out.push_str(key);
                    }
                    Style::Field => {
                        out.push('[');
                        out.push_str(key);
                        out.push(']');
                    }
                    Style::Unknown => {
                        if !out.is_empty() {
                            out.push('.');
                        }
                        out.push_str(key);
                    }
                }
            }
            Path::Index(parent, i) => {
                parent.write(out, style);
                let _ = write!(out, "[{i}]");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_style_as_upstream_writes_it() {
        let root = Path::Root;
        let spec = root.field("spec");
        let labels = spec.field("labels");
        let key = labels.key("app");
        let items = spec.field("items");
        let item = items.index(2);
        assert_eq!((key.openapi(), key.field_path(), key.unknown()), ("spec.labels.app".into(), "spec.labels[app]".into(), "spec.labels.app".into()));
        assert_eq!(item.openapi(), "spec.items[2]");
        let top = root.key("extra");
        assert_eq!((top.openapi(), top.field_path(), top.unknown()), (".extra".into(), "[extra]".into(), "extra".into()));
    }
}
