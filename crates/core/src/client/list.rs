//! List bodies split into raw objects as they arrive (`read_list`): the splitter finds
//! the top-level `"items":[` (a server Table's `"rows":[`, whose rows carry their cells)
//! and takes each item with [`crate::scan`]'s validating scanner, so that a relist of
//! 100k objects never holds the body whole nor parses it into a `serde_json::Value`.
//! Anything not shaped as kube-apiserver writes a list is left whole to [`parse_list`].
//! A protobuf list is read item by item as it arrives too (`read_protobuf_list`,
//! [`crate::client::protobuf::ListReader`]).

use std::sync::Arc;

use http_body_util::BodyExt;
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::cache::listwatch::{ListPage, SourceError};
use crate::cache::object::{Object, ObjectRef, TableColumn, TableRow, TypeMeta};
use crate::scan::{self, Scan};

/// A list, or a Table (`rows` instead of `items`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListWire {
    #[serde(default)]
    metadata: ListMetaWire,
    #[serde(default)]
    items: Option<Vec<Box<RawValue>>>,
    #[serde(default)]
    column_definitions: Option<Vec<TableColumn>>,
    #[serde(default)]
    rows: Option<Vec<RowWire>>,
}

/// A Table row (metav1.TableRow; `conditions` unread).
#[derive(Deserialize)]
struct RowWire {
    cells: Box<RawValue>,
    #[serde(default)]
    object: Option<Box<RawValue>>,
}

/// A Table's column definitions, shared by its rows (`null` in the watch events after
/// the first: apiserver's `watchEmbeddedEncoder` sets `NoHeaders` once it has written one).
pub(super) fn shared_columns(defs: Option<Vec<TableColumn>>) -> Option<Arc<[TableColumn]>> {
    defs.filter(|d| !d.is_empty()).map(Arc::from)
}

/// A Table row without its object: a server that ignored `includeObject=Object`.
pub(super) fn no_row_object() -> SourceError {
    SourceError::Decode("a Table row without its object (includeObject=Object)".into())
}

/// The object of a Table row. A row without one is an error: the informer needs it.
fn row_object(object: Option<Box<RawValue>>) -> Result<Object, SourceError> {
    let raw = object
        .filter(|o| o.get() != "null")
        .ok_or_else(no_row_object)?;
    Object::from_raw(raw).map_err(|e| SourceError::Decode(format!("table row: {e}")))
}

/// The list page of a list's (or Table's) metadata and items.
fn page_of(meta: ListMetaWire, items: Vec<ObjectRef>) -> ListPage {
    ListPage {
        resource_version: meta.resource_version,
        continue_token: meta.continue_token.filter(|c| !c.is_empty()),
        remaining_item_count: meta.remaining_item_count,
        items,
        transfer: Default::default(),
        wire_fallback: None,
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct ListMetaWire {
    #[serde(default)]
    resource_version: String,
    #[serde(default, rename = "continue")]
    continue_token: Option<String>,
    #[serde(default)]
    remaining_item_count: Option<i64>,
}

/// Splits a list body into raw objects.
pub fn parse_list(body: &[u8]) -> Result<ListPage, SourceError> {
    let wire: ListWire =
        serde_json::from_slice(body).map_err(|e| SourceError::Decode(format!("list body: {e}")))?;
    let mut items = Vec::new();
    let columns = shared_columns(wire.column_definitions).unwrap_or_else(|| Arc::from([]));
    for row in wire.rows.unwrap_or_default() {
        let mut obj = row_object(row.object)?;
        obj.set_row(TableRow {
            columns: columns.clone(),
            cells: row.cells,
        });
        items.push(ObjectRef::new(obj));
    }
    for raw in wire.items.unwrap_or_default() {
        let obj =
            Object::from_raw(raw).map_err(|e| SourceError::Decode(format!("list item: {e}")))?;
        items.push(ObjectRef::new(obj));
    }
    Ok(page_of(wire.metadata, items))
}

/// Reads `body` to its end, each data frame given to `feed` as it arrives, and returns the
/// bytes read; the first error `feed` returns stops it (the rest of the body unread). The
/// outer `Err` is the transport's.
async fn each_frame<E>(
    body: &mut kube::client::Body,
    mut feed: impl FnMut(&[u8]) -> Result<(), E>,
) -> Result<Result<u64, E>, SourceError> {
    let mut bytes = 0;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| SourceError::Transport(e.to_string()))?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        bytes += data.len() as u64;
        if let Err(e) = feed(&data) {
            return Ok(Err(e));
        }
    }
    Ok(Ok(bytes))
}

