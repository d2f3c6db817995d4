//! CertificateSigningRequests over the whole server: the requester is the one who
//! creates it, a PUT changes neither spec nor status, `/approval` writes the Approved
//! or Denied condition that `/status` may not, and the certificate goes on `/status`;
//! ComponentStatuses answer with the server's own health and upstream's warning.

use apiary_core::harness::{Harness, Reply};
use apiary_core::Config;
use apiary_memory::MemoryStore;
use base64::Engine;
use serde_json::{json, Value};

const CSRS: &str = "/apis/certificates.k8s.io/v1/certificatesigningrequests";
const JSON: &str = "application/json";

/// A PEM request of the right shape (SEQUENCE of two SEQUENCEs and a BIT STRING).
fn request() -> String {
    let pem = "-----BEGIN CERTIFICATE REQUEST-----\nMAgwADAAAwIAAA==\n-----END CERTIFICATE REQUEST-----\n";
    base64::engine::general_purpose::STANDARD.encode(pem)
}

fn csr(name: &str) -> Value {
    json!({
        "apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
        "metadata": {"name": name},
        "spec": {"request": request(), "signerName": "example.com/signer", "usages": ["client auth"], "username": "mallory", "groups": ["spoofed"]},
        "status": {"conditions": [{"type": "Approved", "status": "True"}]},
    })
}

fn call(h: &Harness<MemoryStore>, method: &str, path: &str, body: Option<&Value>) -> Reply {
    h.json_call(method, path, JSON, body)
}

fn with_condition(mut obj: Value, kind: &str) -> Value {
    obj["status"]["conditions"] = json!([{"type": kind, "status": "True", "reason": "R", "message": "m"}]);
    obj
}

#[test]
fn a_request_names_its_requester_and_is_approved_only_through_approval() {
    let h = Harness::new(Config::default(), MemoryStore::new());
    h.act_as(Some("alice"), &["system:masters"]);
    let created = call(&h, "POST", CSRS, Some(&csr("one")));
    assert_eq!(created.status, 201, "{}", created.json());
    let stored = created.json();
    assert_eq!(stored["spec"]["username"], "alice");
    assert_eq!(stored["spec"]["groups"], json!(["system:masters", "system:authenticated"]));
    assert_eq!(stored["status"], json!({}), "a new request is not approved");
    assert!(stored["metadata"].get("managedFields").is_none(), "upstream keeps none");

    // A PUT changes neither spec nor status.
    let mut put = with_condition(stored.clone(), "Approved");
    put["spec"]["usages"] = json!(["server auth"]);
    let answer = call(&h, "PUT", &format!("{CSRS}/one"), Some(&put)).json();
    assert_eq!(answer["spec"]["usages"], json!(["client auth"]));
    assert_eq!(answer["status"], json!({}));

    // /status may not approve.
    let refused = call(&h, "PUT", &format!("{CSRS}/one/status"), Some(&with_condition(answer.clone(), "Approved")));
    assert_eq!(refused.status, 422, "{}", refused.json());
    assert_eq!(refused.json()["details"]["causes"][0]["message"], "Forbidden: updates may not add a condition of type \"Approved\"");

    // /approval may, and keeps the spec.
    let mut approving = with_condition(answer.clone(), "Approved");
    approving["spec"]["signerName"] = json!("example.com/other");
    let approved = call(&h, "PUT", &format!("{CSRS}/one/approval"), Some(&approving));
    assert_eq!(approved.status, 200, "{}", approved.json());
    let approved = approved.json();
    assert_eq!(approved["status"]["conditions"][0]["type"], "Approved");
    assert_eq!(approved["spec"]["signerName"], "example.com/signer");

    // Denied cannot join Approved; Approved cannot go.
    let mut both = approved.clone();
    both["status"]["conditions"].as_array_mut().unwrap().push(json!({"type": "Denied", "status": "True"}));
    let refused = call(&h, "PUT", &format!("{CSRS}/one/approval"), Some(&both));
    assert_eq!(refused.status, 422);
    assert!(refused.json()["message"].as_str().unwrap().contains("Approved and Denied conditions are mutually exclusive"));
    let removed = call(&h, "PUT", &format!("{CSRS}/one/approval"), Some(&with_condition(approved.clone(), "Failed")));
    assert_eq!(removed.status, 422);
    assert!(removed.json()["message"].as_str().unwrap().contains("updates may not remove a condition of type \"Approved\""));

    // The signer writes the certificate on /status; the approval stays.
    let mut issued = approved.clone();
    issued["status"]["certificate"] = json!("Y2VydA==");
    issued["status"]["conditions"] = json!([]);
    let written = call(&h, "PUT", &format!("{CSRS}/one/status"), Some(&issued));
    assert_eq!(written.status, 422, "removing Approved through /status is refused: {}", written.json());
    issued["status"]["conditions"] = approved["status"]["conditions"].clone();
    let written = call(&h, "PUT", &format!("{CSRS}/one/status"), Some(&issued));
    assert_eq!(written.status, 200, "{}", written.json());
    assert_eq!(written.json()["status"]["certificate"], "Y2VydA==");

    // The table says so.
    let request = format!("GET {CSRS} HTTP/1.1\r\nHost: apiary\r\nAccept: application/json;as=Table;v=v1;g=meta.k8s.io\r\n\r\n");
    let table = apiary_core::harness::single_reply(&h.send(request.as_bytes())).json();
    let cells = &table["rows"][0]["cells"];
    assert_eq!(cells[2], "example.com/signer");
    assert_eq!(cells[3], "alice");
    assert_eq!(cells[5], "Approved,Issued");
}

