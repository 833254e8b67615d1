//! kwatch: what a client-go informer sees, for any Kubernetes resource.
//!
//! ```text
//! cli → config → target (discovery) → reflector (list/watch via source) → fifo → output
//!                                                        ↑
//!                              sim: the simulated API server used by tests and --sim
//! ```
//!
//! `sim` is compiled only with the cargo feature `sim` (on by default): a kwatch built with
//! `--no-default-features` has no server, and none of the crates only the server uses.
pub mod cli;
pub mod complete;
pub mod config;
pub mod connect;
pub mod consistency;
pub mod delta;
pub mod delta_fifo;
pub mod der;
pub mod discovery;
pub mod exit;
pub mod expand;
pub mod handlers;
pub mod informer;
pub mod listwatch;
pub mod object;
pub mod output;
pub mod queue;
#[cfg(test)]
mod queue_cases;
pub mod real_fifo;
pub mod reflector;
pub mod release;
pub mod replay;
pub mod retry;
pub mod scan;
pub mod selector;
#[cfg(feature = "sim")]
pub mod sim;
pub mod source;
pub mod stats;
pub mod store;
pub mod target;
pub mod text;
pub mod until;
pub mod watch;
