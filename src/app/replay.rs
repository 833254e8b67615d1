//! `kwatch replay FILE`: re-renders a JSON-lines recording (`--record FILE`, or saved
//! `-o json` output) in any output format. Records are rebuilt exactly as the watch
//! printed them (time, context, initial list, tombstones); the previous version of each
//! object is tracked as the informer's store did, so `--diff` and `-o watch-events` work
//! on a recording too.
//!
//! `--view handlers` shows the handler calls a recording holds (saved `--view handlers
//! -o json` output), and derives them from the deltas it holds ([`crate::cache::handlers`], for a
//! handler without a resync period, or one of a second or more: either way one whose
//! listener is always syncing).
//!
//! The watch's print filters (`--watch-only`, `--types`, `--changes`, `--quiet-relists`)
//! hide what they would have hidden live ([`crate::informer::filter`]); `--blame` finds
//! the fighting managers in the recorded deltas as the watch does
//! ([`crate::informer::conflict`]), in place of the `Conflict` records a `--blame`
//! recording holds. A `--follow` or `--events` recording keeps each delta's place in the
//! owner graph (`ownerPath`, `graph`), printed as the watch printed it.

use std::collections::{BTreeSet, HashMap};
use std::io::{self, BufRead, IsTerminal as _, Read, Write as _};

use anyhow::{Context, Result};

use crate::app::cli::{ReplayArgs, UntilArg};
use crate::app::exit::Outcome;
use crate::app::record::target::Target;
use crate::app::stats::Stats;
use crate::cache::delta::{Delta, DeltaObject, DeltaType, Tombstone};
use crate::cache::handlers::{self, HandlerCall, Listener, Registration};
use crate::cache::object::{Object, ObjectRef};
use crate::cache::reflector::ReflectorEvent;
use crate::client::target::Resource;
use crate::context::ContextName;
use crate::informer::conflict::Conflicts;
use crate::informer::filter::Filter;
use crate::informer::record::{Body, Followed, GraphChange, InformerInfo, Observation, Record};
use crate::informer::sink::Sink;
use crate::informer::until::Condition;
use crate::output::record::{self, HandlerLine, HandlerName, Line, Tagged};
use crate::output::{self, View};
use crate::selector::{parse_labels, LabelSelector};

/// One parsed record, owning what the printers borrow.
enum Item {
    Delta {
        kind: DeltaType,
        key: String,
        resource: usize,
        object: Option<ObjectRef>,
        tombstone: bool,
        initial_list: bool,
        /// `--follow`, `--events`: its place in the owner graph, as recorded.
        follow: Option<Followed>,
    },
    Event(ReflectorEvent, usize),
    Observed(Observation, usize),
    Synced(usize),
    Handler {
        key: String,
        resource: usize,
        call: HandlerCall,
    },
}

struct Parsed {
    time: jiff::Timestamp,
    context: Option<ContextName>,
    item: Item,
    /// What the line said of its informer: release and queue, batch size.
    client_go: Option<String>,
    queue: Option<String>,
    batch: Option<u32>,
}

/// The resources of a recording: the names reflector events carry, matched to the
/// kind and apiVersion that deltas carry.
#[derive(Default)]
struct Resources {
    list: Vec<Resource>,
}

impl Resources {
    fn by_name(&mut self, name: &str) -> usize {
        if let Some(i) = self.list.iter().position(|r| r.name == name) {
            return i;
        }
        // Kind and apiVersion are filled in by the first delta of this resource.
        self.list.push(Resource {
            name: name.to_owned(),
            kind: String::new(),
            api_version: String::new(),
            namespaced: true,
        });
        self.list.len() - 1
    }

    /// For recordings made before deltas named their resource: the resource events
    /// named whose plural starts like the kind, else kubectl's naive plural of the kind.
    fn by_kind(&mut self, kind: &str, api_version: &str, namespaced: bool) -> usize {
        if let Some(i) = self
            .list
            .iter()
            .position(|r| r.kind == kind && r.api_version == api_version)
        {
            return i;
        }
        let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
        let stem = kind.to_lowercase();
        let stem = stem.trim_end_matches('y');
        // A resource named by events whose plural starts with the kind, in its group.
        let named = self.list.iter().position(|r| {
            r.kind.is_empty() && {
                let (plural, g) = r.name.split_once('.').unwrap_or((&r.name, ""));
                g == group && plural.starts_with(stem)
            }
        });
        let i = match named {
            Some(i) => i,
            None => {
                let plural = format!("{}s", kind.to_lowercase());
                let name = if group.is_empty() {
                    plural
                } else {
                    format!("{plural}.{group}")
                };
                self.by_name(&name)
            }
        };
        self.fill(i, kind, api_version, namespaced)
    }

