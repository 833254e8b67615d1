//! A validating JSON scanner for the hot path: finds where a JSON object ends while
//! checking it as strictly as serde_json does, without building or copying anything.
//!
//! It accepts exactly what serde_json's `ignore_value` accepts (RFC 8259 syntax: no
//! leading zeros, no control characters in strings, escapes `\"\\/bfnrt` and `\uXXXX`),
//! except that it does not check UTF-8: callers check the span they keep with
//! [`std::str::from_utf8`], as serde_json does when it hands out a raw value. Whatever
//! it does not accept, it reports without a reason; callers then ask serde_json, so that
//! errors read as they always did.
//!
//! Beside it, for JSON already validated (or validated once it is whole), the walkers that
//! only count brackets outside strings: [`skip_valid`] (one value), [`each_member`] (an
//! object's members) and [`Boundary`] (a value arriving in pieces, such as a list item
//! cut by a frame). Every JSON structure scan of the crate is one of these, except the
//! list splitter's search for the top-level `"items"` key (`client::list`).

/// The outcome of [`scan_object`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scan {
    /// A complete, valid value ends just before this index.
    End(usize),
    /// Valid so far, but the input ends inside the value.
    Eof,
    /// Invalid JSON, or nested deeper than [`MAX_DEPTH`]: serde_json decides.
    Refused,
}

/// Nesting kept on the scanner's fixed stack (one bit per level).
pub const MAX_DEPTH: usize = 64 * 64;

