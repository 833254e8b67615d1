//! The table: a header once, a row per delta (or per handler call, `--view handlers`),
//! and a `~` line per reflector event saying what happened and why. `~` lines are
//! diagnostics: they go to their own writer (stderr), so stdout holds the table only
//! (`--no-headers | awk` sees rows and nothing else).
//!
//! Alignment, as kubectl's: the initial lists' rows are held back until every resource has
//! synced (on a terminal at most [`HOLD_ROWS`] rows or [`HOLD_FOR`]; into a file or a pipe
//! the whole initial list) and printed aligned together, each resource's rows in the order
//! of [`Options::order`] (`kubectl get all`'s); watch rows keep those widths, which grow
//! only when a cell does not fit, so rows do not jitter as they stream.
//!
//! Blocks, as kubectl's `get` prints several resources: a header starts each run of one
//! resource's rows, after a blank line when it follows another block (kubectl's get.go:
//! `if lastMapping != nil && !o.NoHeaders && nonEmptyObjCount > 0 { fmt.Fprintln }`), and
//! a cluster-scoped resource's block has no NAMESPACE column (get.go:
//! `printWithNamespace = false` for `RESTScopeNameRoot`). Every string from the server
//! is escaped; colour only when asked.
//!
//! The `~` lines of the loading phase (before anything synced or any row was shown) are
//! held too and come out with the initial list: a run that fails before its first sync
//! prints its one error line and nothing else on stderr. A backoff or retry while loading
//! is shown at once, with the lines held before it.

