//! Issues 11 and 15: one rule for failures. Before the first sync, an error that will not
//! fix itself ends kwatch with one line in kubectl's words and exit 1, in every output
//! format, with a cold or a warm discovery cache; `--until-synced` never exits 0
//! without having synced.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::util::kwatch::{command, Finished, Running};
use crate::util::{SimProcess, LIMIT};

const FORMATS: [&str; 7] = [
    "table",
    "json",
    "yaml",
    "name",
    "watch-events",
    "jsonpath={.metadata.name}",
    "custom-columns=NAME:.metadata.name",
];

/// `kwatch` with HOME = `home` (its discovery cache) and this kubeconfig, to completion.
fn kwatch(home: &Path, kubeconfig: &Path, args: &[&str]) -> (Finished, Duration) {
    let mut cmd: Command = command(home);
    cmd.arg("--kubeconfig").arg(kubeconfig).args(args);
    let start = Instant::now();
    let out = Running::spawn(cmd).finish(LIMIT);
    (out, start.elapsed())
}

/// Exit 1 with exactly one line on stderr, which starts with `prefix`, and no data.
fn one_line(out: &Finished, prefix: &str, what: &str) {
    assert_eq!(out.code(), Some(1), "{what}: {out:?}");
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{what}: one line: {:?}", out.stderr);
    assert!(lines[0].starts_with(prefix), "{what}: {:?}", lines[0]);
    assert!(
        out.stdout.iter().all(|l| !l.contains("app-config")),
        "{what}: no data: {:?}",
        out.stdout
    );
}

fn discovery_requests(sim: &SimProcess) -> u64 {
    sim.state()["discoveryRequests"].as_u64().unwrap()
}

/// A bad selector: 400 from the streaming list (`--watch-list auto`: the sim's 1.32 gets
/// client-go 0.32's paged LIST by default), no fallback to LIST, one line, exit 1; the
/// first run with a cold cache, the second with the cache the first one wrote.
#[test]
fn a_bad_selector_is_one_line_in_every_format_cold_and_warm() {
    for format in FORMATS {
        let sim = SimProcess::start(&[]);
        for cache in ["cold", "warm"] {
            let before = discovery_requests(&sim);
            let args = [
                "configmaps",
                "-l",
                "a in (",
                "-o",
                format,
                "--until-synced",
                "--watch-list",
                "auto",
            ];
            let (out, _) = kwatch(sim.dir(), &sim.kubeconfig, &args);
            let what = format!("-o {format}, {cache} cache");
            one_line(
                &out,
                "Error from server (BadRequest): unable to parse requirement",
                &what,
            );
            let fallback = |l: &str| l.contains("WatchListFallback") || l.contains("using LIST");
            assert!(
                !out.stderr.lines().any(fallback) && !out.stdout.iter().any(|l| fallback(l)),
                "{what}: no fallback: {out:?}"
            );
            if cache == "warm" {
                assert_eq!(
                    discovery_requests(&sim),
                    before,
                    "{what}: the cache was used"
                );
            }
        }
    }
}

/// A wrong token: 401, kubectl's words, in every format, cold and warm.
#[test]
fn a_wrong_token_is_kubectls_unauthorized_line() {
    let sim = SimProcess::start(&[]);
    let text = std::fs::read_to_string(&sim.kubeconfig).unwrap();
    let bad = sim.dir().join("bad-token.kubeconfig");
    std::fs::write(&bad, text.replace(&sim.token, "not-the-token")).unwrap();
    // Warm the cache with the good token first, as a user whose token expired has it.
    let (ok, _) = kwatch(
        sim.dir(),
        &sim.kubeconfig,
        &["configmaps", "-o", "name", "--until-synced"],
    );
    assert_eq!(ok.code(), Some(0), "{ok:?}");
    let cold = tempfile::tempdir().unwrap();
    for format in FORMATS {
        for (home, cache) in [(sim.dir(), "warm"), (cold.path(), "cold")] {
            let args = ["configmaps", "-o", format, "--until-synced"];
            let (out, _) = kwatch(home, &bad, &args);
            one_line(
                &out,
                "error: You must be logged in to the server (Unauthorized)",
                &format!("-o {format}, {cache} cache"),
            );
        }
    }
    let k = sim
        .kubectl_cmd(&["--kubeconfig", bad.to_str().unwrap(), "get", "configmaps"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&k.stderr).contains("error: You must be logged in to the server ("),
        "kubectl says the same: {k:?}"
    );
}

