//! `--timeline OUT.html`: the page of what the informers lived through, opened in headless
//! Chromium (tests/util/browser.rs) and read as a person reads it: the lanes and marks for
//! the recorded events, where and when they sit, their labels in the DOM, a click on a
//! delta showing its diff, the filters hiding what they should. The recording of a relist
//! storm across three clusters is made once ([`storm`]) and read by several tests.

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use base64::Engine as _;
use serde_json::{json, Value};

use crate::util::browser::Browser;
use crate::util::kubeconfig::{fleet_kubeconfig, Entry};
use crate::util::kwatch::{
    command, configmap, create_configmap, is_delta, kubectl_f, of_type, replay, replay_text,
    Running,
};
use crate::util::{SimProcess, LIMIT};

/// The record's time, in Unix milliseconds.
fn ms(rec: &Value) -> i64 {
    let t: jiff::Timestamp = rec["time"]
        .as_str()
        .expect("a time")
        .parse()
        .expect("RFC 3339");
    t.as_millisecond()
}

/// The JSON records of a recording.
fn records(file: &Path) -> Vec<Value> {
    std::fs::read_to_string(file)
        .expect("the recording")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON record"))
        .collect()
}

/// A page's data, read back as the page reads it (base64, gzip, JSON).
fn page_data(page: &Path) -> Value {
    let html = std::fs::read_to_string(page).expect("the page");
    let start = html
        .find("type=\"application/gzip+base64\">")
        .expect("the data element");
    let body = &html[start..];
    let b64 = &body[body.find('>').unwrap() + 1..body.find("</script>").unwrap()];
    let gz = base64::engine::general_purpose::STANDARD
        .decode(b64.trim())
        .expect("base64");
    let mut text = String::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_string(&mut text)
        .expect("gzip");
    serde_json::from_str(&text).expect("the data's JSON")
}

/// `kwatch replay FILE --timeline PAGE`, to exit 0 with nothing on stdout.
fn draw(home: &Path, file: &Path, page: &Path) {
    let out = replay(home, file, ["--timeline", page.to_str().unwrap()]).exits(0);
    assert!(out.stdout.is_empty(), "{:?}", out.stdout);
    assert!(
        out.stderr.starts_with("~ timeline of ") && out.stderr.contains("written to"),
        "{}",
        out.stderr
    );
}

/// The page open and drawn.
fn open(page: &Path) -> Browser {
    let mut b = Browser::open(page, 1600, 1000);
    let state = b.until(
        "the page drawn (or its error)",
        "window.kwatchTimeline && (kwatchTimeline.ready || kwatchTimeline.error) && \
         {ready: kwatchTimeline.ready, error: kwatchTimeline.error}",
    );
    assert_eq!(state, json!({"ready": true, "error": null}));
    b
}

/// A recording of three clusters, `a`, `b` and `c`, each with pods that churn, while
/// `kwatch pods -A --context a,b,c --stall-after 2s` records: a 410 relist in `a`, its
/// watch's connection cut in `b`, a stalled watch in `c`. Made once; its page beside it.
struct Storm {
    records: Vec<Value>,
    page: PathBuf,
}

