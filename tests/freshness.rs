//! `--freshness`: how far the informer's store is behind the server, sampled with a
//! consistent `LIST ?limit=1` and timed until the store reaches it.

use serde_json::{json, Value};

use crate::util::kwatch::{of_type, Running};
use crate::util::{SimProcess, LIMIT};

fn lag(r: &Value) -> f64 {
    r["lagMs"].as_f64().unwrap_or(-1.0)
}

/// The records from the index `from` on.
fn since(recs: &[Value], from: usize) -> &[Value] {
    &recs[from.min(recs.len())..]
}

fn sampling(sim: &SimProcess, extra: &str) -> Running {
    sim.start_kwatch(format!(
        "pods -A -o json --freshness=100ms --stale-after 1s {extra}"
    ))
}

/// A stalled watch leaves the store behind while the server goes on changing (the
/// simulator's churn): the lag grows with the stall, passes `--stale-after` (one `Stale`
/// record), and once the held changes arrive falls back below it (`recovered`); `--stats`
/// summarises the lags.
#[test]
fn a_stalled_watch_grows_the_lag_says_stale_once_and_recovers_at_the_release() {
    let sim = SimProcess::start(&["--scenario", "steady", "--churn", "20"]);
    let mut kw = sampling(&sim, "--stats --metrics 127.0.0.1:0");
    let recs = kw.wait_for(LIMIT, "a sample after the sync", |v| {
        !of_type(v, "Freshness").is_empty()
    });
    let addr = crate::metrics::metrics_addr(&kw);
    assert!(of_type(&recs, "Stale").is_empty(), "{recs:#?}");
    let from = recs.len();
    sim.control("POST", "/_sim/stall", json!({"until": "released"}));
    let recs = kw.wait_for(LIMIT, "the lag past --stale-after", |v| {
        let after = since(v, from);
        !of_type(after, "Stale").is_empty()
            && of_type(after, "Freshness").iter().any(|r| lag(r) >= 2000.0)
    });
    // The lag grew with the stall, sample after sample (from the first that waited half a
    // second: changes already on their way when the stall began may still arrive before).
    let lags: Vec<f64> = of_type(since(&recs, from), "Freshness")
        .iter()
        .map(|r| lag(r))
        .skip_while(|&l| l < 500.0)
        .collect();
    assert!(lags.len() >= 3, "{lags:?}");
    assert!(lags.windows(2).all(|w| w[1] >= w[0]), "{lags:?}");
    let stale = of_type(since(&recs, from), "Stale");
    assert_eq!(stale.len(), 1, "{recs:#?}");
    // --metrics: the Stale counted, the lag a gauge (at the scrape, no less than the
    // lag of the Stale record, as it grew since).
    let (_, _, body) = crate::metrics::scrape(&addr);
    let samples = crate::metrics::parsed(&body);
    let pods = [("resource", "pods")];
    assert_eq!(
        crate::metrics::sample(&samples, "informer_stale_total", &pods),
        Some(1.0),
        "{body}"
    );
    let gauge = crate::metrics::sample(&samples, "informer_store_lag_seconds", &pods);
    assert!(gauge >= Some(lag(stale[0]) / 1000.0), "{body}");
    assert!(lag(stale[0]) >= 1000.0, "{stale:#?}");
    let (server, store) = (
        stale[0]["serverResourceVersion"]
            .as_str()
            .unwrap_or_default(),
        stale[0]["storeResourceVersion"]
            .as_str()
            .unwrap_or_default(),
    );
    assert!(
        server.parse::<u64>().unwrap() > store.parse::<u64>().unwrap(),
        "{stale:#?}"
    );

    let from = recs.len();
    sim.control("POST", "/_sim/release", json!({"fault": "stall"}));
    let recs = kw.wait_for(LIMIT, "the store caught up", |v| {
        of_type(since(v, from), "Freshness")
            .iter()
            .any(|r| r["recovered"] == true)
    });
    let back = of_type(since(&recs, from), "Freshness");
    let first = back.iter().position(|r| r["recovered"] == true).unwrap();
    assert!(lag(back[first]) < 1000.0, "{back:#?}");
    // Recovered once; no second Stale.
    assert_eq!(
        back.iter().filter(|r| r["recovered"] == true).count(),
        1,
        "{back:#?}"
    );
    assert!(of_type(since(&recs, from), "Stale").is_empty(), "{recs:#?}");
    let out = kw.interrupt(LIMIT);
    let stats = out.stderr.clone();
    let line = stats
        .lines()
        .find(|l| l.trim_start().starts_with("store lag:"))
        .unwrap_or_else(|| panic!("{stats}"));
    assert!(line.ends_with("stale 1 times"), "{line}");
}

