//! Where and when a consistency check is taken, and the task that takes them.
//!
//! A check compares the store with a LIST at the resourceVersion the store is at, so it
//! needs a moment when the store holds exactly the server's state at a known
//! resourceVersion: a *sync point*. The reflector's own resourceVersion runs ahead of the
//! store (what it has queued is not applied yet), and with DeltaFIFO a pop applies a key's
//! newest deltas while older deltas of other keys still wait, so no single pop is such a
//! moment. One is: the queue holds no delta. Then the store holds everything the reflector
//! gave the queue, and nothing else.
//!
//! [`SyncPoints`] stands between the reflector and its queue and remembers the
//! resourceVersion that everything given to the queue leads to (the last list replaced,
//! watch event queued or bookmark noticed: the reflector's last synced resourceVersion). It
//! holds one lock around each of those calls and around [`SyncPoints::sync_point`], which
//! looks at the queue and, when it is empty, takes the store's objects: while that lock is
//! held nothing can be queued, so the consumer cannot change the store either (it changes
//! the store only while popping a delta, under the queue's own lock).
//!
//! The task ([`run`]) takes a sync point right after the first sync and then every
//! period (waiting, if the queue is busy, for the next moment it is empty, and reporting
//! each whole period without one: an informer whose handler is slower than the events
//! lags its watch and has nothing to compare), LISTs at its
//! resourceVersion with `resourceVersionMatch=Exact` through the request layer and the
//! reflector's pager, and queues the [`Report`] as a notice, so that it is printed in
//! order with the deltas. It never blocks the informer loop; the reflector waits only
//! while the store's objects are copied (pointers, not objects).

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use super::report::{compare, Report};
use crate::cache::cost::StoreCost;
use crate::cache::listwatch::{ListOptions, ListerWatcher};
use crate::cache::object::ObjectRef;
use crate::cache::queue::Queue;
use crate::cache::reflector::pager;
use crate::cache::reflector::{ListProgress, ReflectorEvent, ReflectorStore};

/// What a queue the checks report into must carry: the reflector's events, and reports.
pub trait Notices: From<ReflectorEvent> + From<Report> {}

impl<N: From<ReflectorEvent> + From<Report>> Notices for N {}
use crate::cache::retry::Retrying;
use crate::cache::store::Store;
use crate::cache::transform::Transform;

/// How often a due check looks again for a sync point while the queue is busy.
const POLL: Duration = Duration::from_millis(50);

/// The reflector's side of a queue, remembering where what it queued leads (see the
/// module doc).
pub struct SyncPoints<Q> {
    queue: Arc<Q>,
    /// The resourceVersion of the state the queue's deltas lead to, once applied: that of
    /// the last list replaced, watch event queued or bookmark noticed ("" before the first
    /// list). Invariant: every call that queues deltas or moves it holds this lock from
    /// before it touches the queue until it has moved it, so whoever holds the lock sees a
    /// queue and a resourceVersion that agree. `None`: no checks, nothing tracked.
    at: Option<Mutex<String>>,
    /// `--transform`: applied to every object before it is queued, as client-go's
    /// DeltaFIFO applies its `TransformFunc` (delta_fifo.go, queueActionLocked).
    transform: Option<Transform>,
    /// `--cache-stats`: told of every list before it replaces the store (the relist peak).
    cost: Option<Arc<StoreCost>>,
}

impl<Q: Queue> SyncPoints<Q>
where
    Q::Notice: Notices,
{
    /// `track`: whether checks will be taken (without them, calls just pass through).
    pub fn new(queue: Arc<Q>, track: bool) -> SyncPoints<Q> {
        SyncPoints {
            queue,
            at: track.then(Mutex::default),
            transform: None,
            cost: None,
        }
    }

    /// Every list is measured against the store before it replaces it.
    pub fn with_cost(mut self, cost: Option<Arc<StoreCost>>) -> SyncPoints<Q> {
        self.cost = cost;
        self
    }

    /// Objects are queued as `transform` makes them.
    pub fn with_transform(mut self, transform: Option<Transform>) -> SyncPoints<Q> {
        self.transform = transform;
        self
    }

    fn transformed(&self, obj: ObjectRef) -> ObjectRef {
        match &self.transform {
            Some(t) => t.apply(obj),
            None => obj,
        }
    }

    fn lock(m: &Mutex<String>) -> MutexGuard<'_, String> {
        m.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `push` on the queue under the lock, then records `rv` as where the queue leads
    /// (`None`: where it did).
    fn queued(&self, rv: Option<String>, push: impl FnOnce(&Q)) {
        let Some(at) = &self.at else {
            return push(&*self.queue);
        };
        let mut at = Self::lock(at);
        push(&*self.queue);
        if let Some(rv) = rv {
            *at = rv;
        }
    }

    /// `rv` when tracking (spares an allocation per event otherwise).
    fn tracked(&self, rv: &str) -> Option<String> {
        self.at.as_ref().map(|_| rv.to_owned())
    }

    /// Whether the informer is at a sync point now, and if so the resourceVersion and the
    /// store's objects.
    pub fn sync_point(&self, store: &Store) -> Point {
        let Some(at) = &self.at else {
            return Point::NotYet;
        };
        let at = Self::lock(at);
        // A LIST cannot be exact at "" or "0" (client-go's detector skips "0" too).
        if at.is_empty() || *at == "0" || !self.queue.has_synced() {
            Point::NotYet
        } else if !self.queue.is_empty() {
            Point::Busy(at.clone())
        } else {
            Point::At(at.clone(), store.list())
        }
    }
}

