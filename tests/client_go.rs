//! `--client-go VERSION` builds that release's informer. For each release,
//! through the built binary against `kwatch sim`: a resync, then a relist after a 410
//! (a deletion and an update made while the watch was stalled, then compacted away) —
//! the delta types each release's queue produces and their order, `batch` on deltas of
//! batch pops, `clientGo` and `queue` on the List and Synced records, and the streaming
//! list a release turns on by default.

use serde_json::{json, Value};

use crate::util::kwatch::{
    command, configmap, create_configmap, is_delta, kubectl_f, of_type, on_new_sim, Running,
};
use crate::util::shared::*;
use crate::util::{SimProcess, LIMIT};

/// What a release's informer shows.
struct Expect {
    release: &'static str,
    queue: &'static str,
    streaming: bool,
    /// The delta type of a resync's records.
    sync: &'static str,
    /// The relist's records, `type key` in order (`†`: the tombstone).
    relist: [&'static str; 4],
    /// `batch` on the resync's records and on the relist's (`None`: absent).
    batch: Option<(u64, u64)>,
}

/// The configmaps in `default`: the simulator's two and the test's two.
const KEYS: [&str; 4] = [
    "default/app-config",
    "default/c1",
    "default/c2",
    "default/kube-root-ca.crt",
];

/// The first `n` delta records of `recs` (reflector records among them skipped).
fn deltas(recs: &[Value], n: usize) -> Vec<&Value> {
    recs.iter().filter(|r| is_delta(r)).take(n).collect()
}

/// `Type key`, with ` †` for a tombstone.
fn brief(r: &Value) -> String {
    let t = if r["finalStateUnknown"] == true {
        " †"
    } else {
        ""
    };
    format!(
        "{} {}{t}",
        r["type"].as_str().unwrap(),
        r["key"].as_str().unwrap()
    )
}

/// Watches `default`'s configmaps with `--client-go release` and a 1 s resync until the
/// first resync has been popped; then, while the watch is stalled, deletes `app-config`
/// and changes `c1`, compacts and drops the watch: the re-watch gets 410 and a relist
/// follows. Returns every record, up to the relist's four deltas.
fn resync_then_relist(release: &str) -> Vec<Value> {
    let sim = SimProcess::start(&[]);
    for name in ["c1", "c2"] {
        create_configmap(&sim, "default", name, json!({"k": "1"}));
    }
    let mut kw = sim.start_kwatch(format!(
        "configmaps -n default -o json --diff --resync 1s --client-go {release}"
    ));
    let resynced = |v: &[Value]| {
        let Some(at) = v.iter().position(|r| r["type"] == "Resync") else {
            return false;
        };
        deltas(&v[at..], KEYS.len()).len() == KEYS.len()
    };
    kw.wait_for(LIMIT, "a resync's deltas", resynced);
    sim.forced_410(|sim| {
        sim.kubectl_ok("delete configmap app-config -n default");
        kubectl_f(
            sim,
            "replace",
            &configmap("default", "c1", json!({"k": "2"})),
        );
    });
    kw.wait_for(LIMIT, "the relist's deltas", |v| {
        relisted(v).is_some_and(|at| deltas(&v[at..], 4).len() == 4)
    })
}

/// Where the relist's records begin: after the second Listed.
fn relisted(v: &[Value]) -> Option<usize> {
    v.iter()
        .enumerate()
        .filter(|(_, r)| r["type"] == "Listed")
        .nth(1)
        .map(|(i, _)| i + 1)
}

/// The relist of the RealFIFO releases (0.33 on, before 0.36's atomic one): the
/// tombstone, then the listed objects.
const TOMBSTONE_FIRST: [&str; 4] = [
    "Deleted default/app-config †",
    "Replaced default/c1",
    "Replaced default/c2",
    "Replaced default/kube-root-ca.crt",
];

fn check(e: &Expect) {
    let recs = resync_then_relist(e.release);
    let lists = of_type(&recs, "List");
    assert!(lists.len() >= 2, "a list and a relist: {recs:#?}");
    for r in lists.iter().chain(&of_type(&recs, "Synced")) {
        assert_eq!(r["clientGo"], e.release, "{r}");
        assert_eq!(r["queue"], e.queue, "{r}");
    }
    assert_eq!(lists[0]["streaming"], e.streaming, "{}", lists[0]);
    assert_eq!(of_type(&recs, "Listed")[0]["streaming"], e.streaming);

    // The resync: one record per known object, of the release's type.
    let at = recs.iter().position(|r| r["type"] == "Resync").unwrap();
    let resync = deltas(&recs[at..], KEYS.len());
    let mut keys: Vec<&str> = resync.iter().map(|r| r["key"].as_str().unwrap()).collect();
    keys.sort();
    assert_eq!(keys, KEYS, "{resync:#?}");
    for r in &resync {
        assert_eq!(r["type"], e.sync, "{r}");
        assert_eq!(r["changed"], false, "a resync changes nothing: {r}");
        assert_eq!(r["batch"].as_u64(), e.batch.map(|b| b.0), "{r}");
    }

    // The relist: the tombstone and the listed objects, in the release's order.
    let relist = deltas(&recs[relisted(&recs).unwrap()..], 4);
    let got: Vec<String> = relist.iter().map(|r| brief(r)).collect();
    assert_eq!(got, e.relist, "{relist:#?}");
    for r in &relist {
        assert_eq!(r["initialList"], false, "{r}");
        assert_eq!(r["batch"].as_u64(), e.batch.map(|b| b.1), "{r}");
        match r["key"].as_str().unwrap() {
            "default/app-config" => {
                assert_eq!(r["finalStateUnknown"], true, "{r}");
                assert_eq!(
                    r["object"]["data"]["log-level"], "info",
                    "last known state: {r}"
                );
            }
            "default/c1" => {
                assert_eq!(r["changed"], true, "{r}");
                assert_eq!(
                    r["diff"],
                    json!([{"op": "replace", "path": "/data/k", "value": "2"}]),
                    "{r}"
                );
            }
            _ => assert_eq!(r["changed"], false, "{r}"),
        }
    }
}

#[test]
fn client_go_0_32_delta_fifo_lists_then_tombstones() {
    check(&Expect {
        release: "0.32",
        queue: "DeltaFIFO",
        streaming: false,
        sync: "Sync",
        // DeltaFIFO queues the listed objects first, then the tombstones.
        relist: [
            "Replaced default/c1",
            "Replaced default/c2",
            "Replaced default/kube-root-ca.crt",
            "Deleted default/app-config †",
        ],
        batch: None,
    });
}

#[test]
fn client_go_0_33_real_fifo_tombstones_first() {
    check(&Expect {
        release: "0.33",
        queue: "RealFIFO",
        streaming: false,
        sync: "Sync",
        relist: TOMBSTONE_FIRST,
        batch: None,
    });
}

#[test]
fn client_go_0_35_pops_in_batches_after_a_streaming_list() {
    check(&Expect {
        release: "0.35",
        queue: "RealFIFO+batch",
        streaming: true,
        sync: "Sync",
        relist: TOMBSTONE_FIRST,
        // A resync's four Sync deltas, and the relist's four deltas, have distinct keys:
        // one pop each.
        batch: Some((4, 4)),
    });
}

#[test]
fn client_go_0_36_relists_and_resyncs_atomically() {
    check(&Expect {
        release: "0.36",
        queue: "RealFIFO+batch+atomic",
        streaming: true,
        sync: "SyncAll",
        // processReplacedAllInfo: the deletions against the store, then the list.
        relist: [
            "Deleted default/app-config †",
            "ReplacedAll default/c1",
            "ReplacedAll default/c2",
            "ReplacedAll default/kube-root-ca.crt",
        ],
        // One SyncAll, one ReplacedAll delta popped.
        batch: Some((1, 1)),
    });
}

/// The table says which informer on the initial list and Synced lines; `--stats` too.
#[test]
fn the_table_and_stats_name_the_release() {
    let args = "configmaps -n default --client-go v1.36.2 --until-synced --stats";
    let (_sim, out) = on_new_sim(&[], args);
    let rows: Vec<&String> = out.stdout.iter().skip(1).collect();
    assert_eq!(rows.len(), 2, "{:?}", out.stdout);
    for r in rows {
        assert!(r.starts_with("ReplacedAll "), "{r}");
    }
    for want in [
        "~ watch-list configmaps at rv=\"\" (client-go 0.36, RealFIFO+batch+atomic)",
        "~ synced configmaps (client-go 0.36, RealFIFO+batch+atomic)",
        "  informer: client-go 0.36, RealFIFO+batch+atomic",
    ] {
        assert!(
            out.stderr.lines().any(|l| l == want),
            "{want:?} in:\n{}",
            out.stderr
        );
    }
}

/// Without `--client-go`, records name the server's release; `--fifo real`
/// on the sim's 1.32, whose client-go 0.32 had no RealFIFO, is 0.33's informer.
#[test]
fn without_a_release_fifo_real_is_0_33s_informer_on_a_1_32_server() {
    let args = "configmaps -n default -o json --until-synced --fifo real";
    let (_sim, out) = on_new_sim(&[], args);
    let recs = out.json();
    assert!(!of_type(&recs, "List").is_empty(), "{recs:#?}");
    for r in of_type(&recs, "List")
        .iter()
        .chain(&of_type(&recs, "Synced"))
    {
        assert_eq!(r["queue"], "RealFIFO", "{r}");
        assert_eq!(r["clientGo"], "0.33", "{r}");
    }
    let deltas: Vec<&Value> = recs.iter().filter(|r| is_delta(r)).collect();
    assert!(!deltas.is_empty(), "{recs:#?}");
    assert!(
        deltas.iter().all(|r| r.get("batch").is_none()),
        "{deltas:#?}"
    );
}

/// Bad combinations and versions: one line naming the problem and the fix, exit 2, before
/// any request.
#[test]
fn bad_releases_and_combinations_are_refused_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    for (args, want) in [
        (
            &["--client-go", "0.30"][..],
            "give one of 0.32, 0.33, 0.34, 0.35, 0.36",
        ),
        (
            &["--client-go", "0.31"][..],
            "client-go 0.31 is not a release whose informer kwatch reproduces",
        ),
        (&["--client-go", "latest"], "is not a client-go release"),
        (
            &["--client-go", "0.32", "--fifo", "real"],
            "client-go 0.32 has no RealFIFO",
        ),
        (
            &["--client-go", "0.33", "--legacy-sync"],
            "--legacy-sync applies to DeltaFIFO only",
        ),
        (&["--fifo", "real", "--legacy-sync"], "add --fifo delta"),
    ] {
        let mut cmd = command(dir.path());
        cmd.args(args)
            .args(["pods", "--server", "https://127.0.0.1:1"]);
        let out = Running::spawn(cmd).finish(LIMIT);
        assert_eq!(out.code(), Some(2), "{args:?}: {}", out.stderr);
        assert!(out.stdout.is_empty(), "{args:?}");
        let first = out.stderr.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("error: ") && first.contains(want),
            "{args:?}: {}",
            out.stderr
        );
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    }
}

