//! What a simulated pod looks like: the workloads pods belong to, the nodes they run on,
//! a pod as a real cluster's (2–4 KB: containers with ports, resources, env, probes;
//! conditions, container statuses, owner references) and the sizes the benchmark's
//! preloaded pods are trimmed or padded to ([`PodSize`]); the realistic one is a
//! Deployment's pod as a genuine kube-apiserver serves it, managedFields included.

use rand::rngs::SmallRng;
use rand::Rng;
use serde_json::{json, Value};

use super::storage::now_rfc3339;

/// Size of the preloaded pods (the simulated churn's own pods keep the default shape).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum PodSize {
    /// About 3.3 KB: two containers, probes, conditions, container statuses.
    #[default]
    Default,
    /// About 1.5 KB: one container, no probes, tolerations or container statuses.
    Small,
    /// About 4.7 KB: the default pod plus a last-applied-configuration annotation.
    Medium,
    /// About 12 KB: the default pod plus a large annotation (as with big env lists or
    /// sidecar-injected pods).
    Large,
    /// About 9 KB, as a genuine server's Deployment pod: a Deployment-sized spec (env,
    /// probes, security context), status conditions, and managedFields of four managers
    /// making about half the bytes.
    Realistic,
}

impl PodSize {
    /// Target size of a serialized pod, in bytes (`None`: as built).
    fn target(self) -> Option<usize> {
        match self {
            PodSize::Default => None,
            PodSize::Small => Some(1_500),
            PodSize::Medium => Some(4_700),
            PodSize::Large => Some(12_000),
            PodSize::Realistic => None,
        }
    }
}

/// Trims or pads a pod (as built by [`pod`], possibly with template holes) to `size`.
pub fn resize_pod(v: &mut Value, size: PodSize) {
    if size == PodSize::Realistic {
        return realistic(v);
    }
    let Some(target) = size.target() else {
        return;
    };
    if size == PodSize::Small {
        if let Some(cs) = v["spec"]["containers"].as_array_mut() {
            cs.truncate(1);
            for c in cs {
                if let Some(c) = c.as_object_mut() {
                    for k in [
                        "readinessProbe",
                        "env",
                        "terminationMessagePath",
                        "terminationMessagePolicy",
                        "volumeMounts",
                    ] {
                        c.remove(k);
                    }
                }
            }
        }
        if let Some(spec) = v["spec"].as_object_mut() {
            for k in [
                "tolerations",
                "preemptionPolicy",
                "enableServiceLinks",
                "volumes",
                "securityContext",
            ] {
                spec.remove(k);
            }
        }
        if let Some(st) = v["status"].as_object_mut() {
            for k in ["containerStatuses", "hostIPs", "podIPs"] {
                st.remove(k);
            }
            if let Some(conds) = st.get_mut("conditions").and_then(Value::as_array_mut) {
                conds.truncate(2);
            }
        }
    }
    let len = serde_json::to_vec(v).map_or(0, |b| b.len());
    // `"sim.kwatch.dev/padding":"…",` and the annotations object itself.
    let overhead = 60;
    if len + overhead < target {
        let n = target - len - overhead;
        // Deterministic base64-looking filler (like a certificate or an encoded config).
        const CHARS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let pad: String = (0..n)
            .map(|i| CHARS[(i * 7 + i / 64) % CHARS.len()] as char)
            .collect();
        v["metadata"]["annotations"] = json!({ "sim.kwatch.dev/padding": pad });
    }
}

