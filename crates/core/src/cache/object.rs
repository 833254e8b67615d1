//! An object as kwatch holds it: the server's JSON, kept as raw bytes, plus the few
//! metadata fields the client-go core needs. The full JSON is parsed only by outputs
//! that need it (table columns, YAML), never by the core.

use std::sync::Arc;

use serde::de::{DeserializeSeed, Deserializer, Error as _, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::scan::{each_member, skip_valid, skip_ws, to_special};

/// Shared handle: one allocation is shared by the FIFO, the store and the printer.
pub type ObjectRef = Arc<Object>;

/// A [`Meta`] string: up to 24 bytes inline, longer on the heap.
pub type MetaStr = compact_str::CompactString;

/// The metadata fields kwatch reads from every object (others pass through unread, as an
/// unstructured client-go informer leaves them).
///
/// Its strings are [`MetaStr`]s: a store holds one `Meta` per object, and a server's
/// names, namespaces, resourceVersions and timestamps fit in one inline (24 bytes), so an
/// object costs no allocation beyond its bytes and its handle.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Meta {
    #[serde(default)]
    pub name: MetaStr,
    #[serde(default)]
    pub namespace: Option<MetaStr>,
    #[serde(default)]
    pub resource_version: MetaStr,
    #[serde(default)]
    pub creation_timestamp: Option<MetaStr>,
    /// A hash of `metadata.uid` (0: none): of the first `uid` member that is a string
    /// without escapes (a server's always is); never an error ([`uid_in`]). Only compared,
    /// so it is hashed where it is found rather than copied (no allocation on the hot
    /// path; 64 bits make a collision negligible). A different uid under the same
    /// key is another object, deleted and re-created under that name.
    #[serde(skip)]
    pub uid: u64,
    /// Whether `metadata.managedFields` is there: outputs drop it unless asked, and need
    /// not search the whole object for it when it is not.
    #[serde(default, rename = "managedFields", deserialize_with = "present")]
    pub has_managed_fields: bool,
    /// Where `metadata.managedFields` is in the raw JSON, with one comma that joins it to
    /// another member (`,"managedFields":[…]`, or `"managedFields":[…],` when it is
    /// first): outputs that hide it leave these bytes out. Found while the metadata is
    /// read, at no cost of its own; `None` where it was not ([`Object::managed_fields_span`]
    /// checks it before anyone cuts). Offsets as `u32` keep `Meta` small; an object past
    /// 4 GiB has no span ([`span32`]).
    #[serde(skip)]
    pub managed_fields_span: Option<(u32, u32)>,
}

/// A [`Meta::managed_fields_span`] from byte offsets: `None` if either exceeds `u32`.
fn span32(start: usize, end: usize) -> Option<(u32, u32)> {
    Some((u32::try_from(start).ok()?, u32::try_from(end).ok()?))
}

fn present<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    IgnoredAny::deserialize(d).map(|_| true)
}

/// Reads an object's `metadata` and stops there: the rest (spec and status, most of the
/// bytes) is not scanned, because the raw value was validated when it was split off the
/// list or the watch line. Errors as deserializing `{"metadata": Meta}` would, except that a
/// duplicate `metadata` key is not noticed.
fn parse_meta(raw: &str) -> Result<Meta, serde_json::Error> {
    match find_metadata(raw.as_bytes()) {
        Some(Some(at)) => {
            if let Some(meta) = read_meta(raw, at) {
                return Ok(meta);
            }
            let mut de = serde_json::Deserializer::from_str(&raw[at..]);
            // An error is left to the visitor below, which words it as before (its
            // position counted from the start of the object).
            match Meta::deserialize(&mut de) {
                Ok(mut meta) => {
                    meta.uid = uid_in(raw, at);
                    Ok(meta)
                }
                Err(_) => parse_meta_visiting(raw),
            }
        }
        Some(None) => Ok(Meta::default()),
        None => parse_meta_visiting(raw),
    }
}

/// Where the value of the first top-level key `metadata` starts in `b`, a JSON object
/// (`Some(None)`: it has no such key), found without copying or allocating. `None` when
/// `b` is anything this does not read (not an object, a key with an escape, invalid
/// JSON): [`parse_meta_visiting`] decides then. Keys are compared as written, so a key
/// with no escape matches exactly when serde's would.
fn find_metadata(b: &[u8]) -> Option<Option<usize>> {
    let mut found = None;
    let walked = each_member(b, skip_ws(b, 0), |key, at| {
        if key == b"metadata" {
            found = Some(at);
            return None;
        }
        skip_valid(b, at)
    });
    match (found, walked) {
        (Some(at), _) => Some(Some(at)),
        (None, Some(())) => Some(None),
        (None, None) => None,
    }
}