use std::io::{self, BufWriter, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

use std::collections::HashMap;

use super::columns::{
    event_tree_columns, metadata_columns, own_kind_columns, resource_columns, server_cell,
    server_columns, tree_columns, Column, Getter, RowObject,
};
use super::diagnostics::{self, Diagnostics};
use super::options::{Format, Options, View};
use crate::cache::delta::DeltaType;
use crate::cache::handlers::HandlerCall;
use crate::cache::object::{ObjectRef, TableColumn};
use crate::cache::reflector::ReflectorEvent;
use crate::client::target::Resource;
use crate::context::ContextName;
use crate::informer::conflict::Conflict;
use crate::informer::diff;
use crate::informer::freshness::{Lag, Latency};
use crate::informer::record::{Body, Observation, Record};
use crate::informer::sink::Sink;
use crate::text::paint;
use crate::text::{human_bytes, sanitize};

/// On a terminal, at most this many initial-list rows are held back to be aligned together…
pub const HOLD_ROWS: usize = 1000;
/// …and for at most this long, so a 100k-object list starts printing at once.
pub const HOLD_FOR: Duration = Duration::from_secs(1);

/// The tree's layout, under a name no resource has.
const TREE: &str = "~tree";

/// SGR colours: the delta's, and dark grey for `~` lines.
const GREY: u8 = 90;

pub struct TablePrinter<W: Write> {
    opts: Options,
    w: BufWriter<W>,
    /// `~` lines (stderr). Stdout is flushed before each, so on a terminal they land
    /// where they happened.
    diag: Diagnostics,
    /// The width of each column, per header line seen (a handful); widths never shrink,
    /// so rows of one layout never jitter, and a layout shown again keeps its widths.
    widths: Vec<(Vec<String>, Vec<usize>)>,
    /// The resource and header line of the rows printed last: a header block starts when
    /// either changes (kubectl prints the header again when a Table's columns change).
    current: Option<(String, Vec<String>)>,
    /// The columns and header line per resource name (built once).
    layouts: HashMap<String, Arc<Layout>>,
    /// `--follow`'s tree: the tree's columns as each resource's rows fill them (its own
    /// kind's READY and STATUS), per resource name, when its objects came in no Table.
    own_kind: HashMap<String, Arc<[Column]>>,
    /// Initial-list rows and the `~` lines around them (in order) held back until the
    /// resource syncs. Invariant: `held_rows` counts its rows, and `held_since` is set
    /// exactly when it holds a row.
    held: Vec<Held>,
    held_rows: usize,
    held_since: Option<Instant>,
    /// A resource has synced or a row has been shown: from now on `~` lines are held
    /// only to keep their place among held rows.
    live: bool,
    /// A failure repeated: its `~` lines are counted, not each printed.
    repeats: super::repeats::Repeats,
    /// Resources that have synced or were left out; the loading phase ends when they
    /// are [`Options::targets`] (at least one), or as many as have joined.
    done: usize,
    /// The informers that have joined ([`Sink::joined`]): more than the targets known
    /// at the start when a context joins late.
    joined: std::collections::BTreeSet<(String, Option<ContextName>)>,
}

/// A resource's columns after NAME and RESOURCEVERSION, and its whole header line.
struct Layout {
    /// The resource's name: its rows form one block under one header.
    resource: String,
    /// The row has a NAMESPACE cell (`-A` and a namespaced resource).
    namespace: bool,
    /// The resource's place in [`Options::order`] (`usize::MAX` when not there).
    rank: usize,
    cols: Vec<Column>,
    headers: Vec<String>,
    /// The server's Table columns the resource columns come from, if they do.
    server: Option<Arc<[TableColumn]>>,
}

/// A row ready to print: its layout, cells, colour and `--diff`.
struct Row {
    layout: Arc<Layout>,
    cells: Vec<String>,
    color: u8,
    diff: Option<diff::Diff>,
    /// `--blame`'s lines, under the diff's.
    blame: Option<Vec<crate::informer::blame::Blame>>,
    /// A row of an initial list: held rows of those are printed in the resources' order.
    initial: bool,
    /// `--follow`: its owner path, by which held initial rows of the tree are ordered.
    tree: Option<Arc<str>>,
}

enum Held {
    Row(Row),
    Note(Note),
}

/// A held `~` line.
struct Note {
    text: String,
    /// The resource it is about (`None`: no one resource).
    about: Option<String>,
    /// It says that resource synced.
    synced: bool,
}

impl Held {
    fn note(text: String, about: Option<&Resource>, synced: bool) -> Held {
        let about = about.map(|r| r.name.clone());
        Held::Note(Note {
            text,
            about,
            synced,
        })
    }
}

impl<W: Write> TablePrinter<W> {
    pub fn new(opts: Options, w: W, diag: Diagnostics) -> Self {
        TablePrinter {
            opts,
            w: BufWriter::new(w),
            diag,
            widths: Vec::new(),
            current: None,
            layouts: HashMap::new(),
            own_kind: HashMap::new(),
            held: Vec::new(),
            held_rows: 0,
            held_since: None,
            live: false,
            repeats: Default::default(),
            done: 0,
            joined: Default::default(),
        }
    }

    /// Every resource has synced or been left out: the loading phase is over.
    fn loaded(&self) -> bool {
        self.done >= self.opts.targets.max(self.joined.len()).max(1)
    }

    /// On a terminal, held rows are out once [`HOLD_ROWS`] or [`HOLD_FOR`] is reached.
    fn hold_exceeded(&self) -> bool {
        self.opts.terminal
            && (self.held_rows >= HOLD_ROWS
                || self.held_since.is_some_and(|s| s.elapsed() >= HOLD_FOR))
    }

    /// The layout of `r`: its resource columns (kubectl's, those of the server's Table
    /// the object came in (`server`), or AGE alone under `--metadata-only`), then `-L`
    /// and `--show-labels` columns, and the header line over them.
    fn layout_of(&mut self, r: &Resource, server: Option<&Arc<[TableColumn]>>) -> Arc<Layout> {
        let server = server.filter(|c| !c.is_empty());
        if let Some(l) = self.layouts.get(&r.name) {
            let same = match (&l.server, server) {
                (None, None) => true,
                (Some(a), Some(b)) => Arc::ptr_eq(a, b) || a == b,
                _ => false,
            };
            if same {
                return l.clone();
            }
        }
        let wide = self.opts.format == Format::Wide;
        let opts = &self.opts;
        let crd = opts.printer_columns.get(&r.name).map(Vec::as_slice);
        let mut cols = if opts.metadata_only {
            metadata_columns()
        } else if let Some(defs) = server {
            server_columns(defs, wide)
        } else {
            resource_columns(r, wide, crd)
        };
        if cols.is_empty() {
            cols = metadata_columns();
        }
        let rank = opts
            .order
            .iter()
            .position(|n| *n == r.name)
            .unwrap_or(usize::MAX);
        let namespace = opts.all_namespaces && r.namespaced;
        self.layout_with(r.name.clone(), cols, namespace, rank, server.cloned())
    }

    /// `--follow`, `--events`: one layout for the whole tree, whatever each row's kind
    /// (kubectl-tree's habit): KIND, the indented NAME, RESOURCEVERSION, each row's own
    /// kind's READY and STATUS ([`tree_columns`]), AGE; with `--events`, then kubectl's
    /// TYPE, REASON and MESSAGE of the Events. `--metadata-only`: AGE alone (the objects
    /// hold no status).
    fn tree_layout(&mut self) -> Arc<Layout> {
        match self.layouts.get(TREE) {
            Some(l) => l.clone(),
            None => {
                let namespace = self.opts.all_namespaces;
                let mut cols = if self.opts.metadata_only {
                    metadata_columns()
                } else {
                    tree_columns()
                };
                if self.opts.events {
                    cols.extend(event_tree_columns());
                }
                self.layout_with(TREE.to_owned(), cols, namespace, 0, None)
            }
        }
    }

    /// The layout `name` of resource columns `cols`, then `-L` and `--show-labels`
    /// columns, and the header line over them; kept for the next rows of `name`.
    fn layout_with(
        &mut self,
        name: String,
        mut cols: Vec<Column>,
        namespace: bool,
        rank: usize,
        server: Option<Arc<[TableColumn]>>,
    ) -> Arc<Layout> {
        let opts = &self.opts;
        for l in &opts.label_columns {
            cols.push(Column {
                header: l.rsplit('/').next().unwrap_or(l).to_uppercase(),
                get: Getter::Label(l.clone()),
            });
        }
        if opts.show_labels {
            cols.push(Column {
                header: "LABELS".into(),
                get: Getter::Labels,
            });
        }
        let headers = self.headers(&cols, namespace);
        let l = Arc::new(Layout {
            resource: name.clone(),
            namespace,
            rank,
            cols,
            headers,
            server,
        });
        self.layouts.insert(name, l.clone());
        l
    }

    /// The tree's columns (`layout`'s) as a row of `r` fills them: its own kind's cells
    /// ([`own_kind_columns`]) from the server's Table of the object (`server`), else from
    /// kubectl's printer of the kind (kept per resource).
    fn own_kind_of(
        &mut self,
        layout: &Layout,
        r: &Resource,
        server: Option<&Arc<[TableColumn]>>,
    ) -> Arc<[Column]> {
        let crd = self.opts.printer_columns.get(&r.name).map(Vec::as_slice);
        if let Some(defs) = server.filter(|c| !c.is_empty()) {
            return own_kind_columns(&layout.cols, r, crd, Some(defs)).into();
        }
        if let Some(cols) = self.own_kind.get(&r.name) {
            return cols.clone();
        }
        let cols: Arc<[Column]> = own_kind_columns(&layout.cols, r, crd, None).into();
        self.own_kind.insert(r.name.clone(), cols.clone());
        cols
    }

    /// The widths of the columns of `layout`; DELTA is as wide as its longest value from
    /// the start (and so is HANDLER: `OnUpdate` and `OnDelete` are as long as `Replaced`).
    fn widths_of(&mut self, layout: &[String]) -> &mut Vec<usize> {
        let i = match self.widths.iter().position(|(l, _)| l == layout) {
            Some(i) => i,
            None => {
                self.widths.push((layout.to_vec(), vec!["Replaced".len()]));
                self.widths.len() - 1
            }
        };
        &mut self.widths[i].1
    }

    fn headers(&self, cols: &[Column], namespace: bool) -> Vec<String> {
        let first = match self.opts.view {
            View::Deltas | View::Fleet => "DELTA",
            View::Handlers => "HANDLER",
        };
        let mut h = vec![first.to_owned()];
        if self.opts.timestamps {
            h.push("TIME".into());
        }
        if self.opts.contexts {
            h.push("CONTEXT".into());
        }
        if self.opts.multi {
            h.push("KIND".into());
        }
        if namespace {
            h.push("NAMESPACE".into());
        }
        h.extend(["NAME".to_owned(), "RESOURCEVERSION".to_owned()]);
        h.extend(cols.iter().map(|c| c.header.clone()));
        h
    }

    /// Grows the widths of `layout` to fit `cells`.
    fn grow(&mut self, layout: &[String], cells: &[String]) {
        let widths = self.widths_of(layout);
        if widths.len() < cells.len() {
            widths.resize(cells.len(), 0);
        }
        for (w, c) in widths.iter_mut().zip(cells) {
            *w = (*w).max(c.chars().count());
        }
    }

    fn write_row(
        &mut self,
        layout: &[String],
        cells: &[String],
        color: Option<u8>,
    ) -> io::Result<()> {
        let color = color.filter(|_| self.opts.color);
        let widths = self.widths_of(layout);
        if widths.len() < cells.len() {
            widths.resize(cells.len(), 0);
        }
        let mut line = String::new();
        for (i, cell) in cells.iter().enumerate() {
            let n = cell.chars().count();
            widths[i] = widths[i].max(n);
            if i == 0 {
                // Colour only the DELTA cell, keeping the alignment of the rest.
                match color {
                    Some(c) => line.push_str(&paint(cell, c)),
                    None => line.push_str(cell),
                }
            } else {
                line.push_str(cell);
            }
            if i + 1 < cells.len() {
                line.extend(std::iter::repeat_n(' ', widths[i] - n + 3));
            }
        }
        writeln!(self.w, "{line}")
    }

    /// A row: after a header block when the resource changes (the header as wide as the
    /// row, so the row lines up), then its `--diff`.
    fn write_delta_row(&mut self, row: Row) -> io::Result<()> {
        let layout = &row.layout.headers;
        let same = self
            .current
            .as_ref()
            .is_some_and(|(r, h)| *r == row.layout.resource && h == layout);
        if !same {
            let first = self.current.is_none();
            self.current = Some((row.layout.resource.clone(), layout.clone()));
            self.grow(layout, &row.cells);
            if !self.opts.no_headers {
                if !first {
                    writeln!(self.w)?;
                }
                self.write_row(layout, layout, None)?;
            }
        }
        self.write_row(layout, &row.cells, Some(row.color))?;
        if let Some(d) = &row.diff {
            self.write_diff(d)?;
        }
        for b in row.blame.iter().flatten() {
            writeln!(self.w, "    {}", sanitize(&crate::informer::blame::line(b)))?;
        }
        Ok(())
    }

    /// Prints what is held back, aligned: every held row's layout first grows to fit
    /// all of that layout's held rows and its header. The initial-list rows go out in the
    /// resources' order (a stable sort within the places they hold, so `~` lines and
    /// watch rows keep theirs).
    fn release(&mut self) -> io::Result<()> {
        self.live = true;
        let mut held = std::mem::take(&mut self.held);
        self.held_rows = 0;
        self.held_since = None;
        let slots: Vec<usize> = (0..held.len())
            .filter(|&i| matches!(&held[i], Held::Row(r) if r.initial))
            .collect();
        let mut initial: Vec<Held> = slots
            .iter()
            .map(|&i| std::mem::replace(&mut held[i], Held::note(String::new(), None, false)))
            .collect();
        // The tree's rows (one layout) in the order of their owner paths: each under its
        // owner.
        initial.sort_by(|a, b| {
            let key = |h: &Held| match h {
                Held::Row(r) => (r.layout.rank, r.tree.clone()),
                Held::Note(..) => (usize::MAX, None),
            };
            key(a).cmp(&key(b))
        });
        for (i, h) in slots.into_iter().zip(initial) {
            held[i] = h;
        }
        let held = with_their_blocks(held);
        for h in &held {
            if let Held::Row(r) = h {
                self.grow(&r.layout.headers, &r.layout.headers);
                self.grow(&r.layout.headers, &r.cells);
            }
        }
        for h in held {
            match h {
                Held::Row(r) => self.write_delta_row(r)?,
                Held::Note(n) => self.write_note(&n.text)?,
            }
        }
        Ok(())
    }

    /// A `~` line: held while loading or while rows are held, else written to the
    /// diagnostics.
    fn note(&mut self, text: String, about: &Resource, synced: bool) -> io::Result<()> {
        if self.live && self.held.is_empty() {
            self.write_note(&text)
        } else {
            self.held.push(Held::note(text, Some(about), synced));
            Ok(())
        }
    }

    fn write_note(&mut self, text: &str) -> io::Result<()> {
        // The rows before it go out first, so a terminal shows both in order.
        self.w.flush()?;
        let line = format!("~ {}", sanitize(text));
        if self.opts.color {
            writeln!(self.diag, "{}", paint(&line, GREY))?;
        } else {
            writeln!(self.diag, "{line}")?;
        }
        self.diag.flush()
    }

    /// `--diff`: one indented `path: old → new` line per changed path.
    fn write_diff(&mut self, d: &diff::Diff) -> io::Result<()> {
        for c in diff::changes(d) {
            let path = sanitize(&c.path).into_owned();
            let diff::Edit::Value { old, new } = &c.edit else {
                writeln!(self.w, "    {}", sanitize(&c.line()))?;
                continue;
            };
            let old = sanitize(&diff::short(old)).into_owned();
            let new = sanitize(&diff::short(new)).into_owned();
            if self.opts.color {
                writeln!(
                    self.w,
                    "    {path}: {} → {}",
                    paint(&old, 31),
                    paint(&new, 32)
                )?;
            } else {
                writeln!(self.w, "    {path}: {old} → {new}")?;
            }
        }
        Ok(())
    }
}

/// What a row shows before the resource's columns, and the object they are read from.
struct Cells<'r> {
    key: &'r str,
    /// The DELTA or HANDLER cell.
    first: &'r str,
    obj: Option<&'r ObjectRef>,
    /// The name is followed by `(final state unknown)`.
    tombstone: bool,
    /// The name is followed by `(recreated)`: a new `metadata.uid` under the key.
    recreated: bool,
    /// The RESOURCEVERSION cell, unescaped (`None`: `<unknown>`).
    rv: Option<String>,
}

