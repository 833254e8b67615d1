//! What every printer shares: the formats (`-o`) and views, [`Record`], the [`Printer`] trait, and [`printer`], which printer for which format.

use std::collections::HashMap;

use std::io::{self, Write};

use serde_json::Value;

use super::{blame, columns, diff, json, script, table, template, yaml};

use crate::cache::delta::{Delta, DeltaType};
use crate::cache::handlers::HandlerCall;
use crate::cache::object::ObjectRef;
use crate::cache::reflector::ReflectorEvent;
// The printers (columns/ too, as `crate::Resource`) name resources by target's type.
pub(super) use crate::client::target::Resource;

/// An output format (`-o`), with kubectl's names.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Format {
    /// kwatch's DELTA, NAME and RESOURCEVERSION, then kubectl's columns for the resource.
    #[default]
    Table,
    /// The table with kubectl's `-o wide` columns.
    Wide,
    /// JSON lines: kwatch's records (docs/output-schema.md).
    Json,
    Yaml,
    /// `kind.group/name` per delta, as `kubectl get -o name`.
    Name,
    /// `{"type":"ADDED|MODIFIED|DELETED","object":…}` per change, as
    /// `kubectl get -w --output-watch-events -o json` (one line each).
    WatchEvents,
    /// `-o custom-columns=HEADER:.path,…`: a header, then a row per delta.
    CustomColumns(Vec<template::CustomColumn>),
    /// `-o jsonpath=TEMPLATE`: the template rendered per delta, one line each.
    JsonPath(template::Template),
}

/// The names `-o` takes, for help and errors.
pub const FORMATS: &str =
    "table, wide, json, yaml, name, watch-events, custom-columns=SPEC, jsonpath=TEMPLATE";

/// Why an output format or view was refused: one line naming the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    /// `-o custom-columns=…` or `-o jsonpath=…` whose spec does not parse.
    #[error(transparent)]
    Template(#[from] template::Error),
    #[error(
        "handler calls are a view, not a format: use --view handlers \
         (with -o table, wide, json or yaml)"
    )]
    HandlersIsAView,
    #[error("unknown output format {0:?} (one of: {FORMATS})")]
    Unknown(String),
    #[error(
        "--view handlers prints with -o table, wide, json or yaml: \
         drop -o or pick one of those"
    )]
    NoHandlerCalls,
    #[error(
        "--view fleet prints a line per object across the contexts, as a table or JSON \
         lines: drop -o or use -o json"
    )]
    NoFleetLines,
}

impl Format {
    /// The words `-o` takes, as completion offers them: the last two are followed by
    /// their spec.
    pub const WORDS: [&'static str; 8] = [
        "table",
        "wide",
        "json",
        "yaml",
        "name",
        "watch-events",
        "custom-columns=",
        "jsonpath=",
    ];

    /// Parses `-o`'s value (kubectl's syntax).
    pub fn parse(s: &str) -> Result<Format, FormatError> {
        if let Some(spec) = s.strip_prefix("custom-columns=") {
            return Ok(Format::CustomColumns(template::parse_custom_columns(spec)?));
        }
        if let Some(t) = s.strip_prefix("jsonpath=") {
            return Ok(Format::JsonPath(template::Template::parse(t)?));
        }
        Ok(match s {
            "table" => Format::Table,
            "wide" => Format::Wide,
            "json" => Format::Json,
            "yaml" => Format::Yaml,
            "name" => Format::Name,
            "watch-events" => Format::WatchEvents,
            "handlers" => return Err(FormatError::HandlersIsAView),
            _ => return Err(FormatError::Unknown(s.to_owned())),
        })
    }
}

/// What a watch prints (`--view`): the deltas the informer's queue hands out, the
/// handler calls client-go's shared informer makes of them ([`crate::cache::handlers`]),
/// or each object across the contexts (`fleet`, [`super::fleet`]). Reflector events and
/// Synced are printed in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum View {
    #[default]
    Deltas,
    Handlers,
    Fleet,
}

