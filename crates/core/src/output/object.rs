//! An object's JSON as the printers write it: as the server sent it, `metadata.managedFields`
//! cut out of its bytes unless asked for ([`object_json`]).

use serde_json::Value;

use crate::cache::object::ObjectRef;

/// The object's JSON for output: as received, minus `metadata.managedFields` unless asked.
/// The member is cut out of the server's bytes (with one comma), the rest left as it was
/// sent: no tree is built, and the line is the server's JSON as it is with
/// `--show-managed-fields` or for an object without managedFields.
pub(super) fn object_json(o: &ObjectRef, show_managed_fields: bool) -> std::borrow::Cow<'_, str> {
    let raw = o.raw();
    if show_managed_fields || !o.meta().has_managed_fields {
        return raw.into();
    }
    // Where reading the metadata found it: two copies, nothing scanned.
    if let Some((start, end)) = o.managed_fields_span() {
        let mut out = String::with_capacity(raw.len() - (end - start));
        out.push_str(&raw[..start]);
        out.push_str(&raw[end..]);
        return out.into();
    }
    match without_managed_fields(raw) {
        Some(cut) => cut,
        None => object_json_rewritten(o).into(),
    }
}

/// `raw` (an object's validated JSON) without `metadata.managedFields`, cut out of its
/// bytes; `None` when the cut is not certain to leave the same JSON value as a reader
/// would see it (`metadata` twice, a key with an escape on the way): then
/// [`object_json_rewritten`] decides.
pub(crate) fn without_managed_fields(raw: &str) -> Option<std::borrow::Cow<'_, str>> {
    let b = raw.as_bytes();
    let Some(meta) = crate::scan::member(b, crate::scan::skip_ws(b, 0), b"metadata")? else {
        return Some(raw.into());
    };
    let mut spans = Vec::with_capacity(1);
    if b[meta] == b'{' {
        crate::scan::cut_members(b, meta, |k| k == b"managedFields", &mut spans)?;
    }
    Some(if spans.is_empty() {
        raw.into()
    } else {
        crate::scan::without(raw, &spans).into()
    })
}

/// [`object_json`] the way it was made before the cut: parsed into a tree, the member
/// removed, written again (JSON's escapes and numbers in serde_json's form).
pub(crate) fn object_json_rewritten(o: &ObjectRef) -> String {
    let raw = o.raw();
    let mut v = o.to_value();
    if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    serde_json::to_string(&v).unwrap_or_else(|_| raw.to_owned())
}
