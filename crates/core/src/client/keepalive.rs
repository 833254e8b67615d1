//! How kwatch notices a dead connection, as client-go's transport does: the HTTP/2 health
//! check's settings ([`Http2Health`], from client-go's two environment variables), Go's
//! TCP keepalive, and [`Tracked`], the TCP stream under TLS that remembers when it last read
//! and whether the server closed it, so that a watch body cut because the health check gave
//! up says so ([`ConnectionHealth::lost`]) in golang.org/x/net/http2's words.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper_util::client::legacy::connect::{Connected, Connection};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Go's dialer's TCP keepalive (`net.Dialer.KeepAlive`, 30 s in client-go's transport).
pub const TCP_KEEPALIVE: Duration = Duration::from_secs(30);

/// client-go's HTTP/2 health check (apimachinery `util/net/http.go`,
/// `readIdleTimeoutSeconds` and `pingTimeoutSeconds`): a PING after `read_idle` with
/// nothing read, the connection closed when no answer came `ping_timeout` later.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Http2Health {
    /// `None`: no health check (`HTTP2_READ_IDLE_TIMEOUT_SECONDS=0`).
    pub read_idle: Option<Duration>,
    pub ping_timeout: Duration,
}

impl Http2Health {
    /// client-go's defaults: 30 s, then 15 s.
    const DEFAULT_READ_IDLE: u64 = 30;
    const DEFAULT_PING_TIMEOUT: u64 = 15;

    /// The process's, from `HTTP2_READ_IDLE_TIMEOUT_SECONDS` and `HTTP2_PING_TIMEOUT_SECONDS`,
    /// read once (a warning for a value that is not an integer, as client-go's klog line).
    pub fn get() -> Http2Health {
        static HEALTH: std::sync::OnceLock<Http2Health> = std::sync::OnceLock::new();
        *HEALTH.get_or_init(|| {
            let (health, warnings) = Http2Health::from_vars(
                std::env::var("HTTP2_READ_IDLE_TIMEOUT_SECONDS")
                    .ok()
                    .as_deref(),
                std::env::var("HTTP2_PING_TIMEOUT_SECONDS").ok().as_deref(),
            );
            for w in warnings {
                tracing::warn!("{w}");
            }
            health
        })
    }

    /// The two variables' values as client-go reads them: unset or empty is the default;
    /// not an integer is the default and a warning; `HTTP2_READ_IDLE_TIMEOUT_SECONDS=0`
    /// turns the check off; a ping timeout of 0 is x/net/http2's default, 15 s (its
    /// `pingTimeout()`). Negative values, which Go would turn into an immediate timer, are
    /// taken as 0.
    pub fn from_vars(read_idle: Option<&str>, ping: Option<&str>) -> (Http2Health, Vec<String>) {
        let mut warnings = Vec::new();
        let mut read = |name: &str, value: Option<&str>, default: u64| match value {
            None | Some("") => default,
            Some(v) => match v.parse::<i64>() {
                Ok(n) => n.max(0).unsigned_abs(),
                Err(_) => {
                    warnings.push(format!(
                        "illegal {name}({v:?}): not an integer; the default value {default} is \
                         used (set it to a whole number of seconds)"
                    ));
                    default
                }
            },
        };
        let idle = read(
            "HTTP2_READ_IDLE_TIMEOUT_SECONDS",
            read_idle,
            Self::DEFAULT_READ_IDLE,
        );
        let ping = match read(
            "HTTP2_PING_TIMEOUT_SECONDS",
            ping,
            Self::DEFAULT_PING_TIMEOUT,
        ) {
            0 => Self::DEFAULT_PING_TIMEOUT,
            n => n,
        };
        let health = Http2Health {
            read_idle: (idle > 0).then(|| Duration::from_secs(idle)),
            ping_timeout: Duration::from_secs(ping),
        };
        (health, warnings)
    }
}

/// A connection's reads as [`Tracked`] saw them, in each response's extensions (hyper-util
/// copies a connector's `Connected::extra` there).
#[derive(Debug, Clone)]
pub struct ConnectionHealth(Arc<Reads>);

#[derive(Debug)]
struct Reads {
    last: Mutex<Instant>,
    /// The server closed the connection (EOF) or reading it failed.
    closed_by_peer: std::sync::atomic::AtomicBool,
}

impl ConnectionHealth {
    /// Why the connection under a body that just failed was lost, when it was the health
    /// check: an HTTP/2 connection the server never closed, with nothing read for at least
    /// the read-idle timeout, is one hyper dropped because its PING went unanswered (the
    /// only reason it drops a live connection with streams open). Worded as x/net/http2's
    /// `errClientConnLost`, with what was detected.
    pub fn lost(&self, h2: bool) -> Option<String> {
        let health = Http2Health::get();
        let idle = health.read_idle?;
        let last = *self.0.last.lock().unwrap_or_else(|e| e.into_inner());
        let closed = self
            .0
            .closed_by_peer
            .load(std::sync::atomic::Ordering::SeqCst);
        (h2 && !closed && last.elapsed() >= idle).then(|| {
            format!(
                "http2: client connection lost (nothing read for {}s, then no answer to a ping \
                 for {}s)",
                idle.as_secs(),
                health.ping_timeout.as_secs()
            )
        })
    }
}

/// The TCP stream, below TLS, noting each read.
#[derive(Debug)]
pub struct Tracked<S> {
    inner: S,
    reads: Arc<Reads>,
}

impl<S> Tracked<S> {
    pub fn new(inner: S) -> Tracked<S> {
        Tracked {
            inner,
            reads: Arc::new(Reads {
                last: Mutex::new(Instant::now()),
                closed_by_peer: Default::default(),
            }),
        }
    }
}

impl<S: Connection> Connection for Tracked<S> {
    fn connected(&self) -> Connected {
        self.inner
            .connected()
            .extra(ConnectionHealth(self.reads.clone()))
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Tracked<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let Tracked { inner, reads } = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(inner).poll_read(cx, buf);
        match &polled {
            Poll::Ready(Ok(())) if buf.filled().len() > before => {
                *reads.last.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
            }
            Poll::Ready(_) => reads
                .closed_by_peer
                .store(true, std::sync::atomic::Ordering::SeqCst),
            Poll::Pending => {}
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Tracked<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http2_health_reads_the_variables_as_client_go() {
        let secs = |n| Some(Duration::from_secs(n));
        let (h, w) = Http2Health::from_vars(None, None);
        assert_eq!(
            (h.read_idle, h.ping_timeout, w.len()),
            (secs(30), Duration::from_secs(15), 0)
        );
        let (h, w) = Http2Health::from_vars(Some("2"), Some("1"));
        assert_eq!(
            (h.read_idle, h.ping_timeout, w.len()),
            (secs(2), Duration::from_secs(1), 0)
        );
        let (h, _) = Http2Health::from_vars(Some("0"), Some("0"));
        assert_eq!(
            (h.read_idle, h.ping_timeout),
            (None, Duration::from_secs(15))
        );
        let (h, w) = Http2Health::from_vars(Some("soon"), Some(""));
        assert_eq!(
            (h.read_idle, h.ping_timeout),
            (secs(30), Duration::from_secs(15))
        );
        assert_eq!(w.len(), 1);
        assert!(
            w[0].contains("HTTP2_READ_IDLE_TIMEOUT_SECONDS(\"soon\")"),
            "{w:?}"
        );
        let (h, _) = Http2Health::from_vars(Some("-5"), None);
        assert_eq!(h.read_idle, None);
    }
}
