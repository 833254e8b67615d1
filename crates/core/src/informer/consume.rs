//! The informer loop: for each resource, pop the queue, apply the deltas to the store
//! (under the queue's lock, as client-go's `Pop(process)` does), turn them into records,
//! print them into the one shared [`Sink`], and decide whether to stop (`--max-events`,
//! `--until`, `--until-synced`, a closed output). It knows no terminal: the printers are
//! whatever the sink was given, so it runs as well against an in-memory buffer.
//!
//! The version of the object the store held before a pop is captured in the same closure
//! as the pop, so `--diff`, `--until created` and `-o watch-events` see exactly what the
//! informer knew before each delta. A batch pop (client-go ≥ 0.35) prints its deltas, and
//! the reflector's records among them, in queue order, each with the `batch` size; a popped
//! atomic relist or resync (0.36) prints what `Store::apply_atomic` makes of it.
//! With `--view handlers`, each delta is followed by the handler call it makes
//! ([`crate::cache::handlers`]), if any.

use std::io::{self, Write as _};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::mpsc;

use crate::cache::cost::{CacheCost, StoreCost};
use crate::cache::delta::{Delta, Deltas};
use crate::cache::handlers::{self, Listener, Registration};
use crate::cache::object::ObjectRef;
use crate::cache::queue::{Batched, Popped, Queue};
use crate::cache::reflector::{ListProgress, ReflectorEvent};
use crate::cache::store::{Applied, Store};
use crate::client::target::{Resource, Target};
use crate::informer::filter::{Filter, Tally};
use crate::informer::follow::{Graph, Verdict};
use crate::informer::until::Condition;
use crate::output::{progress, Body, GraphChange, InformerInfo, Printer, Record};

/// Why the informers stop. `E`: the application's error, which it sends on the same
/// channel ([`Shared::stop`]); the informer's own failures are an [`Error`] made into one.
pub enum Stop<E> {
    Done,
    Met,
    Failed(E),
}

/// How the informer loop itself fails a run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The output could not be written (a closed pipe is no failure but the run's end).
    #[error("writing output")]
    Output(#[source] io::Error),
    /// Every resource was left out ([`Shared::skip`]).
    #[error(
        "none of the {0} resources can be watched: the server refused each, as reported \
         above; `kubectl auth can-i --list` shows what you may list and watch"
    )]
    NothingWatchable(usize),
}

/// A feature that watches the informer without steering it (`--stats`, `--metrics`, the
/// application's): told every record in the order the sink takes them, printed or hidden
/// by a filter, and every pop's delivery, under the sink's lock.
pub trait Observer: std::any::Any + Send {
    /// A record, `shown` when printed (else hidden by a filter but recorded); `targets`:
    /// the resources the run still waits for (those left out not counted).
    fn record(&mut self, rec: &Record<'_>, shown: bool, targets: usize);

    /// A pop of `resource` in `context` ("" with one cluster) is about to be delivered.
    fn popped(&mut self, _resource: &str, _context: &str) {}

    /// A pop that held deltas was delivered, `took` after it was taken from the queue:
    /// client-go 0.36's processing latency, from the pop to the handlers' return.
    fn processed(&mut self, _resource: &str, _context: &str, _took: std::time::Duration) {}
}

/// Shared by the consumers: the printer and the counters that decide when to stop.
pub struct Sink {
    pub printer: Box<dyn Printer>,
    /// `--record FILE`: the JSON-lines records, whatever `printer` shows.
    pub recorder: Option<Box<dyn Printer>>,
    /// The features that watch every record and pop ([`Observer`]).
    pub observers: Vec<Box<dyn Observer>>,
    /// Deltas printed so far.
    pub deltas: u64,
    /// Handler calls printed so far (`--view handlers`).
    pub handler_calls: u64,
    /// Resources that have synced.
    pub synced: usize,
    /// Resources left out because the server refused them before they synced
    /// ([`Shared::skip`]); they never sync.
    pub skipped: usize,
    /// Progress is on stderr now (a terminal line to clear before stdout writes).
    pub progress_shown: bool,
    /// What the reflectors did last while loading, for the progress line.
    pub progress_note: String,
    /// The last failure a reflector reported (`resource: cause`), for the line that ends
    /// a run whose `--timeout` came before every resource synced.
    pub last_error: Option<String>,
    /// Nothing more is printed once set.
    pub finished: bool,
    /// `--blame`: managers fighting over a field, told as `Conflict` records.
    pub conflicts: Option<crate::informer::conflict::Conflicts>,
    /// `--cache-stats`: each store's cost when the run ended (by resource, `@context` with
    /// several), as the end's `CacheStats` records gave it, for `--stats`' summary.
    pub end_costs: Vec<(String, CacheCost)>,
    /// `--follow`, `--events`: the owner graph, which decides which deltas are printed.
    pub graph: Option<Graph>,
    /// `--view handlers`: each informer's listener, by resource and context. A held delta
    /// the graph delivers later, from another informer's pop, makes its call through the
    /// listener of its own informer, as client-go's informer of that resource calls its
    /// handler for every object it delivers.
    listeners: Vec<(String, Option<Arc<str>>, Listener)>,
}

impl Sink {
    pub fn new(printer: Box<dyn Printer>, recorder: Option<Box<dyn Printer>>) -> Sink {
        Sink {
            printer,
            recorder,
            observers: Vec::new(),
            deltas: 0,
            handler_calls: 0,
            synced: 0,
            skipped: 0,
            progress_shown: false,
            progress_note: String::new(),
            last_error: None,
            finished: false,
            conflicts: None,
            end_costs: Vec::new(),
            graph: None,
            listeners: Vec::new(),
        }
    }

    /// The listener of `resource`'s informer in `context`, once registered.
    fn listener(&mut self, resource: &str, context: Option<&str>) -> Option<&mut Listener> {
        self.listeners
            .iter_mut()
            .find(|(r, c, _)| r == resource && c.as_deref() == context)
            .map(|(_, _, l)| l)
    }

