//! One rule for failures. Before the first sync, an error that will not
//! fix itself ends kwatch with one line in kubectl's words and exit 1, in every output
//! format, with a cold or a warm discovery cache; `--until-synced` never exits 0
//! without having synced.

use std::path::Path;
use std::time::Duration;
use std::time::Instant;

use serde_json::json;
use serde_json::Value;

use crate::util::eventually;
use crate::util::kwatch::command;
use crate::util::kwatch::kwatch_using;
use crate::util::kwatch::of_type;
use crate::util::kwatch::Args;
use crate::util::kwatch::Finished;
use crate::util::kwatch::Running;
use crate::util::shared::*;
use crate::util::SimProcess;
use crate::util::LIMIT;

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
fn kwatch(home: &Path, kubeconfig: &Path, args: impl Args) -> (Finished, Duration) {
    let start = Instant::now();
    let out = kwatch_using(home, kubeconfig, args);
    (out, start.elapsed())
}

/// Fills the discovery cache under `home`: one run that syncs and exits 0.
fn warm_up(home: &Path, kubeconfig: &Path) {
    let (ok, _) = kwatch(home, kubeconfig, "configmaps -o name --until-synced");
    assert_eq!(ok.code(), Some(0), "{ok:?}");
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
            let (out, _) = kwatch(sim.dir(), &sim.kubeconfig, &args[..]);
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
    warm_up(sim.dir(), &sim.kubeconfig);
    let cold = tempfile::tempdir().unwrap();
    for format in FORMATS {
        for (home, cache) in [(sim.dir(), "warm"), (cold.path(), "cold")] {
            let args = ["configmaps", "-o", format, "--until-synced"];
            let (out, _) = kwatch(home, &bad, &args[..]);
            one_line(
                &out,
                "error: You must be logged in to the server (Unauthorized)",
                &format!("-o {format}, {cache} cache"),
            );
        }
    }
    let k = sim
        .kubectl_cmd(["--kubeconfig", bad.to_str().unwrap(), "get", "configmaps"])
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
    warm_up(&warm, &kubeconfig);
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
                let (out, took) = kwatch(home, &kubeconfig, &args[..]);
                let what = format!("-o {format}, {cache} cache, {extra:?}");
                one_line(&out, &want, &what);
                assert!(took < Duration::from_secs(3), "{what}: at once: {took:?}");
            }
        }
    }
}

/// `--request-timeout` exceeded before the first sync is one line and exit 1 (it used to
/// run for ever printing nothing), cold or warm. The server accepts the connection and
/// never answers, so the timeout fires on every machine (against the sim, 1 ms was
/// sometimes enough): cold, discovery's first request times out; warm (the sim's
/// discovery cache, moved to the silent server's name), the list does.
#[test]
fn request_timeout_exceeded_ends_it() {
    let sim = SimProcess::start(&[]);
    warm_up(sim.dir(), &sim.kubeconfig);
    let silent = silent_server();
    let discovery = sim.dir().join(".kube/cache/discovery");
    std::fs::rename(
        discovery.join(host_port(&sim).replace(':', "_")),
        discovery.join(silent.replace(':', "_")),
    )
    .unwrap();
    let server = format!("https://{silent}");
    let cold = tempfile::tempdir().unwrap();
    for (home, cache) in [(sim.dir(), "warm"), (cold.path(), "cold")] {
        let args = [
            "-s",
            &server,
            "configmaps",
            "-o",
            "name",
            "--until-synced",
            "--request-timeout",
            "1ms",
        ];
        let (out, took) = kwatch(home, &sim.kubeconfig, &args[..]);
        one_line(
            &out,
            "Unable to connect to the server: no answer within 1ms (--request-timeout)",
            cache,
        );
        assert!(took < Duration::from_secs(5), "{cache}: {took:?}");
    }
}

