//! `--live`'s screens drawn from the [`Model`]: the header per resource, the table (only
//! the rows that fit are drawn), the event pane, an object's history and YAML, and help.
//! [`Ui`] is the view's state (selection, filter, sort, pause, screen) and what each key
//! does to it; src/app/live.rs maps terminal keys onto it. The model is kwatch-core's
//! (`output::live`), kept terminal-free; the drawing, with ratatui, is the application's.

use std::time::Duration;

use jiff::Timestamp;
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use crate::output::live::{visible, Header, Model, Row, RowKey, State, FADE_SECS};
use crate::text::{human_duration, sanitize};

/// Lines of the event pane when shown.
const EVENT_LINES: u16 = 6;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Screen {
    #[default]
    Table,
    History,
    Yaml,
    Help,
}

/// What the user did to the view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Up,
    Down,
    PageUp,
    PageDown,
    Home,
    End,
    /// `/`: start typing a filter.
    Filter,
    /// A character typed into the filter.
    Char(char),
    Backspace,
    /// Ctrl-U: clear the filter line; Ctrl-W: delete the word before the cursor (as a
    /// shell's line editing does).
    ClearLine,
    DeleteWord,
    /// ← →: the table's columns one to the left or right (a screen too narrow for the
    /// whole row shows the rest).
    Left,
    Right,
    /// Enter: end the filter, or open the history.
    Enter,
    /// Esc: leave the filter or the screen; `None` from [`Ui::act`]: quit.
    Back,
    Sort,
    Reverse,
    Yaml,
    Pause,
    Events,
    /// `c`: collapse or expand the selected row's subtree (`--follow`).
    Collapse,
    Help,
}

/// The view's state.
///
/// The selection is an object, not a screen row: `anchor` is the selected row's key
/// (resource, context, object), and `selected` its place among the rows shown, found
/// again at each frame and key, so that rows inserted above it, removed, or sorted anew
/// leave it on its object. Only when that row is no longer shown (pruned, filtered out,
/// under a collapsed row) does the selection fall back to the row now at its place.
#[derive(Debug, Clone, Default)]
pub struct Ui {
    pub color: bool,
    pub screen: Screen,
    pub selected: usize,
    anchor: Option<RowKey>,
    offset: usize,
    pub filter: String,
    pub editing: bool,
    /// The sort column's name (`None`: kubectl's order).
    pub sort: Option<String>,
    pub reverse: bool,
    /// The model as it was when paused, and its change count then.
    pub paused: Option<Box<Model>>,
    pub events: bool,
    /// The row the history/YAML screen shows, and its scroll.
    pub open: Option<RowKey>,
    pub scroll: u16,
    /// Table rows shown by the last frame (PgUp/PgDn's step).
    page: usize,
    /// Leading columns scrolled out of sight (← →), and whether the last frame cut a
    /// line at the right.
    pub pan: usize,
    cut: bool,
    /// `--follow`: the owner paths whose subtrees are collapsed.
    pub collapsed: std::collections::BTreeSet<String>,
    /// What the last key did not do, said on the status line until the next key.
    note: Option<String>,
    /// The last frame's time: what cells count their ages to (a paused screen's too:
    /// pausing holds the informer's changes back, not the clock).
    now: Timestamp,
}

impl Ui {
    pub fn new(color: bool) -> Ui {
        Ui {
            color,
            events: true,
            ..Ui::default()
        }
    }

