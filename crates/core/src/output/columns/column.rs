//! A column of the table ([`Column`]: its header and how it gets its cell) and the
//! once-per-row parse of an object ([`RowObject`]) that its cells read.

use serde_json::Value;

use super::crd::crd_cell;
use super::format::{age, label_cell, labels_cell, Labels};
use super::pod::{PodColumn, PodView};
use crate::template::Template;

/// How a column gets its cell.
#[derive(Debug, Clone)]
pub enum Getter {
    /// From metadata.creationTimestamp (needs no parse of the object).
    Age,
    Builtin(fn(&Value, jiff::Timestamp) -> String),
    /// A pod column: from the row's [`PodView`], or the view of the [`Value`].
    Pod(PodColumn),
    /// A CRD printer column: the first value at the path, as kube-apiserver's table
    /// convertor turns it into a cell of the column's `type`.
    Path {
        template: Template,
        kind: String,
    },
    /// The cell at this index of the row of the server's Table the object came in.
    Server(usize),
    /// `-L KEY`.
    Label(String),
    /// `--show-labels`.
    Labels,
    /// A column of `--follow`'s tree, under which each row shows its own kind's cell of
    /// that header (a Pod's READY, a Deployment's): the table puts that kind's column in
    /// its place row by row ([`super::own_kind_columns`]), so a row whose kind has no such
    /// column keeps this one, an empty cell.
    OwnKind,
}

#[derive(Debug, Clone)]
pub struct Column {
    pub header: String,
    pub get: Getter,
}

impl Column {
    pub(super) fn new(header: &str, f: fn(&Value, jiff::Timestamp) -> String) -> Column {
        Column {
            header: header.into(),
            get: Getter::Builtin(f),
        }
    }

    /// A pod's column: its cell read from the row's [`PodView`].
    pub(super) fn pod(p: PodColumn, header: &str) -> Column {
        Column {
            header: header.into(),
            get: Getter::Pod(p),
        }
    }

    pub(super) fn age() -> Column {
        Column {
            header: "AGE".into(),
            get: Getter::Age,
        }
    }

    /// Whether the cell needs the object parsed.
    pub fn needs_value(&self) -> bool {
        !matches!(self.get, Getter::Age | Getter::Server(_) | Getter::OwnKind)
    }

    /// The cell for `v` (Null when no column needs the object) at `now`.
    pub fn cell(&self, v: &Value, created: Option<&str>, now: jiff::Timestamp) -> String {
        match &self.get {
            Getter::Age => age(created, now),
            Getter::Builtin(f) => f(v, now),
            Getter::Pod(p) => p.cell(&PodView::from_value(v), now),
            Getter::Path { template, kind } => crd_cell(kind, template.values(v).first(), now),
            Getter::Label(k) => {
                label_cell(Labels::from_value(&v["metadata"]["labels"]).as_ref(), k)
            }
            Getter::Labels => labels_cell(Labels::from_value(&v["metadata"]["labels"]).as_ref()),
            // Read from the row's cells by the table ([`server_cell`]), never from `v`.
            Getter::Server(_) => String::new(),
            // A kind without a column of that header: nothing to show.
            Getter::OwnKind => String::new(),
        }
    }
}

/// `cols`, then `extra()` when `wide`.
pub(super) fn and_wide(
    mut cols: Vec<Column>,
    wide: bool,
    extra: impl FnOnce() -> Vec<Column>,
) -> Vec<Column> {
    if wide {
        cols.extend(extra());
    }
    cols
}

/// An object parsed for one row: only as much as the row's columns read.
pub enum RowObject<'a> {
    /// No object, or no column reads past metadata.creationTimestamp.
    Unparsed,
    Pod(PodView<'a>),
    Value(Value),
}

