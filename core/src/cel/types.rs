//! CEL's static types and cel-go's unification of them: assignability with type
//! parameters bound through a substitution map, the "most general" of two types, and
//! the names types print as in checker errors (`list(int)`, `map(string, dyn)`).

use std::collections::HashMap;
use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    Dyn,
    Null,
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    Duration,
    Timestamp,
    List(Box<Type>),
    Map(Box<Type>, Box<Type>),
    /// A declared object type: a schema node (`selfType0.spec`) or one of
    /// Kubernetes' struct-like types (`kubernetes.Quantity`, `kubernetes.URL`).
    Object(String),
    /// `optional_type(T)`, `net.IP`, `net.CIDR`.
    Opaque(String, Vec<Type>),
    /// The type of a type: `type(int)`; `None` for the bare `type`.
    Type(Option<Box<Type>>),
    /// A type parameter (`A`) or a checker's fresh variable (`_var0`).
    Param(String),
    Error,
}

pub const OPTIONAL: &str = "optional_type";

impl Type {
    pub fn list(elem: Type) -> Type {
        Type::List(Box::new(elem))
    }

    pub fn map(key: Type, value: Type) -> Type {
        Type::Map(Box::new(key), Box::new(value))
    }

    pub fn optional(t: Type) -> Type {
        Type::Opaque(OPTIONAL.to_owned(), vec![t])
    }

    pub fn param(name: &str) -> Type {
        Type::Param(name.to_owned())
    }

    pub fn opaque(name: &str) -> Type {
        Type::Opaque(name.to_owned(), Vec::new())
    }

    pub fn object(name: &str) -> Type {
        Type::Object(name.to_owned())
    }

    pub fn is_dyn_or_error(&self) -> bool {
        matches!(self, Type::Dyn | Type::Error)
    }

    /// The value type of `optional_type(T)`.
    pub fn unwrap_optional(&self) -> Option<&Type> {
        match self {
            Type::Opaque(name, params) if name == OPTIONAL => params.first(),
            _ => None,
        }
    }

    fn params(&self) -> Vec<&Type> {
        match self {
            Type::List(e) => vec![e],
            Type::Map(k, v) => vec![k, v],
            Type::Opaque(_, ps) => ps.iter().collect(),
            Type::Type(Some(t)) => vec![t],
            _ => Vec::new(),
        }
    }

    /// The same kind of type (list, map, the same opaque) regardless of parameters.
    fn same_constructor(&self, other: &Type) -> bool {
        match (self, other) {
            (Type::List(_), Type::List(_)) | (Type::Map(..), Type::Map(..)) => true,
            (Type::Opaque(a, pa), Type::Opaque(b, pb)) => a == b && pa.len() == pb.len(),
            _ => false,
        }
    }

    fn with_params(&self, params: Vec<Type>) -> Type {
        let mut it = params.into_iter();
        match self {
            Type::List(_) => Type::list(it.next().expect("one parameter")),
            Type::Map(..) => {
                let k = it.next().expect("key");
                Type::map(k, it.next().expect("value"))
            }
            Type::Opaque(name, _) => Type::Opaque(name.clone(), it.collect()),
            Type::Type(Some(_)) => Type::Type(Some(Box::new(it.next().expect("one parameter")))),
            other => other.clone(),
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Dyn => f.write_str("dyn"),
            Type::Null => f.write_str("null"),
            Type::Bool => f.write_str("bool"),
            Type::Int => f.write_str("int"),
            Type::Uint => f.write_str("uint"),
            Type::Double => f.write_str("double"),
            Type::String => f.write_str("string"),
            Type::Bytes => f.write_str("bytes"),
            Type::Duration => f.write_str("duration"),
            Type::Timestamp => f.write_str("timestamp"),
            Type::List(e) => write!(f, "list({e})"),
            Type::Map(k, v) => write!(f, "map({k}, {v})"),
            Type::Object(name) => f.write_str(name),
            Type::Opaque(name, params) if params.is_empty() => f.write_str(name),
            Type::Opaque(name, params) => {
                write!(f, "{name}(")?;
                for (i, p) in params.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{p}")?;
                }
                f.write_str(")")
            }
            Type::Type(None) => f.write_str("type"),
            Type::Type(Some(t)) => write!(f, "type({t})"),
            Type::Param(name) => f.write_str(name),
            Type::Error => f.write_str("!error!"),
        }
    }
}

/// Bindings of type parameters, as the checker accumulates them.
#[derive(Clone, Debug, Default)]
pub struct Mapping {
    map: HashMap<String, Type>,
}

impl Mapping {
    fn find(&self, t: &Type) -> Option<&Type> {
        match t {
            Type::Param(name) => self.map.get(name),
            _ => None,
        }
    }

    fn add(&mut self, from: &Type, to: Type) {
        if let Type::Param(name) = from {
            self.map.insert(name.clone(), to);
        }
    }

    /// `t` with every bound parameter replaced; unbound ones become `dyn` when asked.
    pub fn substitute(&self, t: &Type, params_to_dyn: bool) -> Type {
        self.substitute_depth(t, params_to_dyn, 0)
    }

    fn substitute_depth(&self, t: &Type, params_to_dyn: bool, depth: usize) -> Type {
        if depth > 64 {
            return Type::Dyn;
        }
        if let Some(sub) = self.find(t) {
            return self.substitute_depth(sub, params_to_dyn, depth + 1);
        }
        match t {
            Type::Param(_) if params_to_dyn => Type::Dyn,
            Type::List(_) | Type::Map(..) | Type::Opaque(..) | Type::Type(Some(_)) => {
                let params = t
                    .params()
                    .into_iter()
                    .map(|p| self.substitute_depth(p, params_to_dyn, depth + 1))
                    .collect();
                t.with_params(params)
            }
            other => other.clone(),
        }
    }

