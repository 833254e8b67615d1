//! client-go's Reflector: LIST (paged), then WATCH from the list's resourceVersion,
//! feeding a [`ReflectorStore`] (the DeltaFIFO) and announcing every step as a
//! [`ReflectorEvent`] so that a user can see when and why each list, relist and watch
//! restart happened.
//!
//! The rules (see docs/client-go-semantics.md, and client-go `tools/cache/reflector.go`,
//! `tools/pager/pager.go`):
//! - list RV: "0" first, then the last synced RV, "" after a 410 / too-large-RV list error;
//! - paging off (limit 0) for a specific RV other than "0", unless a page size was given
//!   or an RV="0" list once came back paginated; an expired continue token on page ≥ 2
//!   falls back to one full list at the requested RV;
//! - watch from the last synced RV; every event (bookmarks too) advances it;
//! - a clean close re-watches without relisting; a watch that lasted < 1 s with no event
//!   is an error; 429 and connection refused on opening back off and re-watch; any other
//!   error (410, ERROR event, undecodable line) ends ListAndWatch: back off, then relist;
//! - every list page and watch goes through the request layer ([`crate::retry`]), which
//!   retries answers with `Retry-After` by itself: the reflector sees only what it gave up
//!   on, and announces each retry as [`ReflectorEvent::Retry`];
//! - the periodic resync runs only while watching: from the end of a list until the watch
//!   fails and a relist is needed (client-go `watchWithResync`), its period starting anew;
//! - until the first list has been replaced into the store (the first sync), an error that
//!   will not fix itself ([`SourceError::will_not_fix_itself`]) ends [`Reflector::run`].

pub mod backoff;
#[cfg(test)]
mod scripted;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use rand::Rng;
use tokio::time::Instant;

use crate::listwatch::{ListOptions, ListerWatcher, SourceError, WatchEvent, WatchOptions};
use crate::object::ObjectRef;
use crate::queue::Queue;
use crate::retry::{Retry, Retrying};
use backoff::Backoff;

/// client-go's `minWatchTimeout`: each watch asks for a timeout in [5 min, 10 min).
pub const MIN_WATCH_TIMEOUT_SECS: u32 = 300;
/// client-go's pager default page size.
pub const DEFAULT_PAGE_SIZE: u32 = 500;
/// A watch shorter than this that delivered nothing is an error (client-go).
pub const SHORT_WATCH: Duration = Duration::from_secs(1);

/// How far the list under way has got, for a progress display: pages and objects
/// received so far (reset when a list or watch-list starts).
#[derive(Debug, Default)]
pub struct ListProgress {
    pub pages: std::sync::atomic::AtomicU64,
    pub items: std::sync::atomic::AtomicU64,
}

impl ListProgress {
    fn reset(&self) {
        self.pages.store(0, Ordering::Relaxed);
        self.items.store(0, Ordering::Relaxed);
    }

    fn page(&self, items: usize) {
        self.pages.fetch_add(1, Ordering::Relaxed);
        self.items.fetch_add(items as u64, Ordering::Relaxed);
    }
}

/// What the reflector writes to: the DeltaFIFO's producer side, plus announcements.
pub trait ReflectorStore: Send + Sync + 'static {
    fn add(&self, obj: ObjectRef);
    fn update(&self, obj: ObjectRef);
    fn delete(&self, obj: ObjectRef);
    fn replace(&self, objs: Vec<ObjectRef>, resource_version: &str);
    fn resync(&self);
    /// An announcement, ordered with the deltas queued after it.
    fn notice(&self, event: ReflectorEvent);
}

/// What the reflector did, in the order it did it.
#[derive(Debug, Clone, PartialEq)]
pub enum ReflectorEvent {
    /// A list begins. `reason`: "initial", or why the previous attempt failed.
    /// `streaming`: a watch-list (KEP-3157) rather than a LIST.
    List {
        resource_version: String,
        limit: u32,
        reason: String,
        streaming: bool,
    },
    /// A list succeeded; `Replace` follows.
    Listed {
        resource_version: String,
        items: usize,
        pages: u32,
        elapsed: Duration,
        /// An expired continue token made the pager fall back to one full list.
        full_list_fallback: bool,
        streaming: bool,
    },
    /// A watch is being opened.
    Watch {
        resource_version: String,
        timeout_seconds: u32,
    },
    /// A watch ended. `error` tells whether this leads to a relist.
    WatchEnded {
        reason: String,
        events: u64,
        elapsed: Duration,
        error: bool,
    },
    Bookmark {
        resource_version: String,
    },
    /// Waiting before the next attempt.
    Backoff {
        delay: Duration,
        cause: String,
    },
    /// The periodic resync fired.
    Resync,
    /// The server does not do streaming lists: LIST from now on (`auto`) or this once.
    WatchListFallback {
        error: String,
    },
    /// The request layer is about to send a list page or watch again (see
    /// [`crate::retry`]); the reflector has not seen the answer.
    Retry(Retry),
}

