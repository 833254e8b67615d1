//! `--follow` and `--events`: the owner graph, fed by the informers' deltas as they pop.
//!
//! The user's resources give the roots (every object their informers deliver); the
//! children's informers watch whole namespaces and [`Graph::observe`] keeps, by uid, the
//! objects whose `metadata.ownerReferences` lead to a root, as a controller's informer
//! filters by owner client-side. Initial lists pop in any order: an object naming an owner
//! the graph has not seen is held (its last delta, sharing the store's object) until that
//! owner joins, then delivered ([`Graph::next_ready`]); one whose owners never join stays
//! held, as an object of its informer's store would be kept. An object whose owners stop
//! leading to the graph leaves it orphaned, its subtree with it, each member of that with
//! a record of its own ([`Graph::next_left`]), its object read from its informer's store
//! then: the graph keeps of a member its resource and key, never its object. Events
//! (`--events`) whose `involvedObject` is in the graph are delivered under it; one about an
//! object not seen yet is held for [`EVENT_HOLD`], then dropped.
//!
//! The cache layer knows nothing of this: the graph only decides which records the
//! informer loop prints, and with which [`Followed`].

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;

use crate::cache::delta::{Delta, DeltaType};
use crate::cache::store::Store;
use crate::client::discovery::Discovery;
use crate::client::expand::{self, Every};
use crate::client::target::{Resource, Target};
use crate::context::ContextName;
use crate::informer::record::{Followed, GraphChange, PATH_SEPARATOR};

/// The children of each built-in controller's resource, as kube-controller-manager (and
/// the endpointslice controller) creates them; followed transitively (a CronJob's Jobs'
/// Pods).
const CHILDREN: &[(&str, &[&str])] = &[
    ("deployments.apps", &["replicasets.apps"]),
    ("replicasets.apps", &["pods"]),
    (
        "statefulsets.apps",
        &["pods", "controllerrevisions.apps", "persistentvolumeclaims"],
    ),
    ("daemonsets.apps", &["pods", "controllerrevisions.apps"]),
    ("jobs.batch", &["pods"]),
    ("cronjobs.batch", &["jobs.batch"]),
    ("services", &["endpointslices.discovery.k8s.io"]),
];

/// How long an Event about an object the graph has not seen is held before it is
/// dropped: longer than an initial list of a large namespace takes to pop.
pub const EVENT_HOLD: Duration = Duration::from_secs(30);

/// The child resources the built-in controllers of `roots` create, transitively, the
/// roots left out; `None` when a root is none of theirs (a custom resource: discovery's
/// namespaced resources are its candidates).
pub fn builtin_children(roots: &[&str]) -> Option<Vec<&'static str>> {
    let mut out: Vec<&'static str> = Vec::new();
    let mut todo: Vec<&str> = roots.to_vec();
    while let Some(r) = todo.pop() {
        let (_, kids) = CHILDREN.iter().find(|(p, _)| *p == r)?;
        for k in kids.iter() {
            if !out.contains(k) && !roots.contains(k) {
                out.push(k);
                if CHILDREN.iter().any(|(p, _)| p == k) {
                    todo.push(k);
                }
            }
        }
    }
    Some(out)
}

/// The targets the graph adds to the user's `roots`: `--follow`'s child resources (the
/// built-in defaults a server lacks are left out; one the user names must exist) and
/// `--events`' core/v1 Events. `docs` makes a discovery client (each resolution takes one).
pub async fn graph_targets(
    docs: impl Fn() -> Discovery,
    roots: &[Target],
    follow: Option<&KindsSpec>,
    events: bool,
) -> Result<Vec<Target>, KindsError> {
    let mut out: Vec<Target> = Vec::new();
    if let Some(spec) = follow {
        let names: Vec<&str> = roots.iter().map(|t| t.resource.name.as_str()).collect();
        out = match builtin_children(&names) {
            _ if !spec.only.is_empty() => resolve_each(&docs, &spec.only, true).await?,
            Some(kids) => resolve_each(&docs, &kids, false).await?,
            // A custom resource's children may be of any kind: every namespaced one.
            None => {
                let every = Some(Every {
                    namespaced_only: true,
                });
                expand::targets(docs(), "", every).await?
            }
        };
        out.extend(resolve_each(&docs, &spec.add, true).await?);
        let removed = resolve_each(&docs, &spec.remove, true).await?;
        out.retain(|t| !removed.contains(t));
    }
    if events {
        out.extend(resolve_each(&docs, &["events"], true).await?);
    }
    let mut unique: Vec<Target> = Vec::new();
    for t in out {
        if !roots.contains(&t) && !unique.contains(&t) {
            unique.push(t);
        }
    }
    Ok(unique)
}

