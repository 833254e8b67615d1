//! The watch command: one reflector → DeltaFIFO → consumer per resource, all consumers
//! printing into one output stream, until a stop condition, Ctrl-C or an error.
//!
//! The consumer is client-go's informer loop: it pops a key's deltas, applies them to the
//! store under the FIFO's lock (`pop_with`), then prints each delta, oldest first.

use std::io;
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use crate::cli::{FifoKind, WatchArgs};
use crate::config::Config;
use crate::fifo::{DeltaFifo, Popped};
use crate::output::{self, Body, Printer, Record};
use crate::real_fifo::RealFifo;
use crate::reflector::{Reflector, ReflectorEvent, ReflectorStore};
use crate::source::KubeSource;
use crate::store::Store;
use crate::target::{self, Target};

/// How a watch ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A stop condition was met (--max-events, --until-synced, --timeout) or the
    /// output was closed by its reader.
    Done,
    Interrupted,
}

enum Stop {
    Done,
    Failed(anyhow::Error),
}

/// Shared by the consumers: the printer and the counters that decide when to stop.
struct Sink {
    printer: Box<dyn Printer>,
    deltas: u64,
    synced: usize,
    /// Nothing more is printed once set.
    finished: bool,
}

struct Shared {
    sink: Mutex<Sink>,
    targets: usize,
    max_events: Option<u64>,
    until_synced: bool,
    watch_only: bool,
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
            let _ = sink.printer.flush();
            let _ = self.stop.send(s);
        }
    }
}

/// Runs `kwatch [flags] RESOURCE[,RESOURCE…] [NAME]`.
pub async fn run(args: WatchArgs) -> Result<Outcome> {
    let sim = if args.sim {
        Some(
            crate::sim::SimServer::start(crate::sim::SimOptions {
                seed: rand::random(),
                ..crate::sim::SimOptions::default()
            })
            .await?,
        )
    } else {
        None
    };
    let kubeconfig = match &sim {
        Some(s) => Some(
            kube::config::Kubeconfig::from_yaml(&s.kubeconfig_yaml())
                .context("the simulated cluster's kubeconfig")?,
        ),
        None => None,
    };
    let cfg = Config::resolve(args, kubeconfig).await?;
    let outcome = watch(cfg).await;
    if let Some(s) = sim {
        s.shutdown().await;
    }
    outcome
}

