//! How kwatch ends and with which code: `--until` (kubectl wait's conditions and timeout
//! line), `--until-synced`, `--max-events`, `--timeout`, Ctrl-C (130), SIGTERM (143) and a
//! pipe closed by its reader.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::util::kwatch::{command, is_delta, kubectl_f, of_type, on_new_sim, Running};
use crate::util::shared::*;
use crate::util::{eventually, SimProcess, LIMIT};

/// Waits until a kwatch has printed a line on stdout, or panics after `limit`.
fn wait_stdout(kw: &Running, limit: Duration) {
    eventually(limit, "a line on stdout", || match kw.lines() {
        l if !l.is_empty() => Ok(()),
        _ => Err(kw.stderr()),
    });
}

#[test]
fn until_stops_with_distinct_exit_codes() {
    let sim = SimProcess::start(&["--objects", "2"]);

    // created: waits for the object to appear.
    let before = watches_of(&sim, "configmaps");
    let kw = sim.start_kwatch("configmaps u1 -n default -o name --until created --timeout 30s");
    await_watch(&sim, "configmaps", before);
    create(&sim, demo_configmap("u1", "a"));
    let out = kw.finish(LIMIT);
    assert_eq!(out.code(), Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, ["configmap/u1"]);

    // jsonpath=…=VALUE: waits for the value.
    let before = watches_of(&sim, "configmaps");
    let kw = sim.start_kwatch(
        "configmaps u1 -n default -o jsonpath={.data.k} --until jsonpath={.data.k}=b --timeout 30s",
    );
    await_watch(&sim, "configmaps", before);
    patch_configmap(&sim, "u1", "b");
    let out = kw.finish(LIMIT);
    assert_eq!(out.code(), Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, ["a", "b"]);

    // deleted: waits for the deletion; an absent object meets it at once.
    let before = watches_of(&sim, "configmaps");
    let kw = sim.start_kwatch("configmaps u1 -n default -o name --until deleted --timeout 30s");
    await_watch(&sim, "configmaps", before);
    sim.kubectl_ok("delete configmap u1 -n default");
    let out = kw.finish(LIMIT);
    assert_eq!(out.code(), Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, ["configmap/u1", "configmap/u1"]);
    sim.kwatch("configmaps u1 -n default --until deleted --timeout 30s")
        .exits(0);

    // Not met before --timeout: 3; not met before --max-events: 4; error: 1.
    sim.kwatch("configmaps -n default --until jsonpath={.data.k}=never --timeout 1s")
        .exits(3);
    sim.kwatch("configmaps -n default --until deleted --max-events 1")
        .exits(4);
    sim.kwatch("nosuchthing --until created").exits(1);
    sim.kwatch("pods --until ready").exits(2);
}

/// Regression: `condition=Available=false` never matched (kubectl wait compares
/// case-insensitively) and `jsonpath=.data.a=b` without braces was rejected.
#[test]
fn until_parses_as_kubectl_wait() {
    let sim = SimProcess::start(&[]);
    kubectl_f(
        &sim,
        "create",
        &json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "cond", "namespace": "default"}, "data": {"a": "b"},
            "status": {"conditions": [{"type": "Available", "status": "False"}]}}),
    );
    for until in [
        "condition=Available=false",
        "condition=available=FALSE",
        "jsonpath=.data.a=b",
        "jsonpath={.data.a}=b",
        r#"jsonpath=.status.conditions[?(@.type=="Available")].status=False"#,
    ] {
        let out = sim
            .kwatch([
                "cm",
                "cond",
                "-n",
                "default",
                "--until",
                until,
                "--timeout",
                "10s",
                "-o",
                "name",
            ])
            .exits(0);
        assert_eq!(out.stdout, ["configmap/cond"], "{until}");
    }
    // Not met: the timeout's code, as before.
    sim.kwatch("cm cond -n default --until condition=Available --timeout 2s")
        .exits(3);
    sim.kwatch("cm --until jsonpath={.a}=b=c").exits(2);
}

