//! The objects every simulated cluster starts with (namespaces, nodes, the widgets CRD,
//! workloads, configmaps, a secret) and the preloaded pods; nothing of it enters the
//! history.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

use super::pods::{suffix, PodSize, NODE_NAMES, WORKLOADS};
use super::resources::{
    CONFIGMAPS, CRDS, DEPLOYMENTS, EVENTS, NAMESPACES, NODES, REPLICASETS, SECRETS, SERVICES,
    WIDGETS,
};
use super::storage::{now_rfc3339, Store};
use super::templates::{to_base36, PodTemplate};

const CRD_WIDGETS: &str = include_str!("ref/crd-widgets.json");

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
    let rs_uids = seed_workloads(store, pods)?;
    seed_widgets(store)?;
    preload_pods(store, &mut rng, pods, &rs_uids, size);
    let rev = store.rev();
    store.compact(rev);
    // The API server's watch caches start at the revision it lists them at.
    store.cache_caught_up(None);
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
/// `pods` is the number of preloaded pods, spread over the workloads in turn: each
/// deployment asks for the replicas it is given, with the status, annotations and
/// conditions its controller would have written, so that turning the controllers on
/// (`super::controllers`) changes nothing until something else does.
fn seed_workloads(store: &mut Store, pods: usize) -> anyhow::Result<Vec<String>> {
    let mut rs_uids = Vec::new();
    let created = now_rfc3339();
    for (w, (ns, app, hash, image, port)) in WORKLOADS.iter().enumerate() {
        let replicas = (pods + WORKLOADS.len() - 1 - w) / WORKLOADS.len();
        // maxSurge 25%, rounded up.
        let max = replicas + replicas.div_ceil(4);
        let sel = json!({"matchLabels": {"app": app}});
        let spec = json!({"containers": [{"name": app, "image": image, "ports": [{"containerPort": port, "protocol": "TCP"}]}]});
        let template = json!({"metadata": {"labels": {"app": app}}, "spec": spec});
        let rs_name = format!("{app}-{hash}");
        let condition = |t: &str, reason: &str, message: &str| json!({"type": t, "status": "True", "lastUpdateTime": created, "lastTransitionTime": created, "reason": reason, "message": message});
        let counts = |v: &mut Value, keys: &[&str]| {
            for k in keys {
                if replicas > 0 {
                    v[*k] = json!(replicas);
                }
            }
        };
        let mut d_status = json!({"observedGeneration": 1});
        counts(
            &mut d_status,
            &[
                "replicas",
                "updatedReplicas",
                "readyReplicas",
                "availableReplicas",
            ],
        );
        d_status["conditions"] = json!([
            condition(
                "Available",
                "MinimumReplicasAvailable",
                "Deployment has minimum availability."
            ),
            condition(
                "Progressing",
                "NewReplicaSetAvailable",
                &format!("ReplicaSet \"{rs_name}\" has successfully progressed.")
            ),
        ]);
        let d_uid = create(
            store,
            DEPLOYMENTS,
            json!({"metadata": {"name": app, "namespace": ns, "labels": {"app": app}, "annotations": {"deployment.kubernetes.io/revision": "1"}},
            "spec": {"replicas": replicas, "selector": sel, "template": template, "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600},
            "status": d_status}),
        )?;
        let rs_template =
            json!({"metadata": {"labels": {"app": app, "pod-template-hash": hash}}, "spec": spec});
        let mut rs_status = json!({"replicas": replicas});
        counts(
            &mut rs_status,
            &["fullyLabeledReplicas", "readyReplicas", "availableReplicas"],
        );
        rs_status["observedGeneration"] = json!(1);
        let rs_uid = create(
            store,
            REPLICASETS,
            json!({"metadata": {"name": rs_name, "namespace": ns, "labels": {"app": app, "pod-template-hash": hash},
                "annotations": {"deployment.kubernetes.io/desired-replicas": replicas.to_string(), "deployment.kubernetes.io/max-replicas": max.to_string(), "deployment.kubernetes.io/revision": "1"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": app, "uid": d_uid, "controller": true, "blockOwnerDeletion": true}]},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": app, "pod-template-hash": hash}}, "template": rs_template},
            "status": rs_status}),
        )?;
        create(
            store,
            EVENTS,
            json!({"metadata": {"name": format!("{app}.17f2a9c4e1b3d5a7"), "namespace": ns},
            "involvedObject": {"kind": "Deployment", "namespace": ns, "name": app, "uid": d_uid, "apiVersion": "apps/v1"},
            "reason": "ScalingReplicaSet", "message": format!("Scaled up replica set {rs_name} from 0 to {replicas}"),
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

#[cfg(test)]
mod tests {
    use super::super::resources::PODS;
    use super::*;

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
                (&again.labels, &again.phase, &again.node_name, &again.links),
                (&o.labels, &o.phase, &o.node_name, &o.links)
            );
            assert!(o.links.ready && o.links.controller().is_some());
            assert!(o.json.len() > 2000);
        }
    }
}