/// Splits a list body into objects as it arrives, so that the body is never held whole:
/// a relist of 100k pods needs the objects' memory, not that plus the body's. A body that
/// is not `{…,"items":[…],…}` is buffered and left to [`parse_list`].
pub(super) async fn read_list(
    mut body: kube::client::Body,
    type_meta: Option<Arc<TypeMeta>>,
) -> Result<ListPage, SourceError> {
    let mut split = ListSplitter {
        type_meta,
        ..ListSplitter::default()
    };
    let mut pending = Vec::new();
    let decoded = each_frame(&mut body, |data| {
        if pending.is_empty() && data.len() >= SPLIT_CHUNK {
            return split.feed(data);
        }
        pending.extend_from_slice(data);
        if pending.len() >= SPLIT_CHUNK {
            split.feed(&pending)?;
            pending.clear();
        }
        Ok(())
    })
    .await??;
    if !pending.is_empty() {
        split.feed(&pending)?;
    }
    let mut page = split.finish()?;
    page.transfer.bytes = decoded;
    Ok(page)
}

/// Why a protobuf list body could not be turned into JSON: the same list is then asked
/// for in JSON.
#[derive(Debug, thiserror::Error)]
pub(super) enum ProtobufListError {
    #[error(transparent)]
    Decode(#[from] crate::client::protobuf::DecodeError),
    /// An item whose decoded bytes are not UTF-8.
    #[error("protobuf: a list item: {0}")]
    ItemText(std::str::Utf8Error),
    /// An item whose decoded bytes are not an object's JSON.
    #[error("protobuf: a list item: {0}")]
    ItemJson(serde_json::Error),
    #[error("protobuf: the list's metadata: {0}")]
    Metadata(serde_json::Error),
}

/// A protobuf list body (`k8s\0` + envelope of a `…List`) read as it arrives, each item
/// turned into the bytes the apiserver's JSON would have ([`crate::client::protobuf`]) as
/// soon as its bytes are in: as [`read_list`], the body is never held whole. The outer
/// `Err` is the transport's; the inner a decode error, after which the caller asks JSON
/// (the rest of the body is not read). `typed`: each item gets its kind and apiVersion, as
/// [`read_list`]'s `type_meta` gives them ([`crate::client::protobuf::ListReader::typed`]);
/// `omit`: what the items are written without.
pub(super) async fn read_protobuf_list(
    mut body: kube::client::Body,
    table: &crate::client::protobuf::Table,
    typed: bool,
    omit: crate::client::protobuf::Omit,
) -> Result<Result<ListPage, ProtobufListError>, SourceError> {
    let mut reader = crate::client::protobuf::ListReader::new(table).omit(omit);
    if typed {
        reader = reader.typed();
    }
    let mut items = Vec::new();
    let mut bad_item = None;
    let mut on_item = |item: &[u8]| {
        let obj = std::str::from_utf8(item)
            .map_err(ProtobufListError::ItemText)
            .and_then(|text| Object::from_valid_json(text).map_err(ProtobufListError::ItemJson));
        match obj {
            Ok(obj) => items.push(ObjectRef::new(obj)),
            Err(e) => bad_item = bad_item.take().or(Some(e)),
        }
    };
    let bytes = match each_frame(&mut body, |data| reader.feed(data, &mut on_item)).await? {
        Ok(bytes) => bytes,
        Err(e) => return Ok(Err(e.into())),
    };
    let head = match (reader.finish(), bad_item) {
        (Err(e), _) => return Ok(Err(e.into())),
        (Ok(_), Some(e)) => return Ok(Err(e)),
        (Ok(head), None) => head,
    };
    let meta: ListMetaWire = match serde_json::from_slice(&head.metadata) {
        Ok(m) => m,
        Err(e) => return Ok(Err(ProtobufListError::Metadata(e))),
    };
    let mut page = page_of(meta, items);
    page.transfer.protobuf = true;
    page.transfer.bytes = bytes;
    Ok(Ok(page))
}

/// Frames are gathered to at least this many bytes before they are split. Over HTTP/2 a
/// body comes in DATA frames of at most 16 KiB (SETTINGS_MAX_FRAME_SIZE's default, which
/// client-go's transport keeps), and an item cut by a frame's end is scanned twice: fed
/// frame by frame, a 10k-pod list of 4.7 KB pods costs the splitter 13 % more
/// instructions than the same body read over HTTP/1.1 (benches/instructions.sh, A).
const SPLIT_CHUNK: usize = 256 * 1024;

/// Where a [`ListSplitter`] is in the body.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum SplitState {
    /// Before the top-level `"items":[` (the prefix is scanned byte by byte: it is short).
    #[default]
    Prefix,
    /// Inside the items array: before an item, a comma or the closing `]`.
    Items,
    /// After the items array (the rest of the list object).
    Suffix,
    /// Not a list of the expected shape: everything is buffered for [`parse_list`].
    Whole,
}

