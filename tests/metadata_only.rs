//! `--metadata-only`: kwatch lists and watches PartialObjectMetadata as
//! client-go's metadata informer does, for built-in and custom resources, through LIST,
//! WATCH and streaming lists; the simulator serves those media types as kube-apiserver
//! 1.32 answers them (as captured from a genuine server) and refuses an unknown one with its 406.

use std::time::Duration;

use serde_json::{json, Value};

use crate::util::kwatch::{command, is_delta, kubectl_f, of_type, on_new_sim, Running};
use crate::util::{SimProcess, LIMIT};

/// The JSON `Accept` of a metadata-only list, and of its watches (client-go's JSON
/// alternatives, `metadata/metadata.go`): kwatch's with `--wire json`.
const ACCEPT_LIST: &str =
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
const ACCEPT_WATCH: &str =
    "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";

/// kwatch's by default (`--wire auto`), client-go's metadata client's: protobuf first, for
/// every resource.
const ACCEPT_LIST_PB: &str = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
const ACCEPT_WATCH_PB: &str = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";

/// A delta record's object is metadata only: PartialObjectMetadata with the object's
/// name, and none of the resource's own fields; the record still names the resource.
fn assert_metadata_only(r: &Value) {
    let o = &r["object"];
    assert_eq!(o["kind"], "PartialObjectMetadata", "{r}");
    assert_eq!(o["apiVersion"], "meta.k8s.io/v1", "{r}");
    assert_eq!(o["metadata"]["name"], r["name"], "{r}");
    assert!(o["metadata"]["uid"].is_string(), "{r}");
    for field in ["spec", "data", "status", "type"] {
        assert!(o.get(field).is_none(), "{field} in {r}");
    }
    assert_ne!(r["kind"], "PartialObjectMetadata", "{r}");
}

/// The GETs the simulator answered: (path, Accept).
fn requests(sim: &SimProcess) -> Vec<(String, String)> {
    sim.get("/_sim/requests").json()["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["method"] == "GET")
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap_or_default().to_owned();
            (s("path"), s("accept"))
        })
        .collect()
}

/// The Accept of every list and every watch of `collection` (`/api/v1/namespaces/default/pods`)
/// kwatch sent: those without a field selector (kubectl's wait for a deletion has one).
fn accepts(sim: &SimProcess, collection: &str) -> (Vec<String>, Vec<String>) {
    let (mut lists, mut watches) = (Vec::new(), Vec::new());
    for (path, accept) in requests(sim) {
        let (p, query) = path.split_once('?').unwrap_or((&path, ""));
        if p != collection || query.contains("fieldSelector=") {
            continue;
        }
        if query
            .split('&')
            .any(|kv| kv == "watch=true" || kv == "watch=1")
        {
            watches.push(accept);
        } else {
            lists.push(accept);
        }
    }
    (lists, watches)
}

fn merge_patch(sim: &SimProcess, what: &str, name: &str, labels: Value) {
    let patch = json!({"metadata": {"labels": labels}}).to_string();
    sim.kubectl_ok([
        "patch", what, name, "-n", "default", "--type", "merge", "-p", &patch,
    ]);
}

