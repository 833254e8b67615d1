//! Answers in Kubernetes' protobuf (`Accept: application/vnd.kubernetes.protobuf[, …]`)
//! for the built-in kinds, as kube-apiserver gives them to kube-controller-manager and
//! typed clients: the handlers write JSON, and this layer re-encodes it with the table of
//! the simulator's minor (`client::protobuf::encode`, byte for byte what gogo-protobuf
//! writes). Objects, lists and Status errors become an envelope (`k8s\0` +
//! runtime.Unknown); a watch (`;stream=watch`) becomes length-prefixed WatchEvent frames,
//! line by line as the JSON stream is written, bookmarks and ERROR events included.
//!
//! A custom resource, a Table, and anything the table cannot encode stay JSON (the
//! apiserver serves custom resources only in JSON; a client follows the Content-Type).
//!
//! `POST /_sim/unknown-field` makes the next answers carry a field numbered
//! [`UNKNOWN_FIELD`] in their message (a list's, or a watch event's object), as a newer
//! server's type would: a client's table does not know it.

use axum::body::Body;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use bytes::{Bytes, BytesMut};
use futures::StreamExt;
use serde_json::Value;
use std::sync::Arc;

use super::control::Faults;
use super::resources::ResourceDef;
use super::status::Status;
use super::storage::normalize;
use super::App;
use crate::client::protobuf::{encode, Table};

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

/// The minor of the simulator's /version (`super::discovery`): the table it encodes with.
const MINOR: u32 = 32;

const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";
const WATCH_MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf;stream=watch";

fn table() -> Option<&'static Table> {
    Table::for_minor(MINOR).and_then(Result::ok)
}

fn is_json(resp: &Response) -> bool {
    resp.headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"))
}

/// A built-in object written through the API as kube-apiserver stores it: decoded into its
/// Go type and encoded again, so that its JSON is what Go writes (field order, a struct
/// without `omitempty` written whole: an HPA created without `status` has
/// `"status":{"desiredReplicas":0,"currentMetrics":null}`) and its protobuf decodes to
/// the same JSON. Through the table both ways; a custom resource, or JSON the table cannot
/// encode, is left as it is.
pub fn as_stored(def: &ResourceDef, v: Value) -> Value {
    let v = normalize(def, v);
    let Some(table) = table().filter(|_| !def.custom) else {
        return v;
    };
    let mut pb = Vec::new();
    let mut json = Vec::new();
    if encode::object(table, &v, &mut pb).is_err()
        || crate::client::protobuf::object(table, &pb, &mut json).is_err()
    {
        return v;
    }
    serde_json::from_slice(&json).unwrap_or(v)
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
    let encoded = serde_json::from_slice::<Value>(&bytes)
        .ok()
        .is_some_and(|v| encode::object_with(table, &v, extra(&app.faults), &mut out).is_ok());
    if !encoded {
        return Response::from_parts(parts, Body::from(bytes));
    }
    parts.headers.remove(header::CONTENT_LENGTH);
    parts
        .headers
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(MEDIA_TYPE));
    Response::from_parts(parts, Body::from(out))
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
