//! YAML: the JSON-lines records as a multi-document stream, written as kubectl writes
//! YAML (sigs.k8s.io/yaml → go-yaml v2 → libyaml's emitter): block style, two-space
//! indentation, sequences at their key's column, and every string a YAML 1.1 reader
//! would take for something else double-quoted (`"no"`, `"on"`, `"12:30:00"`,
//! `"2024-01-01"`, `"1e3"`, `""`), so PyYAML and other YAML 1.1 tools read back exactly
//! the JSON values.
//!
//! The only file that knows YAML: a hand-written emitter over `serde_json::Value`, so
//! nothing depends on serde_yaml (archived upstream). Unlike go-yaml, long strings are
//! not folded at 80 columns (the value read back is the same).

use std::fmt::Write as _;
use std::io::{self, BufWriter, Write};

use serde_json::{Map, Value};

use crate::scan::{skip_valid, skip_ws, to_special};

use super::diagnostics::{self, Diagnostics};
use super::object::object_json;
use super::options::Options;
use super::record::{DiffField, Line};
use crate::informer::diff;
use crate::informer::record::Record;
use crate::informer::sink::Sink;

pub struct YamlPrinter<W: Write> {
    opts: Options,
    w: BufWriter<W>,
    diag: Diagnostics,
}

impl<W: Write> YamlPrinter<W> {
    pub fn new(opts: Options, w: W, diag: Diagnostics) -> Self {
        YamlPrinter {
            opts,
            w: BufWriter::new(w),
            diag,
        }
    }
}

impl<W: Write + Send> Sink for YamlPrinter<W> {
    fn record(&mut self, rec: &Record<'_>) -> io::Result<()> {
        let time = crate::text::format_time(rec.time);
        let mut line = Line::of(rec, &time);
        if let Some(d) = rec.diff(self.opts.diff) {
            if let Some(c) = line.diff_mut() {
                c.changed = Some(d.changed);
                // For people: `path: old → new`, one string per changed path.
                c.diff = d.known.then(|| DiffField::Lines(diff::lines(&d)));
            }
        }
        if let Some(b) = rec.blame(self.opts.blame) {
            if let Some(c) = line.diff_mut() {
                c.blame = Some(b.to_vec());
            }
        }
        let mut out = String::with_capacity(4096);
        out.push_str("---\n");
        header(&mut out, &line)?;
        for (name, obj) in rec.objects() {
            let Some(o) = obj else { continue };
            let json = object_json(o, self.opts.show_managed_fields);
            let at = out.len();
            if !entry_from_json(&mut out, name, &json) {
                out.truncate(at);
                entry_from_value(&mut out, name, &json);
            }
        }
        self.w.write_all(out.as_bytes())
    }

