//! `--transform`: what client-go's `TransformFunc` does (shared_informer.go's
//! `SetTransform`; since 0.27 the DeltaFIFO applies it before an object is queued), as a
//! few fixed transforms. Applied on the reflector's store side, before the queue, so the
//! store, the printed objects and `--cache-stats` all see what the cache holds.

use serde_json::Value;

use crate::cache::cost::LAST_APPLIED;
use crate::cache::object::{Object, ObjectRef};
use crate::scan;

/// A `--transform` that is none of the forms: one line naming them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown transform {0:?}: use {managed}, {last_applied} or {only}FIELD,…",
    managed = Transform::FORMS[0],
    last_applied = Transform::FORMS[1],
    only = Transform::FORMS[2]
)]
pub struct UnknownTransform(pub String);

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transform {
    /// Drops `metadata.managedFields` (what most controllers' transforms do).
    StripManagedFields,
    /// Drops kubectl apply's last-applied-configuration annotation.
    StripLastApplied,
    /// Keeps `apiVersion`, `kind`, `metadata` and the listed top-level fields only.
    MetadataOnlyFields(Vec<String>),
}

impl Transform {
    /// The forms `--transform` takes, as [`Transform::parse`] reads them (and completion
    /// offers them): the last is followed by the fields it keeps.
    pub const FORMS: [&'static str; 3] = [
        "strip-managed-fields",
        "strip-last-applied",
        "metadata-only-fields=",
    ];

    /// `strip-managed-fields`, `strip-last-applied` or `metadata-only-fields=a,b`;
    /// `Err`: one line naming the choices.
    pub fn parse(s: &str) -> Result<Transform, UnknownTransform> {
        let [managed, last_applied, only] = Transform::FORMS;
        if s == managed {
            return Ok(Transform::StripManagedFields);
        }
        if s == last_applied {
            return Ok(Transform::StripLastApplied);
        }
        match s.strip_prefix(only) {
            Some(list) => Ok(Transform::MetadataOnlyFields(
                list.split(',')
                    .map(str::trim)
                    .filter(|f| !f.is_empty())
                    .map(str::to_owned)
                    .collect(),
            )),
            None => Err(UnknownTransform(s.to_owned())),
        }
    }

    /// The object as the cache keeps it; unchanged if nothing is removed (or the object
    /// cannot be rewritten, which a server's JSON never causes). The removed members are
    /// cut out of the server's bytes (each with one comma), the rest kept as it was sent;
    /// where a cut is not certain to leave the value a JSON reader would see (a key with
    /// an escape, `metadata` or `annotations` twice), the object is parsed and written
    /// again instead.
    pub fn apply(&self, obj: ObjectRef) -> ObjectRef {
        let raw = obj.raw();
        let known = match (self, obj.managed_fields_span()) {
            (Transform::StripManagedFields, Some(span)) => Some(vec![span]),
            _ => None,
        };
        let Some(spans) = known.or_else(|| self.spans(raw.as_bytes())) else {
            return self.apply_rewritten(obj);
        };
        if spans.is_empty() {
            return obj;
        }
        match Object::from_json(&scan::without(raw, &spans)) {
            Ok(o) => ObjectRef::new(o),
            Err(_) => obj,
        }
    }

    /// The spans [`Transform::apply`] cuts out of `b`, an object's validated JSON (none:
    /// nothing to remove); `None` when it cannot cut.
    fn spans(&self, b: &[u8]) -> Option<Vec<(usize, usize)>> {
        let top = scan::skip_ws(b, 0);
        let mut spans = Vec::new();
        let metadata = || scan::member(b, top, b"metadata");
        match self {
            Transform::StripManagedFields => {
                if let Some(meta) = metadata()? {
                    if b[meta] == b'{' {
                        scan::cut_members(b, meta, |k| k == b"managedFields", &mut spans)?;
                    }
                }
            }
            Transform::StripLastApplied => {
                let meta = metadata()?.filter(|&m| b[m] == b'{');
                let annotations = match meta {
                    Some(m) => scan::member(b, m, b"annotations")?,
                    None => None,
                };
                if let Some(a) = annotations.filter(|&a| b[a] == b'{') {
                    scan::cut_members(b, a, |k| k == LAST_APPLIED.as_bytes(), &mut spans)?;
                }
            }
            Transform::MetadataOnlyFields(keep) => {
                let kept = |k: &[u8]| {
                    matches!(k, b"apiVersion" | b"kind" | b"metadata")
                        || keep.iter().any(|f| f.as_bytes() == k)
                };
                scan::cut_members(b, top, |k| !kept(k), &mut spans)?;
            }
        }
        Some(spans)
    }

