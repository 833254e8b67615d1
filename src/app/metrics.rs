//! `--metrics ADDR`: the informer's metrics as an OpenMetrics endpoint (`GET /metrics`),
//! encoded by the `prometheus-client` crate and served by hyper on the one address given.
//!
//! Fed from the records the [`crate::app::informer::Sink`] prints (as `--stats` is), so
//! they describe what the informer saw; what records do not carry (store size, the
//! queue's depth, time since the last event) is read when the endpoint is scraped, which
//! costs the hot path nothing. Names follow client-go's reflector metrics
//! (`tools/cache/reflector_metrics.go`, removed in 1.14 by kubernetes#74636) and the
//! informer metrics KEP-4346 asks back, each listed in docs/metrics.md. Labels name only
//! the resource and the context: never object contents or credentials.
//!
//! `--probe`'s `Latency` records feed `informer_probe_latency_seconds`, `--stall-after`'s
//! `Stalled` records `reflector_stalls_total`.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use prometheus_client::encoding::{text::encode, EncodeLabelSet};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;
use tokio::net::TcpListener;

use crate::app::exit::Usage;
use crate::cache::queue::FifoStats;
use crate::cache::reflector::ReflectorEvent;
use crate::cache::store::Store;
use crate::output::{Body, Record};

/// Which informer: the resource as records name it, and the context (empty with one).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct Labels {
    pub resource: String,
    pub context: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Reason {
    resource: String,
    context: String,
    /// `initial`, `expired` (a 410 / too old resource version), `error` (anything else).
    reason: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Typed {
    resource: String,
    context: String,
    /// A delta's type (`Added`, …), or a retry's HTTP code (`none` for a lost connection).
    r#type: String,
}

/// When an informer last saw an event and a bookmark.
#[derive(Default)]
struct Seen {
    event: Option<Instant>,
    bookmark: Option<Instant>,
}

/// A store and the queue feeding it, read at each scrape.
struct Source {
    labels: Labels,
    store: Arc<Store>,
    queue: Box<dyn Fn() -> Option<FifoStats> + Send + Sync>,
}

/// Buckets: lists from 1 ms to about 33 s; watches from 100 ms to about 27 min;
/// items from 1 to about 260 000.
fn list_seconds() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 2.0, 16))
}

fn watch_seconds() -> Histogram {
    Histogram::new(exponential_buckets(0.1, 2.0, 14))
}

fn items() -> Histogram {
    Histogram::new(exponential_buckets(1.0, 4.0, 10))
}

type Hist = Family<Labels, Histogram, fn() -> Histogram>;

fn hist_family(new: fn() -> Histogram) -> Hist {
    Family::new_with_constructor(new)
}

pub struct Metrics {
    registry: Registry,
    lists: Family<Reason, Counter>,
    list_duration: Hist,
    items_per_list: Hist,
    watches: Family<Labels, Counter>,
    short_watches: Family<Labels, Counter>,
    watch_duration: Hist,
    items_per_watch: Hist,
    deltas: Family<Typed, Counter>,
    bookmarks: Family<Labels, Counter>,
    expired: Family<Labels, Counter>,
    retries: Family<Typed, Counter>,
    backoffs: Family<Labels, Counter>,
    pops: Family<Labels, Counter>,
    queue_depth: Family<Labels, Gauge>,
    queue_max_depth: Family<Labels, Gauge>,
    store_objects: Family<Labels, Gauge>,
    store_bytes: Family<Labels, Gauge>,
    last_rv: Family<Labels, Gauge>,
    since_event: Family<Labels, Gauge<f64, std::sync::atomic::AtomicU64>>,
    since_bookmark: Family<Labels, Gauge<f64, std::sync::atomic::AtomicU64>>,
    probe_latency: Histogram,
    stalls: Family<Labels, Counter>,
    seen: Mutex<HashMap<Labels, Seen>>,
    sources: Mutex<Vec<Source>>,
}

/// Why a list began, as a label of few values (the record's reason is free text).
fn reason_class(reason: &str) -> &'static str {
    if reason == "initial" {
        "initial"
    } else if is_expired(reason) {
        "expired"
    } else {
        "error"
    }
}

