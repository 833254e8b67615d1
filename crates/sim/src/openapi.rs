//! Minimal OpenAPI documents: just enough for kubectl's field-validation check.
//!
//! `kubectl create -f` (default `--validate=strict`) asks `/openapi/v3` whether the PATCH
//! operation of the object's GroupVersionKind takes a `fieldValidation` query parameter; if so
//! it leaves validation to the server (which this simulator accepts without checking). Each
//! group-version document therefore holds, per resource, the object path with a PATCH
//! operation tagged `x-kubernetes-group-version-kind` and that parameter, and a schema that
//! accepts any object. `/openapi/v2` is a swagger document of the same shape.

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{json, Map, Value};

use super::resources::{ResourceDef, RESOURCES};
use super::status::value_response;

fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

fn object_path(r: &ResourceDef) -> String {
    let base = format!("/{}", gv_path(r.group, r.version));
    if r.namespaced {
        format!("{base}/namespaces/{{namespace}}/{}/{{name}}", r.plural)
    } else {
        format!("{base}/{}/{{name}}", r.plural)
    }
}

fn schema_name(r: &ResourceDef) -> String {
    let g = if r.group.is_empty() { "core" } else { r.group };
    format!("sim.{g}.{}.{}", r.version, r.kind)
}

fn operation(r: &ResourceDef, v3: bool) -> Value {
    let param = if v3 {
        json!({"name": "fieldValidation", "in": "query", "schema": {"type": "string"}, "uniqueItems": true})
    } else {
        json!({"name": "fieldValidation", "in": "query", "type": "string", "uniqueItems": true})
    };
    json!({
        "operationId": format!("patch{}", r.kind),
        "parameters": [param],
        "responses": {"200": {"description": "OK"}},
        "x-kubernetes-action": "patch",
        "x-kubernetes-group-version-kind": {"group": r.group, "version": r.version, "kind": r.kind},
    })
}

fn schema(r: &ResourceDef) -> Value {
    json!({
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": true,
        "x-kubernetes-group-version-kind": [{"group": r.group, "version": r.version, "kind": r.kind}],
    })
}

/// The swagger 2.0 document of every resource (`gv: None`), or the OpenAPI v3 document of
/// one group-version: the same paths and schemas, under each format's own keys.
fn doc(gv: Option<(&str, &str)>) -> Value {
    let mut paths = Map::new();
    let mut schemas = Map::new();
    let in_doc = |r: &&ResourceDef| gv.is_none_or(|(g, v)| r.group == g && r.version == v);
    for r in RESOURCES.iter().filter(in_doc) {
        paths.insert(object_path(r), json!({"patch": operation(r, gv.is_some())}));
        schemas.insert(schema_name(r), schema(r));
    }
    let info = json!({"title": "Kubernetes", "version": "v1.32.13"});
    match gv {
        Some(_) => json!({
            "openapi": "3.0.0", "info": info, "paths": paths, "components": {"schemas": schemas},
        }),
        None => json!({"swagger": "2.0", "info": info, "paths": paths, "definitions": schemas}),
    }
}

/// Answers `/openapi/v2`, `/openapi/v3` and `/openapi/v3/<gv path>`.
pub fn handle(path: &str) -> Option<Response> {
    if path == "/openapi/v2" {
        return Some(value_response(StatusCode::OK, &doc(None)));
    }
    let rest = path.strip_prefix("/openapi/v3")?;
    if rest.is_empty() {
        let mut paths = Map::new();
        for r in RESOURCES {
            let p = gv_path(r.group, r.version);
            paths
                .entry(p.clone())
                .or_insert_with(|| json!({"serverRelativeURL": format!("/openapi/v3/{p}?hash=0")}));
        }
        return Some(value_response(StatusCode::OK, &json!({"paths": paths})));
    }
    let gv = rest.trim_start_matches('/');
    let (group, version) = match gv.split('/').collect::<Vec<_>>().as_slice() {
        ["api", v] => ("", *v),
        ["apis", g, v] => (*g, *v),
        _ => return None,
    };
    let r = RESOURCES
        .iter()
        .find(|r| r.group == group && r.version == version)?;
    Some(value_response(
        StatusCode::OK,
        &doc(Some((r.group, r.version))),
    ))
}
