//! kubectl habits, through the built binary against `kwatch sim` (issue 15, "tried as a
//! new user, side by side with kubectl"): input validated as kubectl validates it,
//! `TYPE/NAME`, `-w`, `--all-namespaces=BOOL`, one name at a time, `--until` parsed as
//! `kubectl wait --for`, and the table columns of kubectl 1.32's printers.

use serde_json::{json, Value};

use crate::util::kwatch::{kubectl_f, Finished};
use crate::util::SimProcess;

/// A bad-usage exit: code 2, nothing on stdout, one `error:` line on stderr with `want`.
fn assert_usage_error(out: &Finished, want: &str) {
    assert_eq!(out.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line: {:?}", out.stderr);
    assert!(lines[0].starts_with("error: "), "{lines:?}");
    assert!(lines[0].contains(want), "{want:?} in {lines:?}");
}

/// Issue 15 bullet 1: `-n ..` and `-n 'qa-live?x=1'` listed "0 items"; a name was not
/// checked at all.
#[test]
fn namespaces_and_names_are_validated_before_any_request() {
    let sim = SimProcess::start(&[]);
    let out = sim.kwatch("cm -n .. --until-synced");
    assert_usage_error(&out, r#"invalid namespace "..": [may not be '..']"#);
    let out = sim.kwatch("cm -n qa-live?x=1 --until-synced");
    assert_usage_error(
        &out,
        r#"invalid namespace "qa-live?x=1": a lowercase RFC 1123 label"#,
    );
    let out = sim.kwatch("cm -n a/b --until-synced");
    assert_usage_error(&out, "[may not contain '/']");
    let out = sim.kwatch("cm .. -n default --until-synced");
    assert_usage_error(&out, r#"invalid resource name "..": [may not be '..']"#);
    let out = sim.kwatch("cm 50% -n default --until-synced");
    assert_usage_error(&out, "[may not contain '%']");
    // A valid namespace still works, and kubectl agrees on the bad one.
    let out = sim.kwatch("cm -n default --until-synced -o name").exits(0);
    assert!(
        out.stdout.contains(&"configmap/app-config".to_owned()),
        "{out:?}"
    );
    let k = sim.kubectl(&["get", "cm", "-n", ".."]);
    assert!(!k.status.success());
    assert!(String::from_utf8_lossy(&k.stderr).contains("may not be '..'"));
}

/// Issue 15 bullet 2: `kwatch pod/pod1`, `-w`, `--all-namespaces=true|false` were
/// rejected, and `kwatch pods a b` gave a confusing subcommand error.
#[test]
fn kubectl_argument_habits_are_accepted() {
    let sim = SimProcess::start(&[]);
    let out = sim
        .kwatch("deploy/web -n default -w --until-synced -o name")
        .exits(0);
    assert_eq!(out.stdout, ["deployment.apps/web"]);
    let out = sim
        .kwatch("configmap/app-config --watch --until-synced -o name")
        .exits(0);
    assert_eq!(out.stdout, ["configmap/app-config"]);

    let namespaces = |out: &Finished| -> std::collections::BTreeSet<String> {
        out.stdout
            .iter()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter_map(|r| r["namespace"].as_str().map(str::to_owned))
            .collect()
    };
    let all = sim
        .kwatch("deploy --all-namespaces=true --until-synced -o json")
        .exits(0);
    assert_eq!(
        namespaces(&all),
        ["default", "team-a"].map(String::from).into()
    );
    let one = sim
        .kwatch("deploy --all-namespaces=false -n team-a --until-synced -o json")
        .exits(0);
    assert_eq!(namespaces(&one), ["team-a"].map(String::from).into());

    let out = sim.kwatch("pods a b --until-synced");
    assert_usage_error(&out, "kwatch watches one name at a time");
    let out = sim.kwatch("pod/a b --until-synced");
    assert_usage_error(&out, "use `pod/a` alone");
    let out = sim.kwatch("pod/ --until-synced");
    assert_usage_error(&out, "expected TYPE/NAME");
}

/// Issue 15 bullet 3: `condition=Available=false` never matched (kubectl wait compares
/// case-insensitively) and `jsonpath=.data.a=b` without braces was rejected.
#[test]
fn until_parses_as_kubectl_wait() {
    let sim = SimProcess::start(&[]);
    kubectl_f(
        &sim,
        "create",
        &json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "cond", "namespace": "default"}, "data": {"a": "b"},
            "status": {"conditions": [{"type": "Available", "status": "False"}]}}),
    );
    for until in [
        "condition=Available=false",
        "condition=available=FALSE",
        "jsonpath=.data.a=b",
        "jsonpath={.data.a}=b",
        r#"jsonpath=.status.conditions[?(@.type=="Available")].status=False"#,
    ] {
        let out = sim
            .kwatch([
                "cm",
                "cond",
                "-n",
                "default",
                "--until",
                until,
                "--timeout",
                "10s",
                "-o",
                "name",
            ])
            .exits(0);
        assert_eq!(out.stdout, ["configmap/cond"], "{until}");
    }
    // Not met: the timeout's code, as before.
    sim.kwatch("cm cond -n default --until condition=Available --timeout 2s")
        .exits(3);
    sim.kwatch("cm --until jsonpath={.a}=b=c").exits(2);
}

