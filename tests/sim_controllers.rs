//! The simulator's controllers (`kwatch sim --controllers`, crates/sim/src/controllers/) driven by
//! the real kubectl: a Deployment's ReplicaSet and pods, a rollout with `kubectl set image`
//! that `kubectl rollout status` sees through and its `ScalingReplicaSet` Events in order,
//! a Job run to completion, garbage collection in each `--cascade` mode (the order objects
//! go in read off the sim's watches from the revision before the delete), a custom
//! resource owning ConfigMaps, and the switch (`POST /_sim/controllers`) that changes no
//! seeded object.

use serde_json::{json, Value};

use crate::util::shared::create;
use crate::util::{eventually, SimProcess, LIMIT};

const NS: &str = "demo";

/// A started simulator with the controllers on and the namespace `demo`.
fn sim_with_controllers() -> SimProcess {
    let sim = SimProcess::start(&["--controllers"]);
    sim.kubectl_ok(["create", "namespace", NS]);
    sim
}

fn deployment(name: &str, replicas: u32, image: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": image}]}}}})
}

/// `kubectl get KIND -n demo -o json`'s items.
fn items(sim: &SimProcess, kind: &str) -> Vec<Value> {
    let out = sim.kubectl_ok(["get", kind, "-n", NS, "-o", "json"]);
    let list: Value = serde_json::from_str(&out).expect("kubectl's JSON");
    list["items"].as_array().cloned().unwrap_or_default()
}

fn uid(v: &Value) -> &str {
    v["metadata"]["uid"].as_str().unwrap_or_default()
}

fn name(v: &Value) -> &str {
    v["metadata"]["name"].as_str().unwrap_or_default()
}

/// Whether `v`'s controller is the object with uid `owner`.
fn controlled_by(v: &Value, owner: &str) -> bool {
    v["metadata"]["ownerReferences"]
        .as_array()
        .is_some_and(|refs| {
            refs.iter()
                .any(|r| r["uid"] == owner && r["controller"] == true)
        })
}

fn ready(pod: &Value) -> bool {
    pod["status"]["phase"] == "Running"
        && pod["status"]["conditions"].as_array().is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        })
}

/// Creates the Deployment `web` with `replicas` and waits until its one ReplicaSet has
/// that many ready pods; the Deployment, the ReplicaSet and the pods' names.
fn web_rolled_out(sim: &SimProcess, replicas: usize) -> (Value, Value, Vec<String>) {
    let d = create(sim, deployment("web", replicas as u32, "img:1"));
    let (rs, pods) = eventually(LIMIT, "the ReplicaSet's pods ready", || {
        let sets: Vec<Value> = items(sim, "replicasets")
            .into_iter()
            .filter(|rs| controlled_by(rs, uid(&d)))
            .collect();
        let [rs] = &sets[..] else { return Err(sets) };
        let pods: Vec<String> = items(sim, "pods")
            .iter()
            .filter(|p| controlled_by(p, uid(rs)) && ready(p))
            .map(|p| name(p).to_string())
            .collect();
        if pods.len() == replicas {
            Ok((rs.clone(), pods))
        } else {
            Err(vec![json!(pods)])
        }
    });
    sim.kubectl_ok(["rollout", "status", "deploy/web", "-n", NS, "--timeout=60s"]);
    (d, rs, pods)
}

/// `(reason, message)` of the Events in `demo` about `involved`, in the order they were
/// written (their resourceVersions).
fn events_about(sim: &SimProcess, involved: &Value) -> Vec<(String, String)> {
    let mut evs: Vec<Value> = items(sim, "events")
        .into_iter()
        .filter(|e| e["involvedObject"]["uid"] == involved["metadata"]["uid"])
        .collect();
    evs.sort_by_key(|e| {
        e["metadata"]["resourceVersion"]
            .as_str()
            .and_then(|r| r.parse::<u64>().ok())
    });
    evs.iter()
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap_or_default().to_string();
            (s("reason"), s("message"))
        })
        .collect()
}

