//! Kubernetes' protobuf on the wire: the simulator answers
//! `Accept: application/vnd.kubernetes.protobuf, application/json` in protobuf for its
//! built-in kinds (lists, objects, Status errors, watches and streaming lists as
//! length-prefixed WatchEvent frames) and in JSON for custom resources and Tables; what
//! it writes decodes to the JSON it writes for the same request.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use kwatch::client::protobuf::{self, Table};

use crate::util::shared::Table as TextTable;
use crate::util::{eventually, SimProcess};

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf, application/json";
const JSON: &str = "application/json";
/// kwatch's `Accept` for the server's Table, kubectl get's.
const TABLE_ACCEPT: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

fn table() -> &'static Table {
    Table::for_minor(32).unwrap().unwrap()
}

/// A protobuf list's JSON as the apiserver writes it: kind, apiVersion, metadata, items.
fn list_json(bytes: &[u8]) -> Value {
    let mut items = Vec::new();
    let head = protobuf::list(table(), bytes, |item| {
        items.push(serde_json::from_slice::<Value>(item).unwrap())
    })
    .unwrap();
    json!({
        "kind": head.kind,
        "apiVersion": head.api_version,
        "metadata": serde_json::from_slice::<Value>(&head.metadata).unwrap(),
        "items": items,
    })
}

fn object_json(bytes: &[u8]) -> Value {
    let mut out = Vec::new();
    protobuf::object(table(), bytes, &mut out).unwrap();
    serde_json::from_slice(&out).unwrap()
}

/// A protobuf watch body's events as `{"type", "object"}`.
fn frames_json(mut body: &[u8]) -> Vec<Value> {
    let mut events = Vec::new();
    while let Some((frame, used)) = protobuf::frame(body) {
        let e = protobuf::watch_event(table(), frame).unwrap();
        let object: Value = serde_json::from_slice(&e.object).unwrap();
        events.push(json!({"type": e.event_type, "object": object}));
        body = &body[used..];
    }
    assert!(body.is_empty(), "a partial frame at the end");
    events
}

fn lines_json(body: &[u8]) -> Vec<Value> {
    body.split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect()
}

