//! `--follow` and `--events`: the owner graph live — children held until their
//! owner joins, joining later, leaving deleted or orphaned — its `ownerPath` in JSON and
//! YAML, a custom resource's children found through discovery, Events joined to their
//! object (held while it is unseen), the table's tree, and `--until deleted` on the graph.
//! Owners and children are made with kubectl, `ownerReferences` naming the owner's uid.

use std::collections::HashSet;

use serde_json::{json, Value};

use crate::util::kwatch::{is_delta, kubectl_f, replay, Running};
use crate::util::{SimProcess, LIMIT};

/// A namespace of the test's own, created.
pub(crate) fn namespace(sim: &SimProcess, name: &str) -> String {
    sim.kubectl_ok(["create", "namespace", name]);
    name.to_owned()
}

/// An ownerReference to `owner` (a stored object), as a controller sets it.
fn owned_by(owner: &Value) -> Value {
    json!([{"apiVersion": owner["apiVersion"], "kind": owner["kind"],
            "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"],
            "controller": true, "blockOwnerDeletion": true}])
}

pub(crate) fn deployment(sim: &SimProcess, ns: &str, name: &str) -> Value {
    kubectl_f(
        sim,
        "create",
        &json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"replicas": 0, "selector": {"matchLabels": {"app": name}},
                "template": {"metadata": {"labels": {"app": name}},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}),
    )
}

pub(crate) fn replica_set(sim: &SimProcess, ns: &str, name: &str, owner: &Value) -> Value {
    kubectl_f(
        sim,
        "create",
        &json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": name, "namespace": ns, "ownerReferences": owned_by(owner)},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}),
    )
}

/// A pod owned by `owner` (none: `Value::Null`).
pub(crate) fn pod(sim: &SimProcess, ns: &str, name: &str, owner: &Value) -> Value {
    let mut meta = json!({"name": name, "namespace": ns, "labels": {"app": "web"}});
    if !owner.is_null() {
        meta["ownerReferences"] = owned_by(owner);
    }
    kubectl_f(
        sim,
        "create",
        &json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}),
    )
}

/// The delta records of `name`, in order.
/// A simulator holding, in namespace `ns`, the Deployment `web` owning the ReplicaSet
/// `web-1`, which owns `pods` (created in that order); the namespace's name and the
/// ReplicaSet.
pub(crate) fn web_tree(ns: &str, pods: &[&str]) -> (SimProcess, String, Value) {
    let sim = SimProcess::start(&["--churn", "0"]);
    let ns = namespace(&sim, ns);
    let web = deployment(&sim, &ns, "web");
    let rs = replica_set(&sim, &ns, "web-1", &web);
    for p in pods {
        pod(&sim, &ns, p, &rs);
    }
    (sim, ns, rs)
}

/// `object` (`KIND/NAME`) orphaned by hand: its ownerReferences removed.
pub(crate) fn orphan(sim: &SimProcess, ns: &str, object: &str) {
    let remove = r#"[{"op":"remove","path":"/metadata/ownerReferences"}]"#;
    sim.kubectl_ok(["patch", object, "-n", ns, "--type=json", "-p", remove]);
}

fn deltas_of<'a>(records: &'a [Value], name: &str) -> Vec<&'a Value> {
    records
        .iter()
        .filter(|r| is_delta(r) && r["name"] == name)
        .collect()
}

/// Whether a delta of `name` with `graph` (`joined`, `deleted`, `orphaned`) came.
fn saw(records: &[Value], name: &str, graph: &str) -> bool {
    deltas_of(records, name).iter().any(|r| r["graph"] == graph)
}

