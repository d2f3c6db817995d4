//! Compiling every rule of an `openAPIV3Schema`, and the CRD-validation errors
//! upstream reports about them: malformed entries, rules that do not compile or do
//! not yield a bool, message expressions that do not yield a string, transition rules
//! where old values cannot be correlated, and estimated costs past the per-rule and
//! per-CRD limits.
//!
//! The schema is walked as upstream's `ValidateCustomResourceDefinitionOpenAPISchema`
//! walks it (additional properties, properties in name order, items; a node's own
//! rules after its children's), and errors come in upstream's order: every
//! malformed-entry error first, then every compilation and cost error, then the
//! per-CRD total.

use super::decl::{is_embedded, schema_decl_type, DeclType, MAX_REQUEST_SIZE_BYTES, ROOT_TYPE_NAME};
use super::escaping::escape;
use super::field_path::valid_field_path;
use super::rule::{Reason, Rule};
use super::{STATIC_ESTIMATED_COST_LIMIT, STATIC_ESTIMATED_CRD_COST_LIMIT};
use crate::validation::{ErrorKind, FieldError};
use serde_json::Value as Json;
use std::sync::Arc;

/// The rules of one schema, compiled, shaped as the part of the schema that holds
/// them. Cheap to keep (the lead caches one per CRD version) and `Send + Sync`.
#[derive(Debug, Default)]
pub struct CompiledSchema {
    pub(super) root: Option<Node>,
}

/// One schema node on the way to rules.
#[derive(Debug)]
pub(super) struct Node {
    /// The node's CEL type (how its values are read); `None` on the way to rules
    /// below a node rules cannot see.
    pub decl: Option<Arc<DeclType>>,
    /// The schema's `type` (`"object"`), the value of a failed rule's error.
    pub type_name: String,
    pub rules: Vec<Rule>,
    /// Properties holding rules, by JSON name.
    pub properties: Vec<(String, Node)>,
    pub additional: Option<Box<Node>>,
    pub items: Option<Box<Node>>,
    /// Whether old map entries correlate with new ones (`x-kubernetes-map-type`
    /// granular or atomic).
    pub map_correlatable: bool,
    /// The keys of a `map` list, which correlate old items with new ones.
    pub list_map_keys: Option<Vec<String>>,
}

impl CompiledSchema {
    /// Whether no rule is declared: objects then pay nothing.
    pub fn is_empty(&self) -> bool {
        self.root.is_none()
    }

    /// Compile every rule of `schema`, keeping rules that fail to compile (they report
    /// `rule compile error` when objects are validated), as upstream does for CRDs
    /// already stored.
    pub fn build(schema: &Json) -> CompiledSchema {
        let mut walk = Walk::default();
        let decl = schema_decl_type(schema, true, ROOT_TYPE_NAME);
        CompiledSchema {
            root: walk.node(schema, "", decl, Context::root()),
        }
    }
}

/// Compile the rules of the `openAPIV3Schema` found at `path` (as
/// `spec.versions[0].schema.openAPIV3Schema`), or the field errors CRD validation
/// reports about them.
///
/// Upstream compiles rules only when the schema is structural and valid otherwise;
/// the caller checks that first and calls this only then.
pub fn compile_schema(schema: &Json, path: &str) -> Result<CompiledSchema, Vec<FieldError>> {
    let mut walk = Walk {
        report: true,
        ..Walk::default()
    };
    let decl = schema_decl_type(schema, true, ROOT_TYPE_NAME);
    let root = walk.node(schema, path, decl, Context::root());
    let mut errors = walk.schema_errors;
    errors.extend(walk.cel_errors);
    if walk.total > STATIC_ESTIMATED_CRD_COST_LIMIT {
        for (rule_path, _) in &walk.most_expensive {
            errors.push(FieldError::forbidden(
                rule_path,
                "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
            ));
        }
        errors.push(FieldError::forbidden(
            path,
            cost_error_message(
                "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
                walk.total,
                STATIC_ESTIMATED_CRD_COST_LIMIT,
            ),
        ));
    }
    if errors.is_empty() {
        Ok(CompiledSchema { root })
    } else {
        Err(errors)
    }
}

