//! client-go's own queue tests, ported as tables: the sequences they assert, as facts,
//! run against kwatch's queues. `delta_fifo_test.go` (v0.32) against [`DeltaFifo`];
//! `the_real_fifo_test.go` against [`RealFifo`]: its every-notification cases (v0.33 …
//! v0.36), `TestRealFIFO_PopMultipleDeltaInBatch` (v0.35, v0.36) with batch pops, and
//! v0.36's atomic-mode tests (`TestRealFIFO_ReplaceAtomic`, `…ReplaceAtomicPop`,
//! `…ResyncAtomic`); then kwatch's own cases for what v0.36's `PopBatch` does with
//! atomic entries and bookmarks (`batchable` in `the_real_fifo.go`).
//!
//! A case runs its operations, then pops whatever is left; its transcript — every pop and
//! every `Synced` check, in order — must be the expected one. client-go's tests give the
//! queue a fixed knownObjects lister; here the known store is preset and pops are not
//! applied to it, which is the same.
//!
//! Left out, being about Go API kwatch does not have: the transformer tests, `KeyOf`,
//! `TestDeltaFIFO_requeueOnPop` (`ErrRequeue`, gone since v0.33),
//! `TestDeltaFIFO_addIfNotPresent` (gone since v0.33) and `TestRealFIFO_PopBrokenItemsInBatch`
//! (key functions that fail). Where kwatch differs by design: a watch bookmark is a notice
//! of the reflector's (popped alone, in its place) rather than a `Bookmark` delta.

use std::sync::Arc;

use futures::FutureExt;

use crate::cache::delta::{AtomicDelta, Delta, DeltaObject};
use crate::cache::delta_fifo::DeltaFifo;
use crate::cache::object::ObjectRef;
use crate::cache::queue::{Batched, Popped, Queue};
use crate::cache::real_fifo::{RealFifo, RealFifoOptions, DEFAULT_BATCH_SIZE};
use crate::cache::store::Store;
use crate::cache::testutil::meta_object;

