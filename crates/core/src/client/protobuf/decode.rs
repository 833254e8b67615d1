//! The walk: one message's wire bytes → its JSON, fields in Go order, with encoding/json's
//! rules for nil, empty and `omitempty`, and the custom marshalers.

use super::error::DecodeError;
use super::json;
use super::table::{Field, Message, Special, Table, Ty};

/// What the converter leaves out of the objects it writes, for a run that never reads it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Omit {
    /// The top-level object's `metadata.managedFields` (often half a Pod's bytes): its
    /// bytes are stepped over, not decoded, and the object is written as the apiserver's
    /// JSON with that member cut out, as client-go users strip it with a
    /// `cache.TransformFunc`. Embedded objects (a template's metadata) keep theirs.
    pub managed_fields: bool,
}

/// One field occurrence on the wire, in the message's bytes.
#[derive(Debug, Clone, Copy)]
struct Occ {
    /// Index of the field in its message's `fields`.
    idx: u16,
    val: Val,
}

#[derive(Debug, Clone, Copy)]
pub(super) enum Val {
    Varint(u64),
    Fixed64(u64),
    Fixed32(u32),
    /// A length-delimited value: `start..end` of the message's bytes.
    Bytes(u32, u32),
}

/// What a special's bytes hold: `single[n]` the last value of field `n`, and the elements
/// of its repeated field.
struct SpecialFields {
    single: [Option<Val>; 4],
    repeated: Vec<Val>,
}

/// A map entry: its key and its value (`None`: not on the wire), placed in the bytes of
/// the message that holds the map.
#[derive(Debug, Clone, Copy)]
struct Entry {
    key: Val,
    value: Option<Val>,
}

impl Entry {
    fn key<'d>(&self, data: &'d [u8]) -> &'d [u8] {
        bytes_of(data, self.key).unwrap_or_default()
    }
}

/// A value read from bytes that start at `at` of the message, placed in the message.
fn shifted(v: Val, at: u32) -> Val {
    match v {
        Val::Bytes(s, e) => Val::Bytes(at + s, at + e),
        v => v,
    }
}

/// Reads one varint at `*i`.
#[inline(always)]
pub(super) fn varint(data: &[u8], i: &mut usize) -> Result<u64, DecodeError> {
    // Most varints (tags, lengths, small numbers) are one byte.
    if let Some(&b) = data.get(*i) {
        if b < 0x80 {
            *i += 1;
            return Ok(u64::from(b));
        }
    }
    long_varint(data, i)
}

#[inline(never)]
fn long_varint(data: &[u8], i: &mut usize) -> Result<u64, DecodeError> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *data
            .get(*i)
            .ok_or_else(|| malformed("a varint runs past the end"))?;
        *i += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Ok(v);
        }
    }
    Err(malformed("a varint longer than 10 bytes"))
}

pub(super) fn malformed(what: &str) -> DecodeError {
    DecodeError::Malformed(what.to_owned())
}

/// Reads the field at `*i`: its number and value. Inlined: it runs once per field of
/// every message, and a call returning its `Result` through memory doubled its cost.
#[inline(always)]
pub(super) fn next_field(data: &[u8], i: &mut usize) -> Result<(u64, Val), DecodeError> {
    let tag = varint(data, i)?;
    let val = match tag & 7 {
        0 => Val::Varint(varint(data, i)?),
        1 => {
            let b = data
                .get(*i..*i + 8)
                .ok_or_else(|| malformed("a fixed64 runs past the end"))?;
            *i += 8;
            Val::Fixed64(u64::from_le_bytes(
                b.try_into().map_err(|_| malformed("fixed64"))?,
            ))
        }
        2 => {
            let len = varint(data, i)?;
            let start = *i;
            if len > (data.len() - start) as u64 {
                return Err(malformed("a length runs past the end"));
            }
            let end = start + len as usize;
            *i = end;
            // start <= end, which fits.
            let end = offset(end)?;
            Val::Bytes(start as u32, end)
        }
        5 => {
            let b = data
                .get(*i..*i + 4)
                .ok_or_else(|| malformed("a fixed32 runs past the end"))?;
            *i += 4;
            Val::Fixed32(u32::from_le_bytes(
                b.try_into().map_err(|_| malformed("fixed32"))?,
            ))
        }
        w => return Err(DecodeError::Malformed(format!("wire type {w}"))),
    };
    Ok((tag >> 3, val))
}