/// The names of the objects the graph printed, in order, once each.
fn names(records: &[Value]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in records.iter().filter(|r| is_delta(r)) {
        let n = r["name"].as_str().unwrap_or_default().to_owned();
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

fn following(sim: &SimProcess, args: &str) -> Running {
    sim.start_kwatch(args.split(' ').collect::<Vec<_>>().as_slice())
}

/// Children listed before their owner are held until it joins (the three informers'
/// initial lists pop in any order), each with its owner path; objects created later join;
/// a pod of another owner never shows.
#[test]
fn children_join_with_their_owner_path_and_late_ones_join_later() {
    let sim = SimProcess::start(&["--churn", "0"]);
    let ns = namespace(&sim, "follow-join");
    let web = deployment(&sim, &ns, "web");
    let rs = replica_set(&sim, &ns, "web-1", &web);
    pod(&sim, &ns, "web-1-a", &rs);
    let other = deployment(&sim, &ns, "other");
    let other_rs = replica_set(&sim, &ns, "other-1", &other);
    pod(&sim, &ns, "other-1-a", &other_rs);
    pod(&sim, &ns, "loose", &Value::Null);

    let mut kw = following(&sim, &format!("deploy/web -n {ns} --follow -o json"));
    let seen = kw.wait_for(LIMIT, "the graph's three objects joined", |v| {
        saw(v, "web", "joined") && saw(v, "web-1", "joined") && saw(v, "web-1-a", "joined")
    });
    let path = |name: &str| deltas_of(&seen, name)[0]["ownerPath"].clone();
    assert_eq!(path("web"), "deploy/web");
    assert_eq!(path("web-1"), "deploy/web › rs/web-1");
    assert_eq!(path("web-1-a"), "deploy/web › rs/web-1 › pod/web-1-a");

    // A rollout's new replica set and its pod join when they appear; then a marker pod of
    // the graph shows the unrelated one created before it was never printed.
    let rs2 = replica_set(&sim, &ns, "web-2", &web);
    pod(&sim, &ns, "web-2-a", &rs2);
    pod(&sim, &ns, "loose-2", &Value::Null);
    pod(&sim, &ns, "web-2-b", &rs2);
    let seen = kw.wait_for(LIMIT, "the late pod web-2-b", |v| {
        saw(v, "web-2-b", "joined")
    });
    assert_eq!(
        deltas_of(&seen, "web-2-a")[0]["ownerPath"],
        "deploy/web › rs/web-2 › pod/web-2-a"
    );
    assert_eq!(
        names(&seen),
        ["web", "web-1", "web-1-a", "web-2", "web-2-a", "web-2-b"],
        "only the graph's objects, each once joined: {seen:#?}"
    );
    kw.interrupt(LIMIT);
}

/// An object leaves with a record saying why: deleted, or orphaned (its ownerReferences
/// removed), its subtree leaving with it, each object of it with a record of its own. The
/// run's recording replays as the run printed it, owner paths and graph changes included.
#[test]
fn objects_leave_deleted_or_orphaned() {
    let (sim, ns, _rs) = web_tree("follow-leave", &["web-1-a", "web-1-b"]);

    let (mut kw, rec) = sim.start_recording(
        "follow.jsonl",
        format!("deploy/web -n {ns} --follow -o json"),
    );
    kw.wait_for(LIMIT, "the pods joined", |v| {
        saw(v, "web-1-a", "joined") && saw(v, "web-1-b", "joined")
    });
    sim.kubectl_ok(["delete", "pod", "web-1-a", "-n", &ns]);
    let seen = kw.wait_for(LIMIT, "web-1-a deleted", |v| saw(v, "web-1-a", "deleted"));
    let last = deltas_of(&seen, "web-1-a")
        .pop()
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        (&last["type"], &last["ownerPath"]),
        (
            &json!("Deleted"),
            &json!("deploy/web › rs/web-1 › pod/web-1-a")
        )
    );

    orphan(&sim, &ns, "rs/web-1");
    let seen = kw.wait_for(LIMIT, "web-1 orphaned, web-1-b left with it", |v| {
        saw(v, "web-1", "orphaned") && saw(v, "web-1-b", "left")
    });
    let last = deltas_of(&seen, "web-1").pop().cloned().unwrap_or_default();
    assert_eq!(
        (&last["type"], &last["ownerPath"]),
        (&json!("Updated"), &json!("deploy/web › rs/web-1"))
    );
    // Right after its owner's record: the pod as its informer holds it, its path as it was.
    let at = seen
        .iter()
        .position(|r| r["graph"] == "orphaned")
        .unwrap_or_default();
    let left = &seen[at + 1];
    assert_eq!(
        (
            &left["type"],
            &left["name"],
            &left["graph"],
            &left["ownerPath"]
        ),
        (
            &json!("Sync"),
            &json!("web-1-b"),
            &json!("left"),
            &json!("deploy/web › rs/web-1 › pod/web-1-b")
        ),
        "{seen:#?}"
    );
    assert_eq!(left["object"]["metadata"]["name"], "web-1-b");
    // Its pod left with it: a change to it is not printed, a change to the root is.
    sim.kubectl_ok(["label", "pod", "web-1-b", "-n", &ns, "x=1"]);
    sim.kubectl_ok(["label", "deploy", "web", "-n", &ns, "x=1"]);
    let seen = kw.wait_for(LIMIT, "the root's update", |v| {
        deltas_of(v, "web").iter().any(|r| r["type"] == "Updated")
    });
    assert!(
        !deltas_of(&seen, "web-1-b")
            .iter()
            .any(|r| r["type"] == "Updated"),
        "the orphan's pod is out of the graph: {seen:#?}"
    );
    let live = kw.interrupt(LIMIT).exits(130);
    let replayed = replay(sim.dir(), &rec, ["-o", "json"]).success();
    assert!(
        live.stdout.iter().any(|l| l.contains(r#""graph":"left""#)),
        "{:#?}",
        live.stdout
    );
    assert_eq!(replayed.stdout, live.stdout);
}

/// A custom resource's children are found through discovery (every namespaced resource),
/// and the owner path is in YAML too.
#[test]
fn a_custom_resource_owning_config_maps_is_followed() {
    let sim = SimProcess::start(&["--churn", "0"]);
    let ns = namespace(&sim, "follow-widget");
    let w = kubectl_f(
        &sim,
        "create",
        &json!({"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w1", "namespace": ns}, "spec": {"size": 1}}),
    );
    for name in ["w1-config", "w1-extra"] {
        kubectl_f(
            &sim,
            "create",
            &json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": ns, "ownerReferences": owned_by(&w)},
                "data": {"a": "1"}}),
        );
    }
    kubectl_f(
        &sim,
        "create",
        &json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "unowned", "namespace": ns}}),
    );
    let args = format!("widgets/w1 -n {ns} --follow --until-synced -o json");
    let out = sim
        .kwatch(args.split(' ').collect::<Vec<_>>().as_slice())
        .success();
    let records = out.json();
    let mut shown = names(&records);
    shown.sort();
    assert_eq!(shown, ["w1", "w1-config", "w1-extra"]);
    assert_eq!(
        deltas_of(&records, "w1-config")[0]["ownerPath"],
        "widget/w1 › cm/w1-config"
    );
    let args = format!("widgets/w1 -n {ns} --follow --until-synced -o yaml");
    let out = sim
        .kwatch(args.split(' ').collect::<Vec<_>>().as_slice())
        .success();
    let text = out.stdout.join("\n");
    assert!(
        text.contains("ownerPath: widget/w1 › cm/w1-extra"),
        "the owner path in YAML: {text}"
    );
}

