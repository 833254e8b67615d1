//! `--record` and `kwatch replay`: every record kwatch writes read back (one serde type for
//! the JSON lines, every delta naming its `resource`, older recordings still replayed) and
//! rendered again in any format, with the watch's stop and filter flags.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::util::kwatch::{is_delta, replay, replay_text, replay_within};
use crate::util::shared::*;
use crate::util::{SimProcess, LIMIT};

/// Every record type: every reflector event (Retry with a status and for a lost
/// connection), Synced, deltas of every type, tombstones with and without a last known
/// state, a cluster-scoped resource, two contexts, strings that need escaping, and
/// times in different milliseconds.
pub(crate) const EVERY_RECORD: &str = r#"{"type":"List","context":"prod","resource":"pods","time":"2026-11-21T10:05:30.250Z","resourceVersion":"0","limit":500,"reason":"initial","streaming":true}
{"type":"WatchListFallback","context":"prod","resource":"pods","time":"2026-11-21T10:05:30.251Z","error":"the server rejected \"sendInitialEvents\"\u001b[2J"}
{"type":"Retry","context":"prod","resource":"pods","time":"2026-11-21T10:05:30.251Z","verb":"list","code":429,"reason":"TooManyRequests","retryAfterSeconds":2,"attempt":1,"maxRetries":10}
{"type":"Retry","context":"prod","resource":"pods","time":"2026-11-21T10:05:32.251Z","verb":"watch","code":null,"reason":"connection reset","retryAfterSeconds":1,"attempt":2,"maxRetries":10}
{"type":"Listed","context":"prod","resource":"pods","time":"2026-11-21T10:05:32.300Z","resourceVersion":"10","items":2,"pages":1,"ms":12,"fullListFallback":true,"streaming":false,"encoding":"json+gzip","bytes":412345,"wireBytes":31234}
{"type":"Replaced","context":"prod","resource":"pods","key":"default/web-1","namespace":"default","name":"web-1","kind":"Pod","apiVersion":"v1","resourceVersion":"10","time":"2026-11-21T10:05:32.300Z","initialList":true,"object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-1","namespace":"default","resourceVersion":"10"},"spec":{"nodeName":"n1"}}}
{"type":"Replaced","context":"prod","resource":"pods","key":"default/web-2","namespace":"default","name":"web-2","kind":"Pod","apiVersion":"v1","resourceVersion":"9","time":"2026-11-21T10:05:32.300Z","initialList":true,"object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-2","namespace":"default","resourceVersion":"9"}}}
{"type":"Synced","context":"prod","resource":"pods","time":"2026-11-21T10:05:32.301Z"}
{"type":"Watch","context":"prod","resource":"pods","time":"2026-11-21T10:05:32.301Z","resourceVersion":"10","timeoutSeconds":347}
{"type":"Updated","context":"prod","resource":"pods","key":"default/web-1","namespace":"default","name":"web-1","kind":"Pod","apiVersion":"v1","resourceVersion":"11","time":"2026-11-21T10:05:33.000Z","initialList":false,"object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-1","namespace":"default","resourceVersion":"11","labels":{"q":"a \"quoted\" é"}},"spec":{"nodeName":"n2"}}}
{"type":"Bookmark","context":"prod","resource":"pods","time":"2026-11-21T10:05:34.000Z","resourceVersion":"12"}
{"type":"WatchEnded","context":"prod","resource":"pods","time":"2026-11-21T10:05:35.000Z","reason":"410 Expired: too old resource version","events":2,"ms":2699,"error":true}
{"type":"Backoff","context":"prod","resource":"pods","time":"2026-11-21T10:05:35.000Z","delayMs":800,"cause":"connection refused"}
{"type":"Resync","context":"prod","resource":"pods","time":"2026-11-21T10:05:36.000Z"}
{"type":"Sync","context":"prod","resource":"pods","key":"default/web-1","namespace":"default","name":"web-1","kind":"Pod","apiVersion":"v1","resourceVersion":"11","time":"2026-11-21T10:05:36.000Z","initialList":false,"object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-1","namespace":"default","resourceVersion":"11","labels":{"q":"a \"quoted\" é"}},"spec":{"nodeName":"n2"}}}
{"type":"Deleted","context":"prod","resource":"pods","key":"default/web-1","namespace":"default","name":"web-1","kind":"Pod","apiVersion":"v1","resourceVersion":"11","time":"2026-11-21T10:05:37.000Z","initialList":false,"finalStateUnknown":true,"object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-1","namespace":"default","resourceVersion":"11","labels":{"q":"a \"quoted\" é"}},"spec":{"nodeName":"n2"}}}
{"type":"Deleted","context":"prod","resource":"pods","key":"default/gone","namespace":"default","name":"gone","kind":"Pod","apiVersion":"v1","resourceVersion":null,"time":"2026-11-21T10:05:37.000Z","initialList":false,"finalStateUnknown":true}
{"type":"Deleted","context":"prod","resource":"pods","key":"default/web-2","namespace":"default","name":"web-2","kind":"Pod","apiVersion":"v1","resourceVersion":"13","time":"2026-11-21T10:05:37.001Z","initialList":false,"object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-2","namespace":"default","resourceVersion":"13"}}}
{"type":"Added","context":"dev","resource":"nodes","key":"n1","namespace":null,"name":"n1","kind":"Node","apiVersion":"v1","resourceVersion":"3","time":"2026-11-21T10:05:38.000Z","initialList":true,"object":{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","resourceVersion":"3"}}}
{"type":"Synced","context":"dev","resource":"nodes","time":"2026-11-21T10:05:38.000Z"}
"#;

#[test]
fn replay_as_json_gives_every_record_type_back_byte_for_byte() {
    let out = replay_text(EVERY_RECORD, ["-o", "json"]);
    assert_eq!(out.code(), Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, EVERY_RECORD.lines().collect::<Vec<_>>());
    assert_eq!(out.stderr, "");
}

#[test]
fn replay_with_diff_adds_changed_and_the_patch_to_deltas_only() {
    let out = replay_text(EVERY_RECORD, ["-o", "json", "--diff"]);
    assert_eq!(out.code(), Some(0), "{}", out.stderr);
    let recs = out.json();
    let updated = recs.iter().find(|r| r["type"] == "Updated").unwrap();
    assert_eq!(updated["changed"], true);
    assert_eq!(
        updated["diff"],
        serde_json::json!([
            {"op": "add", "path": "/metadata/labels", "value": {"q": "a \"quoted\" é"}},
            {"op": "replace", "path": "/spec/nodeName", "value": "n2"}
        ])
    );
    // `changed` and `diff` come after the delta's fields, before the object.
    let line = &out.stdout[recs.iter().position(|r| r["type"] == "Updated").unwrap()];
    assert!(
        line.contains(r#""initialList":false,"changed":true,"diff":[{"#),
        "{line}"
    );
    let sync = recs.iter().find(|r| r["type"] == "Sync").unwrap();
    assert_eq!(sync["changed"], false, "a resync of the known version");
    for r in recs.iter().filter(|r| r["key"].is_null()) {
        assert!(r.get("changed").is_none() && r.get("diff").is_none(), "{r}");
    }
}

#[test]
fn replay_as_yaml_carries_the_same_fields_in_the_same_order() {
    let json = replay_text(EVERY_RECORD, ["-o", "json"]).json();
    let yaml = replay_text(EVERY_RECORD, ["-o", "yaml"]);
    assert_eq!(yaml.code(), Some(0), "{}", yaml.stderr);
    let docs: Vec<String> = yaml
        .stdout
        .join("\n")
        .split("---\n")
        .filter(|d| !d.is_empty())
        .map(str::to_owned)
        .collect();
    assert_eq!(docs.len(), json.len());
    for (doc, rec) in docs.iter().zip(&json) {
        // The top-level keys of each document, in order, are the JSON record's.
        let keys: Vec<&str> = doc
            .lines()
            .filter(|l| !l.starts_with(' ') && !l.starts_with('-'))
            .filter_map(|l| l.split_once(':').map(|(k, _)| k))
            .collect();
        let want: Vec<&str> = rec
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, want, "{doc}");
    }
}

/// Older recordings' deltas carry no `resource`: the reflector records name it.
const OLD_RECORDING: &str = r#"{"type":"List","resource":"ingresses.networking.k8s.io","time":"2026-11-21T10:05:30.250Z","resourceVersion":"0","limit":500,"reason":"initial","streaming":false}
{"type":"Added","key":"default/web","namespace":"default","name":"web","kind":"Ingress","apiVersion":"networking.k8s.io/v1","resourceVersion":"5","time":"2026-11-21T10:05:30.250Z","initialList":true,"object":{"apiVersion":"networking.k8s.io/v1","kind":"Ingress","metadata":{"name":"web","namespace":"default","resourceVersion":"5"}}}
{"type":"Added","key":"default/w","namespace":"default","name":"w","kind":"Widget","apiVersion":"example.com/v1","resourceVersion":"6","time":"2026-11-21T10:05:30.250Z","initialList":true,"object":{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default","resourceVersion":"6"}}}
"#;

#[test]
fn a_recording_without_resource_on_deltas_still_replays() {
    let out = replay_text(OLD_RECORDING, ["-o", "json"]);
    assert_eq!(out.code(), Some(0), "{}", out.stderr);
    let want: Vec<String> = OLD_RECORDING
        .lines()
        .zip([
            None,
            // Ingress → "ingresss" by the kind alone: the List record names it right.
            Some("ingresses.networking.k8s.io"),
            // No record names it: the kind's plural, in its group.
            Some("widgets.example.com"),
        ])
        .map(|(l, r)| match r {
            Some(r) => l.replacen(
                r#"{"type":"Added","#,
                &format!(r#"{{"type":"Added","resource":"{r}","#),
                1,
            ),
            None => l.to_owned(),
        })
        .collect();
    assert_eq!(out.stdout, want);
    let name = replay_text(OLD_RECORDING, ["-o", "name"]);
    assert_eq!(
        name.stdout,
        ["ingress.networking.k8s.io/web", "widget.example.com/w"]
    );
}

#[test]
fn a_delta_that_names_its_resource_is_not_guessed_from_its_kind() {
    // A plural no guess from the kind finds ("Person" → "persons"): one resource, so no
    // KIND column, and the `~` lines name it as the recording does.
    let text = r#"{"type":"List","resource":"people.example.com","time":"2026-11-21T10:05:30.250Z","resourceVersion":"0","limit":500,"reason":"initial","streaming":false}
{"type":"Added","resource":"people.example.com","key":"default/ann","namespace":"default","name":"ann","kind":"Person","apiVersion":"example.com/v1","resourceVersion":"5","time":"2026-11-21T10:05:30.250Z","initialList":true,"object":{"apiVersion":"example.com/v1","kind":"Person","metadata":{"name":"ann","namespace":"default","resourceVersion":"5"}}}
{"type":"Synced","resource":"people.example.com","time":"2026-11-21T10:05:30.250Z"}
"#;
    let out = replay_text(text, ["-o", "json"]);
    assert_eq!(out.code(), Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, text.lines().collect::<Vec<_>>());
    let table = replay_text(text, "");
    assert_eq!(table.code(), Some(0), "{}", table.stderr);
    assert_eq!(
        table.stdout.first().map(String::as_str),
        Some("DELTA      NAME   RESOURCEVERSION   AGE"),
        "{:#?}",
        table.stdout
    );
    assert!(
        table.stderr.contains("people.example.com") && !table.stderr.contains("persons"),
        "{}",
        table.stderr
    );
}

#[test]
fn a_record_replay_cannot_read_is_named_with_its_line() {
    for (text, what) in [
        ("{\"type\":\"List\"\n", "line 1"),
        ("\n{\"type\":\"Frobnicated\",\"time\":\"x\"}\n", "line 2"),
        (
            "{\"type\":\"Synced\",\"resource\":\"pods\",\"time\":\"yesterday\"}\n",
            "line 1: bad time",
        ),
    ] {
        let out = replay_text(text, ["-o", "json"]);
        assert_eq!(out.code(), Some(1), "{text}: {}", out.stderr);
        assert!(
            out.stderr.starts_with("error: ") && out.stderr.contains(what),
            "{text}: {}",
            out.stderr
        );
        assert!(out.stdout.is_empty(), "{:#?}", out.stdout);
        let v: Result<Value, _> = serde_json::from_str(&out.stderr);
        assert!(v.is_err());
    }
}

#[test]
fn record_writes_json_lines_and_replay_renders_them_again() {
    let sim = SimProcess::start(&["--objects", "3"]);
    let file = sim.dir().join("rec.jsonl");
    let watches = watches_of(&sim, "configmaps");
    let kw = sim.start_kwatch([
        "configmaps",
        "-n",
        "default",
        "-o",
        "name",
        "--record",
        file.to_str().unwrap(),
        "--max-events",
        "4",
        "--watch-list",
        "off",
    ]);
    await_watch(&sim, "configmaps", watches);
    let before = live_names(&sim, "configmaps", "default").len();
    create(&sim, demo_configmap("r1", "v1"));
    if before + 1 < 4 {
        patch_configmap(&sim, "r1", "v2");
    }
    let out = kw.finish(LIMIT);
    assert_eq!(out.code(), Some(0), "{}", out.stderr);
    assert_eq!(out.stdout.len(), 4, "{:#?}", out.stdout);
    // A recording holds whatever was watched (Secrets too): 0600, as kubectl
    // writes its kubeconfig.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{mode:o}");
    let text = std::fs::read_to_string(&file).unwrap();
    let recorded: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(recorded[0]["type"], "List", "events are recorded too");
    let deltas: Vec<&Value> = recorded.iter().filter(|r| is_delta(r)).collect();
    assert_eq!(deltas.len(), 4);
    let names: Vec<String> = deltas
        .iter()
        .map(|r| format!("configmap/{}", r["name"].as_str().unwrap()))
        .collect();
    assert_eq!(names, out.stdout, "the recording holds what was shown");

    // Replay as JSON gives the recording back byte for byte (managedFields shown: the
    // recording keeps them for `replay --blame`, and replay hides them as the watch does).
    let replayed = |args: &[&str]| replay(sim.dir(), &file, args);
    let json = replayed(&["-o", "json", "--show-managed-fields"]);
    assert_eq!(json.code(), Some(0), "{}", json.stderr);
    assert_eq!(json.stdout, text.lines().collect::<Vec<_>>());
    let name = replayed(&["-o", "name"]);
    assert_eq!(name.stdout, out.stdout);
    let table = replayed(&[]);
    // `~` lines are diagnostics, on stderr.
    assert!(
        table.stderr.starts_with("~ list configmaps"),
        "{}",
        table.stderr
    );
    assert!(
        table
            .stdout
            .iter()
            .any(|l| cells(l) == ["DELTA", "NAME", "RESOURCEVERSION", "DATA", "AGE"]),
        "{:#?}",
        table.stdout
    );
    let missing = replayed(&[]);
    drop(missing);
    let err = replay(sim.dir(), Path::new("/nonexistent.jsonl"), "");
    assert_eq!(err.code(), Some(1));
    assert!(
        err.stderr.starts_with("error: cannot open"),
        "{}",
        err.stderr
    );
}

/// Regression: `kwatch replay` refused `-l`, `-n`, `--max-events`,
/// `--until` and `--stats`. They mean on a recording what they mean on a watch: the
/// recorded objects `-l` and `-n` select are those the server selects for the watch.
#[test]
fn replay_takes_the_watchs_stop_and_filter_flags() {
    let sim = SimProcess::start(&[]);
    let rec = sim.dir().join("rec.jsonl");
    let rec_arg = rec.to_str().expect("utf-8 path");
    let live = |extra: &[&str]| {
        let mut args = vec!["pods,configmaps", "-o", "name", "--until-synced"];
        if !extra.contains(&"-n") {
            args.push("-A");
        }
        args.extend_from_slice(extra);
        let out = sim.kwatch(&args[..]).exits(0);
        assert!(!out.stdout.is_empty(), "{args:?}");
        out
    };
    let all = live(&["--record", rec_arg]);
    let replay = |args: &[&str]| replay_within(sim.dir(), &rec, args, Duration::from_secs(20));
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    let whole = replay(&["-o", "name"]);
    assert_eq!(whole.code(), Some(0), "{}", whole.stderr);
    assert_eq!(sorted(whole.stdout.clone()), sorted(all.stdout.clone()));

    // -l and -n keep what the server's selection keeps.
    for (flag, value) in [
        ("-l", "app=api"),
        ("-l", "tier!=backend"),
        ("-n", "kube-system"),
    ] {
        let want = live(&[flag, value]);
        let have = replay(&["-o", "name", flag, value]);
        assert_eq!(have.code(), Some(0), "{}", have.stderr);
        assert!(!have.stdout.is_empty(), "{flag} {value}");
        assert!(have.stdout.len() < whole.stdout.len(), "{flag} {value}");
        assert_eq!(sorted(have.stdout), sorted(want.stdout), "{flag} {value}");
    }
    let bad = replay(&["-o", "name", "-l", "app in (x"]);
    assert_eq!(bad.code(), Some(2), "{}", bad.stderr);
    assert_eq!(bad.stderr.lines().count(), 1, "{}", bad.stderr);
    assert!(
        bad.stderr.starts_with("error: -l \"app in (x\": "),
        "{}",
        bad.stderr
    );

    // --max-events: the first N deltas, exit 0.
    let three = replay(&["-o", "name", "--max-events", "3"]);
    assert_eq!(three.code(), Some(0), "{}", three.stderr);
    assert_eq!(three.stdout, whole.stdout[..3]);

    // --until: up to the delta that meets it, exit 0; the recording ending first, exit 4.
    // The target is a name the recording holds once from its fifth line on (a name such as
    // kube-root-ca.crt stands in every namespace and would be met earlier).
    let name_of = |line: &String| line.split_once('/').expect("TYPE/NAME").1.to_owned();
    let names: Vec<String> = whole.stdout.iter().map(name_of).collect();
    let at = (4..names.len())
        .find(|&i| names.iter().filter(|n| **n == names[i]).count() == 1)
        .expect("a name the recording holds once");
    let until = format!("jsonpath={{.metadata.name}}={}", names[at]);
    let met = replay(&["-o", "name", "--until", &until]);
    assert_eq!(met.code(), Some(0), "{}", met.stderr);
    assert_eq!(met.stdout, whole.stdout[..=at]);
    let unmet = replay(&["-o", "name", "--until", "jsonpath={.metadata.name}=nowhere"]);
    assert_eq!(unmet.code(), Some(4), "{}", unmet.stderr);
    assert_eq!(unmet.stdout, whole.stdout);

    // --stats: the summary of what was replayed, on stderr.
    let stats = replay(&["-o", "name", "--stats"]);
    assert_eq!(stats.code(), Some(0), "{}", stats.stderr);
    assert_eq!(stats.stdout, whole.stdout);
    let n = whole.stdout.len();
    assert!(
        stats.stderr.starts_with("kwatch stats\n"),
        "{}",
        stats.stderr
    );
    assert!(
        stats
            .stderr
            .contains(&format!("  deltas: {n} (Replaced {n})")),
        "{}",
        stats.stderr
    );
}

/// The watch's print filters on a recording: `--watch-only`, `--types`, `--changes` and
/// `--quiet-relists` hide the deltas they hide on a watch; every other record stays.
#[test]
fn replay_applies_the_watchs_print_filters() {
    let deltas = |args: &[&str]| -> Vec<String> {
        let mut words = vec!["-o", "json"];
        words.extend_from_slice(args);
        let out = replay_text(EVERY_RECORD, words);
        assert_eq!(out.code(), Some(0), "{args:?}: {}", out.stderr);
        let recs = out.json();
        assert_eq!(recs.iter().filter(|r| !is_delta(r)).count(), 12, "{args:?}");
        recs.iter()
            .filter(|r| is_delta(r))
            .map(|r| {
                format!(
                    "{} {}",
                    r["type"].as_str().unwrap(),
                    r["key"].as_str().unwrap()
                )
            })
            .collect()
    };
    let all = [
        "Replaced default/web-1",
        "Replaced default/web-2",
        "Updated default/web-1",
        "Sync default/web-1",
        "Deleted default/web-1",
        "Deleted default/gone",
        "Deleted default/web-2",
        "Added n1",
    ];
    assert_eq!(deltas(&[]), all);
    let only = |keep: &[usize]| -> Vec<&str> { keep.iter().map(|&i| all[i]).collect() };
    // No initial list's delta.
    assert_eq!(deltas(&["--watch-only"]), only(&[2, 3, 4, 5, 6]));
    assert_eq!(
        deltas(&["--watch-only", "--types", "Updated,Deleted"]),
        only(&[2, 4, 5, 6])
    );
    assert_eq!(deltas(&["--types", "added,replaced"]), only(&[0, 1, 7]));
    // The update changed labels and the node, not data; the resync changed nothing.
    assert_eq!(deltas(&["--changes", "data"]), only(&[0, 1, 4, 5, 6, 7]));
    assert_eq!(deltas(&["--changes", "spec"]), only(&[0, 1, 2, 4, 5, 6, 7]));
    assert_eq!(deltas(&["--quiet-relists"]), only(&[0, 1, 2, 4, 5, 6, 7]));
    // Refused words are refused as the watch refuses them.
    let bad = replay_text(EVERY_RECORD, ["--types", "Frobbed"]);
    assert_eq!(bad.code(), Some(2), "{}", bad.stderr);
    assert!(bad.stderr.contains("Frobbed"), "{}", bad.stderr);
}

/// `--live` is a running informer's screen, and replay has none to show: one line, exit 2
/// (it was accepted and ignored).
#[test]
fn replay_refuses_live() {
    let out = replay_text(EVERY_RECORD, ["--live"]);
    usage_error(
        &out,
        "--live shows a running informer, not a recording",
        "replay --live",
    );
}
