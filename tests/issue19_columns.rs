//! Issue 19, items 7 and 11 (the table): kubectl's columns for the kinds that had NAME
//! and AGE only, a CRD column over a map or a list, and the table's layout (blocks per
//! resource in `all`'s order, no NAMESPACE for cluster-scoped resources, a progress line
//! that fits the terminal). Each compares kwatch with `kubectl get` against the same sim.

use std::time::Duration;

use serde_json::{json, Value};

use crate::util::kwatch::{is_delta, kubectl_f, Running};
use crate::util::SimProcess;

/// The cells of `line` cut at the columns' starts in `header` (a column starts after a
/// run of 2+ spaces), trimmed: empty cells stay in place.
fn cut(header: &str, line: &str) -> Vec<String> {
    let mut starts = vec![0];
    let b = header.as_bytes();
    for i in 2..b.len() {
        if b[i] != b' ' && b[i - 1] == b' ' && b[i - 2] == b' ' {
            starts.push(i);
        }
    }
    let chars: Vec<char> = line.chars().collect();
    starts
        .iter()
        .enumerate()
        .map(|(k, &s)| {
            let end = starts
                .get(k + 1)
                .copied()
                .unwrap_or(chars.len())
                .min(chars.len());
            chars[s.min(chars.len())..end]
                .iter()
                .collect::<String>()
                .trim()
                .to_owned()
        })
        .collect()
}

/// A table as (header cells, rows of cells), rows keyed by NAME.
struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    fn parse(lines: &[&str]) -> Table {
        assert!(!lines.is_empty(), "an empty table");
        let header = cut(lines[0], lines[0]);
        let rows = lines[1..].iter().map(|l| cut(lines[0], l)).collect();
        Table { header, rows }
    }

    fn col(&self, name: &str) -> usize {
        self.header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name} in {:?}", self.header))
    }

    fn row(&self, name: &str) -> &Vec<String> {
        let n = self.col("NAME");
        self.rows
            .iter()
            .find(|r| r[n] == name)
            .unwrap_or_else(|| panic!("no row {name} in {:?}", self.rows))
    }
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

fn create(sim: &SimProcess, manifests: &[Value]) {
    for m in manifests {
        kubectl_f(sim, "create", m);
    }
}

fn meta(name: &str) -> Value {
    json!({"name": name, "namespace": "default"})
}

