//! `kwatch replay FILE`: re-renders a JSON-lines recording (`--record FILE`, or saved
//! `-o json` output) in any output format. Records are rebuilt exactly as the watch
//! printed them (time, context, initial list, tombstones); the previous version of each
//! object is tracked as the informer's store did, so `--diff` and `-o watch-events` work
//! on a recording too.

use std::collections::{BTreeSet, HashMap};
use std::io::{self, BufRead, IsTerminal as _, Read};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde_json::Value;

use crate::cli::ReplayArgs;
use crate::delta::{Delta, DeltaObject, DeltaType, Tombstone};
use crate::object::{Object, ObjectRef};
use crate::output::{self, Body, Record, Resource};
use crate::reflector::ReflectorEvent;

/// One parsed line.
enum Line {
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
}

struct Parsed {
    time: jiff::Timestamp,
    context: Option<String>,
    line: Line,
}

fn delta_type(s: &str) -> Option<DeltaType> {
    Some(match s {
        "Added" => DeltaType::Added,
        "Updated" => DeltaType::Updated,
        "Deleted" => DeltaType::Deleted,
        "Replaced" => DeltaType::Replaced,
        "Sync" => DeltaType::Sync,
        _ => return None,
    })
}

fn ms(v: &Value) -> Duration {
    Duration::from_millis(v.as_u64().unwrap_or(0))
}

fn string(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_owned()
}

/// The reflector event a record describes (the inverse of the JSON printer's fields).
fn event(ty: &str, r: &Value) -> Option<ReflectorEvent> {
    Some(match ty {
        "List" => ReflectorEvent::List {
            resource_version: string(&r["resourceVersion"]),
            limit: u32::try_from(r["limit"].as_u64().unwrap_or(0)).unwrap_or(u32::MAX),
            reason: string(&r["reason"]),
            streaming: r["streaming"] == true,
        },
        "Listed" => ReflectorEvent::Listed {
            resource_version: string(&r["resourceVersion"]),
            items: usize::try_from(r["items"].as_u64().unwrap_or(0)).unwrap_or(usize::MAX),
            pages: u32::try_from(r["pages"].as_u64().unwrap_or(0)).unwrap_or(u32::MAX),
            elapsed: ms(&r["ms"]),
            full_list_fallback: r["fullListFallback"] == true,
            streaming: r["streaming"] == true,
        },
        "Watch" => ReflectorEvent::Watch {
            resource_version: string(&r["resourceVersion"]),
            timeout_seconds: u32::try_from(r["timeoutSeconds"].as_u64().unwrap_or(0))
                .unwrap_or(u32::MAX),
        },
        "WatchEnded" => ReflectorEvent::WatchEnded {
            reason: string(&r["reason"]),
            events: r["events"].as_u64().unwrap_or(0),
            elapsed: ms(&r["ms"]),
            error: r["error"] == true,
        },
        "Bookmark" => ReflectorEvent::Bookmark {
            resource_version: string(&r["resourceVersion"]),
        },
        "Backoff" => ReflectorEvent::Backoff {
            delay: ms(&r["delayMs"]),
            cause: string(&r["cause"]),
        },
        "Resync" => ReflectorEvent::Resync,
        "WatchListFallback" => ReflectorEvent::WatchListFallback {
            error: string(&r["error"]),
        },
        "Retry" => ReflectorEvent::Retry(crate::retry::Retry {
            verb: match r["verb"].as_str() {
                Some("list") => crate::retry::Verb::List,
                Some("watch") => crate::retry::Verb::Watch,
                _ => crate::retry::Verb::Get,
            },
            code: r["code"].as_u64().and_then(|c| u16::try_from(c).ok()),
            reason: string(&r["reason"]),
            delay: Duration::from_secs(r["retryAfterSeconds"].as_u64().unwrap_or(0)),
            attempt: u32::try_from(r["attempt"].as_u64().unwrap_or(0)).unwrap_or(u32::MAX),
            max_retries: u32::try_from(r["maxRetries"].as_u64().unwrap_or(0)).unwrap_or(u32::MAX),
        }),
        _ => return None,
    })
}

/// The resources of a recording: the names reflector events carry, matched to the
/// kind and apiVersion that deltas carry.
#[derive(Default)]
struct Resources {
    names: BTreeSet<String>,
    list: Vec<Resource>,
}

