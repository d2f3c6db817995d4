//! Impersonation and the review APIs on the real binary, through kubectl 1.33 and 1.27:
//! `auth whoami` (as the admin certificate and `--as`/`--as-group`), `auth can-i` and
//! `can-i --list`, and `create -f` of a TokenReview and a SubjectAccessReview. kubectl
//! 1.33 sends these typed requests as protobuf. The admin is in `system:masters`, so
//! every answer here holds under any authorization mode upstream ships.

use apiary_conformance::harness::{kubectl_command, ok, Apiary};
use serde_json::Value;
use std::path::Path;

const VERSIONS: [&str; 2] = ["1.33", "1.27"];

fn json(out: &std::process::Output) -> Value {
    serde_json::from_str(&ok(out)).expect("kubectl printed JSON")
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("file written");
    path.to_str().expect("utf-8 path").to_owned()
}

#[test]
fn whoami_names_the_certificates_user_and_an_impersonated_one() {
    let apiary = Apiary::start();
    let me = ok(&apiary.kubectl("1.33", &["auth", "whoami"]));
    assert!(me.contains("apiary-admin"), "{me}");
    assert!(me.contains("[system:masters system:authenticated]"), "{me}");
    let someone = json(&apiary.kubectl("1.33", &["auth", "whoami", "--as", "someone", "--as-group", "g", "-o", "json"]));
    assert_eq!(someone["kind"], "SelfSubjectReview");
    assert_eq!(someone["status"]["userInfo"]["username"], "someone");
    assert_eq!(someone["status"]["userInfo"]["groups"], serde_json::json!(["g", "system:authenticated"]));
    // kubectl 1.27 asks for the v1alpha1 and v1beta1 versions, which a v1.33 server does
    // not serve (v1beta1 is off by default): it says so, as against kube-apiserver.
    let old = apiary.kubectl("1.27", &["auth", "whoami"]);
    assert!(!old.status.success());
    let stderr = String::from_utf8_lossy(&old.stderr);
    assert!(stderr.contains("the selfsubjectreviews API is not enabled in the cluster"), "{stderr}");
}

#[test]
fn can_i_answers_yes_and_lists_everything_for_the_admin() {
    let apiary = Apiary::start();
    for version in VERSIONS {
        assert_eq!(ok(&apiary.kubectl(version, &["auth", "can-i", "create", "pods"])).trim(), "yes", "{version}");
        assert_eq!(
            ok(&apiary.kubectl(version, &["auth", "can-i", "get", "/healthz"])).trim(),
            "yes",
            "{version}"
        );
        let list = ok(&apiary.kubectl(version, &["auth", "can-i", "--list", "-n", "default"]));
        let lines: Vec<&str> = list.lines().collect();
        assert!(lines[0].starts_with("Resources") && lines[0].contains("Non-Resource URLs"), "{version}: {list}");
        let everything = lines.iter().any(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            words == ["*.*", "[]", "[]", "[*]"]
        });
        assert!(everything, "{version}: {list}");
        let every_path = lines.iter().any(|l| l.split_whitespace().collect::<Vec<_>>() == ["[*]", "[]", "[*]"]);
        assert!(every_path, "{version}: {list}");
    }
}

#[test]
fn token_and_subject_access_reviews_are_answered_on_create() {
    let dir = tempfile::tempdir().expect("temp dir");
    let tokens = write(dir.path(), "tokens.csv", "0ff1ce-t0ken,alice,1001,\"dev,ops\"\n");
    let apiary = Apiary::start_with(&["--token-auth-file", &tokens]);
    let review = |token: &str| {
        format!("apiVersion: authentication.k8s.io/v1\nkind: TokenReview\nspec:\n  token: {token}\n")
    };
    let good = write(dir.path(), "good.yaml", &review("0ff1ce-t0ken"));
    let bad = write(dir.path(), "bad.yaml", &review("guessed"));
    let sar = write(
        dir.path(),
        "sar.yaml",
        "apiVersion: authorization.k8s.io/v1\nkind: SubjectAccessReview\nspec:\n  user: someone\n  groups: [system:masters]\n  resourceAttributes:\n    verb: delete\n    resource: secrets\n    namespace: kube-system\n",
    );
    for version in VERSIONS {
        let kubectl = |file: &str| kubectl_command(version, &apiary.kubeconfig)
            .args(["create", "-f", file, "-o", "json"])
            .output()
            .expect("kubectl runs");
        let answer = json(&kubectl(&good));
        assert_eq!(answer["status"]["authenticated"], true, "{version}");
        assert_eq!(
            answer["status"]["user"],
            serde_json::json!({"username": "alice", "uid": "1001", "groups": ["dev", "ops", "system:authenticated"]}),
            "{version}"
        );
        let answer = json(&kubectl(&bad));
        assert_eq!(answer["status"], serde_json::json!({"error": "invalid bearer token", "user": {}}), "{version}");
        let answer = json(&kubectl(&sar));
        assert_eq!(answer["kind"], "SubjectAccessReview", "{version}");
        assert_eq!(answer["spec"]["resourceAttributes"]["resource"], "secrets", "{version}");
        assert_eq!(answer["status"]["allowed"], true, "{version}");
    }
}
