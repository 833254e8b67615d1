//! What the informer hands its sinks ([`super::sink::Sink`]): a [`Record`] of one delta,
//! handler call, reflector event, observation or sync, in the order the informer made
//! them. A record borrows what it tells (the delta, the event) for the time of one call:
//! a sink that keeps it copies what it needs.
//!
//! The informer's queue carries [`Notice`]s among the deltas: the reflector's events and
//! the [`Observation`]s queued in order with the deltas (consistency checks, a store's
//! cost). Observations made elsewhere (freshness, latency, conflicts) are handed to the
//! sinks directly. Each observation's type belongs to the part that makes it.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::cache::consistency::Report;
use crate::cache::cost::CacheCost;
use crate::cache::delta::{Delta, DeltaType};
use crate::cache::handlers::HandlerCall;
use crate::cache::object::ObjectRef;
use crate::cache::reflector::ReflectorEvent;
use crate::client::target::Resource;
use crate::context::ContextName;
use crate::informer::blame::{self, Blame};
use crate::informer::conflict::{Conflict, Conflicts};
use crate::informer::diff::{self, Diff, DiffMode};
use crate::informer::freshness::{Lag, Latency};

/// What a record tells.
#[derive(Debug, Clone, Copy)]
pub enum Body<'a> {
    /// One delta of a popped key, in order. `initial_list`: popped before HasSynced.
    Delta {
        key: &'a str,
        delta: &'a Delta,
        initial_list: bool,
        /// The version of the object kwatch knew before this delta (the store's copy,
        /// or the previous delta's object within one pop); `None` if unknown.
        prev: Option<&'a ObjectRef>,
    },
    /// What the reflector did.
    Event(&'a ReflectorEvent),
    /// What another part observed of the informer ([`Observation`]).
    Observed(&'a Observation),
    /// HasSynced became true: the initial list has been popped.
    Synced,
    /// A call of the event handler (`--view handlers`), made by a delta of the pop of
    /// `key`; `initial_list`: that pop came before HasSynced.
    Handler {
        key: &'a str,
        call: &'a HandlerCall,
        initial_list: bool,
    },
}

impl Body<'_> {
    /// A sign of a working watch: a bookmark, a watch that closed cleanly after events or
    /// bookmarks, or a delta from a watch event (not a relist's `Replaced`/`Sync` nor its
    /// tombstones).
    pub fn shows_a_working_watch(&self) -> bool {
        match self {
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
}

/// One thing the informer tells its sinks.
#[derive(Debug)]
pub struct Record<'a> {
    pub resource: &'a Resource,
    /// The kubeconfig context, when watching several (`--context a,b`).
    pub context: Option<&'a ContextName>,
    pub time: jiff::Timestamp,
    pub body: Body<'a>,
    /// Which informer delivered it; all `None` where unknown (a recording without it).
    pub informer: InformerInfo<'a>,
    /// `--blame`'s attribution, made on first use ([`Record::blame`]): the printer,
    /// `--stats` and the conflict finder read one computation. Empty when built.
    pub blame: std::cell::OnceCell<Option<Vec<Blame>>>,
    /// `--follow`, `--events`: where the record's object sits in the owner graph.
    pub follow: Option<&'a Followed>,
}

impl<'a> Record<'a> {
    /// A record of `body` from an informer it does not name, its blame not made yet.
    pub fn new(
        resource: &'a Resource,
        context: Option<&'a ContextName>,
        time: jiff::Timestamp,
        body: Body<'a>,
    ) -> Record<'a> {
        Record {
            resource,
            context,
            time,
            body,
            informer: InformerInfo::default(),
            blame: std::cell::OnceCell::new(),
            follow: None,
        }
    }

    /// The record's `--diff`, if it has one: a delta's against the version kwatch knew,
    /// an OnUpdate's from its old object to its new one.
    pub fn diff(&self, mode: DiffMode) -> Option<Diff> {
        match &self.body {
            Body::Delta { delta, prev, .. } => {
                diff::compute(mode, delta.kind, *prev, delta.object.object())
            }
            Body::Handler {
                call: HandlerCall::OnUpdate { old, new },
                ..
            } => diff::compute(mode, DeltaType::Updated, Some(old), Some(new)),
            _ => None,
        }
    }

    /// The record's `--blame`, if asked (`on`) and it has one (on the records that have a
    /// diff).
    pub fn blame(&self, on: bool) -> Option<&[Blame]> {
        if !on {
            return None;
        }
        let made = self.blame.get_or_init(|| match &self.body {
            Body::Delta { delta, prev, .. } => {
                blame::compute(delta.kind, *prev, delta.object.object())
            }
            Body::Handler {
                call: HandlerCall::OnUpdate { old, new },
                ..
            } => blame::compute(DeltaType::Updated, Some(old), Some(new)),
            _ => None,
        });
        made.as_deref()
    }

    /// The fights over fields that this record's blamed changes complete (`--blame`),
    /// each as the `Conflict` observation that tells it.
    pub fn conflicts(&self, found: &mut Conflicts) -> Vec<Observation> {
        let Body::Delta { key, .. } = self.body else {
            return Vec::new();
        };
        let Some(blamed) = self.blame(true) else {
            return Vec::new();
        };
        let at = (self.context, self.resource.name.as_str(), key);
        let fights = found.observe(at, self.time, blamed);
        fights.into_iter().map(Observation::Conflict).collect()
    }

    /// The objects the record carries, in the order they are written after its fields,
    /// each with its field name: a handler call's old object (OnUpdate), then the object.
    pub fn objects(&self) -> [(&'static str, Option<&'a ObjectRef>); 2] {
        match self.body {
            Body::Delta { delta, .. } => [("oldObject", None), ("object", delta.object.object())],
            Body::Handler { call, .. } => [("oldObject", call.old()), ("object", call.object())],
            Body::Event(_) | Body::Observed(_) | Body::Synced => {
                [("oldObject", None), ("object", None)]
            }
        }
    }
}

