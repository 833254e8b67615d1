//! The churn generator: the simulated cluster's life after its seed ([`super::seed`]), and
//! the [`Pacer`] that paces it (and the benchmark's flood).
//!
//! Churn is deterministic for a seed: the sequence of operations depends only on the seeded
//! generator and on the store (which only churn writes unless a client does). Pods
//! ([`super::pods`]) go Pending → Running, restart, and get deleted.

use std::sync::Arc;
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde_json::json;

use super::pods::{pod, running_status, suffix, NODE_NAMES, WORKLOADS};
use super::resources::{CONFIGMAPS, DEPLOYMENTS, PODS, REPLICASETS, WIDGETS};
use super::storage::{now_rfc3339, Store};
use super::App;

/// State of the churn generator: which pods it knows and in which phase.
struct Churner {
    rng: SmallRng,
    target: usize,
    counter: u64,
    /// Pods churn created that are still Pending, oldest first (they get scheduled in order).
    pending: std::collections::VecDeque<String>,
}

impl Churner {
    /// A churner seeded with `seed`, keeping about `target` pods (at least 5).
    fn new(seed: u64, target: usize) -> Churner {
        Churner {
            pending: Default::default(),
            rng: SmallRng::seed_from_u64(seed),
            target: target.max(5),
            counter: 0,
        }
    }

    fn rs_uid(store: &Store, w: usize) -> String {
        let (ns, app, hash, _, _) = WORKLOADS[w];
        store
            .get(REPLICASETS, &format!("{ns}/{app}-{hash}"))
            .map(|o| o.uid.clone())
            .unwrap_or_default()
    }

    fn pick_pod(&mut self, store: &Store, phase: Option<&str>) -> Option<String> {
        let n = store.len(PODS);
        if n == 0 {
            return None;
        }
        // Sample a few random keys: by position in small stores, else from a random point of
        // the key space (O(log n)).
        for _ in 0..8 {
            let key = if n <= 256 {
                let i = self.rng.random_range(0..n);
                store.keys(PODS).nth(i)
            } else {
                let (ns, app, hash, _, _) = WORKLOADS[self.rng.random_range(0..WORKLOADS.len())];
                let probe = format!("{ns}/{app}-{hash}-{}", suffix(&mut self.rng));
                store.key_at_or_after(PODS, &probe)
            };
            let Some(key) = key else { continue };
            let ok = match phase {
                None => true,
                Some(p) => store.get(PODS, key).is_some_and(|o| o.phase == p),
            };
            if ok {
                return Some(key.to_string());
            }
        }
        None
    }

    /// One change. Errors (a client deleted what churn picked) are ignored.
    fn step(&mut self, store: &mut Store) {
        let pods = store.len(PODS);
        let roll: u32 = if pods < self.target {
            0
        } else {
            self.rng.random_range(0..100)
        };
        self.counter += 1;
        match roll {
            0..=14 => self.create_pod(store),
            15..=44 => self.run_or_touch_pod(store),
            45..=64 => self.restart_container(store),
            65..=79 => self.delete_pod(store),
            80..=89 => self.touch_configmap(store),
            90..=94 => self.set_deployment_ready(store),
            _ => self.churn_widget(store),
        }
    }

    /// A new pod of a random workload, Pending.
    fn create_pod(&mut self, store: &mut Store) {
        let w = self.rng.random_range(0..WORKLOADS.len());
        let (_, app, hash, _, _) = WORKLOADS[w];
        let uid = Churner::rs_uid(store, w);
        let name = format!("{app}-{hash}-{}", suffix(&mut self.rng));
        let v = pod(&mut self.rng, w, &name, &uid, false);
        if let Ok(o) = store.create(PODS, v, true) {
            self.pending.push_back(o.key.clone());
        }
    }

