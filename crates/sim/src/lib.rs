//! The simulated Kubernetes API server (`kwatch sim`, `kwatch --sim`).
//!
//! It speaks kube-apiserver v1.32's wire protocol closely enough for the real kubectl and for
//! kube-rs: HTTPS with a generated CA and bearer-token auth, discovery, LIST/WATCH with the
//! resourceVersion semantics of the watch cache and etcd, mutations, Tables for kubectl, and
//! faults, churn and a chaos scenario to show how a reflector copes. Of the watch client it
//! uses kwatch-core's public API only, for what must be the same on both sides: the
//! protobuf tables, the printers' cells of its Tables, DER reading, selectors; never the
//! reflector, the queues or the HTTP client it is tested against.
//!
//! ```text
//! SimServer::start ─ tls (certs, kubeconfig) ─ every connection through freeze and link
//!        │
//!        └─ axum ─ http::dispatch ─ auth ─ /_sim/… → control (faults, state), bend
//!                                  ├─ fault injection (fail next N)
//!                                  ├─ discovery / openapi
//!                                  └─ resources: list · get · create · update · patch · delete
//!                                                watch (watch.rs) ← storage (revisions, history)
//!                                                JSON, protobuf (wire.rs), Tables, gzip
//! seed (pods, templates) ─ the storage at start
//! churn / chaos tasks ─ write the storage and flip fault switches
//! controllers (opt-in) ─ deployment, replicaset, job, garbage collector, a kubelet:
//!                         react to the storage as kube-controller-manager does
//! ```

#![cfg(feature = "server")]

mod auth;
mod bench;
mod bend;
mod chaos;
mod churn;
mod control;
mod controllers;
mod discovery;
pub mod fleet;
mod freeze;
mod gzip;
mod http;
mod link;
mod openapi;
mod partial;
mod pods;
pub mod protobuf_encode;
mod request;
mod resources;
mod seed;
mod status;
mod storage;
mod table;
mod templates;
mod tls;
mod watch;
mod wire;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use rand::Rng;

pub use auth::{LISTER, NOBODY, VIEWER, WATCHER};
pub use bend::Bend;
pub use pods::PodSize;
pub use tls::CertShape;

/// What the simulated cluster does on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scenario {
    /// Churn only.
    Steady,
    /// Churn plus seeded random faults (dropped watches, compactions, 429/500/503, stalls, …).
    Chaos,
    /// No churn, no faults.
    Idle,
}

/// Everything the simulated cluster needs to start.
#[derive(Debug, Clone)]
pub struct SimOptions {
    /// Port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    pub write_kubeconfig: Option<PathBuf>,
    /// Pods preloaded at start.
    pub objects: usize,
    /// Churn changes per second (ignored by the idle scenario until set via the control API).
    pub churn: f64,
    pub seed: u64,
    pub scenario: Scenario,
    pub insecure_http: bool,
    /// Changes kept in the watch history before the oldest are compacted.
    pub history: usize,
    /// Revision 1 stays in reach (`--uncompacted`, [`storage::Store::uncompact`]).
    pub uncompacted: bool,
    /// Period of watch bookmarks (the real server's is about 60 s).
    pub bookmark_interval: Duration,
    /// Period of etcd's progress notifications, which bring every watch cache to the
    /// current revision (`--progress-notify-interval`; etcd's default is 10 minutes).
    pub progress_notify: Duration,
    /// Log the chaos scenario's faults to stderr (`kwatch sim` does; `--sim` does not).
    pub log_faults: bool,
    /// Size of the preloaded pods (the benchmark's variants).
    pub pod_size: PodSize,
    /// Serve no aggregated discovery (`--legacy-discovery`).
    pub legacy_discovery: bool,
    /// The serving certificate's shape (`--cert-shape`).
    pub cert_shape: CertShape,
    /// The `major` and `minor` `/version` reports (`--server-version`; `None`: the captured
    /// v1.32.13's).
    pub server_version: Option<(String, String)>,
    /// Run the controllers (`--controllers`; `POST /_sim/controllers` switches them later).
    pub controllers: bool,
    /// The ways the protocol is bent from the start (`--bend`; `POST /_sim/bend` later).
    pub bend: Vec<Bend>,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            port: 0,
            write_kubeconfig: None,
            objects: 20,
            churn: 2.0,
            seed: 1,
            scenario: Scenario::Steady,
            insecure_http: false,
            history: 10_000,
            uncompacted: false,
            bookmark_interval: Duration::from_secs(2),
            progress_notify: PROGRESS_NOTIFY,
            log_faults: false,
            pod_size: PodSize::Default,
            legacy_discovery: false,
            cert_shape: CertShape::Ca,
            server_version: None,
            controllers: false,
            bend: Vec::new(),
        }
    }
}

