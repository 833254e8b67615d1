//! The simulator's protobuf (`application/vnd.kubernetes.protobuf`), both ways, with the
//! generated table of the simulator's minor (`client::protobuf`), so that every built-in
//! kind is read and written as kube-apiserver reads and writes it.
//!
//! Answers, for a request that asks for protobuf first (`Accept:
//! application/vnd.kubernetes.protobuf[, …]`), as kube-apiserver gives them to
//! kube-controller-manager and typed clients: the handlers write JSON, and this layer
//! re-encodes it (`protobuf_encode`, byte for byte what gogo-protobuf writes).
//! Objects, lists and Status errors become an envelope (`k8s\0` + runtime.Unknown); a watch
//! (`;stream=watch`) becomes length-prefixed WatchEvent frames, line by line as the JSON
//! stream is written, bookmarks and ERROR events included. A custom resource, a Table, and
//! anything the table cannot encode stay JSON (the apiserver serves custom resources only
//! in JSON; a client follows the Content-Type).
//!
//! Request bodies sent in protobuf (`Content-Type: application/vnd.kubernetes.protobuf`:
//! what kubectl's typed `create` subcommands, `auth can-i` and `drain`'s
//! DeleteOptions send, as typed clientsets do) are decoded into the
//! JSON Go's encoding/json writes for the object's Go type ([`json_body`]), for every kind
//! the table has; the handlers then read JSON only. A kind the table does not have is
//! kube-apiserver's 415 for a body it cannot read, naming the encodings it can (as the real
//! server answers a custom resource in protobuf); a body that is not protobuf is its 400;
//! a field the table does not know is a 400 naming it: the simulator never drops what it
//! cannot read (gogo-protobuf would skip it).
//!
//! `POST /_sim/unknown-field` makes the next answers carry a field numbered
//! [`UNKNOWN_FIELD`] in their message (a list's, or a watch event's object), as a newer
//! server's type would: a client's table does not know it.
//!
//! A list is put together from its items' encodings, kept by their JSON ([`ITEMS`]): the
//! storage keeps each object serialized as JSON, so a list of unchanged objects costs the
//! simulator a copy in JSON, and this makes it a copy in protobuf too. Without it a list of
//! 10,000 pods cost 5–8× its JSON (parsing the body whole and encoding every item), a floor
//! no client could beat (`benches/wire.sh`); kube-apiserver encodes protobuf faster than JSON.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use bytes::{Bytes, BytesMut};
use futures::StreamExt;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use super::control::Faults;
use super::discovery::{protobuf_table as table, MINOR};
use super::status::Status;
use super::App;
use crate::protobuf_encode as encode;
use kwatch_core::client::protobuf::{self, DecodeError, Table};

/// Field 99, a varint of 1: no Kubernetes message of 1.32 has a field numbered so high
/// beside its own.
const UNKNOWN_FIELD: [u8; 3] = [0x98, 0x06, 0x01];

/// What `POST /_sim/unknown-field` appends to the next message encoded, if anything.
fn extra(faults: &Faults) -> &'static [u8] {
    if faults.take_unknown_field() {
        &UNKNOWN_FIELD
    } else {
        &[]
    }
}

const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";
const WATCH_MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf;stream=watch";

