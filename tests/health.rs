//! Dead connections and stalled watches, through the built binary against
//! `kwatch sim`'s `POST /_sim/freeze`: a connection that stops answering, with no FIN and
//! no RST, found by client-go's HTTP/2 health check, and what the reflector does next
//! (as genuine client-go 0.32 did in a recorded run through a frozen proxy).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::util::kwatch::{
    configmaps_args, create_configmap, of_type, on_new_sim, watching_a_new_sim, Running,
};
use crate::util::{SimProcess, LIMIT};

const LOST: &str = "unable to decode an event from the watch stream: http2: client connection lost";

/// The configmaps of `default` as kwatch's store holds them after `recs`: key → RV.
fn store(recs: &[Value]) -> BTreeMap<String, String> {
    let mut store = BTreeMap::new();
    for r in recs {
        let (Some(t), Some(key)) = (r["type"].as_str(), r["key"].as_str()) else {
            continue;
        };
        match t {
            "Deleted" => {
                store.remove(key);
            }
            "Added" | "Updated" | "Replaced" | "Sync" => {
                let rv = r["resourceVersion"].as_str().unwrap_or_default();
                store.insert(key.to_owned(), rv.to_owned());
            }
            _ => {}
        }
    }
    store
}

/// The configmaps of `default` as the server holds them (kubectl get): key → RV.
fn server(sim: &SimProcess) -> BTreeMap<String, String> {
    let list: Value =
        serde_json::from_str(&sim.kubectl_ok("get configmaps -n default -o json")).unwrap();
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            let m = &o["metadata"];
            let key = format!("default/{}", m["name"].as_str().unwrap());
            (key, m["resourceVersion"].as_str().unwrap().to_owned())
        })
        .collect()
}

/// Waits until kwatch's store equals the server's.
fn store_equals_server(sim: &SimProcess, kw: &mut Running) {
    let want = server(sim);
    assert!(!want.is_empty());
    kw.wait_for(LIMIT, "the store to equal the server's", |v| {
        store(v) == want
    });
}

/// A frozen connection is found dead by the HTTP/2 health check (a ping after
/// the read-idle time with nothing read, no answer within the ping timeout: client-go's
/// 30 s and 15 s, here 1 s and 1 s through its variables, the defaults being
/// `keepalive.rs`'s tests), the watch ends with client-go's error, the reflector relists,
/// and the store catches up with what changed during the freeze, held until the end.
#[test]
fn a_frozen_connection_is_found_by_the_http2_health_check_and_the_informer_recovers() {
    let sim = SimProcess::start(&[]);
    let mut kw = watching_with_health(&sim, "1", "1");
    sim.control("POST", "freeze", json!({"until": "released"}));
    // kubectl's connections are new: served, as a writer that does not go through the
    // frozen proxy.
    create_configmap(&sim, "default", "during-freeze", json!({}));
    sim.kubectl_ok("delete configmap -n default kube-root-ca.crt");
    let recs = kw.wait_for(LIMIT, "the watch to end", |v| {
        !of_type(v, "WatchEnded").is_empty()
    });
    let ended = of_type(&recs, "WatchEnded");
    assert_eq!(ended[0]["error"], true, "{recs:#?}");
    let reason = ended[0]["reason"].as_str().unwrap();
    assert!(reason.starts_with(LOST), "{reason}");
    assert!(reason.contains("no answer to a ping for 1s"), "{reason}");
    store_equals_server(&sim, &mut kw);
    let recs = kw.json();
    let lists = of_type(&recs, "List");
    assert_eq!(lists.len(), 2, "one relist: {recs:#?}");
    assert!(lists[1]["reason"].as_str().unwrap().starts_with(LOST));
    let tombstone = recs
        .iter()
        .find(|r| r["key"] == "default/kube-root-ca.crt" && r["type"] == "Deleted")
        .expect("the deletion during the freeze, found by the relist");
    assert_eq!(tombstone["finalStateUnknown"], true);
}

/// `kwatch configmaps -n default -o json --watch-list off` with the health check's two
/// variables set, synced and watching; without the very-short-watch rule
/// (`KWATCH_TEST_SHORT_WATCH_MS=0`), so that a watch ended early ends for the reason the
/// test gives it.
fn watching_with_health(sim: &SimProcess, idle: &str, ping: &str) -> Running {
    let mut cmd = sim.kwatch_cmd("configmaps -n default -o json --watch-list off");
    cmd.env("HTTP2_READ_IDLE_TIMEOUT_SECONDS", idle)
        .env("HTTP2_PING_TIMEOUT_SECONDS", ping)
        .env("KWATCH_TEST_SHORT_WATCH_MS", "0");
    let mut kw = Running::spawn(cmd);
    kw.wait_for(LIMIT, "Watch", |v| !of_type(v, "Watch").is_empty());
    kw
}