impl Resources {
    fn by_name(&mut self, name: &str) -> usize {
        self.names.insert(name.to_owned());
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
        let r = &mut self.list[i];
        r.kind = kind.to_owned();
        r.api_version = api_version.to_owned();
        r.namespaced = namespaced;
        i
    }
}

fn parse_line(text: &str, n: usize, res: &mut Resources) -> Result<Option<Parsed>> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    let r: Value = serde_json::from_str(text).with_context(|| format!("line {n}: not JSON"))?;
    let ty = r["type"]
        .as_str()
        .with_context(|| format!("line {n}: no \"type\""))?;
    let time = r["time"]
        .as_str()
        .and_then(|t| t.parse().ok())
        .unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    let context = r["context"].as_str().map(str::to_owned);
    let line = if let (Some(kind), Some(key)) = (delta_type(ty), r["key"].as_str()) {
        let object = match r.get("object") {
            Some(o) if o.is_object() => Some(ObjectRef::new(
                Object::from_json(&o.to_string())
                    .with_context(|| format!("line {n}: bad object"))?,
            )),
            _ => None,
        };
        let resource = res.by_kind(
            r["kind"].as_str().unwrap_or_default(),
            r["apiVersion"].as_str().unwrap_or_default(),
            r["namespace"].is_string(),
        );
        Line::Delta {
            kind,
            key: key.to_owned(),
            resource,
            object,
            tombstone: r["finalStateUnknown"] == true,
            initial_list: r["initialList"] == true,
        }
    } else if ty == "Synced" {
        Line::Synced(res.by_name(r["resource"].as_str().unwrap_or_default()))
    } else if let Some(e) = event(ty, &r) {
        Line::Event(e, res.by_name(r["resource"].as_str().unwrap_or_default()))
    } else {
        bail!("line {n}: unknown record type {ty:?}");
    };
    Ok(Some(Parsed {
        time,
        context,
        line,
    }))
}

/// Runs `kwatch replay`.
pub fn run(args: ReplayArgs) -> Result<()> {
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
        .filter_map(|p| match &p.line {
            Line::Delta { key, .. } => key.split_once('/').map(|(ns, _)| ns),
            _ => None,
        })
        .collect();
    opts.all_namespaces = namespaces.len() > 1;
    opts.multi = res.list.len() > 1;
    opts.contexts = parsed.iter().any(|p| p.context.is_some());
    opts.terminal = io::stdout().is_terminal();
    let mut printer = output::printer(opts, io::stdout(), io::stderr());

    // The informer's store, per context and resource: key → last known object.
    let mut store: HashMap<(Option<String>, usize, String), ObjectRef> = HashMap::new();
    for p in &parsed {
        let (resource, body_kind) = match &p.line {
            Line::Delta { resource, .. } => (*resource, 0),
            Line::Event(_, r) => (*r, 1),
            Line::Synced(r) => (*r, 2),
        };
        let resource = &res.list[resource];
        let rec = |body| Record {
            resource,
            context: p.context.as_deref(),
            time: p.time,
            body,
        };
        match (&p.line, body_kind) {
            (
                Line::Delta {
                    kind,
                    key,
                    object,
                    tombstone,
                    initial_list,
                    resource: ri,
                },
                _,
            ) => {
                let object_ref = match (tombstone, object) {
                    (true, o) => DeltaObject::Tombstone(Tombstone {
                        key: key.clone(),
                        obj: o.clone(),
                    }),
                    (false, Some(o)) => DeltaObject::Object(o.clone()),
                    (false, None) => continue,
                };
                let delta = Delta {
                    kind: *kind,
                    object: object_ref,
                };
                let skey = (p.context.clone(), *ri, key.clone());
                let prev = store.get(&skey).cloned();
                printer.print(&rec(Body::Delta {
                    key,
                    delta: &delta,
                    initial_list: *initial_list,
                    prev: prev.as_ref(),
                }))?;
                match (kind, delta.object.object()) {
                    (DeltaType::Deleted, _) | (_, None) => {
                        store.remove(&skey);
                    }
                    (_, Some(o)) => {
                        store.insert(skey, o.clone());
                    }
                }
            }
            (Line::Event(e, _), _) => printer.print(&rec(Body::Event(e)))?,
            (Line::Synced(_), _) => printer.print(&rec(Body::Synced))?,
        }
    }
    printer.flush()?;
    Ok(())
}
