//! The kubeconfig as kubectl reads it: the files loaded and merged, kubectl's cluster
//! flags applied to the context's entries as clientcmd's overrides (`--server`, `--token`,
//! `--as`, …), and client-go's checks of the result: the server as a URL, the TLS
//! settings, the files it names. [`crate::app::config`] resolves each context through it.

use anyhow::{Context, Result};
use kube::config::{Kubeconfig, KubeconfigError};

use crate::app::cli::ClusterArgs;

/// Reads the kubeconfig the way kubectl does: `--kubeconfig` (which must exist), else the
/// files `$KUBECONFIG` lists (merged; missing ones skipped, as kubectl skips them), else
/// `~/.kube/config` if it exists. No file at all is an empty kubeconfig: the flags
/// (`--server`, `--token`, …) may be all there is.
pub fn load_kubeconfig(path: Option<&std::path::Path>) -> Result<Kubeconfig> {
    if let Some(p) = path {
        return read_file(p);
    }
    let files = files(None);
    let mut merged = Kubeconfig::default();
    for file in files.iter().filter(|f| f.exists()) {
        let kc = read_file(file)?;
        merged = merged
            .merge(kc)
            .with_context(|| format!("cannot merge kubeconfig {}", file.display()))?;
    }
    Ok(merged)
}

/// The kubeconfig's files, as kubectl finds them: `path` (`--kubeconfig`), else each of
/// $KUBECONFIG's, else ~/.kube/config (those that do not exist are read as empty).
pub fn files(path: Option<&std::path::Path>) -> Vec<std::path::PathBuf> {
    if let Some(p) = path {
        return vec![p.to_owned()];
    }
    match std::env::var_os("KUBECONFIG") {
        Some(list) if !list.is_empty() => std::env::split_paths(&list)
            .filter(|p| !p.as_os_str().is_empty())
            .collect(),
        _ => std::env::home_dir()
            .map(|h| h.join(".kube").join("config"))
            .into_iter()
            .collect(),
    }
}

/// One kubeconfig file, its error in one line: the I/O error alone (kube's own message
/// quotes the path twice), the YAML error's first line (the rest is a source excerpt).
fn read_file(path: &std::path::Path) -> Result<Kubeconfig> {
    Kubeconfig::read_from(path).map_err(|e| {
        let why = match &e {
            KubeconfigError::ReadConfig(io, _) => crate::text::GoIo(io).to_string(),
            KubeconfigError::Parse(yaml) => {
                let text = yaml.to_string();
                let first = text.lines().next().unwrap_or_default();
                format!("invalid YAML: {}", first.trim_start_matches("error: "))
            }
            other => other.to_string(),
        };
        anyhow::anyhow!("cannot load kubeconfig {}: {why}", path.display())
    })
}

/// The name of the one context of [`effective_kubeconfig`]'s result (its cluster and user
/// keep their kubeconfig names, which client-go's errors quote).
const EFFECTIVE: &str = "kwatch";

