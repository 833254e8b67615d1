//! `--live` (issue 23): the informer's cache as a table that changes in place. This is the
//! output layer's half: [`LivePrinter`], one more [`Printer`] behind the informer loop,
//! updates a [`Model`] held behind a mutex (never the screen: the informer must not block
//! on it), and [`view`] draws the model into any ratatui `Backend`. The terminal, keys
//! and the render loop (at most ~30 frames/s) live in src/app/live.rs.
//!
//! Rows reuse the table's cells ([`super::table::TablePrinter::live_cells`]: kubectl's
//! columns, CRD printer columns, server Table rows, `-L`, `--show-labels`, `-o wide`,
//! KIND and CONTEXT columns), so both show the same thing.

pub mod view;

use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};

use jiff::Timestamp;
use serde::Deserialize;

use super::table::{event_text, TablePrinter};
use super::{diff, Body, Options, Printer, Record};
use crate::cache::handlers::HandlerCall;
use crate::cache::object::ObjectRef;
use crate::cache::reflector::ReflectorEvent;

/// Versions of each object kept for its history screen (the oldest go first).
pub const HISTORY: usize = 32;
/// `~` lines kept for the event pane.
pub const EVENTS: usize = 200;
/// How long a changed cell stays highlighted, and a deleted row stays (dimmed).
pub const FADE_SECS: i64 = 3;
pub const GONE_SECS: i64 = 5;

/// A row's identity: the resource's place in `--resources` order, the resource, the
/// context and the object's key (`namespace/name`): rows sort in kubectl's order.
pub type RowKey = (usize, String, Option<String>, String);

/// What a row remembers of one delta or handler call (its history screen).
#[derive(Debug, Clone)]
pub struct Version {
    pub time: Timestamp,
    /// The delta type or the handler call (`--view handlers`).
    pub what: String,
    pub rv: String,
    /// `--diff`'s `path: old → new` lines against the version before.
    pub diff: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Row {
    /// The table's header line for this row's layout, and its cells (escaped).
    pub headers: Vec<String>,
    pub cells: Vec<String>,
    /// When each cell last changed (`None`: since the row was added).
    pub changed: Vec<Option<Timestamp>>,
    pub added: Timestamp,
    /// When the object was deleted: the row stays dimmed [`GONE_SECS`], then leaves.
    pub deleted: Option<Timestamp>,
    pub labels: BTreeMap<String, String>,
    pub object: Option<ObjectRef>,
    pub history: VecDeque<Version>,
}

/// The reflector's state as the header shows it.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum State {
    #[default]
    Starting,
    Listing,
    Watching(Timestamp),
    BackingOff(Timestamp),
    Retrying(u32, u32),
}

/// Per resource and context: what the header line says.
#[derive(Debug, Clone, Default)]
pub struct Header {
    pub client_go: Option<String>,
    pub queue: Option<String>,
    pub state: State,
    pub synced: bool,
    /// The resourceVersion of the last list or bookmark.
    pub rv: String,
    pub last_event: Option<Timestamp>,
    pub last_bookmark: Option<Timestamp>,
    pub relists: u64,
    pub retries: u64,
    pub backoffs: u64,
    pub deltas: u64,
    /// Deltas per second: (second, count) of the current and the previous second.
    pub rate: (i64, u64, u64),
}

/// Everything the screen shows; cloned when the screen is paused.
#[derive(Debug, Clone, Default)]
pub struct Model {
    pub rows: BTreeMap<RowKey, Row>,
    pub headers: BTreeMap<(Option<String>, String), Header>,
    /// The event pane's lines, newest last.
    pub events: VecDeque<String>,
    /// Deltas and handler calls seen, for "N changes while paused".
    pub changes: u64,
    /// Resources that are told apart by a KIND column.
    pub multi: bool,
}

impl Model {
    /// Drops rows deleted more than [`GONE_SECS`] before `now`.
    pub fn prune(&mut self, now: Timestamp) {
        self.rows.retain(|_, r| {
            r.deleted
                .is_none_or(|d| (now - d).get_seconds() < GONE_SECS)
        });
    }
}

/// The model shared between the printer and the render loop.
pub type Shared = Arc<Mutex<Model>>;

