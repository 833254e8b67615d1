//! `--probe NAMESPACE`: write-to-delta latency. kwatch creates one ConfigMap of its own
//! there (`kwatch-probe-<random>`, labelled [`LABEL`]), patches it every `--probe-interval`
//! with the send time and a sequence number, and times each patch until its `Updated`
//! delta pops from an informer of its own (reflector → DeltaFIFO → store, as the watched
//! resources have, filtered to that one name, printed nowhere). Each measurement is one
//! `Latency` record ([`Observation::Latency`], made in [`Measured::record`] only),
//! counted by `--stats`.
//!
//! Writes go through kube's `Api<ConfigMap>`. Before anything is written, the rights are
//! asked as `kubectl auth can-i` does (a SelfSubjectAccessReview per verb); a server that
//! does not answer those is tested by the create and a first patch themselves. Nothing is
//! written unless `--probe` is given. The ConfigMap is deleted by [`Probe::remove`], which
//! `watch.rs` calls on every way a watch ends; a leftover of a crashed run (the label,
//! last written more than [`STALE_INTERVALS`] of its interval or ours ago) is deleted at
//! start.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Result;
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::Api;
use serde::Deserialize;
use serde_json::json;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use crate::app::config::Probe as ProbeConfig;
use crate::app::exit::Worded;
use crate::app::run::{Shared, Stop};
use crate::cache::delta::DeltaType;
use crate::cache::delta_fifo::DeltaFifo;
use crate::cache::listwatch::SourceError;
use crate::cache::queue::{Popped, Queue};
use crate::cache::reflector::{Reflector, ReflectorConfig};
use crate::cache::store::Store;
use crate::client::http::kube_error;
use crate::client::source::KubeSource;
use crate::client::target::Resource;
use crate::context::ContextName;
use crate::informer::freshness::Latency;
use crate::informer::record::{Notice, Observation};

/// The label that marks a probe's ConfigMap (`kubectl get cm -l kwatch.io/probe=true`).
pub const LABEL: &str = "kwatch.io/probe";
/// The write's number.
const SEQ: &str = "kwatch.io/probe-seq";
/// When the write was sent, RFC 3339 with nanoseconds.
const SENT: &str = "kwatch.io/probe-sent";
/// The interval of the run that writes it, in milliseconds (for the leftover rule).
const INTERVAL: &str = "kwatch.io/probe-interval-ms";
/// A probe ConfigMap not written for this many intervals (its own or ours, the longer)
/// is a crashed run's: a live run writes one every interval.
pub const STALE_INTERVALS: u32 = 3;
/// How long one write or delete may take before kwatch gives up on it.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// Writes whose delta has not popped after this many intervals are forgotten.
const FORGET_AFTER_INTERVALS: u32 = 30;

/// One probe ConfigMap, created; [`Probe::remove`] deletes it.
pub(crate) struct Probe {
    api: Api<ConfigMap>,
    client: kube::Client,
    namespace: String,
    name: String,
    /// The cluster's URL, for kubectl's words of an error (`kubectl_message`).
    server: String,
    interval: Duration,
    /// The kubeconfig context, when several are watched (records say which).
    context: Option<ContextName>,
    /// Writes sent and not yet seen popping: sequence number → (sent at, RFC 3339).
    pending: Arc<Mutex<BTreeMap<u64, (Instant, String)>>>,
}

