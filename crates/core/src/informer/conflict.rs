//! Fighting controllers (`--blame`): two or more field managers changing one path of one
//! object back and forth, each change undoing the other's — the hot loop of
//! kubernetes#47126 — found in the blamed changes the informer prints, and told once per
//! object and path per window as a `Conflict` record. A fight is A, B, A: a manager comes
//! back to a path another changed after it; managers each changing it once in turn
//! (a patch, then `kubectl set image`, then `kubectl replace`) are no fight.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::context::ContextName;
use crate::informer::blame::Blame;

/// Alternating changes that make a conflict.
pub const FLIPS: u32 = 3;
/// The window they must fall within, and between two reports of one path.
pub const WINDOW_SECONDS: u64 = 60;

/// How many paths are tracked before the quiet ones are forgotten.
const PRUNE_AT: usize = 4096;

/// How many of the last changes (managers, oldest first) make the fight that ends with the
/// last one: the run of changes each by another manager than the one before, from its
/// first change whose manager comes back later in the run (a manager that never came back
/// fought nobody). Below [`FLIPS`] is no fight.
fn fight<T>(changes: &[(T, String)]) -> usize {
    let alternating = 1 + changes
        .windows(2)
        .rev()
        .take_while(|w| w[0].1 != w[1].1)
        .count();
    let run = &changes[changes.len().saturating_sub(alternating)..];
    let start = (0..run.len())
        .find(|&i| run[i + 1..].iter().any(|(_, m)| *m == run[i].1))
        .unwrap_or(run.len());
    run.len() - start
}

/// One path's recent changes and when it was last reported.
#[derive(Debug, Default)]
struct Track {
    /// `(when, manager)`, oldest first, within the window of the newest.
    changes: Vec<(jiff::Timestamp, String)>,
    reported: Option<jiff::Timestamp>,
}

/// Two or more field managers changed one path of one object back and forth: each
/// change undoing the other's, `flips` alternating changes within `windowSeconds`. Told
/// once per object and path per window, as a `Conflict` record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Conflict {
    pub key: String,
    pub path: String,
    pub managers: Vec<String>,
    pub flips: u32,
    pub window_seconds: u64,
}

/// The changes seen so far, by context, resource, object key and path.
#[derive(Debug, Default)]
pub struct Conflicts {
    paths: HashMap<(Option<ContextName>, String, String, String), Track>,
}

impl Conflicts {
    /// The conflicts that the blamed changes of one delta complete: of object `key` of
    /// `resource` in `context`, at `now`.
    pub fn observe(
        &mut self,
        (context, resource, key): (Option<&ContextName>, &str, &str),
        now: jiff::Timestamp,
        blamed: &[Blame],
    ) -> Vec<Conflict> {
        let window = jiff::SignedDuration::from_secs(WINDOW_SECONDS as i64);
        // Paths quiet for a whole window can start afresh: forget them, so a long watch
        // of many objects holds only the recent ones.
        if self.paths.len() >= PRUNE_AT {
            self.paths.retain(|_, t| {
                let last = t.changes.last().map(|(at, _)| *at).into_iter();
                last.chain(t.reported)
                    .any(|at| now.duration_since(at) < window)
            });
        }
        let mut found = Vec::new();
        for b in blamed {
            let Some(manager) = b.manager.clone() else {
                continue;
            };
            let id = (
                context.cloned(),
                resource.to_owned(),
                key.to_owned(),
                b.path.clone(),
            );
            let t = self.paths.entry(id).or_default();
            t.changes.retain(|(at, _)| now.duration_since(*at) < window);
            t.changes.push((now, manager));
            let run = fight(&t.changes);
            let quiet = t.reported.is_none_or(|r| now.duration_since(r) >= window);
            if run >= FLIPS as usize && quiet {
                t.reported = Some(now);
                let mut managers: Vec<String> = Vec::new();
                for (_, m) in &t.changes[t.changes.len() - run..] {
                    if !managers.contains(m) {
                        managers.push(m.clone());
                    }
                }
                found.push(Conflict {
                    key: key.to_owned(),
                    path: b.path.clone(),
                    managers,
                    flips: run as u32,
                    window_seconds: WINDOW_SECONDS,
                });
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(managers: &[&str]) -> usize {
        let changes: Vec<((), String)> = managers.iter().map(|m| ((), m.to_string())).collect();
        fight(&changes)
    }

    #[test]
    fn a_fight_needs_a_manager_to_come_back() {
        // kubectl patch, set image, replace, each once: three managers, no fight.
        assert_eq!(run(&["kubectl-patch", "kubectl-set", "kubectl-replace"]), 0);
        assert_eq!(run(&["a", "b", "a"]), 3);
        assert_eq!(run(&["a", "b", "a", "b", "a"]), 5);
        // One who left before the fight is not in it.
        assert_eq!(run(&["c", "a", "b", "a"]), 3);
        assert_eq!(run(&["a", "b", "c", "a"]), 4);
        // The same manager twice in a row ends a run.
        assert_eq!(run(&["a", "b", "b", "a"]), 0);
        assert_eq!(run(&["a"]), 0);
        assert_eq!(run(&[]), 0);
    }
}
