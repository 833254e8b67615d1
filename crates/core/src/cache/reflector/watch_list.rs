//! The first half of client-go's `watchList`: reading a streaming list's initial events
//! into a temporary store until the `k8s.io/initial-events-end` bookmark.

use std::sync::atomic::Ordering;

use futures::StreamExt;

use crate::cache::listwatch::{SourceError, WatchEvent, WatchStream};
use crate::cache::object::ObjectRef;

use super::progress::ListProgress;

/// How a streaming list's initial events ended.
pub(super) enum Outcome {
    /// The initial-events-end bookmark came: the objects, in the order each key was
    /// first added, at the bookmark's RV; the watch goes on in `stream`.
    Ended {
        stream: WatchStream,
        resource_version: String,
        items: Vec<ObjectRef>,
    },
    /// The stream failed (an ERROR event, a broken or undecodable stream).
    Failed(SourceError),
    /// The stream ended before the bookmark, after `events` events.
    Closed { events: u64 },
}

/// Reads `stream`'s initial events, counting objects into `progress`. `waiting(events)` is
/// called once when the end bookmark has not come after `wait`: the reading goes on, as
/// client-go's does.
pub(super) async fn initial_events(
    mut stream: WatchStream,
    progress: &ListProgress,
    wait: std::time::Duration,
    waiting: &mut (dyn FnMut(u64) + Send),
) -> Outcome {
    progress.reset();
    let mut temp = TempStore::default();
    let mut events = 0u64;
    let deadline = tokio::time::Instant::now() + wait;
    let mut said = false;
    loop {
        let item = if said {
            stream.next().await
        } else {
            match tokio::time::timeout_at(deadline, stream.next()).await {
                Ok(item) => item,
                Err(_) => {
                    said = true;
                    waiting(events);
                    continue;
                }
            }
        };
        let Some(item) = item else { break };
        events += 1;
        match item {
            Ok(WatchEvent::Added(o)) | Ok(WatchEvent::Modified(o)) => {
                if temp.insert(o) {
                    progress.items.fetch_add(1, Ordering::Relaxed);
                }
            }
            Ok(WatchEvent::Deleted(o)) => temp.remove(&o.key()),
            Ok(WatchEvent::Bookmark {
                resource_version,
                initial_events_end: true,
            }) => {
                return Outcome::Ended {
                    stream,
                    resource_version,
                    items: temp.into_items(),
                }
            }
            Ok(WatchEvent::Bookmark { .. }) => {}
            Ok(WatchEvent::Error(status)) => return Outcome::Failed(SourceError::Api(status)),
            Err(e) => return Outcome::Failed(e),
        }
    }
    Outcome::Closed { events }
}

/// A watch-list's temporary store: key → object, listed in the order each key was first
/// added (a key deleted and added again keeps its first place).
#[derive(Default)]
struct TempStore {
    /// Invariant: every index is `< slots.len()`, and each slot has one key.
    index: foldhash::HashMap<String, usize>,
    /// `None`: deleted.
    slots: Vec<Option<ObjectRef>>,
}

impl TempStore {
    /// Adds or replaces the object under its key; whether the key was absent.
    fn insert(&mut self, obj: ObjectRef) -> bool {
        match self.index.entry(obj.key()) {
            std::collections::hash_map::Entry::Occupied(e) => {
                self.slots[*e.get()].replace(obj).is_none()
            }
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(self.slots.len());
                self.slots.push(Some(obj));
                true
            }
        }
    }

    fn remove(&mut self, key: &str) {
        if let Some(&i) = self.index.get(key) {
            self.slots[i] = None;
        }
    }

    fn into_items(self) -> Vec<ObjectRef> {
        self.slots.into_iter().flatten().collect()
    }
}
