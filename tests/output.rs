//! Output for people and scripts, through the built binary against `kwatch sim` (issue:
//! "For people and for scripts: the output kubectl users expect, and what no watch tool
//! has yet").

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::{json, Value};

use crate::util::kwatch::{command, is_delta, kubectl_f, of_type, Running};
use crate::util::{SimProcess, LIMIT};

fn create(sim: &SimProcess, manifest: Value) -> Value {
    kubectl_f(sim, "create", &manifest)
}

fn configmap(name: &str, value: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "demo"}},
        "data": {"k": value}})
}

fn patch_configmap(sim: &SimProcess, name: &str, value: &str) {
    let p = json!({"data": {"k": value}}).to_string();
    sim.kubectl_ok(&[
        "patch",
        "configmap",
        name,
        "-n",
        "default",
        "--type",
        "merge",
        "-p",
        &p,
    ]);
}

/// Names of the live objects of a resource in a namespace, from the simulator.
fn live_names(sim: &SimProcess, plural: &str, ns: &str) -> BTreeSet<String> {
    sim.state()["objects"][plural]
        .as_object()
        .unwrap()
        .keys()
        .filter_map(|k| k.strip_prefix(&format!("{ns}/")).map(str::to_owned))
        .collect()
}

/// The columns of a table line (split on runs of 2+ spaces; cells have single spaces at
/// most, e.g. `1 (5s ago)`).
fn cells(line: &str) -> Vec<String> {
    line.split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Makes the watches of configmaps relist with nothing new for them: holds the watches,
/// changes a secret, forgets history up to it, cuts the watches (the rewatch gets 410).
fn force_relist(sim: &SimProcess) {
    // A watch cut within a second of opening relists for another reason.
    std::thread::sleep(Duration::from_millis(1200));
    sim.control("POST", "/_sim/stall", json!({"seconds": 2}));
    sim.kubectl_ok(&[
        "patch",
        "secret",
        "app-credentials",
        "-n",
        "default",
        "--type",
        "merge",
        "-p",
        r#"{"metadata":{"labels":{"touched":"1"}}}"#,
    ]);
    sim.control("POST", "/_sim/compact", json!({}));
    sim.control("POST", "/_sim/drop-watches", json!({}));
}

#[test]
fn table_has_kubectls_columns_per_resource_after_type_and_resource_version() {
    let sim = SimProcess::start(&["--objects", "4"]);
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["pods"],
            &[
                "DELTA",
                "NAME",
                "RESOURCEVERSION",
                "READY",
                "STATUS",
                "RESTARTS",
                "AGE",
            ],
        ),
        (
            &["pods", "-o", "wide"],
            &[
                "DELTA",
                "NAME",
                "RESOURCEVERSION",
                "READY",
                "STATUS",
                "RESTARTS",
                "AGE",
                "IP",
                "NODE",
                "NOMINATED NODE",
                "READINESS GATES",
            ],
        ),
        (
            &["deploy"],
            &[
                "DELTA",
                "NAME",
                "RESOURCEVERSION",
                "READY",
                "UP-TO-DATE",
                "AVAILABLE",
                "AGE",
            ],
        ),
        (
            &["rs"],
            &[
                "DELTA",
                "NAME",
                "RESOURCEVERSION",
                "DESIRED",
                "CURRENT",
                "READY",
                "AGE",
            ],
        ),
        (
            &["svc"],
            &[
                "DELTA",
                "NAME",
                "RESOURCEVERSION",
                "TYPE",
                "CLUSTER-IP",
                "EXTERNAL-IP",
                "PORT(S)",
                "AGE",
            ],
        ),
        (
            &["nodes"],
            &[
                "DELTA",
                "NAME",
                "RESOURCEVERSION",
                "STATUS",
                "ROLES",
                "AGE",
                "VERSION",
            ],
        ),
        (
            &["ns"],
            &["DELTA", "NAME", "RESOURCEVERSION", "STATUS", "AGE"],
        ),
        (
            &["cm"],
            &["DELTA", "NAME", "RESOURCEVERSION", "DATA", "AGE"],
        ),
        (
            &["secrets"],
            &["DELTA", "NAME", "RESOURCEVERSION", "TYPE", "DATA", "AGE"],
        ),
        (
            &["events"],
            &[
                "DELTA",
                "NAME",
                "RESOURCEVERSION",
                "LAST SEEN",
                "TYPE",
                "REASON",
                "OBJECT",
                "MESSAGE",
            ],
        ),
        // The widgets CRD's additionalPrinterColumns: Size, Phase, Age.
        (
            &["widgets"],
            &["DELTA", "NAME", "RESOURCEVERSION", "SIZE", "PHASE", "AGE"],
        ),
        // A kind without a printer: kube-apiserver's default table, CREATED AT (issue 19).
        (
            &["crd"],
            &["DELTA", "NAME", "RESOURCEVERSION", "CREATED AT"],
        ),
    ];
    for (args, header) in cases {
        let mut a = args.to_vec();
        a.extend(["-n", "default", "--until-synced", "--watch-list", "off"]);
        let out = sim.kwatch(&a[..]).exits(0);
        let table: Vec<&String> = out.stdout.iter().filter(|l| !l.starts_with('~')).collect();
        assert_eq!(cells(table[0]), *header, "{args:?}: {:#?}", out.stdout);
        // Every row has a cell per column and the header comes once. A CRD column without
        // a value is an empty cell, as kubectl prints it (issue 15): such a row has as many
        // non-empty cells as kubectl's row for the object, plus DELTA and RESOURCEVERSION.
        let kubectl = (args == &["widgets"])
            .then(|| sim.kubectl_ok(&["get", "widgets", "-n", "default", "--no-headers"]));
        for row in &table[1..] {
            let got = cells(row);
            match &kubectl {
                Some(k) => {
                    let theirs = k
                        .lines()
                        .map(cells)
                        .find(|c| c[0] == got[1])
                        .unwrap_or_else(|| panic!("{} not in {k}", got[1]));
                    assert_eq!(got.len(), theirs.len() + 2, "{row} vs {k}");
                }
                None => assert_eq!(got.len(), header.len(), "{args:?}: {row}"),
            }
            assert!(row.starts_with("Replaced "), "{row}");
        }
    }

    // The cells hold the object's values: compare a pod's with its JSON.
    let json = sim.kwatch("pods -n default -o json --until-synced");
    let pods: Vec<Value> = json
        .json()
        .into_iter()
        .filter(|r| r["type"] == "Replaced")
        .collect();
    let wide = sim.kwatch("pods -n default -o wide --until-synced");
    for p in &pods {
        let o = &p["object"];
        let row = wide
            .stdout
            .iter()
            .find(|l| cells(l).get(1) == o["metadata"]["name"].as_str().map(str::to_owned).as_ref())
            .unwrap_or_else(|| panic!("no row for {}", p["name"]));
        let c = cells(row);
        let n = o["spec"]["containers"].as_array().unwrap().len();
        let ready = o["status"]["containerStatuses"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["ready"] == true)
            .count();
        assert_eq!(c[2], o["metadata"]["resourceVersion"].as_str().unwrap());
        assert_eq!(c[3], format!("{ready}/{n}"));
        assert_eq!(c[4], o["status"]["phase"].as_str().unwrap());
        assert_eq!(c[7], o["status"]["podIP"].as_str().unwrap());
        assert_eq!(c[8], o["spec"]["nodeName"].as_str().unwrap());
    }
}

