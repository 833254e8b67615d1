//! metav1 `Status` bodies and the JSON encoding rules of kube-apiserver.
//!
//! Every error the simulator returns is a `Status` whose keys come in Go struct order:
//! `kind, apiVersion, metadata, status, message, reason, details, code`. `details` keys are
//! `name, group, kind, uid, causes, retryAfterSeconds`. Bodies are compact JSON followed by one
//! `\n`, with `<`, `>` and `&` escaped the way Go's encoder does (`\u003c`, `\u003e`, `\u0026`).

use axum::body::Body;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use serde_json::{json, Map, Value};

/// Serializes `v` compactly with Go's HTML-safe escapes (no trailing newline).
pub fn go_json(v: &Value) -> Vec<u8> {
    // Serializing a `Value` cannot fail: its map keys are always strings.
    let bytes = serde_json::to_vec(v).unwrap_or_default();
    escape_html(bytes)
}

/// Replaces `<`, `>` and `&` by their `\u00XX` escapes. In serialized JSON these bytes can only
/// occur inside strings, so a byte-wise replacement is exact.
pub fn escape_html(bytes: Vec<u8>) -> Vec<u8> {
    if !bytes.iter().any(|b| matches!(b, b'<' | b'>' | b'&')) {
        return bytes;
    }
    let mut out = Vec::with_capacity(bytes.len() + 32);
    for b in bytes {
        match b {
            b'<' => out.extend_from_slice(b"\\u003c"),
            b'>' => out.extend_from_slice(b"\\u003e"),
            b'&' => out.extend_from_slice(b"\\u0026"),
            _ => out.push(b),
        }
    }
    out
}

/// A JSON response the way kube-apiserver sends it: compact body, one trailing newline,
/// The causes as the real server words them in a message: one as it is, several as `[a, b]`.
fn joined_causes(causes: &[Cause]) -> String {
    let parts: Vec<String> = causes
        .iter()
        .map(|c| format!("{}: {}", c.field, c.message))
        .collect();
    if parts.len() == 1 {
        parts[0].clone()
    } else {
        format!("[{}]", parts.join(", "))
    }
}

/// `Content-Type: application/json`, `Cache-Control: no-cache, private`.
pub fn json_response(code: StatusCode, mut body: Vec<u8>) -> Response {
    body.push(b'\n');
    json_body_response(code, Body::from(body))
}

/// A response with kube-apiserver's JSON headers around `body`, taken as it is.
pub fn json_body_response(code: StatusCode, body: Body) -> Response {
    api_response(code, "application/json", body)
}

/// A response as kube-apiserver's handlers send one: `Content-Type` and
/// `Cache-Control: no-cache, private`.
pub fn api_response(code: StatusCode, content_type: &'static str, body: Body) -> Response {
    let mut resp = Response::new(body);
    *resp.status_mut() = code;
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache, private"),
    );
    resp
}

/// [`json_response`] of a `Value`.
pub fn value_response(code: StatusCode, v: &Value) -> Response {
    json_response(code, go_json(v))
}

/// Go's plain-text `404 page not found` (unknown group or path outside the API).
pub fn plain_404() -> Response {
    let mut resp = Response::new(Body::from("404 page not found\n"));
    *resp.status_mut() = StatusCode::NOT_FOUND;
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    h.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache, private"),
    );
    resp
}

/// One `details.causes[]` entry.
#[derive(Debug, Clone)]
pub struct Cause {
    pub reason: &'static str,
    pub message: String,
    pub field: String,
}

/// A metav1 Status (failure or success).
#[derive(Debug, Clone)]
pub struct Status {
    pub code: u16,
    pub success: bool,
    pub message: Option<String>,
    pub reason: Option<&'static str>,
    /// `details` in key order, or `None` to leave the key out.
    pub details: Option<Box<Map<String, Value>>>,
    /// `metadata.continue` (the 410 of an expired continue token).
    pub continue_token: Option<String>,
    /// Sent as the `Retry-After` header too.
    pub retry_after: Option<u64>,
}

