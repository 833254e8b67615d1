//! The HTTP client for a resolved [`kube::Config`], verifying the server's certificate the
//! way kubectl (Go's `crypto/x509` with the kubeconfig's CA data as the root pool) does.
//!
//! kube's own client hands the CA data to webpki, which is stricter than Go in two cases
//! kubectl users meet on their first run:
//!
//! - a self-signed server certificate with `CA:TRUE` named as the kubeconfig's CA (what
//!   `openssl req -x509` makes by default): webpki refuses a CA certificate as the end
//!   entity (`CaUsedAsEndEntity`);
//! - a kubeconfig that pins the server's own leaf certificate as its CA: webpki looks for the
//!   leaf's issuer among the anchors and finds none (`UnknownIssuer`).
//!
//! Go accepts both because a certificate that is itself in the root pool is a complete chain
//! of one, and Go does not refuse a `CA:TRUE` leaf that an anchor signed either.
//! [`AnchorVerifier`] does the same and nothing more: webpki first; only when it refuses and
//! the presented leaf is byte for byte one of the configured anchors, or is a `CA:TRUE`
//! leaf whose issuer is an anchor's subject and whose signature that anchor's key verifies,
//! the leaf's validity dates and its name (DNS name or IP address) are checked; the
//! handshake signature is verified with the leaf's key in every case. A certificate that is
//! not an anchor and does not chain to one (a wrong CA) is refused as before. Not
//! reproduced: a `CA:TRUE` leaf under an intermediate, and Go's extended-key-usage check of
//! an anchor leaf.
//!
//! Everything else of kube's client stack is kept: base URI, the auth layer (token, token
//! file, exec plugins, auth providers), client certificates (also from exec plugins),
//! impersonation and extra headers, `tls-server-name`, timeouts; the connector is
//! hyper-rustls's with client-go's TLS handshake timeout added ([`TLS_HANDSHAKE_TIMEOUT`]).
//!
//! The transport is client-go's (`transport/cache.go`, apimachinery `util/net/http.go`
//! `SetTransportDefaults`): HTTP/2 when the server offers it by ALPN (HTTP/1.1 otherwise,
//! and always over plain http: no h2c), every request of a cluster multiplexed over one
//! connection, with golang.org/x/net/http2's health check ([`keepalive::Http2Health`]); TCP
//! keepalive every 30 s as Go's dialer sets it, which is what guards HTTP/1.1 connections;
//! TCP_NODELAY on every connection, as Go sets it; `Accept-Encoding: gzip` on every request
//! and gzip bodies decompressed as they stream, unless the kubeconfig's
//! `disable-compression` says not to (Go's `DisableCompression`), each body's bytes off the
//! connection counted ([`Carried`]).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use hyper_rustls::ResolveServerName;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioIo;
use kube::client::ConfigExt;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, SignatureScheme};
use tower::{BoxError, ServiceBuilder};

use crate::cache::listwatch::BodyBytes;
use crate::client::keepalive;
use crate::der;

