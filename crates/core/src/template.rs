//! kubectl's JSONPath templates (`-o jsonpath=…`, `-o custom-columns=…`, a custom
//! resource's printer columns, `--until jsonpath=…`): client-go's k8s.io/client-go/util/jsonpath,
//! ported rule for rule. The parser (`template/parse.rs`, parser.go) accepts what kubectl's
//! accepts and refuses the rest with kubectl's reason; the evaluation
//! (`template/eval.rs`, jsonpath.go) gives kubectl's results, with
//! `--allow-missing-template-keys=true` (kubectl's default): a missing key prints nothing.
//!
//! kubectl's dialect, not RFC 9535: text around `{…}` actions, `$` or `@` optional,
//! `{range …}…{end}`, `{"\n"}` literals, names that run to the next `.`, `[`, `,`, space
//! or brace (`.metadata.labels.app-name`, `.a/b`), `\.` for a dot inside a name
//! (`.metadata.annotations.deployment\.kubernetes\.io/revision`), `['key']` in single quotes
//! (a dot in it escaped too), `[?(@.a=="x")]` filters comparing values of one kind, `..`
//! recursive descent, `[a,b]` unions, `[start:end:step]` slices.

mod eval;
mod parse;
#[cfg(test)]
mod tests;

use serde_json::Value;

use crate::gofmt::{go_float, go_json, go_value};
use crate::scan::{each_member, skip_valid, skip_ws};
use crate::text::sanitize;
use parse::Node;

/// Why a template or a custom-columns spec was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// kubectl's parse error, with its reason (parser.go's words).
    #[error("error parsing jsonpath {template}: {reason}")]
    Parse { template: String, reason: String },
    /// An action that fails on every object, whatever it holds (kubectl says so when it
    /// prints the first).
    #[error("error in jsonpath {template}: {reason}")]
    Always { template: String, reason: String },
    #[error(
        "custom-columns: unexpected custom-columns spec: {0}, expected <header>:<json-path-expr> \
         (e.g. NAME:.metadata.name)"
    )]
    NotAColumn(String),
    #[error("custom-columns: no columns given")]
    NoColumns,
    #[error(
        "custom-columns: unexpected path string {0:?}, expected a 'name1.name2' or \
         '.name1.name2' or '{{name1.name2}}' or '{{.name1.name2}}'"
    )]
    ColumnPath(String),
}

/// Why a template could not be applied to one object (jsonpath.go's words: an index out
/// of bounds, values of two kinds compared).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("error executing jsonpath {template}: {reason}")]
pub struct ExecError {
    pub template: String,
    pub reason: String,
}

/// A parsed kubectl JSONPath template.
///
/// ```
/// use kwatch_core::template::Template;
/// use serde_json::json;
///
/// let pod = json!({
///     "metadata": {"name": "web-1"},
///     "spec": {"containers": [
///         {"name": "app", "image": "nginx"},
///         {"name": "log", "image": "busybox"},
///     ]}
/// });
/// let t = Template::parse("{.metadata.name}: {range .spec.containers[*]}{.image} {end}")?;
/// assert_eq!(t.render(&pod).unwrap(), "web-1: nginx busybox ");
/// // What kubectl's parser refuses is refused here, with its words.
/// assert!(Template::parse("{.metadata.name").is_err());
/// # Ok::<(), kwatch_core::template::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    /// The template as given, for messages.
    text: String,
    nodes: Vec<Node>,
}

impl Template {
    /// Parses kubectl's template syntax (text without braces is text, as kubectl prints
    /// it). Refused: what kubectl's parser refuses, and actions that fail on every object
    /// (an unknown word such as `{hello}`, an `{end}` without its `{range}`).
    pub fn parse(text: &str) -> Result<Template, Error> {
        let nodes = parse::parse(text).map_err(|reason| Error::Parse {
            template: shown(text),
            reason,
        })?;
        always_fails(&nodes).map_err(|reason| Error::Always {
            template: shown(text),
            reason,
        })?;
        Ok(Template {
            text: text.to_owned(),
            nodes,
        })
    }

    /// The results of each node of the template for `v` (jsonpath.go's FindResults).
    pub fn results(&self, v: &Value) -> Result<Vec<Vec<Value>>, ExecError> {
        eval::Eval::default()
            .find_results(&self.nodes, 0, v)
            .map_err(|reason| ExecError {
                template: shown(&self.text),
                reason,
            })
    }

