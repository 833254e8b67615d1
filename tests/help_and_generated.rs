//! Help, man page and completions: the committed completions/ and man/ are generated from
//! the clap definition (these tests fail when they are stale; regenerate with
//! `KWATCH_BLESS=1 cargo test generated`), the help snapshots, short and long help, the man
//! page's sections, dynamic completion asking the cluster.

use std::path::PathBuf;
use std::time::Duration;

use clap::CommandFactory;
use clap_complete::Shell;
use kwatch::app::cli::Cli;
use kwatch::app::complete::completion;
use kwatch::app::man::man_page;

use crate::util::kwatch::{command, Running};
use crate::util::{SimProcess, LIMIT};

fn check(path: &str, want: &[u8]) {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path);
    if std::env::var_os("KWATCH_BLESS").is_some() {
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, want).unwrap();
        return;
    }
    let have = std::fs::read(&file).unwrap_or_default();
    assert!(
        have == want,
        "{path} is stale: run `KWATCH_BLESS=1 cargo test generated` and commit the result"
    );
}

#[test]
fn cli_definition_is_consistent() {
    Cli::command().debug_assert();
}

#[test]
fn completions_are_fresh() {
    for (shell, file) in [
        (Shell::Bash, "completions/kwatch.bash"),
        (Shell::Zsh, "completions/_kwatch"),
        (Shell::Fish, "completions/kwatch.fish"),
        (Shell::PowerShell, "completions/_kwatch.ps1"),
        (Shell::Elvish, "completions/kwatch.elv"),
    ] {
        check(file, &completion(shell, false));
        let fixed = file.replacen("completions/", "completions/static/", 1);
        check(&fixed, &completion(shell, true));
    }
}

#[test]
fn man_page_is_fresh() {
    check("man/kwatch.1", &man_page().unwrap());
}

