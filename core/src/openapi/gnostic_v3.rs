//! The protobuf encoding of the `/openapi/v3/<key>` documents: gnostic's
//! `openapi.v3.Document` (`github.com/google/gnostic-models/openapiv3/OpenAPIv3.proto`),
//! which kube-apiserver serves to a client that accepts
//! `application/com.github.proto-openapi.spec.v3.v1.0+protobuf`.
//!
//! As in [`super::gnostic`] (the v2 form), the messages are written by hand for `prost`
//! with the field numbers of the published schema, and [`Document::from_json`] turns an
//! OpenAPI 3.0 JSON document into the message the way gnostic's compiler reads it:
//!
//! - maps become ordered `Named*` pairs in the JSON's key order; in `paths` only keys
//!   starting with `/`, in `responses` only `default` and three-character codes, count
//!   as entries, and `x-` keys there are extensions;
//! - `x-` keys become `specification_extension` entries whose value is YAML text: the
//!   flow-style text of v2's vendor extensions ([`super::gnostic::yaml_text`]), which
//!   every YAML parser reads as the value gnostic's block-style text holds, though the
//!   bytes differ from gnostic's there;
//! - an object with `$ref` is the `Reference` arm of a `*OrReference` oneof, any other
//!   object the value arm;
//! - a schema's `default` is a `DefaultType`: numbers, booleans and strings land in
//!   their arm, anything else (objects, arrays, null) is an empty `DefaultType`;
//!   `example` and each `enum` value are `Any`s;
//! - `additionalProperties` is a boolean or a schema-or-reference;
//! - keys OpenAPI 3.0 does not define are dropped. gnostic refuses such a document
//!   (kube-openapi then answers the protobuf request with an empty 200); the documents
//!   built here have none.

// The oneofs mirror the protobuf schema; boxing their large variants would only add
// allocations to a document that is encoded once.
#![allow(clippy::large_enum_variant)]

use super::gnostic::{any, anys, extensions, flag, integer, number, object, optional_any};
use super::gnostic::{text, texts};
use serde_json::{Map, Value};

/// `openapi.v3.Any` and `NamedAny` have the same fields and numbers as v2's, so the
/// v2 structs serve both packages.
pub use super::gnostic::{Any, NamedAny, ProtobufAny};

// ---------------------------------------------------------------------------------
// Messages.

/// A `*OrReference` oneof: the value message at 1, a `Reference` at 2.
macro_rules! or_reference {
    ($name:ident, $module:ident, $variant:ident, $value:ty) => {
        pub use $module::$name;

        // The message sits beside its oneof because prost names the oneof's type in a
        // string, which a macro cannot assemble.
        pub mod $module {
            #[derive(Clone, PartialEq, prost::Message)]
            pub struct $name {
                #[prost(oneof = "Oneof", tags = "1, 2")]
                pub oneof: Option<Oneof>,
            }

            #[derive(Clone, PartialEq, prost::Oneof)]
            pub enum Oneof {
                #[prost(message, tag = "1")]
                $variant(Box<$value>),
                #[prost(message, tag = "2")]
                Reference(super::Reference),
            }
        }
    };
}

/// A pair of a name (1) and a value message (2): one entry of a map.
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

/// A map as a message of one repeated field of pairs (1).
macro_rules! map_of {
    ($name:ident, $pair:ty) => {
        #[derive(Clone, PartialEq, prost::Message)]
        pub struct $name {
            #[prost(message, repeated, tag = "1")]
            pub additional_properties: Vec<$pair>,
        }
    };
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
        SchemaOrReference(Box<super::SchemaOrReference>),
        #[prost(bool, tag = "2")]
        Boolean(bool),
    }
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct AnyOrExpression {
    #[prost(oneof = "any_or_expression::Oneof", tags = "1, 2")]
    pub oneof: Option<any_or_expression::Oneof>,
}

pub mod any_or_expression {
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Oneof {
        #[prost(message, tag = "1")]
        Any(super::Any),
        #[prost(message, tag = "2")]
        Expression(super::Expression),
    }
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Callback {
    #[prost(message, repeated, tag = "1")]
    pub path: Vec<NamedPathItem>,
    #[prost(message, repeated, tag = "2")]
    pub specification_extension: Vec<NamedAny>,
}

or_reference!(
    CallbackOrReference,
    callback_or_reference,
    Callback,
    super::Callback
);
named!(NamedCallbackOrReference, CallbackOrReference);
map_of!(CallbacksOrReferences, NamedCallbackOrReference);

#[derive(Clone, PartialEq, prost::Message)]
pub struct Components {
    #[prost(message, optional, tag = "1")]
    pub schemas: Option<SchemasOrReferences>,
    #[prost(message, optional, tag = "2")]
    pub responses: Option<ResponsesOrReferences>,
    #[prost(message, optional, tag = "3")]
    pub parameters: Option<ParametersOrReferences>,
    #[prost(message, optional, tag = "4")]
    pub examples: Option<ExamplesOrReferences>,
    #[prost(message, optional, tag = "5")]
    pub request_bodies: Option<RequestBodiesOrReferences>,
    #[prost(message, optional, tag = "6")]
    pub headers: Option<HeadersOrReferences>,
    #[prost(message, optional, tag = "7")]
    pub security_schemes: Option<SecuritySchemesOrReferences>,
    #[prost(message, optional, tag = "8")]
    pub links: Option<LinksOrReferences>,
    #[prost(message, optional, tag = "9")]
    pub callbacks: Option<CallbacksOrReferences>,
    #[prost(message, repeated, tag = "10")]
    pub specification_extension: Vec<NamedAny>,
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
    pub specification_extension: Vec<NamedAny>,
}

/// A schema's `default`: only scalars have an arm.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DefaultType {
    #[prost(oneof = "default_type::Oneof", tags = "1, 2, 3")]
    pub oneof: Option<default_type::Oneof>,
}

