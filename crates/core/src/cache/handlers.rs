//! What a controller's event handler receives (`--view handlers`): client-go v0.32's
//! shared informer turns every popped delta into at most one call of each registered
//! `ResourceEventHandler` — `OnAdd(obj, isInInitialList)`, `OnUpdate(old, new)` or
//! `OnDelete(obj)`. kwatch models one handler, registered before the informer starts with
//! the informer's default resync period, `--resync` (client-go
//! `NewSharedIndexInformer(lw, obj, resync)` then `AddEventHandler(h)`).
//!
//! Pure: a delta, the store's object under its key before it, the pop's
//! `isInInitialList` and the listener's resync state in, the call out ([`call`],
//! [`calls`] for a whole pop). No I/O, no clock: [`Listener::resync_check`] is told the
//! time.
//!
//! Extending it: every [`DeltaType`] has its arm in [`call`] (an exhaustive match, so a
//! new delta type does not compile until it has one). client-go v0.36's batch pops add
//! two: `ReplacedAll` (controller.go v0.36 `processReplacedAllInfo`: per listed object
//! OnUpdate if stored else OnAdd, then OnDelete of a `DeletedFinalStateUnknown` for every
//! stored key it lacks) and `SyncAll` (OnUpdate(obj, obj) for every stored object); each
//! of their calls goes through the same [`Listener`] filter as [`call`]'s.

use std::time::{Duration, Instant};

use crate::cache::delta::{Delta, DeltaObject, DeltaType};
use crate::cache::object::ObjectRef;

/// One call of the handler.
#[derive(Debug, Clone)]
pub enum HandlerCall {
    /// `OnAdd(obj, isInInitialList)`: the store did not hold the key.
    OnAdd {
        obj: ObjectRef,
        is_in_initial_list: bool,
    },
    /// `OnUpdate(oldObj, newObj)`: `old` is what the store held before the delta.
    OnUpdate { old: ObjectRef, new: ObjectRef },
    /// `OnDelete(obj)`: the deleted object as the delta carries it — the watch's final
    /// state, or a `DeletedFinalStateUnknown` tombstone from a relist.
    OnDelete { obj: DeltaObject },
}

impl HandlerCall {
    /// `OnAdd`, `OnUpdate` or `OnDelete`.
    pub fn name(&self) -> &'static str {
        match self {
            HandlerCall::OnAdd { .. } => "OnAdd",
            HandlerCall::OnUpdate { .. } => "OnUpdate",
            HandlerCall::OnDelete { .. } => "OnDelete",
        }
    }

    /// The object the call is about: OnUpdate's new one; a tombstone's last known state
    /// (`None` when it has none).
    pub fn object(&self) -> Option<&ObjectRef> {
        match self {
            HandlerCall::OnAdd { obj, .. } => Some(obj),
            HandlerCall::OnUpdate { new, .. } => Some(new),
            HandlerCall::OnDelete { obj } => obj.object(),
        }
    }

    /// OnUpdate's old object.
    pub fn old(&self) -> Option<&ObjectRef> {
        match self {
            HandlerCall::OnUpdate { old, .. } => Some(old),
            _ => None,
        }
    }

    /// OnDelete of a `DeletedFinalStateUnknown`.
    pub fn final_state_unknown(&self) -> bool {
        matches!(self, HandlerCall::OnDelete { obj } if obj.is_tombstone())
    }

    /// `sharedIndexInformer.OnUpdate`'s `isSync` (shared_informer.go v0.32.0 L657–676):
    /// an update whose resourceVersion did not change is distributed as a sync
    /// notification. OnAdd and OnDelete never are.
    pub fn is_sync(&self) -> bool {
        match self {
            HandlerCall::OnUpdate { old, new } => old.resource_version() == new.resource_version(),
            _ => false,
        }
    }
}

/// client-go's `minimumResyncPeriod` (shared_informer.go v0.32.0 L579): a handler's
/// non-zero resync period is raised to it (L590–593).
pub const MINIMUM_RESYNC_PERIOD: Duration = Duration::from_secs(1);