    fn diagnostic(&mut self, line: &str) -> io::Result<()> {
        diagnostics::say(&mut self.diag, line)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

/// The record's fields (all but its objects) as [`mapping`] writes their [`Value`]:
/// serialized to JSON and written by the one-pass [`Emitter`], without a tree; where the
/// emitter hands over (see [`entry_from_json`]), from the [`Value`].
fn header(out: &mut String, line: &Line<'_>) -> io::Result<()> {
    let at = out.len();
    if !tree_headers() {
        if let Ok(json) = serde_json::to_string(line) {
            let mut e = Emitter {
                s: &json,
                b: json.as_bytes(),
                out,
                keys: Vec::new(),
                depth: 0,
            };
            let i = skip_ws(e.b, 0);
            let whole = e.b.get(i) == Some(&b'{')
                && !e.empty(i).0
                && e.mapping(i, 0, false)
                    .is_some_and(|end| skip_ws(e.b, end) == e.b.len());
            if whole {
                return Ok(());
            }
        }
        out.truncate(at);
    }
    let m = match serde_json::to_value(line).map_err(io::Error::other)? {
        Value::Object(m) => m,
        _ => return Err(io::Error::other("a record is not a mapping")),
    };
    mapping(out, &m, 0, false);
    Ok(())
}

#[cfg(test)]
thread_local! {
    /// Tests: the record's fields written from their [`Value`] alone, as before the
    /// one-pass emitter wrote them (to compare the two).
    pub(super) static TREE_HEADERS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn tree_headers() -> bool {
    #[cfg(test)]
    return TREE_HEADERS.with(std::cell::Cell::get);
    #[cfg(not(test))]
    false
}

/// `name:` and the object `json` (valid JSON) as [`mapping`] writes them for its parsed
/// value, written in one pass over the JSON's bytes: no tree is built. `false`, with
/// part of it written, where the pass does not write what the tree would (a key with an
/// escape or written twice, a string serde_json refuses, nesting near serde_json's limit):
/// the caller then truncates `out` and asks [`entry_from_value`].
fn entry_from_json(out: &mut String, name: &str, json: &str) -> bool {
    scalar(out, name, None);
    out.push(':');
    let mut e = Emitter {
        s: json,
        b: json.as_bytes(),
        out,
        keys: Vec::new(),
        depth: 0,
    };
    let i = skip_ws(e.b, 0);
    e.entry_value(i, 0)
        .is_some_and(|end| skip_ws(e.b, end) == e.b.len())
}

/// `name:` and the object `json` parsed into a tree, as [`document`] writes it; an object
/// beyond what a recursive parser takes (nesting deeper than 128) is `null` and its error
/// under `{name}Error`, so the stream goes on.
fn entry_from_value(out: &mut String, name: &str, json: &str) {
    let mut m = Map::new();
    match serde_json::from_str(json) {
        Ok(v) => {
            m.insert(name.into(), v);
        }
        Err(e) => {
            m.insert(name.into(), Value::Null);
            m.insert(format!("{name}Error"), Value::String(e.to_string()));
        }
    }
    mapping(out, &m, 0, false);
}

/// Nesting the one-pass emitter writes; deeper, the tree decides (serde_json's limit is
/// 128).
const MAX_EMIT_DEPTH: usize = 100;

/// The one-pass YAML emitter over valid JSON: the same layout as [`mapping`],
/// [`sequence`] and [`leaf`] over a parsed value. Each method takes the index of a
/// value (after whitespace) and returns the index after it; `None`: see
/// [`entry_from_json`].
struct Emitter<'a, 'o> {
    s: &'a str,
    b: &'a [u8],
    out: &'o mut String,
    /// The keys of the mappings being written, innermost last (to find one written twice).
    keys: Vec<&'a [u8]>,
    depth: usize,
}

impl<'a> Emitter<'a, '_> {
    /// Whether the object or array at `b[i]` is empty, and the index after its first
    /// byte's whitespace.
    fn empty(&self, i: usize) -> (bool, usize) {
        let j = skip_ws(self.b, i + 1);
        (matches!(self.b.get(j), Some(b'}' | b']')), j)
    }

    /// A mapping entry's value after its `key:`, as [`mapping`] writes it.
    fn entry_value(&mut self, i: usize, indent: usize) -> Option<usize> {
        match self.b.get(i)? {
            b'{' if !self.empty(i).0 => {
                self.out.push('\n');
                self.mapping(i, indent + 2, false)
            }
            b'[' if !self.empty(i).0 => {
                self.out.push('\n');
                self.sequence(i, indent, false)
            }
            _ => {
                self.out.push(' ');
                self.leaf(i, indent + 2)
            }
        }
    }

    /// The non-empty object at `b[i]`, as [`mapping`] writes it.
    fn mapping(&mut self, i: usize, indent: usize, inline_first: bool) -> Option<usize> {
        self.depth += 1;
        if self.depth > MAX_EMIT_DEPTH {
            return None;
        }
        let first_key = self.keys.len();
        let mut i = skip_ws(self.b, i + 1);
        loop {
            // A key without an escape: its first special character is its closing quote.
            if self.b.get(i) != Some(&b'"') {
                return None;
            }
            let end = to_special(self.b, i + 1);
            if self.b.get(end) != Some(&b'"') {
                return None;
            }
            let key = &self.b[i + 1..end];
            // Length and first byte first: most keys differ there, without a memcmp.
            let seen = self.keys[first_key..]
                .iter()
                .any(|k| k.len() == key.len() && k.first() == key.first() && *k == key);
            if seen {
                return None;
            }
            self.keys.push(key);
            if self.keys.len() > first_key + 1 || !inline_first {
                pad(self.out, indent);
            }
            scalar(self.out, self.s.get(i + 1..end)?, None);
            self.out.push(':');
            i = skip_ws(self.b, end + 1);
            if self.b.get(i) != Some(&b':') {
                return None;
            }
            i = skip_ws(self.b, i + 1);
            i = skip_ws(self.b, self.entry_value(i, indent)?);
            match self.b.get(i)? {
                b',' => i = skip_ws(self.b, i + 1),
                b'}' => break,
                _ => return None,
            }
        }
        self.keys.truncate(first_key);
        self.depth -= 1;
        Some(i + 1)
    }

    /// The non-empty array at `b[i]`, as [`sequence`] writes it.
    fn sequence(&mut self, i: usize, indent: usize, inline_first: bool) -> Option<usize> {
        self.depth += 1;
        if self.depth > MAX_EMIT_DEPTH {
            return None;
        }
        let mut i = skip_ws(self.b, i + 1);
        let mut first = true;
        loop {
            if !first || !inline_first {
                pad(self.out, indent);
            }
            first = false;
            self.out.push_str("- ");
            let end = match self.b.get(i)? {
                b'{' if !self.empty(i).0 => self.mapping(i, indent + 2, true)?,
                b'[' if !self.empty(i).0 => self.sequence(i, indent + 2, true)?,
                _ => self.leaf(i, indent + 2)?,
            };
            i = skip_ws(self.b, end);
            match self.b.get(i)? {
                b',' => i = skip_ws(self.b, i + 1),
                b']' => break,
                _ => return None,
            }
        }
        self.depth -= 1;
        Some(i + 1)
    }

    /// A scalar or an empty collection at `b[i]`, then the end of its line, as [`leaf`]
    /// writes it.
    fn leaf(&mut self, i: usize, indent: usize) -> Option<usize> {
        let b = self.b;
        let end = match b.get(i)? {
            b'{' | b'[' => {
                let (empty, j) = self.empty(i);
                if !empty {
                    return None;
                }
                self.out.push_str(if b[i] == b'{' { "{}" } else { "[]" });
                j + 1
            }
            b'"' => {
                let end = to_special(b, i + 1);
                if b.get(end) == Some(&b'"') {
                    scalar(self.out, self.s.get(i + 1..end)?, Some(indent));
                    end + 1
                } else {
                    let end = skip_valid(b, i)?;
                    let text: String = serde_json::from_str(self.s.get(i..end)?).ok()?;
                    scalar(self.out, &text, Some(indent));
                    end
                }
            }
            b'n' => {
                self.out.push_str("null");
                i + 4
            }
            b't' => {
                self.out.push_str("true");
                i + 4
            }
            b'f' => {
                self.out.push_str("false");
                i + 5
            }
            _ => {
                let end = skip_valid(b, i)?;
                let text = self.s.get(i..end)?;
                if plain_integer(text) {
                    self.out.push_str(text);
                } else {
                    let n: serde_json::Number = serde_json::from_str(text).ok()?;
                    number(self.out, &n);
                }
                end
            }
        };
        if !self.out.ends_with('\n') {
            self.out.push('\n');
        }
        Some(end)
    }
}

/// A JSON integer serde_json reads as an `i64` or `u64` and writes back as it is: up to 18
/// digits, negative or not, but `-0`.
fn plain_integer(t: &str) -> bool {
    let digits = t.strip_prefix('-').unwrap_or(t);
    !digits.is_empty()
        && digits.len() <= 18
        && digits.bytes().all(|c| c.is_ascii_digit())
        && t != "-0"
}

/// One document: `---`, then the mapping in block style.
pub fn document(m: &Map<String, Value>) -> String {
    let mut out = String::from("---\n");
    if m.is_empty() {
        out.push_str("{}\n");
    } else {
        mapping(&mut out, m, 0, false);
    }
    out
}

fn pad(out: &mut String, n: usize) {
    const SPACES: &str = "                                ";
    let mut left = n;
    while left > 0 {
        let k = left.min(SPACES.len());
        out.push_str(&SPACES[..k]);
        left -= k;
    }
}

/// The entries of `m`, each at column `indent`; the first one without its padding
/// when it follows a sequence's `- `.
fn mapping(out: &mut String, m: &Map<String, Value>, indent: usize, inline_first: bool) {
    for (i, (k, v)) in m.iter().enumerate() {
        if i > 0 || !inline_first {
            pad(out, indent);
        }
        scalar(out, k, None);
        out.push(':');
        match v {
            Value::Object(c) if !c.is_empty() => {
                out.push('\n');
                mapping(out, c, indent + 2, false);
            }
            // go-yaml writes a mapping's sequence at the key's column.
            Value::Array(a) if !a.is_empty() => {
                out.push('\n');
                sequence(out, a, indent, false);
            }
            _ => {
                out.push(' ');
                leaf(out, v, indent + 2);
            }
        }
    }
}

/// The items of `a`, each `- ` at column `indent`.
fn sequence(out: &mut String, a: &[Value], indent: usize, inline_first: bool) {
    for (i, v) in a.iter().enumerate() {
        if i > 0 || !inline_first {
            pad(out, indent);
        }
        out.push_str("- ");
        match v {
            Value::Object(c) if !c.is_empty() => mapping(out, c, indent + 2, true),
            Value::Array(c) if !c.is_empty() => sequence(out, c, indent + 2, true),
            _ => leaf(out, v, indent + 2),
        }
    }
}

/// A scalar or an empty collection, then the end of its line. `indent`: the column of a
/// literal block's lines.
fn leaf(out: &mut String, v: &Value, indent: usize) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => number(out, n),
        Value::String(s) => scalar(out, s, Some(indent)),
        Value::Array(_) => out.push_str("[]"),
        Value::Object(_) => out.push_str("{}"),
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
}

/// A JSON number as YAML 1.1 reads it back as the same number: a float in exponent
/// form gets a fraction and a signed exponent (`1e30` would be a string to YAML 1.1).
fn number(out: &mut String, n: &serde_json::Number) {
    let s = n.to_string();
    if n.is_f64() {
        if let Some((mant, exp)) = s.split_once(['e', 'E']) {
            let mant = if mant.contains('.') {
                mant.to_owned()
            } else {
                format!("{mant}.0")
            };
            let exp = if exp.starts_with(['+', '-']) {
                exp.to_owned()
            } else {
                format!("+{exp}")
            };
            let _ = write!(out, "{mant}e{exp}");
            return;
        }
    }
    out.push_str(&s);
}

/// A string in the style libyaml picks under go-yaml's rules: plain when a reader takes
/// it back as this string, double-quoted when it would resolve to another type (or holds
/// characters that need escapes), single-quoted when it only collides with YAML syntax,
/// a literal block (`|`) for multi-line text when `block_indent` allows one (not keys).
fn scalar(out: &mut String, s: &str, block_indent: Option<usize>) {
    // One pass over the bytes decides the common cases: a simple word, or printable
    // ASCII (no character needs an escape, no line break), where only the YAML 1.1
    // resolution and libyaml's plain rule are left to decide.
    let b = s.as_bytes();
    let class = b
        .iter()
        .fold(WORD | PRINTABLE, |a, &c| a & CLASS[usize::from(c)]);
    if class & WORD != 0 && b.first().is_some_and(u8::is_ascii_alphabetic) {
        if is_word(s) {
            return double_quoted(out, s);
        }
        return out.push_str(s);
    }
    if class & PRINTABLE != 0 {
        if resolves_to_non_string(s) {
            return double_quoted(out, s);
        }
        return plain_or_single_quoted(out, s);
    }
    scalar_by_chars(out, s, block_indent);
}

/// [`CLASS`]: a byte [`simple_word`] accepts after its first.
const WORD: u8 = 1;
/// [`CLASS`]: printable ASCII (space to `~`): no escape, no line break.
const PRINTABLE: u8 = 2;

/// [`WORD`] and [`PRINTABLE`] of each byte.
static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut c: u8 = 0x20;
    while c < 0x7f {
        let word = c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'/' | b'_');
        t[c as usize] = PRINTABLE | if word { WORD } else { 0 };
        c += 1;
    }
    t
};