/// Whitespace as serde_json skips it.
#[inline(always)]
pub fn skip_ws(b: &[u8], mut i: usize) -> usize {
    // Compact JSON has none: one comparison decides.
    if b.get(i).is_some_and(|&c| c > b' ') {
        return i;
    }
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = b.get(i) {
        i += 1;
    }
    i
}

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// In a string whose content starts at `b[i]`: the index of the first `"`, `\` or control
/// character at or after `i`, or `b.len()`.
#[inline(always)]
pub fn to_special(b: &[u8], mut i: usize) -> usize {
    while let Some(chunk) = b.get(i..i + 8) {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        let x = u64::from_le_bytes(w);
        let quote = x ^ (LO * b'"' as u64);
        let slash = x ^ (LO * b'\\' as u64);
        // The lowest flagged byte is exact (borrows only flag bytes above a true hit).
        let hits = (quote.wrapping_sub(LO) & !quote
            | slash.wrapping_sub(LO) & !slash
            | x.wrapping_sub(LO * 0x20) & !x)
            & HI;
        if hits != 0 {
            return i + (hits.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&c) = b.get(i) {
        if c == b'"' || c == b'\\' || c < 0x20 {
            return i;
        }
        i += 1;
    }
    i
}

/// The string whose content starts at `b[i]` (after its opening quote): the index after
/// its closing quote.
#[inline(always)]
fn string(b: &[u8], mut i: usize) -> Scan {
    loop {
        i = to_special(b, i);
        match b.get(i) {
            None => return Scan::Eof,
            Some(b'"') => return Scan::End(i + 1),
            Some(b'\\') => match b.get(i + 1) {
                None => return Scan::Eof,
                Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => i += 2,
                Some(b'u') => {
                    for k in i + 2..i + 6 {
                        match b.get(k) {
                            None => return Scan::Eof,
                            Some(c) if c.is_ascii_hexdigit() => {}
                            Some(_) => return Scan::Refused,
                        }
                    }
                    i += 6;
                }
                Some(_) => return Scan::Refused,
            },
            Some(_) => return Scan::Refused,
        }
    }
}

#[inline]
fn digits(b: &[u8], mut i: usize) -> usize {
    while let Some(b'0'..=b'9') = b.get(i) {
        i += 1;
    }
    i
}

/// The number starting at `b[i]` (`-` or a digit). A number that reaches the end of the
/// input is `Eof`: more digits may follow.
fn number(b: &[u8], mut i: usize) -> Scan {
    if b[i] == b'-' {
        i += 1;
    }
    match b.get(i) {
        None => return Scan::Eof,
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i = digits(b, i + 1),
        Some(_) => return Scan::Refused,
    }
    if b.get(i) == Some(&b'.') {
        let start = i + 1;
        i = digits(b, start);
        if i == b.len() {
            return Scan::Eof;
        }
        if i == start {
            return Scan::Refused;
        }
    }
    if let Some(b'e' | b'E') = b.get(i) {
        i += 1;
        if let Some(b'+' | b'-') = b.get(i) {
            i += 1;
        }
        let start = i;
        i = digits(b, start);
        if i == b.len() {
            return Scan::Eof;
        }
        if i == start {
            return Scan::Refused;
        }
    }
    if i == b.len() {
        Scan::Eof
    } else {
        // serde_json's own check: a digit right after a leading zero is invalid.
        Scan::End(i)
    }
}

/// `true`, `false` or `null` at `b[i]`.
fn ident(b: &[u8], i: usize, word: &[u8]) -> Scan {
    let rest = &b[i..];
    if rest.len() < word.len() {
        if word.starts_with(rest) {
            Scan::Eof
        } else {
            Scan::Refused
        }
    } else if rest.starts_with(word) {
        Scan::End(i + word.len())
    } else {
        Scan::Refused
    }
}

/// Where the member key starting at `b[i]` (before whitespace) ends: the index of its
/// opening quote, the index after its closing quote, and the index after the `:`.
#[inline(always)]
fn member_key(b: &[u8], i: usize) -> Result<(usize, usize, usize), Scan> {
    let open = skip_ws(b, i);
    match b.get(open) {
        None => return Err(Scan::Eof),
        Some(b'"') => {}
        Some(_) => return Err(Scan::Refused),
    }
    let close = match string(b, open + 1) {
        Scan::End(j) => j,
        other => return Err(other),
    };
    let colon = skip_ws(b, close);
    match b.get(colon) {
        None => Err(Scan::Eof),
        Some(b':') => Ok((open, close, colon + 1)),
        Some(_) => Err(Scan::Refused),
    }
}

/// The containers open around the value being scanned, innermost last.
struct Nesting {
    /// Bit `d % 64` of `stack[d / 64]`: whether nesting level `d` is an object.
    stack: [u64; MAX_DEPTH / 64],
    depth: usize,
}

impl Nesting {
    /// Opens a container; `false` past [`MAX_DEPTH`].
    #[inline(always)]
    fn open(&mut self, object: bool) -> bool {
        if self.depth == MAX_DEPTH {
            return false;
        }
        let bit = 1u64 << (self.depth % 64);
        if object {
            self.stack[self.depth / 64] |= bit;
        } else {
            self.stack[self.depth / 64] &= !bit;
        }
        self.depth += 1;
        true
    }

    /// Whether the innermost open container is an object. Some container is open.
    #[inline(always)]
    fn in_object(&self) -> bool {
        let d = self.depth - 1;
        self.stack[d / 64] & (1u64 << (d % 64)) != 0
    }
}

/// The byte that closes an object (`object`) or an array.
#[inline(always)]
fn closing(object: bool) -> u8 {
    if object {
        b'}'
    } else {
        b']'
    }
}

/// A string, number, `true`, `false` or `null` starting with `c` at `b[i]`.
#[inline(always)]
fn scalar(b: &[u8], i: usize, c: u8) -> Scan {
    match c {
        b'"' => string(b, i + 1),
        b't' => ident(b, i, b"true"),
        b'f' => ident(b, i, b"false"),
        b'n' => ident(b, i, b"null"),
        b'-' | b'0'..=b'9' => number(b, i),
        _ => Scan::Refused,
    }
}

/// A JSON object starts at `b[i]` (`{`): where it ends, if it is valid.
pub fn scan_object(b: &[u8], i: usize) -> Scan {
    if b.get(i) != Some(&b'{') {
        return Scan::Refused;
    }
    let mut open = Nesting {
        stack: [0; MAX_DEPTH / 64],
        depth: 0,
    };
    let mut i = i;
    // Reads `"key" :` at `b[i]` (after whitespace); leaves `i` at the value.
    macro_rules! key {
        () => {{
            i = match member_key(b, i) {
                Ok((_, _, value)) => value,
                Err(other) => return other,
            };
        }};
    }
    'value: loop {
        i = skip_ws(b, i);
        let Some(&c) = b.get(i) else {
            return Scan::Eof;
        };
        if c == b'{' || c == b'[' {
            let object = c == b'{';
            if !open.open(object) {
                return Scan::Refused;
            }
            i = skip_ws(b, i + 1);
            match b.get(i) {
                None => return Scan::Eof,
                Some(&end) if end == closing(object) => {
                    open.depth -= 1;
                    i += 1;
                }
                Some(_) => {
                    if object {
                        key!();
                    }
                    continue 'value;
                }
            }
        } else {
            i = match scalar(b, i, c) {
                Scan::End(j) => j,
                other => return other,
            };
        }
        // After a value: a comma, or the end of one or more containers.
        loop {
            if open.depth == 0 {
                return Scan::End(i);
            }
            let object = open.in_object();
            i = skip_ws(b, i);
            match b.get(i) {
                None => return Scan::Eof,
                Some(b',') => {
                    i += 1;
                    if object {
                        key!();
                    }
                    continue 'value;
                }
                Some(&end) if end == closing(object) => {
                    open.depth -= 1;
                    i += 1;
                }
                Some(_) => return Scan::Refused,
            }
        }
    }
}

/// The end of the string starting (with its quote) at `b[i]`, in JSON already validated.
fn skip_string(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    loop {
        let at = to_special(b, j);
        match b.get(at)? {
            b'"' => return Some(at + 1),
            _ => j = at + 2,
        }
    }
}

/// The end of the JSON value starting at `b[i]`, in JSON already validated (by
/// [`scan_object`] or serde_json): it only counts brackets outside strings, several times
/// faster than validating again. `None` where it finds no value.
pub fn skip_valid(b: &[u8], i: usize) -> Option<usize> {
    skip::<false>(b, i, 0)
}

/// [`skip_valid`] of a value nested at most `max_depth` levels deep (a scalar: 0, `[]` or
/// `[1]`: 1); `None` also for one nested deeper. For readers that must refuse what a
/// recursive parser with a depth limit (serde_json's 128) would refuse.
pub fn skip_valid_within(b: &[u8], i: usize, max_depth: usize) -> Option<usize> {
    skip::<true>(b, i, max_depth)
}

/// [`skip_valid`], and with `LIMITED` [`skip_valid_within`] (the check compiled only there).
#[inline(always)]
fn skip<const LIMITED: bool>(b: &[u8], i: usize, max_depth: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => skip_string(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                match *b.get(j)? {
                    b'"' => {
                        j = skip_string(b, j)?;
                        continue;
                    }
                    b'{' | b'[' => {
                        depth += 1;
                        if LIMITED && depth > max_depth {
                            return None;
                        }
                    }
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        _ => {
            let mut j = i;
            while !matches!(
                b.get(j),
                None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
            ) {
                j += 1;
            }
            (j > i).then_some(j)
        }
    }
}

/// [`skip_valid`]'s bracket count for an object or array, resumable: finds where one that
/// started in an earlier buffer (the list splitter's frame) ends, without validating it
/// (the caller validates it once it is whole). For valid JSON it ends exactly where the
/// value does; for invalid JSON anywhere, and the caller's validation then fails.
#[derive(Debug, Default, Clone, Copy)]
pub struct Boundary {
    depth: usize,
    in_string: bool,
    escaped: bool,
}

impl Boundary {
    /// Advances over `data`; the index just after the item's closing bracket if it is in
    /// `data`.
    pub fn find_end(&mut self, data: &[u8]) -> Option<usize> {
        let mut i = 0;
        while i < data.len() {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                    i += 1;
                    continue;
                }
                let at = i + memchr::memchr2(b'"', b'\\', &data[i..])?;
                if data[at] == b'\\' {
                    self.escaped = true;
                } else {
                    self.in_string = false;
                }
                i = at + 1;
                continue;
            }
            match data[i] {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        return Some(i + 1);
                    }
                }
                _ => {}
            }
            i += 1;
        }
        None
    }
}

