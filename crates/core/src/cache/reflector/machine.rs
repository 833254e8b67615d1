//! The Reflector's state machine: [`State`], the step function, the one error classifier
//! (`after_error`), what it writes to ([`ReflectorStore`]) and the reflector's
//! configuration.

use super::{backoff, pager, watch_list};
use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use rand::Rng;
use tokio::time::Instant;

use super::backoff::Backoff;
use super::event::ReflectorEvent;
use super::progress::ListProgress;
use crate::cache::listwatch::{
    ListerWatcher, SourceError, Transfer, WatchEvent, WatchOptions, WatchStream,
};
use crate::cache::object::ObjectRef;
use crate::cache::queue::Queue;
use crate::cache::retry::Retrying;

/// client-go's `minWatchTimeout`: each watch asks for a timeout in [5 min, 10 min).
pub const MIN_WATCH_TIMEOUT_SECS: u32 = 300;
/// client-go's pager default page size.
pub const DEFAULT_PAGE_SIZE: u32 = 500;
/// A watch shorter than this that delivered nothing is an error (client-go).
pub const SHORT_WATCH: Duration = Duration::from_secs(1);

/// The reflector's own clocks: client-go's constants (and kwatch's bookmark floor), which
/// only tests change (`KWATCH_TEST_*` variables, read by [`crate::hooks`]), so that a test
/// need not wait a real second, backoff or minute of bookmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clocks {
    /// A watch shorter than this that delivered nothing is an error ([`SHORT_WATCH`]).
    pub short_watch: Duration,
    /// The backoff's first step, before jitter ([`backoff::INITIAL`]); it doubles from
    /// there up to [`backoff::CAP`].
    pub backoff_start: Duration,
    /// The least bookmark interval `--stall-after auto` learns ([`BOOKMARK_FLOOR`]).
    pub bookmark_floor: Duration,
    /// How long a streaming list may go without its end bookmark before a
    /// [`ReflectorEvent::Protocol`] says so ([`END_BOOKMARK_WAIT`]).
    pub end_bookmark_wait: Duration,
}

impl Default for Clocks {
    fn default() -> Self {
        Clocks {
            short_watch: SHORT_WATCH,
            backoff_start: backoff::INITIAL,
            bookmark_floor: BOOKMARK_FLOOR,
            end_bookmark_wait: END_BOOKMARK_WAIT,
        }
    }
}

/// A streaming list without its end bookmark after this long is said to be waiting for
/// it (kwatch goes on waiting, as client-go does: kubernetes/kubernetes#140890).
pub const END_BOOKMARK_WAIT: Duration = Duration::from_secs(30);

/// Watches in a row that closed cleanly at once before a [`ReflectorEvent::Protocol`] says
/// the server may be ending too-old watches without 410 Expired.
pub const SHORT_CLOSES: u32 = 3;

/// The [`ReflectorEvent::Protocol`] of a streaming list that has sent `events` in `took`
/// and no end bookmark.
fn no_end_bookmark(events: u64, took: Duration) -> ReflectorEvent {
    ReflectorEvent::Protocol {
        problem: "no-end-bookmark".to_owned(),
        message: format!(
            "the streaming list has sent {events} initial events in {:.1}s and no \
             k8s.io/initial-events-end bookmark yet: client-go 0.35+ waits for it, never \
             syncs and starts over at each watch timeout (kubernetes/kubernetes#140890); \
             --watch-list off lists instead",
            took.as_secs_f64()
        ),
    }
}

/// `--stall-after auto` never learns a bookmark interval below this: kube-apiserver's
/// cacher sends a watch a bookmark every minute (`bookmarkFrequency`,
/// staging/src/k8s.io/apiserver/pkg/storage/cacher/cache_watcher.go), so a shorter one
/// is a pair that says nothing of the period, and three of it would restart healthy
/// watches.
pub const BOOKMARK_FLOOR: Duration = Duration::from_secs(10);

/// A bookmark this close to a watch's deadline is the one kube-apiserver sends 2 s before
/// the deadline (cache_watcher.go `nextBookmarkTime`), however soon after a periodic
/// one: it is no sample of the period. The margin covers the request's latency.
const PRE_DEADLINE: Duration = Duration::from_secs(5);

/// The bookmark intervals `--stall-after auto` keeps, to take their median.
const BOOKMARK_SAMPLES: usize = 5;

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

