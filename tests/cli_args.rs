//! The command line read as kubectl reads it: resource names and `TYPE/NAME`, namespaces and
//! names validated before any request, kubectl's refusals in its words, `-A` over `-n`,
//! zero meaning no limit, `kwatch get` and the `kubectl kwatch` plugin, `--sim`.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::util::kwatch::{command, is_delta, of_type, on_new_sim, Finished, Running};
use crate::util::shared::*;
use crate::util::{eventually, SimProcess, LIMIT};

/// A bad-usage exit: code 2, nothing on stdout, one `error:` line on stderr with `want`.
fn assert_usage_error(out: &Finished, want: &str) {
    assert_eq!(out.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line: {:?}", out.stderr);
    assert!(lines[0].starts_with("error: "), "{lines:?}");
    assert!(lines[0].contains(want), "{want:?} in {lines:?}");
}

fn resolve_names(sim: &SimProcess) {
    for (arg, kind) in [
        ("po", "Pod"),
        ("Pod", "Pod"),
        ("pod", "Pod"),
        ("deployments.apps", "Deployment"),
        ("deployments.v1.apps", "Deployment"),
        ("wd", "Widget"),
        ("widgets.example.com", "Widget"),
        ("ns", "Namespace"),
        ("crd", "CustomResourceDefinition"),
    ] {
        let out = sim
            .kwatch(format!("{arg} -A -o json --until-synced"))
            .exits(0);
        let recs = out.json();
        let d = recs
            .iter()
            .find(|r| is_delta(r))
            .unwrap_or_else(|| panic!("{arg}: no delta"));
        assert_eq!(d["kind"], kind, "{arg}");
    }
    // Cluster-scoped objects have no namespace in their key.
    let out = sim.kwatch("nodes -o json --until-synced");
    let d = out.json().into_iter().find(is_delta).unwrap();
    assert_eq!(d["namespace"], Value::Null);
    assert_eq!(d["key"], d["name"]);
}

/// Regression: `-n ..` and `-n 'qa-live?x=1'` listed "0 items", and a name was not
/// checked at all; both are validated before any request.
#[test]
fn namespaces_and_names_are_validated_before_any_request() {
    let sim = SimProcess::start(&[]);
    let out = sim.kwatch("cm -n .. --until-synced");
    assert_usage_error(&out, r#"invalid namespace "..": [may not be '..']"#);
    let out = sim.kwatch("cm -n qa-live?x=1 --until-synced");
    assert_usage_error(
        &out,
        r#"invalid namespace "qa-live?x=1": a lowercase RFC 1123 label"#,
    );
    let out = sim.kwatch("cm -n a/b --until-synced");
    assert_usage_error(&out, "[may not contain '/']");
    let out = sim.kwatch("cm .. -n default --until-synced");
    assert_usage_error(&out, r#"invalid resource name "..": [may not be '..']"#);
    let out = sim.kwatch("cm 50% -n default --until-synced");
    assert_usage_error(&out, "[may not contain '%']");
    // A valid namespace still works, and kubectl agrees on the bad one.
    let out = sim.kwatch("cm -n default --until-synced -o name").exits(0);
    assert!(
        out.stdout.contains(&"configmap/app-config".to_owned()),
        "{out:?}"
    );
    let k = sim.kubectl("get cm -n ..");
    assert!(!k.status.success());
    assert!(String::from_utf8_lossy(&k.stderr).contains("may not be '..'"));
}

/// `kwatch deploy/nope` (no such object yet) says so once on stderr, as kubectl's NotFound
/// names it, when its initial list syncs empty, then waits: the object created later is
/// printed. The JSON keeps stdout for records; an object that exists, or a run that ends
/// at the sync, says nothing.
#[test]
fn a_name_with_no_object_says_so_once_then_waits_for_it() {
    let sim = SimProcess::start(&["--churn", "0"]);
    let line = |name: &str| {
        format!(
            "~ no deployments.apps \"{name}\" in namespace default yet: waiting for it to be created"
        )
    };
    let said = |kw: &Running, want: &str| {
        eventually(LIMIT, want, || {
            let err = kw.stderr();
            err.contains(want).then_some(()).ok_or(err)
        })
    };
    let table = sim.start_kwatch("deploy/nope -n default");
    let mut json = sim.start_kwatch("deploy/nope -n default -o json");
    said(&table, &line("nope"));
    said(&json, &line("nope"));
    sim.kubectl_ok("create deployment nope -n default --image nginx");
    eventually(LIMIT, "the table's row of nope", || {
        let lines = table.lines();
        lines
            .iter()
            .any(|l| cells(l).get(1).is_some_and(|c| c == "nope"))
            .then_some(())
            .ok_or(lines)
    });
    json.wait_for(LIMIT, "Added nope", |v| {
        v.iter()
            .any(|r| r["type"] == "Added" && r["name"] == "nope")
    });
    for kw in [table, json] {
        let out = kw.interrupt(LIMIT).exits(130);
        assert_eq!(
            out.stderr.matches(&line("nope")).count(),
            1,
            "{}",
            out.stderr
        );
        assert!(
            !out.stdout.iter().any(|l| l.contains("~ no")),
            "{:#?}",
            out.stdout
        );
    }
    let mut exists = sim.start_kwatch("deploy/web -n default -o json");
    exists.wait_for(LIMIT, "Synced", |v| v.iter().any(|r| r["type"] == "Synced"));
    let out = exists.interrupt(LIMIT).exits(130);
    assert!(!out.stderr.contains("~ no "), "{}", out.stderr);
    // Ended by its sync, the run says NotFound as `kubectl get deploy other` does.
    let out = sim
        .kwatch("deploy/other -n default --until-synced")
        .exits(1);
    assert!(!out.stderr.contains("~ no "), "{}", out.stderr);
    assert!(
        out.stderr
            .ends_with("Error from server (NotFound): deployments.apps \"other\" not found\n"),
        "{}",
        out.stderr
    );
}

/// Regression: `kwatch pod/pod1`, `-w`, `--all-namespaces=true|false` were rejected,
/// and `kwatch pods a b` gave a confusing subcommand error; kubectl's habits are accepted.
#[test]
fn kubectl_argument_habits_are_accepted() {
    let (sim, out) = on_new_sim(&[], "deploy/web -n default -w --until-synced -o name");
    assert_eq!(out.stdout, ["deployment.apps/web"]);
    let out = sim
        .kwatch("configmap/app-config --watch --until-synced -o name")
        .exits(0);
    assert_eq!(out.stdout, ["configmap/app-config"]);

    let namespaces = |out: &Finished| -> std::collections::BTreeSet<String> {
        out.stdout
            .iter()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter_map(|r| r["namespace"].as_str().map(str::to_owned))
            .collect()
    };
    let all = sim
        .kwatch("deploy --all-namespaces=true --until-synced -o json")
        .exits(0);
    assert_eq!(
        namespaces(&all),
        ["default", "team-a"].map(String::from).into()
    );
    let one = sim
        .kwatch("deploy --all-namespaces=false -n team-a --until-synced -o json")
        .exits(0);
    assert_eq!(namespaces(&one), ["team-a"].map(String::from).into());

    let out = sim.kwatch("pods a b --until-synced");
    assert_usage_error(&out, "kwatch watches one name at a time");
    let out = sim.kwatch("pod/a b --until-synced");
    assert_usage_error(&out, "use `pod/a` alone");
    let out = sim.kwatch("pod/ --until-synced");
    assert_usage_error(&out, "expected TYPE/NAME");
}

#[test]
fn resource_names_resolve_like_kubectl() {
    for server in [&[][..], &["--legacy-discovery"]] {
        resolve_names(&SimProcess::start(server));
    }
}

/// A NAME with a selector is refused as kubectl refuses it, before any request.
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

/// `--timeout 0` and `--max-events 0` are no limit, as `--request-timeout 0` is.
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
        let recs = synced_configmaps(&sim, extra);
        assert_eq!(of_type(&recs, "Synced").len(), 1, "{extra:?}: {recs:#?}");
        assert_eq!(
            recs.iter().filter(|r| is_delta(r)).count(),
            2,
            "{extra:?}: both configmaps: {recs:#?}"
        );
    }
}

/// `-A -n ns` watches all namespaces, as kubectl lets `-A` win.
#[test]
fn all_namespaces_wins_over_a_namespace() {
    let (sim, out) = on_new_sim(&[], "configmaps -A -n default -o json --until-synced");
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
        request_paths(&sim)
            .iter()
            .any(|p| p.starts_with("/api/v1/configmaps?")),
        "a cluster-wide list"
    );
}

