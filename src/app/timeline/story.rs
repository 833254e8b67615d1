//! What the timeline page draws, collected record by record and kept compact: every
//! string once in a table (contexts, resources, keys, labels, diff lines), times in
//! milliseconds after the first record, and the marks as columns of numbers. A delta keeps
//! its type, resourceVersion, flags and, for an update, its `--diff` lines with who made
//! each change (`--blame`, where managedFields say), computed here from the version the
//! informer knew, bounded per delta and in total.
//!
//! The same records make the same page: a live run's sink and `kwatch replay`'s of its
//! recording get the same records (times to the millisecond, as recordings keep them).

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::cache::delta::Delta;
use crate::cache::object::ObjectRef;
use crate::cache::reflector::ReflectorEvent;
use crate::informer::blame::{self, Blame};
use crate::informer::diff::{self, DiffMode};
use crate::informer::record::{Body, GraphChange, Observation, Record};
use crate::output;

/// Changed paths kept per delta; the rest is counted ("N more").
pub const LINES_PER_DELTA: usize = 12;
/// A diff line's length at most, in characters (values are already cut at 60).
const LINE_CHARS: usize = 240;
/// The bytes of diff text a page keeps at most: past it, deltas keep their mark but not
/// their diff (the page says how many), so that a long recording stays a page one can
/// attach to a ticket.
pub const DETAIL_BUDGET: usize = 16 << 20;

/// Flags of a delta (the page's `FLAG` table says the same).
const INITIAL_LIST: u32 = 1;
const TOMBSTONE: u32 = 2;
const RECREATED: u32 = 4;
/// A relist's or resync's delta whose object is the version the informer held.
const UNCHANGED: u32 = 8;
const JOINED: u32 = 16;
const GRAPH_DELETED: u32 = 32;
const ORPHANED: u32 = 64;
const LEFT: u32 = 128;
/// Its diff was left out: the page's budget for diffs was spent.
const DIFF_LEFT_OUT: u32 = 256;

/// Strings stored once, referred to by index.
#[derive(Default)]
struct Strings {
    list: Vec<String>,
    index: HashMap<String, u32>,
}

impl Strings {
    fn id(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = u32::try_from(self.list.len()).unwrap_or(u32::MAX);
        self.list.push(s.to_owned());
        self.index.insert(s.to_owned(), i);
        i
    }

    fn known(&self, s: &str) -> bool {
        self.index.contains_key(s)
    }
}

/// A list or watch begun and not ended yet, per informer.
struct Open {
    t: i64,
    label: String,
}

#[derive(Default)]
struct InformerState {
    list: Option<Open>,
    watch: Option<Open>,
}

/// The informer marks, as columns: informer, kind (a string), start, duration (or the
/// value of a sample: a lag in ms), label (a string).
#[derive(Default)]
struct Marks {
    informer: Vec<u32>,
    kind: Vec<u32>,
    t: Vec<i64>,
    d: Vec<i64>,
    label: Vec<u32>,
}

/// One object's lane: its informer, key and owner path (`--follow`).
struct Lane {
    informer: u32,
    namespace: Option<u32>,
    name: u32,
    path: Option<u32>,
}

/// A resourceVersion: a number when it reads as one the page can hold exactly.
enum Rv {
    None,
    Number(u64),
    Text(String),
}

/// The deltas, as columns: object lane, time, type (a string), resourceVersion, flags,
/// detail (an index into `details`, or -1).
#[derive(Default)]
struct Deltas {
    lane: Vec<u32>,
    t: Vec<i64>,
    kind: Vec<u32>,
    rv: Vec<Rv>,
    flags: Vec<u32>,
    detail: Vec<i64>,
}

/// Everything the page shows of a run.
pub struct Story {
    /// `--diff-all`: the noise (resourceVersion, managedFields, generation) in the diffs.
    mode: DiffMode,
    strings: Strings,
    /// The first record's time (Unix ms); times are kept relative to it.
    start: Option<i64>,
    last: i64,
    informers: Vec<(Option<u32>, u32)>,
    informer_index: HashMap<(Option<String>, String), u32>,
    states: Vec<InformerState>,
    marks: Marks,
    lanes: Vec<Lane>,
    lane_index: HashMap<(u32, String), u32>,
    deltas: Deltas,
    /// Per delta with a diff: `[more, line, who, line, who, …]` (string ids, `who` -1
    /// where nobody is named).
    details: Vec<Vec<i64>>,
    /// Bytes of diff text stored so far ([`DETAIL_BUDGET`]).
    detail_bytes: usize,
    /// Deltas whose diff was left out for the budget.
    left_out: u64,
}

