//! JSON lines: one self-contained object per record, `type` first, the object spliced in
//! as the raw bytes the server sent (minus managedFields), never re-serialised.
//! Also kubectl's watch events (`-o watch-events`), spliced the same way; with several
//! contexts each carries a `context` field after `type`.

use std::io::{self, BufWriter, Write};

use super::diagnostics::{self, Diagnostics};
use super::health::Health;
use super::object::object_json;
use super::options::Options;
use super::record::{DiffField, Line};
use crate::cache::delta::DeltaType;
use crate::informer::record::{Body, Record};
use crate::informer::sink::Sink;

pub struct JsonPrinter<W: Write> {
    opts: Options,
    w: BufWriter<W>,
    diag: Diagnostics,
    /// The last record time written: its second and millisecond, and
    /// [`format_time`](crate::text::format_time) of it (which shows nothing finer). Most
    /// records of a busy stream share their millisecond with the one before.
    time: Option<((i64, i32), String)>,
    /// The line being serialised, reused.
    scratch: Vec<u8>,
}

impl<W: Write> JsonPrinter<W> {
    pub fn new(opts: Options, w: W, diag: Diagnostics) -> Self {
        JsonPrinter {
            opts,
            w: BufWriter::with_capacity(64 * 1024, w),
            diag,
            time: None,
            scratch: Vec::with_capacity(1024),
        }
    }
}

impl<W: Write + Send> Sink for JsonPrinter<W> {
    fn record(&mut self, rec: &Record<'_>) -> io::Result<()> {
        let t = rec.time;
        let at = (t.as_second(), t.subsec_nanosecond() / 1_000_000);
        let time = match &mut self.time {
            Some((cached, text)) if *cached == at => text,
            cache => &cache.insert((at, crate::text::format_time(t))).1,
        };
        let mut line = Line::of(rec, time);
        if let Some(d) = rec.diff(self.opts.diff) {
            if let Some(c) = line.diff_mut() {
                c.changed = Some(d.changed);
                c.diff = d.known.then_some(DiffField::Patch(d.patch));
            }
        }
        if let Some(b) = rec.blame(self.opts.blame) {
            if let Some(c) = line.diff_mut() {
                c.blame = Some(b.to_vec());
            }
        }
        let managed = self.opts.show_managed_fields;
        let [(old_name, old), (name, object)] = rec.objects();
        let old = old.map(|o| object_json(o, managed));
        let object = object.map(|o| object_json(o, managed));
        let objects = [(old_name, old.as_deref()), (name, object.as_deref())];
        line.write_objects(&mut self.w, &objects, &mut self.scratch)
    }

    fn diagnostic(&mut self, line: &str) -> io::Result<()> {
        diagnostics::say(&mut self.diag, line)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

/// kubectl's watch event type for a delta, or `None` when a watch would have sent
/// nothing: Added → ADDED, Updated → MODIFIED, Deleted (also a tombstone) → DELETED;
/// a Replaced or Sync (also an atomic relist's ReplacedAll and resync's SyncAll) is ADDED
/// when kwatch did not know the object, MODIFIED when it differs from the known version,
/// and nothing when it is the same.
pub fn watch_event_type(
    t: DeltaType,
    prev: Option<&crate::cache::object::ObjectRef>,
    cur: Option<&crate::cache::object::ObjectRef>,
) -> Option<&'static str> {
    match t {
        DeltaType::Added => Some("ADDED"),
        DeltaType::Updated => Some("MODIFIED"),
        DeltaType::Deleted => Some("DELETED"),
        DeltaType::Replaced | DeltaType::Sync | DeltaType::ReplacedAll | DeltaType::SyncAll => {
            match (prev, cur) {
                (None, _) => Some("ADDED"),
                (Some(p), Some(c)) if p.raw() != c.raw() => Some("MODIFIED"),
                _ => None,
            }
        }
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

impl<W: Write + Send> Sink for WatchEventPrinter<W> {
    fn record(&mut self, rec: &Record<'_>) -> io::Result<()> {
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
            serde_json::to_writer(&mut self.w, c).map_err(io::Error::other)?;
        }
        self.w.write_all(b",\"object\":")?;
        self.w
            .write_all(object_json(o, self.opts.show_managed_fields).as_bytes())?;
        self.w.write_all(b"}\n")
    }

    fn diagnostic(&mut self, line: &str) -> io::Result<()> {
        diagnostics::say(&mut self.diag, line)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()?;
        self.diag.flush()
    }
}