/// The incremental state of [`read_list`].
#[derive(Debug, Default)]
struct ListSplitter {
    /// Put into items that do not carry their own type.
    type_meta: Option<Arc<TypeMeta>>,
    state: SplitState,
    /// In `Prefix`, `Suffix` and `Whole`: the bytes not consumed yet. In `Items`: the
    /// start of an item whose end has not arrived yet (empty between items); items wholly
    /// inside a frame are read where they are, not copied here.
    buf: Vec<u8>,
    /// In `Prefix`: how much of `buf` has been scanned, and the scanner's state.
    scanned: usize,
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// Start of the last string seen at depth 1 (a key candidate), and where it ended.
    last_key: Option<(usize, usize)>,
    /// In `Items`: where the item in `buf` stands (its nesting so far).
    partial: scan::Boundary,
    /// The list without its items: the prefix up to `[`, then `]` and the suffix.
    skeleton: Vec<u8>,
    items: Vec<ObjectRef>,
    /// A Table: the array split is `rows`, and `cells[i]` is the row of `items[i]` (the
    /// column definitions are read from the skeleton at the end).
    table: bool,
    cells: Vec<Box<RawValue>>,
}

/// A body with no items key in its first this many bytes is not a list as kube-apiserver
/// writes it, and is left whole to [`parse_list`].
const SPLIT_AT: usize = 256 * 1024;

/// Reads the item at the start of `b`: the object and its length, or `None` when `b` ends
/// inside it and more may come (`!last`). Objects are validated and copied in one pass;
/// anything that pass does not take (an error, a non-object, deep nesting) is read by
/// serde_json, which words the error.
fn take_item(
    b: &[u8],
    last: bool,
    type_meta: Option<&TypeMeta>,
) -> Result<Option<(ObjectRef, usize)>, SourceError> {
    match scan::scan_object(b, 0) {
        Scan::End(end) => {
            if let Ok(obj) = std::str::from_utf8(&b[..end])
                .map_err(|_| ())
                .and_then(|text| Object::from_valid_json_typed(text, type_meta).map_err(|_| ()))
            {
                return Ok(Some((ObjectRef::new(obj), end)));
            }
        }
        Scan::Eof if !last => return Ok(None),
        Scan::Eof | Scan::Refused => {}
    }
    let mut items = serde_json::Deserializer::from_slice(b).into_iter::<Box<RawValue>>();
    match items.next() {
        Some(Ok(raw)) => {
            let end = items.byte_offset();
            let obj = Object::from_raw(raw)
                .map_err(|e| SourceError::Decode(format!("list item: {e}")))?;
            let obj = match type_meta {
                Some(t) => obj.typed(t),
                None => obj,
            };
            Ok(Some((ObjectRef::new(obj), end)))
        }
        Some(Err(e)) if e.is_eof() && !last => Ok(None),
        Some(Err(e)) => Err(SourceError::Decode(format!("list body: {e}"))),
        None => Ok(None),
    }
}

