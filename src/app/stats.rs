//! `--stats`: counters over the records of a watch, printed as a summary on stderr at
//! exit. Counting happens where records are printed, so the summary describes exactly
//! the stream the user saw (plus deltas that --watch-only hid).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use crate::cache::queue::FifoStats;
use crate::cache::reflector::ReflectorEvent;
use crate::informer::record::{Body, Observation, Record};
use crate::informer::sink::Observer;
use crate::text::human_bytes;

#[derive(Debug)]
pub struct Stats {
    /// When the run began (before the contexts were started: connecting, discovery and a
    /// fleet's retries count): `elapsed` and `synced after` are counted from it.
    started: Instant,
    /// Deltas by type (Added, Updated, …).
    pub deltas: BTreeMap<&'static str, u64>,
    /// Handler calls by method (OnAdd, …), with `--view handlers`.
    pub handler_calls: BTreeMap<&'static str, u64>,
    /// Lists begun, by reason ("initial", or why a relist was needed).
    pub lists: BTreeMap<String, u64>,
    /// LISTs answered, their pages and items.
    pub paged_lists: u64,
    pub pages: u64,
    pub listed_items: u64,
    /// Their bodies' bytes as decoded and as read off the connection (less with gzip), by
    /// the encoding they came in (`json`, `protobuf+gzip`, …).
    pub listed_bytes: BTreeMap<String, (u64, u64)>,
    /// Resources read in JSON after a protobuf body kwatch could not decode.
    pub wire_fallbacks: u64,
    /// Streaming lists answered (they have no pages) and the objects they streamed.
    pub streamed_lists: u64,
    pub streamed_items: u64,
    pub watches: u64,
    pub bookmarks: u64,
    pub backoffs: u64,
    /// `--stall-after`: watches found stalled.
    pub stalls: u64,
    /// Requests the request layer sent again (Retry-After, lost connections).
    pub retries: u64,
    pub resyncs: u64,
    /// Relisted records of relists (a resync's, counted in `resyncs`, are not), and the
    /// keys of each class over all of them: added, deleted, changed, recreated, unchanged.
    pub relisted: u64,
    /// TimeTravel records: a list or watch older than what the reflector had synced.
    pub time_travels: u64,
    /// OpaqueResourceVersion records: resources whose resourceVersions are not integers.
    pub opaque_rvs: u64,
    pub relisted_classes: [u64; 5],
    /// `--check-consistency` reports: all, those that found a difference, those that
    /// could not compare (compacted, or the list failed).
    pub consistency_checks: u64,
    pub inconsistent: u64,
    pub unchecked: u64,
    /// `--probe`'s write-to-delta latencies, one per Latency record, over the run.
    pub latencies: Vec<Duration>,
    /// `--freshness`: the store's lag at each sample, over the run.
    pub lags: Vec<Duration>,
    /// `--freshness`: times the lag reached `--stale-after`.
    pub stale: u64,
    /// `--cache-stats` reports printed.
    pub cache_reports: u64,
    /// Time from the run's start to the last resource's Synced.
    pub synced_after: Option<Duration>,
    synced: usize,
    /// The informer, as List records name it: `--client-go`'s release, and the queue.
    pub informer: Option<(Option<String>, String)>,
    /// `--blame`: changed paths of the deltas, by the manager that owns them (`unowned`).
    blame: bool,
    /// `--record URL`: the database recorder's counters.
    recorder: Option<std::sync::Arc<crate::app::record::status::Status>>,
    pub blamed: BTreeMap<String, u64>,
    /// `Conflict` records: managers fighting over a field.
    pub conflicts: u64,
    /// Each resource's watch health, by resource name (`context/name` with several
    /// contexts): an entry from the resource's first list or watch on, so that a watch
    /// that never delivered anything has its line too.
    pub health: BTreeMap<String, WatchHealth>,
}

