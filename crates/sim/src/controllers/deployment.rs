//! The Deployment controller (pkg/controller/deployment: sync.go, rolling.go, recreate.go,
//! progress.go), one step per pass:
//! - no ReplicaSet with the Deployment's template (its `pod-template-hash` label aside):
//!   create `<name>-<hash>` with the next revision, scaled as far as `maxSurge` allows;
//! - RollingUpdate: scale the new ReplicaSet up within `replicas + maxSurge`, else scale the
//!   old ones down while `replicas - maxUnavailable` pods stay available (unhealthy old
//!   pods first), old ReplicaSets kept at 0;
//! - Recreate: every old ReplicaSet to 0, and once their pods are gone the new one up;
//! - then the status (counts summed over the ReplicaSets, conditions `Available` and
//!   `Progressing`) that `kubectl rollout status` reads.
//!
//! Every scaling writes the genuine `ScalingReplicaSet` Event, "Scaled up replica set X
//! from 1 to 3". A rollback (`kubectl rollout undo`) makes the old ReplicaSet with the
//! Deployment's template the new one, with the next revision. Not simulated: `paused`, the
//! `revision-history` annotation, the progress deadline, `revisionHistoryLimit`'s cleanup,
//! and hash collisions. The hash is FNV-32a over the template's JSON, encoded as the genuine
//! one is (`rand.SafeEncodeString`), but not over Go's `DeepHashObject` bytes: the names
//! differ from a real cluster's for the same template.

use serde_json::{json, Map, Value};

use super::super::resources::{DEPLOYMENTS, PODS, REPLICASETS};
use super::super::status::go_json;
use super::super::storage::{make_key, sort_keys, Store};
use super::{
    active, controller_ref, events, int, not_deleting, order_condition, owned_by, status_fields,
};

const HASH_LABEL: &str = "pod-template-hash";
const REVISION: &str = "deployment.kubernetes.io/revision";
const DESIRED: &str = "deployment.kubernetes.io/desired-replicas";
const MAX: &str = "deployment.kubernetes.io/max-replicas";

pub fn sync(s: &mut Store) {
    for d in not_deleting(s, DEPLOYMENTS) {
        sync_one(s, &d);
    }
}

/// A Deployment's ReplicaSets, and what its spec resolves to.
struct Rollout {
    ns: String,
    replicas: i64,
    surge: i64,
    unavailable: i64,
    recreate: bool,
    /// Every ReplicaSet the Deployment controls, oldest first.
    all: Vec<Value>,
    /// Index in `all` of the one whose template is the Deployment's.
    new: Option<usize>,
}

impl Rollout {
    fn of(s: &Store, d: &Value) -> Rollout {
        let meta = &d["metadata"];
        let ns = meta["namespace"].as_str().unwrap_or_default().to_string();
        let uid = meta["uid"].as_str().unwrap_or_default();
        let mut all: Vec<Value> = owned_by(s, REPLICASETS, &ns, uid)
            .into_iter()
            .filter(|o| !o.links.deleting)
            .map(|o| o.value())
            .collect();
        all.sort_by(|a, b| {
            let c = |v: &Value| {
                v["metadata"]["creationTimestamp"]
                    .as_str()
                    .unwrap_or("")
                    .to_string()
            };
            c(a).cmp(&c(b))
        });
        let template = without_hash(&d["spec"]["template"]);
        let new = all
            .iter()
            .position(|rs| without_hash(&rs["spec"]["template"]) == template);
        let replicas = int(&d["spec"]["replicas"], 1);
        let strategy = &d["spec"]["strategy"];
        let recreate = strategy["type"] == "Recreate";
        let (surge, unavailable) = if recreate {
            (0, 0)
        } else {
            let ru = &strategy["rollingUpdate"];
            let surge = resolve(&ru["maxSurge"], replicas, true);
            let unavailable = resolve(&ru["maxUnavailable"], replicas, false);
            // Both zero would never progress: the genuine `ResolveFenceposts` allows one.
            (
                surge,
                if surge == 0 && unavailable == 0 {
                    1
                } else {
                    unavailable
                },
            )
        };
        Rollout {
            ns,
            replicas,
            surge,
            unavailable,
            recreate,
            all,
            new,
        }
    }