/// The metadata object starting at `raw[i]`, read without serde when every field kwatch
/// keeps is a string with no escape (or null where `Meta` allows it) and no kept field is
/// repeated. `None`: anything else, for serde to decide (and word any error). `raw` must
/// be valid JSON.
fn read_meta(raw: &str, i: usize) -> Option<Meta> {
    let b = raw.as_bytes();
    let mut meta = Meta::default();
    let mut seen = 0u8;
    // The end of the previous member's value, and managedFields' key and value when it
    // is the first member (its span then ends where the next key starts).
    let mut prev_end: Option<usize> = None;
    let mut first_managed: Option<(usize, usize)> = None;
    each_member(b, i, |key, i| {
        // `key` is a slice of `b`: its opening quote is one byte before it.
        let key_start = key.as_ptr() as usize - b.as_ptr() as usize - 1;
        if let Some((start, _)) = first_managed.take() {
            meta.managed_fields_span = span32(start, key_start);
        }
        let end = read_member(&mut meta, &mut seen, raw, key, i)?;
        if key == b"managedFields" {
            match prev_end {
                Some(p) => meta.managed_fields_span = span32(p, end),
                None => first_managed = Some((key_start, end)),
            }
        }
        prev_end = Some(end);
        Some(end)
    })?;
    if let Some((start, end)) = first_managed {
        meta.managed_fields_span = span32(start, end);
    }
    Some(meta)
}

/// One member of the metadata for [`read_meta`]: its value read into `meta` when kwatch
/// keeps it; the index after the value, or `None` for serde to decide.
fn read_member(meta: &mut Meta, seen: &mut u8, raw: &str, key: &[u8], i: usize) -> Option<usize> {
    const NAME: u8 = 1;
    const NAMESPACE: u8 = 2;
    const RV: u8 = 4;
    const CREATED: u8 = 8;
    const MANAGED: u8 = 16;
    let b = raw.as_bytes();
    // A string value with no escape, or null (`None`).
    let plain = |i: usize| -> Option<(Option<MetaStr>, usize)> {
        match b.get(i)? {
            b'n' => Some((None, i + 4)),
            b'"' => {
                let end = to_special(b, i + 1);
                if b.get(end) != Some(&b'"') {
                    return None;
                }
                Some((Some(MetaStr::from(raw.get(i + 1..end)?)), end + 1))
            }
            _ => None,
        }
    };
    {
        let bit = match key {
            b"name" => NAME,
            b"namespace" => NAMESPACE,
            b"resourceVersion" => RV,
            b"creationTimestamp" => CREATED,
            b"managedFields" => MANAGED,
            _ => 0,
        };
        if key == b"uid" {
            if meta.uid == 0 {
                meta.uid = uid_at(b, i);
            }
            return skip_valid(b, i);
        }
        if *seen & bit != 0 {
            return None;
        }
        *seen |= bit;
        match bit {
            NAME | RV => {
                let (Some(s), j) = plain(i)? else {
                    return None;
                };
                if bit == NAME {
                    meta.name = s;
                } else {
                    meta.resource_version = s;
                }
                Some(j)
            }
            NAMESPACE | CREATED => {
                let (s, j) = plain(i)?;
                if bit == NAMESPACE {
                    meta.namespace = s;
                } else {
                    meta.creation_timestamp = s;
                }
                Some(j)
            }
            _ => {
                meta.has_managed_fields |= bit == MANAGED;
                skip_valid(b, i)
            }
        }
    }
}

/// The [`Meta::uid`] of the metadata object at `raw[at]`, as [`read_meta`] reads it.
fn uid_in(raw: &str, at: usize) -> u64 {
    let b = raw.as_bytes();
    let mut uid = 0;
    each_member(b, at, |key, i| {
        if key == b"uid" && uid == 0 {
            uid = uid_at(b, i);
        }
        skip_valid(b, i)
    });
    uid
}

/// The [`Meta::uid`] hash of the value at `b[i]` when it is a string without escapes
/// (never 0), else 0.
fn uid_at(b: &[u8], i: usize) -> u64 {
    if b.get(i) != Some(&b'"') {
        return 0;
    }
    let end = to_special(b, i + 1);
    match (b.get(end), b.get(i + 1..end)) {
        (Some(b'"'), Some(s)) => uid_hash(s),
        _ => 0,
    }
}

