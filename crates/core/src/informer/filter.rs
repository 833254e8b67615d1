//! The printing filters: `--quiet-relists`, `--types` and `--changes`, and the tally of
//! a relist's deltas that fills in the `Relisted` record. The filters decide printing
//! only: the informer still pops and applies every delta, and the store, `--until`,
//! `--check-consistency`, `--stats` and `--record` see them all (docs/user-guide.md).

use serde_json::Value;

use crate::cache::delta::{Delta, DeltaType};
use crate::cache::object::ObjectRef;
use crate::cache::reflector::{KeySample, ReflectorEvent};
use crate::informer::diff::NOISE;

/// A word of a comma list that names no delta type (`--types`) or part (`--changes`).
#[derive(Debug, thiserror::Error)]
#[error("unknown {what} {name:?}: use a comma list of {valid}")]
pub struct UnknownName {
    what: &'static str,
    name: String,
    valid: String,
}

/// `--types`: the delta types to print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Types(pub Vec<DeltaType>);

impl Types {
    /// The names [`Types::parse`] reads, in `--types`' order.
    pub fn names() -> Vec<&'static str> {
        DeltaType::ALL.map(DeltaType::as_str).to_vec()
    }

    /// A comma list of delta type names, in any case.
    pub fn parse(s: &str) -> Result<Types, UnknownName> {
        let valid = || Types::names().join(", ");
        let mut out = Vec::new();
        for name in s.split(',').map(str::trim) {
            let Some(t) = DeltaType::ALL
                .iter()
                .find(|t| t.as_str().eq_ignore_ascii_case(name))
            else {
                return Err(UnknownName {
                    what: "delta type",
                    name: name.to_owned(),
                    valid: valid(),
                });
            };
            out.push(*t);
        }
        Ok(Types(out))
    }
}

/// A part of an object `--changes` looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Spec,
    Status,
    /// `metadata` without what changes on every write (`--diff`'s noise).
    Metadata,
    Labels,
    Annotations,
    /// A ConfigMap's or Secret's `data` and `binaryData`.
    Data,
}

const PARTS: [(&str, Part); 6] = [
    ("spec", Part::Spec),
    ("status", Part::Status),
    ("metadata", Part::Metadata),
    ("labels", Part::Labels),
    ("annotations", Part::Annotations),
    ("data", Part::Data),
];

/// `--changes`: the parts whose change makes an update worth printing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parts(pub Vec<Part>);

impl Parts {
    /// The names [`Parts::parse`] reads.
    pub fn names() -> Vec<&'static str> {
        PARTS.iter().map(|(n, _)| *n).collect()
    }

    /// A comma list of part names, in any case.
    pub fn parse(s: &str) -> Result<Parts, UnknownName> {
        let mut out = Vec::new();
        for name in s.split(',').map(str::trim) {
            let Some((_, p)) = PARTS.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) else {
                return Err(UnknownName {
                    what: "part",
                    name: name.to_owned(),
                    valid: Parts::names().join(", "),
                });
            };
            out.push(*p);
        }
        Ok(Parts(out))
    }
}

impl Part {
    /// This part of `v` (`Null` when absent), without `--diff`'s noise for metadata.
    fn of(self, v: &Value) -> Value {
        let meta = |f: &str| v["metadata"][f].clone();
        match self {
            Part::Spec => v["spec"].clone(),
            Part::Status => v["status"].clone(),
            Part::Labels => meta("labels"),
            Part::Annotations => meta("annotations"),
            Part::Data => Value::Array(vec![v["data"].clone(), v["binaryData"].clone()]),
            Part::Metadata => {
                let mut m = v["metadata"].clone();
                if let Some(m) = m.as_object_mut() {
                    for k in NOISE {
                        m.remove(*k);
                    }
                }
                m
            }
        }
    }
}