/// The one handler's registration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Registration {
    /// `--resync`: the informer's resync period and the handler's (`None`: no resync).
    pub resync: Option<Duration>,
}

/// The handler's `processorListener` and its entry in `sharedProcessor.listeners`: whether
/// a sync notification reaches it now.
///
/// The rule, from client-go v0.32.0 (`tools/cache/shared_informer.go` unless named):
///
/// - `NewSharedIndexInformer(…, P)` sets both `resyncCheckPeriod` and
///   `defaultEventHandlerResyncPeriod` to P (L277–278); `AddEventHandler` registers the
///   handler with P (L560–562), raised to 1 s if below it (L590–593); the listener's
///   `resyncPeriod` is that, or 0 when P is 0 (`determineResyncPeriod`, L564–577), and its
///   `nextResync` is its creation time plus that (`newProcessListener`, L924).
/// - `addListener` puts the listener in the map as **syncing** (`p.listeners[listener] =
///   true`, L745). Only `sharedProcessor.shouldResync` (L827–845) ever changes that, to
///   `listener.shouldResync(now)` = `resyncPeriod != 0 && now >= nextResync` (L995–1004),
///   moving `nextResync` on by a period when true.
/// - `shouldResync` is the reflector's `ShouldResync` (L484), asked on each tick of its
///   resync timer, whose period is `resyncCheckPeriod` (L482); with a period of 0 the
///   timer never fires (reflector.go `resyncChan`, L333–335) and `shouldResync` is never
///   called. The reflector calls `store.Resync()` only when it answers true
///   (reflector.go L396); the timer runs only while watching and is re-armed after each
///   tick (reflector.go L383–405, L410–413).
/// - `distribute(notification, sync)` (L779–795) gives a non-sync notification to every
///   listener and a sync one only to listeners whose map entry is true. A sync
///   notification is an OnUpdate whose old and new resourceVersion are equal (L657–676):
///   a `Sync` delta, and equally a `Replaced` or `Updated` one that brought the same
///   resourceVersion.
///
/// So, for kwatch's one handler:
///
/// - no `--resync`: never asked, the listener stays syncing — **every** same-RV OnUpdate
///   (a relist's unchanged objects included) reaches the handler;
/// - `--resync P`, P ≥ 1 s: the listener's period is the timer's, and every tick comes at
///   least a period after the previous due one (the timer is re-armed after each tick and
///   restarted with each watch), so every tick finds it due: it is always syncing and,
///   again, every same-RV OnUpdate reaches the handler, each resync's `Sync` deltas
///   becoming OnUpdate(obj, obj);
/// - `--resync P`, P < 1 s: the timer ticks every P but the listener is due only once a
///   second has passed since its last due tick; on the ticks between, it is out of the
///   syncing set until the next due tick, and every same-RV OnUpdate in that window
///   (those ticks' `Sync` deltas, a relist's unchanged objects) is dropped. client-go
///   would not even queue those ticks' `Sync` deltas; kwatch's reflector does (it
///   resyncs on every tick), and this filter drops them, so the handler sees the same.
///
/// kwatch asks at the pop of the reflector's `Resync` notice, which precedes that tick's
/// `Sync` deltas in the queue; client-go asks on the reflector's goroutine at the tick,
/// concurrently with the pops.
#[derive(Debug, Clone)]
pub struct Listener {
    /// `resyncCheckPeriod`: the reflector's resync timer (`None`: no timer).
    check: Option<Duration>,
    /// The listener's `resyncPeriod` (`None`: 0).
    period: Option<Duration>,
    /// `nextResync`.
    next_resync: Instant,
    /// `sharedProcessor.listeners[listener]`: sync notifications reach the handler.
    syncing: bool,
}

impl Listener {
    /// The listener of a handler registered at `now` (before the informer runs).
    pub fn new(reg: Registration, now: Instant) -> Listener {
        let check = reg.resync.filter(|p| !p.is_zero());
        let period = check.map(|p| p.max(MINIMUM_RESYNC_PERIOD));
        Listener {
            check,
            period,
            next_resync: now + period.unwrap_or_default(),
            syncing: true,
        }
    }