/// `kwatch ARGS…` without a cluster (help, man), run to completion.
fn offline(args: &[&str]) -> crate::util::kwatch::Finished {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cmd = command(dir.path());
    cmd.args(args);
    Running::spawn(cmd).finish(Duration::from_secs(20))
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
    // stderr is the terminal under the prompt being completed.
    assert_eq!(out.stderr, "", "{words:?}");
    out.stdout
        .iter()
        .map(|l| l.split('\t').next().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn help_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = command(dir.path());
    cmd.arg("--help");
    let out = Running::spawn(cmd).finish(LIMIT);
    assert_eq!(out.code(), Some(0));
    insta::assert_snapshot!("help", out.stdout.join("\n"));
    let mut cmd = command(dir.path());
    cmd.args(["replay", "--help"]);
    let out = Running::spawn(cmd).finish(LIMIT);
    insta::assert_snapshot!("replay_help", out.stdout.join("\n"));
}

/// Regression: `-h` was 159 lines and `--help` 246, neither with an
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

/// Regression: the man page showed the hidden `[MORE]` argument,
/// referred to kwatch-sim(1) and other pages that do not exist, and had no EXIT STATUS,
/// ENVIRONMENT or EXAMPLES.
#[test]
fn the_man_page_has_its_sections_and_no_dangling_references() {
    let man = offline(&["man"]);
    assert_eq!(man.code(), Some(0), "{}", man.stderr);
    assert!(!man.stdout.is_empty());
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
    let text = man.stdout.join("\n");
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

/// Regression: completions were static (`-n` and `--client-go`
/// completed file names); namespaces and resources come from the cluster the line
/// names, contexts from its kubeconfig, releases and formats from fixed lists.
#[test]
fn completion_asks_the_cluster_and_the_kubeconfig() {
    let sim = SimProcess::start(&[]);
    let namespaces = complete(&sim, &["-n", ""]);
    assert!(!namespaces.is_empty());
    let live: Vec<String> = sim
        .kubectl_ok("get namespaces -o name")
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
        ["0.32", "0.33", "0.34", "0.35", "0.36", "0.37"]
    );
    assert!(complete(&sim, &["-o", "ya"]).contains(&"yaml".to_owned()));
}

/// Regression: `kwatch cm -n NS <TAB>` offered subcommands and flags but no object
/// names, `deploy/<TAB>` nothing, and the values of `--types`, `--changes` and
/// `--transform` were not completed. Names come from the cluster, in the namespace the line
/// names (kubectl's, compared here); the fixed words from the parsers' own lists, after the
/// last comma of a list.
#[test]
fn completion_offers_object_names_and_the_filter_words() {
    use kwatch::cache::transform::Transform;
    use kwatch::informer::filter::{Parts, Types};

    let sim = SimProcess::start(&[]);
    // kubectl's names of RESOURCE with these namespace flags, as `-o name` prints them.
    let kubectl_names = |args: &str| -> Vec<String> {
        let mut names: Vec<String> = sim
            .kubectl_ok(format!("get {args} -o name").as_str())
            .lines()
            .filter_map(|l| l.split_once('/').map(|(_, n)| n.to_owned()))
            .collect();
        names.sort();
        names.dedup();
        names
    };
    // The candidates that are no flag or subcommand (offered beside a positional).
    let names = |words: &[&str]| -> Vec<String> {
        let subcommands = ["sim", "completions", "man", "replay", "check", "help"];
        complete(&sim, words)
            .into_iter()
            .filter(|c| !c.starts_with('-') && !subcommands.contains(&c.as_str()))
            .collect()
    };
    let in_system = kubectl_names("configmaps -n kube-system");
    assert!(!in_system.is_empty());
    // A server's warning (kubectl's deprecated APIs) is not written into the prompt.
    sim.control(
        "POST",
        "warn",
        serde_json::json!({"text": "this API is deprecated", "count": 100}),
    );
    assert_eq!(names(&["cm", "-n", "kube-system", ""]), in_system);
    // Without -n, the context's namespace, as kubectl's.
    let in_context = kubectl_names("configmaps");
    assert_ne!(in_context, in_system, "the seeds no longer tell them apart");
    assert_eq!(names(&["cm", ""]), in_context);
    let prefix = &in_context[0][..1];
    let want: Vec<String> = in_context
        .iter()
        .filter(|n| n.starts_with(prefix))
        .cloned()
        .collect();
    assert_eq!(complete(&sim, &["configmaps", prefix]), want);

    // -A: every namespace's (a word after -A is no value of it: -A takes one after `=`).
    let everywhere = kubectl_names("configmaps -A");
    assert_eq!(names(&["-A", "cm", ""]), everywhere);
    assert_eq!(names(&["cm", "-A", ""]), everywhere);
    // One name only.
    assert_eq!(
        names(&["-A", "cm", &everywhere[0], ""]),
        Vec::<String>::new()
    );

    // TYPE/NAME, in the namespace of -n.
    for ns in ["default", "team-a"] {
        let want: Vec<String> = kubectl_names(&format!("deployments -n {ns}"))
            .into_iter()
            .map(|n| format!("deploy/{n}"))
            .collect();
        assert!(!want.is_empty(), "no deployment in {ns}");
        assert_eq!(complete(&sim, &["-n", ns, "deploy/"]), want);
    }
    // A list of resources, after its last comma.
    let list = complete(&sim, &["pods,de"]);
    assert!(
        list.contains(&"pods,deployments.apps".to_owned()),
        "{list:?}"
    );
    assert!(list.iter().all(|r| r.starts_with("pods,de")), "{list:?}");

    // The fixed words, from the lists the parsers read.
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    let owned = |v: Vec<&str>| v.into_iter().map(str::to_owned).collect::<Vec<_>>();
    assert_eq!(
        complete(&sim, &["--types", ""]),
        sorted(owned(Types::names()))
    );
    assert_eq!(
        complete(&sim, &["--types", "Added,Re"]),
        ["Added,Replaced", "Added,ReplacedAll"]
    );
    assert_eq!(
        complete(&sim, &["--changes", ""]),
        sorted(owned(Parts::names()))
    );
    let after_spec = complete(&sim, &["--changes", "spec,"]);
    let want: Vec<String> = sorted(owned(Parts::names()))
        .into_iter()
        .filter(|p| p != "spec")
        .map(|p| format!("spec,{p}"))
        .collect();
    assert_eq!(after_spec, want);
    assert_eq!(
        complete(&sim, &["--transform", ""]),
        owned(Transform::FORMS.to_vec())
    );
    assert_eq!(
        complete(&sim, &["--transform", "st"]),
        ["strip-managed-fields", "strip-last-applied"]
    );
}

/// A cluster that stops answering costs a Tab press no more than the
/// completion's patience: the names it offered before are gone, and the shell gets its
/// prompt back (`complete` fails a completion that takes 20 s).
#[test]
fn completion_of_names_does_not_hang_on_a_frozen_cluster() {
    let sim = SimProcess::start(&[]);
    assert!(!complete(&sim, &["deploy/"]).is_empty());
    sim.control(
        "POST",
        "freeze",
        serde_json::json!({"seconds": 120, "newConnections": true}),
    );
    assert_eq!(complete(&sim, &["deploy/"]), Vec::<String>::new());
}

/// Every option of `--help` has its description in the man page, once. Once 28 flags
/// that only `--help` lists had none, and 15 printed their summary and then the
/// longer text that restates it.
#[test]
fn every_flag_of_help_is_described_once_in_the_man_page() {
    let page = String::from_utf8(man_page().unwrap()).unwrap();
    let plain = |s: &str| {
        s.replace("\\-", "-")
            .replace("\\*(Aq", "'")
            .replace("\\fB", "")
            .replace("\\fR", "")
            .replace("\\fI", "")
    };
    // Each `.TP` entry of the page: its first line (the option) and its text.
    let entries: Vec<(String, String)> = page
        .split("\n.TP\n")
        .skip(1)
        .filter_map(|e| {
            let e = e.split("\n.SH").next().unwrap_or_default();
            let (head, text) = e.split_once('\n')?;
            Some((plain(head), plain(text)))
        })
        .collect();
    let mut cmd = Cli::command();
    cmd.build();
    let mut checked = 0;
    for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
        let Some(long) = arg.get_long() else { continue };
        let flag = format!("--{long}");
        let (_, text) = entries
            .iter()
            .find(|(head, _)| head.split([' ', ',', '[']).any(|w| w == flag))
            .unwrap_or_else(|| panic!("{flag}: no entry in the man page"));
        let words: Vec<&str> = text.split_whitespace().collect();
        assert!(
            words.len() >= 2,
            "{flag}: no description in the man page: {text:?}"
        );
        // No run of eight words is said twice.
        let mut seen = std::collections::HashSet::new();
        for w in words.windows(8) {
            assert!(seen.insert(w), "{flag}: said twice in the man page: {text}");
        }
        checked += 1;
    }
    assert!(checked > 60, "{checked} options");
}
