//! The informer loop: for each resource, pop the queue, apply the deltas to the store
//! (under the queue's lock, as client-go's `Pop(process)` does), turn them into records,
//! print them into the one shared [`Sink`], and decide whether to stop (`--max-events`,
//! `--until`, `--until-synced`, a closed output). It knows no terminal: the printers are
//! whatever the sink was given, so it runs as well against an in-memory buffer.
//!
//! The version of the object the store held before a pop is captured in the same closure
//! as the pop, so `--diff`, `--until created` and `-o watch-events` see exactly what the
//! informer knew before each delta.

use std::io::{self, Write as _};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::mpsc;

use crate::object::ObjectRef;
use crate::output::{progress, Body, Printer, Record};
use crate::queue::{Popped, Queue};
use crate::reflector::{ListProgress, ReflectorEvent};
use crate::stats::Stats;
use crate::store::Store;
use crate::target::Target;
use crate::until::Condition;

/// Why the informers stop.
pub(crate) enum Stop {
    Done,
    Met,
    Failed(anyhow::Error),
}

/// Shared by the consumers: the printer and the counters that decide when to stop.
pub(crate) struct Sink {
    pub printer: Box<dyn Printer>,
    /// `--record FILE`: the JSON-lines records, whatever `printer` shows.
    pub recorder: Option<Box<dyn Printer>>,
    pub stats: Option<Stats>,
    /// Deltas printed so far.
    pub deltas: u64,
    /// Resources that have synced.
    pub synced: usize,
    /// Resources left out because the server refused them before they synced
    /// ([`Shared::skip`]); they never sync.
    pub skipped: usize,
    /// Progress is on stderr now (a terminal line to clear before stdout writes).
    pub progress_shown: bool,
    /// What the reflectors did last while loading, for the progress line.
    pub progress_note: String,
    /// Nothing more is printed once set.
    pub finished: bool,
}

impl Sink {
    pub fn new(
        printer: Box<dyn Printer>,
        recorder: Option<Box<dyn Printer>>,
        stats: Option<Stats>,
    ) -> Sink {
        Sink {
            printer,
            recorder,
            stats,
            deltas: 0,
            synced: 0,
            skipped: 0,
            progress_shown: false,
            progress_note: String::new(),
            finished: false,
        }
    }

    /// Prints one record to the output, the recording and the counters.
    fn print(&mut self, rec: &Record<'_>, targets: usize) -> io::Result<()> {
        if let Body::Event(e) = &rec.body {
            match e {
                ReflectorEvent::List { .. } => {
                    self.progress_note = format!("listing {}", rec.resource.name)
                }
                ReflectorEvent::Listed { items, pages, .. } => {
                    self.progress_note =
                        format!("listed {}: {items} in {pages} pages", rec.resource.name)
                }
                _ => {}
            }
        }
        if let Some(s) = &mut self.stats {
            s.observe(rec, targets.saturating_sub(self.skipped));
        }
        if let Some(r) = &mut self.recorder {
            r.print(rec)?;
        }
        self.clear_progress();
        self.printer.print(rec)
    }

