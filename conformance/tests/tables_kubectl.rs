//! Built-in kinds' printer columns on the real binary, through kubectl 1.33 and 1.27:
//! `kubectl get deployments -o wide` and `kubectl get pods -o wide` show upstream
//! v1.33's headers (the `-o wide` columns after AGE) and its cells; and for every kind
//! whose Tables match upstream's recordings, `kubectl get -o wide` of the recorded
//! objects shows the recorded cells.

use apiary_conformance::harness::{fixture, ok, Apiary};

/// The lines of a `kubectl get` table, each split into its words.
fn rows(out: &str) -> Vec<Vec<&str>> {
    out.lines().map(|line| line.split_whitespace().collect()).collect()
}

fn is_age(cell: &str) -> bool {
    !cell.is_empty() && cell.chars().all(|c| c.is_ascii_digit() || "smhdy".contains(c))
}

#[test]
fn kubectl_get_wide_shows_upstreams_columns() {
    let apiary = Apiary::start();
    let file = apiary.data_dir.join("objects.yaml");
    let read = |name: &str| std::fs::read_to_string(fixture(name)).unwrap();
    std::fs::write(&file, format!("{}---\n{}", read("deployment-web.yaml"), read("pod-worker.yaml"))).unwrap();
    ok(&apiary.kubectl("1.33", &["apply", "-f", file.to_str().unwrap()]));

    for version in ["1.33", "1.27"] {
        let deployments = ok(&apiary.kubectl(version, &["get", "deployments", "-o", "wide"]));
        let deployments = rows(&deployments);
        assert_eq!(deployments[0], ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"], "{version}");
        assert_eq!(deployments[1][..4], ["web", "0/2", "0", "0"], "{version}");
        assert!(is_age(deployments[1][4]), "{version}: an age: {:?}", deployments[1]);
        assert_eq!(deployments[1][5..], ["nginx,sidecar", "nginx:1.27,busybox:1.36", "app=web,tier"], "{version}");

        let plain = ok(&apiary.kubectl(version, &["get", "deployments"]));
        assert_eq!(rows(&plain)[0], ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"], "{version}");

        let pods = ok(&apiary.kubectl(version, &["get", "pods", "-o", "wide"]));
        let pods = rows(&pods);
        assert_eq!(
            pods[0],
            ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED", "NODE", "READINESS", "GATES"],
            "{version}"
        );
        assert_eq!(pods[1][..4], ["worker", "0/1", "Pending", "0"], "{version}");
        assert!(is_age(pods[1][4]), "{version}: an age: {:?}", pods[1]);
        assert_eq!(pods[1][5..], ["<none>", "node-a", "<none>", "0/1"], "{version}");
    }
}

/// kube-apiserver v1.33's recorded Tables (`core/tests/upstream/tables/`) as kubectl
/// prints them: for each kind, the recorded objects are created on a fresh server (the
/// recorder's service range), their statuses written through the status subresource,
/// those being deleted deleted, and `kubectl get -o wide` of 1.33 and 1.27 must show the
/// recorded cells under the recorded columns. Cells that read the clock are compared
/// by shape (digits and units as one token), server-made uids as `<uid>`.
mod recorded {
    use apiary_conformance::harness::{ok, workspace_root, Apiary};
    use serde_json::{json, Value};

    fn recording(file: &str) -> Value {
        let path = workspace_root().join(format!("core/tests/upstream/tables/{file}.json"));
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    /// Columns whose cells read the clock, by kind (as `core/tests/upstream_tables.rs`).
    fn clock_columns(file: &str) -> &'static [&'static str] {
        match file {
            "batch_v1_jobs" => &["Age", "Duration"],
            "batch_v1_cronjobs" => &["Age", "Last Schedule"],
            "core_v1_pods" => &["Age", "Restarts"],
            "core_v1_events" => &["Last Seen", "First Seen"],
            "rbac.authorization.k8s.io_v1_roles"
            | "rbac.authorization.k8s.io_v1_clusterroles"
            | "storage.k8s.io_v1_csistoragecapacities"
            | "core_v1_limitranges"
            | "apiextensions.k8s.io_v1_customresourcedefinitions" => &["Created At"],
            _ => &["Age"],
        }
    }

    /// What a client may send of a recorded object (as `core/tests/upstream_tables.rs`).
    fn input(file: &str, obj: &Value) -> Value {
        let mut input = obj.clone();
        let meta = input["metadata"].as_object_mut().unwrap();
        let owned = file == "apps_v1_controllerrevisions";
        meta.retain(|k, _| matches!(k.as_str(), "name" | "labels" | "annotations") || (owned && k == "ownerReferences"));
        // A deleted namespace stays Terminating while a finalizer of its own holds it.
        if obj["metadata"].get("deletionTimestamp").is_some() && file == "core_v1_namespaces" {
            meta.insert("finalizers".into(), json!(["example.com/hold"]));
        }
        let o = input.as_object_mut().unwrap();
        o.remove("status");
        if let Some(data) = o.get_mut("data").and_then(Value::as_object_mut) {
            for v in data.values_mut() {
                if v.as_str().is_some_and(|s| s.starts_with('<')) {
                    *v = json!("eA==");
                }
            }
        }
        if file == "batch_v1_jobs" {
            let spec = o["spec"].as_object_mut().unwrap();
            spec.remove("selector");
            spec.remove("manualSelector");
            if let Some(labels) = spec["template"]["metadata"]["labels"].as_object_mut() {
                labels.retain(|_, v| v != "<uid>");
            }
        }
        input
    }

    /// Digits-and-units durations as one token.
    fn shape(s: &str) -> String {
        let mut out = String::new();
        let mut chars = s.chars().peekable();
        while let Some(c) = chars.next() {
            if c.is_ascii_digit() {
                while chars.peek().is_some_and(|c| c.is_ascii_digit() || "smhdy".contains(*c)) {
                    chars.next();
                }
                out.push_str("<t>");
            } else {
                out.push(c);
            }
        }
        out
    }

    /// `s` with every UUID as `<uid>`.
    fn uids_hidden(s: &str) -> String {
        let bytes = s.as_bytes();
        let is_uuid = |at: usize| {
            bytes.len() >= at + 36
                && bytes[at..at + 36].iter().enumerate().all(|(i, b)| if [8, 13, 18, 23].contains(&i) { *b == b'-' } else { b.is_ascii_hexdigit() })
        };
        let mut out = String::new();
        let mut i = 0;
        while i < bytes.len() {
            if is_uuid(i) {
                out.push_str("<uid>");
                i += 36;
            } else {
                let c = s[i..].chars().next().unwrap();
                out.push(c);
                i += c.len_utf8();
            }
        }
        out
    }

    /// A recorded cell as kubectl prints it (Go's `fmt.Fprint`).
    fn printed(cell: &Value) -> String {
        match cell {
            Value::String(s) => s.trim().to_owned(),
            Value::Null => "<nil>".to_owned(),
            other => other.to_string(),
        }
    }

    /// The cells of each line of `kubectl get` output, cut where the header's columns
    /// (`names`, upper-cased) start, as kubectl's tab writer aligns them.
    fn cells(out: &str, names: &[String]) -> Vec<Vec<String>> {
        let mut lines = out.lines();
        let header: Vec<char> = lines.next().unwrap_or("").chars().collect();
        let text: String = header.iter().collect();
        let mut starts = Vec::new();
        let mut from = 0;
        for name in names {
            let upper = name.to_uppercase();
            let at = text[from..].find(&upper).unwrap_or_else(|| panic!("no column {upper} in {text:?}")) + from;
            starts.push(text[..at].chars().count());
            from = at + upper.len();
        }
        lines
            .map(|line| {
                let chars: Vec<char> = line.chars().collect();
                (0..starts.len())
                    .map(|i| {
                        let end = starts.get(i + 1).copied().unwrap_or(chars.len()).min(chars.len());
                        let start = starts[i].min(end);
                        chars[start..end].iter().collect::<String>().trim().to_owned()
                    })
                    .collect()
            })
            .collect()
    }

    /// The resource argument and namespace flags of `recorded`'s kind for kubectl.
    fn target(recorded: &Value) -> (String, Vec<String>) {
        let resource = &recorded["resource"];
        let (group, version, plural) = (resource["group"].as_str().unwrap(), resource["version"].as_str().unwrap(), resource["resource"].as_str().unwrap());
        let qualified = if group.is_empty() { plural.to_owned() } else { format!("{plural}.{version}.{group}") };
        let scope = match resource["namespace"].as_str() {
            Some(ns) => vec!["-n".to_owned(), ns.to_owned()],
            None => Vec::new(),
        };
        (qualified, scope)
    }

    fn kubectl(apiary: &Apiary, args: &[String]) -> String {
        ok(&apiary.kubectl("1.33", &args.iter().map(String::as_str).collect::<Vec<_>>()))
    }

    /// Create the recorded objects of `file` (owner references naming `owners`, by
    /// name, with their uids), then write their statuses and delete those that were
    /// being deleted.
    fn create_all(apiary: &Apiary, file: &str, recorded: &Value, owners: &std::collections::HashMap<String, String>) {
        let (qualified, scope) = target(recorded);
        let scoped = |args: &[&str]| -> Vec<String> { args.iter().map(|a| (*a).to_owned()).chain(scope.iter().cloned()).collect() };
        let objects = recorded["objects"].as_array().unwrap();
        let mut items: Vec<Value> = objects.iter().map(|o| input(file, o)).collect();
        for item in &mut items {
            for r in item["metadata"]["ownerReferences"].as_array_mut().into_iter().flatten() {
                r["uid"] = json!(owners.get(r["name"].as_str().unwrap_or("")).cloned().unwrap_or_default());
            }
        }
        let list = json!({"apiVersion": "v1", "kind": "List", "items": items});
        // A List is checked on the client against the OpenAPI schema, as kubectl
        // checks what the server has no endpoint for: the recorded objects are what
        // kube-apiserver accepted, some without fields that schema calls required.
        let mut args = scoped(&["create", "--validate=false", "-f", "-"]);
        if file == "certificates.k8s.io_v1_certificatesigningrequests" {
            // The recorder's user, whom CSRs name as their requestor.
            args.extend(["--as=kube-admin".to_owned(), "--as-group=system:masters".to_owned()]);
        }
        let made = apiary.kubectl_with_input("1.33", &args.iter().map(String::as_str).collect::<Vec<_>>(), &list.to_string());
        if !made.status.success() {
            // Those the server made itself (a namespace's default ServiceAccount, the
            // system PriorityClasses, the kubernetes Service's address) exist already.
            let stderr = String::from_utf8_lossy(&made.stderr);
            assert!(stderr.lines().all(|l| l.contains("AlreadyExists") || l.contains("already exists")), "{file}: {stderr}");
        }
        for obj in objects {
            let name = obj["metadata"]["name"].as_str().unwrap();
            // A CSR's approval or denial is written through its approval subresource.
            for condition in obj["status"]["conditions"].as_array().into_iter().flatten() {
                let decision = match condition["type"].as_str() {
                    Some("Approved") => "approve",
                    Some("Denied") => "deny",
                    _ => continue,
                };
                kubectl(apiary, &scoped(&["certificate", decision, name]));
            }
            if let Some(status) = obj.get("status") {
                let patch = json!({"status": status}).to_string();
                kubectl(apiary, &scoped(&["patch", &qualified, name, "--subresource=status", "--type=merge", "-p", &patch]));
            }
            if obj["metadata"].get("deletionTimestamp").is_some() {
                kubectl(apiary, &scoped(&["delete", &qualified, name, "--wait=false"]));
            }
        }
    }

    pub fn replay(file: &str) {
        let recorded = recording(file);
        // The quota controller would recount the recorded quotas' status.used from what
        // this replay made; the recording's figures are upstream's cluster's.
        let apiary = Apiary::start_with(&["--service-cluster-ip-range=10.96.0.0/16", "--disable-controllers=resourcequota-controller"]);
        let k = |args: &[&str]| apiary.kubectl("1.33", args);
        if file != "core_v1_namespaces" {
            for ns in ["refb-tables", "refb-events", "refb-quota"] {
                ok(&k(&["create", "namespace", ns]));
            }
        }
        let resource = &recorded["resource"];
        let (qualified, scope) = target(&recorded);
        let scoped = |args: &[&str]| -> Vec<String> { args.iter().map(|a| (*a).to_owned()).chain(scope.iter().cloned()).collect() };
        // The owners a recording's objects name, made first from their own recordings.
        let mut owners = std::collections::HashMap::new();
        if file == "apps_v1_controllerrevisions" {
            for owner_file in ["apps_v1_daemonsets", "apps_v1_statefulsets"] {
                let owner = recording(owner_file);
                create_all(&apiary, owner_file, &owner, &owners);
                let (kind, ns) = target(&owner);
                let listed: Value = serde_json::from_str(&kubectl(&apiary, &[&["get".to_owned(), kind, "-o".to_owned(), "json".to_owned()][..], &ns].concat())).unwrap();
                for item in listed["items"].as_array().unwrap() {
                    owners.insert(item["metadata"]["name"].as_str().unwrap().to_owned(), item["metadata"]["uid"].as_str().unwrap().to_owned());
                }
            }
        }
        create_all(&apiary, file, &recorded, &owners);

        let want = &recorded["table"];
        let names: Vec<String> = want["columnDefinitions"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap().to_owned()).collect();
        let name_at = names.iter().position(|n| n == "Name").unwrap();
        let clock = clock_columns(file);
        let comparable = |row: Vec<String>| -> Vec<String> {
            row.into_iter().zip(&names).map(|(c, n)| if clock.contains(&n.as_str()) { shape(&c) } else { uids_hidden(&c) }).collect()
        };
        let mut mismatches = Vec::new();
        for kubectl in ["1.33", "1.27"] {
            let mut args = scoped(&["get", &qualified, "-o", "wide"]);
            if let Some(selector) = resource["labelSelector"].as_str() {
                args.extend(["-l".to_owned(), selector.to_owned()]);
            }
            let out = ok(&apiary.kubectl(kubectl, &args.iter().map(String::as_str).collect::<Vec<_>>()));
            let got: Vec<Vec<String>> = cells(&out, &names).into_iter().map(&comparable).collect();
            for row in want["rows"].as_array().unwrap() {
                // kubectl prints a cell per column: not those no column declares (an
                // IPAddress's Age).
                let row = comparable(row["cells"].as_array().unwrap().iter().take(names.len()).map(printed).collect());
                match got.iter().find(|g| g[name_at] == row[name_at]) {
                    Some(g) if *g == row => {}
                    Some(g) => mismatches.push(format!("kubectl {kubectl}:\n got {g:?}\nwant {row:?}")),
                    None => mismatches.push(format!("kubectl {kubectl}: no row {}:\n{out}", row[name_at])),
                }
            }
        }
        assert!(mismatches.is_empty(), "{file}:\n{}", mismatches.join("\n"));
    }
}

macro_rules! recorded_kinds {
    ($($test:ident: $file:literal,)*) => {$(
        #[test]
        fn $test() {
            recorded::replay($file);
        }
    )*};
}

// The kinds whose Tables `core/tests/upstream_tables.rs` finds upstream's.
recorded_kinds! {
    kubectl_wide_deployments: "apps_v1_deployments",
    kubectl_wide_replicasets: "apps_v1_replicasets",
    kubectl_wide_statefulsets: "apps_v1_statefulsets",
    kubectl_wide_daemonsets: "apps_v1_daemonsets",
    kubectl_wide_jobs: "batch_v1_jobs",
    kubectl_wide_cronjobs: "batch_v1_cronjobs",
    kubectl_wide_endpoints: "core_v1_endpoints",
    kubectl_wide_pods: "core_v1_pods",
    kubectl_wide_nodes: "core_v1_nodes",
    kubectl_wide_persistentvolumes: "core_v1_persistentvolumes",
    kubectl_wide_persistentvolumeclaims: "core_v1_persistentvolumeclaims",
    kubectl_wide_ingresses: "networking.k8s.io_v1_ingresses",
    kubectl_wide_endpointslices: "discovery.k8s.io_v1_endpointslices",
    kubectl_wide_csistoragecapacities: "storage.k8s.io_v1_csistoragecapacities",
    kubectl_wide_csidrivers: "storage.k8s.io_v1_csidrivers",
    kubectl_wide_csinodes: "storage.k8s.io_v1_csinodes",
    kubectl_wide_servicecidrs: "networking.k8s.io_v1_servicecidrs",
    kubectl_wide_runtimeclasses: "node.k8s.io_v1_runtimeclasses",
    kubectl_wide_replicationcontrollers: "core_v1_replicationcontrollers",
    kubectl_wide_podtemplates: "core_v1_podtemplates",
    kubectl_wide_configmaps: "core_v1_configmaps",
    kubectl_wide_limitranges: "core_v1_limitranges",
    kubectl_wide_poddisruptionbudgets: "policy_v1_poddisruptionbudgets",
    kubectl_wide_networkpolicies: "networking.k8s.io_v1_networkpolicies",
    kubectl_wide_ingressclasses: "networking.k8s.io_v1_ingressclasses",
    kubectl_wide_storageclasses: "storage.k8s.io_v1_storageclasses",
    kubectl_wide_priorityclasses: "scheduling.k8s.io_v1_priorityclasses",
    kubectl_wide_leases: "coordination.k8s.io_v1_leases",
    kubectl_wide_secrets: "core_v1_secrets",
    kubectl_wide_events: "core_v1_events",
    kubectl_wide_resourcequotas: "core_v1_resourcequotas",
    kubectl_wide_volumeattachments: "storage.k8s.io_v1_volumeattachments",
    kubectl_wide_hpas_v2: "autoscaling_v2_horizontalpodautoscalers",
    kubectl_wide_hpas_v1: "autoscaling_v1_horizontalpodautoscalers",
    kubectl_wide_serviceaccounts: "core_v1_serviceaccounts",
    kubectl_wide_services: "core_v1_services",
    kubectl_wide_roles: "rbac.authorization.k8s.io_v1_roles",
    kubectl_wide_clusterroles: "rbac.authorization.k8s.io_v1_clusterroles",
    kubectl_wide_rolebindings: "rbac.authorization.k8s.io_v1_rolebindings",
    kubectl_wide_clusterrolebindings: "rbac.authorization.k8s.io_v1_clusterrolebindings",
    kubectl_wide_controllerrevisions: "apps_v1_controllerrevisions",
    kubectl_wide_certificatesigningrequests: "certificates.k8s.io_v1_certificatesigningrequests",
    kubectl_wide_namespaces: "core_v1_namespaces",
    kubectl_wide_customresourcedefinitions: "apiextensions.k8s.io_v1_customresourcedefinitions",
    kubectl_wide_ipaddresses: "networking.k8s.io_v1_ipaddresses",
}