/// What a resource's watches have delivered lately: the `--stats` summary's watch health.
#[derive(Debug, Default, Clone, Copy)]
pub struct WatchHealth {
    /// The last delta of a watch event (Added, Updated, Deleted after the sync).
    pub last_event: Option<Instant>,
    pub last_bookmark: Option<Instant>,
    /// The time between the last two bookmarks: the rhythm the server has shown
    /// (kube-apiserver: about a minute when asked).
    pub bookmark_interval: Option<Duration>,
}

impl Default for Stats {
    fn default() -> Self {
        Stats::new()
    }
}

impl Stats {
    /// Counts from now.
    pub fn new() -> Stats {
        Stats::since(Instant::now())
    }

    /// Counts from `started`, the run's start.
    pub fn since(started: Instant) -> Stats {
        Stats {
            started,
            deltas: BTreeMap::new(),
            handler_calls: BTreeMap::new(),
            lists: BTreeMap::new(),
            paged_lists: 0,
            pages: 0,
            listed_items: 0,
            listed_bytes: BTreeMap::new(),
            wire_fallbacks: 0,
            streamed_lists: 0,
            streamed_items: 0,
            watches: 0,
            bookmarks: 0,
            backoffs: 0,
            stalls: 0,
            retries: 0,
            resyncs: 0,
            relisted: 0,
            time_travels: 0,
            opaque_rvs: 0,
            relisted_classes: [0; 5],
            consistency_checks: 0,
            inconsistent: 0,
            unchecked: 0,
            latencies: Vec::new(),
            lags: Vec::new(),
            stale: 0,
            cache_reports: 0,
            synced_after: None,
            synced: 0,
            informer: None,
            blame: false,
            recorder: None,
            blamed: BTreeMap::new(),
            conflicts: 0,
            health: BTreeMap::new(),
        }
    }

    /// Counts the blamed changes of deltas by manager too (`--blame`).
    pub fn blaming(mut self, on: bool) -> Stats {
        self.blame = on;
        self
    }

    /// `--record URL`: the database recorder's counters, a line of the summary.
    pub fn recording(
        mut self,
        status: Option<std::sync::Arc<crate::app::record::status::Status>>,
    ) -> Stats {
        self.recorder = status;
        self
    }

    /// Counts one record; `targets`: how many resources (and contexts) are watched, so
    /// that time to synced is that of the last one. Printed or hidden alike.
    pub fn observe(&mut self, rec: &Record<'_>, targets: usize) {
        self.observe_health(rec);
        match &rec.body {
            Body::Delta { delta, .. } => {
                *self.deltas.entry(delta.kind.as_str()).or_default() += 1;
                for b in rec.blame(self.blame).into_iter().flatten() {
                    let who = b.manager.as_deref().unwrap_or("unowned");
                    *self.blamed.entry(who.to_owned()).or_default() += 1;
                }
            }
            Body::Handler { call, .. } => *self.handler_calls.entry(call.name()).or_default() += 1,
            Body::Synced => {
                self.synced += 1;
                if self.synced == targets {
                    self.synced_after = Some(self.started.elapsed());
                }
            }
            Body::Event(e) => match e {
                ReflectorEvent::List { reason, .. } => {
                    *self.lists.entry(reason.clone()).or_default() += 1;
                    if let (None, Some(q)) = (&self.informer, rec.informer.queue) {
                        let release = rec.informer.client_go.map(str::to_owned);
                        self.informer = Some((release, q.to_owned()));
                    }
                }
                ReflectorEvent::Listed {
                    items,
                    streaming: true,
                    ..
                } => {
                    self.streamed_lists += 1;
                    self.streamed_items += *items as u64;
                }
                ReflectorEvent::Listed {
                    pages,
                    items,
                    encoding,
                    bytes,
                    wire_bytes,
                    ..
                } => {
                    self.paged_lists += 1;
                    self.pages += u64::from(*pages);
                    self.listed_items += *items as u64;
                    let encoding = encoding.as_deref().unwrap_or("json");
                    let sums = self.listed_bytes.entry(encoding.to_owned()).or_default();
                    sums.0 += bytes.unwrap_or(0);
                    sums.1 += wire_bytes.unwrap_or(0);
                }
                ReflectorEvent::WireFallback { .. } => self.wire_fallbacks += 1,
                ReflectorEvent::Watch { .. } => self.watches += 1,
                ReflectorEvent::Bookmark { .. } => self.bookmarks += 1,
                ReflectorEvent::Backoff { .. } => self.backoffs += 1,
                ReflectorEvent::Stalled { .. } => self.stalls += 1,
                ReflectorEvent::Retry(_) => self.retries += 1,
                ReflectorEvent::Resync => self.resyncs += 1,
                ReflectorEvent::TimeTravel { .. } => self.time_travels += 1,
                ReflectorEvent::OpaqueResourceVersion { .. } => self.opaque_rvs += 1,
                // Said on its own `~` line (and record) when it happens.
                ReflectorEvent::Protocol { .. } => {}
                ReflectorEvent::Relisted { resync: true, .. } => {}
                ReflectorEvent::Relisted { .. } => {
                    self.relisted += 1;
                    let classes = e.relisted_classes().into_iter().flatten();
                    for (n, (_, k)) in self.relisted_classes.iter_mut().zip(classes) {
                        *n += k.count;
                    }
                }
                ReflectorEvent::WatchEnded { .. } | ReflectorEvent::WatchListFallback { .. } => {}
            },
            Body::Observed(o) => match o {
                Observation::CacheStats(_) => self.cache_reports += 1,
                Observation::Consistency(r) => {
                    self.consistency_checks += 1;
                    match r.consistent {
                        Some(true) => {}
                        Some(false) => self.inconsistent += 1,
                        None => self.unchecked += 1,
                    }
                }
                Observation::Latency(p) => self.latencies.push(p.latency),
                Observation::Freshness(f) => self.lags.push(f.lag),
                Observation::Stale(_) => self.stale += 1,
                Observation::Conflict(_) => self.conflicts += 1,
            },
        }
    }

