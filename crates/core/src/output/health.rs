//! The reflector's health as the script formats (`-o name|jsonpath|custom-columns|
//! watch-events`) report it. They print objects only, yet a watch that keeps failing
//! after the first sync must not go unnoticed: one diagnostic line when a resource's
//! reflector starts failing and one when it works again — never one per retry, so a
//! server that is down for an hour does not flood stderr.
//!
//! Before a resource's first sync, every wait before trying again (a backoff, a request
//! retry) gets its line as it happens, in the table's words: a failure that goes on must
//! not leave a script's user in silence until a sync that may never come. Errors that
//! will not fix themselves end the run there.
//!
//! A `--check-consistency` check that found a difference is reported too, one line per
//! such check, and so is a `--stall-after` stall, one line per silence: the user asked
//! for them, and these formats show no other record. So is a server that bends the
//! protocol in a way that keeps the informer waiting (a `Protocol` record, said once).

use std::collections::HashMap;

use crate::cache::reflector::ReflectorEvent;
use crate::context::ContextName;
use crate::informer::record::{Body, Observation, Record};
use crate::text::sanitize;

/// Per resource (and context): synced yet, and failing since when.
#[derive(Debug, Default)]
pub struct Health {
    states: HashMap<(Option<ContextName>, String), State>,
}

#[derive(Debug, Default)]
struct State {
    synced: bool,
    /// Set from the first error after the sync until a sign of a working reflector.
    failing: Option<Failing>,
}

#[derive(Debug)]
struct Failing {
    since: jiff::Timestamp,
    /// Waits (backoffs and request retries) since it started failing.
    retries: u64,
    /// Watches that ended in an error in a row, and the last one's cause.
    watch_failures: u64,
    watch_cause: String,
    /// Lists answered since it started failing: a relist works, the watch may not.
    relists: u64,
    /// The backoff causes already said in this episode: a new one is said once (a type
    /// no longer served after its watch's 404), an identical one never again.
    said: Vec<String>,
}

impl Health {
    /// The line to show for `rec` when it changes its resource's state, else `None`.
    ///
    /// Failing: a backoff, a request retried after a Retry-After or a lost connection, a
    /// watch that ended in error, a relist for an error. Working again: a sign of a
    /// working watch (a bookmark, a watch event, a watch that closed cleanly after
    /// events). A list answered is no such sign: a user who may list but not watch gets a
    /// relist after every failed watch; a watch that fails again is
    /// said, with its count, when the count reaches a power of two or its cause changes.
    pub fn observe(&mut self, rec: &Record<'_>) -> Option<String> {
        let key = (rec.context.cloned(), rec.resource.name.clone());
        let state = self.states.entry(key).or_default();
        let cause = match state.failure_cause(rec) {
            Ok(cause) => cause,
            Err(line) => return line,
        };
        let name = shown_name(rec);
        let watch_failed = match &rec.body {
            Body::Event(ReflectorEvent::WatchEnded {
                reason,
                error: true,
                ..
            }) => Some(reason.as_str()),
            _ => None,
        };
        match (&mut state.failing, cause) {
            (None, Some(cause)) => {
                state.failing = Some(Failing {
                    since: rec.time,
                    retries: u64::from(is_retry(rec)),
                    watch_failures: u64::from(watch_failed.is_some()),
                    watch_cause: watch_failed.unwrap_or_default().to_owned(),
                    relists: 0,
                    said: vec![cause.clone()],
                });
                said(format!("~ watch {name} failing, retrying: {cause}"))
            }
            (Some(f), Some(cause)) => f.failed_again(rec, &name, cause, watch_failed),
            (Some(f), None) if matches!(rec.body, Body::Event(ReflectorEvent::Listed { .. })) => {
                f.relists += 1;
                None
            }
            (Some(f), None) if rec.body.shows_a_working_watch() => {
                let took = rec.time.duration_since(f.since).unsigned_abs();
                let retries = match f.retries {
                    1 => "1 retry".to_owned(),
                    n => format!("{n} retries"),
                };
                state.failing = None;
                said(format!(
                    "~ watch {name} recovered after {retries} in {:.1}s",
                    took.as_secs_f64()
                ))
            }
            _ => None,
        }
    }
}

