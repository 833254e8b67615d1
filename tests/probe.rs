//! `--probe NAMESPACE`: write-to-delta latency against the simulator's slow delivery
//! (`POST /_sim/delay`), the probe's ConfigMap deleted on every way a run ends (checked
//! with kubectl), a missing right refused in one line, a crashed run's leftover deleted at
//! start, and the probe's figure as a plain watch's.

use std::time::Duration;

use serde_json::{json, Value};

use crate::util::kwatch::{configmap, kubectl_f, of_type};
use crate::util::SimProcess;

const S: Duration = Duration::from_secs(1);
/// A service account that may get, list and watch, but not write (crates/sim/src/auth.rs).
const VIEWER: &str = "system:serviceaccount:default:viewer";

/// The probe ConfigMaps in `default`, as kubectl lists them.
pub(crate) fn probes_left(sim: &SimProcess) -> Vec<String> {
    let out = sim.kubectl_ok([
        "get",
        "cm",
        "-n",
        "default",
        "-l",
        "kwatch.io/probe=true",
        "-o",
        "name",
    ]);
    out.lines().map(str::to_owned).collect()
}

/// The middle of `ms` (the lower one of an even count).
fn median(mut ms: Vec<f64>) -> f64 {
    ms.sort_by(f64::total_cmp);
    ms[(ms.len() - 1) / 2]
}

/// Each Latency record's `ms`.
fn latencies(records: &[Value]) -> Vec<f64> {
    of_type(records, "Latency")
        .iter()
        .map(|r| r["ms"].as_f64().expect("ms"))
        .collect()
}

#[test]
fn probe_measures_the_delivery_delay_and_cleans_up_at_timeout() {
    let sim = SimProcess::start(&[]);
    sim.control("POST", "delay", json!({"ms": 200}));
    let out = sim
        .kwatch("namespaces -o json --probe default --probe-interval 300ms --timeout 4s --stats")
        .exits(0);
    assert!(!out.stdout.is_empty(), "{}", out.stderr);
    let records = out.json();
    let probe = of_type(&records, "Latency");
    assert!(
        probe.len() >= 5,
        "{} Latency records:\n{}",
        probe.len(),
        out.stdout.join("\n")
    );
    for r in &probe {
        assert!(
            r["probe"]
                .as_str()
                .unwrap()
                .starts_with("default/kwatch-probe-"),
            "{r}"
        );
        assert_eq!(r["resource"], "configmaps", "{r}");
        assert!(r["sent"].as_str().unwrap().ends_with('Z'), "{r}");
    }
    let ms = latencies(&records);
    let p50 = median(ms.clone());
    assert!((150.0..=400.0).contains(&p50), "p50 {p50} ms of {ms:?}");
    // The summary says the same.
    let line = out
        .stderr
        .lines()
        .find(|l| l.trim_start().starts_with("probe latency:"))
        .unwrap_or_else(|| panic!("no probe latency in --stats:\n{}", out.stderr));
    let p50_stats: f64 = line
        .split("p50 ")
        .nth(1)
        .and_then(|s| s.split("ms").next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!((150.0..=400.0).contains(&p50_stats), "{line}");
    assert!(
        line.contains(&format!("over {} writes", probe.len())),
        "{line}"
    );
    assert_eq!(
        probes_left(&sim),
        Vec::<String>::new(),
        "deleted after --timeout"
    );
}

#[test]
fn probe_configmap_is_deleted_after_ctrl_c_sigterm_and_max_events() {
    let sim = SimProcess::start(&[]);
    for (how, code) in [("SIGINT", 130), ("SIGTERM", 143)] {
        let mut kw = sim.start_kwatch("namespaces -o json --probe default --probe-interval 200ms");
        kw.wait_for(20 * S, "a Latency record", |v| {
            !of_type(v, "Latency").is_empty()
        });
        assert_eq!(
            probes_left(&sim).len(),
            1,
            "the probe's ConfigMap while it runs"
        );
        let out = match how {
            "SIGINT" => kw.interrupt(20 * S),
            _ => kw.terminate(20 * S),
        };
        assert_eq!(out.status.code(), Some(code), "{how}: {}", out.stderr);
        assert_eq!(
            probes_left(&sim),
            Vec::<String>::new(),
            "deleted after {how}"
        );
    }
    // A normal end: --max-events stops at the first delta, right after the probe started.
    let out = sim
        .kwatch("namespaces -o json --probe default --max-events 1")
        .exits(0);
    assert!(!out.stdout.is_empty(), "{}", out.stderr);
    assert_eq!(
        probes_left(&sim),
        Vec::<String>::new(),
        "deleted after --max-events"
    );
    // The run did write: the ConfigMap it created and deleted is in the request log.
    let requests = sim.control("GET", "requests", json!({}));
    let deleted = requests["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| {
            r["method"] == "DELETE"
                && r["path"].as_str().is_some_and(|p| {
                    p.starts_with("/api/v1/namespaces/default/configmaps/kwatch-probe-")
                })
        })
        .count();
    assert_eq!(deleted, 3, "{requests}");
}