    /// The resource a delta names, with what the delta says of it.
    fn named(&mut self, name: &str, kind: &str, api_version: &str, namespaced: bool) -> usize {
        let i = self.by_name(name);
        self.fill(i, kind, api_version, namespaced)
    }

    fn fill(&mut self, i: usize, kind: &str, api_version: &str, namespaced: bool) -> usize {
        let r = &mut self.list[i];
        if r.kind.is_empty() {
            r.kind = kind.to_owned();
            r.api_version = api_version.to_owned();
        }
        r.namespaced = namespaced;
        i
    }
}

fn time(t: &str, n: usize) -> Result<jiff::Timestamp> {
    t.parse()
        .with_context(|| format!("line {n}: bad time {t:?}"))
}

fn parse_line(text: &str, n: usize, res: &mut Resources) -> Result<Option<Parsed>> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    let line = Line::parse(text).with_context(|| {
        format!("line {n}: not a kwatch record (replay reads what --record or -o json wrote)")
    })?;
    let informer = line.informer();
    let client_go = informer.client_go.map(str::to_owned);
    let queue = informer.queue.map(str::to_owned);
    let batch = informer.batch;
    if let Some((kind, d)) = line.delta() {
        let object = match record::object_of(text).with_context(|| format!("line {n}"))? {
            Some(o) => Some(ObjectRef::new(
                Object::from_json(o.get()).with_context(|| format!("line {n}: bad object"))?,
            )),
            None => None,
        };
        let o = &d.object;
        let namespaced = o.namespace.is_some();
        let resource = match &d.resource {
            Some(name) => res.named(name, &o.kind, &o.api_version, namespaced),
            // Recorded before deltas named their resource.
            None => res.by_kind(&o.kind, &o.api_version, namespaced),
        };
        let change = match d.graph.as_deref() {
            Some(g) => Some(GraphChange::parse(g).with_context(|| {
                format!("line {n}: unknown graph change {g:?} (joined, deleted, orphaned or left)")
            })?),
            None => None,
        };
        let follow = d.owner_path.as_deref().map(|path| Followed {
            path: path.into(),
            change,
        });
        return Ok(Some(Parsed {
            time: time(&d.time, n)?,
            context: d.context.as_deref().map(ContextName::from),
            item: Item::Delta {
                kind,
                key: o.key.clone().into_owned(),
                resource,
                object,
                tombstone: d.final_state_unknown,
                initial_list: d.initial_list,
                follow,
            },
            client_go,
            queue,
            batch,
        }));
    }
    if let Line::Tagged(Tagged::HandlerCall(h)) = &line {
        let o = &h.object;
        let resource = res.named(&h.resource, &o.kind, &o.api_version, o.namespace.is_some());
        return Ok(Some(Parsed {
            time: time(&h.time, n)?,
            context: h.context.as_deref().map(ContextName::from),
            item: Item::Handler {
                key: o.key.clone().into_owned(),
                resource,
                call: handler_call(h, text, n)?,
            },
            client_go: None,
            queue: None,
            batch: None,
        }));
    }
    let (head, item) = match &line {
        Line::Event(e) => (
            &e.head,
            Item::Event(e.event.clone().into_owned(), res.by_name(&e.head.resource)),
        ),
        Line::Observed(o) => (
            &o.head,
            Item::Observed(
                o.observation.clone().into_owned(),
                res.by_name(&o.head.resource),
            ),
        ),
        Line::Tagged(Tagged::Synced { head, .. }) => {
            (head, Item::Synced(res.by_name(&head.resource)))
        }
        // Not reached: every variant is a delta, an event, an observation or Synced.
        _ => anyhow::bail!("line {n}: a record kwatch does not know how to replay"),
    };
    Ok(Some(Parsed {
        time: time(&head.time, n)?,
        context: head.context.as_deref().map(ContextName::from),
        item,
        client_go,
        queue,
        batch,
    }))
}

/// The call a HandlerCall line records, with its objects.
fn handler_call(h: &HandlerLine<'_>, text: &str, n: usize) -> Result<HandlerCall> {
    let parse =
        |o: Option<&serde_json::value::RawValue>, field: &str| -> Result<Option<ObjectRef>> {
            o.map(|o| {
                Object::from_json(o.get())
                    .map(ObjectRef::new)
                    .with_context(|| format!("line {n}: bad {field}"))
            })
            .transpose()
        };
    let (old, object) = record::objects_of(text).with_context(|| format!("line {n}"))?;
    let (old, object) = (parse(old, "oldObject")?, parse(object, "object")?);
    let missing = |field: &str| anyhow::anyhow!("line {n}: a {:?} call without {field}", h.handler);
    Ok(match h.handler {
        HandlerName::OnAdd => HandlerCall::OnAdd {
            obj: object.ok_or_else(|| missing("object"))?,
            is_in_initial_list: h.is_in_initial_list.unwrap_or(false),
        },
        HandlerName::OnUpdate => HandlerCall::OnUpdate {
            old: old.ok_or_else(|| missing("oldObject"))?,
            new: object.ok_or_else(|| missing("object"))?,
        },
        HandlerName::OnDelete => HandlerCall::OnDelete {
            obj: match (h.final_state_unknown.unwrap_or(false), object) {
                (true, obj) => DeltaObject::Tombstone(Tombstone {
                    key: h.object.key.clone().into_owned(),
                    obj,
                }),
                (false, Some(o)) => DeltaObject::Object(o),
                (false, None) => return Err(missing("object")),
            },
        },
    })
}

