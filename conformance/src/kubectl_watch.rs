//! A `kubectl get -w` (or any long-running kubectl) as a child process whose output
//! is read line by line as it is printed.

use crate::harness::{kubectl_command, Apiary};
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

/// A `kubectl get -w` running as a child process, its output read line by line;
/// killed when dropped, so a failing test leaves no process behind.
pub struct Watcher {
    child: std::process::Child,
    lines: mpsc::Receiver<String>,
    /// Every line read so far, each split into its words.
    seen: Vec<Vec<String>>,
}

impl Watcher {
    pub fn start(apiary: &Apiary, version: &str, args: &[&str]) -> Watcher {
        let mut child = kubectl_command(version, &apiary.kubeconfig)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("kubectl get -w starts");
        let (tx, lines) = mpsc::channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Watcher { child, lines, seen: Vec::new() }
    }

    /// The words of the `nth` (from 1) row whose first word is `name`, waiting at most
    /// 30 s for it to be printed.
    pub fn row(&mut self, name: &str, nth: usize) -> Vec<String> {
        let mut seen = 0;
        self.wait_for(&format!("row {nth} of {name}"), |row| {
            seen += usize::from(row.first().map(String::as_str) == Some(name));
            seen == nth
        })
    }

    /// The words of the first row `wanted` is true of, waiting at most 30 s for it to
    /// be printed.
    pub fn wait_for(&mut self, what: &str, mut wanted: impl FnMut(&[String]) -> bool) -> Vec<String> {
        let mut looked = 0;
        loop {
            if let Some(row) = self.seen[looked..].iter().find(|row| wanted(row)) {
                return row.clone();
            }
            looked = self.seen.len();
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(30))
                .unwrap_or_else(|_| panic!("no {what} within 30 s; printed: {:?}", self.seen));
            self.seen.push(line.split_whitespace().map(str::to_owned).collect());
        }
    }

    /// Stop kubectl; every line it printed.
    pub fn stop(mut self) -> Vec<Vec<String>> {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // The reader ends at the pipe's end, after the lines still buffered.
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            self.seen.push(line.split_whitespace().map(str::to_owned).collect());
        }
        std::mem::take(&mut self.seen)
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

