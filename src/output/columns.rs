//! The resource columns of the table, as `kubectl get` prints them: built-in printers
//! for the common kinds, a custom resource's additionalPrinterColumns, else AGE alone.
//! Each column turns an object (parsed once per row, only when a column needs it) into
//! one cell. Pod cells come from one set of rules over a [`PodView`]: a typed partial
//! parse of the object when it succeeds (the fast path), else the view of the whole
//! object as a [`Value`] ([`PodView::from_value`]); both give the same cells.

use std::borrow::Cow;
use std::marker::PhantomData;
use std::time::Duration;

use serde::de::value::MapAccessDeserializer;
use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use super::template::Template;
use super::Resource;

/// A CRD's additionalPrinterColumns entry, as read from the CRD object.
#[derive(Debug, Clone, PartialEq)]
pub struct PrinterColumn {
    pub name: String,
    /// `date` columns print as an age.
    pub kind: String,
    pub template: Template,
    /// Columns with priority > 0 appear only with `-o wide`.
    pub priority: i64,
}

impl PrinterColumn {
    /// The additionalPrinterColumns of `version` in a CRD object; invalid entries skipped.
    pub fn from_crd(crd: &Value, version: &str) -> Vec<PrinterColumn> {
        let versions = crd["spec"]["versions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let cols = versions
            .iter()
            .find(|v| v["name"] == version)
            .and_then(|v| v["additionalPrinterColumns"].as_array())
            .cloned()
            .unwrap_or_default();
        cols.iter()
            .filter_map(|c| {
                Some(PrinterColumn {
                    name: c["name"].as_str()?.to_uppercase(),
                    kind: c["type"].as_str().unwrap_or("string").to_owned(),
                    template: Template::parse(c["jsonPath"].as_str()?).ok()?,
                    priority: c["priority"].as_i64().unwrap_or(0),
                })
            })
            .collect()
    }
}

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

/// The columns of a server's Table after its name column (kwatch prints NAME itself):
/// those of priority 0, and with `-o wide` all (kubectl's tableprinter.go `printTable`:
/// `if !options.Wide && column.Priority != 0 { continue }`).
pub fn server_columns(defs: &[crate::cache::object::TableColumn], wide: bool) -> Vec<Column> {
    defs.iter()
        .enumerate()
        .filter(|(i, d)| !(*i == 0 && d.format == "name"))
        .filter(|(_, d)| wide || d.priority == 0)
        .map(|(i, d)| Column {
            header: d.name.to_uppercase(),
            get: Getter::Server(i),
        })
        .collect()
}

/// A cell of a server's Table as kubectl's tableprinter.go prints it: a string up to its
/// first `\f`, `\n` or `\r` followed by `...` when cut there (`appendCellValue`), `null`
/// as nothing, anything else as Go's `fmt.Sprint` of the decoded value (integers int64,
/// other numbers float64). The server formats dates itself (an `Age` cell is `5m`, a
/// `Created At` cell RFC 3339): kubectl's printer does not translate `format: date`.
pub fn server_cell(cell: &Value) -> String {
    match cell {
        Value::Null => String::new(),
        Value::String(s) => match s.find(['\u{c}', '\n', '\r']) {
            Some(at) => format!("{}...", &s[..at]),
            None => s.clone(),
        },
        v => go_value(v),
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

/// kubectl's `duration.HumanDuration`.
pub fn human_duration(d: Duration) -> String {
    let s = d.as_secs();
    let (m, h, days) = (s / 60, s / 3600, s / 86400);
    if s < 120 {
        format!("{s}s")
    } else if m < 10 {
        match s % 60 {
            0 => format!("{m}m"),
            r => format!("{m}m{r}s"),
        }
    } else if h < 3 {
        format!("{m}m")
    } else if h < 8 {
        match m % 60 {
            0 => format!("{h}h"),
            r => format!("{h}h{r}m"),
        }
    } else if h < 48 {
        format!("{h}h")
    } else if h < 24 * 8 {
        match h % 24 {
            0 => format!("{days}d"),
            r => format!("{days}d{r}h"),
        }
    } else if days < 365 * 2 {
        format!("{days}d")
    } else if days < 365 * 8 {
        match days % 365 {
            0 => format!("{}y", days / 365),
            r => format!("{}y{r}d", days / 365),
        }
    } else {
        format!("{}y", days / 365)
    }
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

/// `cols`, then `extra()` when `wide`.
fn and_wide(mut cols: Vec<Column>, wide: bool, extra: impl FnOnce() -> Vec<Column>) -> Vec<Column> {
    if wide {
        cols.extend(extra());
    }
    cols
}

/// The workloads' `-o wide` columns: CONTAINERS, IMAGES and SELECTOR (`selector`).
fn workload_wide(selector: Column) -> Vec<Column> {
    let mut v = containers(false);
    v.push(selector);
    v
}

fn pod_columns(wide: bool) -> Vec<Column> {
    let cols = vec![
        PodColumn::Ready.column("READY"),
        PodColumn::Status.column("STATUS"),
        PodColumn::Restarts.column("RESTARTS"),
        Column::age(),
    ];
    and_wide(cols, wide, || {
        vec![
            PodColumn::Ip.column("IP"),
            PodColumn::Node.column("NODE"),
            PodColumn::Nominated.column("NOMINATED NODE"),
            PodColumn::ReadinessGates.column("READINESS GATES"),
        ]
    })
}

/// `readyReplicas/replicas`, as deployments and statefulsets print READY.
fn ready_of_replicas(o: &Value, _: jiff::Timestamp) -> String {
    format!(
        "{}/{}",
        int(&o["status"]["readyReplicas"]),
        int(&o["spec"]["replicas"])
    )
}

/// SELECTOR as apimachinery's `FormatLabelSelector` prints `.spec.selector`.
fn spec_selector() -> Column {
    Column::new("SELECTOR", |o, _| format_selector(&o["spec"]["selector"]))
}

fn deployment_columns(wide: bool) -> Vec<Column> {
    let c = Column::new;
    let cols = vec![
        c("READY", ready_of_replicas),
        c("UP-TO-DATE", |o, _| int(&o["status"]["updatedReplicas"])),
        c("AVAILABLE", |o, _| int(&o["status"]["availableReplicas"])),
        Column::age(),
    ];
    and_wide(cols, wide, || {
        workload_wide(c("SELECTOR", |o, _| label_selector(&o["spec"]["selector"])))
    })
}

fn replicaset_columns(wide: bool) -> Vec<Column> {
    let c = Column::new;
    let cols = vec![
        c("DESIRED", |o, _| int(&o["spec"]["replicas"])),
        c("CURRENT", |o, _| int(&o["status"]["replicas"])),
        c("READY", |o, _| int(&o["status"]["readyReplicas"])),
        Column::age(),
    ];
    and_wide(cols, wide, || workload_wide(spec_selector()))
}

fn statefulset_columns(wide: bool) -> Vec<Column> {
    let cols = vec![Column::new("READY", ready_of_replicas), Column::age()];
    and_wide(cols, wide, || containers(false))
}

fn daemonset_columns(wide: bool) -> Vec<Column> {
    let c = Column::new;
    let cols = vec![
        c(
            "DESIRED",
            |o, _| int(&o["status"]["desiredNumberScheduled"]),
        ),
        c(
            "CURRENT",
            |o, _| int(&o["status"]["currentNumberScheduled"]),
        ),
        c("READY", |o, _| int(&o["status"]["numberReady"])),
        c("UP-TO-DATE", |o, _| {
            int(&o["status"]["updatedNumberScheduled"])
        }),
        c("AVAILABLE", |o, _| int(&o["status"]["numberAvailable"])),
        c("NODE SELECTOR", |o, _| {
            map_pairs(&o["spec"]["template"]["spec"]["nodeSelector"])
        }),
        Column::age(),
    ];
    and_wide(cols, wide, || workload_wide(spec_selector()))
}

fn job_columns(wide: bool) -> Vec<Column> {
    let c = Column::new;
    let cols = vec![
        c("STATUS", job_status),
        c("COMPLETIONS", job_completions),
        c("DURATION", job_duration),
        Column::age(),
    ];
    and_wide(cols, wide, || workload_wide(spec_selector()))
}

fn cronjob_columns(wide: bool) -> Vec<Column> {
    let c = Column::new;
    let cols = vec![
        c("SCHEDULE", |o, _| str_or_empty(&o["spec"]["schedule"])),
        c("TIMEZONE", |o, _| none(&o["spec"]["timeZone"])),
        c("SUSPEND", |o, _| match o["spec"]["suspend"].as_bool() {
            Some(true) => "True".into(),
            Some(false) => "False".into(),
            None => "<unset>".into(),
        }),
        c("ACTIVE", |o, _| {
            o["status"]["active"]
                .as_array()
                .map_or(0, Vec::len)
                .to_string()
        }),
        c("LAST SCHEDULE", |o, now| {
            match o["status"]["lastScheduleTime"].as_str() {
                Some(t) => age(Some(t), now),
                None => "<none>".into(),
            }
        }),
        Column::age(),
    ];
    and_wide(cols, wide, || {
        let mut v = containers(true);
        v.push(c("SELECTOR", |o, _| {
            format_selector(&o["spec"]["jobTemplate"]["spec"]["selector"])
        }));
        v
    })
}

fn ingress_columns(wide: bool) -> Vec<Column> {
    let c = Column::new;
    vec![
        c("CLASS", |o, _| none(&o["spec"]["ingressClassName"])),
        c("HOSTS", ingress_hosts),
        if wide {
            c("ADDRESS", |o, _| ingress_address(o, true))
        } else {
            c("ADDRESS", |o, _| ingress_address(o, false))
        },
        c("PORTS", |o, _| {
            let tls = o["spec"]["tls"].as_array().is_some_and(|t| !t.is_empty());
            if tls { "80, 443" } else { "80" }.to_owned()
        }),
        Column::age(),
    ]
}

fn endpointslice_columns(_wide: bool) -> Vec<Column> {
    let c = Column::new;
    vec![
        c("ADDRESSTYPE", |o, _| str_or_empty(&o["addressType"])),
        c("PORTS", |o, _| {
            let ports = o["ports"].as_array().map(Vec::as_slice).unwrap_or_default();
            list_with_more(
                ports
                    .iter()
                    .map(|p| match (p["port"].as_i64(), p["name"].as_str()) {
                        (Some(n), _) => n.to_string(),
                        (None, Some(name)) => name.to_owned(),
                        (None, None) => "*".to_owned(),
                    }),
            )
        }),
        c("ENDPOINTS", |o, _| {
            let eps = o["endpoints"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default();
            list_with_more(
                eps.iter()
                    .flat_map(|e| e["addresses"].as_array().into_iter().flatten())
                    .map(|a| a.as_str().unwrap_or_default().to_owned()),
            )
        }),
        Column::age(),
    ]
}

fn service_columns(wide: bool) -> Vec<Column> {
    let c = Column::new;
    let cols = vec![
        c("TYPE", |o, _| none(&o["spec"]["type"])),
        c("CLUSTER-IP", |o, _| none(&o["spec"]["clusterIP"])),
        c("EXTERNAL-IP", service_external_ip),
        c("PORT(S)", service_ports),
        Column::age(),
    ];
    and_wide(cols, wide, || {
        vec![c("SELECTOR", |o, _| map_pairs(&o["spec"]["selector"]))]
    })
}

fn node_columns(wide: bool) -> Vec<Column> {
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

fn namespace_columns(_wide: bool) -> Vec<Column> {
    vec![
        Column::new("STATUS", |o, _| none(&o["status"]["phase"])),
        Column::age(),
    ]
}

fn configmap_columns(_wide: bool) -> Vec<Column> {
    vec![
        Column::new("DATA", |o, _| {
            let n = o["data"].as_object().map_or(0, |m| m.len())
                + o["binaryData"].as_object().map_or(0, |m| m.len());
            n.to_string()
        }),
        Column::age(),
    ]
}

fn secret_columns(_wide: bool) -> Vec<Column> {
    vec![
        Column::new("TYPE", |o, _| none(&o["type"])),
        Column::new("DATA", |o, _| {
            o["data"].as_object().map_or(0, |m| m.len()).to_string()
        }),
        Column::age(),
    ]
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

/// printers.go `printEndpoints`: `formatEndpoints(obj, nil)`.
fn endpoints_columns(_wide: bool) -> Vec<Column> {
    vec![Column::new("ENDPOINTS", endpoints_list), Column::age()]
}

/// printers.go `formatEndpoints`: `ip:port` (`net.JoinHostPort`) per address and port
/// of every subset (the bare IP for a subset without ports), the first 3 comma-joined
/// and ` + N more...`; `<none>` without subsets.
fn endpoints_list(o: &Value, _: jiff::Timestamp) -> String {
    const MAX: usize = 3;
    let subsets = o["subsets"].as_array().map_or(&[][..], Vec::as_slice);
    if subsets.is_empty() {
        return "<none>".into();
    }
    let (mut list, mut count) = (Vec::new(), 0);
    for ss in subsets {
        let addrs = ss["addresses"].as_array().map_or(&[][..], Vec::as_slice);
        let ip = |a: &Value| a["ip"].as_str().unwrap_or_default().to_owned();
        match ss["ports"].as_array().filter(|p| !p.is_empty()) {
            None => {
                count += addrs.len();
                list.extend(addrs.iter().map(ip));
            }
            Some(ports) => {
                for p in ports {
                    count += addrs.len();
                    let port = p["port"].as_i64().unwrap_or(0);
                    list.extend(addrs.iter().map(|a| match ip(a) {
                        h if h.contains(':') => format!("[{h}]:{port}"),
                        h => format!("{h}:{port}"),
                    }));
                }
            }
        }
    }
    if list.len() > MAX {
        list.truncate(MAX);
        return format!("{} + {} more...", list.join(","), count - MAX);
    }
    list.join(",")
}

/// printers.go `printPersistentVolumeClaim`: CAPACITY and ACCESS MODES only once bound
/// (`spec.volumeName` set).
fn pvc_columns(wide: bool) -> Vec<Column> {
    let cols = vec![
        Column::new("STATUS", |o, _| {
            if o["metadata"]["deletionTimestamp"].is_string() {
                return "Terminating".into();
            }
            str_or_empty(&o["status"]["phase"])
        }),
        Column::new("VOLUME", |o, _| str_or_empty(&o["spec"]["volumeName"])),
        Column::new("CAPACITY", |o, _| {
            if pvc_bound(o) {
                quantity(&o["status"]["capacity"]["storage"])
            } else {
                String::new()
            }
        }),
        Column::new("ACCESS MODES", |o, _| {
            if pvc_bound(o) {
                access_modes(&o["status"]["accessModes"])
            } else {
                String::new()
            }
        }),
        // helper.GetPersistentVolumeClaimClass: the beta annotation wins over the field.
        Column::new("STORAGECLASS", |o, _| {
            match o["metadata"]["annotations"]["volume.beta.kubernetes.io/storage-class"].as_str() {
                Some(c) => c.to_owned(),
                None => str_or_empty(&o["spec"]["storageClassName"]),
            }
        }),
        Column::new("VOLUMEATTRIBUTESCLASS", |o, _| {
            unset(&o["spec"]["volumeAttributesClassName"])
        }),
        Column::age(),
    ];
    and_wide(cols, wide, || {
        vec![Column::new("VOLUMEMODE", |o, _| {
            unset(&o["spec"]["volumeMode"])
        })]
    })
}

fn pvc_bound(o: &Value) -> bool {
    o["spec"]["volumeName"]
        .as_str()
        .is_some_and(|v| !v.is_empty())
}

/// A string field, `<unset>` when absent or empty.
fn unset(v: &Value) -> String {
    match v.as_str() {
        Some(s) if !s.is_empty() => s.to_owned(),
        _ => "<unset>".into(),
    }
}

/// A resource.Quantity as the object carries it (a string, or a bare JSON number).
fn quantity(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => "0".into(),
    }
}

/// `helper.GetAccessModesAsString`: RWO, ROX, RWX, RWOP in that order, each once.
pub fn access_modes(v: &Value) -> String {
    let modes: Vec<&str> = v
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ]
    .iter()
    .filter(|(m, _)| modes.contains(m))
    .map(|(_, short)| *short)
    .collect::<Vec<_>>()
    .join(",")
}

/// printers.go `printServiceAccount`: the number of `secrets`.
fn serviceaccount_columns(_wide: bool) -> Vec<Column> {
    vec![
        Column::new("SECRETS", |o, _| {
            o["secrets"].as_array().map_or(0, Vec::len).to_string()
        }),
        Column::age(),
    ]
}

/// printers.go `printHorizontalPodAutoscaler` (autoscaling/v2).
fn hpa_columns(_wide: bool) -> Vec<Column> {
    vec![
        Column::new("REFERENCE", |o, _| {
            let r = &o["spec"]["scaleTargetRef"];
            format!("{}/{}", str_or_empty(&r["kind"]), str_or_empty(&r["name"]))
        }),
        Column::new("TARGETS", hpa_metrics),
        Column::new("MINPODS", |o, _| match o["spec"]["minReplicas"].as_i64() {
            Some(n) => n.to_string(),
            None => "<unset>".into(),
        }),
        Column::new("MAXPODS", |o, _| int(&o["spec"]["maxReplicas"])),
        Column::new("REPLICAS", |o, _| int(&o["status"]["currentReplicas"])),
        Column::age(),
    ]
}

/// printers.go `formatHPAMetrics`: per spec metric `current/target` (`<unknown>` before
/// the status has it), a resource's prefixed with its name, an average value's followed
/// by ` (avg)` for External and Object metrics; the first 2 joined by `, ` and
/// ` + N more...`; `<none>` without metrics.
fn hpa_metrics(o: &Value, _: jiff::Timestamp) -> String {
    const MAX: usize = 2;
    let specs = o["spec"]["metrics"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    if specs.is_empty() {
        return "<none>".into();
    }
    let statuses = o["status"]["currentMetrics"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    let unknown = || "<unknown>".to_owned();
    let percent = |v: &Value| v.as_i64().map(|n| format!("{n}%"));
    let mut list = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        let status = statuses.get(i);
        let field = match spec["type"].as_str() {
            Some("External") => "external",
            Some("Pods") => "pods",
            Some("Object") => "object",
            Some("Resource") => "resource",
            Some("ContainerResource") => "containerResource",
            _ => {
                list.push("<unknown type>".to_owned());
                continue;
            }
        };
        let target = &spec[field]["target"];
        let current = status.map(|s| &s[field]).filter(|c| c.is_object());
        let current = current.map(|c| &c["current"]);
        list.push(match field {
            "pods" => format!(
                "{}/{}",
                current.map_or_else(unknown, |c| quantity(&c["averageValue"])),
                quantity(&target["averageValue"])
            ),
            "external" | "object" if !target["averageValue"].is_null() => format!(
                "{}/{} (avg)",
                current
                    .filter(|c| !c["averageValue"].is_null())
                    .map_or_else(unknown, |c| quantity(&c["averageValue"])),
                quantity(&target["averageValue"])
            ),
            "external" | "object" => format!(
                "{}/{}",
                current.map_or_else(unknown, |c| quantity(&c["value"])),
                quantity(&target["value"])
            ),
            _ => {
                let name = str_or_empty(&spec[field]["name"]);
                if !target["averageValue"].is_null() {
                    format!(
                        "{name}: {}/{}",
                        current.map_or_else(unknown, |c| quantity(&c["averageValue"])),
                        quantity(&target["averageValue"])
                    )
                } else {
                    format!(
                        "{name}: {}/{}",
                        current
                            .and_then(|c| percent(&c["averageUtilization"]))
                            .unwrap_or_else(unknown),
                        percent(&target["averageUtilization"]).unwrap_or_else(|| "<auto>".into())
                    )
                }
            }
        });
    }
    let count = list.len();
    if count > MAX {
        list.truncate(MAX);
        return format!("{} + {} more...", list.join(", "), count - MAX);
    }
    list.join(", ")
}

/// printers.go `printPodDisruptionBudget`.
fn pdb_columns(_wide: bool) -> Vec<Column> {
    vec![
        Column::new("MIN AVAILABLE", |o, _| {
            int_or_string(&o["spec"]["minAvailable"])
        }),
        Column::new("MAX UNAVAILABLE", |o, _| {
            int_or_string(&o["spec"]["maxUnavailable"])
        }),
        Column::new("ALLOWED DISRUPTIONS", |o, _| {
            int(&o["status"]["disruptionsAllowed"])
        }),
        Column::age(),
    ]
}

/// An IntOrString as it is, `N/A` when unset.
fn int_or_string(v: &Value) -> String {
    match v {
        Value::Null => "N/A".to_owned(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// printers.go `printRoleBinding` / `printClusterRoleBinding`: ROLE is `Kind/name`;
/// wide adds the subjects of rbac's `SubjectsStrings`, each list joined by `, `.
fn rolebinding_columns(wide: bool) -> Vec<Column> {
    let cols = vec![
        Column::new("ROLE", |o, _| {
            let r = &o["roleRef"];
            format!("{}/{}", str_or_empty(&r["kind"]), str_or_empty(&r["name"]))
        }),
        Column::age(),
    ];
    and_wide(cols, wide, || {
        vec![
            Column::new("USERS", |o, _| subjects(o, "User")),
            Column::new("GROUPS", |o, _| subjects(o, "Group")),
            Column::new("SERVICEACCOUNTS", |o, _| subjects(o, "ServiceAccount")),
        ]
    })
}

/// The names of a binding's subjects of `kind` (a ServiceAccount's as `namespace/name`),
/// joined by `, `.
fn subjects(o: &Value, kind: &str) -> String {
    o["subjects"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| s["kind"] == kind)
        .map(|s| match kind {
            "ServiceAccount" => {
                format!(
                    "{}/{}",
                    str_or_empty(&s["namespace"]),
                    str_or_empty(&s["name"])
                )
            }
            _ => str_or_empty(&s["name"]),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// printers.go `printLease`: the holder, empty when none.
fn lease_columns(_wide: bool) -> Vec<Column> {
    vec![
        Column::new("HOLDER", |o, _| str_or_empty(&o["spec"]["holderIdentity"])),
        Column::age(),
    ]
}

/// kube-aggregator's apiservice `ConvertToTable`: SERVICE is `namespace/name` or
/// `Local`; AVAILABLE the Available condition's status, with `(reason)` unless True,
/// `Unknown` without the condition.
fn apiservice_columns(_wide: bool) -> Vec<Column> {
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
            let cond = o["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|c| c["type"] == "Available");
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

/// CONTAINERS and IMAGES (kubectl's `layoutContainerCells`: comma-joined, empty when
/// there are none) of the pod template at `.spec.template`, or with `cronjob` at
/// `.spec.jobTemplate.spec.template`.
fn containers(cronjob: bool) -> Vec<Column> {
    if cronjob {
        return vec![
            Column::new("CONTAINERS", |o, _| {
                join_field(&cronjob_pod_spec(o)["containers"], "name")
            }),
            Column::new("IMAGES", |o, _| {
                join_field(&cronjob_pod_spec(o)["containers"], "image")
            }),
        ];
    }
    vec![
        Column::new("CONTAINERS", |o, _| {
            join_field(&o["spec"]["template"]["spec"]["containers"], "name")
        }),
        Column::new("IMAGES", |o, _| {
            join_field(&o["spec"]["template"]["spec"]["containers"], "image")
        }),
    ]
}

fn cronjob_pod_spec(o: &Value) -> &Value {
    &o["spec"]["jobTemplate"]["spec"]["template"]["spec"]
}

/// `field` of each element of the array `v`, comma-joined (a missing field is empty).
fn join_field(v: &Value, field: &str) -> String {
    v.as_array()
        .into_iter()
        .flatten()
        .map(|x| x[field].as_str().unwrap_or_default())
        .collect::<Vec<_>>()
        .join(",")
}

/// A string field, empty when absent (Go's zero value, as kubectl prints it).
fn str_or_empty(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_owned()
}

/// apimachinery's `LabelSelectorAsSelector(s).String()`: requirements sorted by key,
/// `k=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`; empty for no selector.
fn label_selector(s: &Value) -> String {
    let mut reqs: Vec<(String, String)> = Vec::new();
    if let Some(m) = s["matchLabels"].as_object() {
        for (k, v) in m {
            reqs.push((k.clone(), format!("{k}={}", v.as_str().unwrap_or_default())));
        }
    }
    for e in s["matchExpressions"].as_array().into_iter().flatten() {
        let k = e["key"].as_str().unwrap_or_default();
        let mut vals: Vec<&str> = e["values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        vals.sort_unstable();
        vals.dedup();
        let r = match e["operator"].as_str().unwrap_or_default() {
            "In" => format!("{k} in ({})", vals.join(",")),
            "NotIn" => format!("{k} notin ({})", vals.join(",")),
            "Exists" => k.to_owned(),
            "DoesNotExist" => format!("!{k}"),
            _ => return "<error>".into(),
        };
        reqs.push((k.to_owned(), r));
    }
    reqs.sort_by(|a, b| a.0.cmp(&b.0));
    reqs.into_iter()
        .map(|(_, r)| r)
        .collect::<Vec<_>>()
        .join(",")
}

/// apimachinery's `FormatLabelSelector`: [`label_selector`], `<none>` when empty.
fn format_selector(s: &Value) -> String {
    match label_selector(s) {
        l if l.is_empty() => "<none>".into(),
        l => l,
    }
}

/// printers.go `listWithMoreString`: the first three, `+ N more...`, `<unset>` for none.
fn list_with_more(items: impl Iterator<Item = String>) -> String {
    const MAX: usize = 3;
    let mut list = Vec::new();
    let mut count = 0;
    for i in items {
        if list.len() < MAX {
            list.push(i);
        }
        count += 1;
    }
    let ret = list.join(",");
    if count > MAX {
        format!("{ret} + {} more...", count - MAX)
    } else if ret.is_empty() {
        "<unset>".into()
    } else {
        ret
    }
}

/// printers.go `hasJobCondition`: the first condition of the type decides.
fn job_condition(o: &Value, ty: &str) -> bool {
    o["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == ty)
        .is_some_and(|c| c["status"] == "True")
}

fn job_status(o: &Value, _: jiff::Timestamp) -> String {
    if job_condition(o, "Complete") {
        "Complete"
    } else if job_condition(o, "Failed") {
        "Failed"
    } else if !o["metadata"]["deletionTimestamp"].is_null() {
        "Terminating"
    } else if job_condition(o, "Suspended") {
        "Suspended"
    } else if job_condition(o, "FailureTarget") {
        "FailureTarget"
    } else {
        "Running"
    }
    .to_owned()
}

fn job_completions(o: &Value, _: jiff::Timestamp) -> String {
    let succeeded = int(&o["status"]["succeeded"]);
    match o["spec"]["completions"].as_i64() {
        Some(c) => format!("{succeeded}/{c}"),
        None => match o["spec"]["parallelism"].as_i64().unwrap_or(0) {
            p if p > 1 => format!("{succeeded}/1 of {p}"),
            _ => format!("{succeeded}/1"),
        },
    }
}

fn job_duration(o: &Value, now: jiff::Timestamp) -> String {
    let time = |k: &str| {
        o["status"][k]
            .as_str()
            .and_then(|t| t.parse::<jiff::Timestamp>().ok())
    };
    let Some(start) = time("startTime") else {
        return String::new();
    };
    let end = time("completionTime").unwrap_or(now);
    let secs = end.as_second().saturating_sub(start.as_second()).max(0);
    human_duration(Duration::from_secs(secs.unsigned_abs()))
}

/// printers.go `formatHosts`: up to three hosts, `*` when no rule names one.
fn ingress_hosts(o: &Value, _: jiff::Timestamp) -> String {
    const MAX: usize = 3;
    let rules = o["spec"]["rules"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut list: Vec<&str> = Vec::new();
    let mut more = false;
    for r in rules {
        if list.len() == MAX {
            more = true;
        }
        match r["host"].as_str() {
            Some(h) if !more && !h.is_empty() => list.push(h),
            _ => {}
        }
    }
    if list.is_empty() {
        return "*".into();
    }
    let ret = list.join(",");
    if more {
        format!("{ret} + {} more...", rules.len() - MAX)
    } else {
        ret
    }
}

/// printers.go `ingressLoadBalancerStatusStringer`: sorted unique IPs or hostnames, cut
/// to 16 bytes unless wide.
fn ingress_address(o: &Value, wide: bool) -> String {
    let set: std::collections::BTreeSet<&str> = o["status"]["loadBalancer"]["ingress"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| {
            i["ip"]
                .as_str()
                .filter(|s| !s.is_empty())
                .or_else(|| i["hostname"].as_str().filter(|s| !s.is_empty()))
        })
        .collect();
    let r = set.into_iter().collect::<Vec<_>>().join(",");
    if !wide && r.len() > 16 {
        let cut = (0..=13).rev().find(|i| r.is_char_boundary(*i)).unwrap_or(0);
        format!("{}...", &r[..cut])
    } else {
        r
    }
}

/// The event columns (printers.go `printEvent`). kube-apiserver prints events.k8s.io
/// events through the core Event printer after converting them, so `NEW` reads the
/// events.k8s.io names of the same fields: regarding, note, deprecatedSource,
/// deprecatedFirstTimestamp, deprecatedLastTimestamp, deprecatedCount,
/// reportingController.
fn event_columns<const NEW: bool>(wide: bool) -> Vec<Column> {
    let c = Column::new;
    let mut v = vec![
        c("LAST SEEN", event_last_seen::<NEW>),
        c("TYPE", |o, _| str_or_empty(&o["type"])),
        c("REASON", |o, _| str_or_empty(&o["reason"])),
        c("OBJECT", |o, _| {
            let io = event_field::<NEW>(o, EventField::Object);
            let kind = io["kind"].as_str().unwrap_or_default().to_lowercase();
            match io["name"].as_str().unwrap_or_default() {
                "" => kind,
                name => format!("{kind}/{name}"),
            }
        }),
    ];
    if wide {
        v.push(c("SUBOBJECT", |o, _| {
            str_or_empty(&event_field::<NEW>(o, EventField::Object)["fieldPath"])
        }));
        v.push(c("SOURCE", |o, _| {
            let src = event_field::<NEW>(o, EventField::Source);
            let first = |a: &Value, b: &Value| {
                a.as_str()
                    .filter(|s| !s.is_empty())
                    .or_else(|| b.as_str())
                    .unwrap_or_default()
                    .to_owned()
            };
            let component = first(
                &src["component"],
                event_field::<NEW>(o, EventField::ReportingController),
            );
            let host = first(&src["host"], &o["reportingInstance"]);
            if host.is_empty() {
                component
            } else {
                format!("{component}, {host}")
            }
        }));
    }
    v.push(c("MESSAGE", |o, _| {
        event_field::<NEW>(o, EventField::Message)
            .as_str()
            .unwrap_or_default()
            .trim()
            .to_owned()
    }));
    if wide {
        v.push(c("FIRST SEEN", event_first_seen::<NEW>));
        v.push(c("COUNT", |o, _| {
            let series = &o["series"];
            if series.is_object() {
                return int(&series["count"]);
            }
            match event_field::<NEW>(o, EventField::Count)
                .as_i64()
                .unwrap_or(0)
            {
                0 => "1".into(),
                n => n.to_string(),
            }
        }));
        v.push(c("NAME", |o, _| str_or_empty(&o["metadata"]["name"])));
    }
    v
}

/// The event fields whose names differ between core/v1 and events.k8s.io/v1.
#[derive(Clone, Copy)]
enum EventField {
    Object,
    Message,
    Source,
    FirstTimestamp,
    LastTimestamp,
    Count,
    ReportingController,
}

fn event_field<const NEW: bool>(o: &Value, f: EventField) -> &Value {
    let (core, new) = match f {
        EventField::Object => ("involvedObject", "regarding"),
        EventField::Message => ("message", "note"),
        EventField::Source => ("source", "deprecatedSource"),
        EventField::FirstTimestamp => ("firstTimestamp", "deprecatedFirstTimestamp"),
        EventField::LastTimestamp => ("lastTimestamp", "deprecatedLastTimestamp"),
        EventField::Count => ("count", "deprecatedCount"),
        EventField::ReportingController => ("reportingComponent", "reportingController"),
    };
    &o[if NEW { new } else { core }]
}

fn event_first_seen<const NEW: bool>(o: &Value, now: jiff::Timestamp) -> String {
    match event_field::<NEW>(o, EventField::FirstTimestamp).as_str() {
        Some(t) => age(Some(t), now),
        None => age(o["eventTime"].as_str(), now),
    }
}

fn event_last_seen<const NEW: bool>(o: &Value, now: jiff::Timestamp) -> String {
    let series = &o["series"];
    if series.is_object() {
        return age(series["lastObservedTime"].as_str(), now);
    }
    match event_field::<NEW>(o, EventField::LastTimestamp).as_str() {
        Some(t) => age(Some(t), now),
        None => event_first_seen::<NEW>(o, now),
    }
}

/// A CRD printer column's cell, as kube-apiserver's table convertor makes it and kubectl
/// prints it: nothing found (or a value of another type) is an empty cell; `string`
/// prints a scalar as Go's `fmt` does (see [`go_value`]) and a map or a list as compact
/// JSON (see [`go_json`]); `integer` truncates; `number`
/// went through the Table's JSON, so an integral value prints as an integer; `date` is
/// an age (`<invalid>` when not a timestamp).
fn crd_cell(kind: &str, v: Option<&Value>, now: jiff::Timestamp) -> String {
    let Some(v) = v.filter(|v| !v.is_null()) else {
        return String::new();
    };
    match kind {
        "integer" => match v {
            Value::Number(n) => match n.as_i64() {
                Some(i) => i.to_string(),
                None => n
                    .as_f64()
                    .map_or(String::new(), |f| (f.trunc() as i64).to_string()),
            },
            _ => String::new(),
        },
        "number" => match v {
            Value::Number(n) => match (n.as_i64(), n.as_f64()) {
                (Some(i), _) => i.to_string(),
                (None, Some(f)) if f.fract() == 0.0 && f.abs() < 9.2e18 => {
                    format!("{f:.0}")
                }
                (None, Some(f)) => go_float(f),
                (None, None) => String::new(),
            },
            _ => String::new(),
        },
        "boolean" => v.as_bool().map_or(String::new(), |b| b.to_string()),
        "date" => match v.as_str() {
            Some(t) if t.parse::<jiff::Timestamp>().is_ok() => age(Some(t), now),
            Some(_) => "<invalid>".into(),
            None => String::new(),
        },
        // apiextensions-apiserver's tableconvertor prints `string` columns with client-go's
        // `JSONPath.PrintResults`, which marshals a map, array or slice as JSON
        // (util/jsonpath/jsonpath.go: `case reflect.Map: case reflect.Array: case
        // reflect.Slice:` → `json.Marshal`) and prints anything else with `fmt.Fprint`.
        _ if v.is_object() || v.is_array() => go_json(v),
        _ => go_value(v),
    }
}

/// Go's `json.Marshal` of a JSON value as Kubernetes decodes it: compact, object keys
/// sorted, `<`, `>`, `&`, U+2028 and U+2029 escaped (`\u003c`), integers as int64 and other
/// numbers as float64 (`1e-7`, `1e+21`, `0.25`).
pub fn go_json(v: &Value) -> String {
    let mut out = String::new();
    write_go_json(v, &mut out);
    out
}

fn write_go_json(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => out.push_str(&i.to_string()),
            (None, Some(f)) => out.push_str(&go_json_float(f)),
            (None, None) => out.push_str(&n.to_string()),
        },
        Value::String(s) => go_json_string(s, out),
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_go_json(x, out);
            }
            out.push(']');
        }
        Value::Object(m) => {
            let mut kv: Vec<(&String, &Value)> = m.iter().collect();
            kv.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (k, x)) in kv.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                go_json_string(k, out);
                out.push(':');
                write_go_json(x, out);
            }
            out.push('}');
        }
    }
}

/// encoding/json's string: `\"`, `\\`, `\b \f \n \r \t`, other control characters and
/// the HTML-unsafe `<`, `>`, `&` and U+2028/U+2029 as `\u00XX`.
fn go_json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || matches!(c, '<' | '>' | '&' | '\u{2028}' | '\u{2029}') => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// encoding/json's float64: `'f'` format, or `'e'` below 1e-6 and from 1e21 on, with a
/// one-digit negative exponent unpadded (`1e-7`, `1e+21`).
fn go_json_float(f: f64) -> String {
    let a = f.abs();
    if a == 0.0 || (1e-6..1e21).contains(&a) {
        return format!("{f}");
    }
    let e = format!("{f:e}");
    match e.split_once('e') {
        Some((mantissa, exp)) if !exp.starts_with('-') => format!("{mantissa}e+{exp}"),
        _ => e,
    }
}

/// Go's `fmt.Sprint` of a JSON value as Kubernetes decodes it (integers as int64, other
/// numbers as float64): `map[a:1 b:x]` with sorted keys, `[a b]`, `<nil>`, `1e-07`.
pub fn go_value(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::String(s) => s.clone(),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(f)) => go_float(f),
            (None, None) => n.to_string(),
        },
        Value::Array(a) => format!("[{}]", a.iter().map(go_value).collect::<Vec<_>>().join(" ")),
        Value::Object(m) => {
            let mut kv: Vec<(&String, &Value)> = m.iter().collect();
            kv.sort_by(|a, b| a.0.cmp(b.0));
            let inner: Vec<String> = kv
                .into_iter()
                .map(|(k, v)| format!("{k}:{}", go_value(v)))
                .collect();
            format!("map[{}]", inner.join(" "))
        }
    }
}

/// Go's `%v` of a float64: the shortest digits that round-trip, in exponent form
/// (`1e-07`, `1.5e+06`, two exponent digits at least) when the exponent is below -4 or
/// at least 6 (strconv's `'g'` with the shortest precision).
pub fn go_float(f: f64) -> String {
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let e = format!("{f:e}");
    let Some((mantissa, exp)) = e.split_once('e') else {
        return e;
    };
    let Ok(exp) = exp.parse::<i32>() else {
        return e;
    };
    if (-4..6).contains(&exp) {
        format!("{f}")
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    }
}

fn none(v: &Value) -> String {
    match v {
        Value::String(s) if !s.is_empty() => s.clone(),
        Value::Null => "<none>".into(),
        Value::String(_) => "<none>".into(),
        other => other.to_string(),
    }
}

fn int(v: &Value) -> String {
    v.as_i64().unwrap_or(0).to_string()
}

/// apimachinery's `labels.FormatLabels`: `k=v` pairs sorted by key, `<none>` when empty.
fn map_pairs(v: &Value) -> String {
    match v.as_object() {
        Some(m) if !m.is_empty() => {
            let mut kv: Vec<(&String, &Value)> = m.iter().collect();
            kv.sort_by(|a, b| a.0.cmp(b.0));
            kv.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                .collect::<Vec<_>>()
                .join(",")
        }
        _ => "<none>".into(),
    }
}

fn service_external_ip(o: &Value, _: jiff::Timestamp) -> String {
    let ingress: Vec<&str> = o["status"]["loadBalancer"]["ingress"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| i["ip"].as_str().or_else(|| i["hostname"].as_str()))
        .collect();
    let external: Vec<&str> = o["spec"]["externalIPs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    match o["spec"]["type"].as_str().unwrap_or("ClusterIP") {
        "ExternalName" => none(&o["spec"]["externalName"]),
        "LoadBalancer" if ingress.is_empty() && external.is_empty() => "<pending>".into(),
        "LoadBalancer" => ingress
            .into_iter()
            .chain(external)
            .collect::<Vec<_>>()
            .join(","),
        _ if external.is_empty() => "<none>".into(),
        _ => external.join(","),
    }
}

fn service_ports(o: &Value, _: jiff::Timestamp) -> String {
    let ports: Vec<String> = o["spec"]["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            let proto = p["protocol"].as_str().unwrap_or("TCP");
            match p["nodePort"].as_i64() {
                Some(np) => format!("{}:{np}/{proto}", int(&p["port"])),
                None => format!("{}/{proto}", int(&p["port"])),
            }
        })
        .collect();
    if ports.is_empty() {
        "<none>".into()
    } else {
        ports.join(",")
    }
}

fn node_status(o: &Value, _: jiff::Timestamp) -> String {
    let ready = o["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "Ready");
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
    o["status"]["addresses"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["type"] == kind)
        .and_then(|a| a["address"].as_str())
        .map_or("<none>".into(), str::to_owned)
}

/// The columns of a pod row that read past metadata.creationTimestamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PodColumn {
    Ready,
    Status,
    Restarts,
    Ip,
    Node,
    Nominated,
    ReadinessGates,
}

impl PodColumn {
    fn column(self, header: &str) -> Column {
        Column {
            header: header.into(),
            get: Getter::Pod(self),
        }
    }

    /// The cell of a pod: the one place where kubectl's pod printing rules live, for
    /// both the typed parse and the [`Value`] ([`PodView::from_value`]).
    fn cell(self, p: &PodView<'_>, now: jiff::Timestamp) -> String {
        match self {
            PodColumn::Ready => p.ready(),
            PodColumn::Status => p.status(),
            PodColumn::Restarts => p.restarts(now),
            PodColumn::Ip => none_str(p.status.as_ref().and_then(|s| s.pod_ip.as_deref())),
            PodColumn::Node => none_str(p.spec.as_ref().and_then(|s| s.node_name.as_deref())),
            PodColumn::Nominated => none_str(
                p.status
                    .as_ref()
                    .and_then(|s| s.nominated_node_name.as_deref()),
            ),
            PodColumn::ReadinessGates => p.readiness_gates(),
        }
    }
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

/// The fields of a pod that the pod columns and `-L`/`--show-labels` read, parsed without
/// building the rest. Each field has the one JSON type on which the typed and the
/// [`Value`] readings of it agree (string, integer that fits i64, bool, object, array, or
/// null/absent); any other type, a repeated key (except within labels, see [`Labels`]) or
/// a string with escapes fails the parse, so the row falls back to the [`Value`] and
/// reads it through [`PodView::from_value`].
/// One difference remains: an object nested deeper than serde_json's limit for a
/// [`Value`] (128) has no [`Value`] (its cells are those of no object), while the skipped
/// parts of a [`PodView`] have no depth limit.
#[derive(Debug, Deserialize)]
pub struct PodView<'a> {
    #[serde(borrow, default)]
    metadata: Option<Obj<PodMeta<'a>>>,
    #[serde(borrow, default)]
    spec: Option<Obj<PodSpec<'a>>>,
    #[serde(borrow, default)]
    status: Option<Obj<PodStatus<'a>>>,
}

impl<'a> PodView<'a> {
    /// `None` when `raw` does not have the types [`PodView`] expects.
    pub fn parse(raw: &'a str) -> Option<PodView<'a>> {
        serde_json::from_str::<Obj<PodView<'a>>>(raw)
            .ok()
            .map(|o| o.0)
    }

    fn labels(&self) -> Option<&Labels<'a>> {
        self.metadata.as_ref()?.labels.as_ref()
    }

    fn container_statuses(&self) -> Option<&[Obj<ContainerStatus<'a>>]> {
        self.status.as_ref()?.container_statuses.as_deref()
    }

    /// READY: ready containers of the spec's containers (of the statuses without a spec).
    fn ready(&self) -> String {
        let total = self
            .spec
            .as_ref()
            .and_then(|s| s.containers.as_ref())
            .map_or(0, |l| l.0);
        let statuses = self.container_statuses();
        let total = if total == 0 {
            statuses.map_or(0, <[_]>::len)
        } else {
            total
        };
        let ready = statuses.map_or(0, |s| s.iter().filter(|c| c.ready == Some(true)).count());
        format!("{ready}/{total}")
    }

    /// kubectl's pod STATUS (printPod, simplified): init container progress, the waiting or
    /// terminated reason of a container, Terminating, else the phase.
    fn status(&self) -> String {
        let st = self.status.as_ref();
        let st_reason = st.and_then(|s| s.reason);
        let mut reason = st_reason
            .or_else(|| st.and_then(|s| s.phase))
            .unwrap_or("Unknown")
            .to_owned();
        let inits = st.and_then(|s| s.init_container_statuses.as_deref());
        let n_inits = self
            .spec
            .as_ref()
            .and_then(|s| s.init_containers.as_ref())
            .map_or(inits.map_or(0, <[_]>::len), |l| l.0);
        let mut initializing = false;
        for (i, c) in inits.into_iter().flatten().enumerate() {
            let term = c.terminated();
            if term.is_some_and(|t| t.exit_code == Some(0)) {
                continue;
            }
            initializing = true;
            reason = if let Some(t) = term {
                match t.reason {
                    Some(r) if !r.is_empty() => format!("Init:{r}"),
                    _ => format!("Init:ExitCode:{}", t.exit_code.unwrap_or(0)),
                }
            } else if let Some(r) = c.waiting_reason().filter(|r| *r != "PodInitializing") {
                format!("Init:{r}")
            } else {
                format!("Init:{i}/{n_inits}")
            };
            break;
        }
        if !initializing {
            let mut has_running = false;
            for c in self.container_statuses().into_iter().flatten().rev() {
                let term = c.terminated();
                if let Some(r) = c.waiting_reason() {
                    reason = r.to_owned();
                } else if let Some(r) = term.and_then(|t| t.reason) {
                    reason = r.to_owned();
                } else if let Some(t) = term {
                    reason = format!("ExitCode:{}", t.exit_code.unwrap_or(0));
                } else if c.ready == Some(true)
                    && c.state.as_ref().is_some_and(|s| s.running.is_some())
                {
                    has_running = true;
                }
            }
            if reason == "Completed" && has_running {
                reason = "Running".into();
            }
        }
        let deleting = self
            .metadata
            .as_ref()
            .is_some_and(|m| m.deletion_timestamp.is_some());
        if deleting {
            reason = if st_reason == Some("NodeLost") {
                "Unknown".into()
            } else {
                "Terminating".into()
            };
        }
        reason
    }

    /// printers.go's READINESS GATES: `true/total` over the gates, a gate counting when
    /// the first condition of its type has status True; `<none>` without gates.
    fn readiness_gates(&self) -> String {
        let gates = self
            .spec
            .as_ref()
            .and_then(|s| s.readiness_gates.as_deref());
        let Some(gates) = gates.filter(|g| !g.is_empty()) else {
            return "<none>".into();
        };
        let conds = self.status.as_ref().and_then(|s| s.conditions.as_deref());
        let ready = gates
            .iter()
            .filter(|g| {
                let want = g.condition_type.unwrap_or_default();
                conds
                    .into_iter()
                    .flatten()
                    .find(|c| c.type_.unwrap_or_default() == want)
                    .is_some_and(|c| c.status == Some("True"))
            })
            .count();
        format!("{ready}/{}", gates.len())
    }

    /// RESTARTS: the sum of restarts, with how long ago the last one ended, as kubectl
    /// prints it.
    fn restarts(&self, now: jiff::Timestamp) -> String {
        let mut n = 0;
        let mut last: Option<jiff::Timestamp> = None;
        for c in self.container_statuses().into_iter().flatten() {
            n = c.restart_count.unwrap_or(0).saturating_add(n);
            let t = c
                .last_state
                .as_ref()
                .and_then(|l| l.terminated.as_ref())
                .and_then(|t| t.finished_at)
                .and_then(|s| s.parse::<jiff::Timestamp>().ok());
            if t > last {
                last = t;
            }
        }
        match last {
            Some(t) if n > 0 => format!("{n} ({} ago)", age(Some(&t.to_string()), now)),
            _ => n.to_string(),
        }
    }
}

/// [`none`] of a string field.
fn none_str(s: Option<&str>) -> String {
    match s {
        Some(s) if !s.is_empty() => s.to_owned(),
        _ => "<none>".into(),
    }
}

#[derive(Debug, Deserialize)]
struct PodMeta<'a> {
    #[serde(borrow, default, rename = "deletionTimestamp")]
    deletion_timestamp: Option<&'a str>,
    #[serde(borrow, default)]
    labels: Option<Labels<'a>>,
}

#[derive(Debug, Deserialize)]
struct PodSpec<'a> {
    #[serde(default)]
    containers: Option<Len>,
    #[serde(default, rename = "initContainers")]
    init_containers: Option<Len>,
    #[serde(borrow, default, rename = "nodeName")]
    node_name: Option<Text<'a>>,
    #[serde(borrow, default, rename = "readinessGates")]
    readiness_gates: Option<Vec<Obj<ReadinessGate<'a>>>>,
}

#[derive(Debug, Deserialize)]
struct ReadinessGate<'a> {
    #[serde(borrow, default, rename = "conditionType")]
    condition_type: Option<&'a str>,
}

#[derive(Debug, Deserialize)]
struct PodCondition<'a> {
    #[serde(borrow, default, rename = "type")]
    type_: Option<&'a str>,
    #[serde(borrow, default)]
    status: Option<&'a str>,
}

#[derive(Debug, Deserialize)]
struct PodStatus<'a> {
    #[serde(borrow, default)]
    reason: Option<&'a str>,
    #[serde(borrow, default)]
    phase: Option<&'a str>,
    #[serde(borrow, default, rename = "podIP")]
    pod_ip: Option<Text<'a>>,
    #[serde(borrow, default, rename = "nominatedNodeName")]
    nominated_node_name: Option<Text<'a>>,
    #[serde(borrow, default)]
    conditions: Option<Vec<Obj<PodCondition<'a>>>>,
    #[serde(borrow, default, rename = "initContainerStatuses")]
    init_container_statuses: Option<Vec<Obj<ContainerStatus<'a>>>>,
    #[serde(borrow, default, rename = "containerStatuses")]
    container_statuses: Option<Vec<Obj<ContainerStatus<'a>>>>,
}

#[derive(Debug, Deserialize)]
struct ContainerStatus<'a> {
    #[serde(default)]
    ready: Option<bool>,
    #[serde(default, rename = "restartCount")]
    restart_count: Option<i64>,
    #[serde(borrow, default)]
    state: Option<Obj<State<'a>>>,
    #[serde(borrow, default, rename = "lastState")]
    last_state: Option<Obj<LastState<'a>>>,
}

impl<'a> ContainerStatus<'a> {
    fn terminated(&self) -> Option<&Terminated<'a>> {
        self.state.as_ref()?.terminated.as_deref()
    }

