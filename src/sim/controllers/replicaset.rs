//! The ReplicaSet controller (pkg/controller/replicaset): as many active pods as
//! `spec.replicas`, created from the template as `<rs>-xxxxx` with the ReplicaSet as
//! controller, or deleted (the least ready and newest first, `getPodsToDelete`'s order),
//! each with its `SuccessfulCreate` / `SuccessfulDelete` Event; then the status counted
//! from the pods the pass started with, as `calculateStatus` does.

use serde_json::{json, Value};

use super::super::resources::{PODS, REPLICASETS};
use super::super::storage::{make_key, Store};
use super::{controller_ref, deleting, events, int, owned_by, status_fields, write_status};

/// At most this many pods created per pass (the genuine `burstReplicas`).
const BURST: i64 = 500;

pub fn sync(s: &mut Store) {
    let sets: Vec<Value> = s
        .objects(REPLICASETS)
        .map(|o| o.value())
        .filter(|v| !deleting(v))
        .collect();
    for rs in sets {
        sync_one(s, &rs);
    }
}

/// Whether a pod counts towards its ReplicaSet (`controller.FilterActivePods`).
pub(super) fn active(p: &Value) -> bool {
    let phase = p["status"]["phase"].as_str().unwrap_or_default();
    !deleting(p) && phase != "Succeeded" && phase != "Failed"
}

/// Whether a pod's `Ready` condition is `True`.
pub(super) fn ready(p: &Value) -> bool {
    p["status"]["conditions"].as_array().is_some_and(|cs| {
        cs.iter()
            .any(|c| c["type"] == "Ready" && c["status"] == "True")
    })
}

fn sync_one(s: &mut Store, rs: &Value) {
    let meta = &rs["metadata"];
    let ns = meta["namespace"].as_str().unwrap_or_default();
    let uid = meta["uid"].as_str().unwrap_or_default();
    let pods: Vec<Value> = owned_by(s, PODS, ns, uid)
        .into_iter()
        .filter(active)
        .collect();
    let want = int(&rs["spec"]["replicas"], 1);
    let have = pods.len() as i64;
    if have < want {
        for _ in 0..(want - have).min(BURST) {
            create_pod(s, rs);
        }
    } else if have > want {
        let mut doomed: Vec<&Value> = pods.iter().collect();
        doomed.sort_by_key(|p| delete_rank(p));
        for p in doomed.into_iter().take((have - want) as usize) {
            let name = p["metadata"]["name"].as_str().unwrap_or_default();
            if s.delete(PODS, &make_key(ns, name)).is_ok() {
                let msg = format!("Deleted pod: {name}");
                events::normal(
                    s,
                    REPLICASETS,
                    rs,
                    events::REPLICASET,
                    "SuccessfulDelete",
                    &msg,
                );
            }
        }
    }
    let n_ready = pods.iter().filter(|p| ready(p)).count() as i64;
    let mut st = status_fields(
        &[
            ("replicas", have),
            ("fullyLabeledReplicas", have),
            ("readyReplicas", n_ready),
            ("availableReplicas", n_ready),
            ("observedGeneration", int(&meta["generation"], 1)),
        ],
        &["replicas"],
    );
    if let Some(c) = rs["status"].get("conditions") {
        st.insert("conditions".into(), c.clone());
    }
    // The pass's writes moved the ReplicaSet's resourceVersion only if it was itself written.
    if let Some(now) = s.get(
        REPLICASETS,
        &make_key(ns, meta["name"].as_str().unwrap_or("")),
    ) {
        write_status(s, REPLICASETS, &now.value(), Value::Object(st));
    }
}

/// `getPodsToDelete`'s order, simplified: unscheduled, then pending, then not ready pods
/// go first, and among equals the newest.
fn delete_rank(p: &Value) -> (bool, bool, bool, std::cmp::Reverse<String>) {
    let scheduled = p["spec"]["nodeName"]
        .as_str()
        .is_some_and(|n| !n.is_empty());
    let running = p["status"]["phase"] == "Running";
    let created = p["metadata"]["creationTimestamp"].as_str().unwrap_or("");
    (
        scheduled,
        running,
        ready(p),
        std::cmp::Reverse(created.to_string()),
    )
}

/// A pod of the ReplicaSet's template, as the controller posts it (the scheduler and the
/// kubelet take it from there: [`super::kubelet`]).
fn create_pod(s: &mut Store, rs: &Value) {
    let meta = &rs["metadata"];
    let template = &rs["spec"]["template"];
    let mut pod_meta = json!({
        "generateName": format!("{}-", meta["name"].as_str().unwrap_or_default()),
        "namespace": meta["namespace"],
    });
    for k in ["labels", "annotations"] {
        if let Some(x) = template["metadata"].get(k) {
            pod_meta[k] = x.clone();
        }
    }
    pod_meta["ownerReferences"] = json!([controller_ref(REPLICASETS, rs)]);
    let pod = json!({
        "metadata": pod_meta,
        "spec": template["spec"],
        "status": {"phase": "Pending", "qosClass": "BestEffort"},
    });
    if let Ok(o) = s.create(PODS, pod, true) {
        let msg = format!("Created pod: {}", o.name);
        events::normal(
            s,
            REPLICASETS,
            rs,
            events::REPLICASET,
            "SuccessfulCreate",
            &msg,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unready_and_newer_pods_are_deleted_first() {
        let pod = |name: &str, node: &str, phase: &str, ready: bool, created: &str| {
            json!({"metadata": {"name": name, "creationTimestamp": created}, "spec": {"nodeName": node},
                "status": {"phase": phase, "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]}})
        };
        let mut pods = [
            pod("old-ready", "n", "Running", true, "2026-01-01T00:00:00Z"),
            pod("new-ready", "n", "Running", true, "2026-01-02T00:00:00Z"),
            pod("unready", "n", "Running", false, "2026-01-01T00:00:00Z"),
            pod("pending", "n", "Pending", false, "2026-01-01T00:00:00Z"),
            pod("unscheduled", "", "Pending", false, "2026-01-01T00:00:00Z"),
        ];
        pods.sort_by_key(delete_rank);
        let names: Vec<&str> = pods
            .iter()
            .map(|p| p["metadata"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "unscheduled",
                "pending",
                "unready",
                "new-ready",
                "old-ready"
            ]
        );
    }
}