/// [`PodSize::Realistic`]: the default pod with what a Deployment's pod carries on a
/// genuine cluster (a liveness probe, a security context, secrets in its environment,
/// annotations), then the managedFields its writers leave: kube-controller-manager
/// (metadata and spec, as the ReplicaSet controller creates it), kubelet (status), the CNI
/// plugin (its annotations) and kubectl (a rollout restart's annotation). Their FieldsV1
/// tries are made from the pod itself, keyed as structured-merge-diff keys associative
/// lists (`k:{"name":…}`), so they grow with it as a real pod's do.
fn realistic(v: &mut Value) {
    const TIME: &str = "2026-11-21T21:10:56Z";
    let meta = &mut v["metadata"];
    meta["annotations"] = json!({
        "kubectl.kubernetes.io/restartedAt": "2026-11-20T09:14:02Z",
        "prometheus.io/scrape": "true",
        "prometheus.io/port": "9102",
    });
    let c = &mut v["spec"]["containers"][0];
    if let Some(env) = c["env"].as_array_mut() {
        for (name, key) in [("DATABASE_URL", "url"), ("DATABASE_PASSWORD", "password")] {
            env.push(json!({"name": name, "valueFrom": {"secretKeyRef": {"name": "app-db", "key": key}}}));
        }
    }
    c["livenessProbe"] = json!({"httpGet": {"path": "/livez", "port": "http", "scheme": "HTTP"}, "initialDelaySeconds": 10, "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3});
    c["securityContext"] = json!({"capabilities": {"drop": ["ALL"]}, "runAsNonRoot": true, "allowPrivilegeEscalation": false});
    v["spec"]["nodeSelector"] = json!({"kubernetes.io/os": "linux"});
    let entry = |manager: &str, subresource: Option<&str>, fields: Value| {
        let mut e = json!({"manager": manager, "operation": "Update", "apiVersion": "v1", "time": TIME, "fieldsType": "FieldsV1", "fieldsV1": fields});
        if let Some(s) = subresource {
            e["subresource"] = json!(s);
        }
        e
    };
    let meta = &v["metadata"];
    let mut spec_fields = fields_v1(&v["spec"]);
    if let Some(f) = spec_fields.as_object_mut() {
        f.remove("f:nodeName");
    }
    let kcm = json!({
        "f:metadata": {
            "f:annotations": {".": {}, "f:kubectl.kubernetes.io/restartedAt": {}},
            "f:generateName": {},
            "f:labels": fields_v1(&meta["labels"]),
            "f:ownerReferences": fields_v1(&meta["ownerReferences"]),
        },
        "f:spec": spec_fields,
    });
    let kubelet = json!({"f:status": fields_v1(&v["status"])});
    let cni = json!({"f:metadata": {"f:annotations": {"f:cni.projectcalico.org/containerID": {}, "f:cni.projectcalico.org/podIP": {}, "f:cni.projectcalico.org/podIPs": {}}}});
    let kubectl = json!({"f:metadata": {"f:annotations": {"f:prometheus.io/port": {}, "f:prometheus.io/scrape": {}}}});
    let ip = v["status"]["podIP"].as_str().unwrap_or_default().to_owned();
    let meta = &mut v["metadata"];
    meta["annotations"]["cni.projectcalico.org/containerID"] =
        json!("4c3ed7e9d7b1e8c1a5a6b0a3f7e2d9c8b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1");
    meta["annotations"]["cni.projectcalico.org/podIP"] = json!(format!("{ip}/32"));
    meta["annotations"]["cni.projectcalico.org/podIPs"] = json!(format!("{ip}/32"));
    meta["managedFields"] = json!([
        entry("kube-controller-manager", None, kcm),
        entry("calico", Some("status"), cni),
        entry("kubectl-annotate", None, kubectl),
        entry("kubelet", Some("status"), kubelet),
    ]);
}

/// The FieldsV1 trie of a value as one manager owning all of it: `f:` per field, `.` for
/// a map or list item owned as a whole, list items keyed as structured-merge-diff keys
/// them (`k:{"name":…}`, `k:{"type":…}`, ports by number and protocol, IPs by address);
/// lists of scalars and lists without such a key are atomic (`{}`).
fn fields_v1(v: &Value) -> Value {
    // `.` first, as structured-merge-diff writes it.
    fn owned(out: serde_json::Map<String, Value>) -> Value {
        if out.is_empty() {
            return Value::Object(out);
        }
        let mut all = serde_json::Map::new();
        all.insert(".".into(), json!({}));
        all.extend(out);
        Value::Object(all)
    }
    match v {
        Value::Object(m) => {
            let mut out = serde_json::Map::new();
            for (k, v) in m {
                out.insert(format!("f:{k}"), fields_v1(v));
            }
            owned(out)
        }
        Value::Array(items) => {
            let mut out = serde_json::Map::new();
            for item in items {
                let key = if item.get("containerPort").is_some() {
                    json!({"containerPort": item["containerPort"], "protocol": item["protocol"]})
                } else if let Some(k) = ["name", "type", "ip", "uid"]
                    .into_iter()
                    .find(|k| item.get(*k).is_some_and(Value::is_string))
                {
                    json!({ k: item[k] })
                } else {
                    return json!({});
                };
                out.insert(format!("k:{key}"), fields_v1(item));
            }
            owned(out)
        }
        _ => json!({}),
    }
}

/// The workloads pods belong to: (namespace, deployment, pod-template-hash, image, port).
pub(super) const WORKLOADS: &[(&str, &str, &str, &str, u16)] = &[
    ("default", "web", "7c9d6b5f4", "nginx:1.27.2", 8080),
    (
        "team-a",
        "api",
        "5f8b9c7d6",
        "ghcr.io/example/api:2.14.0",
        9090,
    ),
];

pub(super) const NODE_NAMES: &[&str] = &["sim-node-1", "sim-node-2", "sim-node-3"];

pub(super) fn suffix(rng: &mut SmallRng) -> String {
    const CHARS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    (0..5)
        .map(|_| CHARS[rng.random_range(0..CHARS.len())] as char)
        .collect()
}

/// A realistic pod of workload `w`. `running` pods are scheduled with ready containers.
pub fn pod(rng: &mut SmallRng, w: usize, name: &str, rs_uid: &str, running: bool) -> Value {
    let (ns, app, hash, image, port) = WORKLOADS[w % WORKLOADS.len()];
    let now = now_rfc3339();
    let node = NODE_NAMES[rng.random_range(0..NODE_NAMES.len())];
    let ip = format!(
        "10.244.{}.{}",
        rng.random_range(0..4),
        rng.random_range(2..250)
    );
    let vol = format!("kube-api-access-{}", suffix(rng));
    let mut spec = json!({
        "volumes": [{"name": vol, "projected": {"sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}
        ], "defaultMode": 420}}],
        "containers": [
            {
                "name": app,
                "image": image,
                "ports": [{"name": "http", "containerPort": port, "protocol": "TCP"}],
                "env": [{"name": "LOG_LEVEL", "value": "info"}, {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}],
                "resources": {"limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "128Mi"}},
                "volumeMounts": [{"name": vol, "readOnly": true, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}],
                "readinessProbe": {"httpGet": {"path": "/healthz", "port": port, "scheme": "HTTP"}, "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3},
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "imagePullPolicy": "IfNotPresent"
            },
            {
                "name": "log-shipper",
                "image": "fluent/fluent-bit:3.1",
                "resources": {"limits": {"memory": "64Mi"}, "requests": {"cpu": "10m", "memory": "32Mi"}},
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "imagePullPolicy": "IfNotPresent"
            }
        ],
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "serviceAccountName": "default",
        "serviceAccount": "default",
        "securityContext": {},
        "schedulerName": "default-scheduler",
        "tolerations": [
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
        ],
        "priority": 0,
        "enableServiceLinks": true,
        "preemptionPolicy": "PreemptLowerPriority"
    });
    let status = if running {
        spec["nodeName"] = json!(node);
        running_status(&now, node, &ip, app, image, 0)
    } else {
        json!({"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "lastProbeTime": null, "lastTransitionTime": now, "reason": "Unschedulable", "message": "0/3 nodes are available: waiting for capacity."}], "qosClass": "Burstable"})
    };
    json!({
        "metadata": {
            "name": name,
            "generateName": format!("{app}-{hash}-"),
            "namespace": ns,
            "labels": {"app": app, "pod-template-hash": hash, "tier": if w.is_multiple_of(2) { "frontend" } else { "backend" }},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": format!("{app}-{hash}"), "uid": rs_uid, "controller": true, "blockOwnerDeletion": true}]
        },
        "spec": spec,
        "status": status
    })
}

pub(super) fn running_status(
    now: &str,
    node: &str,
    ip: &str,
    app: &str,
    image: &str,
    restarts: i64,
) -> Value {
    let cond = |t: &str| json!({"type": t, "status": "True", "lastProbeTime": null, "lastTransitionTime": now});
    json!({
        "phase": "Running",
        "conditions": [cond("PodReadyToStartContainers"), cond("Initialized"), cond("Ready"), cond("ContainersReady"), cond("PodScheduled")],
        "hostIP": format!("192.168.49.{}", 2 + NODE_NAMES.iter().position(|n| *n == node).unwrap_or(0)),
        "hostIPs": [{"ip": format!("192.168.49.{}", 2 + NODE_NAMES.iter().position(|n| *n == node).unwrap_or(0))}],
        "podIP": ip,
        "podIPs": [{"ip": ip}],
        "startTime": now,
        "containerStatuses": [
            {"name": app, "state": {"running": {"startedAt": now}}, "lastState": {}, "ready": true, "restartCount": restarts, "image": image, "imageID": format!("docker.io/library/{image}@sha256:0d17b565c37bcbd895e9d92315a05c1c3c9a29f762b011a10c54a66cd53c9b31"), "containerID": "containerd://4c3ed7e9d7b1e8c1a5a6b0a3f7e2d9c8b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1", "started": true},
            {"name": "log-shipper", "state": {"running": {"startedAt": now}}, "lastState": {}, "ready": true, "restartCount": 0, "image": "docker.io/fluent/fluent-bit:3.1", "imageID": "docker.io/fluent/fluent-bit@sha256:5b3c5cfa0e7f4d2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a", "containerID": "containerd://9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b", "started": true}
        ],
        "qosClass": "Burstable"
    })
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    #[test]
    fn pod_sizes_are_near_their_targets() {
        for (size, lo, hi) in [
            (PodSize::Small, 1_200, 1_800),
            (PodSize::Medium, 4_400, 5_000),
            (PodSize::Large, 11_500, 12_500),
        ] {
            let mut rng = SmallRng::seed_from_u64(1);
            let mut v = pod(&mut rng, 0, "web-7c9d6b5f4-abcde", "u", true);
            resize_pod(&mut v, size);
            let n = serde_json::to_vec(&v).unwrap().len();
            assert!((lo..=hi).contains(&n), "{size:?}: {n} bytes");
        }
    }

    /// The realistic pod is a genuine Deployment pod's size (~7.8 KB), and its
    /// managedFields (several managers) are about half of it.
    #[test]
    fn a_realistic_pod_is_half_managed_fields() {
        let mut rng = SmallRng::seed_from_u64(1);
        let mut v = pod(&mut rng, 0, "web-7c9d6b5f4-abcde", "u", true);
        resize_pod(&mut v, PodSize::Realistic);
        let n = serde_json::to_vec(&v).unwrap().len();
        let mf = serde_json::to_vec(&v["metadata"]["managedFields"])
            .unwrap()
            .len();
        assert!(
            (6_500..=9_500).contains(&n),
            "{n} bytes, {mf} managedFields"
        );
        assert!(
            (0.4..=0.6).contains(&(mf as f64 / n as f64)),
            "{mf} of {n} bytes"
        );
        assert_eq!(v["metadata"]["managedFields"].as_array().unwrap().len(), 4);
    }

    #[test]
    fn pods_are_realistic_in_size() {
        let mut rng = SmallRng::seed_from_u64(1);
        for running in [false, true] {
            let mut v = pod(&mut rng, 0, "web-7c9d6b5f4-abcde", "uid", running);
            v["metadata"]["uid"] = json!("0f7b1e2a-3c4d-4e5f-8a9b-0c1d2e3f4a5b");
            v["metadata"]["resourceVersion"] = json!("123456");
            v["metadata"]["creationTimestamp"] = json!("2026-11-21T21:10:56Z");
            let n = serde_json::to_vec(&v).unwrap().len();
            assert!((2000..=4200).contains(&n), "pod is {n} bytes");
        }
    }
}
