//! The control API: faults and state, on the API port under `/_sim/`, behind the same bearer
//! token as the API (no token needed with `--insecure-http`). Bodies are JSON; an empty body
//! means "all defaults". Every answer is a JSON object (`{"ok":true,…}`), errors are Status.
//!
//! | method + path | body | effect |
//! |---|---|---|
//! | `GET /_sim/help` | | this list, as JSON |
//! | `GET /_sim/requests` | | `{"requests":[{"t":S,"method":"GET","path":"/api/v1/…?…","status":N,"accept":A,"acceptEncoding":E,"contentEncoding":C,"contentType":T,"version":V},…]}`: the last 10,000 API requests answered (not `/_sim`), `t` in seconds since the server started, as in the request logs recorded beside genuine client-go 0.32 runs; `accept` is the request's `Accept` header, `acceptEncoding` its `Accept-Encoding`, `contentEncoding` the answer's `Content-Encoding` (`gzip` for a body over 128 KiB to a request that accepts it), `contentType` its `Content-Type` (each `null` without the header); `version` its HTTP version (`HTTP/1.1`, `HTTP/2.0`) |
//! | `GET /_sim/state` | | `{"revision":"N","objects":{"<plural>":{"<ns/name or name>":"<rv>",…},…},"discoveryRequests":N,"chaosFaults":N,"slowLink":{"mbps":M,"bytesPaced":N}}` (`mbps` null with no slow link; `bytesPaced`: bytes written under one since the start) |
//! | `POST /_sim/drop-watches` | | aborts every open watch connection (no final chunk); answers `{"ok":true,"dropped":n}` |
//! | `POST /_sim/compact` | `{"revision":N}` (default: current) | drops history up to N: older watches/lists/continue tokens get 410 |
//! | `POST /_sim/fail` | `{"code":429\|500\|503\|410\|504,"count":N,"always":bool,"retryAfter":S,"verb":V,"resource":R}` (defaults 500, 1, false, 1, any, any; `"until":"released"` is `"always":true`) | the next N API requests (with `always`, every one until `clear` or `release`; not `/_sim`) fail with that Status and `Retry-After: S` (none if S is 0; client-go retries 429/5xx answers that carry one); with `verb` (`list`, `watch`, `get`, `create`, `update`, `patch`, `delete`) and/or `resource` (plural) only matching resource requests fail. 410 is the list's Expired, 504 the list's too-large-RV Timeout |
//! | `POST /_sim/stall` | `{"seconds":S}` (default 5) or `{"until":"released"}` | open watches send nothing for S seconds (or until `release`), then deliver what happened meanwhile |
//! | `POST /_sim/freeze` | `{"seconds":S,"newConnections":bool}` (defaults 60, false) or `{"until":"released",…}` | every connection open now (but those that carried `/_sim/` requests only) stops reading and writing for S seconds (or until `release`) at the TCP level (below TLS and HTTP/2: pings go unanswered), no FIN, no RST, as behind a frozen proxy; with `newConnections`, those accepted meanwhile too (their TLS handshakes do not complete); then each resumes where it stopped (`freeze.rs`) |
//! | `POST /_sim/release` | `{"fault":"stall"\|"freeze"\|"delay"\|"fail"\|"slow-link"}` (default: all five) | ends at once what holds traffic back, timed or held `until: released`: a stall, a freeze, slow delivery (changes already held keep their time), pending failures, a slow link; answers `{"ok":true,"released":[…]}`, the faults that were in force |
//! | `POST /_sim/slow-link` | `{"mbps":M}` (a positive number; 0 ends it) | the server-to-client direction of the link limited to M Mbit/s, until `{"mbps":0}`, `release` or `clear`: one token bucket shared by every connection (but those that carried `/_sim/` requests only), on the bytes the server writes to TCP (response heads, bodies after gzip, watch streams, TLS records), as a shaping proxy does; `GET /_sim/state` shows it (`link.rs`) |
//! | `POST /_sim/bookmarks` | `{"enabled":bool}` (default true) | with `false`, watches (open ones too) send no BOOKMARK, neither periodic nor before their timeout, as kube-apiserver may send none on a quiet resource for a whole watch; a streaming list's initial-events-end bookmark still comes. `clear` leaves this as it is |
//! | `POST /_sim/bend` | `{"mode":M,"on":bool}` (`on` defaults to true; without `mode`: `{"modes":[…]}` lists those in force) | bends the protocol as servers are found to (`bend.rs`): `no-end-bookmark` (a streaming list never sends its initial-events-end bookmark), `close-on-expired` (a watch from a too-old resourceVersion closes cleanly instead of a 410 ERROR event), `forbid-watch` (watches 403 while lists are allowed; a SelfSubjectAccessReview for watch says no), `opaque-rv` (resourceVersions are base64 composites, not integers; answers JSON only), `no-bookmarks` (as `bookmarks {"enabled":false}`); `kwatch sim --bend MODE` from the start. `clear` leaves them as they are |
//! | `POST /_sim/delay` | `{"ms":N}` (default 0 = off) | slow delivery: every watch (open ones too) sends each change N ms after the storage made it, in order, until `{"ms":0}` or `release`; the storage and lists show it at once, bookmarks only cover what was sent. A watch-list's initial events are not delayed. `clear` leaves this as it is |
//! | `POST /_sim/short-watches` | `{"count":N}` (default 1) | the next N watches end right after opening, with no event |
//! | `POST /_sim/unknown-field` | `{"count":N}` (default 1) | the next N messages answered in protobuf (a list, an object, a watch event's object) carry field 99, which their type does not have, as a newer server's would (`wire.rs`); JSON answers are as ever |
//! | `POST /_sim/malformed` | | one malformed line on every open watch, or, if none is open, on the next watch; answers `{"ok":true,"watches":n}` |
//! | `POST /_sim/churn` | `{"rate":R,"faults":bool}` | sets the churn rate (changes/s, 0 stops it); `"faults":false` also stops chaos faults |
//! | `POST /_sim/faults` | `{"enabled":bool,"only":"retry-after"\|"all","everyMs":[MIN,MAX]}` | switches the chaos scenario's random faults on or off; `only: "retry-after"` limits them to 429/500/503 answers that carry `Retry-After` (each with the open watches dropped, so that the re-watches meet them); `everyMs` sets the random interval between two faults (default `[2000,6000]`); answers the count of faults injected so far (`injected`, also `chaosFaults` in `state`) |
//! | `POST /_sim/flood` | `{"rate":R}` or `{"rate":"max"}`, optionally `"count":N` | MODIFIED pod events at R/s (0 stops), or as fast as the fastest open watch takes them (the benchmark's; see `bench.rs`); with a count, N events and then none |
//! | `POST /_sim/warn` | `{"text":T,"count":N}` (default count 1) | the next N API responses carry `Warning: 299 - "T"`, as kube-apiserver warns of deprecated APIs |
//! | `POST /_sim/clear` | | cancels pending failures, stalls, a freeze, a slow link, short watches, unknown fields, expiring continue tokens, stale lists and watches, malformed lines and skipped events |
//! | `POST /_sim/expire-continue` | `{"count":N}` (default 1) | the next N list requests with a continue token get 410 Expired and a fresh token, as after a compaction |
//! | `POST /_sim/backup` | | remembers the current state (objects and revision; also taken at start) |
//! | `POST /_sim/stale-list` | `{"revision":N}` (default: the oldest retained) | the next list request (not a continued page) is served at revision N (at least the oldest retained), whatever it asks: an HA control plane's apiserver with a stale watch cache; a client that had synced a later revision goes back in time |
//! | `POST /_sim/stale-watch` | `{"revision":N}` (default: the oldest retained) | the next watch from a resourceVersion (not a streaming list) sends the changes after revision N (at least the oldest retained) instead of after the one it asked for: changes the client already holds come again, older than what it has synced |
//! | `POST /_sim/skip-event` | `{"key":"NS/NAME","resource":R}` (defaults: any key, any resource) | the next change of that object is sent by no watch, open or opened later from an older resourceVersion (a lost event): the storage changes, lists show it, watches go on without it |
//! | `POST /_sim/recreate` | `{"key":"NS/NAME","resource":R}` | deletes the object and creates it again under the same name (a new uid and resourceVersion): inside a `stall`, a watch that resumes sees both events; after a `compact` and `drop-watches`, the relist finds one object with a new uid |
//! | `POST /_sim/restart` | `{"seconds":S,"restore":bool}` (defaults 2, false) | the server goes away: open connections are cut and the port refuses connections for S seconds; it comes back on the same port with its state and a watch cache that starts at the current revision (older watches get 410), or, with `restore`, with the last backup's state and revision (an etcd restored from a backup) |
//! | `POST /_sim/controllers` | `{"on":bool}` | runs (or stops) the deployment, replicaset, job and garbage-collector controllers and the kubelet (`docs/simulator.md#controllers---controllers`, off unless `--controllers`); answers `{"ok":true,"on":bool}`. While they are off a delete ignores `propagationPolicy` and finalizers, as before |

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::extract::Request;
use axum::http::{Method, StatusCode};
use axum::response::Response;
use serde_json::{json, Value};
use tokio::sync::watch;

