//! The fleet's supervisor: starts again the contexts that could not start or stopped, and
//! follows the kubeconfig, for the whole run.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tokio::task::{AbortHandle, JoinSet};

use super::{lock, Shared, FOLLOW_EVERY, TRIES, TRY_TIMEOUT};
use crate::app::config::{Cluster, Config};
use crate::app::informers::{resolve_one, said, ContextTrouble, Resolved, Run};
use crate::cache::reflector::backoff::Backoff;
use crate::context::ContextName;

/// What the informers tell the supervisor.
enum Event {
    /// An informer of `context` ended for good (not a refused resource): the context stops,
    /// and starts again.
    Failed { context: ContextName, why: String },
}

/// The informers' way to the supervisor, and the fleet's state.
#[derive(Clone)]
pub struct Handle {
    pub state: Shared,
    events: mpsc::UnboundedSender<Event>,
}

/// What the supervisor reads from the informers' [`Handle`]s.
pub struct Events(mpsc::UnboundedReceiver<Event>);

impl Handle {
    pub fn new(state: Shared) -> (Handle, Events) {
        let (events, rx) = mpsc::unbounded_channel();
        (Handle { state, events }, Events(rx))
    }

    /// The informers' way to say their context's trouble.
    pub fn trouble(&self) -> Arc<dyn ContextTrouble> {
        Arc::new(self.clone())
    }
}

impl ContextTrouble for Handle {
    fn failed(&self, context: &ContextName, why: String) {
        let context = context.clone();
        let _ = self.events.send(Event::Failed { context, why });
    }

    fn left_out(&self, context: &ContextName) {
        lock(&self.state).left_out(context);
    }
}

/// A context not started yet: how often it was tried, and the backoff before its next try.
pub struct Pending {
    name: ContextName,
    tries: u32,
    backoff: Backoff,
    /// Its next try waits for the backoff (else it is tried at once).
    wait: bool,
    /// Said in a `~` line when it has failed [`TRIES`] times (its start's first tries say
    /// so themselves).
    announce: bool,
    /// Its kubeconfig entry's hash when it was read (`None`: unusable).
    entry: Option<u64>,
}

impl Pending {
    /// Context `name`, tried `tries` times already: its backoff where those left it.
    pub fn new(cfg: &Config, name: ContextName, tries: u32, entry: Option<u64>) -> Pending {
        let mut backoff = backoff(cfg, &name);
        for _ in 1..tries {
            backoff.step();
        }
        Pending {
            name,
            tries,
            backoff,
            wait: tries > 0,
            announce: false,
            entry,
        }
    }
}

/// The backoff between a context's tries: client-go's reflector's (0.8 s doubling to
/// 30 s, jittered: `NewExponentialBackoffManager` in tools/cache/reflector.go), its jitter
/// the context's own.
pub fn backoff(cfg: &Config, name: &ContextName) -> Backoff {
    let seed = (name.bytes()).fold(cfg.reflector.seed, |h, b| h.rotate_left(5) ^ u64::from(b));
    Backoff::new(seed, cfg.reflector.clocks.backoff_start)
}

/// One try of a context's start: a client (whose credentials, an exec plugin's, are each
/// try's own) and [`resolve_one`], bounded by [`TRY_TIMEOUT`]. `Err`: why it failed, as a
/// `~` line says it.
pub async fn try_start(cfg: &Config, c: Arc<Cluster>) -> Result<Resolved, String> {
    let name = c.name();
    let url = c.kube.cluster_url.to_string();
    let attempt = async {
        let client = crate::client::connect::client(&c.kube)?;
        resolve_one(cfg, c, client, true).await
    };
    match tokio::time::timeout(TRY_TIMEOUT, attempt).await {
        Ok(Ok(r)) => Ok(r),
        Ok(Err(e)) => Err(said(&e)),
        Err(_) => Err(format!(
            "no answer from the server {} within {TRY_TIMEOUT:?} (context {name})",
            url.trim_end_matches('/')
        )),
    }
}

/// Leaves context `name` out for now (it is tried again in the background), saying `why`
/// (`: …` or ` after N tries: …`) in one `~` line through `say`.
pub fn leave_out(state: &Shared, name: &ContextName, why: &str, say: impl FnOnce(&str)) {
    lock(state).retrying(name);
    say(&format!("~ leaving out context {name}{why}"));
}