/// LIST, then WATCH: the initial list and every add, update and delete of a pod, a
/// configmap and a custom resource carry PartialObjectMetadata, and the requests asked
/// for it.
#[test]
fn lists_and_watches_carry_partial_object_metadata() {
    let sim = SimProcess::start(&["--objects", "4"]);
    let mut kw = sim.start_kwatch(
        "pods,configmaps,widgets -n default -o json --metadata-only --watch-list off",
    );
    let recs = kw.wait_for(LIMIT, "three Synced", |v| of_type(v, "Synced").len() == 3);
    let initial: Vec<&Value> = recs.iter().filter(|r| is_delta(r)).collect();
    for kind in ["Pod", "ConfigMap", "Widget"] {
        assert!(initial.iter().any(|r| r["kind"] == kind), "no {kind}");
    }
    initial.iter().for_each(|r| assert_metadata_only(r));

    let pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "meta-pod", "namespace": "default", "labels": {"step": "1"}},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]}});
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "meta-cm", "namespace": "default", "labels": {"step": "1"}},
        "data": {"secret-ish": "not in the records"}});
    let widget = json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "meta-w", "namespace": "default", "labels": {"step": "1"}},
        "spec": {"size": 7, "color": "blue"}});
    for (what, manifest) in [("pod", &pod), ("configmap", &cm), ("widget", &widget)] {
        kubectl_f(&sim, "create", manifest);
        let name = manifest["metadata"]["name"].as_str().unwrap();
        merge_patch(&sim, what, name, json!({"step": "2"}));
        sim.kubectl_ok(format!("delete {what} {name} -n default"));
    }
    let recs = kw.wait_for(LIMIT, "three deletions", |v| {
        ["meta-pod", "meta-cm", "meta-w"]
            .iter()
            .all(|n| v.iter().any(|r| r["type"] == "Deleted" && r["name"] == *n))
    });
    for (name, kind) in [
        ("meta-pod", "Pod"),
        ("meta-cm", "ConfigMap"),
        ("meta-w", "Widget"),
    ] {
        let mine: Vec<&Value> = recs.iter().filter(|r| r["name"] == name).collect();
        let types: Vec<&str> = mine.iter().map(|r| r["type"].as_str().unwrap()).collect();
        assert_eq!(types.first(), Some(&"Added"), "{name}: {types:?}");
        assert_eq!(types.last(), Some(&"Deleted"), "{name}: {types:?}");
        assert!(types.contains(&"Updated"), "{name}: {types:?}");
        for r in &mine {
            assert_metadata_only(r);
            assert_eq!(r["kind"], kind);
        }
        // The update shows in the metadata: the label changed.
        let updated = mine.iter().find(|r| r["type"] == "Updated").unwrap();
        assert_eq!(updated["object"]["metadata"]["labels"]["step"], "2");
    }
    for collection in [
        "/api/v1/namespaces/default/pods",
        "/api/v1/namespaces/default/configmaps",
        "/apis/example.com/v1/namespaces/default/widgets",
    ] {
        let (lists, watches) = accepts(&sim, collection);
        assert_eq!(lists, [ACCEPT_LIST_PB], "{collection}");
        assert!(!watches.is_empty(), "{collection}");
        assert!(watches.iter().all(|a| a == ACCEPT_WATCH_PB), "{watches:?}");
    }
}

/// A streaming list asks for PartialObjectMetadata events, and its initial events and
/// the end bookmark come as the real server sends them under that media type.
#[test]
fn streaming_lists_carry_partial_object_metadata() {
    let args =
        "configmaps,widgets -n default -o json --metadata-only --watch-list on --until-synced";
    let (sim, out) = on_new_sim(&["--objects", "4"], args);
    let recs = out.json();
    let listed = of_type(&recs, "Listed");
    assert_eq!(listed.len(), 2);
    assert!(listed.iter().all(|l| l["streaming"] == true), "{listed:?}");
    let deltas: Vec<&Value> = recs.iter().filter(|r| is_delta(r)).collect();
    assert!(deltas.iter().any(|r| r["kind"] == "ConfigMap"));
    assert!(deltas.iter().any(|r| r["kind"] == "Widget"));
    deltas.iter().for_each(|r| assert_metadata_only(r));
    for collection in [
        "/api/v1/namespaces/default/configmaps",
        "/apis/example.com/v1/namespaces/default/widgets",
    ] {
        let (lists, watches) = accepts(&sim, collection);
        assert!(lists.is_empty(), "{lists:?}");
        assert_eq!(watches, [ACCEPT_WATCH_PB], "{collection}");
    }

    // The same stream, raw: ADDEDs of PartialObjectMetadata, then a PartialObjectMetadata
    // bookmark with the end annotation and an empty PartialObjectMetadataList blueprint.
    let mut w = sim.watch_with(
        "/apis/example.com/v1/namespaces/default/widgets?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=2",
        &[("accept", ACCEPT_WATCH)],
    );
    let events = w.events_to_bookmark(Duration::from_secs(5));
    let (bookmark, added) = events.split_last().unwrap();
    assert!(!added.is_empty());
    for e in added {
        assert_eq!(e["type"], "ADDED");
        assert_eq!(e["object"]["kind"], "PartialObjectMetadata");
        assert!(e["object"].get("spec").is_none(), "{e}");
        let keys: Vec<&String> = e["object"]["metadata"]
            .as_object()
            .unwrap()
            .keys()
            .collect();
        assert_eq!(keys[..3], ["name", "namespace", "uid"], "Go's order: {e}");
    }
    let obj = &bookmark["object"];
    assert_eq!(obj["kind"], "PartialObjectMetadata");
    assert_eq!(obj["metadata"]["creationTimestamp"], Value::Null);
    let annotations = &obj["metadata"]["annotations"];
    assert_eq!(annotations["k8s.io/initial-events-end"], "true");
    assert_eq!(
        annotations["kubernetes.io/initial-events-list-blueprint"],
        // {"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{},"items":null}\n
        "eyJraW5kIjoiUGFydGlhbE9iamVjdE1ldGFkYXRhTGlzdCIsImFwaVZlcnNpb24iOiJtZXRhLms4cy5pby92MSIsIm1ldGFkYXRhIjp7fSwiaXRlbXMiOm51bGx9Cg=="
    );
}

