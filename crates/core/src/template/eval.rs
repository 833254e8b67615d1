//! client-go's JSONPath evaluation (k8s.io/client-go/util/jsonpath/jsonpath.go) over a JSON
//! value as kubectl holds an object (unstructured: maps, slices, strings, bools, int64 and
//! float64), with `AllowMissingKeys(true)`, kubectl's default: the same results in the same
//! order, the same `{range}`/`{end}` bookkeeping, the same errors. Filters compare as Go's
//! text/template does (`eq`, `lt`, … of client-go's forked copy): values of one kind only.

use std::borrow::Cow;

use serde_json::Value;

use super::parse::{Node, Param};

type Vals<'v> = Vec<Cow<'v, Value>>;

/// An evaluation error: jsonpath.go's message, and what the failing step returned with it
/// (an "exists" filter counts those, as jsonpath.go does).
struct Fail<'v> {
    partial: Vals<'v>,
    msg: String,
}

type Res<'v> = Result<Vals<'v>, Fail<'v>>;

fn fail<'v>(partial: Vals<'v>, msg: impl Into<String>) -> Fail<'v> {
    Fail {
        partial,
        msg: msg.into(),
    }
}

/// jsonpath.go's JSONPath state: where `{range}` and `{end}` stand.
#[derive(Default)]
pub(super) struct Eval {
    begin_range: u32,
    in_range: u32,
    end_range: u32,
    /// The index in the template's nodes of the last `{end}` met (jsonpath.go's
    /// lastEndNode).
    last_end: Option<usize>,
}

impl Eval {
    /// jsonpath.go's FindResults: each node's results, a `{range}` once per value.
    pub fn find_results(
        &mut self,
        nodes: &[Node],
        start: usize,
        data: &Value,
    ) -> Result<Vec<Vec<Value>>, String> {
        let cur: Vals = vec![Cow::Borrowed(data)];
        let mut full = Vec::new();
        let mut i = start;
        while i < nodes.len() {
            let results = self.walk(&cur, &nodes[i]).map_err(|f| f.msg)?;
            // An end node: the end of the current block.
            if self.end_range > 0 && self.end_range <= self.in_range {
                self.end_range -= 1;
                self.last_end = Some(i);
                break;
            }
            // A range node: the nodes after it, once per value.
            if self.begin_range > 0 {
                self.begin_range -= 1;
                self.in_range += 1;
                if results.is_empty() {
                    // Still walked, to find the end.
                    self.find_results(nodes, i + 1, &Value::Null)?;
                } else {
                    for value in &results {
                        full.extend(self.find_results(nodes, i + 1, value)?);
                    }
                }
                self.in_range -= 1;
                // On after the last end met, if it is ahead.
                if let Some(k) = self.last_end.filter(|&k| k > i && k < nodes.len()) {
                    i = k;
                }
                i += 1;
                continue;
            }
            full.push(results.into_iter().map(Cow::into_owned).collect());
            i += 1;
        }
        Ok(full)
    }