impl<W: Write> TablePrinter<W> {
    /// The row of a delta or a handler call.
    fn row(
        &mut self,
        rec: &Record<'_>,
        c: Cells<'_>,
        color: u8,
        diff: Option<diff::Diff>,
        initial: bool,
    ) -> Row {
        let table_row = c.obj.and_then(|o| o.table_row());
        let (layout, own_kind) = match rec.follow {
            Some(_) => {
                let tree = self.tree_layout();
                let own = self.own_kind_of(&tree, rec.resource, table_row.map(|t| &t.columns));
                (tree, Some(own))
            }
            None => (
                self.layout_of(rec.resource, table_row.map(|t| &t.columns)),
                None,
            ),
        };
        // The cells' columns: the layout's, or in the tree each row's own kind's.
        let cols: &[Column] = own_kind.as_deref().unwrap_or(&layout.cols);
        let (ns, obj_name) = c.key.split_once('/').unwrap_or(("", c.key));
        let mut cells = Vec::with_capacity(layout.headers.len());
        cells.push(c.first.to_owned());
        if self.opts.timestamps {
            cells.push(crate::text::format_time(rec.time));
        }
        if self.opts.contexts {
            cells.push(sanitize(crate::context::or_empty(rec.context)).into_owned());
        }
        if self.opts.multi {
            cells.push(sanitize(&rec.resource.kind).into_owned());
        }
        if layout.namespace {
            cells.push(sanitize(ns).into_owned());
        }
        let mut shown = match rec.follow {
            Some(f) => tree_name(f, obj_name),
            None => sanitize(obj_name).into_owned(),
        };
        if let Some(change) = rec.follow.and_then(|f| f.change) {
            match change {
                crate::informer::record::GraphChange::Orphaned => shown.push_str(" (orphaned)"),
                crate::informer::record::GraphChange::Left => {
                    shown.push_str(" (left with its orphaned owner)")
                }
                crate::informer::record::GraphChange::Joined
                | crate::informer::record::GraphChange::Deleted => {}
            }
        }
        if c.tombstone {
            shown.push_str(" (final state unknown)");
        }
        if c.recreated {
            shown.push_str(" (recreated)");
        }
        cells.push(shown);
        cells.push(c.rv.map_or("<unknown>".into(), |rv| sanitize(&rv).into_owned()));
        let mut scratch = String::new();
        let row = RowObject::of(cols, c.obj.map(|o| &**o), &mut scratch);
        let created = c.obj.and_then(|o| o.meta().creation_timestamp.as_deref());
        let reads_server = cols.iter().any(|col| matches!(col.get, Getter::Server(_)));
        let server: Vec<serde_json::Value> = match table_row {
            Some(t) if reads_server => serde_json::from_str(t.cells.get()).unwrap_or_default(),
            _ => Vec::new(),
        };
        for col in cols {
            let cell = match col.get {
                Getter::Server(i) => server.get(i).map(server_cell).unwrap_or_default(),
                _ => row.cell(col, created, rec.time),
            };
            cells.push(sanitize(&cell).into_owned());
        }
        Row {
            layout,
            cells,
            color,
            diff,
            blame: rec.blame(self.opts.blame).map(<[_]>::to_vec),
            initial,
            tree: rec.follow.map(|f| f.path.clone()),
        }
    }