/// Why the client for a kubeconfig could not be built: one line, with kube's or rustls'
/// error as the cause where there is one.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot build the client")]
    Build(#[source] kube::Error),
    #[error("cannot set up TLS for the cluster")]
    Tls(#[source] kube::Error),
    #[error("tls-server-name {name:?}: {reason}")]
    TlsServerName {
        name: String,
        reason: rustls::pki_types::InvalidDnsNameError,
    },
    #[error("the cluster's certificate-authority data holds an invalid certificate")]
    InvalidCa(#[source] rustls::Error),
    #[error("cannot use the cluster's certificate-authority data")]
    UnusableCa(#[source] rustls::client::VerifierBuilderError),
    #[error("invalid impersonation or extra header")]
    Headers(#[source] kube::Error),
    #[error(
        "the user's token holds control characters: check --token or the kubeconfig's \
         token (net/http: invalid header field value for \"Authorization\")"
    )]
    TokenControlCharacters,
    /// The kubeconfig's exec credential plugin is not installed; `hint` (with its leading
    /// `; `) is the kubeconfig's `installHint`, or a default.
    #[error(
        "getting credentials: exec: executable {command} not found: the kubeconfig's \
         client-go credential plugin is not installed{hint}"
    )]
    ExecNotFound { command: String, hint: String },
    #[error("cannot set up authentication")]
    Auth(#[source] kube::Error),
}

/// Builds the client for `config`: kube's stack with [`AnchorVerifier`] when the kubeconfig
/// names CA data and verification is on. With a proxy (which kube's features here do not
/// support either) the config goes to kube unchanged, so its error is the one reported.
pub fn client(config: &kube::Config) -> Result<kube::Client, Error> {
    if config.proxy_url.is_some() {
        return kube::Client::try_from(config.clone()).map_err(Error::Build);
    }
    let mut tls = config.rustls_client_config().map_err(Error::Tls)?;
    if let (Some(roots), false) = (&config.root_cert, config.accept_invalid_certs) {
        let verifier = AnchorVerifier::new(roots, tls.crypto_provider().clone())?;
        tls.dangerous().set_certificate_verifier(Arc::new(verifier));
    }
    // Go's net/http offers both when its transport has HTTP/2 configured (kube's config
    // sets no ALPN): hyper-rustls's stream then reports `h2` to hyper when it is chosen.
    tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_keepalive(Some(keepalive::TCP_KEEPALIVE));
    // TCP_NODELAY on every connection, as Go's net/http dialer sets it (client-go,
    // kubectl): a request's head and body are written separately (HTTP/2 HEADERS then
    // DATA), and with Nagle's algorithm the body waits for the server's delayed ACK of the
    // head, ~40 ms on every write (which `--probe` would then measure instead of the
    // informer).
    http.set_nodelay(true);
    let server_name = match &config.tls_server_name {
        Some(name) => {
            Some(
                ServerName::try_from(name.clone()).map_err(|reason| Error::TlsServerName {
                    name: name.clone(),
                    reason,
                })?,
            )
        }
        None => None,
    };
    let https = Connector {
        tcp: http,
        tls: tokio_rustls::TlsConnector::from(Arc::new(tls)),
        server_name,
    };
    let mut connector = hyper_timeout::TimeoutConnector::new(https);
    connector.set_connect_timeout(config.connect_timeout);
    connector.set_read_timeout(config.read_timeout);
    connector.set_write_timeout(config.write_timeout);
    connector.set_reset_reader_on_write(config.reset_reader_on_write);
    let http_client = hyper_client().build(connector);
    // kube's default stack (minus its retry layer, which kwatch turns off), with the
    // decompression outermost so that `count_wire` below it counts the bytes as read.
    let service = ServiceBuilder::new()
        // client-go's transport (Go's net/http): `Accept-Encoding: gzip` on every request
        // that names no encoding, and a gzip body decompressed as it streams, member after
        // member; kubeconfig's `disable-compression` (or `--disable-compression`) turns
        // both off.
        .layer(crate::client::gunzip::GunzipLayer {
            enabled: !config.disable_compression,
        })
        .map_response(count_wire)
        .layer(config.base_uri_layer())
        .option_layer(exec_not_found(config, token_checked(config)?.auth_layer())?)
        .layer(config.extra_headers_layer().map_err(Error::Headers)?)
        .layer(
            tower_http::trace::TraceLayer::new_for_http()
                .make_span_with(trace_span)
                .on_request(trace_request)
                .on_response(trace_response)
                .on_body_chunk(())
                .on_eos(())
                .on_failure(trace_failure),
        )
        .map_err(BoxError::from)
        .service(http_client);
    Ok(kube::Client::new(service, config.default_namespace.clone()))
}

/// hyper's client with its HTTP/2 health check set as x/net/http2's
/// ([`keepalive::Http2Health`]).
fn hyper_client() -> hyper_util::client::legacy::Builder {
    let health = keepalive::Http2Health::get();
    let mut builder =
        hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new());
    builder
        .timer(hyper_util::rt::TokioTimer::new())
        .pool_timer(hyper_util::rt::TokioTimer::new());
    if let Some(idle) = health.read_idle {
        // hyper pings when nothing was read for `idle` (proto/h2/ping.rs schedules from
        // `last_read_at`, updated by every DATA, HEADERS and PONG read), and closes the
        // connection when no PONG came `ping_timeout` later: x/net/http2's ReadIdleTimeout
        // and PingTimeout. Go counts any frame read; hyper those three kinds.
        builder
            .http2_keep_alive_interval(idle)
            .http2_keep_alive_timeout(health.ping_timeout)
            .http2_keep_alive_while_idle(true);
    }
    builder
}

/// What carried a response's body, in the response's extensions: whether it came
/// gzip-compressed, and how many bytes of it were read off the connection (counted below
/// the decompression, as they arrive), beside the decoded bytes its reader counts.
#[derive(Debug, Clone, Default)]
pub struct Carried {
    pub gzip: bool,
    read: BodyBytes,
}

impl Carried {
    /// The body's bytes read off the connection so far (compressed when `gzip`).
    pub fn bytes(&self) -> u64 {
        self.read.get()
    }

    /// The count behind [`Carried::bytes`], shared, for a body read later (a watch's).
    pub fn counter(&self) -> BodyBytes {
        self.read.clone()
    }
}

/// Puts a [`Carried`] into the response's extensions and counts its body's bytes into it.
fn count_wire<B>(
    res: http::Response<B>,
) -> http::Response<impl hyper::body::Body<Data = bytes::Bytes, Error = B::Error>>
where
    B: hyper::body::Body<Data = bytes::Bytes>,
{
    use http_body_util::BodyExt as _;
    let wire = Carried {
        gzip: res
            .headers()
            .get(http::header::CONTENT_ENCODING)
            .is_some_and(|e| e.as_bytes().eq_ignore_ascii_case(b"gzip")),
        read: BodyBytes::default(),
    };
    let read = wire.read.clone();
    let (mut parts, body) = res.into_parts();
    parts.extensions.insert(wire);
    let body = body.map_frame(move |frame| {
        if let Some(data) = frame.data_ref() {
            read.add(data.len() as u64);
        }
        frame
    });
    http::Response::from_parts(parts, body)
}