impl View {
    /// Every view, in `--view`'s order.
    pub const ALL: [View; 3] = [View::Deltas, View::Handlers, View::Fleet];
    /// The views' names, as [`View::ALL`] lists them.
    pub const NAMES: [&'static str; 3] = ["deltas", "handlers", "fleet"];

    pub fn as_str(self) -> &'static str {
        match self {
            View::Deltas => "deltas",
            View::Handlers => "handlers",
            View::Fleet => "fleet",
        }
    }

    /// The formats that print handler calls, and those of the fleet's lines; every
    /// format prints objects per delta.
    pub fn check(self, format: &Format) -> Result<(), FormatError> {
        match (self, format) {
            (View::Deltas, _)
            | (View::Handlers, Format::Table | Format::Wide | Format::Json | Format::Yaml)
            | (View::Fleet, Format::Table | Format::Wide | Format::Json) => Ok(()),
            (View::Handlers, _) => Err(FormatError::NoHandlerCalls),
            (View::Fleet, _) => Err(FormatError::NoFleetLines),
        }
    }
}

impl std::str::FromStr for View {
    type Err = crate::text::UnknownWord;

    fn from_str(s: &str) -> Result<View, Self::Err> {
        View::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| crate::text::UnknownWord {
                word: s.to_owned(),
                expected: &View::NAMES,
            })
    }
}

impl std::fmt::Display for View {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Copy)]
pub enum Body<'a> {
    /// One delta of a popped key, in order. `initial_list`: popped before HasSynced.
    Delta {
        key: &'a str,
        delta: &'a Delta,
        initial_list: bool,
        /// The version of the object kwatch knew before this delta (the store's copy,
        /// or the previous delta's object within one pop); `None` if unknown.
        prev: Option<&'a ObjectRef>,
    },
    Event(&'a ReflectorEvent),
    /// HasSynced became true: the initial list has been popped.
    Synced,
    /// A call of the event handler (`--view handlers`), made by a delta of the pop of
    /// `key`; `initial_list`: that pop came before HasSynced.
    Handler {
        key: &'a str,
        call: &'a HandlerCall,
        initial_list: bool,
    },
}

impl Body<'_> {
    /// The view that shows this record; `None`: every view (events, Synced).
    pub fn view(&self) -> Option<View> {
        match self {
            Body::Delta { .. } => Some(View::Deltas),
            Body::Handler { .. } => Some(View::Handlers),
            Body::Event(_) | Body::Synced => None,
        }
    }
}

#[derive(Debug)]
pub struct Record<'a> {
    pub resource: &'a Resource,
    /// The kubeconfig context, when watching several (`--context a,b`).
    pub context: Option<&'a str>,
    pub time: jiff::Timestamp,
    pub body: Body<'a>,
    /// Which informer delivered it; all `None` where unknown (a recording without it).
    pub informer: InformerInfo<'a>,
    /// `--blame`'s attribution, made on first use ([`record_blame`]): the printer,
    /// `--stats` and the conflict finder read one computation. Empty when built.
    pub blame: std::cell::OnceCell<Option<Vec<blame::Blame>>>,
    /// `--follow`, `--events`: where the record's object sits in the owner graph.
    pub follow: Option<&'a Followed>,
}

impl<'a> Record<'a> {
    /// A record of `body` from an informer it does not name, its blame not made yet.
    pub fn new(
        resource: &'a Resource,
        context: Option<&'a str>,
        time: jiff::Timestamp,
        body: Body<'a>,
    ) -> Record<'a> {
        Record {
            resource,
            context,
            time,
            body,
            informer: InformerInfo::default(),
            blame: std::cell::OnceCell::new(),
            follow: None,
        }
    }
}

/// `--follow` and `--events`: a record's place in the owner graph (docs/output-schema.md,
/// "Followed objects").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Followed {
    /// The owner path from the root to the record's object, itself last, each step
    /// `short-kind/name` (`deploy/web › rs/web-7c9 › pod/web-7c9-x`); an Event's is its
    /// object's path with `event/NAME` after it.
    pub path: std::sync::Arc<str>,
    /// Set on the record that makes the object join or leave the graph.
    pub change: Option<GraphChange>,
}

