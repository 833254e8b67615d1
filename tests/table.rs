//! The table for people, as `kubectl get` prints it: kubectl's columns per kind (and a CRD's
//! printer columns), `-L`/`--show-labels`/`--timestamps`/`--no-headers`, `-o wide`, the
//! initial list aligned, a header block per resource in `all`'s order, cells that agree
//! with `kubectl get`.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use crate::util::kwatch::{is_delta, kubectl_f, on_new_sim};
use crate::util::shared::*;
use crate::util::SimProcess;

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
    let rows = rows(&out.stdout);
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

/// `kubectl get ARGS` and `kwatch ARGS --until-synced` agree: kwatch's header after
/// NAME and RESOURCEVERSION is kubectl's after NAME, and every row's cells but AGE are
/// kubectl's. Returns kwatch's table.
fn agree(sim: &SimProcess, args: &[&str]) -> Table {
    let mut kargs = vec!["get"];
    kargs.extend(args);
    let theirs = sim.kubectl_ok(&kargs);
    let theirs: Vec<&str> = theirs.lines().collect();
    let theirs = Table::parse(&theirs);
    let mut wargs = args.to_vec();
    wargs.push("--until-synced");
    let out = sim.kwatch(&wargs[..]).exits(0);
    let lines: Vec<&str> = out.stdout.iter().map(String::as_str).collect();
    assert!(!lines.is_empty(), "{args:?}: no output");
    let ours = Table::parse(&lines);
    let skip = ours.col("RESOURCEVERSION") + 1;
    let their_name = theirs.col("NAME");
    assert_eq!(
        ours.header[skip..],
        theirs.header[their_name + 1..],
        "{args:?}: the columns after NAME"
    );
    assert_eq!(
        ours.rows.len(),
        theirs.rows.len(),
        "{args:?}: {:?}",
        out.stdout
    );
    for t in &theirs.rows {
        let name = &t[their_name];
        let o = ours.row(name);
        for (i, h) in theirs.header.iter().enumerate().skip(their_name + 1) {
            if h != "AGE" {
                let j = skip + (i - their_name - 1);
                assert_eq!(o[j], t[i], "{args:?} {h} of {name}");
            }
        }
    }
    ours
}

