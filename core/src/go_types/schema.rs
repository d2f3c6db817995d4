//! The shape of the schema table in `table.rs`: one [`Message`] per protobuf message, its
//! fields in Go declaration order (the order Go's `encoding/json` writes them), each with
//! its protobuf number and type and the facts of its Go field that decide its JSON form.

/// How a message becomes JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// A Go struct: an object of its fields, by the rules of `encoding/json`.
    Struct,
    /// `meta/v1.Time`: RFC 3339 in UTC to the second, `null` when zero.
    Time,
    /// `meta/v1.MicroTime`: RFC 3339 in UTC with six fractional digits, `null` when zero.
    MicroTime,
    /// `meta/v1.Duration`: Go's duration string (`1h0m0s`). No kind served today reaches
    /// one; kept so a regenerated table that does needs no new code.
    #[allow(dead_code)]
    Duration,
    /// `resource.Quantity`: its string.
    Quantity,
    /// `intstr.IntOrString`: a number or a string.
    IntOrString,
    /// `runtime.RawExtension`: the raw bytes, which are JSON (or a nested protobuf object).
    RawExtension,
    /// `meta/v1.FieldsV1`: the raw bytes, which are JSON.
    RawJson,
    /// `apiextensions/v1.JSON`: the raw bytes, which are JSON.
    Json,
    /// `JSONSchemaPropsOrArray`: the array when it has items, else the schema.
    SchemaOrArray,
    /// `JSONSchemaPropsOrBool`: the schema when set, else the boolean.
    SchemaOrBool,
    /// `JSONSchemaPropsOrStringArray`: the strings when there are any, else the schema.
    SchemaOrStringArray,
    /// A Go named `[]string` (`ExtraValue`): its `items` as an array, `null` when none.
    StringList,
}

/// A field's protobuf type (for maps: the value's; keys are always strings).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ty {
    /// `string`: a JSON string.
    S,
    /// `bytes`: a base64 JSON string.
    BY,
    /// `bool`.
    B,
    /// `int32`.
    I32,
    /// `int64`: a JSON number, as Go writes it.
    I64,
    /// `double`.
    D,
    /// A message: its index in `MESSAGES`.
    M(u16),
}

/// The Go field has `omitempty`.
pub(crate) const OE: u8 = 1;
/// The Go field is a pointer: written whenever it is set, `null` (or omitted) when not.
pub(crate) const PTR: u8 = 2;
/// The Go field is embedded (`json:",inline"`): its fields are written into the parent.
pub(crate) const INLINE: u8 = 4;
/// `repeated`: a Go slice.
pub(crate) const REP: u8 = 8;
/// `map<string, T>`: a Go map.
pub(crate) const MAP: u8 = 16;

#[derive(Debug)]
pub(crate) struct Field {
    pub num: u32,
    /// The JSON name (`""` for an inline field).
    pub json: &'static str,
    pub ty: Ty,
    pub flags: u8,
}

impl Field {
    pub(crate) fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
}

#[derive(Debug)]
pub(crate) struct Message {
    /// `core.v1.Pod`: for error messages.
    pub name: &'static str,
    pub shape: Shape,
    pub fields: &'static [Field],
}

pub(crate) const fn f(num: u32, json: &'static str, ty: Ty, flags: u8) -> Field {
    Field {
        num,
        json,
        ty,
        flags,
    }
}

pub(crate) const fn m(name: &'static str, shape: Shape, fields: &'static [Field]) -> Message {
    Message {
        name,
        shape,
        fields,
    }
}
