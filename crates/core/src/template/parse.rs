//! client-go's JSONPath parser (k8s.io/client-go/util/jsonpath/parser.go), rule for rule:
//! the same tokens, the same nodes, the same errors, so that a template parses here if and
//! only if it parses for kubectl. The only departure is the shape of the code: parser.go's
//! mutually recursive scanners, which recurse once per token, are loops.

/// A node of a parsed template (parser.go's node types).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Node {
    /// An action (`{…}`): its nodes applied in turn.
    List(Vec<Node>),
    /// Text outside actions, or a quoted string inside one.
    Text(String),
    /// `.name` (a map key; `\` escapes removed).
    Field(String),
    /// `range` and `end`; any other word is an error when evaluated.
    Identifier(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    /// `[start:end:step]` (an index is a slice of one).
    Array([Param; 3]),
    /// `[?(left OP right)]`, or `[?(path)]` ("exists").
    Filter {
        left: Vec<Node>,
        right: Vec<Node>,
        op: String,
    },
    Wildcard,
    Recursive,
    /// `[a,b]`: each part a path of its own.
    Union(Vec<Vec<Node>>),
}

/// One number of an array selection (parser.go's ParamsEntry).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Param {
    pub value: i64,
    pub known: bool,
    /// The end of a single index, `start + 1`.
    pub derived: bool,
}

/// Why a template does not parse: parser.go's message.
pub(super) type ParseError = String;

/// Parses a whole template: text and actions.
pub(super) fn parse(text: &str) -> Result<Vec<Node>, ParseError> {
    Parser::new(text).parse()
}

/// parser.go's parseAction: `text` as the inside of one action.
fn parse_action(text: &str) -> Result<Vec<Node>, ParseError> {
    let root = parse(&format!("{{{text}}}"))?;
    match root.into_iter().next() {
        Some(Node::List(nodes)) => Ok(nodes),
        _ => Ok(Vec::new()),
    }
}

struct Parser<'a> {
    input: &'a str,
    pos: usize,
    start: usize,
    width: usize,
}

impl<'a> Parser<'a> {
    fn new(input: &'a str) -> Self {
        Parser {
            input,
            pos: 0,
            start: 0,
            width: 0,
        }
    }

    fn parse(&mut self) -> Result<Vec<Node>, ParseError> {
        let mut root = Vec::new();
        loop {
            // parseText: up to the next `{`, or the end.
            let Some(at) = self.input[self.pos..].find('{') else {
                self.pos = self.input.len();
                if self.pos > self.start {
                    root.push(Node::Text(self.consume().to_owned()));
                }
                return Ok(root);
            };
            self.pos += at;
            if self.pos > self.start {
                root.push(Node::Text(self.consume().to_owned()));
            }
            // parseLeftDelim, then the action up to its `}` (parseRightDelim).
            self.pos += 1;
            self.consume();
            let mut action = Vec::new();
            self.inside_action(&mut action)?;
            root.push(Node::List(action));
        }
    }

