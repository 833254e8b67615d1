//! Command-line definitions (clap derive) and nothing else: parsing only, no I/O.
//!
//! The library's types know nothing of clap: the flags whose values are a library enum's
//! names are parsed here from the enum's names and `FromStr` ([`named`]), `-o` with
//! kubectl's syntax ([`FormatParser`]), the other words with their parsers' own lists
//! ([`Vocabulary`]).
//!
//! Help text, the man page and shell completions are all generated from [`Cli`]: the
//! help's own sections are in [`crate::app::help`], the man page in [`crate::app::man`],
//! the completion scripts in [`crate::app::complete`]; [`crate::app::usage`] reads the
//! command line.
//!
//! Built without the cargo feature `sim`, `kwatch sim` and `--sim` are still parsed, but
//! hidden from the help, and fail with [`crate::app::sim::NO_SIMULATOR`]: an old habit or a
//! README example then gets one line saying how to rebuild, not clap's "unexpected
//! argument".

use std::path::PathBuf;
use std::time::Duration;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand};

use crate::app::help::{long_after_help, short_after_help};
use crate::cache::queue::FifoKind;
use crate::cache::reflector::WatchListMode;
use crate::client::source::Wire;
use crate::informer::filter::{Parts, Types};
use crate::output::{Format, FormatError, View};

/// A command line clap accepts but kwatch does not (checked by [`WatchArgs::normalize`]
/// and [`ReplayArgs::check`]): one line naming the fix, exit 2.
#[derive(Debug, thiserror::Error)]
pub enum BadUsage {
    #[error(
        "there is no need to name the object again after TYPE/NAME: use `{0}` alone (kwatch \
         watches one object at a time)"
    )]
    NameAfterTypeName(String),
    #[error(
        "{0:?}: expected TYPE/NAME with one type and one name, e.g. pod/web or \
         deployments.apps/web"
    )]
    NotTypeName(String),
    #[error(
        "there is no need to give the type twice: use `{name}` alone instead of \
         `{resources} {name}`"
    )]
    TypeTwice { name: String, resources: String },
    #[error(
        "kwatch watches one name at a time, as `kubectl get -w` does (got {}): run one kwatch \
         per name, or select several with -l or --field-selector",
        .0.join(", ")
    )]
    SeveralNames(Vec<String>),
    /// kubectl's `get` (ResourceBuilder's "name cannot be provided when a selector is
    /// specified").
    #[error(
        "name cannot be provided when a selector is specified: drop {0:?}, or select it with \
         --field-selector metadata.name={0}"
    )]
    NameWithSelector(String),
    /// client-go's `transport.TLSConfigFor`.
    #[error(
        "specifying a root certificates file with the insecure flag is not allowed: give \
         --certificate-authority or --insecure-skip-tls-verify, not both"
    )]
    InsecureWithCa,
    #[error(
        "--live shows a running informer, not a recording: replay with                         \
         -o table, -o json or -o yaml"
    )]
    LiveReplay,
    #[error("--probe: {0}")]
    Probe(crate::client::target::Error),
    #[error("-l {selector:?}: {error}")]
    Selector {
        selector: String,
        error: crate::selector::Error,
    },
    /// A name or namespace that could not be a URL path segment, or a namespace that is no
    /// DNS-1123 label.
    #[error(transparent)]
    Target(#[from] crate::client::target::Error),
    #[error(transparent)]
    Output(#[from] FormatError),
    #[error(transparent)]
    Informer(#[from] crate::cache::release::Error),
}

/// A flag's value that does not parse: clap prints it after `invalid value '…' for
/// '--flag'`.
#[derive(Debug, thiserror::Error)]
pub enum BadValue {
    #[error("{0} (expected a duration such as 500ms, 30s, 5m or 1h30m)")]
    Duration(humantime::DurationError),
    #[error("a period must be longer than 0, e.g. 30s or 5m")]
    ZeroPeriod,
    /// `--stall-after`: what is wrong with the period, and that `auto` is the alternative.
    #[error("{0}, or auto")]
    StallAfter(Box<BadValue>),
    #[error("expected a number ≥ 0, e.g. 2 or 0.5, not {0:?}")]
    Negative(String),
    #[error("expected MAJOR.MINOR, e.g. 1.35, not {0:?}")]
    ServerVersion(String),
    #[error("expected I/N with 0 ≤ I < N, e.g. 0/3 for the first of three shards, not {0:?}")]
    Shard(String),
}

/// Watch any Kubernetes resource the way a client-go informer sees it.
#[derive(Debug, Parser)]
#[command(name = "kwatch", version, about, long_about = None)]
#[command(after_help = short_after_help(), after_long_help = long_after_help())]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    #[command(flatten)]
    pub watch: WatchArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the built-in simulated Kubernetes API server until interrupted.
    #[command(hide = cfg!(not(feature = "sim")))]
    Sim(SimArgs),
    /// Print a shell completion script to stdout.
    ///
    /// The script asks kwatch for the candidates as you type (`COMPLETE=SHELL kwatch -- …`):
    /// namespaces, resources and object names from the cluster the line names, contexts
    /// from its kubeconfig. `--static` prints a script that needs no kwatch on PATH to complete
    /// flags and fixed values only.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
        /// A script with the flags and fixed value lists only, asking kwatch nothing.
        #[arg(long = "static")]
        fixed: bool,
    },
    /// Print the man page (roff) to stdout.
    Man,
    /// Check how the server lists and watches a resource, as client-go expects.
    ///
    /// One row per check (discovery, access, LIST paging and resourceVersions, WATCH and
    /// its bookmarks, a too-old resourceVersion, the streaming list and its end bookmark,
    /// resourceVersions, encodings, the sync): ok, warn or fail, what the server did and
    /// what client-go will do about it. Exit 0 when no check failed, 1 when one did.
    Check(Box<CheckArgs>),
    /// Re-render a recording made with --record, in any output format.
    Replay(Box<ReplayArgs>),
}

/// Options of `kwatch replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// A JSON-lines file written by `--record` (or `-o json`), `-` for stdin, or the
    /// database `--record` wrote into: sqlite:PATH, postgres://USER@HOST/DB (postgres:
    /// alone reads the PG* variables, as psql).
    #[arg(value_name = "FILE|URL")]
    pub file: PathBuf,

    /// Only the records of this resource, as recorded (pods, deployments.apps, or
    /// deployments for deployments.*); reflector records of other resources left out too.
    #[arg(value_name = "RESOURCE")]
    pub resource: Option<String>,

    /// Only the records of the object of this name (the resource's reflector records stay).
    #[arg(value_name = "NAME")]
    pub name: Option<String>,

    /// Only the recorded objects of this namespace (cluster-scoped ones stay).
    #[arg(short = 'n', long, value_name = "NS", value_hint = clap::ValueHint::Other)]
    pub namespace: Option<String>,

    /// Only the recorded objects whose labels match (=, ==, !=, in, notin, exists, !key).
    #[arg(short = 'l', long, value_name = "SELECTOR", value_hint = clap::ValueHint::Other)]
    pub selector: Option<String>,

    /// Only the records of these contexts (comma-separated); a file recorded from one
    /// context names none, and is not filtered.
    #[arg(long, value_name = "CONTEXT[,CONTEXT…]", value_delimiter = ',')]
    pub context: Vec<String>,

    /// Only the records at or after TIME (RFC 3339, e.g. 2026-11-28T03:00:00Z; a time
    /// without offset is UTC; 15m is fifteen minutes ago). --diff and --view handlers
    /// still know each object as it was before.
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub since: Option<TimeArg>,

    /// A TIME: only the records at or before it. Else a CONDITION: stop after the record
    /// that meets it (as the watch's --until), exit 0 when met, 4 when the recording ends
    /// first.
    #[arg(long, value_name = "TIME|CONDITION", value_parser = parse_until)]
    pub until: Option<UntilArg>,

    /// Every object's state at TIME: its last record at or before it, unless that was its
    /// deletion (answered from an index in a database).
    #[arg(long, value_name = "TIME", value_parser = parse_time,
          conflicts_with_all = ["since", "until", "watch_only"])]
    pub at: Option<TimeArg>,

    /// With a database and --at: its query plan on stderr first (EXPLAIN), to see that it
    /// reads the index (the tests and the benchmark).
    #[arg(long, hide = true, requires = "at")]
    pub explain: bool,

    /// Stop after printing this many deltas (handler calls with --view handlers).
    #[arg(long, value_name = "N")]
    pub max_events: Option<u64>,

    /// At the end, the summary of the records replayed on stderr (as the watch's --stats).
    #[arg(long)]
    pub stats: bool,

    /// Do not print the recorded initial lists' deltas (as the watch's --watch-only).
    #[arg(long, hide_short_help = true)]
    pub watch_only: bool,

    /// Draw the recording as one HTML page at OUT.html instead of printing it
    #[arg(
        long_help = "Draw the recording as one self-contained HTML page at OUT.html instead of \
          printing it: a lane per informer (lists, watches and why each ended, backoffs, \
          relists, bookmarks, the sync, stalls, staleness) and per object (each delta by type, \
          its diff and who made it), on one time axis to zoom, pan, filter and search; it opens \
          from disk with no network. The print filters, -n, -l, --max-events and --until \
          choose what it draws.",
        long,
        value_name = "OUT.html",
        value_parser = parse_timeline_path,
        value_hint = clap::ValueHint::FilePath
    )]
    pub timeline: Option<PathBuf>,

    #[command(flatten)]
    pub output: OutputArgs,

    #[command(flatten)]
    pub filter: FilterArgs,
}

