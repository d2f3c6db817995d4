//! `kubectl diff` against the real binary, 1.33 and 1.27: nothing to show for an
//! unchanged manifest (exit 0), a changed image and data value shown as `-`/`+` lines
//! (exit 1), the same with `--server-side`, an object that does not exist shown as
//! added, and none of it written: diff is a dry run on the server.

use apiary_conformance::harness::{ok, Apiary};
use std::path::Path;
use std::process::Output;

fn manifests(name: &str, image: &str, value: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  labels:
    app: {name}
spec:
  replicas: 1
  selector:
    matchLabels:
      app: {name}
  template:
    metadata:
      labels:
        app: {name}
    spec:
      containers:
        - name: web
          image: {image}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}
data:
  mode: {value}
  other: kept
"
    )
}

fn new_object(name: &str) -> String {
    format!(
        "apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}
data:
  fresh: yes-please
"
    )
}

fn write(dir: &Path, file: &str, text: &str) -> String {
    let path = dir.join(file);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

fn text(out: &Output) -> (i32, String, String) {
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `kubectl diff` with `diff` from PATH, or a plain `diff -u -N` when the machine
/// has none on PATH.
fn diff(apiary: &Apiary, version: &str, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["diff"];
    all.extend_from_slice(args);
    let mut command = apiary_conformance::harness::kubectl_command(version, &apiary.kubeconfig);
    command.args(&all);
    if !on_path("diff") {
        command.env("KUBECTL_EXTERNAL_DIFF", "/usr/bin/diff -u -N");
    }
    text(&command.output().expect("kubectl runs"))
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
        .unwrap_or(false)
}

/// Lines of a unified diff that remove (`-`) or add (`+`) content, headers left out,
/// trimmed and without a YAML list item's leading `- `.
fn changes(out: &str, sign: char) -> Vec<String> {
    out.lines()
        .filter(|l| l.starts_with(sign) && !l.starts_with("---") && !l.starts_with("+++"))
        .map(|l| l[1..].trim().trim_start_matches("- ").to_owned())
        .collect()
}

fn state(apiary: &Apiary, version: &str, name: &str) -> (String, String, String) {
    let image = ok(&apiary.kubectl(
        version,
        &[
            "get",
            "deployment",
            name,
            "-o",
            "jsonpath={.spec.template.spec.containers[0].image}",
        ],
    ));
    let data = ok(&apiary.kubectl(
        version,
        &["get", "configmap", name, "-o", "jsonpath={.data}"],
    ));
    let versions = ok(&apiary.kubectl(
        version,
        &[
            "get",
            &format!("deployment/{name}"),
            &format!("configmap/{name}"),
            "-o",
            "jsonpath={range .items[*]}{.metadata.resourceVersion} {.metadata.generation};{end}",
        ],
    ));
    (image, data, versions)
}

#[test]
fn kubectl_diff_shows_changes_and_writes_nothing() {
    let apiary = Apiary::start();
    let dir = tempfile::tempdir().unwrap();
    for version in ["1.33", "1.27"] {
        let name = format!("diffed-{}", version.replace('.', "-"));
        let fresh = format!("{name}-new");
        let same = write(
            dir.path(),
            &format!("{name}-same.yaml"),
            &manifests(&name, "nginx:1.27", "blue"),
        );
        let changed = write(
            dir.path(),
            &format!("{name}-changed.yaml"),
            &manifests(&name, "nginx:1.28", "green"),
        );
        let added = write(dir.path(), &format!("{name}-new.yaml"), &new_object(&fresh));

        ok(&apiary.kubectl(version, &["apply", "-f", &same]));
        let before = state(&apiary, version, &name);
        assert_eq!(before.0, "nginx:1.27");
        assert_eq!(before.2.matches(';').count(), 2, "{before:?}");

        // Nothing differs: exit 0, nothing printed.
        let (code, stdout, stderr) = diff(&apiary, version, &["-f", &same]);
        assert_eq!(
            (code, stdout.as_str()),
            (0, ""),
            "{version}: unchanged diff; stderr: {stderr}"
        );

        // An image and a data value changed: exit 1, both shown as - old / + new.
        for server_side in [false, true] {
            let mut args = vec!["-f", changed.as_str()];
            if server_side {
                args.insert(0, "--server-side");
            }
            let (code, stdout, stderr) = diff(&apiary, version, &args);
            let what = format!("{version} {args:?}:\n{stdout}\nstderr: {stderr}");
            assert_eq!(code, 1, "{what}");
            let removed = changes(&stdout, '-');
            let added = changes(&stdout, '+');
            assert!(removed.contains(&"image: nginx:1.27".to_owned()), "{what}");
            assert!(added.contains(&"image: nginx:1.28".to_owned()), "{what}");
            assert!(removed.contains(&"mode: blue".to_owned()), "{what}");
            assert!(added.contains(&"mode: green".to_owned()), "{what}");
            // kubectl applies server-side as "kubectl", so the server keeps the
            // client-side apply annotation in step with what it applied (upstream's
            // lastAppliedUpdater); its conflicts with kubectl-client-side-apply over
            // the fields that annotation holds are no conflicts (lastAppliedManager).
            if server_side {
                assert!(
                    added.iter().any(|l| l.contains(r#""image":"nginx:1.28""#)),
                    "{what}"
                );
            }
            // The data value that did not change is not shown as changed.
            assert!(!added.iter().any(|l| l.starts_with("other")), "{what}");
            assert!(
                stdout.contains(&format!("apps.v1.Deployment.default.{name}"))
                    && stdout.contains(&format!("v1.ConfigMap.default.{name}")),
                "{what}"
            );
        }

        // An object that does not exist: shown as added, every line a +.
        let (code, stdout, stderr) = diff(&apiary, version, &["-f", &added]);
        let what = format!("{version} new object:\n{stdout}\nstderr: {stderr}");
        assert_eq!(code, 1, "{what}");
        assert!(changes(&stdout, '-').is_empty(), "{what}");
        let plus = changes(&stdout, '+');
        assert!(plus.contains(&format!("name: {fresh}")), "{what}");
        assert!(plus.contains(&"fresh: yes-please".to_owned()), "{what}");
        assert!(plus.contains(&"kind: ConfigMap".to_owned()), "{what}");

        // diff is a dry run: the server holds what it held, the new object never was.
        assert_eq!(
            state(&apiary, version, &name),
            before,
            "{version}: diff changed the server"
        );
        let out = apiary.kubectl(version, &["get", "configmap", &fresh]);
        assert!(!out.status.success(), "{version}: diff created {fresh}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("NotFound")
                || String::from_utf8_lossy(&out.stderr).contains("not found"),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
