//! Answers with `Retry-After` are retried by the request layer, as client-go's
//! REST client retries them, never by the reflector. Each test replays a scenario recorded
//! from genuine client-go 0.32 (a server answering with `Retry-After`) against `kwatch sim` and
//! checks kwatch's records and the server's own request log (`GET /_sim/requests`).

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::util::kwatch::{of_type, watching_a_new_sim, Running};
use crate::util::{SimProcess, LIMIT};

fn patch_app_config(sim: &SimProcess, value: &str) {
    sim.kubectl_ok([
        "patch",
        "configmap",
        "app-config",
        "-n",
        "default",
        "--type",
        "merge",
        "-p",
        &format!(r#"{{"data":{{"k":"{value}"}}}}"#),
    ]);
}

/// The run-retry-after scenarios' steps: `count` 429s with `Retry-After: 1` for the next
/// watch requests, the watches dropped, `app-config` patched to `value`. Returns the
/// records up to the patch's `Updated`, and how long after the drop that came.
fn rejected_then_patched(
    sim: &SimProcess,
    kw: &mut Running,
    count: u64,
    value: &str,
) -> (Vec<Value>, Duration) {
    sim.fail_next(json!({"code": 429, "count": count, "retryAfter": 1, "verb": "watch"}));
    sim.drop_watches();
    let dropped = Instant::now();
    patch_app_config(sim, value);
    let recs = kw.wait_for(LIMIT, "the patch", |v| {
        v.iter()
            .any(|r| r["type"] == "Updated" && r["key"] == "default/app-config")
    });
    (recs, dropped.elapsed())
}

/// The server's log of the watch requests it answered after `since` (seconds).
fn watch_requests(sim: &SimProcess, since: f64) -> Vec<Value> {
    sim.get("/_sim/requests").json()["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| {
            r["t"].as_f64().unwrap() >= since && r["path"].as_str().unwrap().contains("watch=true")
        })
        .cloned()
        .collect()
}

/// The server's clock now (the time of its last logged request, after one more request).
fn server_now(sim: &SimProcess) -> f64 {
    let _ = sim.get("/api/v1/namespaces/default/configmaps/app-config");
    let log = sim.get("/_sim/requests").json();
    log["requests"].as_array().unwrap().last().unwrap()["t"]
        .as_f64()
        .unwrap()
}

/// Records from the first `WatchEnded` after index `from` on, up to the `Updated` of
/// `default/app-config`, bookmarks left out.
fn after_drop(recs: &[Value], from: usize) -> Vec<Value> {
    recs[from..]
        .iter()
        .filter(|r| r["type"] != "Bookmark")
        .skip_while(|r| r["type"] != "WatchEnded")
        .take_while(|r| !(r["type"] == "Updated" && r["key"] == "default/app-config"))
        .cloned()
        .collect()
}

/// `run-retry-after-3`: three 429s with `Retry-After: 1` for the next watch requests after
/// the watches drop. The request layer sends the same watch four times, 1 s apart; the
/// patch is delivered about 3 s after the drop; no Backoff, no relist.
#[test]
fn three_rejections_are_retried_by_the_request_layer_without_backoff_or_relist() {
    let (sim, mut kw) = watching_a_new_sim(&[], &["--stats"]);
    let seen = kw.json().len();
    let since = server_now(&sim);
    let (recs, delivered) = rejected_then_patched(&sim, &mut kw, 3, "after-3");
    let mine = after_drop(&recs, seen);
    let types: Vec<&str> = mine.iter().map(|r| r["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        ["WatchEnded", "Watch", "Retry", "Retry", "Retry"],
        "{mine:#?}"
    );
    assert_eq!(mine[0]["error"], false, "a drop is a clean close");
    for (i, r) in mine[2..].iter().enumerate() {
        assert_eq!(
            (
                &r["verb"],
                &r["code"],
                &r["retryAfterSeconds"],
                &r["attempt"]
            ),
            (&json!("watch"), &json!(429), &json!(1), &json!(i + 1)),
            "{r}"
        );
    }
    assert!(of_type(&recs, "Backoff").is_empty(), "{recs:#?}");
    assert_eq!(of_type(&recs, "List").len(), 1, "no relist: {recs:#?}");
    // Three waits of 1 s before the watch that delivers the patch.
    assert!(
        delivered >= Duration::from_millis(2500),
        "delivered after {delivered:?}"
    );

    // The server saw one watch request four times, as client-go sends it: the same URL.
    let log = watch_requests(&sim, since);
    assert_eq!(log.len(), 4, "{log:#?}");
    let statuses: Vec<u64> = log.iter().map(|r| r["status"].as_u64().unwrap()).collect();
    assert_eq!(statuses, [429, 429, 429, 200]);
    assert!(log.iter().all(|r| r["path"] == log[0]["path"]), "{log:#?}");
    for w in log.windows(2) {
        let gap = w[1]["t"].as_f64().unwrap() - w[0]["t"].as_f64().unwrap();
        assert!((0.9..2.0).contains(&gap), "retries 1 s apart: {log:#?}");
    }

    let out = kw.interrupt(Duration::from_secs(10));
    assert_eq!(out.code(), Some(130));
    assert!(
        out.stderr.contains("retries: 3, backoffs: 0"),
        "--stats counts retries: {}",
        out.stderr
    );
}

/// `run-retry-after-12`: twelve 429s. One watch request is tried 11 times, 1 s apart (the
/// first try and 10 retries), then the reflector sees the 429, backs off, and watches
/// again; that request's one 429 is retried once more. No relist.
#[test]
fn twelve_rejections_exhaust_the_retries_then_the_reflector_backs_off_once() {
    let (sim, mut kw) = watching_a_new_sim(&[], &[]);
    let seen = kw.json().len();
    let since = server_now(&sim);
    let (recs, _) = rejected_then_patched(&sim, &mut kw, 12, "after-12");
    let mine = after_drop(&recs, seen);
    let types: Vec<&str> = mine.iter().map(|r| r["type"].as_str().unwrap()).collect();
    let mut want = vec!["WatchEnded", "Watch"];
    want.extend(["Retry"; 10]);
    want.extend(["Backoff", "Watch", "Retry"]);
    assert_eq!(types, want, "{mine:#?}");
    let attempts: Vec<u64> = mine
        .iter()
        .filter(|r| r["type"] == "Retry")
        .map(|r| r["attempt"].as_u64().unwrap())
        .collect();
    assert_eq!(attempts, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1]);
    let backoff = &mine[12];
    assert!(
        backoff["cause"].as_str().unwrap().contains("429"),
        "{backoff}"
    );
    assert_eq!(of_type(&recs, "List").len(), 1, "no relist: {recs:#?}");

    let log = watch_requests(&sim, since);
    let statuses: Vec<u64> = log.iter().map(|r| r["status"].as_u64().unwrap()).collect();
    let mut want = vec![429; 12];
    want.push(200);
    assert_eq!(statuses, want, "{log:#?}");
    assert!(
        log[..11].iter().all(|r| r["path"] == log[0]["path"]),
        "eleven tries of one URL: {log:#?}"
    );
    for w in log[..11].windows(2) {
        let gap = w[1]["t"].as_f64().unwrap() - w[0]["t"].as_f64().unwrap();
        assert!((0.9..2.0).contains(&gap), "1 s apart: {log:#?}");
    }
    // The reflector's backoff (0.8–1.6 s) stands between the 11th and the 12th request.
    let gap = log[11]["t"].as_f64().unwrap() - log[10]["t"].as_f64().unwrap();
    assert!(gap >= 0.75, "{log:#?}");
}

