//! `--diff`: what a delta changed against the previous version kwatch knew (the store's
//! copy before the delta was applied), as an RFC 6902 JSON Patch for JSON, and as a
//! compact list of `path: old → new` for people.
//!
//! The JSON Patch is exact and index-based, as RFC 6902 is. The lines for people (and
//! `--blame`'s paths, made from them) compare an associative list — conditions by type,
//! containers by name…, as the object's managedFields key them, else as
//! [`fields::list_kind`]'s table of the built-in types does — item by item by key: a
//! condition that moved is not a change of its `type`, and a reorder alone is the one
//! line `.status.conditions: reordered`. Paths are written in one jq-like style
//! ([`fields::display`]).
//!
//! Noise — fields that change on every write and say nothing about the object
//! (resourceVersion, managedFields, generation) — is left out unless `--diff-all`.

use serde_json::Value;

use crate::cache::delta::DeltaType;
use crate::cache::fields::{self, Element, ListKeys};
use crate::cache::object::ObjectRef;

/// Which deltas get a diff, and with or without the noise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DiffMode {
    #[default]
    Off,
    On,
    All,
}

/// The metadata fields `--diff` leaves out by default.
pub const NOISE: &[&str] = &["resourceVersion", "managedFields", "generation"];

/// What a delta changed.
#[derive(Debug, Clone, PartialEq)]
pub struct Diff {
    /// False only for a Replaced/Sync whose object equals the previous version (less
    /// noise): the relist brought nothing new.
    pub changed: bool,
    /// Empty when there is no previous version. Exact RFC 6902: lists by index.
    pub patch: json_patch::Patch,
    /// The same changes for people (`--diff`'s lines, `--blame`'s paths): associative
    /// lists item by item by their keys. Empty when there is no previous version.
    pub changes: Vec<Change>,
    /// Whether a previous version was known (else `patch` is empty and meaningless).
    pub known: bool,
}

/// Whether a delta of this type carries a diff: updates and relist/resync deltas (each
/// of which may or may not change anything); Added has no previous version, Deleted
/// changes nothing in the object.
pub fn applies(t: DeltaType) -> bool {
    matches!(
        t,
        DeltaType::Updated
            | DeltaType::Replaced
            | DeltaType::Sync
            | DeltaType::ReplacedAll
            | DeltaType::SyncAll
    )
}

/// Whether two objects' JSON differ only in their metadata's noise ([`NOISE`]), told from
/// their bytes: the same bytes once those members are cut out parse to the same values
/// once [`strip`] took them out, so a patch and a walk would find nothing. `false` where
/// the bytes do not say it surely (`metadata` twice, a key with an escape, a noise member
/// nested so deep that one version might not parse while the other does).
fn noise_only(prev: &str, cur: &str) -> bool {
    use crate::scan::{cut_members, member, skip_valid_within, skip_ws, without};
    fn cut(raw: &str) -> Option<String> {
        let b = raw.as_bytes();
        let at = member(b, skip_ws(b, 0), b"metadata")??;
        let mut spans = Vec::new();
        cut_members(
            b,
            at,
            |k| NOISE.iter().any(|n| n.as_bytes() == k),
            &mut spans,
        )?;
        for &(start, end) in &spans {
            // A noise key has no `:`: the first one after it ends the key.
            let colon = start + raw.get(start..end)?.find(':')?;
            skip_valid_within(b, skip_ws(b, colon + 1), 100)?;
        }
        Some(without(raw, &spans))
    }
    match (cut(prev), cut(cur)) {
        (Some(p), Some(c)) => p == c,
        _ => false,
    }
}

/// The managedFields entries a version had: those [`strip`] took out, else its own.
fn managed_entries<'v>(v: &'v Value, taken: &'v Option<Value>) -> &'v [Value] {
    taken
        .as_ref()
        .unwrap_or(&v["metadata"]["managedFields"])
        .as_array()
        .map_or(&[], Vec::as_slice)
}