    /// Prints one record to the output, the recording and the counters.
    fn print(&mut self, rec: &Record<'_>, targets: usize) -> io::Result<()> {
        if let Body::Event(e) = &rec.body {
            match e {
                ReflectorEvent::List { .. } => {
                    self.progress_note = format!("listing {}", rec.resource.name)
                }
                // A streaming list has no pages.
                ReflectorEvent::Listed {
                    items,
                    streaming: true,
                    ..
                } => self.progress_note = format!("listed {}: {items} streamed", rec.resource.name),
                ReflectorEvent::Listed { items, pages, .. } => {
                    let s = if *pages == 1 { "" } else { "s" };
                    self.progress_note =
                        format!("listed {}: {items} in {pages} page{s}", rec.resource.name)
                }
                ReflectorEvent::Backoff { cause, .. } => {
                    self.last_error = Some(format!("{}: {cause}", rec.resource.name))
                }
                ReflectorEvent::Retry(r) => {
                    let code = r.code.map(|c| format!("{c} ")).unwrap_or_default();
                    self.last_error = Some(format!(
                        "{}: {}: {code}{}",
                        rec.resource.name,
                        r.verb.as_str(),
                        r.reason
                    ))
                }
                _ => {}
            }
        }
        let waiting = targets.saturating_sub(self.skipped);
        for o in &mut self.observers {
            o.record(rec, true, waiting);
        }
        if let Some(r) = &mut self.recorder {
            r.print(rec)?;
        }
        self.clear_progress();
        self.printer.print(rec)
    }

    /// Counts a record a filter hides and records it (`--record` keeps everything the
    /// informer did), without printing it.
    fn hide(&mut self, rec: &Record<'_>, targets: usize) -> io::Result<()> {
        let waiting = targets.saturating_sub(self.skipped);
        for o in &mut self.observers {
            o.record(rec, false, waiting);
        }
        match &mut self.recorder {
            Some(r) => r.print(rec),
            None => Ok(()),
        }
    }

    /// [`Sink::print`] `rec`, or [`Sink::hide`] it.
    fn emit(&mut self, rec: &Record<'_>, shown: bool, targets: usize) -> io::Result<()> {
        if shown {
            self.print(rec, targets)
        } else {
            self.hide(rec, targets)
        }
    }

    /// The observer of type `T`, if one was added.
    pub fn observer<T: Observer>(&self) -> Option<&T> {
        self.observers
            .iter()
            .find_map(|o| (&**o as &dyn std::any::Any).downcast_ref::<T>())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        if let Some(r) = &mut self.recorder {
            r.flush()?;
        }
        self.printer.flush()
    }

    /// The one line for a `--timeout` of `after` that came before every resource of
    /// `targets` synced: how many did, and the last error, if any.
    pub fn timed_out_before_sync(&self, after: std::time::Duration, targets: usize) -> String {
        let mut line = format!(
            "error: timed out after {after:?} waiting for the initial list ({} of {targets} synced)",
            self.synced
        );
        if let Some(e) = &self.last_error {
            line.push_str(&format!("; the last error, retried with backoff: {e}"));
        }
        line
    }

    /// The run ends: everything out, held output too.
    pub fn finish(&mut self) -> io::Result<()> {
        if let Some(r) = &mut self.recorder {
            r.finish()?;
        }
        self.printer.finish()
    }

    /// Every resource has synced or been left out.
    pub fn all_synced(&self, targets: usize) -> bool {
        self.synced + self.skipped >= targets
    }

    pub fn clear_progress(&mut self) {
        if self.progress_shown {
            self.progress_shown = false;
            let _ = write!(io::stderr(), "{}", progress::CLEAR);
        }
    }
}

/// What every informer loop of a run shares: the sink and the stop conditions.
pub struct Shared<E> {
    pub sink: Mutex<Sink>,
    /// Every reflector's list progress, for the progress line.
    pub lists: Mutex<Vec<Arc<ListProgress>>>,
    /// Resources × contexts: the number of Synced records that make "all synced".
    pub targets: usize,
    pub max_events: Option<u64>,
    pub until_synced: bool,
    pub watch_only: bool,
    /// `--quiet-relists`, `--types`, `--changes`: which deltas are printed.
    pub filter: Filter,
    pub pop_delay: Option<std::time::Duration>,
    pub until: Option<Condition>,
    pub stop: mpsc::UnboundedSender<Stop<E>>,
    /// `--view handlers`: the handler whose calls are printed (and counted by
    /// `--max-events`) besides the deltas.
    pub handler: Option<Registration>,
    /// `--cache-stats`: every store's cost, reported once more when the run ends.
    pub caches: Mutex<Vec<CacheSource>>,
}

/// `--cache-stats`: one informer's store, for the `CacheStats` record at the end.
pub struct CacheSource {
    pub resource: crate::client::target::Resource,
    pub context: Option<Arc<str>>,
    pub cost: Arc<StoreCost>,
}

impl<E: From<Error>> Shared<E> {
    pub fn lock(&self) -> std::sync::MutexGuard<'_, Sink> {
        self.sink.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self, f: impl FnOnce(&mut Sink) -> io::Result<Option<Stop<E>>>) {
        let mut sink = self.lock();
        if sink.finished {
            return;
        }
        let stop = match f(&mut sink) {
            // A stop condition met (--max-events, --until, --until-synced): the run ends
            // normally, with its end records.
            Ok(Some(s)) if !matches!(s, Stop::Failed(_)) => {
                let _ = self.print_end(&mut sink);
                Some(s)
            }
            Ok(s) => s,
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Some(Stop::Done),
            Err(e) => Some(Stop::Failed(Error::Output(e).into())),
        };
        if let Some(s) = stop {
            sink.finished = true;
            let _ = sink.finish();
            let _ = self.stop.send(s);
        }
    }

    /// The records of a run's normal end, before its output ends (every way a run ends
    /// normally comes through here once, before `finished` is set): a `CacheStats` per
    /// store under `--cache-stats`, its cost also kept in `end_costs`.
    pub fn print_end(&self, sink: &mut Sink) -> io::Result<()> {
        if sink.finished {
            return Ok(());
        }
        let caches = self.caches.lock().unwrap_or_else(|e| e.into_inner());
        for c in caches.iter() {
            let ev = ReflectorEvent::CacheStats(c.cost.measure());
            let rec = Record::new(
                &c.resource,
                c.context.as_deref(),
                jiff::Timestamp::now(),
                Body::Event(&ev),
            );
            let printed = sink.print(&rec, self.targets);
            if let ReflectorEvent::CacheStats(cost) = ev {
                let label = match &c.context {
                    Some(ctx) => format!("{}@{ctx}", c.resource.name),
                    None => c.resource.name.clone(),
                };
                sink.end_costs.push((label, cost));
            }
            printed?;
        }
        Ok(())
    }