#[test]
fn until_synced_that_times_out_first_exits_3() {
    let sim = SimProcess::start(&[]);
    warm_up(sim.dir(), &sim.kubeconfig);
    // Discovery comes from the cache; every list and watch fails.
    sim.fail_next(json!({"code": 500, "count": 1000, "retryAfter": 0}));
    let (out, _) = kwatch(
        sim.dir(),
        &sim.kubeconfig,
        "configmaps -o name --until-synced --timeout 3s",
    );
    assert_eq!(out.code(), Some(3), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
}

/// A user who may list but not watch (once the list was printed three times and nothing
/// said why): the streaming list's 403 ends kwatch before anything is printed
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
        let (out, _) = kwatch(sim.dir(), &sim.kubeconfig, &args[..]);
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

/// A sim answering 500 to every LIST (and nothing else).
fn sim_failing_every_list() -> SimProcess {
    let sim = SimProcess::start(&[]);
    sim.fail_next(json!({"code": 500, "always": true, "retryAfter": 0, "verb": "list"}));
    sim
}

const FAILING_PODS: [&str; 5] = ["pods", "-n", "default", "--watch-list", "off"];

/// [`FAILING_PODS`] in `format` (`table`: no `-o`), then `extra`.
fn failing_pods<'a>(format: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = FAILING_PODS.to_vec();
    if format != "table" {
        args.extend(["-o", format]);
    }
    args.extend_from_slice(extra);
    args
}

#[test]
fn errors_are_one_clear_line_and_exit_1() {
    let sim = SimProcess::start(&[]);
    // kwatch's own errors start `error: `; the server's answers are worded as kubectl
    // words them (`Error from server (Reason): …`).
    let check = |args: &[&str], prefix: &str, needle: &str| {
        let out = sim.kwatch(args).exits(1);
        assert!(out.stdout.iter().all(|l| !l.contains("\"type\":\"Added\"")));
        let lines: Vec<&str> = out.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{args:?}: {}", out.stderr);
        assert!(lines[0].starts_with(prefix), "{}", lines[0]);
        assert!(lines[0].contains(needle), "{args:?}: {}", lines[0]);
        assert!(!out.stderr.contains("panicked"));
        assert!(!out.stderr.contains(&sim.token), "token leaked");
    };
    let server = "Error from server (BadRequest): ";
    check(
        &["podz"],
        "error: ",
        r#"the server doesn't have a resource type "podz"; did you mean "pods"?"#,
    );
    check(
        &["pods", "-l", "app in (a"],
        server,
        "unable to parse requirement",
    );
    check(
        &["configmaps", "--field-selector", "spec.foo=x"],
        server,
        r#""spec.foo" is not a known field selector: only "metadata.name", "metadata.namespace""#,
    );
    check(&["pods", "--context", "nope"], "error: ", "nope");

    // An unreachable server, a malformed kubeconfig.
    let dir = tempfile::tempdir().unwrap();
    let dead = dir.path().join("dead");
    let text = std::fs::read_to_string(&sim.kubeconfig).unwrap();
    let port = sim.url.rsplit(':').next().unwrap().to_owned();
    std::fs::write(
        &dead,
        text.replace(&format!("127.0.0.1:{port}"), "127.0.0.1:9"),
    )
    .unwrap();
    let bad = dir.path().join("bad");
    std::fs::write(&bad, "apiVersion: v1\nclusters: [ {{{ nope").unwrap();
    for (file, needle) in [(&dead, "127.0.0.1:9"), (&bad, "kubeconfig")] {
        let mut cmd = command(dir.path());
        cmd.args(["pods", "--request-timeout", "5s", "--kubeconfig"])
            .arg(file);
        let start = std::time::Instant::now();
        let out = Running::spawn(cmd).finish(LIMIT);
        assert!(start.elapsed() < Duration::from_secs(10));
        assert_eq!(out.code(), Some(1), "{}", out.stderr);
        assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
        assert!(out.stderr.contains(needle), "{}", out.stderr);
    }
}

/// A panicking tokio task (debug builds' test switch) ends kwatch at once
/// with one line and exit 1, instead of a report with a backtrace and a hang.
#[test]
fn a_panic_in_a_task_is_one_line_and_exit_1_not_a_hang() {
    let sim = SimProcess::start(&["--objects", "1"]);
    let started = Instant::now();
    let f = kwatch_env(
        &sim,
        &[("KWATCH_TEST_PANIC_IN_TASK", "1")],
        ["--kubeconfig", sim.kubeconfig.to_str().unwrap(), "pods"],
    );
    assert!(started.elapsed() < Duration::from_secs(10), "{f:?}");
    assert_eq!(f.code(), Some(1), "{f:?}");
    let lines: Vec<&str> = f.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", f.stderr);
    assert!(
        lines[0].starts_with("error: kwatch panicked at src/main.rs:")
            && lines[0].contains("a test panic on two lines (a bug: please report it"),
        "{}",
        lines[0]
    );
}

