//! Server-side printing: `Table` (what kubectl asks for with `Accept: …;as=Table;…`).
//!
//! The column definitions are a genuine kube-apiserver 1.32.13's, as it sent them
//! (`ref/table-columns.json`, taken from the Tables in
//! kwatch-core's `testdata/tables-1.32/`): names, types, descriptions and
//! priorities, `-o wide`'s among them. The widgets' follow their CRD's
//! additionalPrinterColumns. Each kind's cells ([`cells`], one per column after the name
//! column, in the server's order) are the simulator's own reading of kube-apiserver's
//! printers (printers.go), simplified: the tests below hold them against the genuine
//! server's cells for the captured objects, the simplifications listed. kwatch's printers
//! are checked against the same captures (`crates/core/src/output/columns/genuine.rs`); kubectl
//! against the simulator is a second reading of the same rules, so this file shares no
//! code with them. Row objects follow `includeObject` ([`row_object`]).

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use serde_json::{json, Map, Value};

use super::request::{Include, TableOptions};
use super::resources::ResourceDef;
use super::storage::Obj;
use kwatch_core::text::human_duration;

/// Every served kind's column definitions by resource (`plural`, `plural.group` outside
/// the core group), as a genuine kube-apiserver 1.32.13 sends them.
const TABLE_COLUMNS: &str = include_str!("ref/table-columns.json");

static DEFINITIONS: LazyLock<Map<String, Value>> =
    LazyLock::new(|| serde_json::from_str(TABLE_COLUMNS).unwrap_or_default());

/// A kind without a printer gets apiserver's default table convertor (Name, Created At):
/// the Role's, which has no printer.
const DEFAULT_TABLE: &str = "roles.rbac.authorization.k8s.io";

/// One cell of a row from the object.
type CellFn = fn(&Value) -> Value;

/// The key of `def` in [`DEFINITIONS`].
fn key(def: &ResourceDef) -> String {
    if def.group.is_empty() {
        def.plural.to_owned()
    } else {
        format!("{}.{}", def.plural, def.group)
    }
}

/// The column definitions of `def`'s Table.
fn definitions(def: &ResourceDef) -> Vec<Value> {
    let of = |k: &str| {
        DEFINITIONS
            .get(k)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    if def.custom {
        // The custom resource's table convertor: Name as every Table has it, then the
        // widgets CRD's additionalPrinterColumns (ref/crd-widgets.json).
        let mut defs: Vec<Value> = of(DEFAULT_TABLE).into_iter().take(1).collect();
        defs.extend([("Size", "integer", ".spec.size"), ("Phase", "string", ".status.phase"), ("Age", "date", ".metadata.creationTimestamp")].map(|(n, t, path)| {
            json!({"name": n, "type": t, "format": "", "priority": 0,
                "description": format!("Custom resource definition column (in JSONPath format): {path}")})
        }));
        return defs;
    }
    match DEFINITIONS.get(&key(def)) {
        Some(_) => of(&key(def)),
        None => of(DEFAULT_TABLE),
    }
}

/// The cells of `def`'s rows after the name column, in its definitions' order.
fn cells(def: &ResourceDef) -> &'static [CellFn] {
    if def.custom {
        return WIDGET;
    }
    match (def.group, def.plural) {
        ("", "pods") => POD,
        ("", "services") => SERVICE,
        ("", "endpoints") => ENDPOINTS,
        ("", "configmaps") => CONFIGMAP,
        ("", "secrets") => SECRET,
        ("", "serviceaccounts") => SERVICEACCOUNT,
        ("", "persistentvolumeclaims") => PVC,
        ("", "persistentvolumes") => PV,
        ("", "resourcequotas") => RESOURCEQUOTA,
        ("", "namespaces") => NAMESPACE,
        ("", "nodes") => NODE,
        ("", "events") => CORE_EVENT,
        ("events.k8s.io", "events") => EVENT,
        ("apps", "deployments") => DEPLOYMENT,
        ("apps", "replicasets") => REPLICASET,
        ("apps", "statefulsets") => STATEFULSET,
        ("apps", "daemonsets") => DAEMONSET,
        ("batch", "jobs") => JOB,
        ("batch", "cronjobs") => CRONJOB,
        ("autoscaling", "horizontalpodautoscalers") => HPA,
        ("policy", "poddisruptionbudgets") => PDB,
        ("networking.k8s.io", "ingresses") => INGRESS,
        ("networking.k8s.io", "ingressclasses") => INGRESSCLASS,
        ("networking.k8s.io", "networkpolicies") => NETWORKPOLICY,
        ("discovery.k8s.io", "endpointslices") => ENDPOINTSLICE,
        ("rbac.authorization.k8s.io", "rolebindings" | "clusterrolebindings") => BINDING,
        ("coordination.k8s.io", "leases") => LEASE,
        ("apiregistration.k8s.io", "apiservices") => APISERVICE,
        ("storage.k8s.io", "storageclasses") => STORAGECLASS,
        ("scheduling.k8s.io", "priorityclasses") => PRIORITYCLASS,
        _ => CREATED_AT,
    }
}