/// What [`SyncPoints::sync_point`] found.
#[derive(Debug)]
pub enum Point {
    /// Not synced yet (or not tracking): no check is due.
    NotYet,
    /// Deltas are queued: the store lags the reflector, which is at this resourceVersion.
    Busy(String),
    /// A sync point: the store's objects are those of the server at this resourceVersion.
    At(String, Vec<ObjectRef>),
}

impl<Q: Queue> ReflectorStore for SyncPoints<Q>
where
    Q::Notice: Notices,
{
    fn add(&self, obj: ObjectRef) {
        let obj = self.transformed(obj);
        self.queued(self.tracked(obj.resource_version()), |q| Queue::add(q, obj));
    }
    fn update(&self, obj: ObjectRef) {
        let obj = self.transformed(obj);
        self.queued(self.tracked(obj.resource_version()), |q| {
            Queue::update(q, obj)
        });
    }
    fn delete(&self, obj: ObjectRef) {
        let obj = self.transformed(obj);
        self.queued(self.tracked(obj.resource_version()), |q| {
            Queue::delete(q, obj)
        });
    }
    fn replace(&self, objs: Vec<ObjectRef>, resource_version: &str) {
        // The list as received: the transform runs while it is held (delta_fifo.go's
        // Replace transforms each item of a list that is still alive).
        if let Some(cost) = &self.cost {
            cost.relisting(&objs);
        }
        let objs = match &self.transform {
            Some(t) => objs.into_iter().map(|o| t.apply(o)).collect(),
            None => objs,
        };
        self.queued(self.tracked(resource_version), |q| {
            Queue::replace(q, objs, resource_version)
        });
    }
    fn resync(&self) {
        // Sync deltas carry the store's own versions: where the queue leads is unchanged.
        self.queued(None, |q| Queue::resync(q));
    }
    fn notice(&self, event: ReflectorEvent) {
        match &event {
            ReflectorEvent::Bookmark { resource_version } if self.at.is_some() => {
                let rv = self.tracked(resource_version);
                self.queued(rv, |q| q.bookmark(event.into()));
            }
            ReflectorEvent::Bookmark { .. } => self.queue.bookmark(event.into()),
            _ => self.queue.push_notice(event.into()),
        }
    }
}

/// Lists at `rv` with `resourceVersionMatch=Exact`, in pages of `page_size` (0: one
/// page), and compares the LIST with `objects`, the store's at `rv`.
pub async fn check<L: ListerWatcher>(
    lw: &L,
    rv: &str,
    objects: &[ObjectRef],
    page_size: u32,
) -> Report {
    let first = ListOptions {
        resource_version: rv.to_owned(),
        resource_version_match: Some("Exact"),
        limit: (page_size > 0).then_some(page_size),
        continue_token: None,
    };
    let listed = pager::list_from(lw, &ListProgress::default(), first).await;
    let pairs = |objs: &[ObjectRef]| -> Vec<(String, String)> {
        objs.iter()
            .map(|o| (o.key(), o.resource_version().to_owned()))
            .collect()
    };
    match listed {
        Ok(l) => Report::compared(rv, objects.len(), compare(pairs(objects), pairs(&l.items))),
        Err(e) => Report::failed(rv, objects.len(), &e),
    }
}