    pub fn flush(&mut self) -> io::Result<()> {
        if let Some(r) = &mut self.recorder {
            r.flush()?;
        }
        self.printer.flush()
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
pub(crate) struct Shared {
    pub sink: Mutex<Sink>,
    /// Every reflector's list progress, for the progress line.
    pub lists: Mutex<Vec<Arc<ListProgress>>>,
    /// Resources × contexts: the number of Synced records that make "all synced".
    pub targets: usize,
    pub max_events: Option<u64>,
    pub until_synced: bool,
    pub watch_only: bool,
    pub pop_delay: Option<std::time::Duration>,
    pub until: Option<Condition>,
    pub stop: mpsc::UnboundedSender<Stop>,
}

impl Shared {
    pub fn lock(&self) -> std::sync::MutexGuard<'_, Sink> {
        self.sink.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self, f: impl FnOnce(&mut Sink) -> io::Result<Option<Stop>>) {
        let mut sink = self.lock();
        if sink.finished {
            return;
        }
        let stop = match f(&mut sink) {
            Ok(s) => s,
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Some(Stop::Done),
            Err(e) => Some(Stop::Failed(
                anyhow::Error::new(e).context("writing output"),
            )),
        };
        if let Some(s) = stop {
            sink.finished = true;
            let _ = sink.flush();
            let _ = self.stop.send(s);
        }
    }

    /// Leaves out a resource whose reflector ended before its first sync because the
    /// server refused it (`kwatch all`, `--every-resource`): `line` says so once on
    /// stderr, and the others go on. The run fails when no resource is left, and with
    /// `--until-synced` ends when the others have all synced.
    pub(crate) fn skip(&self, line: &str) {
        self.write(|sink| {
            sink.clear_progress();
            writeln!(io::stderr(), "{}", crate::output::sanitize::sanitize(line))?;
            sink.skipped += 1;
            if sink.skipped >= self.targets {
                return Ok(Some(Stop::Failed(anyhow::anyhow!(
                    "none of the {} resources can be watched: the server refused each, as \
                     reported above; `kubectl auth can-i --list` shows what you may list and watch",
                    self.targets
                ))));
            }
            Ok((self.until_synced && sink.all_synced(self.targets)).then_some(Stop::Done))
        });
    }
}

/// While the initial lists load, a one-line progress report on stderr (a terminal),
/// rewritten in place and cleared before anything goes to stdout and once synced.
pub(crate) async fn progress(shared: Arc<Shared>) {
    let start = Instant::now();
    loop {
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        let mut sink = shared.lock();
        if sink.finished || sink.all_synced(shared.targets) {
            sink.clear_progress();
            return;
        }
        // Whatever stdout holds goes out first, so it never lands after the progress text.
        let _ = sink.printer.flush();
        let popped = sink.deltas;
        let (pages, items) = shared
            .lists
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .fold((0, 0), |(p, i), l| {
                (
                    p + l.pages.load(Ordering::Relaxed),
                    i + l.items.load(Ordering::Relaxed),
                )
            });
        let line = progress::Line {
            note: &sink.progress_note,
            items,
            pages,
            popped,
            synced: sink.synced,
            targets: shared.targets,
            elapsed: start.elapsed(),
        };
        let _ = write!(io::stderr(), "{}{line}", progress::CLEAR);
        sink.progress_shown = true;
    }
}

/// The informer's processing loop for one resource: until the queue closes or a stop
/// condition is met.
pub(crate) async fn consume<Q: Queue<ReflectorEvent>>(
    t: Target,
    context: Option<Arc<str>>,
    fifo: Arc<Q>,
    store: Arc<Store>,
    shared: Arc<Shared>,
) {
    let mut synced = false;
    loop {
        let popped = fifo
            .pop_with(|p| {
                // The version known before these deltas, read under the FIFO's lock
                // as they are applied.
                let before = match &p {
                    Popped::Deltas { deltas, .. } => store.apply(deltas),
                    Popped::Notice(_) => None,
                };
                (p, before)
            })
            .await;
        let Some((popped, before)) = popped else {
            return;
        };
        let had_deltas = matches!(popped, Popped::Deltas { .. });
        let now_synced = !synced && fifo.has_synced();
        synced |= now_synced;
        let pop = Pop {
            resource: &t,
            context: context.as_deref(),
            popped: &popped,
            before: before.as_ref(),
            // How many objects the informer holds when it has just synced.
            synced_with: now_synced.then(|| store.len()),
            drained: fifo.is_empty(),
        };
        shared.write(|sink| pop.deliver(&shared, sink));
        // A slow handler is slow on deltas; the reflector's records pass at once.
        if let (Some(d), true) = (shared.pop_delay, had_deltas) {
            tokio::time::sleep(d).await;
        }
    }
}

/// One pop, and what the informer knew around it.
struct Pop<'a> {
    resource: &'a Target,
    context: Option<&'a str>,
    popped: &'a Popped<ReflectorEvent>,
    /// The store's version of the key before the pop's deltas were applied.
    before: Option<&'a ObjectRef>,
    /// `Some(objects held)` when this pop made the queue synced.
    synced_with: Option<usize>,
    /// No delta is queued after this pop.
    drained: bool,
}

