//! `--metrics ADDR`: the endpoint scraped while kwatch runs against `kwatch sim`,
//! read back with a Prometheus text parser (the `prometheus-parse` crate, every line held to
//! OpenMetrics' shape first); a bad or busy address is one line and exit 2.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::{json, Value};

use crate::util::kwatch::{
    create_configmap, kubectl_f, of_type, watching_a_new_sim,
    watching_configmaps_with_the_short_watch_rule, Running,
};
use crate::util::{eventually, SimProcess, LIMIT};

/// The address kwatch said it serves metrics on (stderr), once it has said it.
pub(crate) fn metrics_addr(kw: &Running) -> String {
    let err = kw.stderr();
    let url = err
        .lines()
        .find_map(|l| l.strip_prefix("kwatch: metrics on http://"))
        .unwrap_or_else(|| panic!("no metrics address on stderr:\n{err}"));
    url.trim_end_matches("/metrics").to_owned()
}

/// `GET /metrics`: the status line, the content type and the body.
pub(crate) fn scrape(addr: &str) -> (String, String, String) {
    request(addr, "GET")
}

/// `METHOD /metrics`: the status line, the content type and the body.
fn request(addr: &str, method: &str) -> (String, String, String) {
    let mut s = TcpStream::connect(addr).expect("connect to the metrics endpoint");
    s.set_read_timeout(Some(LIMIT)).expect("timeout");
    write!(
        s,
        "{method} /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let mut answer = String::new();
    s.read_to_string(&mut answer).expect("read");
    let (head, body) = answer.split_once("\r\n\r\n").expect("a head and a body");
    let status = head.lines().next().unwrap_or_default().to_owned();
    let kind = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-type: ")
                .map(str::to_owned)
        })
        .unwrap_or_default();
    (status, kind, body.to_owned())
}

/// The exposition read with `prometheus-parse`: one `{name, labels, value}` per sample line
/// (a histogram's buckets as `NAME_bucket` with `le`). That parser passes over lines it
/// cannot read, so every line is first held to OpenMetrics' shape: a `# HELP`, `# TYPE` or
/// `# UNIT` line, a sample with a number, and `# EOF` last.
pub(crate) fn parsed(body: &str) -> Vec<Value> {
    use prometheus_parse::{LineInfo, Scrape, Value as Sampled};
    let lines: Vec<&str> = body.lines().collect();
    assert_eq!(
        lines.last(),
        Some(&"# EOF"),
        "no `# EOF` at the end:\n{body}"
    );
    for line in &lines[..lines.len() - 1] {
        let meta = ["# HELP ", "# TYPE ", "# UNIT "]
            .iter()
            .any(|p| line.starts_with(p));
        let sample = match LineInfo::parse(line) {
            LineInfo::Sample { value, .. } => {
                value.parse::<f64>().is_ok() || ["+Inf", "-Inf", "NaN"].contains(&value)
            }
            _ => false,
        };
        assert!(meta || sample, "not an OpenMetrics line: {line:?}\n{body}");
    }
    let scrape = Scrape::parse(lines.iter().map(|l| Ok(l.to_string()))).expect("parse");
    let mut out = Vec::new();
    for s in scrape.samples {
        let labels: serde_json::Map<String, Value> = s
            .labels
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        let mut push = |name: String, labels: serde_json::Map<String, Value>, value: f64| {
            out.push(json!({"name": name, "labels": labels, "value": value}));
        };
        match s.value {
            Sampled::Counter(v) | Sampled::Gauge(v) | Sampled::Untyped(v) => {
                push(s.metric, labels, v)
            }
            Sampled::Histogram(buckets) => {
                for b in buckets {
                    let mut with_le = labels.clone();
                    with_le.insert("le".into(), json!(b.less_than));
                    push(format!("{}_bucket", s.metric), with_le, b.count);
                }
            }
            Sampled::Summary(quantiles) => {
                for q in quantiles {
                    let mut with_q = labels.clone();
                    with_q.insert("quantile".into(), json!(q.quantile));
                    push(s.metric.clone(), with_q, q.count);
                }
            }
        }
    }
    out
}