/// Locks the model; a panicked holder leaves it usable (it only holds display state).
pub fn lock(m: &Shared) -> MutexGuard<'_, Model> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The printer behind `--live`: every record updates the model, nothing is written.
pub struct LivePrinter {
    cells: TablePrinter<io::Sink>,
    model: Shared,
    order: Vec<String>,
    history: usize,
}

#[derive(Deserialize, Default)]
struct LabelsOnly {
    #[serde(default)]
    metadata: LabelsMeta,
}

#[derive(Deserialize, Default)]
struct LabelsMeta {
    #[serde(default)]
    labels: BTreeMap<String, String>,
}

fn labels_of(o: &ObjectRef) -> BTreeMap<String, String> {
    serde_json::from_str::<LabelsOnly>(o.raw())
        .map(|l| l.metadata.labels)
        .unwrap_or_default()
}

impl LivePrinter {
    pub fn new(mut opts: Options, model: Shared) -> LivePrinter {
        opts.timestamps = false;
        opts.no_headers = false;
        let order = opts.order.clone();
        lock(&model).multi = opts.multi;
        LivePrinter {
            cells: TablePrinter::new(opts, io::sink(), Box::new(io::sink())),
            model,
            order,
            history: HISTORY,
        }
    }

    fn row_key(&self, rec: &Record<'_>, key: &str) -> RowKey {
        let rank = self
            .order
            .iter()
            .position(|n| *n == rec.resource.name)
            .unwrap_or(usize::MAX);
        (
            rank,
            rec.resource.name.clone(),
            rec.context.map(str::to_owned),
            key.to_owned(),
        )
    }

    fn event(m: &mut Model, name: &str, rec: &Record<'_>, e: &ReflectorEvent) {
        let h = header(m, rec);
        h.last_event = Some(rec.time);
        match e {
            ReflectorEvent::List { reason, .. } => {
                h.state = State::Listing;
                if reason != "initial" {
                    h.relists += 1;
                }
            }
            ReflectorEvent::Listed {
                resource_version, ..
            } => h.rv.clone_from(resource_version),
            ReflectorEvent::Watch { .. } => h.state = State::Watching(rec.time),
            ReflectorEvent::Bookmark { resource_version } => {
                h.rv.clone_from(resource_version);
                h.last_bookmark = Some(rec.time);
            }
            ReflectorEvent::Backoff { delay, .. } => {
                h.backoffs += 1;
                let until = rec
                    .time
                    .checked_add(jiff::SignedDuration::try_from(*delay).unwrap_or_default())
                    .unwrap_or(rec.time);
                h.state = State::BackingOff(until);
            }
            ReflectorEvent::Retry(r) => {
                h.retries += 1;
                h.state = State::Retrying(r.attempt, r.max_retries);
            }
            _ => {}
        }
        if let Some(t) = event_text(name, e) {
            push_event(m, rec.time, &t);
        }
    }

    fn delta(
        &mut self,
        rec: &Record<'_>,
        key: &str,
        delta: &crate::cache::delta::Delta,
        prev: Option<&ObjectRef>,
    ) {
        let (headers, cells) = self.cells.live_cells(rec, key, delta);
        let rk = self.row_key(rec, key);
        let obj = delta.object.object();
        let diff = diff::compute(diff::DiffMode::On, delta.kind, prev, obj)
            .map(|d| diff::lines(&d))
            .unwrap_or_default();
        let version = Version {
            time: rec.time,
            what: delta.kind.as_str().to_owned(),
            rv: obj
                .map(|o| o.resource_version().to_owned())
                .unwrap_or_default(),
            diff,
        };
        let deleted = delta.kind == crate::cache::delta::DeltaType::Deleted;
        let history = self.history;
        let mut m = lock(&self.model);
        m.changes += 1;
        let h = header(&mut m, rec);
        h.deltas += 1;
        let sec = rec.time.as_second();
        if h.rate.0 == sec {
            h.rate.2 += 1;
        } else {
            h.rate = (sec, if sec - h.rate.0 == 1 { h.rate.2 } else { 0 }, 1);
        }
        let row = m.rows.entry(rk).or_insert_with(|| Row {
            headers: headers.clone(),
            cells: Vec::new(),
            changed: Vec::new(),
            added: rec.time,
            deleted: None,
            labels: BTreeMap::new(),
            object: None,
            history: VecDeque::new(),
        });
        if row.deleted.is_some() && !deleted {
            // Back after a delete: a new row.
            row.added = rec.time;
            row.cells.clear();
        }
        let fresh = row.cells.is_empty() || row.headers != headers;
        row.changed = if fresh {
            vec![None; cells.len()]
        } else {
            cells
                .iter()
                .enumerate()
                .map(|(i, c)| match row.cells.get(i) {
                    Some(old) if old == c => row.changed.get(i).copied().flatten(),
                    _ => Some(rec.time),
                })
                .collect()
        };
        row.headers = headers;
        row.cells = cells;
        row.deleted = deleted.then_some(rec.time);
        if let Some(o) = obj {
            row.labels = labels_of(o);
            row.object = Some(o.clone());
        }
        row.history.push_back(version);
        while row.history.len() > history {
            row.history.pop_front();
        }
    }