/// Each of `names` resolved; one the server lacks is an error when `strict`, else left out.
async fn resolve_each<S: AsRef<str>>(
    docs: &impl Fn() -> Discovery,
    names: &[S],
    strict: bool,
) -> Result<Vec<Target>, KindsError> {
    let mut out = Vec::new();
    for n in names {
        let n = n.as_ref();
        match expand::targets(docs(), n, None).await {
            Ok(t) => out.extend(t),
            Err(e) if strict => return Err(KindsError::Named(e)),
            Err(e) => tracing::info!("--follow: {n} left out: {}", crate::text::Chain(&e)),
        }
    }
    Ok(out)
}

/// `--follow-kinds K,…`: `K` entries replace the default children, `+K` adds to them,
/// `-K` takes away; any mix.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KindsSpec {
    pub only: Vec<String>,
    pub add: Vec<String>,
    pub remove: Vec<String>,
}

/// Why the resources `--follow` or `--events` would watch could not be resolved.
#[derive(Debug, thiserror::Error)]
pub enum KindsError {
    /// A kind `--follow-kinds` or `--events` names is not the server's.
    #[error("--follow-kinds, --events")]
    Named(#[source] expand::Error),
    /// Discovery of every namespaced resource failed.
    #[error(transparent)]
    Every(#[from] expand::Error),
}

/// `--follow-kinds` that is not a comma list of resources, each bare, `+` or `-`.
#[derive(Debug, thiserror::Error)]
#[error(
    "--follow-kinds {0:?}: expected resources such as `pods`, `+configmaps` (add) or `-pods` \
     (take away), comma-separated"
)]
pub struct BadKinds(String);

impl KindsSpec {
    pub fn parse(s: &str) -> Result<KindsSpec, BadKinds> {
        let mut spec = KindsSpec::default();
        for part in s.split(',').map(str::trim) {
            let (list, name) = match part.as_bytes().first() {
                Some(b'+') => (&mut spec.add, &part[1..]),
                Some(b'-') => (&mut spec.remove, &part[1..]),
                _ => (&mut spec.only, part),
            };
            if name.is_empty() || name.contains(['/', ' ']) {
                return Err(BadKinds(s.to_owned()));
            }
            list.push(name.to_owned());
        }
        Ok(spec)
    }
}

/// What the graph makes of a delta.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// Print it, with its place in the graph.
    Show(Followed),
    /// Not printed: outside the graph, or held until its owner joins.
    Skip,
}

/// A `metadata.uid`, hashed (as [`crate::cache::object::Meta`]'s): only compared, 64 bits
/// make a collision negligible, and 8 bytes per reference keep the graph small beside the
/// objects its informers cache.
type Uid = u64;

fn uid(s: &str) -> Uid {
    crate::cache::object::uid_hash(s.as_bytes())
}

/// A delta held until the object it names joins the graph.
#[derive(Debug, Clone)]
pub struct Held {
    pub resource: Arc<Resource>,
    /// The context of the informer that delivered it (`None` with one cluster).
    pub context: Option<ContextName>,
    pub key: String,
    pub delta: Delta,
    pub initial_list: bool,
    /// The uids it waits for (an object's owners; an Event's object).
    waits_for: Vec<Uid>,
    /// Events only: when it is dropped.
    until: Option<Instant>,
}

/// One object of the graph: its informer and key, which give its own step of the owner
/// path (the path is made by walking the owners when a record needs it) and, when it leaves
/// with an orphaned ancestor, its last state (its informer's store holds it).
#[derive(Debug)]
struct Member {
    /// Its resource: an index in [`Graph::sources`].
    source: usize,
    key: Box<str>,
    /// Its owner in the graph (`None` for a root).
    owner: Option<Uid>,
    /// Deleted: kept while children may still name it.
    present: bool,
    /// Members whose `owner` it is: a deleted member is forgotten when it has none.
    children: u32,
}