    /// Applies `a`; `false`: quit (Esc or `q` on the table).
    pub fn act(&mut self, a: Action, live: &mut Model) -> bool {
        self.note = None;
        if !self.editing && self.screen == Screen::Table {
            let mut paused = self.paused.take();
            self.prepare(paused.as_deref_mut().unwrap_or(live));
            self.paused = paused;
        }
        let m: &Model = live;
        if self.screen == Screen::Table {
            // Where the selected object is now: rows may have come, gone or moved since
            // the last frame.
            self.reanchor(m, true);
        }
        if self.editing {
            self.edit(a);
            return true;
        }
        if self.screen != Screen::Table {
            match a {
                Action::Back | Action::Enter | Action::Help | Action::Char('q') => {
                    self.screen = Screen::Table;
                    self.scroll = 0;
                }
                Action::Up => self.scroll = self.scroll.saturating_sub(1),
                Action::Down => self.scroll = self.scroll.saturating_add(1),
                Action::PageUp => self.scroll = self.scroll.saturating_sub(10),
                Action::PageDown => self.scroll = self.scroll.saturating_add(10),
                Action::Home => self.scroll = 0,
                _ => {}
            }
            return true;
        }
        let page = self.page.max(1);
        match a {
            Action::Up => self.select(m, |s| s.saturating_sub(1)),
            Action::Down => self.select(m, |s| s.saturating_add(1)),
            Action::PageUp => self.select(m, |s| s.saturating_sub(page)),
            Action::PageDown => self.select(m, |s| s.saturating_add(page)),
            Action::Home => self.select(m, |_| 0),
            Action::End => self.select(m, |_| usize::MAX),
            Action::Filter => self.editing = true,
            Action::Sort => {
                // The selected row's kind's columns: with several kinds, each has its own.
                let cols = self.columns(m);
                let next = match &self.sort {
                    None => 0,
                    Some(c) => cols.iter().position(|h| h == c).map_or(0, |i| i + 1),
                };
                self.sort = cols.get(next).cloned();
            }
            Action::Left => self.pan = self.pan.saturating_sub(1),
            Action::Right => {
                if self.cut {
                    self.pan += 1;
                }
            }
            Action::Reverse => self.reverse = !self.reverse,
            Action::Pause => {
                self.paused = match self.paused {
                    Some(_) => None,
                    None => Some(Box::new(m.clone())),
                }
            }
            Action::Events => self.events = !self.events,
            Action::Collapse => self.collapse(m),
            Action::Help => self.screen = Screen::Help,
            Action::Enter | Action::Yaml => {
                if let Some((k, _)) = self.selected_row(m) {
                    self.open = Some(k.clone());
                    self.screen = if a == Action::Enter {
                        Screen::History
                    } else {
                        Screen::Yaml
                    };
                }
            }
            Action::Back | Action::Char('q') => return false,
            Action::Char(_) | Action::Backspace | Action::ClearLine | Action::DeleteWord => {}
        }
        true
    }

    /// A key while the filter is typed.
    fn edit(&mut self, a: Action) {
        match a {
            Action::Char(c) => self.filter.push(c),
            Action::Backspace => {
                self.filter.pop();
            }
            Action::ClearLine => self.filter.clear(),
            Action::DeleteWord => {
                let word = self
                    .filter
                    .trim_end()
                    .trim_end_matches(|c: char| !c.is_whitespace());
                self.filter.truncate(word.len());
            }
            Action::Enter => self.editing = false,
            Action::Back => {
                self.editing = false;
                self.filter.clear();
            }
            _ => {}
        }
        // The selected object stays selected while the filter keeps it; else the first
        // row is.
        self.selected = 0;
    }

    /// Moves the selection to the row at `to(its place)` and anchors it on that row's
    /// object.
    fn select(&mut self, m: &Model, to: impl FnOnce(usize) -> usize) {
        self.selected = to(self.selected);
        self.reanchor(m, false);
    }

    /// Finds the selected row among the rows shown (`follow`: the anchored object's,
    /// if it is still shown; else the row at the selection's place) and anchors there.
    fn reanchor(&mut self, m: &Model, follow: bool) {
        let rows = self.rows(m);
        let anchor = self.anchor.as_ref().filter(|_| follow);
        let (i, key) = place(&rows, anchor, self.selected);
        (self.selected, self.anchor) = (i, key);
    }

    /// `c`: collapses the selected row's subtree, or expands it. A row with nothing
    /// under it is not collapsed: the status line says so.
    fn collapse(&mut self, m: &Model) {
        let Some((_, row)) = self.selected_row(m) else {
            return;
        };
        let Some(p) = row.tree.clone() else {
            self.note = Some("c collapses a subtree of --follow's tree".to_owned());
            return;
        };
        if self.collapsed.remove(&*p) {
            return;
        }
        if self.shown(m).rows.values().any(|r| under(r, &p)) {
            self.collapsed.insert(p.to_string());
        } else {
            let leaf = p
                .rsplit(crate::informer::record::PATH_SEPARATOR)
                .next()
                .unwrap_or(&p);
            self.note = Some(format!("nothing under {} to collapse", sanitize(leaf)));
        }
    }