/// Whether to get the initial state from a streaming list (KEP-3157).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchListMode {
    /// Try it; if the server rejects it, LIST from then on.
    Auto,
    /// Always try it first (falling back to LIST for an attempt it fails).
    On,
    /// Always LIST.
    Off,
}

impl WatchListMode {
    /// The modes' names, as `--watch-list` takes them.
    pub const NAMES: [&'static str; 3] = ["auto", "on", "off"];

    pub fn as_str(self) -> &'static str {
        match self {
            WatchListMode::Auto => "auto",
            WatchListMode::On => "on",
            WatchListMode::Off => "off",
        }
    }
}

impl std::str::FromStr for WatchListMode {
    type Err = crate::text::UnknownWord;

    fn from_str(s: &str) -> Result<WatchListMode, Self::Err> {
        match s {
            "auto" => Ok(WatchListMode::Auto),
            "on" => Ok(WatchListMode::On),
            "off" => Ok(WatchListMode::Off),
            _ => Err(crate::text::UnknownWord {
                word: s.to_owned(),
                expected: &WatchListMode::NAMES,
            }),
        }
    }
}

impl std::fmt::Display for WatchListMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
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
    /// `--stall-after`: when a watch that delivers nothing is reported.
    pub stall_after: StallAfter,
    /// `--restart-stalled`: a stalled watch is ended and opened again from its last RV
    /// (client-go only waits: for the server's timeout or the transport's health check).
    pub restart_stalled: bool,
    pub clocks: Clocks,
    /// The client asks for gzip (its transport's compression, on unless the kubeconfig's
    /// `disable-compression` or `--disable-compression` turns it off): what `List`
    /// records say the requests ask for.
    pub gzip: bool,
}

/// `--stall-after D|auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StallAfter {
    #[default]
    Off,
    After(Duration),
    /// Three of the bookmark intervals the server has shown (the median of the last
    /// intervals between two periodic bookmarks of a watch, never below
    /// [`BOOKMARK_FLOOR`]); off until a watch has shown one.
    Auto,
}

/// `--stall-after auto`: this many bookmark intervals without anything.
pub const STALL_AUTO_INTERVALS: u32 = 3;

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
            stall_after: StallAfter::Off,
            restart_stalled: false,
            clocks: Clocks::default(),
            // client-go's transport compresses unless told not to.
            gzip: true,
        }
    }
}

/// What the reflector does next; [`Reflector::step`] does it.
enum State {
    /// A streaming list (KEP-3157), then Replace; the same watch goes on. `reason`:
    /// "initial", or why a relist is needed; `retry`: why this attempt repeats the last
    /// (shown in its List record instead).
    StreamingList {
        reason: String,
        retry: Option<String>,
    },
    /// A paged LIST, then Replace. `retry_limit`: this is the at-once retry at RV "" after
    /// the list at a specific RV expired, with that list's page size.
    List {
        reason: String,
        retry_limit: Option<u32>,
    },
    /// Open a watch from the last synced resourceVersion.
    OpenWatch,
    /// A watch is open: apply its events until it ends.
    Watching {
        stream: WatchStream,
        started: Instant,
        /// The timeout it was opened with (`timeoutSeconds`).
        timeout: Duration,
    },
    /// Wait the next backoff step, then do `then`.
    BackOff { cause: String, then: Box<State> },
}