fn storm() -> &'static Storm {
    static STORM: OnceLock<Storm> = OnceLock::new();
    STORM.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("timeline-storm-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a dir for the storm");
        let sims: Vec<SimProcess> = ["1", "2", "3"]
            .iter()
            .map(|seed| {
                SimProcess::start(&[
                    "--scenario",
                    "steady",
                    "--churn",
                    "4",
                    "--objects",
                    "6",
                    "--seed",
                    seed,
                ])
            })
            .collect();
        let entries = [
            ("a", Entry::Live(&sims[0])),
            ("b", Entry::Live(&sims[1])),
            ("c", Entry::Live(&sims[2])),
        ];
        let kc = fleet_kubeconfig(&entries, &dir);
        let file = dir.join("storm.jsonl");
        let mut cmd = command(&dir);
        cmd.arg("--kubeconfig").arg(&kc).args([
            "pods",
            "-A",
            "--context",
            "a,b,c",
            "-o",
            "json",
            "--stall-after",
            "2s",
            "--record",
        ]);
        cmd.arg(&file);
        // A cut watch is a cut watch, however short (client-go's very-short-watch rule off).
        cmd.env("KWATCH_TEST_SHORT_WATCH_MS", "0");
        let mut kw = Running::spawn(cmd);
        let seen = |v: &[Value], t: &str, c: &str, word: &str| v.iter().any(|r| is(r, t, c, word));
        kw.wait_for(LIMIT, "a watch in each context", |v| {
            ["a", "b", "c"].iter().all(|c| seen(v, "Watch", c, ""))
        });
        sims[0].forced_410(|s| {
            let cm = configmap("default", "storm", json!({}));
            let r = s.send_json(
                "POST",
                "/api/v1/namespaces/default/configmaps",
                &cm.to_string(),
            );
            assert_eq!(r.status, 201, "{}", r.body);
        });
        kw.wait_for(LIMIT, "the relist after 410 in a", |v| {
            seen(v, "List", "a", "410") && seen(v, "Watch", "a", "")
        });
        sims[1].drop_watches();
        kw.wait_for(LIMIT, "b's watch cut", |v| {
            seen(v, "WatchEnded", "b", "connection")
        });
        sims[2].control("POST", "/_sim/stall", json!({"seconds": 4}));
        kw.wait_for(LIMIT, "c's watch stalled", |v| seen(v, "Stalled", "c", ""));
        let out = kw.interrupt(LIMIT);
        assert_eq!(out.code(), Some(130), "{}", out.stderr);
        let page = dir.join("storm.html");
        draw(&dir, &file, &page);
        Storm {
            records: records(&file),
            page,
        }
    })
}

/// `r` is a record of type `t` in context `c` whose reason holds `word` (any, when empty):
/// the reason alone, as a time or a resourceVersion may hold the digits of a code.
fn is(r: &Value, t: &str, c: &str, word: &str) -> bool {
    let reason = r["reason"].as_str().unwrap_or_default();
    r["type"] == t && r["context"] == c && (word.is_empty() || reason.contains(word))
}

/// Where one informer mark's button sits, and the lane it sits in.
fn informer_mark(b: &mut Browser, kind: &str, context: &str) -> Value {
    b.eval(&format!(
        "(() => {{
            const inf = kwatchTimeline.informerRows().find(r => r.context === {context:?});
            const lane = document.querySelector(`#informers .titles .lane[data-lane='inf-${{inf.id}}']`);
            const mk = document.querySelector(`#informers .mk[data-kind={kind:?}][data-lane='inf-${{inf.id}}']`);
            if (!mk) return null;
            const r = mk.getBoundingClientRect(), l = lane.getBoundingClientRect();
            const plot = document.querySelector('#informers .plot').getBoundingClientRect();
            const t = +mk.dataset.t;
            return {{ t, label: mk.getAttribute('aria-label'), left: r.left, right: r.right,
                      top: r.top, bottom: r.bottom, laneTop: l.top, laneBottom: l.bottom,
                      laneText: lane.textContent, x: kwatchTimeline.xOf(t),
                      plotLeft: plot.left, plotRight: plot.right }};
        }})()"
    ))
}

