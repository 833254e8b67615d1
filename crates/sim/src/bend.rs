//! Ways a server bends the list/watch protocol that client-go expects, as aggregated API
//! servers and proxies are found to (`kwatch sim --bend MODE`, `POST /_sim/bend`), so that
//! `kwatch check` and kwatch's own watch can be seen meeting each:
//!
//! | mode | the simulator then | as seen in |
//! |---|---|---|
//! | `no-end-bookmark` | a streaming list sends its initial events but never the `k8s.io/initial-events-end` bookmark (periodic bookmarks still come) | kubernetes/kubernetes#140890 |
//! | `close-on-expired` | a watch from a resourceVersion older than the history ends with a clean close instead of an ERROR event with 410 Expired | kubernetes/kubernetes#137089 |
//! | `forbid-watch` | every watch is 403 Forbidden while lists are allowed, and a SelfSubjectAccessReview for `watch` says no | kubernetes-sigs/controller-runtime#1653 |
//! | `opaque-rv` | resourceVersions are not integers: each is the base64 of `{"member1":"N"}`, a composite version as a multi-cluster proxy's; answers are JSON only | karmada-io/karmada#3559 |
//! | `no-bookmarks` | no BOOKMARK on any watch but a streaming list's end bookmark (the same switch as `POST /_sim/bookmarks {"enabled":false}`) | |

use std::sync::atomic::{AtomicBool, Ordering};

use axum::body::Body;
use axum::http::{header, HeaderValue};
use axum::response::Response;
use base64::Engine;
use bytes::Bytes;
use futures::StreamExt;

/// One way of bending the protocol (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Bend {
    /// A streaming list never sends its initial-events-end bookmark.
    NoEndBookmark,
    /// A watch from a too-old resourceVersion closes cleanly instead of a 410.
    CloseOnExpired,
    /// Watches are forbidden (403) while lists are allowed.
    ForbidWatch,
    /// resourceVersions are not integers (composite, base64).
    OpaqueRv,
    /// No bookmarks on watches (but the end of a streaming list).
    NoBookmarks,
}

impl Bend {
    /// Every mode, in the order of the module docs.
    pub const ALL: [Bend; 5] = [
        Bend::NoEndBookmark,
        Bend::CloseOnExpired,
        Bend::ForbidWatch,
        Bend::OpaqueRv,
        Bend::NoBookmarks,
    ];

    /// The mode's name on the command line and in the control API.
    pub fn name(self) -> &'static str {
        match self {
            Bend::NoEndBookmark => "no-end-bookmark",
            Bend::CloseOnExpired => "close-on-expired",
            Bend::ForbidWatch => "forbid-watch",
            Bend::OpaqueRv => "opaque-rv",
            Bend::NoBookmarks => "no-bookmarks",
        }
    }

    /// The mode named `name`.
    pub fn named(name: &str) -> Option<Bend> {
        Bend::ALL.into_iter().find(|b| b.name() == name)
    }
}

/// The modes in force (`no-bookmarks` lives in [`super::control::Faults`]'s bookmark switch).
#[derive(Debug, Default)]
pub struct Bends {
    no_end_bookmark: AtomicBool,
    close_on_expired: AtomicBool,
    forbid_watch: AtomicBool,
    opaque_rv: AtomicBool,
}

impl Bends {
    fn flag(&self, b: Bend) -> Option<&AtomicBool> {
        match b {
            Bend::NoEndBookmark => Some(&self.no_end_bookmark),
            Bend::CloseOnExpired => Some(&self.close_on_expired),
            Bend::ForbidWatch => Some(&self.forbid_watch),
            Bend::OpaqueRv => Some(&self.opaque_rv),
            Bend::NoBookmarks => None,
        }
    }

    /// Whether `b` is in force (never for `no-bookmarks`: ask the bookmark switch).
    pub fn on(&self, b: Bend) -> bool {
        self.flag(b).is_some_and(|f| f.load(Ordering::SeqCst))
    }

    /// Switches `b` (not `no-bookmarks`: the caller sets the bookmark switch).
    pub fn set(&self, b: Bend, on: bool) {
        if let Some(f) = self.flag(b) {
            f.store(on, Ordering::SeqCst);
        }
    }
}

/// The member name of the composite resourceVersions of `opaque-rv`.
const MEMBER: &str = "member1";

/// The composite form of the storage's revision `rv`.
pub fn opaque(rv: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(format!("{{\"{MEMBER}\":\"{rv}\"}}"))
}

/// The storage's revision of a composite resourceVersion; an integer (or `""`, `"0"`) is
/// taken as it is; anything else too (the handlers answer it as kube-apiserver would).
pub fn revision(rv: &str) -> String {
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(rv)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok());
    match decoded.as_ref().and_then(|v| v[MEMBER].as_str()) {
        Some(n) => n.to_owned(),
        None => rv.to_owned(),
    }
}