#[test]
fn probe_without_the_right_to_write_is_one_line_and_exit_1() {
    let sim = SimProcess::start(&[]);
    let out = sim.kwatch(format!("namespaces -o json --probe default --as {VIEWER}"));
    assert_eq!(out.status.code(), Some(1), "{}", out.stderr);
    assert!(out.stdout.is_empty(), "{:?}", out.stdout);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", out.stderr);
    let line = lines[0];
    assert!(
        line.starts_with("error: --probe needs to create configmaps in the namespace \"default\""),
        "{line}"
    );
    assert!(
        line.contains("kubectl auth can-i create configmaps -n default"),
        "{line}"
    );
    assert_eq!(probes_left(&sim), Vec::<String>::new());
    // Asked as `kubectl auth can-i` asks, before any write: no create was tried.
    let requests = sim.control("GET", "requests", json!({}));
    let all = requests["requests"].as_array().unwrap();
    assert!(
        all.iter().any(|r| r["path"]
            .as_str()
            .unwrap()
            .contains("selfsubjectaccessreviews")),
        "{requests}"
    );
    assert!(
        !all.iter()
            .any(|r| r["method"] == "POST" && r["path"].as_str().unwrap().contains("/configmaps")),
        "{requests}"
    );
}

/// A namespace that does not exist: the server's 404 in kubectl's words, one line, not
/// kube's Debug dump of its Status.
#[test]
fn probe_into_a_missing_namespace_is_kubectls_not_found_line() {
    let sim = SimProcess::start(&[]);
    let out = sim.kwatch("namespaces -o json --probe no-such-ns");
    assert_eq!(out.status.code(), Some(1), "{}", out.stderr);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", out.stderr);
    assert_eq!(
        lines[0],
        "error: --probe cannot create configmaps in the namespace \"no-such-ns\": Error from \
         server (NotFound): namespaces \"no-such-ns\" not found"
    );
}

#[test]
fn a_crashed_runs_probe_is_deleted_at_start_and_a_live_one_kept() {
    let sim = SimProcess::start(&[]);
    let probe = |name: &str, sent: &str, interval_ms: &str| {
        let mut cm = configmap("default", name, json!({}));
        cm["metadata"]["labels"] = json!({"kwatch.io/probe": "true"});
        cm["metadata"]["annotations"] = json!({"kwatch.io/probe-seq": "9",
            "kwatch.io/probe-sent": sent, "kwatch.io/probe-interval-ms": interval_ms});
        kubectl_f(&sim, "create", &cm);
    };
    probe(
        "kwatch-probe-crash",
        "2020-01-01T00:00:00.000000000Z",
        "2000",
    );
    // Another run's, written just now with a one-minute interval: alive.
    probe(
        "kwatch-probe-alive",
        &jiff::Timestamp::now().to_string(),
        "60000",
    );
    let out = sim
        .kwatch("namespaces -o json --probe default --max-events 1")
        .exits(0);
    assert!(!out.stdout.is_empty(), "{}", out.stderr);
    // The whole line, ending where its sentence ends.
    assert!(
        out.stderr.lines().any(|l| l
            == "~ --probe deleted default/kwatch-probe-crash, left by a run that ended \
                without deleting it (killed, or cut off from the server)"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("kwatch-probe-alive"), "{}", out.stderr);
    assert_eq!(
        probes_left(&sim),
        vec!["configmap/kwatch-probe-alive".to_owned()]
    );
}

/// Regression: kwatch's sockets left Nagle's algorithm on, so each PATCH's body (written
/// after its head) waited for the server's delayed ACK, and `--probe` reported ~45 ms
/// where a plain watch saw the write in ~5. The baseline is a plain
/// `kwatch configmaps` timing writes sent by the test's own client (reqwest, TCP_NODELAY as
/// Go's): from just before each PATCH to its `Updated` record's `time`. Nagle's wait is
/// the server's delayed ACK (40 ms at least on Linux), added to every probe write: so the
/// fastest of each run's writes are compared, which a loaded machine slows only if it
/// slows every write of the run (medians of 9 writes once differed by 6 ms under load).
#[test]
fn probe_latency_is_a_plain_watchs_not_its_own_sockets() {
    const WRITES: usize = 9;
    let sim = SimProcess::start(&["--churn", "0"]);
    kubectl_f(&sim, "create", &configmap("default", "plain", json!({})));
    let mut kw = sim.start_kwatch("configmaps -n default -o json");
    kw.wait_for(20 * S, "the initial list", |v| {
        v.iter().any(|r| r["name"] == "plain")
    });
    let path = "/api/v1/namespaces/default/configmaps/plain";
    let mut plain = Vec::new();
    for i in 0..WRITES {
        let sent = jiff::Timestamp::now();
        let patch = json!({"data": {"i": i.to_string()}}).to_string();
        let resp = sim.request("PATCH", path, Some("application/merge-patch+json"), &patch);
        assert_eq!(resp.status, 200, "{}", resp.body);
        let rv = resp.json()["metadata"]["resourceVersion"].clone();
        let records = kw.wait_for(20 * S, "the write's Updated record", |v| {
            v.iter()
                .any(|r| r["type"] == "Updated" && r["resourceVersion"] == rv)
        });
        let record = records
            .iter()
            .find(|r| r["type"] == "Updated" && r["resourceVersion"] == rv)
            .unwrap();
        let seen: jiff::Timestamp = record["time"].as_str().unwrap().parse().unwrap();
        plain.push(seen.duration_since(sent).as_secs_f64() * 1000.0);
    }
    kw.interrupt(20 * S);
    let out = sim
        .kwatch("namespaces -o json --probe default --probe-interval 200ms --timeout 4s")
        .exits(0);
    let probe = latencies(&out.json());
    assert!(probe.len() >= WRITES, "{probe:?}\n{}", out.stderr);
    let fastest = |ms: &[f64]| ms.iter().copied().fold(f64::INFINITY, f64::min);
    let (probe_min, plain_min) = (fastest(&probe), fastest(&plain));
    assert!(
        probe_min < plain_min + 20.0,
        "--probe's fastest {probe_min:.1} ms of {probe:?}, a plain watch's {plain_min:.1} ms of {plain:?}"
    );
}