/// Item 7: HPA (`all`'s!), PDB, PVC, ServiceAccount, RoleBinding, ClusterRoleBinding,
/// Role, ClusterRole, CRD, Lease, APIService and Endpoints get kubectl's columns, `-o
/// wide` too where it adds some; their JSON lines are the objects the server lists.
#[test]
fn every_kind_issue_19_names_gets_kubectls_columns() {
    let sim = SimProcess::start(&["--objects", "0"]);
    create(
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

/// Item 7: a CRD `string` column over a map or a list prints compact JSON, as kubectl 1.32.
#[test]
fn a_crd_column_over_a_map_or_a_list_prints_json() {
    let sim = SimProcess::start(&["--objects", "0"]);
    let cols = json!([
        {"op": "add", "path": "/spec/versions/0/additionalPrinterColumns/-",
            "value": {"name": "Meta", "type": "string", "jsonPath": ".spec.meta"}},
        {"op": "add", "path": "/spec/versions/0/additionalPrinterColumns/-",
            "value": {"name": "Tags", "type": "string", "jsonPath": ".spec.tags"}},
    ]);
    sim.kubectl_ok(&[
        "patch",
        "crd",
        "widgets.example.com",
        "--type",
        "json",
        "-p",
        &cols.to_string(),
    ]);
    create(
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

/// Item 11: `kwatch all` prints its initial lists in `kubectl get all`'s order of kinds,
/// whatever order they synced in (pods, listed a page at a time, sync last).
#[test]
fn all_prints_its_blocks_in_kubectls_order() {
    let sim = SimProcess::start(&["--objects", "40"]);
    let theirs = sim.kubectl_ok(&["get", "all", "-n", "default", "--no-headers"]);
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

/// Item 11: a header block per resource even when the header reads the same
/// (`all --metadata-only`: every block is NAME and AGE), after a blank line.
#[test]
fn each_resource_gets_its_header_block() {
    let sim = SimProcess::start(&["--objects", "8"]);
    let out = sim
        .kwatch("all -n default --until-synced --metadata-only")
        .exits(0);
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

/// Item 11: at 80 columns the loading line is cut to 79 characters, so it never wraps.
#[test]
fn the_progress_line_fits_an_80_column_terminal() {
    if !std::path::Path::new("/usr/bin/script").exists() {
        eprintln!("skipped: no script(1) to give kwatch a terminal");
        return;
    }
    let sim = SimProcess::start(&["--objects", "3000"]);
    let out_file = sim.dir().join("out.jsonl");
    let cmd = format!(
        "stty cols 80 rows 24; {} --kubeconfig {} pods,configmaps,deployments,replicasets,services -A \
         --page-size 10 --until-synced -o json > {}",
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
    let shown: Vec<&str> = tty
        .split("\r\x1b[K")
        .filter(|s| s.starts_with("loading:"))
        .collect();
    assert!(!shown.is_empty(), "{tty:?}");
    for s in &shown {
        assert!(
            s.chars().count() < 80,
            "{} characters: {s:?}",
            s.chars().count()
        );
    }
    assert!(shown.iter().any(|s| s.ends_with('…')), "{shown:?}");
}

/// Item 7 (the simulator): Tables as kube-apiserver 1.32 serves them (response.go
/// `asTable`, watch.go's embedded encoder): `includeObject` picks a row's object (a
/// 400 for an unknown value); a watch's first event carries the column definitions, the
/// next ones `null`; a bookmark is a one-row Table too.
#[test]
fn the_sim_serves_tables_for_lists_and_watches_as_kube_apiserver() {
    let sim = SimProcess::start(&["--objects", "3"]);
    const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
    let auth = || ("authorization".to_string(), format!("Bearer {}", sim.token));
    let list = |query: &str| {
        sim.request_with(
            "GET",
            &format!("/api/v1/namespaces/default/pods{query}"),
            &[auth(), ("accept".into(), TABLE.into())],
            "",
        )
    };
    let object = list("?includeObject=Object").json();
    assert_eq!(object["kind"], "Table");
    let row = &object["rows"][0]["object"];
    assert_eq!(row["kind"], "Pod", "{row}");
    assert!(row["spec"].is_object(), "the whole object: {row}");
    let metadata = list("").json();
    assert_eq!(
        metadata["rows"][0]["object"]["kind"],
        "PartialObjectMetadata"
    );
    assert!(metadata["rows"][0]["object"].get("spec").is_none());
    let none = list("?includeObject=None").json();
    assert!(none["rows"][0]["object"].is_null(), "{none}");
    assert!(!none["rows"][0]["cells"].as_array().unwrap().is_empty());
    let bad = list("?includeObject=Everything");
    assert_eq!(bad.status, 400, "{}", bad.body);
    assert_eq!(
        bad.json()["message"],
        "Unable to convert to Table as requested: includeObject: Invalid value: \"Everything\": \
         must be 'Metadata', 'Object', 'None', or empty"
    );

    let mut w = sim.watch_with(
        "/api/v1/namespaces/default/configmaps?watch=true&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&includeObject=Object",
        &[("accept", TABLE)],
    );
    assert_eq!(w.status, 200);
    let mut events = Vec::new();
    loop {
        let e = w.event(Duration::from_secs(5));
        let done = e["type"] == "BOOKMARK";
        events.push(e);
        if done {
            break;
        }
    }
    assert!(events.len() >= 2, "{events:?}");
    assert!(
        events[0]["object"]["columnDefinitions"].is_array(),
        "{}",
        events[0]
    );
    assert_eq!(
        events[0]["object"]["rows"][0]["object"]["kind"],
        "ConfigMap"
    );
    for e in &events[1..] {
        assert_eq!(e["object"]["kind"], "Table", "{e}");
        assert!(e["object"]["columnDefinitions"].is_null(), "{e}");
        assert_eq!(e["object"]["rows"].as_array().map(Vec::len), Some(1), "{e}");
    }
    let bookmark = &events[events.len() - 1]["object"];
    assert_eq!(
        bookmark["rows"][0]["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true",
        "{bookmark}"
    );

    // kubectl's own Table watch against the simulator shows a change as a row.
    let mut kw = sim
        .kubectl_cmd(&[
            "get",
            "configmaps",
            "-n",
            "default",
            "-w",
            "--output-watch-events",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("kubectl");
    std::thread::sleep(Duration::from_millis(1500));
    kubectl_f(
        &sim,
        "create",
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta("seen"), "data": {"a": "1"}}),
    );
    std::thread::sleep(Duration::from_millis(1500));
    let _ = kw.kill();
    let out = kw.wait_with_output().expect("kubectl's output");
    let text = String::from_utf8_lossy(&out.stdout);
    let added: Vec<&str> = text.lines().filter(|l| l.contains(" seen ")).collect();
    assert_eq!(added.len(), 1, "{text}");
    assert!(added[0].starts_with("ADDED"), "{text}");
    assert!(text.starts_with("EVENT"), "one header: {text}");
    assert_eq!(text.matches("EVENT").count(), 1, "{text}");
}
