//! `--freshness[=PERIOD]`: how far each informer's store is behind its server, read
//! without writing anything ([`crate::informer::freshness`] says what is measured).
//!
//! Per informer, a sampler reads the server's revision every PERIOD with a `LIST
//! ?limit=1` (no resourceVersion: a consistent read, which kube-apiserver serves from its
//! watch cache since 1.34, without selectors: the cheapest list of the collection), and an
//! [`Observer`] of the informer's records moves the store's revision as objects, bookmarks
//! and lists are applied. Each sample is a `Freshness` record (and a `Stale` one when the
//! lag reaches `--stale-after`); a store ahead of the server, or a server whose
//! resourceVersions are not integers (sampling then stops), is one `~` line.

use std::io::Write as _;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Deserialize;
use tokio::task::JoinSet;

use crate::app::config::Freshness as FreshnessConfig;
use crate::app::run::Shared;
use crate::cache::reflector::ReflectorEvent;
use crate::client::target::Resource;
use crate::context::ContextName;
use crate::informer::freshness::{Finding, Freshness, Lag};
use crate::informer::record::{Body, Observation, Record};
use crate::informer::sink::Observer;

/// One informer's sampler: its collection on its server.
pub(crate) struct Sampler {
    pub client: kube::Client,
    /// The collection's path (the informer's namespace, no selectors).
    pub path: String,
    pub resource: Resource,
    pub context: Option<ContextName>,
    pub request_timeout: Option<Duration>,
}

impl Sampler {
    /// Starts sampling into `tasks`, and registers the store's observer with `shared`.
    pub(crate) fn spawn(self, cfg: FreshnessConfig, shared: &Arc<Shared>, tasks: &mut JoinSet<()>) {
        let tracker = Arc::new(Mutex::new(Freshness::new(cfg.stale_after)));
        shared.lock().observers.push(Box::new(StoreRevision {
            resource: self.resource.name.clone(),
            context: self.context.clone(),
            tracker: tracker.clone(),
        }));
        let shared = shared.clone();
        tasks.spawn(async move { self.run(cfg.period, tracker, shared).await });
    }

    async fn run(self, period: Duration, tracker: Arc<Mutex<Freshness>>, shared: Arc<Shared>) {
        let mut tick = tokio::time::interval(period);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // A sample that takes longer than a period (a frozen connection) counts as failed:
        // the lag goes on being read.
        let limit = period.max(Duration::from_secs(1));
        loop {
            tick.tick().await;
            let server = match tokio::time::timeout(limit, self.revision()).await {
                Ok(Ok(Revision::Integer(n))) => Some(n),
                Ok(Ok(Revision::Opaque(rv))) => {
                    self.say(&format!(
                        "~ --freshness stops for {}: the server's resourceVersion {rv:?} is not \
                         an integer, so how far the store is behind cannot be told",
                        self.resource.name
                    ));
                    return;
                }
                Ok(Err(e)) => {
                    tracing::debug!("--freshness sample of {} failed: {e}", self.path);
                    None
                }
                Err(_) => None,
            };
            let found = lock(&tracker).sampled(server, Instant::now());
            for f in found {
                self.report(f, &shared);
            }
        }
    }

    fn report(&self, f: Finding, shared: &Shared) {
        let ev = match f {
            Finding::Lag {
                lag,
                server,
                store,
                recovered,
            } => Observation::Freshness(Lag {
                lag: whole_micros(lag),
                server_resource_version: server.to_string(),
                store_resource_version: store.to_string(),
                recovered,
            }),
            Finding::Stale { lag, server, store } => Observation::Stale(Lag {
                lag: whole_micros(lag),
                server_resource_version: server.to_string(),
                store_resource_version: store.to_string(),
                recovered: false,
            }),
            Finding::Ahead { server, store } => {
                return self.say(&format!(
                    "~ the store of {} is at resourceVersion {store}, ahead of the server's \
                     {server}: an etcd restored from a backup (kubernetes/kubernetes#107457), \
                     or an API server behind the one that serves the watch",
                    self.resource.name
                ));
            }
        };
        shared.print_observation(&self.resource, self.context.as_ref(), &ev);
    }

    /// A `~` line on stderr, naming the context with several.
    fn say(&self, line: &str) {
        let line = match &self.context {
            Some(c) => format!("{line} (context {c})"),
            None => line.to_owned(),
        };
        let _ = writeln!(std::io::stderr(), "{}", crate::text::sanitize(&line));
    }

    /// The server's revision now: a list's `metadata.resourceVersion`.
    async fn revision(&self) -> Result<Revision, crate::cache::listwatch::SourceError> {
        let path = format!("{}?limit=1", self.path);
        let body = crate::client::source::get_document(
            &self.client,
            &path,
            "application/json",
            self.request_timeout,
        )
        .await?;
        #[derive(Deserialize, Default)]
        struct Meta {
            #[serde(default, rename = "resourceVersion")]
            resource_version: String,
        }
        #[derive(Deserialize)]
        struct List {
            #[serde(default)]
            metadata: Meta,
        }
        let rv = serde_json::from_slice::<List>(&body)
            .map(|l| l.metadata.resource_version)
            .unwrap_or_default();
        Ok(match rv.parse() {
            Ok(n) => Revision::Integer(n),
            Err(_) => Revision::Opaque(rv),
        })
    }
}

enum Revision {
    Integer(u64),
    Opaque(String),
}

/// A lag as records carry it: in whole microseconds.
fn whole_micros(d: Duration) -> Duration {
    Duration::from_micros(u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

fn lock(t: &Mutex<Freshness>) -> std::sync::MutexGuard<'_, Freshness> {
    t.lock().unwrap_or_else(|e| e.into_inner())
}

/// Moves one informer's store revision as its records are delivered: an object applied,
/// a bookmark, a list (queued behind its objects).
struct StoreRevision {
    resource: String,
    context: Option<ContextName>,
    tracker: Arc<Mutex<Freshness>>,
}

impl Observer for StoreRevision {
    fn record(&mut self, rec: &Record<'_>, _shown: bool, _targets: usize) {
        if rec.resource.name != self.resource || rec.context != self.context.as_ref() {
            return;
        }
        let rv = match &rec.body {
            Body::Delta { delta, .. } => delta.object.object().map(|o| o.resource_version()),
            Body::Event(ReflectorEvent::Bookmark { resource_version })
            | Body::Event(ReflectorEvent::Listed {
                resource_version, ..
            }) => Some(resource_version.as_str()),
            _ => None,
        };
        if let Some(rv) = rv.and_then(|rv| rv.parse().ok()) {
            lock(&self.tracker).store_at(rv, Instant::now());
        }
    }
}
