//! Every printer of kwatch against a genuine kube-apiserver 1.32.13: for each row of the
//! Tables captured in `testdata/tables-1.32/` of this crate (see the README there), kwatch's columns
//! are the server's, and each cell kwatch prints from the row's object is the cell the
//! server sent, as kubectl prints it ([`server_cell`]), column for column, with and
//! without `-o wide`; and [`ServerPrinter`]'s row is the row the server sent, every cell
//! of the JSON type the server gave it.
//!
//! "Now" for age-like cells is the response's `Date` header (`dates.tsv`): one-second
//! resolution, and the README says it can be 1 s later than the moment the server made
//! the Table, so a cell also matches at `Date` − 1 s. Nothing else is tolerated.

use std::collections::BTreeSet;

use serde_json::Value;

use super::*;
use super::{crd::*, registry::*};
use crate::client::target::Resource;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/tables-1.32");

/// Each captured Table and the kind it lists. `nodes` is empty (the capture's cluster had
/// no node): only its columns are checked.
const CAPTURES: &[(&str, &str, &str)] = &[
    ("pods", "v1", "Pod"),
    ("services", "v1", "Service"),
    ("endpoints", "v1", "Endpoints"),
    ("configmaps", "v1", "ConfigMap"),
    ("secrets", "v1", "Secret"),
    ("serviceaccounts", "v1", "ServiceAccount"),
    ("persistentvolumeclaims", "v1", "PersistentVolumeClaim"),
    ("events", "v1", "Event"),
    ("events.events.k8s.io", "events.k8s.io/v1", "Event"),
    ("namespaces", "v1", "Namespace"),
    ("nodes", "v1", "Node"),
    ("deployments", "apps/v1", "Deployment"),
    ("replicasets", "apps/v1", "ReplicaSet"),
    ("statefulsets", "apps/v1", "StatefulSet"),
    ("daemonsets", "apps/v1", "DaemonSet"),
    ("jobs", "batch/v1", "Job"),
    ("cronjobs", "batch/v1", "CronJob"),
    (
        "horizontalpodautoscalers",
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
    ),
    ("poddisruptionbudgets", "policy/v1", "PodDisruptionBudget"),
    ("ingresses", "networking.k8s.io/v1", "Ingress"),
    ("endpointslices", "discovery.k8s.io/v1", "EndpointSlice"),
    ("leases", "coordination.k8s.io/v1", "Lease"),
    ("leases.kube-system", "coordination.k8s.io/v1", "Lease"),
    ("roles", "rbac.authorization.k8s.io/v1", "Role"),
    (
        "rolebindings",
        "rbac.authorization.k8s.io/v1",
        "RoleBinding",
    ),
    (
        "clusterroles",
        "rbac.authorization.k8s.io/v1",
        "ClusterRole",
    ),
    (
        "clusterrolebindings",
        "rbac.authorization.k8s.io/v1",
        "ClusterRoleBinding",
    ),
    (
        "customresourcedefinitions",
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
    ),
    ("apiservices", "apiregistration.k8s.io/v1", "APIService"),
    // A custom resource: its columns come from the CRD's additionalPrinterColumns.
    (
        "gadgets.refcap.example.com",
        "refcap.example.com/v1",
        "Gadget",
    ),
];

const GADGET_CRD: &str = "gadgets.refcap.example.com";