impl Pop<'_> {
    fn record<'b>(&'b self, body: Body<'b>) -> Record<'b> {
        Record {
            resource: &self.resource.resource,
            context: self.context,
            time: jiff::Timestamp::now(),
            body,
        }
    }

    /// Prints the pop's records into `sink`; `Some` when a stop condition was met.
    fn deliver(&self, shared: &Shared, sink: &mut Sink) -> io::Result<Option<Stop>> {
        match self.popped {
            Popped::Notice(ev) => sink.print(&self.record(Body::Event(ev)), shared.targets)?,
            Popped::Deltas {
                key,
                deltas,
                is_in_initial_list,
            } => {
                if let Some(stop) =
                    self.deliver_deltas(shared, sink, key, deltas, *is_in_initial_list)?
                {
                    return Ok(Some(stop));
                }
            }
        }
        if let Some(known) = self.synced_with {
            sink.print(&self.record(Body::Synced), shared.targets)?;
            sink.synced += 1;
            if shared
                .until
                .as_ref()
                .is_some_and(|c| c.met_when_synced(known))
            {
                return Ok(Some(Stop::Met));
            }
            if shared.until_synced && sink.all_synced(shared.targets) {
                return Ok(Some(Stop::Done));
            }
        }
        if self.drained {
            sink.flush()?;
        }
        Ok(None)
    }

    /// Prints a key's deltas, oldest first, each with the version before it.
    fn deliver_deltas(
        &self,
        shared: &Shared,
        sink: &mut Sink,
        key: &str,
        deltas: &[crate::delta::Delta],
        initial_list: bool,
    ) -> io::Result<Option<Stop>> {
        let hidden = shared.watch_only && initial_list;
        // Each delta's previous version: the store's, then the one before it.
        let mut prev = self.before;
        for delta in deltas {
            let met = !hidden && shared.until.as_ref().is_some_and(|c| c.met_by(delta, prev));
            if !hidden {
                let body = Body::Delta {
                    key,
                    delta,
                    initial_list,
                    prev,
                };
                sink.print(&self.record(body), shared.targets)?;
                sink.deltas += 1;
            }
            if met {
                return Ok(Some(Stop::Met));
            }
            if !hidden && shared.max_events.is_some_and(|m| sink.deltas >= m) {
                return Ok(Some(Stop::Done));
            }
            prev = match delta.kind {
                crate::delta::DeltaType::Deleted => None,
                _ => delta.object.object(),
            };
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::delta_fifo::DeltaFifo;
    use crate::object::Object;
    use crate::output::{Format, Options};
    use crate::target::Resource;

    /// A writer into a buffer the test can read.
    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl io::Write for Buffer {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn pod(name: &str, rv: &str) -> ObjectRef {
        Arc::new(
            Object::from_json(&format!(
                r#"{{"kind":"Pod","apiVersion":"v1","metadata":{{"name":"{name}","namespace":"ns","resourceVersion":"{rv}"}}}}"#
            ))
            .unwrap(),
        )
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

    /// Runs one informer loop over `fill`'s queue with these stop conditions; the JSON
    /// lines printed and how it stopped.
    async fn run(
        fill: impl FnOnce(&DeltaFifo<ReflectorEvent>),
        max_events: Option<u64>,
        until_synced: bool,
    ) -> (Vec<serde_json::Value>, Option<Stop>) {
        let out = Buffer::default();
        let opts = Options {
            format: Format::Json,
            ..Options::default()
        };
        let (tx, mut rx) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            sink: Mutex::new(Sink::new(
                crate::output::printer(opts, out.clone(), io::sink()),
                None,
                None,
            )),
            lists: Mutex::default(),
            targets: 1,
            max_events,
            until_synced,
            watch_only: false,
            pop_delay: None,
            until: None,
            stop: tx,
        });
        let store = Arc::new(Store::new());
        let fifo = Arc::new(DeltaFifo::new(Some(store.clone()), true));
        fill(&fifo);
        let task = tokio::spawn(consume(target(), None, fifo, store, shared));
        let stop = tokio::time::timeout(Duration::from_secs(5), rx.recv())
            .await
            .ok()
            .flatten();
        task.abort();
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        let recs = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        (recs, stop)
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
}