#[test]
fn a_request_is_checked_as_upstream_checks_it() {
    let h = Harness::new(Config::default(), MemoryStore::new());
    let mut bad = csr("bad");
    bad["spec"]["request"] = json!("bm90IGEgY3Ny");
    bad["spec"]["signerName"] = json!("no-slash");
    bad["spec"]["usages"] = json!(["client auth", "client auth"]);
    bad["spec"]["expirationSeconds"] = json!(599);
    let refused = call(&h, "POST", CSRS, Some(&bad)).json();
    let causes: Vec<(String, String)> = refused["details"]["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["field"].as_str().unwrap().to_owned(), c["message"].as_str().unwrap().to_owned()))
        .collect();
    let fields: Vec<&str> = causes.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(fields, ["spec.request", "spec.usages[1]", "spec.signerName", "spec.expirationSeconds"], "{causes:?}");
    assert_eq!(causes[2].1, "Invalid value: \"no-slash\": must be a fully qualified domain and path of the form 'example.com/signer-name'");
}

#[test]
fn component_statuses_tell_the_servers_own_health_with_upstreams_warning() {
    let h = Harness::new(Config::default(), MemoryStore::new());
    let list = call(&h, "GET", "/api/v1/componentstatuses", None);
    assert_eq!(list.status, 200);
    assert_eq!(list.header("warning"), Some("299 - \"v1 ComponentStatus is deprecated in v1.19+\""));
    let names: Vec<Value> = list.json()["items"].as_array().unwrap().iter().map(|i| i["metadata"]["name"].clone()).collect();
    assert_eq!(names, [json!("scheduler"), json!("controller-manager"), json!("etcd-0")]);
    let etcd = call(&h, "GET", "/api/v1/componentstatuses/etcd-0", None).json();
    assert_eq!(etcd, json!({"kind": "ComponentStatus", "apiVersion": "v1", "metadata": {"name": "etcd-0"}, "conditions": [{"type": "Healthy", "status": "True", "message": "ok"}]}));
    assert_eq!(call(&h, "GET", "/api/v1/componentstatuses/nope", None).status, 404);
    assert_eq!(call(&h, "DELETE", "/api/v1/componentstatuses/etcd-0", None).status, 405);
}

/// DER of `tag` around `content`.
fn der(tag: u8, content: &[u8]) -> Vec<u8> {
    assert!(content.len() < 128);
    [&[tag, content.len() as u8][..], content].concat()
}

/// A PEM request whose subject is `O=<organization>` (unsigned: only its shape and
/// subject are read).
fn request_for(organization: &str) -> String {
    let o = der(0x31, &der(0x30, &[der(0x06, &[0x55, 0x04, 0x0a]), der(0x0c, organization.as_bytes())].concat()));
    let info = der(0x30, &[der(0x02, &[0]), der(0x30, &o), der(0x30, &[]), der(0xa0, &[])].concat());
    let request = der(0x30, &[info, der(0x30, &[]), der(0x03, &[0])].concat());
    let pem = format!(
        "-----BEGIN CERTIFICATE REQUEST-----\n{}\n-----END CERTIFICATE REQUEST-----\n",
        base64::engine::general_purpose::STANDARD.encode(request)
    );
    base64::engine::general_purpose::STANDARD.encode(pem)
}

#[test]
fn the_certificate_admission_plugins_guard_signers_and_system_masters() {
    let h = Harness::new(Config::default(), MemoryStore::new());
    // Nobody, system:masters included, gets a system:masters client certificate asked for.
    let mut masters = csr("masters");
    masters["spec"]["signerName"] = json!("kubernetes.io/kube-apiserver-client");
    masters["spec"]["usages"] = json!(["client auth", "digital signature", "key encipherment"]);
    masters["spec"]["request"] = json!(request_for("system:masters"));
    let refused = call(&h, "POST", CSRS, Some(&masters));
    assert_eq!(refused.status, 403, "{}", String::from_utf8_lossy(&refused.body));
    assert_eq!(
        refused.json()["message"],
        "certificatesigningrequests.certificates.k8s.io \"masters\" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed"
    );
    masters["spec"]["request"] = json!(request_for("developers"));
    assert_eq!(call(&h, "POST", CSRS, Some(&masters)).status, 201);

    // Bob may write approvals and statuses, but approve and sign for no signer yet.
    assert_eq!(call(&h, "POST", CSRS, Some(&csr("bobs"))).status, 201);
    let role = json!({"metadata": {"name": "csr-writer"}, "rules": [
        {"apiGroups": ["certificates.k8s.io"], "resources": ["certificatesigningrequests", "certificatesigningrequests/approval", "certificatesigningrequests/status"], "verbs": ["get", "update"]},
    ]});
    assert_eq!(call(&h, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", Some(&role)).status, 201);
    let binding = |name: &str, role: &str| json!({"metadata": {"name": name}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role}, "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "bob"}]});
    assert_eq!(call(&h, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", Some(&binding("bob-csr", "csr-writer"))).status, 201);
    h.reflect();
    let stored = call(&h, "GET", &format!("{CSRS}/bobs"), None).json();
    h.act_as(Some("bob"), &[]);
    let approving = call(&h, "PUT", &format!("{CSRS}/bobs/approval"), Some(&with_condition(stored.clone(), "Approved")));
    assert_eq!(approving.status, 403, "{}", String::from_utf8_lossy(&approving.body));
    assert_eq!(
        approving.json()["message"],
        "certificatesigningrequests.certificates.k8s.io \"bobs\" is forbidden: user not permitted to approve requests with signerName \"example.com/signer\""
    );
    let mut signed = stored.clone();
    signed["status"]["certificate"] = json!(base64::engine::general_purpose::STANDARD.encode("cert"));
    let signing = call(&h, "PUT", &format!("{CSRS}/bobs/status"), Some(&signed));
    assert_eq!(signing.status, 403, "{}", String::from_utf8_lossy(&signing.body));
    assert!(signing.json()["message"].as_str().unwrap().ends_with("user not permitted to sign requests with signerName \"example.com/signer\""));

    // Approving for the signer's whole domain is enough.
    h.act_as(Some("apiary-admin"), &["system:masters"]);
    let approver = json!({"metadata": {"name": "approver"}, "rules": [
        {"apiGroups": ["certificates.k8s.io"], "resources": ["signers"], "resourceNames": ["example.com/*"], "verbs": ["approve"]},
    ]});
    assert_eq!(call(&h, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", Some(&approver)).status, 201);
    assert_eq!(call(&h, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", Some(&binding("bob-approves", "approver"))).status, 201);
    h.reflect();
    h.act_as(Some("bob"), &[]);
    let approved = call(&h, "PUT", &format!("{CSRS}/bobs/approval"), Some(&with_condition(stored, "Approved")));
    assert_eq!(approved.status, 200, "{}", String::from_utf8_lossy(&approved.body));
}
