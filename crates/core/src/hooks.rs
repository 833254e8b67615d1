//! Test hooks: what the integration tests set through `KWATCH_TEST_*` variables so that
//! they need not wait for client-go's real clocks, or can make a task panic. They are read
//! only with the cargo feature `test-hooks`, which the `kwatch` package turns on through
//! its dev-dependency: the kwatch that `cargo test` builds has them, a kwatch built for use
//! (`cargo build`, `cargo install`) reads no such variable.

use std::time::Duration;

use crate::cache::reflector::Clocks;

/// The reflector's clocks: client-go's, or with the feature what the variables say.
pub fn clocks() -> Clocks {
    if cfg!(feature = "test-hooks") {
        from_env()
    } else {
        Clocks::default()
    }
}

/// Whether a test asks for a task that panics (`KWATCH_TEST_PANIC_IN_TASK`), to pin the
/// binary's panic hook; never without the feature.
pub fn panic_in_task() -> bool {
    cfg!(feature = "test-hooks") && std::env::var_os("KWATCH_TEST_PANIC_IN_TASK").is_some()
}

/// The test hooks of the reflector's clocks, read once: `KWATCH_TEST_SHORT_WATCH_MS`
/// (client-go's very-short-watch second), `KWATCH_TEST_BACKOFF_START_MS` (its 800 ms
/// backoff start) and `KWATCH_TEST_BOOKMARK_FLOOR_MS` (the least bookmark interval
/// `--stall-after auto` learns), so that a test need not wait for real ones
/// (docs/watch-health.md). Unset is the default; a value that is not a whole number of
/// milliseconds is too, with a warning, as the `HTTP2_*` variables are read.
fn from_env() -> Clocks {
    let (clocks, warnings) = clocks_from_vars(|name| std::env::var(name).ok());
    for w in warnings {
        tracing::warn!("{w}");
    }
    clocks
}

/// [`from_env`] from the variables' values (`var`: a variable's value, if set); the
/// warnings for those not understood.
fn clocks_from_vars(var: impl Fn(&str) -> Option<String>) -> (Clocks, Vec<String>) {
    let mut warnings = Vec::new();
    let mut read = |name: &str, default: Duration| match var(name).as_deref() {
        None | Some("") => default,
        Some(v) => v
            .parse::<u64>()
            .map(Duration::from_millis)
            .unwrap_or_else(|_| {
                warnings.push(format!(
                    "illegal {name}({v:?}): not a whole number of milliseconds; the default \
                 {default:?} is used"
                ));
                default
            }),
    };
    let default = Clocks::default();
    let clocks = Clocks {
        short_watch: read("KWATCH_TEST_SHORT_WATCH_MS", default.short_watch),
        backoff_start: read("KWATCH_TEST_BACKOFF_START_MS", default.backoff_start),
        bookmark_floor: read("KWATCH_TEST_BOOKMARK_FLOOR_MS", default.bookmark_floor),
        end_bookmark_wait: read(
            "KWATCH_TEST_END_BOOKMARK_WAIT_MS",
            default.end_bookmark_wait,
        ),
    };
    (clocks, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_clocks_are_the_defaults_unless_set() {
        let vars = |set: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                set.iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        let (c, w) = clocks_from_vars(vars(&[("KWATCH_TEST_BACKOFF_START_MS", "")]));
        assert_eq!((c, w.len()), (Clocks::default(), 0));
        assert_eq!(c.short_watch, Duration::from_secs(1));
        assert_eq!(c.backoff_start, Duration::from_millis(800));
        assert_eq!(c.bookmark_floor, Duration::from_secs(10));
        let (c, w) = clocks_from_vars(vars(&[
            ("KWATCH_TEST_SHORT_WATCH_MS", "0"),
            ("KWATCH_TEST_BACKOFF_START_MS", "20"),
            ("KWATCH_TEST_BOOKMARK_FLOOR_MS", "0"),
        ]));
        assert_eq!(c.short_watch, Duration::ZERO);
        assert_eq!(c.backoff_start, Duration::from_millis(20));
        assert_eq!(c.bookmark_floor, Duration::ZERO);
        assert!(w.is_empty());
        let (c, w) = clocks_from_vars(vars(&[
            ("KWATCH_TEST_SHORT_WATCH_MS", "1s"),
            ("KWATCH_TEST_BACKOFF_START_MS", "-5"),
        ]));
        assert_eq!(c, Clocks::default());
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].contains("KWATCH_TEST_SHORT_WATCH_MS(\"1s\")"), "{w:?}");
    }
}