/// State shared by every request handler and background task.
#[derive(Debug)]
pub(crate) struct App {
    pub cluster: storage::Cluster,
    pub faults: control::Faults,
    pub token: String,
    /// Whether requests must carry the token (not with `--insecure-http`: kubectl sends
    /// tokens only over TLS).
    pub auth: bool,
    pub port: u16,
    pub bookmark_interval: Duration,
    /// How long a list at a future resourceVersion waits before 504 (the real server: 3 s).
    pub too_large_wait: Duration,
    /// The state a `restart` with `restore` goes back to (taken at start and by `backup`).
    pub backup: std::sync::Mutex<Option<storage::Store>>,
    /// Restarts asked for, served by the task that owns the listener.
    pub restarts: tokio::sync::mpsc::UnboundedSender<Restart>,
    pub discovery: discovery::Served,
    pub requests: control::RequestLog,
    pub controllers: controllers::Switch,
}

/// The server going away and coming back (see `POST /_sim/restart`).
#[derive(Debug)]
pub(crate) struct Restart {
    down: Duration,
    restore: bool,
}

impl App {
    /// Remembers the current state for a restart with restore; returns its revision.
    pub fn backup(&self) -> u64 {
        let snapshot = self.cluster.read().clone();
        let rev = snapshot.rev();
        *self.backup.lock().unwrap_or_else(|e| e.into_inner()) = Some(snapshot);
        rev
    }

    /// Asks the serving task to go away for `down` and come back.
    pub fn restart(&self, down: Duration, restore: bool) {
        let _ = self.restarts.send(Restart { down, restore });
    }
}