#[test]
fn table_has_kubectls_columns_per_resource_after_type_and_resource_version() {
    let sim = SimProcess::start(&["--objects", "4"]);
    // (arguments, the columns after DELTA, NAME and RESOURCEVERSION, split on ", ").
    let cases: &[(&str, &str)] = &[
        ("pods", "READY, STATUS, RESTARTS, AGE"),
        (
            "pods -o wide",
            "READY, STATUS, RESTARTS, AGE, IP, NODE, NOMINATED NODE, READINESS GATES",
        ),
        ("deploy", "READY, UP-TO-DATE, AVAILABLE, AGE"),
        ("rs", "DESIRED, CURRENT, READY, AGE"),
        ("svc", "TYPE, CLUSTER-IP, EXTERNAL-IP, PORT(S), AGE"),
        ("nodes", "STATUS, ROLES, AGE, VERSION"),
        ("ns", "STATUS, AGE"),
        ("cm", "DATA, AGE"),
        ("secrets", "TYPE, DATA, AGE"),
        ("events", "LAST SEEN, TYPE, REASON, OBJECT, MESSAGE"),
        // The widgets CRD's additionalPrinterColumns: Size, Phase, Age.
        ("widgets", "SIZE, PHASE, AGE"),
        // A kind without a printer: kube-apiserver's default table, CREATED AT.
        ("crd", "CREATED AT"),
    ];
    for &(args, columns) in cases {
        let mut header = vec!["DELTA", "NAME", "RESOURCEVERSION"];
        header.extend(columns.split(", "));
        let out = sim
            .kwatch(format!("{args} -n default --until-synced --watch-list off"))
            .exits(0);
        let table = rows(&out.stdout);
        assert_eq!(cells(table[0]), header, "{args:?}: {:#?}", out.stdout);
        // Every row has a cell per column and the header comes once. A CRD column without
        // a value is an empty cell, as kubectl prints it: such a row has as many
        // non-empty cells as kubectl's row for the object, plus DELTA and RESOURCEVERSION.
        let kubectl =
            (args == "widgets").then(|| sim.kubectl_ok("get widgets -n default --no-headers"));
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
    let (sim, out) = on_new_sim(
        &["--objects", "3"],
        "configmaps -n default --until-synced -L app --show-labels --timestamps",
    );
    let table = rows(&out.stdout);
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
        let table = rows(&out.stdout);
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

#[test]
fn nodes_wide_snapshot() {
    let (_sim, out) = on_new_sim(
        &["--objects", "1"],
        "nodes -o wide --until-synced --watch-list off",
    );
    // Redact what changes between runs: ages, resourceVersions and list timings. The
    // `~` lines are on stderr: they follow the table in the snapshot.
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

/// kubectl 1.32's columns for kinds that once got NAME/AGE only, events of
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
    sim.kubectl_ok("get jobs,cronjobs,ingresses,endpointslices,statefulsets,daemonsets,events.events.k8s.io -n default");

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
        let k = sim.kubectl_ok(format!("get {res} -n default"));
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

    // Pods -o wide: kubectl's wide columns (NOMINATED NODE and READINESS GATES last), and
    // kubectl's cells in them.
    let wide = agree(&sim, &["pods", "-n", "default", "-o", "wide"]);
    assert_eq!(
        wide.header,
        [
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
            "READINESS GATES"
        ]
    );
}

#[test]
fn table_output_for_people() {
    let (_sim, out) = on_new_sim(
        &["--objects", "4"],
        "pods -n default --until-synced --watch-list off",
    );
    // The table on stdout, the `~` lines on stderr (stdout carries data only).
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

/// HPA (`all`'s!), PDB, PVC, ServiceAccount, RoleBinding, ClusterRoleBinding,
/// Role, ClusterRole, CRD, Lease, APIService and Endpoints get kubectl's columns, `-o
/// wide` too where it adds some; their JSON lines are the objects the server lists.
#[test]
fn every_kind_with_a_printer_gets_kubectls_columns() {
    let sim = SimProcess::start(&["--objects", "0"]);
    create_all(
        &sim,
        &[
            json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": meta("web"),
                "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                    "minReplicas": 2, "maxReplicas": 10, "metrics": [
                        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}},
                        {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "500Mi"}}},
                        {"type": "Pods", "pods": {"metric": {"name": "packets"}, "target": {"type": "AverageValue", "averageValue": "1k"}}}]},
                "status": {"currentReplicas": 3, "desiredReplicas": 3, "currentMetrics": [
                    {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 45, "averageValue": "90m"}}}]}}),
            json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": meta("bare"),
                "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db"}, "maxReplicas": 4}}),
            json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": meta("web"),
                "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}},
                "status": {"disruptionsAllowed": 1, "currentHealthy": 3, "desiredHealthy": 2, "expectedPods": 3}}),
            json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": meta("pct"),
                "spec": {"maxUnavailable": "25%", "selector": {"matchLabels": {"app": "db"}}}}),
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta("bound"),
                "spec": {"volumeName": "pv-1", "storageClassName": "fast", "volumeMode": "Filesystem",
                    "accessModes": ["ReadWriteMany", "ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
                "status": {"phase": "Bound", "capacity": {"storage": "2Gi"}, "accessModes": ["ReadWriteMany", "ReadWriteOnce"]}}),
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": "pending", "namespace": "default", "annotations": {"volume.beta.kubernetes.io/storage-class": "slow"}},
                "spec": {"storageClassName": "fast", "volumeAttributesClassName": "gold", "accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": "1Gi"}}},
                "status": {"phase": "Pending"}}),
            json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta("builder"),
                "secrets": [{"name": "a"}, {"name": "b"}]}),
            json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta("plain")}),
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": meta("reader"),
                "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}),
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": meta("read"),
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
                "subjects": [{"kind": "User", "name": "alice"}, {"kind": "Group", "name": "devs"},
                    {"kind": "ServiceAccount", "name": "builder", "namespace": "default"}, {"kind": "User", "name": "bob"}]}),
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "viewer"},
                "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}]}),
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "view-all"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "viewer"},
                "subjects": [{"kind": "Group", "name": "system:authenticated"}]}),
            json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta("leader"),
                "spec": {"holderIdentity": "node-1_5f3c", "leaseDurationSeconds": 15}}),
            json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta("free"), "spec": {}}),
            json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": "v1beta1.metrics.k8s.io"},
                "spec": {"service": {"namespace": "kube-system", "name": "metrics-server"}, "group": "metrics.k8s.io",
                    "version": "v1beta1", "groupPriorityMinimum": 100, "versionPriority": 100},
                "status": {"conditions": [{"type": "Available", "status": "False", "reason": "MissingEndpoints",
                    "lastTransitionTime": "2026-11-21T10:00:00Z"}]}}),
            json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": "v1.apps"},
                "spec": {"group": "apps", "version": "v1", "groupPriorityMinimum": 17800, "versionPriority": 15},
                "status": {"conditions": [{"type": "Available", "status": "True", "reason": "Local",
                    "lastTransitionTime": "2026-11-21T10:00:00Z"}]}}),
            json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": meta("web"),
                "subsets": [{"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}],
                    "ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}]}]}),
            json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": meta("dns6"),
                "subsets": [{"addresses": [{"ip": "fd00::a"}], "ports": [{"name": "dns", "port": 53}]}]}),
            json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": meta("empty")}),
        ],
    );
    let ns = ["-n", "default"];
    let cases: &[&[&str]] = &[
        &["hpa"],
        &["pdb"],
        &["pvc"],
        &["pvc", "-o", "wide"],
        &["sa"],
        &["roles"],
        &["rolebindings"],
        &["rolebindings", "-o", "wide"],
        &["clusterroles"],
        &["clusterrolebindings", "-o", "wide"],
        &["crd"],
        &["leases"],
        &["apiservices"],
        &["endpoints"],
    ];
    for case in cases {
        let mut args = case.to_vec();
        args.extend(ns);
        agree(&sim, &args);
    }
    // The cells that matter, spelled out once (kubectl agreed with them above).
    let hpa = agree(&sim, &["hpa", "-n", "default"]);
    assert_eq!(
        hpa.row("web")[hpa.col("TARGETS")],
        "cpu: 45%/80%, memory: <unknown>/500Mi + 1 more..."
    );
    assert_eq!(hpa.row("bare")[hpa.col("MINPODS")], "<unset>");
    let ep = agree(&sim, &["endpoints", "-n", "default"]);
    assert_eq!(
        ep.row("web")[ep.col("ENDPOINTS")],
        "10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 1 more..."
    );
    assert_eq!(ep.row("dns6")[ep.col("ENDPOINTS")], "[fd00::a]:53");
    let rb = agree(&sim, &["rolebindings", "-n", "default", "-o", "wide"]);
    assert_eq!(rb.row("read")[rb.col("USERS")], "alice, bob");
    assert_eq!(rb.row("read")[rb.col("SERVICEACCOUNTS")], "default/builder");
    let api = agree(&sim, &["apiservices"]);
    assert_eq!(
        api.row("v1beta1.metrics.k8s.io")[api.col("AVAILABLE")],
        "False (MissingEndpoints)"
    );
    // -A: a cluster-scoped resource has no NAMESPACE column, as kubectl prints it.
    let cr = agree(&sim, &["clusterroles", "-A"]);
    assert!(
        !cr.header.contains(&"NAMESPACE".to_owned()),
        "{:?}",
        cr.header
    );
    let sa = agree(&sim, &["sa", "-A"]);
    assert!(
        sa.header.contains(&"NAMESPACE".to_owned()),
        "{:?}",
        sa.header
    );
    // The JSON lines carry the objects the server lists, unchanged by the printers.
    for (kind, ns_args) in [("hpa", &ns[..]), ("pvc", &ns[..]), ("apiservices", &[][..])] {
        let mut args = vec![kind, "-o", "json", "--until-synced"];
        args.extend(ns_args);
        let out = sim.kwatch(&args[..]).exits(0);
        let mut kargs = vec!["get", kind, "-o", "json"];
        kargs.extend(ns_args);
        let list: Value = serde_json::from_str(&sim.kubectl_ok(&kargs)).unwrap();
        let records = out.json();
        let objects: Vec<&Value> = records
            .iter()
            .filter(|r| is_delta(r))
            .map(|r| &r["object"])
            .collect();
        let items = list["items"].as_array().unwrap();
        assert!(!items.is_empty());
        assert_eq!(objects.len(), items.len(), "{kind}: {records:?}");
        for item in items {
            let name = &item["metadata"]["name"];
            let ours = objects
                .iter()
                .find(|o| o["metadata"]["name"] == *name)
                .unwrap_or_else(|| panic!("{kind}: no record of {name}"));
            assert_eq!(
                ours["metadata"]["resourceVersion"],
                item["metadata"]["resourceVersion"]
            );
            assert_eq!(ours["spec"], item["spec"], "{kind} {name}");
            assert_eq!(ours["status"], item["status"], "{kind} {name}");
        }
    }
}