/// A request body as JSON: as it came unless its `Content-Type` is Kubernetes' protobuf,
/// else decoded with the simulator's table into the JSON of the object's Go type (see the
/// module's documentation for what is refused, and how).
pub fn json_body(content_type: &str, body: Bytes) -> Result<Bytes, Status> {
    let media = content_type.split(';').next().unwrap_or("").trim();
    if !media.eq_ignore_ascii_case(MEDIA_TYPE) {
        return Ok(body);
    }
    if !body.starts_with(protobuf::MAGIC) {
        return Err(Status::bad_request(
            "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]",
        ));
    }
    let table = table().ok_or_else(|| {
        Status::internal(format!(
            "the simulator's protobuf table of 1.{MINOR} does not load"
        ))
    })?;
    let mut json = Vec::with_capacity(body.len() * 2);
    protobuf::object(table, &body, &mut json).map_err(|e| match e {
        DecodeError::UnknownKind { .. } => {
            Status::unsupported_body("application/json, application/yaml")
        }
        DecodeError::UnknownField { .. } => Status::bad_request(format!(
            "unable to decode the protobuf body: {e}; send the object as JSON \
             (kubectl create … --dry-run=client -o json | kubectl create -f -)"
        )),
        DecodeError::Malformed(what) => {
            Status::bad_request(format!("unable to decode the protobuf body: {what}"))
        }
        DecodeError::Table(..) => Status::internal(e.to_string()),
    })?;
    Ok(Bytes::from(json))
}

fn is_json(resp: &Response) -> bool {
    resp.headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"))
}

/// `resp` (JSON, as the handlers write it) in protobuf; a watch's 200 is re-encoded as it
/// streams, anything else buffered whole. What the table cannot encode is left JSON.
pub async fn answer(resp: Response, watching: bool, app: Arc<App>) -> Response {
    let Some(table) = table() else {
        return resp;
    };
    if !is_json(&resp) {
        return resp;
    }
    if watching && resp.status() == StatusCode::OK {
        return watch(table, resp, app);
    }
    let (mut parts, body) = resp.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return Status::internal("could not buffer the response").response();
    };
    let mut out = Vec::with_capacity(bytes.len() / 2);
    let extra = extra(&app.faults);
    let encoded = (extra.is_empty() && list(table, &bytes, &mut out).is_some()) || {
        out.clear();
        serde_json::from_slice::<Value>(&bytes)
            .ok()
            .is_some_and(|v| encode::object_with(table, &v, extra, &mut out).is_ok())
    };
    if !encoded {
        return Response::from_parts(parts, Body::from(bytes));
    }
    parts.headers.remove(header::CONTENT_LENGTH);
    parts
        .headers
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(MEDIA_TYPE));
    Response::from_parts(parts, Body::from(out))
}

/// The encodings of list items by their JSON: a key is the list's message (one item's JSON
/// can be two kinds' items: a ConfigMap's and its PartialObjectMetadata's), the item's JSON's
/// length and 64-bit hash (a collision between two items' JSON is not guarded against); the
/// value the item as its list's `items` field (tag, length, message). At most [`ITEMS_BYTES`] are kept;
/// past that it starts again empty.
static ITEMS: Mutex<Option<ItemCache>> = Mutex::new(None);

/// What [`ITEMS`] may hold: the protobuf of 100,000 pods of 4.8 KB (JSON) and more.
const ITEMS_BYTES: usize = 512 << 20;

#[derive(Default)]
struct ItemCache {
    chunks: HashMap<(u32, usize, u64), Vec<u8>>,
    bytes: usize,
}