/// The value of the sample `name` whose labels include `labels`.
pub(crate) fn sample(samples: &[Value], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    samples
        .iter()
        .find(|s| s["name"] == name && labels.iter().all(|(k, v)| s["labels"][k] == *v))
        .and_then(|s| s["value"].as_f64())
}

#[test]
fn scraped_during_a_forced_410_shows_the_relist_list_duration_and_store_size() {
    let (sim, mut kw) = watching_a_new_sim(&[], &["--metrics", "127.0.0.1:0"]);
    let addr = metrics_addr(&kw);
    // A change the watch does not see is compacted away: the new watch gets 410 and the
    // informer relists (as tests/faults.rs's expired_list_falls_back_to_a_consistent_read).
    sim.forced_410(|sim| create_configmap(sim, "default", "unseen", json!({})));
    create_configmap(&sim, "default", "after-410", json!({"k": "v"}));
    kw.wait_for(LIMIT, "the relist", |v| {
        v.iter().any(|r| r["key"] == "default/after-410")
    });
    // The relist's objects may print before its watch opens: a change made now arrives
    // through that watch, so the second watch has been counted once it is printed.
    create_configmap(&sim, "default", "after-relist", json!({}));
    kw.wait_for(LIMIT, "a change through the watch after the relist", |v| {
        v.iter().any(|r| r["key"] == "default/after-relist")
    });

    let (status, kind, body) = scrape(&addr);
    assert_eq!(status, "HTTP/1.1 200 OK", "{body}");
    assert!(kind.starts_with("application/openmetrics-text"), "{kind}");
    assert!(!body.is_empty());
    let samples = parsed(&body);
    assert!(!samples.is_empty(), "{body}");
    let cm = [("resource", "configmaps")];
    let relists = sample(
        &samples,
        "reflector_lists_total",
        &[("resource", "configmaps"), ("reason", "expired")],
    );
    assert_eq!(relists, Some(1.0), "{body}");
    assert_eq!(
        sample(
            &samples,
            "reflector_lists_total",
            &[("resource", "configmaps"), ("reason", "initial")]
        ),
        Some(1.0),
        "{body}"
    );
    assert!(
        sample(&samples, "reflector_expired_total", &cm) >= Some(1.0),
        "{body}"
    );
    // Both lists timed, the relist included.
    assert_eq!(
        sample(&samples, "reflector_list_duration_seconds_count", &cm),
        Some(2.0),
        "{body}"
    );
    assert!(sample(&samples, "reflector_list_duration_seconds_sum", &cm) > Some(0.0));
    // The store holds what the server has: the relist's objects, bytes of their JSON.
    let listed = sim.kubectl_ok(["get", "configmaps", "-n", "default", "-o", "name"]);
    let objects = listed.lines().count() as f64;
    assert!(objects >= 2.0, "{listed}");
    assert_eq!(
        sample(&samples, "informer_store_objects", &cm),
        Some(objects),
        "{body}"
    );
    assert!(
        sample(&samples, "informer_store_bytes", &cm) > Some(objects * 100.0),
        "{body}"
    );
    assert!(
        sample(&samples, "reflector_watches_total", &cm) >= Some(2.0),
        "{body}"
    );
    // Both lists came in protobuf (`--wire auto`, a built-in type), their
    // bytes counted under that encoding; nothing fell back to JSON.
    assert!(
        sample(
            &samples,
            "reflector_list_wire_bytes_total",
            &[("resource", "configmaps"), ("encoding", "protobuf")]
        ) > Some(0.0),
        "{body}"
    );
    assert_eq!(
        sample(
            &samples,
            "reflector_list_wire_bytes_total",
            &[("resource", "configmaps"), ("encoding", "json")]
        ),
        None,
        "{body}"
    );
    assert_eq!(
        sample(&samples, "reflector_wire_fallbacks_total", &cm),
        Some(0.0),
        "{body}"
    );
    // Labels name the resource and context only: no object's name or content.
    assert!(!body.contains("after-410"), "{body}");
    kw.terminate(Duration::from_secs(10));
}

