//! Label and field selectors, parsed the way k8s.io/apimachinery does it, with the same error
//! messages (e.g. `unable to parse requirement: found '', expected: ',' or ')'`).
//!
//! Label selector grammar: requirements separated by `,`; each is `key`, `!key`,
//! `key = v`, `key == v`, `key != v`, `key in (v1, v2)`, `key notin (v1)`, `key > n`, `key < n`.
//! Field selector grammar: terms `field=v`, `field==v`, `field!=v` separated by `,`.
//!
//! `-l` is checked with it on the command line, `kwatch replay -l` filters the recorded
//! objects with it and the simulator its lists and watches; built without `sim` too.

use std::borrow::Cow;
use std::collections::BTreeSet;

/// Why a label or field selector was refused, in the apiserver's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A label requirement that does not parse (the apiserver's `unable to parse
    /// requirement: …`).
    #[error("unable to parse requirement: {0}")]
    Requirement(Box<Error>),
    /// A token other than the grammar allows at that point.
    #[error("found '{found}', expected: {expected}")]
    Found {
        found: String,
        expected: &'static str,
    },
    /// `key in` or `key notin` not followed by `(` (the apiserver has no comma there).
    #[error("found '{0}' expected: '('")]
    NoOpenParen(String),
    #[error("for 'Gt', 'Lt' operators, the value must be an integer")]
    NotAnInteger,
    #[error(
        "key: Invalid value: \"{0}\": name part must consist of alphanumeric characters, '-', '_' or '.', \
         and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', \
         regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
    )]
    InvalidKey(String),
    #[error(
        "values[0][{0}]: Invalid value: \"{0}\": a valid label must be an empty string or consist of \
         alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character \
         (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is \
         '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
    )]
    InvalidValue(String),
    /// A field selector term with no `=`, `==` or `!=`.
    #[error("invalid selector: '{input}'; can't understand '{term}'")]
    Term { input: String, term: String },
    /// A field the resource cannot be selected by, as the pod registry words it.
    #[error("field label not supported: {0}")]
    FieldNotSupported(String),
    /// A field the resource cannot be selected by, with the fields it can.
    #[error("\"{field}\" is not a known field selector: only {}", quoted(.allowed))]
    UnknownField { field: String, allowed: Vec<String> },
}

/// `"a", "b"`.
fn quoted(names: &[String]) -> String {
    let list: Vec<String> = names.iter().map(|a| format!("\"{a}\"")).collect();
    list.join(", ")
}

/// [`Error::Found`].
fn found(t: &Tok, expected: &'static str) -> Error {
    Error::Found {
        found: t.lit().to_owned(),
        expected,
    }
}

/// One parsed label requirement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabelReq {
    Exists(String),
    NotExists(String),
    In(String, BTreeSet<String>),
    NotIn(String, BTreeSet<String>),
    Gt(String, i64),
    Lt(String, i64),
}

/// A label selector: all requirements must hold. Empty matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector(pub Vec<LabelReq>);

