//! client-go resyncs only while watching (`watchWithResync` in
//! `tools/cache/reflector.go`): no resync while a relist fails and backs off, and the
//! resyncs resume once the new watch starts.

use std::time::Duration;

use serde_json::json;

use crate::util::kwatch::{of_type, watching_configmaps};
use crate::util::SimProcess;

#[test]
fn no_resync_between_a_failed_watch_and_the_completed_relist() {
    let sim = SimProcess::start(&[]);
    let mut kw = watching_configmaps(&sim, &["--resync", "1s"]);
    kw.wait_for(Duration::from_secs(20), "resyncs while watching", |v| {
        of_type(v, "Resync").len() >= 2
    });
    // The next LISTs fail (500, no Retry-After: the reflector backs off several seconds);
    // a change the watch misses, compacted away, makes the re-watch get 410.
    sim.fail_next(json!({"code": 500, "count": 2, "retryAfter": 0, "verb": "list"}));
    sim.forced_410(|sim| sim.kubectl_ok("delete configmap app-config -n default"));
    // The relist's Listed: the first Listed after the second List.
    let relist_listed = |v: &[serde_json::Value]| {
        let relist = v
            .iter()
            .enumerate()
            .filter(|(_, r)| r["type"] == "List")
            .nth(1)?
            .0;
        v[relist..]
            .iter()
            .position(|r| r["type"] == "Listed")
            .map(|i| relist + i)
    };
    let recs = kw.wait_for(Duration::from_secs(60), "resyncs after the relist", |v| {
        relist_listed(v).is_some_and(|l| of_type(&v[l..], "Resync").len() >= 2)
    });
    let failed = recs
        .iter()
        .position(|r| r["type"] == "WatchEnded" && r["error"] == true)
        .expect("the watch failed");
    let relisted = relist_listed(&recs).expect("the relist completed");
    let between = &recs[failed..relisted];
    assert!(
        of_type(between, "Backoff").len() >= 2,
        "the LISTs failed and backed off: {between:#?}"
    );
    assert!(
        !between
            .iter()
            .any(|r| r["type"] == "Resync" || r["type"] == "Sync"),
        "no resync while relisting: {between:#?}"
    );
    let resumed = &recs[relisted..];
    let watch = resumed
        .iter()
        .position(|r| r["type"] == "Watch")
        .expect("a new watch");
    let first_resync = resumed
        .iter()
        .position(|r| r["type"] == "Resync")
        .expect("resyncs resume");
    assert!(watch < first_resync, "{resumed:#?}");
}