/// The owner graph of one run (see the module's doc).
#[derive(Debug, Default)]
pub struct Graph {
    /// The resources whose objects are roots (the user's).
    roots: HashSet<String>,
    /// `--events`: the Events resource.
    events: Option<String>,
    /// The objects of the graph, by uid.
    members: HashMap<Uid, Member>,
    /// How many `members` are present (not deleted): [`Graph::is_empty`] without a walk,
    /// which `--until deleted` asks at every object leaving.
    present: usize,
    /// Held deltas by the uid of their object; each is listed in `waiting` under every
    /// uid of its `waits_for`.
    held: HashMap<Uid, Held>,
    waiting: HashMap<Uid, Vec<Uid>>,
    /// Held Events by deadline (a held one may have left `held` since).
    expiry: VecDeque<(Instant, Uid)>,
    /// Held deltas whose owner joined, to deliver in this order.
    ready: VecDeque<Held>,
    /// The resources of members and held deltas, interned, each with its informers'
    /// stores (one per context).
    sources: Vec<Source>,
    /// The records of the members an orphaned ancestor took with it, to deliver right
    /// after its record, in tree order.
    left: VecDeque<Left>,
    /// Members that left with an orphaned ancestor when their informer's store no longer
    /// held them (deleted, the delta not delivered yet): their `Deleted` delta is their
    /// record, with the path they had.
    leaving: HashMap<Uid, Arc<str>>,
    /// A root has been seen.
    rooted: bool,
}

/// A resource of the graph, and the stores of its informers.
#[derive(Debug)]
struct Source {
    resource: Arc<Resource>,
    stores: Vec<Arc<Store>>,
}

/// The record of a member that leaves the graph with an orphaned ancestor: its object as
/// its informer's store holds it (a `Sync` delta: no change of its own).
#[derive(Debug)]
pub struct Left {
    pub resource: Arc<Resource>,
    pub key: String,
    pub delta: Delta,
    pub followed: Followed,
}

/// The metadata the graph reads of an object (of an Event, its object's uid).
#[derive(Debug, Default, Deserialize)]
struct Doc {
    #[serde(default)]
    metadata: DocMeta,
    #[serde(default, rename = "involvedObject")]
    involved: Option<ObjRef>,
    #[serde(default)]
    regarding: Option<ObjRef>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct DocMeta {
    #[serde(default)]
    uid: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    owner_references: Vec<OwnerRef>,
}

#[derive(Debug, Default, Deserialize)]
struct OwnerRef {
    #[serde(default)]
    uid: String,
    #[serde(default)]
    controller: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
struct ObjRef {
    #[serde(default)]
    uid: String,
}

/// kubectl's short name for a kind, for owner paths (the kind in lower case otherwise).
fn short(kind: &str) -> String {
    let s = match kind {
        "Deployment" => "deploy",
        "ReplicaSet" => "rs",
        "StatefulSet" => "sts",
        "DaemonSet" => "ds",
        "CronJob" => "cj",
        "Service" => "svc",
        "PersistentVolumeClaim" => "pvc",
        "ConfigMap" => "cm",
        "EndpointSlice" => "endpointslice",
        "ControllerRevision" => "controllerrevision",
        other => return other.to_lowercase(),
    };
    s.to_owned()
}

fn step(kind: &str, name: &str) -> String {
    format!("{}/{name}", short(kind))
}

impl Graph {
    /// `roots`: the user's resources; `events`: the Events resource under `--events`.
    pub fn new(roots: impl IntoIterator<Item = String>, events: Option<String>) -> Graph {
        Graph {
            roots: roots.into_iter().collect(),
            events,
            ..Graph::default()
        }
    }

    /// A root has been seen, and no object of the graph is left, nothing held for it
    /// (`--until deleted`).
    pub fn gone(&self) -> bool {
        self.rooted && self.is_empty()
    }

    /// No object is in the graph now.
    pub fn is_empty(&self) -> bool {
        self.present == 0
    }

    /// The next held delta whose owner (or object) joined, to deliver through
    /// [`Graph::observe`] again.
    pub fn next_ready(&mut self) -> Option<Held> {
        self.ready.pop_front()
    }

    /// The next record of a member that left with an orphaned ancestor, to print as it is.
    pub fn next_left(&mut self) -> Option<Left> {
        self.left.pop_front()
    }

    /// The store of an informer of `resource`, where a member leaving with an orphaned
    /// ancestor is found.
    pub fn add_store(&mut self, resource: &Resource, store: Arc<Store>) {
        let s = self.source(resource);
        self.sources[s].stores.push(store);
    }