/// Where an error happened, for [`Reflector::after_error`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    /// Opening a streaming list or reading its initial events.
    StreamingList,
    List,
    OpenWatch,
    Watching,
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
    /// The highest resourceVersion synced that reads as an unsigned integer, to tell a
    /// [`ReflectorEvent::TimeTravel`]; none until one does.
    highest_rv: Option<u64>,
    /// An [`ReflectorEvent::OpaqueResourceVersion`] has been queued: no more comparing.
    opaque_rv_noted: bool,
    /// The [`ReflectorEvent::Protocol`] problems said so far (each once).
    protocol_noted: Vec<&'static str>,
    /// Watches in a row that closed cleanly at once with nothing delivered.
    short_closes: u32,
    /// The periodic resync, while watching (client-go `watchWithResync`).
    resync: Option<AbortOnDrop>,
    backoff: Backoff,
    rng: rand::rngs::SmallRng,
    progress: Arc<ListProgress>,
    /// The last intervals between two periodic bookmarks of a watch, oldest first
    /// (`--stall-after auto`): at most [`BOOKMARK_SAMPLES`].
    bookmark_intervals: std::collections::VecDeque<Duration>,
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
            backoff: Backoff::new(cfg.seed, cfg.clocks.backoff_start),
            rng: rand::rngs::SmallRng::seed_from_u64(cfg.seed.wrapping_add(1)),
            cfg,
            last_sync_rv: String::new(),
            rv_unavailable: false,
            paginated_result: false,
            use_watch_list,
            established: false,
            highest_rv: None,
            opaque_rv_noted: false,
            protocol_noted: Vec::new(),
            short_closes: 0,
            resync: None,
            progress: Arc::default(),
            bookmark_intervals: std::collections::VecDeque::new(),
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
        let mut state = self.relist("initial".to_owned());
        loop {
            state = match self.step(state).await {
                Ok(next) => next,
                Err(fatal) => return fatal,
            };
        }
    }

    /// Does what `state` says; the next state, or the error that ends the reflector.
    async fn step(&mut self, state: State) -> Result<State, SourceError> {
        match state {
            State::StreamingList { reason, retry } => self.streaming_list(reason, retry).await,
            State::List {
                reason,
                retry_limit,
            } => self.list(reason, retry_limit).await,
            State::OpenWatch => self.open_watch().await,
            State::Watching {
                stream,
                started,
                timeout,
            } => self.watching(stream, started, timeout).await,
            State::BackOff { cause, then } => {
                let delay = self.backoff.step();
                self.store.notice(ReflectorEvent::Backoff { delay, cause });
                tokio::time::sleep(delay).await;
                Ok(*then)
            }
        }
    }

    /// A new ListAndWatch: a streaming list when it is on, else a LIST. Watching ends
    /// here, and so does its resync.
    fn relist(&mut self, reason: String) -> State {
        self.resync = None;
        if self.use_watch_list {
            State::StreamingList {
                reason,
                retry: None,
            }
        } else {
            State::List {
                reason,
                retry_limit: None,
            }
        }
    }

    /// The one classifier: what follows an error `e` (with `cause`, the words shown) at
    /// `at`; `reason`: why the list under way was started. `Err`: the reflector ends.
    ///
    /// | at | error | next |
    /// |---|---|---|
    /// | streaming list or list, before the first sync | will not fix itself (but 422 on a streaming list) | end |
    /// | streaming list | 429, refused | back off, streaming list again |
    /// | streaming list | 410, too-large RV | streaming list again at once, at RV "" |
    /// | streaming list | another 4xx answer (422, 401, 403, 404, …) | LIST (from now on, with `auto`) |
    /// | streaming list | anything else | LIST this once |
    /// | list at a specific RV | 410, too-large RV | LIST again at once, at RV "" |
    /// | list | anything else | back off, relist |
    /// | opening a watch | 429, refused | back off, watch again |
    /// | a watch | an ERROR 429 | back off, watch again |
    /// | opening a watch, a watch | anything else | back off, relist |
    fn after_error(
        &mut self,
        at: At,
        e: Option<&SourceError>,
        cause: String,
        reason: &str,
    ) -> Result<State, SourceError> {
        // The source reads JSON from now on: said once, where it happened.
        if let Some(SourceError::Protobuf(error)) = e {
            self.store.notice(ReflectorEvent::WireFallback {
                error: error.clone(),
            });
        }
        let forbidden = e.and_then(SourceError::api).filter(|s| s.code == 403);
        if let Some(status) = forbidden {
            if matches!(at, At::OpenWatch | At::Watching)
                && self.established
                && self.note("watch-forbidden")
            {
                self.store.notice(ReflectorEvent::Protocol {
                    problem: "watch-forbidden".to_owned(),
                    message: format!(
                        "the LIST worked but the WATCH is forbidden, the verb watch is missing \
                         ({}): client-go relists after each backoff and its cache is never kept \
                         up to date (kubernetes-sigs/controller-runtime#1653); grant watch \
                         (`kubectl auth can-i watch …`)",
                        status.summary()
                    ),
                });
            }
        }
        let rejection = e.is_some_and(is_rejection);
        if let Some(e) = e.filter(|e| self.is_fatal(e)) {
            if !(at == At::StreamingList && rejection) {
                return Err(e.clone());
            }
        }
        let retriable = e.is_some_and(is_watch_retriable);
        let expired = e.is_some_and(|e| e.is_expired() || e.is_too_large_rv());
        Ok(match at {
            At::StreamingList if retriable => State::BackOff {
                cause: format!("watch-list: {cause}"),
                then: Box::new(State::StreamingList {
                    reason: reason.to_owned(),
                    retry: Some(cause),
                }),
            },
            At::StreamingList if expired => {
                self.rv_unavailable = true;
                State::StreamingList {
                    reason: reason.to_owned(),
                    retry: Some(cause),
                }
            }
            At::StreamingList => {
                // `auto` falls back for good when the server answered the streaming list
                // with a 4xx (422: no streaming lists; 401/403/404: no better for a LIST):
                // docs/user-guide.md's `--watch-list` row. client-go (reflector.go
                // `ListAndWatchWithContext`) tries `watchList` again at every relist and
                // logs each fallback at V(4) only; kwatch would print it every time.
                if self.cfg.watch_list == WatchListMode::Auto && e.is_some_and(is_answered_4xx) {
                    self.use_watch_list = false;
                }
                self.store
                    .notice(ReflectorEvent::WatchListFallback { error: cause });
                State::List {
                    reason: reason.to_owned(),
                    retry_limit: None,
                }
            }
            At::OpenWatch if retriable => State::BackOff {
                cause,
                then: Box::new(State::OpenWatch),
            },
            At::Watching if e.and_then(SourceError::api).is_some_and(|s| s.code == 429) => {
                State::BackOff {
                    cause,
                    then: Box::new(State::OpenWatch),
                }
            }
            At::List | At::OpenWatch | At::Watching => State::BackOff {
                then: Box::new(self.relist(cause.clone())),
                cause,
            },
        })
    }

    /// Marks a [`ReflectorEvent::Protocol`] problem said; whether it was not yet.
    fn note(&mut self, problem: &'static str) -> bool {
        if self.protocol_noted.contains(&problem) {
            return false;
        }
        self.protocol_noted.push(problem);
        true
    }

    /// Whether `e` ends [`Reflector::run`]: it will not fix itself and nothing was listed yet.
    fn is_fatal(&self, e: &SourceError) -> bool {
        !self.established && e.will_not_fix_itself()
    }

    /// `served` by `request` (a list's RV or a watch event's): a [`ReflectorEvent::TimeTravel`]
    /// when it is below the highest synced, both as unsigned integers (an RV that does not
    /// parse is not compared: the first such gives a
    /// [`ReflectorEvent::OpaqueResourceVersion`], and from then on the server's versions
    /// are opaque, none compared); `true` then. The highest moves up, never down.
    fn travelled(&mut self, request: impl FnOnce() -> String, served: &str) -> bool {
        if self.opaque_rv_noted {
            return false;
        }
        let Ok(rv) = served.parse::<u64>() else {
            if !served.is_empty() {
                self.opaque_rv_noted = true;
                self.store.notice(ReflectorEvent::OpaqueResourceVersion {
                    resource_version: served.to_owned(),
                });
            }
            return false;
        };
        match self.highest_rv {
            Some(held) if rv < held => {
                self.store.notice(ReflectorEvent::TimeTravel {
                    request: request(),
                    resource_version: served.to_owned(),
                    held: held.to_string(),
                });
                true
            }
            _ => {
                self.highest_rv = Some(rv);
                false
            }
        }
    }

    /// After a relist's Replace (not the initial list's): the informer's summary of it.
    fn relisted(&self, rv: &str) {
        if self.established {
            self.store.notice(ReflectorEvent::relisted(rv, false));
        }
    }

    /// A list (streaming or not) has been replaced into the store at `rv`: watching
    /// begins, and with it the periodic resync.
    fn synced(&mut self, rv: String) {
        self.last_sync_rv = rv;
        self.rv_unavailable = false;
        self.established = true;
        self.resync = self.cfg.resync.map(|period| self.start_resync(period));
    }

    /// client-go `startResync`: a resync every `period` after the last one, until the
    /// returned guard is dropped (when watching ends).
    fn start_resync(&self, period: Duration) -> AbortOnDrop {
        let store = self.store.clone();
        AbortOnDrop(tokio::spawn(async move {
            loop {
                tokio::time::sleep(period).await;
                store.notice(ReflectorEvent::Resync);
                store.resync();
                store.notice(ReflectorEvent::relisted("", true));
            }
        }))
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

    /// client-go: a random timeout in [min, 2·min) for each watch.
    fn watch_timeout(&mut self) -> u32 {
        self.cfg.min_watch_timeout_secs
            + self
                .rng
                .random_range(0..self.cfg.min_watch_timeout_secs.max(1))
    }

    /// client-go `Reflector.list`: the pager, then Replace. A 410 / too-large RV at a
    /// specific RV is tried again at once at RV "" (same page size).
    async fn list(
        &mut self,
        reason: String,
        retry_limit: Option<u32>,
    ) -> Result<State, SourceError> {
        let start = Instant::now();
        let rv = self.relist_rv();
        let limit = retry_limit.unwrap_or_else(|| self.page_limit(&rv));
        self.store.notice(
            ReflectorEvent::list(&rv, limit, &reason, false)
                .asking(self.lw.asks_protobuf(), self.cfg.gzip),
        );
        let listed = pager::list(&self.lw, &self.progress, &rv, limit).await;
        if let Some(error) = listed.as_ref().ok().and_then(|l| l.wire_fallback.clone()) {
            self.store.notice(ReflectorEvent::WireFallback { error });
        }
        let listed = match listed {
            Ok(l) => l,
            Err(e) if (e.is_expired() || e.is_too_large_rv()) && retry_limit.is_none() => {
                self.rv_unavailable = true;
                return Ok(State::List {
                    reason: format!("list at rv={rv}: {e}"),
                    retry_limit: Some(limit),
                });
            }
            Err(e) => {
                let cause = match e.api().map(|s| s.code) {
                    // A LIST of a collection is never 404 for a missing object (nor for a
                    // missing namespace: that list is empty): the type itself is not served.
                    Some(404) => format!(
                        "the server does not serve this resource type (any more: was its \
                         CRD deleted? `kubectl api-resources` lists what it serves): {e}"
                    ),
                    _ => e.to_string(),
                };
                return self.after_error(At::List, Some(&e), cause, &reason);
            }
        };
        if rv == "0" && listed.paginated {
            self.paginated_result = true;
        }
        self.store.notice(ReflectorEvent::Listed {
            resource_version: listed.resource_version.clone(),
            items: listed.items.len(),
            pages: listed.pages,
            elapsed: start.elapsed(),
            full_list_fallback: listed.full_list_fallback,
            streaming: false,
            encoding: Some(listed.transfer.encoding().to_owned()),
            bytes: Some(listed.transfer.bytes),
            wire_bytes: Some(listed.transfer.wire_bytes),
        });
        self.store.replace(listed.items, &listed.resource_version);
        self.relisted(&listed.resource_version);
        self.travelled(|| list_query(&rv, limit), &listed.resource_version);
        self.synced(listed.resource_version);
        Ok(State::OpenWatch)
    }

    /// client-go `watchList`: a watch with `sendInitialEvents=true` whose initial events
    /// are collected until the `k8s.io/initial-events-end` bookmark; then `Replace` at
    /// the bookmark's RV, and the same watch goes on.
    async fn streaming_list(
        &mut self,
        reason: String,
        retry: Option<String>,
    ) -> Result<State, SourceError> {
        let start = Instant::now();
        let rv = if self.rv_unavailable {
            String::new()
        } else {
            self.last_sync_rv.clone()
        };
        self.store.notice(
            ReflectorEvent::list(&rv, 0, retry.as_deref().unwrap_or(&reason), true)
                .asking(self.lw.asks_protobuf(), self.cfg.gzip),
        );
        let timeout_seconds = self.watch_timeout();
        let opts = WatchOptions {
            resource_version: rv.clone(),
            timeout_seconds,
            allow_bookmarks: true,
            send_initial_events: true,
        };
        let (outcome, asked) = match self.lw.watch(opts).await {
            Ok(w) => {
                let (store, started) = (self.store.clone(), start);
                let noted = std::sync::atomic::AtomicBool::new(
                    self.protocol_noted.contains(&"no-end-bookmark"),
                );
                let mut waiting = |events: u64| {
                    if !noted.swap(true, std::sync::atomic::Ordering::Relaxed) {
                        store.notice(no_end_bookmark(events, started.elapsed()));
                    }
                };
                let wait = self.cfg.clocks.end_bookmark_wait;
                let events =
                    watch_list::initial_events(w.events, &self.progress, wait, &mut waiting).await;
                if noted.into_inner() && !self.protocol_noted.contains(&"no-end-bookmark") {
                    self.protocol_noted.push("no-end-bookmark");
                }
                let asked = (w.protobuf, w.gzip, w.read, w.wire);
                (events, asked)
            }
            Err(e) => (watch_list::Outcome::Failed(e), (false, false, None, None)),
        };
        let (protobuf, gzip, read, wire) = asked;
        let (stream, list_rv, items) = match outcome {
            watch_list::Outcome::Ended {
                stream,
                resource_version,
                items,
            } => (stream, resource_version, items),
            watch_list::Outcome::Failed(e) => {
                return self.after_error(At::StreamingList, Some(&e), e.to_string(), &reason)
            }
            watch_list::Outcome::Closed { events } => {
                if very_short(start, events, self.cfg.clocks.short_watch) {
                    let cause =
                        "very short watch-list: closed before the initial-events-end bookmark";
                    return self.after_error(At::StreamingList, None, cause.to_owned(), &reason);
                }
                return Ok(State::StreamingList { reason, retry });
            }
        };
        self.store.notice(ReflectorEvent::Listed {
            resource_version: list_rv.clone(),
            items: items.len(),
            pages: 1,
            elapsed: start.elapsed(),
            full_list_fallback: false,
            streaming: true,
            // Compressed from 1.37 when asked with gzip (`WatchListCompression`).
            encoding: Some(
                Transfer {
                    protobuf,
                    gzip,
                    ..Transfer::default()
                }
                .encoding()
                .to_owned(),
            ),
            // The body up to the initial-events-end bookmark, as decoded and as read off the
            // connection by then.
            bytes: read.as_ref().map(|r| r.get()),
            wire_bytes: wire.or(read).as_ref().map(|r| r.get()),
        });
        self.store.replace(items, &list_rv);
        self.relisted(&list_rv);
        self.travelled(|| watch_query(&rv, true), &list_rv);
        self.store.notice(ReflectorEvent::Watch {
            resource_version: list_rv.clone(),
            timeout_seconds,
        });
        self.synced(list_rv);
        Ok(State::Watching {
            stream,
            started: Instant::now(),
            timeout: Duration::from_secs(timeout_seconds.into()),
        })
    }

    /// Opens a watch from the last synced RV.
    async fn open_watch(&mut self) -> Result<State, SourceError> {
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
        match self.lw.watch(opts).await {
            Ok(w) => Ok(State::Watching {
                stream: w.events,
                started: Instant::now(),
                timeout: Duration::from_secs(timeout_seconds.into()),
            }),
            Err(e) => {
                let cause = format!("watch: {e}");
                if !is_watch_retriable(&e) {
                    self.store.notice(ReflectorEvent::WatchEnded {
                        reason: cause.clone(),
                        events: 0,
                        bookmarks: 0,
                        elapsed: Duration::ZERO,
                        error: true,
                    });
                }
                self.after_error(At::OpenWatch, Some(&e), cause, "")
            }
        }
    }

    /// Applies one watch's events until it ends; a clean close (or a cut connection)
    /// watches again, anything else goes to [`Reflector::after_error`].
    async fn watching(
        &mut self,
        mut stream: WatchStream,
        start: Instant,
        timeout: Duration,
    ) -> Result<State, SourceError> {
        let deadline = (!timeout.is_zero()).then(|| start + timeout);
        let mut w = OneWatch::new(start, deadline, self.last_sync_rv.clone());
        let failed = loop {
            let Some(item) = self.next_item(&mut stream, &mut w).await else {
                break None;
            };
            if let ControlFlow::Break(failed) = self.apply(item, &mut w) {
                break failed;
            }
        };
        self.watch_ended(w, failed)
    }

    /// The watch's next item; `None` when it ended, or when `--restart-stalled` ends a
    /// watch that delivered nothing for the stall limit (`w.stalled`). A stall without a
    /// restart is reported once and waited out.
    async fn next_item(
        &mut self,
        stream: &mut WatchStream,
        w: &mut OneWatch,
    ) -> Option<Result<WatchEvent, SourceError>> {
        loop {
            let Some(limit) = self.stall_limit().filter(|_| !w.reported) else {
                return stream.next().await;
            };
            if let Ok(next) = tokio::time::timeout_at(w.heard + limit, stream.next()).await {
                return next;
            }
            w.reported = true;
            let restart = self.cfg.restart_stalled;
            self.store.notice(ReflectorEvent::Stalled {
                silent: w.heard.elapsed(),
                watch_age: w.start.elapsed(),
                resource_version: self.last_sync_rv.clone(),
                restart,
            });
            if restart {
                // The new watch goes over another connection; a frozen
                // one would hear nothing either.
                self.lw.watch_stalled();
                w.stalled = true;
                w.closed = "stalled".to_owned();
                return None;
            }
        }
    }

    /// One item into the store; `Break` ends the watch (`Some`: with an error).
    fn apply(
        &mut self,
        item: Result<WatchEvent, SourceError>,
        w: &mut OneWatch,
    ) -> ControlFlow<Option<(String, Option<SourceError>)>> {
        w.heard = Instant::now();
        w.reported = false;
        let rv = match item {
            Ok(WatchEvent::Added(o)) => {
                let rv = o.resource_version().to_owned();
                self.store.add(o);
                w.events += 1;
                rv
            }
            Ok(WatchEvent::Modified(o)) => {
                let rv = o.resource_version().to_owned();
                self.store.update(o);
                w.events += 1;
                rv
            }
            Ok(WatchEvent::Deleted(o)) => {
                let rv = o.resource_version().to_owned();
                self.store.delete(o);
                w.events += 1;
                rv
            }
            Ok(WatchEvent::Bookmark {
                resource_version, ..
            }) => {
                self.bookmark_heard(w);
                self.store.notice(ReflectorEvent::Bookmark {
                    resource_version: resource_version.clone(),
                });
                w.bookmarks += 1;
                resource_version
            }
            Ok(WatchEvent::Error(status)) => {
                w.events += 1;
                let e = SourceError::Api(status);
                return ControlFlow::Break(Some((e.to_string(), Some(e))));
            }
            Err(SourceError::Transport(m) | SourceError::Lost(m)) => {
                // A connection cut mid-stream ends the watch like a server close.
                w.closed = format!("connection lost: {m}");
                return ControlFlow::Break(None);
            }
            Err(e) => {
                let cause = match &e {
                    SourceError::Decode(m) | SourceError::Protobuf(m) => {
                        format!("unable to decode an event from the watch stream: {m}")
                    }
                    other => other.to_string(),
                };
                return ControlFlow::Break(Some((cause, Some(e))));
            }
        };
        if !w.travelled {
            w.travelled = self.travelled(|| watch_query(&w.opened_from, false), &rv);
        }
        self.last_sync_rv = rv;
        ControlFlow::Continue(())
    }

    /// The watch's end said (`WatchEnded`) and the state after it. client-go
    /// `watch`/`handleAnyWatch`: only a watch shorter than a second that delivered nothing
    /// is an error; any other end without an error (the server's timeout, with or without
    /// bookmarks) watches again from the last RV, no relist.
    fn watch_ended(
        &mut self,
        w: OneWatch,
        failed: Option<(String, Option<SourceError>)>,
    ) -> Result<State, SourceError> {
        let failed = failed.or_else(|| {
            (!w.stalled && very_short(w.start, w.events + w.bookmarks, self.cfg.clocks.short_watch))
                .then(|| {
                    (
                    "very short watch: the watch lasted less than a second and no items received"
                        .to_owned(),
                    None,
                )
                })
        });
        // client-go re-watches after each such close from the same resourceVersion: a
        // server that ends a too-old watch cleanly instead of with 410 Expired
        // (kubernetes/kubernetes#137089) keeps it there for ever. Said once.
        let short = matches!(&failed, Some((_, None))) && w.events + w.bookmarks == 0;
        self.short_closes = if short { self.short_closes + 1 } else { 0 };
        if self.short_closes >= SHORT_CLOSES && self.note("clean-close") {
            self.store.notice(ReflectorEvent::Protocol {
                problem: "clean-close".to_owned(),
                message: format!(
                    "the watch closed cleanly at once {} times in a row (the last from rv={:?}), \
                     with no event and no error: client-go takes each for a very short watch \
                     and tries again after a backoff; a server that ends a watch from a \
                     too-old resourceVersion so, instead of with 410 Expired, keeps client-go \
                     from relisting (kubernetes/kubernetes#137089)",
                    self.short_closes, w.opened_from
                ),
            });
        }
        let (reason, error) = match &failed {
            Some((cause, _)) => (cause.clone(), true),
            None => (w.closed, false),
        };
        self.store.notice(ReflectorEvent::WatchEnded {
            reason,
            events: w.events,
            bookmarks: w.bookmarks,
            elapsed: w.start.elapsed(),
            error,
        });
        match failed {
            None => Ok(State::OpenWatch),
            Some((cause, e)) => self.after_error(At::Watching, e.as_ref(), cause, ""),
        }
    }
}

