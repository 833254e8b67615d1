//! The watch command's wiring: resolve every cluster's resources, open the outputs, start
//! one reflector → queue → informer loop ([`crate::informer::consume`]) per resource, then wait
//! for a stop condition, Ctrl-C or an error, and report.
//!
//! With `--context a,b`, every cluster gets its own targets, reflectors and informer
//! loops; all print into the one sink, each record tagged with its context. A cluster
//! that fails (down, forbidden, not synced at `--timeout`) is left out while the others go
//! on ([`crate::app::fleet`]).

use std::collections::HashSet;
use std::io::{self, IsTerminal as _, Write as _};
use std::sync::{Arc, Mutex};

use anyhow::Result;
use tokio::signal::unix::{signal, Signal, SignalKind};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use crate::app::cli::WatchArgs;
use crate::app::config::{Cluster, Config};
use crate::app::exit::Outcome;
use crate::app::fleet;
use crate::app::metrics::{self, Metrics};
use crate::app::run::{Shared, Stop};
use crate::app::stats::Stats;
use crate::cache::consistency::check::{self, SyncPoints};
use crate::cache::cost::StoreCost;
use crate::cache::delta_fifo::DeltaFifo;
use crate::cache::handlers::Registration;
use crate::cache::listwatch::SourceError;
use crate::cache::queue::{FifoStats, Queue};
use crate::cache::real_fifo::RealFifo;
use crate::cache::reflector::Reflector;
use crate::cache::release::{Informer, QueueChoice, Release};
use crate::cache::store::Store;
use crate::client::source::KubeSource;
use crate::client::target::Target;
use crate::context::ContextName;
use crate::informer::consume::{CacheSource, Delivery};
use crate::informer::record::{InformerInfo, Notice, Observation};
use crate::informer::sink::Sink;
use crate::output::{self, Format};

/// The signals that stop a watch as Ctrl-C does (the summary printed, the exit code
/// 128 + the signal's number), each registered once for the whole run: a signal that
/// comes between two waits is kept for the next one.
struct Signals {
    int: Option<Signal>,
    term: Option<Signal>,
    hup: Option<Signal>,
}

impl Signals {
    fn new() -> Signals {
        let on = |kind| signal(kind).ok();
        Signals {
            int: on(SignalKind::interrupt()),
            term: on(SignalKind::terminate()),
            hup: on(SignalKind::hangup()),
        }
    }

    /// The next signal, as the outcome it makes (pending for ever if none registered).
    async fn recv(&mut self) -> Outcome {
        async fn one(s: &mut Option<Signal>) {
            match s {
                Some(s) => {
                    if s.recv().await.is_none() {
                        std::future::pending::<()>().await;
                    }
                }
                None => std::future::pending().await,
            }
        }
        tokio::select! {
            _ = one(&mut self.int) => Outcome::Interrupted,
            _ = one(&mut self.term) => Outcome::Terminated,
            _ = one(&mut self.hup) => Outcome::HungUp,
        }
    }
}