/// Walks the members of the JSON object at `b[i]` (`{`), in JSON already validated (by
/// [`scan_object`] or serde_json): `visit(key, value_start)` returns where the value ends,
/// or `None` to stop. `None` when stopped, when a key has an escape (its text is not its
/// value), or when `b[i]` is not an object.
pub fn each_member(
    b: &[u8],
    i: usize,
    mut visit: impl FnMut(&[u8], usize) -> Option<usize>,
) -> Option<()> {
    if b.get(i) != Some(&b'{') {
        return None;
    }
    let mut i = skip_ws(b, i + 1);
    if b.get(i) == Some(&b'}') {
        return Some(());
    }
    loop {
        if b.get(i) != Some(&b'"') {
            return None;
        }
        // The key's first special character must be its closing quote: no escape.
        let end = to_special(b, i + 1);
        if b.get(end) != Some(&b'"') {
            return None;
        }
        let key = &b[i + 1..end];
        i = skip_ws(b, end + 1);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(b, visit(key, skip_ws(b, i + 1))?);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b'}') => return Some(()),
            _ => return None,
        }
    }
}

/// The spans of the JSON object at `b[i]` (`{`, JSON already validated) that leave out
/// its members whose key `drop` accepts, each with one comma that joined it to a member
/// kept: the bytes outside the spans are the object without those members, everything
/// else (whitespace, escapes, numbers) as it was. Pushed onto `spans` in order; `Some(n)`:
/// how many members were dropped. `None` (nothing pushed) where [`each_member`] stops: a
/// key with an escape (its text is not its value), or `b[i]` not an object.
pub fn cut_members(
    b: &[u8],
    i: usize,
    mut drop: impl FnMut(&[u8]) -> bool,
    spans: &mut Vec<(usize, usize)>,
) -> Option<usize> {
    let from = spans.len();
    // The end of the previous member's value, and whether a kept member came before.
    let mut prev_end = None;
    let mut kept_before = false;
    // A dropped member with nothing kept before it, cut once the next key's start is
    // known (its comma goes with it): its key's opening quote and its value's end.
    let mut pending: Option<(usize, usize)> = None;
    let mut dropped = 0;
    let walked = each_member(b, i, |key, at| {
        let end = skip_valid(b, at)?;
        // `key` is a slice of `b`: its opening quote is one byte before it.
        let start = key.as_ptr() as usize - b.as_ptr() as usize - 1;
        if let Some((s, _)) = pending.take() {
            spans.push((s, start));
        }
        if drop(key) {
            dropped += 1;
            match prev_end {
                Some(p) if kept_before => spans.push((p, end)),
                _ => pending = Some((start, end)),
            }
        } else {
            kept_before = true;
        }
        prev_end = Some(end);
        Some(end)
    });
    if walked.is_none() {
        spans.truncate(from);
        return None;
    }
    if let Some(span) = pending {
        spans.push(span);
    }
    Some(dropped)
}

