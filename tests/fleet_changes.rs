//! A fleet that changes while it is watched, as one left running for days sees: a cluster
//! down at the start joins when it comes up, one that dies and comes back converges, the
//! kubeconfig is followed (contexts added, removed, changed), and `--shard` splits the
//! contexts between processes.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::Value;

use crate::metrics::{metrics_addr, parsed, sample, scrape};
use crate::util::kubeconfig::{closed_port, fleet_kubeconfig, Entry};
use crate::util::kwatch::{command, is_delta, kwatch_using, Running};
use crate::util::{eventually, SimProcess, LIMIT};

/// Waits for a line of kwatch's stderr that starts with `start`, and returns it.
fn stderr_line(kw: &Running, start: &str) -> String {
    eventually(LIMIT, start, || {
        let err = kw.stderr();
        err.lines()
            .find(|l| l.starts_with(start))
            .map(str::to_owned)
            .ok_or(err)
    })
}

/// Each key's object as `context`'s deltas leave it: its resourceVersion, or gone.
fn state_of(recs: &[Value], context: &str) -> BTreeMap<String, String> {
    let mut state = BTreeMap::new();
    for r in recs
        .iter()
        .filter(|r| is_delta(r) && r["context"] == context)
    {
        let key = r["key"].as_str().expect("a key").to_owned();
        match r["type"].as_str() {
            Some("Deleted") => state.remove(&key),
            _ => state.insert(key, r["resourceVersion"].as_str().unwrap_or("").to_owned()),
        };
    }
    state
}

/// The configmaps of `sim` as kubectl lists them: `namespace/name` → resourceVersion.
fn listed_configmaps(sim: &SimProcess) -> BTreeMap<String, String> {
    let list: Value =
        serde_json::from_str(&sim.kubectl_ok("get configmaps -A -o json")).expect("kubectl's JSON");
    list["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|o| {
            let m = &o["metadata"];
            let key = format!(
                "{}/{}",
                m["namespace"].as_str().unwrap_or(""),
                m["name"].as_str().unwrap_or("")
            );
            (key, m["resourceVersion"].as_str().unwrap_or("").to_owned())
        })
        .collect()
}

/// `informer_synced{resource, context}` as `--metrics` serves it now.
fn synced_metric(addr: &str, resource: &str, context: &str) -> Option<f64> {
    let samples = parsed(&scrape(addr).2);
    sample(
        &samples,
        "informer_synced",
        &[("resource", resource), ("context", context)],
    )
}

