//! The output habits of issues 11 and 15, through the built binary against `kwatch sim`:
//! an aligned initial list, stdout for data only, failures reported by the script formats,
//! YAML that YAML 1.1 readers read back, server bytes into pipes, whole colours, kubectl's
//! relaxed custom-columns paths, and the context on every script line. Each test fails
//! on the tree before these changes.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::util::kwatch::{command, kubectl_f, of_type, Running};
use crate::util::{SimProcess, LIMIT};

/// Table lines on stdout, `~` lines excluded (there should be none).
fn rows(stdout: &[String]) -> Vec<&String> {
    stdout.iter().filter(|l| !l.starts_with('~')).collect()
}

#[test]
fn the_initial_list_prints_aligned_as_kubectl_aligns_it() {
    let sim = SimProcess::start(&["--objects", "2"]);
    // Namespaces of different lengths, the shortest (`default`) listed first.
    for ns in ["kube-node-lease", "x"] {
        kubectl_f(
            &sim,
            "create",
            &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
        );
    }
    let out = sim.kwatch("ns --until-synced").exits(0);
    let lines = rows(&out.stdout);
    assert!(lines.len() >= 6, "{lines:#?}");
    let rv_column = lines[0].find("RESOURCEVERSION").unwrap();
    let status_column = lines[0].find("STATUS").unwrap();
    for l in &lines[1..] {
        let rv = l[rv_column..].split_whitespace().next().unwrap_or_default();
        assert!(
            rv.parse::<u64>().is_ok() && l[..rv_column].ends_with("   "),
            "RESOURCEVERSION not aligned:\n{}",
            out.stdout.join("\n")
        );
        assert!(
            l[..status_column].ends_with("   ") && !l[status_column..].starts_with(' '),
            "STATUS not aligned:\n{}",
            out.stdout.join("\n")
        );
    }
}

#[test]
fn tilde_lines_go_to_stderr_and_stdout_holds_rows_only() {
    let sim = SimProcess::start(&["--objects", "3"]);
    let out = sim
        .kwatch("pods -n default --no-headers --until-synced")
        .exits(0);
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
    let kw = sim.start_kwatch([
        "configmaps",
        "-n",
        "default",
        "-o",
        "name",
        "--record",
        record.to_str().unwrap(),
    ]);
    let deadline = Instant::now() + LIMIT;
    while kw.lines().len() < 2 {
        assert!(
            Instant::now() < deadline,
            "no initial list: {}",
            kw.stderr()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // A watch cut within a second of opening counts as a failure of its own.
    std::thread::sleep(Duration::from_millis(1300));
    // The next three watches are refused (429 and no Retry-After: back off, re-watch).
    sim.control(
        "POST",
        "/_sim/fail",
        json!({"code": 429, "count": 3, "retryAfter": 0, "verb": "watch", "resource": "configmaps"}),
    );
    sim.control("POST", "/_sim/drop-watches", json!({}));
    kubectl_f(
        &sim,
        "create",
        &json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "after", "namespace": "default"}}),
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    while !kw.stderr().contains("recovered") {
        assert!(
            Instant::now() < deadline,
            "no recovery reported; stderr:\n{}",
            kw.stderr()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
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

/// PyYAML (a YAML 1.1 reader) reads `-o yaml` back as the values `-o json` gives.
#[test]
fn yaml_reads_back_in_a_yaml_1_1_reader_as_the_json_values() {
    let probe = std::process::Command::new("python3")
        .args(["-c", "import yaml"])
        .status();
    assert!(
        probe.is_ok_and(|s| s.success()),
        "python3 with PyYAML is needed (apt-get install python3-yaml, or pip install pyyaml)"
    );
    let sim = SimProcess::start(&["--objects", "1"]);
    let data = json!({"a": "no", "b": "yes", "c": "on", "d": "12:30:00", "e": "2024-01-01",
        "f": "", "g": "*", "h": "multi\nline\n", "i": "1e3", "j": "0x1F", "k": "~",
        "l": "a\u{1b}[2Jb", "m": "y", "n": "off", "o": "012", "p": ".inf", "q": "null",
        "r": "- x", "s": "a: b", "t": " lead", "u": "tab\there", "v": "2024-01-01T10:00:00Z",
        "w": "190:20:30", "x": "1_000", "y": "größe", "z": "=", "on": "key too"});
    kubectl_f(
        &sim,
        "create",
        &json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "yn", "namespace": "default",
                             "labels": {"enabled": "true", "flag": "no"}},
                "data": data}),
    );
    let args = |format: &'static str| {
        [
            "configmaps",
            "yn",
            "-n",
            "default",
            "--until-synced",
            "-o",
            format,
        ]
    };
    let as_json = sim.kwatch(&args("json")[..]).exits(0);
    let as_yaml = sim.kwatch(&args("yaml")[..]).exits(0);
    let yaml_file = sim.dir().join("out.yaml");
    std::fs::write(&yaml_file, as_yaml.stdout.join("\n") + "\n").unwrap();
    let py = std::process::Command::new("python3")
        .args([
            "-c",
            "import json, sys, yaml\n\
             docs = list(yaml.safe_load_all(open(sys.argv[1])))\n\
             print(json.dumps(docs, default=lambda o: 'NOT A STRING: %r' % (o,)))",
            yaml_file.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        py.status.success(),
        "{}",
        String::from_utf8_lossy(&py.stderr)
    );
    let from_yaml: Vec<Value> = serde_json::from_slice(&py.stdout).unwrap();
    let from_json = as_json.json();
    let object = |recs: &[Value]| of_type(recs, "Replaced")[0]["object"].clone();
    assert_eq!(object(&from_yaml), object(&from_json));
    assert_eq!(object(&from_yaml)["data"], data);
    // The records around the object too, but for their times (two runs).
    let types = |recs: &[Value]| -> Vec<Value> {
        recs.iter()
            .map(|r| {
                let mut r = r.clone();
                for f in ["time", "ms", "object"] {
                    r.as_object_mut().unwrap().remove(f);
                }
                r
            })
            .collect()
    };
    assert_eq!(types(&from_yaml), types(&from_json));
}

