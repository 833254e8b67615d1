//! [`FakeSource`]: an in-memory [`ListerWatcher`] whose objects a program changes itself,
//! after client-go's `tools/cache/testing/fake_controller_source.go`: what a library user
//! runs a reflector or an informer on to test handlers without a cluster.
//!
//! Every change gets the next resourceVersion (1, 2, …), written into the object's
//! `metadata.resourceVersion` as a server would; the whole history is kept, so a watch from
//! any resourceVersion gets every later change, in order. A list answers the current
//! objects in one page; a watch with `sendInitialEvents` (a streaming list, client-go ≥ 0.35)
//! answers them as `ADDED` events, then the `k8s.io/initial-events-end` bookmark, then the
//! changes. A watch ends at its `timeoutSeconds`, as a server ends it.
//!
//! ```
//! use kwatch_core::cache::fake::FakeSource;
//! use kwatch_core::cache::listwatch::{ListOptions, ListerWatcher, WatchEvent, WatchOptions};
//! use futures::StreamExt;
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let fake = FakeSource::new();
//! let meta = json!({"name": "a", "namespace": "ns"});
//! let cm = |data| json!({"kind": "ConfigMap", "metadata": meta.clone(), "data": data});
//! fake.apply(cm(json!({})))?;
//! let page = fake.list(ListOptions::default()).await?;
//! assert_eq!(page.resource_version, "1");
//! assert_eq!(page.items[0].key(), "ns/a");
//!
//! // A watch from the list's resourceVersion gets what changed after it.
//! let opts = WatchOptions {
//!     resource_version: page.resource_version,
//!     timeout_seconds: 300,
//!     ..WatchOptions::default()
//! };
//! let mut watch = fake.watch(opts).await?;
//! fake.apply(cm(json!({"k": "v"})))?;
//! fake.delete("ns/a");
//! match watch.events.next().await {
//!     Some(Ok(WatchEvent::Modified(o))) => assert_eq!(o.resource_version(), "2"),
//!     other => panic!("{other:?}"),
//! }
//! match watch.events.next().await {
//!     Some(Ok(WatchEvent::Deleted(o))) => assert_eq!(o.resource_version(), "3"),
//!     other => panic!("{other:?}"),
//! }
//! # Ok(())
//! # }
//! ```

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::watch;

use crate::cache::listwatch::{
    ApiStatus, ListOptions, ListPage, ListerWatcher, SourceError, Watch, WatchEvent, WatchOptions,
};
use crate::cache::object::{Object, ObjectRef};

/// Why [`FakeSource::apply`] refused an object.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("not a Kubernetes object: a JSON object whose metadata is an object")]
    NotAnObject,
    #[error("the object's metadata does not read")]
    Metadata(#[source] serde_json::Error),
}

/// An in-memory source of one collection (see the module doc). Clones share the objects.
#[derive(Clone)]
pub struct FakeSource {
    inner: Arc<Mutex<Inner>>,
    /// The revision of the last change, for the open watches to wake on.
    revision: watch::Sender<u64>,
}

#[derive(Default)]
struct Inner {
    /// key → the object as it is now. Invariant: `objects[k].key() == k`.
    objects: BTreeMap<String, ObjectRef>,
    /// Every change, oldest first, with its revision. Invariant: revisions strictly grow
    /// and the last is `revision`.
    history: Vec<(u64, WatchEvent)>,
    /// The revision of the last change (0: none yet).
    revision: u64,
}

impl Default for FakeSource {
    fn default() -> Self {
        FakeSource::new()
    }
}

