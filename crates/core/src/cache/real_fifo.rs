//! client-go's RealFIFO (`tools/cache/the_real_fifo.go`): every notification is delivered,
//! in order; nothing is coalesced per key. Replace still yields tombstones (first) and
//! `Replaced` deltas; Delete is never ignored. Notices travel in the same ordered queue
//! ([`crate::cache::queue`]).
//!
//! One queue with client-go's options ([`RealFifoOptions`], as `RealFIFOOptions` and the
//! controller's choice of `Pop` or `PopBatch`): one delta per pop (client-go 0.33, 0.34);
//! batch pops of deltas of distinct keys (0.35, `InOrderInformersBatchProcess`); and the
//! atomic mode (0.36, `AtomicFIFO`), where a Replace queues one `ReplacedAll` entry and a
//! Resync one `SyncAll` entry, which the informer expands against its store when popped,
//! and a watch bookmark closes a batch as client-go's `Bookmark` delta does.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::Notify;

use crate::cache::delta::{AtomicDelta, Delta, DeltaType};
use crate::cache::object::ObjectRef;
use crate::cache::queue::{
    release_deque, Batched, FifoStats, PopState, Popped, Queue, RealFifoCounts,
};
use crate::cache::store::Store;

/// client-go's `defaultBatchSize`: the most deltas one batch pop takes.
pub const DEFAULT_BATCH_SIZE: usize = 1000;

/// How a [`RealFifo`] pops and queues relists; the default is client-go 0.33's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RealFifoOptions {
    /// `Some(n)`: a pop takes up to `n` deltas of distinct keys, never past the end of the
    /// first Replace's deltas nor across an atomic entry or a bookmark (client-go ≥ 0.35's
    /// `PopBatch`, n = [`DEFAULT_BATCH_SIZE`]); `None`: one delta per pop.
    pub batch_size: Option<usize>,
    /// client-go ≥ 0.36's `AtomicEvents`: Replace and Resync each queue one atomic entry
    /// ([`AtomicDelta`]) and never read the store.
    pub atomic: bool,
}

#[derive(Debug)]
enum Entry<N> {
    Delta {
        key: String,
        delta: Delta,
    },
    Atomic(AtomicDelta),
    /// `barrier`: no batch pop crosses it (a bookmark in the atomic mode).
    Notice {
        n: N,
        barrier: bool,
    },
}

#[derive(Debug)]
struct Inner<N> {
    /// Everything queued, in arrival order.
    items: VecDeque<Entry<N>>,
    /// Number of `Entry::Delta` and `Entry::Atomic` in `items`.
    deltas: usize,
    /// Set by the first Replace or by an Add/Update/Delete before it. Never reset.
    populated: bool,
    /// Deltas (and atomic entries) still to pop from those queued when the first Replace
    /// set `populated`.
    initial_population_count: usize,
    closed: bool,
    opts: RealFifoOptions,
    /// `--stats`: `max_depth` is the most deltas queued at once.
    stats: FifoStats,
}