fn s(v: &Value) -> Value {
    match v {
        Value::String(x) if !x.is_empty() => json!(x),
        _ => json!("<none>"),
    }
}

/// A string, empty when absent.
fn text(v: &Value) -> Value {
    json!(v.as_str().unwrap_or(""))
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

/// A string map as sorted `k=v` pairs joined by commas, `<none>` when empty
/// (labels.FormatLabels).
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

/// metav1.FormatLabelSelector: matchLabels and matchExpressions as requirements sorted by
/// key, `<none>` for none.
fn selector(sel: &Value) -> Value {
    let mut reqs: Vec<(String, String)> = sel["matchLabels"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), format!("{k}={}", v.as_str().unwrap_or(""))))
        .collect();
    for e in sel["matchExpressions"].as_array().into_iter().flatten() {
        let k = e["key"].as_str().unwrap_or("");
        let mut values: Vec<&str> = e["values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        values.sort();
        let r = match e["operator"].as_str().unwrap_or("") {
            "In" => format!("{k} in ({})", values.join(",")),
            "NotIn" => format!("{k} notin ({})", values.join(",")),
            "Exists" => k.to_owned(),
            _ => format!("!{k}"),
        };
        reqs.push((k.to_owned(), r));
    }
    reqs.sort_by(|a, b| a.0.cmp(&b.0));
    let reqs: Vec<String> = reqs.into_iter().map(|(_, r)| r).collect();
    comma_list(&reqs, "<none>")
}

/// `items` joined by commas, as the printers show a list; `empty` when there are none.
fn comma_list<S: AsRef<str>>(items: &[S], empty: &str) -> Value {
    if items.is_empty() {
        return json!(empty);
    }
    let strs: Vec<&str> = items.iter().map(AsRef::as_ref).collect();
    json!(strs.join(","))
}

/// The first `max` of `items` joined by `sep`, then ` + N more...` (printers.go's lists).
fn first_of(items: &[String], max: usize, sep: &str) -> String {
    if items.len() > max {
        format!("{} + {} more...", items[..max].join(sep), items.len() - max)
    } else {
        items.join(sep)
    }
}

/// The first element of `list` whose `type` is `ty`.
fn of_type<'a>(list: &'a Value, ty: &str) -> Option<&'a Value> {
    list.as_array()?.iter().find(|e| e["type"] == ty)
}

/// A resource without a printer: apiserver's default table convertor.
const CREATED_AT: &[CellFn] = &[|v| v["metadata"]["creationTimestamp"].clone()];

const WIDGET: &[CellFn] = &[
    |v| v["spec"]["size"].clone(),
    |v| v["status"]["phase"].clone(),
    age,
];

const POD: &[CellFn] = &[
    pod_ready,
    pod_status,
    pod_restarts,
    age,
    |v| s(&v["status"]["podIP"]),
    |v| s(&v["spec"]["nodeName"]),
    |v| s(&v["status"]["nominatedNodeName"]),
    |_| json!("<none>"),
];

fn pod_ready(v: &Value) -> Value {
    let sidecars = v["spec"]["initContainers"].as_array().map_or(0, |a| {
        a.iter().filter(|c| c["restartPolicy"] == "Always").count()
    });
    let total = v["spec"]["containers"].as_array().map_or(0, Vec::len) + sidecars;
    let ready = v["status"]["containerStatuses"]
        .as_array()
        .map_or(0, |a| a.iter().filter(|c| c["ready"] == true).count());
    json!(format!("{ready}/{total}"))
}