    /// `resource`'s index in `sources`, interned.
    fn source(&mut self, resource: &Resource) -> usize {
        self.sources
            .iter()
            .position(|s| s.resource.name == resource.name)
            .unwrap_or_else(|| {
                self.sources.push(Source {
                    resource: Arc::new(resource.clone()),
                    stores: Vec::new(),
                });
                self.sources.len() - 1
            })
    }

    /// The graph's verdict on one delta of `resource` in `context` (in pop order),
    /// updating it.
    pub fn observe(
        &mut self,
        resource: &Resource,
        context: Option<&ContextName>,
        key: &str,
        delta: &Delta,
        initial_list: bool,
        now: Instant,
    ) -> Verdict {
        self.expire(now);
        let doc: Doc = delta
            .object
            .object()
            .and_then(|o| serde_json::from_str(o.raw()).ok())
            .unwrap_or_default();
        if doc.metadata.uid.is_empty() {
            return Verdict::Skip;
        }
        let me = uid(&doc.metadata.uid);
        if let Some(path) = self.leaving.remove(&me) {
            if delta.kind != DeltaType::Deleted {
                self.leaving.insert(me, path);
                return Verdict::Skip;
            }
            return Verdict::Show(Followed {
                path,
                change: Some(GraphChange::Left),
            });
        }
        let held = |waits_for: Vec<Uid>, until| Held {
            resource: Arc::new(resource.clone()),
            context: context.cloned(),
            key: key.to_owned(),
            delta: delta.clone(),
            initial_list,
            waits_for,
            until,
        };
        if self.events.as_deref() == Some(&resource.name) {
            return self.observe_event(me, &doc, delta, held, now);
        }
        let source = self.source(resource);
        let at = (source, key);
        if self.roots.contains(&resource.name) {
            self.rooted = true;
            return self.place(me, None, at, delta);
        }
        let mut owners: Vec<&OwnerRef> = doc.metadata.owner_references.iter().collect();
        // The controller's reference first: the path follows it.
        owners.sort_by_key(|o| o.controller != Some(true));
        let owners: Vec<Uid> = owners.iter().map(|o| uid(&o.uid)).collect();
        if let Some(&owner) = owners.iter().find(|o| self.members.contains_key(o)) {
            self.unhold(me);
            return self.place(me, Some(owner), at, delta);
        }
        let left = self.leave(me, delta);
        if delta.kind != DeltaType::Deleted && !owners.is_empty() {
            self.hold(me, held(owners, None));
        } else {
            self.unhold(me);
        }
        left
    }

    /// An Event: shown under its object when that is in the graph, else held.
    fn observe_event(
        &mut self,
        me: Uid,
        doc: &Doc,
        delta: &Delta,
        held: impl FnOnce(Vec<Uid>, Option<Instant>) -> Held,
        now: Instant,
    ) -> Verdict {
        let about = doc
            .involved
            .as_ref()
            .or(doc.regarding.as_ref())
            .filter(|r| !r.uid.is_empty())
            .map(|r| uid(&r.uid));
        if let Some(path) = about.and_then(|a| self.path(a)) {
            let path = format!("{path}{PATH_SEPARATOR}event/{}", doc.metadata.name);
            self.unhold(me);
            return Verdict::Show(Followed {
                path: path.into(),
                change: None,
            });
        }
        match about {
            Some(about) if delta.kind != DeltaType::Deleted => {
                let until = now + EVENT_HOLD;
                self.expiry.push_back((until, me));
                self.hold(me, held(vec![about], Some(until)));
            }
            _ => self.unhold(me),
        }
        Verdict::Skip
    }

    /// The owner path of member `at`, root first (`None`: not in the graph).
    fn path(&self, at: Uid) -> Option<String> {
        let mut steps: Vec<String> = Vec::new();
        let mut next = Some(at);
        while let Some(u) = next {
            let m = self.members.get(&u)?;
            let kind = self
                .sources
                .get(m.source)
                .map_or("", |s| s.resource.kind.as_str());
            let name = m.key.rsplit_once('/').map_or(&*m.key, |(_, n)| n);
            steps.push(step(kind, name));
            next = m.owner;
            // A cycle of ownerReferences would never end the walk otherwise.
            if steps.len() > self.members.len() {
                break;
            }
        }
        steps.reverse();
        Some(steps.join(PATH_SEPARATOR))
    }