/// A delta that replays a state the informer already held: a relist's or resync's
/// object whose resourceVersion and uid are those of the store's version before it.
pub fn unchanged(delta: &Delta, prev: Option<&ObjectRef>) -> bool {
    let relisted = matches!(
        delta.kind,
        DeltaType::Replaced | DeltaType::Sync | DeltaType::ReplacedAll | DeltaType::SyncAll
    );
    match (delta.object.object(), prev) {
        (Some(o), Some(p)) if relisted => {
            o.resource_version() == p.resource_version() && !o.recreated_from(p)
        }
        _ => false,
    }
}

/// The printing filters of a run; the default prints everything.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub quiet_relists: bool,
    pub types: Option<Types>,
    pub changes: Option<Parts>,
}

impl Filter {
    /// Whether a delta (and the handler call it makes) is printed.
    pub fn shows(&self, delta: &Delta, prev: Option<&ObjectRef>) -> bool {
        if self
            .types
            .as_ref()
            .is_some_and(|t| !t.0.contains(&delta.kind))
        {
            return false;
        }
        if self.quiet_relists && unchanged(delta, prev) {
            return false;
        }
        match (&self.changes, delta.kind) {
            (None, _) | (Some(_), DeltaType::Added | DeltaType::Deleted) => true,
            (Some(parts), _) => changed_parts(parts, delta, prev),
        }
    }
}

/// Whether one of `parts` differs between `prev` and the delta's object; with no
/// previous version (or another object under the key) everything is new.
fn changed_parts(parts: &Parts, delta: &Delta, prev: Option<&ObjectRef>) -> bool {
    let (Some(cur), Some(prev)) = (delta.object.object(), prev) else {
        return true;
    };
    if prev.raw() == cur.raw() {
        return false;
    }
    if cur.recreated_from(prev) {
        return true;
    }
    let (a, b) = (prev.to_value(), cur.to_value());
    parts.0.iter().any(|p| p.of(&a) != p.of(&b))
}

/// What a relist's (or resync's) deltas did to the informer's state, tallied as they
/// are popped, from its `Listed` (or `Resync`) record to its `Relisted`.
#[derive(Debug, Default)]
pub struct Tally {
    added: KeySample,
    deleted: KeySample,
    changed: KeySample,
    recreated: KeySample,
    unchanged: KeySample,
}

impl Tally {
    /// Counts one popped delta of `key` against `prev`, the store's version before it.
    /// Watch deltas (Added, Updated, a Deleted that is no tombstone) are no relist's.
    pub fn count(&mut self, key: &str, delta: &Delta, prev: Option<&ObjectRef>) {
        let class = match (delta.kind, delta.object.object(), prev) {
            (DeltaType::Deleted, ..) if delta.object.is_tombstone() => &mut self.deleted,
            (DeltaType::Added | DeltaType::Updated | DeltaType::Deleted, ..) => return,
            (_, _, None) => &mut self.added,
            (_, Some(o), Some(p)) if o.recreated_from(p) => &mut self.recreated,
            _ if unchanged(delta, prev) => &mut self.unchanged,
            _ => &mut self.changed,
        };
        class.push(key);
    }

    /// Counts a DeltaFIFO key's popped deltas, `before` being the store's version before
    /// them: only the last that a relist or resync queues (a listed object's or a
    /// tombstone), against the delta before it. The key's earlier ones were queued before
    /// this relist began (a Replace queues one delta per key, and every queued key gets
    /// one), and what they did is the state the relist is compared with.
    pub fn count_key(&mut self, key: &str, deltas: &[Delta], before: Option<&ObjectRef>) {
        let mut prev = before;
        let mut last = None;
        for d in deltas {
            let relist = !matches!(
                d.kind,
                DeltaType::Added | DeltaType::Updated | DeltaType::Deleted
            ) || d.object.is_tombstone();
            if relist {
                last = Some((d, prev));
            }
            prev = d.stored();
        }
        if let Some((d, prev)) = last {
            self.count(key, d, prev);
        }
    }

