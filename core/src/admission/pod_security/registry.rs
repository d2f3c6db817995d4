//! Which checks run for a level at a version, and in what order, as
//! pod-security-admission's registry lays them out: each check has versions from
//! which a definition applies; restricted runs its own checks and the baseline
//! ones it does not replace; checks run baseline first, each level's by ID.

use super::checks::{self as c, CheckFn, Violation};
use super::level::{Level, LevelVersion, Version};
use super::pod::Pod;

/// One definition of a check, applying from `since` (a v1 minor) until the next.
struct Definition {
    since: u64,
    check: CheckFn,
    /// Baseline checks this restricted definition replaces.
    replaces: &'static [&'static str],
}

struct Check {
    id: &'static str,
    level: Level,
    definitions: &'static [Definition],
}

const fn def(since: u64, check: CheckFn) -> Definition {
    Definition { since, check, replaces: &[] }
}

const fn replacing(since: u64, check: CheckFn, replaces: &'static [&'static str]) -> Definition {
    Definition { since, check, replaces }
}

/// Every check, sorted as upstream orders them: baseline IDs, then restricted IDs,
/// each by byte order.
const CHECKS: &[Check] = &[
    Check { id: "appArmorProfile", level: Level::Baseline, definitions: &[def(0, c::app_armor_profile)] },
    Check { id: "capabilities_baseline", level: Level::Baseline, definitions: &[def(0, c::capabilities_baseline)] },
    Check { id: "hostNamespaces", level: Level::Baseline, definitions: &[def(0, c::host_namespaces)] },
    Check { id: "hostPathVolumes", level: Level::Baseline, definitions: &[def(0, c::host_path_volumes)] },
    Check { id: "hostPorts", level: Level::Baseline, definitions: &[def(0, c::host_ports)] },
    Check { id: "privileged", level: Level::Baseline, definitions: &[def(0, c::privileged)] },
    Check { id: "procMount", level: Level::Baseline, definitions: &[def(0, c::proc_mount)] },
    Check {
        id: "seLinuxOptions",
        level: Level::Baseline,
        definitions: &[def(0, c::se_linux_options_1_0), def(31, c::se_linux_options_1_31)],
    },
    Check {
        id: "seccompProfile_baseline",
        level: Level::Baseline,
        definitions: &[def(0, c::seccomp_baseline_1_0), def(19, c::seccomp_baseline_1_19)],
    },
    Check {
        id: "sysctls",
        level: Level::Baseline,
        definitions: &[def(0, c::sysctls_1_0), def(27, c::sysctls_1_27), def(29, c::sysctls_1_29), def(32, c::sysctls_1_32)],
    },
    Check { id: "windowsHostProcess", level: Level::Baseline, definitions: &[def(0, c::windows_host_process)] },
    Check {
        id: "allowPrivilegeEscalation",
        level: Level::Restricted,
        definitions: &[def(8, c::allow_privilege_escalation_1_8), def(25, c::allow_privilege_escalation_1_25)],
    },
    Check {
        id: "capabilities_restricted",
        level: Level::Restricted,
        definitions: &[
            replacing(22, c::capabilities_restricted_1_22, &["capabilities_baseline"]),
            replacing(25, c::capabilities_restricted_1_25, &["capabilities_baseline"]),
        ],
    },
    Check {
        id: "restrictedVolumes",
        level: Level::Restricted,
        definitions: &[replacing(0, c::restricted_volumes, &["hostPathVolumes"])],
    },
    Check { id: "runAsNonRoot", level: Level::Restricted, definitions: &[def(0, c::run_as_non_root)] },
    Check { id: "runAsUser", level: Level::Restricted, definitions: &[def(23, c::run_as_user)] },
    Check {
        id: "seccompProfile_restricted",
        level: Level::Restricted,
        definitions: &[
            replacing(19, c::seccomp_restricted_1_19, &["seccompProfile_baseline"]),
            replacing(25, c::seccomp_restricted_1_25, &["seccompProfile_baseline"]),
        ],
    },
];

/// The newest version any check changes at; later versions and latest evaluate as it.
pub const NEWEST_CHECK_VERSION: u64 = 32;

/// The definition of `check` in force at minor `minor`, if it exists yet.
fn definition_at(check: &Check, minor: u64) -> Option<&Definition> {
    check.definitions.iter().rev().find(|d| d.since <= minor)
}

fn minor_of(version: Version) -> u64 {
    match version {
        Version::V1(minor) => minor.min(NEWEST_CHECK_VERSION),
        Version::Latest => NEWEST_CHECK_VERSION,
    }
}

/// The checks a level runs at a version, by ID, in order. Privileged runs none.
pub fn checks_for(level_version: LevelVersion) -> Vec<(&'static str, CheckFn)> {
    if level_version.level == Level::Privileged {
        return Vec::new();
    }
    let minor = minor_of(level_version.version);
    let restricted = level_version.level == Level::Restricted;
    let replaced: Vec<&str> = if restricted {
        CHECKS
            .iter()
            .filter(|check| check.level == Level::Restricted)
            .filter_map(|check| definition_at(check, minor))
            .flat_map(|d| d.replaces.iter().copied())
            .collect()
    } else {
        Vec::new()
    };
    CHECKS
        .iter()
        .filter(|check| check.level == Level::Baseline || restricted)
        .filter(|check| !replaced.contains(&check.id))
        .filter_map(|check| definition_at(check, minor).map(|d| (check.id, d.check)))
        .collect()
}

/// Each failing check's violation, in order.
pub fn evaluate(level_version: LevelVersion, pod: &Pod<'_>) -> Vec<Violation> {
    checks_for(level_version).into_iter().filter_map(|(_, check)| check(pod)).collect()
}
