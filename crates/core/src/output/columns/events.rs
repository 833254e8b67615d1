//! The event printer for core/v1 and events.k8s.io/v1 events (printers.go `printEvent`).

use serde_json::Value;

use super::column::Column;
use super::format::age;
use super::format::{int, str_or_empty};

/// The event columns (printers.go `printEvent`). kube-apiserver prints events.k8s.io
/// events through the core Event printer after converting them, so `NEW` reads the
/// events.k8s.io names of the same fields: regarding, note, deprecatedSource,
/// deprecatedFirstTimestamp, deprecatedLastTimestamp, deprecatedCount,
/// reportingController.
pub(super) fn event_columns<const NEW: bool>(wide: bool) -> Vec<Column> {
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

/// `--events` in the table's tree: kubectl's TYPE, REASON and MESSAGE of an Event
/// (core/v1 or events.k8s.io/v1), empty for the tree's other objects. MESSAGE comes last,
/// as in `kubectl get events`, so a long message widens no other column.
pub fn event_tree_columns() -> Vec<Column> {
    fn of_an_event(o: &Value, read: impl Fn(&Value) -> String) -> String {
        if o.get("involvedObject").is_some() || o.get("regarding").is_some() {
            read(o)
        } else {
            String::new()
        }
    }
    let c = Column::new;
    vec![
        c("TYPE", |o, _| of_an_event(o, |o| str_or_empty(&o["type"]))),
        c("REASON", |o, _| {
            of_an_event(o, |o| str_or_empty(&o["reason"]))
        }),
        c("MESSAGE", |o, _| {
            of_an_event(o, |o| {
                let new = o.get("regarding").is_some();
                let message = if new { &o["note"] } else { &o["message"] };
                message.as_str().unwrap_or_default().trim().to_owned()
            })
        }),
    ]
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