    fn waiting_reason(&self) -> Option<&'a str> {
        self.state.as_ref()?.waiting.as_ref()?.reason
    }
}

#[derive(Debug, Deserialize)]
struct State<'a> {
    #[serde(borrow, default)]
    waiting: Option<Obj<Waiting<'a>>>,
    #[serde(borrow, default)]
    terminated: Option<Obj<Terminated<'a>>>,
    #[serde(default)]
    running: Option<Obj<IgnoredAny>>,
}

#[derive(Debug, Deserialize)]
struct LastState<'a> {
    #[serde(borrow, default)]
    terminated: Option<Obj<Terminated<'a>>>,
}

#[derive(Debug, Deserialize)]
struct Waiting<'a> {
    #[serde(borrow, default)]
    reason: Option<&'a str>,
}

#[derive(Debug, Deserialize)]
struct Terminated<'a> {
    #[serde(borrow, default)]
    reason: Option<&'a str>,
    #[serde(default, rename = "exitCode")]
    exit_code: Option<i64>,
    #[serde(borrow, default, rename = "finishedAt")]
    finished_at: Option<&'a str>,
}

/// A string cell that [`none_str`] prints. Parsed, it is the JSON string (borrowed, so a
/// string with escapes fails the typed parse); from a [`Value`] of another type, it is
/// that value's JSON text, as kubectl's printer prints any value there.
#[derive(Debug)]
struct Text<'a>(Cow<'a, str>);