    /// An object whose owner is in the graph (or a root): in it, or leaving it deleted.
    fn place(
        &mut self,
        me: Uid,
        owner: Option<Uid>,
        (source, key): (usize, &str),
        delta: &Delta,
    ) -> Verdict {
        let was = self.members.get(&me).is_some_and(|m| m.present);
        let present = delta.kind != DeltaType::Deleted;
        let change = match (was, present) {
            (false, true) => Some(GraphChange::Joined),
            (true, false) => Some(GraphChange::Deleted),
            (false, false) => return Verdict::Skip,
            (true, true) => None,
        };
        let (children, before) = self
            .members
            .get(&me)
            .map_or((0, None), |m| (m.children, m.owner));
        if before != owner {
            if let Some(m) = owner.and_then(|o| self.members.get_mut(&o)) {
                m.children += 1;
            }
            if let Some(o) = before {
                self.detach(o);
            }
        }
        let member = Member {
            source,
            key: key.into(),
            owner,
            present: true,
            children,
        };
        if !self.members.insert(me, member).is_some_and(|m| m.present) {
            self.present += 1;
        }
        let path: Arc<str> = self.path(me).unwrap_or_default().into();
        if present {
            self.release(me);
        } else {
            self.forget(me);
        }
        Verdict::Show(Followed { path, change })
    }

    /// An object whose owners are not in the graph: if it was, it leaves now (deleted,
    /// or orphaned with its subtree).
    fn leave(&mut self, me: Uid, delta: &Delta) -> Verdict {
        let Some(m) = self.members.get(&me).filter(|m| m.present) else {
            return Verdict::Skip;
        };
        let owner = m.owner;
        let path: Arc<str> = self.path(me).unwrap_or_default().into();
        let change = if delta.kind == DeltaType::Deleted {
            self.forget(me);
            GraphChange::Deleted
        } else {
            self.remove_subtree(me);
            if let Some(o) = owner {
                self.detach(o);
            }
            GraphChange::Orphaned
        };
        Verdict::Show(Followed {
            path,
            change: Some(change),
        })
    }

    /// `me` was deleted: it stays while members name it as their owner, else it goes
    /// (and so may its deleted owners).
    fn forget(&mut self, me: Uid) {
        let Some(m) = self.members.get_mut(&me) else {
            return;
        };
        if m.present {
            m.present = false;
            self.present -= 1;
        }
        if m.children == 0 {
            let owner = self.members.remove(&me).and_then(|m| m.owner);
            if let Some(o) = owner {
                self.detach(o);
            }
        }
    }

    /// A child of `owner` left the graph.
    fn detach(&mut self, owner: Uid) {
        if let Some(m) = self.members.get_mut(&owner) {
            m.children = m.children.saturating_sub(1);
            if m.children == 0 && !m.present {
                self.forget(owner);
            }
        }
    }

    /// Removes `me` and every member whose owners lead to it; each of those leaves with a
    /// record of its own ([`Graph::next_left`]), its path as it was.
    fn remove_subtree(&mut self, me: Uid) {
        let under = |mut at: Option<Uid>| {
            let mut steps = 0;
            while let Some(u) = at {
                if u == me {
                    return true;
                }
                steps += 1;
                // A cycle of ownerReferences would never end the walk otherwise.
                if steps > self.members.len() {
                    return false;
                }
                at = self.members.get(&u).and_then(|m| m.owner);
            }
            false
        };
        let gone: Vec<Uid> = self
            .members
            .iter()
            .filter(|(k, m)| **k == me || under(m.owner))
            .map(|(k, _)| *k)
            .collect();
        let mut left: Vec<(Arc<str>, Uid)> = gone
            .iter()
            .filter(|k| **k != me && self.members.get(k).is_some_and(|m| m.present))
            .map(|k| (self.path(*k).unwrap_or_default().into(), *k))
            .collect();
        // Tree order: an owner's path is a prefix of its children's.
        left.sort();
        for (path, k) in left {
            match self.left_record(k, path.clone()) {
                Some(l) => self.left.push_back(l),
                None => {
                    self.leaving.insert(k, path);
                }
            }
        }
        for k in gone {
            if self.members.remove(&k).is_some_and(|m| m.present) {
                self.present -= 1;
            }
        }
    }

    /// The record of member `k` leaving at `path`: its object as its informer's store holds
    /// it (the store of its context: the one whose object under its key has its uid);
    /// `None` when no store holds it (deleted: its delta is on its way).
    fn left_record(&self, k: Uid, path: Arc<str>) -> Option<Left> {
        let m = self.members.get(&k)?;
        let source = self.sources.get(m.source)?;
        let object = source.stores.iter().find_map(|s| {
            let o = s.get(&m.key)?;
            let doc: Doc = serde_json::from_str(o.raw()).ok()?;
            (uid(&doc.metadata.uid) == k).then_some(o)
        })?;
        Some(Left {
            resource: source.resource.clone(),
            key: m.key.to_string(),
            delta: Delta::new(DeltaType::Sync, object),
            followed: Followed {
                path,
                change: Some(GraphChange::Left),
            },
        })
    }

