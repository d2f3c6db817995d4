//! The protobuf encoding of `/openapi/v2`: gnostic's `openapi.v2.Document`
//! (`github.com/google/gnostic-models/openapiv2/OpenAPIv2.proto`), which kubectl
//! downloads (`Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf`) to
//! validate manifests and to explain types.
//!
//! The message structs are written here by hand for `prost`, with the field numbers
//! of the published schema; only the Rust names are ours. [`Document::from_json`]
//! turns the Swagger JSON into the message as gnostic's compiler does:
//!
//! - maps become ordered `Named*` pairs in the JSON's key order;
//! - `x-` keys become `vendor_extension` entries whose value is YAML text (JSON is
//!   valid YAML, and clients read these values with a YAML parser);
//! - `default`, `example` and `enum` values are `Any`s carrying YAML text the same way;
//! - a parameter becomes a body parameter or one of the non-body kinds by its `in`;
//! - keys Swagger 2.0 does not define are dropped (gnostic rejects such documents; a
//!   valid document has none).

// The oneofs mirror the protobuf schema; boxing their large variants would only add
// allocations to a document that is encoded once.
#![allow(clippy::large_enum_variant)]

use serde_json::{Map, Value};

// ---------------------------------------------------------------------------------
// Messages.

/// `google.protobuf.Any`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ProtobufAny {
    #[prost(string, tag = "1")]
    pub type_url: String,
    #[prost(bytes = "vec", tag = "2")]
    pub value: Vec<u8>,
}

/// Any JSON value, as YAML text.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Any {
    #[prost(message, optional, tag = "1")]
    pub value: Option<ProtobufAny>,
    #[prost(string, tag = "2")]
    pub yaml: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct AdditionalPropertiesItem {
    #[prost(oneof = "additional_properties_item::Oneof", tags = "1, 2")]
    pub oneof: Option<additional_properties_item::Oneof>,
}

pub mod additional_properties_item {
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Oneof {
        #[prost(message, tag = "1")]
        Schema(Box<super::Schema>),
        #[prost(bool, tag = "2")]
        Boolean(bool),
    }
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ApiKeySecurity {
    #[prost(string, tag = "1")]
    pub r#type: String,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(string, tag = "3")]
    pub r#in: String,
    #[prost(string, tag = "4")]
    pub description: String,
    #[prost(message, repeated, tag = "5")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct BasicAuthenticationSecurity {
    #[prost(string, tag = "1")]
    pub r#type: String,
    #[prost(string, tag = "2")]
    pub description: String,
    #[prost(message, repeated, tag = "3")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct BodyParameter {
    #[prost(string, tag = "1")]
    pub description: String,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(string, tag = "3")]
    pub r#in: String,
    #[prost(bool, tag = "4")]
    pub required: bool,
    #[prost(message, optional, tag = "5")]
    pub schema: Option<Schema>,
    #[prost(message, repeated, tag = "6")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Contact {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub url: String,
    #[prost(string, tag = "3")]
    pub email: String,
    #[prost(message, repeated, tag = "4")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Definitions {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedSchema>,
}

/// The whole Swagger 2.0 document.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Document {
    #[prost(string, tag = "1")]
    pub swagger: String,
    #[prost(message, optional, tag = "2")]
    pub info: Option<Info>,
    #[prost(string, tag = "3")]
    pub host: String,
    #[prost(string, tag = "4")]
    pub base_path: String,
    #[prost(string, repeated, tag = "5")]
    pub schemes: Vec<String>,
    #[prost(string, repeated, tag = "6")]
    pub consumes: Vec<String>,
    #[prost(string, repeated, tag = "7")]
    pub produces: Vec<String>,
    #[prost(message, optional, tag = "8")]
    pub paths: Option<Paths>,
    #[prost(message, optional, tag = "9")]
    pub definitions: Option<Definitions>,
    #[prost(message, optional, tag = "10")]
    pub parameters: Option<ParameterDefinitions>,
    #[prost(message, optional, tag = "11")]
    pub responses: Option<ResponseDefinitions>,
    #[prost(message, repeated, tag = "12")]
    pub security: Vec<SecurityRequirement>,
    #[prost(message, optional, tag = "13")]
    pub security_definitions: Option<SecurityDefinitions>,
    #[prost(message, repeated, tag = "14")]
    pub tags: Vec<Tag>,
    #[prost(message, optional, tag = "15")]
    pub external_docs: Option<ExternalDocs>,
    #[prost(message, repeated, tag = "16")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Examples {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ExternalDocs {
    #[prost(string, tag = "1")]
    pub description: String,
    #[prost(string, tag = "2")]
    pub url: String,
    #[prost(message, repeated, tag = "3")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct FileSchema {
    #[prost(string, tag = "1")]
    pub format: String,
    #[prost(string, tag = "2")]
    pub title: String,
    #[prost(string, tag = "3")]
    pub description: String,
    #[prost(message, optional, tag = "4")]
    pub default: Option<Any>,
    #[prost(string, repeated, tag = "5")]
    pub required: Vec<String>,
    #[prost(string, tag = "6")]
    pub r#type: String,
    #[prost(bool, tag = "7")]
    pub read_only: bool,
    #[prost(message, optional, tag = "8")]
    pub external_docs: Option<ExternalDocs>,
    #[prost(message, optional, tag = "9")]
    pub example: Option<Any>,
    #[prost(message, repeated, tag = "10")]
    pub vendor_extension: Vec<NamedAny>,
}

