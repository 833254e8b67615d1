//! The model of `--live` ([`Model`]: rows keyed by resource, context and key, a header per resource, the event ring) and [`LivePrinter`], which updates it.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};

use jiff::Timestamp;
use serde::Deserialize;

use crate::cache::delta::{Delta, DeltaType};
use crate::cache::handlers::HandlerCall;
use crate::cache::object::ObjectRef;
use crate::cache::reflector::ReflectorEvent;
use crate::client::target::Resource;
use crate::context::ContextName;
use crate::informer::diff;
use crate::informer::record::{Body, Observation, Record};
use crate::informer::sink::Sink;
use crate::output::options::Options;
use crate::output::table::{event_text, observation_text, TablePrinter};

/// Versions of each object kept for its history screen by default (`--live-history`;
/// the oldest go first).
pub const HISTORY: u32 = 32;
/// Bytes of objects all history screens together keep for their diffs: past it, the
/// oldest versions let their objects go (their diff then says so). Kept small: every
/// object kept is memory a flood's next objects cannot reuse.
pub const HISTORY_BYTES: usize = 16 << 20;
/// `~` lines kept for the event pane.
pub const EVENTS: usize = 200;
/// How long a changed cell stays highlighted, and a deleted row stays (dimmed).
pub const FADE_SECS: i64 = 3;
pub const GONE_SECS: i64 = 5;

/// A row's identity: the resource's place in `--resources` order, the resource, the
/// context and the object's key (`namespace/name`): rows sort in kubectl's order.
pub type RowKey = (usize, String, Option<ContextName>, String);

/// What a row remembers of one delta or handler call (its history screen).
#[derive(Debug, Clone)]
pub struct Version {
    pub time: Timestamp,
    /// The delta type or the handler call (`--view handlers`).
    pub what: &'static str,
    pub rv: String,
    change: Change,
    /// Its place in [`Model::kept`].
    seq: u64,
}

/// What a version changed.
#[derive(Debug, Clone)]
enum Change {
    /// A delta: its type and the objects before and after it, diffed when shown.
    Objects(DeltaType, Option<ObjectRef>, Option<ObjectRef>),
    /// A handler call's diff, made when it was called.
    Lines(Vec<String>),
    /// The objects were let go ([`HISTORY_BYTES`]).
    Dropped,
}

impl Version {
    /// `--diff`'s `path: old → new` lines against the version before.
    pub fn diff(&self) -> Vec<String> {
        match &self.change {
            Change::Objects(t, prev, cur) => {
                diff::compute(diff::DiffMode::On, *t, prev.as_ref(), cur.as_ref())
                    .map(|d| diff::lines(&d))
                    .unwrap_or_default()
            }
            Change::Lines(l) => l.clone(),
            Change::Dropped => vec![format!(
                "(diff not kept: the history keeps {} MiB of objects)",
                HISTORY_BYTES >> 20
            )],
        }
    }
}

/// A delta not yet made into cells, with what its row needs.
#[derive(Debug, Clone)]
struct Pending {
    time: Timestamp,
    resource: Arc<Resource>,
    context: Option<ContextName>,
    delta: Delta,
    /// The name cell's "(recreated)" (the object before it is not kept).
    recreated: bool,
    /// `--follow`, `--events`: its place in the tree (the NAME cell's indent).
    follow: Option<crate::informer::record::Followed>,
}

#[derive(Debug, Clone)]
pub struct Row {
    /// The table's header line for this row's layout, and its cells (escaped), as of
    /// the last delta made into cells ([`Model::refresh`]).
    pub headers: Vec<String>,
    pub cells: Vec<String>,
    /// When each cell last changed (`None`: since the row was added).
    pub changed: Vec<Option<Timestamp>>,
    pub added: Timestamp,
    /// When the object was deleted: the row stays dimmed [`GONE_SECS`], then leaves.
    pub deleted: Option<Timestamp>,
    /// The object's labels, read when a label filter first needs them.
    labels: Option<BTreeMap<String, String>>,
    pub object: Option<ObjectRef>,
    pub history: VecDeque<Version>,
    /// The latest delta not made into cells yet.
    pending: Option<Pending>,
    /// `--follow`, `--events`: the row's owner path (its key sorts by it): `c` collapses
    /// the rows under it.
    pub tree: Option<std::sync::Arc<str>>,
    /// The delta the cells were made from, and the second they were made at: cells
    /// that count from now (AGE, a pod's restarts "(5m ago)", a job's DURATION) are
    /// made again from it each second the row is shown.
    last: Option<Pending>,
    made: i64,
}

