//! The tables `tools/gen_proto_tables.py` writes (`tables/v1.MINOR.json`), read once per
//! minor: every message of k8s.io/api, metav1, runtime, intstr, resource and
//! apiextensions, its fields in Go order with their wire numbers and JSON rules, and the
//! kinds an envelope may name.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::Value;

use super::error::{DecodeError, TableError};

/// The minors with a table, and its text. A server of another minor is the caller's
/// choice to make (the nearest table, or JSON).
const TABLES: [(u32, &str); 6] = [
    (32, include_str!("tables/v1.32.json")),
    (33, include_str!("tables/v1.33.json")),
    (34, include_str!("tables/v1.34.json")),
    (35, include_str!("tables/v1.35.json")),
    (36, include_str!("tables/v1.36.json")),
    (37, include_str!("tables/v1.37.json")),
];

/// Embedded objects that kube-apiserver serves with their TypeMeta set, although the
/// protobuf wire cannot carry it (a TypeMeta is on the wire only in the envelope, for the
/// top-level object): (message, JSON name of the field) → (apiVersion, kind) of the field's
/// value, or of each of its elements. Every other field whose type has a TypeMeta is served
/// with it empty (a list's items, a webhook's or an Eviction's parts): the tests hold the
/// two lists to every table (`every_embedded_type_meta_is_either_served_or_left_empty`).
pub const SERVED_TYPE_META: &[(&str, &str, &str, &str)] = &[
    // kubernetes pkg/apis/apps/{v1,v1beta1,v1beta2}/conversion.go,
    // Convert_apps_StatefulSetSpec_To_*_StatefulSetSpec: "set APIVersion/Kind to behave the
    // same as reflective conversion < 1.17" (https://issue.k8s.io/87583), on every read.
    (
        "k8s.io.api.apps.v1.StatefulSetSpec",
        "volumeClaimTemplates",
        "v1",
        "PersistentVolumeClaim",
    ),
    (
        "k8s.io.api.apps.v1beta1.StatefulSetSpec",
        "volumeClaimTemplates",
        "v1",
        "PersistentVolumeClaim",
    ),
    (
        "k8s.io.api.apps.v1beta2.StatefulSetSpec",
        "volumeClaimTemplates",
        "v1",
        "PersistentVolumeClaim",
    ),
    // k8s.io/apiserver pkg/endpoints/handlers/response.go, asPartialObjectMetadataList:
    // `partial.GetObjectKind().SetGroupVersionKind(gvk)` for each item (a metadata
    // informer's list, `Accept: …;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1`).
    (
        "k8s.io.apimachinery.pkg.apis.meta.v1.PartialObjectMetadataList",
        "items",
        "meta.k8s.io/v1",
        "PartialObjectMetadata",
    ),
];

/// The message of every object's `metadata`.
const OBJECT_META: &str = "k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// The minors kwatch has a table for.
pub fn minors() -> impl Iterator<Item = u32> {
    TABLES.iter().map(|(m, _)| *m)
}

/// How a message is written as JSON: its fields (Go's encoding/json of the struct), or
/// one of the custom marshalers of apimachinery and apiextensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    Struct,
    /// A named slice type (`type ExtraValue []string`) wrapped in a message of `items`.
    Array,
    Time,
    MicroTime,
    Duration,
    FieldsV1,
    IntOrString,
    Quantity,
    RawExtension,
    /// apiextensions' JSON: raw bytes, `null` when empty.
    Json,
    SchemaOrArray,
    SchemaOrBool,
    SchemaOrStringArray,
}

/// A field's wire type as generated.proto declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    Str,
    Bytes,
    Bool,
    I32,
    I64,
    U32,
    U64,
    S32,
    S64,
    Fixed32,
    Fixed64,
    SFixed32,
    SFixed64,
    F32,
    F64,
    Msg(u32),
}