/// A recorded handler call's record: of the pop that made it, only an OnAdd says whether
/// it was in the initial list.
fn recorded<'a>(key: &'a str, call: &'a HandlerCall) -> Body<'a> {
    let initial_list = matches!(
        call,
        HandlerCall::OnAdd {
            is_in_initial_list: true,
            ..
        }
    );
    Body::Handler {
        key,
        call,
        initial_list,
    }
}

/// The recording's text: the file, or stdin for `-`.
fn read(args: &ReplayArgs) -> Result<String> {
    let mut text = String::new();
    if args.file.as_os_str() == "-" {
        io::stdin().read_to_string(&mut text)?;
    } else {
        let f = std::fs::File::open(&args.file)
            .with_context(|| format!("cannot open {}", args.file.display()))?;
        for line in io::BufReader::new(f).lines() {
            text.push_str(&line?);
            text.push('\n');
        }
    }
    Ok(text)
}

/// A recording file's records (`-` is stdin): the store's seeds and the records to
/// replay, as [`Window::split`] divides them.
fn from_file(
    args: &ReplayArgs,
    window: &Window,
    res: &mut Resources,
) -> Result<(Vec<Parsed>, Vec<Parsed>)> {
    let text = read(args)?;
    let mut parsed = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if let Some(p) = parse_line(line, i + 1, res)? {
            parsed.push(p);
        }
    }
    Ok(window.split(parsed, &res.list))
}

/// The printer's options for what the recording holds: the flags', plus the namespace,
/// resource and context columns when it has several, and the contexts `--view fleet`
/// waits for.
fn printer_options(args: &ReplayArgs, parsed: &[Parsed], res: &Resources) -> output::Options {
    let mut opts = crate::app::config::printer_options(&args.output);
    let namespaces: BTreeSet<&str> = parsed
        .iter()
        .filter_map(|p| match &p.item {
            Item::Delta { key, .. } => key.split_once('/').map(|(ns, _)| ns),
            _ => None,
        })
        .collect();
    opts.all_namespaces = namespaces.len() > 1;
    opts.multi = res.list.len() > 1;
    opts.contexts = parsed.iter().any(|p| p.context.is_some());
    // `--view fleet` waits for each context the recording names (a fleet's, or several
    // runs' in one database).
    let names: BTreeSet<&str> = parsed
        .iter()
        .filter_map(|p| p.context.as_ref().map(ContextName::as_str))
        .collect();
    opts.context_names = names.into_iter().map(str::to_owned).collect();
    opts.terminal = io::stdout().is_terminal();
    opts.metadata_only = metadata_only(parsed);
    opts
}

