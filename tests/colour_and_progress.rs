//! What a terminal gets and a pipe does not: colour only when asked (`--color`, NO_COLOR),
//! whole and balanced; the progress line while a long list loads; control characters from
//! the server escaped for terminals and passed through into pipes.

use std::time::Duration;

use serde_json::json;

use crate::util::kwatch::{kubectl_f, of_type, on_new_sim, Finished, Running};
use crate::util::shared::*;
use crate::util::SimProcess;

#[test]
fn progress_shows_on_a_terminal_while_a_long_list_loads_then_goes() {
    let (tty, json) = on_a_terminal("", "pods");
    assert!(tty.contains("\r\x1b[Kloading: listing pods;"), "{tty:?}");
    assert!(tty.ends_with("\r\x1b[K"), "the line is cleared: {tty:?}");
    assert!(!json.contains('\x1b'), "stdout has no progress");
    assert!(json.lines().last().unwrap().contains("\"Synced\""));
}

/// At 80 columns the loading line is cut to 79 characters, so it never wraps.
#[test]
fn the_progress_line_fits_an_80_column_terminal() {
    let resources = "pods,configmaps,deployments,replicasets,services";
    let (tty, _) = on_a_terminal("stty cols 80 rows 24; ", resources);
    let shown: Vec<&str> = tty
        .split("\r\x1b[K")
        .filter(|s| s.starts_with("loading:"))
        .collect();
    assert!(!shown.is_empty(), "{tty:?}");
    for s in &shown {
        assert!(
            s.chars().count() < 80,
            "{} characters: {s:?}",
            s.chars().count()
        );
    }
    assert!(shown.iter().any(|s| s.ends_with('…')), "{shown:?}");
}

/// `kwatch RESOURCES -A --page-size 10 --until-synced -o json` against a sim with 3000
/// objects, on a terminal that script(1) gives it (after the shell commands `setup`),
/// stdout into a file: what the terminal showed (stderr) and the file. Without script(1)
/// the test fails with the command that installs it. kwatch must exit 0.
fn on_a_terminal(setup: &str, resources: &str) -> (String, String) {
    // Looked for first: its absence fails the test before a sim is started.
    let mut script = crate::util::tools::script();
    let sim = SimProcess::start(&["--objects", "3000"]);
    let out_file = sim.dir().join("out.jsonl");
    let cmd = format!(
        "{setup}{} --kubeconfig {} {resources} -A --page-size 10 --until-synced -o json > {}",
        env!("CARGO_BIN_EXE_kwatch"),
        sim.kubeconfig.display(),
        out_file.display()
    );
    script
        .args(["-qec", &cmd, "/dev/null"])
        .env_clear()
        .env("HOME", sim.dir())
        .env("PATH", "/usr/bin:/bin");
    let out = Running::spawn(script).finish(Duration::from_secs(60));
    assert_eq!(out.code(), Some(0), "{}", out.stderr);
    let json = std::fs::read_to_string(&out_file).unwrap();
    (out.stdout.join("\n"), json)
}

#[test]
fn colour_only_when_asked_and_server_control_characters_escaped_for_terminals_only() {
    let sim = SimProcess::start(&["--objects", "1"]);
    create(&sim, demo_configmap("esc", "a\u{1b}[2Jb"));
    let colour = sim.kwatch("configmaps esc -n default --until-synced --color always");
    let row = colour.stdout.iter().find(|l| l.contains("esc")).unwrap();
    assert!(
        row.starts_with("\u{1b}["),
        "the DELTA cell is coloured: {row:?}"
    );
    let plain = sim
        .kwatch("configmaps esc -n default --until-synced")
        .success();
    assert_esc_row_without_escapes(&plain, "a pipe gets no colour");
    for format in ["custom-columns=V:.data.k", "jsonpath={.data.k}"] {
        let out = sim
            .kwatch([
                "configmaps",
                "esc",
                "-n",
                "default",
                "--until-synced",
                "-o",
                format,
            ])
            .exits(0);
        // Into a pipe, kubectl's script formats write the server's bytes;
        // they are escaped only on a terminal.
        let text = out.stdout.join("\n");
        assert!(text.contains("a\u{1b}[2Jb"), "{format}: {text:?}");
    }
    // JSON keeps the value exactly (escaped by JSON itself).
    let json = sim.kwatch("configmaps esc -n default --until-synced -o json");
    let recs = json.json();
    assert_eq!(
        of_type(&recs, "Replaced")[0]["object"]["data"]["k"],
        "a\u{1b}[2Jb"
    );
}

#[test]
fn colour_always_with_no_color_set_is_whole_with_no_stray_reset() {
    // The fixture's environment has NO_COLOR=1; --color always overrides it.
    let (_sim, out) = on_new_sim(
        &["--objects", "2"],
        "configmaps -n default --until-synced --color always",
    );
    let lines = rows(&out.stdout);
    assert!(lines.len() >= 3, "a header and two rows: {lines:?}");
    assert!(
        !lines[0].contains('\u{1b}'),
        "the header is plain: {lines:?}"
    );
    for row in &lines[1..] {
        assert!(
            row.starts_with("\u{1b}[36mReplaced\u{1b}[0m   "),
            "the first cell is coloured and closed: {row:?}"
        );
    }
    assert!(out.stderr.lines().count() > 0, "the `~` lines");
    assert!(
        out.stderr
            .lines()
            .all(|l| l.starts_with("\u{1b}[90m~ ") && l.ends_with("\u{1b}[0m")),
        "{:?}",
        out.stderr
    );
    for text in [out.stdout.join("\n"), out.stderr.clone()] {
        assert!(!text.contains("\u{1b}[m"), "a stray reset: {text:?}");
    }
}

#[test]
fn script_formats_write_server_bytes_into_a_pipe() {
    let sim = SimProcess::start(&["--objects", "1"]);
    kubectl_f(
        &sim,
        "create",
        &json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "esc", "namespace": "default"},
                "data": {"k": "a\u{1b}[2Jb"}}),
    );
    let base = ["configmaps", "esc", "-n", "default", "--until-synced", "-o"];
    let jsonpath = sim
        .kwatch(&[&base[..], &["jsonpath={.data.k}"]].concat()[..])
        .exits(0);
    assert_eq!(jsonpath.stdout, ["a\u{1b}[2Jb"]);
    let columns = sim.kwatch(&[&base[..], &["custom-columns=V:.data.k"]].concat()[..]);
    assert_eq!(columns.stdout, ["V", "a\u{1b}[2Jb"]);
    // The table is for people: escaped even into a pipe.
    let table = sim.kwatch(&base[..5]).success();
    assert_esc_row_without_escapes(&table, "the table escapes");
}

/// Asserts that `out` shows the ConfigMap `esc`'s row and no ESC byte on any line.
#[track_caller]
fn assert_esc_row_without_escapes(out: &Finished, why: &str) {
    let lines = &out.stdout;
    assert!(
        lines.iter().any(|l| l.contains("esc")),
        "the row: {lines:?}"
    );
    assert!(
        lines.iter().all(|l| !l.contains('\u{1b}')),
        "{why}: {lines:?}"
    );
}
