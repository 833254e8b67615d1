//! Raw-protocol tests of the simulated API server: auth, discovery, list and watch
//! resourceVersion semantics, pagination and compaction, selectors, errors, mutations and
//! every fault of the control API. Each test runs its own `kwatch sim` (idle unless stated).

use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{json, Value};

use crate::util::kwatch::kubectl_f;
use crate::util::shared::*;
use crate::util::{brief, events, eventually, item_names, SimProcess, WatchItem};

const S: Duration = Duration::from_secs(1);

fn rv_of(v: &Value) -> u64 {
    v["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .expect("resourceVersion")
}

fn create_cm(sim: &SimProcess, ns: &str, name: &str, app: &str) -> Value {
    let body = json!({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":name,"labels":{"app":app}},"data":{"k":"v"}});
    let r = sim.send_json(
        "POST",
        &format!("/api/v1/namespaces/{ns}/configmaps"),
        &body.to_string(),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    r.json()
}

fn merge_patch(sim: &SimProcess, path: &str, patch: Value) -> Value {
    let r = sim.request(
        "PATCH",
        path,
        Some("application/merge-patch+json"),
        &patch.to_string(),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    r.json()
}

fn decode_token(t: &str) -> Value {
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(t)
        .expect("base64url");
    serde_json::from_slice(&raw).expect("token JSON")
}

/// The `name` of each element of an array (API groups, a Table's columns).
fn names_in(array: &Value) -> Vec<&str> {
    array
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect()
}
#[test]
fn requests_without_the_right_token_get_401() {
    let sim = SimProcess::start(&[]);
    let expected = r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}"#;
    let r = sim.request_with("GET", "/api/v1/pods", &[], "");
    assert_eq!(r.status, 401);
    assert_eq!(r.body, format!("{expected}\n"));
    let bad = [("authorization".to_string(), "Bearer nope".to_string())];
    let r = sim.request_with("GET", "/api/v1/pods", &bad, "");
    assert_eq!(r.status, 401);
    let r = sim.request_with("GET", "/_sim/state", &bad, "");
    assert_eq!(r.status, 401, "the control API is protected too");
    assert_eq!(sim.get("/api/v1/pods").status, 200);
}

#[test]
fn discovery_is_served_legacy_and_aggregated() {
    let sim = SimProcess::start(&[]);
    let v = sim.get("/version").json();
    assert_eq!(v["gitVersion"], "v1.32.13");
    let api = sim.get("/api").json();
    assert_eq!(api["kind"], "APIVersions");
    assert!(api.get("apiVersion").is_none());
    let v1 = sim.get("/api/v1").json();
    let pods = v1["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "pods")
        .unwrap();
    assert_eq!(pods["shortNames"], json!(["po"]));
    assert_eq!(pods["namespaced"], true);
    let apis = sim.get("/apis").json();
    let groups = names_in(&apis["groups"]);
    assert_eq!(groups.last(), Some(&"example.com"));
    let wd = sim.get("/apis/example.com/v1").json();
    assert_eq!(wd["resources"][0]["shortNames"], json!(["wd"]));
    let agg = sim.request_with(
        "GET",
        "/apis",
        &[
            ("authorization".into(), format!("Bearer {}", sim.token)),
            ("accept".into(), "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json".into()),
        ],
        "",
    );
    assert_eq!(
        agg.header("content-type").as_deref(),
        Some("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
    );
    assert_eq!(agg.json()["kind"], "APIGroupDiscoveryList");
    let r = sim.get("/apis/nope.example.com/v1/foos");
    assert_eq!((r.status, r.body.as_str()), (404, "404 page not found\n"));
    let r = sim.get("/api/v1/namespaces/default/foos");
    assert_eq!(r.status, 404);
    assert_eq!(r.json()["details"], json!({}));
}

#[test]
fn lists_have_the_real_shapes() {
    let sim = SimProcess::start(&[]);
    let rev = sim.revision();
    let r = sim.get("/api/v1/namespaces/default/configmaps");
    assert!(r.body.starts_with(&format!(
        r#"{{"kind":"ConfigMapList","apiVersion":"v1","metadata":{{"resourceVersion":"{rev}"}},"items":[{{"metadata":"#
    )));
    assert!(r.body.ends_with("]}\n"));
    let w = sim
        .get("/apis/example.com/v1/namespaces/default/widgets")
        .json();
    let keys: Vec<&String> = w.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["apiVersion", "items", "kind", "metadata"]);
    assert_eq!(
        w["metadata"],
        json!({"continue": "", "resourceVersion": rev.to_string()})
    );
    assert_eq!(w["items"][0]["kind"], "Widget");
    let empty = sim.get("/api/v1/namespaces/nope/configmaps?limit=5");
    assert_eq!(empty.body, format!("{{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\",\"metadata\":{{\"resourceVersion\":\"{rev}\"}},\"items\":[]}}\n"));
    let t = sim.request_with(
        "GET",
        "/api/v1/pods",
        &[
            ("authorization".into(), format!("Bearer {}", sim.token)),
            (
                "accept".into(),
                "application/json;as=Table;v=v1;g=meta.k8s.io,application/json".into(),
            ),
        ],
        "",
    );
    let t = t.json();
    assert_eq!(t["kind"], "Table");
    let cols = names_in(&t["columnDefinitions"]);
    assert_eq!(&cols[..5], ["Name", "Ready", "Status", "Restarts", "Age"]);
    assert_eq!(t["rows"].as_array().unwrap().len(), 20);
    assert_eq!(t["rows"][0]["object"]["kind"], "PartialObjectMetadata");
}

#[test]
fn json_is_indented_for_curl_and_pretty_only() {
    let sim = SimProcess::start(&[]);
    let auth = ("authorization".to_string(), format!("Bearer {}", sim.token));
    let curl = sim.request_with(
        "GET",
        "/api/v1/namespaces/default/configmaps/app-config",
        &[auth.clone(), ("user-agent".into(), "curl/8.5.0".into())],
        "",
    );
    assert!(curl.body.starts_with("{\n  \"kind\": \"ConfigMap\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {\n    \"name\": \"app-config\""), "{}", curl.body);
    assert!(curl.body.ends_with("}\n"));
    let pretty = sim.get("/api/v1/namespaces/default/configmaps?pretty=true");
    assert!(pretty.body.starts_with("{\n  \"kind\": \"ConfigMapList\""));
    let plain = sim.request_with(
        "GET",
        "/api/v1/namespaces/default/configmaps/app-config",
        &[auth, ("user-agent".into(), "kubectl/v1.32.0".into())],
        "",
    );
    assert!(plain
        .body
        .starts_with("{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{"));
    assert_eq!(plain.body.matches('\n').count(), 1);
}

#[test]
fn list_resource_version_semantics_and_snapshot_pages() {
    let sim = SimProcess::start(&["--objects", "6"]);
    let all = sim.get("/api/v1/pods").json();
    let rev = rv_of(&all);
    assert_eq!(all["items"].as_array().unwrap().len(), 6);
    // resourceVersion=0 ignores the limit.
    let r0 = sim.get("/api/v1/pods?resourceVersion=0&limit=2").json();
    assert_eq!(r0["items"].as_array().unwrap().len(), 6);
    assert!(r0["metadata"].get("continue").is_none());
    // A first page: continue token with the leading "/" and remainingItemCount.
    let p1 = sim.get("/api/v1/pods?limit=2").json();
    let keys: Vec<&String> = p1["metadata"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["resourceVersion", "continue", "remainingItemCount"]);
    assert_eq!(p1["metadata"]["remainingItemCount"], 4);
    let tok = decode_token(p1["metadata"]["continue"].as_str().unwrap());
    assert_eq!(tok["rv"], rev);
    assert!(tok["start"].as_str().unwrap().starts_with('/'));
    assert!(tok["start"].as_str().unwrap().ends_with('\u{0}'));
    // Change things between pages: page 2 still shows revision `rev`.
    let victim = all["items"][3]["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    let victim_ns = all["items"][3]["metadata"]["namespace"]
        .as_str()
        .unwrap()
        .to_string();
    let r = sim.delete(&format!("/api/v1/namespaces/{victim_ns}/pods/{victim}"));
    assert_eq!(r.status, 200);
    let mut names = item_names(&p1);
    let mut token = p1["metadata"]["continue"].as_str().unwrap().to_string();
    while !token.is_empty() {
        let p = sim
            .get(&format!("/api/v1/pods?limit=2&continue={token}"))
            .json();
        assert_eq!(rv_of(&p), rev, "later pages keep the first page's revision");
        names.extend(item_names(&p));
        token = p["metadata"]["continue"].as_str().unwrap_or("").to_string();
    }
    assert_eq!(names, item_names(&all));
    // Exact at the old revision still has the deleted pod; NotOlderThan gives the current state.
    let exact = sim
        .get(&format!(
            "/api/v1/pods?resourceVersion={rev}&resourceVersionMatch=Exact"
        ))
        .json();
    assert_eq!(rv_of(&exact), rev);
    assert_eq!(exact["items"].as_array().unwrap().len(), 6);
    let newer = sim
        .get(&format!(
            "/api/v1/pods?resourceVersion={rev}&resourceVersionMatch=NotOlderThan"
        ))
        .json();
    assert_eq!(
        rv_of(&newer),
        rev + 2,
        "pod deletion is MODIFIED then DELETED"
    );
    assert_eq!(newer["items"].as_array().unwrap().len(), 5);
    // A future revision: 504 after a short wait (Exact: 500 at once).
    let t0 = Instant::now();
    let r = sim.get("/api/v1/pods?resourceVersion=99999999");
    assert_eq!(r.status, 504);
    assert!(t0.elapsed() >= Duration::from_millis(900));
    assert_eq!(r.header("retry-after").as_deref(), Some("1"));
    let j = r.json();
    assert_eq!(
        j["message"],
        format!(
            "Timeout: Too large resource version: 99999999, current: {}",
            rev + 2
        )
    );
    assert_eq!(
        j["details"]["causes"][0]["reason"],
        "ResourceVersionTooLarge"
    );
    let r = sim.get("/api/v1/pods?resourceVersion=99999999&resourceVersionMatch=Exact");
    assert_eq!(r.status, 500);
    assert_eq!(
        r.json()["message"],
        "etcdserver: mvcc: required revision is a future revision"
    );
}

#[test]
fn compaction_expires_exact_lists_and_continue_tokens() {
    let sim = SimProcess::start(&["--objects", "5"]);
    let p1 = sim.get("/api/v1/pods?limit=2").json();
    let rev = rv_of(&p1);
    let token = p1["metadata"]["continue"].as_str().unwrap().to_string();
    create_cm(&sim, "default", "after", "x");
    sim.control("POST", "compact", json!({}));
    let r = sim.get(&format!(
        "/api/v1/pods?resourceVersion={rev}&resourceVersionMatch=Exact"
    ));
    assert_eq!(r.status, 410);
    assert_eq!(
        r.json()["message"],
        "The resourceVersion for the provided list is too old."
    );
    let r = sim.get(&format!("/api/v1/pods?limit=2&continue={token}"));
    assert_eq!(r.status, 410, "{}", r.body);
    let st = r.json();
    assert_eq!(st["reason"], "Expired");
    assert!(st["message"]
        .as_str()
        .unwrap()
        .starts_with("The provided continue parameter is too old"));
    let fresh = st["metadata"]["continue"].as_str().unwrap();
    let ft = decode_token(fresh);
    assert_eq!(ft["rv"], -1);
    assert!(!ft["start"].as_str().unwrap().starts_with('/'));
    let p2 = sim
        .get(&format!("/api/v1/pods?limit=2&continue={fresh}"))
        .json();
    assert_eq!(
        rv_of(&p2),
        rev + 1,
        "an rv -1 token continues at the current revision"
    );
    assert_eq!(p2["items"].as_array().unwrap().len(), 2);
    assert_eq!(
        decode_token(p2["metadata"]["continue"].as_str().unwrap())["rv"],
        rev + 1
    );
}

#[test]
fn watch_replays_from_a_resource_version_then_streams_and_ends_at_timeout() {
    let sim = SimProcess::start(&[]);
    let rev = sim.revision();
    let a = create_cm(&sim, "default", "a", "x");
    let a2 = merge_patch(
        &sim,
        "/api/v1/namespaces/default/configmaps/a",
        json!({"data":{"k":"w"}}),
    );
    let mut w = sim.watch(&format!(
        "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={rev}&timeoutSeconds=2"
    ));
    assert_eq!(w.status, 200);
    let e1 = w.event(5 * S);
    assert_eq!(
        brief(&e1),
        ("ADDED".into(), "a".into(), rv_of(&a).to_string())
    );
    assert_eq!(
        e1["object"]["kind"], "ConfigMap",
        "watch objects carry kind"
    );
    assert_eq!(brief(&w.event(5 * S)).0, "MODIFIED");
    let del = sim.delete("/api/v1/namespaces/default/configmaps/a");
    assert_eq!(del.status, 200);
    assert_eq!(del.json()["status"], "Success");
    assert_eq!(del.json()["details"]["kind"], "configmaps");
    let e3 = w.event(5 * S);
    assert_eq!(
        brief(&e3),
        ("DELETED".into(), "a".into(), (rv_of(&a2) + 1).to_string())
    );
    assert_eq!(
        e3["object"]["data"]["k"], "w",
        "DELETED carries the last state"
    );
    let t0 = Instant::now();
    assert_eq!(
        w.next(5 * S),
        WatchItem::End,
        "timeoutSeconds ends the stream cleanly"
    );
    assert!(t0.elapsed() < 3 * S);
}

#[test]
fn watch_from_a_compacted_revision_gets_a_410_error_event() {
    let sim = SimProcess::start(&[]);
    let rev = sim.revision();
    create_cm(&sim, "default", "a", "x");
    create_cm(&sim, "default", "b", "x");
    sim.control("POST", "compact", json!({"revision": rev + 1}));
    let mut w = sim.watch(&format!(
        "/api/v1/configmaps?watch=1&resourceVersion={rev}&allowWatchBookmarks=true"
    ));
    assert_eq!(w.status, 200);
    let items = w.collect(5 * S);
    assert_eq!(items.last(), Some(&WatchItem::End));
    let evs = events(&items);
    assert_eq!(evs.len(), 1, "{items:?}");
    assert_eq!(evs[0]["type"], "ERROR");
    assert_eq!(evs[0]["object"]["code"], 410);
    assert_eq!(evs[0]["object"]["reason"], "Expired");
    assert_eq!(
        evs[0]["object"]["message"],
        format!("too old resource version: {rev} ({})", rev + 1)
    );
    // From the compaction point itself the history is complete.
    let mut w = sim.watch(&format!(
        "/api/v1/configmaps?watch=1&resourceVersion={}&timeoutSeconds=1",
        rev + 1
    ));
    assert_eq!(
        brief(&w.event(5 * S)),
        ("ADDED".into(), "b".into(), (rev + 2).to_string())
    );
}

#[test]
fn bookmarks_are_periodic_and_only_on_request() {
    // Revision 1 in reach, so that a watch may start before the watch cache's revision.
    let sim = SimProcess::start(&["--bookmark-interval", "0.4", "--uncompacted"]);
    let rev = sim.revision();
    let configmaps = "/api/v1/namespaces/default/configmaps?watch=1";
    // From the current revision of a quiet resource: nothing at all, as kube-apiserver's
    // cacheWatcher sends only what is newer than the watch's revision, bookmarks included.
    let mut w = sim.watch(&format!(
        "{configmaps}&resourceVersion={rev}&allowWatchBookmarks=true&timeoutSeconds=2"
    ));
    assert_eq!(w.collect(5 * S), vec![WatchItem::End], "a quiet resource");
    // From an older one: periodic bookmarks, each carrying the watch cache's revision.
    let older = rev - 1;
    let mut w = sim.watch(&format!(
        "{configmaps}&resourceVersion={older}&allowWatchBookmarks=true&timeoutSeconds=2"
    ));
    let items = w.collect(5 * S);
    let evs = events(&items);
    assert!(evs.len() >= 3, "{items:?}");
    for e in &evs {
        assert_eq!(e["type"], "BOOKMARK");
        assert_eq!(
            e["object"],
            json!({"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":rev.to_string(),"creationTimestamp":null}})
        );
    }
    assert_eq!(items.last(), Some(&WatchItem::End));
    let mut w = sim.watch(&format!(
        "{configmaps}&resourceVersion={older}&timeoutSeconds=1"
    ));
    let items = w.collect(5 * S);
    assert_eq!(
        items,
        vec![WatchItem::End],
        "no bookmarks unless allowWatchBookmarks"
    );
    let mut w = sim.watch(&format!("/apis/example.com/v1/namespaces/default/widgets?watch=1&resourceVersion={older}&allowWatchBookmarks=true&timeoutSeconds=1"));
    let e = w.event(5 * S);
    assert_eq!(
        e["object"],
        json!({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"resourceVersion":rev.to_string()}})
    );
}

/// A change of the resource in another namespace moves its watch cache: a watch of
/// `default` from the current revision then gets a bookmark of the new revision, and no
/// event; a change of another resource moves nothing, until a consistent LIST of the
/// resource (ConsistentListFromCache: a progress notification asked of etcd) or etcd's own
/// progress notifications bring its cache to the current revision.
#[test]
fn a_bookmark_carries_the_resources_watch_cache_revision() {
    let sim = SimProcess::start(&["--bookmark-interval", "0.3"]);
    let rev = sim.revision();
    let watch = |from: u64| {
        sim.watch(&format!("/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={from}&allowWatchBookmarks=true&timeoutSeconds=2"))
    };
    // Another resource changes: the configmaps' cache stays at `rev`.
    sim.kubectl_ok("label namespace team-a touched=yes");
    assert_eq!(watch(rev).collect(5 * S), vec![WatchItem::End]);
    // A consistent LIST of configmaps brings their cache to the current revision.
    let now = sim.revision();
    assert!(now > rev);
    sim.get("/api/v1/configmaps?limit=1");
    let e = watch(rev).event(5 * S);
    assert_eq!(e["type"], "BOOKMARK");
    assert_eq!(e["object"]["metadata"]["resourceVersion"], now.to_string());
    // A ConfigMap of another namespace changes: a bookmark of its revision, no event.
    crate::util::kwatch::create_configmap(&sim, "team-a", "elsewhere", json!({}));
    let changed = sim.revision();
    let items = watch(now).collect(5 * S);
    let evs = events(&items);
    assert!(!evs.is_empty(), "{items:?}");
    for e in &evs {
        assert_eq!(e["type"], "BOOKMARK", "{items:?}");
        assert_eq!(
            e["object"]["metadata"]["resourceVersion"],
            changed.to_string()
        );
    }
}

#[test]
fn watch_list_sends_initial_events_then_the_end_bookmark() {
    let sim = SimProcess::start(&[]);
    let rev = sim.revision();
    let list = sim.get("/api/v1/namespaces/default/configmaps").json();
    let names = item_names(&list);
    for q in [
        "sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true",
        "resourceVersion=0&allowWatchBookmarks=true",
        "allowWatchBookmarks=true",
    ] {
        let mut w = sim.watch(&format!(
            "/api/v1/namespaces/default/configmaps?watch=1&{q}&timeoutSeconds=1"
        ));
        let evs = events(&w.collect(5 * S));
        let added: Vec<&str> = evs
            .iter()
            .take_while(|e| e["type"] == "ADDED")
            .map(|e| e["object"]["metadata"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(added, names, "{q}");
        let end = &evs[names.len()];
        assert_eq!(end["type"], "BOOKMARK", "{q}");
        let meta = &end["object"]["metadata"];
        assert_eq!(meta["resourceVersion"], rev.to_string());
        assert_eq!(meta["annotations"]["k8s.io/initial-events-end"], "true");
        let bp = base64::engine::general_purpose::STANDARD
            .decode(
                meta["annotations"]["kubernetes.io/initial-events-list-blueprint"]
                    .as_str()
                    .unwrap(),
            )
            .unwrap();
        assert_eq!(
            bp,
            b"{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\",\"metadata\":{},\"items\":null}\n"
        );
    }
    let mut w = sim
        .watch("/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0&timeoutSeconds=1");
    let evs = events(&w.collect(5 * S));
    assert_eq!(evs.len(), names.len());
    assert!(
        evs.iter().all(|e| e["type"] == "ADDED"),
        "no bookmark without allowWatchBookmarks"
    );
}

#[test]
fn selector_watches_see_objects_move_in_and_out() {
    let sim = SimProcess::start(&[]);
    create_cm(&sim, "default", "mover", "b");
    let rev = sim.revision();
    let mut w = sim.watch(&format!("/api/v1/namespaces/default/configmaps?watch=1&labelSelector=app%3Da&resourceVersion={rev}&timeoutSeconds=3"));
    let path = "/api/v1/namespaces/default/configmaps/mover";
    let inn = merge_patch(&sim, path, json!({"metadata":{"labels":{"app":"a"}}}));
    let out = merge_patch(&sim, path, json!({"metadata":{"labels":{"app":"b"}}}));
    merge_patch(&sim, path, json!({"data":{"k":"unseen"}}));
    let e1 = w.event(5 * S);
    assert_eq!(
        brief(&e1),
        ("ADDED".into(), "mover".into(), rv_of(&inn).to_string())
    );
    let e2 = w.event(5 * S);
    assert_eq!(
        brief(&e2),
        ("DELETED".into(), "mover".into(), rv_of(&out).to_string())
    );
    assert_eq!(
        e2["object"]["metadata"]["labels"]["app"], "a",
        "old content, new resourceVersion"
    );
    assert_eq!(w.next(5 * S), WatchItem::End);
    // Field selectors (and a label selector): (query, how many items match).
    let selected = [
        ("/api/v1/pods?fieldSelector=status.phase%3DRunning", 20),
        ("/api/v1/pods?fieldSelector=status.phase!%3DRunning", 0),
        (
            "/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Dmover",
            1,
        ),
        (
            "/api/v1/events?fieldSelector=involvedObject.name%3Dweb,type%3DNormal",
            1,
        ),
        (
            "/api/v1/pods?fieldSelector=spec.restartPolicy%3DAlways,spec.nodeName!%3D",
            20,
        ),
        ("/api/v1/configmaps?labelSelector=app+in+(b,c),!nope", 1),
    ];
    for (query, n) in selected {
        let list = sim.get(query).json();
        assert_eq!(list["items"].as_array().unwrap().len(), n, "{query}");
    }
}

#[test]
fn invalid_options_are_rejected_like_the_real_server() {
    let sim = SimProcess::start(&[]);
    let base = "/api/v1/namespaces/default/configmaps";
    let cases = [
        ("?resourceVersionMatch=NotOlderThan", 422, "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"),
        ("?watch=1&sendInitialEvents=true", 422, "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"),
        ("?watch=1&resourceVersion=0&resourceVersionMatch=NotOlderThan", 422, "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"),
        ("?sendInitialEvents=true&resourceVersionMatch=NotOlderThan", 422, "ListOptions.meta.k8s.io \"\" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided, sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list]"),
        ("?labelSelector=app+in+(a", 400, "unable to parse requirement: found '', expected: ',' or ')'"),
        ("?fieldSelector=spec.foo%3Dbar", 400, "\"spec.foo\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""),
    ];
    for (q, code, msg) in cases {
        let r = sim.get(&format!("{base}{q}"));
        assert_eq!(r.status, code, "{q}: {}", r.body);
        let st = r.json();
        assert_eq!(st["message"], msg, "{q}");
        assert_eq!(st["code"], code);
    }
    let r = sim.get("/api/v1/namespaces/default/configmaps?resourceVersionMatch=NotOlderThan");
    assert_eq!(
        r.body,
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"ListOptions.meta.k8s.io \\\"\\\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided\",\"reason\":\"Invalid\",\"details\":{\"group\":\"meta.k8s.io\",\"kind\":\"ListOptions\",\"causes\":[{\"reason\":\"FieldValueForbidden\",\"message\":\"Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided\",\"field\":\"resourceVersionMatch\"}]},\"code\":422}\n"
    );
    let r = sim.get("/api/v1/pods?fieldSelector=spec.foo%3Dbar");
    assert_eq!(r.json()["message"], "field label not supported: spec.foo");
}

#[test]
fn mutations_return_objects_and_statuses() {
    let sim = SimProcess::start(&[]);
    let cm = create_cm(&sim, "default", "cm1", "a");
    let m = cm["metadata"].as_object().unwrap();
    let keys: Vec<&String> = m.keys().collect();
    assert_eq!(
        keys,
        [
            "name",
            "namespace",
            "uid",
            "resourceVersion",
            "creationTimestamp",
            "labels",
            "managedFields"
        ]
    );
    let path = "/api/v1/namespaces/default/configmaps";
    let dup = sim.send_json("POST", path, r#"{"metadata":{"name":"cm1"}}"#);
    assert_eq!(dup.status, 409);
    assert_eq!(dup.json()["message"], "configmaps \"cm1\" already exists");
    let r = sim.send_json(
        "POST",
        "/api/v1/namespaces/nope/configmaps",
        r#"{"metadata":{"name":"x"}}"#,
    );
    assert_eq!(
        (r.status, r.json()["message"].clone()),
        (404, json!("namespaces \"nope\" not found"))
    );
    let r = sim.send_json("POST", path, r#"{"metadata":{"name":"Bad_Name"}}"#);
    assert_eq!(r.status, 422);
    assert_eq!(r.json()["details"]["kind"], "ConfigMap");
    let r = sim.send_json("POST", path, r#"{"apiVersion":"v1","kind":"Con"#);
    assert_eq!(r.status, 400);
    let r = sim.get(&format!("{path}/nope"));
    assert_eq!(r.body, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"configmaps \\\"nope\\\" not found\",\"reason\":\"NotFound\",\"details\":{\"name\":\"nope\",\"kind\":\"configmaps\"},\"code\":404}\n");
    // Update with a current then a stale resourceVersion.
    let mut upd = cm.clone();
    upd["data"]["k"] = json!("v2");
    let r = sim.send_json("PUT", &format!("{path}/cm1"), &upd.to_string());
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(rv_of(&r.json()), rv_of(&cm) + 1);
    let r = sim.send_json("PUT", &format!("{path}/cm1"), &upd.to_string());
    assert_eq!(r.status, 409);
    assert_eq!(r.json()["reason"], "Conflict");
    // Patches: merge, strategic (as merge), JSON patch, bad content type.
    let p = merge_patch(&sim, &format!("{path}/cm1"), json!({"data":{"k2":"new"}}));
    assert_eq!(p["data"], json!({"k":"v2","k2":"new"}));
    let r = sim.request(
        "PATCH",
        &format!("{path}/cm1"),
        Some("application/strategic-merge-patch+json"),
        r#"{"data":{"k3":"s"}}"#,
    );
    assert_eq!(r.json()["data"]["k3"], "s");
    let r = sim.request(
        "PATCH",
        &format!("{path}/cm1"),
        Some("application/json-patch+json"),
        r#"[{"op":"remove","path":"/data/k"}]"#,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.json()["data"].get("k").is_none());
    let r = sim.request("PATCH", &format!("{path}/cm1"), Some("text/plain"), "x");
    assert_eq!(r.status, 415);
    let r = sim.send_json("POST", &format!("{path}/cm1"), "{}");
    assert_eq!(r.status, 405);
    // Widgets: a CR is stored with sorted keys, deleted with a Status carrying the group.
    let widget = r#"{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w9"},"spec":{"size":1}}"#;
    let r = sim.send_json(
        "POST",
        "/apis/example.com/v1/namespaces/default/widgets",
        widget,
    );
    assert_eq!(r.status, 201);
    assert!(r.body.starts_with("{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"creationTimestamp\""));
    let r = sim.delete("/apis/example.com/v1/namespaces/default/widgets/w9");
    assert_eq!(r.json()["details"]["group"], "example.com");
}

#[test]
fn deleting_a_pod_is_modified_then_deleted() {
    let sim = SimProcess::start(&["--objects", "2"]);
    let pods = sim.get("/api/v1/pods").json();
    let rev = rv_of(&pods);
    let pod = &pods["items"][0]["metadata"];
    let (ns, name) = (
        pod["namespace"].as_str().unwrap(),
        pod["name"].as_str().unwrap(),
    );
    let mut w = sim.watch(&format!(
        "/api/v1/pods?watch=1&resourceVersion={rev}&timeoutSeconds=2"
    ));
    let r = sim.delete(&format!("/api/v1/namespaces/{ns}/pods/{name}"));
    assert_eq!(r.status, 200);
    let gone = r.json();
    assert_eq!(gone["kind"], "Pod");
    assert_eq!(gone["metadata"]["deletionGracePeriodSeconds"], 0);
    assert!(gone["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(rv_of(&gone), rev + 2);
    let e1 = w.event(5 * S);
    assert_eq!(
        brief(&e1),
        ("MODIFIED".into(), name.into(), (rev + 1).to_string())
    );
    assert!(e1["object"]["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(
        brief(&w.event(5 * S)),
        ("DELETED".into(), name.into(), (rev + 2).to_string())
    );
}

#[test]
fn fault_drop_watches_aborts_open_watches() {
    let sim = SimProcess::start(&[]);
    let mut w = sim.watch("/api/v1/pods?watch=1&resourceVersion=0");
    for _ in 0..20 {
        assert_eq!(w.event(5 * S)["type"], "ADDED");
    }
    assert_eq!(w.next(Duration::from_millis(200)), WatchItem::Timeout);
    let r = sim.control("POST", "drop-watches", json!({}));
    assert_eq!(r["dropped"], 1);
    match w.next(5 * S) {
        WatchItem::Broken(_) => {}
        other => panic!("expected an aborted stream, got {other:?}"),
    }
}

#[test]
fn fault_fail_next_requests_with_429_500_503() {
    let sim = SimProcess::start(&[]);
    sim.control(
        "POST",
        "fail",
        json!({"code": 429, "count": 2, "retryAfter": 3}),
    );
    for _ in 0..2 {
        let r = sim.get("/api/v1/pods");
        assert_eq!(r.status, 429);
        assert_eq!(r.header("retry-after").as_deref(), Some("3"));
        let st = r.json();
        assert_eq!(
            (
                st["kind"].as_str(),
                st["reason"].as_str(),
                st["code"].as_i64()
            ),
            (Some("Status"), Some("TooManyRequests"), Some(429))
        );
        assert_eq!(st["details"]["retryAfterSeconds"], 3);
        // The control API is never failed.
        sim.state();
    }
    assert_eq!(sim.get("/api/v1/pods").status, 200);
    for (code, reason) in [(500, "InternalError"), (503, "ServiceUnavailable")] {
        sim.control("POST", "fail", json!({"code": code}));
        let r = sim.get("/api/v1/pods?watch=1");
        assert_eq!(r.status, code);
        assert_eq!(r.json()["reason"], reason);
        assert_eq!(sim.get("/api/v1/pods").status, 200);
    }
    sim.control("POST", "fail", json!({"code": 500, "retryAfter": 0}));
    let r = sim.get("/api/v1/pods");
    assert_eq!((r.status, r.header("retry-after")), (500, None));
    // Restricted to a verb and a resource.
    sim.control(
        "POST",
        "fail",
        json!({"code": 500, "verb": "watch", "resource": "pods"}),
    );
    assert_eq!(sim.get("/api/v1/pods").status, 200);
    assert_eq!(sim.get("/api").status, 200);
    assert_eq!(
        sim.get("/api/v1/configmaps?watch=1&timeoutSeconds=1")
            .status,
        200
    );
    assert_eq!(sim.get("/api/v1/pods?watch=1&timeoutSeconds=1").status, 500);
    assert_eq!(sim.get("/api/v1/pods?watch=1&timeoutSeconds=1").status, 200);
    // A list's 410 and too-large-RV 504.
    sim.control("POST", "fail", json!({"code": 410, "verb": "list"}));
    let r = sim.get("/api/v1/pods?resourceVersion=5");
    assert_eq!(
        (r.status, r.json()["reason"].clone()),
        (410, json!("Expired"))
    );
    sim.control("POST", "fail", json!({"code": 504, "verb": "list"}));
    let r = sim.get("/api/v1/pods");
    assert_eq!(r.status, 504);
    assert_eq!(
        r.json()["details"]["causes"][0]["reason"],
        "ResourceVersionTooLarge"
    );
    let r = sim.send_json("POST", "/_sim/fail", r#"{"code":404}"#);
    assert_eq!(r.status, 400);
}

#[test]
fn fault_stall_delays_watch_events() {
    let sim = SimProcess::start(&[]);
    let mut w = sim.watch_from_now("/api/v1/configmaps?watch=1");
    sim.control("POST", "stall", json!({"until": "released"}));
    create_cm(&sim, "default", "late", "x");
    // A watch opened during the stall waits too, initial events included.
    let mut w2 = sim.watch("/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0");
    let mut w3 = sim.watch("/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0&sendInitialEvents=false&resourceVersionMatch=NotOlderThan");
    create_cm(&sim, "default", "later", "x");
    // Held until released: whatever the load, nothing can have come yet.
    assert_eq!(
        w.next(Duration::from_millis(200)),
        WatchItem::Timeout,
        "stalled"
    );
    assert_eq!(w2.next(Duration::from_millis(10)), WatchItem::Timeout);
    let released = sim.control("POST", "release", json!({}));
    assert_eq!(released["released"], json!(["stall"]), "{released}");
    assert_eq!(brief(&w.event(5 * S)).1, "late");
    assert_eq!(w2.event(5 * S)["type"], "ADDED");
    assert_eq!(
        brief(&w3.event(5 * S)).1,
        "later",
        "from the revision it was opened at"
    );
    // Nothing left to release.
    assert_eq!(
        sim.control("POST", "release", json!({}))["released"],
        json!([])
    );
}

/// The timed form ends by itself; it cannot end before its seconds, counted from before
/// the control call.
#[test]
fn fault_stall_for_seconds_ends_by_itself() {
    let sim = SimProcess::start(&[]);
    let mut w = sim.watch_from_now("/api/v1/configmaps?watch=1");
    let t0 = Instant::now();
    sim.control("POST", "stall", json!({"seconds": 1}));
    create_cm(&sim, "default", "late", "x");
    assert_eq!(brief(&w.event(10 * S)).1, "late");
    assert!(t0.elapsed() >= S, "{:?}", t0.elapsed());
}

/// `until` takes "released" only; `release` names a fault it knows, or none; a slow link
/// takes a rate.
#[test]
fn held_faults_refuse_what_they_do_not_know() {
    let sim = SimProcess::start(&[]);
    for (path, body) in [
        ("/_sim/stall", json!({"until": "later"})),
        ("/_sim/freeze", json!({"until": 5})),
        ("/_sim/fail", json!({"until": "never"})),
        ("/_sim/release", json!({"fault": "restart"})),
        ("/_sim/slow-link", json!({"mbps": -1})),
        ("/_sim/slow-link", json!({"mbps": "fast"})),
    ] {
        let r = sim.send_json("POST", path, &body.to_string());
        assert_eq!(r.status, 400, "{path} {body}: {}", r.body);
    }
}

/// `fail {"until":"released"}` fails every request until `release {"fault":"fail"}`,
/// which leaves a held stall alone.
#[test]
fn fault_fail_until_released() {
    let sim = SimProcess::start(&[]);
    sim.control("POST", "stall", json!({"until": "released"}));
    sim.control(
        "POST",
        "fail",
        json!({"code": 503, "until": "released", "verb": "list"}),
    );
    for _ in 0..3 {
        assert_eq!(sim.get("/api/v1/namespaces/default/configmaps").status, 503);
    }
    let released = sim.control("POST", "release", json!({"fault": "fail"}));
    assert_eq!(released["released"], json!(["fail"]), "{released}");
    assert_eq!(sim.get("/api/v1/namespaces/default/configmaps").status, 200);
    let released = sim.control("POST", "release", json!({}));
    assert_eq!(released["released"], json!(["stall"]), "{released}");
}

#[test]
fn fault_delay_sends_each_change_late_while_lists_show_it_at_once() {
    let sim = SimProcess::start(&[]);
    let mut w = sim.watch_from_now("/api/v1/namespaces/default/configmaps?watch=1");
    assert_eq!(sim.control("POST", "delay", json!({"ms": 600}))["ms"], 600);
    let t0 = Instant::now();
    create_cm(&sim, "default", "slow-a", "x");
    std::thread::sleep(Duration::from_millis(200));
    let t1 = Instant::now();
    create_cm(&sim, "default", "slow-b", "x");
    // The storage has both at once: a GET and a list see them.
    assert_eq!(
        sim.get("/api/v1/namespaces/default/configmaps/slow-b")
            .status,
        200
    );
    let list = sim.get("/api/v1/namespaces/default/configmaps").json();
    let names: Vec<&str> = list["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|o| o["metadata"]["name"].as_str())
        .collect();
    assert!(
        names.contains(&"slow-a") && names.contains(&"slow-b"),
        "{names:?}"
    );
    // The watch sends each one 600 ms after it was made, in order: nothing comes before
    // (the quiet time left is measured from slow-a's creation, however long the GET and
    // the list above took on a loaded machine).
    let quiet = Duration::from_millis(550).saturating_sub(t0.elapsed());
    if !quiet.is_zero() {
        assert_eq!(w.next(quiet), WatchItem::Timeout);
    }
    assert_eq!(brief(&w.event(5 * S)).1, "slow-a");
    assert!(
        t0.elapsed() >= Duration::from_millis(600),
        "{:?}",
        t0.elapsed()
    );
    assert_eq!(brief(&w.event(5 * S)).1, "slow-b");
    assert!(
        t1.elapsed() >= Duration::from_millis(600),
        "{:?}",
        t1.elapsed()
    );
    // Off again: the next change comes without waiting.
    sim.control("POST", "delay", json!({"ms": 0}));
    let t2 = Instant::now();
    create_cm(&sim, "default", "prompt", "x");
    assert_eq!(brief(&w.event(5 * S)).1, "prompt");
    assert!(
        t2.elapsed() < Duration::from_millis(500),
        "{:?}",
        t2.elapsed()
    );
}

#[test]
fn fault_freeze_stops_open_connections_at_the_tcp_level() {
    let sim = SimProcess::start(&[]);
    let mut w = sim.watch_from_now("/api/v1/configmaps?watch=1");
    assert_eq!(w.status, 200);
    sim.control("POST", "freeze", json!({"until": "released"}));
    // A new connection (kubectl's) is served, and so is the control API.
    kubectl_f(
        &sim,
        "create",
        &json!({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"during","namespace":"default"}}),
    );
    assert!(sim.state()["objects"]["configmaps"]["default/during"].is_string());
    // Held until released: whatever the load, nothing can have come yet.
    assert_eq!(
        w.next(Duration::from_millis(200)),
        WatchItem::Timeout,
        "frozen"
    );
    let released = sim.control("POST", "release", json!({"fault": "freeze"}));
    assert_eq!(released["released"], json!(["freeze"]), "{released}");
    let e = w.event(5 * S);
    assert_eq!(brief(&e).1, "during", "the same connection, resumed");
    // The request log says which HTTP version each request came in: kubectl's (Go's
    // net/http over TLS) is HTTP/2, the test client's HTTP/1.1.
    let log = sim.get("/_sim/requests").json();
    let log = log["requests"].as_array().unwrap();
    let post = log.iter().rev().find(|r| r["method"] == "POST").unwrap();
    assert_eq!(post["version"], "HTTP/2.0", "{post}");
    assert_eq!(log[0]["version"], "HTTP/1.1", "{}", log[0]);
}

#[test]
fn fault_freeze_of_new_connections_holds_their_handshake() {
    let sim = SimProcess::start(&[]);
    sim.control(
        "POST",
        "freeze",
        json!({"seconds": 2, "newConnections": true}),
    );
    let t0 = Instant::now();
    assert!(sim
        .kubectl_ok("get ns -o name")
        .contains("namespace/default"));
    assert!(
        t0.elapsed() >= Duration::from_millis(1500),
        "{:?}",
        t0.elapsed()
    );
}

#[test]
fn fault_short_watches_end_at_once() {
    let sim = SimProcess::start(&[]);
    sim.control("POST", "short-watches", json!({"count": 2}));
    for _ in 0..2 {
        let t0 = Instant::now();
        let mut w = sim.watch("/api/v1/pods?watch=1&resourceVersion=0");
        assert_eq!(w.status, 200);
        assert_eq!(w.collect(5 * S), vec![WatchItem::End]);
        assert!(t0.elapsed() < S);
    }
    let mut w = sim.watch("/api/v1/pods?watch=1&resourceVersion=0&timeoutSeconds=1");
    assert_eq!(w.event(5 * S)["type"], "ADDED");
}

#[test]
fn fault_malformed_line_on_open_and_next_watches() {
    let sim = SimProcess::start(&[]);
    let rev = sim.revision();
    let mut w = sim.watch(&format!(
        "/api/v1/pods?watch=1&resourceVersion={rev}&timeoutSeconds=1"
    ));
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(sim.control("POST", "malformed", json!({}))["watches"], 1);
    match w.next(5 * S) {
        WatchItem::Line(l) => assert!(serde_json::from_str::<Value>(&l).is_err(), "{l}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(w.next(5 * S), WatchItem::End);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(sim.control("POST", "malformed", json!({}))["watches"], 0);
    let mut w = sim.watch(&format!("/api/v1/pods?watch=1&resourceVersion={rev}"));
    match w.next(5 * S) {
        WatchItem::Line(l) => assert!(serde_json::from_str::<Value>(&l).is_err(), "{l}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn churn_is_switched_at_run_time_and_state_tracks_it() {
    let sim = SimProcess::start(&["--objects", "10"]);
    assert!(sim.control("GET", "help", Value::Null)["POST /_sim/churn"].is_string());
    let s0 = sim.state();
    assert_eq!(s0["objects"]["pods"].as_object().unwrap().len(), 10);
    assert!(s0["objects"]["widgets"]["default/w1"].is_string());
    assert!(s0["objects"]["namespaces"]["default"].is_string());
    let r0 = sim.revision();
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(sim.revision(), r0, "idle means no churn");
    sim.control("POST", "churn", json!({"rate": 100}));
    eventually(10 * S, "20 changes of the churn", || match sim.revision() {
        r1 if r1 > r0 + 20 => Ok(()),
        r1 => Err(format!("{r0} → {r1}")),
    });
    sim.control("POST", "churn", json!({"rate": 0, "faults": false}));
    std::thread::sleep(Duration::from_millis(200));
    let r2 = sim.revision();
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(sim.revision(), r2, "rate 0 stops churn");
    // The state matches a list.
    let list = sim.get("/api/v1/pods").json();
    let state = sim.state();
    assert_eq!(state["revision"], list["metadata"]["resourceVersion"]);
    for item in list["items"].as_array().unwrap() {
        let key = format!(
            "{}/{}",
            item["metadata"]["namespace"].as_str().unwrap(),
            item["metadata"]["name"].as_str().unwrap()
        );
        assert_eq!(
            state["objects"]["pods"][&key],
            item["metadata"]["resourceVersion"]
        );
    }
}

#[test]
fn steady_churn_is_deterministic_for_a_seed() {
    let names = || {
        let sim = SimProcess::start(&["--objects", "5", "--seed", "42", "--churn", "0"]);
        sim.control("POST", "churn", json!({"rate": 200}));
        eventually(60 * S, "revision 150", || match sim.revision() {
            r if r >= 150 => Ok(()),
            r => Err(r),
        });
        sim.control("POST", "churn", json!({"rate": 0}));
        // Compare the first 100 changes: the pods existing at a fixed revision.
        let list = sim
            .get("/api/v1/pods?resourceVersion=120&resourceVersionMatch=Exact")
            .json();
        item_names(&list)
    };
    assert_eq!(names(), names());
}

#[test]
fn kube_rs_client_works_in_process() {
    use futures::{StreamExt, TryStreamExt};
    use k8s_openapi::api::core::v1::Pod;
    use kube::api::{Api, ListParams, WatchEvent, WatchParams};
    use kwatch::sim::{Scenario, SimOptions, SimServer};

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let opts = SimOptions {
            objects: 4,
            scenario: Scenario::Idle,
            ..SimOptions::default()
        };
        let sim = SimServer::start(opts).await.unwrap();
        assert!(sim.url().starts_with("https://127.0.0.1:"));
        let path = tempfile::tempdir().unwrap();
        let kc_path = path.path().join("kc");
        sim.write_kubeconfig(&kc_path).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&kc_path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let kc = kube::config::Kubeconfig::from_yaml(&sim.kubeconfig_yaml()).unwrap();
        let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
            .await
            .unwrap();
        let client = kube::Client::try_from(config).unwrap();
        let pods: Api<Pod> = Api::all(client.clone());
        let list = pods.list(&ListParams::default()).await.unwrap();
        assert_eq!(list.items.len(), 4);
        let rv = list.metadata.resource_version.clone().unwrap();
        let cms: Api<k8s_openapi::api::core::v1::ConfigMap> =
            Api::namespaced(client.clone(), "default");
        let cm = serde_json::from_value(json!({"metadata":{"name":"kube-rs"},"data":{"a":"b"}}))
            .unwrap();
        cms.create(&Default::default(), &cm).await.unwrap();
        let all_cms: Api<k8s_openapi::api::core::v1::ConfigMap> = Api::all(client);
        let mut stream = all_cms
            .watch(&WatchParams::default().timeout(2), &rv)
            .await
            .unwrap()
            .boxed();
        let first = stream.try_next().await.unwrap().unwrap();
        match first {
            WatchEvent::Added(cm) => assert_eq!(cm.metadata.name.as_deref(), Some("kube-rs")),
            other => panic!("{other:?}"),
        }
        // The in-process control methods.
        let rev = sim.revision();
        assert_eq!(sim.state()["revision"], rev.to_string());
        assert_eq!(sim.compact(None), rev);
        // (kube-rs itself retries 429/503/504, so a 500 is what reaches the caller.)
        sim.fail_next(500, 1, 0);
        let res = pods.list(&ListParams::default()).await;
        assert!(
            matches!(&res, Err(kube::Error::Api(e)) if e.code == 500),
            "expected the 500"
        );
        sim.set_churn(0.0);
        sim.drop_watches();
        sim.shutdown().await;
    });
}

#[test]
fn status_subresource_no_op_updates_preconditions_and_object_watches() {
    let sim = SimProcess::start(&[]);
    let path = "/apis/example.com/v1/namespaces/default/widgets/w2";
    let w2 = sim.get(path).json();
    let rev = sim.revision();
    let mut w = sim.watch(&format!(
        "{path}?watch=1&resourceVersion={rev}&timeoutSeconds=2"
    ));
    // The main resource ignores status; /status ignores everything else.
    let p = merge_patch(
        &sim,
        path,
        json!({"spec": {"size": 6}, "status": {"phase": "Ignored"}}),
    );
    assert_eq!(
        (p["spec"]["size"].clone(), p.get("status").cloned()),
        (json!(6), None)
    );
    assert_eq!(p["metadata"]["generation"], 2);
    let p = merge_patch(
        &sim,
        &format!("{path}/status"),
        json!({"spec": {"size": 1}, "status": {"phase": "Ready"}}),
    );
    assert_eq!(
        (p["spec"]["size"].clone(), p["status"]["phase"].clone()),
        (json!(6), json!("Ready"))
    );
    assert_eq!(
        p["metadata"]["generation"], 2,
        "status writes keep the generation"
    );
    // Writing the same object again changes nothing: same resourceVersion, no event.
    let again = merge_patch(&sim, path, json!({"spec": {"size": 6}}));
    assert_eq!(rv_of(&again), rv_of(&p));
    assert_eq!(sim.revision(), rv_of(&p));
    // Delete preconditions.
    let body = json!({"preconditions": {"resourceVersion": "1"}}).to_string();
    let r = sim.send_json("DELETE", path, &body);
    assert_eq!(r.status, 409, "{}", r.body);
    assert!(r.json()["message"]
        .as_str()
        .unwrap()
        .contains("Precondition failed"));
    let body = json!({"preconditions": {"uid": w2["metadata"]["uid"], "resourceVersion": rv_of(&p).to_string()}}).to_string();
    assert_eq!(sim.send_json("DELETE", path, &body).status, 200);
    // The watch on the object path saw only w2.
    let evs = events(&w.collect(5 * S));
    let seen: Vec<(String, String, String)> = evs.iter().map(brief).collect();
    assert_eq!(
        seen.iter()
            .map(|(t, n, _)| (t.as_str(), n.as_str()))
            .collect::<Vec<_>>(),
        [("MODIFIED", "w2"), ("MODIFIED", "w2"), ("DELETED", "w2")]
    );
}

#[test]
fn a_bookmark_comes_two_seconds_before_the_timeout() {
    let sim = SimProcess::start(&["--bookmark-interval", "60", "--uncompacted"]);
    // From before the pods' watch cache revision: a bookmark is due.
    let rev = sim.revision() - 1;
    let t0 = Instant::now();
    let mut w = sim.watch(&format!(
        "/api/v1/pods?watch=1&resourceVersion={rev}&allowWatchBookmarks=true&timeoutSeconds=3"
    ));
    let e = w.event(5 * S);
    let at = t0.elapsed();
    assert_eq!(e["type"], "BOOKMARK");
    assert!(
        at >= Duration::from_millis(900) && at < Duration::from_millis(2800),
        "{at:?}"
    );
    assert_eq!(w.next(5 * S), WatchItem::End);
    assert!(t0.elapsed() >= Duration::from_millis(2900));
}

#[test]
fn watches_render_tables_and_partial_metadata_on_request() {
    let sim = SimProcess::start(&["--objects", "2"]);
    let path = "/api/v1/pods?watch=1&resourceVersion=0&timeoutSeconds=1";
    // The first event of a watch of `path` that accepts `accept`.
    let first = |accept: &str| sim.watch_with(path, &[("accept", accept)]).event(5 * S);
    let e = first("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1");
    assert_eq!(e["type"], "ADDED");
    assert_eq!(e["object"]["kind"], "PartialObjectMetadata");
    assert!(e["object"].get("spec").is_none());
    assert!(e["object"]["metadata"]["uid"].is_string());
    let e = first("application/json;as=Table;v=v1;g=meta.k8s.io,application/json");
    assert_eq!(e["object"]["kind"], "Table");
    assert_eq!(e["object"]["rows"].as_array().unwrap().len(), 1);
    assert_eq!(e["object"]["rows"][0]["cells"][2], "Running");
}

/// A create, merge patch and delete as a genuine kube-apiserver 1.32 answered them (captured
/// with `curl -A refcap/1.0`), byte for byte once uid, resourceVersion and times are aligned
/// (the captured patch followed a PUT that had set `k` to `v7-updated`; here `k` stays `v7`).
#[test]
fn writes_match_the_reference_captures() {
    const CREATED: &str = r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cm7","namespace":"ref","uid":"33f15216-b8ae-48d4-9dfa-b8b3ff2adc52","resourceVersion":"271","creationTimestamp":"2026-11-21T21:13:09Z","labels":{"app":"b"},"managedFields":[{"manager":"refcap","operation":"Update","apiVersion":"v1","time":"2026-11-21T21:13:09Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:k":{}},"f:metadata":{"f:labels":{".":{},"f:app":{}}}}}]},"data":{"k":"v7"}}"#;
    const PATCHED: &str = r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cm7","namespace":"ref","uid":"33f15216-b8ae-48d4-9dfa-b8b3ff2adc52","resourceVersion":"274","creationTimestamp":"2026-11-21T21:13:09Z","labels":{"app":"b","patched":"yes"},"managedFields":[{"manager":"refcap","operation":"Update","apiVersion":"v1","time":"2026-11-21T21:13:09Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:k":{},"f:k2":{}},"f:metadata":{"f:labels":{".":{},"f:app":{},"f:patched":{}}}}}]},"data":{"k":"v7","k2":"new"}}"#;
    const DELETED: &str = r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"cm7","kind":"configmaps","uid":"33f15216-b8ae-48d4-9dfa-b8b3ff2adc52"}}"#;
    let sim = SimProcess::start(&[]);
    // As the captures were made: the token, refcap's user agent, `ct` as the content type.
    let send = |method: &str, path: &str, ct: &str, body: &str| {
        let headers = [
            ("authorization".to_string(), format!("Bearer {}", sim.token)),
            ("user-agent".to_string(), "refcap/1.0".to_string()),
            ("content-type".to_string(), ct.to_string()),
        ];
        sim.request_with(method, path, &headers, body)
    };
    let r = send(
        "POST",
        "/api/v1/namespaces",
        "application/json",
        r#"{"metadata":{"name":"ref"}}"#,
    );
    assert_eq!(r.status, 201);
    // Aligns what legitimately differs: uid, resourceVersion and timestamps.
    let align = |body: &str, rv: &str| {
        let mut v: Value = serde_json::from_str(body).unwrap();
        if v["kind"] == "ConfigMap" {
            v["metadata"]["uid"] = json!("33f15216-b8ae-48d4-9dfa-b8b3ff2adc52");
            v["metadata"]["resourceVersion"] = json!(rv);
            v["metadata"]["creationTimestamp"] = json!("2026-11-21T21:13:09Z");
            v["metadata"]["managedFields"][0]["time"] = json!("2026-11-21T21:13:09Z");
        } else {
            v["details"]["uid"] = json!("33f15216-b8ae-48d4-9dfa-b8b3ff2adc52");
        }
        serde_json::to_string(&v).unwrap()
    };
    let body = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm7","labels":{"app":"b"}},"data":{"k":"v7"}}"#;
    let r = send(
        "POST",
        "/api/v1/namespaces/ref/configmaps",
        "application/json",
        body,
    );
    assert_eq!(r.status, 201);
    assert!(r.body.ends_with("}\n"));
    assert_eq!(align(&r.body, "271"), CREATED);
    let patch = r#"{"metadata":{"labels":{"patched":"yes"}},"data":{"k2":"new"}}"#;
    let r = send(
        "PATCH",
        "/api/v1/namespaces/ref/configmaps/cm7",
        "application/merge-patch+json",
        patch,
    );
    assert_eq!(r.status, 200);
    assert_eq!(align(&r.body, "274"), PATCHED);
    let r = send(
        "DELETE",
        "/api/v1/namespaces/ref/configmaps/cm7",
        "application/json",
        "",
    );
    assert_eq!(align(&r.body, ""), DELETED);
}

/// The simulator's Tables as kube-apiserver 1.32 serves them (response.go
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
    let events = w.events_to_bookmark(Duration::from_secs(5));
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
        .kubectl_cmd("get configmaps -n default -w --output-watch-events")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("kubectl");
    let lines = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let sink = lines.clone();
    let stdout = kw.stdout.take().expect("kubectl's stdout");
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            sink.lock().unwrap().push_str(&format!("{line}\n"));
        }
    });
    let text_with = |word: &'static str| {
        let lines = lines.clone();
        move || {
            let text = lines.lock().unwrap().clone();
            if text.contains(word) {
                Ok(())
            } else {
                Err(text)
            }
        }
    };
    // The initial list's row: kubectl is watching.
    eventually(
        S * 60,
        "kubectl's initial rows",
        text_with("kube-root-ca.crt"),
    );
    kubectl_f(
        &sim,
        "create",
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta("seen"), "data": {"a": "1"}}),
    );
    eventually(S * 60, "the new row", text_with(" seen "));
    let _ = kw.kill();
    let _ = kw.wait();
    let text = lines.lock().unwrap().clone();
    let added: Vec<&str> = text.lines().filter(|l| l.contains(" seen ")).collect();
    assert_eq!(added.len(), 1, "{text}");
    assert!(added[0].starts_with("ADDED"), "{text}");
    assert!(text.starts_with("EVENT"), "one header: {text}");
    assert_eq!(text.matches("EVENT").count(), 1, "{text}");
}

/// Plain HTTP to the TLS port gets Go's `400 Client sent an HTTP request to an
/// HTTPS server.` from the sim, as from kube-apiserver (it sent a TLS alert, which kwatch
/// retried silently until `--timeout`), and kubectl says what it says to a real server.
#[test]
fn plain_http_to_the_tls_port_is_answered_as_kube_apiserver_answers_it() {
    let sim = SimProcess::start(&["--objects", "1"]);
    let http = sim.url.replace("https://", "http://");
    let f = kwatch_env(
        &sim,
        &[],
        format!("-s {http} pods --until-synced --timeout 5s"),
    );
    let line = one_error_line(&f, "http://");
    assert!(
        line.ends_with("(BadRequest): Client sent an HTTP request to an HTTPS server."),
        "{line}"
    );
    let out = crate::util::tools::kubectl()
        .args(["-s", &http, "get", "pods"])
        .env_clear()
        .env("HOME", sim.dir())
        .output()
        .expect("running kubectl");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(
            "Error from server (BadRequest): the server rejected our request for an unknown reason"
        ),
        "{said}"
    );
}

/// A SelfSubjectAccessReview (what `kubectl auth can-i` asks, in protobuf, which the
/// simulator does not speak; kwatch's `--probe` asks it in JSON) is answered with the fixed
/// policy (crates/sim/src/auth.rs): the viewer may list config maps but not create them.
#[test]
fn self_subject_access_reviews_answer_the_policy() {
    let sim = SimProcess::start(&[]);
    let viewer = "system:serviceaccount:default:viewer";
    let can_i = |verb: &str, who: Option<&str>| {
        let mut headers = vec![
            ("authorization".to_owned(), format!("Bearer {}", sim.token)),
            ("content-type".to_owned(), "application/json".to_owned()),
        ];
        if let Some(w) = who {
            headers.push(("impersonate-user".to_owned(), w.to_owned()));
        }
        let review = json!({"apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": {"namespace": "default", "verb": verb,
                                            "resource": "configmaps"}}});
        let r = sim.request_with(
            "POST",
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
            &headers,
            &review.to_string(),
        );
        assert_eq!(r.status, 201, "{}", r.body);
        let v = r.json();
        assert_eq!(v["spec"], review["spec"], "{v}");
        v["status"]["allowed"].as_bool().expect("status.allowed")
    };
    assert!(can_i("list", Some(viewer)));
    assert!(!can_i("create", Some(viewer)));
    assert!(can_i("delete", None));
}

/// `stale-list`: the next list is served once at an older retained revision, as a stale
/// watch cache of an HA control plane serves it, without the object created since.
#[test]
fn a_stale_list_is_served_once_from_an_older_revision() {
    let sim = SimProcess::start(&[]);
    let rev = sim.revision();
    create_cm(&sim, "default", "newer", "x");
    let r = sim.control("POST", "stale-list", json!({"revision": rev}));
    assert_eq!(r["revision"], rev.to_string(), "{r}");
    let names = |l: &Value| -> Vec<String> {
        l["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["metadata"]["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let stale = sim.get("/api/v1/namespaces/default/configmaps").json();
    assert_eq!(rv_of(&stale), rev, "{stale}");
    assert!(!names(&stale).contains(&"newer".to_owned()), "{stale}");
    let fresh = sim.get("/api/v1/namespaces/default/configmaps").json();
    assert!(rv_of(&fresh) > rev, "{fresh}");
    assert!(names(&fresh).contains(&"newer".to_owned()), "{fresh}");
}

/// An answer over 128 KiB to a request that accepts gzip comes gzipped,
/// as kube-apiserver's APIResponseCompression sends it; a smaller one, and any answer to a
/// request that does not accept gzip, comes as it is.
#[test]
fn answers_over_128_kib_are_gzipped_when_gzip_is_accepted() {
    let sim = SimProcess::start(&["--objects", "300"]);
    let auth = ("authorization".to_owned(), format!("Bearer {}", sim.token));
    let gzip = ("accept-encoding".to_owned(), "gzip".to_owned());
    let get = |path: &str, headers: &[(String, String)]| {
        let r = sim.request_with("GET", path, headers, "");
        assert_eq!(r.status, 200, "{path}: {}", r.body);
        r
    };
    let large = get("/api/v1/pods", &[auth.clone(), gzip.clone()]);
    assert_eq!(large.header("content-encoding").as_deref(), Some("gzip"));
    assert_eq!(large.header("vary").as_deref(), Some("Accept-Encoding"));
    assert!(!large.body.starts_with('{'), "a gzip body, not JSON");
    let plain = get("/api/v1/pods", std::slice::from_ref(&auth));
    assert_eq!(plain.header("content-encoding"), None);
    assert!(plain.body.len() > 128 * 1024, "{} bytes", plain.body.len());
    let small = get("/api/v1/pods?limit=1", &[auth, gzip]);
    assert_eq!(small.header("content-encoding"), None);
    assert!(small.json()["items"].is_array());
}

/// `--bend no-end-bookmark`: a streaming list's initial events, then no bookmark
/// annotated `k8s.io/initial-events-end`; the periodic one (without it) still comes.
#[test]
fn bend_no_end_bookmark_leaves_out_the_initial_events_end() {
    // etcd's progress notifications bring the pods' cache to a revision the namespace's
    // label makes: the periodic bookmarks that follow the initial events carry it.
    let sim = SimProcess::start(&[
        "--bend",
        "no-end-bookmark",
        "--progress-notify-interval",
        "0.2",
    ]);
    let mut w = sim.watch(
        "/api/v1/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan\
         &allowWatchBookmarks=true&timeoutSeconds=30",
    );
    sim.kubectl_ok("label namespace team-a touched=yes");
    let events = w.events_to_bookmark(10 * S);
    let (bookmark, initial) = events.split_last().unwrap();
    assert!(!initial.is_empty() && initial.iter().all(|e| e["type"] == "ADDED"));
    assert!(
        bookmark["object"]["metadata"]["annotations"].is_null(),
        "{bookmark}"
    );
}

/// `--bend close-on-expired`: a watch from a resourceVersion older than the history ends
/// cleanly with no ERROR event, where the healthy simulator sends 410 Expired.
#[test]
fn bend_close_on_expired_ends_a_too_old_watch_cleanly() {
    let path = "/api/v1/pods?watch=1&resourceVersion=1&timeoutSeconds=5";
    let healthy = SimProcess::start(&[]);
    let ev = healthy.watch(path).event(5 * S);
    assert_eq!(
        (ev["type"].as_str(), ev["object"]["code"].as_u64()),
        (Some("ERROR"), Some(410))
    );
    let bent = SimProcess::start(&["--bend", "close-on-expired"]);
    assert_eq!(bent.watch(path).collect(5 * S), vec![WatchItem::End]);
}

/// `--bend forbid-watch`: lists are allowed, every watch is RBAC's 403 for the verb
/// watch, and the SelfSubjectAccessReview for watch says no.
#[test]
fn bend_forbid_watch_refuses_watches_and_says_so_in_access_reviews() {
    let sim = SimProcess::start(&["--bend", "forbid-watch"]);
    assert_eq!(sim.get("/api/v1/pods").status, 200);
    let r = sim.get("/api/v1/pods?watch=1");
    assert_eq!(r.status, 403, "{}", r.body);
    assert!(
        r.body.contains("cannot watch resource \\\"pods\\\""),
        "{}",
        r.body
    );
    let review = |verb: &str| {
        let body = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": {"verb": verb, "resource": "pods"}}});
        let r = sim.send_json(
            "POST",
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
            &body.to_string(),
        );
        r.json()["status"]["allowed"].as_bool()
    };
    assert_eq!((review("list"), review("watch")), (Some(true), Some(false)));
}

/// `--bend opaque-rv`: every resourceVersion is the base64 of `{"member1":"N"}`, in lists,
/// objects and watch events, and such a version is taken back as N.
#[test]
fn bend_opaque_rv_serves_composite_resource_versions() {
    let sim = SimProcess::start(&["--bend", "opaque-rv"]);
    let list = sim.get("/api/v1/namespaces/default/configmaps").json();
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(rv.parse::<u64>().is_err(), "{rv}");
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(&rv)
        .unwrap();
    let n: Value = serde_json::from_slice(&decoded).unwrap();
    assert!(n["member1"].as_str().unwrap().parse::<u64>().is_ok(), "{n}");
    for item in list["items"].as_array().unwrap() {
        let irv = item["metadata"]["resourceVersion"].as_str().unwrap();
        assert!(irv.parse::<u64>().is_err(), "{irv}");
    }
    let encoded: String = form_urlencoded_rv(&rv);
    let mut w = sim.watch(&format!(
        "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={encoded}&timeoutSeconds=5"
    ));
    assert_eq!(w.status, 200);
    crate::util::kwatch::create_configmap(&sim, "default", "opaque", json!({"k": "v"}));
    let ev = w.event(10 * S);
    assert_eq!(ev["type"], "ADDED", "{ev}");
    let erv = ev["object"]["metadata"]["resourceVersion"]
        .as_str()
        .unwrap();
    assert!(erv.parse::<u64>().is_err(), "{erv}");
}

/// `--bend no-bookmarks`: a watch that asks for bookmarks gets none, not even the one
/// before its timeout.
#[test]
fn bend_no_bookmarks_sends_none() {
    let sim = SimProcess::start(&["--bend", "no-bookmarks", "--bookmark-interval", "0.2"]);
    let rev = sim.revision();
    let mut w = sim.watch(&format!(
        "/api/v1/pods?watch=1&resourceVersion={rev}&allowWatchBookmarks=true&timeoutSeconds=3"
    ));
    assert_eq!(w.collect(10 * S), vec![WatchItem::End]);
}

/// A resourceVersion as a query value: base64's `+`, `/` and `=` escaped.
fn form_urlencoded_rv(rv: &str) -> String {
    rv.replace('+', "%2B")
        .replace('/', "%2F")
        .replace('=', "%3D")
}
