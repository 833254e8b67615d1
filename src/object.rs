//! An object as kwatch holds it: the server's JSON, kept as raw bytes, plus the few
//! metadata fields the client-go core needs. The full JSON is parsed only by outputs
//! that need it (table columns, YAML), never by the core.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::value::RawValue;

/// Shared handle: one allocation is shared by the FIFO, the store and the printer.
pub type ObjectRef = Arc<Object>;

/// The metadata fields kwatch reads from every object.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Meta {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub namespace: Option<String>,
    #[serde(default)]
    pub resource_version: String,
    #[serde(default)]
    pub uid: Option<String>,
    #[serde(default)]
    pub creation_timestamp: Option<String>,
}

#[derive(Deserialize)]
struct Envelope {
    #[serde(default)]
    metadata: Meta,
}

/// One Kubernetes object: raw JSON text (exactly as received) plus its parsed [`Meta`].
#[derive(Debug)]
pub struct Object {
    raw: Box<RawValue>,
    meta: Meta,
}

impl Object {
    /// Wraps raw JSON; fails only if it is not a JSON object with well-typed metadata.
    pub fn from_raw(raw: Box<RawValue>) -> Result<Object, serde_json::Error> {
        let env: Envelope = serde_json::from_str(raw.get())?;
        Ok(Object {
            raw,
            meta: env.metadata,
        })
    }

    /// Parses JSON text into an object.
    pub fn from_json(text: &str) -> Result<Object, serde_json::Error> {
        Object::from_raw(RawValue::from_string(text.to_owned())?)
    }

    pub fn raw(&self) -> &RawValue {
        &self.raw
    }

    pub fn meta(&self) -> &Meta {
        &self.meta
    }

    pub fn resource_version(&self) -> &str {
        &self.meta.resource_version
    }

    /// The store key: `namespace/name`, or `name` for cluster-scoped objects.
    pub fn key(&self) -> String {
        key_of(self.meta.namespace.as_deref(), &self.meta.name)
    }

    /// The full JSON as a value (parses; use only where an output needs fields).
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::from_str(self.raw.get()).unwrap_or(serde_json::Value::Null)
    }
}

/// client-go's MetaNamespaceKeyFunc.
pub fn key_of(namespace: Option<&str>, name: &str) -> String {
    match namespace {
        Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
        _ => name.to_owned(),
    }
}

/// At most `max` characters of `s`, for messages quoting server data.
pub fn truncate(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_meta() {
        let o = Object::from_json(
            r#"{"metadata":{"name":"a","namespace":"ns","resourceVersion":"7"},"spec":{}}"#,
        )
        .unwrap();
        assert_eq!(o.key(), "ns/a");
        assert_eq!(o.resource_version(), "7");
        let c = Object::from_json(r#"{"metadata":{"name":"n1","resourceVersion":"9"}}"#).unwrap();
        assert_eq!(c.key(), "n1");
        assert!(Object::from_json("[1]").is_err());
    }
}
