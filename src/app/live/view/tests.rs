//! The live view rendered into ratatui's `TestBackend`, as snapshots (reviewed like the
//! table's, crates/core/src/output/snapshots/).

use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::Modifier;
use ratatui::Terminal;

use super::*;
use crate::cache::delta::{Delta, DeltaType};
use crate::cache::object::ObjectRef;
use crate::cache::reflector::ReflectorEvent;
use crate::cache::testutil::object;
use crate::client::target::Resource;
use crate::context::ContextName;
use crate::informer::record::{Body, Record};
use crate::informer::sink::Sink;
use crate::output::live::{lock, LivePrinter, Shared};
use crate::output::Options;

fn pod(name: &str, rv: &str, phase: &str, app: &str) -> ObjectRef {
    object(&format!(
        r#"{{"metadata":{{"name":"{name}","namespace":"default","resourceVersion":"{rv}","creationTimestamp":"2026-11-21T10:00:00Z","labels":{{"app":"{app}"}}}},"spec":{{"nodeName":"n1","containers":[{{"name":"c"}}]}},"status":{{"phase":"{phase}"}}}}"#
    ))
}

fn t(s: u32) -> jiff::Timestamp {
    format!("2026-11-21T10:05:{s:02}Z").parse().unwrap()
}

struct Feed {
    p: LivePrinter,
    model: Shared,
    r: Resource,
    /// The context of the records fed (`None`: one cluster).
    context: Option<ContextName>,
    /// The last version of each key, the `prev` the informer passes.
    last: std::collections::HashMap<String, ObjectRef>,
}

impl Feed {
    fn new(opts: Options) -> Feed {
        Feed::keeping(opts, crate::output::live::HISTORY as usize)
    }

    /// A feed whose rows keep `history` versions (`--live-history`).
    fn keeping(opts: Options, history: usize) -> Feed {
        let model = Shared::default();
        Feed {
            p: LivePrinter::new(opts, model.clone(), history),
            model,
            r: Resource::pods(),
            context: None,
            last: Default::default(),
        }
    }

    fn rec(&mut self, at: u32, body: Body<'_>) {
        self.rec_in(at, body, None);
    }

    /// A record of the object at owner path `follow` (`--follow`), or of no tree.
    fn rec_in(
        &mut self,
        at: u32,
        body: Body<'_>,
        follow: Option<&crate::informer::record::Followed>,
    ) {
        let rec = Record {
            resource: &self.r,
            context: self.context.as_ref(),
            time: t(at),
            body,
            informer: crate::informer::record::InformerInfo {
                client_go: Some("0.32"),
                queue: Some("DeltaFIFO"),
                batch: None,
            },
            blame: Default::default(),
            follow,
        };
        self.p.record(&rec).unwrap();
    }

    fn event(&mut self, at: u32, e: ReflectorEvent) {
        self.rec(at, Body::Event(&e));
    }

    fn delta(&mut self, at: u32, kind: DeltaType, o: ObjectRef) {
        let key = format!("default/{}", o.meta().name);
        let prev = self.last.get(&key).cloned();
        let d = Delta::new(kind, o.clone());
        self.rec(
            at,
            Body::Delta {
                key: &key,
                delta: &d,
                initial_list: false,
                prev: prev.as_ref(),
            },
        );
        self.last.insert(key, o);
        // The render loop's frame in between (every 33 ms; these deltas are seconds
        // apart): it makes the cells of the rows it shows, here all of them.
        lock(&self.model).refresh_all(t(at));
    }

    /// `--follow`: a delta of the object at owner path `path` (steps joined by
    /// [`crate::informer::record::PATH_SEPARATOR`]), then a frame.
    fn followed(&mut self, at: u32, kind: DeltaType, path: &[&str], o: ObjectRef) {
        let key = format!("default/{}", o.meta().name);
        let d = Delta::new(kind, o);
        let f = crate::informer::record::Followed {
            path: path.join(crate::informer::record::PATH_SEPARATOR).into(),
            change: None,
        };
        let body = Body::Delta {
            key: &key,
            delta: &d,
            initial_list: false,
            prev: None,
        };
        self.rec_in(at, body, Some(&f));
        lock(&self.model).refresh_all(t(at));
    }