/// client-go's variables shorten the health check; through a proxy that also
/// freezes new connections, the reflector goes through the steps client-go's did in the
/// recorded run: the watch's error, a relist whose TLS handshake times out (10 s), and a
/// relist that succeeds once the connection thaws.
#[test]
fn the_health_check_follows_client_gos_variables_and_its_recorded_order() {
    let sim = SimProcess::start(&[]);
    let mut kw = watching_with_health(&sim, "2", "1");
    sim.control(
        "POST",
        "freeze",
        json!({"until": "released", "newConnections": true}),
    );
    let frozen = Instant::now();
    let recs = kw.wait_for(Duration::from_secs(20), "the watch to end", |v| {
        !of_type(v, "WatchEnded").is_empty()
    });
    assert!(
        frozen.elapsed() < Duration::from_secs(10),
        "{:?}",
        frozen.elapsed()
    );
    let reason = of_type(&recs, "WatchEnded")[0]["reason"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        reason.starts_with(LOST) && reason.contains("no answer to a ping for 1s"),
        "{reason}"
    );
    // The proxy recovers once a relist's TLS handshake has timed out.
    kw.wait_for(LIMIT, "a relist's TLS handshake timeout", |v| {
        of_type(v, "Backoff").iter().any(|b| {
            b["cause"]
                .as_str()
                .is_some_and(|c| c.contains("TLS handshake timeout"))
        })
    });
    sim.control("POST", "release", json!({"fault": "freeze"}));
    let recs = kw.wait_for(LIMIT, "a new watch", |v| of_type(v, "Watch").len() == 2);
    let steps: Vec<String> = recs
        .iter()
        .filter_map(|r| {
            let t = r["type"].as_str()?;
            let why = r["reason"].as_str().or(r["cause"].as_str()).unwrap_or("");
            let why = if why.contains("TLS handshake timeout") {
                "tls"
            } else if why.starts_with(LOST) {
                "lost"
            } else {
                ""
            };
            matches!(t, "List" | "Listed" | "Watch" | "WatchEnded" | "Backoff")
                .then(|| format!("{t} {why}").trim().to_owned())
        })
        .collect();
    assert_eq!(
        steps,
        [
            "List",
            "Listed",
            "Watch",
            "WatchEnded lost",
            "Backoff lost",
            "List lost",
            "Backoff tls",
            "List tls",
            "Listed",
            "Watch"
        ],
        "{recs:#?}"
    );
    store_equals_server(&sim, &mut kw);
}

/// `HTTP2_READ_IDLE_TIMEOUT_SECONDS=0` turns the health check off, as in client-go: a
/// frozen connection goes unnoticed, while a kwatch beside it with a short check finds it
/// dead: the marker, whose 2 s ping timeout cannot run out before the 1 s one of a
/// zero read-idle wait would, were 0 taken as a zero wait.
#[test]
fn a_zero_read_idle_timeout_turns_the_health_check_off() {
    let sim = SimProcess::start(&[]);
    let mut kw = watching_with_health(&sim, "0", "1");
    let mut marker = watching_with_health(&sim, "1", "2");
    sim.control("POST", "freeze", json!({"until": "released"}));
    marker.wait_for(LIMIT, "the checked watch to end", |v| {
        !of_type(v, "WatchEnded").is_empty()
    });
    assert!(
        of_type(&kw.json(), "WatchEnded").is_empty(),
        "{:?}",
        kw.json()
    );
    sim.control("POST", "release", json!({"fault": "freeze"}));
    create_configmap(&sim, "default", "after-thaw", json!({}));
    kw.wait_for(LIMIT, "the change, on the same watch once thawed", |v| {
        v.iter().any(|r| r["key"] == "default/after-thaw")
    });
    assert!(of_type(&kw.json(), "WatchEnded").is_empty());
}