/// The relist after a 410 gets two 503s with Retry-After: one `List` record, two
/// retries, then `Listed`.
#[test]
fn a_relist_answered_503_with_retry_after_is_one_list() {
    let (sim, mut kw) = watching_a_new_sim(&[], &[]);
    sim.fail_next(json!({"code": 503, "count": 2, "retryAfter": 1, "verb": "list"}));
    // A change the watch does not see, compacted away: the re-watch gets 410.
    sim.forced_410(|sim| sim.kubectl_ok("delete configmap app-config -n default"));
    let recs = kw.wait_for(LIMIT, "the tombstone", |v| {
        v.iter()
            .any(|r| r["type"] == "Deleted" && r["key"] == "default/app-config")
    });
    let lists: Vec<usize> = recs
        .iter()
        .enumerate()
        .filter(|(_, r)| r["type"] == "List")
        .map(|(i, _)| i)
        .collect();
    assert_eq!(lists.len(), 2, "{recs:#?}");
    let relist = &recs[lists[1]..];
    let types: Vec<&str> = relist
        .iter()
        .take(4)
        .map(|r| r["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["List", "Retry", "Retry", "Listed"], "{relist:#?}");
    assert!(relist[0]["reason"].as_str().unwrap().contains("410"));
    for r in &relist[1..3] {
        assert_eq!(
            (&r["verb"], &r["code"]),
            (&json!("list"), &json!(503)),
            "{r}"
        );
    }
}

/// Discovery goes through the request layer too, as kubectl's does: two throttled
/// answers to the first requests, and both kwatch (cold cache) and kubectl get through.
#[test]
fn discovery_answered_with_retry_after_is_retried_like_kubectl() {
    let sim = SimProcess::start(&[]);
    sim.fail_next(json!({"code": 429, "count": 2, "retryAfter": 1}));
    let out = sim
        .kwatch("configmaps -n default -o name --until-synced")
        .exits(0);
    assert!(out.stdout.contains(&"configmap/app-config".to_owned()));
    let retried = out.stderr.matches("retrying GET /api").count();
    assert_eq!(retried, 2, "{}", out.stderr);

    sim.fail_next(json!({"code": 429, "count": 2, "retryAfter": 1}));
    let k = sim.kubectl("get configmaps -n default -o name");
    assert!(k.status.success(), "{}", String::from_utf8_lossy(&k.stderr));
}

/// Ctrl-C during a Retry-After wait ends kwatch at once, with 130.
#[test]
fn interrupt_during_a_retry_wait_exits_at_once() {
    let (sim, mut kw) = watching_a_new_sim(&[], &[]);
    sim.fail_next(json!({"code": 503, "count": 5, "retryAfter": 60, "verb": "watch"}));
    sim.drop_watches();
    kw.wait_for(LIMIT, "a Retry", |v| !of_type(v, "Retry").is_empty());
    let start = Instant::now();
    let out = kw.interrupt(Duration::from_secs(10));
    assert_eq!(out.code(), Some(130), "{}", out.stderr);
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
}
