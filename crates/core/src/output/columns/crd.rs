//! A custom resource's columns: the CRD's additionalPrinterColumns, each cell as
//! kube-apiserver's table convertor makes it.

use serde_json::Value;

use super::super::template::Template;
use super::format::{go_float, go_json, go_value};
use super::{age, Column, Getter};

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
                    template: Template::parse(c["jsonPath"].as_str()?).ok()?,
                    priority: c["priority"].as_i64().unwrap_or(0),
                })
            })
            .collect()
    }
}

/// A custom resource's additionalPrinterColumns (`priority > 0` only when `wide`), or AGE
/// when the CRD declares none.
pub(super) fn crd_columns(pc: &[PrinterColumn], wide: bool) -> Vec<Column> {
    if pc.is_empty() {
        return vec![Column::age()];
    }
    pc.iter()
        .filter(|p| wide || p.priority == 0)
        .map(|p| Column {
            header: p.name.clone(),
            get: Getter::Path {
                template: p.template.clone(),
                kind: p.kind.clone(),
            },
        })
        .collect()
}

/// A CRD printer column's cell, as kube-apiserver's table convertor makes it and kubectl
/// prints it: nothing found (or a value of another type) is an empty cell; `string`
/// prints a scalar as Go's `fmt` does (see [`go_value`]) and a map or a list as compact
/// JSON (see [`go_json`]); `integer` truncates; `number`
/// went through the Table's JSON, so an integral value prints as an integer; `date` is
/// an age (`<invalid>` when not a timestamp).
pub(super) fn crd_cell(kind: &str, v: Option<&Value>, now: jiff::Timestamp) -> String {
    let Some(v) = v.filter(|v| !v.is_null()) else {
        return String::new();
    };
    match kind {
        "integer" => match v {
            Value::Number(n) => match n.as_i64() {
                Some(i) => i.to_string(),
                None => n
                    .as_f64()
                    .map_or(String::new(), |f| (f.trunc() as i64).to_string()),
            },
            _ => String::new(),
        },
        "number" => match v {
            Value::Number(n) => match (n.as_i64(), n.as_f64()) {
                (Some(i), _) => i.to_string(),
                (None, Some(f)) if f.fract() == 0.0 && f.abs() < 9.2e18 => {
                    format!("{f:.0}")
                }
                (None, Some(f)) => go_float(f),
                (None, None) => String::new(),
            },
            _ => String::new(),
        },
        "boolean" => v.as_bool().map_or(String::new(), |b| b.to_string()),
        "date" => match v.as_str() {
            Some(t) if t.parse::<jiff::Timestamp>().is_ok() => age(Some(t), now),
            Some(_) => "<invalid>".into(),
            None => String::new(),
        },
        // apiextensions-apiserver's tableconvertor prints `string` columns with client-go's
        // `JSONPath.PrintResults`, which marshals a map, array or slice as JSON
        // (util/jsonpath/jsonpath.go: `case reflect.Map: case reflect.Array: case
        // reflect.Slice:` → `json.Marshal`) and prints anything else with `fmt.Fprint`.
        _ if v.is_object() || v.is_array() => go_json(v),
        _ => go_value(v),
    }
}
