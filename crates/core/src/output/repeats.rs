//! The table's `~` lines of a failure that repeats: [`Repeats`] says a repeated backoff
//! only at powers of two; a sign of a working watch ([`Body::shows_a_working_watch`])
//! starts it over, as it ends a failure for the script formats'
//! [`Health`](super::health::Health).

use std::collections::HashMap;

use crate::cache::reflector::ReflectorEvent;
use crate::informer::record::{Body, Record};

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
        if rec.body.shows_a_working_watch() {
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
