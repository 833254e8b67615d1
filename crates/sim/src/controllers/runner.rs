//! What the controllers share: their switch, the loop that runs a pass after each change of the storage, and the writes they make.

use super::{deployment, gc, job, kubelet, replicaset};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::watch;

use crate::resources::RESOURCES;
use crate::storage::{Obj, Store};
use crate::App;

/// Whether the controllers run; shared by the control API, the delete handler (which
/// honours `propagationPolicy` only when a garbage collector will finish the job) and
/// [`run`].
#[derive(Debug)]
pub(crate) struct Switch(watch::Sender<bool>);

impl Switch {
    pub fn new(on: bool) -> Switch {
        Switch(watch::channel(on).0)
    }

    pub fn enabled(&self) -> bool {
        *self.0.borrow()
    }

    pub fn set(&self, on: bool) {
        self.0.send_replace(on);
    }
}

/// Between two passes that wrote something: the controllers' reaction time, long enough
/// for watchers to see each step apart, short enough for a rollout of a few pods to end
/// within a second.
const PASS_GAP: Duration = Duration::from_millis(20);

/// Passes in a row before waiting for the next change anyway (a bound on a controller that
/// would fight another writer).
const MAX_PASSES: usize = 500;

/// Runs the controllers while they are switched on: a pass after every change of the store.
pub(crate) async fn run(app: Arc<App>) {
    let mut on = app.controllers.0.subscribe();
    let mut revs = app.cluster.subscribe();
    loop {
        if !*on.borrow_and_update() {
            if on.changed().await.is_err() {
                return;
            }
            continue;
        }
        // The revision the last pass left: a write after it (an API request's, on another
        // thread) is newer and wakes the next passes. Read again after the passes, it could
        // include such a write, which would then wait for another one.
        let mut synced = app.cluster.read().rev();
        for _ in 0..MAX_PASSES {
            let before = synced;
            synced = app.cluster.write(|s| {
                pass(s);
                s.rev()
            });
            if synced == before || !app.controllers.enabled() {
                break;
            }
            tokio::time::sleep(PASS_GAP).await;
        }
        // A write that changed nothing still wakes the receivers: wait for a new revision.
        loop {
            tokio::select! {
                r = revs.changed() => if r.is_err() { return },
                r = on.changed() => if r.is_err() { return } else { break },
            }
            if *revs.borrow_and_update() != synced {
                break;
            }
        }
    }
}

/// One step of every controller.
fn pass(s: &mut Store) {
    gc::sync(s);
    deployment::sync(s);
    replicaset::sync(s);
    job::sync(s);
    kubelet::sync(s);
}

/// A pod that counts towards its owner (`controller.FilterActivePods`).
pub(super) fn active(p: &Obj) -> bool {
    !p.links.deleting && p.phase != "Succeeded" && p.phase != "Failed"
}

/// Whether the object is being deleted (`metadata.deletionTimestamp` set).
pub(super) fn deleting(v: &Value) -> bool {
    v["metadata"].get("deletionTimestamp").is_some()
}

/// The objects of `res` not being deleted, as values: what a controller's pass syncs.
pub(super) fn not_deleting(s: &Store, res: usize) -> Vec<Value> {
    s.objects(res)
        .map(|o| o.value())
        .filter(|v| !deleting(v))
        .collect()
}

/// The objects of `res` in `namespace` whose controller is `uid`, in key order (read off
/// [`crate::storage::Links`]: nothing is parsed).
pub(super) fn owned_by(s: &Store, res: usize, namespace: &str, uid: &str) -> Vec<Arc<Obj>> {
    s.objects_in(res, namespace)
        .filter(|o| o.links.controller() == Some(uid))
        .cloned()
        .collect()
}

/// An `ownerReferences` entry naming `owner` (of resource `res`) as controller, as the
/// genuine controllers write it.
pub(super) fn controller_ref(res: usize, owner: &Value) -> Value {
    let def = &RESOURCES[res];
    json!({
        "apiVersion": def.api_version(),
        "kind": def.kind,
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": true,
        "blockOwnerDeletion": true,
    })
}

/// `spec.replicas`-like integer fields: `default` when absent (the API server's defaulting,
/// which the simulator does not do on create).
pub(super) fn int(v: &Value, default: i64) -> i64 {
    v.as_i64().unwrap_or(default)
}

/// Writes `status` through the store when it differs (the controllers' `UpdateStatus`).
/// A status equal to the stored one is no write at all (the store skips no-op updates).
pub(super) fn write_status(
    s: &mut Store,
    res: usize,
    obj: &Value,
    status: Value,
) -> Option<Arc<Obj>> {
    if obj.get("status") == Some(&status) {
        return None;
    }
    let mut v = obj.clone();
    v["status"] = status;
    let key = crate::storage::make_key(
        obj["metadata"]["namespace"].as_str().unwrap_or_default(),
        obj["metadata"]["name"].as_str().unwrap_or_default(),
    );
    s.update(res, &key, v).ok()
}

/// A condition's keys in Go's struct order (DeploymentCondition has `lastUpdateTime`
/// before `lastTransitionTime`; JobCondition has `lastProbeTime` instead).
pub(super) fn order_condition(c: Value, with_update_time: bool) -> Value {
    let mut out = serde_json::Map::new();
    let keys: &[&str] = if with_update_time {
        &[
            "type",
            "status",
            "lastUpdateTime",
            "lastTransitionTime",
            "reason",
            "message",
        ]
    } else {
        &[
            "type",
            "status",
            "lastProbeTime",
            "lastTransitionTime",
            "reason",
            "message",
        ]
    };
    for k in keys {
        if let Some(x) = c.get(*k) {
            out.insert((*k).to_string(), x.clone());
        }
    }
    Value::Object(out)
}

/// Builds a `status` object from `(key, value)` pairs, leaving out zero integers as Go's
/// `omitempty` does; `keep` names the fields written even when zero.
pub(super) fn status_fields(
    fields: &[(&str, i64)],
    keep: &[&str],
) -> serde_json::Map<String, Value> {
    fields
        .iter()
        .filter(|(k, n)| *n != 0 || keep.contains(k))
        .map(|(k, n)| ((*k).to_string(), json!(n)))
        .collect()
}

#[cfg(test)]
pub(in crate::controllers) mod tests {
    use super::*;
    use crate::resources::NAMESPACES;

    /// A store with the namespace `ns` and in it `manifest`, an object of `res`; its stored
    /// value.
    pub(in crate::controllers) fn store_with(res: usize, manifest: Value) -> (Store, Value) {
        let mut s = Store::new(1000);
        s.create(NAMESPACES, json!({"metadata": {"name": "ns"}}), true)
            .unwrap();
        let v = s.create(res, manifest, true).unwrap().value();
        (s, v)
    }

    #[test]
    fn zero_counts_are_left_out_but_kept_ones() {
        let m = status_fields(
            &[("replicas", 0), ("readyReplicas", 0), ("x", 2)],
            &["replicas"],
        );
        assert_eq!(Value::Object(m), json!({"replicas": 0, "x": 2}));
    }
}
