use super::*;
use serde_json::json;

fn kind(name: &str) -> SchemaNode {
    let (group, version) = match name {
        "Deployment" | "ControllerRevision" => ("apps", "v1"),
        "CustomResourceDefinition" => ("apiextensions.k8s.io", "v1"),
        "PodDisruptionBudget" => ("policy", "v1"),
        _ => ("", "v1"),
    };
    SchemaNode::of_kind(group, version, name).unwrap_or_else(|| panic!("no schema for {name}"))
}

/// The outcome as the recorded cases write it: `{"ok": object}` or `{"error": message}`.
fn outcome(result: Result<Value, PatchError>) -> Value {
    match result {
        Ok(object) => json!({ "ok": object }),
        Err(PatchError::Malformed(m) | PatchError::NotApplicable(m) | PatchError::Internal(m)) => {
            json!({ "error": m })
        }
    }
}

/// Replay cases from a file (`SMP_CASES`, one `{"kind", "original", "patch"}` per
/// line) and write each outcome as a line to `SMP_OUT`: for comparing with another
/// implementation by hand.
#[test]
#[ignore]
fn replay_cases_from_env() {
    let (Ok(cases), Ok(out)) = (std::env::var("SMP_CASES"), std::env::var("SMP_OUT")) else {
        return;
    };
    let text = std::fs::read_to_string(cases).unwrap();
    let mut lines = Vec::new();
    for line in text.lines() {
        let case: Value = serde_json::from_str(line).unwrap();
        let schema = kind(case["kind"].as_str().unwrap());
        lines.push(
            outcome(strategic_merge_patch(
                &case["original"],
                &case["patch"],
                schema,
            ))
            .to_string(),
        );
    }
    std::fs::write(out, lines.join("\n") + "\n").unwrap();
}