/// A plain scalar where libyaml's plain rule allows one, else single-quoted.
fn plain_or_single_quoted(out: &mut String, s: &str) {
    if plain_ok(s) {
        out.push_str(s);
    } else {
        out.push('\'');
        out.push_str(&s.replace('\'', "''"));
        out.push('\'');
    }
}

/// [`scalar`] by the general rules, character by character.
fn scalar_by_chars(out: &mut String, s: &str, block_indent: Option<usize>) {
    scalar_by_rules(out, s, block_indent, double_quoted);
}

/// [`scalar_by_chars`], with `quoted` writing the double-quoted style.
fn scalar_by_rules(
    out: &mut String,
    s: &str,
    block_indent: Option<usize>,
    quoted: fn(&mut String, &str),
) {
    if simple_word(s) {
        if is_word(s) {
            return quoted(out, s);
        }
        return out.push_str(s);
    }
    if resolves_to_non_string(s) || s.chars().any(needs_escape) {
        return quoted(out, s);
    }
    if s.contains('\n') {
        return match block_indent {
            Some(indent) if literal_ok(s) => literal(out, s, indent),
            _ => quoted(out, s),
        };
    }
    plain_or_single_quoted(out, s);
}

/// Characters written only as escapes, inside double quotes: what libyaml does not count
/// printable (C0 but `\n`, DEL, C1, BOM, U+FFFE/FFFF) and the Unicode line breaks a YAML
/// 1.1 reader would split a line at.
fn needs_escape(c: char) -> bool {
    (c.is_control() && c != '\n')
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
        )
}