use super::status::{value_response, Status};
use super::App;

/// `Failure::remaining` of a failure that never runs out (`"always":true`).
const ALWAYS: u64 = u64::MAX;

/// How long a fault held `{"until":"released"}` lasts if nothing releases it: longer than
/// any test or session, short enough that `Instant + HELD` cannot overflow (tokio's
/// far future is 30 years too).
pub const HELD: Duration = Duration::from_secs(86_400 * 365 * 30);

/// The faults `POST /_sim/release` ends, by the name its `fault` takes.
const RELEASABLE: [&str; 5] = ["stall", "freeze", "delay", "fail", "slow-link"];

#[derive(Debug, Clone)]
struct Failure {
    code: u16,
    remaining: u64,
    retry_after: u64,
    verb: Option<String>,
    resource: Option<String>,
}

/// Run-time fault switches shared by the HTTP handlers, watches, churn and chaos.
#[derive(Debug)]
pub struct Faults {
    fail: Mutex<Option<Failure>>,
    stall_until: Mutex<Option<Instant>>,
    /// Bumped when a stall ends before its time (`release`, `clear`): stalled watches
    /// sleep until the stall's end and must be woken.
    pub stall_ended: watch::Sender<u64>,
    short_watches: AtomicU64,
    /// `POST /_sim/unknown-field`: protobuf messages still to carry an unknown field.
    unknown_fields: AtomicU64,
    /// Watches send no BOOKMARK but a streaming list's initial-events-end one.
    no_bookmarks: AtomicBool,
    /// Slow delivery (`POST /_sim/delay`): watches send each change this many ms after it.
    delay_ms: AtomicU64,
    /// The next N list requests that carry a continue token get 410 Expired.
    expire_continue: AtomicU64,
    /// `POST /_sim/stale-list`: the revision the next list is served at.
    stale_list: Mutex<Option<u64>>,
    /// `POST /_sim/stale-watch`: the revision the next watch from a resourceVersion starts after.
    stale_watch: Mutex<Option<u64>>,
    malformed_next: AtomicBool,
    /// Bumped to make every open watch send one malformed line.
    pub malformed: watch::Sender<u64>,
    /// Bumped to abort every open watch.
    pub drop: watch::Sender<u64>,
    pub open_watches: AtomicUsize,
    /// Changes per second of the churn generator.
    pub churn_rate: watch::Sender<f64>,
    /// A warning for the next responses (`POST /_sim/warn`): the header value and how many.
    warning: Mutex<Option<(String, u64)>>,
    /// `POST /_sim/freeze`, read by every connection's stream.
    pub freeze: std::sync::Arc<super::freeze::Freeze>,
    /// `POST /_sim/slow-link`, read by every connection's stream.
    pub link: std::sync::Arc<super::link::SlowLink>,
    /// Whether the chaos scenario injects faults.
    pub chaos: AtomicBool,
    /// The chaos scenario injects only answers that carry `Retry-After`.
    pub chaos_retry_after_only: AtomicBool,
    /// The chaos scenario's interval between faults and the count of faults it injected.
    pub chaos_pace: super::chaos::Pace,
    /// The benchmark's flood of MODIFIED events (`POST /_sim/flood`).
    pub flood: super::bench::Flood,
    /// The ways the protocol is bent (`POST /_sim/bend`, `--bend`).
    pub bends: super::bend::Bends,
}

