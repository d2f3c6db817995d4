//! Two Apiaries chained, as an extension API server behind kube-apiserver: the
//! extension serves a CRD's group (`widgets.example.com`, v1) and trusts the front's
//! generated front-proxy CA (`--requestheader-client-ca-file`), the front registers
//! the group by an ExternalName Service and an APIService.

use crate::harness::{eventually, ok, widget_crd, Apiary};

/// The front's APIService for the extension's group version.
pub const APISERVICE: &str = "v1.example.com";

/// A front Apiary and the extension Apiary behind it.
pub struct Chained {
    pub front: Apiary,
    pub extension: Apiary,
    /// The extension's data dir and flags, to start it again.
    extension_dir: tempfile::TempDir,
    extension_args: Vec<String>,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl Chained {
    /// Both started (the front on memory storage, the extension on sqlite), the CRD
    /// served by the extension and its APIService Available on the front.
    pub fn start() -> Chained {
        let front = Apiary::start_with(&["--storage", "memory"]);
        let ca = front.data_dir.join("pki").join("front-proxy-ca.crt");
        let port = free_port().to_string();
        let extension_args = vec![
            "--secure-port".to_owned(),
            port.clone(),
            "--requestheader-client-ca-file".to_owned(),
            ca.to_str().unwrap().to_owned(),
            "--requestheader-allowed-names=front-proxy-client".to_owned(),
            "--requestheader-username-headers=X-Remote-User".to_owned(),
            "--requestheader-group-headers=X-Remote-Group".to_owned(),
            "--requestheader-extra-headers-prefix=X-Remote-Extra-".to_owned(),
        ];
        let extension_dir = tempfile::tempdir().unwrap();
        let args: Vec<&str> = extension_args.iter().map(String::as_str).collect();
        let extension = Apiary::start_in(extension_dir.path(), &args);
        ok(&extension.kubectl_with_input("1.33", &["apply", "-f", "-"], &widget_crd("{type: object, x-kubernetes-preserve-unknown-fields: true}")));
        extension.kubectl_until_served("1.33", &["get", "widgets"]);

        // An ExternalName Service (endpoints may not be loopback addresses); the
        // extension's serving certificate names 127.0.0.1, not the Service, so it is
        // not verified.
        let objects = format!(
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: extension\n  namespace: default\nspec:\n  type: ExternalName\n  externalName: 127.0.0.1\n---\n\
             apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata:\n  name: {APISERVICE}\nspec:\n  group: example.com\n  version: v1\n  \
             groupPriorityMinimum: 1000\n  versionPriority: 15\n  insecureSkipTLSVerify: true\n  service:\n    namespace: default\n    name: extension\n    port: {port}\n"
        );
        ok(&front.kubectl_with_input("1.33", &["apply", "-f", "-"], &objects));
        let chained = Chained { front, extension, extension_dir, extension_args };
        eventually("the APIService to be Available", || chained.available() == "True");
        chained
    }

    /// The status of the APIService's `Available` condition on the front.
    pub fn available(&self) -> String {
        let jsonpath = "jsonpath={.status.conditions[?(@.type==\"Available\")].status}";
        let out = self.front.kubectl("1.33", &["get", "apiservice", APISERVICE, "-o", jsonpath]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Start the extension again (after [`Apiary::stop`]) in its data dir.
    pub fn restart_extension(&mut self) {
        let args: Vec<&str> = self.extension_args.iter().map(String::as_str).collect();
        self.extension = Apiary::start_in(self.extension_dir.path(), &args);
    }
}
