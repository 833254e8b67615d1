//! `kwatch all` and `--every-resource`: the resources discovery puts in the
//! category `all` (as `kubectl get all` picks them) or every resource that can be listed
//! and watched, in one stream; a resource the server refuses is reported once and left
//! out while the others go on.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use crate::util::kwatch::{kubectl_f, of_type, on_new_sim, Running};
use crate::util::shared::stderr_with;
use crate::util::{SimProcess, LIMIT};

/// What `kubectl get all` lists on the simulator (every resource of its discovery that
/// carries the category `all`), in discovery order.
const ALL: [&str; 9] = [
    "pods",
    "services",
    "daemonsets.apps",
    "deployments.apps",
    "replicasets.apps",
    "statefulsets.apps",
    "horizontalpodautoscalers.autoscaling",
    "cronjobs.batch",
    "jobs.batch",
];

/// The simulator's namespaced resources that allow list and watch, events aside.
const EVERY_NAMESPACED: [&str; 23] = [
    "configmaps",
    "endpoints",
    "persistentvolumeclaims",
    "pods",
    "resourcequotas",
    "secrets",
    "serviceaccounts",
    "services",
    "horizontalpodautoscalers.autoscaling",
    "poddisruptionbudgets.policy",
    "rolebindings.rbac.authorization.k8s.io",
    "roles.rbac.authorization.k8s.io",
    "leases.coordination.k8s.io",
    "daemonsets.apps",
    "deployments.apps",
    "replicasets.apps",
    "statefulsets.apps",
    "cronjobs.batch",
    "jobs.batch",
    "ingresses.networking.k8s.io",
    "networkpolicies.networking.k8s.io",
    "endpointslices.discovery.k8s.io",
    "widgets.example.com",
];

const VIEWER: &str = "system:serviceaccount:default:viewer";
const NOBODY: &str = "system:serviceaccount:default:nobody";

fn set<'a>(names: impl IntoIterator<Item = &'a str>) -> BTreeSet<String> {
    names.into_iter().map(str::to_owned).collect()
}

