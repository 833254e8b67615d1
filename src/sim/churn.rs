//! The simulated cluster's contents and life: the objects present at start, preloaded pods,
//! the churn generator and the chaos scenario's random faults.
//!
//! Churn is deterministic for a seed: the sequence of operations depends only on the seeded
//! generator and on the store (which only churn writes unless a client does). Pods look like
//! those of a real cluster (2–4 KB: containers with ports, resources, env, probes; conditions,
//! container statuses, owner references) and go Pending → Running, restart, and get deleted.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

use super::resources::{
    CONFIGMAPS, CRDS, DEPLOYMENTS, EVENTS, NAMESPACES, NODES, PODS, REPLICASETS, SECRETS, SERVICES,
    WIDGETS,
};
use super::storage::{now_rfc3339, Store};
use super::App;

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
}

impl PodSize {
    /// Target size of a serialized pod, in bytes (`None`: as built).
    fn target(self) -> Option<usize> {
        match self {
            PodSize::Default => None,
            PodSize::Small => Some(1_500),
            PodSize::Medium => Some(4_700),
            PodSize::Large => Some(12_000),
        }
    }
}

/// Trims or pads a pod (as built by [`pod`], possibly with template holes) to `size`.
pub fn resize_pod(v: &mut Value, size: PodSize) {
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

const CRD_WIDGETS: &str = include_str!("ref/crd-widgets.json");

/// The workloads pods belong to: (namespace, deployment, pod-template-hash, image, port).
const WORKLOADS: &[(&str, &str, &str, &str, u16)] = &[
    ("default", "web", "7c9d6b5f4", "nginx:1.27.2", 8080),
    (
        "team-a",
        "api",
        "5f8b9c7d6",
        "ghcr.io/example/api:2.14.0",
        9090,
    ),
];

const NODE_NAMES: &[&str] = &["sim-node-1", "sim-node-2", "sim-node-3"];

fn suffix(rng: &mut SmallRng) -> String {
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

fn running_status(now: &str, node: &str, ip: &str, app: &str, image: &str, restarts: i64) -> Value {
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

/// Creates the objects every simulated cluster starts with, then `pods` preloaded pods.
/// Nothing enters the history: the history starts after this (compacted = current revision).
#[allow(dead_code)] // the tests' and other callers' default size
pub fn seed_cluster(store: &mut Store, pods: usize, seed: u64) -> anyhow::Result<()> {
    seed_cluster_sized(store, pods, seed, PodSize::Default)
}

/// [`seed_cluster`] with preloaded pods of `size` (the benchmark's `--pod-size`).
pub fn seed_cluster_sized(
    store: &mut Store,
    pods: usize,
    seed: u64,
    size: PodSize,
) -> anyhow::Result<()> {
    let mut rng = SmallRng::seed_from_u64(seed ^ 0x5eed);
    seed_infrastructure(store)?;
    let rs_uids = seed_workloads(store)?;
    seed_widgets(store)?;
    preload_pods(store, &mut rng, pods, &rs_uids, size);
    let rev = store.rev();
    store.compact(rev);
    Ok(())
}

/// Creates `v` as a `res` object; its uid.
fn create(store: &mut Store, res: usize, v: Value) -> anyhow::Result<String> {
    let o = store
        .create(res, v, false)
        .map_err(|s| anyhow::anyhow!("seeding: {:?}", s.message))?;
    Ok(o.uid.clone())
}

/// Namespaces, nodes, the widgets CRD, the `kubernetes` service, configmaps and a secret.
fn seed_infrastructure(store: &mut Store) -> anyhow::Result<()> {
    for ns in ["default", "kube-system", "kube-public", "team-a"] {
        create(
            store,
            NAMESPACES,
            json!({"metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns}}, "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}),
        )?;
    }
    for (i, n) in NODE_NAMES.iter().enumerate() {
        create(
            store,
            NODES,
            json!({
                "metadata": {"name": n, "labels": {"kubernetes.io/hostname": n, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}},
                "spec": {"podCIDR": format!("10.244.{i}.0/24")},
                "status": {"capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"}, "allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                    "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status"}],
                    "addresses": [{"type": "InternalIP", "address": format!("192.168.49.{}", 2 + i)}, {"type": "Hostname", "address": n}],
                    "nodeInfo": {"kubeletVersion": "v1.32.13", "containerRuntimeVersion": "containerd://1.7.24", "osImage": "Ubuntu 24.04.1 LTS", "operatingSystem": "linux", "architecture": "amd64"}}
            }),
        )?;
    }
    let crd: Value = serde_json::from_str(CRD_WIDGETS)?;
    create(store, CRDS, crd)?;
    create(
        store,
        SERVICES,
        json!({"metadata": {"name": "kubernetes", "namespace": "default", "labels": {"component": "apiserver", "provider": "kubernetes"}},
        "spec": {"ports": [{"name": "https", "protocol": "TCP", "port": 443, "targetPort": 6443}], "clusterIP": "10.96.0.1", "clusterIPs": ["10.96.0.1"], "type": "ClusterIP", "sessionAffinity": "None"}, "status": {"loadBalancer": {}}}),
    )?;
    for ns in ["default", "kube-system", "kube-public", "team-a"] {
        create(
            store,
            CONFIGMAPS,
            json!({"metadata": {"name": "kube-root-ca.crt", "namespace": ns, "annotations": {"kubernetes.io/description": "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters."}}, "data": {"ca.crt": "-----BEGIN CERTIFICATE-----\nMIIBsim\n-----END CERTIFICATE-----\n"}}),
        )?;
    }
    create(
        store,
        CONFIGMAPS,
        json!({"metadata": {"name": "app-config", "namespace": "default", "labels": {"app": "web"}}, "data": {"generation": "0", "log-level": "info"}}),
    )?;
    create(
        store,
        SECRETS,
        json!({"metadata": {"name": "app-credentials", "namespace": "default", "labels": {"app": "web"}}, "data": {"password": "c2ltdWxhdGVk"}, "type": "Opaque"}),
    )?;
    Ok(())
}

/// A deployment, its replicaset and its scaling event per workload; the replicasets' uids.
fn seed_workloads(store: &mut Store) -> anyhow::Result<Vec<String>> {
    let mut rs_uids = Vec::new();
    for (ns, app, hash, image, port) in WORKLOADS {
        let sel = json!({"matchLabels": {"app": app}});
        let template = json!({"metadata": {"labels": {"app": app, "pod-template-hash": hash}}, "spec": {"containers": [{"name": app, "image": image, "ports": [{"containerPort": port, "protocol": "TCP"}]}]}});
        let d_uid = create(
            store,
            DEPLOYMENTS,
            json!({"metadata": {"name": app, "namespace": ns, "labels": {"app": app}, "annotations": {"deployment.kubernetes.io/revision": "1"}},
            "spec": {"replicas": 3, "selector": sel, "template": template, "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600},
            "status": {"observedGeneration": 1, "replicas": 3, "updatedReplicas": 3, "readyReplicas": 3, "availableReplicas": 3}}),
        )?;
        let rs_uid = create(
            store,
            REPLICASETS,
            json!({"metadata": {"name": format!("{app}-{hash}"), "namespace": ns, "labels": {"app": app, "pod-template-hash": hash},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": app, "uid": d_uid, "controller": true, "blockOwnerDeletion": true}]},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": app, "pod-template-hash": hash}}, "template": template},
            "status": {"replicas": 3, "fullyLabeledReplicas": 3, "readyReplicas": 3, "availableReplicas": 3, "observedGeneration": 1}}),
        )?;
        create(
            store,
            EVENTS,
            json!({"metadata": {"name": format!("{app}.17f2a9c4e1b3d5a7"), "namespace": ns},
            "involvedObject": {"kind": "Deployment", "namespace": ns, "name": app, "uid": d_uid, "apiVersion": "apps/v1"},
            "reason": "ScalingReplicaSet", "message": format!("Scaled up replica set {app}-{hash} from 0 to 3"),
            "source": {"component": "deployment-controller"}, "count": 1, "type": "Normal",
            "reportingComponent": "deployment-controller", "reportingInstance": ""}),
        )?;
        rs_uids.push(rs_uid);
    }
    Ok(rs_uids)
}

/// The widgets `w1` (Ready) and `w2` (no status).
fn seed_widgets(store: &mut Store) -> anyhow::Result<()> {
    for (name, size, phase) in [("w1", 3, Some("Ready")), ("w2", 5, None)] {
        let mut w = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name, "namespace": "default", "labels": {"app": "a"}}, "spec": {"size": size, "color": "red"}});
        if let Some(p) = phase {
            w["status"] = json!({"phase": p});
        }
        create(store, WIDGETS, w)?;
    }
    Ok(())
}

