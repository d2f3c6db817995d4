//! The audit log backend (kube-apiserver's `--audit-log-*` flags): event lines from the
//! core's [`Record`](apiary_core::audit::Record)s handed to a dedicated thread that
//! appends them to `--audit-log-path` (`-`: standard output), rotating the file at
//! `--audit-log-maxsize` megabytes and keeping `--audit-log-maxbackup` old files no older
//! than `--audit-log-maxage` days, named as upstream's rotation (lumberjack) names them:
//! `audit-2006-01-02T15-04-05.000.log` for `audit.log`, in UTC.
//!
//! Requests never wait for the disk: a line is queued without blocking, and when the
//! queue is full it is dropped and counted, as upstream's non-blocking modes do.

use apiary_core::audit::Policy;
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TryRecvError, TrySendError};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Lines queued for the writer at most.
const QUEUE: usize = 10_000;
/// What `--audit-log-maxsize=0` means: lumberjack's default, 100 megabytes.
const DEFAULT_MAX_SIZE_MB: u64 = 100;
const MEGABYTE: u64 = 1024 * 1024;

/// Where the audit log goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LogPath {
    Stdout,
    File(PathBuf),
}

/// Auditing as the flags configure it: on only with both a policy and a log path.
#[derive(Clone, Debug)]
pub struct AuditOptions {
    pub policy: Arc<Policy>,
    pub path: LogPath,
    /// `--audit-log-maxsize`, megabytes; 0 is lumberjack's default of 100.
    pub max_size_mb: u64,
    /// `--audit-log-maxbackup`; 0 keeps every old file.
    pub max_backups: usize,
    /// `--audit-log-maxage`, days; 0 keeps old files whatever their age.
    pub max_age_days: u64,
}

/// The flags' values, as given (`None`: not given).
pub struct Flags<'a> {
    pub policy_file: Option<&'a str>,
    pub path: Option<&'a str>,
    pub max_size: &'a str,
    pub max_backup: &'a str,
    pub max_age: &'a str,
    pub format: &'a str,
}

/// Check the audit flags, reading and checking the policy file; every problem is
/// added to `problems`. `None` when auditing is off (no policy file or no log path, as
/// upstream) or a flag is bad.
pub fn options_from_flags(flags: Flags<'_>, problems: &mut Vec<String>) -> Option<AuditOptions> {
    let mut count = |name: &str, value: &str| match value.parse::<u64>() {
        Ok(n) => Some(n),
        Err(_) => {
            problems.push(format!(
                "invalid value {value:?} for --{name}: must be a non-negative integer"
            ));
            None
        }
    };
    let max_size_mb = count("audit-log-maxsize", flags.max_size);
    let max_backups = count("audit-log-maxbackup", flags.max_backup);
    let max_age_days = count("audit-log-maxage", flags.max_age);
    match flags.format {
        "json" => {}
        "legacy" => problems.push(
            "invalid value \"legacy\" for --audit-log-format: apiary writes only the json \
             format"
                .to_owned(),
        ),
        other => problems.push(format!(
            "invalid value {other:?} for --audit-log-format: invalid audit log format \
             {other}, allowed formats are \"legacy,json\""
        )),
    }
    let path = match flags.path {
        None | Some("") => None,
        Some("-") => Some(LogPath::Stdout),
        Some(path) => match std::path::absolute(path) {
            Ok(path) => Some(LogPath::File(path)),
            Err(e) => {
                problems.push(format!("invalid value {path:?} for --audit-log-path: {e}"));
                None
            }
        },
    };
    let policy = match flags.policy_file.filter(|p| !p.is_empty()) {
        None => None,
        Some(file) => match std::fs::read(file) {
            Ok(text) => match Policy::parse(&text) {
                Ok(policy) => Some(Arc::new(policy)),
                Err(e) => {
                    problems.push(format!("--audit-policy-file {file}: {e}"));
                    None
                }
            },
            Err(e) => {
                problems.push(format!(
                    "--audit-policy-file {file}: failed to read file path {file:?}: {e}"
                ));
                None
            }
        },
    };
    Some(AuditOptions {
        policy: policy?,
        path: path?,
        max_size_mb: max_size_mb?,
        max_backups: usize::try_from(max_backups?).unwrap_or(usize::MAX),
        max_age_days: max_age_days?,
    })
}

