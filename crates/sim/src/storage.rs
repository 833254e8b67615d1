//! Storage like etcd behind kube-apiserver: one global revision, a bounded history of changes,
//! compaction, and lists at any retained revision.
//!
//! Invariants:
//! - `rev` is the revision of the last change; every change bumps it by exactly one and stamps
//!   the object's `metadata.resourceVersion` with it.
//! - `history` holds every change with `compacted < rv <= rev`, in revision order, and nothing
//!   else: a watch or list at revision `r` can be served iff `compacted <= r <= rev`.
//! - Each object is kept as its serialized JSON ([`Obj::json`], with `kind`/`apiVersion`) next to
//!   the few parsed fields selectors need, so lists and watch events are mostly memcpy and an
//!   event line is serialized once ([`Change::line`]) for all watchers.

use std::borrow::Cow;
use std::collections::{BTreeMap, VecDeque};
use std::ops::Bound;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use bytes::Bytes;
use serde_json::{json, Map, Value};
use tokio::sync::watch;

use super::resources::{
    ResourceDef, CRDS, EVENTS, NAMESPACES, NODES, PODS, REPLICASETS, RESOURCES, SECRETS,
};
use super::status::{go_json, Cause, Status};
use kwatch_core::client::protobuf;

/// The type of a change, as a watch event type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    Added,
    Modified,
    Deleted,
}

impl EventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Added => "ADDED",
            EventKind::Modified => "MODIFIED",
            EventKind::Deleted => "DELETED",
        }
    }
}

/// A stored object: its serialized form plus what selectors and keys need.
#[derive(Debug)]
pub struct Obj {
    pub res: usize,
    /// `namespace/name`, or `name` for cluster-scoped resources.
    pub key: String,
    pub namespace: String,
    pub name: String,
    pub uid: String,
    pub rv: u64,
    pub labels: Vec<(String, String)>,
    /// Pods: `status.phase` and `spec.nodeName` (empty otherwise).
    pub phase: String,
    pub node_name: String,
    /// What the controllers read of every object (`super::controllers`).
    pub links: Links,
    /// The whole object, compact, Go-escaped, with `kind` and `apiVersion`.
    pub json: Bytes,
    /// For built-in kinds `json` starts with `{"kind":…,"apiVersion":…,`; list items leave those
    /// two keys out, so an item is `{` followed by `json[item_start..]`. 0 means "use `json`".
    item_start: usize,
}

/// What the controllers read of every object on every pass, kept parsed so that a pass
/// over 100k pods parses none of them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Links {
    /// `metadata.ownerReferences`, in order.
    pub owners: Vec<OwnerLink>,
    /// `metadata.deletionTimestamp` is set.
    pub deleting: bool,
    /// Pods: the `Ready` condition is `True`.
    pub ready: bool,
}

/// One `metadata.ownerReferences` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnerLink {
    pub uid: String,
    pub controller: bool,
    pub block_owner_deletion: bool,
}

