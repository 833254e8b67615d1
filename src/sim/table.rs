//! Server-side printing: `Table` (what kubectl asks for with `Accept: …;as=Table;…`).
//!
//! Pods and widgets match the real server's columns (widgets from the CRD's
//! additionalPrinterColumns, with typed cells); the other kinds get the columns of their
//! built-in printers in a simplified form (for kinds the simulator serves only so that
//! clients can watch them: their first columns, without the corner cases). Row objects are
//! full `PartialObjectMetadata` ([`super::partial`]).
//!
//! The kinds added for issue 19 (Endpoints, PVCs, ServiceAccounts, HPAs, PDBs, role
//! bindings, Leases, APIServices) take their column definitions from kube-apiserver's
//! printers ([`SHARED`]) and their cells from kwatch's port of those printers
//! ([`crate::output::columns`]): one port, so `kubectl get` against the simulator and
//! kwatch's table show the same cells; the genuine server is the check of the port.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Map, Value};

use super::request::{Include, TableOptions};
use super::resources::{self, ResourceDef};
use super::storage::Obj;
use crate::text::human_duration;

const POD_COLUMN_DESCRIPTIONS: &str = include_str!("ref/pod-columns.json");
const NAME_DESCRIPTION: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";

/// How a column reads its cell from an object.
#[derive(Clone, Copy)]
enum Cell {
    Of(fn(&Value) -> Value),
    /// The integer at this JSON pointer, 0 when it is absent.
    Int(&'static str),
}

impl Cell {
    fn of(self, v: &Value) -> Value {
        match self {
            Cell::Of(f) => f(v),
            Cell::Int(pointer) => json!(v.pointer(pointer).map_or(0, int)),
        }
    }
}

struct Column {
    name: &'static str,
    kind: &'static str,
    format: &'static str,
    priority: u8,
    description: &'static str,
    cell: Cell,
}

const fn col(
    name: &'static str,
    kind: &'static str,
    priority: u8,
    cell: fn(&Value) -> Value,
) -> Column {
    Column {
        name,
        kind,
        format: "",
        priority,
        description: "",
        cell: Cell::Of(cell),
    }
}

/// An integer column of priority 0 read at a JSON pointer.
const fn int_col(name: &'static str, pointer: &'static str) -> Column {
    Column {
        cell: Cell::Int(pointer),
        ..col(name, "integer", 0, |_| Value::Null)
    }
}

fn s(v: &Value) -> Value {
    match v {
        Value::String(x) if !x.is_empty() => json!(x),
        _ => json!("<none>"),
    }
}

/// Age of an RFC 3339 timestamp in kubectl's `HumanDuration` format.
pub fn human_age(ts: &str) -> String {
    let Ok(t) = ts.parse::<jiff::Timestamp>() else {
        return "<unknown>".into();
    };
    let secs = jiff::Timestamp::now().as_second() - t.as_second();
    // kubectl's HumanDuration: up to a second in the future is clock skew, "0s".
    if secs < -1 {
        return "<invalid>".into();
    }
    human_duration(Duration::from_secs(secs.max(0).unsigned_abs()))
}

fn name(v: &Value) -> Value {
    v["metadata"]["name"].clone()
}

fn age(v: &Value) -> Value {
    json!(human_age(
        v["metadata"]["creationTimestamp"].as_str().unwrap_or("")
    ))
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or(0)
}

/// `field` of each container of a pod template, comma-joined.
fn containers(template: &Value, field: &str) -> Value {
    let names: Vec<&str> = template["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| c[field].as_str().unwrap_or(""))
        .collect();
    json!(names.join(","))
}

fn count(v: &Value) -> usize {
    v.as_object().map_or(0, Map::len)
}

fn pod_ready(v: &Value) -> Value {
    let total = v["spec"]["containers"].as_array().map_or(0, Vec::len);
    let ready = v["status"]["containerStatuses"]
        .as_array()
        .map_or(0, |a| a.iter().filter(|c| c["ready"] == true).count());
    json!(format!("{ready}/{total}"))
}

fn pod_status(v: &Value) -> Value {
    if v["metadata"].get("deletionTimestamp").is_some() {
        return json!("Terminating");
    }
    let waiting = v["status"]["containerStatuses"].as_array().and_then(|a| {
        a.iter()
            .find_map(|c| c["state"]["waiting"]["reason"].as_str())
    });
    match waiting {
        Some(r) => json!(r),
        None => json!(v["status"]["phase"].as_str().unwrap_or("Unknown")),
    }
}

fn pod_restarts(v: &Value) -> Value {
    let n: i64 = v["status"]["containerStatuses"].as_array().map_or(0, |a| {
        a.iter()
            .map(|c| c["restartCount"].as_i64().unwrap_or(0))
            .sum()
    });
    json!(n.to_string())
}

fn widget_size(v: &Value) -> Value {
    v["spec"]["size"].clone()
}

fn widget_phase(v: &Value) -> Value {
    v["status"]["phase"].clone()
}

/// The columns of `def`'s Table: NAME, then its printer's.
fn columns(def: &ResourceDef) -> Vec<Column> {
    let mut cols = printer(def)();
    let name_col = Column {
        format: "name",
        description: NAME_DESCRIPTION,
        ..col("Name", "string", 0, name)
    };
    cols.insert(0, name_col);
    cols
}

/// The built-in printer (or the CRD's columns) of a resource: what follows NAME.
fn printer(def: &ResourceDef) -> fn() -> Vec<Column> {
    match def.plural {
        "pods" => pod_columns,
        "widgets" => widget_columns,
        "configmaps" => configmap_columns,
        "secrets" => secret_columns,
        "namespaces" => namespace_columns,
        "nodes" => node_columns,
        "services" => service_columns,
        "deployments" => deployment_columns,
        "replicasets" => replicaset_columns,
        "events" if def.group.is_empty() => core_event_columns,
        "events" => event_columns,
        "statefulsets" => statefulset_columns,
        "daemonsets" => daemonset_columns,
        "jobs" => job_columns,
        "cronjobs" => cronjob_columns,
        "ingresses" => ingress_columns,
        "endpointslices" => endpointslice_columns,
        "storageclasses" => storageclass_columns,
        "priorityclasses" => priorityclass_columns,
        "ingressclasses" => ingressclass_columns,
        "networkpolicies" => networkpolicy_columns,
        "resourcequotas" => resourcequota_columns,
        "persistentvolumes" => persistentvolume_columns,
        _ => created_at_columns,
    }
}

/// A resource without a printer: kube-apiserver's default table (NAME, CREATED AT).
fn created_at_columns() -> Vec<Column> {
    vec![Column {
        name: "Created At",
        kind: "date",
        ..col("", "", 0, |v| v["metadata"]["creationTimestamp"].clone())
    }]
}

fn pod_columns() -> Vec<Column> {
    vec![
        col("Ready", "string", 0, pod_ready),
        col("Status", "string", 0, pod_status),
        col("Restarts", "string", 0, pod_restarts),
        col("Age", "string", 0, age),
        col("IP", "string", 1, |v| s(&v["status"]["podIP"])),
        col("Node", "string", 1, |v| s(&v["spec"]["nodeName"])),
        col("Nominated Node", "string", 1, |v| {
            s(&v["status"]["nominatedNodeName"])
        }),
        col("Readiness Gates", "string", 1, |_| json!("<none>")),
    ]
}

fn widget_columns() -> Vec<Column> {
    vec![
        Column {
            description: "Custom resource definition column (in JSONPath format): .spec.size",
            ..col("Size", "integer", 0, widget_size)
        },
        Column {
            description: "Custom resource definition column (in JSONPath format): .status.phase",
            ..col("Phase", "string", 0, widget_phase)
        },
        Column {
            description: "Custom resource definition column (in JSONPath format): .metadata.creationTimestamp",
            ..col("Age", "date", 0, age)
        },
    ]
}

fn configmap_columns() -> Vec<Column> {
    vec![
        col("Data", "integer", 0, |v| {
            json!(count(&v["data"]) + count(&v["binaryData"]))
        }),
        col("Age", "string", 0, age),
    ]
}

fn secret_columns() -> Vec<Column> {
    vec![
        col("Type", "string", 0, |v| v["type"].clone()),
        col("Data", "integer", 0, |v| json!(count(&v["data"]))),
        col("Age", "string", 0, age),
    ]
}

fn namespace_columns() -> Vec<Column> {
    vec![
        col("Status", "string", 0, |v| v["status"]["phase"].clone()),
        col("Age", "string", 0, age),
    ]
}

fn node_columns() -> Vec<Column> {
    vec![
        col("Status", "string", 0, |_| json!("Ready")),
        col("Roles", "string", 0, |_| json!("<none>")),
        col("Age", "string", 0, age),
        col("Version", "string", 0, |v| {
            v["status"]["nodeInfo"]["kubeletVersion"].clone()
        }),
    ]
}

fn service_columns() -> Vec<Column> {
    vec![
        col("Type", "string", 0, |v| v["spec"]["type"].clone()),
        col("Cluster-IP", "string", 0, |v| s(&v["spec"]["clusterIP"])),
        col("External-IP", "string", 0, |_| json!("<none>")),
        col("Port(s)", "string", 0, |v| {
            let ports: Vec<String> = v["spec"]["ports"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|p| {
                            format!("{}/{}", p["port"], p["protocol"].as_str().unwrap_or("TCP"))
                        })
                        .collect()
                })
                .unwrap_or_default();
            comma_list(&ports, "<none>")
        }),
        col("Age", "string", 0, age),
    ]
}