#[test]
fn a_bad_or_busy_metrics_address_is_one_line_and_exit_2() {
    let sim = SimProcess::start(&["--objects", "1"]);
    let out = sim
        .kwatch([
            "configmaps",
            "--metrics",
            "localhost-9464",
            "--timeout",
            "5s",
        ])
        .exits(2);
    assert!(out.stdout.is_empty(), "{:?}", out.stdout);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(out.stderr.contains("--metrics"), "{}", out.stderr);
    assert!(out.stderr.contains("127.0.0.1:9464"), "{}", out.stderr);

    let busy = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = busy.local_addr().expect("addr").to_string();
    let out = sim
        .kwatch(["configmaps", "--metrics", &addr, "--timeout", "5s"])
        .exits(2);
    assert!(out.stdout.is_empty(), "{:?}", out.stdout);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(out.stderr.contains(&addr), "{}", out.stderr);
    assert!(out.stderr.contains("cannot listen"), "{}", out.stderr);
}

/// Five pods written with `kubectl apply` (the sim records managedFields and kubectl the
/// last-applied annotation), labelled `app=applied`.
fn applied_pods() -> SimProcess {
    let sim = SimProcess::start(&["--objects", "1"]);
    for i in 0..5 {
        let pod = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("p{i}"), "namespace": "default", "labels": {"app": "applied"}},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}});
        kubectl_f(&sim, "apply", &pod);
    }
    sim
}

/// The last `CacheStats` record of `kwatch pods -l app=applied … EXTRA`, and the run.
fn cache_stats(sim: &SimProcess, extra: &str) -> (Value, crate::util::kwatch::Finished) {
    let args =
        format!("pods -l app=applied -o json --cache-stats=500ms {extra} --stats --timeout 2s");
    let out = sim.kwatch(args).success();
    let recs = out.json();
    let stats = of_type(&recs, "CacheStats");
    let last = stats.last().copied().cloned();
    let last = last.unwrap_or_else(|| panic!("no CacheStats record: {recs:#?}"));
    (last, out)
}

#[test]
fn cache_stats_show_managed_fields_as_a_large_share_and_the_transform_cuts_them() {
    let sim = applied_pods();
    let (before, out) = cache_stats(&sim, "");
    assert_eq!(before["resource"], "pods");
    assert_eq!(before["objects"], 5, "{before}");
    let bytes = before["bytes"].as_u64().expect("bytes");
    let managed = before["fields"]["metadata.managedFields"]
        .as_u64()
        .unwrap_or_else(|| panic!("no managedFields: {before}"));
    assert!(
        before["fields"]["metadata.annotations[kubectl.kubernetes.io/last-applied-configuration]"]
            .as_u64()
            > Some(0),
        "{before}"
    );
    // Of these small pods, managedFields are the heaviest part.
    assert!(managed * 4 > bytes, "{managed} of {bytes}: {before}");
    // The summary at exit says the same.
    assert!(
        out.stderr.contains("cache pods: 5 objects,")
            && out.stderr.contains("metadata.managedFields"),
        "{}",
        out.stderr
    );

    let (after, out) = cache_stats(&sim, "--transform strip-managed-fields");
    assert_eq!(after["objects"], 5, "{after}");
    assert!(
        after["fields"].get("metadata.managedFields").is_none(),
        "{after}"
    );
    let cut = after["bytes"].as_u64().expect("bytes");
    assert!(cut + managed <= bytes, "{cut} + {managed} > {bytes}");
    // The printed objects are the cache's.
    let deltas: Vec<Value> = out
        .json()
        .into_iter()
        .filter(|r| r["key"].is_string())
        .collect();
    assert_eq!(deltas.len(), 5, "{deltas:#?}");

    let out = sim
        .kwatch(["pods", "--transform", "strip-everything", "--timeout", "2s"])
        .exits(2);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("strip-managed-fields"),
        "{}",
        out.stderr
    );
}

