//! Values written as Go's encoding/json writes them (the apiserver's encoder: HTML
//! escaping on), and the custom marshalers of metav1: Time, MicroTime, Duration.

/// A Go string: `"`, `\` and control characters escaped (`\n \r \t \b \f`, else `\u00XX`),
/// `<`, `>`, `&`, U+2028 and U+2029 as `\uXXXX`, and each byte of invalid UTF-8 as
/// `\ufffd`, as encoding/json does.
pub fn string(out: &mut Vec<u8>, s: &[u8]) {
    out.push(b'"');
    let mut rest = s;
    while !rest.is_empty() {
        let (valid, bad) = match std::str::from_utf8(rest) {
            Ok(v) => (v, 0),
            Err(e) => {
                let (v, _) = rest.split_at(e.valid_up_to());
                // One replacement per byte, as Go's DecodeRune steps one byte on an error.
                let bad = e.error_len().unwrap_or(rest.len() - e.valid_up_to());
                (std::str::from_utf8(v).unwrap_or_default(), bad)
            }
        };
        escape_valid(out, valid);
        for _ in 0..bad {
            out.extend_from_slice(b"\\ufffd");
        }
        rest = &rest[valid.len() + bad..];
    }
    out.push(b'"');
}

fn escape_valid(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let esc: Option<&[u8]> = match b {
            b'"' => Some(b"\\\""),
            b'\\' => Some(b"\\\\"),
            b'\n' => Some(b"\\n"),
            b'\r' => Some(b"\\r"),
            b'\t' => Some(b"\\t"),
            0x08 => Some(b"\\b"),
            0x0c => Some(b"\\f"),
            b'<' => Some(b"\\u003c"),
            b'>' => Some(b"\\u003e"),
            b'&' => Some(b"\\u0026"),
            _ => None,
        };
        if let Some(esc) = esc {
            out.extend_from_slice(&bytes[start..i]);
            out.extend_from_slice(esc);
            i += 1;
            start = i;
        } else if b < 0x20 {
            out.extend_from_slice(&bytes[start..i]);
            out.extend_from_slice(format!("\\u00{b:02x}").as_bytes());
            i += 1;
            start = i;
        } else if b == 0xe2
            && bytes.get(i + 1) == Some(&0x80)
            && matches!(bytes.get(i + 2), Some(0xa8 | 0xa9))
        {
            out.extend_from_slice(&bytes[start..i]);
            out.extend_from_slice(if bytes[i + 2] == 0xa8 {
                b"\\u2028"
            } else {
                b"\\u2029"
            });
            i += 3;
            start = i;
        } else {
            i += 1;
        }
    }
    out.extend_from_slice(&bytes[start..]);
}

/// `[]byte`: standard base64 with padding, quoted.
pub fn base64(out: &mut Vec<u8>, data: &[u8]) {
    use base64::Engine;
    out.push(b'"');
    out.extend_from_slice(
        base64::engine::general_purpose::STANDARD
            .encode(data)
            .as_bytes(),
    );
    out.push(b'"');
}

/// A float64 as encoding/json writes it: the shortest decimal that reads back, in `%f`
/// form, and in `%e` form (exponent without leading zeros) below 1e-6 or from 1e21.
pub fn f64(out: &mut Vec<u8>, f: f64) {
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        exponent(out, &format!("{f:e}"));
    } else {
        out.extend_from_slice(format!("{f}").as_bytes());
    }
}

/// A float32, with float32's shortest digits and thresholds.
pub fn f32(out: &mut Vec<u8>, f: f32) {
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        exponent(out, &format!("{f:e}"));
    } else {
        out.extend_from_slice(format!("{f}").as_bytes());
    }
}

/// Rust's `1e21` / `1.5e-7` as Go's `1e+21` / `1.5e-7`.
fn exponent(out: &mut Vec<u8>, s: &str) {
    match s.split_once('e') {
        Some((m, e)) if !e.starts_with('-') => {
            out.extend_from_slice(m.as_bytes());
            out.extend_from_slice(b"e+");
            out.extend_from_slice(e.as_bytes());
        }
        _ => out.extend_from_slice(s.as_bytes()),
    }
}

/// Unix seconds (and nanoseconds) as RFC 3339 in UTC: `2008-01-01T01:01:01Z`, with
/// `.000000` microseconds for MicroTime (Go truncates, it does not round). `None`: a time
/// outside jiff's range (years -9999 to 9999).
pub fn rfc3339(out: &mut Vec<u8>, secs: i64, nanos: i64, micro: bool) -> Option<()> {
    let t = jiff::Timestamp::new(secs, 0).ok()?;
    out.push(b'"');
    out.extend_from_slice(t.strftime("%Y-%m-%dT%H:%M:%S").to_string().as_bytes());
    if micro {
        out.extend_from_slice(format!(".{:06}", nanos / 1000).as_bytes());
    }
    out.extend_from_slice(b"Z\"");
    Some(())
}

/// Go's time.Duration.String: `1h2m3.5s`, `1.5ms`, `0s`.
pub fn duration(out: &mut Vec<u8>, d: i64) {
    let neg = d < 0;
    let mut u = d.unsigned_abs();
    let mut s = String::new();
    if u < 1_000_000_000 {
        let (prec, unit) = match u {
            0 => {
                out.extend_from_slice(b"\"0s\"");
                return;
            }
            1..=999 => (0, "ns"),
            1000..=999_999 => (3, "µs"),
            _ => (6, "ms"),
        };
        s.push_str(&frac(&mut u, prec));
        s.insert_str(0, &u.to_string());
        s.push_str(unit);
    } else {
        let f = frac(&mut u, 9);
        s = format!("{}{f}s", u % 60);
        u /= 60;
        if u > 0 {
            s = format!("{}m{s}", u % 60);
            u /= 60;
            if u > 0 {
                s = format!("{u}h{s}");
            }
        }
    }
    out.push(b'"');
    if neg {
        out.push(b'-');
    }
    out.extend_from_slice(s.as_bytes());
    out.push(b'"');
}