/// A time as `replay --since/--until/--at` take it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TimeArg {
    At(jiff::Timestamp),
    /// That long before the replay starts (`15m`).
    Ago(Duration),
}

impl TimeArg {
    /// The time, `now` being the replay's start.
    pub fn resolve(self, now: jiff::Timestamp) -> jiff::Timestamp {
        match self {
            TimeArg::At(t) => t,
            TimeArg::Ago(d) => jiff::SignedDuration::try_from(d)
                .ok()
                .and_then(|d| now.checked_sub(d).ok())
                .unwrap_or(jiff::Timestamp::MIN),
        }
    }
}

/// `replay --until`: a time, or the watch's condition.
#[derive(Debug, Clone)]
pub enum UntilArg {
    Time(TimeArg),
    Condition(crate::informer::until::Condition),
}

/// A time: RFC 3339 (`2026-11-28T03:12:00Z`, `…+02:00`), a civil time taken as UTC
/// (`2026-11-28T03:12`, `2026-11-28 03:12:00`), or a duration before now (`15m`).
pub fn parse_time(s: &str) -> Result<TimeArg, String> {
    if let Ok(t) = s.parse::<jiff::Timestamp>() {
        return Ok(TimeArg::At(t));
    }
    if let Ok(dt) = s.parse::<jiff::civil::DateTime>() {
        if let Ok(z) = dt.to_zoned(jiff::tz::TimeZone::UTC) {
            return Ok(TimeArg::At(z.timestamp()));
        }
    }
    if let Ok(d) = humantime::parse_duration(s) {
        return Ok(TimeArg::Ago(d));
    }
    Err(format!(
        "expected a time such as 2026-11-28T03:12:00Z (RFC 3339; UTC without an offset) or a \
         duration before now such as 15m, not {s:?}"
    ))
}

/// `replay --until`: a value that starts like a date or a duration is a time, else a
/// condition (whose words never start with a digit).
fn parse_until(s: &str) -> Result<UntilArg, String> {
    if s.starts_with(|c: char| c.is_ascii_digit()) {
        return parse_time(s).map(UntilArg::Time);
    }
    crate::informer::until::Condition::parse(s)
        .map(UntilArg::Condition)
        .map_err(|e| e.to_string())
}

impl ReplayArgs {
    /// Checks the output flags, the namespace and the selector (`Err`: one line naming
    /// the fix).
    pub fn check(&self) -> Result<(), BadUsage> {
        self.output.check()?;
        if self.output.live {
            return Err(BadUsage::LiveReplay);
        }
        check_scope([&self.namespace], &self.selector)
    }
}

/// `-n` (and any other namespace flag) and `-l`, as a watch takes them: an empty
/// namespace is the context's; a selector must parse.
fn check_scope<const N: usize>(
    namespaces: [&Option<String>; N],
    selector: &Option<String>,
) -> Result<(), BadUsage> {
    for ns in namespaces.into_iter().flatten() {
        if !ns.is_empty() {
            crate::client::target::validate_namespace(ns)?;
        }
    }
    if let Some(s) = selector {
        crate::selector::parse_labels(s).map_err(|error| BadUsage::Selector {
            selector: s.clone(),
            error,
        })?;
    }
    Ok(())
}

/// How records are printed (the watch and `kwatch replay`).
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Output")]
pub struct OutputArgs {
    /// Output format: table, wide, json, yaml, name, watch-events, custom-columns=…, jsonpath=…
    ///
    /// table, wide, json, yaml, name, watch-events (kubectl's --output-watch-events -o json
    /// lines), custom-columns=HEADER:.path,… or jsonpath=TEMPLATE (kubectl's syntax, applied
    /// per delta).
    #[arg(short = 'o', long, value_name = "FORMAT", value_parser = FormatParser,
          default_value = "table", hide_possible_values = true)]
    pub output: Format,

    /// A full-screen view on a terminal: the informer's cache as a table that changes in
    /// place, with each object's history (Enter) and the reflector's state (? for keys).
    #[arg(short = 'i', long, hide_short_help = true)]
    pub live: bool,

    /// --live: how many versions of each object its history screen (Enter) keeps; the
    /// oldest go first.
    #[arg(long, value_name = "N", default_value_t = crate::output::live::HISTORY,
          requires = "live", hide_short_help = true,
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub live_history: u32,

    /// Keep metadata.managedFields in printed objects (dropped by default, as kubectl does).
    #[arg(long, hide_short_help = true)]
    pub show_managed_fields: bool,

    /// When to use colour: auto (a terminal and NO_COLOR unset), always or never.
    #[arg(long, hide_short_help = true, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,

    /// Table: a column with the value of each of these labels (comma-separated keys).
    #[arg(short = 'L', long, value_name = "KEY,…", value_delimiter = ',')]
    pub label_columns: Vec<String>,

    /// Table: a LABELS column with all labels.
    #[arg(long, hide_short_help = true)]
    pub show_labels: bool,

    /// Table and custom-columns: no header line.
    #[arg(long)]
    pub no_headers: bool,

    /// Table: a TIME column with when each delta was printed (UTC, milliseconds).
    #[arg(long, hide_short_help = true)]
    pub timestamps: bool,

    /// Show what each update changed against the version kwatch knew before
    #[arg(
        long_help = "Show what each Updated/Replaced/Sync delta changed against the previous version \
          kwatch knew: a JSON Patch (`diff`) and `changed` in JSON, `path: old → new` \
          lines in the table and YAML. resourceVersion, managedFields and generation are \
          left out.",
        long
    )]
    pub diff: bool,

    /// As --diff, including resourceVersion, managedFields and generation.
    #[arg(long, hide_short_help = true)]
    pub diff_all: bool,

    /// Name who made each change: the managedFields entry owning each changed path
    ///
    /// On every Updated/Replaced/Sync (and OnUpdate) whose object changed, each path
    /// --diff would show, with the metadata.managedFields entry that owns it after the
    /// change (manager, operation, subresource, time), or `unowned`: a `blame` field in
    /// JSON and YAML, `path ← manager (operation, time)` lines in the table. --record
    /// keeps managedFields so that replay blames the same. Not with --transform
    /// strip-managed-fields, which drops what it reads.
    #[arg(long)]
    pub blame: bool,

    /// What to print: deltas, handlers (the OnAdd/OnUpdate/OnDelete calls) or fleet
    ///
    /// deltas (what the informer's queue hands out), handlers (the OnAdd/OnUpdate/OnDelete
    /// calls client-go's shared informer makes of them, for one handler whose resync period
    /// is --resync; with -o table, wide, json or yaml) or fleet (each object across the
    /// contexts: which have it at which generation, a line per change; table or -o json).
    #[arg(long, value_parser = named::<View>(&View::NAMES, &[]), default_value_t = View::Deltas,
          value_name = "VIEW", hide_short_help = true)]
    pub view: View,
}

