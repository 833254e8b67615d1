//! `--view fleet`: what differs across the clusters of several contexts. Per resource
//! and object key, which contexts have the object and at which `metadata.generation` and
//! resourceVersion; one line (a `Fleet` record in JSON) each time that changes in one
//! context after the initial lists, and every key once when every context has synced (an
//! object missing from one is `absent` there). A rollout shows as the generation reaching
//! cluster after cluster. Reflector events and Synced are printed as the format prints
//! them: records in JSON, `~` lines on stderr beside the table.
//!
//! Generations compare across clusters (the same spec applied everywhere has the same
//! one, counted by each API server from 1); resourceVersions do not (each cluster has its
//! own etcd), so a key `differs` when a context lacks it or the generations are not all
//! equal.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Write};

use serde::Serialize;

use super::diagnostics::{self, Diagnostics};
use crate::cache::delta::DeltaType;
use crate::context::{self, ContextName};
use crate::informer::record::{Body, Record};
use crate::informer::sink::Sink;

/// One object in one context.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
struct Seen {
    #[serde(skip_serializing_if = "Option::is_none")]
    generation: Option<i64>,
    resource_version: String,
}

/// (resource, key) → context → what it has.
type Objects = BTreeMap<(String, String), BTreeMap<String, Seen>>;

pub(super) struct FleetPrinter<W: Write> {
    w: W,
    /// Events and Synced beside the table (its `~` lines); `None`: JSON, written here.
    table: Option<Box<dyn Sink>>,
    /// Without the table: where diagnostics go.
    diag: Option<Diagnostics>,
    scratch: Vec<u8>,
    objects: Objects,
    /// The contexts watched (with one, the empty name).
    expected: BTreeSet<String>,
    /// (resource, context) left out before it synced: not waited for, and not shown (what
    /// that cluster has is not known).
    gone: BTreeSet<(String, String)>,
    /// The contexts synced, per resource.
    synced: BTreeMap<String, BTreeSet<String>>,
    /// Resources whose every context has synced: changes are printed as they come.
    live: BTreeSet<String>,
}

impl<W: Write> FleetPrinter<W> {
    /// `table`: the table whose `~` lines go beside the fleet's (then its diagnostics are
    /// the table's), else `diag`.
    pub(super) fn new(
        w: W,
        table: Option<Box<dyn Sink>>,
        diag: Option<Diagnostics>,
        contexts: Vec<String>,
    ) -> Self {
        let mut expected: BTreeSet<String> = contexts.into_iter().collect();
        if expected.is_empty() {
            expected.insert(String::new());
        }
        FleetPrinter {
            w,
            table,
            diag,
            scratch: Vec::new(),
            objects: BTreeMap::new(),
            expected,
            gone: BTreeSet::new(),
            synced: BTreeMap::new(),
            live: BTreeSet::new(),
        }
    }

    /// The contexts whose copies of `resource` are shown and compared: those watched,
    /// less those whose `resource` was left out.
    fn contexts(&self, resource: &str) -> Vec<String> {
        let gone = |c: &&String| self.gone.contains(&(resource.to_owned(), (*c).clone()));
        self.expected.iter().filter(|c| !gone(c)).cloned().collect()
    }

    /// One line for `key` of `resource`, at `time`, after a change in `context`.
    fn line(
        &mut self,
        time: jiff::Timestamp,
        context: Option<&ContextName>,
        resource: &str,
        key: &str,
    ) -> io::Result<()> {
        let empty = BTreeMap::new();
        let have = self
            .objects
            .get(&(resource.to_owned(), key.to_owned()))
            .unwrap_or(&empty);
        let contexts = self.contexts(resource);
        let gens: BTreeSet<Option<i64>> = have.values().map(|s| s.generation).collect();
        let differs = have.len() < contexts.len() || gens.len() > 1;
        if self.table.is_none() {
            let clusters: BTreeMap<&str, Option<&Seen>> = contexts
                .iter()
                .map(|c| (c.as_str(), have.get(c.as_str())))
                .collect();
            let out = serde_json::json!({
                "type": "Fleet",
                "resource": resource,
                "key": key,
                "time": crate::text::format_time(time),
                "context": context,
                "clusters": clusters,
                "differs": differs,
            });
            serde_json::to_writer(&mut self.w, &out)?;
            return writeln!(self.w);
        }
        let cells: Vec<String> = contexts
            .iter()
            .map(|c| match have.get(c.as_str()) {
                Some(Seen {
                    generation: Some(g),
                    resource_version,
                }) => format!("{c}: gen {g} rv {resource_version}"),
                Some(s) => format!("{c}: rv {}", s.resource_version),
                None => format!("{c}: absent"),
            })
            .collect();
        let mark = if differs { "  (differs)" } else { "" };
        let line = format!("{resource} {key}  {}{mark}", cells.join(" | "));
        writeln!(self.w, "{}", crate::text::sanitize(&line))
    }
}

