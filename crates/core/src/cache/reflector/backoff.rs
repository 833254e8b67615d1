//! client-go's reflector backoff: `wait.NewExponentialBackoffManager(800ms, 30s, 2m, 2.0, 1.0)`
//! (k8s.io/client-go/tools/cache/reflector.go, k8s.io/apimachinery/pkg/util/wait/backoff.go).
//!
//! Each step returns the current duration with jitter (`d + rand·1.0·d`, so in `[d, 2d)`),
//! then doubles it, capped at 30 s. If more than 2 minutes passed since the previous
//! step began, the duration starts again from 800 ms.

use std::time::Duration;

use rand::{Rng, SeedableRng};
use tokio::time::Instant;

pub const INITIAL: Duration = Duration::from_millis(800);
pub const CAP: Duration = Duration::from_secs(30);
pub const RESET_AFTER: Duration = Duration::from_secs(120);
pub const FACTOR: f64 = 2.0;
pub const JITTER: f64 = 1.0;

#[derive(Debug)]
pub struct Backoff {
    /// The first step ([`INITIAL`] but in tests), where a reset starts again.
    initial: Duration,
    /// The un-jittered duration the next step starts from; always within [initial, CAP].
    next: Duration,
    last_start: Option<Instant>,
    rng: rand::rngs::SmallRng,
}

impl Backoff {
    /// Starting from `initial` ([`INITIAL`] as client-go; shorter only in tests), within
    /// [1 ms, [`CAP`]]: a zero would never grow.
    pub fn new(seed: u64, initial: Duration) -> Backoff {
        let initial = initial.clamp(Duration::from_millis(1), CAP);
        Backoff {
            initial,
            next: initial,
            last_start: None,
            rng: rand::rngs::SmallRng::seed_from_u64(seed),
        }
    }

    /// The next delay to wait.
    pub fn step(&mut self) -> Duration {
        let now = Instant::now();
        if self
            .last_start
            .is_some_and(|t| now.duration_since(t) > RESET_AFTER)
        {
            self.next = self.initial;
        }
        self.last_start = Some(now);
        let base = self.next;
        self.next = base.mul_f64(FACTOR).min(CAP);
        base + base.mul_f64(JITTER * self.rng.random::<f64>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn grows_caps_and_resets() {
        let mut b = Backoff::new(7, INITIAL);
        let mut base = INITIAL;
        for _ in 0..12 {
            let d = b.step();
            assert!(
                d >= base && d < base * 2,
                "{d:?} not in [{base:?}, {:?})",
                base * 2
            );
            base = (base * 2).min(CAP);
            tokio::time::advance(Duration::from_secs(1)).await;
        }
        // 30 s is the cap of the base duration: the delay stays in [30 s, 60 s).
        let d = b.step();
        assert!(d >= CAP && d < CAP * 2);
        // Quiet for more than two minutes: back to 800 ms.
        tokio::time::advance(RESET_AFTER + Duration::from_millis(1)).await;
        let d = b.step();
        assert!(d >= INITIAL && d < INITIAL * 2, "{d:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn no_reset_within_two_minutes() {
        let mut b = Backoff::new(1, INITIAL);
        b.step();
        tokio::time::advance(RESET_AFTER).await;
        let d = b.step();
        assert!(d >= INITIAL * 2, "{d:?}");
    }

    /// A test's start (`KWATCH_TEST_BACKOFF_START_MS`) doubles as client-go's does, to the
    /// same cap; a zero start is 1 ms.
    #[tokio::test(start_paused = true)]
    async fn a_shorter_start_doubles_to_the_same_cap() {
        let mut b = Backoff::new(3, Duration::from_millis(10));
        let first = b.step();
        assert!((Duration::from_millis(10)..Duration::from_millis(20)).contains(&first));
        let second = b.step();
        assert!((Duration::from_millis(20)..Duration::from_millis(40)).contains(&second));
        for _ in 0..20 {
            assert!(b.step() < 2 * CAP);
        }
        assert_eq!(b.next, CAP);
        assert_eq!(
            Backoff::new(3, Duration::ZERO).next,
            Duration::from_millis(1)
        );
    }
}
