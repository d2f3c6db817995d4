//! Macro expansion, as cel-go expands its standard macros, the two-variable
//! comprehensions (Kubernetes enables them from 1.32) and the optional library's
//! `optMap`/`optFlatMap`: each becomes a presence test or a comprehension whose shape
//! the cost estimator relies on.

use super::ast::{Expr, ExprKind, Literal, ACCUMULATOR};
use super::parser::{Builder, MacroHelper};

/// cel-go's name for the iteration variable a bind-style fold does not use.
const UNUSED_ITER_VAR: &str = "#unused";

type Expanded = Result<Expr, (Option<Expr>, Vec<Expr>)>;

/// Expand `function(args)` / `target.function(args)` if it is a macro; otherwise hand
/// the parts back. A macro with ill-formed arguments is an error at that argument.
pub(super) fn expand<P: MacroHelper>(
    parser: &mut P,
    offset: u32,
    function: &str,
    target: Option<Expr>,
    args: Vec<Expr>,
) -> Result<Expanded, (Option<u32>, String)> {
    let n = args.len();
    let is_macro = match (&target, function, n) {
        (None, "has", 1) => true,
        (Some(_), "all" | "exists" | "exists_one" | "existsOne" | "filter", 2 | 3) => true,
        (Some(_), "map", 2 | 3) => true,
        (Some(_), "transformList" | "transformMap" | "transformMapEntry", 3 | 4) => true,
        (Some(_), "optMap" | "optFlatMap", 2) => true,
        _ => false,
    };
    if !is_macro || (function == "filter" && n == 3) {
        return Ok(Err((target, args)));
    }
    let mut b = Builder { parser, offset };
    let error = |b: &Builder, arg: &Expr, message: &str| -> Result<Expanded, (Option<u32>, String)> {
        Err((Some(b.parser.offset_of(arg.id)), message.to_owned()))
    };
    if function == "has" {
        let arg = args.into_iter().next().expect("one argument");
        return match arg.kind {
            ExprKind::Select { operand, field, .. } => Ok(Ok(b.node(ExprKind::Select {
                operand,
                field,
                test_only: true,
            }))),
            _ => error(&b, &arg, "invalid argument to has() macro"),
        };
    }
    let target = target.expect("receiver macros have a target");
    let mut args = args;
    match (function, n) {
        ("optMap" | "optFlatMap", _) => {
            let ExprKind::Ident(var) = &args[0].kind else {
                return error(&b, &args[0], &format!("{function}() variable name must be a simple identifier"));
            };
            let var = var.clone();
            let map_expr = args.pop().expect("two arguments");
            let has = b.member("hasValue", target.clone(), Vec::new());
            let range = b.list(Vec::new());
            let value = b.member("value", target, Vec::new());
            let cond = b.lit(Literal::Bool(false));
            let step = b.ident(&var);
            let mut fold = b.fold(range, UNUSED_ITER_VAR, None, &var, value, cond, step, map_expr);
            if function == "optMap" {
                fold = b.call("optional.of", vec![fold]);
            }
            let none = b.call("optional.none", Vec::new());
            Ok(Ok(b.call("_?_:_", vec![has, fold, none])))
        }
        ("all" | "exists" | "exists_one" | "existsOne", 2) | ("map", 2 | 3) | ("filter", 2) => {
            let ExprKind::Ident(var) = &args[0].kind else {
                let message = if matches!(function, "map" | "filter") {
                    "argument is not an identifier"
                } else {
                    "argument must be a simple name"
                };
                return error(&b, &args[0], message);
            };
            let var = var.clone();
            if var == ACCUMULATOR || var == "__result__" {
                return error(&b, &args[0], "iteration variable overwrites accumulator variable");
            }
            let mut rest = args.split_off(1);
            let fold = match function {
                "map" => {
                    let transform = rest.pop().expect("transform");
                    let filter = rest.pop();
                    projection(&mut b, target, &var, None, filter, transform)
                }
                "filter" => {
                    let pred = rest.pop().expect("predicate");
                    let init = b.list(Vec::new());
                    let cond = b.lit(Literal::Bool(true));
                    let accu = b.accu();
                    let elem = b.ident(&var);
                    let single = b.list(vec![elem]);
                    let add = b.call("_+_", vec![accu, single]);
                    let keep = b.accu();
                    let step = b.call("_?_:_", vec![pred, add, keep]);
                    let result = b.accu();
                    b.fold(target, &var, None, ACCUMULATOR, init, cond, step, result)
                }
                _ => {
                    let pred = rest.pop().expect("predicate");
                    quantifier(&mut b, function, target, &var, None, pred)
                }
            };
            Ok(Ok(fold))
        }
        _ => {
            // The two-variable forms.
            let var1 = match &args[0].kind {
                ExprKind::Ident(v) => v.clone(),
                _ => return error(&b, &args[0], "argument must be a simple name"),
            };
            let var2 = match &args[1].kind {
                ExprKind::Ident(v) => v.clone(),
                _ => return error(&b, &args[1], "argument must be a simple name"),
            };
            if var1 == var2 {
                return error(&b, &args[1], &format!("duplicate variable name: {var1}"));
            }
            if var1 == ACCUMULATOR || var1 == "__result__" {
                return error(&b, &args[0], "iteration variable overwrites accumulator variable");
            }
            if var2 == ACCUMULATOR || var2 == "__result__" {
                return error(&b, &args[1], "iteration variable overwrites accumulator variable");
            }
            let mut rest = args.split_off(2);
            let fold = match function {
                "all" | "exists" | "exists_one" | "existsOne" => {
                    let pred = rest.pop().expect("predicate");
                    quantifier(&mut b, function, target, &var1, Some(&var2), pred)
                }
                "transformList" => {
                    let transform = rest.pop().expect("transform");
                    let filter = rest.pop();
                    projection(&mut b, target, &var1, Some(&var2), filter, transform)
                }
                _ => {
                    let transform = rest.pop().expect("transform");
                    let filter = rest.pop();
                    let accu = b.accu();
                    let mut step = if function == "transformMap" {
                        let key = b.ident(&var1);
                        b.call("cel.@mapInsert", vec![accu, key, transform])
                    } else {
                        b.call("cel.@mapInsert", vec![accu, transform])
                    };
                    if let Some(filter) = filter {
                        let keep = b.accu();
                        step = b.call("_?_:_", vec![filter, step, keep]);
                    }
                    let init = b.map();
                    let cond = b.lit(Literal::Bool(true));
                    let result = b.accu();
                    b.fold(target, &var1, Some(&var2), ACCUMULATOR, init, cond, step, result)
                }
            };
            Ok(Ok(fold))
        }
    }
}