/// A frozen watch connection (no data and no close, as behind a frozen proxy: the
/// simulator's freeze) leaves the store behind. Whether the samples are answered meanwhile
/// (on a new connection) or not (on a frozen pooled one: then the lag is the time since the
/// store was last known current, `informer::freshness`'s unit tests), the lag passes
/// `--stale-after` once, and after the release it recovers.
#[test]
fn a_frozen_connection_grows_the_lag_and_recovers_at_the_release() {
    let sim = SimProcess::start(&["--scenario", "steady", "--churn", "20"]);
    let mut kw = sampling(&sim, "");
    let recs = kw.wait_for(LIMIT, "a sample after the sync", |v| {
        !of_type(v, "Freshness").is_empty()
    });
    let from = recs.len();
    sim.control("POST", "/_sim/freeze", json!({"until": "released"}));
    let recs = kw.wait_for(LIMIT, "the lag past --stale-after", |v| {
        !of_type(since(v, from), "Stale").is_empty()
    });
    let stale = of_type(since(&recs, from), "Stale");
    assert!(lag(stale[0]) >= 1000.0, "{stale:#?}");
    let from = recs.len();
    sim.control("POST", "/_sim/release", json!({"fault": "freeze"}));
    let recs = kw.wait_for(LIMIT, "the store caught up", |v| {
        of_type(since(v, from), "Freshness")
            .iter()
            .any(|r| r["recovered"] == true)
    });
    assert!(of_type(since(&recs, from), "Stale").is_empty(), "{recs:#?}");
}

/// A store at a revision the server has not reached (a server restored from an older
/// backup, as an etcd restored from a backup is: kubernetes/kubernetes#107457) is one `~`
/// line naming both revisions. (Its watch, at a revision the server has not reached, then
/// sees nothing until it ends: once the server's churn passes that revision the store is
/// truly behind, and a Stale may follow.)
#[test]
fn a_store_ahead_of_a_restored_server_is_one_line() {
    let sim = SimProcess::start(&["--scenario", "steady", "--churn", "20"]);
    sim.control("POST", "/_sim/backup", json!({}));
    let mut kw = sampling(&sim, "");
    kw.wait_for(LIMIT, "a sample past the backup's revision", |v| {
        of_type(v, "Freshness").iter().any(|r| {
            r["storeResourceVersion"]
                .as_str()
                .and_then(|s| s.parse::<u64>().ok())
                > Some(20)
        })
    });
    sim.control(
        "POST",
        "/_sim/restart",
        json!({"seconds": 1, "restore": true}),
    );
    let line = crate::util::eventually(LIMIT, "the line saying the store is ahead", || {
        let err = kw.stderr();
        err.lines()
            .find(|l| l.contains("ahead of the server's"))
            .map(str::to_owned)
            .ok_or(err)
    });
    assert!(
        line.starts_with("~ the store of pods is at resourceVersion ")
            && line.contains("kubernetes/kubernetes#107457"),
        "{line}"
    );
    let out = kw.interrupt(LIMIT);
    let ahead = out
        .stderr
        .lines()
        .filter(|l| l.contains("ahead of the server's"))
        .count();
    assert_eq!(ahead, 1, "{}", out.stderr);
}

