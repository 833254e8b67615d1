//! The resolved configuration of a watch: the parsed flags plus everything that needs
//! I/O or the environment (kubeconfig, context namespace, terminal, colour). Each context's
//! kubeconfig entries, with kubectl's flags applied, come from [`crate::app::kubeconfig`];
//! here they become kube's client settings, beside the printer's, the reflector's and the
//! stop conditions.
//!
//! Parsing (src/app/cli.rs) and resolving are two steps: [`Config`] holds the library's own
//! types, never clap's argument structs, so the watch does not depend on how a value was
//! spelt on the command line. The simulator's flags are resolved in
//! [`crate::app::sim`].

use std::io::IsTerminal;
use std::time::Duration;

use anyhow::{Context, Result};
use kube::config::{KubeConfigOptions, Kubeconfig};

use crate::app::cli::{ClusterArgs, ColorChoice, OutputArgs, ReflectorArgs, StopArgs, WatchArgs};
use crate::app::kubeconfig::{effective_kubeconfig, files_readable, load_kubeconfig};
use crate::app::record::Recording;
use crate::cache::reflector::ReflectorConfig;
use crate::cache::release::InformerFlags;
use crate::context::ContextName;
use crate::informer::diff::DiffMode;
use crate::informer::until::Condition;
use crate::output;

/// One cluster to watch: a kubeconfig context, resolved.
#[derive(Debug)]
pub struct Cluster {
    /// The context's name as given with `--context` (None: the current context).
    pub context: Option<ContextName>,
    pub kube: kube::Config,
    /// `None`: all namespaces.
    pub namespace: Option<String>,
    /// This server's directory in the discovery cache (`None`: no cache).
    pub discovery_cache: Option<std::path::PathBuf>,
    /// What the kubeconfig says of this context (its cluster, user, namespace): a change
    /// of it restarts the context of a fleet that follows the kubeconfig. A hash: the
    /// entry holds credentials.
    pub entry: u64,
}

impl Cluster {
    /// The context's name as the fleet's lines and counts name it (empty: the current
    /// context, with one cluster).
    pub fn name(&self) -> ContextName {
        self.context.clone().unwrap_or_else(|| ContextName::new(""))
    }
}

/// Each `--record` resolved: a malformed database URL, or a second database, is bad
/// usage (exit 2).
fn recordings(
    args: &WatchArgs,
    kc: &kube::config::Kubeconfig,
    clusters: &[std::sync::Arc<Cluster>],
) -> Result<Vec<Recording>> {
    let usage = |e: String| anyhow::Error::new(crate::app::exit::Usage(e));
    let mut out = Vec::new();
    for arg in &args.record {
        let target = crate::app::record::target::Target::parse(arg.as_os_str())
            .map_err(|e| usage(format!("--record {e}")))?;
        out.push(recording(target, args, kc, clusters));
    }
    let databases: Vec<String> = out
        .iter()
        .filter(|r| r.target.is_database())
        .map(|r| r.target.to_string())
        .collect();
    if databases.len() > 1 {
        return Err(usage(format!(
            "--record names {} databases ({}): kwatch records into one database at a time \
             (and any number of files)",
            databases.len(),
            databases.join(", ")
        )));
    }
    Ok(out)
}

/// One `--record` target with what its database recorder needs.
fn recording(
    target: crate::app::record::target::Target,
    args: &WatchArgs,
    kc: &kube::config::Kubeconfig,
    clusters: &[std::sync::Arc<Cluster>],
) -> Recording {
    let current = kc.current_context.clone().filter(|c| !c.is_empty());
    let names: Vec<String> = clusters
        .iter()
        .map(|c| match &c.context {
            Some(name) => name.to_string(),
            // The current context's name, else the server's address (--server alone).
            None => current.clone().unwrap_or_else(|| {
                let url = c.kube.cluster_url.to_string();
                url.trim_end_matches('/').to_owned()
            }),
        })
        .collect();
    Recording {
        target,
        buffer: args.record_buffer.0,
        context: names.first().cloned().unwrap_or_default(),
        contexts: names,
    }
}