#[test]
fn label_columns_show_labels_timestamps_no_headers_and_a_kind_column() {
    let sim = SimProcess::start(&["--objects", "3"]);
    let out = sim
        .kwatch("configmaps -n default --until-synced -L app --show-labels --timestamps")
        .exits(0);
    let table: Vec<&String> = out.stdout.iter().filter(|l| !l.starts_with('~')).collect();
    assert_eq!(
        cells(table[0]),
        [
            "DELTA",
            "TIME",
            "NAME",
            "RESOURCEVERSION",
            "DATA",
            "AGE",
            "APP",
            "LABELS"
        ]
    );
    let row = table
        .iter()
        .find(|l| l.contains("app-config"))
        .expect("app-config row");
    let c = cells(row);
    assert!(c[1].ends_with('Z') && c[1].len() == 24, "{row}");
    assert_eq!(c[6], "web");
    assert!(c[7].contains("app=web"), "{row}");

    let out = sim
        .kwatch("configmaps -n default --until-synced --no-headers")
        .success();
    assert!(
        out.stdout.iter().any(|l| l.contains("app-config")),
        "the rows without their header: {:#?}",
        out.stdout
    );
    assert!(
        out.stdout.iter().all(|l| !l.starts_with("DELTA")),
        "{:#?}",
        out.stdout
    );

    // Several resources: a KIND column, and a header again when the columns change.
    let out = sim.kwatch("cm,secrets -n default --until-synced --watch-list off --fifo delta");
    let headers: Vec<&String> = out
        .stdout
        .iter()
        .filter(|l| l.starts_with("DELTA"))
        .collect();
    assert!(!headers.is_empty());
    for h in &headers {
        assert_eq!(cells(h)[1], "KIND");
    }
    let kinds: BTreeSet<String> = out
        .stdout
        .iter()
        .filter(|l| l.starts_with("Replaced"))
        .map(|l| cells(l)[1].clone())
        .collect();
    assert_eq!(kinds, BTreeSet::from(["ConfigMap".into(), "Secret".into()]));
    // Consecutive headers always differ.
    let mut last: Option<&String> = None;
    for l in out.stdout.iter().filter(|l| !l.starts_with('~')) {
        if l.starts_with("DELTA") {
            assert_ne!(last, Some(l), "{:#?}", out.stdout);
            last = Some(l);
        }
    }
}

