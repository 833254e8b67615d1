//! Request bodies in Kubernetes' protobuf encoding (`Content-Type:
//! application/vnd.kubernetes.protobuf`), which kubectl's typed `create` subcommands send
//! (`kubectl create configmap`, `create secret`, `create namespace`, `create serviceaccount`)
//! and `kubectl auth can-i` (a SelfSubjectAccessReview), read into the JSON the simulator
//! handles.
//!
//! A body is the magic `k8s\0` and a `runtime.Unknown` message (`typeMeta` = 1 with
//! `apiVersion` = 1 and `kind` = 2, `raw` = 2: the object's own message). Field numbers are
//! those of k8s.io/api's and k8s.io/apimachinery's `generated.proto`. Go writes every field
//! that is not a pointer, empty or not; JSON leaves empty ones out (`omitempty`), so empty
//! strings, numbers, lists, maps and messages are left out here; booleans are kept as sent.
//! A kind the schema below does not know is refused with kube-apiserver's 415 for a body it
//! cannot read, naming the encodings it can (as the real server does for a custom resource),
//! and a field it does not know that is not empty (`metadata.managedFields`, say) with a
//! 400 naming it: the simulator never drops what it cannot read.

use base64::Engine;
use bytes::Bytes;
use serde_json::{json, Map, Value};

use super::status::Status;

/// The media type of Kubernetes' protobuf encoding.
const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";
/// What starts every protobuf-encoded object (apimachinery's `protoEncodingPrefix`).
const MAGIC: &[u8] = b"k8s\0";