    fn handler(&mut self, rec: &Record<'_>, key: &str, call: &HandlerCall) {
        let rk = self.row_key(rec, key);
        let diff = super::record_diff(rec, diff::DiffMode::On)
            .map(|d| diff::lines(&d))
            .unwrap_or_default();
        let mut m = lock(&self.model);
        if let Some(row) = m.rows.get_mut(&rk) {
            row.history.push_back(Version {
                time: rec.time,
                what: call.name().to_owned(),
                rv: call
                    .object()
                    .map(|o| o.resource_version().to_owned())
                    .unwrap_or_default(),
                diff,
            });
            while row.history.len() > self.history {
                row.history.pop_front();
            }
        }
    }
}

fn header<'m>(m: &'m mut Model, rec: &Record<'_>) -> &'m mut Header {
    let h = m
        .headers
        .entry((rec.context.map(str::to_owned), rec.resource.name.clone()))
        .or_default();
    if let Some(r) = rec.informer.client_go {
        h.client_go = Some(r.to_owned());
    }
    if let Some(q) = rec.informer.queue {
        h.queue = Some(q.to_owned());
    }
    h
}

fn push_event(m: &mut Model, t: Timestamp, text: &str) {
    let line = format!("{} {}", t.strftime("%H:%M:%S"), crate::text::sanitize(text));
    m.events.push_back(line);
    while m.events.len() > EVENTS {
        m.events.pop_front();
    }
}

impl Printer for LivePrinter {
    fn print(&mut self, rec: &Record<'_>) -> io::Result<()> {
        let name = &match rec.context {
            Some(c) => format!("{} in {c}", rec.resource.name),
            None => rec.resource.name.clone(),
        };
        match &rec.body {
            Body::Event(e) => Self::event(&mut lock(&self.model), name, rec, e),
            Body::Synced => {
                let mut m = lock(&self.model);
                header(&mut m, rec).synced = true;
                push_event(&mut m, rec.time, &format!("synced {name}"));
            }
            Body::Delta {
                key, delta, prev, ..
            } => self.delta(rec, key, delta, *prev),
            Body::Handler { key, call, .. } => self.handler(rec, key, call),
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Rows of `m` the filter keeps, in the order asked: kubectl's (the model's) or by the
/// cells of column `sort` (a header name), reversed or not.
pub fn visible<'m>(
    m: &'m Model,
    filter: &str,
    sort: Option<&str>,
    reverse: bool,
) -> Vec<(&'m RowKey, &'m Row)> {
    let by_label = filter.split_once('=');
    let mut rows: Vec<_> = m
        .rows
        .iter()
        .filter(|(k, r)| {
            if filter.is_empty() {
                return true;
            }
            match by_label {
                Some((lk, lv)) => r.labels.get(lk).is_some_and(|v| v == lv),
                None => k.3.contains(filter),
            }
        })
        .collect();
    if let Some(col) = sort {
        rows.sort_by(|a, b| {
            let cell = |r: &Row| {
                r.headers
                    .iter()
                    .position(|h| h == col)
                    .and_then(|i| r.cells.get(i).cloned())
                    .unwrap_or_default()
            };
            cell(a.1).cmp(&cell(b.1))
        });
    }
    if reverse {
        rows.reverse();
    }
    rows
}