#[derive(Debug)]
pub struct Field {
    /// The JSON name (the Go field's name for an inline field).
    pub name: Box<str>,
    /// `"name":`, written before the value (empty for inline and TypeMeta fields).
    pub key: Box<[u8]>,
    pub num: u32,
    pub ty: Ty,
    /// A map's value type (`ty` is then the key's, always a string).
    pub map_value: Option<Ty>,
    pub repeated: bool,
    pub ptr: bool,
    pub omitempty: bool,
    /// An embedded struct: its fields are written into the enclosing object.
    pub inline: bool,
    /// `json:"-"`: on the wire, never written.
    pub skip: bool,
    /// The inline metav1.TypeMeta, which is not on the wire: kind and apiVersion come from
    /// the envelope for the top-level object, and from [`SERVED_TYPE_META`] for the
    /// embedded objects kube-apiserver sets them in.
    pub type_meta: bool,
    /// Not on the wire, the field writes nothing: `json:"-"`, or `omitempty` on a pointer,
    /// a slice, a map or a type whose zero value is empty (set once all messages are read).
    pub quiet: bool,
    /// An embedded object (or each element) that kube-apiserver serves with its TypeMeta
    /// set to this (apiVersion, kind): [`SERVED_TYPE_META`].
    pub served_type_meta: Option<(&'static str, &'static str)>,
}

#[derive(Debug)]
pub struct Message {
    pub name: String,
    pub special: Special,
    /// In Go order (JSON's order); for a special, in generated.proto's.
    pub fields: Vec<Field>,
    /// Field number → index in `fields`; `NONE` where the message has no such field.
    pub by_num: Vec<u16>,
    /// Indices of `fields` by ascending field number: the order gogo-protobuf writes.
    pub wire_order: Vec<u16>,
}

pub const NONE: u16 = u16::MAX;

impl Message {
    pub fn field(&self, num: u64) -> Option<usize> {
        let i = *self.by_num.get(usize::try_from(num).ok()?)?;
        (i != NONE).then_some(usize::from(i))
    }
}

/// One minor's table.
#[derive(Debug)]
pub struct Table {
    pub minor: u32,
    pub messages: Vec<Message>,
    kinds: HashMap<(String, String), u32>,
    /// ObjectMeta's message and the index of its `managedFields` among its fields, where
    /// `Omit::managed_fields` leaves it out.
    pub(super) managed_fields: Option<(u32, usize)>,
}

