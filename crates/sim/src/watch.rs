//! WATCH: newline-delimited `{"type":…,"object":…}` events streamed over a chunked body.
//!
//! - `resourceVersion=N`: changes after N from the history, then live; N older than the
//!   compacted revision gets one `ERROR` event (410 Expired) and the stream ends. A future N
//!   sends nothing until the store gets there.
//! - `resourceVersion` unset or `0` (with neither `sendInitialEvents` nor
//!   `resourceVersionMatch`) and `sendInitialEvents=true&resourceVersionMatch=NotOlderThan`:
//!   one ADDED per current object in key order, then (with `allowWatchBookmarks`) a BOOKMARK
//!   annotated `k8s.io/initial-events-end: "true"`, as v1.32 does with WatchList on.
//! - Selectors: an object moving into the selection is ADDED, moving out is DELETED with its
//!   old content and the new resourceVersion.
//! - `allowWatchBookmarks`: a BOOKMARK every `bookmark_interval` and one 2 s before
//!   `timeoutSeconds`, carrying the resource's watch-cache revision
//!   ([`super::storage::Store::cache_rev`]), and sent only when that revision is newer than
//!   the watch's own, as kube-apiserver's cacheWatcher sends them (`cache_watcher.go`,
//!   v1.32): a watch from the current revision of a quiet resource gets nothing at all
//!   (none while `POST /_sim/bookmarks {"enabled":false}` holds).
//! - `Accept: …;as=Table` or `;as=PartialObjectMetadata`: each object, bookmarks too, as a
//!   one-row Table ([`super::table`]; `includeObject` as for lists; the column definitions
//!   in the first event only, `null` after it, as apiserver's `watchEmbeddedEncoder` sets
//!   `NoHeaders` once it has encoded one) or as PartialObjectMetadata ([`super::partial`]).
//!   ERROR events carry their Status as it is (`doTransformObject` leaves a Status alone).
//! - Slow delivery (`POST /_sim/delay`): a change is sent once it is that old; the changes
//!   after it wait, in order, and the watch sleeps until the first of them is due.
//! - `timeoutSeconds`: the body ends cleanly. Faults (drop, stall, malformed, short watches)
//!   come from [`super::control::Faults`]; a change the skip-event fault marked
//!   ([`super::storage::Change::skipped`]) is sent by no watch.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::StatusCode;
use axum::response::Response;
use base64::Engine;
use bytes::Bytes;
use serde_json::json;
use tokio::sync::mpsc;
use tokio::time::{sleep_until, Instant};

use super::request::{not_supported, parse_rv, wait_for_rv, As, Filter, Params, Target};
use super::resources::{ResourceDef, RESOURCES};
use super::status::{go_json, Cause, Status};
use super::storage::{event_line, Change, EventKind, ListQuery, Obj};
use super::{partial, table, App};

type Chunk = Result<Bytes, std::io::Error>;

/// Default watch length when `timeoutSeconds` is not given (the apiserver picks 30–60 min).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1800);
/// Flush threshold for coalesced event lines.
const FLUSH: usize = 128 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Start {
    /// Initial events of the current state (at least this revision), then live.
    Initial(u64),
    /// Changes after this revision.
    After(u64),
    /// Changes after whatever is current when the stream starts.
    Now,
}

struct Spec {
    res: usize,
    filter: Filter,
    start: Start,
    bookmarks: bool,
    timeout: Duration,
    /// How objects are rendered: as stored, as a one-row Table, or as PartialObjectMetadata.
    render: As,
    /// A Table event has been sent: the next ones leave out the column definitions.
    headers_sent: std::sync::atomic::AtomicBool,
}

impl Spec {
    /// How the next event is rendered (a Table without headers after the first).
    fn render(&self) -> As {
        match self.render {
            As::Table(mut o) if self.headers_sent.load(Ordering::Relaxed) => {
                o.no_headers = true;
                As::Table(o)
            }
            r => r,
        }
    }

    /// An event has been rendered with [`Spec::render`].
    fn rendered(&self) {
        self.headers_sent.store(true, Ordering::Relaxed);
    }
}

