//! JSON lines: one self-contained object per record, `type` first, the object spliced in
//! as the raw bytes the server sent (minus managedFields), never re-serialised.
//! Also kubectl's watch events (`-o watch-events`), spliced the same way.

use std::io::{self, BufWriter, Write};

use serde_json::json;

use super::{fields, object_json, record_diff, Body, Options, Printer, Record};
use crate::delta::DeltaType;

pub struct JsonPrinter<W: Write> {
    opts: Options,
    w: BufWriter<W>,
}

impl<W: Write> JsonPrinter<W> {
    pub fn new(opts: Options, w: W) -> Self {
        JsonPrinter {
            opts,
            w: BufWriter::with_capacity(64 * 1024, w),
        }
    }
}

impl<W: Write + Send> Printer for JsonPrinter<W> {
    fn print(&mut self, rec: &Record<'_>) -> io::Result<()> {
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
            (Some(p), Some(c)) if p.raw().get() != c.raw().get() => Some("MODIFIED"),
            _ => None,
        },
    }
}

/// `-o watch-events`: `{"type":"ADDED","object":{…}}` per change.
pub struct WatchEventPrinter<W: Write> {
    opts: Options,
    w: BufWriter<W>,
}

impl<W: Write> WatchEventPrinter<W> {
    pub fn new(opts: Options, w: W) -> Self {
        WatchEventPrinter {
            opts,
            w: BufWriter::with_capacity(64 * 1024, w),
        }
    }
}

impl<W: Write + Send> Printer for WatchEventPrinter<W> {
    fn print(&mut self, rec: &Record<'_>) -> io::Result<()> {
        let Body::Delta { delta, prev, .. } = &rec.body else {
            return Ok(());
        };
        let Some(o) = delta.object.object() else {
            return Ok(());
        };
        let Some(t) = watch_event_type(delta.kind, *prev, Some(o)) else {
            return Ok(());
        };
        write!(self.w, "{{\"type\":\"{t}\",\"object\":")?;
        self.w
            .write_all(object_json(o, self.opts.show_managed_fields).as_bytes())?;
        self.w.write_all(b"}\n")
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}