    /// The text since the last call.
    fn consume(&mut self) -> &'a str {
        let value = &self.input[self.start..self.pos];
        self.start = self.pos;
        value
    }

    fn next(&mut self) -> Option<char> {
        let Some(c) = self.input[self.pos..].chars().next() else {
            self.width = 0;
            return None;
        };
        self.width = c.len_utf8();
        self.pos += self.width;
        Some(c)
    }

    fn peek(&mut self) -> Option<char> {
        let c = self.next();
        self.backup();
        c
    }

    fn backup(&mut self) {
        self.pos -= self.width;
    }

    /// The byte two before the position: the one before the character just read.
    fn escaped(&self) -> bool {
        self.pos >= 2 && self.input.as_bytes()[self.pos - 2] == b'\\'
    }

    /// parseInsideAction: the nodes of one action, up to and including its `}`.
    fn inside_action(&mut self, cur: &mut Vec<Node>) -> Result<(), ParseError> {
        loop {
            let rest = &self.input[self.pos..];
            if rest.starts_with('}') {
                self.pos += 1;
                self.consume();
                return Ok(());
            }
            if rest.starts_with("[?(") {
                self.filter(cur)?;
                continue;
            }
            if rest.starts_with("..") {
                self.recursive(cur)?;
                continue;
            }
            match self.next() {
                None | Some('\r' | '\n') => return Err("unclosed action".into()),
                Some(' ' | '@' | '$') => {
                    self.consume();
                }
                Some('[') => self.array(cur)?,
                Some(q @ ('"' | '\'')) => self.quote(cur, q)?,
                Some('.') => self.field(cur),
                Some(c) if c == '+' || c == '-' || c.is_numeric() => {
                    self.backup();
                    self.number(cur)?;
                }
                Some(c) if is_alphanumeric(c) => {
                    self.backup();
                    self.identifier(cur);
                }
                Some(c) => {
                    return Err(format!(
                        "unrecognized character in action: {}",
                        go_unicode(c)
                    ))
                }
            }
        }
    }

    /// parseIdentifier: `range`, `end`, `true`, `false`, or a word refused when evaluated.
    fn identifier(&mut self, cur: &mut Vec<Node>) {
        loop {
            let c = self.next();
            if is_terminator(c) {
                self.backup();
                break;
            }
        }
        let value = self.consume();
        cur.push(match value {
            "true" => Node::Bool(true),
            "false" => Node::Bool(false),
            _ => Node::Identifier(value.to_owned()),
        });
    }

    /// parseRecursive: `..`, then a field if a name follows.
    fn recursive(&mut self, cur: &mut Vec<Node>) -> Result<(), ParseError> {
        if cur.last() == Some(&Node::Recursive) {
            return Err("invalid multiple recursive descent".into());
        }
        self.pos += 2;
        self.consume();
        cur.push(Node::Recursive);
        if self.peek().is_some_and(is_alphanumeric) {
            self.field(cur);
        }
        Ok(())
    }

    /// parseNumber: Go's Atoi, else ParseFloat.
    fn number(&mut self, cur: &mut Vec<Node>) -> Result<(), ParseError> {
        if matches!(self.peek(), Some('+' | '-')) {
            self.next();
        }
        loop {
            match self.next() {
                Some(c) if c == '.' || c.is_numeric() => {}
                _ => {
                    self.backup();
                    break;
                }
            }
        }
        let value = self.consume();
        if let Ok(i) = value.parse::<i64>() {
            cur.push(Node::Int(i));
        } else if let Some(f) = go_parse_float(value) {
            cur.push(Node::Float(f));
        } else {
            return Err(format!("cannot parse number {value}"));
        }
        Ok(())
    }

    /// parseArray: `[…]` as a union, a quoted key, or a slice.
    fn array(&mut self, cur: &mut Vec<Node>) -> Result<(), ParseError> {
        loop {
            match self.next() {
                None | Some('\n') => return Err("unterminated array".into()),
                Some(']') => break,
                _ => {}
            }
        }
        let text = self.consume();
        let mut text = &text[1..text.len() - 1];
        if text == "*" {
            text = ":";
        }
        if text.contains(',') {
            let mut union = Vec::new();
            for part in text.split(',') {
                union.push(parse_action(&format!("[{}]", part.trim_matches(' ')))?);
            }
            cur.push(Node::Union(union));
            return Ok(());
        }
        // A key in single quotes (parser.go's dictKeyRex, `^'([^']*)'$`): the nodes of
        // `.key`, so `\.` escapes a dot there too.
        if let Some(key) = text
            .strip_prefix('\'')
            .and_then(|t| t.strip_suffix('\''))
            .filter(|k| text.len() >= 2 && !k.contains('\''))
        {
            cur.extend(parse_action(&format!(".{key}"))?);
            return Ok(());
        }
        cur.push(Node::Array(slice(text)?));
        Ok(())
    }

    /// parseFilter: `[?(…)]`, split at its operator as parser.go's regular expression
    /// `^([^!<>=]+)([!<>=]+)(.+?)$` splits it.
    fn filter(&mut self, cur: &mut Vec<Node>) -> Result<(), ParseError> {
        self.pos += 3;
        self.consume();
        let (mut begin, mut end) = (false, false);
        let mut pair = '\0';
        loop {
            match self.next() {
                None | Some('\n') => return Err("unterminated filter".into()),
                Some(r @ ('"' | '\'')) => {
                    if !begin {
                        begin = true;
                        pair = r;
                        continue;
                    }
                    if !self.escaped() && r == pair {
                        end = true;
                    }
                }
                Some(')') if begin == end => break,
                _ => {}
            }
        }
        if self.next() != Some(']') {
            return Err("unclosed array expect ]".into());
        }
        let text = self.consume();
        let text = &text[..text.len() - 2];
        match split_comparison(text) {
            None => cur.push(Node::Filter {
                left: parse_action(text)?,
                right: Vec::new(),
                op: "exists".into(),
            }),
            Some((left, op, right)) => cur.push(Node::Filter {
                left: parse_action(left)?,
                right: parse_action(right)?,
                op: op.to_owned(),
            }),
        }
        Ok(())
    }

    /// parseQuote: a string in double or single quotes, unquoted as Go's strconv does.
    fn quote(&mut self, cur: &mut Vec<Node>, end: char) -> Result<(), ParseError> {
        loop {
            match self.next() {
                None | Some('\n') => return Err("unterminated quoted string".into()),
                Some(c) if c == end && !self.escaped() => break,
                _ => {}
            }
        }
        let value = self.consume();
        let s = unquote_extend(value)
            .ok_or_else(|| format!("unquote string {value} error invalid syntax"))?;
        cur.push(Node::Text(s));
        Ok(())
    }

    /// parseField: a name up to the next terminator that is not escaped with `\`.
    fn field(&mut self, cur: &mut Vec<Node>) {
        self.consume();
        loop {
            match self.next() {
                Some('\\') => {
                    self.next();
                }
                c if is_terminator(c) => {
                    self.backup();
                    break;
                }
                _ => {}
            }
        }
        let value = self.consume();
        cur.push(if value == "*" {
            Node::Wildcard
        } else {
            Node::Field(value.replace('\\', ""))
        });
    }
}