impl OutputArgs {
    /// Checks the flags that only go together (`Err`: one line naming the fix).
    pub fn check(&self) -> Result<(), FormatError> {
        self.view.check(&self.output)
    }
}

/// The clap command of [`Cli`].
pub fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}

/// The value parser of `-o`: kubectl's syntax ([`Format::parse`]), a refusal on one line
/// as clap words an invalid value; the format words ([`Format::WORDS`]) are offered to
/// shell completion.
#[derive(Debug, Clone, Copy)]
struct FormatParser;

impl TypedValueParser for FormatParser {
    type Value = Format;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Format, clap::Error> {
        let name = arg.map_or("--output".to_owned(), |a| a.to_string());
        let fail = |why: String| {
            let msg = format!(
                "invalid value '{}' for '{name}': {why}\n",
                value.to_string_lossy()
            );
            clap::Error::raw(clap::error::ErrorKind::ValueValidation, msg).with_cmd(cmd)
        };
        let s = value
            .to_str()
            .ok_or_else(|| fail("not valid UTF-8".into()))?;
        Format::parse(s).map_err(|e| fail(e.to_string()))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(Format::WORDS.into_iter().map(PossibleValue::new)))
    }
}

/// The value parser of a flag whose values are the names of a library enum: `names` (the
/// enum's), each with its help in `help` if it has one there, read with the enum's
/// `FromStr`. Help, the man page and shell completion list them; a value that is none of
/// them is refused as clap refuses one of a `ValueEnum` (a value that is not UTF-8 named
/// in its lossy form).
fn named<T>(names: &[&'static str], help: &[(&str, &'static str)]) -> Named<T> {
    let values = names.iter().map(|name| {
        let value = PossibleValue::new(*name);
        match help.iter().find(|(n, _)| n == name) {
            Some((_, h)) => value.help(*h),
            None => value,
        }
    });
    Named {
        values: PossibleValuesParser::new(values),
        of: std::marker::PhantomData,
    }
}

/// See [`named`].
#[derive(Clone)]
struct Named<T> {
    values: PossibleValuesParser,
    of: std::marker::PhantomData<fn() -> T>,
}

impl<T> TypedValueParser for Named<T>
where
    T: std::str::FromStr + Clone + Send + Sync + 'static,
    T::Err: std::fmt::Display,
{
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<T, clap::Error> {
        let lossy = value.to_string_lossy();
        let name = self
            .values
            .parse_ref(cmd, arg, std::ffi::OsStr::new(lossy.as_ref()))?;
        name.parse().map_err(|e: T::Err| {
            clap::Error::raw(clap::error::ErrorKind::InvalidValue, e).with_cmd(cmd)
        })
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        self.values.possible_values()
    }
}

/// The help of each `--watch-list` mode.
const WATCH_LIST_HELP: &[(&str, &str)] = &[
    (
        "auto",
        "Try it; if the server rejects it, LIST from then on",
    ),
    (
        "on",
        "Always try it first (falling back to LIST for an attempt it fails)",
    ),
    ("off", "Always LIST"),
];

/// The help of each `--wire` encoding (json needs none).
const WIRE_HELP: &[(&str, &str)] = &[
    (
        "auto",
        "Protobuf for built-in types (kube-controller-manager's choice), JSON for the rest",
    ),
    (
        "protobuf",
        "As `auto`: custom resources and the server's Tables have no protobuf to ask for",
    ),
];

/// The value parser of a flag with a fixed vocabulary: `parse` reads the value (its `Err`
/// is clap's "invalid value" message), `words` is the vocabulary `parse` reads, offered to
/// shell completion as the possible values (help lists them itself, so flags using this
/// hide them there).
struct Vocabulary<T, E> {
    parse: fn(&str) -> Result<T, E>,
    words: fn() -> Vec<&'static str>,
}

// Not derived: the derive would ask `T` and `E` to be `Clone`; two function pointers are.
impl<T, E> Clone for Vocabulary<T, E> {
    fn clone(&self) -> Self {
        Vocabulary {
            parse: self.parse,
            words: self.words,
        }
    }
}

impl<T, E> TypedValueParser for Vocabulary<T, E>
where
    T: Clone + Send + Sync + 'static,
    E: Into<Box<dyn std::error::Error + Send + Sync + 'static>> + 'static,
{
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<T, clap::Error> {
        TypedValueParser::parse_ref(&self.parse, cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        let words = (self.words)().into_iter();
        Some(Box::new(words.map(PossibleValue::new)))
    }
}

/// `--client-go`'s releases.
fn releases() -> Vec<&'static str> {
    crate::cache::release::Release::ALL
        .map(|r| r.as_str())
        .to_vec()
}

/// `--transform`'s forms.
fn transforms() -> Vec<&'static str> {
    crate::cache::transform::Transform::FORMS.to_vec()
}

/// A size in bytes (`--record-buffer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteSize(pub usize);

/// `65536`, `64KiB`, `32MiB`, `1GiB` (also KB, MB, GB, K, M, G: as powers of 1024).
pub fn parse_size(s: &str) -> Result<ByteSize, String> {
    let digits = s.trim().trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = &s.trim()[digits.len()..];
    let scale: usize = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => {
            return Err(format!(
                "{unit:?}: expected a size such as 65536, 64KiB or 32MiB"
            ))
        }
    };
    digits
        .trim()
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .map(ByteSize)
        .ok_or_else(|| format!("expected a size such as 65536, 64KiB or 32MiB, not {s:?}"))
}

