//! `--metrics ADDR`: the informer's metrics as an OpenMetrics endpoint (`GET /metrics`,
//! and `HEAD`), encoded by the `prometheus-client` crate and served by hyper on the one
//! address given (`:PORT`: every interface, `HOST:PORT`: resolved, as Go's `net.Listen`).
//!
//! Fed from the records the [`crate::informer::consume::Sink`] prints (as `--stats` is), so
//! they describe what the informer saw; what records do not carry (store size, the
//! queue's depth) is read when the endpoint is scraped, which costs the hot path nothing.
//! Names follow client-go's reflector metrics (`tools/cache/reflector_metrics.go`, removed
//! in 1.14 by kubernetes#74636), client-go 0.36's own informer metrics (component-base's
//! `metrics/prometheus/clientgo/fifo/metrics.go`: names, help, buckets and labels as
//! there) and the informer metrics KEP-4346 asks back, each listed in docs/metrics.md.
//! Labels name only the informer, the resource and the context: never object contents
//! or credentials.
//!
//! `--probe`'s `Latency` records feed `informer_probe_latency_seconds` (registered only
//! with `--probe`), `--stall-after`'s `Stalled` records `reflector_stalls_total`.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

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
use crate::client::target::Target;
use crate::context::ContextName;
use crate::informer::record::{Body, Observation, Record};
use crate::informer::sink::Observer;

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
struct Encoded {
    resource: String,
    context: String,
    /// The content type and encoding a list's bodies came in: `json`, `json+gzip`,
    /// `protobuf`, `protobuf+gzip` (`Listed`'s `encoding`).
    encoding: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Typed {
    resource: String,
    context: String,
    /// A delta's type (`Added`, …).
    r#type: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Coded {
    resource: String,
    context: String,
    /// The HTTP code a retried request was answered (`none`: the connection was lost).
    code: String,
}

/// client-go 0.36's informer labels (component-base `clientgo/fifo/metrics.go`):
/// `name`, the informer's (`kwatch`, `kwatch/CONTEXT` with several contexts, so that
/// each (name, resource) pair is one informer as client-go's reservation makes it), and
/// the resource's group, version and plural.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct InformerLabels {
    name: String,
    group: String,
    version: String,
    resource: String,
}

impl InformerLabels {
    /// The labels of `t`'s informer in `context` (`None`: the one context).
    pub fn new(t: &Target, context: Option<&ContextName>) -> InformerLabels {
        InformerLabels {
            name: context.map_or("kwatch".to_owned(), |c| format!("kwatch/{c}")),
            group: t.group.clone(),
            version: t.version.clone(),
            resource: t.plural.clone(),
        }
    }
}

