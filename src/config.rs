//! The resolved configuration of a watch: the parsed flags plus everything that needs
//! I/O or the environment (kubeconfig, context namespace, terminal, colour).

use std::io::IsTerminal;
use std::time::Duration;

use anyhow::{Context, Result};
use kube::config::{KubeConfigOptions, Kubeconfig};

use crate::cli::{ColorChoice, FifoKind, StopArgs, WatchArgs};
use crate::output;
use crate::reflector::{ReflectorConfig, WatchListMode};

#[derive(Debug)]
pub struct Config {
    pub kube: kube::Config,
    /// `None`: all namespaces.
    pub namespace: Option<String>,
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
    pub stop: StopArgs,
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
    /// `kubeconfig`: an already loaded kubeconfig (the in-process simulator's), or
    /// `None` to load the user's.
    pub async fn resolve(args: WatchArgs, kubeconfig: Option<Kubeconfig>) -> Result<Config> {
        let kc = match kubeconfig {
            Some(kc) => kc,
            None => load_kubeconfig(args.cluster.kubeconfig.as_deref())?,
        };
        let opts = KubeConfigOptions {
            context: args.cluster.context.clone(),
            ..KubeConfigOptions::default()
        };
        let mut kube = kube::Config::from_custom_kubeconfig(kc, &opts)
            .await
            .context("invalid kubeconfig")?;
        let request_timeout = Some(args.cluster.request_timeout).filter(|d| !d.is_zero());
        if let Some(t) = request_timeout {
            kube.connect_timeout = Some(t);
        }
        // Watches last minutes; a stalled stream is the reflector's business.
        kube.read_timeout = None;
        // 429/503/504 reach the reflector, which backs off as client-go's does and shows it,
        // instead of kube's transparent retries hiding them.
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
        let field_selector = match (&args.field_selector, &args.name) {
            (Some(f), Some(n)) => Some(format!("{f},metadata.name={n}")),
            (None, Some(n)) => Some(format!("metadata.name={n}")),
            (f, None) => f.clone(),
        };
        let color = match args.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::io::stdout().is_terminal()
                    && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            }
        };
        let resources = args.resources.clone().unwrap_or_default();
        let printer = output::Options {
            format: args.output,
            color,
            all_namespaces: args.all_namespaces,
            multi: resources.contains(','),
            show_managed_fields: args.show_managed_fields,
        };
        let reflector = ReflectorConfig {
            page_size: args
                .reflector
                .page_size
                .unwrap_or(crate::reflector::DEFAULT_PAGE_SIZE),
            page_size_explicit: args.reflector.page_size.is_some(),
            resync: args.reflector.resync.filter(|d| !d.is_zero()),
            bookmarks: !args.reflector.no_bookmarks,
            watch_list: match args.reflector.watch_list {
                WatchListMode::Auto if args.reflector.page_size.is_some() => WatchListMode::Off,
                mode => mode,
            },
            ..ReflectorConfig::default()
        };
        Ok(Config {
            kube,
            namespace,
            resources,
            label_selector: args.selector.clone(),
            field_selector,
            request_timeout,
            printer,
            reflector,
            emit_replaced: !args.reflector.legacy_sync,
            fifo: args.reflector.fifo,
            stop: args.stop,
        })
    }
}