/// client-go's RealFIFO, with `knownObjects` = the consumer's [`Store`] (not read in the
/// atomic mode).
///
/// Every change is its own entry, in order; with client-go 0.35's batch pops, one pop
/// takes the deltas of distinct keys:
///
/// ```
/// use std::sync::Arc;
/// use kwatch_core::cache::object::{Object, ObjectRef};
/// use kwatch_core::cache::queue::{Batched, Popped, Queue};
/// use kwatch_core::cache::real_fifo::{RealFifo, RealFifoOptions};
/// use kwatch_core::cache::store::Store;
///
/// fn pod(name: &str, rv: &str) -> ObjectRef {
///     let meta = serde_json::json!({"name": name, "namespace": "ns", "resourceVersion": rv});
///     let json = serde_json::json!({"kind": "Pod", "metadata": meta});
///     Arc::new(Object::from_json(&json.to_string()).unwrap())
/// }
///
/// let q = RealFifo::<()>::new(Arc::new(Store::new()));
/// q.add(pod("a", "1"));
/// q.update(pod("a", "2"));
/// let mut popped = Vec::new();
/// while let Some(Popped::Deltas { key, deltas, .. }) = q.try_pop() {
///     popped.push(format!("{key} {} {}", deltas[0].kind, deltas.len()));
/// }
/// // Nothing coalesced: a DeltaFIFO would hand out `ns/a` once, with both deltas.
/// assert_eq!(popped, ["ns/a Added 1", "ns/a Updated 1"]);
///
/// let batches = RealFifoOptions { batch_size: Some(1000), atomic: false };
/// let q = RealFifo::<()>::with_options(Arc::new(Store::new()), batches);
/// q.add(pod("a", "1"));
/// q.add(pod("b", "2"));
/// q.update(pod("a", "3"));
/// let Some(Popped::Batch { entries, .. }) = q.try_pop() else { panic!("a batch") };
/// // A batch holds distinct keys: the second `a` waits for the next pop.
/// let keys: Vec<&str> = entries.iter().map(|e| match e {
///     Batched::Delta { key, .. } => key.as_str(),
///     Batched::Notice(()) => "notice",
/// }).collect();
/// assert_eq!(keys, ["ns/a", "ns/b"]);
/// assert!(matches!(q.try_pop(), Some(Popped::Batch { entries, .. }) if entries.len() == 1));
/// ```
#[derive(Debug)]
pub struct RealFifo<N> {
    inner: Mutex<Inner<N>>,
    notify: Notify,
    known: Arc<Store>,
}

impl<N> Inner<N> {
    fn push(&mut self, key: String, delta: Delta) {
        self.items.push_back(Entry::Delta { key, delta });
        self.counted();
    }

    /// A delta or atomic entry was queued.
    fn counted(&mut self) {
        self.deltas += 1;
        self.stats.max_depth = self.stats.max_depth.max(self.deltas);
        if let Some(r) = &mut self.stats.real {
            r.queued += 1;
        }
    }

    fn has_synced(&self) -> bool {
        self.populated && self.initial_population_count == 0
    }

    /// `n` deltas left the queue.
    fn took(&mut self, n: usize) {
        self.deltas -= n;
        if let Some(r) = &mut self.stats.real {
            r.popped += n as u64;
        }
        self.initial_population_count = self.initial_population_count.saturating_sub(n);
    }

    /// client-go's `Pop`: the first entry alone.
    fn pop_one(&mut self, is_in_initial_list: bool) -> Option<Popped<N>> {
        Some(match self.items.pop_front()? {
            Entry::Notice { n, .. } => Popped::Notice(n),
            Entry::Delta { key, delta } => {
                self.took(1);
                Popped::Deltas {
                    key,
                    deltas: vec![delta],
                    is_in_initial_list,
                }
            }
            Entry::Atomic(delta) => {
                self.took(1);
                Popped::Atomic {
                    delta,
                    is_in_initial_list,
                }
            }
        })
    }

    /// client-go's `PopBatch`, the first entry being a delta: the deltas from the front
    /// until one of a key already taken, the `max`-th, the end of the first Replace's
    /// deltas, an atomic entry or a barrier; the notices among them keep their places.
    fn pop_batch(&mut self, max: usize, is_in_initial_list: bool) -> Popped<N> {
        let (mut taken, mut end) = (0, 0);
        {
            let mut keys: HashSet<&str> = HashSet::new();
            for (i, e) in self.items.iter().enumerate() {
                match e {
                    Entry::Notice { barrier: false, .. } => continue,
                    Entry::Notice { barrier: true, .. } | Entry::Atomic(_) => break,
                    Entry::Delta { key, .. } => {
                        let initial_done = self.initial_population_count > 0
                            && taken >= self.initial_population_count;
                        if taken >= max || initial_done || !keys.insert(key.as_str()) {
                            break;
                        }
                        taken += 1;
                        end = i + 1;
                    }
                }
            }
        }
        let entries = self
            .items
            .drain(..end)
            .map(|e| match e {
                Entry::Delta { key, delta } => Batched::Delta { key, delta },
                Entry::Notice { n, .. } => Batched::Notice(n),
                Entry::Atomic(_) => unreachable!("a batch ends before an atomic entry"),
            })
            .collect();
        self.took(taken);
        if let Some(r) = &mut self.stats.real {
            r.batches += 1;
        }
        Popped::Batch {
            entries,
            is_in_initial_list,
        }
    }
}

