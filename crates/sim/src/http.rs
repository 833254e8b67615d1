//! The HTTP front: authentication, fault injection, routing of `/api/…` and `/apis/…` paths,
//! and the list/get/create/update/patch/delete handlers. Watches live in [`super::watch`].
//!
//! Resource paths: `/api/v1/<res>[/<name>[/<sub>]]`,
//! `/api/v1/namespaces/<ns>/<res>[/<name>[/<sub>]]` and the same under `/apis/<group>/<version>`.
//! A namespaced resource at the cluster path lists all namespaces.

use std::convert::Infallible;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Query, Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::response::Response;
use base64::Engine;
use bytes::Bytes;
use serde_json::{json, Map, Value};

use kwatch_core::cache::fields;

use super::request::{
    asks_protobuf, negotiate, not_supported, parse_rv, table_options, wait_for_rv, As, Filter,
    Params, Target,
};
use super::resources::{self, ResourceDef, RESOURCES};
use super::status::{
    api_response, json_body_response, json_response, plain_404, value_response, Cause, Status,
};
use super::storage::{make_key, now_rfc3339, Deleted, ListQuery, Obj, Propagation};
use super::{auth, control, discovery, partial, table, watch, wire, App};

/// Entry point of every request: routed, then compressed as kube-apiserver compresses
/// (every API answer but a watch stream; never the control API's).
pub async fn dispatch(state: State<Arc<App>>, mut req: Request) -> Response {
    // `opaque-rv`: composite resourceVersions in, the storage's revisions out, JSON only.
    let opaque =
        state.faults.bent(super::bend::Bend::OpaqueRv) && !req.uri().path().starts_with("/_sim/");
    if opaque {
        if let Some(uri) = super::bend::request_uri(req.uri()) {
            *req.uri_mut() = uri;
        }
        let accept = req
            .headers()
            .get(header::ACCEPT)
            .and_then(|a| a.to_str().ok());
        if let Some(a) = accept.and_then(super::bend::json_accept) {
            req.headers_mut().insert(header::ACCEPT, a);
        }
    }
    let accepts = super::gzip::accepts(req.headers()) && !req.uri().path().starts_with("/_sim/");
    let query = Query::<Params>::try_from_uri(req.uri()).ok();
    let watch = query.as_ref().is_some_and(|q| is_watch(q));
    let members = accepts
        && watch
        && state.discovery.minor() >= super::gzip::MEMBERS_FROM_MINOR
        && query.is_some_and(|q| super::gzip::streaming_list(&q));
    let mut resp = route(state, req).await;
    if opaque {
        resp = super::bend::answer(resp, watch).await;
    }
    match (accepts, watch) {
        (true, false) => super::gzip::compress(resp).await,
        _ if members && resp.status() == StatusCode::OK => super::gzip::per_member(resp),
        _ => resp,
    }
}

/// `?watch=true` (or `1`): a watch rather than a list or get.
fn is_watch(q: &Params) -> bool {
    q.get("watch").is_some_and(|w| w == "1" || w == "true")
}

async fn route(State(app): State<Arc<App>>, req: Request) -> Response {
    let path = req.uri().path().to_string();
    let who = if app.auth {
        let peer = req.extensions().get::<Arc<auth::PeerCert>>();
        match auth::authenticate(&app.token, req.headers(), peer.map(|p| p.as_ref())) {
            Ok(who) => who,
            Err(resp) => return *resp,
        }
    } else {
        auth::Identity::admin()
    };
    if let Some(rest) = path.strip_prefix("/_sim/") {
        if !who.is_master() {
            let reason = format!(
                "User {:?} cannot {} path {path:?}",
                who.user,
                req.method().as_str().to_lowercase()
            );
            return auth::forbidden("", "", None, &reason);
        }
        return control::handle(&app, req.method().clone(), rest, req).await;
    }
    if let Some(st) = app
        .faults
        .take_failure(None, None, app.cluster.read().rev())
    {
        return st.response();
    }
    let params: Params = Query::<Params>::try_from_uri(req.uri())
        .map(|q| q.0)
        .unwrap_or_default();
    if let Some(resp) = discovery::handle(&app, &path, req.headers()) {
        return resp;
    }
    if req.method() == Method::POST && path == auth::ACCESS_REVIEWS {
        let content_type = content_type(req.headers()).to_owned();
        let body = axum::body::to_bytes(req.into_body(), 1 << 20).await;
        return match wire::json_body(&content_type, body.unwrap_or_default()) {
            Ok(body) => {
                auth::access_review(&who, &body, app.faults.bent(super::bend::Bend::ForbidWatch))
            }
            Err(s) => s.response(),
        };
    }
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version, rest) = match segs.as_slice() {
        ["api", "v1", rest @ ..] => ("", "v1", rest),
        ["apis", g, v, rest @ ..] => (*g, *v, rest),
        _ => return plain_404(),
    };
    // A custom resource whose CRD was deleted is not served: `404 page not found`.
    if !resources::known_group_version(group, version)
        || !app.cluster.read().group_version_served(group, version)
    {
        return plain_404();
    }
    let Some(target) = resolve(group, version, rest) else {
        return Status::unknown_resource().response();
    };
    let watching = is_watch(&params);
    let asked = auth::Request {
        verb: auth::verb(req.method(), target.name.is_some(), watching),
        group,
        resource: RESOURCES[target.res].plural,
        subresource: target.subresource.as_deref(),
        namespace: target.namespace.as_deref(),
        name: target.name.as_deref(),
    };
    if let Err(resp) = auth::authorize(&who, &asked) {
        return *resp;
    }
    // `forbid-watch`: list allowed, watch not, as RBAC with `list` but no `watch`.
    if watching && app.faults.bent(super::bend::Bend::ForbidWatch) {
        return *auth::denial(&who, &asked);
    }
    let accept = match negotiate_header(req.headers()).and_then(|a| table_options(a, &params)) {
        Ok(a) => a,
        Err(st) => return st.response(),
    };
    let method = req.method().clone();
    let headers = req.headers().clone();
    let body = match axum::body::to_bytes(req.into_body(), 64 << 20).await {
        Ok(b) => b,
        Err(_) => return Status::bad_request("request body too large or unreadable").response(),
    };
    let protobuf = answers_protobuf(target.res, &accept, &headers);
    let resp = handle_resource(&app, method, &target, &params, &headers, accept, body).await;
    if protobuf {
        wire::answer(resp, watching, app.clone()).await
    } else if wants_pretty(&params, &headers) {
        indent(resp).await
    } else {
        resp
    }
}

