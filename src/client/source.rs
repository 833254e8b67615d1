//! [`KubeSource`]: the [`ListerWatcher`] over kube's HTTP client, and the GET of single
//! documents that discovery uses, both through the request layer's rule.
//!
//! Lists and watch streams are read as bytes and split here, so that each object stays
//! raw JSON ([`Object`]) and is never parsed into a full `serde_json::Value` on this path.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures::Stream;
use http_body_util::BodyExt;
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::cache::listwatch::{
    ApiStatus, ListOptions, ListPage, ListerWatcher, SourceError, WatchEvent, WatchOptions,
    WatchStream,
};
use crate::cache::object::{Object, ObjectRef, TableColumn, TableRow, TypeMeta};
use crate::scan::{self, Scan};

/// The longest watch line kwatch accepts; a stream that never ends a line is cut here
/// instead of growing memory without bound.
pub const MAX_LINE_BYTES: usize = 128 * 1024 * 1024;

/// The real source: kube's client against a collection URL such as
/// `/api/v1/namespaces/default/pods` or `/apis/apps/v1/deployments`.
#[derive(Clone)]
pub struct KubeSource {
    client: kube::Client,
    collection_path: String,
    label_selector: Option<String>,
    field_selector: Option<String>,
    request_timeout: Option<Duration>,
    /// The type of the collection's objects, for list items that do not carry it.
    type_meta: Option<Arc<TypeMeta>>,
    /// `--metadata-only`: ask for PartialObjectMetadata(List) ([`ACCEPT_METADATA_LIST`],
    /// [`ACCEPT_METADATA`]).
    metadata_only: bool,
    /// Ask for the server's Table with each row's whole object ([`ACCEPT_TABLE`],
    /// `includeObject=Object`): objects are unwrapped from the rows and carry their cells
    /// ([`crate::cache::object::TableRow`]).
    table: bool,
}

/// What lists and watches ask for by default.
const ACCEPT_JSON: &str = "application/json";

/// A metadata-only list's `Accept`: client-go's metadata client (`metadata/metadata.go`)
/// asks for PartialObjectMetadataList in protobuf, then in JSON, then for plain JSON;
/// kwatch speaks JSON only and asks for the last two.
const ACCEPT_METADATA_LIST: &str =
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";

/// A metadata-only watch's (a streaming list's too) `Accept`: PartialObjectMetadata
/// objects in every event, as client-go's metadata client asks for them, JSON only.
const ACCEPT_METADATA: &str =
    "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";

/// The `Accept` of a list or watch for the server's Table: kubectl get's
/// (`transformRequests` in kubectl's get.go), v1 then v1beta1 then plain JSON for a server
/// that has no Table.
const ACCEPT_TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

impl KubeSource {
    pub fn new(
        client: kube::Client,
        collection_path: String,
        label_selector: Option<String>,
        field_selector: Option<String>,
        request_timeout: Option<Duration>,
    ) -> Self {
        KubeSource {
            client,
            collection_path,
            label_selector,
            field_selector,
            request_timeout,
            type_meta: None,
            metadata_only: false,
            table: false,
        }
    }

    /// Lists and watches the server's Table of the objects (for the table's cells).
    pub fn table(mut self, on: bool) -> Self {
        self.table = on;
        self
    }

    /// Lists and watches PartialObjectMetadata, as client-go's metadata informer does.
    pub fn metadata_only(mut self, on: bool) -> Self {
        self.metadata_only = on;
        self
    }

    /// Gives list items that lack them this `kind` and `apiVersion`, as client-go's
    /// decoder does.
    pub fn with_type(mut self, kind: &str, api_version: &str) -> Self {
        self.type_meta = Some(Arc::new(TypeMeta::new(kind, api_version)));
        self
    }

    fn url(&self, pairs: &[(&str, &str)]) -> String {
        let mut q = form_urlencoded::Serializer::new(String::new());
        if let Some(l) = &self.label_selector {
            q.append_pair("labelSelector", l);
        }
        if let Some(f) = &self.field_selector {
            q.append_pair("fieldSelector", f);
        }
        for (k, v) in pairs {
            q.append_pair(k, v);
        }
        if self.table {
            q.append_pair("includeObject", "Object");
        }
        let q = q.finish();
        if q.is_empty() {
            self.collection_path.clone()
        } else {
            format!("{}?{q}", self.collection_path)
        }
    }

    /// The `Accept` of a list (`list`) or a watch.
    fn accept(&self, list: bool) -> &'static str {
        if self.table {
            return ACCEPT_TABLE;
        }
        match (self.metadata_only, list) {
            (false, _) => ACCEPT_JSON,
            (true, true) => ACCEPT_METADATA_LIST,
            (true, false) => ACCEPT_METADATA,
        }
    }
}

