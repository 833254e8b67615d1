//! An object as kwatch holds it: the server's JSON, kept as raw bytes, plus the few
//! metadata fields the client-go core needs. The full JSON is parsed only by outputs
//! that need it (table columns, YAML), never by the core.

use std::sync::Arc;

use serde::de::{DeserializeSeed, Deserializer, Error as _, IgnoredAny, MapAccess, Visitor};
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
    /// Whether `metadata.managedFields` is there: outputs drop it unless asked, and need
    /// not search the whole object for it when it is not.
    #[serde(default, rename = "managedFields", deserialize_with = "present")]
    pub has_managed_fields: bool,
}

fn present<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    IgnoredAny::deserialize(d).map(|_| true)
}

/// Reads an object's `metadata` and stops there: the rest (spec and status, most of the
/// bytes) is not scanned, because the raw value was validated when it was split off the
/// list or the watch line. Errors as deserializing `{"metadata": Meta}` would, except that a
/// duplicate `metadata` key is not noticed.
fn parse_meta(raw: &str) -> Result<Meta, serde_json::Error> {
    let mut found = None;
    let mut de = serde_json::Deserializer::from_str(raw);
    let r = MetaSeed(&mut found).deserialize(&mut de);
    match (r, found) {
        (_, Some(meta)) => Ok(meta),
        (Ok(()), None) => Ok(Meta::default()),
        (Err(e), None) => Err(e),
    }
}

/// Visits an object's keys up to `metadata`, stores it in `.0` and ends the visit (with an
/// error that [`parse_meta`] discards).
struct MetaSeed<'a>(&'a mut Option<Meta>);

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Key {
    Metadata,
    #[serde(other)]
    Other,
}

impl<'de> DeserializeSeed<'de> for MetaSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for MetaSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Metadata => {
                    *self.0 = Some(map.next_value()?);
                    return Err(A::Error::custom("metadata read"));
                }
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
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
        let meta = parse_meta(raw.get())?;
        Ok(Object { raw, meta })
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
        Some(ns) if !ns.is_empty() => {
            let mut key = String::with_capacity(ns.len() + 1 + name.len());
            key.push_str(ns);
            key.push('/');
            key.push_str(name);
            key
        }
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
        // Metadata anywhere among the keys; badly typed metadata is an error.
        let text = r#"{"kind":"Pod","spec":{"a":["}"]},"metadata":{"name":"b","resourceVersion":"3"},"x":1}"#;
        let o = Object::from_json(text).unwrap();
        assert_eq!((o.key().as_str(), o.resource_version()), ("b", "3"));
        assert_eq!(o.raw().get(), text);
        assert!(!o.meta().has_managed_fields);
        let mf = Object::from_json(r#"{"metadata":{"name":"m","managedFields":[{"a":1}]}}"#);
        assert!(mf.unwrap().meta().has_managed_fields);
        let none = Object::from_json(r#"{"spec":{}}"#).unwrap();
        assert_eq!(none.meta(), &Meta::default());
        assert!(Object::from_json(r#"{"metadata":{"name":5}}"#).is_err());
        assert!(Object::from_json(r#"{"metadata":null}"#).is_err());
        assert!(Object::from_json(r#""s""#).is_err());
    }
}
