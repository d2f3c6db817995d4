//! Starting the real `apiary` binary for a test: a free loopback port, a data
//! directory of its own, and a process that is stopped when the test ends.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{mpsc, Arc, Mutex, OnceLock};
use std::time::Duration;

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("conformance/ has a parent")
        .to_path_buf()
}

/// The path of a file under conformance/tests/fixtures.
pub fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

/// The `apiary` binary, built once per test process so tests always run the current code.
pub fn apiary_binary() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Ok(bin) = std::env::var("APIARY_BIN") {
            return PathBuf::from(bin);
        }
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let status = Command::new(cargo)
            .args(["build", "--quiet", "-p", "apiary-smol", "--bin", "apiary"])
            .current_dir(workspace_root())
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building apiary failed");
        let target = std::env::var("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|_| workspace_root().join("target"));
        target.join("debug").join("apiary")
    })
}

/// The `apiary` command on a free loopback port in `data_dir`, with extra flags.
pub fn apiary_command(data_dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(apiary_binary());
    command
        .args([
            "--bind-address",
            "127.0.0.1",
            "--secure-port",
            "0",
            "--data-dir",
        ])
        .arg(data_dir)
        .args(args);
    command
}

/// A running `apiary` process; killed when dropped.
pub struct Apiary {
    child: Child,
    /// `https://127.0.0.1:<port>`
    pub url: String,
    pub kubeconfig: PathBuf,
    pub data_dir: PathBuf,
    /// What the process logged (the last [`LOG_LINES_KEPT`] lines).
    log: Arc<Mutex<std::collections::VecDeque<String>>>,
    _dir: Option<tempfile::TempDir>,
}

/// How many of the process's log lines an [`Apiary`] keeps for [`Apiary::wait_for_log`].
pub const LOG_LINES_KEPT: usize = 10_000;

impl Apiary {
    /// Start `apiary` on its default storage (sqlite) on a free loopback port with a
    /// fresh data dir. Set `APIARY_TEST_STORAGE=memory` to run the tests on memory.
    pub fn start() -> Apiary {
        match std::env::var("APIARY_TEST_STORAGE") {
            Ok(storage) if !storage.is_empty() => Self::start_with(&["--storage", &storage]),
            _ => Self::start_with(&[]),
        }
    }

    /// Start with extra flags, in a fresh data dir.
    pub fn start_with(args: &[&str]) -> Apiary {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut a = Self::start_in(dir.path(), args);
        a._dir = Some(dir);
        a
    }