/// parser.go's sliceOperatorRex, `^(-?[\d]*)(:-?[\d]*)?(:-?[\d]*)?$`, and what it makes of
/// the parts: a missing end is `start + 1` (an index), a missing start or step unknown.
fn slice(text: &str) -> Result<[Param; 3], ParseError> {
    let parts: Vec<&str> = text.split(':').collect();
    let number = |p: &&str| {
        let digits = p.strip_prefix('-').unwrap_or(p);
        digits.bytes().all(|b| b.is_ascii_digit())
    };
    if parts.len() > 3 || !parts.iter().all(number) {
        return Err(format!("invalid array index {text}"));
    }
    let mut params = [Param::default(); 3];
    for i in 0..3 {
        match parts.get(i) {
            Some(p) if !p.is_empty() => {
                params[i] = Param {
                    value: p
                        .parse()
                        .map_err(|_| format!("array index {p} is not a number"))?,
                    known: true,
                    derived: false,
                };
            }
            // `[a:]`, `[a::c]`: unknown. `[a]`: the end is a + 1.
            Some(_) if i > 0 => {}
            None if i == 1 => {
                params[1] = Param {
                    value: params[0].value.wrapping_add(1),
                    known: true,
                    derived: true,
                };
            }
            _ => {}
        }
    }
    Ok(params)
}

/// `left OP right` as `^([^!<>=]+)([!<>=]+)(.+?)$` matches it, or `None`.
fn split_comparison(text: &str) -> Option<(&str, &str, &str)> {
    let is_op = |c: char| "!<>=".contains(c);
    let at = text.find(is_op)?;
    if at == 0 {
        return None;
    }
    let run = text[at..]
        .find(|c: char| !is_op(c))
        .map_or(text.len(), |n| at + n);
    // The operator is greedy, but the right side needs a character: one of the operator's
    // gives itself back when nothing follows it.
    let op_end = if run < text.len() {
        run
    } else if run - at >= 2 {
        run - 1
    } else {
        return None;
    };
    let right = &text[op_end..];
    // `.` does not match a newline in Go's regexp (a filter holds none).
    if right.contains('\n') {
        return None;
    }
    Some((&text[..at], &text[at..op_end], right))
}

/// parser.go's isTerminator.
fn is_terminator(c: Option<char>) -> bool {
    match c {
        None => true,
        Some(c) => matches!(
            c,
            ' ' | '\t' | '\r' | '\n' | '.' | ',' | '[' | ']' | '$' | '@' | '{' | '}'
        ),
    }
}

/// parser.go's isAlphaNumeric: `_`, a letter or a digit.
fn is_alphanumeric(c: char) -> bool {
    c == '_' || c.is_alphabetic() || c.is_numeric()
}

/// Go's `%#U`: `U+0027 '''`.
fn go_unicode(c: char) -> String {
    if c.is_control() {
        format!("U+{:04X}", c as u32)
    } else {
        format!("U+{:04X} '{c}'", c as u32)
    }
}

/// strconv.ParseFloat on the characters parseNumber takes (sign, digits, dots).
fn go_parse_float(s: &str) -> Option<f64> {
    let digits = s.trim_start_matches(['+', '-']);
    if digits.is_empty() || !digits.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// parser.go's UnquoteExtend: strconv.Unquote, for single quotes of any length too.
fn unquote_extend(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let n = b.len();
    if n < 2 || b[0] != b[n - 1] || !matches!(b[0], b'"' | b'\'') {
        return None;
    }
    let quote = b[0];
    let mut rest = &b[1..n - 1];
    let mut out = Vec::with_capacity(rest.len());
    while let Some(&c) = rest.first() {
        // strconv.UnquoteChar.
        if c == quote {
            return None;
        }
        if c != b'\\' {
            out.push(c);
            rest = &rest[1..];
            continue;
        }
        let &e = rest.get(1)?;
        rest = &rest[2..];
        match e {
            b'a' => out.push(7),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'v' => out.push(11),
            b'x' | b'u' | b'U' => {
                let len = match e {
                    b'x' => 2,
                    b'u' => 4,
                    _ => 8,
                };
                let hex = std::str::from_utf8(rest.get(..len)?).ok()?;
                let v = u32::from_str_radix(hex, 16).ok()?;
                rest = &rest[len..];
                if e == b'x' {
                    out.push(v as u8);
                } else {
                    let c = char::from_u32(v)?;
                    out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                }
            }
            b'0'..=b'7' => {
                let mut v = u32::from(e - b'0');
                for &d in rest.get(..2)? {
                    if !(b'0'..=b'7').contains(&d) {
                        return None;
                    }
                    v = v << 3 | u32::from(d - b'0');
                }
                rest = &rest[2..];
                out.push(u8::try_from(v).ok()?);
            }
            b'\\' => out.push(b'\\'),
            b'\'' | b'"' if e == quote => out.push(e),
            _ => return None,
        }
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}