impl Faults {
    pub fn new(churn_rate: f64, chaos: bool) -> Faults {
        Faults {
            fail: Mutex::new(None),
            stall_until: Mutex::new(None),
            stall_ended: watch::channel(0).0,
            short_watches: AtomicU64::new(0),
            unknown_fields: AtomicU64::new(0),
            no_bookmarks: AtomicBool::new(false),
            delay_ms: AtomicU64::new(0),
            expire_continue: AtomicU64::new(0),
            stale_list: Mutex::new(None),
            stale_watch: Mutex::new(None),
            malformed_next: AtomicBool::new(false),
            malformed: watch::channel(0).0,
            drop: watch::channel(0).0,
            open_watches: AtomicUsize::new(0),
            churn_rate: watch::channel(churn_rate).0,
            warning: Mutex::new(None),
            freeze: Default::default(),
            link: Default::default(),
            chaos: AtomicBool::new(chaos),
            chaos_retry_after_only: AtomicBool::new(false),
            chaos_pace: Default::default(),
            flood: Default::default(),
            bends: Default::default(),
        }
    }

    /// Switches one way of bending the protocol (`no-bookmarks` is the bookmark switch).
    pub fn bend(&self, b: super::bend::Bend, on: bool) {
        match b {
            super::bend::Bend::NoBookmarks => self.no_bookmarks.store(on, Ordering::SeqCst),
            b => self.bends.set(b, on),
        }
    }

    /// Whether `b` is in force.
    pub fn bent(&self, b: super::bend::Bend) -> bool {
        match b {
            super::bend::Bend::NoBookmarks => !self.bookmarks_enabled(),
            b => self.bends.on(b),
        }
    }

    /// Consumes one pending failure matching a request, if any. `verb`/`resource` are
    /// `None` for requests outside the resource paths (discovery, /version, …); a failure
    /// restricted to a verb or resource only hits resource requests that match.
    /// `rev` is the current revision (for the 504's message).
    pub fn take_failure(
        &self,
        verb: Option<&str>,
        resource: Option<&str>,
        rev: u64,
    ) -> Option<Status> {
        let mut g = lock(&self.fail);
        let f = g.as_mut()?;
        let hits = |want: &Option<String>, got: Option<&str>| match want {
            None => true,
            Some(w) => got == Some(w.as_str()),
        };
        if !hits(&f.verb, verb) || !hits(&f.resource, resource) {
            return None;
        }
        if f.remaining != ALWAYS {
            f.remaining -= 1;
        }
        let (code, retry) = (f.code, f.retry_after);
        if f.remaining == 0 {
            *g = None;
        }
        let mut st = match code {
            429 => Status::too_many_requests(retry),
            503 => Status::service_unavailable(retry),
            410 => Status::expired("The resourceVersion for the provided list is too old."),
            504 => Status::too_large_rv(rev + 1000, rev),
            _ => Status::internal("simulated failure"),
        };
        // `retryAfter: 0` sends no header; a 410 never carries one.
        st.retry_after = (retry > 0 && code != 410).then_some(retry);
        Some(st)
    }

    /// Fails the next `count` requests with `code` (429, 500 or 503 and, for lists, 410 or 504).
    pub fn set_failure(&self, code: u16, count: u64, retry_after: u64) {
        self.set_failure_for(code, count, retry_after, None, None);
    }

    /// [`Faults::set_failure`] restricted to a verb (`list`, `watch`, `get`, `create`,
    /// `update`, `patch`, `delete`) and/or a resource (plural name).
    pub fn set_failure_for(
        &self,
        code: u16,
        count: u64,
        retry_after: u64,
        verb: Option<String>,
        resource: Option<String>,
    ) {
        let f = (count > 0).then_some(Failure {
            code,
            remaining: count,
            retry_after,
            verb,
            resource,
        });
        *lock(&self.fail) = f;
    }

    /// The end of the current stall, if watches are stalled now.
    pub fn stalled_until(&self) -> Option<Instant> {
        let g = lock(&self.stall_until);
        g.filter(|t| *t > Instant::now())
    }

