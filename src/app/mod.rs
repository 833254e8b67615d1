//! The application: the command line ([`cli`]; [`usage`] reads it, [`help`], [`man`] and
//! [`complete`] describe and complete it) resolved into a configuration ([`config`], the
//! simulator's in [`sim`]), the watch that wires a
//! reflector, a queue and an informer loop per resource ([`watch`], [`informer`]),
//! `--until` ([`until`]), `--probe` ([`probe`]), the statistics line ([`stats`]),
//! `kwatch replay` ([`replay`]) and the exit codes ([`exit`]).
//!
//! The top of the library: it may import every layer below and [`crate::sim`]; nothing
//! below imports it.

pub mod cli;
pub mod complete;
pub mod config;
pub mod conflict;
pub mod exit;
pub mod filter;
pub mod follow;
pub mod help;
pub mod informer;
pub mod kubeconfig;
pub mod live;
pub mod man;
pub mod metrics;
pub mod probe;
pub mod replay;
pub mod sim;
pub mod stats;
pub mod until;
pub mod usage;
pub mod watch;