/// Options of a watch (the default command).
#[derive(Debug, Args)]
#[command(next_help_heading = "Watch")]
pub struct WatchArgs {
    /// Resource(s) to watch, comma-separated (pods, deploy,svc, all), or TYPE/NAME
    #[arg(long_help = "Resource(s) to watch, comma-separated: plural, singular, short name, Kind, \
          resource.group or resource.version.group (pods, po, Pod, deployments.apps, …); \
          `all` for discovery's category all, as `kubectl get all`; or TYPE/NAME for one \
          object, as kubectl takes it (pod/web, deploy/web).",
          value_name = "RESOURCE", required_unless_present = "every_resource",
          value_hint = clap::ValueHint::Other)]
    pub resources: Option<String>,

    /// Watch only the object with this name (one name, as `kubectl get -w` watches one).
    #[arg(value_name = "NAME")]
    pub name: Option<String>,

    /// Further names, only to reject them with a clear message (see [`WatchArgs::normalize`]).
    #[arg(value_name = "MORE", hide = true)]
    pub more_names: Vec<String>,

    /// Namespace to watch (default: the context's namespace, else "default").
    #[arg(short = 'n', long, value_name = "NS", value_hint = clap::ValueHint::Other)]
    pub namespace: Option<String>,

    /// Watch all namespaces (kubectl's --all-namespaces[=true|false] too).
    #[arg(short = 'A', long, value_name = "BOOL", num_args = 0..=1, require_equals = true,
          default_value = "false", default_missing_value = "true",
          action = clap::ArgAction::Set, value_parser = clap::builder::BoolishValueParser::new(),
          hide_default_value = true, hide_possible_values = true)]
    pub all_namespaces: bool,

    /// Accepted and ignored, for kubectl's habit (`kubectl get -w`): kwatch always watches.
    #[arg(short = 'w', long = "watch", hide_short_help = true)]
    pub watch_flag: bool,

    /// Label selector (=, ==, !=, in, notin, exists, !key), as kubectl's -l.
    #[arg(short = 'l', long, value_name = "SELECTOR", value_hint = clap::ValueHint::Other)]
    pub selector: Option<String>,

    /// Field selector, e.g. status.phase=Running.
    #[arg(long, value_name = "SELECTOR")]
    pub field_selector: Option<String>,

    /// Also watch what they own, transitively (deploy → rs → pods), live
    #[arg(
        long_help = "Also watch what the watched objects own, transitively, live: every object whose \
          metadata.ownerReferences lead to one of them (a Deployment's ReplicaSets and their \
          Pods, a Job's Pods, a Service's EndpointSlices, a custom resource's children). The \
          child resources are the built-in controllers' (a custom resource's: every namespaced \
          resource of discovery); --follow-kinds changes them. Records carry the owner path \
          (`ownerPath`), and say when an object joins or leaves the graph (`graph`).",
        long,
        hide_short_help = true
    )]
    pub follow: bool,

    /// --follow's child resources: K,… replaces the defaults, +K adds, -K takes away
    #[arg(long, value_name = "K,…", requires = "follow", hide_short_help = true,
          value_parser = crate::informer::follow::KindsSpec::parse)]
    pub follow_kinds: Option<crate::informer::follow::KindsSpec>,

    /// Also show the Events about the objects shown
    #[arg(
        long_help = "Also show the core/v1 Events whose involvedObject is an object shown (watched \
          or followed), as records of their own beside it (`ownerPath` ends with the event); \
          an Event about an object not seen yet is held until it appears (30 s at most).",
        long,
        hide_short_help = true,
        // An Event's metadata does not say which object it is about.
        conflicts_with = "metadata_only"
    )]
    pub events: bool,

    /// Watch every resource the server can list and watch (events left out)
    #[arg(
        long_help = "Watch every resource the server can list and watch (only namespaced ones unless \
          -A), events left out; RESOURCE adds more (`--every-resource events`). A resource \
          the server refuses (403, 404, 405) is reported and left out, as with `all`.",
        long
    )]
    pub every_resource: bool,

    /// Start the built-in simulated cluster in-process and watch it.
    #[arg(long, conflicts_with_all = ["kubeconfig", "context", "all_contexts"], hide = cfg!(not(feature = "sim")),
          hide_short_help = true)]
    pub sim: bool,

    /// Also write the records to FILE, or into a database: sqlite:PATH, postgres://…
    #[arg(
        long_help = "Also write the records (whatever -o shows; objects keep their managedFields, \
          so that `kwatch replay --blame` names managers) to FILE as JSON lines, or into a \
          database: sqlite:PATH (a file, no server) or PostgreSQL (postgres://USER@HOST/DB, \
          postgresql://…; postgres: alone or with libpq's key=value words reads the PG* \
          variables and ~/.pgpass, as psql). Given twice, both get every record (a file and \
          a database; one database at most). Into a database the rows are written in \
          batches off the informer's path, each once; while it is unreachable they wait \
          (see --record-buffer) and the watch goes on. Replay with `kwatch replay FILE|URL`.",
        long,
        value_name = "FILE|URL"
    )]
    pub record: Vec<PathBuf>,

    /// With --record URL: memory held for records the database cannot take, then a file
    #[arg(
        long_help = "With --record URL: while the database cannot take records (down, slow), \
          hold up to SIZE of them in memory, then append the next to a spill file \
          under $XDG_STATE_HOME/kwatch/record (~/.local/state/kwatch/record); all are \
          written, oldest first, once it is back. SIZE in bytes, or with KiB, MiB or GiB.",
        long,
        value_name = "SIZE",
        default_value = "32MiB",
        value_parser = parse_size,
        hide_short_help = true
    )]
    pub record_buffer: ByteSize,

    /// At exit, write what the informers lived through as one HTML page to OUT.html
    #[arg(
        long_help = "At exit, write what the informers lived through as one self-contained HTML \
          page to OUT.html (created at the start, 0600: diffs show values): the same page as \
          `kwatch replay FILE --timeline OUT.html` of a --record FILE of the run, of the \
          records shown.",
        long,
        value_name = "OUT.html",
        value_parser = parse_timeline_path,
        value_hint = clap::ValueHint::FilePath,
        hide_short_help = true
    )]
    pub timeline: Option<PathBuf>,

    /// On exit, a summary on stderr: deltas, lists, bookmarks, backoffs, time to synced…
    #[arg(
        long_help = "On exit, a summary on stderr: deltas by type, lists by reason, pages, bookmarks, \
          backoffs, time to synced, largest queue depth, dedups.",
        long
    )]
    pub stats: bool,

    /// Measure write-to-delta latency: patch a ConfigMap of kwatch's own in NAMESPACE
    #[arg(
        long_help = "Measure write-to-delta latency: create a ConfigMap of kwatch's own in NAMESPACE \
          (labelled kwatch.io/probe=true), patch it every --probe-interval with the send \
          time, and time each patch until its delta pops from an informer of its own \
          (printed nowhere): a Latency record per patch, p50/p90/p99/max in --stats. Needs \
          create, patch and delete on configmaps there; the ConfigMap is deleted on exit, \
          and a crashed run's at the next start. Nothing is written without this flag.",
        long,
        value_name = "NAMESPACE",
        hide_short_help = true
    )]
    pub probe: Option<String>,

    /// How often --probe patches its ConfigMap.
    #[arg(long, value_name = "D", value_parser = parse_period, default_value = "2s",
          requires = "probe", hide_short_help = true)]
    pub probe_interval: Duration,
    /// Serve the informer's metrics (OpenMetrics) at http://ADDR/metrics, e.g.
    /// 127.0.0.1:9464, localhost:9464 or :9464 (every interface); port 0 picks a free
    /// port (the address is printed on stderr).
    #[arg(long, value_name = "ADDR", value_parser = crate::app::metrics::parse_addr,
          hide_short_help = true)]
    pub metrics: Option<crate::app::metrics::ListenAddr>,

    /// More diagnostics on stderr (-v, -vv, -vvv); RUST_LOG overrides.
    #[arg(short = 'v', long = "verbose", action = clap::ArgAction::Count, hide_short_help = true)]
    pub verbose: u8,

    #[command(flatten)]
    pub output: OutputArgs,

    #[command(flatten)]
    pub cluster: ClusterArgs,

    #[command(flatten)]
    pub reflector: ReflectorArgs,

    #[command(flatten)]
    pub stop: StopArgs,

    #[command(flatten)]
    pub filter: FilterArgs,
}

/// Which deltas are printed; the informer applies and counts them all.
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Filters")]
pub struct FilterArgs {
    /// Hide a relist's or resync's deltas that change nothing; keep its Relisted summary
    ///
    /// Hide the Replaced/Sync deltas of a relist or resync whose object has the
    /// resourceVersion and uid the informer already held (and, with --view handlers, the
    /// same-version OnUpdate calls they make); each relist's Relisted record says what it
    /// changed. The informer still pops and applies them; --stats counts them.
    #[arg(long, hide_short_help = true)]
    pub quiet_relists: bool,

    /// Print only these delta types: Added,Updated,Deleted,Replaced,Sync,ReplacedAll,SyncAll
    #[arg(long, value_name = "TYPES", hide_short_help = true, hide_possible_values = true,
          value_parser = Vocabulary { parse: Types::parse, words: Types::names })]
    pub types: Option<Types>,

    /// Print an update only when PARTS changed: spec,status,metadata,labels,annotations,data
    ///
    /// Print an Updated/Replaced/Sync delta only when one of these parts of the object
    /// changed against the version the informer held (metadata without resourceVersion,
    /// managedFields and generation; data is data and binaryData); Added and Deleted
    /// always pass.
    #[arg(long, value_name = "PARTS", hide_short_help = true, hide_possible_values = true,
          value_parser = Vocabulary { parse: Parts::parse, words: Parts::names })]
    pub changes: Option<Parts>,
}

impl WatchArgs {
    /// Checks and rewrites the positional arguments and the namespace as kubectl reads
    /// them: `TYPE/NAME` becomes RESOURCE and NAME; one name only; a name and a namespace
    /// that could not be a URL path segment (or a namespace that is not a DNS-1123 label)
    /// are rejected before any request. `Err` is one line naming the problem and a fix.
    pub fn normalize(&mut self) -> Result<(), BadUsage> {
        let resources = self.resources.clone().unwrap_or_default();
        if let Some((ty, name)) = resources.split_once('/') {
            if self.name.is_some() {
                return Err(BadUsage::NameAfterTypeName(resources));
            }
            if ty.is_empty() || name.is_empty() || ty.contains(',') || name.contains('/') {
                return Err(BadUsage::NotTypeName(resources));
            }
            self.resources = Some(ty.to_owned());
            self.name = Some(name.to_owned());
        } else if let Some(n) = self.name.as_deref().filter(|n| n.contains('/')) {
            return Err(BadUsage::TypeTwice {
                name: n.to_owned(),
                resources,
            });
        }
        if !self.more_names.is_empty() {
            let mut all: Vec<String> = self.name.iter().cloned().collect();
            all.extend(self.more_names.iter().cloned());
            return Err(BadUsage::SeveralNames(all));
        }
        if let Some(n) = &self.name {
            crate::client::target::validate_name(n)?;
            if self.selector.is_some() || self.field_selector.is_some() {
                return Err(BadUsage::NameWithSelector(n.clone()));
            }
        }
        self.output.check()?;
        // `-n ''` (an unset $NS in a script) is the context's namespace, as in kubectl.
        let namespace = self.namespace.as_deref().filter(|n| !n.is_empty());
        if let Some(ns) = namespace {
            crate::client::target::validate_namespace(ns)?;
        }
        if let Some(ns) = &self.probe {
            crate::client::target::validate_namespace(ns).map_err(BadUsage::Probe)?;
        }
        let c = &self.cluster;
        if c.insecure_skip_tls_verify && c.certificate_authority.is_some() {
            return Err(BadUsage::InsecureWithCa);
        }
        self.reflector.informer_flags().check()?;
        Ok(())
    }
}

