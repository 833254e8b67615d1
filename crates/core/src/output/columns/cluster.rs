//! The cluster printers: nodes, namespaces, leases, and (for the server's Tables only)
//! priority classes and resource quotas (printers.go); API services (kube-aggregator).

use serde_json::Value;

use super::column::{and_wide, Column};
use super::format::{int, none, of_type, quantity, str_or_empty};

pub(super) fn node_columns(wide: bool) -> Vec<Column> {
    let c = Column::new;
    let cols = vec![
        c("STATUS", node_status),
        c("ROLES", node_roles),
        Column::age(),
        c("VERSION", |o, _| {
            str_or_empty(&o["status"]["nodeInfo"]["kubeletVersion"])
        }),
    ];
    and_wide(cols, wide, || {
        vec![
            c("INTERNAL-IP", |o, _| node_address(o, "InternalIP")),
            c("EXTERNAL-IP", |o, _| node_address(o, "ExternalIP")),
            c("OS-IMAGE", |o, _| node_info(o, "osImage")),
            c("KERNEL-VERSION", |o, _| node_info(o, "kernelVersion")),
            c("CONTAINER-RUNTIME", |o, _| {
                node_info(o, "containerRuntimeVersion")
            }),
        ]
    })
}

/// A field of `status.nodeInfo` as printers.go `printNode` prints it: `<unknown>` when
/// empty.
fn node_info(o: &Value, field: &str) -> String {
    match o["status"]["nodeInfo"][field].as_str() {
        Some(s) if !s.is_empty() => s.to_owned(),
        _ => "<unknown>".into(),
    }
}

pub(super) fn namespace_columns(_wide: bool) -> Vec<Column> {
    vec![
        Column::new("STATUS", |o, _| none(&o["status"]["phase"])),
        Column::age(),
    ]
}

/// printers.go `printLease`: the holder, empty when none.
pub(super) fn lease_columns(_wide: bool) -> Vec<Column> {
    vec![
        Column::new("HOLDER", |o, _| str_or_empty(&o["spec"]["holderIdentity"])),
        Column::age(),
    ]
}

/// kube-aggregator's apiservice `ConvertToTable`: SERVICE is `namespace/name` or
/// `Local`; AVAILABLE the Available condition's status, with `(reason)` unless True,
/// `Unknown` without the condition.
pub(super) fn apiservice_columns(_wide: bool) -> Vec<Column> {
    vec![
        Column::new("SERVICE", |o, _| {
            let s = &o["spec"]["service"];
            if s.is_object() {
                format!(
                    "{}/{}",
                    str_or_empty(&s["namespace"]),
                    str_or_empty(&s["name"])
                )
            } else {
                "Local".into()
            }
        }),
        Column::new("AVAILABLE", |o, _| {
            let cond = of_type(&o["status"]["conditions"], "Available");
            let Some(c) = cond else {
                return "Unknown".into();
            };
            let status = str_or_empty(&c["status"]);
            match c["reason"].as_str() {
                Some(r) if status != "True" && !r.is_empty() => format!("{status} ({r})"),
                _ => status,
            }
        }),
        Column::age(),
    ]
}

/// printers.go `printNode`: the Ready condition (the last of its type, as its map of
/// conditions keeps it) as `Ready` or `NotReady`, `Unknown` without one.
fn node_status(o: &Value, _: jiff::Timestamp) -> String {
    let ready = o["status"]["conditions"]
        .as_array()
        .and_then(|a| a.iter().rev().find(|c| c["type"] == "Ready"));
    let mut s = match ready.map(|c| c["status"] == "True") {
        Some(true) => "Ready".to_owned(),
        Some(false) => "NotReady".to_owned(),
        None => "Unknown".to_owned(),
    };
    if o["spec"]["unschedulable"] == true {
        s.push_str(",SchedulingDisabled");
    }
    s
}

/// printers.go `findNodeRoles`: the names after `node-role.kubernetes.io/` and the value
/// of `kubernetes.io/role`, sorted and unique.
fn node_roles(o: &Value, _: jiff::Timestamp) -> String {
    let roles: std::collections::BTreeSet<&str> = o["metadata"]["labels"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| match k.strip_prefix("node-role.kubernetes.io/") {
            Some(role) => Some(role),
            None if k == "kubernetes.io/role" => v.as_str(),
            None => None,
        })
        .filter(|r| !r.is_empty())
        .collect();
    if roles.is_empty() {
        "<none>".into()
    } else {
        roles.into_iter().collect::<Vec<_>>().join(",")
    }
}

fn node_address(o: &Value, kind: &str) -> String {
    of_type(&o["status"]["addresses"], kind)
        .and_then(|a| a["address"].as_str())
        .map_or("<none>".into(), str::to_owned)
}

/// printers.go `printPriorityClass`: the value, whether it is the global default, and the
/// preemption policy (empty when unset).
pub(super) fn priorityclass_columns(wide: bool) -> Vec<Column> {
    let c = Column::new;
    let cols = vec![
        c("VALUE", |o, _| int(&o["value"])),
        c("GLOBAL-DEFAULT", |o, _| {
            o["globalDefault"].as_bool().unwrap_or(false).to_string()
        }),
        Column::age(),
    ];
    and_wide(cols, wide, || {
        vec![c("PREEMPTIONPOLICY", |o, _| {
            str_or_empty(&o["preemptionPolicy"])
        })]
    })
}

/// printers.go `printResourceQuota` (Kubernetes 1.32: AGE before REQUEST and LIMIT).
pub(super) fn resourcequota_columns(_wide: bool) -> Vec<Column> {
    vec![
        Column::age(),
        Column::new("REQUEST", |o, _| quota_usage(o, false)),
        Column::new("LIMIT", |o, _| quota_usage(o, true)),
    ]
}

/// `name: used/hard` for each resource of `status.hard` (sorted by name; `used` is 0 when
/// absent), joined by `, `: those named `limits.*` with `limits`, the others without.
fn quota_usage(o: &Value, limits: bool) -> String {
    let status = &o["status"];
    let mut names: Vec<&String> = status["hard"]
        .as_object()
        .into_iter()
        .flat_map(|m| m.keys())
        .filter(|n| n.starts_with("limits.") == limits)
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|n| {
            let used = quantity(&status["used"][n.as_str()]);
            format!("{n}: {used}/{}", quantity(&status["hard"][n.as_str()]))
        })
        .collect::<Vec<_>>()
        .join(", ")
}
