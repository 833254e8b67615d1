//! The authorization printers: service accounts, role bindings and cluster role bindings
//! (printers.go); roles print the server's default columns (`created_at_columns`).

use serde_json::Value;

use super::column::{and_wide, Column};
use super::format::str_or_empty;

/// printers.go `printServiceAccount`: the number of `secrets`.
pub(super) fn serviceaccount_columns(_wide: bool) -> Vec<Column> {
    vec![
        Column::new("SECRETS", |o, _| {
            o["secrets"].as_array().map_or(0, Vec::len).to_string()
        }),
        Column::age(),
    ]
}

/// printers.go `printRoleBinding` / `printClusterRoleBinding`: ROLE is `Kind/name`;
/// wide adds the subjects of rbac's `SubjectsStrings`, each list joined by `, `.
pub(super) fn rolebinding_columns(wide: bool) -> Vec<Column> {
    let cols = vec![
        Column::new("ROLE", |o, _| {
            let r = &o["roleRef"];
            format!("{}/{}", str_or_empty(&r["kind"]), str_or_empty(&r["name"]))
        }),
        Column::age(),
    ];
    and_wide(cols, wide, || {
        vec![
            Column::new("USERS", |o, _| subjects(o, "User")),
            Column::new("GROUPS", |o, _| subjects(o, "Group")),
            Column::new("SERVICEACCOUNTS", |o, _| subjects(o, "ServiceAccount")),
        ]
    })
}

/// The names of a binding's subjects of `kind` (a ServiceAccount's as `namespace/name`),
/// joined by `, `.
fn subjects(o: &Value, kind: &str) -> String {
    o["subjects"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| s["kind"] == kind)
        .map(|s| match kind {
            "ServiceAccount" => {
                format!(
                    "{}/{}",
                    str_or_empty(&s["namespace"]),
                    str_or_empty(&s["name"])
                )
            }
            _ => str_or_empty(&s["name"]),
        })
        .collect::<Vec<_>>()
        .join(", ")
}