/// Sends one GET; a response with a success status is returned as it is, any other
/// becomes [`SourceError::Api`] (the server's Status, or one made from the status line
/// and body). Server warnings are shown on the way ([`show_warnings`]).
async fn get(
    client: &kube::Client,
    url: String,
    accept: &str,
) -> Result<http::Response<kube::client::Body>, SourceError> {
    let req = http::Request::get(url)
        .header(http::header::ACCEPT, accept)
        // Watch streams are read line by line; see kube's request_events.
        .header(http::header::ACCEPT_ENCODING, "identity")
        .body(kube::client::Body::empty())
        .map_err(|e| SourceError::Invalid(e.to_string()))?;
    let res = client.send(req).await.map_err(transport_error)?;
    show_warnings(res.headers());
    if res.status().is_success() {
        return Ok(res);
    }
    let code = res.status().as_u16();
    let retry_after = retry_after_header(res.headers());
    let body = read_body(res.into_body(), 1024 * 1024)
        .await
        .unwrap_or_default();
    let mut status = parse_status(&body).unwrap_or_else(|| ApiStatus {
        code,
        reason: String::new(),
        message: non_status_message(code, &body),
        ..ApiStatus::default()
    });
    if status.code == 0 {
        status.code = code;
    }
    status.retry_after = retry_after;
    Err(SourceError::Api(status))
}

/// The largest document (discovery, a CRD) kwatch reads.
const MAX_DOCUMENT_BYTES: usize = 64 * 1024 * 1024;

/// GETs one document (discovery, a CRD) through the request layer ([`crate::cache::retry`]),
/// each attempt bounded by `timeout`; each retry is announced on stderr.
pub async fn get_document(
    client: &kube::Client,
    path: &str,
    accept: &str,
    timeout: Option<Duration>,
) -> Result<Vec<u8>, SourceError> {
    let attempt = || async {
        let fetch = async {
            let res = get(client, path.to_owned(), accept).await?;
            read_body(res.into_body(), MAX_DOCUMENT_BYTES).await
        };
        within(timeout, fetch).await
    };
    let on_retry = |r: crate::cache::retry::Retry| {
        let code = r.code.map(|c| format!("{c} ")).unwrap_or_default();
        tracing::warn!(
            "retrying GET {path} in {}s (attempt {} of {}): {code}{}",
            r.delay.as_secs(),
            r.attempt,
            r.max_retries,
            r.reason
        );
    };
    crate::cache::retry::send(crate::cache::retry::Verb::Get, attempt, &on_retry).await
}

/// `fut`, or [`SourceError::Timeout`] once `timeout` has passed. The connection's own
/// connect timeout is the same `--request-timeout`, and counts as it.
async fn within<T>(
    timeout: Option<Duration>,
    fut: impl Future<Output = Result<T, SourceError>>,
) -> Result<T, SourceError> {
    let Some(t) = timeout else {
        return fut.await;
    };
    match tokio::time::timeout(t, fut).await {
        Err(_) => Err(SourceError::Timeout(t)),
        Ok(Err(SourceError::Transport(m))) if m.contains("deadline has elapsed") => {
            Err(SourceError::Timeout(t))
        }
        Ok(r) => r,
    }
}

/// Shows each server warning (`Warning: 299 - "text"` headers, RFC 7234) once per run on
/// stderr, as kubectl's deduplicating warning handler does.
fn show_warnings(headers: &http::HeaderMap) {
    use std::io::Write as _;
    static SHOWN: std::sync::Mutex<Option<std::collections::HashSet<String>>> =
        std::sync::Mutex::new(None);
    for value in headers.get_all(http::header::WARNING) {
        let Ok(value) = value.to_str() else { continue };
        for text in parse_warnings(value) {
            let mut shown = SHOWN.lock().unwrap_or_else(|e| e.into_inner());
            if shown
                .get_or_insert_with(Default::default)
                .insert(text.clone())
            {
                let clean = crate::text::sanitize(&text);
                let _ = writeln!(std::io::stderr(), "Warning: {clean}");
            }
        }
    }
}