/// `v` without the noise unless `mode` is `All`, and the managedFields it took out.
fn strip(mut v: Value, mode: DiffMode) -> (Value, Option<Value>) {
    let mut managed = None;
    if mode != DiffMode::All {
        if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
            for k in NOISE {
                let taken = m.remove(*k);
                if *k == "managedFields" {
                    managed = taken;
                }
            }
        }
    }
    (v, managed)
}

/// The diff of `cur` against `prev`; `None` when `mode` is off or the type has none.
pub fn compute(
    mode: DiffMode,
    t: DeltaType,
    prev: Option<&ObjectRef>,
    cur: Option<&ObjectRef>,
) -> Option<Diff> {
    if mode == DiffMode::Off || !applies(t) {
        return None;
    }
    let cur = cur?;
    let Some(prev) = prev else {
        // Nothing known before: everything is new.
        return Some(Diff {
            changed: true,
            patch: json_patch::Patch(Vec::new()),
            changes: Vec::new(),
            known: false,
        });
    };
    let noise_only = mode != DiffMode::All && noise_only(prev.raw(), cur.raw());
    if std::sync::Arc::ptr_eq(prev, cur) || prev.raw() == cur.raw() || noise_only {
        return Some(Diff {
            changed: false,
            patch: json_patch::Patch(Vec::new()),
            changes: Vec::new(),
            known: true,
        });
    }
    let (before, after) = (prev.to_value(), cur.to_value());
    let ((before, before_managed), (after, after_managed)) =
        (strip(before, mode), strip(after, mode));
    if before == after {
        // Only noise changed (an update that rewrote managedFields' times): a patch and
        // a walk of equal values find nothing, and no list's keys are needed.
        return Some(Diff {
            changed: false,
            patch: json_patch::Patch(Vec::new()),
            changes: Vec::new(),
            known: true,
        });
    }
    let keys = ListKeys::of_entries(
        managed_entries(&after, &after_managed)
            .iter()
            .chain(managed_entries(&before, &before_managed)),
    );
    let mut patch = json_patch::diff(&before, &after);
    // A new uid says the rest is another object's: it comes first (stable otherwise).
    patch
        .0
        .sort_by_key(|op| op.path().as_str() != "/metadata/uid");
    let mut changes = Vec::new();
    Walk {
        keys: &keys,
        out: &mut changes,
    }
    .value(&mut At::default(), &before, &after);
    changes.sort_by_key(|c| c.path != ".metadata.uid");
    Some(Diff {
        changed: !patch.0.is_empty(),
        patch,
        changes,
        known: true,
    })
}

/// One change for people.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// Where, in the one path style ([`fields::display`]): `.spec.replicas`,
    /// `.status.conditions[type=Available].status`, `.metadata.annotations["a/b"]`.
    pub path: String,
    /// The same place as managedFields name it, to find its owner: list items by key (or,
    /// in a set, by value); inside an atomic list, the list.
    pub field: fields::Path,
    pub edit: Edit,
}

/// What happened at a path.
#[derive(Debug, Clone, PartialEq)]
pub enum Edit {
    /// A value set: `old` None for an added field, `new` None for a removed one.
    Value {
        old: Option<Value>,
        new: Option<Value>,
    },
    /// An associative list whose items present before and after are in another order:
    /// one line for the list, whatever moved (items changed, added or removed are changes
    /// of their own). An item's key cannot change, so a move is never a change of it.
    Reordered,
}

/// Where the walk is: the path shown, and the path owned (which stops growing inside an
/// atomic list, owned as a whole).
#[derive(Debug, Default, Clone)]
struct At {
    shown: fields::Path,
    owned: fields::Path,
    atomic: bool,
}

impl At {
    fn push(&mut self, shown: Element, owned: Option<Element>) {
        self.shown.push(shown);
        match owned {
            Some(e) if !self.atomic => self.owned.push(e),
            _ => self.atomic = true,
        }
    }

    fn pop(&mut self, was: &At) {
        self.shown.pop();
        self.owned.truncate(was.owned.len());
        self.atomic = was.atomic;
    }
}