fn pod_status(v: &Value) -> Value {
    if v["metadata"].get("deletionTimestamp").is_some() {
        return json!("Terminating");
    }
    // A waiting or terminated container's reason, the first container's winning.
    let reason = v["status"]["containerStatuses"].as_array().and_then(|a| {
        a.iter().rev().fold(None, |r, c| {
            let state = &c["state"];
            let term = &state["terminated"];
            state["waiting"]["reason"]
                .as_str()
                .map(str::to_owned)
                .or_else(|| term["reason"].as_str().map(str::to_owned))
                .or_else(|| {
                    (term.is_object()).then(|| format!("ExitCode:{}", int(&term["exitCode"])))
                })
                .or(r)
        })
    });
    match reason {
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

/// A load balancer's ingress points: IPs, else hostnames (printers.go
/// `loadBalancerStatusStringer`, as the server prints it: wide).
fn lb_ingress(v: &Value) -> Vec<&str> {
    v["status"]["loadBalancer"]["ingress"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| {
            let ip = i["ip"].as_str().filter(|s| !s.is_empty());
            ip.or_else(|| i["hostname"].as_str().filter(|s| !s.is_empty()))
        })
        .collect()
}

/// printers.go `getServiceExternalIP`.
fn service_external_ip(v: &Value) -> Value {
    let external: Vec<&str> = v["spec"]["externalIPs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    match v["spec"]["type"].as_str().unwrap_or("ClusterIP") {
        "ExternalName" => s(&v["spec"]["externalName"]),
        "LoadBalancer" => {
            let all: Vec<&str> = lb_ingress(v).into_iter().chain(external).collect();
            comma_list(&all, "<pending>")
        }
        _ => comma_list(&external, "<none>"),
    }
}

const SERVICE: &[CellFn] = &[
    |v| v["spec"]["type"].clone(),
    |v| s(&v["spec"]["clusterIP"]),
    service_external_ip,
    |v| {
        let ports: Vec<String> = v["spec"]["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| {
                let proto = p["protocol"].as_str().unwrap_or("TCP");
                match p["nodePort"].as_i64() {
                    Some(n) => format!("{}:{n}/{proto}", p["port"]),
                    None => format!("{}/{proto}", p["port"]),
                }
            })
            .collect();
        comma_list(&ports, "<none>")
    },
    age,
    |v| pairs(&v["spec"]["selector"]),
];

/// printers.go `formatEndpoints`: `ip:port` per port and address (IPv6 bracketed), the
/// first three and ` + N more...`; `<none>` without subsets.
const ENDPOINTS: &[CellFn] = &[
    |v| {
        let Some(subsets) = v["subsets"].as_array().filter(|s| !s.is_empty()) else {
            return json!("<none>");
        };
        let mut list = Vec::new();
        for ss in subsets {
            let addrs: Vec<&str> = ss["addresses"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|a| a["ip"].as_str().unwrap_or(""))
                .collect();
            match ss["ports"].as_array().filter(|p| !p.is_empty()) {
                None => list.extend(addrs.iter().map(|a| (*a).to_owned())),
                Some(ports) => {
                    for p in ports {
                        list.extend(addrs.iter().map(|a| match a.contains(':') {
                            true => format!("[{a}]:{}", p["port"]),
                            false => format!("{a}:{}", p["port"]),
                        }));
                    }
                }
            }
        }
        json!(first_of(&list, 3, ","))
    },
    age,
];

const CONFIGMAP: &[CellFn] = &[|v| json!(count(&v["data"]) + count(&v["binaryData"])), age];

const SECRET: &[CellFn] = &[|v| v["type"].clone(), |v| json!(count(&v["data"])), age];

const SERVICEACCOUNT: &[CellFn] = &[|v| json!(v["secrets"].as_array().map_or(0, Vec::len)), age];

/// `GetAccessModesAsString`: RWO, ROX, RWX, RWOP in that order, each once.
fn access_modes(modes: &Value) -> Value {
    let has = |m: &str| modes.as_array().is_some_and(|a| a.iter().any(|x| x == m));
    let short: Vec<&str> = [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ]
    .into_iter()
    .filter(|(m, _)| has(m))
    .map(|(_, s)| s)
    .collect();
    json!(short.join(","))
}

/// printers.go `printPersistentVolumeClaim`: capacity and access modes only once bound.
const PVC: &[CellFn] = &[
    |v| match v["metadata"].get("deletionTimestamp") {
        Some(_) => json!("Terminating"),
        None => text(&v["status"]["phase"]),
    },
    |v| text(&v["spec"]["volumeName"]),
    |v| match v["spec"]["volumeName"].as_str() {
        Some(n) if !n.is_empty() => text(&v["status"]["capacity"]["storage"]),
        _ => json!(""),
    },
    |v| match v["spec"]["volumeName"].as_str() {
        Some(n) if !n.is_empty() => access_modes(&v["status"]["accessModes"]),
        _ => json!(""),
    },
    |v| {
        let beta = &v["metadata"]["annotations"]["volume.beta.kubernetes.io/storage-class"];
        match beta.as_str() {
            Some(c) => json!(c),
            None => text(&v["spec"]["storageClassName"]),
        }
    },
    |v| match v["spec"]["volumeAttributesClassName"].as_str() {
        Some(c) if !c.is_empty() => json!(c),
        _ => json!("<unset>"),
    },
    age,
    |v| json!(v["spec"]["volumeMode"].as_str().unwrap_or("<unset>")),
];

const PV: &[CellFn] = &[
    |v| text(&v["spec"]["capacity"]["storage"]),
    |v| access_modes(&v["spec"]["accessModes"]),
    |v| text(&v["spec"]["persistentVolumeReclaimPolicy"]),
    |v| match v["metadata"].get("deletionTimestamp") {
        Some(_) => json!("Terminating"),
        None => text(&v["status"]["phase"]),
    },
    |v| {
        let c = &v["spec"]["claimRef"];
        json!(match (c["namespace"].as_str(), c["name"].as_str()) {
            (Some(ns), Some(n)) => format!("{ns}/{n}"),
            _ => String::new(),
        })
    },
    |v| text(&v["spec"]["storageClassName"]),
    |v| {
        json!(v["spec"]["volumeAttributesClassName"]
            .as_str()
            .unwrap_or("<unset>"))
    },
    |v| text(&v["status"]["reason"]),
    age,
    |v| json!(v["spec"]["volumeMode"].as_str().unwrap_or("<unset>")),
];

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

const RESOURCEQUOTA: &[CellFn] = &[age, |v| quota_cell(v, false), |v| quota_cell(v, true)];

const NAMESPACE: &[CellFn] = &[|v| v["status"]["phase"].clone(), age];

/// A node's address of type `ty`, `<none>` without one.
fn node_address(v: &Value, ty: &str) -> Value {
    of_type(&v["status"]["addresses"], ty).map_or(json!("<none>"), |a| text(&a["address"]))
}

/// A field of `status.nodeInfo`, `<unknown>` when empty.
fn node_info(v: &Value, field: &str) -> Value {
    match v["status"]["nodeInfo"][field].as_str() {
        Some(s) if !s.is_empty() => json!(s),
        _ => json!("<unknown>"),
    }
}

const NODE: &[CellFn] = &[
    |v| match of_type(&v["status"]["conditions"], "Ready") {
        Some(c) if c["status"] == "True" => json!("Ready"),
        Some(_) => json!("NotReady"),
        None => json!("Unknown"),
    },
    |_| json!("<none>"),
    age,
    |v| text(&v["status"]["nodeInfo"]["kubeletVersion"]),
    |v| node_address(v, "InternalIP"),
    |v| node_address(v, "ExternalIP"),
    |v| node_info(v, "osImage"),
    |v| node_info(v, "kernelVersion"),
    |v| node_info(v, "containerRuntimeVersion"),
];

/// The fields of an event printers.go `printEvent` reads, by API: core/v1's names, or
/// events.k8s.io/v1's (which the server converts to core/v1 to print).
struct EventFields {
    object: &'static str,
    message: &'static str,
    source: &'static str,
    first: &'static str,
    last: &'static str,
    count: &'static str,
    controller: &'static str,
}

const CORE_FIELDS: EventFields = EventFields {
    object: "involvedObject",
    message: "message",
    source: "source",
    first: "firstTimestamp",
    last: "lastTimestamp",
    count: "count",
    controller: "reportingComponent",
};

const NEW_FIELDS: EventFields = EventFields {
    object: "regarding",
    message: "note",
    source: "deprecatedSource",
    first: "deprecatedFirstTimestamp",
    last: "deprecatedLastTimestamp",
    count: "deprecatedCount",
    controller: "reportingController",
};

const fn fields(new: bool) -> &'static EventFields {
    if new {
        &NEW_FIELDS
    } else {
        &CORE_FIELDS
    }
}

