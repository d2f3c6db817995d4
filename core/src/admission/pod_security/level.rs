//! Levels and versions of the Pod Security Standards, read as pod-security-admission
//! reads them from labels and configuration.

use std::fmt;

/// How much a pod is trusted: each level allows less than the one before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Level {
    Privileged,
    Baseline,
    Restricted,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Privileged => "privileged",
            Level::Baseline => "baseline",
            Level::Restricted => "restricted",
        }
    }

    /// Upstream's `ParseLevel`. On error it still names a level, restricted, so a
    /// mistyped enforce label fails closed; callers that fail open replace it.
    pub fn parse(text: &str) -> Result<Level, (Level, &'static str)> {
        match text {
            "privileged" => Ok(Level::Privileged),
            "baseline" => Ok(Level::Baseline),
            "restricted" => Ok(Level::Restricted),
            _ => Err((Level::Restricted, "must be one of privileged, baseline, restricted")),
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A version of the standards: `latest`, or the Kubernetes minor release `v1.x`
/// whose definition of the checks applies. Latest is newer than every `v1.x`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Version {
    V1(u64),
    Latest,
}

const VERSION_ERROR: &str = r#"must be "latest" or "v1.x""#;

impl Version {
    /// Upstream's `ParseVersion`: `latest`, or `v1.` and a minor without leading
    /// zeros that fits a Go int. On error it still answers latest.
    pub fn parse(text: &str) -> Result<Version, (Version, &'static str)> {
        if text == "latest" {
            return Ok(Version::Latest);
        }
        let invalid = Err((Version::Latest, VERSION_ERROR));
        let Some(minor) = text.strip_prefix("v1.") else { return invalid };
        let digits_only = !minor.is_empty() && minor.bytes().all(|b| b.is_ascii_digit());
        if !digits_only || (minor.len() > 1 && minor.starts_with('0')) {
            return invalid;
        }
        match minor.parse::<i64>() {
            Ok(n) => Ok(Version::V1(n as u64)),
            Err(_) => invalid,
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Version::Latest => f.write_str("latest"),
            Version::V1(minor) => write!(f, "v1.{minor}"),
        }
    }
}

/// A level at a version, printed `restricted:latest` as the messages name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LevelVersion {
    pub level: Level,
    pub version: Version,
}

impl LevelVersion {
    pub const fn new(level: Level, version: Version) -> LevelVersion {
        LevelVersion { level, version }
    }

    pub const fn privileged() -> LevelVersion {
        LevelVersion::new(Level::Privileged, Version::Latest)
    }
}

impl fmt::Display for LevelVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.level, self.version)
    }
}