/// How long the TLS handshake may take once the TCP connection is up: client-go's
/// transport (`transport/cache.go`, `TLSHandshakeTimeout: 10 * time.Second`). The whole
/// connection stays bounded by kube's connect timeout (30 s, or `--request-timeout`).
pub const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// hyper-rustls's connector (plain TCP for http, TCP then TLS for https) with Go's
/// handshake timeout, which hyper-rustls lacks: a server that accepts the connection and
/// never completes the handshake is reported as such after [`TLS_HANDSHAKE_TIMEOUT`].
#[derive(Clone)]
struct Connector {
    tcp: HttpConnector,
    tls: tokio_rustls::TlsConnector,
    /// `tls-server-name`; `None`: the URL's host.
    server_name: Option<ServerName<'static>>,
}

/// A TLS handshake that did not complete in time, worded as Go's net/http words it.
#[derive(Debug, thiserror::Error)]
#[error(
    "net/http: TLS handshake timeout ({server} accepted the connection but did not \
     complete the TLS handshake within {}s)",
    TLS_HANDSHAKE_TIMEOUT.as_secs()
)]
pub struct HandshakeTimeout {
    /// `host:port`.
    pub server: String,
}

/// A TCP connection that could not be made, worded as Go's net package words it for kubectl
/// and client-go (the `net.OpError` of a dial: `dial tcp 127.0.0.1:6443: connect:
/// connection refused`), never in Rust's (`Connection refused (os error 111)`). `server`
/// is the URL's `host:port`, where Go names the address it dialled (the same for an IP
/// address; a host name Go has resolved by then). What failed is [`DialError::kind`]: a
/// refused connection is what the request layer and the reflector tell apart.
#[derive(Debug)]
pub struct DialError {
    /// `host:port`.
    pub server: String,
    kind: std::io::ErrorKind,
    /// The errno's text in Go's words ([`crate::text::GoIo`]).
    why: String,
}

impl DialError {
    pub fn new(server: &str, cause: &std::io::Error) -> DialError {
        DialError {
            server: server.to_owned(),
            kind: cause.kind(),
            why: crate::text::GoIo(cause).to_string(),
        }
    }

    /// What connect(2) said: `ConnectionRefused` when nothing listens there.
    pub fn kind(&self) -> std::io::ErrorKind {
        self.kind
    }
}

impl std::fmt::Display for DialError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "dial tcp {}: connect: {}", self.server, self.why)
    }
}

/// No `source()`: the text already holds the cause's, in Go's words, which a chain would
/// repeat in Rust's.
impl std::error::Error for DialError {}

/// The TCP connector's error, as Go words it when it is connect(2)'s own (hyper-util's
/// `tcp connect error` over the `io::Error`): a [`DialError`]; any other (a name that did
/// not resolve, a socket that could not be opened) as it is.
fn dial_error<E>(server: &str, e: E) -> BoxError
where
    E: std::error::Error + Send + Sync + 'static,
{
    let io = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<std::io::Error>());
    match io {
        Some(io) if e.to_string() == "tcp connect error" => Box::new(DialError::new(server, io)),
        _ => Box::new(e),
    }
}

type Connected = hyper_rustls::MaybeHttpsStream<TokioIo<keepalive::Tracked<tokio::net::TcpStream>>>;

impl tower::Service<http::Uri> for Connector {
    type Response = Connected;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Connected, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut std::task::Context<'_>) -> Poll<Result<(), BoxError>> {
        self.tcp.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, dst: http::Uri) -> Self::Future {
        let https = dst.scheme() == Some(&http::uri::Scheme::HTTPS);
        let name = match (&self.server_name, https) {
            (_, false) => None,
            (Some(n), true) => Some(Ok(n.clone())),
            (None, true) => Some(hyper_rustls::DefaultServerNameResolver::default().resolve(&dst)),
        };
        let server = dst.authority().map(|a| a.to_string()).unwrap_or_default();
        let tcp = self.tcp.call(dst);
        let tls = self.tls.clone();
        Box::pin(async move {
            let attempt = Attempt::start(&server, Phase::Dialing);
            let tcp = tcp.await.map_err(|e| dial_error(&server, e))?;
            let tcp = TokioIo::new(keepalive::Tracked::new(tcp.into_inner()));
            let Some(name) = name else {
                return Ok(hyper_rustls::MaybeHttpsStream::Http(tcp));
            };
            attempt.set(Phase::Handshaking);
            let handshake = tls.connect(name?, TokioIo::new(tcp));
            match tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, handshake).await {
                Ok(stream) => Ok(hyper_rustls::MaybeHttpsStream::Https(TokioIo::new(stream?))),
                Err(_) => Err(HandshakeTimeout { server }.into()),
            }
        })
    }
}

/// The connection that carried a request, captured as it is sent: [`Carrier::retire`]
/// keeps the client's pool from handing it to later requests (they get a new connection),
/// without closing it under the streams it still carries.
#[derive(Debug, Clone)]
pub struct Carrier(Arc<hyper_util::client::legacy::connect::CaptureConnection>);