impl Status {
    fn failure(code: u16, message: impl Into<String>, reason: Option<&'static str>) -> Status {
        Status {
            code,
            success: false,
            message: Some(message.into()),
            reason,
            details: None,
            continue_token: None,
            retry_after: None,
        }
    }

    fn with_details(mut self, d: Map<String, Value>) -> Status {
        self.details = Some(Box::new(d));
        self
    }

    /// 401 for a missing or wrong bearer token.
    pub fn unauthorized() -> Status {
        Status::failure(401, "Unauthorized", Some("Unauthorized"))
    }

    /// 404 for an unknown resource inside a known group version.
    pub fn unknown_resource() -> Status {
        Status::failure(
            404,
            "the server could not find the requested resource",
            Some("NotFound"),
        )
        .with_details(Map::new())
    }

    /// 404 `<resource> "<name>" not found`.
    pub fn not_found(resource: &str, group: &str, name: &str) -> Status {
        let msg = format!("{} \"{name}\" not found", qualified(resource, group));
        Status::failure(404, msg, Some("NotFound")).with_details(details(name, group, resource))
    }

    /// 409 `<resource> "<name>" already exists`.
    pub fn already_exists(resource: &str, group: &str, name: &str) -> Status {
        let msg = format!("{} \"{name}\" already exists", qualified(resource, group));
        Status::failure(409, msg, Some("AlreadyExists"))
            .with_details(details(name, group, resource))
    }

    /// 409 Conflict on a stale resourceVersion.
    pub fn conflict(resource: &str, group: &str, name: &str) -> Status {
        let msg = format!(
            "Operation cannot be fulfilled on {} \"{name}\": the object has been modified; \
             please apply your changes to the latest version and try again",
            qualified(resource, group)
        );
        Status::failure(409, msg, Some("Conflict")).with_details(details(name, group, resource))
    }

    /// 409 of a server-side apply that would change fields other managers own, as
    /// apiserver's `fieldmanager/internal/conflict.go` words it: `causes` one per
    /// conflicting field (`field` its path, `message` "conflict with <manager>").
    pub fn apply_conflict(causes: &[Cause]) -> Status {
        let message = match causes {
            [c] => format!("Apply failed with 1 conflict: {}: {}", c.message, c.field),
            _ => {
                let mut m = format!("Apply failed with {} conflicts:", causes.len());
                let mut managers: Vec<&str> = causes.iter().map(|c| c.message.as_str()).collect();
                managers.dedup();
                for who in managers {
                    m.push_str(&format!(
                        " conflicts with {}",
                        &who["conflict with ".len()..]
                    ));
                    for c in causes.iter().filter(|c| c.message == who) {
                        m.push_str(&format!("\n- {}", c.field));
                    }
                }
                m
            }
        };
        let mut d = Map::new();
        d.insert("causes".into(), causes_value(causes));
        Status::failure(409, message, Some("Conflict")).with_details(d)
    }

    /// 400 BadRequest without details.
    pub fn bad_request(message: impl Into<String>) -> Status {
        Status::failure(400, message, Some("BadRequest"))
    }

    /// 405 on a method the path does not allow.
    pub fn method_not_allowed() -> Status {
        Status::failure(
            405,
            "the server does not allow this method on the requested resource",
            Some("MethodNotAllowed"),
        )
        .with_details(Map::new())
    }

    /// 406 NotAcceptable, without details: the `Accept` header named nothing the endpoint
    /// serves (kube-apiserver's `errNotAcceptable`), or a conversion that does not fit the
    /// answer (a PartialObjectMetadata of a list, …).
    pub fn not_acceptable(message: impl Into<String>) -> Status {
        Status::failure(406, message, Some("NotAcceptable"))
    }

    /// 415 on a PATCH with an unsupported content type.
    pub fn unsupported_media_type() -> Status {
        Status::failure(
            415,
            "415: Unsupported Media Type",
            Some("UnsupportedMediaType"),
        )
        .with_details(Map::new())
    }

