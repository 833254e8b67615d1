//! Deltas: what the queues hold (client-go `tools/cache` Delta, Deltas,
//! DeletedFinalStateUnknown, and the atomic RealFIFO's ReplacedAll and SyncAll).

use std::fmt;

use crate::cache::object::ObjectRef;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeltaType {
    Added,
    Updated,
    Deleted,
    /// An object listed by a relist (client-go with EmitDeltaTypeReplaced).
    Replaced,
    /// A resync, or a relist with the legacy option (no Replaced).
    Sync,
    /// One listed object of a relist an atomic RealFIFO queued whole (client-go ≥ 0.36's
    /// `ReplacedAll`, see [`AtomicDelta`]): a record type, never queued per object.
    ReplacedAll,
    /// One known object of a resync an atomic RealFIFO queued whole (client-go ≥ 0.36's
    /// `SyncAll`): a record type, never queued per object.
    SyncAll,
}

impl DeltaType {
    /// Every delta type, in the order `--types` lists them.
    pub const ALL: [DeltaType; 7] = [
        DeltaType::Added,
        DeltaType::Updated,
        DeltaType::Deleted,
        DeltaType::Replaced,
        DeltaType::Sync,
        DeltaType::ReplacedAll,
        DeltaType::SyncAll,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DeltaType::Added => "Added",
            DeltaType::Updated => "Updated",
            DeltaType::Deleted => "Deleted",
            DeltaType::Replaced => "Replaced",
            DeltaType::Sync => "Sync",
            DeltaType::ReplacedAll => "ReplacedAll",
            DeltaType::SyncAll => "SyncAll",
        }
    }
}

impl fmt::Display for DeltaType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An object that vanished while we were not watching (found missing by a relist).
/// `obj` is the last state kwatch knew, possibly stale, possibly absent.
#[derive(Debug, Clone)]
pub struct Tombstone {
    pub key: String,
    pub obj: Option<ObjectRef>,
}

#[derive(Debug, Clone)]
pub enum DeltaObject {
    Object(ObjectRef),
    Tombstone(Tombstone),
}

impl DeltaObject {
    /// The object itself, or the tombstone's last known state.
    pub fn object(&self) -> Option<&ObjectRef> {
        match self {
            DeltaObject::Object(o) => Some(o),
            DeltaObject::Tombstone(t) => t.obj.as_ref(),
        }
    }

    pub fn is_tombstone(&self) -> bool {
        matches!(self, DeltaObject::Tombstone(_))
    }
}

#[derive(Debug, Clone)]
pub struct Delta {
    pub kind: DeltaType,
    pub object: DeltaObject,
}

impl Delta {
    pub fn new(kind: DeltaType, obj: ObjectRef) -> Delta {
        Delta {
            kind,
            object: DeltaObject::Object(obj),
        }
    }

    /// A `Deleted` delta for an object a relist found missing; `obj` is the last state
    /// known of it, if any.
    pub fn tombstone(key: String, obj: Option<ObjectRef>) -> Delta {
        Delta {
            kind: DeltaType::Deleted,
            object: DeltaObject::Tombstone(Tombstone { key, obj }),
        }
    }

    /// What the informer's store holds under the key once this delta is applied: its
    /// object, nothing after a `Deleted`.
    pub fn stored(&self) -> Option<&ObjectRef> {
        match self.kind {
            DeltaType::Deleted => None,
            _ => self.object.object(),
        }
    }
}

/// A key's deltas, oldest first; never empty while queued.
pub type Deltas = Vec<Delta>;

/// An atomic RealFIFO's entry for a whole Replace or Resync (client-go ≥ 0.36 with the
/// AtomicFIFO gate: one `ReplacedAll` or `SyncAll` delta instead of one delta per object).
/// The informer turns it into per-object records against its store when it pops it
/// ([`crate::cache::store::Store::apply_atomic`]).
#[derive(Debug, Clone)]
pub enum AtomicDelta {
    /// A (re)list: the objects, in list order, and the list's resourceVersion.
    ReplacedAll {
        resource_version: String,
        objects: Vec<ObjectRef>,
    },
    /// A resync: every object the store holds when this is popped.
    SyncAll,
}
