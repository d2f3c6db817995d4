//! A Service's `ipFamilies` and `ipFamilyPolicy`, completed from its cluster IPs and
//! the cluster's ranges as upstream's Service allocator completes them before it
//! allocates (`initIPFamilyFields`): they depend on the server's configuration, so
//! they are settled here rather than in the defaults.

use super::spec::{self, Spec};
use crate::service_network::cidr::parse_ip;
use crate::service_network::{Family, ServiceNetwork};
use crate::validation::FieldError;
use serde_json::{json, Value};

fn policy(spec: &Spec) -> Option<&str> {
    spec.get("ipFamilyPolicy").and_then(Value::as_str)
}

fn set_families(spec: &mut Spec, families: &[Family]) {
    let names: Vec<&str> = families.iter().map(|f| f.name()).collect();
    spec.insert("ipFamilies".into(), json!(names));
}

fn families(spec: &Spec) -> Vec<Family> {
    spec::strings_of(spec, "ipFamilies").iter().filter_map(|f| Family::parse(f)).collect()
}

fn other(family: Family) -> Family {
    match family {
        Family::IPv4 => Family::IPv6,
        Family::IPv6 => Family::IPv4,
    }
}

/// Complete `spec`'s families and policy (`old`: the stored spec of an update), or
/// say why they cannot be.
pub fn complete(spec: &mut Spec, old: Option<&Spec>, network: &ServiceNetwork) -> Result<(), Vec<FieldError>> {
    if !spec::needs_cluster_ip(spec) {
        return Ok(());
    }
    let errs = super::validation::cluster_ips_related(spec);
    if !errs.is_empty() {
        return Err(errs);
    }
    let configured = network.families();
    let mut errs = Vec::new();
    if let Some(old) = old {
        // An update that leaves the IPs and families alone keeps a dual-stack policy.
        let keeps = spec.get("ipFamilyPolicy").is_none_or(Value::is_null)
            && policy(old).is_some_and(|p| p != "SingleStack")
            && spec.get("clusterIPs") == old.get("clusterIPs")
            && spec.get("ipFamilies") == old.get("ipFamilies");
        if keeps {
            spec.insert("ipFamilyPolicy".into(), old["ipFamilyPolicy"].clone());
        }
        if policy(spec) == Some("SingleStack") {
            if spec.get("clusterIPs") == old.get("clusterIPs") {
                truncate(spec, "clusterIPs");
            }
            if spec.get("ipFamilies") == old.get("ipFamilies") {
                truncate(spec, "ipFamilies");
            }
        } else {
            let shown = spec.get("ipFamilyPolicy").cloned().unwrap_or(Value::Null);
            let fewer = |field: &str| spec::strings_of(spec, field).len() < spec::strings_of(old, field).len();
            if fewer("clusterIPs") && !spec::strings_of(spec, "clusterIPs").is_empty() {
                errs.push(FieldError::invalid_json("spec.ipFamilyPolicy", &shown, "must be 'SingleStack' to release the secondary cluster IP"));
            }
            if fewer("ipFamilies") && !spec::strings_of(spec, "ipFamilies").is_empty() {
                errs.push(FieldError::invalid_json("spec.ipFamilyPolicy", &shown, "must be 'SingleStack' to release the secondary IP family"));
            }
        }
    }
    if policy(spec) == Some("SingleStack") {
        let shown = json!("SingleStack");
        if spec::strings_of(spec, "clusterIPs").len() == 2 {
            let detail = "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified";
            errs.push(FieldError::invalid_json("spec.ipFamilyPolicy", &shown, detail));
        }
        if spec::strings_of(spec, "ipFamilies").len() == 2 {
            let detail = "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified";
            errs.push(FieldError::invalid_json("spec.ipFamilyPolicy", &shown, detail));
        }
    }
    // Families follow the IPs asked for.
    let ips = spec::strings_of(spec, "clusterIPs");
    let mut known = families(spec);
    for (i, ip) in ips.iter().enumerate() {
        if ip == "None" {
            break;
        }
        let Some(family) = parse_ip(ip).map(|ip| Family::of(&ip)) else { continue };
        if i >= known.len() {
            if configured.contains(&family) {
                known.push(family);
            } else {
                let shown = spec.get("clusterIPs").cloned().unwrap_or(Value::Null);
                let detail = format!("{} is not configured on this cluster", family.name());
                errs.push(FieldError::invalid_json(&format!("spec.clusterIPs[{i}]"), &shown, detail));
            }
        }
    }
    if !errs.is_empty() {
        return Err(errs);
    }
    if known.len() > families(spec).len() {
        set_families(spec, &known);
    }
    let primary = configured[0];
    // Headless without a selector: no IPs are allocated, so any families go.
    let selectorless = spec.get("selector").and_then(Value::as_object).is_none_or(|s| s.is_empty());
    if spec::headless(spec) && selectorless {
        let mut known = families(spec);
        if known.is_empty() {
            known.push(primary);
        }
        if policy(spec).is_none() {
            spec.insert("ipFamilyPolicy".into(), json!("RequireDualStack"));
        }
        if matches!(policy(spec), Some("PreferDualStack" | "RequireDualStack")) && known.len() == 1 {
            known.push(other(known[0]));
        }
        set_families(spec, &known);
        return Ok(());
    }
    if policy(spec) == Some("RequireDualStack") && configured.len() < 2 {
        errs.push(FieldError::invalid("spec.ipFamilyPolicy", "RequireDualStack", "this cluster is not configured for dual-stack services"));
    }
    for (i, family) in families(spec).iter().enumerate() {
        if !configured.contains(family) {
            errs.push(FieldError::invalid(&format!("spec.ipFamilies[{i}]"), family.name(), "not configured on this cluster"));
        }
    }
    if !errs.is_empty() {
        return Err(errs);
    }
    if policy(spec).is_none() {
        spec.insert("ipFamilyPolicy".into(), json!("SingleStack"));
    }
    let mut known = families(spec);
    if known.is_empty() {
        known.push(primary);
    }
    if policy(spec) != Some("SingleStack") && known.len() == 1 && configured.len() == 2 {
        known.push(other(known[0]));
    }
    set_families(spec, &known);
    Ok(())
}

fn truncate(spec: &mut Spec, field: &str) {
    if let Some(Value::Array(items)) = spec.get_mut(field) {
        items.truncate(1);
    }
}