impl Carrier {
    pub fn capture<B>(req: &mut http::Request<B>) -> Carrier {
        Carrier(Arc::new(
            hyper_util::client::legacy::connect::capture_connection(req),
        ))
    }

    /// No later request goes over this connection (hyper-util's poisoning). Hyper
    /// exposes no PING on a pooled connection, so a stalled watch's connection
    /// cannot be checked before the new watch; retiring it costs one TLS handshake, while
    /// reusing a frozen one would cost the health check's 45 s.
    pub fn retire(&self) {
        if let Some(connected) = self.0.connection_metadata().as_ref() {
            connected.poison();
        }
    }
}

/// Where a connection attempt is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// The TCP connection is not up yet.
    Dialing,
    /// TCP is up, the TLS handshake has not completed.
    Handshaking,
}

/// The process's connection attempts in progress, oldest first, each removed when its
/// [`Attempt`] is dropped (connected, failed or abandoned): what [`pending_connection`]
/// reports when `--timeout` ends a run that never reached its server.
static ATTEMPTS: std::sync::Mutex<Vec<(u64, String, Phase)>> = std::sync::Mutex::new(Vec::new());

/// One connection attempt, listed in [`ATTEMPTS`] while it lives.
struct Attempt(u64);

impl Attempt {
    fn start(server: &str, phase: Phase) -> Attempt {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        attempts().push((id, server.to_owned(), phase));
        Attempt(id)
    }

    fn set(&self, phase: Phase) {
        if let Some(a) = attempts().iter_mut().find(|a| a.0 == self.0) {
            a.2 = phase;
        }
    }
}

impl Drop for Attempt {
    fn drop(&mut self) {
        attempts().retain(|a| a.0 != self.0);
    }
}

fn attempts() -> std::sync::MutexGuard<'static, Vec<(u64, String, Phase)>> {
    ATTEMPTS.lock().unwrap_or_else(|e| e.into_inner())
}

/// The oldest connection attempt still in progress, in Go's terms (`dial tcp`, the TLS
/// handshake), for a run that ends before it completes.
pub fn pending_connection() -> Option<String> {
    let attempts = attempts();
    let (_, server, phase) = attempts.first()?;
    Some(match phase {
        Phase::Dialing => format!("dial tcp {server}: the connection is not up yet"),
        Phase::Handshaking => {
            format!("{server} accepted the connection but has not completed the TLS handshake")
        }
    })
}

/// `config`, once its bearer token is known to be a valid header value: kube's auth layer
/// builds the header with tower-http's `AddAuthorization::bearer`, which panics on one that
/// is not. Go refuses it at the first request (`net/http: invalid header field value for
/// "Authorization"`). The token itself is never printed.
fn token_checked(config: &kube::Config) -> Result<&kube::Config, Error> {
    use secrecy::ExposeSecret;
    if let Some(token) = &config.auth_info.token {
        if http::HeaderValue::try_from(format!("Bearer {}", token.expose_secret())).is_err() {
            return Err(Error::TokenControlCharacters);
        }
    }
    Ok(config)
}

/// kube's auth layer, or its error; an exec credential plugin that is not installed is
/// named with the kubeconfig's `installHint`, in client-go's words (`exec.go`,
/// `wrapCmdRunErrorLocked`: `exec: executable %s not found`, then the hint).
fn exec_not_found<T>(config: &kube::Config, layer: Result<T, kube::Error>) -> Result<T, Error> {
    let err = match layer {
        Ok(layer) => return Ok(layer),
        Err(err) => err,
    };
    let mut missing = false;
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(&err);
    while let Some(e) = next {
        missing |= e
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::NotFound);
        next = e.source();
    }
    match config.auth_info.exec.as_ref() {
        Some(exec) if missing => {
            let command = exec.command.clone().unwrap_or_default();
            let hint = match exec.install_hint.as_deref().map(str::trim) {
                Some(h) if !h.is_empty() => format!("; {h}"),
                _ => "; install it or fix the kubeconfig's exec command".to_owned(),
            };
            Err(Error::ExecNotFound { command, hint })
        }
        _ => Err(Error::Auth(err)),
    }
}

// kube's request tracing (a span per request, `requesting`, the status, failures), under
// kube's target so that `-vvv` (`kube=debug`) shows what it showed before. Headers are never
// recorded: they carry the token.

fn trace_span(req: &http::Request<kube::client::Body>) -> tracing::Span {
    tracing::debug_span!(
        target: "kube_client::client",
        "HTTP",
        http.method = %req.method(),
        http.url = %req.uri(),
        http.status_code = tracing::field::Empty,
    )
}

fn trace_request(_: &http::Request<kube::client::Body>, _: &tracing::Span) {
    tracing::debug!(target: "kube_client::client", "requesting");
}

fn trace_response(
    res: &http::Response<hyper::body::Incoming>,
    _: std::time::Duration,
    span: &tracing::Span,
) {
    span.record("http.status_code", res.status().as_u16());
}