    pub fn stall(&self, d: Duration) {
        *lock(&self.stall_until) = Some(Instant::now() + d);
    }

    /// Ends a stall at once; whether one was in force.
    fn end_stall(&self) -> bool {
        let was = lock(&self.stall_until).take();
        self.stall_ended.send_modify(|g| *g += 1);
        was.is_some_and(|t| t > Instant::now())
    }

    /// `POST /_sim/release`: ends `which` of [`RELEASABLE`] (all when `None`) at once;
    /// the names of those that were in force.
    pub fn release(&self, which: Option<&str>) -> Vec<&'static str> {
        let mut ended = Vec::new();
        for name in RELEASABLE {
            if which.is_some_and(|w| w != name) {
                continue;
            }
            let was = match name {
                "stall" => self.end_stall(),
                "freeze" => self.freeze.clear(),
                "delay" => self.delay_ms.swap(0, Ordering::SeqCst) > 0,
                "slow-link" => self.link.clear(),
                _ => lock(&self.fail).take().is_some(),
            };
            if was {
                ended.push(name);
            }
        }
        ended
    }

    /// Whether watches send their periodic and pre-timeout bookmarks (`POST /_sim/bookmarks`).
    pub fn bookmarks_enabled(&self) -> bool {
        !self.no_bookmarks.load(Ordering::SeqCst)
    }

    /// How long after a change watches send it (`POST /_sim/delay`; zero when off).
    pub fn delivery_delay(&self) -> Duration {
        Duration::from_millis(self.delay_ms.load(Ordering::SeqCst))
    }

    /// Consumes one pending short watch, if any.
    pub fn take_short_watch(&self) -> bool {
        self.short_watches
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
    }

    /// Consumes one pending unknown field, if any.
    pub fn take_unknown_field(&self) -> bool {
        self.unknown_fields
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
    }

    pub fn take_expire_continue(&self) -> bool {
        self.expire_continue
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
    }

    /// The revision the next list is to be served at (once), if `stale-list` asked.
    pub fn take_stale_list(&self) -> Option<u64> {
        lock(&self.stale_list).take()
    }

    /// The revision the next watch from a resourceVersion is to start after (once), if
    /// `stale-watch` asked.
    pub fn take_stale_watch(&self) -> Option<u64> {
        lock(&self.stale_watch).take()
    }

    pub fn add_expire_continue(&self, n: u64) {
        self.expire_continue.fetch_add(n, Ordering::SeqCst);
    }

    pub fn add_short_watches(&self, n: u64) {
        self.short_watches.fetch_add(n, Ordering::SeqCst);
    }

    /// Consumes the "malformed line on the next watch" flag.
    pub fn take_malformed_next(&self) -> bool {
        self.malformed_next.swap(false, Ordering::SeqCst)
    }

    /// Malformed line on every open watch, or on the next one. Returns the open watch count.
    pub fn malformed_now(&self) -> usize {
        let n = self.open_watches.load(Ordering::SeqCst);
        if n == 0 {
            self.malformed_next.store(true, Ordering::SeqCst);
        } else {
            self.malformed.send_modify(|g| *g += 1);
        }
        n
    }

    /// Aborts every open watch. Returns how many were open.
    pub fn drop_watches(&self) -> usize {
        self.drop.send_modify(|g| *g += 1);
        self.open_watches.load(Ordering::SeqCst)
    }

    /// The `Warning` header value for the next response, if one is pending.
    fn take_warning(&self) -> Option<String> {
        let mut g = lock(&self.warning);
        let (text, left) = g.as_mut()?;
        let value = text.clone();
        *left -= 1;
        if *left == 0 {
            *g = None;
        }
        Some(value)
    }

    pub fn clear(&self) {
        self.set_failure(0, 0, 0);
        *lock(&self.warning) = None;
        self.end_stall();
        self.freeze.clear();
        self.link.clear();
        self.short_watches.store(0, Ordering::SeqCst);
        self.unknown_fields.store(0, Ordering::SeqCst);
        self.expire_continue.store(0, Ordering::SeqCst);
        *lock(&self.stale_list) = None;
        *lock(&self.stale_watch) = None;
        self.malformed_next.store(false, Ordering::SeqCst);
    }
}

/// The API requests answered, oldest first, at most [`RequestLog::CAP`].
#[derive(Debug)]
pub struct RequestLog {
    started: Instant,
    entries: Mutex<std::collections::VecDeque<Value>>,
}

impl RequestLog {
    const CAP: usize = 10_000;

    pub fn new() -> RequestLog {
        RequestLog {
            started: Instant::now(),
            entries: Mutex::default(),
        }
    }