/// The cells of a table line, cut at the header's column starts (so empty cells stay).
fn columns(header: &str, line: &str) -> Vec<(String, String)> {
    let mut starts = vec![0];
    let bytes = header.as_bytes();
    for i in 1..bytes.len() {
        if bytes[i] != b' ' && i >= 2 && bytes[i - 1] == b' ' && bytes[i - 2] == b' ' {
            starts.push(i);
        }
    }
    let cut = |s: &str, i: usize| -> String {
        let end = starts.get(i + 1).copied().unwrap_or(usize::MAX);
        s.get(starts[i]..end.min(s.len()))
            .unwrap_or_default()
            .trim()
            .to_owned()
    };
    (0..starts.len())
        .map(|i| (cut(header, i), cut(line, i)))
        .collect()
}

/// The header and first row of `kwatch ARGS --until-synced` as (header, cell) pairs,
/// without AGE (it depends on the clock).
fn table(sim: &SimProcess, args: &[&str]) -> Vec<(String, String)> {
    let mut all = args.to_vec();
    all.push("--until-synced");
    let out = sim.kwatch(&all[..]).exits(0);
    let rows: Vec<&String> = out.stdout.iter().filter(|l| !l.starts_with('~')).collect();
    assert!(rows.len() >= 2, "{out:?}");
    columns(rows[0], rows[1])
        .into_iter()
        .filter(|(h, _)| h != "AGE" && h != "RESOURCEVERSION")
        .collect()
}

/// (header, cell) pairs of a row.
type Row = Vec<(String, String)>;

fn pairs(p: &[(&str, &str)]) -> Row {
    p.iter()
        .map(|(h, c)| (h.to_string(), c.to_string()))
        .collect()
}

