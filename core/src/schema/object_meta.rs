//! `metadata` of a custom resource read as an ObjectMeta, as upstream's apiextensions
//! server reads it (`objectmeta.GetObjectMetaWithOptions`): decoded on its own into the
//! Go type, so a value of the wrong type is Go's decoding error (`json: cannot unmarshal
//! string into Go struct field ObjectMeta.labels of type map[string]string`) and an
//! unknown field is dropped and, when asked, reported (`unknown field
//! "metadata.foo"`). The root's and every embedded resource's metadata go through it.

use super::decode::Cx;
use super::structure::{Schemas, TypeId};
use serde_json::Value;
use std::sync::OnceLock;

/// `metadata` decoded: what is kept, and the strict errors for unknown fields.
pub(crate) struct ObjectMeta {
    pub value: Value,
    pub unknown: Vec<String>,
}

/// Decode `metadata`, found at `path` (`metadata`, `spec.template.metadata`);
/// `report_unknown`: name unknown fields. The error is Go's decoding error.
pub(crate) fn decode(metadata: &Value, path: &str, report_unknown: bool) -> Result<ObjectMeta, String> {
    let schemas = Schemas::get();
    let mut cx = Cx::new(schemas, report_unknown).at(path);
    let value = match cx.decode(object_meta(schemas), metadata) {
        Ok(value) => value,
        Err(e) => return Err(cx.fatal.take().unwrap_or_else(|| e.to_string())),
    };
    if let Some(error) = cx.error.take() {
        return Err(error);
    }
    Ok(ObjectMeta { value, unknown: std::mem::take(&mut cx.strict) })
}

fn object_meta(schemas: &Schemas) -> TypeId {
    static ID: OnceLock<TypeId> = OnceLock::new();
    *ID.get_or_init(|| {
        schemas
            .named("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
            .expect("the generated definitions have ObjectMeta")
    })
}
