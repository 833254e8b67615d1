//! kubectl's JSONPath templates (`-o jsonpath=…`, `-o custom-columns=…`, CRD printer
//! columns, `--until jsonpath=…`) on top of the `jsonpath-rust` crate (RFC 9535).
//!
//! kubectl's dialect differs from RFC 9535 in a few ways handled here: expressions sit
//! in `{…}` with text around them, the leading `$` is optional (`.status.phase`),
//! `{range …}…{end}` loops, `{"\n"}` string literals, and dot-names may contain `-` or
//! `/` (`.metadata.labels.app-name`), which RFC 9535 only accepts in brackets.
//! Everything between the braces is converted to an RFC 9535 query and checked when the
//! template is parsed, so a bad template is a usage error, never a failure mid-watch.

use jsonpath_rust::JsonPath;
use serde_json::Value;

/// Why a template, an expression or a custom-columns spec was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("unclosed {{ in {0:?}")]
    Unclosed(String),
    #[error("{{end}} without {{range}} in {0:?}")]
    EndWithoutRange(String),
    #[error("{{range}} without {{end}} in {0:?}")]
    RangeWithoutEnd(String),
    #[error("unrecognized JSONPath expression {0:?} (expected e.g. .metadata.name)")]
    Unrecognized(String),
    #[error("unexpected {found:?} in JSONPath expression {expr:?}")]
    Unexpected { found: char, expr: String },
    /// An expression the RFC 9535 parser refused, with its reason.
    #[error("invalid JSONPath {expr:?}: {reason}")]
    Invalid { expr: String, reason: String },
    #[error("custom-columns: {0:?} is not HEADER:JSONPATH (e.g. NAME:.metadata.name)")]
    NotAColumn(String),
    #[error("custom-columns: no columns given")]
    NoColumns,
    #[error(
        "custom-columns: unexpected path {0:?}, expected a 'name1.name2' or \
         '.name1.name2' or '{{name1.name2}}' or '{{.name1.name2}}'"
    )]
    ColumnPath(String),
}

/// The message, for callers whose own errors are still text.
/// A compiled kubectl JSONPath template.
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    nodes: Vec<Node>,
}

#[derive(Debug, Clone, PartialEq)]
enum Node {
    Text(String),
    /// An RFC 9535 query, evaluated against the current node (`$` = current).
    Query(String),
    Range(String, Vec<Node>),
}

impl Template {
    /// Parses kubectl's template syntax. A template without braces is taken as one
    /// expression (`.metadata.name`), as kubectl's custom-columns do.
    pub fn parse(text: &str) -> Result<Template, Error> {
        let text = if text.contains('{') {
            text.to_owned()
        } else {
            format!("{{{text}}}")
        };
        let mut stack: Vec<(Option<String>, Vec<Node>)> = vec![(None, Vec::new())];
        let mut rest = text.as_str();
        while !rest.is_empty() {
            let Some(open) = rest.find('{') else {
                push(&mut stack, Node::Text(rest.to_owned()));
                break;
            };
            if open > 0 {
                push(&mut stack, Node::Text(rest[..open].to_owned()));
            }
            let after = &rest[open + 1..];
            let close = find_close(after).ok_or_else(|| Error::Unclosed(text.clone()))?;
            let action = after[..close].trim();
            rest = &after[close + 1..];
            if action == "end" {
                let (query, nodes) = stack.pop().unwrap_or_default();
                let Some(query) = query else {
                    return Err(Error::EndWithoutRange(text));
                };
                push(&mut stack, Node::Range(query, nodes));
            } else if let Some(expr) = action.strip_prefix("range ") {
                stack.push((Some(to_rfc9535(expr.trim())?), Vec::new()));
            } else if let Some(lit) = string_literal(action) {
                push(&mut stack, Node::Text(lit));
            } else {
                push(&mut stack, Node::Query(to_rfc9535(action)?));
            }
        }
        if stack.len() != 1 {
            return Err(Error::RangeWithoutEnd(text));
        }
        let nodes = stack.pop().map(|(_, n)| n).unwrap_or_default();
        Ok(Template { nodes })
    }

