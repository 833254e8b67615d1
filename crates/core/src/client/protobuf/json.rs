//! Values written as Go's encoding/json writes them (the apiserver's encoder: HTML
//! escaping on), and the custom marshalers of metav1: Time, MicroTime, Duration.

/// What `string` does with a byte: copy it (`0`), write `\u00XX` (`U`), check the UTF-8
/// sequence it starts (`NON_ASCII`), or write a backslash and the byte held.
const ESCAPE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = if b < 0x20 {
            U
        } else if b >= 0x80 {
            NON_ASCII
        } else {
            0
        };
        b += 1;
    }
    (t[0x08], t[0x0c], t[b'\n' as usize]) = (b'b', b'f', b'n');
    (t[b'\r' as usize], t[b'\t' as usize]) = (b'r', b't');
    (t[b'"' as usize], t[b'\\' as usize]) = (b'"', b'\\');
    (t[b'<' as usize], t[b'>' as usize], t[b'&' as usize]) = (U, U, U);
    t
};
const U: u8 = 1;
const NON_ASCII: u8 = 2;
const HEX: &[u8; 16] = b"0123456789abcdef";

/// A Go string: `"`, `\` and control characters escaped (`\n \r \t \b \f`, else `\u00XX`),
/// `<`, `>`, `&`, U+2028 and U+2029 as `\uXXXX`, and each byte of invalid UTF-8 as
/// `\ufffd`, as encoding/json does. Runs of bytes that need nothing are copied whole.
pub fn string(out: &mut Vec<u8>, s: &[u8]) {
    out.reserve(s.len() + 2);
    out.push(b'"');
    // Invariant: `s[..start]` is written; `s[start..i]` is to be copied as it is.
    let (mut start, mut i) = (0, 0);
    loop {
        i = next_special(s, i);
        let Some(&b) = s.get(i) else {
            break;
        };
        let class = ESCAPE[usize::from(b)];
        let len = if class == NON_ASCII {
            match char_len(&s[i..]) {
                Some(3) if b == 0xe2 && s[i + 1] == 0x80 && s[i + 2] & 0xfe == 0xa8 => {
                    out.extend_from_slice(&s[start..i]);
                    out.extend_from_slice(if s[i + 2] == 0xa8 {
                        b"\\u2028"
                    } else {
                        b"\\u2029"
                    });
                    3
                }
                Some(n) => {
                    i += n;
                    continue;
                }
                // One replacement per byte, as Go's DecodeRune steps one byte on an error.
                None => {
                    out.extend_from_slice(&s[start..i]);
                    out.extend_from_slice(b"\\ufffd");
                    1
                }
            }
        } else {
            out.extend_from_slice(&s[start..i]);
            if class == U {
                out.extend_from_slice(b"\\u00");
                out.extend_from_slice(&[HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]);
            } else {
                out.extend_from_slice(&[b'\\', class]);
            }
            1
        };
        i += len;
        start = i;
    }
    out.extend_from_slice(&s[start..]);
    out.push(b'"');
}