/// The fields every non-body parameter kind shares, in the field numbers of each kind.
macro_rules! non_body_parameter {
    ($name:ident, allow_empty: $($ae:literal)?, tags: $req:literal $in_:literal $desc:literal $nm:literal
     $ty:literal $fmt:literal $items:literal $cf:literal $def:literal $max:literal $emax:literal
     $min:literal $emin:literal $maxl:literal $minl:literal $pat:literal $maxi:literal $mini:literal
     $uniq:literal $enm:literal $mult:literal $ext:literal) => {
        #[derive(Clone, PartialEq, prost::Message)]
        pub struct $name {
            #[prost(bool, tag = $req)]
            pub required: bool,
            #[prost(string, tag = $in_)]
            pub r#in: String,
            #[prost(string, tag = $desc)]
            pub description: String,
            #[prost(string, tag = $nm)]
            pub name: String,
            $(
                #[prost(bool, tag = $ae)]
                pub allow_empty_value: bool,
            )?
            #[prost(string, tag = $ty)]
            pub r#type: String,
            #[prost(string, tag = $fmt)]
            pub format: String,
            #[prost(message, optional, tag = $items)]
            pub items: Option<PrimitivesItems>,
            #[prost(string, tag = $cf)]
            pub collection_format: String,
            #[prost(message, optional, tag = $def)]
            pub default: Option<Any>,
            #[prost(double, tag = $max)]
            pub maximum: f64,
            #[prost(bool, tag = $emax)]
            pub exclusive_maximum: bool,
            #[prost(double, tag = $min)]
            pub minimum: f64,
            #[prost(bool, tag = $emin)]
            pub exclusive_minimum: bool,
            #[prost(int64, tag = $maxl)]
            pub max_length: i64,
            #[prost(int64, tag = $minl)]
            pub min_length: i64,
            #[prost(string, tag = $pat)]
            pub pattern: String,
            #[prost(int64, tag = $maxi)]
            pub max_items: i64,
            #[prost(int64, tag = $mini)]
            pub min_items: i64,
            #[prost(bool, tag = $uniq)]
            pub unique_items: bool,
            #[prost(message, repeated, tag = $enm)]
            pub r#enum: Vec<Any>,
            #[prost(double, tag = $mult)]
            pub multiple_of: f64,
            #[prost(message, repeated, tag = $ext)]
            pub vendor_extension: Vec<NamedAny>,
        }
    };
}

non_body_parameter!(FormDataParameterSubSchema, allow_empty: "5", tags: "1" "2" "3" "4"
    "6" "7" "8" "9" "10" "11" "12" "13" "14" "15" "16" "17" "18" "19" "20" "21" "22" "23");
non_body_parameter!(QueryParameterSubSchema, allow_empty: "5", tags: "1" "2" "3" "4"
    "6" "7" "8" "9" "10" "11" "12" "13" "14" "15" "16" "17" "18" "19" "20" "21" "22" "23");
non_body_parameter!(HeaderParameterSubSchema, allow_empty:, tags: "1" "2" "3" "4"
    "5" "6" "7" "8" "9" "10" "11" "12" "13" "14" "15" "16" "17" "18" "19" "20" "21" "22");
non_body_parameter!(PathParameterSubSchema, allow_empty:, tags: "1" "2" "3" "4"
    "5" "6" "7" "8" "9" "10" "11" "12" "13" "14" "15" "16" "17" "18" "19" "20" "21" "22");

