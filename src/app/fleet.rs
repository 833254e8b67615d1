//! Several contexts as a fleet: one cluster's trouble is that cluster's. A context whose
//! start (discovery, `/version`) fails is tried again with client-go's backoff, then left
//! out for good; a context whose informer fails before its first sync is left out
//! resource by resource; at `--timeout` a context that has not synced is named. The
//! other contexts sync and stream on, and the run's exit code says whether every context
//! synced ([`crate::app::exit::Exit::NotAllSynced`]).
//!
//! With one context none of this applies: its failures end the run as they always did.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::informer::consume::Observer;
use crate::output::{Body, Record};

/// How many times a context's start is tried before it is left out.
pub const TRIES: u32 = 3;

/// The wait before try `n + 1` (from 1): client-go's reflector backoff's first steps
/// (`NewExponentialBackoffManager(800ms, 30s, …, 2.0, …)` in tools/cache/reflector.go),
/// without the jitter.
pub fn backoff(n: u32) -> Duration {
    Duration::from_millis(800) * 2u32.saturating_pow(n.saturating_sub(1))
}

/// How long one try of a context's start may take: client-go's TLS handshake timeout
/// (`TLSHandshakeTimeout` in k8s.io/apimachinery/pkg/util/net/http.go), so that a server
/// that accepts connections and never answers holds the other contexts' start for
/// at most [`TRIES`] of these.
pub const TRY_TIMEOUT: Duration = Duration::from_secs(10);

/// What the run knows of each context: how many of its resources were started, how many
/// synced, and whether it was left out (wholly or in part).
#[derive(Debug, Default)]
pub struct State {
    contexts: BTreeMap<String, Context>,
}

#[derive(Debug, Default)]
struct Context {
    targets: usize,
    synced: usize,
    left_out: bool,
}

impl State {
    /// `context` watches `targets` resources.
    pub fn started(&mut self, context: &str, targets: usize) {
        self.contexts.entry(context.to_owned()).or_default().targets += targets;
    }

    /// `context` is left out, wholly (its start failed) or in part (a resource failed
    /// before its first sync).
    pub fn left_out(&mut self, context: &str) {
        self.contexts
            .entry(context.to_owned())
            .or_default()
            .left_out = true;
    }

    /// Some context was left out.
    pub fn any_left_out(&self) -> bool {
        self.contexts.values().any(|c| c.left_out)
    }

    /// The contexts still watched that have not synced every resource, in name order.
    pub fn unsynced(&self) -> Vec<&str> {
        self.contexts
            .iter()
            .filter(|(_, c)| !c.left_out && c.synced < c.targets)
            .map(|(n, _)| n.as_str())
            .collect()
    }

    /// Some context synced every one of its resources.
    pub fn any_synced(&self) -> bool {
        self.contexts
            .values()
            .any(|c| c.targets > 0 && c.synced >= c.targets)
    }
}

/// The fleet's state, shared by the run and its [`Counter`].
pub type Shared = Arc<Mutex<State>>;

/// Locks the state (a panic elsewhere leaves it readable).
pub fn lock(s: &Shared) -> std::sync::MutexGuard<'_, State> {
    s.lock().unwrap_or_else(|e| e.into_inner())
}

/// An observer of the informer loops counting each context's Synced records.
pub struct Counter(pub Shared);

impl Observer for Counter {
    fn record(&mut self, rec: &Record<'_>, _shown: bool, _targets: usize) {
        if let (Body::Synced, Some(c)) = (&rec.body, rec.context) {
            if let Some(ctx) = lock(&self.0).contexts.get_mut(c) {
                ctx.synced += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_client_gos_800ms() {
        assert_eq!(backoff(1), Duration::from_millis(800));
        assert_eq!(backoff(2), Duration::from_millis(1600));
    }

    #[test]
    fn a_context_left_out_is_not_unsynced() {
        let mut s = State::default();
        s.started("a", 2);
        s.started("b", 1);
        s.started("c", 1);
        s.left_out("c");
        if let Some(c) = s.contexts.get_mut("a") {
            c.synced = 2;
        }
        assert_eq!(s.unsynced(), ["b"]);
        assert!(s.any_synced());
        assert!(s.any_left_out());
    }
}
