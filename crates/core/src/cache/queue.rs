//! The queue between a reflector and its informer loop: client-go's `Queue` interface
//! (`tools/cache/fifo.go`), which both of client-go's queues implement —
//! [`DeltaFifo`](crate::cache::delta_fifo::DeltaFifo) (deltas of a key coalesce until popped) and
//! [`RealFifo`](crate::cache::real_fifo::RealFifo) (every notification, in order) — and what
//! they share: the entries they hand out and the wait for the next one.
//!
//! A RealFIFO may pop in batches (client-go ≥ 0.35's `PopBatch`) and queue a whole relist
//! or resync as one atomic entry (client-go ≥ 0.36's AtomicFIFO); which release does what
//! is [`crate::cache::release`]'s.
//!
//! Besides deltas, both carry out-of-band notices `N` (the reflector's own events) in the
//! same order, so that a relist's announcement is popped before that relist's deltas.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::hash::{BuildHasher, Hash};
use std::pin::pin;
use std::sync::Mutex;

use tokio::sync::Notify;

use crate::cache::delta::{AtomicDelta, Delta, Deltas};
use crate::cache::object::ObjectRef;

/// Which of client-go's two queues an informer uses (`--fifo`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FifoKind {
    /// [`DeltaFifo`](crate::cache::delta_fifo::DeltaFifo): a key's deltas coalesce until
    /// popped.
    Delta,
    /// [`RealFifo`](crate::cache::real_fifo::RealFifo): every notification, in order.
    Real,
}

impl FifoKind {
    /// The kinds' names, as `--fifo` takes them.
    pub const NAMES: [&'static str; 2] = ["delta", "real"];

    pub fn as_str(self) -> &'static str {
        match self {
            FifoKind::Delta => "delta",
            FifoKind::Real => "real",
        }
    }
}

impl std::str::FromStr for FifoKind {
    type Err = crate::text::UnknownWord;

    fn from_str(s: &str) -> Result<FifoKind, Self::Err> {
        match s {
            "delta" => Ok(FifoKind::Delta),
            "real" => Ok(FifoKind::Real),
            _ => Err(crate::text::UnknownWord {
                word: s.to_owned(),
                expected: &FifoKind::NAMES,
            }),
        }
    }
}

impl std::fmt::Display for FifoKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One thing a queue hands out: a key's deltas, or a notice.
#[derive(Debug)]
pub enum Popped<N> {
    /// Everything queued for `key` since it was last popped, oldest first, never empty.
    /// `is_in_initial_list`: popped before the FIFO had synced (client-go's
    /// `isInInitialList`).
    Deltas {
        key: String,
        deltas: Deltas,
        is_in_initial_list: bool,
    },
    /// An out-of-band notice (the reflector's List/Watch/… events), delivered in the
    /// order it was pushed relative to the keys queued after it.
    Notice(N),
    /// A batch pop (client-go's `PopBatch`): deltas of distinct keys, oldest first, with the
    /// notices queued among them in their places. It begins and ends with a delta.
    Batch {
        entries: Vec<Batched<N>>,
        is_in_initial_list: bool,
    },
    /// An atomic relist or resync, popped alone.
    Atomic {
        delta: AtomicDelta,
        is_in_initial_list: bool,
    },
}

/// An entry of a batch pop.
#[derive(Debug)]
pub enum Batched<N> {
    Delta { key: String, delta: Delta },
    Notice(N),
}

/// Counters for diagnostics (they only ever grow), and the depth when read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FifoStats {
    /// Keys queued when the counters were read (a RealFIFO: deltas), as `max_depth` counts
    /// them; not a counter.
    pub depth: usize,
    /// Largest number of queued keys seen at once (notices not counted).
    pub max_depth: usize,
    /// Deleted-delta dedups performed (two trailing `Deleted` deltas folded into one).
    pub dedups: u64,
    /// Deltas that landed on an already-queued key (including those then deduped).
    pub coalesced: u64,
    /// A RealFIFO's counters (it coalesces and dedups nothing); `None` for a DeltaFIFO.
    pub real: Option<RealFifoCounts>,
}

/// What a RealFIFO can count: every delta is queued and popped once.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RealFifoCounts {
    /// Entries queued: deltas, and a relist's or resync's one atomic entry (0.36).
    pub queued: u64,
    /// Entries popped.
    pub popped: u64,
    /// Pops that took a batch (client-go ≥ 0.35's `PopBatch`); 0 without batch pops.
    pub batches: u64,
}