/// The `CacheStats` records of a run, checked to be there.
fn cache_records(recs: &[Value]) -> Vec<Value> {
    assert!(!recs.is_empty(), "no output");
    of_type(recs, "CacheStats").into_iter().cloned().collect()
}

#[test]
fn the_relist_peak_is_the_store_plus_the_list_in_flight_and_ctrl_c_reports_it() {
    let sim = applied_pods();
    // A period longer than the run: the one CacheStats record is the end's.
    let mut kw = sim.start_kwatch([
        "pods",
        "-l",
        "app=applied",
        "-o",
        "json",
        "--cache-stats=1h",
        "--stats",
    ]);
    kw.wait_for(LIMIT, "the watch", |v| !of_type(v, "Watch").is_empty());
    // The next watch gets 410: the reflector relists while its store holds the five pods.
    sim.control("POST", "/_sim/fail", json!({"code": 410, "verb": "watch"}));
    sim.drop_watches();
    kw.wait_for(LIMIT, "the relist", |v| of_type(v, "Listed").len() >= 2);
    let out = kw.interrupt(LIMIT);
    assert_eq!(out.status.code(), Some(130), "{}", out.stderr);
    let recs = out.json();
    let stats = cache_records(&recs);
    assert_eq!(stats.len(), 1, "{stats:#?}");
    let last = recs.last().expect("a record");
    assert_eq!(
        last["type"], "CacheStats",
        "the end's record comes last: {last}"
    );
    assert_eq!(last["objects"], 5, "{last}");
    let bytes = last["bytes"].as_u64().expect("bytes");
    // At the relist: the store's five pods and the list's five, unchanged.
    assert_eq!(last["relistPeakBytes"].as_u64(), Some(2 * bytes), "{last}");
    // The --stats line says it too.
    let said = format!(
        "cache pods: 5 objects, {bytes} bytes (relist peak {})",
        2 * bytes
    );
    assert!(out.stderr.contains(&said), "{said}:\n{}", out.stderr);
}

#[test]
fn a_cache_stats_record_ends_each_normal_exit() {
    let sim = applied_pods();
    for end in ["--max-events 2", "--until created", "--timeout 2s"] {
        let out = sim
            .kwatch(format!(
                "pods -l app=applied -o json --cache-stats=1h {end}"
            ))
            .success();
        let recs = out.json();
        let stats = cache_records(&recs);
        assert_eq!(stats.len(), 1, "{end:?}: {recs:#?}");
        let last = recs.last().expect("a record");
        assert_eq!(last["type"], "CacheStats", "{end:?}: {recs:#?}");
        assert!(last["objects"].as_u64() >= Some(1), "{end:?}: {last}");
        assert!(last["bytes"].as_u64() > Some(0), "{end:?}: {last}");
        // The initial list of the five pods, as received.
        assert!(
            last["relistPeakBytes"].as_u64() >= last["bytes"].as_u64(),
            "{end:?}: {last}"
        );
    }
}

/// The metric names of docs/metrics.md's table, as registered (`X` of a counter `X_total`).
fn documented_metrics() -> Vec<String> {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/metrics.md"))
        .expect("docs/metrics.md");
    let names: Vec<String> = doc
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split_once('`'))
        .map(|(name, _)| name.trim_end_matches("_total").to_owned())
        .collect();
    assert!(names.len() >= 20, "{names:?}");
    names
}

