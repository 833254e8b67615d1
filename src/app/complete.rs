//! Shell completion of the values only the user's kubeconfig and cluster know: contexts,
//! clusters and users (the kubeconfig), namespaces, resources and object names (the
//! cluster), as kubectl's `__complete` offers them; and of the comma lists of fixed words
//! (`--types`, `--changes`), word by word. clap_complete's dynamic completion calls these
//! (`COMPLETE=bash kwatch …`, the scripts of [`completion`], `kwatch completions`); the
//! static scripts (`kwatch completions --static`) offer the fixed value lists only.
//!
//! The flags typed so far (`--kubeconfig`, `--context`, `--server`, `--token`, …) choose
//! the cluster, as they would for the watch: the line is parsed with [`Cli`] and resolved
//! with [`Config::resolve`]. A completion never fails and never waits long: on any error,
//! or after [`PATIENCE`], there are no candidates; it writes nothing on stderr (the
//! terminal under the prompt), the server's warnings and kwatch's notices included.

use std::ffi::{OsStr, OsString};
use std::time::Duration;

use clap::{CommandFactory as _, FromArgMatches as _};
use clap_complete::engine::{ArgValueCompleter, CompletionCandidate};

use crate::app::cli::{self, Cli};
use crate::app::config::{Cluster, Config};
use crate::client::discovery::Discovery;

/// How long a completion may wait for the cluster (kubectl's completion has no bound of
/// its own; a shell waiting on a Tab press should not hang).
const PATIENCE: Duration = Duration::from_secs(3);

/// Answers a completion request (`COMPLETE=SHELL kwatch -- WORDS…`, as the scripts of
/// [`completion`] send it) and exits; returns at once when
/// the variable is not set.
pub fn complete_if_asked() {
    clap_complete::CompleteEnv::with_factory(command)
        .var(COMPLETE_VAR)
        .completer("kwatch")
        .complete();
}

/// [`Cli`]'s command with the completers below on the arguments whose values only the
/// kubeconfig or the cluster know, and on the comma lists of fixed words. Attached here,
/// not in cli.rs's `#[arg]`s, so that the command line's definition does not import its
/// completion (which parses it).
fn command() -> clap::Command {
    // mut_args, not mut_arg: mut_arg moves the argument to the end, after `[MORE]...`.
    cli::command().mut_args(|arg| {
        let completer: fn(&OsStr) -> Vec<CompletionCandidate> = match arg.get_id().as_str() {
            "resources" => resources,
            "name" => object_names,
            "namespace" => namespaces,
            "context" => contexts,
            "user" => users,
            "cluster" => clusters,
            // clap_complete would offer `true` and `false` for the word after `-A`, which
            // takes a value after `=` only: that word is RESOURCE or NAME.
            "all_namespaces" => |_: &OsStr| Vec::new(),
            "types" | "changes" => {
                // The words are the value parser's (the list its parse reads).
                let words: Vec<String> = arg
                    .get_possible_values()
                    .iter()
                    .map(|v| v.get_name().to_owned())
                    .collect();
                let completer = move |current: &OsStr| words_list(current, &words);
                return arg.add(ArgValueCompleter::new(completer));
            }
            _ => return arg,
        };
        arg.add(ArgValueCompleter::new(completer))
    })
}

/// Kubeconfig contexts, for `--context`.
pub fn contexts(current: &OsStr) -> Vec<CompletionCandidate> {
    from_kubeconfig(current, |kc| {
        kc.contexts.iter().map(|c| c.name.clone()).collect()
    })
}

/// Kubeconfig clusters, for `--cluster`.
pub fn clusters(current: &OsStr) -> Vec<CompletionCandidate> {
    from_kubeconfig(current, |kc| {
        kc.clusters.iter().map(|c| c.name.clone()).collect()
    })
}

/// Kubeconfig users, for `--user`.
pub fn users(current: &OsStr) -> Vec<CompletionCandidate> {
    from_kubeconfig(current, |kc| {
        kc.auth_infos.iter().map(|u| u.name.clone()).collect()
    })
}

/// The cluster's namespaces, for `-n`.
pub fn namespaces(current: &OsStr) -> Vec<CompletionCandidate> {
    from_cluster(current, |cfg| async move {
        let cluster = cfg.clusters.first()?;
        let client = crate::client::connect::client(&cluster.kube).ok()?;
        item_names(&client, "/api/v1/namespaces").await
    })
}

/// The names of RESOURCE's objects, for NAME: in the namespace of `-n`, else of the
/// context (every namespace with `-A`), as kubectl's completion lists them (`kubectl get
/// RESOURCE -o template` with the same namespace flags). None for a list of resources or
/// `all`, which take no name.
pub fn object_names(current: &OsStr) -> Vec<CompletionCandidate> {
    let Some(cli) = typed() else {
        return Vec::new();
    };
    let resource = match (cli.watch.resources, cli.watch.name) {
        (Some(r), None) if !r.contains([',', '/']) && !crate::client::expand::names_all(&r) => r,
        _ => return Vec::new(),
    };
    from_cluster(
        current,
        |cfg| async move { names_of(&cfg, &resource).await },
    )
}