/// Whether kube-apiserver answers in protobuf: asked for it first, for a built-in kind, or
/// for any resource's PartialObjectMetadata(List) (metav1's conversion); never a Table.
fn answers_protobuf(res: usize, accept: &As, headers: &HeaderMap) -> bool {
    let metadata = matches!(accept, As::PartialMetadata | As::PartialMetadataList);
    (!RESOURCES[res].custom || metadata)
        && !matches!(accept, As::Table(_))
        && asks_protobuf(accept_header(headers))
}

/// kube-apiserver indents JSON for `?pretty=true` and for curl, Wget and browser user agents
/// (never watch streams). The simulator leaves lists over [`INDENT_LIMIT`] compact.
fn wants_pretty(q: &Params, headers: &HeaderMap) -> bool {
    if is_watch(q) {
        return false;
    }
    if let Some(p) = q.get("pretty") {
        return p == "true" || p == "1";
    }
    let ua = headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    ["curl", "Wget", "Mozilla/5.0"]
        .iter()
        .any(|p| ua.starts_with(p))
}

/// Marks a response too large to be re-encoded indented (it stays compact and streamed).
#[derive(Debug, Clone, Copy)]
struct TooLargeToIndent;

/// Lists above this size are never indented: that would buffer them whole.
const INDENT_LIMIT: usize = 16 << 20;

async fn indent(resp: Response) -> Response {
    if resp.extensions().get::<TooLargeToIndent>().is_some() {
        return resp;
    }
    let (parts, body) = resp.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return Status::internal("could not buffer the response").response();
    };
    let mut out = match serde_json::from_slice::<Value>(&bytes) {
        Ok(v) => super::status::escape_html(serde_json::to_vec_pretty(&v).unwrap_or_default()),
        Err(_) => bytes.to_vec(),
    };
    out.push(b'\n');
    let mut resp = Response::from_parts(parts, Body::from(out));
    resp.headers_mut().remove(header::CONTENT_LENGTH);
    resp
}

fn resolve(group: &str, version: &str, rest: &[&str]) -> Option<Target> {
    let find = |p: &str| resources::find(group, version, p);
    let t = match rest {
        ["namespaces", ns, res, tail @ ..] if !tail.is_empty() || find(res).is_some() => {
            let res = find(res)?;
            if !RESOURCES[res].namespaced || tail.len() > 2 {
                return None;
            }
            Target {
                res,
                namespace: Some(ns.to_string()),
                name: tail.first().map(|s| s.to_string()),
                subresource: tail.get(1).map(|s| s.to_string()),
            }
        }
        [res, tail @ ..] if tail.len() <= 2 => {
            let res = find(res)?;
            if RESOURCES[res].namespaced && !tail.is_empty() {
                return None;
            }
            Target {
                res,
                namespace: None,
                name: tail.first().map(|s| s.to_string()),
                subresource: tail.get(1).map(|s| s.to_string()),
            }
        }
        _ => return None,
    };
    match t.subresource.as_deref() {
        None | Some("status") => Some(t),
        Some("log") if t.res == resources::PODS => Some(t),
        Some(_) => None,
    }
}

/// The representation the request's `Accept` asks for ([`negotiate`]).
fn negotiate_header(headers: &HeaderMap) -> Result<As, Status> {
    negotiate(accept_header(headers))
}