impl LabelSelector {
    /// Whether the labels (key, value pairs) satisfy every requirement.
    pub fn matches(&self, labels: &[(String, String)]) -> bool {
        let get = |k: &str| {
            labels
                .iter()
                .find(|(lk, _)| lk == k)
                .map(|(_, v)| v.as_str())
        };
        self.0.iter().all(|r| match r {
            LabelReq::Exists(k) => get(k).is_some(),
            LabelReq::NotExists(k) => get(k).is_none(),
            LabelReq::In(k, vs) => get(k).is_some_and(|v| vs.contains(v)),
            LabelReq::NotIn(k, vs) => get(k).is_none_or(|v| !vs.contains(v)),
            LabelReq::Gt(k, n) => get(k)
                .and_then(|v| v.parse::<i64>().ok())
                .is_some_and(|v| v > *n),
            LabelReq::Lt(k, n) => get(k)
                .and_then(|v| v.parse::<i64>().ok())
                .is_some_and(|v| v < *n),
        })
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Ident(String),
    Not,
    NotEq,
    Eq,
    DoubleEq,
    Gt,
    Lt,
    Open,
    Close,
    Comma,
    End,
}

impl Tok {
    fn lit(&self) -> &str {
        match self {
            Tok::Ident(s) => s,
            Tok::Not => "!",
            Tok::NotEq => "!=",
            Tok::Eq => "=",
            Tok::DoubleEq => "==",
            Tok::Gt => ">",
            Tok::Lt => "<",
            Tok::Open => "(",
            Tok::Close => ")",
            Tok::Comma => ",",
            Tok::End => "",
        }
    }
}

fn is_special(c: char) -> bool {
    matches!(c, '!' | '=' | '>' | '<' | '(' | ')' | ',')
}

fn lex(input: &str) -> Vec<Tok> {
    let chars: Vec<char> = input.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if is_special(c) {
            let next = chars.get(i + 1).copied();
            let (tok, n) = match (c, next) {
                ('!', Some('=')) => (Tok::NotEq, 2),
                ('=', Some('=')) => (Tok::DoubleEq, 2),
                ('!', _) => (Tok::Not, 1),
                ('=', _) => (Tok::Eq, 1),
                ('>', _) => (Tok::Gt, 1),
                ('<', _) => (Tok::Lt, 1),
                ('(', _) => (Tok::Open, 1),
                (')', _) => (Tok::Close, 1),
                _ => (Tok::Comma, 1),
            };
            out.push(tok);
            i += n;
        } else {
            let start = i;
            while i < chars.len() && !chars[i].is_whitespace() && !is_special(chars[i]) {
                i += 1;
            }
            out.push(Tok::Ident(chars[start..i].iter().collect()));
        }
    }
    out.push(Tok::End);
    out
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> &Tok {
        self.toks.get(self.pos).unwrap_or(&Tok::End)
    }
    fn next(&mut self) -> Tok {
        let t = self.peek().clone();
        if self.pos < self.toks.len() {
            self.pos += 1;
        }
        t
    }
}

/// Parses a label selector; the error is the apiserver's message.
///
/// ```
/// use kwatch_core::selector::parse_labels;
///
/// let s = parse_labels("app=web,tier in (front,back),!canary")?;
/// let labels = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
///     pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
/// };
/// assert!(s.matches(&labels(&[("app", "web"), ("tier", "front")])));
/// assert!(!s.matches(&labels(&[("app", "web"), ("tier", "db")])));
/// assert!(!s.matches(&labels(&[("app", "web"), ("tier", "back"), ("canary", "1")])));
/// // The apiserver's words for what it refuses.
/// let e = parse_labels("tier in front").unwrap_err().to_string();
/// assert!(e.contains("unable to parse requirement"), "{e}");
/// # Ok::<(), kwatch_core::selector::Error>(())
/// ```
pub fn parse_labels(input: &str) -> Result<LabelSelector, Error> {
    let mut p = Parser {
        toks: lex(input),
        pos: 0,
    };
    let mut reqs = Vec::new();
    loop {
        match p.peek().clone() {
            Tok::Ident(_) | Tok::Not => {
                let r = parse_requirement(&mut p).map_err(|e| Error::Requirement(Box::new(e)))?;
                reqs.push(r);
                match p.next() {
                    Tok::End => return Ok(LabelSelector(reqs)),
                    Tok::Comma => {
                        let t = p.peek();
                        if !matches!(t, Tok::Ident(_) | Tok::Not) {
                            return Err(found(t, "identifier after ','"));
                        }
                    }
                    t => return Err(found(&t, "',' or 'end of string'")),
                }
            }
            Tok::End => return Ok(LabelSelector(reqs)),
            t => return Err(found(&t, "!, identifier, or 'end of string'")),
        }
    }
}

