//! What etcd sends the etcd backend: gRPC frames split across reads at random points,
//! each decoded as the responses the backend reads. Never panics; the frames taken are
//! the same however the bytes were split.
#![no_main]

use apiary_etcd::grpc::next_frame;
use apiary_etcd::proto;
use bytes::BytesMut;
use libfuzzer_sys::fuzz_target;
use prost::Message;

fn frames(data: &[u8], split: usize) -> (Vec<bytes::Bytes>, bool) {
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    for chunk in data.chunks(split.max(1)) {
        buf.extend_from_slice(chunk);
        loop {
            match next_frame(&mut buf) {
                Ok(Some(frame)) => out.push(frame),
                Ok(None) => break,
                Err(_) => return (out, true),
            }
        }
    }
    (out, false)
}

fuzz_target!(|data: &[u8]| {
    let Some((&split, data)) = data.split_first() else { return };
    let (split_frames, split_failed) = frames(data, split as usize);
    let (whole_frames, whole_failed) = frames(data, data.len());
    assert_eq!(split_frames, whole_frames);
    assert_eq!(split_failed, whole_failed);
    for frame in split_frames {
        let _ = proto::WatchResponse::decode(frame.clone());
        let _ = proto::RangeResponse::decode(frame.clone());
        let _ = proto::TxnResponse::decode(frame);
    }
});