    /// `--follow`'s tree of a deployment: web, its replica set web-1 and that one's
    /// pods web-1-a and web-1-b.
    fn web_tree() -> Feed {
        let mut f = Feed::new(Options::default());
        for path in WEB_TREE {
            let name = path[path.len() - 1].split_once('/').unwrap().1;
            f.followed(
                0,
                DeltaType::Replaced,
                path,
                pod(name, "100", "Running", "web"),
            );
        }
        f
    }

    /// The initial list of three pods, then Synced and a watch.
    fn listed() -> Feed {
        let mut f = Feed::new(Options::default());
        f.event(0, ReflectorEvent::list("", 500, "initial", false));
        f.event(
            0,
            ReflectorEvent::listed("100", 3, "json", 4214)
                .took(std::time::Duration::from_millis(12)),
        );
        for (n, app) in [("web-1", "web"), ("web-2", "web"), ("db-0", "db")] {
            f.delta(0, DeltaType::Replaced, pod(n, "100", "Running", app));
        }
        f.rec(0, Body::Synced);
        f.event(
            0,
            ReflectorEvent::Watch {
                resource_version: "100".into(),
                timeout_seconds: 300,
            },
        );
        f
    }

    /// [`Feed::listed`], then one delta at t=20.
    fn listed_then(kind: DeltaType, o: ObjectRef) -> Feed {
        let mut f = Feed::listed();
        f.delta(20, kind, o);
        f
    }

    /// The initial list, then web-2 updated to Failed.
    fn web_2_failed() -> Feed {
        Feed::listed_then(DeltaType::Updated, pod("web-2", "105", "Failed", "web"))
    }

    fn draw(&self, ui: &mut Ui, w: u16, h: u16, now: u32) -> Buffer {
        let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
        let mut m = lock(&self.model).clone();
        term.draw(|fr| ui.draw(fr, &mut m, t(now))).unwrap();
        term.backend().buffer().clone()
    }

    fn act(&self, ui: &mut Ui, a: Action) {
        let mut m = lock(&self.model).clone();
        assert!(ui.act(a, &mut m));
    }
}

/// The owner paths of [`Feed::web_tree`]'s rows.
const WEB_TREE: [&[&str]; 4] = [
    &["deploy/web"],
    &["deploy/web", "rs/web-1"],
    &["deploy/web", "rs/web-1", "pod/web-1-a"],
    &["deploy/web", "rs/web-1", "pod/web-1-b"],
];