    /// The collapsed rows that hide rows of `m` (a collapsed row whose children have
    /// all gone hides nothing).
    fn hiding(&self, m: &Model) -> usize {
        self.collapsed
            .iter()
            .filter(|c| m.rows.values().any(|r| under(r, c)))
            .count()
    }

    /// The model the screen shows: the paused copy, or the live one.
    fn shown<'m>(&'m self, live: &'m Model) -> &'m Model {
        self.paused.as_deref().unwrap_or(live)
    }

    /// The header line of the selected row: what `s` cycles through.
    fn columns(&self, live: &Model) -> Vec<String> {
        self.selected_row(live)
            .map_or_else(Vec::new, |(_, r)| r.headers.clone())
    }

    fn rows<'m>(&'m self, live: &'m Model) -> Vec<(&'m RowKey, &'m Row)> {
        self.visible(self.shown(live), self.sort.as_deref())
    }

    /// The rows of `m` the filter keeps, in the order asked, those under a collapsed
    /// row (`--follow`) left out.
    fn visible<'m>(&self, m: &'m Model, sort: Option<&str>) -> Vec<(&'m RowKey, &'m Row)> {
        let mut rows = visible(m, &self.filter, sort, self.reverse);
        if !self.collapsed.is_empty() {
            rows.retain(|(_, r)| !self.collapsed.iter().any(|c| under(r, c)));
        }
        rows
    }

    /// The selected row: the anchored object's while it is shown, else the row at the
    /// selection's place.
    fn selected_row<'m>(&'m self, live: &'m Model) -> Option<(&'m RowKey, &'m Row)> {
        let rows = self.rows(live);
        let (i, _) = place(&rows, self.anchor.as_ref(), self.selected);
        rows.get(i).copied()
    }

    /// Scrolls by `n` rows (the mouse wheel): negative is up.
    pub fn wheel(&mut self, n: isize, live: &Model) {
        self.note = None;
        if self.screen == Screen::Table {
            self.reanchor(live, true);
            self.select(live, |s| s.saturating_add_signed(n));
        } else {
            self.scroll = self.scroll.saturating_add_signed(n as i16);
        }
    }

    /// Draws the current screen into `f` as of `now`.
    pub fn draw(&mut self, f: &mut Frame<'_>, live: &mut Model, now: Timestamp) {
        self.now = now;
        let area = f.area();
        match self.screen {
            Screen::Table => self.draw_table(f, live, now),
            Screen::History => {
                let text = self.history(live);
                f.render_widget(Paragraph::new(text).scroll((self.scroll, 0)), area);
            }
            Screen::Yaml => {
                let text = self.yaml(live);
                f.render_widget(Paragraph::new(text).scroll((self.scroll, 0)), area);
            }
            Screen::Help => f.render_widget(Paragraph::new(HELP), area),
        }
    }

    fn style(&self, color: Color, plain: Modifier) -> Style {
        if self.color {
            Style::default().fg(color).add_modifier(Modifier::BOLD)
        } else {
            Style::default().add_modifier(plain)
        }
    }

    fn draw_table(&mut self, f: &mut Frame<'_>, live: &mut Model, now: Timestamp) {
        // The paused copy is taken out while drawing, so the rows borrow it, not `self`.
        let mut paused = self.paused.take();
        let live_changes = live.changes;
        match paused.as_deref_mut() {
            Some(p) => {
                let since = live_changes - p.changes;
                self.draw_rows(f, p, Some(since), now);
            }
            None => self.draw_rows(f, live, None, now),
        }
        self.paused = paused;
    }

    /// The header lines, the table and the event pane of `m`; `paused`: the changes
    /// since the screen was paused.
    /// Makes what the sort columns, the sort and the filter read: the selected row's
    /// cells, every row's when sorting, the labels when filtering by one.
    fn prepare(&self, m: &mut Model) {
        if let Some(k) = self.selected_row(m).map(|(k, _)| k.clone()) {
            m.refresh([&k], self.now);
        }
        if self.sort.is_some() {
            m.refresh_all(self.now);
        }
        if self.filter.contains('=') {
            m.read_labels();
        }
    }

    fn draw_rows(&mut self, f: &mut Frame<'_>, m: &mut Model, paused: Option<u64>, now: Timestamp) {
        self.prepare(m);
        let width = usize::from(f.area().width);
        let mut top: Vec<Line<'static>> = m
            .headers
            .iter()
            .flat_map(|((ctx, res), h)| header_lines(ctx.as_deref(), res, h, now, width))
            .map(Line::from)
            .collect();
        // The status line is written once the table is laid out (it says whether a line
        // was cut); its place is kept here.
        top.push(Line::default());
        let events = if self.events { EVENT_LINES } else { 0 };
        let [head, body, pane] = Layout::vertical([
            Constraint::Length(top.len() as u16),
            Constraint::Min(1),
            Constraint::Length(events),
        ])
        .areas(f.area());
        // One line is the header line; the selection stays in sight.
        let fit = (body.height as usize).saturating_sub(1).max(1);
        let sort = self.sort.clone();
        let (keys, total) = self.window(m, sort.as_deref(), fit);
        // Cells are made for the rows shown, not for every row that changed.
        m.refresh(&keys, self.now);
        let shown: Vec<&Row> = keys.iter().filter_map(|k| m.rows.get(k)).collect();
        let cut = |lines: &[Line<'_>]| lines.iter().any(|l| l.width() > width);
        let mut lines = self.table_lines(&shown, body.height as usize, now);
        // The columns scrolled out of sight are at most those this width needs out of
        // sight: after a resize (or once the rows that were wide have gone) the columns
        // come back.
        while self.pan > 0 {
            self.pan -= 1;
            let wider = self.table_lines(&shown, body.height as usize, now);
            if cut(&wider) {
                self.pan += 1;
                break;
            }
            lines = wider;
        }
        self.cut = cut(&lines);
        if total == 0 {
            lines.push(Line::from("  (no objects)"));
        }
        f.render_widget(Paragraph::new(lines), body);
        if let Some(last) = top.last_mut() {
            *last = Line::from(Span::styled(
                self.status(m, paused),
                Style::default().add_modifier(Modifier::BOLD),
            ));
        }
        f.render_widget(Paragraph::new(top), head);
        if events > 0 {
            f.render_widget(Paragraph::new(event_pane(m, events)), pane);
        }
    }

    /// The status line: objects, sort, filter, pause, columns out of sight, help.
    fn status(&self, m: &Model, paused: Option<u64>) -> String {
        let mut status = format!(
            "{} objects{}",
            m.rows.values().filter(|r| r.deleted.is_none()).count(),
            self.sort
                .as_ref()
                .map(|c| format!(
                    ", sorted by {c}{}",
                    if self.reverse { " (reversed)" } else { "" }
                ))
                .unwrap_or_default()
        );
        if self.editing || !self.filter.is_empty() {
            status.push_str(&format!("  filter: /{}", sanitize(&self.filter)));
            if self.editing {
                status.push('_');
            }
        }
        let hiding = self.hiding(m);
        if hiding > 0 {
            status.push_str(&format!("  {hiding} collapsed (c expands)"));
        }
        if let Some(note) = &self.note {
            status.push_str(&format!("  {note}"));
        }
        if let Some(n) = paused {
            status.push_str(&format!("  PAUSED: {n} changes while paused (p resumes)"));
        }
        match (self.pan, self.cut) {
            (0, false) => {}
            (0, true) => status.push_str("  → more columns"),
            (n, true) => status.push_str(&format!("  ← {n} columns  → more")),
            (n, false) => status.push_str(&format!("  ← {n} columns")),
        }
        status.push_str("  ? help");
        status
    }

    /// The keys of the `fit` rows in sight (the selection kept in sight), and how many
    /// rows the filter keeps.
    fn window(&mut self, m: &Model, sort: Option<&str>, fit: usize) -> (Vec<RowKey>, usize) {
        let rows = self.visible(m, sort);
        self.page = fit;
        (self.selected, self.anchor) = place(&rows, self.anchor.as_ref(), self.selected);
        if self.selected < self.offset {
            self.offset = self.selected;
        } else if self.selected >= self.offset + fit {
            self.offset = self.selected + 1 - fit;
        }
        self.offset = self.offset.min(rows.len().saturating_sub(fit));
        let shown = &rows[self.offset.min(rows.len())..(self.offset + fit).min(rows.len())];
        (
            shown.iter().map(|(k, _)| (*k).clone()).collect(),
            rows.len(),
        )
    }

    /// The table's lines for `shown` (at most `height`, header lines included).
    fn table_lines(&self, shown: &[&Row], height: usize, now: Timestamp) -> Vec<Line<'static>> {
        // Widths over the visible rows and their header lines.
        let mut widths: Vec<usize> = Vec::new();
        for r in shown {
            for cells in [&r.headers, &r.cells] {
                if widths.len() < cells.len() {
                    widths.resize(cells.len(), 0);
                }
                for (w, c) in widths.iter_mut().zip(cells.iter()) {
                    *w = (*w).max(c.chars().count());
                }
            }
        }
        let mut lines = Vec::new();
        let mut last: Option<&[String]> = None;
        for (i, r) in shown.iter().enumerate() {
            if last != Some(&r.headers[..]) && lines.len() < height {
                lines.push(self.line("  ", &r.headers, &widths, |_| Style::default()));
                last = Some(&r.headers[..]);
            }
            lines.push(self.row_line(r, self.offset + i == self.selected, &widths, now));
        }
        lines
    }

    /// One row's line: its marker (`+` added, `*` changed, `-` deleted), the changed
    /// cells highlighted for [`FADE_SECS`], the selection underlined.
    fn row_line(&self, r: &Row, selected: bool, widths: &[usize], now: Timestamp) -> Line<'static> {
        let fresh = |t: Option<Timestamp>| t.is_some_and(|t| (now - t).get_seconds() < FADE_SECS);
        let (mark, row_style) = if r.deleted.is_some() {
            (
                "-",
                self.style(Color::Red, Modifier::empty())
                    .add_modifier(Modifier::DIM | Modifier::CROSSED_OUT),
            )
        } else if fresh(Some(r.added)) {
            ("+", self.style(Color::Green, Modifier::BOLD))
        } else if r.changed.iter().any(|c| fresh(*c)) {
            ("*", Style::default())
        } else {
            (" ", Style::default())
        };
        let sel = if selected { ">" } else { " " };
        let changed = self.style(Color::Yellow, Modifier::REVERSED);
        let mut line = self.line(&format!("{sel}{mark}"), &r.cells, widths, |c| {
            if r.deleted.is_none() && fresh(r.changed.get(c).copied().flatten()) {
                changed
            } else {
                Style::default()
            }
        });
        line = line.patch_style(row_style);
        if selected {
            line = line.patch_style(Style::default().add_modifier(Modifier::UNDERLINED));
        }
        line
    }

    /// One table line: `prefix`, then each cell padded to its width, styled by `style`.
    fn line(
        &self,
        prefix: &str,
        cells: &[String],
        widths: &[usize],
        style: impl Fn(usize) -> Style,
    ) -> Line<'static> {
        let mut spans = vec![Span::raw(prefix.to_owned())];
        // ← →: the first `pan` columns out of sight (the last one always shows).
        let from = self.pan.min(cells.len().saturating_sub(1));
        for (i, c) in cells.iter().enumerate().skip(from) {
            spans.push(Span::styled(c.clone(), style(i)));
            if i + 1 < cells.len() {
                let pad = widths.get(i).copied().unwrap_or(0) - c.chars().count() + 3;
                spans.push(Span::raw(" ".repeat(pad)));
            }
        }
        Line::from(spans)
    }

    fn history(&self, live: &Model) -> Vec<Line<'static>> {
        let m = self.shown(live);
        let Some((key, row)) = self.open.as_ref().and_then(|k| m.rows.get_key_value(k)) else {
            return vec![Line::from("the object is gone (Esc returns)")];
        };
        let mut out = vec![Line::from(Span::styled(
            format!(
                "history of {} {} ({} versions kept; Esc returns)",
                key.1,
                sanitize(&key.3),
                m.versions
            ),
            Style::default().add_modifier(Modifier::BOLD),
        ))];
        for v in &row.history {
            out.push(Line::from(format!(
                "{}  {:<10} rv={}",
                crate::text::format_time(v.time),
                v.what,
                sanitize(&v.rv)
            )));
            for d in v.diff() {
                out.push(Line::from(format!("    {}", sanitize(&d))));
            }
        }
        out
    }

    fn yaml(&self, live: &Model) -> Vec<Line<'static>> {
        let m = self.shown(live);
        let Some(obj) = self
            .open
            .as_ref()
            .and_then(|k| m.rows.get(k))
            .and_then(|r| r.object.as_ref())
        else {
            return vec![Line::from("no object (Esc returns)")];
        };
        let mut v = obj.to_value();
        if let Some(meta) = v.get_mut("metadata").and_then(|m| m.as_object_mut()) {
            meta.remove("managedFields");
        }
        let doc = match v.as_object() {
            Some(map) => crate::output::yaml::document(map),
            None => String::new(),
        };
        doc.lines()
            .map(|l| Line::from(sanitize(l).into_owned()))
            .collect()
    }
}