    fn observe_health(&mut self, rec: &Record<'_>) {
        enum Heard {
            Nothing,
            Event,
            Bookmark,
        }
        let heard = match &rec.body {
            Body::Delta {
                delta,
                initial_list: false,
                ..
            } if matches!(delta.kind.as_str(), "Added" | "Updated" | "Deleted") => Heard::Event,
            Body::Event(ReflectorEvent::Bookmark { .. }) => Heard::Bookmark,
            Body::Event(ReflectorEvent::List { .. } | ReflectorEvent::Watch { .. }) => {
                Heard::Nothing
            }
            _ => return,
        };
        let name = match rec.context {
            Some(c) => format!("{c}/{}", rec.resource.name),
            None => rec.resource.name.clone(),
        };
        let h = self.health.entry(name).or_default();
        let now = Instant::now();
        match heard {
            Heard::Nothing => {}
            Heard::Event => h.last_event = Some(now),
            Heard::Bookmark => {
                if let Some(prev) = h.last_bookmark.replace(now) {
                    h.bookmark_interval = Some(now - prev);
                }
            }
        }
    }

    /// The summary, several `name: value` lines; `fifo`: each queue's counters by
    /// resource name.
    pub fn render(&self, fifo: &[(String, FifoStats)]) -> String {
        let mut s = String::from("kwatch stats\n");
        let _ = writeln!(s, "  deltas: {}", tally(&self.deltas));
        if !self.handler_calls.is_empty() {
            let _ = writeln!(s, "  handler calls: {}", tally(&self.handler_calls));
        }
        if self.blame {
            let _ = writeln!(s, "  blamed changes: {}", tally(&self.blamed));
            let _ = writeln!(s, "  conflicts: {}", self.conflicts);
        }
        self.write_lists(&mut s);
        let _ = writeln!(
            s,
            "  watches: {}, bookmarks: {}, retries: {}, backoffs: {}, resyncs: {}",
            self.watches, self.bookmarks, self.retries, self.backoffs, self.resyncs
        );
        if self.time_travels > 0 {
            let _ = writeln!(s, "  time travels: {}", self.time_travels);
        }
        if self.opaque_rvs > 0 {
            let _ = writeln!(
                s,
                "  opaque resourceVersions: {} (time travel not looked for)",
                self.opaque_rvs
            );
        }
        if self.relisted > 0 {
            let [a, d, c, r, u] = self.relisted_classes;
            let _ = writeln!(
                s,
                "  relisted: {} (added {a}, deleted {d}, changed {c}, recreated {r}, unchanged {u})",
                self.relisted
            );
        }
        if self.stalls > 0 {
            let _ = writeln!(s, "  stalled watches: {}", self.stalls);
        }
        if self.consistency_checks > 0 {
            let _ = writeln!(
                s,
                "  consistency checks: {} ({} inconsistent, {} not made)",
                self.consistency_checks, self.inconsistent, self.unchecked
            );
        }
        if let Some(line) = latency_summary(&self.latencies, "writes") {
            let _ = writeln!(s, "  probe latency: {line}");
        }
        if let Some(line) = latency_summary(&self.lags, "samples") {
            let _ = writeln!(s, "  store lag: {line}; stale {} times", self.stale);
        }
        match self.synced_after {
            Some(d) => {
                let _ = writeln!(s, "  synced after: {}ms", d.as_millis());
            }
            None => s.push_str("  synced after: not synced\n"),
        }
        match &self.informer {
            Some((Some(release), queue)) => {
                let _ = writeln!(s, "  informer: client-go {release}, {queue}");
            }
            Some((None, queue)) => {
                let _ = writeln!(s, "  informer: {queue}");
            }
            None => {}
        }
        self.write_health(&mut s);
        for (name, f) in fifo {
            let _ = match f.real {
                Some(r) => writeln!(
                    s,
                    "  queue {name}: max depth {}, queued {}, popped {}, batches {}",
                    f.max_depth, r.queued, r.popped, r.batches
                ),
                None => writeln!(
                    s,
                    "  queue {name}: max depth {}, coalesced {}, dedups {}",
                    f.max_depth, f.coalesced, f.dedups
                ),
            };
        }
        if let Some(r) = &self.recorder {
            let _ = writeln!(s, "  {}", r.line());
        }
        let _ = write!(
            s,
            "  elapsed: {}ms (wall time since the run began)",
            self.started.elapsed().as_millis()
        );
        s
    }