/// Whether a YAML 1.1 reader (go-yaml v2's resolver, PyYAML's) would read the plain
/// scalar `s` as a null, bool, number, timestamp, merge key or value key.
pub fn resolves_to_non_string(s: &str) -> bool {
    is_word(s) || is_number(s) || is_timestamp(s)
}

/// A plain scalar a YAML 1.1 reader takes for a null, a bool, a special float, a merge
/// key or a value key, by a `match` the compiler turns into length and byte tests.
fn is_word(s: &str) -> bool {
    matches!(
        s,
        "" | "~"
            | "null"
            | "Null"
            | "NULL"
            | "y"
            | "Y"
            | "yes"
            | "Yes"
            | "YES"
            | "n"
            | "N"
            | "no"
            | "No"
            | "NO"
            | "true"
            | "True"
            | "TRUE"
            | "false"
            | "False"
            | "FALSE"
            | "on"
            | "On"
            | "ON"
            | "off"
            | "Off"
            | "OFF"
            | ".nan"
            | ".NaN"
            | ".NAN"
            | ".inf"
            | ".Inf"
            | ".INF"
            | "+.inf"
            | "+.Inf"
            | "+.INF"
            | "-.inf"
            | "-.Inf"
            | "-.INF"
            | "<<"
            | "="
    )
}