/// Runs `kwatch replay`: how it ended as a watch ends ([`Outcome::Met`] when `--until`
/// was met, [`Outcome::NotMet`] when the recording or `--max-events` ended first).
pub fn run(args: ReplayArgs) -> Result<Outcome> {
    let window = Window::new(&args, jiff::Timestamp::now());
    let source = Target::parse(args.file.as_os_str())
        .map_err(|e| anyhow::Error::new(crate::app::exit::Usage(e.to_string())))?;
    let mut res = Resources::default();
    let (mut seeds, mut parsed) = match &source {
        Target::File(_) => from_file(&args, &window, &mut res)?,
        _ => from_database(&source, &window, &mut res)?,
    };
    let selection = Selection::new(&args)?;
    parsed.retain(|p| selection.keeps(p));
    seeds.retain(|p| selection.keeps(p));
    let opts = printer_options(&args, &parsed, &res);
    // The handler whose calls are derived from the deltas (`--view handlers`).
    let listener = (opts.view == View::Handlers)
        .then(|| Listener::new(Registration::default(), std::time::Instant::now()));
    if args.output.blame && !names_managers(&parsed) {
        // Said at once: else every path would read `unowned`, silently.
        let _ = writeln!(
            io::stderr(),
            "~ this recording's objects carry no managedFields: --blame cannot name managers"
        );
    }
    // --timeline: the page takes the printer's place.
    let timeline = crate::app::timeline::for_replay(&source, args.timeline.as_deref(), opts.diff)?;
    let mut out = Counted {
        printer: match timeline {
            Some(page) => page,
            None => output::printer(opts, io::stdout(), io::stderr()),
        },
        stats: args.stats.then(|| Stats::new().blaming(args.output.blame)),
        deltas: 0,
        handler_calls: 0,
    };
    // As the watch: --max-events counts what is shown, handler calls in their view.
    let handlers_shown = listener.is_some() || has_handler_calls(&parsed);
    let until = match &args.until {
        Some(UntilArg::Condition(c)) => Some(c),
        _ => None,
    };
    let mut informer = Informer {
        resources: &res.list,
        store: Store::default(),
        listener,
        until,
        filter: crate::app::config::print_filter(&args.filter),
        watch_only: args.watch_only,
        conflicts: args.output.blame.then(Conflicts::default),
    };
    informer.seed(&seeds);
    let mut outcome = if until.is_some() {
        Outcome::NotMet
    } else {
        Outcome::Done
    };
    let mut replayed = parsed.len();
    for (i, p) in parsed.iter().enumerate() {
        replayed = i + 1;
        let met = informer.replay(p, &mut out)?;
        if met {
            outcome = Outcome::Met;
            break;
        }
        let shown = match handlers_shown {
            true => out.handler_calls,
            false => out.deltas,
        };
        if args.max_events.is_some_and(|m| shown >= m) {
            break;
        }
    }
    out.printer.finish()?;
    if let Some(mut stats) = out.stats {
        stats.synced_after = synced_after(&parsed[..replayed], &res.list);
        let _ = writeln!(io::stderr(), "{}", stats.render(&[]));
    }
    Ok(outcome)
}

/// Whether any recorded object carries managedFields, which `--blame` reads (a
/// recording of `--transform strip-managed-fields`, or of a kwatch before --record kept
/// them, has none).
fn names_managers(parsed: &[Parsed]) -> bool {
    parsed.iter().any(|p| match &p.item {
        Item::Delta { object, .. } => object.as_ref().is_some_and(|o| o.meta().has_managed_fields),
        Item::Handler { call, .. } => {
            call_object(call).is_some_and(|o| o.meta().has_managed_fields)
        }
        Item::Event(..) | Item::Observed(..) | Item::Synced(_) => false,
    })
}

/// Whether the recording holds handler calls (saved `--view handlers -o json`).
fn has_handler_calls(parsed: &[Parsed]) -> bool {
    parsed
        .iter()
        .any(|p| matches!(p.item, Item::Handler { .. }))
}

/// Time to synced as the recording saw it: from its first record to the Synced record of
/// the last resource (per context) to sync; `None` when not all synced.
fn synced_after(parsed: &[Parsed], resources: &[Resource]) -> Option<std::time::Duration> {
    let first = parsed.first()?.time;
    let mut synced = BTreeSet::new();
    let contexts: BTreeSet<Option<&str>> = parsed.iter().map(|p| p.context.as_deref()).collect();
    let want = resources.len() * contexts.len();
    parsed.iter().find_map(|p| match p.item {
        Item::Synced(r) if synced.insert((p.context.as_deref(), r)) && synced.len() == want => {
            std::time::Duration::try_from(p.time.duration_since(first)).ok()
        }
        _ => None,
    })
}

/// `-n` and `-l` on the recorded objects: a delta or handler call is kept when its
/// object is in the namespace (cluster-scoped objects are kept, as kubectl ignores `-n`
/// for them) and its recorded labels match the selector (a tombstone without its object
/// is kept: the informer knew the object, so it matched before). Reflector events and
/// Synced records are always kept.
struct Selection {
    namespace: Option<String>,
    selector: Option<LabelSelector>,
}

impl Selection {
    fn new(args: &ReplayArgs) -> Result<Selection> {
        let selector = match args.selector.as_deref() {
            Some(s) => Some(parse_labels(s).map_err(|e| anyhow::anyhow!("-l {s:?}: {e}"))?),
            None => None,
        };
        Ok(Selection {
            namespace: args.namespace.clone().filter(|n| !n.is_empty()),
            selector,
        })
    }

    fn keeps(&self, p: &Parsed) -> bool {
        let (key, object) = match &p.item {
            Item::Delta { key, object, .. } => (key, object.as_ref()),
            Item::Handler { key, call, .. } => (key, call_object(call)),
            Item::Event(..) | Item::Observed(..) | Item::Synced(_) => return true,
        };
        let in_namespace = match (&self.namespace, key.split_once('/')) {
            (Some(want), Some((ns, _))) => ns == want,
            _ => true,
        };
        let labelled = match (&self.selector, object) {
            (Some(sel), Some(o)) => sel.matches(&labels(o)),
            _ => true,
        };
        in_namespace && labelled
    }
}

