//! kwatch end to end: the built binary over HTTPS against `kwatch sim`, the way a user
//! runs it.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::util::kwatch::{configmap, is_delta, kubectl_f, of_type, on_new_sim};
use crate::util::shared::*;
use crate::util::{SimProcess, LIMIT};

/// The server's live objects of one resource: key → resourceVersion.
fn live(sim: &SimProcess, plural: &str) -> BTreeMap<String, String> {
    let state = sim.state();
    state["objects"][plural]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
                .collect()
        })
        .unwrap_or_default()
}

/// Replays deltas: Added/Updated/Replaced/Sync set, Deleted removes.
fn replay(records: &[Value]) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    for r in records.iter().filter(|r| is_delta(r)) {
        let key = r["key"].as_str().unwrap().to_owned();
        match r["type"].as_str().unwrap() {
            "Deleted" => {
                m.remove(&key);
            }
            _ => {
                m.insert(key, r["resourceVersion"].as_str().unwrap().to_owned());
            }
        }
    }
    m
}

fn in_namespace(m: &BTreeMap<String, String>, ns: &str) -> BTreeMap<String, String> {
    m.iter()
        .filter(|(k, _)| k.starts_with(&format!("{ns}/")))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn create_configmap(sim: &SimProcess, name: &str, value: &str) -> Value {
    kubectl_f(
        sim,
        "create",
        &configmap("default", name, json!({"k": value})),
    )
}

fn types(v: &[Value]) -> Vec<String> {
    v.iter()
        .map(|r| r["type"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn until_synced_prints_list_listed_one_replaced_per_object_and_synced() {
    let sim = SimProcess::start(&["--objects", "8"]);
    let want = in_namespace(&live(&sim, "pods"), "default");
    assert!(want.len() >= 3, "{want:?}");
    for mode in ["off", "on"] {
        let out = sim
            .kwatch(format!(
                "pods -n default -o json --until-synced --watch-list {mode}"
            ))
            .exits(0);
        let recs = out.json();
        let t = types(&recs);
        assert_eq!(t[0], "List");
        assert_eq!(t[1], "Listed");
        assert_eq!(t.last().unwrap(), "Synced");
        assert!(t[2..t.len() - 1].iter().all(|x| x == "Replaced"), "{t:?}");
        assert_eq!(recs[0]["streaming"], mode == "on");
        assert_eq!(recs[0]["reason"], "initial");
        if mode == "off" {
            assert_eq!(recs[0]["resourceVersion"], "0");
            assert_eq!(recs[0]["limit"], 500);
        }
        assert_eq!(recs[1]["items"], want.len());
        assert_eq!(replay(&recs), want, "mode {mode}");
        for r in of_type(&recs, "Replaced") {
            assert_eq!(r["initialList"], true);
            assert_eq!(r["kind"], "Pod");
            assert_eq!(r["apiVersion"], "v1");
            assert_eq!(r["namespace"], "default");
            assert_eq!(r["object"]["metadata"]["name"], r["name"]);
            assert!(r["object"]["metadata"].get("managedFields").is_none());
            assert!(r["time"].as_str().unwrap().ends_with('Z'));
        }
    }
}

#[test]
fn page_size_lists_in_several_pages() {
    let sim = SimProcess::start(&["--objects", "12"]);
    let want = live(&sim, "pods");
    let out = sim
        .kwatch("pods -A -o json --until-synced --page-size 2")
        .exits(0);
    let recs = out.json();
    assert_eq!(recs[0]["limit"], 2);
    assert_eq!(recs[0]["resourceVersion"], "");
    assert_eq!(recs[0]["streaming"], false);
    let pages = recs[1]["pages"].as_u64().unwrap();
    assert_eq!(pages as usize, want.len().div_ceil(2), "{}", recs[1]);
    assert_eq!(replay(&recs), want);
}

#[test]
fn every_change_appears_with_its_new_resource_version_in_order() {
    let sim = SimProcess::start(&[]);
    let mut kw = sim.start_kwatch("configmaps -n default -o json");
    kw.wait_for(LIMIT, "Synced", |v| !of_type(v, "Synced").is_empty());

    let created = create_configmap(&sim, "e2e", "v1");
    let patched: Value = serde_json::from_str(&sim.kubectl_ok([
        "patch",
        "configmap",
        "e2e",
        "-n",
        "default",
        "--type",
        "merge",
        "-p",
        r#"{"data":{"k":"v2"}}"#,
        "-o",
        "json",
    ]))
    .unwrap();
    sim.kubectl_ok("delete configmap e2e -n default");
    let recs = kw.wait_for(LIMIT, "the deletion", |v| {
        v.iter()
            .any(|r| r["type"] == "Deleted" && r["key"] == "default/e2e")
    });
    let mine: Vec<&Value> = recs.iter().filter(|r| r["key"] == "default/e2e").collect();
    let rv = |v: &Value| {
        v["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(mine[0]["type"], "Added");
    assert_eq!(mine[0]["resourceVersion"], rv(&created));
    assert_eq!(mine[0]["initialList"], false);
    assert_eq!(mine[1]["type"], "Updated");
    assert_eq!(mine[1]["resourceVersion"], rv(&patched));
    assert_eq!(mine[1]["object"]["data"]["k"], "v2");
    assert_eq!(mine[2]["type"], "Deleted");
    assert!(mine[2].get("finalStateUnknown").is_none());
    let n = |r: &Value| {
        r["resourceVersion"]
            .as_str()
            .unwrap()
            .parse::<u64>()
            .unwrap()
    };
    assert!(n(mine[2]) > n(mine[1]) && n(mine[1]) > n(mine[0]));
    assert_eq!(mine.len(), 3);
}

/// Per key, the changes `(type, resourceVersion)` in the order they came: a watch's
/// events (ADDED, MODIFIED, DELETED) named as kwatch's records name them.
type Changes = BTreeMap<String, Vec<(String, String)>>;

/// Every change the churn made, as the server's own watch of pods from the list's
/// resourceVersion sends it, up to and with the event of resourceVersion `last`.
fn server_changes(sim: &SimProcess, from: &str, last: &str) -> Changes {
    let mut watch = sim.watch(&format!("/api/v1/pods?watch=1&resourceVersion={from}"));
    assert_eq!(watch.status, 200);
    let mut changes = Changes::new();
    loop {
        let e = watch.event(LIMIT);
        let o = &e["object"]["metadata"];
        let kind = match e["type"].as_str() {
            Some("ADDED") => "Added",
            Some("MODIFIED") => "Updated",
            Some("DELETED") => "Deleted",
            _ => panic!("not a change: {e}"),
        };
        let rv = o["resourceVersion"].as_str().expect("a resourceVersion");
        let key = format!(
            "{}/{}",
            o["namespace"].as_str().unwrap_or_default(),
            o["name"].as_str().unwrap_or_default()
        );
        changes
            .entry(key)
            .or_default()
            .push((kind.to_owned(), rv.to_owned()));
        if rv == last {
            return changes;
        }
    }
}

/// kwatch's records of what the watch brought (Added, Updated, Deleted) up to and with
/// resourceVersion `last`, per key.
fn printed_changes(recs: &[Value], last: &str) -> Changes {
    let last: u64 = last.parse().expect("a resourceVersion");
    let mut changes = Changes::new();
    let watched = |r: &&Value| {
        ["Added", "Updated", "Deleted"].contains(&r["type"].as_str().unwrap_or_default())
            && r["resourceVersion"]
                .as_str()
                .and_then(|v| v.parse::<u64>().ok())
                <= Some(last)
    };
    for r in recs.iter().filter(watched) {
        changes
            .entry(r["key"].as_str().unwrap().to_owned())
            .or_default()
            .push((
                r["type"].as_str().unwrap().to_owned(),
                r["resourceVersion"].as_str().unwrap().to_owned(),
            ));
    }
    changes
}

/// Every change the churn makes after the list is printed, each with its
/// resourceVersion, in the server's order per key (none dropped, none coalesced), and
/// the deltas replayed give the server's state.
#[test]
fn churn_is_seen_in_full_and_converges_on_the_server_state() {
    let sim = SimProcess::start(&["--scenario", "steady", "--churn", "40", "--objects", "10"]);
    let mut kw = sim.start_kwatch("pods -A -o json");
    let recs = kw.wait_for(LIMIT, "Synced", |v| !of_type(v, "Synced").is_empty());
    let listed = of_type(&recs, "Listed")[0]["resourceVersion"]
        .as_str()
        .expect("the list's resourceVersion")
        .to_owned();
    // A hundred changes of the churn seen by the watch, then the churn stops.
    kw.wait_for(LIMIT, "100 changes after the sync", |v| {
        v.iter()
            .skip_while(|r| r["type"] != "Synced")
            .filter(|r| is_delta(r))
            .count()
            >= 100
    });
    sim.control("POST", "/_sim/churn", json!({"rate": 0}));
    // The test's own last change marks the end of the history.
    let last = kubectl_f(
        &sim,
        "create",
        &json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "churn-end", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}),
    );
    let last = last["metadata"]["resourceVersion"]
        .as_str()
        .expect("its resourceVersion");
    let made = server_changes(&sim, &listed, last);
    let want = live(&sim, "pods");
    let recs = kw.wait_for(LIMIT, "convergence", |v| {
        replay(v) == want && v.iter().any(|r| r["key"] == "default/churn-end")
    });
    let made_count: usize = made.values().map(Vec::len).sum();
    assert!(made_count > 100, "{made:#?}");
    let printed = printed_changes(&recs, last);
    for (key, changes) in &made {
        assert_eq!(printed.get(key), Some(changes), "the changes of {key}");
    }
    assert_eq!(printed.len(), made.len(), "keys changed: {printed:#?}");
    // Per key, resourceVersions never go backwards.
    let mut last: BTreeMap<&str, u64> = BTreeMap::new();
    for r in recs.iter().filter(|r| is_delta(r)) {
        let rv: u64 = r["resourceVersion"].as_str().unwrap().parse().unwrap();
        let prev = last.insert(r["key"].as_str().unwrap(), rv).unwrap_or(0);
        assert!(rv >= prev, "{r}");
    }
    let counts = |t: &str| of_type(&recs, t).len();
    assert!(counts("Added") > 0 && counts("Updated") > 0 && counts("Deleted") > 0);
}

#[test]
fn dropped_watches_rewatch_from_the_last_resource_version_without_relisting() {
    let sim = SimProcess::start(&[]);
    let mut kw = sim.start_kwatch("configmaps -A -o json");
    kw.wait_for(LIMIT, "Watch", |v| !of_type(v, "Watch").is_empty());
    create_configmap(&sim, "before", "1");
    let recs = kw.wait_for(LIMIT, "Added before", |v| {
        v.iter().any(|r| r["key"] == "default/before")
    });
    let last_rv = recs.iter().rev().find(|r| is_delta(r)).unwrap()["resourceVersion"].clone();
    sim.drop_watches();
    let recs = kw.wait_for(LIMIT, "the second Watch", |v| {
        of_type(v, "Watch").len() >= 2
    });
    let ended = of_type(&recs, "WatchEnded");
    assert_eq!(ended[0]["error"], false, "{}", ended[0]);
    assert_eq!(of_type(&recs, "Watch")[1]["resourceVersion"], last_rv);
    create_configmap(&sim, "after", "2");
    let recs = kw.wait_for(LIMIT, "Added after", |v| {
        v.iter().any(|r| r["key"] == "default/after")
    });
    assert_eq!(of_type(&recs, "List").len(), 1, "no relist: {recs:#?}");
}

#[test]
fn compaction_then_drop_relists_with_the_410_reason_and_tombstones_what_was_missed() {
    let sim = SimProcess::start(&[]);
    for mode in ["off", "on"] {
        create_configmap(&sim, "doomed", mode);
        let mut kw = sim.start_kwatch(format!("configmaps -n default -o json --watch-list {mode}"));
        kw.wait_for(LIMIT, "Watch", |v| !of_type(v, "Watch").is_empty());
        // Hold the watch, delete while it is held, forget history, release the watch.
        sim.forced_410(|sim| sim.kubectl_ok("delete configmap doomed -n default"));
        let recs = kw.wait_for(LIMIT, "the tombstone", |v| {
            v.iter()
                .any(|r| r["key"] == "default/doomed" && r["type"] == "Deleted")
        });
        let lists = of_type(&recs, "List");
        assert_eq!(lists.len(), 2, "{recs:#?}");
        let reason = lists[1]["reason"].as_str().unwrap();
        assert!(
            reason.contains("410") && reason.contains("too old resource version"),
            "{reason}"
        );
        let relist_at = recs.iter().position(|r| std::ptr::eq(r, lists[1])).unwrap();
        let tomb = recs
            .iter()
            .position(|r| r["key"] == "default/doomed" && r["type"] == "Deleted")
            .unwrap();
        assert!(tomb > relist_at);
        assert_eq!(recs[tomb]["finalStateUnknown"], true);
        let replaced_after: Vec<&Value> = recs[relist_at..]
            .iter()
            .filter(|r| r["type"] == "Replaced")
            .collect();
        assert!(!replaced_after.is_empty());
        assert!(replaced_after.iter().all(|r| r["initialList"] == false));
        assert!(recs[..relist_at]
            .iter()
            .all(|r| r["type"] != "Replaced" || r["initialList"] == true));
        assert_eq!(
            replay(&recs),
            in_namespace(&live(&sim, "configmaps"), "default")
        );
    }
}

#[test]
fn several_resources_share_one_stream() {
    let (_sim, out) = on_new_sim(&[], "po,deploy,widgets -A -o json --until-synced");
    let recs = out.json();
    let synced: Vec<&str> = of_type(&recs, "Synced")
        .iter()
        .map(|r| r["resource"].as_str().unwrap())
        .collect();
    let mut sorted = synced.clone();
    sorted.sort();
    assert_eq!(sorted, ["deployments.apps", "pods", "widgets.example.com"]);
    let kinds: std::collections::BTreeSet<&str> = recs
        .iter()
        .filter(|r| is_delta(r))
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["Deployment", "Pod", "Widget"].into_iter().collect());
    let widget = recs.iter().find(|r| r["kind"] == "Widget").unwrap();
    assert_eq!(widget["apiVersion"], "example.com/v1");
}

#[test]
fn real_fifo_prints_every_notification_in_order_where_delta_fifo_coalesces() {
    let sim = SimProcess::start(&[]);
    let manifest = |name: &str, v: &str| configmap("team-a", name, json!({ "k": v }));
    for name in ["a", "b", "c"] {
        kubectl_f(&sim, "create", &manifest(name, "0"));
    }
    let mut seen = BTreeMap::new();
    for fifo in ["delta", "real"] {
        // A slow consumer (300 ms a pop) and a stalled watch: c, a, b, a arrive together;
        // while c is being handled, a, b, a queue up. The stall is held until the four
        // kubectl writes are made.
        let mut kw = sim.start_kwatch(format!("configmaps -n team-a -o json --watch-only --watch-list off --pop-delay 300ms --fifo {fifo}"));
        kw.wait_for(LIMIT, "Watch", |v| !of_type(v, "Watch").is_empty());
        sim.control("POST", "/_sim/stall", json!({"until": "released"}));
        for (name, v) in [("c", "1"), ("a", "1"), ("b", "1"), ("a", "2")] {
            kubectl_f(&sim, "replace", &manifest(name, &format!("{fifo}{v}")));
        }
        sim.control("POST", "/_sim/release", json!({"fault": "stall"}));
        let recs = kw.wait_for(LIMIT, "four updates", |v| of_type(v, "Updated").len() == 4);
        let order: Vec<String> = of_type(&recs, "Updated")
            .iter()
            .map(|r| {
                format!(
                    "{}{}",
                    r["name"].as_str().unwrap(),
                    r["object"]["data"]["k"]
                        .as_str()
                        .unwrap()
                        .trim_start_matches(fifo)
                )
            })
            .collect();
        seen.insert(fifo, order);
    }
    assert_eq!(
        seen["delta"],
        ["c1", "a1", "a2", "b1"],
        "DeltaFIFO hands out a key's deltas together"
    );
    assert_eq!(
        seen["real"],
        ["c1", "a1", "b1", "a2"],
        "RealFIFO keeps arrival order"
    );
}

/// The `resourceVersion=` of a request path ("" without one).
fn rv_of(path: &str) -> &str {
    path.split(['?', '&'])
        .find_map(|kv| kv.strip_prefix("resourceVersion="))
        .unwrap_or("")
}

/// A watch that stays silent (no event, no bookmark) until its timeout is watched
/// again from the same resourceVersion, as client-go's reflector does: no LIST after the
/// first, no relist, no backoff.
#[test]
fn a_watch_silent_until_its_timeout_is_watched_again_without_a_relist() {
    let sim = SimProcess::start(&[]);
    sim.control("POST", "/_sim/bookmarks", json!({"enabled": false}));
    let mut kw =
        sim.start_kwatch("pods -n default -o json --watch-list off --min-watch-timeout 2s");
    // Watch timeouts are in [2 s, 4 s): three watches have ended by 12 s.
    let recs = kw.wait_for(LIMIT, "three watches ended", |v| {
        of_type(v, "WatchEnded").len() >= 3
    });
    assert!(!recs.is_empty());
    let pods = requests_under(&sim, "/api/v1/namespaces/default/pods");
    let lists: Vec<_> = pods.iter().filter(|(p, _)| !is_watch(p)).collect();
    let watches: Vec<_> = pods.iter().filter(|(p, _)| is_watch(p)).collect();
    assert_eq!(lists.len(), 1, "one LIST only: {pods:#?}");
    assert!(watches.len() >= 3, "{pods:#?}");
    let list_rv = of_type(&recs, "Listed")[0]["resourceVersion"]
        .as_str()
        .expect("the list's RV")
        .to_owned();
    for (path, _) in &watches {
        assert_eq!(
            rv_of(path),
            list_rv,
            "every watch from the list's RV: {pods:#?}"
        );
    }
    for ended in of_type(&recs, "WatchEnded") {
        assert_eq!(ended["error"], false, "{ended}");
    }
    assert_eq!(of_type(&recs, "List").len(), 1, "{recs:#?}");
    assert!(of_type(&recs, "Backoff").is_empty(), "{recs:#?}");
    assert!(of_type(&recs, "Bookmark").is_empty(), "{recs:#?}");
    let synced = recs
        .iter()
        .position(|r| r["type"] == "Synced")
        .expect("Synced");
    assert!(
        recs[synced..].iter().all(|r| r["type"] != "Replaced"),
        "no object listed again: {recs:#?}"
    );
}

/// `--stats` counts a streaming list's objects (it has no pages), and a
/// RealFIFO gets a queue line with what it counts.
#[test]
fn stats_count_a_streaming_lists_objects_and_a_real_fifos_queue() {
    let args = "pods -A -o json --watch-list on --fifo real --until-synced --stats";
    let (_sim, out) = on_new_sim(&[], args);
    let recs = out.json();
    assert!(!recs.is_empty(), "{}", out.stderr);
    let n = of_type(&recs, "Replaced").len();
    assert!(n > 0, "{recs:#?}");
    let err = &out.stderr;
    let lists = err
        .lines()
        .find(|l| l.trim_start().starts_with("lists:"))
        .unwrap_or_else(|| panic!("no lists line: {err}"));
    assert_eq!(
        lists.trim(),
        format!("lists: 1 (0 relists), 1 streamed, {n} objects"),
        "{err}"
    );
    assert!(!lists.contains("page"), "{err}");
    let queue = err
        .lines()
        .find(|l| l.trim_start().starts_with("queue pods:"))
        .unwrap_or_else(|| panic!("no queue line for the RealFIFO: {err}"));
    assert!(
        queue.contains(&format!("queued {n}, popped {n}")),
        "{queue}\n{err}"
    );
}

#[test]
fn stats_summarise_the_run_on_stderr() {
    let args = "pods -A -o json --until-synced --stats --page-size 4";
    let (sim, out) = on_new_sim(&["--objects", "6"], args);
    let recs = out.json();
    let n = of_type(&recs, "Replaced").len();
    let pages = recs[1]["pages"].as_u64().unwrap();
    assert!(pages >= 2, "{}", recs[1]);
    let err = &out.stderr;
    assert!(
        err.contains(&format!("deltas: {n} (Replaced {n})")),
        "{err}"
    );
    assert!(
        err.contains(&format!("lists: 1 (0 relists), {pages} pages, {n} items")),
        "{err}"
    );
    assert!(err.contains("synced after: "), "{err}");
    assert!(err.contains(&format!("queue pods: max depth {n}")), "{err}");
    // Without --stats, stderr holds the table's `~` lines only.
    let quiet = sim.kwatch("pods -A --until-synced");
    assert!(
        !quiet.stderr.is_empty() && quiet.stderr.lines().all(|l| l.starts_with("~ ")),
        "{}",
        quiet.stderr
    );
}

/// `--pop-delay` is a slow event handler: it slows the deltas, each handled at least the
/// delay after the one before, not the reflector's own records (which used to come the
/// delay apart too). Record times, as kwatch stamped them, not the test's clock.
#[test]
fn pop_delay_slows_deltas_only() {
    let sim = SimProcess::start(&[]);
    sim.kubectl_ok("create namespace slow");
    for name in ["slow-a", "slow-b", "slow-c"] {
        kubectl_f(&sim, "create", &configmap("slow", name, json!({"k": "v"})));
    }
    let delay = jiff::SignedDuration::from_secs(1);
    let args = "configmaps -n slow --pop-delay 1s --fifo delta --until-synced --stats -o json";
    let out = sim.kwatch(args).exits(0);
    let recs = out.json();
    let types: Vec<&str> = recs.iter().map(|r| r["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        ["List", "Listed", "Replaced", "Replaced", "Replaced", "Synced"],
        "{recs:#?}"
    );
    let time = |r: &Value| -> jiff::Timestamp { r["time"].as_str().unwrap().parse().unwrap() };
    let times: Vec<jiff::Timestamp> = recs.iter().map(time).collect();
    // Stamped to the millisecond: a delay of 1 s may show as 999 ms.
    let at_least = delay - jiff::SignedDuration::from_millis(1);
    for pair in times[2..5].windows(2) {
        let gap = pair[1].duration_since(pair[0]);
        assert!(gap >= at_least, "deltas {gap} apart: {recs:#?}");
    }
    let gap = times[1].duration_since(times[0]);
    assert!(gap < delay, "List → Listed took {gap}: {recs:#?}");
    let gap = times[2].duration_since(times[1]);
    assert!(
        gap < delay,
        "Listed → the first delta took {gap}: {recs:#?}"
    );
    // Synced comes with the last delta, not a delay after it.
    let gap = times[5].duration_since(times[4]);
    assert!(gap < delay, "the last delta → Synced took {gap}: {recs:#?}");
    let synced_ms: u64 = out
        .stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("synced after: "))
        .and_then(|v| v.strip_suffix("ms"))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{}", out.stderr));
    // Two delays between the three deltas.
    assert!(synced_ms >= 2000, "{}", out.stderr);
}