/// `pods` running pods of `size`, spread over the workloads, preloaded without history.
fn preload_pods(
    store: &mut Store,
    rng: &mut SmallRng,
    pods: usize,
    rs_uids: &[String],
    size: PodSize,
) {
    let templates: Vec<PodTemplate> = (0..WORKLOADS.len())
        .map(|w| PodTemplate::new(rng, w, &rs_uids[w], size))
        .collect();
    let created = now_rfc3339();
    for i in 0..pods {
        let w = i % WORKLOADS.len();
        let (_, app, hash, _, _) = WORKLOADS[w];
        // Unique names without collision checks: a random suffix plus the index.
        let name = format!("{app}-{hash}-{}{}", suffix(rng), to_base36(i));
        let t = &templates[w];
        let uid = uuid::Builder::from_random_bytes(rng.random())
            .into_uuid()
            .to_string();
        let node = rng.random_range(0..NODE_NAMES.len());
        let ip = format!(
            "10.244.{}.{}",
            rng.random_range(0..4),
            rng.random_range(2..250)
        );
        let vol = format!("kube-api-access-{}", suffix(rng));
        store.insert_preloaded(|rv| t.build(&name, &uid, rv, &created, &vol, node, &ip));
    }
}

/// A serialized running pod with holes for what differs between pods: preloading 100k pods
/// is then mostly memcpy instead of building and serializing a JSON tree per pod.
struct PodTemplate {
    /// `parts.len() == slots.len() + 1`; the pod is `parts[0] slots[0] parts[1] …`.
    parts: Vec<Vec<u8>>,
    slots: Vec<Slot>,
    namespace: String,
    labels: Vec<(String, String)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Name,
    Uid,
    Rv,
    Created,
    Vol,
    Node,
    HostIp,
    PodIp,
}

