//! StorageObjectInUseProtection: a new claim or volume carries the finalizer that
//! keeps it until nothing uses it (the protection controllers take it off).

use super::plugin::{Notes, Plugin};
use super::reads::Fetched;
use super::request::Request;
use super::{Context, Operation};
use crate::rest::object::{meta_mut, Object};
use crate::status::ApiError;
use serde_json::{json, Value};

#[derive(Debug)]
pub(super) struct StorageObjectInUseProtection;

fn finalizer(request: &Request) -> Option<&'static str> {
    match request.resource.as_str() {
        "persistentvolumeclaims" => Some("kubernetes.io/pvc-protection"),
        "persistentvolumes" => Some("kubernetes.io/pv-protection"),
        _ => None,
    }
}

impl Plugin for StorageObjectInUseProtection {
    fn handles(&self, request: &Request) -> bool {
        request.group.is_empty()
            && request.subresource.is_empty()
            && request.operation == Operation::Create
            && finalizer(request).is_some()
    }

    fn mutates(&self) -> bool {
        true
    }

    fn mutate(
        &self,
        _chain: &Context,
        request: &Request,
        object: &mut Object,
        _fetched: &Fetched,
        _notes: &mut Notes,
    ) -> Result<(), ApiError> {
        let Some(name) = finalizer(request) else { return Ok(()) };
        let list = meta_mut(object).entry("finalizers").or_insert_with(|| json!([]));
        if !list.is_array() {
            *list = json!([]);
        }
        let list = list.as_array_mut().expect("made a list above");
        if !list.iter().any(|f| f.as_str() == Some(name)) {
            list.push(Value::String(name.to_owned()));
        }
        Ok(())
    }
}