/// The selected row's place among `rows` and its key: the row of `anchor` if it is
/// among them, else the row at `at` (the last when `at` is past the end).
fn place(rows: &[(&RowKey, &Row)], anchor: Option<&RowKey>, at: usize) -> (usize, Option<RowKey>) {
    let i = anchor
        .and_then(|a| rows.iter().position(|(k, _)| *k == a))
        .unwrap_or(at)
        .min(rows.len().saturating_sub(1));
    (i, rows.get(i).map(|(k, _)| (*k).clone()))
}

/// Whether `r` is in the subtree under the owner path `path` (`--follow`), itself not.
fn under(r: &Row, path: &str) -> bool {
    r.tree.as_deref().is_some_and(|t| {
        t.strip_prefix(path)
            .is_some_and(|rest| rest.starts_with(crate::informer::record::PATH_SEPARATOR))
    })
}

/// The event pane: its title and the newest `events - 1` `~` lines.
fn event_pane(m: &Model, events: u16) -> Vec<Line<'static>> {
    let n = m.events.len();
    let mut lines = vec![Line::from(Span::styled(
        "── events (e hides) ──",
        Style::default().add_modifier(Modifier::BOLD),
    ))];
    lines.extend(
        m.events
            .iter()
            .skip(n.saturating_sub(events as usize - 1))
            .map(|e| Line::from(format!("~ {e}"))),
    );
    lines
}