#[test]
fn a_short_watch_is_counted_the_queue_depth_is_read_and_every_documented_metric_is_served() {
    let sim = SimProcess::start(&[]);
    let mut kw = watching_configmaps_with_the_short_watch_rule(&sim, &["--metrics", "127.0.0.1:0"]);
    let addr = metrics_addr(&kw);
    // The next watch ends at once with no event: client-go's "very short watch".
    sim.control("POST", "/_sim/short-watches", json!({"count": 1}));
    sim.drop_watches();
    kw.wait_for(LIMIT, "the short watch", |v| {
        of_type(v, "WatchEnded").iter().any(|r| {
            r["reason"]
                .as_str()
                .is_some_and(|s| s.starts_with("very short watch"))
        })
    });
    create_configmap(&sim, "default", "after-short", json!({}));
    kw.wait_for(LIMIT, "the next watch", |v| {
        v.iter().any(|r| r["key"] == "default/after-short")
    });

    let (status, _, body) = scrape(&addr);
    assert_eq!(status, "HTTP/1.1 200 OK", "{body}");
    assert!(!body.is_empty());
    let samples = parsed(&body);
    assert!(!samples.is_empty(), "{body}");
    let cm = [("resource", "configmaps")];
    assert_eq!(
        sample(&samples, "reflector_short_watches_total", &cm),
        Some(1.0),
        "{body}"
    );
    // Everything queued has been popped: the depth now is 0, the most ever at least 1.
    assert_eq!(
        sample(&samples, "informer_queue_depth", &cm),
        Some(0.0),
        "{body}"
    );
    assert!(
        sample(&samples, "informer_queue_max_depth", &cm) >= Some(1.0),
        "{body}"
    );
    // Documented as appearing with their first value (a retry, a bookmark), or with
    // `--probe`, `--freshness` or `--record URL` only (tests/record_db.rs scrapes those).
    let later = [
        "reflector_retries",
        "informer_last_bookmark_timestamp_seconds",
        "informer_probe_latency_seconds",
        "informer_store_lag_seconds",
        "informer_stale",
        "recorder_rows_written",
        "recorder_batches",
        "recorder_spilled_rows",
        "recorder_backlog_rows",
        "recorder_database_up",
    ];
    for name in documented_metrics() {
        if later.contains(&name.as_str()) {
            continue;
        }
        assert!(
            body.contains(&format!("# TYPE {name} ")),
            "{name} is documented but not served:\n{body}"
        );
    }
    kw.terminate(Duration::from_secs(10));
}

#[test]
fn strip_managed_fields_cuts_the_reported_bytes_by_their_share_and_the_rss_is_reported() {
    let sim = SimProcess::start(&["--objects", "1"]);
    // 1,000 pods of 60 labels each: the simulator's managedFields name every label again,
    // as kube-apiserver's fieldsV1 does, so they are near half of each pod.
    let mut labels = serde_json::Map::new();
    labels.insert("app".into(), json!("heavy"));
    for i in 0..60 {
        labels.insert(
            format!("example.com/a-rather-long-label-key-{i:03}"),
            json!("v"),
        );
    }
    let items: Vec<Value> = (0..1000)
        .map(|i| {
            json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": format!("h{i:04}"), "namespace": "default", "labels": labels},
                "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}})
        })
        .collect();
    // One kubectl call; client-side validation of a 1,000-item List is kubectl's slow path.
    let file = sim.dir().join("heavy-pods.json");
    let list = json!({"apiVersion": "v1", "kind": "List", "items": items});
    std::fs::write(&file, list.to_string()).expect("writing the manifest");
    let path = file.to_str().expect("utf-8 path");
    sim.kubectl_ok(["create", "-f", path, "--validate=false", "-o", "name"]);
    // The end's CacheStats record and the peak RSS once synced.
    let run = |extra: &[&str]| -> (Value, u64) {
        let mut args = vec!["pods", "-l", "app=heavy", "-o", "json", "--cache-stats=1h"];
        args.extend_from_slice(extra);
        let mut kw = sim.start_kwatch(&args[..]);
        kw.wait_for(LIMIT, "the sync", |v| !of_type(v, "Synced").is_empty());
        let rss = kw.peak_rss_kib().expect("VmHWM of kwatch");
        let out = kw.interrupt(LIMIT);
        let recs = out.json();
        let stats = cache_records(&recs);
        let last = stats.last().cloned().expect("the end's CacheStats");
        (last, rss)
    };
    let (before, rss_before) = run(&[]);
    let (after, rss_after) = run(&["--transform", "strip-managed-fields"]);
    assert_eq!(before["objects"], 1000, "{before}");
    assert_eq!(after["objects"], 1000, "{after}");
    let bytes = before["bytes"].as_u64().expect("bytes");
    let managed = before["fields"]["metadata.managedFields"]
        .as_u64()
        .unwrap_or_else(|| panic!("no managedFields: {before}"));
    assert!(managed * 3 > bytes, "{managed} of {bytes}: {before}");
    let cut = after["bytes"].as_u64().expect("bytes");
    assert!(cut + managed <= bytes, "{cut} + {managed} > {bytes}");
    eprintln!(
        "store bytes {bytes} -> {cut} (managedFields {managed}); peak RSS {rss_before} KiB -> {rss_after} KiB"
    );
}