/// The object a handler call is about: the new one of an update.
fn call_object(call: &HandlerCall) -> Option<&ObjectRef> {
    match call {
        HandlerCall::OnAdd { obj, .. } => Some(obj),
        HandlerCall::OnUpdate { new, .. } => Some(new),
        HandlerCall::OnDelete { obj } => obj.object(),
    }
}

/// An object's `metadata.labels` as (key, value) pairs.
fn labels(o: &ObjectRef) -> Vec<(String, String)> {
    let v = o.to_value();
    v.pointer("/metadata/labels")
        .and_then(serde_json::Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
                .collect()
        })
        .unwrap_or_default()
}

/// The printer, counting what it prints for `--max-events` and `--stats`.
struct Counted {
    printer: Box<dyn Sink>,
    stats: Option<Stats>,
    deltas: u64,
    handler_calls: u64,
}

impl Counted {
    /// [`Counted::print`] `rec`, or only count it in `--stats` (as the watch's `--stats`
    /// counts what a filter hides).
    fn emit(&mut self, rec: &Record<'_>, shown: bool) -> io::Result<()> {
        if shown {
            return self.print(rec);
        }
        if let Some(s) = &mut self.stats {
            s.observe(rec, usize::MAX);
        }
        Ok(())
    }

    fn print(&mut self, rec: &Record<'_>) -> io::Result<()> {
        self.printer.record(rec)?;
        match rec.body {
            Body::Delta { .. } => self.deltas += 1,
            Body::Handler { .. } => self.handler_calls += 1,
            _ => {}
        }
        if let Some(s) = &mut self.stats {
            // Time to synced is the recording's ([`synced_after`]), not the replay's: no
            // count of targets is ever reached here.
            s.observe(rec, usize::MAX);
        }
        Ok(())
    }
}

/// Whether the recording was made with `--metadata-only`, which covers a whole run: its
/// first delta's object is a PartialObjectMetadata.
fn metadata_only(parsed: &[Parsed]) -> bool {
    #[derive(serde::Deserialize)]
    struct Kind<'a> {
        #[serde(default, borrow)]
        kind: std::borrow::Cow<'a, str>,
    }
    parsed
        .iter()
        .find_map(|p| match &p.item {
            Item::Delta {
                object: Some(o), ..
            } => Some(o),
            _ => None,
        })
        .and_then(|o| serde_json::from_str::<Kind<'_>>(o.raw()).ok())
        .is_some_and(|k| k.kind == "PartialObjectMetadata")
}

/// The informer's store, per context and resource: key → last known object.
type Store = HashMap<(Option<ContextName>, usize, String), ObjectRef>;

/// What the watch's informer loop did with each record, done again: the store (the
/// previous version of each object), the handler's listener, `--until`, the print filters
/// and `--blame`'s conflicts.
struct Informer<'a> {
    resources: &'a [Resource],
    store: Store,
    /// `--view handlers`: a delta's handler call follows it.
    listener: Option<Listener>,
    until: Option<&'a Condition>,
    /// `--types`, `--changes`, `--quiet-relists`.
    filter: Filter,
    watch_only: bool,
    /// `--blame`: the fights found in the deltas.
    conflicts: Option<Conflicts>,
}