/// The kubeconfig entries `context` (`None`: the current context) resolves to, with the
/// flags applied as kubectl's clientcmd applies its overrides, as a kubeconfig holding just
/// those entries, under their names (`""` when there is none, as clientcmd's
/// `getClusterName` and `getAuthInfoName` give it):
///
/// - `--cluster`/`--user` pick other entries than the context's;
/// - `--server` replaces the cluster's server, and then `tls-server-name` is the flag's
///   value or none (a kubeconfig's name for another server would be wrong);
/// - `--certificate-authority` or `--insecure-skip-tls-verify` replaces all three of the
///   cluster's CA file, CA data and skip flag;
/// - `--token` replaces the user's other credentials (token file, exec plugin, auth
///   provider, basic auth), as client-go's bearer token wins over them; a client
///   certificate is still presented;
/// - `--client-certificate`/`--client-key` replace the user's (file or data);
/// - `--as`, `--as-group`, `--as-uid` replace the user's impersonation;
/// - `--disable-compression` turns compression off (the cluster's `disable-compression`
///   can only be set by it, as kubectl's override is applied only when true).
pub fn effective_kubeconfig(
    kc: &Kubeconfig,
    context: Option<&str>,
    a: &ClusterArgs,
) -> Result<Kubeconfig> {
    use kube::config::Context as KcContext;
    use kube::config::{NamedAuthInfo, NamedCluster, NamedContext};
    let context_name = context
        .map(str::to_owned)
        .or_else(|| kc.current_context.clone().filter(|c| !c.is_empty()));
    let ctx: Option<KcContext> = match &context_name {
        Some(name) => match kc.contexts.iter().find(|c| &c.name == name) {
            Some(c) => c.context.clone(),
            None => anyhow::bail!(
                "context {name:?} does not exist in the kubeconfig (see `kubectl config \
                 get-contexts`)"
            ),
        },
        None => None,
    };
    let (cluster_name, mut cluster) = effective_cluster(kc, ctx.as_ref(), a)?;
    check_tls(&cluster)?;
    let (user_name, user) = effective_user(kc, ctx.as_ref(), a)?;
    let origin = match (&a.server, &a.cluster, ctx.as_ref()) {
        (Some(_), _, _) => "--server".to_owned(),
        (None, Some(name), _) => format!("the kubeconfig's cluster {name:?}"),
        (None, None, Some(c)) => format!("the kubeconfig's cluster {:?}", c.cluster),
        (None, None, None) => "the kubeconfig".to_owned(),
    };
    let server = cluster.server.as_deref().unwrap_or_default();
    cluster.server = Some(server_url(server, default_tls(&cluster, &user), &origin)?);
    Ok(Kubeconfig {
        clusters: vec![NamedCluster {
            name: cluster_name.clone(),
            cluster: Some(cluster),
            ..NamedCluster::default()
        }],
        auth_infos: vec![NamedAuthInfo {
            name: user_name.clone(),
            auth_info: Some(user),
            ..NamedAuthInfo::default()
        }],
        contexts: vec![NamedContext {
            name: EFFECTIVE.to_owned(),
            context: Some(KcContext {
                cluster: cluster_name,
                user: Some(user_name),
                namespace: ctx.and_then(|c| c.namespace),
                ..KcContext::default()
            }),
            ..NamedContext::default()
        }],
        current_context: Some(EFFECTIVE.to_owned()),
        ..Kubeconfig::default()
    })
}

/// The cluster entry `--cluster` or the context names, with the server and TLS flags
/// applied (see [`effective_kubeconfig`]), and its name (`""`: none).
fn effective_cluster(
    kc: &Kubeconfig,
    ctx: Option<&kube::config::Context>,
    a: &ClusterArgs,
) -> Result<(String, kube::config::Cluster)> {
    use kube::config::Cluster as KcCluster;
    let cluster_name = a
        .cluster
        .clone()
        .or_else(|| ctx.map(|c| c.cluster.clone()))
        .filter(|c| !c.is_empty());
    let mut cluster = match &cluster_name {
        Some(name) => match kc.clusters.iter().find(|c| &c.name == name) {
            Some(c) => c.cluster.clone().unwrap_or_default(),
            None if a.cluster.is_some() || a.server.is_none() => anyhow::bail!(
                "cluster {name:?} does not exist in the kubeconfig (see `kubectl config \
                 get-clusters`)"
            ),
            None => KcCluster::default(),
        },
        None => KcCluster::default(),
    };
    if let Some(server) = &a.server {
        cluster.server = Some(server.clone());
    }
    if a.insecure_skip_tls_verify || a.certificate_authority.is_some() {
        cluster.insecure_skip_tls_verify = Some(a.insecure_skip_tls_verify);
        cluster.certificate_authority = a
            .certificate_authority
            .as_ref()
            .map(|p| p.to_string_lossy().into_owned());
        cluster.certificate_authority_data = None;
    }
    if a.tls_server_name.is_some() || a.server.is_some() {
        cluster.tls_server_name = a.tls_server_name.clone();
    }
    // kubectl sets the override only when the flag is true: it cannot turn compression
    // back on for a cluster whose kubeconfig turns it off.
    if a.disable_compression {
        cluster.disable_compression = Some(true);
    }
    if cluster.server.as_deref().is_none_or(str::is_empty) {
        anyhow::bail!(if cfg!(feature = "sim") {
            "no cluster to connect to: pass --kubeconfig FILE, set KUBECONFIG, pass --server \
             URL, or try the built-in cluster with --sim"
        } else {
            "no cluster to connect to: pass --kubeconfig FILE, set KUBECONFIG, or pass \
             --server URL"
        });
    }
    Ok((cluster_name.unwrap_or_default(), cluster))
}