#[test]
fn a_relist_storm_across_three_clusters_is_drawn_as_labelled_marks_at_their_times() {
    let s = storm();
    let mut b = open(&s.page);
    let start = ms(&s.records[0]);
    assert_eq!(b.eval("kwatchTimeline.view().startMs"), json!(start));
    let contexts = b.eval("kwatchTimeline.informerRows().map(r => r.context + ' ' + r.resource)");
    assert_eq!(contexts, json!(["a pods", "b pods", "c pods"]));
    // What happened, each in its context: the record, the mark it makes, the word its
    // label must hold, and when the mark starts (a stall: when the silence began).
    let first = |t: &str, c: &str, word: &str| -> &Value {
        s.records
            .iter()
            .find(|r| is(r, t, c, word))
            .unwrap_or_else(|| panic!("no {t} in {c} with {word:?}"))
    };
    let relist = first("List", "a", "410");
    let cut = first("WatchEnded", "b", "connection");
    let stall = first("Stalled", "c", "");
    let cases = [
        ("relist", "a", "410 Expired", ms(relist), true),
        ("watch-dropped", "b", "connection lost", ms(cut), true),
        (
            "stalled",
            "c",
            "stalled",
            ms(stall) - stall["silentMs"].as_i64().unwrap(),
            false,
        ),
    ];
    let mut xs = Vec::new();
    for (kind, context, word, at, point) in cases {
        let m = informer_mark(&mut b, kind, context);
        assert!(!m.is_null(), "no {kind} mark in {context}'s lane");
        assert_eq!(m["t"], json!(at - start), "{kind} in {context}: {m}");
        let label = m["label"].as_str().unwrap();
        assert!(
            label.contains(word) && label.contains(&format!("pods in {context}")),
            "{kind}: {label}"
        );
        assert!(m["laneText"].as_str().unwrap().contains(context), "{m}");
        // Where its time is on the axis: a point's button is centred on it, a span's starts
        // at it; inside the plot, inside its lane.
        let f = |k: &str| m[k].as_f64().unwrap();
        let at_x = if point {
            (f("left") + f("right")) / 2.0
        } else {
            f("left")
        };
        assert!((at_x - f("x")).abs() <= 1.5, "{kind} drawn at {at_x}: {m}");
        assert!(f("x") > f("plotLeft") && f("x") < f("plotRight"), "{m}");
        assert!(
            f("top") >= f("laneTop") && f("bottom") <= f("laneBottom"),
            "{m}"
        );
        xs.push((at, f("x")));
    }
    // Left to right in the order they happened.
    for a in &xs {
        for b in &xs {
            assert_eq!(a.0 < b.0, a.1 < b.1, "{xs:?}");
        }
    }
    // The story list tells them too, in the DOM, in time order.
    let story =
        b.eval("[...document.querySelectorAll('#story-list button')].map(b => b.textContent)");
    let story: Vec<&str> = story
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for (kind, context) in [("relist pods in a", "a"), ("pods in b", "b"), ("c", "c")] {
        assert!(
            story
                .iter()
                .any(|l| l.contains(kind) && l.contains(context)),
            "{kind}: {story:#?}"
        );
    }
    let times: Vec<&str> = story.iter().map(|l| &l[..12]).collect();
    assert!(
        times.windows(2).all(|w| w[0] <= w[1]),
        "in time order: {story:#?}"
    );
    // The legend names what the marks are.
    let legend = b.eval("document.querySelector('#legend-list').textContent");
    for word in [
        "relist",
        "connection lost",
        "stalled watch",
        "tombstone",
        "Updated",
    ] {
        assert!(legend.as_str().unwrap().contains(word), "{word}: {legend}");
    }
    // One file: nothing loaded besides it.
    assert_eq!(
        b.eval("performance.getEntriesByType('resource').length"),
        json!(0)
    );
}

