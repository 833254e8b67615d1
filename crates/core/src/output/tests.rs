//! Printers against an in-memory buffer.

use std::time::Duration;

use std::io;

use serde_json::Value;

use super::object::{object_json, object_json_rewritten, without_managed_fields};
use super::*;
use crate::cache::delta::{Delta, DeltaObject, DeltaType, Tombstone};
use crate::cache::handlers::HandlerCall;
use crate::cache::object::ObjectRef;
use crate::cache::reflector::ReflectorEvent;
use crate::cache::testutil::{object, Buf};
use crate::client::target::Resource;
use crate::context::ContextName;
use crate::informer::diff;
use crate::informer::record::{Body, Observation, Record};
use crate::informer::sink::Sink;

fn opts(format: Format) -> Options {
    Options {
        format,
        all_namespaces: true,
        ..Options::default()
    }
}

fn pod(name: &str, rv: &str) -> ObjectRef {
    object(&format!(
        r#"{{"metadata":{{"name":"{name}","namespace":"default","resourceVersion":"{rv}","creationTimestamp":"2026-11-21T10:00:00Z","managedFields":[{{"manager":"kubectl"}}]}},"spec":{{"nodeName":"n1"}}}}"#
    ))
}

/// A delta record whose previous version is unknown.
fn delta<'a>(key: &'a str, delta: &'a Delta, initial_list: bool) -> Body<'a> {
    Body::Delta {
        key,
        delta,
        initial_list,
        prev: None,
    }
}

/// The first `n` words of each line of `text`.
fn first_words(text: &str, n: usize) -> Vec<String> {
    text.lines()
        .map(|l| l.split_whitespace().take(n).collect::<Vec<_>>().join(" "))
        .collect()
}

fn at() -> jiff::Timestamp {
    "2026-11-21T10:05:30.25Z".parse().unwrap()
}

