//! Watch bodies turned into events line by line (`watch_lines`): the API server's
//! object events read in one validating pass ([`crate::scan`]), bookmarks, ERROR's
//! Status, and the one-row Tables of a watch that asked for the server's Table.

use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use futures::Stream;
use http_body_util::BodyExt;
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::cache::listwatch::{BodyBytes, SourceError, WatchEvent};
use crate::cache::object::{Object, ObjectRef, TableColumn, TableRow};
use crate::client::http::{describe_cut, status_from_wire, StatusWire};
use crate::client::list::{no_row_object, shared_columns};
use crate::scan::{self, Scan};

/// The longest watch line kwatch accepts; a stream that never ends a line is cut here
/// instead of growing memory without bound.
pub const MAX_LINE_BYTES: usize = 128 * 1024 * 1024;

#[derive(Deserialize)]
struct EventWire<'a> {
    #[serde(rename = "type", borrow)]
    kind: std::borrow::Cow<'a, str>,
    /// Owned: the object is copied out of the line once, as it was validated.
    object: Box<RawValue>,
}

#[derive(Deserialize)]
struct BookmarkWire {
    #[serde(default)]
    metadata: BookmarkMetaWire,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct BookmarkMetaWire {
    #[serde(default)]
    resource_version: String,
    #[serde(default)]
    annotations: Option<std::collections::BTreeMap<String, String>>,
}

/// Decodes one watch line.
pub fn parse_event(line: &[u8]) -> Result<WatchEvent, SourceError> {
    match parse_object_event(line) {
        Some(ev) => Ok(ev),
        None => parse_event_serde(line),
    }
}

/// A line exactly as the API server writes an object event,
/// `{"type":"ADDED"|"MODIFIED"|"DELETED","object":{…}}` (whitespace allowed between
/// tokens), read in one validating pass that copies the object once. `None` for any
/// other line, valid or not: [`parse_event_serde`] reads it (and words any error).
fn parse_object_event(b: &[u8]) -> Option<WatchEvent> {
    fn token(b: &[u8], i: usize, t: &[u8]) -> Option<usize> {
        let i = scan::skip_ws(b, i);
        b.get(i..)?.starts_with(t).then_some(i + t.len())
    }
    let mut i = token(b, 0, b"{")?;
    i = token(b, i, b"\"type\"")?;
    i = token(b, i, b":")?;
    let (kind, j) = [b"\"ADDED\"".as_slice(), b"\"MODIFIED\"", b"\"DELETED\""]
        .iter()
        .enumerate()
        .find_map(|(k, t)| token(b, i, t).map(|j| (k, j)))?;
    i = token(b, j, b",")?;
    i = token(b, i, b"\"object\"")?;
    i = token(b, i, b":")?;
    let start = scan::skip_ws(b, i);
    let Scan::End(end) = scan::scan_object(b, start) else {
        return None;
    };
    i = token(b, end, b"}")?;
    if scan::skip_ws(b, i) != b.len() {
        return None;
    }
    let text = std::str::from_utf8(&b[start..end]).ok()?;
    let obj = ObjectRef::new(Object::from_valid_json(text).ok()?);
    Some(match kind {
        0 => WatchEvent::Added(obj),
        1 => WatchEvent::Modified(obj),
        _ => WatchEvent::Deleted(obj),
    })
}

/// A watch event whose object is left where it is in the line.
#[derive(Deserialize)]
struct EventRefWire<'a> {
    #[serde(rename = "type", borrow)]
    kind: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    object: &'a RawValue,
}

/// A Table, its rows' objects and cells left where they are.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TableWire<'a> {
    #[serde(default, borrow)]
    kind: std::borrow::Cow<'a, str>,
    #[serde(default)]
    column_definitions: Option<Vec<TableColumn>>,
    #[serde(default, borrow)]
    rows: Vec<TableRowWire<'a>>,
}

