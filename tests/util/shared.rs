//! Helpers that several test modules share: reading tables, making objects, reading the
//! simulator's request log.

#![allow(dead_code)]

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::kwatch::{command, kubectl_f, of_type, Args, Finished, Running};
use super::{SimProcess, LIMIT};

/// The columns of a table line (split on runs of 2+ spaces; cells have single spaces at
/// most, e.g. `1 (5s ago)`).
pub fn cells(line: &str) -> Vec<String> {
    line.split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The cells of `line` cut at the columns' starts in `header` (a column starts after a
/// run of 2+ spaces), trimmed: empty cells stay in place.
pub fn cut(header: &str, line: &str) -> Vec<String> {
    let mut starts = vec![0];
    let b = header.as_bytes();
    for i in 2..b.len() {
        if b[i] != b' ' && b[i - 1] == b' ' && b[i - 2] == b' ' {
            starts.push(i);
        }
    }
    let chars: Vec<char> = line.chars().collect();
    starts
        .iter()
        .enumerate()
        .map(|(k, &s)| {
            let end = starts
                .get(k + 1)
                .copied()
                .unwrap_or(chars.len())
                .min(chars.len());
            chars[s.min(chars.len())..end]
                .iter()
                .collect::<String>()
                .trim()
                .to_owned()
        })
        .collect()
}

/// Table lines on stdout, `~` lines excluded (there should be none).
pub fn rows(stdout: &[String]) -> Vec<&String> {
    stdout.iter().filter(|l| !l.starts_with('~')).collect()
}

/// A table as (header cells, rows of cells), rows keyed by NAME.
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    pub fn parse(lines: &[&str]) -> Table {
        assert!(!lines.is_empty(), "an empty table");
        let header = cut(lines[0], lines[0]);
        let rows = lines[1..].iter().map(|l| cut(lines[0], l)).collect();
        Table { header, rows }
    }

    pub fn col(&self, name: &str) -> usize {
        self.header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name} in {:?}", self.header))
    }

    pub fn row(&self, name: &str) -> &Vec<String> {
        let n = self.col("NAME");
        self.rows
            .iter()
            .find(|r| r[n] == name)
            .unwrap_or_else(|| panic!("no row {name} in {:?}", self.rows))
    }
}

pub fn create(sim: &SimProcess, manifest: Value) -> Value {
    kubectl_f(sim, "create", &manifest)
}

pub fn create_all(sim: &SimProcess, manifests: &[Value]) {
    for m in manifests {
        kubectl_f(sim, "create", m);
    }
}

pub fn meta(name: &str) -> Value {
    json!({"name": name, "namespace": "default"})
}

pub fn demo_configmap(name: &str, value: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "demo"}},
        "data": {"k": value}})
}

pub fn patch_configmap(sim: &SimProcess, name: &str, value: &str) {
    let p = json!({"data": {"k": value}}).to_string();
    sim.kubectl_ok([
        "patch",
        "configmap",
        name,
        "-n",
        "default",
        "--type",
        "merge",
        "-p",
        &p,
    ]);
}

/// Makes the watches of configmaps relist with nothing new for them: a 410 forced by a
/// change of a secret ([`SimProcess::forced_410`]).
pub fn force_relist(sim: &SimProcess) {
    sim.forced_410(|sim| {
        sim.kubectl_ok([
            "patch",
            "secret",
            "app-credentials",
            "-n",
            "default",
            "--type",
            "merge",
            "-p",
            r#"{"metadata":{"labels":{"touched":"1"}}}"#,
        ])
    });
}

/// Names of the live objects of a resource in a namespace, from the simulator.
pub fn live_names(sim: &SimProcess, plural: &str, ns: &str) -> BTreeSet<String> {
    sim.state()["objects"][plural]
        .as_object()
        .unwrap()
        .keys()
        .filter_map(|k| k.strip_prefix(&format!("{ns}/")).map(str::to_owned))
        .collect()
}