/// Checks the store behind `points` against `lw` (the reflector's source: the same
/// resource, namespace and selectors) after the first sync and then every `period`, each
/// report queued as a notice. Runs until the task is dropped or aborted.
pub async fn run<L: ListerWatcher, Q: Queue<Notice: Notices>>(
    lw: L,
    points: Arc<SyncPoints<Q>>,
    store: Arc<Store>,
    period: Duration,
    page_size: u32,
) {
    // Retries are the request layer's own; only the outcome is the check's.
    let lw = Retrying::new(
        lw,
        Arc::new(|r: crate::cache::retry::Retry| {
            tracing::info!(
                "consistency check: retrying list in {:?} (attempt {})",
                r.delay,
                r.attempt
            )
        }),
    );
    loop {
        let (rv, objects) = next_point(&points, &store, period).await;
        let report = check(&lw, &rv, &objects, page_size).await;
        drop(objects);
        points.queue.push_notice(report.into());
        tokio::time::sleep(period).await;
    }
}

/// Waits for the next sync point. A whole `period` after the first sync without one (the
/// queue always held deltas) is reported, so that a check never goes missing unsaid.
async fn next_point<Q: Queue<Notice: Notices>>(
    points: &SyncPoints<Q>,
    store: &Store,
    period: Duration,
) -> (String, Vec<ObjectRef>) {
    let mut busy_since: Option<tokio::time::Instant> = None;
    loop {
        match points.sync_point(store) {
            Point::At(rv, objects) => return (rv, objects),
            Point::NotYet => busy_since = None,
            Point::Busy(rv) => {
                let since = *busy_since.get_or_insert_with(tokio::time::Instant::now);
                if since.elapsed() >= period {
                    let report = Report::lagging(&rv, period);
                    points.queue.push_notice(report.into());
                    busy_since = None;
                }
            }
        }
        tokio::time::sleep(POLL).await;
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::cache::delta_fifo::DeltaFifo;
    use crate::cache::listwatch::{ApiStatus, ListPage, SourceError, Watch, WatchOptions};
    use crate::cache::queue::Popped;
    use crate::cache::real_fifo::RealFifo;
    use crate::cache::testutil::meta_object;

    /// What the tests' queues carry: the reflector's events and the checks' reports.
    #[derive(Debug, PartialEq)]
    enum Note {
        Event(ReflectorEvent),
        Consistency(Report),
    }

    impl From<ReflectorEvent> for Note {
        fn from(e: ReflectorEvent) -> Note {
            Note::Event(e)
        }
    }

    impl From<Report> for Note {
        fn from(r: Report) -> Note {
            Note::Consistency(r)
        }
    }

    fn obj(name: &str, rv: &str) -> ObjectRef {
        meta_object("ns", name, rv)
    }

    /// Pops whatever is queued now, applying deltas to `store` as the informer loop
    /// does; the notices popped.
    async fn drain<Q: Queue<Notice = Note>>(q: &Q, store: &Store) -> Vec<Note> {
        let mut notices = Vec::new();
        // A zero timeout still polls the pop once: whatever is queued comes out.
        while let Ok(Some(p)) = tokio::time::timeout(Duration::ZERO, pop(q, store)).await {
            if let Popped::Notice(n) = p {
                notices.push(n);
            }
        }
        notices
    }

    fn pop<'a, Q: Queue<Notice = Note>>(
        q: &'a Q,
        store: &'a Store,
    ) -> impl std::future::Future<Output = Option<Popped<Note>>> + 'a {
        q.pop_with(move |p| {
            if let Popped::Deltas { deltas, .. } = &p {
                store.apply(deltas);
            }
            p
        })
    }

    /// Pops (applying deltas) until a notice comes out.
    async fn next_notice<Q: Queue<Notice = Note>>(q: &Q, store: &Store) -> Note {
        loop {
            match tokio::time::timeout(Duration::from_secs(600), pop(q, store)).await {
                Ok(Some(Popped::Notice(n))) => return n,
                Ok(Some(Popped::Deltas { .. })) => {}
                other => panic!("no notice came: {other:?}"),
            }
        }
    }

    /// An empty store and a DeltaFIFO that knows it.
    fn delta_fifo() -> (Arc<Store>, Arc<DeltaFifo<Note>>) {
        let store = Arc::new(Store::new());
        (store.clone(), Arc::new(DeltaFifo::new(Some(store), true)))
    }

    fn rvs(objs: &[ObjectRef]) -> Vec<(String, String)> {
        objs.iter()
            .map(|o| (o.key(), o.resource_version().to_owned()))
            .collect()
    }

    fn pair(k: &str, rv: &str) -> (String, String) {
        (k.to_owned(), rv.to_owned())
    }

    /// `q` must have `store` as its known objects.
    async fn sync_points_follow_what_was_applied<Q: Queue<Notice = Note>>(
        q: Arc<Q>,
        store: Arc<Store>,
    ) {
        let points = SyncPoints::new(q.clone(), true);
        assert!(
            matches!(points.sync_point(&store), Point::NotYet),
            "nothing listed"
        );
        points.replace(vec![obj("a", "1"), obj("b", "2")], "5");
        assert!(
            matches!(points.sync_point(&store), Point::NotYet),
            "not synced"
        );
        drain(&*q, &store).await;
        let Point::At(rv, objs) = points.sync_point(&store) else {
            panic!("synced and drained");
        };
        assert_eq!(rv, "5");
        assert_eq!(rvs(&objs), [pair("ns/a", "1"), pair("ns/b", "2")]);

        // Queued but not applied: the reflector is ahead of the store, no sync point.
        points.update(obj("a", "6"));
        points.delete(obj("b", "7"));
        assert!(matches!(points.sync_point(&store), Point::Busy(rv) if rv == "7"));
        drain(&*q, &store).await;
        let Point::At(rv, objs) = points.sync_point(&store) else {
            panic!("drained");
        };
        assert_eq!((rv.as_str(), rvs(&objs)), ("7", vec![pair("ns/a", "6")]));

        // A bookmark moves it on; a resync and other notices do not.
        points.notice(ReflectorEvent::Bookmark {
            resource_version: "9".into(),
        });
        points.resync();
        points.notice(ReflectorEvent::Resync);
        assert!(
            matches!(points.sync_point(&store), Point::Busy(_)),
            "Sync deltas queued"
        );
        drain(&*q, &store).await;
        let Point::At(rv, objs) = points.sync_point(&store) else {
            panic!("drained");
        };
        assert_eq!((rv.as_str(), rvs(&objs)), ("9", vec![pair("ns/a", "6")]));
    }

    #[tokio::test]
    async fn sync_points_with_either_queue() {
        let (store, q) = delta_fifo();
        sync_points_follow_what_was_applied(q, store).await;
        let store = Arc::new(Store::new());
        let q = Arc::new(RealFifo::new(store.clone()));
        sync_points_follow_what_was_applied(q, store).await;
    }

    #[tokio::test]
    async fn without_checks_nothing_is_tracked() {
        let (store, q) = delta_fifo();
        let points = SyncPoints::new(q.clone(), false);
        points.replace(vec![obj("a", "1")], "5");
        drain(&*q, &store).await;
        assert!(matches!(points.sync_point(&store), Point::NotYet));
        assert_eq!(store.len(), 1, "calls pass through");
    }

    /// A server's state per revision, listed in pages of the limit asked; records every
    /// request's options.
    #[derive(Default)]
    struct Server {
        at: BTreeMap<String, Vec<ObjectRef>>,
        calls: Mutex<Vec<ListOptions>>,
    }

    impl ListerWatcher for Arc<Server> {
        async fn list(&self, opts: ListOptions) -> Result<ListPage, SourceError> {
            self.calls.lock().unwrap().push(opts.clone());
            let (rv, start) = match &opts.continue_token {
                Some(t) => t
                    .split_once(':')
                    .map(|(r, s)| (r.to_owned(), s.parse::<usize>().unwrap())),
                None => Some((opts.resource_version.clone(), 0)),
            }
            .unwrap();
            let Some(items) = self.at.get(&rv) else {
                return Err(SourceError::Api(ApiStatus {
                    code: 410,
                    reason: "Expired".into(),
                    message: "The resourceVersion for the provided list is too old.".into(),
                    ..ApiStatus::default()
                }));
            };
            let end = match opts.limit {
                Some(l) if l > 0 => (start + l as usize).min(items.len()),
                _ => items.len(),
            };
            Ok(ListPage {
                resource_version: rv.clone(),
                continue_token: (end < items.len()).then(|| format!("{rv}:{end}")),
                remaining_item_count: None,
                items: items[start..end].to_vec(),
                ..ListPage::default()
            })
        }

        async fn watch(&self, _: WatchOptions) -> Result<Watch, SourceError> {
            unreachable!("a check only lists")
        }
    }

    #[tokio::test]
    async fn a_check_lists_exactly_at_the_store_version_in_pages() {
        let server = Arc::new(Server {
            at: BTreeMap::from([(
                "9".to_owned(),
                vec![obj("a", "1"), obj("b", "8"), obj("c", "3"), obj("m", "9")],
            )]),
            ..Server::default()
        });
        let store = [obj("a", "1"), obj("b", "2"), obj("c", "3"), obj("x", "4")];
        let r = check(&server, "9", &store, 2).await;
        assert_eq!(r.resource_version, "9");
        assert_eq!(r.consistent, Some(false));
        assert_eq!(r.objects, 4);
        assert_eq!(r.missing, ["ns/m"]);
        assert_eq!(r.extra, ["ns/x"]);
        assert_eq!(r.stale, ["ns/b"]);
        let calls = server.calls.lock().unwrap().clone();
        assert_eq!(calls.len(), 2, "{calls:?}");
        assert_eq!(
            calls[0],
            ListOptions {
                resource_version: "9".into(),
                resource_version_match: Some("Exact"),
                limit: Some(2),
                continue_token: None,
            }
        );
        // The next page carries the continue token and the limit only, as the API requires.
        assert_eq!(
            calls[1],
            ListOptions {
                limit: Some(2),
                continue_token: Some("9:2".into()),
                ..ListOptions::default()
            }
        );

        let same = [obj("a", "1"), obj("b", "8"), obj("c", "3"), obj("m", "9")];
        let r = check(&server, "9", &same, 0).await;
        assert_eq!((r.consistent, r.objects), (Some(true), 4));
        assert_eq!(server.calls.lock().unwrap().last().unwrap().limit, None);
    }

    #[tokio::test]
    async fn a_compacted_version_is_reported_not_compared() {
        let server = Arc::new(Server::default());
        let r = check(&server, "3", &[obj("a", "1")], 500).await;
        assert_eq!(r.consistent, None);
        assert!(r.compacted);
        assert!(r.missing.is_empty() && r.extra.is_empty() && r.stale.is_empty());
        assert!(r.error.unwrap().starts_with("410 Expired"));
    }

    #[tokio::test(start_paused = true)]
    async fn run_checks_after_the_first_sync_and_then_every_period() {
        let server = Arc::new(Server {
            at: BTreeMap::from([
                ("5".to_owned(), vec![obj("a", "1")]),
                ("6".to_owned(), vec![obj("a", "6")]),
            ]),
            ..Server::default()
        });
        let (store, q) = delta_fifo();
        let points = Arc::new(SyncPoints::new(q.clone(), true));
        let task = tokio::spawn(run(
            server.clone(),
            points.clone(),
            store.clone(),
            Duration::from_secs(60),
            500,
        ));
        points.replace(vec![obj("a", "1")], "5");
        let first = next_notice(&*q, &store).await;
        assert_eq!(
            first,
            Note::Consistency(Report {
                resource_version: "5".into(),
                consistent: Some(true),
                objects: 1,
                ..Report::default()
            })
        );
        // The watch lost the MODIFIED of rv 6: its bookmark moves the store to rv 6, where
        // the server has another version of the object.
        points.notice(ReflectorEvent::Bookmark {
            resource_version: "6".into(),
        });
        let bookmark = next_notice(&*q, &store).await;
        assert!(
            matches!(bookmark, Note::Event(ReflectorEvent::Bookmark { .. })),
            "{bookmark:?}"
        );
        let Note::Consistency(r) = next_notice(&*q, &store).await else {
            panic!("a check");
        };
        assert_eq!(
            (r.resource_version.as_str(), r.consistent),
            ("6", Some(false))
        );
        assert_eq!(r.stale, ["ns/a"]);
        let calls = server.calls.lock().unwrap().clone();
        let at: Vec<&str> = calls.iter().map(|c| c.resource_version.as_str()).collect();
        assert_eq!(at, ["5", "6"]);
        task.abort();
    }

    /// A queue that never empties gets no check, and says so once a period.
    #[tokio::test(start_paused = true)]
    async fn a_queue_that_never_empties_is_reported_once_a_period() {
        let (store, q) = delta_fifo();
        let points = SyncPoints::new(q.clone(), true);
        points.replace(vec![obj("a", "1")], "1");
        drain(&*q, &store).await;
        // A delta nobody pops: the store stays behind the watch.
        points.update(obj("a", "2"));
        let wait = next_point(&points, &store, Duration::from_secs(10));
        let none = tokio::time::timeout(Duration::from_secs(25), wait).await;
        assert!(none.is_err(), "no sync point while a delta waits");
        let notices = drain(&*q, &store).await;
        assert_eq!(notices.len(), 2, "one per period: {notices:?}");
        for n in notices {
            let Note::Consistency(r) = n else {
                panic!("{n:?}");
            };
            assert_eq!((r.resource_version.as_str(), r.consistent), ("2", None));
            assert!(!r.compacted);
            assert!(r.error.unwrap().contains("never emptied in 10s"));
        }
    }
}
