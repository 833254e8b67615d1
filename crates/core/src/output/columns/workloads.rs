//! The workload printers: deployments, replica sets, stateful sets, daemon sets, jobs,
//! cron jobs, horizontal pod autoscalers and pod disruption budgets (printers.go).

use serde_json::Value;

use super::column::{and_wide, Column};
use super::format::{age, since};
use super::format::{
    format_selector, int, join_field, label_selector, map_pairs, none, of_type, quantity,
    str_or_empty,
};

/// The workloads' `-o wide` columns: CONTAINERS, IMAGES and SELECTOR (`selector`).
fn workload_wide(selector: Column) -> Vec<Column> {
    let mut v = containers(false);
    v.push(selector);
    v
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

pub(super) fn deployment_columns(wide: bool) -> Vec<Column> {
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

pub(super) fn replicaset_columns(wide: bool) -> Vec<Column> {
    let c = Column::new;
    let cols = vec![
        c("DESIRED", |o, _| int(&o["spec"]["replicas"])),
        c("CURRENT", |o, _| int(&o["status"]["replicas"])),
        c("READY", |o, _| int(&o["status"]["readyReplicas"])),
        Column::age(),
    ];
    and_wide(cols, wide, || workload_wide(spec_selector()))
}

pub(super) fn statefulset_columns(wide: bool) -> Vec<Column> {
    let cols = vec![Column::new("READY", ready_of_replicas), Column::age()];
    and_wide(cols, wide, || containers(false))
}

pub(super) fn daemonset_columns(wide: bool) -> Vec<Column> {
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

pub(super) fn job_columns(wide: bool) -> Vec<Column> {
    let c = Column::new;
    let cols = vec![
        c("STATUS", job_status),
        c("COMPLETIONS", job_completions),
        c("DURATION", job_duration),
        Column::age(),
    ];
    and_wide(cols, wide, || workload_wide(spec_selector()))
}

pub(super) fn cronjob_columns(wide: bool) -> Vec<Column> {
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

/// printers.go `printHorizontalPodAutoscaler` (autoscaling/v2).
pub(super) fn hpa_columns(_wide: bool) -> Vec<Column> {
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
pub(super) fn pdb_columns(_wide: bool) -> Vec<Column> {
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

/// printers.go `hasJobCondition`: the first condition of the type decides.
fn job_condition(o: &Value, ty: &str) -> bool {
    of_type(&o["status"]["conditions"], ty).is_some_and(|c| c["status"] == "True")
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
    since(end.as_second().saturating_sub(start.as_second()))
}