impl Links {
    pub fn of(res: usize, v: &Value) -> Links {
        let meta = &v["metadata"];
        let owners = meta["ownerReferences"]
            .as_array()
            .map(|refs| {
                refs.iter()
                    .map(|r| OwnerLink {
                        uid: r["uid"].as_str().unwrap_or_default().to_string(),
                        controller: r["controller"].as_bool() == Some(true),
                        block_owner_deletion: r["blockOwnerDeletion"].as_bool() == Some(true),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let ready = res == PODS
            && v["status"]["conditions"].as_array().is_some_and(|cs| {
                cs.iter()
                    .any(|c| c["type"] == "Ready" && c["status"] == "True")
            });
        Links {
            owners,
            deleting: meta.get("deletionTimestamp").is_some(),
            ready,
        }
    }

    /// The uid of the object's controller (`ownerReferences[].controller == true`).
    pub fn controller(&self) -> Option<&str> {
        self.owners
            .iter()
            .find(|o| o.controller)
            .map(|o| o.uid.as_str())
    }
}

/// `metadata.labels` as (key, value) pairs (non-string values read as "").
pub(crate) fn labels_of(meta: &Value) -> Vec<(String, String)> {
    meta["labels"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect()
        })
        .unwrap_or_default()
}

impl Obj {
    /// Builds an object from a full, stamped value, as kube-apiserver stores it
    /// ([`as_stored`]): every object, however the simulator made it, is
    /// written as Go's JSON of its type would write it.
    pub fn from_value(res: usize, v: Value) -> Obj {
        let def = &RESOURCES[res];
        let v = as_stored(def, v);
        let meta = &v["metadata"];
        let s = |x: &Value| x.as_str().unwrap_or_default().to_string();
        let name = s(&meta["name"]);
        let namespace = if def.namespaced {
            s(&meta["namespace"])
        } else {
            String::new()
        };
        let labels = labels_of(meta);
        let (phase, node_name) = if res == PODS {
            (s(&v["status"]["phase"]), s(&v["spec"]["nodeName"]))
        } else {
            (String::new(), String::new())
        };
        let json = go_json(&v);
        let links = Links::of(res, &v);
        let uid = s(&meta["uid"]);
        let rv = meta["resourceVersion"]
            .as_str()
            .and_then(|r| r.parse().ok())
            .unwrap_or(0);
        Obj::from_parts(
            res, namespace, name, uid, rv, labels, phase, node_name, links, json,
        )
    }

    /// Builds an object from already-normalized JSON and its parsed fields (the fast path of
    /// preloading; `json` must be what [`Obj::from_value`] would have produced).
    #[allow(clippy::too_many_arguments)]
    pub fn from_parts(
        res: usize,
        namespace: String,
        name: String,
        uid: String,
        rv: u64,
        labels: Vec<(String, String)>,
        phase: String,
        node_name: String,
        links: Links,
        json: Vec<u8>,
    ) -> Obj {
        let def = &RESOURCES[res];
        let item_start = if def.custom {
            0
        } else {
            let prefix = format!(
                "{{\"kind\":\"{}\",\"apiVersion\":\"{}\",",
                def.kind,
                def.api_version()
            );
            if json.starts_with(prefix.as_bytes()) {
                prefix.len()
            } else {
                0
            }
        };
        Obj {
            res,
            key: make_key(&namespace, &name),
            namespace,
            name,
            uid,
            rv,
            labels,
            phase,
            node_name,
            links,
            json: Bytes::from(json),
            item_start,
        }
    }

    /// The object as a JSON value.
    pub fn value(&self) -> Value {
        serde_json::from_slice(&self.json).unwrap_or(Value::Null)
    }

    /// Appends the object as a list item (without kind/apiVersion for built-in kinds).
    pub fn write_item(&self, out: &mut Vec<u8>) {
        if self.item_start > 0 {
            out.push(b'{');
            out.extend_from_slice(&self.json[self.item_start..]);
        } else {
            out.extend_from_slice(&self.json);
        }
    }

    /// Value of a selectable field (see [`selectable_fields`]): the common ones are kept
    /// parsed; rarer ones are read from the JSON.
    pub fn field(&self, f: &str) -> Option<Cow<'_, str>> {
        match f {
            "metadata.name" => Some(Cow::Borrowed(&self.name)),
            "metadata.namespace" => Some(Cow::Borrowed(&self.namespace)),
            "status.phase" if self.res == PODS => Some(Cow::Borrowed(&self.phase)),
            "spec.nodeName" if self.res == PODS => Some(Cow::Borrowed(&self.node_name)),
            _ => {
                let v = self.value();
                let path = if f == "source" { "source.component" } else { f };
                let x = path.split('.').try_fold(&v, |v, k| v.get(k))?;
                Some(Cow::Owned(match x {
                    Value::String(s) => s.clone(),
                    Value::Null => String::new(),
                    other => other.to_string(),
                }))
            }
        }
    }

    /// A copy with another resourceVersion (a DELETED event carries the deletion's
    /// revision). A built-in object's bytes are rewritten in place: Go's JSON of it begins
    /// with kind, apiVersion and metadata's name, generateName, namespace, selfLink and uid,
    /// strings that hold no bare `"`, so the first `"resourceVersion":"…"` is metadata's. A
    /// custom resource's keys are sorted, and its spec may come first: it is rebuilt.
    pub fn restamped(&self, rv: u64) -> Obj {
        let pat = format!("\"resourceVersion\":\"{}\"", self.rv);
        let at = (!RESOURCES[self.res].custom)
            .then(|| memchr::memmem::find(&self.json, pat.as_bytes()))
            .flatten();
        let Some(at) = at else {
            let mut v = self.value();
            v["metadata"]["resourceVersion"] = json!(rv.to_string());
            return Obj::from_value(self.res, v);
        };
        let new = format!("\"resourceVersion\":\"{rv}\"");
        let mut json = Vec::with_capacity(self.json.len() + 8);
        json.extend_from_slice(&self.json[..at]);
        json.extend_from_slice(new.as_bytes());
        json.extend_from_slice(&self.json[at + pat.len()..]);
        Obj {
            res: self.res,
            key: self.key.clone(),
            namespace: self.namespace.clone(),
            name: self.name.clone(),
            uid: self.uid.clone(),
            rv,
            labels: self.labels.clone(),
            phase: self.phase.clone(),
            node_name: self.node_name.clone(),
            links: self.links.clone(),
            json: Bytes::from(json),
            item_start: self.item_start,
        }
    }
}

/// The fields a field selector may name for `res`, as kube-apiserver v1.32 allows them.
pub fn selectable_fields(res: usize) -> &'static [&'static str] {
    match res {
        PODS => &[
            "metadata.name",
            "metadata.namespace",
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.nominatedNodeName",
        ],
        EVENTS => &[
            "metadata.name",
            "metadata.namespace",
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        ],
        SECRETS => &["metadata.name", "metadata.namespace", "type"],
        NAMESPACES => &["metadata.name", "metadata.namespace", "status.phase"],
        NODES => &["metadata.name", "metadata.namespace", "spec.unschedulable"],
        REPLICASETS => &["metadata.name", "metadata.namespace", "status.replicas"],
        _ => &["metadata.name", "metadata.namespace"],
    }
}

/// `namespace/name` or `name`.
pub fn make_key(namespace: &str, name: &str) -> String {
    if namespace.is_empty() {
        name.to_string()
    } else {
        format!("{namespace}/{name}")
    }
}

/// One change in the history.
#[derive(Debug)]
pub struct Change {
    pub rv: u64,
    pub res: usize,
    pub kind: EventKind,
    /// The object after the change; for a deletion its last state stamped with `rv`.
    pub obj: Arc<Obj>,
    /// The object before the change (`None` for an addition).
    pub prev: Option<Arc<Obj>>,
    /// `{"type":…,"object":…}\n`, shared by every watcher.
    pub line: Bytes,
    /// The skip-event fault took it: no watch sends it (an event lost on its way to the
    /// watchers), while lists show its result as for any other change.
    pub skipped: bool,
    /// When the storage made it: the slow-delivery fault (`POST /_sim/delay`) sends it to
    /// watches this long after.
    pub at: std::time::Instant,
}

/// An event line `{"type":"T","object":<json>}\n`.
pub fn event_line(kind: &str, json: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(json.len() + 32);
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(kind.as_bytes());
    out.extend_from_slice(b"\",\"object\":");
    out.extend_from_slice(json);
    out.extend_from_slice(b"}\n");
    Bytes::from(out)
}

/// What to list: `res` as of revision `at` (`compacted <= at <= rev`, checked by the caller),
/// in key order, restricted to `namespace`, from key `start` (inclusive), at most `limit`
/// items (0: no limit); `count_remaining` computes `remainingItemCount`.
#[derive(Debug, Clone, Copy)]
pub struct ListQuery<'a> {
    pub res: usize,
    pub namespace: Option<&'a str>,
    pub at: u64,
    pub start: Option<&'a str>,
    pub limit: usize,
    pub count_remaining: bool,
}

impl ListQuery<'_> {
    /// Everything of `res` at revision `at`.
    pub fn all(res: usize, at: u64) -> ListQuery<'static> {
        ListQuery {
            res,
            namespace: None,
            at,
            start: None,
            limit: 0,
            count_remaining: false,
        }
    }
}

/// One page of a list.
#[derive(Debug, Default)]
pub struct ListPage {
    pub items: Vec<Arc<Obj>>,
    /// Key to resume at (inclusive) when more items follow.
    pub next_start: Option<String>,
    /// Items after this page (only computed when asked for).
    pub remaining: Option<u64>,
}

/// The state of the simulated etcd. Cloning is cheap (objects and changes are shared):
/// it is how a backup is taken.
#[derive(Debug, Clone)]
pub struct Store {
    rev: u64,
    compacted: u64,
    objects: Vec<BTreeMap<String, Arc<Obj>>>,
    history: VecDeque<Arc<Change>>,
    history_limit: usize,
    /// The skip-event fault, armed: the next change of each (resource, key) — either
    /// `None` for any — is [`Change::skipped`], oldest rule first.
    skips: Vec<(Option<usize>, Option<String>)>,
    /// Each resource's watch-cache revision ([`Store::cache_rev`]).
    cached: Vec<u64>,
}

/// Current time, RFC 3339 with seconds, as Kubernetes writes it.
pub fn now_rfc3339() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