/// Which cluster, as kubectl's flags.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Cluster")]
pub struct ClusterArgs {
    /// Kubeconfig file (default: $KUBECONFIG, which may list several, else ~/.kube/config).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,

    /// Kubeconfig context to use; several, comma-separated, watch each into one stream
    #[arg(long_help = "Kubeconfig context to use; several, comma-separated, watch each cluster into one \
          stream, every record tagged with its context. A name with * (any characters) or ? (one) \
          is a pattern: every context it matches ('prod-*'), the kubeconfig followed as it \
          changes (new matching contexts join, removed ones stop). With several contexts, a \
          cluster that is down or refuses the watch is left out for now (a ~ line names it), \
          retried with client-go's backoff for the whole run and joined when it comes back, \
          and the others go on; exit 5 when not every context synced.",
          long, value_name = "NAME[,NAME…]", value_hint = clap::ValueHint::Other)]
    pub context: Option<String>,

    /// Watch every context of the kubeconfig, into one stream
    #[arg(
        long_help = "Watch every context of the kubeconfig, into one stream, the kubeconfig \
          followed as it changes: a context added (by kubectl config, aws eks \
          update-kubeconfig, gcloud …) joins within seconds, one removed stops, one whose \
          server or credentials changed restarts.",
        long,
        conflicts_with = "context",
        hide_short_help = true
    )]
    pub all_contexts: bool,

    /// Keep only the contexts of shard I of N (0 ≤ I < N), so that N processes split a fleet
    #[arg(long_help = "Keep only the contexts of shard I of N (0 ≤ I < N), so that N kwatch \
          processes, each given one shard, split a fleet between them (kube-state-metrics' \
          --shard and --total-shards, in one flag). A context's shard comes of its name by \
          rendezvous hashing: a context added to the kubeconfig moves no other context's \
          shard. Every record carries its context, so the N outputs concatenate into one \
          fleet's stream.",
          long, value_name = "I/N", value_parser = parse_shard, hide_short_help = true)]
    pub shard: Option<crate::app::shard::Shard>,

    /// Timeout of each request before its response starts (0 = none), e.g. 10s, 1m.
    #[arg(long, hide_short_help = true, value_name = "DURATION", value_parser = parse_duration, default_value = "0")]
    pub request_timeout: Duration,

    /// kubectl's cache directory, for discovery documents [default: ~/.kube/cache]
    #[arg(
        long_help = "kubectl's cache directory: discovery documents are read from and written to its \
          discovery/ subdirectory, kept 6 hours [default: ~/.kube/cache].",
        long,
        value_name = "DIR",
        env = "KUBECACHEDIR",
        hide_short_help = true
    )]
    pub cache_dir: Option<PathBuf>,

    /// The API server's address, e.g. https://10.0.0.1:6443
    #[arg(
        long_help = "The API server's address, e.g. https://10.0.0.1:6443 (overrides the kubeconfig \
          cluster's server; works with no kubeconfig at all).",
        short = 's',
        long,
        value_name = "URL",
        conflicts_with = "sim"
    )]
    pub server: Option<String>,

    /// Bearer token (replaces the kubeconfig user's credentials).
    #[arg(
        long,
        value_name = "TOKEN",
        conflicts_with = "sim",
        hide_short_help = true
    )]
    pub token: Option<String>,

    /// The kubeconfig user to use instead of the context's.
    #[arg(
        long,
        value_name = "NAME",
        conflicts_with = "sim",
        hide_short_help = true
    )]
    pub user: Option<String>,

    /// The kubeconfig cluster to use instead of the context's.
    #[arg(
        long,
        value_name = "NAME",
        conflicts_with = "sim",
        hide_short_help = true
    )]
    pub cluster: Option<String>,

    /// Act as this user: see what that identity's informer would get, 403s included
    #[arg(
        long_help = "Act as this user (Impersonate-User), e.g. system:serviceaccount:NS:NAME: see \
          what that identity's informer would get, 403s included.",
        long = "as",
        value_name = "USER"
    )]
    pub impersonate: Option<String>,

    /// Act as a member of this group (Impersonate-Group; repeat for several).
    #[arg(long = "as-group", value_name = "GROUP", hide_short_help = true)]
    pub impersonate_groups: Vec<String>,

    /// Act with this UID (Impersonate-Uid).
    #[arg(long = "as-uid", value_name = "UID", hide_short_help = true)]
    pub impersonate_uid: Option<String>,

    /// Do not verify the server's certificate (insecure; clears the kubeconfig's CA).
    #[arg(long, conflicts_with = "sim", hide_short_help = true)]
    pub insecure_skip_tls_verify: bool,

    /// CA certificate file(s) (PEM) to verify the server with (replaces the kubeconfig's).
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with = "sim",
        hide_short_help = true
    )]
    pub certificate_authority: Option<PathBuf>,

    /// Client certificate file (PEM) for TLS client authentication.
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with = "sim",
        hide_short_help = true
    )]
    pub client_certificate: Option<PathBuf>,

    /// Client key file (PEM) for TLS client authentication.
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with = "sim",
        hide_short_help = true
    )]
    pub client_key: Option<PathBuf>,

    /// Server name to verify the certificate against and send as SNI
    #[arg(
        long_help = "Server name to verify the certificate against and send as SNI (default: the \
          server URL's host).",
        long,
        value_name = "NAME",
        conflicts_with = "sim",
        hide_short_help = true
    )]
    pub tls_server_name: Option<String>,

    /// Do not ask for gzip-compressed responses (as the kubeconfig's disable-compression)
    #[arg(
        long_help = "Do not ask for gzip-compressed responses, as the kubeconfig cluster's \
          disable-compression: true does (kubectl's flag; either turns compression off). By \
          default every request asks for gzip, as client-go does, and the API server compresses \
          responses over 128 KiB (lists, never watches).",
        long,
        hide_short_help = true
    )]
    pub disable_compression: bool,
}

