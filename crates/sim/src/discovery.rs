//! Discovery: `/version`, `/api`, `/api/v1`, `/apis`, `/apis/<group>`, `/apis/<group>/<version>`,
//! aggregated discovery (`Accept: …;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`),
//! health endpoints and a minimal `/openapi/v2` and `/openapi/v3`.
//!
//! The documents are the real v1.32 responses (see `ref/`), trimmed to the resources in
//! [`super::resources::RESOURCES`].

use std::sync::atomic::{AtomicU64, Ordering};

use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use serde_json::{json, Value};

use super::status::{json_response, value_response};
use super::{openapi, App};
use kwatch_core::client::protobuf::Table;

const VERSION: &str = include_str!("ref/version.json");
const API_V1: &str = include_str!("ref/api-v1.json");
const APIS: &str = include_str!("ref/apis.json");
const APPS_V1: &str = include_str!("ref/apis-apps-v1.json");
const EXAMPLE_V1: &str = include_str!("ref/apis-example.com-v1.json");
const APIEXT_V1: &str = include_str!("ref/apis-apiextensions.k8s.io-v1.json");
const BATCH_V1: &str = include_str!("ref/apis-batch-v1.json");
const NETWORKING_V1: &str = include_str!("ref/apis-networking.k8s.io-v1.json");
const DISCOVERY_V1: &str = include_str!("ref/apis-discovery.k8s.io-v1.json");
const EVENTS_V1: &str = include_str!("ref/apis-events.k8s.io-v1.json");
const AUTOSCALING_V2: &str = include_str!("ref/apis-autoscaling-v2.json");
const POLICY_V1: &str = include_str!("ref/apis-policy-v1.json");
const RBAC_V1: &str = include_str!("ref/apis-rbac.authorization.k8s.io-v1.json");
const COORDINATION_V1: &str = include_str!("ref/apis-coordination.k8s.io-v1.json");
const APIREGISTRATION_V1: &str = include_str!("ref/apis-apiregistration.k8s.io-v1.json");
const STORAGE_V1: &str = include_str!("ref/apis-storage.k8s.io-v1.json");
const SCHEDULING_V1: &str = include_str!("ref/apis-scheduling.k8s.io-v1.json");

/// The legacy group-version documents, by path.
const GROUP_VERSIONS: &[(&str, &str)] = &[
    ("/apis/apps/v1", APPS_V1),
    ("/apis/example.com/v1", EXAMPLE_V1),
    ("/apis/apiextensions.k8s.io/v1", APIEXT_V1),
    ("/apis/batch/v1", BATCH_V1),
    ("/apis/networking.k8s.io/v1", NETWORKING_V1),
    ("/apis/discovery.k8s.io/v1", DISCOVERY_V1),
    ("/apis/events.k8s.io/v1", EVENTS_V1),
    ("/apis/autoscaling/v2", AUTOSCALING_V2),
    ("/apis/policy/v1", POLICY_V1),
    ("/apis/rbac.authorization.k8s.io/v1", RBAC_V1),
    ("/apis/coordination.k8s.io/v1", COORDINATION_V1),
    ("/apis/apiregistration.k8s.io/v1", APIREGISTRATION_V1),
    ("/apis/storage.k8s.io/v1", STORAGE_V1),
    ("/apis/scheduling.k8s.io/v1", SCHEDULING_V1),
];
const AGG_API: &str = include_str!("ref/aggregated-api.json");
const AGG_APIS: &str = include_str!("ref/aggregated-apis.json");

const AGG_CT: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

fn raw(body: &str) -> Response {
    json_response(StatusCode::OK, body.trim_end().as_bytes().to_vec())
}

/// How discovery is served, and how often it was asked for.
#[derive(Debug)]
pub(crate) struct Served {
    aggregated: bool,
    requests: AtomicU64,
    /// The `/version` document, as the real server sends it (indented, no final newline).
    version: String,
    /// The minor it reports, which decides what the server does as that release does.
    minor: u32,
}