/// Before the first sync, a 500 on every list shows each backoff on stderr, and
/// `--until-synced --timeout` ends with README's timeout code (3) and one line naming the
/// last error — in the table and in a script format. A plain `--timeout` too (it once
/// exited 0, a run that never showed the server's state).
#[test]
fn a_500_on_every_list_before_the_sync_is_shown_and_named_at_the_timeout() {
    let sim = sim_failing_every_list();
    let until_synced = &["--until-synced", "--timeout", "5s"][..];
    for (format, extra) in [
        ("table", until_synced),
        ("name", until_synced),
        ("table", &["--timeout", "5s"]),
    ] {
        let args = failing_pods(format, extra);
        let out = sim.kwatch(&args[..]).exits(3);
        assert!(out.stdout.is_empty(), "{format}: {:?}", out.stdout);
        let err = &out.stderr;
        assert!(!err.is_empty(), "{format}: silent");
        let backoffs = err
            .lines()
            .filter(|l| l.starts_with("~ backoff pods ") && l.contains("500 InternalError"))
            .count();
        // Backoffs of 0.8–1.6 s and 1.6–3.2 s fit in 5 s.
        assert!(backoffs >= 2, "{format}: {err}");
        let last = err.lines().last().unwrap_or_default();
        assert!(
            last.starts_with(
                "error: timed out after 5s waiting for the initial list (0 of 1 synced)"
            ) && last.contains("pods: 500 InternalError"),
            "{format}: {err}"
        );
        assert_eq!(
            err.lines().filter(|l| l.starts_with("error:")).count(),
            1,
            "{format}: {err}"
        );
    }
}

/// The backoffs appear as they happen, long before the run ends.
#[test]
fn backoffs_before_the_sync_appear_while_kwatch_runs() {
    let sim = sim_failing_every_list();
    for format in ["table", "name"] {
        let args = failing_pods(format, &["--timeout", "60s"]);
        let kw = sim.start_kwatch(&args[..]);
        // Within 20 s of a 60 s run: long before it ends.
        let what = format!("{format}: two backoffs shown");
        eventually(Duration::from_secs(20), &what, || match kw.stderr() {
            e if e.matches("~ backoff pods ").count() >= 2 => Ok(()),
            e => Err(e),
        });
        assert!(kw.lines().is_empty(), "{format}: {:?}", kw.lines());
    }
}