const SLOTS: &[(Slot, &str)] = &[
    (Slot::Name, "NAME"),
    (Slot::Uid, "UID"),
    (Slot::Rv, "RV"),
    (Slot::Created, "CREATED"),
    (Slot::Vol, "VOL"),
    (Slot::Node, "NODE"),
    (Slot::HostIp, "HOSTIP"),
    (Slot::PodIp, "PODIP"),
];

/// A placeholder string; U+0001 never occurs in real values and serializes as `\u0001`.
fn hole(tag: &str) -> String {
    format!("\u{1}{tag}\u{1}")
}

impl PodTemplate {
    fn new(rng: &mut SmallRng, w: usize, rs_uid: &str, size: PodSize) -> PodTemplate {
        let mut v = pod(rng, w, &hole("NAME"), rs_uid, true);
        let vol = hole("VOL");
        v["spec"]["volumes"][0]["name"] = json!(vol);
        v["spec"]["containers"][0]["volumeMounts"][0]["name"] = json!(vol);
        v["spec"]["nodeName"] = json!(hole("NODE"));
        let st = &mut v["status"];
        st["hostIP"] = json!(hole("HOSTIP"));
        st["hostIPs"] = json!([{"ip": hole("HOSTIP")}]);
        st["podIP"] = json!(hole("PODIP"));
        st["podIPs"] = json!([{"ip": hole("PODIP")}]);
        let created = hole("CREATED");
        st["startTime"] = json!(created);
        for c in ["conditions", "containerStatuses"] {
            if let Some(items) = st[c].as_array_mut() {
                for item in items {
                    if item.get("lastTransitionTime").is_some() {
                        item["lastTransitionTime"] = json!(created);
                    }
                    if item["state"]["running"].get("startedAt").is_some() {
                        item["state"]["running"]["startedAt"] = json!(created);
                    }
                }
            }
        }
        resize_pod(&mut v, size);
        let meta = &mut v["metadata"];
        meta["uid"] = json!(hole("UID"));
        meta["resourceVersion"] = json!(hole("RV"));
        meta["creationTimestamp"] = json!(created);
        let namespace = meta["namespace"].as_str().unwrap_or_default().to_string();
        let labels = super::storage::labels_of(meta);
        let bytes = crate::sim::status::go_json(&super::storage::normalize(
            &super::resources::RESOURCES[PODS],
            v,
        ));
        let (mut parts, mut slots, mut rest) = (Vec::new(), Vec::new(), &bytes[..]);
        loop {
            let next = SLOTS
                .iter()
                .filter_map(|(slot, tag)| {
                    let pat = format!("\\u0001{tag}\\u0001");
                    find(rest, pat.as_bytes()).map(|i| (i, *slot, pat.len()))
                })
                .min_by_key(|(i, _, _)| *i);
            match next {
                Some((i, slot, len)) => {
                    parts.push(rest[..i].to_vec());
                    slots.push(slot);
                    rest = &rest[i + len..];
                }
                None => {
                    parts.push(rest.to_vec());
                    break;
                }
            }
        }
        PodTemplate {
            parts,
            slots,
            namespace,
            labels,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn build(
        &self,
        name: &str,
        uid: &str,
        rv: u64,
        created: &str,
        vol: &str,
        node: usize,
        pod_ip: &str,
    ) -> super::storage::Obj {
        let rv_s = rv.to_string();
        let node_name = NODE_NAMES[node];
        let host_ip = format!("192.168.49.{}", 2 + node);
        let mut out = Vec::with_capacity(self.parts.iter().map(Vec::len).sum::<usize>() + 256);
        for (i, part) in self.parts.iter().enumerate() {
            out.extend_from_slice(part);
            if let Some(slot) = self.slots.get(i) {
                out.extend_from_slice(match slot {
                    Slot::Name => name.as_bytes(),
                    Slot::Uid => uid.as_bytes(),
                    Slot::Rv => rv_s.as_bytes(),
                    Slot::Created => created.as_bytes(),
                    Slot::Vol => vol.as_bytes(),
                    Slot::Node => node_name.as_bytes(),
                    Slot::HostIp => host_ip.as_bytes(),
                    Slot::PodIp => pod_ip.as_bytes(),
                });
            }
        }
        super::storage::Obj::from_parts(
            PODS,
            self.namespace.clone(),
            name.to_string(),
            uid.to_string(),
            rv,
            self.labels.clone(),
            "Running".to_string(),
            node_name.to_string(),
            out,
        )
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn to_base36(mut n: usize) -> String {
    const D: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(D[n % 36]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// State of the churn generator: which pods it knows and in which phase.
struct Churner {
    rng: SmallRng,
    target: usize,
    counter: u64,
    /// Pods churn created that are still Pending, oldest first (they get scheduled in order).
    pending: std::collections::VecDeque<String>,
}

impl Churner {
    fn rs_uid(store: &Store, w: usize) -> String {
        let (ns, app, hash, _, _) = WORKLOADS[w];
        store
            .get(REPLICASETS, &format!("{ns}/{app}-{hash}"))
            .map(|o| o.uid.clone())
            .unwrap_or_default()
    }

    fn pick_pod(&mut self, store: &Store, phase: Option<&str>) -> Option<String> {
        let n = store.len(PODS);
        if n == 0 {
            return None;
        }
        // Sample a few random keys: by position in small stores, else from a random point of
        // the key space (O(log n)).
        for _ in 0..8 {
            let key = if n <= 256 {
                let i = self.rng.random_range(0..n);
                store.keys(PODS).nth(i)
            } else {
                let (ns, app, hash, _, _) = WORKLOADS[self.rng.random_range(0..WORKLOADS.len())];
                let probe = format!("{ns}/{app}-{hash}-{}", suffix(&mut self.rng));
                store.key_at_or_after(PODS, &probe)
            };
            let Some(key) = key else { continue };
            let ok = match phase {
                None => true,
                Some(p) => store.get(PODS, key).is_some_and(|o| o.phase == p),
            };
            if ok {
                return Some(key.to_string());
            }
        }
        None
    }

    /// One change. Errors (a client deleted what churn picked) are ignored.
    fn step(&mut self, store: &mut Store) {
        let pods = store.len(PODS);
        let roll: u32 = if pods < self.target {
            0
        } else {
            self.rng.random_range(0..100)
        };
        self.counter += 1;
        match roll {
            0..=14 => self.create_pod(store),
            15..=44 => self.run_or_touch_pod(store),
            45..=64 => self.restart_container(store),
            65..=79 => self.delete_pod(store),
            80..=89 => self.touch_configmap(store),
            90..=94 => self.set_deployment_ready(store),
            _ => self.churn_widget(store),
        }
    }

    /// A new pod of a random workload, Pending.
    fn create_pod(&mut self, store: &mut Store) {
        let w = self.rng.random_range(0..WORKLOADS.len());
        let (_, app, hash, _, _) = WORKLOADS[w];
        let uid = Churner::rs_uid(store, w);
        let name = format!("{app}-{hash}-{}", suffix(&mut self.rng));
        let v = pod(&mut self.rng, w, &name, &uid, false);
        if let Ok(o) = store.create(PODS, v, true) {
            self.pending.push_back(o.key.clone());
        }
    }

    /// Pending → Running (or another status touch if none is pending).
    fn run_or_touch_pod(&mut self, store: &mut Store) {
        let mut key = None;
        while let Some(k) = self.pending.pop_front() {
            if store.get(PODS, &k).is_some_and(|o| o.phase == "Pending") {
                key = Some(k);
                break;
            }
        }
        let Some(key) = key.or_else(|| self.pick_pod(store, Some("Running"))) else {
            return;
        };
        let Some(o) = store.get(PODS, &key) else {
            return;
        };
        let mut v = o.value();
        let app = v["metadata"]["labels"]["app"]
            .as_str()
            .unwrap_or("web")
            .to_string();
        let w = WORKLOADS.iter().position(|x| x.1 == app).unwrap_or(0);
        let image = WORKLOADS[w].3;
        let node = NODE_NAMES[self.rng.random_range(0..NODE_NAMES.len())];
        let ip = format!(
            "10.244.{}.{}",
            self.rng.random_range(0..4),
            self.rng.random_range(2..250)
        );
        let restarts = v["status"]["containerStatuses"][0]["restartCount"]
            .as_i64()
            .unwrap_or(0);
        if v["status"]["phase"] == "Pending" {
            v["spec"]["nodeName"] = json!(node);
            v["status"] = running_status(&now_rfc3339(), node, &ip, &app, image, restarts);
        } else {
            v["metadata"]["annotations"] =
                json!({"sim.kwatch.dev/heartbeat": self.counter.to_string()});
        }
        let _ = store.update(PODS, &key, v);
    }

    /// A container restart of a running pod.
    fn restart_container(&mut self, store: &mut Store) {
        let Some(key) = self.pick_pod(store, Some("Running")) else {
            return;
        };
        let Some(o) = store.get(PODS, &key) else {
            return;
        };
        let mut v = o.value();
        let now = now_rfc3339();
        let cs = &mut v["status"]["containerStatuses"][0];
        let n = cs["restartCount"].as_i64().unwrap_or(0) + 1;
        cs["restartCount"] = json!(n);
        cs["lastState"] = json!({"terminated": {"exitCode": 137, "reason": "OOMKilled", "startedAt": now, "finishedAt": now, "containerID": "containerd://4c3ed7e9d7b1"}});
        cs["state"] = json!({"running": {"startedAt": now}});
        let _ = store.update(PODS, &key, v);
    }

    /// A pod deleted.
    fn delete_pod(&mut self, store: &mut Store) {
        let Some(key) = self.pick_pod(store, None) else {
            return;
        };
        let _ = store.delete(PODS, &key);
    }

    /// `default/app-config` changed.
    fn touch_configmap(&mut self, store: &mut Store) {
        if let Some(o) = store.get(CONFIGMAPS, "default/app-config") {
            let mut v = o.value();
            v["data"]["generation"] = json!(self.counter.to_string());
            let _ = store.update(CONFIGMAPS, "default/app-config", v);
        }
    }

    /// A deployment's ready replicas changed.
    fn set_deployment_ready(&mut self, store: &mut Store) {
        let (ns, app, _, _, _) = WORKLOADS[self.rng.random_range(0..WORKLOADS.len())];
        let key = format!("{ns}/{app}");
        if let Some(o) = store.get(DEPLOYMENTS, &key) {
            let mut v = o.value();
            let ready = self.rng.random_range(1..=3);
            v["status"]["readyReplicas"] = json!(ready);
            v["status"]["availableReplicas"] = json!(ready);
            let _ = store.update(DEPLOYMENTS, &key, v);
        }
    }

    /// The widget `default/w2` resized, deleted or created again.
    fn churn_widget(&mut self, store: &mut Store) {
        let key = "default/w2";
        match store.get(WIDGETS, key) {
            Some(o) if self.rng.random_bool(0.7) => {
                let mut v = o.value();
                v["spec"]["size"] = json!(self.rng.random_range(1..10));
                let _ = store.update(WIDGETS, key, v);
            }
            Some(_) => {
                let _ = store.delete(WIDGETS, key);
            }
            None => {
                let w = json!({"metadata": {"name": "w2", "namespace": "default"}, "spec": {"size": 5, "color": "blue"}});
                let _ = store.create(WIDGETS, w, true);
            }
        }
    }
}

/// Paces changes at a rate set through a watch channel (the control API's switches):
/// fractions of a change carry over from one tick to the next.
pub(crate) struct Pacer {
    rate_rx: tokio::sync::watch::Receiver<f64>,
    owed: f64,
    last: tokio::time::Instant,
}

impl Pacer {
    pub fn new(rate_rx: tokio::sync::watch::Receiver<f64>) -> Pacer {
        Pacer {
            rate_rx,
            owed: 0.0,
            last: tokio::time::Instant::now(),
        }
    }

    /// The rate, once it is positive (nothing is owed for the time it was not); `None`
    /// when the switch is gone.
    pub async fn rate(&mut self) -> Option<f64> {
        loop {
            let rate = *self.rate_rx.borrow_and_update();
            if rate > 0.0 {
                return Some(rate);
            }
            self.rate_rx.changed().await.ok()?;
            self.last = tokio::time::Instant::now();
        }
    }

    /// After `tick` (or as soon as the rate changes: then 0), the whole changes owed at
    /// `rate` since the last call; `None` when the switch is gone.
    pub async fn owed(&mut self, rate: f64, tick: Duration) -> Option<usize> {
        tokio::select! {
            _ = tokio::time::sleep(tick) => {}
            r = self.rate_rx.changed() => {
                r.ok()?;
                return Some(0);
            }
        }
        let now = tokio::time::Instant::now();
        self.owed += rate * (now - self.last).as_secs_f64();
        self.last = now;
        let n = self.owed.floor();
        self.owed -= n;
        Some(n as usize)
    }

    /// Waits `d`, or less if the rate changes; `None` when the switch is gone.
    pub async fn pause(&mut self, d: Duration) -> Option<()> {
        tokio::select! {
            _ = tokio::time::sleep(d) => Some(()),
            r = self.rate_rx.changed() => r.ok(),
        }
    }
}

/// Runs churn until the task is aborted. The rate is read from the control API's switch.
pub async fn run_churn(app: Arc<App>, seed: u64, target: usize) {
    let mut churner = Churner {
        pending: Default::default(),
        rng: SmallRng::seed_from_u64(seed),
        target: target.max(5),
        counter: 0,
    };
    let mut pacer = Pacer::new(app.faults.churn_rate.subscribe());
    while let Some(rate) = pacer.rate().await {
        let tick = Duration::from_secs_f64((1.0 / rate).clamp(0.01, 1.0));
        let Some(n) = pacer.owed(rate, tick).await else {
            return;
        };
        if n > 0 {
            app.cluster.write(|s| {
                for _ in 0..n.min(100_000) {
                    churner.step(s);
                }
            });
        }
    }
}

/// A throttling answer as real servers give them: API Priority and Fairness and the
/// max-in-flight filter send `Retry-After`, other failures often do not.
fn throttle(app: &Arc<App>, code: u16, n: u64, with_retry_after: bool) -> String {
    app.faults.set_failure(code, n, u64::from(with_retry_after));
    let ra = if with_retry_after {
        "with Retry-After: 1"
    } else {
        "without Retry-After"
    };
    format!("the next {n} requests fail with {code} {ra}")
}

/// One chaos fault, chosen by `rng`, applied to `app`; returns what it did.
pub(crate) fn chaos_fault(app: &Arc<App>, rng: &mut SmallRng) -> String {
    if app.faults.chaos_retry_after_only.load(Ordering::SeqCst) {
        let code = [429, 500, 503][rng.random_range(0..3)];
        let n = rng.random_range(1..4);
        let what = throttle(app, code, n, true);
        return format!("{what}; dropped {} watches", app.faults.drop_watches());
    }
    match rng.random_range(0..11) {
        0 => format!("dropped {} watches", app.faults.drop_watches()),
        1 => {
            let r = app.cluster.write(|s| {
                let r = s.rev();
                s.compact(r);
                r
            });
            format!("compacted history up to revision {r}")
        }
        2 => {
            let n = rng.random_range(1..4);
            let ra = rng.random_bool(0.5);
            throttle(app, 429, n, ra)
        }
        3 => {
            let ra = rng.random_bool(0.5);
            throttle(app, 500, 1, ra)
        }
        4 => {
            let ra = rng.random_bool(0.5);
            throttle(app, 503, 1, ra)
        }
        5 => {
            let ms = rng.random_range(1000..3000);
            app.faults.stall(Duration::from_millis(ms));
            format!("watches stalled for {ms} ms")
        }
        6 => {
            app.faults.add_short_watches(1);
            "the next watch closes at once".to_string()
        }
        7 => format!(
            "a malformed line on {} open watches",
            app.faults.malformed_now()
        ),
        8 => {
            // A watcher falls behind and what it missed is compacted away: its re-watch
            // gets 410, and objects deleted meanwhile come back as tombstones.
            let ms = rng.random_range(1500..3000);
            app.faults.stall(Duration::from_millis(ms));
            let app = app.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(ms / 2)).await;
                app.cluster.write(|s| {
                    let r = s.rev();
                    s.compact(r);
                });
                app.faults.drop_watches();
            });
            format!("watches stalled for {ms} ms, compacted and dropped halfway")
        }
        9 => {
            app.faults.add_expire_continue(1);
            "the next continue token expires".to_string()
        }
        _ => {
            let ms = rng.random_range(500..3000);
            app.restart(Duration::from_millis(ms), false);
            format!("the server restarts, away for {ms} ms")
        }
    }
}

/// The chaos scenario: a random fault every 2–6 s while enabled (logged to stderr when
/// `log` is set).
pub async fn run_chaos(app: Arc<App>, seed: u64, log: bool) {
    let mut rng = SmallRng::seed_from_u64(seed.wrapping_add(0xc4a05));
    loop {
        let wait = rng.random_range(2000..6000);
        tokio::time::sleep(Duration::from_millis(wait)).await;
        if !app.faults.chaos.load(Ordering::SeqCst) {
            continue;
        }
        let what = chaos_fault(&app, &mut rng);
        if log {
            eprintln!("kwatch sim: chaos: {what}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::storage::EventKind;
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

    #[test]
    fn preloaded_pods_equal_normally_built_ones() {
        let mut s = Store::new(100);
        seed_cluster(&mut s, 6, 3).unwrap();
        assert_eq!(s.len(PODS), 6);
        let keys: Vec<String> = s.keys(PODS).map(str::to_string).collect();
        for k in keys {
            let o = s.get(PODS, &k).unwrap();
            let text = std::str::from_utf8(&o.json).unwrap();
            assert!(!text.contains("\\u0001"), "{text}");
            let again = super::super::storage::Obj::from_value(PODS, o.value());
            assert_eq!(again.json, o.json);
            assert_eq!((&again.key, &again.uid, again.rv), (&o.key, &o.uid, o.rv));
            assert_eq!(
                (&again.labels, &again.phase, &again.node_name),
                (&o.labels, &o.phase, &o.node_name)
            );
            assert!(o.json.len() > 2000);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn chaos_applies_every_kind_of_fault_deterministically() {
        let app = || {
            Arc::new(App {
                cluster: super::super::storage::Cluster::new(Store::new(100)),
                faults: super::super::control::Faults::new(0.0, true),
                token: String::new(),
                auth: false,
                port: 0,
                bookmark_interval: Duration::from_secs(1),
                too_large_wait: Duration::from_secs(1),
                backup: std::sync::Mutex::new(None),
                restarts: tokio::sync::mpsc::unbounded_channel().0,
                discovery: super::super::discovery::Served::new(true, None),
                requests: super::super::control::RequestLog::new(),
            })
        };
        let run = || {
            let a = app();
            let mut rng = SmallRng::seed_from_u64(9);
            (0..200)
                .map(|_| chaos_fault(&a, &mut rng))
                .collect::<Vec<_>>()
        };
        let log = run();
        assert_eq!(log, run());
        for kind in [
            "dropped",
            "compacted",
            "429",
            "500",
            "503",
            "stalled",
            "closes at once",
            "malformed",
            "compacted and dropped halfway",
            "continue token expires",
            "restarts",
        ] {
            assert!(log.iter().any(|l| l.contains(kind)), "no {kind} in {log:?}");
        }
        let a = app();
        let mut rng = SmallRng::seed_from_u64(9);
        while !chaos_fault(&a, &mut rng).contains("429") {}
        assert_eq!(
            a.faults.take_failure(None, None, 0).map(|s| s.code),
            Some(429)
        );
    }

    #[test]
    fn churn_creates_schedules_restarts_and_deletes_pods() {
        let mut s = Store::new(100_000);
        seed_cluster(&mut s, 20, 5).unwrap();
        let start = s.rev();
        let mut c = Churner {
            pending: Default::default(),
            rng: SmallRng::seed_from_u64(5),
            target: 20,
            counter: 0,
        };
        for _ in 0..400 {
            c.step(&mut s);
        }
        let (changes, _) = s.changes_after(start, 100_000).unwrap();
        let pods: Vec<_> = changes.iter().filter(|c| c.res == PODS).collect();
        let has = |k: EventKind| pods.iter().any(|c| c.kind == k);
        assert!(has(EventKind::Added) && has(EventKind::Deleted));
        let scheduled = pods.iter().any(|c| {
            c.kind == EventKind::Modified
                && c.prev.as_ref().is_some_and(|p| p.phase == "Pending")
                && c.obj.phase == "Running"
        });
        assert!(scheduled, "Pending → Running");
        let restarted = pods.iter().any(|c| {
            c.obj.value()["status"]["containerStatuses"][0]["restartCount"].as_i64() > Some(0)
        });
        assert!(restarted);
        for res in [CONFIGMAPS, DEPLOYMENTS, WIDGETS] {
            assert!(changes.iter().any(|c| c.res == res), "churn touches {res}");
        }
    }

    #[test]
    fn seeding_and_churn_are_deterministic() {
        let run = || {
            let mut s = Store::new(10_000);
            seed_cluster(&mut s, 50, 7).unwrap();
            let mut c = Churner {
                pending: Default::default(),
                rng: SmallRng::seed_from_u64(7),
                target: 50,
                counter: 0,
            };
            for _ in 0..500 {
                c.step(&mut s);
            }
            let names: Vec<String> = s.keys(PODS).map(str::to_string).collect();
            (s.rev(), names)
        };
        let (r1, n1) = run();
        let (r2, n2) = run();
        assert_eq!(r1, r2);
        assert_eq!(n1, n2);
        assert!(n1.len() >= 40);
    }
}
