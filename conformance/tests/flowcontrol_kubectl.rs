//! flowcontrol.apiserver.k8s.io and apiregistration.k8s.io on the real binary, through
//! kubectl 1.33 and 1.27: `kubectl get flowschemas` and `kubectl get
//! prioritylevelconfigurations` list upstream's bootstrap configuration with upstream's
//! columns (a deleted mandatory FlowSchema comes back), `kubectl api-resources` lists
//! the three kinds, and a local APIService is applied, read and deleted.

use apiary_conformance::harness::{eventually, ok, Apiary};

/// The header and the row of `name` in a `kubectl get` table, split into cells.
fn row(table: &str, name: &str) -> (Vec<String>, Vec<String>) {
    let cells = |line: &str| line.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
    let header = cells(table.lines().next().unwrap_or(""));
    let line = table.lines().find(|l| l.split_whitespace().next() == Some(name)).unwrap_or_else(|| panic!("no {name} in {table}"));
    (header, cells(line))
}

#[test]
fn kubectl_lists_the_bootstrap_configuration_with_upstreams_columns() {
    let apiary = Apiary::start();
    for version in ["1.33", "1.27"] {
        let schemas = apiary.kubectl_until_served(version, &["get", "flowschemas"]);
        let (header, catch_all) = row(&schemas, "catch-all");
        assert_eq!(header, ["NAME", "PRIORITYLEVEL", "MATCHINGPRECEDENCE", "DISTINGUISHERMETHOD", "AGE", "MISSINGPL"], "{version}");
        assert_eq!(&catch_all[..4], ["catch-all", "catch-all", "10000", "ByUser"], "{version}");
        // Whether the level is missing: unknown ("?") until a controller writes the
        // schema's Dangling condition.
        assert!(matches!(catch_all[5].as_str(), "?" | "False"), "{version}: {schemas}");
        assert_eq!(row(&schemas, "exempt").1[..4], ["exempt", "exempt", "1", "<none>"]);
        assert_eq!(schemas.lines().count(), 12, "{version}: 11 schemas\n{schemas}");
        // Listed as upstream's printer lists them: by matching precedence.
        let order: Vec<&str> = schemas.lines().skip(1).filter_map(|l| l.split_whitespace().next()).collect();
        assert_eq!(order[..3], ["exempt", "probes", "system-leader-election"], "{version}");
        assert_eq!(order.last(), Some(&"catch-all"));

        let levels = ok(&apiary.kubectl(version, &["get", "prioritylevelconfigurations"]));
        let (header, global) = row(&levels, "global-default");
        assert_eq!(header, ["NAME", "TYPE", "NOMINALCONCURRENCYSHARES", "QUEUES", "HANDSIZE", "QUEUELENGTHLIMIT", "AGE"], "{version}");
        assert_eq!(&global[..6], ["global-default", "Limited", "20", "128", "6", "50"]);
        assert_eq!(row(&levels, "exempt").1[..6], ["exempt", "Exempt", "<none>", "<none>", "<none>", "<none>"]);
        assert_eq!(levels.lines().count(), 9, "{version}: 8 levels\n{levels}");
    }

    // The server's ensurer writes a deleted mandatory schema back.
    ok(&apiary.kubectl("1.33", &["delete", "flowschema", "catch-all"]));
    eventually("catch-all is written back", || apiary.kubectl("1.33", &["get", "flowschema", "catch-all"]).status.success());
}

#[test]
fn kubectl_api_resources_lists_the_kinds_and_applies_an_api_service() {
    let apiary = Apiary::start();
    for version in ["1.33", "1.27"] {
        let resources = ok(&apiary.kubectl(version, &["api-resources"]));
        for (name, group_version, kind) in [
            ("flowschemas", "flowcontrol.apiserver.k8s.io/v1", "FlowSchema"),
            ("prioritylevelconfigurations", "flowcontrol.apiserver.k8s.io/v1", "PriorityLevelConfiguration"),
            ("apiservices", "apiregistration.k8s.io/v1", "APIService"),
        ] {
            let line = resources.lines().find(|l| l.starts_with(&format!("{name} "))).unwrap_or_else(|| panic!("{version}: no {name} in\n{resources}"));
            let cells: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(cells, [name, group_version, "false", kind], "{version}");
        }

        let v = version.replace('.', "");
        let service = format!(
            "apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata:\n  name: v1.k{v}.example.com\nspec:\n  group: k{v}.example.com\n  version: v1\n  groupPriorityMinimum: 1000\n  versionPriority: 15\n"
        );
        let applied = apiary.kubectl_with_input(version, &["apply", "-f", "-"], &service);
        assert!(ok(&applied).contains("created"), "{version}");
        let name = format!("v1.k{v}.example.com");
        let shown = ok(&apiary.kubectl(version, &["get", "apiservice", &name]));
        let (header, cells) = row(&shown, &name);
        assert_eq!(header, ["NAME", "SERVICE", "AVAILABLE", "AGE"]);
        assert_eq!(&cells[..3], [name.as_str(), "Local", "True"]);
        // Applied again unchanged: nothing to do.
        assert!(ok(&apiary.kubectl_with_input(version, &["apply", "-f", "-"], &service)).contains("unchanged"));
        ok(&apiary.kubectl(version, &["delete", "apiservice", &name]));
        let gone = apiary.kubectl(version, &["get", "apiservice", &name]);
        assert!(!gone.status.success());
        assert!(String::from_utf8_lossy(&gone.stderr).contains("NotFound"), "{version}");
    }
}