/// The buffer's text, one line per row, trailing blanks trimmed.
fn text(b: &Buffer) -> String {
    let a = b.area;
    (0..a.height)
        .map(|y| {
            let line: String = (0..a.width)
                .map(|x| b[(x, y)].symbol().to_owned())
                .collect();
            line.trim_end().to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The selected row's line (the one `>` starts).
fn selected(b: &Buffer) -> String {
    let s = text(b);
    let mut sel = s.lines().filter(|l| l.starts_with('>'));
    let line = sel
        .next()
        .unwrap_or_else(|| panic!("no row selected:\n{s}"));
    assert!(sel.next().is_none(), "one row selected:\n{s}");
    line.to_owned()
}

/// The cell where `needle` starts on the line holding `on`.
fn find<'a>(b: &'a Buffer, on: &str, needle: &str) -> &'a ratatui::buffer::Cell {
    let s = text(b);
    for (y, l) in s.lines().enumerate() {
        if l.contains(on) {
            let x = l[..l.find(needle).unwrap()].chars().count();
            return &b[(x as u16, y as u16)];
        }
    }
    panic!("{on:?} not on screen:\n{s}");
}

#[test]
fn initial_list() {
    let f = Feed::listed();
    let b = f.draw(&mut Ui::new(false), 120, 16, 10);
    insta::assert_snapshot!(text(&b));
}

#[test]
fn an_update_highlights_the_changed_cell_then_fades() {
    let f = Feed::web_2_failed();
    let mut ui = Ui::new(true);
    let b = f.draw(&mut ui, 120, 16, 21);
    insta::assert_snapshot!(text(&b));
    let changed = find(&b, "web-2", "Failed");
    assert!(changed.modifier.contains(Modifier::BOLD), "{changed:?}");
    assert_eq!(changed.fg, ratatui::style::Color::Yellow);
    let name = find(&b, "web-2", "web-2");
    assert_eq!(name.fg, ratatui::style::Color::Reset, "NAME did not change");
    // A few seconds later the highlight is gone, the value stays.
    let b = f.draw(&mut ui, 120, 16, 30);
    assert_eq!(find(&b, "web-2", "Failed").fg, ratatui::style::Color::Reset);
}

#[test]
fn no_color_marks_changes_with_reverse_and_a_marker() {
    let f = Feed::web_2_failed();
    let b = f.draw(&mut Ui::new(false), 120, 16, 21);
    insta::assert_snapshot!(text(&b));
    let changed = find(&b, "web-2", "Failed");
    assert!(changed.modifier.contains(Modifier::REVERSED));
    assert_eq!(changed.fg, ratatui::style::Color::Reset, "no colour");
    assert!(text(&b).contains(" *Updated"));
}

#[test]
fn a_delete_fades_then_leaves() {
    let f = Feed::listed_then(DeltaType::Deleted, pod("db-0", "106", "Running", "db"));
    let mut ui = Ui::new(false);
    let b = f.draw(&mut ui, 120, 16, 21);
    insta::assert_snapshot!(text(&b));
    let gone = find(&b, "db-0", "db-0");
    assert!(gone.modifier.contains(Modifier::CROSSED_OUT));
    crate::output::live::lock(&f.model).prune(t(30));
    let b = f.draw(&mut ui, 120, 16, 30);
    assert!(!text(&b).contains("db-0 "), "{}", text(&b));
}

#[test]
fn a_relist_counts_in_the_header() {
    let mut f = Feed::listed();
    f.event(
        20,
        ReflectorEvent::WatchEnded {
            reason: "410 Gone: too old resource version".into(),
            events: 4,
            bookmarks: 0,
            elapsed: std::time::Duration::from_secs(20),
            error: true,
        },
    );
    f.event(
        20,
        ReflectorEvent::Backoff {
            delay: std::time::Duration::from_millis(800),
            cause: "410 Gone".into(),
        },
    );
    f.event(21, ReflectorEvent::list("", 500, "410 Gone", false));
    let b = f.draw(&mut Ui::new(false), 160, 16, 22);
    insta::assert_snapshot!(text(&b));
    assert!(text(&b).contains("relists 1 retries 0 backoffs 1"));
}

#[test]
fn history_shows_every_delta_with_its_diff() {
    let f = Feed::web_2_failed();
    let mut ui = Ui::new(false);
    f.draw(&mut ui, 120, 16, 21);
    f.act(&mut ui, Action::Down);
    f.act(&mut ui, Action::Down);
    f.act(&mut ui, Action::Enter);
    let b = f.draw(&mut ui, 120, 16, 21);
    insta::assert_snapshot!(text(&b));
    assert!(text(&b).contains(".status.phase: \"Running\" → \"Failed\""));
}

#[test]
fn history_keeps_the_last_live_history_versions() {
    let mut f = Feed::keeping(Options::default(), 2);
    for (at, rv, phase) in [
        (1, "101", "Pending"),
        (2, "102", "Running"),
        (3, "103", "Failed"),
    ] {
        f.delta(at, DeltaType::Updated, pod("web-2", rv, phase, "web"));
    }
    let m = lock(&f.model);
    let rvs: Vec<&str> = m
        .rows
        .values()
        .flat_map(|r| &r.history)
        .map(|v| v.rv.as_str())
        .collect();
    assert_eq!(rvs, ["102", "103"]);
}

#[test]
fn yaml_shows_the_current_object() {
    let f = Feed::listed();
    let mut ui = Ui::new(false);
    f.act(&mut ui, Action::Yaml);
    let b = f.draw(&mut ui, 80, 30, 21);
    assert!(text(&b).contains("name: db-0"), "{}", text(&b));
}

#[test]
fn filter_by_substring_and_label() {
    let f = Feed::listed();
    let mut ui = Ui::new(false);
    f.act(&mut ui, Action::Filter);
    for c in "web".chars() {
        f.act(&mut ui, Action::Char(c));
    }
    let b = f.draw(&mut ui, 120, 16, 10);
    insta::assert_snapshot!(text(&b));
    assert!(!text(&b).contains("db-0"));
    f.act(&mut ui, Action::Enter);
    ui.filter = "app=db".into();
    let b = f.draw(&mut ui, 120, 16, 10);
    let s = text(&b);
    assert!(s.contains("db-0") && !s.contains("web-1"), "{s}");
}

/// With several contexts, `@TEXT` keeps the rows of the contexts whose name holds TEXT.
#[test]
fn filter_by_context() {
    let mut f = Feed::new(Options {
        contexts: true,
        ..Options::default()
    });
    for (i, ctx) in ["prod-eu", "dev"].into_iter().enumerate() {
        f.context = Some(ctx.into());
        let name = format!("web-{ctx}");
        f.delta(
            i as u32,
            DeltaType::Added,
            pod(&name, "100", "Running", "web"),
        );
    }
    let mut ui = Ui::new(false);
    ui.filter = "@prod".into();
    let s = text(&f.draw(&mut ui, 120, 16, 10));
    assert!(s.contains("web-prod-eu") && !s.contains("web-dev"), "{s}");
    ui.filter = "@nowhere".into();
    let s = text(&f.draw(&mut ui, 120, 16, 10));
    assert!(!s.contains("web-prod-eu") && !s.contains("web-dev"), "{s}");
}

#[test]
fn sort_cycles_columns_and_reverses() {
    let f = Feed::listed();
    let mut ui = Ui::new(false);
    // DELTA, NAMESPACE-less NAME: the second column.
    f.act(&mut ui, Action::Sort);
    f.act(&mut ui, Action::Sort);
    f.act(&mut ui, Action::Reverse);
    let b = f.draw(&mut ui, 120, 16, 10);
    insta::assert_snapshot!(text(&b));
    let s = text(&b);
    assert!(s.find("web-2").unwrap() < s.find("db-0").unwrap(), "{s}");
}

#[test]
fn pause_freezes_the_screen_and_counts_changes() {
    let mut f = Feed::listed();
    let mut ui = Ui::new(false);
    f.act(&mut ui, Action::Pause);
    f.delta(20, DeltaType::Updated, pod("web-2", "105", "Failed", "web"));
    f.delta(21, DeltaType::Updated, pod("web-1", "106", "Failed", "web"));
    let b = f.draw(&mut ui, 120, 16, 22);
    insta::assert_snapshot!(text(&b));
    assert!(text(&b).contains("PAUSED: 2 changes while paused"));
    assert!(!text(&b).contains("Failed"));
    f.act(&mut ui, Action::Pause);
    assert!(text(&f.draw(&mut ui, 120, 16, 22)).contains("Failed"));
}

#[test]
fn narrow_and_wide_screens() {
    let f = Feed::web_2_failed();
    insta::assert_snapshot!("narrow_60", text(&f.draw(&mut Ui::new(false), 60, 14, 21)));
    insta::assert_snapshot!("wide_240", text(&f.draw(&mut Ui::new(false), 240, 14, 21)));
}

#[test]
fn control_characters_are_escaped() {
    let mut f = Feed::listed();
    f.delta(
        20,
        DeltaType::Added,
        pod("evil", "107", "Run\\u001b[2Jning", "web"),
    );
    let s = text(&f.draw(&mut Ui::new(false), 120, 16, 21));
    assert!(!s.contains('\u{1b}'), "{s}");
}

#[test]
fn a_delta_makes_no_cells_until_its_row_is_shown() {
    let mut f = Feed::new(Options::default());
    for i in 0..50 {
        let o = pod(&format!("p-{i:02}"), "7", "Running", "web");
        let d = Delta::new(DeltaType::Added, o);
        let key = format!("default/p-{i:02}");
        f.rec(
            1,
            Body::Delta {
                key: &key,
                delta: &d,
                initial_list: false,
                prev: None,
            },
        );
    }
    let made = |m: &Model| m.rows.values().filter(|r| !r.cells.is_empty()).count();
    assert_eq!(made(&lock(&f.model)), 0, "the informer made cells");
    // 11 lines: 2 of header, 1 table header, 2 rows, 6 of event pane.
    let mut term = Terminal::new(TestBackend::new(120, 11)).unwrap();
    let mut ui = Ui::new(false);
    term.draw(|fr| ui.draw(fr, &mut lock(&f.model), t(2)))
        .unwrap();
    let s = text(term.backend().buffer());
    assert!(
        s.contains("p-00") && s.contains("p-01") && !s.contains("p-02"),
        "{s}"
    );
    assert_eq!(made(&lock(&f.model)), 2, "cells only for the rows shown");
    // Sorting by a column needs every row's cells.
    ui.act(Action::Sort, &mut lock(&f.model));
    term.draw(|fr| ui.draw(fr, &mut lock(&f.model), t(2)))
        .unwrap();
    assert_eq!(made(&lock(&f.model)), 50);
}

/// The shown rows' ages count to the frame's time, made again once a
/// second (an object created during the session is not `0s` minutes later), and an age
/// that moved is not a change.
#[test]
fn ages_advance_without_marking_a_change() {
    let mut f = Feed::listed();
    let fresh = pod("web-3", "110", "Running", "web")
        .raw()
        .replace("2026-11-21T10:00:00Z", "2026-11-21T10:05:20Z");
    f.delta(20, DeltaType::Added, object(&fresh));
    let mut ui = Ui::new(true);
    let row = |b: &Buffer, name: &str| {
        text(b)
            .lines()
            .find(|l| l.contains(name))
            .map(str::to_owned)
            .unwrap_or_default()
    };
    let b = f.draw(&mut ui, 120, 16, 50);
    assert!(row(&b, "web-3").ends_with(" 30s"), "{}", text(&b));
    assert!(row(&b, "web-1").ends_with(" 5m50s"), "{}", text(&b));
    let b = f.draw(&mut ui, 120, 16, 59);
    assert!(row(&b, "web-1").ends_with(" 5m59s"), "{}", text(&b));
    assert!(
        row(&b, "web-1").starts_with("  Replaced"),
        "no `*`: {}",
        text(&b)
    );
    assert_eq!(find(&b, "web-1", "5m59s").fg, ratatui::style::Color::Reset);
}

/// "event Ns ago" counts from the last watch event (a delta the watch
/// brought, or a bookmark), not from a list, and a relist or a retry does not reset it.
#[test]
fn event_ago_counts_from_the_last_watch_event() {
    let mut f = Feed::listed();
    let header = |b: &Buffer| text(b).lines().next().unwrap_or_default().to_owned();
    let b = f.draw(&mut Ui::new(false), 200, 16, 10);
    assert!(header(&b).contains("| event never |"), "{}", header(&b));
    f.delta(20, DeltaType::Updated, pod("web-2", "105", "Failed", "web"));
    let b = f.draw(&mut Ui::new(false), 200, 16, 25);
    assert!(header(&b).contains("| event 5s ago |"), "{}", header(&b));
    f.event(30, ReflectorEvent::list("", 500, "410 Gone", false));
    f.delta(
        31,
        DeltaType::Replaced,
        pod("web-2", "107", "Failed", "web"),
    );
    let b = f.draw(&mut Ui::new(false), 200, 16, 32);
    assert!(header(&b).contains("| event 12s ago |"), "{}", header(&b));
    f.event(
        40,
        ReflectorEvent::Bookmark {
            resource_version: "120".into(),
        },
    );
    let b = f.draw(&mut Ui::new(false), 200, 16, 41);
    assert!(
        header(&b).contains("| event 1s ago | bookmark 1s ago"),
        "{}",
        header(&b)
    );
}

/// The filter line edits as a shell's: Backspace, Ctrl-W (a word),
/// Ctrl-U (the line), Esc (cancels, clearing it).
#[test]
fn the_filter_line_edits_as_a_shell() {
    let f = Feed::listed();
    let mut ui = Ui::new(false);
    f.act(&mut ui, Action::Filter);
    for c in "db zz".chars() {
        f.act(&mut ui, Action::Char(c));
    }
    f.act(&mut ui, Action::DeleteWord);
    assert_eq!(ui.filter, "db ");
    f.act(&mut ui, Action::DeleteWord);
    assert_eq!(ui.filter, "");
    for c in "web-9".chars() {
        f.act(&mut ui, Action::Char(c));
    }
    f.act(&mut ui, Action::Backspace);
    assert_eq!(ui.filter, "web-");
    f.act(&mut ui, Action::ClearLine);
    assert_eq!(ui.filter, "");
    f.act(&mut ui, Action::Char('d'));
    f.act(&mut ui, Action::Back);
    assert!(!ui.editing && ui.filter.is_empty(), "{ui:?}");
}

/// A header that is a deployments.apps' on a real server: long resourceVersions, a
/// watch that started, events and bookmarks that came.
fn busy_header() -> Header {
    Header {
        client_go: Some("0.32".into()),
        queue: Some("DeltaFIFO".into()),
        state: State::Watching(t(0)),
        synced: true,
        rv: "1234567890".into(),
        last_event: Some(t(0)),
        last_bookmark: Some(t(1)),
        relists: 12,
        retries: 3,
        backoffs: 4,
        ..Header::default()
    }
}

/// A narrow screen shortens the header's other parts first; the
/// relists, retries, backoffs and the event's and bookmark's ages stay whole.
#[test]
fn a_narrow_header_keeps_its_counters_and_ages() {
    let h = busy_header();
    for (res, width) in [
        ("deployments.apps", 160),
        ("deployments.apps", 120),
        ("pods", 80),
    ] {
        let lines = header_lines(None, res, &h, t(59), width);
        let all = lines.join("\n");
        for l in &lines {
            assert!(l.chars().count() <= width, "{width}: {all}");
        }
        for part in [
            "relists 12 retries 3 backoffs 4",
            "event 59s",
            "bookmark 58s",
            "rv=1234567890",
        ] {
            assert!(all.contains(part), "{width}: {part} in {all}");
        }
    }
    let wide = header_lines(None, "deployments.apps", &h, t(59), 240);
    assert_eq!(
        wide,
        [
            "deployments.apps [DeltaFIFO, client-go 0.32]: watching since 10:05:00, synced \
          rv=1234567890 | relists 12 retries 3 backoffs 4 | 0 deltas/s | event 59s ago | \
          bookmark 58s ago"
        ]
    );
    assert_eq!(
        header_lines(None, "deployments.apps", &h, t(59), 160),
        [
            "deployments.apps: watching, synced rv=1234567890 | relists 12 retries 3 backoffs 4 \
          | 0 deltas/s | event 59s ago | bookmark 58s ago"
        ]
    );
}

/// With `--freshness` the header says how far the store is behind the server, beside
/// whether it synced; without, nothing.
#[test]
fn the_header_says_how_far_behind_the_store_is() {
    let mut h = busy_header();
    let line = |h: &Header| header_lines(None, "pods", h, t(59), 240).join("\n");
    assert!(!line(&h).contains("behind"), "{}", line(&h));
    h.lag = Some(std::time::Duration::from_micros(1_234_567));
    assert!(
        line(&h).contains("synced, 1234ms behind rv=1234567890"),
        "{}",
        line(&h)
    );
}

/// Cells a narrow screen cuts are shown by → (the columns move left),
/// and the status line says there is more.
#[test]
fn right_shows_the_columns_a_narrow_screen_cuts() {
    let f = Feed::listed();
    let mut ui = Ui::new(false);
    let b = f.draw(&mut ui, 50, 14, 10);
    let s = text(&b);
    assert!(!s.contains("AGE") && s.contains("→ more columns"), "{s}");
    for _ in 0..10 {
        f.act(&mut ui, Action::Right);
        f.draw(&mut ui, 50, 14, 10);
    }
    let s = text(&f.draw(&mut ui, 50, 14, 10));
    assert!(
        s.contains("AGE") && s.contains("5m10s") && s.contains("RESTARTS"),
        "{s}"
    );
    assert!(!s.contains("→ more"), "nothing cut any more: {s}");
    let pan = ui.pan;
    assert!(pan > 0 && s.contains(&format!("← {pan} columns")), "{s}");
    f.act(&mut ui, Action::Right);
    assert_eq!(ui.pan, pan, "→ stops once nothing is cut");
    for _ in 0..pan {
        f.act(&mut ui, Action::Left);
    }
    assert!(text(&f.draw(&mut ui, 50, 14, 10)).contains("  DELTA"));
}

/// With several kinds, `s` cycles the columns of the selected row's
/// kind, not the first kind's.
#[test]
fn sort_cycles_the_selected_kinds_columns() {
    let mut f = Feed::new(Options {
        multi: true,
        order: vec!["pods".into(), "configmaps".into()],
        ..Options::default()
    });
    f.delta(
        0,
        DeltaType::Replaced,
        pod("web-1", "100", "Running", "web"),
    );
    f.r = Resource {
        name: "configmaps".into(),
        kind: "ConfigMap".into(),
        api_version: "v1".into(),
        namespaced: true,
    };
    for (name, rv) in [("b-cm", "101"), ("a-cm", "102")] {
        let cm = format!(
            r#"{{"metadata":{{"name":"{name}","namespace":"default","resourceVersion":"{rv}","creationTimestamp":"2026-11-21T10:00:00Z"}},"data":{{"k":"v"}}}}"#
        );
        f.delta(0, DeltaType::Replaced, object(&cm));
    }
    let mut ui = Ui::new(false);
    let on_a_config_map = |ui: &mut Ui| {
        text(&f.draw(ui, 160, 16, 10))
            .lines()
            .any(|l| l.starts_with('>') && l.contains("-cm"))
    };
    // The selection on a config map; it stays on it however the rows are sorted.
    while !on_a_config_map(&mut ui) {
        f.act(&mut ui, Action::Down);
    }
    let mut seen = Vec::new();
    loop {
        f.act(&mut ui, Action::Sort);
        match &ui.sort {
            Some(c) => seen.push(c.clone()),
            None => break,
        }
        assert!(on_a_config_map(&mut ui), "sorted by {seen:?}");
    }
    assert_eq!(
        seen,
        ["DELTA", "KIND", "NAME", "RESOURCEVERSION", "DATA", "AGE"]
    );
}

/// The selection is an object: a row inserted above it moves it down a line, and `y`
/// shows the selected object's YAML, not the one now at its old place.
#[test]
fn the_selection_stays_on_its_object_when_a_row_comes_above_it() {
    let mut f = Feed::listed();
    let mut ui = Ui::new(false);
    f.draw(&mut ui, 120, 16, 10);
    f.act(&mut ui, Action::Down);
    f.act(&mut ui, Action::Down);
    assert!(selected(&f.draw(&mut ui, 120, 16, 10)).contains(" web-2 "));
    f.delta(20, DeltaType::Added, pod("a-0", "110", "Pending", "web"));
    let b = f.draw(&mut ui, 120, 16, 21);
    assert!(selected(&b).contains(" web-2 "), "{}", text(&b));
    assert!(text(&b).contains(" a-0 "), "{}", text(&b));
    // A row that comes between two keys (no frame drawn in between) too.
    f.delta(22, DeltaType::Added, pod("a-1", "111", "Pending", "web"));
    f.act(&mut ui, Action::Yaml);
    let yaml = text(&f.draw(&mut ui, 80, 30, 23));
    assert!(yaml.contains("name: web-2"), "{yaml}");
    // Up moves from the object, wherever it is now.
    f.act(&mut ui, Action::Back);
    f.act(&mut ui, Action::Up);
    assert!(selected(&f.draw(&mut ui, 120, 16, 23)).contains(" web-1 "));
}

/// Rows removed above the selection, and a sort that moves its object,
/// leave the selection on its object; once the object's own row has gone, the row now
/// at its place is selected.
#[test]
fn the_selection_stays_on_its_object_when_rows_go_or_are_sorted() {
    let mut f = Feed::web_2_failed();
    let mut ui = Ui::new(false);
    f.draw(&mut ui, 120, 16, 21);
    f.act(&mut ui, Action::End);
    f.delta(22, DeltaType::Deleted, pod("db-0", "106", "Running", "db"));
    lock(&f.model).prune(t(30));
    let b = f.draw(&mut ui, 120, 16, 30);
    assert!(!text(&b).contains(" db-0 "), "{}", text(&b));
    assert!(selected(&b).contains(" web-2 "), "{}", text(&b));
    // By RESOURCEVERSION (the third column): web-1 (100), web-2 (105); web-1 updated to
    // 110 goes last, and the selection with it.
    f.act(&mut ui, Action::Home);
    for _ in 0..3 {
        f.act(&mut ui, Action::Sort);
    }
    assert_eq!(ui.sort.as_deref(), Some("RESOURCEVERSION"));
    assert!(selected(&f.draw(&mut ui, 120, 16, 30)).contains(" web-1 "));
    f.delta(
        31,
        DeltaType::Updated,
        pod("web-1", "110", "Running", "web"),
    );
    let b = f.draw(&mut ui, 120, 16, 31);
    let s = text(&b);
    assert!(
        s.find(" web-2 ").unwrap() < s.find(" web-1 ").unwrap(),
        "{s}"
    );
    assert!(selected(&b).contains(" web-1 "), "{s}");
    // Reversed: the other way round, the selection still on web-1.
    f.act(&mut ui, Action::Reverse);
    let b = f.draw(&mut ui, 120, 16, 31);
    let s = text(&b);
    assert!(
        s.find(" web-1 ").unwrap() < s.find(" web-2 ").unwrap(),
        "{s}"
    );
    assert!(selected(&b).contains(" web-1 "), "{s}");
    // The selected object deleted: dimmed, still selected; pruned, the row now at its
    // place is.
    f.delta(
        32,
        DeltaType::Deleted,
        pod("web-1", "111", "Running", "web"),
    );
    assert!(selected(&f.draw(&mut ui, 120, 16, 32)).contains(" web-1 "));
    lock(&f.model).prune(t(40));
    assert!(selected(&f.draw(&mut ui, 120, 16, 40)).contains(" web-2 "));
}

/// `--follow --live`: an Event row that comes above the selected replica
/// set (its owner's events sort before its children) leaves the selection on the replica
/// set, so `c` collapses the replica set, not the Event.
#[test]
fn c_collapses_the_selected_row_when_a_row_comes_above_it() {
    let mut f = Feed::web_tree();
    let mut ui = Ui::new(false);
    f.draw(&mut ui, 120, 16, 10);
    f.act(&mut ui, Action::Down);
    assert!(selected(&f.draw(&mut ui, 120, 16, 10)).contains("└─ web-1 "));
    let event = ["deploy/web", "event/web.17a"];
    f.followed(
        20,
        DeltaType::Added,
        &event,
        pod("web.17a", "120", "", "web"),
    );
    f.act(&mut ui, Action::Collapse);
    let rs = WEB_TREE[1].join(crate::informer::record::PATH_SEPARATOR);
    assert_eq!(ui.collapsed, [rs].into_iter().collect(), "{ui:?}");
    let b = f.draw(&mut ui, 120, 16, 21);
    let s = text(&b);
    assert!(!s.contains("web-1-a") && s.contains("1 collapsed"), "{s}");
    assert!(selected(&b).contains("└─ web-1 "), "{s}");
}

/// `c` on a row with nothing under it (a pod, an Event) collapses
/// nothing, counts nothing, and the status line says why.
#[test]
fn c_on_a_row_with_nothing_under_it_collapses_nothing_and_says_so() {
    let f = Feed::web_tree();
    let mut ui = Ui::new(false);
    f.draw(&mut ui, 120, 16, 10);
    f.act(&mut ui, Action::End);
    f.act(&mut ui, Action::Collapse);
    assert!(ui.collapsed.is_empty(), "{ui:?}");
    let s = text(&f.draw(&mut ui, 120, 16, 10));
    assert!(s.contains("nothing under pod/web-1-b to collapse"), "{s}");
    assert!(!s.contains("collapsed"), "{s}");
    // The note lasts until the next key.
    f.act(&mut ui, Action::Up);
    let s = text(&f.draw(&mut ui, 120, 16, 10));
    assert!(!s.contains("nothing under"), "{s}");
}

/// The status line's "N collapsed" counts the collapsed rows that hide
/// rows: a replica set whose pods have all gone hides nothing.
#[test]
fn the_collapsed_count_counts_only_rows_that_hide_rows() {
    let mut f = Feed::web_tree();
    let mut ui = Ui::new(false);
    f.draw(&mut ui, 120, 16, 10);
    f.act(&mut ui, Action::Down);
    f.act(&mut ui, Action::Collapse);
    assert!(text(&f.draw(&mut ui, 120, 16, 10)).contains("  1 collapsed (c expands)"));
    for path in &WEB_TREE[2..] {
        let name = path[2].split_once('/').unwrap().1;
        f.followed(
            20,
            DeltaType::Deleted,
            path,
            pod(name, "130", "Running", "web"),
        );
    }
    lock(&f.model).prune(t(30));
    let s = text(&f.draw(&mut ui, 120, 16, 30));
    assert!(s.contains("└─ web-1 ") && !s.contains("collapsed"), "{s}");
}

/// A resize that makes every column fit brings back the columns → had
/// scrolled out of sight: DELTA shows and `← N columns` goes.
#[test]
fn a_resize_that_fits_every_column_brings_the_hidden_columns_back() {
    let f = Feed::listed();
    let mut ui = Ui::new(false);
    f.draw(&mut ui, 50, 14, 10);
    f.act(&mut ui, Action::Right);
    let s = text(&f.draw(&mut ui, 50, 14, 10));
    assert!(
        s.contains("← 1 columns  → more") && !s.contains("DELTA"),
        "{s}"
    );
    let s = text(&f.draw(&mut ui, 120, 14, 10));
    assert!(s.contains("  DELTA      NAME") && s.contains("AGE"), "{s}");
    assert!(!s.contains('←') && !s.contains('→'), "{s}");
    assert_eq!(ui.pan, 0);
}