#[test]
fn script_formats_write_server_bytes_into_a_pipe() {
    let sim = SimProcess::start(&["--objects", "1"]);
    kubectl_f(
        &sim,
        "create",
        &json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "esc", "namespace": "default"},
                "data": {"k": "a\u{1b}[2Jb"}}),
    );
    let base = ["configmaps", "esc", "-n", "default", "--until-synced", "-o"];
    let jsonpath = sim
        .kwatch(&[&base[..], &["jsonpath={.data.k}"]].concat()[..])
        .exits(0);
    assert_eq!(jsonpath.stdout, ["a\u{1b}[2Jb"]);
    let columns = sim.kwatch(&[&base[..], &["custom-columns=V:.data.k"]].concat()[..]);
    assert_eq!(columns.stdout, ["V", "a\u{1b}[2Jb"]);
    // The table is for people: escaped even into a pipe.
    let table = sim.kwatch(&base[..5]).success();
    assert!(
        table.stdout.iter().any(|l| l.contains("esc")),
        "the row: {:?}",
        table.stdout
    );
    assert!(
        table.stdout.iter().all(|l| !l.contains('\u{1b}')),
        "{:?}",
        table.stdout
    );
}

#[test]
fn colour_always_with_no_color_set_is_whole_with_no_stray_reset() {
    let sim = SimProcess::start(&["--objects", "2"]);
    // The fixture's environment has NO_COLOR=1; --color always overrides it.
    let out = sim
        .kwatch("configmaps -n default --until-synced --color always")
        .exits(0);
    let lines = rows(&out.stdout);
    assert!(
        !lines[0].contains('\u{1b}'),
        "the header is plain: {lines:?}"
    );
    for row in &lines[1..] {
        assert!(
            row.starts_with("\u{1b}[36mReplaced\u{1b}[0m   "),
            "the first cell is coloured and closed: {row:?}"
        );
    }
    assert!(
        out.stderr
            .lines()
            .all(|l| l.starts_with("\u{1b}[90m~ ") && l.ends_with("\u{1b}[0m")),
        "{:?}",
        out.stderr
    );
    for text in [out.stdout.join("\n"), out.stderr.clone()] {
        assert!(!text.contains("\u{1b}[m"), "a stray reset: {text:?}");
    }
}

