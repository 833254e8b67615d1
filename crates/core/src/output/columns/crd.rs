//! A custom resource's columns: the CRD's additionalPrinterColumns, each cell as
//! kube-apiserver's table convertor makes it.

use serde_json::Value;

use super::format::age;
use crate::gofmt::{go_json, go_value};
use crate::template::Template;

/// A CRD's additionalPrinterColumns entry, as read from the CRD object.
#[derive(Debug, Clone, PartialEq)]
pub struct PrinterColumn {
    pub name: String,
    /// `date` columns print as an age.
    pub kind: String,
    pub template: Template,
    /// Columns with priority > 0 appear only with `-o wide`.
    pub priority: i64,
}

impl PrinterColumn {
    /// The additionalPrinterColumns of `version` in a CRD object; invalid entries skipped.
    pub fn from_crd(crd: &Value, version: &str) -> Vec<PrinterColumn> {
        let versions = crd["spec"]["versions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let cols = versions
            .iter()
            .find(|v| v["name"] == version)
            .and_then(|v| v["additionalPrinterColumns"].as_array())
            .cloned()
            .unwrap_or_default();
        cols.iter()
            .filter_map(|c| {
                Some(PrinterColumn {
                    name: c["name"].as_str()?.to_uppercase(),
                    kind: c["type"].as_str().unwrap_or("string").to_owned(),
                    // As apiextensions' table convertor parses it: `{` + jsonPath + `}`.
                    template: Template::parse(&format!("{{{}}}", c["jsonPath"].as_str()?)).ok()?,
                    priority: c["priority"].as_i64().unwrap_or(0),
                })
            })
            .collect()
    }
}

/// A CRD printer column's cell, as kube-apiserver's table convertor makes it and kubectl
/// prints it ([`crd_value`], its JSON cell): nothing found (or a value of another type)
/// is an empty cell; `string` prints a scalar as Go's `fmt` does (see [`go_value`]) and a
/// map or a list as compact JSON (see [`go_json`]); `integer` truncates; `number` went
/// through the Table's JSON, so an integral value prints as an integer; `date` is an age
/// (`<invalid>` when not a timestamp).
pub(super) fn crd_cell(kind: &str, v: Option<&Value>, now: jiff::Timestamp) -> String {
    match crd_value(kind, v, now) {
        Value::Null => String::new(),
        Value::String(s) => s,
        other => go_value(&other),
    }
}

/// A CRD printer column's cell in the server's Table, as apiextensions-apiserver's
/// tableconvertor.go makes it (`cellForJSONValue`, and `JSONPath.PrintResults` for
/// `string`): `null` when nothing is found or the value is not of the column's type;
/// `integer` an int64 (a float truncated), `number` a float64 (an integral one as Go's
/// encoding/json writes it, an integer), `boolean` a bool, `date` an age string
/// (`<invalid>` when not a timestamp), `string` any value as a string.
pub(super) fn crd_value(kind: &str, v: Option<&Value>, now: jiff::Timestamp) -> Value {
    let Some(v) = v.filter(|v| !v.is_null()) else {
        return Value::Null;
    };
    match (kind, v) {
        ("integer", Value::Number(n)) => n
            .as_i64()
            .or_else(|| n.as_f64().map(|f| f.trunc() as i64))
            .map_or(Value::Null, Value::from),
        ("number", Value::Number(n)) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Value::from(i),
            (None, Some(f)) if f.fract() == 0.0 && f.abs() < 9.2e18 => Value::from(f as i64),
            (None, Some(f)) => Value::from(f),
            (None, None) => Value::Null,
        },
        ("boolean", Value::Bool(b)) => Value::Bool(*b),
        ("date", Value::String(t)) if t.parse::<jiff::Timestamp>().is_ok() => {
            Value::String(age(Some(t), now))
        }
        ("date", Value::String(_)) => Value::String("<invalid>".into()),
        ("integer" | "number" | "boolean" | "date", _) => Value::Null,
        // apiextensions-apiserver's tableconvertor prints `string` columns with client-go's
        // `JSONPath.PrintResults`, which marshals a map, array or slice as JSON
        // (util/jsonpath/jsonpath.go: `case reflect.Map: case reflect.Array: case
        // reflect.Slice:` → `json.Marshal`) and prints anything else with `fmt.Fprint`.
        _ if v.is_object() || v.is_array() => Value::String(go_json(v)),
        _ => Value::String(go_value(v)),
    }
}