fn first_seen(v: &Value, f: &EventFields) -> String {
    let t = v[f.first].as_str().or(v["eventTime"].as_str());
    human_age(t.unwrap_or(""))
}

fn last_seen(v: &Value, f: &EventFields) -> String {
    if let Some(t) = v["series"]["lastObservedTime"].as_str() {
        return human_age(t);
    }
    match v[f.last].as_str() {
        Some(t) => human_age(t),
        None => first_seen(v, f),
    }
}

/// First non-empty of two strings.
fn either<'a>(a: &'a Value, b: &'a Value) -> &'a str {
    a.as_str()
        .filter(|s| !s.is_empty())
        .or(b.as_str())
        .unwrap_or("")
}

/// printers.go `printEvent`'s cells after the name's (last) column.
const fn event_cells<const NEW: bool>() -> [CellFn; 9] {
    [
        |v| json!(last_seen(v, fields(NEW))),
        |v| v["type"].clone(),
        |v| v["reason"].clone(),
        |v| {
            let o = &v[fields(NEW).object];
            let kind = o["kind"].as_str().unwrap_or("").to_lowercase();
            json!(match o["name"].as_str().unwrap_or("") {
                "" => kind,
                n => format!("{kind}/{n}"),
            })
        },
        |v| text(&v[fields(NEW).object]["fieldPath"]),
        |v| {
            let f = fields(NEW);
            let component = either(&v[f.source]["component"], &v[f.controller]);
            match either(&v[f.source]["host"], &v["reportingInstance"]) {
                "" => json!(component),
                host => json!(format!("{component}, {host}")),
            }
        },
        |v| json!(v[fields(NEW).message].as_str().unwrap_or("").trim()),
        |v| json!(first_seen(v, fields(NEW))),
        |v| match v["series"]["count"].as_i64() {
            Some(n) => json!(n),
            None => json!(v[fields(NEW).count]
                .as_i64()
                .filter(|n| *n != 0)
                .unwrap_or(1)),
        },
    ]
}

