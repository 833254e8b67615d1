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