/// The hash [`Meta::uid`] keeps of a uid's bytes (never 0); the one way kwatch hashes uids.
pub fn uid_hash(uid: &[u8]) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::default().hash_one(uid).max(1)
}

/// [`parse_meta`] by visiting the object's keys with serde (handles any valid JSON).
fn parse_meta_visiting(raw: &str) -> Result<Meta, serde_json::Error> {
    let mut found = None;
    let mut de = serde_json::Deserializer::from_str(raw);
    let r = MetaSeed(&mut found).deserialize(&mut de);
    match (r, found) {
        (_, Some(mut meta)) => {
            if let Some(Some(at)) = find_metadata(raw.as_bytes()) {
                meta.uid = uid_in(raw, at);
            }
            Ok(meta)
        }
        (Ok(()), None) => Ok(Meta::default()),
        (Err(e), None) => Err(e),
    }
}

/// Visits an object's keys up to `metadata`, stores it in `.0` and ends the visit (with an
/// error that [`parse_meta`] discards).
struct MetaSeed<'a>(&'a mut Option<Meta>);

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Key {
    Metadata,
    #[serde(other)]
    Other,
}

impl<'de> DeserializeSeed<'de> for MetaSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for MetaSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Metadata => {
                    *self.0 = Some(map.next_value()?);
                    return Err(A::Error::custom("metadata read"));
                }
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// One Kubernetes object: raw JSON text (exactly as received) plus its parsed [`Meta`].
#[derive(Debug)]
pub struct Object {
    /// One valid JSON value.
    raw: Box<str>,
    meta: Meta,
    /// The server's Table row this object came in (`None` unless the source asked for a
    /// Table): read by the table printer only; the informer core never looks at it.
    row: Option<Box<TableRow>>,
}

/// A column of a server-side Table (metav1.TableColumnDefinition without its
/// description).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct TableColumn {
    #[serde(default)]
    pub name: String,
    #[serde(default, rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub format: String,
    #[serde(default)]
    pub priority: i64,
}

/// The cells of one object's row in the server's Table, and the Table's columns (shared
/// by every row of one list or watch).
#[derive(Debug)]
pub struct TableRow {
    pub columns: Arc<[TableColumn]>,
    /// The row's `cells`: a JSON array, as received.
    pub cells: Box<RawValue>,
}

impl Object {
    /// Wraps raw JSON; fails only if it is not a JSON object with well-typed metadata.
    pub fn from_raw(raw: Box<RawValue>) -> Result<Object, serde_json::Error> {
        let meta = parse_meta(raw.get())?;
        Ok(Object {
            raw: raw.into(),
            meta,
            row: None,
        })
    }

    /// Takes JSON text already checked to be one valid JSON value (as
    /// [`crate::scan::scan_object`] and [`std::str::from_utf8`] check it): a `&str` is
    /// copied, a `String` kept.
    pub(crate) fn from_valid_json(text: impl Into<Box<str>>) -> Result<Object, serde_json::Error> {
        let text = text.into();
        let meta = parse_meta(&text)?;
        Ok(Object {
            raw: text,
            meta,
            row: None,
        })
    }

    /// As [`Object::from_valid_json`], with `kind` and `apiVersion` put first when the
    /// object does not begin with either ([`TypeMeta`]), in the one copy it makes.
    pub(crate) fn from_valid_json_typed(
        text: &str,
        type_meta: Option<&TypeMeta>,
    ) -> Result<Object, serde_json::Error> {
        match type_meta.and_then(|t| t.insert_into(text)) {
            Some(typed) => Object::from_valid_json(typed),
            None => Object::from_valid_json(text),
        }
    }

    /// This object with [`TypeMeta`] put in as [`Object::from_valid_json_typed`] does.
    pub(crate) fn typed(self, type_meta: &TypeMeta) -> Object {
        match type_meta.insert_into(&self.raw) {
            Some(typed) => {
                // Put in before every member: what follows moved by as many bytes.
                let moved = typed.len() - self.raw.len();
                let mut meta = self.meta;
                meta.managed_fields_span = meta
                    .managed_fields_span
                    .and_then(|(s, e)| span32(s as usize + moved, e as usize + moved));
                Object {
                    raw: typed.into(),
                    meta,
                    row: self.row,
                }
            }
            None => self,
        }
    }

    /// Parses JSON text into an object.
    pub fn from_json(text: &str) -> Result<Object, serde_json::Error> {
        Object::from_raw(RawValue::from_string(text.to_owned())?)
    }