/// A cluster down when kwatch starts is left out for now, tried again in the background,
/// and joins when it comes up: its records (a first list's `Replaced`, then its changes)
/// come with its context, `informer_synced` turns from 0 to 1 for it, and the run that ends
/// afterwards no longer says that a context did not sync (exit 0, not 5).
#[test]
fn a_cluster_down_at_the_start_joins_when_it_comes_up() {
    let a = SimProcess::start(&["--objects", "2"]);
    let port = closed_port();
    let entries = [("a", Entry::Live(&a)), ("b", Entry::Plain(&a, port))];
    let kc = fleet_kubeconfig(&entries, a.dir());
    let mut cmd = command(a.dir());
    cmd.arg("--kubeconfig").arg(&kc).args([
        "namespaces",
        "--context",
        "a,b",
        "-o",
        "json",
        "--metrics",
        "127.0.0.1:0",
    ]);
    // The reader goes away after b's namespace made once b has joined, as `grep -m1` would.
    let kw = Running::spawn_read_until(cmd, |l| {
        l.contains(r#""context":"b""#) && l.contains(r#""name":"made-after-join""#)
    });
    let left = stderr_line(&kw, "~ leaving out context b");
    assert!(left.contains("after 3 tries"), "{left}");
    let addr = metrics_addr(&kw);
    eventually(LIMIT, "a synced, b served at 0", || {
        let seen = ["a", "b"].map(|c| synced_metric(&addr, "namespaces", c));
        match seen {
            [Some(1.0), Some(0.0)] => Ok(()),
            _ => Err(seen),
        }
    });

    let port = port.to_string();
    let b = SimProcess::start(&["--objects", "2", "--insecure-http", "--port", &port]);
    let joined = stderr_line(&kw, "~ context b joined");
    assert!(joined.contains("after"), "{joined}");
    eventually(LIMIT, "b synced in --metrics", || {
        match synced_metric(&addr, "namespaces", "b") {
            Some(1.0) => Ok(()),
            other => Err(other),
        }
    });
    b.kubectl_ok("create namespace made-after-join");
    let out = kw.finish(LIMIT).exits(0);
    let recs = out.json();
    let of_b: Vec<&Value> = recs.iter().filter(|r| r["context"] == "b").collect();
    let first_list: BTreeSet<&str> = of_b
        .iter()
        .filter(|r| r["type"] == "Replaced")
        .filter_map(|r| r["name"].as_str())
        .collect();
    let listed: BTreeSet<String> = b
        .kubectl_ok("get namespaces -o name")
        .lines()
        .map(|l| l.trim_start_matches("namespace/").to_owned())
        .filter(|n| n != "made-after-join")
        .collect();
    assert_eq!(
        first_list,
        listed.iter().map(String::as_str).collect(),
        "{of_b:#?}"
    );
    assert_eq!(of_b.iter().filter(|r| r["type"] == "Synced").count(), 1);
    let made = of_b.last().expect("b's records");
    assert_eq!(
        (&made["type"], &made["name"]),
        (&"Added".into(), &"made-after-join".into())
    );
}

/// A cluster that dies mid-run and comes back is relisted and converges: what kwatch holds
/// of it equals a LIST, a change made after it came back included; the other cluster
/// streams on meanwhile, without a backoff or a relist.
#[test]
fn a_cluster_that_dies_and_comes_back_converges_the_others_untouched() {
    let a = SimProcess::start(&["--objects", "2"]);
    let b = SimProcess::start(&["--objects", "2"]);
    let kc = fleet_kubeconfig(&[("a", Entry::Live(&a)), ("b", Entry::Live(&b))], a.dir());
    let mut cmd = command(a.dir());
    cmd.arg("--kubeconfig")
        .arg(&kc)
        .args(["configmaps", "-A", "--context", "a,b", "-o", "json"]);
    let mut kw = Running::spawn(cmd);
    kw.wait_for(LIMIT, "both synced", |recs| {
        recs.iter().filter(|r| r["type"] == "Synced").count() == 2
    });

    // b goes away (connections cut, refused for 5 s) and comes back with a watch cache
    // that starts at its current revision.
    b.control("POST", "/_sim/restart", serde_json::json!({"seconds": 5}));
    crate::util::kwatch::create_configmap(&a, "default", "while-b-was-down", serde_json::json!({}));
    kw.wait_for(LIMIT, "a's change while b is away", |recs| {
        recs.iter()
            .any(|r| r["context"] == "a" && r["name"] == "while-b-was-down")
    });
    kw.wait_for(LIMIT, "b's reflector backing off", |recs| {
        recs.iter()
            .any(|r| r["context"] == "b" && r["type"] == "Backoff")
    });
    eventually(LIMIT, "b back", || {
        let out = b.kubectl(["create", "configmap", "made-after-return", "-n", "default"]);
        match out.status.success() {
            true => Ok(()),
            false => Err(String::from_utf8_lossy(&out.stderr).into_owned()),
        }
    });
    let want = listed_configmaps(&b);
    assert!(want.contains_key("default/made-after-return"), "{want:?}");
    kw.wait_for(LIMIT, "kwatch's b equal to a LIST of b", |recs| {
        state_of(recs, "b") == want
    });
    let recs = kw.interrupt(LIMIT).json();
    assert_eq!(state_of(&recs, "a"), listed_configmaps(&a));
    let troubled: Vec<&Value> = recs
        .iter()
        .filter(|r| r["context"] == "a")
        .filter(|r| r["type"] == "Backoff" || (r["type"] == "List" && r["reason"] != "initial"))
        .collect();
    assert!(troubled.is_empty(), "a was touched: {troubled:#?}");
}

/// Writes `entries`' kubeconfig over `path` as the cloud CLIs do: into a new file, renamed
/// over the old one; each context named in `namespaced` gets a namespace of its own.
fn rewrite_kubeconfig(path: &Path, entries: &[(&str, Entry<'_>)], namespaced: &[&str], dir: &Path) {
    let scratch = tempfile::tempdir_in(dir).expect("a scratch directory");
    let written = fleet_kubeconfig(entries, scratch.path());
    let text = std::fs::read_to_string(&written).expect("the kubeconfig written");
    let mut kc: serde_yaml::Value = serde_yaml::from_str(&text).expect("YAML");
    for c in kc["contexts"].as_sequence_mut().expect("contexts") {
        if namespaced.iter().any(|n| c["name"] == **n) {
            c["context"]["namespace"] = "team-a".into();
        }
    }
    std::fs::write(&written, serde_yaml::to_string(&kc).expect("YAML")).expect("writing");
    std::fs::rename(written, path).expect("renaming the kubeconfig into place");
}

/// `--all-contexts` follows the kubeconfig: a context added joins, a changed one starts
/// again, a removed one stops with one line, its changes no longer shown.
#[test]
fn all_contexts_follows_the_kubeconfig() {
    let a = SimProcess::start(&["--objects", "2"]);
    let b = SimProcess::start(&["--objects", "2"]);
    let kc = a.dir().join("followed-kubeconfig");
    rewrite_kubeconfig(&kc, &[("a", Entry::Live(&a))], &[], a.dir());
    let mut cmd = command(a.dir());
    cmd.arg("--kubeconfig")
        .arg(&kc)
        .args(["namespaces", "--all-contexts", "-o", "json"]);
    let mut kw = Running::spawn(cmd);
    let synced_in = |recs: &[Value], c: &str| {
        recs.iter()
            .filter(|r| r["type"] == "Synced" && r["context"] == c)
            .count()
    };
    kw.wait_for(LIMIT, "a synced", |recs| synced_in(recs, "a") == 1);

    let both = [("a", Entry::Live(&a)), ("b", Entry::Live(&b))];
    rewrite_kubeconfig(&kc, &both, &[], a.dir());
    stderr_line(&kw, "~ context b joined");
    kw.wait_for(LIMIT, "b synced", |recs| synced_in(recs, "b") == 1);
    let recs = kw.json();
    assert_eq!(
        state_of(&recs, "b")
            .keys()
            .cloned()
            .collect::<BTreeSet<_>>(),
        b.kubectl_ok("get namespaces -o name")
            .lines()
            .map(|l| l.trim_start_matches("namespace/").to_owned())
            .collect(),
    );

    // a's entry changes (its context's namespace): a starts again, lists anew.
    rewrite_kubeconfig(&kc, &both, &["a"], a.dir());
    stderr_line(&kw, "~ context a changed in the kubeconfig");
    kw.wait_for(LIMIT, "a synced again", |recs| synced_in(recs, "a") == 2);

    rewrite_kubeconfig(&kc, &[("a", Entry::Live(&a))], &["a"], a.dir());
    stderr_line(&kw, "~ context b is no longer in the kubeconfig: stopped");
    b.kubectl_ok("create namespace made-in-b-after-it-left");
    a.kubectl_ok("create namespace made-in-a-after-b-left");
    kw.wait_for(LIMIT, "a's namespace", |recs| {
        recs.iter().any(|r| r["name"] == "made-in-a-after-b-left")
    });
    let out = kw.interrupt(LIMIT);
    assert!(
        !out.stdout
            .iter()
            .any(|l| l.contains("made-in-b-after-it-left")),
        "{}",
        out.stdout.join("\n")
    );
}

/// `--shard I/N` keeps the contexts of shard I: N runs see disjoint sets of contexts whose
/// union is every context, and their outputs concatenate into the fleet's.
#[test]
fn shards_split_the_contexts_between_processes() {
    let sim = SimProcess::start(&["--clusters", "6", "--objects", "1"]);
    let every: BTreeSet<String> = (1..=6).map(|i| format!("kwatch-sim-{i}")).collect();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for i in 0..3 {
        let shard = format!("{i}/3");
        let args = [
            "namespaces",
            "--all-contexts",
            "--shard",
            &shard,
            "-o",
            "json",
            "--until-synced",
            "--timeout",
            "2m",
        ];
        let out = kwatch_using(sim.dir(), &sim.kubeconfig, args);
        let recs = out.json();
        let mine: BTreeSet<String> = recs
            .iter()
            .filter(|r| r["type"] == "Synced")
            .filter_map(|r| r["context"].as_str().map(str::to_owned))
            .collect();
        for c in &mine {
            assert!(seen.insert(c.clone()), "{c} in two shards");
        }
        // A shard may be empty (6 contexts in 3): nothing to sync, said in one line.
        assert_eq!(out.code(), Some(0), "{}", out.stderr);
        if mine.is_empty() {
            assert!(
                out.stderr
                    .contains(&format!("~ no context of shard {shard}")),
                "{}",
                out.stderr
            );
        }
    }
    assert_eq!(seen, every);
    for bad in ["--all-contexts --shard 3/3", "--shard 0/3"] {
        let out = kwatch_using(sim.dir(), &sim.kubeconfig, format!("namespaces {bad}")).exits(2);
        assert!(
            out.stderr.starts_with("error: ") && out.stderr.contains("--shard"),
            "{}",
            out.stderr
        );
    }
}

/// A context down since the start and one whose cluster went away after its sync are both
/// tried again, and `--stats` says so alike: `retrying since` the first failure.
#[test]
fn stats_say_retrying_alike_for_a_context_never_started_and_one_gone_later() {
    let a = SimProcess::start(&["--objects", "2"]);
    let b = SimProcess::start(&["--objects", "2"]);
    let entries = [
        ("a", Entry::Live(&a)),
        ("b", Entry::Live(&b)),
        ("dead", Entry::Down(&a, closed_port())),
    ];
    let kc = fleet_kubeconfig(&entries, a.dir());
    let mut cmd = command(a.dir());
    cmd.arg("--kubeconfig").arg(&kc).args([
        "namespaces",
        "--context",
        "a,b,dead",
        "-o",
        "json",
        "--stats",
    ]);
    let mut kw = Running::spawn(cmd);
    kw.wait_for(LIMIT, "a and b synced", |recs| {
        recs.iter().filter(|r| r["type"] == "Synced").count() == 2
    });
    // b goes away for longer than the test waits.
    b.control("POST", "/_sim/restart", serde_json::json!({"seconds": 600}));
    kw.wait_for(LIMIT, "b's reflector backing off", |recs| {
        recs.iter()
            .any(|r| r["context"] == "b" && r["type"] == "Backoff")
    });
    let out = kw.interrupt(LIMIT);
    let line = |c: &str| {
        let start = format!("  context {c}: ");
        out.stderr
            .lines()
            .find(|l| l.starts_with(&start))
            .unwrap_or_else(|| panic!("no line for {c}:\n{}", out.stderr))
            .to_owned()
    };
    let since = |l: &str| -> jiff::Timestamp {
        let (_, rest) = l
            .split_once(", retrying since ")
            .unwrap_or_else(|| panic!("{l}"));
        let at = rest.split(',').next().unwrap_or_default();
        at.parse().unwrap_or_else(|e| panic!("{e}: {l}"))
    };
    let (dead, b_line, a_line) = (line("dead"), line("b"), line("a"));
    assert!(
        dead.starts_with("  context dead: not watched, retrying since "),
        "{dead}"
    );
    assert!(b_line.starts_with("  context b: synced after "), "{b_line}");
    assert!(since(&b_line) >= since(&dead), "{dead}\n{b_line}");
    assert!(!a_line.contains("retrying"), "{a_line}");
}
