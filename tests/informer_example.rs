//! kwatch-core's example program (`crates/core/examples/informer.rs`), a client-go
//! informer with an event handler built on the library alone, run as a user runs it
//! against `kwatch sim`: the handler calls it prints are the simulator's objects (an
//! `OnAdd` of each pod of the initial list, with its resourceVersion), then the change
//! the test makes through kubectl.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use serde_json::Value;

use crate::util::kwatch::Running;
use crate::util::{eventually, SimProcess, LIMIT};

/// The example's binary, built once per test binary run.
///
/// Cargo gives integration tests the path of the package's binaries
/// (`CARGO_BIN_EXE_<name>`) but not of another package's examples, `cargo test --test
/// integration` builds no example, and a binary found on disk may be stale. So the test
/// asks cargo itself: the cargo running the tests (`CARGO`), `--locked`, into the target
/// directory that holds the tests' own `kwatch`. It builds every example of the workspace
/// (`--examples`), as `cargo test` does: the same units, with the same features, so after
/// a `cargo test` it finds them fresh and builds nothing, where `--example informer` alone
/// would build its dependencies again with other features. The path is the one cargo
/// reports (`--message-format json`), not a guess. Cargo holds no lock on the target
/// directory while the tests run, so this build does not wait for the one that ran them.
fn example() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let kwatch = Path::new(env!("CARGO_BIN_EXE_kwatch"));
        let profile_dir = kwatch.parent().expect("the profile's directory");
        let target_dir = profile_dir.parent().expect("the target directory");
        // dev and test build alike (a profile's name is not part of its artifacts'
        // hashes); release is release; a custom profile has a directory of its name.
        let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") | None => "dev",
            Some(p) => p,
        };
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut cmd = Command::new(cargo);
        // Without what cargo set for this test (CARGO_MANIFEST_DIR, CARGO_PKG_NAME, …):
        // build scripts that watch such a variable (ring's: `rerun-if-env-changed`)
        // would otherwise run again, and everything above them be built again.
        for (name, _) in std::env::vars_os() {
            let name = name.to_string_lossy();
            if set_by_cargo_for_a_test(&name) {
                cmd.env_remove(&*name);
            }
        }
        let out = cmd
            .args(["build", "--locked", "--examples", "--profile", profile])
            .args(["--message-format", "json-render-diagnostics"])
            .arg("--target-dir")
            .arg(target_dir)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdin(Stdio::null())
            .output()
            .expect("running cargo");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "cargo build --examples failed:\n{said}"
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        let executable = stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|m| {
                m["reason"] == "compiler-artifact"
                    && m["target"]["name"] == "informer"
                    && m["target"]["kind"] == serde_json::json!(["example"])
            })
            .and_then(|m| m["executable"].as_str().map(PathBuf::from));
        executable.expect("cargo named no executable of the example")
    })
}

/// Whether cargo sets the variable `name` for the crate it runs (the cargo reference's
/// "Environment variables Cargo sets for crates"), rather than the user for cargo.
fn set_by_cargo_for_a_test(name: &str) -> bool {
    const PREFIXES: [&str; 2] = ["CARGO_PKG_", "CARGO_BIN_EXE_"];
    const NAMES: [&str; 8] = [
        "CARGO_MANIFEST_DIR",
        "CARGO_MANIFEST_PATH",
        "CARGO_CRATE_NAME",
        "CARGO_BIN_NAME",
        "CARGO_PRIMARY_PACKAGE",
        "CARGO_TARGET_TMPDIR",
        "CARGO_RUSTC_CURRENT_DIR",
        "OUT_DIR",
    ];
    NAMES.contains(&name) || PREFIXES.iter().any(|p| name.starts_with(p))
}