impl Table {
    /// The table of Kubernetes 1.`minor`, if kwatch has one.
    pub fn for_minor(minor: u32) -> Option<Result<&'static Table, DecodeError>> {
        static CELLS: [OnceLock<Result<Table, TableError>>; TABLES.len()] =
            [const { OnceLock::new() }; TABLES.len()];
        let i = TABLES.iter().position(|(m, _)| *m == minor)?;
        let table = CELLS[i].get_or_init(|| Table::parse(minor, TABLES[i].1));
        Some(
            table
                .as_ref()
                .map_err(|e| DecodeError::Table(minor, e.clone())),
        )
    }

    pub fn minor(&self) -> u32 {
        self.minor
    }

    /// The message of an apiVersion and kind (as an envelope names them).
    pub fn kind(&self, api_version: &str, kind: &str) -> Option<u32> {
        self.kinds
            .get(&(api_version.to_owned(), kind.to_owned()))
            .copied()
    }

    /// The message of a proto name (`k8s.io.api.core.v1.Pod`).
    pub fn message_index(&self, name: &str) -> Option<u32> {
        let i = self.messages.iter().position(|m| m.name == name)?;
        u32::try_from(i).ok()
    }

    fn parse(minor: u32, text: &str) -> Result<Table, TableError> {
        let doc: Value = serde_json::from_str(text).map_err(|e| TableError::Json(e.to_string()))?;
        let raw = doc["messages"]
            .as_array()
            .ok_or(TableError::Missing("no messages"))?;
        let mut messages = Vec::with_capacity(raw.len());
        for m in raw {
            let name = m[0]
                .as_str()
                .ok_or(TableError::Missing("a message without a name"))?;
            let special = match m[1].as_str().unwrap_or_default() {
                "struct" => Special::Struct,
                "array" => Special::Array,
                "time" => Special::Time,
                "microtime" => Special::MicroTime,
                "duration" => Special::Duration,
                "fieldsv1" => Special::FieldsV1,
                "intorstring" => Special::IntOrString,
                "quantity" => Special::Quantity,
                "rawextension" => Special::RawExtension,
                "json" => Special::Json,
                "schemaorarray" => Special::SchemaOrArray,
                "schemaorbool" => Special::SchemaOrBool,
                "schemaorstringarray" => Special::SchemaOrStringArray,
                other => {
                    return Err(TableError::UnknownSpecial {
                        message: name.to_owned(),
                        special: other.to_owned(),
                    })
                }
            };
            let mut fields = Vec::new();
            for f in m[2].as_array().ok_or(TableError::Missing("fields"))? {
                fields.push(parse_field(f).map_err(|e| TableError::Field {
                    message: name.to_owned(),
                    error: Box::new(e),
                })?);
            }
            let max = fields.iter().map(|f| f.num).max().unwrap_or(0) as usize;
            let mut by_num = vec![NONE; max + 1];
            for (i, f) in fields.iter().enumerate() {
                if f.num > 0 {
                    by_num[f.num as usize] = u16::try_from(i)?;
                }
            }
            let wire_order = by_num.iter().copied().filter(|i| *i != NONE).collect();
            messages.push(Message {
                name: name.to_owned(),
                special,
                fields,
                by_num,
                wire_order,
            });
        }
        let mut kinds = HashMap::new();
        for k in doc["kinds"]
            .as_array()
            .ok_or(TableError::Missing("no kinds"))?
        {
            let (Some(av), Some(kind), Some(i)) = (k[0].as_str(), k[1].as_str(), k[2].as_u64())
            else {
                return Err(TableError::BadKind(k.to_string()));
            };
            kinds.insert((av.to_owned(), kind.to_owned()), u32::try_from(i)?);
        }
        let managed_fields = messages
            .iter()
            .position(|m| m.name == OBJECT_META)
            .and_then(|i| {
                let m = &messages[i];
                let f = m.fields.iter().position(|f| &*f.name == "managedFields")?;
                Some((u32::try_from(i).ok()?, f))
            });
        let mut table = Table {
            minor,
            messages,
            kinds,
            managed_fields,
        };
        table.mark_quiet();
        table.mark_served_type_meta();
        Ok(table)
    }

    /// Sets each field's `quiet`.
    fn mark_quiet(&mut self) {
        let quiet: Vec<Vec<bool>> = (self.messages.iter())
            .map(|m| {
                (m.fields.iter())
                    .map(|f| {
                        f.skip
                            || !f.type_meta
                                && !f.inline
                                && f.omitempty
                                && (f.repeated
                                    || f.map_value.is_some()
                                    || f.ptr
                                    || self.zero_is_empty(f.ty))
                    })
                    .collect()
            })
            .collect();
        for (m, quiet) in self.messages.iter_mut().zip(quiet) {
            for (f, quiet) in m.fields.iter_mut().zip(quiet) {
                f.quiet = quiet;
            }
        }
    }

    /// Go's JSON of message `msg` (what Kubernetes' golden files hold, an object as a Go
    /// program builds it) turned into what kube-apiserver serves: the TypeMeta of
    /// [`SERVED_TYPE_META`] first in each embedded object it names, as the apiserver's
    /// conversions set it.
    pub fn serve_type_meta(&self, msg: u32, v: &mut Value) {
        let Some(m) = self.messages.get(msg as usize) else {
            return;
        };
        if m.special != Special::Struct {
            return;
        }
        for f in &m.fields {
            let Ty::Msg(inner) = f.map_value.unwrap_or(f.ty) else {
                continue;
            };
            if f.inline {
                self.serve_type_meta(inner, v);
                continue;
            }
            let Some(value) = v.get_mut(&*f.name) else {
                continue;
            };
            let each = |x: &mut Value| {
                if let (Some((api_version, kind)), Value::Object(o)) = (f.served_type_meta, &mut *x)
                {
                    o.shift_insert(0, "kind".into(), Value::from(kind));
                    o.shift_insert(1, "apiVersion".into(), Value::from(api_version));
                }
                self.serve_type_meta(inner, x);
            };
            match value {
                Value::Array(a) if f.repeated => a.iter_mut().for_each(each),
                Value::Object(o) if f.map_value.is_some() => o.values_mut().for_each(each),
                x => each(x),
            }
        }
    }

    /// Sets the fields of [`SERVED_TYPE_META`] (a message this minor lacks is skipped).
    fn mark_served_type_meta(&mut self) {
        for (message, field, api_version, kind) in SERVED_TYPE_META {
            let Some(m) = self.messages.iter_mut().find(|m| m.name == *message) else {
                continue;
            };
            if let Some(f) = m.fields.iter_mut().find(|f| &*f.name == *field) {
                f.served_type_meta = Some((api_version, kind));
            }
        }
    }

    /// Whether Go's zero value of a type is "empty" for `omitempty`: every scalar, a
    /// `[]byte` and a slice type; never a struct.
    pub fn zero_is_empty(&self, ty: Ty) -> bool {
        match ty {
            Ty::Msg(i) => self
                .messages
                .get(i as usize)
                .is_some_and(|m| m.special == Special::Array),
            _ => true,
        }
    }
}