/// The human diff: objects key by key (changed and added in the new order, then removed),
/// associative lists item by item by key, other lists index by index — as
/// `json_patch::diff` walks, but by key where a list has keys.
struct Walk<'a> {
    keys: &'a ListKeys,
    out: &'a mut Vec<Change>,
}

impl Walk<'_> {
    fn change(&mut self, at: &At, edit: Edit) {
        self.out.push(Change {
            path: fields::display(&at.shown),
            field: at.owned.clone(),
            edit,
        });
    }

    fn set(&mut self, at: &At, old: Option<&Value>, new: Option<&Value>) {
        let edit = Edit::Value {
            old: old.cloned(),
            new: new.cloned(),
        };
        self.change(at, edit);
    }

    fn value(&mut self, at: &mut At, before: &Value, after: &Value) {
        match (before, after) {
            (Value::Object(b), Value::Object(a)) => {
                for (k, av) in a {
                    let was = at.clone();
                    let f = Element::Field(k.clone());
                    at.push(f.clone(), Some(f));
                    match b.get(k) {
                        Some(bv) => self.value(at, bv, av),
                        None => self.set(at, None, Some(av)),
                    }
                    at.pop(&was);
                }
                for (k, bv) in b {
                    if !a.contains_key(k) {
                        let was = at.clone();
                        let f = Element::Field(k.clone());
                        at.push(f.clone(), Some(f));
                        self.set(at, Some(bv), None);
                        at.pop(&was);
                    }
                }
            }
            (Value::Array(b), Value::Array(a)) => self.list(at, b, a),
            _ if before == after => {}
            _ => self.set(at, Some(before), Some(after)),
        }
    }

    fn list(&mut self, at: &mut At, before: &[Value], after: &[Value]) {
        let name = match at.shown.last() {
            Some(Element::Field(f)) => f.as_str(),
            _ => "",
        };
        let sample = if after.is_empty() { before } else { after };
        let set = fields::list_kind(name, sample) == fields::ListKind::Set;
        let keys = self.keys.of_list(&at.shown, name, sample);
        let keyed = keys.filter(|k| keyed_by(before, k) && keyed_by(after, k));
        let Some(keys) = keyed else {
            return self.by_index(at, set, before, after);
        };
        let key = |v: &Value| fields::item_key(v, &keys);
        let before_keys: Vec<Element> = before.iter().map(key).collect();
        let after_keys: Vec<Element> = after.iter().map(key).collect();
        let common = |of: &[Element], other: &[Element]| -> Vec<Element> {
            of.iter().filter(|k| other.contains(k)).cloned().collect()
        };
        if common(&before_keys, &after_keys) != common(&after_keys, &before_keys) {
            self.change(at, Edit::Reordered);
        }
        for (k, a) in after_keys.iter().zip(after) {
            let was = at.clone();
            at.push(k.clone(), Some(k.clone()));
            match before_keys.iter().position(|b| b == k) {
                Some(i) => self.value(at, &before[i], a),
                None => self.set(at, None, Some(a)),
            }
            at.pop(&was);
        }
        for (k, b) in before_keys.iter().zip(before) {
            if !after_keys.contains(k) {
                let was = at.clone();
                at.push(k.clone(), Some(k.clone()));
                self.set(at, Some(b), None);
                at.pop(&was);
            }
        }
    }

    /// A list without keys: item by index; a set's items owned by value, any other
    /// list's as the whole list.
    fn by_index(&mut self, at: &mut At, set: bool, before: &[Value], after: &[Value]) {
        for i in 0..before.len().max(after.len()) {
            let (b, a) = (before.get(i), after.get(i));
            let owned = set
                .then(|| a.or(b).map(|v| Element::Value(v.to_string())))
                .flatten();
            let was = at.clone();
            at.push(Element::Index(i), owned);
            match (b, a) {
                (Some(b), Some(a)) => self.value(at, b, a),
                (b, a) => self.set(at, b, a),
            }
            at.pop(&was);
        }
    }
}