/// Without `--freshness` nothing is sampled: no `LIST ?limit=1` of the watched collection
/// and no Freshness record while the watch is up (as long as a bookmark takes to come);
/// with it, the samples are those lists.
#[test]
fn nothing_is_sampled_without_the_flag() {
    // Churning pods: their watch gets events and bookmarks.
    let sim = SimProcess::start(&["--scenario", "steady"]);
    let samples = || {
        crate::util::shared::request_paths(&sim)
            .iter()
            .filter(|p| p.as_str() == "/api/v1/pods?limit=1")
            .count()
    };
    let mut kw = sim.start_kwatch("pods -A -o json");
    let recs = kw.wait_for(LIMIT, "a bookmark", |v| !of_type(v, "Bookmark").is_empty());
    assert!(of_type(&recs, "Freshness").is_empty(), "{recs:#?}");
    assert_eq!(samples(), 0);
    let mut sampled = sampling(&sim, "");
    let recs = sampled.wait_for(LIMIT, "two samples", |v| of_type(v, "Freshness").len() >= 2);
    assert!(samples() >= of_type(&recs, "Freshness").len());
}

/// A server whose resourceVersions are not integers (an aggregating proxy's composite
/// versions, karmada-io/karmada#3559) cannot tell how far behind the store is: one `~`
/// line, and sampling stops.
#[test]
fn opaque_resource_versions_stop_sampling_with_one_line() {
    let sim = SimProcess::start(&["--bend", "opaque-rv", "--scenario", "steady"]);
    let mut kw = sampling(&sim, "");
    let line = crate::util::eventually(LIMIT, "the line saying sampling stops", || {
        let err = kw.stderr();
        err.lines()
            .find(|l| l.starts_with("~ --freshness stops for pods"))
            .map(str::to_owned)
            .ok_or(err)
    });
    assert!(line.contains("is not an integer"), "{line}");
    let samples = || {
        crate::util::shared::request_paths(&sim)
            .iter()
            .filter(|p| p.as_str() == "/api/v1/pods?limit=1")
            .count()
    };
    assert_eq!(samples(), 1);
    // The watch goes on: a bookmark later, still the one sample and no Freshness record.
    let recs = kw.wait_for(LIMIT, "a bookmark", |v| !of_type(v, "Bookmark").is_empty());
    assert!(of_type(&recs, "Freshness").is_empty(), "{recs:#?}");
    assert_eq!(samples(), 1);
    let out = kw.interrupt(LIMIT);
    let said = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("~ --freshness stops"))
        .count();
    assert_eq!(said, 1, "{}", out.stderr);
}

/// While the server does not answer (a freeze of every connection, new ones included), the
/// lag grows from the time the store was last known current and passes `--stale-after`.
/// The store is then not behind the server's last answer (nothing changes: the same
/// revision), and the `~` line says what is the matter, no answer, instead of "the store
/// is 1.0s behind the server (store rv=N, server rv=N)", which it used to say.
#[test]
fn a_server_that_does_not_answer_is_stale_for_want_of_an_answer() {
    let sim = SimProcess::start(&["--scenario", "idle"]);
    let samples = || {
        crate::util::shared::request_paths(&sim)
            .iter()
            .filter(|p| p.as_str() == "/api/v1/pods?limit=1")
            .count()
    };
    let kw = sim.start_kwatch("pods -A --freshness=100ms --stale-after 1s");
    crate::util::eventually(LIMIT, "the table (synced)", || {
        let lines = kw.lines();
        if lines.len() > 1 {
            Ok(())
        } else {
            Err((lines, kw.stderr()))
        }
    });
    // Samples are taken one after the other: once a second one has come since the sync,
    // the first was answered and applied with the store listed (known current).
    let synced = samples();
    crate::util::eventually(LIMIT, "two samples after the sync", || {
        let n = samples();
        if n >= synced + 2 {
            Ok(())
        } else {
            Err(n)
        }
    });
    sim.control(
        "POST",
        "/_sim/freeze",
        json!({"until": "released", "newConnections": true}),
    );
    let line = crate::util::eventually(LIMIT, "the stale line", || {
        let err = kw.stderr();
        err.lines()
            .find(|l| l.starts_with("~ stale pods"))
            .map(str::to_owned)
            .ok_or(err)
    });
    sim.control("POST", "/_sim/release", json!({"fault": "freeze"}));
    assert!(
        line.starts_with("~ stale pods: no answer from the server for ")
            && line.contains("the server's last answer rv="),
        "{line}"
    );
    assert!(!line.contains("behind"), "{line}");
    kw.interrupt(LIMIT);
}
