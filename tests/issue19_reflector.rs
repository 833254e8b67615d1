//! Issue 19, the reflector and what it says while loading (items 1, 4, 5, 6, 11, 13):
//! through the built binary against `kwatch sim`, checking kwatch's records and stderr
//! and the server's own request log (`GET /_sim/requests`).

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::util::kwatch::of_type;
use crate::util::{SimProcess, LIMIT};

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
    let mut kw =
        sim.start_kwatch("pods -n default -o json --watch-list off --min-watch-timeout 2s");
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
    let out = sim
        .kwatch("pods -A -o json --watch-list on --fifo real --until-synced --stats")
        .exits(0);
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
        let kw = sim.start_kwatch(&args[..]);
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

/// Item 5: a user who may list but not watch. Each relist prints the list again (the
/// informer's Replaced deltas, kept), but no relist is called the watch's recovery, and
/// the watch's repeated failures are shown with their count.
#[test]
fn a_user_who_may_list_but_not_watch_is_told_the_watch_keeps_failing() {
    let sim = SimProcess::start(&[]);
    let kw = sim.start_kwatch(
        "pods -n default -o name --watch-list off --as system:serviceaccount:default:lister",
    );
    let started = Instant::now();
    let err = loop {
        let err = kw.stderr();
        if err.contains("failed again, 2 times in a row") {
            break err;
        }
        assert!(
            started.elapsed() < LIMIT,
            "no repeated watch failure shown: {err}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
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

/// Item 6: the CRD of a watched custom resource is deleted. kwatch shows the objects'
/// deletions, says once that the type is no longer served (discovery agrees), keeps
/// running and retrying quietly with backoff (kubectl `get -w` users expect a watch to
/// outlive a server's hiccup; a CRD may come back), and falls back from streaming lists
/// to LIST for good.
#[test]
fn a_deleted_crd_is_said_once_and_the_streaming_list_fallback_sticks() {
    let sim = SimProcess::start(&[]);
    let common = ["widgets", "-n", "default", "--watch-list", "auto"];
    let mut records = sim.start_kwatch(&[&common[..], &["-o", "json"]].concat()[..]);
    let table = sim.start_kwatch(&common[..]);
    records.wait_for(LIMIT, "Synced", |v| !of_type(v, "Synced").is_empty());
    std::thread::sleep(Duration::from_millis(1500));
    let deleted_at = requests(&sim, "/").len();
    sim.kubectl_ok(&["delete", "crd", "widgets.example.com"]);
    // Backoffs of about 0.8, 1.6, 3.2, 6.4 s: four LISTs answered 404 by about 12 s.
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
    let since: Vec<(String, u64)> = requests(&sim, "/")
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
    let out = sim.kubectl(&["api-resources", "--api-group", "example.com", "-o", "name"]);
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
