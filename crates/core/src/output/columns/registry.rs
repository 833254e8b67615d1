//! The column type ([`Column`]), the registry of kubectl's printers (`BUILTIN`, [`has_printer`], [`resource_columns`]), `-L`/`--show-labels`, the once-per-row parse ([`RowObject`]) and [`ServerPrinter`].

use std::cell::Cell;
use std::marker::PhantomData;
use std::time::Duration;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use crate::output::template::Template;
use crate::output::Resource;

pub(crate) use crate::text::human_duration;

use super::cluster::{
    apiservice_columns, lease_columns, namespace_columns, node_columns, priorityclass_columns,
    resourcequota_columns,
};
use super::crd::PrinterColumn;
use super::crd::{crd_cell, crd_columns, crd_value};
use super::events::event_columns;
use super::network::{
    endpoints_columns, endpointslice_columns, ingress_columns, ingressclass_columns,
    networkpolicy_columns, service_columns,
};
use super::pod::PodColumn;
use super::pod::{pod_columns, PodView};
use super::rbac::{rolebinding_columns, serviceaccount_columns};
use super::storage::{
    configmap_columns, pv_columns, pvc_columns, secret_columns, storageclass_columns,
    storageclass_name,
};
use super::workloads::{
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
    pub(super) fn new(header: &str, f: fn(&Value, jiff::Timestamp) -> String) -> Column {
        Column {
            header: header.into(),
            get: Getter::Builtin(f),
        }
    }

    pub(super) fn age() -> Column {
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
            Getter::Path { template, kind } => crd_cell(kind, template.values(v).first(), now),
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
    since(now.as_second().saturating_sub(t.as_second()))
}

thread_local! {
    /// Set while a [`ServerPrinter`] prints a row: see [`since`].
    static SERVER_AGES: Cell<bool> = const { Cell::new(false) };
}

/// A duration of `secs` seconds as apimachinery's `duration.HumanDuration` prints it.
/// A negative one is clock skew: kwatch's own columns print it as `0s`; in a server's
/// Table ([`ServerPrinter`]) it is `0s` down to a second and `<invalid>` beyond, as
/// `HumanDuration` prints it.
pub(super) fn since(secs: i64) -> String {
    if secs < -1 && SERVER_AGES.get() {
        return "<invalid>".into();
    }
    human_duration(Duration::from_secs(secs.max(0).unsigned_abs()))
}

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

/// `cols`, then `extra()` when `wide`.
pub(super) fn and_wide(
    mut cols: Vec<Column>,
    wide: bool,
    extra: impl FnOnce() -> Vec<Column>,
) -> Vec<Column> {
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
        RowObject::parse_cut(cols, raw, true)
    }

    /// [`RowObject::parse`] of an object, its managedFields left out by the span its
    /// metadata's reading found (copied into `scratch` without them) when no column may
    /// read them: kubectl's printers never do, and they are often half the bytes.
    pub fn of(
        cols: &[Column],
        obj: Option<&'a crate::cache::object::Object>,
        scratch: &'a mut String,
    ) -> RowObject<'a> {
        let Some(o) = obj else {
            return RowObject::Unparsed;
        };
        let raw = o.raw();
        if typed(cols) && cols.iter().any(Column::needs_value) {
            // A pod's view reads a few members: read where they are, else copied for serde.
            if let Some(p) = PodView::read(raw, o.managed_fields_span()) {
                return RowObject::Pod(p);
            }
            if super::pod::project(raw, scratch) {
                let projected: &'a String = scratch;
                return match PodView::parse(projected) {
                    Some(p) => RowObject::Pod(p),
                    None => RowObject::parse_cut(cols, Some(raw), true),
                };
            }
        }
        if !reads_managed_fields(cols) && cols.iter().any(Column::needs_value) {
            if let Some((start, end)) = o.managed_fields_span() {
                scratch.clear();
                scratch.push_str(&raw[..start]);
                scratch.push_str(&raw[end..]);
                return RowObject::parse_cut(cols, Some(scratch), false);
            }
        }
        RowObject::parse_cut(cols, Some(raw), true)
    }

    /// `cut`: managedFields may still be there, to be cut before a [`Value`] is parsed.
    fn parse_cut(cols: &[Column], raw: Option<&'a str>, cut: bool) -> RowObject<'a> {
        let Some(raw) = raw.filter(|_| cols.iter().any(Column::needs_value)) else {
            return RowObject::Unparsed;
        };
        if typed(cols) {
            if let Some(p) = PodView::parse(raw) {
                return RowObject::Pod(p);
            }
        }
        // kubectl's printers never read managedFields (often half an object's bytes): they
        // are cut out before parsing, unless a custom resource's or the server's column
        // may name them.
        let cut = if cut && !reads_managed_fields(cols) {
            crate::output::without_managed_fields(raw)
        } else {
            None
        };
        let raw = cut.as_deref().unwrap_or(raw);
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

/// Whether every column can read a [`PodView`].
fn typed(cols: &[Column]) -> bool {
    cols.iter().all(|c| {
        matches!(
            c.get,
            Getter::Age | Getter::Pod(_) | Getter::Label(_) | Getter::Labels | Getter::Server(_)
        )
    })
}

/// Whether a column may read `metadata.managedFields`: a custom resource's printer
/// column (any JSONPath) or the server's cell; kubectl's printers never do.
fn reads_managed_fields(cols: &[Column]) -> bool {
    cols.iter()
        .any(|c| matches!(c.get, Getter::Path { .. } | Getter::Server(_)))
}

/// String labels in the order a [`Value`] map keeps them: a repeated key keeps its first
/// place and takes its last value.
#[derive(Debug)]
pub(super) struct Labels<'a>(pub(super) Vec<(&'a str, &'a str)>);

impl<'a> Labels<'a> {
    /// The labels of a [`Value`]: a value that is not a string reads as empty, as
    /// `-L` and `--show-labels` print it.
    pub(super) fn from_value(v: &'a Value) -> Option<Labels<'a>> {
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