fn create_cm(sim: &SimProcess, name: &str) {
    let body =
        json!({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":name},"data":{"k":"v"}});
    let r = sim.send_json(
        "POST",
        "/api/v1/namespaces/default/configmaps",
        &body.to_string(),
    );
    assert_eq!(r.status, 201, "{}", r.body);
}

#[test]
fn the_simulator_answers_lists_objects_and_errors_in_protobuf_when_asked() {
    let sim = SimProcess::start(&["--objects", "3"]);
    for path in ["/api/v1/pods?limit=2", "/api/v1/namespaces/default/pods"] {
        let (status, ct, pb) = sim.get_bytes(path, &[("accept", PROTOBUF)]);
        assert_eq!(
            (status, ct.as_str()),
            (200, "application/vnd.kubernetes.protobuf")
        );
        assert!(pb.starts_with(protobuf::MAGIC));
        let (_, ct, js) = sim.get_bytes(path, &[("accept", JSON)]);
        assert_eq!(ct, "application/json");
        let want: Value = serde_json::from_slice(&js).unwrap();
        assert_eq!(list_json(&pb), want, "{path}");
    }
    let name = sim.get("/api/v1/namespaces/default/pods").json()["items"][0]["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    let path = format!("/api/v1/namespaces/default/pods/{name}");
    let (_, ct, pb) = sim.get_bytes(&path, &[("accept", PROTOBUF)]);
    assert_eq!(ct, "application/vnd.kubernetes.protobuf");
    assert_eq!(object_json(&pb), sim.get(&path).json());
    // An error is a metav1.Status in protobuf, with the JSON's status code.
    let missing = "/api/v1/namespaces/default/pods/nope";
    let (status, ct, pb) = sim.get_bytes(missing, &[("accept", PROTOBUF)]);
    assert_eq!(
        (status, ct.as_str()),
        (404, "application/vnd.kubernetes.protobuf")
    );
    assert_eq!(object_json(&pb), sim.get(missing).json());
}

/// The objects the server holds under `collection` (a list's path), keyed as kwatch keys
/// them (`namespace/name`, or `name`), without what kwatch may print otherwise: the type
/// (a list's items have none) and `metadata.managedFields`.
fn served_objects(sim: &SimProcess, collection: &str) -> BTreeMap<String, Value> {
    let list = sim.get(collection).json();
    let items = list["items"].as_array().expect("items").iter();
    items.map(|o| (key_of(o), bare(o))).collect()
}

fn key_of(object: &Value) -> String {
    let meta = &object["metadata"];
    let name = meta["name"].as_str().expect("a name");
    match meta["namespace"].as_str() {
        Some(ns) => format!("{ns}/{name}"),
        None => name.to_owned(),
    }
}

/// `object` without `kind`, `apiVersion` and `metadata.managedFields`.
fn bare(object: &Value) -> Value {
    let mut o = object.clone();
    if let Some(m) = o.as_object_mut() {
        m.remove("kind");
        m.remove("apiVersion");
    }
    if let Some(m) = o["metadata"].as_object_mut() {
        m.remove("managedFields");
    }
    o
}

/// The objects a run's delta records leave, as [`served_objects`] gives the server's.
fn informed(records: &[Value]) -> BTreeMap<String, Value> {
    let mut objects = BTreeMap::new();
    for r in records.iter().filter(|r| kw_is_delta(r)) {
        let key = r["key"].as_str().expect("a key").to_owned();
        match r["type"] == "Deleted" {
            true => objects.remove(&key),
            false => objects.insert(key, bare(&r["object"])),
        };
    }
    objects
}

fn read_records(path: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    (text.lines())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// `--wire protobuf` gets protobuf for the built-in types only. Three watches with it: of a
/// custom resource (widgets, `-o json`), of storageclasses at the table (which kwatch
/// prints from the server's Table) and of pods (`-o json`). kwatch's records say what each
/// asked for (`List`) and got (`Listed`): JSON for the custom resource and the Table,
/// protobuf for pods, never a fallback; the simulator's log says the same of the lists and
/// of the watches (which no record names); through the list and a change on each watch,
/// each run ends with the objects the server holds, and the table shows the Table's cells.
/// The simulator answers the two in JSON even when protobuf is asked, as kube-apiserver
/// does (kwatch never asks it so).
#[test]
fn custom_resources_and_tables_stay_json_when_protobuf_is_asked() {
    let sim = SimProcess::start(&["--objects", "4"]);
    let (fast, slow) = storage_classes();
    kubectl_f(&sim, "create", &fast);
    let watched = |kw: &mut Running| {
        kw.wait_for(LIMIT, "Watch", |v| !of_type(v, "Watch").is_empty());
    };
    let args = "-n default -o json --watch-list off --wire protobuf";
    let mut widgets = sim.start_kwatch(format!("widgets {args}"));
    watched(&mut widgets);
    let mut pods = sim.start_kwatch(format!("pods {args}"));
    watched(&mut pods);
    let (table, record) = sim.start_recording(
        "table.jsonl",
        "storageclasses --watch-list off --wire protobuf",
    );
    let recorded = |what: &str, pred: &dyn Fn(&[Value]) -> bool| {
        eventually(LIMIT, what, || match read_records(&record) {
            recs if pred(&recs) => Ok(recs),
            recs => Err(recs),
        })
    };
    recorded("the table's Watch", &|v| !of_type(v, "Watch").is_empty());

    // A change on each watch.
    kubectl_f(
        &sim,
        "create",
        &json!({"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w3", "namespace": "default"}, "spec": {"size": 7}}),
    );
    kubectl_f(&sim, "create", &slow);
    let pod = served_objects(&sim, "/api/v1/namespaces/default/pods");
    let pod = pod.values().next().expect("a pod")["metadata"]["name"].clone();
    let pod = pod.as_str().expect("a name");
    sim.kubectl_ok(format!("label pod {pod} -n default wire=protobuf"));
    let seen = |key: String, ty: &'static str| {
        move |v: &[Value]| v.iter().any(|r| r["key"] == key && r["type"] == ty)
    };
    widgets.wait_for(LIMIT, "w3", seen("default/w3".into(), "Added"));
    pods.wait_for(
        LIMIT,
        "the label",
        seen(format!("default/{pod}"), "Updated"),
    );
    let table_records = recorded("slow", &seen("slow".into(), "Added"));
    eventually(LIMIT, "slow's row", || match table.lines() {
        l if l.iter().any(|l| l.contains(" slow ")) => Ok(()),
        l => Err(l),
    });
    let table_lines = table.lines();
    table.terminate(LIMIT);
    let runs = [
        ("widgets", widgets.terminate(LIMIT).json(), "json"),
        ("pods", pods.terminate(LIMIT).json(), "protobuf"),
        ("storageclasses", table_records, "json"),
    ];
    for (resource, records, wire) in &runs {
        let asked: Vec<&Value> = of_type(records, "List")
            .iter()
            .map(|r| &r["encoding"])
            .collect();
        assert_eq!(
            asked,
            [&json!(format!("{wire}+gzip"))],
            "{resource}: {records:#?}"
        );
        let got: Vec<&Value> = of_type(records, "Listed")
            .iter()
            .map(|r| &r["encoding"])
            .collect();
        assert_eq!(got, [&json!(wire)], "{resource}: {records:#?}");
        assert!(
            of_type(records, "WireFallback").is_empty(),
            "{resource}: {records:#?}"
        );
    }
    let collections = [
        "/apis/example.com/v1/namespaces/default/widgets",
        "/api/v1/namespaces/default/pods",
        "/apis/storage.k8s.io/v1/storageclasses",
    ];
    for ((resource, records, _), collection) in runs.iter().zip(collections) {
        let want = served_objects(&sim, collection);
        assert!(want.len() >= 2, "{resource}: {want:#?}");
        assert_eq!(informed(records), want, "{resource}");
    }
    let (_, pods_records, _) = &runs[1];
    let label = &informed(pods_records)[&format!("default/{pod}")]["metadata"]["labels"]["wire"];
    assert_eq!(label, "protobuf", "the watch's update");
    // The table: the Table's rows and cells (PROVISIONER is the server's column).
    let table = TextTable::parse(&table_lines.iter().map(String::as_str).collect::<Vec<_>>());
    let (delta, provisioner) = (table.col("DELTA"), table.col("PROVISIONER"));
    for (name, how, by) in [
        ("fast", "Replaced", "kubernetes.io/no-provisioner"),
        ("slow", "Added", "example.com/nfs"),
    ] {
        let row = table.row(name);
        assert_eq!(
            (row[delta].as_str(), row[provisioner].as_str()),
            (how, by),
            "{table_lines:#?}"
        );
    }

    // What the simulator answered kwatch's lists and watches.
    for (collection, accept, content_type) in [
        (collections[0], JSON, JSON),
        (collections[2], TABLE_ACCEPT, JSON),
    ] {
        let log = kwatchs_requests(&sim, collection);
        assert!(log.iter().any(|(p, _, _)| p.contains("watch=")), "{log:#?}");
        assert!(
            log.iter()
                .all(|(_, a, ct)| a == accept && ct == content_type),
            "{log:#?}"
        );
    }
    let log = kwatchs_requests(&sim, collections[1]);
    let (watches, lists): (Vec<_>, Vec<_>) = log.iter().partition(|(p, _, _)| p.contains("watch="));
    assert!(!watches.is_empty() && !lists.is_empty(), "{log:#?}");
    assert!(
        watches
            .iter()
            .all(|(_, a, ct)| a == PROTOBUF && ct == WATCH_PB),
        "{log:#?}"
    );
    assert!(
        lists
            .iter()
            .all(|(_, a, ct)| a == PROTOBUF && ct == "application/vnd.kubernetes.protobuf"),
        "{log:#?}"
    );

    // Asked for protobuf, the simulator still answers these two in JSON.
    let (status, ct, body) = sim.get_bytes(collections[0], &[("accept", PROTOBUF)]);
    assert_eq!(
        (status, ct.as_str()),
        (200, JSON),
        "{}",
        String::from_utf8_lossy(&body)
    );
    let table = "application/json;as=Table;v=v1;g=meta.k8s.io, application/vnd.kubernetes.protobuf, application/json";
    let (_, ct, body) = sim.get_bytes("/api/v1/pods", &[("accept", table)]);
    assert_eq!(ct, JSON);
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["kind"], "Table");
}

/// Two StorageClasses, `fast` and `slow`, of two provisioners.
fn storage_classes() -> (Value, Value) {
    let class = |name: &str, provisioner: &str| {
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": name}, "provisioner": provisioner})
    };
    (
        class("fast", "kubernetes.io/no-provisioner"),
        class("slow", "example.com/nfs"),
    )
}

/// A watch from before some changes (replayed from the history) and a streaming list: the
/// same events as the JSON watch, as frames, bookmarks included.
#[test]
fn watches_and_streaming_lists_are_protobuf_frames_of_the_json_events() {
    let sim = SimProcess::start(&["--objects", "2"]);
    let rv = sim.get("/api/v1/configmaps").json()["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    create_cm(&sim, "a");
    create_cm(&sim, "b");
    let r = sim.delete("/api/v1/namespaces/default/configmaps/a");
    assert_eq!(r.status, 200, "{}", r.body);
    let watch = format!("/api/v1/configmaps?watch=1&resourceVersion={rv}&timeoutSeconds=1");
    let streaming = "/api/v1/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1";
    for path in [watch.as_str(), streaming] {
        let (status, ct, pb) = sim.get_bytes(path, &[("accept", PROTOBUF)]);
        assert_eq!(
            (status, ct.as_str()),
            (200, "application/vnd.kubernetes.protobuf;stream=watch")
        );
        let (_, _, js) = sim.get_bytes(path, &[("accept", JSON)]);
        // Periodic bookmarks depend on the clock; the initial-events-end one does not.
        let settled = |events: Vec<Value>| -> Vec<Value> {
            events
                .into_iter()
                .filter(|e| {
                    e["type"] != "BOOKMARK"
                        || !e["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"]
                            .is_null()
                })
                .collect()
        };
        let (got, want) = (settled(frames_json(&pb)), settled(lines_json(&js)));
        assert!(want.len() >= 3, "{path}: {want:?}");
        assert_eq!(got, want, "{path}");
    }
}

/// The delta records of a run without their clocks: what must not depend on the wire.
fn deltas(records: &[Value]) -> Vec<Value> {
    records
        .iter()
        .filter(|r| kw_is_delta(r))
        .map(|r| {
            let mut r = r.clone();
            if let Some(o) = r.as_object_mut() {
                o.remove("time");
            }
            r
        })
        .collect()
}

use crate::util::kwatch::{
    is_delta as kw_is_delta, kubectl_f, of_type, on_new_sim, watching_configmaps, Running,
};
use crate::util::LIMIT;

const WATCH_PB: &str = "application/vnd.kubernetes.protobuf;stream=watch";

/// The (accept, contentType) of the simulator's answers to requests under `prefix`.
fn answered(sim: &SimProcess, prefix: &str) -> Vec<(String, String, String)> {
    let log = sim.get("/_sim/requests").json();
    log["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["path"].as_str().is_some_and(|p| p.starts_with(prefix)))
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap_or_default().to_owned();
            (s("path"), s("accept"), s("contentType"))
        })
        .collect()
}

/// [`answered`] of kwatch's lists and watches only (each names a `resourceVersion`).
fn kwatchs_requests(sim: &SimProcess, prefix: &str) -> Vec<(String, String, String)> {
    let mut log = answered(sim, prefix);
    log.retain(|(p, _, _)| p.contains("resourceVersion="));
    log
}

fn cm(name: &str, value: &str) -> Value {
    json!({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":name,"namespace":"default"},"data":{"k":value}})
}

/// Both runs have seen `what` (a predicate on their delta records).
fn both_see(runs: &mut [&mut Running; 2], what: &str, pred: impl Fn(&[Value]) -> bool) {
    for kw in runs.iter_mut() {
        kw.wait_for(LIMIT, what, |v| pred(&deltas(v)));
    }
}

fn has(v: &[Value], kind: &str, name: &str) -> bool {
    v.iter().any(|r| r["type"] == kind && r["name"] == name)
}

/// `--wire protobuf` prints what `--wire json` prints, through a list, a
/// watch's adds, updates and deletes, and a relist after a 410; the protobuf run's lists
/// and watches were answered in protobuf, the JSON run's in JSON.
#[test]
fn protobuf_and_json_wires_print_the_same_records() {
    let sim = SimProcess::start(&[]);
    let mut pb = watching_configmaps(&sim, &["--wire", "protobuf"]);
    let mut js = watching_configmaps(&sim, &["--wire", "json"]);
    kubectl_f(&sim, "create", &cm("a", "1"));
    kubectl_f(&sim, "create", &cm("b", "1"));
    kubectl_f(&sim, "replace", &cm("a", "2"));
    sim.kubectl_ok("delete configmap b -n default");
    both_see(&mut [&mut pb, &mut js], "b's delete", |v| {
        has(v, "Deleted", "b")
    });
    sim.forced_410(|sim| {
        kubectl_f(sim, "create", &cm("c", "1"));
        sim.kubectl_ok("delete configmap a -n default");
    });
    both_see(&mut [&mut pb, &mut js], "the relist", |v| {
        has(v, "Replaced", "c") && has(v, "Deleted", "a")
    });
    let (pb, js) = (pb.terminate(LIMIT), js.terminate(LIMIT));
    let (p, j) = (deltas(&pb.json()), deltas(&js.json()));
    assert!(p.len() >= 8, "{p:#?}");
    assert_eq!(p, j, "stderr of the protobuf run:\n{}", pb.stderr);
    assert!(
        of_type(&pb.json(), "Listed").len() >= 2,
        "no relist: {:#?}",
        pb.json()
    );
    // Each run's Listed names the wire its lists came over.
    for (run, want) in [(&pb, "protobuf"), (&js, "json")] {
        for listed in of_type(&run.json(), "Listed") {
            assert_eq!(listed["encoding"], want, "{listed}");
        }
    }
    let log = answered(&sim, "/api/v1/namespaces/default/configmaps");
    let protobuf: Vec<_> = log
        .iter()
        .filter(|(_, a, _)| a.contains("protobuf"))
        .collect();
    assert!(
        protobuf
            .iter()
            .any(|(p, _, ct)| !p.contains("watch=") && ct == "application/vnd.kubernetes.protobuf"),
        "{log:#?}"
    );
    assert!(
        protobuf
            .iter()
            .any(|(p, _, ct)| p.contains("watch=") && ct == WATCH_PB),
        "{log:#?}"
    );
    assert!(
        log.iter()
            .any(|(_, a, ct)| a == "application/json" && ct == "application/json"),
        "{log:#?}"
    );
}

/// A streaming list (`--watch-list on`) in protobuf: the same records as in JSON, and read
/// in protobuf, not after a fallback to JSON: one streaming `List` that asked protobuf, its
/// `Listed` says protobuf came (uncompressed: the server is older than 1.37), and no
/// `WireFallback`.
#[test]
fn a_streaming_list_in_protobuf_prints_what_json_prints() {
    let sim = SimProcess::start(&[]);
    let run = |wire: &str| {
        let args =
            format!("configmaps -n default -o json --watch-list on --until-synced --wire {wire}");
        sim.kwatch(args).success().json()
    };
    let (p, j) = (run("protobuf"), run("json"));
    assert!(!deltas(&p).is_empty());
    assert_eq!(deltas(&p), deltas(&j));
    for (records, wire) in [(&p, "protobuf"), (&j, "json")] {
        assert!(of_type(records, "WireFallback").is_empty(), "{records:#?}");
        let streamed = |r: &&Value| r["streaming"] == true;
        let lists = of_type(records, "List");
        let listed = of_type(records, "Listed");
        assert_eq!((lists.len(), listed.len()), (1, 1), "{wire}: {records:#?}");
        assert!(streamed(&lists[0]) && streamed(&listed[0]), "{records:#?}");
        assert_eq!(lists[0]["encoding"], format!("{wire}+gzip"), "{records:#?}");
        assert_eq!(listed[0]["encoding"], wire, "{records:#?}");
    }
    let log = answered(&sim, "/api/v1/namespaces/default/configmaps");
    assert!(
        log.iter()
            .any(|(p, _, ct)| p.contains("sendInitialEvents=true") && ct == WATCH_PB),
        "{log:#?}"
    );
}

/// `--wire auto` on a custom resource asks JSON, as expected, and says nothing of it
/// (`-v` does); `--wire protobuf` asked for protobuf, and is told why it gets JSON.
#[test]
fn auto_reads_custom_resources_in_json_silently_and_protobuf_says_why() {
    let (sim, out) = on_new_sim(&[], "widgets -A -o json --until-synced --wire auto");
    let out = out.success();
    assert!(!out.stderr.contains("JSON on the wire"), "{}", out.stderr);
    for args in ["--wire auto -v", "--wire protobuf"] {
        let out = sim
            .kwatch(format!("widgets -A -o json --until-synced {args}").as_str())
            .success();
        assert!(
            out.stderr.contains("JSON on the wire"),
            "{args}: {}",
            out.stderr
        );
    }
    let log = answered(&sim, "/apis/example.com/v1/widgets");
    assert!(!log.is_empty());
    assert!(
        log.iter()
            .all(|(_, a, ct)| a == "application/json" && ct.starts_with("application/json")),
        "{log:#?}"
    );
    let out = sim
        .kwatch("configmaps -A -o json --until-synced --wire auto")
        .success();
    assert!(!out.stderr.contains("JSON on the wire"), "{}", out.stderr);
    let log = answered(&sim, "/api/v1/configmaps");
    assert!(
        log.iter()
            .any(|(_, _, ct)| ct == "application/vnd.kubernetes.protobuf"),
        "{log:#?}"
    );
}

/// A field kwatch's table does not know (the simulator's
/// `unknown-field`, as a newer server's type) is never dropped: the list is asked again in
/// JSON, the records are those of `--wire json`, one `WireFallback` record (one `~` line
/// at a terminal) names the field, `--stats` counts it, and the resource stays JSON.
#[test]
fn a_field_the_table_does_not_know_falls_back_to_json_once_and_is_counted() {
    let sim = SimProcess::start(&["--objects", "3"]);
    let args = "configmaps -A -o json --until-synced --watch-list off --stats";
    let want = deltas(&sim.kwatch(format!("{args} --wire json")).success().json());
    assert!(!want.is_empty());
    sim.control("POST", "/_sim/unknown-field", json!({"count": 1}));
    let out = sim.kwatch(args).success();
    let recs = out.json();
    assert_eq!(deltas(&recs), want, "{}", out.stderr);
    let fallback = of_type(&recs, "WireFallback");
    assert_eq!(fallback.len(), 1, "{recs:#?}");
    let error = fallback[0]["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("field 99 of k8s.io.api.core.v1.ConfigMapList"),
        "{error}"
    );
    let asked: Vec<_> = of_type(&recs, "List")
        .iter()
        .map(|l| l["encoding"].clone())
        .collect();
    assert_eq!(asked, [json!("protobuf+gzip")], "{recs:#?}");
    let listed = of_type(&recs, "Listed");
    assert_eq!(listed.len(), 1, "{recs:#?}");
    assert_eq!(listed[0]["encoding"], "json", "{recs:#?}");
    assert!(
        out.stderr
            .contains("protobuf fallbacks: 1 (resources read in JSON from then on)"),
        "{}",
        out.stderr
    );
    // After the protobuf list, everything in JSON: the list again, the watch.
    let log = answered(&sim, "/api/v1/configmaps");
    let at = log
        .iter()
        .rposition(|(_, _, ct)| ct == "application/vnd.kubernetes.protobuf")
        .expect("a list answered in protobuf");
    let after = &log[at + 1..];
    assert!(
        !after.is_empty() && after.iter().all(|(_, a, ct)| a == JSON && ct == JSON),
        "{log:#?}"
    );

    // At a terminal's table: one `~` line.
    sim.control("POST", "/_sim/unknown-field", json!({"count": 1}));
    let out = sim
        .kwatch("configmaps -A --until-synced --watch-list off")
        .success();
    assert_eq!(
        out.stderr
            .matches("configmaps in JSON from now on: protobuf: field 99")
            .count(),
        1,
        "{}",
        out.stderr
    );
}

/// A delta record's line as kwatch wrote it, without its clock (`"time":"…",`).
fn line_without_time(line: &str) -> String {
    let Some(at) = line.find("\"time\":\"") else {
        return line.to_owned();
    };
    let end = line[at + 8..]
        .find("\",")
        .map_or(line.len(), |e| at + 8 + e + 2);
    format!("{}{}", &line[..at], &line[end..])
}

/// Every kind the simulator serves prints the same bytes over both wires: it stores each
/// built-in object as kube-apiserver does, as Go's JSON of its type (`sim::wire::as_stored`),
/// so its JSON is what its protobuf decodes to — the seeded Nodes, Events, Deployments and
/// ReplicaSets too, whose JSON used to lack Go's zero values (`"resources":{}`, a
/// template's `"creationTimestamp":null`, a Node's `daemonEndpoints`).
#[test]
fn every_kind_prints_the_same_bytes_over_both_wires() {
    let sim = SimProcess::start(&[]);
    let names = sim.kubectl_ok("api-resources --verbs=list,watch -o name");
    let names: Vec<&str> = names.lines().collect();
    assert!(names.len() > 30, "{names:?}");
    let run = |wire: &str| {
        let kw = sim.kwatch(vec![
            names.join(","),
            "-A".into(),
            "-o".into(),
            "json".into(),
            "--until-synced".into(),
            "--wire".into(),
            wire.into(),
        ]);
        assert_eq!(kw.code(), Some(0), "{}", kw.stderr);
        let listed: Vec<Value> = of_type(&kw.json(), "Listed").into_iter().cloned().collect();
        let mut deltas: Vec<String> = (kw.stdout.iter())
            .filter(|l| serde_json::from_str::<Value>(l).is_ok_and(|r| kw_is_delta(&r)))
            .map(|l| line_without_time(l))
            .collect();
        deltas.sort();
        (deltas, listed)
    };
    let (pb, pb_listed) = run("protobuf");
    let (js, _) = run("json");
    for kind in [
        "\"Node\"",
        "\"Event\"",
        "\"Deployment\"",
        "\"ReplicaSet\"",
        "\"Pod\"",
    ] {
        assert!(
            pb.iter().any(|l| l.contains(&format!("\"kind\":{kind}"))),
            "no {kind} listed: {pb:#?}"
        );
    }
    // Lists of built-in kinds came in protobuf, the custom resource's in JSON.
    let encoding = |resource: &str| {
        let l = pb_listed.iter().find(|l| l["resource"] == resource);
        l.map(|l| l["encoding"].clone())
    };
    for resource in [
        "pods",
        "nodes",
        "events",
        "deployments.apps",
        "replicasets.apps",
    ] {
        assert_eq!(encoding(resource), Some(json!("protobuf")), "{resource}");
    }
    assert_eq!(encoding("widgets.example.com"), Some(json!("json")));
    for (p, j) in pb.iter().zip(&js) {
        assert_eq!(p, j);
    }
    assert_eq!(pb.len(), js.len());
}

/// A StatefulSet's volumeClaimTemplates: a genuine kube-apiserver serves each as
/// `{"kind":"PersistentVolumeClaim","apiVersion":"v1",…}` (its conversion sets them on
/// every read, kubernetes pkg/apis/apps/v1/conversion.go), though the protobuf wire has no
/// field for them. The simulator stores them so, `kubectl get --raw` shows them, and
/// `--wire protobuf` (and `auto`) print the bytes `--wire json` prints.
#[test]
fn a_statefulsets_claim_templates_keep_their_kind_on_every_wire() {
    let sim = SimProcess::start(&[]);
    let sts = json!({
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "default"},
        "spec": {
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {"containers": [{"name": "pg", "image": "postgres:16"}]}
            },
            "volumeClaimTemplates": [{
                "metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
            }]
        }
    });
    kubectl_f(&sim, "create", &sts);
    let raw = sim.kubectl_ok("get --raw /apis/apps/v1/namespaces/default/statefulsets/db");
    assert!(
        raw.contains(r#""volumeClaimTemplates":[{"kind":"PersistentVolumeClaim","apiVersion":"v1","metadata":{"name":"data""#),
        "{raw}"
    );
    let run = |wire: &str| {
        let out = sim
            .kwatch(format!(
                "statefulsets -n default -o json --until-synced --wire {wire}"
            ))
            .success();
        let lines: Vec<String> = (out.stdout.iter())
            .filter(|l| serde_json::from_str::<Value>(l).is_ok_and(|r| kw_is_delta(&r)))
            .map(|l| line_without_time(l))
            .collect();
        (lines, out.json())
    };
    let (js, js_records) = run("json");
    assert_eq!(js.len(), 1, "{js:#?}");
    assert!(
        js[0].contains(r#""volumeClaimTemplates":[{"kind":"PersistentVolumeClaim","apiVersion":"v1","metadata""#),
        "{}",
        js[0]
    );
    for wire in ["protobuf", "auto"] {
        let (pb, records) = run(wire);
        assert_eq!(pb, js, "--wire {wire}");
        let listed = of_type(&records, "Listed");
        assert_eq!(
            listed[0]["encoding"], "protobuf",
            "--wire {wire}: {records:#?}"
        );
    }
    let listed = of_type(&js_records, "Listed");
    assert_eq!(listed[0]["encoding"], "json");
}

/// Pods as a genuine server serves them (`--pod-size realistic`: managedFields of four
/// managers, half their bytes): a run that never reads managedFields reads them without
/// (a protobuf body's are never decoded), and prints the bytes `--wire json` prints, in
/// JSON lines, YAML and watch events; `--show-managed-fields` keeps them, on both wires.
#[test]
fn realistic_pods_print_the_same_bytes_over_both_wires_managed_fields_hidden_or_shown() {
    let sim = SimProcess::start(&[
        "--objects",
        "40",
        "--pod-size",
        "realistic",
        "--scenario",
        "idle",
    ]);
    for format in [
        "-o json",
        "-o yaml",
        "-o watch-events",
        "-o json --show-managed-fields",
    ] {
        let run = |wire: &str| {
            let out = sim
                .kwatch(format!(
                    "pods -A {format} --until-synced --watch-list off --wire {wire}"
                ))
                .success();
            // The records of each delta, without their clock (`List` and `Listed` name
            // the wire).
            let kept: Vec<String> = match format.contains("yaml") {
                true => (out.stdout.join("\n").split("---\n"))
                    .filter(|doc| !doc.starts_with("type: List"))
                    .map(|doc| {
                        let lines = doc.lines().filter(|l| !l.starts_with("time: "));
                        lines.collect::<Vec<_>>().join("\n")
                    })
                    .collect(),
                false => (out.stdout.iter())
                    .filter(|l| !l.contains("\"type\":\"List"))
                    .map(|l| line_without_time(l))
                    .collect(),
            };
            kept.join("\n")
        };
        let (pb, js) = (run("protobuf"), run("json"));
        assert_eq!(pb, js, "{format}");
        let managed = pb.matches("managedFields").count();
        match format.contains("--show-managed-fields") {
            true => assert!(managed >= 40, "{format}: {managed}"),
            false => assert_eq!(managed, 0, "{format}"),
        }
        assert!(pb.matches("web-").count() >= 40, "{format}: {pb}");
    }
}

/// A pod's watch event that the table cannot decode (the simulator's field 99) ends the
/// protobuf watch, and the relist comes in JSON. `-o watch-events` prints MODIFIED for a
/// relisted object whose bytes differ from the known version's, so the pods that did not
/// change must print nothing: read without managedFields in protobuf, they are cut out of
/// the JSON too, and the store holds one form of each object whichever wire brought it.
#[test]
fn a_relist_in_json_after_a_protobuf_watch_prints_no_unchanged_pod_as_modified() {
    let sim = SimProcess::start(&[
        "--objects",
        "4",
        "--pod-size",
        "realistic",
        "--scenario",
        "idle",
    ]);
    let names = sim.kubectl_ok(
        "get pods -A -o custom-columns=NS:.metadata.namespace,N:.metadata.name --no-headers",
    );
    let pods: Vec<(&str, &str)> = (names.lines())
        .filter_map(|l| l.split_once(char::is_whitespace))
        .map(|(ns, n)| (ns, n.trim()))
        .collect();
    assert!(pods.len() >= 4, "{names}");
    let mut kw = sim.start_kwatch("pods -A -o watch-events --watch-list off --wire protobuf");
    let events = |v: &[Value], t: &str| v.iter().filter(|e| e["type"] == t).count();
    kw.wait_for(LIMIT, "the pods added", |v| {
        events(v, "ADDED") == pods.len()
    });
    sim.control("POST", "/_sim/unknown-field", json!({"count": 1}));
    let label = |(ns, name): (&str, &str)| {
        sim.kubectl_ok(format!("label pod {name} -n {ns} kwatch-test=changed").as_str());
    };
    // The first change comes in protobuf, with field 99 (or in JSON, after a bookmark that
    // had it): either way a relist in JSON and its MODIFIED.
    label(pods[0]);
    kw.wait_for(LIMIT, "the first change", |v| events(v, "MODIFIED") >= 1);
    // The second change comes after the relist's deltas.
    label(pods[1]);
    let v = kw.wait_for(LIMIT, "the second change", |v| {
        v.iter()
            .any(|e| e["type"] == "MODIFIED" && e["object"]["metadata"]["name"] == pods[1].1)
    });
    kw.terminate(LIMIT);
    let modified: Vec<&Value> = (v.iter())
        .filter(|e| e["type"] == "MODIFIED")
        .map(|e| &e["object"]["metadata"]["name"])
        .collect();
    assert_eq!(modified, [pods[0].1, pods[1].1], "{v:#?}");
    let log = answered(&sim, "/api/v1/pods");
    assert!(
        log.iter()
            .any(|(p, a, _)| !p.contains("watch=") && a == JSON),
        "no relist in JSON: {log:#?}"
    );
}
