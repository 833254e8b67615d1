//! The Job controller (pkg/controller/job), for the plain Job (`completions` pods,
//! `parallelism` at a time): it creates pods `<job>-xxxxx` with the Job as controller and
//! its `SuccessfulCreate` Event, counts them as the kubelet completes them
//! ([`super::kubelet`]), and once enough succeeded marks the Job `SuccessCriteriaMet` and
//! `Complete` (1.32's pair) with the `Completed` Event. Not simulated: failures and
//! `backoffLimit`, indexed completion, suspend, the pods' `batch.kubernetes.io/job-tracking`
//! finalizer.

use serde_json::{json, Map, Value};

use super::super::resources::{JOBS, PODS};
use super::super::storage::{now_rfc3339, Store};
use super::{active, controller_ref, events, int, not_deleting, order_condition, owned_by};

pub fn sync(s: &mut Store) {
    for job in not_deleting(s, JOBS).into_iter().filter(|v| !finished(v)) {
        sync_one(s, &job);
    }
}

fn finished(job: &Value) -> bool {
    job["status"]["conditions"].as_array().is_some_and(|cs| {
        cs.iter()
            .any(|c| (c["type"] == "Complete" || c["type"] == "Failed") && c["status"] == "True")
    })
}

fn sync_one(s: &mut Store, job: &Value) {
    let meta = &job["metadata"];
    let ns = meta["namespace"].as_str().unwrap_or_default();
    let uid = meta["uid"].as_str().unwrap_or_default();
    let pods = owned_by(s, PODS, ns, uid);
    let completions = int(&job["spec"]["completions"], 1);
    let parallelism = int(&job["spec"]["parallelism"], 1);
    let succeeded = pods.iter().filter(|p| p.phase == "Succeeded").count() as i64;
    let running = pods.iter().filter(|p| active(p)).count() as i64;
    let ready = pods.iter().filter(|p| p.links.ready).count() as i64;
    let now = now_rfc3339();
    let start = job["status"]
        .get("startTime")
        .cloned()
        .unwrap_or_else(|| json!(now));
    let mut st = Map::new();
    let complete = succeeded >= completions;
    if complete {
        let c = |t: &str| {
            order_condition(
                json!({"type": t, "status": "True", "lastProbeTime": now, "lastTransitionTime": now,
                    "reason": "CompletionsReached", "message": "Reached expected number of succeeded pods"}),
                false,
            )
        };
        st.insert(
            "conditions".into(),
            json!([c("SuccessCriteriaMet"), c("Complete")]),
        );
    }
    st.insert("startTime".into(), start);
    if complete {
        st.insert("completionTime".into(), json!(now));
    }
    if running > 0 {
        st.insert("active".into(), json!(running));
    }
    if succeeded > 0 {
        st.insert("succeeded".into(), json!(succeeded));
    }
    st.insert("terminating".into(), json!(0));
    st.insert("uncountedTerminatedPods".into(), json!({}));
    st.insert("ready".into(), json!(ready));
    if !complete {
        let wanted = parallelism.min(completions - succeeded);
        for _ in 0..(wanted - running).max(0) {
            create_pod(s, job);
        }
    }
    if super::write_status(s, JOBS, job, Value::Object(st)).is_some() && complete {
        events::normal(s, JOBS, job, events::JOB, "Completed", "Job completed");
    }
}

/// A pod of the Job's template, with the labels the genuine controller adds.
fn create_pod(s: &mut Store, job: &Value) {
    let meta = &job["metadata"];
    let name = meta["name"].as_str().unwrap_or_default();
    let uid = &meta["uid"];
    let template = &job["spec"]["template"];
    let mut labels = json!({
        "batch.kubernetes.io/controller-uid": uid,
        "batch.kubernetes.io/job-name": name,
        "controller-uid": uid,
        "job-name": name,
    });
    if let (Some(l), Some(t)) = (
        labels.as_object_mut(),
        template["metadata"]["labels"].as_object(),
    ) {
        for (k, v) in t {
            l.insert(k.clone(), v.clone());
        }
    }
    let pod = json!({
        "metadata": {
            "generateName": format!("{name}-"),
            "namespace": meta["namespace"],
            "labels": labels,
            "ownerReferences": [controller_ref(JOBS, job)],
        },
        "spec": template["spec"],
        "status": {"phase": "Pending", "qosClass": "BestEffort"},
    });
    if let Ok(o) = s.create(PODS, pod, true) {
        let msg = format!("Created pod: {}", o.name);
        events::normal(s, JOBS, job, events::JOB, "SuccessfulCreate", &msg);
    }
}
