//! The informer loop: for each resource, pop the queue, apply the deltas to the store
//! (under the queue's lock, as client-go's `Pop(process)` does), turn them into records,
//! hand them to the run's one shared [`Delivery`] (its [`Sink`]s and [`Observer`]s), and
//! decide whether to stop (`--max-events`, `--until`, `--until-synced`, a closed output).
//! It knows no terminal and no printer: the sinks are whatever the application gave, so it
//! runs as well against an in-memory buffer.
//!
//! The version of the object the store held before a pop is captured in the same closure
//! as the pop, so `--diff`, `--until created` and `-o watch-events` see exactly what the
//! informer knew before each delta. A batch pop (client-go ≥ 0.35) prints its deltas, and
//! the reflector's records among them, in queue order, each with the `batch` size; a popped
//! atomic relist or resync (0.36) prints what `Store::apply_atomic` makes of it.
//! With `--view handlers`, each delta is followed by the handler call it makes
//! ([`crate::cache::handlers`]), if any.

use std::io;
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
use crate::context::ContextName;
use crate::informer::filter::{Filter, Tally};
use crate::informer::follow::{Graph, Verdict};
use crate::informer::record::{Body, GraphChange, InformerInfo, Notice, Observation, Record};
use crate::informer::sink::{Observer, Sink};
use crate::informer::until::Condition;

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

/// What every informer of a run delivers into, under one lock: the sinks and observers,
/// and the counts that decide when the run stops.
pub struct Delivery {
    /// The sinks, each taking every record in order (`--record`'s first, then the
    /// printer).
    pub sinks: Vec<Box<dyn Sink>>,
    /// The features that watch every record and pop ([`Observer`]).
    pub observers: Vec<Box<dyn Observer>>,
    /// Deltas printed so far.
    pub deltas: u64,
    /// Handler calls printed so far (`--view handlers`).
    pub handler_calls: u64,
    /// Every informer of the run (resource and context), as it started ([`Shared::join`]):
    /// waiting for its first sync, synced, or left out before it synced (the server refused
    /// it, or its context stopped: [`Shared::leave_out`]). A context that comes back later
    /// joins again.
    informers: std::collections::BTreeMap<(String, Option<ContextName>), Informer>,
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
    listeners: Vec<(String, Option<ContextName>, Listener)>,
}

impl Delivery {
    pub fn new(sinks: Vec<Box<dyn Sink>>) -> Delivery {
        Delivery {
            sinks,
            observers: Vec::new(),
            deltas: 0,
            handler_calls: 0,
            informers: std::collections::BTreeMap::new(),
            finished: false,
            conflicts: None,
            end_costs: Vec::new(),
            graph: None,
            listeners: Vec::new(),
        }
    }

    /// The listener of `resource`'s informer in `context`, once registered.
    fn listener(&mut self, resource: &str, context: Option<&ContextName>) -> Option<&mut Listener> {
        self.listeners
            .iter_mut()
            .find(|(r, c, _)| r == resource && c.as_ref() == context)
            .map(|(_, _, l)| l)
    }

    /// Hands one record to the observers and the sinks.
    fn print(&mut self, rec: &Record<'_>) -> io::Result<()> {
        let waiting = self.awaited();
        for o in &mut self.observers {
            o.record(rec, true, waiting);
        }
        for s in &mut self.sinks {
            s.record(rec)?;
        }
        Ok(())
    }

    /// Counts a record a filter hides and records it (`--record` keeps everything the
    /// informer did), without printing it.
    fn hide(&mut self, rec: &Record<'_>) -> io::Result<()> {
        let waiting = self.awaited();
        for o in &mut self.observers {
            o.record(rec, false, waiting);
        }
        for s in &mut self.sinks {
            s.hidden(rec)?;
        }
        Ok(())
    }

    /// [`Delivery::print`] `rec`, or [`Delivery::hide`] it.
    fn emit(&mut self, rec: &Record<'_>, shown: bool) -> io::Result<()> {
        if shown {
            self.print(rec)
        } else {
            self.hide(rec)
        }
    }

    /// The observer of type `T`, if one was added.
    pub fn observer<T: Observer>(&self) -> Option<&T> {
        self.observers
            .iter()
            .find_map(|o| (&**o as &dyn std::any::Any).downcast_ref::<T>())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        for s in &mut self.sinks {
            s.flush()?;
        }
        Ok(())
    }