#[derive(Clone, PartialEq, prost::Message)]
pub struct Header {
    #[prost(string, tag = "1")]
    pub r#type: String,
    #[prost(string, tag = "2")]
    pub format: String,
    #[prost(message, optional, tag = "3")]
    pub items: Option<PrimitivesItems>,
    #[prost(string, tag = "4")]
    pub collection_format: String,
    #[prost(message, optional, tag = "5")]
    pub default: Option<Any>,
    #[prost(double, tag = "6")]
    pub maximum: f64,
    #[prost(bool, tag = "7")]
    pub exclusive_maximum: bool,
    #[prost(double, tag = "8")]
    pub minimum: f64,
    #[prost(bool, tag = "9")]
    pub exclusive_minimum: bool,
    #[prost(int64, tag = "10")]
    pub max_length: i64,
    #[prost(int64, tag = "11")]
    pub min_length: i64,
    #[prost(string, tag = "12")]
    pub pattern: String,
    #[prost(int64, tag = "13")]
    pub max_items: i64,
    #[prost(int64, tag = "14")]
    pub min_items: i64,
    #[prost(bool, tag = "15")]
    pub unique_items: bool,
    #[prost(message, repeated, tag = "16")]
    pub r#enum: Vec<Any>,
    #[prost(double, tag = "17")]
    pub multiple_of: f64,
    #[prost(string, tag = "18")]
    pub description: String,
    #[prost(message, repeated, tag = "19")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Headers {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedHeader>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Info {
    #[prost(string, tag = "1")]
    pub title: String,
    #[prost(string, tag = "2")]
    pub version: String,
    #[prost(string, tag = "3")]
    pub description: String,
    #[prost(string, tag = "4")]
    pub terms_of_service: String,
    #[prost(message, optional, tag = "5")]
    pub contact: Option<Contact>,
    #[prost(message, optional, tag = "6")]
    pub license: Option<License>,
    #[prost(message, repeated, tag = "7")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ItemsItem {
    #[prost(message, repeated, tag = "1")]
    pub schema: Vec<Schema>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct JsonReference {
    #[prost(string, tag = "1")]
    pub xref: String,
    #[prost(string, tag = "2")]
    pub description: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct License {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub url: String,
    #[prost(message, repeated, tag = "3")]
    pub vendor_extension: Vec<NamedAny>,
}

/// Declares an ordered `(name, value)` pair message.
macro_rules! named {
    ($name:ident, $value:ty) => {
        #[derive(Clone, PartialEq, prost::Message)]
        pub struct $name {
            #[prost(string, tag = "1")]
            pub name: String,
            #[prost(message, optional, tag = "2")]
            pub value: Option<$value>,
        }
    };
}

named!(NamedAny, Any);
named!(NamedHeader, Header);
named!(NamedParameter, Parameter);
named!(NamedPathItem, PathItem);
named!(NamedResponse, Response);
named!(NamedResponseValue, ResponseValue);
named!(NamedSchema, Schema);
named!(NamedSecurityDefinitionsItem, SecurityDefinitionsItem);
named!(NamedStringArray, StringArray);

#[derive(Clone, PartialEq, prost::Message)]
pub struct NamedString {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub value: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct NonBodyParameter {
    #[prost(oneof = "non_body_parameter::Oneof", tags = "1, 2, 3, 4")]
    pub oneof: Option<non_body_parameter::Oneof>,
}

pub mod non_body_parameter {
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Oneof {
        #[prost(message, tag = "1")]
        HeaderParameterSubSchema(super::HeaderParameterSubSchema),
        #[prost(message, tag = "2")]
        FormDataParameterSubSchema(super::FormDataParameterSubSchema),
        #[prost(message, tag = "3")]
        QueryParameterSubSchema(super::QueryParameterSubSchema),
        #[prost(message, tag = "4")]
        PathParameterSubSchema(super::PathParameterSubSchema),
    }
}

/// The OAuth2 flows share one shape apart from their URLs.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Oauth2AccessCodeSecurity {
    #[prost(string, tag = "1")]
    pub r#type: String,
    #[prost(string, tag = "2")]
    pub flow: String,
    #[prost(message, optional, tag = "3")]
    pub scopes: Option<Oauth2Scopes>,
    #[prost(string, tag = "4")]
    pub authorization_url: String,
    #[prost(string, tag = "5")]
    pub token_url: String,
    #[prost(string, tag = "6")]
    pub description: String,
    #[prost(message, repeated, tag = "7")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Oauth2ApplicationSecurity {
    #[prost(string, tag = "1")]
    pub r#type: String,
    #[prost(string, tag = "2")]
    pub flow: String,
    #[prost(message, optional, tag = "3")]
    pub scopes: Option<Oauth2Scopes>,
    #[prost(string, tag = "4")]
    pub token_url: String,
    #[prost(string, tag = "5")]
    pub description: String,
    #[prost(message, repeated, tag = "6")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Oauth2ImplicitSecurity {
    #[prost(string, tag = "1")]
    pub r#type: String,
    #[prost(string, tag = "2")]
    pub flow: String,
    #[prost(message, optional, tag = "3")]
    pub scopes: Option<Oauth2Scopes>,
    #[prost(string, tag = "4")]
    pub authorization_url: String,
    #[prost(string, tag = "5")]
    pub description: String,
    #[prost(message, repeated, tag = "6")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Oauth2PasswordSecurity {
    #[prost(string, tag = "1")]
    pub r#type: String,
    #[prost(string, tag = "2")]
    pub flow: String,
    #[prost(message, optional, tag = "3")]
    pub scopes: Option<Oauth2Scopes>,
    #[prost(string, tag = "4")]
    pub token_url: String,
    #[prost(string, tag = "5")]
    pub description: String,
    #[prost(message, repeated, tag = "6")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Oauth2Scopes {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedString>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Operation {
    #[prost(string, repeated, tag = "1")]
    pub tags: Vec<String>,
    #[prost(string, tag = "2")]
    pub summary: String,
    #[prost(string, tag = "3")]
    pub description: String,
    #[prost(message, optional, tag = "4")]
    pub external_docs: Option<ExternalDocs>,
    #[prost(string, tag = "5")]
    pub operation_id: String,
    #[prost(string, repeated, tag = "6")]
    pub produces: Vec<String>,
    #[prost(string, repeated, tag = "7")]
    pub consumes: Vec<String>,
    #[prost(message, repeated, tag = "8")]
    pub parameters: Vec<ParametersItem>,
    #[prost(message, optional, tag = "9")]
    pub responses: Option<Responses>,
    #[prost(string, repeated, tag = "10")]
    pub schemes: Vec<String>,
    #[prost(bool, tag = "11")]
    pub deprecated: bool,
    #[prost(message, repeated, tag = "12")]
    pub security: Vec<SecurityRequirement>,
    #[prost(message, repeated, tag = "13")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Parameter {
    #[prost(oneof = "parameter::Oneof", tags = "1, 2")]
    pub oneof: Option<parameter::Oneof>,
}

pub mod parameter {
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Oneof {
        #[prost(message, tag = "1")]
        BodyParameter(super::BodyParameter),
        #[prost(message, tag = "2")]
        NonBodyParameter(super::NonBodyParameter),
    }
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ParameterDefinitions {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedParameter>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ParametersItem {
    #[prost(oneof = "parameters_item::Oneof", tags = "1, 2")]
    pub oneof: Option<parameters_item::Oneof>,
}

pub mod parameters_item {
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Oneof {
        #[prost(message, tag = "1")]
        Parameter(super::Parameter),
        #[prost(message, tag = "2")]
        JsonReference(super::JsonReference),
    }
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct PathItem {
    #[prost(string, tag = "1")]
    pub xref: String,
    #[prost(message, optional, tag = "2")]
    pub get: Option<Operation>,
    #[prost(message, optional, tag = "3")]
    pub put: Option<Operation>,
    #[prost(message, optional, tag = "4")]
    pub post: Option<Operation>,
    #[prost(message, optional, tag = "5")]
    pub delete: Option<Operation>,
    #[prost(message, optional, tag = "6")]
    pub options: Option<Operation>,
    #[prost(message, optional, tag = "7")]
    pub head: Option<Operation>,
    #[prost(message, optional, tag = "8")]
    pub patch: Option<Operation>,
    #[prost(message, repeated, tag = "9")]
    pub parameters: Vec<ParametersItem>,
    #[prost(message, repeated, tag = "10")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Paths {
    #[prost(message, repeated, tag = "1")]
    pub vendor_extension: Vec<NamedAny>,
    #[prost(message, repeated, tag = "2")]
    pub path: Vec<NamedPathItem>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct PrimitivesItems {
    #[prost(string, tag = "1")]
    pub r#type: String,
    #[prost(string, tag = "2")]
    pub format: String,
    #[prost(message, optional, boxed, tag = "3")]
    pub items: Option<Box<PrimitivesItems>>,
    #[prost(string, tag = "4")]
    pub collection_format: String,
    #[prost(message, optional, tag = "5")]
    pub default: Option<Any>,
    #[prost(double, tag = "6")]
    pub maximum: f64,
    #[prost(bool, tag = "7")]
    pub exclusive_maximum: bool,
    #[prost(double, tag = "8")]
    pub minimum: f64,
    #[prost(bool, tag = "9")]
    pub exclusive_minimum: bool,
    #[prost(int64, tag = "10")]
    pub max_length: i64,
    #[prost(int64, tag = "11")]
    pub min_length: i64,
    #[prost(string, tag = "12")]
    pub pattern: String,
    #[prost(int64, tag = "13")]
    pub max_items: i64,
    #[prost(int64, tag = "14")]
    pub min_items: i64,
    #[prost(bool, tag = "15")]
    pub unique_items: bool,
    #[prost(message, repeated, tag = "16")]
    pub r#enum: Vec<Any>,
    #[prost(double, tag = "17")]
    pub multiple_of: f64,
    #[prost(message, repeated, tag = "18")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Properties {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedSchema>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Response {
    #[prost(string, tag = "1")]
    pub description: String,
    #[prost(message, optional, tag = "2")]
    pub schema: Option<SchemaItem>,
    #[prost(message, optional, tag = "3")]
    pub headers: Option<Headers>,
    #[prost(message, optional, tag = "4")]
    pub examples: Option<Examples>,
    #[prost(message, repeated, tag = "5")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ResponseDefinitions {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedResponse>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ResponseValue {
    #[prost(oneof = "response_value::Oneof", tags = "1, 2")]
    pub oneof: Option<response_value::Oneof>,
}

pub mod response_value {
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Oneof {
        #[prost(message, tag = "1")]
        Response(super::Response),
        #[prost(message, tag = "2")]
        JsonReference(super::JsonReference),
    }
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Responses {
    #[prost(message, repeated, tag = "1")]
    pub response_code: Vec<NamedResponseValue>,
    #[prost(message, repeated, tag = "2")]
    pub vendor_extension: Vec<NamedAny>,
}

/// A JSON schema, as Swagger 2.0 restricts it.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Schema {
    #[prost(string, tag = "1")]
    pub xref: String,
    #[prost(string, tag = "2")]
    pub format: String,
    #[prost(string, tag = "3")]
    pub title: String,
    #[prost(string, tag = "4")]
    pub description: String,
    #[prost(message, optional, tag = "5")]
    pub default: Option<Any>,
    #[prost(double, tag = "6")]
    pub multiple_of: f64,
    #[prost(double, tag = "7")]
    pub maximum: f64,
    #[prost(bool, tag = "8")]
    pub exclusive_maximum: bool,
    #[prost(double, tag = "9")]
    pub minimum: f64,
    #[prost(bool, tag = "10")]
    pub exclusive_minimum: bool,
    #[prost(int64, tag = "11")]
    pub max_length: i64,
    #[prost(int64, tag = "12")]
    pub min_length: i64,
    #[prost(string, tag = "13")]
    pub pattern: String,
    #[prost(int64, tag = "14")]
    pub max_items: i64,
    #[prost(int64, tag = "15")]
    pub min_items: i64,
    #[prost(bool, tag = "16")]
    pub unique_items: bool,
    #[prost(int64, tag = "17")]
    pub max_properties: i64,
    #[prost(int64, tag = "18")]
    pub min_properties: i64,
    #[prost(string, repeated, tag = "19")]
    pub required: Vec<String>,
    #[prost(message, repeated, tag = "20")]
    pub r#enum: Vec<Any>,
    #[prost(message, optional, boxed, tag = "21")]
    pub additional_properties: Option<Box<AdditionalPropertiesItem>>,
    #[prost(message, optional, tag = "22")]
    pub r#type: Option<TypeItem>,
    #[prost(message, optional, tag = "23")]
    pub items: Option<ItemsItem>,
    #[prost(message, repeated, tag = "24")]
    pub all_of: Vec<Schema>,
    #[prost(message, optional, tag = "25")]
    pub properties: Option<Properties>,
    #[prost(string, tag = "26")]
    pub discriminator: String,
    #[prost(bool, tag = "27")]
    pub read_only: bool,
    #[prost(message, optional, tag = "28")]
    pub xml: Option<Xml>,
    #[prost(message, optional, tag = "29")]
    pub external_docs: Option<ExternalDocs>,
    #[prost(message, optional, tag = "30")]
    pub example: Option<Any>,
    #[prost(message, repeated, tag = "31")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct SchemaItem {
    #[prost(oneof = "schema_item::Oneof", tags = "1, 2")]
    pub oneof: Option<schema_item::Oneof>,
}

pub mod schema_item {
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Oneof {
        #[prost(message, tag = "1")]
        Schema(super::Schema),
        #[prost(message, tag = "2")]
        FileSchema(super::FileSchema),
    }
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct SecurityDefinitions {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedSecurityDefinitionsItem>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct SecurityDefinitionsItem {
    #[prost(oneof = "security_definitions_item::Oneof", tags = "1, 2, 3, 4, 5, 6")]
    pub oneof: Option<security_definitions_item::Oneof>,
}

pub mod security_definitions_item {
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Oneof {
        #[prost(message, tag = "1")]
        BasicAuthenticationSecurity(super::BasicAuthenticationSecurity),
        #[prost(message, tag = "2")]
        ApiKeySecurity(super::ApiKeySecurity),
        #[prost(message, tag = "3")]
        Oauth2ImplicitSecurity(super::Oauth2ImplicitSecurity),
        #[prost(message, tag = "4")]
        Oauth2PasswordSecurity(super::Oauth2PasswordSecurity),
        #[prost(message, tag = "5")]
        Oauth2ApplicationSecurity(super::Oauth2ApplicationSecurity),
        #[prost(message, tag = "6")]
        Oauth2AccessCodeSecurity(super::Oauth2AccessCodeSecurity),
    }
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct SecurityRequirement {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedStringArray>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct StringArray {
    #[prost(string, repeated, tag = "1")]
    pub value: Vec<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Tag {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub description: String,
    #[prost(message, optional, tag = "3")]
    pub external_docs: Option<ExternalDocs>,
    #[prost(message, repeated, tag = "4")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct TypeItem {
    #[prost(string, repeated, tag = "1")]
    pub value: Vec<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Xml {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub namespace: String,
    #[prost(string, tag = "3")]
    pub prefix: String,
    #[prost(bool, tag = "4")]
    pub attribute: bool,
    #[prost(bool, tag = "5")]
    pub wrapped: bool,
    #[prost(message, repeated, tag = "6")]
    pub vendor_extension: Vec<NamedAny>,
}

// ---------------------------------------------------------------------------------
// From the Swagger JSON.

/// YAML text for a JSON value: JSON written with a space after every `:` and `,`, which
/// YAML 1.1 and 1.2 parsers (gopkg.in/yaml.v2 and v3, sigs.k8s.io/yaml) read as the same
/// value.
pub fn yaml_text(value: &Value) -> String {
    fn write(out: &mut String, value: &Value) {
        match value {
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write(out, item);
                }
                out.push(']');
            }
            Value::Object(map) => {
                out.push('{');
                for (i, (k, v)) in map.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(&Value::from(k.as_str()).to_string());
                    out.push_str(": ");
                    write(out, v);
                }
                out.push('}');
            }
            scalar => out.push_str(&scalar.to_string()),
        }
    }
    let mut out = String::new();
    write(&mut out, value);
    out
}

pub(super) fn any(value: &Value) -> Any {
    Any {
        value: None,
        yaml: yaml_text(value),
    }
}

pub(super) fn text(o: &Map<String, Value>, key: &str) -> String {
    o.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

pub(super) fn flag(o: &Map<String, Value>, key: &str) -> bool {
    o.get(key).and_then(Value::as_bool).unwrap_or(false)
}

pub(super) fn number(o: &Map<String, Value>, key: &str) -> f64 {
    o.get(key).and_then(Value::as_f64).unwrap_or(0.0)
}

pub(super) fn integer(o: &Map<String, Value>, key: &str) -> i64 {
    o.get(key)
        .and_then(|v| v.as_i64().or_else(|| v.as_f64().map(|f| f as i64)))
        .unwrap_or(0)
}

pub(super) fn texts(o: &Map<String, Value>, key: &str) -> Vec<String> {
    match o.get(key) {
        Some(Value::Array(xs)) => xs
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        Some(Value::String(s)) => vec![s.clone()],
        _ => Vec::new(),
    }
}

pub(super) fn anys(o: &Map<String, Value>, key: &str) -> Vec<Any> {
    o.get(key)
        .and_then(Value::as_array)
        .map(|xs| xs.iter().map(any).collect())
        .unwrap_or_default()
}

pub(super) fn optional_any(o: &Map<String, Value>, key: &str) -> Option<Any> {
    o.get(key).map(any)
}

/// The `x-` keys of an object, in order.
pub(super) fn extensions(o: &Map<String, Value>) -> Vec<NamedAny> {
    o.iter()
        .filter(|(k, _)| k.starts_with("x-"))
        .map(|(k, v)| NamedAny {
            name: k.clone(),
            value: Some(any(v)),
        })
        .collect()
}

pub(super) fn object(value: &Value) -> &Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    value
        .as_object()
        .unwrap_or_else(|| EMPTY.get_or_init(Map::new))
}

fn external_docs(o: &Map<String, Value>) -> Option<ExternalDocs> {
    o.get("externalDocs").map(|v| {
        let d = object(v);
        ExternalDocs {
            description: text(d, "description"),
            url: text(d, "url"),
            vendor_extension: extensions(d),
        }
    })
}

fn primitives_items(v: &Value) -> PrimitivesItems {
    let o = object(v);
    PrimitivesItems {
        r#type: text(o, "type"),
        format: text(o, "format"),
        items: o.get("items").map(|i| Box::new(primitives_items(i))),
        collection_format: text(o, "collectionFormat"),
        default: optional_any(o, "default"),
        maximum: number(o, "maximum"),
        exclusive_maximum: flag(o, "exclusiveMaximum"),
        minimum: number(o, "minimum"),
        exclusive_minimum: flag(o, "exclusiveMinimum"),
        max_length: integer(o, "maxLength"),
        min_length: integer(o, "minLength"),
        pattern: text(o, "pattern"),
        max_items: integer(o, "maxItems"),
        min_items: integer(o, "minItems"),
        unique_items: flag(o, "uniqueItems"),
        r#enum: anys(o, "enum"),
        multiple_of: number(o, "multipleOf"),
        vendor_extension: extensions(o),
    }
}

impl Schema {
    /// A schema from its JSON.
    pub fn from_json(v: &Value) -> Schema {
        let o = object(v);
        let schemas = |key: &str| -> Vec<Schema> {
            match o.get(key) {
                Some(Value::Array(xs)) => xs.iter().map(Schema::from_json).collect(),
                Some(one @ Value::Object(_)) => vec![Schema::from_json(one)],
                _ => Vec::new(),
            }
        };
        Schema {
            xref: text(o, "$ref"),
            format: text(o, "format"),
            title: text(o, "title"),
            description: text(o, "description"),
            default: optional_any(o, "default"),
            multiple_of: number(o, "multipleOf"),
            maximum: number(o, "maximum"),
            exclusive_maximum: flag(o, "exclusiveMaximum"),
            minimum: number(o, "minimum"),
            exclusive_minimum: flag(o, "exclusiveMinimum"),
            max_length: integer(o, "maxLength"),
            min_length: integer(o, "minLength"),
            pattern: text(o, "pattern"),
            max_items: integer(o, "maxItems"),
            min_items: integer(o, "minItems"),
            unique_items: flag(o, "uniqueItems"),
            max_properties: integer(o, "maxProperties"),
            min_properties: integer(o, "minProperties"),
            required: texts(o, "required"),
            r#enum: anys(o, "enum"),
            additional_properties: o.get("additionalProperties").and_then(|a| {
                let oneof = match a {
                    Value::Bool(b) => additional_properties_item::Oneof::Boolean(*b),
                    Value::Object(_) => {
                        additional_properties_item::Oneof::Schema(Box::new(Schema::from_json(a)))
                    }
                    _ => return None,
                };
                Some(Box::new(AdditionalPropertiesItem { oneof: Some(oneof) }))
            }),
            r#type: o.contains_key("type").then(|| TypeItem {
                value: texts(o, "type"),
            }),
            items: o.contains_key("items").then(|| ItemsItem {
                schema: schemas("items"),
            }),
            all_of: schemas("allOf"),
            properties: o.get("properties").map(|p| Properties {
                additional_properties: object(p)
                    .iter()
                    .map(|(name, s)| NamedSchema {
                        name: name.clone(),
                        value: Some(Schema::from_json(s)),
                    })
                    .collect(),
            }),
            discriminator: text(o, "discriminator"),
            read_only: flag(o, "readOnly"),
            xml: o.get("xml").map(|x| {
                let x = object(x);
                Xml {
                    name: text(x, "name"),
                    namespace: text(x, "namespace"),
                    prefix: text(x, "prefix"),
                    attribute: flag(x, "attribute"),
                    wrapped: flag(x, "wrapped"),
                    vendor_extension: extensions(x),
                }
            }),
            external_docs: external_docs(o),
            example: optional_any(o, "example"),
            vendor_extension: extensions(o),
        }
    }
}

/// The fields of a non-body parameter; `$kind` names the message.
macro_rules! non_body_from {
    ($kind:ident, $o:expr $(, $ae:ident)?) => {{
        let o = $o;
        $kind {
            required: flag(o, "required"),
            r#in: text(o, "in"),
            description: text(o, "description"),
            name: text(o, "name"),
            $($ae: flag(o, "allowEmptyValue"),)?
            r#type: text(o, "type"),
            format: text(o, "format"),
            items: o.get("items").map(primitives_items),
            collection_format: text(o, "collectionFormat"),
            default: optional_any(o, "default"),
            maximum: number(o, "maximum"),
            exclusive_maximum: flag(o, "exclusiveMaximum"),
            minimum: number(o, "minimum"),
            exclusive_minimum: flag(o, "exclusiveMinimum"),
            max_length: integer(o, "maxLength"),
            min_length: integer(o, "minLength"),
            pattern: text(o, "pattern"),
            max_items: integer(o, "maxItems"),
            min_items: integer(o, "minItems"),
            unique_items: flag(o, "uniqueItems"),
            r#enum: anys(o, "enum"),
            multiple_of: number(o, "multipleOf"),
            vendor_extension: extensions(o),
        }
    }};
}

impl Parameter {
    /// A parameter (not a reference) from its JSON, by its `in`.
    pub fn from_json(v: &Value) -> Parameter {
        use non_body_parameter::Oneof as NonBody;
        let o = object(v);
        let oneof = match o.get("in").and_then(Value::as_str).unwrap_or("") {
            "body" => parameter::Oneof::BodyParameter(BodyParameter {
                description: text(o, "description"),
                name: text(o, "name"),
                r#in: text(o, "in"),
                required: flag(o, "required"),
                schema: o.get("schema").map(Schema::from_json),
                vendor_extension: extensions(o),
            }),
            location => {
                let kind = match location {
                    "header" => NonBody::HeaderParameterSubSchema(non_body_from!(
                        HeaderParameterSubSchema,
                        o
                    )),
                    "formData" => NonBody::FormDataParameterSubSchema(non_body_from!(
                        FormDataParameterSubSchema,
                        o,
                        allow_empty_value
                    )),
                    "path" => {
                        NonBody::PathParameterSubSchema(non_body_from!(PathParameterSubSchema, o))
                    }
                    _ => NonBody::QueryParameterSubSchema(non_body_from!(
                        QueryParameterSubSchema,
                        o,
                        allow_empty_value
                    )),
                };
                parameter::Oneof::NonBodyParameter(NonBodyParameter { oneof: Some(kind) })
            }
        };
        Parameter { oneof: Some(oneof) }
    }
}

fn parameters_items(v: Option<&Value>) -> Vec<ParametersItem> {
    let Some(Value::Array(items)) = v else {
        return Vec::new();
    };
    items
        .iter()
        .map(|p| {
            let o = object(p);
            let oneof = match o.get("$ref").and_then(Value::as_str) {
                Some(r) => parameters_item::Oneof::JsonReference(JsonReference {
                    xref: r.to_owned(),
                    description: text(o, "description"),
                }),
                None => parameters_item::Oneof::Parameter(Parameter::from_json(p)),
            };
            ParametersItem { oneof: Some(oneof) }
        })
        .collect()
}

fn responses(v: &Value) -> Responses {
    let o = object(v);
    Responses {
        response_code: o
            .iter()
            .filter(|(k, _)| !k.starts_with("x-"))
            .map(|(code, r)| {
                let ro = object(r);
                let oneof = match ro.get("$ref").and_then(Value::as_str) {
                    Some(reference) => response_value::Oneof::JsonReference(JsonReference {
                        xref: reference.to_owned(),
                        description: text(ro, "description"),
                    }),
                    None => response_value::Oneof::Response(response(r)),
                };
                NamedResponseValue {
                    name: code.clone(),
                    value: Some(ResponseValue { oneof: Some(oneof) }),
                }
            })
            .collect(),
        vendor_extension: extensions(o),
    }
}

fn response(v: &Value) -> Response {
    let o = object(v);
    Response {
        description: text(o, "description"),
        schema: o.get("schema").map(|s| SchemaItem {
            oneof: Some(if s.get("type").and_then(Value::as_str) == Some("file") {
                let f = object(s);
                schema_item::Oneof::FileSchema(FileSchema {
                    format: text(f, "format"),
                    title: text(f, "title"),
                    description: text(f, "description"),
                    default: optional_any(f, "default"),
                    required: texts(f, "required"),
                    r#type: text(f, "type"),
                    read_only: flag(f, "readOnly"),
                    external_docs: external_docs(f),
                    example: optional_any(f, "example"),
                    vendor_extension: extensions(f),
                })
            } else {
                schema_item::Oneof::Schema(Schema::from_json(s))
            }),
        }),
        headers: None,
        examples: None,
        vendor_extension: extensions(o),
    }
}

fn operation(v: &Value) -> Operation {
    let o = object(v);
    Operation {
        tags: texts(o, "tags"),
        summary: text(o, "summary"),
        description: text(o, "description"),
        external_docs: external_docs(o),
        operation_id: text(o, "operationId"),
        produces: texts(o, "produces"),
        consumes: texts(o, "consumes"),
        parameters: parameters_items(o.get("parameters")),
        responses: o.get("responses").map(responses),
        schemes: texts(o, "schemes"),
        deprecated: flag(o, "deprecated"),
        security: security(o.get("security")),
        vendor_extension: extensions(o),
    }
}

fn path_item(v: &Value) -> PathItem {
    let o = object(v);
    let op = |method: &str| o.get(method).map(operation);
    PathItem {
        xref: text(o, "$ref"),
        get: op("get"),
        put: op("put"),
        post: op("post"),
        delete: op("delete"),
        options: op("options"),
        head: op("head"),
        patch: op("patch"),
        parameters: parameters_items(o.get("parameters")),
        vendor_extension: extensions(o),
    }
}

fn security(v: Option<&Value>) -> Vec<SecurityRequirement> {
    let Some(Value::Array(reqs)) = v else {
        return Vec::new();
    };
    reqs.iter()
        .map(|r| SecurityRequirement {
            additional_properties: object(r)
                .iter()
                .map(|(name, scopes)| NamedStringArray {
                    name: name.clone(),
                    value: Some(StringArray {
                        value: scopes
                            .as_array()
                            .map(|s| {
                                s.iter()
                                    .filter_map(Value::as_str)
                                    .map(str::to_owned)
                                    .collect()
                            })
                            .unwrap_or_default(),
                    }),
                })
                .collect(),
        })
        .collect()
}

fn security_definition(v: &Value) -> SecurityDefinitionsItem {
    use security_definitions_item::Oneof;
    let o = object(v);
    let scopes = || {
        o.get("scopes").map(|s| Oauth2Scopes {
            additional_properties: object(s)
                .iter()
                .map(|(k, v)| NamedString {
                    name: k.clone(),
                    value: v.as_str().unwrap_or_default().to_owned(),
                })
                .collect(),
        })
    };
    let oneof = match (text(o, "type").as_str(), text(o, "flow").as_str()) {
        ("basic", _) => Oneof::BasicAuthenticationSecurity(BasicAuthenticationSecurity {
            r#type: text(o, "type"),
            description: text(o, "description"),
            vendor_extension: extensions(o),
        }),
        ("oauth2", "implicit") => Oneof::Oauth2ImplicitSecurity(Oauth2ImplicitSecurity {
            r#type: text(o, "type"),
            flow: text(o, "flow"),
            scopes: scopes(),
            authorization_url: text(o, "authorizationUrl"),
            description: text(o, "description"),
            vendor_extension: extensions(o),
        }),
        ("oauth2", "password") => Oneof::Oauth2PasswordSecurity(Oauth2PasswordSecurity {
            r#type: text(o, "type"),
            flow: text(o, "flow"),
            scopes: scopes(),
            token_url: text(o, "tokenUrl"),
            description: text(o, "description"),
            vendor_extension: extensions(o),
        }),
        ("oauth2", "application") => Oneof::Oauth2ApplicationSecurity(Oauth2ApplicationSecurity {
            r#type: text(o, "type"),
            flow: text(o, "flow"),
            scopes: scopes(),
            token_url: text(o, "tokenUrl"),
            description: text(o, "description"),
            vendor_extension: extensions(o),
        }),
        ("oauth2", _) => Oneof::Oauth2AccessCodeSecurity(Oauth2AccessCodeSecurity {
            r#type: text(o, "type"),
            flow: text(o, "flow"),
            scopes: scopes(),
            authorization_url: text(o, "authorizationUrl"),
            token_url: text(o, "tokenUrl"),
            description: text(o, "description"),
            vendor_extension: extensions(o),
        }),
        _ => Oneof::ApiKeySecurity(ApiKeySecurity {
            r#type: text(o, "type"),
            name: text(o, "name"),
            r#in: text(o, "in"),
            description: text(o, "description"),
            vendor_extension: extensions(o),
        }),
    };
    SecurityDefinitionsItem { oneof: Some(oneof) }
}

impl Document {
    /// The message for a Swagger 2.0 document in JSON.
    pub fn from_json(doc: &Value) -> Document {
        let o = object(doc);
        Document {
            swagger: text(o, "swagger"),
            info: o.get("info").map(|i| {
                let i = object(i);
                Info {
                    title: text(i, "title"),
                    version: text(i, "version"),
                    description: text(i, "description"),
                    terms_of_service: text(i, "termsOfService"),
                    contact: None,
                    license: None,
                    vendor_extension: extensions(i),
                }
            }),
            host: text(o, "host"),
            base_path: text(o, "basePath"),
            schemes: texts(o, "schemes"),
            consumes: texts(o, "consumes"),
            produces: texts(o, "produces"),
            paths: o.get("paths").map(|p| {
                let p = object(p);
                Paths {
                    vendor_extension: extensions(p),
                    path: p
                        .iter()
                        .filter(|(k, _)| !k.starts_with("x-"))
                        .map(|(name, item)| NamedPathItem {
                            name: name.clone(),
                            value: Some(path_item(item)),
                        })
                        .collect(),
                }
            }),
            definitions: o.get("definitions").map(|d| Definitions {
                additional_properties: object(d)
                    .iter()
                    .map(|(name, s)| NamedSchema {
                        name: name.clone(),
                        value: Some(Schema::from_json(s)),
                    })
                    .collect(),
            }),
            parameters: o.get("parameters").map(|ps| ParameterDefinitions {
                additional_properties: object(ps)
                    .iter()
                    .map(|(name, p)| NamedParameter {
                        name: name.clone(),
                        value: Some(Parameter::from_json(p)),
                    })
                    .collect(),
            }),
            responses: o.get("responses").map(|rs| ResponseDefinitions {
                additional_properties: object(rs)
                    .iter()
                    .map(|(name, r)| NamedResponse {
                        name: name.clone(),
                        value: Some(response(r)),
                    })
                    .collect(),
            }),
            security: security(o.get("security")),
            security_definitions: o.get("securityDefinitions").map(|s| SecurityDefinitions {
                additional_properties: object(s)
                    .iter()
                    .map(|(name, d)| NamedSecurityDefinitionsItem {
                        name: name.clone(),
                        value: Some(security_definition(d)),
                    })
                    .collect(),
            }),
            tags: o
                .get("tags")
                .and_then(Value::as_array)
                .map(|ts| {
                    ts.iter()
                        .map(|t| {
                            let t = object(t);
                            Tag {
                                name: text(t, "name"),
                                description: text(t, "description"),
                                external_docs: external_docs(t),
                                vendor_extension: extensions(t),
                            }
                        })
                        .collect()
                })
                .unwrap_or_default(),
            external_docs: external_docs(o),
            vendor_extension: extensions(o),
        }
    }
}
