//! What the command line chose for the printers: the format (`-o`), the view (`--view`)
//! and the [`Options`] every printer reads.

use std::collections::HashMap;

use super::columns;
use crate::informer::diff;
use crate::template;

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