impl Informer<'_> {
    /// The store as it was when the replayed records begin (`--since`): each object's
    /// last record before them, none printed.
    fn seed(&mut self, seeds: &[Parsed]) {
        for p in seeds {
            if let Item::Delta {
                key,
                resource,
                object: Some(o),
                kind,
                ..
            } = &p.item
            {
                if *kind != DeltaType::Deleted {
                    let k = (p.context.clone(), *resource, key.clone());
                    self.store.insert(k, o.clone());
                }
            }
        }
    }

    /// Prints one record as the watch did: a delta with the previous version of its object
    /// from the store (kept as the informer kept it), hidden by the print filters as the
    /// watch hid it, followed by the conflicts it completes and, with a listener, its
    /// handler call. `true` when the record meets `until` (a delta, or a Synced record with
    /// no object of its resource known, for `deleted`).
    fn replay(&mut self, p: &Parsed, out: &mut Counted) -> Result<bool> {
        let resources = self.resources;
        let resource_of = |i: usize| &resources[i];
        let rec = |resource, body| record(p, resource, body);
        let (kind, key, ri, object, tombstone, initial_list, follow) = match &p.item {
            // Found again in the deltas under --blame, else printed as recorded.
            Item::Observed(Observation::Conflict(_), _) if self.conflicts.is_some() => {
                return Ok(false)
            }
            Item::Event(e, r) => {
                out.print(&rec(resource_of(*r), Body::Event(e)))?;
                return Ok(false);
            }
            Item::Observed(o, r) => {
                out.print(&rec(resource_of(*r), Body::Observed(o)))?;
                return Ok(false);
            }
            Item::Synced(r) => {
                out.print(&rec(resource_of(*r), Body::Synced))?;
                let known = self
                    .store
                    .keys()
                    .filter(|(c, ri, _)| *c == p.context && ri == r)
                    .count();
                return Ok(self.until.is_some_and(|c| c.met_when_synced(known)));
            }
            Item::Handler {
                key,
                resource,
                call,
            } => {
                let body = recorded(key, call);
                let initial = matches!(
                    body,
                    Body::Handler {
                        initial_list: true,
                        ..
                    }
                );
                if !(self.watch_only && initial) {
                    out.print(&rec(resource_of(*resource), body))?;
                }
                return Ok(false);
            }
            Item::Delta {
                kind,
                key,
                resource,
                object,
                tombstone,
                initial_list,
                follow,
            } => (
                *kind,
                key,
                *resource,
                object,
                *tombstone,
                *initial_list,
                follow,
            ),
        };
        let object = match (tombstone, object) {
            (true, o) => DeltaObject::Tombstone(Tombstone {
                key: key.clone(),
                obj: o.clone(),
            }),
            (false, Some(o)) => DeltaObject::Object(o.clone()),
            // A delta always carries its object; only a tombstone may not.
            (false, None) => return Ok(false),
        };
        let delta = Delta { kind, object };
        let skey = (p.context.clone(), ri, key.clone());
        let prev = self.store.get(&skey).cloned();
        let met = self.deliver(
            p,
            &delta,
            prev.as_ref(),
            (ri, key, initial_list),
            follow,
            out,
        )?;
        match (kind, delta.object.object()) {
            (DeltaType::Deleted, _) | (_, None) => self.store.remove(&skey),
            (_, Some(o)) => self.store.insert(skey, o.clone()),
        };
        Ok(met)
    }

    /// [`Informer::replay`] of a delta of resource `ri` under `key`, `prev` its object's
    /// version before: its records, and whether it meets `until`.
    fn deliver(
        &mut self,
        p: &Parsed,
        delta: &Delta,
        prev: Option<&ObjectRef>,
        (ri, key, initial_list): (usize, &str, bool),
        follow: &Option<Followed>,
        out: &mut Counted,
    ) -> Result<bool> {
        let resource = &self.resources[ri];
        let rec = |resource, body| record(p, resource, body);
        // As the watch: the initial list's deltas are not even recorded.
        if self.watch_only && initial_list {
            return Ok(false);
        }
        let met = self.until.is_some_and(|c| c.met_by(delta, prev));
        let shown = self.filter.shows(delta, prev);
        let body = Body::Delta {
            key,
            delta,
            initial_list,
            prev,
        };
        let mut delta_rec = rec(resource, body);
        delta_rec.follow = follow.as_ref();
        out.emit(&delta_rec, shown)?;
        // Fights are seen in every change, printed or not (filters are printing only).
        let fights = self.conflicts.as_mut().map(|c| delta_rec.conflicts(c));
        for ob in fights.iter().flatten() {
            out.print(&rec(resource, Body::Observed(ob)))?;
        }
        let call = self
            .listener
            .as_ref()
            .and_then(|l| handlers::call(delta, prev, initial_list, l));
        if let Some(call) = call {
            let body = Body::Handler {
                key,
                call: &call,
                initial_list,
            };
            out.emit(&rec(resource, body), shown)?;
        }
        Ok(met)
    }
}

/// The record of `body` of `resource`, with what `p`'s line said of its time, context and
/// informer.
fn record<'a>(p: &'a Parsed, resource: &'a Resource, body: Body<'a>) -> Record<'a> {
    Record {
        resource,
        context: p.context.as_ref(),
        time: p.time,
        body,
        informer: InformerInfo {
            client_go: p.client_go.as_deref(),
            queue: p.queue.as_deref(),
            batch: p.batch,
        },
        blame: Default::default(),
        follow: None,
    }
}

/// What `--context`, `--since`, `--until TIME`, `--at`, RESOURCE and NAME keep, the same
/// for a file and a database (where they are also the query's, so that it reads only what
/// they keep, from its indexes).
// Without the feature `database`, `namespace` and `explain` are read by no query.
#[cfg_attr(not(feature = "database"), allow(dead_code))]
struct Window {
    contexts: Vec<String>,
    resource: Option<String>,
    name: Option<String>,
    namespace: Option<String>,
    since: Option<jiff::Timestamp>,
    until: Option<jiff::Timestamp>,
    at: Option<jiff::Timestamp>,
    /// `--explain`: the plan of `--at`'s query on stderr.
    explain: bool,
}