/// Whether to get the initial state from a streaming list (KEP-3157).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum WatchListMode {
    /// Try it; if the server rejects it, LIST from then on.
    Auto,
    /// Always try it first (falling back to LIST for an attempt it fails).
    On,
    /// Always LIST.
    Off,
}

#[derive(Debug, Clone)]
pub struct ReflectorConfig {
    /// Page size; 0 = no paging.
    pub page_size: u32,
    /// The user asked for this page size (client-go `WatchListPageSize`): always used.
    pub page_size_explicit: bool,
    pub resync: Option<Duration>,
    pub bookmarks: bool,
    /// Lower bound of each watch's random timeout (upper bound: twice this).
    pub min_watch_timeout_secs: u32,
    pub watch_list: WatchListMode,
    pub seed: u64,
}

impl Default for ReflectorConfig {
    fn default() -> Self {
        ReflectorConfig {
            page_size: DEFAULT_PAGE_SIZE,
            page_size_explicit: false,
            resync: None,
            bookmarks: true,
            min_watch_timeout_secs: MIN_WATCH_TIMEOUT_SECS,
            watch_list: WatchListMode::Off,
            seed: rand::rng().random(),
        }
    }
}

/// Why ListAndWatch stopped: the cause shown to the user.
struct Failure {
    cause: String,
    /// The error itself when it came from the server or the connection.
    error: Option<SourceError>,
}

impl From<SourceError> for Failure {
    fn from(e: SourceError) -> Self {
        Failure {
            cause: e.to_string(),
            error: Some(e),
        }
    }
}

struct Listed {
    items: Vec<ObjectRef>,
    resource_version: String,
    pages: u32,
    paginated: bool,
    full_list_fallback: bool,
}

pub struct Reflector<L, S> {
    lw: Retrying<L>,
    store: Arc<S>,
    cfg: ReflectorConfig,
    /// The RV of the last list or watch event processed; "" before the first list.
    last_sync_rv: String,
    /// Set when a list at `last_sync_rv` failed with 410 / too-large RV: list at "".
    rv_unavailable: bool,
    /// An RV="0" list came back paginated: the server pages, keep paging.
    paginated_result: bool,
    /// Try a streaming list before LIST; cleared for good when `auto` falls back.
    use_watch_list: bool,
    /// A list (or streaming list) has been replaced into the store once: from then on
    /// every error is retried, as client-go's informers retry them.
    established: bool,
    backoff: Backoff,
    rng: rand::rngs::SmallRng,
    progress: Arc<ListProgress>,
}

impl<L: ListerWatcher, S: ReflectorStore> Reflector<L, S> {
    pub fn new(lw: L, store: Arc<S>, cfg: ReflectorConfig) -> Self {
        use rand::SeedableRng;
        let use_watch_list = cfg.watch_list != WatchListMode::Off;
        let notices = store.clone();
        let on_retry = Arc::new(move |r| notices.notice(ReflectorEvent::Retry(r)));
        Reflector {
            lw: Retrying::new(lw, on_retry),
            store,
            backoff: Backoff::new(cfg.seed),
            rng: rand::rngs::SmallRng::seed_from_u64(cfg.seed.wrapping_add(1)),
            cfg,
            last_sync_rv: String::new(),
            rv_unavailable: false,
            paginated_result: false,
            use_watch_list,
            established: false,
            progress: Arc::default(),
        }
    }

    pub fn last_sync_resource_version(&self) -> &str {
        &self.last_sync_rv
    }

    /// The progress of the list under way, updated as pages (or streamed objects) arrive.
    pub fn progress(&self) -> Arc<ListProgress> {
        self.progress.clone()
    }