pub mod default_type {
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Oneof {
        #[prost(double, tag = "1")]
        Number(f64),
        #[prost(bool, tag = "2")]
        Boolean(bool),
        #[prost(string, tag = "3")]
        String(String),
    }
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Discriminator {
    #[prost(string, tag = "1")]
    pub property_name: String,
    #[prost(message, optional, tag = "2")]
    pub mapping: Option<Strings>,
    #[prost(message, repeated, tag = "3")]
    pub specification_extension: Vec<NamedAny>,
}

/// The whole OpenAPI 3.0 document.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Document {
    #[prost(string, tag = "1")]
    pub openapi: String,
    #[prost(message, optional, tag = "2")]
    pub info: Option<Info>,
    #[prost(message, repeated, tag = "3")]
    pub servers: Vec<Server>,
    #[prost(message, optional, tag = "4")]
    pub paths: Option<Paths>,
    #[prost(message, optional, tag = "5")]
    pub components: Option<Components>,
    #[prost(message, repeated, tag = "6")]
    pub security: Vec<SecurityRequirement>,
    #[prost(message, repeated, tag = "7")]
    pub tags: Vec<Tag>,
    #[prost(message, optional, tag = "8")]
    pub external_docs: Option<ExternalDocs>,
    #[prost(message, repeated, tag = "9")]
    pub specification_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Encoding {
    #[prost(string, tag = "1")]
    pub content_type: String,
    #[prost(message, optional, tag = "2")]
    pub headers: Option<HeadersOrReferences>,
    #[prost(string, tag = "3")]
    pub style: String,
    #[prost(bool, tag = "4")]
    pub explode: bool,
    #[prost(bool, tag = "5")]
    pub allow_reserved: bool,
    #[prost(message, repeated, tag = "6")]
    pub specification_extension: Vec<NamedAny>,
}

named!(NamedEncoding, Encoding);
map_of!(Encodings, NamedEncoding);

#[derive(Clone, PartialEq, prost::Message)]
pub struct Example {
    #[prost(string, tag = "1")]
    pub summary: String,
    #[prost(string, tag = "2")]
    pub description: String,
    #[prost(message, optional, tag = "3")]
    pub value: Option<Any>,
    #[prost(string, tag = "4")]
    pub external_value: String,
    #[prost(message, repeated, tag = "5")]
    pub specification_extension: Vec<NamedAny>,
}

or_reference!(
    ExampleOrReference,
    example_or_reference,
    Example,
    super::Example
);
named!(NamedExampleOrReference, ExampleOrReference);
map_of!(ExamplesOrReferences, NamedExampleOrReference);
map_of!(Expression, NamedAny);

#[derive(Clone, PartialEq, prost::Message)]
pub struct ExternalDocs {
    #[prost(string, tag = "1")]
    pub description: String,
    #[prost(string, tag = "2")]
    pub url: String,
    #[prost(message, repeated, tag = "3")]
    pub specification_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Header {
    #[prost(string, tag = "1")]
    pub description: String,
    #[prost(bool, tag = "2")]
    pub required: bool,
    #[prost(bool, tag = "3")]
    pub deprecated: bool,
    #[prost(bool, tag = "4")]
    pub allow_empty_value: bool,
    #[prost(string, tag = "5")]
    pub style: String,
    #[prost(bool, tag = "6")]
    pub explode: bool,
    #[prost(bool, tag = "7")]
    pub allow_reserved: bool,
    #[prost(message, optional, tag = "8")]
    pub schema: Option<SchemaOrReference>,
    #[prost(message, optional, tag = "9")]
    pub example: Option<Any>,
    #[prost(message, optional, tag = "10")]
    pub examples: Option<ExamplesOrReferences>,
    #[prost(message, optional, tag = "11")]
    pub content: Option<MediaTypes>,
    #[prost(message, repeated, tag = "12")]
    pub specification_extension: Vec<NamedAny>,
}

or_reference!(
    HeaderOrReference,
    header_or_reference,
    Header,
    super::Header
);
named!(NamedHeaderOrReference, HeaderOrReference);
map_of!(HeadersOrReferences, NamedHeaderOrReference);

#[derive(Clone, PartialEq, prost::Message)]
pub struct Info {
    #[prost(string, tag = "1")]
    pub title: String,
    #[prost(string, tag = "2")]
    pub description: String,
    #[prost(string, tag = "3")]
    pub terms_of_service: String,
    #[prost(message, optional, tag = "4")]
    pub contact: Option<Contact>,
    #[prost(message, optional, tag = "5")]
    pub license: Option<License>,
    #[prost(string, tag = "6")]
    pub version: String,
    #[prost(message, repeated, tag = "7")]
    pub specification_extension: Vec<NamedAny>,
    #[prost(string, tag = "8")]
    pub summary: String,
}

/// A schema's `items`: gnostic reads one schema-or-reference into the list.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ItemsItem {
    #[prost(message, repeated, tag = "1")]
    pub schema_or_reference: Vec<SchemaOrReference>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct License {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub url: String,
    #[prost(message, repeated, tag = "3")]
    pub specification_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Link {
    #[prost(string, tag = "1")]
    pub operation_ref: String,
    #[prost(string, tag = "2")]
    pub operation_id: String,
    #[prost(message, optional, tag = "3")]
    pub parameters: Option<AnyOrExpression>,
    #[prost(message, optional, tag = "4")]
    pub request_body: Option<AnyOrExpression>,
    #[prost(string, tag = "5")]
    pub description: String,
    #[prost(message, optional, tag = "6")]
    pub server: Option<Server>,
    #[prost(message, repeated, tag = "7")]
    pub specification_extension: Vec<NamedAny>,
}

or_reference!(LinkOrReference, link_or_reference, Link, super::Link);
named!(NamedLinkOrReference, LinkOrReference);
map_of!(LinksOrReferences, NamedLinkOrReference);

#[derive(Clone, PartialEq, prost::Message)]
pub struct MediaType {
    #[prost(message, optional, tag = "1")]
    pub schema: Option<SchemaOrReference>,
    #[prost(message, optional, tag = "2")]
    pub example: Option<Any>,
    #[prost(message, optional, tag = "3")]
    pub examples: Option<ExamplesOrReferences>,
    #[prost(message, optional, tag = "4")]
    pub encoding: Option<Encodings>,
    #[prost(message, repeated, tag = "5")]
    pub specification_extension: Vec<NamedAny>,
}

named!(NamedMediaType, MediaType);
map_of!(MediaTypes, NamedMediaType);

#[derive(Clone, PartialEq, prost::Message)]
pub struct OauthFlow {
    #[prost(string, tag = "1")]
    pub authorization_url: String,
    #[prost(string, tag = "2")]
    pub token_url: String,
    #[prost(string, tag = "3")]
    pub refresh_url: String,
    #[prost(message, optional, tag = "4")]
    pub scopes: Option<Strings>,
    #[prost(message, repeated, tag = "5")]
    pub specification_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct OauthFlows {
    #[prost(message, optional, tag = "1")]
    pub implicit: Option<OauthFlow>,
    #[prost(message, optional, tag = "2")]
    pub password: Option<OauthFlow>,
    #[prost(message, optional, tag = "3")]
    pub client_credentials: Option<OauthFlow>,
    #[prost(message, optional, tag = "4")]
    pub authorization_code: Option<OauthFlow>,
    #[prost(message, repeated, tag = "5")]
    pub specification_extension: Vec<NamedAny>,
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
    #[prost(message, repeated, tag = "6")]
    pub parameters: Vec<ParameterOrReference>,
    #[prost(message, optional, tag = "7")]
    pub request_body: Option<RequestBodyOrReference>,
    #[prost(message, optional, tag = "8")]
    pub responses: Option<Responses>,
    #[prost(message, optional, tag = "9")]
    pub callbacks: Option<CallbacksOrReferences>,
    #[prost(bool, tag = "10")]
    pub deprecated: bool,
    #[prost(message, repeated, tag = "11")]
    pub security: Vec<SecurityRequirement>,
    #[prost(message, repeated, tag = "12")]
    pub servers: Vec<Server>,
    #[prost(message, repeated, tag = "13")]
    pub specification_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Parameter {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub r#in: String,
    #[prost(string, tag = "3")]
    pub description: String,
    #[prost(bool, tag = "4")]
    pub required: bool,
    #[prost(bool, tag = "5")]
    pub deprecated: bool,
    #[prost(bool, tag = "6")]
    pub allow_empty_value: bool,
    #[prost(string, tag = "7")]
    pub style: String,
    #[prost(bool, tag = "8")]
    pub explode: bool,
    #[prost(bool, tag = "9")]
    pub allow_reserved: bool,
    #[prost(message, optional, tag = "10")]
    pub schema: Option<SchemaOrReference>,
    #[prost(message, optional, tag = "11")]
    pub example: Option<Any>,
    #[prost(message, optional, tag = "12")]
    pub examples: Option<ExamplesOrReferences>,
    #[prost(message, optional, tag = "13")]
    pub content: Option<MediaTypes>,
    #[prost(message, repeated, tag = "14")]
    pub specification_extension: Vec<NamedAny>,
}

or_reference!(
    ParameterOrReference,
    parameter_or_reference,
    Parameter,
    super::Parameter
);
named!(NamedParameterOrReference, ParameterOrReference);
map_of!(ParametersOrReferences, NamedParameterOrReference);

#[derive(Clone, PartialEq, prost::Message)]
pub struct PathItem {
    #[prost(string, tag = "1")]
    pub xref: String,
    #[prost(string, tag = "2")]
    pub summary: String,
    #[prost(string, tag = "3")]
    pub description: String,
    #[prost(message, optional, tag = "4")]
    pub get: Option<Operation>,
    #[prost(message, optional, tag = "5")]
    pub put: Option<Operation>,
    #[prost(message, optional, tag = "6")]
    pub post: Option<Operation>,
    #[prost(message, optional, tag = "7")]
    pub delete: Option<Operation>,
    #[prost(message, optional, tag = "8")]
    pub options: Option<Operation>,
    #[prost(message, optional, tag = "9")]
    pub head: Option<Operation>,
    #[prost(message, optional, tag = "10")]
    pub patch: Option<Operation>,
    #[prost(message, optional, tag = "11")]
    pub trace: Option<Operation>,
    #[prost(message, repeated, tag = "12")]
    pub servers: Vec<Server>,
    #[prost(message, repeated, tag = "13")]
    pub parameters: Vec<ParameterOrReference>,
    #[prost(message, repeated, tag = "14")]
    pub specification_extension: Vec<NamedAny>,
}

named!(NamedPathItem, PathItem);

#[derive(Clone, PartialEq, prost::Message)]
pub struct Paths {
    #[prost(message, repeated, tag = "1")]
    pub path: Vec<NamedPathItem>,
    #[prost(message, repeated, tag = "2")]
    pub specification_extension: Vec<NamedAny>,
}

map_of!(Properties, NamedSchemaOrReference);

#[derive(Clone, PartialEq, prost::Message)]
pub struct Reference {
    #[prost(string, tag = "1")]
    pub xref: String,
    #[prost(string, tag = "2")]
    pub summary: String,
    #[prost(string, tag = "3")]
    pub description: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct RequestBody {
    #[prost(string, tag = "1")]
    pub description: String,
    #[prost(message, optional, tag = "2")]
    pub content: Option<MediaTypes>,
    #[prost(bool, tag = "3")]
    pub required: bool,
    #[prost(message, repeated, tag = "4")]
    pub specification_extension: Vec<NamedAny>,
}

or_reference!(
    RequestBodyOrReference,
    request_body_or_reference,
    RequestBody,
    super::RequestBody
);
named!(NamedRequestBodyOrReference, RequestBodyOrReference);
map_of!(RequestBodiesOrReferences, NamedRequestBodyOrReference);

#[derive(Clone, PartialEq, prost::Message)]
pub struct Response {
    #[prost(string, tag = "1")]
    pub description: String,
    #[prost(message, optional, tag = "2")]
    pub headers: Option<HeadersOrReferences>,
    #[prost(message, optional, tag = "3")]
    pub content: Option<MediaTypes>,
    #[prost(message, optional, tag = "4")]
    pub links: Option<LinksOrReferences>,
    #[prost(message, repeated, tag = "5")]
    pub specification_extension: Vec<NamedAny>,
}

or_reference!(
    ResponseOrReference,
    response_or_reference,
    Response,
    super::Response
);
named!(NamedResponseOrReference, ResponseOrReference);
map_of!(ResponsesOrReferences, NamedResponseOrReference);

/// An operation's responses: `default` apart, then one pair per status code.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Responses {
    #[prost(message, optional, tag = "1")]
    pub default: Option<ResponseOrReference>,
    #[prost(message, repeated, tag = "2")]
    pub response_or_reference: Vec<NamedResponseOrReference>,
    #[prost(message, repeated, tag = "3")]
    pub specification_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Schema {
    #[prost(bool, tag = "1")]
    pub nullable: bool,
    #[prost(message, optional, tag = "2")]
    pub discriminator: Option<Discriminator>,
    #[prost(bool, tag = "3")]
    pub read_only: bool,
    #[prost(bool, tag = "4")]
    pub write_only: bool,
    #[prost(message, optional, tag = "5")]
    pub xml: Option<Xml>,
    #[prost(message, optional, tag = "6")]
    pub external_docs: Option<ExternalDocs>,
    #[prost(message, optional, tag = "7")]
    pub example: Option<Any>,
    #[prost(bool, tag = "8")]
    pub deprecated: bool,
    #[prost(string, tag = "9")]
    pub title: String,
    #[prost(double, tag = "10")]
    pub multiple_of: f64,
    #[prost(double, tag = "11")]
    pub maximum: f64,
    #[prost(bool, tag = "12")]
    pub exclusive_maximum: bool,
    #[prost(double, tag = "13")]
    pub minimum: f64,
    #[prost(bool, tag = "14")]
    pub exclusive_minimum: bool,
    #[prost(int64, tag = "15")]
    pub max_length: i64,
    #[prost(int64, tag = "16")]
    pub min_length: i64,
    #[prost(string, tag = "17")]
    pub pattern: String,
    #[prost(int64, tag = "18")]
    pub max_items: i64,
    #[prost(int64, tag = "19")]
    pub min_items: i64,
    #[prost(bool, tag = "20")]
    pub unique_items: bool,
    #[prost(int64, tag = "21")]
    pub max_properties: i64,
    #[prost(int64, tag = "22")]
    pub min_properties: i64,
    #[prost(string, repeated, tag = "23")]
    pub required: Vec<String>,
    #[prost(message, repeated, tag = "24")]
    pub r#enum: Vec<Any>,
    #[prost(string, tag = "25")]
    pub r#type: String,
    #[prost(message, repeated, tag = "26")]
    pub all_of: Vec<SchemaOrReference>,
    #[prost(message, repeated, tag = "27")]
    pub one_of: Vec<SchemaOrReference>,
    #[prost(message, repeated, tag = "28")]
    pub any_of: Vec<SchemaOrReference>,
    #[prost(message, optional, boxed, tag = "29")]
    pub not: Option<Box<Schema>>,
    #[prost(message, optional, tag = "30")]
    pub items: Option<ItemsItem>,
    #[prost(message, optional, tag = "31")]
    pub properties: Option<Properties>,
    #[prost(message, optional, boxed, tag = "32")]
    pub additional_properties: Option<Box<AdditionalPropertiesItem>>,
    #[prost(message, optional, tag = "33")]
    pub default: Option<DefaultType>,
    #[prost(string, tag = "34")]
    pub description: String,
    #[prost(string, tag = "35")]
    pub format: String,
    #[prost(message, repeated, tag = "36")]
    pub specification_extension: Vec<NamedAny>,
}

or_reference!(
    SchemaOrReference,
    schema_or_reference,
    Schema,
    super::Schema
);
named!(NamedSchemaOrReference, SchemaOrReference);
map_of!(SchemasOrReferences, NamedSchemaOrReference);

named!(NamedStringArray, StringArray);
map_of!(SecurityRequirement, NamedStringArray);

#[derive(Clone, PartialEq, prost::Message)]
pub struct SecurityScheme {
    #[prost(string, tag = "1")]
    pub r#type: String,
    #[prost(string, tag = "2")]
    pub description: String,
    #[prost(string, tag = "3")]
    pub name: String,
    #[prost(string, tag = "4")]
    pub r#in: String,
    #[prost(string, tag = "5")]
    pub scheme: String,
    #[prost(string, tag = "6")]
    pub bearer_format: String,
    #[prost(message, optional, tag = "7")]
    pub flows: Option<OauthFlows>,
    #[prost(string, tag = "8")]
    pub open_id_connect_url: String,
    #[prost(message, repeated, tag = "9")]
    pub specification_extension: Vec<NamedAny>,
}

or_reference!(
    SecuritySchemeOrReference,
    security_scheme_or_reference,
    SecurityScheme,
    super::SecurityScheme
);
named!(NamedSecuritySchemeOrReference, SecuritySchemeOrReference);
map_of!(SecuritySchemesOrReferences, NamedSecuritySchemeOrReference);

#[derive(Clone, PartialEq, prost::Message)]
pub struct Server {
    #[prost(string, tag = "1")]
    pub url: String,
    #[prost(string, tag = "2")]
    pub description: String,
    #[prost(message, optional, tag = "3")]
    pub variables: Option<ServerVariables>,
    #[prost(message, repeated, tag = "4")]
    pub specification_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ServerVariable {
    #[prost(string, repeated, tag = "1")]
    pub r#enum: Vec<String>,
    #[prost(string, tag = "2")]
    pub default: String,
    #[prost(string, tag = "3")]
    pub description: String,
    #[prost(message, repeated, tag = "4")]
    pub specification_extension: Vec<NamedAny>,
}

named!(NamedServerVariable, ServerVariable);
map_of!(ServerVariables, NamedServerVariable);

/// In the schema, but gnostic's compiler reads `x-` values as [`Any`], never as this.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SpecificationExtension {
    #[prost(oneof = "specification_extension::Oneof", tags = "1, 2, 3")]
    pub oneof: Option<specification_extension::Oneof>,
}

pub mod specification_extension {
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Oneof {
        #[prost(double, tag = "1")]
        Number(f64),
        #[prost(bool, tag = "2")]
        Boolean(bool),
        #[prost(string, tag = "3")]
        String(String),
    }
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct StringArray {
    #[prost(string, repeated, tag = "1")]
    pub value: Vec<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct NamedString {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub value: String,
}

map_of!(Strings, NamedString);

#[derive(Clone, PartialEq, prost::Message)]
pub struct Tag {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub description: String,
    #[prost(message, optional, tag = "3")]
    pub external_docs: Option<ExternalDocs>,
    #[prost(message, repeated, tag = "4")]
    pub specification_extension: Vec<NamedAny>,
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
    pub specification_extension: Vec<NamedAny>,
}

// ---------------------------------------------------------------------------------
// From the JSON.

/// The `Reference` an object with `$ref` is. gnostic tries the value message first,
/// which refuses a `$ref` key, then the reference, which needs one.
fn reference(o: &Map<String, Value>) -> Option<Reference> {
    o.contains_key("$ref").then(|| Reference {
        xref: text(o, "$ref"),
        summary: text(o, "summary"),
        description: text(o, "description"),
    })
}

/// A `*OrReference` message for `v`, building the value arm with `value`.
macro_rules! or_reference_from {
    ($v:expr, $name:ident, $module:ident, $variant:ident, $value:expr) => {{
        let o = object($v);
        $name {
            oneof: Some(match reference(o) {
                Some(r) => $module::Oneof::Reference(r),
                None => $module::Oneof::$variant(Box::new($value(o))),
            }),
        }
    }};
}

/// Every entry of a JSON object, in order, as `Named*` pairs built by `value`.
fn pairs<T>(v: &Value, value: impl Fn(&str, &Value) -> T) -> Vec<T> {
    object(v).iter().map(|(k, x)| value(k, x)).collect()
}

/// The entries of `key` in `o` as a map message `M` of pairs built by `pair`.
fn map_at<T, M>(
    o: &Map<String, Value>,
    key: &str,
    pair: impl Fn(&str, &Value) -> T,
    wrap: impl FnOnce(Vec<T>) -> M,
) -> Option<M> {
    o.get(key).map(|v| wrap(pairs(v, pair)))
}

fn list<T>(o: &Map<String, Value>, key: &str, item: impl Fn(&Value) -> T) -> Vec<T> {
    o.get(key)
        .and_then(Value::as_array)
        .map(|xs| xs.iter().map(item).collect())
        .unwrap_or_default()
}

fn external_docs(o: &Map<String, Value>) -> Option<ExternalDocs> {
    o.get("externalDocs").map(|v| {
        let d = object(v);
        ExternalDocs {
            description: text(d, "description"),
            url: text(d, "url"),
            specification_extension: extensions(d),
        }
    })
}

fn strings(o: &Map<String, Value>, key: &str) -> Option<Strings> {
    map_at(
        o,
        key,
        |name, v| NamedString {
            name: name.to_owned(),
            value: v.as_str().unwrap_or_default().to_owned(),
        },
        |additional_properties| Strings {
            additional_properties,
        },
    )
}

/// A `default` as gnostic types it from the YAML tag of the value.
fn default_type(v: &Value) -> DefaultType {
    use default_type::Oneof;
    DefaultType {
        oneof: match v {
            Value::Bool(b) => Some(Oneof::Boolean(*b)),
            Value::String(s) => Some(Oneof::String(s.clone())),
            Value::Number(n) => n.as_f64().map(Oneof::Number),
            Value::Null | Value::Array(_) | Value::Object(_) => None,
        },
    }
}

impl SchemaOrReference {
    /// A schema, or the reference it is.
    pub fn from_json(v: &Value) -> SchemaOrReference {
        or_reference_from!(
            v,
            SchemaOrReference,
            schema_or_reference,
            Schema,
            Schema::from_object
        )
    }
}

fn schemas(o: &Map<String, Value>, key: &str) -> Vec<SchemaOrReference> {
    list(o, key, SchemaOrReference::from_json)
}

impl Schema {
    /// A schema from its JSON.
    pub fn from_json(v: &Value) -> Schema {
        Schema::from_object(object(v))
    }

    fn from_object(o: &Map<String, Value>) -> Schema {
        Schema {
            nullable: flag(o, "nullable"),
            discriminator: o.get("discriminator").map(|d| {
                let d = object(d);
                Discriminator {
                    property_name: text(d, "propertyName"),
                    mapping: strings(d, "mapping"),
                    specification_extension: extensions(d),
                }
            }),
            read_only: flag(o, "readOnly"),
            write_only: flag(o, "writeOnly"),
            xml: o.get("xml").map(|x| {
                let x = object(x);
                Xml {
                    name: text(x, "name"),
                    namespace: text(x, "namespace"),
                    prefix: text(x, "prefix"),
                    attribute: flag(x, "attribute"),
                    wrapped: flag(x, "wrapped"),
                    specification_extension: extensions(x),
                }
            }),
            external_docs: external_docs(o),
            example: optional_any(o, "example"),
            deprecated: flag(o, "deprecated"),
            title: text(o, "title"),
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
            r#type: text(o, "type"),
            all_of: schemas(o, "allOf"),
            one_of: schemas(o, "oneOf"),
            any_of: schemas(o, "anyOf"),
            not: o.get("not").map(|n| Box::new(Schema::from_json(n))),
            // One schema; gnostic refuses the tuple form OpenAPI 3.0 dropped.
            items: o.get("items").map(|i| ItemsItem {
                schema_or_reference: match i {
                    Value::Array(xs) => xs.iter().map(SchemaOrReference::from_json).collect(),
                    one => vec![SchemaOrReference::from_json(one)],
                },
            }),
            properties: map_at(
                o,
                "properties",
                |name, s| NamedSchemaOrReference {
                    name: name.to_owned(),
                    value: Some(SchemaOrReference::from_json(s)),
                },
                |additional_properties| Properties {
                    additional_properties,
                },
            ),
            additional_properties: o.get("additionalProperties").and_then(|a| {
                use additional_properties_item::Oneof;
                let oneof = match a {
                    Value::Bool(b) => Oneof::Boolean(*b),
                    Value::Object(_) => {
                        Oneof::SchemaOrReference(Box::new(SchemaOrReference::from_json(a)))
                    }
                    _ => return None,
                };
                Some(Box::new(AdditionalPropertiesItem { oneof: Some(oneof) }))
            }),
            default: o.get("default").map(default_type),
            description: text(o, "description"),
            format: text(o, "format"),
            specification_extension: extensions(o),
        }
    }
}

fn examples(o: &Map<String, Value>) -> Option<ExamplesOrReferences> {
    map_at(
        o,
        "examples",
        |name, v| NamedExampleOrReference {
            name: name.to_owned(),
            value: Some(or_reference_from!(
                v,
                ExampleOrReference,
                example_or_reference,
                Example,
                |e: &Map<String, Value>| Example {
                    summary: text(e, "summary"),
                    description: text(e, "description"),
                    value: optional_any(e, "value"),
                    external_value: text(e, "externalValue"),
                    specification_extension: extensions(e),
                }
            )),
        },
        |additional_properties| ExamplesOrReferences {
            additional_properties,
        },
    )
}

fn media_types(o: &Map<String, Value>) -> Option<MediaTypes> {
    map_at(
        o,
        "content",
        |name, v| {
            let m = object(v);
            NamedMediaType {
                name: name.to_owned(),
                value: Some(MediaType {
                    schema: m.get("schema").map(SchemaOrReference::from_json),
                    example: optional_any(m, "example"),
                    examples: examples(m),
                    encoding: map_at(
                        m,
                        "encoding",
                        |name, e| NamedEncoding {
                            name: name.to_owned(),
                            value: Some(encoding(object(e))),
                        },
                        |additional_properties| Encodings {
                            additional_properties,
                        },
                    ),
                    specification_extension: extensions(m),
                }),
            }
        },
        |additional_properties| MediaTypes {
            additional_properties,
        },
    )
}

fn encoding(e: &Map<String, Value>) -> Encoding {
    Encoding {
        content_type: text(e, "contentType"),
        headers: headers(e),
        style: text(e, "style"),
        explode: flag(e, "explode"),
        allow_reserved: flag(e, "allowReserved"),
        specification_extension: extensions(e),
    }
}

fn header(h: &Map<String, Value>) -> Header {
    Header {
        description: text(h, "description"),
        required: flag(h, "required"),
        deprecated: flag(h, "deprecated"),
        allow_empty_value: flag(h, "allowEmptyValue"),
        style: text(h, "style"),
        explode: flag(h, "explode"),
        allow_reserved: flag(h, "allowReserved"),
        schema: h.get("schema").map(SchemaOrReference::from_json),
        example: optional_any(h, "example"),
        examples: examples(h),
        content: media_types(h),
        specification_extension: extensions(h),
    }
}

fn headers(o: &Map<String, Value>) -> Option<HeadersOrReferences> {
    map_at(
        o,
        "headers",
        |name, v| NamedHeaderOrReference {
            name: name.to_owned(),
            value: Some(or_reference_from!(
                v,
                HeaderOrReference,
                header_or_reference,
                Header,
                header
            )),
        },
        |additional_properties| HeadersOrReferences {
            additional_properties,
        },
    )
}

fn server(v: &Value) -> Server {
    let s = object(v);
    Server {
        url: text(s, "url"),
        description: text(s, "description"),
        variables: map_at(
            s,
            "variables",
            |name, v| {
                let x = object(v);
                NamedServerVariable {
                    name: name.to_owned(),
                    value: Some(ServerVariable {
                        r#enum: texts(x, "enum"),
                        default: text(x, "default"),
                        description: text(x, "description"),
                        specification_extension: extensions(x),
                    }),
                }
            },
            |additional_properties| ServerVariables {
                additional_properties,
            },
        ),
        specification_extension: extensions(s),
    }
}

fn servers(o: &Map<String, Value>) -> Vec<Server> {
    list(o, "servers", server)
}

fn any_or_expression(v: &Value) -> AnyOrExpression {
    use any_or_expression::Oneof;
    // gnostic reads an object as an expression (its entries as `Any`s), else an `Any`.
    AnyOrExpression {
        oneof: Some(match v {
            Value::Object(m) => Oneof::Expression(Expression {
                additional_properties: m
                    .iter()
                    .map(|(k, x)| NamedAny {
                        name: k.clone(),
                        value: Some(any(x)),
                    })
                    .collect(),
            }),
            other => Oneof::Any(any(other)),
        }),
    }
}

fn links(o: &Map<String, Value>) -> Option<LinksOrReferences> {
    map_at(
        o,
        "links",
        |name, v| NamedLinkOrReference {
            name: name.to_owned(),
            value: Some(or_reference_from!(
                v,
                LinkOrReference,
                link_or_reference,
                Link,
                |l: &Map<String, Value>| Link {
                    operation_ref: text(l, "operationRef"),
                    operation_id: text(l, "operationId"),
                    parameters: l.get("parameters").map(any_or_expression),
                    request_body: l.get("requestBody").map(any_or_expression),
                    description: text(l, "description"),
                    server: l.get("server").map(server),
                    specification_extension: extensions(l),
                }
            )),
        },
        |additional_properties| LinksOrReferences {
            additional_properties,
        },
    )
}

fn response(r: &Map<String, Value>) -> Response {
    Response {
        description: text(r, "description"),
        headers: headers(r),
        content: media_types(r),
        links: links(r),
        specification_extension: extensions(r),
    }
}

fn response_or_reference(v: &Value) -> ResponseOrReference {
    or_reference_from!(
        v,
        ResponseOrReference,
        response_or_reference,
        Response,
        response
    )
}

/// Whether a `responses` key is a status code: three digits or `X`s (`200`, `4XX`).
fn is_status_code(key: &str) -> bool {
    key.len() == 3 && key.bytes().all(|b| b.is_ascii_digit() || b == b'X')
}

fn responses(v: &Value) -> Responses {
    let o = object(v);
    Responses {
        default: o.get("default").map(response_or_reference),
        response_or_reference: o
            .iter()
            .filter(|(k, _)| is_status_code(k))
            .map(|(k, r)| NamedResponseOrReference {
                name: k.clone(),
                value: Some(response_or_reference(r)),
            })
            .collect(),
        specification_extension: extensions(o),
    }
}

fn parameter(p: &Map<String, Value>) -> Parameter {
    Parameter {
        name: text(p, "name"),
        r#in: text(p, "in"),
        description: text(p, "description"),
        required: flag(p, "required"),
        deprecated: flag(p, "deprecated"),
        allow_empty_value: flag(p, "allowEmptyValue"),
        style: text(p, "style"),
        explode: flag(p, "explode"),
        allow_reserved: flag(p, "allowReserved"),
        schema: p.get("schema").map(SchemaOrReference::from_json),
        example: optional_any(p, "example"),
        examples: examples(p),
        content: media_types(p),
        specification_extension: extensions(p),
    }
}

fn parameter_or_reference(v: &Value) -> ParameterOrReference {
    or_reference_from!(
        v,
        ParameterOrReference,
        parameter_or_reference,
        Parameter,
        parameter
    )
}

fn request_body(b: &Map<String, Value>) -> RequestBody {
    RequestBody {
        description: text(b, "description"),
        content: media_types(b),
        required: flag(b, "required"),
        specification_extension: extensions(b),
    }
}

fn security(o: &Map<String, Value>) -> Vec<SecurityRequirement> {
    list(o, "security", |r| SecurityRequirement {
        additional_properties: pairs(r, |name, scopes| NamedStringArray {
            name: name.to_owned(),
            value: Some(StringArray {
                value: scopes
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect(),
            }),
        }),
    })
}

fn callbacks(o: &Map<String, Value>) -> Option<CallbacksOrReferences> {
    map_at(
        o,
        "callbacks",
        |name, v| NamedCallbackOrReference {
            name: name.to_owned(),
            value: Some(or_reference_from!(
                v,
                CallbackOrReference,
                callback_or_reference,
                Callback,
                |c: &Map<String, Value>| Callback {
                    // A callback's keys are runtime expressions, not `/` paths.
                    path: c
                        .iter()
                        .filter(|(k, _)| !k.starts_with("x-"))
                        .map(|(k, item)| NamedPathItem {
                            name: k.clone(),
                            value: Some(path_item(item)),
                        })
                        .collect(),
                    specification_extension: extensions(c),
                }
            )),
        },
        |additional_properties| CallbacksOrReferences {
            additional_properties,
        },
    )
}

fn operation(v: &Value) -> Operation {
    let o = object(v);
    Operation {
        tags: texts(o, "tags"),
        summary: text(o, "summary"),
        description: text(o, "description"),
        external_docs: external_docs(o),
        operation_id: text(o, "operationId"),
        parameters: list(o, "parameters", parameter_or_reference),
        request_body: o.get("requestBody").map(|b| {
            or_reference_from!(
                b,
                RequestBodyOrReference,
                request_body_or_reference,
                RequestBody,
                request_body
            )
        }),
        responses: o.get("responses").map(responses),
        callbacks: callbacks(o),
        deprecated: flag(o, "deprecated"),
        security: security(o),
        servers: servers(o),
        specification_extension: extensions(o),
    }
}

fn path_item(v: &Value) -> PathItem {
    let o = object(v);
    let op = |key: &str| o.get(key).map(operation);
    PathItem {
        xref: text(o, "$ref"),
        summary: text(o, "summary"),
        description: text(o, "description"),
        get: op("get"),
        put: op("put"),
        post: op("post"),
        delete: op("delete"),
        options: op("options"),
        head: op("head"),
        patch: op("patch"),
        trace: op("trace"),
        servers: servers(o),
        parameters: list(o, "parameters", parameter_or_reference),
        specification_extension: extensions(o),
    }
}

fn security_scheme(s: &Map<String, Value>) -> SecurityScheme {
    let flow = |f: &Map<String, Value>, key: &str| {
        f.get(key).map(|v| {
            let x = object(v);
            OauthFlow {
                authorization_url: text(x, "authorizationUrl"),
                token_url: text(x, "tokenUrl"),
                refresh_url: text(x, "refreshUrl"),
                scopes: strings(x, "scopes"),
                specification_extension: extensions(x),
            }
        })
    };
    SecurityScheme {
        r#type: text(s, "type"),
        description: text(s, "description"),
        name: text(s, "name"),
        r#in: text(s, "in"),
        scheme: text(s, "scheme"),
        bearer_format: text(s, "bearerFormat"),
        flows: s.get("flows").map(|f| {
            let f = object(f);
            OauthFlows {
                implicit: flow(f, "implicit"),
                password: flow(f, "password"),
                client_credentials: flow(f, "clientCredentials"),
                authorization_code: flow(f, "authorizationCode"),
                specification_extension: extensions(f),
            }
        }),
        open_id_connect_url: text(s, "openIdConnectUrl"),
        specification_extension: extensions(s),
    }
}

fn components(v: &Value) -> Components {
    let o = object(v);
    Components {
        schemas: map_at(
            o,
            "schemas",
            |name, s| NamedSchemaOrReference {
                name: name.to_owned(),
                value: Some(SchemaOrReference::from_json(s)),
            },
            |additional_properties| SchemasOrReferences {
                additional_properties,
            },
        ),
        responses: map_at(
            o,
            "responses",
            |name, r| NamedResponseOrReference {
                name: name.to_owned(),
                value: Some(response_or_reference(r)),
            },
            |additional_properties| ResponsesOrReferences {
                additional_properties,
            },
        ),
        parameters: map_at(
            o,
            "parameters",
            |name, p| NamedParameterOrReference {
                name: name.to_owned(),
                value: Some(parameter_or_reference(p)),
            },
            |additional_properties| ParametersOrReferences {
                additional_properties,
            },
        ),
        examples: examples(o),
        request_bodies: map_at(
            o,
            "requestBodies",
            |name, b| NamedRequestBodyOrReference {
                name: name.to_owned(),
                value: Some(or_reference_from!(
                    b,
                    RequestBodyOrReference,
                    request_body_or_reference,
                    RequestBody,
                    request_body
                )),
            },
            |additional_properties| RequestBodiesOrReferences {
                additional_properties,
            },
        ),
        headers: headers(o),
        security_schemes: map_at(
            o,
            "securitySchemes",
            |name, s| NamedSecuritySchemeOrReference {
                name: name.to_owned(),
                value: Some(or_reference_from!(
                    s,
                    SecuritySchemeOrReference,
                    security_scheme_or_reference,
                    SecurityScheme,
                    security_scheme
                )),
            },
            |additional_properties| SecuritySchemesOrReferences {
                additional_properties,
            },
        ),
        links: links(o),
        callbacks: callbacks(o),
        specification_extension: extensions(o),
    }
}

impl Document {
    /// The message for an OpenAPI 3.0 document in JSON.
    pub fn from_json(doc: &Value) -> Document {
        let o = object(doc);
        Document {
            openapi: text(o, "openapi"),
            info: o.get("info").map(|i| {
                let i = object(i);
                Info {
                    title: text(i, "title"),
                    description: text(i, "description"),
                    terms_of_service: text(i, "termsOfService"),
                    contact: i.get("contact").map(|c| {
                        let c = object(c);
                        Contact {
                            name: text(c, "name"),
                            url: text(c, "url"),
                            email: text(c, "email"),
                            specification_extension: extensions(c),
                        }
                    }),
                    license: i.get("license").map(|l| {
                        let l = object(l);
                        License {
                            name: text(l, "name"),
                            url: text(l, "url"),
                            specification_extension: extensions(l),
                        }
                    }),
                    version: text(i, "version"),
                    specification_extension: extensions(i),
                    summary: text(i, "summary"),
                }
            }),
            servers: servers(o),
            paths: o.get("paths").map(|p| {
                let p = object(p);
                Paths {
                    path: p
                        .iter()
                        .filter(|(k, _)| k.starts_with('/'))
                        .map(|(name, item)| NamedPathItem {
                            name: name.clone(),
                            value: Some(path_item(item)),
                        })
                        .collect(),
                    specification_extension: extensions(p),
                }
            }),
            components: o.get("components").map(components),
            security: security(o),
            tags: list(o, "tags", |t| {
                let t = object(t);
                Tag {
                    name: text(t, "name"),
                    description: text(t, "description"),
                    external_docs: external_docs(t),
                    specification_extension: extensions(t),
                }
            }),
            external_docs: external_docs(o),
            specification_extension: extensions(o),
        }
    }

    /// The protobuf bytes of an OpenAPI 3.0 document in JSON.
    pub fn encode_json(doc: &Value) -> Vec<u8> {
        prost::Message::encode_to_vec(&Document::from_json(doc))
    }
}