/// The resources RESOURCE can name, as kubectl's completion offers them: `all`, the core
/// group's plurals and every other group's `plural.group` (its preferred version), those
/// that can be listed and watched; from the discovery cache when it is fresh. After a
/// comma, the next resource of the list; after `TYPE/`, `TYPE/NAME` for the names of
/// TYPE's objects ([`object_names`]).
pub fn resources(current: &OsStr) -> Vec<CompletionCandidate> {
    // clap_complete takes the word after a flag whose value is optional (`-A`,
    // `--cache-stats`) for its value, though those require `=`: when the line as kwatch
    // parses it has RESOURCE already, the word being completed is NAME.
    if typed().is_some_and(|cli| cli.watch.resources.is_some()) {
        return object_names(current);
    }
    let typed = current.to_string_lossy();
    if let Some((ty, _)) = typed.split_once('/') {
        if ty.is_empty() || ty.contains(',') {
            return Vec::new();
        }
        let ty = ty.to_owned();
        return from_cluster(current, |cfg| async move {
            let names = names_of(&cfg, &ty).await?;
            Some(names.into_iter().map(|n| format!("{ty}/{n}")).collect())
        });
    }
    in_list(current, |word| from_cluster(word, resource_names))
}

/// Every name [`resources`] offers.
async fn resource_names(cfg: Config) -> Option<Vec<String>> {
    let cluster = cfg.clusters.first()?;
    let client = crate::client::connect::client(&cluster.kube).ok()?;
    let mut docs = discovery(cluster, client);
    let watchable = |r: &k8s_openapi::apimachinery::pkg::apis::meta::v1::APIResource| {
        !r.name.contains('/')
            && ["list", "watch"]
                .iter()
                .all(|v| r.verbs.iter().any(|x| x == v))
    };
    let mut names = vec!["all".to_owned()];
    let core = docs.resources("v1").await.ok()?;
    names.extend(
        core.resources
            .iter()
            .filter(|r| watchable(r))
            .map(|r| r.name.clone()),
    );
    let groups: Vec<(String, String)> = docs
        .groups()
        .await
        .ok()?
        .iter()
        .filter_map(|g| {
            let v = g.preferred_version.as_ref().or(g.versions.first())?;
            Some((g.name.clone(), v.group_version.clone()))
        })
        .collect();
    for (group, gv) in groups {
        let Ok(list) = docs.resources(&gv).await else {
            continue;
        };
        names.extend(
            list.resources
                .iter()
                .filter(|r| watchable(r))
                .map(|r| format!("{}.{group}", r.name)),
        );
    }
    Some(names)
}

/// The discovery documents of `cluster` through `client` and its cache, each asked for
/// within [`PATIENCE`].
fn discovery(cluster: &Cluster, client: kube::Client) -> Discovery {
    let server = crate::client::discovery::Server {
        client,
        request_timeout: Some(PATIENCE),
    };
    Discovery::new(server, cluster.discovery_cache.clone())
}

/// The names of the objects of `resource` (as the user types it: `cm`, `deploy`,
/// `deployments.apps`) in the first cluster's namespace (`None`: all of them), resolved
/// as the watch resolves it.
async fn names_of(cfg: &Config, resource: &str) -> Option<Vec<String>> {
    let cluster = cfg.clusters.first()?;
    let client = crate::client::connect::client(&cluster.kube).ok()?;
    let mut resolver = crate::client::target::Resolver::new(discovery(cluster, client.clone()));
    let target = resolver.resolve(resource).await.ok()?;
    item_names(
        &client,
        &target.collection_path(cluster.namespace.as_deref()),
    )
    .await
}

/// The names of the items of the list at `path`, asked for as metadata only (names are
/// all a completion needs; a server without it sends whole objects).
async fn item_names(client: &kube::Client, path: &str) -> Option<Vec<String>> {
    let body = crate::client::source::get_document(
        client,
        path,
        crate::client::source::ACCEPT_METADATA_LIST,
        Some(PATIENCE),
    )
    .await
    .ok()?;
    let list: serde_json::Value = serde_json::from_slice(&body).ok()?;
    let names = list["items"]
        .as_array()?
        .iter()
        .filter_map(|o| o["metadata"]["name"].as_str().map(str::to_owned))
        .collect();
    Some(names)
}

/// A comma list of fixed `words` (`--types`, `--changes`): the word after the last comma,
/// from those not yet in the list.
fn words_list(current: &OsStr, words: &[String]) -> Vec<CompletionCandidate> {
    let typed = current.to_string_lossy();
    let done: Vec<&str> = typed.split(',').rev().skip(1).collect();
    let left: Vec<String> = words
        .iter()
        .filter(|w| !done.iter().any(|d| d.eq_ignore_ascii_case(w)))
        .cloned()
        .collect();
    in_list(current, |word| candidates(word, left))
}