/// client-go's check of the TLS settings (`transport.TLSConfigFor`): a CA (file or data)
/// and `insecure-skip-tls-verify` together are refused, whether both come from the
/// kubeconfig or both from the flags (one flag given clears the other setting of the
/// kubeconfig: see [`effective_kubeconfig`]).
fn check_tls(cluster: &kube::config::Cluster) -> Result<()> {
    let has_ca = cluster
        .certificate_authority
        .as_deref()
        .is_some_and(|c| !c.is_empty())
        || cluster
            .certificate_authority_data
            .as_deref()
            .is_some_and(|c| !c.is_empty());
    if has_ca && cluster.insecure_skip_tls_verify == Some(true) {
        anyhow::bail!(
            "specifying a root certificates file with the insecure flag is not allowed: the \
             kubeconfig's cluster has a CA and insecure-skip-tls-verify; remove one, or \
             override both with --certificate-authority or --insecure-skip-tls-verify"
        );
    }
    Ok(())
}

/// client-go's `DefaultServerUrlFor` rule for a server without a scheme: https when TLS is
/// configured (a CA file or data, a client certificate, or insecure-skip-tls-verify), else
/// http (`rest/url_utils.go`: `defaultTLS := hasCA || hasCert || config.Insecure`).
///
/// kubectl itself makes that choice in clientcmd's `ClientConfig` before it merges the
/// cluster's TLS settings and the user's credentials (`IsConfigTransportTLS` on a config
/// holding only the host), so kubectl 1.32 always uses http for such a server and sends
/// no credentials; kwatch applies the rule to the whole configuration instead, as a
/// program building a `rest.Config` gets it.
fn default_tls(cluster: &kube::config::Cluster, user: &kube::config::AuthInfo) -> bool {
    let set = |v: &Option<String>| v.as_deref().is_some_and(|v| !v.is_empty());
    set(&cluster.certificate_authority)
        || set(&cluster.certificate_authority_data)
        || cluster.insecure_skip_tls_verify == Some(true)
        || set(&user.client_certificate)
        || set(&user.client_certificate_data)
}

/// The server as a URL kube's client accepts, or one error line naming it (`origin`: where
/// it came from) and the fix. client-go's `DefaultServerURL`: a value without a scheme or
/// host gets `https://` (`default_tls`) or `http://` in front, and must then be a host or
/// `host:port` with no path ("host must be a URL or a host:port pair"); a URL keeps its
/// path (a server behind a path prefix). Unlike Go, the scheme must be http or https and
/// the port a number up to 65535 here, where Go would fail at the first request.
pub fn server_url(server: &str, default_tls: bool, origin: &str) -> Result<String> {
    let shown = {
        let mut s: String = server.chars().take(200).collect();
        if s.len() < server.len() {
            s.push('…');
        }
        s
    };
    let bad = |why: &str| {
        anyhow::anyhow!(
            "server {shown:?} ({origin}) is not a valid server address: {why}; give it as \
             https://HOST[:PORT]"
        )
    };
    if server.is_empty() {
        return Err(bad("it is empty"));
    }
    if server.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(bad("it contains spaces or control characters"));
    }
    let parsed = server.parse::<http::Uri>().ok();
    let has_scheme = parsed
        .as_ref()
        .is_some_and(|u| u.scheme().is_some() && u.host().is_some_and(|h| !h.is_empty()));
    let uri = if has_scheme {
        parsed.ok_or_else(|| bad("it does not parse as a URL"))?
    } else {
        let scheme = if default_tls { "https" } else { "http" };
        let uri = format!("{scheme}://{server}")
            .parse::<http::Uri>()
            .map_err(|_| bad("host must be a URL or a host:port pair"))?;
        if !matches!(uri.path(), "" | "/") || uri.query().is_some() {
            return Err(bad("host must be a URL or a host:port pair"));
        }
        uri
    };
    match uri.scheme_str() {
        Some("https" | "http") => {}
        Some(other) => {
            return Err(bad(&format!(
                "unsupported scheme {other:?} (https or http)"
            )))
        }
        None => return Err(bad("no scheme")),
    }
    let Some(authority) = uri.authority() else {
        return Err(bad("no host"));
    };
    if authority.as_str().contains('@') {
        return Err(bad("user information in the URL is not supported"));
    }
    if uri.host().is_none_or(|h| h.is_empty() || h == "[]") {
        return Err(bad("no host"));
    }
    // `Authority::port` is None for a port that is not a u16: look at the text itself.
    let after_host = authority
        .as_str()
        .rsplit_once(']')
        .map_or(authority.as_str(), |(_, r)| r);
    if let Some((_, port)) = after_host.rsplit_once(':') {
        if port.parse::<u16>().is_err() {
            return Err(bad(&format!("invalid port {port:?}")));
        }
    }
    Ok(uri.to_string().trim_end_matches('/').to_owned())
}