/// Reads the Table row at the start of `b` as [`take_item`] reads an item: its object
/// (typed as list items are) and its cells, and the row's length.
fn take_row(
    b: &[u8],
    last: bool,
    type_meta: Option<&TypeMeta>,
) -> Result<Option<(Object, Box<RawValue>, usize)>, SourceError> {
    match scan::scan_object(b, 0) {
        Scan::End(end) => {
            let (mut cells, mut object) = (None, None);
            scan::each_member(&b[..end], 0, |key, at| {
                let to = scan::skip_valid(b, at)?;
                match key {
                    b"cells" => cells = Some(at..to),
                    b"object" => object = Some(at..to),
                    _ => {}
                }
                Some(to)
            });
            let text = |r: std::ops::Range<usize>| std::str::from_utf8(&b[r]).ok();
            if let (Some(c), Some(o)) = (cells.and_then(text), object.and_then(text)) {
                if o == "null" {
                    return Err(no_row_object());
                }
                if let (Ok(c), Ok(o)) = (
                    RawValue::from_string(c.to_owned()),
                    Object::from_valid_json_typed(o, type_meta),
                ) {
                    return Ok(Some((o, c, end)));
                }
            }
        }
        Scan::Eof if !last => return Ok(None),
        Scan::Eof | Scan::Refused => {}
    }
    let mut rows = serde_json::Deserializer::from_slice(b).into_iter::<RowWire>();
    match rows.next() {
        Some(Ok(row)) => {
            let end = rows.byte_offset();
            let mut obj = row_object(row.object)?;
            if let Some(t) = type_meta {
                obj = obj.typed(t);
            }
            Ok(Some((obj, row.cells, end)))
        }
        Some(Err(e)) if e.is_eof() && !last => Ok(None),
        Some(Err(e)) => Err(SourceError::Decode(format!("table row: {e}"))),
        None => Ok(None),
    }
}

impl ListSplitter {
    /// Takes the item (or Table row) at the start of `b`: its length, or `None` when `b`
    /// ends inside it.
    fn take(&mut self, b: &[u8], last: bool) -> Result<Option<usize>, SourceError> {
        if self.table {
            let Some((obj, cells, len)) = take_row(b, last, self.type_meta.as_deref())? else {
                return Ok(None);
            };
            self.items.push(ObjectRef::new(obj));
            self.cells.push(cells);
            return Ok(Some(len));
        }
        let Some((obj, len)) = take_item(b, last, self.type_meta.as_deref())? else {
            return Ok(None);
        };
        self.items.push(obj);
        Ok(Some(len))
    }

    fn feed(&mut self, data: &[u8]) -> Result<(), SourceError> {
        match self.state {
            SplitState::Prefix => {
                self.buf.extend_from_slice(data);
                self.scan_prefix();
                if self.state == SplitState::Items {
                    let rest = std::mem::take(&mut self.buf);
                    self.split_items(&rest)?;
                }
            }
            SplitState::Items => self.split_items(data)?,
            SplitState::Suffix | SplitState::Whole => self.buf.extend_from_slice(data),
        }
        Ok(())
    }

