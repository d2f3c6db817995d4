//! A conversion webhook's answer (`apiary_core::resources::customresources::conversion_review`)
//! is outside input: any status and body, read for a single object and for a list,
//! never panics; an answer it accepts gives objects in the desired version, of the
//! kind sent, with the metadata sent except labels and annotations.
//!
//! Input: the first byte picks the status (200, 201, 400, 500, 503, ...), the second
//! whether a list is converted; the rest is the answer's body. The fuzzer also learns
//! a well-formed answer: the seed corpus is one.

#![no_main]

use apiary_core::resources::customresources::conversion_review::{convert, Conversion};
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

fn widget(name: &str) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Widget",
           "metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}"), "resourceVersion": "7",
                        "labels": {"a": "1"}},
           "spec": {"colour": "red"}})
}

fuzz_target!(|data: &[u8]| {
    let (status, list, body) = match data {
        [s, l, rest @ ..] => ([200u16, 201, 204, 400, 404, 500, 503][*s as usize % 7], l & 1 == 1, rest),
        _ => return,
    };
    let input = if list {
        json!({"apiVersion": "example.com/v1", "kind": "WidgetList", "metadata": {},
               "items": [widget("a"), widget("b")]})
    } else {
        widget("a")
    };
    // The uid the seed's answer carries.
    let versions = ["v1".to_owned()];
    let Ok(Conversion::Send(review, _)) = convert(input.clone(), "example.com/v2", &versions, "u-1") else {
        panic!("objects in another version are sent");
    };
    let Ok(converted) = review.answer(status, body) else {
        return;
    };
    let (sent, got): (Vec<&Value>, Vec<&Value>) = if list {
        let items = converted["items"].as_array().expect("a list answers a list");
        (input["items"].as_array().unwrap().iter().collect(), items.iter().collect())
    } else {
        (vec![&input], vec![&converted])
    };
    assert_eq!(sent.len(), got.len());
    for (sent, got) in sent.iter().zip(got) {
        assert_eq!(got["apiVersion"], "example.com/v2");
        assert_eq!(got["kind"], sent["kind"]);
        let (mut a, mut b) = (sent["metadata"].clone(), got["metadata"].clone());
        for m in [&mut a, &mut b] {
            let m = m.as_object_mut().unwrap();
            m.remove("labels");
            m.remove("annotations");
        }
        assert_eq!(a, b, "metadata other than labels and annotations is the one sent");
    }
});