/// `kwatch get pods` (kubectl's habit) says to drop `get`.
#[test]
fn kwatch_get_pods_says_to_drop_get() {
    let sim = SimProcess::start(&["--objects", "1"]);
    let f = sim.kwatch("get pods --until-synced");
    let line = one_error_line(&f, "get pods");
    assert!(
        line.contains("resource type \"get\"")
            && line.contains("drop \"get\" (`kwatch pods`, not `kwatch get pods`)"),
        "{line}"
    );
}

#[test]
fn works_as_the_kubectl_plugin_kubectl_kwatch() {
    let sim = SimProcess::start(&["--objects", "2"]);
    let bin = tempfile::tempdir().unwrap();
    let plugin = bin.path().join("kubectl-kwatch");
    std::fs::copy(env!("CARGO_BIN_EXE_kwatch"), &plugin).unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.path().display());
    let kubectl = |args: &[&str]| {
        let mut cmd = crate::util::tools::kubectl();
        cmd.args(args)
            .env_clear()
            .env("HOME", sim.dir())
            .env("PATH", &path)
            .env("NO_COLOR", "1");
        Running::spawn(cmd).finish(LIMIT)
    };
    let out = kubectl(&[
        "kwatch",
        "--kubeconfig",
        sim.kubeconfig.to_str().unwrap(),
        "configmaps",
        "-n",
        "default",
        "-o",
        "name",
        "--until-synced",
    ]);
    assert_eq!(out.code(), Some(0), "{}", out.stderr);
    let want: BTreeSet<String> = live_names(&sim, "configmaps", "default")
        .iter()
        .map(|n| format!("configmap/{n}"))
        .collect();
    assert_eq!(out.stdout.iter().cloned().collect::<BTreeSet<_>>(), want);
    let help = kubectl(&["kwatch", "--help"]);
    assert!(
        help.stdout
            .iter()
            .any(|l| l.starts_with("Usage: kubectl kwatch ")),
        "{:#?}",
        help.stdout
    );
    let list = kubectl(&["plugin", "list"]);
    assert!(
        list.stdout.iter().any(|l| l.ends_with("/kubectl-kwatch")),
        "{:#?}",
        list.stdout
    );
}

