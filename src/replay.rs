//! `kwatch replay FILE`: re-renders a JSON-lines recording (`--record FILE`, or saved
//! `-o json` output) in any output format. Records are rebuilt exactly as the watch
//! printed them (time, context, initial list, tombstones); the previous version of each
//! object is tracked as the informer's store did, so `--diff` and `-o watch-events` work
//! on a recording too.
//!
//! `--view handlers` shows the handler calls a recording holds (saved `--view handlers
//! -o json` output), and derives them from the deltas it holds ([`crate::handlers`], for a
//! handler without a resync period, or one of a second or more: either way one whose
//! listener is always syncing).

use std::collections::{BTreeSet, HashMap};
use std::io::{self, BufRead, IsTerminal as _, Read};

use anyhow::{Context, Result};

use crate::cli::ReplayArgs;
use crate::delta::{Delta, DeltaObject, DeltaType, Tombstone};
use crate::handlers::{self, HandlerCall, Listener, Registration};
use crate::object::{Object, ObjectRef};
use crate::output::record::{self, HandlerLine, HandlerName, Line};
use crate::output::{self, Body, InformerInfo, Printer, Record, View};
use crate::reflector::ReflectorEvent;
use crate::target::Resource;

/// One parsed record, owning what the printers borrow.
enum Item {
    Delta {
        kind: DeltaType,
        key: String,
        resource: usize,
        object: Option<ObjectRef>,
        tombstone: bool,
        initial_list: bool,
    },
    Event(ReflectorEvent, usize),
    Synced(usize),
    Handler {
        key: String,
        resource: usize,
        call: HandlerCall,
    },
}

struct Parsed {
    time: jiff::Timestamp,
    context: Option<String>,
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
    let line: Line<'_> = serde_json::from_str(text).with_context(|| {
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
        let namespaced = d.namespace.is_some();
        let resource = match &d.resource {
            Some(name) => res.named(name, &d.kind, &d.api_version, namespaced),
            // Recorded before deltas named their resource.
            None => res.by_kind(&d.kind, &d.api_version, namespaced),
        };
        return Ok(Some(Parsed {
            time: time(&d.time, n)?,
            context: d.context.as_deref().map(str::to_owned),
            item: Item::Delta {
                kind,
                key: d.key.clone().into_owned(),
                resource,
                object,
                tombstone: d.final_state_unknown,
                initial_list: d.initial_list,
            },
            client_go,
            queue,
            batch,
        }));
    }
    if let Line::HandlerCall(h) = &line {
        let resource = res.named(&h.resource, &h.kind, &h.api_version, h.namespace.is_some());
        return Ok(Some(Parsed {
            time: time(&h.time, n)?,
            context: h.context.as_deref().map(str::to_owned),
            item: Item::Handler {
                key: h.key.clone().into_owned(),
                resource,
                call: handler_call(h, text, n)?,
            },
            client_go: None,
            queue: None,
            batch: None,
        }));
    }
    let (head, item) = match (&line, line.event()) {
        (_, Some((head, e))) => (head, Item::Event(e, res.by_name(&head.resource))),
        (Line::Synced { head, .. }, None) => (head, Item::Synced(res.by_name(&head.resource))),
        // Not reached: every variant is a delta, an event or Synced.
        _ => anyhow::bail!("line {n}: a record kwatch does not know how to replay"),
    };
    Ok(Some(Parsed {
        time: time(&head.time, n)?,
        context: head.context.as_deref().map(str::to_owned),
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
                    key: h.key.clone().into_owned(),
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

/// Runs `kwatch replay`.
pub fn run(args: ReplayArgs) -> Result<()> {
    let text = read(&args)?;
    let mut res = Resources::default();
    let mut parsed = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if let Some(p) = parse_line(line, i + 1, &mut res)? {
            parsed.push(p);
        }
    }
    let mut opts = crate::config::printer_options(&args.output);
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
    opts.terminal = io::stdout().is_terminal();
    opts.metadata_only = metadata_only(&parsed);
    // The handler whose calls are derived from the deltas (`--view handlers`).
    let listener = (opts.view == View::Handlers)
        .then(|| Listener::new(Registration::default(), std::time::Instant::now()));
    let mut printer = output::printer(opts, io::stdout(), io::stderr());
    let mut store = Store::default();
    for p in &parsed {
        print(
            p,
            &res.list,
            &mut store,
            listener.as_ref(),
            printer.as_mut(),
        )?;
    }
    printer.finish()?;
    Ok(())
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
type Store = HashMap<(Option<String>, usize, String), ObjectRef>;

/// Prints one record, with the previous version of a delta's object from `store`, and
/// keeps `store` as the informer did; with a `listener`, a delta's handler call follows
/// it.
fn print(
    p: &Parsed,
    resources: &[Resource],
    store: &mut Store,
    listener: Option<&Listener>,
    printer: &mut dyn Printer,
) -> Result<()> {
    let resource_of = |i: usize| &resources[i];
    let rec = |resource, body| Record {
        resource,
        context: p.context.as_deref(),
        time: p.time,
        body,
        informer: InformerInfo {
            client_go: p.client_go.as_deref(),
            queue: p.queue.as_deref(),
            batch: p.batch,
        },
    };
    let (kind, key, ri, object, tombstone, initial_list) = match &p.item {
        Item::Event(e, r) => return Ok(printer.print(&rec(resource_of(*r), Body::Event(e)))?),
        Item::Synced(r) => return Ok(printer.print(&rec(resource_of(*r), Body::Synced))?),
        Item::Handler {
            key,
            resource,
            call,
        } => return Ok(printer.print(&rec(resource_of(*resource), recorded(key, call)))?),
        Item::Delta {
            kind,
            key,
            resource,
            object,
            tombstone,
            initial_list,
        } => (*kind, key, *resource, object, *tombstone, *initial_list),
    };
    let object = match (tombstone, object) {
        (true, o) => DeltaObject::Tombstone(Tombstone {
            key: key.clone(),
            obj: o.clone(),
        }),
        (false, Some(o)) => DeltaObject::Object(o.clone()),
        // A delta always carries its object; only a tombstone may not.
        (false, None) => return Ok(()),
    };
    let delta = Delta { kind, object };
    let skey = (p.context.clone(), ri, key.clone());
    let prev = store.get(&skey).cloned();
    printer.print(&rec(
        resource_of(ri),
        Body::Delta {
            key,
            delta: &delta,
            initial_list,
            prev: prev.as_ref(),
        },
    ))?;
    if let Some(call) =
        listener.and_then(|l| handlers::call(&delta, prev.as_ref(), initial_list, l))
    {
        let body = Body::Handler {
            key,
            call: &call,
            initial_list,
        };
        printer.print(&rec(resource_of(ri), body))?;
    }
    match (kind, delta.object.object()) {
        (DeltaType::Deleted, _) | (_, None) => store.remove(&skey),
        (_, Some(o)) => store.insert(skey, o.clone()),
    };
    Ok(())
}
