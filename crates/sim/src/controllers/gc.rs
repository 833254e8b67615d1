//! The garbage collector (pkg/controller/garbagecollector), for any kind that names an
//! owner by uid in `metadata.ownerReferences`, custom resources included:
//! - a dependent none of whose owners is left standing is deleted — in the foreground
//!   (so its own dependents go first) when an owner waits for it (`foregroundDeletion` and
//!   `blockOwnerDeletion: true`) and it has dependents of its own, else in the background;
//! - a dependent with an owner still standing loses its references to the gone, orphaning
//!   and foreground-deleting owners;
//! - an owner deleted with `propagationPolicy: Orphan` (finalizer `orphan`) loses the
//!   finalizer once no dependent names it any more; one deleted in the foreground (finalizer
//!   `foregroundDeletion`) once no dependent blocks it. An object whose last finalizer is
//!   removed goes ([`super::super::storage::Store::update`]).
//!
//! Each pass reads the owners of every object that has any: one step of each kind per pass,
//! so a deletion is seen leaving level by level.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::{json, Value};

use super::super::resources::RESOURCES;
use super::super::storage::{
    finalizers_of, make_key, Obj, OwnerLink, Propagation, Store, FOREGROUND, ORPHAN,
};

/// How a dependent's owner stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Owner {
    /// Not deleted, or deleted without waiting on its dependents.
    Standing,
    /// Gone (no object has the uid).
    Gone,
    /// Deleted with `propagationPolicy: Orphan`, not yet gone.
    Orphaning,
    /// Deleted with `propagationPolicy: Foreground`, not yet gone.
    Foreground,
}

/// An object with owner references.
struct Dependent {
    res: usize,
    obj: Arc<Obj>,
}

impl Dependent {
    fn refs(&self) -> &[OwnerLink] {
        &self.obj.links.owners
    }
}

pub fn sync(s: &mut Store) {
    let (owners, dependents) = survey(s);
    let referenced: HashSet<&str> = dependents
        .iter()
        .flat_map(|d| d.refs().iter().map(|r| r.uid.as_str()))
        .collect();
    let standing = |uid: &str| owners.get(uid).map_or(Owner::Gone, |(_, _, o)| *o);
    for d in &dependents {
        collect(s, d, &standing, referenced.contains(d.obj.uid.as_str()));
    }
    // Finalizers of owners that no dependent holds back any more (as the pass began).
    let blocking: HashSet<&str> = dependents
        .iter()
        .flat_map(|d| {
            d.refs()
                .iter()
                .filter(|r| r.block_owner_deletion)
                .map(|r| r.uid.as_str())
        })
        .collect();
    for (uid, (res, key, how)) in &owners {
        let done = match how {
            Owner::Orphaning => (!referenced.contains(uid.as_str())).then_some(ORPHAN),
            Owner::Foreground => (!blocking.contains(uid.as_str())).then_some(FOREGROUND),
            _ => None,
        };
        if let Some(f) = done {
            remove_finalizer(s, *res, key, f);
        }
    }
}

/// Every object's uid with how it stands as an owner, and every object with owner
/// references (read off [`super::super::storage::Links`]: only objects being deleted are
/// parsed, for their finalizers).
#[allow(clippy::type_complexity)]
fn survey(s: &Store) -> (HashMap<String, (usize, String, Owner)>, Vec<Dependent>) {
    let mut owners = HashMap::new();
    let mut dependents = Vec::new();
    for res in 0..RESOURCES.len() {
        for o in s.objects(res) {
            let how = if o.links.deleting {
                let fins = finalizers_of(&o.value()["metadata"]);
                if fins.iter().any(|f| f == ORPHAN) {
                    Owner::Orphaning
                } else if fins.iter().any(|f| f == FOREGROUND) {
                    Owner::Foreground
                } else {
                    Owner::Standing
                }
            } else {
                Owner::Standing
            };
            owners.insert(o.uid.clone(), (res, o.key.clone(), how));
            if !o.links.owners.is_empty() {
                dependents.push(Dependent {
                    res,
                    obj: o.clone(),
                });
            }
        }
    }
    (owners, dependents)
}