    /// Pending → Running (or another status touch if none is pending).
    fn run_or_touch_pod(&mut self, store: &mut Store) {
        let mut key = None;
        while let Some(k) = self.pending.pop_front() {
            if store.get(PODS, &k).is_some_and(|o| o.phase == "Pending") {
                key = Some(k);
                break;
            }
        }
        let Some(key) = key.or_else(|| self.pick_pod(store, Some("Running"))) else {
            return;
        };
        let Some(o) = store.get(PODS, &key) else {
            return;
        };
        let mut v = o.value();
        let app = v["metadata"]["labels"]["app"]
            .as_str()
            .unwrap_or("web")
            .to_string();
        let w = WORKLOADS.iter().position(|x| x.1 == app).unwrap_or(0);
        let image = WORKLOADS[w].3;
        let node = NODE_NAMES[self.rng.random_range(0..NODE_NAMES.len())];
        let ip = format!(
            "10.244.{}.{}",
            self.rng.random_range(0..4),
            self.rng.random_range(2..250)
        );
        let restarts = v["status"]["containerStatuses"][0]["restartCount"]
            .as_i64()
            .unwrap_or(0);
        if v["status"]["phase"] == "Pending" {
            v["spec"]["nodeName"] = json!(node);
            v["status"] = running_status(&now_rfc3339(), node, &ip, &app, image, restarts);
        } else {
            v["metadata"]["annotations"] =
                json!({"sim.kwatch.dev/heartbeat": self.counter.to_string()});
        }
        let _ = store.update(PODS, &key, v);
    }

    /// A container restart of a running pod.
    fn restart_container(&mut self, store: &mut Store) {
        let Some(key) = self.pick_pod(store, Some("Running")) else {
            return;
        };
        let Some(o) = store.get(PODS, &key) else {
            return;
        };
        let mut v = o.value();
        let now = now_rfc3339();
        let cs = &mut v["status"]["containerStatuses"][0];
        let n = cs["restartCount"].as_i64().unwrap_or(0) + 1;
        cs["restartCount"] = json!(n);
        cs["lastState"] = json!({"terminated": {"exitCode": 137, "reason": "OOMKilled", "startedAt": now, "finishedAt": now, "containerID": "containerd://4c3ed7e9d7b1"}});
        cs["state"] = json!({"running": {"startedAt": now}});
        let _ = store.update(PODS, &key, v);
    }

    /// A pod deleted.
    fn delete_pod(&mut self, store: &mut Store) {
        let Some(key) = self.pick_pod(store, None) else {
            return;
        };
        let _ = store.delete(PODS, &key);
    }

    /// `default/app-config` changed.
    fn touch_configmap(&mut self, store: &mut Store) {
        if let Some(o) = store.get(CONFIGMAPS, "default/app-config") {
            let mut v = o.value();
            v["data"]["generation"] = json!(self.counter.to_string());
            let _ = store.update(CONFIGMAPS, "default/app-config", v);
        }
    }

    /// A deployment's ready replicas changed.
    fn set_deployment_ready(&mut self, store: &mut Store) {
        let (ns, app, _, _, _) = WORKLOADS[self.rng.random_range(0..WORKLOADS.len())];
        let key = format!("{ns}/{app}");
        if let Some(o) = store.get(DEPLOYMENTS, &key) {
            let mut v = o.value();
            let ready = self.rng.random_range(1..=3);
            v["status"]["readyReplicas"] = json!(ready);
            v["status"]["availableReplicas"] = json!(ready);
            let _ = store.update(DEPLOYMENTS, &key, v);
        }
    }

    /// The widget `default/w2` resized, deleted or created again.
    fn churn_widget(&mut self, store: &mut Store) {
        let key = "default/w2";
        match store.get(WIDGETS, key) {
            Some(o) if self.rng.random_bool(0.7) => {
                let mut v = o.value();
                v["spec"]["size"] = json!(self.rng.random_range(1..10));
                let _ = store.update(WIDGETS, key, v);
            }
            Some(_) => {
                let _ = store.delete(WIDGETS, key);
            }
            None => {
                let w = json!({"metadata": {"name": "w2", "namespace": "default"}, "spec": {"size": 5, "color": "blue"}});
                let _ = store.create(WIDGETS, w, true);
            }
        }
    }
}

/// Paces changes at a rate set through a watch channel (the control API's switches):
/// fractions of a change carry over from one tick to the next.
pub(crate) struct Pacer {
    rate_rx: tokio::sync::watch::Receiver<f64>,
    owed: f64,
    last: tokio::time::Instant,
}