    fn walk<'v>(&mut self, input: &Vals<'v>, node: &Node) -> Res<'v> {
        match node {
            Node::List(nodes) => self.list(input, nodes),
            Node::Text(t) => Ok(vec![Cow::Owned(Value::String(t.clone()))]),
            Node::Field(name) => Ok(field(input, name)),
            Node::Array(params) => array(input, params),
            Node::Filter { left, right, op } => self.filter(input, left, right, op),
            Node::Int(n) => Ok(literal(input, Value::from(*n))),
            Node::Float(f) => Ok(literal(input, Value::from(*f))),
            Node::Bool(b) => Ok(literal(input, Value::Bool(*b))),
            Node::Wildcard => Ok(input.iter().flat_map(children).collect()),
            Node::Recursive => Ok(recursive(input)),
            Node::Union(lists) => {
                let mut out = Vec::new();
                for l in lists {
                    out.extend(
                        self.list(input, l)
                            .map_err(|f| fail(input.clone(), f.msg))?,
                    );
                }
                Ok(out)
            }
            Node::Identifier(name) => self.identifier(input, name),
        }
    }

    /// evalList: the nodes in turn, each on the previous one's results.
    fn list<'v>(&mut self, input: &Vals<'v>, nodes: &[Node]) -> Res<'v> {
        let mut cur = input.clone();
        for n in nodes {
            cur = self.walk(&cur, n)?;
        }
        Ok(cur)
    }

    fn identifier<'v>(&mut self, input: &Vals<'v>, name: &str) -> Res<'v> {
        match name {
            "range" => {
                self.begin_range += 1;
                Ok(input.clone())
            }
            "end" if self.in_range > 0 => {
                self.end_range += 1;
                Ok(Vec::new())
            }
            "end" => Err(fail(Vec::new(), "not in range, nothing to end")),
            _ => Err(fail(
                input.clone(),
                format!("unrecognized identifier {name}"),
            )),
        }
    }

    /// evalFilter: the elements of each array for which the comparison holds.
    fn filter<'v>(&mut self, input: &Vals<'v>, left: &[Node], right: &[Node], op: &str) -> Res<'v> {
        let mut results = Vec::new();
        for value in input {
            let Value::Array(items) = value.as_ref() else {
                return Err(fail(
                    input.clone(),
                    format!(
                        "{} is not array or slice and cannot be filtered",
                        crate::gofmt::go_value(value)
                    ),
                ));
            };
            for (i, item) in items.iter().enumerate() {
                let element = |v: &Cow<'v, Value>| -> Cow<'v, Value> {
                    match v {
                        Cow::Borrowed(a) => match a {
                            Value::Array(a) => Cow::Borrowed(&a[i]),
                            _ => Cow::Owned(Value::Null),
                        },
                        Cow::Owned(_) => Cow::Owned(item.clone()),
                    }
                };
                let temp = vec![element(value)];
                let lefts = self.list(&temp, left);
                if op == "exists" {
                    let found = match lefts {
                        Ok(l) => !l.is_empty(),
                        Err(f) => !f.partial.is_empty(),
                    };
                    if found {
                        results.push(element(value));
                    }
                    continue;
                }
                let lefts = lefts.map_err(|f| fail(input.clone(), f.msg))?;
                let Some(left) = single(&lefts).map_err(|m| fail(input.clone(), m))? else {
                    continue;
                };
                let rights = self
                    .list(&temp, right)
                    .map_err(|f| fail(input.clone(), f.msg))?;
                let Some(right) = single(&rights).map_err(|m| fail(input.clone(), m))? else {
                    continue;
                };
                let pass = match op {
                    "<" => less(left, right),
                    ">" => less_equal(left, right).map(|le| !le),
                    "==" => equal(left, right),
                    "!=" => equal(left, right).map(|eq| !eq),
                    "<=" => less_equal(left, right),
                    ">=" => less(left, right).map(|lt| !lt),
                    _ => Err(format!("unrecognized filter operator {op}")),
                }
                .map_err(|msg| fail(results.clone(), msg))?;
                if pass {
                    results.push(element(value));
                }
            }
        }
        Ok(results)
    }
}

/// A literal (`5`, `1.5`, `true`) once per input value, as jsonpath.go's evalInt.
fn literal<'v>(input: &Vals<'v>, v: Value) -> Vals<'v> {
    input.iter().map(|_| Cow::Owned(v.clone())).collect()
}

/// evalField: each map's key `name` (a JSON null included); nothing from anything else.
fn field<'v>(input: &Vals<'v>, name: &str) -> Vals<'v> {
    input
        .iter()
        .filter_map(|v| match v {
            Cow::Borrowed(Value::Object(m)) => m.get(name).map(Cow::Borrowed),
            Cow::Owned(Value::Object(m)) => m.get(name).cloned().map(Cow::Owned),
            _ => None,
        })
        .collect()
}

/// What a wildcard yields of a value: a map's values, a list's items, a string's bytes
/// (Go's reflect indexes a string by byte); nothing of a scalar or a null.
fn children<'a, 'v>(v: &'a Cow<'v, Value>) -> Box<dyn Iterator<Item = Cow<'v, Value>> + 'a> {
    match v {
        Cow::Borrowed(Value::Object(m)) => Box::new(m.values().map(Cow::Borrowed)),
        Cow::Borrowed(Value::Array(a)) => Box::new(a.iter().map(Cow::Borrowed)),
        Cow::Owned(Value::Object(m)) => Box::new(m.values().map(|x| Cow::Owned(x.clone()))),
        Cow::Owned(Value::Array(a)) => Box::new(a.iter().map(|x| Cow::Owned(x.clone()))),
        _ => match v.as_ref() {
            Value::String(s) => Box::new(s.bytes().map(|b| Cow::Owned(Value::from(b)))),
            _ => Box::new(std::iter::empty()),
        },
    }
}

