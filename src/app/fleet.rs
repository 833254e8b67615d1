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
use std::time::{Duration, Instant};

use crate::cache::reflector::ReflectorEvent;
use crate::context::ContextName;
use crate::informer::record::{Body, Record};
use crate::informer::sink::Observer;

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
    contexts: BTreeMap<ContextName, Context>,
}

#[derive(Debug, Default)]
struct Context {
    targets: usize,
    synced: usize,
    left_out: bool,
    /// `--stats`' per-context figures: deltas, lists begun (the initial ones and
    /// relists), backoffs, retried requests, and when the context's last resource synced.
    deltas: u64,
    lists: u64,
    relists: u64,
    backoffs: u64,
    retries: u64,
    synced_after: Option<Duration>,
}

impl State {
    /// `context` watches `targets` resources.
    pub fn started(&mut self, context: &ContextName, targets: usize) {
        self.contexts.entry(context.clone()).or_default().targets += targets;
    }

    /// `context` is left out, wholly (its start failed) or in part (a resource failed
    /// before its first sync).
    pub fn left_out(&mut self, context: &ContextName) {
        self.contexts.entry(context.clone()).or_default().left_out = true;
    }

    /// The contexts left out before any of their resources started, in name order.
    pub fn left_out_at_start(&self) -> Vec<ContextName> {
        self.contexts
            .iter()
            .filter(|(_, c)| c.left_out && c.targets == 0)
            .map(|(n, _)| n.clone())
            .collect()
    }

    /// Some context was left out.
    pub fn any_left_out(&self) -> bool {
        self.contexts.values().any(|c| c.left_out)
    }

    /// The contexts still watched that have not synced every resource, in name order.
    pub fn unsynced(&self) -> Vec<&ContextName> {
        self.contexts
            .iter()
            .filter(|(_, c)| !c.left_out && c.synced < c.targets)
            .map(|(n, _)| n)
            .collect()
    }

    /// `--stats`' lines, one per context in name order: when it synced (or that it was left
    /// out, or has not synced), its deltas, lists, relists, backoffs and retried requests.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        for (name, c) in &self.contexts {
            let state = match (c.left_out, c.synced_after) {
                (true, _) => "left out".to_owned(),
                (false, Some(d)) => format!("synced after {}ms", d.as_millis()),
                (false, None) => format!("not synced ({} of {})", c.synced, c.targets),
            };
            s.push_str(&format!(
                "  context {name}: {state}, deltas {}, lists {} ({} relists), backoffs {}, \
                 retries {}\n",
                c.deltas, c.lists, c.relists, c.backoffs, c.retries
            ));
        }
        s
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

/// An observer of the informer loops counting each context's records: its Synced ones
/// (which say when it synced), and `--stats`' per-context figures.
pub struct Counter {
    state: Shared,
    started: Instant,
}

impl Counter {
    /// Counts into `state`, times from `started`, the run's start (each context's start
    /// counts in its time to synced).
    pub fn new(state: Shared, started: Instant) -> Counter {
        Counter { state, started }
    }
}

impl Observer for Counter {
    fn record(&mut self, rec: &Record<'_>, _shown: bool, _targets: usize) {
        let Some(name) = rec.context else { return };
        let mut state = lock(&self.state);
        let Some(c) = state.contexts.get_mut(name) else {
            return;
        };
        match &rec.body {
            Body::Synced => {
                c.synced += 1;
                if c.synced == c.targets {
                    c.synced_after = Some(self.started.elapsed());
                }
            }
            Body::Delta { .. } => c.deltas += 1,
            Body::Event(ReflectorEvent::List { reason, .. }) => {
                c.lists += 1;
                if reason != "initial" {
                    c.relists += 1;
                }
            }
            Body::Event(ReflectorEvent::Backoff { .. }) => c.backoffs += 1,
            Body::Event(ReflectorEvent::Retry(_)) => c.retries += 1,
            _ => {}
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
        let [a, b, c] = ["a", "b", "c"].map(ContextName::from);
        s.started(&a, 2);
        s.started(&b, 1);
        s.started(&c, 1);
        s.left_out(&c);
        if let Some(c) = s.contexts.get_mut("a") {
            c.synced = 2;
        }
        assert_eq!(s.unsynced(), [&b]);
        assert!(s.any_synced());
        assert!(s.any_left_out());
        let summary = s.summary();
        let lines: Vec<&str> = summary.lines().collect();
        assert_eq!(
            lines,
            [
                "  context a: not synced (2 of 2), deltas 0, lists 0 (0 relists), backoffs 0, retries 0",
                "  context b: not synced (0 of 1), deltas 0, lists 0 (0 relists), backoffs 0, retries 0",
                "  context c: left out, deltas 0, lists 0 (0 relists), backoffs 0, retries 0",
            ]
        );
    }
}