/// The resources of the records of type `t`.
fn resources_of(records: &[Value], t: &str) -> BTreeSet<String> {
    of_type(records, t)
        .iter()
        .map(|r| r["resource"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Waits until `pred` holds for the table's stdout lines and stderr.
fn wait_table(kw: &Running, what: &str, pred: impl Fn(&[String], &str) -> bool) {
    crate::util::eventually(LIMIT, what, || {
        let (lines, stderr) = (kw.lines(), kw.stderr());
        if pred(&lines, &stderr) {
            Ok(())
        } else {
            Err((lines, stderr))
        }
    });
}

/// A table's delta rows as (DELTA, KIND, NAME), checking that every header over them
/// has the KIND column after DELTA.
fn table_rows(lines: &[String]) -> Vec<(String, String, String)> {
    let mut rows = Vec::new();
    for l in lines {
        let cells: Vec<&str> = l.split_whitespace().collect();
        if cells.is_empty() {
            // The blank line before another resource's header block.
            continue;
        }
        if cells.first() == Some(&"DELTA") {
            assert_eq!(
                cells[..4],
                ["DELTA", "KIND", "NAME", "RESOURCEVERSION"],
                "{l}"
            );
        } else {
            rows.push((cells[0].into(), cells[1].into(), cells[2].into()));
        }
    }
    rows
}

#[test]
fn kwatch_all_shows_pods_deployments_and_services_changing_in_one_stream() {
    let sim = SimProcess::start(&[]);
    let ns = ["-n", "default", "--watch-only"];
    let mut json_kw = sim.start_kwatch(&[&["all", "-o", "json"][..], &ns[..]].concat()[..]);
    let table_kw = sim.start_kwatch(&[&["all"][..], &ns[..]].concat()[..]);
    let synced = json_kw.wait_for(LIMIT, "every resource synced", |v| {
        of_type(v, "Synced").len() == ALL.len()
    });
    assert_eq!(resources_of(&synced, "Synced"), set(ALL));
    wait_table(&table_kw, "every resource synced", |_, err| {
        err.matches("~ synced ").count() == ALL.len()
    });

    let meta = |name: &str| json!({"name": name, "namespace": "default", "labels": {"app": name}});
    let spec = json!({"containers": [{"name": "c", "image": "nginx"}]});
    kubectl_f(
        &sim,
        "create",
        &json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta("demo-pod"), "spec": spec}),
    );
    kubectl_f(
        &sim,
        "create",
        &json!({"apiVersion": "v1", "kind": "Service", "metadata": meta("demo-svc"),
                "spec": {"selector": {"app": "demo-pod"}, "ports": [{"port": 80}]}}),
    );
    kubectl_f(
        &sim,
        "create",
        &json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta("demo-web"),
                "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "demo-web"}},
                         "template": {"metadata": {"labels": {"app": "demo-web"}}, "spec": spec}}}),
    );
    for (kind, name) in [
        ("service", "demo-svc"),
        ("deployment", "demo-web"),
        ("pod", "demo-pod"),
    ] {
        sim.kubectl_ok(format!("delete {kind} {name} -n default"));
    }

    // JSON: each delta names its resource; the three kinds in one stream.
    let want = [
        ("Added", "pods", "Pod", "demo-pod"),
        ("Added", "services", "Service", "demo-svc"),
        ("Added", "deployments.apps", "Deployment", "demo-web"),
        ("Deleted", "services", "Service", "demo-svc"),
        ("Deleted", "deployments.apps", "Deployment", "demo-web"),
        ("Deleted", "pods", "Pod", "demo-pod"),
    ];
    let brief = |r: &Value| {
        (
            r["type"].as_str().unwrap_or_default().to_owned(),
            r["resource"].as_str().unwrap_or_default().to_owned(),
            r["kind"].as_str().unwrap_or_default().to_owned(),
            r["name"].as_str().unwrap_or_default().to_owned(),
        )
    };
    let want_set: BTreeSet<(String, String, String, String)> = want
        .iter()
        .map(|(t, r, k, n)| ((*t).into(), (*r).into(), (*k).into(), (*n).into()))
        .collect();
    let got = json_kw.wait_for(LIMIT, "the three kinds added and deleted", |v| {
        let seen: BTreeSet<_> = v
            .iter()
            .filter(|r| r.get("key").is_some())
            .map(brief)
            .collect();
        want_set.is_subset(&seen)
    });
    // Exactly those, each once, in order per object; a pod's delete is first a MODIFIED
    // that sets deletionTimestamp (grace period 0, as a pod without a kubelet), so the
    // pod has an Updated between its Added and its Deleted.
    let deltas: Vec<&Value> = got.iter().filter(|r| r.get("key").is_some()).collect();
    for r in &deltas {
        assert_eq!(r["namespace"], "default", "{r}");
    }
    let seen: Vec<_> = deltas.iter().map(|r| brief(r)).collect();
    let mut sorted = seen.clone();
    sorted.sort();
    let mut expected: Vec<_> = want_set.iter().cloned().collect();
    expected.push((
        "Updated".into(),
        "pods".into(),
        "Pod".into(),
        "demo-pod".into(),
    ));
    expected.sort();
    assert_eq!(sorted, expected, "{deltas:#?}");
    for (name, types) in [
        ("demo-pod", &["Added", "Updated", "Deleted"][..]),
        ("demo-svc", &["Added", "Deleted"]),
        ("demo-web", &["Added", "Deleted"]),
    ] {
        let mine: Vec<&&Value> = deltas.iter().filter(|r| r["name"] == name).collect();
        let got: Vec<&str> = mine
            .iter()
            .map(|r| r["type"].as_str().unwrap_or_default())
            .collect();
        assert_eq!(got, types, "{name}: {deltas:#?}");
    }
    let terminating = deltas
        .iter()
        .find(|r| r["type"] == "Updated")
        .map(|r| &r["object"]["metadata"]);
    assert!(
        terminating.is_some_and(
            |m| m["deletionTimestamp"].is_string() && m["deletionGracePeriodSeconds"] == 0
        ),
        "{terminating:?}"
    );

    // The table: one header layout per kind, each with the KIND column.
    wait_table(
        &table_kw,
        "the three kinds added and deleted",
        |lines, _| {
            let rows = table_rows(lines);
            want.iter()
                .all(|(t, _, k, n)| rows.contains(&((*t).into(), (*k).into(), (*n).into())))
        },
    );
    let rows = table_rows(&table_kw.lines());
    let kinds: BTreeSet<&str> = rows.iter().map(|(_, k, _)| k.as_str()).collect();
    assert_eq!(kinds, BTreeSet::from(["Deployment", "Pod", "Service"]));
    assert!(
        table_kw.stderr().lines().all(|l| l.starts_with("~ ")),
        "{}",
        table_kw.stderr()
    );
    let out = json_kw.interrupt(LIMIT);
    assert_eq!(out.code(), Some(130), "{}", out.stderr);
    let out = table_kw.interrupt(LIMIT);
    assert_eq!(out.code(), Some(130), "{}", out.stderr);
}