/// A store and the queue feeding it, read at each scrape.
struct Source {
    labels: Labels,
    informer: InformerLabels,
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

/// component-base's `informer_processing_latency_seconds` buckets.
fn processing_seconds() -> Histogram {
    Histogram::new([
        0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
    ])
}

/// component-base's `informer_store_resource_version`: a resourceVersion's 15 least
/// significant digits (client-go's `parseRVForMetricsWithTruncation`, so that a float
/// holds it exactly); `None` when it is not a decimal integer.
fn truncated_rv(rv: &str) -> Option<u64> {
    if rv.is_empty() || !rv.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    rv[rv.len().saturating_sub(15)..].parse().ok()
}

/// Seconds since the Unix epoch, now.
fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

type FloatGauge = Gauge<f64, AtomicU64>;

type Hist = Family<Labels, Histogram, fn() -> Histogram>;

fn hist_family(new: fn() -> Histogram) -> Hist {
    Family::new_with_constructor(new)
}

pub struct Metrics {
    registry: Registry,
    lists: Family<Reason, Counter>,
    list_duration: Hist,
    items_per_list: Hist,
    list_wire_bytes: Family<Encoded, Counter>,
    wire_fallbacks: Family<Labels, Counter>,
    watches: Family<Labels, Counter>,
    short_watches: Family<Labels, Counter>,
    watch_duration: Hist,
    items_per_watch: Hist,
    deltas: Family<Typed, Counter>,
    bookmarks: Family<Labels, Counter>,
    expired: Family<Labels, Counter>,
    retries: Family<Coded, Counter>,
    backoffs: Family<Labels, Counter>,
    pops: Family<Labels, Counter>,
    queue_depth: Family<Labels, Gauge>,
    queue_max_depth: Family<Labels, Gauge>,
    store_objects: Family<Labels, Gauge>,
    store_bytes: Family<Labels, Gauge>,
    last_rv: Family<Labels, Gauge>,
    synced: Family<Labels, Gauge>,
    last_event: Family<Labels, FloatGauge>,
    /// `--freshness`: the store's lag behind the server at the last sample.
    store_lag: Family<Labels, FloatGauge>,
    stale: Family<Labels, Counter>,
    last_bookmark: Family<Labels, FloatGauge>,
    /// With `--probe` only: a histogram of nothing would read as a probe that measured
    /// nothing.
    probe_latency: Option<Histogram>,
    stalls: Family<Labels, Counter>,
    queued_items: Family<InformerLabels, FloatGauge>,
    processing_latency: Family<InformerLabels, Histogram, fn() -> Histogram>,
    store_rv: Family<InformerLabels, FloatGauge>,
    /// Each source's client-go labels, by its own (filled by [`Metrics::add_informer`]).
    informers: Mutex<HashMap<Labels, InformerLabels>>,
    sources: Mutex<Vec<Source>>,
    /// Tokio's tasks alive in the process, read at each scrape.
    tasks: Gauge,
    /// `--record URL`: the database recorder's counters, read at each scrape.
    recorder: Option<RecorderMetrics>,
}

/// The database recorder's series (`--record URL` only: without it they would read as a
/// recorder that writes nothing).
struct RecorderMetrics {
    status: Arc<crate::app::record::status::Status>,
    rows: Counter,
    batches: Counter,
    spilled: Counter,
    backlog: Gauge,
    up: Gauge,
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

impl Metrics {
    /// `probe`: `--probe` is on, and its latency histogram served.
    pub fn new(probe: bool) -> Metrics {
        let m = Metrics {
            registry: Registry::default(),
            lists: Family::default(),
            list_duration: hist_family(list_seconds),
            items_per_list: hist_family(items),
            list_wire_bytes: Family::default(),
            wire_fallbacks: Family::default(),
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
            synced: Family::default(),
            last_event: Family::default(),
            store_lag: Family::default(),
            stale: Family::default(),
            last_bookmark: Family::default(),
            probe_latency: probe.then(list_seconds),
            stalls: Family::default(),
            queued_items: Family::default(),
            processing_latency: Family::new_with_constructor(processing_seconds),
            store_rv: Family::default(),
            informers: Mutex::new(HashMap::new()),
            sources: Mutex::new(Vec::new()),
            tasks: Gauge::default(),
            recorder: None,
        };
        m.register()
    }

    /// With `--record URL`: serves the recorder's `recorder_*` series, read from `status`
    /// at each scrape.
    pub fn recording(mut self, status: Arc<crate::app::record::status::Status>) -> Metrics {
        let r = RecorderMetrics {
            status,
            rows: Counter::default(),
            batches: Counter::default(),
            spilled: Counter::default(),
            backlog: Gauge::default(),
            up: Gauge::default(),
        };
        let reg = &mut self.registry;
        reg.register(
            "recorder_rows_written",
            "Records written into the --record database (each once)",
            r.rows.clone(),
        );
        reg.register(
            "recorder_batches",
            "Transactions that wrote records into the --record database",
            r.batches.clone(),
        );
        reg.register(
            "recorder_spilled_rows",
            "Records written to the local spill file while the database could not take them",
            r.spilled.clone(),
        );
        reg.register(
            "recorder_backlog_rows",
            "Records not yet written into the database (in memory and in the spill file)",
            r.backlog.clone(),
        );
        reg.register(
            "recorder_database_up",
            "1 when the last write into the --record database succeeded, else 0",
            r.up.clone(),
        );
        self.recorder = Some(r);
        self
    }

