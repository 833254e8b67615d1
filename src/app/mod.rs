//! The application: the command line ([`cli`]; [`usage`] reads it, [`help`], [`man`] and
//! [`complete`] describe and complete it) resolved into a configuration ([`config`], the
//! kubeconfig read by [`kubeconfig`], the simulator's options in [`sim`]), the watch that
//! wires a reflector, a queue and kwatch-core's informer loop per resource ([`watch`], with
//! the informer's state as the application has it in [`run`]), several contexts as a
//! fleet ([`fleet`]), the loading line ([`progress`]), the statistics line ([`stats`]) and
//! the metrics endpoint ([`metrics`]), which observe the informer loop, `--probe`
//! ([`probe`]), `--freshness` ([`freshness`]), `--live`'s terminal ([`live`]), `kwatch
//! replay` ([`replay`]), the `--timeline` page ([`timeline`]), `kwatch check` ([`check`])
//! and the exit codes ([`exit`]).
//!
//! The top: it may import every layer of kwatch-core and [`crate::sim`]; nothing below
//! imports it.

pub mod check;
pub mod cli;
pub mod complete;
pub mod config;
pub mod exit;
pub mod fleet;
pub mod freshness;
pub mod help;
pub mod informers;
pub mod kubeconfig;
pub mod live;
pub mod man;
pub mod metrics;
pub mod probe;
pub mod progress;
pub mod record;
pub mod replay;
pub mod run;
pub mod shard;
pub mod sim;
pub mod stats;
pub mod timeline;
pub mod usage;
pub mod watch;
pub mod watched;