/// One dependent: released from owners that let it go, or deleted when none stands.
fn collect(s: &mut Store, d: &Dependent, standing: &dyn Fn(&str) -> Owner, has_dependents: bool) {
    let refs = d.refs();
    let how: Vec<Owner> = refs.iter().map(|r| standing(&r.uid)).collect();
    if how.iter().all(|h| *h == Owner::Standing) {
        return;
    }
    let any_standing = how.contains(&Owner::Standing);
    let only_orphaning = how.iter().all(|h| *h == Owner::Orphaning);
    if any_standing || only_orphaning {
        let mut v = d.obj.value();
        let kept: Vec<Value> = v["metadata"]["ownerReferences"]
            .as_array()
            .map(|refs| {
                refs.iter()
                    .filter(|r| standing(r["uid"].as_str().unwrap_or_default()) == Owner::Standing)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        set_list(&mut v, "ownerReferences", kept);
        let _ = s.update(d.res, &d.obj.key, v);
        return;
    }
    if d.obj.links.deleting {
        return;
    }
    let waited_for = refs
        .iter()
        .zip(&how)
        .any(|(r, h)| *h == Owner::Foreground && r.block_owner_deletion);
    let policy = if waited_for && has_dependents {
        Propagation::Foreground
    } else {
        Propagation::Background
    };
    let _ = s.delete_with(d.res, &d.obj.key, policy);
}

fn remove_finalizer(s: &mut Store, res: usize, key: &str, finalizer: &str) {
    let Some(o) = s.get(res, key) else { return };
    let mut v = o.value();
    let fins: Vec<String> = finalizers_of(&v["metadata"])
        .into_iter()
        .filter(|f| f != finalizer)
        .collect();
    set_list(&mut v, "finalizers", fins);
    let _ = s.update(res, &make_key(&o.namespace, &o.name), v);
}

/// Sets the list `metadata.KEY` of `v` to `items`, or removes it when there are none (as
/// the API server leaves an empty list out).
fn set_list<T: serde::Serialize>(v: &mut Value, key: &str, items: Vec<T>) {
    if let Some(meta) = v["metadata"].as_object_mut() {
        if items.is_empty() {
            meta.shift_remove(key);
        } else {
            meta.insert(key.into(), json!(items));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::resources::{CONFIGMAPS, WIDGETS};
    use super::super::super::storage::Deleted;
    use super::super::runner::tests::store_with;
    use super::*;

    /// The widget `ns/w` owning the ConfigMaps `a` and `b`, deleted with `policy`: the
    /// store and what the delete did.
    fn deleted(policy: Propagation) -> (Store, Deleted) {
        let w = json!({"metadata": {"name": "w", "namespace": "ns"}, "spec": {}});
        let (mut s, w) = store_with(WIDGETS, w);
        for n in ["a", "b"] {
            let owner = json!([{"apiVersion": "example.com/v1", "kind": "Widget", "name": "w", "uid": w["metadata"]["uid"], "controller": true, "blockOwnerDeletion": true}]);
            s.create(
                CONFIGMAPS,
                json!({"metadata": {"name": n, "namespace": "ns", "ownerReferences": owner}}),
                true,
            )
            .unwrap();
        }
        let d = s.delete_with(WIDGETS, "ns/w", policy).unwrap();
        (s, d)
    }

    fn passes(s: &mut Store) {
        for _ in 0..10 {
            let r = s.rev();
            sync(s);
            if s.rev() == r {
                return;
            }
        }
        panic!("the collector does not settle");
    }

    #[test]
    fn background_deletes_the_dependents_after_the_owner() {
        let (mut s, d) = deleted(Propagation::Background);
        assert!(matches!(d, Deleted::Gone(_)));
        passes(&mut s);
        assert_eq!(s.len(CONFIGMAPS), 0);
    }

    #[test]
    fn foreground_deletes_the_dependents_before_the_owner() {
        let (mut s, d) = deleted(Propagation::Foreground);
        assert!(matches!(d, Deleted::Finalizing(_)));
        let w = s.get(WIDGETS, "ns/w").unwrap().value();
        assert_eq!(w["metadata"]["finalizers"], json!([FOREGROUND]));
        sync(&mut s);
        assert_eq!(s.len(CONFIGMAPS), 0);
        assert!(s.get(WIDGETS, "ns/w").is_some(), "the owner waits a pass");
        passes(&mut s);
        assert!(s.get(WIDGETS, "ns/w").is_none());
    }

    #[test]
    fn orphan_releases_the_dependents_then_the_owner_goes() {
        let (mut s, _) = deleted(Propagation::Orphan);
        passes(&mut s);
        assert!(s.get(WIDGETS, "ns/w").is_none());
        assert_eq!(s.len(CONFIGMAPS), 2);
        let a = s.get(CONFIGMAPS, "ns/a").unwrap().value();
        assert!(a["metadata"].get("ownerReferences").is_none(), "{a}");
    }
}
