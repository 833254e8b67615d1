//! `kwatch check RESOURCE`: the battery against the simulator, healthy (as kube-apiserver
//! 1.32 and as 1.37, whose streaming lists come in gzip members) and bent each way
//! `kwatch sim --bend` (and `POST /_sim/bend`) bends the protocol: each bent server gets
//! exit 1 and a failing row that names the problem, a healthy one exit 0.

use serde_json::{json, Value};

use crate::util::kwatch::{command, create_configmap, Finished, Running};
use crate::util::{SimProcess, LIMIT};

/// `kwatch check ARGS --kubeconfig <sim's>`, run to its end, after one change elsewhere
/// (a ConfigMap in kube-system): a real cluster's revision always moves (its leases are
/// renewed every few seconds), while the resources checked may stay quiet.
fn check(sim: &SimProcess, args: &[&str]) -> Finished {
    static CHANGES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CHANGES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    create_configmap(
        sim,
        "kube-system",
        &format!("elsewhere-{n}"),
        json!({"n": "1"}),
    );
    let mut cmd = command(sim.dir());
    cmd.arg("check")
        .args(args)
        .arg("--kubeconfig")
        .arg(&sim.kubeconfig);
    Running::spawn(cmd).finish(LIMIT)
}

/// The `-o json` rows of a run, each checked against the documented schema (`context`
/// first with several contexts).
fn rows(out: &Finished) -> Vec<Value> {
    let rows = out.json();
    assert!(!rows.is_empty(), "no rows; stderr: {}", out.stderr);
    for r in &rows {
        let keys: Vec<&str> = r
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let keys = keys.strip_prefix(&["context"][..]).unwrap_or(&keys);
        assert_eq!(
            keys,
            ["check", "result", "server", "clientGo", "issue", "seconds"],
            "{r}"
        );
        assert!(
            ["ok", "warn", "fail", "skip"].contains(&r["result"].as_str().unwrap_or("")),
            "{r}"
        );
        assert!(r["seconds"].as_f64().is_some_and(|s| s >= 0.0), "{r}");
    }
    rows
}

/// The row of `name`.
fn row<'a>(rows: &'a [Value], name: &str) -> &'a Value {
    rows.iter()
        .find(|r| r["check"] == name)
        .unwrap_or_else(|| panic!("no row {name}: {rows:#?}"))
}

/// The rows that failed, by name.
fn failed(rows: &[Value]) -> Vec<&str> {
    rows.iter()
        .filter(|r| r["result"] == "fail")
        .filter_map(|r| r["check"].as_str())
        .collect()
}

/// Every check the battery runs, in order.
const CHECKS: [&str; 17] = [
    "discovery",
    "access",
    "list",
    "list.paging",
    "list.rv=0",
    "list.exact",
    "list.notOlderThan",
    "list.expiredContinue",
    "watch",
    "watch.expired",
    "streaming-list",
    "resourceVersion",
    "encoding.gzip",
    "encoding.protobuf",
    "encoding.watch-gzip",
    "encoding.table",
    "sync",
];

/// A healthy server (the simulator as kube-apiserver 1.32) passes every check, each row
/// of `-o json` in the documented shape, all within the bound (about 5 s: the one watch
/// that waits for its timeout).
#[test]
fn a_healthy_server_passes_every_check() {
    let sim = SimProcess::start(&[]);
    let out = check(&sim, &["pods", "-A", "-o", "json"]).exits(0);
    let rows = rows(&out);
    let names: Vec<&str> = rows.iter().filter_map(|r| r["check"].as_str()).collect();
    assert_eq!(names, CHECKS);
    for r in &rows {
        assert_eq!(r["result"], "ok", "{r}");
    }
    assert!(
        row(&rows, "watch.expired")["server"]
            .as_str()
            .is_some_and(|s| s.contains("410 Expired")),
        "{rows:#?}"
    );
    assert!(
        row(&rows, "streaming-list")["server"]
            .as_str()
            .is_some_and(|s| s.contains("k8s.io/initial-events-end")),
        "{rows:#?}"
    );
    let total: f64 = rows.iter().filter_map(|r| r["seconds"].as_f64()).sum();
    assert!(total < 30.0, "the battery took {total} s");
}