/// Returns when stdout is a pipe or a socket whose reader has gone (`kwatch … | head -1`
/// after its line): poll(2) reports POLLERR on a pipe's write end once no reader is left
/// (POLLHUP on a socket), whatever events were asked for, so a quiet watch notices
/// without having to write. Pending for ever for a terminal or a file, which have no
/// reader to lose.
async fn reader_gone() {
    use rustix::event::{poll, PollFd, PollFlags};
    use std::os::unix::fs::FileTypeExt as _;
    let stdout = io::stdout();
    let pipe = std::os::fd::AsFd::as_fd(&stdout)
        .try_clone_to_owned()
        .and_then(|fd| std::fs::File::from(fd).metadata())
        .is_ok_and(|m| m.file_type().is_fifo() || m.file_type().is_socket());
    if !pipe {
        return std::future::pending().await;
    }
    let (tx, rx) = tokio::sync::oneshot::channel();
    // A thread of its own, blocked in poll(2) until the hang-up: the process's exit ends
    // it (tokio's blocking pool would wait for it at shutdown).
    std::thread::spawn(move || loop {
        let mut fds = [PollFd::new(&stdout, PollFlags::empty())];
        match poll(&mut fds, None) {
            Ok(_) if !fds[0].revents().is_empty() => {
                let _ = tx.send(());
                return;
            }
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            // poll(2) cannot watch it: nothing to notice.
            Err(_) => return,
        }
    });
    if rx.await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Runs `kwatch [flags] RESOURCE[,RESOURCE…] [NAME]`. Meant to run once per process:
/// the objects cached by the informers are left for the process's exit to reclaim.
pub async fn run(args: WatchArgs) -> Result<Outcome> {
    let sim = if args.sim {
        Some(crate::app::sim::LocalSim::start().await?)
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
fn worded(err: anyhow::Error, server: &str, context: Option<&ContextName>) -> anyhow::Error {
    let Some(e) = err.chain().find_map(|e| e.downcast_ref::<SourceError>()) else {
        return err;
    };
    let mut line = e.kubectl_message(server);
    if let Some(c) = context {
        line.push_str(&format!(" (context {c})"));
    }
    anyhow::Error::new(crate::app::exit::Worded(line))
}

/// A cluster, the resources to watch in it, and the informer its server gets.
struct Resolved<'a> {
    cluster: &'a Cluster,
    client: kube::Client,
    /// The user's resources, then the graph's (`--follow`, `--events`).
    targets: Vec<Target>,
    /// How many of `targets` are the user's: the graph's take no selector.
    selected: usize,
    informer: Informer,
    /// Several contexts: the fleet's state, where this cluster's failures are told.
    fleet: Option<fleet::Shared>,
}

async fn watch(cfg: Config) -> Result<Outcome> {
    let mut signals = Signals::new();
    // `--timeout` bounds the whole run, connecting and discovery included (else a server
    // that never completes the TLS handshake holds the run for client-go's 10 s handshake
    // timeout).
    let deadline = cfg
        .stop
        .timeout
        .map(|after| (tokio::time::Instant::now() + after, after));
    // Bound before anything starts: a busy address ends the run at once (exit 2).
    let metrics_listener = match &cfg.metrics {
        Some(addr) => Some(metrics::bind(addr).await?),
        None => None,
    };
    // Several contexts: one cluster's trouble is that cluster's (`fleet`).
    let fleet = cfg.fleet().then(fleet::Shared::default);
    let clusters = match resolve(&cfg, &mut signals, deadline, fleet.as_ref()).await? {
        Ok(clusters) => clusters,
        Err(signalled) => return Ok(signalled),
    };
    // `--probe` writes only once the resources are known, before anything else starts.
    let probes = create_probes(&cfg, &clusters).await?;
    let (live_tx, mut live_rx) = mpsc::unbounded_channel();
    let (shared_printer, tables, screen, recorder) = match outputs(&cfg, &clusters, live_tx).await {
        Ok(o) => o,
        Err(e) => {
            remove_probes(&probes).await;
            return Err(e);
        }
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let shown = crate::app::progress::Shown::default();
    let printer = Box::new(crate::app::progress::Cleared {
        inner: shared_printer,
        shown: shown.clone(),
    });
    let (recorders, recording) = recorder;
    let shared = shared_state(
        &cfg,
        &clusters,
        printer,
        recorders,
        recording.clone(),
        &tx,
        fleet.as_ref(),
    );
    // Each resource's name (`deployments.apps`), in the targets' order.
    let resources: Vec<String> = clusters
        .iter()
        .flat_map(|r| r.targets.iter().map(|t| t.resource.name.clone()))
        .collect();
    // In place before any informer or probe starts: a record observed earlier (the initial
    // list's) would be missing from the counters for good.
    let metrics = metrics_listener
        .map(|listener| (listener, observed_metrics(&cfg, &shared, recording.clone())));
    let mut tasks = JoinSet::new();
    for p in &probes {
        p.spawn(&shared, &tx, cfg.request_timeout, &mut tasks);
    }
    let Started { queues, stores } = start_all(
        &cfg,
        clusters,
        &tables,
        &shared,
        &tx,
        &mut tasks,
        metrics.as_ref().map(|(_, m)| m.as_ref()),
    );
    if let Some((listener, m)) = metrics {
        serve_metrics(listener, m, &queues, &stores, &mut tasks);
    }
    drop(tx);
    if cfg.progress {
        tasks.spawn(crate::app::progress::run(shared.clone(), shown));
    }
    let ends = Ends {
        stop: &mut rx,
        live: screen.is_some().then_some(&mut live_rx),
        signals: &mut signals,
        deadline,
        until: cfg.stop.until.is_some(),
        shared: &shared,
    };
    let outcome = ends.first().await;
    tasks.abort_all();
    drop(screen);
    remove_probes(&probes).await;
    conclude(
        &cfg,
        &shared,
        &queues,
        stores,
        &resources,
        outcome,
        fleet.as_ref(),
    )
}

/// `--metrics`' registry, observing every record from now on.
fn observed_metrics(
    cfg: &Config,
    shared: &Shared,
    recording: Option<Arc<crate::app::record::status::Status>>,
) -> Arc<Metrics> {
    let mut m = Metrics::new(cfg.probe.is_some());
    if let Some(r) = recording {
        m = m.recording(r);
    }
    let m = Arc::new(m);
    (shared.lock().observers).push(Box::new(metrics::Observed(m.clone())));
    m
}

/// Several contexts, without `--until`: a run that ended as asked with a context left
/// out, or whose `--timeout` came when some contexts had synced and others not (each of
/// those named on stderr), did not see every cluster: [`Outcome::NotAllSynced`].
fn fleet_outcome(cfg: &Config, f: &fleet::Shared, outcome: Result<Outcome>) -> Result<Outcome> {
    if cfg.stop.until.is_some() {
        return outcome;
    }
    let state = fleet::lock(f);
    match outcome {
        Ok(Outcome::Done) if state.any_left_out() => Ok(Outcome::NotAllSynced),
        Ok(Outcome::TimedOut) if state.any_synced() => {
            let after = cfg.stop.timeout.unwrap_or_default();
            for c in state.unsynced() {
                let line = format!(
                    "~ context {c} had not synced when --timeout came after {after:?}: \
                     left out, the other contexts synced"
                );
                let _ = writeln!(io::stderr(), "{}", crate::text::sanitize(&line));
            }
            Ok(Outcome::NotAllSynced)
        }
        other => other,
    }
}

/// Every way a run ends: a stop condition or an error, `--timeout`, a signal, `q` in
/// `--live`, stdout closed. The clean-up after the first of them is the caller's.
struct Ends<'a> {
    stop: &'a mut mpsc::UnboundedReceiver<Stop>,
    /// `--live`'s quit keys, when it runs.
    live: Option<&'a mut mpsc::UnboundedReceiver<Outcome>>,
    signals: &'a mut Signals,
    deadline: Deadline,
    /// `--until` was given: an end without its condition met is `NotMet`.
    until: bool,
    shared: &'a Shared,
}

impl Ends<'_> {
    async fn first(self) -> Result<Outcome> {
        let Ends {
            stop,
            live,
            signals,
            deadline,
            until,
            shared,
        } = self;
        let has_live = live.is_some();
        let live_quit = async {
            match live {
                Some(rx) => rx.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            stop = stop.recv() => match stop {
                Some(Stop::Failed(e)) => Err(e),
                Some(Stop::Met) => Ok(Outcome::Met),
                Some(Stop::Done) | None if until => Ok(Outcome::NotMet),
                Some(Stop::Done) | None => Ok(Outcome::Done),
            },
            // A run never ends with 0 at --timeout before it synced: it showed nothing of
            // the server's state.
            _ = expired(deadline) => Ok(if until || !shared.lock().all_synced(shared.targets) {
                Outcome::TimedOut
            } else {
                Outcome::Done
            }),
            signalled = signals.recv() => Ok(signalled),
            // `q` (Done) or Ctrl-C (Interrupted: raw mode turns it into a key) on --live.
            Some(quit) = live_quit, if has_live => Ok(quit),
            // stdout closed: the end of the watch, as a write that fails with EPIPE is.
            _ = reader_gone() => Ok(if until { Outcome::NotMet } else { Outcome::Done }),
        }
    }
}

/// The end of a run: the end's records, the summary, and why it timed out.
fn conclude(
    cfg: &Config,
    shared: &Shared,
    queues: &[(String, QueueStats)],
    stores: Vec<Arc<Store>>,
    resources: &[String],
    outcome: Result<Outcome>,
    fleet: Option<&fleet::Shared>,
) -> Result<Outcome> {
    let outcome = match fleet {
        Some(f) => fleet_outcome(cfg, f, outcome),
        None => outcome,
    };
    let outcome = match outcome {
        Ok(Outcome::Done | Outcome::NotAllSynced) => {
            match ended_in_error(cfg, shared, resources, &stores) {
                Some(line) => Err(anyhow::Error::new(crate::app::exit::Worded(line))),
                None => outcome,
            }
        }
        other => other,
    };
    let until = cfg.stop.until.is_some();
    // kubectl wait's error line, after the summary as kwatch's other errors come.
    let timed_out = (until && matches!(outcome, Ok(Outcome::TimedOut))).then(|| {
        let named = cfg.field_selector.as_deref().and_then(named_object);
        crate::informer::until::timed_out(&waited_on(resources, &stores, named))
    });
    // The end's records (measured before the stores are forgotten).
    let outcome = end(shared, outcome);
    // Never dropped: freeing every cached object one by one (a tenth of the CPU of a
    // 100k-object list) is work the process's exit does at once.
    std::mem::forget(stores);
    // Without --until, only a run that never synced times out: say why.
    let unsynced = matches!(outcome, Ok(Outcome::TimedOut)) && !until;
    let outcome = finish(shared, queues, outcome, fleet);
    if let (Some(line), Ok(Outcome::TimedOut)) = (timed_out, &outcome) {
        let _ = writeln!(io::stderr(), "{}", crate::text::sanitize(&line));
    }
    if let (true, Some(after)) = (unsynced, cfg.stop.timeout) {
        let delivery = shared.lock();
        let loading = delivery.observer::<crate::app::progress::Loading>();
        let line = loading.map_or_else(String::new, |l| {
            l.timed_out_before_sync(after, delivery.synced, shared.targets)
        });
        let _ = writeln!(io::stderr(), "{}", crate::text::sanitize(&line));
    }
    outcome
}

/// The printer (and the tables it needs), the `--live` screen (it restores the terminal
/// when dropped: before the summary and any error line; `quit` gets its `q` and Ctrl-C)
/// and `--record`'s recorder.
async fn outputs(
    cfg: &Config,
    clusters: &[Resolved<'_>],
    quit: mpsc::UnboundedSender<Outcome>,
) -> Result<(
    Box<dyn Sink>,
    HashSet<String>,
    Option<crate::app::live::Screen>,
    crate::app::record::Recorder,
)> {
    let model = cfg.live.then(output::live::Shared::default);
    let (printer, tables) = printer(cfg, clusters, model.clone()).await?;
    let screen = match model {
        Some(m) => Some(crate::app::live::Screen::start(m, cfg.printer.color, quit)?),
        None => None,
    };
    let recorder = match crate::app::record::recorders(cfg).await {
        Ok(r) => r,
        // The screen restores the terminal before the error line.
        Err(e) => {
            drop(screen);
            return Err(e);
        }
    };
    Ok((printer, tables, screen, recorder))
}

/// The state the informers of `clusters` share: the recorder and the printer as their
/// sinks, what ends the run, the fleet's counter (several contexts) and the owner graph
/// (`--follow`, `--events`).
fn shared_state(
    cfg: &Config,
    clusters: &[Resolved<'_>],
    printer: Box<dyn Sink>,
    recorders: Vec<Box<dyn Sink>>,
    recording: Option<Arc<crate::app::record::status::Status>>,
    stop: &mpsc::UnboundedSender<Stop>,
    fleet: Option<&fleet::Shared>,
) -> Arc<Shared> {
    let targets = clusters.iter().map(|c| c.targets.len()).sum();
    let mut sinks = recorders;
    sinks.push(printer);
    let mut sink = Delivery::new(sinks);
    sink.observers
        .push(Box::<crate::app::progress::Loading>::default());
    sink.observers
        .push(Box::<crate::app::watched::Watched>::default());
    if cfg.stats {
        sink.observers.push(Box::new(
            Stats::new().blaming(cfg.printer.blame).recording(recording),
        ));
    }
    // Fighting managers are found in --blame's attribution: on with it only.
    sink.conflicts = cfg
        .printer
        .blame
        .then(crate::informer::conflict::Conflicts::default);
    if let Some(f) = fleet {
        sink.observers
            .push(Box::new(fleet::Counter::new(f.clone())));
    }
    if cfg.graph() {
        let roots = clusters
            .iter()
            .flat_map(|r| r.targets[..r.selected].iter())
            .map(|t| t.resource.name.clone());
        let events = cfg.events.then(|| "events".to_owned());
        sink.graph = Some(crate::informer::follow::Graph::new(roots, events));
    }
    Arc::new(Shared {
        lists: Mutex::new(Vec::new()),
        delivery: Mutex::new(sink),
        targets,
        max_events: cfg.stop.max_events,
        until_synced: cfg.stop.until_synced,
        watch_only: cfg.stop.watch_only,
        filter: cfg.filter.clone(),
        pop_delay: cfg.pop_delay,
        until: cfg.stop.until.clone(),
        stop: stop.clone(),
        handler: (cfg.printer.view == output::View::Handlers).then_some(Registration {
            resync: cfg.reflector.resync,
        }),
        caches: Mutex::new(Vec::new()),
    })
}

/// `--metrics`: `m`, already counting records and registered with every informer by
/// [`start_all`], also reads every queue and store (one per resource and context), and is
/// served on `listener`.
fn serve_metrics(
    listener: tokio::net::TcpListener,
    m: Arc<Metrics>,
    queues: &[(String, QueueStats)],
    stores: &[Arc<Store>],
    tasks: &mut JoinSet<()>,
) {
    for ((label, queue), store) in queues.iter().zip(stores) {
        let queue = queue.clone();
        m.add_source(
            metrics_labels(label),
            store.clone(),
            Box::new(move || queue()),
        );
    }
    tasks.spawn(metrics::serve(listener, m));
}

/// `--probe`: one probe per cluster, each created (rights checked, leftovers deleted)
/// before any watch starts; if one fails, those created are deleted.
async fn create_probes(
    cfg: &Config,
    clusters: &[Resolved<'_>],
) -> Result<Vec<Arc<crate::app::probe::Probe>>> {
    let Some(pcfg) = &cfg.probe else {
        return Ok(Vec::new());
    };
    let tag = cfg.fleet();
    let mut probes = Vec::new();
    for c in clusters {
        let context = c.cluster.context.clone().filter(|_| tag);
        let server = c.cluster.kube.cluster_url.to_string();
        match crate::app::probe::Probe::create(c.client.clone(), &server, pcfg, context).await {
            Ok(p) => probes.push(Arc::new(p)),
            Err(e) => {
                remove_probes(&probes).await;
                return Err(e);
            }
        }
    }
    Ok(probes)
}

/// Deletes every probe's ConfigMap.
async fn remove_probes(probes: &[Arc<crate::app::probe::Probe>]) {
    futures::future::join_all(probes.iter().map(|p| p.remove())).await;
}

/// The name a field selector pins (`metadata.name=NAME`, which a NAME argument adds).
fn named_object(field_selector: &str) -> Option<&str> {
    field_selector
        .split(',')
        .find_map(|term| term.trim().strip_prefix("metadata.name="))
        .map(|n| n.strip_prefix('=').unwrap_or(n))
}

/// Why a run that ended as asked is still an error, as kubectl's would be: a watch that
/// never once succeeded (`Error from server (Forbidden): …`, as `kubectl get -w`), or a
/// NAME argument whose object does not exist when `--until-synced` ends the run
/// (`Error from server (NotFound): pods "web" not found`, as `kubectl get pod web`).
fn ended_in_error(
    cfg: &Config,
    shared: &Shared,
    resources: &[String],
    stores: &[Arc<Store>],
) -> Option<String> {
    let delivery = shared.lock();
    let never = delivery
        .observer::<crate::app::watched::Watched>()
        .and_then(|w| w.never_watched());
    if never.is_some() {
        return never;
    }
    let name = cfg.name.as_deref().filter(|_| cfg.stop.until_synced)?;
    let synced = delivery.all_synced(shared.targets);
    if !synced || stores.iter().any(|s| !s.is_empty()) {
        return None;
    }
    let resource = resources.first()?;
    Some(format!(
        "Error from server (NotFound): {resource} {name:?} not found"
    ))
}

/// What `--until` waited on, as (plural, name) sorted: every object the stores hold, or
/// the named object when none is held (the object `--until created` waited for).
/// `resources`: each store's resource (`deployments.apps`: its plural before the group).
fn waited_on(
    resources: &[String],
    stores: &[Arc<Store>],
    named: Option<&str>,
) -> Vec<(String, String)> {
    let plurals: Vec<&str> = resources
        .iter()
        .map(|r| r.split('.').next().unwrap_or(r))
        .collect();
    let mut objects: Vec<(String, String)> = plurals
        .iter()
        .zip(stores)
        .flat_map(|(plural, store)| {
            store.list_keys().into_iter().map(move |key| {
                let name = key.rsplit_once('/').map_or(key.as_str(), |(_, n)| n);
                ((*plural).to_owned(), name.to_owned())
            })
        })
        .collect();
    objects.sort();
    objects.dedup();
    if let (true, Some(name), Some(plural)) = (objects.is_empty(), named, plurals.first()) {
        objects.push(((*plural).to_owned(), name.to_owned()));
    }
    objects
}

/// Every cluster's targets, resolved before anything is printed (a bad context or
/// resource fails the run first); `Err` with the outcome when a signal came meanwhile.
/// With several contexts, [`resolve_fleet`].
async fn resolve<'a>(
    cfg: &'a Config,
    signals: &mut Signals,
    deadline: Deadline,
    fleet: Option<&fleet::Shared>,
) -> Result<std::result::Result<Vec<Resolved<'a>>, Outcome>> {
    if let Some(f) = fleet {
        return resolve_fleet(cfg, signals, deadline, f).await;
    }
    let mut clusters = Vec::new();
    for c in &cfg.clusters {
        let url = c.kube.cluster_url.to_string();
        let client = crate::client::connect::client(&c.kube)?;
        let resolved = tokio::select! {
            r = resolve_one(cfg, c, client, false) => r?,
            signalled = signals.recv() => return Ok(Err(signalled)),
            why = connecting_at(deadline) => return Ok(Err(timed_out_connecting(deadline, &url, why))),
        };
        clusters.push(resolved);
    }
    Ok(Ok(clusters))
}

/// One cluster's targets and informer: discovery, the server's release (`/version`), the
/// graph's resources; its errors in kubectl's words (naming the context when `tag`).
async fn resolve_one<'a>(
    cfg: &'a Config,
    c: &'a Cluster,
    client: kube::Client,
    tag: bool,
) -> Result<Resolved<'a>> {
    let url = c.kube.cluster_url.to_string();
    let docs = || {
        crate::client::discovery::Discovery::new(server_of(&client, cfg), c.discovery_cache.clone())
    };
    let every = cfg.every_resource.then_some(crate::client::expand::Every {
        namespaced_only: c.namespace.is_some(),
    });
    let targets = crate::client::expand::targets(docs(), &cfg.resources, every).await;
    let context = c.context.as_ref().filter(|_| tag);
    let targets = targets.map_err(|e| match worded(e.into(), &url, context) {
        w if w.is::<crate::app::exit::Worded>() => w,
        other => other.context(format!("cannot watch at {url}")),
    })?;
    // Asked only when --client-go does not name the release (which then wins over any
    // server's).
    let server = match cfg.informer.client_go {
        Some(r) => r,
        None => server_release(&client, cfg.request_timeout, &url, context).await?,
    };
    let informer = cfg.informer.informer(server).map_err(anyhow::Error::msg)?;
    let selected = targets.len();
    let mut targets = targets;
    if cfg.graph() {
        let more =
            crate::informer::follow::graph_targets(docs, &targets, cfg.follow.as_ref(), cfg.events)
                .await;
        targets.extend(more.map_err(|e| worded(e.into(), &url, context))?);
    }
    Ok(Resolved {
        cluster: c,
        client,
        targets,
        selected,
        informer,
        fleet: None,
    })
}

/// Several contexts: each context's start ([`resolve_one`]) at once, each tried up to
/// [`fleet::TRIES`] times with client-go's backoff between ([`fleet::backoff`]), a try
/// bounded by [`fleet::TRY_TIMEOUT`], and all of them by half of `--timeout` if given (the
/// other half is the others' to sync); a context whose tries all fail is left out with one
/// `~` line naming it, and the others are watched. The run fails only when every context
/// failed. A signal ends the run at once.
async fn resolve_fleet<'a>(
    cfg: &'a Config,
    signals: &mut Signals,
    deadline: Deadline,
    state: &fleet::Shared,
) -> Result<std::result::Result<Vec<Resolved<'a>>, Outcome>> {
    let starting: Mutex<Vec<ContextName>> =
        Mutex::new(cfg.clusters.iter().map(Cluster::name).collect());
    for (name, why) in &cfg.left_out {
        leave_out(state, name, &format!(": {why}"));
    }
    // With --timeout D, a context's start may take half of D, so that the others have
    // the other half to sync.
    let budget = deadline.map(|(_, after)| after / 2);
    let starts = cfg.clusters.iter().map(|c| {
        let starting = &starting;
        async move {
            let name = c.name();
            let tries = start_context(cfg, c);
            let started = match budget {
                Some(b) => match tokio::time::timeout(b, tries).await {
                    Ok(r) => r,
                    Err(_) => Err(format!(
                        ": not started within {b:?}, half of --timeout (discovery and /version \
                         of the server {})",
                        c.kube.cluster_url.to_string().trim_end_matches('/')
                    )),
                },
                None => tries.await,
            };
            starting
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .retain(|n| *n != name);
            if let Err(why) = &started {
                leave_out(state, &name, why);
            }
            started
        }
    });
    let all = tokio::select! {
        all = futures::future::join_all(starts) => all,
        signalled = signals.recv() => return Ok(Err(signalled)),
        why = connecting_at(deadline) => {
            let names = starting.lock().unwrap_or_else(|e| e.into_inner()).iter().map(ContextName::as_str).collect::<Vec<_>>().join(", ");
            let what = format!("of context(s) {names}");
            return Ok(Err(timed_out_connecting(deadline, &what, why)));
        }
    };
    let mut clusters: Vec<Resolved<'a>> = all.into_iter().filter_map(Result::ok).collect();
    if clusters.is_empty() {
        anyhow::bail!(
            "none of the {} contexts can be watched: each failed, as said above",
            cfg.clusters.len() + cfg.left_out.len()
        );
    }
    let mut s = fleet::lock(state);
    for c in &mut clusters {
        s.started(&c.cluster.name(), c.targets.len());
        c.fleet = Some(state.clone());
    }
    Ok(Ok(clusters))
}

