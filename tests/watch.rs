//! kwatch end to end: the built binary over HTTPS against `kwatch sim`, the way a user
//! runs it (issue: "kwatch end to end").

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{json, Value};

use crate::util::kwatch::{command, configmap, is_delta, kubectl_f, of_type, Running};
use crate::util::{SimProcess, LIMIT};

/// The server's live objects of one resource: key → resourceVersion.
fn live(sim: &SimProcess, plural: &str) -> BTreeMap<String, String> {
    let state = sim.state();
    state["objects"][plural]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
                .collect()
        })
        .unwrap_or_default()
}

/// Replays deltas: Added/Updated/Replaced/Sync set, Deleted removes.
fn replay(records: &[Value]) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    for r in records.iter().filter(|r| is_delta(r)) {
        let key = r["key"].as_str().unwrap().to_owned();
        match r["type"].as_str().unwrap() {
            "Deleted" => {
                m.remove(&key);
            }
            _ => {
                m.insert(key, r["resourceVersion"].as_str().unwrap().to_owned());
            }
        }
    }
    m
}

fn in_namespace(m: &BTreeMap<String, String>, ns: &str) -> BTreeMap<String, String> {
    m.iter()
        .filter(|(k, _)| k.starts_with(&format!("{ns}/")))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn create_configmap(sim: &SimProcess, name: &str, value: &str) -> Value {
    kubectl_f(
        sim,
        "create",
        &configmap("default", name, json!({"k": value})),
    )
}

fn types(v: &[Value]) -> Vec<String> {
    v.iter()
        .map(|r| r["type"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn until_synced_prints_list_listed_one_replaced_per_object_and_synced() {
    let sim = SimProcess::start(&["--objects", "8"]);
    let want = in_namespace(&live(&sim, "pods"), "default");
    assert!(want.len() >= 3, "{want:?}");
    for mode in ["off", "on"] {
        let out = sim
            .kwatch([
                "pods",
                "-n",
                "default",
                "-o",
                "json",
                "--until-synced",
                "--watch-list",
                mode,
            ])
            .exits(0);
        let recs = out.json();
        let t = types(&recs);
        assert_eq!(t[0], "List");
        assert_eq!(t[1], "Listed");
        assert_eq!(t.last().unwrap(), "Synced");
        assert!(t[2..t.len() - 1].iter().all(|x| x == "Replaced"), "{t:?}");
        assert_eq!(recs[0]["streaming"], mode == "on");
        assert_eq!(recs[0]["reason"], "initial");
        if mode == "off" {
            assert_eq!(recs[0]["resourceVersion"], "0");
            assert_eq!(recs[0]["limit"], 500);
        }
        assert_eq!(recs[1]["items"], want.len());
        assert_eq!(replay(&recs), want, "mode {mode}");
        for r in of_type(&recs, "Replaced") {
            assert_eq!(r["initialList"], true);
            assert_eq!(r["kind"], "Pod");
            assert_eq!(r["apiVersion"], "v1");
            assert_eq!(r["namespace"], "default");
            assert_eq!(r["object"]["metadata"]["name"], r["name"]);
            assert!(r["object"]["metadata"].get("managedFields").is_none());
            assert!(r["time"].as_str().unwrap().ends_with('Z'));
        }
    }
}

#[test]
fn page_size_lists_in_several_pages() {
    let sim = SimProcess::start(&["--objects", "12"]);
    let want = live(&sim, "pods");
    let out = sim
        .kwatch("pods -A -o json --until-synced --page-size 2")
        .exits(0);
    let recs = out.json();
    assert_eq!(recs[0]["limit"], 2);
    assert_eq!(recs[0]["resourceVersion"], "");
    assert_eq!(recs[0]["streaming"], false);
    let pages = recs[1]["pages"].as_u64().unwrap();
    assert_eq!(pages as usize, want.len().div_ceil(2), "{}", recs[1]);
    assert_eq!(replay(&recs), want);
}

#[test]
fn every_change_appears_with_its_new_resource_version_in_order() {
    let sim = SimProcess::start(&[]);
    let mut kw = sim.start_kwatch("configmaps -n default -o json");
    kw.wait_for(LIMIT, "Synced", |v| !of_type(v, "Synced").is_empty());

    let created = create_configmap(&sim, "e2e", "v1");
    let patched: Value = serde_json::from_str(&sim.kubectl_ok(&[
        "patch",
        "configmap",
        "e2e",
        "-n",
        "default",
        "--type",
        "merge",
        "-p",
        r#"{"data":{"k":"v2"}}"#,
        "-o",
        "json",
    ]))
    .unwrap();
    sim.kubectl_ok(&["delete", "configmap", "e2e", "-n", "default"]);
    let recs = kw.wait_for(LIMIT, "the deletion", |v| {
        v.iter()
            .any(|r| r["type"] == "Deleted" && r["key"] == "default/e2e")
    });
    let mine: Vec<&Value> = recs.iter().filter(|r| r["key"] == "default/e2e").collect();
    let rv = |v: &Value| {
        v["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(mine[0]["type"], "Added");
    assert_eq!(mine[0]["resourceVersion"], rv(&created));
    assert_eq!(mine[0]["initialList"], false);
    assert_eq!(mine[1]["type"], "Updated");
    assert_eq!(mine[1]["resourceVersion"], rv(&patched));
    assert_eq!(mine[1]["object"]["data"]["k"], "v2");
    assert_eq!(mine[2]["type"], "Deleted");
    assert!(mine[2].get("finalStateUnknown").is_none());
    let n = |r: &Value| {
        r["resourceVersion"]
            .as_str()
            .unwrap()
            .parse::<u64>()
            .unwrap()
    };
    assert!(n(mine[2]) > n(mine[1]) && n(mine[1]) > n(mine[0]));
    assert_eq!(mine.len(), 3);
}

#[test]
fn churn_is_seen_in_full_and_converges_on_the_server_state() {
    let sim = SimProcess::start(&["--scenario", "steady", "--churn", "40", "--objects", "10"]);
    let mut kw = sim.start_kwatch("pods -A -o json");
    kw.wait_for(LIMIT, "Synced", |v| !of_type(v, "Synced").is_empty());
    std::thread::sleep(Duration::from_secs(3));
    sim.control("POST", "/_sim/churn", json!({"rate": 0}));
    let want = live(&sim, "pods");
    let recs = kw.wait_for(LIMIT, "convergence", |v| replay(v) == want);
    // Per key, resourceVersions never go backwards.
    let mut last: BTreeMap<&str, u64> = BTreeMap::new();
    for r in recs.iter().filter(|r| is_delta(r)) {
        let rv: u64 = r["resourceVersion"].as_str().unwrap().parse().unwrap();
        let prev = last.insert(r["key"].as_str().unwrap(), rv).unwrap_or(0);
        assert!(rv >= prev, "{r}");
    }
    let counts = |t: &str| of_type(&recs, t).len();
    assert!(counts("Added") > 0 && counts("Updated") > 0 && counts("Deleted") > 0);
}

#[test]
fn dropped_watches_rewatch_from_the_last_resource_version_without_relisting() {
    let sim = SimProcess::start(&[]);
    let mut kw = sim.start_kwatch("configmaps -A -o json");
    kw.wait_for(LIMIT, "Watch", |v| !of_type(v, "Watch").is_empty());
    create_configmap(&sim, "before", "1");
    let recs = kw.wait_for(LIMIT, "Added before", |v| {
        v.iter().any(|r| r["key"] == "default/before")
    });
    let last_rv = recs.iter().rev().find(|r| is_delta(r)).unwrap()["resourceVersion"].clone();
    sim.control("POST", "/_sim/drop-watches", json!({}));
    let recs = kw.wait_for(LIMIT, "the second Watch", |v| {
        of_type(v, "Watch").len() >= 2
    });
    let ended = of_type(&recs, "WatchEnded");
    assert_eq!(ended[0]["error"], false, "{}", ended[0]);
    assert_eq!(of_type(&recs, "Watch")[1]["resourceVersion"], last_rv);
    create_configmap(&sim, "after", "2");
    let recs = kw.wait_for(LIMIT, "Added after", |v| {
        v.iter().any(|r| r["key"] == "default/after")
    });
    assert_eq!(of_type(&recs, "List").len(), 1, "no relist: {recs:#?}");
}

#[test]
fn compaction_then_drop_relists_with_the_410_reason_and_tombstones_what_was_missed() {
    let sim = SimProcess::start(&[]);
    for mode in ["off", "on"] {
        create_configmap(&sim, "doomed", mode);
        let mut kw = sim.start_kwatch([
            "configmaps",
            "-n",
            "default",
            "-o",
            "json",
            "--watch-list",
            mode,
        ]);
        kw.wait_for(LIMIT, "Watch", |v| !of_type(v, "Watch").is_empty());
        // A watch cut within a second with no event is a "very short watch" error, which
        // relists for that reason instead: let it run past that first.
        std::thread::sleep(Duration::from_millis(1200));
        // Hold the watch, delete while it is held, forget history, cut the watch.
        sim.control("POST", "/_sim/stall", json!({"seconds": 2}));
        sim.kubectl_ok(&["delete", "configmap", "doomed", "-n", "default"]);
        sim.control("POST", "/_sim/compact", json!({}));
        sim.control("POST", "/_sim/drop-watches", json!({}));
        let recs = kw.wait_for(LIMIT, "the tombstone", |v| {
            v.iter()
                .any(|r| r["key"] == "default/doomed" && r["type"] == "Deleted")
        });
        let lists = of_type(&recs, "List");
        assert_eq!(lists.len(), 2, "{recs:#?}");
        let reason = lists[1]["reason"].as_str().unwrap();
        assert!(
            reason.contains("410") && reason.contains("too old resource version"),
            "{reason}"
        );
        let relist_at = recs.iter().position(|r| std::ptr::eq(r, lists[1])).unwrap();
        let tomb = recs
            .iter()
            .position(|r| r["key"] == "default/doomed" && r["type"] == "Deleted")
            .unwrap();
        assert!(tomb > relist_at);
        assert_eq!(recs[tomb]["finalStateUnknown"], true);
        let replaced_after: Vec<&Value> = recs[relist_at..]
            .iter()
            .filter(|r| r["type"] == "Replaced")
            .collect();
        assert!(!replaced_after.is_empty());
        assert!(replaced_after.iter().all(|r| r["initialList"] == false));
        assert!(recs[..relist_at]
            .iter()
            .all(|r| r["type"] != "Replaced" || r["initialList"] == true));
        assert_eq!(
            replay(&recs),
            in_namespace(&live(&sim, "configmaps"), "default")
        );
    }
}

#[test]
fn several_resources_share_one_stream() {
    let sim = SimProcess::start(&[]);
    let out = sim
        .kwatch("po,deploy,widgets -A -o json --until-synced")
        .exits(0);
    let recs = out.json();
    let synced: Vec<&str> = of_type(&recs, "Synced")
        .iter()
        .map(|r| r["resource"].as_str().unwrap())
        .collect();
    let mut sorted = synced.clone();
    sorted.sort();
    assert_eq!(sorted, ["deployments.apps", "pods", "widgets.example.com"]);
    let kinds: std::collections::BTreeSet<&str> = recs
        .iter()
        .filter(|r| is_delta(r))
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["Deployment", "Pod", "Widget"].into_iter().collect());
    let widget = recs.iter().find(|r| r["kind"] == "Widget").unwrap();
    assert_eq!(widget["apiVersion"], "example.com/v1");
}

#[test]
fn resource_names_resolve_like_kubectl() {
    for server in [&[][..], &["--legacy-discovery"]] {
        resolve_names(&SimProcess::start(server));
    }
}

fn resolve_names(sim: &SimProcess) {
    for (arg, kind) in [
        ("po", "Pod"),
        ("Pod", "Pod"),
        ("pod", "Pod"),
        ("deployments.apps", "Deployment"),
        ("deployments.v1.apps", "Deployment"),
        ("wd", "Widget"),
        ("widgets.example.com", "Widget"),
        ("ns", "Namespace"),
        ("crd", "CustomResourceDefinition"),
    ] {
        let out = sim
            .kwatch([arg, "-A", "-o", "json", "--until-synced"])
            .exits(0);
        let recs = out.json();
        let d = recs
            .iter()
            .find(|r| is_delta(r))
            .unwrap_or_else(|| panic!("{arg}: no delta"));
        assert_eq!(d["kind"], kind, "{arg}");
    }
    // Cluster-scoped objects have no namespace in their key.
    let out = sim.kwatch("nodes -o json --until-synced");
    let d = out.json().into_iter().find(is_delta).unwrap();
    assert_eq!(d["namespace"], Value::Null);
    assert_eq!(d["key"], d["name"]);
}

#[test]
fn errors_are_one_clear_line_and_exit_1() {
    let sim = SimProcess::start(&[]);
    // kwatch's own errors start `error: `; the server's answers are worded as kubectl
    // words them (`Error from server (Reason): …`).
    let check = |args: &[&str], prefix: &str, needle: &str| {
        let out = sim.kwatch(args).exits(1);
        assert!(out.stdout.iter().all(|l| !l.contains("\"type\":\"Added\"")));
        let lines: Vec<&str> = out.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{args:?}: {}", out.stderr);
        assert!(lines[0].starts_with(prefix), "{}", lines[0]);
        assert!(lines[0].contains(needle), "{args:?}: {}", lines[0]);
        assert!(!out.stderr.contains("panicked"));
        assert!(!out.stderr.contains(&sim.token), "token leaked");
    };
    let server = "Error from server (BadRequest): ";
    check(
        &["podz"],
        "error: ",
        r#"the server doesn't have a resource type "podz"; did you mean "pods"?"#,
    );
    check(
        &["pods", "-l", "app in (a"],
        server,
        "unable to parse requirement",
    );
    check(
        &["configmaps", "--field-selector", "spec.foo=x"],
        server,
        r#""spec.foo" is not a known field selector: only "metadata.name", "metadata.namespace""#,
    );
    check(&["pods", "--context", "nope"], "error: ", "nope");

    // An unreachable server, a malformed kubeconfig.
    let dir = tempfile::tempdir().unwrap();
    let dead = dir.path().join("dead");
    let text = std::fs::read_to_string(&sim.kubeconfig).unwrap();
    let port = sim.url.rsplit(':').next().unwrap().to_owned();
    std::fs::write(
        &dead,
        text.replace(&format!("127.0.0.1:{port}"), "127.0.0.1:9"),
    )
    .unwrap();
    let bad = dir.path().join("bad");
    std::fs::write(&bad, "apiVersion: v1\nclusters: [ {{{ nope").unwrap();
    for (file, needle) in [(&dead, "127.0.0.1:9"), (&bad, "kubeconfig")] {
        let mut cmd = command(dir.path());
        cmd.args(["pods", "--request-timeout", "5s", "--kubeconfig"])
            .arg(file);
        let start = std::time::Instant::now();
        let out = Running::spawn(cmd).finish(LIMIT);
        assert!(start.elapsed() < Duration::from_secs(10));
        assert_eq!(out.code(), Some(1), "{}", out.stderr);
        assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
        assert!(out.stderr.contains(needle), "{}", out.stderr);
    }
}

#[test]
fn stop_conditions_for_scripts() {
    let sim = SimProcess::start(&["--objects", "6"]);
    let out = sim.kwatch("pods -A -o json --max-events 3").exits(0);
    assert_eq!(out.json().iter().filter(|r| is_delta(r)).count(), 3);

    let started = std::time::Instant::now();
    let out = sim
        .kwatch("pods -A -o json --timeout 1s --watch-only")
        .exits(0);
    assert!(started.elapsed() >= Duration::from_secs(1));
    let recs = out.json();
    assert!(!of_type(&recs, "Synced").is_empty());
    assert_eq!(
        recs.iter().filter(|r| is_delta(r)).count(),
        0,
        "--watch-only: {recs:#?}"
    );
}

#[test]
fn table_output_for_people() {
    let sim = SimProcess::start(&["--objects", "4"]);
    let out = sim
        .kwatch("pods -n default --until-synced --watch-list off")
        .exits(0);
    // The table on stdout, the `~` lines on stderr (issue 15: stdout carries data only).
    let lines = &out.stdout;
    let notes: Vec<&str> = out.stderr.lines().collect();
    assert!(
        notes[0].starts_with("~ list pods at rv=\"0\""),
        "{notes:#?}"
    );
    assert!(notes[1].starts_with("~ listed pods: "), "{notes:#?}");
    assert!(lines[0].starts_with("DELTA      NAME   "), "{lines:#?}");
    let header: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(
        header[2..],
        ["RESOURCEVERSION", "READY", "STATUS", "RESTARTS", "AGE"],
        "{lines:#?}"
    );
    assert!(lines[1].starts_with("Replaced   "), "{lines:#?}");
    assert!(
        lines[1..].iter().all(|l| l.starts_with("Replaced   ")),
        "{lines:#?}"
    );
    assert_eq!(
        notes.last().unwrap(),
        &"~ synced pods (client-go 0.32, DeltaFIFO)"
    );
    assert!(
        lines.iter().all(|l| !l.contains('\u{1b}')),
        "no colour in a pipe"
    );
}

#[test]
fn ctrl_c_exits_130_and_a_closed_pipe_exits_quietly() {
    let sim = SimProcess::start(&["--scenario", "steady", "--churn", "20"]);
    let mut kw = sim.start_kwatch("pods -A");
    kw.wait_for(LIMIT, "output", |_| true);
    std::thread::sleep(Duration::from_millis(500));
    let out = kw.interrupt(LIMIT);
    assert_eq!(out.code(), Some(130), "{}", out.stderr);

    // `kwatch … | head -1`
    let mut cmd = command(sim.dir());
    cmd.arg("--kubeconfig")
        .arg(&sim.kubeconfig)
        .args(["pods", "-A", "-o", "json"]);
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut first = String::new();
    {
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        std::io::BufRead::read_line(&mut out, &mut first).unwrap();
    }
    let deadline = std::time::Instant::now() + LIMIT;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "kwatch kept running after its reader left"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(first.starts_with("{\"type\":"));
    assert_eq!(status.code(), Some(0), "{err}");
    assert_eq!(err, "");
}

#[test]
fn sim_flag_runs_the_built_in_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = command(dir.path());
    cmd.args(["--sim", "pods", "-A", "-o", "json", "--until-synced"]);
    let out = Running::spawn(cmd).finish(LIMIT);
    assert_eq!(out.code(), Some(0), "{}", out.stderr);
    let recs = out.json();
    assert!(of_type(&recs, "Replaced").len() >= 10);
    assert_eq!(recs.last().unwrap()["type"], "Synced");
}

#[test]
fn real_fifo_prints_every_notification_in_order_where_delta_fifo_coalesces() {
    let sim = SimProcess::start(&[]);
    let manifest = |name: &str, v: &str| configmap("team-a", name, json!({ "k": v }));
    for name in ["a", "b", "c"] {
        kubectl_f(&sim, "create", &manifest(name, "0"));
    }
    let mut seen = BTreeMap::new();
    for fifo in ["delta", "real"] {
        // A slow consumer (300 ms a pop) and a stalled watch: c, a, b, a arrive together;
        // while c is being handled, a, b, a queue up.
        let mut kw = sim.start_kwatch([
            "configmaps",
            "-n",
            "team-a",
            "-o",
            "json",
            "--watch-only",
            "--watch-list",
            "off",
            "--pop-delay",
            "300ms",
            "--fifo",
            fifo,
        ]);
        kw.wait_for(LIMIT, "Watch", |v| !of_type(v, "Watch").is_empty());
        sim.control("POST", "/_sim/stall", json!({"seconds": 2}));
        for (name, v) in [("c", "1"), ("a", "1"), ("b", "1"), ("a", "2")] {
            kubectl_f(&sim, "replace", &manifest(name, &format!("{fifo}{v}")));
        }
        let recs = kw.wait_for(LIMIT, "four updates", |v| of_type(v, "Updated").len() == 4);
        let order: Vec<String> = of_type(&recs, "Updated")
            .iter()
            .map(|r| {
                format!(
                    "{}{}",
                    r["name"].as_str().unwrap(),
                    r["object"]["data"]["k"]
                        .as_str()
                        .unwrap()
                        .trim_start_matches(fifo)
                )
            })
            .collect();
        seen.insert(fifo, order);
    }
    assert_eq!(
        seen["delta"],
        ["c1", "a1", "a2", "b1"],
        "DeltaFIFO hands out a key's deltas together"
    );
    assert_eq!(
        seen["real"],
        ["c1", "a1", "b1", "a2"],
        "RealFIFO keeps arrival order"
    );
}

#[test]
fn the_most_verbose_diagnostics_never_show_the_token() {
    let sim = SimProcess::start(&[]);
    let out = sim
        .kwatch("pods -n default -vvv --until-synced -o json")
        .exits(0);
    assert!(
        out.stderr.contains("DEBUG"),
        "-vvv shows kube's requests: {}",
        out.stderr
    );
    assert!(
        !out.stderr.contains(&sim.token),
        "the token leaked: {}",
        out.stderr
    );
    assert!(
        !out.stderr.to_ascii_lowercase().contains("bearer"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains('\u{1b}'), "no colour on a pipe");
    // Data on stdout only: every stdout line is a JSON record.
    assert!(out.stdout.iter().all(|l| l.starts_with("{\"type\":")));
}
