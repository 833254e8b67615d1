//! The watch command: one reflector → DeltaFIFO → consumer per resource, all consumers
//! printing into one output stream, until a stop condition, Ctrl-C or an error.
//!
//! The consumer is client-go's informer loop: it pops a key's deltas, applies them to the
//! store under the FIFO's lock (`pop_with`), then prints each delta, oldest first. The
//! version of the object the store held before the pop is captured in the same closure,
//! so `--diff`, `--until created` and `-o watch-events` see exactly what the informer
//! knew before each delta.
//!
//! With `--context a,b`, every cluster gets its own targets, reflectors and consumers;
//! all print into the one sink, each record tagged with its context.

use std::io::{self, IsTerminal as _, Write as _};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{Context, Result};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use crate::cli::WatchArgs;
use crate::config::{Cluster, Config};
use crate::fifo::{DeltaFifo, FifoKind, FifoStats, Popped};
use crate::listwatch::SourceError;
use crate::object::ObjectRef;
use crate::output::{self, Body, Format, Printer, Record};
use crate::real_fifo::RealFifo;
use crate::reflector::{ListProgress, Reflector, ReflectorEvent, ReflectorStore};
use crate::source::KubeSource;
use crate::stats::Stats;
use crate::store::Store;
use crate::target::{self, Target};
use crate::until::Condition;

/// How a watch ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A stop condition was met (--max-events, --until-synced, --timeout) or the
    /// output was closed by its reader; without --until.
    Done,
    /// The --until condition was met.
    Met,
    /// --until was given and --timeout elapsed first.
    TimedOut,
    /// --until was given and the watch ended otherwise first (--max-events,
    /// --until-synced, output closed).
    NotMet,
    Interrupted,
}

enum Stop {
    Done,
    Met,
    Failed(anyhow::Error),
}

/// Shared by the consumers: the printer and the counters that decide when to stop.
struct Sink {
    printer: Box<dyn Printer>,
    /// `--record FILE`: the JSON-lines records, whatever `printer` shows.
    recorder: Option<Box<dyn Printer>>,
    stats: Option<Stats>,
    deltas: u64,
    synced: usize,
    /// Progress is on stderr now (a terminal line to clear before stdout writes).
    progress_shown: bool,
    /// What the reflectors did last while loading, for the progress line.
    progress_note: String,
    /// Nothing more is printed once set.
    finished: bool,
}

impl Sink {
    /// Prints one record to the output, the recording and the counters.
    fn print(&mut self, rec: &Record<'_>, targets: usize, show: bool) -> io::Result<()> {
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
            s.observe(rec, targets);
        }
        if let Some(r) = &mut self.recorder {
            r.print(rec)?;
        }
        if show {
            self.clear_progress();
            self.printer.print(rec)?;
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        if let Some(r) = &mut self.recorder {
            r.flush()?;
        }
        self.printer.flush()
    }

    fn clear_progress(&mut self) {
        if self.progress_shown {
            self.progress_shown = false;
            let _ = write!(io::stderr(), "\r\x1b[K");
        }
    }
}

