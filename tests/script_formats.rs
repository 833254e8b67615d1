//! The formats for scripts: `-o name`, `custom-columns`, `jsonpath`, `--output-watch-events`
//! (kubectl's lines), stdout for data and `~` lines on stderr, a failing watch reported
//! once.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use crate::util::kwatch::{kubectl_f, of_type, on_new_sim, Running};
use crate::util::shared::*;
use crate::util::{eventually, SimProcess, LIMIT};

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

    // A bad template is a usage error before anything runs: kubectl's reason, one line.
    let bad = sim.kwatch("pods -o jsonpath={.a[?@.x==]}").exits(2);
    assert!(
        bad.stderr
            .contains("error parsing jsonpath {.a[?@.x==]}: invalid array index ?@.x=="),
        "{}",
        bad.stderr
    );
    assert_eq!(bad.stderr.lines().count(), 1, "{}", bad.stderr);
}

/// kubectl's ways to name a key with dots (an annotation's), its bracket form, and other
/// templates kubectl users write: kwatch prints what `kubectl get` prints for the same
/// object, in jsonpath and custom-columns; a template kubectl refuses is one line with
/// kubectl's reason, and an object the template cannot be applied to is one line on
/// stderr, naming it.
#[test]
fn jsonpath_and_custom_columns_print_what_kubectl_prints() {
    let sim = SimProcess::start(&["--objects", "0"]);
    let mut cm = demo_configmap("rev", "v");
    cm["metadata"]["annotations"] = json!({"deployment.kubernetes.io/revision": "1"});
    cm["data"] = json!({"k": "v", "list": "a,b"});
    create(&sim, cm);
    let kwatch = |format: &str| {
        sim.kwatch([
            "configmaps",
            "rev",
            "-n",
            "default",
            "--until-synced",
            "-o",
            format,
        ])
    };
    for template in [
        r"{.metadata.annotations.deployment\.kubernetes\.io/revision}",
        r"{.metadata.annotations['deployment\.kubernetes\.io/revision']}",
        r"{.metadata.annotations['deployment.kubernetes.io/revision']}",
        r#"{.metadata.name}{"\t"}{.data}"#,
        r#"{range .metadata.managedFields[*]}{.manager}{","}{end}"#,
        r#"{.metadata.managedFields[?(@.operation=="Update")].manager}"#,
        "{..k}",
        // One value: Go walks a map's values in random order (reflect's MapKeys).
        "{.metadata.annotations.*}",
        "{.metadata.nope}",
        "name: {.metadata.name}",
    ] {
        let format = format!("jsonpath={template}");
        let theirs = sim.kubectl_ok(["get", "configmap", "rev", "-n", "default", "-o", &format]);
        let ours = kwatch(&format).exits(0);
        // One line per delta: kwatch ends the template's output with a newline.
        assert_eq!(ours.stdout, [theirs], "{template}");
    }
    for path in [
        r".metadata.annotations.deployment\.kubernetes\.io/revision",
        r".metadata.annotations['deployment\.kubernetes\.io/revision']",
        ".data",
        ".metadata.nope",
    ] {
        let format = format!("custom-columns=A:{path}");
        let theirs = sim.kubectl_ok(["get", "configmap", "rev", "-n", "default", "-o", &format]);
        let ours = kwatch(&format).exits(0);
        let theirs: Vec<&str> = theirs.lines().map(str::trim_end).collect();
        let ours: Vec<&str> = ours.stdout.iter().map(|l| l.trim_end()).collect();
        assert_eq!(ours, theirs, "{path}");
    }
    // Refused as kubectl refuses it: one line, kubectl's reason, no parser's dump.
    let bad =
        kwatch(r#"jsonpath={.metadata.annotations["deployment.kubernetes.io/revision"]}"#).exits(2);
    assert_eq!(bad.stderr.lines().count(), 1, "{}", bad.stderr);
    assert!(
        bad.stderr
            .contains(r#"invalid array index "deployment.kubernetes.io/revision""#),
        "{}",
        bad.stderr
    );
    // Applied to an object it does not fit: kubectl's error, for that object, on stderr.
    let out = kwatch("jsonpath={.data.k[0]}").exits(0);
    assert!(out.stdout.is_empty(), "{:?}", out.stdout);
    assert_eq!(
        out.stderr.trim_end(),
        "error: error executing jsonpath {.data.k[0]}: string is not array or slice \
         (object default/rev)"
    );
}

#[test]
fn custom_columns_take_paths_without_a_leading_dot_as_kubectl_does() {
    let sim = SimProcess::start(&["--objects", "2"]);
    let spec =
        "custom-columns=NAME:metadata.name,NS:{.metadata.namespace},RV:{metadata.resourceVersion}";
    let theirs = sim.kubectl_ok(["get", "configmaps", "-n", "default", "-o", spec]);
    let out = sim
        .kwatch(["configmaps", "-n", "default", "--until-synced", "-o", spec])
        .exits(0);
    let cells = |l: &str| l.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
    let ours: BTreeSet<Vec<String>> = out.stdout.iter().map(|l| cells(l)).collect();
    let want: BTreeSet<Vec<String>> = theirs.lines().map(cells).collect();
    assert_eq!(ours, want);
}

#[test]
fn watch_events_are_kubectls_lines() {
    let sim = SimProcess::start(&["--objects", "2"]);
    let before = live_names(&sim, "configmaps", "default");
    let (mut kw, rec) = sim.start_recording("we.jsonl", "configmaps -n default -o watch-events");
    kw.wait_for(LIMIT, "the initial list", |v| v.len() == before.len());
    create(&sim, demo_configmap("we", "v1"));
    patch_configmap(&sim, "we", "v2");
    sim.kubectl_ok("delete configmap we -n default");
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
    // the recording shows that the relist happened. A change made after it (the marker)
    // is the next line: nothing came between.
    let n = kw.lines().len();
    force_relist(&sim);
    eventually(LIMIT, "the relist in the recording", || {
        let text = std::fs::read_to_string(&rec).unwrap();
        let relisted = text.lines().any(|l| {
            let r: Value = serde_json::from_str(l).unwrap();
            r["type"] == "Replaced" && r["initialList"] == false
        });
        if relisted {
            Ok(())
        } else {
            Err(text)
        }
    });
    create(&sim, demo_configmap("marker", "v1"));
    let recs = kw.wait_for(LIMIT, "the marker", |v| v.len() > n);
    assert_eq!(recs.len(), n + 1, "{recs:#?}");
    assert_eq!(recs[n]["object"]["metadata"]["name"], "marker", "{recs:#?}");
}

#[test]
fn watch_events_match_kubectl_get_w_output_watch_events() {
    let sim = SimProcess::start(&["--objects", "2"]);
    let n = live_names(&sim, "configmaps", "default").len();
    let mut kubectl = Running::spawn(
        sim.kubectl_cmd("get configmaps -n default -w --output-watch-events -o json"),
    );
    // kubectl's watch output keeps managedFields (its `get -o json` does not); kwatch
    // drops them unless asked.
    let mut kw = sim.start_kwatch("configmaps -n default -o watch-events --show-managed-fields");
    kubectl.wait_for(LIMIT, "kubectl's initial list", |v| v.len() == n);
    kw.wait_for(LIMIT, "kwatch's initial list", |v| v.len() == n);
    create(&sim, demo_configmap("same", "v1"));
    patch_configmap(&sim, "same", "v2");
    sim.kubectl_ok("delete configmap same -n default");
    let done = |v: &[Value]| v.iter().any(|r| r["type"] == "DELETED");
    let theirs = kubectl.wait_for(LIMIT, "kubectl's DELETED", done);
    let ours = kw.wait_for(LIMIT, "kwatch's DELETED", done);
    // The same events with the same objects (kubectl sorts keys; the values are equal).
    assert_eq!(ours, theirs);
    assert_eq!(ours.len(), n + 3);
}

#[test]
fn tilde_lines_go_to_stderr_and_stdout_holds_rows_only() {
    let (sim, out) = on_new_sim(
        &["--objects", "3"],
        "pods -n default --no-headers --until-synced",
    );
    let names: BTreeSet<String> = sim.state()["objects"]["pods"]
        .as_object()
        .unwrap()
        .keys()
        .filter_map(|k| k.strip_prefix("default/").map(str::to_owned))
        .collect();
    // `kwatch pods --no-headers | awk '{print $2}'`: names and nothing else.
    let second: BTreeSet<String> = out
        .stdout
        .iter()
        .map(|l| l.split_whitespace().nth(1).unwrap_or_default().to_owned())
        .collect();
    assert_eq!(second, names, "{:#?}", out.stdout);
    assert!(
        out.stderr.contains("~ listed pods: ")
            && out
                .stderr
                .ends_with("~ synced pods (client-go 0.32, DeltaFIFO)\n"),
        "{}",
        out.stderr
    );
}

#[test]
fn script_formats_report_a_failing_watch_once_and_its_recovery_once() {
    let sim = SimProcess::start(&["--objects", "2"]);
    let record = sim.dir().join("record.jsonl");
    let rec = record.to_str().unwrap();
    // A watch cut within a second of opening would be a failure of its own (the rule is
    // off), and the three backoffs start at 50 ms instead of 800.
    let hooks = [
        ("KWATCH_TEST_SHORT_WATCH_MS", "0"),
        ("KWATCH_TEST_BACKOFF_START_MS", "50"),
    ];
    let kw = sim.start_kwatch_env(
        &hooks,
        ["configmaps", "-n", "default", "-o", "name", "--record", rec],
    );
    eventually(LIMIT, "the initial list", || match kw.lines() {
        l if l.len() >= 2 => Ok(()),
        l => Err((l, kw.stderr())),
    });
    // The next three watches are refused (429 and no Retry-After: back off, re-watch).
    sim.fail_next(json!({"code": 429, "count": 3, "retryAfter": 0, "verb": "watch", "resource": "configmaps"}));
    sim.drop_watches();
    kubectl_f(
        &sim,
        "create",
        &json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "after", "namespace": "default"}}),
    );
    eventually(LIMIT, "the recovery reported", || match kw.stderr() {
        e if e.contains("recovered") => Ok(()),
        e => Err(e),
    });
    let out = kw.interrupt(LIMIT);
    let recorded: Vec<Value> = std::fs::read_to_string(&record)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let backoffs = of_type(&recorded, "Backoff").len();
    assert!(
        backoffs >= 3,
        "three refusals, three backoffs: {recorded:#?}"
    );
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(
        lines.len(),
        2,
        "one line per change of state:\n{}",
        out.stderr
    );
    assert!(
        lines[0].starts_with("~ watch configmaps failing, retrying: watch: ")
            && lines[0].contains("429"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].starts_with("~ watch configmaps recovered after 3 retries in "),
        "{}",
        lines[1]
    );
    assert_eq!(out.stdout.last().unwrap(), "configmap/after");
}