impl std::ops::Deref for Text<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <&'de str>::deserialize(d).map(|s| Text(Cow::Borrowed(s)))
    }
}

impl<'a> Text<'a> {
    fn from_value(v: &'a Value) -> Option<Text<'a>> {
        match v {
            Value::Null => None,
            Value::String(s) => Some(Text(Cow::Borrowed(s))),
            other => Some(Text(Cow::Owned(other.to_string()))),
        }
    }
}

/// `v` read by `f` when it is a JSON object (absent otherwise, as indexing a [`Value`]
/// that is not an object finds nothing).
fn object<'a, T>(v: &'a Value, f: impl FnOnce(&'a Value) -> T) -> Option<Obj<T>> {
    v.is_object().then(|| Obj(f(v)))
}

/// Each element of the array `v` read by `f`. An element that is not an object reads as
/// one with no fields, as indexing it finds nothing.
fn array<'a, T>(v: &'a Value, f: impl Fn(&'a Value) -> T) -> Option<Vec<Obj<T>>> {
    v.as_array().map(|a| a.iter().map(|x| Obj(f(x))).collect())
}

impl<'a> PodView<'a> {
    /// The view of an object already parsed into a [`Value`] (the typed parse refused it,
    /// or no object was parsed): a field of its expected type reads as the typed parse
    /// reads it, a field of another type as absent (a [`Text`] keeps its JSON text). So
    /// the pod rules above serve both paths.
    pub fn from_value(v: &'a Value) -> PodView<'a> {
        PodView {
            metadata: object(&v["metadata"], |m| PodMeta {
                deletion_timestamp: m["deletionTimestamp"].as_str(),
                labels: Labels::from_value(&m["labels"]),
            }),
            spec: object(&v["spec"], |s| PodSpec {
                containers: s["containers"].as_array().map(|a| Len(a.len())),
                init_containers: s["initContainers"].as_array().map(|a| Len(a.len())),
                node_name: Text::from_value(&s["nodeName"]),
                readiness_gates: array(&s["readinessGates"], |g| ReadinessGate {
                    condition_type: g["conditionType"].as_str(),
                }),
            }),
            status: object(&v["status"], |s| PodStatus {
                reason: s["reason"].as_str(),
                phase: s["phase"].as_str(),
                pod_ip: Text::from_value(&s["podIP"]),
                nominated_node_name: Text::from_value(&s["nominatedNodeName"]),
                conditions: array(&s["conditions"], |c| PodCondition {
                    type_: c["type"].as_str(),
                    status: c["status"].as_str(),
                }),
                init_container_statuses: array(
                    &s["initContainerStatuses"],
                    ContainerStatus::from_value,
                ),
                container_statuses: array(&s["containerStatuses"], ContainerStatus::from_value),
            }),
        }
    }
}

impl<'a> ContainerStatus<'a> {
    fn from_value(c: &'a Value) -> ContainerStatus<'a> {
        ContainerStatus {
            ready: c["ready"].as_bool(),
            restart_count: c["restartCount"].as_i64(),
            state: object(&c["state"], |s| State {
                waiting: object(&s["waiting"], |w| Waiting {
                    reason: w["reason"].as_str(),
                }),
                terminated: object(&s["terminated"], Terminated::from_value),
                running: object(&s["running"], |_| IgnoredAny),
            }),
            last_state: object(&c["lastState"], |l| LastState {
                terminated: object(&l["terminated"], Terminated::from_value),
            }),
        }
    }
}

impl<'a> Terminated<'a> {
    fn from_value(t: &'a Value) -> Terminated<'a> {
        Terminated {
            reason: t["reason"].as_str(),
            exit_code: t["exitCode"].as_i64(),
            finished_at: t["finishedAt"].as_str(),
        }
    }
}

/// A JSON object read as `T`. A derived struct alone also accepts a JSON array (its
/// fields by position), which a [`Value`] reading would not treat as an object.
#[derive(Debug)]
struct Obj<T>(T);

impl<T> std::ops::Deref for Obj<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Obj<T>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Obj<T>, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map)).map(Obj)
            }
        }
        d.deserialize_map(V(PhantomData))
    }
}