fn trace_failure(
    class: tower_http::classify::ServerErrorsFailureClass,
    _: std::time::Duration,
    span: &tracing::Span,
) {
    use tower_http::classify::ServerErrorsFailureClass;
    match class {
        ServerErrorsFailureClass::StatusCode(status) => {
            span.record("http.status_code", status.as_u16());
            tracing::error!(target: "kube_client::client", "failed with status {status}");
        }
        ServerErrorsFailureClass::Error(err) => {
            tracing::error!(target: "kube_client::client", "failed with error {err}");
        }
    }
}

/// webpki's verifier over the configured anchors, plus Go's rule that a presented leaf that
/// is itself an anchor is trusted (see the module docs).
#[derive(Debug)]
pub struct AnchorVerifier {
    inner: Arc<WebPkiServerVerifier>,
    /// The kubeconfig's CA certificates, DER, compared byte for byte with the leaf.
    anchors: Vec<CertificateDer<'static>>,
    /// The provider's signature algorithms, to check a CA:TRUE leaf's signature by an anchor.
    algorithms: &'static [&'static dyn rustls::pki_types::SignatureVerificationAlgorithm],
}

impl AnchorVerifier {
    /// `roots`: DER certificates (kube's `Config::root_cert`).
    pub fn new(
        roots: &[Vec<u8>],
        provider: Arc<rustls::crypto::CryptoProvider>,
    ) -> Result<AnchorVerifier, Error> {
        let mut store = rustls::RootCertStore::empty();
        let anchors: Vec<CertificateDer<'static>> = roots
            .iter()
            .map(|der| CertificateDer::from(der.clone()))
            .collect();
        for der in &anchors {
            store.add(der.clone()).map_err(Error::InvalidCa)?;
        }
        let algorithms = provider.signature_verification_algorithms.all;
        let inner = WebPkiServerVerifier::builder_with_provider(Arc::new(store), provider)
            .build()
            .map_err(Error::UnusableCa)?;
        Ok(AnchorVerifier {
            inner,
            anchors,
            algorithms,
        })
    }

    /// Whether one of the anchors signed `leaf` directly: its subject is the leaf's issuer
    /// and its key verifies the leaf's signature. For a `CA:TRUE` leaf, which webpki refuses
    /// before it looks for an issuer and Go accepts like any other.
    fn anchor_signed(&self, leaf: &CertificateDer<'_>) -> bool {
        let Some(leaf) = parts(leaf.as_ref()) else {
            return false;
        };
        self.anchors.iter().any(|anchor| {
            let (Some(a), Ok(key)) = (
                parts(anchor.as_ref()),
                webpki::EndEntityCert::try_from(anchor),
            ) else {
                return false;
            };
            a.subject == leaf.issuer
                && self
                    .algorithms
                    .iter()
                    .filter(|alg| alg.signature_alg_id().as_ref() == leaf.signature_alg)
                    .any(|alg| key.verify_signature(*alg, leaf.tbs, leaf.signature).is_ok())
        })
    }
}

impl ServerCertVerifier for AnchorVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let refused = match self.inner.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        ) {
            Ok(v) => return Ok(v),
            Err(e) => e,
        };
        let is_anchor = self
            .anchors
            .iter()
            .any(|a| a.as_ref() == end_entity.as_ref());
        let ca_used_as_end_entity = matches!(&refused,
            rustls::Error::InvalidCertificate(CertificateError::Other(o))
                if format!("{o:?}").contains("CaUsedAsEndEntity"));
        let signed_by_anchor = ca_used_as_end_entity && self.anchor_signed(end_entity);
        if !is_anchor && !signed_by_anchor {
            return Err(refused);
        }
        verify_anchor_leaf(end_entity, server_name, now)?;
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// The checks Go still makes on a leaf that is itself a trust anchor: validity dates and the
/// server's name (no chain, so no issuer signature).
fn verify_anchor_leaf(
    leaf: &CertificateDer<'_>,
    server_name: &ServerName<'_>,
    now: UnixTime,
) -> Result<(), rustls::Error> {
    let (not_before, not_after) = validity(leaf.as_ref()).ok_or(CertificateError::BadEncoding)?;
    let now = i64::try_from(now.as_secs()).unwrap_or(i64::MAX);
    if now < not_before {
        return Err(CertificateError::NotValidYet.into());
    }
    if now > not_after {
        return Err(CertificateError::Expired.into());
    }
    let cert = webpki::EndEntityCert::try_from(leaf).map_err(|_| CertificateError::BadEncoding)?;
    cert.verify_is_valid_for_subject_name(server_name)
        .map_err(|e| match e {
            webpki::Error::CertNotValidForName(c) => CertificateError::NotValidForNameContext {
                expected: c.expected,
                presented: c.presented,
            },
            _ => CertificateError::NotValidForName,
        })
        .map_err(rustls::Error::from)
}