    /// The row of a delta: its type, then the object's cells.
    fn delta_row(
        &mut self,
        rec: &Record<'_>,
        key: &str,
        delta: &crate::cache::delta::Delta,
        recreated: bool,
        diff: Option<diff::Diff>,
        initial: bool,
    ) -> Row {
        let obj = delta.object.object();
        let cells = Cells {
            key,
            first: delta.kind.as_str(),
            obj,
            tombstone: delta.object.is_tombstone(),
            recreated,
            rv: obj.map(|o| o.resource_version().to_owned()),
        };
        self.row(rec, cells, color_of(delta.kind), diff, initial)
    }

    /// `--live`'s cells of a delta (crates/core/src/output/live/): the header line and the row the
    /// table prints for it, escaped.
    pub(super) fn live_cells(
        &mut self,
        rec: &Record<'_>,
        key: &str,
        delta: &crate::cache::delta::Delta,
        recreated: bool,
    ) -> (Vec<String>, Vec<String>) {
        let row = self.delta_row(rec, key, delta, recreated, None, false);
        (row.layout.headers.clone(), row.cells)
    }

    /// Prints `row`, or holds it back while the initial lists load (a watch row too, so
    /// it stays after them).
    fn place(&mut self, row: Row) -> io::Result<()> {
        if !row.initial && self.loaded() {
            self.release()?;
            return self.write_delta_row(row);
        }
        self.held_since.get_or_insert_with(Instant::now);
        self.held.push(Held::Row(row));
        self.held_rows += 1;
        if self.hold_exceeded() {
            self.release()?;
        }
        Ok(())
    }
}