#[test]
fn each_objects_deltas_sit_in_its_lane_in_order() {
    let s = storm();
    let mut b = open(&s.page);
    let start = ms(&s.records[0]);
    // What was recorded, per context and key: (time, type, resourceVersion) in order.
    let mut want: BTreeMap<(String, String), Vec<Value>> = BTreeMap::new();
    for r in s.records.iter().filter(|r| is_delta(r)) {
        let ty = match (r["type"].as_str().unwrap(), r["finalStateUnknown"] == true) {
            ("Deleted", true) => "tombstone",
            (t, _) => t,
        };
        let rv = r["resourceVersion"]
            .as_str()
            .map_or(Value::Null, |v| json!(v.parse::<u64>().unwrap()));
        let key = (
            r["context"].as_str().unwrap().to_owned(),
            r["key"].as_str().unwrap().to_owned(),
        );
        want.entry(key)
            .or_default()
            .push(json!([ms(r) - start, ty, rv]));
    }
    let rows = b.eval("kwatchTimeline.objectRows()");
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), want.len(), "a lane per object");
    for row in rows {
        let key = (
            row["context"].as_str().unwrap().to_owned(),
            row["key"].as_str().unwrap().to_owned(),
        );
        let got = b.eval(&format!(
            "kwatchTimeline.deltas({}).map(d => [d.t, d.type, d.rv])",
            row["id"]
        ));
        assert_eq!(&got, &json!(want[&key]), "{key:?}");
    }
    // On the screen: the first lanes of each context, their marks left to right in time
    // order, each inside its lane's row.
    for context in ["a", "b", "c"] {
        let lane = rows
            .iter()
            .find(|r| r["context"] == context && r["deltas"].as_u64().unwrap() >= 2)
            .unwrap_or_else(|| panic!("no lane of {context} with two deltas"));
        let id = &lane["id"];
        assert_eq!(
            b.eval(&format!("kwatchTimeline.revealLane({id})")),
            json!(true)
        );
        let seen = b.until(
            "the lane's marks in the DOM",
            &format!(
                "(() => {{
                    const title = document.querySelector(`#objects .titles .lane[data-lane='obj-{id}']`);
                    const marks = [...document.querySelectorAll(`#objects .mk[data-lane='obj-{id}']`)];
                    if (!title || !marks.length) return null;
                    const t = title.getBoundingClientRect();
                    return {{ title: title.textContent, top: t.top, bottom: t.bottom,
                        marks: marks.map(m => {{ const r = m.getBoundingClientRect();
                            return [+m.dataset.t, (r.left + r.right) / 2, r.top, r.bottom, m.getAttribute('aria-label')]; }}) }};
                }})()"
            ),
        );
        let marks = seen["marks"].as_array().unwrap();
        assert_eq!(
            marks.len(),
            want[&(context.to_owned(), lane["key"].as_str().unwrap().to_owned())].len()
        );
        assert!(seen["title"]
            .as_str()
            .unwrap()
            .contains(lane["name"].as_str().unwrap()));
        let (top, bottom) = (
            seen["top"].as_f64().unwrap(),
            seen["bottom"].as_f64().unwrap(),
        );
        for w in marks.windows(2) {
            assert!(
                w[0][0].as_i64() <= w[1][0].as_i64(),
                "in time order: {marks:?}"
            );
            assert!(
                w[0][1].as_f64() <= w[1][1].as_f64(),
                "left to right: {marks:?}"
            );
        }
        for m in marks {
            assert!(
                m[2].as_f64().unwrap() >= top && m[3].as_f64().unwrap() <= bottom,
                "{m}"
            );
            assert!(
                m[4].as_str()
                    .unwrap()
                    .contains(lane["key"].as_str().unwrap()),
                "{m}"
            );
        }
    }
}

#[test]
fn the_filters_hide_what_they_should() {
    let s = storm();
    let mut b = open(&s.page);
    let lanes_of = |b: &mut Browser, context: &str| {
        b.eval(&format!(
            "kwatchTimeline.objectRows().filter(r => r.context === {context:?}).length"
        ))
    };
    assert!(lanes_of(&mut b, "b").as_u64().unwrap() > 0);
    // A click on context b's box takes b's lanes, marks and story away.
    let boxed = b.eval(
        "(() => { const r = document.querySelector(\"#f-context input[value='b']\").getBoundingClientRect();
                  return [r.left + r.width / 2, r.top + r.height / 2]; })()",
    );
    b.click(boxed[0].as_f64().unwrap(), boxed[1].as_f64().unwrap());
    b.until(
        "context b filtered out",
        "kwatchTimeline.informerRows().every(r => r.context !== 'b')",
    );
    assert_eq!(lanes_of(&mut b, "b"), json!(0));
    assert!(lanes_of(&mut b, "a").as_u64().unwrap() > 0);
    let dom = b.eval(
        "({titles: [...document.querySelectorAll('#informers .titles .lane')].map(l => l.textContent),
           story: [...document.querySelectorAll('#story-list button')].filter(x => / b /.test(x.textContent)).length})",
    );
    let titles = dom["titles"].as_array().unwrap();
    assert_eq!(titles.len(), 2, "{dom}");
    assert!(
        titles
            .iter()
            .all(|t| !t.as_str().unwrap().contains("podsb")),
        "{dom}"
    );
    assert_eq!(dom["story"], json!(0), "{dom}");
    // Only deletions: every lane left has one, and no other mark is in the DOM.
    b.eval("kwatchTimeline.filter({types: ['Deleted', 'tombstone']})");
    let left = b.eval(
        "({lanes: kwatchTimeline.objectRows().map(r => kwatchTimeline.deltas(r.id).some(d => d.type === 'Deleted' || d.type === 'tombstone')),
           others: [...document.querySelectorAll('#objects .mk')].filter(m => !['Deleted', 'tombstone'].includes(m.dataset.type)).length})",
    );
    assert!(
        left["lanes"].as_array().unwrap().iter().all(|v| v == true),
        "{left}"
    );
    assert_eq!(left["others"], json!(0));
    // A search for a name keeps its lane only.
    b.eval("kwatchTimeline.filter({types: ['Added', 'Updated', 'Deleted', 'tombstone', 'Replaced', 'Sync', 'ReplacedAll', 'SyncAll']})");
    let name = b.eval("kwatchTimeline.objectRows()[0].name");
    let name = name.as_str().unwrap();
    let at = b.eval(
        "(() => { const r = document.querySelector('#search').getBoundingClientRect(); return [r.left + 5, r.top + 5]; })()",
    );
    b.click(at[0].as_f64().unwrap(), at[1].as_f64().unwrap());
    b.call("Input.insertText", json!({"text": name}));
    let found = b.until(
        "the search applied",
        &format!(
            "kwatchTimeline.objectRows().length > 0 && kwatchTimeline.objectRows().every(r => r.name.includes({name:?})) && kwatchTimeline.objectRows()"
        ),
    );
    assert_eq!(found.as_array().unwrap().len(), 1, "{found}");
}