    /// The reflector's resync timer ticked at `now`: `sharedProcessor.shouldResync` for
    /// this listener (see the rule on [`Listener`]).
    pub fn resync_check(&mut self, now: Instant) {
        let Some(period) = self.period else {
            // No timer, no question (kwatch's reflector does not tick without --resync).
            return;
        };
        // With the listener's period equal to the timer's, `now >= nextResync` holds on
        // every tick; said so rather than measured at the pop, whose delays vary.
        let due = self.check == Some(period) || now >= self.next_resync;
        self.syncing = due;
        if due {
            self.next_resync = now + period;
        }
    }

    /// Whether a sync notification reaches the handler now.
    pub fn syncing(&self) -> bool {
        self.syncing
    }
}

/// The handler call one delta makes: `processDeltas` (controller.go v0.32.0 L541–573)
/// given the store's object under the key before the delta (`old`), then
/// `sharedIndexInformer.OnAdd/OnUpdate/OnDelete` and `distribute` to the one listener.
/// `None` when `distribute` skips it: a sync notification while the listener is not
/// syncing.
pub fn call(
    delta: &Delta,
    old: Option<&ObjectRef>,
    is_in_initial_list: bool,
    listener: &Listener,
) -> Option<HandlerCall> {
    let call = match delta.kind {
        // L553–564: an object the store holds is updated, any other added.
        // v0.36 L621–655: a `ReplacedAll`'s listed object and a `SyncAll`'s, as
        // `processReplacedAllInfo` and the SyncAll arm call them
        // ([`Store::apply_atomic`](crate::cache::store::Store::apply_atomic) gives each its
        // stored version: a SyncAll's is itself, so `OnUpdate(obj, obj)`).
        DeltaType::Sync
        | DeltaType::Replaced
        | DeltaType::Added
        | DeltaType::Updated
        | DeltaType::ReplacedAll
        | DeltaType::SyncAll => {
            // Only Deleted deltas carry tombstones; another with one is what the store
            // applies of it (its last known state), and nothing without one.
            let new = delta.object.object()?.clone();
            match old {
                Some(old) => HandlerCall::OnUpdate {
                    old: old.clone(),
                    new,
                },
                None => HandlerCall::OnAdd {
                    obj: new,
                    is_in_initial_list,
                },
            }
        }
        // L565–569: whether or not the store held it, and with the delta's object (a
        // tombstone as it is).
        DeltaType::Deleted => HandlerCall::OnDelete {
            obj: delta.object.clone(),
        },
    };
    (!call.is_sync() || listener.syncing()).then_some(call)
}

