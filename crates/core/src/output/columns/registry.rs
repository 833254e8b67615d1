//! The registry of kubectl's printers: which columns for which resource (`BUILTIN`,
//! [`has_printer`], [`resource_columns`]), and [`ServerPrinter`], the same columns as
//! kube-apiserver's Table rows.

use serde_json::Value;

use crate::client::target::Resource;

use super::cluster::{
    apiservice_columns, lease_columns, namespace_columns, node_columns, priorityclass_columns,
    resourcequota_columns,
};
use super::column::{and_wide, Column, Getter};
use super::crd::{crd_value, PrinterColumn};
use super::events::event_columns;
use super::format::SERVER_AGES;
use super::network::{
    endpoints_columns, endpointslice_columns, ingress_columns, ingressclass_columns,
    networkpolicy_columns, service_columns,
};
use super::pod::{PodColumn, PodView};
use super::rbac::{rolebinding_columns, serviceaccount_columns};
use super::storage::{
    configmap_columns, pv_columns, pvc_columns, secret_columns, storageclass_columns,
    storageclass_name,
};
use super::workloads::{
    cronjob_columns, daemonset_columns, deployment_columns, hpa_columns, job_columns, pdb_columns,
    replicaset_columns, statefulset_columns,
};

/// The API group of a resource (`""` for the core group).
pub fn group(r: &Resource) -> &str {
    r.api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

/// kubectl's printers for the built-in kinds: (API group, kind) → the columns, given
/// whether `-o wide` asked for its extra ones.
type Printer = fn(bool) -> Vec<Column>;

pub(super) const BUILTIN: &[(&str, &str, Printer)] = &[
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

/// printers.go's printers of the kinds kwatch shows through the server's Table
/// ([`has_printer`] is false for them: no capture of a genuine server's Tables checks
/// them): only [`ServerPrinter`] prints them, for the simulator's Tables.
const TABLE_ONLY: &[(&str, &str, Printer)] = &[
    ("", "PersistentVolume", pv_columns),
    ("", "ResourceQuota", resourcequota_columns),
    ("storage.k8s.io", "StorageClass", storageclass_columns),
    ("scheduling.k8s.io", "PriorityClass", priorityclass_columns),
    ("networking.k8s.io", "IngressClass", ingressclass_columns),
    ("networking.k8s.io", "NetworkPolicy", networkpolicy_columns),
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

/// The Go type of a printers.go cell that is not a string: `int64` (a JSON number in the
/// server's Table) or `bool`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CellType {
    Int,
    Bool,
}

/// The columns whose cells printers.go appends to `row.Cells` as an `int64` or a `bool`
/// (whatever type the column definition declares: `Data` is a `string` column of
/// int64 cells, `Suspend` a `boolean` one of strings), by API group, kind and header;
/// every other printer cell is a string.
const TYPED_CELLS: &[(&str, &str, CellType, &[&str])] = &[
    ("", "ConfigMap", CellType::Int, &["DATA"]),
    ("", "Secret", CellType::Int, &["DATA"]),
    ("", "ServiceAccount", CellType::Int, &["SECRETS"]),
    ("", "Event", CellType::Int, &["COUNT"]),
    ("events.k8s.io", "Event", CellType::Int, &["COUNT"]),
    (
        "apps",
        "Deployment",
        CellType::Int,
        &["UP-TO-DATE", "AVAILABLE"],
    ),
    (
        "apps",
        "ReplicaSet",
        CellType::Int,
        &["DESIRED", "CURRENT", "READY"],
    ),
    (
        "apps",
        "DaemonSet",
        CellType::Int,
        &["DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE"],
    ),
    ("batch", "CronJob", CellType::Int, &["ACTIVE"]),
    (
        "autoscaling",
        "HorizontalPodAutoscaler",
        CellType::Int,
        &["MAXPODS", "REPLICAS"],
    ),
    (
        "policy",
        "PodDisruptionBudget",
        CellType::Int,
        &["ALLOWED DISRUPTIONS"],
    ),
    (
        "scheduling.k8s.io",
        "PriorityClass",
        CellType::Int,
        &["VALUE"],
    ),
    (
        "scheduling.k8s.io",
        "PriorityClass",
        CellType::Bool,
        &["GLOBAL-DEFAULT"],
    ),
    (
        "storage.k8s.io",
        "StorageClass",
        CellType::Bool,
        &["ALLOWVOLUMEEXPANSION"],
    ),
];

/// kube-apiserver's rows of one kind's Table (`as=Table`), made from this module's
/// printers: the server prints every Table with `Wide: true`, so a row has a cell for
/// each of the printer's columns, the name's among them, each of the JSON type the
/// server's printer gives it (see `TYPED_CELLS`; a custom resource's as
/// apiextensions-apiserver's table convertor types them). Dates are the server's
/// strings: ages (`5m`) and `Created At` (RFC 3339).
pub struct ServerPrinter {
    columns: Vec<(Column, Option<CellType>)>,
    /// Whether the printer's columns hold the name (an event's, last); else the row
    /// starts with it.
    names_itself: bool,
    /// A StorageClass's name cell says whether it is the default class.
    storage_class: bool,
}

impl ServerPrinter {
    /// The printer of `kind` in the API `group`: with `crd` (the served version's
    /// additionalPrinterColumns, [`PrinterColumn::from_crd`]) a custom resource's, else
    /// printers.go's for a built-in kind, else apiserver's default table convertor's
    /// (Name, Created At).
    pub fn new(group: &str, kind: &str, crd: Option<&[PrinterColumn]>) -> ServerPrinter {
        let printer = BUILTIN
            .iter()
            .chain(TABLE_ONLY)
            .find(|(g, k, _)| (*g, *k) == (group, kind))
            .map(|(_, _, p)| *p);
        let columns = match (crd, printer) {
            (Some(pc), _) => crd_columns(pc, true),
            (None, Some(printer)) => printer(true),
            (None, None) => created_at_columns(true),
        };
        let typed = |header: &str| {
            TYPED_CELLS
                .iter()
                .find(|(g, k, _, hs)| (*g, *k) == (group, kind) && hs.contains(&header))
                .map(|(_, _, t, _)| *t)
        };
        ServerPrinter {
            names_itself: crd.is_none() && columns.iter().any(|c| c.header == "NAME"),
            storage_class: crd.is_none() && (group, kind) == ("storage.k8s.io", "StorageClass"),
            columns: columns
                .into_iter()
                .map(|c| {
                    let t = typed(&c.header);
                    (c, t)
                })
                .collect(),
        }
    }

    /// The headers of a row's cells, as kwatch spells them (NAME first, unless the
    /// printer places it).
    pub fn headers(&self) -> Vec<&str> {
        let name = (!self.names_itself).then_some("NAME");
        name.into_iter()
            .chain(self.columns.iter().map(|(c, _)| c.header.as_str()))
            .collect()
    }

    /// The cells of `obj`'s row at `now`, in [`ServerPrinter::headers`]' order.
    pub fn row(&self, obj: &Value, now: jiff::Timestamp) -> Vec<Value> {
        let _server_ages = ServerAges::on();
        let created = obj["metadata"]["creationTimestamp"].as_str();
        let pod = self
            .columns
            .iter()
            .any(|(c, _)| matches!(c.get, Getter::Pod(_)))
            .then(|| PodView::from_value(obj));
        let mut cells = Vec::with_capacity(self.columns.len() + 1);
        if !self.names_itself {
            let name = super::format::str_or_empty(&obj["metadata"]["name"]);
            cells.push(Value::String(match self.storage_class {
                true => storageclass_name(obj, name),
                false => name,
            }));
        }
        for (c, ty) in &self.columns {
            let text = match (&c.get, &pod) {
                (Getter::Path { template, kind }, _) => {
                    cells.push(crd_value(kind, template.values(obj).first(), now));
                    continue;
                }
                (Getter::Pod(p), Some(view)) => p.cell(view, now),
                _ => c.cell(obj, created, now),
            };
            cells.push(match ty {
                Some(CellType::Int) => text.parse::<i64>().map_or(Value::String(text), Value::from),
                Some(CellType::Bool) => match text.as_str() {
                    "true" => Value::Bool(true),
                    "false" => Value::Bool(false),
                    _ => Value::String(text),
                },
                None => Value::String(text),
            });
        }
        cells
    }
}

/// Sets [`SERVER_AGES`] for as long as it lives.
struct ServerAges(bool);

impl ServerAges {
    fn on() -> ServerAges {
        ServerAges(SERVER_AGES.replace(true))
    }
}

impl Drop for ServerAges {
    fn drop(&mut self) {
        SERVER_AGES.set(self.0);
    }
}

/// The columns after NAME and RESOURCEVERSION under `--metadata-only`, for any resource:
/// a PartialObjectMetadata holds none of the fields the resource's printer reads.
pub fn metadata_columns() -> Vec<Column> {
    vec![Column::age()]
}

/// The headers of `--follow`'s tree under which each row shows its own kind's cell.
const TREE_OWN_KIND: [&str; 2] = ["READY", "STATUS"];

/// The columns after NAME and RESOURCEVERSION of `--follow`'s tree, one table of rows of
/// several kinds: READY and STATUS, each row's the cell its own kind's printer prints under
/// that header ([`own_kind_columns`]; empty for a kind without one), then AGE.
///
/// kubectl prints each kind with its own printer's columns, in a block of its own; a tree
/// has one header over rows of every kind, so it shows under headers they share the cells
/// that say whether the object works (a Deployment's and a StatefulSet's READY `2/3`, a
/// ReplicaSet's ready count, a Pod's READY `1/1` and STATUS `CrashLoopBackOff`, a Job's
/// STATUS), as kubectl-tree shows READY and REASON. The union of the kinds' columns would
/// be a dozen, mostly empty on each row; each kind's full columns are `kubectl get`'s.
pub fn tree_columns() -> Vec<Column> {
    let own = TREE_OWN_KIND.iter().map(|h| Column {
        header: (*h).to_owned(),
        get: Getter::OwnKind,
    });
    own.chain([Column::age()]).collect()
}

/// `cols` for a row of resource `r` in the tree: each [`Getter::OwnKind`] column replaced
/// by the column of that header among those `r`'s rows get in a table of their own (the
/// server's Table's the object came in, `server`, else kubectl's printer or a custom
/// resource's additionalPrinterColumns, `crd`), the others as they are.
pub fn own_kind_columns(
    cols: &[Column],
    r: &Resource,
    crd: Option<&[PrinterColumn]>,
    server: Option<&[crate::cache::object::TableColumn]>,
) -> Vec<Column> {
    let own = match server.filter(|s| !s.is_empty()) {
        Some(defs) => super::server_table::server_columns(defs, false),
        None => resource_columns(r, false, crd),
    };
    cols.iter()
        .map(|c| match c.get {
            Getter::OwnKind => own
                .iter()
                .find(|o| o.header == c.header)
                .cloned()
                .unwrap_or_else(|| c.clone()),
            _ => c.clone(),
        })
        .collect()
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

/// kubectl's pod printer.
fn pod_columns(wide: bool) -> Vec<Column> {
    let cols = vec![
        Column::pod(PodColumn::Ready, "READY"),
        Column::pod(PodColumn::Status, "STATUS"),
        Column::pod(PodColumn::Restarts, "RESTARTS"),
        Column::age(),
    ];
    and_wide(cols, wide, || {
        vec![
            Column::pod(PodColumn::Ip, "IP"),
            Column::pod(PodColumn::Node, "NODE"),
            Column::pod(PodColumn::Nominated, "NOMINATED NODE"),
            Column::pod(PodColumn::ReadinessGates, "READINESS GATES"),
        ]
    })
}

/// A custom resource's additionalPrinterColumns (`priority > 0` only when `wide`), or AGE
/// when the CRD declares none.
fn crd_columns(pc: &[PrinterColumn], wide: bool) -> Vec<Column> {
    if pc.is_empty() {
        return vec![Column::age()];
    }
    pc.iter()
        .filter(|p| wide || p.priority == 0)
        .map(|p| Column {
            header: p.name.clone(),
            get: Getter::Path {
                template: p.template.clone(),
                kind: p.kind.clone(),
            },
        })
        .collect()
}
