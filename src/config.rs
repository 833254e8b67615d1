//! The resolved configuration of a watch: the parsed flags plus everything that needs
//! I/O or the environment (kubeconfig, context namespace, terminal, colour).

use std::io::IsTerminal;
use std::time::Duration;

use anyhow::{Context, Result};
use kube::config::{KubeConfigOptions, Kubeconfig};

use crate::cli::{ColorChoice, FifoKind, OutputArgs, StopArgs, WatchArgs};
use crate::output;
use crate::output::diff::DiffMode;
use crate::reflector::{ReflectorConfig, WatchListMode};

/// One cluster to watch: a kubeconfig context, resolved.
#[derive(Debug)]
pub struct Cluster {
    /// The context's name as given with `--context` (None: the current context).
    pub context: Option<String>,
    pub kube: kube::Config,
    /// `None`: all namespaces.
    pub namespace: Option<String>,
    /// This server's directory in the discovery cache (`None`: no cache).
    pub discovery_cache: Option<std::path::PathBuf>,
}

#[derive(Debug)]
pub struct Config {
    /// One per `--context` (at least one).
    pub clusters: Vec<Cluster>,
    pub resources: String,
    pub label_selector: Option<String>,
    /// The user's field selector, plus `metadata.name=NAME` when a name was given.
    pub field_selector: Option<String>,
    pub request_timeout: Option<Duration>,
    pub printer: output::Options,
    pub reflector: ReflectorConfig,
    /// Relists queue `Replaced` (false: `Sync`, client-go's legacy behaviour).
    pub emit_replaced: bool,
    pub fifo: FifoKind,
    /// Wait before each pop (`--pop-delay`).
    pub pop_delay: Option<std::time::Duration>,
    pub stop: StopArgs,
    /// `--record FILE`.
    pub record: Option<std::path::PathBuf>,
    pub stats: bool,
    /// Show loading progress on stderr (it is a terminal, and the format is for people
    /// or stdout is not the terminal).
    pub progress: bool,
}

/// The printer options from the output flags; `multi`/`all_namespaces`/`contexts` are
/// the watch's business and start false.
pub fn printer_options(o: &OutputArgs) -> output::Options {
    let color = match o.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    };
    output::Options {
        format: o.output.clone(),
        color,
        show_managed_fields: o.show_managed_fields,
        label_columns: o.label_columns.clone(),
        show_labels: o.show_labels,
        no_headers: o.no_headers,
        timestamps: o.timestamps,
        diff: if o.diff_all {
            DiffMode::All
        } else if o.diff {
            DiffMode::On
        } else {
            DiffMode::Off
        },
        ..output::Options::default()
    }
}

/// Reads the kubeconfig the way kubectl does: `--kubeconfig`, else `$KUBECONFIG` (several
/// files merged), else `~/.kube/config`.
pub fn load_kubeconfig(path: Option<&std::path::Path>) -> Result<Kubeconfig> {
    match path {
        Some(p) => Kubeconfig::read_from(p)
            .with_context(|| format!("cannot load kubeconfig {}", p.display())),
        None => Kubeconfig::read().context(
            "cannot load a kubeconfig: pass --kubeconfig FILE, set KUBECONFIG, \
             or try the built-in cluster with --sim",
        ),
    }
}

