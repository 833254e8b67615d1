//! client-go's DeltaFIFO (`tools/cache/delta_fifo.go`): the queue between the reflector
//! (producer) and the consumer that keeps the informer's [`Store`] and prints deltas.
//!
//! Per key it accumulates [`Deltas`] until the key is popped, so a consumer sees every
//! change to an object since it last processed that object, at most once. Relists
//! ([`DeltaFifo::replace`]) queue `Replaced` (or `Sync`) deltas and tombstones for
//! objects that vanished unobserved; [`DeltaFifo::resync`] re-queues the known state.
//!
//! Besides keys, the queue carries out-of-band notices (the reflector's own events),
//! popped in push order and never after a delta queued later than them (a key holding
//! such a delta lets those notices pop first): a relist's announcement always comes out
//! before any delta of that relist.
//!
//! Popping is async: [`DeltaFifo::pop`] waits on a [`Notify`] instead of client-go's
//! condition variable. [`DeltaFifo::pop_with`] runs the consumer's processing under the
//! FIFO's lock, as client-go's `Pop(process)` does, which keeps knownObjects in step with
//! the queue (see its doc).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

#[cfg(test)]
use std::collections::HashSet;

use foldhash::{HashMap, HashMapExt};
use tokio::sync::Notify;

use crate::cache::delta::{Delta, DeltaType, Deltas};
use crate::cache::object::ObjectRef;
use crate::cache::queue::{release_deque, release_map, FifoStats, PopState, Popped, Queue};
use crate::cache::store::Store;

/// An entry of the FIFO's queue.
#[derive(Debug)]
enum Entry<N> {
    Key(String),
    Notice(N),
}

#[derive(Debug)]
struct Inner<N> {
    /// key → the deltas queued for it, oldest first.
    /// Invariant: every `Deltas` here is non-empty, and every delta in `items[k]` is
    /// about key `k`.
    items: HashMap<String, Deltas>,
    /// Pop order. Invariant: each key appears at most once, and a key is in `queue` iff
    /// it is in `items` (so `items.len()` is the number of queued keys). Notices never
    /// coalesce: each pushed notice is its own entry.
    queue: VecDeque<Entry<N>>,
    /// Set by the first Replace, or by an Add/Update/Delete that came before any
    /// Replace (as client-go does). Never reset.
    populated: bool,
    /// Keys still to pop from the first Replace: set once, when that Replace sets
    /// `populated`, to the distinct listed keys plus the tombstones it queued; decremented
    /// (down to 0) by every key pop, never by a notice. Before that Replace `items` is
    /// empty (any earlier Add/Update/Delete would have set `populated`), so it equals the
    /// number of keys that Replace queued.
    initial_population_count: usize,
    /// Stamps every queued delta and notice, increasing.
    seq: u64,
    /// key → the stamp of its newest delta, for the keys that have had a delta added to
    /// already queued ones. Invariant: its keys are in `items`; a key of `items` not here
    /// was given its one delta when it was queued, so no entry of `queue` behind it (a
    /// notice pushed later) is older than that delta.
    newest: HashMap<String, u64>,
    /// The stamps of the notices in `queue`, oldest first. Invariant: one per
    /// `Entry::Notice`, in queue order.
    notice_seqs: VecDeque<u64>,
    /// Pop returns `None` once this is set and the queue is empty. Producers are not
    /// gated by it (client-go neither).
    closed: bool,
    stats: FifoStats,
}

impl<N> Inner<N> {
    fn has_synced(&self) -> bool {
        self.populated && self.initial_population_count == 0
    }

    /// Appends `delta` to `key`'s deltas, queueing the key if new, then dedups.
    fn queue_action(&mut self, key: String, delta: Delta) {
        self.seq += 1;
        match self.items.get_mut(&key) {
            Some(deltas) => {
                self.stats.coalesced += 1;
                deltas.push(delta);
                if dedup_deltas(deltas) {
                    self.stats.dedups += 1;
                }
                self.newest.insert(key, self.seq);
            }
            None => {
                self.items.insert(key.clone(), vec![delta]);
                self.queue.push_back(Entry::Key(key));
                self.stats.max_depth = self.stats.max_depth.max(self.items.len());
            }
        }
    }

    fn push_notice(&mut self, n: N) {
        self.seq += 1;
        self.notice_seqs.push_back(self.seq);
        self.queue.push_back(Entry::Notice(n));
    }

    /// A key coalesces deltas queued after a notice behind it (a relist's `Replaced` on
    /// a key still queued from before the relist's `List` notice). Such a notice is
    /// popped first, so that no delta is ever handed out before a notice pushed earlier.
    fn take_overtaken_notice(&mut self) -> Option<N> {
        let first_notice = *self.notice_seqs.front()?;
        if self.newest.is_empty() {
            return None;
        }
        let Some(Entry::Key(key)) = self.queue.front() else {
            return None;
        };
        if self.newest.get(key).is_none_or(|s| *s < first_notice) {
            return None;
        }
        let at = self
            .queue
            .iter()
            .position(|e| matches!(e, Entry::Notice(_)))?;
        self.notice_seqs.pop_front();
        match self.queue.remove(at) {
            Some(Entry::Notice(n)) => Some(n),
            _ => None,
        }
    }
}

impl<N> PopState<N> for Inner<N> {
    fn try_pop(&mut self) -> Option<Popped<N>> {
        if let Some(n) = self.take_overtaken_notice() {
            return Some(Popped::Notice(n));
        }
        loop {
            match self.queue.pop_front()? {
                Entry::Notice(n) => {
                    self.notice_seqs.pop_front();
                    return Some(Popped::Notice(n));
                }
                Entry::Key(key) => {
                    if !self.newest.is_empty() {
                        self.newest.remove(&key);
                    }
                    let is_in_initial_list = !self.has_synced();
                    self.initial_population_count = self.initial_population_count.saturating_sub(1);
                    // By the queue/items invariant this always exists; skipping a stray
                    // key is what client-go does too.
                    if let Some(deltas) = self.items.remove(&key) {
                        return Some(Popped::Deltas {
                            key,
                            deltas,
                            is_in_initial_list,
                        });
                    }
                }
            }
        }
    }

