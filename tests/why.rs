//! "What did it really change": a relist's `Relisted` summary, `recreated` on
//! a delta whose object has a new uid under its name, `--quiet-relists`, and the printing
//! filters `--types` and `--changes`, against `kwatch sim`; a recorded run replays byte
//! for byte.

use serde_json::{json, Value};

use crate::util::kwatch::{configmap, create_configmap, is_delta, kubectl_f, replay_text, Running};
use crate::util::{SimProcess, LIMIT};

/// Configmaps `w-0`…`w-49` in `default`, created as one list.
fn fifty_configmaps(sim: &SimProcess) {
    let items: Vec<Value> = (0..50)
        .map(|i| configmap("default", &format!("w-{i}"), json!({"k": "1"})))
        .collect();
    let file = sim.dir().join("fifty.json");
    let list = json!({"apiVersion": "v1", "kind": "List", "items": items});
    std::fs::write(&file, list.to_string()).unwrap();
    // kubectl validates a List against an OpenAPI document the simulator does not serve.
    let file = file.to_str().unwrap();
    sim.kubectl_ok(["create", "-f", file, "--validate=false"]);
}

/// While the watch is held: `w-0` changed, `w-1` deleted, `w-2` deleted and created
/// again (the simulator's `recreate`: a new uid); then the history is compacted and the watch cut, so the re-watch
/// gets 410 and a relist finds the three.
fn change_delete_recreate_unseen(sim: &SimProcess) {
    sim.forced_410(|sim| {
        kubectl_f(
            sim,
            "replace",
            &configmap("default", "w-0", json!({"k": "2"})),
        );
        sim.kubectl_ok("delete configmap w-1 -n default");
        let uid = sim.kubectl_ok("get configmap w-2 -n default -o jsonpath={.metadata.uid}");
        let again = json!({"resource": "configmaps", "key": "default/w-2"});
        let made = sim.control("POST", "/_sim/recreate", again);
        assert!(
            made["uid"].is_string() && made["uid"] != uid.trim(),
            "{made} after {uid}"
        );
    });
}

/// Where the relist's records begin: after its Listed (the second).
fn relist_start(v: &[Value]) -> Option<usize> {
    v.iter()
        .enumerate()
        .filter(|(_, r)| r["type"] == "Listed")
        .nth(1)
        .map(|(i, _)| i)
}

/// A synced watch of `default`'s configmaps (50 of ours among them) with `extra`, after a
/// relist that found one change, one deletion and one re-creation: every record up to
/// the Relisted, how many objects the initial list held, and the lines as printed.
fn relisted_run(extra: &str) -> (Vec<Value>, usize, Vec<String>) {
    let sim = SimProcess::start(&[]);
    fifty_configmaps(&sim);
    let mut kw = sim.start_kwatch(format!(
        "configmaps -n default -o json --watch-list off {extra}"
    ));
    kw.wait_for(LIMIT, "the Watch", |v| {
        v.iter().any(|r| r["type"] == "Watch")
    });
    change_delete_recreate_unseen(&sim);
    let recs = kw.wait_for(LIMIT, "the Relisted record", |v| {
        v.iter().any(|r| r["type"] == "Relisted")
    });
    let lines = kw.lines();
    let initial = recs
        .iter()
        .find(|r| r["type"] == "Listed")
        .and_then(|r| r["items"].as_u64())
        .unwrap_or(0) as usize;
    (recs, initial, lines)
}

/// Waits until kwatch's stderr holds `text`.
fn wait_stderr(kw: &Running, text: &str) {
    crate::util::eventually(LIMIT, text, || match kw.stderr() {
        e if e.contains(text) => Ok(()),
        e => Err((e, kw.lines())),
    });
}