impl Store {
    pub fn new(history_limit: usize) -> Store {
        Store {
            rev: 1,
            compacted: 1,
            objects: RESOURCES.iter().map(|_| BTreeMap::new()).collect(),
            history: VecDeque::new(),
            history_limit: history_limit.max(1),
            skips: Vec::new(),
            cached: RESOURCES.iter().map(|_| 1).collect(),
        }
    }

    /// The revision kube-apiserver's watch cache of `res` has reached, which its watch
    /// bookmarks carry (`cacher.go`, `cache_watcher.go`, v1.32): the revision of the last
    /// change of `res`, or a later one the cache was brought to as a whole (its start,
    /// and each consistent LIST, which asks etcd for a progress notification:
    /// ConsistentListFromCache). Changes of other resources do not move it: a watch of a
    /// quiet resource gets no bookmark.
    pub fn cache_rev(&self, res: usize) -> u64 {
        self.cached[res]
    }

    /// The watch cache of `res` (`None`: of every resource) catches up with the current
    /// revision: the API server starts, or a consistent LIST of `res` was served.
    pub fn cache_caught_up(&mut self, res: Option<usize>) {
        let rev = self.rev;
        match res {
            Some(r) => self.cached[r] = self.cached[r].max(rev),
            None => self.cached.iter_mut().for_each(|c| *c = (*c).max(rev)),
        }
    }

    /// Revision of the last change.
    pub fn rev(&self) -> u64 {
        self.rev
    }

    /// Oldest revision still listable/watchable.
    pub fn compacted(&self) -> u64 {
        self.compacted
    }

    pub fn get(&self, res: usize, key: &str) -> Option<Arc<Obj>> {
        self.objects[res].get(key).cloned()
    }

    pub fn len(&self, res: usize) -> usize {
        self.objects[res].len()
    }

    /// Keys of the objects of `res`.
    pub fn keys(&self, res: usize) -> impl Iterator<Item = &str> {
        self.objects[res].keys().map(|k| k.as_str())
    }

    /// The first key of `res` at or after `from`, wrapping around to the first key.
    pub fn key_at_or_after(&self, res: usize, from: &str) -> Option<&str> {
        let m = &self.objects[res];
        m.range::<str, _>((Bound::Included(from), Bound::Unbounded))
            .next()
            .or_else(|| m.iter().next())
            .map(|(k, _)| k.as_str())
    }

    /// Brings revision 1 back in reach, as a young etcd's before kube-apiserver's first
    /// compaction (every 5 minutes): watches and continued lists from any revision are
    /// served rather than 410 Expired. The seeded objects came without history, so a watch
    /// from an old revision is sent only the changes made since the start.
    pub fn uncompact(&mut self) {
        if self.history.is_empty() {
            self.compacted = 1;
        }
    }

    /// Drops history up to `upto` (clamped to the current revision).
    pub fn compact(&mut self, upto: u64) {
        let upto = upto.min(self.rev);
        while self.history.front().is_some_and(|c| c.rv <= upto) {
            self.history.pop_front();
        }
        self.compacted = self.compacted.max(upto);
    }

    /// Makes watches leave out the next change of `res` to `key` (`None`: any resource,
    /// any key): the skip-event fault.
    pub fn skip_next_change(&mut self, res: Option<usize>, key: Option<String>) {
        self.skips.push((res, key));
    }

    /// Disarms the skip-event fault.
    pub fn clear_skips(&mut self) {
        self.skips.clear();
    }

    /// Whether a change of `res` to `key` is to be skipped (the rule that matched is used up).
    fn take_skip(&mut self, res: usize, key: &str) -> bool {
        let hit = self
            .skips
            .iter()
            .position(|(r, k)| r.is_none_or(|r| r == res) && k.as_deref().is_none_or(|k| k == key));
        hit.map(|i| self.skips.remove(i)).is_some()
    }

    fn record(&mut self, res: usize, kind: EventKind, obj: Arc<Obj>, prev: Option<Arc<Obj>>) {
        let line = event_line(kind.as_str(), &obj.json);
        let skipped = !self.skips.is_empty() && self.take_skip(res, &obj.key);
        match kind {
            EventKind::Deleted => {
                self.objects[res].remove(&obj.key);
            }
            _ => {
                self.objects[res].insert(obj.key.clone(), obj.clone());
            }
        }
        self.cached[res] = self.cached[res].max(obj.rv);
        self.history.push_back(Arc::new(Change {
            rv: obj.rv,
            res,
            kind,
            obj,
            prev,
            line,
            skipped,
            at: std::time::Instant::now(),
        }));
        while self.history.len() > self.history_limit {
            if let Some(c) = self.history.pop_front() {
                self.compacted = c.rv;
            }
        }
    }

    /// Stamps uid, resourceVersion, creationTimestamp, generation and stores a new object.
    /// `v` must already carry the namespace (if any). With `record == false` nothing enters
    /// the history (preloading); call [`Store::compact`] afterwards.
    pub fn create(&mut self, res: usize, mut v: Value, record: bool) -> Result<Arc<Obj>, Status> {
        let def = &RESOURCES[res];
        if !v.is_object() {
            return Err(Status::bad_request(
                "the body of the request was in an unknown format",
            ));
        }
        let meta = ensure_meta(&mut v);
        let mut name = meta
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if name.is_empty() {
            if let Some(g) = meta.get("generateName").and_then(Value::as_str) {
                name = format!("{g}{}", kwatch_core::text::name_suffix());
                meta.insert("name".into(), json!(name));
            }
        }
        let ns = meta
            .get("namespace")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        validate_name(def, &name)?;
        if def.namespaced && !self.objects[NAMESPACES].contains_key(&ns) {
            return Err(Status::not_found("namespaces", "", &ns));
        }
        let key = make_key(if def.namespaced { &ns } else { "" }, &name);
        if self.objects[res].contains_key(&key) {
            return Err(Status::already_exists(def.plural, def.group, &name));
        }
        let rv = self.rev + 1;
        meta.insert("uid".into(), json!(uuid::Uuid::new_v4().to_string()));
        meta.insert("resourceVersion".into(), json!(rv.to_string()));
        if def.has_generation {
            meta.insert("generation".into(), json!(1));
        }
        meta.insert("creationTimestamp".into(), json!(now_rfc3339()));
        meta.shift_remove("deletionTimestamp");
        let obj = Arc::new(Obj::from_value(res, v));
        self.rev = rv;
        if record {
            self.record(res, EventKind::Added, obj.clone(), None);
        } else {
            self.objects[res].insert(obj.key.clone(), obj.clone());
        }
        Ok(obj)
    }

