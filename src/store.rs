//! The informer's local cache: client-go's thread-safe indexer (`cache.NewIndexer` with
//! `MetaNamespaceKeyFunc`), reduced to what kwatch needs: no index, since nothing in
//! kwatch looks objects up by namespace.
//!
//! One `Arc<Store>` is shared by the [`DeltaFifo`](crate::delta_fifo::DeltaFifo), which reads
//! it as its knownObjects (Replace tombstones, Resync, Delete filtering), and by the
//! consumer, which keeps it in step with what it pops via [`Store::apply`].
//!
//! Keys iterate in sorted order (a `BTreeMap`), so everything derived from
//! [`Store::list_keys`] — tombstones from a relist, resync deltas — comes out in a
//! deterministic order. client-go iterates a Go map here, so its order is unspecified
//! and any fixed order is a faithful one.

use std::collections::BTreeMap;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::delta::{Delta, DeltaObject, DeltaType};
use crate::object::ObjectRef;

/// A thread-safe key → object map.
#[derive(Debug, Default)]
pub struct Store {
    inner: RwLock<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// key (`namespace/name` or `name`) → the latest object applied under that key.
    /// Invariant: `items[k].key() == k`.
    items: BTreeMap<String, ObjectRef>,
}

impl Inner {
    /// Returns the object previously under `key`.
    fn insert(&mut self, key: String, obj: ObjectRef) -> Option<ObjectRef> {
        self.items.insert(key, obj)
    }

    fn remove(&mut self, key: &str) -> Option<ObjectRef> {
        self.items.remove(key)
    }
}

impl Store {
    pub fn new() -> Store {
        Store::default()
    }