/// `--stall-after D` reports a watch that delivers nothing (no event, no
/// bookmark) for D, once, and keeps it, as client-go would: what happened meanwhile comes
/// on the same watch once the server sends again.
#[test]
fn a_silent_watch_is_reported_stalled_and_kept_without_restart_stalled() {
    let (sim, mut kw) =
        watching_a_new_sim(&["--bookmark-interval", "0.5"], &["--stall-after", "2s"]);
    sim.control("POST", "/_sim/stall", json!({"seconds": 5}));
    let stalled_at = Instant::now();
    create_configmap(&sim, "default", "during-stall", json!({}));
    let recs = kw.wait_for(LIMIT, "Stalled", |v| !of_type(v, "Stalled").is_empty());
    assert!(stalled_at.elapsed() >= Duration::from_millis(1500));
    let stalled = of_type(&recs, "Stalled")[0].clone();
    assert_eq!(stalled["restart"], false, "{stalled}");
    assert!(stalled["silentMs"].as_u64().unwrap() >= 2000, "{stalled}");
    assert!(stalled["watchAgeMs"].as_u64().unwrap() >= stalled["silentMs"].as_u64().unwrap());
    store_equals_server(&sim, &mut kw);
    let recs = kw.json();
    assert_eq!(
        of_type(&recs, "Watch").len(),
        1,
        "the same watch: {recs:#?}"
    );
    assert_eq!(
        of_type(&recs, "Stalled").len(),
        1,
        "once per silence: {recs:#?}"
    );
}

/// A new simulator sending a bookmark every `interval` seconds, and a [`watching_a_new_sim`]
/// kwatch with `extra` and no floor under the bookmark interval `--stall-after auto`
/// learns: the simulator's bookmarks come faster than kube-apiserver's minute, faster
/// than the 10 s floor (docs/watch-health.md). A bookmark carries a revision newer than
/// the watch's only when the resource's watch cache has moved: pods churn, and etcd's
/// progress notifications bring the configmaps' cache to the current revision every
/// 0.2 s, so that the quiet configmaps' watches get their bookmarks.
fn watching_fast_bookmarks(interval: &str, extra: &[&str]) -> (SimProcess, Running) {
    let sim = SimProcess::start(&[
        "--bookmark-interval",
        interval,
        "--scenario",
        "steady",
        "--progress-notify-interval",
        "0.2",
    ]);
    let hooks = [
        ("KWATCH_TEST_SHORT_WATCH_MS", "0"),
        ("KWATCH_TEST_BOOKMARK_FLOOR_MS", "0"),
    ];
    let mut kw = sim.start_kwatch_env(&hooks, &configmaps_args(extra)[..]);
    kw.wait_for(LIMIT, "Watch", |v| !of_type(v, "Watch").is_empty());
    (sim, kw)
}

/// kube-apiserver (and the simulator) sends a bookmark every interval and one more 2 s
/// before a watch's deadline, however close to a periodic one: `auto` learns the period
/// from the periodic ones, so healthy watches run to their timeouts, one after another,
/// none restarted as stalled (the pair before a deadline made the limit a fraction of a
/// second: every next watch was "stalled" before its first bookmark).
#[test]
fn auto_restarts_no_healthy_watch_across_watch_timeouts() {
    let (_sim, mut kw) = watching_fast_bookmarks(
        "1.5",
        &[
            "--stall-after",
            "auto",
            "--restart-stalled",
            "--min-watch-timeout",
            "6s",
        ],
    );
    let recs = kw.wait_for(LIMIT * 2, "four watches ended by their timeouts", |v| {
        of_type(v, "WatchEnded").len() >= 4
    });
    assert!(of_type(&recs, "Stalled").is_empty(), "{recs:#?}");
    assert!(
        of_type(&recs, "WatchEnded")
            .iter()
            .all(|e| e["reason"] != "stalled" && e["error"] == false),
        "{recs:#?}"
    );
    assert!(of_type(&recs, "Bookmark").len() >= 8, "{recs:#?}");
}