/// The index of the first byte from `i` on that `string` must look at (its `ESCAPE` class
/// is not 0), or `s.len()`; eight bytes at a time while there are eight.
fn next_special(s: &[u8], mut i: usize) -> usize {
    while let Some(w) = s.get(i..).and_then(<[u8]>::first_chunk::<8>) {
        let mask = special_bytes(u64::from_le_bytes(*w));
        if mask != 0 {
            return i + (mask.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while s.get(i).is_some_and(|b| ESCAPE[usize::from(*b)] == 0) {
        i += 1;
    }
    i
}

/// The high bit of each byte of `w` (little-endian) whose `ESCAPE` class is not 0: below
/// 0x20, from 0x80, `"`, `\`, `<`, `>` or `&`. A byte after a flagged one may be flagged
/// too (a borrow), so only the lowest flag is exact, and whether there is one.
fn special_bytes(w: u64) -> u64 {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = LO << 7;
    // The high bit of each byte of `v` that is below `n` (n at most 0x80; bytes from 0x80
    // are flagged by `w & HI`).
    let below = |v: u64, n: u64| v.wrapping_sub(LO * n) & !v & HI;
    // `"` (0x22) and `&` (0x26) differ in one bit, as do `<` (0x3c) and `>` (0x3e):
    // masking it out makes either byte zero.
    let quote_amp = (w ^ (LO * 0x22)) & !(LO * 0x04);
    let angles = (w ^ (LO * 0x3c)) & !(LO * 0x02);
    let backslash = w ^ (LO * u64::from(b'\\'));
    (w & HI) | below(w, 0x20) | below(quote_amp, 1) | below(angles, 1) | below(backslash, 1)
}

/// The length of the valid UTF-8 sequence of a non-ASCII character that `s` starts with
/// (`None`: invalid or cut short), by the rules of Go's DecodeRune and Rust's `str`: no
/// overlong forms, no surrogates, nothing above U+10FFFF.
fn char_len(s: &[u8]) -> Option<usize> {
    let n = match s.first()? {
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => return None,
    };
    std::str::from_utf8(s.get(..n)?).ok().map(|_| n)
}

/// An unsigned integer in decimal.
pub fn uint(out: &mut Vec<u8>, mut n: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

/// A signed integer in decimal.
pub fn int(out: &mut Vec<u8>, n: i64) {
    if n < 0 {
        out.push(b'-');
    }
    uint(out, n.unsigned_abs());
}

/// `n` (below `10^width`) in `width` digits, zero-padded.
fn digits(out: &mut Vec<u8>, mut n: u32, width: usize) {
    let mut buf = [b'0'; 10];
    for d in buf[..width].iter_mut().rev() {
        *d = b'0' + (n % 10) as u8;
        n /= 10;
    }
    out.extend_from_slice(&buf[..width]);
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
    float(out, f, abs != 0.0 && !(1e-6..1e21).contains(&abs));
}

/// A float32, with float32's shortest digits and thresholds.
pub fn f32(out: &mut Vec<u8>, f: f32) {
    let abs = f.abs();
    float(out, f, abs != 0.0 && !(1e-6..1e21).contains(&abs));
}

/// A float's shortest digits, in `%e` form when `exp` (the thresholds are compared in the
/// float's own width).
fn float(out: &mut Vec<u8>, f: impl std::fmt::Display + std::fmt::LowerExp, exp: bool) {
    if exp {
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

/// Unix seconds (and nanoseconds) as RFC 3339 in UTC, as Go's `time.RFC3339` and
/// `RFC3339Micro` layouts write it: `2008-01-01T01:01:01Z`, with `.000000` microseconds
/// for MicroTime (truncated, not rounded; nanoseconds outside a second carry into it, as
/// Go's `time.Unix` does), and no fraction for Time (metav1.Time drops it when decoding
/// protobuf). `None`: a year outside -9999 to 9999.
pub fn rfc3339(out: &mut Vec<u8>, secs: i64, nanos: i64, micro: bool) -> Option<()> {
    const NANOS: i64 = 1_000_000_000;
    let (secs, nanos) = if micro {
        (
            secs.checked_add(nanos.div_euclid(NANOS))?,
            nanos.rem_euclid(NANOS),
        )
    } else {
        (secs, 0)
    };
    let (days, second) = (secs.div_euclid(86_400), secs.rem_euclid(86_400) as u32);
    let (year, month, day) = civil(days);
    if !(-9999..=9999).contains(&year) {
        return None;
    }
    out.push(b'"');
    // Go's appendInt(year, 4): a sign, then at least four digits.
    if year < 0 {
        out.push(b'-');
    }
    digits(out, year.unsigned_abs() as u32, 4);
    for (sep, n) in [
        (b'-', month),
        (b'-', day),
        (b'T', second / 3600),
        (b':', second / 60 % 60),
        (b':', second % 60),
    ] {
        out.push(sep);
        digits(out, n, 2);
    }
    if micro {
        out.push(b'.');
        digits(out, (nanos / 1000) as u32, 6);
    }
    out.extend_from_slice(b"Z\"");
    Some(())
}

/// The proleptic Gregorian date (year, month 1–12, day 1–31) of a day counted from
/// 1970-01-01 (Howard Hinnant's `civil_from_days`, in eras of 400 years).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365], from March 1st
    let mp = (5 * doy + 2) / 153; // [0, 11], March = 0
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(month <= 2), month, day)
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

    /// encoding/json's string escaping, char by char: the model `string` must equal.
    fn go_escaped(s: &[u8]) -> String {
        let mut q = String::from("\"");
        for chunk in s.utf8_chunks() {
            for c in chunk.valid().chars() {
                match c {
                    '"' => q.push_str("\\\""),
                    '\\' => q.push_str("\\\\"),
                    '\n' => q.push_str("\\n"),
                    '\r' => q.push_str("\\r"),
                    '\t' => q.push_str("\\t"),
                    '\u{8}' => q.push_str("\\b"),
                    '\u{c}' => q.push_str("\\f"),
                    '<' | '>' | '&' | '\u{2028}' | '\u{2029}' | '\0'..='\u{1f}' => {
                        q.push_str(&format!("\\u{:04x}", u32::from(c)))
                    }
                    c => q.push(c),
                }
            }
            q.push_str(&"\\ufffd".repeat(chunk.invalid().len()));
        }
        q + "\""
    }

    #[test]
    fn every_escape_class() {
        for b in 0u8..0x80 {
            assert_eq!(w(|o| string(o, &[b])), go_escaped(&[b]), "byte {b:#x}");
        }
        assert_eq!(
            w(|o| string(o, b"\x00\x1f\x7f \"\\/")),
            r#""\u0000\u001f \"\\/""#.replace(' ', "\x7f ")
        );
        // Valid non-ASCII is copied, U+FFFD too; U+2028 and U+2029 are escaped.
        assert_eq!(
            w(|o| string(o, "ä€😀\u{fffd}\u{2027}\u{2028}\u{2029}\u{202a}".as_bytes())),
            "\"ä€😀\u{fffd}\u{2027}\\u2028\\u2029\u{202a}\""
        );
    }

    #[test]
    fn every_byte_at_every_place_of_a_word() {
        for b in 0..=255u8 {
            for at in 0..20 {
                let mut s = *b"abcdefghijklmnopqrst";
                s[at] = b;
                assert_eq!(w(|o| string(o, &s)), go_escaped(&s), "{b:#x} at {at}");
                assert_eq!(w(|o| string(o, &s[..at + 1])), go_escaped(&s[..at + 1]));
            }
        }
    }

    #[test]
    fn invalid_utf8_is_one_replacement_per_byte() {
        for (bytes, fffds) in [
            (&b"\x80"[..], 1),        // a lone continuation byte
            (b"\xbf\xbf", 2),         // two of them
            (b"\xc3", 1),             // cut short at the end
            (b"\xe2\x80", 2),         // a 3-byte sequence cut short
            (b"\xf0\x9f\x98", 3),     // a 4-byte sequence cut short
            (b"\xc0\x80", 2),         // overlong NUL
            (b"\xe0\x80\xaf", 3),     // overlong '/'
            (b"\xed\xa0\x80", 3),     // a surrogate
            (b"\xf4\x90\x80\x80", 4), // above U+10FFFF
            (b"\xf5\x80", 2),
            (b"\xff", 1),
        ] {
            let mut s = b"a".to_vec();
            s.extend_from_slice(bytes);
            s.push(b'<');
            let want = format!("\"a{}\\u003c\"", "\\ufffd".repeat(fffds));
            assert_eq!(w(|o| string(o, &s)), want, "{bytes:x?}");
            assert_eq!(go_escaped(&s), want, "{bytes:x?}");
        }
    }

    #[test]
    fn strings_match_the_model_on_every_short_mix() {
        const B: [u8; 24] = [
            0x00, 0x1f, b' ', b'"', b'<', b'a', 0x7f, 0x80, 0x9f, 0xa0, 0xa8, 0xa9, 0xbf, 0xc0,
            0xc2, 0xdf, 0xe0, 0xe2, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff,
        ];
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                assert_eq!(w(|o| string(o, &[a, b])), go_escaped(&[a, b]));
            }
        }
        for a in B {
            for b in B {
                for c in B {
                    for d in B {
                        let s = [a, b, c, d];
                        assert_eq!(w(|o| string(o, &s)), go_escaped(&s), "{s:x?}");
                        // Across the eight-byte words of the fast scan.
                        let s = [b"1234567".as_slice(), &s, b"abcdefgh"].concat();
                        assert_eq!(w(|o| string(o, &s)), go_escaped(&s), "{s:x?}");
                    }
                }
            }
        }
    }

    #[test]
    fn integers() {
        assert_eq!(w(|o| uint(o, 0)), "0");
        assert_eq!(w(|o| uint(o, 10)), "10");
        assert_eq!(w(|o| uint(o, u64::MAX)), u64::MAX.to_string());
        assert_eq!(w(|o| int(o, -1)), "-1");
        assert_eq!(w(|o| int(o, i64::MIN)), i64::MIN.to_string());
        assert_eq!(w(|o| int(o, i64::MAX)), i64::MAX.to_string());
    }

    #[test]
    fn timestamps_as_go_formats_them() {
        let t = |s, n, micro| w(|o| rfc3339(o, s, n, micro).unwrap());
        let secs = |s: &str| s.parse::<jiff::Timestamp>().unwrap().as_second();
        for (at, micro) in [
            ("2000-02-29T00:00:00Z", false), // a leap year divisible by 400
            ("2024-02-29T23:59:59Z", false),
            ("2100-03-01T00:00:00Z", false), // 2100 has no February 29th
            ("1900-03-01T00:00:00Z", false),
            ("1972-06-30T23:59:59Z", false), // a leap second's day: Go has no :60
            ("1969-12-31T23:59:59Z", false), // before the epoch
            ("0001-01-01T00:00:00Z", false),
            ("2026-11-27T10:00:00.000000Z", true),
        ] {
            assert_eq!(t(secs(at), 0, micro), format!("\"{at}\""));
        }
        // Time drops its nanoseconds; MicroTime truncates them to microseconds, and
        // nanoseconds outside the second carry into it.
        let epoch = secs("2008-01-01T01:01:01Z");
        assert_eq!(t(epoch, 999_999_999, false), r#""2008-01-01T01:01:01Z""#);
        assert_eq!(
            t(epoch, 999_999_999, true),
            r#""2008-01-01T01:01:01.999999Z""#
        );
        assert_eq!(t(epoch, 1_000, true), r#""2008-01-01T01:01:01.000001Z""#);
        assert_eq!(t(epoch, 999, true), r#""2008-01-01T01:01:01.000000Z""#);
        assert_eq!(
            t(epoch, 1_500_000_000, true),
            r#""2008-01-01T01:01:02.500000Z""#
        );
        assert_eq!(t(epoch, -1, true), r#""2008-01-01T01:01:00.999999Z""#);
        // Years before 1: Go's appendInt(year, 4).
        assert_eq!(t(-62_167_219_200, 0, false), r#""0000-01-01T00:00:00Z""#);
        assert_eq!(t(-62_167_219_201, 0, false), r#""-0001-12-31T23:59:59Z""#);
        assert!(rfc3339(&mut Vec::new(), i64::MAX, 0, false).is_none());
        assert!(rfc3339(&mut Vec::new(), i64::MIN, 0, false).is_none());
        assert!(rfc3339(&mut Vec::new(), i64::MAX, 1_000_000_000, true).is_none());
        // The last second Go writes with four digits (past jiff's range).
        assert_eq!(t(253_402_300_799, 0, false), r#""9999-12-31T23:59:59Z""#);
        assert!(rfc3339(&mut Vec::new(), 253_402_300_800, 0, false).is_none());
    }

    #[test]
    fn timestamps_match_jiff_across_the_years() {
        let (first, last) = (-62_135_596_800i64, 253_402_207_200i64); // years 1 to 9999 (jiff's end)
                                                                      // A step of 1 day, 1 hour, 1 minute and 7 seconds walks every hour, minute and
                                                                      // second and every day of the year many times over.
        let mut s = first;
        while s <= last {
            let want = jiff::Timestamp::new(s, 0)
                .unwrap()
                .strftime("%Y-%m-%dT%H:%M:%SZ");
            assert_eq!(
                w(|o| rfc3339(o, s, 0, false).unwrap()),
                format!("\"{want}\"")
            );
            s += 86_400 + 3_600 + 60 + 7;
        }
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