    /// 415 on a request body in an encoding the server cannot read, in the words of
    /// apiserver's `NewUnsupportedMediaTypeError`; `accepted`: the ones it can.
    pub fn unsupported_body(accepted: &str) -> Status {
        Status::failure(
            415,
            format!(
                "the body of the request was in an unknown format - accepted media types include: {accepted}"
            ),
            Some("UnsupportedMediaType"),
        )
    }

    /// 422 on invalid ListOptions; several causes are joined as `[a, b]`.
    pub fn invalid_list_options(causes: &[Cause]) -> Status {
        let joined = joined_causes(causes);
        let msg = format!("ListOptions.meta.k8s.io \"\" is invalid: {joined}");
        let mut d = Map::new();
        d.insert("group".into(), json!("meta.k8s.io"));
        d.insert("kind".into(), json!("ListOptions"));
        d.insert("causes".into(), causes_value(causes));
        Status::failure(422, msg, Some("Invalid")).with_details(d)
    }

    /// 422 on an invalid object (create/update); `details.kind` is the Kind.
    pub fn invalid_object(kind: &str, group: &str, name: &str, causes: &[Cause]) -> Status {
        let joined = joined_causes(causes);
        let q = if group.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}.{group}")
        };
        let msg = format!("{q} \"{name}\" is invalid: {joined}");
        let mut d = Map::new();
        d.insert("name".into(), json!(name));
        if !group.is_empty() {
            d.insert("group".into(), json!(group));
        }
        d.insert("kind".into(), json!(kind));
        d.insert("causes".into(), causes_value(causes));
        Status::failure(422, msg, Some("Invalid")).with_details(d)
    }

    /// 410 Expired with `message` and no details.
    pub fn expired(message: impl Into<String>) -> Status {
        Status::failure(410, message, Some("Expired"))
    }

    /// 410 for a continue token whose revision was compacted; carries a fresh token.
    pub fn expired_continue(fresh_token: String) -> Status {
        let mut s = Status::expired(
            "The provided continue parameter is too old to display a consistent list result. \
             You can start a new list without the continue parameter, or use the continue token \
             in this response to retrieve the remainder of the results. Continuing with the \
             provided token results in an inconsistent list - objects that were created, \
             modified, or deleted between the time the first chunk was returned and now may \
             show up in the list.",
        );
        s.continue_token = Some(fresh_token);
        s
    }

    /// 504 for a list at a resourceVersion the server has not reached.
    pub fn too_large_rv(requested: u64, current: u64) -> Status {
        let mut d = Map::new();
        d.insert(
            "causes".into(),
            json!([{"reason":"ResourceVersionTooLarge","message":"Too large resource version"}]),
        );
        d.insert("retryAfterSeconds".into(), json!(1));
        let mut s = Status::failure(
            504,
            format!("Timeout: Too large resource version: {requested}, current: {current}"),
            Some("Timeout"),
        )
        .with_details(d);
        s.retry_after = Some(1);
        s
    }

    /// 500 from etcd for an Exact list at a future revision (no reason).
    pub fn future_revision() -> Status {
        Status::failure(
            500,
            "etcdserver: mvcc: required revision is a future revision",
            None,
        )
    }

    /// 500 InternalError.
    pub fn internal(message: impl Into<String>) -> Status {
        let m = message.into();
        let mut d = Map::new();
        d.insert("causes".into(), json!([{"message": m.clone()}]));
        Status::failure(
            500,
            format!("Internal error occurred: {m}"),
            Some("InternalError"),
        )
        .with_details(d)
    }

    /// 429 TooManyRequests with Retry-After.
    pub fn too_many_requests(retry_after: u64) -> Status {
        Status::retry_later(
            429,
            "Too many requests, please try again later.",
            "TooManyRequests",
            retry_after,
        )
    }

    /// 503 ServiceUnavailable with Retry-After.
    pub fn service_unavailable(retry_after: u64) -> Status {
        Status::retry_later(
            503,
            "the server is currently unable to handle the request",
            "ServiceUnavailable",
            retry_after,
        )
    }

    /// A failure that tells the client when to come back (`details.retryAfterSeconds`
    /// and the `Retry-After` header).
    fn retry_later(code: u16, message: &str, reason: &'static str, retry_after: u64) -> Status {
        let mut d = Map::new();
        d.insert("retryAfterSeconds".into(), json!(retry_after));
        let mut s = Status::failure(code, message, Some(reason)).with_details(d);
        s.retry_after = Some(retry_after);
        s
    }

    /// 200 Success of a delete that does not return the object.
    pub fn delete_success(resource: &str, group: &str, name: &str, uid: &str) -> Status {
        let mut d = details(name, group, resource);
        d.insert("uid".into(), json!(uid));
        Status {
            code: 200,
            success: true,
            message: None,
            reason: None,
            details: Some(Box::new(d)),
            continue_token: None,
            retry_after: None,
        }
    }

    /// The Status as a JSON value in Go key order.
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("kind".into(), json!("Status"));
        m.insert("apiVersion".into(), json!("v1"));
        let mut meta = Map::new();
        if let Some(c) = &self.continue_token {
            meta.insert("continue".into(), json!(c));
        }
        m.insert("metadata".into(), Value::Object(meta));
        m.insert(
            "status".into(),
            json!(if self.success { "Success" } else { "Failure" }),
        );
        if let Some(msg) = &self.message {
            m.insert("message".into(), json!(msg));
        }
        if let Some(r) = self.reason {
            m.insert("reason".into(), json!(r));
        }
        if let Some(d) = &self.details {
            m.insert("details".into(), Value::Object((**d).clone()));
        }
        if !self.success {
            m.insert("code".into(), json!(self.code));
        }
        Value::Object(m)
    }

    /// The HTTP response carrying this Status.
    pub fn response(&self) -> Response {
        let code = StatusCode::from_u16(self.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut resp = value_response(code, &self.to_value());
        if let Some(s) = self.retry_after {
            if let Ok(v) = HeaderValue::from_str(&s.to_string()) {
                resp.headers_mut().insert(header::RETRY_AFTER, v);
            }
        }
        resp
    }
}