    /// Stores an object built by `build` from the next revision, without history or checks
    /// (preloading; call [`Store::compact`] afterwards). `build` must stamp that revision.
    pub fn insert_preloaded(&mut self, build: impl FnOnce(u64) -> Obj) {
        let rv = self.rev + 1;
        let obj = build(rv);
        debug_assert_eq!(obj.rv, rv);
        self.rev = rv;
        self.objects[obj.res].insert(obj.key.clone(), Arc::new(obj));
    }

    /// Replaces an object. A non-empty `metadata.resourceVersion` in `v` must match the stored
    /// one (409 otherwise). uid and creationTimestamp are kept; generation is bumped when
    /// `spec` changed. An update that changes nothing returns the stored object unchanged
    /// (no new revision, no event).
    pub fn update(&mut self, res: usize, key: &str, mut v: Value) -> Result<Arc<Obj>, Status> {
        let def = &RESOURCES[res];
        let Some(old) = self.objects[res].get(key).cloned() else {
            let name = key.rsplit('/').next().unwrap_or(key);
            return Err(Status::not_found(def.plural, def.group, name));
        };
        if !v.is_object() {
            return Err(Status::bad_request(
                "the body of the request was in an unknown format",
            ));
        }
        let old_v = old.value();
        let meta = ensure_meta(&mut v);
        if let Some(rv) = meta.get("resourceVersion").and_then(Value::as_str) {
            if !rv.is_empty() && rv != old.rv.to_string() {
                return Err(Status::conflict(def.plural, def.group, &old.name));
            }
        }
        let new_rv = self.rev + 1;
        meta.insert("name".into(), json!(old.name));
        if def.namespaced {
            meta.insert("namespace".into(), json!(old.namespace));
        }
        meta.insert("uid".into(), old_v["metadata"]["uid"].clone());
        meta.insert("resourceVersion".into(), json!(new_rv.to_string()));
        meta.insert(
            "creationTimestamp".into(),
            old_v["metadata"]["creationTimestamp"].clone(),
        );
        for k in ["deletionTimestamp", "deletionGracePeriodSeconds"] {
            match old_v["metadata"].get(k) {
                Some(x) => meta.insert(k.into(), x.clone()),
                None => meta.shift_remove(k),
            };
        }
        if def.has_generation {
            let g = old_v["metadata"]["generation"].as_i64().unwrap_or(1);
            let changed = v.get("spec") != old_v.get("spec");
            ensure_meta(&mut v).insert("generation".into(), json!(if changed { g + 1 } else { g }));
        }
        // Like etcd3's GuaranteedUpdate, an update that changes nothing is not written:
        // built at the old revision to compare, then restamped (one trip through the table).
        ensure_meta(&mut v).insert("resourceVersion".into(), json!(old.rv.to_string()));
        let at_old = Obj::from_value(res, v);
        if at_old.json == old.json {
            return Ok(old);
        }
        let obj = Arc::new(at_old.restamped(new_rv));
        self.rev = new_rv;
        self.record(res, EventKind::Modified, obj.clone(), Some(old));
        // An object being deleted goes once its last finalizer is removed.
        let meta = &old_v["metadata"];
        if meta.get("deletionTimestamp").is_some()
            && !finalizers_of(meta).is_empty()
            && finalizers_of(&obj.value()["metadata"]).is_empty()
        {
            self.delete(res, key)?;
        }
        Ok(obj)
    }

    /// Stores `obj` (already stamped with the next revision) in place of `old` as a MODIFIED
    /// change, without checks: the benchmark's flood (`sim::bench`).
    pub fn replace_raw(&mut self, obj: Obj, old: Arc<Obj>) {
        debug_assert_eq!(obj.rv, self.rev + 1);
        self.rev = obj.rv;
        let res = obj.res;
        self.record(res, EventKind::Modified, Arc::new(obj), Some(old));
    }

    /// Deletes an object and returns its last state (stamped with the deletion's revision).
    /// Pods first get a MODIFIED with `deletionTimestamp` and a grace period of 0, as a pod
    /// without a kubelet does.
    pub fn delete(&mut self, res: usize, key: &str) -> Result<Arc<Obj>, Status> {
        let def = &RESOURCES[res];
        let Some(mut old) = self.objects[res].get(key).cloned() else {
            let name = key.rsplit('/').next().unwrap_or(key);
            return Err(Status::not_found(def.plural, def.group, name));
        };
        if res == PODS || res == NAMESPACES {
            let mut v = old.value();
            let rv = self.rev + 1;
            if v["metadata"].get("deletionTimestamp").is_none() {
                v["metadata"]["deletionTimestamp"] = json!(now_rfc3339());
            }
            if res == PODS {
                v["metadata"]["deletionGracePeriodSeconds"] = json!(0);
            } else {
                v["status"] = json!({"phase": "Terminating"});
            }
            v["metadata"]["resourceVersion"] = json!(rv.to_string());
            let obj = Arc::new(Obj::from_value(res, v));
            self.rev = rv;
            self.record(res, EventKind::Modified, obj.clone(), Some(old));
            old = obj;
        }
        if res == CRDS {
            // apiextensions' `customresourcecleanup` finalizer deletes every custom object
            // of the CRD before it goes away; then its resource is no longer served.
            for r in (0..RESOURCES.len()).filter(|r| crd_name(&RESOURCES[*r]) == key) {
                let keys: Vec<String> = self.objects[r].keys().cloned().collect();
                for k in keys {
                    self.delete(r, &k)?;
                }
            }
        }
        if res == NAMESPACES {
            // The namespace controller empties a Terminating namespace before it goes away.
            let prefix = format!("{}/", old.name);
            for r in (0..RESOURCES.len()).filter(|r| RESOURCES[*r].namespaced) {
                let keys: Vec<String> = self.objects[r]
                    .range::<str, _>((Bound::Included(prefix.as_str()), Bound::Unbounded))
                    .map(|(k, _)| k)
                    .take_while(|k| k.starts_with(&prefix))
                    .cloned()
                    .collect();
                for k in keys {
                    self.delete(r, &k)?;
                }
            }
        }
        let rv = self.rev + 1;
        let gone = Arc::new(old.restamped(rv));
        self.rev = rv;
        self.record(res, EventKind::Deleted, gone.clone(), Some(old));
        Ok(gone)
    }

