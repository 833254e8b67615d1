//! The table's `~` lines of a failure that repeats: [`Repeats`] says a repeated backoff
//! only at powers of two; [`watch_works`], the sign of a working watch that starts it over,
//! is also what ends a failure for the script formats' [`Health`](super::health::Health).

use std::collections::HashMap;

use crate::cache::reflector::ReflectorEvent;
use crate::informer::record::{Body, Record};

/// A sign of a working watch: a bookmark, a watch that closed cleanly after events or
/// bookmarks, or a delta from a watch event (not a relist's `Replaced`/`Sync` nor its
/// tombstones).
pub(super) fn watch_works(body: &Body<'_>) -> bool {
    use crate::cache::delta::DeltaType;
    match body {
        Body::Event(ReflectorEvent::Bookmark { .. }) => true,
        Body::Event(ReflectorEvent::WatchEnded {
            error: false,
            events,
            bookmarks,
            ..
        }) => events + bookmarks > 0,
        Body::Delta {
            initial_list: false,
            delta,
            ..
        } => {
            matches!(
                delta.kind,
                DeltaType::Added | DeltaType::Updated | DeltaType::Deleted
            ) && !delta.object.is_tombstone()
        }
        _ => false,
    }
}

/// The table's `~` lines of a failure that repeats: a backoff with the
/// cause of the one before is said when the count of them in a row reaches a power of
/// two, with that count, and the relist it leads to is not; a different cause or a sign
/// of a working watch starts over.
#[derive(Debug, Default)]
pub struct Repeats {
    /// Per resource (as the lines name it): the last backoff's cause and how many in a row.
    last: HashMap<String, (String, u64)>,
}

impl Repeats {
    /// `text`, the line for `rec` (an event of the resource `name`), as it is or with its
    /// count; `None` when it repeats what was said.
    pub fn filter(&mut self, name: &str, rec: &Record<'_>, text: String) -> Option<String> {
        if watch_works(&rec.body) {
            self.last.remove(name);
            return Some(text);
        }
        let Body::Event(e) = &rec.body else {
            return Some(text);
        };
        match e {
            ReflectorEvent::Backoff { cause, .. } => {
                let n = match self.last.get_mut(name) {
                    Some((c, n)) if c == cause => {
                        *n += 1;
                        *n
                    }
                    _ => {
                        self.last.insert(name.to_owned(), (cause.clone(), 1));
                        1
                    }
                };
                match n {
                    1 => Some(text),
                    n if n.is_power_of_two() => Some(format!("{text} ({n} times in a row)")),
                    _ => None,
                }
            }
            ReflectorEvent::List { reason, .. } => match self.last.get(name) {
                Some((c, n)) if c == reason && *n > 1 => None,
                _ => Some(text),
            },
            _ => Some(text),
        }
    }
}
