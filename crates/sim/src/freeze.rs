//! `POST /_sim/freeze`: connections stop reading and writing for a while, at the TCP level
//! (below TLS and HTTP/2, so HTTP/2 pings go unanswered too), with no FIN and no RST, as a
//! proxy, NAT or load balancer that loses its state does.
//!
//! What freezes: every connection open when the freeze starts, except those that have
//! carried `/_sim/` requests only (the control API stays reachable); with `newConnections`, also
//! those accepted meanwhile (their TLS handshake never completes, as through the frozen
//! proxy of a recorded genuine client-go 0.32 run); without it, new
//! connections are served, as a writer that does not go through the proxy (kubectl in the
//! tests) keeps changing the cluster. When the freeze ends every connection resumes where
//! it stopped (a frozen proxy that recovers passes the bytes on): what a client gave up on
//! meanwhile is its to close. A frozen connection the server closes (axum-server's TLS
//! handshake timeout) is closed when the freeze ends: a frozen proxy passes no FIN either.
//!
//! The same stream paces what it writes when a slow link is in force (`link.rs`).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

use super::link::SlowLink;

/// A freeze or a slow link can end before its time (`release`, `clear`), which no timer
/// knows: a frozen or paced stream looks again at least this often.
const RECHECK: Duration = Duration::from_millis(50);

/// The freeze in force, if any; shared by the acceptor's streams and the control API.
#[derive(Debug, Default)]
pub struct Freeze {
    current: Mutex<Option<Window>>,
}

#[derive(Debug, Clone, Copy)]
struct Window {
    since: Instant,
    until: Instant,
    /// Connections accepted during the window freeze too.
    new_connections: bool,
}

impl Freeze {
    /// Freezes connections (see the module doc) for `d` from now.
    pub fn start(&self, d: Duration, new_connections: bool) {
        let since = Instant::now();
        *self.current.lock().unwrap_or_else(|e| e.into_inner()) = Some(Window {
            since,
            until: since + d,
            new_connections,
        });
    }

    /// Ends a freeze at once (`POST /_sim/clear`, `release`); whether one was in force.
    pub fn clear(&self) -> bool {
        let was = self
            .current
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        was.is_some_and(|w| w.until > Instant::now())
    }

    /// Until when the connection `conn` is frozen, if it is now.
    fn until(&self, conn: &Conn) -> Option<Instant> {
        let w = (*self.current.lock().unwrap_or_else(|e| e.into_inner()))?;
        let frozen = w.until > Instant::now()
            && !conn.control_only()
            && (conn.accepted < w.since || w.new_connections);
        frozen.then_some(w.until)
    }
}

/// One accepted connection, in each of its requests' extensions.
#[derive(Debug)]
pub struct Conn {
    accepted: Instant,
    /// It has carried a `/_sim/` request; unless it carried an API request too, it is
    /// never frozen.
    control: AtomicBool,
    /// It has carried an API request.
    api: AtomicBool,
}

impl Conn {
    /// It has carried `/_sim/` requests and no API request: neither frozen nor paced.
    fn control_only(&self) -> bool {
        self.control.load(Ordering::Relaxed) && !self.api.load(Ordering::Relaxed)
    }

    /// Notes what the connection that carries `req` is used for: the control API or not.
    pub fn mark<B>(req: &axum::http::Request<B>, control: bool) {
        if let Some(c) = req.extensions().get::<Arc<Conn>>() {
            let flag = if control { &c.control } else { &c.api };
            flag.store(true, Ordering::Relaxed);
        }
    }
}

/// A connection's service that puts a value of the connection (its [`Conn`], its client
/// certificate) into each request's extensions, when there is one.
#[derive(Clone)]
pub struct WithExtension<S, T> {
    pub inner: S,
    pub value: Option<T>,
}

/// The service of a connection accepted by [`FreezeAcceptor`].
pub type WithConn<S> = WithExtension<S, Arc<Conn>>;

impl<S, B, T> tower::Service<axum::http::Request<B>> for WithExtension<S, T>
where
    S: tower::Service<axum::http::Request<B>>,
    T: Clone + Send + Sync + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: axum::http::Request<B>) -> Self::Future {
        if let Some(v) = &self.value {
            req.extensions_mut().insert(v.clone());
        }
        self.inner.call(req)
    }
}

/// The acceptor under TLS (or alone over plain HTTP): TCP_NODELAY, as Go's net/http sets
/// it (see `super::serve`), and each stream wrapped in [`Frozen`], under the freeze and the
/// slow link of `POST /_sim/freeze` and `POST /_sim/slow-link`.
#[derive(Clone, Debug)]
pub struct FreezeAcceptor(pub Arc<Freeze>, pub Arc<SlowLink>);