/// The table: NAME, AGE and the label columns for any resource, with NAMESPACE under
/// -A; `kwatch replay` of a metadata-only recording shows the same columns.
#[test]
fn the_table_shows_name_age_and_labels() {
    let sim = SimProcess::start(&["--objects", "4"]);
    let record = sim.dir().join("meta.jsonl");
    let record = record.to_str().unwrap();
    let header = |lines: &[String]| -> Vec<String> {
        lines[0].split_whitespace().map(str::to_owned).collect()
    };
    let out = sim
        .kwatch(format!("configmaps app-config -n default --metadata-only -L app --show-labels --until-synced --record {record}"))
        .exits(0);
    assert_eq!(
        header(&out.stdout),
        ["DELTA", "NAME", "RESOURCEVERSION", "AGE", "APP", "LABELS"]
    );
    let row: Vec<&str> = out.stdout[1].split_whitespace().collect();
    assert_eq!(row[0], "Replaced");
    assert_eq!(row[1], "app-config");
    assert!(
        row[3].starts_with(|c: char| c.is_ascii_digit()),
        "an age: {row:?}"
    );
    assert_eq!(row[4..], ["web", "app=web"]);
    assert_eq!(out.stdout.len(), 2, "{:?}", out.stdout);

    let mut cmd = command(sim.dir());
    cmd.args(["replay", record, "-L", "app"]);
    let replayed = Running::spawn(cmd).finish(LIMIT);
    assert_eq!(replayed.code(), Some(0), "{}", replayed.stderr);
    assert_eq!(
        header(&replayed.stdout),
        ["DELTA", "NAME", "RESOURCEVERSION", "AGE", "APP"]
    );

    let out = sim
        .kwatch("pods -A --metadata-only --until-synced")
        .exits(0);
    assert_eq!(
        header(&out.stdout),
        ["DELTA", "NAMESPACE", "NAME", "RESOURCEVERSION", "AGE"]
    );
    let pods = sim.state()["objects"]["pods"].as_object().unwrap().len();
    assert_eq!(
        out.stdout.len(),
        1 + pods,
        "a row per pod: {:?}",
        out.stdout
    );
}

/// The simulator's side, as kube-apiserver answers: the list and a single object in the
/// shapes a genuine kube-apiserver 1.32 answered them in; a conversion that does not fit
/// the answer, or one the server does not have, is a 406.
#[test]
fn the_simulator_negotiates_partial_object_metadata_as_kube_apiserver() {
    let sim = SimProcess::start(&[]);
    let get = |path: &str, accept: &str| {
        sim.request_with(
            "GET",
            path,
            &[
                ("authorization".into(), format!("Bearer {}", sim.token)),
                ("accept".into(), accept.into()),
                ("user-agent".into(), "refcap/1.0".into()),
            ],
            "",
        )
    };
    let cms = "/api/v1/namespaces/default/configmaps";
    let list = get(cms, ACCEPT_LIST);
    assert_eq!(list.status, 200);
    assert_eq!(
        list.header("content-type").as_deref(),
        Some("application/json")
    );
    let rev = sim.revision();
    assert!(
        list.body.starts_with(&format!(
            r#"{{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{{"resourceVersion":"{rev}"}},"items":[{{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{{"name":"#
        )),
        "{}",
        list.body
    );
    assert!(list.body.ends_with("]}\n"));
    let v = list.json();
    for item in v["items"].as_array().unwrap() {
        assert_eq!(item.as_object().unwrap().len(), 3, "{item}");
    }
    let full = sim.get(&format!("{cms}/app-config")).json();
    let one = get(&format!("{cms}/app-config"), ACCEPT_WATCH).json();
    assert_eq!(one["metadata"], full["metadata"]);
    assert_eq!(one["kind"], "PartialObjectMetadata");
    assert!(one.get("data").is_none());

    let refused = |path: &str, accept: &str, message: &str| {
        let r = get(path, accept);
        assert_eq!(r.status, 406, "{path} {accept}: {}", r.body);
        assert_eq!(
            r.body,
            format!(
                "{{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{{}},\"status\":\"Failure\",\"message\":\"{message}\",\"reason\":\"NotAcceptable\",\"code\":406}}\n"
            )
        );
    };
    let unknown = "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf";
    refused(
        cms,
        "application/json;as=Widget;g=meta.k8s.io;v=v1",
        unknown,
    );
    refused(
        &format!("{cms}?watch=1"),
        "application/json;as=PartialObjectMetadata;g=example.com;v=v1",
        unknown,
    );
    refused(
        cms,
        "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
        "you requested PartialObjectMetadata, but the requested object is a list (*core.ConfigMapList)",
    );
    refused(
        "/apis/example.com/v1/namespaces/default/widgets/w1",
        ACCEPT_LIST,
        "you requested PartialObjectMetadataList, but the requested object is not a list (*unstructured.Unstructured)",
    );
    // An unknown conversion with a plain alternative after it gets the plain object.
    let plain = get(
        &format!("{cms}/app-config"),
        "application/json;as=Widget;g=meta.k8s.io;v=v1, application/json",
    );
    assert_eq!(plain.json(), full);
}