/// The calls of one pop: its deltas oldest first, each with the store's object before it
/// (`before` for the first, then what the previous delta left).
///
/// ```
/// use std::sync::Arc;
/// use std::time::Instant;
/// use kwatch_core::cache::delta::{Delta, DeltaType};
/// use kwatch_core::cache::handlers::{calls, Listener, Registration};
/// use kwatch_core::cache::object::{Object, ObjectRef};
///
/// fn cm(rv: &str) -> ObjectRef {
///     let meta = serde_json::json!({"name": "a", "namespace": "ns", "resourceVersion": rv});
///     let json = serde_json::json!({"kind": "ConfigMap", "metadata": meta});
///     Arc::new(Object::from_json(&json.to_string()).unwrap())
/// }
///
/// // One handler, no resync period, registered before the informer runs.
/// let listener = Listener::new(Registration::default(), Instant::now());
/// let deltas = [
///     Delta::new(DeltaType::Added, cm("1")),
///     Delta::new(DeltaType::Updated, cm("2")),
///     // A relist that found it unchanged: a sync notification, OnUpdate(obj, obj).
///     Delta::new(DeltaType::Replaced, cm("2")),
///     // A relist that found it gone: OnDelete of a DeletedFinalStateUnknown.
///     Delta::tombstone("ns/a".to_owned(), Some(cm("2"))),
/// ];
/// let made = calls(&deltas, None, false, &listener);
/// let names: Vec<&str> = made.iter().map(|c| c.name()).collect();
/// assert_eq!(names, ["OnAdd", "OnUpdate", "OnUpdate", "OnDelete"]);
/// assert!(made[2].is_sync());
/// assert!(made[3].final_state_unknown());
/// ```
pub fn calls(
    deltas: &[Delta],
    before: Option<&ObjectRef>,
    is_in_initial_list: bool,
    listener: &Listener,
) -> Vec<HandlerCall> {
    let mut old = before;
    let mut out = Vec::with_capacity(deltas.len());
    for d in deltas {
        out.extend(call(d, old, is_in_initial_list, listener));
        old = d.stored();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::testutil::meta_object;

    fn cm(name: &str, rv: &str) -> ObjectRef {
        meta_object("d", name, rv)
    }

    /// A call as `OnAdd a@1 initial`, `OnUpdate a@1→2`, `OnDelete a@2`,
    /// `OnDelete a@2 unknown` (a tombstone), `OnDelete ? unknown` (one without a state).
    fn show(c: &HandlerCall) -> String {
        let at = |o: Option<&ObjectRef>| match o {
            Some(o) => format!("{}@{}", o.meta().name, o.resource_version()),
            None => "?".to_owned(),
        };
        match c {
            HandlerCall::OnAdd {
                obj,
                is_in_initial_list,
            } => format!(
                "OnAdd {}{}",
                at(Some(obj)),
                if *is_in_initial_list { " initial" } else { "" }
            ),
            HandlerCall::OnUpdate { old, new } => {
                format!("OnUpdate {}→{}", at(Some(old)), new.resource_version())
            }
            HandlerCall::OnDelete { obj } => format!(
                "OnDelete {}{}",
                at(obj.object()),
                if obj.is_tombstone() { " unknown" } else { "" }
            ),
        }
    }

    fn syncing() -> Listener {
        Listener::new(Registration::default(), Instant::now())
    }

    fn not_syncing() -> Listener {
        let t = Instant::now();
        let mut l = Listener::new(
            Registration {
                resync: Some(Duration::from_millis(300)),
            },
            t,
        );
        l.resync_check(t + Duration::from_millis(300));
        assert!(!l.syncing());
        l
    }

    /// `Added 1`, `Deleted 4`… (a delta of `a` at that RV), `Tomb 3` or `Tomb -` (a
    /// tombstone without a last known state).
    fn delta(spec: &str) -> Delta {
        let (t, rv) = spec.split_once(' ').unwrap();
        let t = match t {
            "Tomb" => return Delta::tombstone("d/a".into(), (rv != "-").then(|| cm("a", rv))),
            "Added" => DeltaType::Added,
            "Updated" => DeltaType::Updated,
            "Deleted" => DeltaType::Deleted,
            "Replaced" => DeltaType::Replaced,
            "Sync" => DeltaType::Sync,
            _ => unreachable!("{spec}"),
        };
        Delta::new(t, cm("a", rv))
    }

    #[test]
    fn each_delta_type_makes_the_call_process_deltas_makes() {
        // (delta, the RV of `a` in the store before it or `-`, isInInitialList, the
        // listener is syncing, the call)
        let table: [(&str, &str, bool, bool, Option<&str>); 17] = [
            ("Added 1", "-", true, true, Some("OnAdd a@1 initial")),
            ("Replaced 1", "-", true, true, Some("OnAdd a@1 initial")),
            ("Replaced 5", "-", false, true, Some("OnAdd a@5")),
            ("Sync 5", "-", false, true, Some("OnAdd a@5")),
            ("Added 2", "1", false, true, Some("OnUpdate a@1→2")),
            ("Updated 2", "1", false, false, Some("OnUpdate a@1→2")),
            ("Replaced 7", "3", false, false, Some("OnUpdate a@3→7")),
            // Same resourceVersion: a sync notification, for a syncing listener only.
            ("Replaced 3", "3", false, true, Some("OnUpdate a@3→3")),
            ("Replaced 3", "3", false, false, None),
            ("Sync 3", "3", false, true, Some("OnUpdate a@3→3")),
            ("Sync 3", "3", false, false, None),
            ("Updated 3", "3", false, false, None),
            // OnAdd and OnDelete are never syncs.
            ("Replaced 3", "-", false, false, Some("OnAdd a@3")),
            ("Deleted 4", "3", false, false, Some("OnDelete a@4")),
            ("Deleted 4", "-", false, true, Some("OnDelete a@4")),
            ("Tomb 3", "3", false, false, Some("OnDelete a@3 unknown")),
            ("Tomb -", "-", false, true, Some("OnDelete ? unknown")),
        ];
        for (spec, old, initial, sync, want) in table {
            let l = if sync { syncing() } else { not_syncing() };
            let old = (old != "-").then(|| cm("a", old));
            let got = call(&delta(spec), old.as_ref(), initial, &l).map(|c| show(&c));
            assert_eq!(
                got.as_deref(),
                want,
                "{spec} over {old:?}, initial {initial}, syncing {sync}"
            );
        }
    }

    #[test]
    fn a_pops_deltas_each_see_what_the_one_before_left() {
        use DeltaType::*;
        let deltas = vec![
            Delta::new(Added, cm("a", "1")),
            Delta::new(Updated, cm("a", "2")),
            Delta::new(Sync, cm("a", "2")),
            Delta::new(Deleted, cm("a", "2")),
            Delta::new(Replaced, cm("a", "9")),
        ];
        let got: Vec<String> = calls(&deltas, None, true, &syncing())
            .iter()
            .map(show)
            .collect();
        assert_eq!(
            got,
            [
                "OnAdd a@1 initial",
                "OnUpdate a@1→2",
                "OnUpdate a@2→2",
                "OnDelete a@2",
                "OnAdd a@9 initial"
            ]
        );
        let got: Vec<String> = calls(&deltas[1..3], Some(&cm("a", "1")), false, &not_syncing())
            .iter()
            .map(show)
            .collect();
        assert_eq!(got, ["OnUpdate a@1→2"], "the Sync is not delivered");
    }

    #[test]
    fn without_resync_the_listener_is_always_syncing() {
        let t = Instant::now();
        let mut l = Listener::new(Registration { resync: None }, t);
        assert!(l.syncing());
        l.resync_check(t + Duration::from_secs(3600));
        assert!(l.syncing());
        let zero = Listener::new(
            Registration {
                resync: Some(Duration::ZERO),
            },
            t,
        );
        assert!(zero.syncing());
    }

    #[test]
    fn a_resync_of_a_second_or_more_finds_the_listener_due_on_every_tick() {
        let t = Instant::now();
        let p = Duration::from_secs(1);
        let mut l = Listener::new(Registration { resync: Some(p) }, t);
        assert!(l.syncing());
        // Ticks popped late or early never make it miss one.
        for at in [1000, 2300, 3100, 3200, 9000] {
            l.resync_check(t + Duration::from_millis(at));
            assert!(l.syncing(), "tick at {at}ms");
        }
    }

    #[test]
    fn a_sub_second_resync_is_due_once_a_second() {
        let t = Instant::now();
        let mut l = Listener::new(
            Registration {
                resync: Some(Duration::from_millis(400)),
            },
            t,
        );
        assert!(l.syncing(), "syncing from registration to the first tick");
        let ms = Duration::from_millis;
        // (tick, due): the period is raised to 1 s; due at creation + 1 s, then 1 s after
        // each due tick.
        for (at, due) in [
            (400, false),
            (800, false),
            (1200, true),
            (1600, false),
            (2000, false),
            (2400, true),
            (2800, false),
        ] {
            l.resync_check(t + ms(at));
            assert_eq!(l.syncing(), due, "tick at {at}ms");
        }
    }
}