/// A list's JSON as [`encode::object`] encodes it, from each item's cached encoding; `None`
/// if `body` is not a list whose kind and items the table encodes (then nothing is cached).
fn list(table: &Table, body: &[u8], out: &mut Vec<u8>) -> Option<()> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct List<'a> {
        #[serde(rename = "apiVersion")]
        api_version: String,
        kind: String,
        metadata: Value,
        #[serde(borrow)]
        items: Vec<&'a RawValue>,
    }
    let list: List = serde_json::from_slice(body).ok()?;
    let msg = table.kind(&list.api_version, &list.kind)?;
    let mut raw = Vec::new();
    encode::message(table, msg, &json!({"metadata": list.metadata}), &mut raw).ok()?;
    // An item's field is what one item adds to an empty list: fields are written by
    // ascending number, `metadata` (1) before `items` (2).
    let mut empty = Vec::new();
    encode::message(table, msg, &json!({}), &mut empty).ok()?;
    let mut guard = ITEMS.lock().unwrap_or_else(|e| e.into_inner());
    let cache = guard.get_or_insert_with(ItemCache::default);
    for item in list.items {
        let json = item.get().as_bytes();
        let key = (
            msg,
            json.len(),
            foldhash::quality::FixedState::with_seed(0).hash_one(json),
        );
        if let Some(chunk) = cache.chunks.get(&key) {
            raw.extend_from_slice(chunk);
            continue;
        }
        let mut one = Vec::new();
        let v: Value = serde_json::from_slice(json).ok()?;
        encode::message(table, msg, &json!({"items": [v]}), &mut one).ok()?;
        let chunk = one.strip_prefix(empty.as_slice())?;
        raw.extend_from_slice(chunk);
        if cache.bytes + chunk.len() > ITEMS_BYTES {
            *cache = ItemCache::default();
        }
        cache.bytes += chunk.len();
        cache.chunks.insert(key, chunk.to_vec());
    }
    encode::envelope(&list.api_version, &list.kind, &raw, out);
    Some(())
}

/// A watch's JSON lines → frames, each as its line is complete.
fn watch(table: &'static Table, resp: Response, app: Arc<App>) -> Response {
    let (mut parts, body) = resp.into_parts();
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(WATCH_MEDIA_TYPE),
    );
    let mut pending = BytesMut::new();
    let frames = body.into_data_stream().map(move |chunk| {
        let chunk = chunk.map_err(std::io::Error::other)?;
        pending.extend_from_slice(&chunk);
        let mut out = Vec::new();
        while let Some(end) = pending.iter().position(|b| *b == b'\n') {
            let line = pending.split_to(end + 1);
            frame(table, &line[..end], &app.faults, &mut out);
        }
        Ok::<_, std::io::Error>(Bytes::from(out))
    });
    Response::from_parts(parts, Body::from_stream(frames))
}

