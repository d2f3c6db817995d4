//! The Table columns of a custom resource, as upstream's CRD table convertor makes
//! them (apiextensions-apiserver `registry/customresource/tableconvertor`): Name, then
//! each of the version's `additionalPrinterColumns` — or Age alone when it declares
//! none — each cell the first thing the column's JSON path finds, shown by the
//! column's type.

use crate::jsonpath::{Item, JsonPath};
use crate::rest::object::Object;
use crate::rest::table::{date_cell, CREATION_TIMESTAMP_DESCRIPTION};
use serde_json::{json, Value};
use std::time::SystemTime;

/// The declared columns of one served version, their paths parsed once.
#[derive(Debug)]
pub struct PrinterColumns(Vec<PrinterColumn>);

#[derive(Debug)]
struct PrinterColumn {
    /// The column as a Table defines it: name, type, format, description, priority.
    definition: Value,
    shown_as: CellType,
    path: JsonPath,
}

/// How a column's type shows what its path found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CellType {
    Integer,
    Number,
    Boolean,
    String,
    Date,
    /// A type upstream does not know: its cells are empty.
    Other,
}

impl PrinterColumns {
    /// The columns of `version` (one of a CRD's `spec.versions`). A column whose path
    /// does not parse ends the list, as upstream's convertor stops at it.
    pub fn of(version: &Value) -> PrinterColumns {
        let declared = version.get("additionalPrinterColumns").and_then(Value::as_array).filter(|c| !c.is_empty());
        let Some(declared) = declared else {
            return PrinterColumns(vec![PrinterColumn {
                definition: definition("Age", "date", "", CREATION_TIMESTAMP_DESCRIPTION, 0),
                shown_as: CellType::Date,
                path: JsonPath::of_path(".metadata.creationTimestamp").unwrap_or_default(),
            }]);
        };
        let text = |c: &Value, key: &str| c.get(key).and_then(Value::as_str).unwrap_or("").to_owned();
        let columns = declared
            .iter()
            .map_while(|c| {
                let json_path = text(c, "jsonPath");
                let path = JsonPath::of_path(&json_path).ok()?;
                let description = match text(c, "description") {
                    d if d.is_empty() => format!("Custom resource definition column (in JSONPath format): {json_path}"),
                    d => d,
                };
                let kind = text(c, "type");
                let priority = c.get("priority").and_then(Value::as_i64).unwrap_or(0);
                Some(PrinterColumn {
                    definition: definition(&text(c, "name"), &kind, &text(c, "format"), &description, priority),
                    shown_as: CellType::of(&kind),
                    path,
                })
            })
            .collect();
        PrinterColumns(columns)
    }

    /// The columns' definitions, as a Table lists them after Name.
    pub fn definitions(&self) -> impl Iterator<Item = &Value> {
        self.0.iter().map(|c| &c.definition)
    }

    /// The cells of `obj`'s row after its name, dates read as of `now`.
    pub fn cells<'a>(&'a self, obj: &'a Object, now: SystemTime) -> impl Iterator<Item = Value> + 'a {
        self.0.iter().map(move |c| c.shown_as.cell(c.path.first_in(obj), now))
    }
}

fn definition(name: &str, kind: &str, format: &str, description: &str, priority: i64) -> Value {
    json!({"name": name, "type": kind, "format": format, "description": description, "priority": priority})
}

impl CellType {
    fn of(kind: &str) -> CellType {
        match kind {
            "integer" => CellType::Integer,
            "number" => CellType::Number,
            "boolean" => CellType::Boolean,
            "string" => CellType::String,
            "date" => CellType::Date,
            _ => CellType::Other,
        }
    }

    /// A cell from what the column's path found first (upstream's `cellForJSONValue`,
    /// and the printed result for strings): null when nothing was found or the value
    /// does not suit the type. Literals of the template count as Go types them: an
    /// integer literal is an `int`, which no column takes.
    fn cell(self, found: Option<Item<'_>>, now: SystemTime) -> Value {
        let Some(found) = found else { return Value::Null };
        match (self, found) {
            // Upstream prints the value alone, where a null reads as no value.
            (CellType::String, Item::Json(Value::Null)) => json!("<no value>"),
            (CellType::String, found) => json!(found.text()),
            (CellType::Integer, Item::Json(Value::Number(n))) => match n.as_i64() {
                Some(i) => json!(i),
                None => json!(go_int64(n.as_f64().unwrap_or(0.0))),
            },
            (CellType::Integer, Item::Float(f)) => json!(go_int64(f)),
            (CellType::Number, Item::Json(Value::Number(n))) => number(n.as_f64().unwrap_or(0.0)),
            (CellType::Number, Item::Float(f)) => number(f),
            (CellType::Boolean, Item::Json(Value::Bool(b))) => json!(b),
            (CellType::Boolean, Item::Bool(b)) => json!(b),
            (CellType::Date, Item::Json(Value::String(s))) => json!(date_cell(now, s)),
            (CellType::Date, Item::Text(s)) => json!(date_cell(now, s)),
            _ => Value::Null,
        }
    }
}

/// Go's `int64(f)` on amd64: truncated, and the lowest int64 for what does not fit.
fn go_int64(f: f64) -> i64 {
    if (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&f) {
        f as i64
    } else {
        i64::MIN
    }
}

/// A float64 cell, written as Go writes it: whole numbers without a point.
fn number(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 {
        json!(f as i64)
    } else {
        json!(f)
    }
}