/// client-go `ParseWarningHeaders`: the texts of the code-299 warnings in one header
/// value (`299 - "text"`, comma-separated, each with an optional quoted date). A value
/// that does not parse yields what was read before it.
fn parse_warnings(mut v: &str) -> Vec<String> {
    let mut out = Vec::new();
    loop {
        v = v.trim_start_matches([' ', '\t', ',']);
        if v.is_empty() {
            return out;
        }
        let Some((code, rest)) = v.split_once(' ') else {
            return out;
        };
        let Some((_agent, rest)) = rest.split_once(' ') else {
            return out;
        };
        let Some((text, rest)) = quoted(rest) else {
            return out;
        };
        v = rest.trim_start();
        if v.starts_with('"') {
            match quoted(v) {
                Some((_date, rest)) => v = rest,
                None => return out,
            }
        }
        if code == "299" {
            out.push(text);
        }
    }
}

/// The quoted string at the start of `s` (backslash escapes undone) and what follows it.
fn quoted(s: &str) -> Option<(String, &str)> {
    let mut chars = s.strip_prefix('"')?.char_indices();
    let mut text = String::new();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => text.push(chars.next()?.1),
            '"' => return Some((text, &s[i + 2..])),
            c => text.push(c),
        }
    }
    None
}

impl ListerWatcher for KubeSource {
    async fn list(&self, opts: ListOptions) -> Result<ListPage, SourceError> {
        let limit = opts.limit.filter(|l| *l > 0).map(|l| l.to_string());
        let mut pairs: Vec<(&str, &str)> = Vec::new();
        if let Some(l) = &limit {
            pairs.push(("limit", l));
        }
        if let Some(c) = &opts.continue_token {
            pairs.push(("continue", c));
        } else if !opts.resource_version.is_empty() {
            pairs.push(("resourceVersion", &opts.resource_version));
            if let Some(m) = opts.resource_version_match {
                pairs.push(("resourceVersionMatch", m));
            }
        }
        let url = self.url(&pairs);
        let fetch = async {
            let res = get(&self.client, url, self.accept(true)).await?;
            read_list(res.into_body(), self.type_meta.clone()).await
        };
        within(self.request_timeout, fetch).await
    }

    async fn watch(&self, opts: WatchOptions) -> Result<WatchStream, SourceError> {
        let timeout = opts.timeout_seconds.to_string();
        let mut pairs: Vec<(&str, &str)> = vec![("watch", "true")];
        if opts.timeout_seconds > 0 {
            pairs.push(("timeoutSeconds", &timeout));
        }
        if opts.allow_bookmarks {
            pairs.push(("allowWatchBookmarks", "true"));
        }
        if opts.send_initial_events {
            pairs.push(("sendInitialEvents", "true"));
            pairs.push(("resourceVersionMatch", "NotOlderThan"));
        }
        pairs.push(("resourceVersion", &opts.resource_version));
        let url = self.url(&pairs);
        let res = within(
            self.request_timeout,
            get(&self.client, url, self.accept(false)),
        )
        .await?;
        Ok(Box::pin(watch_lines(
            res.into_body(),
            MAX_LINE_BYTES,
            self.table,
        )))
    }
}

/// Sorts a failure to get a response into what the request layer and the reflector
/// tell apart: refused, lost (retried), TLS and DNS (never fixed by retrying), other.
fn transport_error(e: kube::Error) -> SourceError {
    use std::io::ErrorKind;
    if let Some(refused) = crate::client::connect::tls_failure(&e) {
        return SourceError::Tls(refused);
    }
    let mut text = e.to_string();
    let (mut refused, mut lost, mut tls) = (false, false, false);
    let mut src: Option<&(dyn std::error::Error + 'static)> = Some(&e);
    while let Some(s) = src {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            match io.kind() {
                ErrorKind::ConnectionRefused => refused = true,
                ErrorKind::ConnectionReset
                | ErrorKind::ConnectionAborted
                | ErrorKind::UnexpectedEof
                | ErrorKind::BrokenPipe => lost = true,
                _ => {}
            }
            // An io::Error's source() skips the error it wraps: look at it here.
            tls |= io
                .get_ref()
                .is_some_and(|inner| inner.downcast_ref::<rustls::Error>().is_some());
        }
        tls |= s.downcast_ref::<rustls::Error>().is_some();
        if let Some(h) = s.downcast_ref::<hyper::Error>() {
            lost |= h.is_incomplete_message() || h.is_closed() || h.is_canceled();
        }
        let msg = s.to_string();
        if !text.contains(&msg) {
            text.push_str(": ");
            text.push_str(&msg);
        }
        src = s.source();
    }
    let lower = text.to_ascii_lowercase();
    refused |= lower.contains("connection refused");
    tls |= lower.contains("invalid peer certificate") || lower.contains("tls handshake");
    lost |= [
        "connection reset",
        "broken pipe",
        "unexpected eof",
        "goaway",
    ]
    .iter()
    .any(|m| lower.contains(m));
    if refused {
        SourceError::ConnectionRefused(describe_cut(&e))
    } else if tls {
        SourceError::Tls(format!("tls: {}", describe_cut(&e)))
    } else if lower.contains("dns error") || lower.contains("failed to lookup address") {
        SourceError::Dns(describe_cut(&e))
    } else if lost {
        SourceError::Lost(describe_cut(&e))
    } else {
        SourceError::Transport(text)
    }
}

