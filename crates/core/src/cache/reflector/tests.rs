//! Reflector rules, each against a scripted source, with paused time.

use std::sync::Mutex;

use super::*;
use crate::cache::listwatch::{ApiStatus, ListOptions, ListPage, Transfer};
use crate::cache::reflector::scripted::{Call, Item, Scripted, Step};
use crate::cache::testutil::meta_object;

#[derive(Default)]
struct Recorder {
    log: Mutex<Vec<String>>,
}

impl Recorder {
    fn push(&self, s: String) {
        self.log.lock().unwrap().push(s);
    }
    fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }
}

impl ReflectorStore for Recorder {
    fn add(&self, o: ObjectRef) {
        self.push(format!("add {} {}", o.key(), o.resource_version()));
    }
    fn update(&self, o: ObjectRef) {
        self.push(format!("update {} {}", o.key(), o.resource_version()));
    }
    fn delete(&self, o: ObjectRef) {
        self.push(format!("delete {} {}", o.key(), o.resource_version()));
    }
    fn replace(&self, objs: Vec<ObjectRef>, rv: &str) {
        let keys: Vec<String> = objs.iter().map(|o| o.key()).collect();
        self.push(format!("replace {rv} [{}]", keys.join(",")));
    }
    fn resync(&self) {
        self.push("resync".into());
    }
    fn notice(&self, e: ReflectorEvent) {
        let s = match e {
            // In the table's words.
            ReflectorEvent::List {
                resource_version,
                limit,
                reason,
                streaming,
                ..
            } => {
                let how = if streaming { "watch-list" } else { "list" };
                let paging = match limit {
                    0 => String::new(),
                    n => format!(", {n} per page"),
                };
                match reason.as_str() {
                    "initial" => format!("{how} pods at rv={resource_version:?}{paging}"),
                    _ => format!("relist pods: {reason} → {how} at rv={resource_version:?}{paging}"),
                }
            }
            ReflectorEvent::Listed {
                resource_version,
                items,
                pages,
                full_list_fallback,
                streaming: _,
                ..
            } => format!(
                "Listed rv={resource_version} items={items} pages={pages} fallback={full_list_fallback}"
            ),
            ReflectorEvent::Watch {
                resource_version, ..
            } => format!("Watch rv={resource_version}"),
            ReflectorEvent::WatchEnded {
                reason,
                events,
                bookmarks: 0,
                error,
                ..
            } => format!("WatchEnded events={events} error={error} {reason}"),
            ReflectorEvent::WatchEnded {
                reason,
                events,
                bookmarks,
                error,
                ..
            } => format!("WatchEnded events={events} bookmarks={bookmarks} error={error} {reason}"),
            ReflectorEvent::Bookmark { resource_version } => format!("Bookmark {resource_version}"),
            ReflectorEvent::Stalled {
                silent,
                watch_age,
                resource_version,
                restart,
            } => format!(
                "Stalled {}s age={}s rv={resource_version} restart={restart}",
                silent.as_secs(),
                watch_age.as_secs()
            ),
            ReflectorEvent::Backoff { delay, cause } => {
                format!("Backoff {}ms {cause}", delay.as_millis())
            }
            ReflectorEvent::Resync => "Resync".into(),
            ReflectorEvent::WatchListFallback { error } => format!("Fallback {error}"),
            ReflectorEvent::WireFallback { error } => format!("WireFallback {error}"),
            ReflectorEvent::Retry(r) => format!(
                "Retry {} {} {}s {}/{}",
                r.verb.as_str(),
                r.code.map_or("-".to_owned(), |c| c.to_string()),
                r.delay.as_secs(),
                r.attempt,
                r.max_retries
            ),
            ReflectorEvent::Relisted {
                resource_version,
                resync,
                ..
            } => format!("Relisted rv={resource_version:?} resync={resync}"),
            ReflectorEvent::TimeTravel {
                request,
                resource_version,
                held,
            } => format!("TimeTravel {request} served={resource_version} held={held}"),
            ReflectorEvent::OpaqueResourceVersion { resource_version } => {
                format!("OpaqueResourceVersion {resource_version}")
            }
            ReflectorEvent::Protocol { problem, .. } => format!("Protocol {problem}"),
        };
        self.push(s);
    }
}

fn obj(name: &str, rv: &str) -> ObjectRef {
    meta_object("ns", name, rv)
}

fn page(rv: &str, names: &[(&str, &str)], cont: Option<&str>) -> Step {
    Step::List(Ok(ListPage {
        resource_version: rv.into(),
        continue_token: cont.map(String::from),
        remaining_item_count: None,
        items: names.iter().map(|(n, r)| obj(n, r)).collect(),
        // As a server gzips a page over 128 KiB: here, a page with a continue token.
        transfer: Transfer {
            protobuf: false,
            gzip: cont.is_some(),
            bytes: 1000 * names.len() as u64,
            wire_bytes: if cont.is_some() { 100 } else { 1000 } * names.len() as u64,
        },
        wire_fallback: None,
    }))
}

fn status(code: u16, reason: &str, message: &str) -> SourceError {
    SourceError::Api(ApiStatus {
        code,
        reason: reason.into(),
        message: message.into(),
        ..ApiStatus::default()
    })
}

fn cfg() -> ReflectorConfig {
    ReflectorConfig {
        seed: 3,
        ..ReflectorConfig::default()
    }
}

/// Runs the reflector for `secs` of (paused) time and returns the recorder and source.
async fn run_for(steps: Vec<Step>, cfg: ReflectorConfig, secs: u64) -> (Vec<String>, Vec<Call>) {
    let src = Scripted::new(steps);
    let rec = Arc::new(Recorder::default());
    let r = Reflector::new(src.clone(), rec.clone(), cfg);
    let task = tokio::spawn(async move {
        r.run().await;
    });
    tokio::time::sleep(Duration::from_secs(secs)).await;
    task.abort();
    (rec.log(), src.calls())
}

fn backoffs(log: &[String]) -> Vec<String> {
    log.iter()
        .filter(|l| l.starts_with("Backoff"))
        .cloned()
        .collect()
}

