//! The contract between the reflector and where objects come from: the
//! [`ListerWatcher`] trait (client-go's `ListerWatcher`), the options of its requests,
//! what they return, and the errors they fail with ([`SourceError`], with the words
//! kubectl would use for each).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::Stream;

use crate::cache::object::ObjectRef;

/// Options of one LIST request (one page).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListOptions {
    /// "" = unset (a consistent, most recent read).
    pub resource_version: String,
    pub resource_version_match: Option<&'static str>,
    /// `None` or `Some(0)`: no paging.
    pub limit: Option<u32>,
    pub continue_token: Option<String>,
}

/// Options of one WATCH request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WatchOptions {
    pub resource_version: String,
    pub timeout_seconds: u32,
    pub allow_bookmarks: bool,
    /// Streaming list (KEP-3157): initial ADDEDs, then the `initial-events-end` bookmark.
    pub send_initial_events: bool,
}

/// One page of a list.
#[derive(Debug, Clone, Default)]
pub struct ListPage {
    pub resource_version: String,
    pub continue_token: Option<String>,
    pub remaining_item_count: Option<i64>,
    pub items: Vec<ObjectRef>,
    /// How the page's body came over the connection.
    pub transfer: Transfer,
    /// Why this page was read again in JSON: its protobuf body could not be decoded. The
    /// source reads JSON from then on.
    pub wire_fallback: Option<String>,
}

/// How a list's bodies came over the connection (one page's, or a list's pages summed).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Transfer {
    /// A body came in Kubernetes' protobuf (else JSON).
    pub protobuf: bool,
    /// A body came gzip-compressed (`Content-Encoding: gzip`).
    pub gzip: bool,
    /// The bodies' bytes as decoded (what the list's JSON takes).
    pub bytes: u64,
    /// The bodies' bytes read off the connection: `bytes` compressed when `gzip`.
    pub wire_bytes: u64,
}

impl Transfer {
    /// The pages of one list together: protobuf, gzip when any page was.
    pub fn add(&mut self, page: Transfer) {
        self.protobuf |= page.protobuf;
        self.gzip |= page.gzip;
        self.bytes += page.bytes;
        self.wire_bytes += page.wire_bytes;
    }

    /// The content type and encoding, as records and `~` lines name them.
    pub fn encoding(&self) -> &'static str {
        match (self.protobuf, self.gzip) {
            (false, false) => "json",
            (false, true) => "json+gzip",
            (true, false) => "protobuf",
            (true, true) => "protobuf+gzip",
        }
    }
}

/// One watch event, decoded.
#[derive(Debug, Clone)]
pub enum WatchEvent {
    Added(ObjectRef),
    Modified(ObjectRef),
    Deleted(ObjectRef),
    Bookmark {
        resource_version: String,
        /// The `k8s.io/initial-events-end` annotation was "true".
        initial_events_end: bool,
    },
    /// An `ERROR` event: the watch ends with this status.
    Error(ApiStatus),
}

/// A metav1 Status the server answered with (HTTP error or watch ERROR event).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApiStatus {
    pub code: u16,
    pub reason: String,
    pub message: String,
    /// The `Retry-After` header, in whole seconds: what client-go's retry rule reads
    /// ([`crate::cache::retry`]); `details.retryAfterSeconds` alone asks for nothing.
    pub retry_after: Option<Duration>,
    /// A cause of type `ResourceVersionTooLarge` was given.
    pub too_large_rv: bool,
}

impl ApiStatus {
    /// client-go `apierrors.IsResourceExpired` / `IsGone`.
    pub fn is_expired(&self) -> bool {
        self.code == 410 || self.reason == "Expired" || self.reason == "Gone"
    }

    /// client-go `isTooLargeResourceVersionError`.
    pub fn is_too_large_rv(&self) -> bool {
        self.too_large_rv
            || (self.code == 504 && self.message.contains("Too large resource version"))
    }