struct Shared {
    sink: Mutex<Sink>,
    /// Every reflector's list progress, for the progress line.
    lists: Mutex<Vec<Arc<ListProgress>>>,
    /// Resources × contexts: the number of Synced records that make "all synced".
    targets: usize,
    max_events: Option<u64>,
    until_synced: bool,
    watch_only: bool,
    pop_delay: Option<std::time::Duration>,
    until: Option<Condition>,
    /// Reflector events and Synced are shown by the format (not by kubectl's).
    show_events: bool,
    stop: mpsc::UnboundedSender<Stop>,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Sink> {
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
}

/// Runs `kwatch [flags] RESOURCE[,RESOURCE…] [NAME]`. Meant to run once per process:
/// the objects cached by the informers are left for the process's exit to reclaim.
pub async fn run(args: WatchArgs) -> Result<Outcome> {
    let sim = if args.sim {
        Some(crate::config::LocalSim::start().await?)
    } else {
        None
    };
    let kubeconfig = sim.as_ref().map(|s| s.kubeconfig.clone());
    let cfg = Config::resolve(args, kubeconfig).await?;
    let outcome = watch(cfg).await;
    if let Some(s) = sim {
        s.shutdown().await;
    }
    outcome
}

/// The error of a request to `server` as kubectl words it, when the request failed
/// (see [`SourceError::kubectl_message`]); any other error as it is.
fn worded(err: anyhow::Error, server: &str, context: Option<&str>) -> anyhow::Error {
    let Some(e) = err.chain().find_map(|e| e.downcast_ref::<SourceError>()) else {
        return err;
    };
    let mut line = e.kubectl_message(server);
    if let Some(c) = context {
        line.push_str(&format!(" (context {c})"));
    }
    anyhow::Error::new(crate::exit::Worded(line))
}

async fn watch(cfg: Config) -> Result<Outcome> {
    // Resolve every cluster's targets first: a bad context or resource fails the run
    // before anything is printed.
    let tag = cfg.clusters.len() > 1;
    let mut clusters = Vec::new();
    for c in &cfg.clusters {
        let url = c.kube.cluster_url.to_string();
        let client = crate::connect::client(&c.kube)?;
        let server = crate::discovery::Server {
            client: client.clone(),
            request_timeout: cfg.request_timeout,
        };
        let docs = crate::discovery::Discovery::new(server, c.discovery_cache.clone());
        let targets = tokio::select! {
            t = target::resolve_all(docs, &cfg.resources) => t,
            _ = tokio::signal::ctrl_c() => return Ok(Outcome::Interrupted),
        };
        let context = c.context.as_deref().filter(|_| tag);
        let targets = targets.map_err(|e| match worded(e, &url, context) {
            w if w.is::<crate::exit::Worded>() => w,
            other => other.context(format!("cannot watch at {url}")),
        })?;
        clusters.push((c, client, targets));
    }
    let mut popts = cfg.printer.clone();
    if matches!(popts.format, Format::Table | Format::Wide) {
        for (_, client, targets) in &clusters {
            for t in targets {
                if let Some(cols) = crd_columns(client, t).await {
                    popts.printer_columns.insert(t.resource.name.clone(), cols);
                }
            }
        }
    }
    let recorder = match &cfg.record {
        Some(path) => {
            // 0600, as kubectl writes its kubeconfig and cache: a recording holds
            // whatever was watched, Secrets' data included.
            use std::os::unix::fs::OpenOptionsExt;
            let file = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(path)
                .with_context(|| format!("cannot create {}", path.display()))?;
            let ropts = output::Options {
                format: Format::Json,
                color: false,
                show_managed_fields: cfg.printer.show_managed_fields,
                ..output::Options::default()
            };
            Some(output::printer(ropts, file, io::sink()))
        }
        None => None,
    };
    popts.terminal = io::stdout().is_terminal();
    // Every printer sees the reflector's events: the script formats do not print them,
    // but report failures after the first sync from them.
    let show_events = true;
    let total_targets: usize = clusters.iter().map(|(_, _, t)| t.len()).sum();

    let (tx, mut rx) = mpsc::unbounded_channel();
    let shared = Arc::new(Shared {
        lists: Mutex::new(Vec::new()),
        sink: Mutex::new(Sink {
            // Data on stdout, `~` lines and error reports on stderr.
            printer: output::printer(popts, io::stdout(), io::stderr()),
            recorder,
            stats: cfg.stats.then(Stats::new),
            deltas: 0,
            synced: 0,
            progress_shown: false,
            progress_note: String::new(),
            finished: false,
        }),
        targets: total_targets,
        max_events: cfg.stop.max_events,
        until_synced: cfg.stop.until_synced,
        watch_only: cfg.stop.watch_only,
        pop_delay: cfg.pop_delay,
        until: cfg.stop.until.clone(),
        show_events,
        stop: tx.clone(),
    });
    let until = cfg.stop.until.is_some();
    if shared.max_events == Some(0) {
        return Ok(if until {
            Outcome::NotMet
        } else {
            Outcome::Done
        });
    }

    let mut tasks = JoinSet::new();
    let mut queues: Vec<(String, QueueStats)> = Vec::new();
    let mut index = 0;
    let mut stores = Vec::new();
    for (c, client, targets) in clusters {
        let context: Option<Arc<str>> = if tag {
            c.context.as_deref().map(Arc::from)
        } else {
            None
        };
        for t in targets {
            let store = Arc::new(Store::new());
            stores.push(store.clone());
            let label = match &context {
                Some(ctx) => format!("{}@{ctx}", t.resource.name),
                None => t.resource.name.clone(),
            };
            let args = Start {
                cfg: &cfg,
                cluster: c,
                client: &client,
                index,
                context: context.clone(),
                shared: &shared,
                stop: &tx,
            };
            match cfg.fifo {
                FifoKind::Delta => {
                    let q = Arc::new(DeltaFifo::new(Some(store.clone()), cfg.emit_replaced));
                    let qs = q.clone();
                    queues.push((label, Box::new(move || Some(qs.stats()))));
                    start(&mut tasks, args, t, q, store);
                }
                FifoKind::Real => {
                    let q = Arc::new(RealFifo::new(store.clone()));
                    queues.push((label, Box::new(|| None)));
                    start(&mut tasks, args, t, q, store);
                }
            }
            index += 1;
        }
    }
    drop(tx);
    if cfg.progress {
        tasks.spawn(progress(shared.clone()));
    }

    let timeout = async {
        match cfg.stop.timeout {
            Some(t) => tokio::time::sleep(t).await,
            None => std::future::pending().await,
        }
    };
    let outcome = tokio::select! {
        stop = rx.recv() => match stop {
            Some(Stop::Failed(e)) => Err(e),
            Some(Stop::Met) => Ok(Outcome::Met),
            Some(Stop::Done) | None if until => Ok(Outcome::NotMet),
            Some(Stop::Done) | None => Ok(Outcome::Done),
        },
        // --until-synced never ends with 0 before it synced.
        _ = timeout => Ok(if until || (shared.until_synced && shared.lock().synced < shared.targets) {
            Outcome::TimedOut
        } else {
            Outcome::Done
        }),
        _ = tokio::signal::ctrl_c() => Ok(Outcome::Interrupted),
    };
    tasks.abort_all();
    // Never dropped: freeing every cached object one by one (a tenth of the CPU of a
    // 100k-object list) is work the process's exit does at once.
    std::mem::forget(stores);
    {
        let mut sink = shared.lock();
        sink.finished = true;
        sink.clear_progress();
        let flushed = sink.flush();
        if let Some(stats) = &sink.stats {
            let fifo: Vec<(String, FifoStats)> = queues
                .iter()
                .filter_map(|(name, f)| f().map(|s| (name.clone(), s)))
                .collect();
            let _ = writeln!(io::stderr(), "{}", stats.render(&fifo));
        }
        match flushed {
            Err(e) if e.kind() != io::ErrorKind::BrokenPipe && outcome.is_ok() => {
                return Err(anyhow::Error::new(e).context("writing output"));
            }
            _ => {}
        }
    }
    outcome
}

/// Reads a queue's counters at exit (`None`: the queue keeps none).
type QueueStats = Box<dyn Fn() -> Option<FifoStats> + Send + Sync>;

/// A custom resource's additionalPrinterColumns, read from its CRD; `None` for the
/// built-in groups, or when the CRD cannot be read (the table then shows AGE).
async fn crd_columns(
    client: &kube::Client,
    t: &Target,
) -> Option<Vec<output::columns::PrinterColumn>> {
    let builtin = t.group.is_empty()
        || t.group.ends_with(".k8s.io")
        || matches!(
            t.group.as_str(),
            "apps" | "batch" | "autoscaling" | "policy" | "extensions"
        );
    if builtin {
        return None;
    }
    let path = format!(
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{}.{}",
        t.plural, t.group
    );
    // Columns are a nicety: never hold the watch up for long waiting for them.
    let answer = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        crate::source::get_document(client, &path, "application/json", None),
    )
    .await;
    let crd: serde_json::Value = match answer {
        Ok(Ok(body)) => match serde_json::from_slice(&body) {
            Ok(v) => v,
            Err(e) => {
                tracing::info!("no printer columns for {}: {e}", t.resource.name);
                return None;
            }
        },
        Ok(Err(e)) => {
            tracing::info!("no printer columns for {}: {e}", t.resource.name);
            return None;
        }
        Err(_) => {
            tracing::info!("no printer columns for {}: timed out", t.resource.name);
            return None;
        }
    };
    Some(output::columns::PrinterColumn::from_crd(&crd, &t.version))
}

