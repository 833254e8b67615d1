//! What the run knows of each context of a fleet, for its exit code and `--stats`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use jiff::Timestamp;

use crate::cache::reflector::ReflectorEvent;
use crate::context::ContextName;
use crate::informer::record::{Body, Record};
use crate::informer::sink::Observer;

/// Each context: how many of its resources were started, how many synced, and whether it
/// is watched now.
#[derive(Debug, Default)]
pub struct State {
    contexts: BTreeMap<ContextName, Context>,
}

#[derive(Debug, Default)]
struct Context {
    targets: usize,
    synced: usize,
    /// Not wholly watched: its start failed or it stopped (and is retried), or one of its
    /// resources was refused.
    left_out: bool,
    /// Since when it is retried: its start failing, or its reflectors backing off. Both say
    /// so alike (`retrying since …`).
    retrying: Option<Timestamp>,
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
    /// `context` starts (or starts again) with `targets` resources, none synced yet.
    pub fn started(&mut self, context: &ContextName, targets: usize) {
        let c = self.contexts.entry(context.clone()).or_default();
        c.targets = targets;
        c.synced = 0;
        c.left_out = false;
        c.retrying = None;
        c.synced_after = None;
    }

    /// A resource of `context` was refused before its first sync: that part is left out.
    pub fn left_out(&mut self, context: &ContextName) {
        self.contexts.entry(context.clone()).or_default().left_out = true;
    }

    /// `context` could not start, or stopped: it is not watched, and is tried again.
    pub fn retrying(&mut self, context: &ContextName) {
        let c = self.contexts.entry(context.clone()).or_default();
        c.left_out = true;
        c.retrying.get_or_insert_with(Timestamp::now);
    }

    /// `context` is no longer the run's (gone from the kubeconfig).
    pub fn removed(&mut self, context: &ContextName) {
        self.contexts.remove(context);
    }

    /// The contexts not started yet, in name order.
    pub fn never_started(&self) -> Vec<ContextName> {
        self.contexts
            .iter()
            .filter(|(_, c)| c.left_out && c.targets == 0)
            .map(|(n, _)| n.clone())
            .collect()
    }

    /// Some context is not (wholly) watched.
    pub fn any_left_out(&self) -> bool {
        self.contexts.values().any(|c| c.left_out)
    }

    /// The contexts watched that have not synced every resource, in name order.
    pub fn unsynced(&self) -> Vec<&ContextName> {
        self.contexts
            .iter()
            .filter(|(_, c)| !c.left_out && c.synced < c.targets)
            .map(|(n, _)| n)
            .collect()
    }

    /// `--stats`' lines, one per context in name order: when it synced (or that it has
    /// not, or was left out, or since when it is retried), its deltas, lists, relists,
    /// backoffs and retried requests.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        for (name, c) in &self.contexts {
            let mut state = match (c.targets, c.left_out, c.synced_after) {
                (0, true, _) => "not watched".to_owned(),
                (_, true, _) if c.retrying.is_some() => "stopped".to_owned(),
                (_, true, _) => "left out".to_owned(),
                (_, false, Some(d)) => format!("synced after {}ms", d.as_millis()),
                (_, false, None) => format!("not synced ({} of {})", c.synced, c.targets),
            };
            if let Some(since) = c.retrying {
                let since = since.round(jiff::Unit::Second).unwrap_or(since);
                state.push_str(&format!(", retrying since {since}"));
            }
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

/// The fleet's state, shared by the run, its supervisor and its [`Counter`].
pub type Shared = Arc<Mutex<State>>;

/// Locks the state (a panic elsewhere leaves it readable).
pub fn lock(s: &Shared) -> std::sync::MutexGuard<'_, State> {
    s.lock().unwrap_or_else(|e| e.into_inner())
}

/// An observer of the informer loops counting each context's records: its Synced ones
/// (which say when it synced), its reflectors' backoffs (since when it is retried, until
/// a list or a watch works again), and `--stats`' per-context figures.
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
        if rec.body.shows_a_working_watch()
            || matches!(
                rec.body,
                Body::Synced | Body::Event(ReflectorEvent::Listed { .. })
            )
        {
            c.retrying = None;
        }
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
            Body::Event(ReflectorEvent::Backoff { .. }) => {
                c.backoffs += 1;
                c.retrying.get_or_insert(rec.time);
            }
            Body::Event(ReflectorEvent::Retry(_)) => c.retries += 1,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_context_left_out_is_not_unsynced() {
        let mut s = State::default();
        let [a, b, c, d] = ["a", "b", "c", "d"].map(ContextName::from);
        s.started(&a, 2);
        s.started(&b, 1);
        s.started(&c, 1);
        s.left_out(&c);
        s.retrying(&d);
        if let Some(c) = s.contexts.get_mut("a") {
            c.synced = 2;
        }
        assert_eq!(s.unsynced(), [&b]);
        assert!(s.any_synced());
        assert!(s.any_left_out());
        assert_eq!(s.never_started(), std::slice::from_ref(&d));
        let summary = s.summary();
        let lines: Vec<&str> = summary.lines().collect();
        assert_eq!(
            lines[..3],
            [
                "  context a: not synced (2 of 2), deltas 0, lists 0 (0 relists), backoffs 0, retries 0",
                "  context b: not synced (0 of 1), deltas 0, lists 0 (0 relists), backoffs 0, retries 0",
                "  context c: left out, deltas 0, lists 0 (0 relists), backoffs 0, retries 0",
            ]
        );
        assert!(
            lines[3].starts_with("  context d: not watched, retrying since 20"),
            "{}",
            lines[3]
        );
        // Started again, it is awaited anew; gone from the kubeconfig, it is not counted.
        s.started(&d, 1);
        assert_eq!(s.unsynced(), [&b, &d]);
        s.removed(&d);
        assert_eq!(s.unsynced(), [&b]);
    }
}
