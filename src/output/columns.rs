//! The resource columns of the table, as `kubectl get` prints them: built-in printers
//! for the common kinds, a custom resource's additionalPrinterColumns, else AGE alone.
//! Each column turns an object (parsed once per row, only when a column needs it) into
//! one cell.

use std::time::Duration;

use serde_json::Value;

use super::table::human_duration;
use super::template::{self, Template};
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
    Path {
        template: Template,
        date: bool,
    },
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
        !matches!(self.get, Getter::Age)
    }

    /// The cell for `v` (Null when no column needs the object) at `now`.
    pub fn cell(&self, v: &Value, created: Option<&str>, now: jiff::Timestamp) -> String {
        match &self.get {
            Getter::Age => age(created, now),
            Getter::Builtin(f) => f(v, now),
            Getter::Path { template, date } => {
                let vals = template.values(v);
                match vals.first() {
                    None => "<none>".into(),
                    Some(x) if *date => age(x.as_str(), now),
                    Some(_) => template::cell(template, v),
                }
            }
            Getter::Label(k) => v["metadata"]["labels"][k]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            Getter::Labels => match v["metadata"]["labels"].as_object() {
                Some(m) if !m.is_empty() => m
                    .iter()
                    .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                    .collect::<Vec<_>>()
                    .join(","),
                _ => "<none>".into(),
            },
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

/// The columns after NAME and RESOURCEVERSION for `r`: kubectl's for the built-ins it
/// knows, `crd`'s printer columns for a custom resource, else AGE.
pub fn resource_columns(r: &Resource, wide: bool, crd: Option<&[PrinterColumn]>) -> Vec<Column> {
    let c = Column::new;
    let mut cols = match (group(r), r.kind.as_str()) {
        ("", "Pod") => {
            let mut v = vec![
                c("READY", pod_ready),
                c("STATUS", pod_status),
                c("RESTARTS", pod_restarts),
                Column::age(),
            ];
            if wide {
                v.push(c("IP", |o, _| none(&o["status"]["podIP"])));
                v.push(c("NODE", |o, _| none(&o["spec"]["nodeName"])));
            }
            v
        }
        ("apps", "Deployment") => {
            let mut v = vec![
                c("READY", |o, _| {
                    format!(
                        "{}/{}",
                        int(&o["status"]["readyReplicas"]),
                        int(&o["spec"]["replicas"])
                    )
                }),
                c("UP-TO-DATE", |o, _| int(&o["status"]["updatedReplicas"])),
                c("AVAILABLE", |o, _| int(&o["status"]["availableReplicas"])),
                Column::age(),
            ];
            if wide {
                v.extend(containers_and_selector());
            }
            v
        }
        ("apps", "ReplicaSet") => {
            let mut v = vec![
                c("DESIRED", |o, _| int(&o["spec"]["replicas"])),
                c("CURRENT", |o, _| int(&o["status"]["replicas"])),
                c("READY", |o, _| int(&o["status"]["readyReplicas"])),
                Column::age(),
            ];
            if wide {
                v.extend(containers_and_selector());
            }
            v
        }
        ("", "Service") => {
            let mut v = vec![
                c("TYPE", |o, _| none(&o["spec"]["type"])),
                c("CLUSTER-IP", |o, _| none(&o["spec"]["clusterIP"])),
                c("EXTERNAL-IP", service_external_ip),
                c("PORT(S)", service_ports),
                Column::age(),
            ];
            if wide {
                v.push(c("SELECTOR", |o, _| map_pairs(&o["spec"]["selector"])));
            }
            v
        }
        ("", "Node") => {
            let mut v = vec![
                c("STATUS", node_status),
                c("ROLES", node_roles),
                Column::age(),
                c("VERSION", |o, _| {
                    none(&o["status"]["nodeInfo"]["kubeletVersion"])
                }),
            ];
            if wide {
                v.push(c("INTERNAL-IP", |o, _| node_address(o, "InternalIP")));
                v.push(c("OS-IMAGE", |o, _| {
                    none(&o["status"]["nodeInfo"]["osImage"])
                }));
            }
            v
        }
        ("", "Namespace") => vec![
            c("STATUS", |o, _| none(&o["status"]["phase"])),
            Column::age(),
        ],
        ("", "ConfigMap") => vec![
            c("DATA", |o, _| {
                let n = o["data"].as_object().map_or(0, |m| m.len())
                    + o["binaryData"].as_object().map_or(0, |m| m.len());
                n.to_string()
            }),
            Column::age(),
        ],
        ("", "Secret") => vec![
            c("TYPE", |o, _| none(&o["type"])),
            c("DATA", |o, _| {
                o["data"].as_object().map_or(0, |m| m.len()).to_string()
            }),
            Column::age(),
        ],
        ("", "Event") | ("events.k8s.io", "Event") => vec![
            c("LAST SEEN", event_last_seen),
            c("TYPE", |o, _| none(&o["type"])),
            c("REASON", |o, _| none(&o["reason"])),
            c("OBJECT", |o, _| {
                let io = &o["involvedObject"];
                format!(
                    "{}/{}",
                    io["kind"].as_str().unwrap_or_default().to_lowercase(),
                    io["name"].as_str().unwrap_or_default()
                )
            }),
            c("MESSAGE", |o, _| {
                o["message"].as_str().unwrap_or_default().trim().to_owned()
            }),
        ],
        _ => match crd {
            Some(pc) if !pc.is_empty() => pc
                .iter()
                .filter(|p| wide || p.priority == 0)
                .map(|p| Column {
                    header: p.name.clone(),
                    get: Getter::Path {
                        template: p.template.clone(),
                        date: p.kind == "date",
                    },
                })
                .collect(),
            _ => vec![Column::age()],
        },
    };
    if cols.is_empty() {
        cols.push(Column::age());
    }
    cols
}

fn containers_and_selector() -> Vec<Column> {
    vec![
        Column::new("CONTAINERS", |o, _| {
            list(&o["spec"]["template"]["spec"]["containers"], "name")
        }),
        Column::new("IMAGES", |o, _| {
            list(&o["spec"]["template"]["spec"]["containers"], "image")
        }),
        Column::new("SELECTOR", |o, _| {
            map_pairs(&o["spec"]["selector"]["matchLabels"])
        }),
    ]
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

fn list(v: &Value, field: &str) -> String {
    let items: Vec<&str> = v
        .as_array()
        .map(|a| a.iter().filter_map(|x| x[field].as_str()).collect())
        .unwrap_or_default();
    if items.is_empty() {
        "<none>".into()
    } else {
        items.join(",")
    }
}

fn map_pairs(v: &Value) -> String {
    match v.as_object() {
        Some(m) if !m.is_empty() => m
            .iter()
            .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
            .collect::<Vec<_>>()
            .join(","),
        _ => "<none>".into(),
    }
}

fn pod_ready(o: &Value, _: jiff::Timestamp) -> String {
    let total = o["spec"]["containers"].as_array().map_or(0, Vec::len);
    let statuses = o["status"]["containerStatuses"].as_array();
    let total = if total == 0 {
        statuses.map_or(0, Vec::len)
    } else {
        total
    };
    let ready = statuses.map_or(0, |s| s.iter().filter(|c| c["ready"] == true).count());
    format!("{ready}/{total}")
}

/// kubectl's pod STATUS (printPod, simplified): init container progress, the waiting or
/// terminated reason of a container, Terminating, else the phase.
fn pod_status(o: &Value, _: jiff::Timestamp) -> String {
    let st = &o["status"];
    let mut reason = st["reason"]
        .as_str()
        .or_else(|| st["phase"].as_str())
        .unwrap_or("Unknown")
        .to_owned();
    let inits = st["initContainerStatuses"].as_array();
    let n_inits = o["spec"]["initContainers"]
        .as_array()
        .map_or(inits.map_or(0, Vec::len), Vec::len);
    let mut initializing = false;
    for (i, c) in inits.into_iter().flatten().enumerate() {
        let term = &c["state"]["terminated"];
        let wait = &c["state"]["waiting"];
        if term.is_object() && term["exitCode"] == 0 {
            continue;
        }
        initializing = true;
        reason = if term.is_object() {
            match term["reason"].as_str() {
                Some(r) if !r.is_empty() => format!("Init:{r}"),
                _ => format!("Init:ExitCode:{}", int(&term["exitCode"])),
            }
        } else if let Some(r) = wait["reason"].as_str().filter(|r| *r != "PodInitializing") {
            format!("Init:{r}")
        } else {
            format!("Init:{i}/{n_inits}")
        };
        break;
    }
    if !initializing {
        let mut has_running = false;
        for c in st["containerStatuses"]
            .as_array()
            .into_iter()
            .flatten()
            .rev()
        {
            let term = &c["state"]["terminated"];
            if let Some(r) = c["state"]["waiting"]["reason"].as_str() {
                reason = r.to_owned();
            } else if let Some(r) = term["reason"].as_str() {
                reason = r.to_owned();
            } else if term.is_object() {
                reason = format!("ExitCode:{}", int(&term["exitCode"]));
            } else if c["ready"] == true && c["state"]["running"].is_object() {
                has_running = true;
            }
        }
        if reason == "Completed" && has_running {
            reason = "Running".into();
        }
    }
    if o["metadata"]["deletionTimestamp"].is_string() {
        reason = if st["reason"] == "NodeLost" {
            "Unknown".into()
        } else {
            "Terminating".into()
        };
    }
    reason
}

/// The sum of restarts, with how long ago the last one ended, as kubectl prints it.
fn pod_restarts(o: &Value, now: jiff::Timestamp) -> String {
    let mut n = 0;
    let mut last: Option<jiff::Timestamp> = None;
    for c in o["status"]["containerStatuses"]
        .as_array()
        .into_iter()
        .flatten()
    {
        n += c["restartCount"].as_i64().unwrap_or(0);
        let t = c["lastState"]["terminated"]["finishedAt"]
            .as_str()
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

fn event_last_seen(o: &Value, now: jiff::Timestamp) -> String {
    let t = o["lastTimestamp"]
        .as_str()
        .or_else(|| o["eventTime"].as_str())
        .or_else(|| o["metadata"]["creationTimestamp"].as_str());
    age(t, now)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn now() -> jiff::Timestamp {
        "2026-11-21T10:05:00Z".parse().unwrap()
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
        assert_eq!(resource_columns(&r, true, Some(&pc)).len(), 3);
    }
}
