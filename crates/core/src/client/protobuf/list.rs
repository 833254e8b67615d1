//! A list's bytes read as they arrive ([`ListReader`]): `k8s\0`, then the envelope's
//! fields (runtime.Unknown: 1 typeMeta, 2 raw, 3 contentEncoding, 4 contentType), `raw`
//! being the `…List` message (1 ListMeta, 2 each item). Each item is decoded as soon as its
//! bytes are all in, so that a list of 100k objects is never held whole: what is buffered
//! is at most the item being received and the chunk that brought its end. A list held
//! whole: [`list`].

use super::decode::{self, malformed, Omit, Writer};
use super::envelope::{type_meta, unknown_envelope_field, MAGIC};
use super::error::DecodeError;
use super::table::{self, Table};

/// A list's own fields: what the list's JSON holds beside `items`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListHead {
    pub api_version: String,
    pub kind: String,
    /// The ListMeta as JSON (`{"resourceVersion":"…","continue":"…"}`).
    pub metadata: Vec<u8>,
}

/// Reads a list's bytes (`k8s\0` + envelope of a `…List`) held whole: calls `item` with
/// the JSON of each item in order (as the apiserver's JSON list holds them: no kind or
/// apiVersion but in a PartialObjectMetadataList), and returns the list's kind, apiVersion
/// and metadata. A body that arrives in chunks: [`ListReader`].
pub fn list(
    table: &Table,
    bytes: &[u8],
    mut item: impl FnMut(&[u8]),
) -> Result<ListHead, DecodeError> {
    let mut reader = ListReader::new(table);
    reader.feed(bytes, &mut item)?;
    reader.finish()
}

/// Where a [`ListReader`] is in the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Before the end of `k8s\0`.
    Magic,
    /// Among the envelope's fields, before or after `raw`.
    Envelope { raw_done: bool },
    /// Inside `raw` (the list message), `left` of its bytes still to come.
    List { left: usize },
}

/// The list message's two fields and their types.
#[derive(Debug, Clone, Copy)]
struct Shape {
    msg: u32,
    meta_num: u64,
    meta_ty: u32,
    items_num: u64,
    item_ty: u32,
    /// The TypeMeta kube-apiserver gives each item (a PartialObjectMetadataList's:
    /// `table::SERVED_TYPE_META`); a [`ListReader::typed`] list's items get the list's
    /// apiVersion and its kind without `List` instead.
    served_type_meta: Option<(&'static str, &'static str)>,
}

/// The incremental reader of a protobuf list (`k8s\0` + envelope of a `…List`).
pub struct ListReader<'t> {
    writer: Writer<'t>,
    stage: Stage,
    /// Bytes received and not yet consumed, from `at` on (compacted at each feed).
    buf: Vec<u8>,
    at: usize,
    api_version: String,
    kind: String,
    shape: Option<Shape>,
    /// The ListMeta as JSON, once read.
    metadata: Vec<u8>,
    /// The item being written (reused).
    item: Vec<u8>,
    /// Set by [`ListReader::typed`].
    typed: bool,
}

/// A field's header at the start of some bytes: its number, wire type, and for a
/// length-delimited field the header's length and the payload's.
struct Header {
    num: u64,
    wire_type: u64,
    len: usize,
    payload: usize,
}