/// Where the value of the member `key` of the JSON object at `b[i]` (JSON already
/// validated) starts: `Some(None)` when it has none, `None` when it has it twice (a JSON
/// reader keeps one of them: the caller decides) or [`each_member`] stops.
pub fn member(b: &[u8], i: usize, key: &[u8]) -> Option<Option<usize>> {
    let mut found = None;
    let mut twice = false;
    each_member(b, i, |k, at| {
        if k == key {
            twice |= found.is_some();
            found = Some(at);
        }
        skip_valid(b, at)
    })?;
    (!twice).then_some(found)
}

/// `text` without the spans of [`cut_members`] (in order, not overlapping).
pub fn without(text: &str, spans: &[(usize, usize)]) -> String {
    let cut: usize = spans.iter().map(|(s, e)| e - s).sum();
    let mut out = String::with_capacity(text.len() - cut);
    let mut at = 0;
    for &(s, e) in spans {
        out.push_str(&text[at..s]);
        at = e;
    }
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::value::RawValue;

    /// What serde_json says of the object at the start of `text`.
    fn serde(text: &[u8]) -> Scan {
        let mut it = serde_json::Deserializer::from_slice(text).into_iter::<&RawValue>();
        match it.next() {
            Some(Ok(_)) => Scan::End(it.byte_offset()),
            Some(Err(e)) if e.is_eof() => Scan::Eof,
            _ => Scan::Refused,
        }
    }

    #[test]
    fn accepts_and_refuses_as_serde_does() {
        let texts: &[&str] = &[
            r#"{}"#,
            r#"{"a":1}"#,
            r#" {"a" : [1, -2.5e+3, 0, 0.0, -0, 1E9, true, false, null, "x\"\\\/\b\f\n\r\t\u00e9y", {}, [], [[{}]]] , "b":{"c":{"d":[]}}}  "#,
            r#"{"é":"ü","k":"\ud800"}"#,
            r#"{"a":01}"#,
            r#"{"a":1.}"#,
            r#"{"a":1.e5}"#,
            r#"{"a":1e}"#,
            r#"{"a":-}"#,
            r#"{"a":+1}"#,
            r#"{"a":.5}"#,
            r#"{"a":1,}"#,
            r#"{"a":[1,]}"#,
            r#"{,}"#,
            r#"{"a"}"#,
            r#"{"a":tru}"#,
            r#"{"a":nul,"b":1}"#,
            r#"{"a":"\x"}"#,
            r#"{"a":"\u12g4"}"#,
            "{\"a\":\"\t\"}",
            r#"{"a":[}"#,
            r#"{"a":{]}"#,
            r#"{"a":1}}"#,
            r#"{"a":1 "b":2}"#,
            r#"{1:2}"#,
            r#"[1]"#,
            r#"{"a":1x}"#,
            r#"{"a":"0123456789abcdef\"0123456789\\abcdef"}"#,
        ];
        for t in texts {
            let b = t.as_bytes();
            let at = skip_ws(b, 0);
            let want = match serde(b) {
                Scan::End(_) if b[at] != b'{' => Scan::Refused,
                other => other,
            };
            assert_eq!(scan_object(b, at), want, "{t}");
            // Every strict prefix of a valid object is incomplete, never refused.
            if let Scan::End(end) = want {
                for cut in at + 1..end {
                    assert_eq!(scan_object(&b[..cut], at), Scan::Eof, "{t} cut {cut}");
                }
            }
        }
        let deep = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert_eq!(
            scan_object(format!("{{\"a\":{deep}}}").as_bytes(), 0),
            Scan::Refused
        );
        let ok = "[".repeat(MAX_DEPTH - 1) + &"]".repeat(MAX_DEPTH - 1);
        let text = format!("{{\"a\":{ok}}}");
        assert_eq!(scan_object(text.as_bytes(), 0), Scan::End(text.len()));
    }

    /// `text` (an object) without the members `drop` accepts, by [`cut_members`].
    fn cut(text: &str, drop: &[&str]) -> Option<String> {
        let mut spans = Vec::new();
        let b = text.as_bytes();
        cut_members(
            b,
            skip_ws(b, 0),
            |k| drop.iter().any(|d| d.as_bytes() == k),
            &mut spans,
        )?;
        Some(without(text, &spans))
    }

    #[test]
    fn cutting_members_leaves_the_rest_and_one_comma_less() {
        let cases: &[(&str, &[&str], &str)] = &[
            (r#"{"a":1,"b":2,"c":3}"#, &["a"], r#"{"b":2,"c":3}"#),
            (r#"{"a":1,"b":2,"c":3}"#, &["b"], r#"{"a":1,"c":3}"#),
            (r#"{"a":1,"b":2,"c":3}"#, &["c"], r#"{"a":1,"b":2}"#),
            (r#"{"a":1,"b":2,"c":3}"#, &["a", "c"], r#"{"b":2}"#),
            (r#"{"a":1,"b":2,"c":3}"#, &["a", "b"], r#"{"c":3}"#),
            (r#"{"a":1,"b":2,"c":3}"#, &["b", "c"], r#"{"a":1}"#),
            (r#"{"a":1,"b":2,"c":3}"#, &["a", "b", "c"], r#"{}"#),
            (
                r#"{"a":[1,{"b":"}"}],"b":"x\"y,"}"#,
                &["a"],
                r#"{"b":"x\"y,"}"#,
            ),
            (r#"{"a":{"b":1},"b":2}"#, &["b"], r#"{"a":{"b":1}}"#),
            (r#"{"b":1,"a":2,"b":3}"#, &["b"], r#"{"a":2}"#),
            (r#"{}"#, &["a"], r#"{}"#),
            (
                " { \"a\" : 1 ,\n \"b\" : [ ] } ",
                &["a"],
                " { \"b\" : [ ] } ",
            ),
            (" { \"a\" : 1 ,\n \"b\" : [ ] } ", &["b"], " { \"a\" : 1 } "),
            (" { \"a\" : 1 } ", &["a"], " {  } "),
        ];
        for (text, drop, want) in cases {
            assert_eq!(cut(text, drop).as_deref(), Some(*want), "{text} - {drop:?}");
            let left: serde_json::Value = serde_json::from_str(want).unwrap();
            let mut all: serde_json::Value = serde_json::from_str(text).unwrap();
            for d in *drop {
                all.as_object_mut().unwrap().shift_remove(*d);
            }
            assert_eq!(left, all, "{text}");
        }
        // A key with an escape is not read: nothing is cut.
        assert_eq!(cut(r#"{"\u0061":1,"b":2}"#, &["b"]), None);
        assert_eq!(cut(r#"[1]"#, &["b"]), None);
    }

    /// A value nested deeper than the limit is refused; within it, it ends where
    /// [`skip_valid`] says.
    #[test]
    fn skipping_within_a_depth_refuses_deeper_nesting() {
        let b = br#"[{"a":[1,{"b":"[[["}]},2] "#;
        assert_eq!(skip_valid_within(b, 0, 4), skip_valid(b, 0));
        assert_eq!(skip_valid_within(b, 0, 4), Some(b.len() - 1));
        assert_eq!(skip_valid_within(b, 0, 3), None);
        assert_eq!(skip_valid_within(b"7,", 0, 0), Some(1));
        assert_eq!(skip_valid_within(b"[]", 0, 0), None);
        assert_eq!(skip_valid_within(b"[]", 0, 1), Some(2));
    }
}