/// What one watch has done so far ([`Reflector::watching`]).
struct OneWatch {
    start: Instant,
    /// Objects (and an Error event) and bookmarks, apart: client-go's eventCount is their
    /// sum, which only the very-short-watch rule reads.
    events: u64,
    bookmarks: u64,
    /// Why it ended, when it ends without an error.
    closed: String,
    /// The RV it was opened from, which names its one TimeTravel, and whether it had one.
    opened_from: String,
    travelled: bool,
    /// The last time it delivered something, and whether its silence since has been
    /// reported.
    heard: Instant,
    reported: bool,
    /// `--restart-stalled` ended it.
    stalled: bool,
    /// Its last periodic bookmark, for the bookmark interval.
    last_bookmark: Option<Instant>,
    /// When the server ends it (`timeoutSeconds` after it was opened), if it asked for it.
    deadline: Option<Instant>,
}

impl OneWatch {
    fn new(start: Instant, deadline: Option<Instant>, opened_from: String) -> Self {
        OneWatch {
            start,
            deadline,
            events: 0,
            bookmarks: 0,
            closed: "closed by the server".to_owned(),
            opened_from,
            travelled: false,
            heard: Instant::now(),
            reported: false,
            stalled: false,
            last_bookmark: None,
        }
    }
}

impl<L: ListerWatcher, S: ReflectorStore> Reflector<L, S> {
    /// How long a watch may deliver nothing before it is reported as stalled.
    fn stall_limit(&self) -> Option<Duration> {
        match self.cfg.stall_after {
            StallAfter::Off => None,
            StallAfter::After(d) => Some(d),
            StallAfter::Auto => self.bookmark_interval().map(|i| i * STALL_AUTO_INTERVALS),
        }
    }

