//! For every kind: a resource kwatch has no printer of its own for is
//! listed and watched as the server's Table (`includeObject=Object`), as `kubectl get`
//! asks for it; the table shows kubectl's columns and cells, and the informer sees
//! exactly the objects the JSON path gives it.

use std::time::Duration;

use serde_json::{json, Value};

use crate::util::kwatch::{is_delta, kubectl_f};
use crate::util::shared::cut;
use crate::util::{eventually, SimProcess, LIMIT};

/// kubectl get's `Accept` for a table.
const TABLE_ACCEPT: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

/// The objects the tests create: at least one of each kind without a printer of
/// kwatch's own that the sim serves.
fn objects() -> Vec<Value> {
    vec![
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "fast"},
            "provisioner": "kubernetes.io/no-provisioner", "reclaimPolicy": "Retain",
            "volumeBindingMode": "WaitForFirstConsumer", "allowVolumeExpansion": true}),
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "slow"},
            "provisioner": "example.com/nfs"}),
        json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
            "value": 1000000, "globalDefault": true, "preemptionPolicy": "Never"}),
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": {"name": "nginx"},
            "spec": {"controller": "k8s.io/ingress-nginx",
                "parameters": {"apiGroup": "k8s.example.com", "kind": "IngressParameters", "name": "external"}}}),
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": {"name": "plain"},
            "spec": {"controller": "example.com/lb"}}),
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"podSelector": {"matchLabels": {"tier": "front", "app": "web"}}, "policyTypes": ["Ingress"]}}),
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": "deny-all", "namespace": "default"}, "spec": {"podSelector": {}}}),
        json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "compute", "namespace": "default"},
            "spec": {"hard": {"pods": "10", "requests.cpu": "4", "limits.memory": "8Gi"}},
            "status": {"hard": {"pods": "10", "requests.cpu": "4", "limits.memory": "8Gi"},
                "used": {"pods": "3", "requests.cpu": "500m", "limits.memory": "1Gi"}}}),
        json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-1"},
            "spec": {"capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOnce", "ReadOnlyMany"],
                "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "fast", "volumeMode": "Block",
                "hostPath": {"path": "/data"}, "claimRef": {"namespace": "default", "name": "data"}},
            "status": {"phase": "Bound"}}),
        json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-2"},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteMany"],
                "persistentVolumeReclaimPolicy": "Delete", "hostPath": {"path": "/tmp"}},
            "status": {"phase": "Failed", "reason": "Recycle failed"}}),
    ]
}

fn sim_with_objects() -> SimProcess {
    let sim = SimProcess::start(&["--objects", "0"]);
    for m in objects() {
        kubectl_f(&sim, "create", &m);
    }
    sim
}

/// `kubectl get ARGS` and `kwatch ARGS --until-synced` agree: kwatch's columns after
/// RESOURCEVERSION are kubectl's after NAME, and every row's cells but AGE are
/// kubectl's.
fn agree(sim: &SimProcess, args: &[&str]) {
    let mut kargs = vec!["get"];
    kargs.extend(args);
    let theirs = sim.kubectl_ok(&kargs);
    let theirs: Vec<&str> = theirs.lines().collect();
    assert!(theirs.len() > 1, "{args:?}: kubectl printed {theirs:?}");
    let their_header = cut(theirs[0], theirs[0]);
    let mut wargs = args.to_vec();
    wargs.push("--until-synced");
    let out = sim.kwatch(&wargs).success();
    assert!(out.stdout.len() > 1, "{args:?}: {:?}", out.stdout);
    let ours = &out.stdout;
    let our_header = cut(&ours[0], &ours[0]);
    let skip = our_header
        .iter()
        .position(|h| h == "RESOURCEVERSION")
        .expect("RESOURCEVERSION")
        + 1;
    assert_eq!(
        our_header[skip..],
        their_header[1..],
        "{args:?}: the columns after NAME"
    );
    assert_eq!(ours.len(), theirs.len(), "{args:?}: {ours:?} vs {theirs:?}");
    let name = our_header.iter().position(|h| h == "NAME").unwrap();
    for t in &theirs[1..] {
        let t = cut(theirs[0], t);
        let o = ours
            .iter()
            .skip(1)
            .map(|l| cut(&ours[0], l))
            .find(|o| t[0].starts_with(&o[name]))
            .unwrap_or_else(|| panic!("{args:?}: no row {} in {ours:?}", t[0]));
        for (i, h) in their_header.iter().enumerate().skip(1) {
            if h != "AGE" {
                assert_eq!(o[skip + i - 1], t[i], "{args:?} {h} of {}", t[0]);
            }
        }
    }
}

