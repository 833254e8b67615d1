//! The resource columns of the table, as `kubectl get` prints them: built-in printers
//! for the common kinds (one file per kind family), a custom resource's
//! additionalPrinterColumns (`crd.rs`), the server's Table (`server_table.rs`), else AGE
//! alone. Here: the column type, the registry of printers (`BUILTIN`, `has_printer`,
//! `resource_columns`), `-L`/`--show-labels` and the once-per-row parse ([`RowObject`]).
//! Each column turns an object (parsed once per row, only when a column needs it) into
//! one cell.

use std::marker::PhantomData;
use std::time::Duration;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use super::template::Template;
use super::Resource;

mod cluster;
mod crd;
mod events;
mod format;
#[cfg(test)]
mod genuine;
mod network;
mod pod;
mod rbac;
mod server_table;
mod storage;
#[cfg(test)]
mod tests;
mod workloads;

pub(crate) use crate::text::human_duration;
pub use crd::PrinterColumn;
pub use format::go_value;
pub use pod::PodColumn;
pub use server_table::{server_cell, server_columns};
pub use storage::access_modes;

use cluster::{apiservice_columns, lease_columns, namespace_columns, node_columns};
use crd::{crd_cell, crd_columns};
use events::event_columns;
use network::{endpoints_columns, endpointslice_columns, ingress_columns, service_columns};
use pod::{pod_columns, PodView};
use rbac::{rolebinding_columns, serviceaccount_columns};
use storage::{configmap_columns, pvc_columns, secret_columns};
use workloads::{
    cronjob_columns, daemonset_columns, deployment_columns, hpa_columns, job_columns, pdb_columns,
    replicaset_columns, statefulset_columns,
};

/// How a column gets its cell.
#[derive(Debug, Clone)]
pub enum Getter {
    /// From metadata.creationTimestamp (needs no parse of the object).
    Age,
    Builtin(fn(&Value, jiff::Timestamp) -> String),
    /// A pod column: from the row's [`PodView`], or the view of the [`Value`].
    Pod(PodColumn),
    /// A CRD printer column: the first value at the path, as kube-apiserver's table
    /// convertor turns it into a cell of the column's `type`.
    Path {
        template: Template,
        kind: String,
    },
    /// The cell at this index of the row of the server's Table the object came in.
    Server(usize),
    /// `-L KEY`.
    Label(String),
    /// `--show-labels`.
    Labels,
}

#[derive(Debug, Clone)]
pub struct Column {
    pub header: String,
    pub get: Getter,
}

impl Column {
    fn new(header: &str, f: fn(&Value, jiff::Timestamp) -> String) -> Column {
        Column {
            header: header.into(),
            get: Getter::Builtin(f),
        }
    }

    fn age() -> Column {
        Column {
            header: "AGE".into(),
            get: Getter::Age,
        }
    }

    /// Whether the cell needs the object parsed.
    pub fn needs_value(&self) -> bool {
        !matches!(self.get, Getter::Age | Getter::Server(_))
    }

    /// The cell for `v` (Null when no column needs the object) at `now`.
    pub fn cell(&self, v: &Value, created: Option<&str>, now: jiff::Timestamp) -> String {
        match &self.get {
            Getter::Age => age(created, now),
            Getter::Builtin(f) => f(v, now),
            Getter::Pod(p) => p.cell(&PodView::from_value(v), now),
            Getter::Path { template, kind } => {
                crd_cell(kind, template.values(v).first().copied(), now)
            }
            Getter::Label(k) => {
                label_cell(Labels::from_value(&v["metadata"]["labels"]).as_ref(), k)
            }
            Getter::Labels => labels_cell(Labels::from_value(&v["metadata"]["labels"]).as_ref()),
            // Read from the row's cells by the table ([`server_cell`]), never from `v`.
            Getter::Server(_) => String::new(),
        }
    }
}

/// kubectl's age of a timestamp: `<unknown>` when absent or unparsable.
pub fn age(created: Option<&str>, now: jiff::Timestamp) -> String {
    let Some(t) = created.and_then(|c| c.parse::<jiff::Timestamp>().ok()) else {
        return "<unknown>".into();
    };
    let secs = now.as_second().saturating_sub(t.as_second()).max(0);
    human_duration(Duration::from_secs(secs.unsigned_abs()))
}