/// The files the cluster and user name exist and can be read, checked here as clientcmd's
/// `validateClusterInfo` and `validateAuthInfo` check them (`tools/clientcmd/validation.go`)
/// and in their words, each entry named as the kubeconfig names it (kube's own error quotes
/// the file twice, `'"/ca.pem"'`, and Rust's I/O error ends in ` (os error 2)`): `unable to
/// read client-cert /c for alice due to open /c: no such file or directory`.
pub fn files_readable(kc: &Kubeconfig) -> Result<()> {
    for named in &kc.clusters {
        let Some(cluster) = &named.cluster else {
            continue;
        };
        // Each file is read only without the data that overrides it, as client-go reads them.
        let ca = &cluster.certificate_authority;
        let ca = ca
            .as_deref()
            .filter(|_| cluster.certificate_authority_data.is_none());
        readable("certificate-authority", ca, &named.name)?;
    }
    for named in &kc.auth_infos {
        let Some(user) = &named.auth_info else {
            continue;
        };
        let files = [
            // clientcmd's words: `client-cert`, `client-key`.
            (
                "client-cert",
                &user.client_certificate,
                user.client_certificate_data.is_none(),
            ),
            (
                "client-key",
                &user.client_key,
                user.client_key_data.is_none(),
            ),
            ("tokenFile", &user.token_file, user.token.is_none()),
        ];
        for (what, path, read) in files {
            readable(what, path.as_deref().filter(|_| read), &named.name)?;
        }
    }
    Ok(())
}

/// `path` (none or empty: nothing to read) opens, else clientcmd's `unable to read {what}
/// {path} for {entry} due to {Go's os.Open error}` (without ` for` when the entry has no
/// name: kwatch's flags alone).
fn readable(what: &str, path: Option<&str>, entry: &str) -> Result<()> {
    let Some(path) = path.filter(|p| !p.is_empty()) else {
        return Ok(());
    };
    if let Err(e) = std::fs::File::open(path) {
        let entry = match entry {
            "" => String::new(),
            name => format!(" for {name}"),
        };
        let e = crate::text::GoIo(&e);
        anyhow::bail!("unable to read {what} {path}{entry} due to open {path}: {e}");
    }
    Ok(())
}