    /// The bookmark interval `--stall-after auto` goes by: the median of the last ones
    /// seen, never below the floor; `None` before a watch has shown two periodic bookmarks.
    fn bookmark_interval(&self) -> Option<Duration> {
        let mut seen: Vec<Duration> = self.bookmark_intervals.iter().copied().collect();
        seen.sort();
        let median = *seen.get(seen.len() / 2)?;
        Some(median.max(self.cfg.clocks.bookmark_floor))
    }

    /// A bookmark of `w` arrived (at `w.heard`): with the watch's last periodic one, a
    /// sample of the interval, unless it is the one sent just before the deadline.
    fn bookmark_heard(&mut self, w: &mut OneWatch) {
        if w.deadline.is_some_and(|d| w.heard + PRE_DEADLINE >= d) {
            return;
        }
        if let Some(prev) = w.last_bookmark.replace(w.heard) {
            if self.bookmark_intervals.len() == BOOKMARK_SAMPLES {
                self.bookmark_intervals.pop_front();
            }
            self.bookmark_intervals.push_back(w.heard - prev);
        }
    }
}

/// client-go: a watch that lasted less than `limit` ([`SHORT_WATCH`]) and delivered
/// nothing is an error, not a clean close. `events`: client-go's eventCount, bookmarks
/// included.
fn very_short(start: Instant, events: u64, limit: Duration) -> bool {
    events == 0 && start.elapsed() < limit
}

