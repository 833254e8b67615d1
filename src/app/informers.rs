//! A cluster's informers, started into a running run: [`resolve_one`] finds a cluster's
//! resources and its client-go release (discovery, `/version`); [`Run::start`] starts, for
//! each resource, a store, a queue of that release, a reflector and the informer loop,
//! registering each where the run reports (the sinks through `Shared::join`, `--metrics`,
//! `--stats`' queues, the stores kept until exit). The watch starts its clusters so, and a
//! fleet starts so each context that joins later (the supervisor in `src/app/fleet/`).

use std::collections::HashSet;
use std::io::{self, Write as _};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::Result;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use crate::app::config::{Cluster, Config};
use crate::app::metrics::{self, Metrics};
use crate::app::run::{Shared, Stop};
use crate::cache::consistency::check::{self, SyncPoints};
use crate::cache::cost::StoreCost;
use crate::cache::delta_fifo::DeltaFifo;
use crate::cache::listwatch::SourceError;
use crate::cache::queue::{FifoStats, Queue};
use crate::cache::real_fifo::RealFifo;
use crate::cache::reflector::Reflector;
use crate::cache::release::{Informer, QueueChoice, Release};
use crate::cache::store::Store;
use crate::client::source::KubeSource;
use crate::client::target::Target;
use crate::context::ContextName;
use crate::informer::consume::CacheSource;
use crate::informer::record::{InformerInfo, Notice, Observation};

/// A cluster, the resources to watch in it, and the informer its server gets.
pub struct Resolved {
    pub cluster: Arc<Cluster>,
    pub client: kube::Client,
    /// The user's resources, then the graph's (`--follow`, `--events`).
    pub targets: Vec<Target>,
    /// How many of `targets` are the user's: the graph's take no selector.
    pub selected: usize,
    pub informer: Informer,
}

/// Where a fleet's informers say their context's trouble: the fleet's supervisor
/// (`src/app/fleet/`) implements it, so that the informers know no fleet.
pub trait ContextTrouble: Send + Sync {
    /// An informer of `context` ended for good, saying `why`: the context starts again.
    fn failed(&self, context: &ContextName, why: String);
    /// A resource of `context` that the server refuses is left out, the rest watched.
    fn left_out(&self, context: &ContextName);
}

/// What the informers of a run share, so that a cluster's can start at the start or later
/// (a context of a fleet that comes back or appears in the kubeconfig).
#[derive(Clone)]
pub struct Run {
    pub cfg: Arc<Config>,
    pub shared: Arc<Shared>,
    pub stop: mpsc::UnboundedSender<Stop>,
    /// The resources listed and watched as the server's Table (the table's choice).
    pub tables: Arc<HashSet<String>>,
    pub metrics: Option<Arc<Metrics>>,
    /// Every informer started and not stopped since.
    pub started: Arc<Mutex<Vec<Started>>>,
    /// Several contexts: where a context's trouble goes (it starts again).
    pub fleet: Option<Arc<dyn ContextTrouble>>,
    /// The next informer's number (each reflector's jitter seed apart).
    index: Arc<AtomicUsize>,
}

impl Run {
    pub fn new(
        cfg: Arc<Config>,
        shared: Arc<Shared>,
        stop: mpsc::UnboundedSender<Stop>,
        tables: HashSet<String>,
        metrics: Option<Arc<Metrics>>,
        fleet: Option<Arc<dyn ContextTrouble>>,
    ) -> Run {
        Run {
            cfg,
            shared,
            stop,
            tables: Arc::new(tables),
            metrics,
            started: Arc::default(),
            fleet,
            index: Arc::default(),
        }
    }
}

/// One cluster's targets and informer: discovery, the server's release (`/version`), the
/// graph's resources; its errors in kubectl's words (naming the context when `tag`).
pub async fn resolve_one(
    cfg: &Config,
    c: Arc<Cluster>,
    client: kube::Client,
    tag: bool,
) -> Result<Resolved> {
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
    })
}