    /// Runs until the task is dropped or aborted. Returns only if, before the first list
    /// was replaced into the store, a request failed with an error that will not fix
    /// itself (a user is better served by that error than by endless backoff).
    pub async fn run(mut self) -> SourceError {
        let mut reason = "initial".to_owned();
        loop {
            let failure = self.list_and_watch(&reason).await;
            if let Some(e) = failure.error.filter(|e| self.is_fatal(e)) {
                return e;
            }
            self.back_off(failure.cause.clone()).await;
            reason = failure.cause;
        }
    }

    /// Whether `e` ends [`Reflector::run`]: it will not fix itself and nothing was listed yet.
    fn is_fatal(&self, e: &SourceError) -> bool {
        !self.established && e.will_not_fix_itself()
    }

    /// client-go `relistResourceVersion`, except that a first list with an explicit page
    /// size is a consistent read (""): kube-apiserver serves RV "0" from its cache and
    /// ignores `limit` there, so the pages asked for would never come.
    fn relist_rv(&self) -> String {
        if self.rv_unavailable {
            String::new()
        } else if self.last_sync_rv.is_empty() {
            if self.cfg.page_size_explicit && self.cfg.page_size > 0 {
                String::new()
            } else {
                "0".to_owned()
            }
        } else {
            self.last_sync_rv.clone()
        }
    }

    fn page_limit(&self, rv: &str) -> u32 {
        if self.cfg.page_size_explicit || self.paginated_result {
            self.cfg.page_size
        } else if !rv.is_empty() && rv != "0" {
            0
        } else {
            self.cfg.page_size
        }
    }

    /// One ListAndWatch: returns only when it has to start over.
    async fn list_and_watch(&mut self, reason: &str) -> Failure {
        let mut streaming = None;
        if self.use_watch_list {
            match self.watch_list(reason).await {
                Ok(stream) => streaming = Some(stream),
                Err(f) => {
                    // 422 Invalid is how a server without streaming lists refuses
                    // `sendInitialEvents`: LIST from now on. Another error that will not
                    // fix itself (a bad selector, no permission) would fail the LIST too.
                    if f.error
                        .as_ref()
                        .is_some_and(|e| self.is_fatal(e) && !is_rejection(e))
                    {
                        return f;
                    }
                    let rejected = f.error.as_ref().is_some_and(is_rejection);
                    if self.cfg.watch_list == WatchListMode::Auto && rejected {
                        self.use_watch_list = false;
                    }
                    self.store
                        .notice(ReflectorEvent::WatchListFallback { error: f.cause });
                }
            }
        }
        if streaming.is_none() {
            if let Err(f) = self.list(reason).await {
                return f;
            }
        }
        // client-go `watchWithResync`: resyncs only while watching, from the list on.
        let _resync = self.cfg.resync.map(|period| self.start_resync(period));
        loop {
            if let Some(stream) = streaming.take() {
                if let Err(f) = self.handle_watch(stream, Instant::now(), None).await {
                    return f;
                }
                continue;
            }
            let timeout_seconds = self.watch_timeout();
            let opts = WatchOptions {
                resource_version: self.last_sync_rv.clone(),
                timeout_seconds,
                allow_bookmarks: self.cfg.bookmarks,
                send_initial_events: false,
            };
            self.store.notice(ReflectorEvent::Watch {
                resource_version: opts.resource_version.clone(),
                timeout_seconds,
            });
            let stream = match self.lw.watch(opts).await {
                Ok(s) => s,
                Err(e) if is_watch_retriable(&e) => {
                    self.back_off(format!("watch: {e}")).await;
                    continue;
                }
                Err(e) => {
                    let cause = format!("watch: {e}");
                    self.store.notice(ReflectorEvent::WatchEnded {
                        reason: cause.clone(),
                        events: 0,
                        elapsed: Duration::ZERO,
                        error: true,
                    });
                    return Failure {
                        cause,
                        error: Some(e),
                    };
                }
            };
            if let Err(f) = self
                .handle_watch(stream, Instant::now(), Some(timeout_seconds))
                .await
            {
                if f.error
                    .as_ref()
                    .is_some_and(|e| e.api().is_some_and(|s| s.code == 429))
                {
                    self.back_off(f.cause).await;
                    continue;
                }
                return f;
            }
        }
    }

