//! Command-line definitions (clap derive) and nothing else: parsing only, no I/O.
//!
//! Help text, the man page and shell completions are all generated from [`Cli`].

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::sim::Scenario;

/// Watch any Kubernetes resource the way a client-go informer sees it.
#[derive(Debug, Parser)]
#[command(name = "kwatch", version, about, long_about = None)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    #[command(flatten)]
    pub watch: WatchArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the built-in simulated Kubernetes API server until interrupted.
    Sim(SimArgs),
    /// Print a shell completion script to stdout.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

/// Options of a watch (the default command).
#[derive(Debug, Args)]
pub struct WatchArgs {
    /// Resource(s) to watch, comma-separated: plural, singular, short name, Kind or resource.group.
    #[arg(value_name = "RESOURCE", required = true)]
    pub resources: Option<String>,

    /// Watch only the object with this name.
    #[arg(value_name = "NAME")]
    pub name: Option<String>,

    /// Start the built-in simulated cluster in-process and watch it.
    #[arg(long)]
    pub sim: bool,
}

/// Options of `kwatch sim`.
#[derive(Debug, Args)]
pub struct SimArgs {
    /// Port to listen on (127.0.0.1); 0 picks a free port.
    #[arg(long, default_value_t = 0)]
    pub port: u16,

    /// Write a kubeconfig for the simulated cluster to this file (mode 0600).
    #[arg(long, value_name = "FILE")]
    pub write_kubeconfig: Option<PathBuf>,

    /// Number of pods to preload.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub objects: usize,

    /// Changes per second made by the churn generator (0 = none).
    #[arg(long, default_value_t = 2.0, value_name = "RATE")]
    pub churn: f64,

    /// Seed of the churn and fault generators.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// What the simulated cluster does on its own.
    #[arg(long, value_enum, default_value_t = Scenario::Steady)]
    pub scenario: Scenario,

    /// Serve plain HTTP instead of HTTPS (kubectl then sends no token).
    #[arg(long)]
    pub insecure_http: bool,

    /// Number of changes kept in the watch history before the oldest are compacted.
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    pub history: usize,

    /// Seconds between watch bookmarks (a real API server sends one about every minute).
    #[arg(long, default_value_t = 2.0, value_name = "SECONDS")]
    pub bookmark_interval: f64,
}