impl Story {
    pub fn new(mode: DiffMode) -> Story {
        Story {
            mode: if mode == DiffMode::All {
                DiffMode::All
            } else {
                DiffMode::On
            },
            strings: Strings::default(),
            start: None,
            last: 0,
            informers: Vec::new(),
            informer_index: HashMap::new(),
            states: Vec::new(),
            marks: Marks::default(),
            lanes: Vec::new(),
            lane_index: HashMap::new(),
            deltas: Deltas::default(),
            details: Vec::new(),
            detail_bytes: 0,
            left_out: 0,
        }
    }

    /// The number of deltas taken so far.
    pub fn deltas(&self) -> usize {
        self.deltas.t.len()
    }

    /// Takes what the page shows of one record.
    pub fn observe(&mut self, rec: &Record<'_>) {
        let t = self.at(rec.time);
        match rec.body {
            Body::Delta {
                key,
                delta,
                initial_list,
                prev,
            } => self.delta(rec, t, key, delta, initial_list, prev),
            Body::Event(e) => self.event(rec, t, e),
            Body::Observed(o) => self.observed(rec, t, o),
            Body::Synced => {
                let i = self.informer(rec);
                let info = match (rec.informer.client_go, rec.informer.queue) {
                    (Some(c), Some(q)) => format!(" (client-go {c}, {q})"),
                    _ => String::new(),
                };
                let label = format!("synced {}{info}", shown_name(rec));
                self.mark(i, "synced", t, 0, &label);
            }
            // The page draws deltas; a handler call is what a delta made.
            Body::Handler { .. } => {}
        }
    }

    /// Milliseconds after the first record.
    fn at(&mut self, time: jiff::Timestamp) -> i64 {
        let ms = time.as_millisecond();
        let start = *self.start.get_or_insert(ms);
        let t = ms - start;
        self.last = self.last.max(t);
        t
    }

    fn informer(&mut self, rec: &Record<'_>) -> u32 {
        let context = rec.context.map(|c| c.as_str().to_owned());
        let id = (context, rec.resource.name.clone());
        if let Some(&i) = self.informer_index.get(&id) {
            return i;
        }
        let c = id.0.as_deref().map(|c| self.strings.id(c));
        let r = self.strings.id(&id.1);
        let i = u32::try_from(self.informers.len()).unwrap_or(u32::MAX);
        self.informers.push((c, r));
        self.states.push(InformerState::default());
        self.informer_index.insert(id, i);
        i
    }

    fn mark(&mut self, informer: u32, kind: &str, t: i64, d: i64, label: &str) {
        let kind = self.strings.id(kind);
        let label = self.strings.id(label);
        let m = &mut self.marks;
        m.informer.push(informer);
        m.kind.push(kind);
        m.t.push(t);
        m.d.push(d.max(0));
        m.label.push(label);
    }

    /// Ends the list `informer` has open, if any, as one that did not complete at `t`.
    fn list_failed(&mut self, informer: u32, t: i64, why: &str) {
        if let Some(open) = self.states[informer as usize].list.take() {
            let label = format!("{} — {why}", open.label);
            self.mark(informer, "list", open.t, t - open.t, &label);
        }
    }