const CORE_EVENT: &[CellFn] = &event_cells::<false>();
const EVENT: &[CellFn] = &event_cells::<true>();

const DEPLOYMENT: &[CellFn] = &[
    |v| {
        json!(format!(
            "{}/{}",
            int(&v["status"]["readyReplicas"]),
            int(&v["spec"]["replicas"])
        ))
    },
    |v| json!(int(&v["status"]["updatedReplicas"])),
    |v| json!(int(&v["status"]["availableReplicas"])),
    age,
    |v| containers(&v["spec"]["template"], "name"),
    |v| containers(&v["spec"]["template"], "image"),
    |v| selector(&v["spec"]["selector"]),
];

const REPLICASET: &[CellFn] = &[
    |v| json!(int(&v["spec"]["replicas"])),
    |v| json!(int(&v["status"]["replicas"])),
    |v| json!(int(&v["status"]["readyReplicas"])),
    age,
    |v| containers(&v["spec"]["template"], "name"),
    |v| containers(&v["spec"]["template"], "image"),
    |v| selector(&v["spec"]["selector"]),
];

const STATEFULSET: &[CellFn] = &[
    |v| {
        json!(format!(
            "{}/{}",
            int(&v["status"]["readyReplicas"]),
            int(&v["spec"]["replicas"])
        ))
    },
    age,
    |v| containers(&v["spec"]["template"], "name"),
    |v| containers(&v["spec"]["template"], "image"),
];

const DAEMONSET: &[CellFn] = &[
    |v| json!(int(&v["status"]["desiredNumberScheduled"])),
    |v| json!(int(&v["status"]["currentNumberScheduled"])),
    |v| json!(int(&v["status"]["numberReady"])),
    |v| json!(int(&v["status"]["updatedNumberScheduled"])),
    |v| json!(int(&v["status"]["numberAvailable"])),
    |v| pairs(&v["spec"]["template"]["spec"]["nodeSelector"]),
    age,
    |v| containers(&v["spec"]["template"], "name"),
    |v| containers(&v["spec"]["template"], "image"),
    |v| selector(&v["spec"]["selector"]),
];