    /// A line for people (`~ …`), to every sink that shows diagnostics.
    pub fn diagnostic(&mut self, line: &str) -> io::Result<()> {
        for s in &mut self.sinks {
            s.diagnostic(line)?;
        }
        Ok(())
    }

    /// The run ends: everything out, held output too.
    pub fn finish(&mut self) -> io::Result<()> {
        for s in &mut self.sinks {
            s.finish()?;
        }
        Ok(())
    }

    /// Every informer has synced or been left out.
    pub fn all_synced(&self) -> bool {
        self.informers.values().all(|i| *i != Informer::Waiting)
    }

    /// The informers started (resources × contexts).
    pub fn targets(&self) -> usize {
        self.informers.len()
    }

    /// The informers that have synced.
    pub fn synced(&self) -> usize {
        self.count(Informer::Synced)
    }

    /// The informers the run still counts on: those not left out.
    pub fn awaited(&self) -> usize {
        self.targets() - self.count(Informer::LeftOut)
    }

    fn count(&self, state: Informer) -> usize {
        self.informers.values().filter(|i| **i == state).count()
    }

    /// An informer's state changes.
    fn set(&mut self, resource: &str, context: Option<&ContextName>, state: Informer) {
        self.informers
            .insert((resource.to_owned(), context.cloned()), state);
    }
}

/// Where an informer is, for [`Delivery::all_synced`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Informer {
    Waiting,
    Synced,
    LeftOut,
}

/// What every informer loop of a run shares: the delivery and the stop conditions.
pub struct Shared<E> {
    pub delivery: Mutex<Delivery>,
    /// Every reflector's list progress, for the progress line.
    pub lists: Mutex<Vec<Arc<ListProgress>>>,
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
    pub context: Option<ContextName>,
    pub cost: Arc<StoreCost>,
}