/// Completes the word after the last comma of `current` with `complete`, keeping the list
/// before it (kubectl's `pods,deploy` style).
fn in_list(
    current: &OsStr,
    complete: impl FnOnce(&OsStr) -> Vec<CompletionCandidate>,
) -> Vec<CompletionCandidate> {
    let typed = current.to_string_lossy();
    match typed.rsplit_once(',') {
        None => complete(current),
        Some((done, word)) => complete(OsStr::new(word))
            .into_iter()
            .map(|c| c.add_prefix(format!("{done},")))
            .collect(),
    }
}

/// Candidates from the kubeconfig the typed flags name.
fn from_kubeconfig(
    current: &OsStr,
    names: impl FnOnce(&kube::config::Kubeconfig) -> Vec<String>,
) -> Vec<CompletionCandidate> {
    let Some(cli) = typed() else {
        return Vec::new();
    };
    match crate::app::kubeconfig::load_kubeconfig(cli.watch.cluster.kubeconfig.as_deref()) {
        Ok(kc) => candidates(current, names(&kc)),
        Err(_) => Vec::new(),
    }
}

/// Candidates from the cluster the typed flags name, within [`PATIENCE`].
fn from_cluster<F, Fut>(current: &OsStr, names: F) -> Vec<CompletionCandidate>
where
    F: FnOnce(Config) -> Fut,
    Fut: std::future::Future<Output = Option<Vec<String>>>,
{
    let Some(cli) = typed() else {
        return Vec::new();
    };
    crate::client::http::quiet();
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return Vec::new();
    };
    let found = rt.block_on(async {
        let work = async {
            let cfg = Config::resolve(cli.watch, None).await.ok()?;
            names(cfg).await
        };
        tokio::time::timeout(PATIENCE, work).await.ok().flatten()
    });
    candidates(current, found.unwrap_or_default())
}

/// The names that start with what is typed, sorted, each once.
fn candidates(current: &OsStr, mut names: Vec<String>) -> Vec<CompletionCandidate> {
    let typed = current.to_string_lossy();
    names.retain(|n| n.starts_with(typed.as_ref()));
    names.sort();
    names.dedup();
    names.into_iter().map(CompletionCandidate::new).collect()
}

/// The command line being completed, up to the word under the cursor, parsed as far as it
/// goes. The shells' registration scripts run `kwatch -- WORDS…`; bash also passes the
/// index of the word being completed in `_CLAP_COMPLETE_INDEX`.
fn typed() -> Option<Cli> {
    let args: Vec<OsString> = std::env::args_os().collect();
    let start = args.iter().position(|a| a == "--")? + 1;
    let mut words: Vec<OsString> = args.get(start..)?.to_vec();
    let cursor = std::env::var("_CLAP_COMPLETE_INDEX")
        .ok()
        .and_then(|i| i.parse::<usize>().ok())
        .unwrap_or(words.len().saturating_sub(1));
    words.truncate(cursor);
    // ignore_errors: the flag whose value is being completed (`-n` without a value yet)
    // and a RESOURCE not yet typed are no errors here.
    let cmd = Cli::command().ignore_errors(true);
    let matches = cmd.try_get_matches_from(words).ok()?;
    Cli::from_arg_matches(&matches).ok()
}

/// The completion script for `shell`: the registration of clap_complete's dynamic
/// completion (`COMPLETE=SHELL kwatch -- WORDS…` answers, see [`complete_if_asked`]), or with
/// `fixed` the static script generated from [`Cli`].
pub fn completion(shell: clap_complete::Shell, fixed: bool) -> Vec<u8> {
    use clap_complete::env::{Bash, Elvish, EnvCompleter, Fish, Powershell, Zsh};
    use clap_complete::Shell;
    let mut out = Vec::new();
    // The static scripts come from cli's command as defined, without this file's
    // completers (the committed completions/static/ were generated so).
    if fixed {
        clap_complete::generate(shell, &mut cli::command(), "kwatch", &mut out);
        return out;
    }
    let env: &dyn EnvCompleter = match shell {
        Shell::Bash => &Bash,
        Shell::Zsh => &Zsh,
        Shell::Fish => &Fish,
        Shell::PowerShell => &Powershell,
        Shell::Elvish => &Elvish,
        // Shells clap_complete adds later: their static script.
        _ => {
            clap_complete::generate(shell, &mut cli::command(), "kwatch", &mut out);
            return out;
        }
    };
    // Writing into a Vec cannot fail.
    let _ = env.write_registration(COMPLETE_VAR, "kwatch", "kwatch", "kwatch", &mut out);
    out
}

/// The environment variable the completion scripts set to ask kwatch for candidates.
pub const COMPLETE_VAR: &str = "COMPLETE";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_completers_are_on_their_arguments() {
        let mut cmd = command();
        cmd.build();
        cmd.clone().debug_assert();
        for id in [
            "resources",
            "name",
            "namespace",
            "context",
            "user",
            "cluster",
            "all_namespaces",
            "types",
            "changes",
        ] {
            let arg = cmd.get_arguments().find(|a| a.get_id() == id);
            let arg = arg.unwrap_or_else(|| panic!("no argument {id}"));
            assert!(arg.get::<ArgValueCompleter>().is_some(), "{id}");
        }
    }
}