/// The listener currently serving, replaced by each restart.
struct Serving {
    handle: axum_server::Handle<SocketAddr>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

fn serve(
    listener: std::net::TcpListener,
    router: &axum::Router,
    tls: Option<&axum_server::tls_rustls::RustlsConfig>,
    faults: &control::Faults,
) -> std::io::Result<Serving> {
    let handle = axum_server::Handle::new();
    let service = router.clone().into_make_service();
    // TCP_NODELAY, as Go's net/http (and so kube-apiserver) sets it: a response's head and
    // body go out at once instead of waiting for the client's delayed ACK (~40 ms). Every
    // TCP stream can be frozen (`POST /_sim/freeze`) and paced (`POST /_sim/slow-link`), below
    // TLS and HTTP/2.
    let tcp = freeze::FreezeAcceptor(faults.freeze.clone(), faults.link.clone());
    let srv = axum_server::from_tcp(listener)?.handle(handle.clone());
    let task = match tls {
        None => tokio::spawn(srv.acceptor(tcp).serve(service)),
        Some(config) => {
            let acceptor =
                axum_server::tls_rustls::RustlsAcceptor::new(config.clone()).acceptor(tcp);
            let acceptor = tls::PeerCertAcceptor(acceptor);
            tokio::spawn(srv.acceptor(acceptor).serve(service))
        }
    };
    Ok(Serving { handle, task })
}

/// Serves restarts: cut every connection and close the port; wait; restore the backup if
/// asked; empty the watch cache (as a restarted kube-apiserver's starts at the current
/// revision, so older watches get 410); listen on the same port again. Churn pauses
/// while the server is away.
async fn supervise(
    app: Arc<App>,
    router: axum::Router,
    tls: Option<axum_server::tls_rustls::RustlsConfig>,
    serving: Arc<std::sync::Mutex<Option<Serving>>>,
    mut restarts: tokio::sync::mpsc::UnboundedReceiver<Restart>,
) {
    while let Some(r) = restarts.recv().await {
        let old = serving.lock().unwrap_or_else(|e| e.into_inner()).take();
        app.faults.drop_watches();
        if let Some(old) = old {
            old.handle.shutdown();
            let _ = tokio::time::timeout(Duration::from_secs(2), old.task).await;
        }
        let rate = app.faults.churn_rate.send_replace(0.0);
        tokio::time::sleep(r.down).await;
        let backup = if r.restore {
            app.backup.lock().unwrap_or_else(|e| e.into_inner()).clone()
        } else {
            None
        };
        app.cluster.write(|s| {
            if let Some(b) = backup {
                *s = b;
            }
            let rev = s.rev();
            s.compact(rev);
            // A restarted API server's watch caches start where it lists them.
            s.cache_caught_up(None);
        });
        app.faults.churn_rate.send_replace(rate);
        // The old socket may take a moment to be released.
        for _ in 0..100 {
            let bound = std::net::TcpListener::bind(("127.0.0.1", app.port)).and_then(|l| {
                l.set_nonblocking(true)?;
                serve(l, &router, tls.as_ref(), &app.faults)
            });
            match bound {
                Ok(s) => {
                    *serving.lock().unwrap_or_else(|e| e.into_inner()) = Some(s);
                    break;
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
    }
}

/// A running simulated cluster.
pub struct SimServer {
    url: String,
    token: String,
    ca_pem: Option<String>,
    /// `None` over plain HTTP.
    certs: Option<Arc<tls::Certs>>,
    serving: Arc<std::sync::Mutex<Option<Serving>>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    app: Arc<App>,
}

impl std::fmt::Debug for SimServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimServer")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

/// A random bearer token: 32 hex digits.
fn bearer_token() -> String {
    let mut rng = rand::rng();
    (0..32)
        .map(|_| format!("{:x}", rng.random_range(0..16u8)))
        .collect()
}

/// The storage at start: `opts`' objects seeded, off the async threads.
/// etcd's default `--experimental-watch-progress-notify-interval`: how often a watch
/// cache of a quiet resource catches up with the current revision at the latest.
pub const PROGRESS_NOTIFY: Duration = Duration::from_secs(600);

/// etcd's progress notifications to kube-apiserver's watch caches (their etcd watches ask
/// for them: `WithProgressNotify`, storage/etcd3/watcher.go): every `period`, each cache
/// reaches the current revision, and the bookmarks of its watches carry it from then on.
async fn progress_notifications(app: Arc<App>, period: Duration) {
    loop {
        tokio::time::sleep(period).await;
        app.cluster.write(|s| s.cache_caught_up(None));
    }
}

async fn seeded(opts: &SimOptions) -> anyhow::Result<storage::Store> {
    let (objects, seed, history) = (opts.objects, opts.seed, opts.history);
    let (pod_size, uncompacted) = (opts.pod_size, opts.uncompacted);
    tokio::task::spawn_blocking(move || -> anyhow::Result<storage::Store> {
        let mut store = storage::Store::new(history);
        seed::seed_cluster_sized(&mut store, objects, seed, pod_size)?;
        if uncompacted {
            store.uncompact();
        }
        Ok(store)
    })
    .await
    .context("seeding task")?
}

impl SimServer {
    /// Seeds the cluster, binds 127.0.0.1 and starts serving (in the current tokio runtime).
    pub async fn start(opts: SimOptions) -> anyhow::Result<SimServer> {
        // Another part of the process may have installed it already: either is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let listener = std::net::TcpListener::bind(("127.0.0.1", opts.port))
            .with_context(|| format!("binding 127.0.0.1:{}", opts.port))?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        let token = bearer_token();
        let store = seeded(&opts).await?;
        let rate = if opts.scenario == Scenario::Idle {
            0.0
        } else {
            opts.churn
        };
        let (restarts, restart_rx) = tokio::sync::mpsc::unbounded_channel();
        let app = Arc::new(App {
            cluster: storage::Cluster::new(store),
            faults: control::Faults::new(rate, opts.scenario == Scenario::Chaos),
            token: token.clone(),
            auth: !opts.insecure_http,
            port,
            bookmark_interval: opts.bookmark_interval,
            too_large_wait: Duration::from_secs(1),
            backup: std::sync::Mutex::new(None),
            restarts,
            discovery: discovery::Served::new(!opts.legacy_discovery, opts.server_version.as_ref()),
            requests: control::RequestLog::new(),
            controllers: controllers::Switch::new(opts.controllers),
        });
        app.backup();
        for b in &opts.bend {
            app.faults.bend(*b, true);
        }
        let router = axum::Router::new()
            .fallback(http::dispatch)
            .layer(axum::middleware::from_fn_with_state(
                app.clone(),
                control::log_request,
            ))
            .with_state(app.clone());
        let (tls, url, certs) = if opts.insecure_http {
            (None, format!("http://127.0.0.1:{port}"), None)
        } else {
            let certs = tls::generate(opts.cert_shape)?;
            let config =
                axum_server::tls_rustls::RustlsConfig::from_config(certs.server_config.clone());
            (
                Some(config),
                format!("https://127.0.0.1:{port}"),
                Some(Arc::new(certs)),
            )
        };
        let ca_pem = certs.as_ref().map(|c| c.ca_pem.clone());
        let serving = Arc::new(std::sync::Mutex::new(Some(serve(
            listener,
            &router,
            tls.as_ref(),
            &app.faults,
        )?)));
        let tasks = vec![
            tokio::spawn(churn::run_churn(app.clone(), opts.seed, opts.objects)),
            tokio::spawn(chaos::run_chaos(app.clone(), opts.seed, opts.log_faults)),
            tokio::spawn(supervise(
                app.clone(),
                router,
                tls,
                serving.clone(),
                restart_rx,
            )),
            tokio::spawn(bench::run_flood(app.clone())),
            tokio::spawn(controllers::run(app.clone())),
            tokio::spawn(progress_notifications(app.clone(), opts.progress_notify)),
        ];
        Ok(SimServer {
            url,
            token,
            ca_pem,
            certs,
            serving,
            tasks,
            app,
        })
    }

    /// `https://127.0.0.1:PORT` (or `http://…` with `insecure_http`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The bearer token the API and control API expect.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The kubeconfig's `certificate-authority-data` (PEM): the CA that signed the serving
    /// certificate, or with another `--cert-shape` the certificate itself (`None` over plain
    /// HTTP).
    pub fn ca_pem(&self) -> Option<&str> {
        self.ca_pem.as_deref()
    }

    /// A kubeconfig for this server (context, cluster and user `kwatch-sim`).
    pub fn kubeconfig_yaml(&self) -> String {
        tls::kubeconfig_yaml(
            &self.url,
            &self.token,
            self.ca_pem(),
            self.certs.as_ref().map(|c| &c.client),
        )
    }

    /// A client certificate and key (PEM) signed by the sim's CA, authenticating as `user`
    /// in `group` (`None` over plain HTTP).
    pub fn client_cert(&self, user: &str, group: Option<&str>) -> Option<(String, String)> {
        let certs = self.certs.as_ref()?;
        certs.client_cert(user, group).ok().map(|p| (p.cert, p.key))
    }

    /// Writes [`SimServer::kubeconfig_yaml`] to `path` with mode 0600.
    pub fn write_kubeconfig(&self, path: &Path) -> anyhow::Result<()> {
        use std::io::Write;
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        let mut f = opts
            .open(path)
            .with_context(|| format!("writing {}", path.display()))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        }
        f.write_all(self.kubeconfig_yaml().as_bytes())?;
        Ok(())
    }

    /// The current revision (what `GET /_sim/state` reports as `revision`).
    pub fn revision(&self) -> u64 {
        self.app.cluster.read().rev()
    }

    /// `GET /_sim/state` without HTTP.
    pub fn state(&self) -> serde_json::Value {
        self.app.cluster.read().state()
    }

    /// `POST /_sim/drop-watches` without HTTP; returns how many watches were open.
    pub fn drop_watches(&self) -> usize {
        self.app.faults.drop_watches()
    }

    /// `POST /_sim/compact` without HTTP (`None`: up to now); returns the compacted revision.
    pub fn compact(&self, upto: Option<u64>) -> u64 {
        self.app.cluster.write(|s| {
            let r = upto.unwrap_or(s.rev());
            s.compact(r);
            s.compacted()
        })
    }

    /// `POST /_sim/fail` without HTTP (any request, any verb).
    pub fn fail_next(&self, code: u16, count: u64, retry_after: u64) {
        self.app.faults.set_failure(code, count, retry_after);
    }

    /// `POST /_sim/churn {"rate": rate}` without HTTP.
    pub fn set_churn(&self, rate: f64) {
        self.app.faults.churn_rate.send_replace(rate.max(0.0));
    }

    /// Stops churn, aborts open watches and shuts the server down (at most ~2 s).
    pub async fn shutdown(self) {
        for t in &self.tasks {
            t.abort();
        }
        self.app.faults.drop_watches();
        let serving = self
            .serving
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(s) = serving {
            s.handle.graceful_shutdown(Some(Duration::from_secs(1)));
            let _ = tokio::time::timeout(Duration::from_secs(2), s.task).await;
        }
    }

    /// `POST /_sim/restart` without HTTP.
    pub fn restart(&self, down: Duration, restore: bool) {
        self.app.restart(down, restore);
    }
}

impl Drop for SimServer {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
        if let Some(s) = self
            .serving
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            s.handle.shutdown();
        }
    }
}

/// Runs the simulated cluster until Ctrl-C or SIGTERM.
pub async fn run(opts: SimOptions) -> anyhow::Result<()> {
    let kubeconfig = opts.write_kubeconfig.clone();
    let summary = format!(
        "scenario {:?}, churn {}/s, {} pods, seed {}, controllers {}",
        opts.scenario,
        opts.churn,
        opts.objects,
        opts.seed,
        if opts.controllers { "on" } else { "off" }
    )
    .to_lowercase();
    let server = SimServer::start(opts).await?;
    eprintln!("kwatch sim: listening on {}", server.url());
    if let Some(path) = &kubeconfig {
        server.write_kubeconfig(path)?;
        eprintln!("kwatch sim: kubeconfig written to {}", path.display());
        eprintln!("kwatch sim: use it with:");
        eprintln!("    export KUBECONFIG={}", path.display());
        eprintln!("    kubectl get pods -A");
        eprintln!("    kwatch pods -A");
    } else {
        eprintln!("kwatch sim: token {}", server.token());
        eprintln!("kwatch sim: pass --write-kubeconfig FILE for a kubeconfig, then:");
        eprintln!("    export KUBECONFIG=FILE; kubectl get pods -A; kwatch pods -A");
    }
    let k = if server.ca_pem().is_some() { "-k " } else { "" };
    eprintln!(
        "kwatch sim: faults: curl {k}-H 'Authorization: Bearer {}' -X POST {}/_sim/drop-watches",
        server.token(),
        server.url()
    );
    eprintln!(
        "kwatch sim: every control endpoint: GET {}/_sim/help",
        server.url()
    );
    eprintln!("kwatch sim: {summary}; Ctrl-C to stop");
    wait_for_signal().await;
    eprintln!("kwatch sim: shutting down");
    server.shutdown().await;
    Ok(())
}

pub(crate) async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
