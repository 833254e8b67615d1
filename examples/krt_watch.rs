//! The benchmark's point of comparison (not part of kwatch): kube-runtime's watcher and
//! reflector over `DynamicObject`, as a Rust programmer would write it.
//!
//! `krt_watch KUBECONFIG PLURAL [--events N | --hold]`: lists and watches PLURAL (core
//! group) in all namespaces into a reflector store, prints `synced N` (stderr) when the
//! initial list is in the store and exits; with `--events N` it exits after N further
//! watch events; with `--hold` it keeps watching (and relisting after a 410, printing
//! `synced N` again) until killed, so the benchmark can read its RSS.

use std::time::Instant;

use futures::StreamExt;
use kube::api::{Api, DynamicObject};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::discovery::ApiResource;
use kube::runtime::{reflector, watcher, WatchStreamExt};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), Some(plural)) = (args.get(1), args.get(2)) else {
        anyhow::bail!("usage: krt_watch KUBECONFIG PLURAL [--events N | --hold]");
    };
    let hold = args.get(3).is_some_and(|a| a == "--hold");
    let events: Option<u64> = match args.get(3).map(String::as_str) {
        Some("--events") => Some(args.get(4).map_or(Ok(0), |n| n.parse())?),
        Some("--hold") => Some(u64::MAX),
        _ => None,
    };
    let kc = Kubeconfig::read_from(path)?;
    let mut config =
        kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default()).await?;
    config.read_timeout = None;
    let client = kube::Client::try_from(config)?;
    let kind = match plural.as_str() {
        "pods" => "Pod",
        "configmaps" => "ConfigMap",
        other => anyhow::bail!("unsupported resource {other}"),
    };
    let ar = ApiResource {
        group: String::new(),
        version: "v1".into(),
        api_version: "v1".into(),
        kind: kind.into(),
        plural: plural.clone(),
    };
    let api: Api<DynamicObject> = Api::all_with(client, &ar);
    let writer = reflector::store::Writer::<DynamicObject>::new(ar.clone());
    let reader = writer.as_reader();
    let start = Instant::now();
    let stream = watcher(api, watcher::Config::default()).reflect(writer);
    let mut stream = std::pin::pin!(stream);
    let mut synced = false;
    let mut seen = 0u64;
    while let Some(ev) = stream.next().await {
        let ev = match ev {
            Ok(ev) => ev,
            // A 410 or a cut watch: the watcher relists on the next poll.
            Err(e) if hold => {
                eprintln!("watch error: {e}");
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        match ev {
            watcher::Event::InitDone => {
                synced = true;
                eprintln!("synced {} in {:?}", reader.state().len(), start.elapsed());
                if events.is_none() {
                    return Ok(());
                }
            }
            watcher::Event::Apply(_) | watcher::Event::Delete(_) if synced => {
                seen += 1;
                if events.is_some_and(|n| seen >= n) {
                    eprintln!("{seen} events in {:?}", start.elapsed());
                    return Ok(());
                }
            }
            _ => {}
        }
    }
    Ok(())
}