/// Regression: `--until … --timeout` exited 3 without a word; kubectl
/// wait says `error: timed out waiting for the condition on deployments/web`.
#[test]
fn until_timing_out_says_what_it_waited_on_as_kubectl_wait() {
    let (sim, first) = on_new_sim(&[], "pods -n default -o name --until-synced");
    assert!(!first.stdout.is_empty(), "the sim preloads pods");
    let name = first.stdout[0].trim_start_matches("pod/").to_owned();

    // One named object.
    let one = sim
        .kwatch(format!("pods {name} -n default -o name --until jsonpath={{.status.phase}}=Nowhere --timeout 2s"))
        .exits(3);
    let last = one.stderr.lines().last().unwrap_or_default();
    assert_eq!(
        last,
        format!("error: timed out waiting for the condition on pods/{name}")
    );

    // Several objects: the first three by name, then how many more.
    let many = sim
        .kwatch("pods -n default -o name --until jsonpath={.status.phase}=Nowhere --timeout 2s")
        .exits(3);
    let mut names: Vec<&str> = first
        .stdout
        .iter()
        .map(|l| l.trim_start_matches("pod/"))
        .collect();
    names.sort();
    let listed: Vec<String> = names.iter().take(3).map(|n| format!("pods/{n}")).collect();
    let want = format!(
        "error: timed out waiting for the condition on {} and {} more",
        listed.join(", "),
        names.len() - 3
    );
    assert_eq!(many.stderr.lines().last().unwrap_or_default(), want);

    // An object that never came: named as kubectl names it.
    let none = sim
        .kwatch("configmaps not-there -n default --until created --timeout 2s")
        .exits(3);
    assert_eq!(
        none.stderr.lines().last().unwrap_or_default(),
        "error: timed out waiting for the condition on configmaps/not-there"
    );
}

#[test]
fn stop_conditions_for_scripts() {
    let (sim, out) = on_new_sim(&["--objects", "6"], "pods -A -o json --max-events 3");
    assert_eq!(out.json().iter().filter(|r| is_delta(r)).count(), 3);

    let started = std::time::Instant::now();
    let out = sim
        .kwatch("pods -A -o json --timeout 1s --watch-only")
        .exits(0);
    assert!(started.elapsed() >= Duration::from_secs(1));
    let recs = out.json();
    assert!(!of_type(&recs, "Synced").is_empty());
    assert_eq!(
        recs.iter().filter(|r| is_delta(r)).count(),
        0,
        "--watch-only: {recs:#?}"
    );
}

#[test]
fn ctrl_c_exits_130_and_a_closed_pipe_exits_quietly() {
    let sim = SimProcess::start(&["--scenario", "steady", "--churn", "20"]);
    let kw = sim.start_kwatch("pods -A");
    wait_stdout(&kw, LIMIT);
    let out = kw.interrupt(LIMIT);
    assert_eq!(out.code(), Some(130), "{}", out.stderr);

    // `kwatch … | head -1`
    let mut cmd = command(sim.dir());
    cmd.arg("--kubeconfig")
        .arg(&sim.kubeconfig)
        .args(["pods", "-A", "-o", "json"]);
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut first = String::new();
    {
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        std::io::BufRead::read_line(&mut out, &mut first).unwrap();
    }
    let status = eventually(LIMIT, "kwatch to exit after its reader left", || {
        child.try_wait().unwrap().ok_or("still running")
    });
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(first.starts_with("{\"type\":"));
    assert_eq!(status.code(), Some(0), "{err}");
    assert_eq!(err, "");
}