/// A string map as sorted `k=v` pairs joined by commas, `<none>` when empty
/// (metav1.FormatLabelSelector for matchLabels).
fn pairs(map: &Value) -> Value {
    let mut kv: Vec<String> = map
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, x)| format!("{k}={}", x.as_str().unwrap_or("")))
        .collect();
    kv.sort();
    comma_list(&kv, "<none>")
}

/// `items` joined by commas, as the printers show a list; `empty` when there are none.
fn comma_list<S: AsRef<str>>(items: &[S], empty: &str) -> Value {
    if items.is_empty() {
        return json!(empty);
    }
    let strs: Vec<&str> = items.iter().map(AsRef::as_ref).collect();
    json!(strs.join(","))
}

fn deployment_columns() -> Vec<Column> {
    vec![
        col("Ready", "string", 0, |v| {
            json!(format!(
                "{}/{}",
                v["status"]["readyReplicas"].as_i64().unwrap_or(0),
                v["spec"]["replicas"].as_i64().unwrap_or(0)
            ))
        }),
        int_col("Up-to-date", "/status/updatedReplicas"),
        int_col("Available", "/status/availableReplicas"),
        col("Age", "string", 0, age),
    ]
}

fn replicaset_columns() -> Vec<Column> {
    vec![
        int_col("Desired", "/spec/replicas"),
        int_col("Current", "/status/replicas"),
        int_col("Ready", "/status/readyReplicas"),
        col("Age", "string", 0, age),
    ]
}

