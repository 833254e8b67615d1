//! The informer's local cache: client-go's thread-safe indexer (`cache.NewIndexer` with
//! `MetaNamespaceKeyFunc`), reduced to what kwatch needs: no index, since nothing in
//! kwatch looks objects up by namespace.
//!
//! One `Arc<Store>` is shared by the [`DeltaFifo`](crate::cache::delta_fifo::DeltaFifo), which reads
//! it as its knownObjects (Replace tombstones, Resync, Delete filtering), and by the
//! consumer, which keeps it in step with what it pops via [`Store::apply`].
//!
//! Keys iterate in sorted order (a `BTreeMap`), so everything derived from
//! [`Store::list_keys`] — tombstones from a relist, resync deltas — comes out in a
//! deterministic order. client-go iterates a Go map here, so its order is unspecified
//! and any fixed order is a faithful one.

use std::collections::BTreeMap;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::cache::delta::{AtomicDelta, Delta, DeltaObject, DeltaType};
use crate::cache::object::ObjectRef;

/// One object's part in a popped atomic delta, in the order client-go's handlers get
/// them: `delta` (a tombstone `Deleted`, or a `ReplacedAll` or `SyncAll` of an object) and
/// the store's version of `key` before the pop (`None`: unknown, an `OnAdd`).
#[derive(Debug, Clone)]
pub struct Applied {
    pub key: String,
    pub delta: Delta,
    pub prev: Option<ObjectRef>,
}

/// A thread-safe key → object map.
///
/// ```
/// use std::sync::Arc;
/// use kwatch_core::cache::delta::{Delta, DeltaType};
/// use kwatch_core::cache::object::{Object, ObjectRef};
/// use kwatch_core::cache::store::Store;
///
/// fn cm(name: &str, rv: &str) -> ObjectRef {
///     let meta = serde_json::json!({"name": name, "namespace": "ns", "resourceVersion": rv});
///     let json = serde_json::json!({"kind": "ConfigMap", "metadata": meta});
///     Arc::new(Object::from_json(&json.to_string()).unwrap())
/// }
///
/// let store = Store::new();
/// store.add(cm("b", "1"));
/// // One popped key's deltas, oldest first: the version before them comes back.
/// let before = store.apply(&[
///     Delta::new(DeltaType::Added, cm("a", "2")),
///     Delta::new(DeltaType::Updated, cm("a", "3")),
/// ]);
/// assert!(before.is_none());
/// assert_eq!(store.get("ns/a").unwrap().resource_version(), "3");
/// let before = store.apply(&[Delta::new(DeltaType::Deleted, cm("b", "4"))]);
/// assert_eq!(before.unwrap().resource_version(), "1");
/// assert_eq!(store.list_keys(), ["ns/a"]);
/// ```
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

    /// Applies a popped atomic delta as client-go ≥ 0.36's `processDeltas` does, and says
    /// what each handler call is about (the one place `ReplacedAll` and `SyncAll` are
    /// interpreted):
    /// - `ReplacedAll` (`processReplacedAllInfo`): a tombstone for every stored key the list
    ///   lacks (key order; last known state: the store's), then a `ReplacedAll` for every
    ///   listed object (list order, with the stored version before it); the store's content
    ///   becomes the list as a whole;
    /// - `SyncAll`: a `SyncAll` for every stored object (key order), its own previous
    ///   version (client-go's `OnUpdate(obj, obj)`); the store is unchanged.
    pub fn apply_atomic(&self, delta: &AtomicDelta) -> Vec<Applied> {
        let mut inner = self.write();
        let objects = match delta {
            AtomicDelta::SyncAll => {
                return inner
                    .items
                    .iter()
                    .map(|(key, o)| Applied {
                        key: key.clone(),
                        delta: Delta::new(DeltaType::SyncAll, o.clone()),
                        prev: Some(o.clone()),
                    })
                    .collect()
            }
            AtomicDelta::ReplacedAll { objects, .. } => objects,
        };
        let listed: std::collections::HashSet<String> = objects.iter().map(|o| o.key()).collect();
        let mut applied: Vec<Applied> = inner
            .items
            .iter()
            .filter(|(key, _)| !listed.contains(*key))
            .map(|(key, o)| Applied {
                key: key.clone(),
                delta: Delta::tombstone(key.clone(), Some(o.clone())),
                prev: Some(o.clone()),
            })
            .collect();
        applied.extend(objects.iter().map(|o| {
            let key = o.key();
            Applied {
                prev: inner.items.get(&key).cloned(),
                delta: Delta::new(DeltaType::ReplacedAll, o.clone()),
                key,
            }
        }));
        let mut fresh = Inner::default();
        for o in objects {
            fresh.insert(o.key(), o.clone());
        }
        *inner = fresh;
        applied
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::cache::delta::Tombstone;
    use crate::cache::testutil::meta_object;

    fn obj(ns: Option<&str>, name: &str, rv: &str) -> ObjectRef {
        meta_object(ns.unwrap_or(""), name, rv)
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

    /// (key, type, rv, prev rv) of each applied delta, `-` for none, `†` for a tombstone.
    fn applied(a: &[Applied]) -> Vec<String> {
        a.iter()
            .map(|x| {
                let rv = |o: Option<&ObjectRef>| {
                    o.map_or("-".to_owned(), |o| o.resource_version().to_owned())
                };
                let t = if x.delta.object.is_tombstone() {
                    "†"
                } else {
                    ""
                };
                format!(
                    "{} {}{t}@{} (was {})",
                    x.delta.kind,
                    x.key,
                    rv(x.delta.object.object()),
                    rv(x.prev.as_ref())
                )
            })
            .collect()
    }

    #[test]
    fn replaced_all_tombstones_missing_keys_first_then_replaces_in_list_order() {
        // client-go v0.36 processReplacedAllInfo: deletions against the store, then the
        // list in its order, each with the stored version; the store becomes the list.
        let s = Store::new();
        s.replace(vec![
            obj(None, "a", "1"),
            obj(None, "b", "1"),
            obj(None, "z", "1"),
        ]);
        let got = s.apply_atomic(&AtomicDelta::ReplacedAll {
            resource_version: "9".into(),
            objects: vec![obj(None, "c", "9"), obj(None, "b", "2")],
        });
        assert_eq!(
            applied(&got),
            [
                "Deleted a†@1 (was 1)",
                "Deleted z†@1 (was 1)",
                "ReplacedAll c@9 (was -)",
                "ReplacedAll b@2 (was 1)",
            ]
        );
        assert_eq!(kv(&s.list()), pairs(&[("b", "2"), ("c", "9")]));
        // SyncAll: every stored object, its own previous version; nothing changes.
        let got = s.apply_atomic(&AtomicDelta::SyncAll);
        assert_eq!(
            applied(&got),
            ["SyncAll b@2 (was 2)", "SyncAll c@9 (was 9)"]
        );
        assert_eq!(kv(&s.list()), pairs(&[("b", "2"), ("c", "9")]));
        // An empty list deletes everything; an empty store syncs nothing.
        let got = s.apply_atomic(&AtomicDelta::ReplacedAll {
            resource_version: "10".into(),
            objects: vec![],
        });
        assert_eq!(
            applied(&got),
            ["Deleted b†@2 (was 2)", "Deleted c†@9 (was 9)"]
        );
        assert!(s.is_empty());
        assert!(s.apply_atomic(&AtomicDelta::SyncAll).is_empty());
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
