//! The ReplicaSet controller (pkg/controller/replicaset): as many active pods as
//! `spec.replicas`, created from the template as `<rs>-xxxxx` with the ReplicaSet as
//! controller, or deleted (the least ready and newest first, `getPodsToDelete`'s order),
//! each with its `SuccessfulCreate` / `SuccessfulDelete` Event; then the status counted
//! from the pods the pass started with, as `calculateStatus` does.

use std::sync::Arc;

use serde_json::{json, Value};

use super::super::resources::{PODS, REPLICASETS};
use super::super::storage::{make_key, Obj, Store};
use super::{
    active, controller_ref, events, int, not_deleting, owned_by, status_fields, write_status,
};

/// At most this many pods created per pass (the genuine `burstReplicas`).
const BURST: i64 = 500;

pub fn sync(s: &mut Store) {
    for rs in not_deleting(s, REPLICASETS) {
        sync_one(s, &rs);
    }
}

fn sync_one(s: &mut Store, rs: &Value) {
    let meta = &rs["metadata"];
    let ns = meta["namespace"].as_str().unwrap_or_default();
    let uid = meta["uid"].as_str().unwrap_or_default();
    let pods: Vec<Arc<Obj>> = owned_by(s, PODS, ns, uid)
        .into_iter()
        .filter(|p| active(p))
        .collect();
    let want = int(&rs["spec"]["replicas"], 1);
    let have = pods.len() as i64;
    if have < want {
        for _ in 0..(want - have).min(BURST) {
            create_pod(s, rs);
        }
    } else if have > want {
        let mut doomed: Vec<(Rank, &Arc<Obj>)> = pods.iter().map(|p| (delete_rank(p), p)).collect();
        doomed.sort_by(|a, b| a.0.cmp(&b.0));
        for (_, p) in doomed.into_iter().take((have - want) as usize) {
            let name = p.name.as_str();
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
    let n_ready = pods.iter().filter(|p| p.links.ready).count() as i64;
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
type Rank = (bool, bool, bool, std::cmp::Reverse<String>);

fn delete_rank(p: &Obj) -> Rank {
    let created = p.value()["metadata"]["creationTimestamp"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    (
        !p.node_name.is_empty(),
        p.phase == "Running",
        p.links.ready,
        std::cmp::Reverse(created),
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
        let pods = [
            pod("old-ready", "n", "Running", true, "2026-01-01T00:00:00Z"),
            pod("new-ready", "n", "Running", true, "2026-01-02T00:00:00Z"),
            pod("unready", "n", "Running", false, "2026-01-01T00:00:00Z"),
            pod("pending", "n", "Pending", false, "2026-01-01T00:00:00Z"),
            pod("unscheduled", "", "Pending", false, "2026-01-01T00:00:00Z"),
        ];
        let mut objs: Vec<Obj> = pods
            .iter()
            .map(|p| Obj::from_value(PODS, p.clone()))
            .collect();
        objs.sort_by_key(delete_rank);
        let names: Vec<&str> = objs.iter().map(|p| p.name.as_str()).collect();
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