/// A watch the reflector ended as client-go's "very short watch" (reflector.go: under a
/// second, no event; `very_short` in cache/reflector), by the reason its `WatchEnded` gives.
/// A streaming list's "very short watch-list" is a list, not counted.
fn is_short_watch(reason: &str) -> bool {
    reason.starts_with("very short watch:")
}

/// A 410 Gone, in the words apimachinery gives it ("too old resource version", "Expired").
fn is_expired(reason: &str) -> bool {
    reason.contains("410") || reason.contains("too old resource version")
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        let m = Metrics {
            registry: Registry::default(),
            lists: Family::default(),
            list_duration: hist_family(list_seconds),
            items_per_list: hist_family(items),
            watches: Family::default(),
            short_watches: Family::default(),
            watch_duration: hist_family(watch_seconds),
            items_per_watch: hist_family(items),
            deltas: Family::default(),
            bookmarks: Family::default(),
            expired: Family::default(),
            retries: Family::default(),
            backoffs: Family::default(),
            pops: Family::default(),
            queue_depth: Family::default(),
            queue_max_depth: Family::default(),
            store_objects: Family::default(),
            store_bytes: Family::default(),
            last_rv: Family::default(),
            since_event: Family::default(),
            since_bookmark: Family::default(),
            probe_latency: list_seconds(),
            stalls: Family::default(),
            seen: Mutex::new(HashMap::new()),
            sources: Mutex::new(Vec::new()),
        };
        m.register()
    }

    fn register(mut self) -> Metrics {
        self.register_lists_and_watches();
        let r = &mut self.registry;
        r.register(
            "informer_deltas",
            "Deltas the informer popped, by type",
            self.deltas.clone(),
        );
        r.register(
            "reflector_bookmarks",
            "Bookmarks received",
            self.bookmarks.clone(),
        );
        r.register(
            "reflector_expired",
            "410 Gone answers (too old resource version) to lists and watches",
            self.expired.clone(),
        );
        r.register(
            "reflector_retries",
            "Requests sent again by the request layer, by HTTP code",
            self.retries.clone(),
        );
        r.register(
            "reflector_backoffs",
            "Waits before the next list or watch",
            self.backoffs.clone(),
        );
        r.register(
            "informer_queue_pops",
            "Pops of the informer's queue",
            self.pops.clone(),
        );
        r.register(
            "informer_queue_depth",
            "Keys queued now",
            self.queue_depth.clone(),
        );
        r.register(
            "informer_queue_max_depth",
            "Largest number of keys queued at once so far",
            self.queue_max_depth.clone(),
        );
        r.register(
            "informer_store_objects",
            "Objects in the informer's store",
            self.store_objects.clone(),
        );
        r.register(
            "informer_store_bytes",
            "Bytes of the objects' JSON in the informer's store",
            self.store_bytes.clone(),
        );
        r.register(
            "reflector_last_resource_version",
            "The last resourceVersion synced (list, watch start or bookmark)",
            self.last_rv.clone(),
        );
        r.register(
            "informer_seconds_since_last_event",
            "Seconds since the last delta popped (absent before the first)",
            self.since_event.clone(),
        );
        r.register(
            "informer_seconds_since_last_bookmark",
            "Seconds since the last bookmark (absent before the first)",
            self.since_bookmark.clone(),
        );
        r.register(
            "informer_probe_latency_seconds",
            "Write-to-delta latency measured by the probe",
            self.probe_latency.clone(),
        );
        r.register(
            "reflector_stalls",
            "Watches that delivered nothing for the stall time",
            self.stalls.clone(),
        );
        self
    }

    /// The lists' and watches' families (served first, in this order).
    fn register_lists_and_watches(&mut self) {
        let r = &mut self.registry;
        r.register(
            "reflector_lists",
            "Lists begun, by reason",
            self.lists.clone(),
        );
        r.register(
            "reflector_list_duration_seconds",
            "How long a list took, all its pages",
            self.list_duration.clone(),
        );
        r.register(
            "reflector_items_per_list",
            "Objects a list returned",
            self.items_per_list.clone(),
        );
        r.register("reflector_watches", "Watches opened", self.watches.clone());
        r.register(
            "reflector_short_watches",
            "Watches that ended within a second with no event",
            self.short_watches.clone(),
        );
        r.register(
            "reflector_watch_duration_seconds",
            "How long a watch lasted, when it ended",
            self.watch_duration.clone(),
        );
        r.register(
            "reflector_items_per_watch",
            "Events a watch delivered, when it ended",
            self.items_per_watch.clone(),
        );
    }

    /// Adds a store and its queue's counters, read at each scrape. The resource's
    /// counters and histograms are served from now on, at 0 until something happens (a
    /// counter that appears only at its first increment hides that first one from
    /// `rate()`); those labelled by a `reason` or `type` appear with their first value.
    pub fn add_source(
        &self,
        labels: Labels,
        store: Arc<Store>,
        queue: Box<dyn Fn() -> Option<FifoStats> + Send + Sync>,
    ) {
        for c in [
            &self.watches,
            &self.short_watches,
            &self.bookmarks,
            &self.expired,
            &self.backoffs,
            &self.pops,
            &self.stalls,
        ] {
            let _ = c.get_or_create(&labels);
        }
        for h in [
            &self.list_duration,
            &self.items_per_list,
            &self.watch_duration,
            &self.items_per_watch,
        ] {
            let _ = h.get_or_create(&labels);
        }
        self.lock_sources().push(Source {
            labels,
            store,
            queue,
        });
    }

    fn lock_sources(&self) -> std::sync::MutexGuard<'_, Vec<Source>> {
        self.sources.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn touch(&self, l: &Labels, f: impl FnOnce(&mut Seen)) {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        f(seen.entry(l.clone()).or_default());
    }

    /// One pop of an informer's queue.
    pub fn popped(&self, l: &Labels) {
        self.pops.get_or_create(l).inc();
    }

    /// Counts one printed record.
    pub fn observe(&self, rec: &Record<'_>) {
        let l = Labels {
            resource: rec.resource.name.clone(),
            context: rec.context.unwrap_or_default().to_owned(),
        };
        match &rec.body {
            Body::Delta { delta, .. } => {
                self.deltas
                    .get_or_create(&typed(&l, delta.kind.as_str()))
                    .inc();
                self.touch(&l, |s| s.event = Some(Instant::now()));
            }
            Body::Event(e) => self.observe_event(&l, e),
            Body::Synced | Body::Handler { .. } => {}
        }
    }

    /// [`Metrics::observe`] of a reflector event of `l`'s resource.
    fn observe_event(&self, l: &Labels, e: &ReflectorEvent) {
        let rv = |rv: &str| {
            if let Ok(n) = rv.parse::<i64>() {
                self.last_rv.get_or_create(l).set(n);
            }
        };
        match e {
            ReflectorEvent::List { reason, .. } => {
                self.lists
                    .get_or_create(&Reason {
                        resource: l.resource.clone(),
                        context: l.context.clone(),
                        reason: reason_class(reason).to_owned(),
                    })
                    .inc();
                // The list after a 410 names it; the failed list or watch
                // before it has no record of its own when it was a list.
                if reason != "initial" && is_expired(reason) {
                    self.expired.get_or_create(l).inc();
                }
            }
            ReflectorEvent::Listed {
                resource_version,
                items,
                elapsed,
                ..
            } => {
                self.list_duration
                    .get_or_create(l)
                    .observe(elapsed.as_secs_f64());
                self.items_per_list.get_or_create(l).observe(*items as f64);
                rv(resource_version);
            }
            ReflectorEvent::Watch {
                resource_version, ..
            } => {
                self.watches.get_or_create(l).inc();
                rv(resource_version);
            }
            ReflectorEvent::WatchEnded {
                reason,
                events,
                elapsed,
                ..
            } => {
                if is_short_watch(reason) {
                    self.short_watches.get_or_create(l).inc();
                }
                self.watch_duration
                    .get_or_create(l)
                    .observe(elapsed.as_secs_f64());
                self.items_per_watch
                    .get_or_create(l)
                    .observe(*events as f64);
            }
            ReflectorEvent::Bookmark { resource_version } => {
                self.bookmarks.get_or_create(l).inc();
                self.touch(l, |s| s.bookmark = Some(Instant::now()));
                rv(resource_version);
            }
            ReflectorEvent::Backoff { .. } => {
                self.backoffs.get_or_create(l).inc();
            }
            ReflectorEvent::Retry(r) => {
                let code = r.code.map_or_else(|| "none".to_owned(), |c| c.to_string());
                self.retries.get_or_create(&typed(l, &code)).inc();
            }
            ReflectorEvent::Stalled { .. } => {
                self.stalls.get_or_create(l).inc();
            }
            ReflectorEvent::Latency { latency, .. } => {
                self.probe_latency.observe(latency.as_secs_f64());
            }
            ReflectorEvent::Resync
            | ReflectorEvent::WatchListFallback { .. }
            | ReflectorEvent::Consistency(_)
            | ReflectorEvent::CacheStats(_)
            | ReflectorEvent::TimeTravel { .. }
            | ReflectorEvent::OpaqueResourceVersion { .. }
            | ReflectorEvent::Relisted { .. }
            | ReflectorEvent::Conflict { .. } => {}
        }
    }

    /// The exposition: the gauges read now, then every metric encoded.
    pub fn render(&self) -> Result<String, std::fmt::Error> {
        for s in self.lock_sources().iter() {
            let objects = s.store.list();
            let bytes: usize = objects.iter().map(|o| o.raw().len()).sum();
            self.store_objects
                .get_or_create(&s.labels)
                .set(objects.len() as i64);
            self.store_bytes.get_or_create(&s.labels).set(bytes as i64);
            if let Some(q) = (s.queue)() {
                self.queue_depth
                    .get_or_create(&s.labels)
                    .set(q.depth as i64);
                self.queue_max_depth
                    .get_or_create(&s.labels)
                    .set(q.max_depth as i64);
            }
        }
        {
            let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
            for (l, s) in seen.iter() {
                if let Some(t) = s.event {
                    self.since_event
                        .get_or_create(l)
                        .set(t.elapsed().as_secs_f64());
                }
                if let Some(t) = s.bookmark {
                    self.since_bookmark
                        .get_or_create(l)
                        .set(t.elapsed().as_secs_f64());
                }
            }
        }
        let mut out = String::new();
        encode(&mut out, &self.registry)?;
        Ok(out)
    }
}