/// What the writer thread is handed.
enum Queued {
    Line(String),
    /// Write out everything queued before this, then answer.
    Flush(mpsc::Sender<()>),
}

/// The running audit log: lines in, a writer thread appending them.
pub struct AuditLog {
    queue: SyncSender<Queued>,
    dropped: Arc<AtomicU64>,
}

impl AuditLog {
    /// Open the log (creating the file and its directory if need be, so that a path
    /// that cannot be written fails the start) and start its writer thread.
    pub fn start(options: &AuditOptions) -> io::Result<AuditLog> {
        let mut sink: Box<dyn Sink> = match &options.path {
            LogPath::Stdout => Box::new(BufWriter::new(io::stdout())),
            LogPath::File(path) => Box::new(Rotating::open(
                path.clone(),
                match options.max_size_mb {
                    0 => DEFAULT_MAX_SIZE_MB * MEGABYTE,
                    mb => mb.saturating_mul(MEGABYTE),
                },
                options.max_backups,
                (options.max_age_days > 0)
                    .then(|| Duration::from_secs(options.max_age_days.saturating_mul(86_400))),
            )?),
        };
        let (queue, lines) = mpsc::sync_channel(QUEUE);
        std::thread::Builder::new()
            .name("apiary-audit-log".to_owned())
            .spawn(move || write_lines(&lines, &mut *sink))?;
        Ok(AuditLog {
            queue,
            dropped: Arc::new(AtomicU64::new(0)),
        })
    }

    /// Queue one event line; never waits. A line that finds the queue full is dropped.
    pub fn write(&self, line: String) {
        match self.queue.try_send(Queued::Line(line)) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                let dropped = self.dropped.fetch_add(1, Ordering::Relaxed);
                if dropped.is_multiple_of(1000) {
                    tracing::error!(
                        "audit log queue is full: {} audit events dropped so far",
                        dropped + 1
                    );
                }
            }
            Err(TrySendError::Disconnected(_)) => {
                let dropped = self.dropped.fetch_add(1, Ordering::Relaxed);
                if dropped.is_multiple_of(1000) {
                    tracing::error!("audit log writer has stopped: audit events are dropped");
                }
            }
        }
    }
}

impl AuditLog {
    /// Write out every line queued so far, waiting at most `within` (at exit, so that
    /// the last requests' events are not lost).
    pub fn flush(&self, within: Duration) {
        let (done, flushed) = mpsc::channel();
        if self.queue.send(Queued::Flush(done)).is_ok() && flushed.recv_timeout(within).is_err() {
            tracing::warn!("the audit log was not written out within {within:?}");
        }
    }
}

/// Where the writer thread puts lines.
trait Sink: Send {
    fn write_line(&mut self, line: &[u8]) -> io::Result<()>;
    fn flush_lines(&mut self) -> io::Result<()>;
}

impl<W: Write + Send> Sink for BufWriter<W> {
    fn write_line(&mut self, line: &[u8]) -> io::Result<()> {
        self.write_all(line)
    }
    fn flush_lines(&mut self) -> io::Result<()> {
        Write::flush(self)
    }
}

/// The writer thread: write each line, flushing whenever the queue runs dry, until
/// every sender is gone.
fn write_lines(lines: &Receiver<Queued>, sink: &mut dyn Sink) {
    loop {
        let line = match lines.try_recv() {
            Ok(line) => line,
            Err(TryRecvError::Empty) => {
                if let Err(e) = sink.flush_lines() {
                    tracing::error!("writing the audit log: {e}");
                }
                match lines.recv() {
                    Ok(line) => line,
                    Err(_) => return,
                }
            }
            Err(TryRecvError::Disconnected) => {
                let _ = sink.flush_lines();
                return;
            }
        };
        match line {
            Queued::Line(line) => {
                if let Err(e) = sink.write_line(line.as_bytes()) {
                    tracing::error!("writing the audit log: {e}");
                }
            }
            Queued::Flush(done) => {
                if let Err(e) = sink.flush_lines() {
                    tracing::error!("writing the audit log: {e}");
                }
                let _ = done.send(());
            }
        }
    }
}

