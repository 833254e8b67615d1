//! Issue 19, the reflector and what it says while loading (items 1, 4, 5, 6, 11, 13):
//! through the built binary against `kwatch sim`, checking kwatch's records and stderr
//! and the server's own request log (`GET /_sim/requests`).

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::util::kwatch::{of_type, run, Running};
use crate::util::SimProcess;

const LIMIT: Duration = Duration::from_secs(40);

/// The API requests the server answered whose path starts with `prefix`, as
/// `(path, status)`.
fn requests(sim: &SimProcess, prefix: &str) -> Vec<(String, u64)> {
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

fn is_watch(path: &str) -> bool {
    path.contains("watch=true") || path.contains("watch=1")
}

/// The `resourceVersion=` of a request path ("" without one).
fn rv_of(path: &str) -> &str {
    path.split(['?', '&'])
        .find_map(|kv| kv.strip_prefix("resourceVersion="))
        .unwrap_or("")
}

/// Item 1: a watch that stays silent (no event, no bookmark) until its timeout is watched
/// again from the same resourceVersion, as client-go's reflector does: no LIST after the
/// first, no relist, no backoff.
#[test]
fn a_watch_silent_until_its_timeout_is_watched_again_without_a_relist() {
    let sim = SimProcess::start(&[]);
    sim.control("POST", "/_sim/bookmarks", json!({"enabled": false}));
    let mut kw = Running::watch(
        &sim,
        &[
            "pods",
            "-n",
            "default",
            "-o",
            "json",
            "--watch-list",
            "off",
            "--min-watch-timeout",
            "2s",
        ],
    );
    // Watch timeouts are in [2 s, 4 s): three watches have ended by 12 s.
    let recs = kw.wait_for(LIMIT, "three watches ended", |v| {
        of_type(v, "WatchEnded").len() >= 3
    });
    assert!(!recs.is_empty());
    let pods = requests(&sim, "/api/v1/namespaces/default/pods");
    let lists: Vec<_> = pods.iter().filter(|(p, _)| !is_watch(p)).collect();
    let watches: Vec<_> = pods.iter().filter(|(p, _)| is_watch(p)).collect();
    assert_eq!(lists.len(), 1, "one LIST only: {pods:#?}");
    assert!(watches.len() >= 3, "{pods:#?}");
    let list_rv = of_type(&recs, "Listed")[0]["resourceVersion"]
        .as_str()
        .expect("the list's RV")
        .to_owned();
    for (path, _) in &watches {
        assert_eq!(
            rv_of(path),
            list_rv,
            "every watch from the list's RV: {pods:#?}"
        );
    }
    for ended in of_type(&recs, "WatchEnded") {
        assert_eq!(ended["error"], false, "{ended}");
    }
    assert_eq!(of_type(&recs, "List").len(), 1, "{recs:#?}");
    assert!(of_type(&recs, "Backoff").is_empty(), "{recs:#?}");
    assert!(of_type(&recs, "Bookmark").is_empty(), "{recs:#?}");
    let synced = recs
        .iter()
        .position(|r| r["type"] == "Synced")
        .expect("Synced");
    assert!(
        recs[synced..].iter().all(|r| r["type"] != "Replaced"),
        "no object listed again: {recs:#?}"
    );
}

/// Items 11 and 13: `--stats` counts a streaming list's objects (it has no pages), and a
/// RealFIFO gets a queue line with what it counts.
#[test]
fn stats_count_a_streaming_lists_objects_and_a_real_fifos_queue() {
    let sim = SimProcess::start(&[]);
    let out = run(
        &sim,
        &[
            "pods",
            "-A",
            "-o",
            "json",
            "--watch-list",
            "on",
            "--fifo",
            "real",
            "--until-synced",
            "--stats",
        ],
        LIMIT,
    );
    assert_eq!(out.code(), Some(0), "{}", out.stderr);
    let recs = out.json();
    assert!(!recs.is_empty(), "{}", out.stderr);
    let n = of_type(&recs, "Replaced").len();
    assert!(n > 0, "{recs:#?}");
    let err = &out.stderr;
    let lists = err
        .lines()
        .find(|l| l.trim_start().starts_with("lists:"))
        .unwrap_or_else(|| panic!("no lists line: {err}"));
    assert_eq!(
        lists.trim(),
        format!("lists: 1 (0 relists), 1 streamed, {n} objects"),
        "{err}"
    );
    assert!(!lists.contains("page"), "{err}");
    let queue = err
        .lines()
        .find(|l| l.trim_start().starts_with("queue pods:"))
        .unwrap_or_else(|| panic!("no queue line for the RealFIFO: {err}"));
    assert!(
        queue.contains(&format!("queued {n}, popped {n}")),
        "{queue}\n{err}"
    );
}

/// A sim answering 500 to every LIST (and nothing else).
fn sim_failing_every_list() -> SimProcess {
    let sim = SimProcess::start(&[]);
    sim.control(
        "POST",
        "/_sim/fail",
        json!({"code": 500, "always": true, "retryAfter": 0, "verb": "list"}),
    );
    sim
}

const FAILING_PODS: [&str; 5] = ["pods", "-n", "default", "--watch-list", "off"];

/// Item 4: before the first sync, a 500 on every list shows each backoff on stderr, and
/// `--until-synced --timeout` ends with README's timeout code (3) and one line naming the
/// last error — in the table and in a script format.
#[test]
fn a_500_on_every_list_before_the_sync_is_shown_and_named_at_the_timeout() {
    let sim = sim_failing_every_list();
    for format in ["table", "name"] {
        let mut args = FAILING_PODS.to_vec();
        if format != "table" {
            args.extend(["-o", format]);
        }
        args.extend(["--until-synced", "--timeout", "5s"]);
        let out = run(&sim, &args, LIMIT);
        assert_eq!(out.code(), Some(3), "{format}: {}", out.stderr);
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

/// Item 4: the backoffs appear as they happen, long before the run ends.
#[test]
fn backoffs_before_the_sync_appear_while_kwatch_runs() {
    let sim = sim_failing_every_list();
    for format in ["table", "name"] {
        let mut args = FAILING_PODS.to_vec();
        if format != "table" {
            args.extend(["-o", format]);
        }
        args.extend(["--timeout", "60s"]);
        let kw = Running::watch(&sim, &args);
        let started = Instant::now();
        let seen = loop {
            let err = kw.stderr();
            if err.matches("~ backoff pods ").count() >= 2 {
                break started.elapsed();
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "{format}: no backoff shown within 20 s of a 60 s run: {err:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        };
        assert!(seen < Duration::from_secs(20), "{format}");
        assert!(kw.lines().is_empty(), "{format}: {:?}", kw.lines());
    }
}
