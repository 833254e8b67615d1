//! The envelope (`k8s\0` + runtime.Unknown): an object's and a watch frame's bytes turned
//! into the apiserver's JSON. A list's: `list.rs`.

use super::decode::{self, bytes_of, next_field, Omit, Val, Writer};
use super::error::DecodeError;
use super::table::Table;

/// The 4 bytes before every envelope.
pub const MAGIC: &[u8; 4] = b"k8s\0";

/// A `runtime.Unknown`: what an object's or list's bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Envelope<'a> {
    pub api_version: &'a str,
    pub kind: &'a str,
    /// The message's own bytes.
    pub raw: &'a [u8],
    pub content_encoding: &'a str,
    pub content_type: &'a str,
}

fn text<'a>(data: &'a [u8], v: Val, what: &str) -> Result<&'a str, DecodeError> {
    let b = bytes_of(data, v).ok_or_else(|| decode::malformed(what))?;
    std::str::from_utf8(b).map_err(|_| decode::malformed(what))
}

/// Reads the envelope of an object's or a list's bytes (`k8s\0` + runtime.Unknown).
pub fn envelope(bytes: &[u8]) -> Result<Envelope<'_>, DecodeError> {
    let data = bytes
        .strip_prefix(MAGIC)
        .ok_or_else(|| decode::malformed("no k8s\\0 before the envelope"))?;
    let mut env = Envelope {
        api_version: "",
        kind: "",
        raw: &[],
        content_encoding: "",
        content_type: "",
    };
    let mut i = 0;
    while i < data.len() {
        match next_field(data, &mut i)? {
            (1, v) => {
                let tm = bytes_of(data, v).ok_or_else(|| decode::malformed("typeMeta"))?;
                (env.api_version, env.kind) = type_meta(tm)?;
            }
            (2, v) => env.raw = bytes_of(data, v).ok_or_else(|| decode::malformed("raw"))?,
            (3, v) => env.content_encoding = text(data, v, "contentEncoding")?,
            (4, v) => env.content_type = text(data, v, "contentType")?,
            (n, _) => return Err(unknown_envelope_field("Unknown", n)),
        }
    }
    if !env.content_encoding.is_empty() {
        return Err(DecodeError::Malformed(format!(
            "an envelope of content encoding {:?}",
            env.content_encoding
        )));
    }
    Ok(env)
}

/// A TypeMeta's apiVersion and kind (the envelope's field 1).
pub(super) fn type_meta(tm: &[u8]) -> Result<(&str, &str), DecodeError> {
    let (mut api_version, mut kind) = ("", "");
    let mut j = 0;
    while j < tm.len() {
        match next_field(tm, &mut j)? {
            (1, v) => api_version = text(tm, v, "apiVersion")?,
            (2, v) => kind = text(tm, v, "kind")?,
            (n, _) => return Err(unknown_envelope_field("TypeMeta", n)),
        }
    }
    Ok((api_version, kind))
}

/// A field the envelope's fixed messages (runtime.Unknown, its TypeMeta, a watch event's
/// RawExtension) do not have: these never change, so the bytes are not Kubernetes'.
pub(super) fn unknown_envelope_field(message: &str, field: u64) -> DecodeError {
    DecodeError::Malformed(format!(
        "field {field} in a runtime.{message}, which has none"
    ))
}

impl Table {
    fn kind_of(&self, env: &Envelope) -> Result<u32, DecodeError> {
        self.kind(env.api_version, env.kind)
            .ok_or_else(|| DecodeError::UnknownKind {
                api_version: env.api_version.to_owned(),
                kind: env.kind.to_owned(),
                minor: self.minor,
            })
    }
}

/// Appends the JSON of an object's bytes (`k8s\0` + envelope) to `out`: with `kind` and
/// `apiVersion` from the envelope, as the apiserver writes a single object.
pub fn object(table: &Table, bytes: &[u8], out: &mut Vec<u8>) -> Result<(), DecodeError> {
    object_omitting(table, bytes, Omit::default(), out)
}

/// [`object`], written without what `omit` names.
pub fn object_omitting(
    table: &Table,
    bytes: &[u8],
    omit: Omit,
    out: &mut Vec<u8>,
) -> Result<(), DecodeError> {
    let env = envelope(bytes)?;
    let msg = table.kind_of(&env)?;
    Writer::new(table)
        .omit(omit)
        .object(msg, env.raw, Some((env.api_version, env.kind)), out)
}

/// Appends the JSON of message `msg` of `raw` (no envelope, no kind and apiVersion).
pub fn message(table: &Table, msg: u32, raw: &[u8], out: &mut Vec<u8>) -> Result<(), DecodeError> {
    Writer::new(table).object(msg, raw, None, out)
}

/// The first frame of a protobuf watch stream: `Some((frame, bytes consumed))`, or `None`
/// while `buf` holds less than a whole frame.
pub fn frame(buf: &[u8]) -> Option<(&[u8], usize)> {
    let len = u32::from_be_bytes(buf.get(..4)?.try_into().ok()?) as usize;
    let end = 4usize.checked_add(len)?;
    Some((buf.get(4..end)?, end))
}

/// One event of a watch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchEvent {
    /// ADDED, MODIFIED, DELETED, BOOKMARK or ERROR.
    pub event_type: String,
    /// The object's JSON, with kind and apiVersion (a `Status` for ERROR).
    pub object: Vec<u8>,
}

/// Reads one frame of a watch stream (a `metav1.WatchEvent`, no envelope).
pub fn watch_event(table: &Table, frame: &[u8]) -> Result<WatchEvent, DecodeError> {
    watch_event_omitting(table, frame, Omit::default())
}

/// [`watch_event`], its object written without what `omit` names.
pub fn watch_event_omitting(
    table: &Table,
    frame: &[u8],
    omit: Omit,
) -> Result<WatchEvent, DecodeError> {
    let (mut event_type, mut raw) = (None, None);
    let mut i = 0;
    while i < frame.len() {
        match next_field(frame, &mut i)? {
            (1, v) => event_type = Some(text(frame, v, "type")?),
            (2, v) => {
                let ext = bytes_of(frame, v).ok_or_else(|| decode::malformed("object"))?;
                let mut j = 0;
                while j < ext.len() {
                    match next_field(ext, &mut j)? {
                        (1, v) => raw = bytes_of(ext, v),
                        (n, _) => return Err(unknown_envelope_field("RawExtension", n)),
                    }
                }
            }
            (n, _) => {
                return Err(DecodeError::UnknownField {
                    message: "k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent".into(),
                    field: n,
                    minor: table.minor,
                })
            }
        }
    }
    let event_type = event_type.ok_or_else(|| decode::malformed("a watch event without a type"))?;
    let raw = raw.ok_or_else(|| decode::malformed("a watch event without an object"))?;
    let mut object = Vec::new();
    object_omitting(table, raw, omit, &mut object)?;
    Ok(WatchEvent {
        event_type: event_type.to_owned(),
        object,
    })
}
