//! kwatch: what a client-go informer sees, for any Kubernetes resource.
//!
//! ```text
//! cli → config → target (discovery) → reflector (list/watch via source) → fifo → output
//!                                                        ↑
//!                              sim: the simulated API server used by tests and --sim
//! ```
pub mod cli;
pub mod delta;
pub mod fifo;
pub mod object;
pub mod reflector;
pub mod source;
pub mod sim;
pub mod store;