    fn register(mut self) -> Metrics {
        self.register_lists_and_watches();
        self.register_reflector_and_informer();
        self.register_client_go();
        self
    }

    /// The reflector's events, the queue and the store (served after the lists' and
    /// watches', in this order).
    fn register_reflector_and_informer(&mut self) {
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
            "kwatch_tasks",
            "Tasks alive in the process: a few per informer (its reflector and its loop), one \
             per context tried again; a count that grows while the informers do not is a leak",
            self.tasks.clone(),
        );
        r.register(
            "informer_synced",
            "1 once the informer's initial list has been popped (client-go's HasSynced), else 0",
            self.synced.clone(),
        );
        r.register(
            "reflector_last_resource_version",
            "The last resourceVersion synced (list, watch start or bookmark)",
            self.last_rv.clone(),
        );
        r.register(
            "informer_last_event_timestamp_seconds",
            "Unix time of the last delta popped (absent before the first)",
            self.last_event.clone(),
        );
        r.register(
            "informer_last_bookmark_timestamp_seconds",
            "Unix time of the last bookmark (absent before the first)",
            self.last_bookmark.clone(),
        );
        r.register(
            "informer_store_lag_seconds",
            "How far the store was behind the server at the last --freshness sample",
            self.store_lag.clone(),
        );
        r.register(
            "informer_stale",
            "Times the store's lag reached --stale-after",
            self.stale.clone(),
        );
        if let Some(h) = &self.probe_latency {
            r.register(
                "informer_probe_latency_seconds",
                "Write-to-delta latency measured by the probe",
                h.clone(),
            );
        }
        r.register(
            "reflector_stalls",
            "Watches that delivered nothing for the stall time",
            self.stalls.clone(),
        );
    }