/// The plain scalars a YAML 1.1 reader takes for a null or a bool (and the other
/// special words): what [`is_word`] matches, as a list for its test.
#[cfg(test)]
const WORDS: &[&str] = &[
    "", "~", "null", "Null", "NULL", "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO",
    "true", "True", "TRUE", "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF",
    ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf",
    "-.INF", "<<", "=",
];

/// A string [`scalar`] decides on without the general rules: a letter, then letters,
/// digits, `-`, `.`, `/` and `_` only. Such a string is no number or timestamp (those
/// start with a digit, a sign or a dot) and needs no quotes, escapes or block, so it is
/// plain unless it is one of [`is_word`]'s (`yes`, `null`…).
fn simple_word(s: &str) -> bool {
    let b = s.as_bytes();
    b.first().is_some_and(u8::is_ascii_alphabetic)
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'/' | b'_'))
}

/// YAML 1.1 ints and floats: decimal (underscores allowed), `0x`, `0o`, `0b`, octal,
/// exponents, and base 60 (`12:30:00`, `1:20.5`).
fn is_number(s: &str) -> bool {
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    let all = |t: &str, ok: fn(char) -> bool| !t.is_empty() && t.chars().all(ok);
    if let Some(h) = body.strip_prefix("0x") {
        return all(h, |c| c.is_ascii_hexdigit() || c == '_');
    }
    if let Some(b) = body.strip_prefix("0b") {
        return all(b, |c| matches!(c, '0' | '1' | '_'));
    }
    if let Some(o) = body.strip_prefix("0o") {
        return all(o, |c| matches!(c, '0'..='7' | '_'));
    }
    if body.contains(':') {
        // Base 60: digits, then `:` groups of one or two digits below 60, the last with
        // an optional fraction.
        let mut parts = body.split(':');
        let first = parts.next().unwrap_or_default();
        if !first.starts_with(|c: char| c.is_ascii_digit())
            || !all(first, |c| c.is_ascii_digit() || c == '_')
        {
            return false;
        }
        let rest: Vec<&str> = parts.collect();
        return rest.iter().enumerate().all(|(i, p)| {
            let p = match p.split_once('.') {
                Some((whole, frac)) if i + 1 == rest.len() => {
                    if !frac.chars().all(|c| c.is_ascii_digit() || c == '_') {
                        return false;
                    }
                    whole
                }
                _ => p,
            };
            let b = p.as_bytes();
            match b {
                [d] => d.is_ascii_digit(),
                [t, d] => (b'0'..=b'5').contains(t) && d.is_ascii_digit(),
                _ => false,
            }
        });
    }
    // Decimal ints and floats (go-yaml: `(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`
    // once underscores are dropped; PyYAML's forms are within it): none has another
    // character.
    if !body
        .bytes()
        .all(|c| c.is_ascii_digit() || matches!(c, b'_' | b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return false;
    }
    let plain: String = body.chars().filter(|&c| c != '_').collect();
    let (mant, exp) = match plain.split_once(['e', 'E']) {
        Some((m, e)) => (m, Some(e)),
        None => (plain.as_str(), None),
    };
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let mant_ok = match mant.split_once('.') {
        Some(("", frac)) => digits(frac),
        Some((whole, frac)) => digits(whole) && (frac.is_empty() || digits(frac)),
        None => digits(mant),
    };
    let exp_ok = exp.is_none_or(|e| digits(e.strip_prefix(['+', '-']).unwrap_or(e)));
    mant_ok && exp_ok && body != "_" && !plain.is_empty()
}

/// `YYYY-M-D`, alone or followed by a time (`T`, `t` or spaces): YAML 1.1 timestamps.
fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 8 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return false;
    }
    let rest = &s[5..];
    let date_part = |t: &str| -> Option<usize> {
        let n = t.bytes().take_while(u8::is_ascii_digit).count();
        (1..=2).contains(&n).then_some(n)
    };
    let Some(m) = date_part(rest) else {
        return false;
    };
    let Some(after_month) = rest[m..].strip_prefix('-') else {
        return false;
    };
    let Some(d) = date_part(after_month) else {
        return false;
    };
    let tail = &after_month[d..];
    tail.is_empty() || tail.starts_with(['T', 't', ' ', '\t'])
}

/// libyaml's rule for a plain scalar in block context (the string is on one line, has
/// no characters needing escapes and resolves to a string).
fn plain_ok(s: &str) -> bool {
    if s.starts_with(' ') || s.ends_with(' ') || s.starts_with("---") || s.starts_with("...") {
        return false;
    }
    // Every character the rules look at is ASCII, and so is a space: a byte next to one
    // is the next or previous character's (UTF-8's other bytes are all from 0x80).
    let b = s.as_bytes();
    let blank_after = |i: usize| b.get(i + 1).is_none_or(|c| *c == b' ');
    match b.first() {
        Some(
            b'#' | b',' | b'[' | b']' | b'{' | b'}' | b'&' | b'*' | b'!' | b'|' | b'>' | b'\''
            | b'"' | b'%' | b'@' | b'`',
        ) => return false,
        Some(b'?' | b':' | b'-') if blank_after(0) => return false,
        _ => {}
    }
    for (i, c) in b.iter().enumerate() {
        match c {
            b':' if blank_after(i) => return false,
            b'#' if i > 0 && b[i - 1] == b' ' => return false,
            _ => {}
        }
    }
    true
}

