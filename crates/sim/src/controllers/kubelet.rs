//! The scheduler and a kubelet, reduced to what the controllers need: a pending pod is bound
//! to a node (`spec.nodeName`, `PodScheduled`) in one pass, started Running and Ready in the
//! next (podIP, conditions, a running status per container); a pod that runs to completion
//! (`restartPolicy` `Never` or `OnFailure`) then succeeds, its containers terminated with
//! exit code 0. Every image pulls, every container starts, every probe passes.

use serde_json::{json, Value};

use super::super::pods::NODE_NAMES;
use super::super::resources::PODS;
use super::super::storage::{make_key, now_rfc3339, Obj, Store};
use super::deleting;

pub fn sync(s: &mut Store) {
    // Running pods matter only if they run to completion: most do not, and are not parsed.
    let finite = |o: &Obj| {
        [
            &b"\"restartPolicy\":\"Never\""[..],
            b"\"restartPolicy\":\"OnFailure\"",
        ]
        .iter()
        .any(|p| memchr::memmem::find(&o.json, p).is_some())
    };
    let pods: Vec<Value> = s
        .objects(PODS)
        .filter(|o| o.phase == "Pending" || (o.phase == "Running" && finite(o)))
        .map(|o| o.value())
        .filter(|p| !deleting(p))
        .collect();
    for p in pods {
        let next = match p["status"]["phase"].as_str() {
            Some("Pending") if node_of(&p).is_empty() => schedule(&p),
            Some("Pending") => start(&p),
            Some("Running") if runs_to_completion(&p) => succeed(&p),
            _ => continue,
        };
        let key = make_key(
            p["metadata"]["namespace"].as_str().unwrap_or_default(),
            p["metadata"]["name"].as_str().unwrap_or_default(),
        );
        let _ = s.update(PODS, &key, next);
    }
}

fn node_of(p: &Value) -> &str {
    p["spec"]["nodeName"].as_str().unwrap_or_default()
}

fn runs_to_completion(p: &Value) -> bool {
    matches!(
        p["spec"]["restartPolicy"].as_str(),
        Some("Never" | "OnFailure")
    )
}

/// A number from the pod's uid, to spread pods over nodes and addresses.
fn spread(p: &Value) -> usize {
    p["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .bytes()
        .fold(0usize, |h, b| h.wrapping_mul(31).wrapping_add(b as usize))
}

fn condition(t: &str, status: &str, now: &str) -> Value {
    json!({"type": t, "status": status, "lastProbeTime": null, "lastTransitionTime": now})
}

/// Bound to a node by the scheduler.
fn schedule(p: &Value) -> Value {
    let mut p = p.clone();
    let now = now_rfc3339();
    p["spec"]["nodeName"] = json!(NODE_NAMES[spread(&p) % NODE_NAMES.len()]);
    p["status"] = json!({
        "phase": "Pending",
        "conditions": [condition("PodScheduled", "True", &now)],
        "qosClass": p["status"]["qosClass"].as_str().unwrap_or("BestEffort"),
    });
    p
}

/// Running and Ready: the kubelet started every container.
fn start(p: &Value) -> Value {
    let mut p = p.clone();
    let now = now_rfc3339();
    let n = spread(&p);
    let node = node_of(&p).to_string();
    let host = format!(
        "192.168.49.{}",
        2 + NODE_NAMES.iter().position(|x| *x == node).unwrap_or(0)
    );
    let ip = format!("10.244.{}.{}", n % 4, 2 + (n / 4) % 248);
    let statuses: Vec<Value> = containers(&p)
        .iter()
        .enumerate()
        .map(|(i, (name, image))| {
            json!({"name": name, "state": {"running": {"startedAt": now}}, "lastState": {}, "ready": true,
                "restartCount": 0, "image": image, "imageID": format!("docker.io/library/{image}@sha256:{:064x}", n + i),
                "containerID": format!("containerd://{:064x}", n.wrapping_mul(7) + i), "started": true})
        })
        .collect();
    let scheduled = p["status"]["conditions"][0]["lastTransitionTime"].clone();
    let mut conds: Vec<Value> = [
        "PodReadyToStartContainers",
        "Initialized",
        "Ready",
        "ContainersReady",
    ]
    .iter()
    .map(|t| condition(t, "True", &now))
    .collect();
    conds.push(json!({"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": scheduled}));
    p["status"] = json!({
        "phase": "Running",
        "conditions": conds,
        "hostIP": host,
        "hostIPs": [{"ip": host}],
        "podIP": ip,
        "podIPs": [{"ip": ip}],
        "startTime": now,
        "containerStatuses": statuses,
        "qosClass": p["status"]["qosClass"].as_str().unwrap_or("BestEffort"),
    });
    p
}

/// Succeeded: every container exited 0.
fn succeed(p: &Value) -> Value {
    let mut p = p.clone();
    let now = now_rfc3339();
    let st = &mut p["status"];
    st["phase"] = json!("Succeeded");
    if let Some(conds) = st["conditions"].as_array_mut() {
        for c in conds {
            if matches!(
                c["type"].as_str(),
                Some("Ready" | "ContainersReady" | "PodReadyToStartContainers")
            ) {
                c["status"] = json!("False");
                c["lastTransitionTime"] = json!(now);
                if c["type"] != "PodReadyToStartContainers" {
                    c["reason"] = json!("PodCompleted");
                }
            }
        }
    }
    if let Some(cs) = st["containerStatuses"].as_array_mut() {
        for c in cs {
            let started = c["state"]["running"]["startedAt"].clone();
            c["state"] = json!({"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": started, "finishedAt": now, "containerID": c["containerID"]}});
            c["ready"] = json!(false);
            c["started"] = json!(false);
        }
    }
    p
}

/// `(name, image)` of each container in the spec.
fn containers(p: &Value) -> Vec<(String, String)> {
    p["spec"]["containers"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .map(|c| {
                    let s = |k: &str| c[k].as_str().unwrap_or_default().to_string();
                    (s("name"), s("image"))
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pod_is_scheduled_started_and_if_it_runs_to_completion_succeeds() {
        let p = json!({"metadata": {"name": "p", "uid": "u-1"}, "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}, "status": {"phase": "Pending"}});
        let p = schedule(&p);
        assert!(NODE_NAMES.contains(&node_of(&p)));
        assert_eq!(p["status"]["phase"], "Pending");
        let p = start(&p);
        assert_eq!(p["status"]["phase"], "Running");
        let ready = |p: &Value| Obj::from_value(PODS, p.clone()).links.ready;
        assert!(ready(&p));
        assert_eq!(p["status"]["containerStatuses"][0]["name"], "c");
        let p = succeed(&p);
        assert_eq!(p["status"]["phase"], "Succeeded");
        assert!(!ready(&p));
        assert_eq!(
            p["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"],
            0
        );
    }
}
