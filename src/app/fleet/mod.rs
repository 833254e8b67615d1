//! Several contexts as a fleet: one cluster's trouble is that cluster's, and no cluster is
//! given up. A context whose start (discovery, `/version`) fails [`TRIES`] times is left
//! out for now with one `~` line and tried again in the background for the whole run,
//! with client-go's backoff, as client-go's reflector retries a server for ever; a context
//! whose informer ends for good stops and starts again so; either joins the running
//! output with one `~` line when it starts. A resource the server refuses is left out
//! alone; at `--timeout` a context that has not synced is named. With `--all-contexts` or
//! a pattern the kubeconfig is followed: contexts added join, removed ones stop, changed
//! ones restart ([`supervise`]). `--shard I/N` splits a fleet between N processes
//! (`src/app/shard.rs`). The run's exit code says whether every context synced
//! ([`crate::app::exit::Exit::NotAllSynced`]).
//!
//! With one context none of this applies: its failures end the run as they always did.

mod state;
mod supervise;

use std::time::Duration;

pub use state::{lock, Counter, Shared, State};
pub use supervise::{backoff, leave_out, supervise, try_start, Handle, Pending};

/// How many times a context's start is tried before it is left out for now (and tried on
/// in the background).
pub const TRIES: u32 = 3;

/// How long one try of a context's start may take: client-go's TLS handshake timeout
/// (`TLSHandshakeTimeout` in k8s.io/apimachinery/pkg/util/net/http.go), so that a server
/// that accepts connections and never answers holds the other contexts' start for
/// at most [`TRIES`] of these.
pub const TRY_TIMEOUT: Duration = Duration::from_secs(10);

/// How often the kubeconfig's files are looked at when the run follows them: a poll of
/// their size, time and inode, which sees a file replaced by a rename (as kubectl and the
/// cloud CLIs write it) as well as one written in place, on any file system.
pub const FOLLOW_EVERY: Duration = Duration::from_secs(1);