/// A request's URI with its `resourceVersion` turned back into the storage's revision.
pub fn request_uri(uri: &axum::http::Uri) -> Option<axum::http::Uri> {
    let query = uri.query()?;
    if !query.contains("resourceVersion=") {
        return None;
    }
    let pairs: Vec<(String, String)> = form_pairs(query)
        .map(|(k, v)| {
            let v = if k == "resourceVersion" {
                revision(&v)
            } else {
                v
            };
            (k, v)
        })
        .collect();
    let mut q = url_encode(&pairs);
    q.insert(0, '?');
    format!("{}{q}", uri.path()).parse().ok()
}

fn form_pairs(q: &str) -> impl Iterator<Item = (String, String)> + '_ {
    q.split('&').filter(|p| !p.is_empty()).map(|p| {
        let (k, v) = p.split_once('=').unwrap_or((p, ""));
        (unescape(k), unescape(v))
    })
}

fn unescape(s: &str) -> String {
    let s = s.replace('+', " ");
    let mut out = Vec::with_capacity(s.len());
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("");
            if let Ok(n) = u8::from_str_radix(hex, 16) {
                out.push(n);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn url_encode(pairs: &[(String, String)]) -> String {
    let enc = |s: &str| {
        s.bytes()
            .map(|c| match c {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                    (c as char).to_string()
                }
                c => format!("%{c:02X}"),
            })
            .collect::<String>()
    };
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", enc(k), enc(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// An `Accept` without its protobuf media ranges (`opaque-rv` answers JSON only, as the
/// proxies that compose versions do); `None` when nothing is left.
pub fn json_accept(accept: &str) -> Option<HeaderValue> {
    let kept: Vec<&str> = accept
        .split(',')
        .filter(|m| {
            !m.trim()
                .to_ascii_lowercase()
                .starts_with("application/vnd.kubernetes.protobuf")
        })
        .collect();
    let joined = if kept.is_empty() {
        "application/json".to_owned()
    } else {
        kept.join(",")
    };
    HeaderValue::from_str(&joined).ok()
}

/// Every `"resourceVersion":"N"` of a JSON text with N in its composite form.
fn rewrite(text: &[u8]) -> Vec<u8> {
    const KEY: &[u8] = b"\"resourceVersion\":\"";
    let mut out = Vec::with_capacity(text.len() + text.len() / 16);
    let mut rest = text;
    while let Some(at) = memchr::memmem::find(rest, KEY) {
        let value = &rest[at + KEY.len()..];
        let digits = value.iter().take_while(|c| c.is_ascii_digit()).count();
        out.extend_from_slice(&rest[..at + KEY.len()]);
        if digits > 0 && value.get(digits) == Some(&b'"') {
            let n = String::from_utf8_lossy(&value[..digits]);
            out.extend_from_slice(opaque(&n).as_bytes());
        } else {
            out.extend_from_slice(&value[..digits]);
        }
        rest = &value[digits..];
    }
    out.extend_from_slice(rest);
    out
}

/// A JSON answer with its resourceVersions composite: a watch's chunks one by one (each
/// holds whole event lines), any other body whole.
pub async fn answer(resp: Response, watch: bool) -> Response {
    let (mut parts, body) = resp.into_parts();
    parts.headers.remove(header::CONTENT_LENGTH);
    if watch {
        let stream = body
            .into_data_stream()
            .map(|chunk| chunk.map(|b| Bytes::from(rewrite(&b))));
        return Response::from_parts(parts, Body::from_stream(stream));
    }
    match axum::body::to_bytes(body, usize::MAX).await {
        Ok(b) => Response::from_parts(parts, Body::from(rewrite(&b))),
        Err(e) => Response::from_parts(
            parts,
            Body::from_stream(futures::stream::iter([Err::<Bytes, _>(e)])),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_versions_go_composite_and_come_back() {
        let text = br#"{"metadata":{"resourceVersion":"42","x":"resourceVersion"},"b":{"resourceVersion":""}}"#;
        let out = String::from_utf8(rewrite(text)).unwrap();
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let rv = v["metadata"]["resourceVersion"].as_str().unwrap();
        assert_ne!(rv, "42");
        assert!(rv.parse::<u64>().is_err());
        assert_eq!(revision(rv), "42");
        assert_eq!(v["b"]["resourceVersion"], "");
        assert_eq!(revision("17"), "17");
        let uri: axum::http::Uri = format!(
            "/api/v1/pods?watch=1&resourceVersion={}",
            url_encode(&[("x".into(), opaque("9"))]).trim_start_matches("x=")
        )
        .parse()
        .unwrap();
        let back = request_uri(&uri).unwrap();
        assert_eq!(back.query(), Some("watch=1&resourceVersion=9"));
    }

    #[test]
    fn protobuf_is_taken_out_of_accept() {
        let a = json_accept("application/vnd.kubernetes.protobuf, application/json").unwrap();
        assert_eq!(a, " application/json");
        let a = json_accept("application/vnd.kubernetes.protobuf").unwrap();
        assert_eq!(a, "application/json");
    }
}