impl Served {
    /// `version`: the `major` and `minor` `/version` reports instead of the captured
    /// server's (`--server-version`; `gitVersion` follows as `v<major>.<minor>.0`).
    pub fn new(aggregated: bool, version: Option<&(String, String)>) -> Served {
        Served {
            aggregated,
            requests: AtomicU64::new(0),
            version: version_document(version),
            minor: version
                .and_then(|(_, minor)| minor.trim_end_matches('+').parse().ok())
                .unwrap_or(MINOR),
        }
    }

    /// The Kubernetes minor `/version` reports (`--server-version`, else 32).
    pub fn minor(&self) -> u32 {
        self.minor
    }

    /// Requests for `/api`, `/apis` and the documents under them (not `/version`, health
    /// or OpenAPI).
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }
}

/// The minor of the captured `/version`: the protobuf table the simulator reads and writes
/// its built-in kinds with (`--server-version` changes what `/version` says, not the types).
pub(super) const MINOR: u32 = 32;

/// The simulator's protobuf table ([`MINOR`]'s).
pub(super) fn protobuf_table() -> Option<&'static Table> {
    Table::for_minor(MINOR).and_then(Result::ok)
}

/// The captured v1.32.13 `/version` (indented, no trailing newline, as the real server
/// sends it), with `major`, `minor` and `gitVersion` replaced when `version` is given; the
/// fields keep their order.
fn version_document(version: Option<&(String, String)>) -> String {
    let captured = VERSION.trim_end();
    let Some((major, minor)) = version else {
        return captured.to_owned();
    };
    let Ok(mut doc) = serde_json::from_str::<serde_json::Map<String, Value>>(captured) else {
        return captured.to_owned();
    };
    let patch = minor.trim_end_matches('+');
    doc.insert("major".into(), json!(major));
    doc.insert("minor".into(), json!(minor));
    doc.insert("gitVersion".into(), json!(format!("v{major}.{patch}.0")));
    serde_json::to_string_pretty(&doc).unwrap_or_else(|_| captured.to_owned())
}

fn wants_aggregated(headers: &HeaderMap) -> bool {
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    accept.split(',').any(|part| {
        part.contains("as=APIGroupDiscoveryList") && part.split(';').any(|p| p.trim() == "v=v2")
    })
}

fn aggregated_response(body: &str) -> Response {
    let mut resp = json_response(StatusCode::OK, body.trim_end().as_bytes().to_vec());
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(AGG_CT));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("public"));
    h.insert(header::VARY, HeaderValue::from_static("Accept"));
    h.insert(
        header::ETAG,
        HeaderValue::from_static("\"6b77736174636873696d\""),
    );
    resp
}

fn group(name: &str) -> Option<Value> {
    let apis: Value = serde_json::from_str(APIS).ok()?;
    let g = apis["groups"]
        .as_array()?
        .iter()
        .find(|g| g["name"] == name)?
        .clone();
    Some(json!({
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": g["name"],
        "versions": g["versions"],
        "preferredVersion": g["preferredVersion"],
    }))
}