/// The NAME cell of a row of the tree: the object's name (an Event's too, its message
/// going to the MESSAGE column), indented by its depth, `└─ ` before a child
/// (kubectl-tree's).
fn tree_name(f: &crate::informer::record::Followed, name: &str) -> String {
    let depth = f.depth();
    let indent = "  ".repeat(depth.saturating_sub(1));
    let branch = if depth == 0 { "" } else { "└─ " };
    format!("{indent}{branch}{}", sanitize(name))
}

/// Held lines in the order they are printed when the initial rows of several resources
/// are released together: each of those resources' `~` lines goes with its block, those
/// before its sync just before its rows and the rest (`synced`, `watch`) just after them,
/// so no `~` line of one kind stands inside another kind's block. Everything else keeps
/// its place.
fn with_their_blocks(held: Vec<Held>) -> Vec<Held> {
    let owner = |h: &Held| match h {
        Held::Row(r) if r.initial => Some(r.layout.resource.clone()),
        _ => None,
    };
    let mut blocks: Vec<String> = held.iter().filter_map(owner).collect();
    blocks.dedup();
    if blocks.len() < 2 {
        return held;
    }
    let mut synced = std::collections::HashSet::new();
    let (mut before, mut after): (HashMap<String, Vec<Held>>, HashMap<String, Vec<Held>>) =
        Default::default();
    let mut rest = Vec::with_capacity(held.len());
    for h in held {
        match &h {
            Held::Note(Note {
                about: Some(about),
                synced: sync,
                ..
            }) if blocks.contains(about) => {
                if *sync {
                    synced.insert(about.clone());
                }
                let to = if synced.contains(about) {
                    &mut after
                } else {
                    &mut before
                };
                to.entry(about.clone()).or_default().push(h);
            }
            _ => rest.push(h),
        }
    }
    let mut out = Vec::with_capacity(rest.len());
    let mut rest = rest.into_iter().peekable();
    while let Some(h) = rest.next() {
        let block = owner(&h);
        if let Some(b) = &block {
            out.extend(before.remove(b).unwrap_or_default());
        }
        out.push(h);
        let block_ends = block.is_some() && rest.peek().map(owner) != Some(block.clone());
        if let (true, Some(b)) = (block_ends, &block) {
            out.extend(after.remove(b).unwrap_or_default());
        }
    }
    // Lines of a block whose rows did not end up here (none expected) keep to the end.
    out.extend(before.into_values().chain(after.into_values()).flatten());
    out
}