#[derive(Debug)]
pub struct Config {
    /// One per `--context` whose kubeconfig entry could be used (at least one).
    pub clusters: Vec<std::sync::Arc<Cluster>>,
    /// Where the contexts come from, for a fleet that retries or follows them.
    pub contexts: Contexts,
    /// Several contexts asked: those whose kubeconfig entry cannot be used (a cluster or
    /// user it does not have, an unreadable certificate), with why. One such entry is
    /// that context's trouble, not the fleet's; a lone context's ends the run instead.
    pub left_out: Vec<(ContextName, String)>,
    pub resources: String,
    /// `--every-resource`: every resource that can be listed and watched, besides those named.
    pub every_resource: bool,
    pub label_selector: Option<String>,
    /// The user's field selector, plus `metadata.name=NAME` when a name was given.
    pub field_selector: Option<String>,
    /// The NAME argument (`kwatch pod NAME`, `pod/NAME`): one object, as `kubectl get`.
    pub name: Option<String>,
    pub request_timeout: Option<Duration>,
    pub printer: output::Options,
    pub reflector: ReflectorConfig,
    /// Relists queue `Replaced` (false: `Sync`, client-go's legacy behaviour).
    pub emit_replaced: bool,
    /// `--client-go`, `--fifo`, `--legacy-sync`, `--watch-list`: each cluster's informer
    /// once its server's release is known (`watch.rs`); `reflector.watch_list` is set then.
    pub informer: InformerFlags,
    /// Wait before each pop (`--pop-delay`).
    pub pop_delay: Option<std::time::Duration>,
    /// `--check-consistency`'s period.
    pub check_consistency: Option<Duration>,
    /// `--freshness[=PERIOD]` and `--stale-after`.
    pub freshness: Option<Freshness>,
    /// `--cache-stats`'s period.
    pub cache_stats: Option<Duration>,
    /// `--transform`: what the cache keeps of each object.
    pub transform: Option<crate::cache::transform::Transform>,
    pub stop: Stop,
    /// Each `--record FILE|URL`.
    pub record: Vec<Recording>,
    /// `--timeline OUT.html`.
    pub timeline: Option<std::path::PathBuf>,
    pub stats: bool,
    /// `--metrics ADDR`: where the OpenMetrics endpoint listens.
    pub metrics: Option<crate::app::metrics::ListenAddr>,
    /// Show loading progress on stderr (it is a terminal, and the format is for people
    /// or stdout is not the terminal).
    pub progress: bool,
    /// `--metadata-only`: list and watch PartialObjectMetadata.
    pub metadata_only: bool,
    /// `--wire`: the encoding lists and watches ask for.
    pub wire: crate::client::source::Wire,
    /// `--probe NAMESPACE` and `--probe-interval`.
    pub probe: Option<Probe>,
    /// `--quiet-relists`, `--types`, `--changes`: what is printed.
    pub filter: crate::informer::filter::Filter,
    /// `--live`: the full-screen view (src/app/live.rs); stdout is a terminal.
    pub live: bool,
    /// `--live-history`: versions each row's history keeps.
    pub live_history: usize,
    /// `--follow` (with `--follow-kinds`' changes to the child resources).
    pub follow: Option<crate::informer::follow::KindsSpec>,
    /// `--events`.
    pub events: bool,
}

