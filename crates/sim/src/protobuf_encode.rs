//! The other way: the apiserver's JSON → Kubernetes' protobuf wire, driven by the same
//! tables, for the simulator (which stores JSON and answers protobuf when asked).
//!
//! Written as gogo-protobuf's generated `Marshal` writes it: fields by ascending number, a
//! value (non-pointer) scalar or struct always (its zero when the JSON omits it), a
//! pointer, `[]byte`, slice or map only when present, repeated scalars unpacked (proto2),
//! map entries sorted by key. The invariant the tests hold: decoding what this writes
//! gives the JSON back byte for byte.

use serde_json::Value;

use kwatch_core::client::protobuf::table::{Field, Message, Special, Table, Ty};
use kwatch_core::client::protobuf::MAGIC;

/// Why JSON could not be written as protobuf.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("protobuf encoding: {0}")]
pub struct EncodeError(pub String);

fn bad(what: impl std::fmt::Display) -> EncodeError {
    EncodeError(what.to_string())
}

pub(super) fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn tag(out: &mut Vec<u8>, num: u32, wire: u8) {
    varint(out, u64::from(num) << 3 | u64::from(wire));
}

/// Field `num` as length-delimited `bytes`.
pub(super) fn bytes_field(out: &mut Vec<u8>, num: u32, bytes: &[u8]) {
    tag(out, num, 2);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// `k8s\0` + runtime.Unknown{typeMeta, raw, contentEncoding "", contentType ""}.
pub fn envelope(api_version: &str, kind: &str, raw: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(MAGIC);
    let mut tm = Vec::with_capacity(api_version.len() + kind.len() + 4);
    bytes_field(&mut tm, 1, api_version.as_bytes());
    bytes_field(&mut tm, 2, kind.as_bytes());
    bytes_field(out, 1, &tm);
    bytes_field(out, 2, raw);
    bytes_field(out, 3, b"");
    bytes_field(out, 4, b"");
}

/// Appends an object's or a list's bytes (`k8s\0` + envelope) for its JSON, whose
/// `kind` and `apiVersion` name the message.
pub fn object(table: &Table, json: &Value, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    object_with(table, json, &[], out)
}

/// [`object`], with `extra` (fields already encoded) appended to the message: what a
/// newer server's type would carry, for tests of a field the table does not know.
pub fn object_with(
    table: &Table,
    json: &Value,
    extra: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    let text = |k: &str| json.get(k).and_then(Value::as_str).unwrap_or_default();
    let (api_version, kind) = (text("apiVersion"), text("kind"));
    let msg = table
        .kind(api_version, kind)
        .ok_or_else(|| bad(format_args!("no {kind} of {api_version} in the table")))?;
    let mut raw = Vec::new();
    message(table, msg, json, &mut raw)?;
    raw.extend_from_slice(extra);
    envelope(api_version, kind, &raw, out);
    Ok(())
}

/// Appends the bytes of message `msg` (no envelope) for its JSON value.
pub fn message(
    table: &Table,
    msg: u32,
    json: &Value,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    Encoder { table }.message(msg, json, out, 0)
}

/// A watch frame: the 4-byte big-endian length and a metav1.WatchEvent whose object is
/// `object`'s envelope (an object's bytes as [`object`] writes them).
pub fn watch_frame(event_type: &str, object: &[u8], out: &mut Vec<u8>) {
    let mut ext = Vec::with_capacity(object.len() + 5);
    bytes_field(&mut ext, 1, object);
    let mut event = Vec::with_capacity(ext.len() + event_type.len() + 10);
    bytes_field(&mut event, 1, event_type.as_bytes());
    bytes_field(&mut event, 2, &ext);
    out.extend_from_slice(&(event.len() as u32).to_be_bytes());
    out.extend_from_slice(&event);
}

struct Encoder<'t> {
    table: &'t Table,
}

/// As the decoder's: recursive types are nested by the data.
const MAX_DEPTH: u32 = 256;

