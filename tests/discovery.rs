//! Discovery as kubectl does it: aggregated documents when the server offers them, legacy
//! ones otherwise, and kubectl's disk cache (`~/.kube/cache/discovery/<host>/`, 6 hours)
//! shared with the real kubectl in both directions. The simulator counts the discovery
//! requests it answers (`discoveryRequests` in `/_sim/state`).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::util::kwatch::{command, Running};
use crate::util::shared::*;
use crate::util::{SimProcess, LIMIT};

fn requests(sim: &SimProcess) -> u64 {
    sim.state()["discoveryRequests"]
        .as_u64()
        .expect("discoveryRequests in /_sim/state")
}

/// kubectl's directory for this server under `cache` (`127.0.0.1_<port>`).
fn host_dir(sim: &SimProcess, cache: &Path) -> PathBuf {
    let host = sim.url.trim_start_matches("https://").replace(':', "_");
    cache.join("discovery").join(host)
}

fn synced(sim: &SimProcess, args: &[&str]) {
    let mut all = args.to_vec();
    all.extend(["-A", "--until-synced", "-o", "json"]);
    sim.kwatch(&all[..]).exits(0);
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

fn group_names(servergroups: &Value) -> Vec<String> {
    servergroups["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["name"].as_str().unwrap().to_owned())
        .collect()
}

/// Sets every file under `dir` to have been written `age` ago.
fn age_files(dir: &Path, age: Duration) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            age_files(&path, age);
        } else {
            std::fs::File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(SystemTime::now() - age)
                .unwrap();
        }
    }
}

#[test]
fn the_discovery_cache_is_shared_with_kubectl_both_ways() {
    let sim = SimProcess::start(&[]);
    let cache = sim.dir().join(".kube/cache");
    let dir = host_dir(&sim, &cache);

    // kubectl warms the cache; kwatch then asks the server nothing.
    sim.kubectl_ok("get pods,deployments -A");
    assert!(dir.join("servergroups.json").is_file());
    let before = requests(&sim);
    synced(&sim, &["deploy"]);
    synced(&sim, &["po"]);
    assert_eq!(requests(&sim), before, "kwatch used kubectl's cache");

    // kwatch fills an empty cache with aggregated discovery: /api and /apis, nothing else.
    std::fs::remove_dir_all(cache.join("discovery")).unwrap();
    let before = requests(&sim);
    synced(&sim, &["widgets.example.com"]);
    assert_eq!(
        requests(&sim) - before,
        2,
        "one request each for /api and /apis"
    );
    let groups = read_json(&dir.join("servergroups.json"));
    assert_eq!(groups["kind"], "APIGroupList");
    let names = group_names(&groups);
    assert_eq!(names[0], "", "the core group first, as client-go writes it");
    assert!(names.contains(&"apps".to_owned()) && names.contains(&"example.com".to_owned()));
    for gv in ["v1", "apps/v1", "example.com/v1"] {
        let file = dir.join(gv).join("serverresources.json");
        let list = read_json(&file);
        assert_eq!(
            (list["kind"].as_str(), list["groupVersion"].as_str()),
            (Some("APIResourceList"), Some(gv))
        );
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o660, "{gv}: kubectl's file mode");
    }
    let deploy = read_json(&dir.join("apps/v1/serverresources.json"));
    let scale = deploy["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "deployments/scale")
        .expect("subresources are cached too");
    assert_eq!(
        (&scale["group"], &scale["kind"]),
        (&Value::from("autoscaling"), &Value::from("Scale"))
    );

    // …and kubectl reads what kwatch wrote.
    let before = requests(&sim);
    sim.kubectl_ok("get pods,deployments,widgets -A");
    assert_eq!(requests(&sim), before, "kubectl used kwatch's cache");
}