    /// The lists line: lists and relists, pages or streamed objects, each relist's reason.
    fn write_lists(&self, s: &mut String) {
        let relists: u64 = self
            .lists
            .iter()
            .filter(|(r, _)| r.as_str() != "initial")
            .map(|(_, n)| n)
            .sum();
        // A streaming list has no pages: its objects are counted apart.
        let mut answered = Vec::new();
        if self.paged_lists > 0 || self.streamed_lists == 0 {
            answered.push(format!("{} pages, {} items", self.pages, self.listed_items));
        }
        if self.streamed_lists > 0 {
            answered.push(format!(
                "{} streamed, {} objects",
                self.streamed_lists, self.streamed_items
            ));
        }
        let _ = writeln!(
            s,
            "  lists: {} ({relists} relists), {}",
            self.lists.values().sum::<u64>(),
            answered.join("; ")
        );
        for (reason, n) in self.lists.iter().filter(|(r, _)| r.as_str() != "initial") {
            let _ = writeln!(s, "    relist ×{n}: {reason}");
        }
        if self.paged_lists > 0 {
            let sum = |at: fn(&(u64, u64)) -> u64| self.listed_bytes.values().map(at).sum();
            let (bytes, read) = (human_bytes(sum(|b| b.0)), human_bytes(sum(|b| b.1)));
            let by_encoding: Vec<String> = self
                .listed_bytes
                .iter()
                .map(|(e, (_, read))| format!("{e} {}", human_bytes(*read)))
                .collect();
            let _ = writeln!(
                s,
                "  listed bytes: {bytes} decoded, {read} read off the connection ({})",
                by_encoding.join(", ")
            );
        }
        if self.wire_fallbacks > 0 {
            let _ = writeln!(
                s,
                "  protobuf fallbacks: {} (resources read in JSON from then on)",
                self.wire_fallbacks
            );
        }
    }