impl Encoder<'_> {
    fn msg(&self, i: u32) -> &Message {
        &self.table.messages[i as usize]
    }

    /// Whether a field of struct `m` (or of a struct it embeds) is written as `key`.
    fn takes(&self, m: &Message, key: &str) -> bool {
        m.fields.iter().any(|f| match f.ty {
            _ if f.type_meta => key == "kind" || key == "apiVersion",
            Ty::Msg(i) if f.inline => self.takes(self.msg(i), key),
            _ => !f.skip && &*f.name == key,
        })
    }

    fn message(
        &self,
        msg: u32,
        v: &Value,
        out: &mut Vec<u8>,
        depth: u32,
    ) -> Result<(), EncodeError> {
        self.struct_or_special(msg, v, out, depth, false)
    }

    /// Message `msg` of `v`; `inline`: a struct embedded in the object `v` is, whose other
    /// keys are the embedding message's.
    fn struct_or_special(
        &self,
        msg: u32,
        v: &Value,
        out: &mut Vec<u8>,
        depth: u32,
        inline: bool,
    ) -> Result<(), EncodeError> {
        if depth == MAX_DEPTH {
            return Err(bad(format_args!("objects nested deeper than {MAX_DEPTH}")));
        }
        let m = self.msg(msg);
        if m.special != Special::Struct {
            return self.special(m, v, out, depth + 1);
        }
        let obj = match v {
            Value::Object(o) => Some(o),
            Value::Null => None,
            _ => return Err(bad(format_args!("{}: not an object", m.name))),
        };
        // A key no field takes would be dropped: an error, as a field the decoder does
        // not know is (the caller answers JSON). An inline struct's keys are checked by
        // the message that embeds it.
        if !inline {
            if let Some(key) = obj.and_then(|o| o.keys().find(|k| !self.takes(m, k))) {
                return Err(bad(format_args!("{}: no field for {key:?}", m.name)));
            }
        }
        for &i in &m.wire_order {
            let f = &m.fields[usize::from(i)];
            if f.skip || f.type_meta {
                continue;
            }
            if f.inline {
                // An embedded struct: its keys are the enclosing object's.
                let Ty::Msg(inner) = f.ty else {
                    return Err(bad(format_args!(
                        "{}: inline field {} is not a message",
                        m.name, f.num
                    )));
                };
                let mut bytes = Vec::new();
                self.struct_or_special(inner, v, &mut bytes, depth + 1, true)?;
                bytes_field(out, f.num, &bytes);
                continue;
            }
            let value = obj.and_then(|o| o.get(&*f.name)).unwrap_or(&Value::Null);
            self.field(m, f, value, out, depth)?;
        }
        Ok(())
    }

    fn field(
        &self,
        m: &Message,
        f: &Field,
        v: &Value,
        out: &mut Vec<u8>,
        depth: u32,
    ) -> Result<(), EncodeError> {
        if let Some(value_ty) = f.map_value {
            let Value::Object(o) = v else {
                return if v.is_null() {
                    Ok(())
                } else {
                    Err(bad(format_args!("{} {}: not a map", m.name, f.name)))
                };
            };
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort();
            for k in keys {
                let mut entry = Vec::new();
                bytes_field(&mut entry, 1, k.as_bytes());
                self.single(m, f, 2, value_ty, &o[k], &mut entry, depth)?;
                bytes_field(out, f.num, &entry);
            }
            return Ok(());
        }
        if f.repeated {
            return match v {
                Value::Array(items) => {
                    for item in items {
                        self.single(m, f, f.num, f.ty, item, out, depth)?;
                    }
                    Ok(())
                }
                Value::Null => Ok(()),
                _ => Err(bad(format_args!("{} {}: not an array", m.name, f.name))),
            };
        }
        if v.is_null() && (f.ptr || f.ty == Ty::Bytes) {
            return Ok(());
        }
        self.single(m, f, f.num, f.ty, v, out, depth)
    }

    /// One value of type `ty` as field `num`; null is the type's zero.
    #[allow(clippy::too_many_arguments)]
    fn single(
        &self,
        m: &Message,
        f: &Field,
        num: u32,
        ty: Ty,
        v: &Value,
        out: &mut Vec<u8>,
        depth: u32,
    ) -> Result<(), EncodeError> {
        let wrong = || bad(format_args!("{} {}: {v} is not a {ty:?}", m.name, f.name));
        let int = || -> Result<i64, EncodeError> {
            match v {
                Value::Null => Ok(0),
                _ => v.as_i64().ok_or_else(wrong),
            }
        };
        match ty {
            Ty::Str => match v {
                Value::String(s) => bytes_field(out, num, s.as_bytes()),
                Value::Null => bytes_field(out, num, b""),
                _ => return Err(wrong()),
            },
            Ty::Bytes => match v {
                Value::String(s) => bytes_field(out, num, &base64_decode(s).ok_or_else(wrong)?),
                Value::Null => bytes_field(out, num, b""),
                _ => return Err(wrong()),
            },
            Ty::Msg(i) => {
                let mut inner = Vec::new();
                self.message(i, v, &mut inner, depth + 1)?;
                bytes_field(out, num, &inner);
            }
            Ty::Bool => {
                tag(out, num, 0);
                varint(out, u64::from(v.as_bool().unwrap_or(false)));
            }
            Ty::I32 | Ty::I64 => {
                tag(out, num, 0);
                varint(out, int()? as u64);
            }
            Ty::U32 | Ty::U64 => {
                tag(out, num, 0);
                varint(
                    out,
                    if v.is_null() {
                        0
                    } else {
                        v.as_u64().ok_or_else(wrong)?
                    },
                );
            }
            Ty::S32 | Ty::S64 => {
                let x = int()?;
                tag(out, num, 0);
                varint(out, ((x << 1) ^ (x >> 63)) as u64);
            }
            Ty::Fixed32 | Ty::SFixed32 => {
                tag(out, num, 5);
                out.extend_from_slice(&(int()? as u32).to_le_bytes());
            }
            Ty::Fixed64 | Ty::SFixed64 => {
                tag(out, num, 1);
                out.extend_from_slice(&(int()? as u64).to_le_bytes());
            }
            Ty::F32 => {
                tag(out, num, 5);
                out.extend_from_slice(&(v.as_f64().unwrap_or(0.0) as f32).to_le_bytes());
            }
            Ty::F64 => {
                tag(out, num, 1);
                out.extend_from_slice(&v.as_f64().unwrap_or(0.0).to_le_bytes());
            }
        }
        Ok(())
    }

    /// The custom marshalers, the other way.
    fn special(
        &self,
        m: &Message,
        v: &Value,
        out: &mut Vec<u8>,
        depth: u32,
    ) -> Result<(), EncodeError> {
        let wrong = || bad(format_args!("{}: {v}", m.name));
        let field = |num: u64| {
            m.field(num)
                .map(|i| &m.fields[i])
                .ok_or_else(|| bad(format_args!("{}: no field {num}", m.name)))
        };
        match m.special {
            Special::Struct => unreachable!("structs are written by message()"),
            Special::Array => self.field(m, field(1)?, v, out, depth)?,
            Special::Time | Special::MicroTime => match v {
                // metav1.Time's Marshal: nothing for the zero time.
                Value::Null => {}
                Value::String(s) => {
                    let t: jiff::Timestamp = s.parse().map_err(|_| wrong())?;
                    tag(out, 1, 0);
                    varint(out, t.as_second() as u64);
                    tag(out, 2, 0);
                    varint(out, i64::from(t.subsec_nanosecond()) as u64);
                }
                _ => return Err(wrong()),
            },
            Special::Duration => {
                let d = match v {
                    Value::String(s) => parse_duration(s).ok_or_else(wrong)?,
                    Value::Null => 0,
                    _ => return Err(wrong()),
                };
                tag(out, 1, 0);
                varint(out, d as u64);
            }
            Special::IntOrString => {
                let (t, i, s) = match v {
                    Value::String(s) => (1, 0, s.as_str()),
                    // Go's zero IntOrString (a value field left out of the JSON).
                    Value::Null => (0, 0, ""),
                    _ => (0, v.as_i64().ok_or_else(wrong)?, ""),
                };
                tag(out, 1, 0);
                varint(out, t);
                tag(out, 2, 0);
                varint(out, i32::try_from(i).map_err(|_| wrong())? as i64 as u64);
                bytes_field(out, 3, s.as_bytes());
            }
            Special::Quantity => match v {
                Value::String(s) => bytes_field(out, 1, s.as_bytes()),
                Value::Null => {}
                _ => return Err(wrong()),
            },
            Special::RawExtension | Special::FieldsV1 | Special::Json => {
                if !v.is_null() {
                    let raw = serde_json::to_vec(v).map_err(bad)?;
                    bytes_field(out, 1, &raw);
                }
            }
            Special::SchemaOrArray | Special::SchemaOrStringArray => match v {
                Value::Array(_) => self.field(m, field(2)?, v, out, depth)?,
                Value::Null => {}
                _ => self.single(m, field(1)?, 1, field(1)?.ty, v, out, depth)?,
            },
            Special::SchemaOrBool => match v {
                Value::Bool(b) => {
                    tag(out, 1, 0);
                    varint(out, u64::from(*b));
                }
                _ => {
                    tag(out, 1, 0);
                    varint(out, 1);
                    self.single(m, field(2)?, 2, field(2)?.ty, v, out, depth)?;
                }
            },
        }
        Ok(())
    }
}