    /// What kubectl prints for `v` (jsonpath.go's Execute): each node's results separated
    /// by spaces, maps and lists as JSON, strings bare, a null as `null`.
    pub fn render(&self, v: &Value) -> Result<String, ExecError> {
        let mut out = String::new();
        for group in self.results(v)? {
            for (i, x) in group.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(&text(x));
            }
        }
        Ok(out)
    }

    /// Every value the template selects in `v`, in order; none when it cannot be applied
    /// (as a custom resource's printer column shows an empty cell).
    pub fn values(&self, v: &Value) -> Vec<Value> {
        self.results(v)
            .map(|groups| groups.into_iter().flatten().collect())
            .unwrap_or_default()
    }
}

impl Template {
    /// The parts of an object the template can read ([`Reads`]); `None`: any part (an
    /// action whose path from the object does not start with a field name: `{.}`, `{@}`,
    /// `{..x}`, `{.*}`, `{[0]}`, a filter or union at the object, a bare `{range}`).
    pub fn reads(&self) -> Option<Reads> {
        let mut reads = Reads::default();
        for n in &self.nodes {
            let action = match n {
                Node::Text(_) => continue,
                Node::List(action) => action,
                _ => return None,
            };
            let path = match action.as_slice() {
                [Node::Identifier(w), rest @ ..] if w == "range" && !rest.is_empty() => rest,
                [Node::Identifier(w)] if w == "end" => continue,
                path => path,
            };
            match path {
                // A literal: whatever follows reads the literal, not the object.
                [Node::Text(_) | Node::Int(_) | Node::Float(_) | Node::Bool(_), ..] => {}
                [Node::Field(top), rest @ ..] if !top.is_empty() => {
                    let second = match rest.first() {
                        Some(Node::Field(f)) if !f.is_empty() => Some(f.as_str()),
                        _ => None,
                    };
                    reads.add(top, second);
                }
                _ => return None,
            }
        }
        Some(reads)
    }
}

impl Template {
    /// Whether the template may read the member `field` of the object's member `top`
    /// (as [`Template::reads`] finds what it reads: when unsure, it may).
    pub fn may_read(&self, top: &str, field: &str) -> bool {
        self.reads().is_none_or(|r| r.may_read(top, field))
    }
}

/// The members of an object a template can read, found from its paths: each top-level
/// field named, and under it the fields named next (or all of it). A path inside a
/// `{range}` is read relative to each value, so its names count here too, which only
/// keeps more. The JSONPath results of the parsed parts equal those of the whole object:
/// what no path names is never reached.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reads {
    /// Each top-level field, with the fields read under it (`None`: all of it).
    fields: Vec<(String, Option<Vec<String>>)>,
}

impl Reads {
    fn add(&mut self, top: &str, second: Option<&str>) {
        match self.fields.iter_mut().find(|(t, _)| t == top) {
            Some((_, under)) => match (under, second) {
                (Some(names), Some(s)) => {
                    if !names.iter().any(|n| n == s) {
                        names.push(s.to_owned());
                    }
                }
                (under, _) => *under = None,
            },
            None => self
                .fields
                .push((top.to_owned(), second.map(|s| vec![s.to_owned()]))),
        }
    }

    /// Whether the member `field` of the member `top` is among the parts read.
    pub fn may_read(&self, top: &str, field: &str) -> bool {
        self.fields.iter().any(|(t, under)| {
            t == top
                && under
                    .as_ref()
                    .is_none_or(|names| names.iter().any(|n| n == field))
        })
    }

    /// What the templates of several columns read.
    pub fn merge(&mut self, other: &Reads) {
        for (top, under) in &other.fields {
            match under {
                Some(names) => names.iter().for_each(|n| self.add(top, Some(n))),
                None => self.add(top, None),
            }
        }
    }

    /// The object `raw` (valid JSON) parsed as a [`Value`] with only the parts read, as
    /// `serde_json::from_str` makes the whole (a key written twice: its last value in its
    /// first place); `Null` when a part read is beyond the parser (nesting deeper than
    /// 128), as for the whole. The whole is parsed where a key has an escape.
    pub fn value(&self, raw: &str) -> Value {
        self.parts(raw)
            .unwrap_or_else(|| serde_json::from_str(raw).unwrap_or(Value::Null))
    }