    /// A short human reason, e.g. `410 Expired: too old resource version: 5 (9)`.
    pub fn summary(&self) -> String {
        let mut s = self.code.to_string();
        if !self.reason.is_empty() {
            s.push(' ');
            s.push_str(&self.reason);
        }
        if !self.message.is_empty() {
            s.push_str(": ");
            s.push_str(&self.message);
        }
        s
    }
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum SourceError {
    #[error("{}", .0.summary())]
    Api(ApiStatus),
    /// Connection refused when connecting, in Go's words as kubectl says it
    /// (`dial tcp 127.0.0.1:6443: connect: connection refused`, see
    /// the client's `DialError`).
    #[error("{0}")]
    ConnectionRefused(String),
    /// The connection broke under the request or the stream (reset, EOF, HTTP/2 GOAWAY):
    /// client-go's `IsConnectionReset` / `IsProbableEOF` / `IsHTTP2ConnectionLost`.
    #[error("{0}")]
    Lost(String),
    /// The TLS handshake failed: most often the server's certificate was not trusted.
    #[error("{0}")]
    Tls(String),
    /// The server's host name did not resolve.
    #[error("{0}")]
    Dns(String),
    /// Any other failure to reach the server or read its response.
    #[error("{0}")]
    Transport(String),
    /// The request could not be made (e.g. a character a URL cannot hold).
    #[error("invalid request: {0}")]
    Invalid(String),
    /// A response or watch line that is not what the API promises.
    #[error("malformed response: {0}")]
    Decode(String),
    /// A protobuf body (a watch frame) that could not be decoded: the source reads JSON
    /// from then on (a list page is read again at once: [`ListPage::wire_fallback`]).
    #[error("malformed response: {0}")]
    Protobuf(String),
    #[error("request timed out after {0:?}")]
    Timeout(Duration),
}

impl SourceError {
    pub fn api(&self) -> Option<&ApiStatus> {
        match self {
            SourceError::Api(s) => Some(s),
            _ => None,
        }
    }
    pub fn is_expired(&self) -> bool {
        self.api().is_some_and(ApiStatus::is_expired)
    }
    pub fn is_too_large_rv(&self) -> bool {
        self.api().is_some_and(ApiStatus::is_too_large_rv)
    }

    /// The error as kubectl words it (`cmdutil.StandardErrorMessage`), one line;
    /// `server`: the cluster's URL.
    pub fn kubectl_message(&self, server: &str) -> String {
        let uri = server.parse::<http::Uri>().ok();
        let host = uri
            .as_ref()
            .and_then(|u| u.authority())
            .map_or(server.to_owned(), |a| a.to_string());
        match self {
            SourceError::Api(s) if s.code == 401 || s.reason == "Unauthorized" => {
                format!("error: You must be logged in to the server ({})", s.message)
            }
            SourceError::Api(s) if !s.reason.is_empty() => {
                format!("Error from server ({}): {}", s.reason, s.message)
            }
            SourceError::Api(s) => format!("Error from server: {}", s.message),
            SourceError::ConnectionRefused(_) => format!(
                "The connection to the server {host} was refused - did you specify the right \
                 host or port?"
            ),
            SourceError::Tls(m) => format!("Unable to connect to the server: {m}"),
            SourceError::Dns(m) => {
                let name = uri.as_ref().and_then(|u| u.host()).unwrap_or(&host);
                format!("Unable to connect to the server: lookup {name}: {m}")
            }
            SourceError::Timeout(t) => format!(
                "Unable to connect to the server: no answer within {t:?} (--request-timeout)"
            ),
            SourceError::Decode(m) | SourceError::Protobuf(m) => {
                format!("Server returned an unexpected response: {m}")
            }
            SourceError::Invalid(m) => format!("error: invalid request: {m}"),
            SourceError::Lost(m) | SourceError::Transport(m) => {
                format!("Unable to connect to the server: {m}")
            }
        }
    }

    /// The server refuses this one resource (403 Forbidden, 404 Not Found, 405 Method Not
    /// Allowed): where several resources were asked for as a group (`kwatch all`,
    /// `--every-resource`), that resource is left out and the others go on.
    pub fn refuses_resource(&self) -> bool {
        self.api().is_some_and(|s| (403..=405).contains(&s.code))
    }

