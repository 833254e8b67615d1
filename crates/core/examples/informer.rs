//! A client-go informer in Rust, against a cluster: the reflector, queue and handler
//! calls of a given client-go release (DeltaFIFO up to 0.32, RealFIFO from 0.33, batch
//! pops from 0.35, atomic relists from 0.36), which kube-runtime's watcher does not
//! reproduce. Prints one line per call of the event handler, as client-go's shared
//! informer makes them:
//!
//! ```text
//! OnAdd default/web-1 812 initial      the initial list (isInInitialList)
//! OnUpdate default/web-1 812->815      old and new resourceVersion
//! OnDelete default/web-1 820           the last state; `final-state-unknown` after a relist
//! ```
//!
//! ```text
//! informer RESOURCE [-n NAMESPACE] [--client-go RELEASE] [--calls N] [--timeout SECONDS]
//! ```
//!
//! The kubeconfig is found as kubectl finds it (`KUBECONFIG`, else `~/.kube/config`), its
//! current context used. RESOURCE is what kubectl takes (`pods`, `deploy`,
//! `widgets.example.com`), watched in all namespaces unless `-n` names one. The release
//! is `--client-go`'s (`0.35`, `v0.36.1`, or Kubernetes' `1.35`), else the server's
//! (`/version`). It ends after `--calls N` handler calls (exit 0) or after `--timeout`
//! (exit 0, or 1 when `--calls` had not been reached); without either it runs until
//! killed. For example, against the simulated cluster:
//!
//! ```text
//! kwatch sim --write-kubeconfig /tmp/sim.yaml &
//! KUBECONFIG=/tmp/sim.yaml cargo run -p kwatch-core --example informer -- pods --client-go 0.36
//! ```

use std::io::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use kwatch_core::cache::handlers::HandlerCall;
use kwatch_core::cache::release::Release;
use kwatch_core::client::discovery::{Discovery, Server};
use kwatch_core::client::source::{get_document, KubeSource};
use kwatch_core::client::target::Resolver;
use kwatch_core::informer::builder::SharedInformer;

const USAGE: &str = "usage: informer RESOURCE [-n NAMESPACE] [--client-go RELEASE] \
                     [--calls N] [--timeout SECONDS]";

/// The command line.
struct Args {
    resource: String,
    namespace: Option<String>,
    release: Option<Release>,
    calls: Option<u64>,
    timeout: Option<Duration>,
}

fn parse_args(mut words: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut args = Args {
        resource: String::new(),
        namespace: None,
        release: None,
        calls: None,
        timeout: None,
    };
    while let Some(w) = words.next() {
        let mut value = || words.next().ok_or(format!("{w} needs a value; {USAGE}"));
        match w.as_str() {
            "-n" | "--namespace" => args.namespace = Some(value()?),
            "--client-go" => {
                args.release = Some(Release::parse(&value()?).map_err(|e| e.to_string())?)
            }
            "--calls" => args.calls = Some(value()?.parse().map_err(|e| format!("--calls: {e}"))?),
            "--timeout" => {
                let secs: f64 = value()?.parse().map_err(|e| format!("--timeout: {e}"))?;
                let t = Duration::try_from_secs_f64(secs).map_err(|e| format!("--timeout: {e}"))?;
                args.timeout = Some(t);
            }
            _ if w.starts_with('-') || !args.resource.is_empty() => {
                return Err(format!("unexpected {w:?}; {USAGE}"))
            }
            _ => args.resource = w,
        }
    }
    if args.resource.is_empty() {
        return Err(USAGE.to_owned());
    }
    Ok(args)
}

/// The release of the client-go built with the server's Kubernetes (`/version`), else
/// the oldest.
async fn server_release(client: &kube::Client) -> Release {
    let info = get_document(client, "/version", "application/json", None)
        .await
        .ok()
        .and_then(|b| {
            serde_json::from_slice::<k8s_openapi::apimachinery::pkg::version::Info>(&b).ok()
        });
    info.and_then(|i| Release::for_server(&i.major, &i.minor))
        .unwrap_or(Release::FALLBACK)
}

/// One line per handler call; a closed stdout ends the program quietly.
fn print_call(key: &str, call: &HandlerCall) {
    let rv = |o: Option<&kwatch_core::cache::object::ObjectRef>| {
        o.map_or("-".to_owned(), |o| o.resource_version().to_owned())
    };
    let line = match call {
        HandlerCall::OnAdd {
            obj,
            is_in_initial_list,
        } => {
            let initial = if *is_in_initial_list { " initial" } else { "" };
            format!("OnAdd {key} {}{initial}", obj.resource_version())
        }
        HandlerCall::OnUpdate { old, new } => {
            format!(
                "OnUpdate {key} {}->{}",
                old.resource_version(),
                new.resource_version()
            )
        }
        HandlerCall::OnDelete { obj } => {
            let unknown = if obj.is_tombstone() {
                " final-state-unknown"
            } else {
                ""
            };
            format!("OnDelete {key} {}{unknown}", rv(obj.object()))
        }
    };
    if writeln!(std::io::stdout(), "{line}").is_err() {
        std::process::exit(0);
    }
}

async fn run(args: Args) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let mut config = kube::Config::infer().await?;
    // Watches last minutes; the reflector tells a stalled one from a quiet one.
    config.read_timeout = None;
    // kwatch-core's client: kube's stack with kubectl's certificate rules.
    let client = kwatch_core::client::connect::client(&config)?;
    let release = match args.release {
        Some(r) => r,
        None => server_release(&client).await,
    };
    let server = Server {
        client: client.clone(),
        request_timeout: None,
    };
    let target = Resolver::new(Discovery::new(server, None))
        .resolve(&args.resource)
        .await?;
    let path = target.collection_path(args.namespace.as_deref());
    let source = KubeSource::new(client, path.clone(), None, None, None)
        .with_type(&target.resource.kind, &target.resource.api_version);
    eprintln!(
        "informer: client-go {release}'s informer ({}) on {path}",
        release.queue().name()
    );
    let mut informer = SharedInformer::new(target, release).add_event_handler(print_call);
    if let Some(n) = args.calls {
        informer = informer.max_events(n);
    }
    let mut running = informer.run(source);
    let Some(t) = args.timeout else {
        running.wait().await?;
        return Ok(ExitCode::SUCCESS);
    };
    match tokio::time::timeout(t, running.wait()).await {
        Ok(ended) => ended.map(|()| ExitCode::SUCCESS).map_err(Into::into),
        Err(_) if args.calls.is_some() => {
            eprintln!("informer: fewer handler calls than --calls within {t:?}");
            Ok(ExitCode::FAILURE)
        }
        Err(_) => Ok(ExitCode::SUCCESS),
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("informer: {e}");
            return ExitCode::from(2);
        }
    };
    match run(args).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("informer: {e}");
            ExitCode::FAILURE
        }
    }
}