    fn olds(&self) -> impl Iterator<Item = &Value> {
        self.all
            .iter()
            .enumerate()
            .filter(move |(i, _)| Some(*i) != self.new)
            .map(|(_, rs)| rs)
    }

    fn sum(&self, f: impl Fn(&Value) -> i64) -> i64 {
        self.all.iter().map(f).sum()
    }

    fn max_old_revision(&self) -> i64 {
        self.olds().map(revision).max().unwrap_or(0)
    }
}

fn spec_replicas(rs: &Value) -> i64 {
    int(&rs["spec"]["replicas"], 1)
}

fn available(rs: &Value) -> i64 {
    int(&rs["status"]["availableReplicas"], 0)
}

fn revision(rs: &Value) -> i64 {
    rs["metadata"]["annotations"][REVISION]
        .as_str()
        .and_then(|r| r.parse().ok())
        .unwrap_or(0)
}

/// `maxSurge`/`maxUnavailable`: an integer, or a percentage of `replicas` rounded up
/// (surge) or down (unavailable); absent means the default 25%.
fn resolve(v: &Value, replicas: i64, up: bool) -> i64 {
    let pct = match v {
        Value::Number(n) => return n.as_i64().unwrap_or(0).max(0),
        Value::String(s) => s.trim_end_matches('%').parse::<i64>().unwrap_or(25),
        _ => 25,
    };
    let scaled = pct * replicas;
    if up {
        (scaled + 99) / 100
    } else {
        scaled / 100
    }
}

/// The template as the controller compares and hashes it: without the `pod-template-hash`
/// label (`EqualIgnoreHash`), and without the empty values a typed Go client writes and
/// an untyped one leaves out (`"creationTimestamp": null`, `"resources": {}`): `kubectl
/// rollout undo` sends an old ReplicaSet's template in the first form, a manifest is in
/// the second, and both are the same template.
fn without_hash(t: &Value) -> Value {
    let mut t = t.clone();
    if let Some(labels) = t["metadata"]["labels"].as_object_mut() {
        labels.shift_remove(HASH_LABEL);
    }
    strip_empty(t).unwrap_or_default()
}

/// `v` without nulls, `false`, `""`, `{}` and `[]` at any depth (`None` if nothing is left).
fn strip_empty(v: Value) -> Option<Value> {
    match v {
        Value::Null | Value::Bool(false) => None,
        Value::String(s) if s.is_empty() => None,
        Value::Object(m) => {
            let m: Map<String, Value> = m
                .into_iter()
                .filter_map(|(k, v)| strip_empty(v).map(|v| (k, v)))
                .collect();
            (!m.is_empty()).then_some(Value::Object(m))
        }
        Value::Array(a) => {
            let a: Vec<Value> = a.into_iter().filter_map(strip_empty).collect();
            (!a.is_empty()).then_some(Value::Array(a))
        }
        other => Some(other),
    }
}

/// `pod-template-hash`: FNV-32a of the template (as [`without_hash`] compares it, keys
/// sorted), its decimal digits mapped onto the genuine alphabet of consonants and digits
/// (`rand.SafeEncodeString`).
fn template_hash(t: &Value) -> String {
    let canonical = sort_keys(without_hash(t));
    let h = go_json(&canonical).iter().fold(0x811c_9dc5u32, |h, b| {
        (h ^ u32::from(*b)).wrapping_mul(0x0100_0193)
    });
    const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    h.to_string()
        .bytes()
        .map(|b| ALPHANUMS[b as usize % ALPHANUMS.len()] as char)
        .collect()
}

fn sync_one(s: &mut Store, d: &Value) {
    let r = Rollout::of(s, d);
    let Some(new) = r.new else {
        create_new(s, d, &r);
        return;
    };
    // A rollback: an old ReplicaSet's template is the Deployment's again, and it takes the
    // next revision (`getNewReplicaSet`); the Deployment's follows with its status.
    let next = r.max_old_revision() + 1;
    if revision(&r.all[new]) < next {
        let mut v = r.all[new].clone();
        v["metadata"]["annotations"][REVISION] = json!(next.to_string());
        let _ = s.update(REPLICASETS, &object_key(&r.all[new]), v);
        return;
    }
    let moved = if r.recreate {
        recreate(s, d, &r, new)
    } else {
        scale_new(s, d, &r, new) || scale_old(s, d, &r, new)
    };
    if !moved {
        // Fresh counts: the ReplicaSets' statuses as their controller last wrote them.
        let r = Rollout::of(s, d);
        write_status(s, d, &r);
    }
}

