//! Issue 19, item 9: how a watch ends — a pipe closed by its reader with nothing more to
//! write, `--until` timing out (kubectl wait's error line), SIGTERM (the `--stats`
//! summary, exit 143); and items 12 and 13: help, man page, completions and
//! `kwatch replay`'s stop and filter flags.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::util::kwatch::{command, Running};
use crate::util::SimProcess;

/// Waits until a kwatch has printed a line on stdout, or panics after `limit`.
fn wait_stdout(kw: &Running, limit: Duration) {
    let deadline = Instant::now() + limit;
    while kw.lines().is_empty() {
        assert!(
            Instant::now() < deadline,
            "no line on stdout within {limit:?}: {}",
            kw.stderr()
        );
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// Regression (issue 19, item 9): `kwatch … | head -1` in a quiet namespace waited for the
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

/// Regression (issue 19, item 9): `--until … --timeout` exited 3 without a word; kubectl
/// wait says `error: timed out waiting for the condition on deployments/web`.
#[test]
fn until_timing_out_says_what_it_waited_on_as_kubectl_wait() {
    let sim = SimProcess::start(&[]);
    let first = sim
        .kwatch("pods -n default -o name --until-synced")
        .exits(0);
    assert!(!first.stdout.is_empty(), "the sim preloads pods");
    let name = first.stdout[0].trim_start_matches("pod/").to_owned();

    // One named object.
    let one = sim
        .kwatch([
            "pods",
            &name,
            "-n",
            "default",
            "-o",
            "name",
            "--until",
            "jsonpath={.status.phase}=Nowhere",
            "--timeout",
            "2s",
        ])
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

/// Regression (issue 19, item 9): SIGTERM exited 143 without the `--stats` summary; it
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

/// Regression (issue 19, item 13): `kwatch replay` refused `-l`, `-n`, `--max-events`,
/// `--until` and `--stats`. They mean on a recording what they mean on a watch: the
/// recorded objects `-l` and `-n` select are those the server selects for the watch.
#[test]
fn replay_takes_the_watchs_stop_and_filter_flags() {
    let sim = SimProcess::start(&[]);
    let rec = sim.dir().join("rec.jsonl");
    let rec_arg = rec.to_str().expect("utf-8 path");
    let live = |extra: &[&str]| {
        let mut args = vec!["pods,configmaps", "-o", "name", "--until-synced"];
        if !extra.contains(&"-n") {
            args.push("-A");
        }
        args.extend_from_slice(extra);
        let out = sim.kwatch(&args[..]).exits(0);
        assert!(!out.stdout.is_empty(), "{args:?}");
        out
    };
    let all = live(&["--record", rec_arg]);
    let replay = |args: &[&str]| {
        let mut cmd = command(sim.dir());
        cmd.arg("replay").arg(&rec).args(args);
        Running::spawn(cmd).finish(Duration::from_secs(20))
    };
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    let whole = replay(&["-o", "name"]);
    assert_eq!(whole.code(), Some(0), "{}", whole.stderr);
    assert_eq!(sorted(whole.stdout.clone()), sorted(all.stdout.clone()));

    // -l and -n keep what the server's selection keeps.
    for (flag, value) in [
        ("-l", "app=api"),
        ("-l", "tier!=backend"),
        ("-n", "kube-system"),
    ] {
        let want = live(&[flag, value]);
        let have = replay(&["-o", "name", flag, value]);
        assert_eq!(have.code(), Some(0), "{}", have.stderr);
        assert!(!have.stdout.is_empty(), "{flag} {value}");
        assert!(have.stdout.len() < whole.stdout.len(), "{flag} {value}");
        assert_eq!(sorted(have.stdout), sorted(want.stdout), "{flag} {value}");
    }
    let bad = replay(&["-o", "name", "-l", "app in (x"]);
    assert_eq!(bad.code(), Some(2), "{}", bad.stderr);
    assert_eq!(bad.stderr.lines().count(), 1, "{}", bad.stderr);
    assert!(
        bad.stderr.starts_with("error: -l \"app in (x\": "),
        "{}",
        bad.stderr
    );

    // --max-events: the first N deltas, exit 0.
    let three = replay(&["-o", "name", "--max-events", "3"]);
    assert_eq!(three.code(), Some(0), "{}", three.stderr);
    assert_eq!(three.stdout, whole.stdout[..3]);

    // --until: up to the delta that meets it, exit 0; the recording ending first, exit 4.
    let fifth = whole.stdout[4]
        .split_once('/')
        .expect("TYPE/NAME")
        .1
        .to_owned();
    let until = format!("jsonpath={{.metadata.name}}={fifth}");
    let met = replay(&["-o", "name", "--until", &until]);
    assert_eq!(met.code(), Some(0), "{}", met.stderr);
    assert_eq!(met.stdout, whole.stdout[..5]);
    let unmet = replay(&["-o", "name", "--until", "jsonpath={.metadata.name}=nowhere"]);
    assert_eq!(unmet.code(), Some(4), "{}", unmet.stderr);
    assert_eq!(unmet.stdout, whole.stdout);

    // --stats: the summary of what was replayed, on stderr.
    let stats = replay(&["-o", "name", "--stats"]);
    assert_eq!(stats.code(), Some(0), "{}", stats.stderr);
    assert_eq!(stats.stdout, whole.stdout);
    let n = whole.stdout.len();
    assert!(
        stats.stderr.starts_with("kwatch stats\n"),
        "{}",
        stats.stderr
    );
    assert!(
        stats
            .stderr
            .contains(&format!("  deltas: {n} (Replaced {n})")),
        "{}",
        stats.stderr
    );
}

/// `kwatch ARGS…` without a cluster (help, man), run to completion.
fn offline(args: &[&str]) -> crate::util::kwatch::Finished {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cmd = command(dir.path());
    cmd.args(args);
    Running::spawn(cmd).finish(Duration::from_secs(20))
}

/// Regression (issue 19, item 12): `-h` was 159 lines and `--help` 246, neither with an
/// example or the exit codes. `-h` is a summary with examples; `--help` has every flag,
/// the examples, the exit codes and the environment.
#[test]
fn short_help_is_a_summary_and_long_help_has_examples_and_exit_codes() {
    let short = offline(&["-h"]);
    assert_eq!(short.code(), Some(0), "{}", short.stderr);
    assert!(!short.stdout.is_empty());
    assert!(
        short.stdout.len() <= 60,
        "-h is {} lines",
        short.stdout.len()
    );
    assert!(
        short.stdout.iter().any(|l| l == "Examples:"),
        "{:#?}",
        short.stdout
    );
    assert!(
        short.stdout.iter().any(|l| l == "  kwatch pods"),
        "{:#?}",
        short.stdout
    );
    // Every flag in -h is one line (COLUMNS=120): no wrapped help text.
    let flag_lines = short
        .stdout
        .iter()
        .filter(|l| l.trim_start().starts_with('-'))
        .count();
    assert!(flag_lines >= 25, "{:#?}", short.stdout);

    let long = offline(&["--help"]);
    assert_eq!(long.code(), Some(0), "{}", long.stderr);
    let text = long.stdout.join("\n");
    for want in [
        "Examples:",
        "Exit status:",
        "Environment:",
        "  kwatch deploy,svc -A -l app=web",
    ] {
        assert!(text.contains(want), "--help lacks {want:?}");
    }
    for (code, when) in [
        ("0", "a stop condition"),
        ("3", "--timeout came first"),
        ("143", "SIGTERM"),
    ] {
        assert!(
            long.stdout
                .iter()
                .any(|l| l.starts_with(&format!("  {code} ")) && l.contains(when)),
            "no exit code {code} in --help"
        );
    }
    for flag in ["--tls-server-name", "--pop-delay", "--diff-all"] {
        assert!(
            text.contains(flag) && !short.stdout.join("\n").contains(flag),
            "{flag}"
        );
    }
}

/// Regression (issue 19, item 12): the man page showed the hidden `[MORE]` argument,
/// referred to kwatch-sim(1) and other pages that do not exist, and had no EXIT STATUS,
/// ENVIRONMENT or EXAMPLES.
#[test]
fn the_man_page_has_its_sections_and_no_dangling_references() {
    let man = offline(&["man"]);
    assert_eq!(man.code(), Some(0), "{}", man.stderr);
    assert!(!man.stdout.is_empty());
    let text = man.stdout.join("\n");
    for section in [
        "NAME",
        "SYNOPSIS",
        "OPTIONS",
        "SUBCOMMANDS",
        "EXAMPLES",
        "EXIT STATUS",
        "ENVIRONMENT",
    ] {
        assert!(
            man.stdout
                .iter()
                .any(|l| *l == format!(".SH {section}") || *l == format!(".SH \"{section}\"")),
            "no {section} section"
        );
    }
    assert!(!text.contains("MORE"), "the hidden argument shows");
    assert!(
        !text.contains("kwatch\\-sim(1)") && !text.contains("(1)\n"),
        "a page that does not exist"
    );
    assert!(!text.contains("kwatch\\-"), "a kwatch-* page reference");
    assert!(
        text.contains("kwatch sim \\-\\-help"),
        "subcommands point to their --help"
    );
    for var in ["KUBECONFIG", "NO_COLOR", "RUST_LOG"] {
        assert!(text.contains(var), "{var}");
    }
}

/// `COMPLETE=fish kwatch -- WORDS…`: what the completion scripts ask for, the candidates.
fn complete(sim: &SimProcess, words: &[&str]) -> Vec<String> {
    let mut cmd = command(sim.dir());
    cmd.env("COMPLETE", "fish")
        .args(["--", "kwatch", "--kubeconfig"])
        .arg(&sim.kubeconfig)
        .args(words);
    let out = Running::spawn(cmd).finish(Duration::from_secs(20));
    assert_eq!(out.code(), Some(0), "{}", out.stderr);
    out.stdout
        .iter()
        .map(|l| l.split('\t').next().unwrap_or_default().to_owned())
        .collect()
}

/// Regression (issue 19, item 12): completions were static (`-n` and `--client-go`
/// completed file names); namespaces and resources come from the cluster the line
/// names, contexts from its kubeconfig, releases and formats from fixed lists.
#[test]
fn completion_asks_the_cluster_and_the_kubeconfig() {
    let sim = SimProcess::start(&[]);
    let namespaces = complete(&sim, &["-n", ""]);
    assert!(!namespaces.is_empty());
    let live: Vec<String> = sim
        .kubectl_ok(&["get", "namespaces", "-o", "name"])
        .lines()
        .map(|l| l.trim_start_matches("namespace/").to_owned())
        .collect();
    assert_eq!(namespaces, live);
    assert_eq!(complete(&sim, &["-n", "kube-s"]), ["kube-system"]);

    let resources = complete(&sim, &["de"]);
    assert!(
        resources.contains(&"deployments.apps".to_owned()),
        "{resources:?}"
    );
    assert!(
        resources.iter().all(|r| r.starts_with("de")),
        "{resources:?}"
    );
    assert!(complete(&sim, &["-n", "default", "con"]).contains(&"configmaps".to_owned()));

    let contexts = complete(&sim, &["--context", ""]);
    assert!(contexts.contains(&"kwatch-sim".to_owned()), "{contexts:?}");
    assert_eq!(
        complete(&sim, &["--client-go", ""]),
        ["0.32", "0.33", "0.34", "0.35", "0.36"]
    );
    assert!(complete(&sim, &["-o", "ya"]).contains(&"yaml".to_owned()));
}