/// One event line as a frame. A line that is not an event the table can encode (the
/// malformed-event fault) is framed as it is, so the client meets bytes it cannot decode
/// as a JSON client meets a line it cannot parse.
fn frame(table: &Table, line: &[u8], faults: &Faults, out: &mut Vec<u8>) {
    let event = serde_json::from_slice::<Value>(line).ok();
    let mut object = Vec::new();
    let encoded = event.as_ref().and_then(|e| {
        let event_type = e.get("type")?.as_str()?;
        encode::object_with(table, e.get("object")?, extra(faults), &mut object).ok()?;
        Some(event_type)
    });
    match encoded {
        Some(event_type) => encode::watch_frame(event_type, &object, out),
        None => {
            out.extend_from_slice(&(line.len() as u32).to_be_bytes());
            out.extend_from_slice(line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A field's tag and length-delimited value, as Go's generated marshallers write it.
    fn bytes(num: u32, b: &[u8]) -> Vec<u8> {
        let mut out = vec![(num << 3 | 2) as u8, b.len() as u8];
        out.extend_from_slice(b);
        out
    }

    fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        encode::envelope(api_version, kind, raw, &mut out);
        out
    }

    /// `body` sent in protobuf, as the handlers get it: JSON, or the Status refusing it.
    fn read(body: Vec<u8>) -> Result<Value, Value> {
        match json_body(MEDIA_TYPE, Bytes::from(body)) {
            Ok(json) => Ok(serde_json::from_slice(&json).expect("JSON")),
            Err(st) => Err(st.to_value()),
        }
    }

    #[test]
    fn a_configmap_as_kubectl_create_sends_it_is_its_go_json() {
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
        assert_eq!(
            read(envelope("v1", "ConfigMap", &raw)),
            Ok(json!({"kind": "ConfigMap", "apiVersion": "v1",
                "metadata": {"name": "app-config", "namespace": "default",
                    "creationTimestamp": null, "labels": {"app": "web"}},
                "data": {"a": "1", "b": "two"}}))
        );
    }

    /// Any kind of the table is read (a Deployment, a DeleteOptions as a typed client's
    /// DELETE sends it), not only the few kubectl's create subcommands send.
    #[test]
    fn every_kind_of_the_table_is_read() {
        let secret = [
            bytes(2, &[bytes(1, b"k"), bytes(2, &[0, 255])].concat()),
            bytes(3, b"Opaque"),
            vec![5 << 3, 1],
        ]
        .concat();
        let v = read(envelope("v1", "Secret", &secret)).expect("a Secret");
        assert_eq!(
            (&v["data"], &v["type"], &v["immutable"]),
            (&json!({"k": "AP8="}), &json!("Opaque"), &json!(true)),
            "{v}"
        );
        let d = json!({"kind": "Deployment", "apiVersion": "apps/v1",
            "metadata": {"name": "web", "creationTimestamp": null, "labels": {"app": "web"}},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"creationTimestamp": null, "labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "nginx", "image": "nginx", "resources": {}}]}},
                "strategy": {}},
            "status": {}});
        let table = table().expect("the table of 1.32");
        let mut pb = Vec::new();
        encode::object(table, &d, &mut pb).expect("encodes");
        assert_eq!(read(pb), Ok(d));
        let opts = [bytes(4, b"Orphan")].concat();
        let v = read(envelope("v1", "DeleteOptions", &opts)).expect("DeleteOptions");
        assert_eq!(v["propagationPolicy"], "Orphan", "{v}");
    }

    #[test]
    fn a_kind_the_table_lacks_is_415_and_an_unknown_field_400() {
        let st = read(envelope("stable.example.com/v1", "Widget", b"")).expect_err("415");
        assert_eq!(st["code"], 415, "{st}");
        assert_eq!(
            st["message"],
            "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml"
        );
        let st = read(envelope("v1", "ConfigMap", &bytes(15, b"x"))).expect_err("400");
        assert_eq!(st["code"], 400, "{st}");
        let message = st["message"].as_str().unwrap_or_default();
        assert!(message.contains("field 15 of"), "{st}");
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
            let st = read(body.to_vec()).expect_err("400");
            assert_eq!(st["code"], 400, "{body:?}: {st}");
        }
        let st = read(b"{}".to_vec()).expect_err("400");
        assert_eq!(
            st["message"],
            "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"
        );
    }

    #[test]
    fn json_bodies_pass_as_they_came() {
        let body = Bytes::from_static(b"{\"kind\":\"ConfigMap\"}");
        let out = json_body("application/json; charset=utf-8", body.clone());
        assert_eq!(out.ok(), Some(body));
    }

    /// A list put together from cached items is byte for byte the list encoded whole, the
    /// first time (items encoded) and the second (items from the cache).
    #[test]
    fn a_list_from_cached_items_is_the_list_encoded_whole() {
        let table = table().expect("the simulator's table");
        let pod = |name: &str, rv: &str| {
            json!({"metadata": {"name": name, "namespace": "default", "resourceVersion": rv,
                                "labels": {"app": "web"}},
                   "spec": {"containers": [{"name": "c", "image": "nginx"}]},
                   "status": {"phase": "Running"}})
        };
        let whole = json!({"kind": "PodList", "apiVersion": "v1",
                           "metadata": {"resourceVersion": "9", "continue": "x"},
                           "items": [pod("a", "5"), pod("b", "6"), pod("a", "5")]});
        let mut want = Vec::new();
        encode::object(table, &whole, &mut want).expect("encodes");
        for _ in 0..2 {
            let mut got = Vec::new();
            assert_eq!(
                list(table, whole.to_string().as_bytes(), &mut got),
                Some(())
            );
            assert_eq!(got, want);
        }
        let mut got = Vec::new();
        let no_list = json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "a"}});
        assert_eq!(list(table, no_list.to_string().as_bytes(), &mut got), None);
    }
}