/// Issue 15 bullet 4: kubectl 1.32's columns for kinds that got NAME/AGE only, events of
/// events.k8s.io, CRD cells, pod wide columns, and DELTA instead of a second TYPE.
#[test]
fn tables_have_kubectls_columns() {
    let sim = SimProcess::start(&[]);
    let ns = json!({"namespace": "default"});
    let meta = |name: &str| {
        let mut m = ns.clone();
        m["name"] = json!(name);
        m
    };
    let pod_template = |name: &str, image: &str| {
        json!({"metadata": {"labels": {"app": name}},
               "spec": {"restartPolicy": "Never", "containers": [{"name": name, "image": image}]}})
    };
    for manifest in [
        json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": meta("pi"),
               "spec": {"completions": 2, "template": pod_template("pi", "perl")}}),
        json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": meta("tick"),
               "spec": {"schedule": "*/5 * * * *", "suspend": true,
                        "jobTemplate": {"spec": {"template": pod_template("t", "busybox")}}}}),
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": meta("web"),
               "spec": {"ingressClassName": "nginx", "tls": [{"hosts": ["a.example"]}],
                        "rules": [{"host": "a.example"}, {"host": "b.example"}]}}),
        json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "metadata": meta("web-x1"),
               "addressType": "IPv4", "ports": [{"port": 80}, {"name": "metrics"}],
               "endpoints": [{"addresses": ["10.0.0.1"]}, {"addresses": ["10.0.0.2"]}]}),
        json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": meta("db"),
               "spec": {"replicas": 2, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                        "template": pod_template("db", "postgres")}}),
        json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": meta("agent"),
               "spec": {"selector": {"matchLabels": {"app": "agent"}},
                        "template": {"metadata": {"labels": {"app": "agent"}},
                                     "spec": {"nodeSelector": {"os": "linux"},
                                              "containers": [{"name": "a", "image": "agent"}]}}}}),
        json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": meta("web.1"),
               "eventTime": "2026-11-21T10:03:00.000000Z", "reportingController": "default-scheduler",
               "reportingInstance": "sched-1", "action": "Binding", "reason": "Scheduled",
               "type": "Normal", "regarding": {"kind": "Pod", "name": "web", "namespace": "default"},
               "note": "assigned to node-a"}),
        json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": meta("bare"),
               "spec": {"size": 2}}),
    ] {
        kubectl_f(&sim, "create", &manifest);
    }
    // kubectl knows every one of them from the simulator's discovery.
    sim.kubectl_ok(&[
        "get",
        "jobs,cronjobs,ingresses,endpointslices,statefulsets,daemonsets,events.events.k8s.io",
        "-n",
        "default",
    ]);

    let cases: Vec<(&[&str], Row)> = vec![
        (
            &["jobs", "-n", "default", "-o", "wide"],
            pairs(&[
                ("DELTA", "Replaced"),
                ("NAME", "pi"),
                ("STATUS", "Running"),
                ("COMPLETIONS", "0/2"),
                ("DURATION", ""),
                ("CONTAINERS", "pi"),
                ("IMAGES", "perl"),
                ("SELECTOR", "<none>"),
            ]),
        ),
        (
            &["cj", "-n", "default"],
            pairs(&[
                ("DELTA", "Replaced"),
                ("NAME", "tick"),
                ("SCHEDULE", "*/5 * * * *"),
                ("TIMEZONE", "<none>"),
                ("SUSPEND", "True"),
                ("ACTIVE", "0"),
                ("LAST SCHEDULE", "<none>"),
            ]),
        ),
        (
            &["ing", "-n", "default"],
            pairs(&[
                ("DELTA", "Replaced"),
                ("NAME", "web"),
                ("CLASS", "nginx"),
                ("HOSTS", "a.example,b.example"),
                ("ADDRESS", ""),
                ("PORTS", "80, 443"),
            ]),
        ),
        (
            &["endpointslices", "-n", "default"],
            pairs(&[
                ("DELTA", "Replaced"),
                ("NAME", "web-x1"),
                ("ADDRESSTYPE", "IPv4"),
                ("PORTS", "80,metrics"),
                ("ENDPOINTS", "10.0.0.1,10.0.0.2"),
            ]),
        ),
        (
            &["sts", "-n", "default", "-o", "wide"],
            pairs(&[
                ("DELTA", "Replaced"),
                ("NAME", "db"),
                ("READY", "0/2"),
                ("CONTAINERS", "db"),
                ("IMAGES", "postgres"),
            ]),
        ),
        (
            &["ds", "-n", "default"],
            pairs(&[
                ("DELTA", "Replaced"),
                ("NAME", "agent"),
                ("DESIRED", "0"),
                ("CURRENT", "0"),
                ("READY", "0"),
                ("UP-TO-DATE", "0"),
                ("AVAILABLE", "0"),
                ("NODE SELECTOR", "os=linux"),
            ]),
        ),
        (
            &["events.events.k8s.io", "-n", "default", "-o", "wide"],
            pairs(&[
                ("DELTA", "Replaced"),
                ("NAME", "web.1"),
                ("TYPE", "Normal"),
                ("REASON", "Scheduled"),
                ("OBJECT", "pod/web"),
                ("SUBOBJECT", ""),
                ("SOURCE", "default-scheduler, sched-1"),
                ("MESSAGE", "assigned to node-a"),
                ("COUNT", "1"),
                ("NAME", "web.1"),
            ]),
        ),
        // A CRD column with no value is empty, as kubectl prints it.
        (
            &["widgets", "bare", "-n", "default"],
            pairs(&[
                ("DELTA", "Replaced"),
                ("NAME", "bare"),
                ("SIZE", "2"),
                ("PHASE", ""),
            ]),
        ),
    ];
    for (args, want) in cases {
        let got: Vec<(String, String)> = table(&sim, args)
            .into_iter()
            .filter(|(h, _)| h != "LAST SEEN" && h != "FIRST SEEN")
            .collect();
        assert_eq!(got, want, "{args:?}");
    }

    // The same cells as kubectl shows from the simulator's server-side Table (written
    // apart from kwatch's printers), clock-dependent columns left out.
    for res in [
        "jobs",
        "cronjobs",
        "ingresses",
        "endpointslices",
        "statefulsets",
        "daemonsets",
    ] {
        let k = sim.kubectl_ok(&["get", res, "-n", "default"]);
        let lines: Vec<&str> = k.lines().collect();
        let clock = |h: &str| matches!(h, "AGE" | "DURATION" | "LAST SCHEDULE");
        let theirs: Row = columns(lines[0], lines[1])
            .into_iter()
            .filter(|(h, _)| !clock(h))
            .collect();
        let ours: Row = table(&sim, &[res, "-n", "default"])
            .into_iter()
            .filter(|(h, _)| h != "DELTA" && !clock(h))
            .collect();
        assert_eq!(ours, theirs, "{res}: kubectl printed {k}");
    }

    // Pods -o wide: kubectl's NOMINATED NODE and READINESS GATES.
    let out = sim.kwatch("pods -n default -o wide --until-synced");
    let header = out
        .stdout
        .iter()
        .find(|l| l.starts_with("DELTA"))
        .unwrap_or_else(|| panic!("{out:?}"));
    assert!(
        header.ends_with("IP             NODE         NOMINATED NODE   READINESS GATES")
            || header.contains("NOMINATED NODE   READINESS GATES"),
        "{header}"
    );
}