/// While the initial lists load, a one-line progress report on stderr (a terminal),
/// rewritten in place and cleared before anything goes to stdout and once synced.
async fn progress(shared: Arc<Shared>) {
    let start = Instant::now();
    loop {
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        let mut sink = shared.lock();
        if sink.finished || sink.synced >= shared.targets {
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
        let _ = write!(
            io::stderr(),
            "\r\x1b[Kloading: {}; {items} objects in {pages} pages received, {popped} popped, {}/{} synced, {:.1}s",
            sink.progress_note,
            sink.synced,
            shared.targets,
            start.elapsed().as_secs_f64()
        );
        sink.progress_shown = true;
    }
}

/// The consumer's view of either client-go queue.
trait Queue: ReflectorStore {
    fn pop_with<R: Send>(
        &self,
        process: impl FnOnce(Popped<ReflectorEvent>) -> R + Send,
    ) -> impl std::future::Future<Output = Option<R>> + Send;
    fn has_synced(&self) -> bool;
    fn is_empty(&self) -> bool;
}

macro_rules! queue {
    ($q:ty) => {
        impl Queue for $q {
            async fn pop_with<R: Send>(
                &self,
                process: impl FnOnce(Popped<ReflectorEvent>) -> R + Send,
            ) -> Option<R> {
                <$q>::pop_with(self, process).await
            }
            fn has_synced(&self) -> bool {
                <$q>::has_synced(self)
            }
            fn is_empty(&self) -> bool {
                <$q>::is_empty(self)
            }
        }
    };
}

queue!(DeltaFifo<ReflectorEvent>);
queue!(RealFifo<ReflectorEvent>);

/// What `start` needs besides the target and its queue.
struct Start<'a> {
    cfg: &'a Config,
    cluster: &'a Cluster,
    client: &'a kube::Client,
    index: usize,
    context: Option<Arc<str>>,
    shared: &'a Arc<Shared>,
    stop: &'a mpsc::UnboundedSender<Stop>,
}