impl Config {
    /// Whether anything this run does may read an object's `metadata.managedFields`.
    /// When nothing can, every watched resource is read without them
    /// (`KubeSource::drop_managed_fields`: a protobuf body's are stepped over, never
    /// decoded), as client-go users strip them with a `cache.TransformFunc`; the store is
    /// smaller too. The one place this is decided; its invariant: the output is byte for
    /// byte what it is with them, because each printer that writes an object hides them
    /// then (`-o json|yaml|watch-events` cut the member and its comma, which is what an
    /// object read without it holds) and no other part of the run looks at them. Every
    /// reader of managedFields is below; a new one must be added here.
    pub fn reads_managed_fields(&self) -> bool {
        let reaches = |t: &crate::template::Template| t.may_read("metadata", "managedFields");
        let p = &self.printer;
        // Printed with the objects.
        p.show_managed_fields
            // --blame (and its conflicts) names the entry owning each change; --diff keys
            // lists as managedFields name them, and --diff-all shows their changes.
            || p.blame
            || p.diff != DiffMode::Off
            // A template that may select them.
            || match &p.format {
                output::Format::JsonPath(t) => reaches(t),
                output::Format::CustomColumns(cols) => cols.iter().any(|c| reaches(&c.template)),
                _ => false,
            }
            || matches!(&self.stop.until, Some(Condition::JsonPath { template, .. }) if reaches(template))
            // A recording keeps them, for `kwatch replay --blame`.
            || !self.record.is_empty()
            // The timeline page names who made each change, as --blame.
            || self.timeline.is_some()
            // What the store holds, measured: --cache-stats' share of managedFields, the
            // metrics' and --live's bytes of the objects.
            || self.cache_stats.is_some()
            || self.metrics.is_some()
            || self.live
    }

    /// `--follow` or `--events`: the owner graph decides what is printed.
    pub fn graph(&self) -> bool {
        self.follow.is_some() || self.events
    }

    /// Several contexts were asked for (some may be [`Config::left_out`]), or contexts
    /// that may come and go (`--all-contexts`, a pattern): each cluster's records and
    /// failures name their context, and one cluster's trouble is its own.
    pub fn fleet(&self) -> bool {
        self.clusters.len() + self.left_out.len() > 1 || self.contexts.follows()
    }
}

/// `--freshness`: how often the server's resourceVersion is sampled, and the lag that is
/// stale.
#[derive(Debug, Clone, Copy)]
pub struct Freshness {
    pub period: Duration,
    pub stale_after: Duration,
}

/// `--probe`: where the probe's ConfigMap lives and how often it is patched.
#[derive(Debug, Clone)]
pub struct Probe {
    pub namespace: String,
    pub interval: Duration,
}

/// When the watch ends on its own (the flags under "Stopping").
#[derive(Debug, Clone, Default)]
pub struct Stop {
    /// Exit after this many printed deltas.
    pub max_events: Option<u64>,
    pub timeout: Option<Duration>,
    /// Exit once every resource has synced (client-go's HasSynced).
    pub until_synced: bool,
    /// Do not print the initial list's deltas.
    pub watch_only: bool,
    pub until: Option<Condition>,
}