impl State {
    /// What `rec` says of the reflector's health: `Ok(Some(cause))` for a failure,
    /// `Ok(None)` for anything else once synced; `Err(line)` when the record is answered
    /// by a line of its own (or by none) whatever the state (a consistency difference,
    /// the sync itself, a wait before the first sync).
    fn failure_cause(&mut self, rec: &Record<'_>) -> Result<Option<String>, Option<String>> {
        Ok(match &rec.body {
            // The user asked for the check: a difference is worth a line every time.
            Body::Observed(Observation::Consistency(r)) if r.consistent == Some(false) => {
                let text = super::table::consistency_text(&shown_name(rec), r);
                return Err(said(format!("~ {text}")));
            }
            Body::Event(e @ (ReflectorEvent::Stalled { .. } | ReflectorEvent::Protocol { .. })) => {
                let text = super::table::event_text(&shown_name(rec), e);
                return Err(text.and_then(|t| said(format!("~ {t}"))));
            }
            Body::Synced => {
                self.synced = true;
                return Err(None);
            }
            Body::Event(e @ (ReflectorEvent::Backoff { .. } | ReflectorEvent::Retry(_)))
                if !self.synced =>
            {
                let text = super::table::event_text(&shown_name(rec), e);
                return Err(text.and_then(|t| said(format!("~ {t}"))));
            }
            _ if !self.synced => return Err(None),
            Body::Event(ReflectorEvent::Backoff { cause, .. }) => Some(cause.clone()),
            Body::Event(ReflectorEvent::Retry(r)) => {
                let code = r.code.map(|c| format!("{c} ")).unwrap_or_default();
                Some(format!("{}: {code}{}", r.verb.as_str(), r.reason))
            }
            Body::Event(ReflectorEvent::WatchEnded {
                reason,
                error: true,
                ..
            }) => Some(reason.clone()),
            Body::Event(ReflectorEvent::List { reason, .. }) if reason != "initial" => {
                Some(reason.clone())
            }
            _ => None,
        })
    }
}

impl Failing {
    /// Still failing with `cause`: a backoff for a cause not said yet in this episode is
    /// said once; a failed watch is said when its count in a row reaches a power of two
    /// or its cause changes.
    fn failed_again(
        &mut self,
        rec: &Record<'_>,
        name: &str,
        cause: String,
        watch_failed: Option<&str>,
    ) -> Option<String> {
        self.retries += u64::from(is_retry(rec));
        let backoff = matches!(rec.body, Body::Event(ReflectorEvent::Backoff { .. }));
        if backoff && watch_failed.is_none() && !self.said.contains(&cause) {
            let line = format!("~ watch {name} still failing, retrying: {cause}");
            self.said.push(cause);
            return said(line);
        }
        let cause = watch_failed?;
        self.watch_failures += 1;
        let changed = self.watch_cause != cause;
        self.watch_cause = cause.to_owned();
        if !changed && !self.watch_failures.is_power_of_two() {
            return None;
        }
        let list = match self.relists {
            0 => String::new(),
            1 => "; the list works: relisted once".to_owned(),
            n => format!("; the list works: relisted {n} times"),
        };
        said(format!(
            "~ watch {name} failed again, {} times in a row: {cause}{list}",
            self.watch_failures
        ))
    }
}

/// A line as it reaches a terminal: server text in it escaped.
fn said(line: String) -> Option<String> {
    Some(sanitize(&line).into_owned())
}

/// The resource as the lines name it (with its context when there are several).
fn shown_name(rec: &Record<'_>) -> String {
    match rec.context {
        Some(c) => format!("{} in {c}", rec.resource.name),
        None => rec.resource.name.clone(),
    }
}