    /// The text kubectl would print for `v`. Missing fields print nothing
    /// (kubectl's `--allow-missing-template-keys=true`).
    pub fn render(&self, v: &Value) -> String {
        let mut out = String::new();
        render(&self.nodes, v, &mut out);
        out
    }

    /// Every value the template's expressions select in `v`, in order (no text).
    pub fn values<'v>(&self, v: &'v Value) -> Vec<&'v Value> {
        let mut out = Vec::new();
        for n in &self.nodes {
            if let Node::Query(q) = n {
                out.extend(query(v, q));
            }
        }
        out
    }
}

fn push(stack: &mut [(Option<String>, Vec<Node>)], n: Node) {
    if let Some((_, nodes)) = stack.last_mut() {
        nodes.push(n);
    }
}

/// The index of the `}` closing an action, skipping quoted strings and brackets.
fn find_close(s: &str) -> Option<usize> {
    let mut quote = None;
    let mut depth = 0usize;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '[' | '(' => depth += 1,
            ']' | ')' => depth = depth.saturating_sub(1),
            '}' if depth == 0 => return Some(i),
            _ => {}
        }
    }
    None
}

/// `"…"` with kubectl's escapes (`\n`, `\t`, `\\`, `\"`).
fn string_literal(action: &str) -> Option<String> {
    let inner = action.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some(o) => out.push(o),
            None => out.push('\\'),
        }
    }
    Some(out)
}

/// kubectl's expression → an RFC 9535 query rooted at `$` (the current node).
pub fn to_rfc9535(expr: &str) -> Result<String, Error> {
    let e = expr.trim();
    let body = if let Some(r) = e.strip_prefix('$').or_else(|| e.strip_prefix('@')) {
        r
    } else if e.starts_with('.') || e.starts_with('[') {
        e
    } else {
        return Err(Error::Unrecognized(e.to_owned()));
    };
    let mut out = String::from("$");
    let chars: Vec<char> = body.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '.' => {
                // `..` (descendants) stays; a name after a dot is quoted when RFC 9535's
                // shorthand cannot hold it.
                let mut dots = String::from(".");
                if chars.get(i + 1) == Some(&'.') {
                    dots.push('.');
                    i += 1;
                }
                i += 1;
                let start = i;
                while i < chars.len() && chars[i] != '.' && chars[i] != '[' {
                    i += 1;
                }
                let name: String = chars[start..i].iter().collect();
                if name.is_empty() {
                    if dots == ".." {
                        out.push_str("..");
                    }
                    // A lone trailing `.` (kubectl's `{.}`) is the current node.
                } else if name == "*"
                    || name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                        && !name.starts_with(|c: char| c.is_ascii_digit())
                {
                    out.push_str(&dots);
                    out.push_str(&name);
                } else {
                    if dots == ".." {
                        out.push_str("..");
                    }
                    let escaped = name.replace('\\', "\\\\").replace('\'', "\\'");
                    out.push_str(&format!("['{escaped}']"));
                }
            }
            '[' => {
                let start = i;
                let mut depth = 0usize;
                let mut quote = None;
                while i < chars.len() {
                    let c = chars[i];
                    if let Some(q) = quote {
                        if c == q {
                            quote = None;
                        }
                    } else if c == '"' || c == '\'' {
                        quote = Some(c);
                    } else if c == '[' {
                        depth += 1;
                    } else if c == ']' {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    i += 1;
                }
                let seg: String = chars[start..(i + 1).min(chars.len())].iter().collect();
                out.push_str(&seg);
                i += 1;
            }
            c => {
                return Err(Error::Unexpected {
                    found: c,
                    expr: e.to_owned(),
                })
            }
        }
    }
    jsonpath_rust::parser::parse_json_path(&out).map_err(|err| Error::Invalid {
        expr: e.to_owned(),
        reason: err.to_string(),
    })?;
    Ok(out)
}