/// An event's object as `kind/name`, the kind in lower case.
fn kind_name(o: &Value) -> Value {
    json!(format!(
        "{}/{}",
        o["kind"].as_str().unwrap_or("").to_lowercase(),
        o["name"].as_str().unwrap_or("")
    ))
}

/// core/v1 events.
fn core_event_columns() -> Vec<Column> {
    vec![
        col("Type", "string", 0, |v| v["type"].clone()),
        col("Reason", "string", 0, |v| v["reason"].clone()),
        col("Object", "string", 0, |v| kind_name(&v["involvedObject"])),
        col("Message", "string", 0, |v| v["message"].clone()),
    ]
}

/// events.k8s.io/v1 events.
fn event_columns() -> Vec<Column> {
    vec![
        col("Last Seen", "string", 0, |v| {
            let t = v["deprecatedLastTimestamp"]
                .as_str()
                .or(v["eventTime"].as_str());
            json!(human_age(t.unwrap_or("")))
        }),
        col("Type", "string", 0, |v| v["type"].clone()),
        col("Reason", "string", 0, |v| v["reason"].clone()),
        col("Object", "string", 0, |v| kind_name(&v["regarding"])),
        col("Message", "string", 0, |v| {
            json!(v["note"].as_str().unwrap_or("").trim())
        }),
    ]
}

fn statefulset_columns() -> Vec<Column> {
    vec![
        col("Ready", "string", 0, |v| {
            json!(format!(
                "{}/{}",
                int(&v["status"]["readyReplicas"]),
                int(&v["spec"]["replicas"])
            ))
        }),
        col("Age", "string", 0, age),
        col("Containers", "string", 1, |v| {
            containers(&v["spec"]["template"], "name")
        }),
        col("Images", "string", 1, |v| {
            containers(&v["spec"]["template"], "image")
        }),
    ]
}

