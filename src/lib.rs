//! kwatch, the application: the command line, its resolved configuration, and the wiring
//! of kwatch-core's informers to the terminal, files and the metrics endpoint.
//!
//! ```text
//! main.rs   the binary: command line → app → exit code
//! app/      cli, usage, help, man, complete, config, kubeconfig, watch, run, progress,
//!           stats, metrics, probe, freshness, fleet, live, replay, check, exit; sim.rs
//!           starts the simulator for `kwatch sim` and `--sim`
//! ```
//!
//! Below it, kwatch-core's layers (its crate docs draw them); beside it, kwatch-sim, the
//! simulated API server (cargo feature `sim`, on by default). The library's modules are
//! re-exported here under their own names.
pub mod app;

pub use kwatch_core::{
    cache, client, context, der, gofmt, hooks, informer, output, scan, selector, template, text,
    units,
};
#[cfg(feature = "sim")]
pub use kwatch_sim as sim;