    /// Deletes an object as kube-apiserver does when a garbage collector runs: `policy`
    /// adds its finalizer (`foregroundDeletion`, `orphan`); an object left with finalizers
    /// only gets `deletionTimestamp` (a MODIFIED) and stays until they are removed
    /// ([`Store::update`] then deletes it), otherwise it goes as with [`Store::delete`].
    pub fn delete_with(
        &mut self,
        res: usize,
        key: &str,
        policy: Propagation,
    ) -> Result<Deleted, Status> {
        let def = &RESOURCES[res];
        let Some(old) = self.objects[res].get(key).cloned() else {
            let name = key.rsplit('/').next().unwrap_or(key);
            return Err(Status::not_found(def.plural, def.group, name));
        };
        let mut v = old.value();
        let mut fins = finalizers_of(&v["metadata"]);
        let (add, drop) = match policy {
            Propagation::Background => (None, None),
            Propagation::Foreground => (Some(FOREGROUND), Some(ORPHAN)),
            Propagation::Orphan => (Some(ORPHAN), Some(FOREGROUND)),
        };
        if let Some(add) = add {
            fins.retain(|f| Some(f.as_str()) != drop);
            if !fins.iter().any(|f| f == add) {
                fins.push(add.to_string());
            }
        }
        if fins.is_empty() {
            return self.delete(res, key).map(Deleted::Gone);
        }
        let meta = &mut v["metadata"];
        if meta.get("deletionTimestamp").is_none() {
            meta["deletionTimestamp"] = json!(now_rfc3339());
            meta["deletionGracePeriodSeconds"] = json!(0);
        }
        meta["finalizers"] = json!(fins);
        let rv = self.rev + 1;
        meta["resourceVersion"] = json!(rv.to_string());
        let obj = Arc::new(Obj::from_value(res, v));
        if obj.json == old.restamped(rv).json {
            return Ok(Deleted::Finalizing(old));
        }
        self.rev = rv;
        self.record(res, EventKind::Modified, obj.clone(), Some(old));
        Ok(Deleted::Finalizing(obj))
    }

    /// Every object of `res`, in key order.
    pub fn objects(&self, res: usize) -> impl Iterator<Item = &Arc<Obj>> {
        self.objects[res].values()
    }

    /// The objects of `res` in `namespace`, in key order.
    pub fn objects_in(&self, res: usize, namespace: &str) -> impl Iterator<Item = &Arc<Obj>> {
        let (lo, hi) = (format!("{namespace}/"), format!("{namespace}0"));
        self.objects[res]
            .range::<str, _>((Bound::Included(lo.as_str()), Bound::Excluded(hi.as_str())))
            .map(|(_, o)| o)
    }

    /// Deletes the object at `key` and creates it again under the same name, as a client
    /// that deletes and re-creates it would: a DELETED (for a pod, after its MODIFIED with
    /// `deletionTimestamp`), then an ADDED with a new uid, resourceVersion and
    /// creationTimestamp. Returns the new object.
    pub fn recreate(&mut self, res: usize, key: &str) -> Result<Arc<Obj>, Status> {
        let gone = self.delete(res, key)?;
        let mut v = gone.value();
        if let Some(meta) = v["metadata"].as_object_mut() {
            for server_set in ["deletionTimestamp", "deletionGracePeriodSeconds"] {
                meta.shift_remove(server_set);
            }
        }
        if res == PODS {
            v["status"] = json!({"phase": "Pending"});
        }
        self.create(res, v, true)
    }

    /// Whether resource `res` is served: a custom resource only while its CRD exists (then
    /// kube-apiserver answers its paths `404 page not found` and discovery omits it).
    pub fn served(&self, res: usize) -> bool {
        let def = &RESOURCES[res];
        !def.custom || self.objects[CRDS].contains_key(&crd_name(def))
    }

    /// Whether any resource of `group`/`version` is served.
    pub fn group_version_served(&self, group: &str, version: &str) -> bool {
        (0..RESOURCES.len()).any(|r| {
            RESOURCES[r].group == group && RESOURCES[r].version == version && self.served(r)
        })
    }

    /// Groups none of whose resources is served (their CRDs were deleted).
    pub fn unserved_groups(&self) -> Vec<&'static str> {
        let mut gone: Vec<&'static str> = (0..RESOURCES.len())
            .filter(|r| !self.served(*r))
            .map(|r| RESOURCES[r].group)
            .filter(|g| (0..RESOURCES.len()).all(|r| RESOURCES[r].group != *g || !self.served(r)))
            .collect();
        gone.dedup();
        gone
    }

    /// Changes after `pos` (at most `max`), and the revision up to which they were examined.
    /// `Err(compacted)` if changes after `pos` were compacted away.
    pub fn changes_after(&self, pos: u64, max: usize) -> Result<(Vec<Arc<Change>>, u64), u64> {
        if pos >= self.rev {
            return Ok((Vec::new(), pos));
        }
        if pos < self.compacted {
            return Err(self.compacted);
        }
        let idx = self.history.partition_point(|c| c.rv <= pos);
        let end = (idx + max.max(1)).min(self.history.len());
        let out: Vec<Arc<Change>> = self.history.range(idx..end).cloned().collect();
        let upto = if end == self.history.len() {
            self.rev
        } else {
            out.last().map_or(self.rev, |c| c.rv)
        };
        Ok((out, upto))
    }

    /// One page of a list: see [`ListQuery`]; `pred` filters.
    pub fn list(&self, q: ListQuery<'_>, pred: &dyn Fn(&Obj) -> bool) -> ListPage {
        let ListQuery {
            res,
            namespace,
            at,
            start,
            limit,
            count_remaining,
        } = q;
        // State at `at` = current state overlaid with the `prev` of the earliest change after
        // `at` of each key (iterating backwards, the last insert wins).
        let mut overlay: BTreeMap<&str, Option<&Arc<Obj>>> = BTreeMap::new();
        if at < self.rev {
            for c in self.history.iter().rev() {
                if c.rv <= at {
                    break;
                }
                if c.res == res {
                    overlay.insert(c.obj.key.as_str(), c.prev.as_ref());
                }
            }
        }
        let (ns_lo, ns_hi) = match namespace {
            Some(ns) => (format!("{ns}/"), Some(format!("{ns}0"))),
            None => (String::new(), None),
        };
        let lo = match start {
            Some(s) if s > ns_lo.as_str() => s.to_string(),
            _ => ns_lo,
        };
        let hi = match &ns_hi {
            Some(h) => Bound::Excluded(h.as_str()),
            None => Bound::Unbounded,
        };
        let bounds = (Bound::Included(lo.as_str()), hi);
        let mut a = self.objects[res].range::<str, _>(bounds).peekable();
        let mut b = overlay.range::<str, _>(bounds).peekable();
        let mut next = move || -> Option<Option<&Arc<Obj>>> {
            let take_a = match (a.peek(), b.peek()) {
                (None, None) => return None,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (Some((ka, _)), Some((kb, _))) => {
                    if ka.as_str() < **kb {
                        true
                    } else {
                        if ka.as_str() == **kb {
                            a.next();
                        }
                        false
                    }
                }
            };
            if take_a {
                a.next().map(|(_, o)| Some(o))
            } else {
                b.next().map(|(_, o)| *o)
            }
        };
        let mut page = ListPage::default();
        while let Some(o) = next() {
            let Some(o) = o else { continue };
            if !pred(o) {
                continue;
            }
            if limit > 0 && page.items.len() == limit {
                // More items follow: resume right after the last returned key.
                if let Some(last) = page.items.last() {
                    page.next_start = Some(format!("{}\u{0}", last.key));
                }
                if count_remaining {
                    let mut n = 1u64;
                    while let Some(o) = next() {
                        if o.is_some_and(|o| pred(o)) {
                            n += 1;
                        }
                    }
                    page.remaining = Some(n);
                }
                break;
            }
            page.items.push(o.clone());
        }
        page
    }

    /// `{"revision":"N","objects":{"<plural>":{"<key>":"<rv>",…},…}}`.
    pub fn state(&self) -> Value {
        let mut objects = Map::new();
        for (i, def) in RESOURCES.iter().enumerate() {
            let m: Map<String, Value> = self.objects[i]
                .iter()
                .map(|(k, o)| (k.clone(), json!(o.rv.to_string())))
                .collect();
            objects.insert(def.plural.to_string(), Value::Object(m));
        }
        json!({"revision": self.rev.to_string(), "objects": objects})
    }
}