fn keys(r: &Value, class: &str) -> (u64, Vec<String>) {
    let c = &r[class];
    let keys = c["keys"].as_array().cloned().unwrap_or_default();
    (
        c["count"].as_u64().unwrap_or(u64::MAX),
        keys.iter()
            .filter_map(|k| k.as_str().map(str::to_owned))
            .collect(),
    )
}

#[test]
fn a_relist_after_a_change_a_delete_and_a_recreate_says_so_once() {
    let (recs, initial, _) = relisted_run("");
    assert!(initial >= 50, "{initial} listed: {recs:#?}");
    let relisted: Vec<&Value> = recs.iter().filter(|r| r["type"] == "Relisted").collect();
    assert_eq!(relisted.len(), 1, "{recs:#?}");
    let r = relisted[0];
    let one = |k: &str| (1, vec![format!("default/{k}")]);
    assert_eq!(keys(r, "changed"), one("w-0"), "{r}");
    assert_eq!(keys(r, "deleted"), one("w-1"), "{r}");
    assert_eq!(keys(r, "recreated"), one("w-2"), "{r}");
    assert_eq!(keys(r, "added"), (0, vec![]), "{r}");
    let (unchanged, sample) = keys(r, "unchanged");
    assert_eq!(unchanged as usize, initial - 3, "{r}");
    assert_eq!(sample.len(), 20, "keys capped at 20: {r}");
    assert_eq!(r["resync"], false);
    let listed = relist_start(&recs).expect("the relist's Listed");
    assert_eq!(r["resourceVersion"], recs[listed]["resourceVersion"]);
    // The re-created object's delta says so; no other does.
    let recreated: Vec<&Value> = recs
        .iter()
        .filter(|r| is_delta(r) && r.get("recreated").is_some())
        .collect();
    assert_eq!(recreated.len(), 1, "{recreated:#?}");
    assert_eq!(recreated[0]["key"], "default/w-2");
    assert_eq!(recreated[0]["type"], "Replaced");
    assert_eq!(recreated[0]["recreated"], true);
}

#[test]
fn quiet_relists_print_only_what_the_relist_changed() {
    let (recs, _, _) = relisted_run("--quiet-relists --diff");
    let listed = relist_start(&recs).expect("the relist's Listed");
    let shown = deltas(&recs[listed..]);
    let mut sorted = shown.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        [
            "Deleted default/w-1",
            "Replaced default/w-0",
            "Replaced default/w-2"
        ],
        "{shown:?}"
    );
    let w2 = recs[listed..]
        .iter()
        .find(|r| r["key"] == "default/w-2")
        .unwrap();
    assert_eq!(w2["recreated"], true);
    // --diff: the new uid first.
    assert_eq!(w2["diff"][0]["path"], "/metadata/uid", "{w2}");
    assert_eq!(recs.iter().filter(|r| r["type"] == "Relisted").count(), 1);
}