/// The discovery client's server.
fn server_of(client: &kube::Client, cfg: &Config) -> crate::client::discovery::Server {
    crate::client::discovery::Server {
        client: client.clone(),
        request_timeout: cfg.request_timeout,
    }
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

/// The error of a request to `server` as kubectl words it, when the request failed
/// (see [`SourceError::kubectl_message`]); any other error as it is.
pub fn worded(err: anyhow::Error, server: &str, context: Option<&ContextName>) -> anyhow::Error {
    let Some(e) = err.chain().find_map(|e| e.downcast_ref::<SourceError>()) else {
        return err;
    };
    let mut line = e.kubectl_message(server);
    if let Some(c) = context {
        line.push_str(&format!(" (context {c})"));
    }
    anyhow::Error::new(crate::app::exit::Worded(line))
}

/// An error as a `~` line says it: kubectl's words as they are, else its causes on one line.
pub fn said(err: &anyhow::Error) -> String {
    match err
        .chain()
        .find_map(|e| e.downcast_ref::<crate::app::exit::Worded>())
    {
        Some(w) => w.0.clone(),
        None => crate::app::exit::one_line(err),
    }
}

impl Run {
    /// Starts every resource of each of `clusters`, each cluster's tasks in a set of its
    /// own. Every informer joins the run before any starts: the run waits for each one's
    /// sync (an informer that synced first does not end `--until-synced` early), and the
    /// sinks learn of each before its records.
    pub fn start(&self, clusters: Vec<Resolved>) -> Vec<(Arc<Cluster>, JoinSet<()>)> {
        for r in &clusters {
            let context = r.cluster.context.clone().filter(|_| self.cfg.fleet());
            for t in &r.targets {
                self.shared.join(&t.resource.name, context.as_ref());
            }
        }
        clusters
            .into_iter()
            .map(|r| {
                let mut tasks = JoinSet::new();
                let cluster = r.cluster.clone();
                self.spawn(r, &mut tasks);
                (cluster, tasks)
            })
            .collect()
    }

    /// Starts every resource of `r`: a store, a queue of its client-go release, a
    /// reflector and the informer loop each, spawned into `tasks`, each registered where
    /// the run reports (`--metrics`, `--stats`' queues, the stores kept until exit).
    fn spawn(&self, r: Resolved, tasks: &mut JoinSet<()>) {
        let cfg = &*self.cfg;
        let Resolved {
            cluster: c,
            client,
            targets,
            selected,
            informer,
        } = r;
        let context = c.context.clone().filter(|_| cfg.fleet());
        // Asked for as a group, a resource the server refuses is left out, not the run ended.
        let skip_refused = cfg.every_resource || crate::client::expand::names_all(&cfg.resources);
        for (i, t) in targets.into_iter().enumerate() {
            let store = Arc::new(Store::new());
            let labels = metrics::Labels {
                resource: t.resource.name.clone(),
                context: crate::context::or_empty(context.as_ref()).to_owned(),
            };
            if let Some(m) = &self.metrics {
                m.add_informer(
                    labels.clone(),
                    metrics::InformerLabels::new(&t, context.as_ref()),
                );
            }
            let args = Start {
                run: self,
                cfg,
                cluster: &c,
                client: &client,
                index: self.index.fetch_add(1, Ordering::Relaxed),
                informer,
                context: context.clone(),
                shared: &self.shared,
                skip_refused,
                table: self.tables.contains(&t.resource.name),
                selected: i < selected,
            };
            let resource = t.resource.name.clone();
            let stats = match informer.queue {
                QueueChoice::Delta => {
                    let q = DeltaFifo::new(Some(store.clone()), cfg.emit_replaced);
                    start(tasks, args, t, Arc::new(q), store.clone())
                }
                QueueChoice::Real(opts) => {
                    let q = RealFifo::with_options(store.clone(), opts);
                    start(tasks, args, t, Arc::new(q), store.clone())
                }
            };
            if let Some(m) = &self.metrics {
                let queue = stats.clone();
                m.add_source(labels, store.clone(), Box::new(move || queue()));
            }
            lock(&self.started).push(Started {
                context: context.clone(),
                resource,
                queue: stats,
                store,
            });
        }
    }

    /// The informers of `context` stopped (their tasks aborted): what reports on them
    /// forgets them, `gone` (the context left the kubeconfig) its `--metrics` series too.
    pub fn forget(&self, context: &ContextName, gone: bool) {
        lock(&self.started).retain(|s| s.context.as_ref() != Some(context));
        if let Some(m) = &self.metrics {
            m.stopped(context.as_str(), gone);
        }
        let mine = |c: &Option<ContextName>| c.as_ref() == Some(context);
        (self.shared.caches.lock().unwrap_or_else(|e| e.into_inner()))
            .retain(|c| !mine(&c.context));
        // A list's progress is held by its reflector and by the run: those whose
        // reflector has ended are the run's alone.
        (self.shared.lists.lock().unwrap_or_else(|e| e.into_inner()))
            .retain(|p| Arc::strong_count(p) > 1);
    }
}

/// Runs a reflector (`run`, its [`Reflector::run`]) until it ends for good, then says why:
/// a resource refused when it was asked for as a group is skipped; in a fleet, a resource
/// of that context the server refuses is left out, and any other failure is the
/// context's: it starts again ([`ContextTrouble::failed`]), the other contexts going on;
/// else the run fails.
fn spawn_reflector<Q: Queue>(
    tasks: &mut JoinSet<()>,
    a: &Start<'_>,
    t: &Target,
    queue: &Arc<Q>,
    run: impl std::future::Future<Output = SourceError> + Send + 'static,
) {
    let stop = a.run.stop.clone();
    let server = a.cluster.kube.cluster_url.to_string();
    let context = a.context.clone();
    let skip = a.skip_refused.then(|| (a.shared.clone(), queue.clone()));
    let fleet = a.run.fleet.clone().map(|f| (f, a.shared.clone()));
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
        let refused = err.refuses_resource();
        let err = worded(anyhow::Error::new(err), &server, context.as_ref());
        if let (Some((f, shared)), Some(c)) = (fleet, &context) {
            // This cluster's trouble is this cluster's: the others go on.
            if !refused {
                f.failed(c, said(&err));
                return;
            }
            f.left_out(c);
            let line = format!("~ leaving out {name}: {}", said(&err));
            shared.leave_out(&line, &resource, Some(c), |_| {
                anyhow::anyhow!("none of the contexts can be watched: each failed, as said above")
            });
            return;
        }
        let _ = stop.send(Stop::Failed(err));
    });
}