/// The SGR foreground colour of a handler call: as the delta types that add, update and
/// delete.
fn handler_color(call: &HandlerCall) -> u8 {
    color_of(match call {
        HandlerCall::OnAdd { .. } => DeltaType::Added,
        HandlerCall::OnUpdate { .. } => DeltaType::Updated,
        HandlerCall::OnDelete { .. } => DeltaType::Deleted,
    })
}

/// The SGR foreground colour of a delta type.
fn color_of(t: DeltaType) -> u8 {
    match t {
        DeltaType::Added => 32,
        DeltaType::Updated => 33,
        DeltaType::Deleted => 31,
        DeltaType::Replaced | DeltaType::ReplacedAll => 36,
        DeltaType::Sync | DeltaType::SyncAll => 34,
    }
}

/// `1 item`, `2 items`.
fn plural(n: u64, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn secs(d: &Duration) -> String {
    if *d < Duration::from_secs(1) {
        format!("{}ms", d.as_millis())
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

/// ` (client-go 0.36, RealFIFO+batch+atomic)` after the initial list's announcement and
/// after Synced, with `--client-go` only.
fn release_note(rec: &Record<'_>) -> String {
    let initial = match rec.body {
        Body::Synced => true,
        Body::Event(ReflectorEvent::List { reason, .. }) => reason == "initial",
        _ => false,
    };
    match rec.informer.client_go.filter(|_| initial) {
        Some(release) => {
            let queue = rec
                .informer
                .queue
                .map(|q| format!(", {q}"))
                .unwrap_or_default();
            format!(" (client-go {release}{queue})")
        }
        None => String::new(),
    }
}

/// A backoff or a request retry: the reflector waits before trying again.
fn is_wait(e: &ReflectorEvent) -> bool {
    matches!(e, ReflectorEvent::Backoff { .. } | ReflectorEvent::Retry(_))
}

/// Why the watch waits (the server bends the protocol): shown at once too, for a sync that
/// may never come.
fn says_why(e: &ReflectorEvent) -> bool {
    matches!(e, ReflectorEvent::Protocol { .. })
}

pub(super) fn event_text(name: &str, e: &ReflectorEvent) -> Option<String> {
    Some(match e {
        ReflectorEvent::List { .. } | ReflectorEvent::Listed { .. } => list_text(name, e)?,
        ReflectorEvent::Watch {
            resource_version, ..
        } => format!("watch {name} from rv={resource_version}"),
        ReflectorEvent::WatchEnded {
            reason,
            events,
            bookmarks,
            elapsed,
            error,
        } => {
            let how = if *error { "ended" } else { "closed" };
            let bookmarks = match bookmarks {
                0 => String::new(),
                n => format!(", {}", plural(*n, "bookmark")),
            };
            format!(
                "watch {name} {how} after {} and {}{bookmarks}: {reason}",
                secs(elapsed),
                plural(*events, "event")
            )
        }
        ReflectorEvent::Bookmark { .. } => return None,
        ReflectorEvent::Stalled { .. } => stalled_text(name, e)?,
        ReflectorEvent::Backoff { delay, cause } => {
            format!("backoff {name} {}: {cause}", secs(delay))
        }
        ReflectorEvent::Resync => format!("resync {name}"),
        ReflectorEvent::WatchListFallback { error } => {
            format!("watch-list of {name} failed, using LIST: {error}")
        }
        ReflectorEvent::WireFallback { error } => {
            format!("{name} in JSON from now on: {error}")
        }
        ReflectorEvent::Retry(r) => {
            let code = r.code.map(|c| format!("{c} ")).unwrap_or_default();
            format!(
                "retry {} {name} in {} (attempt {} of {}): {code}{}",
                r.verb.as_str(),
                secs(&r.delay),
                r.attempt,
                r.max_retries,
                r.reason
            )
        }
        ReflectorEvent::TimeTravel {
            request,
            resource_version,
            held,
        } => format!(
            "time travel {name}: {request} served rv={resource_version}, older than rv={held} \
             already synced (a server with a stale watch cache?)"
        ),
        ReflectorEvent::OpaqueResourceVersion { resource_version } => format!(
            "opaque resource versions {name}: served rv={resource_version:?}, not an unsigned \
             integer: time travel is not looked for"
        ),
        ReflectorEvent::Protocol { message, .. } => format!("{name}: {message}"),
        ReflectorEvent::Relisted { .. } => relisted_text(name, e)?,
    })
}

/// The `~` line of an observation (`None`: it has none, as each freshness sample).
pub(super) fn observation_text(name: &str, o: &Observation) -> Option<String> {
    Some(match o {
        Observation::Consistency(r) => consistency_text(name, r),
        Observation::Latency(Latency {
            probe,
            seq,
            latency,
            ..
        }) => format!(
            "probe {probe}: write {seq} reached the informer in {:.1}ms",
            latency.as_secs_f64() * 1000.0
        ),
        Observation::Freshness(Lag {
            lag,
            server_resource_version,
            store_resource_version,
            recovered: true,
        }) => format!(
            "fresh again {name}: {} behind the server (store rv={store_resource_version}, \
             server rv={server_resource_version})",
            secs(lag)
        ),
        // Each sample: --live's header, --stats and --metrics show them.
        Observation::Freshness(_) => return None,
        Observation::Stale(lag) => stale_text(name, lag),
        Observation::CacheStats(c) => format!("cache {name}: {}", c.text(5)),
        Observation::Conflict(Conflict {
            key,
            path,
            managers,
            flips,
            window_seconds,
        }) => format!(
            "conflict on {name} {key} {path}: {} changed it back and forth {flips} times within {window_seconds}s",
            managers.join(" and ")
        ),
    })
}

/// The `~` line of a `Stale` record. While samples fail the lag grows from the time the
/// store was last known current (`informer::freshness`): a store that is not behind the
/// server's last answer (its resourceVersion, read as an unsigned integer, no lower) is
/// stale because the server does not answer, and the line says so rather than call the
/// store behind a server at the same or an older revision. Revisions that are not
/// integers: the lag is the store's behind the server, as for any other.
fn stale_text(name: &str, l: &Lag) -> String {
    let (store, server) = (&l.store_resource_version, &l.server_resource_version);
    let not_behind = match (store.parse::<u64>(), server.parse::<u64>()) {
        (Ok(store), Ok(server)) => store >= server,
        _ => false,
    };
    if not_behind {
        format!(
            "stale {name}: no answer from the server for {} (store rv={store}, the server's \
             last answer rv={server})",
            secs(&l.lag)
        )
    } else {
        format!(
            "stale {name}: the store is {} behind the server (store rv={store}, server \
             rv={server})",
            secs(&l.lag)
        )
    }
}

/// The `~` line of a [`ReflectorEvent::List`] or [`ReflectorEvent::Listed`].
fn list_text(name: &str, e: &ReflectorEvent) -> Option<String> {
    Some(match e {
        ReflectorEvent::List {
            resource_version,
            limit,
            reason,
            streaming,
            ..
        } => {
            let how = if *streaming { "watch-list" } else { "list" };
            let paging = if *limit > 0 {
                format!(", {limit} per page")
            } else {
                String::new()
            };
            if reason == "initial" {
                format!("{how} {name} at rv={resource_version:?}{paging}")
            } else {
                format!("relist {name}: {reason} → {how} at rv={resource_version:?}{paging}")
            }
        }
        ReflectorEvent::Listed {
            resource_version,
            items,
            pages,
            elapsed,
            full_list_fallback,
            streaming,
            encoding,
            bytes,
            wire_bytes,
        } => {
            let fallback = if *full_list_fallback {
                " (continue token expired: fell back to one full list)"
            } else {
                ""
            };
            let how = if *streaming {
                "streamed".to_owned()
            } else {
                format!("in {}", plural(u64::from(*pages), "page"))
            };
            // What came over the connection (a streaming list's: its watch's body up to
            // the initial-events-end bookmark), and the bytes read only when they differ
            // (gzip); no size from a recording made before streaming lists had one.
            let encoding = encoding.as_deref().unwrap_or("json");
            let wire = match (bytes, wire_bytes) {
                (Some(b), Some(w)) if b != w => {
                    format!(
                        ", {} {encoding} ({} read)",
                        human_bytes(*b),
                        human_bytes(*w)
                    )
                }
                (Some(b), _) => format!(", {} {encoding}", human_bytes(*b)),
                (None, _) => format!(", {encoding}"),
            };
            format!(
                "listed {name}: {} {how} at rv={resource_version} in {}{wire}{fallback}",
                plural(*items as u64, "item"),
                secs(elapsed)
            )
        }
        _ => return None,
    })
}

/// The `~` line of a [`ReflectorEvent::Stalled`].
fn stalled_text(name: &str, e: &ReflectorEvent) -> Option<String> {
    Some(match e {
        ReflectorEvent::Stalled {
            silent,
            watch_age,
            resource_version,
            restart,
        } => {
            let then = if *restart {
                "watching again from there"
            } else {
                "still waiting (--restart-stalled watches again)"
            };
            format!(
                "watch {name} stalled: nothing for {} (open {}, at rv={resource_version}); {then}",
                secs(silent),
                secs(watch_age)
            )
        }
        _ => return None,
    })
}

/// The `~` line of a [`ReflectorEvent::Relisted`]: each class that has keys, then the
/// unchanged count.
fn relisted_text(name: &str, e: &ReflectorEvent) -> Option<String> {
    let ReflectorEvent::Relisted {
        resource_version,
        resync,
        ..
    } = e
    else {
        return None;
    };
    let head = match resync {
        true => format!("resynced {name}"),
        false => format!("relisted {name} at rv={resource_version}"),
    };
    let mut parts = Vec::new();
    for (what, k) in e.relisted_classes()? {
        if what == "unchanged" {
            parts.push(format!("{} unchanged", k.count));
        } else if k.count > 0 {
            parts.push(format!(
                "{} {what} ({})",
                k.count,
                shown_keys(&k.keys, k.count)
            ));
        }
    }
    Some(format!("{head}: {}", parts.join(", ")))
}

/// The first [`KEYS_SHOWN`] of `keys`, and how many more of `count` there are.
fn shown_keys(keys: &[String], count: u64) -> String {
    let n = keys.len().min(KEYS_SHOWN);
    let mut shown = keys[..n].join(", ");
    if count > n as u64 {
        shown.push_str(&format!(", … {} more", count - n as u64));
    }
    shown
}

/// At most this many keys of each kind are named in a consistency line.
const KEYS_SHOWN: usize = 5;

/// A `--check-consistency` report in words (the table's `~` line, and the line the script
/// formats show for an inconsistency).
pub(super) fn consistency_text(name: &str, r: &crate::cache::consistency::Report) -> String {
    let rv = &r.resource_version;
    let head = format!("consistency of {name} at rv={rv}");
    let why = r.error.as_deref().unwrap_or_default();
    match r.consistent {
        Some(true) => format!(
            "{head}: consistent with a list at that rv, {}",
            plural(r.objects as u64, "object")
        ),
        Some(false) => {
            let mut parts = Vec::new();
            for (what, keys) in [("missing", &r.missing), ("extra", &r.extra), ("stale", &r.stale)] {
                if keys.is_empty() {
                    continue;
                }
                let mut shown = keys[..keys.len().min(KEYS_SHOWN)].join(", ");
                if keys.len() > KEYS_SHOWN {
                    shown.push_str(&format!(", … {} more", keys.len() - KEYS_SHOWN));
                }
                parts.push(format!("{} {what} ({shown})", keys.len()));
            }
            format!("{head}: INCONSISTENT with a list at that rv: {}", parts.join(", "))
        }
        None if r.compacted => format!(
            "{head}: not checked, the server has compacted that rv ({why}); the next check lists at a later one"
        ),
        None => format!("{head}: not checked: {why}"),
    }
}

impl<W: Write + Send> Sink for TablePrinter<W> {
    fn record(&mut self, rec: &Record<'_>) -> io::Result<()> {
        // With several contexts, event lines say which cluster they are about.
        let name = &match rec.context {
            Some(c) => format!("{} in {c}", rec.resource.name),
            None => rec.resource.name.clone(),
        };
        match &rec.body {
            Body::Event(e) => {
                match event_text(name, e).and_then(|t| self.repeats.filter(name, rec, t)) {
                    // A wait before trying again is shown at once, with the loading lines
                    // before it: a failure that goes on must not wait for a sync that may
                    // never come.
                    Some(t) if self.held_rows == 0 && (is_wait(e) || says_why(e)) => {
                        let t = t + &release_note(rec);
                        self.held.push(Held::note(t, Some(rec.resource), false));
                        self.release()
                    }
                    Some(t) => self.note(t + &release_note(rec), rec.resource, false),
                    None => Ok(()),
                }
            }
            Body::Observed(o) => {
                match observation_text(name, o).and_then(|t| self.repeats.filter(name, rec, t)) {
                    Some(t) => self.note(t + &release_note(rec), rec.resource, false),
                    None => Ok(()),
                }
            }
            Body::Synced => {
                self.done += 1;
                let t = format!("synced {name}{}", release_note(rec));
                self.note(t, rec.resource, true)?;
                if self.loaded() {
                    self.release()?;
                }
                Ok(())
            }
            Body::Delta {
                key,
                delta,
                prev,
                initial_list,
            } => {
                let diff = diff::compute(self.opts.diff, delta.kind, *prev, delta.object.object());
                let recreated = super::record::recreated(delta, *prev);
                let row = self.delta_row(rec, key, delta, recreated, diff, *initial_list);
                self.place(row)
            }
            Body::Handler {
                key,
                call,
                initial_list,
            } => {
                let obj = call.object();
                let rv = obj.map(|o| match call.old() {
                    Some(old) => format!("{}→{}", old.resource_version(), o.resource_version()),
                    None => o.resource_version().to_owned(),
                });
                let row = self.row(
                    rec,
                    Cells {
                        key,
                        first: call.name(),
                        obj,
                        tombstone: call.final_state_unknown(),
                        recreated: false,
                        rv,
                    },
                    handler_color(call),
                    rec.diff(self.opts.diff),
                    *initial_list,
                );
                self.place(row)
            }
        }
    }

    /// Pushes out what is no longer held (the queue is drained): everything once loaded,
    /// and on a terminal rows held past [`HOLD_FOR`]; `~` lines of a loading phase that
    /// has shown nothing yet stay held (see the module doc).
    fn flush(&mut self) -> io::Result<()> {
        if (self.loaded() && (self.held_rows > 0 || self.live)) || self.hold_exceeded() {
            self.release()?;
        }
        self.w.flush()?;
        self.diag.flush()
    }

    /// The run ends: held rows go out whatever is still loading.
    fn finish(&mut self) -> io::Result<()> {
        if self.held_rows > 0 || self.live {
            self.release()?;
        }
        self.w.flush()?;
        self.diag.flush()
    }

    fn diagnostic(&mut self, line: &str) -> io::Result<()> {
        diagnostics::say(&mut self.diag, line)
    }

    fn joined(&mut self, resource: &str, context: Option<&ContextName>) -> io::Result<()> {
        self.joined.insert((resource.to_owned(), context.cloned()));
        Ok(())
    }

    fn left_out(&mut self, _resource: &str, _context: Option<&ContextName>) -> io::Result<()> {
        self.done += 1;
        if self.loaded() && (self.held_rows > 0 || self.live) {
            self.release()?;
        }
        Ok(())
    }
}
