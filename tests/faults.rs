//! Every way a watch can end, through the built binary against `kwatch sim`: each shows
//! its own event and its recovery: kwatch never misses a change.

use serde_json::{json, Value};

use crate::util::kwatch::{
    configmap, kubectl_f, of_type, watching_a_new_sim, watching_configmaps as watching,
    watching_configmaps_with_the_short_watch_rule, Running,
};
use crate::util::{eventually, SimProcess, LIMIT};

fn after(v: &[Value], n: usize) -> &[Value] {
    &v[n.min(v.len())..]
}

fn change_is_made(sim: &SimProcess, name: &str) {
    kubectl_f(sim, "create", &configmap("default", name, json!({})));
}

/// Creates a configmap and waits until kwatch shows it (Added from a watch, or Replaced if
/// it was created while kwatch relisted): proof that it recovered.
fn change_is_seen(sim: &SimProcess, kw: &mut Running, name: &str) -> Vec<Value> {
    change_is_made(sim, name);
    let key = format!("default/{name}");
    kw.wait_for(LIMIT, &key.clone(), |v| {
        v.iter()
            .any(|r| r["key"] == key.as_str() && (r["type"] == "Added" || r["type"] == "Replaced"))
    })
}

/// A `WatchEnded` with `error: true` is among `recs`, and its reason contains `words`.
fn failed_watch_says(recs: &[Value], words: &str) {
    let ended = of_type(recs, "WatchEnded");
    let failed = ended
        .iter()
        .find(|e| e["error"] == true)
        .expect("a failed watch");
    assert!(
        failed["reason"]
            .as_str()
            .unwrap_or_default()
            .contains(words),
        "{failed}"
    );
}

/// The records of a watch dropped and answered twice with 429 (`Retry-After: S`, none if
/// 0) on the way back, up to a change made meanwhile being seen.
fn after_two_watch_429s(retry_after: u64) -> Vec<Value> {
    let (sim, mut kw) = watching_a_new_sim(&[], &[]);
    sim.fail_next(json!({"code": 429, "count": 2, "retryAfter": retry_after, "verb": "watch"}));
    sim.drop_watches();
    change_is_seen(&sim, &mut kw, "after-429")
}

/// A 429 with Retry-After is the request layer's, as in client-go: the same
/// watch is sent again after the wait, and the reflector neither backs off nor relists.
#[test]
fn too_many_requests_with_retry_after_are_retried_by_the_request_layer() {
    let recs = after_two_watch_429s(2);
    let retries = of_type(&recs, "Retry");
    assert_eq!(retries.len(), 2, "{recs:#?}");
    for (i, r) in retries.iter().enumerate() {
        assert_eq!(r["verb"], "watch", "{r}");
        assert_eq!(r["code"], 429, "{r}");
        assert_eq!(r["reason"], "TooManyRequests", "{r}");
        assert_eq!(r["retryAfterSeconds"], 2, "{r}");
        assert_eq!(r["attempt"], i + 1, "{r}");
        assert_eq!(r["maxRetries"], 10, "{r}");
        assert_eq!(r["resource"], "configmaps", "{r}");
    }
    assert!(of_type(&recs, "Backoff").is_empty(), "{recs:#?}");
    assert_eq!(of_type(&recs, "List").len(), 1, "429 re-watches, no relist");
}

/// Without Retry-After a 429 reaches the reflector at once: backoff, re-watch, no relist.
#[test]
fn too_many_requests_without_retry_after_back_off_then_rewatch_without_relist() {
    let recs = after_two_watch_429s(0);
    assert!(of_type(&recs, "Retry").is_empty(), "{recs:#?}");
    let backoffs = of_type(&recs, "Backoff");
    assert_eq!(backoffs.len(), 2, "{recs:#?}");
    for b in &backoffs {
        assert!(b["cause"].as_str().unwrap().contains("429"), "{b}");
    }
    assert_eq!(of_type(&recs, "List").len(), 1, "429 re-watches, no relist");
}