fn daemonset_columns() -> Vec<Column> {
    vec![
        int_col("Desired", "/status/desiredNumberScheduled"),
        int_col("Current", "/status/currentNumberScheduled"),
        int_col("Ready", "/status/numberReady"),
        int_col("Up-to-date", "/status/updatedNumberScheduled"),
        int_col("Available", "/status/numberAvailable"),
        col("Node Selector", "string", 0, |v| {
            pairs(&v["spec"]["template"]["spec"]["nodeSelector"])
        }),
        col("Age", "string", 0, age),
    ]
}

fn job_columns() -> Vec<Column> {
    vec![
        col("Status", "string", 0, |v| {
            let has = |t: &str| {
                v["status"]["conditions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|c| c["type"] == t && c["status"] == "True")
            };
            json!(if has("Complete") {
                "Complete"
            } else if has("Failed") {
                "Failed"
            } else {
                "Running"
            })
        }),
        col("Completions", "string", 0, |v| {
            let s = int(&v["status"]["succeeded"]);
            json!(match v["spec"]["completions"].as_i64() {
                Some(c) => format!("{s}/{c}"),
                None => format!("{s}/1"),
            })
        }),
        col("Duration", "string", 0, |v| {
            json!(v["status"]["startTime"]
                .as_str()
                .map(human_age)
                .unwrap_or_default())
        }),
        col("Age", "string", 0, age),
    ]
}

fn cronjob_columns() -> Vec<Column> {
    vec![
        col("Schedule", "string", 0, |v| v["spec"]["schedule"].clone()),
        col("Timezone", "string", 0, |v| s(&v["spec"]["timeZone"])),
        col("Suspend", "boolean", 0, |v| {
            json!(match v["spec"]["suspend"].as_bool() {
                Some(true) => "True",
                Some(false) => "False",
                None => "<unset>",
            })
        }),
        col("Active", "integer", 0, |v| {
            json!(v["status"]["active"].as_array().map_or(0, Vec::len))
        }),
        col("Last Schedule", "string", 0, |v| {
            json!(v["status"]["lastScheduleTime"]
                .as_str()
                .map_or("<none>".to_owned(), human_age))
        }),
        col("Age", "string", 0, age),
    ]
}

fn ingress_columns() -> Vec<Column> {
    vec![
        col("Class", "string", 0, |v| s(&v["spec"]["ingressClassName"])),
        col("Hosts", "string", 0, |v| {
            let hosts: Vec<&str> = v["spec"]["rules"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|r| r["host"].as_str())
                .filter(|h| !h.is_empty())
                .collect();
            comma_list(&hosts, "*")
        }),
        col("Address", "string", 0, |_| json!("")),
        col("Ports", "string", 0, |v| {
            let tls = v["spec"]["tls"].as_array().is_some_and(|t| !t.is_empty());
            json!(if tls { "80, 443" } else { "80" })
        }),
        col("Age", "string", 0, age),
    ]
}

fn endpointslice_columns() -> Vec<Column> {
    vec![
        col("AddressType", "string", 0, |v| v["addressType"].clone()),
        col("Ports", "string", 0, |v| {
            let p: Vec<String> = v["ports"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|p| match (p["port"].as_i64(), p["name"].as_str()) {
                    (Some(n), _) => n.to_string(),
                    (None, Some(n)) => n.to_owned(),
                    _ => "*".to_owned(),
                })
                .collect();
            comma_list(&p, "<unset>")
        }),
        col("Endpoints", "string", 0, |v| {
            let a: Vec<&str> = v["endpoints"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|e| e["addresses"].as_array().into_iter().flatten())
                .filter_map(Value::as_str)
                .collect();
            comma_list(&a, "<unset>")
        }),
        col("Age", "string", 0, age),
    ]
}

/// The printers of kinds kwatch has none for (kubernetes 1.32 pkg/printers/internalversion
/// printers.go): kwatch shows the server's Table for them, and these are its columns.
fn storageclass_columns() -> Vec<Column> {
    vec![
        col("Provisioner", "string", 0, |v| v["provisioner"].clone()),
        col("ReclaimPolicy", "string", 0, |v| {
            json!(v["reclaimPolicy"].as_str().unwrap_or("Delete"))
        }),
        col("VolumeBindingMode", "string", 0, |v| {
            json!(v["volumeBindingMode"].as_str().unwrap_or("Immediate"))
        }),
        col("AllowVolumeExpansion", "string", 0, |v| {
            json!(v["allowVolumeExpansion"].as_bool().unwrap_or(false))
        }),
        col("Age", "string", 0, age),
    ]
}

fn priorityclass_columns() -> Vec<Column> {
    vec![
        col("Value", "integer", 0, |v| json!(int(&v["value"]))),
        col("Global-Default", "boolean", 0, |v| {
            json!(v["globalDefault"].as_bool().unwrap_or(false))
        }),
        col("Age", "string", 0, age),
        col("PreemptionPolicy", "string", 0, |v| {
            json!(v["preemptionPolicy"]
                .as_str()
                .unwrap_or("PreemptLowerPriority"))
        }),
    ]
}

fn ingressclass_columns() -> Vec<Column> {
    vec![
        col("Controller", "string", 0, |v| {
            v["spec"]["controller"].clone()
        }),
        col("Parameters", "string", 0, |v| {
            let p = &v["spec"]["parameters"];
            if !p.is_object() {
                return json!("<none>");
            }
            let mut kind = p["kind"].as_str().unwrap_or("").to_owned();
            if let Some(g) = p["apiGroup"].as_str() {
                kind = format!("{kind}.{g}");
            }
            json!(format!("{kind}/{}", p["name"].as_str().unwrap_or("")))
        }),
        col("Age", "string", 0, age),
    ]
}

fn networkpolicy_columns() -> Vec<Column> {
    vec![
        col("Pod-Selector", "string", 0, |v| {
            pairs(&v["spec"]["podSelector"]["matchLabels"])
        }),
        col("Age", "string", 0, age),
    ]
}

/// `status.hard` against `status.used`, `limits.*` in LIMIT, the rest in REQUEST.
fn quota_cell(v: &Value, limits: bool) -> Value {
    let hard = v["status"]["hard"].as_object();
    let mut names: Vec<&String> = hard.into_iter().flat_map(|m| m.keys()).collect();
    names.sort();
    let parts: Vec<String> = names
        .into_iter()
        .filter(|n| n.starts_with("limits.") == limits)
        .map(|n| {
            let used = v["status"]["used"][n.as_str()].as_str().unwrap_or("0");
            let hard = v["status"]["hard"][n.as_str()].as_str().unwrap_or("0");
            format!("{n}: {used}/{hard}")
        })
        .collect();
    json!(parts.join(", "))
}

fn resourcequota_columns() -> Vec<Column> {
    vec![
        col("Request", "string", 0, |v| quota_cell(v, false)),
        col("Limit", "string", 0, |v| quota_cell(v, true)),
        col("Age", "string", 0, age),
    ]
}

fn persistentvolume_columns() -> Vec<Column> {
    vec![
        col("Capacity", "string", 0, |v| {
            json!(v["spec"]["capacity"]["storage"].as_str().unwrap_or(""))
        }),
        col("Access Modes", "string", 0, |v| {
            json!(crate::output::columns::access_modes(
                &v["spec"]["accessModes"]
            ))
        }),
        col("Reclaim Policy", "string", 0, |v| {
            json!(v["spec"]["persistentVolumeReclaimPolicy"]
                .as_str()
                .unwrap_or(""))
        }),
        col("Status", "string", 0, |v| {
            if v["metadata"].get("deletionTimestamp").is_some() {
                return json!("Terminating");
            }
            json!(v["status"]["phase"].as_str().unwrap_or(""))
        }),
        col("Claim", "string", 0, |v| {
            let c = &v["spec"]["claimRef"];
            json!(match (c["namespace"].as_str(), c["name"].as_str()) {
                (Some(ns), Some(n)) => format!("{ns}/{n}"),
                _ => String::new(),
            })
        }),
        col("StorageClass", "string", 0, |v| {
            json!(v["spec"]["storageClassName"].as_str().unwrap_or(""))
        }),
        col("VolumeAttributesClass", "string", 0, |v| {
            json!(v["spec"]["volumeAttributesClassName"]
                .as_str()
                .unwrap_or("<unset>"))
        }),
        col("Reason", "string", 0, |v| {
            json!(v["status"]["reason"].as_str().unwrap_or(""))
        }),
        col("Age", "string", 0, age),
        col("VolumeMode", "string", 1, |v| {
            json!(v["spec"]["volumeMode"].as_str().unwrap_or("<unset>"))
        }),
    ]
}

fn list_meta(rv: Option<u64>, token: Option<&str>, remaining: Option<u64>) -> Value {
    let mut m = Map::new();
    if let Some(rv) = rv {
        m.insert("resourceVersion".into(), json!(rv.to_string()));
    }
    if let Some(t) = token {
        m.insert("continue".into(), json!(t));
    }
    if let Some(r) = remaining {
        m.insert("remainingItemCount".into(), json!(r));
    }
    Value::Object(m)
}

/// A column of [`SHARED`]: its Table name, type and priority, and whether the server's
/// cell is an int64 (a JSON number) rather than a string.
type SharedColumn = (&'static str, &'static str, u8, bool);

/// kube-apiserver 1.32's column definitions (after Name) of the kinds whose cells come
/// from kwatch's printers, in kwatch's column order (printers.go `AddHandlers`;
/// kube-aggregator's apiservice `ConvertToTable`).
const SHARED: &[(&str, &[SharedColumn])] = &[
    ("endpoints", &[text_col("Endpoints"), AGE]),
    (
        "persistentvolumeclaims",
        &[
            text_col("Status"),
            text_col("Volume"),
            text_col("Capacity"),
            text_col("Access Modes"),
            text_col("StorageClass"),
            text_col("VolumeAttributesClass"),
            AGE,
            ("VolumeMode", "string", 1, false),
        ],
    ),
    ("serviceaccounts", &[("Secrets", "string", 0, true), AGE]),
    (
        "horizontalpodautoscalers",
        &[
            text_col("Reference"),
            text_col("Targets"),
            text_col("MinPods"),
            ("MaxPods", "string", 0, true),
            ("Replicas", "string", 0, true),
            AGE,
        ],
    ),
    (
        "poddisruptionbudgets",
        &[
            text_col("Min Available"),
            text_col("Max Unavailable"),
            ("Allowed Disruptions", "integer", 0, true),
            AGE,
        ],
    ),
    ("rolebindings", BINDING),
    ("clusterrolebindings", BINDING),
    ("leases", &[text_col("Holder"), AGE]),
    (
        "apiservices",
        &[text_col("Service"), text_col("Available"), AGE],
    ),
];

const AGE: SharedColumn = text_col("Age");

/// A string column of priority 0 whose cell the server sends as a string.
const fn text_col(name: &'static str) -> SharedColumn {
    (name, "string", 0, false)
}

const BINDING: &[SharedColumn] = &[
    text_col("Role"),
    AGE,
    ("Users", "string", 1, false),
    ("Groups", "string", 1, false),
    ("ServiceAccounts", "string", 1, false),
];

/// The Table of a kind in [`SHARED`]: cells from kwatch's printer (`-o wide`'s columns,
/// which are the server's with priority 1 among them).
fn shared_table(
    def: &ResourceDef,
    cols: &[SharedColumn],
    items: &[Arc<Obj>],
    include: Include,
) -> (Vec<Value>, Vec<Value>) {
    use crate::output::columns::resource_columns;
    let r = crate::client::target::Resource {
        name: def.plural.into(),
        kind: def.kind.into(),
        api_version: def.api_version(),
        namespaced: def.namespaced,
    };
    let printer = resource_columns(&r, true, None);
    let mut defs = vec![
        json!({"name": "Name", "type": "string", "format": "name", "description": NAME_DESCRIPTION, "priority": 0}),
    ];
    defs.extend(cols.iter().map(|(name, kind, priority, _)| {
        json!({"name": name, "type": kind, "format": "", "description": "", "priority": priority})
    }));
    let now = jiff::Timestamp::now();
    let rows = items
        .iter()
        .map(|o| {
            let v = o.value();
            let created = v["metadata"]["creationTimestamp"].as_str();
            let mut cells = vec![name(&v)];
            for (c, (_, _, _, int)) in printer.iter().zip(cols) {
                let text = c.cell(&v, created, now);
                cells.push(match text.parse::<i64>() {
                    Ok(n) if *int => json!(n),
                    _ => json!(text),
                });
            }
            json!({"cells": cells, "object": row_object(&v, include)})
        })
        .collect();
    (defs, rows)
}

/// A row's `object` under `includeObject` (apiserver's response.go `asTable`): the object
/// as stored, its PartialObjectMetadata, or `null`.
fn row_object(v: &Value, include: Include) -> Value {
    match include {
        Include::Object => v.clone(),
        Include::Metadata => super::partial::from_value(v),
        Include::None => Value::Null,
    }
}

/// A `Table` of `items`. `rv` is the list's revision (`None` for a single object: the
/// object's own resourceVersion). With `opts.no_headers` the column definitions are
/// `null`, as metav1.Table encodes them when the convertor leaves them out.
pub fn table(
    def: &ResourceDef,
    items: &[Arc<Obj>],
    rv: Option<u64>,
    token: Option<&str>,
    remaining: Option<u64>,
    opts: TableOptions,
) -> Value {
    let rv = rv.or_else(|| items.first().map(|o| o.rv));
    let headers = |defs: Vec<Value>| {
        if opts.no_headers {
            Value::Null
        } else {
            Value::Array(defs)
        }
    };
    if let Some((_, cols)) = SHARED.iter().find(|(p, _)| *p == def.plural) {
        let (defs, rows) = shared_table(def, cols, items, opts.include);
        return json!({
            "kind": "Table",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": list_meta(rv, token, remaining),
            "columnDefinitions": headers(defs),
            "rows": rows,
        });
    }
    let cols = columns(def);
    let descriptions: Vec<String> = if def.plural == resources::RESOURCES[resources::PODS].plural {
        serde_json::from_str(POD_COLUMN_DESCRIPTIONS).unwrap_or_default()
    } else {
        Vec::new()
    };
    let defs: Vec<Value> = cols
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let d = descriptions.get(i).map(String::as_str).unwrap_or(c.description);
            json!({"name": c.name, "type": c.kind, "format": c.format, "description": d, "priority": c.priority})
        })
        .collect();
    let rows: Vec<Value> = items
        .iter()
        .map(|o| {
            let v = o.value();
            let cells: Vec<Value> = cols.iter().map(|c| c.cell.of(&v)).collect();
            json!({
                "cells": cells,
                "object": row_object(&v, opts.include),
            })
        })
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_meta(rv, token, remaining),
        "columnDefinitions": headers(defs),
        "rows": rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 19: every SHARED kind's columns are kwatch's wide columns, one for one.
    #[test]
    fn shared_columns_are_kwatchs_printers() {
        for (plural, cols) in SHARED {
            let def = def_of(plural);
            let r = crate::client::target::Resource {
                name: def.plural.into(),
                kind: def.kind.into(),
                api_version: def.api_version(),
                namespaced: def.namespaced,
            };
            let ours: Vec<String> = crate::output::columns::resource_columns(&r, true, None)
                .into_iter()
                .map(|c| c.header)
                .collect();
            let theirs: Vec<String> = cols.iter().map(|c| c.0.to_uppercase()).collect();
            assert_eq!(ours, theirs, "{plural}");
        }
    }

    fn def_of(plural: &str) -> &'static ResourceDef {
        resources::RESOURCES
            .iter()
            .find(|r| r.plural == plural)
            .unwrap()
    }

    #[test]
    fn widget_table_has_typed_cells() {
        let def = &resources::RESOURCES[resources::WIDGETS];
        let o = Obj::from_value(
            resources::WIDGETS,
            json!({"metadata":{"name":"w1","namespace":"ns","resourceVersion":"5","creationTimestamp":"2020-01-01T00:00:00Z"},"spec":{"size":3}}),
        );
        let t = table(
            def,
            &[Arc::new(o)],
            Some(7),
            None,
            None,
            TableOptions::default(),
        );
        assert_eq!(t["rows"][0]["cells"][0], "w1");
        assert_eq!(t["rows"][0]["cells"][1], 3);
        assert_eq!(t["rows"][0]["cells"][2], Value::Null);
        assert_eq!(t["columnDefinitions"][0]["name"], "Name");
        assert_eq!(t["metadata"]["resourceVersion"], "7");
    }
}
