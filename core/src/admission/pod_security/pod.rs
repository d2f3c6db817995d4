//! The parts of a pod (or pod template) the checks read, over its JSON as Apiary
//! holds it. A field that is absent or `null` is unset, as it is for Go's pointers
//! after decoding; a value of the wrong type (which validation refuses before
//! admission) reads as unset too, so nothing here can fail.

use serde_json::{Map, Value};

/// A pod's metadata and spec, and whether checks relax for pods in a user namespace
/// (the `UserNamespacesPodSecurityStandards` feature, off by default in 1.33).
#[derive(Clone, Copy, Debug)]
pub struct Pod<'a> {
    pub metadata: &'a Value,
    pub spec: &'a Value,
    pub relax_for_user_namespaces: bool,
}

impl<'a> Pod<'a> {
    pub fn new(metadata: &'a Value, spec: &'a Value) -> Pod<'a> {
        Pod { metadata, spec, relax_for_user_namespaces: false }
    }

    /// Init containers, then containers, then ephemeral containers: the order every
    /// check lists them in.
    pub fn containers(&self) -> impl Iterator<Item = Container<'a>> + 'a {
        let spec = self.spec;
        ["initContainers", "containers", "ephemeralContainers"]
            .into_iter()
            .flat_map(move |key| array(spec, key).iter())
            .map(|value| Container { value })
    }

    pub fn security_context(&self) -> Option<&'a Map<String, Value>> {
        object(self.spec, "securityContext")
    }

    pub fn volumes(&self) -> &'a [Value] {
        array(self.spec, "volumes")
    }

    pub fn flag(&self, key: &str) -> bool {
        boolean(self.spec.get(key)) == Some(true)
    }

    /// `spec.os.name` is `windows`: checks Windows cannot honour are skipped from v1.25.
    pub fn windows(&self) -> bool {
        object(self.spec, "os").and_then(|os| os.get("name")).and_then(Value::as_str) == Some("windows")
    }

    /// In a user namespace (`hostUsers: false`) with the relaxation switched on.
    pub fn relaxed_for_user_namespace(&self) -> bool {
        self.relax_for_user_namespaces && boolean(self.spec.get("hostUsers")) == Some(false)
    }

    pub fn annotations(&self) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
        object(self.metadata, "annotations")
            .into_iter()
            .flat_map(|map| map.iter())
            .map(|(k, v)| (k.as_str(), v.as_str().unwrap_or("")))
    }

    pub fn annotation(&self, key: &str) -> Option<&'a str> {
        object(self.metadata, "annotations")?.get(key).map(|v| v.as_str().unwrap_or(""))
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Container<'a> {
    pub value: &'a Value,
}

impl<'a> Container<'a> {
    pub fn name(&self) -> &'a str {
        self.value.get("name").and_then(Value::as_str).unwrap_or("")
    }

    pub fn security_context(&self) -> Option<&'a Map<String, Value>> {
        object(self.value, "securityContext")
    }

    pub fn ports(&self) -> &'a [Value] {
        array(self.value, "ports")
    }
}

pub fn object<'a>(value: &'a Value, key: &str) -> Option<&'a Map<String, Value>> {
    value.get(key).and_then(Value::as_object)
}

pub fn field<'a>(map: Option<&'a Map<String, Value>>, key: &str) -> Option<&'a Value> {
    map?.get(key).filter(|v| !v.is_null())
}

pub fn sub_object<'a>(map: Option<&'a Map<String, Value>>, key: &str) -> Option<&'a Map<String, Value>> {
    map?.get(key).and_then(Value::as_object)
}

pub fn array<'a>(value: &'a Value, key: &str) -> &'a [Value] {
    value.get(key).and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[])
}

pub fn boolean(value: Option<&Value>) -> Option<bool> {
    value.and_then(Value::as_bool)
}

/// A string field of an object that is set (`""` when its key is absent, as Go's zero
/// value).
pub fn text<'a>(map: &'a Map<String, Value>, key: &str) -> &'a str {
    map.get(key).and_then(Value::as_str).unwrap_or("")
}

/// An integer field; a whole float counts, as Go's decoder would read it.
pub fn integer(value: Option<&Value>) -> Option<i64> {
    let value = value?;
    value.as_i64().or_else(|| value.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
}