fn accept_header(headers: &HeaderMap) -> &str {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

async fn handle_resource(
    app: &Arc<App>,
    method: Method,
    t: &Target,
    q: &Params,
    headers: &HeaderMap,
    accept: As,
    body: Bytes,
) -> Response {
    let def = &RESOURCES[t.res];
    let watching = is_watch(q);
    let verb = match (&method, &t.name) {
        (&Method::GET, None) if watching => "watch",
        (&Method::GET, None) => "list",
        (&Method::GET, Some(_)) => "get",
        (&Method::POST, _) => "create",
        (&Method::PUT, _) => "update",
        (&Method::PATCH, _) => "patch",
        (&Method::DELETE, _) => "delete",
        _ => "other",
    };
    if let Some(st) =
        app.faults
            .take_failure(Some(verb), Some(def.plural), app.cluster.read().rev())
    {
        return st.response();
    }
    let content_type = content_type(headers);
    // A DELETE's DeleteOptions are optional: only a body that is there is decoded.
    let decodes = match method {
        Method::POST | Method::PUT => true,
        Method::DELETE => !body.is_empty(),
        _ => false,
    };
    let body = if decodes {
        match wire::json_body(content_type, body) {
            Ok(body) => body,
            Err(s) => return s.response(),
        }
    } else {
        body
    };
    match (&method, &t.name) {
        (&Method::GET, None) => {
            if is_watch(q) {
                watch::watch(app.clone(), t, q, accept).await
            } else {
                list(app, t, q, accept).await
            }
        }
        (&Method::GET, Some(name)) if watching && t.subresource.is_none() => {
            // A watch on an object path is a watch of its collection, selected by name.
            let mut q = q.clone();
            let by_name = format!("metadata.name={name}");
            let fs = match q.get("fieldSelector").filter(|f| !f.is_empty()) {
                Some(f) => format!("{f},{by_name}"),
                None => by_name,
            };
            q.insert("fieldSelector".into(), fs);
            let collection = Target {
                name: None,
                ..t.clone()
            };
            watch::watch(app.clone(), &collection, &q, accept).await
        }
        (&Method::GET, Some(name)) if t.subresource.as_deref() == Some("log") => {
            pod_log(app, t, name, q)
        }
        (_, Some(_)) if t.subresource.as_deref() == Some("log") => {
            Status::method_not_allowed().response()
        }
        (&Method::GET, Some(name)) => get(app, t, name, accept),
        (&Method::POST, None) => create(app, t, &body, &writer(q, headers, "Update")),
        (&Method::PUT, Some(name)) => update(app, t, name, &body, &writer(q, headers, "Update")),
        (&Method::PATCH, Some(name)) => {
            let op = if content_type.starts_with("application/apply-patch") {
                "Apply"
            } else {
                "Update"
            };
            patch(app, t, name, headers, &body, &writer(q, headers, op))
        }
        (&Method::DELETE, Some(name)) => delete(app, t, name, def, &body, q),
        _ => Status::method_not_allowed().response(),
    }
}

/// A request's `Content-Type`; "" when absent.
fn content_type(headers: &HeaderMap) -> &str {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

/// A list's `resourceVersion`, `resourceVersionMatch` and `continue`; "" when absent.
fn list_params(q: &Params) -> (&str, &str, &str) {
    let get = |name| q.get(name).map_or("", String::as_str);
    (
        get("resourceVersion"),
        get("resourceVersionMatch"),
        get("continue"),
    )
}

/// Validates list options as `ValidateListOptions` does for a list (not a watch).
fn validate_list(q: &Params) -> Result<(), Status> {
    let (rv, rvm, cont) = list_params(q);
    let mut causes = Vec::new();
    let forbid = |field: &str, msg: &str| Cause {
        reason: "FieldValueForbidden",
        message: format!("Forbidden: {msg}"),
        field: field.into(),
    };
    if !rvm.is_empty() {
        if rv.is_empty() {
            causes.push(forbid(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden unless resourceVersion is provided",
            ));
        }
        if !cont.is_empty() {
            causes.push(forbid(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden when continue is provided",
            ));
        }
        match rvm {
            "Exact" if rv == "0" => causes.push(forbid(
                "resourceVersionMatch",
                "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
            )),
            "Exact" | "NotOlderThan" => {}
            other => causes.push(not_supported(other, &["Exact", "NotOlderThan", ""])),
        }
    }
    if q.contains_key("sendInitialEvents") {
        causes.push(forbid(
            "sendInitialEvents",
            "sendInitialEvents is forbidden for list",
        ));
    }
    if causes.is_empty() {
        Ok(())
    } else {
        Err(Status::invalid_list_options(&causes))
    }
}

fn encode_continue(rv: i64, start: &str) -> String {
    let v = json!({"v": "meta.k8s.io/v1", "rv": rv, "start": start});
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(serde_json::to_vec(&v).unwrap_or_default())
}

fn decode_continue(token: &str) -> Result<(i64, String), Status> {
    let bad = |e: &str| Status::bad_request(format!("continue key is not valid: {e}"));
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token.trim_end_matches('='))
        .map_err(|e| bad(&e.to_string()))?;
    let v: Value = serde_json::from_slice(&raw).map_err(|e| bad(&e.to_string()))?;
    if v["v"] != "meta.k8s.io/v1" {
        return Err(bad(
            "incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
        ));
    }
    let rv = v["rv"].as_i64().ok_or_else(|| bad("missing rv"))?;
    let start = v["start"].as_str().ok_or_else(|| bad("missing start"))?;
    Ok((rv, start.trim_start_matches('/').to_string()))
}

/// The key a continue token's `start` (relative to the list's namespace) stands for.
fn start_key(t: &Target, rel: &str) -> String {
    match &t.namespace {
        Some(ns) => format!("{ns}/{rel}"),
        None => rel.to_string(),
    }
}

/// `start` of a continue token for a full key (relative to the list's namespace).
fn rel_start(t: &Target, key: &str) -> String {
    match &t.namespace {
        Some(ns) => key
            .strip_prefix(&format!("{ns}/"))
            .unwrap_or(key)
            .to_string(),
        None => key.to_string(),
    }
}

/// Where a list reads: at revision `at`, from key `start` (a continue token's), at most
/// `limit` items (0: all); `slash`: the first page's token gets the leading "/" of a
/// watch-cache (consistent) read.
struct ListPoint {
    at: u64,
    start: Option<String>,
    slash: bool,
    limit: usize,
}

async fn list(app: &Arc<App>, t: &Target, q: &Params, accept: As) -> Response {
    if let Err(s) = validate_list(q) {
        return s.response();
    }
    let filter = match Filter::from_params(t, q) {
        Ok(f) => f,
        Err(s) => return s.response(),
    };
    let point = match list_point(app, t, q).await {
        Ok(p) => p,
        Err(s) => return s.response(),
    };
    let page = {
        let s = app.cluster.read();
        if point.at < s.compacted() {
            // Compacted between the check above and now.
            drop(s);
            return Status::expired("The resourceVersion for the provided list is too old.")
                .response();
        }
        let pred = |o: &Obj| filter.matches(o);
        let q = ListQuery {
            res: t.res,
            namespace: t.namespace.as_deref(),
            at: point.at,
            start: point.start.as_deref(),
            limit: point.limit,
            count_remaining: filter.is_empty(),
        };
        s.list(q, &pred)
    };
    let token = page.next_start.as_ref().map(|k| {
        let rel = rel_start(t, k);
        let rel = if point.slash { format!("/{rel}") } else { rel };
        encode_continue(point.at as i64, &rel)
    });
    let at = point.at;
    match accept {
        As::Table(opts) => value_response(
            StatusCode::OK,
            &table::table(
                &RESOURCES[t.res],
                &page.items,
                Some(at),
                token.as_deref(),
                page.remaining,
                opts,
            ),
        ),
        As::PartialMetadata => partial::list_not_acceptable(&RESOURCES[t.res]).response(),
        As::PartialMetadataList => {
            let (kind, api_version) = partial::LIST_TYPE;
            let head = typed_list_head(kind, api_version, at, token.as_deref(), page.remaining);
            stream_list(head, "]}\n".into(), page.items, partial::write_object)
        }
        As::Object => list_response(&RESOURCES[t.res], page.items, at, token, page.remaining),
    }
}

/// The list's [`ListPoint`] from `resourceVersion`, `resourceVersionMatch`, `continue` and
/// `limit`, with kube-apiserver's semantics (a future RV is waited for, then 504).
async fn list_point(app: &Arc<App>, t: &Target, q: &Params) -> Result<ListPoint, Status> {
    let (rv, rvm, cont) = list_params(q);
    let limit = q
        .get("limit")
        .and_then(|l| l.parse::<i64>().ok())
        .unwrap_or(0)
        .max(0) as usize;
    let (rev, compacted) = {
        let s = app.cluster.read();
        (s.rev(), s.compacted())
    };
    let at = |at, start, slash| ListPoint {
        at,
        start,
        slash,
        limit,
    };
    if !cont.is_empty() {
        if !rv.is_empty() {
            return Err(Status::bad_request(
                "specifying resource version is not allowed when using continue",
            ));
        }
        let (tok_rv, rel) = decode_continue(cont)?;
        let key = start_key(t, &rel);
        return if tok_rv == -1 {
            Ok(at(rev, Some(key), false))
        } else if (tok_rv as u64) < compacted || tok_rv <= 0 || app.faults.take_expire_continue() {
            Err(Status::expired_continue(encode_continue(-1, &rel)))
        } else {
            Ok(at((tok_rv as u64).min(rev), Some(key), false))
        };
    }
    if let Some(stale) = app.faults.take_stale_list() {
        return Ok(at(stale.clamp(compacted, rev), None, rv.is_empty()));
    }
    if rv.is_empty() {
        // A consistent read: the watch cache is brought to the current revision (a
        // progress notification asked of etcd, ConsistentListFromCache).
        app.cluster.write(|s| s.cache_caught_up(Some(t.res)));
        return Ok(at(rev, None, true));
    }
    if rv == "0" {
        // Served from the watch cache: the limit is ignored.
        return Ok(ListPoint {
            limit: 0,
            ..at(rev, None, false)
        });
    }
    let n = parse_rv(rv)?;
    if rvm == "Exact" {
        if n > rev {
            return Err(Status::future_revision());
        }
        if n < compacted {
            return Err(Status::expired(
                "The resourceVersion for the provided list is too old.",
            ));
        }
        return Ok(at(n, None, false));
    }
    let cur = if n > rev {
        wait_for_rv(app, n, app.too_large_wait).await
    } else {
        rev
    };
    if n > cur {
        return Err(Status::too_large_rv(n, cur));
    }
    Ok(at(cur, None, false))
}

/// The resource's own list, its items copied straight from their stored JSON.
fn list_response(
    def: &ResourceDef,
    items: Vec<Arc<Obj>>,
    rv: u64,
    token: Option<String>,
    remaining: Option<u64>,
) -> Response {
    let (head, tail) = if def.custom {
        let mut meta = format!("{{\"continue\":\"{}\"", token.as_deref().unwrap_or(""));
        if let Some(r) = remaining {
            meta.push_str(&format!(",\"remainingItemCount\":{r}"));
        }
        meta.push_str(&format!(",\"resourceVersion\":\"{rv}\"}}"));
        (
            format!("{{\"apiVersion\":\"{}\",\"items\":[", def.api_version()),
            format!("],\"kind\":\"{}\",\"metadata\":{meta}}}\n", def.list_kind()),
        )
    } else {
        let kind = def.list_kind();
        let head = typed_list_head(&kind, &def.api_version(), rv, token.as_deref(), remaining);
        (head, "]}\n".to_string())
    };
    stream_list(head, tail, items, Obj::write_item)
}

/// A typed list (a built-in kind's, a PartialObjectMetadataList) up to its items' `[`:
/// Go's field order, and ListMeta's `continue` and `remainingItemCount` only when set.
/// Its end is `]}` and a newline.
fn typed_list_head(
    kind: &str,
    api_version: &str,
    rv: u64,
    token: Option<&str>,
    remaining: Option<u64>,
) -> String {
    let mut head = format!(
        "{{\"kind\":\"{kind}\",\"apiVersion\":\"{api_version}\",\"metadata\":{{\"resourceVersion\":\"{rv}\""
    );
    if let Some(t) = token {
        head.push_str(&format!(",\"continue\":\"{t}\""));
    }
    if let Some(r) = remaining {
        head.push_str(&format!(",\"remainingItemCount\":{r}"));
    }
    head.push_str("},\"items\":[");
    head
}

/// A list body streamed in chunks of about 256 KiB: `head`, the items as `write_item`
/// writes them (comma-separated), `tail`.
fn stream_list(
    head: String,
    tail: String,
    items: Vec<Arc<Obj>>,
    write_item: fn(&Obj, &mut Vec<u8>),
) -> Response {
    const CHUNK: usize = 256 * 1024;
    let too_large = items.iter().map(|o| o.json.len()).sum::<usize>() > INDENT_LIMIT;
    let mut pending = Some(head.into_bytes());
    let mut iter = items.into_iter();
    let mut first = true;
    let mut tail = Some(tail.into_bytes());
    let chunks = std::iter::from_fn(move || {
        let mut buf = pending
            .take()
            .or_else(|| tail.as_ref().map(|_| Vec::with_capacity(CHUNK)))?;
        for o in iter.by_ref() {
            if !first {
                buf.push(b',');
            }
            first = false;
            write_item(&o, &mut buf);
            if buf.len() >= CHUNK {
                return Some(Ok::<Bytes, Infallible>(Bytes::from(buf)));
            }
        }
        buf.extend_from_slice(&tail.take()?);
        Some(Ok(Bytes::from(buf)))
    });
    let body = Body::from_stream(futures::stream::iter(chunks));
    let mut resp = json_body_response(StatusCode::OK, body);
    if too_large {
        resp.extensions_mut().insert(TooLargeToIndent);
    }
    resp
}

fn object_key(t: &Target, name: &str) -> String {
    make_key(t.namespace.as_deref().unwrap_or(""), name)
}

fn object_response(code: StatusCode, o: &Obj) -> Response {
    json_response(code, o.json.to_vec())
}

fn get(app: &App, t: &Target, name: &str, accept: As) -> Response {
    let def = &RESOURCES[t.res];
    let Some(o) = app.cluster.read().get(t.res, &object_key(t, name)) else {
        return Status::not_found(def.plural, def.group, name).response();
    };
    match accept {
        As::Table(opts) => value_response(
            StatusCode::OK,
            &table::table(def, &[o], None, None, None, opts),
        ),
        As::PartialMetadata => json_response(StatusCode::OK, partial::object_json(&o)),
        As::PartialMetadataList => partial::object_not_acceptable(def).response(),
        As::Object => object_response(StatusCode::OK, &o),
    }
}

/// `GET …/pods/<name>/log`: a few plausible, deterministic lines (the simulator runs no
/// containers). `container` must name one of the pod's containers; `follow` is ignored.
fn pod_log(app: &App, t: &Target, name: &str, q: &Params) -> Response {
    let def = &RESOURCES[t.res];
    let Some(o) = app.cluster.read().get(t.res, &object_key(t, name)) else {
        return Status::not_found(def.plural, def.group, name).response();
    };
    let v = o.value();
    let containers: Vec<String> = v["spec"]["containers"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|c| c["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let container = match q.get("container") {
        Some(c) if containers.contains(c) => c.clone(),
        Some(c) => {
            return Status::bad_request(format!("container {c} is not valid for pod {name}"))
                .response()
        }
        None if containers.len() == 1 => containers[0].clone(),
        None => {
            return Status::bad_request(format!(
                "a container name must be specified for pod {name}, choose one of: [{}]",
                containers.join(" ")
            ))
            .response()
        }
    };
    let started = v["status"]["startTime"].as_str().unwrap_or("").to_string();
    let mut text = String::new();
    for (i, msg) in [
        "starting",
        "loaded configuration from /etc/config",
        "listening",
        "ready to serve requests",
    ]
    .iter()
    .enumerate()
    {
        text.push_str(&format!("{started} INFO {container}[{i}]: {msg}\n"));
    }
    api_response(StatusCode::OK, "text/plain", Body::from(text))
}

/// A create's or update's object, decoded with the defaults kube-apiserver's decoding
/// applies to it (a Secret's `type`: `Opaque`).
fn parse_body(def: &ResourceDef, body: &[u8]) -> Result<Value, Status> {
    match serde_json::from_slice::<Value>(body) {
        Ok(mut v) if v.is_object() => {
            if let Some(k) = v.get("kind").and_then(Value::as_str) {
                if k != def.kind {
                    return Err(Status::bad_request(format!(
                        "the object provided is unrecognized (must be of type {}): kind {k} does not match",
                        def.kind
                    )));
                }
            }
            if def.kind == "Secret" && v["type"].as_str().unwrap_or("").is_empty() {
                v["type"] = json!("Opaque");
            }
            Ok(v)
        }
        Ok(_) => Err(Status::bad_request(format!(
            "the object provided is unrecognized (must be of type {}): not an object",
            def.kind
        ))),
        Err(e) => {
            let text = String::from_utf8_lossy(body);
            let head: String = text.chars().take(30).collect();
            Err(Status::bad_request(format!(
                "the object provided is unrecognized (must be of type {}): couldn't get version/kind; \
                 json parse error: {e} ({head} ...)",
                def.kind
            )))
        }
    }
}

fn create(app: &App, t: &Target, body: &[u8], w: &Writer) -> Response {
    let def = &RESOURCES[t.res];
    let mut v = match parse_body(def, body) {
        Ok(v) => v,
        Err(s) => return s.response(),
    };
    if let Some(ns) = &t.namespace {
        let body_ns = v["metadata"]["namespace"].as_str().unwrap_or("");
        if !body_ns.is_empty() && body_ns != ns {
            return Status::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            )
            .response();
        }
        if !v.get("metadata").is_some_and(Value::is_object) {
            v["metadata"] = json!({});
        }
        v["metadata"]["namespace"] = json!(ns);
    } else if def.namespaced {
        return Status::method_not_allowed().response();
    }
    if let Err(s) = managed_fields(t, &mut v, None, w, None) {
        return s.response();
    }
    match app.cluster.write(|s| s.create(t.res, v, true)) {
        Ok(o) => object_response(StatusCode::CREATED, &o),
        Err(s) => s.response(),
    }
}

fn update(app: &App, t: &Target, name: &str, body: &[u8], w: &Writer) -> Response {
    let def = &RESOURCES[t.res];
    let v = match parse_body(def, body) {
        Ok(v) => v,
        Err(s) => return s.response(),
    };
    if let Some(n) = v["metadata"]["name"].as_str() {
        if n != name {
            return Status::bad_request(format!(
                "the name of the object ({n}) does not match the name on the URL ({name})"
            ))
            .response();
        }
    }
    let key = object_key(t, name);
    let result = app.cluster.write(|s| {
        let Some(old) = s.get(t.res, &key) else {
            return Err(Status::not_found(def.plural, def.group, name));
        };
        let old = old.value();
        let mut v = subresource_rules(t, &old, v);
        managed_fields(t, &mut v, Some(&old), w, None)?;
        s.update(t.res, &key, v)
    });
    match result {
        Ok(o) => object_response(StatusCode::OK, &o),
        Err(s) => s.response(),
    }
}

/// Who writes, for `metadata.managedFields`.
#[derive(Debug, Clone)]
struct Writer {
    manager: String,
    operation: &'static str,
    /// `force=true`: a server-side apply takes the fields it conflicts on.
    force: bool,
}

/// `fieldManager`, else the User-Agent up to its first `/` (as kube-apiserver does).
fn writer(q: &Params, headers: &HeaderMap, operation: &'static str) -> Writer {
    let ua = headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let manager = match q.get("fieldManager").filter(|m| !m.is_empty()) {
        Some(m) => m.clone(),
        None => ua
            .split('/')
            .next()
            .filter(|m| !m.is_empty())
            .unwrap_or("unknown")
            .to_string(),
    };
    let force = q.get("force").is_some_and(|f| f == "true");
    Writer {
        manager,
        operation,
        force,
    }
}

/// A manager as a conflict names it (apiserver's `printManager`): an `Update` manager
/// with the API version it wrote through.
fn print_manager(e: &Value) -> String {
    let name = serde_json::to_string(e["manager"].as_str().unwrap_or("")).unwrap_or_default();
    match (e["operation"].as_str(), e["apiVersion"].as_str()) {
        (Some("Update"), Some(v)) => format!("{name} using {v}"),
        _ => name,
    }
}

/// Records the write in `metadata.managedFields` as structured-merge-diff does
/// (apiserver's `fieldmanager`): an `Update` gives the writer the fields it set or changed
/// and takes them from every other entry; an `Apply` of configuration `applied` makes the
/// applier own exactly the fields it applied, and is refused with a 409 when it would
/// change a field another manager owns, unless forced (which moves the field). Fields
/// the write removed leave every entry; an entry left with no field is dropped. An entry
/// whose fields and values did not change is kept as it was (time included), so a write
/// that changes nothing stays a no-op.
fn managed_fields(
    t: &Target,
    v: &mut Value,
    old: Option<&Value>,
    w: &Writer,
    applied: Option<&Value>,
) -> Result<(), Status> {
    let status = t.subresource.as_deref() == Some("status");
    let sub = status.then_some("status");
    let untyped = t.res == resources::WIDGETS;
    let null = Value::Null;
    let old_v = old.unwrap_or(&null);
    let before = fields::of_object(old_v, status, untyped);
    let after = fields::of_object(v, status, untyped);
    let changed: fields::Set = after
        .iter()
        .filter(|p| !before.contains(*p) || differs(&after, p, old_v, v))
        .cloned()
        .collect();
    let removed: fields::Set = before.difference(&after).cloned().collect();
    // managedFields the request itself sets (kubectl's upgrade of client-side apply's
    // entries is such a patch) replace the live ones, unless empty; an apply's are
    // ignored (apiserver's fieldmanager, decodeLiveOrNew).
    let asked = v["metadata"]["managedFields"]
        .as_array()
        .filter(|l| applied.is_none() && !l.is_empty())
        .cloned();
    let mut entries: Vec<(Value, fields::Set)> = asked
        .as_ref()
        .or(old.and_then(|o| o["metadata"]["managedFields"].as_array()))
        .map(|l| {
            l.iter()
                .map(|e| (e.clone(), fields::decode(&e["fieldsV1"])))
                .collect()
        })
        .unwrap_or_default();
    let is_writer = |e: &Value| {
        e["manager"] == w.manager.as_str()
            && e["operation"] == w.operation
            && e.get("subresource").and_then(Value::as_str) == sub
    };
    let applied_set = applied.map(|cfg| fields::of_object(cfg, status, untyped));
    if let (Some(cfg), Some(set)) = (applied, &applied_set) {
        apply_conflicts(t, w, &entries, cfg, set, old_v, is_writer)?;
    }
    let mut found = false;
    for (e, set) in &mut entries {
        let was = set.clone();
        if is_writer(e) {
            found = true;
            match &applied_set {
                Some(a) => *set = a.clone(),
                None => set.extend(changed.iter().cloned()),
            }
        } else {
            set.retain(|p| !changed.contains(p));
        }
        set.retain(|p| !removed.contains(p));
        let touched = is_writer(e) && set.iter().any(|p| changed.contains(p));
        if *set != was || touched {
            *e = entry(t, w, e, set);
        }
    }
    if !found {
        let set = applied_set.unwrap_or(changed);
        if !set.is_empty() {
            let e = entry(t, w, &Value::Null, &set);
            entries.push((e, set));
        }
    }
    let list: Vec<Value> = entries
        .into_iter()
        .filter(|(_, set)| !set.is_empty())
        .map(|(e, _)| e)
        .collect();
    if !v.get("metadata").is_some_and(Value::is_object) {
        v["metadata"] = json!({});
    }
    v["metadata"]["managedFields"] = Value::Array(list);
    Ok(())
}

/// A leaf of `set` at `p` whose value differs between `a` and `b`.
fn differs(set: &fields::Set, p: &fields::Path, a: &Value, b: &Value) -> bool {
    fields::is_leaf(set, p) && fields::value_at(a, p) != fields::value_at(b, p)
}

/// A server-side apply of `cfg` (its fields `set`) over `old_v`: 409 with a cause per
/// field it changes that another manager of `entries` owns, unless forced.
fn apply_conflicts(
    t: &Target,
    w: &Writer,
    entries: &[(Value, fields::Set)],
    cfg: &Value,
    set: &fields::Set,
    old_v: &Value,
    is_writer: impl Fn(&Value) -> bool,
) -> Result<(), Status> {
    let status = t.subresource.as_deref() == Some("status");
    let untyped = t.res == resources::WIDGETS;
    let mut causes = Vec::new();
    for p in set.iter().filter(|p| differs(set, p, cfg, old_v)) {
        for (e, owned) in entries.iter().filter(|(e, _)| !is_writer(e)) {
            if owned.contains(p) {
                causes.push(Cause {
                    reason: "FieldManagerConflict",
                    message: format!("conflict with {}", print_manager(e)),
                    field: fields::smd_string(p),
                });
            }
        }
    }
    // A server-side apply after `kubectl apply` takes over what client-side apply
    // applied: conflicts on fields of the last-applied-configuration annotation are
    // forgiven (apiserver's fieldmanager, lastAppliedManager).
    let last_applied = old_v["metadata"]["annotations"]
        ["kubectl.kubernetes.io/last-applied-configuration"]
        .as_str()
        .and_then(|a| serde_json::from_str::<Value>(a).ok())
        .map(|a| fields::of_object(&a, status, untyped));
    let forgiven = last_applied.is_some_and(|l| {
        causes
            .iter()
            .all(|c| l.iter().any(|p| fields::smd_string(p) == c.field))
    });
    if !causes.is_empty() && !w.force && !forgiven {
        return Err(Status::apply_conflict(&causes));
    }
    Ok(())
}

/// One managedFields entry, written now: `e`'s manager, operation and subresource (or
/// the writer's, for a new entry) owning `set`.
fn entry(t: &Target, w: &Writer, e: &Value, set: &fields::Set) -> Value {
    let mut m = Map::new();
    let manager = e["manager"].as_str().unwrap_or(&w.manager);
    m.insert("manager".into(), json!(manager));
    m.insert(
        "operation".into(),
        json!(e["operation"].as_str().unwrap_or(w.operation)),
    );
    m.insert(
        "apiVersion".into(),
        json!(e["apiVersion"]
            .as_str()
            .map_or_else(|| RESOURCES[t.res].api_version(), str::to_owned)),
    );
    m.insert("time".into(), json!(now_rfc3339()));
    m.insert("fieldsType".into(), json!("FieldsV1"));
    m.insert("fieldsV1".into(), fields::encode(set));
    let sub = match e.get("subresource") {
        Some(s) => s.as_str().map(str::to_owned),
        None if e.is_null() => {
            (t.subresource.as_deref() == Some("status")).then(|| "status".to_owned())
        }
        None => None,
    };
    if let Some(s) = sub {
        m.insert("subresource".into(), json!(s));
    }
    Value::Object(m)
}

/// Resources whose `status` is written only through the `/status` subresource.
fn has_status_subresource(res: usize) -> bool {
    !matches!(
        res,
        resources::CONFIGMAPS
            | resources::SECRETS
            | resources::EVENTS
            | resources::ENDPOINTSLICES
            | resources::EVENTS_K8S_IO
    )
}

/// What an update may change: through the main resource everything but `status`, through
/// `/status` only `status` (a resourceVersion precondition is honoured either way).
fn subresource_rules(t: &Target, old: &Value, mut new: Value) -> Value {
    if !has_status_subresource(t.res) {
        return new;
    }
    if t.subresource.as_deref() == Some("status") {
        let mut out = old.clone();
        match new.get_mut("status").map(Value::take) {
            Some(st) => out["status"] = st,
            None => {
                if let Some(m) = out.as_object_mut() {
                    m.shift_remove("status");
                }
            }
        }
        if let Some(rv) = new["metadata"]["resourceVersion"]
            .as_str()
            .filter(|r| !r.is_empty())
        {
            out["metadata"]["resourceVersion"] = json!(rv);
        }
        out
    } else {
        match old.get("status") {
            Some(st) => new["status"] = st.clone(),
            None => {
                if let Some(m) = new.as_object_mut() {
                    m.shift_remove("status");
                }
            }
        }
        new
    }
}

/// A PATCH body, by its content type.
enum PatchKind {
    Merge(Value),
    /// Strategic merge: associative lists merged by their keys ([`fields::merge`]).
    Strategic(Value),
    Json(json_patch::Patch),
    /// Server-side apply, simplified: the applied configuration is merged into the object
    /// as a strategic merge patch, which is created if missing; ownership and conflicts
    /// are [`managed_fields`]'s.
    Apply(Value),
}

impl PatchKind {
    fn decode(headers: &HeaderMap, body: &[u8]) -> Result<PatchKind, Status> {
        let ct = content_type(headers);
        let bad = |what: &str, e: &dyn std::fmt::Display| {
            Status::bad_request(format!("error decoding {what}: {e}"))
        };
        match ct.split(';').next().unwrap_or("").trim() {
            "application/merge-patch+json" => serde_json::from_slice(body)
                .map(PatchKind::Merge)
                .map_err(|e| bad("patch", &e)),
            "application/strategic-merge-patch+json" => serde_json::from_slice(body)
                .map(PatchKind::Strategic)
                .map_err(|e| bad("patch", &e)),
            "application/json-patch+json" => serde_json::from_slice(body)
                .map(PatchKind::Json)
                .map_err(|e| bad("patch", &e)),
            "application/apply-patch+yaml" | "application/apply-patch+json" => {
                match serde_yaml::from_slice::<Value>(body) {
                    Ok(v) if v.is_object() => Ok(PatchKind::Apply(v)),
                    Ok(_) => Err(Status::bad_request("apply patch must be an object")),
                    Err(e) => Err(bad("YAML", &e)),
                }
            }
            _ => Err(Status::unsupported_media_type()),
        }
    }
}

fn patch(
    app: &App,
    t: &Target,
    name: &str,
    headers: &HeaderMap,
    body: &[u8],
    w: &Writer,
) -> Response {
    let def = &RESOURCES[t.res];
    let key = object_key(t, name);
    let kind = match PatchKind::decode(headers, body) {
        Ok(k) => k,
        Err(s) => return s.response(),
    };
    let mut created = false;
    let result = app.cluster.write(|s| {
        let Some(o) = s.get(t.res, &key) else {
            let PatchKind::Apply(cfg) = &kind else {
                return Err(Status::not_found(def.plural, def.group, name));
            };
            let mut v = cfg.clone();
            if v["metadata"]["name"].as_str() != Some(name) {
                return Err(Status::bad_request(
                    "metadata.name: the name of the object does not match the name on the URL",
                ));
            }
            if let Some(ns) = &t.namespace {
                v["metadata"]["namespace"] = json!(ns);
            }
            created = true;
            managed_fields(t, &mut v, None, w, Some(cfg))?;
            return s.create(t.res, v, true);
        };
        let mut v = o.value();
        match &kind {
            PatchKind::Merge(p) => json_patch::merge(&mut v, p),
            PatchKind::Strategic(p) | PatchKind::Apply(p) => fields::merge(&mut v, p),
            PatchKind::Json(p) => {
                if let Err(e) = json_patch::patch(&mut v, &p.0) {
                    return Err(Status::bad_request(e.to_string()));
                }
            }
        }
        if v["metadata"]["name"].as_str() != Some(name) {
            return Err(Status::bad_request(
                "metadata.name: the name of the object cannot be changed",
            ));
        }
        let old = o.value();
        let mut v = subresource_rules(t, &old, v);
        let applied = match &kind {
            PatchKind::Apply(cfg) => Some(cfg),
            _ => None,
        };
        managed_fields(t, &mut v, Some(&old), w, applied)?;
        s.update(t.res, &key, v)
    });
    match result {
        Ok(o) if created => object_response(StatusCode::CREATED, &o),
        Ok(o) => object_response(StatusCode::OK, &o),
        Err(s) => s.response(),
    }
}

/// `DeleteOptions.propagationPolicy` (or the older `orphanDependents`), from the body or the
/// query; `None` when neither says.
fn propagation(opts: &Value, q: &Params) -> Result<Option<Propagation>, Status> {
    let policy = opts["propagationPolicy"]
        .as_str()
        .or_else(|| q.get("propagationPolicy").map(String::as_str));
    match policy {
        Some("Background") => Ok(Some(Propagation::Background)),
        Some("Foreground") => Ok(Some(Propagation::Foreground)),
        Some("Orphan") => Ok(Some(Propagation::Orphan)),
        // kube-apiserver's ValidateDeleteOptions: 422, `DeleteOptions.meta.k8s.io "" is invalid`.
        Some(other) => Err(Status::invalid_object(
            "DeleteOptions",
            "meta.k8s.io",
            "",
            &[Cause {
                reason: "FieldValueNotSupported",
                message: format!(
                    "Unsupported value: \"{other}\": supported values: \"Foreground\", \"Background\", \"Orphan\""
                ),
                field: "propagationPolicy".into(),
            }],
        )),
        None => Ok(opts["orphanDependents"]
            .as_bool()
            .map(|o| if o { Propagation::Orphan } else { Propagation::Background })),
    }
}

fn delete(
    app: &App,
    t: &Target,
    name: &str,
    def: &ResourceDef,
    body: &[u8],
    q: &Params,
) -> Response {
    // DeleteOptions.preconditions: uid and/or resourceVersion must match.
    let opts: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let policy = match propagation(&opts, q) {
        Ok(p) => p.unwrap_or(Propagation::Background),
        Err(st) => return st.response(),
    };
    // Without the controllers no garbage collector would ever remove a finalizer: an
    // object goes at once, as it always did.
    let collected = app.controllers.enabled();
    let pre = &opts["preconditions"];
    let key = object_key(t, name);
    let result = app.cluster.write(|s| {
        if let Some(o) = s.get(t.res, &key) {
            let uid_ok = pre["uid"].as_str().is_none_or(|u| u == o.uid);
            let rv_ok = pre["resourceVersion"].as_str().is_none_or(|r| r == o.rv.to_string());
            if !uid_ok || !rv_ok {
                let (what, want, have) = if uid_ok {
                    ("ResourceVersion", pre["resourceVersion"].as_str().unwrap_or(""), o.rv.to_string())
                } else {
                    ("UID", pre["uid"].as_str().unwrap_or(""), o.uid.clone())
                };
                let mut st = Status::conflict(def.plural, def.group, name);
                st.message = Some(format!(
                    "Operation cannot be fulfilled on {}: Precondition failed: {what} in precondition: {want}, {what} in object meta: {have}",
                    if def.group.is_empty() { def.plural.to_string() } else { format!("{}.{}", def.plural, def.group) },
                ));
                return Err(st);
            }
        }
        if collected {
            s.delete_with(t.res, &key, policy)
        } else {
            s.delete(t.res, &key).map(Deleted::Gone)
        }
    });
    match result {
        // Pods and namespaces are deleted gracefully, and an object waiting for its
        // finalizers stays: the object comes back.
        Ok(Deleted::Finalizing(o)) => object_response(StatusCode::OK, &o),
        Ok(Deleted::Gone(o)) if t.res == resources::PODS || t.res == resources::NAMESPACES => {
            object_response(StatusCode::OK, &o)
        }
        Ok(Deleted::Gone(o)) => {
            Status::delete_success(def.plural, def.group, name, &o.uid).response()
        }
        Err(s) => s.response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn propagation_comes_from_the_body_or_the_query_and_an_unknown_one_is_invalid() {
        let none = Params::new();
        let body = json!({"kind": "DeleteOptions", "propagationPolicy": "Foreground"});
        assert_eq!(
            propagation(&body, &none).unwrap(),
            Some(Propagation::Foreground)
        );
        let query: Params = [("propagationPolicy".to_string(), "Orphan".to_string())].into();
        assert_eq!(
            propagation(&Value::Null, &query).unwrap(),
            Some(Propagation::Orphan)
        );
        let legacy = json!({"orphanDependents": false});
        assert_eq!(
            propagation(&legacy, &none).unwrap(),
            Some(Propagation::Background)
        );
        assert_eq!(propagation(&Value::Null, &none).unwrap(), None);
        let e = propagation(&json!({"propagationPolicy": "Sideways"}), &none).unwrap_err();
        assert_eq!(e.code, 422);
        assert_eq!(
            e.message.as_deref(),
            Some("DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Unsupported value: \"Sideways\": supported values: \"Foreground\", \"Background\", \"Orphan\"")
        );
    }

    #[test]
    fn continue_tokens_round_trip_like_the_reference() {
        // From 13-list-configmaps-allns-limit2-page2.
        let tok = "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MjU1LCJzdGFydCI6Ii9kZWZhdWx0L29wZW5zaGlmdC1zZXJ2aWNlLWNhLmNydFx1MDAwMCJ9";
        let (rv, start) = decode_continue(tok).unwrap();
        assert_eq!(rv, 255);
        assert_eq!(start, "default/openshift-service-ca.crt\u{0}");
        assert_eq!(
            encode_continue(255, "/default/openshift-service-ca.crt\u{0}"),
            tok
        );
    }

    /// Ownership moves per field as structured-merge-diff moves it.
    #[test]
    fn managed_fields_move_per_field_and_apply_conflicts() {
        let t = resolve("apps", "v1", &["namespaces", "n", "deployments", "d"]).unwrap();
        let who = |m: &str, op: &'static str, force: bool| Writer {
            manager: m.into(),
            operation: op,
            force,
        };
        let owners = |v: &Value| -> Vec<(String, Value)> {
            v["metadata"]["managedFields"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| {
                    (
                        e["manager"].as_str().unwrap().to_owned(),
                        e["fieldsV1"].clone(),
                    )
                })
                .collect()
        };
        let cfg = json!({"metadata":{"name":"d"},"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"app","image":"a"}]}}}});
        let mut v = cfg.clone();
        managed_fields(&t, &mut v, None, &who("x", "Apply", false), Some(&cfg)).unwrap();
        // kubectl patch changes the image: it owns that field alone.
        let mut p = v.clone();
        p["spec"]["template"]["spec"]["containers"][0]["image"] = json!("b");
        managed_fields(
            &t,
            &mut p,
            Some(&v),
            &who("kubectl-patch", "Update", false),
            None,
        )
        .unwrap();
        let image = json!({"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{"f:image":{}}}}}}});
        assert_eq!(
            owners(&p),
            [
                (
                    "x".to_owned(),
                    json!({"f:spec":{"f:replicas":{},"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:name":{}}}}}}})
                ),
                ("kubectl-patch".to_owned(), image),
            ]
        );
        // Another applier changing replicas conflicts with x, unless forced.
        let cfg2 = json!({"metadata":{"name":"d"},"spec":{"replicas":3}});
        let mut q = p.clone();
        q["spec"]["replicas"] = json!(3);
        let err = managed_fields(
            &t,
            &mut q.clone(),
            Some(&p),
            &who("y", "Apply", false),
            Some(&cfg2),
        )
        .unwrap_err();
        assert_eq!(err.code, 409);
        assert_eq!(
            err.message.as_deref(),
            Some("Apply failed with 1 conflict: conflict with \"x\": .spec.replicas")
        );
        managed_fields(&t, &mut q, Some(&p), &who("y", "Apply", true), Some(&cfg2)).unwrap();
        let o = owners(&q);
        assert_eq!(o[2], ("y".to_owned(), json!({"f:spec":{"f:replicas":{}}})));
        assert!(o[0].1["f:spec"].get("f:replicas").is_none());
        // An Update of a field an Update manager owns names it with its API version.
        let mut r = q.clone();
        r["spec"]["template"]["spec"]["containers"][0]["image"] = json!("c");
        let cfg3 = json!({"metadata":{"name":"d"},"spec":{"template":{"spec":{"containers":[{"name":"app","image":"c"}]}}}});
        let err = managed_fields(&t, &mut r, Some(&q), &who("z", "Apply", false), Some(&cfg3))
            .unwrap_err();
        assert!(err.message.unwrap().ends_with(
            "conflict with \"kubectl-patch\" using apps/v1: .spec.template.spec.containers[name=\"app\"].image"
        ));
    }

    #[test]
    fn resolves_paths() {
        let t = resolve("", "v1", &["namespaces", "ns1", "pods", "p"]).unwrap();
        assert_eq!(
            (t.res, t.namespace.as_deref(), t.name.as_deref()),
            (0, Some("ns1"), Some("p"))
        );
        let t = resolve("", "v1", &["namespaces", "ns1"]).unwrap();
        assert_eq!(
            (t.res, t.name.as_deref()),
            (resources::NAMESPACES, Some("ns1"))
        );
        let t = resolve("", "v1", &["pods"]).unwrap();
        assert!(t.namespace.is_none() && t.name.is_none());
        assert!(resolve("", "v1", &["foos"]).is_none());
        assert!(resolve("", "v1", &["namespaces", "ns1", "nodes"]).is_none());
    }
}