    fn event(&mut self, rec: &Record<'_>, t: i64, e: &ReflectorEvent) {
        let i = self.informer(rec);
        let name = shown_name(rec);
        let line = output::event_line(&name, e).unwrap_or_default();
        match e {
            ReflectorEvent::List { reason, .. } => {
                self.list_failed(i, t, "did not complete");
                if reason != "initial" {
                    self.mark(i, "relist", t, 0, &line);
                }
                self.states[i as usize].list = Some(Open { t, label: line });
            }
            ReflectorEvent::Listed { elapsed, .. } => {
                let open = self.states[i as usize].list.take();
                let (start, label) = match open {
                    Some(o) => (o.t, format!("{} — {line}", o.label)),
                    None => (t - millis(elapsed), line),
                };
                self.mark(i, "list", start, t - start, &label);
            }
            ReflectorEvent::Watch { .. } => {
                self.watch_ended(i, t, "a new watch began");
                self.states[i as usize].watch = Some(Open { t, label: line });
            }
            ReflectorEvent::WatchEnded { reason, error, .. } => {
                if let Some(open) = self.states[i as usize].watch.take() {
                    let label = format!("{} — {line}", open.label);
                    self.mark(i, "watch", open.t, t - open.t, &label);
                }
                self.mark(i, watch_end_kind(reason, *error), t, 0, &line);
            }
            ReflectorEvent::Bookmark { resource_version } => {
                let label = format!("bookmark {name} rv={resource_version}");
                self.mark(i, "bookmark", t, 0, &label);
            }
            ReflectorEvent::Stalled { silent, .. } => {
                let d = millis(silent);
                self.mark(i, "stalled", t - d, d, &line);
            }
            ReflectorEvent::Backoff { delay, .. } => {
                self.list_failed(i, t, "failed");
                self.mark(i, "backoff", t, millis(delay), &line);
            }
            ReflectorEvent::Retry(_) => self.mark(i, "retry", t, 0, &line),
            ReflectorEvent::Resync => self.mark(i, "resync", t, 0, &line),
            ReflectorEvent::Relisted { .. } => self.mark(i, "relisted", t, 0, &line),
            ReflectorEvent::TimeTravel { .. } => self.mark(i, "timetravel", t, 0, &line),
            ReflectorEvent::Protocol { .. } => self.mark(i, "protocol", t, 0, &line),
            ReflectorEvent::OpaqueResourceVersion { .. }
            | ReflectorEvent::WatchListFallback { .. }
            | ReflectorEvent::WireFallback { .. } => self.mark(i, "note", t, 0, &line),
        }
    }

    /// Ends the watch `informer` has open, if any, at `t`.
    fn watch_ended(&mut self, informer: u32, t: i64, why: &str) {
        if let Some(open) = self.states[informer as usize].watch.take() {
            let label = format!("{} — {why}", open.label);
            self.mark(informer, "watch", open.t, t - open.t, &label);
        }
    }

    fn observed(&mut self, rec: &Record<'_>, t: i64, o: &Observation) {
        let i = self.informer(rec);
        let name = shown_name(rec);
        let line = output::observation_line(&name, o).unwrap_or_default();
        match o {
            Observation::Freshness(lag) => {
                let ms = millis(&lag.lag);
                let label = format!(
                    "{name}: the store {ms}ms behind the server (store rv={}, server rv={})",
                    lag.store_resource_version, lag.server_resource_version
                );
                self.mark(i, "lag", t, ms, &label);
                if lag.recovered {
                    self.mark(i, "fresh", t, ms, &line);
                }
            }
            Observation::Stale(lag) => self.mark(i, "stale", t, millis(&lag.lag), &line),
            Observation::Consistency(_) => self.mark(i, "consistency", t, 0, &line),
            Observation::Conflict(_) => self.mark(i, "conflict", t, 0, &line),
            Observation::Latency(l) => self.mark(i, "latency", t, millis(&l.latency), &line),
            Observation::CacheStats(_) => self.mark(i, "cache", t, 0, &line),
        }
    }

    fn lane(&mut self, informer: u32, key: &str, rec: &Record<'_>) -> u32 {
        let path = rec.follow.map(|f| f.path.to_string());
        if let Some(&l) = self.lane_index.get(&(informer, key.to_owned())) {
            let lane = &mut self.lanes[l as usize];
            if lane.path.is_none() {
                lane.path = path.map(|p| self.strings.id(&p));
            }
            return l;
        }
        let (namespace, name) = match key.split_once('/') {
            Some((ns, n)) => (Some(self.strings.id(ns)), self.strings.id(n)),
            None => (None, self.strings.id(key)),
        };
        let path = path.map(|p| self.strings.id(&p));
        let l = u32::try_from(self.lanes.len()).unwrap_or(u32::MAX);
        self.lanes.push(Lane {
            informer,
            namespace,
            name,
            path,
        });
        self.lane_index.insert((informer, key.to_owned()), l);
        l
    }

