//! The chaos scenario: a random fault every 2–6 s by default (dropped and short watches, compaction,
//! throttling answers with or without `Retry-After`, stalls, malformed lines, expiring
//! continue tokens, restarts), deterministic for a seed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::App;

/// A throttling answer as real servers give them: API Priority and Fairness and the
/// max-in-flight filter send `Retry-After`, other failures often do not.
fn throttle(app: &Arc<App>, code: u16, n: u64, with_retry_after: bool) -> String {
    app.faults.set_failure(code, n, u64::from(with_retry_after));
    let ra = if with_retry_after {
        "with Retry-After: 1"
    } else {
        "without Retry-After"
    };
    format!("the next {n} requests fail with {code} {ra}")
}

/// One chaos fault, chosen by `rng`, applied to `app`; returns what it did.
pub(crate) fn chaos_fault(app: &Arc<App>, rng: &mut SmallRng) -> String {
    if app.faults.chaos_retry_after_only.load(Ordering::SeqCst) {
        let code = [429, 500, 503][rng.random_range(0..3)];
        let n = rng.random_range(1..4);
        let what = throttle(app, code, n, true);
        return format!("{what}; dropped {} watches", app.faults.drop_watches());
    }
    match rng.random_range(0..11) {
        0 => format!("dropped {} watches", app.faults.drop_watches()),
        1 => {
            let r = app.cluster.write(|s| {
                let r = s.rev();
                s.compact(r);
                r
            });
            format!("compacted history up to revision {r}")
        }
        2 => {
            let n = rng.random_range(1..4);
            let ra = rng.random_bool(0.5);
            throttle(app, 429, n, ra)
        }
        3 => {
            let ra = rng.random_bool(0.5);
            throttle(app, 500, 1, ra)
        }
        4 => {
            let ra = rng.random_bool(0.5);
            throttle(app, 503, 1, ra)
        }
        5 => {
            let ms = rng.random_range(1000..3000);
            app.faults.stall(Duration::from_millis(ms));
            format!("watches stalled for {ms} ms")
        }
        6 => {
            app.faults.add_short_watches(1);
            "the next watch closes at once".to_string()
        }
        7 => format!(
            "a malformed line on {} open watches",
            app.faults.malformed_now()
        ),
        8 => {
            // A watcher falls behind and what it missed is compacted away: its re-watch
            // gets 410, and objects deleted meanwhile come back as tombstones.
            let ms = rng.random_range(1500..3000);
            app.faults.stall(Duration::from_millis(ms));
            let app = app.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(ms / 2)).await;
                app.cluster.write(|s| {
                    let r = s.rev();
                    s.compact(r);
                });
                app.faults.drop_watches();
            });
            format!("watches stalled for {ms} ms, compacted and dropped halfway")
        }
        9 => {
            app.faults.add_expire_continue(1);
            "the next continue token expires".to_string()
        }
        _ => {
            let ms = rng.random_range(500..3000);
            app.restart(Duration::from_millis(ms), false);
            format!("the server restarts, away for {ms} ms")
        }
    }
}

/// How often the chaos scenario strikes (`POST /_sim/faults {"everyMs":[MIN,MAX]}`) and how
/// many faults it has injected, so that a test runs chaos for a number of faults, not for a
/// time. Invariant: `min_ms < max_ms`.
#[derive(Debug)]
pub struct Pace {
    min_ms: AtomicU64,
    max_ms: AtomicU64,
    injected: AtomicU64,
}

impl Default for Pace {
    fn default() -> Pace {
        Pace {
            min_ms: AtomicU64::new(2000),
            max_ms: AtomicU64::new(6000),
            injected: AtomicU64::new(0),
        }
    }
}

impl Pace {
    pub fn set_every_ms(&self, min_ms: u64, max_ms: u64) {
        self.min_ms.store(min_ms, Ordering::SeqCst);
        self.max_ms.store(max_ms, Ordering::SeqCst);
    }

    pub fn injected(&self) -> u64 {
        self.injected.load(Ordering::SeqCst)
    }

    fn next_wait(&self, rng: &mut SmallRng) -> Duration {
        let (lo, hi) = (
            self.min_ms.load(Ordering::SeqCst),
            self.max_ms.load(Ordering::SeqCst),
        );
        Duration::from_millis(rng.random_range(lo..hi.max(lo + 1)))
    }
}

/// The chaos scenario: a random fault every `Pace` interval while enabled (logged to stderr
/// when `log` is set).
pub async fn run_chaos(app: Arc<App>, seed: u64, log: bool) {
    let mut rng = SmallRng::seed_from_u64(seed.wrapping_add(0xc4a05));
    loop {
        tokio::time::sleep(app.faults.chaos_pace.next_wait(&mut rng)).await;
        if !app.faults.chaos.load(Ordering::SeqCst) {
            continue;
        }
        let what = chaos_fault(&app, &mut rng);
        app.faults
            .chaos_pace
            .injected
            .fetch_add(1, Ordering::SeqCst);
        if log {
            eprintln!("kwatch sim: chaos: {what}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::storage::Store;
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn chaos_applies_every_kind_of_fault_deterministically() {
        let app = || {
            Arc::new(App {
                cluster: super::super::storage::Cluster::new(Store::new(100)),
                faults: super::super::control::Faults::new(0.0, true),
                token: String::new(),
                auth: false,
                port: 0,
                bookmark_interval: Duration::from_secs(1),
                too_large_wait: Duration::from_secs(1),
                backup: std::sync::Mutex::new(None),
                restarts: tokio::sync::mpsc::unbounded_channel().0,
                discovery: super::super::discovery::Served::new(true, None),
                requests: super::super::control::RequestLog::new(),
                controllers: super::super::controllers::Switch::new(false),
            })
        };
        let run = || {
            let a = app();
            let mut rng = SmallRng::seed_from_u64(9);
            (0..200)
                .map(|_| chaos_fault(&a, &mut rng))
                .collect::<Vec<_>>()
        };
        let log = run();
        assert_eq!(log, run());
        for kind in [
            "dropped",
            "compacted",
            "429",
            "500",
            "503",
            "stalled",
            "closes at once",
            "malformed",
            "compacted and dropped halfway",
            "continue token expires",
            "restarts",
        ] {
            assert!(log.iter().any(|l| l.contains(kind)), "no {kind} in {log:?}");
        }
        let a = app();
        let mut rng = SmallRng::seed_from_u64(9);
        while !chaos_fault(&a, &mut rng).contains("429") {}
        assert_eq!(
            a.faults.take_failure(None, None, 0).map(|s| s.code),
            Some(429)
        );
    }
}
