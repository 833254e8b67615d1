//! How Go and kubectl format values, shared by the printers: Go's `fmt.Sprint` and
//! `json.Marshal` of a decoded JSON value, apimachinery's label and selector formats, and
//! printers.go's small list helpers (`<none>`, `+ N more...`).

use serde_json::Value;

/// `field` of each element of the array `v`, comma-joined (a missing field is empty).
pub(super) fn join_field(v: &Value, field: &str) -> String {
    v.as_array()
        .into_iter()
        .flatten()
        .map(|x| x[field].as_str().unwrap_or_default())
        .collect::<Vec<_>>()
        .join(",")
}

/// A string field, empty when absent (Go's zero value, as kubectl prints it).
pub(super) fn str_or_empty(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_owned()
}

/// apimachinery's `LabelSelectorAsSelector(s).String()`: requirements sorted by key,
/// `k=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`; empty for no selector.
pub(super) fn label_selector(s: &Value) -> String {
    let mut reqs: Vec<(String, String)> = Vec::new();
    if let Some(m) = s["matchLabels"].as_object() {
        for (k, v) in m {
            reqs.push((k.clone(), format!("{k}={}", v.as_str().unwrap_or_default())));
        }
    }
    for e in s["matchExpressions"].as_array().into_iter().flatten() {
        let k = e["key"].as_str().unwrap_or_default();
        let mut vals: Vec<&str> = e["values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        vals.sort_unstable();
        vals.dedup();
        let r = match e["operator"].as_str().unwrap_or_default() {
            "In" => format!("{k} in ({})", vals.join(",")),
            "NotIn" => format!("{k} notin ({})", vals.join(",")),
            "Exists" => k.to_owned(),
            "DoesNotExist" => format!("!{k}"),
            _ => return "<error>".into(),
        };
        reqs.push((k.to_owned(), r));
    }
    reqs.sort_by(|a, b| a.0.cmp(&b.0));
    reqs.into_iter()
        .map(|(_, r)| r)
        .collect::<Vec<_>>()
        .join(",")
}

/// apimachinery's `FormatLabelSelector`: [`label_selector`], `<none>` when empty.
pub(super) fn format_selector(s: &Value) -> String {
    match label_selector(s) {
        l if l.is_empty() => "<none>".into(),
        l => l,
    }
}

/// printers.go `listWithMoreString`: the first three, `+ N more...`, `<unset>` for none.
pub(super) fn list_with_more(items: impl Iterator<Item = String>) -> String {
    const MAX: usize = 3;
    let mut list = Vec::new();
    let mut count = 0;
    for i in items {
        if list.len() < MAX {
            list.push(i);
        }
        count += 1;
    }
    let ret = list.join(",");
    if count > MAX {
        format!("{ret} + {} more...", count - MAX)
    } else if ret.is_empty() {
        "<unset>".into()
    } else {
        ret
    }
}

/// Go's `json.Marshal` of a JSON value as Kubernetes decodes it: compact, object keys
/// sorted, `<`, `>`, `&`, U+2028 and U+2029 escaped (`\u003c`), integers as int64 and other
/// numbers as float64 (`1e-7`, `1e+21`, `0.25`).
pub fn go_json(v: &Value) -> String {
    let mut out = String::new();
    write_go_json(v, &mut out);
    out
}

fn write_go_json(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => out.push_str(&i.to_string()),
            (None, Some(f)) => out.push_str(&go_json_float(f)),
            (None, None) => out.push_str(&n.to_string()),
        },
        Value::String(s) => go_json_string(s, out),
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_go_json(x, out);
            }
            out.push(']');
        }
        Value::Object(m) => {
            let mut kv: Vec<(&String, &Value)> = m.iter().collect();
            kv.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (k, x)) in kv.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                go_json_string(k, out);
                out.push(':');
                write_go_json(x, out);
            }
            out.push('}');
        }
    }
}

/// encoding/json's string: `\"`, `\\`, `\b \f \n \r \t`, other control characters and
/// the HTML-unsafe `<`, `>`, `&` and U+2028/U+2029 as `\u00XX`.
fn go_json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || matches!(c, '<' | '>' | '&' | '\u{2028}' | '\u{2029}') => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// encoding/json's float64: `'f'` format, or `'e'` below 1e-6 and from 1e21 on, with a
/// one-digit negative exponent unpadded (`1e-7`, `1e+21`).
fn go_json_float(f: f64) -> String {
    let a = f.abs();
    if a == 0.0 || (1e-6..1e21).contains(&a) {
        return format!("{f}");
    }
    let e = format!("{f:e}");
    match e.split_once('e') {
        Some((mantissa, exp)) if !exp.starts_with('-') => format!("{mantissa}e+{exp}"),
        _ => e,
    }
}

/// Go's `fmt.Sprint` of a JSON value as Kubernetes decodes it (integers as int64, other
/// numbers as float64): `map[a:1 b:x]` with sorted keys, `[a b]`, `<nil>`, `1e-07`.
pub fn go_value(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::String(s) => s.clone(),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(f)) => go_float(f),
            (None, None) => n.to_string(),
        },
        Value::Array(a) => format!("[{}]", a.iter().map(go_value).collect::<Vec<_>>().join(" ")),
        Value::Object(m) => {
            let mut kv: Vec<(&String, &Value)> = m.iter().collect();
            kv.sort_by(|a, b| a.0.cmp(b.0));
            let inner: Vec<String> = kv
                .into_iter()
                .map(|(k, v)| format!("{k}:{}", go_value(v)))
                .collect();
            format!("map[{}]", inner.join(" "))
        }
    }
}

/// Go's `%v` of a float64: the shortest digits that round-trip, in exponent form
/// (`1e-07`, `1.5e+06`, two exponent digits at least) when the exponent is below -4 or
/// at least 6 (strconv's `'g'` with the shortest precision).
pub fn go_float(f: f64) -> String {
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let e = format!("{f:e}");
    let Some((mantissa, exp)) = e.split_once('e') else {
        return e;
    };
    let Ok(exp) = exp.parse::<i32>() else {
        return e;
    };
    if (-4..6).contains(&exp) {
        format!("{f}")
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    }
}

pub(super) fn none(v: &Value) -> String {
    match v {
        Value::String(s) if !s.is_empty() => s.clone(),
        Value::Null => "<none>".into(),
        Value::String(_) => "<none>".into(),
        other => other.to_string(),
    }
}

pub(super) fn int(v: &Value) -> String {
    v.as_i64().unwrap_or(0).to_string()
}

/// apimachinery's `labels.FormatLabels`: `k=v` pairs sorted by key, `<none>` when empty.
pub(super) fn map_pairs(v: &Value) -> String {
    match v.as_object() {
        Some(m) if !m.is_empty() => {
            let mut kv: Vec<(&String, &Value)> = m.iter().collect();
            kv.sort_by(|a, b| a.0.cmp(b.0));
            kv.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                .collect::<Vec<_>>()
                .join(",")
        }
        _ => "<none>".into(),
    }
}

/// A resource.Quantity as the object carries it (a string, or a bare JSON number).
pub(super) fn quantity(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => "0".into(),
    }
}

/// The first element of the array `list` whose `type` is `ty` (a condition, an address),
/// as kubectl's printers stop at the first; `None` when `list` is not an array.
pub(super) fn of_type<'a>(list: &'a Value, ty: &str) -> Option<&'a Value> {
    list.as_array()?.iter().find(|e| e["type"] == ty)
}
