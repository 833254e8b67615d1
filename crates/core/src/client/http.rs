//! One request to the API server and what it answers, in kubectl's words: the GET
//! (`get`) with its `Accept`, the server's Status (or one made from a status line that
//! has none), `Retry-After`, the transport failures sorted as the request layer and the
//! reflector tell them apart, server warnings (`Warning:` lines, once per run) and
//! kwatch's own `~` notices on stderr.

use std::time::Duration;

use http_body_util::BodyExt;
use serde::Deserialize;

use crate::cache::listwatch::{ApiStatus, SourceError};
use crate::client::connect::DialError;

/// Set for the whole process by [`quiet`]: no notice and no server warning on stderr.
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Silences [`notice`] and the server's warnings for the rest of the process: a shell
/// completion's stderr is the terminal under the prompt being completed, and a candidate
/// list has no place for them.
pub fn quiet() {
    QUIET.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// A notice on stderr, a `~` line as kwatch's other notices (discovery and its retries
/// run before any output, so they do not go through the printer). Sanitized: the text
/// may carry the server's words.
pub(crate) fn notice(text: &str) {
    use std::io::Write as _;
    if QUIET.load(std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    let line = format!("~ {text}");
    let _ = writeln!(std::io::stderr(), "{}", crate::text::sanitize(&line));
}

/// Sends one GET; a response with a success status is returned with the
/// [`Carrier`](crate::client::connect::Carrier) of its connection in its extensions, any other
/// becomes [`SourceError::Api`] (the server's Status, or one made from the status line
/// and body). Server warnings are shown on the way ([`show_warnings`]).
pub(super) async fn get(
    client: &kube::Client,
    url: String,
    accept: &str,
) -> Result<http::Response<kube::client::Body>, SourceError> {
    let mut req = http::Request::get(url)
        .header(http::header::ACCEPT, accept)
        .body(kube::client::Body::empty())
        .map_err(|e| SourceError::Invalid(e.to_string()))?;
    let carrier = crate::client::connect::Carrier::capture(&mut req);
    let mut res = client.send(req).await.map_err(transport_error)?;
    show_warnings(res.headers());
    if res.status().is_success() {
        res.extensions_mut().insert(carrier);
        return Ok(res);
    }
    let code = res.status().as_u16();
    let retry_after = retry_after_header(res.headers());
    let body = read_body(res.into_body(), 1024 * 1024)
        .await
        .unwrap_or_default();
    let mut status = parse_status(&body).unwrap_or_else(|| non_status(code, &body));
    if status.code == 0 {
        status.code = code;
    }
    status.retry_after = retry_after;
    Err(SourceError::Api(status))
}

/// Shows each server warning (`Warning: 299 - "text"` headers, RFC 7234) once per run on
/// stderr, as kubectl's deduplicating warning handler does.
fn show_warnings(headers: &http::HeaderMap) {
    use std::io::Write as _;
    if QUIET.load(std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    static SHOWN: std::sync::Mutex<Option<std::collections::HashSet<String>>> =
        std::sync::Mutex::new(None);
    for value in headers.get_all(http::header::WARNING) {
        let Ok(value) = value.to_str() else { continue };
        for text in parse_warnings(value) {
            let mut shown = SHOWN.lock().unwrap_or_else(|e| e.into_inner());
            if shown
                .get_or_insert_with(Default::default)
                .insert(text.clone())
            {
                let clean = crate::text::sanitize(&text);
                let _ = writeln!(std::io::stderr(), "Warning: {clean}");
            }
        }
    }
}

/// client-go `ParseWarningHeaders`: the texts of the code-299 warnings in one header
/// value (`299 - "text"`, comma-separated, each with an optional quoted date). A value
/// that does not parse yields what was read before it.
fn parse_warnings(mut v: &str) -> Vec<String> {
    let mut out = Vec::new();
    loop {
        v = v.trim_start_matches([' ', '\t', ',']);
        if v.is_empty() {
            return out;
        }
        let Some((code, rest)) = v.split_once(' ') else {
            return out;
        };
        let Some((_agent, rest)) = rest.split_once(' ') else {
            return out;
        };
        let Some((text, rest)) = quoted(rest) else {
            return out;
        };
        v = rest.trim_start();
        if v.starts_with('"') {
            match quoted(v) {
                Some((_date, rest)) => v = rest,
                None => return out,
            }
        }
        if code == "299" {
            out.push(text);
        }
    }
}

/// The quoted string at the start of `s` (backslash escapes undone) and what follows it.
fn quoted(s: &str) -> Option<(String, &str)> {
    let mut chars = s.strip_prefix('"')?.char_indices();
    let mut text = String::new();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => text.push(chars.next()?.1),
            '"' => return Some((text, &s[i + 2..])),
            c => text.push(c),
        }
    }
    None
}

/// An error of kube's typed API (`kube::Api`, which kwatch uses only to write: `--probe`) as
/// the request layer's: the server's Status as an [`ApiStatus`], so that it is worded as
/// kubectl words it ([`SourceError::kubectl_message`]: `Error from server (NotFound):
/// namespaces "x" not found`), never as kube's Display, which holds the Status's Debug
/// dump; any other failure sorted as [`transport_error`] sorts it.
pub fn kube_error(e: kube::Error) -> SourceError {
    match e {
        kube::Error::Api(s) => SourceError::Api(ApiStatus {
            code: s.code,
            reason: s.reason.clone(),
            message: s.message.clone(),
            ..ApiStatus::default()
        }),
        e => transport_error(e),
    }
}

/// Sorts a failure to get a response into what the request layer and the reflector
/// tell apart: refused, lost (retried), TLS and DNS (never fixed by retrying), other. A
/// connection that could not be made is said in Go's words, as kubectl says it
/// ([`DialError`]: `dial tcp 127.0.0.1:6443: connect: connection refused`).
fn transport_error(e: kube::Error) -> SourceError {
    use std::io::ErrorKind;
    if let Some(refused) = crate::client::connect::tls_failure(&e) {
        return SourceError::Tls(refused);
    }
    if let Some(dial) = find::<DialError>(&e) {
        let text = dial.to_string();
        return match dial.kind() {
            ErrorKind::ConnectionRefused => SourceError::ConnectionRefused(text),
            ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted => SourceError::Lost(text),
            _ => SourceError::Transport(text),
        };
    }
    let mut text = e.to_string();
    let (mut refused, mut lost, mut tls) = (false, false, false);
    let mut src: Option<&(dyn std::error::Error + 'static)> = Some(&e);
    while let Some(s) = src {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            match io.kind() {
                ErrorKind::ConnectionRefused => refused = true,
                ErrorKind::ConnectionReset
                | ErrorKind::ConnectionAborted
                | ErrorKind::UnexpectedEof
                | ErrorKind::BrokenPipe => lost = true,
                _ => {}
            }
            // An io::Error's source() skips the error it wraps: look at it here.
            tls |= io
                .get_ref()
                .is_some_and(|inner| inner.downcast_ref::<rustls::Error>().is_some());
        }
        tls |= s.downcast_ref::<rustls::Error>().is_some();
        if let Some(h) = s.downcast_ref::<hyper::Error>() {
            lost |= h.is_incomplete_message() || h.is_closed() || h.is_canceled();
        }
        let msg = s.to_string();
        if !text.contains(&msg) {
            text.push_str(": ");
            text.push_str(&msg);
        }
        src = s.source();
    }
    let lower = text.to_ascii_lowercase();
    refused |= lower.contains("connection refused");
    tls |= lower.contains("invalid peer certificate") || lower.contains("tls handshake");
    lost |= [
        "connection reset",
        "broken pipe",
        "unexpected eof",
        "goaway",
    ]
    .iter()
    .any(|m| lower.contains(m));
    if refused {
        SourceError::ConnectionRefused(describe_cut(&e))
    } else if tls {
        SourceError::Tls(format!("tls: {}", describe_cut(&e)))
    } else if lower.contains("dns error") || lower.contains("failed to lookup address") {
        SourceError::Dns(describe_cut(&e))
    } else if lost {
        SourceError::Lost(describe_cut(&e))
    } else {
        SourceError::Transport(text)
    }
}

pub(super) async fn read_body(
    mut body: kube::client::Body,
    max: usize,
) -> Result<Vec<u8>, SourceError> {
    // Sized from Content-Length when there is one: a list body can be hundreds of MB, and
    // growing by doubling would copy it and briefly hold up to twice its size.
    let hint = hyper::body::Body::size_hint(&body);
    let mut out = Vec::with_capacity(hint.exact().unwrap_or(hint.lower()).min(max as u64) as usize);
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| SourceError::Transport(e.to_string()))?;
        if let Ok(data) = frame.into_data() {
            if out.len() + data.len() > max {
                break;
            }
            out.extend_from_slice(&data);
        }
    }
    Ok(out)
}

