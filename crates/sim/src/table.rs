//! Server-side printing: `Table` (what kubectl asks for with `Accept: …;as=Table;…`).
//!
//! The column definitions are a genuine kube-apiserver 1.32.13's, as it sent them
//! (`ref/table-columns.json`, taken from the Tables in kwatch-core's
//! `testdata/tables-1.32/`): names, types, descriptions and priorities, `-o wide`'s among
//! them. The widgets' follow their CRD's additionalPrinterColumns (`ref/crd-widgets.json`).
//!
//! The cells come from kwatch-core's printers (`output::columns`, its port of
//! kube-apiserver's printers.go, through [`ServerPrinter`]): the simulator has no printer
//! of its own, so kubectl against the simulator reads kwatch's port of printers.go, as
//! kwatch does. One port, because two drift apart, and a difference between them would
//! only say that one of them is wrong, not which: the genuine server's captures are the
//! ground truth, and they check that port cell for cell
//! (`crates/core/src/output/columns/genuine.rs`; the tests below hold this file's whole
//! Tables, JSON types of the cells included, against them). A row holds a cell for every
//! column, as the server prints with `Wide: true`. Row objects follow `includeObject`
//! ([`row_object`]).

use std::sync::{Arc, LazyLock};

use serde_json::{json, Map, Value};

use super::request::{Include, TableOptions};
use super::resources::ResourceDef;
use super::storage::Obj;
use kwatch_core::output::columns::{PrinterColumn, ServerPrinter};

/// Every served kind's column definitions by resource (`plural`, `plural.group` outside
/// the core group), as a genuine kube-apiserver 1.32.13 sends them.
const TABLE_COLUMNS: &str = include_str!("ref/table-columns.json");

static DEFINITIONS: LazyLock<Map<String, Value>> =
    LazyLock::new(|| serde_json::from_str(TABLE_COLUMNS).unwrap_or_default());

/// The widgets CRD's additionalPrinterColumns (`ref/crd-widgets.json`, served version
/// `v1`).
static WIDGET_COLUMNS: LazyLock<Vec<PrinterColumn>> = LazyLock::new(|| {
    let crd = serde_json::from_str(include_str!("ref/crd-widgets.json")).unwrap_or_default();
    PrinterColumn::from_crd(&crd, "v1")
});

/// A kind without a printer gets apiserver's default table convertor (Name, Created At):
/// the Role's, which has no printer.
const DEFAULT_TABLE: &str = "roles.rbac.authorization.k8s.io";

/// The key of `def` in [`DEFINITIONS`].
fn key(def: &ResourceDef) -> String {
    if def.group.is_empty() {
        def.plural.to_owned()
    } else {
        format!("{}.{}", def.plural, def.group)
    }
}

/// The column definitions of `def`'s Table.
fn definitions(def: &ResourceDef) -> Vec<Value> {
    let of = |k: &str| {
        DEFINITIONS
            .get(k)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    if def.custom {
        // The custom resource's table convertor: Name as every Table has it, then the
        // widgets CRD's additionalPrinterColumns (ref/crd-widgets.json).
        let mut defs: Vec<Value> = of(DEFAULT_TABLE).into_iter().take(1).collect();
        defs.extend([("Size", "integer", ".spec.size"), ("Phase", "string", ".status.phase"), ("Age", "date", ".metadata.creationTimestamp")].map(|(n, t, path)| {
            json!({"name": n, "type": t, "format": "", "priority": 0,
                "description": format!("Custom resource definition column (in JSONPath format): {path}")})
        }));
        return defs;
    }
    match DEFINITIONS.get(&key(def)) {
        Some(_) => of(&key(def)),
        None => of(DEFAULT_TABLE),
    }
}

/// The printer of `def`'s rows: kwatch-core's, the widgets' from their CRD's
/// additionalPrinterColumns.
fn printer(def: &ResourceDef) -> ServerPrinter {
    let crd = def.custom.then_some(WIDGET_COLUMNS.as_slice());
    ServerPrinter::new(def.group, def.kind, crd)
}

fn list_meta(rv: Option<u64>, token: Option<&str>, remaining: Option<u64>) -> Value {
    let mut m = Map::new();
    if let Some(rv) = rv {
        m.insert("resourceVersion".into(), json!(rv.to_string()));
    }
    if let Some(t) = token {
        m.insert("continue".into(), json!(t));
    }
    if let Some(r) = remaining {
        m.insert("remainingItemCount".into(), json!(r));
    }
    Value::Object(m)
}

/// A row's `object` under `includeObject` (apiserver's response.go `asTable`): the object
/// as stored, its PartialObjectMetadata, or `null`.
fn row_object(v: &Value, include: Include) -> Value {
    match include {
        Include::Object => v.clone(),
        Include::Metadata => super::partial::from_value(v),
        Include::None => Value::Null,
    }
}

/// A `Table` of `items`. `rv` is the list's revision (`None` for a single object: the
/// object's own resourceVersion). With `opts.no_headers` the column definitions are
/// `null`, as metav1.Table encodes them when the convertor leaves them out.
pub fn table(
    def: &ResourceDef,
    items: &[Arc<Obj>],
    rv: Option<u64>,
    token: Option<&str>,
    remaining: Option<u64>,
    opts: TableOptions,
) -> Value {
    let rv = rv.or_else(|| items.first().map(|o| o.rv));
    let defs = definitions(def);
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_meta(rv, token, remaining),
        "columnDefinitions": if opts.no_headers { Value::Null } else { Value::Array(defs) },
        "rows": rows(def, items, opts.include, jiff::Timestamp::now()),
    })
}