impl<N> PopState<N> for Inner<N> {
    fn try_pop(&mut self) -> Option<Popped<N>> {
        let is_in_initial_list = !self.has_synced();
        let batch = match (self.opts.batch_size, self.items.front()) {
            (Some(max), Some(Entry::Delta { .. })) => Some(max.max(1)),
            _ => None,
        };
        match batch {
            Some(max) => Some(self.pop_batch(max, is_in_initial_list)),
            None => self.pop_one(is_in_initial_list),
        }
    }

    fn is_closed(&self) -> bool {
        self.closed
    }

    fn release_spare(&mut self) {
        release_deque(&mut self.items);
    }
}

impl<N: Send + 'static> RealFifo<N> {
    /// client-go 0.33's RealFIFO: one delta per pop, not atomic.
    pub fn new(known: Arc<Store>) -> Self {
        RealFifo::with_options(known, RealFifoOptions::default())
    }

    pub fn with_options(known: Arc<Store>, opts: RealFifoOptions) -> Self {
        RealFifo {
            inner: Mutex::new(Inner {
                items: VecDeque::new(),
                deltas: 0,
                populated: false,
                initial_population_count: 0,
                closed: false,
                opts,
                stats: FifoStats {
                    real: Some(RealFifoCounts::default()),
                    ..FifoStats::default()
                },
            }),
            notify: Notify::new(),
            known,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner<N>> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn enqueue(&self, kind: DeltaType, obj: ObjectRef) {
        {
            let mut inner = self.lock();
            inner.populated = true;
            inner.push(obj.key(), Delta::new(kind, obj));
        }
        self.notify.notify_waiters();
    }

    /// Non-blocking pop: the next entry, or `None` if nothing is queued.
    pub fn try_pop(&self) -> Option<Popped<N>> {
        self.lock().try_pop()
    }

    /// client-go's `reconcileReplacement` into the queue: tombstones for queued keys whose
    /// last delta is not a deletion and for known keys with nothing queued, when the list
    /// lacks them; then `Replaced` for every listed object.
    fn reconcile(&self, inner: &mut Inner<N>, list: Vec<ObjectRef>) {
        let new_keys: HashSet<String> = list.iter().map(|o| o.key()).collect();
        let mut queued_order: Vec<String> = Vec::new();
        let mut last: HashMap<String, &Delta> = HashMap::new();
        for e in &inner.items {
            if let Entry::Delta { key, delta } = e {
                if last.insert(key.clone(), delta).is_none() {
                    queued_order.push(key.clone());
                }
            }
        }
        let mut tombstones: Vec<(String, Delta)> = Vec::new();
        for key in &queued_order {
            let d = last[key];
            if new_keys.contains(key) || d.kind == DeltaType::Deleted {
                continue;
            }
            let obj = d.object.object().cloned();
            tombstones.push((key.clone(), Delta::tombstone(key.clone(), obj)));
        }
        for key in self.known.list_keys() {
            if new_keys.contains(&key) || last.contains_key(&key) {
                continue;
            }
            let obj = self.known.get(&key);
            tombstones.push((key.clone(), Delta::tombstone(key.clone(), obj)));
        }
        for (k, d) in tombstones {
            inner.push(k, d);
        }
        for o in list {
            inner.push(o.key(), Delta::new(DeltaType::Replaced, o));
        }
    }
}

impl<N: Send + 'static> Queue for RealFifo<N> {
    type Notice = N;

    fn add(&self, obj: ObjectRef) {
        self.enqueue(DeltaType::Added, obj);
    }

    fn update(&self, obj: ObjectRef) {
        self.enqueue(DeltaType::Updated, obj);
    }

    fn delete(&self, obj: ObjectRef) {
        self.enqueue(DeltaType::Deleted, obj);
    }

    /// Atomic: one `ReplacedAll` entry. Else tombstones, then `Replaced` for every listed
    /// object (client-go's `reconcileReplacement`).
    fn replace(&self, list: Vec<ObjectRef>, resource_version: &str) {
        {
            let mut inner = self.lock();
            if inner.opts.atomic {
                inner
                    .items
                    .push_back(Entry::Atomic(AtomicDelta::ReplacedAll {
                        resource_version: resource_version.to_owned(),
                        objects: list,
                    }));
                inner.counted();
            } else {
                self.reconcile(&mut inner, list);
            }
            if !inner.populated {
                inner.populated = true;
                inner.initial_population_count = inner.deltas;
            }
        }
        self.notify.notify_waiters();
    }

    /// Atomic: one `SyncAll` entry. Else `Sync` for every known key with nothing queued.
    fn resync(&self) {
        {
            let mut inner = self.lock();
            if inner.opts.atomic {
                inner.items.push_back(Entry::Atomic(AtomicDelta::SyncAll));
                inner.counted();
            } else {
                let queued: HashSet<String> = inner
                    .items
                    .iter()
                    .filter_map(|e| match e {
                        Entry::Delta { key, .. } => Some(key.clone()),
                        _ => None,
                    })
                    .collect();
                for key in self.known.list_keys() {
                    if queued.contains(&key) {
                        continue;
                    }
                    if let Some(o) = self.known.get(&key) {
                        inner.push(key, Delta::new(DeltaType::Sync, o));
                    }
                }
            }
        }
        self.notify.notify_waiters();
    }

    fn push_notice(&self, n: N) {
        self.lock()
            .items
            .push_back(Entry::Notice { n, barrier: false });
        self.notify.notify_waiters();
    }

    fn bookmark(&self, n: N) {
        {
            let mut inner = self.lock();
            let barrier = inner.opts.atomic;
            inner.items.push_back(Entry::Notice { n, barrier });
        }
        self.notify.notify_waiters();
    }

    async fn pop_with<R: Send>(&self, process: impl FnOnce(Popped<N>) -> R + Send) -> Option<R> {
        crate::cache::queue::pop_with(&self.inner, &self.notify, process).await
    }

    fn has_synced(&self) -> bool {
        self.lock().has_synced()
    }

    fn is_empty(&self) -> bool {
        self.lock().deltas == 0
    }

    fn close(&self) {
        self.lock().closed = true;
        self.notify.notify_waiters();
    }

    fn pops_in_batches(&self) -> bool {
        self.lock().opts.batch_size.is_some()
    }

    fn stats(&self) -> Option<FifoStats> {
        let s = self.lock();
        Some(FifoStats {
            depth: s.deltas,
            ..s.stats
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::testutil::meta_object;

    fn obj(name: &str, rv: &str) -> ObjectRef {
        meta_object("", name, rv)
    }

    fn drain(f: &RealFifo<&'static str>, store: &Store) -> Vec<String> {
        let mut out = Vec::new();
        while let Some(p) = f.try_pop() {
            match p {
                Popped::Notice(n) => out.push(format!("notice {n}")),
                Popped::Deltas {
                    key,
                    deltas,
                    is_in_initial_list,
                } => {
                    store.apply(&deltas);
                    assert_eq!(deltas.len(), 1);
                    let d = &deltas[0];
                    let rv = d.object.object().map_or("-", |o| o.resource_version());
                    let t = if d.object.is_tombstone() {
                        " tombstone"
                    } else {
                        ""
                    };
                    let i = if is_in_initial_list { " initial" } else { "" };
                    out.push(format!("{} {key}@{rv}{t}{i}", d.kind));
                }
                other => panic!("not a single pop: {other:?}"),
            }
        }
        out
    }

    #[test]
    fn counts_what_was_queued_popped_and_batched_for_stats() {
        let store = Arc::new(Store::new());
        let opts = RealFifoOptions {
            batch_size: Some(DEFAULT_BATCH_SIZE),
            atomic: false,
        };
        let f: RealFifo<&str> = RealFifo::with_options(store, opts);
        f.replace(vec![obj("a", "1"), obj("b", "2")], "2");
        f.update(obj("a", "3"));
        f.update(obj("a", "4"));
        f.try_pop();
        f.try_pop();
        let real = RealFifoCounts {
            queued: 4,
            popped: 3,
            batches: 2,
        };
        let want = FifoStats {
            depth: 1,
            max_depth: 4,
            real: Some(real),
            ..FifoStats::default()
        };
        assert_eq!(f.stats(), Some(want));
    }

    #[test]
    fn every_notification_is_delivered_in_order_without_coalescing() {
        let store = Arc::new(Store::new());
        let f = RealFifo::new(store.clone());
        f.add(obj("a", "1"));
        f.update(obj("a", "2"));
        f.push_notice("n");
        f.update(obj("b", "3"));
        f.delete(obj("a", "4"));
        f.delete(obj("zzz", "5"));
        assert_eq!(
            drain(&f, &store),
            [
                "Added a@1",
                "Updated a@2",
                "notice n",
                "Updated b@3",
                "Deleted a@4",
                "Deleted zzz@5"
            ]
        );
        assert!(f.has_synced());
    }

    #[test]
    fn replace_queues_tombstones_first_then_replaced_and_counts_the_initial_list() {
        let store = Arc::new(Store::new());
        let f = RealFifo::new(store.clone());
        f.replace(vec![obj("a", "1"), obj("b", "2")], "2");
        assert!(!f.has_synced());
        assert_eq!(
            drain(&f, &store),
            ["Replaced a@1 initial", "Replaced b@2 initial"]
        );
        assert!(f.has_synced());
        f.update(obj("c", "3"));
        f.delete(obj("b", "4"));
        // c was queued (not deleted), b's last queued delta is a deletion, a is only known.
        f.replace(vec![obj("d", "5")], "5");
        assert_eq!(
            drain(&f, &store),
            [
                "Updated c@3",
                "Deleted b@4",
                "Deleted c@3 tombstone",
                "Deleted a@1 tombstone",
                "Replaced d@5"
            ]
        );
        assert_eq!(store.list_keys(), ["d"]);
    }

    #[test]
    fn resync_skips_queued_keys() {
        let store = Arc::new(Store::new());
        let f = RealFifo::new(store.clone());
        f.replace(vec![obj("a", "1"), obj("b", "2")], "2");
        drain(&f, &store);
        f.update(obj("a", "3"));
        f.resync();
        assert_eq!(drain(&f, &store), ["Updated a@3", "Sync b@2"]);
    }

    /// A pop that finds the queue drained gives back the capacity a list's deltas grew.
    #[tokio::test]
    async fn a_drained_queue_gives_back_what_a_list_grew() {
        let store = Arc::new(Store::new());
        let f = RealFifo::<&'static str>::new(store.clone());
        let names: Vec<String> = (0..1000).map(|i| format!("p{i}")).collect();
        f.replace(names.iter().map(|n| obj(n, "1")).collect(), "2");
        assert!(f.lock().items.capacity() >= 1000);
        assert_eq!(drain(&f, &store).len(), 1000);
        f.close();
        assert!(f.pop_with(|_| ()).await.is_none());
        let capacity = f.lock().items.capacity();
        assert!(
            capacity <= 2 * crate::cache::queue::SPARE_ENTRIES,
            "{capacity}"
        );
    }

    #[tokio::test]
    async fn pop_waits_and_close_ends_it() {
        let f = Arc::new(RealFifo::<&'static str>::new(Arc::new(Store::new())));
        let g = f.clone();
        let t =
            tokio::spawn(async move { g.pop_with(|p| matches!(p, Popped::Deltas { .. })).await });
        tokio::task::yield_now().await;
        f.add(obj("a", "1"));
        assert_eq!(t.await.unwrap(), Some(true));
        let g = f.clone();
        let t = tokio::spawn(async move { g.pop_with(|_| ()).await });
        tokio::task::yield_now().await;
        f.close();
        assert_eq!(t.await.unwrap(), None);
    }
}