#[derive(Deserialize)]
struct TableRowWire<'a> {
    #[serde(borrow)]
    cells: &'a RawValue,
    #[serde(default, borrow)]
    object: Option<&'a RawValue>,
}

/// Decodes one watch line of a watch that asked for a Table: apiserver's
/// `watchEmbeddedEncoder` sends each object, bookmarks too, as a one-row Table (the
/// column definitions in the first event only, kept in `columns` for the next ones), and
/// ERROR's Status as it is (`doTransformObject`). The row's object is the event's object,
/// as the JSON watch would have sent it, with the row's cells attached. A line whose
/// object is not a Table (a server without Tables) is read as [`parse_event`] reads it.
pub fn parse_table_event(
    line: &[u8],
    columns: &mut Option<Arc<[TableColumn]>>,
) -> Result<WatchEvent, SourceError> {
    let Ok(ev) = serde_json::from_slice::<EventRefWire>(line) else {
        return parse_event(line);
    };
    let table = match serde_json::from_str::<TableWire>(ev.object.get()) {
        Ok(t) if t.kind == "Table" => t,
        _ => return parse_event(line),
    };
    if let Some(c) = shared_columns(table.column_definitions) {
        *columns = Some(c);
    }
    let [row] = table.rows.as_slice() else {
        return Err(SourceError::Decode(format!(
            "watch {}: a Table of {} rows, not one",
            crate::cache::object::truncate(&ev.kind, 40),
            table.rows.len()
        )));
    };
    let object = row
        .object
        .filter(|o| o.get() != "null")
        .ok_or_else(no_row_object)?;
    let raw = object.to_owned();
    let event = event_from(&ev.kind, raw)?;
    let attach = |o: ObjectRef| -> ObjectRef {
        let mut o = o;
        if let Some(obj) = Arc::get_mut(&mut o) {
            obj.set_row(TableRow {
                columns: columns.clone().unwrap_or_else(|| Arc::from([])),
                cells: row.cells.to_owned(),
            });
        }
        o
    };
    Ok(match event {
        WatchEvent::Added(o) => WatchEvent::Added(attach(o)),
        WatchEvent::Modified(o) => WatchEvent::Modified(attach(o)),
        WatchEvent::Deleted(o) => WatchEvent::Deleted(attach(o)),
        other => other,
    })
}

/// [`parse_event`] by serde, for any line.
fn parse_event_serde(line: &[u8]) -> Result<WatchEvent, SourceError> {
    let ev: EventWire = serde_json::from_slice(line)
        .map_err(|e| SourceError::Decode(format!("watch event: {e}")))?;
    let EventWire { kind, object } = ev;
    event_from(&kind, object)
}

/// A protobuf watch event. Its object is JSON as [`crate::client::protobuf`] writes it,
/// valid by construction: an object event's is not scanned again, as a JSON line's is
/// once ([`parse_object_event`]).
fn proto_event(e: crate::client::protobuf::WatchEvent) -> Result<WatchEvent, SourceError> {
    let text = String::from_utf8(e.object)
        .map_err(|e| SourceError::Decode(format!("watch event object: {e}")))?;
    let kind = e.event_type.as_str();
    let event: fn(ObjectRef) -> WatchEvent = match kind {
        "ADDED" => WatchEvent::Added,
        "MODIFIED" => WatchEvent::Modified,
        "DELETED" => WatchEvent::Deleted,
        _ => {
            let raw = RawValue::from_string(text)
                .map_err(|e| SourceError::Decode(format!("watch {kind} object: {e}")))?;
            return event_from(kind, raw);
        }
    };
    Object::from_valid_json(text)
        .map(|o| event(ObjectRef::new(o)))
        .map_err(|e| SourceError::Decode(format!("watch {kind} object: {e}")))
}