/// One context's start in a fleet: [`resolve_one`] (the client with it, whose
/// credentials, an exec plugin's, are each try's own), tried [`fleet::TRIES`] times, each
/// bounded by [`fleet::TRY_TIMEOUT`], with client-go's backoff between. `Err`: why it was
/// given up, as the `~` line ends.
async fn start_context<'a>(
    cfg: &'a Config,
    c: &'a Cluster,
) -> std::result::Result<Resolved<'a>, String> {
    let name = c.name();
    let mut tried = 1;
    loop {
        let attempt = async {
            let client = crate::client::connect::client(&c.kube)?;
            resolve_one(cfg, c, client, true).await
        };
        let err = match tokio::time::timeout(fleet::TRY_TIMEOUT, attempt).await {
            Ok(Ok(r)) => return Ok(r),
            Ok(Err(e)) => e,
            Err(_) => anyhow::anyhow!(
                "no answer from the server {} within {:?} (context {name})",
                c.kube.cluster_url.to_string().trim_end_matches('/'),
                fleet::TRY_TIMEOUT
            ),
        };
        if tried >= fleet::TRIES {
            return Err(format!(" after {tried} tries: {}", said(&err)));
        }
        tracing::info!(
            "context {name}: try {tried} of {} failed: {}",
            fleet::TRIES,
            crate::app::exit::one_line(&err)
        );
        tokio::time::sleep(fleet::backoff(tried)).await;
        tried += 1;
    }
}