fn offset(i: usize) -> Result<u32, DecodeError> {
    u32::try_from(i).map_err(|_| malformed("a message over 4 GiB"))
}

/// The bytes of a length-delimited value.
pub(super) fn bytes_of(data: &[u8], val: Val) -> Option<&[u8]> {
    match val {
        Val::Bytes(s, e) => data.get(s as usize..e as usize),
        _ => None,
    }
}

/// Writes messages of one table; keeps one scratch vector of occurrences for the whole
/// object (each message uses the top of it while it is written).
pub(super) struct Writer<'t> {
    pub table: &'t Table,
    scratch: Vec<Occ>,
    /// The entries of the maps being written, each map's on top of its enclosing one's.
    entries: Vec<Entry>,
    /// Messages open on the way down, at most `MAX_DEPTH`: recursive types (a CRD's
    /// schema) are nested by the data, and the walk recurses on the thread's stack.
    depth: u32,
    /// ObjectMeta's message and its `managedFields` field, left out of the top-level
    /// object's `metadata` ([`Omit::managed_fields`]).
    cut_managed_fields: Option<(u32, usize)>,
}

const MAX_DEPTH: u32 = 256;

/// apiVersion and kind of the object being written: the top-level object's from its
/// envelope, an embedded object's where kube-apiserver sets them.
pub(super) type TypeMeta<'a> = Option<(&'a str, &'a str)>;

impl<'t> Writer<'t> {
    pub fn new(table: &'t Table) -> Self {
        Writer {
            table,
            scratch: Vec::new(),
            entries: Vec::new(),
            depth: 0,
            cut_managed_fields: None,
        }
    }

    /// Leaves out what `omit` names from every object this writer writes.
    pub fn omit(mut self, omit: Omit) -> Self {
        self.cut_managed_fields = self.table.managed_fields.filter(|_| omit.managed_fields);
        self
    }