impl<'a> RowObject<'a> {
    /// Parses `raw` (an object's JSON) for `cols`: into a [`PodView`] when every column can
    /// read one and the object has the types it expects, else into a [`Value`].
    pub fn parse(cols: &[Column], raw: Option<&'a str>) -> RowObject<'a> {
        RowObject::parse_cut(cols, raw, true)
    }

    /// [`RowObject::parse`] of an object, its managedFields left out by the span its
    /// metadata's reading found (copied into `scratch` without them) when no column may
    /// read them: kubectl's printers never do, and they are often half the bytes.
    pub fn of(
        cols: &[Column],
        obj: Option<&'a crate::cache::object::Object>,
        scratch: &'a mut String,
    ) -> RowObject<'a> {
        let Some(o) = obj else {
            return RowObject::Unparsed;
        };
        let raw = o.raw();
        if typed(cols) && cols.iter().any(Column::needs_value) {
            // A pod's view reads a few members: read where they are, else copied for serde.
            if let Some(p) = PodView::read(raw, o.managed_fields_span()) {
                return RowObject::Pod(p);
            }
            if super::pod::project(raw, scratch) {
                let projected: &'a String = scratch;
                return match PodView::parse(projected) {
                    Some(p) => RowObject::Pod(p),
                    None => RowObject::parse_cut(cols, Some(raw), true),
                };
            }
        }
        if !reads_managed_fields(cols) && cols.iter().any(Column::needs_value) {
            if let Some((start, end)) = o.managed_fields_span() {
                scratch.clear();
                scratch.push_str(&raw[..start]);
                scratch.push_str(&raw[end..]);
                return RowObject::parse_cut(cols, Some(scratch), false);
            }
        }
        RowObject::parse_cut(cols, Some(raw), true)
    }

    /// `cut`: managedFields may still be there, to be cut before a [`Value`] is parsed.
    fn parse_cut(cols: &[Column], raw: Option<&'a str>, cut: bool) -> RowObject<'a> {
        let Some(raw) = raw.filter(|_| cols.iter().any(Column::needs_value)) else {
            return RowObject::Unparsed;
        };
        if typed(cols) {
            if let Some(p) = PodView::parse(raw) {
                return RowObject::Pod(p);
            }
        }
        // kubectl's printers never read managedFields (often half an object's bytes): they
        // are cut out before parsing, unless a custom resource's or the server's column
        // may name them.
        let cut = if cut && !reads_managed_fields(cols) {
            crate::output::object::without_managed_fields(raw)
        } else {
            None
        };
        let raw = cut.as_deref().unwrap_or(raw);
        RowObject::Value(serde_json::from_str(raw).unwrap_or(Value::Null))
    }

    /// `col`'s cell: what [`Column::cell`] gives for the whole object.
    pub fn cell(&self, col: &Column, created: Option<&str>, now: jiff::Timestamp) -> String {
        let p = match self {
            RowObject::Unparsed => return col.cell(&Value::Null, created, now),
            RowObject::Value(v) => return col.cell(v, created, now),
            RowObject::Pod(p) => p,
        };
        match &col.get {
            Getter::Age => age(created, now),
            Getter::Pod(c) => c.cell(p, now),
            Getter::Label(k) => label_cell(p.labels(), k),
            Getter::Labels => labels_cell(p.labels()),
            // RowObject::parse makes a PodView only for the getters above.
            Getter::Builtin(_) | Getter::Path { .. } | Getter::Server(_) | Getter::OwnKind => {
                col.cell(&Value::Null, created, now)
            }
        }
    }
}

/// Whether every column can read a [`PodView`].
fn typed(cols: &[Column]) -> bool {
    cols.iter().all(|c| {
        matches!(
            c.get,
            Getter::Age
                | Getter::Pod(_)
                | Getter::Label(_)
                | Getter::Labels
                | Getter::Server(_)
                | Getter::OwnKind
        )
    })
}

/// Whether a column may read `metadata.managedFields`: a custom resource's printer
/// column (any JSONPath) or the server's cell; kubectl's printers never do.
fn reads_managed_fields(cols: &[Column]) -> bool {
    cols.iter()
        .any(|c| matches!(c.get, Getter::Path { .. } | Getter::Server(_)))
}