/// A log file rotated by size, as lumberjack rotates it.
struct Rotating {
    path: PathBuf,
    file: BufWriter<File>,
    size: u64,
    max_size: u64,
    max_backups: usize,
    max_age: Option<Duration>,
}

fn open_append(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

impl Rotating {
    fn open(
        path: PathBuf,
        max_size: u64,
        max_backups: usize,
        max_age: Option<Duration>,
    ) -> io::Result<Rotating> {
        let context = |e: io::Error| {
            io::Error::new(
                e.kind(),
                format!("failed to open audit log file {}: {e}", path.display()),
            )
        };
        if let Some(dir) = path.parent() {
            let mut builder = std::fs::DirBuilder::new();
            builder.recursive(true);
            #[cfg(unix)]
            std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
            builder.create(dir).map_err(context)?;
        }
        let file = open_append(&path).map_err(context)?;
        let size = file.metadata().map_err(context)?.len();
        Ok(Rotating {
            path,
            file: BufWriter::new(file),
            size,
            max_size,
            max_backups,
            max_age,
        })
    }

    /// Append `line`, first rotating when it would take the file past its size.
    fn write_at(&mut self, line: &[u8], now: SystemTime) -> io::Result<()> {
        let len = line.len() as u64;
        if len > self.max_size {
            return Err(io::Error::other(format!(
                "write length {len} exceeds maximum file size {}",
                self.max_size
            )));
        }
        if self.size + len > self.max_size {
            self.rotate(now)?;
        }
        self.file.write_all(line)?;
        self.size += len;
        Ok(())
    }

    /// Move the file aside under its backup name, start a new one, and remove the
    /// backups beyond the count and age kept.
    fn rotate(&mut self, now: SystemTime) -> io::Result<()> {
        self.file.flush()?;
        let mut at = now;
        let mut backup = backup_name(&self.path, at);
        // Two rotations within a millisecond would share a name: keep both.
        while backup.exists() {
            at += Duration::from_millis(1);
            backup = backup_name(&self.path, at);
        }
        std::fs::rename(&self.path, &backup)?;
        self.file = BufWriter::new(open_append(&self.path)?);
        self.size = 0;
        self.remove_old_backups(now);
        Ok(())
    }

    fn remove_old_backups(&self, now: SystemTime) {
        let (Some(dir), Some(name)) = (self.path.parent(), self.path.file_name()) else {
            return;
        };
        let (prefix, ext) = split_name(&name.to_string_lossy());
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut backups: Vec<(String, PathBuf)> = entries
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                let stamp = name
                    .strip_prefix(&format!("{prefix}-"))?
                    .strip_suffix(ext.as_str())?;
                backup_time(stamp)?;
                Some((stamp.to_owned(), entry.path()))
            })
            .collect();
        // The stamps sort as the times they stand for: newest first.
        backups.sort_by(|a, b| b.0.cmp(&a.0));
        let cutoff = self.max_age.and_then(|age| now.checked_sub(age));
        for (i, (stamp, path)) in backups.iter().enumerate() {
            let too_many = self.max_backups > 0 && i >= self.max_backups;
            let too_old =
                cutoff.is_some_and(|cutoff| backup_time(stamp).is_some_and(|t| t < cutoff));
            if too_many || too_old {
                if let Err(e) = std::fs::remove_file(path) {
                    tracing::warn!("removing old audit log {}: {e}", path.display());
                }
            }
        }
    }
}