impl<S: Send + 'static> axum_server::accept::Accept<tokio::net::TcpStream, S> for FreezeAcceptor {
    type Stream = Frozen<tokio::net::TcpStream>;
    type Service = WithConn<S>;
    type Future = std::future::Ready<std::io::Result<(Self::Stream, WithConn<S>)>>;

    fn accept(&self, stream: tokio::net::TcpStream, service: S) -> Self::Future {
        let _ = stream.set_nodelay(true);
        let conn = Arc::new(Conn {
            accepted: Instant::now(),
            control: AtomicBool::new(false),
            api: AtomicBool::new(false),
        });
        std::future::ready(Ok((
            Frozen {
                inner: Some(stream),
                freeze: self.0.clone(),
                link: self.1.clone(),
                conn: conn.clone(),
                sleep: None,
                pace: None,
            },
            WithExtension {
                inner: service,
                value: Some(conn),
            },
        )))
    }
}

/// A stream that neither reads nor writes while [`Freeze`] is in force, and writes no
/// faster than a [`SlowLink`] in force allows.
#[derive(Debug)]
pub struct Frozen<S: Send + 'static> {
    /// `None` once dropped.
    inner: Option<S>,
    freeze: Arc<Freeze>,
    link: Arc<SlowLink>,
    conn: Arc<Conn>,
    sleep: Option<Pin<Box<Sleep>>>,
    /// Until the slow link is free for the next write.
    pace: Option<Pin<Box<Sleep>>>,
}

impl<S: Send + 'static> Frozen<S> {
    fn io(&mut self) -> std::io::Result<Pin<&mut S>>
    where
        S: Unpin,
    {
        match &mut self.inner {
            Some(s) => Ok(Pin::new(s)),
            None => Err(std::io::ErrorKind::NotConnected.into()),
        }
    }

    /// Ready when no freeze is in force; else pending until the freeze's end.
    fn thawed(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            let Some(until) = self.freeze.until(&self.conn) else {
                self.sleep = None;
                return Poll::Ready(());
            };
            std::task::ready!(sleep_toward(&mut self.sleep, cx, until));
        }
    }

    /// How many of `want` bytes may be written now; pending while the slow link is busy.
    fn paced(&mut self, cx: &mut Context<'_>, want: usize) -> Poll<usize> {
        if self.conn.control_only() {
            return Poll::Ready(want);
        }
        loop {
            match self.link.grant(want) {
                Ok(n) => {
                    self.pace = None;
                    return Poll::Ready(n);
                }
                Err(until) => std::task::ready!(sleep_toward(&mut self.pace, cx, until)),
            }
        }
    }
}

/// Pending until `until`, or RECHECK from now if that is sooner: what a stream waits for
/// can end before its time (`release`, `clear`), which no timer knows, so the caller looks
/// again when this is ready.
fn sleep_toward(
    slot: &mut Option<Pin<Box<Sleep>>>,
    cx: &mut Context<'_>,
    until: Instant,
) -> Poll<()> {
    loop {
        match slot {
            // A sleep set at most RECHECK before `until`, or ending at it: wait it out.
            Some(s) if s.deadline() <= until => {
                std::task::ready!(s.as_mut().poll(cx));
                *slot = None;
                return Poll::Ready(());
            }
            _ => {
                let next = until.min(Instant::now() + RECHECK);
                *slot = Some(Box::pin(tokio::time::sleep_until(next)));
            }
        }
    }
}

impl<S: AsyncRead + Unpin + Send + 'static> AsyncRead for Frozen<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        std::task::ready!(this.thawed(cx));
        this.io()?.poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin + Send + 'static> AsyncWrite for Frozen<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        std::task::ready!(this.thawed(cx));
        let n = std::task::ready!(this.paced(cx, buf.len()));
        let written = std::task::ready!(this.io()?.poll_write(cx, &buf[..n]))?;
        if !this.conn.control_only() {
            this.link.spend(written);
        }
        Poll::Ready(Ok(written))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        std::task::ready!(this.thawed(cx));
        this.io()?.poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        std::task::ready!(this.thawed(cx));
        this.io()?.poll_shutdown(cx)
    }
}

impl<S: Send + 'static> Drop for Frozen<S> {
    fn drop(&mut self) {
        if self.freeze.until(&self.conn).is_none() {
            return;
        }
        let (Some(inner), Ok(rt)) = (self.inner.take(), tokio::runtime::Handle::try_current())
        else {
            return;
        };
        let (freeze, conn) = (self.freeze.clone(), self.conn.clone());
        rt.spawn(async move {
            while let Some(until) = freeze.until(&conn) {
                tokio::time::sleep_until(until.min(Instant::now() + RECHECK)).await;
            }
            drop(inner);
        });
    }
}