impl From<StopArgs> for Stop {
    /// `--max-events 0` and `--timeout 0` are no limit, as `--request-timeout 0` is.
    fn from(a: StopArgs) -> Stop {
        Stop {
            max_events: a.max_events.filter(|n| *n > 0),
            timeout: a.timeout.filter(|t| !t.is_zero()),
            until_synced: a.until_synced,
            watch_only: a.watch_only,
            until: a.until,
        }
    }
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
        view: o.view,
        diff: if o.diff_all {
            DiffMode::All
        } else if o.diff {
            DiffMode::On
        } else {
            DiffMode::Off
        },
        blame: o.blame,
        ..output::Options::default()
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
                .or_else(crate::client::discovery::default_cache_dir),
        };
        let request_timeout = Some(args.cluster.request_timeout).filter(|d| !d.is_zero());
        let source = Contexts {
            kubeconfig,
            cluster: args.cluster.clone(),
            all_namespaces: args.all_namespaces,
            namespace: args.namespace.clone(),
            cache_dir,
            request_timeout,
        };
        let kc = source.load()?;
        let contexts = contexts(&args.cluster, &kc)?;
        if let (true, false, Some(shard)) =
            (contexts.is_empty(), source.follows(), args.cluster.shard)
        {
            anyhow::bail!(
                "--shard {shard} keeps none of the contexts --context names: give it more \
                 contexts, a pattern or --all-contexts"
            );
        }
        // kubectl lets -A win over -n (its `--all-namespaces`: "Namespace in current context
        // is ignored even if specified with --namespace").
        if let (true, Some(ns)) = (args.all_namespaces, args.namespace.as_deref()) {
            tracing::info!("-A: watching all namespaces, -n {ns:?} left aside, as kubectl does");
        }
        let (clusters, left_out) = source.resolve_all(&kc, contexts).await?;
        let field_selector = field_selector(&args);
        let resources = args.resources.clone().unwrap_or_default();
        let fleet = clusters.len() + left_out.len() > 1 || source.follows();
        let printer = printer_for(&args, &clusters, fleet, &resources);
        let people = matches!(printer.format, output::Format::Table | output::Format::Wide);
        let live = args.output.live;
        if live && !std::io::stdout().is_terminal() {
            return Err(anyhow::Error::new(crate::app::exit::Usage(
                "--live needs a terminal and stdout is not one: use -o json (or -o yaml) \
                 to send the records to a pipe or a file"
                    .to_owned(),
            )));
        }
        // The live screen owns the terminal: no progress line under it.
        let progress = !live
            && std::io::stderr().is_terminal()
            && (people || !std::io::stdout().is_terminal());
        let r = &args.reflector;
        let informer = r.informer_flags();
        // Also checked by the command line's normalize (exit 2); here for library callers.
        informer.check()?;
        let reflector = reflector_config(r);
        let record = recordings(&args, &kc, &clusters)?;
        Ok(Config {
            clusters,
            contexts: source,
            left_out,
            resources,
            every_resource: args.every_resource,
            label_selector: args.selector.clone(),
            field_selector,
            name: args.name.clone(),
            request_timeout,
            printer,
            reflector,
            emit_replaced: !args.reflector.legacy_sync,
            informer,
            pop_delay: args.reflector.pop_delay.filter(|d| !d.is_zero()),
            check_consistency: args.reflector.check_consistency,
            freshness: args.reflector.freshness.map(|period| Freshness {
                period,
                stale_after: args.reflector.stale_after,
            }),
            cache_stats: args.reflector.cache_stats,
            transform: args.reflector.transform.clone(),
            stop: args.stop.into(),
            record,
            timeline: args.timeline.clone(),
            stats: args.stats,
            metrics: args.metrics.clone(),
            progress,
            metadata_only: args.reflector.metadata_only,
            wire: args.reflector.wire,
            probe: args.probe.clone().map(|namespace| Probe {
                namespace,
                interval: args.probe_interval,
            }),
            filter: print_filter(&args.filter),
            live,
            live_history: args.output.live_history as usize,
            follow: args
                .follow
                .then(|| args.follow_kinds.clone().unwrap_or_default()),
            events: args.events,
        })
    }
}

/// `--quiet-relists`, `--types` and `--changes` (the watch's and `kwatch replay`'s).
pub fn print_filter(args: &crate::app::cli::FilterArgs) -> crate::informer::filter::Filter {
    crate::informer::filter::Filter {
        quiet_relists: args.quiet_relists,
        types: args.types.clone(),
        changes: args.changes.clone(),
    }
}

/// The user's field selector, plus `metadata.name=NAME` when a name was given.
fn field_selector(args: &WatchArgs) -> Option<String> {
    let name = args.name.as_deref().map(crate::client::target::field_value);
    match (&args.field_selector, &name) {
        (Some(f), Some(n)) => Some(format!("{f},metadata.name={n}")),
        (None, Some(n)) => Some(format!("metadata.name={n}")),
        (f, None) => f.clone(),
    }
}

/// The contexts `--context` or `--all-contexts` name (`[None]`: the current one), those of
/// `--shard`'s shard only.
pub fn contexts(cluster: &ClusterArgs, kc: &Kubeconfig) -> Result<Vec<Option<ContextName>>> {
    let all = match cluster.all_contexts {
        true => every_context(kc)?,
        false => named_contexts(cluster.context.as_deref(), kc)?,
    };
    Ok(all
        .into_iter()
        .filter(|c| in_shard(cluster, c.as_deref().unwrap_or_default()))
        .collect())
}

/// `context` is of `--shard`'s shard (every context is without it).
fn in_shard(cluster: &ClusterArgs, context: &str) -> bool {
    cluster.shard.is_none_or(|s| s.keeps(context))
}