#[test]
fn every_resource_covers_configmaps_and_leaves_out_events() {
    let (sim, out) = on_new_sim(&[], "--every-resource -n default -o json --until-synced");
    let records = out.json();
    // One namespace: its namespaced resources only, events left out.
    assert_eq!(resources_of(&records, "Synced"), set(EVERY_NAMESPACED));
    assert_eq!(resources_of(&records, "List"), set(EVERY_NAMESPACED));
    let configmaps: Vec<&Value> = records
        .iter()
        .filter(|r| r["type"] == "Replaced" && r["resource"] == "configmaps")
        .collect();
    assert!(
        configmaps.iter().any(|r| r["key"] == "default/app-config"),
        "{configmaps:?}"
    );
    assert!(
        records.iter().all(|r| r["kind"] != "Event"),
        "no event: {records:?}"
    );

    // Named, events come back — once, from the core group — and -A adds the
    // cluster-scoped resources.
    let out = sim
        .kwatch("--every-resource events -A -o json --until-synced")
        .exits(0);
    let records = out.json();
    let mut want = set(EVERY_NAMESPACED);
    want.extend(set([
        "namespaces",
        "nodes",
        "customresourcedefinitions.apiextensions.k8s.io",
        "events",
        "apiservices.apiregistration.k8s.io",
        "clusterroles.rbac.authorization.k8s.io",
        "clusterrolebindings.rbac.authorization.k8s.io",
        "storageclasses.storage.k8s.io",
        "priorityclasses.scheduling.k8s.io",
        "ingressclasses.networking.k8s.io",
        "persistentvolumes",
    ]));
    assert_eq!(resources_of(&records, "Synced"), want);
    let events: Vec<&Value> = records
        .iter()
        .filter(|r| r["type"] == "Replaced" && r["kind"] == "Event")
        .collect();
    assert!(!events.is_empty(), "{records:?}");
    assert!(
        events.iter().all(|r| r["resource"] == "events"),
        "{events:?}"
    );

    // The table names each row's kind.
    let out = sim
        .kwatch("--every-resource -n default --until-synced")
        .exits(0);
    let rows = table_rows(&out.stdout);
    assert!(
        rows.iter()
            .any(|r| *r == ("Replaced".into(), "ConfigMap".into(), "app-config".into())),
        "{rows:?}"
    );
}