#[test]
fn internal_errors_and_unavailable_back_off_then_relist() {
    for code in [500, 503] {
        let (sim, mut kw) = watching_a_new_sim(&[], &[]);
        // Without Retry-After: with one, the request layer would retry it.
        sim.fail_next(json!({"code": code, "count": 1, "retryAfter": 0, "verb": "watch"}));
        sim.drop_watches();
        let recs = change_is_seen(&sim, &mut kw, "after-5xx");
        failed_watch_says(&recs, &code.to_string());
        let lists = of_type(&recs, "List");
        assert_eq!(lists.len(), 2, "{recs:#?}");
        assert!(lists[1]["reason"]
            .as_str()
            .unwrap()
            .contains(&code.to_string()));
        let b = recs.iter().position(|r| r["type"] == "Backoff").unwrap();
        let l = recs.iter().rposition(|r| r["type"] == "List").unwrap();
        assert!(b < l, "backoff before the relist");
    }
}

#[test]
fn expired_list_falls_back_to_a_consistent_read() {
    let (sim, mut kw) = watching_a_new_sim(&[], &[]);
    // The watch gets 410 (a change it did not see was compacted away), and the relist at
    // the last RV gets 410 too.
    sim.fail_next(json!({"code": 410, "count": 1, "verb": "list"}));
    sim.forced_410(|sim| change_is_made(sim, "unseen"));
    let recs = change_is_seen(&sim, &mut kw, "after-410");
    let lists = of_type(&recs, "List");
    assert_eq!(lists.len(), 3, "{recs:#?}");
    assert!(lists[1]["reason"]
        .as_str()
        .unwrap()
        .contains("too old resource version"));
    assert_ne!(lists[1]["resourceVersion"], "");
    assert_eq!(lists[2]["resourceVersion"], "", "after a 410 list: RV \"\"");
    assert!(lists[2]["reason"].as_str().unwrap().contains("410"));
    assert!(recs
        .iter()
        .any(|r| r["key"] == "default/unseen" && r["type"] == "Replaced"));
}

#[test]
fn too_large_resource_version_lists_at_empty_rv() {
    let sim = SimProcess::start(&[]);
    let mut kw = watching_configmaps_with_the_short_watch_rule(&sim, &[]);
    // A very short watch makes kwatch relist at its RV, which the server calls too large,
    // with Retry-After: 1 as kube-apiserver does: the request layer tries 11 times, then
    // the reflector lists at "".
    sim.fail_next(json!({"code": 504, "count": 11, "verb": "list"}));
    sim.control("POST", "/_sim/short-watches", json!({"count": 1}));
    sim.drop_watches();
    let recs = change_is_seen(&sim, &mut kw, "after-504");
    let lists = of_type(&recs, "List");
    assert_eq!(lists.len(), 3, "{recs:#?}");
    let retries = of_type(&recs, "Retry");
    assert_eq!(retries.len(), 10, "{recs:#?}");
    assert!(retries
        .iter()
        .all(|r| r["code"] == 504 && r["verb"] == "list"));
    let reason = lists[2]["reason"].as_str().unwrap();
    assert!(reason.contains("Too large resource version"), "{reason}");
    assert_eq!(lists[2]["resourceVersion"], "");
}

#[test]
fn a_very_short_watch_is_an_error_with_backoff() {
    let sim = SimProcess::start(&[]);
    let mut kw = watching_configmaps_with_the_short_watch_rule(&sim, &[]);
    sim.control("POST", "/_sim/short-watches", json!({"count": 1}));
    sim.drop_watches();
    let recs = change_is_seen(&sim, &mut kw, "after-short");
    let ended = of_type(&recs, "WatchEnded");
    assert!(
        ended.iter().any(|e| e["error"] == true
            && e["reason"]
                .as_str()
                .unwrap()
                .starts_with("very short watch")),
        "{recs:#?}"
    );
    assert!(!of_type(&recs, "Backoff").is_empty());
}

#[test]
fn a_malformed_line_is_reported_then_relisted() {
    let (sim, mut kw) = watching_a_new_sim(&[], &[]);
    sim.control("POST", "/_sim/malformed", json!({}));
    let recs = change_is_seen(&sim, &mut kw, "after-malformed");
    failed_watch_says(&recs, "unable to decode an event");
    assert_eq!(of_type(&recs, "List").len(), 2);
}