/// Leaves context `name` out of the run, saying `why` (`: …` or ` after N tries: …`) in one
/// `~` line.
fn leave_out(state: &fleet::Shared, name: &ContextName, why: &str) {
    fleet::lock(state).left_out(name);
    let line = format!("~ leaving out context {name}{why}");
    let _ = writeln!(io::stderr(), "{}", crate::text::sanitize(&line));
}

/// An error as a `~` line says it: kubectl's words as they are, else its causes on one line.
fn said(err: &anyhow::Error) -> String {
    match err
        .chain()
        .find_map(|e| e.downcast_ref::<crate::app::exit::Worded>())
    {
        Some(w) => w.0.clone(),
        None => crate::app::exit::one_line(err),
    }
}

/// The discovery client's server.
fn server_of(client: &kube::Client, cfg: &Config) -> crate::client::discovery::Server {
    crate::client::discovery::Server {
        client: client.clone(),
        request_timeout: cfg.request_timeout,
    }
}

/// `--timeout`'s deadline, counted from the start of the run, and the duration it was given.
type Deadline = Option<(tokio::time::Instant, std::time::Duration)>;

/// Returns at `--timeout`'s deadline (pending for ever without one).
async fn expired(deadline: Deadline) {
    match deadline {
        Some((at, _)) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// At `--timeout`'s deadline, the connection attempt then in progress, if any: read before
/// the request under it is dropped, which abandons the attempt.
async fn connecting_at(deadline: Deadline) -> Option<String> {
    expired(deadline).await;
    crate::client::connect::pending_connection()
}

/// `--timeout` came while `url`'s discovery (or `/version`) had no answer: exit 3, with
/// one line naming what was awaited (`why`, the connection attempt then in progress).
fn timed_out_connecting(deadline: Deadline, url: &str, why: Option<String>) -> Outcome {
    let after = deadline.map(|(_, after)| after).unwrap_or_default();
    let why = why.unwrap_or_else(|| "no answer yet".to_owned());
    let url = url.trim_end_matches('/');
    let line = format!("error: timed out after {after:?} connecting to the server {url}: {why}");
    let _ = writeln!(io::stderr(), "{}", crate::text::sanitize(&line));
    Outcome::TimedOut
}

/// The client-go release that matches the server's Kubernetes (`GET /version`, see
/// [`Release::for_server`]). A `/version` that cannot be read or parsed gives
/// [`Release::FALLBACK`] and one `~` line saying so, unless the request failed in a way
/// the watch would too (a 401, a refused connection, an untrusted certificate, no answer
/// within `--request-timeout`): that ends the run in kubectl's words, as discovery's
/// failures do.
async fn server_release(
    client: &kube::Client,
    request_timeout: Option<std::time::Duration>,
    url: &str,
    context: Option<&ContextName>,
) -> Result<Release> {
    let body = crate::client::source::get_document(
        client,
        "/version",
        "application/json, */*",
        request_timeout,
    )
    .await;
    let info = match body {
        Ok(b) => serde_json::from_slice::<k8s_openapi::apimachinery::pkg::version::Info>(&b)
            .map_err(|e| format!("not a version document: {e}")),
        Err(e) if e.will_not_fix_itself() && !e.refuses_resource() => {
            return Err(worded(anyhow::Error::new(e), url, context));
        }
        Err(e) => Err(e.to_string()),
    };
    let release = info.and_then(|i| match Release::for_server(&i.major, &i.minor) {
        Some(r) => {
            tracing::info!(
                "the server at {url} is Kubernetes {}.{}: client-go {r}'s informer",
                i.major,
                i.minor
            );
            let minor = i.minor.trim_end_matches('+').parse::<u32>().unwrap_or(0);
            if minor > Release::NEWEST.minor() {
                let mut line = format!(
                    "~ the server is Kubernetes 1.{minor}, newer than any client-go release \
                     kwatch reproduces: watching with client-go {r}'s informer"
                );
                if let Some(c) = context {
                    line.push_str(&format!(" (context {c})"));
                }
                let _ = writeln!(io::stderr(), "{}", crate::text::sanitize(&line));
            }
            Ok(r)
        }
        None => Err(format!(
            "major {:?}, minor {:?} is not a Kubernetes 1.x version",
            i.major, i.minor
        )),
    });
    match release {
        Ok(r) => Ok(r),
        Err(why) => {
            let fallback = Release::FALLBACK;
            let mut line = format!(
                "~ cannot tell the server's Kubernetes version (GET /version: {why}): watching \
                 with client-go {fallback}'s informer; --client-go chooses another"
            );
            if let Some(c) = context {
                line.push_str(&format!(" (context {c})"));
            }
            let _ = writeln!(io::stderr(), "{}", crate::text::sanitize(&line));
            Ok(fallback)
        }
    }
}

/// The printer for stdout (data) and stderr (`~` lines and error reports), with the
/// custom resources' printer columns for a table; and the resources whose lists and
/// watches ask for the server's Table: in a table (not under `--metadata-only`), those
/// with neither a printer of kwatch's own nor a CRD's printer columns (kubectl's get
/// prints the server's Table for every kind: `transformRequests` in its get.go).
async fn printer(
    cfg: &Config,
    clusters: &[Resolved<'_>],
    live: Option<output::live::Shared>,
) -> Result<(Box<dyn Sink>, HashSet<String>)> {
    let mut popts = cfg.printer.clone();
    let mut tables = HashSet::new();
    // Under --metadata-only the table shows no printer columns: no CRD to read.
    if matches!(popts.format, Format::Table | Format::Wide) && !cfg.metadata_only {
        for c in clusters {
            for t in &c.targets {
                if output::columns::has_printer(&t.resource) {
                    continue;
                }
                match crd_columns(&c.client, t).await {
                    Some(cols) if !cols.is_empty() => {
                        popts.printer_columns.insert(t.resource.name.clone(), cols);
                    }
                    _ => {
                        tables.insert(t.resource.name.clone());
                    }
                }
            }
        }
    }
    popts.terminal = io::stdout().is_terminal();
    if popts.contexts {
        popts.context_names = clusters
            .iter()
            .filter_map(|c| c.cluster.context.as_deref().map(str::to_owned))
            .collect();
    }
    for c in clusters {
        popts.targets += c.targets.len();
        for t in &c.targets {
            if !popts.order.contains(&t.resource.name) {
                popts.order.push(t.resource.name.clone());
            }
        }
    }
    if let Some(m) = live {
        let live =
            output::live::LivePrinter::new(popts, m, cfg.live_history, Box::new(io::stderr()));
        return Ok((Box::new(live), tables));
    }
    Ok((output::printer(popts, io::stdout(), io::stderr()), tables))
}

/// Starts every resource's reflector and informer loop; each queue's counters by name,
/// and the stores (kept until exit).
fn start_all(
    cfg: &Config,
    clusters: Vec<Resolved<'_>>,
    tables: &HashSet<String>,
    shared: &Arc<Shared>,
    tx: &mpsc::UnboundedSender<Stop>,
    tasks: &mut JoinSet<()>,
    metrics: Option<&Metrics>,
) -> Started {
    let tag = cfg.fleet();
    if let Some(m) = metrics {
        add_left_out(m, &clusters);
    }
    // Asked for as a group, a resource the server refuses is left out, not the run ended.
    let skip_refused = cfg.every_resource || crate::client::expand::names_all(&cfg.resources);
    let mut queues = Vec::new();
    let mut stores = Vec::new();
    let mut index = 0;
    for Resolved {
        cluster: c,
        client,
        targets,
        selected,
        informer,
        fleet,
    } in clusters
    {
        let context = c.context.clone().filter(|_| tag);
        for (i, t) in targets.into_iter().enumerate() {
            let store = Arc::new(Store::new());
            stores.push(store.clone());
            let label = match &context {
                Some(ctx) => format!("{}@{ctx}", t.resource.name),
                None => t.resource.name.clone(),
            };
            if let Some(m) = metrics {
                let informer = metrics::InformerLabels::new(&t, context.as_ref());
                m.add_informer(metrics_labels(&label), informer);
            }
            let args = Start {
                cfg,
                cluster: c,
                client: &client,
                index,
                informer,
                context: context.clone(),
                shared,
                stop: tx,
                skip_refused,
                fleet: fleet.clone(),
                table: tables.contains(&t.resource.name),
                selected: i < selected,
            };
            let stats = match informer.queue {
                QueueChoice::Delta => {
                    let q = DeltaFifo::new(Some(store.clone()), cfg.emit_replaced);
                    start(tasks, args, t, Arc::new(q), store)
                }
                QueueChoice::Real(opts) => {
                    let q = RealFifo::with_options(store.clone(), opts);
                    start(tasks, args, t, Arc::new(q), store)
                }
            };
            queues.push((label, stats));
            index += 1;
        }
    }
    Started { queues, stores }
}

/// Serves the contexts left out at their start as not synced ([`Metrics::add_left_out`]),
/// under the resources the started `clusters` watch, which stand for those the context
/// would have watched.
fn add_left_out(m: &Metrics, clusters: &[Resolved<'_>]) {
    let Some(f) = clusters.first().and_then(|c| c.fleet.as_ref()) else {
        return;
    };
    let resources: std::collections::BTreeSet<&str> = clusters
        .iter()
        .flat_map(|c| &c.targets[..c.selected])
        .map(|t| t.resource.name.as_str())
        .collect();
    for context in fleet::lock(f).left_out_at_start() {
        for r in &resources {
            m.add_left_out(metrics::Labels {
                resource: (*r).to_owned(),
                context: context.to_string(),
            });
        }
    }
}

/// Runs a reflector (`run`, its [`Reflector::run`]) until it ends for good, then says why:
/// a resource refused when it was asked for as a group is skipped; in a fleet, the
/// resource of that context is left out and the others go on; else the run fails.
fn spawn_reflector<Q: Queue>(
    tasks: &mut JoinSet<()>,
    a: &Start<'_>,
    t: &Target,
    queue: &Arc<Q>,
    run: impl std::future::Future<Output = SourceError> + Send + 'static,
) {
    let stop = a.stop.clone();
    let server = a.cluster.kube.cluster_url.to_string();
    let context = a.context.clone();
    let skip = a.skip_refused.then(|| (a.shared.clone(), queue.clone()));
    let fleet = a.fleet.clone().map(|f| (f, a.shared.clone()));
    let resource = t.resource.name.clone();
    let name = match &a.context {
        Some(c) => format!("{resource} in {c}"),
        None => resource.clone(),
    };
    tasks.spawn(async move {
        let err = run.await;
        if let Some((shared, queue)) = skip.filter(|_| err.refuses_resource()) {
            // Its informer loop prints what is queued, then ends.
            queue.close();
            shared.skip(
                &format!("~ skipping {name}: {err}"),
                &resource,
                context.as_ref(),
            );
            return;
        }
        let err = worded(anyhow::Error::new(err), &server, context.as_ref());
        if let (Some((f, shared)), Some(c)) = (fleet, &context) {
            // This cluster's trouble is this cluster's: the others go on.
            fleet::lock(&f).left_out(c);
            let line = format!("~ leaving out {name}: {}", said(&err));
            shared.leave_out(&line, &resource, Some(c), || {
                anyhow::anyhow!("none of the contexts can be watched: each failed, as said above")
            });
            return;
        }
        let _ = stop.send(Stop::Failed(err));
    });
}

/// The metrics labels of a queue's label (`RESOURCE` or `RESOURCE@CONTEXT`).
fn metrics_labels(label: &str) -> metrics::Labels {
    let (resource, context) = label.split_once('@').unwrap_or((label, ""));
    metrics::Labels {
        resource: resource.to_owned(),
        context: context.to_owned(),
    }
}

/// What [`start_all`] started: one entry per resource and context in each, in one order.
struct Started {
    queues: Vec<(String, QueueStats)>,
    stores: Vec<Arc<Store>>,
}

/// `--cache-stats`: the store's cost every `period`, queued in order with the deltas.
async fn cache_stats<Q: Queue<Notice = Notice>>(
    queue: Arc<Q>,
    cost: Arc<StoreCost>,
    period: std::time::Duration,
) {
    loop {
        tokio::time::sleep(period).await;
        queue.push_notice(Observation::CacheStats(cost.measure()).into());
    }
}

/// A run that ends normally (a stop condition, `--timeout`, a signal, the end of the
/// streams) prints its end records ([`Shared::print_end`]) unless a stop condition
/// already did; a failed run does not.
fn end(shared: &Shared, outcome: Result<Outcome>) -> Result<Outcome> {
    let outcome = outcome?;
    let mut sink = shared.lock();
    match shared.print_end(&mut sink) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            Err(anyhow::Error::new(e).context("writing output"))
        }
        _ => Ok(outcome),
    }
}

/// Ends the output: flushes, clears the progress line, prints `--stats` (with each
/// store's cost at the end under `--cache-stats`).
fn finish(
    shared: &Shared,
    queues: &[(String, QueueStats)],
    outcome: Result<Outcome>,
    fleet: Option<&fleet::Shared>,
) -> Result<Outcome> {
    let mut sink = shared.lock();
    sink.finished = true;
    let flushed = sink.finish();
    if let Some(stats) = sink.observer::<Stats>() {
        let fifo: Vec<(String, FifoStats)> = queues
            .iter()
            .filter_map(|(name, f)| f().map(|s| (name.clone(), s)))
            .collect();
        let mut summary = stats.render(&fifo);
        for (name, c) in &sink.end_costs {
            summary.push_str(&format!("\n  cache {name}: {}", c.text(5)));
        }
        // Several contexts: a line per context, which one is behind or left out.
        if let Some(f) = fleet {
            summary.push('\n');
            summary.push_str(fleet::lock(f).summary().trim_end());
        }
        let _ = writeln!(io::stderr(), "{summary}");
    }
    match flushed {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe && outcome.is_ok() => {
            Err(anyhow::Error::new(e).context("writing output"))
        }
        _ => outcome,
    }
}

/// Reads a queue's counters at exit (`None`: the queue keeps none).
type QueueStats = Arc<dyn Fn() -> Option<FifoStats> + Send + Sync>;

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
        crate::client::source::get_document(client, &path, "application/json", None),
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

/// What `start` needs besides the target and its queue.
struct Start<'a> {
    cfg: &'a Config,
    cluster: &'a Cluster,
    client: &'a kube::Client,
    index: usize,
    /// This cluster's informer.
    informer: Informer,
    context: Option<ContextName>,
    shared: &'a Arc<Shared>,
    stop: &'a mpsc::UnboundedSender<Stop>,
    /// A 403, 404 or 405 before the first sync leaves this resource out
    /// ([`SourceError::refuses_resource`]) instead of ending the run.
    skip_refused: bool,
    /// Several contexts: a failure before the first sync leaves this resource out (its
    /// context marked), the other contexts going on.
    fleet: Option<fleet::Shared>,
    /// List and watch the server's Table ([`KubeSource::table`]).
    table: bool,
    /// One of the user's resources: the user's selectors apply (not to the graph's).
    selected: bool,
}

/// The `~` line of a watch of one name (a NAME argument, or a field selector of
/// `metadata.name` alone) whose object does not exist when the initial list syncs, as
/// kubectl's NotFound names it (`deployments.apps "web"`): the run waits for it silently
/// otherwise. None for the graph's resources, with a label selector (the object may exist
/// and not match), or under --live (its screen shows the empty table).
fn absent_line(a: &Start<'_>, t: &Target) -> Option<String> {
    if !a.selected || a.cfg.live || a.cfg.label_selector.is_some() {
        return None;
    }
    let selector = a.cfg.field_selector.as_deref()?;
    let name = named_object(selector).filter(|_| !selector.contains(','))?;
    let r = &t.resource.name;
    let mut line = match (&a.cluster.namespace, t.resource.namespaced) {
        (Some(ns), true) => format!("no {r} {name:?} in namespace {ns} yet"),
        (None, true) => format!("no {r} {name:?} in any namespace yet"),
        (_, false) => format!("no {r} {name:?} yet"),
    };
    line.push_str(": waiting for it to be created");
    if let Some(c) = &a.context {
        line.push_str(&format!(" (context {c})"));
    }
    Some(line)
}

/// The ListerWatcher of one resource: its collection, selectors, representation and wire.
fn source_of(a: &Start<'_>, t: &Target) -> KubeSource {
    KubeSource::new(
        a.client.clone(),
        t.collection_path(a.cluster.namespace.as_deref()),
        a.cfg.label_selector.clone().filter(|_| a.selected),
        a.cfg.field_selector.clone().filter(|_| a.selected),
        a.cfg.request_timeout,
    )
    .with_type(&t.resource.kind, &t.resource.api_version)
    .metadata_only(a.cfg.metadata_only)
    .table(a.table)
    .drop_managed_fields(!a.cfg.reads_managed_fields())
    .wire(
        a.cfg.wire,
        a.informer.release.minor(),
        &t.resource.kind,
        &t.resource.api_version,
    )
}

/// The reflector's settings for this resource: its own jitter seed, the cluster's
/// compression and the informer's streaming-list mode.
fn reflector_config(a: &Start<'_>) -> crate::cache::reflector::ReflectorConfig {
    let mut rcfg = a.cfg.reflector.clone();
    rcfg.seed = rcfg.seed.wrapping_add(a.index as u64);
    rcfg.gzip = !a.cluster.kube.disable_compression;
    rcfg.watch_list = a
        .informer
        .watch_list(a.cfg.informer.watch_list, rcfg.page_size_explicit);
    rcfg
}

/// Spawns the reflector and the consumer of one resource; returns how to read the
/// queue's counters at exit.
fn start<Q: Queue<Notice = Notice>>(
    tasks: &mut JoinSet<()>,
    a: Start<'_>,
    t: Target,
    queue: Arc<Q>,
    store: Arc<Store>,
) -> QueueStats {
    let source = source_of(&a, &t);
    let rcfg = reflector_config(&a);
    if let Some(f) = a.cfg.freshness {
        let sampler = crate::app::freshness::Sampler {
            client: a.client.clone(),
            path: t.collection_path(a.cluster.namespace.as_deref()),
            resource: t.resource.clone(),
            context: a.context.clone(),
            request_timeout: a.cfg.request_timeout,
        };
        sampler.spawn(f, a.shared, tasks);
    }
    // The reflector queues through `points`, which the consistency checks need.
    let cost = a
        .cfg
        .cache_stats
        .map(|_| Arc::new(StoreCost::new(store.clone())));
    let points = Arc::new(
        SyncPoints::new(queue.clone(), a.cfg.check_consistency.is_some())
            .with_transform(a.cfg.transform.clone())
            .with_cost(cost.clone()),
    );
    if let Some(period) = a.cfg.check_consistency {
        let (lw, page_size) = (source.clone(), rcfg.page_size);
        let checks = check::run(lw, points.clone(), store.clone(), period, page_size);
        tasks.spawn(checks);
    }
    if let (Some(period), Some(cost)) = (a.cfg.cache_stats, cost) {
        tasks.spawn(cache_stats(queue.clone(), cost.clone(), period));
        a.shared
            .caches
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(CacheSource {
                resource: t.resource.clone(),
                context: a.context.clone(),
                cost,
            });
    }
    let reflector = Reflector::new(source, points, rcfg);
    a.shared
        .lists
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(reflector.progress());
    spawn_reflector(tasks, &a, &t, &queue, reflector.run());
    if let Some(g) = &mut a.shared.lock().graph {
        g.add_store(&t.resource, store.clone());
    }
    let stats = queue.clone();
    let informer = InformerInfo {
        client_go: Some(a.informer.release.as_str()),
        queue: Some(a.informer.queue.name()),
        batch: None,
    };
    let absent = absent_line(&a, &t);
    tasks.spawn(crate::informer::consume::consume(
        t,
        a.context,
        informer,
        queue,
        store,
        a.shared.clone(),
        absent,
    ));
    Arc::new(move || stats.stats())
}
