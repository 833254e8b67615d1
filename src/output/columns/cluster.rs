//! The cluster printers: nodes, namespaces, leases (printers.go) and API services
//! (kube-aggregator).

use serde_json::Value;

use super::format::{none, of_type, str_or_empty};
use super::{and_wide, Column};

pub(super) fn node_columns(wide: bool) -> Vec<Column> {
    let c = Column::new;
    let cols = vec![
        c("STATUS", node_status),
        c("ROLES", node_roles),
        Column::age(),
        c("VERSION", |o, _| {
            none(&o["status"]["nodeInfo"]["kubeletVersion"])
        }),
    ];
    and_wide(cols, wide, || {
        vec![
            c("INTERNAL-IP", |o, _| node_address(o, "InternalIP")),
            c("OS-IMAGE", |o, _| none(&o["status"]["nodeInfo"]["osImage"])),
        ]
    })
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

fn node_status(o: &Value, _: jiff::Timestamp) -> String {
    let ready = of_type(&o["status"]["conditions"], "Ready");
    let mut s = match ready.and_then(|c| c["status"].as_str()) {
        Some("True") => "Ready".to_owned(),
        _ => "NotReady".to_owned(),
    };
    if o["spec"]["unschedulable"] == true {
        s.push_str(",SchedulingDisabled");
    }
    s
}

fn node_roles(o: &Value, _: jiff::Timestamp) -> String {
    let roles: Vec<&str> = o["metadata"]["labels"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, _)| k.strip_prefix("node-role.kubernetes.io/"))
        .filter(|r| !r.is_empty())
        .collect();
    if roles.is_empty() {
        "<none>".into()
    } else {
        roles.join(",")
    }
}

fn node_address(o: &Value, kind: &str) -> String {
    of_type(&o["status"]["addresses"], kind)
        .and_then(|a| a["address"].as_str())
        .map_or("<none>".into(), str::to_owned)
}
