//! Kubernetes' protobuf on the wire (issue 32 items 2 and 5): the simulator answers
//! `Accept: application/vnd.kubernetes.protobuf, application/json` in protobuf for its
//! built-in kinds (lists, objects, Status errors, watches and streaming lists as
//! length-prefixed WatchEvent frames) and in JSON for custom resources and Tables; what
//! it writes decodes to the JSON it writes for the same request.

use serde_json::{json, Value};

use kwatch::client::protobuf::{self, Table};

use crate::util::SimProcess;

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf, application/json";
const JSON: &str = "application/json";

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
    let r = sim.request(
        "POST",
        "/api/v1/namespaces/default/configmaps",
        Some("application/json"),
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

#[test]
fn custom_resources_and_tables_stay_json_when_protobuf_is_asked() {
    let sim = SimProcess::start(&["--objects", "2"]);
    let (status, ct, body) = sim.get_bytes("/apis/example.com/v1/widgets", &[("accept", PROTOBUF)]);
    assert_eq!(
        (status, ct.as_str()),
        (200, "application/json"),
        "{}",
        String::from_utf8_lossy(&body)
    );
    let table = "application/json;as=Table;v=v1;g=meta.k8s.io, application/vnd.kubernetes.protobuf, application/json";
    let (_, ct, body) = sim.get_bytes("/api/v1/pods", &[("accept", table)]);
    assert_eq!(ct, "application/json");
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["kind"], "Table");
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
    let r = sim.request(
        "DELETE",
        "/api/v1/namespaces/default/configmaps/a",
        None,
        "",
    );
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