/// One resource's header, as one line when it fits `width`, else shortened: first
/// without the queue and release and the watch's start, then on two lines (the counters
/// and ages on the second), then those in short words, then on three. What is never dropped: the
/// relists, retries and backoffs, and how long ago the last event and bookmark came.
pub fn header_lines(
    ctx: Option<&str>,
    res: &str,
    h: &Header,
    now: Timestamp,
    width: usize,
) -> Vec<String> {
    let HeaderParts {
        name,
        informer,
        long,
        brief,
        counts,
        ages,
        short,
    } = HeaderParts::new(ctx, res, h, now);
    let candidates = [
        vec![format!("{name}{informer}: {long} | {counts} | {ages}")],
        vec![format!("{name}: {brief} | {counts} | {ages}")],
        vec![
            format!("{name}{informer}: {long}"),
            format!("  {counts} | {ages}"),
        ],
        vec![format!("{name}: {brief}"), format!("  {counts} | {short}")],
        vec![
            format!("{name}: {brief}"),
            format!("  {counts}"),
            format!("  {short}"),
        ],
    ];
    let fits = |lines: &Vec<String>| lines.iter().all(|l| l.chars().count() <= width);
    let mut candidates = candidates.into_iter();
    let mut chosen = candidates.next().unwrap_or_default();
    for c in candidates {
        if fits(&chosen) {
            break;
        }
        chosen = c;
    }
    chosen
}