impl FakeSource {
    /// A source with no object, at resourceVersion 0.
    pub fn new() -> FakeSource {
        FakeSource {
            inner: Arc::default(),
            revision: watch::Sender::new(0),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic under the lock leaves no change half made: every change is one push.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Creates the object, or updates the one of its namespace and name: an `ADDED` or a
    /// `MODIFIED` event, at the next resourceVersion (written into the object). Returns
    /// the object as stored.
    pub fn apply(&self, mut obj: Value) -> Result<ObjectRef, Error> {
        let meta_ok = obj.get("metadata").is_none_or(Value::is_object);
        if !obj.is_object() || !meta_ok {
            return Err(Error::NotAnObject);
        }
        let mut inner = self.lock();
        let rv = inner.revision + 1;
        obj["metadata"]["resourceVersion"] = Value::String(rv.to_string());
        let object: ObjectRef =
            Arc::new(Object::from_json(&obj.to_string()).map_err(Error::Metadata)?);
        let event = match inner.objects.insert(object.key(), object.clone()) {
            Some(_) => WatchEvent::Modified(object.clone()),
            None => WatchEvent::Added(object.clone()),
        };
        self.record(&mut inner, rv, event);
        Ok(object)
    }

    /// Deletes the object under `key` (`namespace/name`, or `name`): a `DELETED` event of
    /// its last state at the next resourceVersion. Returns that state, `None` if no
    /// object had the key (nothing changes then).
    pub fn delete(&self, key: &str) -> Option<ObjectRef> {
        let mut inner = self.lock();
        let gone = inner.objects.remove(key)?;
        let rv = inner.revision + 1;
        // Its last state at the deletion's resourceVersion, as a server sends it (the
        // stored object read once already, so its JSON reads again).
        let last = match gone.to_value() {
            mut v @ Value::Object(_) => {
                v["metadata"]["resourceVersion"] = Value::String(rv.to_string());
                Object::from_json(&v.to_string()).ok().map(Arc::new)
            }
            _ => None,
        };
        let last = last.unwrap_or(gone);
        self.record(&mut inner, rv, WatchEvent::Deleted(last.clone()));
        Some(last)
    }

    /// The resourceVersion of the last change ("0" before any).
    pub fn resource_version(&self) -> String {
        self.lock().revision.to_string()
    }

    /// The objects as they are now, in key order.
    pub fn objects(&self) -> Vec<ObjectRef> {
        self.lock().objects.values().cloned().collect()
    }

    fn record(&self, inner: &mut Inner, rv: u64, event: WatchEvent) {
        inner.revision = rv;
        inner.history.push((rv, event));
        self.revision.send_replace(rv);
    }

    /// The events after revision `from`, and the revision they lead to.
    fn since(&self, from: u64) -> (Vec<WatchEvent>, u64) {
        let inner = self.lock();
        let start = inner.history.partition_point(|(rv, _)| *rv <= from);
        let events = inner.history[start..].iter().map(|(_, e)| e.clone());
        (events.collect(), inner.revision.max(from))
    }
}

/// A resourceVersion as the fake's revision: "" and "0" (any) are now.
fn revision_of(rv: &str, now: u64) -> Result<u64, SourceError> {
    match rv {
        "" | "0" => Ok(now),
        _ => rv.parse().map_err(|_| {
            SourceError::Api(ApiStatus {
                code: 400,
                reason: "BadRequest".to_owned(),
                message: format!("invalid resourceVersion {rv:?}"),
                ..ApiStatus::default()
            })
        }),
    }
}

impl ListerWatcher for FakeSource {
    async fn list(&self, _opts: ListOptions) -> Result<ListPage, SourceError> {
        let inner = self.lock();
        Ok(ListPage {
            resource_version: inner.revision.to_string(),
            items: inner.objects.values().cloned().collect(),
            ..ListPage::default()
        })
    }

    async fn watch(&self, opts: WatchOptions) -> Result<Watch, SourceError> {
        let timeout = Duration::from_secs(opts.timeout_seconds.into());
        let deadline = tokio::time::Instant::now() + timeout;
        let mut woken = self.revision.subscribe();
        let mut queued = VecDeque::new();
        let from = if opts.send_initial_events {
            let inner = self.lock();
            queued.extend(inner.objects.values().cloned().map(WatchEvent::Added));
            queued.push_back(WatchEvent::Bookmark {
                resource_version: inner.revision.to_string(),
                initial_events_end: true,
            });
            inner.revision
        } else {
            revision_of(&opts.resource_version, *woken.borrow_and_update())?
        };
        let source = self.clone();
        let state = (source, from, queued, woken);
        let events =
            futures::stream::unfold(state, move |(source, from, mut queued, mut woken)| {
                async move {
                    let mut from = from;
                    loop {
                        if let Some(e) = queued.pop_front() {
                            return Some((Ok(e), (source, from, queued, woken)));
                        }
                        let (events, now) = source.since(from);
                        from = now;
                        if !events.is_empty() {
                            queued.extend(events);
                            continue;
                        }
                        // Ends at the watch's timeout, or when the source is gone.
                        tokio::select! {
                            changed = woken.changed() => changed.ok()?,
                            _ = tokio::time::sleep_until(deadline) => return None,
                        }
                    }
                }
            });
        Ok(Watch::json(Box::pin(events)))
    }
}

#[cfg(test)]
mod tests {
    use futures::StreamExt;
    use serde_json::json;

    use super::*;

    fn cm(name: &str) -> Value {
        let meta = json!({"name": name, "namespace": "d"});
        json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": meta})
    }

    fn brief(e: &WatchEvent) -> String {
        match e {
            WatchEvent::Added(o) => format!("ADDED {}@{}", o.key(), o.resource_version()),
            WatchEvent::Modified(o) => format!("MODIFIED {}@{}", o.key(), o.resource_version()),
            WatchEvent::Deleted(o) => format!("DELETED {}@{}", o.key(), o.resource_version()),
            WatchEvent::Bookmark {
                resource_version,
                initial_events_end,
            } => format!("BOOKMARK {resource_version} end={initial_events_end}"),
            WatchEvent::Error(s) => format!("ERROR {}", s.code),
        }
    }

    async fn next(w: &mut Watch) -> String {
        brief(&w.events.next().await.unwrap().unwrap())
    }

    #[tokio::test(start_paused = true)]
    async fn a_watch_from_an_old_revision_replays_the_history_then_ends_at_its_timeout() {
        let fake = FakeSource::new();
        fake.apply(cm("a")).unwrap();
        fake.apply(cm("b")).unwrap();
        fake.apply(cm("a")).unwrap();
        assert_eq!(fake.delete("d/b").unwrap().resource_version(), "4");
        assert!(fake.delete("d/b").is_none(), "nothing to delete");
        assert_eq!(fake.resource_version(), "4");
        let opts = WatchOptions {
            resource_version: "1".into(),
            timeout_seconds: 5,
            ..WatchOptions::default()
        };
        let mut w = fake.watch(opts).await.unwrap();
        assert_eq!(next(&mut w).await, "ADDED d/b@2");
        assert_eq!(next(&mut w).await, "MODIFIED d/a@3");
        assert_eq!(next(&mut w).await, "DELETED d/b@4");
        fake.apply(cm("c")).unwrap();
        assert_eq!(next(&mut w).await, "ADDED d/c@5");
        // Nothing more: the watch ends at its timeout.
        assert!(w.events.next().await.is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn a_streaming_list_sends_the_objects_then_the_end_bookmark_then_changes() {
        let fake = FakeSource::new();
        fake.apply(cm("a")).unwrap();
        fake.apply(cm("b")).unwrap();
        let opts = WatchOptions {
            send_initial_events: true,
            timeout_seconds: 5,
            ..WatchOptions::default()
        };
        let mut w = fake.watch(opts).await.unwrap();
        fake.delete("d/a");
        assert_eq!(next(&mut w).await, "ADDED d/a@1");
        assert_eq!(next(&mut w).await, "ADDED d/b@2");
        assert_eq!(next(&mut w).await, "BOOKMARK 2 end=true");
        assert_eq!(next(&mut w).await, "DELETED d/a@3");
    }

    #[tokio::test]
    async fn a_list_is_the_objects_now_and_bad_input_is_refused() {
        let fake = FakeSource::new();
        assert!(matches!(fake.apply(json!("pod")), Err(Error::NotAnObject)));
        assert!(matches!(
            fake.apply(json!({"metadata": 1})),
            Err(Error::NotAnObject)
        ));
        assert!(matches!(
            fake.apply(json!({"metadata": {"name": 1}})),
            Err(Error::Metadata(_))
        ));
        fake.apply(cm("b")).unwrap();
        fake.apply(cm("a")).unwrap();
        let page = fake.list(ListOptions::default()).await.unwrap();
        let keys: Vec<String> = page.items.iter().map(|o| o.key()).collect();
        assert_eq!(keys, ["d/a", "d/b"]);
        assert_eq!(page.resource_version, "2");
        let bad = WatchOptions {
            resource_version: "x".into(),
            ..WatchOptions::default()
        };
        assert!(fake.watch(bad).await.is_err());
    }
}