/// An explicit `--fifo` (and `--watch-list`) overrides the release's default; the rest of
/// the release stays: 0.36 with a DeltaFIFO still starts with a streaming list, and
/// `--legacy-sync` is fine with a DeltaFIFO whichever the release.
#[test]
fn an_explicit_fifo_overrides_the_releases_queue() {
    let args =
        "configmaps -n default -o json --until-synced --client-go 0.36 --fifo delta --legacy-sync";
    let (sim, out) = on_new_sim(&[], args);
    let recs = out.json();
    let list = of_type(&recs, "List")[0];
    assert_eq!(
        (&list["clientGo"], &list["queue"], &list["streaming"]),
        (&json!("0.36"), &json!("DeltaFIFO"), &json!(true)),
        "{list}"
    );
    let types: Vec<&str> = recs
        .iter()
        .filter(|r| is_delta(r))
        .map(|r| r["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["Sync", "Sync"], "legacy relists queue Sync");
    let out = sim
        .kwatch("configmaps -n default -o json --until-synced --client-go 0.35 --watch-list off")
        .exits(0);
    let recs = out.json();
    assert_eq!(of_type(&recs, "List")[0]["streaming"], false);
    assert_eq!(of_type(&recs, "Synced")[0]["queue"], "RealFIFO+batch");
}

/// A recording keeps the release: `kwatch replay -o json` gives it back byte for byte,
/// `ReplacedAll`, `batch`, `clientGo` and `queue` included.
#[test]
fn a_recording_replays_byte_for_byte_with_the_release() {
    let sim = SimProcess::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rec.jsonl");
    let file = file.to_str().unwrap();
    sim.kwatch(
        format!("configmaps -n default -o name --until-synced --client-go 0.36 --record {file}")
            .as_str(),
    )
    .exits(0);
    let recorded = std::fs::read_to_string(file).unwrap();
    assert!(recorded.contains(r#""type":"ReplacedAll""#), "{recorded}");
    assert!(recorded.contains(r#""batch":1"#), "{recorded}");
    assert!(recorded.contains(r#""clientGo":"0.36","queue":"RealFIFO+batch+atomic""#));
    let mut cmd = command(dir.path());
    cmd.args(["replay", file, "-o", "json"]);
    let replayed = Running::spawn(cmd).finish(LIMIT);
    assert_eq!(replayed.code(), Some(0), "{}", replayed.stderr);
    assert_eq!(replayed.stdout, recorded.lines().collect::<Vec<_>>());
}

/// Against `kwatch sim` (kube-apiserver 1.32), the default is client-go 0.32's
/// informer: DeltaFIFO and a paged LIST, no streaming list; the `~` lines name it.
#[test]
fn the_default_against_a_1_32_server_is_client_go_0_32() {
    let sim = SimProcess::start(&[]);
    assert_eq!(sim.get("/version").json()["minor"], "32");
    let recs = synced_configmaps(&sim, &[]);
    assert_eq!(informer(&recs), ("0.32".into(), "DeltaFIFO".into(), false));
    let log = request_paths(&sim);
    assert!(log.iter().any(|p| p == "/version"), "{log:#?}");
    assert!(
        log.iter()
            .any(|p| p.starts_with("/api/v1/namespaces/default/configmaps?limit=500")),
        "a paged LIST: {log:#?}"
    );
    assert!(!streamed(&sim), "no streaming list: {log:#?}");

    let out = sim.kwatch("configmaps -n default --until-synced").exits(0);
    assert!(!out.stdout.is_empty(), "{}", out.stderr);
    let notes: Vec<&str> = out.stderr.lines().collect();
    assert!(
        notes.first().is_some_and(
            |l| l.starts_with("~ list configmaps at rv=\"0\", 500 per page")
                && l.ends_with(" (client-go 0.32, DeltaFIFO)")
        ),
        "{notes:#?}"
    );
    assert_eq!(
        notes.last(),
        Some(&"~ synced configmaps (client-go 0.32, DeltaFIFO)")
    );
}

/// A server that reports Kubernetes 1.35 gets client-go 0.35's informer (RealFIFO
/// with batch pops, a streaming list); older and newer minors are clamped to 0.32…0.37.
#[test]
fn the_servers_minor_chooses_the_release_clamped() {
    for (version, release, queue, streaming) in [
        ("1.35", "0.35", "RealFIFO+batch", true),
        ("1.33+", "0.33", "RealFIFO", false),
        ("1.31", "0.32", "DeltaFIFO", false),
        ("1.37", "0.37", "RealFIFO+batch+atomic", true),
        ("1.40", "0.37", "RealFIFO+batch+atomic", true),
    ] {
        let sim = SimProcess::start(&["--server-version", version]);
        let recs = synced_configmaps(&sim, &[]);
        assert_eq!(
            informer(&recs),
            (release.into(), queue.into(), streaming),
            "server {version}"
        );
        assert_eq!(streamed(&sim), streaming, "server {version}");
        // A batch pop says so on each of its deltas; other pops on none.
        let deltas: Vec<&Value> = recs.iter().filter(|r| is_delta(r)).collect();
        assert!(!deltas.is_empty(), "server {version}: {recs:#?}");
        let batched = queue.contains("batch");
        assert!(
            deltas.iter().all(|r| r.get("batch").is_some() == batched),
            "server {version}: {recs:#?}"
        );
    }
}

/// `--client-go`, `--watch-list` and `--fifo` override the server's release.
#[test]
fn explicit_flags_override_the_servers_release() {
    let sim = SimProcess::start(&["--server-version", "1.35"]);
    let recs = synced_configmaps(&sim, &["--client-go", "0.32"]);
    assert_eq!(informer(&recs), ("0.32".into(), "DeltaFIFO".into(), false));
    assert!(!streamed(&sim));
    // --client-go names the release: /version is not asked.
    assert!(!request_paths(&sim).iter().any(|p| p == "/version"));
    let recs = synced_configmaps(&sim, &["--watch-list", "off"]);
    assert_eq!(
        informer(&recs),
        ("0.35".into(), "RealFIFO+batch".into(), false)
    );
    assert!(!streamed(&sim));
    let recs = synced_configmaps(&sim, &["--fifo", "delta"]);
    assert_eq!(informer(&recs), ("0.35".into(), "DeltaFIFO".into(), true));

    let sim = SimProcess::start(&[]);
    let recs = synced_configmaps(&sim, &["--watch-list", "on"]);
    assert_eq!(informer(&recs), ("0.32".into(), "DeltaFIFO".into(), true));
    assert!(streamed(&sim));
    // 0.32 has no RealFIFO: `--fifo real` is 0.33's informer, the first with one.
    let recs = synced_configmaps(&sim, &["--fifo", "real"]);
    assert_eq!(informer(&recs), ("0.33".into(), "RealFIFO".into(), false));
}

/// A server newer than the newest release kwatch reproduces gets that release's informer,
/// and one `~` line saying so; a 1.37 server, whose release kwatch has, gets none.
#[test]
fn a_server_newer_than_0_37_is_watched_as_0_37_with_one_note() {
    let (_sim, out) = on_new_sim(
        &["--server-version", "1.38"],
        "configmaps -n default -o json --until-synced",
    );
    assert!(!out.stdout.is_empty(), "{}", out.stderr);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", out.stderr);
    assert!(
        lines[0].starts_with("~ the server is Kubernetes 1.38, newer than any client-go")
            && lines[0].contains("client-go 0.37's informer"),
        "{}",
        out.stderr
    );
    assert_eq!(
        informer(&out.json()),
        ("0.37".into(), "RealFIFO+batch+atomic".into(), true)
    );
    let (_sim, out) = on_new_sim(
        &["--server-version", "1.37"],
        "configmaps -n default -o json --until-synced",
    );
    assert!(out.stderr.is_empty(), "{}", out.stderr);
    assert_eq!(informer(&out.json()).0, "0.37");
}

/// A `/version` that does not parse gives the documented fallback, 0.32, with one
/// `~` line saying so; the watch goes on.
#[test]
fn an_unreadable_version_falls_back_to_0_32_with_one_note() {
    let (_sim, out) = on_new_sim(
        &["--server-version", "1.x"],
        "configmaps -n default -o json --until-synced",
    );
    assert!(!out.stdout.is_empty(), "{}", out.stderr);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", out.stderr);
    assert!(
        lines[0].starts_with("~ cannot tell the server's Kubernetes version")
            && lines[0].contains("client-go 0.32")
            && lines[0].contains("--client-go"),
        "{}",
        out.stderr
    );
    assert_eq!(
        informer(&out.json()),
        ("0.32".into(), "DeltaFIFO".into(), false)
    );
}