/// A server without streaming lists refuses `sendInitialEvents` as 422 Invalid.
fn is_rejection(e: &SourceError) -> bool {
    e.api().is_some_and(|s| s.code == 422)
}

/// The server answered with a 4xx that a LIST would get as well (not 408, 410, 429).
fn is_answered_4xx(e: &SourceError) -> bool {
    e.api().is_some() && e.will_not_fix_itself()
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
#[path = "tests.rs"]
mod tests;

/// A list's query as the reflector asks it, for a [`ReflectorEvent::TimeTravel`].
fn list_query(rv: &str, limit: u32) -> String {
    let mut q = format!("list ?resourceVersion={rv}");
    if limit > 0 {
        q.push_str(&format!("&limit={limit}"));
    }
    q
}

/// A watch's query, for a [`ReflectorEvent::TimeTravel`]; `initial`: a streaming list's.
fn watch_query(rv: &str, initial: bool) -> String {
    let mut q = format!("watch ?resourceVersion={rv}");
    if initial {
        q.push_str("&sendInitialEvents=true");
    }
    q
}

/// The reflector writes to either of client-go's queues; announcements become notices.
impl<Q: Queue> ReflectorStore for Q
where
    Q::Notice: From<ReflectorEvent>,
{
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
        match event {
            ReflectorEvent::Bookmark { .. } => self.bookmark(event.into()),
            _ => self.push_notice(event.into()),
        }
    }
}