async fn read_body(mut body: kube::client::Body, max: usize) -> Result<Vec<u8>, SourceError> {
    // Sized from Content-Length when there is one: a list body can be hundreds of MB, and
    // growing by doubling would copy it and briefly hold up to twice its size.
    let hint = hyper::body::Body::size_hint(&body);
    let mut out = Vec::with_capacity(hint.exact().unwrap_or(hint.lower()).min(max as u64) as usize);
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| SourceError::Transport(e.to_string()))?;
        if let Ok(data) = frame.into_data() {
            if out.len() + data.len() > max {
                break;
            }
            out.extend_from_slice(&data);
        }
    }
    Ok(out)
}

fn non_status_message(code: u16, body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let first = text.lines().next().unwrap_or("").trim();
    let first: String = first.chars().take(200).collect();
    let canonical = http::StatusCode::from_u16(code)
        .ok()
        .and_then(|c| c.canonical_reason())
        .unwrap_or("error");
    if first.is_empty() {
        format!("the server answered {code} {canonical} with no Status body")
    } else {
        format!("the server answered {code} {canonical}: {first}")
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StatusWire {
    #[serde(default)]
    kind: String,
    #[serde(default)]
    code: u16,
    #[serde(default)]
    reason: String,
    #[serde(default)]
    message: String,
    #[serde(default)]
    details: Option<StatusDetailsWire>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StatusDetailsWire {
    #[serde(default)]
    causes: Vec<CauseWire>,
}

#[derive(Deserialize)]
struct CauseWire {
    #[serde(default)]
    reason: String,
}

fn status_from_wire(w: StatusWire) -> ApiStatus {
    let too_large_rv = w.details.as_ref().is_some_and(|d| {
        d.causes
            .iter()
            .any(|c| c.reason == "ResourceVersionTooLarge")
    });
    ApiStatus {
        code: w.code,
        reason: w.reason,
        message: w.message,
        retry_after: None,
        too_large_rv,
    }
}

/// client-go `retryAfterSeconds`: the `Retry-After` header as a whole number of seconds
/// (Go's `strconv.Atoi`: a sign is allowed; a negative wait is no wait); an HTTP date or
/// anything else is no `Retry-After` at all.
fn retry_after_header(headers: &http::HeaderMap) -> Option<Duration> {
    let v = headers.get(http::header::RETRY_AFTER)?.to_str().ok()?;
    let secs: i64 = v.trim().parse().ok()?;
    Some(Duration::from_secs(secs.max(0).unsigned_abs()))
}

fn parse_status(body: &[u8]) -> Option<ApiStatus> {
    let w: StatusWire = serde_json::from_slice(body).ok()?;
    (w.kind == "Status").then(|| status_from_wire(w))
}

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
fn shared_columns(defs: Option<Vec<TableColumn>>) -> Option<Arc<[TableColumn]>> {
    defs.filter(|d| !d.is_empty()).map(Arc::from)
}

/// A Table row without its object: a server that ignored `includeObject=Object`.
fn no_row_object() -> SourceError {
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

/// Splits a list body into objects as it arrives, so that the body is never held whole:
/// a relist of 100k pods needs the objects' memory, not that plus the body's. A body that
/// is not `{…,"items":[…],…}` is buffered and left to [`parse_list`].
async fn read_list(
    mut body: kube::client::Body,
    type_meta: Option<Arc<TypeMeta>>,
) -> Result<ListPage, SourceError> {
    let mut split = ListSplitter {
        type_meta,
        ..ListSplitter::default()
    };
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| SourceError::Transport(e.to_string()))?;
        if let Ok(data) = frame.into_data() {
            split.feed(&data)?;
        }
    }
    split.finish()
}

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
    partial: Boundary,
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

/// Finds where an item that started in an earlier frame ends, without validating it (the
/// item is validated once it is whole). For valid JSON it ends exactly where the value
/// does; for invalid JSON anywhere, and the validation then fails.
#[derive(Debug, Default, Clone, Copy)]
struct Boundary {
    depth: usize,
    in_string: bool,
    escaped: bool,
}

impl Boundary {
    /// Advances over `data`; the index just after the item's closing bracket if it is in
    /// `data`.
    fn find_end(&mut self, data: &[u8]) -> Option<usize> {
        let mut i = 0;
        while i < data.len() {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                    i += 1;
                    continue;
                }
                let at = i + memchr::memchr2(b'"', b'\\', &data[i..])?;
                if data[at] == b'\\' {
                    self.escaped = true;
                } else {
                    self.in_string = false;
                }
                i = at + 1;
                continue;
            }
            match data[i] {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        return Some(i + 1);
                    }
                }
                _ => {}
            }
            i += 1;
        }
        None
    }
}

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
            self.partial = Boundary::default();
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
}