#[test]
fn a_stall_delays_events_but_loses_nothing() {
    let (sim, mut kw) = watching_a_new_sim(&[], &[]);
    sim.control("POST", "/_sim/stall", json!({"until": "released"}));
    change_is_made(&sim, "during-stall");
    // A marker after the change: the stall held both (nothing came meanwhile).
    change_is_made(&sim, "marker");
    assert!(
        !kw.json().iter().any(|r| r["key"] == "default/during-stall"),
        "held: {:#?}",
        kw.json()
    );
    sim.control("POST", "/_sim/release", json!({"fault": "stall"}));
    let recs = kw.wait_for(LIMIT, "the marker", |v| {
        v.iter().any(|r| r["key"] == "default/marker")
    });
    let during = recs
        .iter()
        .position(|r| r["key"] == "default/during-stall" && r["type"] == "Added");
    let marker = recs.iter().position(|r| r["key"] == "default/marker");
    assert!(during < marker && during.is_some(), "{recs:#?}");
    assert_eq!(of_type(&recs, "List").len(), 1);
    assert!(of_type(&recs, "WatchEnded").is_empty(), "{recs:#?}");
}

#[test]
fn a_clean_server_timeout_rewatches_from_the_last_rv() {
    // Bookmarks off: the watch's resourceVersion only moves with events.
    let (sim, mut kw) = watching_a_new_sim(&[], &["--no-bookmarks"]);
    let before = kw.json().len();
    sim.drop_watches();
    let recs = change_is_seen(&sim, &mut kw, "after-drop");
    let tail = after(&recs, before);
    let watches = of_type(tail, "Watch");
    assert_eq!(
        watches[0]["resourceVersion"],
        of_type(&recs, "Watch")[0]["resourceVersion"]
    );
    assert_eq!(of_type(&recs, "List").len(), 1);
    assert!(of_type(&recs, "Bookmark").is_empty(), "--no-bookmarks");
}

#[test]
fn bookmarks_advance_the_resource_version_of_the_next_watch() {
    let (sim, mut kw) = watching_a_new_sim(&["--bookmark-interval", "0.3"], &[]);
    // A ConfigMap changes in another namespace: the watch cache moves, and the watch's
    // bookmarks carry its revision forward.
    crate::util::kwatch::stir_configmaps(&sim);
    let recs = kw.wait_for(LIMIT, "a bookmark past the list RV", |v| {
        let listed = of_type(v, "Listed")[0]["resourceVersion"]
            .as_str()
            .unwrap()
            .parse::<u64>()
            .unwrap();
        of_type(v, "Bookmark").iter().any(|b| {
            b["resourceVersion"]
                .as_str()
                .unwrap()
                .parse::<u64>()
                .unwrap()
                > listed
        })
    });
    let last_bookmark = of_type(&recs, "Bookmark").last().unwrap()["resourceVersion"].clone();
    let n = recs.len();
    sim.drop_watches();
    let recs = kw.wait_for(LIMIT, "re-watch", |v| {
        of_type(after(v, n), "Watch").len() == 1
    });
    let rewatch = of_type(after(&recs, n), "Watch")[0];
    let rv = |v: &Value| v.as_str().unwrap().parse::<u64>().unwrap();
    assert!(
        rv(&rewatch["resourceVersion"]) >= rv(&last_bookmark),
        "{rewatch}"
    );
}

#[test]
fn an_expired_continue_token_falls_back_to_one_full_list() {
    let sim = SimProcess::start(&["--objects", "6"]);
    sim.control("POST", "/_sim/expire-continue", json!({"count": 1}));
    let mut kw = sim.start_kwatch("pods -A -o json --page-size 2 --watch-list off");
    let recs = kw.wait_for(LIMIT, "Synced", |v| !of_type(v, "Synced").is_empty());
    let listed = of_type(&recs, "Listed")[0];
    assert_eq!(listed["fullListFallback"], true, "{listed}");
    assert_eq!(listed["pages"], 2, "page 1, then the full list");
    let n = sim.state()["objects"]["pods"].as_object().unwrap().len();
    assert_eq!(listed["items"], n);
    assert_eq!(of_type(&recs, "Replaced").len(), n);
}