fn parse_ty(v: &Value) -> Result<Ty, TableError> {
    if let Some(i) = v.as_u64() {
        return Ok(Ty::Msg(u32::try_from(i)?));
    }
    Ok(match v.as_str().unwrap_or_default() {
        "string" => Ty::Str,
        "bytes" => Ty::Bytes,
        "bool" => Ty::Bool,
        "int32" => Ty::I32,
        "int64" => Ty::I64,
        "uint32" => Ty::U32,
        "uint64" => Ty::U64,
        "sint32" => Ty::S32,
        "sint64" => Ty::S64,
        "fixed32" => Ty::Fixed32,
        "fixed64" => Ty::Fixed64,
        "sfixed32" => Ty::SFixed32,
        "sfixed64" => Ty::SFixed64,
        "float" => Ty::F32,
        "double" => Ty::F64,
        other => return Err(TableError::UnknownType(other.to_owned())),
    })
}

fn parse_field(f: &Value) -> Result<Field, TableError> {
    let name = f[0]
        .as_str()
        .ok_or(TableError::Missing("a field without a name"))?;
    let num = f[1]
        .as_u64()
        .ok_or(TableError::Missing("a field without a number"))?;
    let flags = f[3]
        .as_str()
        .ok_or(TableError::Missing("a field without flags"))?;
    let map = flags.contains('m');
    let (ty, map_value) = if map {
        (Ty::Str, Some(parse_ty(&f[4])?))
    } else {
        (parse_ty(&f[2])?, None)
    };
    let inline = flags.contains('i');
    let type_meta = flags.contains('t');
    let key = if inline || type_meta {
        Vec::new()
    } else {
        let mut k = Vec::with_capacity(name.len() + 3);
        super::json::string(&mut k, name.as_bytes());
        k.push(b':');
        k
    };
    Ok(Field {
        name: name.into(),
        key: key.into_boxed_slice(),
        num: u32::try_from(num)?,
        ty,
        map_value,
        repeated: flags.contains('r'),
        ptr: flags.contains('p'),
        omitempty: flags.contains('o'),
        inline,
        skip: flags.contains('x'),
        type_meta,
        quiet: false,
        served_type_meta: None,
    })
}