/// A server that is gone: the connection is refused. With the discovery cache warm (no
/// request before the list) as with it cold, one line and exit 1 at once; with
/// `--until-synced --timeout` too (it used to exit 0 with no output).
#[test]
fn a_refused_connection_ends_it_at_once_cold_or_warm() {
    let sim = SimProcess::start(&[]);
    let keep = tempfile::tempdir().unwrap();
    let kubeconfig = keep.path().join("kubeconfig");
    std::fs::copy(&sim.kubeconfig, &kubeconfig).unwrap();
    let warm = keep.path().join("home");
    std::fs::create_dir(&warm).unwrap();
    let (ok, _) = kwatch(
        &warm,
        &kubeconfig,
        &["configmaps", "-o", "name", "--until-synced"],
    );
    assert_eq!(ok.code(), Some(0), "{ok:?}");
    let port = sim.url.rsplit(':').next().unwrap().to_owned();
    let _ = sim.terminate();
    let cold = tempfile::tempdir().unwrap();
    let want = format!(
        "The connection to the server 127.0.0.1:{port} was refused - did you specify the right host or port?"
    );
    for format in FORMATS {
        for (home, cache) in [(warm.as_path(), "warm"), (cold.path(), "cold")] {
            for extra in [&[][..], &["--timeout", "4s"]] {
                let mut args = vec!["configmaps", "-o", format, "--until-synced"];
                args.extend_from_slice(extra);
                let (out, took) = kwatch(home, &kubeconfig, &args);
                let what = format!("-o {format}, {cache} cache, {extra:?}");
                one_line(&out, &want, &what);
                assert!(took < Duration::from_secs(3), "{what}: at once: {took:?}");
            }
        }
    }
}

/// `--request-timeout` exceeded before the first sync is one line and exit 1 (it used to
/// run for ever printing nothing), cold or warm.
#[test]
fn request_timeout_exceeded_ends_it() {
    let sim = SimProcess::start(&[]);
    let (ok, _) = kwatch(
        sim.dir(),
        &sim.kubeconfig,
        &["configmaps", "-o", "name", "--until-synced"],
    );
    assert_eq!(ok.code(), Some(0), "{ok:?}");
    let cold = tempfile::tempdir().unwrap();
    for (home, cache) in [(sim.dir(), "warm"), (cold.path(), "cold")] {
        // The server takes 1 s for a list at a resourceVersion it has not reached (a
        // streaming list: `--watch-list auto`, as the sim's 1.32 gets a paged LIST by
        // default).
        let args = [
            "configmaps",
            "-o",
            "name",
            "--until-synced",
            "--request-timeout",
            "1ms",
            "--watch-list",
            "auto",
        ];
        let (out, took) = kwatch(home, &sim.kubeconfig, &args);
        one_line(
            &out,
            "Unable to connect to the server: no answer within 1ms (--request-timeout)",
            cache,
        );
        assert!(took < Duration::from_secs(5), "{cache}: {took:?}");
    }
}

/// `--until-synced` never exits 0 without having synced: a server that fails every list
/// (500, no Retry-After: retried with backoff) until `--timeout` gives exit 3, nothing on
/// stdout.
#[test]
fn until_synced_that_times_out_first_exits_3() {
    let sim = SimProcess::start(&[]);
    let (ok, _) = kwatch(
        sim.dir(),
        &sim.kubeconfig,
        &["configmaps", "-o", "name", "--until-synced"],
    );
    assert_eq!(ok.code(), Some(0), "{ok:?}");
    // Discovery comes from the cache; every list and watch fails.
    sim.control(
        "POST",
        "/_sim/fail",
        json!({"code": 500, "count": 1000, "retryAfter": 0}),
    );
    let (out, _) = kwatch(
        sim.dir(),
        &sim.kubeconfig,
        &[
            "configmaps",
            "-o",
            "name",
            "--until-synced",
            "--timeout",
            "3s",
        ],
    );
    assert_eq!(out.code(), Some(3), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
}

/// A user who may list but not watch (issue 15: the list was printed three times and
/// nothing said why): the streaming list's 403 ends kwatch before anything is printed
/// (`--watch-list auto`: the sim's 1.32 gets client-go 0.32's paged LIST by default).
#[test]
fn a_user_who_may_list_but_not_watch_is_told_so_in_every_format() {
    let sim = SimProcess::start(&[]);
    let lister = "system:serviceaccount:default:lister";
    for format in FORMATS {
        let args = [
            "configmaps",
            "--as",
            lister,
            "-o",
            format,
            "--watch-list",
            "auto",
        ];
        let (out, _) = kwatch(sim.dir(), &sim.kubeconfig, &args);
        one_line(
            &out,
            &format!(
                "Error from server (Forbidden): configmaps is forbidden: User \"{lister}\" \
                 cannot watch resource \"configmaps\" in API group \"\" in the namespace \"default\""
            ),
            &format!("-o {format}"),
        );
    }
}