/// `t` to the millisecond below: records are timed to the millisecond, and a database
/// compares the times as they are written.
fn to_millis(t: jiff::Timestamp) -> jiff::Timestamp {
    jiff::Timestamp::from_millisecond(t.as_millisecond()).unwrap_or(t)
}

impl Window {
    fn new(args: &ReplayArgs, now: jiff::Timestamp) -> Window {
        let until = match &args.until {
            Some(UntilArg::Time(t)) => Some(to_millis(t.resolve(now))),
            _ => None,
        };
        Window {
            contexts: args
                .context
                .iter()
                .filter(|c| !c.is_empty())
                .cloned()
                .collect(),
            resource: args.resource.clone(),
            name: args.name.clone(),
            namespace: args.namespace.clone().filter(|n| !n.is_empty()),
            since: args.since.map(|t| to_millis(t.resolve(now))),
            until,
            at: args.at.map(|t| to_millis(t.resolve(now))),
            explain: args.explain,
        }
    }

    /// Whether `p` is of the contexts, resource and object asked (its time aside).
    fn selects(&self, p: &Parsed, resources: &[Resource]) -> bool {
        if let (false, Some(c)) = (self.contexts.is_empty(), &p.context) {
            if !self.contexts.iter().any(|w| w == c.as_str()) {
                return false;
            }
        }
        let (ri, key) = match &p.item {
            Item::Delta { resource, key, .. } | Item::Handler { resource, key, .. } => {
                (*resource, Some(key))
            }
            Item::Event(_, r) | Item::Observed(_, r) | Item::Synced(r) => (*r, None),
        };
        if let Some(want) = &self.resource {
            let name = &resources[ri].name;
            let plural = name.split_once('.').map_or(name.as_str(), |(p, _)| p);
            if name != want && plural != want {
                return false;
            }
        }
        match (&self.name, key) {
            (Some(want), Some(key)) => key.rsplit('/').next() == Some(want.as_str()),
            _ => true,
        }
    }

    fn in_time(&self, p: &Parsed) -> bool {
        self.since.is_none_or(|t| p.time >= t) && self.until.is_none_or(|t| p.time <= t)
    }

    /// A file's records: the store's seeds (each object's last record before `--since`)
    /// and the records to replay (with `--at`, each object's state then).
    fn split(&self, parsed: Vec<Parsed>, resources: &[Resource]) -> (Vec<Parsed>, Vec<Parsed>) {
        let parsed: Vec<Parsed> = parsed
            .into_iter()
            .filter(|p| self.selects(p, resources))
            .collect();
        if let Some(at) = self.at {
            return (Vec::new(), state_at(parsed, at, true, resources));
        }
        let Some(since) = self.since else {
            return (
                Vec::new(),
                parsed.into_iter().filter(|p| self.in_time(p)).collect(),
            );
        };
        let (before, from): (Vec<Parsed>, Vec<Parsed>) =
            parsed.into_iter().partition(|p| p.time < since);
        let seeds = state_at(before, since, false, resources);
        (
            seeds,
            from.into_iter().filter(|p| self.in_time(p)).collect(),
        )
    }
}

/// Each object's last delta at `at` (before it, when not `inclusive`), unless it is its
/// deletion, in the order of (context, resource, key): what the informers held then.
fn state_at(
    parsed: Vec<Parsed>,
    at: jiff::Timestamp,
    inclusive: bool,
    resources: &[Resource],
) -> Vec<Parsed> {
    let mut last: HashMap<(Option<ContextName>, usize, String), Parsed> = HashMap::new();
    for p in parsed {
        let before = if inclusive { p.time <= at } else { p.time < at };
        if let (true, Item::Delta { key, resource, .. }) = (before, &p.item) {
            last.insert((p.context.clone(), *resource, key.clone()), p);
        }
    }
    let mut state: Vec<Parsed> = last
        .into_values()
        .filter(|p| {
            !matches!(
                p.item,
                Item::Delta {
                    kind: DeltaType::Deleted,
                    ..
                }
            )
        })
        .collect();
    sort_state(&mut state, resources);
    state
}

/// The order `--at` prints objects in, whatever their source: context, resource, key.
fn sort_state(state: &mut [Parsed], resources: &[Resource]) {
    let order = |p: &Parsed| match &p.item {
        Item::Delta { key, resource, .. } => (
            p.context.as_ref().map(|c| c.as_str().to_owned()),
            resources[*resource].name.clone(),
            key.clone(),
        ),
        _ => (None, String::new(), String::new()),
    };
    state.sort_by_key(order);
}

