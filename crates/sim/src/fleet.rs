//! `kwatch sim --clusters N`: N simulated clusters in one process, each a [`SimServer`]
//! of its own on its own port (its own CA, token, storage, churn and control API), and one
//! kubeconfig with a context per cluster, `kwatch-sim-1` to `kwatch-sim-N`, for kubectl
//! (`kubectl --context kwatch-sim-2 get ns`) and kwatch (`--context 'kwatch-sim-*'`).

use std::path::Path;

use anyhow::Context as _;
use base64::Engine as _;

use crate::{SimOptions, SimServer};

/// The name of cluster `i` (from 1): its context, cluster and user in the kubeconfig.
pub fn context_name(i: usize) -> String {
    format!("kwatch-sim-{i}")
}

/// Starts `n` clusters from `opts`: cluster `i` (from 1) on `opts.port + i - 1` (each on a
/// free port when `opts.port` is 0), seeded with `opts.seed + i - 1` so that their churn
/// differs; `opts.write_kubeconfig` is left to the caller.
pub async fn start(opts: &SimOptions, n: usize) -> anyhow::Result<Vec<SimServer>> {
    let mut servers = Vec::with_capacity(n);
    for i in 0..n {
        let port = match opts.port {
            0 => 0,
            p => u16::try_from(usize::from(p) + i)
                .with_context(|| format!("cluster {}: no port after {p}", i + 1))?,
        };
        let server = SimServer::start(SimOptions {
            port,
            seed: opts.seed.wrapping_add(i as u64),
            write_kubeconfig: None,
            ..opts.clone()
        })
        .await
        .with_context(|| format!("starting cluster {}", context_name(i + 1)))?;
        servers.push(server);
    }
    Ok(servers)
}

/// One kubeconfig for `servers`: for each, a cluster, a user (its bearer token) and a
/// context named [`context_name`], namespace `default`; the first is the current context.
pub fn kubeconfig_yaml(servers: &[SimServer]) -> String {
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let (mut clusters, mut users, mut contexts) = (String::new(), String::new(), String::new());
    for (i, s) in servers.iter().enumerate() {
        let name = context_name(i + 1);
        clusters.push_str(&format!(
            "- name: {name}\n  cluster:\n    server: {}\n",
            s.url()
        ));
        if let Some(pem) = s.ca_pem() {
            clusters.push_str(&format!("    certificate-authority-data: {}\n", b64(pem)));
        }
        users.push_str(&format!(
            "- name: {name}\n  user:\n    token: {}\n",
            s.token()
        ));
        contexts.push_str(&format!(
            "- name: {name}\n  context:\n    cluster: {name}\n    user: {name}\n    namespace: default\n"
        ));
    }
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n{clusters}users:\n{users}contexts:\n{contexts}\
         current-context: {}\n",
        context_name(1)
    )
}

/// Writes `text` to `path`, created with mode 0600 (it holds the tokens).
fn write_private(path: &Path, text: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("writing {}", path.display()))?;
    f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    f.write_all(text.as_bytes())
        .with_context(|| format!("writing {}", path.display()))
}

/// Runs `n` simulated clusters until Ctrl-C or SIGTERM (`kwatch sim --clusters N`).
pub async fn run(opts: SimOptions, n: usize) -> anyhow::Result<()> {
    let servers = start(&opts, n).await?;
    if let Some(first) = servers.first() {
        eprintln!("kwatch sim: listening on {}", first.url());
    }
    eprintln!(
        "kwatch sim: {n} clusters, {} pods each, one server each:",
        opts.objects
    );
    for (i, s) in servers.iter().enumerate() {
        eprintln!("    {} {}", context_name(i + 1), s.url());
    }
    match &opts.write_kubeconfig {
        Some(path) => {
            write_private(path, &kubeconfig_yaml(&servers))?;
            eprintln!(
                "kwatch sim: kubeconfig written to {} (contexts {} to {})",
                path.display(),
                context_name(1),
                context_name(n)
            );
            eprintln!("kwatch sim: use it with:");
            eprintln!("    export KUBECONFIG={}", path.display());
            eprintln!("    kubectl --context {} get ns", context_name(n));
            eprintln!("    kwatch pods -A --all-contexts");
        }
        None => eprintln!("kwatch sim: pass --write-kubeconfig FILE for a kubeconfig"),
    }
    eprintln!("kwatch sim: Ctrl-C to stop");
    crate::wait_for_signal().await;
    eprintln!("kwatch sim: shutting down");
    futures::future::join_all(servers.into_iter().map(SimServer::shutdown)).await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn one_kubeconfig_names_a_context_per_cluster() {
        let opts = SimOptions {
            objects: 1,
            churn: 0.0,
            ..SimOptions::default()
        };
        let servers = start(&opts, 2).await.unwrap();
        let kc: serde_yaml::Value = serde_yaml::from_str(&kubeconfig_yaml(&servers)).unwrap();
        let names: Vec<&str> = kc["contexts"]
            .as_sequence()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["kwatch-sim-1", "kwatch-sim-2"]);
        assert_eq!(kc["current-context"], "kwatch-sim-1");
        assert_ne!(servers[0].url(), servers[1].url());
        assert_eq!(kc["clusters"][1]["cluster"]["server"], servers[1].url());
        assert_eq!(kc["users"][1]["user"]["token"], servers[1].token());
        for s in servers {
            s.shutdown().await;
        }
    }
}
