//! A load test past the in-flight limits on the real binary (memory storage), as
//! issue 8 asks: 1,000 ConfigMaps of 1 KiB are preloaded (so that each LIST answers
//! 1.3 MB), then 256 concurrent keep-alive HTTPS clients LIST them and create more for
//! several seconds, refused clients trying again 20 ms later.
//!
//! - Every refused request is a 429 with `Retry-After: 1` and a TooManyRequests Status.
//! - A good share of the work is served: the limit sheds the excess without starving
//!   the admitted requests.
//! - apiary's resident memory stays bounded (see [`rss_bound`]): the excess is refused
//!   at once, never queued or buffered.
//! - /metrics agrees with what the clients saw: `apiserver_current_inflight_requests`
//!   (the limiter's peak) never exceeds the limits, and
//!   `apiserver_request_terminations_total{code="429"}`, the counter upstream's
//!   max-in-flight filter increments for each refusal since 1.25 removed
//!   `apiserver_dropped_requests_total`, counts exactly the 429s the clients got.
//! - Once the load stops, no place is left taken: requests exactly at the limits are
//!   all served, round after round.
//!
//! The limits are 4 and 2. A request admitted by the limits lets the others through
//! them before its handler runs (it yields once): with memory storage a handler never
//! waits, and before that yield at most one request per executor thread was ever in
//! flight, so this load got no 429 at all and the excess queued unread in the sockets
//! (answers up to 5 s late) instead of being refused.
//!
//! The load comes from a user outside `system:masters`, whom upstream never refuses.
mod limits_support;

use apiary_conformance::harness::Apiary;
use kube::Client;
use limits_support::{
    admin_client, assert_too_many_requests, configmap, send, unprivileged_client, Answer,
};
use serde_json::json;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const READ_LIMIT: usize = 4;
const MUTATING_LIMIT: usize = 2;
const CONFIGMAPS: usize = 1000;
const PAYLOAD: usize = 1024;
/// Concurrent clients, each on its own keep-alive connection.
const LISTERS: usize = 128;
const CREATORS: usize = 128;
const LOAD_FOR: Duration = Duration::from_secs(5);
/// A refused client tries again after this, not after the second `Retry-After` asks,
/// so that the load stays well past the limits for the whole run.
const PAUSE_AFTER_429: Duration = Duration::from_millis(20);

const LIST: &str = "/api/v1/namespaces/load/configmaps";
const CREATE: &str = "/api/v1/namespaces/load-writes/configmaps";

