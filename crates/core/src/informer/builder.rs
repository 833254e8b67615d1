//! [`SharedInformer`]: one informer of a given client-go release on any
//! [`ListerWatcher`], with event handlers and sinks, its store readable while it runs —
//! client-go's `NewSharedIndexInformer(lw, obj, resync)`, `AddEventHandler(h)`, `Run` and
//! `GetStore` in a few calls. It composes the crate's parts and adds no behaviour of its
//! own: the queue the release builds ([`Release::queue`]: DeltaFIFO, RealFIFO, with batch
//! pops, atomic), its [`Store`], a [`Reflector`] that lists and watches into the queue, and
//! the informer loop ([`consume()`]) delivering every record to the sinks and making the
//! handler calls ([`crate::cache::handlers`]) of each delta.
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use kwatch_core::cache::fake::FakeSource;
//! use kwatch_core::cache::release::Release;
//! use kwatch_core::informer::builder::SharedInformer;
//! # use kwatch_core::client::target::{Resource, Target};
//! # fn configmaps() -> Target {
//! #     let (name, kind, api_version) = ("configmaps".into(), "ConfigMap".into(), "v1".into());
//! #     let resource = Resource { name, kind, api_version, namespaced: true };
//! #     let (group, version, plural) = (String::new(), "v1".into(), "configmaps".into());
//! #     Target { resource, group, version, plural }
//! # }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let source = FakeSource::new();
//! let cm = |name, v| serde_json::json!({"kind": "ConfigMap", "apiVersion": "v1",
//!     "metadata": {"name": name, "namespace": "default"}, "data": {"k": v}});
//! source.apply(cm("a", "1"))?;
//! source.apply(cm("b", "1"))?;
//!
//! let calls = Arc::new(Mutex::new(Vec::new()));
//! let seen = calls.clone();
//! let mut informer = SharedInformer::new(configmaps(), Release::V0_32)
//!     .add_event_handler(move |key, call| {
//!         let rv = call.object().map(|o| o.resource_version().to_owned());
//!         seen.lock().unwrap().push(format!("{} {key} {}", call.name(), rv.unwrap_or_default()));
//!     })
//!     // Ends after the fourth handler call (the informer's `wait` returns then).
//!     .max_events(4)
//!     .run(source.clone());
//!
//! // The initial list's handler calls have all been made once `synced` returns.
//! assert!(informer.synced().await);
//! assert_eq!(informer.store().len(), 2);
//! source.apply(cm("a", "2"))?;
//! source.delete("default/b");
//! informer.wait().await?;
//! assert_eq!(
//!     *calls.lock().unwrap(),
//!     ["OnAdd default/a 1", "OnAdd default/b 2", "OnUpdate default/a 3", "OnDelete default/b 4"]
//! );
//! assert_eq!(informer.store().list_keys(), ["default/a"]);
//! # Ok(())
//! # }
//! ```

use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

use crate::cache::delta_fifo::DeltaFifo;
use crate::cache::handlers::{HandlerCall, Registration};
use crate::cache::listwatch::{ListerWatcher, SourceError};
use crate::cache::queue::Queue;
use crate::cache::real_fifo::RealFifo;
use crate::cache::reflector::{Reflector, ReflectorConfig};
use crate::cache::release::{Informer, QueueChoice, Release};
use crate::cache::store::Store;
use crate::client::target::Target;
use crate::informer::consume::{self, consume, Delivery, Shared, Stop};
use crate::informer::filter::Filter;
use crate::informer::record::{Body, InformerInfo, Notice, Record};
use crate::informer::sink::Sink;