/// A user who may list but not watch. Each relist prints the list again (the
/// informer's Replaced deltas, kept), but no relist is called the watch's recovery, and
/// the watch's repeated failures are shown with their count.
#[test]
fn a_user_who_may_list_but_not_watch_is_told_the_watch_keeps_failing() {
    let sim = SimProcess::start(&[]);
    let kw = sim.start_kwatch(
        "pods -n default -o name --watch-list off --as system:serviceaccount:default:lister",
    );
    let err = eventually(LIMIT, "a repeated watch failure shown", || {
        match kw.stderr() {
            e if e.contains("failed again, 2 times in a row") => Ok(e),
            e => Err(e),
        }
    });
    let names = kw.lines();
    assert!(!names.is_empty(), "{err}");
    let first = names[0].clone();
    assert!(
        names.iter().filter(|n| **n == first).count() >= 2,
        "the relist printed the list again: {names:?}"
    );
    let failing: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("~ watch pods failing, retrying: watch: 403"))
        .collect();
    assert_eq!(failing.len(), 1, "{err}");
    let again = err
        .lines()
        .find(|l| l.starts_with("~ watch pods failed again, 2 times in a row: watch: 403"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(again.ends_with("; the list works: relisted once"), "{err}");
    assert!(!err.contains("recovered"), "{err}");
}

/// The CRD of a watched custom resource is deleted. kwatch shows the objects'
/// deletions, says once that the type is no longer served (discovery agrees), keeps
/// running and retrying quietly with backoff (kubectl `get -w` users expect a watch to
/// outlive a server's hiccup; a CRD may come back), and falls back from streaming lists
/// to LIST for good.
#[test]
fn a_deleted_crd_is_said_once_and_the_streaming_list_fallback_sticks() {
    let sim = SimProcess::start(&[]);
    let common = ["widgets", "-n", "default", "--watch-list", "auto"];
    // The watches end at once: not a very short watch (the rule is off), and the
    // backoffs start at 50 ms, not 800.
    let hooks = [
        ("KWATCH_TEST_SHORT_WATCH_MS", "0"),
        ("KWATCH_TEST_BACKOFF_START_MS", "50"),
    ];
    let mut records = sim.start_kwatch_env(&hooks, &[&common[..], &["-o", "json"]].concat()[..]);
    let table = sim.start_kwatch_env(&hooks, &common[..]);
    records.wait_for(LIMIT, "Synced", |v| !of_type(v, "Synced").is_empty());
    eventually(LIMIT, "the table's watch", || match table.stderr() {
        e if e.contains("synced widgets") => Ok(()),
        e => Err(e),
    });
    let deleted_at = requests_under(&sim, "/").len();
    sim.kubectl_ok("delete crd widgets.example.com");
    // Backoffs of about 50, 100, 200, 400 ms: four LISTs answered 404.
    let recs = records.wait_for(LIMIT, "four backoffs after the deletion", |v| {
        of_type(v, "Backoff").len() >= 4
    });
    assert!(!recs.is_empty());
    let deleted: Vec<&Value> = of_type(&recs, "Deleted");
    assert_eq!(deleted.len(), 2, "w1 and w2 deleted: {recs:#?}");
    let not_served = of_type(&recs, "Backoff")
        .into_iter()
        .filter(|b| {
            b["cause"]
                .as_str()
                .is_some_and(|c| c.contains("the server does not serve this resource type"))
        })
        .count();
    assert!(not_served >= 3, "{recs:#?}");
    assert!(of_type(&recs, "WatchListFallback").len() <= 1, "{recs:#?}");

    // The server's log: after the deletion, one streaming list at most; LISTs after it.
    let since: Vec<(String, u64)> = requests_under(&sim, "/")
        .split_off(deleted_at)
        .into_iter()
        .filter(|(p, _)| p.starts_with("/apis/example.com/v1/namespaces/default/widgets"))
        .collect();
    let streaming: Vec<_> = since
        .iter()
        .filter(|(p, _)| p.contains("sendInitialEvents=true"))
        .collect();
    assert!(streaming.len() <= 2, "one per kwatch at most: {since:#?}");
    assert!(
        since.iter().filter(|(p, _)| !is_watch(p)).count() >= 4,
        "{since:#?}"
    );
    assert!(since.iter().all(|(_, status)| *status == 404), "{since:#?}");
    // Discovery agrees: kubectl no longer finds the type.
    let out = sim.kubectl("api-resources --api-group example.com -o name");
    assert!(
        String::from_utf8_lossy(&out.stdout).trim().is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    // The table says it once (and counts the repeats), and kwatch is still running.
    let err = table.stderr();
    assert!(!err.is_empty());
    let said: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("~ backoff widgets") && l.contains("does not serve"))
        .collect();
    assert_eq!(
        said.iter()
            .filter(|l| !l.contains("times in a row"))
            .count(),
        1,
        "{err}"
    );
    assert!(
        said.iter().any(|l| l.ends_with("(2 times in a row)")),
        "{err}"
    );
    assert!(!err.contains("error:"), "{err}");
    let _ = records.interrupt(Duration::from_secs(10));
}

/// The server's warnings (e.g. a deprecated API version) are shown on stderr, once each,
/// as kubectl shows them; stdout stays data.
#[test]
fn server_warnings_are_shown_on_stderr_once() {
    let sim = SimProcess::start(&[]);
    let text = "example.com/v1beta1 Widget is deprecated; use example.com/v1 Widget";
    sim.control("POST", "/_sim/warn", json!({"text": text, "count": 50}));
    let out = sim
        .kwatch("configmaps -n default -o name --until-synced --page-size 1")
        .exits(0);
    let want = format!("Warning: {text}");
    assert_eq!(out.stderr.matches(&want).count(), 1, "{}", out.stderr);
    assert!(
        out.stdout.iter().all(|l| l.starts_with("configmap/")),
        "{:?}",
        out.stdout
    );
    sim.control("POST", "/_sim/warn", json!({"text": text, "count": 50}));
    let k = sim.kubectl("get configmaps -n default");
    assert!(
        String::from_utf8_lossy(&k.stderr).contains(&want),
        "kubectl shows it the same way: {k:?}"
    );
}