    /// client-go `watchList`: a watch with `sendInitialEvents=true` whose initial events
    /// are collected in a temporary store until the `k8s.io/initial-events-end` bookmark;
    /// then `Replace` with them at the bookmark's RV, and the same watch goes on.
    async fn watch_list(&mut self, reason: &str) -> Result<crate::listwatch::WatchStream, Failure> {
        let mut reason = reason.to_owned();
        loop {
            let start = Instant::now();
            let rv = if self.rv_unavailable {
                String::new()
            } else {
                self.last_sync_rv.clone()
            };
            self.store.notice(ReflectorEvent::List {
                resource_version: rv.clone(),
                limit: 0,
                reason: reason.clone(),
                streaming: true,
            });
            let timeout_seconds = self.watch_timeout();
            let opts = WatchOptions {
                resource_version: rv,
                timeout_seconds,
                allow_bookmarks: true,
                send_initial_events: true,
            };
            // client-go's isErrorRetriableWithSideEffectsFn: back off on 429 and refused
            // connections, retry at once at RV "" on 410 / too-large RV; else give up.
            let retry = |this: &mut Self, e: &SourceError| -> Option<bool> {
                if is_watch_retriable(e) && !this.is_fatal(e) {
                    Some(true)
                } else if e.is_expired() || e.is_too_large_rv() {
                    this.rv_unavailable = true;
                    Some(false)
                } else {
                    None
                }
            };
            let mut stream = match self.lw.watch(opts).await {
                Ok(s) => s,
                Err(e) => match retry(self, &e) {
                    Some(wait) => {
                        if wait {
                            self.back_off(format!("watch-list: {e}")).await;
                        }
                        reason = e.to_string();
                        continue;
                    }
                    None => return Err(Failure::from(e)),
                },
            };
            self.progress.reset();
            let mut temp = TempStore::default();
            let mut events = 0u64;
            let mut end = None;
            while let Some(item) = stream.next().await {
                events += 1;
                match item {
                    Ok(WatchEvent::Added(o)) | Ok(WatchEvent::Modified(o)) => {
                        if temp.insert(o) {
                            self.progress.items.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    Ok(WatchEvent::Deleted(o)) => temp.remove(&o.key()),
                    Ok(WatchEvent::Bookmark {
                        resource_version,
                        initial_events_end,
                    }) => {
                        if initial_events_end {
                            end = Some(resource_version);
                            break;
                        }
                    }
                    Ok(WatchEvent::Error(status)) => {
                        end = None;
                        let e = SourceError::Api(status);
                        match retry(self, &e) {
                            Some(wait) => {
                                if wait {
                                    self.back_off(format!("watch-list: {e}")).await;
                                }
                                reason = e.to_string();
                                break;
                            }
                            None => return Err(Failure::from(e)),
                        }
                    }
                    Err(e) => return Err(Failure::from(e)),
                }
            }
            let Some(list_rv) = end else {
                if events == 0 && start.elapsed() < SHORT_WATCH {
                    return Err(Failure {
                        cause:
                            "very short watch-list: closed before the initial-events-end bookmark"
                                .to_owned(),
                        error: None,
                    });
                }
                continue;
            };
            self.rv_unavailable = false;
            self.established = true;
            let items = temp.into_items();
            self.store.notice(ReflectorEvent::Listed {
                resource_version: list_rv.clone(),
                items: items.len(),
                pages: 1,
                elapsed: start.elapsed(),
                full_list_fallback: false,
                streaming: true,
            });
            self.store.replace(items, &list_rv);
            self.store.notice(ReflectorEvent::Watch {
                resource_version: list_rv.clone(),
                timeout_seconds,
            });
            self.last_sync_rv = list_rv;
            return Ok(stream);
        }
    }

    /// client-go `startResync`: a resync every `period` after the last one, until the
    /// returned guard is dropped (when this ListAndWatch's watching ends).
    fn start_resync(&self, period: Duration) -> AbortOnDrop {
        let store = self.store.clone();
        AbortOnDrop(tokio::spawn(async move {
            loop {
                tokio::time::sleep(period).await;
                store.notice(ReflectorEvent::Resync);
                store.resync();
            }
        }))
    }

    /// Waits the next backoff step and says so. client-go's backoff manager reads no
    /// Retry-After: the request layer has already waited as the server asked.
    async fn back_off(&mut self, cause: String) {
        let delay = self.backoff.step();
        self.store.notice(ReflectorEvent::Backoff { delay, cause });
        tokio::time::sleep(delay).await;
    }

    /// client-go: a random timeout in [min, 2·min) for each watch.
    fn watch_timeout(&mut self) -> u32 {
        self.cfg.min_watch_timeout_secs
            + self
                .rng
                .random_range(0..self.cfg.min_watch_timeout_secs.max(1))
    }

    /// Processes one watch until it ends. `Ok` = closed cleanly: watch again.
    /// `timeout_seconds`: what the watch asked for, if it was opened by this loop.
    async fn handle_watch(
        &mut self,
        mut stream: crate::listwatch::WatchStream,
        start: Instant,
        timeout_seconds: Option<u32>,
    ) -> Result<(), Failure> {
        let from = self.last_sync_rv.clone();
        let mut events = 0u64;
        let ended = |events, error, reason: String| ReflectorEvent::WatchEnded {
            reason,
            events,
            elapsed: start.elapsed(),
            error,
        };
        let mut closed = "closed by the server".to_owned();
        let mut connection_lost = false;
        while let Some(item) = stream.next().await {
            let rv = match item {
                Ok(WatchEvent::Added(o)) => {
                    let rv = o.resource_version().to_owned();
                    self.store.add(o);
                    rv
                }
                Ok(WatchEvent::Modified(o)) => {
                    let rv = o.resource_version().to_owned();
                    self.store.update(o);
                    rv
                }
                Ok(WatchEvent::Deleted(o)) => {
                    let rv = o.resource_version().to_owned();
                    self.store.delete(o);
                    rv
                }
                Ok(WatchEvent::Bookmark {
                    resource_version, ..
                }) => {
                    self.store.notice(ReflectorEvent::Bookmark {
                        resource_version: resource_version.clone(),
                    });
                    resource_version
                }
                Ok(WatchEvent::Error(status)) => {
                    events += 1;
                    let f = Failure::from(SourceError::Api(status));
                    self.store.notice(ended(events, true, f.cause.clone()));
                    return Err(f);
                }
                Err(SourceError::Transport(m) | SourceError::Lost(m)) => {
                    // A connection cut mid-stream ends the watch like a server close.
                    closed = format!("connection lost: {m}");
                    connection_lost = true;
                    break;
                }
                Err(e) => {
                    let cause = match &e {
                        SourceError::Decode(m) => {
                            format!("unable to decode an event from the watch stream: {m}")
                        }
                        other => other.to_string(),
                    };
                    self.store.notice(ended(events, true, cause.clone()));
                    return Err(Failure {
                        cause,
                        error: Some(e),
                    });
                }
            };
            self.last_sync_rv = rv;
            events += 1;
        }
        if start.elapsed() < SHORT_WATCH && events == 0 {
            let cause =
                "very short watch: the watch lasted less than a second and no items received"
                    .to_owned();
            self.store.notice(ended(events, true, cause.clone()));
            return Err(Failure { cause, error: None });
        }
        // A server that does not know `from` (restored from an older backup) answers the
        // watch with nothing at all until its timeout, where any other server sends
        // bookmarks. Unlike client-go, which would re-watch at `from` forever, relist: the
        // list at `from` then fails with "too large resource version" and falls back to "".
        let silent_to_timeout = timeout_seconds
            .is_some_and(|t| start.elapsed() >= Duration::from_secs(u64::from(t)).mul_f64(0.9));
        if events == 0 && self.cfg.bookmarks && !connection_lost && silent_to_timeout {
            let cause = format!(
                "no event and no bookmark from rv={from} until the watch timed out: \
                 the server may not know that resourceVersion"
            );
            self.store.notice(ended(events, true, cause.clone()));
            return Err(Failure { cause, error: None });
        }
        self.store.notice(ended(events, false, closed));
        Ok(())
    }

    /// client-go `Reflector.list`: pager, 410 / too-large fallback to RV "", Replace.
    async fn list(&mut self, reason: &str) -> Result<(), Failure> {
        let start = Instant::now();
        let rv = self.relist_rv();
        let limit = self.page_limit(&rv);
        self.store.notice(ReflectorEvent::List {
            resource_version: rv.clone(),
            limit,
            reason: reason.to_owned(),
            streaming: false,
        });
        let listed = match self.pager(&rv, limit).await {
            Ok(l) => l,
            Err(e) if e.is_expired() || e.is_too_large_rv() => {
                self.rv_unavailable = true;
                self.store.notice(ReflectorEvent::List {
                    resource_version: String::new(),
                    limit,
                    reason: format!("list at rv={rv}: {e}"),
                    streaming: false,
                });
                self.pager("", limit).await?
            }
            Err(e) => return Err(Failure::from(e)),
        };
        if rv == "0" && listed.paginated {
            self.paginated_result = true;
        }
        self.rv_unavailable = false;
        self.store.notice(ReflectorEvent::Listed {
            resource_version: listed.resource_version.clone(),
            items: listed.items.len(),
            pages: listed.pages,
            elapsed: start.elapsed(),
            full_list_fallback: listed.full_list_fallback,
            streaming: false,
        });
        self.store.replace(listed.items, &listed.resource_version);
        self.last_sync_rv = listed.resource_version;
        self.established = true;
        Ok(())
    }

    /// client-go `pager.ListWithAlloc` with `FullListIfExpired`.
    async fn pager(&self, rv: &str, limit: u32) -> Result<Listed, SourceError> {
        let first = ListOptions {
            resource_version: rv.to_owned(),
            limit: (limit > 0).then_some(limit),
            ..ListOptions::default()
        };
        self.progress.reset();
        let mut page = self.lw.list(first.clone()).await?;
        self.progress.page(page.items.len());
        let mut items = std::mem::take(&mut page.items);
        let mut pages = 1;
        let mut paginated = false;
        while let Some(token) = page.continue_token.take() {
            paginated = true;
            let next = ListOptions {
                limit: first.limit,
                continue_token: Some(token),
                ..ListOptions::default()
            };
            page = match self.lw.list(next).await {
                Ok(p) => p,
                Err(e) if e.is_expired() => {
                    let full = self
                        .lw
                        .list(ListOptions {
                            limit: None,
                            ..first
                        })
                        .await?;
                    return Ok(Listed {
                        items: full.items,
                        resource_version: full.resource_version,
                        pages: pages + 1,
                        paginated,
                        full_list_fallback: true,
                    });
                }
                Err(e) => return Err(e),
            };
            pages += 1;
            self.progress.page(page.items.len());
            items.append(&mut page.items);
        }
        Ok(Listed {
            items,
            resource_version: page.resource_version,
            pages,
            paginated,
            full_list_fallback: false,
        })
    }
}

/// A watch-list's temporary store: key → object, listed in the order each key was first
/// added (a key deleted and added again keeps its first place).
#[derive(Default)]
struct TempStore {
    /// Invariant: every index is `< slots.len()`, and each slot has one key.
    index: foldhash::HashMap<String, usize>,
    /// `None`: deleted.
    slots: Vec<Option<ObjectRef>>,
}

impl TempStore {
    /// Adds or replaces the object under its key; whether the key was absent.
    fn insert(&mut self, obj: ObjectRef) -> bool {
        match self.index.entry(obj.key()) {
            std::collections::hash_map::Entry::Occupied(e) => {
                self.slots[*e.get()].replace(obj).is_none()
            }
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(self.slots.len());
                self.slots.push(Some(obj));
                true
            }
        }
    }

    fn remove(&mut self, key: &str) {
        if let Some(&i) = self.index.get(key) {
            self.slots[i] = None;
        }
    }

    fn into_items(self) -> Vec<ObjectRef> {
        self.slots.into_iter().flatten().collect()
    }
}

/// A server without streaming lists refuses `sendInitialEvents` as 422 Invalid.
fn is_rejection(e: &SourceError) -> bool {
    e.api().is_some_and(|s| s.code == 422)
}

/// client-go `isWatchErrorRetriable`: back off and open the watch again, no relist.
fn is_watch_retriable(e: &SourceError) -> bool {
    matches!(e, SourceError::ConnectionRefused(_)) || e.api().is_some_and(|s| s.code == 429)
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests;

/// The reflector writes to either of client-go's queues; announcements become notices.
impl<Q: Queue<ReflectorEvent>> ReflectorStore for Q {
    fn add(&self, obj: ObjectRef) {
        Queue::add(self, obj);
    }
    fn update(&self, obj: ObjectRef) {
        Queue::update(self, obj);
    }
    fn delete(&self, obj: ObjectRef) {
        Queue::delete(self, obj);
    }
    fn replace(&self, objs: Vec<ObjectRef>, resource_version: &str) {
        Queue::replace(self, objs, resource_version);
    }
    fn resync(&self) {
        Queue::resync(self);
    }
    fn notice(&self, event: ReflectorEvent) {
        self.push_notice(event);
    }
}