/// How one field's value reads as JSON.
#[derive(Clone, Copy)]
enum Ty {
    Str,
    Bool,
    Int,
    /// `metav1.Time`: seconds = 1, nanos = 2; RFC 3339 to the second in JSON.
    Time,
    Msg(&'static [Field]),
    /// `map<string, string>`: repeated entries with key = 1, value = 2.
    StrMap,
    /// `map<string, bytes>`: the values base64 in JSON.
    BytesMap,
}

/// One field of a message: its number, JSON name, type, and whether it repeats.
#[derive(Clone, Copy)]
struct Field(u32, &'static str, Ty, bool);

const ONE: bool = false;
const MANY: bool = true;

const OWNER_REFERENCE: &[Field] = &[
    Field(5, "apiVersion", Ty::Str, ONE),
    Field(1, "kind", Ty::Str, ONE),
    Field(3, "name", Ty::Str, ONE),
    Field(4, "uid", Ty::Str, ONE),
    Field(6, "controller", Ty::Bool, ONE),
    Field(7, "blockOwnerDeletion", Ty::Bool, ONE),
];
const OBJECT_META: &[Field] = &[
    Field(1, "name", Ty::Str, ONE),
    Field(2, "generateName", Ty::Str, ONE),
    Field(3, "namespace", Ty::Str, ONE),
    Field(4, "selfLink", Ty::Str, ONE),
    Field(5, "uid", Ty::Str, ONE),
    Field(6, "resourceVersion", Ty::Str, ONE),
    Field(7, "generation", Ty::Int, ONE),
    Field(8, "creationTimestamp", Ty::Time, ONE),
    Field(9, "deletionTimestamp", Ty::Time, ONE),
    Field(10, "deletionGracePeriodSeconds", Ty::Int, ONE),
    Field(11, "labels", Ty::StrMap, ONE),
    Field(12, "annotations", Ty::StrMap, ONE),
    Field(13, "ownerReferences", Ty::Msg(OWNER_REFERENCE), MANY),
    Field(14, "finalizers", Ty::Str, MANY),
];
const CONFIG_MAP: &[Field] = &[
    Field(1, "metadata", Ty::Msg(OBJECT_META), ONE),
    Field(2, "data", Ty::StrMap, ONE),
    Field(3, "binaryData", Ty::BytesMap, ONE),
    Field(4, "immutable", Ty::Bool, ONE),
];
const SECRET: &[Field] = &[
    Field(1, "metadata", Ty::Msg(OBJECT_META), ONE),
    Field(2, "data", Ty::BytesMap, ONE),
    Field(3, "type", Ty::Str, ONE),
    Field(4, "stringData", Ty::StrMap, ONE),
    Field(5, "immutable", Ty::Bool, ONE),
];
const NAMESPACE: &[Field] = &[
    Field(1, "metadata", Ty::Msg(OBJECT_META), ONE),
    Field(
        2,
        "spec",
        Ty::Msg(&[Field(1, "finalizers", Ty::Str, MANY)]),
        ONE,
    ),
    Field(
        3,
        "status",
        Ty::Msg(&[Field(1, "phase", Ty::Str, ONE)]),
        ONE,
    ),
];
const OBJECT_REFERENCE: &[Field] = &[
    Field(1, "kind", Ty::Str, ONE),
    Field(2, "namespace", Ty::Str, ONE),
    Field(3, "name", Ty::Str, ONE),
    Field(4, "uid", Ty::Str, ONE),
    Field(5, "apiVersion", Ty::Str, ONE),
    Field(6, "resourceVersion", Ty::Str, ONE),
    Field(7, "fieldPath", Ty::Str, ONE),
];
const SERVICE_ACCOUNT: &[Field] = &[
    Field(1, "metadata", Ty::Msg(OBJECT_META), ONE),
    Field(2, "secrets", Ty::Msg(OBJECT_REFERENCE), MANY),
    Field(
        3,
        "imagePullSecrets",
        Ty::Msg(&[Field(1, "name", Ty::Str, ONE)]),
        MANY,
    ),
    Field(4, "automountServiceAccountToken", Ty::Bool, ONE),
];

const RESOURCE_ATTRIBUTES: &[Field] = &[
    Field(1, "namespace", Ty::Str, ONE),
    Field(2, "verb", Ty::Str, ONE),
    Field(3, "group", Ty::Str, ONE),
    Field(4, "version", Ty::Str, ONE),
    Field(5, "resource", Ty::Str, ONE),
    Field(6, "subresource", Ty::Str, ONE),
    Field(7, "name", Ty::Str, ONE),
];
const SELF_SUBJECT_ACCESS_REVIEW: &[Field] = &[
    Field(1, "metadata", Ty::Msg(OBJECT_META), ONE),
    Field(
        2,
        "spec",
        Ty::Msg(&[
            Field(1, "resourceAttributes", Ty::Msg(RESOURCE_ATTRIBUTES), ONE),
            Field(
                2,
                "nonResourceAttributes",
                Ty::Msg(&[
                    Field(1, "path", Ty::Str, ONE),
                    Field(2, "verb", Ty::Str, ONE),
                ]),
                ONE,
            ),
        ]),
        ONE,
    ),
    Field(
        3,
        "status",
        Ty::Msg(&[
            Field(1, "allowed", Ty::Bool, ONE),
            Field(4, "denied", Ty::Bool, ONE),
            Field(2, "reason", Ty::Str, ONE),
            Field(3, "evaluationError", Ty::Str, ONE),
        ]),
        ONE,
    ),
];

/// The kinds whose messages are read: (apiVersion, kind, fields).
const KINDS: &[(&str, &str, &[Field])] = &[
    ("v1", "ConfigMap", CONFIG_MAP),
    ("v1", "Secret", SECRET),
    ("v1", "Namespace", NAMESPACE),
    ("v1", "ServiceAccount", SERVICE_ACCOUNT),
    (
        "authorization.k8s.io/v1",
        "SelfSubjectAccessReview",
        SELF_SUBJECT_ACCESS_REVIEW,
    ),
];

/// A request body as JSON: as it came unless its `Content-Type` is Kubernetes' protobuf
/// encoding, else read by [`to_json`].
pub fn json_body(content_type: &str, body: Bytes) -> Result<Bytes, Status> {
    let media = content_type.split(';').next().unwrap_or("").trim();
    if !media.eq_ignore_ascii_case(MEDIA_TYPE) {
        return Ok(body);
    }
    to_json(&body).map(|v| Bytes::from(v.to_string()))
}

/// The JSON object a protobuf-encoded body carries; kube-apiserver's 400 for a body that
/// is not one, its 415 for a kind this module cannot read.
fn to_json(body: &[u8]) -> Result<Value, Status> {
    let unknown = body
        .strip_prefix(MAGIC)
        .ok_or_else(|| Status::bad_request("provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"))?;
    let (mut api_version, mut kind, mut raw) = (String::new(), String::new(), &[][..]);
    for field in fields(unknown) {
        match field? {
            (1, Wire::Bytes(type_meta)) => {
                for f in fields(type_meta) {
                    match f? {
                        (1, Wire::Bytes(b)) => api_version = text(b)?,
                        (2, Wire::Bytes(b)) => kind = text(b)?,
                        _ => {}
                    }
                }
            }
            (2, Wire::Bytes(b)) => raw = b,
            _ => {}
        }
    }
    let Some((_, _, schema)) = KINDS
        .iter()
        .find(|(v, k, _)| *v == api_version && *k == kind)
    else {
        return Err(Status::unsupported_body(
            "application/json, application/yaml",
        ));
    };
    let mut object = Map::new();
    object.insert("kind".into(), json!(kind));
    object.insert("apiVersion".into(), json!(api_version));
    object.extend(message(raw, schema)?);
    Ok(Value::Object(object))
}

/// One message's fields as JSON, empty ones left out (see the module's documentation).
fn message(buf: &[u8], schema: &[Field]) -> Result<Map<String, Value>, Status> {
    let mut out = Map::new();
    for field in fields(buf) {
        let (num, wire) = field?;
        let Some(&Field(_, name, ty, many)) = schema.iter().find(|f| f.0 == num) else {
            // Go writes a field that is not a pointer even when it is empty.
            if matches!(wire, Wire::Varint(0) | Wire::Bytes([])) {
                continue;
            }
            return Err(malformed(&format!(
                "field {num} is not one the simulator reads; send the object as JSON \
                 (kubectl create … --dry-run=client -o json | kubectl create -f -)"
            )));
        };
        let value = value(ty, wire)?;
        if many {
            let list = out.entry(name).or_insert_with(|| json!([]));
            if let Value::Array(items) = list {
                items.push(value);
            }
        } else if let (Value::Object(more), Some(Value::Object(map))) = (&value, out.get_mut(name))
        {
            // Map entries come one by one.
            map.extend(more.clone());
        } else {
            out.insert(name.into(), value);
        }
    }
    out.retain(|_, v| !is_empty(v));
    Ok(out)
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Number(n) => n.as_i64() == Some(0),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Bool(_) => false,
    }
}

fn value(ty: Ty, wire: Wire<'_>) -> Result<Value, Status> {
    let b64 = |b: &[u8]| json!(base64::engine::general_purpose::STANDARD.encode(b));
    Ok(match (ty, wire) {
        (Ty::Str, Wire::Bytes(b)) => json!(text(b)?),
        (Ty::Bool, Wire::Varint(n)) => json!(n != 0),
        (Ty::Int, Wire::Varint(n)) => json!(n as i64),
        (Ty::Time, Wire::Bytes(b)) => {
            let mut seconds = 0i64;
            for f in fields(b) {
                if let (1, Wire::Varint(n)) = f? {
                    seconds = n as i64;
                }
            }
            if seconds == 0 {
                Value::Null
            } else {
                let t =
                    jiff::Timestamp::from_second(seconds).map_err(|e| malformed(&e.to_string()))?;
                json!(t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
            }
        }
        (Ty::Msg(schema), Wire::Bytes(b)) => Value::Object(message(b, schema)?),
        (Ty::StrMap | Ty::BytesMap, Wire::Bytes(entry)) => {
            let (mut k, mut v) = (String::new(), json!(""));
            for f in fields(entry) {
                match f? {
                    (1, Wire::Bytes(b)) => k = text(b)?,
                    (2, Wire::Bytes(b)) if matches!(ty, Ty::StrMap) => v = json!(text(b)?),
                    (2, Wire::Bytes(b)) => v = b64(b),
                    _ => {}
                }
            }
            json!({ k: v })
        }
        _ => return Err(malformed("a field of the wrong wire type")),
    })
}

/// A field's value as it is on the wire.
enum Wire<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    /// A 32- or 64-bit value: no field read here has one.
    Fixed,
}

/// The (number, value) pairs of one message, in their order; an error at the first
/// malformed one.
fn fields(mut buf: &[u8]) -> impl Iterator<Item = Result<(u32, Wire<'_>), Status>> {
    std::iter::from_fn(move || {
        if buf.is_empty() {
            return None;
        }
        let next = (|| {
            let tag = varint(&mut buf)?;
            let wire = match tag & 7 {
                0 => Wire::Varint(varint(&mut buf)?),
                1 | 5 => {
                    let n = if tag & 7 == 1 { 8 } else { 4 };
                    buf = buf
                        .get(n..)
                        .ok_or_else(|| malformed("a fixed-size field"))?;
                    Wire::Fixed
                }
                2 => {
                    let len =
                        usize::try_from(varint(&mut buf)?).map_err(|_| malformed("a length"))?;
                    let b = buf.get(..len).ok_or_else(|| malformed("a length"))?;
                    buf = &buf[len..];
                    Wire::Bytes(b)
                }
                _ => return Err(malformed("a wire type")),
            };
            Ok(((tag >> 3) as u32, wire))
        })();
        if next.is_err() {
            buf = &[];
        }
        Some(next)
    })
}

fn varint(buf: &mut &[u8]) -> Result<u64, Status> {
    let mut n = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = buf.split_first().ok_or_else(|| malformed("a varint"))?;
        *buf = rest;
        n |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(n);
        }
    }
    Err(malformed("a varint"))
}

