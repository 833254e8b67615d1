//! The fixed set of resources the simulated cluster serves.
//!
//! A resource is identified everywhere in the simulator by its index in [`RESOURCES`]; the
//! discovery documents under `ref/` list exactly these resources (with their singular and
//! short names; a test checks that both agree on kind and scope).

/// One served resource.
#[derive(Debug)]
pub struct ResourceDef {
    pub group: &'static str,
    pub version: &'static str,
    pub plural: &'static str,
    pub kind: &'static str,
    pub namespaced: bool,
    /// Custom resources are encoded from unstructured maps: keys sorted, list items carry
    /// `kind`/`apiVersion`, list metadata always has `continue`.
    pub custom: bool,
    /// Whether `metadata.generation` is maintained.
    pub has_generation: bool,
}

impl ResourceDef {
    /// `v1` or `<group>/<version>`.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `<Kind>List`.
    pub fn list_kind(&self) -> String {
        format!("{}List", self.kind)
    }
}

macro_rules! res {
    ($g:expr, $p:expr, $k:expr, $ns:expr, $custom:expr, $gen:expr) => {
        res!($g, "v1", $p, $k, $ns, $custom, $gen)
    };
    ($g:expr, $v:expr, $p:expr, $k:expr, $ns:expr, $custom:expr, $gen:expr) => {
        ResourceDef {
            group: $g,
            version: $v,
            plural: $p,
            kind: $k,
            namespaced: $ns,
            custom: $custom,
            has_generation: $gen,
        }
    };
}

/// Every served resource; the index is the resource id used by storage.
pub static RESOURCES: &[ResourceDef] = &[
    // group, plural, kind, namespaced, custom, has_generation
    res!("", "pods", "Pod", true, false, false),
    res!("", "services", "Service", true, false, false),
    res!("", "configmaps", "ConfigMap", true, false, false),
    res!("", "secrets", "Secret", true, false, false),
    res!("", "namespaces", "Namespace", false, false, false),
    res!("", "nodes", "Node", false, false, false),
    res!("", "events", "Event", true, false, false),
    res!("apps", "deployments", "Deployment", true, false, true),
    res!("apps", "replicasets", "ReplicaSet", true, false, true),
    res!(
        "apiextensions.k8s.io",
        "customresourcedefinitions",
        "CustomResourceDefinition",
        false,
        false,
        true
    ),
    res!("example.com", "widgets", "Widget", true, true, true),
    res!("apps", "statefulsets", "StatefulSet", true, false, true),
    res!("apps", "daemonsets", "DaemonSet", true, false, true),
    res!("batch", "jobs", "Job", true, false, true),
    res!("batch", "cronjobs", "CronJob", true, false, true),
    res!(
        "networking.k8s.io",
        "ingresses",
        "Ingress",
        true,
        false,
        true
    ),
    res!(
        "discovery.k8s.io",
        "endpointslices",
        "EndpointSlice",
        true,
        false,
        false
    ),
    res!("events.k8s.io", "events", "Event", true, false, false),
    // The kinds kubectl prints with printers of their own, and `all`'s
    // HorizontalPodAutoscaler.
    res!("", "endpoints", "Endpoints", true, false, false),
    res!(
        "",
        "persistentvolumeclaims",
        "PersistentVolumeClaim",
        true,
        false,
        false
    ),
    res!("", "serviceaccounts", "ServiceAccount", true, false, false),
    res!(
        "autoscaling",
        "v2",
        "horizontalpodautoscalers",
        "HorizontalPodAutoscaler",
        true,
        false,
        false
    ),
    res!(
        "policy",
        "poddisruptionbudgets",
        "PodDisruptionBudget",
        true,
        false,
        true
    ),
    res!(
        "rbac.authorization.k8s.io",
        "roles",
        "Role",
        true,
        false,
        false
    ),
    res!(
        "rbac.authorization.k8s.io",
        "rolebindings",
        "RoleBinding",
        true,
        false,
        false
    ),
    res!(
        "rbac.authorization.k8s.io",
        "clusterroles",
        "ClusterRole",
        false,
        false,
        false
    ),
    res!(
        "rbac.authorization.k8s.io",
        "clusterrolebindings",
        "ClusterRoleBinding",
        false,
        false,
        false
    ),
    res!("coordination.k8s.io", "leases", "Lease", true, false, false),
    res!(
        "apiregistration.k8s.io",
        "apiservices",
        "APIService",
        false,
        false,
        false
    ),
    // Kinds kwatch has no printer for: their columns come from the server's Table.
    res!(
        "storage.k8s.io",
        "storageclasses",
        "StorageClass",
        false,
        false,
        false
    ),
    res!(
        "scheduling.k8s.io",
        "priorityclasses",
        "PriorityClass",
        false,
        false,
        false
    ),
    res!(
        "networking.k8s.io",
        "ingressclasses",
        "IngressClass",
        false,
        false,
        true
    ),
    res!(
        "networking.k8s.io",
        "networkpolicies",
        "NetworkPolicy",
        true,
        false,
        true
    ),
    res!("", "resourcequotas", "ResourceQuota", true, false, false),
    res!(
        "",
        "persistentvolumes",
        "PersistentVolume",
        false,
        false,
        false
    ),
];

/// Resource ids of the resources the simulator itself refers to.
pub const PODS: usize = 0;
pub const SERVICES: usize = 1;
pub const CONFIGMAPS: usize = 2;
pub const SECRETS: usize = 3;
pub const NAMESPACES: usize = 4;
pub const NODES: usize = 5;
pub const EVENTS: usize = 6;
pub const DEPLOYMENTS: usize = 7;
pub const REPLICASETS: usize = 8;
pub const CRDS: usize = 9;
pub const WIDGETS: usize = 10;
pub const JOBS: usize = 13;
pub const ENDPOINTSLICES: usize = 16;
pub const EVENTS_K8S_IO: usize = 17;

/// The id of `plural` in `group`/`version`.
pub fn find(group: &str, version: &str, plural: &str) -> Option<usize> {
    RESOURCES
        .iter()
        .position(|r| r.group == group && r.version == version && r.plural == plural)
}

/// Whether the group version is served at all.
pub fn known_group_version(group: &str, version: &str) -> bool {
    RESOURCES
        .iter()
        .any(|r| r.group == group && r.version == version)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_match_the_table() {
        for (id, plural) in [
            (PODS, "pods"),
            (SERVICES, "services"),
            (CONFIGMAPS, "configmaps"),
            (SECRETS, "secrets"),
            (NAMESPACES, "namespaces"),
            (NODES, "nodes"),
            (EVENTS, "events"),
            (DEPLOYMENTS, "deployments"),
            (REPLICASETS, "replicasets"),
            (CRDS, "customresourcedefinitions"),
            (WIDGETS, "widgets"),
            (JOBS, "jobs"),
            (ENDPOINTSLICES, "endpointslices"),
            (EVENTS_K8S_IO, "events"),
        ] {
            assert_eq!(RESOURCES[id].plural, plural);
        }
    }
}
