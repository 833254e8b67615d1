//! What the benchmark (`benches/run.sh`) needs from the simulator: preloaded pods (their
//! sizes, `--pod-size`, are [`super::pods::PodSize`]), and a flood of MODIFIED pod events (`POST /_sim/flood`),
//! either at a fixed rate or as fast as the watchers take them.
//!
//! The flood is cheap on the server on purpose: an event is a preloaded pod's bytes with a
//! new resourceVersion (no JSON tree is built), so the client, not the simulator, is what a
//! run measures.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::watch;

use super::resources::PODS;
use super::storage::Store;
use super::App;

/// The flood's switches: `rate` events/s (0: off, infinite: as fast as the fastest open
/// watch takes them), how many events it may still make, and the revision the fastest
/// watch has sent up to.
#[derive(Debug)]
pub struct Flood {
    rate: watch::Sender<f64>,
    /// Events still to make before the flood stops by itself (`u64::MAX`: no end).
    left: AtomicU64,
    /// Highest revision an open watch has delivered (watches report it as they go).
    pub watch_pos: AtomicU64,
    /// MODIFIED events made by the flood so far.
    pub made: AtomicU64,
}

impl Default for Flood {
    fn default() -> Self {
        Flood {
            rate: watch::channel(0.0).0,
            left: AtomicU64::new(u64::MAX),
            watch_pos: AtomicU64::new(0),
            made: AtomicU64::new(0),
        }
    }
}

/// How far (in revisions) the "max" flood may run ahead of the fastest watch: more than
/// twice what a watch reads at once (4096), so the pipe never drains while the flood waits
/// for a watch to report, and under the default history (10,000), so a client that keeps
/// up never sees a 410.
const WINDOW: u64 = 9_000;

impl Flood {
    /// A watch reports that it has delivered everything up to `pos`.
    pub fn delivered(&self, pos: u64) {
        self.watch_pos.fetch_max(pos, Ordering::Relaxed);
    }
}

/// `POST /_sim/flood {"rate":R}`: R events/s, `"max"` (as fast as the watch takes them) or
/// 0; with `"count":N`, N events and then none, the first once a watch opened after the
/// call has reported in (a run whose client reads exactly what was made:
/// benches/instructions.sh's B).
pub fn control(app: &App, body: &Value) -> Value {
    let rate = match &body["rate"] {
        Value::String(s) if s == "max" => Some(f64::INFINITY),
        v => v.as_f64().map(|r| r.max(0.0)),
    };
    if let Some(r) = rate {
        let flood = &app.faults.flood;
        match body["count"].as_u64() {
            Some(n) => {
                flood.left.store(n, Ordering::Relaxed);
                flood.watch_pos.store(0, Ordering::Relaxed);
            }
            None => flood.left.store(u64::MAX, Ordering::Relaxed),
        }
        flood.rate.send_replace(r);
    }
    let r = *app.faults.flood.rate.borrow();
    json!({
        "rate": if r.is_infinite() { json!("max") } else { json!(r) },
        "made": app.faults.flood.made.load(Ordering::Relaxed),
    })
}

/// Runs the flood until the task is aborted.
pub async fn run_flood(app: Arc<App>) {
    let flood = &app.faults.flood;
    let mut pacer = super::churn::Pacer::new(flood.rate.subscribe());
    let mut cursor = String::new();
    while let Some(rate) = pacer.rate().await {
        let n = if rate.is_infinite() {
            let rev = app.cluster.read().rev();
            let pos = flood.watch_pos.load(Ordering::Relaxed);
            let lag = rev.saturating_sub(pos);
            if pos == 0 || lag >= WINDOW {
                if pacer.pause(Duration::from_micros(500)).await.is_none() {
                    return;
                }
                continue;
            }
            (WINDOW - lag) as usize
        } else {
            let Some(n) = pacer.owed(rate, Duration::from_millis(2)).await else {
                return;
            };
            n
        };
        let left = flood.left.load(Ordering::Relaxed);
        if left == 0 {
            // The count is made: the flood stops as `{"rate":0}` stops it.
            flood.rate.send_replace(0.0);
            continue;
        }
        let n = n.min(usize::try_from(left).unwrap_or(usize::MAX));
        if n > 0 {
            let made = app.cluster.write(|s| {
                (0..n.min(100_000))
                    .filter(|_| modify_one(s, &mut cursor))
                    .count()
            });
            flood.made.fetch_add(made as u64, Ordering::Relaxed);
            if left != u64::MAX {
                flood.left.fetch_sub(made as u64, Ordering::Relaxed);
            }
        }
    }
}

/// One MODIFIED event: the pod after `cursor` (wrapping around) restamped with the next
/// revision. False when there are no pods.
fn modify_one(s: &mut Store, cursor: &mut String) -> bool {
    cursor.push('\0');
    let key = s
        .key_at_or_after(PODS, cursor)
        .or_else(|| s.key_at_or_after(PODS, ""))
        .map(str::to_string);
    let Some(key) = key else {
        cursor.clear();
        return false;
    };
    let Some(old) = s.get(PODS, &key) else {
        return false;
    };
    let rv = s.rev() + 1;
    let obj = old.restamped(rv);
    s.replace_raw(obj, old);
    *cursor = key;
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flood_restamps_and_records_modified_events() {
        let mut s = Store::new(100);
        super::super::seed::seed_cluster(&mut s, 3, 1).unwrap();
        let rev = s.rev();
        let mut cursor = String::new();
        for _ in 0..5 {
            assert!(modify_one(&mut s, &mut cursor));
        }
        assert_eq!(s.rev(), rev + 5);
        let (changes, _) = s.changes_after(rev, 100).unwrap();
        assert_eq!(changes.len(), 5);
        for c in &changes {
            let v = c.obj.value();
            assert_eq!(v["metadata"]["resourceVersion"], c.rv.to_string());
        }
        // Round-robin: the fourth change is the first pod again.
        assert_eq!(changes[0].obj.key, changes[3].obj.key);
    }
}