/// `--follow` and `--events`: a record's place in the owner graph (docs/output-schema.md,
/// "Followed objects").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Followed {
    /// The owner path from the root to the record's object, itself last, each step
    /// `short-kind/name` (`deploy/web › rs/web-7c9 › pod/web-7c9-x`); an Event's is its
    /// object's path with `event/NAME` after it.
    pub path: Arc<str>,
    /// Set on the record that makes the object join or leave the graph.
    pub change: Option<GraphChange>,
}

impl Followed {
    /// The steps from the root before this object: 0 for a root.
    pub fn depth(&self) -> usize {
        self.path.matches(PATH_SEPARATOR).count()
    }
}

/// Between two steps of an owner path.
pub const PATH_SEPARATOR: &str = " › ";

/// Why an object joins or leaves the graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphChange {
    /// A root appeared, or an object naming an owner of the graph did.
    Joined,
    /// Deleted: it leaves (its children stay until they go: they still name it).
    Deleted,
    /// Its ownerReferences no longer lead to the graph: it leaves, its subtree with it.
    Orphaned,
    /// In the subtree of an orphaned object: it leaves with it (a `Sync` record of its
    /// object as its informer's store holds it, right after the orphaned one's).
    Left,
}

impl GraphChange {
    /// The change a record's `graph` field names ([`GraphChange::as_str`]'s words).
    pub fn parse(s: &str) -> Option<GraphChange> {
        use GraphChange::*;
        [Joined, Deleted, Orphaned, Left]
            .into_iter()
            .find(|c| c.as_str() == s)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            GraphChange::Joined => "joined",
            GraphChange::Deleted => "deleted",
            GraphChange::Orphaned => "orphaned",
            GraphChange::Left => "left",
        }
    }
}

/// Which informer delivered a record (docs/client-go-fidelity.md, "client-go releases"):
/// `List` and `Synced` records say `clientGo` and `queue`, deltas of a batch pop say `batch`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InformerInfo<'a> {
    /// The client-go release whose informer ran (`0.36`: `--client-go`'s, else the
    /// server's, see `Release::for_server`); `None` only in a recording made without it.
    pub client_go: Option<&'a str>,
    /// The queue: `DeltaFIFO`, `RealFIFO`, `RealFIFO+batch`, `RealFIFO+batch+atomic`.
    pub queue: Option<&'a str>,
    /// How many deltas the pop that delivered this delta took, when the queue pops in
    /// batches (the deltas of a popped atomic relist or resync count as one).
    pub batch: Option<u32>,
}

/// What other parts than the reflector observe of an informer, told among its records.
///
/// Its serde form is the record's (docs/output-schema.md), as [`ReflectorEvent`]'s is:
/// `type` the variant's name, then the observation's own fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum Observation {
    /// What a `--check-consistency` check found ([`crate::cache::consistency`]), queued
    /// in order with the deltas.
    Consistency(Report),
    /// One write of `--probe`, timed from the patch being sent to its delta popping from
    /// the probe's own informer.
    Latency(Latency),
    /// `--freshness`: how far the informer's store is behind the server, at each sample
    /// ([`crate::informer::freshness`]).
    Freshness(Lag),
    /// `--freshness`: the store's lag has reached `--stale-after`; once until it falls
    /// below again.
    Stale(Lag),
    /// What the informer's store costs (`--cache-stats`), measured every period and
    /// queued in order with the deltas.
    CacheStats(CacheCost),
    /// Field managers fighting over one path of one object (`--blame`,
    /// [`crate::informer::conflict`]).
    Conflict(Conflict),
}

/// What an informer's queue carries among the deltas, in order with them.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    Reflector(ReflectorEvent),
    Observed(Observation),
}

impl Notice {
    /// The record's body that tells this notice.
    pub fn body(&self) -> Body<'_> {
        match self {
            Notice::Reflector(e) => Body::Event(e),
            Notice::Observed(o) => Body::Observed(o),
        }
    }

    /// The reflector's event, if this is one.
    pub fn reflector(&self) -> Option<&ReflectorEvent> {
        match self {
            Notice::Reflector(e) => Some(e),
            Notice::Observed(_) => None,
        }
    }
}

impl From<ReflectorEvent> for Notice {
    fn from(e: ReflectorEvent) -> Notice {
        Notice::Reflector(e)
    }
}

impl From<Observation> for Notice {
    fn from(o: Observation) -> Notice {
        Notice::Observed(o)
    }
}

impl From<Report> for Notice {
    fn from(r: Report) -> Notice {
        Notice::Observed(Observation::Consistency(r))
    }
}