    fn is_closed(&self) -> bool {
        self.closed
    }

    fn release_spare(&mut self) {
        release_map(&mut self.items);
        release_map(&mut self.newest);
        release_deque(&mut self.queue);
        release_deque(&mut self.notice_seqs);
    }
}

/// client-go's `dedupDeltas`: if the last two deltas are both `Deleted`, keep one — the
/// newer if the older is a tombstone (the newer carries at least as much information),
/// else the older. Returns whether it folded two into one.
fn dedup_deltas(deltas: &mut Deltas) -> bool {
    let n = deltas.len();
    if n < 2 || deltas[n - 1].kind != DeltaType::Deleted || deltas[n - 2].kind != DeltaType::Deleted
    {
        return false;
    }
    if deltas[n - 2].object.is_tombstone() {
        deltas.remove(n - 2);
    } else {
        deltas.pop();
    }
    true
}

/// client-go's DeltaFIFO plus ordered notices. See the module doc.
///
/// A key's changes coalesce until it is popped, two deletions in a row count once, and a
/// relist that lacks a known object queues its tombstone (`DeletedFinalStateUnknown`):
///
/// ```
/// use std::sync::Arc;
/// use kwatch_core::cache::delta::DeltaType::{self, *};
/// use kwatch_core::cache::delta_fifo::DeltaFifo;
/// use kwatch_core::cache::object::{Object, ObjectRef};
/// use kwatch_core::cache::queue::{Popped, Queue};
/// use kwatch_core::cache::store::Store;
///
/// fn pod(name: &str, rv: &str) -> ObjectRef {
///     let meta = serde_json::json!({"name": name, "namespace": "ns", "resourceVersion": rv});
///     let json = serde_json::json!({"kind": "Pod", "metadata": meta});
///     Arc::new(Object::from_json(&json.to_string()).unwrap())
/// }
///
/// /// The next key and its deltas' types, applied to the store as an informer does.
/// fn pop(q: &DeltaFifo<()>, store: &Store) -> (String, Vec<DeltaType>) {
///     let Some(Popped::Deltas { key, deltas, .. }) = q.try_pop() else { panic!("no key") };
///     store.apply(&deltas);
///     (key, deltas.iter().map(|d| d.kind).collect())
/// }
///
/// let store = Arc::new(Store::new());
/// // The store is the queue's knownObjects; `true`: relists queue `Replaced`.
/// let q = DeltaFifo::<()>::new(Some(store.clone()), true);
/// q.add(pod("a", "1"));
/// q.add(pod("b", "2"));
/// q.update(pod("a", "3"));
/// q.delete(pod("a", "4"));
/// q.delete(pod("a", "4"));
/// assert_eq!(pop(&q, &store), ("ns/a".to_owned(), vec![Added, Updated, Deleted]));
/// assert_eq!(pop(&q, &store), ("ns/b".to_owned(), vec![Added]));
/// assert!(q.try_pop().is_none());
///
/// // A relist without b: c is listed, b was deleted while nobody watched.
/// q.replace(vec![pod("c", "5")], "5");
/// assert_eq!(pop(&q, &store), ("ns/c".to_owned(), vec![Replaced]));
/// let Some(Popped::Deltas { deltas, .. }) = q.try_pop() else { panic!() };
/// assert_eq!(deltas[0].kind, Deleted);
/// assert!(deltas[0].object.is_tombstone());
/// ```
#[derive(Debug)]
pub struct DeltaFifo<N> {
    inner: Mutex<Inner<N>>,
    /// Woken (all waiters) after every change that may let a pop proceed: anything
    /// queued, or close.
    notify: Notify,
    /// client-go's knownObjects: what the consumer has applied so far. Read under the
    /// FIFO lock; lock order is always FIFO → store, never the reverse.
    known: Option<Arc<Store>>,
    /// `Replaced` for relisted objects if true, else `Sync` (client-go's legacy default).
    emit_replaced: bool,
}

impl<N: Send + 'static> DeltaFifo<N> {
    /// `known`: the consumer's store (client-go's knownObjects), consulted by Delete,
    /// Replace and Resync; without it a relist cannot report deletions of objects
    /// already popped, and Resync does nothing.
    pub fn new(known: Option<Arc<Store>>, emit_replaced: bool) -> Self {
        DeltaFifo {
            inner: Mutex::new(Inner {
                items: HashMap::new(),
                queue: VecDeque::new(),
                populated: false,
                initial_population_count: 0,
                seq: 0,
                newest: HashMap::new(),
                notice_seqs: VecDeque::new(),
                closed: false,
                stats: FifoStats::default(),
            }),
            notify: Notify::new(),
            known,
            emit_replaced,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner<N>> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn add_or_update(&self, kind: DeltaType, obj: ObjectRef) {
        {
            let mut inner = self.lock();
            inner.populated = true;
            inner.queue_action(obj.key(), Delta::new(kind, obj));
        }
        self.notify.notify_waiters();
    }

    /// Waits until an entry is queued, removes and returns it; `None` once the FIFO is
    /// closed and empty (entries queued before close are still handed out).
    /// Cancel-safe: an entry is removed only when the call returns it.
    pub async fn pop(&self) -> Option<Popped<N>> {
        self.pop_with(|p| p).await
    }

    /// Non-blocking pop: the next entry, or `None` if nothing is queued.
    pub fn try_pop(&self) -> Option<Popped<N>> {
        self.lock().try_pop()
    }

    pub fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// Queued keys (notices not counted).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().items.len()
    }
}