    fn delta(
        &mut self,
        rec: &Record<'_>,
        t: i64,
        key: &str,
        delta: &Delta,
        initial_list: bool,
        prev: Option<&ObjectRef>,
    ) {
        let i = self.informer(rec);
        let lane = self.lane(i, key, rec);
        let kind = self.strings.id(delta.kind.as_str());
        let object = delta.object.object();
        let rv = match object.map(|o| o.resource_version()) {
            None => Rv::None,
            Some(rv) => match rv.parse::<u64>() {
                Ok(n) if n < (1 << 53) && n.to_string() == rv => Rv::Number(n),
                _ => Rv::Text(rv.to_owned()),
            },
        };
        let mut flags = 0;
        if initial_list {
            flags |= INITIAL_LIST;
        }
        if delta.object.is_tombstone() {
            flags |= TOMBSTONE;
        }
        if output::record::recreated(delta, prev) {
            flags |= RECREATED;
        }
        flags |= match rec.follow.and_then(|f| f.change) {
            Some(GraphChange::Joined) => JOINED,
            Some(GraphChange::Deleted) => GRAPH_DELETED,
            Some(GraphChange::Orphaned) => ORPHANED,
            Some(GraphChange::Left) => LEFT,
            None => 0,
        };
        let mut detail = -1;
        if prev.is_some() && diff::applies(delta.kind) {
            match rec.diff(self.mode) {
                Some(d) if d.known && !d.changed => flags |= UNCHANGED,
                Some(d) if d.known => {
                    // --blame's owners, where the objects name managers.
                    let managed = object.is_some_and(|o| o.meta().has_managed_fields);
                    let blamed = if managed { rec.blame(true) } else { None };
                    match self.detail(&d.changes, blamed.unwrap_or_default()) {
                        Some(j) => detail = j,
                        None => {
                            flags |= DIFF_LEFT_OUT;
                            self.left_out += 1;
                        }
                    }
                }
                _ => {}
            }
        }
        let d = &mut self.deltas;
        d.lane.push(lane);
        d.t.push(t);
        d.kind.push(kind);
        d.rv.push(rv);
        d.flags.push(flags);
        d.detail.push(detail);
    }

    /// Stores a delta's changed paths with who made each; `None` once the budget is spent.
    fn detail(&mut self, changes: &[diff::Change], blamed: &[Blame]) -> Option<i64> {
        let lines: Vec<(String, Option<String>)> = changes
            .iter()
            .take(LINES_PER_DELTA)
            .map(|c| {
                let who = blamed.iter().find(|b| b.path == c.path).map(blame::who);
                (cut(c.line()), who)
            })
            .collect();
        let new_bytes: usize = lines
            .iter()
            .flat_map(|(l, w)| std::iter::once(l).chain(w))
            .filter(|s| !self.strings.known(s))
            .map(String::len)
            .sum();
        if self.detail_bytes + new_bytes > DETAIL_BUDGET {
            return None;
        }
        self.detail_bytes += new_bytes;
        let more = changes.len().saturating_sub(LINES_PER_DELTA);
        let mut entry = vec![i64::try_from(more).unwrap_or(i64::MAX)];
        for (line, who) in &lines {
            entry.push(i64::from(self.strings.id(line)));
            entry.push(who.as_deref().map_or(-1, |w| i64::from(self.strings.id(w))));
        }
        self.details.push(entry);
        Some(i64::try_from(self.details.len() - 1).unwrap_or(i64::MAX))
    }

    /// Ends what is still open at the last record: the page shows it open to the end.
    fn close(&mut self) {
        let end = self.last;
        for i in 0..self.states.len() {
            let i = u32::try_from(i).unwrap_or(u32::MAX);
            self.list_failed(i, end, "still listing when the recording ended");
            self.watch_ended(i, end, "still watching when the recording ended");
        }
    }

