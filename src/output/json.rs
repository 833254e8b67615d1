//! JSON lines: one self-contained object per record, `type` first, the object spliced in
//! as the raw bytes the server sent (minus managedFields), never re-serialised.
//! Also kubectl's watch events (`-o watch-events`), spliced the same way; with several
//! contexts each carries a `context` field after `type`.

use std::io::{self, BufWriter, Write};

use serde_json::json;

use super::health::Health;
use super::{fields, object_json, record_diff, Body, Diagnostics, Options, Printer, Record};
use crate::delta::DeltaType;

pub struct JsonPrinter<W: Write> {
    opts: Options,
    w: BufWriter<W>,
    /// The last record time written: its second and millisecond, and
    /// [`format_time`](super::format_time) of it (which shows nothing finer).
    time: Option<((i64, i32), String)>,
}

impl<W: Write> JsonPrinter<W> {
    pub fn new(opts: Options, w: W) -> Self {
        JsonPrinter {
            opts,
            w: BufWriter::with_capacity(64 * 1024, w),
            time: None,
        }
    }
}

impl<W: Write> JsonPrinter<W> {
    /// A delta without `--diff`, written field by field (no map of values, no second
    /// serialisation): the line [`fields`] would give, byte for byte (a test holds them
    /// equal). This is most of what `-o json` prints.
    fn print_delta(
        &mut self,
        rec: &Record<'_>,
        key: &str,
        delta: &crate::delta::Delta,
        initial_list: bool,
    ) -> io::Result<()> {
        let t = rec.time;
        let ms = (t.as_second(), t.subsec_nanosecond() / 1_000_000);
        let time = match &mut self.time {
            Some((at, text)) if *at == ms => text,
            cache => &cache.insert((ms, super::format_time(t))).1,
        };
        let w = &mut self.w;
        let o = delta.object.object();
        let (ns, name) = match key.split_once('/') {
            Some((ns, name)) => (Some(ns), name),
            None => (None, key),
        };
        w.write_all(b"{\"type\":")?;
        json_str(w, delta.kind.as_str())?;
        if let Some(c) = rec.context {
            w.write_all(b",\"context\":")?;
            json_str(w, c)?;
        }
        w.write_all(b",\"key\":")?;
        json_str(w, key)?;
        w.write_all(b",\"namespace\":")?;
        match ns {
            Some(ns) => json_str(w, ns)?,
            None => w.write_all(b"null")?,
        }
        w.write_all(b",\"name\":")?;
        json_str(w, name)?;
        w.write_all(b",\"kind\":")?;
        json_str(w, &rec.resource.kind)?;
        w.write_all(b",\"apiVersion\":")?;
        json_str(w, &rec.resource.api_version)?;
        w.write_all(b",\"resourceVersion\":")?;
        match o {
            Some(o) => json_str(w, o.resource_version())?,
            None => w.write_all(b"null")?,
        }
        w.write_all(b",\"time\":")?;
        json_str(w, time)?;
        w.write_all(if initial_list {
            b",\"initialList\":true"
        } else {
            b",\"initialList\":false"
        })?;
        if delta.object.is_tombstone() {
            w.write_all(b",\"finalStateUnknown\":true")?;
        }
        if let Some(o) = o {
            w.write_all(b",\"object\":")?;
            if o.meta().has_managed_fields {
                w.write_all(object_json(o, self.opts.show_managed_fields).as_bytes())?;
            } else {
                w.write_all(o.raw().as_bytes())?;
            }
        }
        w.write_all(b"}\n")
    }
}

/// `s` as a JSON string, escaped as serde_json escapes it.
fn json_str<W: Write>(w: &mut W, s: &str) -> io::Result<()> {
    // serde_json escapes only `"`, `\` and control characters (below 0x20).
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        w.write_all(b"\"")?;
        w.write_all(s.as_bytes())?;
        return w.write_all(b"\"");
    }
    serde_json::to_writer(w, s).map_err(io::Error::other)
}