fn parse_requirement(p: &mut Parser) -> Result<LabelReq, Error> {
    let mut tok = p.next();
    let negated = tok == Tok::Not;
    if negated {
        tok = p.next();
    }
    let key = match tok {
        Tok::Ident(k) => k,
        t => return Err(found(&t, "identifier")),
    };
    validate_key(&key)?;
    if matches!(p.peek(), Tok::End | Tok::Comma) {
        return Ok(if negated {
            LabelReq::NotExists(key)
        } else {
            LabelReq::Exists(key)
        });
    }
    if negated {
        return Err(found(p.peek(), "',' or 'end of string'"));
    }
    let op = p.next();
    match op {
        Tok::Ident(ref s) if s == "in" => Ok(LabelReq::In(key, parse_values(p)?)),
        Tok::Ident(ref s) if s == "notin" => Ok(LabelReq::NotIn(key, parse_values(p)?)),
        Tok::Eq | Tok::DoubleEq => Ok(LabelReq::In(key, parse_exact(p)?)),
        Tok::NotEq => Ok(LabelReq::NotIn(key, parse_exact(p)?)),
        Tok::Gt | Tok::Lt => {
            let v = parse_exact(p)?;
            let s = v.into_iter().next().unwrap_or_default();
            let n: i64 = s.parse().map_err(|_| Error::NotAnInteger)?;
            Ok(if op == Tok::Gt {
                LabelReq::Gt(key, n)
            } else {
                LabelReq::Lt(key, n)
            })
        }
        t => Err(found(&t, "in, notin, =, ==, !=, gt, lt")),
    }
}

fn parse_values(p: &mut Parser) -> Result<BTreeSet<String>, Error> {
    let t = p.next();
    if t != Tok::Open {
        return Err(Error::NoOpenParen(t.lit().to_owned()));
    }
    match p.peek().clone() {
        Tok::Ident(_) | Tok::Comma => {
            let s = parse_ident_list(p)?;
            let t = p.next();
            if t != Tok::Close {
                return Err(found(&t, "')'"));
            }
            Ok(s)
        }
        Tok::Close => {
            p.next();
            Ok(BTreeSet::from([String::new()]))
        }
        t => Err(found(&t, "',', ')' or identifier")),
    }
}

fn parse_ident_list(p: &mut Parser) -> Result<BTreeSet<String>, Error> {
    let mut s = BTreeSet::new();
    loop {
        match p.next() {
            Tok::Ident(v) => {
                validate_value(&v)?;
                s.insert(v);
                match p.peek() {
                    Tok::Comma => {
                        p.next();
                        if *p.peek() == Tok::Close {
                            s.insert(String::new());
                            return Ok(s);
                        }
                    }
                    Tok::Close => return Ok(s),
                    t => return Err(found(t, "',' or ')'")),
                }
            }
            Tok::Comma => {
                s.insert(String::new());
                if *p.peek() == Tok::Close {
                    return Ok(s);
                }
            }
            t => return Err(found(&t, "',', or identifier")),
        }
    }
}

fn parse_exact(p: &mut Parser) -> Result<BTreeSet<String>, Error> {
    if matches!(p.peek(), Tok::End | Tok::Comma) {
        return Ok(BTreeSet::from([String::new()]));
    }
    match p.next() {
        Tok::Ident(v) => {
            validate_value(&v)?;
            Ok(BTreeSet::from([v]))
        }
        t => Err(found(&t, "identifier")),
    }
}

fn name_part_ok(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

fn validate_key(k: &str) -> Result<(), Error> {
    let name = k.rsplit_once('/').map_or(k, |(_, n)| n);
    if name_part_ok(name) {
        Ok(())
    } else {
        Err(Error::InvalidKey(k.to_owned()))
    }
}

fn validate_value(v: &str) -> Result<(), Error> {
    if v.is_empty() || name_part_ok(v) {
        Ok(())
    } else {
        Err(Error::InvalidValue(v.to_owned()))
    }
}

/// One field requirement: `field` equals (or, if `negate`, differs from) `value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldReq {
    pub field: String,
    pub value: String,
    pub negate: bool,
}

/// A field selector: all requirements must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector(pub Vec<FieldReq>);

