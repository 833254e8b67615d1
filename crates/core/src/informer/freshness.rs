//! How far an informer's store is behind its server, without writing anything; and the
//! records that tell it ([`Lag`]; [`Latency`], `--probe`'s measure by a write).
//!
//! Since Kubernetes 1.35 resourceVersions are comparable integers (KEP-5504), and a LIST
//! with `resourceVersion=""` is a consistent read (served from the watch cache since 1.34):
//! its `metadata.resourceVersion` is the server's revision at that moment. A sample is
//! such a revision `S` and the instant it was read; the informer's store is at `S` once it
//! has applied an object, a bookmark or a list of revision `S` or later. The lag of a
//! sample is the time from the sample to that moment; the current lag, the age of the
//! oldest sample the store has not reached (else the lag of the last one reached). While
//! samples fail (the server unreachable, a frozen connection), the lag is at least the time
//! since the store was last known to be current.
//!
//! The revision is the cluster's, not the resource's: on a resource that does not change
//! while others do, the store learns it is current only at the server's next bookmark
//! (kube-apiserver sends one about every minute), so there the lag is an upper bound. On
//! a resource that changes more often than that it is exact.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// A `Freshness` record's fields (each sample's lag; `recovered`: the first below
/// `--stale-after` after a `Stale`), and a `Stale` record's (the lag has reached
/// `--stale-after`, said once until it falls below again; never `recovered`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Lag {
    #[serde(rename = "lagMs", with = "crate::units::fractional_millis")]
    pub lag: Duration,
    pub server_resource_version: String,
    pub store_resource_version: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub recovered: bool,
}

/// A `Latency` record's fields: one write of `--probe` timed from the patch being sent to
/// its delta popping from the probe's own informer, the other side of the same question
/// (how far behind the server is the informer?) measured by a write.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Latency {
    /// The probe's ConfigMap, `namespace/name`.
    pub probe: String,
    /// The write's number, 1 for the first patch (annotation `kwatch.io/probe-seq`).
    pub seq: u64,
    /// When the patch was sent, RFC 3339 with nanoseconds (`kwatch.io/probe-sent`).
    pub sent: String,
    /// Write to delta, in milliseconds with microseconds.
    #[serde(rename = "ms", with = "crate::units::fractional_millis")]
    pub latency: Duration,
}

/// What a sample or a tick found, for the caller to report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// The current lag; `recovered`: the first below the threshold after a [`Finding::Stale`].
    Lag {
        lag: Duration,
        server: u64,
        store: u64,
        recovered: bool,
    },
    /// The lag has just reached the threshold (once until it falls below again).
    Stale {
        lag: Duration,
        server: u64,
        store: u64,
    },
    /// The store is at a revision the server says it has not reached (an etcd restored
    /// from a backup: kubernetes/kubernetes#107457; or a server behind the watch's), once
    /// until the server has caught up.
    Ahead { server: u64, store: u64 },
}

/// One informer's samples and store revision.
#[derive(Debug)]
pub struct Freshness {
    stale_after: Duration,
    /// Samples the store has not reached, oldest first (their revisions grow).
    pending: VecDeque<(u64, Instant)>,
    /// The store's revision: the highest applied.
    store: Option<u64>,
    /// The newest sample's revision.
    server: u64,
    /// The lag of the last sample reached.
    last_lag: Duration,
    /// When the store was last known to be at the server's revision: the instant of the
    /// newest sample it has reached.
    current_at: Option<Instant>,
    stale: bool,
    ahead: bool,
}

/// Samples kept at most: one a second for an hour of a store that never catches up.
const MAX_PENDING: usize = 3600;

impl Freshness {
    pub fn new(stale_after: Duration) -> Freshness {
        Freshness {
            stale_after,
            pending: VecDeque::new(),
            store: None,
            server: 0,
            last_lag: Duration::ZERO,
            current_at: None,
            stale: false,
            ahead: false,
        }
    }

    /// The store applied revision `rv` at `at`: every sample up to it is reached.
    pub fn store_at(&mut self, rv: u64, at: Instant) {
        self.store = Some(self.store.map_or(rv, |s| s.max(rv)));
        while let Some(&(s, sampled)) = self.pending.front() {
            if s > rv {
                break;
            }
            self.last_lag = at.saturating_duration_since(sampled);
            self.current_at = Some(sampled);
            self.pending.pop_front();
        }
    }

    /// The server was at revision `server` at `at` (`None`: the sample failed, only the
    /// lag is read again). Nothing before the store's first revision (its first list).
    pub fn sampled(&mut self, server: Option<u64>, at: Instant) -> Vec<Finding> {
        let Some(store) = self.store else {
            return Vec::new();
        };
        let mut found = Vec::new();
        if let Some(server) = server {
            self.server = server;
            if store >= server {
                if self.pending.is_empty() {
                    self.last_lag = Duration::ZERO;
                }
                self.current_at = Some(at);
                if store > server && !self.ahead {
                    found.push(Finding::Ahead { server, store });
                }
                self.ahead = store > server;
            } else {
                self.ahead = false;
                if self.pending.len() == MAX_PENDING {
                    self.pending.pop_front();
                }
                self.pending.push_back((server, at));
            }
        }
        let mut lag = self.lag(at);
        if server.is_none() {
            let since = self.current_at.map(|c| at.saturating_duration_since(c));
            lag = lag.max(since.unwrap_or_default());
        }
        let recovered = self.stale && lag < self.stale_after;
        if recovered {
            self.stale = false;
        }
        found.push(Finding::Lag {
            lag,
            server: self.server,
            store,
            recovered,
        });
        if !self.stale && lag >= self.stale_after {
            self.stale = true;
            found.push(Finding::Stale {
                lag,
                server: self.server,
                store,
            });
        }
        found
    }