/// The user entry `--user` or the context names, with the credential and impersonation
/// flags applied (see [`effective_kubeconfig`]), and its name (`""`: none). Impersonating
/// groups, a UID or user extras without a user is refused as clientcmd's `validateAuthInfo`
/// refuses it (`tools/clientcmd/validation.go`), in its words: the server would answer
/// each request with a 500.
fn effective_user(
    kc: &Kubeconfig,
    ctx: Option<&kube::config::Context>,
    a: &ClusterArgs,
) -> Result<(String, kube::config::AuthInfo)> {
    use kube::config::AuthInfo;
    let user_name = a
        .user
        .clone()
        .or_else(|| ctx.and_then(|c| c.user.clone()))
        .filter(|u| !u.is_empty());
    let mut user = match &user_name {
        Some(name) => match kc.auth_infos.iter().find(|u| &u.name == name) {
            Some(u) => u.auth_info.clone().unwrap_or_default(),
            None if a.user.is_some() => anyhow::bail!(
                "user {name:?} does not exist in the kubeconfig (see `kubectl config \
                 get-users`)"
            ),
            None => AuthInfo::default(),
        },
        None => AuthInfo::default(),
    };
    if let Some(token) = &a.token {
        user.token = Some(token.clone().into());
        user.token_file = None;
        user.exec = None;
        user.auth_provider = None;
        user.username = None;
        user.password = None;
    }
    if let Some(cert) = &a.client_certificate {
        user.client_certificate = Some(cert.to_string_lossy().into_owned());
        user.client_certificate_data = None;
    }
    if let Some(key) = &a.client_key {
        user.client_key = Some(key.to_string_lossy().into_owned());
        user.client_key_data = None;
    }
    if let Some(who) = &a.impersonate {
        user.impersonate = Some(who.clone());
    }
    if !a.impersonate_groups.is_empty() {
        user.impersonate_groups = Some(a.impersonate_groups.clone());
    }
    if let Some(uid) = &a.impersonate_uid {
        user.impersonate_uid = Some(uid.clone());
    }
    let as_user = user.impersonate.as_deref().is_some_and(|u| !u.is_empty());
    let as_more = user
        .impersonate_groups
        .as_ref()
        .is_some_and(|g| !g.is_empty())
        || user
            .impersonate_uid
            .as_deref()
            .is_some_and(|u| !u.is_empty())
        || user
            .impersonate_user_extra
            .as_ref()
            .is_some_and(|e| !e.is_empty());
    if as_more && !as_user {
        let name = user_name.as_deref().unwrap_or_default();
        return Err(anyhow::Error::new(crate::app::exit::Usage(format!(
            "requesting uid, groups or user-extra for {name} without impersonating a user: \
             add --as USER"
        ))));
    }
    Ok((user_name.unwrap_or_default(), user))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(not(feature = "sim"))]
    use crate::app::sim::{LocalSim, NO_SIMULATOR};
    use clap::Parser;

    const KC: &str = "
apiVersion: v1
kind: Config
current-context: a
clusters:
- name: one
  cluster:
    server: https://one:6443
    certificate-authority-data: Q0E=
    tls-server-name: one.internal
- name: two
  cluster:
    server: https://two:6443
    disable-compression: true
users:
- name: alice
  user:
    token: alice-token
    client-certificate-data: Q0VSVA==
    client-key-data: S0VZ
- name: bob
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: get-token
contexts:
- name: a
  context: {cluster: one, user: alice, namespace: team-a}
- name: b
  context: {cluster: two, user: bob}