impl<N: Send + 'static> Queue for DeltaFifo<N> {
    type Notice = N;

    /// A watch ADDED event.
    fn add(&self, obj: ObjectRef) {
        self.add_or_update(DeltaType::Added, obj);
    }

    /// A watch MODIFIED event.
    fn update(&self, obj: ObjectRef) {
        self.add_or_update(DeltaType::Updated, obj);
    }

    /// A watch DELETED event. Ignored if the object is neither queued nor known: a relist
    /// has then already reported (or never saw) it, and reporting twice would be wrong.
    fn delete(&self, obj: ObjectRef) {
        let key = obj.key();
        {
            let mut inner = self.lock();
            // client-go sets populated even when the delete is then ignored.
            inner.populated = true;
            let queued = inner.items.contains_key(&key);
            let known = self.known.as_ref().is_some_and(|s| s.get(&key).is_some());
            if !queued && !known {
                return;
            }
            inner.queue_action(key, Delta::new(DeltaType::Deleted, obj));
        }
        self.notify.notify_waiters();
    }

    /// A (re)list result. Queues `Replaced` (`Sync` in legacy mode) for every listed
    /// object, in list order; then a tombstone for every queued key not listed (in queue
    /// order; last known state: its newest delta's object, unwrapped if that is itself a
    /// tombstone); then a tombstone for every known key neither listed nor queued (in
    /// key order; last known state: the store's). The first Replace sets `populated`.
    /// The RV is not used by the FIFO (client-go ignores it too).
    fn replace(&self, list: Vec<ObjectRef>, _resource_version: &str) {
        let action = if self.emit_replaced {
            DeltaType::Replaced
        } else {
            DeltaType::Sync
        };
        {
            let mut inner = self.lock();
            // Every delta queued from here on is stamped above `start`, and every key
            // first queued here is queued behind `queue[..before]`. A key queued before
            // is listed iff it then has a delta stamped above `start`: it has more than
            // one, so `newest` holds its stamp.
            let start = inner.seq;
            let before = inner.queue.len();
            let items_before = inner.items.len();
            for obj in list {
                let key = obj.key();
                inner.queue_action(key, Delta::new(action, obj));
            }
            let mut listed = inner.items.len() - items_before;

            let mut queued_deletions = 0usize;

            // Vanished objects that still have deltas queued. client-go walks its items
            // map (unspecified order); queue order is a deterministic equivalent.
            let mut from_items: Vec<(String, Option<ObjectRef>)> = Vec::new();
            for e in inner.queue.range(..before) {
                let Entry::Key(k) = e else {
                    continue;
                };
                if inner.newest.get(k).is_some_and(|s| *s > start) {
                    listed += 1;
                    continue;
                }
                let last = inner
                    .items
                    .get(k)
                    .and_then(|ds| ds.last())
                    .and_then(|d| d.object.object().cloned());
                from_items.push((k.clone(), last));
            }
            for (key, last) in from_items {
                queued_deletions += 1;
                inner.queue_action(key.clone(), Delta::tombstone(key, last));
            }

            // Vanished objects the consumer knows but that have nothing queued: every
            // listed key is queued, and every unlisted queued key got its tombstone above.
            if let Some(store) = &self.known {
                for key in store.list_keys() {
                    if inner.items.contains_key(&key) {
                        continue;
                    }
                    // Absent only if the consumer deleted it since list_keys.
                    let last = store.get(&key);
                    queued_deletions += 1;
                    inner.queue_action(key.clone(), Delta::tombstone(key, last));
                }
            }

            if !inner.populated {
                inner.populated = true;
                inner.initial_population_count = listed + queued_deletions;
            }
        }
        self.notify.notify_waiters();
    }

    /// Queues `Sync` with the known version of every known key that has nothing queued
    /// (a queued delta is newer than the store's copy; re-sending the store's would
    /// regress it). Does nothing without a known store.
    fn resync(&self) {
        let Some(store) = &self.known else {
            return;
        };
        {
            let mut inner = self.lock();
            for key in store.list_keys() {
                let Some(obj) = store.get(&key) else {
                    continue;
                };
                let key = obj.key();
                if inner.items.contains_key(&key) {
                    continue;
                }
                inner.queue_action(key, Delta::new(DeltaType::Sync, obj));
            }
        }
        self.notify.notify_waiters();
    }

    /// Queues an out-of-band notice behind everything queued so far.
    fn push_notice(&self, n: N) {
        self.lock().push_notice(n);
        self.notify.notify_waiters();
    }

    async fn pop_with<R: Send>(&self, process: impl FnOnce(Popped<N>) -> R + Send) -> Option<R> {
        crate::cache::queue::pop_with(&self.inner, &self.notify, process).await
    }

    /// client-go's HasSynced: populated, and every key of the first Replace popped.
    fn has_synced(&self) -> bool {
        self.lock().has_synced()
    }

    /// Wakes every waiting pop; pops return what is still queued, then `None`.
    fn close(&self) {
        self.lock().closed = true;
        self.notify.notify_waiters();
    }

    /// No key queued (notices may still be).
    fn is_empty(&self) -> bool {
        self.lock().items.is_empty()
    }

    fn stats(&self) -> Option<FifoStats> {
        let s = self.lock();
        Some(FifoStats {
            depth: s.items.len(),
            ..s.stats
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::time::Duration;

    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    use super::*;
    use crate::cache::delta::DeltaObject;
    use crate::cache::testutil::meta_object;

    /// A cluster-scoped object `name` at resourceVersion `rv`.
    fn o(name: &str, rv: u64) -> ObjectRef {
        meta_object("", name, rv)
    }

    /// A namespaced object.
    fn on(ns: &str, name: &str, rv: u64) -> ObjectRef {
        meta_object(ns, name, rv)
    }

    fn known(objs: &[ObjectRef]) -> Arc<Store> {
        let s = Store::new();
        s.replace(objs.to_vec());
        Arc::new(s)
    }

    /// `Added foo@5`, `Deleted tombstone(bar@6)`, `Deleted tombstone(bar@-)`.
    fn fmt_delta(d: &Delta) -> String {
        match &d.object {
            DeltaObject::Object(obj) => {
                format!("{} {}@{}", d.kind, obj.key(), obj.resource_version())
            }
            DeltaObject::Tombstone(t) => {
                let rv = t.obj.as_ref().map_or("-", |o| o.resource_version());
                format!("{} tombstone({}@{rv})", d.kind, t.key)
            }
        }
    }

    /// `foo: [Added foo@5, Updated foo@6]`, or `notice: x`.
    fn fmt_popped<N: std::fmt::Display>(p: &Popped<N>) -> String {
        match p {
            Popped::Deltas { key, deltas, .. } => {
                let ds: Vec<String> = deltas.iter().map(fmt_delta).collect();
                format!("{key}: [{}]", ds.join(", "))
            }
            Popped::Notice(n) => format!("notice: {n}"),
            Popped::Batch { .. } | Popped::Atomic { .. } => unreachable!("a DeltaFIFO pops keys"),
        }
    }

    fn drain<N: Send + std::fmt::Display + 'static>(f: &DeltaFifo<N>) -> Vec<String> {
        std::iter::from_fn(|| f.try_pop())
            .map(|p| fmt_popped(&p))
            .collect()
    }

    fn fifo(known_objs: Option<&[ObjectRef]>, emit_replaced: bool) -> DeltaFifo<&'static str> {
        DeltaFifo::new(known_objs.map(known), emit_replaced)
    }

    /// Pops one key, returning (formatted, is_in_initial_list).
    fn pop_key(f: &DeltaFifo<&'static str>) -> (String, bool) {
        match f.try_pop().expect("a queued entry") {
            p @ Popped::Deltas {
                is_in_initial_list, ..
            } => (fmt_popped(&p), is_in_initial_list),
            Popped::Notice(n) => panic!("unexpected notice {n}"),
            Popped::Batch { .. } | Popped::Atomic { .. } => unreachable!("a DeltaFIFO pops keys"),
        }
    }

    #[test]
    fn add_update_delete_accumulate_per_key_in_order() {
        let f = fifo(None, true);
        f.add(o("foo", 5));
        f.update(o("foo", 6));
        f.add(o("bar", 1));
        f.delete(o("foo", 7));
        f.update(o("bar", 2));
        assert_eq!(f.len(), 2);
        assert_eq!(
            drain(&f),
            vec![
                "foo: [Added foo@5, Updated foo@6, Deleted foo@7]",
                "bar: [Added bar@1, Updated bar@2]",
            ]
        );
        assert!(f.is_empty());
        let st = f.stats().unwrap();
        assert_eq!(st.coalesced, 3);
        assert_eq!(st.dedups, 0);
        assert_eq!(st.max_depth, 2);
    }

    #[test]
    fn namespaced_keys() {
        let f = fifo(None, true);
        f.add(on("a", "x", 1));
        f.add(on("b", "x", 2));
        f.add(o("x", 3));
        assert_eq!(
            drain(&f),
            vec!["a/x: [Added a/x@1]", "b/x: [Added b/x@2]", "x: [Added x@3]"]
        );
    }

    #[test]
    fn dedup_two_deletes_keeps_older_when_it_is_not_a_tombstone() {
        let f = fifo(None, true);
        f.add(o("foo", 1));
        f.delete(o("foo", 2));
        f.delete(o("foo", 3));
        assert_eq!(drain(&f), vec!["foo: [Added foo@1, Deleted foo@2]"]);
        assert_eq!(f.stats().unwrap().dedups, 1);

        // A relist tombstone arriving after a watch Deleted is folded into the Deleted.
        let f = fifo(Some(&[o("foo", 1)]), true);
        f.delete(o("foo", 2));
        f.replace(vec![], "10");
        assert_eq!(drain(&f), vec!["foo: [Deleted foo@2]"]);
        assert_eq!(f.stats().unwrap().dedups, 1);
    }

    #[test]
    fn dedup_two_deletes_keeps_newer_when_older_is_a_tombstone() {
        let f = fifo(None, true);
        f.add(o("foo", 1));
        f.replace(vec![], "5");
        f.delete(o("foo", 6));
        assert_eq!(drain(&f), vec!["foo: [Added foo@1, Deleted foo@6]"]);
        assert_eq!(f.stats().unwrap().dedups, 1);

        // Two relists in a row: the second tombstone replaces the first.
        let f = fifo(None, true);
        f.add(o("foo", 1));
        f.replace(vec![], "5");
        f.replace(vec![], "6");
        assert_eq!(
            drain(&f),
            vec!["foo: [Added foo@1, Deleted tombstone(foo@1)]"]
        );
        assert_eq!(f.stats().unwrap().dedups, 1);
    }

    #[test]
    fn delete_of_unknown_object_is_ignored() {
        let f = fifo(None, true);
        f.delete(o("foo", 1));
        assert!(f.is_empty());
        assert!(f.try_pop().is_none());

        let f = fifo(Some(&[o("bar", 1)]), true);
        f.delete(o("foo", 1));
        assert!(f.is_empty());
        // Like client-go, even an ignored Delete marks the FIFO populated.
        assert!(f.has_synced());

        // Popped and no longer known (the consumer applied a delete): ignored too.
        let f = fifo(None, true);
        f.add(o("foo", 1));
        f.try_pop().unwrap();
        f.delete(o("foo", 2));
        assert!(f.is_empty());
    }

    #[test]
    fn delete_of_object_known_only_to_the_store_is_queued() {
        let f = fifo(Some(&[o("foo", 5)]), true);
        f.delete(o("foo", 6));
        assert_eq!(drain(&f), vec!["foo: [Deleted foo@6]"]);
    }

    #[test]
    fn replace_emits_replaced() {
        let f = fifo(Some(&[o("foo", 5)]), true);
        f.replace(vec![o("foo", 5), o("bar", 1)], "7");
        assert_eq!(
            drain(&f),
            vec!["foo: [Replaced foo@5]", "bar: [Replaced bar@1]"]
        );
    }

    #[test]
    fn replace_emits_sync_in_legacy_mode() {
        let f = fifo(Some(&[o("foo", 5)]), false);
        f.replace(vec![o("foo", 5), o("bar", 1)], "7");
        assert_eq!(drain(&f), vec!["foo: [Sync foo@5]", "bar: [Sync bar@1]"]);
    }

    /// Ports client-go's TestDeltaFIFO_ReplaceMakesDeletions (legacy Sync mode).
    #[test]
    fn replace_tombstones_for_known_objects_and_queued_items() {
        // Each case: what is queued before a relist of foo alone, and what drains after.
        let after_relist = |queue: &dyn Fn(&DeltaFifo<&'static str>)| {
            let f = fifo(Some(&[o("foo", 5), o("bar", 6), o("baz", 7)]), false);
            queue(&f);
            f.replace(vec![o("foo", 5)], "0");
            drain(&f)
        };

        // A queued watch Deleted absorbs the relist tombstone; bar gets the store's state.
        assert_eq!(
            after_relist(&|f| f.delete(o("baz", 10))),
            vec![
                "baz: [Deleted baz@10]",
                "foo: [Sync foo@5]",
                "bar: [Deleted tombstone(bar@6)]",
            ]
        );

        // A queued key's tombstone carries its newest queued object, not the store's.
        assert_eq!(
            after_relist(&|f| f.add(o("baz", 10))),
            vec![
                "baz: [Added baz@10, Deleted tombstone(baz@10)]",
                "foo: [Sync foo@5]",
                "bar: [Deleted tombstone(bar@6)]",
            ]
        );

        assert_eq!(
            after_relist(&|f| {
                f.delete(o("bar", 6));
                f.add(o("bar", 100));
            }),
            vec![
                "bar: [Deleted bar@6, Added bar@100, Deleted tombstone(bar@100)]",
                "foo: [Sync foo@5]",
                "baz: [Deleted tombstone(baz@7)]",
            ]
        );

        // A key queued by a first relist and missing from the second.
        assert_eq!(
            after_relist(&|f| f.replace(vec![o("bar", 100), o("foo", 5)], "0")),
            vec![
                "bar: [Sync bar@100, Deleted tombstone(bar@100)]",
                "foo: [Sync foo@5, Sync foo@5]",
                "baz: [Deleted tombstone(baz@7)]",
            ]
        );

        // Without a known store only queued keys can be detected as deleted.
        let f = fifo(None, false);
        f.add(o("baz", 10));
        f.replace(vec![o("foo", 5)], "0");
        assert_eq!(
            drain(&f),
            vec![
                "baz: [Added baz@10, Deleted tombstone(baz@10)]",
                "foo: [Sync foo@5]",
            ]
        );
    }

    #[test]
    fn replace_tombstones_queued_key_unknown_to_the_store() {
        // qux is queued but not (yet) in the store: its tombstone has the queued object;
        // queued tombstones come first (queue order), then store ones (key order).
        let f = fifo(Some(&[o("b", 1), o("a", 1)]), true);
        f.add(o("qux", 3));
        f.update(o("qux", 4));
        f.add(o("new", 1));
        f.replace(vec![o("new", 2)], "9");
        assert_eq!(
            drain(&f),
            vec![
                "qux: [Added qux@3, Updated qux@4, Deleted tombstone(qux@4)]",
                "new: [Added new@1, Replaced new@2]",
                "a: [Deleted tombstone(a@1)]",
                "b: [Deleted tombstone(b@1)]",
            ]
        );
    }

    #[test]
    fn replace_tombstone_after_tombstone_unwraps_the_last_known_object() {
        // The newest delta is a tombstone: the new tombstone carries its inner object,
        // not a tombstone of a tombstone; a missing object stays missing.
        let f = fifo(None, true);
        f.add(o("foo", 1));
        f.replace(vec![], "2");
        f.replace(vec![], "3");
        match f.try_pop() {
            Some(Popped::Deltas { deltas, .. }) => {
                assert_eq!(deltas.len(), 2);
                let DeltaObject::Tombstone(t) = &deltas[1].object else {
                    panic!("expected a tombstone");
                };
                assert_eq!(t.key, "foo");
                assert_eq!(t.obj.as_ref().unwrap().resource_version(), "1");
            }
            other => panic!("unexpected {:?}", other.map(|p| fmt_popped(&p))),
        }
    }

    #[test]
    fn replace_with_empty_list() {
        // Nothing listed, nothing known: synced at once (client-go's HasSynced table).
        let f = fifo(None, true);
        f.replace(vec![], "1");
        assert!(f.has_synced());
        assert!(f.is_empty());

        // Everything known vanished: one tombstone each, all part of the initial list.
        let f = fifo(Some(&[o("a", 1), o("b", 2)]), true);
        f.replace(vec![], "3");
        assert!(!f.has_synced());
        assert_eq!(pop_key(&f), ("a: [Deleted tombstone(a@1)]".into(), true));
        assert!(!f.has_synced());
        assert_eq!(pop_key(&f), ("b: [Deleted tombstone(b@2)]".into(), true));
        assert!(f.has_synced());
    }

    #[test]
    fn resync_skips_queued_keys_and_sends_the_known_version() {
        // client-go's TestDeltaFIFO_UpdateResyncRace, plus an idle key.
        let f = fifo(Some(&[o("foo", 5), o("bar", 6)]), true);
        f.update(o("foo", 6));
        f.resync();
        assert_eq!(drain(&f), vec!["foo: [Updated foo@6]", "bar: [Sync bar@6]"]);

        // Resync twice without popping: the second finds everything queued.
        let f = fifo(Some(&[o("foo", 5)]), true);
        f.resync();
        f.resync();
        assert_eq!(drain(&f), vec!["foo: [Sync foo@5]"]);

        // Resync does not mark the FIFO populated, and does nothing without a store.
        assert!(!f.has_synced());
        let f = fifo(None, true);
        f.resync();
        assert!(f.is_empty());
    }

    #[test]
    fn has_synced_table() {
        // client-go's TestDeltaFIFO_HasSynced.
        type Step = fn(&DeltaFifo<&'static str>);
        let pop: Step = |f| {
            f.try_pop().unwrap();
        };
        let cases: Vec<(Vec<Step>, bool)> = vec![
            (vec![], false),
            (vec![|f| f.add(o("a", 1))], true),
            (vec![|f| f.update(o("a", 1))], true),
            (vec![|f| f.replace(vec![], "0")], true),
            (vec![|f| f.replace(vec![o("a", 1), o("b", 2)], "0")], false),
            (
                vec![|f| f.replace(vec![o("a", 1), o("b", 2)], "0"), pop],
                false,
            ),
            (
                vec![|f| f.replace(vec![o("a", 1), o("b", 2)], "0"), pop, pop],
                true,
            ),
            // Duplicate keys in a list count once.
            (
                vec![|f| f.replace(vec![o("a", 1), o("a", 2)], "0"), pop],
                true,
            ),
        ];
        for (i, (steps, want)) in cases.into_iter().enumerate() {
            let f = fifo(None, true);
            for s in steps {
                s(&f);
            }
            assert_eq!(f.has_synced(), want, "case {i}");
        }
    }

    #[test]
    fn initial_population_and_is_in_initial_list() {
        // client-go's TestDeltaFIFO_HasSyncedCorrectOnDeletion, then what follows.
        let f = fifo(Some(&[o("foo", 5), o("bar", 6), o("baz", 7)]), false);
        f.replace(vec![o("foo", 5)], "0");
        // Arrives during the initial list: queued behind it, so popped after sync.
        f.add(o("late", 1));
        let expected = [
            "foo: [Sync foo@5]",
            "bar: [Deleted tombstone(bar@6)]",
            "baz: [Deleted tombstone(baz@7)]",
        ];
        for e in expected {
            assert!(!f.has_synced());
            assert_eq!(pop_key(&f), (e.to_string(), true));
        }
        assert!(f.has_synced());
        assert_eq!(pop_key(&f), ("late: [Added late@1]".into(), false));

        // A later relist does not reopen the initial population.
        f.replace(vec![o("x", 1)], "1");
        assert!(f.has_synced());
        assert!(!pop_key(&f).1);
    }

    #[test]
    fn add_before_first_replace_makes_it_not_initial() {
        let f = fifo(None, true);
        f.add(o("a", 1));
        assert!(f.has_synced());
        f.replace(vec![o("b", 1)], "1");
        assert!(f.has_synced());
        assert_eq!(
            pop_key(&f),
            ("a: [Added a@1, Deleted tombstone(a@1)]".into(), false)
        );
        assert_eq!(pop_key(&f), ("b: [Replaced b@1]".into(), false));
    }

    #[test]
    fn coalesced_updates_to_an_initial_key_count_once() {
        let f = fifo(None, true);
        f.replace(vec![o("a", 1), o("b", 1)], "1");
        f.update(o("a", 2));
        assert_eq!(pop_key(&f), ("a: [Replaced a@1, Updated a@2]".into(), true));
        assert!(!f.has_synced());
        assert_eq!(pop_key(&f), ("b: [Replaced b@1]".into(), true));
        assert!(f.has_synced());
    }

    #[test]
    fn pop_order_is_fifo_and_a_requeued_key_goes_to_the_back() {
        // client-go's TestDeltaFIFO_detectLineJumpers.
        let f = fifo(None, true);
        f.add(o("foo", 10));
        f.add(o("bar", 1));
        f.add(o("foo", 11));
        f.add(o("foo", 13));
        f.add(o("zab", 30));
        assert_eq!(
            pop_key(&f).0,
            "foo: [Added foo@10, Added foo@11, Added foo@13]"
        );
        f.add(o("foo", 14));
        assert_eq!(
            drain(&f),
            vec![
                "bar: [Added bar@1]",
                "zab: [Added zab@30]",
                "foo: [Added foo@14]"
            ]
        );
    }

    #[test]
    fn notices_are_popped_in_push_order_relative_to_keys() {
        let f = fifo(None, true);
        f.add(o("a", 1));
        f.push_notice("list started");
        f.push_notice("list done");
        // a is already queued (ahead of the notices); b is new, so behind them.
        f.replace(vec![o("a", 2), o("b", 1)], "5");
        f.push_notice("watch started");
        // Still queued ahead of every notice: the update coalesces there. A new key
        // goes behind the last notice.
        f.update(o("a", 3));
        f.add(o("c", 1));
        assert_eq!(f.len(), 3, "notices are not counted");
        // a holds deltas queued after all three notices: they are popped before it, so
        // that no delta is handed out ahead of a notice pushed before it.
        assert_eq!(
            drain(&f),
            vec![
                "notice: list started",
                "notice: list done",
                "notice: watch started",
                "a: [Added a@1, Replaced a@2, Updated a@3]",
                "b: [Replaced b@1]",
                "c: [Added c@1]",
            ]
        );
        // A key whose deltas all predate the notices keeps its place.
        f.add(o("d", 1));
        f.push_notice("later");
        f.add(o("e", 1));
        assert_eq!(
            drain(&f),
            vec!["d: [Added d@1]", "notice: later", "e: [Added e@1]"]
        );
        // Once popped, a key re-queued later goes behind notices pushed before it.
        f.push_notice("relist");
        f.update(o("a", 4));
        assert_eq!(drain(&f), vec!["notice: relist", "a: [Updated a@4]"]);
    }

    #[test]
    fn notices_do_not_count_for_has_synced() {
        let f = fifo(None, true);
        f.push_notice("before");
        f.replace(vec![o("a", 1)], "1");
        f.push_notice("after");
        assert!(!f.has_synced());
        assert!(matches!(f.try_pop(), Some(Popped::Notice("before"))));
        assert!(!f.has_synced());
        assert_eq!(pop_key(&f), ("a: [Replaced a@1]".into(), true));
        assert!(f.has_synced());
        assert!(matches!(f.try_pop(), Some(Popped::Notice("after"))));
        // A notice alone does not populate the FIFO.
        let f = fifo(None, true);
        f.push_notice("x");
        f.try_pop();
        assert!(!f.has_synced());
    }

    #[test]
    fn stats_track_depth_dedups_and_coalescing() {
        let f = fifo(None, true);
        for i in 0..5 {
            f.add(o(&format!("k{i}"), 1));
        }
        f.try_pop();
        f.try_pop();
        f.add(o("k4", 2));
        f.push_notice("n");
        f.delete(o("k4", 3));
        f.delete(o("k4", 4));
        assert_eq!(
            f.stats().unwrap(),
            FifoStats {
                depth: 3,
                max_depth: 5,
                dedups: 1,
                coalesced: 3,
                real: None,
            }
        );
    }

    #[tokio::test]
    async fn pop_waits_until_something_is_queued() {
        let f = Arc::new(fifo(None, true));
        let task = tokio::spawn({
            let f = Arc::clone(&f);
            async move { f.pop().await.map(|p| fmt_popped(&p)) }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!task.is_finished());
        f.add(o("a", 1));
        let got = tokio::time::timeout(Duration::from_secs(5), task)
            .await
            .expect("pop woke up")
            .unwrap();
        assert_eq!(got.as_deref(), Some("a: [Added a@1]"));
    }

    #[tokio::test]
    async fn pop_hands_out_what_is_left_after_close_then_none() {
        let f = fifo(None, true);
        f.add(o("a", 1));
        f.push_notice("n");
        f.close();
        assert!(f.is_closed());
        assert_eq!(
            f.pop().await.map(|p| fmt_popped(&p)).as_deref(),
            Some("a: [Added a@1]")
        );
        assert_eq!(
            f.pop().await.map(|p| fmt_popped(&p)).as_deref(),
            Some("notice: n")
        );
        assert!(f.pop().await.is_none());
        assert!(f.pop().await.is_none());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn close_wakes_every_blocked_pop() {
        let f = Arc::new(fifo(None, true));
        let tasks: Vec<_> = (0..10)
            .map(|_| {
                let f = Arc::clone(&f);
                tokio::spawn(async move { f.pop().await.is_none() })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(50)).await;
        f.close();
        for t in tasks {
            let closed = tokio::time::timeout(Duration::from_secs(5), t)
                .await
                .expect("pop returned after close")
                .unwrap();
            assert!(closed);
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_producer_and_consumer_lose_nothing() {
        let f = Arc::new(fifo(None, true));
        let consumer = tokio::spawn({
            let f = Arc::clone(&f);
            async move {
                let mut seen = Vec::new();
                while let Some(p) = f.pop().await {
                    if let Popped::Deltas { deltas, .. } = p {
                        seen.extend(deltas.iter().map(fmt_delta));
                    }
                }
                seen
            }
        });
        let producer = std::thread::spawn({
            let f = Arc::clone(&f);
            move || {
                for i in 0..2000u64 {
                    f.add(o(&format!("k{}", i % 7), i));
                }
                f.close();
            }
        });
        producer.join().unwrap();
        let seen = tokio::time::timeout(Duration::from_secs(10), consumer)
            .await
            .unwrap()
            .unwrap();
        let expected: Vec<String> = (0..2000u64)
            .map(|i| format!("Added k{}@{i}", i % 7))
            .collect();
        let mut got = seen.clone();
        got.sort();
        let mut want = expected.clone();
        want.sort();
        assert_eq!(got, want);
    }

    /// A pop that finds the queue drained gives back the capacity a list's keys grew.
    #[tokio::test]
    async fn a_drained_queue_gives_back_what_a_list_grew() {
        let f = fifo(None, true);
        let names: Vec<String> = (0..1000).map(|i| format!("p{i}")).collect();
        f.replace(names.iter().map(|n| o(n, 1)).collect(), "2");
        assert!(f.lock().items.capacity() >= 1000);
        assert_eq!(drain(&f).len(), 1000);
        f.close();
        assert!(f.pop_with(|_| ()).await.is_none());
        let inner = f.lock();
        let spare = 2 * crate::cache::queue::SPARE_ENTRIES;
        assert!(
            inner.items.capacity() <= spare,
            "{}",
            inner.items.capacity()
        );
        assert!(
            inner.queue.capacity() <= spare,
            "{}",
            inner.queue.capacity()
        );
    }

    #[tokio::test]
    async fn pop_with_applies_under_the_lock() {
        let store = Arc::new(Store::new());
        let f: DeltaFifo<&'static str> = DeltaFifo::new(Some(Arc::clone(&store)), true);
        f.add(o("a", 1));
        let key = f
            .pop_with(|p| match p {
                Popped::Deltas { key, deltas, .. } => {
                    store.apply(&deltas);
                    key
                }
                Popped::Notice(n) => n.to_string(),
                other => unreachable!("a DeltaFIFO pops keys: {other:?}"),
            })
            .await;
        assert_eq!(key.as_deref(), Some("a"));
        assert_eq!(store.get("a").unwrap().resource_version(), "1");
        // Now known: a relist without it yields a tombstone.
        f.replace(vec![], "2");
        assert_eq!(drain(&f), vec!["a: [Deleted tombstone(a@1)]"]);
    }

    /// Checks the structural invariants under the lock.
    fn check_invariants<N: Send + 'static>(f: &DeltaFifo<N>) {
        let inner = f.lock();
        let mut queued = HashSet::new();
        for e in &inner.queue {
            if let Entry::Key(k) = e {
                assert!(queued.insert(k.clone()), "key {k} queued twice");
            }
        }
        let items: HashSet<String> = inner.items.keys().cloned().collect();
        assert_eq!(queued, items, "queue keys != items keys");
        for (k, ds) in &inner.items {
            assert!(!ds.is_empty(), "empty deltas for {k}");
            for d in ds {
                let dk = match &d.object {
                    DeltaObject::Object(obj) => obj.key(),
                    DeltaObject::Tombstone(t) => t.key.clone(),
                };
                assert_eq!(&dk, k);
            }
            for w in ds.windows(2) {
                assert!(
                    !(w[0].kind == DeltaType::Deleted && w[1].kind == DeltaType::Deleted),
                    "undeduped deletes for {k}"
                );
            }
        }
        assert!(inner.initial_population_count <= inner.items.len() || !inner.populated);
    }

    #[test]
    fn randomized_invariants_and_convergence() {
        for seed in 0..5u64 {
            randomized_run(seed, 10_000);
        }
    }

    /// Random producer operations on a few keys, with pops applied to the known store.
    /// The model is what the last operation on each key says: after draining, the store
    /// must hold exactly that.
    fn randomized_run(seed: u64, ops: usize) {
        let mut rng = SmallRng::seed_from_u64(seed);
        let store = Arc::new(Store::new());
        let f: DeltaFifo<u64> = DeltaFifo::new(Some(Arc::clone(&store)), rng.random());
        let names = ["a", "b", "c", "d", "e", "f"];
        let nss = ["x", "y"];
        let mut model: BTreeMap<String, String> = BTreeMap::new();
        let mut rv = 0u64;
        let mut notices_pushed = 0u64;
        let mut notices_seen = 0u64;
        let mut was_synced = false;

        let pop_apply = |notices_seen: &mut u64| -> bool {
            let synced_before = f.has_synced();
            match f.try_pop() {
                Some(Popped::Deltas {
                    key,
                    deltas,
                    is_in_initial_list,
                }) => {
                    assert_eq!(is_in_initial_list, !synced_before);
                    assert!(!deltas.is_empty());
                    store.apply(&deltas);
                    assert!(!key.is_empty());
                    true
                }
                Some(Popped::Notice(n)) => {
                    // Notices come out in push order.
                    assert_eq!(n, *notices_seen);
                    *notices_seen += 1;
                    true
                }
                Some(other) => unreachable!("a DeltaFIFO pops keys: {other:?}"),
                None => false,
            }
        };

        for _ in 0..ops {
            rv += 1;
            let obj = on(
                nss[rng.random_range(0..nss.len())],
                names[rng.random_range(0..names.len())],
                rv,
            );
            match rng.random_range(0..100) {
                0..=19 => {
                    model.insert(obj.key(), rv.to_string());
                    f.add(obj);
                }
                20..=39 => {
                    model.insert(obj.key(), rv.to_string());
                    f.update(obj);
                }
                40..=54 => {
                    model.remove(&obj.key());
                    f.delete(obj);
                }
                55..=59 => {
                    let mut list = Vec::new();
                    model.clear();
                    for ns in nss {
                        for n in names {
                            if rng.random_bool(0.5) {
                                let item = on(ns, n, rv);
                                model.insert(item.key(), rv.to_string());
                                list.push(item);
                            }
                        }
                    }
                    f.replace(list, &rv.to_string());
                }
                60..=62 => f.resync(),
                63..=65 => {
                    f.push_notice(notices_pushed);
                    notices_pushed += 1;
                }
                _ => {
                    pop_apply(&mut notices_seen);
                }
            }
            check_invariants(&f);
            let synced = f.has_synced();
            assert!(!was_synced || synced, "has_synced went back to false");
            was_synced = synced;
        }

        while pop_apply(&mut notices_seen) {}
        check_invariants(&f);
        assert!(f.is_empty());
        assert_eq!(notices_seen, notices_pushed);
        assert!(f.has_synced() || !f.lock().populated);
        let got: BTreeMap<String, String> = store
            .list()
            .iter()
            .map(|o| (o.key(), o.resource_version().to_owned()))
            .collect();
        assert_eq!(got, model, "seed {seed}");
        let stats = f.stats().unwrap();
        assert!(stats.max_depth <= nss.len() * names.len());
        // The run must have exercised coalescing and the delete dedup.
        assert!(stats.coalesced > 0 && stats.dedups > 0, "{stats:?}");
    }
}