/// A database's records (and the seeds of `--since`), read with the window's filters in
/// the query, each writer's records in their order, merged by time.
#[cfg(feature = "database")]
fn from_database(
    target: &Target,
    window: &Window,
    res: &mut Resources,
) -> Result<(Vec<Parsed>, Vec<Parsed>)> {
    use crate::app::record::db::{Db, ReadRow, Select};
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let time = |t: Option<jiff::Timestamp>| t.map(crate::text::format_time);
    let (seeds, rows, name) = rt.block_on(async {
        let (db, name) = Db::open(target, false)
            .map_err(|why| anyhow::Error::new(crate::app::exit::Usage(why)))?;
        let sel = Select {
            contexts: &window.contexts,
            since: time(window.since),
            until: time(window.until),
            resource: window.resource.as_deref(),
            name: window.name.as_deref(),
            namespace: window.namespace.as_deref(),
        };
        let read = async {
            if let Some(at) = time(window.at) {
                if window.explain {
                    let plan = db.explain_state_at(&sel, &at).await?;
                    let _ = writeln!(io::stderr(), "{plan}");
                }
                return Ok((Vec::new(), db.state_at(&sel, &at, true).await?));
            }
            let seeds = match &sel.since {
                Some(since) => db.state_at(&sel, since, false).await?,
                None => Vec::new(),
            };
            Ok::<_, sqlx::Error>((seeds, db.records(&sel).await?))
        };
        let (seeds, rows) = read.await.map_err(|e| unreadable(&name, &e))?;
        Ok::<_, anyhow::Error>((seeds, rows, name))
    })?;
    // Records name their context only when their run watched several: with rows of
    // several contexts (several runs into one database), each names its own.
    let contexts: BTreeSet<&str> = seeds
        .iter()
        .chain(&rows)
        .map(|r| r.context.as_str())
        .collect();
    let tag = contexts.len() > 1;
    let mut parse = |r: &ReadRow| -> Result<Option<Parsed>> {
        let line = r.line();
        let n = usize::try_from(r.seq).unwrap_or(0);
        let p = parse_line(&line, n, res)
            .with_context(|| format!("{name}: record #{} of the run {}", r.seq, r.writer))?;
        Ok(p.map(|mut p| {
            if tag && p.context.is_none() {
                p.context = Some(ContextName::from(r.context.as_str()));
            }
            p
        }))
    };
    let mut seeded = Vec::new();
    for r in &seeds {
        seeded.extend(parse(r)?);
    }
    // Each writer's records in order, then merged by time (a writer's own order kept,
    // ties to the writer first in the rows).
    let mut runs: Vec<std::collections::VecDeque<Parsed>> = Vec::new();
    let mut last_writer: Option<&str> = None;
    for r in &rows {
        if last_writer != Some(r.writer.as_str()) {
            runs.push(std::collections::VecDeque::new());
            last_writer = Some(r.writer.as_str());
        }
        if let (Some(p), Some(run)) = (parse(r)?, runs.last_mut()) {
            run.push_back(p);
        }
    }
    let mut parsed = Vec::with_capacity(rows.len());
    if window.at.is_some() {
        let selected = runs.into_iter().flatten();
        parsed.extend(selected.filter(|p| window.selects(p, &res.list)));
        sort_state(&mut parsed, &res.list);
        sort_state(&mut seeded, &res.list);
        return Ok((seeded, parsed));
    }
    loop {
        let next = runs
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.front().map(|p| (p.time, i)))
            .min();
        let Some((_, i)) = next else { break };
        if let Some(p) = runs[i].pop_front() {
            parsed.push(p);
        }
    }
    let parsed = parsed
        .into_iter()
        .filter(|p| window.selects(p, &res.list) && window.in_time(p))
        .collect();
    Ok((seeded, parsed))
}

/// A database that cannot be read, in one line.
#[cfg(feature = "database")]
fn unreadable(name: &str, e: &sqlx::Error) -> anyhow::Error {
    let missing = matches!(e, sqlx::Error::Database(d)
        if d.code().as_deref() == Some("42P01") || d.message().contains("no such table"));
    if missing {
        return anyhow::anyhow!(
            "{name} holds no kwatch recording (no table kwatch_records): record into it with \
             kwatch --record {name}"
        );
    }
    let why = match e {
        sqlx::Error::Database(d) => d.message().to_owned(),
        sqlx::Error::PoolTimedOut => "no connection within 5s".to_owned(),
        other => other.to_string(),
    };
    anyhow::anyhow!(
        "cannot read the recording in {name}: {}",
        why.replace('\n', " ")
    )
}

#[cfg(not(feature = "database"))]
fn from_database(_: &Target, _: &Window, _: &mut Resources) -> Result<(Vec<Parsed>, Vec<Parsed>)> {
    Err(anyhow::Error::new(crate::app::exit::Usage(
        crate::app::record::NO_DATABASE.to_owned(),
    )))
}