impl Config {
    /// `kubeconfig`: an already loaded kubeconfig (the in-process simulator's, a server
    /// that lives for this run only and so has no discovery cache), or `None` to load the
    /// user's.
    pub async fn resolve(args: WatchArgs, kubeconfig: Option<Kubeconfig>) -> Result<Config> {
        let cache_dir = match &kubeconfig {
            Some(_) => None,
            None => args
                .cluster
                .cache_dir
                .clone()
                .or_else(crate::discovery::default_cache_dir),
        };
        let kc = match kubeconfig {
            Some(kc) => kc,
            None => load_kubeconfig(args.cluster.kubeconfig.as_deref())?,
        };
        let request_timeout = Some(args.cluster.request_timeout).filter(|d| !d.is_zero());
        let contexts: Vec<Option<String>> = match &args.cluster.context {
            Some(list) => list
                .split(',')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(|c| Some(c.to_owned()))
                .collect(),
            None => vec![None],
        };
        let mut clusters = Vec::new();
        for context in contexts {
            let opts = KubeConfigOptions {
                context: context.clone(),
                ..KubeConfigOptions::default()
            };
            let mut kube = kube::Config::from_custom_kubeconfig(kc.clone(), &opts)
                .await
                .with_context(|| match &context {
                    Some(c) => format!("invalid kubeconfig for context {c:?}"),
                    None => "invalid kubeconfig".to_owned(),
                })?;
            if let Some(t) = request_timeout {
                kube.connect_timeout = Some(t);
            }
            // Watches last minutes; a stalled stream is the reflector's business.
            kube.read_timeout = None;
            // 429/503/504 reach the reflector, which backs off as client-go's does and
            // shows it, instead of kube's transparent retries hiding them.
            kube.default_retry = false;
            let namespace = if args.all_namespaces {
                None
            } else {
                Some(
                    args.namespace
                        .clone()
                        .unwrap_or_else(|| kube.default_namespace.clone()),
                )
            };
            if let Some(ns) = namespace.as_deref().filter(|_| args.namespace.is_none()) {
                crate::target::validate_namespace(ns)
                    .map_err(|e| anyhow::anyhow!("the kubeconfig context's namespace: {e}"))?;
            }
            let discovery_cache = cache_dir
                .as_deref()
                .map(|d| crate::discovery::cache_dir(d, &kube.cluster_url.to_string()));
            clusters.push(Cluster {
                context,
                kube,
                namespace,
                discovery_cache,
            });
        }
        if clusters.is_empty() {
            anyhow::bail!("--context: no context named");
        }
        let name = args.name.as_deref().map(crate::target::field_value);
        let field_selector = match (&args.field_selector, &name) {
            (Some(f), Some(n)) => Some(format!("{f},metadata.name={n}")),
            (None, Some(n)) => Some(format!("metadata.name={n}")),
            (f, None) => f.clone(),
        };
        let resources = args.resources.clone().unwrap_or_default();
        let mut printer = printer_options(&args.output);
        // Contexts with different namespaces: say which namespace each row is from.
        let namespaces: std::collections::BTreeSet<_> =
            clusters.iter().map(|c| c.namespace.as_deref()).collect();
        printer.all_namespaces = args.all_namespaces || namespaces.len() > 1;
        printer.multi = resources.contains(',');
        printer.contexts = clusters.len() > 1;
        let people = matches!(printer.format, output::Format::Table | output::Format::Wide);
        let progress =
            std::io::stderr().is_terminal() && (people || !std::io::stdout().is_terminal());
        let reflector = ReflectorConfig {
            page_size: args
                .reflector
                .page_size
                .unwrap_or(crate::reflector::DEFAULT_PAGE_SIZE),
            page_size_explicit: args.reflector.page_size.is_some(),
            resync: args.reflector.resync.filter(|d| !d.is_zero()),
            bookmarks: !args.reflector.no_bookmarks,
            min_watch_timeout_secs: u32::try_from(args.reflector.min_watch_timeout.as_secs())
                .unwrap_or(u32::MAX)
                .max(1),
            watch_list: match args.reflector.watch_list {
                WatchListMode::Auto if args.reflector.page_size.is_some() => WatchListMode::Off,
                mode => mode,
            },
            ..ReflectorConfig::default()
        };
        Ok(Config {
            clusters,
            resources,
            label_selector: args.selector.clone(),
            field_selector,
            request_timeout,
            printer,
            reflector,
            emit_replaced: !args.reflector.legacy_sync,
            fifo: args.reflector.fifo,
            pop_delay: args.reflector.pop_delay.filter(|d| !d.is_zero()),
            stop: args.stop,
            record: args.record.clone(),
            stats: args.stats,
            progress,
        })
    }
}