/// `--metadata-only` asks PartialObjectMetadata(List) in protobuf first,
/// as client-go's metadata client, for built-in and custom resources alike (the server's
/// conversion is metav1's), through a LIST and its watch and through a streaming list; the
/// answers come in protobuf and print what `--wire json` prints.
#[test]
fn metadata_comes_in_protobuf_for_every_resource_and_prints_what_json_prints() {
    let sim = SimProcess::start(&["--objects", "4"]);
    // Each resource's deltas in order (the two informers' interleave as they come).
    let deltas = |recs: Vec<Value>| -> Vec<Value> {
        let mut d: Vec<Value> = recs
            .into_iter()
            .filter(is_delta)
            .map(|mut r| {
                if let Some(m) = r.as_object_mut() {
                    m.remove("time");
                }
                r
            })
            .collect();
        d.sort_by_key(|r| r["resource"].as_str().unwrap_or_default().to_owned());
        d
    };
    for watch_list in ["off", "on"] {
        let args = format!(
            "configmaps,widgets -n default -o json --metadata-only --until-synced --watch-list {watch_list}"
        );
        let json = deltas(sim.kwatch(format!("{args} --wire json")).success().json());
        let from = sim.get("/_sim/requests").json()["requests"]
            .as_array()
            .map_or(0, Vec::len);
        let out = sim.kwatch(args.as_str()).success();
        let recs = out.json();
        assert!(!json.is_empty());
        assert_eq!(deltas(recs.clone()), json, "--watch-list {watch_list}");
        deltas(recs.clone()).iter().for_each(assert_metadata_only);
        let listed = of_type(&recs, "Listed");
        assert_eq!(listed.len(), 2, "{recs:#?}");
        assert!(
            listed.iter().all(|l| l["encoding"] == "protobuf"),
            "{listed:#?}"
        );
        let log = sim.get("/_sim/requests").json()["requests"]
            .as_array()
            .unwrap()[from..]
            .to_vec();
        for collection in [
            "/api/v1/namespaces/default/configmaps",
            "/apis/example.com/v1/namespaces/default/widgets",
        ] {
            let mine: Vec<&Value> = log
                .iter()
                .filter(|r| {
                    r["path"]
                        .as_str()
                        .is_some_and(|p| p.starts_with(collection))
                })
                .collect();
            assert!(!mine.is_empty(), "{log:#?}");
            for r in mine {
                let watch = r["path"].as_str().is_some_and(|p| p.contains("watch="));
                let (accept, content_type) = if watch {
                    (
                        ACCEPT_WATCH_PB,
                        "application/vnd.kubernetes.protobuf;stream=watch",
                    )
                } else {
                    (ACCEPT_LIST_PB, "application/vnd.kubernetes.protobuf")
                };
                assert_eq!(r["accept"], accept, "{r}");
                // A watch kwatch abandons as it exits (`--until-synced`) may be reset before
                // the server reads it: the simulator logs that as a 400 in JSON.
                if r["status"] == 200 {
                    assert_eq!(r["contentType"], content_type, "{r}");
                }
            }
        }
    }
}
