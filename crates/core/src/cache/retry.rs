//! The request layer's retry rule: client-go's REST client (`rest/request.go`,
//! `rest/with_retry.go`), which repeats a request by itself before its caller — the
//! reflector, discovery — sees the answer.
//!
//! It lives beside the [`ListerWatcher`] contract it wraps: the reflector talks to its
//! source through [`Retrying`] (and so can announce each retry), and the client's single
//! GETs ([`crate::client::source::get_document`]) go through [`send`].
//!
//! The rule (client-go v0.32 `withRetry.IsNextRetry` and `checkWait`):
//! - an answer with status 429 or any status ≥ 500 that carries a `Retry-After` header of
//!   N whole seconds: wait N s and send the same request again;
//! - a connection lost under the request (reset, EOF, HTTP/2 GOAWAY: client-go's
//!   `IsConnectionReset` / `IsProbableEOF` / `IsHTTP2ConnectionLost`) on a GET: wait 1 s
//!   (client-go makes up a `Retry-After: 1` answer) and send it again;
//! - at most [`MAX_RETRIES`] retries (11 tries in all); then, and for every other answer,
//!   the caller gets the error.
//!
//! Where kwatch differs: client-go's watch also retries a request that timed out
//! (`net.IsTimeout`); kwatch's `--request-timeout` is the user's bound on one request
//! and is never retried here. Every request kwatch sends is a GET, so the rule for
//! transport errors applies to all of them.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crate::cache::listwatch::{
    ListOptions, ListPage, ListerWatcher, SourceError, Watch, WatchOptions,
};

/// client-go's `maxRetries` default for every request (`rest.NewRequest`).
pub const MAX_RETRIES: u32 = 10;

/// The wait client-go makes up for a lost connection (`retryAfterResponse()`: "1").
pub const LOST_CONNECTION_WAIT: Duration = Duration::from_secs(1);

/// What kind of request is retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    List,
    Watch,
    /// One object or document (discovery, a CRD).
    Get,
}

impl Verb {
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::List => "list",
            Verb::Watch => "watch",
            Verb::Get => "get",
        }
    }
}

/// A retry the request layer is about to make, after waiting `delay`.
#[derive(Debug, Clone, PartialEq)]
pub struct Retry {
    pub verb: Verb,
    /// The status that asked for the retry; `None` when the connection was lost.
    pub code: Option<u16>,
    /// The status's reason (e.g. `TooManyRequests`), or what broke the connection.
    pub reason: String,
    pub delay: Duration,
    /// The try that failed: 1 for the first, up to `max_retries`.
    pub attempt: u32,
    pub max_retries: u32,
}

/// client-go `IsNextRetry` without the count: how long to wait before sending the same
/// request again, or `None` when the error goes to the caller at once.
pub fn wait_before_retry(err: &SourceError) -> Option<Duration> {
    match err {
        SourceError::Api(s) if s.code == 429 || s.code >= 500 => s.retry_after,
        SourceError::Lost(_) => Some(LOST_CONNECTION_WAIT),
        _ => None,
    }
}

/// Sends a request by calling `send` until it succeeds, the rule says no, or
/// [`MAX_RETRIES`] retries were made; `on_retry` hears of each retry before its wait.
pub async fn send<T, F, Fut>(
    verb: Verb,
    mut send: F,
    on_retry: &(dyn Fn(Retry) + Send + Sync),
) -> Result<T, SourceError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, SourceError>>,
{
    let mut attempt = 0;
    loop {
        let err = match send().await {
            Ok(v) => return Ok(v),
            Err(e) => e,
        };
        attempt += 1;
        let delay = match wait_before_retry(&err) {
            Some(d) if attempt <= MAX_RETRIES => d,
            _ => return Err(err),
        };
        let (code, reason) = match &err {
            SourceError::Api(s) => (Some(s.code), s.reason.clone()),
            other => (None, other.to_string()),
        };
        on_retry(Retry {
            verb,
            code,
            reason,
            delay,
            attempt,
            max_retries: MAX_RETRIES,
        });
        tokio::time::sleep(delay).await;
    }
}

/// A [`ListerWatcher`] whose every list page and watch goes through [`send`]: what the
/// reflector talks to, so that it sees an answer only once the request layer gave up.
pub struct Retrying<L> {
    inner: L,
    on_retry: Arc<dyn Fn(Retry) + Send + Sync>,
}

impl<L> Retrying<L> {
    pub fn new(inner: L, on_retry: Arc<dyn Fn(Retry) + Send + Sync>) -> Self {
        Retrying { inner, on_retry }
    }
}

impl<L: ListerWatcher> ListerWatcher for Retrying<L> {
    async fn list(&self, opts: ListOptions) -> Result<ListPage, SourceError> {
        let list = || self.inner.list(opts.clone());
        send(Verb::List, list, &*self.on_retry).await
    }