/// `--context a,b`'s contexts (`None`: the current one); a context named twice is
/// watched once, where it first appears. A name with `*` or `?` is a pattern
/// ([`glob_match`]) standing for every context of `kc` it matches, in the kubeconfig's
/// order; a pattern that matches none is an error.
fn named_contexts(list: Option<&str>, kc: &Kubeconfig) -> Result<Vec<Option<ContextName>>> {
    let Some(list) = list else {
        return Ok(vec![None]);
    };
    let mut contexts: Vec<Option<ContextName>> = Vec::new();
    let mut add = |c: &str| {
        if !contexts.iter().any(|k| k.as_deref() == Some(c)) {
            contexts.push(Some(c.into()));
        }
    };
    for c in list.split(',').map(str::trim).filter(|c| !c.is_empty()) {
        if !c.contains(['*', '?']) {
            add(c);
            continue;
        }
        let matched: Vec<&str> = kc
            .contexts
            .iter()
            .map(|k| k.name.as_str())
            .filter(|name| glob_match(c, name))
            .collect();
        if matched.is_empty() {
            anyhow::bail!(
                "--context {c:?} matches no context of the kubeconfig: `kubectl config \
                 get-contexts -o name` lists them (`*` stands for any characters, `?` for one)"
            );
        }
        matched.into_iter().for_each(&mut add);
    }
    Ok(contexts)
}

/// `--all-contexts`: every context of the merged kubeconfig, in its order.
fn every_context(kc: &Kubeconfig) -> Result<Vec<Option<ContextName>>> {
    if kc.contexts.is_empty() {
        anyhow::bail!(
            "--all-contexts: the kubeconfig has no context (`kubectl config set-context` adds one)"
        );
    }
    let mut contexts: Vec<Option<ContextName>> = Vec::new();
    for c in &kc.contexts {
        if !contexts
            .iter()
            .any(|k| k.as_deref() == Some(c.name.as_str()))
        {
            contexts.push(Some(c.name.as_str().into()));
        }
    }
    Ok(contexts)
}

/// The namespace a run watches: none with `-A`, else `-n`'s, else the context's
/// (`default`). `-n ''` (an unset $NS in a script) is the context's, as in kubectl.
pub fn namespace(all: bool, given: Option<&str>, context: &str) -> Option<String> {
    (!all).then(|| {
        given
            .filter(|n| !n.is_empty())
            .unwrap_or(context)
            .to_owned()
    })
}

