//! Audit records over hostile requests and responses: whatever the body, headers and
//! URI, building a record and rendering every stage never panics, each event is one
//! JSON line, and at Metadata level no body appears.
#![no_main]

use apiary_core::audit::{Arrival, Level, Policy, Record};
use apiary_core::authn::UserInfo;
use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use std::time::{Duration, UNIX_EPOCH};

const METHODS: [&str; 5] = ["GET", "POST", "PUT", "PATCH", "DELETE"];
const CONTENT_TYPES: [&str; 4] = [
    "application/json",
    "application/vnd.kubernetes.protobuf",
    "application/apply-patch+yaml",
    "text/plain",
];

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    let (head, rest) = data.split_at(3);
    // The URI up to the first NUL, the body after it.
    let split = rest.iter().position(|b| *b == 0).unwrap_or(rest.len());
    let (uri, body) = (&rest[..split], rest.get(split + 1..).unwrap_or(&[]));
    let Ok(uri) = std::str::from_utf8(uri) else {
        return;
    };
    let Ok(request) = http::Request::builder()
        .method(METHODS[head[0] as usize % METHODS.len()])
        .uri(uri)
        .header(
            "content-type",
            CONTENT_TYPES[head[1] as usize % CONTENT_TYPES.len()],
        )
        .header("x-forwarded-for", "10.0.0.1, ::1, nonsense")
        .body(Bytes::copy_from_slice(body))
    else {
        return;
    };
    let level = ["Metadata", "Request", "RequestResponse"][head[2] as usize % 3];
    let policy = Policy::parse(
        format!("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: {level}\n  omitManagedFields: true\n")
            .as_bytes(),
    )
    .expect("a valid policy");
    let info = apiary_core::request_info::resolve(
        request.method(),
        request.uri().path(),
        request.uri().query(),
    );
    let user = UserInfo::system();
    let Some(record) = Record::new(
        &policy,
        Arrival {
            request: &request,
            info: &info,
            user: (head[2] & 0x80 == 0).then_some(&user),
            remote_addr: Some("127.0.0.1:1".parse().unwrap()),
            now: UNIX_EPOCH + Duration::from_micros(1),
            audit_id: "id".to_owned(),
        },
    ) else {
        return;
    };
    let response = http::Response::builder()
        .status(200 + u16::from(head[1]) % 400)
        .header("content-type", "application/json")
        .body(Bytes::copy_from_slice(body))
        .unwrap();
    let now = UNIX_EPOCH + Duration::from_secs(2);
    for line in [
        record.request_received(now),
        record.response_started(200, now),
        record.response_complete(&response, now),
        record.stream_complete(200, now),
        record.panic("boom", now),
    ]
    .into_iter()
    .flatten()
    {
        assert!(line.ends_with('\n') && !line[..line.len() - 1].contains('\n'));
        let event: serde_json::Value = serde_json::from_str(&line).expect("events are JSON");
        if record.level() == Level::Metadata {
            assert!(event.get("requestObject").is_none() && event.get("responseObject").is_none());
        }
    }
});