const JOB: &[CellFn] = &[
    |v| {
        let has = |t: &str| {
            v["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == t && c["status"] == "True")
        };
        let deleting = v["metadata"].get("deletionTimestamp").is_some();
        json!(match () {
            _ if has("Complete") => "Complete",
            _ if has("Failed") => "Failed",
            _ if deleting => "Terminating",
            _ if has("FailureTarget") => "FailureTarget",
            _ if has("SuccessCriteriaMet") => "SuccessCriteriaMet",
            _ if has("Suspended") => "Suspended",
            _ => "Running",
        })
    },
    |v| {
        let s = int(&v["status"]["succeeded"]);
        let parallelism = int(&v["spec"]["parallelism"]);
        json!(match v["spec"]["completions"].as_i64() {
            Some(c) => format!("{s}/{c}"),
            None if parallelism > 1 => format!("{s}/1 of {parallelism}"),
            None => format!("{s}/1"),
        })
    },
    |v| {
        json!(v["status"]["startTime"]
            .as_str()
            .map(human_age)
            .unwrap_or_default())
    },
    age,
    |v| containers(&v["spec"]["template"], "name"),
    |v| containers(&v["spec"]["template"], "image"),
    |v| selector(&v["spec"]["selector"]),
];

const CRONJOB: &[CellFn] = &[
    |v| v["spec"]["schedule"].clone(),
    |v| s(&v["spec"]["timeZone"]),
    |v| {
        json!(match v["spec"]["suspend"].as_bool() {
            Some(true) => "True",
            Some(false) => "False",
            None => "<unset>",
        })
    },
    |v| json!(v["status"]["active"].as_array().map_or(0, Vec::len)),
    |v| {
        json!(v["status"]["lastScheduleTime"]
            .as_str()
            .map_or("<none>".to_owned(), human_age))
    },
    age,
    |v| containers(&v["spec"]["jobTemplate"]["spec"]["template"], "name"),
    |v| containers(&v["spec"]["jobTemplate"]["spec"]["template"], "image"),
    |v| selector(&v["spec"]["jobTemplate"]["spec"]["selector"]),
];

/// printers.go `formatHPAMetrics`: `current/target` per spec metric (`<unknown>` before
/// the status has it), the first two and ` + N more...`; `<none>` without metrics.
fn hpa_targets(v: &Value) -> Value {
    let Some(specs) = v["spec"]["metrics"].as_array().filter(|m| !m.is_empty()) else {
        return json!("<none>");
    };
    let list: Vec<String> = specs
        .iter()
        .enumerate()
        .map(|(i, spec)| {
            let field = match spec["type"].as_str().unwrap_or("") {
                "Resource" => "resource",
                "ContainerResource" => "containerResource",
                "Pods" => "pods",
                "Object" => "object",
                "External" => "external",
                _ => return "<unknown type>".to_owned(),
            };
            let target = &spec[field]["target"];
            let current = &v["status"]["currentMetrics"][i][field]["current"];
            let now = |k: &str| match &current[k] {
                Value::Null => "<unknown>".to_owned(),
                Value::String(s) => s.clone(),
                n => n.to_string(),
            };
            let avg = target["averageValue"].as_str();
            match (field, avg) {
                ("pods", _) => format!("{}/{}", now("averageValue"), avg.unwrap_or("")),
                ("object" | "external", Some(a)) => {
                    format!("{}/{a} (avg)", now("averageValue"))
                }
                ("object" | "external", None) => {
                    format!(
                        "{}/{}",
                        now("value"),
                        target["value"].as_str().unwrap_or("")
                    )
                }
                (_, Some(a)) => format!(
                    "{}: {}/{a}",
                    spec[field]["name"].as_str().unwrap_or(""),
                    now("averageValue")
                ),
                (_, None) => {
                    let util = match &current["averageUtilization"] {
                        Value::Null => "<unknown>".to_owned(),
                        n => format!("{n}%"),
                    };
                    let want = match &target["averageUtilization"] {
                        Value::Null => "<auto>".to_owned(),
                        n => format!("{n}%"),
                    };
                    format!(
                        "{}: {util}/{want}",
                        spec[field]["name"].as_str().unwrap_or("")
                    )
                }
            }
        })
        .collect();
    json!(first_of(&list, 2, ", "))
}

const HPA: &[CellFn] = &[
    |v| {
        let r = &v["spec"]["scaleTargetRef"];
        json!(format!(
            "{}/{}",
            r["kind"].as_str().unwrap_or(""),
            r["name"].as_str().unwrap_or("")
        ))
    },
    hpa_targets,
    |v| match v["spec"]["minReplicas"].as_i64() {
        Some(n) => json!(n.to_string()),
        None => json!("<unset>"),
    },
    |v| json!(int(&v["spec"]["maxReplicas"])),
    |v| json!(int(&v["status"]["currentReplicas"])),
    age,
];

/// An IntOrString as it is, `N/A` when unset.
fn int_or_string(v: &Value) -> Value {
    match v {
        Value::Null => json!("N/A"),
        Value::String(s) => json!(s),
        other => json!(other.to_string()),
    }
}

const PDB: &[CellFn] = &[
    |v| int_or_string(&v["spec"]["minAvailable"]),
    |v| int_or_string(&v["spec"]["maxUnavailable"]),
    |v| json!(int(&v["status"]["disruptionsAllowed"])),
    age,
];

const INGRESS: &[CellFn] = &[
    |v| s(&v["spec"]["ingressClassName"]),
    |v| {
        let hosts: Vec<String> = v["spec"]["rules"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["host"].as_str())
            .filter(|h| !h.is_empty())
            .map(str::to_owned)
            .collect();
        match hosts.is_empty() {
            true => json!("*"),
            false => json!(first_of(&hosts, 3, ",")),
        }
    },
    |v| {
        let mut points = lb_ingress(v);
        points.sort_unstable();
        points.dedup();
        json!(points.join(","))
    },
    |v| {
        let tls = v["spec"]["tls"].as_array().is_some_and(|t| !t.is_empty());
        json!(if tls { "80, 443" } else { "80" })
    },
    age,
];

const ENDPOINTSLICE: &[CellFn] = &[
    |v| v["addressType"].clone(),
    |v| {
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
        match p.is_empty() {
            true => json!("<unset>"),
            false => json!(first_of(&p, 3, ",")),
        }
    },
    |v| {
        let a: Vec<String> = v["endpoints"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|e| e["addresses"].as_array().into_iter().flatten())
            .filter_map(|a| a.as_str().map(str::to_owned))
            .collect();
        match a.is_empty() {
            true => json!("<unset>"),
            false => json!(first_of(&a, 3, ",")),
        }
    },
    age,
];

/// The subjects of a binding of `kind`, `User` and `Group` by name, `ServiceAccount` as
/// `namespace/name`, joined by `, ` (rbac `SubjectsStrings`).
fn subjects(v: &Value, kind: &str) -> Value {
    let names: Vec<String> = v["subjects"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| s["kind"] == kind)
        .map(|s| {
            let n = s["name"].as_str().unwrap_or("");
            match kind {
                "ServiceAccount" => format!("{}/{n}", s["namespace"].as_str().unwrap_or("")),
                _ => n.to_owned(),
            }
        })
        .collect();
    json!(names.join(", "))
}

const BINDING: &[CellFn] = &[
    |v| {
        let r = &v["roleRef"];
        json!(format!(
            "{}/{}",
            r["kind"].as_str().unwrap_or(""),
            r["name"].as_str().unwrap_or("")
        ))
    },
    age,
    |v| subjects(v, "User"),
    |v| subjects(v, "Group"),
    |v| subjects(v, "ServiceAccount"),
];

const LEASE: &[CellFn] = &[|v| text(&v["spec"]["holderIdentity"]), age];

/// kube-aggregator's `ConvertToTable`: `namespace/name` or `Local`; the Available
/// condition, with its reason unless True.
const APISERVICE: &[CellFn] = &[
    |v| {
        let svc = &v["spec"]["service"];
        match svc.is_object() {
            true => json!(format!(
                "{}/{}",
                svc["namespace"].as_str().unwrap_or(""),
                svc["name"].as_str().unwrap_or("")
            )),
            false => json!("Local"),
        }
    },
    |v| match of_type(&v["status"]["conditions"], "Available") {
        None => json!("Unknown"),
        Some(c) => {
            let status = c["status"].as_str().unwrap_or("");
            match c["reason"].as_str() {
                Some(r) if status != "True" && !r.is_empty() => json!(format!("{status} ({r})")),
                _ => json!(status),
            }
        }
    },
    age,
];

const STORAGECLASS: &[CellFn] = &[
    |v| v["provisioner"].clone(),
    |v| json!(v["reclaimPolicy"].as_str().unwrap_or("Delete")),
    |v| json!(v["volumeBindingMode"].as_str().unwrap_or("Immediate")),
    |v| json!(v["allowVolumeExpansion"].as_bool().unwrap_or(false)),
    age,
];

const PRIORITYCLASS: &[CellFn] = &[
    |v| json!(int(&v["value"])),
    |v| json!(v["globalDefault"].as_bool().unwrap_or(false)),
    age,
    |v| {
        json!(v["preemptionPolicy"]
            .as_str()
            .unwrap_or("PreemptLowerPriority"))
    },
];

const INGRESSCLASS: &[CellFn] = &[
    |v| v["spec"]["controller"].clone(),
    |v| {
        let p = &v["spec"]["parameters"];
        if !p.is_object() {
            return json!("<none>");
        }
        let mut kind = p["kind"].as_str().unwrap_or("").to_owned();
        if let Some(g) = p["apiGroup"].as_str() {
            kind = format!("{kind}.{g}");
        }
        json!(format!("{kind}/{}", p["name"].as_str().unwrap_or("")))
    },
    age,
];

const NETWORKPOLICY: &[CellFn] = &[|v| selector(&v["spec"]["podSelector"]), age];

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
    let defs = definitions(def);
    let cells = cells(def);
    // The name cell goes where its column is: first, or (an event's) last.
    let name_at = defs.iter().position(|d| d["format"] == "name").unwrap_or(0);
    let rows: Vec<Value> = items
        .iter()
        .map(|o| {
            let v = o.value();
            let mut row: Vec<Value> = cells.iter().map(|c| c(&v)).collect();
            row.insert(name_at.min(row.len()), name(&v));
            json!({
                "cells": row,
                "object": row_object(&v, opts.include),
            })
        })
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_meta(rv, token, remaining),
        "columnDefinitions": if opts.no_headers { Value::Null } else { Value::Array(defs) },
        "rows": rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources;

    /// Every kind the simulator serves has the genuine server's column
    /// definitions (the widgets their CRD's) and a cell for each column after the name.
    #[test]
    fn every_kind_has_captured_columns_and_a_cell_for_each() {
        for def in resources::RESOURCES {
            let defs = definitions(def);
            if !def.custom {
                assert!(DEFINITIONS.contains_key(&key(def)), "{}", key(def));
            }
            assert_eq!(defs.iter().filter(|d| d["format"] == "name").count(), 1);
            assert_eq!(defs.len(), cells(def).len() + 1, "{}", key(def));
        }
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

    /// An event's name is its Table's last cell, as its column is last.
    #[test]
    fn an_events_name_is_its_last_cell() {
        let i = resources::RESOURCES
            .iter()
            .position(|r| r.plural == "events" && r.group.is_empty())
            .unwrap();
        let o = Obj::from_value(
            i,
            json!({"metadata":{"name":"e1","namespace":"ns","resourceVersion":"5"},
                "involvedObject":{"kind":"Pod","name":"p"},"type":"Normal","reason":"R","message":" m ","count":2}),
        );
        let t = table(
            &resources::RESOURCES[i],
            &[Arc::new(o)],
            None,
            None,
            None,
            TableOptions::default(),
        );
        let cells = t["rows"][0]["cells"].as_array().unwrap();
        assert_eq!(cells.len(), 10);
        assert_eq!(cells[3], "pod/p");
        assert_eq!(cells[6], "m");
        assert_eq!(cells[8], 2);
        assert_eq!(cells[9], "e1");
    }

    /// The simulator's cells against the genuine server's, for the kinds
    /// captured in kwatch-core's `testdata/tables-1.32/`, time-dependent columns
    /// aside. What the simplified cells do not do is listed, so that a new difference
    /// (or a mended one) fails here.
    #[test]
    fn cells_agree_with_a_genuine_server_but_for_the_known_simplifications() {
        const TIME: [&str; 6] = [
            "Age",
            "Last Seen",
            "First Seen",
            "Duration",
            "Last Schedule",
            "Created At",
        ];
        const KNOWN: [&str; 5] = [
            // RESTARTS without `(… ago)`; STATUS without init containers' progress;
            // READINESS GATES always `<none>`.
            "pods crashloop Restarts",
            "pods init-wait Status",
            "pods multi Readiness Gates",
            "pods running Restarts",
            "pods running Readiness Gates",
        ];
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../core/testdata/tables-1.32");
        let (mut compared, mut differ) = (0, Vec::new());
        for def in resources::RESOURCES.iter().filter(|d| !d.custom) {
            let file = match def.group {
                "events.k8s.io" => "events.events.k8s.io",
                _ => def.plural,
            };
            let Ok(text) = std::fs::read_to_string(format!("{dir}/{file}.table.json")) else {
                continue;
            };
            let t: Value = serde_json::from_str(&text).unwrap();
            let defs = definitions(def);
            assert_eq!(t["columnDefinitions"], Value::Array(defs.clone()), "{file}");
            let name_at = defs.iter().position(|d| d["format"] == "name").unwrap();
            for row in t["rows"].as_array().unwrap() {
                let v = &row["object"];
                let mut ours: Vec<Value> = cells(def).iter().map(|c| c(v)).collect();
                ours.insert(name_at, name(v));
                for (i, d) in defs.iter().enumerate() {
                    let column = d["name"].as_str().unwrap();
                    if TIME.contains(&column) {
                        continue;
                    }
                    compared += 1;
                    if ours[i] != row["cells"][i] {
                        let n = v["metadata"]["name"].as_str().unwrap();
                        differ.push(format!("{file} {n} {column}"));
                    }
                }
            }
        }
        assert_eq!(differ, KNOWN, "of {compared} cells");
        assert_eq!(compared, 1538);
    }
}