/// The table for people: a header, then one line per check with its result.
#[test]
fn the_table_has_one_line_per_check() {
    let sim = SimProcess::start(&[]);
    let out = check(&sim, &["configmaps", "-n", "default"]).exits(0);
    assert!(out.stdout[0].starts_with("CHECK"), "{:?}", out.stdout);
    assert_eq!(out.stdout.len(), CHECKS.len() + 1, "{:?}", out.stdout);
    for (line, name) in out.stdout[1..].iter().zip(CHECKS) {
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words[..2], [name, "ok"], "{line}");
    }
}

/// The simulator as 1.37 gzips its streaming lists, one gzip member per flush: client-go
/// (and kwatch) read every member, so the row is ok and names the upstream issue of
/// readers that stop at the first; client-go 0.36 syncs from the streaming list.
#[test]
fn a_1_37_server_with_gzip_members_passes() {
    let sim = SimProcess::start(&["--server-version", "1.37"]);
    let out = check(&sim, &["pods", "-A", "-o", "json"]).exits(0);
    let rows = rows(&out);
    assert_eq!(failed(&rows), Vec::<&str>::new(), "{rows:#?}");
    let gz = row(&rows, "encoding.watch-gzip");
    assert!(
        gz["server"].as_str().is_some_and(|s| s.contains("gzipped")),
        "{gz}"
    );
    assert_eq!(gz["issue"], "kube-rs/kube#2079");
    let sync = row(&rows, "sync");
    assert!(
        sync["server"]
            .as_str()
            .is_some_and(|s| s.starts_with("a streaming list")),
        "{sync}"
    );
}

/// `kwatch check pods -A -o json` against a simulator started with `--bend MODE` (and
/// `--server-version`, if given): exit 1, and the rows.
fn bent(mode: &str, version: Option<&str>) -> Vec<Value> {
    let mut args = vec!["--bend", mode];
    if let Some(v) = version {
        args.extend(["--server-version", v]);
    }
    let sim = SimProcess::start(&args);
    let out = check(&sim, &["pods", "-A", "-o", "json"]).exits(1);
    rows(&out)
}

/// No end bookmark: the streaming list fails, naming the missing annotation and
/// kubernetes/kubernetes#140890; against a 1.35 server (whose client-go syncs with a
/// streaming list) the sync fails too.
#[test]
fn a_streaming_list_without_its_end_bookmark_fails() {
    let rows = bent("no-end-bookmark", Some("1.35"));
    assert_eq!(failed(&rows), ["streaming-list", "sync"], "{rows:#?}");
    let r = row(&rows, "streaming-list");
    assert!(
        r["server"]
            .as_str()
            .is_some_and(|s| s.contains("no k8s.io/initial-events-end bookmark")),
        "{r}"
    );
    assert_eq!(r["issue"], "kubernetes/kubernetes#140890");
}

/// A clean close instead of 410 on a too-old resourceVersion fails `watch.expired`,
/// naming kubernetes/kubernetes#137089.
#[test]
fn a_clean_close_instead_of_410_fails() {
    let rows = bent("close-on-expired", None);
    assert_eq!(failed(&rows), ["watch.expired"], "{rows:#?}");
    let r = row(&rows, "watch.expired");
    assert!(
        r["server"]
            .as_str()
            .is_some_and(|s| s.contains("closed cleanly") && s.contains("no 410 Expired")),
        "{r}"
    );
    assert_eq!(r["issue"], "kubernetes/kubernetes#137089");
}

/// Watch forbidden while list is allowed: the access review says which verb is missing,
/// the watch is 403; the lists pass.
#[test]
fn watch_forbidden_while_list_is_allowed_fails() {
    let rows = bent("forbid-watch", None);
    assert_eq!(
        failed(&rows),
        ["access", "watch", "streaming-list"],
        "{rows:#?}"
    );
    let access = row(&rows, "access");
    assert!(
        access["server"]
            .as_str()
            .is_some_and(|s| s.contains("list yes, watch no")),
        "{access}"
    );
    assert_eq!(access["issue"], "kubernetes-sigs/controller-runtime#1653");
    let watch = row(&rows, "watch");
    assert!(
        watch["server"]
            .as_str()
            .is_some_and(|s| s.contains("403 Forbidden")),
        "{watch}"
    );
    assert_eq!(row(&rows, "list")["result"], "ok");
}