fn text(b: &[u8]) -> Result<String, Status> {
    String::from_utf8(b.to_vec()).map_err(|_| malformed("a string that is not UTF-8"))
}

fn malformed(what: &str) -> Status {
    Status::bad_request(format!("unable to decode the protobuf body: {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A field's tag and length-delimited value, as Go's generated marshallers write it.
    fn bytes(num: u32, b: &[u8]) -> Vec<u8> {
        let mut out = vec![(num << 3 | 2) as u8, b.len() as u8];
        out.extend_from_slice(b);
        out
    }

    fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
        let type_meta = [bytes(1, api_version.as_bytes()), bytes(2, kind.as_bytes())].concat();
        [MAGIC, &bytes(1, &type_meta), &bytes(2, raw)].concat()
    }

    #[test]
    fn a_configmap_as_kubectl_create_sends_it() {
        let entry = |k: &str, v: &str| {
            bytes(
                2,
                &[bytes(1, k.as_bytes()), bytes(2, v.as_bytes())].concat(),
            )
        };
        let meta = [
            bytes(1, b"app-config"),
            bytes(2, b""),
            bytes(3, b"default"),
            vec![7 << 3, 0],
            bytes(8, b""),
            bytes(11, &[bytes(1, b"app"), bytes(2, b"web")].concat()),
        ]
        .concat();
        let raw = [bytes(1, &meta), entry("a", "1"), entry("b", "two")].concat();
        let v = to_json(&envelope("v1", "ConfigMap", &raw)).expect("decodes");
        assert_eq!(
            v,
            json!({"kind": "ConfigMap", "apiVersion": "v1",
                "metadata": {"name": "app-config", "namespace": "default", "labels": {"app": "web"}},
                "data": {"a": "1", "b": "two"}})
        );
    }

    #[test]
    fn secret_data_is_base64_and_an_unknown_kind_is_415() {
        let raw = [
            bytes(2, &[bytes(1, b"k"), bytes(2, &[0, 255])].concat()),
            bytes(3, b"Opaque"),
            vec![5 << 3, 1],
        ]
        .concat();
        let v = to_json(&envelope("v1", "Secret", &raw)).expect("decodes");
        assert_eq!(
            v,
            json!({"kind": "Secret", "apiVersion": "v1", "data": {"k": "AP8="}, "type": "Opaque", "immutable": true})
        );
        let st = to_json(&envelope("apps/v1", "Deployment", b"")).expect_err("415");
        assert_eq!(st.to_value()["code"], 415);
    }

    #[test]
    fn malformed_bodies_are_400_not_a_panic() {
        for body in [
            &b"{\"kind\":\"ConfigMap\"}"[..],
            b"k8s\0\x0a\x7f",
            b"k8s\0\x0a\x02\x0a",
            b"k8s\0\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",
            b"k8s\0\x0f",
        ] {
            let st = to_json(body).expect_err("400");
            assert_eq!(st.to_value()["code"], 400, "{body:?}");
        }
    }
}
