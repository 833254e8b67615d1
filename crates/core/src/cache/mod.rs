//! client-go's `tools/cache`, without I/O: the objects and deltas it moves, the
//! [`ListerWatcher`](listwatch::ListerWatcher) contract a source fulfils, the reflector
//! that lists and watches through it, the queues between the reflector and the informer
//! loop (DeltaFIFO, RealFIFO), the informer's store, the handler calls a shared informer
//! makes, client-go's releases, the `--check-consistency` detector, and an in-memory
//! source ([`fake`]) to run them on without a cluster.
//!
//! Imports only the foundation ([`crate::scan`], [`crate::text`], [`crate::units`]): the
//! client implements [`ListerWatcher`](listwatch::ListerWatcher) from above, the informer
//! and the application wire the pieces together.

pub mod consistency;
pub mod cost;
pub mod delta;
pub mod delta_fifo;
pub mod fake;
pub mod fields;
pub mod handlers;
pub mod listwatch;
pub mod object;
pub mod queue;
#[cfg(test)]
mod queue_cases;
pub mod real_fifo;
pub mod reflector;
pub mod release;
pub mod retry;
pub mod store;
#[cfg(any(test, feature = "test-hooks"))]
pub mod testutil;
pub mod transform;