impl Sink for Rotating {
    fn write_line(&mut self, line: &[u8]) -> io::Result<()> {
        self.write_at(line, SystemTime::now())
    }
    fn flush_lines(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// `audit.log` → (`audit`, `.log`); `audit` → (`audit`, ``).
fn split_name(name: &str) -> (String, String) {
    match name.rfind('.') {
        Some(dot) if dot > 0 => (name[..dot].to_owned(), name[dot..].to_owned()),
        _ => (name.to_owned(), String::new()),
    }
}

/// Lumberjack's backup name: `<name>-2006-01-02T15-04-05.000<ext>`, UTC.
fn backup_name(path: &Path, at: SystemTime) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (prefix, ext) = split_name(&name);
    let since = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    let seconds = apiary_core::time::rfc3339(UNIX_EPOCH + Duration::from_secs(since.as_secs()));
    let stamp = format!(
        "{}.{:03}",
        seconds.trim_end_matches('Z').replace(':', "-"),
        since.subsec_millis()
    );
    path.with_file_name(format!("{prefix}-{stamp}{ext}"))
}

/// The time a backup's stamp stands for, if it is one.
fn backup_time(stamp: &str) -> Option<SystemTime> {
    let (date, millis) = stamp.split_once('.')?;
    let (day, time) = date.split_once('T')?;
    if millis.len() != 3 || time.len() != 8 {
        return None;
    }
    let millis: u64 = millis.parse().ok()?;
    let seconds = apiary_core::time::parse_rfc3339(&format!("{day}T{}Z", time.replace('-', ":")))?;
    Some(UNIX_EPOCH + Duration::from_secs(seconds) + Duration::from_millis(millis))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory, removed when dropped.
    struct TempDir(PathBuf);

    impl TempDir {
        fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn tempdir() -> TempDir {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "apiary-audit-log-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn at(secs: u64, millis: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_millis(millis)
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn backup_names_are_lumberjacks() {
        let t = at(1_700_000_000, 7);
        assert_eq!(
            backup_name(Path::new("/var/log/audit.log"), t),
            Path::new("/var/log/audit-2023-11-14T22-13-20.007.log")
        );
        assert_eq!(
            backup_name(Path::new("/var/log/audit"), t),
            Path::new("/var/log/audit-2023-11-14T22-13-20.007")
        );
        assert_eq!(backup_time("2023-11-14T22-13-20.007"), Some(t));
        assert_eq!(backup_time("2023-11-14T22-13-20"), None);
    }

    #[test]
    fn rotates_by_size_and_keeps_max_backups() {
        let dir = tempdir();
        let path = dir.path().join("logs").join("audit.log");
        let mut log = Rotating::open(path.clone(), 10, 2, None).unwrap();
        // Two 4-byte lines fit in 10 bytes; the third starts a new file.
        for (i, line) in [
            "aaa\n", "bbb\n", "ccc\n", "ddd\n", "eee\n", "fff\n", "ggg\n",
        ]
        .iter()
        .enumerate()
        {
            log.write_at(line.as_bytes(), at(1_700_000_000 + i as u64, 0))
                .unwrap();
        }
        log.flush_lines().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "ggg\n");
        // Rotations at lines 3, 5 and 7: the oldest backup is gone.
        assert_eq!(
            names(path.parent().unwrap()),
            [
                "audit-2023-11-14T22-13-24.000.log",
                "audit-2023-11-14T22-13-26.000.log",
                "audit.log"
            ]
        );
        let backup = path.with_file_name("audit-2023-11-14T22-13-24.000.log");
        assert_eq!(std::fs::read_to_string(backup).unwrap(), "ccc\nddd\n");
        // A line larger than a whole file is refused, as lumberjack refuses it.
        assert!(log.write_at(&[b'x'; 11], at(1_700_000_100, 0)).is_err());
    }

    #[test]
    fn appends_to_an_existing_file_and_counts_its_size() {
        let dir = tempdir();
        let path = dir.path().join("audit");
        std::fs::write(&path, "12345678\n").unwrap();
        let mut log = Rotating::open(path.clone(), 10, 0, None).unwrap();
        log.write_at(b"aaaaa\n", at(1_700_000_000, 1)).unwrap();
        log.write_at(b"bbbbb\n", at(1_700_000_000, 1)).unwrap();
        log.flush_lines().unwrap();
        // Two rotations within the same millisecond keep both backups.
        assert_eq!(
            names(dir.path()),
            [
                "audit",
                "audit-2023-11-14T22-13-20.001",
                "audit-2023-11-14T22-13-20.002"
            ]
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "bbbbb\n");
        let first = dir.path().join("audit-2023-11-14T22-13-20.001");
        assert_eq!(std::fs::read_to_string(first).unwrap(), "12345678\n");
    }

    #[test]
    fn removes_backups_older_than_max_age() {
        let dir = tempdir();
        let path = dir.path().join("audit.log");
        let day = 86_400;
        let mut log = Rotating::open(path.clone(), 4, 0, Some(Duration::from_secs(day))).unwrap();
        log.write_at(b"aaa\n", at(1_700_000_000, 0)).unwrap();
        log.write_at(b"bbb\n", at(1_700_000_000, 0)).unwrap();
        log.write_at(b"ccc\n", at(1_700_000_000 + 2 * day, 0))
            .unwrap();
        assert_eq!(
            names(dir.path()),
            ["audit-2023-11-16T22-13-20.000.log", "audit.log"]
        );
    }

    #[test]
    fn the_writer_thread_appends_queued_lines() {
        let dir = tempdir();
        let path = dir.path().join("audit.log");
        let policy = Policy::parse(
            b"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n",
        )
        .unwrap();
        let log = AuditLog::start(&AuditOptions {
            policy: Arc::new(policy),
            path: LogPath::File(path.clone()),
            max_size_mb: 0,
            max_backups: 0,
            max_age_days: 0,
        })
        .unwrap();
        for i in 0..100 {
            log.write(format!("{{\"n\":{i}}}\n"));
        }
        drop(log);
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let text = std::fs::read_to_string(&path).unwrap();
            if text.lines().count() == 100 {
                assert!(text
                    .lines()
                    .enumerate()
                    .all(|(i, l)| l == format!("{{\"n\":{i}}}")));
                break;
            }
            assert!(std::time::Instant::now() < deadline, "lines not written");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn flags() {
        let dir = tempdir();
        let policy = dir.path().join("policy.yaml");
        std::fs::write(
            &policy,
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n",
        )
        .unwrap();
        let policy = policy.to_str().unwrap();
        let flags = |policy_file, path, format| Flags {
            policy_file,
            path,
            max_size: "0",
            max_backup: "0",
            max_age: "0",
            format,
        };
        let mut problems = Vec::new();
        let on = options_from_flags(flags(Some(policy), Some("-"), "json"), &mut problems);
        assert_eq!(on.map(|o| o.path), Some(LogPath::Stdout));
        assert!(options_from_flags(flags(Some(policy), None, "json"), &mut problems).is_none());
        assert!(options_from_flags(flags(None, Some("a.log"), "json"), &mut problems).is_none());
        assert!(problems.is_empty(), "{problems:?}");
        let bad = dir.path().join("bad.yaml");
        std::fs::write(
            &bad,
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Loud\n",
        )
        .unwrap();
        let mut problems = Vec::new();
        let bad = bad.to_str().unwrap();
        assert!(
            options_from_flags(flags(Some(bad), Some("a.log"), "legacy"), &mut problems).is_none()
        );
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].contains("legacy"), "{problems:?}");
        assert!(problems[1].contains("Loud"), "{problems:?}");
        let mut problems = Vec::new();
        options_from_flags(
            flags(Some("/nonexistent/policy.yaml"), Some("-"), "json"),
            &mut problems,
        );
        assert!(
            problems[0].contains("/nonexistent/policy.yaml"),
            "{problems:?}"
        );
    }
}