impl<W: Write + Send> Printer for JsonPrinter<W> {
    fn print(&mut self, rec: &Record<'_>) -> io::Result<()> {
        if self.opts.diff == super::diff::DiffMode::Off {
            if let Body::Delta {
                key,
                delta,
                initial_list,
                ..
            } = &rec.body
            {
                return self.print_delta(rec, key, delta, *initial_list);
            }
        }
        let (mut m, obj) = fields(rec);
        if let Some(d) = record_diff(rec, self.opts.diff) {
            m.insert("changed".into(), json!(d.changed));
            if d.known {
                m.insert(
                    "diff".into(),
                    serde_json::to_value(&d.patch).map_err(io::Error::other)?,
                );
            }
        }
        let head = serde_json::to_string(&m).map_err(io::Error::other)?;
        match obj {
            Some(o) => {
                // `head` is a JSON object: replace its closing brace with the object field.
                self.w.write_all(&head.as_bytes()[..head.len() - 1])?;
                self.w.write_all(b",\"object\":")?;
                self.w
                    .write_all(object_json(&o, self.opts.show_managed_fields).as_bytes())?;
                self.w.write_all(b"}\n")
            }
            None => {
                self.w.write_all(head.as_bytes())?;
                self.w.write_all(b"\n")
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

/// kubectl's watch event type for a delta, or `None` when a watch would have sent
/// nothing: Added → ADDED, Updated → MODIFIED, Deleted (also a tombstone) → DELETED;
/// a Replaced or Sync is ADDED when kwatch did not know the object, MODIFIED when it
/// differs from the known version, and nothing when it is the same.
pub fn watch_event_type(
    t: DeltaType,
    prev: Option<&crate::object::ObjectRef>,
    cur: Option<&crate::object::ObjectRef>,
) -> Option<&'static str> {
    match t {
        DeltaType::Added => Some("ADDED"),
        DeltaType::Updated => Some("MODIFIED"),
        DeltaType::Deleted => Some("DELETED"),
        DeltaType::Replaced | DeltaType::Sync => match (prev, cur) {
            (None, _) => Some("ADDED"),
            (Some(p), Some(c)) if p.raw() != c.raw() => Some("MODIFIED"),
            _ => None,
        },
    }
}

/// `-o watch-events`: `{"type":"ADDED","object":{…}}` per change (with several
/// contexts `{"type":"ADDED","context":"prod","object":{…}}`). Reflector trouble after
/// the first sync goes to the diagnostics, one line per change of state.
pub struct WatchEventPrinter<W: Write> {
    opts: Options,
    w: BufWriter<W>,
    diag: Diagnostics,
    health: Health,
}

impl<W: Write> WatchEventPrinter<W> {
    pub fn new(opts: Options, w: W, diag: Diagnostics) -> Self {
        WatchEventPrinter {
            opts,
            w: BufWriter::with_capacity(64 * 1024, w),
            diag,
            health: Health::default(),
        }
    }
}

impl<W: Write + Send> Printer for WatchEventPrinter<W> {
    fn print(&mut self, rec: &Record<'_>) -> io::Result<()> {
        super::script::report_health(&mut self.health, rec, &mut self.w, &mut self.diag)?;
        let Body::Delta { delta, prev, .. } = &rec.body else {
            return Ok(());
        };
        let Some(o) = delta.object.object() else {
            return Ok(());
        };
        let Some(t) = watch_event_type(delta.kind, *prev, Some(o)) else {
            return Ok(());
        };
        write!(self.w, "{{\"type\":\"{t}\"")?;
        if let Some(c) = rec.context {
            self.w.write_all(b",\"context\":")?;
            json_str(&mut self.w, c)?;
        }
        self.w.write_all(b",\"object\":")?;
        self.w
            .write_all(object_json(o, self.opts.show_managed_fields).as_bytes())?;
        self.w.write_all(b"}\n")
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()?;
        self.diag.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delta::{Delta, DeltaObject, DeltaType, Tombstone};
    use crate::object::{Object, ObjectRef};
    use crate::output::Resource;

    /// The generic path: [`fields`] serialised, the object spliced in.
    fn generic(rec: &Record<'_>) -> String {
        let (m, obj) = fields(rec);
        let head = serde_json::to_string(&m).unwrap();
        match obj {
            Some(o) => format!(
                "{},\"object\":{}}}\n",
                &head[..head.len() - 1],
                object_json(&o, false)
            ),
            None => format!("{head}\n"),
        }
    }

    #[test]
    fn the_delta_fast_path_writes_what_the_generic_path_writes() {
        let obj = |ns: &str| {
            ObjectRef::new(
                Object::from_json(&format!(
                    r#"{{"metadata":{{"name":"we\"b\u00e9","namespace":"{ns}","resourceVersion":"42"}},"spec":{{}}}}"#
                ))
                .unwrap(),
            )
        };
        let managed = ObjectRef::new(
            Object::from_json(
                r#"{"metadata":{"name":"m","namespace":"d","resourceVersion":"1","managedFields":[{"manager":"k"}]},"spec":{"x":"é"}}"#,
            )
            .unwrap(),
        );
        let deltas = [
            Delta::new(DeltaType::Sync, managed),
            Delta::new(DeltaType::Added, obj("default")),
            Delta::new(DeltaType::Updated, obj("")),
            Delta {
                kind: DeltaType::Deleted,
                object: DeltaObject::Tombstone(Tombstone {
                    key: "default/old".into(),
                    obj: None,
                }),
            },
            Delta {
                kind: DeltaType::Deleted,
                object: DeltaObject::Tombstone(Tombstone {
                    key: "default/old".into(),
                    obj: Some(obj("default")),
                }),
            },
        ];
        let r = Resource {
            name: "widgets.example.com".into(),
            kind: "Widget".into(),
            api_version: "example.com/v1".into(),
            namespaced: true,
        };
        for (i, d) in deltas.iter().enumerate() {
            for (key, context) in [("default/we\"b\u{e9}", None), ("n\u{1}", Some("ctx\"1"))] {
                let rec = Record {
                    resource: &r,
                    context,
                    time: "2026-11-21T10:05:30.25Z".parse().unwrap(),
                    body: Body::Delta {
                        key,
                        delta: d,
                        initial_list: i % 2 == 0,
                        prev: None,
                    },
                };
                let mut p = JsonPrinter::new(Options::default(), Vec::new());
                p.print(&rec).unwrap();
                p.flush().unwrap();
                let fast = String::from_utf8(p.w.into_inner().unwrap()).unwrap();
                assert_eq!(fast, generic(&rec));
            }
        }
    }
}