impl Pacer {
    pub fn new(rate_rx: tokio::sync::watch::Receiver<f64>) -> Pacer {
        Pacer {
            rate_rx,
            owed: 0.0,
            last: tokio::time::Instant::now(),
        }
    }

    /// The rate, once it is positive (nothing is owed for the time it was not); `None`
    /// when the switch is gone.
    pub async fn rate(&mut self) -> Option<f64> {
        loop {
            let rate = *self.rate_rx.borrow_and_update();
            if rate > 0.0 {
                return Some(rate);
            }
            self.rate_rx.changed().await.ok()?;
            self.last = tokio::time::Instant::now();
        }
    }

    /// After `tick` (or as soon as the rate changes: then 0), the whole changes owed at
    /// `rate` since the last call; `None` when the switch is gone.
    pub async fn owed(&mut self, rate: f64, tick: Duration) -> Option<usize> {
        tokio::select! {
            _ = tokio::time::sleep(tick) => {}
            r = self.rate_rx.changed() => {
                r.ok()?;
                return Some(0);
            }
        }
        let now = tokio::time::Instant::now();
        self.owed += rate * (now - self.last).as_secs_f64();
        self.last = now;
        let n = self.owed.floor();
        self.owed -= n;
        Some(n as usize)
    }

    /// Waits `d`, or less if the rate changes; `None` when the switch is gone.
    pub async fn pause(&mut self, d: Duration) -> Option<()> {
        tokio::select! {
            _ = tokio::time::sleep(d) => Some(()),
            r = self.rate_rx.changed() => r.ok(),
        }
    }
}

/// Runs churn until the task is aborted. The rate is read from the control API's switch.
pub async fn run_churn(app: Arc<App>, seed: u64, target: usize) {
    let mut churner = Churner::new(seed, target);
    let mut pacer = Pacer::new(app.faults.churn_rate.subscribe());
    while let Some(rate) = pacer.rate().await {
        let tick = Duration::from_secs_f64((1.0 / rate).clamp(0.01, 1.0));
        let Some(n) = pacer.owed(rate, tick).await else {
            return;
        };
        if n > 0 {
            app.cluster.write(|s| {
                for _ in 0..n.min(100_000) {
                    churner.step(s);
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::seed::seed_cluster;
    use super::super::storage::EventKind;
    use super::*;

    #[test]
    fn churn_creates_schedules_restarts_and_deletes_pods() {
        let mut s = Store::new(100_000);
        seed_cluster(&mut s, 20, 5).unwrap();
        let start = s.rev();
        let mut c = Churner::new(5, 20);
        for _ in 0..400 {
            c.step(&mut s);
        }
        let (changes, _) = s.changes_after(start, 100_000).unwrap();
        let pods: Vec<_> = changes.iter().filter(|c| c.res == PODS).collect();
        let has = |k: EventKind| pods.iter().any(|c| c.kind == k);
        assert!(has(EventKind::Added) && has(EventKind::Deleted));
        let scheduled = pods.iter().any(|c| {
            c.kind == EventKind::Modified
                && c.prev.as_ref().is_some_and(|p| p.phase == "Pending")
                && c.obj.phase == "Running"
        });
        assert!(scheduled, "Pending → Running");
        let restarted = pods.iter().any(|c| {
            c.obj.value()["status"]["containerStatuses"][0]["restartCount"].as_i64() > Some(0)
        });
        assert!(restarted);
        for res in [CONFIGMAPS, DEPLOYMENTS, WIDGETS] {
            assert!(changes.iter().any(|c| c.res == res), "churn touches {res}");
        }
    }

    #[test]
    fn seeding_and_churn_are_deterministic() {
        let run = || {
            let mut s = Store::new(10_000);
            seed_cluster(&mut s, 50, 7).unwrap();
            let mut c = Churner::new(7, 50);
            for _ in 0..500 {
                c.step(&mut s);
            }
            let names: Vec<String> = s.keys(PODS).map(str::to_string).collect();
            (s.rev(), names)
        };
        let (r1, n1) = run();
        let (r2, n2) = run();
        assert_eq!(r1, r2);
        assert_eq!(n1, n2);
        assert!(n1.len() >= 40);
    }
}