    /// Start with extra flags in the given data dir (kept after the process stops).
    pub fn start_in(data_dir: &Path, args: &[&str]) -> Apiary {
        let mut child = apiary_command(data_dir, args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("apiary starts");
        let stderr = child.stderr.take().expect("piped stderr");
        let (tx, rx) = mpsc::channel();
        let log = Arc::new(Mutex::new(std::collections::VecDeque::new()));
        let kept = log.clone();
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                {
                    let mut kept = kept.lock().unwrap_or_else(|p| p.into_inner());
                    if kept.len() == LOG_LINES_KEPT {
                        kept.pop_front();
                    }
                    kept.push_back(line.clone());
                }
                if line.contains("apiary ready at ") {
                    if let Some(tx) = tx.take() {
                        let _ = tx.send(line.clone());
                    }
                }
                if std::env::var_os("APIARY_TEST_LOG").is_some() {
                    eprintln!("apiary: {line}");
                }
            }
        });
        let line = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(line) => line,
            Err(_) => {
                let _ = child.kill();
                panic!("apiary did not report ready within 60 s");
            }
        };
        let url = line
            .split("apiary ready at ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .expect("ready line has a URL")
            .to_owned();
        let kubeconfig = line
            .split("kubeconfig: ")
            .nth(1)
            .map(|rest| rest.trim_end_matches(')').trim())
            .map(PathBuf::from)
            .expect("ready line names the kubeconfig");
        Apiary {
            child,
            url,
            kubeconfig,
            data_dir: data_dir.to_path_buf(),
            log,
            _dir: None,
        }
    }

    /// How many of the kept log lines contain `needle`.
    pub fn log_count(&self, needle: &str) -> usize {
        self.log
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter(|line| line.contains(needle))
            .count()
    }

    /// Wait up to `within` for a log line containing `needle`; whether one came.
    pub fn wait_for_log(&self, needle: &str, within: Duration) -> bool {
        let deadline = std::time::Instant::now() + within;
        loop {
            let seen = self
                .log
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .iter()
                .any(|line| line.contains(needle));
            if seen {
                return true;
            }
            if std::time::Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// A kubeconfig (written into the data dir) for this server that authenticates
    /// with the bearer `token`, as user `name`.
    pub fn token_kubeconfig(&self, name: &str, token: &str) -> PathBuf {
        let admin = std::fs::read_to_string(&self.kubeconfig).expect("admin kubeconfig");
        let ca = admin
            .lines()
            .find_map(|l| l.trim().strip_prefix("certificate-authority-data: "))
            .expect("the admin kubeconfig names the CA");
        let path = self.data_dir.join(format!("{name}.kubeconfig"));
        std::fs::write(
            &path,
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: apiary\n  cluster:\n    server: {}\n    certificate-authority-data: {ca}\n\
                 users:\n- name: {name}\n  user:\n    token: {token}\ncontexts:\n- name: {name}\n  context:\n    cluster: apiary\n    user: {name}\n\
                 current-context: {name}\n",
                self.url
            ),
        )
        .expect("kubeconfig written");
        path
    }

    /// Run kubectl `version` (e.g. "1.33") against this server.
    pub fn kubectl(&self, version: &str, args: &[&str]) -> Output {
        kubectl_command(version, &self.kubeconfig)
            .args(args)
            .output()
            .expect("kubectl runs")
    }

    /// Run kubectl with `input` on its standard input (`-f -`).
    pub fn kubectl_with_input(&self, version: &str, args: &[&str], input: &str) -> Output {
        use std::io::Write as _;
        let mut child = kubectl_command(version, &self.kubeconfig)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("kubectl runs");
        child.stdin.take().expect("piped").write_all(input.as_bytes()).expect("kubectl reads its input");
        child.wait_with_output().expect("kubectl runs")
    }

    /// Run kubectl until it succeeds, for at most 20 s: a resource a CRD has just
    /// added may be missing a moment longer from kubectl's cached discovery.
    pub fn kubectl_until_served(&self, version: &str, args: &[&str]) -> String {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        loop {
            let out = self.kubectl(version, args);
            if out.status.success() || std::time::Instant::now() >= deadline {
                return ok(&out);
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Send the process a signal by name (`TERM`, `INT`, ...).
    pub fn signal(&self, name: &str) {
        send_signal(self.child.id(), name);
    }

    /// Wait up to `within` for the process to exit; its status, if it did.
    pub fn wait_exit(&mut self, within: Duration) -> Option<std::process::ExitStatus> {
        let deadline = std::time::Instant::now() + within;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            if std::time::Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Stop the process now.
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Apiary {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A kubectl command of the given minor version, pointed at `kubeconfig`, with a
/// cache dir of its own so tests do not share discovery caches.
pub fn kubectl_command(version: &str, kubeconfig: &Path) -> Command {
    let bin = format!("/usr/lib/google-cloud-sdk/bin/kubectl.{version}");
    let mut cmd = Command::new(bin);
    let cache = kubeconfig
        .parent()
        .unwrap_or(Path::new("."))
        .join(format!("kube-cache-{version}"));
    cmd.arg("--kubeconfig")
        .arg(kubeconfig)
        .arg("--cache-dir")
        .arg(cache)
        .env_remove("KUBECONFIG")
        .stdin(Stdio::null());
    cmd
}

/// stdout of a finished command, asserting that it succeeded.
pub fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "command failed ({}):\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Send process `pid` the signal `name` with kill(1).
pub fn send_signal(pid: u32, name: &str) {
    let sent = Command::new("kill")
        .arg(format!("-{name}"))
        .arg(pid.to_string())
        .status()
        .expect("kill runs");
    assert!(sent.success(), "kill -{name} {pid} failed");
}

/// The CRD `widgets.example.com` (namespaced, one version `v1` served and stored) whose
/// objects' `spec` follows `spec_schema` (an OpenAPI v3 schema in YAML's flow style or
/// JSON, on one line).
pub fn widget_crd(spec_schema: &str) -> String {
    format!(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\nspec:\n  group: example.com\n  scope: Namespaced\n  names:\n    plural: widgets\n    kind: Widget\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          spec: {spec_schema}\n"
    )
}

/// Poll `done` every 100 ms until it holds; fail naming `what` after 20 s.
pub fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(std::time::Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}
