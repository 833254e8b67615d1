//! `--view handlers`: the calls client-go v0.32's shared informer makes of the
//! deltas (`processDeltas` in controller.go, `OnUpdate`'s same-resourceVersion rule and
//! `distribute` in shared_informer.go), through the built binary against `kwatch sim`.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use crate::util::kwatch::{
    command, configmap, create_configmap, kubectl_f, of_type, watching_configmaps,
};
use crate::util::{SimProcess, LIMIT};

/// The configmaps the simulator starts with in `default`.
const INITIAL: [&str; 2] = ["default/app-config", "default/kube-root-ca.crt"];

/// `(handler, key)` of the handler calls.
fn calls(v: &[Value]) -> Vec<(String, String)> {
    of_type(v, "HandlerCall")
        .into_iter()
        .map(|r| (s(&r["handler"]), s(&r["key"])))
        .collect()
}

fn s(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_owned()
}

/// The handler calls of `key`.
fn calls_of<'a>(v: &'a [Value], key: &str) -> Vec<&'a Value> {
    of_type(v, "HandlerCall")
        .into_iter()
        .filter(|r| r["key"] == key)
        .collect()
}

/// Handler calls in `--view handlers -o json` are records of their own, in place of the
/// deltas; every other record is the reflector's.
fn assert_no_deltas(v: &[Value]) {
    for r in v {
        assert!(
            r.get("key").is_none() || r["type"] == "HandlerCall",
            "a delta in the handler view: {r}"
        );
    }
}

#[test]
fn the_initial_list_an_update_and_a_delete_reach_the_handler_as_client_go_calls_it() {
    let sim = SimProcess::start(&[]);
    let mut kw = watching_configmaps(&sim, &["--view", "handlers"]);
    let recs = kw.json();
    let synced = recs
        .iter()
        .position(|r| r["type"] == "Synced")
        .expect("synced");
    let initial = calls(&recs[..synced]);
    let keys: BTreeSet<&str> = initial.iter().map(|(_, k)| k.as_str()).collect();
    assert_eq!(keys, BTreeSet::from(INITIAL), "{recs:#?}");
    for r in of_type(&recs[..synced], "HandlerCall") {
        assert_eq!(r["handler"], "OnAdd", "{r}");
        assert_eq!(r["isInInitialList"], true, "{r}");
        assert_eq!(
            r["object"]["metadata"]["resourceVersion"],
            r["resourceVersion"]
        );
        assert!(r.get("oldObject").is_none(), "{r}");
    }

    let created = create_configmap(&sim, "default", "h1", json!({"k": "1"}));
    let updated = kubectl_f(
        &sim,
        "replace",
        &configmap("default", "h1", json!({"k": "2"})),
    );
    sim.kubectl_ok("delete configmap h1 -n default");
    let recs = kw.wait_for(LIMIT, "OnDelete of h1", |v| {
        calls_of(v, "default/h1")
            .iter()
            .any(|r| r["handler"] == "OnDelete")
    });
    assert_no_deltas(&recs);
    let h1 = calls_of(&recs, "default/h1");
    let handlers: Vec<&Value> = h1.iter().map(|r| &r["handler"]).collect();
    assert_eq!(handlers, ["OnAdd", "OnUpdate", "OnDelete"], "{h1:#?}");
    let rv = |o: &Value| o["metadata"]["resourceVersion"].clone();
    let (add, update, delete) = (h1[0], h1[1], h1[2]);
    assert_eq!(add["isInInitialList"], false, "{add}");
    assert_eq!(add["resourceVersion"], rv(&created), "{add}");
    assert_eq!(update["oldResourceVersion"], rv(&created), "{update}");
    assert_eq!(update["resourceVersion"], rv(&updated), "{update}");
    assert_eq!(update["oldObject"]["data"], json!({"k": "1"}), "{update}");
    assert_eq!(update["object"]["data"], json!({"k": "2"}), "{update}");
    assert!(update.get("isInInitialList").is_none(), "{update}");
    assert_eq!(delete["finalStateUnknown"], false, "{delete}");
    assert_eq!(delete["object"]["data"], json!({"k": "2"}), "{delete}");
    // No resync, no relist: no update without a new resourceVersion.
    for r in of_type(&recs, "HandlerCall") {
        assert_ne!(r["oldResourceVersion"], r["resourceVersion"], "{r}");
    }
}

/// The watch misses a change and a deletion, the history is compacted and the re-watch
/// gets 410: the relist's Replaced deltas become OnUpdate (changed, and unchanged too:
/// with no resync period the listener never leaves the syncing set) and OnAdd, its
/// tombstone an OnDelete of a DeletedFinalStateUnknown.
#[test]
fn a_410_relist_updates_the_changed_object_and_deletes_the_vanished_one_as_a_tombstone() {
    relist_in_the_gap(&[]);
}