/// A context's tries until it starts, each after its backoff, its kubeconfig entry read
/// anew each time (credentials refreshed, a certificate written since).
async fn join(run: Run, state: Shared, mut p: Pending) -> (Pending, Resolved) {
    let cfg = run.cfg.clone();
    loop {
        if p.wait {
            tokio::time::sleep(p.backoff.step()).await;
        }
        p.wait = true;
        p.tries += 1;
        let started = match cluster(&cfg, &p.name).await {
            Ok(c) => try_start(&cfg, c).await,
            Err(why) => Err(why),
        };
        match started {
            Ok(r) => return (p, r),
            Err(why) if p.announce && p.tries == TRIES => {
                let say = |line: &str| run.shared.say(line);
                leave_out(
                    &state,
                    &p.name,
                    &format!(" after {TRIES} tries: {why}"),
                    say,
                );
            }
            Err(why) => tracing::info!("context {}: try {} failed: {why}", p.name, p.tries),
        }
    }
}

/// Context `name` as the kubeconfig says it now.
async fn cluster(cfg: &Config, name: &ContextName) -> Result<Arc<Cluster>, String> {
    let kc = cfg
        .contexts
        .load()
        .map_err(|e| crate::app::exit::one_line(&e))?;
    match cfg.contexts.cluster(&kc, Some(name.clone())).await {
        Ok(c) => Ok(Arc::new(c)),
        Err(e) => Err(crate::app::exit::one_line(&e)),
    }
}

/// A context whose informers run.
struct Running {
    /// Its kubeconfig entry's hash ([`Cluster::entry`]).
    entry: u64,
    tasks: JoinSet<()>,
    since: Instant,
}

/// client-go's backoff manager starts over after this long without a failure
/// (`NewExponentialBackoffManager(800ms, 30s, 2min, …)` in tools/cache/reflector.go): a
/// context that ran this long before it stopped starts its backoff over.
const BACKOFF_RESET: Duration = Duration::from_secs(120);

struct Supervisor {
    run: Run,
    state: Shared,
    running: BTreeMap<ContextName, Running>,
    joining: JoinSet<(Pending, Resolved)>,
    /// Each joining context's task (by which its result is known for the current one),
    /// and its kubeconfig entry's hash when the task began (`None`: unusable).
    joiners: BTreeMap<ContextName, (AbortHandle, Option<u64>)>,
    /// The backoff a stopped context's next start waits for, kept across its restarts.
    backoffs: BTreeMap<ContextName, Pending>,
}

/// Supervises the fleet for the whole run: each of `pending` (contexts that could not
/// start) and each context that stops is tried again until it starts; `started` are the
/// contexts running, each with its informers' tasks. Following the kubeconfig, each change
/// of its files adds, removes or restarts contexts.
pub async fn supervise(
    run: Run,
    state: Shared,
    events: Events,
    started: Vec<(Arc<Cluster>, JoinSet<()>)>,
    pending: Vec<Pending>,
) {
    let Events(mut events) = events;
    let cfg = run.cfg.clone();
    let mut s = Supervisor {
        run,
        state,
        running: BTreeMap::new(),
        joining: JoinSet::new(),
        joiners: BTreeMap::new(),
        backoffs: BTreeMap::new(),
    };
    for (c, tasks) in started {
        let since = Instant::now();
        s.running.insert(
            c.name(),
            Running {
                entry: c.entry,
                tasks,
                since,
            },
        );
    }
    for p in pending {
        s.join(p);
    }
    let files = cfg.contexts.follows().then(|| cfg.contexts.files());
    let mut seen = files.as_deref().map(signature);
    let mut poll = tokio::time::interval(FOLLOW_EVERY);
    poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            Some(Event::Failed { context, why }) = events.recv() => s.failed(context, &why),
            Some(done) = s.joining.join_next_with_id(), if !s.joining.is_empty() => {
                if let Ok((id, (p, r))) = done {
                    s.joined(id, p, r);
                }
            }
            _ = poll.tick(), if files.is_some() => {
                let now = files.as_deref().map(signature);
                if now != seen {
                    seen = now;
                    s.reread().await;
                }
            }
        }
    }
}

impl Supervisor {
    /// Tries `p` in the background until it starts.
    fn join(&mut self, p: Pending) {
        let (name, entry) = (p.name.clone(), p.entry);
        let task = join(self.run.clone(), self.state.clone(), p);
        let handle = self.joining.spawn(task);
        if let Some((old, _)) = self.joiners.insert(name, (handle, entry)) {
            old.abort();
        }
    }