/// One informer a run started.
pub struct Started {
    pub context: Option<ContextName>,
    pub resource: String,
    /// Its queue's counters.
    pub queue: QueueStats,
    /// Its store, kept until exit.
    pub store: Arc<Store>,
}

impl Started {
    /// `RESOURCE`, or `RESOURCE@CONTEXT` with several contexts.
    pub fn label(&self) -> String {
        match &self.context {
            Some(c) => format!("{}@{c}", self.resource),
            None => self.resource.clone(),
        }
    }
}

/// Locks what was started (a panic elsewhere leaves it readable).
pub fn lock(s: &Mutex<Vec<Started>>) -> std::sync::MutexGuard<'_, Vec<Started>> {
    s.lock().unwrap_or_else(|e| e.into_inner())
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

/// The name a field selector pins (`metadata.name=NAME`, which a NAME argument adds).
pub fn named_object(field_selector: &str) -> Option<&str> {
    field_selector
        .split(',')
        .find_map(|term| term.trim().strip_prefix("metadata.name="))
        .map(|n| n.strip_prefix('=').unwrap_or(n))
}

/// Reads a queue's counters at exit (`None`: the queue keeps none).
pub type QueueStats = Arc<dyn Fn() -> Option<FifoStats> + Send + Sync>;

/// What `start` needs besides the target and its queue.
struct Start<'a> {
    run: &'a Run,
    cfg: &'a Config,
    cluster: &'a Cluster,
    client: &'a kube::Client,
    index: usize,
    /// This cluster's informer.
    informer: Informer,
    context: Option<ContextName>,
    shared: &'a Arc<Shared>,
    /// A 403, 404 or 405 before the first sync leaves this resource out
    /// ([`SourceError::refuses_resource`]) instead of ending the run.
    skip_refused: bool,
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