/// A CRD `string` column over a map or a list prints compact JSON, as kubectl 1.32.
#[test]
fn a_crd_column_over_a_map_or_a_list_prints_json() {
    let sim = SimProcess::start(&["--objects", "0"]);
    let cols = json!([
        {"op": "add", "path": "/spec/versions/0/additionalPrinterColumns/-",
            "value": {"name": "Meta", "type": "string", "jsonPath": ".spec.meta"}},
        {"op": "add", "path": "/spec/versions/0/additionalPrinterColumns/-",
            "value": {"name": "Tags", "type": "string", "jsonPath": ".spec.tags"}},
    ]);
    sim.kubectl_ok([
        "patch",
        "crd",
        "widgets.example.com",
        "--type",
        "json",
        "-p",
        &cols.to_string(),
    ]);
    create_all(
        &sim,
        &[
            json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": meta("wmap"),
            "spec": {"size": 3, "meta": {"b": "x", "a": 1}, "tags": ["x", true]}}),
        ],
    );
    let out = sim.kwatch("widgets -n default --until-synced").exits(0);
    let lines: Vec<&str> = out.stdout.iter().map(String::as_str).collect();
    assert!(!lines.is_empty());
    let t = Table::parse(&lines);
    let row = t.row("wmap");
    assert_eq!(row[t.col("META")], r#"{"a":1,"b":"x"}"#);
    assert_eq!(row[t.col("TAGS")], r#"["x",true]"#);
}

/// `kwatch all` prints its initial lists in `kubectl get all`'s order of kinds,
/// whatever order they synced in (pods, listed a page at a time, sync last).
#[test]
fn all_prints_its_blocks_in_kubectls_order() {
    let sim = SimProcess::start(&["--objects", "40"]);
    let theirs = sim.kubectl_ok("get all -n default --no-headers");
    let mut their_kinds: Vec<String> = Vec::new();
    for l in theirs.lines().filter(|l| !l.trim().is_empty()) {
        let kind = l.split('/').next().unwrap_or_default();
        let kind = kind.split('.').next().unwrap_or_default().to_owned();
        if their_kinds.last() != Some(&kind) {
            their_kinds.push(kind);
        }
    }
    assert!(their_kinds.len() >= 3, "{theirs}");
    let out = sim
        .kwatch("all -n default --until-synced --no-headers --page-size 1")
        .exits(0);
    assert!(!out.stdout.is_empty());
    let mut our_kinds: Vec<String> = Vec::new();
    for l in out.stdout.iter().filter(|l| !l.trim().is_empty()) {
        let kind = l
            .split_whitespace()
            .nth(1)
            .unwrap_or_default()
            .to_lowercase();
        if our_kinds.last() != Some(&kind) {
            our_kinds.push(kind);
        }
    }
    assert_eq!(our_kinds, their_kinds, "{:?}", out.stdout);
}

/// A header block per resource even when the header reads the same
/// (`all --metadata-only`: every block is NAME and AGE), after a blank line.
#[test]
fn each_resource_gets_its_header_block() {
    let (_sim, out) = on_new_sim(
        &["--objects", "8"],
        "all -n default --until-synced --metadata-only",
    );
    assert!(!out.stdout.is_empty());
    let mut kinds = Vec::new();
    let mut headers = 0;
    for (i, l) in out.stdout.iter().enumerate() {
        if l.starts_with("DELTA") {
            headers += 1;
            assert!(i == 0 || out.stdout[i - 1].is_empty(), "{:?}", out.stdout);
        } else if !l.is_empty() {
            let kind = l.split_whitespace().nth(1).unwrap_or_default().to_owned();
            if kinds.last() != Some(&kind) {
                assert!(
                    out.stdout[i - 1].starts_with("DELTA"),
                    "a new kind without its header: {:?}",
                    out.stdout
                );
                kinds.push(kind);
            }
        }
    }
    assert!(kinds.len() >= 2, "{:?}", out.stdout);
    assert_eq!(headers, kinds.len(), "{:?}", out.stdout);
}