    /// The page's data as JSON (docs/user-guide.md, "How to read the page"): `title` names
    /// what was recorded.
    pub fn json(mut self, title: &str, generator: &str) -> String {
        self.close();
        let start = self.start.unwrap_or(0);
        let start_text = jiff::Timestamp::from_millisecond(start)
            .map(|t| t.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
            .unwrap_or_default();
        let mut out = String::with_capacity(64 + 40 * self.deltas.t.len());
        let q = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_owned());
        let _ = write!(
            out,
            "{{\"format\":\"kwatch-timeline/1\",\"title\":{},\"generator\":{},\"start\":{},\"startMs\":{start},\"end\":{},",
            q(title),
            q(generator),
            q(&start_text),
            self.last
        );
        let _ = write!(
            out,
            "\"linesPerDelta\":{LINES_PER_DELTA},\"diffsLeftOut\":{},",
            self.left_out
        );
        out.push_str("\"s\":[");
        for (n, s) in self.strings.list.iter().enumerate() {
            if n > 0 {
                out.push(',');
            }
            out.push_str(&q(s));
        }
        out.push_str("],\"informers\":[");
        for (n, (c, r)) in self.informers.iter().enumerate() {
            if n > 0 {
                out.push(',');
            }
            let c = c.map_or(-1, i64::from);
            let _ = write!(out, "[{c},{r}]");
        }
        out.push_str("],\"marks\":{");
        let m = &self.marks;
        column(&mut out, "i", &m.informer, false);
        column(&mut out, "k", &m.kind, true);
        column(&mut out, "t", &m.t, true);
        column(&mut out, "d", &m.d, true);
        column(&mut out, "l", &m.label, true);
        out.push_str("},\"lanes\":{");
        let l = &self.lanes;
        let ids = |f: &dyn Fn(&Lane) -> Option<u32>| -> Vec<i64> {
            l.iter().map(|x| f(x).map_or(-1, i64::from)).collect()
        };
        column(&mut out, "i", &ids(&|x| Some(x.informer)), false);
        column(&mut out, "ns", &ids(&|x| x.namespace), true);
        column(&mut out, "n", &ids(&|x| Some(x.name)), true);
        column(&mut out, "p", &ids(&|x| x.path), true);
        out.push_str("},\"deltas\":{");
        let d = &self.deltas;
        column(&mut out, "o", &d.lane, false);
        column(&mut out, "t", &d.t, true);
        column(&mut out, "k", &d.kind, true);
        out.push_str(",\"rv\":[");
        for (n, rv) in d.rv.iter().enumerate() {
            if n > 0 {
                out.push(',');
            }
            match rv {
                Rv::None => out.push_str("null"),
                Rv::Number(v) => {
                    let _ = write!(out, "{v}");
                }
                Rv::Text(s) => out.push_str(&q(s)),
            }
        }
        out.push(']');
        column(&mut out, "f", &d.flags, true);
        column(&mut out, "x", &d.detail, true);
        out.push_str("},\"details\":[");
        for (n, entry) in self.details.iter().enumerate() {
            if n > 0 {
                out.push(',');
            }
            out.push('[');
            for (k, v) in entry.iter().enumerate() {
                if k > 0 {
                    out.push(',');
                }
                let _ = write!(out, "{v}");
            }
            out.push(']');
        }
        out.push_str("]}");
        out
    }
}

/// `"name":[v,…]`, after a comma unless `first`.
fn column<T: std::fmt::Display>(out: &mut String, name: &str, values: &[T], comma: bool) {
    if comma {
        out.push(',');
    }
    let _ = write!(out, "\"{name}\":[");
    for (n, v) in values.iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        let _ = write!(out, "{v}");
    }
    out.push(']');
}

/// The informer as the table's `~` lines name it: `pods`, `pods in prod`.
fn shown_name(rec: &Record<'_>) -> String {
    match rec.context {
        Some(c) => format!("{} in {c}", rec.resource.name),
        None => rec.resource.name.clone(),
    }
}

fn millis(d: &std::time::Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// What a watch's end was, for its mark: a 410 (a relist follows), a connection cut or
/// lost, a watch `--restart-stalled` ended, another error, or a close (the server's
/// timeout).
fn watch_end_kind(reason: &str, error: bool) -> &'static str {
    let has = |s: &str| reason.contains(s);
    if reason == "stalled" {
        "watch-stalled"
    } else if has("410") || has("Expired") || has("Gone") {
        "watch-expired"
    } else if has("connection") || has("EOF") || has("http2") || has("reset") {
        "watch-dropped"
    } else if error {
        "watch-error"
    } else {
        "watch-closed"
    }
}