    /// client-go 0.36's, as component-base registers them (its ALPHA marker included; the
    /// encoder ends each help with the full stop).
    fn register_client_go(&mut self) {
        let r = &mut self.registry;
        r.register(
            "informer_queued_items",
            "[ALPHA] Number of items currently queued in the FIFO",
            self.queued_items.clone(),
        );
        r.register(
            "informer_processing_latency_seconds",
            "[ALPHA] Time taken to process events after popping from the queue",
            self.processing_latency.clone(),
        );
        r.register(
            "informer_store_resource_version",
            "[ALPHA] The 15 least significant digits of the resource version of the store",
            self.store_rv.clone(),
        );
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
        r.register(
            "reflector_list_wire_bytes",
            "Bytes of LIST bodies read off the connection, by content type and encoding",
            self.list_wire_bytes.clone(),
        );
        r.register(
            "reflector_wire_fallbacks",
            "Resources read in JSON after a protobuf body kwatch could not decode",
            self.wire_fallbacks.clone(),
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

    /// A resource of a context left out at its start: its `informer_synced` served at 0,
    /// so that `informer_synced == 0` names every cluster not seen, not only those behind.
    pub fn add_left_out(&self, labels: Labels) {
        let _ = self.synced.get_or_create(&labels);
    }

    /// Registers an informer before it starts: the resource's counters and histograms are
    /// served from now on, at 0 until something happens (a counter that appears only at
    /// its first increment hides that first one from `rate()`); those labelled by a
    /// `reason` or `type` appear with their first value. Registered later, the initial
    /// list's pops would be missing from the client-go series for good.
    pub fn add_informer(&self, labels: Labels, informer: InformerLabels) {
        // At 0 from the start: with several contexts, a cluster behind shows as 0.
        let _ = self.synced.get_or_create(&labels);
        for c in [
            &self.watches,
            &self.short_watches,
            &self.bookmarks,
            &self.expired,
            &self.backoffs,
            &self.pops,
            &self.stalls,
            &self.wire_fallbacks,
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
        let _ = self.processing_latency.get_or_create(&informer);
        self.informers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(labels, informer);
    }

    /// Adds a registered informer's store and queue, read at each scrape.
    pub fn add_source(
        &self,
        labels: Labels,
        store: Arc<Store>,
        queue: Box<dyn Fn() -> Option<FifoStats> + Send + Sync>,
    ) {
        let Some(informer) = self.informer_of(&labels) else {
            return;
        };
        self.lock_sources().push(Source {
            labels,
            informer,
            store,
            queue,
        });
    }

    /// The informers of `context` stopped (their context stops, or restarts): their
    /// stores and queues are read no more, and `informer_synced` is 0 until they sync
    /// again; `gone` (the context left the kubeconfig): their series are no longer served
    /// at all.
    pub fn stopped(&self, context: &str, gone: bool) {
        let mut sources = self.lock_sources();
        let mine: Vec<Labels> = sources
            .iter()
            .filter(|s| s.labels.context == context)
            .map(|s| s.labels.clone())
            .collect();
        sources.retain(|s| s.labels.context != context);
        drop(sources);
        for l in &mine {
            if gone {
                for g in [
                    &self.synced,
                    &self.store_objects,
                    &self.store_bytes,
                    &self.queue_depth,
                    &self.last_rv,
                ] {
                    g.remove(l);
                }
            } else {
                self.synced.get_or_create(l).set(0);
            }
        }
    }

    fn informer_of(&self, l: &Labels) -> Option<InformerLabels> {
        let informers = self.informers.lock().unwrap_or_else(|e| e.into_inner());
        informers.get(l).cloned()
    }

    fn lock_sources(&self) -> std::sync::MutexGuard<'_, Vec<Source>> {
        self.sources.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` on the client-go labels of `l`'s informer, if it is registered.
    fn with_informer(&self, l: &Labels, f: impl FnOnce(&InformerLabels)) {
        if let Some(i) = self.informer_of(l) {
            f(&i);
        }
    }

    /// One pop of an informer's queue.
    pub fn popped(&self, l: &Labels) {
        self.pops.get_or_create(l).inc();
    }

    /// A pop of deltas processed (applied to the store and delivered) in `took`: client-go
    /// 0.36's processing latency, from the pop to the handlers' return.
    pub fn processed(&self, l: &Labels, took: Duration) {
        self.with_informer(l, |i| {
            self.processing_latency
                .get_or_create(i)
                .observe(took.as_secs_f64());
        });
    }

    /// Counts one printed record.
    pub fn observe(&self, rec: &Record<'_>) {
        let l = Labels {
            resource: rec.resource.name.clone(),
            context: crate::context::or_empty(rec.context).to_owned(),
        };
        match &rec.body {
            Body::Delta { delta, .. } => {
                self.deltas
                    .get_or_create(&typed(&l, delta.kind.as_str()))
                    .inc();
                self.last_event.get_or_create(&l).set(unix_now());
                // client-go's store sets it from each object it applies.
                if let Some(o) = delta.object.object() {
                    self.store_at(&l, o.resource_version());
                }
            }
            Body::Event(e) => self.observe_event(&l, e),
            Body::Observed(o) => self.observe_observation(&l, o),
            Body::Synced => {
                self.synced.get_or_create(&l).set(1);
            }
            Body::Handler { .. } => {}
        }
    }

    /// client-go's store resourceVersion gauge: set by each object applied, and by a
    /// list's `Replace` and a bookmark to their resourceVersion (thread_safe_store.go,
    /// v0.37.0-beta.0: `Replace`, `Bookmark`), so that after a relist it is the list's, not the
    /// last listed object's.
    fn store_at(&self, l: &Labels, rv: &str) {
        if let Some(rv) = truncated_rv(rv) {
            self.with_informer(l, |i| {
                self.store_rv.get_or_create(i).set(rv as f64);
            });
        }
    }

    /// A `Listed`: its time, items and, for a LIST, the bytes read by encoding (a
    /// streaming list's come over a watch).
    fn observe_listed(&self, l: &Labels, e: &ReflectorEvent) {
        let ReflectorEvent::Listed {
            items,
            elapsed,
            encoding,
            wire_bytes,
            streaming,
            ..
        } = e
        else {
            return;
        };
        self.list_duration
            .get_or_create(l)
            .observe(elapsed.as_secs_f64());
        self.items_per_list.get_or_create(l).observe(*items as f64);
        if let (Some(read), false) = (wire_bytes, streaming) {
            self.list_wire_bytes
                .get_or_create(&Encoded {
                    resource: l.resource.clone(),
                    context: l.context.clone(),
                    encoding: encoding.as_deref().unwrap_or("json").to_owned(),
                })
                .inc_by(*read);
        }
    }

    /// [`Metrics::observe`] of a reflector event of `l`'s resource.
    /// A list begun, by its reason's class; one after a 410 counts the expiry.
    fn observe_list(&self, l: &Labels, reason: &str) {
        self.lists
            .get_or_create(&Reason {
                resource: l.resource.clone(),
                context: l.context.clone(),
                reason: reason_class(reason).to_owned(),
            })
            .inc();
        // The list after a 410 names it; the failed list or watch before it has no record
        // of its own when it was a list.
        if reason != "initial" && is_expired(reason) {
            self.expired.get_or_create(l).inc();
        }
    }

    /// A watch that ended: a short one counted, its duration and events observed.
    fn observe_watch_ended(&self, l: &Labels, reason: &str, events: u64, elapsed: Duration) {
        if is_short_watch(reason) {
            self.short_watches.get_or_create(l).inc();
        }
        self.watch_duration
            .get_or_create(l)
            .observe(elapsed.as_secs_f64());
        self.items_per_watch.get_or_create(l).observe(events as f64);
    }

    fn observe_event(&self, l: &Labels, e: &ReflectorEvent) {
        let rv = |rv: &str| {
            if let Ok(n) = rv.parse::<i64>() {
                self.last_rv.get_or_create(l).set(n);
            }
        };
        match e {
            ReflectorEvent::List { reason, .. } => self.observe_list(l, reason),
            ReflectorEvent::Listed {
                resource_version, ..
            } => {
                self.observe_listed(l, e);
                rv(resource_version);
                self.store_at(l, resource_version);
            }
            ReflectorEvent::WireFallback { .. } => {
                self.wire_fallbacks.get_or_create(l).inc();
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
            } => self.observe_watch_ended(l, reason, *events, *elapsed),
            ReflectorEvent::Bookmark { resource_version } => {
                self.bookmarks.get_or_create(l).inc();
                self.last_bookmark.get_or_create(l).set(unix_now());
                rv(resource_version);
                self.store_at(l, resource_version);
            }
            ReflectorEvent::Backoff { .. } => {
                self.backoffs.get_or_create(l).inc();
            }
            ReflectorEvent::Retry(r) => {
                let code = r.code.map_or_else(|| "none".to_owned(), |c| c.to_string());
                self.retries
                    .get_or_create(&Coded {
                        resource: l.resource.clone(),
                        context: l.context.clone(),
                        code,
                    })
                    .inc();
            }
            ReflectorEvent::Stalled { .. } => {
                self.stalls.get_or_create(l).inc();
            }
            // The relist's deltas are all applied: the store is at the list's version, as
            // client-go's `Replace` leaves it (each listed object before it set its own).
            ReflectorEvent::Relisted {
                resource_version,
                resync: false,
                ..
            } => self.store_at(l, resource_version),
            ReflectorEvent::Resync
            | ReflectorEvent::WatchListFallback { .. }
            | ReflectorEvent::TimeTravel { .. }
            | ReflectorEvent::OpaqueResourceVersion { .. }
            | ReflectorEvent::Protocol { .. }
            | ReflectorEvent::Relisted { .. } => {}
        }
    }

    /// Counts one observation of another part than the reflector.
    fn observe_observation(&self, l: &Labels, o: &Observation) {
        match o {
            Observation::Latency(p) => {
                if let Some(h) = &self.probe_latency {
                    h.observe(p.latency.as_secs_f64());
                }
            }
            Observation::Freshness(f) => {
                self.store_lag.get_or_create(l).set(f.lag.as_secs_f64());
            }
            Observation::Stale(_) => {
                self.stale.get_or_create(l).inc();
            }
            Observation::Consistency(_) | Observation::CacheStats(_) | Observation::Conflict(_) => {
            }
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
                // client-go's: keys of a DeltaFIFO, deltas of a RealFIFO, as `depth`.
                self.queued_items
                    .get_or_create(&s.informer)
                    .set(q.depth as f64);
            }
        }
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            self.tasks.set(rt.metrics().num_alive_tasks() as i64);
        }
        if let Some(r) = &self.recorder {
            use crate::app::record::status::Status;
            let st = &r.status;
            // Counters move by what they lack: the status is the count.
            for (c, n) in [
                (&r.rows, &st.rows),
                (&r.batches, &st.batches),
                (&r.spilled, &st.spilled),
            ] {
                c.inc_by(Status::get(n).saturating_sub(c.get()));
            }
            r.backlog.set(Status::get(&st.backlog) as i64);
            r.up.set(i64::from(st.up.load(std::sync::atomic::Ordering::Relaxed)));
        }
        let mut out = String::new();
        encode(&mut out, &self.registry)?;
        Ok(out)
    }
}

/// `--metrics`'s address, as Go's `net.Listen("tcp", …)` reads one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListenAddr {
    /// `127.0.0.1:9464`, `[::1]:9464`.
    Ip(SocketAddr),
    /// `:9464`: every interface, IPv6 and IPv4 (IPv4 alone where there is no IPv6).
    Any(u16),
    /// `localhost:9464`: the host's first address (IPv4 first, as Go prefers), resolved
    /// when bound.
    Host(String, u16),
}

impl std::fmt::Display for ListenAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ListenAddr::Ip(a) => write!(f, "{a}"),
            ListenAddr::Any(port) => write!(f, ":{port}"),
            ListenAddr::Host(host, port) => write!(f, "{host}:{port}"),
        }
    }
}

/// A `--metrics` value that is no address and port (the value given).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "--metrics {0:?}: not an address and port; give one such as 127.0.0.1:9464, \
     localhost:9464 or :9464 (every interface; port 0: any free port)"
)]
pub struct BadAddr(pub String);

/// `--metrics`'s address, read: `Err` names the fix.
pub fn parse_addr(s: &str) -> Result<ListenAddr, BadAddr> {
    let bad = || BadAddr(s.to_owned());
    if let Ok(a) = s.parse::<SocketAddr>() {
        return Ok(ListenAddr::Ip(a));
    }
    let (host, port) = s.rsplit_once(':').ok_or_else(bad)?;
    let port: u16 = port.parse().map_err(|_| bad())?;
    if host.is_empty() {
        return Ok(ListenAddr::Any(port));
    }
    // A host name's characters (RFC 1123, and `_`): an IPv6 address without its
    // brackets, or anything else, is refused here rather than by the resolver.
    let name = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_');
    if !host.chars().all(name) {
        return Err(bad());
    }
    Ok(ListenAddr::Host(host.to_owned(), port))
}

/// The addresses to try for `addr`, in order: the first that binds is listened on.
async fn candidates(addr: &ListenAddr) -> std::io::Result<Vec<SocketAddr>> {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
    Ok(match addr {
        ListenAddr::Ip(a) => vec![*a],
        // Linux's `[::]` takes IPv4 too (bindv6only is 0 unless set otherwise).
        ListenAddr::Any(port) => vec![
            SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), *port),
            SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), *port),
        ],
        ListenAddr::Host(host, port) => {
            let mut all: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), *port))
                .await?
                .collect();
            all.sort_by_key(|a| !a.is_ipv4());
            all
        }
    })
}

/// Binds the endpoint's address before anything starts: a busy or unusable address
/// (or a host that does not resolve) is a usage error (exit 2). The bound address goes
/// to stderr.
pub async fn bind(addr: &ListenAddr) -> anyhow::Result<TcpListener> {
    let refused = |e: std::io::Error| {
        Usage(format!(
            "--metrics {addr}: cannot listen there ({e}); give a free address, e.g. 127.0.0.1:0"
        ))
    };
    let mut last = std::io::Error::new(std::io::ErrorKind::NotFound, "no address");
    for a in candidates(addr).await.map_err(refused)? {
        match TcpListener::bind(a).await {
            Ok(listener) => {
                let bound = listener.local_addr().unwrap_or(a);
                eprintln!("kwatch: metrics on http://{bound}/metrics");
                return Ok(listener);
            }
            Err(e) => last = e,
        }
    }
    Err(refused(last).into())
}

/// Serves `GET /metrics` (and `HEAD`) on `listener` until the process ends (HTTP/1.1).
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
    // HEAD answers as GET does, and hyper leaves the body out.
    let method = req.method();
    if !(method == hyper::Method::GET || method == hyper::Method::HEAD)
        || req.uri().path() != "/metrics"
    {
        return reply(
            StatusCode::NOT_FOUND,
            "text/plain",
            "only GET /metrics (and HEAD) is served\n".into(),
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

/// `l`'s labels and a delta's type.
fn typed(l: &Labels, t: &str) -> Typed {
    Typed {
        resource: l.resource.clone(),
        context: l.context.clone(),
        r#type: t.to_owned(),
    }
}

/// `--metrics` as the informer loop's observer: the printed records and every pop, into
/// the registry the endpoint serves.
pub struct Observed(pub Arc<Metrics>);

impl Observer for Observed {
    fn record(&mut self, rec: &Record<'_>, shown: bool, _targets: usize) {
        if shown {
            self.0.observe(rec);
        }
    }

    fn popped(&mut self, resource: &str, context: Option<&ContextName>) {
        self.0.popped(&labels(resource, context));
    }

    fn processed(&mut self, resource: &str, context: Option<&ContextName>, took: Duration) {
        self.0.processed(&labels(resource, context), took);
    }
}

fn labels(resource: &str, context: Option<&ContextName>) -> Labels {
    Labels {
        resource: resource.to_owned(),
        context: crate::context::or_empty(context).to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Addresses as Go's net.Listen reads them.
    #[test]
    fn listen_addresses_read_as_go_reads_them() {
        let ip: SocketAddr = "127.0.0.1:9464".parse().unwrap();
        assert_eq!(parse_addr("127.0.0.1:9464"), Ok(ListenAddr::Ip(ip)));
        let v6: SocketAddr = "[::1]:0".parse().unwrap();
        assert_eq!(parse_addr("[::1]:0"), Ok(ListenAddr::Ip(v6)));
        assert_eq!(parse_addr(":9464"), Ok(ListenAddr::Any(9464)));
        assert_eq!(
            parse_addr("localhost:9464"),
            Ok(ListenAddr::Host("localhost".into(), 9464))
        );
        for bad in [
            "localhost-9464",
            "9464",
            ":",
            ":99999",
            "::1:9464",
            "a b:1",
            "x:port",
        ] {
            let e = parse_addr(bad).unwrap_err().to_string();
            assert!(
                e.starts_with("--metrics ") && e.contains("127.0.0.1:9464"),
                "{e}"
            );
        }
    }

    /// client-go's parseRVForMetricsWithTruncation: the 15 least significant digits.
    #[test]
    fn store_resource_versions_keep_their_15_least_significant_digits() {
        assert_eq!(truncated_rv("52"), Some(52));
        assert_eq!(
            truncated_rv("1234567890123456789"),
            Some(567_890_123_456_789)
        );
        assert_eq!(truncated_rv(""), None);
        assert_eq!(truncated_rv("abc"), None);
        assert_eq!(truncated_rv("12é"), None);
    }

    /// The probe's histogram only with `--probe`.
    #[test]
    fn the_probe_histogram_is_registered_with_the_probe_only() {
        let without = Metrics::new(false).render().unwrap();
        assert!(
            !without.contains("informer_probe_latency_seconds"),
            "{without}"
        );
        let with = Metrics::new(true).render().unwrap();
        assert!(
            with.contains("# TYPE informer_probe_latency_seconds histogram"),
            "{with}"
        );
    }
}
