//! `--blame`: who made each change of a delta. The changed paths are `--diff`'s
//! ([`diff::compute`], noise left out), each attributed to the `metadata.managedFields`
//! entry that owns it in the new object ([`fields::owner`]: the deepest owned node on its
//! way), as kubectl#964's blame reads managedFields. Computed from the two objects, so a
//! replay of a recording that kept managedFields computes the same.

use serde::{Deserialize, Serialize};

use super::diff::{self, DiffMode};
use crate::cache::delta::DeltaType;
use crate::cache::fields;
use crate::cache::object::ObjectRef;

/// One changed path and who owns it now; only `path` and `unowned` when nobody does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Blame {
    /// In kubectl's form: `spec.template.spec.containers[name=app].image`.
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manager: Option<String>,
    /// `Update` or `Apply`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
    /// `status` for an entry written through `/status`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subresource: Option<String>,
    /// The entry's `time`: its manager's last write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    /// No managedFields entry owns the path (a removed field, or a server without
    /// managedFields).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unowned: bool,
}

/// The blame of a delta of type `t` from `prev` to `cur`; `None` when the type carries no
/// diff or the object did not change from a known version.
pub fn compute(
    t: DeltaType,
    prev: Option<&ObjectRef>,
    cur: Option<&ObjectRef>,
) -> Option<Vec<Blame>> {
    let d = diff::compute(DiffMode::On, t, prev, cur)?;
    if !d.known || !d.changed {
        return None;
    }
    let after = cur?.to_value();
    let empty = Vec::new();
    let entries = after["metadata"]["managedFields"]
        .as_array()
        .unwrap_or(&empty);
    let mut out: Vec<Blame> = Vec::new();
    for op in &d.patch.0 {
        let ptr = op.path().as_str();
        // A removed path is named as the old object had it (a list's later items shift).
        let (first, then) = match op {
            json_patch::PatchOperation::Remove(_) => (&d.before, &after),
            _ => (&after, &d.before),
        };
        let path =
            fields::path_of_pointer(first, ptr).or_else(|| fields::path_of_pointer(then, ptr));
        let (shown, owner) = match &path {
            Some(p) => (fields::display(p), fields::owner(entries, p)),
            None => (diff::dotted(ptr).trim_start_matches('.').to_owned(), None),
        };
        if out.iter().any(|b| b.path == shown) {
            continue;
        }
        let e = owner.map(|i| &entries[i]);
        let field = |name: &str| e.and_then(|e| e[name].as_str()).map(str::to_owned);
        out.push(Blame {
            path: shown,
            manager: field("manager"),
            operation: field("operation"),
            subresource: field("subresource"),
            time: field("time"),
            unowned: e.is_none(),
        });
    }
    Some(out)
}

/// The table's line for one blamed path: `spec.replicas ← x (Apply, TIME)`.
pub fn line(b: &Blame) -> String {
    match &b.manager {
        None => format!("{} ← unowned", b.path),
        Some(m) => {
            let mut how = b.operation.clone().unwrap_or_default();
            if let Some(s) = &b.subresource {
                how.push_str(&format!(" /{s}"));
            }
            if let Some(t) = &b.time {
                how.push_str(&format!(", {t}"));
            }
            format!("{} ← {m} ({how})", b.path)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::testutil::object;

    #[test]
    fn changes_are_blamed_on_their_owners() {
        let mf = r#"[{"manager":"x","operation":"Apply","apiVersion":"apps/v1","time":"T1","fieldsType":"FieldsV1",
            "fieldsV1":{"f:spec":{"f:replicas":{},"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:name":{}}}}}}}},
            {"manager":"kubectl-patch","operation":"Update","apiVersion":"apps/v1","time":"T2","fieldsType":"FieldsV1",
            "fieldsV1":{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{"f:image":{}}}}}}}}]"#;
        let a = object(
            r#"{"metadata":{"name":"d","resourceVersion":"1"},"spec":{"replicas":1,"paused":true,"template":{"spec":{"containers":[{"name":"app","image":"a"}]}}}}"#,
        );
        let b = object(&format!(
            r#"{{"metadata":{{"name":"d","resourceVersion":"2","managedFields":{mf}}},"spec":{{"replicas":2,"template":{{"spec":{{"containers":[{{"name":"app","image":"b"}}]}}}}}}}}"#
        ));
        let got = compute(DeltaType::Updated, Some(&a), Some(&b)).unwrap();
        let lines: Vec<String> = got.iter().map(line).collect();
        assert_eq!(
            lines,
            [
                "spec.replicas ← x (Apply, T1)",
                "spec.template.spec.containers[name=app].image ← kubectl-patch (Update, T2)",
                "spec.paused ← unowned",
            ]
        );
        // A removed list item is named as the old object had it. (--diff compares lists by
        // index: dropping `a` reads as item 0 renamed to `b` and item 1, `b`, removed.)
        let two = object(
            r#"{"metadata":{"name":"d"},"spec":{"template":{"spec":{"containers":[{"name":"a"},{"name":"b"}]}}}}"#,
        );
        let one = object(
            r#"{"metadata":{"name":"d"},"spec":{"template":{"spec":{"containers":[{"name":"b"}]}}}}"#,
        );
        let got = compute(DeltaType::Updated, Some(&two), Some(&one)).unwrap();
        let paths: Vec<&str> = got.iter().map(|b| b.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "spec.template.spec.containers[name=b].name",
                "spec.template.spec.containers[name=b]"
            ]
        );
        // Unchanged, or no known previous version: no blame.
        assert!(compute(DeltaType::Replaced, Some(&b), Some(&b)).is_none());
        assert!(compute(DeltaType::Updated, None, Some(&b)).is_none());
        assert!(compute(DeltaType::Added, None, Some(&b)).is_none());
    }
}