    /// Prints a record no informer loop popped (`--probe`'s Latency records), flushed.
    pub fn print_event(
        &self,
        resource: &crate::client::target::Resource,
        context: Option<&str>,
        ev: &ReflectorEvent,
    ) {
        self.write(|sink| {
            let rec = Record::new(resource, context, jiff::Timestamp::now(), Body::Event(ev));
            sink.print(&rec, self.targets)?;
            sink.flush()?;
            Ok(None)
        });
    }

    /// Leaves out a resource whose reflector ended before its first sync because the
    /// server refused it (`kwatch all`, `--every-resource`): `line` says so once on
    /// stderr, and the others go on. The run fails when no resource is left, and with
    /// `--until-synced` ends when the others have all synced.
    pub fn skip(&self, line: &str, resource: &str, context: Option<&str>) {
        self.leave_out(line, resource, context, || {
            Error::NothingWatchable(self.targets).into()
        });
    }

    /// Leaves out one resource that will never sync, as [`Shared::skip`] does, saying
    /// `line` on stderr; when none is left, the run fails with `none_left()`'s error.
    /// The application leaves out each resource of a context whose server fails for
    /// good, the other contexts going on.
    pub fn leave_out(
        &self,
        line: &str,
        resource: &str,
        context: Option<&str>,
        none_left: impl FnOnce() -> E,
    ) {
        self.write(|sink| {
            sink.clear_progress();
            writeln!(io::stderr(), "{}", crate::text::sanitize(line))?;
            sink.skipped += 1;
            sink.printer.left_out(resource, context)?;
            if sink.skipped >= self.targets {
                return Ok(Some(Stop::Failed(none_left())));
            }
            Ok((self.until_synced && sink.all_synced(self.targets)).then_some(Stop::Done))
        });
    }
}

/// The informer's processing loop for one resource: until the queue closes or a stop
/// condition is met. `informer`: its release and queue, for the records. `absent`: the
/// `~` line to say on stderr, once, when the initial list syncs with no object (a watch of
/// one name whose object does not exist yet), unless that sync ends the run.
pub async fn consume<Q: Queue<ReflectorEvent>, E: From<Error>>(
    t: Target,
    context: Option<Arc<str>>,
    informer: InformerInfo<'static>,
    fifo: Arc<Q>,
    store: Arc<Store>,
    shared: Arc<Shared<E>>,
    absent: Option<String>,
) {
    let mut synced = false;
    let batches = fifo.pops_in_batches();
    // Registered before the informer runs, as client-go's AddEventHandler before Run.
    if let Some(r) = shared.handler {
        let listener = Listener::new(r, Instant::now());
        let entry = (t.resource.name.clone(), context.clone(), listener);
        shared.lock().listeners.push(entry);
    }
    let mut tally = None;
    loop {
        // Applied to the store under the FIFO's lock, with the versions known before.
        // From the pop on, as client-go 0.36's processing latency.
        let popped = fifo.pop_with(|p| (Instant::now(), take(p, &store, batches)));
        let Some((popped_at, mut taken)) = popped.await else {
            return;
        };
        tally_pop(&mut taken, &mut tally);
        let resync = matches!(taken, Taken::Notice(ReflectorEvent::Resync));
        let had_deltas = !matches!(taken, Taken::Notice(_));
        let now_synced = !synced && fifo.has_synced();
        synced |= now_synced;
        let pop = Pop {
            resource: &t,
            context: context.as_deref(),
            taken: &taken,
            informer,
            // How many objects the informer holds when it has just synced.
            synced_with: now_synced.then(|| store.len()),
            drained: fifo.is_empty(),
            absent: absent.as_deref(),
        };
        shared.write(|sink| {
            if resync {
                if let Some(l) = sink.listener(&t.resource.name, context.as_deref()) {
                    l.resync_check(Instant::now());
                }
            }
            let (resource, ctx) = (&t.resource.name, context.as_deref().unwrap_or_default());
            for o in &mut sink.observers {
                o.popped(resource, ctx);
            }
            let delivered = pop.deliver(&shared, sink);
            if had_deltas {
                let took = popped_at.elapsed();
                for o in &mut sink.observers {
                    o.processed(resource, ctx, took);
                }
            }
            delivered
        });
        // A slow handler is slow on deltas; the reflector's records pass at once.
        if let (Some(d), true) = (shared.pop_delay, had_deltas) {
            tokio::time::sleep(d).await;
        }
    }
}

/// What one pop gave the informer, applied to its store.
enum Taken {
    Notice(ReflectorEvent),
    /// One key's deltas (DeltaFIFO; a RealFIFO's single pops); `before`: the store's
    /// version of the key before them.
    Deltas {
        key: String,
        deltas: Deltas,
        before: Option<ObjectRef>,
        initial: bool,
    },
    /// Deltas, each with the store's version before it, and the notices among them, in
    /// queue order: a batch pop, or a popped atomic relist or resync. `batch`: the number
    /// of queued deltas the pop took, when the queue pops in batches.
    Steps {
        steps: Vec<Step>,
        batch: Option<u32>,
        initial: bool,
    },
}

enum Step {
    Notice(ReflectorEvent),
    Delta(Applied),
}

