//! The simulator as the application starts it: `kwatch sim`'s flags resolved into the
//! server's options ([`sim_options`]), and the in-process server `--sim` watches
//! ([`LocalSim`]). Here rather than in [`crate::sim`]: these read clap's arguments, and
//! [`LocalSim`] exists without the cargo feature `sim` too (it then fails with
//! [`NO_SIMULATOR`]), while `crate::sim` is compiled only with it.

#[cfg(feature = "sim")]
use anyhow::Context;
use anyhow::Result;
use kube::config::Kubeconfig;
#[cfg(feature = "sim")]
use std::time::Duration;

/// What `kwatch sim` and `--sim` say in a kwatch built without the cargo feature `sim`.
pub const NO_SIMULATOR: &str =
    "this kwatch was built without the simulator: rebuild with --features sim";

/// The options of `kwatch sim`, resolved.
#[cfg(feature = "sim")]
pub fn sim_options(a: crate::app::cli::SimArgs) -> crate::sim::SimOptions {
    crate::sim::SimOptions {
        port: a.port,
        write_kubeconfig: a.write_kubeconfig,
        objects: a.objects,
        churn: a.churn,
        seed: a.seed,
        scenario: a.scenario,
        insecure_http: a.insecure_http,
        history: a.history,
        uncompacted: a.uncompacted,
        // The flag is finite and ≥ 0 (cli's parser); Duration::from_secs_f64 would panic
        // on a huge value, and under 50 ms bookmarks would flood every watch.
        bookmark_interval: Duration::from_secs_f64(a.bookmark_interval.clamp(0.05, 3600.0)),
        progress_notify: Duration::from_secs_f64(a.progress_notify_interval.clamp(0.05, 86400.0)),
        log_faults: true,
        pod_size: a.pod_size,
        legacy_discovery: a.legacy_discovery,
        cert_shape: a.cert_shape,
        server_version: a.server_version,
        controllers: a.controllers,
        bend: a.bend,
    }
}

/// The cluster `--sim` watches: the simulator started in-process for this one watch,
/// with a random seed and its faults not logged (the watch's own lines say what happens).
#[derive(Debug)]
pub struct LocalSim {
    /// How to reach it; its server lives for this run only, so it gets no discovery cache.
    pub kubeconfig: Kubeconfig,
    #[cfg(feature = "sim")]
    server: crate::sim::SimServer,
}

impl LocalSim {
    /// Starts the server; in a kwatch built without the simulator, fails with
    /// [`NO_SIMULATOR`].
    pub async fn start() -> Result<LocalSim> {
        #[cfg(feature = "sim")]
        {
            let server = crate::sim::SimServer::start(crate::sim::SimOptions {
                seed: rand::random(),
                ..crate::sim::SimOptions::default()
            })
            .await?;
            let kubeconfig = Kubeconfig::from_yaml(&server.kubeconfig_yaml())
                .context("the simulated cluster's kubeconfig")?;
            Ok(LocalSim { kubeconfig, server })
        }
        #[cfg(not(feature = "sim"))]
        anyhow::bail!(NO_SIMULATOR)
    }

    /// Stops the server: its connections are closed.
    pub async fn shutdown(self) {
        #[cfg(feature = "sim")]
        self.server.shutdown().await;
    }
}

#[cfg(all(test, feature = "sim"))]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn sim_bookmark_interval_is_kept_within_bounds() {
        let interval = |v: &str| {
            let cli =
                crate::app::cli::Cli::try_parse_from(["kwatch", "sim", "--bookmark-interval", v])
                    .unwrap();
            match cli.command {
                Some(crate::app::cli::Command::Sim(a)) => sim_options(a).bookmark_interval,
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(interval("0"), Duration::from_millis(50));
        assert_eq!(interval("2.5"), Duration::from_millis(2500));
        assert_eq!(interval("1e300"), Duration::from_secs(3600));
    }
}