/// Upstream's wording of an estimate past a limit.
pub fn cost_error_message(what: &str, cost: u64, limit: u64) -> String {
    let factor = cost as f64 / limit as f64;
    let factor = if factor > 100.0 {
        "more than 100x".to_owned()
    } else if factor < 1.5 {
        format!("{factor:.6}x")
    } else {
        format!("{factor:.1}x")
    };
    format!(
        "{what} exceeds budget by factor of {factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )
}

/// What a node inherits from the nodes above it.
#[derive(Clone, Debug)]
struct Context {
    /// A rule here or above: type information is needed.
    in_scope: bool,
    /// How many times values here can occur in one object, if bounded.
    cardinality: Option<u64>,
    /// The highest path under which old values do not correlate with new ones.
    uncorrelatable: Option<String>,
}

impl Context {
    fn root() -> Context {
        Context {
            in_scope: false,
            cardinality: Some(1),
            uncorrelatable: None,
        }
    }

    /// The context of a child of `parent` (whose schema is `schema`).
    fn child(&self, schema: &Json) -> Context {
        Context {
            in_scope: self.in_scope,
            cardinality: self.cardinality.and_then(|c| max_elements(schema).map(|m| c.saturating_mul(m))),
            uncorrelatable: self.uncorrelatable.clone(),
        }
    }
}

/// The factor by which a node multiplies how often its children occur.
fn max_elements(schema: &Json) -> Option<u64> {
    let limit = |key: &str| schema.get(key).and_then(Json::as_i64).map(|v| v.max(0) as u64);
    match schema.get("type").and_then(Json::as_str) {
        Some("object") if schema.get("additionalProperties").is_some() => limit("maxProperties"),
        Some("array") => limit("maxItems"),
        _ => Some(1),
    }
}

#[derive(Default)]
struct Walk {
    /// Whether to report CRD-validation errors (else: compile leniently).
    report: bool,
    schema_errors: Vec<FieldError>,
    cel_errors: Vec<FieldError>,
    total: u64,
    /// The four costliest rules of at least 1% of the per-CRD limit, costliest first.
    most_expensive: Vec<(String, u64)>,
}

fn has_newlines(s: &str) -> bool {
    s.contains(['\n', '\r'])
}

impl Walk {
    fn observe(&mut self, path: String, cost: u64) {
        self.total = self.total.saturating_add(cost);
        if cost < STATIC_ESTIMATED_CRD_COST_LIMIT / 100 {
            return;
        }
        let at = self.most_expensive.partition_point(|(_, c)| *c >= cost);
        self.most_expensive.insert(at, (path, cost));
        self.most_expensive.truncate(4);
    }

    /// Walk the node `schema` at `path`; `decl` is its CEL type as its parent sees it.
    fn node(&mut self, schema: &Json, path: &str, decl: Option<Arc<DeclType>>, ctx: Context) -> Option<Node> {
        let rules_json = schema.get("x-kubernetes-validations").and_then(Json::as_array);
        let ctx = Context {
            in_scope: ctx.in_scope || rules_json.is_some_and(|r| !r.is_empty()),
            ..ctx
        };
        let schema_errors_before = self.schema_errors.len();
        let child = |key: &str| format!("{path}.{key}");

        let mut additional = None;
        if let Some(add) = schema.get("additionalProperties").filter(|a| a.is_object()) {
            let child_decl = decl.as_ref().and_then(|d| match &d.kind {
                super::decl::DeclKind::Map { elem } => Some(elem.clone()),
                _ => None,
            });
            additional = self.node(add, &child("additionalProperties"), child_decl, ctx.child(schema)).map(Box::new);
        }

        let mut properties = Vec::new();
        if let Some(props) = schema.get("properties").and_then(Json::as_object) {
            let map_type = schema.get("x-kubernetes-map-type").and_then(Json::as_str);
            for (name, prop) in props {
                let mut sub = ctx.child(schema);
                if !matches!(map_type, None | Some("granular") | Some("atomic")) && sub.uncorrelatable.is_none() {
                    sub.uncorrelatable = Some(path.to_owned());
                }
                let child_decl = decl
                    .as_ref()
                    .and_then(|d| escape(name).and_then(|n| d.field(&n).map(|f| f.decl.clone())));
                let child_path = format!("{path}.properties[{name}]");
                if let Some(node) = self.node(prop, &child_path, child_decl, sub) {
                    properties.push((name.clone(), node));
                }
            }
        }

        // Rules under not/allOf/oneOf/anyOf are checked for form only, as upstream.
        let entry_checks_only = |walk: &mut Walk, s: &Json, p: String| walk.entry_checks(s, &p);
        if let Some(not) = schema.get("not") {
            entry_checks_only(self, not, child("not"));
        }
        for key in ["allOf", "oneOf", "anyOf"] {
            for (i, s) in schema.get(key).and_then(Json::as_array).into_iter().flatten().enumerate() {
                entry_checks_only(self, s, format!("{path}.{key}[{i}]"));
            }
        }

        let mut items = None;
        if let Some(item_schema) = schema.get("items").filter(|i| i.is_object()) {
            let mut sub = ctx.child(schema);
            if schema.get("x-kubernetes-list-type").and_then(Json::as_str) != Some("map") && sub.uncorrelatable.is_none() {
                sub.uncorrelatable = Some(path.to_owned());
            }
            let child_decl = decl.as_ref().and_then(|d| match &d.kind {
                super::decl::DeclKind::List { elem, .. } => Some(elem.clone()),
                _ => None,
            });
            items = self.node(item_schema, &child("items"), child_decl, sub).map(Box::new);
        }

        let mut rules: Vec<Rule> = rules_json.into_iter().flatten().map(Rule::from_json).collect();
        let mut node_decl = decl;
        if !rules.is_empty() {
            self.entry_checks(schema, path);
            let subtree_ok = self.schema_errors.len() == schema_errors_before;
            if node_decl.is_none() {
                node_decl = schema_decl_type(schema, is_embedded(schema), ROOT_TYPE_NAME);
            }
            match &node_decl {
                None => {
                    if self.report && subtree_ok {
                        self.cel_errors.push(FieldError {
                            field: child("x-kubernetes-validations"),
                            kind: ErrorKind::Internal,
                            value: None,
                            detail: "internal error: failed to construct type information for x-kubernetes-validations rules: unable to convert structural schema to CEL declarations".to_owned(),
                        });
                    }
                }
                Some(d) => {
                    for rule in rules.iter_mut() {
                        rule.compile(d, schema);
                    }
                    if self.report && subtree_ok {
                        self.rule_errors(&rules, path, d, &ctx);
                    }
                }
            }
        }

        let has_rules = !rules.is_empty() && node_decl.is_some();
        if !has_rules && properties.is_empty() && additional.is_none() && items.is_none() {
            return None;
        }
        Some(Node {
            decl: node_decl,
            type_name: schema.get("type").and_then(Json::as_str).unwrap_or("").to_owned(),
            rules,
            properties,
            additional,
            items,
            map_correlatable: matches!(
                schema.get("x-kubernetes-map-type").and_then(Json::as_str),
                None | Some("granular") | Some("atomic")
            ),
            list_map_keys: match schema.get("x-kubernetes-list-type").and_then(Json::as_str) {
                Some("map") => schema
                    .get("x-kubernetes-list-map-keys")
                    .and_then(Json::as_array)
                    .map(|k| k.iter().filter_map(Json::as_str).map(str::to_owned).collect()),
                _ => None,
            },
        })
    }

    /// Upstream's checks of the entries themselves (schema errors).
    fn entry_checks(&mut self, schema: &Json, path: &str) {
        if !self.report {
            return;
        }
        let Some(entries) = schema.get("x-kubernetes-validations").and_then(Json::as_array) else {
            return;
        };
        for (i, entry) in entries.iter().enumerate() {
            let rule = Rule::from_json(entry);
            let at = |field: &str| format!("{path}.x-kubernetes-validations[{i}].{field}");
            let (trimmed_rule, trimmed_message) = (rule.rule.trim(), rule.message.trim());
            if trimmed_rule.is_empty() {
                self.schema_errors.push(FieldError::required(&at("rule"), "rule is not specified"));
            } else if !rule.message.is_empty() && trimmed_message.is_empty() {
                self.schema_errors
                    .push(FieldError::invalid(&at("message"), &rule.message, "message must be non-empty if specified"));
            } else if has_newlines(trimmed_message) {
                self.schema_errors
                    .push(FieldError::invalid(&at("message"), &rule.message, "message must not contain line breaks"));
            } else if has_newlines(trimmed_rule) && trimmed_message.is_empty() {
                self.schema_errors.push(FieldError::required(
                    &at("message"),
                    "message must be specified if rule contains line breaks",
                ));
            }
            if !rule.message_expression.is_empty() && rule.message_expression.trim().is_empty() {
                self.schema_errors.push(FieldError::required(
                    &at("messageExpression"),
                    "messageExpression must be non-empty if specified",
                ));
            }
            if let Some(reason) = &rule.reason {
                if Reason::parse(reason).is_none() {
                    let supported: Vec<String> = Reason::ALL.iter().map(|r| crate::validation::quoted(r)).collect();
                    self.schema_errors.push(FieldError {
                        field: at("reason"),
                        kind: ErrorKind::NotSupported,
                        value: Some(reason.clone()),
                        detail: format!("supported values: {}", supported.join(", ")),
                    });
                }
            }
            let field_path = &rule.field_path;
            if !field_path.is_empty() && field_path.trim().is_empty() {
                self.schema_errors
                    .push(FieldError::invalid(&at("fieldPath"), field_path, "fieldPath must be non-empty if specified"));
            }
            if has_newlines(field_path) {
                self.schema_errors
                    .push(FieldError::invalid(&at("fieldPath"), field_path, "fieldPath must not contain line breaks"));
            }
            if !field_path.is_empty() && valid_field_path(field_path, schema).is_err() {
                self.schema_errors
                    .push(FieldError::invalid(&at("fieldPath"), field_path, "fieldPath must be a valid path"));
            }
        }
    }

    /// Compilation, cost and transition errors of a node's compiled rules.
    fn rule_errors(&mut self, rules: &[Rule], path: &str, decl: &DeclType, ctx: &Context) {
        // How often the rule may run: bounded by the limits above, else by how many
        // values of this node fit in the largest request.
        let cardinality = ctx
            .cardinality
            .unwrap_or_else(|| (MAX_REQUEST_SIZE_BYTES / (decl.min_serialized_size + 1)) as u64);
        for (i, rule) in rules.iter().enumerate() {
            let at = |field: &str| format!("{path}.x-kubernetes-validations[{i}].{field}");
            let cost = match rule.max_cost() {
                0 => 0,
                c => c.saturating_mul(cardinality),
            };
            if cost > STATIC_ESTIMATED_COST_LIMIT {
                self.cel_errors.push(FieldError::forbidden(
                    &at("rule"),
                    cost_error_message("estimated rule cost", cost, STATIC_ESTIMATED_COST_LIMIT),
                ));
            }
            self.observe(at("rule"), cost);
            if let Err(detail) = &rule.program {
                self.cel_errors
                    .push(FieldError::invalid_unquoted(&at("rule"), &rule.go_value(), detail));
            }
            match (&rule.message_program, rule.message_max_cost()) {
                (Err(detail), _) => self
                    .cel_errors
                    .push(FieldError::invalid_unquoted(&at("messageExpression"), &rule.go_value(), detail)),
                (Ok(_), Some(message_cost)) => {
                    if message_cost > STATIC_ESTIMATED_COST_LIMIT {
                        self.cel_errors.push(FieldError::forbidden(
                            &at("messageExpression"),
                            cost_error_message("estimated messageExpression cost", message_cost, STATIC_ESTIMATED_COST_LIMIT),
                        ));
                    }
                    self.observe(at("messageExpression"), message_cost);
                }
                _ => {}
            }
            if rule.uses_old_self() {
                if let Some(uncorrelatable) = &ctx.uncorrelatable {
                    self.cel_errors.push(FieldError::invalid(
                        &at("rule"),
                        &rule.rule,
                        format!("oldSelf cannot be used on the uncorrelatable portion of the schema within {uncorrelatable}"),
                    ));
                }
            } else if let Some(optional) = rule.optional_old_self {
                self.cel_errors.push(FieldError::invalid_unquoted(
                    &at("optionalOldSelf"),
                    if optional { "true" } else { "false" },
                    "may not be set if oldSelf is not used in rule",
                ));
            }
        }
    }
}