impl<W: Write> FleetPrinter<W> {
    /// Once every context of `resource` not left out has synced: its every key, once, and
    /// from then on each change as it comes.
    fn release_if_synced(
        &mut self,
        time: jiff::Timestamp,
        context: Option<&ContextName>,
        resource: &str,
    ) -> io::Result<()> {
        let synced = self.synced.get(resource);
        let waiting = self
            .contexts(resource)
            .into_iter()
            .any(|c| !synced.is_some_and(|s| s.contains(&c)));
        if waiting || !self.live.insert(resource.to_owned()) {
            return Ok(());
        }
        let keys: Vec<String> = self
            .objects
            .keys()
            .filter(|(r, _)| r == resource)
            .map(|(_, k)| k.clone())
            .collect();
        for k in keys {
            self.line(time, context, resource, &k)?;
        }
        Ok(())
    }

    /// A reflector event or Synced, as the format prints it.
    fn event(&mut self, rec: &Record<'_>) -> io::Result<()> {
        match &mut self.table {
            Some(t) => t.record(rec),
            None => {
                let time = crate::text::format_time(rec.time);
                let line = crate::output::record::Line::of(rec, &time);
                line.write_json(&mut self.w, None, &mut self.scratch)
            }
        }
    }
}

/// `metadata.generation`, where the object has one.
fn generation(raw: &str) -> Option<i64> {
    #[derive(serde::Deserialize)]
    struct Meta {
        generation: Option<i64>,
    }
    #[derive(serde::Deserialize)]
    struct Obj {
        metadata: Meta,
    }
    serde_json::from_str::<Obj>(raw)
        .ok()
        .and_then(|o| o.metadata.generation)
}

impl<W: Write + Send> Sink for FleetPrinter<W> {
    fn record(&mut self, rec: &Record<'_>) -> io::Result<()> {
        let resource = rec.resource.name.clone();
        let context = context::or_empty(rec.context).to_owned();
        match &rec.body {
            Body::Delta { key, delta, .. } => {
                let entry = self
                    .objects
                    .entry((resource.clone(), (*key).to_owned()))
                    .or_default();
                let obj = delta.object.object();
                let now = match (delta.kind, obj) {
                    (DeltaType::Deleted, _) | (_, None) => None,
                    (_, Some(o)) => Some(Seen {
                        generation: generation(o.raw()),
                        resource_version: o.resource_version().to_owned(),
                    }),
                };
                let changed = match now {
                    Some(s) => entry.insert(context, s.clone()) != Some(s),
                    None => entry.remove(&context).is_some(),
                };
                if changed && self.live.contains(&resource) {
                    self.line(rec.time, rec.context, &resource, key)?;
                }
                Ok(())
            }
            Body::Handler { .. } => Ok(()),
            Body::Synced => {
                self.event(rec)?;
                let synced = self.synced.entry(resource.clone()).or_default();
                synced.insert(context);
                self.release_if_synced(rec.time, rec.context, &resource)
            }
            Body::Event(_) | Body::Observed(_) => self.event(rec),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()?;
        match &mut self.table {
            Some(t) => t.flush(),
            None => Ok(()),
        }
    }

    fn finish(&mut self) -> io::Result<()> {
        self.flush()?;
        match &mut self.table {
            Some(t) => t.finish(),
            None => Ok(()),
        }
    }

    fn diagnostic(&mut self, line: &str) -> io::Result<()> {
        match (&mut self.table, &mut self.diag) {
            (Some(t), _) => t.diagnostic(line),
            (None, Some(d)) => diagnostics::say(d, line),
            (None, None) => Ok(()),
        }
    }

    fn joined(&mut self, resource: &str, context: Option<&ContextName>) -> io::Result<()> {
        let c = context::or_empty(context).to_owned();
        self.gone.remove(&(resource.to_owned(), c.clone()));
        // A context that joins late (it came back, or the kubeconfig gained it): the
        // resource waits for its sync, then shows every key once again, with it.
        if self.expected.insert(c) {
            self.live.remove(resource);
        }
        match &mut self.table {
            Some(t) => t.joined(resource, context),
            None => Ok(()),
        }
    }

    fn left_out(&mut self, resource: &str, context: Option<&ContextName>) -> io::Result<()> {
        let c = context::or_empty(context).to_owned();
        self.gone.insert((resource.to_owned(), c));
        self.release_if_synced(jiff::Timestamp::now(), None, resource)?;
        match &mut self.table {
            Some(t) => t.left_out(resource, context),
            None => Ok(()),
        }
    }
}