/// Tallies a relist's (or resync's) deltas from its `Listed` (`Resync`) record on, and
/// fills its `Relisted` in. Every delta a Replace queues pops after the `Listed` pushed
/// before it and before the `Relisted` pushed after it (both queues keep notices in
/// order with the deltas queued around them), and each is compared with the version
/// before it, which holds whatever was queued before the relist: so the counts are the
/// relist's effect on the informer's state with either queue. A DeltaFIFO pop may hold
/// a key's older deltas too ([`Tally::count_key`] counts the relist's one only). Not
/// exact in one race: a DeltaFIFO key that a watch event reaches between the Replace
/// and its pop lets `Relisted` out first (no delta pops before a notice pushed
/// earlier), and that key is left out of the counts.
fn tally_pop(taken: &mut Taken, tally: &mut Option<Tally>) {
    fn notice(ev: &mut ReflectorEvent, tally: &mut Option<Tally>) {
        match ev {
            ReflectorEvent::Listed { .. } | ReflectorEvent::Resync => {
                *tally = Some(Tally::default())
            }
            ReflectorEvent::Relisted { .. } => tally.take().unwrap_or_default().fill(ev),
            _ => {}
        }
    }
    match taken {
        Taken::Notice(ev) => notice(ev, tally),
        Taken::Deltas {
            key,
            deltas,
            before,
            ..
        } => {
            if let Some(t) = tally {
                t.count_key(key, deltas, before.as_ref());
            }
        }
        Taken::Steps { steps, .. } => {
            for step in steps {
                match step {
                    Step::Notice(ev) => notice(ev, tally),
                    Step::Delta(a) => {
                        if let Some(t) = tally {
                            t.count(&a.key, &a.delta, a.prev.as_ref());
                        }
                    }
                }
            }
        }
    }
}

/// Applies a popped entry to `store` (the FIFO still locked, as client-go's
/// `Pop(process)`), keeping the version of each object known before its delta.
fn take(p: Popped<ReflectorEvent>, store: &Store, batches: bool) -> Taken {
    match p {
        Popped::Notice(n) => Taken::Notice(n),
        Popped::Deltas {
            key,
            deltas,
            is_in_initial_list,
        } => Taken::Deltas {
            before: store.apply(&deltas),
            key,
            deltas,
            initial: is_in_initial_list,
        },
        // A batch's keys are distinct: applying its deltas one by one is client-go's
        // transaction, and each one's previous version is the store's before the pop.
        Popped::Batch {
            entries,
            is_in_initial_list,
        } => {
            let mut n = 0;
            let steps = entries
                .into_iter()
                .map(|e| match e {
                    Batched::Notice(ev) => Step::Notice(ev),
                    Batched::Delta { key, delta } => {
                        n += 1;
                        let prev = store.apply(std::slice::from_ref(&delta));
                        Step::Delta(Applied { key, delta, prev })
                    }
                })
                .collect();
            Taken::Steps {
                steps,
                batch: Some(n),
                initial: is_in_initial_list,
            }
        }
        Popped::Atomic {
            delta,
            is_in_initial_list,
        } => Taken::Steps {
            steps: store
                .apply_atomic(&delta)
                .into_iter()
                .map(Step::Delta)
                .collect(),
            batch: batches.then_some(1),
            initial: is_in_initial_list,
        },
    }
}

/// One pop, and what the informer knew around it.
struct Pop<'a> {
    resource: &'a Target,
    context: Option<&'a str>,
    taken: &'a Taken,
    /// The run's informer (release and queue), for the records.
    informer: InformerInfo<'static>,
    /// `Some(objects held)` when this pop made the queue synced.
    synced_with: Option<usize>,
    /// No delta is queued after this pop.
    drained: bool,
    /// Said when this pop syncs an empty informer ([`consume`]'s `absent`).
    absent: Option<&'a str>,
}