/// How the reflector lists and watches.
#[derive(Debug, Args)]
#[command(next_help_heading = "Reflector")]
pub struct ReflectorArgs {
    /// Objects per list page, 0 = no paging [default: 500]
    #[arg(
        long_help = "Objects per list page, 0 = no paging [default: 500, and no paging when relisting \
          at a specific resourceVersion, as client-go].",
        long,
        value_name = "N",
        hide_short_help = true
    )]
    pub page_size: Option<u32>,

    /// Re-queue every known object as a Sync delta this often (e.g. 30s); off by default.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, hide_short_help = true)]
    pub resync: Option<Duration>,

    /// Do not ask for bookmarks on watches.
    #[arg(long, hide_short_help = true)]
    pub no_bookmarks: bool,

    /// DeltaFIFO only: relists emit Sync instead of Replaced
    #[arg(
        long_help = "DeltaFIFO only: relists emit Sync instead of Replaced (client-go without \
          EmitDeltaTypeReplaced); without --client-go it keeps a DeltaFIFO, refused with \
          an explicit RealFIFO.",
        long,
        hide_short_help = true
    )]
    pub legacy_sync: bool,

    /// The informer's queue: delta (DeltaFIFO) or real (RealFIFO)
    #[arg(
        long_help = "The informer's queue: delta (DeltaFIFO: a key's deltas coalesce until popped) or \
          real (RealFIFO: every notification in order, the informers' default since \
          client-go 0.33; the release's RealFIFO, 0.33's if the server's release has none) \
          [default: the release's].",
        long,
        value_parser = named::<FifoKind>(&FifoKind::NAMES, &[]),
        value_name = "KIND"
    )]
    pub fifo: Option<FifoKind>,

    /// Get the initial state from a streaming list
    #[arg(
        long_help = "Get the initial state from a streaming list (watch with sendInitialEvents, \
          KEP-3157): auto tries it and falls back to LIST for good if the server rejects \
          it, on tries it at every (re)list; auto, and the release's default, mean off \
          when --page-size is given [default: the release's: off through 0.34, on from \
          0.35].",
        long,
        value_parser = named::<WatchListMode>(&WatchListMode::NAMES, WATCH_LIST_HELP),
        value_name = "WHEN"
    )]
    pub watch_list: Option<WatchListMode>,

    /// Each watch asks the server to end it after a random time in [D, 2·D) (client-go:
    /// 5m).
    #[arg(long, value_name = "D", value_parser = parse_duration, default_value = "5m",
          hide_short_help = true)]
    pub min_watch_timeout: Duration,

    /// Spend this long on each pop, as a slow event handler would
    #[arg(long_help = "Spend this long on each pop, as a slow event handler would: deltas pile up in \
          the queue meanwhile, and DeltaFIFO's per-key coalescing becomes visible.",
          long, value_name = "D", value_parser = parse_duration, hide_short_help = true)]
    pub pop_delay: Option<Duration>,

    /// The informer of this client-go release: 0.32, 0.33, 0.34, 0.35, 0.36 or 0.37
    #[arg(long_help = "The informer of this client-go release, with its defaults: 0.32 (DeltaFIFO), \
          0.33 and 0.34 (RealFIFO), 0.35 (RealFIFO with batch pops; streaming lists on), \
          0.36 and 0.37 (the atomic RealFIFO: one ReplacedAll per relist, one SyncAll per \
          resync). Also v0.35.2, or Kubernetes' 1.35. --fifo and --watch-list override its \
          defaults [default: the release of the server's Kubernetes (/version: 1.32 → 0.32, \
          clamped to 0.32–0.37, a newer server saying so once; 0.32 if it cannot be read)].",
          long, value_name = "VERSION", hide_possible_values = true,
          value_parser = Vocabulary { parse: crate::cache::release::Release::parse, words: releases })]
    pub client_go: Option<crate::cache::release::Release>,

    /// Compare the store with a LIST at its resourceVersion every PERIOD (5m)
    ///
    /// After the first sync and then every PERIOD (5m if given without one), LIST at the
    /// store's resourceVersion with resourceVersionMatch=Exact and compare it with the
    /// store: a Consistency record names the keys missing, extra or stale (client-go's
    /// data consistency detector).
    #[arg(long, value_name = "PERIOD", num_args = 0..=1, require_equals = true,
          default_missing_value = "5m", value_parser = parse_period, hide_short_help = true)]
    pub check_consistency: Option<Duration>,

    /// Sample how far the store is behind the server every PERIOD (1s)
    ///
    /// Every PERIOD (1s if given without one), read the server's current resourceVersion
    /// (a LIST with limit=1 and resourceVersion="", a consistent read) and time how long
    /// the store takes to reach it: a Freshness record per sample, the lag in --live's
    /// header, --stats and --metrics, and a Stale record when it reaches --stale-after.
    #[arg(long, value_name = "PERIOD", num_args = 0..=1, require_equals = true,
          default_missing_value = "1s", value_parser = parse_period, hide_short_help = true)]
    pub freshness: Option<Duration>,

    /// With --freshness: a lag this long is a Stale record
    ///
    /// Longer than kube-apiserver's bookmark period (about a minute) by default: a
    /// resource that does not change while others do learns it is current only at a
    /// bookmark.
    #[arg(long, value_name = "D", value_parser = parse_period, default_value = "90s",
          requires = "freshness", hide_short_help = true)]
    pub stale_after: Duration,

    /// What the informer's store costs, every PERIOD (30s) and in --stats
    ///
    /// A CacheStats record every PERIOD (30s if given without one) per resource: objects,
    /// bytes of the cached JSON and the share of its heaviest fields (managedFields, the
    /// last-applied annotation, status, spec, data, …); with --stats, the same at exit.
    #[arg(long, value_name = "PERIOD", num_args = 0..=1, require_equals = true,
          default_missing_value = "30s", value_parser = parse_period, hide_short_help = true)]
    pub cache_stats: Option<Duration>,

    /// What the cache keeps: strip-managed-fields, strip-last-applied, metadata-only-fields=F,…
    ///
    /// As a client-go TransformFunc: applied before objects are queued, so the store,
    /// the printed objects and --cache-stats show what the cache holds.
    /// metadata-only-fields=status keeps apiVersion, kind, metadata and status.
    #[arg(long, value_name = "TRANSFORM", hide_short_help = true, hide_possible_values = true,
          value_parser = Vocabulary { parse: crate::cache::transform::Transform::parse, words: transforms })]
    pub transform: Option<crate::cache::transform::Transform>,
    /// Report a watch that delivers nothing for D (auto: three bookmark intervals)
    #[arg(long_help = "Report a watch that delivers nothing — no event, no bookmark — for D with a \
          Stalled record (its age and last resourceVersion); auto: three of the bookmark \
          intervals the server has shown (off until a watch has shown one). client-go only \
          waits, for the watch's timeout or its connection's health check [default: off].",
          long, value_name = "D|auto", value_parser = parse_stall_after, hide_short_help = true)]
    pub stall_after: Option<crate::cache::reflector::StallAfter>,

    /// End a stalled watch (--stall-after) and watch again from its last resourceVersion
    #[arg(long, requires = "stall_after", hide_short_help = true)]
    pub restart_stalled: bool,

    /// The encoding lists and watches ask for: auto, protobuf or json
    #[arg(
        long_help = "The encoding lists and watches ask for: protobuf (and auto) ask built-in \
          types in Kubernetes' protobuf first, as kube-controller-manager and typed clients \
          do (Accept: application/vnd.kubernetes.protobuf, application/json), and read \
          whatever the response's Content-Type says; custom resources and the server's \
          Tables stay JSON (--metadata-only asks PartialObjectMetadata in protobuf for every \
          resource, as client-go's metadata client). What is printed is the same either way: each \
          object is turned into the bytes the server's JSON would have. An object kwatch \
          cannot decode makes that resource JSON from then on, with one ~ line. json never \
          asks for protobuf.",
        long,
        value_parser = named::<Wire>(&Wire::NAMES, WIRE_HELP),
        value_name = "WIRE",
        default_value = "auto",
        hide_short_help = true
    )]
    pub wire: Wire,

    /// List and watch metadata only, as client-go's metadata informer does
    #[arg(
        long_help = "List and watch metadata only, as client-go's metadata informer does: objects are \
          PartialObjectMetadata (no spec, data or status; a fraction of the bytes), and \
          the table shows NAME and AGE (with -L and --show-labels).",
        long
    )]
    pub metadata_only: bool,
}

impl ReflectorArgs {
    /// The flags that choose the informer.
    pub fn informer_flags(&self) -> crate::cache::release::InformerFlags {
        crate::cache::release::InformerFlags {
            client_go: self.client_go,
            fifo: self.fifo,
            legacy_sync: self.legacy_sync,
            watch_list: self.watch_list,
        }
    }
}

/// When to stop (for scripts).
#[derive(Debug, Args)]
#[command(next_help_heading = "Stopping")]
pub struct StopArgs {
    /// Exit 0 after printing this many deltas (0 = no limit).
    #[arg(long, value_name = "N")]
    pub max_events: Option<u64>,

    /// Stop after this long, connecting included, e.g. 30s (0 = no limit).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub timeout: Option<Duration>,

    /// Exit 0 once the initial list has been popped (HasSynced); 3 if --timeout comes first.
    #[arg(long)]
    pub until_synced: bool,

    /// Do not print the initial list's deltas.
    #[arg(long, hide_short_help = true)]
    pub watch_only: bool,