/// The paths of the API requests the simulator answered (its request log).
pub fn request_paths(sim: &SimProcess) -> Vec<String> {
    sim.get("/_sim/requests").json()["requests"]
        .as_array()
        .expect("the request log")
        .iter()
        .map(|r| r["path"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// `kwatch configmaps -n default -o json --until-synced EXTRA…`, exit 0, records.
pub fn synced_configmaps(sim: &SimProcess, extra: &[&str]) -> Vec<Value> {
    let mut args: Vec<&str> = "configmaps -n default -o json --until-synced"
        .split(' ')
        .collect();
    args.extend_from_slice(extra);
    let out = sim.kwatch(&args[..]).exits(0);
    assert!(!out.stdout.is_empty(), "{extra:?}: {}", out.stderr);
    out.json()
}

/// `(clientGo, queue, streaming)` of the List record, after checking that there is one
/// and that Synced names the same informer.
pub fn informer(recs: &[Value]) -> (String, String, bool) {
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

pub fn streamed(sim: &SimProcess) -> bool {
    request_paths(sim)
        .iter()
        .any(|p| p.contains("sendInitialEvents=true"))
}

/// The API requests the server answered whose path starts with `prefix`, as
/// `(path, status)`.
pub fn requests_under(sim: &SimProcess, prefix: &str) -> Vec<(String, u64)> {
    sim.get("/_sim/requests").json()["requests"]
        .as_array()
        .expect("the request log")
        .iter()
        .filter_map(|r| {
            let path = r["path"].as_str()?;
            path.starts_with(prefix)
                .then(|| (path.to_owned(), r["status"].as_u64().unwrap_or(0)))
        })
        .collect()
}

pub fn is_watch(path: &str) -> bool {
    path.contains("watch=true") || path.contains("watch=1")
}

/// How many watches of `plural` the simulator has been asked for.
pub fn watches_of(sim: &SimProcess, plural: &str) -> usize {
    request_paths(sim)
        .iter()
        .filter(|p| is_watch(p) && p.contains(&format!("/{plural}?")))
        .count()
}

/// Waits until the simulator has been asked for more than `before` watches of `plural`:
/// a kwatch started since is watching, and sees every change made from now on.
pub fn await_watch(sim: &SimProcess, plural: &str, before: usize) {
    crate::util::eventually(crate::util::LIMIT, "a new watch", || {
        match watches_of(sim, plural) {
            n if n > before => Ok(()),
            _ => Err(request_paths(sim)),
        }
    });
}

/// A kwatch that must stop at the command line: `--server` points at a port nothing
/// listens on, so any request would end otherwise.
pub fn refused(args: &[&str]) -> Finished {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cmd = command(dir.path());
    cmd.args(args).args(["--server", "https://127.0.0.1:1"]);
    Running::spawn(cmd).finish(LIMIT)
}

/// Exit 2 (usage), exactly one line `error: <kubectl's words>…`, nothing on stdout.
pub fn usage_error(out: &Finished, words: &str, what: &str) {
    error_exit(out, 2, words, what);
}

/// Exit `code`, exactly one line `error: <words>…` on stderr, nothing on stdout.
pub fn error_exit(out: &Finished, code: i32, words: &str, what: &str) {
    assert_eq!(out.code(), Some(code), "{what}: {out:?}");
    assert!(out.stdout.is_empty(), "{what}: {out:?}");
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{what}: {:?}", out.stderr);
    assert!(
        lines[0].starts_with(&format!("error: {words}")),
        "{what}: {:?}",
        lines[0]
    );
}

/// The lines of the run's stderr that contain `word`.
pub fn stderr_with<'a>(out: &'a Finished, word: &str) -> Vec<&'a str> {
    out.stderr.lines().filter(|l| l.contains(word)).collect()
}

/// Exit 1 and exactly one line on stderr, which is returned.
pub fn one_error_line(f: &Finished, what: &str) -> String {
    assert_eq!(f.code(), Some(1), "{what}: {f:?}");
    let lines: Vec<&str> = f.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{what}: not one stderr line:\n{}", f.stderr);
    assert!(!lines[0].contains("panicked"), "{what}: {}", lines[0]);
    lines[0].to_owned()
}

/// `127.0.0.1:PORT` of the sim.
pub fn host_port(sim: &SimProcess) -> String {
    sim.url.trim_start_matches("https://").to_owned()
}

/// `kwatch ARGS` with the sim's scrubbed HOME, `env` added and no `--kubeconfig` unless
/// ARGS give one; run to its end.
pub fn kwatch_env(sim: &SimProcess, env: &[(&str, &str)], args: impl Args) -> Finished {
    let mut cmd = command(sim.dir());
    cmd.envs(env.iter().copied()).args(args.words());
    Running::spawn(cmd).finish(LIMIT)
}

/// `127.0.0.1:PORT` of a server that accepts every TCP connection and never writes a byte
/// (not even a TLS handshake): each request to it waits until its client gives up. It
/// serves until the test process ends.
pub fn silent_server() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        // Held, so that no connection is closed.
        let mut held = Vec::new();
        for conn in listener.incoming() {
            held.push(conn);
        }
    });
    addr
}