/// client-go's `Queue`: the reflector's side (add … resync, and notices) and the informer
/// loop's (pop). Every method may be called from any task.
pub trait Queue: Send + Sync + 'static {
    /// What the queue carries among the deltas, in order with them (the informer's
    /// `Notice`: the reflector's events, and what is observed in order with the deltas).
    type Notice: Send + 'static;
    /// A watch ADDED event.
    fn add(&self, obj: ObjectRef);
    /// A watch MODIFIED event.
    fn update(&self, obj: ObjectRef);
    /// A watch DELETED event.
    fn delete(&self, obj: ObjectRef);
    /// A (re)list result: `Replaced` (or `Sync`) for each object, tombstones for the
    /// known objects it lacks.
    fn replace(&self, list: Vec<ObjectRef>, resource_version: &str);
    /// Re-queues the known objects as `Sync`.
    fn resync(&self);
    /// Queues a notice behind everything queued so far.
    fn push_notice(&self, n: Self::Notice);
    /// Queues the notice of a watch bookmark: an atomic RealFIFO queues client-go's
    /// `Bookmark` delta there, which no batch pop crosses; other queues just queue `n`.
    fn bookmark(&self, n: Self::Notice) {
        self.push_notice(n);
    }
    /// Waits for the next entry and runs `process` on it while the queue is still locked
    /// (client-go's `Pop(process)`); `None` once closed and empty. `process` must not call
    /// back into the queue.
    fn pop_with<R: Send>(
        &self,
        process: impl FnOnce(Popped<Self::Notice>) -> R + Send,
    ) -> impl Future<Output = Option<R>> + Send;
    /// client-go's HasSynced: the first Replace's keys have all been popped.
    fn has_synced(&self) -> bool;
    /// No delta queued (notices may still be).
    fn is_empty(&self) -> bool;
    /// Pops hand out what is still queued, then `None`.
    fn close(&self);
    /// Counters, for a queue that keeps them.
    fn stats(&self) -> Option<FifoStats> {
        None
    }
    /// Pops hand out [`Popped::Batch`]es (client-go's `PopBatch`).
    fn pops_in_batches(&self) -> bool {
        false
    }
}

/// A queue's locked state, as [`pop_with`] needs it.
pub(crate) trait PopState<N> {
    /// The next entry, if any.
    fn try_pop(&mut self) -> Option<Popped<N>>;
    fn is_closed(&self) -> bool;
    /// Called when a pop finds nothing to hand out: gives back what the queue's maps and
    /// rings kept from a burst (a list's thousands of keys), beyond [`SPARE_ENTRIES`].
    /// A drained queue then holds no more than that, however large the list before it:
    /// in a process watching many clusters, each informer's queue would otherwise keep
    /// the capacity of its largest list for as long as it runs. A queue that empties
    /// after every event does not reallocate, as its capacity stays under the bound.
    fn release_spare(&mut self);
}

/// The capacity, in entries, that a drained queue keeps ([`PopState::release_spare`]).
pub(crate) const SPARE_ENTRIES: usize = 64;

/// Shrinks `v`'s capacity to [`SPARE_ENTRIES`] if it is larger and `v` is empty.
pub(crate) fn release_deque<T>(v: &mut VecDeque<T>) {
    if v.is_empty() && v.capacity() > SPARE_ENTRIES {
        v.shrink_to(SPARE_ENTRIES);
    }
}

/// As [`release_deque`], for a map.
pub(crate) fn release_map<K: Eq + Hash, V, S: BuildHasher>(m: &mut HashMap<K, V, S>) {
    if m.is_empty() && m.capacity() > SPARE_ENTRIES {
        m.shrink_to(SPARE_ENTRIES);
    }
}

/// The wait of every queue's `pop_with`: until `state` hands out an entry, which `process`
/// then handles under the lock. `notify` must be woken (all waiters) after every change
/// that may let a pop proceed. Cancel-safe: an entry leaves `state` only when returned.
pub(crate) async fn pop_with<S: PopState<N>, N, R>(
    state: &Mutex<S>,
    notify: &Notify,
    process: impl FnOnce(Popped<N>) -> R,
) -> Option<R> {
    loop {
        // Registered before checking the queue, so a push between the check and the
        // await still wakes this waiter.
        let mut notified = pin!(notify.notified());
        notified.as_mut().enable();
        {
            let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(p) = s.try_pop() {
                return Some(process(p));
            }
            s.release_spare();
            if s.is_closed() {
                return None;
            }
        }
        notified.await;
    }
}