/// The watch event of type `kind` carrying `object`.
fn event_from(kind: &str, object: Box<RawValue>) -> Result<WatchEvent, SourceError> {
    let obj = |raw: Box<RawValue>| {
        Object::from_raw(raw)
            .map(ObjectRef::new)
            .map_err(|e| SourceError::Decode(format!("watch {kind} object: {e}")))
    };
    match kind {
        "ADDED" => Ok(WatchEvent::Added(obj(object)?)),
        "MODIFIED" => Ok(WatchEvent::Modified(obj(object)?)),
        "DELETED" => Ok(WatchEvent::Deleted(obj(object)?)),
        "BOOKMARK" => {
            let b: BookmarkWire = serde_json::from_str(object.get())
                .map_err(|e| SourceError::Decode(format!("bookmark: {e}")))?;
            let end = b
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get("k8s.io/initial-events-end"))
                .is_some_and(|v| v == "true");
            Ok(WatchEvent::Bookmark {
                resource_version: b.metadata.resource_version,
                initial_events_end: end,
            })
        }
        "ERROR" => {
            let w: StatusWire = serde_json::from_str(object.get())
                .map_err(|e| SourceError::Decode(format!("error event: {e}")))?;
            Ok(WatchEvent::Error(status_from_wire(w)))
        }
        other => Err(SourceError::Decode(format!(
            "unknown watch event type {:?}",
            crate::cache::object::truncate(other, 40)
        ))),
    }
}

struct LineReader {
    body: kube::client::Body,
    /// The connection the body comes over and whether it speaks HTTP/2.
    connection: Option<(crate::client::keepalive::ConnectionHealth, bool)>,
    /// The start of a line whose end has not arrived yet (no newline).
    partial: BytesMut,
    /// What is left of the last frame read. Lines wholly inside it are parsed where they
    /// are, not copied.
    frame: Bytes,
    max_line: usize,
    done: bool,
    /// The watch asked for a Table: lines are read by [`parse_table_event`], which keeps
    /// the column definitions of the first event here.
    table: bool,
    columns: Option<Arc<[TableColumn]>>,
    /// A protobuf watch (`;stream=watch`): `partial` gathers length-prefixed frames, each
    /// decoded with this table into the event the server's JSON would have sent, its
    /// object without what the `Omit` names.
    proto: Option<(
        &'static crate::client::protobuf::Table,
        crate::client::protobuf::Omit,
    )>,
    /// The bytes of the lines (frames) taken so far, counted as each is taken.
    read: BodyBytes,
}

impl LineReader {
    /// The next event from what has been read so far, or `None` once it is used up.
    fn next_event(&mut self) -> Option<Result<WatchEvent, SourceError>> {
        let Some((table, omit)) = self.proto else {
            let line = self.next_line()?;
            return Some(if self.table {
                parse_table_event(line.text(), &mut self.columns)
            } else {
                parse_event(line.text())
            });
        };
        if !self.frame.is_empty() {
            self.partial.extend_from_slice(&self.frame);
            self.frame.clear();
        }
        let (frame, used) = crate::client::protobuf::frame(&self.partial)?;
        self.read.add(used as u64);
        let event = crate::client::protobuf::watch_event_omitting(table, frame, omit)
            .map_err(|e| SourceError::Decode(e.to_string()))
            .and_then(proto_event);
        let _ = self.partial.split_to(used);
        Some(event)
    }

    /// The next complete line (without its newline) from what has been read so far,
    /// or `None` once `frame` is used up (its tail is then in `partial`).
    fn next_line(&mut self) -> Option<Line> {
        loop {
            if self.frame.is_empty() {
                return None;
            }
            let Some(at) = memchr::memchr(b'\n', &self.frame) else {
                self.partial.extend_from_slice(&self.frame);
                self.frame.clear();
                return None;
            };
            let line = self.frame.split_to(at + 1);
            let line = if self.partial.is_empty() {
                Line::Frame(line)
            } else {
                self.partial.extend_from_slice(&line);
                Line::Joined(std::mem::take(&mut self.partial))
            };
            self.read.add(line.len() as u64);
            if !line.text().iter().all(u8::is_ascii_whitespace) {
                return Some(line);
            }
        }
    }
}