/// Six kinds kwatch has no printer for show kubectl's columns and cells, `-o wide`
/// too, and their lists and watches asked for the Table as kubectl does.
#[test]
fn kinds_without_a_printer_show_the_servers_table() {
    let sim = sim_with_objects();
    let cases: &[&[&str]] = &[
        &["storageclasses"],
        &["priorityclasses"],
        &["ingressclasses"],
        &["ingressclasses", "-o", "wide"],
        &["networkpolicies", "-n", "default"],
        &["resourcequotas", "-n", "default"],
        &["persistentvolumes"],
        &["persistentvolumes", "-o", "wide"],
    ];
    for args in cases {
        agree(&sim, args);
    }
    let reqs = sim.get("/_sim/requests").json();
    let asked = |what: &str| {
        reqs["requests"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| {
                r["path"].as_str().unwrap_or("").contains(what)
                    && r["path"]
                        .as_str()
                        .unwrap_or("")
                        .contains("includeObject=Object")
                    && r["accept"] == TABLE_ACCEPT
            })
            .count()
    };
    // kwatch's two lists of persistentvolumes (kubectl asks for no object).
    assert!(asked("/api/v1/persistentvolumes?") >= 2, "{reqs:#}");
}

/// What must be equal between two runs of one informer: its deltas (objects byte for
/// byte, resourceVersions, order), each `List` it made (by type alone) and each list's
/// `Listed` and `Synced`. Left out is what follows each watch's own clock: bookmarks,
/// the watches and their ends (a bookmark moves their resourceVersion, counts as an
/// event), the resourceVersion a relist asks for and its reason (which name it), and
/// times, durations, random timeouts and backoffs.
fn comparable(recs: &[Value]) -> Vec<Value> {
    recs.iter()
        .filter_map(|r| {
            let kind = r["type"].as_str()?;
            if kind == "List" {
                return Some(json!({"type": "List"}));
            }
            if !is_delta(r) && !matches!(kind, "Listed" | "Synced") {
                return None;
            }
            let mut r = r.clone();
            if let Some(m) = r.as_object_mut() {
                // Timings, and the sizes of the bodies: a Table carries more than a list.
                for k in ["time", "ms", "elapsed", "delayMs", "bytes", "wireBytes"] {
                    m.remove(k);
                }
            }
            Some(r)
        })
        .collect()
}

/// The comparison leaves out bookmarks, watches, what a relist asks for and the bodies'
/// sizes, and keeps deltas, lists and what they found.
#[test]
fn comparable_keeps_deltas_and_lists_only() {
    let recs = [
        json!({"type": "List", "resourceVersion": "", "reason": "initial", "time": "t"}),
        json!({"type": "Listed", "resourceVersion": "5", "items": 1, "ms": 3, "bytes": 9, "wireBytes": 9}),
        json!({"type": "Replaced", "key": "a", "resourceVersion": "4", "time": "t"}),
        json!({"type": "Synced", "time": "t"}),
        json!({"type": "Watch", "resourceVersion": "5", "timeoutSeconds": 301}),
        json!({"type": "Bookmark", "resourceVersion": "6"}),
        json!({"type": "WatchEnded", "events": 2, "reason": "too old resource version: 6 (7)"}),
        json!({"type": "List", "resourceVersion": "6", "reason": "too old resource version: 6 (7)"}),
    ];
    assert_eq!(
        comparable(&recs),
        [
            json!({"type": "List"}),
            json!({"type": "Listed", "resourceVersion": "5", "items": 1}),
            json!({"type": "Replaced", "key": "a", "resourceVersion": "4"}),
            json!({"type": "Synced"}),
            json!({"type": "List"}),
        ]
    );
}

