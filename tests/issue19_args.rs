//! Issue 19, items 2, 4 (the local half) and 8: the default informer is the client-go
//! release of the server's Kubernetes (`/version`), and kubectl's argument rules — what
//! kubectl refuses (in its words) and what it reads otherwise.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::kwatch::{command, is_delta, of_type, Finished, Running};
use crate::util::{SimProcess, LIMIT};

/// The paths of the API requests the simulator answered (its request log).
fn requests(sim: &SimProcess) -> Vec<String> {
    sim.get("/_sim/requests").json()["requests"]
        .as_array()
        .expect("the request log")
        .iter()
        .map(|r| r["path"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// `kwatch configmaps -n default -o json --until-synced EXTRA…`, exit 0, records.
fn synced(sim: &SimProcess, extra: &[&str]) -> Vec<Value> {
    let mut args = vec![
        "configmaps",
        "-n",
        "default",
        "-o",
        "json",
        "--until-synced",
    ];
    args.extend_from_slice(extra);
    let out = sim.kwatch(&args[..]).exits(0);
    assert!(!out.stdout.is_empty(), "{extra:?}: {}", out.stderr);
    out.json()
}

/// `(clientGo, queue, streaming)` of the List record, after checking that there is one
/// and that Synced names the same informer.
fn informer(recs: &[Value]) -> (String, String, bool) {
    let lists = of_type(recs, "List");
    let synced = of_type(recs, "Synced");
    assert!(!lists.is_empty() && !synced.is_empty(), "{recs:#?}");
    let s = |v: &Value| v.as_str().unwrap_or("(none)").to_owned();
    let (l, y) = (lists[0], synced[0]);
    assert_eq!(
        (&l["clientGo"], &l["queue"]),
        (&y["clientGo"], &y["queue"]),
        "{recs:#?}"
    );
    (s(&l["clientGo"]), s(&l["queue"]), l["streaming"] == true)
}

fn streamed(sim: &SimProcess) -> bool {
    requests(sim)
        .iter()
        .any(|p| p.contains("sendInitialEvents=true"))
}

/// Item 2: against `kwatch sim` (kube-apiserver 1.32), the default is client-go 0.32's
/// informer: DeltaFIFO and a paged LIST, no streaming list; the `~` lines name it.
#[test]
fn the_default_against_a_1_32_server_is_client_go_0_32() {
    let sim = SimProcess::start(&[]);
    assert_eq!(sim.get("/version").json()["minor"], "32");
    let recs = synced(&sim, &[]);
    assert_eq!(informer(&recs), ("0.32".into(), "DeltaFIFO".into(), false));
    let log = requests(&sim);
    assert!(log.iter().any(|p| p == "/version"), "{log:#?}");
    assert!(
        log.iter()
            .any(|p| p.starts_with("/api/v1/namespaces/default/configmaps?limit=500")),
        "a paged LIST: {log:#?}"
    );
    assert!(!streamed(&sim), "no streaming list: {log:#?}");

    let out = sim.kwatch("configmaps -n default --until-synced").exits(0);
    assert!(!out.stdout.is_empty(), "{}", out.stderr);
    let notes: Vec<&str> = out.stderr.lines().collect();
    assert!(
        notes.first().is_some_and(
            |l| l.starts_with("~ list configmaps at rv=\"0\", 500 per page")
                && l.ends_with(" (client-go 0.32, DeltaFIFO)")
        ),
        "{notes:#?}"
    );
    assert_eq!(
        notes.last(),
        Some(&"~ synced configmaps (client-go 0.32, DeltaFIFO)")
    );
}

/// Item 2: a server that reports Kubernetes 1.35 gets client-go 0.35's informer (RealFIFO
/// with batch pops, a streaming list); older and newer minors are clamped to 0.32…0.36.
#[test]
fn the_servers_minor_chooses_the_release_clamped() {
    for (version, release, queue, streaming) in [
        ("1.35", "0.35", "RealFIFO+batch", true),
        ("1.33+", "0.33", "RealFIFO", false),
        ("1.31", "0.32", "DeltaFIFO", false),
        ("1.40", "0.36", "RealFIFO+batch+atomic", true),
    ] {
        let sim = SimProcess::start(&["--server-version", version]);
        let recs = synced(&sim, &[]);
        assert_eq!(
            informer(&recs),
            (release.into(), queue.into(), streaming),
            "server {version}"
        );
        assert_eq!(streamed(&sim), streaming, "server {version}");
        // A batch pop says so on its deltas.
        let batched = recs
            .iter()
            .filter(|r| is_delta(r))
            .all(|r| r.get("batch").is_some());
        assert_eq!(
            batched,
            queue.contains("batch"),
            "server {version}: {recs:#?}"
        );
    }
}

/// Item 2: `--client-go`, `--watch-list` and `--fifo` override the server's release.
#[test]
fn explicit_flags_override_the_servers_release() {
    let sim = SimProcess::start(&["--server-version", "1.35"]);
    let recs = synced(&sim, &["--client-go", "0.32"]);
    assert_eq!(informer(&recs), ("0.32".into(), "DeltaFIFO".into(), false));
    assert!(!streamed(&sim));
    // --client-go names the release: /version is not asked.
    assert!(!requests(&sim).iter().any(|p| p == "/version"));
    let recs = synced(&sim, &["--watch-list", "off"]);
    assert_eq!(
        informer(&recs),
        ("0.35".into(), "RealFIFO+batch".into(), false)
    );
    assert!(!streamed(&sim));
    let recs = synced(&sim, &["--fifo", "delta"]);
    assert_eq!(informer(&recs), ("0.35".into(), "DeltaFIFO".into(), true));

    let sim = SimProcess::start(&[]);
    let recs = synced(&sim, &["--watch-list", "on"]);
    assert_eq!(informer(&recs), ("0.32".into(), "DeltaFIFO".into(), true));
    assert!(streamed(&sim));
    // 0.32 has no RealFIFO: `--fifo real` is 0.33's informer, the first with one.
    let recs = synced(&sim, &["--fifo", "real"]);
    assert_eq!(informer(&recs), ("0.33".into(), "RealFIFO".into(), false));
}

/// Item 2: a `/version` that does not parse gives the documented fallback, 0.32, with one
/// `~` line saying so; the watch goes on.
#[test]
fn an_unreadable_version_falls_back_to_0_32_with_one_note() {
    let sim = SimProcess::start(&["--server-version", "1.x"]);
    let args = [
        "configmaps",
        "-n",
        "default",
        "-o",
        "json",
        "--until-synced",
    ];
    let out = sim.kwatch(&args[..]).exits(0);
    assert!(!out.stdout.is_empty(), "{}", out.stderr);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", out.stderr);
    assert!(
        lines[0].starts_with("~ cannot tell the server's Kubernetes version")
            && lines[0].contains("client-go 0.32")
            && lines[0].contains("--client-go"),
        "{}",
        out.stderr
    );
    assert_eq!(
        informer(&out.json()),
        ("0.32".into(), "DeltaFIFO".into(), false)
    );
}

/// A kubeconfig with context `name` for each sim (cluster, user and context renamed).
fn kubeconfig_of(sims: &[(&str, &SimProcess)], dir: &Path) -> PathBuf {
    let mut merged: Option<serde_yaml::Value> = None;
    for (name, sim) in sims {
        let text = std::fs::read_to_string(&sim.kubeconfig).expect("the sim's kubeconfig");
        let mut kc: serde_yaml::Value = serde_yaml::from_str(&text).expect("YAML");
        for list in ["clusters", "users", "contexts"] {
            kc[list][0]["name"] = (*name).into();
        }
        kc["contexts"][0]["context"]["cluster"] = (*name).into();
        kc["contexts"][0]["context"]["user"] = (*name).into();
        match &mut merged {
            None => merged = Some(kc),
            Some(m) => {
                for list in ["clusters", "users", "contexts"] {
                    let item = kc[list][0].clone();
                    m[list].as_sequence_mut().expect(list).push(item);
                }
            }
        }
    }
    let path = dir.join("merged.kubeconfig");
    let text = serde_yaml::to_string(&merged.expect("a sim")).expect("YAML");
    std::fs::write(&path, text).expect("writing the kubeconfig");
    path
}

/// Item 2: with `--context a,b` each cluster gets its own server's release.
#[test]
fn each_context_gets_its_own_servers_release() {
    let old = SimProcess::start(&[]);
    let new = SimProcess::start(&["--server-version", "1.36"]);
    let path = kubeconfig_of(&[("old", &old), ("new", &new)], old.dir());
    let mut cmd = command(old.dir());
    cmd.arg("--kubeconfig").arg(&path).args([
        "configmaps",
        "-n",
        "default",
        "-o",
        "json",
        "--until-synced",
        "--context",
        "old,new",
    ]);
    let out = Running::spawn(cmd).finish(LIMIT);
    assert_eq!(out.code(), Some(0), "{}", out.stderr);
    assert!(!out.stdout.is_empty(), "{}", out.stderr);
    let recs = out.json();
    for (ctx, want) in [
        ("old", ("0.32", "DeltaFIFO", false)),
        ("new", ("0.36", "RealFIFO+batch+atomic", true)),
    ] {
        let mine: Vec<Value> = recs
            .iter()
            .filter(|r| r["context"] == ctx)
            .cloned()
            .collect();
        assert_eq!(
            informer(&mine),
            (want.0.into(), want.1.into(), want.2),
            "context {ctx}"
        );
    }
    assert!(!streamed(&old));
    assert!(streamed(&new));
}

/// A kwatch that must stop at the command line: `--server` points at a port nothing
/// listens on, so any request would end otherwise.
fn refused(args: &[&str]) -> Finished {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cmd = command(dir.path());
    cmd.args(args).args(["--server", "https://127.0.0.1:1"]);
    Running::spawn(cmd).finish(LIMIT)
}

/// Exit 2 (usage), exactly one line `error: <kubectl's words>…`, nothing on stdout.
fn usage_error(out: &Finished, words: &str, what: &str) {
    assert_eq!(out.code(), Some(2), "{what}: {out:?}");
    assert!(out.stdout.is_empty(), "{what}: {out:?}");
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{what}: {:?}", out.stderr);
    assert!(
        lines[0].starts_with(&format!("error: {words}")),
        "{what}: {:?}",
        lines[0]
    );
}

/// Item 8: a NAME with a selector is refused as kubectl refuses it, before any request.
#[test]
fn a_name_with_a_selector_is_refused_in_kubectls_words() {
    for args in [
        &["pods", "web", "-l", "app=web"][..],
        &["pods", "web", "--field-selector", "status.phase=Running"],
        &["pod/web", "--selector", "app=web"],
    ] {
        usage_error(
            &refused(args),
            "name cannot be provided when a selector is specified",
            &format!("{args:?}"),
        );
    }
}

/// Item 8: `--insecure-skip-tls-verify` with `--certificate-authority` is refused in
/// client-go's words; a kubeconfig CA with the flag is cleared by it, as kubectl does,
/// and a kubeconfig that has both is refused (exit 1: the kubeconfig is wrong).
#[test]
fn insecure_with_a_ca_is_refused_as_client_go_refuses_it() {
    let words = "specifying a root certificates file with the insecure flag is not allowed";
    usage_error(
        &refused(&[
            "pods",
            "--insecure-skip-tls-verify",
            "--certificate-authority",
            "/etc/hostname",
        ]),
        words,
        "both flags",
    );

    let sim = SimProcess::start(&[]);
    // The sim's kubeconfig has certificate-authority-data: the flag replaces it.
    let out = sim
        .kwatch("configmaps -n default -o name --until-synced --insecure-skip-tls-verify")
        .exits(0);
    assert!(!out.stdout.is_empty(), "{}", out.stderr);

    let text = std::fs::read_to_string(&sim.kubeconfig).expect("kubeconfig");
    let mut kc: serde_yaml::Value = serde_yaml::from_str(&text).expect("YAML");
    kc["clusters"][0]["cluster"]["insecure-skip-tls-verify"] = true.into();
    let both = sim.dir().join("insecure-and-ca.kubeconfig");
    std::fs::write(&both, serde_yaml::to_string(&kc).expect("YAML")).expect("write");
    let mut cmd = command(sim.dir());
    cmd.arg("--kubeconfig")
        .arg(&both)
        .args(["configmaps", "-n", "default", "--until-synced"]);
    let out = Running::spawn(cmd).finish(LIMIT);
    assert_eq!(out.code(), Some(1), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", out.stderr);
    assert!(
        lines[0].starts_with(&format!("error: {words}")),
        "{lines:?}"
    );
}

/// Item 4 (the local half): impersonating groups or a UID without a user is refused
/// before any request, in kubectl's words (the kubeconfig user's name), exit 2.
#[test]
fn impersonating_groups_without_a_user_is_refused_before_connecting() {
    let sim = SimProcess::start(&[]);
    for extra in [&["--as-group", "system:masters"][..], &["--as-uid", "7"]] {
        let before = requests(&sim).len();
        let mut args = vec![
            "configmaps",
            "-n",
            "default",
            "--until-synced",
            "--timeout",
            "5s",
        ];
        args.extend_from_slice(extra);
        let out = sim.kwatch(&args[..]);
        usage_error(
            &out,
            "requesting uid, groups or user-extra for kwatch-sim without impersonating a user",
            &format!("{extra:?}"),
        );
        assert!(out.stderr.contains("--as"), "{}", out.stderr);
        // The log leaves out the control API's own requests.
        assert_eq!(requests(&sim).len(), before, "{extra:?}: no request");
    }
}

/// Item 8: `--timeout 0` and `--max-events 0` are no limit, as `--request-timeout 0` is.
#[test]
fn zero_timeout_and_zero_max_events_are_no_limit() {
    let sim = SimProcess::start(&[]);
    for extra in [
        &["--timeout", "0"][..],
        &["--max-events", "0"],
        &[
            "--timeout",
            "0s",
            "--max-events",
            "0",
            "--request-timeout",
            "0",
        ],
    ] {
        let recs = synced(&sim, extra);
        assert_eq!(of_type(&recs, "Synced").len(), 1, "{extra:?}: {recs:#?}");
        assert_eq!(
            recs.iter().filter(|r| is_delta(r)).count(),
            2,
            "{extra:?}: both configmaps: {recs:#?}"
        );
    }
}

/// Item 8: `-A -n ns` watches all namespaces, as kubectl lets `-A` win.
#[test]
fn all_namespaces_wins_over_a_namespace() {
    let sim = SimProcess::start(&[]);
    let args = [
        "configmaps",
        "-A",
        "-n",
        "default",
        "-o",
        "json",
        "--until-synced",
    ];
    let out = sim.kwatch(&args[..]).exits(0);
    assert!(!out.stdout.is_empty(), "{}", out.stderr);
    let recs = out.json();
    let namespaces: std::collections::BTreeSet<&str> = recs
        .iter()
        .filter(|r| is_delta(r))
        .filter_map(|r| r["namespace"].as_str())
        .collect();
    assert!(
        namespaces.contains("default") && namespaces.len() > 1,
        "{namespaces:?}"
    );
    let list = of_type(&recs, "List");
    assert!(!list.is_empty(), "{recs:#?}");
    assert!(
        requests(&sim)
            .iter()
            .any(|p| p.starts_with("/api/v1/configmaps?")),
        "a cluster-wide list"
    );
}

/// Item 8: `--context a,a` watches the cluster once.
#[test]
fn a_context_named_twice_is_watched_once() {
    let sim = SimProcess::start(&[]);
    let ctx = "kwatch-sim";
    let recs = synced(&sim, &["--context", &format!("{ctx},{ctx}")]);
    assert_eq!(of_type(&recs, "Synced").len(), 1, "{recs:#?}");
    assert_eq!(of_type(&recs, "List").len(), 1, "{recs:#?}");
    assert_eq!(recs.iter().filter(|r| is_delta(r)).count(), 2, "{recs:#?}");
}