/// The finalizer of a foreground deletion: the object stays until its blocking dependents
/// are gone.
pub const FOREGROUND: &str = "foregroundDeletion";
/// The finalizer of an orphaning deletion: the object stays until its dependents no longer
/// name it as an owner.
pub const ORPHAN: &str = "orphan";

/// What a delete does to the object's dependents: `DeleteOptions.propagationPolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Propagation {
    /// The object goes at once; the garbage collector deletes its dependents after.
    Background,
    /// The object waits (finalizer `foregroundDeletion`) until its dependents are gone.
    Foreground,
    /// The object waits (finalizer `orphan`) until its dependents are released.
    Orphan,
}

/// What [`Store::delete_with`] did.
#[derive(Debug)]
pub enum Deleted {
    /// The object is gone: its last state.
    Gone(Arc<Obj>),
    /// The object stays, with `deletionTimestamp`, until its finalizers are removed.
    Finalizing(Arc<Obj>),
}

/// `metadata.finalizers` (non-strings left out).
pub fn finalizers_of(meta: &Value) -> Vec<String> {
    meta["finalizers"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The name of the CRD that defines a custom resource: `<plural>.<group>`.
pub fn crd_name(def: &ResourceDef) -> String {
    if def.custom {
        format!("{}.{}", def.plural, def.group)
    } else {
        String::new()
    }
}

fn ensure_meta(v: &mut Value) -> &mut Map<String, Value> {
    let obj = match v {
        Value::Object(m) => m,
        other => {
            *other = Value::Object(Map::new());
            match other {
                Value::Object(m) => m,
                _ => unreachable!("just assigned an object"),
            }
        }
    };
    let meta = obj
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    match meta {
        Value::Object(m) => m,
        _ => unreachable!("metadata was made an object"),
    }
}

fn validate_name(def: &ResourceDef, name: &str) -> Result<(), Status> {
    if name.is_empty() {
        return Err(Status::invalid_object(
            def.kind,
            def.group,
            name,
            &[Cause {
                reason: "FieldValueRequired",
                message: "Required value: name or generateName is required".into(),
                field: "metadata.name".into(),
            }],
        ));
    }
    let label_ok = |l: &str| {
        let b = l.as_bytes();
        !b.is_empty()
            && b.len() <= 63
            && b[0].is_ascii_alphanumeric()
            && b[b.len() - 1].is_ascii_alphanumeric()
            && b.iter()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
    };
    if name.len() <= 253 && name.split('.').all(label_ok) {
        return Ok(());
    }
    let msg = format!(
        "Invalid value: \"{name}\": a lowercase RFC 1123 subdomain must consist of lower case \
         alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character \
         (e.g. 'example.com', regex used for validation is \
         '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    );
    Err(Status::invalid_object(
        def.kind,
        def.group,
        name,
        &[Cause {
            reason: "FieldValueInvalid",
            message: msg,
            field: "metadata.name".into(),
        }],
    ))
}

/// ObjectMeta's fields in Go's order (how kube-apiserver encodes typed metadata).
pub const META_ORDER: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

/// A built-in object as kube-apiserver stores it (every object the simulator stores:
/// [`Obj::from_value`]): decoded into its Go type and encoded again, so
/// that its JSON is what Go writes (field order, a struct
/// without `omitempty` written whole: an HPA created without `status` has
/// `"status":{"desiredReplicas":0,"currentMetrics":null}`) and its protobuf decodes to
/// the same JSON. Through the table both ways; a custom resource, or JSON the table cannot
/// encode, is left as it is.
pub fn as_stored(def: &ResourceDef, v: Value) -> Value {
    let v = normalize(def, v);
    let Some(table) = super::discovery::protobuf_table().filter(|_| !def.custom) else {
        return v;
    };
    let mut pb = Vec::new();
    let mut json = Vec::new();
    if crate::protobuf_encode::object(table, &v, &mut pb).is_err()
        || protobuf::object(table, &pb, &mut json).is_err()
    {
        return v;
    }
    serde_json::from_slice(&json).unwrap_or(v)
}

/// Puts keys in the order the real server encodes them: Go struct order for built-in kinds
/// (`kind, apiVersion, metadata`, then the rest as given), alphabetical at every level for
/// custom resources. Sets `kind` and `apiVersion`.
pub fn normalize(def: &ResourceDef, v: Value) -> Value {
    let Value::Object(mut m) = v else { return v };
    m.insert("kind".into(), json!(def.kind));
    m.insert("apiVersion".into(), json!(def.api_version()));
    if def.custom {
        return sort_keys(Value::Object(m));
    }
    let mut out = Map::new();
    for k in ["kind", "apiVersion"] {
        if let Some(x) = m.shift_remove(k) {
            out.insert(k.into(), x);
        }
    }
    if let Some(Value::Object(mut meta)) = m.shift_remove("metadata") {
        let mut om = Map::new();
        for k in META_ORDER {
            if let Some(x) = meta.shift_remove(*k) {
                om.insert((*k).into(), x);
            }
        }
        om.extend(meta);
        out.insert("metadata".into(), Value::Object(om));
    }
    out.extend(m);
    Value::Object(out)
}

/// Sorts object keys alphabetically at every level.
pub fn sort_keys(v: Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(String, Value)> = m.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k, sort_keys(v)))
                    .collect(),
            )
        }
        Value::Array(a) => Value::Array(a.into_iter().map(sort_keys).collect()),
        other => other,
    }
}