/// Go's time.ParseDuration: `1h2m3.5s`, `1.5ms`, `-0s`; in nanoseconds.
fn parse_duration(s: &str) -> Option<i64> {
    let (neg, mut rest) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    if rest == "0" {
        return Some(0);
    }
    let mut total: i128 = 0;
    while !rest.is_empty() {
        let n = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .filter(|n| *n > 0)?;
        let (number, tail) = rest.split_at(n);
        let u = tail
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(u);
        let scale: i128 = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return None,
        };
        let (int, frac) = number.split_once('.').unwrap_or((number, ""));
        let mut v = if int.is_empty() {
            0
        } else {
            int.parse::<i128>().ok()?
        } * scale;
        let mut div = 1i128;
        let mut f = 0i128;
        for d in frac.bytes().take(18) {
            f = f * 10 + i128::from(d - b'0');
            div *= 10;
        }
        v += f * scale / div;
        total = total.checked_add(v)?;
        rest = tail;
    }
    let total = if neg { -total } else { total };
    i64::try_from(total).ok()
}

/// Standard base64 with padding (Go's encoding of `[]byte`).
fn base64_decode(s: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(s).ok()
}

#[cfg(test)]
mod tests {
    //! Every golden file of 1.32 and 1.36 (kwatch-core's `testdata/k8s-api/`) encoded to its
    //! `.pb` byte for byte and decoded back to its JSON; watch frames; unknown keys.

