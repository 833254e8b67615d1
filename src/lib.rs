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
pub mod app;
pub mod cache;
pub mod client;
pub mod der;
pub mod output;
pub mod scan;
pub mod selector;
#[cfg(feature = "sim")]
pub mod sim;
pub mod text;