#[test]
fn custom_columns_take_paths_without_a_leading_dot_as_kubectl_does() {
    let sim = SimProcess::start(&["--objects", "2"]);
    let spec =
        "custom-columns=NAME:metadata.name,NS:{.metadata.namespace},RV:{metadata.resourceVersion}";
    let theirs = sim.kubectl_ok(&["get", "configmaps", "-n", "default", "-o", spec]);
    let out = sim
        .kwatch(["configmaps", "-n", "default", "--until-synced", "-o", spec])
        .exits(0);
    let cells = |l: &str| l.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
    let ours: BTreeSet<Vec<String>> = out.stdout.iter().map(|l| cells(l)).collect();
    let want: BTreeSet<Vec<String>> = theirs.lines().map(cells).collect();
    assert_eq!(ours, want);
}

/// A kubeconfig with the simulator's context and a second one, `second`, for the same
/// cluster; returns its path and the first context's name.
fn two_contexts(sim: &SimProcess) -> (std::path::PathBuf, String) {
    let text = std::fs::read_to_string(&sim.kubeconfig).unwrap();
    let mut kc: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    let ctx = kc["contexts"][0].clone();
    let first = ctx["name"].as_str().unwrap().to_owned();
    let mut second = ctx.clone();
    second["name"] = "second".into();
    kc["contexts"].as_sequence_mut().unwrap().push(second);
    let path = sim.dir().join("two-contexts");
    std::fs::write(&path, serde_yaml::to_string(&kc).unwrap()).unwrap();
    (path, first)
}

#[test]
fn with_several_contexts_every_script_line_names_its_context() {
    let sim = SimProcess::start(&["--objects", "2"]);
    let (path, first) = two_contexts(&sim);
    let contexts = format!("{first},second");
    let kw = |format: &str| {
        let mut cmd = command(sim.dir());
        cmd.arg("--kubeconfig").arg(&path).args([
            "configmaps",
            "-n",
            "default",
            "--until-synced",
            "--context",
            &contexts,
            "-o",
            format,
        ]);
        let out = Running::spawn(cmd).finish(LIMIT);
        assert_eq!(out.code(), Some(0), "{format}: {}", out.stderr);
        out.stdout
    };
    let names: BTreeSet<String> = sim
        .kubectl_ok(&["get", "configmaps", "-n", "default", "-o", "name"])
        .lines()
        .map(str::to_owned)
        .collect();
    let want = |sep: &str| -> BTreeSet<String> {
        [first.as_str(), "second"]
            .iter()
            .flat_map(|c| names.iter().map(move |n| format!("{c}{sep}{n}")))
            .collect()
    };
    let by_name: BTreeSet<String> = kw("name").into_iter().collect();
    assert_eq!(by_name, want("/"));

    let table = kw("custom-columns=NAME:.metadata.name");
    let header: Vec<&str> = table[0].split_whitespace().collect();
    assert_eq!(header, ["CONTEXT", "NAME"]);
    let got: BTreeSet<String> = table[1..]
        .iter()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    let want_rows: BTreeSet<String> = want(" ")
        .into_iter()
        .map(|r| r.replace("configmap/", ""))
        .collect();
    assert_eq!(got, want_rows);

    let events: Vec<Value> = kw("watch-events")
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let got: BTreeSet<String> = events
        .iter()
        .map(|e| {
            format!(
                "{}/configmap/{}",
                e["context"].as_str().unwrap_or("<none>"),
                e["object"]["metadata"]["name"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(got, want("/"));
    assert!(events.iter().all(|e| e["type"] == "ADDED"));
}