/// The pieces [`header_lines`] arranges.
struct HeaderParts {
    /// The context (if any) and the resource.
    name: String,
    /// ` [queue, client-go release]`, or nothing when neither is known.
    informer: String,
    /// The state, synced and resourceVersion: with the watch's start, and without.
    long: String,
    brief: String,
    /// Relists, retries and backoffs.
    counts: String,
    /// The delta rate and the last event's and bookmark's ages: in words, and short.
    ages: String,
    short: String,
}

impl HeaderParts {
    fn new(ctx: Option<&str>, res: &str, h: &Header, now: Timestamp) -> HeaderParts {
        let ago = |t: Option<Timestamp>, suffix: &str| match t {
            Some(t) => {
                let d = Duration::try_from(now - t).unwrap_or_default();
                format!("{}{suffix}", human_duration(d))
            }
            None => "never".to_owned(),
        };
        let name = match ctx {
            Some(c) => format!("{} {res}", sanitize(c)),
            None => res.to_owned(),
        };
        let informer = if h.client_go.is_some() || h.queue.is_some() {
            format!(
                " [{}{}]",
                h.queue.as_deref().unwrap_or("informer"),
                h.client_go
                    .as_deref()
                    .map(|r| format!(", client-go {r}"))
                    .unwrap_or_default()
            )
        } else {
            String::new()
        };
        let lag = h
            .lag
            .map(|d| format!(", {}ms behind", d.as_millis()))
            .unwrap_or_default();
        let what = |long: bool| {
            format!(
                "{}{}{lag} rv={}",
                state_text(&h.state, long),
                if h.synced { ", synced" } else { "" },
                sanitize(&h.rv)
            )
        };
        let rate = delta_rate(h, now.as_second());
        HeaderParts {
            name,
            informer,
            long: what(true),
            brief: what(false),
            counts: format!(
                "relists {} retries {} backoffs {}",
                h.relists, h.retries, h.backoffs
            ),
            ages: format!(
                "{rate} deltas/s | event {} | bookmark {}",
                ago(h.last_event, " ago"),
                ago(h.last_bookmark, " ago")
            ),
            short: format!(
                "{rate}/s | event {} | bookmark {}",
                ago(h.last_event, ""),
                ago(h.last_bookmark, "")
            ),
        }
    }
}

