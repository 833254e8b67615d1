//! PartialObjectMetadata(List): what a metadata informer gets
//! (`Accept: application/json;as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1`), in the
//! real server's shapes (as captured from a genuine kube-apiserver 1.32: a list, a single
//! object and a Table's rows): `kind`,
//! `apiVersion: meta.k8s.io/v1` and the object's `metadata` in ObjectMeta's Go field order —
//! custom resources' too, whose stored form is alphabetical,
//! since the conversion goes through the typed struct. Watch events carry such objects; a
//! bookmark is a PartialObjectMetadata holding only the resourceVersion (and the
//! initial-events-end annotations, whose list blueprint is an empty
//! PartialObjectMetadataList).

use serde_json::{json, Map, Value};

use super::resources::{ResourceDef, RESOURCES};
use super::status::{go_json, Status};
use super::storage::{Obj, META_ORDER};

/// A PartialObjectMetadata up to its metadata.
const HEAD: &str = r#"{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":"#;

/// The `kind` and `apiVersion` of a list of them; a typed list, for every resource (no
/// empty `continue`, unlike a custom resource's own list).
pub const LIST_TYPE: (&str, &str) = ("PartialObjectMetadataList", "meta.k8s.io/v1");

/// The empty list a streaming list's initial-events-end bookmark describes, as encoded
/// into its `kubernetes.io/initial-events-list-blueprint` annotation.
pub const BLUEPRINT: &str =
    "{\"kind\":\"PartialObjectMetadataList\",\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":{},\"items\":null}\n";

/// Go field orders of ManagedFieldsEntry and OwnerReference.
const MANAGED_FIELDS_ORDER: &[&str] = &[
    "manager",
    "operation",
    "apiVersion",
    "time",
    "fieldsType",
    "fieldsV1",
    "subresource",
];
const OWNER_REFERENCE_ORDER: &[&str] = &[
    "apiVersion",
    "kind",
    "name",
    "uid",
    "controller",
    "blockOwnerDeletion",
];

/// The PartialObjectMetadata of `o`, compact.
pub fn object_json(o: &Obj) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEAD.len() + 1024);
    write_object(o, &mut out);
    out
}

/// Appends the PartialObjectMetadata of `o` (a list item: it keeps its `kind`).
pub fn write_object(o: &Obj, out: &mut Vec<u8>) {
    out.extend_from_slice(HEAD.as_bytes());
    match stored_metadata(o) {
        Some(meta) => out.extend_from_slice(meta),
        None => out.extend_from_slice(&go_json(&typed_meta(&o.value()["metadata"]))),
    }
    out.push(b'}');
}

/// The PartialObjectMetadata of an object's value (a Table row's `object`).
pub fn from_value(v: &Value) -> Value {
    json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
           "metadata": typed_meta(&v["metadata"])})
}

/// The `metadata` member of a built-in object as stored, which is already in Go's order,
/// right after `kind` and `apiVersion` (see `storage::normalize`); `None` for custom
/// resources. Only the metadata's bytes are scanned, not the whole object.
fn stored_metadata(o: &Obj) -> Option<&[u8]> {
    let def = &RESOURCES[o.res];
    if def.custom {
        return None;
    }
    let prefix = format!(
        "{{\"kind\":\"{}\",\"apiVersion\":\"{}\",\"metadata\":",
        def.kind,
        def.api_version()
    );
    let rest = o.json.strip_prefix(prefix.as_bytes())?;
    Some(&rest[..object_len(rest)?])
}

/// The length of the JSON object at the start of `b`, which is valid JSON (the simulator
/// wrote it): [`kwatch_core::scan::skip_valid`], for an object only.
fn object_len(b: &[u8]) -> Option<usize> {
    if b.first() != Some(&b'{') {
        return None;
    }
    kwatch_core::scan::skip_valid(b, 0)
}

/// `meta` as the typed ObjectMeta encodes it: its fields in Go order (others dropped),
/// `creationTimestamp: null` when unset, managedFields and ownerReferences entries in
/// their structs' orders.
fn typed_meta(meta: &Value) -> Value {
    let mut out = Map::new();
    for k in META_ORDER {
        let v = match (meta.get(*k), *k) {
            (Some(v), "managedFields") => reorder_each(v, MANAGED_FIELDS_ORDER),
            (Some(v), "ownerReferences") => reorder_each(v, OWNER_REFERENCE_ORDER),
            (Some(v), _) => v.clone(),
            (None, "creationTimestamp") => Value::Null,
            (None, _) => continue,
        };
        out.insert((*k).into(), v);
    }
    Value::Object(out)
}

/// Each object of the array `list` with its keys in `order` (others dropped).
fn reorder_each(list: &Value, order: &[&str]) -> Value {
    let Some(items) = list.as_array() else {
        return list.clone();
    };
    let each = |e: &Value| {
        let m: Map<String, Value> = order
            .iter()
            .filter_map(|k| Some(((*k).to_owned(), e.get(*k)?.clone())))
            .collect();
        Value::Object(m)
    };
    Value::Array(items.iter().map(each).collect())
}

/// A BOOKMARK's object: a PartialObjectMetadata with the resourceVersion, whatever the
/// resource (`creationTimestamp: null`, as the typed struct writes it), with
/// `annotations` on the initial-events-end one.
pub fn bookmark(rv: u64, annotations: Option<Value>) -> Value {
    let mut meta = Map::new();
    meta.insert("resourceVersion".into(), json!(rv.to_string()));
    meta.insert("creationTimestamp".into(), Value::Null);
    if let Some(a) = annotations {
        meta.insert("annotations".into(), a);
    }
    json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": meta})
}