    fn parts(&self, raw: &str) -> Option<Value> {
        let b = raw.as_bytes();
        let parse = |at: usize, end: usize| serde_json::from_str::<Value>(raw.get(at..end)?).ok();
        let mut top = serde_json::Map::new();
        let mut deep = false;
        each_member(b, skip_ws(b, 0), |key, at| {
            let Some((name, under)) = self.fields.iter().find(|(t, _)| t.as_bytes() == key) else {
                return skip_valid(b, at);
            };
            let (v, end) = match under {
                Some(names) if b.get(at) == Some(&b'{') => {
                    let mut m = serde_json::Map::new();
                    // Walked once: the object ends after its last member's value.
                    let mut last = at + 1;
                    each_member(b, at, |k, at| {
                        let end = skip_valid(b, at)?;
                        if let Some(n) = names.iter().find(|n| n.as_bytes() == k) {
                            let Some(v) = parse(at, end) else {
                                deep = true;
                                return None;
                            };
                            m.insert(n.clone(), v);
                        }
                        last = end;
                        Some(end)
                    })?;
                    let close = skip_ws(b, last);
                    if b.get(close) != Some(&b'}') {
                        return None;
                    }
                    (Value::Object(m), close + 1)
                }
                _ => {
                    let end = skip_valid(b, at)?;
                    let Some(v) = parse(at, end) else {
                        deep = true;
                        return None;
                    };
                    (v, end)
                }
            };
            top.insert(name.clone(), v);
            Some(end)
        })
        .map(|()| Value::Object(top))
        .or_else(|| deep.then_some(Value::Null))
    }
}

/// A template in a one-line message: control characters escaped.
fn shown(text: &str) -> String {
    sanitize(text).into_owned()
}

/// An error jsonpath.go raises for every object: a word other than `range` and `end` in an
/// action, or an `{end}` that closes no `{range}` (its bookkeeping of ranges does not
/// depend on the data).
fn always_fails(nodes: &[Node]) -> Result<(), String> {
    let mut open = 0usize;
    for n in nodes {
        let Node::List(action) = n else { continue };
        for node in action {
            match node {
                Node::Identifier(w) if w == "range" => open += 1,
                Node::Identifier(w) if w == "end" => {
                    open = open
                        .checked_sub(1)
                        .ok_or_else(|| "not in range, nothing to end".to_owned())?;
                }
                Node::Identifier(w) => return Err(format!("unrecognized identifier {w}")),
                _ => {}
            }
        }
    }
    Ok(())
}

/// A value as jsonpath.go prints it: a map or a list as Go's json.Marshal writes it, a
/// string bare, a null `null`, a number as Go's fmt prints an int64 or a float64.
pub fn text(v: &Value) -> String {
    match v {
        Value::Object(_) | Value::Array(_) => go_json(v),
        Value::Null => "null".into(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.to_string(),
            None => go_float(n.as_f64().unwrap_or(f64::NAN)),
        },
        other => go_value(other),
    }
}

/// One `-o custom-columns` column: a header and a template.
#[derive(Debug, Clone, PartialEq)]
pub struct CustomColumn {
    pub header: String,
    pub template: Template,
}

/// `HEADER:.path,HEADER2:{.path}` (kubectl's custom-columns spec). A comma inside brackets
/// or braces does not end a column, where kubectl splits at every comma and refuses
/// `A:.items[0,1]`: the one spec kwatch takes that kubectl does not.
pub fn parse_custom_columns(spec: &str) -> Result<Vec<CustomColumn>, Error> {
    let mut cols = Vec::new();
    for part in split_top_level(spec) {
        let (header, path) = part
            .split_once(':')
            .ok_or_else(|| Error::NotAColumn(part.clone()))?;
        cols.push(CustomColumn {
            header: header.to_owned(),
            template: Template::parse(&relaxed(path)?)?,
        });
    }
    if cols.is_empty() {
        return Err(Error::NoColumns);
    }
    Ok(cols)
}

/// A custom column's path as kubectl relaxes it (`RelaxedJSONPathExpression`,
/// `^\{\.?([^{}]+)\}$|^\.?([^{}]+)$`): `metadata.name`, `.metadata.name`,
/// `{metadata.name}` and `{.metadata.name}` all mean `{.metadata.name}`.
fn relaxed(path: &str) -> Result<String, Error> {
    if path.is_empty() {
        // An empty template: the column is `<none>`.
        return Ok(String::new());
    }
    let inner = path
        .strip_prefix('{')
        .and_then(|p| p.strip_suffix('}'))
        .unwrap_or(path);
    let field = inner.strip_prefix('.').unwrap_or(inner);
    if field.is_empty() || field.contains(['{', '}']) {
        return Err(Error::ColumnPath(path.to_owned()));
    }
    Ok(format!("{{.{field}}}"))
}

/// Splits on commas outside brackets and braces.
fn split_top_level(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0i32;
    for c in s.chars() {
        match c {
            '[' | '{' | '(' => depth += 1,
            ']' | '}' | ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}