/// The same calls from client-go 0.36's atomic FIFO, whose relist is one `ReplacedAll`
/// delta (`processReplacedAllInfo`: the OnDelete first, then the listed objects' calls).
#[test]
fn an_atomic_relist_makes_the_same_calls_its_tombstone_first() {
    let recs = relist_in_the_gap(&["--client-go", "0.36"]);
    let relist = recs
        .iter()
        .rposition(|r| r["type"] == "List")
        .expect("a relist");
    let after: Vec<(String, String)> = calls(&recs[relist..]);
    assert_eq!(
        after.first(),
        Some(&("OnDelete".to_owned(), "default/gone".to_owned())),
        "{after:?}"
    );
}

/// A watch under `--view handlers` (and `extra`) misses a change, a deletion and a
/// creation before a 410 relist; asserts the relist's calls and replays them. The records.
fn relist_in_the_gap(extra: &[&str]) -> Vec<Value> {
    let sim = SimProcess::start(&[]);
    let record = sim.dir().join("handlers.jsonl");
    let record_arg = record.to_str().expect("utf-8 path");
    let mut args = vec!["--view", "handlers", "--record", record_arg];
    args.extend_from_slice(extra);
    let mut kw = watching_configmaps(&sim, &args);
    let before = create_configmap(&sim, "default", "changed", json!({"v": "1"}));
    create_configmap(&sim, "default", "gone", json!({}));
    kw.wait_for(LIMIT, "OnAdd of gone", |v| {
        !calls_of(v, "default/gone").is_empty()
    });

    let after = sim.forced_410(|sim| {
        let after = kubectl_f(
            sim,
            "replace",
            &configmap("default", "changed", json!({"v": "2"})),
        );
        sim.kubectl_ok("delete configmap gone -n default");
        create_configmap(sim, "default", "new", json!({}));
        after
    });
    let relist = |v: &[Value]| {
        v.iter()
            .position(|r| r["type"] == "List" && r["reason"] != "initial")
    };
    let keys = [
        "default/changed",
        "default/gone",
        "default/new",
        INITIAL[0],
        INITIAL[1],
    ];
    let recs = kw.wait_for(LIMIT, "the relist's handler calls", |v| {
        relist(v).is_some_and(|i| keys.iter().all(|k| !calls_of(&v[i..], k).is_empty()))
    });
    assert_no_deltas(&recs);
    let relist = relist(&recs).unwrap();
    assert!(
        recs[relist]["reason"].as_str().unwrap().contains("410"),
        "{:#?}",
        recs[relist]
    );
    let after_relist = &recs[relist..];

    let changed = calls_of(after_relist, "default/changed");
    assert_eq!(changed.len(), 1, "{changed:#?}");
    let c = changed[0];
    assert_eq!(c["handler"], "OnUpdate", "{c}");
    assert_eq!(
        c["oldResourceVersion"],
        before["metadata"]["resourceVersion"]
    );
    assert_eq!(c["resourceVersion"], after["metadata"]["resourceVersion"]);
    assert_eq!(c["oldObject"]["data"], json!({"v": "1"}), "{c}");
    assert_eq!(c["object"]["data"], json!({"v": "2"}), "{c}");

    let gone = calls_of(after_relist, "default/gone");
    assert_eq!(gone.len(), 1, "{gone:#?}");
    assert_eq!(gone[0]["handler"], "OnDelete", "{}", gone[0]);
    assert_eq!(gone[0]["finalStateUnknown"], true, "{}", gone[0]);
    assert_eq!(
        gone[0]["object"]["metadata"]["name"], "gone",
        "the last known state"
    );

    let new = calls_of(after_relist, "default/new");
    assert_eq!(new.len(), 1, "{new:#?}");
    assert_eq!(new[0]["handler"], "OnAdd", "{}", new[0]);
    assert_eq!(new[0]["isInInitialList"], false, "{}", new[0]);

    for key in INITIAL {
        let same = calls_of(after_relist, key);
        assert_eq!(same.len(), 1, "{key}: {same:#?}");
        assert_eq!(same[0]["handler"], "OnUpdate", "{}", same[0]);
        assert_eq!(same[0]["oldResourceVersion"], same[0]["resourceVersion"]);
        assert_eq!(same[0]["oldObject"], same[0]["object"]);
    }
    drop(kw);

    // The recording holds the deltas; replay derives the same calls from them, and gives
    // saved handler records back as they were.
    let shown: Vec<Value> = of_type(&recs, "HandlerCall").into_iter().cloned().collect();
    let out = replay(&sim, &[record_arg, "--view", "handlers", "-o", "json"]);
    let derived: Vec<Value> = out
        .iter()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["type"] == "HandlerCall")
        .take(shown.len())
        .collect();
    assert_eq!(derived, shown);
    let saved = sim.dir().join("saved.jsonl");
    let text: Vec<String> = recs.iter().map(Value::to_string).collect();
    std::fs::write(&saved, text.join("\n") + "\n").unwrap();
    let saved = saved.to_str().unwrap();
    let back = replay(&sim, &[saved, "--view", "handlers", "-o", "json"]);
    let back: Vec<Value> = back
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(back, recs);
    recs
}

