//! `--stats`: counters over the records of a watch, printed as a summary on stderr at
//! exit. Counting happens where records are printed, so the summary describes exactly
//! the stream the user saw (plus deltas that --watch-only hid).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use crate::output::{Body, Record};
use crate::queue::FifoStats;
use crate::reflector::ReflectorEvent;

#[derive(Debug)]
pub struct Stats {
    started: Instant,
    /// Deltas by type (Added, Updated, …).
    pub deltas: BTreeMap<&'static str, u64>,
    /// Handler calls by method (OnAdd, …), with `--view handlers`.
    pub handler_calls: BTreeMap<&'static str, u64>,
    /// Lists begun, by reason ("initial", or why a relist was needed).
    pub lists: BTreeMap<String, u64>,
    pub pages: u64,
    pub listed_items: u64,
    pub watches: u64,
    pub bookmarks: u64,
    pub backoffs: u64,
    /// Requests the request layer sent again (Retry-After, lost connections).
    pub retries: u64,
    pub resyncs: u64,
    /// `--check-consistency` reports: all, those that found a difference, those that
    /// could not compare (compacted, or the list failed).
    pub consistency_checks: u64,
    pub inconsistent: u64,
    pub unchecked: u64,
    /// Time from start to the last resource's Synced.
    pub synced_after: Option<Duration>,
    synced: usize,
    /// The informer, as List records name it: `--client-go`'s release, and the queue.
    pub informer: Option<(Option<String>, String)>,
}

impl Default for Stats {
    fn default() -> Self {
        Stats::new()
    }
}

impl Stats {
    pub fn new() -> Stats {
        Stats {
            started: Instant::now(),
            deltas: BTreeMap::new(),
            handler_calls: BTreeMap::new(),
            lists: BTreeMap::new(),
            pages: 0,
            listed_items: 0,
            watches: 0,
            bookmarks: 0,
            backoffs: 0,
            retries: 0,
            resyncs: 0,
            consistency_checks: 0,
            inconsistent: 0,
            unchecked: 0,
            synced_after: None,
            synced: 0,
            informer: None,
        }
    }

    /// Counts one record; `targets`: how many resources (and contexts) are watched, so
    /// that time to synced is that of the last one.
    pub fn observe(&mut self, rec: &Record<'_>, targets: usize) {
        match &rec.body {
            Body::Delta { delta, .. } => *self.deltas.entry(delta.kind.as_str()).or_default() += 1,
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
                ReflectorEvent::Listed { pages, items, .. } => {
                    self.pages += u64::from(*pages);
                    self.listed_items += *items as u64;
                }
                ReflectorEvent::Watch { .. } => self.watches += 1,
                ReflectorEvent::Bookmark { .. } => self.bookmarks += 1,
                ReflectorEvent::Backoff { .. } => self.backoffs += 1,
                ReflectorEvent::Retry(_) => self.retries += 1,
                ReflectorEvent::Resync => self.resyncs += 1,
                ReflectorEvent::Consistency(r) => {
                    self.consistency_checks += 1;
                    match r.consistent {
                        Some(true) => {}
                        Some(false) => self.inconsistent += 1,
                        None => self.unchecked += 1,
                    }
                }
                ReflectorEvent::WatchEnded { .. } | ReflectorEvent::WatchListFallback { .. } => {}
            },
        }
    }

    /// The summary, several `name: value` lines; `fifo`: each queue's counters by
    /// resource name.
    pub fn render(&self, fifo: &[(String, FifoStats)]) -> String {
        let mut s = String::from("kwatch stats\n");
        let total: u64 = self.deltas.values().sum();
        let by_type: Vec<String> = self
            .deltas
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        let _ = writeln!(s, "  deltas: {total} ({})", by_type.join(", "));
        if !self.handler_calls.is_empty() {
            let total: u64 = self.handler_calls.values().sum();
            let by_name: Vec<String> = self
                .handler_calls
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect();
            let _ = writeln!(s, "  handler calls: {total} ({})", by_name.join(", "));
        }
        let relists: u64 = self
            .lists
            .iter()
            .filter(|(r, _)| r.as_str() != "initial")
            .map(|(_, n)| n)
            .sum();
        let _ = writeln!(
            s,
            "  lists: {} ({relists} relists), {} pages, {} items",
            self.lists.values().sum::<u64>(),
            self.pages,
            self.listed_items
        );
        for (reason, n) in self.lists.iter().filter(|(r, _)| r.as_str() != "initial") {
            let _ = writeln!(s, "    relist ×{n}: {reason}");
        }
        let _ = writeln!(
            s,
            "  watches: {}, bookmarks: {}, retries: {}, backoffs: {}, resyncs: {}",
            self.watches, self.bookmarks, self.retries, self.backoffs, self.resyncs
        );
        if self.consistency_checks > 0 {
            let _ = writeln!(
                s,
                "  consistency checks: {} ({} inconsistent, {} not made)",
                self.consistency_checks, self.inconsistent, self.unchecked
            );
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
        for (name, f) in fifo {
            let _ = writeln!(
                s,
                "  queue {name}: max depth {}, coalesced {}, dedups {}",
                f.max_depth, f.coalesced, f.dedups
            );
        }
        let _ = write!(s, "  elapsed: {}ms", self.started.elapsed().as_millis());
        s
    }
}