    async fn watch(&self, opts: WatchOptions) -> Result<Watch, SourceError> {
        let watch = || self.inner.watch(opts.clone());
        send(Verb::Watch, watch, &*self.on_retry).await
    }

    fn watch_stalled(&self) {
        self.inner.watch_stalled();
    }

    fn asks_protobuf(&self) -> bool {
        self.inner.asks_protobuf()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::cache::listwatch::ApiStatus;

    fn status(code: u16, retry_after: Option<u64>) -> SourceError {
        SourceError::Api(ApiStatus {
            code,
            reason: "R".into(),
            retry_after: retry_after.map(Duration::from_secs),
            ..ApiStatus::default()
        })
    }

    #[test]
    fn the_rule_is_client_gos_check_wait() {
        assert_eq!(
            wait_before_retry(&status(429, Some(3))),
            Some(Duration::from_secs(3))
        );
        for code in [500, 502, 503, 504, 599] {
            assert_eq!(
                wait_before_retry(&status(code, Some(0))),
                Some(Duration::ZERO),
                "{code}"
            );
        }
        // Without Retry-After, or a status the rule does not cover, the caller gets it.
        for (code, ra) in [(429, None), (503, None), (410, Some(1)), (404, Some(1))] {
            assert_eq!(wait_before_retry(&status(code, ra)), None, "{code}");
        }
        assert_eq!(
            wait_before_retry(&SourceError::Lost("connection reset by peer".into())),
            Some(LOST_CONNECTION_WAIT)
        );
        for e in [
            SourceError::ConnectionRefused("refused".into()),
            SourceError::Timeout(Duration::from_secs(1)),
            SourceError::Tls("unknown issuer".into()),
            SourceError::Decode("x".into()),
        ] {
            assert_eq!(wait_before_retry(&e), None, "{e}");
        }
    }

    /// Counts tries; fails the first `fail` of them with `err`.
    async fn run(fail: usize, err: SourceError) -> (Result<usize, SourceError>, Vec<Retry>) {
        let tries = Mutex::new(0usize);
        let retries = Mutex::new(Vec::new());
        let res = send(
            Verb::Watch,
            || {
                let n = {
                    let mut t = tries.lock().unwrap();
                    *t += 1;
                    *t
                };
                let err = err.clone();
                async move {
                    if n <= fail {
                        Err(err)
                    } else {
                        Ok(n)
                    }
                }
            },
            &|r| retries.lock().unwrap().push(r),
        )
        .await;
        (res, retries.into_inner().unwrap())
    }

    #[tokio::test(start_paused = true)]
    async fn retries_until_success_waiting_retry_after_each_time() {
        let start = tokio::time::Instant::now();
        let (res, retries) = run(3, status(429, Some(2))).await;
        assert_eq!(res.unwrap(), 4);
        assert_eq!(start.elapsed(), Duration::from_secs(6));
        let attempts: Vec<u32> = retries.iter().map(|r| r.attempt).collect();
        assert_eq!(attempts, [1, 2, 3]);
        assert!(retries.iter().all(|r| r.code == Some(429)
            && r.delay == Duration::from_secs(2)
            && r.max_retries == 10
            && r.verb == Verb::Watch));
    }

    #[tokio::test(start_paused = true)]
    async fn gives_up_after_ten_retries() {
        let start = tokio::time::Instant::now();
        let (res, retries) = run(usize::MAX, status(503, Some(1))).await;
        assert!(matches!(res, Err(SourceError::Api(ref s)) if s.code == 503));
        assert_eq!(retries.len(), 10);
        assert_eq!(retries.last().map(|r| r.attempt), Some(10));
        // 11 tries, 10 waits of 1 s.
        assert_eq!(start.elapsed(), Duration::from_secs(10));
    }

    #[tokio::test(start_paused = true)]
    async fn no_retry_after_goes_to_the_caller_at_once() {
        let start = tokio::time::Instant::now();
        let (res, retries) = run(1, status(429, None)).await;
        assert!(res.is_err());
        assert!(retries.is_empty());
        assert_eq!(start.elapsed(), Duration::ZERO);
    }

    #[tokio::test(start_paused = true)]
    async fn a_lost_connection_is_retried_after_one_second() {
        let (res, retries) = run(2, SourceError::Lost("unexpected EOF".into())).await;
        assert_eq!(res.unwrap(), 3);
        assert_eq!(retries.len(), 2);
        assert!(retries
            .iter()
            .all(|r| r.code.is_none() && r.delay == LOST_CONNECTION_WAIT));
        assert!(retries[0].reason.contains("unexpected EOF"));
    }
}