/// `name` matches the shell-like `pattern`: `*` any run of characters (none too), `?`
/// exactly one, anything else itself.
fn glob_match(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    // The classic backtracking matcher: on a mismatch, let the last `*` take one more
    // character.
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ni));
                pi += 1;
            }
            Some(&c) if c == '?' || c == n[ni] => {
                pi += 1;
                ni += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    pi = sp + 1;
                    ni = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// The printer's options: the output flags, and the columns the watched clusters (of a
/// `fleet` of contexts or not) and resources call for.
fn printer_for(
    args: &WatchArgs,
    clusters: &[std::sync::Arc<Cluster>],
    fleet: bool,
    resources: &str,
) -> output::Options {
    let mut printer = printer_options(&args.output);
    // Contexts with different namespaces: say which namespace each row is from.
    let namespaces: std::collections::BTreeSet<_> =
        clusters.iter().map(|c| c.namespace.as_deref()).collect();
    printer.all_namespaces = args.all_namespaces || namespaces.len() > 1;
    printer.multi = resources.contains(',')
        || args.follow
        || args.events
        || args.every_resource
        || crate::client::expand::names_all(resources);
    printer.contexts = fleet;
    printer.metadata_only = args.reflector.metadata_only;
    printer.events = args.events;
    printer
}

/// Where a run's contexts come from, kept for the whole run: a fleet reads it again to
/// retry a context that could not start and, with `--all-contexts` or a pattern, to follow
/// the kubeconfig as it changes.
#[derive(Debug, Clone)]
pub struct Contexts {
    /// The in-process simulator's kubeconfig; `None`: the user's files.
    kubeconfig: Option<Kubeconfig>,
    cluster: ClusterArgs,
    all_namespaces: bool,
    namespace: Option<String>,
    cache_dir: Option<std::path::PathBuf>,
    request_timeout: Option<Duration>,
}

impl Contexts {
    /// The kubeconfig as it is now, merged from its files as kubectl merges them.
    pub fn load(&self) -> Result<Kubeconfig> {
        match &self.kubeconfig {
            Some(kc) => Ok(kc.clone()),
            None => load_kubeconfig(self.cluster.kubeconfig.as_deref()),
        }
    }

    /// The files the kubeconfig is read from (none for the simulator's own).
    pub fn files(&self) -> Vec<std::path::PathBuf> {
        match &self.kubeconfig {
            Some(_) => Vec::new(),
            None => crate::app::kubeconfig::files(self.cluster.kubeconfig.as_deref()),
        }
    }

    /// The contexts are picked from the kubeconfig as it changes (`--all-contexts`, a
    /// pattern), not named once.
    pub fn follows(&self) -> bool {
        self.cluster.all_contexts
            || self
                .cluster
                .context
                .as_deref()
                .is_some_and(|c| c.contains(['*', '?']))
    }

    /// `--shard`'s shard, if given.
    pub fn shard(&self) -> Option<crate::app::shard::Shard> {
        self.cluster.shard
    }

    /// The contexts of `kc` that `--all-contexts` or `--context`'s names and patterns pick
    /// (of `--shard`'s shard), in the kubeconfig's order; none is no error: a followed
    /// kubeconfig may lose them all, and gain them again.
    pub fn followed(&self, kc: &Kubeconfig) -> Vec<ContextName> {
        let list = self.cluster.context.as_deref().unwrap_or_default();
        let mut picked: Vec<ContextName> = Vec::new();
        for name in kc.contexts.iter().map(|k| k.name.as_str()) {
            let named =
                self.cluster.all_contexts || list.split(',').any(|p| glob_match(p.trim(), name));
            if named && in_shard(&self.cluster, name) && !picked.iter().any(|p| p == name) {
                picked.push(name.into());
            }
        }
        picked
    }

    /// Each context's cluster; with several contexts, one whose kubeconfig entry cannot be
    /// used is left out with why ([`Config::left_out`]), and only all of them failing
    /// is an error; a lone context's error, or a context the kubeconfig does not have, is
    /// the run's.
    async fn resolve_all(
        &self,
        kc: &Kubeconfig,
        contexts: Vec<Option<ContextName>>,
    ) -> Result<(Vec<std::sync::Arc<Cluster>>, Vec<(ContextName, String)>)> {
        let several = contexts.len() > 1 || self.follows();
        let (mut clusters, mut left_out) = (Vec::new(), Vec::new());
        for context in contexts {
            let name = context.clone().unwrap_or_else(|| ContextName::new(""));
            // A name that is no context of the kubeconfig is a typo: the run's error.
            let exists = kc.contexts.iter().any(|k| name == k.name.as_str());
            match self.cluster(kc, context).await {
                Ok(c) => clusters.push(std::sync::Arc::new(c)),
                Err(e) if several && exists => {
                    left_out.push((name, crate::app::exit::one_line(&e)))
                }
                Err(e) => return Err(e),
            }
        }
        if clusters.is_empty() && !self.follows() {
            let others = if left_out.len() > 1 {
                " (and the others' entries fail too)"
            } else {
                ""
            };
            match left_out.first() {
                Some((name, why)) => anyhow::bail!(
                    "none of the {} contexts can be watched: context {name}: {why}{others}",
                    left_out.len(),
                ),
                None => anyhow::bail!("--context: no context named"),
            }
        }
        Ok((clusters, left_out))
    }

    /// `context` (`None`: the current one) of `kc`, with kubectl's flags applied and
    /// kube's client settings that kwatch needs.
    pub async fn cluster(&self, kc: &Kubeconfig, context: Option<ContextName>) -> Result<Cluster> {
        let effective = effective_kubeconfig(kc, context.as_deref(), &self.cluster)?;
        files_readable(&effective)?;
        let entry = entry_hash(&effective);
        let opts = KubeConfigOptions::default();
        let mut kube = kube::Config::from_custom_kubeconfig(effective, &opts)
            .await
            .with_context(|| match &context {
                Some(c) => format!("invalid kubeconfig for context {c:?}"),
                None => "invalid kubeconfig".to_owned(),
            })?;
        if let Some(t) = self.request_timeout {
            kube.connect_timeout = Some(t);
        }
        // Watches last minutes; a stalled stream is the reflector's business.
        kube.read_timeout = None;
        // 429/503/504 reach the reflector, which backs off as client-go's does and
        // shows it, instead of kube's transparent retries hiding them.
        kube.default_retry = false;
        let namespace = namespace(
            self.all_namespaces,
            self.namespace.as_deref(),
            &kube.default_namespace,
        );
        let from_context = self.namespace.as_deref().is_none_or(str::is_empty);
        if let Some(ns) = namespace.as_deref().filter(|_| from_context) {
            crate::client::target::validate_namespace(ns)
                .map_err(|e| anyhow::anyhow!("the kubeconfig context's namespace: {e}"))?;
        }
        let discovery_cache = self
            .cache_dir
            .as_deref()
            .map(|d| crate::client::discovery::cache_dir(d, &kube.cluster_url.to_string()));
        Ok(Cluster {
            context,
            kube,
            namespace,
            discovery_cache,
            entry,
        })
    }
}

/// A hash of a context's effective kubeconfig (its cluster, user and context entries as
/// kubectl's flags leave them): equal while nothing of the context changed.
fn entry_hash(effective: &Kubeconfig) -> u64 {
    use std::hash::{Hash, Hasher};
    let text = serde_json::to_string(effective).unwrap_or_default();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// The reflector's settings from its flags; `watch_list` (see
/// [`crate::cache::release::Informer::watch_list`]) and `gzip` are each cluster's.
fn reflector_config(r: &ReflectorArgs) -> ReflectorConfig {
    ReflectorConfig {
        page_size: r
            .page_size
            .unwrap_or(crate::cache::reflector::DEFAULT_PAGE_SIZE),
        page_size_explicit: r.page_size.is_some(),
        resync: r.resync.filter(|d| !d.is_zero()),
        bookmarks: !r.no_bookmarks,
        min_watch_timeout_secs: u32::try_from(r.min_watch_timeout.as_secs())
            .unwrap_or(u32::MAX)
            .max(1),
        stall_after: r.stall_after.unwrap_or_default(),
        restart_stalled: r.restart_stalled,
        clocks: crate::hooks::clocks(),
        ..ReflectorConfig::default()
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[test]
    fn context_patterns_match_as_a_shell_glob() {
        for (pattern, name, want) in [
            ("prod-*", "prod-eu", true),
            ("prod-*", "prod-", true),
            ("prod-*", "staging-eu", false),
            ("*-eu", "prod-eu", true),
            ("*-eu", "prod-us", false),
            ("p?od", "prod", true),
            ("p?od", "pod", false),
            ("*a*b*", "xxaxxbxx", true),
            ("*a*b", "xxaxxbxx", false),
            ("*", "", true),
        ] {
            assert_eq!(glob_match(pattern, name), want, "{pattern} on {name:?}");
        }
    }

    #[test]
    fn a_context_pattern_picks_every_match_in_kubeconfig_order() {
        let mut kc = Kubeconfig::default();
        for name in ["prod-b", "dev", "prod-a"] {
            kc.contexts.push(kube::config::NamedContext {
                name: name.to_owned(),
                context: None,
                other: Default::default(),
            });
        }
        let got = named_contexts(Some("dev,prod-*,prod-a"), &kc).unwrap();
        let want = ["dev", "prod-b", "prod-a"].map(|n| Some(ContextName::from(n)));
        assert_eq!(got, want);
        let err = named_contexts(Some("qa-*"), &kc).unwrap_err().to_string();
        assert!(
            err.starts_with("--context \"qa-*\" matches no context"),
            "{err}"
        );
        let all = every_context(&kc).unwrap();
        assert_eq!(
            all,
            ["prod-b", "dev", "prod-a"].map(|n| Some(ContextName::from(n)))
        );
        assert!(every_context(&Kubeconfig::default()).is_err());
    }

    #[test]
    fn stop_flags_resolve_field_by_field() {
        let cli = crate::app::cli::Cli::try_parse_from([
            "kwatch",
            "pods",
            "--max-events",
            "3",
            "--timeout",
            "5s",
            "--until-synced",
            "--watch-only",
            "--until",
            "deleted",
        ])
        .unwrap();
        let stop = Stop::from(cli.watch.stop);
        assert_eq!(stop.max_events, Some(3));
        assert_eq!(stop.timeout, Some(Duration::from_secs(5)));
        assert!(stop.until_synced && stop.watch_only);
        assert!(stop.until.is_some());
        let cli = crate::app::cli::Cli::try_parse_from(["kwatch", "pods"]).unwrap();
        let stop = Stop::from(cli.watch.stop);
        assert_eq!((stop.max_events, stop.timeout), (None, None));
        assert!(!stop.until_synced && !stop.watch_only && stop.until.is_none());
    }

    /// Each reader of managedFields keeps them; a run with none reads objects without.
    #[tokio::test]
    async fn managed_fields_are_read_only_where_something_reads_them() {
        const KC: &str = "
apiVersion: v1
kind: Config
current-context: c
clusters:
- name: one
  cluster:
    server: https://127.0.0.1:6443
users:
- name: u
  user:
    token: t
contexts:
- name: c
  context:
    cluster: one
    user: u
";
        async fn reads(flags: &[&str]) -> bool {
            let args = [&["kwatch", "pods"], flags].concat();
            let cli = crate::app::cli::Cli::try_parse_from(args).unwrap();
            let kc = Kubeconfig::from_yaml(KC).unwrap();
            let cfg = Config::resolve(cli.watch, Some(kc)).await.unwrap();
            cfg.reads_managed_fields()
        }
        for flags in [
            &[][..],
            &["-o", "json"],
            &["-o", "yaml"],
            &["-o", "name"],
            &["-o", "wide"],
            &["-o", "watch-events"],
            &["-o", "jsonpath={.metadata.name} {.status.phase}"],
            &["-o", "custom-columns=N:.metadata.name,L:.metadata.labels"],
            &["--until", "jsonpath={.status.phase}=Running"],
            &["--transform", "strip-managed-fields"],
            &["--check-consistency", "1m"],
        ] {
            assert!(!reads(flags).await, "{flags:?}");
        }
        for flags in [
            &["--show-managed-fields"][..],
            &["-o", "yaml", "--show-managed-fields"],
            &["-o", "json", "--blame"],
            &["-o", "json", "--diff"],
            &["--diff-all"],
            &["-o", "jsonpath={.metadata.managedFields[0].manager}"],
            &["-o", "jsonpath={.metadata}"],
            &["-o", "jsonpath={..manager}"],
            &[
                "-o",
                "jsonpath={range .metadata.managedFields[*]}{.manager}{end}",
            ],
            &[
                "-o",
                "custom-columns=N:.metadata.name,M:.metadata.managedFields",
            ],
            &[
                "--until",
                "jsonpath={.metadata.managedFields[0].manager}=kubectl",
            ],
            &["--record", "/nonexistent/rec.jsonl"],
            &["--timeline", "/nonexistent/t.html"],
            &["--cache-stats", "10s"],
            &["--metrics", "127.0.0.1:0"],
        ] {
            assert!(reads(flags).await, "{flags:?}");
        }
        let cli = crate::app::cli::Cli::try_parse_from(["kwatch", "pods"]).unwrap();
        let kc = Kubeconfig::from_yaml(KC).unwrap();
        let mut cfg = Config::resolve(cli.watch, Some(kc)).await.unwrap();
        cfg.live = true;
        assert!(cfg.reads_managed_fields(), "--live");
    }

    #[test]
    fn zero_max_events_and_timeout_are_no_limit() {
        let cli = crate::app::cli::Cli::try_parse_from([
            "kwatch",
            "pods",
            "--max-events",
            "0",
            "--timeout",
            "0",
        ])
        .unwrap();
        let stop = Stop::from(cli.watch.stop);
        assert_eq!((stop.max_events, stop.timeout), (None, None));
    }
}