";

    fn effective(flags: &[&str], context: Option<&str>) -> Result<Kubeconfig> {
        let mut argv = vec!["kwatch", "pods"];
        argv.extend_from_slice(flags);
        let cli = crate::app::cli::Cli::try_parse_from(argv).unwrap();
        let kc = Kubeconfig::from_yaml(KC).unwrap();
        effective_kubeconfig(&kc, context, &cli.watch.cluster)
    }

    fn cluster(k: &Kubeconfig) -> kube::config::Cluster {
        k.clusters[0].cluster.clone().unwrap()
    }

    fn user(k: &Kubeconfig) -> kube::config::AuthInfo {
        k.auth_infos[0].auth_info.clone().unwrap()
    }

    #[test]
    fn no_flags_keep_the_contexts_entries() {
        let k = effective(&[], None).unwrap();
        let c = cluster(&k);
        assert_eq!(c.server.as_deref(), Some("https://one:6443"));
        assert_eq!(c.tls_server_name.as_deref(), Some("one.internal"));
        assert!(user(&k).token.is_some());
        let ctx = k.contexts[0].context.clone().unwrap();
        assert_eq!(ctx.namespace.as_deref(), Some("team-a"));
        let b = effective(&[], Some("b")).unwrap();
        assert_eq!(cluster(&b).server.as_deref(), Some("https://two:6443"));
        assert!(user(&b).exec.is_some());
    }

    /// A file the kubeconfig names that cannot be read is said as clientcmd's validation
    /// says it, naming the entry (the context's user, or cluster) and Go's error, never
    /// Rust's `No such file or directory (os error 2)`.
    #[test]
    fn an_unreadable_file_is_named_with_its_entry_in_clientcmds_words() {
        let kc = Kubeconfig::from_yaml(
            "
clusters:
- name: prod
  cluster: {server: 'https://prod:6443', certificate-authority: /no/ca.pem}
- name: dev
  cluster: {server: 'https://dev:6443'}
users:
- name: alice
  user: {token: t}
- name: bob
  user: {client-certificate: /no/bob.crt, client-key: /no/bob.key}
contexts:
- name: a
  context: {cluster: dev, user: bob}
- name: b
  context: {cluster: prod, user: alice}
",
        )
        .unwrap();
        let cli = crate::app::cli::Cli::try_parse_from(["kwatch", "pods"]).unwrap();
        let error = |context: &str, args: &ClusterArgs| {
            let e = effective_kubeconfig(&kc, Some(context), args).unwrap();
            files_readable(&e).unwrap_err().to_string()
        };
        assert_eq!(
            error("a", &cli.watch.cluster),
            "unable to read client-cert /no/bob.crt for bob due to open /no/bob.crt: no such \
             file or directory"
        );
        assert_eq!(
            error("b", &cli.watch.cluster),
            "unable to read certificate-authority /no/ca.pem for prod due to open /no/ca.pem: \
             no such file or directory"
        );
        let key = crate::app::cli::Cli::try_parse_from([
            "kwatch",
            "pods",
            "--user",
            "bob",
            "--client-certificate",
            "/dev/null",
        ])
        .unwrap();
        assert_eq!(
            error("b", &key.watch.cluster),
            "unable to read certificate-authority /no/ca.pem for prod due to open /no/ca.pem: \
             no such file or directory"
        );
        assert_eq!(
            error("a", &key.watch.cluster),
            "unable to read client-key /no/bob.key for bob due to open /no/bob.key: no such \
             file or directory"
        );
    }

    /// kubectl's `--disable-compression` and the cluster's
    /// `disable-compression`, either of which turns compression off.
    #[test]
    fn compression_is_off_when_the_flag_or_the_kubeconfig_says_so() {
        let off = |flags: &[&str], context| cluster(&effective(flags, context).unwrap());
        assert_eq!(off(&[], None).disable_compression, None);
        assert_eq!(
            off(&["--disable-compression"], None).disable_compression,
            Some(true)
        );
        assert_eq!(off(&[], Some("b")).disable_compression, Some(true));
    }

    #[test]
    fn server_replaces_the_server_and_the_kubeconfigs_tls_server_name() {
        let k = effective(&["-s", "https://other:443"], None).unwrap();
        let c = cluster(&k);
        assert_eq!(c.server.as_deref(), Some("https://other:443"));
        assert_eq!(c.tls_server_name, None);
        assert_eq!(c.certificate_authority_data.as_deref(), Some("Q0E="));
        let k = effective(&["-s", "https://x", "--tls-server-name", "n"], None).unwrap();
        assert_eq!(cluster(&k).tls_server_name.as_deref(), Some("n"));
    }

    #[test]
    fn a_ca_flag_or_insecure_replaces_all_the_clusters_ca_settings() {
        let k = effective(&["--certificate-authority", "/ca.pem"], None).unwrap();
        let c = cluster(&k);
        assert_eq!(c.certificate_authority.as_deref(), Some("/ca.pem"));
        assert_eq!(c.certificate_authority_data, None);
        assert_eq!(c.insecure_skip_tls_verify, Some(false));
        let k = effective(&["--insecure-skip-tls-verify"], None).unwrap();
        let c = cluster(&k);
        assert_eq!(c.certificate_authority_data, None);
        assert_eq!(c.insecure_skip_tls_verify, Some(true));
    }

    #[test]
    fn token_replaces_other_credentials_but_not_the_client_certificate() {
        let k = effective(&["--token", "t"], Some("b")).unwrap();
        let u = user(&k);
        assert!(u.exec.is_none());
        assert!(u.token.is_some());
        let k = effective(&["--token", "t"], None).unwrap();
        assert!(user(&k).client_certificate_data.is_some());
        let k = effective(&["--client-certificate", "/c", "--client-key", "/k"], None).unwrap();
        let u = user(&k);
        assert_eq!(u.client_certificate.as_deref(), Some("/c"));
        assert_eq!(u.client_certificate_data, None);
        assert_eq!(u.client_key.as_deref(), Some("/k"));
        assert!(u.client_key_data.is_none());
    }

    #[test]
    fn user_cluster_and_impersonation_flags() {
        let k = effective(&["--user", "bob", "--cluster", "two"], None).unwrap();
        assert!(user(&k).exec.is_some());
        assert_eq!(cluster(&k).server.as_deref(), Some("https://two:6443"));
        let k = effective(
            &[
                "--as",
                "u",
                "--as-group",
                "g1",
                "--as-group",
                "g2",
                "--as-uid",
                "7",
            ],
            None,
        )
        .unwrap();
        let u = user(&k);
        assert_eq!(u.impersonate.as_deref(), Some("u"));
        assert_eq!(u.impersonate_groups, Some(vec!["g1".into(), "g2".into()]));
        assert_eq!(u.impersonate_uid.as_deref(), Some("7"));
    }

    #[test]
    fn missing_entries_are_errors_naming_them() {
        for (flags, ctx, want) in [
            (
                &["--user", "carol"][..],
                None,
                "user \"carol\" does not exist",
            ),
            (
                &["--cluster", "three"][..],
                None,
                "cluster \"three\" does not exist",
            ),
            (&[][..], Some("c"), "context \"c\" does not exist"),
        ] {
            let e = effective(flags, ctx).unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
        }
    }

    #[test]
    fn impersonating_groups_or_a_uid_needs_a_user_as_clientcmd_says() {
        for flags in [&["--as-group", "g"][..], &["--as-uid", "7"]] {
            let e = effective(flags, None).unwrap_err();
            assert!(e.is::<crate::app::exit::Usage>(), "{flags:?}: {e}");
            assert!(
                e.to_string().starts_with(
                    "requesting uid, groups or user-extra for alice without impersonating a user"
                ),
                "{flags:?}: {e}"
            );
        }
        assert!(effective(&["--as", "u", "--as-group", "g"], None).is_ok());
        // The kubeconfig's own impersonation counts as clientcmd merges it.
        let mut kc = Kubeconfig::from_yaml(KC).unwrap();
        if let Some(u) = kc.auth_infos[0].auth_info.as_mut() {
            u.impersonate = Some("u".into());
        }
        let cli =
            crate::app::cli::Cli::try_parse_from(["kwatch", "pods", "--as-group", "g"]).unwrap();
        assert!(effective_kubeconfig(&kc, None, &cli.watch.cluster).is_ok());
    }

    #[test]
    fn a_ca_with_insecure_in_the_kubeconfig_is_refused_unless_a_flag_replaces_them() {
        let kc = Kubeconfig::from_yaml(&KC.replace(
            "    tls-server-name: one.internal",
            "    tls-server-name: one.internal\n    insecure-skip-tls-verify: true",
        ))
        .unwrap();
        let with = |flags: &[&str]| {
            let mut argv = vec!["kwatch", "pods"];
            argv.extend_from_slice(flags);
            let cli = crate::app::cli::Cli::try_parse_from(argv).unwrap();
            effective_kubeconfig(&kc, None, &cli.watch.cluster)
        };
        let e = with(&[]).unwrap_err().to_string();
        assert!(
            e.starts_with(
                "specifying a root certificates file with the insecure flag is not allowed"
            ),
            "{e}"
        );
        assert!(with(&["--insecure-skip-tls-verify"]).is_ok());
        assert!(with(&["--certificate-authority", "/ca.pem"]).is_ok());
    }

    #[cfg(not(feature = "sim"))]
    #[tokio::test]
    async fn without_the_simulator_sim_fails_with_one_line() {
        let e = LocalSim::start().await.unwrap_err();
        assert_eq!(format!("{e:#}"), NO_SIMULATOR);
        let cli = crate::app::cli::Cli::try_parse_from(["kwatch", "pods"]).unwrap();
        let e = effective_kubeconfig(&Kubeconfig::default(), None, &cli.watch.cluster)
            .unwrap_err()
            .to_string();
        assert!(!e.contains("--sim"), "{e}");
    }

    #[test]
    fn a_server_without_a_scheme_gets_one_as_client_go_gives_it() {
        let url = |s: &str, tls: bool| server_url(s, tls, "--server").map_err(|e| e.to_string());
        for (server, tls, want) in [
            ("127.0.0.1:6443", true, "https://127.0.0.1:6443"),
            ("localhost:6443", true, "https://localhost:6443"),
            ("localhost:6443", false, "http://localhost:6443"),
            ("10.0.0.1", true, "https://10.0.0.1"),
            ("[::1]:6443", true, "https://[::1]:6443"),
            ("https://h:443/", false, "https://h:443"),
            (
                "http://h:80/k8s/clusters/c-1",
                true,
                "http://h:80/k8s/clusters/c-1",
            ),
        ] {
            assert_eq!(url(server, tls).as_deref(), Ok(want), "{server}");
        }
        for (server, why) in [
            ("127.0.0.1:6443/x", "host must be a URL or a host:port pair"),
            ("127.0.0.1:99999", "invalid port \"99999\""),
            ("ftp://h", "unsupported scheme \"ftp\""),
            ("", "it is empty"),
            ("ht tp://x", "spaces or control characters"),
            ("https://", "host must be a URL"),
            ("https://u:p@h", "user information"),
            ("h\u{7}:1", "control characters"),
            ("exämple:1", "host must be a URL"),
        ] {
            let e = url(server, true).unwrap_err();
            assert!(e.contains(why), "{server:?}: {e}");
            assert!(
                e.contains("(--server)") && e.contains("https://HOST[:PORT]"),
                "{e}"
            );
            assert!(!e.contains('\n'), "{e}");
        }
        let huge = url(&"9".repeat(100_000), true).unwrap_err();
        assert!(huge.len() < 400, "{}", huge.len());
    }

    #[test]
    fn the_scheme_follows_the_tls_settings_of_the_cluster_and_user() {
        let server = |flags: &[&str]| {
            let mut argv = vec!["kwatch", "pods", "-s", "127.0.0.1:6443"];
            argv.extend_from_slice(flags);
            let cli = crate::app::cli::Cli::try_parse_from(argv).unwrap();
            let k = effective_kubeconfig(&Kubeconfig::default(), None, &cli.watch.cluster);
            cluster(&k.unwrap()).server.unwrap()
        };
        assert_eq!(server(&["--token", "t"]), "http://127.0.0.1:6443");
        assert_eq!(
            server(&["--insecure-skip-tls-verify"]),
            "https://127.0.0.1:6443"
        );
        let e = effective(&["-s", "h:1/p"], None).unwrap_err().to_string();
        assert!(e.contains("\"h:1/p\" (--server)"), "{e}");
        let mut kc = Kubeconfig::from_yaml(KC).unwrap();
        kc.clusters[0].cluster.as_mut().unwrap().server = Some("one:6443".into());
        let cli = crate::app::cli::Cli::try_parse_from(["kwatch", "pods"]).unwrap();
        let k = effective_kubeconfig(&kc, None, &cli.watch.cluster).unwrap();
        assert_eq!(cluster(&k).server.as_deref(), Some("https://one:6443"));
        kc.clusters[0].cluster.as_mut().unwrap().server = Some("one:x".into());
        let e = effective_kubeconfig(&kc, None, &cli.watch.cluster)
            .unwrap_err()
            .to_string();
        assert!(e.contains("(the kubeconfig's cluster \"one\")"), "{e}");
    }

    #[test]
    fn an_empty_kubeconfig_needs_a_server() {
        let cli = crate::app::cli::Cli::try_parse_from(["kwatch", "pods"]).unwrap();
        let e = effective_kubeconfig(&Kubeconfig::default(), None, &cli.watch.cluster)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--server"), "{e}");
        let cli = crate::app::cli::Cli::try_parse_from([
            "kwatch",
            "pods",
            "-s",
            "https://h",
            "--token",
            "t",
        ])
        .unwrap();
        let k = effective_kubeconfig(&Kubeconfig::default(), None, &cli.watch.cluster).unwrap();
        assert_eq!(cluster(&k).server.as_deref(), Some("https://h"));
    }
}