    use std::path::Path;

    use kwatch_core::cache::testutil::files_with_extension;

    use kwatch_core::client::protobuf::{
        compact, envelope, frame, message, object, watch_event, Table,
    };

    use super as encode;

    fn compacted(path: &Path) -> Vec<u8> {
        let mut out = Vec::new();
        compact(&mut out, &std::fs::read(path).unwrap());
        out
    }

    /// Encodes every fixture's JSON of one release with the table of `minor` and decodes it
    /// back; returns (round trips, byte-equal to the `.pb`, failures). Both hold for every
    /// fixture: decode(encode(json)) == json, and encode(json) == the `.pb`.
    fn encode_golden(release: &str, minor: u32) -> (usize, usize, Vec<String>) {
        let table = Table::for_minor(minor).unwrap().unwrap();
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../core/testdata/k8s-api")
            .join(release);
        let pbs = files_with_extension(&dir, "pb");
        let (mut passed, mut exact, mut failures) = (0, 0, Vec::new());
        for pb in pbs {
            let name = pb.file_stem().unwrap().to_string_lossy().into_owned();
            let mut want = compacted(&pb.with_extension("json"));
            let mut value: serde_json::Value = serde_json::from_slice(&want).unwrap();
            let wire = std::fs::read(&pb).unwrap();
            let (mut bytes, mut got) = (Vec::new(), Vec::new());
            let env = envelope(&wire).unwrap();
            // What kube-apiserver serves: the TypeMeta its conversions set in embedded
            // objects (a StatefulSet's volumeClaimTemplates), which the encoder drops as
            // gogo-protobuf does (the `.pb` has none) and the decoder writes back.
            if let Some(msg) = table.kind(env.api_version, env.kind) {
                let before = value.clone();
                table.serve_type_meta(msg, &mut value);
                if value != before {
                    want = serde_json::to_vec(&value).unwrap();
                }
            }
            let result = if env.kind.is_empty() {
                // WatchEvent: no TypeMeta, so no kind in its JSON; the file names it.
                let msg = table.kind("v1", "WatchEvent").unwrap();
                encode::message(table, msg, &value, &mut bytes)
                    .map_err(|e| e.to_string())
                    .and_then(|()| message(table, msg, &bytes, &mut got).map_err(|e| e.to_string()))
                    .map(|()| bytes.as_slice() == env.raw)
            } else {
                encode::object(table, &value, &mut bytes)
                    .map_err(|e| e.to_string())
                    .and_then(|()| object(table, &bytes, &mut got).map_err(|e| e.to_string()))
                    .map(|()| bytes == wire)
            };
            match result {
                Err(e) => failures.push(format!("{name}: {e}")),
                Ok(_) if got != want => failures.push(format!(
                    "{name}: another JSON back:\n  got  {}\n  want {}",
                    String::from_utf8_lossy(&got),
                    String::from_utf8_lossy(&want)
                )),
                Ok(same) => {
                    passed += 1;
                    exact += usize::from(same);
                }
            }
        }
        (passed, exact, failures)
    }