/// A ConfigMap created then replaced while `kwatch configmaps -n default` records (with
/// `extra` flags): the recording, once the update is in.
fn configmap_recording(sim: &SimProcess, extra: &[&str]) -> (Running, PathBuf) {
    let mut args = vec![
        "configmaps",
        "-n",
        "default",
        "-o",
        "json",
        "--watch-list",
        "off",
    ];
    args.extend(extra);
    let (mut kw, file) = sim.start_recording("cm.jsonl", args);
    kw.wait_for(LIMIT, "Watch", |v| !of_type(v, "Watch").is_empty());
    create_configmap(sim, "default", "demo", json!({"a": "1"}));
    kubectl_f(
        sim,
        "replace",
        &configmap("default", "demo", json!({"a": "2"})),
    );
    kw.wait_for(LIMIT, "the update", |v| {
        v.iter()
            .any(|r| r["type"] == "Updated" && r["key"] == "default/demo")
    });
    (kw, file)
}

#[test]
fn a_click_on_an_update_shows_its_diff_and_who_made_it() {
    let sim = SimProcess::start(&[]);
    let (kw, file) = configmap_recording(&sim, &[]);
    kw.interrupt(LIMIT).exits(130);
    let page = sim.dir().join("cm.html");
    draw(sim.dir(), &file, &page);
    let mut b = open(&page);
    let at = b.until(
        "the update's mark",
        "(() => { const m = [...document.querySelectorAll(\"#objects .mk[data-type='Updated']\")]
                     .find(m => m.getAttribute('aria-label').includes('default/demo'));
                  if (!m) return null;
                  const r = m.getBoundingClientRect();
                  return [r.left + r.width / 2, r.top + r.height / 2, m.getAttribute('aria-label'), +m.dataset.id]; })()",
    );
    // The pointer sits on whole pixels (a mouse event's clientX is one): `off` is how far
    // the mark's centre is from it.
    let (x, y) = (
        at[0].as_f64().unwrap().round(),
        at[1].as_f64().unwrap().round(),
    );
    let off = at[0].as_f64().unwrap() - x;
    assert!(
        at[2]
            .as_str()
            .unwrap()
            .starts_with("Updated configmaps default/demo rv="),
        "{at}"
    );
    b.click(x, y);
    let details = b.until(
        "the details of the update",
        "document.querySelector('#details .diff') && document.querySelector('#details').innerText",
    );
    let details = details.as_str().unwrap();
    assert!(details.contains("Updated default/demo"), "{details}");
    assert!(details.contains(".data.a: \"1\" → \"2\""), "{details}");
    // Who made it, as managedFields say: kubectl's replace, an Update.
    assert!(details.contains("← kubectl"), "{details}");
    assert!(details.contains("(Update"), "{details}");
    // The address names it: a link with it opens the page on this delta.
    assert_eq!(b.eval("location.hash"), json!(format!("#delta={}", at[3])));
    // Ctrl and the wheel zoom in around the pointer: the mark stays under it (its distance
    // from the pointer grows by the zoom's factor, no more).
    let before = b.eval("kwatchTimeline.view()");
    let renders = b.eval("kwatchTimeline.renders").as_u64().unwrap();
    b.wheel(x, y, -600.0, true);
    b.until(
        "the zoom drawn",
        &format!("kwatchTimeline.renders > {renders}"),
    );
    let now = b.eval(&format!(
        "(() => {{ const m = [...document.querySelectorAll(\"#objects .mk[data-type='Updated']\")]
                     .find(m => m.getAttribute('aria-label').includes('default/demo'));
                   const r = m.getBoundingClientRect();
                   return [kwatchTimeline.view(), r.left + r.width / 2 - {x}]; }})()"
    ));
    let (after, moved) = (&now[0], now[1].as_f64().unwrap());
    let span = |v: &Value| v["t1"].as_f64().unwrap() - v["t0"].as_f64().unwrap();
    assert!(span(after) < span(&before) / 2.0, "{before} → {after}");
    let expected = off * span(&before) / span(after);
    assert!(
        (moved - expected).abs() < 1.0,
        "the mark {off} px from the pointer is {moved} px from it after the zoom, not {expected}"
    );
}