fn qualified(resource: &str, group: &str) -> String {
    if group.is_empty() {
        resource.to_string()
    } else {
        format!("{resource}.{group}")
    }
}

fn details(name: &str, group: &str, resource: &str) -> Map<String, Value> {
    let mut d = Map::new();
    d.insert("name".into(), json!(name));
    if !group.is_empty() {
        d.insert("group".into(), json!(group));
    }
    d.insert("kind".into(), json!(resource));
    d
}

fn causes_value(causes: &[Cause]) -> Value {
    Value::Array(
        causes
            .iter()
            .map(|c| json!({"reason": c.reason, "message": c.message, "field": c.field}))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_shapes_match_the_reference() {
        let s = Status::not_found("configmaps", "", "nope");
        assert_eq!(
            String::from_utf8(go_json(&s.to_value())).unwrap(),
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"nope\" not found","reason":"NotFound","details":{"name":"nope","kind":"configmaps"},"code":404}"#
        );
        let s = Status::delete_success("widgets", "example.com", "w2", "u");
        assert_eq!(
            String::from_utf8(go_json(&s.to_value())).unwrap(),
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"w2","group":"example.com","kind":"widgets","uid":"u"}}"#
        );
        let s = Status::too_large_rv(99999999, 256);
        assert_eq!(
            String::from_utf8(go_json(&s.to_value())).unwrap(),
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Timeout: Too large resource version: 99999999, current: 256","reason":"Timeout","details":{"causes":[{"reason":"ResourceVersionTooLarge","message":"Too large resource version"}],"retryAfterSeconds":1},"code":504}"#
        );
    }

    #[test]
    fn html_characters_are_escaped() {
        assert_eq!(
            go_json(&json!(["<none>&"])),
            br#"["\u003cnone\u003e\u0026"]"#.to_vec()
        );
    }
}