impl Pop<'_> {
    fn record<'b>(&'b self, body: Body<'b>, batch: Option<u32>) -> Record<'b> {
        self.record_of(&self.resource.resource, body, batch)
    }

    /// [`Pop::record`] of another resource's delta (a held one the graph delivers now).
    fn record_of<'b>(
        &'b self,
        resource: &'b Resource,
        body: Body<'b>,
        batch: Option<u32>,
    ) -> Record<'b> {
        Record {
            resource,
            context: self.context,
            time: jiff::Timestamp::now(),
            body,
            informer: InformerInfo {
                batch,
                ..self.informer
            },
            blame: Default::default(),
            follow: None,
        }
    }

    /// Prints the pop's records into `sink`; `Some` when a stop condition was met.
    fn deliver<E: From<Error>>(
        &self,
        shared: &Shared<E>,
        sink: &mut Sink,
    ) -> io::Result<Option<Stop<E>>> {
        let stop = match self.taken {
            Taken::Notice(ev) => {
                sink.print(&self.record(Body::Event(ev), None), shared.targets)?;
                None
            }
            Taken::Deltas {
                key,
                deltas,
                before,
                initial,
            } => self.deliver_deltas(shared, sink, key, deltas, before.as_ref(), *initial)?,
            Taken::Steps {
                steps,
                batch,
                initial,
            } => self.deliver_steps(shared, sink, steps, *batch, *initial)?,
        };
        if stop.is_some() {
            return Ok(stop);
        }
        if let Some(known) = self.synced_with {
            sink.print(&self.record(Body::Synced, None), shared.targets)?;
            sink.synced += 1;
            let met = match (&shared.until, &sink.graph) {
                // --follow: the graph is empty once every informer has synced.
                (Some(Condition::Deleted), Some(g)) => {
                    sink.all_synced(shared.targets) && g.is_empty()
                }
                (Some(c), _) => c.met_when_synced(known),
                (None, _) => false,
            };
            if met {
                return Ok(Some(Stop::Met));
            }
            if shared.until_synced && sink.all_synced(shared.targets) {
                return Ok(Some(Stop::Done));
            }
            if let (0, Some(line)) = (known, self.absent) {
                sink.clear_progress();
                writeln!(io::stderr(), "~ {}", crate::text::sanitize(line))?;
            }
        }
        if self.drained {
            sink.flush()?;
        }
        Ok(None)
    }

    /// Prints a key's deltas, oldest first, each with the version before it: `before`,
    /// then the previous delta's object.
    fn deliver_deltas<E: From<Error>>(
        &self,
        shared: &Shared<E>,
        sink: &mut Sink,
        key: &str,
        deltas: &[Delta],
        before: Option<&ObjectRef>,
        initial_list: bool,
    ) -> io::Result<Option<Stop<E>>> {
        let mut prev = before;
        for delta in deltas {
            let body = Body::Delta {
                key,
                delta,
                initial_list,
                prev,
            };
            if let Some(stop) = self.deliver_delta(shared, sink, body, None)? {
                return Ok(Some(stop));
            }
            if let Some(stop) = self.deliver_ready(shared, sink)? {
                return Ok(Some(stop));
            }
            prev = delta.stored();
        }
        Ok(None)
    }

    /// Prints a batch pop's or an atomic delta's records, in order.
    fn deliver_steps<E: From<Error>>(
        &self,
        shared: &Shared<E>,
        sink: &mut Sink,
        steps: &[Step],
        batch: Option<u32>,
        initial_list: bool,
    ) -> io::Result<Option<Stop<E>>> {
        for step in steps {
            let a = match step {
                Step::Notice(ev) => {
                    sink.print(&self.record(Body::Event(ev), None), shared.targets)?;
                    continue;
                }
                Step::Delta(a) => a,
            };
            let body = Body::Delta {
                key: &a.key,
                delta: &a.delta,
                initial_list,
                prev: a.prev.as_ref(),
            };
            if let Some(stop) = self.deliver_delta(shared, sink, body, batch)? {
                return Ok(Some(stop));
            }
            if let Some(stop) = self.deliver_ready(shared, sink)? {
                return Ok(Some(stop));
            }
        }
        Ok(None)
    }

    /// Delivers the held deltas the graph has made ready (their owner, or an Event's
    /// object, joined), in order, each as its own informer would have: in its context,
    /// with the handler call its informer's listener makes (an OnAdd: a handler that
    /// filters by owner, as a controller's does, sees the object appear when it joins).
    fn deliver_ready<E: From<Error>>(
        &self,
        shared: &Shared<E>,
        sink: &mut Sink,
    ) -> io::Result<Option<Stop<E>>> {
        while let Some(h) = sink.graph.as_mut().and_then(Graph::next_ready) {
            let body = Body::Delta {
                key: &h.key,
                delta: &h.delta,
                initial_list: h.initial_list,
                prev: None,
            };
            let held = Pop {
                context: h.context.as_deref(),
                ..*self
            };
            if let Some(stop) = held.deliver_of(&h.resource, shared, sink, body, None)? {
                return Ok(Some(stop));
            }
        }
        Ok(None)
    }

    /// Prints the records of the members an orphaned object took out of the graph with it,
    /// after its own: shown or hidden by the filters as their deltas would be, no handler
    /// call (their informers delivered nothing), not counted by `--max-events`.
    fn deliver_left<E: From<Error>>(&self, shared: &Shared<E>, sink: &mut Sink) -> io::Result<()> {
        while let Some(l) = sink.graph.as_mut().and_then(Graph::next_left) {
            let body = Body::Delta {
                key: &l.key,
                delta: &l.delta,
                initial_list: false,
                prev: None,
            };
            let mut rec = self.record_of(&l.resource, body, None);
            rec.follow = Some(&l.followed);
            sink.emit(&rec, shared.filter.shows(&l.delta, None), shared.targets)?;
        }
        Ok(())
    }

    /// Prints one delta record (unless `--watch-only` hides it); `Some` when it meets
    /// `--until` or reaches `--max-events`.
    fn deliver_delta<E: From<Error>>(
        &self,
        shared: &Shared<E>,
        sink: &mut Sink,
        body: Body<'_>,
        batch: Option<u32>,
    ) -> io::Result<Option<Stop<E>>> {
        self.deliver_of(&self.resource.resource, shared, sink, body, batch)
    }

    /// [`Pop::deliver_delta`] of a delta of `resource`.
    fn deliver_of<E: From<Error>>(
        &self,
        resource: &Resource,
        shared: &Shared<E>,
        sink: &mut Sink,
        body: Body<'_>,
        batch: Option<u32>,
    ) -> io::Result<Option<Stop<E>>> {
        let Body::Delta {
            key,
            delta,
            prev,
            initial_list,
        } = body
        else {
            return Ok(None);
        };
        // The graph sees every delta, printed or not.
        let followed = match &mut sink.graph {
            Some(g) => match g.observe(
                resource,
                self.context,
                key,
                delta,
                initial_list,
                Instant::now(),
            ) {
                Verdict::Show(f) => Some(f),
                Verdict::Skip => return Ok(None),
            },
            None => None,
        };
        if shared.watch_only && initial_list {
            return Ok(None);
        }
        let met = match (&shared.until, &sink.graph) {
            // --follow: deleted when the whole graph is, which only a record of an object
            // leaving can make so (`gone` walks the graph).
            (Some(Condition::Deleted), Some(g)) if followed.is_some() => {
                followed.as_ref().is_some_and(|f| {
                    matches!(f.change, Some(GraphChange::Deleted | GraphChange::Orphaned))
                }) && g.gone()
            }
            (Some(c), _) => c.met_by(delta, prev),
            (None, _) => false,
        };
        // A hidden delta hides the handler call it makes, and neither counts for
        // --max-events.
        let shown = shared.filter.shows(delta, prev);
        let mut rec = self.record_of(resource, body, batch);
        rec.follow = followed.as_ref();
        sink.emit(&rec, shown, shared.targets)?;
        sink.deltas += u64::from(shown);
        // Fights are seen in every change, printed or not (filters are printing only).
        let fights = sink.conflicts.as_mut().map(|c| c.observe(&rec));
        for ev in fights.iter().flatten() {
            sink.print(
                &self.record_of(resource, Body::Event(ev), None),
                shared.targets,
            )?;
        }
        let call = sink
            .listener(&resource.name, self.context)
            .and_then(|l| handlers::call(delta, prev, initial_list, l));
        if let (Some(call), Body::Delta { key, .. }) = (&call, body) {
            let body = Body::Handler {
                key,
                call,
                initial_list,
            };
            // The call is made as the delta is processed: at its time.
            let rec = Record {
                body,
                blame: Default::default(),
                ..rec
            };
            sink.emit(&rec, shown, shared.targets)?;
            sink.handler_calls += u64::from(shown);
        }
        self.deliver_left(shared, sink)?;
        if met {
            return Ok(Some(Stop::Met));
        }
        if !shown {
            return Ok(None);
        }
        // --max-events counts what is shown: handler calls in their view.
        let shown = match shared.handler {
            Some(_) => sink.handler_calls,
            None => sink.deltas,
        };
        if shared.max_events.is_some_and(|m| shown >= m) {
            return Ok(Some(Stop::Done));
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::cache::delta_fifo::DeltaFifo;
    use crate::cache::real_fifo::RealFifo;
    use crate::cache::testutil::{object, Buf};
    use crate::client::target::Resource;
    use crate::output::{Format, Options, View};

    fn pod(name: &str, rv: &str) -> ObjectRef {
        object(&format!(
            r#"{{"kind":"Pod","apiVersion":"v1","metadata":{{"name":"{name}","namespace":"ns","resourceVersion":"{rv}"}}}}"#
        ))
    }

    fn target() -> Target {
        Target {
            resource: Resource {
                name: "pods".into(),
                kind: "Pod".into(),
                api_version: "v1".into(),
                namespaced: true,
            },
            group: String::new(),
            version: "v1".into(),
            plural: "pods".into(),
        }
    }

    /// Runs one informer loop over `fill`'s DeltaFIFO with these stop conditions; the JSON
    /// lines printed and how it stopped.
    async fn run(
        fill: impl FnOnce(&DeltaFifo<ReflectorEvent>),
        max_events: Option<u64>,
        until_synced: bool,
    ) -> (Vec<serde_json::Value>, Option<Stop<Error>>) {
        run_with(fill, max_events, until_synced, None).await
    }

    /// [`run`], with `handler`'s calls shown instead of the deltas when given.
    async fn run_with(
        fill: impl FnOnce(&DeltaFifo<ReflectorEvent>),
        max_events: Option<u64>,
        until_synced: bool,
        handler: Option<Registration>,
    ) -> (Vec<serde_json::Value>, Option<Stop<Error>>) {
        let store = Arc::new(Store::new());
        let fifo = DeltaFifo::new(Some(store.clone()), true);
        fill(&fifo);
        run_queue(
            fifo,
            store,
            InformerInfo::default(),
            max_events,
            until_synced,
            handler,
            Filter::default(),
        )
        .await
    }

    /// Runs one informer loop over a filled `fifo` whose known objects are `store`.
    async fn run_queue<Q: Queue<ReflectorEvent>>(
        fifo: Q,
        store: Arc<Store>,
        informer: InformerInfo<'static>,
        max_events: Option<u64>,
        until_synced: bool,
        handler: Option<Registration>,
        filter: Filter,
    ) -> (Vec<serde_json::Value>, Option<Stop<Error>>) {
        let out = Buf::default();
        let opts = Options {
            format: Format::Json,
            view: match handler {
                Some(_) => View::Handlers,
                None => View::Deltas,
            },
            ..Options::default()
        };
        let (tx, mut rx) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            sink: Mutex::new(Sink::new(
                crate::output::printer(opts, out.clone(), io::sink()),
                None,
            )),
            lists: Mutex::default(),
            targets: 1,
            max_events,
            until_synced,
            watch_only: false,
            filter,
            pop_delay: None,
            until: None,
            stop: tx,
            handler,
            caches: Mutex::default(),
        });
        let fifo = Arc::new(fifo);
        let task = tokio::spawn(consume(target(), None, informer, fifo, store, shared, None));
        let stop = tokio::time::timeout(Duration::from_secs(5), rx.recv())
            .await
            .ok()
            .flatten();
        task.abort();
        let text = out.text();
        let recs = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        (recs, stop)
    }

    /// `Type key@rv` of each record, with ` †` on tombstones, ` batch=N` and
    /// ` initial` when set; reflector events and Synced by their type.
    fn brief(recs: &[serde_json::Value]) -> Vec<String> {
        recs.iter()
            .map(|r| {
                let t = r["type"].as_str().unwrap();
                let Some(key) = r["key"].as_str() else {
                    return t.to_owned();
                };
                let mut s = format!("{t} {key}@{}", r["resourceVersion"].as_str().unwrap_or("-"));
                if r["finalStateUnknown"] == true {
                    s.push_str(" †");
                }
                if let Some(b) = r["batch"].as_u64() {
                    s.push_str(&format!(" batch={b}"));
                }
                if r["initialList"] == true {
                    s.push_str(" initial");
                }
                s
            })
            .collect()
    }

    /// A RealFIFO with 0.35's batch pops (and 0.36's atomic mode if `atomic`), and its store.
    fn batch_fifo(atomic: bool) -> (RealFifo<ReflectorEvent>, Arc<Store>) {
        use crate::cache::real_fifo::{RealFifoOptions, DEFAULT_BATCH_SIZE};
        let store = Arc::new(Store::new());
        let batch_size = Some(DEFAULT_BATCH_SIZE);
        let opts = RealFifoOptions { batch_size, atomic };
        (RealFifo::with_options(store.clone(), opts), store)
    }

    #[tokio::test]
    async fn an_atomic_relist_prints_its_tombstones_then_one_record_per_listed_object() {
        let (fifo, store) = batch_fifo(true);
        fifo.push_notice(ReflectorEvent::list("", 0, "initial", true));
        fifo.replace(vec![pod("a", "1"), pod("b", "2")], "2");
        fifo.replace(vec![pod("c", "4"), pod("b", "3")], "4");
        fifo.resync();
        let informer = InformerInfo {
            client_go: Some("0.36"),
            queue: Some("RealFIFO+batch+atomic"),
            batch: None,
        };
        let (recs, stop) = run_queue(
            fifo,
            store,
            informer,
            Some(7),
            false,
            None,
            Filter::default(),
        )
        .await;
        assert!(matches!(stop, Some(Stop::Done)));
        assert_eq!(
            brief(&recs),
            [
                "List",
                "ReplacedAll ns/a@1 batch=1 initial",
                "ReplacedAll ns/b@2 batch=1 initial",
                "Synced",
                "Deleted ns/a@1 † batch=1",
                "ReplacedAll ns/c@4 batch=1",
                "ReplacedAll ns/b@3 batch=1",
                "SyncAll ns/b@3 batch=1",
                "SyncAll ns/c@4 batch=1",
            ]
        );
        for r in [&recs[0], &recs[3]] {
            assert_eq!(r["clientGo"], "0.36", "{r}");
            assert_eq!(r["queue"], "RealFIFO+batch+atomic", "{r}");
        }
    }

    #[tokio::test]
    async fn batch_pops_take_distinct_keys_with_the_notices_among_them() {
        let (fifo, store) = batch_fifo(false);
        fifo.replace(vec![pod("a", "1"), pod("b", "2")], "2");
        fifo.update(pod("a", "3"));
        fifo.bookmark(ReflectorEvent::Bookmark {
            resource_version: "3".into(),
        });
        fifo.update(pod("b", "4"));
        fifo.update(pod("a", "5"));
        let (recs, _) = run_queue(
            fifo,
            store,
            InformerInfo::default(),
            Some(5),
            false,
            None,
            Filter::default(),
        )
        .await;
        assert_eq!(
            brief(&recs),
            [
                // The first Replace's deltas are a batch of their own.
                "Replaced ns/a@1 batch=2 initial",
                "Replaced ns/b@2 batch=2 initial",
                "Synced",
                // A bookmark does not close a batch before 0.36; a second `a` does.
                "Updated ns/a@3 batch=2",
                "Bookmark",
                "Updated ns/b@4 batch=2",
                "Updated ns/a@5 batch=1",
            ]
        );
    }

    #[tokio::test]
    async fn stops_after_max_events_deltas_without_a_terminal() {
        let (recs, stop) = run(
            |q| {
                q.push_notice(ReflectorEvent::Resync);
                q.replace(vec![pod("a", "1"), pod("b", "2"), pod("c", "3")], "3");
            },
            Some(2),
            false,
        )
        .await;
        assert!(matches!(stop, Some(Stop::Done)));
        let types: Vec<&str> = recs.iter().map(|r| r["type"].as_str().unwrap()).collect();
        assert_eq!(types, ["Resync", "Replaced", "Replaced"]);
        assert_eq!(recs[1]["key"], "ns/a");
        assert_eq!(recs[1]["initialList"], true);
    }

    #[tokio::test]
    async fn until_synced_stops_after_the_synced_record() {
        let (recs, stop) = run(
            |q| q.replace(vec![pod("a", "1"), pod("b", "2")], "2"),
            None,
            true,
        )
        .await;
        assert!(matches!(stop, Some(Stop::Done)));
        let types: Vec<&str> = recs.iter().map(|r| r["type"].as_str().unwrap()).collect();
        assert_eq!(types, ["Replaced", "Replaced", "Synced"]);
    }

    /// `(handler, key, oldResourceVersion, resourceVersion)` of the handler calls.
    fn handler_calls(recs: &[serde_json::Value]) -> Vec<String> {
        recs.iter()
            .filter(|r| r["type"] == "HandlerCall")
            .map(|r| {
                let s = |f: &str| r[f].as_str().unwrap_or("-").to_owned();
                format!(
                    "{} {} {}→{}",
                    s("handler"),
                    s("key"),
                    s("oldResourceVersion"),
                    s("resourceVersion")
                )
            })
            .collect()
    }

    #[tokio::test]
    async fn the_handler_view_shows_calls_and_counts_them_for_max_events() {
        // All in the queue before the first pop: a's and b's deltas coalesce.
        let fill = |q: &DeltaFifo<ReflectorEvent>| {
            q.replace(vec![pod("a", "1"), pod("b", "2")], "2");
            q.update(pod("a", "3"));
            // A relist: b unchanged, a gone.
            q.replace(vec![pod("b", "2")], "4");
            q.add(pod("c", "5"));
        };
        let (recs, stop) = run_with(fill, Some(5), false, Some(Registration::default())).await;
        assert!(matches!(stop, Some(Stop::Done)), "{recs:#?}");
        assert!(
            recs.iter().all(|r| r["type"] == "HandlerCall"),
            "no delta records in this view: {recs:#?}"
        );
        assert_eq!(
            handler_calls(&recs),
            [
                "OnAdd ns/a -→1",
                "OnUpdate ns/a 1→3",
                "OnDelete ns/a -→3",
                "OnAdd ns/b -→2",
                // The relist's unchanged b: a sync notification, which reaches a handler
                // without a resync period (its listener never leaves the syncing set).
                "OnUpdate ns/b 2→2",
            ],
            "--max-events 5 stops after the fifth call"
        );
        assert_eq!(recs[0]["isInInitialList"], true);
        assert_eq!(recs[2]["finalStateUnknown"], true);
        assert_eq!(recs[3]["isInInitialList"], true);
    }

    /// An object of `kind` with `uid`, owned (as its controller) by the object of
    /// `owner` when given.
    fn owned(kind: &str, name: &str, uid: &str, owner: Option<&str>, rv: &str) -> ObjectRef {
        let refs = owner
            .map(|o| format!(r#","ownerReferences":[{{"uid":"{o}","controller":true}}]"#))
            .unwrap_or_default();
        object(&format!(
            r#"{{"kind":"{kind}","apiVersion":"v1","metadata":{{"name":"{name}","namespace":"ns","uid":"{uid}","resourceVersion":"{rv}"{refs}}}}}"#
        ))
    }

    fn target_of(name: &str, kind: &str) -> Target {
        let mut t = target();
        t.resource.name = name.into();
        t.resource.kind = kind.into();
        t.plural = name.split('.').next().unwrap_or(name).into();
        t
    }

    /// `--follow --view handlers`: the three informers of a Deployment's graph (a
    /// ReplicaSet, its Pod) pop their initial lists one after the other, in every order.
    /// A child popped before its owner joined is held, then delivered by the pop that
    /// makes its owner join, another informer's: its OnAdd is made all the same, by the
    /// listener of its own informer, so every object of the graph gets exactly one.
    #[tokio::test]
    async fn every_object_of_a_followed_graph_gets_its_handler_call_whatever_the_pop_order() {
        let informers = [
            (
                target_of("deployments.apps", "Deployment"),
                owned("Deployment", "web", "u1", None, "1"),
            ),
            (
                target_of("replicasets.apps", "ReplicaSet"),
                owned("ReplicaSet", "web-1", "u2", Some("u1"), "2"),
            ),
            (
                target_of("pods", "Pod"),
                owned("Pod", "web-1-a", "u3", Some("u2"), "3"),
            ),
        ];
        let orders = [
            [0, 1, 2],
            [0, 2, 1],
            [1, 0, 2],
            [1, 2, 0],
            [2, 0, 1],
            [2, 1, 0],
        ];
        for order in orders {
            let out = Buf::default();
            let opts = Options {
                format: Format::Json,
                view: View::Handlers,
                ..Options::default()
            };
            let mut sink = Sink::new(crate::output::printer(opts, out.clone(), io::sink()), None);
            sink.graph = Some(Graph::new(["deployments.apps".to_owned()], None));
            let (tx, _rx) = mpsc::unbounded_channel();
            let shared: Arc<Shared<Error>> = Arc::new(Shared {
                sink: Mutex::new(sink),
                lists: Mutex::default(),
                targets: informers.len(),
                max_events: None,
                until_synced: false,
                watch_only: false,
                filter: Filter::default(),
                pop_delay: None,
                until: None,
                stop: tx,
                handler: Some(Registration::default()),
                caches: Mutex::default(),
            });
            for i in order {
                let (t, o) = &informers[i];
                let store = Arc::new(Store::new());
                let fifo = DeltaFifo::new(Some(store.clone()), true);
                fifo.replace(vec![o.clone()], o.resource_version());
                // Its initial list is popped to the end, then the loop returns.
                fifo.close();
                let info = InformerInfo::default();
                let (t, fifo) = (t.clone(), Arc::new(fifo));
                consume(t, None, info, fifo, store, shared.clone(), None).await;
            }
            let recs: Vec<serde_json::Value> = out
                .text()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            let mut calls = handler_calls(&recs);
            calls.sort();
            assert_eq!(
                calls,
                [
                    "OnAdd ns/web -→1",
                    "OnAdd ns/web-1 -→2",
                    "OnAdd ns/web-1-a -→3"
                ],
                "pop order {order:?}: {recs:#?}"
            );
            for r in recs.iter().filter(|r| r["type"] == "HandlerCall") {
                assert_eq!(r["isInInitialList"], true, "{r}");
                let resource = match r["kind"].as_str() {
                    Some("Deployment") => "deployments.apps",
                    Some("ReplicaSet") => "replicasets.apps",
                    _ => "pods",
                };
                assert_eq!(r["resource"], resource, "{r}");
            }
        }
    }

    fn cm(name: &str, rv: &str, uid: &str) -> ObjectRef {
        object(&format!(
            r#"{{"kind":"ConfigMap","apiVersion":"v1","metadata":{{"name":"{name}","namespace":"ns","resourceVersion":"{rv}","uid":"{uid}"}}}}"#
        ))
    }

    /// An initial list of a, b, c, e, and a relist (queued before either is popped, so
    /// a DeltaFIFO coalesces each key's two deltas) where a is unchanged, b changed, c
    /// re-created, d new and e gone.
    /// The records of [`initial_then_relist`] through `fifo`.
    async fn relist_through<Q: Queue<ReflectorEvent>>(
        fifo: Q,
        store: Arc<Store>,
        filter: Filter,
    ) -> Vec<serde_json::Value> {
        initial_then_relist(&fifo);
        let info = InformerInfo::default();
        run_queue(fifo, store, info, None, false, None, filter)
            .await
            .0
    }

    fn initial_then_relist<Q: Queue<ReflectorEvent>>(q: &Q) {
        q.replace(
            vec![
                cm("a", "1", "ua"),
                cm("b", "2", "ub"),
                cm("c", "3", "uc"),
                cm("e", "4", "ue"),
            ],
            "4",
        );
        q.push_notice(ReflectorEvent::Listed {
            resource_version: "9".into(),
            items: 4,
            pages: 1,
            elapsed: Duration::ZERO,
            full_list_fallback: false,
            streaming: false,
            encoding: Some("json".into()),
            bytes: Some(4214),
            wire_bytes: Some(4214),
        });
        q.replace(
            vec![
                cm("a", "1", "ua"),
                cm("b", "5", "ub"),
                cm("c", "6", "uc2"),
                cm("d", "7", "ud"),
            ],
            "9",
        );
        q.push_notice(ReflectorEvent::relisted("9", false));
    }

    async fn relist_with(real: bool, filter: Filter) -> (Vec<serde_json::Value>, Vec<String>) {
        let store = Arc::new(Store::new());
        let recs = if real {
            relist_through(
                crate::cache::real_fifo::RealFifo::new(store.clone()),
                store,
                filter,
            )
            .await
        } else {
            relist_through(DeltaFifo::new(Some(store.clone()), true), store, filter).await
        };
        let b = brief(&recs);
        (recs, b)
    }

    #[tokio::test]
    async fn a_relist_is_summarised_exactly_with_either_queue() {
        for real in [false, true] {
            let (recs, _) = relist_with(real, Filter::default()).await;
            let r: Vec<&serde_json::Value> =
                recs.iter().filter(|r| r["type"] == "Relisted").collect();
            assert_eq!(r.len(), 1, "real={real} {recs:#?}");
            let class = |c: &str| (r[0][c]["count"].clone(), r[0][c]["keys"].clone());
            let one = |k: &str| (serde_json::json!(1), serde_json::json!([k]));
            assert_eq!(class("added"), one("ns/d"), "real={real}");
            assert_eq!(class("deleted"), one("ns/e"), "real={real}");
            assert_eq!(class("changed"), one("ns/b"), "real={real}");
            assert_eq!(class("recreated"), one("ns/c"), "real={real}");
            assert_eq!(class("unchanged"), one("ns/a"), "real={real}");
            assert_eq!(r[0]["resourceVersion"], "9");
            let recreated: Vec<&serde_json::Value> =
                recs.iter().filter(|r| r["recreated"] == true).collect();
            assert_eq!(recreated.len(), 1, "real={real} {recs:#?}");
            assert_eq!(recreated[0]["key"], "ns/c");
        }
    }

    #[tokio::test]
    async fn quiet_relists_hide_only_the_unchanged_relisted_deltas() {
        let quiet = Filter {
            quiet_relists: true,
            ..Filter::default()
        };
        for real in [false, true] {
            let (_, all) = relist_with(real, Filter::default()).await;
            let (_, shown) = relist_with(real, quiet.clone()).await;
            let mut hidden = all.clone();
            for l in &shown {
                if let Some(i) = hidden.iter().position(|h| h == l) {
                    hidden.remove(i);
                }
            }
            // a's relisted Replaced (the initial list's is shown), nothing else; a
            // DeltaFIFO pops it with the initial list's, coalesced.
            assert_eq!(hidden.len(), 1, "real={real} {all:#?} {shown:#?}");
            assert!(
                hidden[0].starts_with("Replaced ns/a@1"),
                "real={real} {hidden:?}"
            );
            assert_eq!(all.len(), shown.len() + 1, "real={real}");
            assert!(shown.iter().any(|l| l == "Relisted"));
        }
    }
}