/// The pieces of a DER certificate that verification by hand needs (RFC 5280 §4.1).
struct Parts<'a> {
    /// `tbsCertificate`, header included: what the signature covers.
    tbs: &'a [u8],
    /// The contents of `signatureAlgorithm` (an AlgorithmIdentifier without its header).
    signature_alg: &'a [u8],
    signature: &'a [u8],
    /// `issuer` and `subject`, headers included (compared byte for byte, as Go does).
    issuer: &'a [u8],
    subject: &'a [u8],
    /// The contents of `validity`.
    validity: &'a [u8],
}

/// The element [`der::next`] read from `input`, header included, given what it left (`rest`).
fn consumed<'a>(input: &'a [u8], rest: &[u8]) -> &'a [u8] {
    &input[..input.len() - rest.len()]
}

fn parts(der: &[u8]) -> Option<Parts<'_>> {
    const SEQUENCE: u8 = 0x30;
    const BIT_STRING: u8 = 0x03;
    let (_, cert, _) = der::next(der).filter(|e| e.0 == SEQUENCE)?;
    let (tag, tbs_contents, rest) = der::next(cert)?;
    let tbs = consumed(cert, rest);
    let (alg_tag, signature_alg, rest) = der::next(rest)?;
    let (sig_tag, bits, _) = der::next(rest)?;
    if tag != SEQUENCE || alg_tag != SEQUENCE || sig_tag != BIT_STRING {
        return None;
    }
    // A signature is a whole number of bytes: no unused bits.
    let signature = bits.strip_prefix(&[0])?;
    // [0] version (optional), serialNumber, signature, issuer, validity, subject.
    let (tag, _, rest) = der::next(tbs_contents)?;
    let mut fields = if tag == 0xa0 {
        der::next(rest)?.2
    } else {
        rest
    };
    fields = der::next(fields)?.2;
    let (_, _, after_issuer) = der::next(fields)?;
    let issuer = consumed(fields, after_issuer);
    let (tag, validity, rest) = der::next(after_issuer)?;
    let (_, _, after_subject) = der::next(rest)?;
    let subject = consumed(rest, after_subject);
    if tag != SEQUENCE {
        return None;
    }
    Some(Parts {
        tbs,
        signature_alg,
        signature,
        issuer,
        subject,
        validity,
    })
}

/// A certificate's `notBefore` and `notAfter` as Unix seconds (RFC 5280 §4.1.2.5).
fn validity(der: &[u8]) -> Option<(i64, i64)> {
    let validity = parts(der)?.validity;
    let (t1, before, rest) = der::next(validity)?;
    let (t2, after, _) = der::next(rest)?;
    Some((asn1_time(t1, before)?, asn1_time(t2, after)?))
}