fn without_backoff_delays(log: &[String]) -> Vec<String> {
    log.iter()
        .map(|l| {
            if let Some(rest) = l.strip_prefix("Backoff ") {
                let cause = rest.split_once(' ').map(|x| x.1).unwrap_or("");
                format!("Backoff {cause}")
            } else {
                l.clone()
            }
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn lists_at_zero_then_watches_from_list_rv_and_rewatches_after_clean_close() {
    let steps = vec![
        page("10", &[("a", "5"), ("b", "9")], None),
        Step::Watch(Ok(vec![
            Item::Sleep(Duration::from_secs(2)),
            Item::Event(WatchEvent::Added(obj("c", "11"))),
            Item::Event(WatchEvent::Modified(obj("a", "12"))),
            Item::Event(WatchEvent::Bookmark {
                resource_version: "15".into(),
                initial_events_end: false,
            }),
        ])),
        Step::Watch(Ok(vec![
            Item::Event(WatchEvent::Deleted(obj("b", "16"))),
            Item::Sleep(Duration::from_secs(5)),
        ])),
    ];
    let (log, calls) = run_for(steps, cfg(), 30).await;
    assert_eq!(
        log,
        vec![
            "list pods at rv=\"0\", 500 per page",
            "Listed rv=10 items=2 pages=1 fallback=false",
            "replace 10 [ns/a,ns/b]",
            "Watch rv=10",
            "add ns/c 11",
            "update ns/a 12",
            "Bookmark 15",
            "WatchEnded events=2 bookmarks=1 error=false closed by the server",
            "Watch rv=15",
            "delete ns/b 16",
            "WatchEnded events=1 error=false closed by the server",
            "Watch rv=16",
        ]
    );
    match &calls[1] {
        Call::Watch(w) => {
            assert!(w.allow_bookmarks && !w.send_initial_events);
            assert!(
                (300..600).contains(&w.timeout_seconds),
                "{}",
                w.timeout_seconds
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        calls[0],
        Call::List(ListOptions {
            resource_version: "0".into(),
            limit: Some(500),
            ..ListOptions::default()
        })
    );
}

/// A List names what its requests ask for.
#[test]
fn a_list_names_what_it_asks_for() {
    let encoding = |protobuf, gzip| match ReflectorEvent::list("", 500, "initial", false)
        .asking(protobuf, gzip)
    {
        ReflectorEvent::List { encoding, .. } => encoding,
        _ => None,
    };
    assert_eq!(encoding(false, true).as_deref(), Some("json+gzip"));
    assert_eq!(encoding(false, false).as_deref(), Some("json"));
    assert_eq!(encoding(true, true).as_deref(), Some("protobuf+gzip"));
    assert_eq!(encoding(true, false).as_deref(), Some("protobuf"));
}

/// A list's transfer is its pages' summed, gzip when any page was.
#[tokio::test(start_paused = true)]
async fn a_lists_bytes_are_its_pages_summed() {
    let src = Scripted::new(vec![
        page("20", &[("a", "1"), ("b", "2")], Some("t1")),
        page("20", &[("c", "3")], None),
    ]);
    let listed = pager::list(&src, &ListProgress::default(), "", 2)
        .await
        .unwrap();
    let transfer = Transfer {
        protobuf: false,
        gzip: true,
        bytes: 3000,
        wire_bytes: 200 + 1000,
    };
    assert_eq!(listed.transfer, transfer);
    assert_eq!(listed.transfer.encoding(), "json+gzip");
}

#[tokio::test(start_paused = true)]
async fn follows_continue_tokens_and_later_pages_carry_no_rv() {
    let steps = vec![
        page("20", &[("a", "1"), ("b", "2")], Some("t1")),
        page("20", &[("c", "3"), ("d", "4")], Some("t2")),
        page("20", &[("e", "5")], None),
    ];
    let cfg = ReflectorConfig {
        page_size: 2,
        page_size_explicit: true,
        ..cfg()
    };
    let (log, calls) = run_for(steps, cfg, 5).await;
    assert_eq!(log[1], "Listed rv=20 items=5 pages=3 fallback=false");
    assert_eq!(log[2], "replace 20 [ns/a,ns/b,ns/c,ns/d,ns/e]");
    let lists: Vec<ListOptions> = calls
        .into_iter()
        .filter_map(|c| match c {
            Call::List(l) => Some(l),
            _ => None,
        })
        .collect();
    // An explicit page size makes the first list a consistent read: RV "0" would be
    // served from the watch cache, which ignores limit.
    assert_eq!(lists[0].resource_version, "");
    assert_eq!(lists[0].limit, Some(2));
    for (l, t) in lists[1..].iter().zip(["t1", "t2"]) {
        assert_eq!(l.resource_version, "");
        assert_eq!(l.continue_token.as_deref(), Some(t));
        assert_eq!(l.limit, Some(2));
    }
}

#[tokio::test(start_paused = true)]
async fn expired_continue_falls_back_to_one_full_list_at_the_requested_rv() {
    let steps = vec![
        page("20", &[("a", "1")], Some("t1")),
        Step::List(Err(status(
            410,
            "Expired",
            "The provided continue parameter is too old",
        ))),
        page("25", &[("a", "1"), ("b", "24")], None),
    ];
    let cfg = ReflectorConfig {
        page_size: 1,
        page_size_explicit: true,
        ..cfg()
    };
    let (log, calls) = run_for(steps, cfg, 5).await;
    assert_eq!(log[1], "Listed rv=25 items=2 pages=2 fallback=true");
    assert_eq!(calls[2], Call::List(ListOptions::default()));
}

#[tokio::test(start_paused = true)]
async fn watch_410_relists_at_last_rv_without_paging_then_at_empty_rv_if_that_expires() {
    let expired = || status(410, "Expired", "too old resource version: 12 (30)");
    let steps = vec![
        page("10", &[("a", "5")], None),
        Step::Watch(Ok(vec![
            Item::Sleep(Duration::from_secs(3)),
            Item::Event(WatchEvent::Modified(obj("a", "12"))),
            Item::Event(WatchEvent::Error(match expired() {
                SourceError::Api(s) => s,
                _ => unreachable!(),
            })),
        ])),
        Step::List(Err(expired())),
        page("31", &[("b", "31")], None),
    ];
    let (log, calls) = run_for(steps, cfg(), 10).await;
    let log = without_backoff_delays(&log);
    assert_eq!(
        log[4..],
        [
            "update ns/a 12",
            "WatchEnded events=2 error=true 410 Expired: too old resource version: 12 (30)",
            "Backoff 410 Expired: too old resource version: 12 (30)",
            "relist pods: 410 Expired: too old resource version: 12 (30) → list at rv=\"12\"",
            "relist pods: list at rv=12: 410 Expired: too old resource version: 12 (30) → list at rv=\"\"",
            "Listed rv=31 items=1 pages=1 fallback=false",
            "replace 31 [ns/b]",
            "Relisted rv=\"31\" resync=false",
            "Watch rv=31",
        ]
    );
    assert_eq!(
        calls[2],
        Call::List(ListOptions {
            resource_version: "12".into(),
            ..ListOptions::default()
        })
    );
    assert_eq!(calls[3], Call::List(ListOptions::default()));
}

/// A relist served at a resourceVersion below what the watch had synced (a stale watch
/// cache of an HA server) is reported once, and the reflector goes on as client-go does:
/// it replaces and watches from the RV it was served. A watch event going back is
/// reported once per watch.
#[tokio::test(start_paused = true)]
async fn a_list_or_watch_older_than_what_was_synced_is_time_travel() {
    let steps = vec![
        page("10", &[("a", "5")], None),
        Step::Watch(Ok(vec![
            Item::Sleep(Duration::from_secs(3)),
            Item::Event(WatchEvent::Modified(obj("a", "12"))),
            Item::Event(WatchEvent::Error(
                match status(410, "Expired", "too old resource version: 12 (30)") {
                    SourceError::Api(s) => s,
                    _ => unreachable!(),
                },
            )),
        ])),
        page("8", &[("a", "5")], None),
        Step::Watch(Ok(vec![
            Item::Sleep(Duration::from_secs(3)),
            Item::Event(WatchEvent::Modified(obj("a", "11"))),
            Item::Event(WatchEvent::Modified(obj("a", "9"))),
            Item::Event(WatchEvent::Modified(obj("a", "7"))),
        ])),
    ];
    let (log, _) = run_for(steps, cfg(), 30).await;
    let travels: Vec<&String> = log.iter().filter(|l| l.starts_with("TimeTravel")).collect();
    assert_eq!(
        travels,
        [
            "TimeTravel list ?resourceVersion=12 served=8 held=12",
            // The watch from 8: its first event below 12 (11), once for the whole watch.
            "TimeTravel watch ?resourceVersion=8 served=11 held=12",
        ],
        "{log:#?}"
    );
    // No change of behaviour: replaced at 8, watched from 8.
    let at = log
        .iter()
        .position(|l| l == "replace 8 [ns/a]")
        .expect("the replace");
    assert!(log[at..].iter().any(|l| l == "Watch rv=8"), "{log:#?}");
}

/// A server whose resourceVersions are not integers (opaque, as the API
/// conventions allowed before KEP-5504) is noted once, and nothing is called time travel,
/// whatever order its versions come in.
#[tokio::test(start_paused = true)]
async fn opaque_resource_versions_are_noted_once_and_never_time_travel() {
    let steps = vec![
        page("x10", &[("a", "x5")], None),
        Step::Watch(Ok(vec![
            Item::Sleep(Duration::from_secs(3)),
            Item::Event(WatchEvent::Modified(obj("a", "x12"))),
            Item::Event(WatchEvent::Modified(obj("a", "x1"))),
            Item::Event(WatchEvent::Modified(obj("a", "7"))),
            Item::Event(WatchEvent::Modified(obj("a", "3"))),
        ])),
    ];
    let (log, _) = run_for(steps, cfg(), 30).await;
    let noted: Vec<&String> = log
        .iter()
        .filter(|l| l.starts_with("OpaqueResourceVersion") || l.starts_with("TimeTravel"))
        .collect();
    // Versions that happen to read as integers (3 after 7) are opaque too.
    assert_eq!(noted, ["OpaqueResourceVersion x10"], "{log:#?}");
}

#[tokio::test(start_paused = true)]
async fn too_large_rv_list_retries_at_empty_rv_at_once() {
    let too_large = SourceError::Api(ApiStatus {
        code: 504,
        reason: "Timeout".into(),
        message: "Timeout: Too large resource version: 99, current: 5".into(),
        too_large_rv: true,
        ..ApiStatus::default()
    });
    let steps = vec![Step::List(Err(too_large)), page("5", &[], None)];
    let (log, _) = run_for(steps, cfg(), 2).await;
    assert!(log[1].starts_with("relist pods: list at rv=0: 504 Timeout"));
    assert!(log[1].ends_with("→ list at rv=\"\", 500 per page"));
    assert_eq!(log[2], "Listed rv=5 items=0 pages=1 fallback=false");
    assert!(backoffs(&log).is_empty());
}

#[tokio::test(start_paused = true)]
async fn very_short_watch_is_an_error_that_backs_off_and_relists() {
    let steps = vec![
        page("10", &[], None),
        Step::Watch(Ok(vec![])),
        page("11", &[], None),
    ];
    let (log, _) = run_for(steps, cfg(), 5).await;
    let log = without_backoff_delays(&log);
    assert_eq!(
        log[4..8],
        [
            "WatchEnded events=0 error=true very short watch: the watch lasted less than a second and no items received",
            "Backoff very short watch: the watch lasted less than a second and no items received",
            "relist pods: very short watch: the watch lasted less than a second and no items received → list at rv=\"10\"",
            "Listed rv=11 items=0 pages=1 fallback=false",
        ]
    );
}

fn throttled(retry_after: Option<u64>) -> SourceError {
    SourceError::Api(ApiStatus {
        code: 429,
        reason: "TooManyRequests".into(),
        message: "slow down".into(),
        retry_after: retry_after.map(Duration::from_secs),
        ..ApiStatus::default()
    })
}

fn retries(log: &[String]) -> Vec<String> {
    log.iter()
        .filter(|l| l.starts_with("Retry"))
        .cloned()
        .collect()
}

/// The reference run `run-retry-after-3`: the request layer repeats the watch after each
/// Retry-After; the reflector sees no error.
#[tokio::test(start_paused = true)]
async fn watch_answered_with_retry_after_is_retried_then_succeeds_without_backoff() {
    let steps = vec![
        page("10", &[], None),
        Step::Watch(Err(throttled(Some(1)))),
        Step::Watch(Err(throttled(Some(1)))),
        Step::Watch(Err(throttled(Some(1)))),
        Step::Watch(Ok(vec![
            Item::Event(WatchEvent::Modified(obj("a", "11"))),
            Item::Sleep(Duration::from_secs(100)),
        ])),
    ];
    let start = Instant::now();
    let (log, calls) = run_for(steps, cfg(), 30).await;
    assert!(start.elapsed() >= Duration::from_secs(30));
    assert_eq!(
        log[3..],
        [
            "Watch rv=10",
            "Retry watch 429 1s 1/10",
            "Retry watch 429 1s 2/10",
            "Retry watch 429 1s 3/10",
            "update ns/a 11",
        ]
    );
    // One watch request, sent four times as it was.
    assert_eq!(calls.len(), 5);
    assert!(calls[2..].iter().all(|c| *c == calls[1]), "{calls:?}");
}

/// The reference run `run-retry-after-12`: one request tried 11 times, 1 s apart; only
/// then does the reflector see the 429, back off (its own backoff) and watch again.
#[tokio::test(start_paused = true)]
async fn retries_exhausted_reach_the_reflector_which_backs_off_and_rewatches() {
    let mut steps = vec![page("10", &[], None)];
    steps.extend((0..12).map(|_| Step::Watch(Err(throttled(Some(1))))));
    steps.push(Step::Watch(Ok(vec![Item::Sleep(Duration::from_secs(100))])));
    let (log, calls) = run_for(steps, cfg(), 60).await;
    let watches = &calls[1..];
    assert_eq!(watches.len(), 13, "{calls:?}");
    assert!(watches[..11].iter().all(|c| *c == watches[0]));
    let expected: Vec<String> = (1..=10)
        .map(|a| format!("Retry watch 429 1s {a}/10"))
        .collect();
    assert_eq!(log[4..14], expected[..]);
    assert!(
        log[14].starts_with("Backoff ")
            && log[14].ends_with("ms watch: 429 TooManyRequests: slow down"),
        "{}",
        log[14]
    );
    // client-go's backoff (800 ms, jitter up to 2×), not the Retry-After.
    let ms: u64 = log[14]["Backoff ".len()..]
        .split("ms")
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((800..1600).contains(&ms), "{ms}");
    assert_eq!(log[15..], ["Watch rv=10", "Retry watch 429 1s 1/10"]);
    assert!(
        !log.iter().any(|l| l.contains(" at rv=\"10\"")),
        "no relist"
    );
}

#[tokio::test(start_paused = true)]
async fn throttled_without_retry_after_goes_to_the_reflector_at_once() {
    let steps = vec![
        page("10", &[], None),
        Step::Watch(Err(throttled(None))),
        Step::Watch(Ok(vec![Item::Sleep(Duration::from_secs(100))])),
    ];
    let (log, calls) = run_for(steps, cfg(), 30).await;
    assert!(retries(&log).is_empty(), "{log:#?}");
    assert_eq!(backoffs(&log).len(), 1);
    assert_eq!(log.last().unwrap(), "Watch rv=10");
    assert!(
        matches!(calls[2], Call::Watch(_)),
        "re-watch, no relist: {calls:?}"
    );
}

/// client-go's request layer waits whatever the server asks, even longer than the watch
/// would have lasted, and then sends the same request (the same timeoutSeconds).
#[tokio::test(start_paused = true)]
async fn a_retry_after_longer_than_the_watch_timeout_is_waited_in_full() {
    let steps = vec![
        page("10", &[], None),
        Step::Watch(Err(throttled(Some(900)))),
        Step::Watch(Ok(vec![Item::Sleep(Duration::from_secs(10_000))])),
    ];
    let (log, calls) = run_for(steps, cfg(), 899).await;
    assert_eq!(log[3..], ["Watch rv=10", "Retry watch 429 900s 1/10"]);
    assert_eq!(calls.len(), 2, "not sent again before 900 s");
    let (log, calls) = run_for(
        vec![
            page("10", &[], None),
            Step::Watch(Err(throttled(Some(900)))),
            Step::Watch(Ok(vec![Item::Sleep(Duration::from_secs(10_000))])),
        ],
        cfg(),
        901,
    )
    .await;
    assert_eq!(calls.len(), 3);
    assert_eq!(calls[2], calls[1]);
    match &calls[1] {
        Call::Watch(w) => assert!(w.timeout_seconds < 900, "{}", w.timeout_seconds),
        other => panic!("{other:?}"),
    }
    assert!(backoffs(&log).is_empty(), "{log:#?}");
}

/// The relist's LIST answered 503 with Retry-After twice: one List record, two retries,
/// then Listed.
#[tokio::test(start_paused = true)]
async fn a_relist_answered_503_with_retry_after_is_retried_within_one_list() {
    let unavailable = || {
        SourceError::Api(ApiStatus {
            code: 503,
            reason: "ServiceUnavailable".into(),
            message: "busy".into(),
            retry_after: Some(Duration::from_secs(1)),
            ..ApiStatus::default()
        })
    };
    let expired = status(410, "Expired", "too old resource version: 10 (12)");
    let steps = vec![
        page("10", &[("a", "5")], None),
        Step::Watch(Ok(vec![Item::Event(WatchEvent::Error(match expired {
            SourceError::Api(s) => s,
            _ => unreachable!(),
        }))])),
        Step::List(Err(unavailable())),
        Step::List(Err(unavailable())),
        page("12", &[("a", "11")], None),
    ];
    let (log, _) = run_for(steps, cfg(), 10).await;
    let log = without_backoff_delays(&log);
    assert_eq!(
        log[4..],
        [
            "WatchEnded events=1 error=true 410 Expired: too old resource version: 10 (12)",
            "Backoff 410 Expired: too old resource version: 10 (12)",
            "relist pods: 410 Expired: too old resource version: 10 (12) → list at rv=\"10\"",
            "Retry list 503 1s 1/10",
            "Retry list 503 1s 2/10",
            "Listed rv=12 items=1 pages=1 fallback=false",
            "replace 12 [ns/a]",
            // A relist's summary; the initial list (log[..4]) has none.
            "Relisted rv=\"12\" resync=false",
            "Watch rv=12",
        ]
    );
}

/// Before the first sync, errors that will not fix themselves end the reflector at once;
/// refused and throttled answers without Retry-After do too only when they will not fix
/// themselves.
#[tokio::test(start_paused = true)]
async fn errors_that_will_not_fix_themselves_end_it_before_the_first_sync() {
    for (err, watch_list) in [
        (status(403, "Forbidden", "pods is forbidden"), false),
        (status(401, "Unauthorized", "Unauthorized"), false),
        (
            SourceError::Tls("invalid peer certificate: UnknownIssuer".into()),
            false,
        ),
        (
            SourceError::ConnectionRefused(
                "dial tcp 127.0.0.1:6443: connect: connection refused".into(),
            ),
            false,
        ),
        (SourceError::Timeout(Duration::from_secs(1)), false),
        (status(403, "Forbidden", "cannot watch"), true),
        (
            status(400, "BadRequest", "unable to parse requirement"),
            true,
        ),
    ] {
        let step = if watch_list {
            Step::Watch(Err(err.clone()))
        } else {
            Step::List(Err(err.clone()))
        };
        let src = Scripted::new(vec![step]);
        let rec = Arc::new(Recorder::default());
        let cfg = ReflectorConfig {
            watch_list: if watch_list {
                WatchListMode::Auto
            } else {
                WatchListMode::Off
            },
            ..cfg()
        };
        let got = Reflector::new(src.clone(), rec.clone(), cfg).run().await;
        assert_eq!(got.to_string(), err.to_string());
        assert_eq!(src.calls().len(), 1, "{err}: tried once");
        let log = rec.log();
        assert!(
            !log.iter()
                .any(|l| l.starts_with("Fallback") || l.starts_with("Backoff")),
            "{err}: {log:#?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_server_error_before_the_first_sync_is_retried_with_backoff() {
    let steps = vec![
        Step::List(Err(status(500, "InternalError", "etcd down"))),
        Step::List(Err(SourceError::Lost("connection reset by peer".into()))),
        page("5", &[], None),
    ];
    let (log, _) = run_for(steps, cfg(), 20).await;
    assert_eq!(backoffs(&log).len(), 1, "{log:#?}");
    assert_eq!(retries(&log), ["Retry list - 1s 1/10"]);
    assert!(log.contains(&"Listed rv=5 items=0 pages=1 fallback=false".to_owned()));
}

#[tokio::test(start_paused = true)]
async fn connection_refused_on_watch_backs_off_without_relist() {
    let steps = vec![
        page("10", &[], None),
        Step::Watch(Err(SourceError::ConnectionRefused("refused".into()))),
        Step::Watch(Err(SourceError::ConnectionRefused("refused".into()))),
        Step::Watch(Ok(vec![Item::Sleep(Duration::from_secs(100))])),
    ];
    let (log, calls) = run_for(steps, cfg(), 30).await;
    assert_eq!(backoffs(&log).len(), 2);
    assert!(calls[1..].iter().all(|c| matches!(c, Call::Watch(_))));
}

#[tokio::test(start_paused = true)]
async fn repeated_list_failures_back_off_exponentially() {
    let steps: Vec<Step> = (0..6)
        .map(|_| Step::List(Err(status(503, "ServiceUnavailable", "down"))))
        .collect();
    let (log, _) = run_for(steps, cfg(), 200).await;
    let delays: Vec<u128> = backoffs(&log)
        .iter()
        .map(|l| {
            l.split(' ')
                .nth(1)
                .unwrap()
                .trim_end_matches("ms")
                .parse()
                .unwrap()
        })
        .collect();
    assert_eq!(delays.len(), 6);
    let mut base = 800u128;
    for d in delays {
        assert!(
            d >= base && d < 2 * base,
            "{d} not in [{base}, {})",
            2 * base
        );
        base = (base * 2).min(30_000);
    }
    assert!(log
        .iter()
        .any(|l| l.starts_with("relist pods: 503 ServiceUnavailable: down →")));
}

#[tokio::test(start_paused = true)]
async fn undecodable_line_ends_the_watch_and_relists() {
    let steps = vec![
        page("10", &[], None),
        Step::Watch(Ok(vec![
            Item::Event(WatchEvent::Added(obj("a", "11"))),
            Item::Fail(SourceError::Decode("watch event: expected value".into())),
        ])),
        page("12", &[("a", "11")], None),
    ];
    let (log, _) = run_for(steps, cfg(), 5).await;
    assert!(log.contains(&"WatchEnded events=1 error=true unable to decode an event from the watch stream: watch event: expected value".to_owned()), "{log:#?}");
    assert!(log.contains(&"relist pods: unable to decode an event from the watch stream: watch event: expected value → list at rv=\"11\"".to_owned()));
}

#[tokio::test(start_paused = true)]
async fn resync_fires_every_period() {
    let steps = vec![
        page("10", &[], None),
        Step::Watch(Ok(vec![Item::Sleep(Duration::from_secs(100))])),
    ];
    let cfg = ReflectorConfig {
        resync: Some(Duration::from_secs(10)),
        ..cfg()
    };
    let (log, _) = run_for(steps, cfg, 35).await;
    assert_eq!(log.iter().filter(|l| *l == "resync").count(), 3);
}

/// client-go resyncs only while watching (`watchWithResync`): not while a
/// relist fails and backs off, and the period starts anew with the next watch.
#[tokio::test(start_paused = true)]
async fn resync_runs_only_while_watching() {
    let expired = status(410, "Expired", "too old resource version: 10 (20)");
    let SourceError::Api(expired) = expired else {
        unreachable!()
    };
    let mut steps = vec![
        page("10", &[("a", "1")], None),
        Step::Watch(Ok(vec![
            Item::Sleep(Duration::from_millis(2500)),
            Item::Event(WatchEvent::Error(expired)),
        ])),
    ];
    steps.extend((0..3).map(|_| Step::List(Err(status(500, "InternalError", "etcd down")))));
    steps.push(page("21", &[("a", "1")], None));
    steps.push(Step::Watch(Ok(vec![Item::Sleep(Duration::from_secs(100))])));
    let cfg = ReflectorConfig {
        resync: Some(Duration::from_secs(1)),
        ..cfg()
    };
    let (log, _) = run_for(steps, cfg, 60).await;
    let ended = log
        .iter()
        .position(|l| l.starts_with("WatchEnded"))
        .unwrap();
    let relisted = log
        .iter()
        .rposition(|l| l.starts_with("replace 21"))
        .unwrap();
    let resyncs = |r: &[String]| r.iter().filter(|l| *l == "Resync").count();
    assert_eq!(
        resyncs(&log[..ended]),
        2,
        "while the first watch ran: {log:#?}"
    );
    assert_eq!(
        resyncs(&log[ended..relisted]),
        0,
        "none while relisting: {log:#?}"
    );
    // The 410's backoff, then one after each failed list.
    assert_eq!(backoffs(&log[ended..relisted]).len(), 4, "{log:#?}");
    assert!(resyncs(&log[relisted..]) > 10, "resumes: {log:#?}");
}

#[tokio::test(start_paused = true)]
async fn paged_rv0_list_keeps_paging_on_relist() {
    let steps = vec![
        page("10", &[("a", "1")], Some("t")),
        page("10", &[("b", "2")], None),
        Step::Watch(Err(status(500, "InternalError", "boom"))),
        page("20", &[("a", "1"), ("b", "2")], None),
    ];
    let (log, calls) = run_for(steps, cfg(), 5).await;
    assert!(
        log.iter()
            .any(|l| l.ends_with(" at rv=\"10\", 500 per page")),
        "{log:#?}"
    );
    assert_eq!(
        calls[3],
        Call::List(ListOptions {
            resource_version: "10".into(),
            limit: Some(500),
            ..ListOptions::default()
        })
    );
}

#[tokio::test(start_paused = true)]
async fn a_bad_request_on_the_first_list_is_returned_not_retried() {
    let src = Scripted::new(vec![Step::List(Err(status(
        400,
        "BadRequest",
        "unable to parse requirement",
    )))]);
    let rec = Arc::new(Recorder::default());
    let err = Reflector::new(src.clone(), rec.clone(), cfg()).run().await;
    assert!(
        err.to_string()
            .contains("400 BadRequest: unable to parse requirement"),
        "{err}"
    );
    assert_eq!(src.calls().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_bad_request_after_a_sync_is_retried_with_backoff() {
    let steps = vec![
        page("10", &[], None),
        Step::Watch(Err(status(403, "Forbidden", "no"))),
        Step::List(Err(status(403, "Forbidden", "no"))),
        page("11", &[], None),
    ];
    let (log, _) = run_for(steps, cfg(), 20).await;
    assert_eq!(backoffs(&log).len(), 2, "{log:#?}");
    assert!(log.contains(&"Listed rv=11 items=0 pages=1 fallback=false".to_owned()));
}

fn bookmark(rv: &str, end: bool) -> Item {
    Item::Event(WatchEvent::Bookmark {
        resource_version: rv.into(),
        initial_events_end: end,
    })
}

#[tokio::test(start_paused = true)]
async fn watch_list_collects_until_the_end_bookmark_then_replaces_and_keeps_the_watch() {
    let steps = vec![Step::Watch(Ok(vec![
        Item::Event(WatchEvent::Added(obj("a", "5"))),
        Item::Event(WatchEvent::Added(obj("b", "7"))),
        Item::Event(WatchEvent::Modified(obj("a", "8"))),
        bookmark("9", false),
        bookmark("10", true),
        Item::Sleep(Duration::from_secs(2)),
        Item::Event(WatchEvent::Deleted(obj("b", "11"))),
    ]))];
    let cfg = ReflectorConfig {
        watch_list: WatchListMode::Auto,
        ..cfg()
    };
    let (log, calls) = run_for(steps, cfg, 5).await;
    assert_eq!(
        log,
        vec![
            "watch-list pods at rv=\"\"",
            "Listed rv=10 items=2 pages=1 fallback=false",
            "replace 10 [ns/a,ns/b]",
            "Watch rv=10",
            "delete ns/b 11",
            "WatchEnded events=1 error=false closed by the server",
            "Watch rv=11",
        ]
    );
    match &calls[0] {
        Call::Watch(w) => {
            assert!(w.send_initial_events && w.allow_bookmarks && w.resource_version.is_empty())
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn watch_list_rejected_falls_back_to_list_and_auto_remembers() {
    let rejected = || status(422, "Invalid", "sendInitialEvents is forbidden");
    let steps = vec![
        Step::Watch(Err(rejected())),
        page("10", &[("a", "5")], None),
        Step::Watch(Ok(vec![Item::Event(WatchEvent::Error(ApiStatus {
            code: 410,
            reason: "Expired".into(),
            message: "too old".into(),
            ..ApiStatus::default()
        }))])),
        page("12", &[("a", "5")], None),
    ];
    let cfg = ReflectorConfig {
        watch_list: WatchListMode::Auto,
        ..cfg()
    };
    let (log, calls) = run_for(steps, cfg, 5).await;
    assert_eq!(
        log[1],
        "Fallback 422 Invalid: sendInitialEvents is forbidden"
    );
    assert_eq!(log[2], "list pods at rv=\"0\", 500 per page");
    assert!(
        matches!(&calls[3], Call::List(l) if l.resource_version == "10"),
        "{calls:?}"
    );
}

/// After a sync, the resource type goes away (its CRD deleted): the
/// streaming list's 404 makes `auto` fall back to LIST for good, said once, and the LIST's
/// 404 is called what it is.
#[tokio::test(start_paused = true)]
async fn a_resource_type_gone_falls_back_to_list_for_good_and_is_named() {
    let gone = || status(404, "", "404 page not found");
    let steps = vec![
        Step::Watch(Ok(vec![
            bookmark("10", true),
            Item::Sleep(Duration::from_secs(2)),
        ])),
        Step::Watch(Err(gone())),
        Step::Watch(Err(gone())),
        Step::List(Err(gone())),
        Step::List(Err(gone())),
        Step::List(Err(gone())),
    ];
    let cfg = ReflectorConfig {
        watch_list: WatchListMode::Auto,
        ..cfg()
    };
    let (log, calls) = run_for(steps, cfg, 60).await;
    let streaming: Vec<bool> = calls
        .iter()
        .map(|c| matches!(c, Call::Watch(w) if w.send_initial_events))
        .collect();
    assert_eq!(
        streaming,
        // The last LIST waits: the script has run out.
        [true, false, true, false, false, false, false],
        "{calls:?}"
    );
    let fallbacks = log.iter().filter(|l| l.starts_with("Fallback")).count();
    assert_eq!(fallbacks, 1, "{log:#?}");
    let not_served = backoffs(&log)
        .iter()
        .filter(|b| b.contains("the server does not serve this resource type"))
        .count();
    assert_eq!(not_served, 3, "{log:#?}");
}

#[tokio::test(start_paused = true)]
async fn watch_list_expired_retries_at_empty_rv() {
    let steps = vec![
        Step::Watch(Ok(vec![
            Item::Event(WatchEvent::Added(obj("a", "5"))),
            bookmark("6", true),
            Item::Event(WatchEvent::Error(ApiStatus {
                code: 410,
                reason: "Expired".into(),
                message: "too old".into(),
                ..ApiStatus::default()
            })),
        ])),
        Step::Watch(Ok(vec![Item::Event(WatchEvent::Error(ApiStatus {
            code: 410,
            reason: "Expired".into(),
            message: "too old resource version: 6 (20)".into(),
            ..ApiStatus::default()
        }))])),
        Step::Watch(Ok(vec![
            bookmark("21", true),
            Item::Sleep(Duration::from_secs(60)),
        ])),
    ];
    let cfg = ReflectorConfig {
        watch_list: WatchListMode::On,
        ..cfg()
    };
    let (log, calls) = run_for(steps, cfg, 10).await;
    let rvs: Vec<String> = calls
        .iter()
        .map(|c| match c {
            Call::Watch(w) => w.resource_version.clone(),
            Call::List(_) => "LIST".into(),
            Call::WatchStalled => "STALLED".into(),
        })
        .collect();
    assert_eq!(rvs, ["", "6", ""]);
    assert!(log.contains(&"replace 21 []".to_owned()), "{log:#?}");
    assert!(
        log.contains(
            &"relist pods: 410 Expired: too old resource version: 6 (20) → watch-list at rv=\"\""
                .to_owned()
        ),
        "{log:#?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_connection_cut_mid_watch_rewatches_without_relist() {
    let steps = vec![
        page("10", &[], None),
        Step::Watch(Ok(vec![
            Item::Event(WatchEvent::Added(obj("a", "11"))),
            Item::Fail(SourceError::Transport(
                "error reading a body from connection".into(),
            )),
        ])),
        Step::Watch(Ok(vec![Item::Sleep(Duration::from_secs(100))])),
    ];
    let (log, _) = run_for(steps, cfg(), 5).await;
    assert_eq!(
        log[4..],
        [
            "add ns/a 11",
            "WatchEnded events=1 error=false connection lost: error reading a body from connection",
            "Watch rv=11",
        ]
    );
}

/// client-go `watch`: a watch that ends at its timeout without an event or a bookmark
/// (kube-apiserver may send none on a quiet resource) is watched again from the same RV;
/// only a watch shorter than a second is an error. No relist, no backoff.
#[tokio::test(start_paused = true)]
async fn a_watch_silent_until_its_timeout_rewatches_from_the_same_rv_without_relist() {
    let cfg = ReflectorConfig {
        min_watch_timeout_secs: 10,
        ..cfg()
    };
    let silent = || Step::Watch(Ok(vec![Item::Sleep(Duration::from_secs(15))]));
    let steps = vec![
        page("500", &[("a", "500")], None),
        silent(),
        silent(),
        silent(),
    ];
    let (log, calls) = run_for(steps, cfg, 50).await;
    let watch_rvs: Vec<&str> = calls
        .iter()
        .map(|c| match c {
            Call::List(_) => "LIST",
            Call::Watch(w) => w.resource_version.as_str(),
            Call::WatchStalled => "STALLED",
        })
        .collect();
    assert_eq!(watch_rvs, ["LIST", "500", "500", "500", "500"], "{log:#?}");
    assert_eq!(
        log.iter()
            .filter(|l| l.starts_with("WatchEnded"))
            .collect::<Vec<_>>(),
        ["WatchEnded events=0 error=false closed by the server"; 3],
    );
    assert!(backoffs(&log).is_empty(), "{log:#?}");
    assert_eq!(
        log.iter().filter(|l| l.starts_with("replace")).count(),
        1,
        "{log:#?}"
    );
}

#[tokio::test(start_paused = true)]
async fn watch_list_broken_by_a_fault_is_tried_again_on_the_next_relist() {
    let steps = vec![
        Step::Watch(Ok(vec![Item::Fail(SourceError::Decode("bad line".into()))])),
        page("10", &[], None),
        Step::Watch(Err(status(500, "InternalError", "boom"))),
        Step::Watch(Ok(vec![
            bookmark("12", true),
            Item::Sleep(Duration::from_secs(60)),
        ])),
    ];
    let cfg = ReflectorConfig {
        watch_list: WatchListMode::Auto,
        ..cfg()
    };
    let (log, calls) = run_for(steps, cfg, 10).await;
    assert!(
        log[1].starts_with("Fallback malformed response: bad line"),
        "{log:#?}"
    );
    assert!(
        matches!(&calls[3], Call::Watch(w) if w.send_initial_events && w.resource_version == "10"),
        "{calls:?}"
    );
    assert!(log.contains(&"replace 12 []".to_owned()), "{log:#?}");
}

#[tokio::test(start_paused = true)]
async fn progress_counts_pages_and_items_of_the_list_under_way() {
    let src = Scripted::new(vec![
        page("20", &[("a", "1"), ("b", "2")], Some("t1")),
        page("20", &[("c", "3")], None),
    ]);
    let rec = Arc::new(Recorder::default());
    let r = Reflector::new(
        src,
        rec,
        ReflectorConfig {
            page_size: 2,
            page_size_explicit: true,
            ..cfg()
        },
    );
    let progress = r.progress();
    let task = tokio::spawn(async move {
        r.run().await;
    });
    tokio::time::sleep(Duration::from_secs(1)).await;
    task.abort();
    use std::sync::atomic::Ordering::Relaxed;
    assert_eq!(
        (progress.pages.load(Relaxed), progress.items.load(Relaxed)),
        (2, 3)
    );
}

/// `--stall-after` reports a watch that delivers nothing once per silence, and
/// without `--restart-stalled` keeps waiting on it (client-go's behaviour).
#[tokio::test(start_paused = true)]
async fn a_silent_watch_is_reported_stalled_once_and_kept() {
    let steps = vec![
        page("10", &[("a", "5")], None),
        Step::Watch(Ok(vec![
            Item::Sleep(Duration::from_secs(2)),
            Item::Event(WatchEvent::Added(obj("b", "11"))),
            Item::Sleep(Duration::from_secs(20)),
            Item::Event(WatchEvent::Added(obj("c", "12"))),
            Item::Sleep(Duration::from_secs(3)),
        ])),
    ];
    let cfg = ReflectorConfig {
        stall_after: StallAfter::After(Duration::from_secs(5)),
        ..cfg()
    };
    let (log, _) = run_for(steps, cfg, 28).await;
    assert_eq!(
        log[3..],
        [
            "Watch rv=10",
            "add ns/b 11",
            "Stalled 5s age=7s rv=11 restart=false",
            "add ns/c 12",
            "WatchEnded events=2 error=false closed by the server",
            "Watch rv=12",
        ]
    );
}

/// With `--restart-stalled`, the stalled watch ends (reason `stalled`, not an error) and a
/// new one starts from its last RV; `auto` waits three bookmark intervals.
#[tokio::test(start_paused = true)]
async fn a_stalled_watch_is_restarted_from_its_last_rv_after_three_bookmark_intervals() {
    let steps = vec![
        page("10", &[("a", "5")], None),
        Step::Watch(Ok(vec![
            Item::Sleep(Duration::from_secs(20)),
            bookmark("11", false),
            Item::Sleep(Duration::from_secs(20)),
            bookmark("12", false),
            Item::Sleep(Duration::from_secs(120)),
        ])),
        Step::Watch(Ok(vec![
            Item::Event(WatchEvent::Added(obj("b", "13"))),
            Item::Sleep(Duration::from_secs(120)),
        ])),
    ];
    let cfg = ReflectorConfig {
        stall_after: StallAfter::Auto,
        restart_stalled: true,
        ..cfg()
    };
    let (log, calls) = run_for(steps, cfg, 110).await;
    assert_eq!(
        log[3..],
        [
            "Watch rv=10",
            "Bookmark 11",
            "Bookmark 12",
            "Stalled 60s age=100s rv=12 restart=true",
            "WatchEnded events=0 bookmarks=2 error=false stalled",
            "Watch rv=12",
            "add ns/b 13",
        ]
    );
    // The source is told before the new watch, so that it opens it on
    // another connection.
    let kinds: Vec<&str> = calls
        .iter()
        .map(|c| match c {
            Call::List(_) => "list",
            Call::Watch(_) => "watch",
            Call::WatchStalled => "stalled",
        })
        .collect();
    assert_eq!(kinds, ["list", "watch", "stalled", "watch"]);
}

/// kube-apiserver sends a bookmark every minute and one more 2 s before the watch's
/// deadline (cache_watcher.go `nextBookmarkTime`), which may come a second after a periodic
/// one. `auto` learns the period from the periodic ones: the closest pair (1.15 s) would
/// make three of it 3.45 s and restart every healthy watch for ever.
#[tokio::test(start_paused = true)]
async fn auto_learns_the_bookmark_period_not_the_pair_before_a_deadline() {
    let steps = vec![
        page("10", &[("a", "5")], None),
        // Every minute until its deadline (at least 300 s away), then the last bookmark.
        Step::Watch(Ok(vec![
            Item::BeforeDeadline(Duration::from_secs(240)),
            bookmark("11", false),
            Item::BeforeDeadline(Duration::from_secs(180)),
            bookmark("12", false),
            Item::BeforeDeadline(Duration::from_secs(120)),
            bookmark("13", false),
            Item::BeforeDeadline(Duration::from_secs(60)),
            bookmark("14", false),
            Item::BeforeDeadline(Duration::from_millis(3150)),
            bookmark("15", false),
            Item::BeforeDeadline(Duration::from_secs(2)),
            bookmark("16", false),
            Item::BeforeDeadline(Duration::ZERO),
        ])),
        Step::Watch(Ok(vec![
            Item::Sleep(Duration::from_secs(60)),
            bookmark("17", false),
            Item::Sleep(Duration::from_secs(60)),
            bookmark("18", false),
            Item::Sleep(Duration::from_secs(60)),
            bookmark("19", false),
            Item::Sleep(Duration::from_secs(60)),
        ])),
    ];
    let cfg = ReflectorConfig {
        stall_after: StallAfter::Auto,
        restart_stalled: true,
        ..cfg()
    };
    // The first watch's timeout is at most 2 × 300 s; the second watch lasts 240 s.
    let (log, _) = run_for(steps, cfg, 600 + 250).await;
    assert!(log.iter().any(|l| l == "Bookmark 19"), "{log:#?}");
    assert!(!log.iter().any(|l| l.starts_with("Stalled")), "{log:#?}");
}

/// Bookmarks that come faster than any kube-apiserver sends them teach `auto` no less
/// than the floor: 10 s, so three of it before a stall.
#[tokio::test(start_paused = true)]
async fn auto_learns_no_interval_below_the_floor() {
    let steps = vec![
        page("10", &[("a", "5")], None),
        Step::Watch(Ok(vec![
            Item::Sleep(Duration::from_secs(2)),
            bookmark("11", false),
            Item::Sleep(Duration::from_secs(2)),
            bookmark("12", false),
            Item::Sleep(Duration::from_secs(25)),
            Item::Event(WatchEvent::Added(obj("b", "13"))),
            Item::Sleep(Duration::from_secs(40)),
        ])),
    ];
    let cfg = ReflectorConfig {
        stall_after: StallAfter::Auto,
        ..cfg()
    };
    let (log, _) = run_for(steps, cfg, 65).await;
    assert_eq!(
        log[3..],
        [
            "Watch rv=10",
            "Bookmark 11",
            "Bookmark 12",
            "add ns/b 13",
            "Stalled 30s age=59s rv=13 restart=false",
        ]
    );
}

/// A streaming list whose initial events came but whose end bookmark does not is said
/// once, after `end_bookmark_wait`, while the reflector goes on waiting as client-go does
/// (kubernetes/kubernetes#140890): no Listed, no second line.
#[tokio::test(start_paused = true)]
async fn a_streaming_list_without_its_end_bookmark_is_said_once_and_waited_for() {
    let steps = vec![Step::Watch(Ok(vec![
        Item::Event(WatchEvent::Added(obj("a", "5"))),
        Item::Event(WatchEvent::Added(obj("b", "7"))),
        bookmark("9", false),
        Item::Sleep(Duration::from_secs(3600)),
    ]))];
    let mut cfg = ReflectorConfig {
        watch_list: WatchListMode::On,
        ..cfg()
    };
    cfg.clocks.end_bookmark_wait = Duration::from_secs(10);
    let (log, calls) = run_for(steps, cfg, 60).await;
    assert_eq!(
        log,
        ["watch-list pods at rv=\"\"", "Protocol no-end-bookmark"],
        "{log:#?}"
    );
    assert_eq!(calls.len(), 1);
}

/// Watches that close cleanly at once, again and again, are said once at the third in a
/// row; one that delivers something starts the count again.
#[tokio::test(start_paused = true)]
async fn watches_closing_cleanly_at_once_are_said_at_the_third_in_a_row() {
    let mut steps = vec![page("10", &[], None)];
    for _ in 0..5 {
        steps.push(Step::Watch(Ok(vec![])));
        steps.push(page("10", &[], None));
    }
    let (log, _) = run_for(steps, cfg(), 120).await;
    let said: Vec<usize> = log
        .iter()
        .enumerate()
        .filter(|(_, l)| l.starts_with("Protocol"))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(said.len(), 1, "{log:#?}");
    let ends_before = log[..said[0]]
        .iter()
        .filter(|l| l.starts_with("WatchEnded events=0 error=true very short watch"))
        .count();
    assert_eq!(ends_before, 2, "said as the third ends: {log:#?}");
    assert_eq!(log[said[0]], "Protocol clean-close");
}

/// A 403 on watch after a list that worked says which verb is missing, once; the
/// reflector backs off and relists as before.
#[tokio::test(start_paused = true)]
async fn a_forbidden_watch_after_a_list_is_said_once() {
    let forbidden = || {
        status(
            403,
            "Forbidden",
            "pods is forbidden: User \"u\" cannot watch resource \"pods\"",
        )
    };
    let steps = vec![
        page("10", &[], None),
        Step::Watch(Err(forbidden())),
        page("11", &[], None),
        Step::Watch(Err(forbidden())),
        page("12", &[], None),
    ];
    let (log, _) = run_for(steps, cfg(), 60).await;
    let said: Vec<&String> = log.iter().filter(|l| l.starts_with("Protocol")).collect();
    assert_eq!(said, ["Protocol watch-forbidden"], "{log:#?}");
    assert_eq!(backoffs(&log).len(), 2, "{log:#?}");
}