    /// Fills the classes of a [`ReflectorEvent::Relisted`] the reflector queued.
    pub fn fill(self, e: &mut ReflectorEvent) {
        if let ReflectorEvent::Relisted {
            added,
            deleted,
            changed,
            recreated,
            unchanged,
            ..
        } = e
        {
            *added = self.added;
            *deleted = self.deleted;
            *changed = self.changed;
            *recreated = self.recreated;
            *unchanged = self.unchanged;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::testutil::object;

    fn cm(rv: &str, uid: &str, data: &str) -> ObjectRef {
        object(&format!(
            r#"{{"metadata":{{"name":"a","namespace":"n","resourceVersion":"{rv}","uid":"{uid}"}},"data":{{"k":"{data}"}}}}"#
        ))
    }

    #[test]
    fn types_and_parts_parse_with_one_line_errors() {
        assert_eq!(
            Types::parse("added,Deleted").unwrap().0,
            [DeltaType::Added, DeltaType::Deleted]
        );
        let e = Types::parse("Added,Modified").unwrap_err().to_string();
        assert!(
            e.contains("\"Modified\"") && e.contains("SyncAll") && !e.contains('\n'),
            "{e}"
        );
        assert_eq!(
            Parts::parse("spec,data").unwrap().0,
            [Part::Spec, Part::Data]
        );
        assert!(Parts::parse("specs")
            .unwrap_err()
            .to_string()
            .contains("annotations"));
    }

    #[test]
    fn changes_pass_additions_and_deletions_and_updates_of_the_part() {
        let f = Filter {
            changes: Some(Parts(vec![Part::Spec])),
            ..Filter::default()
        };
        let (a, b) = (cm("1", "u", "x"), cm("2", "u", "y"));
        assert!(!f.shows(&Delta::new(DeltaType::Updated, b.clone()), Some(&a)));
        assert!(f.shows(&Delta::new(DeltaType::Added, b.clone()), None));
        assert!(f.shows(&Delta::new(DeltaType::Deleted, b.clone()), Some(&a)));
        let data = Filter {
            changes: Some(Parts(vec![Part::Data])),
            ..Filter::default()
        };
        assert!(data.shows(&Delta::new(DeltaType::Updated, b.clone()), Some(&a)));
        assert!(!data.shows(&Delta::new(DeltaType::Sync, a.clone()), Some(&a)));
    }

    #[test]
    fn a_relist_is_tallied_by_class() {
        let mut t = Tally::default();
        let (a, b, c) = (cm("1", "u", "x"), cm("2", "u", "y"), cm("3", "v", "y"));
        t.count(
            "n/same",
            &Delta::new(DeltaType::Replaced, a.clone()),
            Some(&a),
        );
        t.count("n/new", &Delta::new(DeltaType::Replaced, a.clone()), None);
        t.count(
            "n/changed",
            &Delta::new(DeltaType::Replaced, b.clone()),
            Some(&a),
        );
        t.count(
            "n/again",
            &Delta::new(DeltaType::Replaced, c.clone()),
            Some(&b),
        );
        t.count(
            "n/gone",
            &Delta::tombstone("n/gone".into(), Some(a.clone())),
            Some(&a),
        );
        t.count(
            "n/watched",
            &Delta::new(DeltaType::Updated, b.clone()),
            Some(&a),
        );
        let mut e = ReflectorEvent::relisted("9", false);
        t.fill(&mut e);
        let classes: Vec<_> = e
            .relisted_classes()
            .unwrap()
            .into_iter()
            .map(|(what, k)| (what, k.count, k.keys.join(",")))
            .collect();
        assert_eq!(
            classes,
            [
                ("added", 1, "n/new".to_owned()),
                ("deleted", 1, "n/gone".into()),
                ("changed", 1, "n/changed".into()),
                ("recreated", 1, "n/again".into()),
                ("unchanged", 1, "n/same".into()),
            ]
        );
    }
}