#[test]
fn an_old_or_incomplete_cache_is_refreshed_from_the_server() {
    let sim = SimProcess::start(&[]);
    let cache = sim.dir().join(".kube/cache");
    let dir = host_dir(&sim, &cache);
    synced(&sim, &["pods"]);
    synced(&sim, &["deploy"]);

    // A group the cache does not know yet (a CRD installed since): asked again, found.
    let groups_file = dir.join("servergroups.json");
    let mut groups = read_json(&groups_file);
    groups["groups"]
        .as_array_mut()
        .unwrap()
        .retain(|g| g["name"] != "example.com");
    std::fs::write(&groups_file, groups.to_string()).unwrap();
    std::fs::remove_dir_all(dir.join("example.com")).unwrap();
    let before = requests(&sim);
    synced(&sim, &["widgets"]);
    assert_eq!(requests(&sim) - before, 2);
    assert!(group_names(&read_json(&groups_file)).contains(&"example.com".to_owned()));

    // A name nobody serves: one refresh, then the error.
    let before = requests(&sim);
    let out = sim.kwatch("podz").exits(1);
    assert!(
        out.stderr.contains(r#"did you mean "pods"?"#),
        "{}",
        out.stderr
    );
    assert_eq!(requests(&sim) - before, 2, "asked the server once more");

    // Past the 6-hour TTL the cache is not used, and is written afresh.
    age_files(&dir, Duration::from_secs(6 * 3600 + 60));
    let before = requests(&sim);
    synced(&sim, &["pods"]);
    assert_eq!(
        requests(&sim) - before,
        1,
        "/api alone names the core resources"
    );
    let written = std::fs::metadata(dir.join("v1/serverresources.json"))
        .unwrap()
        .modified()
        .unwrap();
    assert!(written.elapsed().unwrap() < Duration::from_secs(600));
    // Within the TTL it is.
    age_files(&dir, Duration::from_secs(5 * 3600));
    let before = requests(&sim);
    synced(&sim, &["pods"]);
    assert_eq!(requests(&sim), before);
}

#[test]
fn cache_dir_flag_and_kubecachedir_choose_the_cache() {
    let sim = SimProcess::start(&[]);
    let flag = sim.dir().join("flag-cache");
    synced(&sim, &["pods", "--cache-dir", flag.to_str().unwrap()]);
    assert!(host_dir(&sim, &flag)
        .join("v1/serverresources.json")
        .is_file());

    let env = sim.dir().join("env-cache");
    let mut cmd = command(sim.dir());
    cmd.env("KUBECACHEDIR", &env)
        .arg("--kubeconfig")
        .arg(&sim.kubeconfig)
        .args(["pods", "-A", "--until-synced"]);
    let out = Running::spawn(cmd).finish(LIMIT);
    assert_eq!(out.code(), Some(0), "{}", out.stderr);
    assert!(host_dir(&sim, &env)
        .join("v1/serverresources.json")
        .is_file());
    assert!(
        !sim.dir().join(".kube/cache/discovery").exists(),
        "HOME's cache untouched"
    );
}

#[test]
fn a_server_without_aggregated_discovery_is_asked_only_for_the_named_group() {
    let sim = SimProcess::start(&["--legacy-discovery"]);
    let accept =
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";
    let r = sim.request_with(
        "GET",
        "/apis",
        &[
            ("authorization".into(), format!("Bearer {}", sim.token)),
            ("accept".into(), accept.into()),
        ],
        "",
    );
    assert_eq!(
        r.json()["kind"],
        "APIGroupList",
        "the simulator plays an older server"
    );

    // /api and /apis (the cached group list holds both), then apps/v1 alone.
    let before = requests(&sim);
    synced(&sim, &["deployments.apps"]);
    assert_eq!(requests(&sim) - before, 3);
    let dir = host_dir(&sim, &sim.dir().join(".kube/cache"));
    assert!(dir.join("apps/v1/serverresources.json").is_file());
    assert!(
        !dir.join("example.com").exists(),
        "no group that was not asked for"
    );
    let groups = read_json(&dir.join("servergroups.json"));
    assert_eq!(group_names(&groups)[0], "");

    // A kind from another group: that group's list only.
    synced(&sim, &["widgets.example.com"]);
    assert_eq!(requests(&sim) - before, 4);
    synced(
        &sim,
        &[
            "deploy",
            "--cache-dir",
            sim.dir().join(".kube/cache").to_str().unwrap(),
        ],
    );
    assert_eq!(
        requests(&sim) - before,
        7,
        "no group named: the core group's /api and /api/v1 first, then apiregistration.k8s.io/v1 \
         (first in a real 1.32 server's group order), apps/v1 from the cache"
    );
    // kubectl refreshes a cache that lacks a group-version in full (its own rule, so kwatch's
    // partial one costs it nothing more than a cold start); kwatch then reads kubectl's.
    sim.kubectl_ok("get deployments,widgets -A");
    let before = requests(&sim);
    synced(&sim, &["pods"]);
    synced(&sim, &["crd"]);
    assert_eq!(requests(&sim), before);
}

/// A group-version whose discovery fails (an aggregated API that is
/// down, here one the cached group list names and the server does not serve) is a `~`
/// line like kwatch's other notices, not a `…Z WARN …` log line.
#[test]
fn a_discovery_failure_is_a_tilde_notice() {
    let sim = SimProcess::start(&["--objects", "1"]);
    let kc = sim.kubeconfig.to_str().unwrap();
    let cache = sim.dir().join("cache");
    let cache_arg = cache.to_str().unwrap();
    let args = [
        "--kubeconfig",
        kc,
        "--cache-dir",
        cache_arg,
        "ingresses",
        "--until-synced",
    ];
    let warm = kwatch_env(&sim, &[], args);
    assert_eq!(warm.code(), Some(0), "{}", warm.stderr);
    let groups = cache
        .join("discovery")
        .join(host_port(&sim).replace(':', "_"))
        .join("servergroups.json");
    let text = std::fs::read_to_string(&groups).expect("the cached group list");
    let mut list: serde_json::Value = serde_json::from_str(&text).unwrap();
    let broken = serde_json::json!({"name": "metrics.k8s.io",
        "versions": [{"groupVersion": "metrics.k8s.io/v1beta1", "version": "v1beta1"}],
        "preferredVersion": {"groupVersion": "metrics.k8s.io/v1beta1", "version": "v1beta1"}});
    list["groups"].as_array_mut().unwrap().insert(1, broken);
    std::fs::write(&groups, list.to_string()).unwrap();
    let f = kwatch_env(&sim, &[], args);
    assert_eq!(f.code(), Some(0), "{}", f.stderr);
    let notices = stderr_with(&f, "metrics.k8s.io/v1beta1");
    assert_eq!(notices.len(), 1, "{}", f.stderr);
    assert!(
        notices[0].starts_with("~ discovery of metrics.k8s.io/v1beta1 failed: "),
        "{}",
        notices[0]
    );
    assert!(!f.stderr.contains("WARN"), "{}", f.stderr);
}

/// A discovery GET answered with `Retry-After` is retried, and each retry is a
/// `~` line like kwatch's other notices, not a `…Z WARN …` log line.
#[test]
fn a_retried_discovery_get_is_a_tilde_notice() {
    let sim = SimProcess::start(&[]);
    sim.control(
        "POST",
        "/_sim/fail",
        serde_json::json!({"code": 429, "count": 1, "retryAfter": 1}),
    );
    let out = sim
        .kwatch("configmaps -n default -o name --until-synced")
        .exits(0);
    let retries: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains("retrying GET"))
        .collect();
    assert_eq!(
        retries,
        ["~ retrying GET /api in 1s (attempt 1 of 10): 429 TooManyRequests"],
        "{}",
        out.stderr
    );
}