/// Makes a row's cells: the table printer (its layouts), shared by the printer and the
/// render loop.
#[derive(Clone)]
pub struct CellMaker(Arc<Mutex<TablePrinter<io::Sink>>>);

impl fmt::Debug for CellMaker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CellMaker")
    }
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
    /// The last watch event: a delta the watch brought (Added, Updated, Deleted) or a
    /// bookmark; never a list or a retry.
    pub last_event: Option<Timestamp>,
    pub last_bookmark: Option<Timestamp>,
    /// `--freshness`: the store's lag behind the server at the last sample.
    pub lag: Option<std::time::Duration>,
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
    pub headers: BTreeMap<(Option<ContextName>, String), Header>,
    /// The event pane's lines, newest last.
    pub events: VecDeque<String>,
    /// Deltas and handler calls seen, for "N changes while paused".
    pub changes: u64,
    /// Resources that are told apart by a KIND column.
    pub multi: bool,
    /// Versions each row's history keeps (`--live-history`).
    pub versions: usize,
    cells: Option<CellMaker>,
    /// Versions whose objects the histories keep, oldest first (row, seq, bytes), and
    /// their bytes: at most [`HISTORY_BYTES`].
    kept: VecDeque<(RowKey, u64, usize)>,
    kept_bytes: usize,
    seq: u64,
}

impl Model {
    /// Drops rows deleted more than [`GONE_SECS`] before `now`.
    pub fn prune(&mut self, now: Timestamp) {
        self.rows.retain(|_, r| {
            r.deleted
                .is_none_or(|d| (now - d).get_seconds() < GONE_SECS)
        });
    }

    /// Makes the cells of `keys`' rows as of `now`: from their pending deltas (a cell
    /// that differs from the row's last cells as of `now` is marked changed at its
    /// delta's time), else, once a second, again from their last delta (ages advance;
    /// nothing is marked changed).
    pub fn refresh<'k>(&mut self, keys: impl IntoIterator<Item = &'k RowKey>, now: Timestamp) {
        let Some(maker) = self.cells.clone() else {
            return;
        };
        let mut table = maker.0.lock().unwrap_or_else(|e| e.into_inner());
        let sec = now.as_second();
        for k in keys {
            let Some(row) = self.rows.get_mut(k) else {
                continue;
            };
            let stale = row.made != sec && !row.cells.is_empty();
            let Some(p) = row.pending.take() else {
                if let (true, None, Some(last)) = (stale, row.deleted, &row.last) {
                    let (headers, cells) = cells_of(&mut table, &k.3, last, now);
                    if headers == row.headers {
                        row.cells = cells;
                    }
                    row.made = sec;
                }
                continue;
            };
            let (headers, cells) = cells_of(&mut table, &k.3, &p, now);
            // The cells before, aged to now: a cell that only aged has not changed.
            if let (true, Some(last)) = (stale && row.headers == headers, &row.last) {
                row.cells = cells_of(&mut table, &k.3, last, now).1;
            }
            row.changed = if row.cells.is_empty() || row.headers != headers {
                vec![None; cells.len()]
            } else {
                cells
                    .iter()
                    .enumerate()
                    .map(|(i, c)| match row.cells.get(i) {
                        Some(old) if old == c => row.changed.get(i).copied().flatten(),
                        _ => Some(p.time),
                    })
                    .collect()
            };
            (row.headers, row.cells) = (headers, cells);
            row.last = Some(p);
            row.made = sec;
        }
    }

    /// [`Model::refresh`] of every row with a pending delta.
    pub fn refresh_all(&mut self, now: Timestamp) {
        let keys: Vec<RowKey> = self
            .rows
            .iter()
            .filter(|(_, r)| r.pending.is_some())
            .map(|(k, _)| k.clone())
            .collect();
        self.refresh(&keys, now);
    }

    /// Reads the labels of the rows that have not had them read since they changed.
    pub fn read_labels(&mut self) {
        for r in self.rows.values_mut().filter(|r| r.labels.is_none()) {
            r.labels = Some(r.object.as_ref().map(labels_of).unwrap_or_default());
        }
    }

    /// Keeps `bytes` of objects for version `seq` of `key`'s history, letting the oldest
    /// kept versions' objects go past [`HISTORY_BYTES`].
    fn keep(&mut self, key: RowKey, seq: u64, bytes: usize) {
        self.kept.push_back((key, seq, bytes));
        self.kept_bytes += bytes;
        while self.kept_bytes > HISTORY_BYTES {
            let Some((k, s, b)) = self.kept.pop_front() else {
                break;
            };
            self.kept_bytes -= b;
            let v = self
                .rows
                .get_mut(&k)
                .and_then(|r| r.history.iter_mut().find(|v| v.seq == s));
            if let Some(v) = v {
                v.change = Change::Dropped;
            }
        }
    }
}