/// The values `q` (already RFC 9535) selects in `v`; none on any evaluation error.
pub fn query<'v>(v: &'v Value, q: &str) -> Vec<&'v Value> {
    v.query(q).unwrap_or_default()
}

fn render(nodes: &[Node], v: &Value, out: &mut String) {
    for n in nodes {
        match n {
            Node::Text(t) => out.push_str(t),
            Node::Query(q) => {
                let vals = query(v, q);
                for (i, x) in vals.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    out.push_str(&scalar(x));
                }
            }
            Node::Range(q, body) => {
                for item in query(v, q) {
                    // kubectl ranges over the elements of a selected array.
                    match item {
                        Value::Array(a) => a.iter().for_each(|x| render(body, x, out)),
                        x => render(body, x, out),
                    }
                }
            }
        }
    }
}

/// A value as kubectl prints it: strings bare, everything else as JSON.
pub fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// One `-o custom-columns` column: a header and a template.
#[derive(Debug, Clone, PartialEq)]
pub struct CustomColumn {
    pub header: String,
    pub template: Template,
}

/// `HEADER:.path,HEADER2:{.path}` (kubectl's custom-columns spec).
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

/// A custom column's path as kubectl relaxes it (`RelaxedJSONPathExpression`):
/// `metadata.name`, `.metadata.name`, `{metadata.name}` and `{.metadata.name}` all mean
/// `{.metadata.name}`.
fn relaxed(path: &str) -> Result<String, Error> {
    if path.is_empty() {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod() -> Value {
        json!({"metadata": {"name": "web", "labels": {"app.kubernetes.io/name": "w", "tier-x": "f"}},
               "status": {"phase": "Running", "conditions": [
                   {"type": "Ready", "status": "True"}, {"type": "Scheduled", "status": "False"}]},
               "spec": {"containers": [{"name": "a", "image": "i1"}, {"name": "b", "image": "i2"}]}})
    }

    #[test]
    fn kubectl_expressions_become_rfc9535() {
        assert_eq!(to_rfc9535(".status.phase").unwrap(), "$.status.phase");
        assert_eq!(
            to_rfc9535(".metadata.labels.tier-x").unwrap(),
            "$.metadata.labels['tier-x']"
        );
        assert_eq!(
            to_rfc9535("$.spec.containers[*].image").unwrap(),
            "$.spec.containers[*].image"
        );
        assert_eq!(
            to_rfc9535(".status.conditions[?(@.type==\"Ready\")].status").unwrap(),
            "$.status.conditions[?(@.type==\"Ready\")].status"
        );
        assert!(to_rfc9535("status").is_err());
        assert!(to_rfc9535(".a[?(@.x==]").is_err());
    }

    #[test]
    fn templates_render_like_kubectl() {
        let p = pod();
        let t = Template::parse("{.metadata.name}{\"\\t\"}{.status.phase}{\"\\n\"}").unwrap();
        assert_eq!(t.render(&p), "web\tRunning\n");
        let t = Template::parse("{range .spec.containers[*]}{.name}={.image};{end}").unwrap();
        assert_eq!(t.render(&p), "a=i1;b=i2;");
        let t = Template::parse("{.spec.containers[*].name}").unwrap();
        assert_eq!(t.render(&p), "a b");
        let t = Template::parse("{.status.conditions[?(@.type==\"Ready\")].status}").unwrap();
        assert_eq!(t.render(&p), "True");
        let t = Template::parse("phase={.status.missing}.").unwrap();
        assert_eq!(t.render(&p), "phase=.");
        assert_eq!(Template::parse(".metadata.name").unwrap().render(&p), "web");
        assert!(Template::parse("{range .a}x").is_err());
        assert!(Template::parse("{end}").is_err());
        assert!(Template::parse("{.a").is_err());
    }
}