    fn push(
        &self,
        method: &Method,
        path: &str,
        status: StatusCode,
        accept: Option<&str>,
        encoding: Encoding,
        version: axum::http::Version,
    ) {
        let t = (self.started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
        let mut g = lock(&self.entries);
        if g.len() == Self::CAP {
            g.pop_front();
        }
        g.push_back(json!({"t": t, "method": method.as_str(), "path": path,
                           "status": status.as_u16(), "accept": accept,
                           "acceptEncoding": encoding.accepted,
                           "contentEncoding": encoding.answered,
                           "contentType": encoding.content_type,
                           "version": format!("{version:?}")}));
    }

    fn to_json(&self) -> Value {
        let g = lock(&self.entries);
        json!({"requests": g.iter().collect::<Vec<_>>()})
    }
}

/// A request's `Accept-Encoding`, and its answer's `Content-Encoding` and `Content-Type`,
/// as logged.
struct Encoding {
    accepted: Option<String>,
    answered: Option<String>,
    content_type: Option<String>,
}

/// Middleware: logs every API request (not `/_sim`) with the status it was answered, and
/// adds the pending warning to its response.
pub async fn log_request(
    axum::extract::State(app): axum::extract::State<std::sync::Arc<App>>,
    req: Request,
    next: axum::middleware::Next,
) -> Response {
    let method = req.method().clone();
    let path = req
        .uri()
        .path_and_query()
        .map_or_else(String::new, |p| p.as_str().to_owned());
    let header_text = |h: &axum::http::HeaderMap, name| {
        h.get(name)
            .map(|v: &axum::http::HeaderValue| String::from_utf8_lossy(v.as_bytes()).into_owned())
    };
    let accept = header_text(req.headers(), axum::http::header::ACCEPT);
    let accepted = header_text(req.headers(), axum::http::header::ACCEPT_ENCODING);
    let version = req.version();
    super::freeze::Conn::mark(&req, path.starts_with("/_sim/"));
    let mut resp = next.run(req).await;
    if !path.starts_with("/_sim/") {
        let encoding = Encoding {
            accepted,
            answered: header_text(resp.headers(), axum::http::header::CONTENT_ENCODING),
            content_type: header_text(resp.headers(), axum::http::header::CONTENT_TYPE),
        };
        app.requests.push(
            &method,
            &path,
            resp.status(),
            accept.as_deref(),
            encoding,
            version,
        );
        if let Some(w) = app.faults.take_warning() {
            if let Ok(v) = axum::http::HeaderValue::from_str(&w) {
                resp.headers_mut().append(axum::http::header::WARNING, v);
            }
        }
    }
    resp
}

fn ok(extra: Value) -> Response {
    let mut v = json!({"ok": true});
    if let (Some(m), Value::Object(e)) = (v.as_object_mut(), extra) {
        m.extend(e);
    }
    value_response(StatusCode::OK, &v)
}

/// `GET /_sim/help`: the endpoints, for people exploring with curl.
fn help() -> Value {
    json!({
        "GET /_sim/requests": "the last 10,000 API requests answered: t, method, path, status, accept, contentType, version",
        "POST /_sim/warn": "{\"text\":T,\"count\":N} — the next N API responses carry Warning: 299 - \"T\"",
        "GET /_sim/state": "revision and resourceVersion of every object; discovery requests answered; the slow link and the bytes it carried",
        "POST /_sim/drop-watches": "abort every open watch",
        "POST /_sim/compact": "{\"revision\":N} (default: now) — older watches, lists and continue tokens get 410",
        "POST /_sim/fail": "{\"code\":429|500|503|410|504,\"count\":N,\"always\":bool,\"retryAfter\":S,\"verb\":V,\"resource\":R} — always (or until:released): every matching request until clear or release",
        "POST /_sim/stall": "{\"seconds\":S} or {\"until\":\"released\"} — watches send nothing meanwhile",
        "POST /_sim/freeze": "{\"seconds\":S,\"newConnections\":bool} (default 60, false), or until:released — open connections (with newConnections, new ones too) stop reading and writing at the TCP level (no FIN, no RST), then resume",
        "POST /_sim/release": "{\"fault\":\"stall\"|\"freeze\"|\"delay\"|\"fail\"|\"slow-link\"} (default: all) — end them now, timed or held until:released",
        "POST /_sim/slow-link": "{\"mbps\":M} — the server-to-client direction of every API connection limited to M Mbit/s (one link, after gzip and TLS) until {\"mbps\":0}, release or clear",
        "POST /_sim/bookmarks": "{\"enabled\":bool} — false: watches send no bookmarks (but a streaming list's initial-events-end)",
        "POST /_sim/bend": "{\"mode\":\"no-end-bookmark\"|\"close-on-expired\"|\"forbid-watch\"|\"opaque-rv\"|\"no-bookmarks\",\"on\":bool} — bend the list/watch protocol as some servers do; without a mode, the modes in force",
        "POST /_sim/delay": "{\"ms\":N} — watches send each change N ms after it (0: off); lists show it at once",
        "POST /_sim/short-watches": "{\"count\":N} — the next N watches close at once",
        "POST /_sim/unknown-field": "{\"count\":N} — the next N protobuf messages carry a field their type does not have (99)",
        "POST /_sim/malformed": "one malformed line on every open watch (or the next one)",
        "POST /_sim/expire-continue": "{\"count\":N} — the next N continue tokens get 410 Expired",
        "POST /_sim/restart": "{\"seconds\":S,\"restore\":bool} — the server goes away for S s (connection refused) and comes back with an empty watch cache; with restore, from the last backup",
        "POST /_sim/backup": "remember the current state for a later restart with restore",
        "POST /_sim/churn": "{\"rate\":R,\"faults\":bool}",
        "POST /_sim/faults": "{\"enabled\":bool,\"only\":\"retry-after\"|\"all\",\"everyMs\":[MIN,MAX]} — the chaos scenario's random faults",
        "POST /_sim/flood": "{\"rate\":R|\"max\", \"count\":N?} — MODIFIED pod events at R/s, or as fast as the watch takes them; N of them at most (benchmarks)",
        "POST /_sim/stale-list": "{\"revision\":N} (default: the oldest retained) — the next list is served at that older revision (a stale watch cache)",
        "POST /_sim/stale-watch": "{\"revision\":N} (default: the oldest retained) — the next watch from a resourceVersion sends the changes after that older revision",
        "POST /_sim/recreate": "{\"key\":\"NS/NAME\",\"resource\":R} — delete the object and create it again under the same name (a new uid)",
        "POST /_sim/skip-event": "{\"key\":\"NS/NAME\",\"resource\":R} (default: any) — no watch sends the next change of that object; lists still show it",
        "POST /_sim/clear": "cancel pending faults",
        "POST /_sim/controllers": "{\"on\":bool} — run the deployment, replicaset, job and garbage-collector controllers and a kubelet (off unless --controllers); answers whether they run",
    })
}

/// A control endpoint: what it does with the request's JSON object.
type Handler = fn(&App, &Value) -> Response;

const GET: bool = false;
const POST: bool = true;

/// Every endpoint under `/_sim/`: (path, whether it takes POST (else GET), handler). A
/// known path asked with the other method is 405; [`help`] describes them.
const ENDPOINTS: &[(&str, bool, Handler)] = &[
    ("help", GET, |_, _| value_response(StatusCode::OK, &help())),
    ("requests", GET, |app, _| {
        value_response(StatusCode::OK, &app.requests.to_json())
    }),
    ("state", GET, state),
    ("drop-watches", POST, |app, _| {
        ok(json!({"dropped": app.faults.drop_watches()}))
    }),
    ("compact", POST, compact),
    ("fail", POST, fail),
    ("stall", POST, |app, body| match lasting(body, 5.0) {
        Ok(d) => {
            app.faults.stall(d);
            ok(json!({}))
        }
        Err(why) => Status::bad_request(why.to_string()).response(),
    }),
    ("freeze", POST, |app, body| match lasting(body, 60.0) {
        Ok(d) => {
            let new = body["newConnections"].as_bool().unwrap_or(false);
            app.faults.freeze.start(d, new);
            ok(json!({}))
        }
        Err(why) => Status::bad_request(why.to_string()).response(),
    }),
    ("release", POST, release),
    ("slow-link", POST, slow_link),
    ("bookmarks", POST, |app, body| {
        let on = body["enabled"].as_bool().unwrap_or(true);
        app.faults.no_bookmarks.store(!on, Ordering::SeqCst);
        ok(json!({"enabled": on}))
    }),
    ("bend", POST, bend),
    ("delay", POST, |app, body| {
        let ms = num(body, "ms", 0).min(3_600_000);
        app.faults.delay_ms.store(ms, Ordering::SeqCst);
        ok(json!({"ms": ms}))
    }),
    ("short-watches", POST, |app, body| {
        app.faults.add_short_watches(num(body, "count", 1));
        ok(json!({}))
    }),
    ("unknown-field", POST, |app, body| {
        let n = num(body, "count", 1);
        app.faults.unknown_fields.fetch_add(n, Ordering::SeqCst);
        ok(json!({}))
    }),
    ("malformed", POST, |app, _| {
        ok(json!({"watches": app.faults.malformed_now()}))
    }),
    ("stale-list", POST, |app, body| {
        stale(app, body, &app.faults.stale_list)
    }),
    ("stale-watch", POST, |app, body| {
        stale(app, body, &app.faults.stale_watch)
    }),
    ("expire-continue", POST, |app, body| {
        app.faults.add_expire_continue(num(body, "count", 1));
        ok(json!({}))
    }),
    ("backup", POST, |app, _| {
        ok(json!({"revision": app.backup().to_string()}))
    }),
    ("restart", POST, |app, body| {
        let secs = body["seconds"].as_f64().unwrap_or(2.0).clamp(0.0, 3600.0);
        let restore = body["restore"].as_bool().unwrap_or(false);
        app.restart(Duration::from_secs_f64(secs), restore);
        ok(json!({}))
    }),
    ("churn", POST, churn),
    ("flood", POST, |app, body| {
        ok(super::bench::control(app, body))
    }),
    ("faults", POST, faults),
    ("warn", POST, warn),
    ("clear", POST, |app, _| {
        app.faults.clear();
        app.cluster.write(|s| s.clear_skips());
        ok(json!({}))
    }),
    ("skip-event", POST, skip_event),
    ("recreate", POST, recreate),
    ("controllers", POST, |app, body| {
        if let Some(on) = body["on"].as_bool() {
            app.controllers.set(on);
        }
        ok(json!({"on": app.controllers.enabled()}))
    }),
];

/// Handles `/_sim/<rest>`.
pub async fn handle(app: &App, method: Method, rest: &str, req: Request) -> Response {
    let body = match read_body(req).await {
        Ok(body) => body,
        Err(resp) => return resp,
    };
    let path = match rest.trim_end_matches('/') {
        "" if method == Method::GET => "help",
        path => path,
    };
    match ENDPOINTS.iter().find(|(p, _, _)| *p == path) {
        Some((_, post, handler)) if method == if *post { Method::POST } else { Method::GET } => {
            handler(app, &body)
        }
        Some(_) => Status::method_not_allowed().response(),
        None => Status::unknown_resource().response(),
    }
}

/// The request's body: a JSON object, `{}` when empty or `null`.
async fn read_body(req: Request) -> Result<Value, Response> {
    let Ok(body) = axum::body::to_bytes(req.into_body(), 1 << 20).await else {
        return Err(Status::bad_request("unreadable body").response());
    };
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(json!({}));
    }
    match serde_json::from_slice(&body) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(Value::Null) => Ok(json!({})),
        _ => Err(Status::bad_request("the control API takes a JSON object").response()),
    }
}

