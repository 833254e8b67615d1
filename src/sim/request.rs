//! What a resource request asks for, shared by the list handlers ([`super::http`]) and
//! the watch handler ([`super::watch`]): the resolved path, the query parameters, the
//! representation asked for, the selectors, and resourceVersion parsing and waiting.
//! Both handlers depend on this module and it depends on neither.

use std::collections::HashMap;
use std::time::Duration;

use super::resources;
use super::selector::{self, FieldSelector, LabelSelector};
use super::status::{Cause, Status};
use super::storage::{selectable_fields, Obj};
use super::App;

/// Query parameters (the last value of a repeated key wins).
pub type Params = HashMap<String, String>;

/// What the client asked for in `Accept`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum As {
    Object,
    Table,
    PartialMetadata,
}

/// A resource path, resolved.
#[derive(Debug, Clone)]
pub struct Target {
    pub res: usize,
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub subresource: Option<String>,
}

/// A `FieldValueNotSupported` cause for `resourceVersionMatch`.
pub fn not_supported(value: &str, supported: &[&str]) -> Cause {
    let list: Vec<String> = supported.iter().map(|s| format!("\"{s}\"")).collect();
    Cause {
        reason: "FieldValueNotSupported",
        message: format!(
            "Unsupported value: \"{value}\": supported values: {}",
            list.join(", ")
        ),
        field: "resourceVersionMatch".into(),
    }
}

/// Label and field selectors of a request, validated for the resource.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub namespace: Option<String>,
    pub labels: LabelSelector,
    pub fields: FieldSelector,
}

impl Filter {
    pub fn from_params(t: &Target, q: &Params) -> Result<Filter, Status> {
        let labels =
            selector::parse_labels(q.get("labelSelector").map(String::as_str).unwrap_or(""))
                .map_err(Status::bad_request)?;
        let fields = selector::parse_fields(
            q.get("fieldSelector").map(String::as_str).unwrap_or(""),
            selectable_fields(t.res),
            matches!(t.res, resources::PODS | resources::EVENTS),
        )
        .map_err(Status::bad_request)?;
        Ok(Filter {
            namespace: t.namespace.clone(),
            labels,
            fields,
        })
    }

    /// Whether the filter is only a namespace restriction.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty() && self.fields.is_empty()
    }

    pub fn matches(&self, o: &Obj) -> bool {
        if let Some(ns) = &self.namespace {
            if &o.namespace != ns {
                return false;
            }
        }
        self.labels.matches(&o.labels) && self.fields.matches(|f| o.field(f))
    }
}

/// Parses a numeric resourceVersion parameter.
pub fn parse_rv(s: &str) -> Result<u64, Status> {
    s.parse::<u64>().map_err(|_| {
        Status::bad_request(format!(
            "resourceVersion: Invalid value: \"{s}\": must be a non-negative integer"
        ))
    })
}

/// Waits until the store reaches `rv`, at most `wait`. Returns the current revision.
pub async fn wait_for_rv(app: &App, rv: u64, wait: Duration) -> u64 {
    let mut rx = app.cluster.subscribe();
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let cur = app.cluster.read().rev();
        if cur >= rv {
            return cur;
        }
        tokio::select! {
            r = rx.changed() => if r.is_err() { return cur },
            _ = tokio::time::sleep_until(deadline) => return app.cluster.read().rev(),
        }
    }
}