    /// Scans `buf` for the top-level key `items` followed by `[`.
    fn scan_prefix(&mut self) {
        let mut i = self.scanned;
        while i < self.buf.len() {
            let b = self.buf[i];
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                    if let Some((start, _)) = self.last_key {
                        self.last_key = Some((start, i + 1));
                    }
                }
            } else {
                match b {
                    b'"' => {
                        self.in_string = true;
                        self.last_key = (self.depth == 1).then_some((i, i));
                    }
                    b'{' | b'[' => {
                        if b == b'[' && self.depth == 1 && self.after_items_key(i) {
                            self.skeleton.extend_from_slice(&self.buf[..=i]);
                            self.buf.drain(..=i);
                            self.state = SplitState::Items;
                            return;
                        }
                        self.depth += 1;
                    }
                    b'}' | b']' => {
                        self.depth = self.depth.saturating_sub(1);
                        if self.depth == 0 {
                            self.state = SplitState::Whole;
                            return;
                        }
                    }
                    b',' => self.last_key = None,
                    _ => {}
                }
            }
            i += 1;
        }
        self.scanned = i;
        if self.buf.len() > SPLIT_AT {
            // No items key in the first 256 KiB: not a list as kube-apiserver writes it.
            self.state = SplitState::Whole;
        }
    }

    /// Whether `buf[..at]` ends with the key `"items"` (a Table's `"rows"`: then the
    /// splitter reads rows) and a colon (and whitespace).
    fn after_items_key(&mut self, at: usize) -> bool {
        let Some((start, end)) = self.last_key else {
            return false;
        };
        let key = &self.buf[start..end];
        self.table = key == b"\"rows\"";
        (key == b"\"items\"" || self.table)
            && self.buf[end..at]
                .iter()
                .filter(|b| !b.is_ascii_whitespace())
                .eq([b':'].iter())
    }

    /// Takes the items in `data` (the next bytes of the body after those already fed) as
    /// far as they are complete; the start of an incomplete one is kept in `buf`.
    fn split_items(&mut self, mut data: &[u8]) -> Result<(), SourceError> {
        if !self.buf.is_empty() {
            let Some(end) = self.partial.find_end(data) else {
                self.buf.extend_from_slice(data);
                return Ok(());
            };
            self.buf.extend_from_slice(&data[..end]);
            data = &data[end..];
            let item = std::mem::take(&mut self.buf);
            self.partial = scan::Boundary::default();
            match self.take(&item, true)? {
                Some(len) if len == item.len() => {}
                _ => return Err(SourceError::Decode("list body: malformed item".into())),
            }
        }
        let mut pos = 0;
        loop {
            while pos < data.len() && (data[pos].is_ascii_whitespace() || data[pos] == b',') {
                pos += 1;
            }
            if pos == data.len() {
                return Ok(());
            }
            if data[pos] == b']' {
                self.skeleton.push(b']');
                self.skeleton.extend_from_slice(&data[pos + 1..]);
                self.state = SplitState::Suffix;
                return Ok(());
            }
            match self.take(&data[pos..], false)? {
                Some(len) => pos += len,
                None => {
                    self.buf.extend_from_slice(&data[pos..]);
                    if self.partial.find_end(&self.buf).is_some() {
                        return Err(SourceError::Decode("list body: malformed item".into()));
                    }
                    return Ok(());
                }
            }
        }
    }

    fn finish(mut self) -> Result<ListPage, SourceError> {
        match self.state {
            SplitState::Items => {
                if !self.buf.is_empty() {
                    let buf = std::mem::take(&mut self.buf);
                    self.take(&buf, true)?;
                }
                return Err(SourceError::Decode(
                    "list body: EOF while parsing a list".into(),
                ));
            }
            SplitState::Prefix | SplitState::Whole => {
                let mut page = parse_list(&self.buf)?;
                if let Some(t) = &self.type_meta {
                    page.items = page
                        .items
                        .into_iter()
                        .map(|o| Arc::try_unwrap(o).map_or_else(|o| o, |o| Arc::new(o.typed(t))))
                        .collect();
                }
                return Ok(page);
            }
            SplitState::Suffix => {}
        }
        self.skeleton.extend_from_slice(&self.buf);
        let wire: ListWire = serde_json::from_slice(&self.skeleton)
            .map_err(|e| SourceError::Decode(format!("list body: {e}")))?;
        if self.table {
            let columns = shared_columns(wire.column_definitions).unwrap_or_else(|| Arc::from([]));
            for (obj, cells) in self.items.iter_mut().zip(self.cells) {
                if let Some(obj) = Arc::get_mut(obj) {
                    obj.set_row(TableRow {
                        columns: columns.clone(),
                        cells,
                    });
                }
            }
        }
        Ok(page_of(wire.metadata, self.items))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_list_without_item_kinds() {
        let body = br#"{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"255","continue":"abc","remainingItemCount":3},"items":[{"metadata":{"name":"a","namespace":"ns","resourceVersion":"7"},"data":{"k":"v"}}]}"#;
        let page = parse_list(body).unwrap();
        assert_eq!(page.resource_version, "255");
        assert_eq!(page.continue_token.as_deref(), Some("abc"));
        assert_eq!(page.remaining_item_count, Some(3));
        assert_eq!(page.items[0].key(), "ns/a");
        assert!(page.items[0].raw().contains(r#""data":{"k":"v"}"#));
        let empty = parse_list(br#"{"metadata":{"continue":"","resourceVersion":"3"},"items":[]}"#)
            .unwrap();
        assert!(empty.continue_token.is_none() && empty.items.is_empty());
    }

    /// The incremental splitter gives what `parse_list` gives, however the body is cut.
    #[test]
    fn splits_lists_as_they_arrive() {
        let bodies: [&[u8]; 6] = [
            br#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"255","continue":"a\"items\":[b","remainingItemCount":3},"items":[{"metadata":{"name":"a","namespace":"ns","resourceVersion":"7"},"data":{"k":"v]}"}} , {"metadata":{"name":"b\"]","resourceVersion":"8"}}]}"#,
            br#"{"items" : [ ], "metadata":{"resourceVersion":"3","continue":"x"}}"#,
            br#"{"metadata":{"items":[1]},"items":[{"metadata":{"name":"c"}}],"kind":"L"}"#,
            br#"{"metadata":{"resourceVersion":"1"}}"#,
            br#"  {"kind":"X","items":[{"a":{"items":[]},"metadata":{"name":"d","resourceVersion":"2"}}]}  "#,
            // Cut inside a number ("-", "1.", "1e"), an item is incomplete, not invalid.
            br#"{"items":[{"metadata":{"name":"e"},"x":-1.5e-3,"y":[0.25,10,1E9]},{"z":-0}]}"#,
        ];
        for body in bodies {
            let want = parse_list(body).unwrap();
            let keys = |p: &ListPage| -> Vec<(String, String)> {
                p.items
                    .iter()
                    .map(|o| (o.key(), o.raw().to_owned()))
                    .collect()
            };
            for cut in [1, 2, 3, 7, 16, body.len()] {
                let mut s = ListSplitter::default();
                for chunk in body.chunks(cut) {
                    s.feed(chunk).unwrap();
                }
                let got = s.finish().unwrap();
                assert_eq!(got.resource_version, want.resource_version, "{cut}");
                assert_eq!(got.continue_token, want.continue_token, "{cut}");
                assert_eq!(got.remaining_item_count, want.remaining_item_count);
                assert_eq!(keys(&got), keys(&want), "cut {cut}");
            }
        }
        for bad in [
            &br#"{"items":[{"metadata":{"name":"a"}"#[..],
            br#"{"items":[{"metadata":{"name":1}}]}"#,
            br#"{"items":[{"a":1}}]}"#,
            b"{not json",
        ] {
            let mut s = ListSplitter::default();
            let r = s.feed(bad).and_then(|()| s.finish());
            assert!(r.is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }

    /// A Table+Object list, split however it arrives, gives the JSON list's objects with
    /// the rows' cells.
    #[test]
    fn unwraps_tables() {
        let obj = r#"{"kind":"StorageClass","apiVersion":"storage.k8s.io/v1","metadata":{"name":"a","resourceVersion":"7"},"provisioner":"x"}"#;
        let body = format!(
            r#"{{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{{"resourceVersion":"9","continue":"c"}},"columnDefinitions":[{{"name":"Name","type":"string","format":"name","description":"d","priority":0}},{{"name":"Provisioner","type":"string","format":"","description":"","priority":1}}],"rows":[{{"cells":["a","x"],"object":{obj}}}]}}"#
        );
        for cut in [1, 5, 64, body.len()] {
            let mut s = ListSplitter::default();
            for chunk in body.as_bytes().chunks(cut) {
                s.feed(chunk).unwrap();
            }
            let page = s.finish().unwrap();
            assert_eq!(page.resource_version, "9");
            assert_eq!(page.continue_token.as_deref(), Some("c"));
            assert_eq!(page.items[0].raw(), obj, "cut {cut}");
            let row = page.items[0].table_row().unwrap();
            assert_eq!(row.cells.get(), r#"["a","x"]"#);
            assert_eq!(row.columns[1].name, "Provisioner");
            assert_eq!(row.columns[1].priority, 1);
        }
    }
}