/// `--until deleted` on the root waits for the whole graph: the root deleted, the run goes
/// on while its children are there, and ends when the last one goes.
#[test]
fn until_deleted_waits_for_the_whole_graph() {
    let (sim, ns, _rs) = web_tree("follow-until", &["web-1-a"]);
    let mut kw = following(
        &sim,
        &format!("deploy/web -n {ns} --follow --until deleted -o json"),
    );
    kw.wait_for(LIMIT, "the pod joined", |v| saw(v, "web-1-a", "joined"));
    sim.kubectl_ok(["delete", "deploy", "web", "-n", &ns]);
    sim.kubectl_ok(["delete", "pod", "web-1-a", "-n", &ns]);
    // Had the root's deletion ended the run, the pod's would never be printed.
    kw.wait_for(LIMIT, "the pod deleted", |v| {
        saw(v, "web", "deleted") && saw(v, "web-1-a", "deleted")
    });
    sim.kubectl_ok(["delete", "rs", "web-1", "-n", &ns, "--ignore-not-found"]);
    let out = kw.finish(LIMIT).exits(0);
    assert!(saw(&out.json(), "web-1", "deleted"), "{:?}", out.stdout);
}

/// `--events`: an Event about an object shown is printed under it (its path ends with the
/// event), one about an object not shown yet is held until the object joins, and an Event
/// updated in place is an update of one record.
#[test]
fn events_join_their_object_and_wait_for_it() {
    let sim = SimProcess::start(&["--churn", "0"]);
    let ns = namespace(&sim, "follow-events");
    let cm = |name: &str, labels: Value| {
        kubectl_f(
            &sim,
            "create",
            &json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": ns, "labels": labels}}),
        )
    };
    let c1 = cm("c1", json!({}));
    let c2 = cm("c2", json!({"shown": "yes"}));
    let mut kw = following(
        &sim,
        &format!("configmaps -n {ns} -l shown=yes --events -o json"),
    );
    kw.wait_for(LIMIT, "synced", |v| {
        v.iter().filter(|r| r["type"] == "Synced").count() == 2
    });
    let event = |name: &str, about: &Value| {
        json!({"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": name, "namespace": ns},
            "involvedObject": {"kind": "ConfigMap", "name": about["metadata"]["name"],
                "namespace": ns, "uid": about["metadata"]["uid"], "apiVersion": "v1"},
            "reason": "Tested", "message": "about it", "type": "Normal", "count": 1,
            "source": {"component": "test"},
            "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:00:00Z"})
    };
    // c1 is not shown (the selector): its Event is held. c2's, created after it, comes
    // through the same informer after it: once c2's is printed, c1's was held.
    kubectl_f(&sim, "create", &event("c1.1", &c1));
    kubectl_f(&sim, "create", &event("c2.1", &c2));
    let seen = kw.wait_for(LIMIT, "c2's Event", |v| !deltas_of(v, "c2.1").is_empty());
    assert!(deltas_of(&seen, "c1.1").is_empty(), "held: {seen:#?}");
    // c1 joins, then its held Event.
    sim.kubectl_ok(["label", "configmap", "c1", "-n", &ns, "shown=yes"]);
    let seen = kw.wait_for(LIMIT, "the held Event", |v| {
        !deltas_of(v, "c1.1").is_empty()
    });
    let at = |name: &str| seen.iter().position(|r| is_delta(r) && r["name"] == name);
    let (c1_at, ev_at) = (
        at("c1").expect("c1 printed"),
        at("c1.1").expect("its Event"),
    );
    assert!(c1_at < ev_at, "the object first, then its Event: {seen:#?}");
    let ev = deltas_of(&seen, "c1.1")[0];
    assert_eq!(ev["ownerPath"], "cm/c1 › event/c1.1");
    assert_eq!(ev["object"]["reason"], "Tested");

    sim.kubectl_ok([
        "patch",
        "event",
        "c1.1",
        "-n",
        &ns,
        "--type=merge",
        "-p",
        r#"{"count":2}"#,
    ]);
    let seen = kw.wait_for(LIMIT, "the Event's count 2", |v| {
        deltas_of(v, "c1.1")
            .iter()
            .any(|r| r["object"]["count"] == 2)
    });
    let updates: Vec<&Value> = deltas_of(&seen, "c1.1");
    assert_eq!(updates.len(), 2, "{updates:#?}");
    assert_eq!(updates[1]["type"], "Updated");
    assert_eq!(updates[1]["key"], updates[0]["key"]);
    kw.interrupt(LIMIT);
}