    #[test]
    fn golden_files_encode_and_decode_back_to_their_json() {
        for (release, minor) in [("v1.32.13", 32), ("v1.36.2", 36)] {
            let (passed, exact, failures) = encode_golden(release, minor);
            eprintln!("{release}: {passed} fixtures round-trip, {exact} byte for byte as the .pb");
            assert!(
                failures.is_empty() && passed > 150 && exact == passed,
                "{release}: {passed} pass, {} failures:\n{}",
                failures.len(),
                failures.join("\n")
            );
        }
    }

    /// A genuine kube-apiserver 1.32's StatefulSets (kwatch-core's
    /// `testdata/tables-1.32/statefulsets.table.json`, the rows' full objects), one with
    /// volumeClaimTemplates served as `{"kind":"PersistentVolumeClaim","apiVersion":"v1",…}`:
    /// encoded to protobuf and decoded back to the server's bytes.
    #[test]
    fn a_genuine_statefulset_round_trips_with_its_claim_templates_type_meta() {
        let table = Table::for_minor(32).unwrap().unwrap();
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../core/testdata/tables-1.32/statefulsets.table.json");
        let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        let mut templates = 0;
        for row in doc["rows"].as_array().unwrap() {
            let sts = &row["object"];
            templates += sts["spec"]["volumeClaimTemplates"]
                .as_array()
                .map_or(0, Vec::len);
            let want = serde_json::to_vec(sts).unwrap();
            let (mut bytes, mut got) = (Vec::new(), Vec::new());
            encode::object(table, sts, &mut bytes).unwrap();
            object(table, &bytes, &mut got).unwrap();
            assert_eq!(
                String::from_utf8_lossy(&got),
                String::from_utf8_lossy(&want)
            );
        }
        assert!(templates > 0, "no volumeClaimTemplates in the capture");
    }

    #[test]
    fn watch_frames_encode_and_decode_back() {
        let table = Table::for_minor(32).unwrap().unwrap();
        let pod = serde_json::json!({"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","resourceVersion":"7"}});
        let mut obj = Vec::new();
        encode::object(table, &pod, &mut obj).unwrap();
        let mut stream = Vec::new();
        encode::watch_frame("ADDED", &obj, &mut stream);
        encode::watch_frame("BOOKMARK", &obj, &mut stream);
        let (first, used) = frame(&stream).unwrap();
        let event = watch_event(table, first).unwrap();
        assert_eq!(event.event_type, "ADDED");
        let mut want = Vec::new();
        object(table, &obj, &mut want).unwrap();
        assert_eq!(event.object, want);
        let (second, rest) = frame(&stream[used..]).unwrap();
        assert_eq!(watch_event(table, second).unwrap().event_type, "BOOKMARK");
        assert_eq!(used + rest, stream.len());
    }

    /// A key no field of the table takes is an error, never dropped: the simulator then
    /// answers JSON.
    #[test]
    fn a_key_the_table_has_no_field_for_is_an_encoding_error() {
        let table = Table::for_minor(32).unwrap().unwrap();
        let ok = serde_json::json!({"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"},"data":{"k":"v"}});
        encode::object(table, &ok, &mut Vec::new()).unwrap();
        // A value field left out is Go's zero, not an error (a port without its targetPort,
        // an IntOrString, as the simulator stores a Service kwatch's tests create).
        let svc = serde_json::json!({"kind":"Service","apiVersion":"v1","metadata":{"name":"s"},"spec":{"ports":[{"port":80}]}});
        encode::object(table, &svc, &mut Vec::new()).unwrap();
        for bad in [
            serde_json::json!({"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"},"extra":1}),
            serde_json::json!({"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","nope":"x"}}),
        ] {
            let e = encode::object(table, &bad, &mut Vec::new()).unwrap_err();
            assert!(e.to_string().contains("no field for"), "{e}");
        }
    }
}