#[test]
fn a_server_gone_for_a_while_is_waited_for_and_converged_on() {
    let (sim, mut kw) = watching_a_new_sim(&[], &[]);
    sim.control("POST", "/_sim/restart", json!({"seconds": 3}));
    let refused = |v: &[Value]| {
        of_type(v, "Backoff").into_iter().any(|b| {
            b["cause"]
                .as_str()
                .unwrap()
                .contains("connect: connection refused")
        })
    };
    kw.wait_for(LIMIT, "a backoff after a refused connection", refused);
    // The port answers again (the control API is on it too, so nothing can end the
    // restart early).
    let addr = crate::util::shared::host_port(&sim);
    eventually(LIMIT, "the server back", || {
        std::net::TcpStream::connect(&addr)
    });
    let recs = change_is_seen(&sim, &mut kw, "after-restart");
    assert!(refused(&recs), "{recs:#?}");
}

/// A server that goes away mid-watch: the table's backoff `~` line says why in Go's words,
/// as client-go's reflector logs it (`dial tcp 127.0.0.1:PORT: connect: connection
/// refused`, Go's net.OpError), never in Rust's (`Connection refused (os error 111)`, which
/// it used to say), and no other line quotes an `os error` either.
#[test]
fn a_server_gone_mid_watch_is_refused_in_gos_words() {
    let sim = SimProcess::start(&[]);
    let kw = sim.start_kwatch("namespaces");
    eventually(LIMIT, "the table (synced)", || {
        let lines = kw.lines();
        if lines.len() > 1 {
            Ok(())
        } else {
            Err((lines, kw.stderr()))
        }
    });
    sim.control("POST", "/_sim/restart", json!({"seconds": 3}));
    let line = eventually(LIMIT, "a backoff line after a refused connection", || {
        let err = kw.stderr();
        err.lines()
            .find(|l| {
                l.starts_with("~ backoff namespaces ") && l.to_lowercase().contains("refused")
            })
            .map(str::to_owned)
            .ok_or(err)
    });
    let addr = crate::util::shared::host_port(&sim);
    assert!(
        line.ends_with(&format!(": dial tcp {addr}: connect: connection refused")),
        "{line}"
    );
    let out = kw.interrupt(LIMIT);
    assert!(!out.stderr.contains("os error"), "{}", out.stderr);
}

/// client-go's reflector does not notice a server restored from an older
/// backup (its watch at a resourceVersion the server has not reached gets nothing until its
/// timeout, which is a clean close): it watches again from the same resourceVersion, no
/// relist. kwatch does the same (it used to relist after a silent watch: no client-go
/// release does).
#[test]
fn a_server_restored_from_an_older_backup_is_watched_again_at_the_same_rv() {
    let sim = SimProcess::start(&[]);
    sim.control("POST", "/_sim/backup", json!({}));
    let mut kw = watching(&sim, &["--min-watch-timeout", "2s"]);
    let recs = change_is_seen(&sim, &mut kw, "after-backup");
    let seen_rv = recs
        .iter()
        .rev()
        .find(|r| r["key"] == "default/after-backup")
        .unwrap()["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    let before = kw.json().len();
    sim.control(
        "POST",
        "/_sim/restart",
        json!({"seconds": 1, "restore": true}),
    );
    // Watches after the restart last their whole timeout (2–4 s): two of them by 12 s.
    let recs = kw.wait_for(LIMIT, "two silent watches after the restore", |v| {
        after(v, before)
            .iter()
            .filter(|r| r["type"] == "WatchEnded" && r["reason"] == "closed by the server")
            .count()
            >= 2
    });
    let since = after(&recs, before);
    assert!(of_type(since, "List").is_empty(), "no relist: {since:#?}");
    for w in of_type(since, "Watch") {
        assert_eq!(w["resourceVersion"], seen_rv.as_str(), "{since:#?}");
    }
}