#[test]
fn a_live_run_writes_the_page_its_recording_replays_to() {
    let sim = SimProcess::start(&[]);
    let live = sim.dir().join("live.html");
    let (kw, file) = configmap_recording(&sim, &["--timeline", live.to_str().unwrap()]);
    let out = kw.interrupt(LIMIT).exits(130);
    assert!(
        out.stderr
            .contains(&format!("written to {}", live.display())),
        "{}",
        out.stderr
    );
    let replayed = sim.dir().join("replayed.html");
    draw(sim.dir(), &file, &replayed);
    let (mut a, mut b) = (page_data(&live), page_data(&replayed));
    assert_eq!(a["title"], "live run");
    assert_eq!(b["title"], "cm.jsonl");
    for d in [&mut a, &mut b] {
        d.as_object_mut().unwrap().remove("title");
    }
    assert_eq!(a, b, "the same page");
    assert!(a["deltas"]["t"].as_array().unwrap().len() >= 2, "{a}");
}

#[test]
fn every_record_type_of_a_recording_is_drawn() {
    let out = tempfile::tempdir().unwrap();
    let page = out.path().join("every.html");
    let done = replay_text(
        crate::replay::EVERY_RECORD,
        ["--timeline", page.to_str().unwrap()],
    )
    .exits(0);
    assert!(done.stdout.is_empty(), "{:?}", done.stdout);
    let mut b = open(&page);
    let totals = b.eval("kwatchTimeline.totals()");
    assert_eq!(totals["informers"], json!(2), "{totals}");
    // web-1, web-2, the tombstone without a last state, the node.
    assert_eq!(totals["objects"], json!(4), "{totals}");
    assert_eq!(totals["deltas"], json!(8), "{totals}");
    let kinds = b.eval("[...new Set(kwatchTimeline.marks().map(m => m.kind))].sort()");
    assert_eq!(
        kinds,
        json!([
            "backoff",
            "bookmark",
            "list",
            "note",
            "resync",
            "retry",
            "synced",
            "watch",
            "watch-expired"
        ])
    );
    let tombstones = b.eval(
        "kwatchTimeline.objectRows().flatMap(r => kwatchTimeline.deltas(r.id)).filter(d => d.type === 'tombstone').length",
    );
    assert_eq!(tombstones, json!(2));
    // An update from a known version carries its diff; the page shows it on selection.
    let id = b.eval(
        "kwatchTimeline.objectRows().flatMap(r => kwatchTimeline.deltas(r.id)).find(d => d.type === 'Updated').id",
    );
    b.eval(&format!("kwatchTimeline.select('delta', {id})"));
    let text = b.eval("document.querySelector('#details').innerText");
    assert!(
        text.as_str()
            .unwrap()
            .contains(".spec.nodeName: \"n1\" → \"n2\""),
        "{text}"
    );
}

