//! `--diff`: what a delta changed against the previous version kwatch knew (the store's
//! copy before the delta was applied), as an RFC 6902 JSON Patch for JSON, and as a
//! compact list of `path: old → new` for people.
//!
//! Noise — fields that change on every write and say nothing about the object
//! (resourceVersion, managedFields, generation) — is left out unless `--diff-all`.

use serde_json::Value;

use crate::cache::delta::DeltaType;
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
    /// Empty when there is no previous version.
    pub patch: json_patch::Patch,
    /// The previous version (less noise), to show old values.
    pub before: Value,
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

fn strip(mut v: Value, mode: DiffMode) -> Value {
    if mode != DiffMode::All {
        if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
            for k in NOISE {
                m.remove(*k);
            }
        }
    }
    v
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
            before: Value::Null,
            known: false,
        });
    };
    if std::sync::Arc::ptr_eq(prev, cur) || prev.raw() == cur.raw() {
        return Some(Diff {
            changed: false,
            patch: json_patch::Patch(Vec::new()),
            before: Value::Null,
            known: true,
        });
    }
    let before = strip(prev.to_value(), mode);
    let after = strip(cur.to_value(), mode);
    let mut patch = json_patch::diff(&before, &after);
    // A new uid says the rest is another object's: it comes first (stable otherwise).
    patch
        .0
        .sort_by_key(|op| op.path().as_str() != "/metadata/uid");
    Some(Diff {
        changed: !patch.0.is_empty(),
        patch,
        before,
        known: true,
    })
}

/// One changed path for people: `old` is None for an added field, `new` None for a
/// removed one.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub path: String,
    pub old: Option<Value>,
    pub new: Option<Value>,
}

/// The patch as a list of changed paths (`.status.conditions[0].status`).
pub fn changes(d: &Diff) -> Vec<Change> {
    use json_patch::PatchOperation as Op;
    d.patch
        .0
        .iter()
        .filter_map(|op| {
            let (ptr, new) = match op {
                Op::Add(a) => (a.path.as_str(), Some(a.value.clone())),
                Op::Replace(r) => (r.path.as_str(), Some(r.value.clone())),
                Op::Remove(r) => (r.path.as_str(), None),
                // json_patch::diff emits only add, remove and replace.
                _ => return None,
            };
            Some(Change {
                path: dotted(ptr),
                old: d.before.pointer(ptr).cloned(),
                new,
            })
        })
        .collect()
}

/// A JSON pointer as kubectl-style path: `/a/b/0/c` → `.a.b[0].c`.
pub fn dotted(ptr: &str) -> String {
    let mut out = String::new();
    for tok in ptr.split('/').skip(1) {
        let tok = tok.replace("~1", "/").replace("~0", "~");
        if !tok.is_empty() && tok.chars().all(|c| c.is_ascii_digit()) {
            out.push_str(&format!("[{tok}]"));
        } else {
            out.push('.');
            out.push_str(&tok);
        }
    }
    if out.is_empty() {
        ".".into()
    } else {
        out
    }
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
    changes(d)
        .iter()
        .map(|c| format!("{}: {} → {}", c.path, short(&c.old), short(&c.new)))
        .collect()
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
}