fn print_all(format: Format, recs: &[Body<'_>]) -> String {
    print_with(opts(format), recs)
}

fn print_with(o: Options, recs: &[Body<'_>]) -> String {
    let buf = Buf::default();
    // Data and diagnostics into one buffer, interleaved as a terminal shows them.
    feed(printer(o, buf.clone(), buf.clone()), None, recs);
    buf.text()
}

/// Prints `recs` for pods (with `context`) through `p`, then finishes it.
fn feed(mut p: Box<dyn Sink>, context: Option<&str>, recs: &[Body<'_>]) {
    let r = Resource::pods();
    let context = context.map(ContextName::from);
    for body in recs {
        p.record(&Record::new(&r, context.as_ref(), at(), *body))
            .unwrap();
    }
    p.finish().unwrap();
}

#[test]
fn json_lines_put_type_first_and_splice_the_object_without_managed_fields() {
    let added = Delta::new(DeltaType::Added, pod("web-1", "42"));
    let tomb = Delta {
        kind: DeltaType::Deleted,
        object: DeltaObject::Tombstone(Tombstone {
            key: "default/old".into(),
            obj: Some(pod("old", "7")),
        }),
    };
    let list = ReflectorEvent::list("0", 500, "initial", false);
    let out = print_all(
        Format::Json,
        &[
            Body::Event(&list),
            delta("default/web-1", &added, true),
            delta("default/old", &tomb, false),
            Body::Synced,
        ],
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        r#"{"type":"List","resource":"pods","time":"2026-11-21T10:05:30.250Z","resourceVersion":"0","limit":500,"reason":"initial","streaming":false}"#
    );
    assert_eq!(
        lines[1],
        r#"{"type":"Added","resource":"pods","key":"default/web-1","namespace":"default","name":"web-1","kind":"Pod","apiVersion":"v1","resourceVersion":"42","time":"2026-11-21T10:05:30.250Z","initialList":true,"object":{"metadata":{"name":"web-1","namespace":"default","resourceVersion":"42","creationTimestamp":"2026-11-21T10:00:00Z"},"spec":{"nodeName":"n1"}}}"#
    );
    let t: Value = serde_json::from_str(lines[2]).unwrap();
    assert_eq!(t["type"], "Deleted");
    assert_eq!(t["finalStateUnknown"], true);
    assert_eq!(t["resourceVersion"], "7");
    assert_eq!(
        lines[3],
        r#"{"type":"Synced","resource":"pods","time":"2026-11-21T10:05:30.250Z"}"#
    );
}

#[test]
fn yaml_is_a_multi_document_stream_of_the_same_records() {
    let d = Delta::new(DeltaType::Updated, pod("web-1", "43"));
    let out = print_all(Format::Yaml, &[delta("default/web-1", &d, false)]);
    assert!(
        out.starts_with("---\ntype: Updated\nresource: pods\nkey: default/web-1\n"),
        "{out}"
    );
    assert!(out.contains("  spec:\n    nodeName: n1\n"), "{out}");
    assert!(!out.contains("managedFields"));
}

#[test]
fn table_has_one_header_growing_columns_and_event_lines() {
    let a = Delta::new(DeltaType::Added, pod("a", "5"));
    let b = Delta::new(DeltaType::Replaced, pod("a-much-longer-name", "6"));
    let relist = ReflectorEvent::list(
        "350",
        0,
        "410 Expired: too old resource version: 300 (340)",
        false,
    );
    let out = print_all(
        Format::Table,
        &[
            delta("default/a", &a, true),
            Body::Synced,
            Body::Event(&relist),
            delta("default/a-much-longer-name", &b, false),
        ],
    );
    assert_eq!(
        out,
        "DELTA      NAMESPACE   NAME   RESOURCEVERSION   READY   STATUS    RESTARTS   AGE\n\
         Added      default     a      5                 0/0     Unknown   0          5m30s\n\
         ~ synced pods\n\
         ~ relist pods: 410 Expired: too old resource version: 300 (340) → list at rv=\"350\"\n\
         Replaced   default     a-much-longer-name   6                 0/0     Unknown   0          5m30s\n"
    );
}

/// `--metadata-only`: a pod's PartialObjectMetadata gets NAME, AGE and the label columns,
/// not the pod printer's (whose cells it could not fill).
#[test]
fn metadata_only_tables_show_age_and_labels() {
    let meta = object(
        r#"{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"web-1","namespace":"default","resourceVersion":"42","creationTimestamp":"2026-11-21T10:00:00Z","labels":{"app":"web","tier":"front"}}}"#,
    );
    let d = Delta::new(DeltaType::Added, meta);
    let o = Options {
        metadata_only: true,
        label_columns: vec!["app".into()],
        show_labels: true,
        ..opts(Format::Wide)
    };
    let out = print_with(o, &[delta("default/web-1", &d, false)]);
    assert_eq!(
        out,
        "DELTA      NAMESPACE   NAME    RESOURCEVERSION   AGE     APP   LABELS\n\
         Added      default     web-1   42                5m30s   web   app=web,tier=front\n"
    );
}

#[test]
fn table_escapes_control_characters_from_the_server() {
    let ev = ReflectorEvent::Backoff {
        delay: Duration::from_millis(800),
        cause: "boom\u{1b}[2J".into(),
    };
    // After the sync: `~` lines of the loading phase are held (see the next test).
    let out = print_all(Format::Table, &[Body::Synced, Body::Event(&ev)]);
    assert_eq!(out, "~ synced pods\n~ backoff pods 800ms: boom\\u{1b}[2J\n");
}

/// The failure rule: a run that fails before its first sync
/// prints one error line on stderr, so the loading phase's `~` lines are held with the
/// initial list and never shown without it.
#[test]
fn table_holds_loading_lines_until_the_initial_list_shows() {
    let list = ReflectorEvent::list("0", 500, "initial", false);
    let (out, diag) = print_split(opts(Format::Table), None, &[Body::Event(&list)]);
    assert_eq!((out.as_str(), diag.as_str()), ("", ""));
    let d = Delta::new(DeltaType::Replaced, pod("a", "1"));
    let row = delta("default/a", &d, true);
    // Cut short by --max-events: the row and the lines before it come out at the end.
    let (out, diag) = print_split(opts(Format::Table), None, &[Body::Event(&list), row]);
    assert_eq!(out.lines().count(), 2, "{out}");
    assert_eq!(diag, "~ list pods at rv=\"0\", 500 per page\n");
}

#[test]
fn human_durations_match_kubectl() {
    use crate::text::human_duration as h;
    let s = Duration::from_secs;
    assert_eq!(h(s(5)), "5s");
    assert_eq!(h(s(119)), "119s");
    assert_eq!(h(s(150)), "2m30s");
    assert_eq!(h(s(300)), "5m");
    assert_eq!(h(s(5 * 3600)), "5h");
    assert_eq!(h(s(2 * 86400)), "2d");
    assert_eq!(h(s(30 * 60)), "30m");
    assert_eq!(h(s(4 * 3600 + 120)), "4h2m");
    assert_eq!(h(s(20 * 3600)), "20h");
    assert_eq!(h(s(3 * 86400 + 3600)), "3d1h");
    assert_eq!(h(s(30 * 86400)), "30d");
}

/// A realistic pod at resourceVersion `rv` in `phase`, with labels, two containers and
/// a restart.
fn real_pod(rv: &str, phase: &str, ready: bool) -> ObjectRef {
    let v = serde_json::json!({
        "kind": "Pod", "apiVersion": "v1",
        "metadata": {"name": "web-1", "namespace": "default", "resourceVersion": rv,
            "creationTimestamp": "2026-11-21T09:00:00Z", "labels": {"app": "web", "tier": "fe"},
            "managedFields": [{"manager": "kubelet"}]},
        "spec": {"nodeName": "node-a", "containers": [
            {"name": "web", "image": "nginx:1.27"}, {"name": "log", "image": "fluent-bit:3"}]},
        "status": {"phase": phase, "podIP": "10.0.0.7", "containerStatuses": [
            {"name": "web", "ready": ready, "restartCount": 1, "state": {"running": {}},
             "lastState": {"terminated": {"finishedAt": "2026-11-21T10:00:00Z"}}},
            {"name": "log", "ready": ready, "restartCount": 0, "state": {"running": {}}}]}
    });
    object(&v.to_string())
}

/// The same story in every format: the initial list, a relist that changes nothing, an
/// update, a deletion, and the reflector's events around them.
fn story(o: Options) -> String {
    let v1 = real_pod("10", "Pending", false);
    let v2 = real_pod("11", "Running", true);
    let added = Delta::new(DeltaType::Replaced, v1.clone());
    let relisted = Delta::new(DeltaType::Replaced, v1.clone());
    let updated = Delta::new(DeltaType::Updated, v2.clone());
    let deleted = Delta::new(DeltaType::Deleted, v2.clone());
    let list = ReflectorEvent::list("0", 500, "initial", false);
    let listed = ReflectorEvent::listed("10", 1, "json+gzip", 1_234_567)
        .took(Duration::from_millis(12))
        .wire_bytes(98_765);
    print_with(
        o,
        &[
            Body::Event(&list),
            Body::Event(&listed),
            delta("default/web-1", &added, true),
            Body::Synced,
            Body::Delta {
                key: "default/web-1",
                delta: &relisted,
                initial_list: false,
                prev: Some(&v1),
            },
            Body::Delta {
                key: "default/web-1",
                delta: &updated,
                initial_list: false,
                prev: Some(&v1),
            },
            Body::Delta {
                key: "default/web-1",
                delta: &deleted,
                initial_list: false,
                prev: Some(&v2),
            },
        ],
    )
}

fn parse(s: &str) -> Format {
    Format::parse(s).unwrap()
}

#[test]
fn snapshots_of_every_format() {
    let base = |format| Options {
        format,
        ..Options::default()
    };
    insta::assert_snapshot!("table", story(base(Format::Table)));
    insta::assert_snapshot!(
        "wide_labels_timestamps",
        story(Options {
            label_columns: vec!["app".into()],
            show_labels: true,
            timestamps: true,
            all_namespaces: true,
            ..base(Format::Wide)
        })
    );
    insta::assert_snapshot!("json", story(base(Format::Json)));
    for (name, format) in [
        ("table_diff", Format::Table),
        ("json_diff", Format::Json),
        ("yaml_diff", Format::Yaml),
    ] {
        let diffed = Options {
            diff: diff::DiffMode::On,
            ..base(format)
        };
        insta::assert_snapshot!(name, story(diffed));
    }
    insta::assert_snapshot!("name", story(base(parse("name"))));
    insta::assert_snapshot!("watch_events", story(base(parse("watch-events"))));
    insta::assert_snapshot!(
        "custom_columns",
        story(base(parse(
            "custom-columns=NAME:.metadata.name,PHASE:.status.phase,IMAGES:.spec.containers[*].image"
        )))
    );
    insta::assert_snapshot!(
        "jsonpath",
        story(base(parse(
            r#"jsonpath={.metadata.name}{"\t"}{range .status.containerStatuses[*]}{.name}={.ready} {end}"#
        )))
    );
}

#[test]
fn watch_events_map_deltas_like_a_watch_would() {
    let out = story(Options {
        format: Format::WatchEvents,
        ..Options::default()
    });
    let types: Vec<String> = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["type"].to_string())
        .collect();
    // Initial Replaced → ADDED; the relist with nothing new → nothing; then MODIFIED, DELETED.
    assert_eq!(types, [r#""ADDED""#, r#""MODIFIED""#, r#""DELETED""#]);
    assert!(!out.contains("managedFields"));
}

#[test]
fn json_diff_is_an_rfc6902_patch_that_turns_the_old_object_into_the_new() {
    let out = story(Options {
        format: Format::Json,
        diff: diff::DiffMode::On,
        ..Options::default()
    });
    let recs: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let relist = &recs[4];
    assert_eq!(relist["changed"], false);
    assert_eq!(relist["diff"], serde_json::json!([]));
    let upd = &recs[5];
    assert_eq!(upd["type"], "Updated");
    let patch: json_patch::Patch = serde_json::from_value(upd["diff"].clone()).unwrap();
    let mut old = real_pod("10", "Pending", false).to_value();
    json_patch::patch(&mut old, &patch).unwrap();
    let mut new = real_pod("11", "Running", true).to_value();
    // Noise is left out of the patch, so only it differs after applying.
    for v in [&mut old, &mut new] {
        v["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("resourceVersion");
    }
    assert_eq!(old, new);
    // Without --diff, records are byte-for-byte what they were.
    let plain = story(Options {
        format: Format::Json,
        ..Options::default()
    });
    assert!(!plain.contains("\"diff\"") && !plain.contains("\"changed\""));
}

/// Prints `recs` for pods (with `context`) into separate data and diagnostics buffers.
fn print_split(o: Options, context: Option<&str>, recs: &[Body<'_>]) -> (String, String) {
    let (out, diag) = (Buf::default(), Buf::default());
    feed(printer(o, out.clone(), diag.clone()), context, recs);
    (out.text(), diag.text())
}

/// kubectl aligns the whole initial list; widths that only grew row by row would let a
/// long name shift every later column.
#[test]
fn table_aligns_the_initial_list_then_keeps_its_widths_for_watch_rows() {
    let names = ["default", "kube-node-lease", "kube-public", "team-a"];
    let deltas: Vec<(String, Delta)> = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let d = Delta::new(DeltaType::Replaced, pod(n, &(10 + i).to_string()));
            (format!("default/{n}"), d)
        })
        .collect();
    let later = Delta::new(DeltaType::Added, pod("x", "20"));
    let longer = Delta::new(
        DeltaType::Added,
        pod("an-even-longer-name-than-before", "21"),
    );
    let mut recs: Vec<Body<'_>> = deltas
        .iter()
        .map(|(key, delta)| Body::Delta {
            key,
            delta,
            initial_list: true,
            prev: None,
        })
        .collect();
    recs.push(Body::Synced);
    for (key, delta) in [
        ("default/x", &later),
        ("default/an-even-longer-name-than-before", &longer),
    ] {
        recs.push(Body::Delta {
            key,
            delta,
            initial_list: false,
            prev: None,
        });
    }
    let (out, diag) = print_split(opts(Format::Table), None, &recs);
    assert_eq!(diag, "~ synced pods\n");
    insta::assert_snapshot!("table_initial_list_aligned", out);
    let lines: Vec<&str> = out.lines().collect();
    let col = |l: &str| {
        l.find("RESOURCEVERSION")
            .or_else(|| l.find(char::is_numeric))
    };
    let at = col(lines[0]);
    assert!(
        lines[..6].iter().all(|l| col(l) == at),
        "the initial list and the next watch row line up:\n{out}"
    );
}

/// On a terminal the hold is bounded, so a huge list starts printing at once.
#[test]
fn table_holds_at_most_a_bounded_number_of_initial_rows() {
    let d = Delta::new(DeltaType::Replaced, pod("a", "1"));
    let out = Buf::default();
    let o = Options {
        terminal: true,
        ..opts(Format::Table)
    };
    let mut p = printer(o, out.clone(), io::sink());
    let r = Resource::pods();
    for _ in 0..table::HOLD_ROWS {
        assert_eq!(out.text(), "", "held back until the bound");
        let rec = Record::new(&r, None, at(), delta("default/a", &d, true));
        p.record(&rec).unwrap();
    }
    // Released into the writer's buffer: a flush of it alone shows them.
    drop(p);
    assert_eq!(out.text().lines().count(), table::HOLD_ROWS + 1);
}

/// `~` lines are diagnostics, never on stdout, with or without headers.
#[test]
fn table_event_lines_go_to_the_diagnostics_writer() {
    let d = Delta::new(DeltaType::Replaced, pod("web-1", "7"));
    let list = ReflectorEvent::list("0", 500, "initial", true);
    let recs = [
        Body::Event(&list),
        delta("default/web-1", &d, true),
        Body::Synced,
    ];
    let (out, diag) = print_split(
        Options {
            no_headers: true,
            ..opts(Format::Table)
        },
        None,
        &recs,
    );
    assert!(
        out.starts_with("Replaced   default     web-1   7 "),
        "{out}"
    );
    assert_eq!(out.lines().count(), 1, "{out}");
    assert_eq!(
        diag,
        "~ watch-list pods at rv=\"0\", 500 per page\n~ synced pods\n"
    );
}

/// A watch's `~` line counts its bookmarks apart from its events.
#[test]
fn a_watch_end_counts_bookmarks_apart_from_events() {
    let ended = |events, bookmarks| ReflectorEvent::WatchEnded {
        reason: "closed by the server".into(),
        events,
        bookmarks,
        elapsed: std::time::Duration::from_millis(468_000),
        error: false,
    };
    let (with, without) = (ended(8, 3), ended(1, 0));
    let list = ReflectorEvent::list("0", 500, "initial", false);
    let recs = [
        Body::Event(&list),
        Body::Synced,
        Body::Event(&with),
        Body::Event(&without),
    ];
    let (_, diag) = print_split(opts(Format::Table), None, &recs);
    let ends: Vec<&str> = diag.lines().skip(2).collect();
    assert_eq!(
        ends,
        [
            "~ watch pods closed after 468.0s and 8 events, 3 bookmarks: closed by the server",
            "~ watch pods closed after 468.0s and 1 event: closed by the server",
        ],
        "{diag}"
    );
}

/// Explicit colour is whole: every colour closed by one full reset, no stray
/// `ESC[m`, whatever `NO_COLOR` says.
#[test]
fn colour_codes_are_explicit_and_balanced() {
    let d = Delta::new(DeltaType::Deleted, pod("web-1", "7"));
    let ev = ReflectorEvent::Resync;
    let (out, diag) = print_split(
        Options {
            color: true,
            ..opts(Format::Table)
        },
        None,
        &[Body::Event(&ev), delta("default/web-1", &d, false)],
    );
    let row = out.lines().nth(1).unwrap();
    assert!(
        row.starts_with("\u{1b}[31mDeleted\u{1b}[0m    default"),
        "{row:?}"
    );
    assert_eq!(diag, "\u{1b}[90m~ resync pods\u{1b}[0m\n");
    for text in [&out, &diag] {
        assert!(!text.contains("\u{1b}[m"), "{text:?}");
        assert_eq!(
            text.matches("\u{1b}[0m").count(),
            text.matches('\u{1b}').count() / 2
        );
    }
}

/// Server strings go to a pipe as they are in kubectl's script formats, and
/// escaped on a terminal; with several contexts each line says which.
#[test]
fn script_formats_write_bytes_into_a_pipe_and_name_the_context() {
    let o = object(
        r#"{"metadata":{"name":"esc","namespace":"default","resourceVersion":"3"},"data":{"k":"a\u001b[2Jb"}}"#,
    );
    let d = Delta::new(DeltaType::Added, o);
    let body = [delta("default/esc", &d, false)];
    let run = |format: &str, terminal: bool, context: Option<&str>| {
        let o = Options {
            terminal,
            contexts: context.is_some(),
            ..opts(parse(format))
        };
        print_split(o, context, &body).0
    };
    assert_eq!(run("jsonpath={.data.k}", false, None), "a\u{1b}[2Jb\n");
    assert_eq!(run("jsonpath={.data.k}", true, None), "a\\u{1b}[2Jb\n");
    assert_eq!(
        run("custom-columns=K:data.k", false, None),
        "K\na\u{1b}[2Jb\n"
    );
    assert_eq!(
        run("custom-columns=N:{.metadata.name}", false, Some("prod")),
        "CONTEXT   N\nprod      esc\n"
    );
    assert_eq!(run("name", false, Some("prod")), "prod/pod/esc\n");
    let ev: Value = serde_json::from_str(&run("watch-events", false, Some("prod"))).unwrap();
    assert_eq!(ev["type"], "ADDED");
    assert_eq!(ev["context"], "prod");
    assert_eq!(ev["object"]["data"]["k"], "a\u{1b}[2Jb");
}

/// `story`'s handler calls (`--view handlers`), each after the delta that makes it, as
/// the informer prints them: OnAdd, OnUpdate(v1, v1) for the relist, OnUpdate(v1, v2),
/// and the deletion as a tombstone.
fn handler_story(o: Options) -> String {
    let v1 = real_pod("10", "Pending", false);
    let v2 = real_pod("11", "Running", true);
    let replaced = Delta::new(DeltaType::Replaced, v1.clone());
    let updated = Delta::new(DeltaType::Updated, v2.clone());
    let tomb = Delta::tombstone("default/web-1".into(), Some(v2.clone()));
    let calls = [
        HandlerCall::OnAdd {
            obj: v1.clone(),
            is_in_initial_list: true,
        },
        HandlerCall::OnUpdate {
            old: v1.clone(),
            new: v1.clone(),
        },
        HandlerCall::OnUpdate {
            old: v1.clone(),
            new: v2.clone(),
        },
        HandlerCall::OnDelete {
            obj: tomb.object.clone(),
        },
    ];
    let key = "default/web-1";
    let delta = |delta, initial_list, prev| Body::Delta {
        key,
        delta,
        initial_list,
        prev,
    };
    let call = |call, initial_list| Body::Handler {
        key,
        call,
        initial_list,
    };
    print_with(
        o,
        &[
            delta(&replaced, true, None),
            call(&calls[0], true),
            Body::Synced,
            delta(&replaced, false, Some(&v1)),
            call(&calls[1], false),
            delta(&updated, false, Some(&v1)),
            call(&calls[2], false),
            delta(&tomb, false, Some(&v2)),
            call(&calls[3], false),
        ],
    )
}

#[test]
fn the_handler_view_prints_calls_and_no_deltas_in_every_format() {
    let with = |format, diff| Options {
        format,
        view: View::Handlers,
        diff,
        ..Options::default()
    };
    let table = handler_story(with(Format::Table, diff::DiffMode::On));
    let rows: Vec<Vec<&str>> = table
        .lines()
        .filter(|l| !l.starts_with("~ ") && !l.starts_with("    "))
        .map(|l| l.split_whitespace().take(3).collect())
        .collect();
    assert_eq!(
        rows,
        [
            vec!["HANDLER", "NAME", "RESOURCEVERSION"],
            vec!["OnAdd", "web-1", "10"],
            vec!["OnUpdate", "web-1", "10→10"],
            vec!["OnUpdate", "web-1", "10→11"],
            vec!["OnDelete", "web-1", "(final"],
        ],
        "{table}"
    );
    assert!(
        table.contains("web-1 (final state unknown)   11 "),
        "{table}"
    );
    assert!(
        table.contains("\n    .status.phase: \"Pending\" → \"Running\"\n"),
        "--diff under the OnUpdate that changed something: {table}"
    );

    let json = handler_story(with(Format::Json, diff::DiffMode::On));
    let recs: Vec<Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let types: Vec<String> = recs
        .iter()
        .map(|r| format!("{} {}", r["type"], r["handler"]))
        .collect();
    assert_eq!(
        types,
        [
            r#""HandlerCall" "OnAdd""#,
            r#""Synced" null"#,
            r#""HandlerCall" "OnUpdate""#,
            r#""HandlerCall" "OnUpdate""#,
            r#""HandlerCall" "OnDelete""#,
        ]
    );
    assert_eq!(recs[0]["isInInitialList"], true);
    assert_eq!(recs[0]["object"]["metadata"]["resourceVersion"], "10");
    assert_eq!(recs[2]["oldResourceVersion"], "10");
    assert_eq!(recs[2]["resourceVersion"], "10");
    assert_eq!(recs[2]["changed"], false);
    assert_eq!(recs[3]["oldObject"]["status"]["phase"], "Pending");
    assert_eq!(recs[3]["object"]["status"]["phase"], "Running");
    assert_eq!(recs[3]["changed"], true);
    assert!(
        recs[3]["diff"].as_array().unwrap().contains(
            &serde_json::json!({"op": "replace", "path": "/status/phase", "value": "Running"})
        ),
        "{}",
        recs[3]
    );
    assert!(recs[3]["oldObject"]["metadata"]
        .get("managedFields")
        .is_none());
    assert_eq!(recs[4]["finalStateUnknown"], true);
    assert_eq!(recs[4]["resourceVersion"], "11");
    assert!(recs[4].get("diff").is_none() && recs[4].get("oldObject").is_none());

    let yaml = handler_story(with(Format::Yaml, diff::DiffMode::On));
    assert!(
        yaml.contains(
            "---\ntype: HandlerCall\nresource: pods\nhandler: OnUpdate\nkey: default/web-1\n"
        ),
        "{yaml}"
    );
    assert!(yaml.contains("\noldObject:\n  kind: Pod\n"), "{yaml}");
    assert!(!yaml.contains("type: Replaced"), "{yaml}");

    // The deltas view drops the calls: the story's deltas only, as `story` prints them.
    let deltas = handler_story(Options {
        format: Format::Json,
        ..Options::default()
    });
    assert!(!deltas.contains("HandlerCall"), "{deltas}");
    assert_eq!(deltas.lines().count(), 5, "{deltas}");
}

#[test]
fn handlers_is_a_view_not_a_format() {
    let err = Format::parse("handlers").unwrap_err().to_string();
    assert!(err.contains("--view handlers"), "{err}");
    for f in ["table", "wide", "json", "yaml"] {
        assert_eq!(View::Handlers.check(&parse(f)), Ok(()), "{f}");
    }
    for f in [
        "name",
        "watch-events",
        "jsonpath={.kind}",
        "custom-columns=N:.kind",
    ] {
        let err = View::Handlers.check(&parse(f)).unwrap_err().to_string();
        assert!(err.contains("-o table, wide, json or yaml"), "{f}: {err}");
        assert_eq!(View::Deltas.check(&parse(f)), Ok(()), "{f}");
    }
}

/// `--check-consistency`: a record in JSON, a `~` line in the table, and in the script
/// formats a diagnostics line for a check that found a difference, nothing otherwise.
#[test]
fn consistency_reports_in_every_format() {
    use crate::cache::consistency::Report;
    let s = |x: &str| x.to_owned();
    let clean = Observation::Consistency(Report {
        resource_version: s("40"),
        consistent: Some(true),
        objects: 2,
        ..Report::default()
    });
    let found = Observation::Consistency(Report {
        resource_version: s("42"),
        consistent: Some(false),
        objects: 9,
        missing: vec![s("default/m")],
        stale: (0..7).map(|i| format!("default/s{i}")).collect(),
        ..Report::default()
    });
    let compacted = Observation::Consistency(Report {
        resource_version: s("43"),
        objects: 9,
        compacted: true,
        error: Some(s(
            "410 Expired: The resourceVersion for the provided list is too old.",
        )),
        ..Report::default()
    });
    let failed = Observation::Consistency(Report {
        resource_version: s("44"),
        objects: 9,
        error: Some(s("503 ServiceUnavailable")),
        ..Report::default()
    });
    let bodies = [
        Body::Synced,
        Body::Observed(&clean),
        Body::Observed(&found),
        Body::Observed(&compacted),
        Body::Observed(&failed),
    ];
    let (out, diag) = print_split(opts(Format::Table), None, &bodies);
    assert_eq!(out, "");
    assert_eq!(
        diag,
        "~ synced pods\n\
         ~ consistency of pods at rv=40: consistent with a list at that rv, 2 objects\n\
         ~ consistency of pods at rv=42: INCONSISTENT with a list at that rv: 1 missing \
         (default/m), 7 stale (default/s0, default/s1, default/s2, default/s3, default/s4, \
         … 2 more)\n\
         ~ consistency of pods at rv=43: not checked, the server has compacted that rv \
         (410 Expired: The resourceVersion for the provided list is too old.); the next \
         check lists at a later one\n\
         ~ consistency of pods at rv=44: not checked: 503 ServiceUnavailable\n"
    );

    let (out, _) = print_split(opts(Format::Json), None, &bodies[2..4]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        r#"{"type":"Consistency","resource":"pods","time":"2026-11-21T10:05:30.250Z","resourceVersion":"42","consistent":false,"objects":9,"missing":["default/m"],"extra":[],"stale":["default/s0","default/s1","default/s2","default/s3","default/s4","default/s5","default/s6"],"compacted":false,"error":null}"#
    );
    assert_eq!(
        lines[1],
        r#"{"type":"Consistency","resource":"pods","time":"2026-11-21T10:05:30.250Z","resourceVersion":"43","consistent":null,"objects":9,"missing":[],"extra":[],"stale":[],"compacted":true,"error":"410 Expired: The resourceVersion for the provided list is too old."}"#
    );

    let (out, diag) = print_split(opts(parse("name")), None, &bodies);
    assert_eq!(out, "");
    assert_eq!(diag.lines().count(), 1, "{diag}");
    assert!(
        diag.starts_with("~ consistency of pods at rv=42: INCONSISTENT"),
        "{diag}"
    );
}

/// `(resource, key, initial_list)` rows and Synced records into a table, data only.
fn print_resources(o: Options, steps: &[(&Resource, Option<(&str, bool)>)]) -> String {
    let out = Buf::default();
    let mut p = printer(o, out.clone(), io::sink());
    let objs: Vec<Option<Delta>> = steps
        .iter()
        .map(|(_, row)| {
            row.map(|(key, _)| {
                let name = key.rsplit('/').next().unwrap_or(key);
                Delta::new(DeltaType::Replaced, pod(name, "1"))
            })
        })
        .collect();
    for ((r, row), d) in steps.iter().zip(&objs) {
        let body = match (row, d) {
            (Some((key, initial)), Some(d)) => Body::Delta {
                key,
                delta: d,
                initial_list: *initial,
                prev: None,
            },
            _ => Body::Synced,
        };
        let rec = Record::new(r, None, at(), body);
        p.record(&rec).unwrap();
        p.flush().unwrap();
    }
    p.finish().unwrap();
    out.text()
}

fn resource(name: &str, kind: &str, namespaced: bool) -> Resource {
    Resource {
        name: name.into(),
        kind: kind.into(),
        api_version: "v1".into(),
        namespaced,
    }
}

/// Two namespaced resources in `all`'s order, service accounts first, and a table of them.
fn service_accounts_then_config_maps() -> (Resource, Resource, Options) {
    let o = Options {
        multi: true,
        metadata_only: true,
        order: vec!["serviceaccounts".into(), "configmaps".into()],
        targets: 2,
        ..opts(Format::Table)
    };
    (
        resource("serviceaccounts", "ServiceAccount", true),
        resource("configmaps", "ConfigMap", true),
        o,
    )
}

/// `kwatch all` prints its initial lists in `all`'s order whatever
/// order they synced in, each resource a block under its own header (after a blank
/// line, as `kubectl get sa,roles`), and the watch rows after them.
#[test]
fn table_prints_initial_lists_in_the_resources_order_as_blocks() {
    let (sa, cm, o) = service_accounts_then_config_maps();
    let out = print_resources(
        o,
        &[
            (&cm, Some(("default/cm-1", true))),
            (&sa, Some(("default/sa-1", true))),
            (&cm, Some(("default/cm-2", true))),
            (&cm, None),
            (&cm, Some(("default/cm-3", false))),
            (&sa, None),
            (&sa, Some(("default/sa-2", false))),
        ],
    );
    assert_eq!(
        first_words(&out, 4),
        [
            "DELTA KIND NAMESPACE NAME",
            "Replaced ServiceAccount default sa-1",
            "",
            "DELTA KIND NAMESPACE NAME",
            "Replaced ConfigMap default cm-1",
            "Replaced ConfigMap default cm-2",
            "Replaced ConfigMap default cm-3",
            "",
            "DELTA KIND NAMESPACE NAME",
            "Replaced ServiceAccount default sa-2",
        ],
        "{out}"
    );
    // One block's header lines up with its rows.
    let lines: Vec<&str> = out.lines().collect();
    let at = |l: &str| {
        l.find("RESOURCEVERSION")
            .or_else(|| l.find(" 1 ").map(|i| i + 1))
    };
    assert_eq!(at(lines[3]), at(lines[4]), "{out}");
}

/// With `-A`, a cluster-scoped resource has no NAMESPACE column;
/// mixed with a namespaced one, each block has its own (`kubectl get ns,pods -A`).
#[test]
fn table_leaves_namespace_out_for_cluster_scoped_resources() {
    let ns = resource("namespaces", "Namespace", false);
    let pods = Resource::pods();
    let o = Options {
        metadata_only: true,
        targets: 1,
        ..opts(Format::Table)
    };
    let out = print_resources(
        o.clone(),
        &[(&ns, Some(("kube-system", true))), (&ns, None)],
    );
    assert!(
        out.starts_with("DELTA      NAME          RESOURCEVERSION   AGE\n"),
        "{out}"
    );
    assert!(!out.contains("NAMESPACE"), "{out}");
    let o = Options {
        multi: true,
        order: vec!["namespaces".into(), "pods".into()],
        targets: 2,
        ..o
    };
    let out = print_resources(
        o,
        &[
            (&pods, Some(("default/web", true))),
            (&ns, Some(("kube-system", true))),
            (&pods, None),
            (&ns, None),
        ],
    );
    let headers: Vec<&str> = out.lines().filter(|l| l.starts_with("DELTA")).collect();
    assert_eq!(headers.len(), 2, "{out}");
    assert!(!headers[0].contains("NAMESPACE"), "{out}");
    assert!(headers[1].contains("NAMESPACE"), "{out}");
}

/// Into a file or a pipe the whole initial list is aligned, however
/// long (on a terminal it is bounded: the test above).
#[test]
fn table_aligns_a_whole_long_initial_list_when_not_on_a_terminal() {
    let pods = Resource::pods();
    let n = table::HOLD_ROWS + 500;
    let keys: Vec<String> = (0..n)
        .map(|i| {
            if i == n - 1 {
                "default/a-much-longer-name".into()
            } else {
                format!("default/p{i}")
            }
        })
        .collect();
    let mut steps: Vec<(&Resource, Option<(&str, bool)>)> = keys
        .iter()
        .map(|k| (&pods, Some((k.as_str(), true))))
        .collect();
    steps.push((&pods, None));
    let out = print_resources(opts(Format::Table), &steps);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), n + 1, "a header and every row");
    let at = |l: &str| {
        l.find("RESOURCEVERSION")
            .or_else(|| l.find(" 1 ").map(|i| i + 1))
    };
    let col = at(lines[0]);
    assert!(col.is_some());
    assert!(
        lines.iter().all(|l| at(l) == col),
        "every row lines up with the header"
    );
}

/// `--blame` is made once per record, however many readers (printer, `--stats`, the
/// conflict finder) ask; and not at all when not asked.
#[test]
fn a_records_blame_is_made_once() {
    let before = pod("web-1", "5");
    let after = object(
        r#"{"metadata":{"name":"web-1","namespace":"default","resourceVersion":"6","creationTimestamp":"2026-11-21T10:00:00Z"},"spec":{"nodeName":"n2"}}"#,
    );
    let d = Delta::new(DeltaType::Updated, after);
    let r = Resource::pods();
    let rec = Record::new(
        &r,
        None,
        at(),
        Body::Delta {
            key: "default/web-1",
            delta: &d,
            initial_list: false,
            prev: Some(&before),
        },
    );
    assert!(rec.blame(false).is_none());
    assert!(rec.blame.get().is_none(), "not made when not asked");
    let first = rec.blame(true).expect("a blame");
    assert_eq!(first.len(), 1, "{first:?}");
    assert_eq!(first[0].path, ".spec.nodeName", "{first:?}");
    assert!(first[0].unowned, "no managedFields after the change");
    assert!(std::ptr::eq(first, rec.blame(true).unwrap()));
}

/// With several resources, each resource's `~` lines stand with its own
/// block (those before its sync above its rows, `synced` and `watch` below them), never
/// inside another kind's block, whatever order the events came in.
#[test]
fn table_keeps_each_resources_tilde_lines_with_its_block() {
    let (sa, cm, o) = service_accounts_then_config_maps();
    let buf = Buf::default();
    let mut p = printer(o, buf.clone(), buf.clone());
    let list = ReflectorEvent::list("0", 500, "initial", false);
    let watch = ReflectorEvent::Watch {
        resource_version: "5".into(),
        timeout_seconds: 300,
    };
    let (cm1, sa1) = (
        Delta::new(DeltaType::Replaced, pod("cm-1", "1")),
        Delta::new(DeltaType::Replaced, pod("sa-1", "1")),
    );
    let row = |key, d| Body::Delta {
        key,
        delta: d,
        initial_list: true,
        prev: None,
    };
    for (r, body) in [
        (&cm, Body::Event(&list)),
        (&sa, Body::Event(&list)),
        (&cm, row("default/cm-1", &cm1)),
        (&cm, Body::Synced),
        (&cm, Body::Event(&watch)),
        (&sa, row("default/sa-1", &sa1)),
        (&sa, Body::Synced),
    ] {
        p.record(&Record::new(r, None, at(), body)).unwrap();
    }
    p.finish().unwrap();
    let out = buf.text();
    assert_eq!(
        first_words(&out, 3),
        [
            "~ list serviceaccounts",
            "DELTA KIND NAMESPACE",
            "Replaced ServiceAccount default",
            "~ synced serviceaccounts",
            "~ list configmaps",
            "",
            "DELTA KIND NAMESPACE",
            "Replaced ConfigMap default",
            "~ synced configmaps",
            "~ watch configmaps",
        ],
        "{out}"
    );
}

/// Custom-columns align the whole initial list, as kubectl does (not by the header and
/// the first row only), and later rows keep those widths.
#[test]
fn custom_columns_align_the_whole_initial_list() {
    let a = Delta::new(DeltaType::Replaced, pod("a", "1"));
    let long = Delta::new(DeltaType::Replaced, pod("a-much-longer-name", "2"));
    let later = Delta::new(DeltaType::Added, pod("b", "3"));
    let row = |key, d, initial_list| Body::Delta {
        key,
        delta: d,
        initial_list,
        prev: None,
    };
    let out = print_with(
        opts(parse(
            "custom-columns=NAME:.metadata.name,RV:.metadata.resourceVersion",
        )),
        &[
            row("default/a", &a, true),
            row("default/a-much-longer-name", &long, true),
            Body::Synced,
            row("default/b", &later, false),
        ],
    );
    let column_of_rv: Vec<Option<usize>> = out
        .lines()
        .map(|l| l.rfind(char::is_whitespace).map(|i| i + 1))
        .collect();
    assert_eq!(column_of_rv.len(), 4, "{out}");
    assert!(column_of_rv.iter().all(|c| *c == column_of_rv[0]), "{out}");
}

/// Every object with `metadata.managedFields` in the JSON files under
/// crates/core/testdata (genuine servers' lists, watches and Tables, Kubernetes' round-trip
/// fixtures), compact as a server sends them.
fn fixture_objects_with_managed_fields() -> Vec<String> {
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                if m.get("metadata")
                    .and_then(|md| md.get("managedFields"))
                    .is_some()
                {
                    out.push(v.to_string());
                }
                m.values().for_each(|c| walk(c, out));
            }
            Value::Array(a) => a.iter().for_each(|c| walk(c, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for (_, doc) in crate::cache::testutil::testdata_json() {
        if let Ok(v) = serde_json::from_str::<Value>(&doc) {
            walk(&v, &mut out);
        }
    }
    out
}

/// Hiding managedFields cuts them out of the object's bytes: the same bytes as parsing,
/// removing and writing again gave for JSON as kube-apiserver writes built-in kinds
/// (compact, serde_json's escapes, managedFields last in metadata), and the same JSON
/// value for every shape (whitespace, escapes the rewrite wrote differently, the member
/// anywhere in `metadata`).
#[test]
fn hiding_managed_fields_cuts_the_bytes_the_rewrite_removed() {
    let fixtures = fixture_objects_with_managed_fields();
    assert!(fixtures.len() > 50, "{} fixtures", fixtures.len());
    let shapes = [
        r#"{"metadata":{"managedFields":[{"manager":"m"}],"name":"a"},"spec":{}}"#,
        r#"{"metadata":{"name":"a","managedFields":[{"manager":"m"}],"uid":"u"}}"#,
        r#"{"metadata":{"name":"a","managedFields":[{"manager":"m"}]},"spec":{"x":1}}"#,
        r#"{"metadata":{"managedFields":[{"manager":"m"}]}}"#,
        r#"{"spec":{"managedFields":[1]},"metadata":{"name":"a","managedFields":null}}"#,
        r#"{"metadata":{"name":"a","managedFields":[],"annotations":{"managedFields":"x"}}}"#,
        r#"{"metadata":{"name":"a","managedFields":[{"fieldsV1":{"f:metadata":{"f:labels":{"k:{\"a\":\"}\"}":{}}}},"manager":"x,\"y\"]"}]}}"#,
        r#"{"metadata":{"name":"é\u00e9<\u003c","managedFields":[{"m":"\u2028"}],"x":1.0}}"#,
        "{\n  \"metadata\" : {\n    \"name\" : \"a\" ,\n    \"managedFields\" : [ { \"manager\" : \"m\" } ] ,\n    \"uid\" : \"u\"\n  }\n}",
        "{ \"metadata\" : { \"managedFields\" : [ ] } , \"kind\" : \"Pod\" }",
        // Cut where the rewrite decides: an escaped key, `metadata` twice.
        r#"{"metadata":{"n\u0061me":"a","managedFields":[1]}}"#,
        r#"{"metadata":{"name":"a"},"metadata":{"name":"b","managedFields":[1]}}"#,
    ];
    let mut byte_equal = 0;
    let all = shapes
        .iter()
        .map(|s| s.to_string())
        .chain(fixtures.iter().cloned());
    for raw in all {
        let o = object(&raw);
        let old = object_json_rewritten(&o);
        let cut = without_managed_fields(&raw).map_or_else(|| old.clone(), |c| c.into_owned());
        if o.meta().has_managed_fields {
            assert_eq!(object_json(&o, false), cut, "{raw}");
        }
        let value = |t: &str| serde_json::from_str::<Value>(t).unwrap();
        assert_eq!(value(&cut), value(&old), "{raw}");
        assert!(!cut.contains("\n") || raw.contains('\n'), "{raw}");
        let written = serde_json::to_string(&value(&raw)).unwrap();
        let canonical = written == raw;
        if canonical {
            // The rewrite moved metadata's last member into managedFields' place
            // (serde_json's `Map::remove` swaps): the cut keeps the server's order, the
            // same bytes where managedFields is last (Go's order of ObjectMeta, so every
            // built-in kind kube-apiserver writes).
            let mut v = value(&raw);
            let meta = v["metadata"].as_object_mut().unwrap();
            let last = meta
                .keys()
                .next_back()
                .is_some_and(|k| k == "managedFields");
            meta.shift_remove("managedFields");
            assert_eq!(cut, v.to_string(), "{raw}");
            if last {
                assert_eq!(cut, old, "{raw}");
                byte_equal += 1;
            }
        }
        assert_eq!(object_json(&o, true), raw);
    }
    assert!(byte_equal > 50, "{byte_equal}");
}

/// Objects decoded from protobuf without their managedFields
/// ([`crate::client::protobuf::Omit`]) print as those decoded with them print when they are
/// hidden (`-o json`, `-o yaml`, watch-events: [`object_json`]), byte for byte: Kubernetes'
/// round-trip fixtures of every kind (each ObjectMeta filled, managedFields included) and
/// a genuine kube-apiserver 1.32's list and watch of pods.
#[test]
fn protobuf_objects_read_without_managed_fields_print_as_those_read_with_them() {
    use crate::cache::object::Object;
    use crate::client::protobuf::{self as pb, Omit, Table};
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let cut = Omit {
        managed_fields: true,
    };
    let mut compared = 0;
    let mut check = |name: &str, full: Vec<u8>, without: Vec<u8>| {
        let full = ObjectRef::new(Object::from_json(std::str::from_utf8(&full).unwrap()).unwrap());
        let without =
            ObjectRef::new(Object::from_json(std::str::from_utf8(&without).unwrap()).unwrap());
        assert!(
            !without.meta().has_managed_fields,
            "{name}: {}",
            without.raw()
        );
        assert_eq!(
            object_json(&without, false),
            object_json(&full, false),
            "{name}"
        );
        compared += usize::from(full.meta().has_managed_fields);
    };
    for (release, minor) in [("v1.32.13", 32), ("v1.36.2", 36), ("v1.37.0-beta.0", 37)] {
        let table = Table::for_minor(minor).unwrap().unwrap();
        let pbs =
            crate::cache::testutil::files_with_extension(&data.join("k8s-api").join(release), "pb");
        for pb_file in pbs {
            let bytes = std::fs::read(&pb_file).unwrap();
            let (mut full, mut without) = (Vec::new(), Vec::new());
            // Objects with a kind in their envelope (a WatchEvent's has none).
            if pb::object(table, &bytes, &mut full).is_err() {
                continue;
            }
            pb::object_omitting(table, &bytes, cut, &mut without).unwrap();
            check(&pb_file.display().to_string(), full, without);
        }
    }
    let table = Table::for_minor(32).unwrap().unwrap();
    let genuine = data.join("protobuf-1.32");
    let list = std::fs::read(genuine.join("list-all-at-rv.pb")).unwrap();
    let items = |omit: Omit| {
        let mut items = Vec::new();
        let mut reader = pb::ListReader::new(table).typed().omit(omit);
        reader
            .feed(&list, &mut |i: &[u8]| items.push(i.to_vec()))
            .unwrap();
        reader.finish().unwrap();
        items
    };
    for (full, without) in items(Omit::default()).into_iter().zip(items(cut)) {
        check("list-all-at-rv.pb", full, without);
    }
    let mut body = &std::fs::read(genuine.join("watch.pb")).unwrap()[..];
    while let Some((frame, used)) = pb::frame(body) {
        let full = pb::watch_event(table, frame).unwrap();
        let without = pb::watch_event_omitting(table, frame, cut).unwrap();
        if full.event_type != "BOOKMARK" && full.event_type != "ERROR" {
            check("watch.pb", full.object, without.object);
        }
        body = &body[used..];
    }
    assert!(compared > 400, "only {compared} objects had managedFields");
}

/// A YAML record's fields are written from their JSON by the one-pass emitter as they
/// were from their `Value`: every record of the stories (reflector events, deltas,
/// diffs, blames, handler calls).
#[test]
fn yaml_record_fields_are_written_as_from_their_value() {
    let yaml = |diff, blame| Options {
        format: Format::Yaml,
        diff,
        blame,
        ..Options::default()
    };
    let both = |f: &dyn Fn() -> String| {
        let pass = f();
        super::yaml::TREE_HEADERS.with(|t| t.set(true));
        let tree = f();
        super::yaml::TREE_HEADERS.with(|t| t.set(false));
        assert_eq!(pass, tree);
        assert!(pass.contains("\ntype: "), "{pass}");
    };
    for (diff, blame) in [
        (diff::DiffMode::Off, false),
        (diff::DiffMode::On, false),
        (diff::DiffMode::On, true),
        (diff::DiffMode::Off, true),
    ] {
        both(&|| story(yaml(diff, blame)));
        both(&|| {
            handler_story(Options {
                view: View::Handlers,
                ..yaml(diff, blame)
            })
        });
    }
}

/// A `Stale` whose store is not behind the server's last answer (resourceVersions compared
/// as unsigned integers: "9" is below "10") comes from samples that failed: the line says
/// the server does not answer. Behind, or revisions that are not integers: as before.
#[test]
fn a_stale_store_not_behind_the_servers_last_answer_is_stale_for_want_of_an_answer() {
    let line = |store: &str, server: &str| {
        let lag = crate::informer::freshness::Lag {
            lag: Duration::from_secs(5),
            server_resource_version: server.to_owned(),
            store_resource_version: store.to_owned(),
            recovered: false,
        };
        super::table::observation_text("pods", &Observation::Stale(lag)).unwrap_or_default()
    };
    let no_answer = |store: &str, server: &str| {
        format!(
            "stale pods: no answer from the server for 5.0s (store rv={store}, the server's \
             last answer rv={server})"
        )
    };
    let behind = |store: &str, server: &str| {
        format!(
            "stale pods: the store is 5.0s behind the server (store rv={store}, server \
             rv={server})"
        )
    };
    assert_eq!(line("120", "115"), no_answer("120", "115"));
    assert_eq!(line("120", "120"), no_answer("120", "120"));
    assert_eq!(line("10", "9"), no_answer("10", "9"));
    assert_eq!(line("9", "10"), behind("9", "10"));
    assert_eq!(line("115", "120"), behind("115", "120"));
    assert_eq!(line("b", "a"), behind("b", "a"));
}
