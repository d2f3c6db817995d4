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
