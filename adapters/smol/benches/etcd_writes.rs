//! Writes on the etcd backend, side by side with what etcd itself does, alternating in
//! one run against one etcd (Debian's etcd-server, started here on loopback ports):
//!
//! 1. creates per second over HTTPS from 64 concurrent clients against the release
//!    `apiary --storage etcd`;
//! 2. raw etcd Puts of the same size at the same concurrency, on one shared HTTP/2
//!    connection (apiary-etcd's gRPC client, straight to etcd);
//! 3. the same with the create-if-absent transaction apiary sends for a create.
//!
//! Run: `cargo bench -p apiary-smol --bench etcd_writes`

mod support;

use apiary_conformance::etcd::Etcd;
use apiary_etcd::grpc::{Channel, Endpoint};
use apiary_etcd::proto;
use bytes::Bytes;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::{create_concurrently, median, Server, CONNECTIONS};

const ROUND_TIME: Duration = Duration::from_secs(5);
const ROUNDS: usize = 3;

/// Puts of `value_len` bytes from [`CONNECTIONS`] tasks on one connection (or, with
/// `as_create`, the create-if-absent transactions apiary sends); per second.
fn raw_put_rate(url: &str, round: usize, value_len: usize, as_create: bool) -> f64 {
    smol::block_on(async {
        let endpoint = Endpoint::parse(url).unwrap();
        let channel = Channel::connect(&endpoint, None)
            .await
            .expect("connect to etcd");
        let done = Arc::new(AtomicUsize::new(0));
        let value = Bytes::from(vec![b'x'; value_len]);
        let begin = Instant::now();
        let tasks: Vec<_> = (0..CONNECTIONS)
            .map(|task| {
                let (channel, done, value) = (channel.clone(), done.clone(), value.clone());
                smol::spawn(async move {
                    for i in 0.. {
                        if begin.elapsed() >= ROUND_TIME {
                            break;
                        }
                        let put = proto::PutRequest {
                            key: format!(
                                "/registry/configmaps/default/raw-{as_create}-{round}-{task}-{i}"
                            )
                            .into_bytes(),
                            value: value.clone(),
                            prev_kv: false,
                        };
                        if as_create {
                            // What apiary sends for a create: put only if absent.
                            let txn = proto::TxnRequest {
                                compare: vec![proto::Compare {
                                    result: proto::compare_result::EQUAL,
                                    target: proto::compare_target::CREATE,
                                    key: put.key.clone(),
                                    target_union: Some(
                                        proto::compare::TargetUnion::CreateRevision(0),
                                    ),
                                }],
                                success: vec![proto::RequestOp {
                                    request: Some(proto::request_op::Request::Put(put)),
                                }],
                                failure: vec![],
                            };
                            channel
                                .unary::<_, proto::TxnResponse>(proto::path::TXN, &txn)
                                .await
                                .expect("txn");
                        } else {
                            channel
                                .unary::<_, proto::PutResponse>(proto::path::PUT, &put)
                                .await
                                .expect("put");
                        }
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await;
        }
        done.load(Ordering::Relaxed) as f64 / begin.elapsed().as_secs_f64()
    })
}

/// The size of the value apiary stores for a ConfigMap it created.
fn stored_size(url: &str) -> usize {
    smol::block_on(async {
        let channel = Channel::connect(&Endpoint::parse(url).unwrap(), None)
            .await
            .unwrap();
        let prefix = b"/registry/configmaps/default/warmup".to_vec();
        let mut end = prefix.clone();
        *end.last_mut().unwrap() += 1;
        let got: proto::RangeResponse = channel
            .unary(
                proto::path::RANGE,
                &proto::RangeRequest {
                    key: prefix,
                    range_end: end,
                    limit: 1,
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        got.kvs[0].value.len()
    })
}

fn main() {
    let dir = std::env::temp_dir().join(format!("apiary-bench-etcd-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let etcd = Etcd::start();
    let servers = format!("--etcd-servers={}", etcd.url());
    let server = Server::start_with(&dir, &["--storage", "etcd", &servers]);
    let pki = dir.join("pki");
    create_concurrently(&server, &pki, "warmup", |_, done| done >= 640);
    let value_len = stored_size(&etcd.url());
    println!("stored ConfigMap: {value_len} bytes");

    let (mut apiary_rates, mut raw_rates, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    let (mut txn_rates, mut txn_ratios) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let begin = Instant::now();
        let created = create_concurrently(&server, &pki, &format!("r{round}"), |begin, _| {
            begin.elapsed() >= ROUND_TIME
        });
        let rate = created as f64 / begin.elapsed().as_secs_f64();
        let raw = raw_put_rate(&etcd.url(), round, value_len, false);
        let txn = raw_put_rate(&etcd.url(), round, value_len, true);
        println!(
            "round {}: apiary {rate:.0} creates/s over HTTPS ({CONNECTIONS} clients); raw etcd ({CONNECTIONS} streams, one connection) {raw:.0} puts/s, {txn:.0} create transactions/s; ratio to puts {:.2}, to transactions {:.2}",
            round + 1,
            rate / raw,
            rate / txn
        );
        apiary_rates.push(rate);
        raw_rates.push(raw);
        txn_rates.push(txn);
        ratios.push(rate / raw);
        txn_ratios.push(rate / txn);
    }
    drop(server);
    drop(etcd);
    let _ = std::fs::remove_dir_all(&dir);
    println!();
    println!(
        "creates/s over HTTPS on etcd, {CONNECTIONS} clients (median): {:.0}",
        median(apiary_rates)
    );
    println!(
        "raw etcd puts/s, {CONNECTIONS} concurrent on one connection (median): {:.0}",
        median(raw_rates)
    );
    println!(
        "raw etcd create transactions/s, same concurrency (median): {:.0}",
        median(txn_rates)
    );
    println!(
        "ratio apiary / raw puts: {:.2}; apiary / raw create transactions: {:.2} (medians of the rounds' ratios)",
        median(ratios),
        median(txn_ratios)
    );
}