/// resourceVersions that are not integers are legal before KEP-5504 (LIST and WATCH work
/// with them): `resourceVersion` warns, naming karmada-io/karmada#3559, and the run passes.
#[test]
fn resource_versions_that_are_not_integers_warn() {
    let sim = SimProcess::start(&["--bend", "opaque-rv"]);
    let out = check(&sim, &["pods", "-A", "-o", "json"]).exits(0);
    let rows = rows(&out);
    assert_eq!(failed(&rows), Vec::<&str>::new(), "{rows:#?}");
    let r = row(&rows, "resourceVersion");
    assert_eq!(r["result"], "warn", "{r}");
    assert!(
        r["server"]
            .as_str()
            .is_some_and(|s| s.contains("is not a decimal integer")),
        "{r}"
    );
    assert_eq!(r["issue"], "karmada-io/karmada#3559");
    for ok in ["list", "list.exact", "streaming-list"] {
        assert_eq!(row(&rows, ok)["result"], "ok", "{rows:#?}");
    }
}

/// No bookmarks at all fails `watch`, which asked for them.
#[test]
fn a_watch_without_bookmarks_fails() {
    let rows = bent("no-bookmarks", None);
    assert_eq!(failed(&rows), ["watch"], "{rows:#?}");
    let r = row(&rows, "watch");
    assert!(
        r["server"]
            .as_str()
            .is_some_and(|s| s.contains("no bookmark")),
        "{r}"
    );
}