/// A full LIST of the preloaded ConfigMaps, checked without parsing 1.3 MB of JSON.
fn assert_full_list(a: &Answer) {
    assert_eq!(a.status, 200);
    assert!(
        a.body.len() > CONFIGMAPS * PAYLOAD,
        "{} bytes",
        a.body.len()
    );
    // Written as Go writes the list type: its kind first, its items last.
    let head = String::from_utf8_lossy(&a.body[..40]);
    assert!(head.starts_with(r#"{"kind":"ConfigMapList""#), "{head}");
    assert!(a.body.ends_with(b"]}\n"), "the whole list arrived");
}

/// The pid of the `apiary` this test started: the child of this process whose
/// command line names its data dir.
fn apiary_pid(data_dir: &Path) -> u32 {
    let me = std::process::id().to_string();
    let data_dir = data_dir.display().to_string();
    for entry in std::fs::read_dir("/proc").unwrap().map_while(Result::ok) {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let args: Vec<_> = cmdline
            .split(|b| *b == 0)
            .map(String::from_utf8_lossy)
            .collect();
        let ours = args.iter().any(|a| *a == data_dir)
            && status_field(pid, "PPid:").is_some_and(|p| p.to_string() == me);
        if ours {
            return pid;
        }
    }
    panic!("no apiary child with --data-dir {data_dir}");
}

/// A number field of /proc/<pid>/status (kB for the memory ones).
fn status_field(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line[field.len()..].split_whitespace().next()?.parse().ok()
}

/// The CPU time the process has used, user and system, in seconds.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    ticks as f64 / 100.0
}

fn mib(kb: u64) -> f64 {
    kb as f64 / 1024.0
}

/// The bound on apiary's resident memory under the load, in kB: its idle RSS after
/// the preload, a working set for the load, and room for the objects the served
/// creates stored (which is growth, not buffering).
///
/// Measured (debug build, 2 shared cores, 8 runs): idle 20 MiB; the peak under the
/// load 36-46 MiB. After the load, RSS stays about 4 KiB per served create above the
/// load's transient part (the ConfigMap in storage, in the watch cache and its event
/// history), and the transient part was 11-18 MiB: the admitted LIST building its
/// 1.3 MB answer through a few copies (objects, JSON, TLS records) and each of the
/// 256 connections' 16 KiB read buffer and TLS state. The bound allows 32 MiB for the
/// working set and 8 KiB a create, about twice each, for allocator slack and a
/// shared machine; it still catches unbounded buffering of the excess: the ~125
/// LISTs past the limit at any moment would take 125 x 1.3 MB = 160 MB were they read
/// and answered at once instead of refused.
fn rss_bound(idle_kb: u64, creates: u64) -> u64 {
    idle_kb + 32 * 1024 + creates * 8
}

#[derive(Default)]
struct Tally {
    lists: AtomicU64,
    refused_lists: AtomicU64,
    creates: AtomicU64,
    refused_creates: AtomicU64,
}

/// The sum of a metric's samples whose line contains every one of `with`.
fn metric_sum(text: &str, name: &str, with: &[&str]) -> f64 {
    text.lines()
        .filter(|l| l.starts_with(&format!("{name}{{")) || l.starts_with(&format!("{name} ")))
        .filter(|l| with.iter().all(|w| l.contains(w)))
        .map(|l| l.rsplit_once(' ').unwrap().1.parse::<f64>().unwrap())
        .sum()
}

async fn scrape(admin: &Client) -> String {
    let a = send(admin, "GET", "/metrics", None).await;
    assert_eq!(a.status, 200);
    String::from_utf8(a.body.to_vec()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_past_the_limit_is_shed_with_bounded_memory_and_recovers() {
    let started = Instant::now();
    let read_limit = format!("--max-requests-inflight={READ_LIMIT}");
    let mutating_limit = format!("--max-mutating-requests-inflight={MUTATING_LIMIT}");
    // The two limits as they are, without priority and fairness in their place.
    let apiary = Apiary::start_with(&["--storage", "memory", "--enable-priority-and-fairness=false", &read_limit, &mutating_limit]);
    let pid = apiary_pid(&apiary.data_dir);
    let admin = admin_client(&apiary).await;
    let loader = unprivileged_client(&apiary).await;

    // The preload, as system:masters, whom the limits never refuse.
    for ns in ["load", "load-writes"] {
        let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
        let a = send(&admin, "POST", "/api/v1/namespaces", Some(&ns)).await;
        assert_eq!(a.status, 201);
    }
    let preload: Vec<_> = (0..16)
        .map(|w| {
            let admin = admin.clone();
            tokio::spawn(async move {
                for i in (w..CONFIGMAPS).step_by(16) {
                    let cm = configmap(&format!("cm-{i:04}"), PAYLOAD);
                    let a = send(&admin, "POST", LIST, Some(&cm)).await;
                    assert_eq!(a.status, 201, "{}", a.json());
                }
            })
        })
        .collect();
    for t in preload {
        t.await.unwrap();
    }
    // One LIST at a time, unloaded: the median of 3.
    let mut alone = Vec::new();
    for _ in 0..3 {
        let t0 = Instant::now();
        assert_full_list(&send(&loader, "GET", LIST, None).await);
        alone.push(t0.elapsed());
    }
    alone.sort();
    let one_list = alone[1];
    let preloaded = started.elapsed();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let idle_kb = status_field(pid, "VmRSS:").expect("VmRSS");
    let cpu_before = cpu_seconds(pid);

    // Resident memory, sampled through the load.
    let sampling = Arc::new(AtomicBool::new(true));
    let sampler = {
        let sampling = sampling.clone();
        std::thread::spawn(move || {
            let (mut peak, mut fds) = (0, 0);
            while sampling.load(Ordering::Acquire) {
                if let Some(rss) = status_field(pid, "VmRSS:") {
                    peak = peak.max(rss);
                }
                let open = std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count());
                fds = fds.max(open);
                std::thread::sleep(Duration::from_millis(10));
            }
            (peak, fds)
        })
    };

    // The load.
    let tally = Arc::new(Tally::default());
    let deadline = Instant::now() + LOAD_FOR;
    let mut clients = Vec::new();
    for c in 0..LISTERS + CREATORS {
        let (loader, tally) = (loader.clone(), tally.clone());
        clients.push(tokio::spawn(async move {
            let mut n = 0;
            while Instant::now() < deadline {
                let a = if c < LISTERS {
                    send(&loader, "GET", LIST, None).await
                } else {
                    n += 1;
                    let cm = configmap(&format!("w-{c}-{n}"), PAYLOAD);
                    send(&loader, "POST", CREATE, Some(&cm)).await
                };
                let (served, refused) = if c < LISTERS {
                    (&tally.lists, &tally.refused_lists)
                } else {
                    (&tally.creates, &tally.refused_creates)
                };
                match a.status {
                    429 => {
                        assert_too_many_requests(&a);
                        refused.fetch_add(1, Ordering::Relaxed);
                        tokio::time::sleep(PAUSE_AFTER_429).await;
                    }
                    200 => {
                        assert_full_list(&a);
                        served.fetch_add(1, Ordering::Relaxed);
                    }
                    201 if c >= LISTERS => {
                        served.fetch_add(1, Ordering::Relaxed);
                    }
                    other => panic!("got {other}: {}", a.json()),
                }
            }
        }));
    }
    for t in clients {
        t.await.unwrap();
    }
    let load_took = deadline.elapsed() + LOAD_FOR;
    sampling.store(false, Ordering::Release);
    let (peak_kb, fds) = sampler.join().unwrap();
    let cpu_load = cpu_seconds(pid) - cpu_before;
    let hwm_kb = status_field(pid, "VmHWM:").expect("VmHWM");

    let lists = tally.lists.load(Ordering::Relaxed);
    let refused_lists = tally.refused_lists.load(Ordering::Relaxed);
    let creates = tally.creates.load(Ordering::Relaxed);
    let refused_creates = tally.refused_creates.load(Ordering::Relaxed);
    let total = lists + refused_lists + creates + refused_creates;
    let bound_kb = rss_bound(idle_kb, creates);
    let secs = load_took.as_secs_f64();
    eprintln!(
        "started and preloaded {CONFIGMAPS} ConfigMaps in {preloaded:?}; one LIST alone: \
         {one_list:?}\n\
         load for {load_took:?} from {} clients ({fds} fds open at most), apiary CPU \
         {cpu_load:.1} s: {total} requests ({:.0}/s), {:.1}% refused\n\
         - LISTs {lists} served ({:.1}/s, {:.1} MB/s), {refused_lists} refused\n\
         - creates {creates} served ({:.1}/s), {refused_creates} refused\n\
         apiary RSS: idle {:.1} MiB, peak sampled {:.1} MiB, VmHWM {:.1} MiB, bound {:.1} MiB",
        LISTERS + CREATORS,
        total as f64 / secs,
        100.0 * (refused_lists + refused_creates) as f64 / total as f64,
        lists as f64 / secs,
        lists as f64 * (CONFIGMAPS * (PAYLOAD + 250)) as f64 / secs / 1e6,
        creates as f64 / secs,
        mib(idle_kb),
        mib(peak_kb),
        mib(hwm_kb),
        mib(bound_kb),
    );

    // Well past the limits: more requests of each kind refused than served.
    assert!(refused_lists > lists, "LISTs past the limit are refused");
    assert!(
        refused_creates > creates,
        "creates past the limit are refused"
    );
    // And yet the admitted requests keep the server at work: LISTs are served at no
    // less than a tenth of the rate of four LISTs at a time on the idle server
    // (measured: 15%, the rest of the 2 cores going to refusals, creates and this
    // test's own clients, which retry 20 ms after a 429), and creates are served
    // throughout (measured: 12.6/s in a debug build).
    let idle_rate = READ_LIMIT as f64 / one_list.as_secs_f64();
    assert!(
        lists as f64 / secs >= idle_rate / 10.0,
        "{:.1} LISTs/s served, one at a time alone {idle_rate:.1}/s",
        lists as f64 / secs
    );
    assert!(creates as f64 / secs >= 2.0, "creates are served");
    // Bounded memory.
    assert!(
        peak_kb <= bound_kb && hwm_kb <= bound_kb,
        "apiary's resident memory grew under the load: peak {:.1} MiB (VmHWM {:.1} MiB), \
         over the bound of {:.1} MiB (idle {:.1} MiB)",
        mib(peak_kb),
        mib(hwm_kb),
        mib(bound_kb),
        mib(idle_kb)
    );

    // /metrics agrees with the clients. The first scrape reports the peak since the
    // start, the second those in flight now: itself, and nothing left taken.
    let text = scrape(&admin).await;
    let inflight = |text: &str, kind: &str| {
        metric_sum(
            text,
            "apiserver_current_inflight_requests",
            &[&format!("request_kind=\"{kind}\"")],
        )
    };
    assert_eq!(inflight(&text, "readOnly"), READ_LIMIT as f64, "the peak");
    assert_eq!(
        inflight(&text, "mutating"),
        MUTATING_LIMIT as f64,
        "the peak"
    );
    let terminated = |verb: &str| {
        metric_sum(
            &text,
            "apiserver_request_terminations_total",
            &["code=\"429\"", &format!("verb=\"{verb}\"")],
        )
    };
    assert_eq!(terminated("LIST"), refused_lists as f64, "{text}");
    assert_eq!(terminated("POST"), refused_creates as f64, "{text}");
    assert_eq!(
        metric_sum(&text, "apiserver_request_total", &["code=\"429\""]),
        (refused_lists + refused_creates) as f64
    );
    let text = scrape(&admin).await;
    assert_eq!(inflight(&text, "readOnly"), 1.0, "only the scrape: {text}");
    assert_eq!(inflight(&text, "mutating"), 0.0, "no place left taken");

    // Once the load stops, every request succeeds, even exactly at the limits.
    for round in 0..5 {
        let lists: Vec<_> = (0..READ_LIMIT)
            .map(|_| {
                let loader = loader.clone();
                tokio::spawn(async move { send(&loader, "GET", LIST, None).await })
            })
            .collect();
        let creates: Vec<_> = (0..MUTATING_LIMIT)
            .map(|i| {
                let loader = loader.clone();
                let cm = configmap(&format!("after-{round}-{i}"), 64);
                tokio::spawn(async move { send(&loader, "POST", CREATE, Some(&cm)).await })
            })
            .collect();
        for t in lists {
            assert_full_list(&t.await.unwrap());
        }
        for t in creates {
            let a = t.await.unwrap();
            assert_eq!(a.status, 201, "{}", a.json());
        }
        // A place is given back just after its answer is written; let the last ones go.
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let a = send(&loader, "GET", CREATE, None).await;
    assert_eq!(a.status, 200);
    assert_eq!(
        a.json()["items"].as_array().unwrap().len() as u64,
        // ... and the namespace's kube-root-ca.crt.
        creates + 5 * MUTATING_LIMIT as u64 + 1,
        "every served create is stored, no refused one is"
    );
    let rss_after = status_field(pid, "VmRSS:").expect("VmRSS");
    eprintln!(
        "after the load: RSS {:.1} MiB; test took {:?}",
        mib(rss_after),
        started.elapsed()
    );
    drop(apiary);
}
