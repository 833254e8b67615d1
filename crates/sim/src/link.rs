//! `POST /_sim/slow-link`: the server-to-client direction limited to a rate in Mbit/s, as a
//! network link (or a TCP proxy that shapes one) does, so that a benchmark can show what the
//! bytes on the wire cost.
//!
//! The rate is one token bucket shared by every connection (one link), applied at the TCP
//! level: to everything the server writes — TLS records of response heads, bodies (after
//! gzip) and watch streams — on every connection but those that have carried `/_sim/`
//! requests only (the control API stays quick, as a freeze leaves it alone). The client's
//! requests are not slowed. It lasts until `{"mbps":0}`, `POST /_sim/release` or
//! `POST /_sim/clear`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// The most one write may send at once: a TLS record's payload, 5 ms at 25 Mbit/s, so the
/// bytes leave evenly rather than in bursts of a whole response.
pub const CHUNK: usize = 16 * 1024;

/// How long an idle link saves up its rate (the bucket's depth): a writer woken late by the
/// timer (tokio's resolution is 1 ms) sends what it missed instead of losing link time.
const DEPTH: Duration = Duration::from_millis(20);

/// The slow link in force, if any, and the bytes it has carried.
#[derive(Debug, Default)]
pub struct SlowLink {
    current: Mutex<Option<Rate>>,
    /// Bytes written under a slow link since the server started (`GET /_sim/state`).
    paced: AtomicU64,
}

#[derive(Debug, Clone, Copy)]
struct Rate {
    mbps: f64,
    /// When the bytes granted so far will have crossed the link; never earlier than
    /// `DEPTH` before now once a write has been granted (an idle link saves no more).
    free_at: Instant,
}

impl SlowLink {
    /// Limits the link to `mbps` Mbit/s from now on; 0 (or less) ends the limit.
    pub fn set(&self, mbps: f64) {
        let rate = (mbps > 0.0).then(|| Rate {
            mbps,
            free_at: Instant::now(),
        });
        *self.lock() = rate;
    }

    /// Ends the limit at once; whether one was in force.
    pub fn clear(&self) -> bool {
        self.lock().take().is_some()
    }

    /// The rate in force, in Mbit/s.
    pub fn mbps(&self) -> Option<f64> {
        self.lock().map(|r| r.mbps)
    }

    /// Bytes written under a slow link so far.
    pub fn paced(&self) -> u64 {
        self.paced.load(Ordering::Relaxed)
    }

    /// How many bytes a write of `want` may send now (all of them with no limit, at most
    /// [`CHUNK`] with one), or `Err` with when the link is free again.
    pub fn grant(&self, want: usize) -> Result<usize, Instant> {
        match *self.lock() {
            None => Ok(want),
            Some(r) if r.free_at <= Instant::now() => Ok(want.min(CHUNK)),
            Some(r) => Err(r.free_at),
        }
    }

    /// Books `n` bytes written on the link: it is busy for their time at the rate.
    pub fn spend(&self, n: usize) {
        let mut g = self.lock();
        let Some(r) = g.as_mut() else { return };
        let now = Instant::now();
        let start = r.free_at.max(now.checked_sub(DEPTH).unwrap_or(now));
        r.free_at = start + Duration::from_secs_f64(n as f64 * 8.0 / (r.mbps * 1e6));
        self.paced.fetch_add(n as u64, Ordering::Relaxed);
    }

    /// A limit set by a handler that panicked while holding it stays usable.
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Rate>> {
        self.current.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn the_link_is_busy_for_the_time_its_bytes_take() {
        let link = SlowLink::default();
        assert_eq!(link.grant(1 << 20), Ok(1 << 20), "no limit: all at once");
        link.spend(1 << 20);
        assert_eq!(link.paced(), 0, "only bytes under a limit are counted");

        link.set(8.0); // 1 MB/s: 16 KiB take 16.384 ms
        let t0 = Instant::now();
        assert_eq!(link.grant(1 << 20), Ok(CHUNK));
        link.spend(CHUNK);
        assert_eq!(link.grant(10), Err(t0 + Duration::from_micros(16_384)));
        // An idle link saves up at most DEPTH: after a second, DEPTH's worth goes at once.
        tokio::time::advance(Duration::from_secs(1)).await;
        link.spend(CHUNK);
        link.spend(CHUNK);
        let at = link.grant(10).unwrap_err();
        assert_eq!(
            at - Instant::now(),
            Duration::from_micros(2 * 16_384) - DEPTH
        );
        assert_eq!(link.paced(), 3 * CHUNK as u64);
        assert_eq!(link.mbps(), Some(8.0));

        assert!(link.clear());
        assert!(!link.clear());
        assert_eq!(link.grant(1 << 20), Ok(1 << 20));
        link.set(0.0);
        assert_eq!(link.mbps(), None, "0 is off");
    }
}