/// Whether multi-line `s` can be a literal block: no space before a line break or at
/// the end, no leading space or break (that would need an indentation indicator).
fn literal_ok(s: &str) -> bool {
    !s.starts_with([' ', '\n']) && !s.contains(" \n") && !s.ends_with(' ')
}

/// `|`, `|-` or `|+` (the trailing newlines kept exactly), then the lines at `indent`.
fn literal(out: &mut String, s: &str, indent: usize) {
    let body = s.strip_suffix('\n').unwrap_or(s);
    out.push_str(match (s.ends_with('\n'), body.ends_with('\n')) {
        (false, _) => "|-",
        (true, false) => "|",
        (true, true) => "|+",
    });
    out.push('\n');
    for line in body.split('\n') {
        if !line.is_empty() {
            pad(out, indent);
            out.push_str(line);
        }
        out.push('\n');
    }
}

/// libyaml's double-quoted style: `"` and `\` escaped, and every character that needs
/// it as YAML's short escapes, else `\xXX`, `\uXXXX`, `\UXXXXXXXX`.
fn double_quoted(out: &mut String, s: &str) {
    // Printable ASCII without a quote or a backslash (a timestamp, `"yes"`) is written
    // as it is.
    if s.bytes()
        .all(|c| CLASS[usize::from(c)] & PRINTABLE != 0 && c != b'"' && c != b'\\')
    {
        out.push('"');
        out.push_str(s);
        out.push('"');
        return;
    }
    double_quoted_by_chars(out, s);
}

