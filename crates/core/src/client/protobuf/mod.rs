//! Kubernetes' protobuf wire (`application/vnd.kubernetes.protobuf`) → the apiserver's
//! JSON bytes, so that nothing downstream of the reflector can tell which wire an object
//! came over.
//!
//! What is written is what Go's encoding/json writes for the Go struct: fields in Go
//! order, `omitempty` by Go kind (a struct is never omitted; a nil pointer is omitted or
//! `null`; a nil slice or map is `null` unless omitempty), map keys sorted, `[]byte` as
//! base64, HTML characters escaped in strings, and the custom marshalers of Time,
//! MicroTime, Duration, IntOrString, Quantity, RawExtension, FieldsV1 and apiextensions'
//! JSON and JSONSchemaPropsOr*. The rules come from tables generated from k8s.io/api's
//! `generated.proto` and Go structs, one per minor (`table.rs`,
//! `tools/gen_proto_tables.py`), not from code per kind.
//!
//! TypeMeta is on the wire only in the envelope: the top-level object's `kind` and
//! `apiVersion` come from there, and an embedded object gets them only where
//! kube-apiserver's conversions set them (`table::SERVED_TYPE_META`: a StatefulSet's
//! volumeClaimTemplates, a PartialObjectMetadataList's items).
//!
//! A field number the table does not know is an error naming the message and field,
//! never data dropped: the caller falls back to JSON for that resource.
//!
//! The wire, as kube-apiserver writes it:
//! - an object or a list: `k8s\0` + `runtime.Unknown{typeMeta{apiVersion, kind}, raw,
//!   contentEncoding, contentType}`, `raw` the message's own bytes ([`object`]; a list
//!   item by item as its bytes arrive, [`ListReader`]);
//! - a watch (`;stream=watch`): frames of a 4-byte big-endian length and a
//!   `metav1.WatchEvent{type, object: RawExtension{raw}}` (no envelope of its own), whose
//!   `raw` is an envelope as above ([`frame`], [`watch_event`]).
//!
//! Its files, each importing only those listed after it: `list.rs` (a list, as it
//! arrives or whole), `envelope.rs` (objects and watch frames), `decode.rs` (one
//! message's walk), `table.rs` (the generated tables), `json.rs` (values as Go writes
//! them), `error.rs`. Imports nothing of the crate: a foundation under `client/`.

mod decode;
mod envelope;
mod error;
#[cfg(test)]
mod genuine;
mod json;
mod list;
pub mod table;
#[cfg(test)]
mod tests;

pub use decode::Omit;
pub use envelope::{
    envelope, frame, message, object, object_omitting, watch_event, watch_event_omitting, Envelope,
    WatchEvent, MAGIC,
};
pub use error::{DecodeError, TableError};
pub use json::compact;
pub use list::{list, ListHead, ListReader};
pub use table::{minors, Table};