/// Go's fmtFrac: the fraction of `u / 10^prec` without trailing zeros (and no point
/// when it is zero); `u` becomes the integer part.
fn frac(u: &mut u64, prec: u32) -> String {
    let p = 10u64.pow(prec);
    let f = *u % p;
    *u /= p;
    if f == 0 {
        return String::new();
    }
    let digits = format!("{f:0width$}", width = prec as usize);
    format!(".{}", digits.trim_end_matches('0'))
}

/// Raw JSON (RawExtension, FieldsV1, apiextensions' JSON) as encoding/json embeds a
/// MarshalJSON result: validated, compacted, strings HTML-escaped. `None`: not JSON.
pub fn raw(out: &mut Vec<u8>, raw: &[u8]) -> Option<()> {
    serde_json::from_slice::<serde::de::IgnoredAny>(raw).ok()?;
    compact(out, raw);
    Some(())
}

/// Whitespace outside strings removed; inside strings `<`, `>`, `&`, U+2028 and U+2029
/// escaped (Go's json.Compact with escaping, as Marshal applies to a Marshaler's output).
/// The input is valid JSON.
pub fn compact(out: &mut Vec<u8>, raw: &[u8]) {
    let mut in_str = false;
    let mut i = 0;
    while i < raw.len() {
        let b = raw[i];
        if in_str {
            match b {
                b'\\' => {
                    out.extend_from_slice(&raw[i..i + 2]);
                    i += 2;
                    continue;
                }
                b'"' => in_str = false,
                b'<' | b'>' | b'&' => {
                    out.extend_from_slice(format!("\\u00{b:02x}").as_bytes());
                    i += 1;
                    continue;
                }
                0xe2 if raw.get(i + 1) == Some(&0x80)
                    && matches!(raw.get(i + 2), Some(0xa8 | 0xa9)) =>
                {
                    out.extend_from_slice(if raw[i + 2] == 0xa8 {
                        b"\\u2028"
                    } else {
                        b"\\u2029"
                    });
                    i += 3;
                    continue;
                }
                _ => {}
            }
            out.push(b);
        } else {
            match b {
                b' ' | b'\t' | b'\n' | b'\r' => {}
                b'"' => {
                    in_str = true;
                    out.push(b);
                }
                _ => out.push(b),
            }
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(f: impl FnOnce(&mut Vec<u8>)) -> String {
        let mut out = Vec::new();
        f(&mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn strings_as_go_escapes_them() {
        assert_eq!(
            w(|o| string(o, b"a\"b\\c\n\t<&>\x01\x08\x0c")),
            r#""a\"b\\c\n\t\u003c\u0026\u003e\u0001\b\f""#
        );
        assert_eq!(w(|o| string(o, "é\u{2028}x".as_bytes())), "\"é\\u2028x\"");
        // Invalid UTF-8: one \ufffd per byte, as Go's DecodeRune steps.
        assert_eq!(
            w(|o| string(o, b"a\xe2\x82b\xff")),
            r#""a\ufffd\ufffdb\ufffd""#
        );
    }

    #[test]
    fn base64_pads() {
        assert_eq!(w(|o| base64(o, b"")), r#""""#);
        assert_eq!(w(|o| base64(o, b"f")), r#""Zg==""#);
        assert_eq!(w(|o| base64(o, b"fo")), r#""Zm8=""#);
        assert_eq!(w(|o| base64(o, b"foobar")), r#""Zm9vYmFy""#);
    }

    #[test]
    fn floats_as_go_writes_them() {
        assert_eq!(w(|o| f64(o, 7.0)), "7");
        assert_eq!(w(|o| f64(o, 0.5)), "0.5");
        assert_eq!(w(|o| f64(o, 1e21)), "1e+21");
        assert_eq!(w(|o| f64(o, 1.5e-7)), "1.5e-7");
        assert_eq!(w(|o| f64(o, 1e20)), "100000000000000000000");
        assert_eq!(w(|o| f32(o, 0.1)), "0.1");
    }

    #[test]
    fn times_and_durations() {
        let t = |s, n, micro| w(|o| rfc3339(o, s, n, micro).unwrap());
        assert_eq!(t(1_199_149_261, 5, false), r#""2008-01-01T01:01:01Z""#);
        assert_eq!(t(0, 123_456_789, true), r#""1970-01-01T00:00:00.123456Z""#);
        assert_eq!(t(951_782_400, 0, false), r#""2000-02-29T00:00:00Z""#);
        assert!(rfc3339(&mut Vec::new(), i64::MAX, 0, false).is_none());
        for (d, s) in [
            (0, "0s"),
            (1, "1ns"),
            (1_500, "1.5µs"),
            (1_000_000, "1ms"),
            (1_000_000_000, "1s"),
            (3_723_500_000_000, "1h2m3.5s"),
            (-60_000_000_000, "-1m0s"),
        ] {
            assert_eq!(w(|o| duration(o, d)), format!("\"{s}\""));
        }
    }

    #[test]
    fn raw_json_is_compacted_and_escaped() {
        assert_eq!(
            w(|o| raw(o, b"{ \"a\" : [1, \"<x y>\"] }").unwrap()),
            r#"{"a":[1,"\u003cx y\u003e"]}"#
        );
        assert!(raw(&mut Vec::new(), b"{nope").is_none());
    }
}