#[test]
fn a_page_that_cannot_be_written_or_a_flag_that_prints_is_one_line_naming_the_fix() {
    let rec = crate::replay::EVERY_RECORD;
    let out = replay_text(rec, ["--timeline", "/nonexistent/dir/t.html"]).exits(1);
    assert!(out.stdout.is_empty());
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(
        out.stderr
            .starts_with("error: --timeline /nonexistent/dir/t.html: cannot create it")
            && out
                .stderr
                .contains("give a path in a directory that exists"),
        "{}",
        out.stderr
    );
    for (args, words) in [
        (vec!["--timeline", "t.html", "-o", "json"], "drop -o"),
        (vec!["--timeline", "t.html", "--live"], "drop --live"),
        (vec!["--timeline", "-"], "not to stdout"),
    ] {
        let out = replay_text(rec, &args[..]).exits(2);
        assert_eq!(out.stderr.lines().count(), 1, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(words), "{args:?}: {}", out.stderr);
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    }
    let sim = SimProcess::start(&[]);
    let out = sim
        .kwatch("configmaps -n default --until-synced --timeline /nonexistent/t.html")
        .exits(1);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(out.stderr.contains("cannot create it"), "{}", out.stderr);
}

/// The benchmark's (benches/timeline.sh): opens the page `KWATCH_TIMELINE_PAGE` names
/// `KWATCH_TIMELINE_RUNS` times (default 5) in a fresh browser each time, and prints one
/// line per load: the page's own measure of its load, from the navigation's start to its
/// first drawing (`kwatchTimeline.loadMs`). It asserts that the page drew, not how fast.
#[test]
#[ignore = "the benchmark's: benches/timeline.sh runs it"]
fn timeline_page_load() {
    let page = PathBuf::from(std::env::var("KWATCH_TIMELINE_PAGE").expect("KWATCH_TIMELINE_PAGE"));
    let runs: usize = std::env::var("KWATCH_TIMELINE_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(5);
    for _ in 0..runs {
        let mut b = open(&page);
        let m = b.eval("({loadMs: kwatchTimeline.loadMs, totals: kwatchTimeline.totals()})");
        assert!(m["totals"]["deltas"].as_u64().unwrap() > 0, "{m}");
        println!("timeline-load {}", m);
    }
}

#[test]
fn a_followed_graphs_objects_sit_under_their_owner() {
    let sim = SimProcess::start(&["--controllers"]);
    let file = sim.dir().join("follow.jsonl");
    let args = [
        "deploy/web",
        "-n",
        "default",
        "--follow",
        "--until-synced",
        "-o",
        "name",
        "--record",
        file.to_str().unwrap(),
    ];
    sim.kwatch(args).success();
    let page = sim.dir().join("follow.html");
    draw(sim.dir(), &file, &page);
    let mut b = open(&page);
    let rows = b.eval(
        "kwatchTimeline.objectRows().map(r => {
            const t = document.querySelector(`#objects .titles .lane[data-lane='obj-${r.id}']`);
            return [r.path, t ? parseFloat(t.style.paddingLeft) : null];
        })",
    );
    let rows = rows.as_array().unwrap();
    let paths: Vec<&str> = rows.iter().map(|r| r[0].as_str().unwrap()).collect();
    // The Deployment first, then what it owns, each owner before what it owns.
    assert_eq!(paths[0], "deploy/web", "{paths:#?}");
    assert!(paths.iter().any(|p| p.contains(" › rs/")), "{paths:#?}");
    assert!(paths.iter().any(|p| p.contains(" › pod/")), "{paths:#?}");
    for (i, p) in paths.iter().enumerate().skip(1) {
        let owner = p.rsplit_once(" › ").unwrap().0;
        let at = paths.iter().position(|q| *q == owner);
        assert!(
            at.is_some_and(|a| a < i),
            "{p} before its owner: {paths:#?}"
        );
    }
    // Indented by depth, in the DOM.
    let indent = |depth: usize| {
        rows.iter()
            .find(|r| r[0].as_str().unwrap().matches(" › ").count() == depth)
            .and_then(|r| r[1].as_f64())
            .unwrap()
    };
    assert!(indent(0) < indent(1) && indent(1) < indent(2), "{rows:#?}");
    let group = b.eval("document.querySelector('#objects .titles .lane.group').textContent");
    assert_eq!(group, json!("deploy/web"));
}
