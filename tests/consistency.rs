//! `--check-consistency`: the informer's store compared with a LIST at the same
//! resourceVersion (`resourceVersionMatch=Exact`), through the built binary against
//! `kwatch sim`. Clean under churn with either queue; a watch that silently lost an
//! event (the simulator's skip-event fault) is found by the next check; a compacted
//! resourceVersion is reported and the check after it works.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use crate::util::kwatch::{configmap, create_configmap, kubectl_f, of_type, replay, Running};
use crate::util::{item_names, SimProcess, LIMIT};

/// The Consistency records of `resource`.
fn checks<'a>(v: &'a [Value], resource: &str) -> Vec<&'a Value> {
    of_type(v, "Consistency")
        .into_iter()
        .filter(|r| r["resource"] == resource)
        .collect()
}

/// `keys` as the JSON array of a report.
fn keys(keys: &[&str]) -> Value {
    json!(keys)
}

/// A Consistency record that compared and found exactly these differences.
fn found(r: &Value, missing: &[&str], extra: &[&str], stale: &[&str]) -> bool {
    r["type"] == "Consistency"
        && r["consistent"] == json!(missing.is_empty() && extra.is_empty() && stale.is_empty())
        && r["missing"] == keys(missing)
        && r["extra"] == keys(extra)
        && r["stale"] == keys(stale)
}

fn skip_next_event(sim: &SimProcess, key: &str) {
    sim.control(
        "POST",
        "/_sim/skip-event",
        json!({"key": key, "resource": "configmaps"}),
    );
}

/// Creates `default/name` and waits until kwatch shows it: the watch has moved past
/// every change made before it.
fn seen(sim: &SimProcess, kw: &mut Running, name: &str) {
    kubectl_f(sim, "create", &configmap("default", name, json!({})));
    let key = format!("default/{name}");
    kw.wait_for(LIMIT, &key.clone(), |v| {
        v.iter().any(|r| r["key"] == key.as_str())
    });
}

#[test]
fn checks_under_churn_find_the_store_consistent_with_either_queue() {
    for fifo in ["delta", "real"] {
        let sim = SimProcess::start(&["--scenario", "steady", "--churn", "40"]);
        let mut kw = sim.start_kwatch([
            "pods,configmaps",
            "-A",
            "-o",
            "json",
            "--fifo",
            fifo,
            "--check-consistency=1s", // A slow handler: deltas wait in the queue, the store lags the reflector.
            "--pop-delay",
            "5ms",
        ]);
        let clean = |v: &[Value], r: &str| {
            checks(v, r)
                .into_iter()
                .filter(|c| found(c, &[], &[], &[]))
                .count()
        };
        let recs = kw.wait_for(LIMIT, "three clean checks of each resource", |v| {
            ["pods", "configmaps"].iter().all(|r| clean(v, r) >= 3)
        });
        for r in of_type(&recs, "Consistency") {
            assert_eq!(r["compacted"], false, "{r}");
            // A check that could not find the informer caught up says so; none differs.
            if r["consistent"].is_null() {
                assert!(
                    r["error"].as_str().unwrap().contains("never emptied"),
                    "{r}"
                );
                continue;
            }
            assert!(found(r, &[], &[], &[]), "{fifo}: {r}");
            assert_eq!(r["error"], Value::Null, "{r}");
            assert!(r["objects"].as_u64().unwrap() > 0, "{r}");
        }
        // The first check comes after the first sync, and pods changed between checks.
        for resource in ["pods", "configmaps"] {
            let synced = recs
                .iter()
                .position(|r| r["type"] == "Synced" && r["resource"] == resource)
                .unwrap();
            let first = recs
                .iter()
                .position(|r| r["type"] == "Consistency" && r["resource"] == resource)
                .unwrap();
            assert!(synced < first, "{fifo} {resource}");
        }
        let pod_rvs: BTreeSet<&str> = checks(&recs, "pods")
            .iter()
            .map(|r| r["resourceVersion"].as_str().unwrap())
            .collect();
        assert!(pod_rvs.len() >= 2, "{fifo}: {pod_rvs:?}");
    }
}