fn read_json(file: &str) -> Value {
    let path = format!("{DIR}/{file}");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The `Date` of each capture's response, by file name.
fn dates() -> Vec<(String, jiff::Timestamp)> {
    let text = std::fs::read_to_string(format!("{DIR}/dates.tsv")).unwrap();
    text.lines()
        .map(|l| {
            let (file, date) = l.split_once('\t').unwrap();
            let t = jiff::fmt::rfc2822::DateTimeParser::new()
                .parse_timestamp(date)
                .unwrap_or_else(|e| panic!("{file}: {date}: {e}"));
            (file.to_owned(), t)
        })
        .collect()
}

/// The gadgets' printer columns, read from the captured CRD (served version `v1`).
fn gadget_printer_columns() -> Vec<PrinterColumn> {
    let crds = read_json("customresourcedefinitions.table.json");
    let crd = crds["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["object"])
        .find(|o| o["metadata"]["name"] == GADGET_CRD)
        .unwrap();
    PrinterColumn::from_crd(crd, "v1")
}

/// What one capture's check counted.
#[derive(Default)]
struct Checked {
    rows: usize,
    cells: usize,
}

/// Checks one capture; mismatches go to `bad`, one line each.
fn check(file: &str, r: &Resource, now: jiff::Timestamp, bad: &mut Vec<String>) -> Checked {
    let table = read_json(&format!("{file}.table.json"));
    let defs: Vec<crate::cache::object::TableColumn> =
        serde_json::from_value(table["columnDefinitions"].clone()).unwrap();
    let crd = (r.kind == "Gadget").then(gadget_printer_columns);
    // A first name column is kwatch's NAME, printed by the table ([`server_columns`]
    // leaves it out alike); elsewhere (an event's, last and of priority 1) it is one of
    // the printer's columns.
    let name_at = defs.iter().position(|d| d.format == "name").unwrap();
    let skip = (name_at == 0).then_some(0);
    let mut checked = Checked::default();
    let printer = ServerPrinter::new(group(r), &r.kind, crd.as_deref());
    let headers: Vec<String> = defs.iter().map(|d| d.name.to_uppercase()).collect();
    if printer.headers() != headers {
        bad.push(format!(
            "{file}: server printer's columns {:?}",
            printer.headers()
        ));
    }
    for wide in [false, true] {
        let theirs: Vec<(usize, String)> = defs
            .iter()
            .enumerate()
            .filter(|(i, d)| Some(*i) != skip && (wide || d.priority == 0))
            .map(|(i, d)| (i, d.name.to_uppercase()))
            .collect();
        let cols = resource_columns(r, wide, crd.as_deref());
        let ours: Vec<&str> = cols.iter().map(|c| c.header.as_str()).collect();
        let names: Vec<&str> = theirs.iter().map(|(_, n)| n.as_str()).collect();
        if ours != names {
            bad.push(format!(
                "{file} wide={wide}: columns {ours:?}, server {names:?}"
            ));
            continue;
        }
        for row in table["rows"].as_array().unwrap() {
            let obj = &row["object"];
            let name = obj["metadata"]["name"].as_str().unwrap_or_default();
            assert_eq!(obj["kind"], r.kind.as_str(), "{file} {name}");
            let server = |i: usize| server_cell(&row["cells"][i]);
            if server(name_at) != name {
                bad.push(format!("{file} {name}: name cell {:?}", server(name_at)));
            }
            let raw = obj.to_string();
            let parsed = RowObject::parse(&cols, Some(&raw));
            let created = obj["metadata"]["creationTimestamp"].as_str();
            let earlier = now - jiff::SignedDuration::from_secs(1);
            // The row as the server's Table carries it: every cell, typed.
            let typed = [now, earlier].map(|t| Value::Array(printer.row(obj, t)));
            if wide && !typed.contains(&row["cells"]) {
                bad.push(format!(
                    "{file} {name}: server printer's row {}, server {}",
                    typed[0], row["cells"]
                ));
            }
            for (c, (i, header)) in cols.iter().zip(&theirs) {
                let want = server(*i);
                let got = parsed.cell(c, created, now);
                if got != want && parsed.cell(c, created, earlier) != want {
                    bad.push(format!(
                        "{file} {name} {header} (wide={wide}): kwatch {got:?}, server {want:?}"
                    ));
                }
                checked.cells += 1;
            }
            checked.rows += usize::from(wide);
        }
    }
    checked
}

/// kwatch's printers, cell for cell, against a genuine kube-apiserver's
/// Tables; every kind kwatch has a printer for is among the captures.
#[test]
fn every_printer_matches_a_genuine_kube_apiserver() {
    let dates = dates();
    let mut bad = Vec::new();
    let mut kinds = BTreeSet::new();
    let (mut rows, mut cells) = (0, 0);
    for (file, api_version, kind) in CAPTURES {
        let r = Resource {
            name: (*file).into(),
            kind: (*kind).into(),
            api_version: (*api_version).into(),
            namespaced: true,
        };
        let table = format!("{file}.table.json");
        let now = dates
            .iter()
            .find(|(f, _)| *f == table)
            .unwrap_or_else(|| panic!("no Date for {table}"))
            .1;
        let c = check(file, &r, now, &mut bad);
        kinds.insert((group(&r).to_owned(), kind.to_string()));
        rows += c.rows;
        cells += c.cells;
    }
    assert!(
        bad.is_empty(),
        "{} cells differ:\n{}",
        bad.len(),
        bad.join("\n")
    );
    for (g, k, _) in BUILTIN {
        assert!(
            kinds.contains(&(g.to_string(), k.to_string())),
            "no capture checks the printer of {g}/{k}"
        );
    }
    // The captures' size, so that a file gone missing or emptied fails here.
    assert_eq!(
        (kinds.len(), rows, cells),
        (29, 329, 2763),
        "kinds, rows, cells"
    );
}