/// The control API bends a running simulator and straightens it again: the same server
/// fails, then passes.
#[test]
fn the_control_api_bends_and_straightens() {
    let sim = SimProcess::start(&[]);
    let on = sim.control("POST", "bend", json!({"mode": "close-on-expired"}));
    assert_eq!(on["modes"], json!(["close-on-expired"]));
    let out = check(&sim, &["pods", "-A", "-o", "json"]).exits(1);
    assert_eq!(failed(&rows(&out)), ["watch.expired"]);
    let off = sim.control(
        "POST",
        "bend",
        json!({"mode": "close-on-expired", "on": false}),
    );
    assert_eq!(off["modes"], json!([]));
    check(&sim, &["pods", "-A", "-o", "json"]).exits(0);
    let bad = sim.send_json("POST", "/_sim/bend", r#"{"mode":"sideways"}"#);
    assert_eq!(bad.status, 400, "{}", bad.body);
    assert!(
        bad.body.contains("no-end-bookmark"),
        "names the modes: {}",
        bad.body
    );
}

/// `--write NAMESPACE` adds a row timing a ConfigMap's create, patch and delete on a
/// watch, and leaves nothing behind.
#[test]
fn write_times_a_configmap_on_a_watch() {
    let sim = SimProcess::start(&[]);
    let out = check(
        &sim,
        &[
            "configmaps",
            "-n",
            "default",
            "--write",
            "default",
            "-o",
            "json",
        ],
    )
    .exits(0);
    let rows = rows(&out);
    let w = row(&rows, "write");
    assert_eq!(w["result"], "ok", "{w}");
    let text = w["server"].as_str().unwrap_or("");
    for step in ["create → ADDED", "patch → MODIFIED", "delete → DELETED"] {
        assert!(text.contains(step), "{text}");
    }
    let state = sim.get("/_sim/state").json();
    let left = state["objects"]["configmaps"]
        .as_object()
        .map(|m| m.keys().filter(|k| k.contains("kwatch-check")).count());
    assert_eq!(left, Some(0), "{state}");
}

/// An unknown resource is an error as for a watch: one line on stderr, exit 1, no rows.
#[test]
fn an_unknown_resource_is_an_error() {
    let sim = SimProcess::start(&[]);
    let out = check(&sim, &["nosuchthings"]).exits(1);
    assert!(out.stdout.is_empty(), "{:?}", out.stdout);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(out.stderr.contains("nosuchthings"), "{}", out.stderr);
}

// kwatch's own watch says why it waits: a `~` line on stderr once the reflector sees the
// server bend the protocol (the `Protocol` record), while it goes on as client-go does.

/// Waits until kwatch's stderr holds `text`; its stderr then.
fn said(kwatch: &Running, text: &str) -> String {
    crate::util::eventually(LIMIT, text, || {
        let err = kwatch.stderr();
        if err.contains(text) {
            Ok(err)
        } else {
            Err(err)
        }
    })
}

/// A streaming list whose end bookmark does not come (`--bend no-end-bookmark`): after
/// the bound (made short by the test hook), a `~` line says how many initial events came,
/// for how long, and what client-go does; kwatch goes on waiting.
#[test]
fn a_watch_waiting_for_the_end_bookmark_says_so() {
    let sim = SimProcess::start(&["--bend", "no-end-bookmark"]);
    let kwatch = sim.start_kwatch_env(
        &[("KWATCH_TEST_END_BOOKMARK_WAIT_MS", "300")],
        "pods -A --watch-list on",
    );
    let err = said(&kwatch, "no k8s.io/initial-events-end bookmark yet");
    let line = err
        .lines()
        .find(|l| l.contains("initial-events-end"))
        .unwrap_or_default();
    assert!(line.starts_with("~ "), "{err}");
    assert!(line.contains("the streaming list has sent"), "{line}");
    assert!(line.contains("kubernetes/kubernetes#140890"), "{line}");
    assert!(kwatch.lines().is_empty(), "nothing synced, nothing printed");
    let out = kwatch.terminate(LIMIT);
    assert_eq!(
        out.stderr
            .matches("initial-events-end bookmark yet")
            .count(),
        1,
        "{}",
        out.stderr
    );
}

/// Watches that keep closing cleanly at once (the simulator's `short-watches`): the third
/// in a row is said, with kubernetes/kubernetes#137089.
#[test]
fn watches_closing_cleanly_at_once_say_so() {
    let sim = SimProcess::start(&[]);
    sim.control("POST", "short-watches", json!({"count": 5}));
    let kwatch = sim.start_kwatch_env(
        &[("KWATCH_TEST_BACKOFF_START_MS", "10")],
        "pods -A --client-go 0.32",
    );
    let err = said(&kwatch, "closed cleanly at once 3 times in a row");
    assert!(err.contains("kubernetes/kubernetes#137089"), "{err}");
    kwatch.terminate(LIMIT);
}

/// A 403 on watch after a list that worked (`--bend forbid-watch`, client-go 0.32's LIST
/// then WATCH) says the verb watch is missing.
#[test]
fn a_forbidden_watch_after_a_list_says_which_verb_is_missing() {
    let sim = SimProcess::start(&["--bend", "forbid-watch"]);
    let kwatch = sim.start_kwatch("pods -A --client-go 0.32");
    let err = said(&kwatch, "the verb watch is missing");
    assert!(
        err.contains("kubernetes-sigs/controller-runtime#1653"),
        "{err}"
    );
    assert!(err.contains("cannot watch resource"), "{err}");
    kwatch.terminate(LIMIT);
}

/// Bad usage is one line and exit 2, as for a watch: a namespace that is no DNS label (of
/// `-n` or `--write`), a label selector that does not parse, no resource.
#[test]
fn bad_usage_is_one_line_and_exit_2() {
    let home = tempfile::tempdir().expect("tempdir");
    for args in [
        &["check", "pods", "-n", "Bad"][..],
        &["check", "pods", "--write", "x/y"],
        &["check", "pods", "-l", "a in"],
        &["check"],
    ] {
        let mut cmd = command(home.path());
        cmd.args(args);
        let out = Running::spawn(cmd).finish(LIMIT).exits(2);
        assert!(out.stdout.is_empty(), "{args:?}: {:?}", out.stdout);
        assert_eq!(out.stderr.lines().count(), 1, "{args:?}: {}", out.stderr);
        assert!(
            out.stderr.starts_with("error: "),
            "{args:?}: {}",
            out.stderr
        );
    }
    // Where the help is: the subcommand's.
    let mut cmd = command(home.path());
    cmd.arg("check");
    let out = Running::spawn(cmd).finish(LIMIT).exits(2);
    assert!(
        out.stderr.trim_end().ends_with("see 'kwatch check --help'"),
        "{}",
        out.stderr
    );
}

/// A watch from the LIST's resourceVersion of a quiet resource gets nothing from
/// kube-apiserver, not even a bookmark (its cacheWatcher sends only what is newer than the
/// watch's version): healthy, said as such, and bookmarks are tested from an older version,
/// where one comes. A quiet namespace's configmaps, quiet pods, with and without selectors
/// that match nothing: exit 0.
#[test]
fn a_quiet_resource_passes_with_and_without_selectors() {
    let sim = SimProcess::start(&[]);
    for args in [
        &["configmaps", "-n", "default"][..],
        &["pods", "-A"],
        &["pods", "-A", "-l", "app=nomatch"],
        &["pods", "-A", "--field-selector", "status.phase=Unknown"],
    ] {
        let mut args = args.to_vec();
        args.extend(["-o", "json"]);
        let out = check(&sim, &args).exits(0);
        let rows = rows(&out);
        assert_eq!(failed(&rows), Vec::<&str>::new(), "{args:?}: {rows:#?}");
        let w = row(&rows, "watch");
        assert_eq!(w["result"], "ok", "{args:?}: {w}");
        let text = w["server"].as_str().unwrap_or_default();
        assert!(text.contains("the resource was quiet"), "{args:?}: {text}");
        assert!(
            text.contains("bookmark(s), the first after"),
            "{args:?}: {text}"
        );
    }
}

/// A server whose history still reaches resourceVersion 1 (a young etcd, `kwatch sim
/// --uncompacted`) cannot be made to answer 410 Expired: `watch.expired` and
/// `list.expiredContinue` say they were not tested, and neither fails — also when a
/// selector filters every old event, so that the watch ends at its own timeout with
/// nothing (not the clean close at once of kubernetes/kubernetes#137089).
#[test]
fn what_cannot_be_provoked_is_not_tested() {
    let sim = SimProcess::start(&["--uncompacted"]);
    for args in [
        &["pods", "-A"][..],
        &["pods", "-A", "--field-selector", "status.phase=Unknown"],
    ] {
        let mut args = args.to_vec();
        args.extend(["-o", "json"]);
        let out = check(&sim, &args).exits(0);
        let rows = rows(&out);
        assert_eq!(failed(&rows), Vec::<&str>::new(), "{args:?}: {rows:#?}");
        for name in ["watch.expired", "list.expiredContinue"] {
            let r = row(&rows, name);
            assert_eq!(r["result"], "skip", "{args:?}: {r}");
            assert!(
                r["server"].as_str().is_some_and(
                    |s| s.starts_with("not tested: ") && s.contains("resourceVersion 1")
                ),
                "{args:?}: {r}"
            );
        }
    }
}

/// Several contexts (`--context a,b`, a pattern, `--all-contexts`): the battery runs
/// against each, every row naming its context, and the table gets a CONTEXT column.
#[test]
fn several_contexts_are_each_checked() {
    let sim = SimProcess::start(&["--clusters", "2"]);
    let out = check(
        &sim,
        &[
            "pods",
            "-A",
            "--context",
            "kwatch-sim-1,kwatch-sim-2",
            "-o",
            "json",
        ],
    )
    .exits(0);
    let both = rows(&out);
    let contexts: Vec<&str> = both.iter().filter_map(|r| r["context"].as_str()).collect();
    assert_eq!(contexts.len(), both.len(), "{both:#?}");
    for c in ["kwatch-sim-1", "kwatch-sim-2"] {
        let names: Vec<&str> = both
            .iter()
            .filter(|r| r["context"] == c)
            .filter_map(|r| r["check"].as_str())
            .collect();
        assert_eq!(names, CHECKS, "{c}");
    }
    let out = check(&sim, &["pods", "-A", "--all-contexts"]).exits(0);
    assert!(out.stdout[0].starts_with("CONTEXT "), "{:?}", out.stdout);
    assert_eq!(out.stdout.len(), 2 * CHECKS.len() + 1, "{:?}", out.stdout);
    assert!(
        out.stdout[1].starts_with("kwatch-sim-1 "),
        "{:?}",
        out.stdout
    );
    let out = check(
        &sim,
        &["pods", "-A", "--context", "kwatch-sim-*", "-o", "json"],
    )
    .exits(0);
    assert_eq!(rows(&out).len(), 2 * CHECKS.len());
}

/// kubectl's global flags go before the subcommand too (`kubectl --kubeconfig X get`):
/// `kwatch --kubeconfig X check pods` checks pods.
#[test]
fn flags_before_the_subcommand_are_the_subcommands() {
    let sim = SimProcess::start(&[]);
    let mut cmd = command(sim.dir());
    cmd.arg("--kubeconfig").arg(&sim.kubeconfig).args([
        "-n",
        "default",
        "check",
        "configmaps",
        "-o",
        "json",
    ]);
    let out = Running::spawn(cmd).finish(LIMIT).exits(0);
    assert_eq!(rows(&out).len(), CHECKS.len(), "{}", out.stderr);
}
