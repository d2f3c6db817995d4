//! The functions of Kubernetes' CEL environment for CRD rules, declared once: each
//! overload's signature (for the checker), its implementation (for the evaluator)
//! and its id (which the cost rules key on, as cel-go's overload ids).
//!
//! One file per library, as Kubernetes enables them: the standard library, the
//! `strings` extension (version 2), `sets`, optional values, and Kubernetes' own
//! lists, regex, URLs, quantities, IPs and CIDRs, and named formats.

mod format;
mod lists;
mod net;
mod optional;
mod quantity;
mod regex;
mod sets;
mod standard;
mod strings;
mod urls;

pub use format::FormatDef;
pub use net::Cidr;
pub(crate) use quantity::suffix_scale;
pub use quantity::Quantity;
pub use regex::compile_regex;
pub use standard::format_g;
pub use urls::Url;

use super::types::Type;
use super::value::Value;
use std::collections::HashMap;
use std::sync::OnceLock;

/// An overload's implementation over its evaluated arguments (receiver first).
pub type Imp = for<'a> fn(&[Value<'a>]) -> Value<'a>;

#[derive(Debug)]
pub struct Overload {
    pub id: &'static str,
    /// Called as `receiver.function(args)` rather than `function(receiver, args)`.
    pub member: bool,
    /// Parameter types, the receiver first; `A`, `B`, ... are type parameters.
    pub params: Vec<Type>,
    pub result: Type,
    /// `None` for the operators the evaluator implements itself (short-circuiting).
    pub imp: Option<Imp>,
}

#[derive(Debug, Default)]
pub struct Function {
    pub name: &'static str,
    pub overloads: Vec<Overload>,
}

/// Every declared function, by name.
#[derive(Debug, Default)]
pub struct Library {
    functions: HashMap<&'static str, Function>,
}

impl Library {
    /// The environment of CRD validation rules, built on first use.
    pub fn get() -> &'static Library {
        static LIBRARY: OnceLock<Library> = OnceLock::new();
        LIBRARY.get_or_init(|| {
            let mut lib = Library::default();
            standard::register(&mut lib);
            strings::register(&mut lib);
            lists::register(&mut lib);
            regex::register(&mut lib);
            urls::register(&mut lib);
            quantity::register(&mut lib);
            net::register(&mut lib);
            format::register(&mut lib);
            optional::register(&mut lib);
            sets::register(&mut lib);
            lib
        })
    }

    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions.get(name)
    }

    fn add(&mut self, name: &'static str, overload: Overload) {
        self.functions
            .entry(name)
            .or_insert_with(|| Function {
                name,
                overloads: Vec::new(),
            })
            .overloads
            .push(overload);
    }

    /// Declare `name(params) -> result`.
    pub(super) fn global(&mut self, name: &'static str, id: &'static str, params: Vec<Type>, result: Type, imp: Imp) {
        self.add(
            name,
            Overload {
                id,
                member: false,
                params,
                result,
                imp: Some(imp),
            },
        );
    }

    /// Declare `receiver.name(params) -> result` (`params` starts with the receiver).
    pub(super) fn member(&mut self, name: &'static str, id: &'static str, params: Vec<Type>, result: Type, imp: Imp) {
        self.add(
            name,
            Overload {
                id,
                member: true,
                params,
                result,
                imp: Some(imp),
            },
        );
    }

    /// Declare an operator the evaluator implements itself.
    pub(super) fn special(&mut self, name: &'static str, id: &'static str, member: bool, params: Vec<Type>, result: Type) {
        self.add(
            name,
            Overload {
                id,
                member,
                params,
                result,
                imp: None,
            },
        );
    }
}

/// Whether an evaluated argument can be passed where `t` is declared: the runtime
/// half of overload resolution, for arguments the checker only knew as `dyn`.
pub fn value_matches(v: &Value, t: &Type) -> bool {
    match t {
        Type::Dyn | Type::Param(_) | Type::Error => true,
        Type::Null => matches!(v, Value::Null),
        Type::Bool => matches!(v, Value::Bool(_)),
        Type::Int => matches!(v, Value::Int(_)),
        Type::Uint => matches!(v, Value::Uint(_)),
        Type::Double => matches!(v, Value::Double(_)),
        Type::String => matches!(v, Value::String(_)),
        Type::Bytes => matches!(v, Value::Bytes(_)),
        Type::Duration => matches!(v, Value::Duration(_)),
        Type::Timestamp => matches!(v, Value::Timestamp(_)),
        Type::List(elem) => match v {
            Value::List(l) => match **elem {
                // An element type decides between overloads (`[1].sum()` vs
                // `[1.0].sum()`): look at the first element.
                Type::Dyn | Type::Param(_) => true,
                ref e => l.is_empty() || value_matches(&l.get(0), e),
            },
            _ => false,
        },
        Type::Map(..) => matches!(v, Value::Map(_)),
        Type::Object(name) => match name.as_str() {
            "kubernetes.Quantity" => matches!(v, Value::Quantity(_)),
            "kubernetes.URL" => matches!(v, Value::Url(_)),
            "kubernetes.NamedFormat" => matches!(v, Value::Format(_)),
            _ => matches!(v, Value::Map(_)),
        },
        Type::Opaque(name, _) => match name.as_str() {
            "net.IP" => matches!(v, Value::Ip(_)),
            "net.CIDR" => matches!(v, Value::Cidr(_)),
            super::types::OPTIONAL => matches!(v, Value::Optional(_)),
            _ => false,
        },
        Type::Type(_) => matches!(v, Value::Type(_)),
    }
}

/// Shorthands for signatures.
pub(super) mod sig {
    use super::super::types::Type;

    pub fn a() -> Type {
        Type::param("A")
    }
    pub fn b() -> Type {
        Type::param("B")
    }
    pub fn list(t: Type) -> Type {
        Type::list(t)
    }
    pub fn list_a() -> Type {
        Type::list(a())
    }
    pub fn map_ab() -> Type {
        Type::map(a(), b())
    }
}

/// Base64 as the OpenAPI `byte` format and `bytes` JSON decode it (standard alphabet,
/// padding required).
pub fn decode_base64(s: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(s).ok()
}