#[test]
fn the_table_marks_the_recreated_object_and_says_what_the_relist_changed() {
    let sim = SimProcess::start(&[]);
    fifty_configmaps(&sim);
    let kw = sim.start_kwatch("configmaps -n default --watch-list off --quiet-relists --stats");
    wait_stderr(&kw, "watch configmaps");
    change_delete_recreate_unseen(&sim);
    wait_stderr(&kw, "relisted configmaps");
    let out = kw.interrupt(LIMIT);
    let line = out
        .stderr
        .lines()
        .find(|l| l.contains("relisted configmaps"))
        .unwrap_or_default()
        .to_owned();
    assert!(
        line.contains(
            "1 deleted (default/w-1), 1 changed (default/w-0), 1 recreated (default/w-2)"
        ),
        "{line}"
    );
    let stdout = out.stdout.join("\n");
    assert!(stdout.contains("w-2 (recreated)"), "{stdout}");
    let stats = out
        .stderr
        .lines()
        .find(|l| l.contains("relisted: 1"))
        .unwrap_or_default();
    assert!(
        stats.contains("deleted 1, changed 1, recreated 1"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_recorded_relist_replays_byte_for_byte() {
    let (recs, _, lines) = relisted_run("");
    assert!(recs.iter().any(|r| r["type"] == "Relisted"));
    assert!(recs.iter().any(|r| is_delta(r) && r["recreated"] == true));
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let out = replay_text(&text, ["-o", "json"]);
    assert_eq!(out.code(), Some(0), "{}", out.stderr);
    assert!(!out.stdout.is_empty());
    assert_eq!(out.stdout, text.lines().collect::<Vec<_>>());
}

/// The delta records among `recs`, each as `Type key`.
fn deltas(recs: &[Value]) -> Vec<String> {
    let text = |r: &Value, field: &str| r[field].as_str().unwrap_or("?").to_owned();
    let line = |r: &Value| format!("{} {}", text(r, "type"), text(r, "key"));
    recs.iter().filter(|r| is_delta(r)).map(line).collect()
}

/// `w-0` created, its data changed, its labels changed, then deleted, while kwatch runs
/// with `filter`; the deltas printed (`Type key`) and the run's stderr (`--stats`).
fn filtered(filter: &str) -> (Vec<String>, String) {
    let sim = SimProcess::start(&[]);
    let mut kw = sim.start_kwatch(format!(
        "configmaps -n default -o json --watch-list off --stats {filter}"
    ));
    kw.wait_for(LIMIT, "the Watch", |v| {
        v.iter().any(|r| r["type"] == "Watch")
    });
    create_configmap(&sim, "default", "w-0", json!({"k": "1"}));
    sim.kubectl_ok(r#"patch configmap w-0 -n default --type merge -p {"data":{"k":"2"}}"#);
    sim.kubectl_ok("label configmap w-0 -n default tier=web");
    sim.kubectl_ok("delete configmap w-0 -n default");
    // The deletion is the last change, and every filter here prints it.
    crate::util::eventually(LIMIT, "the deletion", || match kw.lines() {
        l if l.iter().any(|l| l.contains(r#""type":"Deleted""#)) => Ok(()),
        l => Err(l),
    });
    let out = kw.interrupt(LIMIT);
    let recs = out.json();
    assert!(!recs.is_empty());
    (deltas(&recs), out.stderr)
}

#[test]
fn types_print_only_those_delta_types_and_stats_count_them_all() {
    let (shown, stderr) = filtered("--types Deleted");
    assert_eq!(shown, ["Deleted default/w-0"], "{stderr}");
    // The initial list's Replaced deltas and the Added and Updated were popped and counted.
    let deltas = stderr
        .lines()
        .find(|l| l.contains("Replaced"))
        .unwrap_or_default();
    assert!(
        deltas.contains("Added 1") && deltas.contains("Updated 2"),
        "{stderr}"
    );
}

#[test]
fn changes_print_updates_of_that_part_and_keep_additions_and_deletions() {
    let (labels, stderr) = filtered("--changes labels");
    let ours: Vec<&String> = labels.iter().filter(|l| l.ends_with("/w-0")).collect();
    assert_eq!(
        ours,
        [
            "Added default/w-0",
            "Updated default/w-0",
            "Deleted default/w-0"
        ],
        "{stderr}"
    );
    let (data, _) = filtered("--changes data --types Updated,Deleted");
    assert_eq!(data, ["Updated default/w-0", "Deleted default/w-0"]);
}

#[test]
fn an_unknown_delta_type_or_part_is_one_line_naming_the_valid_ones() {
    let sim = SimProcess::start(&[]);
    let out = sim.kwatch("configmaps --types Added,Modified").exits(2);
    let lines: Vec<&str> = out.stderr.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 1, "{}", out.stderr);
    assert!(
        lines[0].contains("\"Modified\"") && lines[0].contains("ReplacedAll"),
        "{}",
        lines[0]
    );
    let out = sim.kwatch("configmaps --changes spec,body").exits(2);
    assert!(
        out.stderr.contains("\"body\"") && out.stderr.contains("annotations"),
        "{}",
        out.stderr
    );
}

/// A relist served from an older revision than the watch had reached (the simulator's
/// stale-list) gives one TimeTravel naming the list and both resourceVersions; kwatch
/// goes on watching.
#[test]
fn a_stale_list_gives_one_time_travel() {
    let sim = SimProcess::start(&[]);
    let old = sim.revision();
    let mut kw = crate::util::kwatch::watching_configmaps(&sim, &["--stats"]);
    create_configmap(&sim, "default", "w-0", json!({"k": "1"}));
    kw.wait_for(LIMIT, "w-0", |v| {
        v.iter().any(|r| r["key"] == "default/w-0")
    });
    sim.control("POST", "/_sim/stale-list", json!({"revision": old}));
    // The re-watch gets 410: a relist, served at `old`.
    sim.control("POST", "/_sim/fail", json!({"code": 410, "verb": "watch"}));
    sim.drop_watches();
    let recs = kw.wait_for(LIMIT, "a TimeTravel", |v| {
        v.iter().any(|r| r["type"] == "TimeTravel")
    });
    let t: Vec<&Value> = recs.iter().filter(|r| r["type"] == "TimeTravel").collect();
    assert_eq!(t.len(), 1, "{recs:#?}");
    assert_eq!(t[0]["resourceVersion"], old.to_string(), "{}", t[0]);
    let held: u64 = t[0]["held"]
        .as_str()
        .and_then(|h| h.parse().ok())
        .unwrap_or(0);
    assert!(held > old, "{}", t[0]);
    let request = t[0]["request"].as_str().unwrap_or_default();
    assert!(request.starts_with("list ?resourceVersion="), "{request}");
    // No change of behaviour: the relist replaced and a watch followed it.
    let at = recs.iter().position(|r| r["type"] == "TimeTravel").unwrap();
    assert!(recs[..at]
        .iter()
        .any(|r| r["type"] == "Replaced" && !r["initialList"].as_bool().unwrap_or(true)));
}

/// A watch that sends the changes after an older revision than it asked for (the
/// simulator's stale-watch) gives one TimeTravel naming the watch and both
/// resourceVersions, however many old events it sends; the changes after it still arrive.
#[test]
fn a_stale_watch_gives_one_time_travel() {
    let sim = SimProcess::start(&[]);
    let mut kw = crate::util::kwatch::watching_configmaps(&sim, &[]);
    create_configmap(&sim, "default", "w-0", json!({"k": "1"}));
    let first = sim.revision();
    create_configmap(&sim, "default", "w-1", json!({"k": "1"}));
    kw.wait_for(LIMIT, "w-1", |v| {
        v.iter().any(|r| r["key"] == "default/w-1")
    });
    sim.control("POST", "/_sim/stale-watch", json!({"revision": first - 1}));
    sim.drop_watches();
    kw.wait_for(LIMIT, "a TimeTravel", |v| {
        v.iter().any(|r| r["type"] == "TimeTravel")
    });
    create_configmap(&sim, "default", "w-2", json!({"k": "1"}));
    let recs = kw.wait_for(LIMIT, "w-2", |v| {
        v.iter().any(|r| r["key"] == "default/w-2")
    });
    let t: Vec<&Value> = recs.iter().filter(|r| r["type"] == "TimeTravel").collect();
    assert_eq!(t.len(), 1, "{recs:#?}");
    assert_eq!(t[0]["resourceVersion"], first.to_string(), "{}", t[0]);
    let held = t[0]["held"].as_str().unwrap_or_default();
    assert!(held.parse::<u64>().is_ok_and(|h| h > first), "{}", t[0]);
    let request = t[0]["request"].as_str().unwrap_or_default();
    assert!(
        request.starts_with(&format!("watch ?resourceVersion={held}")),
        "{request}"
    );
}
