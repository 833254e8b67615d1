//! The reflector's health as the script formats (`-o name|jsonpath|custom-columns|
//! watch-events`) report it. They print objects only, yet a watch that keeps failing
//! after the first sync must not go unnoticed: one diagnostic line when a resource's
//! reflector starts failing and one when it works again — never one per retry, so a
//! server that is down for an hour does not flood stderr.
//!
//! Before a resource's first sync, every wait before trying again (a backoff, a request
//! retry) gets its line as it happens, in the table's words: a failure that goes on must
//! not leave a script's user in silence until a sync that may never come (issue 19 item
//! 4). Errors that will not fix themselves end the run there.
//!
//! A `--check-consistency` check that found a difference is reported too, one line per
//! such check: the user asked for it, and these formats show no other record.

use std::collections::HashMap;

use super::sanitize::sanitize;
use super::{Body, Record};
use crate::reflector::ReflectorEvent;

/// Per resource (and context): synced yet, and failing since when.
#[derive(Debug, Default)]
pub struct Health {
    states: HashMap<(Option<String>, String), State>,
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
}

impl Health {
    /// The line to show for `rec` when it changes its resource's state, else `None`.
    ///
    /// Failing: a backoff, a request retried after a Retry-After or a lost connection, a
    /// watch that ended in error, a relist for an error. Working
    /// again: a list answered, a bookmark, a watch event (a delta outside the initial
    /// list, a watch that closed cleanly after events).
    pub fn observe(&mut self, rec: &Record<'_>) -> Option<String> {
        let key = (rec.context.map(str::to_owned), rec.resource.name.clone());
        let state = self.states.entry(key).or_default();
        let cause = match &rec.body {
            // The user asked for the check: a difference is worth a line every time.
            Body::Event(ReflectorEvent::Consistency(r)) if r.consistent == Some(false) => {
                let text = super::table::consistency_text(&shown_name(rec), r);
                return Some(sanitize(&format!("~ {text}")).into_owned());
            }
            Body::Synced => {
                state.synced = true;
                return None;
            }
            Body::Event(e @ (ReflectorEvent::Backoff { .. } | ReflectorEvent::Retry(_)))
                if !state.synced =>
            {
                let text = super::table::event_text(&shown_name(rec), e)?;
                return Some(sanitize(&format!("~ {text}")).into_owned());
            }
            _ if !state.synced => return None,
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
        };
        let working = matches!(
            &rec.body,
            Body::Event(
                ReflectorEvent::Listed { .. }
                    | ReflectorEvent::Bookmark { .. }
                    | ReflectorEvent::WatchEnded {
                        error: false,
                        events: 1..,
                        ..
                    }
            ) | Body::Delta {
                initial_list: false,
                ..
            }
        );
        let name = shown_name(rec);
        match (&mut state.failing, cause) {
            (None, Some(cause)) => {
                state.failing = Some(Failing {
                    since: rec.time,
                    retries: u64::from(is_retry(rec)),
                });
                Some(sanitize(&format!("~ watch {name} failing, retrying: {cause}")).into_owned())
            }
            (Some(f), Some(_)) => {
                f.retries += u64::from(is_retry(rec));
                None
            }
            (Some(f), None) if working => {
                let took = rec.time.duration_since(f.since).unsigned_abs();
                let retries = match f.retries {
                    1 => "1 retry".to_owned(),
                    n => format!("{n} retries"),
                };
                state.failing = None;
                Some(
                    sanitize(&format!(
                        "~ watch {name} recovered after {retries} in {:.1}s",
                        took.as_secs_f64()
                    ))
                    .into_owned(),
                )
            }
            _ => None,
        }
    }
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
    use crate::delta::{Delta, DeltaType};
    use crate::object::{Object, ObjectRef};
    use crate::target::Resource;

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
            elapsed: Duration::from_secs(3),
            error: false,
        };
        let obj = ObjectRef::new(
            Object::from_json(
                r#"{"metadata":{"name":"a","namespace":"d","resourceVersion":"10"}}"#,
            )
            .unwrap(),
        );
        let added = Delta::new(DeltaType::Added, obj);
        let delta = |initial_list| Body::Delta {
            key: "d/a",
            delta: &added,
            initial_list,
            prev: None,
        };
        let mut lines = Vec::new();
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
            let rec = Record {
                resource: &r,
                context: Some("prod"),
                time: t,
                body,
                informer: Default::default(),
            };
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

    #[test]
    fn the_request_layers_retries_count_as_failing_too() {
        let r = Resource::pods();
        let mut h = Health::default();
        let retry = ReflectorEvent::Retry(crate::retry::Retry {
            verb: crate::retry::Verb::Watch,
            code: Some(429),
            reason: "TooManyRequests".into(),
            delay: Duration::from_secs(2),
            attempt: 1,
            max_retries: 10,
        });
        let bookmark = ReflectorEvent::Bookmark {
            resource_version: "12".into(),
        };
        let lines: Vec<String> = [
            Body::Synced,
            Body::Event(&retry),
            Body::Event(&retry),
            Body::Event(&bookmark),
        ]
        .into_iter()
        .filter_map(|body| {
            h.observe(&Record {
                resource: &r,
                context: None,
                time: "2026-11-21T10:00:00Z".parse().unwrap(),
                body,
                informer: Default::default(),
            })
        })
        .collect();
        assert_eq!(
            lines,
            [
                "~ watch pods failing, retrying: watch: 429 TooManyRequests",
                "~ watch pods recovered after 2 retries in 0.0s",
            ]
        );
    }
}