    /// The JSON text, exactly as received.
    pub fn raw(&self) -> &str {
        &self.raw
    }

    pub fn meta(&self) -> &Meta {
        &self.meta
    }

    /// [`Meta::managed_fields_span`] when it holds what it says: bytes starting with
    /// `"managedFields"` or with a comma (and whitespace) before it, on character
    /// boundaries.
    pub fn managed_fields_span(&self) -> Option<(usize, usize)> {
        let (s, e) = self.meta.managed_fields_span?;
        let (s, e) = (s as usize, e as usize);
        let span = self.raw.get(s..e)?.trim_start();
        let member = span.strip_prefix(',').map_or(span, str::trim_start);
        member.starts_with("\"managedFields\"").then_some((s, e))
    }

    /// Attaches the server's Table row this object came in.
    pub(crate) fn set_row(&mut self, row: TableRow) {
        self.row = Some(Box::new(row));
    }

    /// The server's Table row this object came in, if the source asked for a Table.
    pub fn table_row(&self) -> Option<&TableRow> {
        self.row.as_deref()
    }

    pub fn resource_version(&self) -> &str {
        &self.meta.resource_version
    }

    /// Whether `self` is another object than `before` under the same key: both have a
    /// `metadata.uid` and they differ (deleted and re-created under that name).
    pub fn recreated_from(&self, before: &Object) -> bool {
        self.meta.uid != 0 && before.meta.uid != 0 && self.meta.uid != before.meta.uid
    }

    /// The store key: `namespace/name`, or `name` for cluster-scoped objects.
    pub fn key(&self) -> String {
        key_of(self.meta.namespace.as_deref(), &self.meta.name)
    }

    /// The full JSON as a value (parses; use only where an output needs fields).
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::from_str(&self.raw).unwrap_or(serde_json::Value::Null)
    }
}

/// The `kind` and `apiVersion` of a list's items. kube-apiserver leaves them out of the
/// items of a JSON list (`{"kind":"PodList",…,"items":[{"metadata":…}]}`); client-go's
/// decoder sets them from the list's type, and so does kwatch, so that every object it
/// shows carries them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeMeta {
    /// `"kind":"…","apiVersion":"…"`, JSON-escaped.
    members: Box<str>,
}

impl TypeMeta {
    pub fn new(kind: &str, api_version: &str) -> TypeMeta {
        let q = |s: &str| serde_json::Value::from(s).to_string();
        TypeMeta {
            members: format!("\"kind\":{},\"apiVersion\":{}", q(kind), q(api_version)).into(),
        }
    }

    /// `text` (a valid JSON object) with the members put first, or `None` when its first
    /// key is `kind` or `apiVersion` already (the server wrote its type, as for custom
    /// resources) or it is not an object.
    fn insert_into(&self, text: &str) -> Option<String> {
        let b = text.as_bytes();
        let open = skip_ws(b, 0);
        if b.get(open) != Some(&b'{') {
            return None;
        }
        let first = skip_ws(b, open + 1);
        let rest = &text[first..];
        if rest.starts_with("\"kind\"") || rest.starts_with("\"apiVersion\"") {
            return None;
        }
        let mut out = String::with_capacity(text.len() + self.members.len() + 2);
        out.push_str(&text[..=open]);
        out.push_str(&self.members);
        if !rest.starts_with('}') {
            out.push(',');
        }
        out.push_str(rest);
        Some(out)
    }
}

/// client-go's MetaNamespaceKeyFunc.
pub fn key_of(namespace: Option<&str>, name: &str) -> String {
    match namespace {
        Some(ns) if !ns.is_empty() => {
            let mut key = String::with_capacity(ns.len() + 1 + name.len());
            key.push_str(ns);
            key.push('/');
            key.push_str(name);
            key
        }
        _ => name.to_owned(),
    }
}