/// The new ReplicaSet, created at the size the strategy allows now.
fn create_new(s: &mut Store, d: &Value, r: &Rollout) {
    let name = d["metadata"]["name"].as_str().unwrap_or_default();
    let template = &d["spec"]["template"];
    let hash = template_hash(template);
    let rs_name = format!("{name}-{hash}");
    let mut template = template.clone();
    template["metadata"]["labels"][HASH_LABEL] = json!(hash);
    let mut selector = d["spec"]["selector"].clone();
    selector["matchLabels"][HASH_LABEL] = json!(hash);
    let olds: i64 = r.all.iter().map(spec_replicas).sum();
    let size = if r.recreate {
        if olds > 0 {
            0
        } else {
            r.replicas
        }
    } else {
        (r.replicas + r.surge - olds).clamp(0, r.replicas)
    };
    let rev = r.max_old_revision() + 1;
    let rs = json!({
        "metadata": {
            "name": rs_name,
            "namespace": r.ns,
            "labels": template["metadata"]["labels"],
            "annotations": annotations(r, rev),
            "ownerReferences": [controller_ref(DEPLOYMENTS, d)],
        },
        "spec": {"replicas": size, "selector": selector, "template": template},
        "status": {"replicas": 0},
    });
    if s.create(REPLICASETS, rs, true).is_err() {
        return;
    }
    if size > 0 {
        let msg = format!("Scaled up replica set {rs_name} from 0 to {size}");
        events::normal(
            s,
            DEPLOYMENTS,
            d,
            events::DEPLOYMENT,
            "ScalingReplicaSet",
            &msg,
        );
    }
    let mut v = d.clone();
    v["metadata"]["annotations"][REVISION] = json!(rev.to_string());
    let mut conds = conditions(d);
    let msg = format!("Created new replica set \"{rs_name}\"");
    set_condition(
        &mut conds,
        "Progressing",
        "True",
        "NewReplicaSetCreated",
        &msg,
        false,
    );
    v["status"]["conditions"] = json!(conds);
    let _ = s.update(DEPLOYMENTS, &object_key(d), v);
}

/// The annotations the controller keeps on its ReplicaSets (Go writes map keys sorted).
fn annotations(r: &Rollout, rev: i64) -> Value {
    json!({
        DESIRED: r.replicas.to_string(),
        MAX: (r.replicas + r.surge).to_string(),
        REVISION: rev.to_string(),
    })
}

fn object_key(v: &Value) -> String {
    make_key(
        v["metadata"]["namespace"].as_str().unwrap_or_default(),
        v["metadata"]["name"].as_str().unwrap_or_default(),
    )
}

/// Scales `rs` to `to` with its Event; whether it was written.
fn scale(s: &mut Store, d: &Value, r: &Rollout, rs: &Value, to: i64) -> bool {
    let from = spec_replicas(rs);
    let mut v = rs.clone();
    v["spec"]["replicas"] = json!(to);
    let rev = revision(rs);
    v["metadata"]["annotations"] = annotations(r, rev);
    if v == *rs || s.update(REPLICASETS, &object_key(rs), v).is_err() {
        return false;
    }
    if from != to {
        let dir = if to > from { "up" } else { "down" };
        let name = rs["metadata"]["name"].as_str().unwrap_or_default();
        let msg = format!("Scaled {dir} replica set {name} from {from} to {to}");
        events::normal(
            s,
            DEPLOYMENTS,
            d,
            events::DEPLOYMENT,
            "ScalingReplicaSet",
            &msg,
        );
    }
    true
}