/// Why a running informer ended other than as asked.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The informer loop failed: a sink's writer did (a closed pipe is no failure).
    #[error(transparent)]
    Informer(#[from] consume::Error),
    /// The reflector gave up before the first sync: the request will not work however
    /// often it is retried ([`SourceError::will_not_fix_itself`]). After the first sync
    /// the reflector retries every error, as client-go's does.
    #[error("listing and watching failed: {0}")]
    Reflector(#[source] SourceError),
}

/// An informer to start: its resource, its client-go release, its handlers and sinks (see
/// the module doc). [`SharedInformer::run`] starts it on a ListerWatcher.
pub struct SharedInformer {
    target: Target,
    informer: Informer,
    reflector: Option<ReflectorConfig>,
    resync: Option<Duration>,
    sinks: Vec<Box<dyn Sink>>,
    handler: bool,
    max_events: Option<u64>,
}

impl SharedInformer {
    /// An informer of `target` as client-go `release` builds it: `Release::V0_32` (or
    /// `Informer::from(Release::V0_32)`) for its DeltaFIFO and LIST, an [`Informer`] of
    /// [`Informer::choose`] for another queue.
    pub fn new(target: Target, informer: impl Into<Informer>) -> SharedInformer {
        SharedInformer {
            target,
            informer: informer.into(),
            reflector: None,
            resync: None,
            sinks: Vec::new(),
            handler: false,
            max_events: None,
        }
    }

    /// Calls `handler` with each call client-go's shared informer makes of a delta
    /// (`OnAdd`, `OnUpdate`, `OnDelete`) and the object's key, in order, from the informer
    /// loop: it should return quickly, as the loop waits for it. Every handler added gets
    /// every call (client-go's `AddEventHandler` before `Run`, with the informer's resync
    /// period).
    pub fn add_event_handler(
        mut self,
        handler: impl FnMut(&str, &HandlerCall) + Send + 'static,
    ) -> SharedInformer {
        self.handler = true;
        self.sinks.push(Box::new(EventHandler(handler)));
        self
    }

    /// Hands every record (deltas, handler calls, the reflector's events, `Synced`) to
    /// `sink`, in order, after the sinks and handlers added before it.
    pub fn sink(mut self, sink: impl Sink + 'static) -> SharedInformer {
        self.sinks.push(Box::new(sink));
        self
    }

    /// The resync period (client-go's `defaultEventHandlerResyncPeriod`): the reflector
    /// queues every stored object again each period while it watches, and the handlers
    /// get `OnUpdate(obj, obj)` for them. None by default.
    pub fn resync(mut self, period: Duration) -> SharedInformer {
        self.resync = Some(period);
        self
    }

    /// The reflector's configuration, instead of the release's: its page size, bookmarks
    /// and `watch_list` (whether to start with a streaming list, which the release decides
    /// otherwise: [`Informer::watch_list`]).
    pub fn reflector(mut self, cfg: ReflectorConfig) -> SharedInformer {
        self.reflector = Some(cfg);
        self
    }

    /// Ends the informer after `n` handler calls (with a handler added), else after `n`
    /// deltas: [`RunningInformer::wait`] returns then.
    pub fn max_events(mut self, n: u64) -> SharedInformer {
        self.max_events = Some(n);
        self
    }

    /// Starts the reflector and the informer loop on `lw`, as tasks of the current tokio
    /// runtime (it panics outside one, as `tokio::spawn` does); they stop when the
    /// returned [`RunningInformer`] is dropped.
    pub fn run<L: ListerWatcher>(mut self, lw: L) -> RunningInformer {
        let mut rcfg = self.reflector.take().unwrap_or_else(|| ReflectorConfig {
            watch_list: self.informer.watch_list(None, false),
            ..ReflectorConfig::default()
        });
        rcfg.resync = self.resync.or(rcfg.resync);
        let store = Arc::new(Store::new());
        match self.informer.queue {
            // client-go's informers set EmitDeltaTypeReplaced (shared_informer.go).
            QueueChoice::Delta => {
                let queue = DeltaFifo::new(Some(store.clone()), true);
                self.start(lw, rcfg, Arc::new(queue), store)
            }
            QueueChoice::Real(opts) => {
                let queue = RealFifo::with_options(store.clone(), opts);
                self.start(lw, rcfg, Arc::new(queue), store)
            }
        }
    }

    fn start<L: ListerWatcher, Q: Queue<Notice = Notice>>(
        self,
        lw: L,
        rcfg: ReflectorConfig,
        queue: Arc<Q>,
        store: Arc<Store>,
    ) -> RunningInformer {
        let (stop, stopped) = mpsc::unbounded_channel();
        let (synced_tx, synced) = watch::channel(false);
        let mut sinks = self.sinks;
        // Last, so that every other sink has taken the Synced record when it is told.
        sinks.push(Box::new(SyncedSignal(synced_tx)));
        let handler = self.handler.then_some(Registration {
            resync: rcfg.resync,
        });
        let shared = Arc::new(Shared {
            delivery: Mutex::new(Delivery::new(sinks)),
            lists: Mutex::default(),
            max_events: self.max_events,
            until_synced: false,
            watch_only: false,
            filter: Filter::default(),
            pop_delay: None,
            until: None,
            stop: stop.clone(),
            handler,
            caches: Mutex::default(),
        });
        // Its sync awaited, and the sinks told of it, before any of its records.
        shared.join(&self.target.resource.name, None);
        let reflector = Reflector::new(lw, queue.clone(), rcfg);
        let mut tasks = JoinSet::new();
        tasks.spawn(async move {
            let _ = stop.send(Stop::Failed(Error::Reflector(reflector.run().await)));
        });
        let info = InformerInfo {
            client_go: Some(self.informer.release.as_str()),
            queue: Some(self.informer.queue.name()),
            batch: None,
        };
        let popped = queue.clone();
        tasks.spawn(consume(
            self.target,
            None,
            info,
            queue,
            store.clone(),
            shared,
            None,
        ));
        RunningInformer {
            store,
            has_synced: Box::new(move || popped.has_synced()),
            synced,
            stopped,
            ended: None,
            release: self.informer.release,
            _tasks: tasks,
        }
    }
}

/// A running informer: its store, whether it has synced, how it ended. Dropping it stops
/// its tasks.
pub struct RunningInformer {
    store: Arc<Store>,
    has_synced: Box<dyn Fn() -> bool + Send + Sync>,
    /// Set once the Synced record has been delivered to every sink.
    synced: watch::Receiver<bool>,
    stopped: mpsc::UnboundedReceiver<Stop<Error>>,
    /// How the informer ended, once [`RunningInformer::synced`] has seen it.
    ended: Option<Stop<Error>>,
    release: Release,
    _tasks: JoinSet<()>,
}

impl RunningInformer {
    /// The informer's store (client-go's `GetStore`): the objects it holds, by key.
    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    /// The client-go release whose informer runs.
    pub fn release(&self) -> Release {
        self.release
    }

    /// client-go's `HasSynced`: the initial list has been popped into the store (the
    /// handlers and sinks may not have been told all of it yet: [`RunningInformer::synced`]
    /// waits for that).
    pub fn has_synced(&self) -> bool {
        (self.has_synced)()
    }

    /// Waits until the initial list has been delivered: its handler calls made, its
    /// `Synced` record taken by every sink (client-go's handler registration's
    /// `HasSynced`). `false` if the informer ended before ([`RunningInformer::wait`] says
    /// how).
    pub async fn synced(&mut self) -> bool {
        if self.ended.is_none() {
            tokio::select! {
                told = self.synced.wait_for(|s| *s) => return told.is_ok(),
                stop = self.stopped.recv() => self.ended = stop,
            }
        }
        *self.synced.borrow()
    }

    /// Waits until the informer ends: `Ok` when [`SharedInformer::max_events`] is reached,
    /// `Err` when it fails. Pending for ever otherwise, as an informer runs until stopped.
    pub async fn wait(&mut self) -> Result<(), Error> {
        let stop = match self.ended.take() {
            Some(s) => s,
            None => match self.stopped.recv().await {
                Some(s) => s,
                None => std::future::pending().await,
            },
        };
        match stop {
            Stop::Done | Stop::Met => Ok(()),
            Stop::Failed(e) => Err(e),
        }
    }
}

/// A handler of [`SharedInformer::add_event_handler`], as a sink of the handler calls.
struct EventHandler<F>(F);

impl<F: FnMut(&str, &HandlerCall) + Send> Sink for EventHandler<F> {
    fn record(&mut self, rec: &Record<'_>) -> io::Result<()> {
        if let Body::Handler { key, call, .. } = rec.body {
            (self.0)(key, call);
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Tells [`RunningInformer::synced`] that the Synced record has been delivered.
struct SyncedSignal(watch::Sender<bool>);

impl Sink for SyncedSignal {
    fn record(&mut self, rec: &Record<'_>) -> io::Result<()> {
        if matches!(rec.body, Body::Synced) {
            self.0.send_replace(true);
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::cache::fake::FakeSource;
    use crate::cache::listwatch::{ApiStatus, ListOptions, ListPage, Watch, WatchOptions};
    use crate::client::target::Resource;

    fn target() -> Target {
        Target {
            resource: Resource::pods(),
            group: String::new(),
            version: "v1".into(),
            plural: "pods".into(),
        }
    }

    fn pod(name: &str, image: &str) -> serde_json::Value {
        json!({"kind": "Pod", "apiVersion": "v1",
            "metadata": {"name": name, "namespace": "ns"}, "spec": {"image": image}})
    }

    /// Runs an informer of `release` with a handler over a source of a and b, then
    /// updates a and deletes b: the calls, and the queue the records named.
    async fn calls_of(release: Release) -> (Vec<String>, Vec<String>) {
        let source = FakeSource::new();
        source.apply(pod("a", "1")).unwrap();
        source.apply(pod("b", "1")).unwrap();
        let calls = Arc::new(Mutex::new(Vec::new()));
        let queues = Arc::new(Mutex::new(Vec::new()));
        let (c, q) = (calls.clone(), queues.clone());
        let mut informer = SharedInformer::new(target(), release)
            .add_event_handler(move |key, call| {
                c.lock().unwrap().push(format!("{} {key}", call.name()));
            })
            .sink(Queues(q))
            .max_events(4)
            .run(source.clone());
        assert!(informer.synced().await, "{release}");
        assert!(informer.has_synced());
        source.apply(pod("a", "2")).unwrap();
        source.delete("ns/b");
        informer.wait().await.unwrap();
        let calls = calls.lock().unwrap().clone();
        let queues = queues.lock().unwrap().clone();
        (calls, queues)
    }

    /// Keeps the `queue` of each Synced record.
    struct Queues(Arc<Mutex<Vec<String>>>);

    impl Sink for Queues {
        fn record(&mut self, rec: &Record<'_>) -> io::Result<()> {
            if matches!(rec.body, Body::Synced) {
                let q = rec.informer.queue.unwrap_or_default().to_owned();
                self.0.lock().unwrap().push(q);
            }
            Ok(())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[tokio::test]
    async fn every_release_builds_its_queue_and_makes_the_same_calls() {
        for release in Release::ALL {
            let (calls, queues) = calls_of(release).await;
            assert_eq!(
                calls,
                ["OnAdd ns/a", "OnAdd ns/b", "OnUpdate ns/a", "OnDelete ns/b"],
                "{release}"
            );
            assert_eq!(queues, [release.queue().name()], "{release}");
        }
    }

    /// A source that refuses every request with `code`.
    struct Refusing(u16);

    impl ListerWatcher for Refusing {
        async fn list(&self, _: ListOptions) -> Result<ListPage, SourceError> {
            Err(SourceError::Api(ApiStatus {
                code: self.0,
                ..ApiStatus::default()
            }))
        }
        async fn watch(&self, _: WatchOptions) -> Result<Watch, SourceError> {
            Err(SourceError::Api(ApiStatus {
                code: self.0,
                ..ApiStatus::default()
            }))
        }
    }

    #[tokio::test]
    async fn a_request_that_will_not_work_ends_it_before_the_sync() {
        let mut informer = SharedInformer::new(target(), Release::V0_32).run(Refusing(403));
        assert!(!informer.synced().await);
        assert!(!informer.has_synced());
        let e = informer.wait().await.unwrap_err();
        assert!(matches!(e, Error::Reflector(_)), "{e}");
    }
}