    /// One line per resource: when its watch last heard an event and a bookmark.
    fn write_health(&self, s: &mut String) {
        for (name, h) in &self.health {
            let ago = |t: Option<Instant>| match t {
                Some(t) => format!("{} ago", seconds(t.elapsed())),
                None => "never".to_owned(),
            };
            let interval = h
                .bookmark_interval
                .map_or("not shown yet".to_owned(), seconds);
            let _ = writeln!(
                s,
                "  watch health {name}: last event {}, last bookmark {}, bookmark interval {interval}",
                ago(h.last_event),
                ago(h.last_bookmark)
            );
        }
    }
}

/// `p50 …, p90 …, p99 …, max … over N writes` of `--probe`'s latencies, or `… over N
/// samples` of `--freshness`'s lags (nearest-rank percentiles), in milliseconds; `None`
/// when none was measured.
fn latency_summary(latencies: &[Duration], what: &str) -> Option<String> {
    let mut sorted = latencies.to_vec();
    sorted.sort_unstable();
    let max = *sorted.last()?;
    let rank = |p: usize| sorted[(p * sorted.len()).div_ceil(100).max(1) - 1];
    let ms = |d: Duration| format!("{:.1}ms", d.as_secs_f64() * 1000.0);
    Some(format!(
        "p50 {}, p90 {}, p99 {}, max {} over {} {what}",
        ms(rank(50)),
        ms(rank(90)),
        ms(rank(99)),
        ms(max),
        sorted.len()
    ))
}

/// A duration to a tenth of a second under two minutes, else as kubectl's ages.
fn seconds(d: Duration) -> String {
    if d < Duration::from_secs(120) {
        format!("{:.1}s", d.as_secs_f64())
    } else {
        crate::text::human_duration(d)
    }
}

/// `total (name count, ...)`: the counts' sum, then each count by name in name order.
/// `total (a 1, b 2)`; a bare `0` when nothing was counted.
fn tally<K: std::fmt::Display>(counts: &BTreeMap<K, u64>) -> String {
    let total: u64 = counts.values().sum();
    if counts.is_empty() {
        return total.to_string();
    }
    let each: Vec<String> = counts.iter().map(|(k, v)| format!("{k} {v}")).collect();
    format!("{total} ({})", each.join(", "))
}

/// `--stats` counts every record, printed or hidden by a filter.
impl Observer for Stats {
    fn record(&mut self, rec: &Record<'_>, _shown: bool, targets: usize) {
        self.observe(rec, targets);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::cache::queue::RealFifoCounts;
    use crate::client::target::Resource;

    fn listed(items: usize, pages: u32, streaming: bool) -> ReflectorEvent {
        ReflectorEvent::Listed {
            resource_version: "9".into(),
            items,
            pages,
            elapsed: Duration::ZERO,
            full_list_fallback: false,
            streaming,
            encoding: Some("json+gzip".into()),
            bytes: (!streaming).then_some(items as u64 * 1000),
            wire_bytes: (!streaming).then_some(items as u64 * 100),
        }
    }

    /// elapsed is the run's wall time, counted from the start given (the run's, before
    /// its contexts started), and says so.
    #[test]
    fn elapsed_counts_from_the_runs_start() {
        let started = Instant::now().checked_sub(Duration::from_secs(3)).unwrap();
        let text = Stats::since(started).render(&[]);
        let ms: u128 = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("elapsed: "))
            .and_then(|l| l.split("ms").next())
            .and_then(|n| n.parse().ok())
            .unwrap();
        assert!(ms >= 3000, "{text}");
        assert!(
            text.ends_with("ms (wall time since the run began)"),
            "{text}"
        );
    }

    fn observe(s: &mut Stats, e: &ReflectorEvent) {
        let r = Resource::pods();
        s.observe(
            &Record::new(
                &r,
                None,
                "2026-11-23T10:00:00Z".parse().unwrap(),
                Body::Event(e),
            ),
            1,
        );
    }