impl Followed {
    /// The steps from the root before this object: 0 for a root.
    pub fn depth(&self) -> usize {
        self.path.matches(PATH_SEPARATOR).count()
    }
}

/// Between two steps of an owner path.
pub const PATH_SEPARATOR: &str = " › ";

/// Why an object joins or leaves the graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphChange {
    /// A root appeared, or an object naming an owner of the graph did.
    Joined,
    /// Deleted: it leaves (its children stay until they go: they still name it).
    Deleted,
    /// Its ownerReferences no longer lead to the graph: it leaves, its subtree with it.
    Orphaned,
    /// In the subtree of an orphaned object: it leaves with it (a `Sync` record of its
    /// object as its informer's store holds it, right after the orphaned one's).
    Left,
}

impl GraphChange {
    /// The change a record's `graph` field names ([`GraphChange::as_str`]'s words).
    pub fn parse(s: &str) -> Option<GraphChange> {
        use GraphChange::*;
        [Joined, Deleted, Orphaned, Left]
            .into_iter()
            .find(|c| c.as_str() == s)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            GraphChange::Joined => "joined",
            GraphChange::Deleted => "deleted",
            GraphChange::Orphaned => "orphaned",
            GraphChange::Left => "left",
        }
    }
}

/// Which informer delivered a record (docs/client-go-fidelity.md, "client-go releases"):
/// `List` and `Synced` records say `clientGo` and `queue`, deltas of a batch pop say `batch`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InformerInfo<'a> {
    /// The client-go release whose informer ran (`0.36`: `--client-go`'s, else the
    /// server's, see `Release::for_server`); `None` only in a recording made without it.
    pub client_go: Option<&'a str>,
    /// The queue: `DeltaFIFO`, `RealFIFO`, `RealFIFO+batch`, `RealFIFO+batch+atomic`.
    pub queue: Option<&'a str>,
    /// How many deltas the pop that delivered this delta took, when the queue pops in
    /// batches (the deltas of a popped atomic relist or resync count as one).
    pub batch: Option<u32>,
}

#[derive(Debug, Clone, Default)]
pub struct Options {
    pub format: Format,
    pub color: bool,
    /// Show the NAMESPACE column (table).
    pub all_namespaces: bool,
    /// Several resources are watched: show a KIND column (table).
    pub multi: bool,
    pub show_managed_fields: bool,
    /// `-L`: a column per label key (table).
    pub label_columns: Vec<String>,
    /// `--show-labels`: a LABELS column (table).
    pub show_labels: bool,
    /// `--no-headers` (table, custom-columns).
    pub no_headers: bool,
    /// `--timestamps`: a TIME column with when kwatch printed the record (table).
    pub timestamps: bool,
    /// `--diff`, `--diff-all`.
    pub diff: diff::DiffMode,
    /// `--blame`: who owns each changed path.
    pub blame: bool,
    /// Several contexts are watched: show a CONTEXT column (table).
    pub contexts: bool,
    /// With several contexts, those watched (`--view fleet` waits for each to sync).
    pub context_names: Vec<String>,
    /// Custom resources' additionalPrinterColumns, by [`Resource::name`].
    pub printer_columns: HashMap<String, Vec<columns::PrinterColumn>>,
    /// `--view`: deltas or handler calls (the printer drops the other kind).
    pub view: View,
    /// stdout is a terminal: server strings in `-o name|jsonpath|custom-columns` have
    /// their control characters escaped (to a pipe they are written as they are, as
    /// kubectl's jsonpath writes them). The table and `~` lines are always escaped.
    pub terminal: bool,
    /// `--events`: the tree's rows get kubectl's event columns TYPE, REASON and MESSAGE
    /// (`kubectl get events`), filled for its Events.
    pub events: bool,
    /// `--metadata-only`: objects are PartialObjectMetadata, so the table shows
    /// [`columns::metadata_columns`] for every resource.
    pub metadata_only: bool,
    /// The resources' names in the order they were resolved (`all`'s members as
    /// `kubectl get all` prints them): the table prints initial lists in this order.
    pub order: Vec<String>,
    /// Resources × contexts: the table holds initial lists until this many have synced
    /// or been left out (0 counts as 1).
    pub targets: usize,
}