#[test]
fn a_refused_resource_is_reported_once_and_the_others_go_on() {
    let sim = SimProcess::start(&[]);
    // A viewer may not read secrets (as Kubernetes' `view` role): the streaming list's
    // watch is refused (`--watch-list auto`: the sim's 1.32 gets a paged LIST by default).
    let viewer = format!("--every-resource -n default --as {VIEWER}");
    let out = sim
        .kwatch(format!("{viewer} -o json --until-synced --watch-list auto"))
        .exits(0);
    let skipped = stderr_with(&out, "secrets");
    assert_eq!(
        skipped,
        [format!(
            "~ skipping secrets: 403 Forbidden: secrets is forbidden: User \"{VIEWER}\" cannot \
             watch resource \"secrets\" in API group \"\" in the namespace \"default\""
        )],
        "{}",
        out.stderr
    );
    let mut others = set(EVERY_NAMESPACED);
    others.remove("secrets");
    let records = out.json();
    assert_eq!(resources_of(&records, "Synced"), others);
    assert!(
        records
            .iter()
            .all(|r| r["resource"] != "secrets" || r["type"] == "List"),
        "{records:?}"
    );

    // The same with a LIST (the table): its 403 names the list verb; the rows go on.
    let out = sim
        .kwatch(format!("{viewer} --watch-list off --until-synced"))
        .exits(0);
    let skipped = stderr_with(&out, "skipping");
    assert_eq!(skipped.len(), 1, "{}", out.stderr);
    assert!(
        skipped[0].starts_with("~ skipping secrets: 403 Forbidden: secrets is forbidden:")
            && skipped[0].contains("cannot list resource \"secrets\""),
        "{}",
        out.stderr
    );
    assert!(
        table_rows(&out.stdout)
            .iter()
            .any(|(_, kind, name)| kind == "ConfigMap" && name == "app-config"),
        "{:?}",
        out.stdout
    );

    // Named on its own, a refused resource still ends the run, as before.
    let out = sim
        .kwatch([
            "secrets",
            "-n",
            "default",
            "--as",
            VIEWER,
            "--timeout",
            "30s",
        ])
        .exits(1);
    assert!(
        out.stderr
            .starts_with("Error from server (Forbidden): secrets is forbidden"),
        "{}",
        out.stderr
    );

    // Every resource refused: each said once, then one error line and exit 1.
    let out = sim
        .kwatch(["all", "-n", "default", "--as", NOBODY, "--timeout", "30s"])
        .exits(1);
    assert!(out.stdout.is_empty(), "{:?}", out.stdout);
    let lines: Vec<&str> = out.stderr.lines().collect();
    let skipped: BTreeSet<&str> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("~ skipping "))
        .map(|l| l.split(':').next().unwrap_or_default())
        .collect();
    assert_eq!(
        skipped,
        ALL.into_iter().collect::<BTreeSet<&str>>(),
        "{}",
        out.stderr
    );
    assert_eq!(lines.len(), ALL.len() + 1, "{}", out.stderr);
    assert_eq!(
        lines[ALL.len()],
        "error: none of the 9 resources can be watched: the server refused each, as reported \
         above; `kubectl auth can-i --list` shows what you may list and watch"
    );
}

/// The resources a `kubectl get … -v=6` listed, in order, from its request log.
fn listed_by_kubectl(sim: &SimProcess, stderr: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in stderr.lines().filter(|l| l.contains("GET")) {
        let Some(at) = line.find(&sim.url) else {
            continue;
        };
        let path = &line[at + sim.url.len()..];
        let path = path
            .split(|c: char| c == '?' || c == '"' || c.is_whitespace())
            .next()
            .unwrap_or_default();
        let Some((base, resource)) = path.split_once("/namespaces/default/") else {
            continue;
        };
        let name = match base.strip_prefix("/apis/") {
            Some(gv) => format!("{resource}.{}", gv.split('/').next().unwrap_or_default()),
            None => resource.to_owned(),
        };
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

#[test]
fn kubectl_get_all_lists_the_same_resources_kwatch_picks() {
    let sim = SimProcess::start(&[]);
    let kubectl = sim.kubectl("get all -n default -v=6");
    assert!(kubectl.status.success(), "{kubectl:?}");
    let theirs = listed_by_kubectl(&sim, &String::from_utf8_lossy(&kubectl.stderr));
    assert_eq!(theirs, ALL, "kubectl's requests");

    // kwatch's resources, in the order it resolved them (--stats lists the queues so).
    let out = sim
        .kwatch("all -n default -o json --until-synced --stats")
        .exits(0);
    let ours: Vec<&str> = out
        .stderr
        .lines()
        .filter_map(|l| l.trim().strip_prefix("queue "))
        .map(|l| l.split(':').next().unwrap_or_default())
        .collect();
    assert_eq!(ours, theirs, "{}", out.stderr);
    assert_eq!(resources_of(&out.json(), "Synced"), set(ALL));
}