/// The example run with `args` against `sim`, as a user runs it: the sim's kubeconfig in
/// `KUBECONFIG`, the environment scrubbed.
fn start_example(sim: &SimProcess, args: &[&str]) -> Running {
    let mut cmd = Command::new(example());
    cmd.args(args)
        .env_clear()
        .env("KUBECONFIG", &sim.kubeconfig)
        .env("HOME", sim.dir())
        .env("PATH", "/usr/bin:/bin")
        .stdin(Stdio::null());
    Running::spawn(cmd)
}

/// `namespace/name` and resourceVersion of every pod the simulator holds, sorted.
fn pods(sim: &SimProcess) -> Vec<(String, String)> {
    let list = sim.get("/api/v1/pods").json();
    let mut pods: Vec<(String, String)> = list["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|p| {
            let m = &p["metadata"];
            let key = format!(
                "{}/{}",
                m["namespace"].as_str().unwrap(),
                m["name"].as_str().unwrap()
            );
            (key, m["resourceVersion"].as_str().unwrap().to_owned())
        })
        .collect();
    pods.sort();
    pods
}

/// Runs the example on pods (`extra` after it) against a sim of three pods until its
/// initial list's three OnAdds, changes the first pod with `change` (which returns the
/// line its handler call prints, given the pod's key and resourceVersion), and waits for
/// the example to end after its fourth call. Returns its stderr.
fn initial_list_then(
    sim_args: &[&str],
    extra: &[&str],
    change: impl FnOnce(&SimProcess, &str, &str) -> String,
) -> String {
    let mut args = vec!["--objects", "3"];
    args.extend(sim_args);
    let sim = SimProcess::start(&args);
    let pods = pods(&sim);
    assert_eq!(pods.len(), 3, "{pods:?}");
    let mut words = vec!["pods", "--calls", "4", "--timeout", "60"];
    words.extend(extra);
    let run = start_example(&sim, &words);
    let adds = eventually(LIMIT, "the initial list's three OnAdds", || {
        let lines = run.lines();
        if lines.len() >= 3 {
            Ok(lines)
        } else {
            Err((lines, run.stderr()))
        }
    });
    let mut adds = adds[..3].to_vec();
    adds.sort();
    let want: Vec<String> = pods
        .iter()
        .map(|(key, rv)| format!("OnAdd {key} {rv} initial"))
        .collect();
    assert_eq!(adds, want, "stderr:\n{}", run.stderr());

    let (key, rv) = &pods[0];
    let call = change(&sim, key, rv);
    let done = run.finish(LIMIT);
    assert!(done.status.success(), "{done:#?}");
    assert_eq!(done.stdout.len(), 4, "{done:#?}");
    assert_eq!(done.stdout[3], call, "{done:#?}");
    done.stderr
}

/// `kubectl label` of the pod `key`: its `OnUpdate` line, old → new resourceVersion.
fn label(sim: &SimProcess, key: &str, rv: &str) -> String {
    let (ns, name) = key.split_once('/').unwrap();
    sim.kubectl_ok(["label", "pod", "-n", ns, name, "example=informer"]);
    let pod = sim
        .get(&format!("/api/v1/namespaces/{ns}/pods/{name}"))
        .json();
    let new = pod["metadata"]["resourceVersion"].as_str().unwrap();
    format!("OnUpdate {key} {rv}->{new}")
}

#[test]
fn the_library_example_prints_the_handler_calls_of_the_servers_release() {
    // The simulator reports Kubernetes 1.32: client-go 0.32's informer, a DeltaFIFO.
    let stderr = initial_list_then(&[], &[], label);
    assert!(
        stderr.contains("client-go 0.32's informer (DeltaFIFO) on /api/v1/pods"),
        "{stderr}"
    );
}

#[test]
fn the_library_example_runs_the_release_it_is_asked_for() {
    // 0.36: a streaming list into an atomic RealFIFO; the same calls.
    let stderr = initial_list_then(&[], &["--client-go", "0.36"], label);
    assert!(
        stderr.contains("client-go 0.36's informer (RealFIFO+batch+atomic)"),
        "{stderr}"
    );
}