#[test]
fn sim_flag_runs_the_built_in_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = command(dir.path());
    cmd.args(["--sim", "pods", "-A", "-o", "json", "--until-synced"]);
    let out = Running::spawn(cmd).finish(LIMIT);
    assert_eq!(out.code(), Some(0), "{}", out.stderr);
    let recs = out.json();
    assert!(of_type(&recs, "Replaced").len() >= 10);
    assert_eq!(recs.last().unwrap()["type"], "Synced");
}

/// An option that only means something beside another is refused alike
/// without it, in clap's words, before any request.
#[test]
fn options_that_need_another_are_refused_without_it() {
    let dir = tempfile::tempdir().unwrap();
    for (args, needs) in [
        (&["--probe-interval", "1s"][..], "--probe <NAMESPACE>"),
        (&["--restart-stalled"][..], "--stall-after <D|auto>"),
    ] {
        let mut cmd = command(dir.path());
        cmd.args(args)
            .args(["pods", "--server", "https://127.0.0.1:1"]);
        let out = Running::spawn(cmd).finish(LIMIT);
        assert_usage_error(
            &out,
            &format!("the following required arguments were not provided: {needs}"),
        );
    }
}

/// A kubeconfig that cannot be read or parsed is one line naming the file
/// once and the cause: the I/O error in Go's words (not Rust's `No such file or directory
/// (os error 2)`), or the YAML error's place (not its source excerpt).
#[test]
fn an_unreadable_or_invalid_kubeconfig_is_one_line_naming_the_file_once() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.kubeconfig");
    std::fs::write(
        &bad,
        "apiVersion: v1\nclusters:\n- cluster:\n    server: [oops\n  name: x\n",
    )
    .unwrap();
    let missing = dir.path().join("missing.kubeconfig");
    for (file, want) in [
        (&missing, "no such file or directory".to_owned()),
        (
            &bad,
            "invalid YAML: line 4 column 13: expected string scalar".to_owned(),
        ),
    ] {
        let mut cmd = command(dir.path());
        cmd.arg("--kubeconfig").arg(file).arg("pods");
        let out = Running::spawn(cmd).finish(LIMIT);
        assert_eq!(out.code(), Some(1), "{out:?}");
        let shown = file.display().to_string();
        assert_eq!(
            out.stderr.trim(),
            format!("error: cannot load kubeconfig {shown}: {want}"),
            "{out:?}"
        );
    }
}