    // A panic while holding the lock cannot leave `Inner` half-updated in a way later
    // readers would trip over worse than a crash, so a poisoned lock is just taken over.
    fn read(&self) -> RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Inner> {
        self.inner.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds the object, or replaces the one stored under its key.
    pub fn add(&self, obj: ObjectRef) {
        let key = obj.key();
        self.write().insert(key, obj);
    }

    /// Same as [`Store::add`] (client-go's Update is an upsert too).
    pub fn update(&self, obj: ObjectRef) {
        self.add(obj);
    }

    /// Removes and returns the object under `key`, if any.
    pub fn delete(&self, key: &str) -> Option<ObjectRef> {
        self.write().remove(key)
    }

    pub fn get(&self, key: &str) -> Option<ObjectRef> {
        self.read().items.get(key).cloned()
    }

    /// All keys, sorted.
    pub fn list_keys(&self) -> Vec<String> {
        self.read().items.keys().cloned().collect()
    }

    /// All objects, in key order.
    pub fn list(&self) -> Vec<ObjectRef> {
        self.read().items.values().cloned().collect()
    }

    /// Replaces the whole content with `objs` (a later object wins over an earlier one
    /// with the same key).
    pub fn replace(&self, objs: Vec<ObjectRef>) {
        let mut fresh = Inner::default();
        for obj in objs {
            fresh.insert(obj.key(), obj);
        }
        *self.write() = fresh;
    }

    pub fn len(&self) -> usize {
        self.read().items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.read().items.is_empty()
    }

    /// Applies one popped key's deltas, oldest first, as client-go's `HandleDeltas`
    /// does: Added / Updated / Replaced / Sync → add or update; Deleted → delete by key
    /// (a tombstone's key, which holds even when its last known object is absent).
    /// Returns the object stored under the deltas' key before them (all deltas of one
    /// popped key are about that key).
    pub fn apply(&self, deltas: &[Delta]) -> Option<ObjectRef> {
        let mut inner = self.write();
        let mut before = None;
        for (i, d) in deltas.iter().enumerate() {
            let old = match (d.kind, &d.object) {
                (DeltaType::Deleted, DeltaObject::Tombstone(t)) => inner.remove(&t.key),
                (DeltaType::Deleted, DeltaObject::Object(o)) => inner.remove(&o.key()),
                (_, DeltaObject::Object(o)) => inner.insert(o.key(), o.clone()),
                // Only Deleted deltas carry tombstones; if one ever came with another
                // type, its last known state is the best available upsert.
                (_, DeltaObject::Tombstone(t)) => match &t.obj {
                    Some(o) => inner.insert(t.key.clone(), o.clone()),
                    None => inner.items.get(&t.key).cloned(),
                },
            };
            if i == 0 {
                before = old;
            }
        }
        before
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::delta::Tombstone;
    use crate::object::Object;

    fn obj(ns: Option<&str>, name: &str, rv: &str) -> ObjectRef {
        let ns = match ns {
            Some(ns) => format!(r#","namespace":"{ns}""#),
            None => String::new(),
        };
        Arc::new(
            Object::from_json(&format!(
                r#"{{"metadata":{{"name":"{name}"{ns},"resourceVersion":"{rv}"}}}}"#
            ))
            .unwrap(),
        )
    }

    /// (key, rv) pairs, for exact comparisons.
    fn kv(objs: &[ObjectRef]) -> Vec<(String, String)> {
        objs.iter()
            .map(|o| (o.key(), o.resource_version().to_owned()))
            .collect()
    }

    fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(k, rv)| (k.to_string(), rv.to_string()))
            .collect()
    }

    /// Every object is stored under its own key.
    fn assert_keys_consistent(s: &Store) {
        let inner = s.read();
        for (k, o) in &inner.items {
            assert_eq!(&o.key(), k);
        }
    }

    /// The namespace an object is in (`""` for cluster-scoped objects).
    fn ns_of(obj: &ObjectRef) -> &str {
        obj.meta().namespace.as_deref().unwrap_or("")
    }

    /// The stored objects in namespace `ns`, in key order.
    fn in_namespace(s: &Store, ns: &str) -> Vec<ObjectRef> {
        s.list().into_iter().filter(|o| ns_of(o) == ns).collect()
    }

    #[test]
    fn add_get_update_delete() {
        let s = Store::new();
        assert!(s.is_empty());
        s.add(obj(Some("a"), "x", "1"));
        s.add(obj(None, "node1", "2"));
        assert_eq!(s.len(), 2);
        assert_eq!(s.get("a/x").unwrap().resource_version(), "1");
        assert_eq!(s.get("node1").unwrap().resource_version(), "2");
        assert!(s.get("x").is_none());

        s.update(obj(Some("a"), "x", "3"));
        assert_eq!(s.len(), 2);
        assert_eq!(s.get("a/x").unwrap().resource_version(), "3");
        // add on an existing key is an update too.
        s.add(obj(Some("a"), "x", "4"));
        assert_eq!(s.get("a/x").unwrap().resource_version(), "4");

        assert_eq!(s.delete("a/x").unwrap().resource_version(), "4");
        assert!(s.delete("a/x").is_none());
        assert_eq!(s.list_keys(), vec!["node1".to_string()]);
        assert_keys_consistent(&s);
    }

    #[test]
    fn list_and_keys_are_sorted() {
        let s = Store::new();
        for (ns, n) in [
            (Some("b"), "z"),
            (Some("a"), "y"),
            (None, "c"),
            (Some("a"), "a"),
        ] {
            s.add(obj(ns, n, "1"));
        }
        assert_eq!(s.list_keys(), vec!["a/a", "a/y", "b/z", "c"]);
        assert_eq!(
            kv(&s.list()),
            pairs(&[("a/a", "1"), ("a/y", "1"), ("b/z", "1"), ("c", "1")])
        );
    }

    #[test]
    fn namespaces_follow_add_update_delete_replace() {
        let s = Store::new();
        s.add(obj(Some("a"), "x", "1"));
        s.add(obj(Some("a"), "y", "1"));
        s.add(obj(Some("b"), "x", "1"));
        s.add(obj(None, "n", "1"));
        assert_keys_consistent(&s);
        assert_eq!(
            kv(&in_namespace(&s, "a")),
            pairs(&[("a/x", "1"), ("a/y", "1")])
        );
        assert_eq!(kv(&in_namespace(&s, "b")), pairs(&[("b/x", "1")]));
        assert_eq!(kv(&in_namespace(&s, "")), pairs(&[("n", "1")]));
        assert!(in_namespace(&s, "zzz").is_empty());

        s.update(obj(Some("a"), "x", "2"));
        assert_keys_consistent(&s);
        assert_eq!(
            kv(&in_namespace(&s, "a")),
            pairs(&[("a/x", "2"), ("a/y", "1")])
        );

        s.delete("a/y");
        s.delete("b/x");
        assert_keys_consistent(&s);
        assert_eq!(kv(&in_namespace(&s, "a")), pairs(&[("a/x", "2")]));
        assert!(in_namespace(&s, "b").is_empty());

        s.replace(vec![
            obj(Some("c"), "p", "5"),
            obj(Some("c"), "q", "5"),
            obj(Some("c"), "p", "6"),
        ]);
        assert_keys_consistent(&s);
        assert_eq!(s.len(), 2);
        assert!(in_namespace(&s, "a").is_empty());
        assert!(in_namespace(&s, "").is_empty());
        assert_eq!(
            kv(&in_namespace(&s, "c")),
            pairs(&[("c/p", "6"), ("c/q", "5")])
        );

        s.replace(Vec::new());
        assert!(s.is_empty());
        assert_keys_consistent(&s);
    }

    #[test]
    fn apply_follows_handle_deltas() {
        let s = Store::new();
        s.add(obj(Some("a"), "gone", "1"));
        s.add(obj(Some("a"), "stale", "1"));

        // One key's deltas, applied in order: the last one decides.
        s.apply(&[
            Delta::new(DeltaType::Added, obj(Some("a"), "x", "1")),
            Delta::new(DeltaType::Updated, obj(Some("a"), "x", "2")),
        ]);
        assert_eq!(s.get("a/x").unwrap().resource_version(), "2");

        s.apply(&[Delta::new(DeltaType::Replaced, obj(Some("a"), "x", "3"))]);
        assert_eq!(s.get("a/x").unwrap().resource_version(), "3");
        s.apply(&[Delta::new(DeltaType::Sync, obj(Some("a"), "y", "4"))]);
        assert_eq!(s.get("a/y").unwrap().resource_version(), "4");

        s.apply(&[
            Delta::new(DeltaType::Updated, obj(Some("a"), "x", "5")),
            Delta::new(DeltaType::Deleted, obj(Some("a"), "x", "5")),
        ]);
        assert!(s.get("a/x").is_none());

        // Tombstones delete by their key, with or without a last known object.
        s.apply(&[Delta {
            kind: DeltaType::Deleted,
            object: DeltaObject::Tombstone(Tombstone {
                key: "a/gone".into(),
                obj: None,
            }),
        }]);
        s.apply(&[Delta {
            kind: DeltaType::Deleted,
            object: DeltaObject::Tombstone(Tombstone {
                key: "a/stale".into(),
                obj: Some(obj(Some("a"), "stale", "0")),
            }),
        }]);
        assert_eq!(s.list_keys(), vec!["a/y".to_string()]);

        // Deleted then re-Added within one batch leaves the object present.
        s.apply(&[
            Delta::new(DeltaType::Deleted, obj(Some("a"), "y", "4")),
            Delta::new(DeltaType::Added, obj(Some("a"), "y", "7")),
        ]);
        assert_eq!(s.get("a/y").unwrap().resource_version(), "7");
        assert_keys_consistent(&s);
    }

    #[test]
    fn randomized_store_matches_model() {
        use rand::rngs::SmallRng;
        use rand::{Rng, SeedableRng};

        let mut rng = SmallRng::seed_from_u64(7);
        let s = Store::new();
        let mut model: BTreeMap<String, (String, String)> = BTreeMap::new();
        let nss = [Some("a"), Some("b"), None];
        for rv in 0..5_000u64 {
            let ns = nss[rng.random_range(0..nss.len())];
            let name = format!("o{}", rng.random_range(0..8));
            let o = obj(ns, &name, &rv.to_string());
            match rng.random_range(0..10) {
                0..=4 => {
                    model.insert(o.key(), (ns.unwrap_or("").into(), rv.to_string()));
                    s.add(o);
                }
                5..=7 => {
                    let got = s.delete(&o.key()).map(|x| x.resource_version().to_owned());
                    assert_eq!(got, model.remove(&o.key()).map(|(_, rv)| rv));
                }
                8 => {
                    model.insert(o.key(), (ns.unwrap_or("").into(), rv.to_string()));
                    s.apply(&[Delta::new(DeltaType::Updated, o)]);
                }
                _ => {
                    let keep: Vec<ObjectRef> = s
                        .list()
                        .into_iter()
                        .filter(|_| rng.random_bool(0.7))
                        .collect();
                    model.retain(|k, _| keep.iter().any(|o| &o.key() == k));
                    s.replace(keep);
                }
            }
            assert_keys_consistent(&s);
        }
        let got: BTreeMap<String, (String, String)> = s
            .list()
            .iter()
            .map(|o| {
                (
                    o.key(),
                    (ns_of(o).to_owned(), o.resource_version().to_owned()),
                )
            })
            .collect();
        assert_eq!(got, model);
        for ns in ["a", "b", ""] {
            let want: Vec<&String> = model
                .iter()
                .filter(|(_, (n, _))| n == ns)
                .map(|(k, _)| k)
                .collect();
            let keys: Vec<String> = in_namespace(&s, ns).iter().map(|o| o.key()).collect();
            assert_eq!(keys.iter().collect::<Vec<_>>(), want);
        }
    }

    #[test]
    fn shared_across_threads() {
        let s = Arc::new(Store::new());
        let handles: Vec<_> = (0..4)
            .map(|t| {
                let s = Arc::clone(&s);
                std::thread::spawn(move || {
                    for i in 0..100 {
                        s.add(obj(Some(&format!("ns{t}")), &format!("o{i}"), "1"));
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(s.len(), 400);
        assert_eq!(in_namespace(&s, "ns2").len(), 100);
        assert_keys_consistent(&s);
    }
}