/// evalRecursive: each value that has children, then its descendants, depth first.
fn recursive<'v>(input: &Vals<'v>) -> Vals<'v> {
    let mut out = Vec::new();
    for v in input {
        let kids: Vals<'v> = children(v).collect();
        if !kids.is_empty() {
            out.push(v.clone());
            out.extend(recursive(&kids));
        }
    }
    out
}

/// Go's type name of a value as kubectl decodes it, for jsonpath.go's messages.
fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_i64() => "int64",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// evalArray: each list's items from start to end by step.
fn array<'v>(input: &Vals<'v>, node: &[Param; 3]) -> Res<'v> {
    let mut result = Vec::new();
    for value in input {
        let len = match value.as_ref() {
            Value::Null => continue,
            Value::Array(a) => a.len() as i64,
            other => {
                return Err(fail(
                    input.clone(),
                    format!("{} is not array or slice", go_type(other)),
                ))
            }
        };
        let mut params = *node;
        if !params[0].known {
            params[0].value = 0;
        }
        if params[0].value < 0 {
            params[0].value += len;
        }
        if !params[1].known {
            params[1].value = len;
        }
        if params[1].value < 0 || (params[1].value == 0 && params[1].derived) {
            params[1].value += len;
        }
        let (start, end) = (params[0].value, params[1].value);
        if start == end {
            // Zero elements asked: allowed, and nothing more of this input.
            return Ok(result);
        }
        if start >= len || start < 0 {
            return Err(fail(
                input.clone(),
                format!("array index out of bounds: index {start}, length {len}"),
            ));
        }
        if end > len || end < 0 {
            return Err(fail(
                input.clone(),
                format!("array index out of bounds: index {}, length {len}", end - 1),
            ));
        }
        if start > end {
            return Err(fail(
                input.clone(),
                format!("starting index {start} is greater than ending index {end}"),
            ));
        }
        let step = if params[2].known {
            if params[2].value <= 0 {
                return Err(fail(input.clone(), "step must be > 0"));
            }
            params[2].value as usize
        } else {
            1
        };
        let (start, end) = (start as usize, end as usize);
        for i in (start..end).step_by(step) {
            result.push(match value {
                Cow::Borrowed(Value::Array(a)) => Cow::Borrowed(&a[i]),
                Cow::Owned(Value::Array(a)) => Cow::Owned(a[i].clone()),
                _ => continue,
            });
        }
    }
    Ok(result)
}

/// The kinds text/template compares (basicKind); a JSON integer is Go's int64 and any
/// other number a float64, as kubectl decodes JSON.
enum Basic<'a> {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(&'a str),
}

fn basic(v: &Value) -> Result<Basic<'_>, String> {
    Ok(match v {
        Value::Bool(b) => Basic::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Basic::Int(i),
            None => Basic::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => Basic::Str(s),
        _ => return Err("invalid type for comparison".into()),
    })
}

const INCOMPATIBLE: &str = "incompatible types for comparison";

/// text/template's `eq` of two values.
fn equal(a: &Value, b: &Value) -> Result<bool, String> {
    Ok(match (basic(a)?, basic(b)?) {
        (Basic::Bool(x), Basic::Bool(y)) => x == y,
        (Basic::Int(x), Basic::Int(y)) => x == y,
        (Basic::Float(x), Basic::Float(y)) => x == y,
        (Basic::Str(x), Basic::Str(y)) => x == y,
        _ => return Err(INCOMPATIBLE.into()),
    })
}

/// text/template's `lt`.
fn less(a: &Value, b: &Value) -> Result<bool, String> {
    Ok(match (basic(a)?, basic(b)?) {
        (Basic::Bool(_), Basic::Bool(_)) => return Err("invalid type for comparison".into()),
        (Basic::Int(x), Basic::Int(y)) => x < y,
        (Basic::Float(x), Basic::Float(y)) => x < y,
        (Basic::Str(x), Basic::Str(y)) => x < y,
        _ => return Err(INCOMPATIBLE.into()),
    })
}

/// text/template's `le`: `lt`, else `eq`.
fn less_equal(a: &Value, b: &Value) -> Result<bool, String> {
    Ok(less(a, b)? || equal(a, b)?)
}

/// The one element a filter compares: none (the filter skips the item), or an error for
/// several (client-go's jsonpath.go `evalFilter`).
fn single<T>(found: &[T]) -> Result<Option<&T>, &'static str> {
    match found {
        [] => Ok(None),
        [one] => Ok(Some(one)),
        _ => Err("can only compare one element at a time"),
    }
}