impl Probe {
    /// Checks the rights, deletes leftovers of crashed runs, creates the ConfigMap and
    /// writes it once (so a missing `patch` right shows now). Nothing runs yet: see
    /// [`Probe::spawn`].
    pub(crate) async fn create(
        client: kube::Client,
        server: &str,
        cfg: &ProbeConfig,
        context: Option<ContextName>,
    ) -> Result<Probe> {
        let ns = cfg.namespace.as_str();
        for verb in ["create", "patch", "delete"] {
            if let Some(denied) = can_i(&client, verb, ns).await {
                return Err(forbidden(verb, ns, &denied));
            }
        }
        let api: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
        remove_leftovers(&api, ns, server, cfg.interval).await?;
        let name = format!("kwatch-probe-{}", crate::text::name_suffix());
        let mut cm: ConfigMap = serde_json::from_value(json!({
            "metadata": {
                "name": name,
                "labels": {LABEL: "true", "app.kubernetes.io/managed-by": "kwatch"},
                "annotations": annotations(0, &now_rfc3339(), cfg.interval),
            },
        }))?;
        cm.data = Some(BTreeMap::from([(
            "about".to_owned(),
            "kwatch --probe writes here to time write-to-delta latency; deleted when it exits"
                .to_owned(),
        )]));
        match timed(api.create(&PostParams::default(), &cm)).await {
            Ok(_) => {}
            Err(e) => return Err(write_error("create", ns, None, &e, server)),
        }
        let probe = Probe {
            api,
            client,
            namespace: ns.to_owned(),
            name,
            server: server.to_owned(),
            interval: cfg.interval,
            context,
            pending: Arc::default(),
        };
        // Write 0: not timed (the informer is not running yet), it shows a missing
        // `patch` right before anything else starts.
        if let Err(e) = probe.write(0).await {
            probe.remove().await;
            return Err(write_error("patch", ns, Some(&probe.name), &e, server));
        }
        Ok(probe)
    }