/// The reflector's state in words; `long`: a watch with its start.
fn state_text(state: &State, long: bool) -> String {
    let clock = |t: &Timestamp| t.strftime("%H:%M:%S").to_string();
    match state {
        State::Starting => "starting".to_owned(),
        State::Listing => "listing".to_owned(),
        State::Watching(t) if long => format!("watching since {}", clock(t)),
        State::Watching(_) => "watching".to_owned(),
        State::BackingOff(t) => format!("backing off until {}", clock(t)),
        State::Retrying(n, of) => format!("retrying {n}/{of}"),
    }
}

/// Deltas in the last whole second before `sec` (the current second's count while it
/// runs, the previous one's just after).
fn delta_rate(h: &Header, sec: i64) -> u64 {
    if h.rate.0 == sec {
        h.rate.1
    } else if h.rate.0 + 1 == sec {
        h.rate.2
    } else {
        0
    }
}

const HELP: &str = "kwatch --live: the informer's cache, changing in place

  ↑ ↓ j k           move          PgUp PgDn Home End   page, first, last
  ← →               the columns one to the left / right (when the screen cuts the rows)
  /                 filter by name (substring), label (key=value) or context (@name); Enter keeps it,
                    Esc clears it;
                    while typing: Backspace, Ctrl-W deletes a word, Ctrl-U the whole line
  s  S              sort by the next column of the selected row's kind / reverse
                    (default: kubectl's order, namespace then name)
  Enter             the object's history: every delta with time, type, resourceVersion and --diff
  y                 the object as YAML
  p                 pause the screen (the informer keeps running)
  e                 show/hide the event pane
  c                 --follow: collapse or expand the selected row's subtree
  ?                 this help (Esc returns)
  q  Esc            quit (exit 0)       Ctrl-C   quit (exit 130)

Marks: + added, * changed (the cell is highlighted), - deleted (stays a few seconds).";

#[cfg(test)]
mod tests;