/// The store behind a lock, plus the revision notifier watchers wait on.
#[derive(Debug)]
pub struct Cluster {
    store: RwLock<Store>,
    rev_tx: watch::Sender<u64>,
}

impl Cluster {
    pub fn new(store: Store) -> Cluster {
        let (rev_tx, _) = watch::channel(store.rev());
        Cluster {
            store: RwLock::new(store),
            rev_tx,
        }
    }

    /// Read access (never held across an await).
    pub fn read(&self) -> RwLockReadGuard<'_, Store> {
        self.store.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs a mutation and wakes every watcher.
    pub fn write<R>(&self, f: impl FnOnce(&mut Store) -> R) -> R {
        let (r, rev) = {
            let mut s: RwLockWriteGuard<'_, Store> =
                self.store.write().unwrap_or_else(|e| e.into_inner());
            let r = f(&mut s);
            (r, s.rev())
        };
        self.rev_tx.send_replace(rev);
        r
    }

    /// A receiver that changes whenever the revision moves.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.rev_tx.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::super::resources::CONFIGMAPS;
    use super::*;

    fn cm(ns: &str, name: &str, app: &str) -> Value {
        json!({"metadata":{"name":name,"namespace":ns,"labels":{"app":app}},"data":{"k":"v"}})
    }

    /// A restamped object is the one its value with the new resourceVersion would build:
    /// a built-in's bytes rewritten in place, a custom resource's rebuilt.
    #[test]
    fn restamped_is_the_object_built_with_the_new_resource_version() {
        let mut s = store();
        let widgets = (0..RESOURCES.len()).find(|r| RESOURCES[*r].custom).unwrap();
        let mut w =
            json!({"metadata":{"name":"w","namespace":"ns1"},"apiVersion":"x/v1","kind":"X"});
        // A custom resource whose first key sorts before metadata, holding the same text.
        w["aaa"] = json!({"resourceVersion": "3"});
        for (res, v) in [(CONFIGMAPS, cm("ns1", "a", "web")), (widgets, w)] {
            let o = s.create(res, v, true).unwrap();
            let again = o.restamped(o.rv + 7);
            let mut v = o.value();
            v["metadata"]["resourceVersion"] = json!((o.rv + 7).to_string());
            let want = Obj::from_value(res, v);
            assert_eq!((again.rv, &again.json), (want.rv, &want.json));
            assert_eq!(again.key, o.key);
        }
    }

    fn store() -> Store {
        let mut s = Store::new(100);
        s.create(NAMESPACES, json!({"metadata":{"name":"ns1"}}), true)
            .unwrap();
        s.create(NAMESPACES, json!({"metadata":{"name":"ns2"}}), true)
            .unwrap();
        s
    }

    fn names(p: &ListPage) -> Vec<&str> {
        p.items.iter().map(|o| o.key.as_str()).collect()
    }