/// `--metrics`'s address, read: `Err` names the fix.
pub fn parse_addr(s: &str) -> Result<SocketAddr, String> {
    s.parse().map_err(|_| {
        format!("--metrics {s:?}: not an IP address and port; give one such as 127.0.0.1:9464 (port 0: any free port)")
    })
}

/// Binds the endpoint's address before anything starts: a busy or unusable address is
/// a usage error (exit 2). The bound address goes to stderr.
pub async fn bind(addr: SocketAddr) -> anyhow::Result<TcpListener> {
    let listener = TcpListener::bind(addr).await.map_err(|e| {
        Usage(format!(
            "--metrics {addr}: cannot listen there ({e}); give a free address, e.g. 127.0.0.1:0"
        ))
    })?;
    let bound = listener.local_addr().unwrap_or(addr);
    eprintln!("kwatch: metrics on http://{bound}/metrics");
    Ok(listener)
}

/// Serves `GET /metrics` on `listener` until the process ends (HTTP/1.1).
pub async fn serve(listener: TcpListener, metrics: Arc<Metrics>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // Out of file descriptors, say: wait rather than spin.
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let metrics = metrics.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                let metrics = metrics.clone();
                async move { Ok::<_, std::convert::Infallible>(answer(&req, &metrics)) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

fn answer<B>(req: &Request<B>, metrics: &Metrics) -> Response<Full<Bytes>> {
    let reply = |code: StatusCode, kind: &'static str, body: String| {
        let mut r = Response::new(Full::new(Bytes::from(body)));
        *r.status_mut() = code;
        r.headers_mut().insert(
            hyper::header::CONTENT_TYPE,
            hyper::header::HeaderValue::from_static(kind),
        );
        r
    };
    if req.method() != hyper::Method::GET || req.uri().path() != "/metrics" {
        return reply(
            StatusCode::NOT_FOUND,
            "text/plain",
            "only GET /metrics is served\n".into(),
        );
    }
    match metrics.render() {
        Ok(body) => reply(StatusCode::OK, OPENMETRICS, body),
        Err(_) => reply(
            StatusCode::INTERNAL_SERVER_ERROR,
            "text/plain",
            "encoding failed\n".into(),
        ),
    }
}
/// `l`'s labels and a type (a delta type, an HTTP code).
fn typed(l: &Labels, t: &str) -> Typed {
    Typed {
        resource: l.resource.clone(),
        context: l.context.clone(),
        r#type: t.to_owned(),
    }
}
