//! Printers against an in-memory buffer.

use std::sync::{Arc, Mutex};

use super::*;
use crate::delta::{DeltaObject, DeltaType, Tombstone};
use crate::object::Object;

#[derive(Clone, Default)]
struct Buf(Arc<Mutex<Vec<u8>>>);

impl Write for Buf {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Buf {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

fn pods() -> Resource {
    Resource {
        name: "pods".into(),
        kind: "Pod".into(),
        api_version: "v1".into(),
        namespaced: true,
    }
}

fn opts(format: Format) -> Options {
    Options {
        format,
        all_namespaces: true,
        ..Options::default()
    }
}

fn pod(name: &str, rv: &str) -> ObjectRef {
    ObjectRef::new(
        Object::from_json(&format!(
            r#"{{"metadata":{{"name":"{name}","namespace":"default","resourceVersion":"{rv}","creationTimestamp":"2026-11-21T10:00:00Z","managedFields":[{{"manager":"kubectl"}}]}},"spec":{{"nodeName":"n1"}}}}"#
        ))
        .unwrap(),
    )
}

fn at() -> jiff::Timestamp {
    "2026-11-21T10:05:30.25Z".parse().unwrap()
}

fn print_all(format: Format, recs: &[Body<'_>]) -> String {
    print_with(opts(format), recs)
}

fn print_with(o: Options, recs: &[Body<'_>]) -> String {
    let buf = Buf::default();
    let mut p = printer(o, buf.clone());
    let r = pods();
    for body in recs {
        let rec = Record {
            resource: &r,
            context: None,
            time: at(),
            body: *body,
        };
        p.print(&rec).unwrap();
    }
    p.flush().unwrap();
    buf.text()
}

#[test]
fn json_lines_put_type_first_and_splice_the_object_without_managed_fields() {
    let added = Delta::new(DeltaType::Added, pod("web-1", "42"));
    let tomb = Delta {
        kind: DeltaType::Deleted,
        object: DeltaObject::Tombstone(Tombstone {
            key: "default/old".into(),
            obj: Some(pod("old", "7")),
        }),
    };
    let list = ReflectorEvent::List {
        resource_version: "0".into(),
        limit: 500,
        reason: "initial".into(),
        streaming: false,
    };
    let out = print_all(
        Format::Json,
        &[
            Body::Event(&list),
            Body::Delta {
                key: "default/web-1",
                delta: &added,
                initial_list: true,
                prev: None,
            },
            Body::Delta {
                key: "default/old",
                delta: &tomb,
                initial_list: false,
                prev: None,
            },
            Body::Synced,
        ],
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        r#"{"type":"List","resource":"pods","time":"2026-11-21T10:05:30.250Z","resourceVersion":"0","limit":500,"reason":"initial","streaming":false}"#
    );
    assert_eq!(
        lines[1],
        r#"{"type":"Added","key":"default/web-1","namespace":"default","name":"web-1","kind":"Pod","apiVersion":"v1","resourceVersion":"42","time":"2026-11-21T10:05:30.250Z","initialList":true,"object":{"metadata":{"name":"web-1","namespace":"default","resourceVersion":"42","creationTimestamp":"2026-11-21T10:00:00Z"},"spec":{"nodeName":"n1"}}}"#
    );
    let t: Value = serde_json::from_str(lines[2]).unwrap();
    assert_eq!(t["type"], "Deleted");
    assert_eq!(t["finalStateUnknown"], true);
    assert_eq!(t["resourceVersion"], "7");
    assert_eq!(
        lines[3],
        r#"{"type":"Synced","resource":"pods","time":"2026-11-21T10:05:30.250Z"}"#
    );
}

#[test]
fn yaml_is_a_multi_document_stream_of_the_same_records() {
    let d = Delta::new(DeltaType::Updated, pod("web-1", "43"));
    let out = print_all(
        Format::Yaml,
        &[Body::Delta {
            key: "default/web-1",
            delta: &d,
            initial_list: false,
            prev: None,
        }],
    );
    assert!(
        out.starts_with("---\ntype: Updated\nkey: default/web-1\n"),
        "{out}"
    );
    assert!(out.contains("  spec:\n    nodeName: n1\n"), "{out}");
    assert!(!out.contains("managedFields"));
}

#[test]
fn table_has_one_header_growing_columns_and_event_lines() {
    let a = Delta::new(DeltaType::Added, pod("a", "5"));
    let b = Delta::new(DeltaType::Replaced, pod("a-much-longer-name", "6"));
    let relist = ReflectorEvent::List {
        resource_version: "350".into(),
        limit: 0,
        reason: "410 Expired: too old resource version: 300 (340)".into(),
        streaming: false,
    };
    let out = print_all(
        Format::Table,
        &[
            Body::Delta {
                key: "default/a",
                delta: &a,
                initial_list: true,
                prev: None,
            },
            Body::Event(&relist),
            Body::Delta {
                key: "default/a-much-longer-name",
                delta: &b,
                initial_list: false,
                prev: None,
            },
        ],
    );
    assert_eq!(
        out,
        "TYPE       NAMESPACE   NAME   RESOURCEVERSION   READY   STATUS    RESTARTS   AGE\n\
         Added      default     a      5                 0/0     Unknown   0          5m30s\n\
         ~ relist pods: 410 Expired: too old resource version: 300 (340) → list at rv=\"350\"\n\
         Replaced   default     a-much-longer-name   6                 0/0     Unknown   0          5m30s\n"
    );
}

#[test]
fn table_escapes_control_characters_from_the_server() {
    let ev = ReflectorEvent::Backoff {
        delay: Duration::from_millis(800),
        cause: "boom\u{1b}[2J".into(),
    };
    let out = print_all(Format::Table, &[Body::Event(&ev)]);
    assert_eq!(out, "~ backoff pods 800ms: boom\\u{1b}[2J\n");
}

#[test]
fn human_durations_match_kubectl() {
    use table::human_duration as h;
    let s = Duration::from_secs;
    assert_eq!(h(s(5)), "5s");
    assert_eq!(h(s(119)), "119s");
    assert_eq!(h(s(150)), "2m30s");
    assert_eq!(h(s(300)), "5m");
    assert_eq!(h(s(5 * 3600)), "5h");
    assert_eq!(h(s(2 * 86400)), "2d");
    assert_eq!(h(s(30 * 60)), "30m");
    assert_eq!(h(s(4 * 3600 + 120)), "4h2m");
    assert_eq!(h(s(20 * 3600)), "20h");
    assert_eq!(h(s(3 * 86400 + 3600)), "3d1h");
    assert_eq!(h(s(30 * 86400)), "30d");
}
