//! client-go's Reflector: LIST (paged), then WATCH from the list's resourceVersion,
//! feeding a [`ReflectorStore`] (a queue: DeltaFIFO or RealFIFO) and announcing every step as a
//! [`ReflectorEvent`] so that a user can see when and why each list, relist and watch
//! restart happened.
//!
//! Its files, each importing only those listed after it: `machine.rs` (the state
//! machine), `pager.rs` and `watch_list.rs` (a paged list, a streaming list), `event.rs`
//! (what it announces), `progress.rs` (a list's progress), `backoff.rs`.
//!
//! The rules (see docs/client-go-fidelity.md, "Reflector", with their client-go lines, and
//! client-go `tools/cache/reflector.go`, `tools/pager/pager.go`):
//! - list RV: "0" first, then the last synced RV, "" after a 410 / too-large-RV list error;
//! - paging off (limit 0) for a specific RV other than "0", unless a page size was given
//!   or an RV="0" list once came back paginated; an expired continue token on page ≥ 2
//!   falls back to one full list at the requested RV;
//! - watch from the last synced RV; every event (bookmarks too) advances it;
//! - a clean close re-watches without relisting; a watch that lasted < 1 s with no event
//!   is an error; 429 and connection refused on opening back off and re-watch; any other
//!   error (410, ERROR event, undecodable line) ends ListAndWatch: back off, then relist;
//! - every list page and watch goes through the request layer ([`crate::cache::retry`]), which
//!   retries answers with `Retry-After` by itself: the reflector sees only what it gave up
//!   on, and announces each retry as [`ReflectorEvent::Retry`];
//! - the periodic resync runs only while watching: from the end of a list until the watch
//!   fails and a relist is needed (client-go `watchWithResync`), its period starting anew;
//! - until the first list has been replaced into the store (the first sync), an error that
//!   will not fix itself ([`SourceError::will_not_fix_itself`]) ends [`Reflector::run`].
//!
//! The reflector is a state machine (as kube-runtime's watcher is): `State` says what
//! comes next, `Reflector::step` does it and names the next state, and every error
//! goes through one classifier, `Reflector::after_error`, whose table is the list above.
//!
//! A reflector on an in-memory source, into client-go 0.32's queue: it announces its
//! list, replaces the queue with it, then watches and queues each change.
//!
//! ```
//! use std::sync::Arc;
//! use kwatch_core::cache::delta_fifo::DeltaFifo;
//! use kwatch_core::cache::fake::FakeSource;
//! use kwatch_core::cache::queue::{Popped, Queue};
//! use kwatch_core::cache::reflector::{Reflector, ReflectorConfig};
//! use kwatch_core::cache::store::Store;
//! use kwatch_core::informer::record::Notice;
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let source = FakeSource::new();
//! source.apply(json!({"kind": "Pod", "metadata": {"name": "a", "namespace": "ns"}}))?;
//! let store = Arc::new(Store::new());
//! let queue = Arc::new(DeltaFifo::<Notice>::new(Some(store.clone()), true));
//! let reflector = Reflector::new(source.clone(), queue.clone(), ReflectorConfig::default());
//! let task = tokio::spawn(reflector.run());
//!
//! // What the queue hands out, as `Type key` for deltas and the type of the reflector's
//! // events, until `n` deltas came.
//! let mut seen = Vec::new();
//! let mut deltas = 0;
//! let mut next = async |n| {
//!     while deltas < n {
//!         match queue.pop().await {
//!             Some(Popped::Deltas { key, deltas: d, .. }) => {
//!                 store.apply(&d);
//!                 deltas += 1;
//!                 seen.push(format!("{} {key}", d[0].kind));
//!             }
//!             Some(Popped::Notice(Notice::Reflector(e))) => {
//!                 let record = serde_json::to_value(&e).unwrap();
//!                 seen.push(record["type"].as_str().unwrap().to_owned());
//!             }
//!             other => panic!("{other:?}"),
//!         }
//!     }
//! };
//! next(1).await;
//! source.apply(json!({"kind": "Pod", "metadata": {"name": "b", "namespace": "ns"}}))?;
//! next(2).await;
//! assert_eq!(seen, ["List", "Listed", "Replaced ns/a", "Watch", "Added ns/b"]);
//! assert!(queue.has_synced());
//! task.abort();
//! # Ok(())
//! # }
//! ```

pub mod backoff;
mod event;
mod machine;
pub(crate) mod pager;
mod progress;
#[cfg(test)]
mod scripted;
mod watch_list;

pub use event::{KeySample, ReflectorEvent};
pub use machine::{
    Clocks, Reflector, ReflectorConfig, ReflectorStore, StallAfter, WatchListMode, BOOKMARK_FLOOR,
    DEFAULT_PAGE_SIZE, END_BOOKMARK_WAIT, MIN_WATCH_TIMEOUT_SECS, SHORT_CLOSES, SHORT_WATCH,
    STALL_AUTO_INTERVALS,
};
pub use progress::ListProgress;
