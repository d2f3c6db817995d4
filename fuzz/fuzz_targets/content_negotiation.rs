//! Content negotiation over any header text: `Accept` as a resource endpoint and as a
//! path without resources reads it, go-restful's route check, and `Content-Type` as a
//! body's. Never panics; what it chooses is always something offered: protobuf only
//! where offered and never as a Table, a Table or metadata only only where transforms
//! are, a 406 naming exactly what the endpoint serves; and a choice's content types
//! are the serializer's.
//!
//! Layout: byte 0 picks `pretty`; the rest, as UTF-8 (lossy), is split at the first
//! `\n` into the Accept header and a Content-Type.

#![no_main]

use apiary_core::negotiation::{self, Format, Offer, Shape};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else { return };
    let text = String::from_utf8_lossy(rest);
    let (accept, content_type) = text.split_once('\n').unwrap_or((&text, ""));
    for offer in [Offer::RESOURCE, Offer::TEXT] {
        match negotiation::negotiate_output(Some(accept), flags & 1 == 1, offer) {
            Ok(out) => {
                assert!(offer.protobuf || out.format != Format::Protobuf, "{accept:?}");
                assert!(offer.transforms || out.shape == Shape::Object, "{accept:?}");
                assert!(!(out.format == Format::Protobuf && matches!(out.shape, Shape::Table(_))), "{accept:?}");
                assert!(!(out.format == Format::Protobuf && out.pretty));
                let expected = match out.format {
                    Format::Json => "application/json",
                    Format::Yaml => "application/yaml",
                    Format::Protobuf => "application/vnd.kubernetes.protobuf",
                };
                assert_eq!(out.content_type(), expected);
                assert!(out.watch_content_type().starts_with(expected));
            }
            Err(e) => {
                assert_eq!(e.code, 406);
                let served = if offer.protobuf { negotiation::SUPPORTED } else { negotiation::SUPPORTED_TEXT };
                assert_eq!(e.message, format!("only the following media types are accepted: {}", served.join(", ")));
            }
        }
    }
    // go-restful's check: a bare `*/*` range or any produced type passes.
    let produced = negotiation::route_produces(Some(accept), negotiation::SUPPORTED);
    if accept.split(',').any(|r| r.split(';').next().unwrap_or("").trim_matches(' ') == "*/*") {
        assert!(produced, "{accept:?}");
    }
    match negotiation::negotiate_input(Some(content_type)) {
        Ok(format) => assert_ne!(format, Format::Protobuf),
        Err(e) => assert_eq!(e.code, 415),
    }
});