/// Answers discovery paths; `None` for anything else.
pub fn handle(app: &App, path: &str, headers: &HeaderMap) -> Option<Response> {
    let path = path.trim_end_matches('/');
    let document = matches!(path, "/api" | "/apis" | "/api/v1")
        || (path.starts_with("/apis/") && path.matches('/').count() <= 3);
    if document {
        app.discovery.requests.fetch_add(1, Ordering::Relaxed);
    }
    let aggregated = app.discovery.aggregated && wants_aggregated(headers);
    // Groups whose CRDs were deleted are left out; their paths are not discovery's.
    let gone = app.cluster.read().unserved_groups();
    if gone.iter().any(|g| {
        path.strip_prefix("/apis/")
            .is_some_and(|p| p.split('/').next() == Some(g))
    }) {
        return None;
    }
    if !gone.is_empty() && path == "/apis" {
        let (body, list) = if aggregated {
            (AGG_APIS, "items")
        } else {
            (APIS, "groups")
        };
        let mut doc: Value = serde_json::from_str(body).ok()?;
        if let Some(groups) = doc[list].as_array_mut() {
            groups.retain(|g| {
                let name = g["name"].as_str().or(g["metadata"]["name"].as_str());
                !name.is_some_and(|n| gone.contains(&n))
            });
        }
        return Some(if aggregated {
            aggregated_response(&doc.to_string())
        } else {
            value_response(StatusCode::OK, &doc)
        });
    }
    Some(match path {
        "/version" => super::status::json_body_response(
            StatusCode::OK,
            axum::body::Body::from(app.discovery.version.clone()),
        ),
        "/api" if aggregated => aggregated_response(AGG_API),
        "/apis" if aggregated => aggregated_response(AGG_APIS),
        "/api" => value_response(
            StatusCode::OK,
            &json!({
                "kind": "APIVersions",
                "versions": ["v1"],
                "serverAddressByClientCIDRs": [
                    {"clientCIDR": "0.0.0.0/0", "serverAddress": format!("127.0.0.1:{}", app.port)}
                ]
            }),
        ),
        "/apis" => raw(APIS),
        "/api/v1" => raw(API_V1),
        p if GROUP_VERSIONS.iter().any(|(gv, _)| *gv == p) => {
            raw(GROUP_VERSIONS.iter().find(|(gv, _)| *gv == p)?.1)
        }
        p if p.starts_with("/apis/") && p.matches('/').count() == 2 => {
            value_response(StatusCode::OK, &group(p.trim_start_matches("/apis/"))?)
        }
        "/healthz" | "/livez" | "/readyz" => {
            let mut resp = Response::new(axum::body::Body::from("ok"));
            resp.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; charset=utf-8"),
            );
            resp
        }
        p if p == "/openapi/v2" || p.starts_with("/openapi/v3") => openapi::handle(p)?,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::RESOURCES;

    #[test]
    fn embedded_documents_list_exactly_our_resources() {
        let mut names = Vec::new();
        let docs = std::iter::once(API_V1).chain(GROUP_VERSIONS.iter().map(|(_, d)| *d));
        for doc in docs.clone() {
            let v: Value = serde_json::from_str(doc).unwrap();
            for r in v["resources"].as_array().unwrap() {
                let n = r["name"].as_str().unwrap();
                if !n.contains('/') {
                    names.push(n.to_string());
                }
            }
        }
        for doc in docs {
            let v: Value = serde_json::from_str(doc).unwrap();
            let (g, ver) = match v["groupVersion"].as_str().unwrap().split_once('/') {
                Some((g, ver)) => (g.to_string(), ver.to_string()),
                None => (String::new(), "v1".to_string()),
            };
            for r in v["resources"].as_array().unwrap() {
                let n = r["name"].as_str().unwrap();
                if n.contains('/') {
                    continue;
                }
                let id = crate::resources::find(&g, &ver, n).unwrap();
                assert_eq!(r["kind"], RESOURCES[id].kind);
                assert_eq!(r["namespaced"], RESOURCES[id].namespaced);
            }
        }
        names.sort();
        let mut ours: Vec<String> = RESOURCES.iter().map(|r| r.plural.to_string()).collect();
        ours.sort();
        assert_eq!(names, ours);
        for doc in [AGG_API, AGG_APIS] {
            let v: Value = serde_json::from_str(doc).unwrap();
            assert_eq!(v["kind"], "APIGroupDiscoveryList");
        }
    }

    #[test]
    fn aggregated_is_chosen_from_accept() {
        let mut h = HeaderMap::new();
        h.insert(
            header::ACCEPT,
            HeaderValue::from_static("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"),
        );
        assert!(wants_aggregated(&h));
        h.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
        assert!(!wants_aggregated(&h));
    }
}