    /// A run that saw no delta says `deltas: 0`, with no empty list of types after it;
    /// so does `--blame`'s count of blamed changes.
    #[test]
    fn no_deltas_is_a_bare_zero() {
        let s = Stats::new().blaming(true);
        assert_eq!(shown(&s, "deltas:"), "deltas: 0");
        assert_eq!(shown(&s, "blamed changes:"), "blamed changes: 0");
        let mut s = Stats::new();
        let r = Resource::pods();
        let o = crate::cache::testutil::meta_object("ns", "a", "1");
        let d = crate::cache::delta::Delta::new(crate::cache::delta::DeltaType::Added, o);
        let body = Body::Delta {
            key: "ns/a",
            delta: &d,
            initial_list: false,
            prev: None,
        };
        s.observe(&Record::new(&r, None, jiff::Timestamp::UNIX_EPOCH, body), 1);
        assert_eq!(shown(&s, "deltas:"), "deltas: 1 (Added 1)");
    }

    /// The line of `s`'s rendering that starts with `start`.
    fn shown(s: &Stats, start: &str) -> String {
        line(&s.render(&[]), start).to_owned()
    }

    fn line<'a>(text: &'a str, start: &str) -> &'a str {
        text.lines()
            .find(|l| l.trim_start().starts_with(start))
            .unwrap_or_else(|| panic!("no {start:?} line in {text}"))
            .trim_start()
    }

    /// The watch health of each resource, and the stalls.
    #[test]
    fn watch_health_says_when_each_resource_last_heard_from_its_watch() {
        let mut s = Stats::new();
        assert!(!s.render(&[]).contains("watch health"));
        let bookmark = ReflectorEvent::Bookmark {
            resource_version: "9".into(),
        };
        observe(&mut s, &bookmark);
        assert_eq!(
            shown(&s, "watch health"),
            "watch health pods: last event never, last bookmark 0.0s ago, bookmark interval \
             not shown yet"
        );
        observe(&mut s, &bookmark);
        let text = s.render(&[]);
        assert!(
            line(&text, "watch health").ends_with("bookmark interval 0.0s"),
            "{text}"
        );
        assert!(!text.contains("stalled watches"));
        let stalled = ReflectorEvent::Stalled {
            silent: Duration::from_secs(30),
            watch_age: Duration::from_secs(40),
            resource_version: "9".into(),
            restart: false,
        };
        observe(&mut s, &stalled);
        assert_eq!(shown(&s, "stalled watches:"), "stalled watches: 1");
    }

    /// A resource whose watch delivered nothing before `--timeout` has
    /// its watch health line all the same.
    #[test]
    fn a_watch_that_delivered_nothing_has_its_watch_health_line() {
        let mut s = Stats::new();
        observe(&mut s, &ReflectorEvent::list("0", 500, "initial", false));
        observe(&mut s, &listed(0, 1, false));
        let watch = ReflectorEvent::Watch {
            resource_version: "9".into(),
            timeout_seconds: 300,
        };
        observe(&mut s, &watch);
        assert_eq!(
            shown(&s, "watch health"),
            "watch health pods: last event never, last bookmark never, bookmark interval \
             not shown yet"
        );
    }

    /// `relisted:` counts relists, as `lists:` does; a resync's
    /// `Relisted` record is counted in `resyncs` alone.
    #[test]
    fn relisted_counts_relists_not_resyncs() {
        let mut s = Stats::new();
        let list = |reason: &str| ReflectorEvent::list("9", 500, reason, false);
        observe(&mut s, &list("initial"));
        observe(&mut s, &ReflectorEvent::Resync);
        observe(&mut s, &ReflectorEvent::relisted("", true));
        observe(&mut s, &ReflectorEvent::Resync);
        observe(&mut s, &ReflectorEvent::relisted("", true));
        let text = s.render(&[]);
        assert_eq!(
            line(&text, "lists:"),
            "lists: 1 (0 relists), 0 pages, 0 items"
        );
        assert!(line(&text, "watches:").ends_with("resyncs: 2"), "{text}");
        assert!(!text.contains("relisted"), "{text}");
        observe(&mut s, &list("410 Expired: too old resource version"));
        observe(&mut s, &ReflectorEvent::relisted("12", false));
        assert_eq!(
            shown(&s, "lists:"),
            "lists: 2 (1 relists), 0 pages, 0 items"
        );
        assert_eq!(
            shown(&s, "relisted:"),
            "relisted: 1 (added 0, deleted 0, changed 0, recreated 0, unchanged 0)"
        );
    }

    #[test]
    fn probe_latencies_summarize_as_nearest_rank_percentiles() {
        let mut s = Stats::new();
        assert!(!s.render(&[]).contains("probe latency"));
        for ms in (1..=100).rev() {
            let o = Observation::Latency(crate::informer::freshness::Latency {
                probe: "default/kwatch-probe-x".into(),
                seq: ms,
                sent: "2026-11-23T10:00:00.000000001Z".into(),
                latency: Duration::from_micros(ms * 1000 + 500),
            });
            let r = Resource::pods();
            let at = "2026-11-23T10:00:00Z".parse().unwrap();
            s.observe(&Record::new(&r, None, at, Body::Observed(&o)), 1);
        }
        assert_eq!(
            shown(&s, "probe latency:"),
            "probe latency: p50 50.5ms, p90 90.5ms, p99 99.5ms, max 100.5ms over 100 writes"
        );
    }

    #[test]
    fn streaming_lists_count_objects_not_pages() {
        let mut s = Stats::new();
        observe(&mut s, &listed(10001, 1, true));
        assert_eq!(
            shown(&s, "lists:"),
            "lists: 0 (0 relists), 1 streamed, 10001 objects"
        );
        observe(&mut s, &listed(500, 2, false));
        assert_eq!(
            shown(&s, "lists:"),
            "lists: 0 (0 relists), 2 pages, 500 items; 1 streamed, 10001 objects"
        );
        // A LIST's bytes, as decoded and as read (gzip); a streaming
        // list's come over a watch and are not among them.
        observe(&mut s, &listed(1500, 3, false));
        assert_eq!(
            shown(&s, "listed bytes:"),
            "listed bytes: 2.00 MB decoded, 200 kB read off the connection (json+gzip 200 kB)"
        );
        // Summed by the encoding each list came in; a protobuf fallback counted.
        let mut protobuf = listed(10, 1, false);
        if let ReflectorEvent::Listed { encoding, .. } = &mut protobuf {
            *encoding = Some("protobuf".into());
        }
        observe(&mut s, &protobuf);
        assert_eq!(
            shown(&s, "listed bytes:"),
            "listed bytes: 2.01 MB decoded, 201 kB read off the connection (json+gzip 200 kB, protobuf 1.00 kB)"
        );
        assert!(!s.render(&[]).contains("protobuf fallbacks"));
        observe(
            &mut s,
            &ReflectorEvent::WireFallback {
                error: "protobuf: field 99".into(),
            },
        );
        assert_eq!(
            shown(&s, "protobuf fallbacks:"),
            "protobuf fallbacks: 1 (resources read in JSON from then on)"
        );
        let paged_only = Stats::new();
        assert_eq!(
            line(&paged_only.render(&[]), "lists:"),
            "lists: 0 (0 relists), 0 pages, 0 items"
        );
    }

    #[test]
    fn a_real_fifo_gets_a_queue_line_of_its_own_counters() {
        let real = FifoStats {
            max_depth: 4,
            real: Some(RealFifoCounts {
                queued: 12,
                popped: 11,
                batches: 3,
            }),
            ..FifoStats::default()
        };
        let delta = FifoStats {
            max_depth: 2,
            coalesced: 1,
            ..FifoStats::default()
        };
        let text = Stats::new().render(&[("pods".into(), real), ("cm".into(), delta)]);
        assert_eq!(
            line(&text, "queue pods"),
            "queue pods: max depth 4, queued 12, popped 11, batches 3"
        );
        assert_eq!(
            line(&text, "queue cm"),
            "queue cm: max depth 2, coalesced 1, dedups 0"
        );
    }
}