    fn hold(&mut self, me: Uid, h: Held) {
        self.unhold(me);
        let s = self.source(&h.resource);
        let resource = self.sources[s].resource.clone();
        for w in &h.waits_for {
            self.waiting.entry(*w).or_default().push(me);
        }
        self.held.insert(me, Held { resource, ..h });
    }

    fn unhold(&mut self, me: Uid) {
        let Some(h) = self.held.remove(&me) else {
            return;
        };
        for w in &h.waits_for {
            if let Some(list) = self.waiting.get_mut(w) {
                list.retain(|u| *u != me);
                if list.is_empty() {
                    self.waiting.remove(w);
                }
            }
        }
    }

    /// `me` joined: what waited for it is ready, in the order it was held.
    fn release(&mut self, me: Uid) {
        for child in self.waiting.remove(&me).unwrap_or_default() {
            if let Some(h) = self.held.get(&child).cloned() {
                self.unhold(child);
                self.ready.push_back(h);
            }
        }
    }

    /// Drops the Events held past their deadline.
    fn expire(&mut self, now: Instant) {
        while let Some(&(at, me)) = self.expiry.front() {
            if at > now {
                return;
            }
            self.expiry.pop_front();
            if self
                .held
                .get(&me)
                .is_some_and(|h| h.until.is_some_and(|u| u <= now))
            {
                tracing::debug!("--events: an Event about an object never seen dropped");
                self.unhold(me);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::testutil::object;

    fn res(name: &str, kind: &str) -> Resource {
        Resource {
            name: name.into(),
            kind: kind.into(),
            api_version: "v1".into(),
            namespaced: true,
        }
    }

    fn obj(kind: &str, name: &str, uid: &str, owners: &[&str]) -> crate::cache::object::ObjectRef {
        let refs: Vec<String> = owners
            .iter()
            .map(|o| format!(r#"{{"uid":"{o}","controller":true,"kind":"X","name":"x"}}"#))
            .collect();
        object(&format!(
            r#"{{"kind":"{kind}","apiVersion":"v1","metadata":{{"name":"{name}","namespace":"ns","uid":"{uid}","resourceVersion":"1","ownerReferences":[{}]}}}}"#,
            refs.join(",")
        ))
    }

    /// A held delta the graph made ready, observed again as its informer's loop delivers it.
    fn deliver(g: &mut Graph, h: &Held, at: Instant) -> Verdict {
        g.observe(
            &h.resource,
            h.context.as_ref(),
            &h.key,
            &h.delta,
            h.initial_list,
            at,
        )
    }

    fn seen(
        g: &mut Graph,
        r: &Resource,
        kind: DeltaType,
        o: crate::cache::object::ObjectRef,
    ) -> Option<(String, Option<GraphChange>)> {
        let key = format!(
            "ns/{}",
            o.to_value()["metadata"]["name"].as_str().unwrap_or("")
        );
        seen_at(g, r, &key, kind, o)
    }

    /// The graph's verdict on a delta of `o` under `key` (`seen`: under its own).
    fn seen_at(
        g: &mut Graph,
        r: &Resource,
        key: &str,
        kind: DeltaType,
        o: crate::cache::object::ObjectRef,
    ) -> Option<(String, Option<GraphChange>)> {
        let v = g.observe(r, None, key, &Delta::new(kind, o), false, Instant::now());
        match v {
            Verdict::Show(f) => Some((f.path.to_string(), f.change)),
            Verdict::Skip => None,
        }
    }

    /// Children seen before their owners are held and delivered, in order, when it joins;
    /// an orphaned object leaves with its subtree; deletion leaves one object.
    #[test]
    fn join_hold_and_leave() {
        let (deploy, rs, pod) = (
            res("deployments.apps", "Deployment"),
            res("replicasets.apps", "ReplicaSet"),
            res("pods", "Pod"),
        );
        let mut g = Graph::new(["deployments.apps".to_owned()], None);
        use DeltaType::*;
        assert_eq!(
            seen(&mut g, &pod, Added, obj("Pod", "p", "u3", &["u2"])),
            None
        );
        assert_eq!(
            seen(&mut g, &rs, Added, obj("ReplicaSet", "r", "u2", &["u1"])),
            None
        );
        assert!(g.next_ready().is_none());
        let root = seen(&mut g, &deploy, Added, obj("Deployment", "web", "u1", &[]));
        assert_eq!(root, Some(("deploy/web".into(), Some(GraphChange::Joined))));
        let h = g.next_ready().expect("the replica set is ready");
        assert!(
            g.next_ready().is_none(),
            "the pod waits for the replica set"
        );
        let v = deliver(&mut g, &h, Instant::now());
        assert!(matches!(&v, Verdict::Show(f) if &*f.path == "deploy/web › rs/r"));
        let h = g.next_ready().expect("the pod is ready");
        let v = deliver(&mut g, &h, Instant::now());
        assert!(matches!(&v, Verdict::Show(f) if &*f.path == "deploy/web › rs/r › pod/p"));
        // An unrelated pod stays out.
        assert_eq!(
            seen(&mut g, &pod, Added, obj("Pod", "q", "u9", &["u8"])),
            None
        );
        assert_eq!(
            seen(&mut g, &pod, Updated, obj("Pod", "p", "u3", &["u2"])),
            Some(("deploy/web › rs/r › pod/p".into(), None))
        );
        // Orphaned: the replica set leaves, and its pod with it.
        let orphaned = seen(&mut g, &rs, Updated, obj("ReplicaSet", "r", "u2", &[]));
        assert_eq!(
            orphaned,
            Some(("deploy/web › rs/r".into(), Some(GraphChange::Orphaned)))
        );
        assert_eq!(
            seen(&mut g, &pod, Updated, obj("Pod", "p", "u3", &["u2"])),
            None
        );
        assert!(!g.gone());
        assert_eq!(
            seen(
                &mut g,
                &deploy,
                Deleted,
                obj("Deployment", "web", "u1", &[])
            ),
            Some(("deploy/web".into(), Some(GraphChange::Deleted)))
        );
        assert!(g.gone());
    }

    /// An orphaned object's subtree leaves with it, each member with a record of its own:
    /// its object from its informer's store, or (a store without it: deleted) its `Deleted`
    /// delta, with the path it had; later deltas of them are not shown.
    #[test]
    fn an_orphaned_subtree_leaves_with_records() {
        let (deploy, rs, pod) = (
            res("deployments.apps", "Deployment"),
            res("replicasets.apps", "ReplicaSet"),
            res("pods", "Pod"),
        );
        let mut g = Graph::new(["deployments.apps".to_owned()], None);
        let pods = Arc::new(Store::new());
        g.add_store(&pod, pods.clone());
        use DeltaType::*;
        seen_at(
            &mut g,
            &deploy,
            "ns/web",
            Added,
            obj("Deployment", "web", "u1", &[]),
        );
        seen_at(
            &mut g,
            &rs,
            "ns/r",
            Added,
            obj("ReplicaSet", "r", "u2", &["u1"]),
        );
        let (a, b) = (
            obj("Pod", "a", "u3", &["u2"]),
            obj("Pod", "b", "u4", &["u2"]),
        );
        seen_at(&mut g, &pod, "ns/b", Added, b.clone());
        seen_at(&mut g, &pod, "ns/a", Added, a.clone());
        // `b` is still in its store; `a` is not (deleted, its delta on its way).
        pods.add(b);
        let orphaned = seen_at(
            &mut g,
            &rs,
            "ns/r",
            Updated,
            obj("ReplicaSet", "r", "u2", &[]),
        );
        assert_eq!(
            orphaned,
            Some(("deploy/web › rs/r".into(), Some(GraphChange::Orphaned)))
        );
        let left = g.next_left().expect("b's record");
        assert_eq!(
            (
                left.key.as_str(),
                &*left.followed.path,
                left.followed.change
            ),
            ("ns/b", "deploy/web › rs/r › pod/b", Some(GraphChange::Left))
        );
        assert_eq!(left.delta.kind, Sync);
        assert!(g.next_left().is_none());
        assert_eq!(seen_at(&mut g, &pod, "ns/a", Updated, a.clone()), None);
        assert_eq!(
            seen_at(&mut g, &pod, "ns/a", Deleted, a),
            Some(("deploy/web › rs/r › pod/a".into(), Some(GraphChange::Left)))
        );
        assert_eq!(
            seen_at(
                &mut g,
                &pod,
                "ns/b",
                Updated,
                obj("Pod", "b", "u4", &["u2"])
            ),
            None
        );
        assert_eq!(g.members.len(), 1, "the root alone: {:?}", g.members);
        assert!(g.leaving.is_empty());
    }

    /// An Event about an object not seen is held until the object joins, and dropped after
    /// EVENT_HOLD.
    #[test]
    fn events_held_then_shown_or_dropped() {
        let ev = res("events", "Event");
        let cm = res("configmaps", "ConfigMap");
        let mut g = Graph::new(["configmaps".to_owned()], Some("events".into()));
        let event = |uid: &str, about: &str| {
            object(&format!(
                r#"{{"kind":"Event","apiVersion":"v1","metadata":{{"name":"e{uid}","namespace":"ns","uid":"{uid}","resourceVersion":"1"}},"involvedObject":{{"uid":"{about}"}}}}"#
            ))
        };
        let t0 = Instant::now();
        let d = Delta::new(DeltaType::Added, event("e1", "c1"));
        assert_eq!(g.observe(&ev, None, "ns/e", &d, false, t0), Verdict::Skip);
        let d2 = Delta::new(DeltaType::Added, event("e2", "c2"));
        assert_eq!(g.observe(&ev, None, "ns/e2", &d2, false, t0), Verdict::Skip);
        let c = Delta::new(DeltaType::Added, obj("ConfigMap", "a", "c1", &[]));
        assert!(matches!(
            g.observe(&cm, None, "ns/a", &c, false, t0),
            Verdict::Show(_)
        ));
        let h = g.next_ready().expect("the event is ready");
        let v = deliver(&mut g, &h, t0);
        assert!(matches!(&v, Verdict::Show(f) if &*f.path == "cm/a › event/ee1"));
        // c2 comes after the hold: its event was dropped.
        let c2 = Delta::new(DeltaType::Added, obj("ConfigMap", "b", "c2", &[]));
        assert!(matches!(
            g.observe(&cm, None, "ns/b", &c2, false, t0 + EVENT_HOLD * 2),
            Verdict::Show(_)
        ));
        assert!(g.next_ready().is_none());
    }

    /// A deleted member stays while a child names it, and is forgotten after: a long run
    /// over churning pods does not keep every pod it saw.
    #[test]
    fn deleted_members_are_forgotten_once_nothing_names_them() {
        let (deploy, rs, pod) = (
            res("deployments.apps", "Deployment"),
            res("replicasets.apps", "ReplicaSet"),
            res("pods", "Pod"),
        );
        let mut g = Graph::new(["deployments.apps".to_owned()], None);
        use DeltaType::*;
        let d = || obj("Deployment", "web", "u1", &[]);
        let r = || obj("ReplicaSet", "r", "u2", &["u1"]);
        let p = || obj("Pod", "p", "u3", &["u2"]);
        seen(&mut g, &deploy, Added, d());
        seen(&mut g, &rs, Added, r());
        seen(&mut g, &pod, Added, p());
        seen(&mut g, &deploy, Deleted, d());
        assert_eq!(
            g.members.len(),
            3,
            "the deployment stays while its replica set names it"
        );
        let gone = seen(&mut g, &pod, Deleted, p());
        assert_eq!(gone.map(|(_, c)| c), Some(Some(GraphChange::Deleted)));
        assert_eq!(g.members.len(), 2);
        let gone = seen(&mut g, &rs, Deleted, r());
        assert_eq!(
            gone,
            Some(("deploy/web › rs/r".into(), Some(GraphChange::Deleted)))
        );
        assert!(g.members.is_empty(), "{:?}", g.members);
        assert!(g.gone());
    }

    #[test]
    fn children_and_kinds() {
        assert_eq!(
            builtin_children(&["deployments.apps"]),
            Some(vec!["replicasets.apps", "pods"])
        );
        assert_eq!(
            builtin_children(&["cronjobs.batch"]),
            Some(vec!["jobs.batch", "pods"])
        );
        assert_eq!(builtin_children(&["widgets.example.com"]), None);
        let k = KindsSpec::parse("+cm,-pods,secrets").unwrap();
        assert_eq!(
            (k.add, k.remove, k.only),
            (
                vec!["cm".to_owned()],
                vec!["pods".to_owned()],
                vec!["secrets".to_owned()]
            )
        );
        assert!(KindsSpec::parse("+").is_err());
    }
}