/// Regression: `kwatch … | head -1` in a quiet namespace waited for the
/// next event before noticing the closed pipe. The reader closes the pipe with nothing
/// more to print; kwatch exits 0 quietly within 2 s.
#[test]
fn a_pipe_closed_by_its_reader_ends_a_quiet_watch() {
    let sim = SimProcess::start(&[]);
    let mut cmd = command(sim.dir());
    cmd.arg("--kubeconfig")
        .arg(&sim.kubeconfig)
        .args(["configmaps", "app-config", "-n", "default", "-o", "name"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawning kwatch");
    let stderr = child.stderr.take().expect("stderr");
    let errors = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap_or_default());
    // As `head -1`: one line, then the pipe closed.
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut first = String::new();
    stdout.read_line(&mut first).expect("reading stdout");
    assert_eq!(first, "configmap/app-config\n");
    std::thread::sleep(Duration::from_millis(300));
    drop(stdout);
    let closed = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if closed.elapsed() > Duration::from_secs(5) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("kwatch did not exit within 5 s of its stdout being closed");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(
        closed.elapsed() < Duration::from_secs(2),
        "exited {:?} after the pipe closed",
        closed.elapsed()
    );
    let errors = errors.join().unwrap_or_default();
    assert_eq!(status.code(), Some(0), "{errors}");
    assert_eq!(errors, "", "a closed pipe is no error");
}

/// Regression: SIGTERM exited 143 without the `--stats` summary; it
/// stops as Ctrl-C does: the summary, then exit 143.
#[test]
fn sigterm_prints_the_summary_and_exits_143() {
    let sim = SimProcess::start(&[]);
    let kw = sim.start_kwatch("pods -n default -o name --stats");
    wait_stdout(&kw, Duration::from_secs(30));
    let out = kw.terminate(Duration::from_secs(10));
    assert_eq!(out.code(), Some(143), "{}", out.stderr);
    assert!(!out.stdout.is_empty());
    assert!(out.stderr.contains("kwatch stats\n"), "{}", out.stderr);
    assert!(out.stderr.contains("  deltas: "), "{}", out.stderr);
}

/// A run whose watch never once succeeded (list allowed, watch forbidden: `--bend
/// forbid-watch`) does not end in success at `--timeout`: it printed the list, then ends
/// as `kubectl get -w` does, with the server's Forbidden and exit 1.
#[test]
fn a_watch_that_is_always_forbidden_does_not_end_in_success() {
    let sim = SimProcess::start(&["--bend", "forbid-watch", "--objects", "2"]);
    let out = sim
        .kwatch("pods -A -o name --client-go 0.32 --timeout 3s")
        .exits(1);
    // The list, and each relist after a refused watch.
    assert!(
        out.stdout.len() >= 2,
        "the list is printed: {:?}",
        out.stdout
    );
    let last = out.stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("Error from server (Forbidden): pods is forbidden:"),
        "{}",
        out.stderr
    );
    assert!(last.contains("the watch of pods never succeeded"), "{last}");
    // The list alone was asked for: success.
    sim.kwatch("pods -A -o name --client-go 0.32 --until-synced")
        .exits(0);
}

/// A NAME whose object does not exist, with `--until-synced`: `kubectl get pod NAME`'s
/// NotFound and exit 1, not a silent success; an existing one exits 0.
#[test]
fn a_named_object_that_does_not_exist_is_not_found_at_the_sync() {
    let sim = SimProcess::start(&["--objects", "1"]);
    let out = sim
        .kwatch("pod/no-such-pod -n default --until-synced")
        .exits(1);
    assert!(out.stdout.is_empty(), "{:?}", out.stdout);
    assert_eq!(
        out.stderr.lines().last(),
        Some(r#"Error from server (NotFound): pods "no-such-pod" not found"#),
        "{}",
        out.stderr
    );
    let out = sim
        .kwatch("deployments.apps no-such-deploy -A --until-synced")
        .exits(1);
    assert!(
        out.stderr.contains(
            r#"Error from server (NotFound): deployments.apps "no-such-deploy" not found"#
        ),
        "{}",
        out.stderr
    );
    let name = sim.kwatch("pods -A -o name --until-synced").stdout[0].clone();
    let name = name.trim_start_matches("pod/");
    let ns = sim
        .kwatch("pods -A -o jsonpath={.metadata.namespace} --until-synced")
        .stdout[0]
        .clone();
    sim.kwatch(format!("pod/{name} -n {ns} --until-synced -o name"))
        .exits(0);
}