/// The API group of a resource (`""` for the core group).
pub fn group(r: &Resource) -> &str {
    r.api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

/// kubectl's printers for the built-in kinds: (API group, kind) → the columns, given
/// whether `-o wide` asked for its extra ones.
type Printer = fn(bool) -> Vec<Column>;

const BUILTIN: &[(&str, &str, Printer)] = &[
    ("", "Pod", pod_columns),
    ("apps", "Deployment", deployment_columns),
    ("apps", "ReplicaSet", replicaset_columns),
    ("apps", "StatefulSet", statefulset_columns),
    ("apps", "DaemonSet", daemonset_columns),
    ("batch", "Job", job_columns),
    ("batch", "CronJob", cronjob_columns),
    ("networking.k8s.io", "Ingress", ingress_columns),
    ("discovery.k8s.io", "EndpointSlice", endpointslice_columns),
    ("", "Service", service_columns),
    ("", "Node", node_columns),
    ("", "Namespace", namespace_columns),
    ("", "ConfigMap", configmap_columns),
    ("", "Secret", secret_columns),
    ("", "Event", event_columns::<false>),
    ("events.k8s.io", "Event", event_columns::<true>),
    ("", "Endpoints", endpoints_columns),
    ("", "PersistentVolumeClaim", pvc_columns),
    ("", "ServiceAccount", serviceaccount_columns),
    ("autoscaling", "HorizontalPodAutoscaler", hpa_columns),
    ("policy", "PodDisruptionBudget", pdb_columns),
    (
        "rbac.authorization.k8s.io",
        "RoleBinding",
        rolebinding_columns,
    ),
    (
        "rbac.authorization.k8s.io",
        "ClusterRoleBinding",
        rolebinding_columns,
    ),
    ("rbac.authorization.k8s.io", "Role", created_at_columns),
    (
        "rbac.authorization.k8s.io",
        "ClusterRole",
        created_at_columns,
    ),
    (
        "apiextensions.k8s.io",
        "CustomResourceDefinition",
        created_at_columns,
    ),
    ("coordination.k8s.io", "Lease", lease_columns),
    ("apiregistration.k8s.io", "APIService", apiservice_columns),
];

/// Whether kwatch has a printer of its own for `r`'s kind (else the table shows the
/// server's Table, or a custom resource's printer columns).
pub fn has_printer(r: &Resource) -> bool {
    let kind = (group(r), r.kind.as_str());
    BUILTIN.iter().any(|(g, k, _)| (*g, *k) == kind)
}

/// The columns after NAME and RESOURCEVERSION for `r`: kubectl's for the built-ins it
/// knows, `crd`'s printer columns for a custom resource, else AGE. Never empty.
pub fn resource_columns(r: &Resource, wide: bool, crd: Option<&[PrinterColumn]>) -> Vec<Column> {
    let kind = (group(r), r.kind.as_str());
    let mut cols = match BUILTIN.iter().find(|(g, k, _)| (*g, *k) == kind) {
        Some((_, _, printer)) => printer(wide),
        None => crd_columns(crd.unwrap_or_default(), wide),
    };
    if cols.is_empty() {
        cols.push(Column::age());
    }
    cols
}

/// The columns after NAME and RESOURCEVERSION under `--metadata-only`, for any resource:
/// a PartialObjectMetadata holds none of the fields the resource's printer reads.
pub fn metadata_columns() -> Vec<Column> {
    vec![Column::age()]
}

/// `cols`, then `extra()` when `wide`.
fn and_wide(mut cols: Vec<Column>, wide: bool, extra: impl FnOnce() -> Vec<Column>) -> Vec<Column> {
    if wide {
        cols.extend(extra());
    }
    cols
}

/// kube-apiserver's table for a kind without a printer (Role, ClusterRole,
/// CustomResourceDefinition): apiserver's `rest.NewDefaultTableConvertor`, whose
/// `Created At` cell is `creationTimestamp.UTC().Format(time.RFC3339)` (the zero time
/// when absent).
fn created_at_columns(_wide: bool) -> Vec<Column> {
    vec![Column::new("CREATED AT", |o, _| {
        match o["metadata"]["creationTimestamp"]
            .as_str()
            .and_then(|t| t.parse::<jiff::Timestamp>().ok())
        {
            Some(t) => t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
            None => "0001-01-01T00:00:00Z".into(),
        }
    })]
}

/// `-L KEY`: the label's value, empty when absent.
fn label_cell(labels: Option<&Labels<'_>>, key: &str) -> String {
    labels
        .and_then(|l| l.get(key))
        .unwrap_or_default()
        .to_owned()
}

/// `--show-labels`: `k=v` pairs in the object's order, `<none>` without labels.
fn labels_cell(labels: Option<&Labels<'_>>) -> String {
    match labels {
        Some(l) if !l.0.is_empty() => {
            l.0.iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(",")
        }
        _ => "<none>".into(),
    }
}

/// An object parsed for one row: only as much as the row's columns read.
pub enum RowObject<'a> {
    /// No object, or no column reads past metadata.creationTimestamp.
    Unparsed,
    Pod(PodView<'a>),
    Value(Value),
}

impl<'a> RowObject<'a> {
    /// Parses `raw` (an object's JSON) for `cols`: into a [`PodView`] when every column can
    /// read one and the object has the types it expects, else into a [`Value`].
    pub fn parse(cols: &[Column], raw: Option<&'a str>) -> RowObject<'a> {
        let Some(raw) = raw.filter(|_| cols.iter().any(Column::needs_value)) else {
            return RowObject::Unparsed;
        };
        let typed = cols.iter().all(|c| {
            matches!(
                c.get,
                Getter::Age
                    | Getter::Pod(_)
                    | Getter::Label(_)
                    | Getter::Labels
                    | Getter::Server(_)
            )
        });
        if typed {
            if let Some(p) = PodView::parse(raw) {
                return RowObject::Pod(p);
            }
        }
        RowObject::Value(serde_json::from_str(raw).unwrap_or(Value::Null))
    }

    /// `col`'s cell: what [`Column::cell`] gives for the whole object.
    pub fn cell(&self, col: &Column, created: Option<&str>, now: jiff::Timestamp) -> String {
        let p = match self {
            RowObject::Unparsed => return col.cell(&Value::Null, created, now),
            RowObject::Value(v) => return col.cell(v, created, now),
            RowObject::Pod(p) => p,
        };
        match &col.get {
            Getter::Age => age(created, now),
            Getter::Pod(c) => c.cell(p, now),
            Getter::Label(k) => label_cell(p.labels(), k),
            Getter::Labels => labels_cell(p.labels()),
            // RowObject::parse makes a PodView only for the getters above.
            Getter::Builtin(_) | Getter::Path { .. } | Getter::Server(_) => {
                col.cell(&Value::Null, created, now)
            }
        }
    }
}

/// String labels in the order a [`Value`] map keeps them: a repeated key keeps its first
/// place and takes its last value.
#[derive(Debug)]
pub(super) struct Labels<'a>(Vec<(&'a str, &'a str)>);

impl<'a> Labels<'a> {
    /// The labels of a [`Value`]: a value that is not a string reads as empty, as
    /// `-L` and `--show-labels` print it.
    fn from_value(v: &'a Value) -> Option<Labels<'a>> {
        v.as_object().map(|m| {
            Labels(
                m.iter()
                    .map(|(k, v)| (k.as_str(), v.as_str().unwrap_or_default()))
                    .collect(),
            )
        })
    }

    fn get(&self, key: &str) -> Option<&'a str> {
        self.0.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Labels<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Labels<'a>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object of strings")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Labels<'a>, A::Error> {
                let mut pairs: Vec<(&'a str, &'a str)> = Vec::new();
                while let Some((k, v)) = map.next_entry::<&'de str, &'de str>()? {
                    match pairs.iter_mut().find(|(pk, _)| *pk == k) {
                        Some(p) => p.1 = v,
                        None => pairs.push((k, v)),
                    }
                }
                Ok(Labels(pairs))
            }
        }
        d.deserialize_map(V(PhantomData))
    }
}