#[test]
fn a_rollout_scales_the_new_replicaset_up_and_the_old_one_down_with_the_genuine_events() {
    let sim = sim_with_controllers();
    let (d, old, first_pods) = web_rolled_out(&sim, 3);
    let hash = old["metadata"]["labels"]["pod-template-hash"]
        .as_str()
        .expect("pod-template-hash");
    assert_eq!(name(&old), format!("web-{hash}"));
    assert_eq!(
        old["spec"]["selector"]["matchLabels"]["pod-template-hash"],
        hash
    );
    let owner = &old["metadata"]["ownerReferences"][0];
    assert_eq!(
        (&owner["kind"], &owner["name"], &owner["blockOwnerDeletion"]),
        (&json!("Deployment"), &json!("web"), &json!(true))
    );
    let annotations = &old["metadata"]["annotations"];
    assert_eq!(annotations["deployment.kubernetes.io/revision"], "1");
    assert_eq!(
        annotations["deployment.kubernetes.io/desired-replicas"],
        "3"
    );
    assert_eq!(annotations["deployment.kubernetes.io/max-replicas"], "4");

    sim.kubectl_ok(["set", "image", "deploy/web", "-n", NS, "c=img:2"]);
    sim.kubectl_ok(["rollout", "status", "deploy/web", "-n", NS, "--timeout=60s"]);

    let sets = items(&sim, "replicasets");
    assert_eq!(sets.len(), 2, "{sets:#?}");
    let new = sets
        .iter()
        .find(|rs| uid(rs) != uid(&old))
        .expect("the new ReplicaSet");
    let old = sets
        .iter()
        .find(|rs| uid(rs) == uid(&old))
        .expect("the old ReplicaSet");
    assert_eq!(
        old["spec"]["replicas"], 0,
        "the old ReplicaSet is kept, at 0"
    );
    assert_eq!(new["spec"]["replicas"], 3);
    assert_eq!(
        new["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "2"
    );
    assert_eq!(
        new["spec"]["template"]["spec"]["containers"][0]["image"],
        "img:2"
    );
    let pods = items(&sim, "pods");
    assert_eq!(pods.len(), 3, "the old pods are gone: {pods:#?}");
    assert!(pods.iter().all(|p| controlled_by(p, uid(new)) && ready(p)));

    let d_now: Value =
        serde_json::from_str(&sim.kubectl_ok(["get", "deploy/web", "-n", NS, "-o", "json"]))
            .unwrap();
    let st = &d_now["status"];
    assert_eq!(
        [
            &st["observedGeneration"],
            &st["replicas"],
            &st["updatedReplicas"],
            &st["readyReplicas"],
            &st["availableReplicas"]
        ],
        [&json!(2), &json!(3), &json!(3), &json!(3), &json!(3)],
        "{st:#}"
    );
    assert_eq!(
        d_now["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "2"
    );
    let reasons: Vec<(&Value, &Value, &Value)> = st["conditions"]
        .as_array()
        .expect("conditions")
        .iter()
        .map(|c| (&c["type"], &c["status"], &c["reason"]))
        .collect();
    assert!(
        reasons.contains(&(
            &json!("Available"),
            &json!("True"),
            &json!("MinimumReplicasAvailable")
        )),
        "{reasons:?}"
    );
    assert!(
        reasons.contains(&(
            &json!("Progressing"),
            &json!("True"),
            &json!("NewReplicaSetAvailable")
        )),
        "{reasons:?}"
    );

    // maxSurge 1 and maxUnavailable 0 (25% of 3): one pod more, then one less, in turn.
    let (o, n) = (name(old), name(new));
    let scaling: Vec<String> = events_about(&sim, &d)
        .into_iter()
        .filter(|(reason, _)| reason == "ScalingReplicaSet")
        .map(|(_, m)| m)
        .collect();
    assert_eq!(
        scaling,
        [
            format!("Scaled up replica set {o} from 0 to 3"),
            format!("Scaled up replica set {n} from 0 to 1"),
            format!("Scaled down replica set {o} from 3 to 2"),
            format!("Scaled up replica set {n} from 1 to 2"),
            format!("Scaled down replica set {o} from 2 to 1"),
            format!("Scaled up replica set {n} from 2 to 3"),
            format!("Scaled down replica set {o} from 1 to 0"),
        ]
    );
    let mut created: Vec<String> = first_pods
        .iter()
        .map(|p| format!("Created pod: {p}"))
        .collect();
    let mut deleted: Vec<String> = first_pods
        .iter()
        .map(|p| format!("Deleted pod: {p}"))
        .collect();
    let by_reason = |reason: &str| -> Vec<String> {
        let mut v: Vec<String> = events_about(&sim, old)
            .into_iter()
            .filter(|(r, _)| r == reason)
            .map(|(_, m)| m)
            .collect();
        v.sort();
        v
    };
    created.sort();
    deleted.sort();
    assert_eq!(by_reason("SuccessfulCreate"), created);
    assert_eq!(by_reason("SuccessfulDelete"), deleted);

    let ev = items(&sim, "events")
        .into_iter()
        .find(|e| e["reason"] == "ScalingReplicaSet")
        .expect("an event");
    let inv = &ev["involvedObject"];
    assert_eq!(
        (&inv["kind"], &inv["name"], &inv["uid"]),
        (&json!("Deployment"), &json!("web"), &d["metadata"]["uid"])
    );
    assert!(inv["resourceVersion"].is_string(), "{ev:#}");
    assert_eq!(ev["source"]["component"], "deployment-controller");
    assert_eq!(ev["reportingComponent"], "deployment-controller");
    assert_eq!(ev["count"], 1);
    assert_eq!(ev["firstTimestamp"], ev["lastTimestamp"]);
}

/// The DELETED events of `gone` (kind, name) after revision `from`, read off the sim's
/// watches of deployments, replicasets, pods and configmaps in `demo`; `(kind, name)` in
/// the order of their revisions.
fn deletions(sim: &SimProcess, from: u64, gone: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut seen: Vec<(u64, String, String)> = Vec::new();
    for (kind, path) in [
        ("Deployment", "/apis/apps/v1/namespaces/demo/deployments"),
        ("ReplicaSet", "/apis/apps/v1/namespaces/demo/replicasets"),
        ("Pod", "/api/v1/namespaces/demo/pods"),
        ("ConfigMap", "/api/v1/namespaces/demo/configmaps"),
    ] {
        let mut wanted: Vec<&str> = gone
            .iter()
            .filter(|(k, _)| *k == kind)
            .map(|(_, n)| *n)
            .collect();
        if wanted.is_empty() {
            continue;
        }
        let mut w = sim.watch(&format!("{path}?watch=1&resourceVersion={from}"));
        while !wanted.is_empty() {
            let ev = w.event(LIMIT);
            let n = name(&ev["object"]).to_string();
            if ev["type"] == "DELETED" && wanted.contains(&n.as_str()) {
                wanted.retain(|x| *x != n);
                let rv = ev["object"]["metadata"]["resourceVersion"]
                    .as_str()
                    .and_then(|r| r.parse().ok())
                    .expect("rv");
                seen.push((rv, kind.to_string(), n));
            }
        }
    }
    seen.sort();
    seen.into_iter().map(|(_, k, n)| (k, n)).collect()
}

/// The kinds deleted, in order, when `kubectl delete deploy/web --cascade=CASCADE` takes
/// web rolled out with two pods.
fn cascade_order(cascade: &str) -> Vec<String> {
    let sim = sim_with_controllers();
    let (_, rs, pods) = web_rolled_out(&sim, 2);
    let from = sim.revision();
    let cascade = format!("--cascade={cascade}");
    sim.kubectl_ok(["delete", "deploy/web", "-n", NS, &cascade]);
    let mut gone = vec![("Deployment", "web"), ("ReplicaSet", name(&rs))];
    gone.extend(pods.iter().map(|p| ("Pod", p.as_str())));
    let order = deletions(&sim, from, &gone);
    order.into_iter().map(|(kind, _)| kind).collect()
}

#[test]
fn foreground_deletion_takes_the_pods_then_the_replicaset_then_the_deployment() {
    assert_eq!(
        cascade_order("foreground"),
        ["Pod", "Pod", "ReplicaSet", "Deployment"]
    );
}

#[test]
fn background_deletion_takes_the_deployment_then_the_replicaset_then_the_pods() {
    assert_eq!(
        cascade_order("background"),
        ["Deployment", "ReplicaSet", "Pod", "Pod"]
    );
}

#[test]
fn orphaning_releases_the_replicaset_with_its_pods_before_the_deployment_goes() {
    let sim = sim_with_controllers();
    let (_, rs, pods) = web_rolled_out(&sim, 2);
    let from = sim.revision();
    // What `kubectl delete --cascade=orphan` sends; the genuine server answers 200 with the
    // object, now carrying deletionTimestamp and the `orphan` finalizer.
    let r = sim.send_json(
        "DELETE",
        "/apis/apps/v1/namespaces/demo/deployments/web",
        r#"{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Orphan"}"#,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let answer = r.json();
    assert_eq!(answer["kind"], "Deployment");
    assert!(
        answer["metadata"]["deletionTimestamp"].is_string(),
        "{answer:#}"
    );
    assert_eq!(answer["metadata"]["finalizers"], json!(["orphan"]));
    let mut w = sim.watch(&format!(
        "/apis/apps/v1/namespaces/demo/replicasets?watch=1&resourceVersion={from}"
    ));
    let released = loop {
        let ev = w.event(LIMIT);
        if ev["object"]["metadata"].get("ownerReferences").is_none() {
            break ev;
        }
    };
    assert_eq!(released["type"], "MODIFIED");
    let d_gone = first_deleted(sim.watch(&format!(
        "/apis/apps/v1/namespaces/demo/deployments?watch=1&resourceVersion={from}"
    )));
    let rv = |v: &Value| {
        v["object"]["metadata"]["resourceVersion"]
            .as_str()
            .and_then(|r| r.parse::<u64>().ok())
    };
    assert!(
        rv(&released) < rv(&d_gone),
        "the ReplicaSet is released before the Deployment goes"
    );
    let sets = items(&sim, "replicasets");
    assert_eq!(sets.len(), 1);
    assert_eq!(uid(&sets[0]), uid(&rs));
    let left: Vec<String> = items(&sim, "pods")
        .iter()
        .filter(|p| controlled_by(p, uid(&rs)))
        .map(|p| name(p).to_string())
        .collect();
    assert_eq!(
        left.len(),
        pods.len(),
        "the orphaned ReplicaSet keeps its pods"
    );
}

/// The first DELETED event of a watch.
fn first_deleted(mut w: crate::util::WatchStream) -> Value {
    loop {
        let ev = w.event(LIMIT);
        if ev["type"] == "DELETED" {
            return ev;
        }
    }
}

#[test]
fn a_widget_owning_configmaps_is_collected_in_the_background() {
    let sim = sim_with_controllers();
    let w = create(
        &sim,
        json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w9", "namespace": NS}, "spec": {"size": 1}}),
    );
    for part in ["w9-a", "w9-b"] {
        create(
            &sim,
            json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": part, "namespace": NS, "ownerReferences": [
                {"apiVersion": "example.com/v1", "kind": "Widget", "name": "w9", "uid": w["metadata"]["uid"]}]},
            "data": {"k": "v"}}),
        );
    }
    let from = sim.revision();
    // No propagationPolicy: the default, background; the answer is a Status.
    let r = sim.delete("/apis/example.com/v1/namespaces/demo/widgets/w9");
    assert_eq!(r.status, 200, "{}", r.body);
    let st = r.json();
    assert_eq!(
        (&st["kind"], &st["status"]),
        (&json!("Status"), &json!("Success"))
    );
    assert_eq!(st["details"]["uid"], w["metadata"]["uid"]);
    let order = deletions(&sim, from, &[("ConfigMap", "w9-a"), ("ConfigMap", "w9-b")]);
    assert_eq!(order.len(), 2);
    let cms: Vec<String> = items(&sim, "configmaps")
        .iter()
        .map(|c| name(c).to_string())
        .collect();
    assert!(!cms.iter().any(|c| c.starts_with("w9-")), "{cms:?}");
}

