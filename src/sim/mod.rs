//! The simulated Kubernetes API server.

use crate::cli::SimArgs;

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
    pub port: u16,
    pub write_kubeconfig: Option<std::path::PathBuf>,
    pub objects: usize,
    pub churn: f64,
    pub seed: u64,
    pub scenario: Scenario,
    pub insecure_http: bool,
    pub history: usize,
}

impl From<SimArgs> for SimOptions {
    fn from(a: SimArgs) -> Self {
        SimOptions {
            port: a.port,
            write_kubeconfig: a.write_kubeconfig,
            objects: a.objects,
            churn: a.churn,
            seed: a.seed,
            scenario: a.scenario,
            insecure_http: a.insecure_http,
            history: a.history,
        }
    }
}

/// Runs the simulated cluster until Ctrl-C.
pub async fn run(_opts: SimOptions) -> anyhow::Result<()> {
    anyhow::bail!("not implemented yet")
}

/// A running simulated cluster (placeholder until the server lands).
pub struct SimServer {
    url: String,
}

impl SimServer {
    pub async fn start(_opts: SimOptions) -> anyhow::Result<SimServer> {
        anyhow::bail!("the simulated cluster is not implemented yet")
    }
    pub fn url(&self) -> &str {
        &self.url
    }
    pub fn kubeconfig_yaml(&self) -> String {
        String::new()
    }
    pub async fn shutdown(self) {}
}

impl SimOptions {
    /// What `kwatch --sim` runs: a small steady cluster on a free port.
    pub fn for_watch() -> SimOptions {
        SimOptions {
            port: 0,
            write_kubeconfig: None,
            objects: 20,
            churn: 2.0,
            seed: rand::random(),
            scenario: Scenario::Steady,
            insecure_http: false,
            history: 10_000,
        }
    }
}