/// The table shows the graph as a tree, kubectl-tree's way: one header, each row's KIND,
/// its NAME indented under its owner (initial lists, which pop in any order, sorted by owner
/// path), its own kind's READY and STATUS (here objects no controller has touched: a
/// Deployment of 0 replicas, a ReplicaSet and Pods with no status yet, which kwatch's pod
/// printer calls `Unknown`), and an Event under
/// the object it is about: its own name in NAME, no READY or STATUS, and kubectl's TYPE,
/// REASON and MESSAGE (`kubectl get events`) last, so that a long message widens no other
/// column.
#[test]
fn the_table_shows_the_tree_with_events_under_their_object() {
    let (sim, ns, rs) = web_tree("follow-table", &["web-1-b", "web-1-a"]);
    let message = format!("Created pod: web-1-a {}", "x".repeat(300));
    kubectl_f(
        &sim,
        "create",
        &json!({"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "web-1.1", "namespace": ns},
            "involvedObject": {"kind": "ReplicaSet", "name": "web-1", "namespace": ns,
                "uid": rs["metadata"]["uid"], "apiVersion": "apps/v1"},
            "reason": "SuccessfulCreate", "message": message, "type": "Normal",
            "count": 2, "source": {"component": "replicaset-controller"}}),
    );
    let args = format!("deploy/web -n {ns} --follow --events --until-synced");
    let out = sim
        .kwatch(args.split(' ').collect::<Vec<_>>().as_slice())
        .success();
    let header = &out.stdout[0];
    let column = |h: &str| header.find(h).expect("a header cell");
    let (kind, name, rv) = (column("KIND"), column("NAME"), column("RESOURCEVERSION"));
    let (ty, reason, msg) = (column("TYPE"), column("REASON"), column("MESSAGE"));
    let (ready, status, age) = (column("READY"), column("STATUS"), column("AGE"));
    assert!(
        rv < ready && ready < status && status < age && age < ty,
        "{header}"
    );
    assert!(header.trim_end().ends_with("MESSAGE"), "{header}");
    // NAME is as wide as the longest name: the message is elsewhere.
    assert_eq!(rv - name, "  └─ web-1-a".chars().count() + 3, "{header}");
    let rows: Vec<Vec<String>> = out.stdout[1..]
        .iter()
        .map(|l| {
            let c: Vec<char> = l.chars().collect();
            let cell = |a: usize, b: usize| {
                c[a.min(c.len())..b.min(c.len())]
                    .iter()
                    .collect::<String>()
                    .trim_end()
                    .to_owned()
            };
            vec![
                cell(kind, name),
                cell(name, rv),
                cell(ready, status),
                cell(status, age),
                cell(ty, reason),
                cell(reason, msg),
                cell(msg, c.len()),
            ]
        })
        .collect();
    let want = [
        ["Deployment", "web", "0/0", "", "", "", ""],
        ["ReplicaSet", "└─ web-1", "0", "", "", "", ""],
        [
            "Event",
            "  └─ web-1.1",
            "",
            "",
            "Normal",
            "SuccessfulCreate",
            &message,
        ],
        ["Pod", "  └─ web-1-a", "0/1", "Unknown", "", "", ""],
        ["Pod", "  └─ web-1-b", "0/1", "Unknown", "", "", ""],
    ];
    let want: Vec<Vec<String>> = want
        .iter()
        .map(|r| r.iter().map(|c| c.to_string()).collect())
        .collect();
    assert_eq!(rows, want, "{:#?}", out.stdout);
}

