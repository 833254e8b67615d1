//! core/v1 Events as client-go's `EventRecorder` writes them for kube-controller-manager
//! (tools/record/event.go, events_cache.go): named `<object>.<hex unix nanos>`, with the
//! involved object's uid and resourceVersion, `source.component` and `reportingComponent`
//! the controller's name; the same event again (same object, type, reason, message and
//! source: the `EventLogger`'s key) is the stored one with `count + 1` and a new
//! `lastTimestamp`, updated in place. (The `EventAggregator`, which folds ten similar
//! events with different messages into one "(combined from similar events)", is not
//! simulated.)

use serde_json::{json, Value};

use super::super::resources::{EVENTS, RESOURCES};
use super::super::storage::{make_key, now_rfc3339, Store};

/// The controllers' `source.component`s.
pub const DEPLOYMENT: &str = "deployment-controller";
pub const REPLICASET: &str = "replicaset-controller";
pub const JOB: &str = "job-controller";

/// Records a `Normal` event about `obj` (of resource `res`) from `component`.
pub fn normal(s: &mut Store, res: usize, obj: &Value, component: &str, reason: &str, msg: &str) {
    let def = &RESOURCES[res];
    let meta = &obj["metadata"];
    let ns = meta["namespace"].as_str().unwrap_or("default");
    let involved = json!({
        "kind": def.kind,
        "namespace": ns,
        "name": meta["name"],
        "uid": meta["uid"],
        "apiVersion": def.api_version(),
        "resourceVersion": meta["resourceVersion"],
    });
    let now = now_rfc3339();
    let same = |e: &Value| {
        e["source"]["component"] == component
            && e["reason"] == reason
            && e["message"] == msg
            && e["type"] == "Normal"
            && ["kind", "name", "uid", "apiVersion"]
                .iter()
                .all(|k| e["involvedObject"][*k] == involved[*k])
    };
    let prefix = format!("{ns}/{}.", meta["name"].as_str().unwrap_or_default());
    let seen = s
        .objects_in(EVENTS, ns)
        .filter(|o| o.key.starts_with(&prefix))
        .map(|o| o.value())
        .find(same);
    if let Some(mut e) = seen {
        e["count"] = json!(e["count"].as_i64().unwrap_or(1) + 1);
        e["lastTimestamp"] = json!(now);
        let key = make_key(ns, e["metadata"]["name"].as_str().unwrap_or_default());
        let _ = s.update(EVENTS, &key, e);
        return;
    }
    let nanos = jiff::Timestamp::now().as_nanosecond();
    let event = json!({
        "metadata": {"name": format!("{}.{:x}", involved["name"].as_str().unwrap_or_default(), nanos), "namespace": ns},
        "involvedObject": involved,
        "reason": reason,
        "message": msg,
        "source": {"component": component},
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
        "type": "Normal",
        "eventTime": null,
        "reportingComponent": component,
        "reportingInstance": "",
    });
    let _ = s.create(EVENTS, event, true);
}

#[cfg(test)]
mod tests {
    use super::super::super::resources::CONFIGMAPS;
    use super::super::runner::tests::store_with;
    use super::*;

    #[test]
    fn the_same_event_again_counts_in_place() {
        let cm = json!({"metadata": {"name": "c", "namespace": "ns"}});
        let (mut s, cm) = store_with(CONFIGMAPS, cm);
        normal(&mut s, CONFIGMAPS, &cm, JOB, "Tested", "once");
        normal(&mut s, CONFIGMAPS, &cm, JOB, "Tested", "once");
        normal(&mut s, CONFIGMAPS, &cm, JOB, "Tested", "other");
        let events: Vec<Value> = s.objects(EVENTS).map(|o| o.value()).collect();
        assert_eq!(events.len(), 2);
        let once = events.iter().find(|e| e["message"] == "once").unwrap();
        assert_eq!(once["count"], 2);
        assert_eq!(once["involvedObject"]["uid"], cm["metadata"]["uid"]);
        assert_eq!(once["involvedObject"]["kind"], "ConfigMap");
        assert_eq!(once["reportingComponent"], JOB);
        let name = once["metadata"]["name"].as_str().unwrap();
        assert!(name.starts_with("c.") && name.len() > 10, "{name}");
    }
}