/// client-go's store resourceVersion gauge after a relist is the list's resourceVersion
/// (its store's `Replace` sets it), not that of the last object the list happened to
/// hold.
#[test]
fn after_a_relist_the_store_resource_version_is_the_lists() {
    let (sim, mut kw) = watching_a_new_sim(&[], &["--metrics", "127.0.0.1:0"]);
    let addr = metrics_addr(&kw);
    for i in 0..3 {
        create_configmap(&sim, "default", &format!("z-{i}"), json!({}));
    }
    kw.wait_for(LIMIT, "the changes", |v| {
        v.iter().any(|r| r["key"] == "default/z-2")
    });
    sim.forced_410(|sim| create_configmap(sim, "default", "a-unseen", json!({})));
    let recs = kw.wait_for(LIMIT, "the relist", |v| {
        v.iter().any(|r| r["key"] == "default/a-unseen")
    });
    let listed = recs
        .iter()
        .rfind(|r| r["type"] == "Listed")
        .and_then(|r| r["resourceVersion"].as_str())
        .and_then(|rv| rv.parse::<f64>().ok())
        .expect("the relist's resourceVersion");
    let informer = [("name", "kwatch"), ("resource", "configmaps")];
    eventually(LIMIT, "the gauge at the list's resourceVersion", || {
        let (_, _, body) = scrape(&addr);
        let got = sample(&parsed(&body), "informer_store_resource_version", &informer);
        if got >= Some(listed) {
            Ok(())
        } else {
            Err(body)
        }
    });
}

/// Seconds since the Unix epoch, now.
fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs_f64()
}