    /// Exit once a delta meets CONDITION: created, deleted, jsonpath=…, condition=…
    #[arg(long_help = "Exit once a delta meets CONDITION, parsed as `kubectl wait --for`: `created` (an \
          object kwatch did not know appears), `deleted` (an object is deleted, or none \
          matched once synced), `jsonpath={.status.phase}=Running` (braces optional; a \
          value equals, or without `=VALUE` is present and not false), or \
          `condition=Ready[=True]` (type and status ignoring case). Exit 0 when met, 3 if \
          --timeout comes first, 4 if the watch ends otherwise (--max-events).",
          long, value_name = "CONDITION", value_parser = crate::informer::until::Condition::parse)]
    pub until: Option<crate::informer::until::Condition>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// A duration as kubectl takes it: `500ms`, `30s`, `5m`, `1h30m`, or bare seconds.
/// What `--timeline`'s value may be: a file to write (not stdout, which carries the
/// records).
fn parse_timeline_path(s: &str) -> Result<PathBuf, String> {
    if s.is_empty() || s == "-" {
        return Err(
            "--timeline writes a page to a file, not to stdout: give a path such as \
                    timeline.html"
                .to_owned(),
        );
    }
    Ok(PathBuf::from(s))
}

/// `--shard I/N`.
fn parse_shard(s: &str) -> Result<crate::app::shard::Shard, BadValue> {
    let bad = || BadValue::Shard(s.to_owned());
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (index, of) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    crate::app::shard::Shard::new(index, of).ok_or_else(bad)
}

pub fn parse_duration(s: &str) -> Result<Duration, BadValue> {
    let s = s.trim();
    if let Ok(secs) = s.parse::<u64>() {
        return Ok(Duration::from_secs(secs));
    }
    humantime::parse_duration(s).map_err(BadValue::Duration)
}

/// A duration longer than zero (what a period must be), as [`parse_duration`] reads it.
pub fn parse_period(s: &str) -> Result<Duration, BadValue> {
    match parse_duration(s)? {
        d if d.is_zero() => Err(BadValue::ZeroPeriod),
        d => Ok(d),
    }
}

/// `--stall-after`: `auto`, or a period as [`parse_period`] reads it.
pub fn parse_stall_after(s: &str) -> Result<crate::cache::reflector::StallAfter, BadValue> {
    use crate::cache::reflector::StallAfter;
    match s.trim() {
        "auto" => Ok(StallAfter::Auto),
        d => parse_period(d)
            .map(StallAfter::After)
            .map_err(|e| BadValue::StallAfter(Box::new(e))),
    }
}

/// A finite number ≥ 0: what a rate or a period in seconds can be (Rust reads "nan" and
/// "inf" as numbers, which would make no sense as either).
#[cfg(feature = "sim")]
fn parse_non_negative(s: &str) -> Result<f64, BadValue> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(BadValue::Negative(s.to_owned())),
    }
}

/// Options of `kwatch sim`.
#[cfg(feature = "sim")]
#[derive(Debug, Args)]
pub struct SimArgs {
    /// Port to listen on (127.0.0.1); 0 picks a free port.
    #[arg(long, default_value_t = 0)]
    pub port: u16,

    /// Serve N clusters, each its own server on its own port (from --port on, unless 0),
    /// with its own storage, token and control API; the kubeconfig has a context per
    /// cluster, kwatch-sim-1 to kwatch-sim-N.
    #[arg(long, default_value_t = 1, value_name = "N",
          value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub clusters: u16,

    /// Write a kubeconfig for the simulated cluster to this file (mode 0600).
    #[arg(long, value_name = "FILE")]
    pub write_kubeconfig: Option<PathBuf>,

    /// Number of pods to preload.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub objects: usize,

    /// Changes per second made by the churn generator (0 = none).
    #[arg(long, default_value_t = 2.0, value_name = "RATE", value_parser = parse_non_negative)]
    pub churn: f64,

    /// Seed of the churn and fault generators.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// What the simulated cluster does on its own.
    #[arg(long, value_enum, default_value_t = crate::sim::Scenario::Steady)]
    pub scenario: crate::sim::Scenario,

    /// Serve plain HTTP instead of HTTPS (kubectl then sends no token).
    #[arg(long)]
    pub insecure_http: bool,

    /// Number of changes kept in the watch history before the oldest are compacted.
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    pub history: usize,

    /// Keep revision 1 in reach, as a young etcd before kube-apiserver's first compaction:
    /// a watch or continued list from any old revision is served, not 410 Expired.
    #[arg(long, hide_short_help = true)]
    pub uncompacted: bool,

    /// Seconds between watch bookmarks (a real API server sends one about every minute).
    #[arg(long, default_value_t = 2.0, value_name = "SECONDS", value_parser = parse_non_negative)]
    pub bookmark_interval: f64,

    /// Seconds between etcd's progress notifications, which bring the watch cache of a
    /// quiet resource to the current revision, so that its watches get bookmarks again
    /// (etcd's default: 600).
    #[arg(long, default_value_t = 600.0, value_name = "SECONDS", value_parser = parse_non_negative,
          hide_short_help = true)]
    pub progress_notify_interval: f64,

    /// Serve only the legacy discovery documents, as a server without aggregated discovery
    /// (before Kubernetes 1.26, or with the feature off) does.
    #[arg(long)]
    pub legacy_discovery: bool,

    /// Size of the preloaded pods: default (~3.3 KB), small (~1.5 KB), medium (~4.7 KB),
    /// large (~12 KB) or realistic (~9 KB, half of it managedFields), for benchmarks.
    #[arg(long, value_enum, default_value_t = crate::sim::PodSize::Default, value_name = "SIZE")]
    pub pod_size: crate::sim::PodSize,

    /// The serving certificate: ca (a CA and a leaf it signed), self-signed (one CA:TRUE
    /// certificate, the kubeconfig's CA), pinned-leaf (a leaf signed by a CA the kubeconfig
    /// does not hold, pinned as its CA), ca-true-leaf (a CA:TRUE leaf the CA signed).
    #[arg(long, value_enum, default_value_t = crate::sim::CertShape::Ca, value_name = "SHAPE")]
    pub cert_shape: crate::sim::CertShape,

    /// The Kubernetes version `/version` reports, as MAJOR.MINOR (`1.35`, `1.32+`)
    /// [default: the captured kube-apiserver's, 1.32]; taken as given, to try what a
    /// client makes of odd versions.
    #[arg(long, value_name = "MAJOR.MINOR", value_parser = parse_server_version)]
    pub server_version: Option<(String, String)>,

    /// Run the controllers kube-controller-manager would: Deployments get ReplicaSets,
    /// ReplicaSets and Jobs get pods (which a built-in kubelet runs), deleted owners'
    /// dependents are collected, with the genuine Events. Off: nothing changes objects but
    /// churn and clients (`POST /_sim/controllers {"on":true}` switches them later).
    #[arg(long)]
    pub controllers: bool,
    /// Bend the list/watch protocol as some servers do, from the start (repeat it or
    /// separate modes with commas; `POST /_sim/bend` switches them later).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "MODE")]
    pub bend: Vec<crate::sim::Bend>,
}

/// Options of `kwatch check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The resource to check (pods, deployments.apps, widgets.example.com, …).
    #[arg(value_name = "RESOURCE", value_hint = clap::ValueHint::Other)]
    pub resource: String,

    /// Namespace to check in (default: the context's namespace, else "default").
    #[arg(short = 'n', long, value_name = "NS", value_hint = clap::ValueHint::Other)]
    pub namespace: Option<String>,

    /// Check across all namespaces.
    #[arg(short = 'A', long)]
    pub all_namespaces: bool,

    /// Label selector of the lists and watches, as kubectl's -l.
    #[arg(short = 'l', long, value_name = "SELECTOR", value_hint = clap::ValueHint::Other)]
    pub selector: Option<String>,

    /// Field selector of the lists and watches.
    #[arg(long, value_name = "SELECTOR")]
    pub field_selector: Option<String>,

    /// table (for people) or json (one JSON object per check, for scripts).
    #[arg(short = 'o', long, value_enum, default_value_t = CheckOutput::Table, value_name = "FORMAT")]
    pub output: CheckOutput,

    /// Also create, patch and delete a ConfigMap in this namespace, timing each change's
    /// arrival on a watch.
    #[arg(long, value_name = "NAMESPACE", value_hint = clap::ValueHint::Other)]
    pub write: Option<String>,

    /// Check the built-in simulated cluster, started in-process.
    #[arg(long, conflicts_with_all = ["kubeconfig", "context"], hide = cfg!(not(feature = "sim")),
          hide_short_help = true)]
    pub sim: bool,

    #[command(flatten)]
    pub cluster: ClusterArgs,
}