/// `kwatch replay ARGS…`'s stdout lines; it must succeed.
fn replay(sim: &SimProcess, args: &[&str]) -> Vec<String> {
    let out = command(sim.dir())
        .arg("replay")
        .args(args)
        .output()
        .expect("running kwatch replay");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// With `--resync`, each resync's Sync deltas reach the handler as OnUpdate(obj, obj).
#[test]
fn a_resync_calls_on_update_with_the_same_object_twice() {
    let sim = SimProcess::start(&[]);
    let mut kw = watching_configmaps(&sim, &["--view", "handlers", "--resync", "1s"]);
    let after_second_resync = |v: &[Value]| -> Option<usize> {
        v.iter()
            .enumerate()
            .filter(|(_, r)| r["type"] == "Resync")
            .nth(1)
            .map(|(i, _)| i)
    };
    let recs = kw.wait_for(LIMIT, "the calls of two resyncs", |v| {
        after_second_resync(v).is_some_and(|i| calls(&v[i..]).len() >= INITIAL.len())
    });
    assert_no_deltas(&recs);
    let first = recs.iter().position(|r| r["type"] == "Resync").unwrap();
    let second = after_second_resync(&recs).unwrap();
    for round in [&recs[first..second], &recs[second..]] {
        let got: BTreeSet<String> = of_type(round, "HandlerCall")
            .into_iter()
            .map(|r| {
                assert_eq!(r["handler"], "OnUpdate", "{r}");
                assert_eq!(r["oldResourceVersion"], r["resourceVersion"], "{r}");
                assert_eq!(r["oldObject"], r["object"], "{r}");
                s(&r["key"])
            })
            .collect();
        assert!(
            got.iter().map(String::as_str).eq(INITIAL),
            "every object once per resync: {got:?}"
        );
    }
}

#[test]
fn the_handler_view_as_a_table_and_as_yaml() {
    let sim = SimProcess::start(&[]);
    let base = "configmaps -n default --view handlers --until-synced";
    let out = sim.kwatch(base).exits(0);
    let rows: Vec<Vec<&str>> = out
        .stdout
        .iter()
        .map(|l| l.split_whitespace().take(3).collect())
        .collect();
    assert_eq!(rows[0], ["HANDLER", "NAME", "RESOURCEVERSION"], "{out:?}");
    let names: BTreeSet<&str> = rows[1..]
        .iter()
        .map(|r| {
            assert_eq!(r[0], "OnAdd", "{out:?}");
            r[1]
        })
        .collect();
    assert_eq!(names, BTreeSet::from(["app-config", "kube-root-ca.crt"]));
    assert!(out.stderr.contains("~ synced configmaps"), "{out:?}");

    let out = sim.kwatch(format!("{base} -o yaml")).exits(0);
    let text = out.stdout.join("\n");
    assert_eq!(text.matches("\ntype: HandlerCall\n").count(), 2, "{text}");
    assert_eq!(text.matches("\nhandler: OnAdd\n").count(), 2, "{text}");
    assert_eq!(
        text.matches("\nisInInitialList: true\n").count(),
        2,
        "{text}"
    );
    assert!(!text.contains("type: Replaced"), "{text}");
}

#[test]
fn the_handler_view_refuses_the_script_formats_and_handlers_is_not_a_format() {
    let sim = SimProcess::start(&[]);
    let out = sim.kwatch("configmaps --view handlers -o name").exits(2);
    assert!(out.stdout.is_empty(), "{out:?}");
    assert_eq!(out.stderr.lines().count(), 1, "{out:?}");
    assert!(
        out.stderr
            .contains("--view handlers prints with -o table, wide, json or yaml"),
        "{out:?}"
    );
    let out = sim.kwatch("configmaps -o handlers").exits(2);
    assert!(out.stderr.contains("use --view handlers"), "{out:?}");
}