/// 406 for `as=PartialObjectMetadata` on a list, in kube-apiserver's words.
pub fn list_not_acceptable(def: &ResourceDef) -> Status {
    Status::not_acceptable(format!(
        "you requested PartialObjectMetadata, but the requested object is a list ({})",
        go_type(def, true)
    ))
}

/// 406 for `as=PartialObjectMetadataList` on one object, in kube-apiserver's words.
pub fn object_not_acceptable(def: &ResourceDef) -> Status {
    Status::not_acceptable(format!(
        "you requested PartialObjectMetadataList, but the requested object is not a list ({})",
        go_type(def, false)
    ))
}

/// The Go type (`%T`) kube-apiserver's handler holds for `def`'s objects: a built-in
/// kind's internal type (`*core.PodList`, `*apps.Deployment`; events.k8s.io's Event is
/// core's), unstructured for a custom resource.
fn go_type(def: &ResourceDef, list: bool) -> String {
    let suffix = if list { "List" } else { "" };
    if def.custom {
        return format!("*unstructured.Unstructured{suffix}");
    }
    let package = match def.group {
        "" | "events.k8s.io" => "core",
        g => g.split('.').next().unwrap_or(g),
    };
    format!("*{package}.{}{suffix}", def.kind)
}

#[cfg(test)]
mod tests {
    use super::super::resources::{CONFIGMAPS, PODS, WIDGETS};
    use super::*;

    /// A genuine kube-apiserver 1.32's answer to `GET …/configmaps/cm2` with
    /// `as=PartialObjectMetadata`.
    const CM2: &str = r#"{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"cm2","namespace":"ref","uid":"df7fb1c7-9981-46e4-846a-074e03aee41b","resourceVersion":"223","creationTimestamp":"2026-11-21T21:10:55Z","labels":{"app":"a"},"managedFields":[{"manager":"kubectl-create","operation":"Update","apiVersion":"v1","time":"2026-11-21T21:10:55Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:k":{}}}},{"manager":"kubectl-label","operation":"Update","apiVersion":"v1","time":"2026-11-21T21:10:55Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{}}}}}]}}"#;

    #[test]
    fn a_configmap_is_the_reference_capture() {
        let meta: Value = serde_json::from_str::<Value>(CM2).unwrap()["metadata"].clone();
        let stored = json!({"metadata": meta, "data": {"k": "v2", "x": "}\"{"}});
        let o = Obj::from_value(CONFIGMAPS, stored);
        assert_eq!(String::from_utf8(object_json(&o)).unwrap(), CM2);
        // The slow path (any order in, Go's order out) gives the same bytes.
        let v = o.value();
        assert_eq!(String::from_utf8(go_json(&from_value(&v))).unwrap(), CM2);
    }

    /// A custom resource's metadata comes out in Go's order, as in the rows of a captured
    /// Table of a genuine kube-apiserver, though it is stored alphabetically.
    #[test]
    fn a_custom_resource_is_in_go_order() {
        let o = Obj::from_value(
            WIDGETS,
            json!({"metadata": {"name": "w1", "namespace": "ref", "uid": "u", "resourceVersion": "7",
                "generation": 1, "creationTimestamp": "2026-11-21T21:10:55Z", "labels": {"app": "a"},
                "managedFields": [{"manager": "m", "operation": "Update", "apiVersion": "example.com/v1",
                    "time": "2026-11-21T21:10:55Z", "fieldsType": "FieldsV1", "fieldsV1": {}, "subresource": "status"}]},
                "spec": {"size": 3}}),
        );
        let v: Value = serde_json::from_slice(&object_json(&o)).unwrap();
        let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(keys(&v), ["kind", "apiVersion", "metadata"]);
        assert_eq!(
            keys(&v["metadata"]),
            [
                "name",
                "namespace",
                "uid",
                "resourceVersion",
                "generation",
                "creationTimestamp",
                "labels",
                "managedFields"
            ]
        );
        assert_eq!(
            keys(&v["metadata"]["managedFields"][0]),
            MANAGED_FIELDS_ORDER
        );
    }

    #[test]
    fn the_metadata_scan_skips_strings() {
        let b = br#"{"a":"}\"{]","b":[{}],"c":{"d":"\\"}}, "spec":{}"#;
        assert_eq!(object_len(b), Some(b.len() - 11));
        assert_eq!(object_len(b"[1]"), None);
        assert_eq!(object_len(b"{\"a\":1"), None);
    }

    #[test]
    fn bookmarks_and_refusals() {
        assert_eq!(
            String::from_utf8(go_json(&bookmark(260, None))).unwrap(),
            r#"{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"260","creationTimestamp":null}}"#
        );
        assert_eq!(
            list_not_acceptable(&RESOURCES[PODS]).message.as_deref(),
            Some("you requested PartialObjectMetadata, but the requested object is a list (*core.PodList)")
        );
        assert_eq!(
            object_not_acceptable(&RESOURCES[WIDGETS]).message.as_deref(),
            Some("you requested PartialObjectMetadataList, but the requested object is not a list (*unstructured.Unstructured)")
        );
    }
}