/// A MODIFIED, an ADDED and a DELETED that the watch never delivered: each is found by
/// the next check, as stale, missing and extra.
#[test]
fn events_a_watch_lost_are_found_by_the_next_check() {
    let sim = SimProcess::start(&[]);
    for name in ["stale-me", "delete-me"] {
        create_configmap(&sim, "default", name, json!({"k": "v1"}));
    }
    let (mut kw, rec) = sim.start_recording(
        "rec.jsonl",
        "configmaps -n default -o json --check-consistency=1s --stats",
    );
    kw.wait_for(LIMIT, "a clean check", |v| {
        checks(v, "configmaps")
            .iter()
            .any(|r| found(r, &[], &[], &[]))
    });

    skip_next_event(&sim, "default/stale-me");
    kubectl_f(
        &sim,
        "replace",
        &configmap("default", "stale-me", json!({"k": "v2"})),
    );
    seen(&sim, &mut kw, "later-1");
    kw.wait_for(LIMIT, "stale-me stale", |v| {
        v.iter().any(|r| found(r, &[], &[], &["default/stale-me"]))
    });

    skip_next_event(&sim, "default/add-me");
    create_configmap(&sim, "default", "add-me", json!({}));
    seen(&sim, &mut kw, "later-2");
    kw.wait_for(LIMIT, "add-me missing", |v| {
        v.iter()
            .any(|r| found(r, &["default/add-me"], &[], &["default/stale-me"]))
    });

    skip_next_event(&sim, "default/delete-me");
    sim.kubectl_ok("delete configmap delete-me -n default");
    seen(&sim, &mut kw, "later-3");
    let recs = kw.wait_for(LIMIT, "delete-me extra", |v| {
        v.iter().any(|r| {
            found(
                r,
                &["default/add-me"],
                &["default/delete-me"],
                &["default/stale-me"],
            )
        })
    });

    // The watch did lose them: kwatch never showed these changes ...
    let shown = |key: &str, t: &str| recs.iter().any(|r| r["key"] == key && r["type"] == t);
    assert!(!shown("default/stale-me", "Updated"), "{recs:#?}");
    assert!(
        !recs.iter().any(|r| r["key"] == "default/add-me"),
        "{recs:#?}"
    );
    assert!(!shown("default/delete-me", "Deleted"), "{recs:#?}");
    // ... which the server made, as kubectl sees it.
    let cms: Value =
        serde_json::from_str(&sim.kubectl_ok("get configmaps -n default -o json")).unwrap();
    let names: BTreeSet<String> = item_names(&cms).into_iter().collect();
    assert!(
        names.contains("add-me") && !names.contains("delete-me"),
        "{names:?}"
    );
    let server_rv = cms["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["metadata"]["name"] == "stale-me")
        .map(|i| i["metadata"]["resourceVersion"].clone())
        .unwrap();
    let kwatch_rv = recs
        .iter()
        .rfind(|r| r["key"] == "default/stale-me")
        .map(|r| r["resourceVersion"].clone())
        .unwrap();
    assert_ne!(server_rv, kwatch_rv);

    let out = kw.interrupt(LIMIT);
    assert!(
        out.stderr
            .lines()
            .any(|l| l.starts_with("  consistency checks: ")
                && l.contains(" inconsistent, 0 not made")),
        "{}",
        out.stderr
    );
    let inconsistent = of_type(&out.json(), "Consistency")
        .iter()
        .filter(|r| r["consistent"] == false)
        .count();
    assert!(
        out.stderr
            .contains(&format!("({inconsistent} inconsistent, 0 not made)")),
        "{}",
        out.stderr
    );

    // The recording replays: byte for byte as JSON (with the managedFields it keeps), as
    // `~` lines in the table.
    let recorded = std::fs::read_to_string(&rec).unwrap();
    let replay = |args: &[&str]| replay(sim.dir(), &rec, args);
    let json = replay(&["-o", "json", "--show-managed-fields"]);
    assert_eq!(json.code(), Some(0), "{}", json.stderr);
    assert_eq!(json.stdout, recorded.lines().collect::<Vec<_>>());
    let table = replay(&[]);
    assert_eq!(table.code(), Some(0), "{}", table.stderr);
    assert!(
        table
            .stderr
            .lines()
            .any(|l| l.starts_with("~ consistency of configmaps at rv=")
                && l.ends_with(
                    ": INCONSISTENT with a list at that rv: 1 missing (default/add-me), \
                 1 extra (default/delete-me), 1 stale (default/stale-me)"
                )),
        "{}",
        table.stderr
    );
}

/// A check at a resourceVersion the server has compacted says so (410), and once the watch
/// has caught up the next check compares again.
#[test]
fn a_compacted_version_is_reported_and_the_next_check_works() {
    let sim = SimProcess::start(&[]);
    let mut kw = sim.start_kwatch("configmaps -n default -o json --check-consistency=1s");
    kw.wait_for(LIMIT, "a clean check", |v| {
        checks(v, "configmaps")
            .iter()
            .any(|r| found(r, &[], &[], &[]))
    });

    // The watch falls behind, and the change it has not delivered is compacted away.
    sim.control("POST", "/_sim/stall", json!({"until": "released"}));
    create_configmap(&sim, "default", "unseen", json!({}));
    sim.control("POST", "/_sim/compact", json!({}));
    let recs = kw.wait_for(LIMIT, "a compacted report", |v| {
        checks(v, "configmaps")
            .iter()
            .any(|r| r["compacted"] == true)
    });
    let (i, compacted) = recs
        .iter()
        .enumerate()
        .find(|(_, r)| r["type"] == "Consistency" && r["compacted"] == true)
        .unwrap();
    // Checked where the store was, and stayed while the watch was stalled.
    let before = of_type(&recs[..i], "Consistency");
    let at = before.last().expect("a check before")["resourceVersion"].clone();
    assert_eq!(compacted["resourceVersion"], at, "{compacted}");
    assert_eq!(compacted["consistent"], Value::Null, "{compacted}");
    assert_eq!(
        compacted["error"],
        "410 Expired: The resourceVersion for the provided list is too old."
    );
    assert!(
        compacted["missing"] == json!([]) && compacted["stale"] == json!([]),
        "{compacted}"
    );

    // The watch resumes, gets 410 and relists; the next check compares at the relist's
    // resourceVersion.
    sim.control("POST", "/_sim/clear", json!({}));
    sim.drop_watches();
    let recs = kw.wait_for(LIMIT, "a clean check after the relist", |v| {
        v[i..]
            .iter()
            .any(|r| found(r, &[], &[], &[]) && r["resourceVersion"] != at)
    });
    let after = &recs[i..];
    assert!(
        after
            .iter()
            .any(|r| r["type"] == "List" && r["reason"].as_str().unwrap().contains("410")),
        "{after:#?}"
    );
    assert!(
        after
            .iter()
            .any(|r| r["type"] == "Replaced" && r["key"] == "default/unseen"),
        "{after:#?}"
    );
}

#[test]
fn a_period_of_zero_is_refused_with_one_line() {
    let sim = SimProcess::start(&[]);
    let out = sim.kwatch("configmaps --check-consistency=0s").exits(2);
    assert!(out.stdout.is_empty());
    assert!(
        out.stderr.contains("--check-consistency")
            && out
                .stderr
                .contains("a period must be longer than 0, e.g. 30s or 5m"),
        "{}",
        out.stderr
    );
}