#[test]
fn name_custom_columns_and_jsonpath_print_one_line_per_delta() {
    let sim = SimProcess::start(&["--objects", "5"]);
    let names = live_names(&sim, "pods", "default");
    let out = sim
        .kwatch("pods -n default -o name --until-synced")
        .exits(0);
    let want: BTreeSet<String> = names.iter().map(|n| format!("pod/{n}")).collect();
    assert_eq!(out.stdout.iter().cloned().collect::<BTreeSet<_>>(), want);
    assert_eq!(out.stdout.len(), names.len(), "no event lines");

    let out = sim.kwatch("deploy -A -o name --until-synced");
    assert!(
        out.stdout.iter().all(|l| l.starts_with("deployment.apps/")),
        "{:#?}",
        out.stdout
    );

    let out = sim.kwatch("pods -n default -o custom-columns=NAME:.metadata.name,NODE:.spec.nodeName,IMAGES:.spec.containers[*].image,NONE:.nope --until-synced").exits(0);
    assert_eq!(cells(&out.stdout[0]), ["NAME", "NODE", "IMAGES", "NONE"]);
    assert_eq!(out.stdout.len(), names.len() + 1);
    for row in &out.stdout[1..] {
        let c = cells(row);
        assert!(names.contains(&c[0]), "{row}");
        assert!(c[1].starts_with("sim-node-"), "{row}");
        assert!(c[2].contains("nginx"), "{row}");
        assert_eq!(c[3], "<none>");
    }

    let out = sim.kwatch(["pods", "-n", "default", "-o", r#"jsonpath={.metadata.name}{"\t"}{range .status.conditions[?(@.type=="Ready")]}{.status}{end}"#, "--until-synced"]).exits(0);
    assert_eq!(out.stdout.len(), names.len());
    for l in &out.stdout {
        let (n, ready) = l.split_once('\t').unwrap();
        assert!(names.contains(n), "{l}");
        assert!(ready == "True" || ready == "False", "{l}");
    }

    // A bad template is a usage error before anything runs.
    let bad = sim.kwatch("pods -o jsonpath={.a[?@.x==]}").exits(2);
    assert!(bad.stderr.contains("invalid JSONPath"), "{}", bad.stderr);
}

#[test]
fn watch_events_are_kubectls_lines() {
    let sim = SimProcess::start(&["--objects", "2"]);
    let before = live_names(&sim, "configmaps", "default");
    let rec = sim.dir().join("we.jsonl");
    let mut kw = sim.start_kwatch([
        "configmaps",
        "-n",
        "default",
        "-o",
        "watch-events",
        "--record",
        rec.to_str().unwrap(),
    ]);
    kw.wait_for(LIMIT, "the initial list", |v| v.len() == before.len());
    create(&sim, configmap("we", "v1"));
    patch_configmap(&sim, "we", "v2");
    sim.kubectl_ok(&["delete", "configmap", "we", "-n", "default"]);
    let recs = kw.wait_for(LIMIT, "the deletion", |v| {
        v.iter().any(|r| r["type"] == "DELETED")
    });
    for r in &recs {
        let keys: Vec<&String> = r.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["type", "object"], "{r}");
    }
    let initial: BTreeSet<String> = recs[..before.len()]
        .iter()
        .map(|r| {
            assert_eq!(r["type"], "ADDED");
            r["object"]["metadata"]["name"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(initial, before);
    let mine: Vec<(&str, &str)> = recs
        .iter()
        .filter(|r| r["object"]["metadata"]["name"] == "we")
        .map(|r| {
            (
                r["type"].as_str().unwrap(),
                r["object"]["data"]["k"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        mine,
        [("ADDED", "v1"), ("MODIFIED", "v2"), ("DELETED", "v2")]
    );

    // A relist that brings nothing new sends nothing (a watch would not have either);
    // the recording shows that the relist happened.
    let n = kw.lines().len();
    force_relist(&sim);
    let deadline = std::time::Instant::now() + LIMIT;
    loop {
        let text = std::fs::read_to_string(&rec).unwrap();
        let relisted = text.lines().any(|l| {
            let r: Value = serde_json::from_str(l).unwrap();
            r["type"] == "Replaced" && r["initialList"] == false
        });
        if relisted {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no relist:\n{text}");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(kw.lines().len(), n, "{:#?}", kw.lines());
}

#[test]
fn diff_carries_a_json_patch_and_replaced_says_whether_it_changed() {
    let sim = SimProcess::start(&["--objects", "2"]);
    let mut kw = sim.start_kwatch("configmaps -n default -o json --diff");
    kw.wait_for(LIMIT, "Synced", |v| !of_type(v, "Synced").is_empty());
    create(&sim, configmap("d", "v1"));
    patch_configmap(&sim, "d", "v2");
    let recs = kw.wait_for(LIMIT, "the update", |v| !of_type(v, "Updated").is_empty());
    let added = recs.iter().find(|r| r["type"] == "Added").unwrap();
    assert!(added.get("diff").is_none() && added.get("changed").is_none());
    let upd = of_type(&recs, "Updated")[0];
    assert_eq!(upd["changed"], true);
    assert_eq!(
        upd["diff"],
        json!([{"op": "replace", "path": "/data/k", "value": "v2"}]),
        "noise (resourceVersion) is left out"
    );

    // Relist with nothing new: each Replaced says changed: false with an empty patch.
    force_relist(&sim);
    let recs = kw.wait_for(LIMIT, "a relist", |v| {
        v.iter()
            .filter(|r| r["type"] == "Replaced" && r["initialList"] == false)
            .count()
            >= 3
    });
    for r in recs
        .iter()
        .filter(|r| r["type"] == "Replaced" && r["initialList"] == false)
    {
        assert_eq!(r["changed"], false, "{r}");
        assert_eq!(r["diff"], json!([]), "{r}");
    }
    drop(kw);

    // The table: `path: old → new` under the row; --diff-all keeps the noise.
    let kw = sim.start_kwatch("configmaps -n default --diff-all");
    std::thread::sleep(Duration::from_secs(1));
    patch_configmap(&sim, "d", "v3");
    let deadline = std::time::Instant::now() + LIMIT;
    while !kw.lines().iter().any(|l| l.starts_with("    .data.k")) {
        assert!(std::time::Instant::now() < deadline, "{:#?}", kw.lines());
        std::thread::sleep(Duration::from_millis(50));
    }
    let lines = kw.lines();
    assert!(
        lines.contains(&r#"    .data.k: "v2" → "v3""#.to_owned()),
        "{lines:#?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("    .metadata.resourceVersion: ")),
        "{lines:#?}"
    );
}

#[test]
fn until_stops_with_distinct_exit_codes() {
    let sim = SimProcess::start(&["--objects", "2"]);

    // created: waits for the object to appear.
    let kw = sim.start_kwatch("configmaps u1 -n default -o name --until created --timeout 30s");
    std::thread::sleep(Duration::from_secs(1));
    create(&sim, configmap("u1", "a"));
    let out = kw.finish(LIMIT);
    assert_eq!(out.code(), Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, ["configmap/u1"]);

    // jsonpath=…=VALUE: waits for the value.
    let kw = sim.start_kwatch(
        "configmaps u1 -n default -o jsonpath={.data.k} --until jsonpath={.data.k}=b --timeout 30s",
    );
    std::thread::sleep(Duration::from_secs(1));
    patch_configmap(&sim, "u1", "b");
    let out = kw.finish(LIMIT);
    assert_eq!(out.code(), Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, ["a", "b"]);

    // deleted: waits for the deletion; an absent object meets it at once.
    let kw = sim.start_kwatch("configmaps u1 -n default -o name --until deleted --timeout 30s");
    std::thread::sleep(Duration::from_secs(1));
    sim.kubectl_ok(&["delete", "configmap", "u1", "-n", "default"]);
    let out = kw.finish(LIMIT);
    assert_eq!(out.code(), Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, ["configmap/u1", "configmap/u1"]);
    sim.kwatch("configmaps u1 -n default --until deleted --timeout 30s")
        .exits(0);

    // Not met before --timeout: 3; not met before --max-events: 4; error: 1.
    sim.kwatch("configmaps -n default --until jsonpath={.data.k}=never --timeout 1s")
        .exits(3);
    sim.kwatch("configmaps -n default --until deleted --max-events 1")
        .exits(4);
    sim.kwatch("nosuchthing --until created").exits(1);
    sim.kwatch("pods --until ready").exits(2);
}

#[test]
fn record_writes_json_lines_and_replay_renders_them_again() {
    let sim = SimProcess::start(&["--objects", "3"]);
    let file = sim.dir().join("rec.jsonl");
    let kw = sim.start_kwatch([
        "configmaps",
        "-n",
        "default",
        "-o",
        "name",
        "--record",
        file.to_str().unwrap(),
        "--max-events",
        "4",
        "--watch-list",
        "off",
    ]);
    std::thread::sleep(Duration::from_secs(1));
    let before = live_names(&sim, "configmaps", "default").len();
    create(&sim, configmap("r1", "v1"));
    if before + 1 < 4 {
        patch_configmap(&sim, "r1", "v2");
    }
    let out = kw.finish(LIMIT);
    assert_eq!(out.code(), Some(0), "{}", out.stderr);
    assert_eq!(out.stdout.len(), 4, "{:#?}", out.stdout);
    // Issue 14: a recording holds whatever was watched (Secrets too): 0600, as kubectl
    // writes its kubeconfig.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{mode:o}");
    let text = std::fs::read_to_string(&file).unwrap();
    let recorded: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(recorded[0]["type"], "List", "events are recorded too");
    let deltas: Vec<&Value> = recorded.iter().filter(|r| is_delta(r)).collect();
    assert_eq!(deltas.len(), 4);
    let names: Vec<String> = deltas
        .iter()
        .map(|r| format!("configmap/{}", r["name"].as_str().unwrap()))
        .collect();
    assert_eq!(names, out.stdout, "the recording holds what was shown");

    // Replay as JSON gives the recording back byte for byte.
    let replay = |args: &[&str]| {
        let mut cmd = command(sim.dir());
        cmd.arg("replay").arg(&file).args(args);
        Running::spawn(cmd).finish(LIMIT)
    };
    let json = replay(&["-o", "json"]);
    assert_eq!(json.code(), Some(0), "{}", json.stderr);
    assert_eq!(json.stdout, text.lines().collect::<Vec<_>>());
    let name = replay(&["-o", "name"]);
    assert_eq!(name.stdout, out.stdout);
    let table = replay(&[]);
    // `~` lines are diagnostics, on stderr (issue 15).
    assert!(
        table.stderr.starts_with("~ list configmaps"),
        "{}",
        table.stderr
    );
    assert!(
        table
            .stdout
            .iter()
            .any(|l| cells(l) == ["DELTA", "NAME", "RESOURCEVERSION", "DATA", "AGE"]),
        "{:#?}",
        table.stdout
    );
    let missing = replay(&[]);
    drop(missing);
    let mut cmd = command(sim.dir());
    cmd.args(["replay", "/nonexistent.jsonl"]);
    let err = Running::spawn(cmd).finish(LIMIT);
    assert_eq!(err.code(), Some(1));
    assert!(
        err.stderr.starts_with("error: cannot open"),
        "{}",
        err.stderr
    );
}

#[test]
fn stats_summarise_the_run_on_stderr() {
    let sim = SimProcess::start(&["--objects", "6"]);
    let out = sim
        .kwatch("pods -A -o json --until-synced --stats --page-size 4")
        .exits(0);
    let recs = out.json();
    let n = of_type(&recs, "Replaced").len();
    let pages = recs[1]["pages"].as_u64().unwrap();
    assert!(pages >= 2, "{}", recs[1]);
    let err = &out.stderr;
    assert!(
        err.contains(&format!("deltas: {n} (Replaced {n})")),
        "{err}"
    );
    assert!(
        err.contains(&format!("lists: 1 (0 relists), {pages} pages, {n} items")),
        "{err}"
    );
    assert!(err.contains("synced after: "), "{err}");
    assert!(err.contains(&format!("queue pods: max depth {n}")), "{err}");
    // Without --stats, stderr holds the table's `~` lines only.
    let quiet = sim.kwatch("pods -A --until-synced");
    assert!(
        !quiet.stderr.is_empty() && quiet.stderr.lines().all(|l| l.starts_with("~ ")),
        "{}",
        quiet.stderr
    );
}

#[test]
fn several_contexts_share_one_stream_each_record_tagged() {
    let sim = SimProcess::start(&["--objects", "2"]);
    // A kubeconfig with a second context for the same cluster.
    let text = std::fs::read_to_string(&sim.kubeconfig).unwrap();
    let mut kc: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    let ctx = kc["contexts"][0].clone();
    let first = ctx["name"].as_str().unwrap().to_owned();
    let mut second = ctx.clone();
    second["name"] = "second".into();
    kc["contexts"].as_sequence_mut().unwrap().push(second);
    let path = sim.dir().join("two-contexts");
    std::fs::write(&path, serde_yaml::to_string(&kc).unwrap()).unwrap();

    let mut cmd = command(sim.dir());
    cmd.arg("--kubeconfig").arg(&path).args([
        "configmaps",
        "-n",
        "default",
        "-o",
        "json",
        "--until-synced",
        "--context",
        &format!("{first},second"),
    ]);
    let out = Running::spawn(cmd).finish(LIMIT);
    assert_eq!(out.code(), Some(0), "{}", out.stderr);
    let recs = out.json();
    let names = live_names(&sim, "configmaps", "default");
    for c in [first.as_str(), "second"] {
        let mine: BTreeSet<String> = recs
            .iter()
            .filter(|r| is_delta(r) && r["context"] == c)
            .map(|r| r["name"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(mine, names, "context {c}");
        assert_eq!(
            recs.iter()
                .filter(|r| r["type"] == "Synced" && r["context"] == c)
                .count(),
            1
        );
    }
    assert!(
        recs.iter().all(|r| r.get("context").is_some()),
        "every record is tagged"
    );

    // The table gets a CONTEXT column; an unknown context is an error.
    let mut cmd = command(sim.dir());
    cmd.arg("--kubeconfig").arg(&path).args([
        "configmaps",
        "-n",
        "default",
        "--until-synced",
        "--context",
        "second,nope",
    ]);
    let out = Running::spawn(cmd).finish(LIMIT);
    assert_eq!(out.code(), Some(1));
    assert!(out.stderr.contains("nope"), "{}", out.stderr);
    let mut cmd = command(sim.dir());
    cmd.arg("--kubeconfig").arg(&path).args([
        "configmaps",
        "-n",
        "default",
        "--until-synced",
        "--context",
        &format!("second,{first}"),
    ]);
    let out = Running::spawn(cmd).finish(LIMIT);
    let header = out.stdout.iter().find(|l| l.starts_with("DELTA")).unwrap();
    assert_eq!(cells(header)[1], "CONTEXT");
}

#[test]
fn works_as_the_kubectl_plugin_kubectl_kwatch() {
    let sim = SimProcess::start(&["--objects", "2"]);
    let bin = tempfile::tempdir().unwrap();
    let plugin = bin.path().join("kubectl-kwatch");
    std::fs::copy(env!("CARGO_BIN_EXE_kwatch"), &plugin).unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.path().display());
    let kubectl = |args: &[&str]| {
        let mut cmd = std::process::Command::new("/usr/bin/kubectl");
        cmd.args(args)
            .env_clear()
            .env("HOME", sim.dir())
            .env("PATH", &path)
            .env("NO_COLOR", "1");
        Running::spawn(cmd).finish(LIMIT)
    };
    let out = kubectl(&[
        "kwatch",
        "--kubeconfig",
        sim.kubeconfig.to_str().unwrap(),
        "configmaps",
        "-n",
        "default",
        "-o",
        "name",
        "--until-synced",
    ]);
    assert_eq!(out.code(), Some(0), "{}", out.stderr);
    let want: BTreeSet<String> = live_names(&sim, "configmaps", "default")
        .iter()
        .map(|n| format!("configmap/{n}"))
        .collect();
    assert_eq!(out.stdout.iter().cloned().collect::<BTreeSet<_>>(), want);
    let help = kubectl(&["kwatch", "--help"]);
    assert!(
        help.stdout
            .iter()
            .any(|l| l.starts_with("Usage: kubectl kwatch ")),
        "{:#?}",
        help.stdout
    );
    let list = kubectl(&["plugin", "list"]);
    assert!(
        list.stdout.iter().any(|l| l.ends_with("/kubectl-kwatch")),
        "{:#?}",
        list.stdout
    );
}

#[test]
fn help_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = command(dir.path());
    cmd.arg("--help");
    let out = Running::spawn(cmd).finish(LIMIT);
    assert_eq!(out.code(), Some(0));
    insta::assert_snapshot!("help", out.stdout.join("\n"));
    let mut cmd = command(dir.path());
    cmd.args(["replay", "--help"]);
    let out = Running::spawn(cmd).finish(LIMIT);
    insta::assert_snapshot!("replay_help", out.stdout.join("\n"));
}

#[test]
fn nodes_wide_snapshot() {
    let sim = SimProcess::start(&["--objects", "1"]);
    let out = sim
        .kwatch("nodes -o wide --until-synced --watch-list off")
        .exits(0);
    // Redact what changes between runs: ages, resourceVersions and list timings. The
    // `~` lines are on stderr (issue 15): they follow the table in the snapshot.
    let text: Vec<String> = out
        .stdout
        .iter()
        .chain(&out.stderr.lines().map(str::to_owned).collect::<Vec<_>>())
        .map(|l| {
            if l.starts_with('~') {
                return l.split(" in ").next().unwrap().to_owned();
            }
            let mut c = cells(l);
            if c[0] != "DELTA" {
                c[2] = "[rv]".into();
                c[5] = "[age]".into();
            }
            c.join(" | ")
        })
        .collect();
    insta::assert_snapshot!("nodes_wide", text.join("\n"));
}

#[test]
fn progress_shows_on_a_terminal_while_a_long_list_loads_then_goes() {
    if !std::path::Path::new("/usr/bin/script").exists() {
        eprintln!("skipped: no script(1) to give kwatch a terminal");
        return;
    }
    let sim = SimProcess::start(&["--objects", "3000"]);
    // script(1) gives kwatch a terminal; stdout goes to a file, so only stderr is seen.
    let out_file = sim.dir().join("out.jsonl");
    let cmd = format!(
        "{} --kubeconfig {} pods -A --page-size 10 --until-synced -o json > {}",
        env!("CARGO_BIN_EXE_kwatch"),
        sim.kubeconfig.display(),
        out_file.display()
    );
    let mut script = std::process::Command::new("/usr/bin/script");
    script
        .args(["-qec", &cmd, "/dev/null"])
        .env_clear()
        .env("HOME", sim.dir())
        .env("PATH", "/usr/bin:/bin");
    let out = Running::spawn(script).finish(Duration::from_secs(60));
    assert_eq!(out.code(), Some(0), "{}", out.stderr);
    let tty: String = out.stdout.join("\n");
    assert!(tty.contains("\r\x1b[Kloading: listing pods;"), "{tty:?}");
    assert!(tty.ends_with("\r\x1b[K"), "the line is cleared: {tty:?}");
    let json = std::fs::read_to_string(&out_file).unwrap();
    assert!(!json.contains('\x1b'), "stdout has no progress");
    assert!(json.lines().last().unwrap().contains("\"Synced\""));
}

#[test]
fn colour_only_when_asked_and_server_control_characters_escaped_for_terminals_only() {
    let sim = SimProcess::start(&["--objects", "1"]);
    create(&sim, configmap("esc", "a\u{1b}[2Jb"));
    let colour = sim.kwatch("configmaps esc -n default --until-synced --color always");
    let row = colour.stdout.iter().find(|l| l.contains("esc")).unwrap();
    assert!(
        row.starts_with("\u{1b}["),
        "the DELTA cell is coloured: {row:?}"
    );
    let plain = sim
        .kwatch("configmaps esc -n default --until-synced")
        .success();
    assert!(
        plain.stdout.iter().any(|l| l.contains("esc")),
        "the row: {:?}",
        plain.stdout
    );
    assert!(
        plain.stdout.iter().all(|l| !l.contains('\u{1b}')),
        "a pipe gets no colour"
    );
    for format in ["custom-columns=V:.data.k", "jsonpath={.data.k}"] {
        let out = sim
            .kwatch([
                "configmaps",
                "esc",
                "-n",
                "default",
                "--until-synced",
                "-o",
                format,
            ])
            .exits(0);
        // Into a pipe, kubectl's script formats write the server's bytes (issue 15);
        // they are escaped only on a terminal.
        let text = out.stdout.join("\n");
        assert!(text.contains("a\u{1b}[2Jb"), "{format}: {text:?}");
    }
    // JSON keeps the value exactly (escaped by JSON itself).
    let json = sim.kwatch("configmaps esc -n default --until-synced -o json");
    let recs = json.json();
    assert_eq!(
        of_type(&recs, "Replaced")[0]["object"]["data"]["k"],
        "a\u{1b}[2Jb"
    );
}

#[test]
fn watch_events_match_kubectl_get_w_output_watch_events() {
    let sim = SimProcess::start(&["--objects", "2"]);
    let n = live_names(&sim, "configmaps", "default").len();
    let mut kubectl = Running::spawn(sim.kubectl_cmd(&[
        "get",
        "configmaps",
        "-n",
        "default",
        "-w",
        "--output-watch-events",
        "-o",
        "json",
    ]));
    // kubectl's watch output keeps managedFields (its `get -o json` does not); kwatch
    // drops them unless asked.
    let mut kw = sim.start_kwatch("configmaps -n default -o watch-events --show-managed-fields");
    kubectl.wait_for(LIMIT, "kubectl's initial list", |v| v.len() == n);
    kw.wait_for(LIMIT, "kwatch's initial list", |v| v.len() == n);
    create(&sim, configmap("same", "v1"));
    patch_configmap(&sim, "same", "v2");
    sim.kubectl_ok(&["delete", "configmap", "same", "-n", "default"]);
    let done = |v: &[Value]| v.iter().any(|r| r["type"] == "DELETED");
    let theirs = kubectl.wait_for(LIMIT, "kubectl's DELETED", done);
    let ours = kw.wait_for(LIMIT, "kwatch's DELETED", done);
    // The same events with the same objects (kubectl sorts keys; the values are equal).
    assert_eq!(ours, theirs);
    assert_eq!(ours.len(), n + 3);
}

#[test]
fn table_cells_agree_with_kubectl_get() {
    let sim = SimProcess::start(&["--objects", "4"]);
    for (resource, wide) in [
        ("pods", true),
        ("deploy", false),
        ("rs", false),
        ("svc", false),
        ("nodes", false),
        ("ns", false),
        ("cm", false),
        ("secrets", false),
    ] {
        let mut kargs = vec!["get", resource, "-n", "default"];
        let mut wargs = vec![resource, "-n", "default", "--until-synced"];
        if wide {
            kargs.extend(["-o", "wide"]);
            wargs.extend(["-o", "wide"]);
        }
        let theirs = sim.kubectl_ok(&kargs);
        let mut lines = theirs.lines();
        let their_header = cells(lines.next().unwrap());
        let out = sim.kwatch(&wargs[..]).exits(0);
        let table: Vec<&String> = out.stdout.iter().filter(|l| !l.starts_with('~')).collect();
        let our_header = cells(table[0]);
        let mut compared = 0;
        for line in lines {
            let t = cells(line);
            let ours = table
                .iter()
                .map(|l| cells(l))
                .find(|c| c[1] == t[0])
                .unwrap_or_else(|| panic!("{resource}: no row for {}", t[0]));
            // Every column both print, except AGE (a second may pass between the runs).
            for (i, h) in their_header.iter().enumerate().skip(1) {
                if h == "AGE" {
                    continue;
                }
                if let Some(j) = our_header.iter().skip(3).position(|x| x == h) {
                    assert_eq!(ours[j + 3], t[i], "{resource} {h} of {}", t[0]);
                    compared += 1;
                }
            }
        }
        assert!(compared > 0, "{resource}: nothing compared");
    }
}