/// `reconcileNewReplicaSet`: the new ReplicaSet towards `replicas`, never above
/// `replicas + maxSurge` pods in all.
fn scale_new(s: &mut Store, d: &Value, r: &Rollout, new: usize) -> bool {
    let rs = &r.all[new];
    let cur = spec_replicas(rs);
    let to = if cur >= r.replicas {
        r.replicas
    } else {
        let total: i64 = r.all.iter().map(spec_replicas).sum();
        let room = (r.replicas + r.surge - total).max(0);
        cur + room.min(r.replicas - cur)
    };
    to != cur && scale(s, d, r, rs, to)
}

/// `reconcileOldReplicaSets`: old ReplicaSets down, unhealthy pods first, as long as
/// `replicas - maxUnavailable` stay available.
fn scale_old(s: &mut Store, d: &Value, r: &Rollout, new: usize) -> bool {
    let old_total: i64 = r.olds().map(spec_replicas).sum();
    if old_total == 0 {
        return false;
    }
    let all_total: i64 = r.all.iter().map(spec_replicas).sum();
    let min_available = r.replicas - r.unavailable;
    let new_rs = &r.all[new];
    let new_unavailable = spec_replicas(new_rs) - available(new_rs);
    let mut budget = all_total - min_available - new_unavailable;
    if budget <= 0 {
        return false;
    }
    let mut moved = false;
    // cleanupUnhealthyReplicas: old pods that are not available cost no availability.
    let mut sizes: Vec<i64> = r.olds().map(spec_replicas).collect();
    for (i, rs) in r.olds().enumerate() {
        let unhealthy = sizes[i] - available(rs);
        if budget == 0 || unhealthy <= 0 {
            continue;
        }
        let n = unhealthy.min(budget);
        sizes[i] -= n;
        budget -= n;
        moved |= scale(s, d, r, rs, sizes[i]);
    }
    // scaleDownOldReplicaSetsForRollingUpdate: then healthy ones, oldest first.
    let mut excess = r.sum(available) - min_available;
    for (i, rs) in r.olds().enumerate() {
        if excess <= 0 {
            break;
        }
        let n = sizes[i].min(excess);
        if n == 0 {
            continue;
        }
        excess -= n;
        moved |= scale(s, d, r, rs, sizes[i] - n);
    }
    moved
}

/// `rolloutRecreate`: every old ReplicaSet to 0; once their pods are gone, the new one up.
fn recreate(s: &mut Store, d: &Value, r: &Rollout, new: usize) -> bool {
    let mut moved = false;
    for rs in r.olds().filter(|rs| spec_replicas(rs) > 0) {
        moved |= scale(s, d, r, rs, 0);
    }
    if moved {
        return true;
    }
    let old_pods = r.olds().any(|rs| {
        let uid = rs["metadata"]["uid"].as_str().unwrap_or_default();
        owned_by(s, PODS, &r.ns, uid).iter().any(|p| active(p))
    });
    !old_pods && scale(s, d, r, &r.all[new], r.replicas)
}