    fn msg(&self, i: u32) -> &'t Message {
        &self.table.messages[i as usize]
    }

    fn wrong_type(&self, m: &Message, f: &Field) -> DecodeError {
        DecodeError::Malformed(format!("{} field {}: wrong wire type", m.name, f.num))
    }

    /// The index of `m`'s field `num`; a number this table does not know is an error.
    fn field_index(&self, m: &Message, num: u64) -> Result<usize, DecodeError> {
        m.field(num).ok_or_else(|| DecodeError::UnknownField {
            message: m.name.clone(),
            field: num,
            minor: self.table.minor,
        })
    }

    /// Writes message `msg` of `data` as its JSON value.
    pub fn object(
        &mut self,
        msg: u32,
        data: &[u8],
        top: TypeMeta,
        out: &mut Vec<u8>,
    ) -> Result<(), DecodeError> {
        if self.depth == MAX_DEPTH {
            return Err(DecodeError::Malformed(format!(
                "messages nested deeper than {MAX_DEPTH}"
            )));
        }
        self.depth += 1;
        let m = self.msg(msg);
        let result = if m.special != Special::Struct {
            self.special(m, data, out)
        } else {
            out.push(b'{');
            let mut first = true;
            let r = self.fields(m, data, top, out, &mut first);
            out.push(b'}');
            r
        };
        self.depth -= 1;
        result
    }

    /// Collects `data`'s occurrences on the scratch, sorted by field then wire order;
    /// returns where they start.
    fn collect(&mut self, m: &Message, data: &[u8]) -> Result<usize, DecodeError> {
        let base = self.scratch.len();
        let mut i = 0;
        while i < data.len() {
            let (num, val) = next_field(data, &mut i)?;
            let idx = self.field_index(m, num)?;
            self.scratch.push(Occ {
                idx: idx as u16,
                val,
            });
        }
        // Pushed in wire order, which a stable sort keeps among a field's occurrences.
        // Fields often come in Go order already (gogo writes them by number).
        let occs = &mut self.scratch[base..];
        if !occs.is_sorted_by_key(|o| o.idx) {
            occs.sort_by_key(|o| o.idx);
        }
        Ok(base)
    }

    /// Writes the fields of a struct message into the object being written.
    fn fields(
        &mut self,
        m: &Message,
        data: &[u8],
        top: TypeMeta,
        out: &mut Vec<u8>,
        first: &mut bool,
    ) -> Result<(), DecodeError> {
        let base = self.collect(m, data)?;
        let end = self.scratch.len();
        let mut k = base;
        // The top-level object (depth 1) writes its `metadata` at depth 2: there its
        // managedFields are skipped when asked, their bytes never read (`collect` only
        // stepped over them). Go writes managedFields last of ObjectMeta's fields, so what
        // is written is the object's JSON with the member and its comma cut out.
        let cut = match self.cut_managed_fields {
            Some((msg, idx)) if self.depth == 2 && std::ptr::eq(m, self.msg(msg)) => idx,
            _ => usize::MAX,
        };
        let result = (|| {
            for (idx, f) in m.fields.iter().enumerate() {
                let start = k;
                while k < end && usize::from(self.scratch[k].idx) == idx {
                    k += 1;
                }
                if start == k && f.quiet || idx == cut {
                    continue;
                }
                self.field(m, f, data, start..k, top, out, first)?;
            }
            Ok(())
        })();
        self.scratch.truncate(base);
        result
    }

    #[allow(clippy::too_many_arguments)]
    fn field(
        &mut self,
        m: &Message,
        f: &Field,
        data: &[u8],
        occs: std::ops::Range<usize>,
        top: TypeMeta,
        out: &mut Vec<u8>,
        first: &mut bool,
    ) -> Result<(), DecodeError> {
        if f.skip {
            return Ok(());
        }
        if f.type_meta {
            if let Some((api_version, kind)) = top {
                for (key, v) in [("kind", kind), ("apiVersion", api_version)] {
                    if !v.is_empty() {
                        sep(out, first);
                        json::string(out, key.as_bytes());
                        out.push(b':');
                        json::string(out, v.as_bytes());
                    }
                }
            }
            return Ok(());
        }
        let last = occs.clone().last().map(|i| self.scratch[i].val);
        if f.inline {
            let Ty::Msg(inner) = f.ty else {
                return Err(self.wrong_type(m, f));
            };
            let bytes = match last {
                Some(v) => bytes_of(data, v).ok_or_else(|| self.wrong_type(m, f))?,
                None => &[],
            };
            let inner = self.msg(inner);
            return self.fields(inner, bytes, None, out, first);
        }
        if f.repeated || f.map_value.is_some() {
            if occs.is_empty() {
                // A nil slice or map.
                if !f.omitempty {
                    sep(out, first);
                    out.extend_from_slice(&f.key);
                    out.extend_from_slice(b"null");
                }
                return Ok(());
            }
            sep(out, first);
            out.extend_from_slice(&f.key);
            return match f.map_value {
                Some(value) => self.map(m, f, value, data, occs, out),
                None => self.list(m, f, data, occs, out),
            };
        }
        match last {
            None if f.ptr || f.omitempty && self.table.zero_is_empty(f.ty) => {
                if !f.omitempty {
                    sep(out, first);
                    out.extend_from_slice(&f.key);
                    out.extend_from_slice(b"null");
                }
                Ok(())
            }
            None => {
                sep(out, first);
                out.extend_from_slice(&f.key);
                self.zero(f.ty, out)
            }
            Some(v) => {
                if !f.ptr && f.omitempty && self.is_empty(f.ty, v) {
                    return Ok(());
                }
                sep(out, first);
                out.extend_from_slice(&f.key);
                self.value(m, f, f.ty, data, v, out)
            }
        }
    }

    /// Whether a present value is empty for `omitempty` (a value field, not a pointer).
    fn is_empty(&self, ty: Ty, v: Val) -> bool {
        match (ty, v) {
            // Only a slice type is empty: one with no items is a message of no bytes.
            (Ty::Msg(i), Val::Bytes(s, e)) => self.msg(i).special == Special::Array && s == e,
            (Ty::Msg(_), _) => false,
            (Ty::F64, Val::Fixed64(b)) => f64::from_bits(b) == 0.0,
            (Ty::F32, Val::Fixed32(b)) => f32::from_bits(b) == 0.0,
            (_, Val::Varint(x)) => x == 0,
            (_, Val::Fixed64(x)) => x == 0,
            (_, Val::Fixed32(x)) => x == 0,
            (_, Val::Bytes(s, e)) => s == e,
        }
    }

    /// Go's zero value of a value field that is not on the wire.
    fn zero(&mut self, ty: Ty, out: &mut Vec<u8>) -> Result<(), DecodeError> {
        match ty {
            Ty::Str => out.extend_from_slice(b"\"\""),
            Ty::Bytes => out.extend_from_slice(b"null"),
            Ty::Bool => out.extend_from_slice(b"false"),
            Ty::Msg(i) if self.msg(i).special == Special::Array => out.extend_from_slice(b"null"),
            Ty::Msg(i) => return self.object(i, &[], None, out),
            _ => out.push(b'0'),
        }
        Ok(())
    }

    /// Writes one value of type `ty`.
    fn value(
        &mut self,
        m: &Message,
        f: &Field,
        ty: Ty,
        data: &[u8],
        v: Val,
        out: &mut Vec<u8>,
    ) -> Result<(), DecodeError> {
        match (ty, v) {
            (Ty::Str, Val::Bytes(..)) => json::string(out, bytes_of(data, v).unwrap_or_default()),
            (Ty::Bytes, Val::Bytes(..)) => json::base64(out, bytes_of(data, v).unwrap_or_default()),
            // An embedded object's TypeMeta is not on the wire: written where kube-apiserver
            // sets it (table::SERVED_TYPE_META), else left empty as Go leaves it.
            (Ty::Msg(i), Val::Bytes(..)) => self.object(
                i,
                bytes_of(data, v).unwrap_or_default(),
                f.served_type_meta,
                out,
            )?,
            (Ty::Bool, Val::Varint(x)) => {
                out.extend_from_slice(if x != 0 { b"true" } else { b"false" })
            }
            (Ty::I32, Val::Varint(x)) => json::int(out, i64::from(x as i32)),
            (Ty::I64, Val::Varint(x)) => json::int(out, x as i64),
            (Ty::U32, Val::Varint(x)) => json::uint(out, u64::from(x as u32)),
            (Ty::U64, Val::Varint(x)) => json::uint(out, x),
            (Ty::S32, Val::Varint(x)) => {
                json::int(out, i64::from(((x >> 1) as i64 ^ -((x & 1) as i64)) as i32))
            }
            (Ty::S64, Val::Varint(x)) => json::int(out, (x >> 1) as i64 ^ -((x & 1) as i64)),
            (Ty::Fixed32, Val::Fixed32(x)) => json::uint(out, u64::from(x)),
            (Ty::SFixed32, Val::Fixed32(x)) => json::int(out, i64::from(x as i32)),
            (Ty::Fixed64, Val::Fixed64(x)) => json::uint(out, x),
            (Ty::SFixed64, Val::Fixed64(x)) => json::int(out, x as i64),
            (Ty::F64, Val::Fixed64(x)) => json::f64(out, f64::from_bits(x)),
            (Ty::F32, Val::Fixed32(x)) => json::f32(out, f32::from_bits(x)),
            _ => return Err(self.wrong_type(m, f)),
        }
        Ok(())
    }

    /// A repeated field's elements, packed or not, as a JSON array.
    fn list(
        &mut self,
        m: &Message,
        f: &Field,
        data: &[u8],
        occs: std::ops::Range<usize>,
        out: &mut Vec<u8>,
    ) -> Result<(), DecodeError> {
        out.push(b'[');
        let mut first = true;
        for i in occs {
            let v = self.scratch[i].val;
            let packed = !matches!(f.ty, Ty::Str | Ty::Bytes | Ty::Msg(_));
            match (packed, v) {
                (true, Val::Bytes(..)) => {
                    let inner = bytes_of(data, v).unwrap_or_default();
                    let mut j = 0;
                    while j < inner.len() {
                        let v = match f.ty {
                            Ty::F64 | Ty::Fixed64 | Ty::SFixed64 => {
                                let b = inner
                                    .get(j..j + 8)
                                    .ok_or_else(|| malformed("packed fixed64"))?;
                                j += 8;
                                Val::Fixed64(u64::from_le_bytes(
                                    b.try_into().map_err(|_| malformed("fixed64"))?,
                                ))
                            }
                            Ty::F32 | Ty::Fixed32 | Ty::SFixed32 => {
                                let b = inner
                                    .get(j..j + 4)
                                    .ok_or_else(|| malformed("packed fixed32"))?;
                                j += 4;
                                Val::Fixed32(u32::from_le_bytes(
                                    b.try_into().map_err(|_| malformed("fixed32"))?,
                                ))
                            }
                            _ => Val::Varint(varint(inner, &mut j)?),
                        };
                        sep(out, &mut first);
                        self.value(m, f, f.ty, inner, v, out)?;
                    }
                }
                _ => {
                    sep(out, &mut first);
                    self.value(m, f, f.ty, data, v, out)?;
                }
            }
        }
        out.push(b']');
        Ok(())
    }

    /// A map's entries, keys sorted as encoding/json sorts them (bytewise), the last of a
    /// repeated key winning as it does in a Go map.
    fn map(
        &mut self,
        m: &Message,
        f: &Field,
        value_ty: Ty,
        data: &[u8],
        occs: std::ops::Range<usize>,
        out: &mut Vec<u8>,
    ) -> Result<(), DecodeError> {
        let base = self.entries.len();
        let result = self
            .entries(m, f, data, occs)
            .and_then(|()| self.write_map(m, f, value_ty, data, base, out));
        self.entries.truncate(base);
        result
    }

    /// Pushes a map's entries on `entries`, sorted by key, in wire order among equal keys.
    fn entries(
        &mut self,
        m: &Message,
        f: &Field,
        data: &[u8],
        occs: std::ops::Range<usize>,
    ) -> Result<(), DecodeError> {
        let base = self.entries.len();
        for i in occs {
            let (Val::Bytes(at, _), Some(entry)) =
                (self.scratch[i].val, bytes_of(data, self.scratch[i].val))
            else {
                return Err(self.wrong_type(m, f));
            };
            let mut e = Entry {
                key: Val::Bytes(at, at),
                value: None,
            };
            let mut j = 0;
            while j < entry.len() {
                match next_field(entry, &mut j)? {
                    (1, v @ Val::Bytes(..)) => e.key = shifted(v, at),
                    (2, v) => e.value = Some(shifted(v, at)),
                    (1, _) => return Err(self.wrong_type(m, f)),
                    (n, _) => {
                        return Err(DecodeError::UnknownField {
                            message: format!("{} field {} (a map entry)", m.name, f.num),
                            field: n,
                            minor: self.table.minor,
                        })
                    }
                }
            }
            self.entries.push(e);
        }
        // gogo-protobuf writes a map's keys sorted: sorting is rarely needed.
        let entries = &mut self.entries[base..];
        if !entries.is_sorted_by(|a, b| a.key(data) <= b.key(data)) {
            entries.sort_by(|a, b| a.key(data).cmp(b.key(data)));
        }
        Ok(())
    }

    /// Writes the sorted entries from `base` on as a JSON object.
    fn write_map(
        &mut self,
        m: &Message,
        f: &Field,
        value_ty: Ty,
        data: &[u8],
        base: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), DecodeError> {
        let end = self.entries.len();
        out.push(b'{');
        let mut first = true;
        for k in base..end {
            let e = self.entries[k];
            // Of a repeated key, the last on the wire wins (the sort was stable).
            if k + 1 < end && self.entries[k + 1].key(data) == e.key(data) {
                continue;
            }
            sep(out, &mut first);
            json::string(out, e.key(data));
            out.push(b':');
            match e.value {
                Some(v) => self.value(m, f, value_ty, data, v, out)?,
                // An entry without its value holds the value type's zero (an empty
                // message decodes as one).
                None => match value_ty {
                    Ty::Msg(i) => self.object(i, &[], None, out)?,
                    ty => self.zero(ty, out)?,
                },
            }
        }
        out.push(b'}');
        Ok(())
    }

    /// The fields of a special: its single fields by number (last wins), and the elements
    /// of its one repeated field, in wire order.
    fn special_fields(&self, m: &Message, data: &[u8]) -> Result<SpecialFields, DecodeError> {
        let mut f = SpecialFields {
            single: [None; 4],
            repeated: Vec::new(),
        };
        let mut i = 0;
        while i < data.len() {
            let (num, v) = next_field(data, &mut i)?;
            let idx = self.field_index(m, num)?;
            if m.fields[idx].repeated {
                f.repeated.push(v);
            } else {
                // The specials' single fields are numbered 1 to 3 (generated.proto).
                let slot = f.single.get_mut(num as usize).ok_or_else(|| {
                    DecodeError::Malformed(format!("{}: field {num} past 3", m.name))
                })?;
                *slot = Some(v);
            }
        }
        Ok(f)
    }

    /// The custom marshalers.
    fn special(&mut self, m: &Message, data: &[u8], out: &mut Vec<u8>) -> Result<(), DecodeError> {
        let f = self.special_fields(m, data)?;
        let int = |n: usize| match f.single[n] {
            Some(Val::Varint(x)) => x as i64,
            _ => 0,
        };
        let bytes = |n: usize| f.single[n].and_then(|v| bytes_of(data, v));
        let bad = |what: &str| DecodeError::Malformed(format!("{}: {what}", m.name));
        match m.special {
            Special::Struct => unreachable!("structs are written by fields()"),
            Special::Array => self.array(m, 1, data, &f.repeated, out)?,
            Special::Time | Special::MicroTime => {
                const GO_ZERO: i64 = -62_135_596_800;
                let (secs, nanos) = (int(1), int(2) as i32 as i64);
                if data.is_empty() || secs == GO_ZERO && nanos == 0 {
                    out.extend_from_slice(b"null");
                } else {
                    json::rfc3339(out, secs, nanos, m.special == Special::MicroTime)
                        .ok_or_else(|| bad("a time out of range"))?;
                }
            }
            Special::Duration => json::duration(out, int(1)),
            Special::IntOrString => match int(1) {
                0 => json::int(out, i64::from(int(2) as i32)),
                1 => json::string(out, bytes(3).unwrap_or_default()),
                t => return Err(bad(&format!("type {t}"))),
            },
            Special::Quantity => match bytes(1) {
                Some(s) if !s.is_empty() => json::string(out, s),
                _ => out.extend_from_slice(b"\"0\""),
            },
            Special::RawExtension | Special::FieldsV1 | Special::Json => match bytes(1) {
                None => out.extend_from_slice(b"null"),
                Some(b) if b.is_empty() && m.special == Special::Json => {
                    out.extend_from_slice(b"null")
                }
                Some(b) => json::raw(out, b).ok_or_else(|| bad("raw bytes that are not JSON"))?,
            },
            // Go: the array if it has items, else the schema (nil: null).
            Special::SchemaOrArray | Special::SchemaOrStringArray => {
                if f.repeated.is_empty() {
                    let schema = self.msg_field(m, 1)?;
                    self.schema_or_null(schema, bytes(1), out)?;
                } else {
                    self.array(m, 2, data, &f.repeated, out)?;
                }
            }
            // Go: the schema if there is one, else the bool.
            Special::SchemaOrBool => match bytes(2) {
                Some(b) => self.object(self.msg_field(m, 2)?, b, None, out)?,
                None => out.extend_from_slice(if int(1) != 0 { b"true" } else { b"false" }),
            },
        }
        Ok(())
    }

    /// The elements of a special's repeated field `num` as a JSON array.
    fn array(
        &mut self,
        m: &Message,
        num: u64,
        data: &[u8],
        elements: &[Val],
        out: &mut Vec<u8>,
    ) -> Result<(), DecodeError> {
        let f = m
            .field(num)
            .map(|i| &m.fields[i])
            .ok_or_else(|| DecodeError::Malformed(format!("{}: no field {num}", m.name)))?;
        out.push(b'[');
        let mut first = true;
        for v in elements {
            sep(out, &mut first);
            self.value(m, f, f.ty, data, *v, out)?;
        }
        out.push(b']');
        Ok(())
    }

    fn schema_or_null(
        &mut self,
        schema: u32,
        b: Option<&[u8]>,
        out: &mut Vec<u8>,
    ) -> Result<(), DecodeError> {
        match b {
            Some(b) => self.object(schema, b, None, out),
            None => {
                out.extend_from_slice(b"null");
                Ok(())
            }
        }
    }

    /// The message type of field `num` of a special.
    fn msg_field(&self, m: &Message, num: u64) -> Result<u32, DecodeError> {
        match m.field(num).map(|i| m.fields[i].ty) {
            Some(Ty::Msg(i)) => Ok(i),
            _ => Err(DecodeError::Malformed(format!(
                "{}: no message field {num} in the table",
                m.name
            ))),
        }
    }
}

fn sep(out: &mut Vec<u8>, first: &mut bool) {
    if !*first {
        out.push(b',');
    }
    *first = false;
}