    /// `namespace/name` of the ConfigMap.
    fn id(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// Patches write `seq` with the time now; returns when the server answered.
    async fn write(&self, seq: u64) -> Result<(), SourceError> {
        let sent = now_rfc3339();
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(seq, (Instant::now(), sent.clone()));
        let patch = json!({"metadata": {"annotations": annotations(seq, &sent, self.interval)}});
        let params = PatchParams::default();
        timed(self.api.patch(&self.name, &params, &Patch::Merge(&patch)))
            .await
            .map(|_| ())
    }

    /// Starts the probe's informer and its writer, into `tasks` (aborted when the watch
    /// ends, before [`Probe::remove`]). A write the server refuses, or an informer that
    /// cannot watch, ends the run through `stop`.
    pub(crate) fn spawn(
        self: &Arc<Self>,
        shared: &Arc<Shared>,
        stop: &mpsc::UnboundedSender<Stop>,
        request_timeout: Option<Duration>,
        tasks: &mut JoinSet<()>,
    ) {
        let store = Arc::new(Store::new());
        let queue = Arc::new(DeltaFifo::new(Some(store.clone()), true));
        let source = KubeSource::new(
            self.client.clone(),
            format!("/api/v1/namespaces/{}/configmaps", self.namespace),
            None,
            Some(format!("metadata.name={}", self.name)),
            request_timeout,
        )
        .with_type("ConfigMap", "v1");
        let reflector = Reflector::new(source, queue.clone(), ReflectorConfig::default());
        let (me, failed) = (self.clone(), stop.clone());
        tasks.spawn(async move {
            let err = reflector.run().await;
            let line = format!(
                "error: --probe cannot watch its ConfigMap {}: {}",
                me.id(),
                err.kubectl_message(&me.server)
            );
            let _ = failed.send(Stop::Failed(anyhow::Error::new(Worded(line))));
        });
        let (me, shared2) = (self.clone(), shared.clone());
        tasks.spawn(async move { me.measure(queue, store, shared2).await });
        let (me, failed) = (self.clone(), stop.clone());
        tasks.spawn(async move {
            let err = me.write_every_interval().await;
            let _ = failed.send(Stop::Failed(err));
        });
    }

    /// Patches the ConfigMap every interval until a write is refused (returned).
    async fn write_every_interval(&self) -> anyhow::Error {
        let start = tokio::time::Instant::now() + self.interval;
        let mut tick = tokio::time::interval_at(start, self.interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        for seq in 1.. {
            tick.tick().await;
            self.forget_old();
            match self.write(seq).await {
                Ok(()) => {}
                Err(e) if e.api().is_some_and(|s| s.code == 403 || s.code == 404) => {
                    let (ns, name) = (&self.namespace, Some(self.name.as_str()));
                    return write_error("patch", ns, name, &e, &self.server);
                }
                Err(e) => tracing::warn!(
                    "--probe: write {seq} to {} failed: {}",
                    self.id(),
                    e.kubectl_message(&self.server)
                ),
            }
        }
        anyhow::anyhow!("--probe ran out of sequence numbers")
    }

    /// Forgets writes sent too long ago to be waited for (a lost event, a failed write).
    fn forget_old(&self) {
        let horizon = self.interval * FORGET_AFTER_INTERVALS;
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        pending.retain(|_, (at, _)| at.elapsed() < horizon);
    }

    /// Pops the probe's informer: each `Updated` delta carrying a pending write's number
    /// is that write seen, and makes one Latency record.
    async fn measure(&self, queue: Arc<DeltaFifo<Notice>>, store: Arc<Store>, shared: Arc<Shared>) {
        let resource = Resource {
            name: "configmaps".into(),
            kind: "ConfigMap".into(),
            api_version: "v1".into(),
            namespaced: true,
        };
        loop {
            let popped = queue.pop_with(|p| match p {
                Popped::Deltas { deltas, .. } => {
                    store.apply(&deltas);
                    deltas
                        .iter()
                        .filter(|d| d.kind == DeltaType::Updated)
                        .filter_map(|d| d.object.object().and_then(|o| seq_of(o.raw())))
                        .collect()
                }
                // The reflector's own records: printed nowhere.
                _ => Vec::new(),
            });
            let Some(seen) = popped.await else {
                return;
            };
            let popped_at = Instant::now();
            for seq in seen {
                let sent = self
                    .pending
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&seq);
                if let Some((at, sent)) = sent {
                    let m = Measured {
                        seq,
                        sent,
                        latency: popped_at.saturating_duration_since(at),
                    };
                    let ev = m.record(self.id());
                    shared.print_observation(&resource, self.context.as_ref(), &ev);
                }
            }
        }
    }

    /// Deletes the ConfigMap; a failure is one `~` line on stderr saying how to delete it.
    pub(crate) async fn remove(&self) {
        let answer = timed(self.api.delete(&self.name, &DeleteParams::default())).await;
        match answer {
            Ok(_) => {}
            Err(e) if is_not_found(&e) => {}
            Err(e) => {
                let line = format!(
                    "~ --probe could not delete its ConfigMap {}: {}; delete it with `kubectl \
                     delete configmap -n {} {}`",
                    self.id(),
                    e.kubectl_message(&self.server),
                    self.namespace,
                    self.name
                );
                let _ = writeln!(std::io::stderr(), "{}", crate::text::sanitize(&line));
            }
        }
    }
}

/// One write seen by the probe's informer.
struct Measured {
    seq: u64,
    sent: String,
    latency: Duration,
}

impl Measured {
    /// The Latency record: the one place probe latencies are made (a metrics histogram
    /// observes `latency` here).
    fn record(self, probe: String) -> Observation {
        Observation::Latency(Latency {
            probe,
            seq: self.seq,
            sent: self.sent,
            // Microseconds: what the record's `ms` carries.
            latency: Duration::from_micros(
                u64::try_from(self.latency.as_micros()).unwrap_or(u64::MAX),
            ),
        })
    }
}

/// The probe's annotations for write `seq`, sent at `sent`.
fn annotations(seq: u64, sent: &str, interval: Duration) -> serde_json::Value {
    json!({SEQ: seq.to_string(), SENT: sent, INTERVAL: interval.as_millis().to_string()})
}

/// Now, as RFC 3339 in UTC with nanoseconds (`2026-11-23T10:00:01.123456789Z`).
fn now_rfc3339() -> String {
    format!("{:.9}", jiff::Timestamp::now())
}

/// The probe's annotations as they are read back.
#[derive(Deserialize)]
struct Annotated {
    #[serde(default)]
    metadata: AnnotatedMeta,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct AnnotatedMeta {
    #[serde(default)]
    annotations: BTreeMap<String, String>,
    #[serde(default)]
    creation_timestamp: Option<String>,
}

/// The write number an object carries, if it is a probe's.
fn seq_of(raw: &str) -> Option<u64> {
    let a: Annotated = serde_json::from_str(raw).ok()?;
    a.metadata.annotations.get(SEQ)?.parse().ok()
}

/// Whether a probe ConfigMap (its JSON) is a crashed run's at `now`: last written (its
/// send time, else its creation) more than [`STALE_INTERVALS`] of the longer of its
/// interval and `ours` ago, or carrying no time kwatch can read.
fn is_leftover(raw: &serde_json::Value, ours: Duration, now: jiff::Timestamp) -> bool {
    let Ok(a) = serde_json::from_value::<Annotated>(raw.clone()) else {
        return true;
    };
    let meta = a.metadata;
    let theirs = meta
        .annotations
        .get(INTERVAL)
        .and_then(|ms| ms.parse().ok())
        .map_or(Duration::ZERO, Duration::from_millis);
    let last = meta
        .annotations
        .get(SENT)
        .or(meta.creation_timestamp.as_ref())
        .and_then(|t| t.parse::<jiff::Timestamp>().ok());
    let Some(last) = last else {
        return true;
    };
    let quiet = now.duration_since(last);
    let limit = ours.max(theirs) * STALE_INTERVALS;
    jiff::SignedDuration::try_from(limit).is_ok_and(|limit| quiet > limit)
}

/// Deletes the crashed runs' probe ConfigMaps in the namespace (see [`is_leftover`]);
/// each one deleted is a `~` line.
async fn remove_leftovers(
    api: &Api<ConfigMap>,
    ns: &str,
    server: &str,
    interval: Duration,
) -> Result<()> {
    let params = ListParams::default().labels(&format!("{LABEL}=true"));
    let list = timed(api.list(&params))
        .await
        .map_err(|e| write_error("list", ns, None, &e, server))?;
    let now = jiff::Timestamp::now();
    for cm in list.items {
        let Some(name) = cm.metadata.name.clone() else {
            continue;
        };
        if !is_leftover(&serde_json::to_value(&cm)?, interval, now) {
            continue;
        }
        match timed(api.delete(&name, &DeleteParams::default())).await {
            Ok(_) => {
                let _ = writeln!(std::io::stderr(), "{}", leftover_deleted(ns, &name));
            }
            Err(e) if is_not_found(&e) => {}
            Err(e) => return Err(write_error("delete", ns, Some(&name), &e, server)),
        }
    }
    Ok(())
}

/// The `~` line for a crashed run's ConfigMap deleted at start.
fn leftover_deleted(ns: &str, name: &str) -> String {
    let line = format!(
        "~ --probe deleted {ns}/{name}, left by a run that ended without deleting it (killed, \
         or cut off from the server)"
    );
    crate::text::sanitize(&line).into_owned()
}

fn is_not_found(e: &SourceError) -> bool {
    e.api().is_some_and(|s| s.code == 404)
}

/// `kubectl auth can-i VERB configmaps -n NS`: `Some(reason)` when the server says no;
/// `None` when it says yes or cannot say (it serves no SelfSubjectAccessReview: the
/// writes themselves will tell).
async fn can_i(client: &kube::Client, verb: &str, ns: &str) -> Option<String> {
    let review = SelfSubjectAccessReview {
        spec: SelfSubjectAccessReviewSpec {
            resource_attributes: Some(ResourceAttributes {
                namespace: Some(ns.to_owned()),
                verb: Some(verb.to_owned()),
                resource: Some("configmaps".to_owned()),
                ..Default::default()
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    let api: Api<SelfSubjectAccessReview> = Api::all(client.clone());
    match timed(api.create(&PostParams::default(), &review)).await {
        Ok(r) => {
            let status = r.status?;
            (!status.allowed).then(|| status.reason.unwrap_or_default())
        }
        Err(e) => {
            let e = e.kubectl_message("");
            tracing::info!("--probe: no SelfSubjectAccessReview ({e}): the writes will tell");
            None
        }
    }
}

/// The one line for a `--probe` request that failed: the server's refusal in kubectl's
/// words (`Error from server (NotFound): namespaces "x" not found`), or a missing right.
fn write_error(
    verb: &str,
    ns: &str,
    name: Option<&str>,
    e: &SourceError,
    server: &str,
) -> anyhow::Error {
    match e.api() {
        Some(s) if s.code == 403 => forbidden(verb, ns, &s.message),
        _ => {
            let what = name.map_or_else(|| "configmaps".to_owned(), |n| format!("configmap {n}"));
            let line = format!(
                "error: --probe cannot {verb} {what} in the namespace {ns:?}: {}",
                e.kubectl_message(server)
            );
            anyhow::Error::new(Worded(crate::text::sanitize(&line).into_owned()))
        }
    }
}

/// The line for a missing right: the verb, the server's reason, and how to check.
fn forbidden(verb: &str, ns: &str, reason: &str) -> anyhow::Error {
    let reason = if reason.is_empty() {
        String::new()
    } else {
        format!(" ({reason})")
    };
    anyhow::Error::new(Worded(format!(
        "error: --probe needs to {verb} configmaps in the namespace {ns:?} and may not{reason}: \
         it creates, patches and deletes one ConfigMap there; check with `kubectl auth can-i \
         {verb} configmaps -n {ns}`, or probe another namespace"
    )))
}

/// A probe request, given up after [`WRITE_TIMEOUT`]; its error as the request layer's.
async fn timed<T>(
    f: impl std::future::Future<Output = Result<T, kube::Error>>,
) -> Result<T, SourceError> {
    match tokio::time::timeout(WRITE_TIMEOUT, f).await {
        Ok(r) => r.map_err(kube_error),
        Err(_) => Err(SourceError::Transport(format!(
            "no answer within {WRITE_TIMEOUT:?}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cm(annotations: serde_json::Value, created: &str) -> serde_json::Value {
        json!({"metadata": {"name": "kwatch-probe-x", "creationTimestamp": created,
                            "annotations": annotations}})
    }

    #[test]
    fn leftovers_are_probes_not_written_for_three_intervals() {
        let now: jiff::Timestamp = "2026-11-23T10:00:00Z".parse().unwrap();
        let two = Duration::from_secs(2);
        let written =
            |sent: &str, ms: &str| cm(json!({SENT: sent, INTERVAL: ms}), "2026-11-23T09:00:00Z");
        // Ours is 2s: 6s of silence is the limit.
        assert!(!is_leftover(
            &written("2026-11-23T09:59:55.5Z", "2000"),
            two,
            now
        ));
        assert!(is_leftover(
            &written("2026-11-23T09:59:53.9Z", "2000"),
            two,
            now
        ));
        // A live run with a longer interval keeps its probe.
        assert!(!is_leftover(
            &written("2026-11-23T09:59:00Z", "60000"),
            two,
            now
        ));
        // No send time: its creation counts; nothing readable: a leftover.
        assert!(is_leftover(
            &cm(json!({}), "2026-11-23T09:00:00Z"),
            two,
            now
        ));
        assert!(!is_leftover(
            &cm(json!({}), "2026-11-23T09:59:59Z"),
            two,
            now
        ));
        assert!(is_leftover(&json!({"metadata": {}}), two, now));
    }

    #[test]
    fn the_write_number_is_read_from_the_annotation() {
        assert_eq!(
            seq_of(r#"{"metadata":{"annotations":{"kwatch.io/probe-seq":"12"}}}"#),
            Some(12)
        );
        assert_eq!(seq_of(r#"{"metadata":{"name":"other"}}"#), None);
        let sent = now_rfc3339();
        assert_eq!(sent.len(), "2026-11-23T10:00:01.123456789Z".len(), "{sent}");
    }
}