/// `stale-list` and `stale-watch`: `slot` holds the revision asked for (default: the oldest
/// retained) until the next list or watch takes it.
fn stale(app: &App, body: &Value, slot: &Mutex<Option<u64>>) -> Response {
    let revision = num(body, "revision", app.cluster.read().compacted());
    *lock(slot) = Some(revision);
    ok(json!({"revision": revision.to_string()}))
}

/// Why a control request's body was refused (a 400).
#[derive(Debug, thiserror::Error)]
enum BadBody {
    /// An `until` other than `"released"` (the value given).
    #[error("until: {0} is not \"released\" (the only open-ended form; else \"seconds\")")]
    Until(Value),
    /// The field named is not a string.
    #[error("{0} must be a string")]
    NonString(&'static str),
    /// A resource the simulator does not serve.
    #[error("resource: {0:?} is not served here (a plural such as \"configmaps\")")]
    Unserved(String),
}

/// How long a timed fault lasts: `"seconds"` (else `default`), or [`HELD`] with
/// `"until":"released"`; `Err`: any other `until`.
fn lasting(body: &Value, default: f64) -> Result<Duration, BadBody> {
    match &body["until"] {
        Value::Null => {
            let secs = body["seconds"]
                .as_f64()
                .unwrap_or(default)
                .clamp(0.0, 3600.0);
            Ok(Duration::from_secs_f64(secs))
        }
        Value::String(s) if s == "released" => Ok(HELD),
        other => Err(BadBody::Until(other.clone())),
    }
}

/// `POST /_sim/release {"fault":F}`.
fn release(app: &App, body: &Value) -> Response {
    let which = match &body["fault"] {
        Value::Null => None,
        Value::String(f) if RELEASABLE.contains(&f.as_str()) => Some(f.as_str()),
        other => {
            return Status::bad_request(format!(
                "fault: {other} is none of {RELEASABLE:?} (or leave it out: all of them)"
            ))
            .response()
        }
    };
    ok(json!({"released": app.faults.release(which)}))
}

/// `POST /_sim/slow-link {"mbps":M}`.
fn slow_link(app: &App, body: &Value) -> Response {
    match body["mbps"].as_f64() {
        Some(m) if m.is_finite() && m >= 0.0 => {
            app.faults.link.set(m);
            ok(json!({"mbps": app.faults.link.mbps()}))
        }
        _ => Status::bad_request(format!(
            "mbps: {} is not a rate in Mbit/s (a number, 0 to end the slow link)",
            body["mbps"]
        ))
        .response(),
    }
}

/// A fault switch's value; a handler that panicked while holding it left it usable.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The unsigned integer `k` of `body`, else `default`.
fn num(body: &Value, k: &str, default: u64) -> u64 {
    body[k].as_u64().unwrap_or(default)
}

/// `GET /_sim/state`.
fn state(app: &App, _: &Value) -> Response {
    let mut state = app.cluster.read().state();
    state["discoveryRequests"] = json!(app.discovery.requests());
    state["chaosFaults"] = json!(app.faults.chaos_pace.injected());
    state["slowLink"] =
        json!({"mbps": app.faults.link.mbps(), "bytesPaced": app.faults.link.paced()});
    value_response(StatusCode::OK, &state)
}

/// `POST /_sim/compact {"revision":N}`.
fn compact(app: &App, body: &Value) -> Response {
    let rev = app.cluster.write(|s| {
        let r = body["revision"].as_u64().unwrap_or(s.rev());
        s.compact(r);
        s.compacted()
    });
    ok(json!({"compacted": rev.to_string()}))
}

/// `POST /_sim/fail {"code":C,"count":N,"retryAfter":S,"verb":V,"resource":R}`.
fn fail(app: &App, body: &Value) -> Response {
    let code = num(body, "code", 500);
    if !matches!(code, 429 | 500 | 503 | 410 | 504) {
        return Status::bad_request("code must be 429, 500, 503, 410 or 504").response();
    }
    let text = |k: &str| body[k].as_str().map(str::to_string);
    let held = match &body["until"] {
        Value::Null => false,
        Value::String(s) if s == "released" => true,
        other => {
            return Status::bad_request(format!("until: {other} is not \"released\"")).response()
        }
    };
    let count = match body["always"].as_bool() {
        Some(true) => ALWAYS,
        _ if held => ALWAYS,
        _ => num(body, "count", 1),
    };
    app.faults.set_failure_for(
        code as u16,
        count,
        num(body, "retryAfter", 1),
        text("verb"),
        text("resource"),
    );
    ok(json!({}))
}

/// `POST /_sim/bend {"mode":M,"on":bool}`: the modes in force after it.
fn bend(app: &App, body: &Value) -> Response {
    use super::bend::Bend;
    match &body["mode"] {
        Value::Null => {}
        Value::String(m) => match Bend::named(m) {
            Some(b) => app.faults.bend(b, body["on"].as_bool().unwrap_or(true)),
            None => {
                let names: Vec<_> = Bend::ALL.iter().map(|b| b.name()).collect();
                return Status::bad_request(format!("mode: {m:?} is none of {names:?}")).response();
            }
        },
        other => return Status::bad_request(format!("mode: {other} is not a string")).response(),
    }
    let on: Vec<_> = Bend::ALL
        .into_iter()
        .filter(|b| app.faults.bent(*b))
        .map(Bend::name)
        .collect();
    ok(json!({"modes": on}))
}

/// `POST /_sim/churn {"rate":R,"faults":bool}`.
fn churn(app: &App, body: &Value) -> Response {
    if let Some(r) = body["rate"].as_f64() {
        app.faults.churn_rate.send_replace(r.max(0.0));
    }
    if let Some(f) = body["faults"].as_bool() {
        app.faults.chaos.store(f, Ordering::SeqCst);
    }
    ok(json!({"rate": *app.faults.churn_rate.borrow()}))
}

/// `POST /_sim/faults {"enabled":bool,"only":"retry-after"|"all"}`.
fn faults(app: &App, body: &Value) -> Response {
    if let Some(f) = body["enabled"].as_bool() {
        app.faults.chaos.store(f, Ordering::SeqCst);
    }
    if let Some(only) = body["only"].as_str() {
        let ra = match only {
            "retry-after" => true,
            "all" => false,
            other => {
                return Status::bad_request(format!(
                    "only: {other:?} is neither \"retry-after\" nor \"all\""
                ))
                .response()
            }
        };
        app.faults
            .chaos_retry_after_only
            .store(ra, Ordering::SeqCst);
    }
    if let Some(every) = body.get("everyMs") {
        let range = every.as_array().and_then(|r| match r.as_slice() {
            [lo, hi] => Some((lo.as_u64()?, hi.as_u64()?)),
            _ => None,
        });
        match range {
            Some((lo, hi)) if 0 < lo && lo < hi => app.faults.chaos_pace.set_every_ms(lo, hi),
            _ => {
                return Status::bad_request(format!(
                    "everyMs: {every} is not [MIN, MAX] milliseconds with 0 < MIN < MAX"
                ))
                .response()
            }
        }
    }
    ok(json!({"enabled": app.faults.chaos.load(Ordering::SeqCst),
              "retryAfterOnly": app.faults.chaos_retry_after_only.load(Ordering::SeqCst),
              "injected": app.faults.chaos_pace.injected()}))
}

/// `POST /_sim/skip-event {"key":"NS/NAME","resource":R}`.
fn skip_event(app: &App, body: &Value) -> Response {
    match object_of(body) {
        Ok((res, key)) => {
            app.cluster.write(|s| s.skip_next_change(res, key));
            ok(json!({}))
        }
        Err(why) => Status::bad_request(why.to_string()).response(),
    }
}

/// `POST /_sim/recreate {"key":"NS/NAME","resource":R}`: the new object's uid and
/// resourceVersion.
fn recreate(app: &App, body: &Value) -> Response {
    let (Some(res), Some(key)) = (match object_of(body) {
        Ok(rule) => rule,
        Err(why) => return Status::bad_request(why.to_string()).response(),
    }) else {
        return Status::bad_request("recreate takes a \"resource\" and a \"key\"").response();
    };
    match app.cluster.write(|s| s.recreate(res, &key)) {
        Ok(o) => {
            let v = o.value();
            ok(
                json!({"uid": v["metadata"]["uid"], "resourceVersion": v["metadata"]["resourceVersion"]}),
            )
        }
        Err(status) => status.response(),
    }
}

/// The (resource, key) a body names (skip-event's rule, recreate's object), `None` where
/// it names none; `Err`: why not.
fn object_of(body: &Value) -> Result<(Option<usize>, Option<String>), BadBody> {
    let text = |k: &'static str| match &body[k] {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s.clone())),
        _ => Err(BadBody::NonString(k)),
    };
    let key = text("key")?;
    let res = match text("resource")? {
        None => None,
        Some(r) => {
            let found = super::resources::RESOURCES
                .iter()
                .position(|d| d.plural == r);
            Some(found.ok_or(BadBody::Unserved(r))?)
        }
    };
    Ok((res, key))
}