pub trait Printer: Send {
    fn print(&mut self, rec: &Record<'_>) -> io::Result<()>;
    /// Called when the queue is drained: push buffered output out.
    fn flush(&mut self) -> io::Result<()>;
    /// Called once when the run ends: push everything out, held output too.
    fn finish(&mut self) -> io::Result<()> {
        self.flush()
    }
    /// `resource` (of `context`, with several) was left out before it synced (the server
    /// refused it, or failed for good): it never syncs.
    fn left_out(&mut self, _resource: &str, _context: Option<&str>) -> io::Result<()> {
        Ok(())
    }
}

/// Where diagnostics go (stderr in the binary): the table's `~` lines and the script
/// formats' error lines; never data.
pub type Diagnostics = Box<dyn Write + Send>;

/// The printer for `opts.format`: data to `w`, diagnostics to `diag`. JSON and YAML carry
/// reflector events as records on `w`; the table's `~` lines and the script formats'
/// error lines go to `diag`, so `w` carries data only.
pub fn printer<W, D>(opts: Options, w: W, diag: D) -> Box<dyn Printer>
where
    W: Write + Send + 'static,
    D: Write + Send + 'static,
{
    let diag: Diagnostics = Box::new(diag);
    let view = opts.view;
    if view == View::Fleet {
        // The table prints only its `~` lines here: the fleet's lines are the data.
        let contexts = opts.context_names.clone();
        let table = (opts.format != Format::Json).then(|| {
            Box::new(table::TablePrinter::new(opts, io::sink(), diag)) as Box<dyn Printer>
        });
        return Box::new(super::fleet::FleetPrinter::new(w, table, contexts));
    }
    let inner: Box<dyn Printer> = match opts.format {
        Format::Json => Box::new(json::JsonPrinter::new(opts, w)),
        Format::WatchEvents => Box::new(json::WatchEventPrinter::new(opts, w, diag)),
        Format::Yaml => Box::new(yaml::YamlPrinter::new(opts, w)),
        Format::Table | Format::Wide => Box::new(table::TablePrinter::new(opts, w, diag)),
        Format::Name | Format::CustomColumns(_) | Format::JsonPath(_) => {
            Box::new(script::ScriptPrinter::new(opts, w, diag))
        }
    };
    Box::new(ViewFilter { view, inner })
}

/// Passes on the records of its view (and the events every view shows), so a printer
/// sees deltas or handler calls, never both.
struct ViewFilter {
    view: View,
    inner: Box<dyn Printer>,
}

impl Printer for ViewFilter {
    fn print(&mut self, rec: &Record<'_>) -> io::Result<()> {
        if rec.body.view().is_some_and(|v| v != self.view) {
            return Ok(());
        }
        self.inner.print(rec)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }

    fn finish(&mut self) -> io::Result<()> {
        self.inner.finish()
    }