impl<E: From<Error>> Shared<E> {
    pub fn lock(&self) -> std::sync::MutexGuard<'_, Delivery> {
        self.delivery.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self, f: impl FnOnce(&mut Delivery) -> io::Result<Option<Stop<E>>>) {
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
    pub fn print_end(&self, sink: &mut Delivery) -> io::Result<()> {
        if sink.finished {
            return Ok(());
        }
        let caches = self.caches.lock().unwrap_or_else(|e| e.into_inner());
        for c in caches.iter() {
            let ob = Observation::CacheStats(c.cost.measure());
            let rec = Record::new(
                &c.resource,
                c.context.as_ref(),
                jiff::Timestamp::now(),
                Body::Observed(&ob),
            );
            let printed = sink.print(&rec);
            if let Observation::CacheStats(cost) = ob {
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

    /// Prints an observation no informer loop popped (`--probe`'s latencies,
    /// `--freshness`' lags), flushed.
    pub fn print_observation(
        &self,
        resource: &crate::client::target::Resource,
        context: Option<&ContextName>,
        ob: &Observation,
    ) {
        self.write(|sink| {
            let rec = Record::new(
                resource,
                context,
                jiff::Timestamp::now(),
                Body::Observed(ob),
            );
            sink.print(&rec)?;
            sink.flush()?;
            Ok(None)
        });
    }

    /// An informer starts (its reflector and loop are about to): the run waits for its
    /// first sync too, and the sinks learn of it ([`Sink::joined`]). Called before its
    /// loop is spawned; again for an informer of a context that comes back.
    pub fn join(&self, resource: &str, context: Option<&ContextName>) {
        self.write(|sink| {
            sink.set(resource, context, Informer::Waiting);
            for s in &mut sink.sinks {
                s.joined(resource, context)?;
            }
            Ok(None)
        });
    }

    /// A line for people (`~ …`) from outside the informers (the application's own), to
    /// the sinks' diagnostics.
    pub fn say(&self, line: &str) {
        self.write(|sink| {
            sink.diagnostic(line)?;
            Ok(None)
        });
    }

    /// Leaves out a resource whose reflector ended before its first sync because the
    /// server refused it (`kwatch all`, `--every-resource`): `line` says so once to the
    /// sinks' diagnostics, and the others go on. The run fails when no resource is left,
    /// and with `--until-synced` ends when the others have all synced.
    pub fn skip(&self, line: &str, resource: &str, context: Option<&ContextName>) {
        self.leave_out(line, resource, context, |targets| {
            Error::NothingWatchable(targets).into()
        });
    }

    /// Leaves out one resource that will never sync, as [`Shared::skip`] does, saying
    /// `line`; when none is left, the run fails with `none_left(targets)`'s error.
    pub fn leave_out(
        &self,
        line: &str,
        resource: &str,
        context: Option<&ContextName>,
        none_left: impl FnOnce(usize) -> E,
    ) {
        self.write(|sink| {
            sink.diagnostic(line)?;
            sink.set(resource, context, Informer::LeftOut);
            for s in &mut sink.sinks {
                s.left_out(resource, context)?;
            }
            if sink.awaited() == 0 {
                return Ok(Some(Stop::Failed(none_left(sink.targets()))));
            }
            Ok((self.until_synced && sink.all_synced()).then_some(Stop::Done))
        });
    }

    /// The informers of `context` stop (the application stops or restarts that cluster),
    /// said in one `line`: each is left out, and the others go on, however many are left.
    /// Those it starts again [`join`](Shared::join) anew.
    pub fn stop_context(&self, line: &str, context: &ContextName) {
        self.write(|sink| {
            sink.diagnostic(line)?;
            let mine: Vec<String> = sink
                .informers
                .iter()
                .filter(|((_, c), state)| {
                    c.as_ref() == Some(context) && **state != Informer::LeftOut
                })
                .map(|((r, _), _)| r.clone())
                .collect();
            for resource in mine {
                sink.set(&resource, Some(context), Informer::LeftOut);
                for s in &mut sink.sinks {
                    s.left_out(&resource, Some(context))?;
                }
            }
            Ok((self.until_synced && sink.all_synced()).then_some(Stop::Done))
        });
    }
}

/// The informer's processing loop for one resource: until the queue closes or a stop
/// condition is met. `informer`: its release and queue, for the records. `absent`: the
/// `~` line to tell the sinks, once, when the initial list syncs with no object (a watch of
/// one name whose object does not exist yet), unless that sync ends the run.
pub async fn consume<Q: Queue<Notice = Notice>, E: From<Error>>(
    t: Target,
    context: Option<ContextName>,
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
        let resync = matches!(
            taken,
            Taken::Notice(Notice::Reflector(ReflectorEvent::Resync))
        );
        let had_deltas = !matches!(taken, Taken::Notice(_));
        let now_synced = !synced && fifo.has_synced();
        synced |= now_synced;
        let pop = Pop {
            resource: &t,
            context: context.as_ref(),
            taken: &taken,
            informer,
            // How many objects the informer holds when it has just synced.
            synced_with: now_synced.then(|| store.len()),
            drained: fifo.is_empty(),
            absent: absent.as_deref(),
        };
        shared.write(|sink| {
            if resync {
                if let Some(l) = sink.listener(&t.resource.name, context.as_ref()) {
                    l.resync_check(Instant::now());
                }
            }
            let (resource, ctx) = (&t.resource.name, context.as_ref());
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
    Notice(Notice),
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
    Notice(Notice),
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
    fn notice(n: &mut Notice, tally: &mut Option<Tally>) {
        match n {
            Notice::Reflector(ReflectorEvent::Listed { .. } | ReflectorEvent::Resync) => {
                *tally = Some(Tally::default())
            }
            Notice::Reflector(ev @ ReflectorEvent::Relisted { .. }) => {
                tally.take().unwrap_or_default().fill(ev)
            }
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
fn take(p: Popped<Notice>, store: &Store, batches: bool) -> Taken {
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
    context: Option<&'a ContextName>,
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
        sink: &mut Delivery,
    ) -> io::Result<Option<Stop<E>>> {
        let stop = match self.taken {
            Taken::Notice(n) => {
                sink.print(&self.record(n.body(), None))?;
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
            sink.set(&self.resource.resource.name, self.context, Informer::Synced);
            sink.print(&self.record(Body::Synced, None))?;
            let met = match (&shared.until, &sink.graph) {
                // --follow: the graph is empty once every informer has synced.
                (Some(Condition::Deleted), Some(g)) => sink.all_synced() && g.is_empty(),
                (Some(c), _) => c.met_when_synced(known),
                (None, _) => false,
            };
            if met {
                return Ok(Some(Stop::Met));
            }
            if shared.until_synced && sink.all_synced() {
                return Ok(Some(Stop::Done));
            }
            if let (0, Some(line)) = (known, self.absent) {
                sink.diagnostic(&format!("~ {line}"))?;
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
        sink: &mut Delivery,
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
        sink: &mut Delivery,
        steps: &[Step],
        batch: Option<u32>,
        initial_list: bool,
    ) -> io::Result<Option<Stop<E>>> {
        for step in steps {
            let a = match step {
                Step::Notice(n) => {
                    sink.print(&self.record(n.body(), None))?;
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
        sink: &mut Delivery,
    ) -> io::Result<Option<Stop<E>>> {
        while let Some(h) = sink.graph.as_mut().and_then(Graph::next_ready) {
            let body = Body::Delta {
                key: &h.key,
                delta: &h.delta,
                initial_list: h.initial_list,
                prev: None,
            };
            let held = Pop {
                context: h.context.as_ref(),
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
    fn deliver_left<E: From<Error>>(
        &self,
        shared: &Shared<E>,
        sink: &mut Delivery,
    ) -> io::Result<()> {
        while let Some(l) = sink.graph.as_mut().and_then(Graph::next_left) {
            let body = Body::Delta {
                key: &l.key,
                delta: &l.delta,
                initial_list: false,
                prev: None,
            };
            let mut rec = self.record_of(&l.resource, body, None);
            rec.follow = Some(&l.followed);
            sink.emit(&rec, shared.filter.shows(&l.delta, None))?;
        }
        Ok(())
    }

    /// Prints one delta record (unless `--watch-only` hides it); `Some` when it meets
    /// `--until` or reaches `--max-events`.
    fn deliver_delta<E: From<Error>>(
        &self,
        shared: &Shared<E>,
        sink: &mut Delivery,
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
        sink: &mut Delivery,
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
        sink.emit(&rec, shown)?;
        sink.deltas += u64::from(shown);
        // Fights are seen in every change, printed or not (filters are printing only).
        let fights = sink.conflicts.as_mut().map(|c| rec.conflicts(c));
        for ob in fights.iter().flatten() {
            sink.print(&self.record_of(resource, Body::Observed(ob), None))?;
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
            sink.emit(&rec, shown)?;
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
    use crate::cache::handlers::HandlerCall;
    use crate::cache::real_fifo::RealFifo;
    use crate::cache::testutil::object;
    use crate::client::target::Resource;
    use serde_json::{json, Value};

    /// A sink keeping each record as the fields these tests read, named as the records
    /// name them (docs/output-schema.md): the informer's tests need no printer. With
    /// `handlers`, it keeps handler calls and no delta (the handler view), else deltas.
    #[derive(Clone, Default)]
    struct Kept {
        records: Arc<Mutex<Vec<Value>>>,
        handlers: bool,
    }

    impl Kept {
        fn taken(&self) -> Vec<Value> {
            std::mem::take(&mut *self.records.lock().unwrap())
        }
    }

    impl Sink for Kept {
        fn record(&mut self, rec: &Record<'_>) -> io::Result<()> {
            let mut v = match rec.body {
                Body::Delta { .. } if self.handlers => return Ok(()),
                Body::Handler { .. } if !self.handlers => return Ok(()),
                Body::Delta {
                    key, delta, prev, ..
                } => {
                    let o = delta.object.object();
                    json!({
                        "type": delta.kind.as_str(),
                        "key": key,
                        "resourceVersion": o.map(|o| o.resource_version()),
                        "finalStateUnknown": delta.object.is_tombstone(),
                        "recreated": matches!((o, prev), (Some(o), Some(p)) if o.recreated_from(p)),
                    })
                }
                Body::Handler { key, call, .. } => json!({
                    "type": "HandlerCall",
                    "handler": call.name(),
                    "key": key,
                    "kind": rec.resource.kind,
                    "oldResourceVersion": call.old().map(|o| o.resource_version()),
                    "resourceVersion": call.object().map(|o| o.resource_version()),
                    "finalStateUnknown": call.final_state_unknown(),
                }),
                Body::Event(e) => serde_json::to_value(e).unwrap(),
                Body::Observed(o) => serde_json::to_value(o).unwrap(),
                Body::Synced => json!({"type": "Synced"}),
            };
            let initial = match rec.body {
                Body::Delta { initial_list, .. } => Some(initial_list),
                Body::Handler {
                    call:
                        HandlerCall::OnAdd {
                            is_in_initial_list, ..
                        },
                    ..
                } => Some(*is_in_initial_list),
                _ => None,
            };
            v["initialList"] = json!(initial.filter(|_| !self.handlers));
            v["isInInitialList"] = json!(initial.filter(|_| self.handlers));
            v["resource"] = json!(rec.resource.name);
            v["batch"] = json!(rec.informer.batch);
            v["clientGo"] = json!(rec.informer.client_go);
            v["queue"] = json!(rec.informer.queue);
            self.records.lock().unwrap().push(v);
            Ok(())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

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
        fill: impl FnOnce(&DeltaFifo<Notice>),
        max_events: Option<u64>,
        until_synced: bool,
    ) -> (Vec<serde_json::Value>, Option<Stop<Error>>) {
        run_with(fill, max_events, until_synced, None).await
    }

    /// [`run`], with `handler`'s calls shown instead of the deltas when given.
    async fn run_with(
        fill: impl FnOnce(&DeltaFifo<Notice>),
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
    async fn run_queue<Q: Queue<Notice = Notice>>(
        fifo: Q,
        store: Arc<Store>,
        informer: InformerInfo<'static>,
        max_events: Option<u64>,
        until_synced: bool,
        handler: Option<Registration>,
        filter: Filter,
    ) -> (Vec<serde_json::Value>, Option<Stop<Error>>) {
        let out = Kept {
            handlers: handler.is_some(),
            ..Kept::default()
        };
        let (tx, mut rx) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            delivery: Mutex::new(Delivery::new(vec![Box::new(out.clone())])),
            lists: Mutex::default(),
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
        shared.join("pods", None);
        let task = tokio::spawn(consume(target(), None, informer, fifo, store, shared, None));
        let stop = tokio::time::timeout(Duration::from_secs(5), rx.recv())
            .await
            .ok()
            .flatten();
        task.abort();
        (out.taken(), stop)
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
    fn batch_fifo(atomic: bool) -> (RealFifo<Notice>, Arc<Store>) {
        use crate::cache::real_fifo::{RealFifoOptions, DEFAULT_BATCH_SIZE};
        let store = Arc::new(Store::new());
        let batch_size = Some(DEFAULT_BATCH_SIZE);
        let opts = RealFifoOptions { batch_size, atomic };
        (RealFifo::with_options(store.clone(), opts), store)
    }

    #[tokio::test]
    async fn an_atomic_relist_prints_its_tombstones_then_one_record_per_listed_object() {
        let (fifo, store) = batch_fifo(true);
        fifo.push_notice(ReflectorEvent::list("", 0, "initial", true).into());
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
        fifo.bookmark(
            ReflectorEvent::Bookmark {
                resource_version: "3".into(),
            }
            .into(),
        );
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
                q.push_notice(ReflectorEvent::Resync.into());
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
        let fill = |q: &DeltaFifo<Notice>| {
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
            let out = Kept {
                handlers: true,
                ..Kept::default()
            };
            let mut sink = Delivery::new(vec![Box::new(out.clone())]);
            sink.graph = Some(Graph::new(["deployments.apps".to_owned()], None));
            let (tx, _rx) = mpsc::unbounded_channel();
            let shared: Arc<Shared<Error>> = Arc::new(Shared {
                delivery: Mutex::new(sink),
                lists: Mutex::default(),
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
            for (t, _) in &informers {
                shared.join(&t.resource.name, None);
            }
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
            let recs = out.taken();
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
    async fn relist_through<Q: Queue<Notice = Notice>>(
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

    fn initial_then_relist<Q: Queue<Notice = Notice>>(q: &Q) {
        q.replace(
            vec![
                cm("a", "1", "ua"),
                cm("b", "2", "ub"),
                cm("c", "3", "uc"),
                cm("e", "4", "ue"),
            ],
            "4",
        );
        q.push_notice(
            ReflectorEvent::Listed {
                resource_version: "9".into(),
                items: 4,
                pages: 1,
                elapsed: Duration::ZERO,
                full_list_fallback: false,
                streaming: false,
                encoding: Some("json".into()),
                bytes: Some(4214),
                wire_bytes: Some(4214),
            }
            .into(),
        );
        q.replace(
            vec![
                cm("a", "1", "ua"),
                cm("b", "5", "ub"),
                cm("c", "6", "uc2"),
                cm("d", "7", "ud"),
            ],
            "9",
        );
        q.push_notice(ReflectorEvent::relisted("9", false).into());
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