/// At most `max` characters of `s`, for messages quoting server data.
pub fn truncate(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_items_get_their_type_first_unless_they_have_one() {
        let tm = TypeMeta::new("Pod", "v1");
        let typed = |t: &str| {
            Object::from_valid_json_typed(t, Some(&tm))
                .unwrap()
                .raw()
                .to_owned()
        };
        assert_eq!(
            typed(r#"{"metadata":{"name":"a"},"spec":{}}"#),
            r#"{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a"},"spec":{}}"#
        );
        assert_eq!(typed(" { } "), r#" {"kind":"Pod","apiVersion":"v1"} "#);
        for has in [
            r#"{"kind":"Widget","apiVersion":"example.com/v1","metadata":{}}"#,
            r#"{ "apiVersion":"v1","metadata":{}}"#,
        ] {
            assert_eq!(typed(has), has);
        }
        let o = Object::from_json(r#"{"metadata":{"name":"b","resourceVersion":"4"}}"#)
            .unwrap()
            .typed(&TypeMeta::new("Odd\"Kind", "g/v"));
        assert_eq!(
            o.raw(),
            r#"{"kind":"Odd\"Kind","apiVersion":"g/v","metadata":{"name":"b","resourceVersion":"4"}}"#
        );
        assert_eq!(o.resource_version(), "4");
    }

    #[test]
    fn keys_and_meta() {
        let o = Object::from_json(
            r#"{"metadata":{"name":"a","namespace":"ns","resourceVersion":"7"},"spec":{}}"#,
        )
        .unwrap();
        assert_eq!(o.key(), "ns/a");
        assert_eq!(o.resource_version(), "7");
        let c = Object::from_json(r#"{"metadata":{"name":"n1","resourceVersion":"9"}}"#).unwrap();
        assert_eq!(c.key(), "n1");
        assert!(Object::from_json("[1]").is_err());
        // Metadata anywhere among the keys; badly typed metadata is an error.
        let text = r#"{"kind":"Pod","spec":{"a":["}"]},"metadata":{"name":"b","resourceVersion":"3"},"x":1}"#;
        let o = Object::from_json(text).unwrap();
        assert_eq!((o.key().as_str(), o.resource_version()), ("b", "3"));
        assert_eq!(o.raw(), text);
        assert!(!o.meta().has_managed_fields);
        let mf = Object::from_json(r#"{"metadata":{"name":"m","managedFields":[{"a":1}]}}"#);
        assert!(mf.unwrap().meta().has_managed_fields);
        let none = Object::from_json(r#"{"spec":{}}"#).unwrap();
        assert_eq!(none.meta(), &Meta::default());
        assert!(Object::from_json(r#"{"metadata":{"name":5}}"#).is_err());
        let odd_uid = Object::from_json(r#"{"metadata":{"name":"u","uid":5,"uid":[]}}"#);
        assert_eq!(odd_uid.unwrap().meta().name, "u", "uid is not read");
        let uid = |t: &str| Object::from_json(t).unwrap().meta().uid;
        let a1 = uid(r#"{"metadata":{"uid":"a-1","name":"x"}}"#);
        assert!(a1 != 0 && a1 == uid(r#"{"metadata":{"name":"y","uid":"a-1"}}"#));
        assert_eq!(uid(r#"{"metadata":{"name":"x"}}"#), 0);
        assert_eq!(
            uid(r#"{"metadata":{"uid":5,"uid":"b"}}"#),
            uid(r#"{"metadata":{"uid":"b"}}"#)
        );
        assert_eq!(
            uid(r#"{"metadata":{"name":"e\"s","uid":"c"}}"#),
            uid(r#"{"metadata":{"uid":"c"}}"#),
            "serde's path too"
        );
        let (a, b) = (
            Object::from_json(r#"{"metadata":{"name":"x","uid":"1"}}"#).unwrap(),
            Object::from_json(r#"{"metadata":{"name":"x","uid":"2"}}"#).unwrap(),
        );
        let none = Object::from_json(r#"{"metadata":{"name":"x"}}"#).unwrap();
        assert!(b.recreated_from(&a) && !a.recreated_from(&a) && !none.recreated_from(&a));
        assert!(Object::from_json(r#"{"metadata":null}"#).is_err());
        assert!(Object::from_json(r#""s""#).is_err());
    }

    /// A server's names, namespaces, resourceVersions and timestamps are held inline, and
    /// the object with its handle's counts fits mimalloc's 160-byte size class: what a store
    /// holds per object beyond its bytes is that one allocation.
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn an_objects_metadata_takes_no_allocation_of_its_own() {
        let o = Object::from_json(
            r#"{"metadata":{"name":"web-7c9d6b5f4-22qk9l0","namespace":"kube-system","resourceVersion":"18446744073709551615","creationTimestamp":"2026-11-27T22:05:00Z"}}"#,
        )
        .unwrap();
        let m = o.meta();
        let strings = [
            Some(&m.name),
            m.namespace.as_ref(),
            Some(&m.resource_version),
            m.creation_timestamp.as_ref(),
        ];
        for s in strings {
            let s = s.unwrap();
            assert!(!s.is_heap_allocated(), "{s}");
        }
        assert!(std::mem::size_of::<Object>() + 2 * std::mem::size_of::<usize>() <= 160);
    }

    /// The scan for `metadata` reads what the serde visitor reads.
    #[test]
    fn metadata_found_as_serde_finds_it() {
        let texts = [
            "{ \n \"kind\" : \"Pod\" ,\n \"metadata\" :\n {\"name\":\"a\",\"namespace\":\"n\"} }",
            r#"{"n":-1.5e3,"t":true,"z":null,"a":[{"metadata":{"name":"x"}},"]"],"metadata":{"name":"b"}}"#,
            r#"{"s":"\"metadata\":{}","metadata":{"name":"c"},"metadata":{"name":"d"}}"#,
            r#"{"metad\u0061ta":{"name":"e"},"metadata":{"name":"f"}}"#,
            r#"{"kind":"x"}"#,
            "{}",
            r#"{"metadata":{"name":"g","uid":"u","managedFields":[],"resourceVersion":"4"}}"#,
            r#"{"metadata":{"name":"h\"i","namespace":null,"uid":null,"creationTimestamp":"t"}}"#,
            r#"{"metadata":{"namespace":"n","managedFields":null,"x":{"name":1},"name":"j"}}"#,
            r#"{"metadata":{"a\u0062":1,"resourceVersion":"5","labels":{"k":"v"}}}"#,
        ];
        for t in texts {
            // The span is what only the reading without serde finds (tested below).
            let fast = Meta {
                managed_fields_span: None,
                ..parse_meta(t).unwrap()
            };
            assert_eq!(fast, parse_meta_visiting(t).unwrap(), "{t}");
        }
        assert_eq!(parse_meta(texts[3]).unwrap().name, "e");
        for bad in [
            r#"{"metadata":{"name":[]}}"#,
            r#"{"metadata":"x"}"#,
            r#"{"metadata":{"name":"a","name":"b"}}"#,
            r#"{"metadata":{"name":null}}"#,
            r#"{"metadata":{"managedFields":[],"managedFields":[]}}"#,
            "[]",
            "3",
        ] {
            let (a, b) = (parse_meta(bad), parse_meta_visiting(bad));
            assert_eq!(a.unwrap_err().to_string(), b.unwrap_err().to_string());
        }
    }

    /// Reading the metadata finds managedFields' span with one comma, wherever the member
    /// is, as cutting it from the bytes would ([`crate::scan::cut_members`]); none where
    /// serde read the metadata; moved with the bytes when `kind` and `apiVersion` are put
    /// in.
    #[test]
    fn the_managed_fields_span_is_found_while_reading_metadata() {
        for raw in [
            r#"{"metadata":{"name":"a","managedFields":[{"m":"}"}]}}"#,
            r#"{"metadata":{"managedFields":[1],"name":"a"},"spec":{}}"#,
            r#"{"metadata":{"name":"a","managedFields":null,"uid":"u"}}"#,
            r#"{"metadata":{"managedFields":[]}}"#,
            "{ \"metadata\" : { \"name\" : \"a\" ,\n \"managedFields\" : [ 1 ] } }",
            "{ \"metadata\" : { \"managedFields\" : [ 1 ] , \"name\" : \"a\" } }",
        ] {
            let o = Object::from_json(raw).unwrap();
            let b = raw.as_bytes();
            let meta = find_metadata(b).unwrap().unwrap();
            let mut spans = Vec::new();
            crate::scan::cut_members(b, meta, |k| k == b"managedFields", &mut spans).unwrap();
            assert_eq!(spans.len(), 1, "{raw}");
            assert_eq!(o.managed_fields_span(), Some(spans[0]), "{raw}");
        }
        for raw in [
            r#"{"metadata":{"name":"a"}}"#,
            r#"{"metadata":{"name":"\u0061","managedFields":[1]}}"#,
            r#"{"spec":{"managedFields":[1]},"metadata":{}}"#,
        ] {
            assert_eq!(
                Object::from_json(raw).unwrap().managed_fields_span(),
                None,
                "{raw}"
            );
        }
        let typed = Object::from_json(r#"{ "metadata":{"name":"a","managedFields":[1]}}"#)
            .unwrap()
            .typed(&TypeMeta::new("Pod", "v1"));
        let (start, end) = typed.managed_fields_span().unwrap();
        let raw = typed.raw();
        assert_eq!(
            format!("{}{}", &raw[..start], &raw[end..]),
            r#"{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a"}}"#
        );
    }
}