    /// [`Transform::apply`] by parsing the object into a tree, removing the members and
    /// writing it again (JSON's escapes and numbers then in serde_json's form).
    pub fn apply_rewritten(&self, obj: ObjectRef) -> ObjectRef {
        let Ok(mut v) = serde_json::from_str::<Value>(obj.raw()) else {
            return obj;
        };
        let changed = match (self, v.as_object_mut()) {
            (Transform::StripManagedFields, Some(o)) => o
                .get_mut("metadata")
                .and_then(Value::as_object_mut)
                .and_then(|m| m.shift_remove("managedFields"))
                .is_some(),
            (Transform::StripLastApplied, Some(o)) => {
                let meta = o.get_mut("metadata").and_then(Value::as_object_mut);
                let annotations = meta.and_then(|m| m.get_mut("annotations"));
                annotations
                    .and_then(Value::as_object_mut)
                    .and_then(|a| a.shift_remove(LAST_APPLIED))
                    .is_some()
            }
            (Transform::MetadataOnlyFields(keep), Some(o)) => {
                let before = o.len();
                o.retain(|k, _| {
                    matches!(k.as_str(), "apiVersion" | "kind" | "metadata")
                        || keep.iter().any(|f| f == k)
                });
                o.len() != before
            }
            (_, None) => false,
        };
        if !changed {
            return obj;
        }
        match Object::from_json(&v.to_string()) {
            Ok(o) => ObjectRef::new(o),
            Err(_) => obj,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::testutil::object;

    const RAW: &str = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"5","managedFields":[{"manager":"kubectl"}],"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}","keep":"x"}},"data":{"k":"v"},"binaryData":{}}"#;

    #[test]
    fn each_transform_removes_its_fields_and_keeps_the_rest() {
        let t = |s: &str| Transform::parse(s).expect("parse").apply(object(RAW));
        let o = t("strip-managed-fields");
        assert_eq!(
            o.raw(),
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"5","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}","keep":"x"}},"data":{"k":"v"},"binaryData":{}}"#
        );
        assert_eq!(o.resource_version(), "5");
        assert!(!t("strip-last-applied").raw().contains("last-applied"));
        assert!(t("strip-last-applied").raw().contains(r#""keep":"x""#));
        assert_eq!(
            t("metadata-only-fields=data").raw(),
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"5","managedFields":[{"manager":"kubectl"}],"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}","keep":"x"}},"data":{"k":"v"}}"#
        );
        assert!(Transform::parse("strip-everything").is_err());
    }

    /// The transforms cut their members out of the object's bytes: the same bytes as the
    /// rewrite for JSON as servers write it, the same value for every shape.
    #[test]
    fn transforms_cut_what_the_rewrite_removed() {
        let shapes = [
            RAW,
            r#"{"metadata":{"managedFields":[{"m":"}"}],"name":"a","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"x\":1}"}},"data":{}}"#,
            r#"{"kind":"Pod","metadata":{"name":"a","annotations":{"a":"b","kubectl.kubernetes.io/last-applied-configuration":"{}"}},"spec":{"managedFields":1},"status":{}}"#,
            r#"{"metadata":{"name":"a","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}"}}}"#,
            r#"{"metadata":{"name":"a","annotations":null,"managedFields":null}}"#,
            r#"{"metadata":{"name":"a"},"spec":{"x":[1,2]},"apiVersion":"v1","data":{"é":"\u00e9"}}"#,
            " { \"metadata\" : { \"managedFields\" : [ ] , \"name\" : \"a\" } , \"data\" : { } , \"spec\" : 1 } ",
            r#"{"metadata":{"name":"a"},"metadata":{"name":"a","managedFields":[1]}}"#,
            r#"{"metadata":{"n\u0061me":"a","managedFields":[1]}}"#,
        ];
        for t in [
            "strip-managed-fields",
            "strip-last-applied",
            "metadata-only-fields=data",
            "metadata-only-fields=",
        ] {
            let t = Transform::parse(t).expect("parse");
            for raw in shapes {
                let cut = t.apply(object(raw));
                let old = t.apply_rewritten(object(raw));
                let value = |s: &str| serde_json::from_str::<Value>(s).unwrap();
                assert_eq!(value(cut.raw()), value(old.raw()), "{t:?} {raw}");
                let canonical = serde_json::to_string(&value(raw)).unwrap();
                if canonical == raw {
                    assert_eq!(cut.raw(), old.raw(), "{t:?} {raw}");
                }
            }
        }
    }
}