/// UTCTime (`YYMMDDHHMMSSZ`, years 1950–2049) or GeneralizedTime (`YYYYMMDDHHMMSSZ`).
fn asn1_time(tag: u8, s: &[u8]) -> Option<i64> {
    let s = std::str::from_utf8(s).ok()?.strip_suffix('Z')?;
    let (year, rest) = match (tag, s.len()) {
        (0x17, 12) => {
            let yy: i64 = s[..2].parse().ok()?;
            (if yy < 50 { 2000 + yy } else { 1900 + yy }, &s[2..])
        }
        (0x18, 14) => (s[..4].parse().ok()?, &s[4..]),
        _ => return None,
    };
    if !rest.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let field = |i: usize| rest[i..i + 2].parse::<i64>().ok();
    let (month, day, h, m, sec) = (field(0)?, field(2)?, field(4)?, field(6)?, field(8)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || h > 23 || m > 59 || sec > 60 {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86_400 + h * 3600 + m * 60 + sec)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Go's `x509.HostnameError` text (`crypto/x509/verify.go`): `certificate is valid for a,
/// b, not c`, listing the certificate's IP addresses for an IP and its DNS names for a
/// name. `presented`: webpki's names, `DnsName("a")` / `IpAddress(1.2.3.4)`.
fn not_valid_for(expected: &ServerName<'_>, presented: &[String]) -> String {
    let ip = matches!(expected, ServerName::IpAddress(_));
    let host = match expected {
        ServerName::DnsName(d) => d.as_ref().to_owned(),
        ServerName::IpAddress(a) => std::net::IpAddr::from(*a).to_string(),
        other => format!("{other:?}"),
    };
    let prefix = if ip { "IpAddress(" } else { "DnsName(\"" };
    let names: Vec<&str> = presented
        .iter()
        .filter_map(|p| p.strip_prefix(prefix))
        .map(|p| p.trim_end_matches(')').trim_end_matches('"'))
        .collect();
    match (names.is_empty(), ip) {
        (true, true) => {
            format!("cannot validate certificate for {host} because it doesn't contain any IP SANs")
        }
        (true, false) => {
            format!("certificate is not valid for any names, but wanted to match {host}")
        }
        (false, _) => format!("certificate is valid for {}, not {host}", names.join(", ")),
    }
}

/// A TLS failure found in an error's chain, worded as Go's TLS stack words it for kubectl:
/// a refused certificate (`tls: failed to verify certificate: x509: …`) or a handshake
/// that did not complete ([`HandshakeTimeout`]).
///
/// This is how to recognise a TLS verification failure in what kube's client returns: the
/// rustls error sits inside an `io::Error` from the connector, which `source()` skips over,
/// so the chain is searched through `io::Error::get_ref` too.
pub fn tls_failure(err: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut next = Some(err);
    while let Some(e) = next {
        if let Some(m) = rustls_failure(e) {
            return Some(m);
        }
        if let Some(inner) = e
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
        {
            if let Some(m) = tls_failure(inner) {
                return Some(m);
            }
        }
        next = e.source();
    }
    None
}

fn rustls_failure(e: &(dyn std::error::Error + 'static)) -> Option<String> {
    if let Some(timeout) = e.downcast_ref::<HandshakeTimeout>() {
        return Some(timeout.to_string());
    }
    let rustls::Error::InvalidCertificate(c) = e.downcast_ref::<rustls::Error>()? else {
        return None;
    };
    let x509 = match c {
        CertificateError::UnknownIssuer => "certificate signed by unknown authority".to_owned(),
        // An issuer of the right name whose key did not sign it: Go says "unknown
        // authority (possibly because of … verification error …)".
        CertificateError::BadSignature => {
            "certificate signed by unknown authority (possibly because of a signature \
             verification error while trying to verify a candidate authority certificate)"
                .to_owned()
        }
        CertificateError::NotValidForNameContext {
            expected,
            presented,
        } => not_valid_for(expected, presented),
        CertificateError::NotValidForName => {
            "certificate is not valid for the server's name (check the server URL or \
             tls-server-name)"
                .to_owned()
        }
        CertificateError::Expired
        | CertificateError::ExpiredContext { .. }
        | CertificateError::NotValidYet
        | CertificateError::NotValidYetContext { .. } => {
            "certificate has expired or is not yet valid".to_owned()
        }
        // webpki refuses a CA:TRUE end entity before it looks for an issuer; when that
        // certificate is not itself an anchor (AnchorVerifier's rule), it did not come from
        // the configured CA in every case kwatch accepts.
        CertificateError::Other(o) if format!("{o:?}").contains("CaUsedAsEndEntity") => {
            "certificate signed by unknown authority (the server's CA:TRUE certificate is not \
             the configured certificate-authority)"
                .to_owned()
        }
        other => format!("{other:?}"),
    };
    Some(format!("tls: failed to verify certificate: x509: {x509}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_from_civil_matches_known_dates() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(days_from_civil(2026, 11, 22), 20_779);
    }

    #[test]
    fn asn1_times() {
        assert_eq!(asn1_time(0x17, b"700101000000Z"), Some(0));
        assert_eq!(asn1_time(0x17, b"491231235959Z"), Some(2_524_607_999));
        assert_eq!(
            asn1_time(0x18, b"20000301000001Z"),
            Some(11_017 * 86_400 + 1)
        );
        assert_eq!(asn1_time(0x17, b"7001010000Z"), None);
        assert_eq!(asn1_time(0x18, b"2000130100000Z"), None);
        assert_eq!(asn1_time(0x17, b"700101000000"), None);
    }

    #[test]
    fn reads_the_validity_of_a_generated_certificate() {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
        params.not_before = rcgen::date_time_ymd(2001, 2, 3);
        params.not_after = rcgen::date_time_ymd(2061, 4, 5);
        let cert = params.self_signed(&key).unwrap();
        let (nb, na) = validity(cert.der()).unwrap();
        assert_eq!(nb, days_from_civil(2001, 2, 3) * 86_400);
        assert_eq!(na, days_from_civil(2061, 4, 5) * 86_400);
        assert_eq!(validity(&cert.der()[..40]), None);
    }

    fn self_signed_ca(not_after_year: i32) -> rcgen::Certificate {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params.not_before = rcgen::date_time_ymd(2000, 1, 1);
        params.not_after = rcgen::date_time_ymd(not_after_year, 1, 1);
        params.self_signed(&key).unwrap()
    }

    fn verifier(roots: &[&rcgen::Certificate]) -> AnchorVerifier {
        let roots: Vec<Vec<u8>> = roots.iter().map(|c| c.der().to_vec()).collect();
        AnchorVerifier::new(&roots, Arc::new(rustls::crypto::ring::default_provider())).unwrap()
    }

    fn verify(
        v: &AnchorVerifier,
        leaf: &rcgen::Certificate,
        name: &str,
    ) -> Result<(), rustls::Error> {
        let name = ServerName::try_from(name.to_owned()).unwrap();
        v.verify_server_cert(leaf.der(), &[], &name, &[], UnixTime::now())
            .map(|_| ())
    }

    /// Why `v` refuses `leaf` for `name`: rustls' error as its `Debug` writes it (which
    /// names webpki's reason).
    fn refusal(v: &AnchorVerifier, leaf: &rcgen::Certificate, name: &str) -> String {
        format!("{:?}", verify(v, leaf, name).unwrap_err())
    }

    #[test]
    fn a_self_signed_ca_leaf_that_is_an_anchor_is_accepted_for_its_names_only() {
        let cert = self_signed_ca(2090);
        let v = verifier(&[&cert]);
        assert_eq!(verify(&v, &cert, "localhost"), Ok(()));
        let wrong = refusal(&v, &cert, "example.com");
        assert!(wrong.contains("NotValidForName"), "{wrong}");
        let ip = refusal(&v, &cert, "127.0.0.1");
        assert!(ip.contains("NotValidForName"), "{ip}");
    }

    /// A CA:TRUE serving certificate for localhost signed by `issuer`.
    fn ca_leaf_signed_by(issuer: &rcgen::Issuer<'_, rcgen::KeyPair>) -> rcgen::Certificate {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params.signed_by(&key, issuer).unwrap()
    }

    fn ca(name: &str) -> (rcgen::Certificate, rcgen::Issuer<'static, rcgen::KeyPair>) {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, name);
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let cert = params.self_signed(&key).unwrap();
        (cert, rcgen::Issuer::new(params, key))
    }

    #[test]
    fn a_ca_true_leaf_signed_by_an_anchor_is_accepted_as_go_does() {
        let (root, issuer) = ca("cluster-ca");
        let leaf = ca_leaf_signed_by(&issuer);
        let v = verifier(&[&root]);
        assert_eq!(verify(&v, &leaf, "localhost"), Ok(()));
        let wrong = refusal(&v, &leaf, "example.com");
        assert!(wrong.contains("NotValidForName"), "{wrong}");
        // Same issuer name, another key: the signature does not verify.
        let (_, impostor) = ca("cluster-ca");
        let forged = ca_leaf_signed_by(&impostor);
        let e = refusal(&v, &forged, "localhost");
        assert!(e.contains("CaUsedAsEndEntity"), "{e}");
        // Another CA altogether.
        let (other_root, _) = ca("other-ca");
        let e = refusal(&verifier(&[&other_root]), &leaf, "localhost");
        assert!(e.contains("CaUsedAsEndEntity"), "{e}");
    }

    #[test]
    fn an_expired_anchor_leaf_is_refused() {
        let cert = self_signed_ca(2001);
        let v = verifier(&[&cert]);
        let e = refusal(&v, &cert, "localhost");
        assert!(e.contains("Expired"), "{e}");
    }

    #[test]
    fn a_leaf_that_is_not_an_anchor_is_refused() {
        let served = self_signed_ca(2090);
        let other = self_signed_ca(2090);
        let v = verifier(&[&other]);
        // Same subject, other key: webpki finds the anchor by name and still refuses.
        assert!(verify(&v, &served, "localhost").is_err());
    }

    #[test]
    fn a_wrong_name_lists_the_names_as_go_does() {
        let dns = ServerName::try_from("wrong.example").unwrap();
        let ip = ServerName::try_from("10.0.0.1").unwrap();
        let presented = [
            "DnsName(\"localhost\")".to_owned(),
            "IpAddress(127.0.0.1)".to_owned(),
            "DnsName(\"kwatch-sim.test\")".to_owned(),
        ];
        assert_eq!(
            not_valid_for(&dns, &presented),
            "certificate is valid for localhost, kwatch-sim.test, not wrong.example"
        );
        assert_eq!(
            not_valid_for(&ip, &presented),
            "certificate is valid for 127.0.0.1, not 10.0.0.1"
        );
        assert_eq!(
            not_valid_for(&ip, &presented[..1]),
            "cannot validate certificate for 10.0.0.1 because it doesn't contain any IP SANs"
        );
        assert_eq!(
            not_valid_for(&dns, &[]),
            "certificate is not valid for any names, but wanted to match wrong.example"
        );
        // The anchor-leaf path (a served self-signed CA) names them too.
        let cert = self_signed_ca(2090);
        let e = refusal(&verifier(&[&cert]), &cert, "example.com");
        assert!(
            e.contains("NotValidForNameContext") && e.contains("localhost"),
            "{e}"
        );
    }

    /// hyper-util's connector, refused: its `tcp connect error` becomes Go's words.
    #[tokio::test]
    async fn a_refused_connect_is_worded_as_gos_dial() {
        use tower::Service as _;
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let server = format!("127.0.0.1:{port}");
        let mut http = HttpConnector::new();
        let uri: http::Uri = format!("http://{server}").parse().unwrap();
        let e = http.call(uri).await.err().unwrap();
        let e = dial_error(&server, e);
        let dial = e.downcast_ref::<DialError>().unwrap();
        assert_eq!(dial.kind(), std::io::ErrorKind::ConnectionRefused);
        assert_eq!(
            dial.to_string(),
            format!("dial tcp {server}: connect: connection refused")
        );
    }

    #[test]
    fn tls_failures_are_found_inside_io_errors() {
        let rustls_err = rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer);
        let io = std::io::Error::other(rustls_err);
        assert_eq!(
            tls_failure(&io).as_deref(),
            Some(
                "tls: failed to verify certificate: x509: certificate signed by unknown authority"
            )
        );
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert_eq!(tls_failure(&refused), None);
    }
}