/// A varint at `*i`, or `None` while `buf` ends inside it.
fn partial_varint(buf: &[u8], i: &mut usize) -> Result<Option<u64>, DecodeError> {
    let mut j = *i;
    match decode::varint(buf, &mut j) {
        Ok(v) => {
            *i = j;
            Ok(Some(v))
        }
        Err(_) if buf.len() - *i < 10 && buf[*i..].iter().all(|b| *b >= 0x80) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The header of the field at the start of `buf`, or `None` while `buf` ends inside it. A
/// field that is not length-delimited has no payload length (its number tells the caller
/// it is unknown: no field these messages have is a scalar).
fn header(buf: &[u8]) -> Result<Option<Header>, DecodeError> {
    let mut i = 0;
    let Some(tag) = partial_varint(buf, &mut i)? else {
        return Ok(None);
    };
    let (num, wire_type) = (tag >> 3, tag & 7);
    if wire_type != 2 {
        return Ok(Some(Header {
            num,
            wire_type,
            len: i,
            payload: 0,
        }));
    }
    let Some(payload) = partial_varint(buf, &mut i)? else {
        return Ok(None);
    };
    let payload = usize::try_from(payload).map_err(|_| malformed("a length"))?;
    Ok(Some(Header {
        num,
        wire_type,
        len: i,
        payload,
    }))
}

impl<'t> ListReader<'t> {
    pub fn new(table: &'t Table) -> Self {
        ListReader {
            writer: Writer::new(table),
            stage: Stage::Magic,
            buf: Vec::new(),
            at: 0,
            api_version: String::new(),
            kind: String::new(),
            shape: None,
            metadata: Vec::new(),
            item: Vec::new(),
            typed: false,
        }
    }

    /// Each item is written without what `omit` names.
    pub fn omit(mut self, omit: Omit) -> Self {
        self.writer = self.writer.omit(omit);
        self
    }

    /// Each item begins with `kind` and `apiVersion`, the list's kind without `List` and
    /// its apiVersion, as client-go's decoder sets them from a typed list's type (and
    /// [`crate::cache::object::TypeMeta`] does for a JSON list's items), written in place.
    pub fn typed(mut self) -> Self {
        self.typed = true;
        self
    }

    /// Takes the next bytes of the body: `item` is called with the JSON of each item whose
    /// bytes are now complete, in order (as the apiserver's JSON list holds them).
    pub fn feed(&mut self, chunk: &[u8], item: &mut impl FnMut(&[u8])) -> Result<(), DecodeError> {
        self.buf.drain(..self.at);
        self.at = 0;
        self.buf.extend_from_slice(chunk);
        while self.step(item)? {}
        Ok(())
    }

    /// The list's kind, apiVersion and metadata, once the body has ended.
    pub fn finish(mut self) -> Result<ListHead, DecodeError> {
        if self.stage != (Stage::Envelope { raw_done: true }) || self.at != self.buf.len() {
            return Err(malformed("the list's bytes end early"));
        }
        let shape = self
            .shape
            .ok_or_else(|| malformed("a list without its type"))?;
        if self.metadata.is_empty() {
            self.writer
                .object(shape.meta_ty, &[], None, &mut self.metadata)?;
        }
        Ok(ListHead {
            api_version: self.api_version,
            kind: self.kind,
            metadata: self.metadata,
        })
    }

    /// Consumes what `buf` holds of the next piece: whether it took one.
    fn step(&mut self, item: &mut impl FnMut(&[u8])) -> Result<bool, DecodeError> {
        let rest = &self.buf[self.at..];
        match self.stage {
            Stage::Magic => {
                if rest.len() < MAGIC.len() {
                    return Ok(false);
                }
                if &rest[..MAGIC.len()] != MAGIC {
                    return Err(malformed("no k8s\\0 before the envelope"));
                }
                self.at += MAGIC.len();
                self.stage = Stage::Envelope { raw_done: false };
                Ok(true)
            }
            Stage::Envelope { raw_done } => {
                let Some(h) = header(rest)? else {
                    return Ok(false);
                };
                if h.wire_type != 2 || !(1..=4).contains(&h.num) {
                    return Err(unknown_envelope_field("Unknown", h.num));
                }
                if h.num == 2 {
                    if raw_done {
                        return Err(malformed("two lists in one envelope"));
                    }
                    self.shape = Some(self.shape_of()?);
                    self.at += h.len;
                    self.stage = Stage::List { left: h.payload };
                    return Ok(true);
                }
                let Some(payload) = rest.get(h.len..h.len + h.payload) else {
                    return Ok(false);
                };
                match h.num {
                    1 => {
                        let (api_version, kind) = type_meta(payload)?;
                        (self.api_version, self.kind) = (api_version.to_owned(), kind.to_owned());
                    }
                    3 if !payload.is_empty() => {
                        return Err(DecodeError::Malformed(format!(
                            "an envelope of content encoding {:?}",
                            String::from_utf8_lossy(payload)
                        )))
                    }
                    _ => {}
                }
                self.at += h.len + h.payload;
                Ok(true)
            }
            Stage::List { left: 0 } => {
                self.stage = Stage::Envelope { raw_done: true };
                Ok(true)
            }
            Stage::List { left } => self.list_field(left, item),
        }
    }

    /// The list message's next field, if `buf` holds all of it.
    fn list_field(
        &mut self,
        left: usize,
        item: &mut impl FnMut(&[u8]),
    ) -> Result<bool, DecodeError> {
        let rest = &self.buf[self.at..];
        let shape = self
            .shape
            .ok_or_else(|| malformed("a list without its type"))?;
        let Some(h) = header(&rest[..rest.len().min(left)])? else {
            if rest.len() >= left {
                return Err(malformed("a list's field runs past its end"));
            }
            return Ok(false);
        };
        if h.num != shape.meta_num && h.num != shape.items_num || h.wire_type != 2 {
            return Err(DecodeError::UnknownField {
                message: self.writer.table.messages[shape.msg as usize].name.clone(),
                field: h.num,
                minor: self.writer.table.minor,
            });
        }
        let whole = h.len + h.payload;
        if whole > left {
            return Err(malformed("a list's field runs past its end"));
        }
        let Some(payload) = rest.get(h.len..whole) else {
            return Ok(false);
        };
        if h.num == shape.meta_num {
            self.metadata.clear();
            self.writer
                .object(shape.meta_ty, payload, None, &mut self.metadata)?;
        } else {
            self.item.clear();
            let item_kind = self.kind.strip_suffix("List").unwrap_or(&self.kind);
            let type_meta = if self.typed {
                Some((self.api_version.as_str(), item_kind))
            } else {
                shape.served_type_meta
            };
            self.writer
                .object(shape.item_ty, payload, type_meta, &mut self.item)?;
            item(&self.item);
        }
        self.at += whole;
        self.stage = Stage::List { left: left - whole };
        Ok(true)
    }

    /// The list message named by the envelope's type, and its metadata and items fields.
    fn shape_of(&self) -> Result<Shape, DecodeError> {
        let table = self.writer.table;
        let msg =
            table
                .kind(&self.api_version, &self.kind)
                .ok_or_else(|| DecodeError::UnknownKind {
                    api_version: self.api_version.clone(),
                    kind: self.kind.clone(),
                    minor: table.minor,
                })?;
        let m = &table.messages[msg as usize];
        let field = |name: &str| {
            let key = format!("\"{name}\":");
            m.fields.iter().find(|f| &*f.key == key.as_bytes())
        };
        let not_a_list = || DecodeError::Malformed(format!("{} is not a list", m.name));
        let (Some(meta), Some(items)) = (field("metadata"), field("items")) else {
            return Err(not_a_list());
        };
        let (table::Ty::Msg(meta_ty), table::Ty::Msg(item_ty)) = (meta.ty, items.ty) else {
            return Err(not_a_list());
        };
        Ok(Shape {
            msg,
            meta_num: u64::from(meta.num),
            meta_ty,
            items_num: u64::from(items.num),
            item_ty,
            served_type_meta: items.served_type_meta,
        })
    }
}