    /// The current lag at `now`.
    pub fn lag(&self, now: Instant) -> Duration {
        match self.pending.front() {
            Some(&(_, sampled)) => now.saturating_duration_since(sampled),
            None => self.last_lag,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn lag_of(found: &[Finding]) -> Duration {
        found
            .iter()
            .find_map(|f| match f {
                Finding::Lag { lag, .. } => Some(*lag),
                _ => None,
            })
            .unwrap()
    }

    #[test]
    fn nothing_is_sampled_before_the_first_list() {
        let mut f = Freshness::new(ms(1000));
        assert!(f.sampled(Some(10), Instant::now()).is_empty());
    }

    #[test]
    fn a_sample_is_reached_when_the_store_applies_its_revision() {
        let t0 = Instant::now();
        let mut f = Freshness::new(ms(1000));
        f.store_at(5, t0);
        // The store is at the server's revision: no lag.
        assert_eq!(lag_of(&f.sampled(Some(5), t0)), ms(0));
        // Behind: the lag is the sample's age until the store reaches it, then its lag.
        let _ = f.sampled(Some(9), t0 + ms(100));
        assert_eq!(f.lag(t0 + ms(130)), ms(30));
        f.store_at(8, t0 + ms(140));
        assert_eq!(f.lag(t0 + ms(150)), ms(50));
        f.store_at(9, t0 + ms(160));
        assert_eq!(f.lag(t0 + ms(500)), ms(60));
        // A sample at the store's revision resets it.
        assert_eq!(lag_of(&f.sampled(Some(9), t0 + ms(600))), ms(0));
    }

    #[test]
    fn the_lag_grows_with_a_stall_says_stale_once_and_recovers() {
        let t0 = Instant::now();
        let mut f = Freshness::new(ms(1000));
        f.store_at(1, t0);
        let mut stale = 0;
        for i in 1..=30u64 {
            let found = f.sampled(Some(1 + i), t0 + ms(100 * i));
            stale += found
                .iter()
                .filter(|x| matches!(x, Finding::Stale { .. }))
                .count();
            // The oldest unreached sample is the first: its age.
            assert_eq!(lag_of(&found), ms(100 * (i - 1)));
        }
        assert_eq!(stale, 1);
        // Released: every change arrives; the next sample is reached at once.
        f.store_at(31, t0 + ms(3050));
        let found = f.sampled(Some(31), t0 + ms(3100));
        assert!(
            matches!(found[..], [Finding::Lag { recovered: true, lag, .. }] if lag < ms(1000)),
            "{found:?}"
        );
        let found = f.sampled(Some(31), t0 + ms(3200));
        assert_eq!(
            found,
            [Finding::Lag {
                lag: ms(0),
                server: 31,
                store: 31,
                recovered: false
            }]
        );
    }

    #[test]
    fn a_store_ahead_of_the_server_is_said_once_until_the_server_catches_up() {
        let t0 = Instant::now();
        let mut f = Freshness::new(ms(1000));
        f.store_at(100, t0);
        let ahead = |found: Vec<Finding>| {
            found
                .iter()
                .filter(|x| matches!(x, Finding::Ahead { .. }))
                .count()
        };
        assert_eq!(ahead(f.sampled(Some(40), t0)), 1);
        assert_eq!(ahead(f.sampled(Some(41), t0)), 0);
        assert_eq!(ahead(f.sampled(Some(100), t0)), 0);
        assert_eq!(ahead(f.sampled(Some(42), t0)), 1);
    }

    #[test]
    fn while_samples_fail_the_lag_is_the_time_since_the_store_was_known_current() {
        let t0 = Instant::now();
        let mut f = Freshness::new(ms(1000));
        f.store_at(3, t0);
        assert_eq!(lag_of(&f.sampled(Some(3), t0)), ms(0));
        // The server cannot be asked (a frozen connection): the lag grows, Stale once.
        assert_eq!(lag_of(&f.sampled(None, t0 + ms(600))), ms(600));
        let found = f.sampled(None, t0 + ms(1200));
        assert_eq!(lag_of(&found), ms(1200));
        assert!(found.iter().any(|x| matches!(x, Finding::Stale { .. })));
        // Answered again, and the store at its revision: fresh.
        let found = f.sampled(Some(3), t0 + ms(1300));
        assert!(
            matches!(found[..], [Finding::Lag { recovered: true, lag, .. }] if lag == ms(0)),
            "{found:?}"
        );
    }

    #[test]
    fn a_failed_sample_reads_the_lag_again() {
        let t0 = Instant::now();
        let mut f = Freshness::new(ms(1000));
        f.store_at(1, t0);
        let _ = f.sampled(Some(2), t0);
        assert_eq!(lag_of(&f.sampled(None, t0 + ms(700))), ms(700));
    }
}