    /// A joiner's context started: its informers start into the running output, unless
    /// the joiner was replaced or the context removed meanwhile.
    fn joined(&mut self, id: tokio::task::Id, mut p: Pending, r: Resolved) {
        if self.joiners.get(&p.name).map(|(h, _)| h.id()) != Some(id) {
            return;
        }
        self.joiners.remove(&p.name);
        let line = match p.tries {
            1 => format!("~ context {} joined", p.name),
            n => format!("~ context {} joined after {n} tries", p.name),
        };
        self.run.shared.say(&line);
        lock(&self.state).started(&p.name, r.targets.len());
        let entry = r.cluster.entry;
        p.entry = Some(entry);
        let started = self.run.start(vec![r]);
        let Some((_, tasks)) = started.into_iter().next() else {
            return;
        };
        let since = Instant::now();
        self.running.insert(
            p.name.clone(),
            Running {
                entry,
                tasks,
                since,
            },
        );
        self.backoffs.insert(p.name.clone(), p);
    }

    /// `context`'s informers stop (their tasks end), said in `line`, and what reports them
    /// forgets them (`gone`: for good).
    fn stop(&mut self, context: &ContextName, line: &str, gone: bool) -> Option<Running> {
        let mut running = self.running.remove(context);
        if let Some(r) = &mut running {
            r.tasks.abort_all();
        }
        if let Some((j, _)) = self.joiners.remove(context) {
            j.abort();
        }
        self.run.forget(context, gone);
        self.run.shared.stop_context(line, context);
        running
    }

    /// An informer of `context` ended for good: the context stops and is tried again after
    /// its backoff, which starts over if it had run a while.
    fn failed(&mut self, context: ContextName, why: &str) {
        if !self.running.contains_key(&context) {
            return;
        }
        let line = format!("~ context {context} stopped: {why} (started again in the background)");
        let ran = self.stop(&context, &line, false).map(|r| r.since.elapsed());
        lock(&self.state).retrying(&context);
        let mut p = self
            .backoffs
            .remove(&context)
            .unwrap_or_else(|| Pending::new(&self.run.cfg, context.clone(), 0, None));
        if ran.is_some_and(|d| d >= BACKOFF_RESET) {
            p = Pending::new(&self.run.cfg, context, 0, p.entry);
        }
        p.tries = 0;
        p.wait = true;
        self.join(p);
    }

    /// The kubeconfig changed: contexts it no longer has (or the flags no longer pick)
    /// stop, new ones join, changed ones restart. A kubeconfig that cannot be read (a file
    /// half written) changes nothing: the next change is read again.
    async fn reread(&mut self) {
        let cfg = self.run.cfg.clone();
        let kc = match cfg.contexts.load() {
            Ok(kc) => kc,
            Err(e) => {
                let e = crate::app::exit::one_line(&e);
                tracing::info!("the kubeconfig changed and cannot be read: {e}");
                return;
            }
        };
        let picked = cfg.contexts.followed(&kc);
        let known: Vec<ContextName> = self
            .running
            .keys()
            .chain(self.joiners.keys())
            .cloned()
            .collect();
        for name in known.iter().filter(|n| !picked.contains(n)) {
            let line = format!("~ context {name} is no longer in the kubeconfig: stopped");
            self.stop(name, &line, true);
            self.backoffs.remove(name);
            lock(&self.state).removed(name);
        }
        for name in picked {
            let entry = match cfg.contexts.cluster(&kc, Some(name.clone())).await {
                Ok(c) => Some(c.entry),
                Err(_) => None,
            };
            let restart = format!("~ context {name} changed in the kubeconfig: started again");
            match (self.running.get(&name), self.joiners.get(&name)) {
                (Some(r), _) if Some(r.entry) == entry => continue,
                (Some(_), _) => {
                    self.stop(&name, &restart, false);
                    lock(&self.state).retrying(&name);
                }
                // Still trying: at once with the new entry, its backoff left behind.
                (None, Some((_, tried))) if *tried == entry => continue,
                (None, Some(_)) => self.run.shared.say(&restart),
                (None, None) => lock(&self.state).retrying(&name),
            }
            let mut p = Pending::new(&cfg, name, 0, entry);
            p.announce = true;
            self.join(p);
        }
    }
}

/// What the poll compares of the kubeconfig's files: each one's size, modification time
/// and inode (`None`: absent).
fn signature(files: &[std::path::PathBuf]) -> Vec<Option<(u64, std::time::SystemTime, u64)>> {
    use std::os::unix::fs::MetadataExt as _;
    files
        .iter()
        .map(|f| {
            let m = std::fs::metadata(f).ok()?;
            Some((m.len(), m.modified().ok()?, m.ino()))
        })
        .collect()
}
