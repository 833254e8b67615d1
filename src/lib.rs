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
pub mod cache;
pub mod cli;
pub mod complete;
pub mod config;
pub mod connect;
pub mod der;
pub mod discovery;
pub mod exit;
pub mod expand;
pub mod informer;
pub mod output;
pub mod replay;
pub mod scan;
pub mod selector;
#[cfg(feature = "sim")]
pub mod sim;
pub mod source;
pub mod stats;
pub mod target;
pub mod text;
pub mod until;
pub mod watch;
