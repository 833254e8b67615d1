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
use crate::app::informers::{self, resolve_one, QueueStats, Resolved, Run, Started};
use crate::app::metrics::{self, Metrics};
use crate::app::run::{Shared, Stop};
use crate::app::stats::Stats;
use crate::cache::handlers::Registration;
use crate::cache::queue::FifoStats;
use crate::cache::store::Store;
use crate::client::target::Target;
use crate::context::ContextName;
use crate::informer::consume::Delivery;
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
    // `--stats`' elapsed and times to synced count from here: the run's wall time, the
    // contexts' starts (connecting, discovery, a fleet's retries) included.
    let started = std::time::Instant::now();
    let sim = if args.sim {
        Some(crate::app::sim::LocalSim::start().await?)
    } else {
        None
    };
    let kubeconfig = sim.as_ref().map(|s| s.kubeconfig.clone());
    let cfg = Config::resolve(args, kubeconfig).await?;
    let outcome = watch(cfg, started).await;
    if let Some(s) = sim {
        s.shutdown().await;
    }
    outcome
}

/// The watch of `cfg`, begun at `started`.
async fn watch(cfg: Config, started: std::time::Instant) -> Result<Outcome> {
    let mut signals = Signals::new();
    let deadline = deadline(&cfg);
    // Bound before anything starts: a busy address ends the run at once (exit 2).
    let metrics_listener = match &cfg.metrics {
        Some(addr) => Some(metrics::bind(addr).await?),
        None => None,
    };
    let cfg = Arc::new(cfg);
    // Several contexts: one cluster's trouble is that cluster's (`fleet`).
    let fleet = cfg.fleet().then(fleet::Shared::default);
    let (clusters, pending) = match resolve(&cfg, &mut signals, deadline, fleet.as_ref()).await? {
        Ok(resolved) => resolved,
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
    let recording = recorder.1.clone();
    let (shared, shown) = shared_state(
        &cfg,
        &clusters,
        shared_printer,
        recorder,
        &tx,
        fleet.as_ref(),
        started,
    );
    // In place before any informer or probe starts: a record observed earlier (the initial
    // list's) would be missing from the counters for good.
    let metrics = metrics_listener
        .map(|listener| (listener, observed_metrics(&cfg, &shared, recording.clone())));
    let handle = fleet.clone().map(fleet::Handle::new);
    let run = Run::new(
        cfg.clone(),
        shared.clone(),
        tx.clone(),
        tables,
        metrics.as_ref().map(|(_, m)| m.clone()),
        handle.as_ref().map(|(h, _)| h.trouble()),
    );
    if let (Some((_, m)), Some(f)) = (&metrics, &fleet) {
        add_left_out(m, &clusters, f);
    }
    let mut tasks = JoinSet::new();
    for p in &probes {
        p.spawn(&shared, &tx, cfg.request_timeout, &mut tasks);
    }
    // Each cluster's informers, in sets of their own: a fleet's supervisor holds them (and
    // stops one context's alone).
    let mut informer_tasks = run.start(clusters);
    // Nothing to sync (a followed kubeconfig with no context picked yet): synced already.
    if cfg.stop.until_synced && shared.lock().targets() == 0 {
        let _ = tx.send(Stop::Done);
    }
    if let Some((h, events)) = handle {
        let started = std::mem::take(&mut informer_tasks);
        tasks.spawn(fleet::supervise(
            run.clone(),
            h.state,
            events,
            started,
            pending,
        ));
    }
    if let Some((listener, m)) = metrics {
        tasks.spawn(metrics::serve(listener, m));
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
    informer_tasks.iter_mut().for_each(|(_, t)| t.abort_all());
    drop(screen);
    remove_probes(&probes).await;
    let started = std::mem::take(&mut *informers::lock(&run.started));
    conclude(&cfg, &shared, started, outcome, fleet.as_ref())
}

/// When `--timeout` ends the run, and after how long: it bounds the whole run, connecting
/// and discovery included (else a server that never completes the TLS handshake holds the
/// run for client-go's 10 s handshake timeout).
fn deadline(cfg: &Config) -> Option<(tokio::time::Instant, std::time::Duration)> {
    let after = cfg.stop.timeout?;
    Some((tokio::time::Instant::now() + after, after))
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
            _ = expired(deadline) => Ok(if until || !shared.lock().all_synced() {
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
    started: Vec<Started>,
    outcome: Result<Outcome>,
    fleet: Option<&fleet::Shared>,
) -> Result<Outcome> {
    let stores: Vec<(String, Arc<Store>)> = started
        .iter()
        .map(|s| (s.resource.clone(), s.store.clone()))
        .collect();
    let queues: Vec<(String, QueueStats)> = started
        .iter()
        .map(|s| (s.label(), s.queue.clone()))
        .collect();
    let outcome = match fleet {
        Some(f) => fleet_outcome(cfg, f, outcome),
        None => outcome,
    };
    let outcome = match outcome {
        Ok(Outcome::Done | Outcome::NotAllSynced) => match ended_in_error(cfg, shared, &stores) {
            Some(line) => Err(anyhow::Error::new(crate::app::exit::Worded(line))),
            None => outcome,
        },
        other => other,
    };
    let until = cfg.stop.until.is_some();
    // kubectl wait's error line, after the summary as kwatch's other errors come.
    let timed_out = (until && matches!(outcome, Ok(Outcome::TimedOut))).then(|| {
        let named = cfg
            .field_selector
            .as_deref()
            .and_then(informers::named_object);
        crate::informer::until::timed_out(&waited_on(&stores, named))
    });
    // The end's records (measured before the stores are forgotten).
    let outcome = end(shared, outcome);
    // Never dropped: freeing every cached object one by one (a tenth of the CPU of a
    // 100k-object list) is work the process's exit does at once.
    std::mem::forget((stores, started));
    // Without --until, only a run that never synced times out: say why.
    let unsynced = matches!(outcome, Ok(Outcome::TimedOut)) && !until;
    let outcome = finish(shared, &queues, outcome, fleet);
    if let (Some(line), Ok(Outcome::TimedOut)) = (timed_out, &outcome) {
        let _ = writeln!(io::stderr(), "{}", crate::text::sanitize(&line));
    }
    if let (true, Some(after)) = (unsynced, cfg.stop.timeout) {
        let delivery = shared.lock();
        let loading = delivery.observer::<crate::app::progress::Loading>();
        let line = loading.map_or_else(String::new, |l| {
            l.timed_out_before_sync(after, delivery.synced(), delivery.targets())
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
    clusters: &[Resolved],
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
    // --record's recorders and --timeline's page, before the printer.
    let (mut recorders, recording) = crate::app::record::recorders(&cfg.record).await?;
    if let Some(path) = &cfg.timeline {
        let mode = cfg.printer.diff;
        recorders.push(crate::app::timeline::Timeline::create(path, "live run", mode)?.boxed());
    }
    Ok((printer, tables, screen, (recorders, recording)))
}

/// The state the informers of `clusters` share: the recorder and the printer as their
/// sinks (the printer clearing the loading line, which reads what it has shown), what
/// ends the run, the fleet's counter (several contexts) and the owner graph (`--follow`,
/// `--events`); `--stats` and the fleet's counter time from `started`, the run's start.
fn shared_state(
    cfg: &Config,
    clusters: &[Resolved],
    printer: Box<dyn Sink>,
    (recorders, recording): crate::app::record::Recorder,
    stop: &mpsc::UnboundedSender<Stop>,
    fleet: Option<&fleet::Shared>,
    started: std::time::Instant,
) -> (Arc<Shared>, crate::app::progress::Shown) {
    let shown = crate::app::progress::Shown::default();
    let mut sinks = recorders;
    sinks.push(Box::new(crate::app::progress::Cleared {
        inner: printer,
        shown: shown.clone(),
    }));
    let mut sink = Delivery::new(sinks);
    sink.observers
        .push(Box::<crate::app::progress::Loading>::default());
    sink.observers
        .push(Box::<crate::app::watched::Watched>::default());
    if cfg.stats {
        sink.observers.push(Box::new(
            Stats::since(started)
                .blaming(cfg.printer.blame)
                .recording(recording),
        ));
    }
    // Fighting managers are found in --blame's attribution: on with it only.
    sink.conflicts = cfg
        .printer
        .blame
        .then(crate::informer::conflict::Conflicts::default);
    if let Some(f) = fleet {
        sink.observers
            .push(Box::new(fleet::Counter::new(f.clone(), started)));
    }
    if cfg.graph() {
        let roots = clusters
            .iter()
            .flat_map(|r| r.targets[..r.selected].iter())
            .map(|t| t.resource.name.clone());
        let events = cfg.events.then(|| "events".to_owned());
        sink.graph = Some(crate::informer::follow::Graph::new(roots, events));
    }
    let shared = Arc::new(Shared {
        lists: Mutex::new(Vec::new()),
        delivery: Mutex::new(sink),
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
    });
    (shared, shown)
}

/// `--probe`: one probe per cluster, each created (rights checked, leftovers deleted)
/// before any watch starts; if one fails, those created are deleted.
async fn create_probes(
    cfg: &Config,
    clusters: &[Resolved],
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

/// Why a run that ended as asked is still an error, as kubectl's would be: a watch that
/// never once succeeded (`Error from server (Forbidden): …`, as `kubectl get -w`), or a
/// NAME argument whose object does not exist when `--until-synced` ends the run
/// (`Error from server (NotFound): pods "web" not found`, as `kubectl get pod web`).
fn ended_in_error(
    cfg: &Config,
    shared: &Shared,
    stores: &[(String, Arc<Store>)],
) -> Option<String> {
    let delivery = shared.lock();
    let never = delivery
        .observer::<crate::app::watched::Watched>()
        .and_then(|w| w.never_watched());
    if never.is_some() {
        return never;
    }
    let name = cfg.name.as_deref().filter(|_| cfg.stop.until_synced)?;
    if !delivery.all_synced() || stores.iter().any(|(_, s)| !s.is_empty()) {
        return None;
    }
    let (resource, _) = stores.first()?;
    Some(format!(
        "Error from server (NotFound): {resource} {name:?} not found"
    ))
}

/// What `--until` waited on, as (plural, name) sorted: every object the stores hold, or
/// the named object when none is held (the object `--until created` waited for). Each
/// store with its resource (`deployments.apps`: its plural before the group).
fn waited_on(stores: &[(String, Arc<Store>)], named: Option<&str>) -> Vec<(String, String)> {
    let plural = |r: &str| r.split('.').next().unwrap_or(r).to_owned();
    let mut objects: Vec<(String, String)> = stores
        .iter()
        .flat_map(|(resource, store)| {
            store.list_keys().into_iter().map(move |key| {
                let name = key.rsplit_once('/').map_or(key.as_str(), |(_, n)| n);
                (plural(resource), name.to_owned())
            })
        })
        .collect();
    objects.sort();
    objects.dedup();
    if let (true, Some(name), Some((resource, _))) = (objects.is_empty(), named, stores.first()) {
        objects.push((plural(resource), name.to_owned()));
    }
    objects
}

/// What the start gives: the clusters resolved, and (several contexts) those that could
/// not start, to be tried again in the background.
type Resolving = (Vec<Resolved>, Vec<fleet::Pending>);

/// Every cluster's targets, resolved before anything is printed (a bad context or
/// resource fails the run first); `Err` with the outcome when a signal came meanwhile.
/// With several contexts, [`resolve_fleet`].
async fn resolve(
    cfg: &Config,
    signals: &mut Signals,
    deadline: Deadline,
    fleet: Option<&fleet::Shared>,
) -> Result<std::result::Result<Resolving, Outcome>> {
    if let Some(f) = fleet {
        return resolve_fleet(cfg, signals, deadline, f).await;
    }
    let mut clusters = Vec::new();
    for c in &cfg.clusters {
        let url = c.kube.cluster_url.to_string();
        let client = crate::client::connect::client(&c.kube)?;
        let resolved = tokio::select! {
            r = resolve_one(cfg, c.clone(), client, false) => r?,
            signalled = signals.recv() => return Ok(Err(signalled)),
            why = connecting_at(deadline) => return Ok(Err(timed_out_connecting(deadline, &url, why))),
        };
        clusters.push(resolved);
    }
    Ok(Ok((clusters, Vec::new())))
}

/// Several contexts: each context's start ([`fleet::try_start`]) at once, each tried up
/// to [`fleet::TRIES`] times with client-go's backoff between, and all of them bounded by
/// half of `--timeout` if given (the other half is the others' to sync); a context whose
/// tries all fail is left out for now with one `~` line naming it, and tried again in the
/// background. The run fails when every context failed, unless it follows the kubeconfig.
/// A signal ends the run at once.
async fn resolve_fleet(
    cfg: &Config,
    signals: &mut Signals,
    deadline: Deadline,
    state: &fleet::Shared,
) -> Result<std::result::Result<Resolving, Outcome>> {
    let starting: Mutex<Vec<ContextName>> =
        Mutex::new(cfg.clusters.iter().map(|c| c.name()).collect());
    let mut pending = Vec::new();
    for (name, why) in &cfg.left_out {
        fleet::leave_out(state, name, &format!(": {why}"), say);
        pending.push(fleet::Pending::new(cfg, name.clone(), 1, None));
    }
    // With --timeout D, a context's start may take half of D, so that the others have
    // the other half to sync.
    let budget = deadline.map(|(_, after)| after / 2);
    let starts = cfg.clusters.iter().map(|c| {
        let starting = &starting;
        async move {
            let name = c.name();
            let tries = start_context(cfg, c.clone());
            let started = match budget {
                Some(b) => match tokio::time::timeout(b, tries).await {
                    Ok(r) => r,
                    Err(_) => Err((
                        format!(
                            ": not started within {b:?}, half of --timeout (discovery and \
                             /version of the server {})",
                            c.kube.cluster_url.to_string().trim_end_matches('/')
                        ),
                        fleet::TRIES,
                    )),
                },
                None => tries.await,
            };
            starting
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .retain(|n| *n != name);
            started.map_err(|(why, tries)| {
                fleet::leave_out(state, &name, &why, say);
                fleet::Pending::new(cfg, name, tries, Some(c.entry))
            })
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
    let mut clusters = Vec::new();
    for started in all {
        match started {
            Ok(r) => clusters.push(r),
            Err(p) => pending.push(p),
        }
    }
    if clusters.is_empty() && pending.is_empty() && cfg.contexts.follows() {
        let shard = cfg
            .contexts
            .shard()
            .map(|s| format!(" of shard {s}"))
            .unwrap_or_default();
        say(&format!(
            "~ no context{shard} in the kubeconfig yet: waiting for the kubeconfig to change"
        ));
    }
    if clusters.is_empty() && !cfg.contexts.follows() {
        anyhow::bail!(
            "none of the {} contexts can be watched: each failed, as said above",
            cfg.clusters.len() + cfg.left_out.len()
        );
    }
    let mut s = fleet::lock(state);
    for c in &clusters {
        s.started(&c.cluster.name(), c.targets.len());
    }
    Ok(Ok((clusters, pending)))
}

/// One context's start in a fleet: [`fleet::try_start`], tried [`fleet::TRIES`] times with
/// client-go's backoff between. `Err`: why it was given up, as the `~` line ends, and how
/// many tries it had.
async fn start_context(
    cfg: &Config,
    c: Arc<Cluster>,
) -> std::result::Result<Resolved, (String, u32)> {
    let name = c.name();
    let mut backoff = fleet::backoff(cfg, &name);
    let mut tried = 1;
    loop {
        let why = match fleet::try_start(cfg, c.clone()).await {
            Ok(r) => return Ok(r),
            Err(why) => why,
        };
        if tried >= fleet::TRIES {
            return Err((format!(" after {tried} tries: {why}"), tried));
        }
        tracing::info!(
            "context {name}: try {tried} of {} failed: {why}",
            fleet::TRIES
        );
        tokio::time::sleep(backoff.step()).await;
        tried += 1;
    }
}

/// A `~` line of the start, before the sinks exist.
fn say(line: &str) {
    let _ = writeln!(io::stderr(), "{}", crate::text::sanitize(line));
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

/// The printer for stdout (data) and stderr (`~` lines and error reports), with the
/// custom resources' printer columns for a table; and the resources whose lists and
/// watches ask for the server's Table: in a table (not under `--metadata-only`), those
/// with neither a printer of kwatch's own nor a CRD's printer columns (kubectl's get
/// prints the server's Table for every kind: `transformRequests` in its get.go).
async fn printer(
    cfg: &Config,
    clusters: &[Resolved],
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
        let live = output::live::LivePrinter::new(popts, m, cfg.live_history);
        return Ok((Box::new(live), tables));
    }
    Ok((output::printer(popts, io::stdout(), io::stderr()), tables))
}

/// Serves the contexts left out at their start as not synced ([`Metrics::add_left_out`]),
/// under the resources the started `clusters` watch, which stand for those the context
/// would have watched.
fn add_left_out(m: &Metrics, clusters: &[Resolved], f: &fleet::Shared) {
    let resources: std::collections::BTreeSet<&str> = clusters
        .iter()
        .flat_map(|c| &c.targets[..c.selected])
        .map(|t| t.resource.name.as_str())
        .collect();
    for context in fleet::lock(f).never_started() {
        for r in &resources {
            m.add_left_out(metrics::Labels {
                resource: (*r).to_owned(),
                context: context.to_string(),
            });
        }
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