impl FieldSelector {
    /// Whether the object's field values (looked up by `get`) satisfy every requirement.
    pub fn matches<'a>(&self, get: impl Fn(&str) -> Option<Cow<'a, str>>) -> bool {
        self.0.iter().all(|r| {
            let v = get(&r.field).unwrap_or_default();
            (*v == *r.value) != r.negate
        })
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Parses a field selector and checks its fields against `allowed` (the resource's
/// selectable fields). `pods_style` selects the pod registry's error message.
pub fn parse_fields(
    input: &str,
    allowed: &[&str],
    pods_style: bool,
) -> Result<FieldSelector, Error> {
    let mut reqs = Vec::new();
    if input.trim().is_empty() {
        return Ok(FieldSelector(reqs));
    }
    for term in split_unescaped(input) {
        let (field, value, negate) = if let Some((f, v)) = term.split_once("!=") {
            (f, v, true)
        } else if let Some((f, v)) = term.split_once("==") {
            (f, v, false)
        } else if let Some((f, v)) = term.split_once('=') {
            (f, v, false)
        } else {
            return Err(Error::Term {
                input: input.to_owned(),
                term: term.to_owned(),
            });
        };
        let field = field.trim().to_string();
        if !allowed.contains(&field.as_str()) {
            return Err(if pods_style {
                Error::FieldNotSupported(field)
            } else {
                Error::UnknownField {
                    field,
                    allowed: allowed.iter().map(|a| (*a).to_owned()).collect(),
                }
            });
        }
        reqs.push(FieldReq {
            field,
            value: unescape(value.trim()),
            negate,
        });
    }
    Ok(FieldSelector(reqs))
}

fn split_unescaped(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == ',' {
            out.push(&s[start..i]);
            start = i + 1;
        }
    }
    out.push(&s[start..]);
    out
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn parses_every_operator() {
        let s = parse_labels("app=a,tier==web,env!=prod,x in (1,2),y notin (3),z,!w").unwrap();
        assert_eq!(s.0.len(), 7);
        let l = labels(&[
            ("app", "a"),
            ("tier", "web"),
            ("x", "2"),
            ("y", "4"),
            ("z", ""),
        ]);
        assert!(s.matches(&l));
        let mut l2 = l.clone();
        l2.push(("w".into(), "1".into()));
        assert!(!s.matches(&l2));
        let mut l3 = l.clone();
        l3.push(("env".into(), "prod".into()));
        assert!(!s.matches(&l3));
        assert!(!s.matches(&labels(&[("app", "b")])));
    }

    #[test]
    fn in_notin_and_numbers() {
        let s = parse_labels("app in (a, b)").unwrap();
        assert!(s.matches(&labels(&[("app", "b")])));
        assert!(!s.matches(&labels(&[("app", "c")])));
        assert!(!s.matches(&labels(&[])));
        let s = parse_labels("app notin (a)").unwrap();
        assert!(s.matches(&labels(&[])));
        assert!(!s.matches(&labels(&[("app", "a")])));
        let s = parse_labels("n > 3").unwrap();
        assert!(s.matches(&labels(&[("n", "4")])));
        assert!(!s.matches(&labels(&[("n", "3")])));
        assert!(parse_labels("").unwrap().is_empty());
    }

    #[test]
    fn error_messages_match_the_apiserver() {
        assert_eq!(
            parse_labels("app in (a").unwrap_err().to_string(),
            "unable to parse requirement: found '', expected: ',' or ')'"
        );
        assert_eq!(
            parse_labels("app=a,").unwrap_err().to_string(),
            "found '', expected: identifier after ','"
        );
        assert_eq!(
            parse_labels("app in a").unwrap_err().to_string(),
            "unable to parse requirement: found 'a' expected: '('"
        );
        assert!(parse_labels("app foo b")
            .unwrap_err()
            .to_string()
            .starts_with("unable to parse requirement: found 'foo'"));
    }

    #[test]
    fn field_selectors() {
        let allowed = ["metadata.name", "metadata.namespace"];
        let s = parse_fields("metadata.name=cm2", &allowed, false).unwrap();
        assert!(s.matches(|f| if f == "metadata.name" {
            Some("cm2".into())
        } else {
            None
        }));
        assert!(!s.matches(|_| Some("cm1".into())));
        let s = parse_fields("metadata.name!=cm2", &allowed, false).unwrap();
        assert!(s.matches(|_| Some("cm1".into())));
        assert_eq!(
            parse_fields("spec.foo=bar", &allowed, false).unwrap_err().to_string(),
            "\"spec.foo\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
        );
        assert_eq!(
            parse_fields("spec.foo=bar", &allowed, true)
                .unwrap_err()
                .to_string(),
            "field label not supported: spec.foo"
        );
        assert_eq!(
            parse_fields("nonsense", &allowed, false)
                .unwrap_err()
                .to_string(),
            "invalid selector: 'nonsense'; can't understand 'nonsense'"
        );
    }
}