    /// An error that retrying will not fix, so that before kwatch is up a user is better
    /// served by it than by endless backoff: the request is wrong or not allowed (a 4xx
    /// other than 408 timeout, 410 expired and 429 throttling), the server cannot be
    /// trusted, found or reached, or it did not answer within `--request-timeout`.
    pub fn will_not_fix_itself(&self) -> bool {
        match self {
            SourceError::Api(s) => {
                (400..500).contains(&s.code) && ![408, 410, 429].contains(&s.code)
            }
            SourceError::Tls(_)
            | SourceError::Invalid(_)
            | SourceError::Dns(_)
            | SourceError::ConnectionRefused(_)
            | SourceError::Timeout(_) => true,
            SourceError::Lost(_)
            | SourceError::Transport(_)
            | SourceError::Decode(_)
            | SourceError::Protobuf(_) => false,
        }
    }
}

pub type WatchStream = Pin<Box<dyn Stream<Item = Result<WatchEvent, SourceError>> + Send>>;

/// An open watch: its events as they arrive, and how its body comes over the connection.
pub struct Watch {
    pub events: WatchStream,
    /// The body is Kubernetes' protobuf (else JSON lines).
    pub protobuf: bool,
    /// The body came gzip-compressed: from 1.37 a streaming list asked with gzip
    /// (`WatchListCompression`), one gzip member per flush.
    pub gzip: bool,
    /// The body's bytes read off the connection so far, compressed when `gzip` (`None`:
    /// the source does not count them).
    pub wire: Option<BodyBytes>,
    /// The bytes of the body the events taken from `events` so far came in (`None`: the
    /// source does not count them): when a streaming list's initial-events-end bookmark
    /// is taken, what its initial events took on the wire.
    pub read: Option<BodyBytes>,
}

impl Watch {
    /// A watch whose events come as JSON lines.
    pub fn json(events: WatchStream) -> Watch {
        Watch {
            events,
            protobuf: false,
            gzip: false,
            read: None,
            wire: None,
        }
    }
}

/// A count of a body's bytes, shared by the reader that adds to it as it reads (or decodes)
/// and whoever reads it meanwhile.
#[derive(Debug, Clone, Default)]
pub struct BodyBytes(Arc<AtomicU64>);

impl BodyBytes {
    pub fn add(&self, n: u64) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }

    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// What the reflector needs from a source: list one page, open one watch.
/// A watch stream that ends (`None`) was closed cleanly by the server.
pub trait ListerWatcher: Send + Sync + 'static {
    fn list(&self, opts: ListOptions)
        -> impl Future<Output = Result<ListPage, SourceError>> + Send;
    fn watch(&self, opts: WatchOptions) -> impl Future<Output = Result<Watch, SourceError>> + Send;
    /// The watch opened last stalled and is being restarted (`--restart-stalled`): the
    /// next requests must not go over the connection that carried it, which may be frozen
    /// (a shared HTTP/2 connection would otherwise carry the new watch too). A source
    /// without connections has nothing to do.
    fn watch_stalled(&self) {}
    /// Whether the source is set to ask for Kubernetes' protobuf first (`--wire`): a
    /// property of its configuration. It asks JSON for good once a body could not be
    /// decoded, which its answers say ([`ListPage::wire_fallback`],
    /// [`SourceError::Protobuf`]).
    fn asks_protobuf(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_403_404_and_405_refuse_a_resource() {
        let api = |code| {
            SourceError::Api(ApiStatus {
                code,
                ..ApiStatus::default()
            })
        };
        for code in [403, 404, 405] {
            assert!(api(code).refuses_resource(), "{code}");
            assert!(api(code).will_not_fix_itself(), "{code}");
        }
        for code in [400, 401, 410, 422, 429, 500, 503] {
            assert!(!api(code).refuses_resource(), "{code}");
        }
        assert!(!SourceError::ConnectionRefused("refused".into()).refuses_resource());
        assert!(!SourceError::Tls("unknown authority".into()).refuses_resource());
    }
}