/// `POST /_sim/warn {"text":T,"count":N}`.
fn warn(app: &App, body: &Value) -> Response {
    let text = body["text"].as_str().unwrap_or("simulated warning");
    // RFC 7234: a quoted-string, with `"` and `\` escaped.
    let quoted = text.replace('\\', "\\\\").replace('"', "\\\"");
    let count = num(body, "count", 1).max(1);
    *lock(&app.faults.warning) = Some((format!("299 - \"{quoted}\""), count));
    ok(json!({}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_counted() {
        let f = Faults::new(0.0, false);
        assert!(f.take_failure(None, None, 0).is_none());
        f.set_failure(429, 2, 3);
        let s = f.take_failure(None, None, 0).unwrap();
        assert_eq!((s.code, s.retry_after), (429, Some(3)));
        assert!(f.take_failure(Some("list"), Some("pods"), 0).is_some());
        assert!(f.take_failure(None, None, 0).is_none());
        f.set_failure_for(500, 1, 1, Some("watch".into()), Some("pods".into()));
        assert!(f.take_failure(None, None, 0).is_none(), "not for discovery");
        assert!(f.take_failure(Some("list"), Some("pods"), 0).is_none());
        assert!(f
            .take_failure(Some("watch"), Some("configmaps"), 0)
            .is_none());
        assert_eq!(
            f.take_failure(Some("watch"), Some("pods"), 0)
                .map(|s| s.code),
            Some(500)
        );
    }

    #[test]
    fn a_failure_always_never_runs_out() {
        let f = Faults::new(0.0, false);
        f.set_failure_for(500, ALWAYS, 0, Some("list".into()), None);
        for _ in 0..1000 {
            assert!(f.take_failure(Some("list"), Some("pods"), 0).is_some());
        }
        assert!(f.take_failure(Some("watch"), Some("pods"), 0).is_none());
        f.clear();
        assert!(f.take_failure(Some("list"), Some("pods"), 0).is_none());
    }

    #[test]
    fn short_watches_are_counted() {
        let f = Faults::new(0.0, false);
        f.add_short_watches(1);
        assert!(f.take_short_watch());
        assert!(!f.take_short_watch());
    }
}