    /// Whether a value of `t2` may be used where `t1` is expected, binding parameters
    /// on success (the mapping is unchanged on failure).
    pub fn is_assignable(&mut self, t1: &Type, t2: &Type) -> bool {
        let mut copy = self.clone();
        if copy.assignable(t1, t2) {
            *self = copy;
            true
        } else {
            false
        }
    }

    pub fn is_assignable_list(&mut self, l1: &[Type], l2: &[Type]) -> bool {
        let mut copy = self.clone();
        if l1.len() == l2.len() && l1.iter().zip(l2).all(|(a, b)| copy.assignable(a, b)) {
            *self = copy;
            true
        } else {
            false
        }
    }

    fn assignable(&mut self, t1: &Type, t2: &Type) -> bool {
        if let Type::Param(_) = t2 {
            let (valid, has_sub) = self.valid_substitution(t1, t2);
            if valid {
                return true;
            }
            if has_sub {
                return false;
            }
        }
        if let Type::Param(_) = t1 {
            return self.valid_substitution(t2, t1).0;
        }
        if t1.is_dyn_or_error() || t2.is_dyn_or_error() {
            return true;
        }
        if *t1 == Type::Null {
            return nullable(t2);
        }
        if *t2 == Type::Null {
            return nullable(t1);
        }
        match t1 {
            Type::Type(_) => matches!(t2, Type::Type(_)),
            Type::List(_) | Type::Map(..) | Type::Opaque(..) => {
                t1.same_constructor(t2) && {
                    let (p1, p2) = (t1.params(), t2.params());
                    p1.iter().zip(p2).all(|(a, b)| self.assignable(a, b))
                }
            }
            _ => t1 == t2,
        }
    }

    fn valid_substitution(&mut self, t1: &Type, t2: &Type) -> (bool, bool) {
        if t1 == t2 {
            return (true, true);
        }
        if let Some(sub) = self.find(t2).cloned() {
            if *t1 == sub {
                return (true, true);
            }
            if self.assignable(t1, &sub) {
                let general = most_general(t1, &sub);
                if self.not_referenced_in(t2, &general, 0) {
                    self.add(t2, general);
                }
                return (true, true);
            }
            return (false, true);
        }
        if self.not_referenced_in(t2, t1, 0) {
            self.add(t2, t1.clone());
            return (true, false);
        }
        (false, false)
    }

    fn not_referenced_in(&self, t: &Type, within: &Type, depth: usize) -> bool {
        if depth > 64 || t == within {
            return false;
        }
        match within {
            Type::Param(_) => match self.find(within) {
                None => true,
                Some(sub) => self.not_referenced_in(t, sub, depth + 1),
            },
            _ => within.params().into_iter().all(|p| self.not_referenced_in(t, p, depth + 1)),
        }
    }
}

fn nullable(t: &Type) -> bool {
    matches!(
        t,
        Type::Null | Type::Opaque(..) | Type::Object(_) | Type::Duration | Type::Timestamp
    )
}

/// Whether `t1` is `t2` or less specific (dyn, a parameter).
fn equal_or_less_specific(t1: &Type, t2: &Type) -> bool {
    if matches!(t1, Type::Dyn | Type::Param(_)) {
        return true;
    }
    if matches!(t2, Type::Dyn | Type::Param(_)) {
        return false;
    }
    match (t1, t2) {
        (Type::Type(_), Type::Type(_)) => true,
        (Type::List(_), _) | (Type::Map(..), _) | (Type::Opaque(..), _) => {
            t1.same_constructor(t2)
                && t1
                    .params()
                    .into_iter()
                    .zip(t2.params())
                    .all(|(a, b)| equal_or_less_specific(a, b))
        }
        _ => t1 == t2,
    }
}

/// The less specific of two assignable types.
pub fn most_general(t1: &Type, t2: &Type) -> Type {
    if equal_or_less_specific(t1, t2) {
        t1.clone()
    } else {
        t2.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(Type::map(Type::String, Type::list(Type::Dyn)).to_string(), "map(string, list(dyn))");
        assert_eq!(Type::optional(Type::Int).to_string(), "optional_type(int)");
        assert_eq!(Type::Type(Some(Box::new(Type::Int))).to_string(), "type(int)");
    }

    #[test]
    fn parameters_bind_once() {
        let mut m = Mapping::default();
        let a = Type::param("A");
        assert!(m.is_assignable_list(&[a.clone(), a.clone()], &[Type::Int, Type::Int]));
        let mut m = Mapping::default();
        assert!(!m.is_assignable_list(&[a.clone(), a.clone()], &[Type::Int, Type::String]));
        let mut m = Mapping::default();
        assert!(m.is_assignable_list(&[Type::list(a.clone())], &[Type::list(Type::String)]));
        assert_eq!(m.substitute(&a, false), Type::String);
    }

    #[test]
    fn dyn_is_assignable_both_ways() {
        let mut m = Mapping::default();
        assert!(m.is_assignable(&Type::Int, &Type::Dyn));
        assert!(m.is_assignable(&Type::list(Type::Dyn), &Type::list(Type::Int)));
        assert!(!m.is_assignable(&Type::Int, &Type::Uint));
    }
}