/// Whether every item of `items` holds the first key and no two share their keys: the
/// list can be matched by key (else the server could not have keyed it either).
fn keyed_by(items: &[Value], keys: &[String]) -> bool {
    let Some(first) = keys.first() else {
        return false;
    };
    let mut seen = std::collections::BTreeSet::new();
    items
        .iter()
        .all(|i| i.get(first).is_some() && seen.insert(fields::item_key(i, keys)))
}

/// The changes of `d`, for people.
pub fn changes(d: &Diff) -> &[Change] {
    &d.changes
}

/// A value shortened for one line.
pub fn short(v: &Option<Value>) -> String {
    match v {
        None => "∅".into(),
        Some(v) => {
            let s = v.to_string();
            if s.chars().count() > 60 {
                format!("{}…", s.chars().take(59).collect::<String>())
            } else {
                s
            }
        }
    }
}

/// `path: old → new` lines for the table and YAML.
pub fn lines(d: &Diff) -> Vec<String> {
    d.changes.iter().map(Change::line).collect()
}

impl Change {
    /// `path: old → new`, or `path: reordered`.
    pub fn line(&self) -> String {
        match &self.edit {
            Edit::Value { old, new } => format!("{}: {} → {}", self.path, short(old), short(new)),
            Edit::Reordered => format!("{}: reordered", self.path),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::testutil::object;

    #[test]
    fn diff_leaves_noise_out_and_lists_changed_paths() {
        let a = object(
            r#"{"metadata":{"name":"a","resourceVersion":"1","generation":1},"status":{"phase":"Pending","c":[{"s":"False"}]}}"#,
        );
        let b = object(
            r#"{"metadata":{"name":"a","resourceVersion":"2","generation":2,"labels":{"x/y":"1"}},"status":{"phase":"Running","c":[{"s":"True"}]}}"#,
        );
        let d = compute(DiffMode::On, DeltaType::Updated, Some(&a), Some(&b)).unwrap();
        assert!(d.changed);
        assert_eq!(
            lines(&d),
            [
                ".metadata.labels: ∅ → {\"x/y\":\"1\"}",
                ".status.phase: \"Pending\" → \"Running\"",
                ".status.c[0].s: \"False\" → \"True\"",
            ]
        );
        let all = compute(DiffMode::All, DeltaType::Updated, Some(&a), Some(&b)).unwrap();
        assert!(lines(&all)
            .iter()
            .any(|l| l.starts_with(".metadata.resourceVersion")));
        let same = compute(DiffMode::On, DeltaType::Replaced, Some(&a), Some(&a)).unwrap();
        assert!(!same.changed);
        let new = compute(DiffMode::On, DeltaType::Replaced, None, Some(&a)).unwrap();
        assert!(new.changed);
        assert!(compute(DiffMode::On, DeltaType::Added, None, Some(&a)).is_none());
        assert!(compute(DiffMode::Off, DeltaType::Updated, Some(&a), Some(&b)).is_none());
        // Only noise changed: not a change.
        let c = object(
            r#"{"metadata":{"name":"a","resourceVersion":"9","generation":1},"status":{"phase":"Pending","c":[{"s":"False"}]}}"#,
        );
        let n = compute(DiffMode::On, DeltaType::Replaced, Some(&a), Some(&c)).unwrap();
        assert!(!n.changed);
    }

    #[test]
    fn a_new_uid_comes_first() {
        let a = object(r#"{"data":{"k":"v"},"metadata":{"name":"a","uid":"1"}}"#);
        let b = object(r#"{"data":{"k":"w"},"metadata":{"name":"a","uid":"2"}}"#);
        let d = compute(DiffMode::On, DeltaType::Replaced, Some(&a), Some(&b)).unwrap();
        let l = lines(&d);
        assert_eq!(l.len(), 2, "{l:?}");
        assert_eq!(l[0], ".metadata.uid: \"1\" → \"2\"");
    }

    fn deployment(conditions: &str, revision: &str, extra: &str) -> ObjectRef {
        object(&format!(
            r#"{{"metadata":{{"name":"d","annotations":{{"deployment.kubernetes.io/revision":"{revision}"}}{extra}}},"status":{{"conditions":{conditions}}}}}"#
        ))
    }

    const PROGRESSING: &str =
        r#"{"type":"Progressing","status":"True","reason":"NewReplicaSetCreated"}"#;
    const AVAILABLE: &str =
        r#"{"type":"Available","status":"True","reason":"MinimumReplicasAvailable"}"#;

    /// kube-controller-manager reordering conditions is not read as every field of both
    /// renamed (lists compared by key); paths in one style, odd keys quoted.
    #[test]
    fn associative_lists_are_compared_by_key_and_the_patch_stays_exact() {
        let a = deployment(&format!("[{PROGRESSING},{AVAILABLE}]"), "1", "");
        let moved = PROGRESSING.replace("NewReplicaSetCreated", "NewReplicaSetAvailable");
        let b = deployment(&format!("[{AVAILABLE},{moved}]"), "2", "");
        let d = compute(DiffMode::On, DeltaType::Updated, Some(&a), Some(&b)).unwrap();
        assert_eq!(
            lines(&d),
            [
                r#".metadata.annotations["deployment.kubernetes.io/revision"]: "1" → "2""#,
                ".status.conditions: reordered",
                r#".status.conditions[type=Progressing].reason: "NewReplicaSetCreated" → "NewReplicaSetAvailable""#,
            ]
        );
        // RFC 6902 is by index, exact: applying it gives the new object.
        assert!(d
            .patch
            .0
            .iter()
            .any(|op| op.path().as_str() == "/status/conditions/0/type"));
        let mut v = strip(a.to_value(), DiffMode::On).0;
        json_patch::patch(&mut v, &d.patch).unwrap();
        assert_eq!(v, strip(b.to_value(), DiffMode::On).0);
        // A reorder alone is the one line.
        let c = deployment(&format!("[{AVAILABLE},{PROGRESSING}]"), "1", "");
        let d = compute(DiffMode::On, DeltaType::Updated, Some(&a), Some(&c)).unwrap();
        assert_eq!(lines(&d), [".status.conditions: reordered"]);
        // An item gone and one added are named by their keys; the rest keep their order.
        let e = deployment(
            &format!(r#"[{AVAILABLE},{{"type":"ReplicaFailure","status":"True"}}]"#),
            "1",
            "",
        );
        let d = compute(DiffMode::On, DeltaType::Updated, Some(&a), Some(&e)).unwrap();
        assert_eq!(
            lines(&d),
            [
                r#".status.conditions[type=ReplicaFailure]: ∅ → {"type":"ReplicaFailure","status":"True"}"#,
                r#".status.conditions[type=Progressing]: {"type":"Progressing","status":"True","reason":"NewReplicaS… → ∅"#,
            ]
        );
    }

    #[test]
    fn managed_fields_key_a_custom_resources_list_and_duplicate_keys_fall_back_to_indexes() {
        let mf = r#","managedFields":[{"manager":"m","fieldsV1":{"f:status":{"f:conditions":{"k:{\"kind\":\"A\"}":{"f:ok":{}}}}}}]"#;
        let a = deployment(r#"[{"kind":"A","ok":1},{"kind":"B","ok":1}]"#, "1", mf);
        let b = deployment(r#"[{"kind":"B","ok":1},{"kind":"A","ok":2}]"#, "1", mf);
        let d = compute(DiffMode::On, DeltaType::Updated, Some(&a), Some(&b)).unwrap();
        assert_eq!(
            lines(&d),
            [
                ".status.conditions: reordered",
                ".status.conditions[kind=A].ok: 1 → 2"
            ]
        );
        // Two items with one key: not an associative list the server would take.
        let a = deployment(r#"[{"type":"A","ok":1},{"type":"A","ok":2}]"#, "1", "");
        let b = deployment(r#"[{"type":"A","ok":2},{"type":"A","ok":2}]"#, "1", "");
        let d = compute(DiffMode::On, DeltaType::Updated, Some(&a), Some(&b)).unwrap();
        assert_eq!(lines(&d), [".status.conditions[0].ok: 1 → 2"]);
    }

    /// What lets [`compute`] stop at equal versions: a patch and a walk of two equal
    /// values find nothing, for every object of crates/core/testdata (with the list keys
    /// of its managedFields), also with its members in another order.
    #[test]
    fn equal_versions_have_no_patch_and_no_changes() {
        let mut walked = 0;
        for (p, doc) in crate::cache::testutil::testdata_json() {
            let v: Value = serde_json::from_str(&doc).unwrap();
            let reversed = match &v {
                Value::Object(m) => Value::Object(
                    m.iter()
                        .rev()
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                ),
                other => other.clone(),
            };
            let entries = managed_entries(&v, &None);
            let keys = ListKeys::of_entries(entries);
            for other in [&v, &reversed] {
                assert!(json_patch::diff(&v, other).0.is_empty(), "{}", p.display());
                let mut changes = Vec::new();
                Walk {
                    keys: &keys,
                    out: &mut changes,
                }
                .value(&mut At::default(), &v, other);
                assert!(changes.is_empty(), "{}: {changes:?}", p.display());
            }
            walked += 1;
        }
        assert!(walked > 200, "{walked} objects");
    }

    /// Versions that differ only in their noise are told apart by their bytes alone, and
    /// then [`strip`] makes their values equal; any other difference, or bytes that do not
    /// say it surely, leave it to the values.
    #[test]
    fn noise_only_changes_are_told_from_the_bytes() {
        let a = r#"{"kind":"Pod","metadata":{"name":"a","resourceVersion":"1","generation":1,"managedFields":[{"manager":"k","time":"t1"}],"labels":{"x":"1"}},"spec":{}}"#;
        let noise = [
            r#"{"kind":"Pod","metadata":{"name":"a","resourceVersion":"2","generation":1,"managedFields":[{"manager":"k","time":"t2"}],"labels":{"x":"1"}},"spec":{}}"#,
            r#"{"kind":"Pod","metadata":{"name":"a","generation":3,"labels":{"x":"1"}},"spec":{}}"#,
            r#"{"kind":"Pod","metadata":{"resourceVersion":"7","name":"a","labels":{"x":"1"},"resourceVersion":"8"},"spec":{}}"#,
        ];
        for b in noise {
            assert!(noise_only(a, b), "{b}");
            let strip = |s: &str| strip(serde_json::from_str(s).unwrap(), DiffMode::On).0;
            assert_eq!(strip(a), strip(b), "{b}");
            // (An object whose metadata repeats a member kwatch reads is not kept.)
            if crate::cache::object::Object::from_json(b).is_err() {
                continue;
            }
            let (a, b) = (object(a), object(b));
            let d = compute(DiffMode::On, DeltaType::Updated, Some(&a), Some(&b)).unwrap();
            assert!(!d.changed && d.changes.is_empty() && d.patch.0.is_empty() && d.known);
            let all = compute(DiffMode::All, DeltaType::Updated, Some(&a), Some(&b)).unwrap();
            assert!(all.changed);
        }
        let deep = format!(
            r#"{{"kind":"Pod","metadata":{{"name":"a","managedFields":{}{},"labels":{{"x":"1"}}}},"spec":{{}}}}"#,
            "[".repeat(120),
            "]".repeat(120)
        );
        for b in [
            r#"{"kind":"Pod","metadata":{"name":"a","resourceVersion":"2","labels":{"x":"2"}},"spec":{}}"#,
            r#"{"kind":"Pod","metadata":{"name":"a","labels":{"x":"1"}},"spec":{"a":1}}"#,
            r#"{"kind":"Pod","metadata":{"name":"a","labels":{"x":"1"}},"metadata":{"name":"a","labels":{"x":"1"}},"spec":{}}"#,
            r#"{"kind":"Pod","metadata":{"name":"a","labels":{"\u0078":"1"}},"spec":{}}"#,
            &deep,
        ] {
            assert!(!noise_only(a, b), "{b}");
        }
    }
}
