//! Compiling one expression against the schema node it sits on: parse, type-check
//! with `self` (and `oldSelf`, optional when the rule says so) typed from the node,
//! and estimate its worst-case cost.

use super::checker::{check, Env};
use super::cost::estimate;
use super::decl::DeclType;
use super::eval::Program;
use super::parser::parse;
use super::types::Type;
use std::collections::HashMap;
use std::sync::Arc;

/// A compiled expression, its result type and its estimated worst-case cost.
#[derive(Debug)]
pub struct Compiled {
    pub program: Program,
    pub output: Type,
    pub max_cost: u64,
}

/// Compile `text` for a node of type `decl`; on failure, cel-go's issue text.
pub fn compile_expression(text: &str, decl: &Arc<DeclType>, optional_old_self: bool) -> Result<Compiled, String> {
    let mut parsed = parse(text).map_err(|issues| issues.render(text))?;
    let mut objects = Vec::new();
    decl.objects(&mut objects);
    let self_type = decl.cel_type();
    let old_self_type = if optional_old_self {
        Type::optional(self_type.clone())
    } else {
        self_type.clone()
    };
    let env = Env {
        variables: vec![("self", self_type), ("oldSelf", old_self_type)],
        objects: objects.into_iter().map(|o| (o.name.clone(), o)).collect::<HashMap<_, _>>(),
        structs: HashMap::new(),
    };
    let checked = check(&mut parsed.expr, &parsed.source, parsed.next_id, &env).map_err(|issues| issues.render(text))?;
    let output = checked.type_of(parsed.expr.id).clone();
    let max_cost = estimate(&parsed.expr, &checked, decl).max;
    Ok(Compiled {
        program: Program {
            expr: parsed.expr,
            checked,
        },
        output,
        max_cost,
    })
}

/// The declarations of an environment without a schema: named variables and the
/// object types they use, declared field by field (the admission environment).
#[derive(Clone, Debug, Default)]
pub struct Declarations {
    pub variables: Vec<(&'static str, Type)>,
    pub structs: HashMap<String, Vec<(String, Type)>>,
}

/// Compile `text` against `declarations` (no static cost estimate: nothing bounds
/// the sizes of dynamic values); on failure, cel-go's issue text. A constant pattern
/// of `find()`/`findAll()` that does not compile fails as upstream's program
/// instantiation does.
pub fn compile_declared(text: &str, declarations: &Declarations) -> Result<(Program, Type), CompileError> {
    let mut parsed = parse(text).map_err(|issues| CompileError::Issues(issues.render(text)))?;
    let env = Env {
        variables: declarations.variables.clone(),
        objects: HashMap::new(),
        structs: declarations.structs.clone(),
    };
    let checked = check(&mut parsed.expr, &parsed.source, parsed.next_id, &env)
        .map_err(|issues| CompileError::Issues(issues.render(text)))?;
    if let Some(e) = super::rule::constant_regex_error(&parsed.expr) {
        return Err(CompileError::Instantiation(e));
    }
    let output = checked.type_of(parsed.expr.id).clone();
    Ok((
        Program {
            expr: parsed.expr,
            checked,
        },
        output,
    ))
}

/// Why [`compile_declared`] failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CompileError {
    /// Parse or type-check issues, rendered (`ERROR: <input>:1:2: ...`).
    Issues(String),
    /// A constant regular expression that does not compile.
    Instantiation(String),
}