/// The header line and cells of `p`'s delta, its ages counted to `now`.
fn cells_of(
    table: &mut TablePrinter<io::Sink>,
    key: &str,
    p: &Pending,
    now: Timestamp,
) -> (Vec<String>, Vec<String>) {
    let mut rec = Record::new(&p.resource, p.context.as_ref(), now, Body::Synced);
    rec.follow = p.follow.as_ref();
    table.live_cells(&rec, key, &p.delta, p.recreated)
}

/// The model shared between the printer and the render loop.
pub type Shared = Arc<Mutex<Model>>;

/// Locks the model; a panicked holder leaves it usable (it only holds display state).
pub fn lock(m: &Shared) -> MutexGuard<'_, Model> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The printer behind `--live`: every record updates the model, nothing is written.
pub struct LivePrinter {
    model: Shared,
    order: Vec<String>,
    /// Each resource (and context) seen, shared by its rows' pending deltas.
    resources: Vec<(Option<ContextName>, Arc<Resource>)>,
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
    /// `versions`: how many each row's history keeps ([`HISTORY`] by default).
    pub fn new(mut opts: Options, model: Shared, versions: usize) -> LivePrinter {
        opts.timestamps = false;
        opts.no_headers = false;
        let order = opts.order.clone();
        {
            let mut m = lock(&model);
            m.multi = opts.multi;
            m.versions = versions;
            m.cells = Some(CellMaker(Arc::new(Mutex::new(TablePrinter::new(
                opts,
                io::sink(),
                Box::new(io::sink()),
            )))));
        }
        LivePrinter {
            model,
            order,
            resources: Vec::new(),
        }
    }

    /// The shared copies of `rec`'s resource and context.
    fn resource(&mut self, rec: &Record<'_>) -> (Option<ContextName>, Arc<Resource>) {
        let found = self
            .resources
            .iter()
            .find(|(c, r)| c.as_ref() == rec.context && r.name == rec.resource.name);
        if let Some((c, r)) = found {
            return (c.clone(), r.clone());
        }
        let pair = (rec.context.cloned(), Arc::new(rec.resource.clone()));
        self.resources.push(pair.clone());
        pair
    }

    /// A row's key: kubectl's order, or a tree's rows by owner path (`--follow`).
    fn row_key(&self, rec: &Record<'_>, key: &str) -> RowKey {
        if let Some(f) = rec.follow {
            let context = rec.context.cloned();
            return (0, f.path.to_string(), context, key.to_owned());
        }
        let rank = self
            .order
            .iter()
            .position(|n| *n == rec.resource.name)
            .unwrap_or(usize::MAX);
        (
            rank,
            rec.resource.name.clone(),
            rec.context.cloned(),
            key.to_owned(),
        )
    }