/// client-go 0.36's informer metrics by their names, help and labels;
/// timestamps in place of `seconds_since` gauges; a retry's HTTP code under `code`; no
/// probe histogram without `--probe`; `HEAD /metrics`; `:PORT` on every interface.
#[test]
fn client_go_informer_metrics_timestamps_codes_and_head_are_served_on_every_interface() {
    let start = unix_now();
    let (sim, mut kw) = watching_a_new_sim(&[], &["--metrics", ":0"]);
    let (_, port) = metrics_addr(&kw)
        .rsplit_once(':')
        .map(|(h, p)| (h.to_owned(), p.to_owned()))
        .expect("a port");
    // Listened on every interface: reached over IPv4 loopback.
    let addr = format!("127.0.0.1:{port}");
    // The next watch is refused once with 429 and Retry-After: one retry.
    sim.fail_next(json!({"code": 429, "count": 1, "retryAfter": 1, "verb": "watch"}));
    sim.drop_watches();
    create_configmap(&sim, "default", "after-retry", json!({}));
    kw.wait_for(LIMIT, "the change after the retry", |v| {
        !of_type(v, "Retry").is_empty() && v.iter().any(|r| r["key"] == "default/after-retry")
    });
    let recs = kw.json();
    let rv = recs
        .iter()
        .rfind(|r| r["key"] == "default/after-retry")
        .and_then(|r| r["resourceVersion"].as_str())
        .expect("its resourceVersion")
        .to_owned();

    let informer = [
        ("name", "kwatch"),
        ("group", ""),
        ("version", "v1"),
        ("resource", "configmaps"),
    ];
    // A pop's processing is observed once its handler (the printer) has returned: the
    // change's record can be read before then.
    let (status, kind, body, samples) = eventually(
        LIMIT,
        "the initial list's pop and the change's in the processing latency",
        || {
            let (status, kind, body) = scrape(&addr);
            let samples = parsed(&body);
            let count = sample(
                &samples,
                "informer_processing_latency_seconds_count",
                &informer,
            );
            if count >= Some(2.0) {
                Ok((status, kind, body, samples))
            } else {
                Err(body)
            }
        },
    );
    assert_eq!(status, "HTTP/1.1 200 OK", "{body}");
    for (name, help, ty) in [
        (
            "informer_queued_items",
            "[ALPHA] Number of items currently queued in the FIFO.",
            "gauge",
        ),
        (
            "informer_processing_latency_seconds",
            "[ALPHA] Time taken to process events after popping from the queue.",
            "histogram",
        ),
        (
            "informer_store_resource_version",
            "[ALPHA] The 15 least significant digits of the resource version of the store.",
            "gauge",
        ),
    ] {
        assert!(
            body.contains(&format!("# HELP {name} {help}\n# TYPE {name} {ty}\n")),
            "{name}:\n{body}"
        );
    }
    assert_eq!(
        sample(&samples, "informer_queued_items", &informer),
        Some(0.0),
        "{body}"
    );
    assert_eq!(
        sample(&samples, "informer_store_resource_version", &informer),
        rv.parse::<f64>().ok(),
        "{body}"
    );
    // A point in time, not an age that is stale as soon as it is scraped.
    assert!(!body.contains("seconds_since"), "{body}");
    let last = sample(
        &samples,
        "informer_last_event_timestamp_seconds",
        &[("resource", "configmaps")],
    )
    .expect("the last event's time");
    assert!((start..=unix_now()).contains(&last), "{last}: {body}");
    assert_eq!(
        sample(
            &samples,
            "reflector_retries_total",
            &[("resource", "configmaps"), ("code", "429")]
        ),
        Some(1.0),
        "{body}"
    );
    assert!(!body.contains("type=\"429\""), "{body}");
    assert!(!body.contains("informer_probe_latency_seconds"), "{body}");

    let (status, head_kind, head_body) = request(&addr, "HEAD");
    assert_eq!(status, "HTTP/1.1 200 OK", "{head_body}");
    assert_eq!(head_kind, kind);
    assert_eq!(head_body, "");
    kw.terminate(Duration::from_secs(10));
}

/// `localhost:PORT` is resolved and listened on, as Go's net.Listen does.
#[test]
fn a_host_name_metrics_address_is_resolved() {
    let (_sim, kw) = watching_a_new_sim(&[], &["--metrics", "localhost:0"]);
    let addr = metrics_addr(&kw);
    assert!(addr.starts_with("127.0.0.1:"), "IPv4 first, as Go: {addr}");
    let (status, _, body) = scrape(&addr);
    assert_eq!(status, "HTTP/1.1 200 OK", "{body}");
    assert!(
        body.contains("# TYPE informer_queued_items gauge"),
        "{body}"
    );
    kw.terminate(Duration::from_secs(10));
}