/// With `--restart-stalled` (and `auto`: three of the bookmark intervals the
/// server has shown), the stalled watch ends with reason `stalled` and a new one starts
/// from the last RV, without a relist, and receives what changed meanwhile.
#[test]
fn restart_stalled_watches_again_from_the_last_rv() {
    let (sim, mut kw) = watching_fast_bookmarks(
        "0.5",
        &["--stall-after", "auto", "--restart-stalled", "--stats"],
    );
    // `auto` knows the interval once the watch has shown two bookmarks.
    kw.wait_for(LIMIT, "two bookmarks", |v| {
        of_type(v, "Bookmark").len() >= 2
    });
    sim.control("POST", "/_sim/stall", json!({"seconds": 4}));
    create_configmap(&sim, "default", "during-stall", json!({}));
    let recs = kw.wait_for(LIMIT, "a watch after a stall", |v| {
        !of_type(v, "Stalled").is_empty() && of_type(v, "Watch").len() >= 2
    });
    let stalled = of_type(&recs, "Stalled")[0].clone();
    assert_eq!(stalled["restart"], true, "{stalled}");
    // Three intervals of 0.5 s.
    let silent = stalled["silentMs"].as_u64().unwrap();
    assert!((1400..3000).contains(&silent), "{stalled}");
    let ended = of_type(&recs, "WatchEnded");
    assert_eq!(ended[0]["reason"], "stalled", "{recs:#?}");
    assert_eq!(ended[0]["error"], false);
    assert_eq!(
        of_type(&recs, "Watch")[1]["resourceVersion"],
        stalled["resourceVersion"]
    );
    store_equals_server(&sim, &mut kw);
    assert_eq!(of_type(&kw.json(), "List").len(), 1, "no relist");
    assert!(kw
        .json()
        .iter()
        .any(|r| r["key"] == "default/during-stall" && r["type"] == "Added"));
    // The --stats summary: the watch's health and the stalls, once bookmarks come again.
    let seen = of_type(&kw.json(), "Bookmark").len();
    kw.wait_for(LIMIT, "three more bookmarks", |v| {
        of_type(v, "Bookmark").len() >= seen + 3
    });
    let out = kw.interrupt(LIMIT);
    let health = out
        .stderr
        .lines()
        .find(|l| {
            l.trim_start()
                .starts_with("watch health configmaps: last event ")
        })
        .unwrap_or_else(|| panic!("no watch health line: {}", out.stderr));
    assert!(health.contains("s ago, last bookmark "), "{health}");
    let interval = health.rsplit("bookmark interval ").next().unwrap();
    let interval: f64 = interval.trim_end_matches('s').parse().expect(health);
    assert!((0.2..1.5).contains(&interval), "{health}");
    assert!(out.stderr.contains("stalled watches: "), "{}", out.stderr);
}

/// Through a frozen connection (no FIN, no RST, pings unanswered), `--restart-stalled`
/// once opened the new watch on the same HTTP/2 connection, which heard
/// nothing until the health check closed it 45 s later. The stalled watch's connection is
/// now retired: the new watch goes over a new one and receives what changed during the
/// freeze within 15 s of the stall, long before the health check (30 s + 15 s) would act.
#[test]
fn restart_stalled_through_a_frozen_connection_watches_on_a_new_one() {
    let (sim, mut kw) = watching_a_new_sim(
        &["--bookmark-interval", "0.5"],
        &["--stall-after", "2s", "--restart-stalled"],
    );
    sim.control("POST", "freeze", json!({"seconds": 90}));
    // kubectl's connection is new: served, as a writer that does not go through the
    // frozen proxy.
    create_configmap(&sim, "default", "during-freeze", json!({}));
    kw.wait_for(LIMIT, "Stalled", |v| !of_type(v, "Stalled").is_empty());
    let stalled = Instant::now();
    let recs = kw.wait_for(
        Duration::from_secs(15),
        "the change during the freeze, within 15 s of the stall",
        |v| {
            v.iter()
                .any(|r| r["key"] == "default/during-freeze" && r["type"] == "Added")
        },
    );
    assert!(stalled.elapsed() < Duration::from_secs(15));
    let first = of_type(&recs, "Stalled")[0];
    assert_eq!(first["restart"], true, "{first}");
    assert!(of_type(&recs, "Watch").len() >= 2, "a new watch: {recs:#?}");
    assert!(
        of_type(&recs, "WatchEnded")
            .iter()
            .all(|e| e["reason"] == "stalled"),
        "no connection lost, no health check: {recs:#?}"
    );
}

/// `--stats` has a watch health line for every resource, also one whose
/// watch delivered nothing (no event, no bookmark) before `--timeout`.
#[test]
fn stats_have_a_watch_health_line_for_a_watch_that_delivered_nothing() {
    let (_sim, out) = on_new_sim(
        &["--objects", "1"],
        [
            "configmaps,secrets",
            "-n",
            "default",
            "-o",
            "name",
            "--no-bookmarks",
            "--timeout",
            "2s",
            "--stats",
        ],
    );
    for resource in ["configmaps", "secrets"] {
        let want = format!(
            "watch health {resource}: last event never, last bookmark never, bookmark \
             interval not shown yet"
        );
        assert!(
            out.stderr.lines().any(|l| l.trim_start() == want),
            "no {want:?} in:\n{}",
            out.stderr
        );
    }
}