/// [`double_quoted`] character by character.
fn double_quoted_by_chars(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\0' => out.push_str("\\0"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{b}' => out.push_str("\\v"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            '\u{1b}' => out.push_str("\\e"),
            '\u{85}' => out.push_str("\\N"),
            '\u{a0}' => out.push_str("\\_"),
            '\u{2028}' => out.push_str("\\L"),
            '\u{2029}' => out.push_str("\\P"),
            c if needs_escape(c) => {
                let n = u32::from(c);
                let _ = if n <= 0xff {
                    write!(out, "\\x{n:02X}")
                } else {
                    write!(out, "\\u{n:04X}")
                };
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn yaml(v: Value) -> String {
        match v {
            Value::Object(m) => document(&m),
            _ => unreachable!(),
        }
    }

    #[test]
    fn quotes_what_yaml_1_1_reads_as_another_type_as_kubectl_does() {
        let out = yaml(json!({
            "a": "no", "b": "yes", "c": "on", "d": "12:30:00", "e": "2024-01-01", "f": "",
            "g": "*", "i": "1e3", "j": "0x1F", "k": "~", "l": "a\u{1b}[2Jb", "m": "y",
            "n": "1_000", "o": "-1.5", "p": ".inf", "q": "1:2:3x", "r": "web-1", "s": "a: b",
            "t": "it's", "u": " lead", "v": "- x", "w": "größe", "x": "10.244.0.1",
            "z": "2024-01-01T10:00:00Z", "aa": "012", "ab": "=", "ac": "null",
        }));
        assert_eq!(
            out,
            "---\na: \"no\"\nb: \"yes\"\nc: \"on\"\nd: \"12:30:00\"\ne: \"2024-01-01\"\nf: \"\"\n\
             g: '*'\ni: \"1e3\"\nj: \"0x1F\"\nk: \"~\"\nl: \"a\\e[2Jb\"\nm: \"y\"\n\
             \"n\": \"1_000\"\no: \"-1.5\"\np: \".inf\"\nq: 1:2:3x\nr: web-1\ns: 'a: b'\n\
             t: it's\nu: ' lead'\nv: '- x'\nw: größe\nx: 10.244.0.1\n\
             z: \"2024-01-01T10:00:00Z\"\naa: \"012\"\nab: \"=\"\nac: \"null\"\n"
        );
    }

    #[test]
    fn block_layout_as_go_yaml_writes_it() {
        let out = yaml(json!({
            "spec": {"containers": [{"name": "a", "ports": [{"port": 80}], "args": []},
                                    {"name": "b", "env": {}}],
                     "matrix": [[1, 2], []]},
            "script": "line 1\n  indented\n\nlast\n",
            "nochomp": "a\nb",
            "keep": "a\n\n",
            "trailing space": "a \nb",
            "n": 1.5, "big": 1e30, "neg": -3, "t": true, "nil": null,
        }));
        assert_eq!(
            out,
            "---\nspec:\n  containers:\n  - name: a\n    ports:\n    - port: 80\n    args: []\n\
             \x20 - name: b\n    env: {}\n  matrix:\n  - - 1\n    - 2\n  - []\n\
             script: |\n  line 1\n    indented\n\n  last\nnochomp: |-\n  a\n  b\n\
             keep: |+\n  a\n\ntrailing space: \"a \\nb\"\n\"n\": 1.5\nbig: 1.0e+30\nneg: -3\n\
             t: true\nnil: null\n"
        );
    }

    #[test]
    fn numbers_and_timestamps_are_recognised_like_a_yaml_1_1_reader() {
        for s in [
            "0",
            "-0",
            "+12",
            "1.",
            ".5",
            "1.5e-3",
            "0b101",
            "0o17",
            "190:20:30",
            "1:20.5",
            "2024-1-2",
            "2001-12-14 21:59:43.10 -5",
        ] {
            assert!(resolves_to_non_string(s), "{s}");
        }
        for s in [
            "abc",
            "1.2.3",
            "v1",
            "1-2",
            "12:60",
            "e3",
            "0x",
            "-",
            "2024-01",
            "10.244.0.1",
            "1_2_3a",
            "_",
        ] {
            assert!(!resolves_to_non_string(s), "{s}");
        }
    }

    /// `object:` and `json` as the tree wrote them, and as the one pass does.
    fn both(json: &str) -> (String, Option<String>) {
        let mut tree = String::new();
        entry_from_value(&mut tree, "object", json);
        let mut pass = String::new();
        let one = entry_from_json(&mut pass, "object", json).then_some(pass);
        (tree, one)
    }

    /// Every JSON file under crates/core/testdata (genuine servers' objects, lists,
    /// Tables, and Kubernetes' own round-trip fixtures with every field of every kind),
    /// as it is written there and compact.
    fn fixtures() -> Vec<(String, String)> {
        let mut out = Vec::new();
        for (path, doc) in crate::cache::testutil::testdata_json() {
            let name = path.display().to_string();
            let v: Value = serde_json::from_str(&doc).unwrap();
            out.push((name.clone(), v.to_string()));
            out.push((name, doc));
        }
        assert!(out.len() > 400, "{} fixtures", out.len());
        out
    }

    /// The one pass writes every fixture byte for byte as the tree did (it may hand over
    /// to the tree, never write something else).
    #[test]
    fn the_one_pass_emitter_writes_what_the_tree_wrote() {
        let mut passed = 0;
        for (name, json) in fixtures() {
            let (tree, pass) = both(&json);
            if let Some(pass) = pass {
                assert_eq!(pass, tree, "{name}");
                passed += 1;
            }
        }
        assert!(passed > 400, "{passed} written in one pass");
        let shapes = [
            r#"{}"#,
            r#"[]"#,
            r#"{"a":{},"b":[],"c":[[]],"d":[{}],"e":[[1,[2]],{"f":[]}]}"#,
            r#" { "a" : [ 1 , -2 , 0 , -0 , 1.0 , 1e30 , -1.5E-7 , 123456789012345678 , 1234567890123456789 , 12345678901234567890 , 99999999999999999999999 ] } "#,
            r##"{"s":["", "yes", "No", "null", "~", "on", "y", "1e3", "0x1F", "12:30:00", "2024-01-01", "a: b", "#x", "- y", "it's", " lead", "trail ", "a\nb", "a\nb\n", "a\n\n", "\ttab", "\u00e9t\u00e9", "<b>\u0026", "\u2028", "\u001b[2J", "---", "...", "@x", "x #y", "multi\nline with: colon\n", "\ud83d\ude00"]}"##,
            r#"{"yes":1,"a-b.c/d_e":2,"Z9":3,"":4,"1":5}"#,
            r#"{"metadata":{"name":"n","labels":{"app":"web","tier":"y"}},"spec":{"containers":[{"name":"a","args":["--x=1","true"],"ports":[{"containerPort":80}]}]},"status":null}"#,
            "true",
            "\"x\"",
            "null",
            "1.5",
        ];
        for json in shapes {
            let (tree, pass) = both(json);
            assert_eq!(pass.as_deref(), Some(tree.as_str()), "{json}");
        }
        // What the one pass hands over to the tree.
        for json in [r#"{"a":1,"a":2}"#, r#"{"\u0061":1}"#, r#"{"k":"\ud800"}"#] {
            let (_, pass) = both(json);
            assert_eq!(pass, None, "{json}");
        }
        let deep = "[".repeat(150) + &"]".repeat(150);
        let (tree, pass) = both(&deep);
        assert_eq!(pass, None);
        assert!(
            tree.contains("objectError: recursion limit exceeded"),
            "{tree}"
        );
    }

    /// libyaml's plain-scalar rule as it was first written (over chars), for the
    /// comparison below.
    fn plain_ok_by_chars(s: &str) -> bool {
        if s.starts_with(' ') || s.ends_with(' ') || s.starts_with("---") || s.starts_with("...") {
            return false;
        }
        let chars: Vec<char> = s.chars().collect();
        let blank_after = |i: usize| chars.get(i + 1).is_none_or(|c| *c == ' ');
        match chars.first() {
            Some(
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"' | '%'
                | '@' | '`',
            ) => return false,
            Some('?' | ':' | '-') if blank_after(0) => return false,
            _ => {}
        }
        for (i, c) in chars.iter().enumerate() {
            match c {
                ':' if blank_after(i) => return false,
                '#' if i > 0 && chars[i - 1] == ' ' => return false,
                _ => {}
            }
        }
        true
    }

    /// Every string and key in `v`, depth first.
    fn strings(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) => out.push(s.clone()),
            Value::Object(m) => m.iter().for_each(|(k, v)| {
                out.push(k.clone());
                strings(v, out);
            }),
            Value::Array(a) => a.iter().for_each(|v| strings(v, out)),
            _ => {}
        }
    }

    /// The quoting decisions made byte by byte (a plain word at once, the plain-scalar
    /// rule) are those of the rules over chars, for every string and key of the fixtures
    /// and strings made to sit on their edges.
    #[test]
    fn quoting_by_bytes_decides_as_by_chars() {
        let mut all: Vec<String> = [
            "a:b",
            "a: b",
            "a:",
            "é: x",
            "x #y",
            "x#y",
            "é#",
            " é",
            "-é",
            "- é",
            "?x",
            "? x",
            ":x",
            ": x",
            "# x",
            "ab-c.d/e_f",
            "Yes",
            "yes1",
            "e5",
            "E",
            "a\u{85}b",
            "1_0",
            "1e5x",
            "0.5.1",
            "+-1",
            "1+1",
            "1e+5",
            "._",
            "1__",
            "--1",
            "½",
            "١٢",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for (_, json) in fixtures() {
            strings(&serde_json::from_str(&json).unwrap(), &mut all);
        }
        assert!(WORDS.iter().all(|w| is_word(w)));
        for s in &all {
            assert_eq!(plain_ok(s), plain_ok_by_chars(s), "{s:?}");
            assert_eq!(is_word(s), WORDS.contains(&s.as_str()), "{s:?}");
            if simple_word(s) {
                assert!(
                    !resolves_to_non_string(s) || WORDS.contains(&s.as_str()),
                    "{s:?}"
                );
                assert!(
                    plain_ok_by_chars(s) && !s.chars().any(needs_escape),
                    "{s:?}"
                );
            }
        }
    }

    /// [`scalar`] as it was written before it decided by byte classes: the general rules,
    /// and double quotes character by character.
    fn scalar_as_before(out: &mut String, s: &str, block_indent: Option<usize>) {
        scalar_by_rules(out, s, block_indent, double_quoted_by_chars);
    }

    /// Every string and key of the fixtures, and strings on the byte classes' edges, is
    /// written as before the byte classes decided, as a key and as a value.
    #[test]
    fn scalars_by_byte_class_are_written_as_by_chars() {
        let mut all: Vec<String> = [
            "",
            " ",
            "~",
            "a",
            "yes",
            "No",
            "null",
            "1",
            "1.5",
            "-1",
            "0x1F",
            "12:30:00",
            "2026-11-27T22:04:58Z",
            "2026-11-27",
            "a\"b",
            "\"",
            "a\\b",
            "it's",
            "it's: x",
            "'q'",
            "a b",
            "a: b",
            "a:b",
            "#x",
            "x #y",
            "-",
            "- x",
            "---x",
            "...x",
            "x\ny",
            "x\n",
            "x\n\n",
            " x\ny",
            "x \ny",
            "tab\there",
            "\u{7f}",
            "\u{1f}x",
            "é",
            "a\u{85}b",
            "\u{feff}",
            "\u{2028}",
            "~x",
            "@x",
            "`x",
            "x`",
            "{}",
            "[]",
            "a/b.c_d-e",
            "_a",
            "9a",
            "=",
            "<<",
            "ab-c.d/e_f:",
            "nginx:1.27.2",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for (_, json) in fixtures() {
            strings(&serde_json::from_str(&json).unwrap(), &mut all);
        }
        for s in &all {
            for indent in [None, Some(4)] {
                let (mut now, mut before) = (String::new(), String::new());
                scalar(&mut now, s, indent);
                scalar_as_before(&mut before, s, indent);
                assert_eq!(now, before, "{s:?} {indent:?}");
            }
            let (mut now, mut before) = (String::new(), String::new());
            double_quoted(&mut now, s);
            double_quoted_by_chars(&mut before, s);
            assert_eq!(now, before, "{s:?}");
        }
    }
}