fn validate(q: &Params) -> Result<(), Status> {
    let rvm = q
        .get("resourceVersionMatch")
        .map(String::as_str)
        .unwrap_or("");
    let sie = q.get("sendInitialEvents");
    let mut causes = Vec::new();
    let forbid = |msg: &str| Cause {
        reason: "FieldValueForbidden",
        message: format!("Forbidden: {msg}"),
        field: "resourceVersionMatch".into(),
    };
    if sie.is_some() && rvm != "NotOlderThan" {
        causes.push(forbid(
            "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        ));
    }
    if !rvm.is_empty() {
        if sie.is_none() {
            causes.push(forbid(
                "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
            ));
        }
        if rvm != "NotOlderThan" {
            causes.push(not_supported(rvm, &["NotOlderThan"]));
        }
    }
    if causes.is_empty() {
        Ok(())
    } else {
        Err(Status::invalid_list_options(&causes))
    }
}

fn streaming_response(body: Body) -> Response {
    super::status::json_body_response(StatusCode::OK, body)
}

/// Handles `GET …?watch=1`.
pub async fn watch(app: Arc<App>, t: &Target, q: &Params, accept: As) -> Response {
    if let Err(s) = validate(q) {
        return s.response();
    }
    let filter = match Filter::from_params(t, q) {
        Ok(f) => f,
        Err(s) => return s.response(),
    };
    let rv = q.get("resourceVersion").map(String::as_str).unwrap_or("");
    let sie = q.get("sendInitialEvents").map(|s| s == "true" || s == "1");
    let rvm = q
        .get("resourceVersionMatch")
        .map(String::as_str)
        .unwrap_or("");
    let legacy = rv.is_empty() || rv == "0";
    let n = if legacy {
        0
    } else {
        match parse_rv(rv) {
            Ok(n) => n,
            Err(s) => return s.response(),
        }
    };
    let start = match sie {
        // v1.32 turns a legacy watch into a watch-list when neither option is given.
        None if rvm.is_empty() && legacy => Start::Initial(0),
        Some(true) => Start::Initial(n),
        _ if legacy => Start::Now,
        // `stale-watch`: the changes after an older revision than asked (not before the oldest
        // retained), as a watch cache behind the one that served the list would send them.
        _ => Start::After(
            app.faults
                .take_stale_watch()
                .map_or(n, |stale| stale.max(app.cluster.read().compacted()).min(n)),
        ),
    };
    let timeout = q
        .get("timeoutSeconds")
        .and_then(|s| s.parse::<u64>().ok())
        .filter(|s| *s > 0)
        .map(Duration::from_secs)
        .unwrap_or(DEFAULT_TIMEOUT);
    let spec = Spec {
        res: t.res,
        filter,
        start,
        bookmarks: q
            .get("allowWatchBookmarks")
            .is_some_and(|b| b == "true" || b == "1"),
        timeout,
        render: accept,
        headers_sent: std::sync::atomic::AtomicBool::new(false),
    };
    if app.faults.take_short_watch() {
        return streaming_response(Body::empty());
    }
    let (tx, mut rx) = mpsc::channel::<Chunk>(8);
    tokio::spawn(run(app, spec, tx));
    let stream = futures::stream::poll_fn(move |cx| rx.poll_recv(cx));
    streaming_response(Body::from_stream(stream))
}

/// Counts open watches while alive.
struct OpenGuard(Arc<App>);

impl Drop for OpenGuard {
    fn drop(&mut self) {
        self.0.faults.open_watches.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A line that is not valid JSON, for the malformed-event fault.
const MALFORMED: &[u8] =
    b"{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Bogus\",\"metadata\":{\"name\":\n";

/// The annotations of the initial-events-end bookmark, with the empty list `blueprint`.
fn initial_end_annotations(blueprint: String) -> serde_json::Value {
    json!({
        "k8s.io/initial-events-end": "true",
        "kubernetes.io/initial-events-list-blueprint":
            base64::engine::general_purpose::STANDARD.encode(blueprint),
    })
}

/// A BOOKMARK at `rv`, its keys in the real server's order (custom resources go through
/// unstructured JSON: sorted keys, no creationTimestamp); under `as=PartialObjectMetadata`
/// a PartialObjectMetadata, whatever the resource.
fn bookmark(def: &ResourceDef, rv: u64, initial_end: bool, render: As) -> Bytes {
    let obj = bookmark_object(def, rv, initial_end, render);
    let As::Table(opts) = render else {
        return event_line("BOOKMARK", &go_json(&obj));
    };
    // apiserver's watchEncoder transforms a bookmark as any object: a one-row Table of it.
    let res = super::resources::find(def.group, def.version, def.plural).unwrap_or_default();
    let o = Arc::new(Obj::from_value(res, obj));
    let t = table::table(def, std::slice::from_ref(&o), Some(rv), None, None, opts);
    event_line("BOOKMARK", &go_json(&t))
}

/// The object of a BOOKMARK at `rv` (see [`bookmark`]).
fn bookmark_object(def: &ResourceDef, rv: u64, initial_end: bool, render: As) -> serde_json::Value {
    let annotations = |blueprint| initial_end.then(|| initial_end_annotations(blueprint));
    if matches!(render, As::PartialMetadata | As::PartialMetadataList) {
        return partial::bookmark(rv, annotations(partial::BLUEPRINT.into()));
    }
    let (kind, api_version) = (def.list_kind(), def.api_version());
    let mut meta = serde_json::Map::new();
    if def.custom {
        let blueprint = format!(
            "{{\"apiVersion\":\"{api_version}\",\"items\":null,\"kind\":\"{kind}\",\"metadata\":{{}}}}\n"
        );
        if let Some(a) = annotations(blueprint) {
            meta.insert("annotations".into(), a);
        }
        meta.insert("resourceVersion".into(), json!(rv.to_string()));
        return json!({"apiVersion": api_version, "kind": def.kind, "metadata": meta});
    }
    meta.insert("resourceVersion".into(), json!(rv.to_string()));
    meta.insert("creationTimestamp".into(), serde_json::Value::Null);
    let blueprint = format!(
        "{{\"kind\":\"{kind}\",\"apiVersion\":\"{api_version}\",\"metadata\":{{}},\"items\":null}}\n"
    );
    if let Some(a) = annotations(blueprint) {
        meta.insert("annotations".into(), a);
    }
    json!({"kind": def.kind, "apiVersion": api_version, "metadata": meta})
}

/// An ERROR event carrying `status`.
pub fn error_line(status: &Status) -> Bytes {
    event_line("ERROR", &go_json(&status.to_value()))
}

/// The line a watcher with `f` sees for change `c`, if any.
fn emit(c: &Change, f: &Filter, def: &ResourceDef, render: As) -> Option<Bytes> {
    let now = f.matches(&c.obj);
    let (kind, obj): (&str, Option<Arc<Obj>>) = match c.kind {
        EventKind::Added | EventKind::Deleted => {
            if !now {
                return None;
            }
            (c.kind.as_str(), None)
        }
        EventKind::Modified => {
            let before = c.prev.as_ref().is_some_and(|p| f.matches(p));
            match (before, now) {
                (true, true) => ("MODIFIED", None),
                (false, true) => ("ADDED", Some(c.obj.clone())),
                (true, false) => {
                    let prev = c.prev.as_ref()?;
                    ("DELETED", Some(Arc::new(prev.restamped(c.rv))))
                }
                (false, false) => return None,
            }
        }
    };
    Some(match (render, obj) {
        (As::Object, None) => c.line.clone(),
        (As::Object, Some(o)) => event_line(kind, &o.json),
        (_, o) => rendered_line(kind, &o.unwrap_or_else(|| c.obj.clone()), def, render),
    })
}

/// An event line with the object rendered as a Table or PartialObjectMetadata.
fn rendered_line(kind: &str, o: &Arc<Obj>, def: &ResourceDef, render: As) -> Bytes {
    match render {
        As::Object => event_line(kind, &o.json),
        As::Table(opts) => event_line(
            kind,
            &go_json(&table::table(
                def,
                std::slice::from_ref(o),
                None,
                None,
                None,
                opts,
            )),
        ),
        As::PartialMetadata | As::PartialMetadataList => event_line(kind, &partial::object_json(o)),
    }
}

/// Sends `b` to the client; `false` when the client has gone.
async fn send(tx: &mpsc::Sender<Chunk>, b: Bytes) -> bool {
    tx.send(Ok(b)).await.is_ok()
}

/// Event lines gathered into chunks of at least [`FLUSH`] bytes (the last one smaller).
struct Batch<'a> {
    tx: &'a mpsc::Sender<Chunk>,
    buf: Vec<u8>,
}

impl<'a> Batch<'a> {
    fn new(tx: &'a mpsc::Sender<Chunk>) -> Batch<'a> {
        Batch {
            tx,
            buf: Vec::new(),
        }
    }

    /// Adds a line, sending the chunk once it is full; `false` when the client has gone.
    async fn push(&mut self, line: &[u8]) -> bool {
        self.buf.extend_from_slice(line);
        self.buf.len() < FLUSH || send(self.tx, Bytes::from(std::mem::take(&mut self.buf))).await
    }

    /// Sends what is left; `false` when the client has gone.
    async fn finish(self) -> bool {
        self.buf.is_empty() || send(self.tx, Bytes::from(self.buf)).await
    }
}

/// When the next BOOKMARK is due: every `interval`, and once about 2 s before the watch's
/// deadline, as kube-apiserver sends one then (T=4 → 2.05 s, T=8 → 6.11 s).
struct BookmarkClock {
    interval: Duration,
    next: Instant,
    /// The one before the deadline, while it is still to come.
    pre_deadline: Option<Instant>,
}

impl BookmarkClock {
    fn new(started: Instant, deadline: Instant, interval: Duration) -> BookmarkClock {
        BookmarkClock {
            interval,
            next: started + interval,
            pre_deadline: deadline
                .checked_sub(Duration::from_secs(2))
                .filter(|t| *t > started),
        }
    }

    fn due(&self) -> Instant {
        self.pre_deadline.map_or(self.next, |p| self.next.min(p))
    }

    /// A bookmark is being sent at `now`.
    fn fired(&mut self, now: Instant) {
        if self.pre_deadline.is_some_and(|p| p <= now) {
            self.pre_deadline = None;
        }
        if self.next <= now {
            self.next = now + self.interval;
        }
    }
}

async fn run(app: Arc<App>, spec: Spec, tx: mpsc::Sender<Chunk>) {
    app.faults.open_watches.fetch_add(1, Ordering::SeqCst);
    let _guard = OpenGuard(app.clone());
    let def = &RESOURCES[spec.res];
    let started = Instant::now();
    let deadline = started + spec.timeout;
    let mut rev_rx = app.cluster.subscribe();
    let mut drop_rx = app.faults.drop.subscribe();
    let mut mal_rx = app.faults.malformed.subscribe();
    rev_rx.borrow_and_update();
    drop_rx.borrow_and_update();
    mal_rx.borrow_and_update();
    if app.faults.take_malformed_next() && !send(&tx, Bytes::from_static(MALFORMED)).await {
        return;
    }

    // A watch "from now" starts at the revision current when it was opened, even if a stall
    // holds it back.
    let opened_at = app.cluster.read().rev();
    if !wait_out_stall(&app, &tx, &mut drop_rx, deadline).await {
        return;
    }
    let mut pos = match spec.start {
        Start::After(n) => n,
        Start::Now => opened_at,
        Start::Initial(min) => match send_initial_events(&app, &spec, min, &tx).await {
            Some(rev) => rev,
            None => return,
        },
    };
    // The watch's own revision: a bookmark is sent only past it.
    let from = pos;

    let mut clock = BookmarkClock::new(started, deadline, app.bookmark_interval);
    loop {
        // When the first change held back by the slow-delivery fault is due.
        let mut held = None;
        app.faults.flood.delivered(pos);
        if app.faults.stalled_until().is_some() {
            if !wait_out_stall(&app, &tx, &mut drop_rx, deadline).await {
                return;
            }
            continue;
        }
        match send_changes(&app, &spec, pos, &tx).await {
            Caught::Up(upto) => pos = upto,
            Caught::Held(upto, due) => {
                pos = upto;
                held = Some(due);
            }
            Caught::Behind(upto) => {
                pos = upto;
                continue;
            }
            Caught::Ended => return,
        }
        // A deleted CRD's watches end (cleanly) once its objects' deletions are sent.
        if !app.cluster.read().served(spec.res) {
            return;
        }
        tokio::select! {
            biased;
            _ = tx.closed() => return,
            r = drop_rx.changed() => {
                if r.is_ok() { let _ = tx.send(Err(dropped())).await; }
                return;
            }
            _ = sleep_until(deadline) => return,
            r = rev_rx.changed() => if r.is_err() { return },
            _ = sleep_until(held.unwrap_or(deadline)), if held.is_some() => {}
            r = mal_rx.changed() => {
                if r.is_err() || !send(&tx, Bytes::from_static(MALFORMED)).await { return; }
            }
            _ = sleep_until(clock.due()), if spec.bookmarks => {
                clock.fired(Instant::now());
                // The watch cache's revision, never past the changes this watch has been
                // sent, and only when newer than the watch's own.
                let at = app.cluster.read().cache_rev(spec.res).min(pos);
                if app.faults.bookmarks_enabled() && at > from {
                    let line = bookmark(def, at, false, spec.render());
                    spec.rendered();
                    if !send(&tx, line).await {
                        return;
                    }
                }
            }
        }
    }
}

/// The initial events of a watch-list: an ADDED per object of the current state (once
/// the store has reached `min`), then the initial-events-end bookmark when asked. The
/// revision they show, or `None` when the watch has ended (too large `min`, client gone).
async fn send_initial_events(
    app: &App,
    spec: &Spec,
    min: u64,
    tx: &mpsc::Sender<Chunk>,
) -> Option<u64> {
    let def = &RESOURCES[spec.res];
    if min > 0 {
        let cur = wait_for_rv(app, min, app.too_large_wait).await;
        if cur < min {
            let _ = send(tx, error_line(&Status::too_large_rv(min, cur))).await;
            return None;
        }
    }
    let (items, rev) = {
        let s = app.cluster.read();
        let pred = |o: &Obj| spec.filter.matches(o);
        let q = ListQuery {
            namespace: spec.filter.namespace.as_deref(),
            ..ListQuery::all(spec.res, s.rev())
        };
        let page = s.list(q, &pred);
        (page.items, s.rev())
    };
    let mut batch = Batch::new(tx);
    for o in items {
        let line = rendered_line("ADDED", &o, def, spec.render());
        spec.rendered();
        if !batch.push(&line).await {
            return None;
        }
    }
    // `no-end-bookmark`: the initial events, then nothing to say they are all there.
    if spec.bookmarks && !app.faults.bent(super::bend::Bend::NoEndBookmark) {
        batch
            .buf
            .extend_from_slice(&bookmark(def, rev, true, spec.render()));
        spec.rendered();
    }
    batch.finish().await.then_some(rev)
}

/// Where a watch stands after [`send_changes`].
enum Caught {
    /// Everything up to this revision is sent: wait for more.
    Up(u64),
    /// Sent up to this revision; the next change is held back by the slow-delivery fault
    /// until this instant.
    Held(u64, Instant),
    /// Sent up to this revision, and more changes are waiting.
    Behind(u64),
    /// The watch has ended (history compacted past it, client gone).
    Ended,
}

/// Sends the lines of the changes after `pos` (at most 4096 of them) that the watch sees.
async fn send_changes(app: &App, spec: &Spec, pos: u64, tx: &mpsc::Sender<Chunk>) -> Caught {
    const MAX: usize = 4096;
    let def = &RESOURCES[spec.res];
    let read = app.cluster.read().changes_after(pos, MAX);
    let (mut changes, mut upto) = match read {
        Ok(read) => read,
        Err(compacted) => {
            // `close-on-expired`: the stream just ends, with no word of why.
            if !app.faults.bent(super::bend::Bend::CloseOnExpired) {
                let msg = format!("too old resource version: {pos} ({compacted})");
                let _ = send(tx, error_line(&Status::expired(msg))).await;
            }
            return Caught::Ended;
        }
    };
    let full = changes.len() >= MAX;
    // Slow delivery: only the changes old enough go now; `upto` stops before the first
    // held one, so that bookmarks and the next round start there.
    let delay = app.faults.delivery_delay();
    let mut held = None;
    if !delay.is_zero() {
        let now = std::time::Instant::now();
        if let Some(i) = changes.iter().position(|c| c.at + delay > now) {
            held = Some(Instant::from_std(changes[i].at + delay));
            upto = if i == 0 { pos } else { changes[i - 1].rv };
            changes.truncate(i);
        }
    }
    let mut batch = Batch::new(tx);
    for c in changes.iter().filter(|c| c.res == spec.res && !c.skipped) {
        if let Some(line) = emit(c, &spec.filter, def, spec.render()) {
            spec.rendered();
            if !batch.push(&line).await {
                return Caught::Ended;
            }
        }
    }
    if !batch.finish().await {
        return Caught::Ended;
    }
    let pos = pos.max(upto);
    app.faults.flood.delivered(pos);
    if let Some(due) = held {
        Caught::Held(pos, due)
    } else if full {
        Caught::Behind(pos)
    } else {
        Caught::Up(pos)
    }
}

/// Sleeps while watches are stalled. `false` if the watch must end meanwhile (client gone,
/// dropped, timed out).
async fn wait_out_stall(
    app: &App,
    tx: &mpsc::Sender<Chunk>,
    drop_rx: &mut tokio::sync::watch::Receiver<u64>,
    deadline: Instant,
) -> bool {
    // Subscribed before the stall is read: a release in between still wakes the sleep.
    let mut ended = app.faults.stall_ended.subscribe();
    ended.borrow_and_update();
    while let Some(until) = app.faults.stalled_until() {
        tokio::select! {
            _ = ended.changed() => {}
            _ = tx.closed() => return false,
            r = drop_rx.changed() => {
                if r.is_ok() { let _ = tx.send(Err(dropped())).await; }
                return false;
            }
            _ = sleep_until(deadline) => return false,
            _ = sleep_until(until.into()) => {}
        }
    }
    true
}

fn dropped() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::ConnectionAborted,
        "watch dropped by the simulator",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each bookmark byte for byte as kube-apiserver 1.32 sends it; under
    /// `as=PartialObjectMetadata` every resource's bookmark is a PartialObjectMetadata.
    #[test]
    fn bookmarks_have_the_reference_shape() {
        use super::super::resources::{CONFIGMAPS, WIDGETS};
        let cases: [(usize, u64, bool, As, &str); 4] = [
            (CONFIGMAPS, 262, false, As::Object, "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"262\",\"creationTimestamp\":null}}"),
            (CONFIGMAPS, 261, true, As::Object, "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"261\",\"creationTimestamp\":null,\"annotations\":{\"k8s.io/initial-events-end\":\"true\",\"kubernetes.io/initial-events-list-blueprint\":\"eyJraW5kIjoiQ29uZmlnTWFwTGlzdCIsImFwaVZlcnNpb24iOiJ2MSIsIm1ldGFkYXRhIjp7fSwiaXRlbXMiOm51bGx9Cg==\"}}}"),
            (WIDGETS, 297, false, As::Object, "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"resourceVersion\":\"297\"}}"),
            (WIDGETS, 297, false, As::PartialMetadata, "{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":{\"resourceVersion\":\"297\",\"creationTimestamp\":null}}"),
        ];
        for (res, rv, end, render, object) in cases {
            let line = bookmark(&RESOURCES[res], rv, end, render);
            let want = format!("{{\"type\":\"BOOKMARK\",\"object\":{object}}}\n");
            assert_eq!(std::str::from_utf8(&line).unwrap(), want);
        }
    }

    /// The initial-events-end bookmark under `as=PartialObjectMetadata` describes an empty
    /// PartialObjectMetadataList.
    #[test]
    fn metadata_bookmarks_describe_a_partial_object_metadata_list() {
        let wd = &RESOURCES[super::super::resources::WIDGETS];
        let line = bookmark(wd, 298, true, As::PartialMetadata);
        let ev: serde_json::Value = serde_json::from_slice(&line).unwrap();
        let a = &ev["object"]["metadata"]["annotations"];
        assert_eq!(a["k8s.io/initial-events-end"], "true");
        let blueprint = base64::engine::general_purpose::STANDARD
            .decode(
                a["kubernetes.io/initial-events-list-blueprint"]
                    .as_str()
                    .unwrap(),
            )
            .unwrap();
        assert_eq!(
            String::from_utf8(blueprint).unwrap(),
            "{\"kind\":\"PartialObjectMetadataList\",\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":{},\"items\":null}\n"
        );
    }
}