    fn event(m: &mut Model, name: &str, rec: &Record<'_>, e: &ReflectorEvent) {
        let h = header(m, rec);
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
                h.last_event = Some(rec.time);
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

    fn observed(m: &mut Model, name: &str, rec: &Record<'_>, o: &Observation) {
        if let Observation::Freshness(l) = o {
            header(m, rec).lag = Some(l.lag);
        }
        if let Some(t) = observation_text(name, o) {
            push_event(m, rec.time, &t);
        }
    }

    fn delta(&mut self, rec: &Record<'_>, key: &str, delta: &Delta, prev: Option<&ObjectRef>) {
        let rk = self.row_key(rec, key);
        let (context, resource) = self.resource(rec);
        let obj = delta.object.object();
        let deleted = delta.kind == DeltaType::Deleted;
        let mut m = lock(&self.model);
        let versions = m.versions;
        m.changes += 1;
        m.seq += 1;
        let seq = m.seq;
        let h = header(&mut m, rec);
        h.deltas += 1;
        // What the watch brought (a list's objects come as Replaced or Sync).
        if matches!(
            delta.kind,
            DeltaType::Added | DeltaType::Updated | DeltaType::Deleted
        ) {
            h.last_event = Some(rec.time);
        }
        let sec = rec.time.as_second();
        if h.rate.0 == sec {
            h.rate.2 += 1;
        } else {
            h.rate = (sec, if sec - h.rate.0 == 1 { h.rate.2 } else { 0 }, 1);
        }
        let row = m.rows.entry(rk.clone()).or_insert_with(|| Row {
            headers: Vec::new(),
            cells: Vec::new(),
            changed: Vec::new(),
            added: rec.time,
            deleted: None,
            labels: None,
            object: None,
            history: VecDeque::new(),
            pending: None,
            tree: rec.follow.map(|f| f.path.clone()),
            last: None,
            made: i64::MIN,
        });
        if row.deleted.is_some() && !deleted {
            // Back after a delete: a new row.
            row.added = rec.time;
            row.cells.clear();
        }
        row.pending = Some(Pending {
            time: rec.time,
            resource,
            context,
            delta: delta.clone(),
            recreated: crate::output::record::recreated(delta, prev),
            follow: rec.follow.cloned(),
        });
        // An orphaned object, and each one that leaves with it, leaves the tree as a
        // deleted one leaves the table.
        let left = rec.follow.is_some_and(|f| {
            matches!(
                f.change,
                Some(
                    crate::informer::record::GraphChange::Orphaned
                        | crate::informer::record::GraphChange::Left
                )
            )
        });
        row.deleted = (deleted || left).then_some(rec.time);
        if let Some(o) = obj {
            row.labels = None;
            row.object = Some(o.clone());
        }
        row.history.push_back(Version {
            time: rec.time,
            what: delta.kind.as_str(),
            rv: obj
                .map(|o| o.resource_version().to_owned())
                .unwrap_or_default(),
            change: Change::Objects(delta.kind, prev.cloned(), obj.cloned()),
            seq,
        });
        while row.history.len() > versions {
            row.history.pop_front();
        }
        let bytes = obj.map_or(0, |o| o.raw().len());
        m.keep(rk, seq, bytes);
    }

    fn handler(&mut self, rec: &Record<'_>, key: &str, call: &HandlerCall) {
        let rk = self.row_key(rec, key);
        let diff = rec
            .diff(diff::DiffMode::On)
            .map(|d| diff::lines(&d))
            .unwrap_or_default();
        let mut m = lock(&self.model);
        m.seq += 1;
        let (seq, versions) = (m.seq, m.versions);
        if let Some(row) = m.rows.get_mut(&rk) {
            row.history.push_back(Version {
                time: rec.time,
                what: call.name(),
                rv: call
                    .object()
                    .map(|o| o.resource_version().to_owned())
                    .unwrap_or_default(),
                change: Change::Lines(diff),
                seq,
            });
            while row.history.len() > versions {
                row.history.pop_front();
            }
        }
    }
}

fn header<'m>(m: &'m mut Model, rec: &Record<'_>) -> &'m mut Header {
    let h = m
        .headers
        .entry((rec.context.cloned(), rec.resource.name.clone()))
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

impl Sink for LivePrinter {
    fn record(&mut self, rec: &Record<'_>) -> io::Result<()> {
        let name = &match rec.context {
            Some(c) => format!("{} in {c}", rec.resource.name),
            None => rec.resource.name.clone(),
        };
        match &rec.body {
            Body::Event(e) => Self::event(&mut lock(&self.model), name, rec, e),
            Body::Observed(o) => Self::observed(&mut lock(&self.model), name, rec, o),
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

    /// The screen's events pane shows it: stderr is that screen's terminal.
    fn diagnostic(&mut self, line: &str) -> io::Result<()> {
        push_event(&mut lock(&self.model), Timestamp::now(), line);
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Rows of `m` the filter keeps, in the order asked: kubectl's (the model's) or by the
/// cells of column `sort` (a header name), reversed or not. The filter is a substring of
/// `namespace/name`, `key=value` for a label, or `@TEXT` for the contexts whose name
/// holds TEXT (with several contexts).
pub fn visible<'m>(
    m: &'m Model,
    filter: &str,
    sort: Option<&str>,
    reverse: bool,
) -> Vec<(&'m RowKey, &'m Row)> {
    let by_context = filter.strip_prefix('@');
    let by_label = filter.split_once('=').filter(|_| by_context.is_none());
    let mut rows: Vec<_> = m
        .rows
        .iter()
        .filter(|(k, r)| {
            if filter.is_empty() {
                return true;
            }
            if let Some(c) = by_context {
                return k.2.as_ref().is_some_and(|ctx| ctx.contains(c));
            }
            match by_label {
                Some((lk, lv)) => r
                    .labels
                    .as_ref()
                    .and_then(|l| l.get(lk))
                    .is_some_and(|v| v == lv),
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
