//! /version: the Kubernetes version Apiary serves the API of.

use serde_json::{json, Value};

/// The Kubernetes release whose API Apiary serves.
pub const GIT_VERSION: &str = "v1.33.0";

/// The /version document.
pub fn info() -> Value {
    json!({
        "major": "1",
        "minor": "33",
        "emulationMajor": "1",
        "emulationMinor": "33",
        "minCompatibilityMajor": "1",
        "minCompatibilityMinor": "32",
        "gitVersion": GIT_VERSION,
        "gitCommit": "",
        "gitTreeState": "clean",
        "buildDate": "1970-01-01T00:00:00Z",
        "goVersion": concat!("apiary ", env!("CARGO_PKG_VERSION")),
        "compiler": "rustc",
        "platform": format!("{}/{}", std::env::consts::OS, go_arch(std::env::consts::ARCH)),
    })
}

/// Architecture names as Go spells them, which clients print.
fn go_arch(arch: &str) -> &str {
    match arch {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        other => other,
    }
}