/// The Deployment's conditions, as stored.
fn conditions(d: &Value) -> Vec<Value> {
    d["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// `SetDeploymentCondition`: an existing condition of the type with the same status and
/// reason stays as it is (unless `touch`: the `Progressing` one's `lastUpdateTime` moves on
/// progress); otherwise it is replaced at the end of the list, keeping its
/// `lastTransitionTime` if the status did not change.
fn set_condition(
    conds: &mut Vec<Value>,
    t: &str,
    status: &str,
    reason: &str,
    msg: &str,
    touch: bool,
) {
    let now = super::super::storage::now_rfc3339();
    let old = conds.iter().position(|c| c["type"] == t);
    let mut since = json!(now);
    if let Some(i) = old {
        let c = &conds[i];
        if c["status"] == status && c["reason"] == reason && !touch {
            return;
        }
        if c["status"] == status {
            since = c["lastTransitionTime"].clone();
        }
        conds.remove(i);
    }
    conds.push(order_condition(
        json!({"type": t, "status": status, "lastUpdateTime": now, "lastTransitionTime": since, "reason": reason, "message": msg}),
        true,
    ));
}

/// `syncRolloutStatus`: counts from the ReplicaSets, `Available`, and `Progressing`
/// (complete, or moving since the stored status).
fn write_status(s: &mut Store, d: &Value, r: &Rollout) {
    let old = &d["status"];
    let actual = r.sum(|rs| int(&rs["status"]["replicas"], 0));
    let updated = r.new.map_or(0, |i| int(&r.all[i]["status"]["replicas"], 0));
    let ready = r.sum(|rs| int(&rs["status"]["readyReplicas"], 0));
    let avail = r.sum(available);
    let unavailable = (r.sum(spec_replicas) - avail).max(0);
    let generation = int(&d["metadata"]["generation"], 1);
    let mut st: Map<String, Value> = status_fields(
        &[
            ("observedGeneration", generation),
            ("replicas", actual),
            ("updatedReplicas", updated),
            ("readyReplicas", ready),
            ("availableReplicas", avail),
            ("unavailableReplicas", unavailable),
        ],
        &[],
    );
    let mut conds = conditions(d);
    if avail >= r.replicas - r.unavailable {
        let msg = "Deployment has minimum availability.";
        set_condition(
            &mut conds,
            "Available",
            "True",
            "MinimumReplicasAvailable",
            msg,
            false,
        );
    } else {
        let msg = "Deployment does not have minimum availability.";
        set_condition(
            &mut conds,
            "Available",
            "False",
            "MinimumReplicasUnavailable",
            msg,
            false,
        );
    }
    if let Some(new) = r.new {
        let name = r.all[new]["metadata"]["name"].as_str().unwrap_or_default();
        let complete = updated == r.replicas && avail == r.replicas;
        let old_int = |k: &str| int(&old[k], 0);
        let old_olds = old_int("replicas") - old_int("updatedReplicas");
        let progressing = updated > old_int("updatedReplicas")
            || actual - updated < old_olds
            || ready > old_int("readyReplicas")
            || avail > old_int("availableReplicas");
        if complete {
            let msg = format!("ReplicaSet \"{name}\" has successfully progressed.");
            set_condition(
                &mut conds,
                "Progressing",
                "True",
                "NewReplicaSetAvailable",
                &msg,
                false,
            );
        } else if progressing {
            let msg = format!("ReplicaSet \"{name}\" is progressing.");
            set_condition(
                &mut conds,
                "Progressing",
                "True",
                "ReplicaSetUpdated",
                &msg,
                true,
            );
        }
        if let Some(c) = old.get("collisionCount") {
            st.insert("collisionCount".into(), c.clone());
        }
    }
    if !conds.is_empty() {
        st.insert("conditions".into(), json!(conds));
    }
    let mut v = d.clone();
    if let Some(new) = r.new {
        let rev = revision(&r.all[new]).to_string();
        v["metadata"]["annotations"][REVISION] = json!(rev);
    }
    v["status"] = Value::Object(st);
    if v != *d {
        let _ = s.update(DEPLOYMENTS, &object_key(d), v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn surge_rounds_up_and_unavailable_down() {
        assert_eq!(resolve(&json!("25%"), 3, true), 1);
        assert_eq!(resolve(&json!("25%"), 3, false), 0);
        assert_eq!(resolve(&Value::Null, 10, true), 3);
        assert_eq!(resolve(&json!(2), 10, false), 2);
    }

    #[test]
    fn the_hash_ignores_nothing_but_is_stable_and_safe() {
        let t = json!({"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "a:1"}]}});
        let h = template_hash(&t);
        assert_eq!(h, template_hash(&t.clone()));
        assert!(
            h.bytes()
                .all(|b| b"bcdfghjklmnpqrstvwxz2456789".contains(&b)),
            "{h}"
        );
        let mut t2 = t.clone();
        t2["spec"]["containers"][0]["image"] = json!("a:2");
        assert_ne!(h, template_hash(&t2));
        let mut labelled = t.clone();
        labelled["metadata"]["labels"][HASH_LABEL] = json!(h);
        assert_eq!(without_hash(&labelled), t);
        // What `kubectl rollout undo` sends back: the same template, typed.
        let typed = json!({"metadata": {"creationTimestamp": null, "labels": {"app": "web"}},
            "spec": {"containers": [{"image": "a:1", "name": "c", "resources": {}}]}});
        assert_eq!(without_hash(&typed), without_hash(&t));
        assert_eq!(template_hash(&typed), h);
    }
}