/// In the table, an orphaned replica set's line says so, and each of its pods has a line
/// saying it left with it.
#[test]
fn the_table_says_which_objects_left_with_an_orphaned_owner() {
    let (sim, ns, _rs) = web_tree("follow-table-left", &["web-1-a", "web-1-b"]);
    let kw = following(&sim, &format!("deploy/web -n {ns} --follow"));
    crate::util::eventually(LIMIT, "the tree", || {
        let l = kw.lines();
        let shown = l.iter().any(|l| l.contains("└─ web-1-b"));
        if shown {
            Ok(())
        } else {
            Err(l)
        }
    });
    orphan(&sim, &ns, "rs/web-1");
    let lines = crate::util::eventually(LIMIT, "the pods' lines", || {
        let l = kw.lines();
        let left = l
            .iter()
            .filter(|l| l.contains("(left with its orphaned owner)"))
            .count();
        if left == 2 {
            Ok(l)
        } else {
            Err(l)
        }
    });
    let at = |what: &str| lines.iter().position(|l| l.contains(what));
    let orphaned = at("└─ web-1 (orphaned)").expect("the replica set's line");
    for (i, pod) in ["web-1-a", "web-1-b"].iter().enumerate() {
        let line = &lines[orphaned + 1 + i];
        assert!(
            line.starts_with("Sync")
                && line.contains(&format!("  └─ {pod} (left with its orphaned owner)")),
            "{lines:#?}"
        );
    }
    kw.interrupt(LIMIT);
}