impl LineReader {
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
    fn text(&self) -> &[u8] {
        let b: &[u8] = match self {
            Line::Frame(b) => b,
            Line::Joined(b) => b,
        };
        &b[..b.len() - 1]
    }
}

/// Turns a watch body into decoded events. A body that ends cleanly ends the stream; a
/// connection cut mid-body yields one `Transport` error, then ends. A partial last line
/// is dropped.
fn watch_lines(
    body: kube::client::Body,
    max_line: usize,
    table: bool,
) -> impl Stream<Item = Result<WatchEvent, SourceError>> + Send {
    let reader = LineReader {
        body,
        partial: BytesMut::new(),
        frame: Bytes::new(),
        max_line,
        done: false,
        table,
        columns: None,
    };
    futures::stream::unfold(reader, |mut r| async move {
        loop {
            if let Some(line) = r.next_line() {
                let ev = if r.table {
                    parse_table_event(line.text(), &mut r.columns)
                } else {
                    parse_event(line.text())
                };
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
                    // A reset or cut connection mid-stream: client-go treats these
                    // (IsProbableEOF) as the end of the watch, not as an error.
                    r.done = true;
                    return Some((Err(SourceError::Lost(describe_cut(&e))), r));
                }
            }
        }
    })
}

/// What cut a watch body, in a few words: the innermost cause, without the links some
/// TLS errors append.
fn describe_cut(e: &(dyn std::error::Error + 'static)) -> String {
    let mut inner = e;
    while let Some(s) = inner.source() {
        inner = s;
    }
    let text = inner.to_string();
    let text = text.split(": https://").next().unwrap_or(&text);
    if text.contains("close_notify") || text.contains("unexpected EOF") {
        "the server cut the connection (unexpected EOF)".to_owned()
    } else {
        text.to_owned()
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
    /// the rows' cells; its watch events (columns in the first only, a bookmark as a
    /// one-row Table, ERROR as a Status) decode as the JSON ones do.
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

    #[test]
    fn too_large_rv_status() {
        let s = parse_status(br#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Timeout: Too large resource version: 99999999, current: 256","reason":"Timeout","details":{"causes":[{"reason":"ResourceVersionTooLarge","message":"Too large resource version"}],"retryAfterSeconds":1},"code":504}"#).unwrap();
        assert!(s.is_too_large_rv() && !s.is_expired());
        // The body's retryAfterSeconds is no Retry-After: client-go reads the header.
        assert_eq!(s.retry_after, None);
    }

    #[test]
    fn parses_warning_headers_as_client_go() {
        assert_eq!(
            parse_warnings(r#"299 - "widgets.example.com/v1beta1 is deprecated; use v1""#),
            ["widgets.example.com/v1beta1 is deprecated; use v1"]
        );
        assert_eq!(
            parse_warnings(
                r#"299 - "a \"quoted\" word" "Wed, 21 Oct 2015 07:28:00 GMT", 199 agent "misc", 299 - "two""#
            ),
            ["a \"quoted\" word", "two"]
        );
        assert_eq!(
            parse_warnings(r#"299 - "unterminated"#),
            Vec::<String>::new()
        );
        assert_eq!(parse_warnings("garbage"), Vec::<String>::new());
    }

    #[test]
    fn retry_after_header_is_whole_seconds() {
        let of = |v: &str| {
            let mut h = http::HeaderMap::new();
            h.insert(http::header::RETRY_AFTER, v.parse().unwrap());
            retry_after_header(&h)
        };
        assert_eq!(of("3"), Some(Duration::from_secs(3)));
        assert_eq!(of(" 0 "), Some(Duration::ZERO));
        assert_eq!(of("+2"), Some(Duration::from_secs(2)));
        assert_eq!(of("-5"), Some(Duration::ZERO));
        assert_eq!(of("1.5"), None);
        assert_eq!(of("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(retry_after_header(&http::HeaderMap::new()), None);
    }
}