/// The length of a JSON array; its elements are skipped.
#[derive(Debug)]
struct Len(usize);

impl<'de> Deserialize<'de> for Len {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Len;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON array")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Len, A::Error> {
                let mut n = 0;
                while seq.next_element::<IgnoredAny>()?.is_some() {
                    n += 1;
                }
                Ok(Len(n))
            }
        }
        d.deserialize_seq(V)
    }
}

/// String labels in the order a [`Value`] map keeps them: a repeated key keeps its first
/// place and takes its last value.
#[derive(Debug)]
struct Labels<'a>(Vec<(&'a str, &'a str)>);

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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn now() -> jiff::Timestamp {
        "2026-11-21T10:05:00Z".parse().unwrap()
    }

    /// A pod column's cell from the whole object (the [`Value`] path).
    fn pod_cell(c: PodColumn, o: &Value) -> String {
        c.column("").cell(o, None, now())
    }

    fn pod_ready(o: &Value, _: jiff::Timestamp) -> String {
        pod_cell(PodColumn::Ready, o)
    }

    fn pod_status(o: &Value, _: jiff::Timestamp) -> String {
        pod_cell(PodColumn::Status, o)
    }

    fn pod_restarts(o: &Value, _: jiff::Timestamp) -> String {
        pod_cell(PodColumn::Restarts, o)
    }

    #[test]
    fn pod_status_follows_kubectl() {
        let p = json!({"spec": {"containers": [{"name": "a"}, {"name": "b"}]},
            "status": {"phase": "Running", "containerStatuses": [
                {"ready": true, "state": {"running": {}}, "restartCount": 2,
                 "lastState": {"terminated": {"finishedAt": "2026-11-21T10:00:00Z"}}},
                {"ready": false, "state": {"waiting": {"reason": "CrashLoopBackOff"}}, "restartCount": 1}]}});
        assert_eq!(pod_ready(&p, now()), "1/2");
        assert_eq!(pod_status(&p, now()), "CrashLoopBackOff");
        assert_eq!(pod_restarts(&p, now()), "3 (5m ago)");
        let init = json!({"spec": {"initContainers": [{}, {}], "containers": [{}]},
            "status": {"phase": "Pending", "initContainerStatuses": [
                {"state": {"terminated": {"exitCode": 0}}}, {"state": {"running": {}}}]}});
        assert_eq!(pod_status(&init, now()), "Init:1/2");
        let gone = json!({"metadata": {"deletionTimestamp": "x"}, "status": {"phase": "Running"}});
        assert_eq!(pod_status(&gone, now()), "Terminating");
    }

    #[test]
    fn services_print_ports_and_pending_load_balancers() {
        let s = json!({"spec": {"type": "LoadBalancer", "clusterIP": "10.0.0.1",
            "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}]}});
        assert_eq!(service_ports(&s, now()), "80:30080/TCP,53/UDP");
        assert_eq!(service_external_ip(&s, now()), "<pending>");
    }

    #[test]
    fn crd_printer_columns_honour_priority_and_dates() {
        let crd = json!({"spec": {"versions": [{"name": "v1", "additionalPrinterColumns": [
            {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
            {"name": "Color", "type": "string", "jsonPath": ".spec.color", "priority": 1},
            {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]}]}});
        let pc = PrinterColumn::from_crd(&crd, "v1");
        let r = Resource {
            name: "widgets.example.com".into(),
            kind: "Widget".into(),
            api_version: "example.com/v1".into(),
            namespaced: true,
        };
        let cols = resource_columns(&r, false, Some(&pc));
        let h: Vec<&str> = cols.iter().map(|c| c.header.as_str()).collect();
        assert_eq!(h, ["SIZE", "AGE"]);
        let w =
            json!({"metadata": {"creationTimestamp": "2026-11-21T10:04:00Z"}, "spec": {"size": 3}});
        let cells: Vec<String> = cols.iter().map(|c| c.cell(&w, None, now())).collect();
        assert_eq!(cells, ["3", "60s"]);
        // A missing value is an empty cell, as kubectl prints a null cell.
        let cells: Vec<String> = cols
            .iter()
            .map(|c| c.cell(&json!({}), None, now()))
            .collect();
        assert_eq!(cells, ["", ""]);
        assert_eq!(resource_columns(&r, true, Some(&pc)).len(), 3);
    }

    fn res(api_version: &str, kind: &str) -> Resource {
        Resource {
            name: kind.to_lowercase(),
            kind: kind.into(),
            api_version: api_version.into(),
            namespaced: true,
        }
    }

    /// Headers and cells of `obj` as `r`'s columns print them.
    fn row(r: &Resource, wide: bool, obj: &Value) -> Vec<(String, String)> {
        resource_columns(r, wide, None)
            .iter()
            .map(|c| (c.header.clone(), c.cell(obj, None, now())))
            .collect()
    }

    fn cells(r: &Resource, wide: bool, obj: &Value) -> Vec<String> {
        row(r, wide, obj).into_iter().map(|(_, c)| c).collect()
    }

    fn headers(r: &Resource, wide: bool) -> Vec<String> {
        row(r, wide, &json!({}))
            .into_iter()
            .map(|(h, _)| h)
            .collect()
    }

    /// Issue 15: the columns of kubectl 1.32's printers for the workload kinds.
    #[test]
    fn workload_columns_follow_kubectl_printers() {
        let job = res("batch/v1", "Job");
        assert_eq!(
            headers(&job, false),
            ["STATUS", "COMPLETIONS", "DURATION", "AGE"]
        );
        assert_eq!(
            headers(&job, true),
            [
                "STATUS",
                "COMPLETIONS",
                "DURATION",
                "AGE",
                "CONTAINERS",
                "IMAGES",
                "SELECTOR"
            ]
        );
        let j = json!({"metadata": {"creationTimestamp": "2026-11-21T10:00:00Z"},
            "spec": {"completions": 3, "selector": {"matchLabels": {"b": "2", "a": "1"}},
                     "template": {"spec": {"containers": [{"name": "c1", "image": "i1"}, {"name": "c2", "image": "i2"}]}}},
            "status": {"succeeded": 1, "startTime": "2026-11-21T10:01:00Z",
                       "conditions": [{"type": "Complete", "status": "False"}]}});
        assert_eq!(
            cells(&job, true, &j),
            [
                "Running",
                "1/3",
                "4m",
                "<unknown>",
                "c1,c2",
                "i1,i2",
                "a=1,b=2"
            ]
        );
        let done = json!({"spec": {"parallelism": 2}, "status": {"succeeded": 2,
            "startTime": "2026-11-21T10:01:00Z", "completionTime": "2026-11-21T10:01:30Z",
            "conditions": [{"type": "Complete", "status": "True"}]}});
        assert_eq!(
            cells(&job, false, &done)[..3],
            ["Complete", "2/1 of 2", "30s"]
        );
        assert_eq!(cells(&job, false, &json!({}))[..3], ["Running", "0/1", ""]);

        let cj = res("batch/v1", "CronJob");
        assert_eq!(
            headers(&cj, false),
            [
                "SCHEDULE",
                "TIMEZONE",
                "SUSPEND",
                "ACTIVE",
                "LAST SCHEDULE",
                "AGE"
            ]
        );
        let c = json!({"spec": {"schedule": "*/5 * * * *", "suspend": false,
            "jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "x", "image": "busybox"}]}}}}},
            "status": {"active": [{}, {}], "lastScheduleTime": "2026-11-21T10:04:00Z"}});
        assert_eq!(
            cells(&cj, true, &c),
            [
                "*/5 * * * *",
                "<none>",
                "False",
                "2",
                "60s",
                "<unknown>",
                "x",
                "busybox",
                "<none>"
            ]
        );
        assert_eq!(
            cells(&cj, false, &json!({}))[2..5],
            ["<unset>", "0", "<none>"]
        );

        let sts = res("apps/v1", "StatefulSet");
        assert_eq!(
            headers(&sts, true),
            ["READY", "AGE", "CONTAINERS", "IMAGES"]
        );
        let s = json!({"spec": {"replicas": 3}, "status": {"readyReplicas": 2}});
        assert_eq!(cells(&sts, false, &s), ["2/3", "<unknown>"]);

        let ds = res("apps/v1", "DaemonSet");
        assert_eq!(
            headers(&ds, false),
            [
                "DESIRED",
                "CURRENT",
                "READY",
                "UP-TO-DATE",
                "AVAILABLE",
                "NODE SELECTOR",
                "AGE"
            ]
        );
        let d = json!({"spec": {"template": {"spec": {"nodeSelector": {"os": "linux", "arch": "arm"}}},
            "selector": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]},
                                               {"key": "app", "operator": "Exists"}]}},
            "status": {"desiredNumberScheduled": 3, "currentNumberScheduled": 3, "numberReady": 2,
                       "updatedNumberScheduled": 1, "numberAvailable": 2}});
        assert_eq!(
            cells(&ds, true, &d),
            [
                "3",
                "3",
                "2",
                "1",
                "2",
                "arch=arm,os=linux",
                "<unknown>",
                "",
                "",
                "app,tier in (a,b)"
            ]
        );
    }

    #[test]
    fn network_columns_follow_kubectl_printers() {
        let ing = res("networking.k8s.io/v1", "Ingress");
        assert_eq!(
            headers(&ing, false),
            ["CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"]
        );
        let i = json!({"spec": {"ingressClassName": "nginx", "tls": [{}],
            "rules": [{"host": "a.example"}, {}, {"host": "b.example"}, {"host": "c.example"}, {"host": "d.example"}]},
            "status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.2"}, {"hostname": "lb.some.long.example"}]}}});
        assert_eq!(
            cells(&ing, false, &i),
            [
                "nginx",
                "a.example,b.example,c.example + 2 more...",
                "10.0.0.2,lb.s...",
                "80, 443",
                "<unknown>"
            ]
        );
        assert_eq!(cells(&ing, true, &i)[2], "10.0.0.2,lb.some.long.example");
        assert_eq!(
            cells(&ing, false, &json!({}))[..4],
            ["<none>", "*", "", "80"]
        );

        let eps = res("discovery.k8s.io/v1", "EndpointSlice");
        assert_eq!(
            headers(&eps, false),
            ["ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"]
        );
        let e = json!({"addressType": "IPv4", "ports": [{"port": 80}, {"name": "metrics"}, {}],
            "endpoints": [{"addresses": ["10.0.0.1", "10.0.0.2"]}, {"addresses": ["10.0.0.3", "10.0.0.4", "10.0.0.5"]}]});
        assert_eq!(
            cells(&eps, false, &e),
            [
                "IPv4",
                "80,metrics,*",
                "10.0.0.1,10.0.0.2,10.0.0.3 + 2 more...",
                "<unknown>"
            ]
        );
        assert_eq!(cells(&eps, false, &json!({}))[1..3], ["<unset>", "<unset>"]);
    }

    /// Issue 15: events.k8s.io events print through the core printer, reading their own
    /// field names (regarding, note, series, deprecated*).
    #[test]
    fn events_of_both_groups_print_as_kubectl() {
        let core = res("v1", "Event");
        let new = res("events.k8s.io/v1", "Event");
        assert_eq!(
            headers(&core, false),
            ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
        );
        assert_eq!(headers(&new, false), headers(&core, false));
        assert_eq!(
            headers(&core, true),
            [
                "LAST SEEN",
                "TYPE",
                "REASON",
                "OBJECT",
                "SUBOBJECT",
                "SOURCE",
                "MESSAGE",
                "FIRST SEEN",
                "COUNT",
                "NAME"
            ]
        );
        let e = json!({"metadata": {"name": "web.1"}, "type": "Normal", "reason": "Scheduled",
            "regarding": {"kind": "Pod", "name": "web", "fieldPath": "spec.containers{a}"},
            "note": " assigned to node-a\n", "reportingController": "default-scheduler",
            "reportingInstance": "sched-1", "eventTime": "2026-11-21T10:03:00.000000Z",
            "series": {"count": 4, "lastObservedTime": "2026-11-21T10:04:30.000000Z"}});
        assert_eq!(
            cells(&new, true, &e),
            [
                "30s",
                "Normal",
                "Scheduled",
                "pod/web",
                "spec.containers{a}",
                "default-scheduler, sched-1",
                "assigned to node-a",
                "2m",
                "4",
                "web.1"
            ]
        );
        let old = json!({"metadata": {"name": "x"}, "type": "Warning", "reason": "BackOff",
            "involvedObject": {"kind": "Node"}, "message": "m", "source": {"component": "kubelet"},
            "firstTimestamp": "2026-11-21T10:00:00Z", "lastTimestamp": "2026-11-21T10:04:00Z", "count": 0});
        assert_eq!(
            cells(&core, true, &old),
            ["60s", "Warning", "BackOff", "node", "", "kubelet", "m", "5m", "1", "x"]
        );
        // Only eventTime: both ages come from it.
        let bare = json!({"eventTime": "2026-11-21T10:04:00.000000Z"});
        assert_eq!(cells(&new, false, &bare), ["60s", "", "", "", ""]);
    }

    #[test]
    fn pod_wide_has_nominated_node_and_readiness_gates() {
        let pod = res("v1", "Pod");
        let p = json!({"spec": {"readinessGates": [{"conditionType": "x/a"}, {"conditionType": "x/b"}]},
            "status": {"nominatedNodeName": "node-b", "conditions": [
                {"type": "x/a", "status": "True"}, {"type": "x/b", "status": "False"}, {"type": "x/b", "status": "True"}]}});
        let c = cells(&pod, true, &p);
        assert_eq!(c[c.len() - 2..], ["node-b", "1/2"]);
        let c = cells(&pod, true, &json!({}));
        assert_eq!(c[c.len() - 2..], ["<none>", "<none>"]);
        let raw = p.to_string();
        assert!(cells_agree(&raw));
    }

    /// Issue 15: CRD cells as kube-apiserver types them and kubectl prints them.
    #[test]
    fn crd_cells_follow_the_table_convertor() {
        let n = now();
        assert_eq!(crd_cell("string", None, n), "");
        assert_eq!(crd_cell("string", Some(&json!(null)), n), "");
        assert_eq!(crd_cell("string", Some(&json!(1e-7)), n), "1e-07");
        assert_eq!(crd_cell("string", Some(&json!(1500000.0)), n), "1.5e+06");
        assert_eq!(crd_cell("string", Some(&json!(0.25)), n), "0.25");
        assert_eq!(crd_cell("string", Some(&json!(7)), n), "7");
        assert_eq!(
            crd_cell(
                "string",
                Some(&json!({"b": [1, "x"], "a": {"c": true, "d": null}})),
                n
            ),
            r#"{"a":{"c":true,"d":null},"b":[1,"x"]}"#
        );
        assert_eq!(
            crd_cell("string", Some(&json!({"a": 1, "b": "x"})), n),
            r#"{"a":1,"b":"x"}"#
        );
        assert_eq!(
            crd_cell("string", Some(&json!(["x", true])), n),
            r#"["x",true]"#
        );
        assert_eq!(
            crd_cell("string", Some(&json!([1e-7, 0.25, 1e21, "<a&b>\n"])), n),
            r#"[1e-7,0.25,1e+21,"\u003ca\u0026b\u003e\n"]"#
        );
        assert_eq!(crd_cell("integer", Some(&json!(2.7)), n), "2");
        assert_eq!(crd_cell("integer", Some(&json!("2")), n), "");
        assert_eq!(crd_cell("number", Some(&json!(3.0)), n), "3");
        assert_eq!(crd_cell("number", Some(&json!(1e-7)), n), "1e-07");
        assert_eq!(crd_cell("number", Some(&json!(0.5)), n), "0.5");
        assert_eq!(crd_cell("boolean", Some(&json!(true)), n), "true");
        assert_eq!(crd_cell("boolean", Some(&json!("true")), n), "");
        assert_eq!(
            crd_cell("date", Some(&json!("2026-11-21T10:04:00Z")), n),
            "60s"
        );
        assert_eq!(crd_cell("date", Some(&json!("yesterday")), n), "<invalid>");
        for (f, go) in [
            (1e-7, "1e-07"),
            (-2.5e-5, "-2.5e-05"),
            (1e21, "1e+21"),
            (123456.0, "123456"),
            (1234567.0, "1.234567e+06"),
            (0.0001, "0.0001"),
            (3.5, "3.5"),
        ] {
            assert_eq!(go_float(f), go, "{f}");
        }
    }

    /// Every pod column plus `-L` and `--show-labels`.
    fn pod_columns() -> Vec<Column> {
        let r = Resource {
            name: "pods".into(),
            kind: "Pod".into(),
            api_version: "v1".into(),
            namespaced: true,
        };
        let mut cols = resource_columns(&r, true, None);
        for l in ["app", "missing"] {
            cols.push(Column {
                header: l.to_uppercase(),
                get: Getter::Label(l.into()),
            });
        }
        cols.push(Column {
            header: "LABELS".into(),
            get: Getter::Labels,
        });
        cols
    }

    /// The row's cells through [`RowObject`], and whether it used a [`PodView`]; asserts
    /// they equal the cells from the whole object as a [`Value`].
    fn cells_agree(raw: &str) -> bool {
        let cols = pod_columns();
        let v: Value = serde_json::from_str(raw).unwrap();
        let created = v["metadata"]["creationTimestamp"].as_str();
        let row = RowObject::parse(&cols, Some(raw));
        for c in &cols {
            assert_eq!(
                row.cell(c, created, now()),
                c.cell(&v, created, now()),
                "{} of {raw}",
                c.header
            );
        }
        matches!(row, RowObject::Pod(_))
    }

    /// A pick from `xs` (`None` leaves the key out).
    fn pick<'a>(rng: &mut rand::rngs::SmallRng, xs: &'a [Option<Value>]) -> &'a Option<Value> {
        use rand::Rng;
        &xs[rng.random_range(0..xs.len())]
    }

    fn put(m: &mut serde_json::Map<String, Value>, k: &str, v: &Option<Value>) {
        if let Some(v) = v {
            m.insert(k.into(), v.clone());
        }
    }

    /// Random well-typed pods: container and init container states, readiness, restarts,
    /// phases and reasons, deletion, IPs, nodes and labels in many combinations.
    fn random_pod(rng: &mut rand::rngs::SmallRng) -> Value {
        use rand::Rng;
        let states = [
            None,
            Some(json!(null)),
            Some(json!({})),
            Some(json!({"running": {"startedAt": "2026-11-21T09:00:00Z"}})),
            Some(json!({"running": null})),
            Some(json!({"waiting": {"reason": "CrashLoopBackOff", "message": "back-off"}})),
            Some(json!({"waiting": {"reason": "ContainerCreating"}})),
            Some(json!({"waiting": {"reason": "PodInitializing"}})),
            Some(json!({"waiting": {"reason": ""}})),
            Some(json!({"waiting": {}})),
            Some(json!({"terminated": {"exitCode": 0, "reason": "Completed"}})),
            Some(json!({"terminated": {"exitCode": 0}})),
            Some(json!({"terminated": {"exitCode": 1, "reason": "Error"}})),
            Some(json!({"terminated": {"exitCode": 137, "reason": ""}})),
            Some(json!({"terminated": {"exitCode": 2}})),
            Some(json!({"terminated": {}})),
            Some(json!({"terminated": {"reason": "OOMKilled"}})),
            Some(json!({"terminated": {"exitCode": -1, "signal": 9}})),
        ];
        let last_states = [
            None,
            Some(json!({})),
            Some(json!(null)),
            Some(json!({"terminated": {"exitCode": 1, "finishedAt": "2026-11-21T10:00:00Z"}})),
            Some(json!({"terminated": {"finishedAt": "2026-11-20T08:30:00Z"}})),
            Some(json!({"terminated": {"finishedAt": "not a time"}})),
            Some(json!({"terminated": {"finishedAt": null}})),
            Some(json!({"terminated": null})),
        ];
        let bools = [
            None,
            Some(json!(true)),
            Some(json!(false)),
            Some(json!(null)),
        ];
        let counts = [
            None,
            Some(json!(0)),
            Some(json!(1)),
            Some(json!(7)),
            Some(json!(null)),
        ];
        let strs = [
            None,
            Some(json!(null)),
            Some(json!("")),
            Some(json!("10.0.0.7")),
            Some(json!("node-a")),
        ];
        let phases = [
            None,
            Some(json!("Running")),
            Some(json!("Pending")),
            Some(json!("Succeeded")),
            Some(json!("Failed")),
            Some(json!("Unknown")),
        ];
        let reasons = [
            None,
            Some(json!("NodeLost")),
            Some(json!("Evicted")),
            Some(json!("")),
            Some(json!(null)),
        ];
        let labels = [
            None,
            Some(json!(null)),
            Some(json!({})),
            Some(json!({"app": "web", "tier": "fe"})),
            Some(json!({"tier": "be", "app": ""})),
        ];
        let statuses = |rng: &mut rand::rngs::SmallRng, n: usize| -> Value {
            (0..n)
                .map(|i| {
                    let mut c = serde_json::Map::new();
                    c.insert("name".into(), json!(format!("c{i}")));
                    put(&mut c, "state", pick(rng, &states));
                    put(&mut c, "lastState", pick(rng, &last_states));
                    put(&mut c, "ready", pick(rng, &bools));
                    put(&mut c, "restartCount", pick(rng, &counts));
                    put(&mut c, "started", pick(rng, &bools));
                    Value::Object(c)
                })
                .collect()
        };
        let containers = |n: usize| -> Value {
            (0..n)
                .map(|i| json!({"name": format!("c{i}"), "image": "busybox"}))
                .collect()
        };
        let mut meta = serde_json::Map::new();
        meta.insert("name".into(), json!("p"));
        meta.insert("creationTimestamp".into(), json!("2026-11-21T09:00:00Z"));
        put(&mut meta, "labels", pick(rng, &labels));
        if rng.random_bool(0.2) {
            meta.insert("deletionTimestamp".into(), json!("2026-11-21T10:04:00Z"));
        } else if rng.random_bool(0.1) {
            meta.insert("deletionTimestamp".into(), json!(null));
        }
        let mut spec = serde_json::Map::new();
        let n_containers = rng.random_range(0..4);
        if n_containers > 0 || rng.random_bool(0.5) {
            spec.insert("containers".into(), containers(n_containers));
        }
        let n_inits = rng.random_range(0..3);
        if n_inits > 0 && rng.random_bool(0.7) {
            spec.insert("initContainers".into(), containers(n_inits));
        }
        put(&mut spec, "nodeName", pick(rng, &strs));
        spec.insert(
            "readinessGates".into(),
            json!([{"conditionType": "x/ready"}]),
        );
        let mut status = serde_json::Map::new();
        put(&mut status, "phase", pick(rng, &phases));
        put(&mut status, "reason", pick(rng, &reasons));
        put(&mut status, "podIP", pick(rng, &strs));
        if rng.random_bool(0.3) {
            status.insert("nominatedNodeName".into(), json!("node-b"));
        }
        status.insert(
            "conditions".into(),
            json!([{"type": "Ready", "status": "False", "reason": "ReadinessGatesNotReady"}]),
        );
        if n_inits > 0 || rng.random_bool(0.1) {
            let n = if rng.random_bool(0.8) { n_inits } else { 1 };
            status.insert("initContainerStatuses".into(), statuses(rng, n));
        }
        match rng.random_range(0..6) {
            0 => {}
            1 => {
                status.insert("containerStatuses".into(), json!(null));
            }
            _ => {
                let n = if rng.random_bool(0.8) {
                    n_containers
                } else {
                    rng.random_range(0..4)
                };
                status.insert("containerStatuses".into(), statuses(rng, n));
            }
        }
        let mut pod = serde_json::Map::new();
        pod.insert("kind".into(), json!("Pod"));
        pod.insert("metadata".into(), Value::Object(meta));
        if rng.random_bool(0.95) {
            pod.insert("spec".into(), Value::Object(spec));
        }
        if rng.random_bool(0.95) {
            pod.insert("status".into(), Value::Object(status));
        }
        Value::Object(pod)
    }

    #[test]
    fn pod_view_cells_equal_the_value_cells() {
        use rand::SeedableRng;
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        let mut cells = std::collections::HashSet::new();
        for _ in 0..3000 {
            let raw = random_pod(&mut rng).to_string();
            assert!(cells_agree(&raw), "no PodView for {raw}");
            let v: Value = serde_json::from_str(&raw).unwrap();
            cells.insert(pod_status(&v, now()));
            cells.insert(pod_restarts(&v, now()));
        }
        // The pods reach the branches of the status and restart columns.
        for want in [
            "Init:0/2",
            "Init:1/2",
            "Init:CrashLoopBackOff",
            "Init:Error",
            "Init:ExitCode:2",
            "Init:OOMKilled",
            "Completed",
            "Running",
            "CrashLoopBackOff",
            "ExitCode:2",
            "ExitCode:-1",
            "Terminating",
            "Unknown",
            "Evicted",
            "Pending",
            "",
            "7 (5m ago)",
            "8 (25h ago)",
            "14",
        ] {
            assert!(cells.contains(want), "no pod gave {want:?}: {cells:?}");
        }
    }

    #[test]
    fn pod_view_falls_back_to_the_value_on_other_types() {
        let pods = [
            r#"{"status":{"containerStatuses":[{"ready":"true","state":{"running":{}}}]}}"#,
            r#"{"status":{"containerStatuses":[{"restartCount":1.0}]}}"#,
            r#"{"status":{"containerStatuses":[{"restartCount":9223372036854775808}]}}"#,
            r#"{"status":{"containerStatuses":[{"ready":true,"state":{"running":[]}}]}}"#,
            r#"{"status":{"containerStatuses":[{"state":{"terminated":[0,"Done"]}}]}}"#,
            r#"{"status":{"containerStatuses":[{"state":{"terminated":{"exitCode":"1"}}}]}}"#,
            r#"{"status":{"containerStatuses":[{"state":{"waiting":{"reason":5}}}]}}"#,
            r#"{"status":{"containerStatuses":[{"state":{"waiting":{"reason":"Crash\u004coop"}}}]}}"#,
            r#"{"status":{"containerStatuses":[["ready",true]]}}"#,
            r#"{"status":{"containerStatuses":{"0":{"ready":true}}}}"#,
            r#"{"status":{"initContainerStatuses":[{"state":{"terminated":{"exitCode":0.0}}}]}}"#,
            r#"{"status":{"phase":"Running","phase":"Failed"}}"#,
            r#"{"status":{"phase":"Running"},"status":{"phase":"Failed"}}"#,
            r#"{"status":{"podIP":5,"phase":"Running"}}"#,
            r#"{"status":["Running"]}"#,
            r#"{"spec":{"containers":{"a":{}}},"status":{"containerStatuses":[{}]}}"#,
            r#"{"spec":{"nodeName":{"n":1}}}"#,
            r#"{"metadata":{"deletionTimestamp":0},"status":{"phase":"Running"}}"#,
            r#"{"metadata":{"labels":{"app":1,"tier":"fe"}}}"#,
            r#"{"metadata":{"labels":["app"]}}"#,
            r#"{"metadata":{"labels":{"a\"pp":"web"}}}"#,
            r#"{"metadata":{"labels":{"app":"web"},"labels":{"tier":"fe"}}}"#,
        ];
        for raw in pods {
            assert!(PodView::parse(raw).is_none(), "{raw}");
            assert!(!cells_agree(raw), "{raw}");
        }
    }

    #[test]
    fn restart_counts_that_overflow_saturate() {
        let raw = r#"{"status":{"containerStatuses":[{"restartCount":9223372036854775807},{"restartCount":5}]}}"#;
        assert!(cells_agree(raw));
        let row = RowObject::parse(&pod_columns(), Some(raw));
        let restarts = pod_columns()
            .into_iter()
            .find(|c| c.header == "RESTARTS")
            .unwrap();
        assert_eq!(row.cell(&restarts, None, now()), i64::MAX.to_string());
    }

    #[test]
    fn pod_view_reads_repeated_label_keys_as_a_value_map_does() {
        let raw = r#"{"metadata":{"labels":{"app":"web","tier":"fe","app":"db"}}}"#;
        assert!(cells_agree(raw));
        let p = PodView::parse(raw).unwrap();
        assert_eq!(p.labels().unwrap().0, [("app", "db"), ("tier", "fe")]);
    }

    /// Replaces some members and elements of `v` (and adds some pod keys) with values of
    /// other JSON types.
    fn corrupt(rng: &mut rand::rngs::SmallRng, v: &mut Value) {
        use rand::Rng;
        let others = [
            json!(null),
            json!(1),
            json!(0),
            json!(2.5),
            json!(0.0),
            json!("x"),
            json!(""),
            json!(true),
            json!(false),
            json!([]),
            json!([{}]),
            json!({}),
            json!({"a": 1}),
            json!(["a"]),
            json!("Completed"),
            json!("True"),
            json!("NodeLost"),
            json!("2026-11-21T10:00:00Z"),
        ];
        match v {
            Value::Object(m) => {
                for (_, x) in m.iter_mut() {
                    if rng.random_bool(0.08) {
                        *x = others[rng.random_range(0..others.len())].clone();
                    } else {
                        corrupt(rng, x);
                    }
                }
                if rng.random_bool(0.05) {
                    let keys = [
                        "ready",
                        "state",
                        "running",
                        "terminated",
                        "waiting",
                        "reason",
                        "exitCode",
                        "restartCount",
                        "phase",
                        "podIP",
                        "nodeName",
                        "labels",
                        "deletionTimestamp",
                        "containers",
                        "initContainers",
                        "conditions",
                        "readinessGates",
                        "conditionType",
                        "type",
                        "status",
                        "lastState",
                        "finishedAt",
                        "nominatedNodeName",
                        "metadata",
                        "spec",
                        "containerStatuses",
                        "initContainerStatuses",
                    ];
                    m.insert(
                        keys[rng.random_range(0..keys.len())].into(),
                        others[rng.random_range(0..others.len())].clone(),
                    );
                }
            }
            Value::Array(a) => {
                for x in a.iter_mut() {
                    if rng.random_bool(0.08) {
                        *x = others[rng.random_range(0..others.len())].clone();
                    } else {
                        corrupt(rng, x);
                    }
                }
            }
            _ => {}
        }
    }

    /// Pods with members of unexpected types: whether the typed parse takes them or the row
    /// falls back to the [`Value`], the cells are those of the [`Value`].
    #[test]
    fn pod_cells_agree_on_members_of_other_types() {
        use rand::SeedableRng;
        let mut rng = rand::rngs::SmallRng::seed_from_u64(11);
        let (mut typed, mut fallback) = (0, 0);
        for _ in 0..3000 {
            let mut v = random_pod(&mut rng);
            corrupt(&mut rng, &mut v);
            if cells_agree(&v.to_string()) {
                typed += 1;
            } else {
                fallback += 1;
            }
        }
        // Both paths are exercised.
        assert!(
            typed > 100 && fallback > 100,
            "{typed} typed, {fallback} fallback"
        );
    }
}