/// A wait before trying again: the reflector's backoff or the request layer's retry.
fn is_retry(rec: &Record<'_>) -> bool {
    matches!(
        rec.body,
        Body::Event(ReflectorEvent::Backoff { .. } | ReflectorEvent::Retry(_))
    )
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::cache::delta::{Delta, DeltaType};
    use crate::cache::testutil::object;
    use crate::client::target::Resource;

    /// The lines `h` says for `steps`, all at one instant with no context.
    fn observe_all<'a>(
        h: &mut Health,
        r: &'a Resource,
        steps: impl IntoIterator<Item = Body<'a>>,
    ) -> Vec<String> {
        let time = "2026-11-21T10:00:00Z".parse().unwrap();
        steps
            .into_iter()
            .filter_map(|body| h.observe(&Record::new(r, None, time, body)))
            .collect()
    }

    /// A stall is said every time (one `Stalled` per silence).
    #[test]
    fn a_stall_is_said_each_time() {
        let r = Resource::pods();
        let mut h = Health::default();
        let stalled = ReflectorEvent::Stalled {
            silent: Duration::from_secs(30),
            watch_age: Duration::from_secs(95),
            resource_version: "12".into(),
            restart: true,
        };
        let lines = observe_all(
            &mut h,
            &r,
            [Body::Synced, Body::Event(&stalled), Body::Event(&stalled)],
        );
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert_eq!(
            lines[0],
            "~ watch pods stalled: nothing for 30.0s (open 95.0s, at rv=12); watching again \
             from there"
        );
    }

    #[test]
    fn one_line_when_failing_starts_and_one_when_it_ends_none_per_retry() {
        let r = Resource::pods();
        let mut h = Health::default();
        let mut t: jiff::Timestamp = "2026-11-21T10:00:00Z".parse().unwrap();
        let backoff = ReflectorEvent::Backoff {
            delay: Duration::from_millis(800),
            cause: "watch: 429 Too Many Requests".into(),
        };
        let watch = ReflectorEvent::Watch {
            resource_version: "9".into(),
            timeout_seconds: 300,
        };
        let ended = ReflectorEvent::WatchEnded {
            reason: "connection lost".into(),
            events: 0,
            bookmarks: 0,
            elapsed: Duration::from_secs(3),
            error: false,
        };
        let obj = object(r#"{"metadata":{"name":"a","namespace":"d","resourceVersion":"10"}}"#);
        let added = Delta::new(DeltaType::Added, obj);
        let delta = |initial_list| Body::Delta {
            key: "d/a",
            delta: &added,
            initial_list,
            prev: None,
        };
        let mut lines = Vec::new();
        let prod = ContextName::from("prod");
        let steps = [
            Body::Event(&backoff), // before the sync: shown as it happens
            delta(true),
            Body::Synced,
            Body::Event(&ended), // a clean close is no failure
            Body::Event(&watch),
            Body::Event(&backoff),
            Body::Event(&watch),
            Body::Event(&backoff),
            Body::Event(&watch),
            Body::Event(&backoff),
            Body::Event(&watch),
            delta(false),
            delta(false),
            Body::Event(&backoff),
        ];
        for body in steps {
            t = t
                .checked_add(jiff::SignedDuration::from_millis(500))
                .unwrap();
            let rec = Record::new(&r, Some(&prod), t, body);
            lines.extend(h.observe(&rec));
        }
        assert_eq!(
            lines,
            [
                "~ backoff pods in prod 800ms: watch: 429 Too Many Requests",
                "~ watch pods in prod failing, retrying: watch: 429 Too Many Requests",
                "~ watch pods in prod recovered after 3 retries in 3.0s",
                "~ watch pods in prod failing, retrying: watch: 429 Too Many Requests",
            ]
        );
    }

    /// A user who may list but not watch. Each relist works and prints
    /// the list again; that is no recovery of the watch, whose failures are counted.
    #[test]
    fn a_relist_is_no_recovery_while_every_watch_fails() {
        let r = Resource::pods();
        let mut h = Health::default();
        let cause = "watch: 403 Forbidden: pods is forbidden";
        let ended = ReflectorEvent::WatchEnded {
            reason: cause.into(),
            events: 0,
            bookmarks: 0,
            elapsed: Duration::ZERO,
            error: true,
        };
        let backoff = ReflectorEvent::Backoff {
            delay: Duration::from_millis(800),
            cause: cause.into(),
        };
        let list = ReflectorEvent::list("9", 0, cause, false);
        let listed = ReflectorEvent::listed("9", 1, "json", 4214);
        let obj = object(r#"{"metadata":{"name":"a","namespace":"d","resourceVersion":"9"}}"#);
        let replaced = Delta::new(DeltaType::Replaced, obj);
        let mut steps = vec![Body::Synced];
        for _ in 0..4 {
            steps.extend([
                Body::Event(&ended),
                Body::Event(&backoff),
                Body::Event(&list),
                Body::Event(&listed),
                Body::Delta {
                    key: "d/a",
                    delta: &replaced,
                    initial_list: false,
                    prev: None,
                },
            ]);
        }
        let lines = observe_all(&mut h, &r, steps);
        assert_eq!(
            lines,
            [
                format!("~ watch pods failing, retrying: {cause}"),
                format!(
                    "~ watch pods failed again, 2 times in a row: {cause}; the list works: relisted once"
                ),
                format!(
                    "~ watch pods failed again, 4 times in a row: {cause}; the list works: relisted 3 times"
                ),
            ]
        );
    }

    #[test]
    fn the_request_layers_retries_count_as_failing_too() {
        let r = Resource::pods();
        let mut h = Health::default();
        let retry = ReflectorEvent::Retry(crate::cache::retry::Retry {
            verb: crate::cache::retry::Verb::Watch,
            code: Some(429),
            reason: "TooManyRequests".into(),
            delay: Duration::from_secs(2),
            attempt: 1,
            max_retries: 10,
        });
        let bookmark = ReflectorEvent::Bookmark {
            resource_version: "12".into(),
        };
        let steps = [
            Body::Synced,
            Body::Event(&retry),
            Body::Event(&retry),
            Body::Event(&bookmark),
        ];
        let lines = observe_all(&mut h, &r, steps);
        assert_eq!(
            lines,
            [
                "~ watch pods failing, retrying: watch: 429 TooManyRequests",
                "~ watch pods recovered after 2 retries in 0.0s",
            ]
        );
    }
}