/// `all`, `exists`, `exists_one` over one or two variables.
fn quantifier(b: &mut Builder, function: &str, target: Expr, var: &str, var2: Option<&str>, pred: Expr) -> Expr {
    let (init, cond, step, result) = match function {
        "all" => {
            let init = b.lit(Literal::Bool(true));
            let accu = b.accu();
            let cond = b.call("@not_strictly_false", vec![accu]);
            let accu = b.accu();
            let step = b.call("_&&_", vec![accu, pred]);
            (init, cond, step, b.accu())
        }
        "exists" => {
            let init = b.lit(Literal::Bool(false));
            let accu = b.accu();
            let not = b.call("!_", vec![accu]);
            let cond = b.call("@not_strictly_false", vec![not]);
            let accu = b.accu();
            let step = b.call("_||_", vec![accu, pred]);
            (init, cond, step, b.accu())
        }
        _ => {
            let init = b.lit(Literal::Int(0));
            let cond = b.lit(Literal::Bool(true));
            let accu = b.accu();
            let one = b.lit(Literal::Int(1));
            let add = b.call("_+_", vec![accu, one]);
            let keep = b.accu();
            let step = b.call("_?_:_", vec![pred, add, keep]);
            let accu = b.accu();
            let one = b.lit(Literal::Int(1));
            let result = b.call("_==_", vec![accu, one]);
            (init, cond, step, result)
        }
    };
    b.fold(target, var, var2, ACCUMULATOR, init, cond, step, result)
}

/// `map` and `transformList`: append each (kept) transformed element.
fn projection(b: &mut Builder, target: Expr, var: &str, var2: Option<&str>, filter: Option<Expr>, transform: Expr) -> Expr {
    let init = b.list(Vec::new());
    let cond = b.lit(Literal::Bool(true));
    let accu = b.accu();
    let single = b.list(vec![transform]);
    let mut step = b.call("_+_", vec![accu, single]);
    if let Some(filter) = filter {
        let keep = b.accu();
        step = b.call("_?_:_", vec![filter, step, keep]);
    }
    let result = b.accu();
    b.fold(target, var, var2, ACCUMULATOR, init, cond, step, result)
}

#[cfg(test)]
mod tests {
    use crate::cel::ast::ExprKind;
    use crate::cel::parser::parse;

    #[test]
    fn all_becomes_a_comprehension() {
        let p = parse("self.items.all(i, i > 0)").unwrap();
        let ExprKind::Comprehension(c) = &p.expr.kind else { panic!("{:?}", p.expr) };
        assert_eq!(c.iter_var, "i");
        assert_eq!(c.loop_condition.call().unwrap().0, "@not_strictly_false");
    }

    #[test]
    fn has_needs_a_field_selection() {
        let text = "has(self)";
        assert_eq!(
            parse(text).unwrap_err().render(text),
            "ERROR: <input>:1:5: invalid argument to has() macro\n | has(self)\n | ....^"
        );
        let p = parse("has(self.a)").unwrap();
        assert!(matches!(p.expr.kind, ExprKind::Select { test_only: true, .. }));
    }

    #[test]
    fn quantifier_variables_must_be_names() {
        let text = "[1].all(1, true)";
        assert!(parse(text).unwrap_err().render(text).contains("argument must be a simple name"));
        let text = "{}.all(k, k, true)";
        assert!(parse(text).unwrap_err().render(text).contains("duplicate variable name: k"));
    }
}
