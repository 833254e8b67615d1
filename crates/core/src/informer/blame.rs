//! `--blame`: who made each change of a delta. The changed paths are `--diff`'s lines
//! ([`diff::compute`], noise left out; associative lists by key), each attributed to the `metadata.managedFields`
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
    /// As `--diff` writes it: `.spec.template.spec.containers[name=app].image`.
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
    let out = d
        .changes
        .iter()
        .map(|c| {
            let e = fields::owner(entries, &c.field).map(|i| &entries[i]);
            let field = |name: &str| e.and_then(|e| e[name].as_str()).map(str::to_owned);
            Blame {
                path: c.path.clone(),
                manager: field("manager"),
                operation: field("operation"),
                subresource: field("subresource"),
                time: field("time"),
                unowned: e.is_none(),
            }
        })
        .collect();
    Some(out)
}

/// The table's line for one blamed path: `spec.replicas ← x (Apply, TIME)`.
pub fn line(b: &Blame) -> String {
    format!("{} ← {}", b.path, who(b))
}

/// Who owns a blamed path now, as [`line`] says it after the arrow: `x (Apply, TIME)`, or
/// `unowned`.
pub fn who(b: &Blame) -> String {
    match &b.manager {
        None => "unowned".to_owned(),
        Some(m) => {
            let mut how = b.operation.clone().unwrap_or_default();
            if let Some(s) = &b.subresource {
                how.push_str(&format!(" /{s}"));
            }
            if let Some(t) = &b.time {
                how.push_str(&format!(", {t}"));
            }
            format!("{m} ({how})")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::testutil::object;

    /// The table's lines of what an update from `old` to `new` is blamed on.
    fn blamed(old: &ObjectRef, new: &ObjectRef) -> Vec<String> {
        let got = compute(DeltaType::Updated, Some(old), Some(new)).unwrap();
        got.iter().map(line).collect()
    }

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
        assert_eq!(
            blamed(&a, &b),
            [
                ".spec.replicas ← x (Apply, T1)",
                ".spec.template.spec.containers[name=app].image ← kubectl-patch (Update, T2)",
                ".spec.paused ← unowned",
            ]
        );
        // A removed list item is named by its key (its owner gone with it).
        let two = object(
            r#"{"metadata":{"name":"d"},"spec":{"template":{"spec":{"containers":[{"name":"a"},{"name":"b"}]}}}}"#,
        );
        let one = object(
            r#"{"metadata":{"name":"d"},"spec":{"template":{"spec":{"containers":[{"name":"b"}]}}}}"#,
        );
        assert_eq!(
            blamed(&two, &one),
            [".spec.template.spec.containers[name=a] ← unowned"]
        );
        // Unchanged, or no known previous version: no blame.
        assert!(compute(DeltaType::Replaced, Some(&b), Some(&b)).is_none());
        assert!(compute(DeltaType::Updated, None, Some(&b)).is_none());
        assert!(compute(DeltaType::Added, None, Some(&b)).is_none());
    }

    /// kube-controller-manager reorders a Deployment's conditions while
    /// changing only Progressing; another manager owns Available. Each is blamed for its
    /// own, and nothing of Available's is blamed at all.
    #[test]
    fn two_managers_owning_different_conditions_are_each_blamed_for_their_own() {
        let mf = r#"[{"manager":"kube-controller-manager","operation":"Update","subresource":"status","time":"T1","fieldsType":"FieldsV1",
            "fieldsV1":{"f:status":{"f:conditions":{".":{},"k:{\"type\":\"Progressing\"}":{".":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}}}}}},
            {"manager":"probe","operation":"Update","subresource":"status","time":"T2","fieldsType":"FieldsV1",
            "fieldsV1":{"f:status":{"f:conditions":{"k:{\"type\":\"Available\"}":{".":{},"f:message":{},"f:status":{},"f:type":{}}}}}}]"#;
        let obj = |conditions: &str| {
            object(&format!(
                r#"{{"metadata":{{"name":"d","managedFields":{mf}}},"status":{{"conditions":{conditions}}}}}"#
            ))
        };
        let a = obj(
            r#"[{"type":"Progressing","reason":"A","message":"a"},{"type":"Available","message":"up"}]"#,
        );
        // Reordered with Progressing's reason changed; then Progressing's and Available's
        // messages changed in place.
        let changes = [
            (
                r#"[{"type":"Available","message":"up"},{"type":"Progressing","reason":"B","message":"a"}]"#,
                [
                    ".status.conditions ← kube-controller-manager (Update /status, T1)",
                    ".status.conditions[type=Progressing].reason ← kube-controller-manager (Update /status, T1)",
                ],
            ),
            (
                r#"[{"type":"Progressing","reason":"A","message":"b"},{"type":"Available","message":"down"}]"#,
                [
                    ".status.conditions[type=Progressing].message ← kube-controller-manager (Update /status, T1)",
                    ".status.conditions[type=Available].message ← probe (Update /status, T2)",
                ],
            ),
        ];
        for (conditions, want) in changes {
            assert_eq!(blamed(&a, &obj(conditions)), want, "{conditions}");
        }
    }
}