impl CheckArgs {
    /// What clap cannot check: the namespaces and the label selector, as a watch's.
    pub fn check(&self) -> Result<(), BadUsage> {
        check_scope([&self.namespace, &self.write], &self.selector)
    }
}

/// `kwatch check -o`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CheckOutput {
    /// A table for people.
    Table,
    /// JSON lines: one object per check.
    Json,
}

/// `--server-version`: MAJOR.MINOR, split at the first dot.
#[cfg(feature = "sim")]
fn parse_server_version(s: &str) -> Result<(String, String), BadValue> {
    match s.split_once('.') {
        Some((major, minor)) => Ok((major.to_owned(), minor.to_owned())),
        None => Err(BadValue::ServerVersion(s.to_owned())),
    }
}

/// `kwatch sim` in a kwatch built without the simulator: whatever follows is taken (so
/// that `kwatch sim --port 8443` and `kwatch sim --help` also get the one line that
/// explains), and refused.
#[cfg(not(feature = "sim"))]
#[derive(Debug, Args)]
#[command(disable_help_flag = true)]
pub struct SimArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    pub ignored: Vec<std::ffi::OsString>,
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    /// The watch's arguments as the command line and [`WatchArgs::normalize`] leave them;
    /// `Err`: clap's refusal or normalize's.
    fn watch(args: &[&str]) -> anyhow::Result<WatchArgs> {
        let cli = Cli::try_parse_from(std::iter::once("kwatch").chain(args.iter().copied()))?;
        let mut w = cli.watch;
        w.normalize()?;
        Ok(w)
    }

    /// What [`watch`] refuses `args` with.
    fn refusal(args: &[&str]) -> String {
        watch(args).unwrap_err().to_string()
    }

    #[test]
    fn kubectl_positional_forms_normalize() {
        let w = watch(&["deploy/web", "-w"]).unwrap();
        assert_eq!(
            (w.resources.as_deref(), w.name.as_deref()),
            (Some("deploy"), Some("web"))
        );
        assert!(w.watch_flag);
        let w = watch(&["pods", "p1", "--watch"]).unwrap();
        assert_eq!(w.name.as_deref(), Some("p1"));
        assert!(refusal(&["pods", "a", "b"]).contains("one name at a time, as"));
        assert!(refusal(&["pod/a", "b"]).contains("use `pod/a` alone"));
        assert!(refusal(&["pods", "pod/a"]).contains("use `pod/a` alone"));
        for bad in ["pod/", "/a", "a,b/c", "pod/a/b"] {
            assert!(refusal(&[bad]).contains("expected TYPE/NAME"), "{bad}");
        }
        assert!(refusal(&["cm", ".."]).contains("may not be '..'"));
        assert!(refusal(&["cm", "-n", "Bad"]).contains("RFC 1123"));
    }

    #[cfg(feature = "sim")]
    #[test]
    fn sim_numbers_are_finite_and_not_negative() {
        let parse = |args: &[&str]| {
            Cli::try_parse_from(["kwatch", "sim"].iter().chain(args).copied())
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        for ok in [&["--churn", "0"][..], &["--bookmark-interval", "0.5"]] {
            assert_eq!(parse(ok), Ok(()), "{ok:?}");
        }
        for bad in [
            &["--churn", "nan"][..],
            &["--churn=-1"],
            &["--bookmark-interval", "inf"],
            &["--bookmark-interval", "NaN"],
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains("expected a number ≥ 0"), "{bad:?}: {e}");
        }
    }

    /// Without the simulator, `kwatch sim …` and `--sim` still parse (to fail with one
    /// line, see app::sim::NO_SIMULATOR) but the help does not offer them.
    #[cfg(not(feature = "sim"))]
    #[test]
    fn without_the_simulator_sim_is_parsed_but_hidden() {
        for args in [&["sim"][..], &["sim", "--port", "8443"], &["sim", "--help"]] {
            let cli = Cli::try_parse_from(std::iter::once("kwatch").chain(args.iter().copied()))
                .unwrap_or_else(|e| panic!("{args:?}: {e}"));
            assert!(matches!(cli.command, Some(Command::Sim(_))), "{args:?}");
        }
        assert!(watch(&["--sim", "pods"]).unwrap().sim);
        let help = <Cli as clap::CommandFactory>::command()
            .render_long_help()
            .to_string();
        assert!(help.contains("--server"), "{help}");
        assert!(!help.contains("--sim"), "{help}");
        assert!(!help.contains("simulated"), "{help}");
    }

    /// The flags whose values are a library enum's names take each of them, and the value
    /// is the one the name says; anything else is refused with the names.
    #[test]
    fn library_enums_are_parsed_from_their_names() {
        let w = watch(&[
            "pods",
            "--fifo",
            "real",
            "--watch-list",
            "on",
            "--wire",
            "json",
        ])
        .unwrap();
        assert_eq!(
            (w.reflector.fifo, w.reflector.watch_list, w.reflector.wire),
            (Some(FifoKind::Real), Some(WatchListMode::On), Wire::Json)
        );
        let w = watch(&["pods", "--view", "handlers"]).unwrap();
        assert_eq!(
            (w.output.view, w.reflector.wire),
            (View::Handlers, Wire::Auto)
        );
        for name in FifoKind::NAMES {
            assert_eq!(name.parse::<FifoKind>().unwrap().to_string(), name);
        }
        for name in WatchListMode::NAMES {
            assert_eq!(name.parse::<WatchListMode>().unwrap().to_string(), name);
        }
        for name in Wire::NAMES {
            assert_eq!(name.parse::<Wire>().unwrap().to_string(), name);
        }
        for name in View::NAMES {
            assert_eq!(name.parse::<View>().unwrap().to_string(), name);
        }
        let e = refusal(&["pods", "--fifo", "Real"]);
        assert!(e.contains("[possible values: delta, real]"), "{e}");
    }

    #[test]
    fn all_namespaces_takes_an_optional_bool() {
        assert!(watch(&["pods", "-A"]).unwrap().all_namespaces);
        assert!(watch(&["-A", "pods"]).unwrap().all_namespaces);
        assert!(
            watch(&["pods", "--all-namespaces=true"])
                .unwrap()
                .all_namespaces
        );
        assert!(
            !watch(&["pods", "--all-namespaces=false"])
                .unwrap()
                .all_namespaces
        );
        assert!(!watch(&["pods"]).unwrap().all_namespaces);
        let w = watch(&["pods", "--all-namespaces=false", "-n", "x"]).unwrap();
        assert_eq!(w.namespace.as_deref(), Some("x"));
        // -A wins over -n, as in kubectl.
        let w = watch(&["pods", "-A", "-n", "x"]).unwrap();
        assert!(w.all_namespaces);
        assert!(watch(&["pods", "--all-namespaces=maybe"]).is_err());
    }

    #[test]
    fn check_consistency_takes_an_optional_period() {
        let period = |args: &[&str]| {
            watch(args)
                .map(|w| w.reflector.check_consistency)
                .map_err(|e| e.to_string())
        };
        assert_eq!(period(&["pods"]), Ok(None));
        // Without `=`, what follows is the resource, not a period.
        let w = watch(&["--check-consistency", "pods"]).unwrap();
        assert_eq!(w.resources.as_deref(), Some("pods"));
        assert_eq!(
            w.reflector.check_consistency,
            Some(Duration::from_secs(300))
        );
        assert_eq!(
            period(&["pods", "--check-consistency=30s"]),
            Ok(Some(Duration::from_secs(30)))
        );
        assert_eq!(
            period(&["pods", "--check-consistency=90"]),
            Ok(Some(Duration::from_secs(90)))
        );
        for bad in ["0", "0s", "soon"] {
            let e = period(&["pods", &format!("--check-consistency={bad}")]).unwrap_err();
            assert!(e.contains("--check-consistency"), "{bad}: {e}");
            assert!(
                e.contains("e.g. 30s") || e.contains("such as 500ms"),
                "{bad}: {e}"
            );
        }
    }
}