/// Spawns the reflector and the consumer of one resource.
fn start<Q: Queue>(
    tasks: &mut JoinSet<()>,
    a: Start<'_>,
    t: Target,
    queue: Arc<Q>,
    store: Arc<Store>,
) {
    let source = KubeSource::new(
        a.client.clone(),
        t.collection_path(a.cluster.namespace.as_deref()),
        a.cfg.label_selector.clone(),
        a.cfg.field_selector.clone(),
        a.cfg.request_timeout,
    )
    .with_type(&t.resource.kind, &t.resource.api_version);
    let mut rcfg = a.cfg.reflector.clone();
    rcfg.seed = rcfg.seed.wrapping_add(a.index as u64);
    let reflector = Reflector::new(source, queue.clone(), rcfg);
    a.shared
        .lists
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(reflector.progress());
    let stop = a.stop.clone();
    let server = a.cluster.kube.cluster_url.to_string();
    let context = a.context.clone();
    tasks.spawn(async move {
        let err = anyhow::Error::new(reflector.run().await);
        let _ = stop.send(Stop::Failed(worded(err, &server, context.as_deref())));
    });
    tasks.spawn(consume(t, a.context, queue, store, a.shared.clone()));
}

/// The informer's processing loop for one resource.
async fn consume<Q: Queue>(
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
        let drained = fifo.is_empty();
        let known = if now_synced { store.len() } else { 0 };
        shared.write(|sink| {
            let rec = |body| Record {
                resource: &t.resource,
                context: context.as_deref(),
                time: jiff::Timestamp::now(),
                body,
            };
            match &popped {
                Popped::Notice(ev) => {
                    sink.print(&rec(Body::Event(ev)), shared.targets, shared.show_events)?
                }
                Popped::Deltas {
                    key,
                    deltas,
                    is_in_initial_list,
                } => {
                    // Each delta's previous version: the store's, then the one before it.
                    let mut prev: Option<&ObjectRef> = before.as_ref();
                    for delta in deltas {
                        let hidden = shared.watch_only && *is_in_initial_list;
                        let met =
                            !hidden && shared.until.as_ref().is_some_and(|c| c.met_by(delta, prev));
                        if !hidden {
                            let body = Body::Delta {
                                key,
                                delta,
                                initial_list: *is_in_initial_list,
                                prev,
                            };
                            sink.print(&rec(body), shared.targets, true)?;
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
                }
            }
            if now_synced {
                sink.print(&rec(Body::Synced), shared.targets, shared.show_events)?;
                sink.synced += 1;
                if shared
                    .until
                    .as_ref()
                    .is_some_and(|c| c.met_when_synced(known))
                {
                    return Ok(Some(Stop::Met));
                }
                if shared.until_synced && sink.synced == shared.targets {
                    return Ok(Some(Stop::Done));
                }
            }
            if drained {
                sink.flush()?;
            }
            Ok(None)
        });
        // A slow handler is slow on deltas; the reflector's records pass at once.
        if let (Some(d), true) = (shared.pop_delay, had_deltas) {
            tokio::time::sleep(d).await;
        }
    }
}