    #[test]
    fn create_stamps_and_orders_metadata() {
        let mut s = store();
        let before = s.rev();
        let o = s.create(CONFIGMAPS, cm("ns1", "a", "x"), true).unwrap();
        assert_eq!(o.rv, before + 1);
        assert_eq!(s.rev(), before + 1);
        let text = std::str::from_utf8(&o.json).unwrap();
        assert!(text.starts_with(r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"ns1","uid":""#));
        let mut item = Vec::new();
        o.write_item(&mut item);
        assert!(item.starts_with(br#"{"metadata":{"name":"a""#));
        let e = s.create(CONFIGMAPS, cm("ns1", "a", "x"), true).unwrap_err();
        assert_eq!(e.code, 409);
        let e = s
            .create(CONFIGMAPS, cm("nope", "a", "x"), true)
            .unwrap_err();
        assert_eq!(e.code, 404);
        let e = s
            .create(CONFIGMAPS, cm("ns1", "Bad_Name", "x"), true)
            .unwrap_err();
        assert_eq!(e.code, 422);
    }

    #[test]
    fn an_update_without_changes_is_not_written() {
        let mut s = store();
        let o = s.create(CONFIGMAPS, cm("ns1", "a", "x"), true).unwrap();
        let r = s.rev();
        let same = s.update(CONFIGMAPS, "ns1/a", o.value()).unwrap();
        assert_eq!((same.rv, s.rev()), (o.rv, r));
    }

    #[test]
    fn update_checks_resource_version() {
        let mut s = store();
        let o = s.create(CONFIGMAPS, cm("ns1", "a", "x"), true).unwrap();
        let mut v = o.value();
        v["data"]["k"] = json!("w");
        let o2 = s.update(CONFIGMAPS, "ns1/a", v.clone()).unwrap();
        assert_eq!(o2.rv, o.rv + 1);
        assert_eq!(o2.uid, o.uid);
        assert_eq!(s.update(CONFIGMAPS, "ns1/a", v).unwrap_err().code, 409);
        assert_eq!(
            s.update(CONFIGMAPS, "ns1/zz", json!({})).unwrap_err().code,
            404
        );
    }

    #[test]
    fn lists_at_old_revisions_and_pages() {
        let mut s = store();
        for (ns, n) in [("ns1", "a"), ("ns1", "b"), ("ns2", "c"), ("ns1", "d")] {
            s.create(CONFIGMAPS, cm(ns, n, "x"), true).unwrap();
        }
        let r1 = s.rev();
        s.delete(CONFIGMAPS, "ns1/b").unwrap();
        s.create(CONFIGMAPS, cm("ns1", "e", "x"), true).unwrap();
        let all = |_: &Obj| true;
        let now = s.list(ListQuery::all(CONFIGMAPS, s.rev()), &all);
        assert_eq!(names(&now), ["ns1/a", "ns1/d", "ns1/e", "ns2/c"]);
        let old = s.list(ListQuery::all(CONFIGMAPS, r1), &all);
        assert_eq!(names(&old), ["ns1/a", "ns1/b", "ns1/d", "ns2/c"]);
        let q = ListQuery {
            namespace: Some("ns1"),
            limit: 2,
            count_remaining: true,
            ..ListQuery::all(CONFIGMAPS, r1)
        };
        let p1 = s.list(q, &all);
        assert_eq!(names(&p1), ["ns1/a", "ns1/b"]);
        assert_eq!(p1.remaining, Some(1));
        let p2 = s.list(
            ListQuery {
                start: p1.next_start.as_deref(),
                ..q
            },
            &all,
        );
        assert_eq!(names(&p2), ["ns1/d"]);
        assert!(p2.next_start.is_none());
    }

    #[test]
    fn history_is_bounded_and_compactable() {
        let mut s = Store::new(3);
        s.create(NAMESPACES, json!({"metadata":{"name":"ns1"}}), true)
            .unwrap();
        for i in 0..5 {
            s.create(CONFIGMAPS, cm("ns1", &format!("c{i}"), "x"), true)
                .unwrap();
        }
        assert_eq!(s.compacted(), s.rev() - 3);
        assert!(s.changes_after(s.rev() - 4, 10).is_err());
        let (ch, upto) = s.changes_after(s.rev() - 2, 10).unwrap();
        assert_eq!(ch.len(), 2);
        assert_eq!(upto, s.rev());
        s.compact(s.rev());
        assert_eq!(s.compacted(), s.rev());
        assert!(s.changes_after(s.rev() - 1, 10).is_err());
    }

    #[test]
    fn deleting_a_namespace_deletes_its_contents() {
        let mut s = store();
        s.create(CONFIGMAPS, cm("ns1", "a", "x"), true).unwrap();
        s.create(CONFIGMAPS, cm("ns2", "b", "x"), true).unwrap();
        let r = s.rev();
        s.delete(NAMESPACES, "ns1").unwrap();
        let (ch, _) = s.changes_after(r, 10).unwrap();
        let kinds: Vec<(usize, EventKind)> = ch.iter().map(|c| (c.res, c.kind)).collect();
        assert_eq!(
            kinds,
            [
                (NAMESPACES, EventKind::Modified),
                (CONFIGMAPS, EventKind::Deleted),
                (NAMESPACES, EventKind::Deleted)
            ]
        );
        assert!(s.get(CONFIGMAPS, "ns1/a").is_none());
        assert!(s.get(CONFIGMAPS, "ns2/b").is_some());
        assert_eq!(
            s.create(CONFIGMAPS, cm("ns1", "c", "x"), true)
                .unwrap_err()
                .code,
            404
        );
    }

    #[test]
    fn a_skipped_change_is_marked_and_still_listed() {
        let mut s = store();
        let o = s.create(CONFIGMAPS, cm("ns1", "a", "x"), true).unwrap();
        s.create(CONFIGMAPS, cm("ns1", "b", "x"), true).unwrap();
        let r = s.rev();
        s.skip_next_change(Some(CONFIGMAPS), Some("ns1/a".into()));
        s.skip_next_change(None, None);
        // The second rule takes the first change of anything: b's.
        s.delete(CONFIGMAPS, "ns1/b").unwrap();
        let mut v = o.value();
        v["data"]["k"] = json!("w");
        s.update(CONFIGMAPS, "ns1/a", v.clone()).unwrap();
        v["data"]["k"] = json!("z");
        v["metadata"]["resourceVersion"] = json!((r + 2).to_string());
        s.update(CONFIGMAPS, "ns1/a", v).unwrap();
        let (ch, _) = s.changes_after(r, 10).unwrap();
        let got: Vec<(&str, EventKind, bool)> = ch
            .iter()
            .map(|c| (c.obj.key.as_str(), c.kind, c.skipped))
            .collect();
        assert_eq!(
            got,
            [
                ("ns1/b", EventKind::Deleted, true),
                ("ns1/a", EventKind::Modified, true),
                ("ns1/a", EventKind::Modified, false),
            ]
        );
        let now = s.list(ListQuery::all(CONFIGMAPS, s.rev()), &|_: &Obj| true);
        assert_eq!(names(&now), ["ns1/a"]);
        assert_eq!(now.items[0].rv, s.rev());
        s.skip_next_change(Some(CONFIGMAPS), None);
        s.clear_skips();
        let c = s.create(CONFIGMAPS, cm("ns1", "c", "x"), true).unwrap();
        let (ch, _) = s.changes_after(c.rv - 1, 10).unwrap();
        assert!(!ch[0].skipped);
    }

    #[test]
    fn an_object_with_finalizers_stays_until_the_last_is_removed() {
        let mut s = store();
        let mut v = cm("ns1", "a", "x");
        v["metadata"]["finalizers"] = json!(["example.com/hold"]);
        s.create(CONFIGMAPS, v, true).unwrap();
        let Deleted::Finalizing(o) = s
            .delete_with(CONFIGMAPS, "ns1/a", Propagation::Foreground)
            .unwrap()
        else {
            panic!("an object with finalizers stays");
        };
        let meta = o.value()["metadata"].clone();
        assert!(meta["deletionTimestamp"].is_string());
        assert_eq!(meta["finalizers"], json!(["example.com/hold", FOREGROUND]));
        // Orphan replaces foreground; deletionTimestamp is kept.
        let Deleted::Finalizing(o) = s
            .delete_with(CONFIGMAPS, "ns1/a", Propagation::Orphan)
            .unwrap()
        else {
            panic!("still finalizing");
        };
        assert_eq!(
            o.value()["metadata"]["finalizers"],
            json!(["example.com/hold", ORPHAN])
        );
        assert_eq!(
            o.value()["metadata"]["deletionTimestamp"],
            meta["deletionTimestamp"]
        );
        let mut v = o.value();
        v["metadata"]["finalizers"] = json!([ORPHAN]);
        s.update(CONFIGMAPS, "ns1/a", v).unwrap();
        assert!(s.get(CONFIGMAPS, "ns1/a").is_some());
        let r = s.rev();
        let mut v = s.get(CONFIGMAPS, "ns1/a").unwrap().value();
        v["metadata"]
            .as_object_mut()
            .unwrap()
            .shift_remove("finalizers");
        s.update(CONFIGMAPS, "ns1/a", v).unwrap();
        assert!(
            s.get(CONFIGMAPS, "ns1/a").is_none(),
            "gone with its last finalizer"
        );
        let (ch, _) = s.changes_after(r, 10).unwrap();
        let kinds: Vec<EventKind> = ch.iter().map(|c| c.kind).collect();
        assert_eq!(kinds, [EventKind::Modified, EventKind::Deleted]);
    }

    #[test]
    fn pod_delete_is_modified_then_deleted() {
        let mut s = store();
        s.create(PODS, json!({"metadata":{"name":"p","namespace":"ns1"},"spec":{},"status":{"phase":"Pending"}}), true)
            .unwrap();
        let r = s.rev();
        let gone = s.delete(PODS, "ns1/p").unwrap();
        assert_eq!(gone.rv, r + 2);
        let (ch, _) = s.changes_after(r, 10).unwrap();
        assert_eq!(ch[0].kind, EventKind::Modified);
        assert_eq!(ch[1].kind, EventKind::Deleted);
        assert!(gone.value()["metadata"]["deletionTimestamp"].is_string());
    }
}