fn read_records(path: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The informer under the Table path sees what it sees under JSON: the same deltas
/// (objects byte for byte, resourceVersions, in the same order) and lists through the
/// initial list, a watch update, a delete and a 410 relist ([`comparable`]); the table shows
/// the new cells of the update and the deleted object's row. `-o json` never asks for
/// a Table.
#[test]
fn table_path_feeds_the_informer_what_json_does() {
    let sim = SimProcess::start(&["--objects", "0", "--bookmark-interval", "1"]);
    for m in objects().into_iter().take(2) {
        kubectl_f(&sim, "create", &m);
    }
    let record = sim.dir().join("table.jsonl");
    let rec_arg = record.to_str().unwrap().to_owned();
    let table = sim.start_kwatch(vec!["storageclasses", "--record", &rec_arg]);
    // managedFields shown: the recording keeps them (for `replay --blame`).
    // JSON on the wire too (`--wire json`): both runs read the server's JSON.
    let mut json_run = sim.start_kwatch("storageclasses -o json --show-managed-fields --wire json");
    json_run.wait_for(LIMIT, "the JSON run synced", |v| {
        v.iter().any(|r| r["type"] == "Synced")
    });
    eventually(LIMIT, "the table's initial list", || match table.lines() {
        l if l.len() >= 3 => Ok(()),
        l => Err(l),
    });
    // A watch update of a cell, then a delete (bookmarks come when they come: every
    // second, each watch on its own clock, so they are not compared).
    sim.kubectl_ok(r#"patch storageclass slow --type=merge -p {"allowVolumeExpansion":true}"#);
    sim.kubectl_ok("delete storageclass fast");
    json_run.wait_for(LIMIT, "the delete", |v| {
        v.iter().any(|r| r["type"] == "Deleted")
    });
    // A change no watch sees before the history is compacted: the watch gets 410 and
    // both runs relist.
    sim.forced_410(|sim| sim.kubectl_ok("label storageclass slow tier=gold --overwrite"));
    let relisted = |v: &[Value]| {
        v.iter().filter(|r| r["type"] == "Listed").count() >= 2
            && v.iter()
                .rev()
                .take_while(|r| r["type"] != "Listed")
                .any(|r| r["key"] == "slow")
    };
    // How many records run through the watch that follows the relist: what both runs have
    // once they relisted, whichever has printed more since.
    let rewatched = |v: &[Value]| -> Option<usize> {
        let (relist, _) = v
            .iter()
            .enumerate()
            .filter(|(_, r)| r["type"] == "Listed")
            .nth(1)?;
        let watch = v[relist..].iter().position(|r| r["type"] == "Watch")?;
        Some(relist + watch + 1)
    };
    let settled = |v: &[Value]| relisted(v) && rewatched(v).is_some();
    let json_recs = json_run.wait_for(LIMIT, "the relist and the watch after it", settled);
    eventually(LIMIT, "the table run's relist and watch", || {
        let recs = read_records(&record);
        if settled(&recs) {
            Ok(())
        } else {
            Err(recs)
        }
    });
    let lines = table.lines();
    let stderr = table.stderr();
    let table_out = table.terminate(Duration::from_secs(5));
    json_run.terminate(Duration::from_secs(5));
    assert!(!lines.is_empty(), "no table: {stderr}");
    let header = &lines[0];
    assert!(
        header.contains("PROVISIONER") && header.contains("ALLOWVOLUMEEXPANSION"),
        "{lines:?}"
    );
    let rows: Vec<Vec<String>> = lines[1..]
        .iter()
        .filter(|l| !l.starts_with("DELTA"))
        .map(|l| cut(header, l))
        .collect();
    let col = cut(header, header)
        .iter()
        .position(|h| h == "ALLOWVOLUMEEXPANSION")
        .unwrap();
    let updated = rows
        .iter()
        .find(|r| r[0] == "Updated" && r[1] == "slow")
        .unwrap_or_else(|| panic!("no update row: {lines:?}\n{stderr}"));
    assert_eq!(updated[col], "true", "the update's new cell: {lines:?}");
    let first = rows.iter().find(|r| r[1] == "slow").unwrap();
    assert_eq!(first[col], "false", "the listed cell: {lines:?}");
    let deleted = rows
        .iter()
        .find(|r| r[0] == "Deleted")
        .unwrap_or_else(|| panic!("no delete row: {lines:?}\n{stderr}"));
    assert_eq!(deleted[1], "fast");
    assert_eq!(
        deleted[col - 2],
        "Retain",
        "the tombstone's cells: {lines:?}"
    );
    assert!(
        stderr.contains("too old") || stderr.contains("410"),
        "the 410 relist happened: {stderr}"
    );
    assert!(table_out.stdout.len() >= lines.len());
    let table_recs = read_records(&record);
    assert!(!table_recs.is_empty(), "an empty record");
    assert!(
        settled(&table_recs),
        "the table run relisted and watched again: {table_recs:#?}"
    );
    let through = |v: &[Value]| comparable(&v[..rewatched(v).unwrap_or(v.len())]);
    assert_eq!(
        through(&table_recs),
        through(&json_recs),
        "the Table path's records are the JSON path's"
    );
    let reqs = sim.get("/_sim/requests").json();
    let json_asks_table = reqs["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| {
            let p = r["path"].as_str().unwrap_or("");
            r["accept"] == TABLE_ACCEPT
                && p.contains("watch=true")
                && p.contains("includeObject=Object")
        })
        .count();
    let plain = reqs["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| {
            r["path"].as_str().unwrap_or("").contains("storageclasses")
                && r["accept"] != TABLE_ACCEPT
                && r["method"] == "GET"
        })
        .count();
    assert!(
        json_asks_table >= 2,
        "the table run's watches asked for Tables"
    );
    assert!(plain >= 2, "the -o json run asked for JSON: {reqs:#}");
}