    fn left_out(&mut self, resource: &str, context: Option<&str>) -> io::Result<()> {
        self.inner.left_out(resource, context)
    }
}

/// `text` in an SGR colour (`31` red, `90` dark grey…), then a full reset: explicit
/// codes, not a terminal library's, so `--color always` colours the same whatever
/// `NO_COLOR` says and every colour is closed by exactly one reset.
pub(crate) fn paint(text: &str, sgr: u8) -> String {
    format!("\x1b[{sgr}m{text}\x1b[0m")
}

/// RFC 3339 with milliseconds, UTC.
pub fn format_time(t: jiff::Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// The record's `--diff`, if it has one: a delta's against the version kwatch knew, an
/// OnUpdate's from its old object to its new one.
pub(super) fn record_diff(rec: &Record<'_>, mode: diff::DiffMode) -> Option<diff::Diff> {
    match &rec.body {
        Body::Delta { delta, prev, .. } => {
            diff::compute(mode, delta.kind, *prev, delta.object.object())
        }
        Body::Handler {
            call: HandlerCall::OnUpdate { old, new },
            ..
        } => diff::compute(mode, DeltaType::Updated, Some(old), Some(new)),
        _ => None,
    }
}

/// The record's `--blame`, if asked and it has one (on the records that have a diff).
pub fn record_blame<'r>(rec: &'r Record<'_>, on: bool) -> Option<&'r [blame::Blame]> {
    if !on {
        return None;
    }
    let made = rec.blame.get_or_init(|| match &rec.body {
        Body::Delta { delta, prev, .. } => blame::compute(delta.kind, *prev, delta.object.object()),
        Body::Handler {
            call: HandlerCall::OnUpdate { old, new },
            ..
        } => blame::compute(DeltaType::Updated, Some(old), Some(new)),
        _ => None,
    });
    made.as_deref()
}

/// The objects a record carries, in the order they are written after its fields, each
/// with its field name: a handler call's old object (OnUpdate), then the object.
pub(super) fn record_objects<'a>(rec: &Record<'a>) -> [(&'static str, Option<&'a ObjectRef>); 2] {
    match rec.body {
        Body::Delta { delta, .. } => [("oldObject", None), ("object", delta.object.object())],
        Body::Handler { call, .. } => [("oldObject", call.old()), ("object", call.object())],
        Body::Event(_) | Body::Synced => [("oldObject", None), ("object", None)],
    }
}

/// The object's JSON for output: as received, minus `metadata.managedFields` unless asked.
/// The member is cut out of the server's bytes (with one comma), the rest left as it was
/// sent: no tree is built, and the line is the server's JSON as it is with
/// `--show-managed-fields` or for an object without managedFields.
pub(super) fn object_json(o: &ObjectRef, show_managed_fields: bool) -> std::borrow::Cow<'_, str> {
    let raw = o.raw();
    if show_managed_fields || !o.meta().has_managed_fields {
        return raw.into();
    }
    // Where reading the metadata found it: two copies, nothing scanned.
    if let Some((start, end)) = o.managed_fields_span() {
        let mut out = String::with_capacity(raw.len() - (end - start));
        out.push_str(&raw[..start]);
        out.push_str(&raw[end..]);
        return out.into();
    }
    match without_managed_fields(raw) {
        Some(cut) => cut,
        None => object_json_rewritten(o).into(),
    }
}

/// `raw` (an object's validated JSON) without `metadata.managedFields`, cut out of its
/// bytes; `None` when the cut is not certain to leave the same JSON value as a reader
/// would see it (`metadata` twice, a key with an escape on the way): then
/// [`object_json_rewritten`] decides.
pub(crate) fn without_managed_fields(raw: &str) -> Option<std::borrow::Cow<'_, str>> {
    let b = raw.as_bytes();
    let Some(meta) = crate::scan::member(b, crate::scan::skip_ws(b, 0), b"metadata")? else {
        return Some(raw.into());
    };
    let mut spans = Vec::with_capacity(1);
    if b[meta] == b'{' {
        crate::scan::cut_members(b, meta, |k| k == b"managedFields", &mut spans)?;
    }
    Some(if spans.is_empty() {
        raw.into()
    } else {
        crate::scan::without(raw, &spans).into()
    })
}

/// [`object_json`] the way it was made before the cut: parsed into a tree, the member
/// removed, written again (JSON's escapes and numbers in serde_json's form).
pub(crate) fn object_json_rewritten(o: &ObjectRef) -> String {
    let raw = o.raw();
    let mut v = o.to_value();
    if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    serde_json::to_string(&v).unwrap_or_else(|_| raw.to_owned())
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