/// A complete watch line, newline included.
enum Line {
    Frame(Bytes),
    Joined(BytesMut),
}

impl Line {
    /// Its length, newline included.
    fn len(&self) -> usize {
        match self {
            Line::Frame(b) => b.len(),
            Line::Joined(b) => b.len(),
        }
    }

    fn text(&self) -> &[u8] {
        let b: &[u8] = match self {
            Line::Frame(b) => b,
            Line::Joined(b) => b,
        };
        &b[..b.len() - 1]
    }
}

/// Turns a watch body into decoded events. A body that ends cleanly ends the stream; a
/// connection cut mid-body yields one `Lost` error, then ends, or, when `connection` (the
/// one it came over, and whether that speaks HTTP/2) was given up by the HTTP/2 health
/// check, one `Decode` error, as client-go's StreamWatcher reports
/// `unable to decode an event from the watch stream: http2: client connection lost` (not
/// a probable EOF: its reflector relists). A partial last line is dropped. A protobuf body
/// (`proto`, the table of its minor) is read frame by frame the same way. `read` counts
/// the bytes of each line (frame) as its event is taken, so that between two events it
/// holds the bytes of the body up to the last one.
pub(super) fn watch_lines(
    body: kube::client::Body,
    connection: Option<(crate::client::keepalive::ConnectionHealth, bool)>,
    max_line: usize,
    table: bool,
    proto: Option<(
        &'static crate::client::protobuf::Table,
        crate::client::protobuf::Omit,
    )>,
    read: BodyBytes,
) -> impl Stream<Item = Result<WatchEvent, SourceError>> + Send {
    let reader = LineReader {
        body,
        connection,
        partial: BytesMut::new(),
        frame: Bytes::new(),
        max_line,
        done: false,
        table,
        columns: None,
        proto,
        read,
    };
    futures::stream::unfold(reader, |mut r| async move {
        loop {
            if let Some(ev) = r.next_event() {
                return Some((ev, r));
            }
            if r.done {
                return None;
            }
            if r.partial.len() > r.max_line {
                r.done = true;
                r.partial = BytesMut::new();
                return Some((
                    Err(SourceError::Decode(format!(
                        "a watch line longer than {} bytes without a newline",
                        r.max_line
                    ))),
                    r,
                ));
            }
            match r.body.frame().await {
                None => r.done = true,
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        r.frame = data;
                    }
                }
                Some(Err(e)) => {
                    r.done = true;
                    if let Some(lost) = r.connection.as_ref().and_then(|(c, h2)| c.lost(*h2)) {
                        return Some((Err(SourceError::Decode(lost)), r));
                    }
                    // A reset or cut connection mid-stream: client-go treats these
                    // (IsProbableEOF) as the end of the watch, not as an error.
                    return Some((Err(SourceError::Lost(describe_cut(&e))), r));
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_events() {
        let e = parse_event(br#"{"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"261","creationTimestamp":null,"annotations":{"k8s.io/initial-events-end":"true"}}}}"#).unwrap();
        assert!(
            matches!(e, WatchEvent::Bookmark { ref resource_version, initial_events_end: true } if resource_version == "261")
        );
        let e = parse_event(br#"{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 255 (286)","reason":"Expired","code":410}}"#).unwrap();
        match e {
            WatchEvent::Error(s) => assert!(s.is_expired() && s.message.contains("too old")),
            other => panic!("{other:?}"),
        }
        assert!(parse_event(b"{not json").is_err());
        assert!(parse_event(br#"{"type":"WHAT","object":{}}"#).is_err());
    }

    /// Between two events, the count holds the bytes of the body up to the last one taken
    /// (blank lines and newlines included): at a streaming list's initial-events-end
    /// bookmark, what its initial events took on the wire, whatever follows in the body.
    #[tokio::test]
    async fn counts_the_bytes_of_the_events_taken() {
        use futures::StreamExt;
        let added = r#"{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"d","resourceVersion":"5"}}}"#;
        let end = r#"{"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"6","annotations":{"k8s.io/initial-events-end":"true"}}}}"#;
        let later = added.replace(r#""5""#, r#""7""#);
        let body = format!("{added}\n\n{end}\n{later}\n");
        let read = BodyBytes::default();
        let body = kube::client::Body::from(body.into_bytes());
        let mut events = Box::pin(watch_lines(
            body,
            None,
            MAX_LINE_BYTES,
            false,
            None,
            read.clone(),
        ));
        assert!(matches!(
            events.next().await,
            Some(Ok(WatchEvent::Added(_)))
        ));
        assert_eq!(read.get(), added.len() as u64 + 1);
        assert!(matches!(
            events.next().await,
            Some(Ok(WatchEvent::Bookmark {
                initial_events_end: true,
                ..
            }))
        ));
        assert_eq!(read.get(), (added.len() + 2 + end.len() + 1) as u64);
        assert!(matches!(
            events.next().await,
            Some(Ok(WatchEvent::Added(_)))
        ));
        assert_eq!(
            read.get(),
            (added.len() + 2 + end.len() + 1 + later.len() + 1) as u64
        );
        assert!(events.next().await.is_none());
    }

    /// A Table's watch events (columns in the first only, a bookmark as a one-row Table,
    /// ERROR as a Status) decode as the JSON ones do.
    #[test]
    fn unwraps_table_events() {
        let obj = r#"{"kind":"StorageClass","apiVersion":"storage.k8s.io/v1","metadata":{"name":"a","resourceVersion":"7"},"provisioner":"x"}"#;
        let mut cols = None;
        let first = format!(
            r#"{{"type":"ADDED","object":{{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{{"resourceVersion":"7"}},"columnDefinitions":[{{"name":"Name","type":"string","format":"name","description":"","priority":0}}],"rows":[{{"cells":["a"],"object":{obj}}}]}}}}"#
        );
        let WatchEvent::Added(o) = parse_table_event(first.as_bytes(), &mut cols).unwrap() else {
            panic!("not ADDED");
        };
        assert_eq!(o.raw(), obj);
        let next = format!(
            r#"{{"type":"MODIFIED","object":{{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{{"resourceVersion":"7"}},"columnDefinitions":null,"rows":[{{"cells":["b"],"object":{obj}}}]}}}}"#
        );
        let WatchEvent::Modified(o) = parse_table_event(next.as_bytes(), &mut cols).unwrap() else {
            panic!("not MODIFIED");
        };
        assert_eq!(o.table_row().unwrap().columns[0].name, "Name");
        let bookmark = br#"{"type":"BOOKMARK","object":{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"12"},"columnDefinitions":null,"rows":[{"cells":["",""],"object":{"kind":"StorageClass","apiVersion":"storage.k8s.io/v1","metadata":{"resourceVersion":"12","creationTimestamp":null,"annotations":{"k8s.io/initial-events-end":"true"}}}}]}}"#;
        assert!(matches!(
            parse_table_event(bookmark, &mut cols).unwrap(),
            WatchEvent::Bookmark { ref resource_version, initial_events_end: true } if resource_version == "12"
        ));
        let error = br#"{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 5 (9)","reason":"Expired","code":410}}"#;
        assert!(
            matches!(parse_table_event(error, &mut cols).unwrap(), WatchEvent::Error(s) if s.is_expired())
        );
        // A server without Tables answers plain JSON: read as before.
        let plain = format!(r#"{{"type":"ADDED","object":{obj}}}"#);
        let WatchEvent::Added(o) = parse_table_event(plain.as_bytes(), &mut cols).unwrap() else {
            panic!("not ADDED");
        };
        assert!(o.table_row().is_none());
    }
}
