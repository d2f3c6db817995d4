//! Services through their strategy: any JSON body defaulted, validated and given its
//! IP families and (dry-run) allocated values as a create on a single-stack or a
//! dual-stack cluster, then updated to itself. Never panics; every error names a field
//! and builds a Status; a Service that passed its create passes the update to itself,
//! changes nothing by it, and holds only addresses of the cluster's ranges.
#![no_main]

use apiary_core::resources::claims::{Claim, ClaimContext};
use apiary_core::resources::services::Services;
use apiary_core::resources::Strategy;
use apiary_core::service_network::{PortRange, ServiceNetwork};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use std::time::UNIX_EPOCH;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, body)) = data.split_first() else { return };
    let Ok(Value::Object(mut obj)) = serde_json::from_slice::<Value>(body) else { return };
    let ranges = if pick & 1 == 0 { "10.96.0.0/16" } else { "fd00::/108,10.96.0.0/28" };
    let network = ServiceNetwork {
        cluster_ip_ranges: ServiceNetwork::parse_cluster_ip_ranges(ranges).unwrap(),
        node_ports: PortRange::default(),
    };
    let ctx = ClaimContext {
        network: network.clone(),
        storage_prefix: "/registry".into(),
        now: UNIX_EPOCH,
        entropy: [pick; 48],
        dry_run: true,
    };
    let meta = obj.entry("metadata").or_insert_with(|| serde_json::json!({}));
    if !meta.is_object() {
        *meta = serde_json::json!({});
    }
    meta["name"] = "fuzz".into();
    meta["namespace"] = "default".into();
    Services.prepare_for_create(&mut obj, true);
    let errs = Services.validate_create(&obj);
    for e in &errs {
        assert!(!e.field.is_empty(), "{e:?}");
    }
    if !errs.is_empty() {
        let _ = apiary_core::status::ApiError::invalid("", "Service", "fuzz", errs);
        return;
    }
    let created = match Services.claim(&ctx, obj, None) {
        Claim::Done(created) => created,
        Claim::Refused(e) => {
            assert!(e.code == 422 || e.code == 500, "{}", e.message);
            return;
        }
        Claim::Storage(..) => panic!("a dry run asks no storage"),
    };
    let spec = created["spec"].as_object().unwrap();
    for ip in spec.get("clusterIPs").and_then(Value::as_array).into_iter().flatten() {
        let ip = ip.as_str().unwrap();
        if ip != "None" {
            let ip: std::net::IpAddr = apiary_core::service_network::cidr::parse_ip(ip).unwrap();
            assert!(network.cluster_ip_ranges.iter().any(|r| r.index_of(&ip).is_some()), "{ip}");
        }
    }
    let mut again = created.clone();
    Services.prepare_for_update(&mut again, &created, true);
    assert_eq!(again, created, "an update to itself changes nothing");
    let errs = Services.validate_update(&again, &created);
    assert!(errs.is_empty(), "{errs:?} for {}", Value::Object(created.clone()));
    match Services.claim(&ctx, again, Some(&created)) {
        Claim::Done(updated) => assert_eq!(updated, created),
        other => panic!("{other:?}"),
    }
});