async fn watch(cfg: Config) -> Result<Outcome> {
    let cluster = cfg.kube.cluster_url.to_string();
    let client = kube::Client::try_from(cfg.kube.clone()).context("cannot build the client")?;
    let discovery = target::resolve_all(&client, &cfg.resources);
    let targets = match cfg.request_timeout {
        Some(t) => tokio::time::timeout(t, discovery).await.map_err(|_| {
            anyhow::anyhow!("no answer from {cluster} within {t:?} (--request-timeout)")
        })?,
        None => discovery.await,
    }
    .with_context(|| format!("cannot watch at {cluster}"))?;

    let (tx, mut rx) = mpsc::unbounded_channel();
    let shared = Arc::new(Shared {
        sink: Mutex::new(Sink {
            printer: output::printer(cfg.printer.clone(), io::stdout()),
            deltas: 0,
            synced: 0,
            finished: false,
        }),
        targets: targets.len(),
        max_events: cfg.stop.max_events,
        until_synced: cfg.stop.until_synced,
        watch_only: cfg.stop.watch_only,
        stop: tx.clone(),
    });
    if shared.max_events == Some(0) {
        return Ok(Outcome::Done);
    }

    let mut tasks = JoinSet::new();
    for (i, t) in targets.into_iter().enumerate() {
        let store = Arc::new(Store::new());
        match cfg.fifo {
            FifoKind::Delta => {
                let q = Arc::new(DeltaFifo::new(Some(store.clone()), cfg.emit_replaced));
                start(&mut tasks, &cfg, &client, i, t, q, store, &shared, &tx);
            }
            FifoKind::Real => {
                let q = Arc::new(RealFifo::new(store.clone()));
                start(&mut tasks, &cfg, &client, i, t, q, store, &shared, &tx);
            }
        }
    }
    drop(tx);

    let timeout = async {
        match cfg.stop.timeout {
            Some(t) => tokio::time::sleep(t).await,
            None => std::future::pending().await,
        }
    };
    let outcome = tokio::select! {
        stop = rx.recv() => match stop {
            Some(Stop::Failed(e)) => Err(e),
            Some(Stop::Done) | None => Ok(Outcome::Done),
        },
        _ = timeout => Ok(Outcome::Done),
        _ = tokio::signal::ctrl_c() => Ok(Outcome::Interrupted),
    };
    {
        let mut sink = shared.lock();
        sink.finished = true;
        match sink.printer.flush() {
            Err(e) if e.kind() != io::ErrorKind::BrokenPipe && outcome.is_ok() => {
                return Err(anyhow::Error::new(e).context("writing output"));
            }
            _ => {}
        }
    }
    tasks.abort_all();
    outcome
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

/// Spawns the reflector and the consumer of one resource.
#[allow(clippy::too_many_arguments)]
fn start<Q: Queue>(
    tasks: &mut JoinSet<()>,
    cfg: &Config,
    client: &kube::Client,
    index: usize,
    t: Target,
    queue: Arc<Q>,
    store: Arc<Store>,
    shared: &Arc<Shared>,
    stop: &mpsc::UnboundedSender<Stop>,
) {
    let source = KubeSource::new(
        client.clone(),
        t.collection_path(cfg.namespace.as_deref()),
        cfg.label_selector.clone(),
        cfg.field_selector.clone(),
        cfg.request_timeout,
    );
    let mut rcfg = cfg.reflector.clone();
    rcfg.seed = rcfg.seed.wrapping_add(index as u64);
    let reflector = Reflector::new(source, queue.clone(), rcfg);
    let stop = stop.clone();
    let name = t.resource.name.clone();
    tasks.spawn(async move {
        let err = reflector.run().await;
        let _ = stop.send(Stop::Failed(
            anyhow::Error::new(err).context(format!("cannot list {name}")),
        ));
    });
    tasks.spawn(consume(t, queue, store, shared.clone()));
}

/// The informer's processing loop for one resource.
async fn consume<Q: Queue>(t: Target, fifo: Arc<Q>, store: Arc<Store>, shared: Arc<Shared>) {
    let mut synced = false;
    loop {
        let popped = fifo
            .pop_with(|p| {
                if let Popped::Deltas { deltas, .. } = &p {
                    store.apply(deltas);
                }
                p
            })
            .await;
        let Some(popped) = popped else { return };
        let now_synced = !synced && fifo.has_synced();
        synced |= now_synced;
        let drained = fifo.is_empty();
        shared.write(|sink| {
            let rec = |body| Record {
                resource: &t.resource,
                time: jiff::Timestamp::now(),
                body,
            };
            match &popped {
                Popped::Notice(ev) => sink.printer.print(&rec(Body::Event(ev)))?,
                Popped::Deltas {
                    key,
                    deltas,
                    is_in_initial_list,
                } => {
                    if !(shared.watch_only && *is_in_initial_list) {
                        for delta in deltas {
                            sink.printer.print(&rec(Body::Delta {
                                key,
                                delta,
                                initial_list: *is_in_initial_list,
                            }))?;
                            sink.deltas += 1;
                            if shared.max_events.is_some_and(|m| sink.deltas >= m) {
                                return Ok(Some(Stop::Done));
                            }
                        }
                    }
                }
            }
            if now_synced {
                sink.printer.print(&rec(Body::Synced))?;
                sink.synced += 1;
                if shared.until_synced && sink.synced == shared.targets {
                    return Ok(Some(Stop::Done));
                }
            }
            if drained {
                sink.printer.flush()?;
            }
            Ok(None)
        });
    }
}