/// The Table rows of `items`, their ages as of `now`.
fn rows(def: &ResourceDef, items: &[Arc<Obj>], include: Include, now: jiff::Timestamp) -> Value {
    let printer = printer(def);
    items
        .iter()
        .map(|o| {
            let v = o.value();
            json!({
                "cells": printer.row(&v, now),
                "object": row_object(&v, include),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources;

    /// Every kind the simulator serves has the genuine server's column definitions (the
    /// widgets their CRD's), and kwatch-core's printer of it a cell for each, in their
    /// order.
    #[test]
    fn every_kind_has_captured_columns_and_a_cell_for_each() {
        for def in resources::RESOURCES {
            let defs = definitions(def);
            if !def.custom {
                assert!(DEFINITIONS.contains_key(&key(def)), "{}", key(def));
            }
            assert_eq!(defs.iter().filter(|d| d["format"] == "name").count(), 1);
            let names: Vec<String> = defs
                .iter()
                .map(|d| d["name"].as_str().unwrap_or_default().to_uppercase())
                .collect();
            assert_eq!(printer(def).headers(), names, "{}", key(def));
        }
    }

    #[test]
    fn widget_table_has_typed_cells() {
        let def = &resources::RESOURCES[resources::WIDGETS];
        let o = Obj::from_value(
            resources::WIDGETS,
            json!({"metadata":{"name":"w1","namespace":"ns","resourceVersion":"5","creationTimestamp":"2020-01-01T00:00:00Z"},"spec":{"size":3}}),
        );
        let t = table(
            def,
            &[Arc::new(o)],
            Some(7),
            None,
            None,
            TableOptions::default(),
        );
        assert_eq!(t["rows"][0]["cells"][0], "w1");
        assert_eq!(t["rows"][0]["cells"][1], 3);
        assert_eq!(t["rows"][0]["cells"][2], Value::Null);
        assert_eq!(t["columnDefinitions"][0]["name"], "Name");
        assert_eq!(t["metadata"]["resourceVersion"], "7");
    }

    /// An event's name is its Table's last cell, as its column is last.
    #[test]
    fn an_events_name_is_its_last_cell() {
        let i = resources::RESOURCES
            .iter()
            .position(|r| r.plural == "events" && r.group.is_empty())
            .unwrap();
        let o = Obj::from_value(
            i,
            json!({"metadata":{"name":"e1","namespace":"ns","resourceVersion":"5"},
                "involvedObject":{"kind":"Pod","name":"p"},"type":"Normal","reason":"R","message":" m ","count":2}),
        );
        let t = table(
            &resources::RESOURCES[i],
            &[Arc::new(o)],
            None,
            None,
            None,
            TableOptions::default(),
        );
        let cells = t["rows"][0]["cells"].as_array().unwrap();
        assert_eq!(cells.len(), 10);
        assert_eq!(cells[3], "pod/p");
        assert_eq!(cells[6], "m");
        assert_eq!(cells[8], 2);
        assert_eq!(cells[9], "e1");
    }

    /// The simulator's Tables against the genuine server's, for the kinds captured in
    /// kwatch-core's `testdata/tables-1.32/`: the same column definitions, and for the
    /// captured objects the same cells, JSON types included, made at the response's
    /// `Date` (`dates.tsv`) or the second before it (the server made the Table in one of
    /// them).
    #[test]
    fn tables_agree_with_a_genuine_server() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../core/testdata/tables-1.32");
        let dates = std::fs::read_to_string(format!("{dir}/dates.tsv")).unwrap();
        let mut compared = 0;
        for (id, def) in resources::RESOURCES.iter().enumerate() {
            let file = match def.group {
                "events.k8s.io" => "events.events.k8s.io.table.json".to_owned(),
                _ => format!("{}.table.json", def.plural),
            };
            let Ok(text) = std::fs::read_to_string(format!("{dir}/{file}")) else {
                continue;
            };
            let genuine: Value = serde_json::from_str(&text).unwrap();
            let date = dates
                .lines()
                .find_map(|l| l.strip_prefix(&format!("{file}\t")))
                .and_then(|d| {
                    let parser = jiff::fmt::rfc2822::DateTimeParser::new();
                    parser.parse_timestamp(d).ok()
                })
                .unwrap_or_else(|| panic!("no Date of {file}"));
            let items: Vec<Arc<Obj>> = genuine["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| Arc::new(Obj::from_value(id, r["object"].clone())))
                .collect();
            let at = |now| rows(def, &items, Include::None, now);
            let (ours, before) = (at(date), at(date - jiff::SignedDuration::from_secs(1)));
            assert_eq!(
                Value::Array(definitions(def)),
                genuine["columnDefinitions"],
                "{file}"
            );
            for (i, row) in genuine["rows"].as_array().unwrap().iter().enumerate() {
                let cells = &row["cells"];
                assert!(
                    ours[i]["cells"] == *cells || before[i]["cells"] == *cells,
                    "{file} row {i}: simulator {}, genuine {cells}",
                    ours[i]["cells"]
                );
                compared += 1;
            }
        }
        assert_eq!(compared, 325, "rows compared");
    }
}