/// A simulator running its controllers, with a Deployment `name` of 3 replicas in the new
/// namespace `ns`.
fn with_deployment(ns: &str, name: &str) -> SimProcess {
    let sim = SimProcess::start(&["--churn", "0", "--controllers"]);
    namespace(&sim, ns);
    kubectl_f(
        &sim,
        "create",
        &json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": name}},
                "template": {"metadata": {"labels": {"app": name}},
                    "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}}}),
    );
    sim
}

/// Each row of the tree shows its own kind's READY and STATUS, the cells kubectl's printer
/// of that kind prints under those headers (the tree used to show KIND, NAME,
/// RESOURCEVERSION and AGE only): a Deployment of 3 made by the simulator's controllers
/// READY 3/3, its ReplicaSet READY 3 (`kubectl get rs` counts ready replicas), each Pod
/// READY 1/1 and STATUS Running; a kind without such a column leaves its cell empty.
#[test]
fn each_row_of_the_tree_shows_its_own_kinds_ready_and_status() {
    let ns = "follow-ready";
    let sim = with_deployment(ns, "web");
    crate::util::eventually(LIMIT, "the deployment's 3 pods ready", || {
        let ready = sim.kubectl_ok([
            "get",
            "deploy",
            "web",
            "-n",
            ns,
            "-o",
            "jsonpath={.status.readyReplicas}",
        ]);
        (ready.trim() == "3").then_some(()).ok_or(ready)
    });
    let out = sim
        .kwatch(format!("deploy/web -n {ns} --follow --until-synced"))
        .success();
    let lines: Vec<&str> = out.stdout.iter().map(String::as_str).collect();
    let table = crate::util::shared::Table::parse(&lines);
    let (kind, ready, status) = (table.col("KIND"), table.col("READY"), table.col("STATUS"));
    assert!(ready < status && status < table.col("AGE"), "{lines:#?}");
    let cells = |k: &str| -> Vec<(String, String)> {
        table
            .rows
            .iter()
            .filter(|r| r[kind] == k)
            .map(|r| (r[ready].clone(), r[status].clone()))
            .collect()
    };
    let pair = |r: &str, s: &str| (r.to_owned(), s.to_owned());
    assert_eq!(cells("Deployment"), [pair("3/3", "")], "{lines:#?}");
    assert_eq!(cells("ReplicaSet"), [pair("3", "")], "{lines:#?}");
    assert_eq!(cells("Pod"), vec![pair("1/1", "Running"); 3], "{lines:#?}");
}

/// A Deployment of 3 replicas, made by the simulator's controllers (`--controllers`), and a
/// kwatch following it with its Events, once every pod is running.
fn rolled_out(ns: &str) -> (SimProcess, Running) {
    let sim = with_deployment(ns, "web");
    let mut kw = following(
        &sim,
        &format!("deploy/web -n {ns} --follow --events -o json"),
    );
    kw.wait_for(LIMIT, "three running pods", |v| {
        let running: HashSet<&str> = v
            .iter()
            .filter(|r| r["kind"] == "Pod" && r["object"]["status"]["phase"] == "Running")
            .filter_map(|r| r["name"].as_str())
            .collect();
        running.len() == 3
    });
    (sim, kw)
}

/// `--view handlers` under `--follow`: a Deployment made by the simulator's controllers,
/// its ReplicaSet and 3 pods listed by three informers in whatever order they pop: each
/// object gets its OnAdd, a child held until its owner joined included (its own
/// informer's handler call, made when it is delivered).
#[test]
fn every_object_of_the_graph_gets_its_on_add_in_the_handler_view() {
    let ns = "follow-handlers";
    let sim = with_deployment(ns, "lv");
    crate::util::eventually(LIMIT, "three pods", || {
        let pods = sim.kubectl_ok(["get", "pods", "-n", ns, "-o", "name"]);
        (pods.lines().count() == 3).then_some(()).ok_or(pods)
    });
    let mut kw = following(
        &sim,
        &format!("deploy/lv -n {ns} --follow --view handlers -o json"),
    );
    let adds = |v: &[Value]| -> HashSet<(String, String)> {
        v.iter()
            .filter(|r| r["type"] == "HandlerCall" && r["handler"] == "OnAdd")
            .map(|r| {
                (
                    r["kind"].as_str().unwrap_or_default().to_owned(),
                    r["name"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect()
    };
    let seen = kw.wait_for(LIMIT, "the three informers synced, five OnAdds", |v| {
        v.iter().filter(|r| r["type"] == "Synced").count() == 3 && adds(v).len() == 5
    });
    let kinds: Vec<String> = {
        let mut k: Vec<String> = adds(&seen).into_iter().map(|(k, _)| k).collect();
        k.sort();
        k
    };
    assert_eq!(
        kinds,
        ["Deployment", "Pod", "Pod", "Pod", "ReplicaSet"],
        "{seen:#?}"
    );
    kw.interrupt(LIMIT);
}

/// The Event's reason and message of a record, if it is an Event's.
fn event_text(r: &Value) -> Option<(String, String)> {
    (r["kind"] == "Event" && is_delta(r)).then(|| {
        let o = &r["object"];
        let s = |k: &str| o[k].as_str().unwrap_or_default().to_owned();
        (s("reason"), s("message"))
    })
}

/// What a rollout's records showed, after the records before it.
struct Rollout {
    new_rs: String,
    new_rs_path: String,
    /// The owner paths of the pods that joined.
    created: Vec<String>,
    /// The names of the pods that left, deleted.
    deleted: HashSet<String>,
}

/// A rollout: `kubectl set image` on a Deployment of 3 under `--follow --events`
/// shows the new ReplicaSet join with its owner path, its pods created, the old one scaled
/// to 0 and its pods deleted, and the ScalingReplicaSet Events in the order the server
/// stored them.
#[test]
fn a_rollout_under_follow_and_events() {
    let ns = "follow-rollout";
    let (sim, mut kw) = rolled_out(ns);
    let before = kw.json();
    let old_rs: String = before
        .iter()
        .find(|r| r["kind"] == "ReplicaSet" && r["graph"] == "joined")
        .and_then(|r| r["name"].as_str())
        .expect("the first replica set")
        .to_owned();
    let old_pods: HashSet<String> = before
        .iter()
        .filter(|r| r["kind"] == "Pod" && r["graph"] == "joined")
        .filter_map(|r| r["name"].as_str().map(str::to_owned))
        .collect();
    sim.kubectl_ok(["set", "image", "deploy/web", "c=nginx:2", "-n", ns]);
    let scaled_to_0 = format!("Scaled down replica set {old_rs} from 1 to 0");
    // Each kind has its own informer: the pods', the replica sets' and the Events' records
    // interleave as their watches deliver them (a new pod waits for its replica set to
    // join), so the wait is for every one of them, in any order.
    let rollout = |v: &[Value]| -> Option<Rollout> {
        let after = &v[before.len()..];
        let new_rs = after
            .iter()
            .find(|r| r["kind"] == "ReplicaSet" && r["graph"] == "joined")?;
        let named = |graph: &str| -> HashSet<String> {
            after
                .iter()
                .filter(|r| r["kind"] == "Pod" && r["graph"] == graph)
                .filter_map(|r| r["name"].as_str().map(str::to_owned))
                .collect()
        };
        let rollout = Rollout {
            new_rs: new_rs["name"].as_str()?.to_owned(),
            new_rs_path: new_rs["ownerPath"].as_str()?.to_owned(),
            created: after
                .iter()
                .filter(|r| r["kind"] == "Pod" && r["graph"] == "joined")
                .filter_map(|r| r["ownerPath"].as_str().map(str::to_owned))
                .collect(),
            deleted: named("deleted"),
        };
        let done = rollout.created.len() >= 3
            && rollout.deleted.is_superset(&old_pods)
            && after
                .iter()
                .any(|r| r["name"] == old_rs.as_str() && r["object"]["spec"]["replicas"] == 0)
            && v.iter()
                .filter_map(event_text)
                .any(|(_, m)| m == scaled_to_0);
        done.then_some(rollout)
    };
    let seen = kw.wait_for(
        LIMIT,
        "the new replica set's 3 pods joined; the old one scaled to 0, its pods gone",
        |v| rollout(v).is_some(),
    );
    let done = rollout(&seen).expect("waited for");
    assert_eq!(done.new_rs_path, format!("deploy/web › rs/{}", done.new_rs));
    assert_eq!(done.created.len(), 3, "{:#?}", done.created);
    for path in &done.created {
        assert!(
            path.starts_with(&format!("deploy/web › rs/{} › pod/", done.new_rs)),
            "{path}"
        );
    }
    assert_eq!(done.deleted, old_pods);
    // The ScalingReplicaSet Events, in the order printed and in the server's order.
    let printed: Vec<String> = seen
        .iter()
        .filter_map(event_text)
        .filter(|(reason, _)| reason == "ScalingReplicaSet")
        .map(|(_, m)| m)
        .collect();
    let listed: Value =
        serde_json::from_str(&sim.kubectl_ok(["get", "events", "-n", ns, "-o", "json"]))
            .expect("kubectl's JSON");
    let mut stored: Vec<(u64, String)> = listed["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["reason"] == "ScalingReplicaSet")
        .map(|e| {
            let rv = e["metadata"]["resourceVersion"]
                .as_str()
                .unwrap_or_default();
            (
                rv.parse().unwrap_or_default(),
                e["message"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    stored.sort();
    let stored: Vec<String> = stored.into_iter().map(|(_, m)| m).collect();
    assert_eq!(printed, stored);
    assert!(printed.len() >= 3, "{printed:#?}");
    kw.interrupt(LIMIT);
}

/// A rolled-out Deployment `web` in `ns` deleted with `kubectl delete --cascade=CASCADE`
/// under `--follow --until deleted -o json`: the records of that run, to its end.
fn deleted_with_cascade(ns: &str, cascade: &str) -> (SimProcess, Vec<Value>) {
    let (sim, kw) = rolled_out(ns);
    drop(kw);
    let mut kw = following(
        &sim,
        &format!("deploy/web -n {ns} --follow --until deleted -o json"),
    );
    kw.wait_for(LIMIT, "synced", |v| {
        v.iter().filter(|r| r["type"] == "Synced").count() == 3
    });
    let cascade = format!("--cascade={cascade}");
    sim.kubectl_ok(["delete", "deploy", "web", "-n", ns, cascade.as_str()]);
    let records = kw.finish(LIMIT).exits(0).json();
    (sim, records)
}

/// Deleting the Deployment with foreground propagation: the graph leaves children first
/// (each pod before its replica set, the replica sets before the Deployment, in the
/// server's order), and `--until deleted` ends the run once all is gone.
#[test]
fn foreground_deletion_leaves_children_first() {
    let (_sim, records) = deleted_with_cascade("follow-foreground", "foreground");
    // Each kind has its own informer, and two informers' deltas interleave as their watches
    // deliver them (as in client-go): the order the graph left in is the server's, the
    // resourceVersions of the deletions; each kind's own records are printed in that order.
    let mut left: Vec<(u64, String, String)> = records
        .iter()
        .filter(|r| r["graph"] == "deleted")
        .map(|r| {
            (
                r["resourceVersion"]
                    .as_str()
                    .and_then(|rv| rv.parse().ok())
                    .expect("a deletion's resourceVersion"),
                r["kind"].as_str().unwrap_or_default().to_owned(),
                r["name"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    for kind in ["Pod", "ReplicaSet", "Deployment"] {
        let printed: Vec<u64> = left
            .iter()
            .filter(|(_, k, _)| k == kind)
            .map(|(rv, _, _)| *rv)
            .collect();
        assert!(printed.is_sorted(), "{kind}: {left:#?}");
    }
    left.sort();
    let kinds: Vec<&str> = left.iter().map(|(_, k, _)| k.as_str()).collect();
    assert_eq!(
        kinds,
        ["Pod", "Pod", "Pod", "ReplicaSet", "Deployment"],
        "{left:#?}"
    );
}

/// Deleting the Deployment with orphan propagation: the garbage collector removes the
/// replica set's ownerReference, and it leaves the graph with a record saying it was
/// orphaned, each of its pods right after it with a record of its own (`left`); the graph is
/// then gone, which ends `--until deleted`. The Deployment's `deleted` comes from another
/// informer: before or after them.
#[test]
fn an_orphaning_deletion_orphans_the_replica_set() {
    let ns = "follow-orphan";
    let (sim, records) = deleted_with_cascade(ns, "orphan");
    let changes: Vec<(String, String, String)> = records
        .iter()
        .filter(|r| ["deleted", "orphaned", "left"].contains(&r["graph"].as_str().unwrap_or("")))
        .filter(|r| r["kind"] != "Deployment")
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap_or_default().to_owned();
            (s("kind"), s("graph"), s("ownerPath"))
        })
        .collect();
    let rs = changes.first().map(|c| c.2.clone()).unwrap_or_default();
    let pods = sim.kubectl_ok(["get", "pods", "-n", ns, "-o", "name"]);
    let mut want = vec![("ReplicaSet".to_owned(), "orphaned".to_owned(), rs.clone())];
    let mut names: Vec<&str> = pods
        .lines()
        .filter_map(|l| l.strip_prefix("pod/"))
        .collect();
    names.sort();
    assert_eq!(names.len(), 3, "the pods stay: {pods}");
    want.extend(names.iter().map(|n| {
        (
            "Pod".to_owned(),
            "left".to_owned(),
            format!("{rs} › pod/{n}"),
        )
    }));
    assert_eq!(changes, want);
    assert!(rs.starts_with("deploy/web › rs/web-"), "{rs}");
    // The pods' records are together, right after the replica set's.
    let graph: Vec<&str> = records
        .iter()
        .filter_map(|r| r["graph"].as_str())
        .filter(|g| *g != "joined")
        .collect();
    let at = graph
        .iter()
        .position(|g| *g == "orphaned")
        .unwrap_or_default();
    assert_eq!(
        graph.get(at + 1..at + 4),
        Some(&["left"; 3][..]),
        "{graph:?}"
    );
    assert_eq!(
        records.iter().filter(|r| r["graph"] == "deleted").count(),
        1,
        "the Deployment's"
    );
}

/// Flag mistakes are usage errors (exit 2) naming the flag: `--events` needs the Events'
/// `involvedObject`, which `--metadata-only` leaves out; `--follow-kinds` needs `--follow`
/// and resources.
#[test]
fn flag_mistakes_are_usage_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cases: [(&[&str], &str); 3] = [
        (
            &["pods", "--events", "--metadata-only"],
            "'--events' cannot be used with",
        ),
        (&["pods", "--follow-kinds", "cm"], "--follow"),
        (
            &["pods", "--follow", "--follow-kinds", "+"],
            "--follow-kinds \"+\"",
        ),
    ];
    for (args, says) in cases {
        let mut cmd = crate::util::kwatch::command(dir.path());
        cmd.args(args);
        let out = Running::spawn(cmd).finish(LIMIT).exits(2);
        assert!(out.stderr.contains(says), "{args:?}: {}", out.stderr);
    }
}
