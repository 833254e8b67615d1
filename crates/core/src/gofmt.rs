//! Go's formatting of a decoded JSON value, as kubectl's printers and jsonpath write it:
//! `fmt.Sprint` ([`go_value`], [`go_float`]) and `encoding/json`'s `Marshal` ([`go_json`]).
//! Imports nothing of the crate.

use serde_json::Value;

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