#[test]
fn a_job_runs_its_pods_to_completion() {
    let sim = sim_with_controllers();
    let job = create(
        &sim,
        json!({"apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "crunch", "namespace": NS},
        "spec": {"completions": 2, "template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "c", "image": "busybox"}]}}}}),
    );
    sim.kubectl_ok([
        "wait",
        "--for=condition=Complete",
        "job/crunch",
        "-n",
        NS,
        "--timeout=60s",
    ]);
    let pods = items(&sim, "pods");
    assert_eq!(pods.len(), 2, "{pods:#?}");
    assert!(pods
        .iter()
        .all(|p| controlled_by(p, uid(&job)) && p["status"]["phase"] == "Succeeded"));
    assert!(pods
        .iter()
        .all(|p| p["metadata"]["labels"]["job-name"] == "crunch"));
    let got = events_about(&sim, &job);
    let reasons: Vec<&str> = got.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(
        reasons,
        ["SuccessfulCreate", "SuccessfulCreate", "Completed"],
        "{got:?}"
    );
    assert_eq!(got[2].1, "Job completed");
    let job: Value =
        serde_json::from_str(&sim.kubectl_ok(["get", "job/crunch", "-n", NS, "-o", "json"]))
            .unwrap();
    assert_eq!(job["status"]["succeeded"], 2);
    assert!(job["status"]["completionTime"].is_string());
}

/// Every core/v1 Event's `namespace/name` and resourceVersion.
fn event_versions(sim: &SimProcess) -> std::collections::BTreeMap<String, String> {
    let out = sim.kubectl_ok(["get", "events", "-A", "-o", "json"]);
    let list: Value = serde_json::from_str(&out).expect("kubectl's JSON");
    list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            let m = &e["metadata"];
            let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
            (
                format!("{}/{}", s(&m["namespace"]), s(&m["name"])),
                s(&m["resourceVersion"]),
            )
        })
        .collect()
}

#[test]
fn the_controllers_are_off_unless_asked_and_turning_them_on_changes_no_seeded_object() {
    let sim = SimProcess::start(&[]);
    sim.kubectl_ok(["create", "namespace", NS]);
    let seeded = sim.state()["objects"].clone();
    let count = |plural: &str| seeded[plural].as_object().map_or(0, |m| m.len());
    assert_eq!(
        (count("deployments"), count("replicasets"), count("pods")),
        (2, 2, 20)
    );
    let seeded_events = event_versions(&sim);
    assert_eq!(seeded_events.len(), 2, "{seeded_events:?}");
    create(&sim, deployment("web", 1, "img:1"));
    let before = sim.state()["objects"].clone();
    let in_demo = |objects: &Value, plural: &str| {
        objects[plural]
            .as_object()
            .map_or(0, |m| m.keys().filter(|k| k.starts_with("demo/")).count())
    };
    assert_eq!(
        in_demo(&before, "replicasets"),
        0,
        "no controller, no ReplicaSet"
    );
    let on = sim.control("POST", "/_sim/controllers", json!({"on": true}));
    assert_eq!(on["on"], true);
    eventually(LIMIT, "a ready pod of the Deployment", || {
        let pods = items(&sim, "pods");
        if pods.iter().any(ready) {
            Ok(())
        } else {
            Err(pods)
        }
    });
    let now = sim.state()["objects"].clone();
    for plural in ["deployments", "replicasets", "pods"] {
        for (key, rv) in seeded[plural].as_object().unwrap() {
            assert_eq!(&now[plural][key], rv, "{plural} {key} changed");
        }
    }
    // (`/_sim/state` keys resources by plural: its `events` are events.k8s.io's.)
    let now_events = event_versions(&sim);
    for (name, rv) in &seeded_events {
        assert_eq!(now_events.get(name), Some(rv), "event {name} changed");
    }
    let off = sim.control("POST", "/_sim/controllers", json!({"on": false}));
    assert_eq!(off["on"], false);
}

#[test]
fn a_rollback_takes_the_old_replicaset_back_and_a_repeated_event_counts_in_place() {
    let sim = sim_with_controllers();
    let (d, first, _) = web_rolled_out(&sim, 2);
    sim.kubectl_ok(["set", "image", "deploy/web", "-n", NS, "c=img:2"]);
    sim.kubectl_ok(["rollout", "status", "deploy/web", "-n", NS, "--timeout=60s"]);
    // kubectl sends the old ReplicaSet's template back, typed (`creationTimestamp: null`,
    // `resources: {}`): the same template, so the same ReplicaSet, at the next revision.
    sim.kubectl_ok(["rollout", "undo", "deploy/web", "-n", NS]);
    sim.kubectl_ok(["rollout", "status", "deploy/web", "-n", NS, "--timeout=60s"]);
    let sets = items(&sim, "replicasets");
    assert_eq!(sets.len(), 2, "no third ReplicaSet: {sets:#?}");
    let back = sets
        .iter()
        .find(|rs| uid(rs) == uid(&first))
        .expect("the first ReplicaSet");
    assert_eq!(back["spec"]["replicas"], 2);
    assert_eq!(
        back["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "3"
    );
    let history = sim.kubectl_ok(["rollout", "history", "deploy/web", "-n", NS]);
    let revisions: Vec<&str> = history
        .lines()
        .skip(2)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(revisions, ["2", "3"], "{history}");

    let scale = |n: u32| {
        let patch = format!(r#"{{"spec":{{"replicas":{n}}}}}"#);
        sim.kubectl_ok(["patch", "deploy/web", "-n", NS, "-p", &patch]);
        sim.kubectl_ok(["rollout", "status", "deploy/web", "-n", NS, "--timeout=60s"]);
    };
    scale(3);
    scale(2);
    scale(3);
    let up = format!("Scaled up replica set {} from 2 to 3", name(&first));
    let events: Vec<Value> = items(&sim, "events")
        .into_iter()
        .filter(|e| {
            e["involvedObject"]["uid"] == d["metadata"]["uid"] && e["message"] == up.as_str()
        })
        .collect();
    assert_eq!(events.len(), 1, "one Event, updated in place: {events:#?}");
    assert_eq!(events[0]["count"], 2);
    assert!(events[0]["lastTimestamp"].as_str() >= events[0]["firstTimestamp"].as_str());
}