/// A line cut to [`LINE_CHARS`].
fn cut(line: String) -> String {
    if line.chars().count() <= LINE_CHARS {
        return line;
    }
    let mut s: String = line.chars().take(LINE_CHARS - 1).collect();
    s.push('…');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::delta::{DeltaObject, DeltaType};
    use crate::cache::object::Object;
    use crate::client::target::Resource;
    use std::time::Duration;

    fn pods() -> Resource {
        Resource {
            name: "pods".into(),
            kind: "Pod".into(),
            api_version: "v1".into(),
            namespaced: true,
        }
    }

    fn pod(rv: &str, phase: &str) -> ObjectRef {
        let json = format!(
            r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"web","namespace":"default","resourceVersion":"{rv}"}},"status":{{"phase":"{phase}"}}}}"#
        );
        ObjectRef::new(Object::from_json(&json).unwrap())
    }

    fn at(ms: i64) -> jiff::Timestamp {
        jiff::Timestamp::from_millisecond(1_800_000_000_000 + ms).unwrap()
    }

    /// A list, a watch that ends with 410, the relist, and an object added then updated:
    /// the marks and the delta columns the page reads, its diff kept.
    #[test]
    fn a_relist_and_an_update_make_the_marks_and_the_diff_the_page_draws() {
        let r = pods();
        let mut story = Story::new(DiffMode::Off);
        let event = |story: &mut Story, ms: i64, e: ReflectorEvent| {
            story.observe(&Record::new(&r, None, at(ms), Body::Event(&e)));
        };
        event(
            &mut story,
            0,
            ReflectorEvent::list("0", 500, "initial", false),
        );
        let listed = ReflectorEvent::listed("10", 1, "json", 100);
        event(&mut story, 20, listed.clone());
        event(
            &mut story,
            25,
            ReflectorEvent::Watch {
                resource_version: "10".into(),
                timeout_seconds: 300,
            },
        );
        let (v1, v2) = (pod("10", "Pending"), pod("11", "Running"));
        let added = Delta {
            kind: DeltaType::Added,
            object: DeltaObject::Object(v1.clone()),
        };
        let updated = Delta {
            kind: DeltaType::Updated,
            object: DeltaObject::Object(v2),
        };
        for (ms, delta, prev) in [(30, &added, None), (40, &updated, Some(&v1))] {
            let body = Body::Delta {
                key: "default/web",
                delta,
                initial_list: false,
                prev,
            };
            story.observe(&Record::new(&r, None, at(ms), body));
        }
        let reason = "410 Expired: too old resource version: 10 (12)";
        event(
            &mut story,
            1025,
            ReflectorEvent::WatchEnded {
                reason: reason.into(),
                events: 2,
                bookmarks: 0,
                elapsed: Duration::from_millis(1000),
                error: true,
            },
        );
        event(
            &mut story,
            1900,
            ReflectorEvent::list("10", 500, reason, false),
        );
        event(&mut story, 1950, listed);
        let d: serde_json::Value = serde_json::from_str(&story.json("t", "kwatch")).unwrap();
        let s = |i: &serde_json::Value| d["s"][i.as_u64().unwrap() as usize].clone();
        let kinds: Vec<_> = d["marks"]["k"].as_array().unwrap().iter().map(s).collect();
        assert_eq!(
            kinds,
            ["list", "watch", "watch-expired", "relist", "list"].map(serde_json::Value::from)
        );
        assert_eq!(
            d["marks"]["t"],
            serde_json::json!([0, 25, 1025, 1900, 1900])
        );
        assert_eq!(d["marks"]["d"], serde_json::json!([20, 1000, 0, 0, 50]));
        let relist = s(&d["marks"]["l"][3]);
        assert!(
            relist
                .as_str()
                .unwrap()
                .starts_with("relist pods: 410 Expired"),
            "{relist}"
        );
        assert_eq!(d["deltas"]["t"], serde_json::json!([30, 40]));
        assert_eq!(d["deltas"]["rv"], serde_json::json!([10, 11]));
        assert_eq!(d["deltas"]["x"], serde_json::json!([-1, 0]));
        let detail = &d["details"][0];
        assert_eq!(detail[0], 0, "no more lines");
        assert_eq!(s(&detail[1]), ".status.phase: \"Pending\" → \"Running\"");
        assert_eq!(detail[2], -1, "no managedFields: nobody named");
        assert_eq!(d["lanes"]["n"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn watch_ends_are_told_apart_by_their_reason() {
        let cases = [
            ("stalled", false, "watch-stalled"),
            (
                "410 Expired: too old resource version: 36 (38)",
                true,
                "watch-expired",
            ),
            (
                "connection lost: the server cut the connection (unexpected EOF)",
                false,
                "watch-dropped",
            ),
            (
                "very short watch: the watch lasted less than a second",
                true,
                "watch-error",
            ),
            ("closed by the server", false, "watch-closed"),
        ];
        for (reason, error, kind) in cases {
            assert_eq!(watch_end_kind(reason, error), kind, "{reason}");
        }
    }

    #[test]
    fn a_long_line_is_cut_with_an_ellipsis() {
        let long = "x".repeat(LINE_CHARS + 10);
        let got = cut(long);
        assert_eq!(got.chars().count(), LINE_CHARS);
        assert!(got.ends_with('…'));
        assert_eq!(cut("short".to_owned()), "short");
    }
}