/// An object's name and resourceVersion (client-go's tests' `mkFifoObj(name, val)`).
type Obj = (&'static str, u64);

#[derive(Debug, Clone, Copy)]
enum Op {
    Add(Obj),
    Update(Obj),
    Delete(Obj),
    Replace(&'static [Obj], &'static str),
    Resync,
    /// A watch bookmark at this resourceVersion.
    Bookmark(&'static str),
    /// Pops one entry into the transcript.
    Pop,
    /// Writes `synced` or `not synced` into the transcript.
    Synced,
}
use Op::*;

#[derive(Debug, Clone, Copy)]
enum Kind {
    /// DeltaFIFO with EmitDeltaTypeReplaced (the informers').
    Delta,
    /// DeltaFIFO without it (relists queue `Sync`): `NewDeltaFIFOWithOptions`' default,
    /// which most of `delta_fifo_test.go` uses.
    DeltaSync,
    Real(RealFifoOptions),
}

/// client-go 0.33's RealFIFO: one delta per pop.
const REAL: Kind = Kind::Real(RealFifoOptions {
    batch_size: None,
    atomic: false,
});
/// The atomic mode alone, as v0.36's atomic tests build it (`Pop`, not `PopBatch`).
const ATOMIC: Kind = Kind::Real(RealFifoOptions {
    batch_size: None,
    atomic: true,
});
/// client-go 0.36's informer: atomic, batch pops.
const V0_36: Kind = Kind::Real(RealFifoOptions {
    batch_size: Some(DEFAULT_BATCH_SIZE),
    atomic: true,
});
/// client-go 0.35's informer: batch pops of at most `n`.
const fn batch(n: usize) -> Kind {
    Kind::Real(RealFifoOptions {
        batch_size: Some(n),
        atomic: false,
    })
}
/// `TestRealFIFO_PopMultipleDeltaInBatch`'s `unlimitedBatchSize`.
const UNLIMITED: usize = 999_999;

/// One sequence of operations and, for each queue it runs on, that queue's transcript:
/// where client-go has the same test for both queues (`TestDeltaFIFO_addUpdate`,
/// `TestRealFIFO_addUpdate`), one case holds both expectations side by side.
struct Case {
    /// The client-go test (and subtest) it ports, after `TestDeltaFIFO_` and
    /// `TestRealFIFO_` (`…W_` for the two `ReplaceMakesDeletionsForObjectsOnlyInQueue`).
    name: &'static str,
    known: Known,
    ops: &'static [Op],
    /// Each queue the case runs on, with its transcript.
    want: &'static [(Kind, &'static [&'static str])],
}

/// The queue's knownObjects.
#[derive(Debug, Clone, Copy)]
enum Known {
    Objects(&'static [Obj]),
    /// A DeltaFIFO without any; a RealFIFO always has one, empty here.
    Absent,
    /// A DeltaFIFO runs the case twice, with an empty knownObjects and without any (as
    /// client-go runs `TestDeltaFIFOW_ReplaceMakesDeletionsForObjectsOnlyInQueue`); a
    /// RealFIFO once, with an empty one.
    EmptyAndAbsent,
}

impl Known {
    /// The knownObjects of each run on a queue of `kind` (`None`: none).
    fn runs(self, kind: Kind) -> Vec<Option<&'static [Obj]>> {
        match self {
            Known::Objects(k) => vec![Some(k)],
            Known::Absent => vec![None],
            Known::EmptyAndAbsent if matches!(kind, Kind::Real(_)) => vec![Some(&[])],
            Known::EmptyAndAbsent => vec![Some(&[]), None],
        }
    }
}

const NONE: Known = Known::Objects(&[]);
const FOO5: Known = Known::Objects(&[("foo", 5)]);
const FOO_BAR_BAZ: Known = Known::Objects(&[("foo", 5), ("bar", 6), ("baz", 7)]);
const DELTA: Kind = Kind::Delta;
const DELTA_SYNC: Kind = Kind::DeltaSync;

const CASES: &[Case] = &[
    Case {
        name: "replaceWithDeleteDeltaIn",
        known: Known::Objects(&[("foo", 1)]),
        ops: &[Delete(("foo", 1)), Replace(&[("foo", 2)], "")],
        want: &[
            (DELTA_SYNC, &["foo: Deleted foo@1, Sync foo@2"]),
            (REAL, &["foo: Deleted foo@1", "foo: Replaced foo@2"]),
        ],
    },
    Case {
        name: "W_ReplaceMakesDeletionsForObjectsOnlyInQueue/Added object should be deleted on Replace",
        known: Known::EmptyAndAbsent,
        ops: &[Add(("foo", 2)), Replace(&[], "0")],
        want: &[
            (DELTA_SYNC, &["foo: Added foo@2, Deleted tombstone(foo@2)"]),
            (REAL, &["foo: Added foo@2", "foo: Deleted tombstone(foo@2)"]),
        ],
    },
    Case {
        name: "W_ReplaceMakesDeletionsForObjectsOnlyInQueue/Replaced object should have only a single Delete",
        known: Known::EmptyAndAbsent,
        ops: &[
            Add(("foo", 2)),
            Replace(&[("foo", 2)], "0"),
            Replace(&[], "0"),
        ],
        want: &[(
            DELTA,
            &["foo: Added foo@2, Replaced foo@2, Deleted tombstone(foo@2)"],
        )],
    },
    Case {
        name: "W_ReplaceMakesDeletionsForObjectsOnlyInQueue/Deleted object should have only a single Delete",
        known: Known::EmptyAndAbsent,
        ops: &[Add(("foo", 2)), Delete(("foo", 2)), Replace(&[], "0")],
        want: &[
            (DELTA_SYNC, &["foo: Added foo@2, Deleted foo@2"]),
            (REAL, &["foo: Added foo@2", "foo: Deleted foo@2"]),
        ],
    },
    Case {
        name: "W_ReplaceMakesDeletionsForObjectsOnlyInQueue/Synced objects should have a single delete",
        known: Known::EmptyAndAbsent,
        ops: &[
            Add(("foo", 2)),
            Replace(&[("foo", 2)], "0"),
            Replace(&[("foo", 2)], "0"),
            Replace(&[], "0"),
        ],
        want: &[
            (
                DELTA_SYNC,
                &["foo: Added foo@2, Sync foo@2, Sync foo@2, Deleted tombstone(foo@2)"],
            ),
            (
                REAL,
                &[
                    "foo: Added foo@2",
                    "foo: Replaced foo@2",
                    "foo: Replaced foo@2",
                    "foo: Deleted tombstone(foo@2)",
                ],
            ),
        ],
    },
    Case {
        name: "W_ReplaceMakesDeletionsForObjectsOnlyInQueue/Added objects should have a single delete on multiple Replaces",
        known: Known::EmptyAndAbsent,
        ops: &[Add(("foo", 2)), Replace(&[], "0"), Replace(&[], "1")],
        want: &[
            (DELTA_SYNC, &["foo: Added foo@2, Deleted tombstone(foo@2)"]),
            (REAL, &["foo: Added foo@2", "foo: Deleted tombstone(foo@2)"]),
        ],
    },
    Case {
        name: "W_ReplaceMakesDeletionsForObjectsOnlyInQueue/Added and deleted and added object should be deleted",
        known: Known::EmptyAndAbsent,
        ops: &[
            Add(("foo", 2)),
            Delete(("foo", 2)),
            Add(("foo", 3)),
            Replace(&[], "0"),
        ],
        want: &[
            (
                DELTA_SYNC,
                &["foo: Added foo@2, Deleted foo@2, Added foo@3, Deleted tombstone(foo@3)"],
            ),
            (
                REAL,
                &[
                    "foo: Added foo@2",
                    "foo: Deleted foo@2",
                    "foo: Added foo@3",
                    "foo: Deleted tombstone(foo@3)",
                ],
            ),
        ],
    },
    Case {
        name: "W_ReplaceMakesDeletionsForObjectsOnlyInQueue/Bookmark object should not be added without atomic",
        known: Known::EmptyAndAbsent,
        ops: &[Bookmark("123"), Replace(&[], "0"), Replace(&[], "1")],
        // No delta; the bookmark is kwatch's notice.
        want: &[(REAL, &["notice: bookmark 123"])],
    },
    Case {
        name: "addUpdate",
        known: Known::Absent,
        ops: &[Add(("foo", 10)), Update(("foo", 12)), Delete(("foo", 15))],
        want: &[
            (
                DELTA_SYNC,
                &["foo: Added foo@10, Updated foo@12, Deleted foo@15"],
            ),
            (
                REAL,
                &["foo: Added foo@10", "foo: Updated foo@12", "foo: Deleted foo@15"],
            ),
        ],
    },
    Case {
        name: "enqueueingNoLister",
        known: Known::Absent,
        ops: &[
            Add(("foo", 10)),
            Update(("bar", 15)),
            Add(("qux", 17)),
            Delete(("qux", 18)),
            // baz is neither queued nor known: a DeltaFIFO drops its deletion, a RealFIFO
            // queues everything.
            Delete(("baz", 20)),
        ],
        want: &[
            (
                DELTA_SYNC,
                &[
                    "foo: Added foo@10",
                    "bar: Updated bar@15",
                    "qux: Added qux@17, Deleted qux@18",
                ],
            ),
            (
                REAL,
                &[
                    "foo: Added foo@10",
                    "bar: Updated bar@15",
                    "qux: Added qux@17",
                    "qux: Deleted qux@18",
                    "baz: Deleted baz@20",
                ],
            ),
        ],
    },
    Case {
        name: "enqueueingWithLister",
        known: FOO_BAR_BAZ,
        ops: &[Add(("foo", 10)), Update(("bar", 15)), Delete(("baz", 20))],
        want: &[
            (
                DELTA_SYNC,
                &["foo: Added foo@10", "bar: Updated bar@15", "baz: Deleted baz@20"],
            ),
            (
                REAL,
                &["foo: Added foo@10", "bar: Updated bar@15", "baz: Deleted baz@20"],
            ),
        ],
    },
    Case {
        name: "addReplace",
        known: Known::Absent,
        ops: &[Add(("foo", 10)), Replace(&[("foo", 15)], "0")],
        want: &[
            (DELTA_SYNC, &["foo: Added foo@10, Sync foo@15"]),
            (REAL, &["foo: Added foo@10", "foo: Replaced foo@15"]),
        ],
    },
    Case {
        name: "ResyncNonExisting",
        known: FOO5,
        ops: &[Delete(("foo", 10)), Resync],
        want: &[
            (DELTA_SYNC, &["foo: Deleted foo@10"]),
            (REAL, &["foo: Deleted foo@10"]),
        ],
    },
    Case {
        name: "Resync",
        known: FOO5,
        ops: &[Resync],
        // Nothing populated the queue: not synced, so in the initial list.
        want: &[
            (DELTA_SYNC, &["foo: Sync foo@5 (initial)"]),
            (REAL, &["foo: Sync foo@5 (initial)"]),
        ],
    },
    Case {
        name: "DeleteExistingNonPropagated",
        known: NONE,
        ops: &[Add(("foo", 5)), Delete(("foo", 6))],
        want: &[
            (DELTA_SYNC, &["foo: Added foo@5, Deleted foo@6"]),
            (REAL, &["foo: Added foo@5", "foo: Deleted foo@6"]),
        ],
    },
    Case {
        name: "ReplaceMakesDeletions/pre-existing Delete",
        known: FOO_BAR_BAZ,
        ops: &[Delete(("baz", 10)), Replace(&[("foo", 5)], "0")],
        want: &[
            (
                DELTA_SYNC,
                &[
                    "baz: Deleted baz@10",
                    "foo: Sync foo@5",
                    "bar: Deleted tombstone(bar@6)",
                ],
            ),
            (
                REAL,
                &[
                    "baz: Deleted baz@10",
                    "bar: Deleted tombstone(bar@6)",
                    "foo: Replaced foo@5",
                ],
            ),
        ],
    },
    Case {
        name: "ReplaceMakesDeletions/starting with an Add",
        known: FOO_BAR_BAZ,
        ops: &[Add(("baz", 10)), Replace(&[("foo", 5)], "0")],
        want: &[
            (
                DELTA_SYNC,
                &[
                    "baz: Added baz@10, Deleted tombstone(baz@10)",
                    "foo: Sync foo@5",
                    "bar: Deleted tombstone(bar@6)",
                ],
            ),
            (
                REAL,
                &[
                    "baz: Added baz@10",
                    "baz: Deleted tombstone(baz@10)",
                    "bar: Deleted tombstone(bar@6)",
                    "foo: Replaced foo@5",
                ],
            ),
        ],
    },
    Case {
        name: "ReplaceMakesDeletions/deleted and recreated in the queue",
        known: FOO_BAR_BAZ,
        ops: &[
            Delete(("bar", 6)),
            Add(("bar", 100)),
            Replace(&[("foo", 5)], "0"),
        ],
        want: &[
            (
                DELTA_SYNC,
                &[
                    "bar: Deleted bar@6, Added bar@100, Deleted tombstone(bar@100)",
                    "foo: Sync foo@5",
                    "baz: Deleted tombstone(baz@7)",
                ],
            ),
            (
                REAL,
                &[
                    "bar: Deleted bar@6",
                    "bar: Added bar@100",
                    "bar: Deleted tombstone(bar@100)",
                    "baz: Deleted tombstone(baz@7)",
                    "foo: Replaced foo@5",
                ],
            ),
        ],
    },
    Case {
        name: "ReplaceMakesDeletions/synced first",
        known: FOO_BAR_BAZ,
        ops: &[
            Replace(&[("bar", 100), ("foo", 5)], "0"),
            Replace(&[("foo", 5)], "0"),
        ],
        want: &[
            (
                DELTA_SYNC,
                &[
                    "bar: Sync bar@100, Deleted tombstone(bar@100) (initial)",
                    "foo: Sync foo@5, Sync foo@5 (initial)",
                    "baz: Deleted tombstone(baz@7) (initial)",
                ],
            ),
            (
                REAL,
                &[
                    "baz: Deleted tombstone(baz@7) (initial)",
                    "bar: Replaced bar@100 (initial)",
                    "foo: Replaced foo@5 (initial)",
                    "bar: Deleted tombstone(bar@100)",
                    "foo: Replaced foo@5",
                ],
            ),
        ],
    },
    Case {
        // The RealFIFO's subtest: "empty knownObjects".
        name: "ReplaceMakesDeletions/without knownObjects",
        known: Known::Absent,
        ops: &[Add(("baz", 10)), Replace(&[("foo", 5)], "0")],
        want: &[
            (
                DELTA_SYNC,
                &[
                    "baz: Added baz@10, Deleted tombstone(baz@10)",
                    "foo: Sync foo@5",
                ],
            ),
            (
                REAL,
                &[
                    "baz: Added baz@10",
                    "baz: Deleted tombstone(baz@10)",
                    "foo: Replaced foo@5",
                ],
            ),
        ],
    },
    Case {
        name: "ReplaceMakesDeletionsReplaced",
        known: FOO_BAR_BAZ,
        ops: &[Delete(("baz", 10)), Replace(&[("foo", 6)], "0")],
        want: &[
            (
                DELTA,
                &[
                    "baz: Deleted baz@10",
                    "foo: Replaced foo@6",
                    "bar: Deleted tombstone(bar@6)",
                ],
            ),
            (
                REAL,
                &[
                    "baz: Deleted baz@10",
                    "bar: Deleted tombstone(bar@6)",
                    "foo: Replaced foo@6",
                ],
            ),
        ],
    },
    Case {
        name: "ReplaceDeltaType",
        known: FOO5,
        ops: &[Replace(&[("foo", 5)], "0")],
        want: &[(DELTA, &["foo: Replaced foo@5 (initial)"])],
    },
    Case {
        name: "UpdateResyncRace",
        known: FOO5,
        ops: &[Update(("foo", 6)), Resync],
        want: &[
            (DELTA_SYNC, &["foo: Updated foo@6"]),
            (REAL, &["foo: Updated foo@6"]),
        ],
    },
    Case {
        name: "HasSyncedCorrectOnDeletion",
        known: FOO_BAR_BAZ,
        ops: &[
            Replace(&[("foo", 5)], "0"),
            Synced,
            Pop,
            Synced,
            Pop,
            Synced,
            Pop,
            Synced,
        ],
        want: &[
            (
                DELTA_SYNC,
                &[
                    "not synced",
                    "foo: Sync foo@5 (initial)",
                    "not synced",
                    "bar: Deleted tombstone(bar@6) (initial)",
                    "not synced",
                    "baz: Deleted tombstone(baz@7) (initial)",
                    "synced",
                ],
            ),
            (
                REAL,
                &[
                    "not synced",
                    "bar: Deleted tombstone(bar@6) (initial)",
                    "not synced",
                    "baz: Deleted tombstone(baz@7) (initial)",
                    "not synced",
                    "foo: Replaced foo@5 (initial)",
                    "synced",
                ],
            ),
        ],
    },
    Case {
        name: "detectLineJumpers",
        known: Known::Absent,
        ops: &[
            Add(("foo", 10)),
            Add(("bar", 1)),
            Add(("foo", 11)),
            Add(("foo", 13)),
            Add(("zab", 30)),
            Pop,
            // foo does not jump back in line.
            Add(("foo", 14)),
        ],
        want: &[
            (
                DELTA_SYNC,
                &[
                    "foo: Added foo@10, Added foo@11, Added foo@13",
                    "bar: Added bar@1",
                    "zab: Added zab@30",
                    "foo: Added foo@14",
                ],
            ),
            (
                REAL,
                &[
                    "foo: Added foo@10",
                    "bar: Added bar@1",
                    "foo: Added foo@11",
                    "foo: Added foo@13",
                    "zab: Added zab@30",
                    "foo: Added foo@14",
                ],
            ),
        ],
    },
    Case {
        name: "HasSynced",
        known: Known::Absent,
        ops: &[Synced],
        want: &[(DELTA_SYNC, &["not synced"]), (REAL, &["not synced"])],
    },
    Case {
        name: "HasSynced",
        known: Known::Absent,
        ops: &[Add(("a", 1)), Synced],
        want: &[
            (DELTA_SYNC, &["synced", "a: Added a@1"]),
            (REAL, &["synced", "a: Added a@1"]),
        ],
    },
    Case {
        name: "HasSynced",
        known: Known::Absent,
        ops: &[Replace(&[], "0"), Synced],
        want: &[(DELTA_SYNC, &["synced"]), (REAL, &["synced"])],
    },
    Case {
        name: "HasSynced",
        known: Known::Absent,
        ops: &[Replace(&[("a", 1), ("b", 2)], "0"), Synced],
        want: &[
            (
                DELTA_SYNC,
                &[
                    "not synced",
                    "a: Sync a@1 (initial)",
                    "b: Sync b@2 (initial)",
                ],
            ),
            (
                REAL,
                &[
                    "not synced",
                    "a: Replaced a@1 (initial)",
                    "b: Replaced b@2 (initial)",
                ],
            ),
        ],
    },
    Case {
        name: "HasSynced",
        known: Known::Absent,
        ops: &[Replace(&[("a", 1), ("b", 2)], "0"), Pop, Synced],
        want: &[
            (
                DELTA_SYNC,
                &[
                    "a: Sync a@1 (initial)",
                    "not synced",
                    "b: Sync b@2 (initial)",
                ],
            ),
            (
                REAL,
                &[
                    "a: Replaced a@1 (initial)",
                    "not synced",
                    "b: Replaced b@2 (initial)",
                ],
            ),
        ],
    },
    Case {
        name: "HasSynced",
        known: Known::Absent,
        ops: &[Replace(&[("a", 1), ("b", 2)], "0"), Pop, Pop, Synced],
        want: &[
            (
                DELTA_SYNC,
                &["a: Sync a@1 (initial)", "b: Sync b@2 (initial)", "synced"],
            ),
            (
                REAL,
                &[
                    "a: Replaced a@1 (initial)",
                    "b: Replaced b@2 (initial)",
                    "synced",
                ],
            ),
        ],
    },
    Case {
        // A RealFIFO delivers a duplicate listed key twice.
        name: "HasSynced",
        known: Known::Absent,
        ops: &[Replace(&[("a", 1), ("a", 2)], "0"), Pop, Synced],
        want: &[
            (DELTA_SYNC, &["a: Sync a@1, Sync a@2 (initial)", "synced"]),
            (
                REAL,
                &[
                    "a: Replaced a@1 (initial)",
                    "not synced",
                    "a: Replaced a@2 (initial)",
                ],
            ),
        ],
    },
    // `TestRealFIFO_PopMultipleDeltaInBatch` (v0.35, v0.36): the known objects are the
    // initial items, Replaced first.
    Case {
        name: "PopMultipleDeltaInBatch/non-split: pop unique items should work",
        known: Known::Objects(&[("foo1", 5), ("foo2", 5), ("foo3", 5)]),
        ops: &[Replace(&[("foo1", 5), ("foo2", 5), ("foo3", 5)], "123")],
        want: &[(
            batch(UNLIMITED),
            &["batch: Replaced foo1@5, Replaced foo2@5, Replaced foo3@5 (initial)"],
        )],
    },
    Case {
        name: "PopMultipleDeltaInBatch/split due to initial list: initial 2 items with 2 updates should have 2 batches",
        known: Known::Objects(&[("foo1", 5), ("foo2", 5)]),
        ops: &[
            Replace(&[("foo1", 5), ("foo2", 5)], "123"),
            Update(("foo3", 5)),
            Update(("foo4", 5)),
        ],
        want: &[(
            batch(2),
            &[
                "batch: Replaced foo1@5, Replaced foo2@5 (initial)",
                "batch: Updated foo3@5, Updated foo4@5",
            ],
        )],
    },
    Case {
        name: "PopMultipleDeltaInBatch/split due to non-unique#1: update single item for multiple items should have separate batch",
        known: Known::Objects(&[("foo1", 5)]),
        ops: &[
            Replace(&[("foo1", 5)], "123"),
            Update(("foo1", 5)),
            Update(("foo1", 5)),
        ],
        want: &[(
            batch(UNLIMITED),
            &[
                "batch: Replaced foo1@5 (initial)",
                "batch: Updated foo1@5",
                "batch: Updated foo1@5",
            ],
        )],
    },
    Case {
        name: "PopMultipleDeltaInBatch/split due to non-unique#2: update 3 item for with non-unique item at the end should have separate batch",
        known: Known::Objects(&[("foo1", 5), ("foo2", 5)]),
        ops: &[
            Replace(&[("foo1", 5), ("foo2", 5)], "123"),
            Update(("foo2", 5)),
            Update(("foo3", 5)),
        ],
        want: &[(
            batch(UNLIMITED),
            &[
                "batch: Replaced foo1@5, Replaced foo2@5 (initial)",
                "batch: Updated foo2@5, Updated foo3@5",
            ],
        )],
    },
    Case {
        name: "PopMultipleDeltaInBatch/split due to non-unique#3: update 3 item for with non-unique item in the mid should have separate batch",
        known: Known::Objects(&[("foo1", 5), ("foo2", 5), ("foo3", 5)]),
        ops: &[
            Replace(&[("foo1", 5), ("foo2", 5), ("foo3", 5)], "123"),
            Update(("foo2", 5)),
        ],
        want: &[(
            batch(UNLIMITED),
            &[
                "batch: Replaced foo1@5, Replaced foo2@5, Replaced foo3@5 (initial)",
                "batch: Updated foo2@5",
            ],
        )],
    },
    Case {
        name: "PopMultipleDeltaInBatch/split due to batch size#1: batching initial list should work",
        known: Known::Objects(&[("foo1", 5), ("foo2", 5), ("foo3", 5)]),
        ops: &[Replace(&[("foo1", 5), ("foo2", 5), ("foo3", 5)], "123")],
        want: &[(
            batch(2),
            &[
                "batch: Replaced foo1@5, Replaced foo2@5 (initial)",
                "batch: Replaced foo3@5 (initial)",
            ],
        )],
    },
    Case {
        name: "PopMultipleDeltaInBatch/split due to batch size#2: batching incoming non-initial deltas should work",
        known: NONE,
        ops: &[
            Replace(&[], "123"),
            Update(("foo1", 5)),
            Update(("foo2", 5)),
            Update(("foo3", 5)),
        ],
        want: &[(
            batch(2),
            &[
                "batch: Updated foo1@5, Updated foo2@5",
                "batch: Updated foo3@5",
            ],
        )],
    },
    Case {
        name: "PopMultipleDeltaInBatch/split due to batch size#3: pop 4 mixed initial & non-initial items with 2 batch size should have 3 batch",
        known: Known::Objects(&[("foo1", 5), ("foo2", 5), ("foo3", 5)]),
        ops: &[
            Replace(&[("foo1", 5), ("foo2", 5), ("foo3", 5)], "123"),
            Update(("foo4", 5)),
        ],
        want: &[(
            batch(2),
            &[
                "batch: Replaced foo1@5, Replaced foo2@5 (initial)",
                "batch: Replaced foo3@5 (initial)",
                "batch: Updated foo4@5",
            ],
        )],
    },
    // v0.36's atomic-mode tests (the queue as they build it: atomic events, `Pop`).
    Case {
        name: "ReplaceAtomic/Base replace",
        known: NONE,
        ops: &[Replace(&[], "123")],
        want: &[(ATOMIC, &["ReplacedAll@123 [] (initial)"])],
    },
    Case {
        name: "ReplaceAtomic/Added object exists in deltas on Atomic Replace",
        known: NONE,
        ops: &[Add(("foo", 2)), Replace(&[], "123")],
        want: &[(ATOMIC, &["foo: Added foo@2", "ReplacedAll@123 []"])],
    },
    Case {
        name: "ReplaceAtomic/Multiple replaces run in order",
        known: NONE,
        ops: &[
            Add(("foo", 2)),
            Replace(&[("foo", 2)], "10"),
            Replace(&[("foo", 2)], "20"),
            Replace(&[], "56"),
        ],
        want: &[(
            ATOMIC,
            &[
                "foo: Added foo@2",
                "ReplacedAll@10 [foo@2]",
                "ReplacedAll@20 [foo@2]",
                "ReplacedAll@56 []",
            ],
        )],
    },
    Case {
        name: "ReplaceAtomic/Bookmark object should not be included in Replace",
        known: NONE,
        ops: &[Bookmark("123"), Replace(&[], "1234")],
        want: &[(
            ATOMIC,
            &["notice: bookmark 123", "ReplacedAll@1234 [] (initial)"],
        )],
    },
    Case {
        name: "ReplaceAtomicPop",
        known: NONE,
        ops: &[Add(("foo", 10)), Replace(&[("foo", 15)], "20")],
        want: &[(ATOMIC, &["foo: Added foo@10", "ReplacedAll@20 [foo@15]"])],
    },
    Case {
        name: "ResyncAtomic/Base resync",
        known: NONE,
        ops: &[Resync],
        want: &[(ATOMIC, &["SyncAll (initial)"])],
    },
    Case {
        name: "ResyncAtomic/Added object exists in deltas on Atomic Resync",
        known: NONE,
        ops: &[Add(("foo", 2)), Resync],
        want: &[(ATOMIC, &["foo: Added foo@2", "SyncAll"])],
    },
    // kwatch's own, from v0.36's PopBatch: ReplacedAll, SyncAll and Bookmark are not
    // `batchable`: each closes a batch and is popped alone. The known objects are not
    // read in the atomic mode.
    Case {
        name: "(kwatch) v0.36 PopBatch: atomic entries close batches and pop alone",
        known: FOO_BAR_BAZ,
        ops: &[
            Add(("a", 1)),
            Add(("b", 1)),
            Resync,
            Add(("c", 1)),
            Replace(&[("c", 1)], "9"),
            Add(("d", 1)),
            Add(("e", 1)),
        ],
        want: &[(
            V0_36,
            &[
                "batch: Added a@1, Added b@1",
                "SyncAll",
                "batch: Added c@1",
                "ReplacedAll@9 [c@1]",
                "batch: Added d@1, Added e@1",
            ],
        )],
    },
    Case {
        name: "(kwatch) v0.36 PopBatch: a bookmark closes a batch",
        known: NONE,
        ops: &[Add(("a", 1)), Bookmark("5"), Add(("b", 1))],
        want: &[(
            V0_36,
            &["batch: Added a@1", "notice: bookmark 5", "batch: Added b@1"],
        )],
    },
    Case {
        name: "(kwatch) v0.35 PopBatch: a bookmark is no delta and closes nothing",
        known: NONE,
        ops: &[Add(("a", 1)), Bookmark("5"), Add(("b", 1)), Bookmark("6")],
        want: &[(
            batch(DEFAULT_BATCH_SIZE),
            &[
                "batch: Added a@1, notice bookmark 5, Added b@1",
                "notice: bookmark 6",
            ],
        )],
    },
];

fn obj((name, rv): (&str, u64)) -> ObjectRef {
    meta_object("", name, rv)
}

/// `Added foo@5`, `Deleted tombstone(bar@6)`.
fn fmt_delta(d: &Delta) -> String {
    match &d.object {
        DeltaObject::Object(o) => format!("{} {}@{}", d.kind, o.key(), o.resource_version()),
        DeltaObject::Tombstone(t) => {
            let rv = t.obj.as_ref().map_or("-", |o| o.resource_version());
            format!("{} tombstone({}@{rv})", d.kind, t.key)
        }
    }
}

/// `foo: Added foo@5, Updated foo@6`, `batch: Added a@1, notice x, Added b@1`,
/// `ReplacedAll@9 [c@1]`, `SyncAll`, `notice: x`; ` (initial)` when popped before synced.
fn fmt_popped(p: Popped<String>) -> String {
    let (text, initial) = match p {
        Popped::Notice(n) => return format!("notice: {n}"),
        Popped::Deltas {
            key,
            deltas,
            is_in_initial_list,
        } => {
            let ds: Vec<String> = deltas.iter().map(fmt_delta).collect();
            (format!("{key}: {}", ds.join(", ")), is_in_initial_list)
        }
        Popped::Batch {
            entries,
            is_in_initial_list,
        } => {
            let es: Vec<String> = entries
                .iter()
                .map(|e| match e {
                    Batched::Delta { delta, .. } => fmt_delta(delta),
                    Batched::Notice(n) => format!("notice {n}"),
                })
                .collect();
            (format!("batch: {}", es.join(", ")), is_in_initial_list)
        }
        Popped::Atomic {
            delta,
            is_in_initial_list,
        } => {
            let text = match delta {
                AtomicDelta::ReplacedAll {
                    resource_version,
                    objects,
                } => {
                    let os: Vec<String> = objects
                        .iter()
                        .map(|o| format!("{}@{}", o.key(), o.resource_version()))
                        .collect();
                    format!("ReplacedAll@{resource_version} [{}]", os.join(", "))
                }
                AtomicDelta::SyncAll => "SyncAll".to_owned(),
            };
            (text, is_in_initial_list)
        }
    };
    if initial {
        format!("{text} (initial)")
    } else {
        text
    }
}

/// The next entry, if one is queued (without waiting).
fn pop<Q: Queue<Notice = String>>(q: &Q) -> Option<String> {
    q.pop_with(fmt_popped).now_or_never().flatten()
}

fn transcript<Q: Queue<Notice = String>>(q: &Q, ops: &[Op]) -> Vec<String> {
    let mut out = Vec::new();
    for op in ops {
        match *op {
            Add(o) => q.add(obj(o)),
            Update(o) => q.update(obj(o)),
            Delete(o) => q.delete(obj(o)),
            Replace(list, rv) => q.replace(list.iter().copied().map(obj).collect(), rv),
            Resync => q.resync(),
            Bookmark(rv) => q.bookmark(format!("bookmark {rv}")),
            Pop => out.push(pop(q).unwrap_or_else(|| "nothing queued".to_owned())),
            Synced => out.push(
                if q.has_synced() {
                    "synced"
                } else {
                    "not synced"
                }
                .to_owned(),
            ),
        }
    }
    out.extend(std::iter::from_fn(|| pop(q)));
    out
}

fn run(kind: Kind, known: Option<&[Obj]>, ops: &[Op]) -> Vec<String> {
    let store = known.map(|k| {
        let s = Store::new();
        s.replace(k.iter().copied().map(obj).collect());
        Arc::new(s)
    });
    match kind {
        Kind::Delta | Kind::DeltaSync => {
            let q = DeltaFifo::new(store, matches!(kind, Kind::Delta));
            transcript(&q, ops)
        }
        Kind::Real(opts) => transcript(
            &RealFifo::with_options(store.unwrap_or_default(), opts),
            ops,
        ),
    }
}

/// Runs every case's expectation for the queues `of` picks.
fn check(of: fn(Kind) -> bool) {
    for c in CASES {
        for &(kind, want) in c.want.iter().filter(|(kind, _)| of(*kind)) {
            for known in c.known.runs(kind) {
                assert_eq!(
                    run(kind, known, c.ops),
                    want,
                    "{} ({kind:?}, knownObjects {known:?}): {:?}",
                    c.name,
                    c.ops
                );
            }
        }
    }
}

#[test]
fn delta_fifo_test_go() {
    check(|kind| matches!(kind, Kind::Delta | Kind::DeltaSync));
}

/// Its every-notification cases, batch pops and the atomic mode.
#[test]
fn the_real_fifo_test_go() {
    check(|kind| matches!(kind, Kind::Real(_)));
}

/// `TestDeltaFIFO_basic`, `TestRealFIFO_basic`: two producers, one consumer; each
/// producer's objects come out in the order it queued them.
#[test]
fn basic_two_producers_keep_their_order() {
    fn basic<Q: Queue<Notice = String>>(q: Q) {
        const AMOUNT: u64 = 500;
        let q = Arc::new(q);
        let producers: Vec<_> = ["a", "b"]
            .into_iter()
            .map(|p| {
                let q = q.clone();
                std::thread::spawn(move || {
                    for i in 0..AMOUNT {
                        q.add(obj((format!("{p}{i}").as_str(), i + 1)));
                    }
                })
            })
            .collect();
        let mut last = std::collections::HashMap::new();
        for _ in 0..2 * AMOUNT {
            let (prefix, rv) = futures::executor::block_on(q.pop_with(|p| match p {
                Popped::Deltas { key, deltas, .. } => {
                    assert_eq!(deltas.len(), 1, "{key}");
                    let rv: u64 = deltas[0]
                        .object
                        .object()
                        .unwrap()
                        .resource_version()
                        .parse()
                        .unwrap();
                    (key[..1].to_owned(), rv)
                }
                other => panic!("{other:?}"),
            }))
            .unwrap();
            let before = last.insert(prefix.clone(), rv).unwrap_or(0);
            assert!(rv > before, "{prefix}: {rv} after {before}");
        }
        for p in producers {
            p.join().unwrap();
        }
    }
    basic(DeltaFifo::<String>::new(None, true));
    basic(RealFifo::<String>::new(Arc::default()));
}

/// `TestDeltaFIFO_PopShouldUnblockWhenClosed`, `TestRealFIFO_PopShouldUnblockWhenClosed`.
#[tokio::test]
async fn a_blocked_pop_returns_when_the_queue_is_closed() {
    async fn unblock<Q: Queue<Notice = String>>(q: Q) {
        let q = Arc::new(q);
        let pops: Vec<_> = (0..10)
            .map(|_| {
                let q = q.clone();
                tokio::spawn(async move { q.pop_with(|_| ()).await })
            })
            .collect();
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        q.close();
        for p in pops {
            assert_eq!(p.await.unwrap(), None);
        }
    }
    unblock(DeltaFifo::<String>::new(Some(Arc::new(Store::new())), true)).await;
    unblock(RealFifo::<String>::new(Arc::new(Store::new()))).await;
    unblock(RealFifo::<String>::with_options(
        Arc::new(Store::new()),
        RealFifoOptions {
            batch_size: Some(DEFAULT_BATCH_SIZE),
            atomic: true,
        },
    ))
    .await;
}