/// A response whose body is no Status, as client-go reads it (`NewGenericServerResponse`):
/// the reason its code stands for, and the body's first line as the message, or client-go's
/// words where the body says nothing more than the code (Go's `404 page not found`).
fn non_status(code: u16, body: &[u8]) -> ApiStatus {
    let (reason, generic) = match code {
        400 => ("BadRequest", "the server rejected our request for an unknown reason"),
        401 => ("Unauthorized", "the server has asked for the client to provide credentials"),
        403 => ("Forbidden", "the server does not allow access to the requested resource"),
        404 => ("NotFound", "the server could not find the requested resource"),
        405 => ("MethodNotAllowed", "the server does not allow this method on the requested resource"),
        406 => ("NotAcceptable", "the server was unable to respond with a content type that the client supports"),
        409 => ("Conflict", "the server reported a conflict"),
        415 => ("UnsupportedMediaType", "the server was unable to process the request in its content type"),
        422 => ("Invalid", "the server rejected our request due to an error in our request"),
        429 => ("TooManyRequests", "the server has received too many requests and has asked us to try again later"),
        503 => ("ServiceUnavailable", "the server is currently unable to handle the request"),
        504 => ("Timeout", "the server was unable to return a response in the time allotted, but may still be processing the request"),
        500.. => ("InternalError", "an error on the server has prevented the request from succeeding"),
        _ => ("", "the server responded with this status code but did not return more information"),
    };
    let text = String::from_utf8_lossy(body);
    let first: String = text
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .chars()
        .take(200)
        .collect();
    let only_the_code = first.is_empty() || first.starts_with(&format!("{code} "));
    ApiStatus {
        code,
        reason: reason.to_owned(),
        message: if only_the_code {
            generic.to_owned()
        } else {
            first
        },
        ..ApiStatus::default()
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct StatusWire {
    #[serde(default)]
    kind: String,
    #[serde(default)]
    code: u16,
    #[serde(default)]
    reason: String,
    #[serde(default)]
    message: String,
    #[serde(default)]
    details: Option<StatusDetailsWire>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StatusDetailsWire {
    #[serde(default)]
    causes: Vec<CauseWire>,
}

#[derive(Deserialize)]
struct CauseWire {
    #[serde(default)]
    reason: String,
}

pub(super) fn status_from_wire(w: StatusWire) -> ApiStatus {
    let too_large_rv = w.details.as_ref().is_some_and(|d| {
        d.causes
            .iter()
            .any(|c| c.reason == "ResourceVersionTooLarge")
    });
    ApiStatus {
        code: w.code,
        reason: w.reason,
        message: w.message,
        retry_after: None,
        too_large_rv,
    }
}

/// client-go `retryAfterSeconds`: the `Retry-After` header as a whole number of seconds
/// (Go's `strconv.Atoi`: a sign is allowed; a negative wait is no wait); an HTTP date or
/// anything else is no `Retry-After` at all.
fn retry_after_header(headers: &http::HeaderMap) -> Option<Duration> {
    let v = headers.get(http::header::RETRY_AFTER)?.to_str().ok()?;
    let secs: i64 = v.trim().parse().ok()?;
    Some(Duration::from_secs(secs.max(0).unsigned_abs()))
}

/// The Status of an error body, JSON or protobuf (`k8s\0` + envelope, which a server
/// sends to a client that asked protobuf first; metav1.Status is the same in every table).
fn parse_status(body: &[u8]) -> Option<ApiStatus> {
    let mut json = Vec::new();
    let body = if body.starts_with(crate::client::protobuf::MAGIC) {
        let minor = crate::client::protobuf::minors().last()?;
        let table = crate::client::protobuf::Table::for_minor(minor)?.ok()?;
        crate::client::protobuf::object(table, body, &mut json).ok()?;
        &json
    } else {
        body
    };
    let w: StatusWire = serde_json::from_slice(body).ok()?;
    (w.kind == "Status").then(|| status_from_wire(w))
}

/// The first error of type `T` in `e`'s chain (`e` itself included).
fn find<'a, T: std::error::Error + 'static>(
    e: &'a (dyn std::error::Error + 'static),
) -> Option<&'a T> {
    let mut next = Some(e);
    while let Some(s) = next {
        if let Some(t) = s.downcast_ref::<T>() {
            return Some(t);
        }
        next = s.source();
    }
    None
}

/// What cut a watch body, in a few words: the innermost cause, without the links some
/// TLS errors append; an I/O error in Go's words (`connection reset by peer`, not Rust's
/// `Connection reset by peer (os error 104)`).
pub(super) fn describe_cut(e: &(dyn std::error::Error + 'static)) -> String {
    let mut inner = e;
    while let Some(s) = inner.source() {
        inner = s;
    }
    let text = match inner.downcast_ref::<std::io::Error>() {
        Some(io) => crate::text::GoIo(io).to_string(),
        None => inner.to_string(),
    };
    let text = text.split(": https://").next().unwrap_or(&text);
    if text.contains("close_notify") || text.contains("unexpected EOF") {
        "the server cut the connection (unexpected EOF)".to_owned()
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// kube's typed API answers a refusal as `kube::Error::Api`, whose Display holds the
    /// Status's Debug dump: kwatch words it as kubectl does.
    #[test]
    fn a_kube_api_error_is_worded_as_kubectl_words_it() {
        let status: kube::core::Status = serde_json::from_str(
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"namespaces \"no-such-ns\" not found","reason":"NotFound","details":{"name":"no-such-ns","kind":"namespaces"},"code":404}"#,
        )
        .unwrap();
        let e = kube_error(kube::Error::Api(Box::new(status)));
        assert_eq!(
            e.kubectl_message("https://127.0.0.1:6443"),
            r#"Error from server (NotFound): namespaces "no-such-ns" not found"#
        );
    }

    /// A refused connection is sorted as refused (the reflector's retry rule reads it) and
    /// said in Go's words, as kubectl says it.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_refused_dial_is_refused_in_gos_words() {
        let refused = std::io::Error::from_raw_os_error(111);
        let dial = DialError::new("127.0.0.1:6443", &refused);
        let e = transport_error(kube::Error::Service(Box::new(dial)));
        assert!(
            matches!(&e, SourceError::ConnectionRefused(m)
                if m == "dial tcp 127.0.0.1:6443: connect: connection refused"),
            "{e:?}"
        );
        let unreachable = std::io::Error::from_raw_os_error(113);
        let dial = DialError::new("10.0.0.1:6443", &unreachable);
        let e = transport_error(kube::Error::Service(Box::new(dial)));
        assert_eq!(
            e.to_string(),
            "dial tcp 10.0.0.1:6443: connect: no route to host"
        );
        // A watch cut by a reset: Go's errno text too.
        let reset = std::io::Error::from_raw_os_error(104);
        assert_eq!(describe_cut(&reset), "connection reset by peer");
    }

    #[test]
    fn too_large_rv_status() {
        let s = parse_status(br#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Timeout: Too large resource version: 99999999, current: 256","reason":"Timeout","details":{"causes":[{"reason":"ResourceVersionTooLarge","message":"Too large resource version"}],"retryAfterSeconds":1},"code":504}"#).unwrap();
        assert!(s.is_too_large_rv() && !s.is_expired());
        // The body's retryAfterSeconds is no Retry-After: client-go reads the header.
        assert_eq!(s.retry_after, None);
    }

    #[test]
    fn parses_warning_headers_as_client_go() {
        assert_eq!(
            parse_warnings(r#"299 - "widgets.example.com/v1beta1 is deprecated; use v1""#),
            ["widgets.example.com/v1beta1 is deprecated; use v1"]
        );
        assert_eq!(
            parse_warnings(
                r#"299 - "a \"quoted\" word" "Wed, 21 Oct 2015 07:28:00 GMT", 199 agent "misc", 299 - "two""#
            ),
            ["a \"quoted\" word", "two"]
        );
        assert_eq!(
            parse_warnings(r#"299 - "unterminated"#),
            Vec::<String>::new()
        );
        assert_eq!(parse_warnings("garbage"), Vec::<String>::new());
    }

    #[test]
    fn retry_after_header_is_whole_seconds() {
        let of = |v: &str| {
            let mut h = http::HeaderMap::new();
            h.insert(http::header::RETRY_AFTER, v.parse().unwrap());
            retry_after_header(&h)
        };
        assert_eq!(of("3"), Some(Duration::from_secs(3)));
        assert_eq!(of(" 0 "), Some(Duration::ZERO));
        assert_eq!(of("+2"), Some(Duration::from_secs(2)));
        assert_eq!(of("-5"), Some(Duration::ZERO));
        assert_eq!(of("1.5"), None);
        assert_eq!(of("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(retry_after_header(&http::HeaderMap::new()), None);
    }
}
