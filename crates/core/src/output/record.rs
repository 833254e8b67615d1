//! The record's one written form: a line of `-o json` and `--record`, a document of
//! `-o yaml`, and what `kwatch replay` reads back (docs/output-schema.md).
//!
//! Field order is the schema's: `type` first (serde's internal tag), `context` right after
//! when present, then the fields in declaration order. Each schema is written once: a
//! reflector event's fields are [`ReflectorEvent`]'s own serde form (in the cache layer),
//! an observation's [`Observation`]'s (each in the part that makes it), spliced after the
//! [`Head`] by [`EventLine`] and [`ObservedLine`]; deltas and handler calls share
//! [`ObjectHead`] and [`Changes`]; `List` and `Synced` share [`InformerLine`].
//!
//! A delta's `object` (and a handler call's `oldObject` and `object`) is not a field
//! here: it is kept as the raw bytes the server sent and written after the other fields
//! by the printer ([`Line::write_json`], [`Line::write_objects`]); replay reads it back
//! separately ([`object_of`], [`objects_of`]), so it is never re-serialised either way.

use std::borrow::Cow;
use std::io::{self, Write};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::cache::delta::{Delta, DeltaType};
use crate::cache::handlers::HandlerCall;
use crate::cache::object::ObjectRef;
use crate::cache::reflector::ReflectorEvent;
use crate::informer::record::{Body, InformerInfo, Observation, Record};

/// One record: what [`Line::of`] makes, [`Line::write_json`] writes and [`Line::parse`]
/// reads back.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Line<'a> {
    /// A delta, Synced or a handler call: `type` is the variant's name ([`Tagged`]).
    Tagged(Tagged<'a>),
    /// A reflector event: `type` and its fields are [`ReflectorEvent`]'s serde form.
    Event(EventLine<'a>),
    /// An observation: `type` and its fields are [`Observation`]'s serde form.
    Observed(ObservedLine<'a>),
}

/// The records whose `type` is serde's tag. Deltas are one variant per delta type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all_fields = "camelCase")]
pub enum Tagged<'a> {
    Added(#[serde(borrow)] DeltaLine<'a>),
    Updated(#[serde(borrow)] DeltaLine<'a>),
    Deleted(#[serde(borrow)] DeltaLine<'a>),
    Replaced(#[serde(borrow)] DeltaLine<'a>),
    Sync(#[serde(borrow)] DeltaLine<'a>),
    Synced {
        #[serde(flatten, borrow)]
        head: Head<'a>,
        #[serde(flatten, borrow)]
        informer: InformerLine<'a>,
    },
    ReplacedAll(#[serde(borrow)] DeltaLine<'a>),
    SyncAll(#[serde(borrow)] DeltaLine<'a>),
    /// A call of the event handler (`--view handlers`).
    HandlerCall(#[serde(borrow)] HandlerLine<'a>),
}

/// A reflector event's record: `type` and the event's fields as [`ReflectorEvent`]
/// serialises itself, with the [`Head`] after `type` and, on `List`, the informer after
/// the event's fields.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventLine<'a> {
    #[serde(flatten, borrow)]
    pub head: Head<'a>,
    #[serde(flatten)]
    pub event: Cow<'a, ReflectorEvent>,
    /// On `List` only; empty on the other events.
    #[serde(flatten, borrow)]
    pub informer: InformerLine<'a>,
}

/// The informer's fields, last on `List` and `Synced` records (see [`InformerInfo`]).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InformerLine<'a> {
    /// `--client-go`'s release; absent without it.
    #[serde(default, skip_serializing_if = "Option::is_none", borrow)]
    pub client_go: Option<Cow<'a, str>>,
    /// The informer's queue; absent from recordings made before it was added.
    #[serde(default, skip_serializing_if = "Option::is_none", borrow)]
    pub queue: Option<Cow<'a, str>>,
}

/// An observation's record: `type` and the observation's fields as [`Observation`]
/// serialises itself, with the [`Head`] after `type`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ObservedLine<'a> {
    #[serde(flatten, borrow)]
    pub head: Head<'a>,
    #[serde(flatten)]
    pub observation: Cow<'a, Observation>,
}

impl Serialize for EventLine<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        spliced(s, &*self.event, &self.head, &self.informer)
    }
}

impl Serialize for ObservedLine<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        spliced(s, &*self.observation, &self.head, &InformerLine::default())
    }
}

/// `tagged`'s own form (an internally tagged enum's) with `head` spliced in after its
/// `type`, and `informer` last (such records are rare: going through a `Value`, whose map
/// keeps its order, costs nothing that shows).
fn spliced<S: serde::Serializer>(
    s: S,
    tagged: &impl Serialize,
    head: &Head<'_>,
    informer: &InformerLine<'_>,
) -> Result<S::Ok, S::Error> {
    use serde::ser::{Error, SerializeMap};
    let mapping = |v| match v {
        Ok(serde_json::Value::Object(m)) => Ok(m),
        Ok(_) => Err(S::Error::custom("a record is not a mapping")),
        Err(e) => Err(S::Error::custom(e)),
    };
    let mut fields = mapping(serde_json::to_value(tagged))?.into_iter();
    let head = mapping(serde_json::to_value(head))?;
    let informer = mapping(serde_json::to_value(informer))?;
    let mut m = s.serialize_map(None)?;
    // `type`, serde's tag, comes first.
    if let Some((k, v)) = fields.next() {
        m.serialize_entry(&k, &v)?;
    }
    for (k, v) in &head {
        m.serialize_entry(k, v)?;
    }
    for (k, v) in fields {
        m.serialize_entry(&k, &v)?;
    }
    for (k, v) in &informer {
        m.serialize_entry(k, v)?;
    }
    m.end()
}

/// What every reflector event and Synced begins with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Head<'a> {
    #[serde(default, skip_serializing_if = "Option::is_none", borrow)]
    pub context: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub resource: Cow<'a, str>,
    #[serde(borrow)]
    pub time: Cow<'a, str>,
}

/// Which object a delta or handler call is about: the fields both records have, in
/// this order, between their `resource` (and a handler call's `handler`) and their
/// resourceVersion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectHead<'a> {
    #[serde(borrow)]
    pub key: Cow<'a, str>,
    /// `null` for a cluster-scoped object.
    #[serde(borrow)]
    pub namespace: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub name: Cow<'a, str>,
    #[serde(borrow)]
    pub kind: Cow<'a, str>,
    #[serde(borrow)]
    pub api_version: Cow<'a, str>,
}

impl<'a> ObjectHead<'a> {
    /// The object of `key` (`namespace/name`, or `name` when cluster-scoped), of
    /// `rec`'s resource.
    fn of(rec: &'a Record<'a>, key: &'a str) -> Self {
        let (namespace, name) = match key.split_once('/') {
            Some((ns, name)) => (Some(Cow::Borrowed(ns)), Cow::Borrowed(name)),
            None => (None, Cow::Borrowed(key)),
        };
        ObjectHead {
            key: Cow::Borrowed(key),
            namespace,
            name,
            kind: Cow::Borrowed(rec.resource.kind.as_str()),
            api_version: Cow::Borrowed(rec.resource.api_version.as_str()),
        }
    }
}

/// A delta's fields, without its object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeltaLine<'a> {
    #[serde(default, skip_serializing_if = "Option::is_none", borrow)]
    pub context: Option<Cow<'a, str>>,
    /// Absent from recordings made before it was added (replay then guesses it).
    #[serde(default, skip_serializing_if = "Option::is_none", borrow)]
    pub resource: Option<Cow<'a, str>>,
    #[serde(flatten, borrow)]
    pub object: ObjectHead<'a>,
    /// `null` for a tombstone without a last known state.
    #[serde(borrow)]
    pub resource_version: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub time: Cow<'a, str>,
    #[serde(default)]
    pub initial_list: bool,
    /// Written only when true (tombstones).
    #[serde(default, skip_serializing_if = "is_false")]
    pub final_state_unknown: bool,
    /// Written only when true: the object's `metadata.uid` differs from the one the store
    /// held under this key (deleted and re-created under that name, unseen).
    #[serde(default, skip_serializing_if = "is_false")]
    pub recreated: bool,
    /// The number of deltas of the pop it came from, when the queue pops in batches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<u32>,
    /// `--follow`, `--events`: the owner path, root first, the object last.
    #[serde(default, skip_serializing_if = "Option::is_none", borrow)]
    pub owner_path: Option<Cow<'a, str>>,
    /// `--follow`: `joined`, `deleted`, `orphaned` or `left`, on the record that changes the
    /// graph.
    #[serde(default, skip_serializing_if = "Option::is_none", borrow)]
    pub graph: Option<Cow<'a, str>>,
    #[serde(flatten)]
    pub changes: Changes,
}

/// `--diff`'s fields, last on delta and handler-call records (OnUpdate only): absent
/// without `--diff`, filled in by the printer for its audience.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Changes {
    /// Whether the object changed from the version kwatch knew (OnUpdate: from the old
    /// object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed: Option<bool>,
    /// When the previous version is known: a JSON patch (`-o json`) or one
    /// `path: old → new` line per change (`-o yaml`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<DiffField>,
    /// `--blame`: each changed path and the managedFields entry that owns it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blame: Option<Vec<crate::informer::blame::Blame>>,
}

impl DeltaLine<'_> {
    /// What serde writes for this delta as a [`Line`] of type `t`, byte for byte
    /// (`fast_path_writes_what_serde_writes`), written field by field: the serde form
    /// costs twice the CPU of the whole JSON printer for a list of small objects
    /// (benches/NOTES.md). Destructured in full, so a new field cannot be forgotten here.
    fn write_json(&self, t: DeltaType, w: &mut Vec<u8>) -> io::Result<()> {
        let DeltaLine {
            context,
            resource,
            object:
                ObjectHead {
                    key,
                    namespace,
                    name,
                    kind,
                    api_version,
                },
            resource_version,
            time,
            initial_list,
            final_state_unknown,
            recreated,
            batch,
            owner_path,
            graph,
            changes,
        } = self;
        w.extend_from_slice(b"{\"type\":\"");
        w.extend_from_slice(t.as_str().as_bytes());
        w.push(b'"');
        let field = |w: &mut Vec<u8>, name: &str, v: Option<&str>| {
            w.extend_from_slice(b",\"");
            w.extend_from_slice(name.as_bytes());
            w.extend_from_slice(b"\":");
            match v {
                Some(v) => json_str(w, v),
                None => {
                    w.extend_from_slice(b"null");
                    Ok(())
                }
            }
        };
        if let Some(c) = context {
            field(w, "context", Some(c))?;
        }
        if let Some(r) = resource {
            field(w, "resource", Some(r))?;
        }
        field(w, "key", Some(key))?;
        field(w, "namespace", namespace.as_deref())?;
        field(w, "name", Some(name))?;
        field(w, "kind", Some(kind))?;
        field(w, "apiVersion", Some(api_version))?;
        field(w, "resourceVersion", resource_version.as_deref())?;
        field(w, "time", Some(time))?;
        w.extend_from_slice(if *initial_list {
            b",\"initialList\":true"
        } else {
            b",\"initialList\":false"
        });
        if *final_state_unknown {
            w.extend_from_slice(b",\"finalStateUnknown\":true");
        }
        if *recreated {
            w.extend_from_slice(b",\"recreated\":true");
        }
        if let Some(n) = batch {
            w.extend_from_slice(b",\"batch\":");
            w.extend_from_slice(n.to_string().as_bytes());
        }
        if let Some(p) = owner_path {
            field(w, "ownerPath", Some(p))?;
        }
        if let Some(g) = graph {
            field(w, "graph", Some(g))?;
        }
        changes.write_json(w)?;
        w.push(b'}');
        Ok(())
    }
}

impl Changes {
    /// [`DeltaLine::write_json`]'s last fields, as serde writes them (destructured in full
    /// for the same reason).
    fn write_json(&self, w: &mut Vec<u8>) -> io::Result<()> {
        let Changes {
            changed,
            diff,
            blame,
        } = self;
        if let Some(c) = changed {
            w.extend_from_slice(if *c {
                b",\"changed\":true"
            } else {
                b",\"changed\":false"
            });
        }
        if let Some(d) = diff {
            w.extend_from_slice(b",\"diff\":");
            serde_json::to_writer(&mut *w, d).map_err(io::Error::other)?;
        }
        if let Some(b) = blame {
            w.extend_from_slice(b",\"blame\":");
            serde_json::to_writer(&mut *w, b).map_err(io::Error::other)?;
        }
        Ok(())
    }
}

/// `s` as a JSON string, escaped exactly as serde_json escapes it.
fn json_str(w: &mut Vec<u8>, s: &str) -> io::Result<()> {
    // serde_json escapes only `"`, `\` and control characters (below 0x20).
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        w.push(b'"');
        w.extend_from_slice(s.as_bytes());
        w.push(b'"');
        return Ok(());
    }
    serde_json::to_writer(w, s).map_err(io::Error::other)
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A handler call's fields, without its objects (`oldObject` for OnUpdate, then
/// `object`: raw, written after these by [`Line::write_objects`]). The fields of one
/// handler only are absent from the others' records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HandlerLine<'a> {
    #[serde(default, skip_serializing_if = "Option::is_none", borrow)]
    pub context: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub resource: Cow<'a, str>,
    pub handler: HandlerName,
    #[serde(flatten, borrow)]
    pub object: ObjectHead<'a>,
    /// OnUpdate: the old object's.
    #[serde(default, skip_serializing_if = "Option::is_none", borrow)]
    pub old_resource_version: Option<Cow<'a, str>>,
    /// The (new) object's; `null` for a tombstone without a last known state.
    #[serde(borrow)]
    pub resource_version: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub time: Cow<'a, str>,
    /// OnAdd: its `isInInitialList` argument.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_in_initial_list: Option<bool>,
    /// OnDelete: whether it got a `DeletedFinalStateUnknown`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_state_unknown: Option<bool>,
    #[serde(flatten)]
    pub changes: Changes,
}

/// Which handler method was called.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum HandlerName {
    OnAdd,
    OnUpdate,
    OnDelete,
}

/// The `diff` field: for programs, or for people.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum DiffField {
    Lines(Vec<String>),
    Patch(json_patch::Patch),
}

impl<'a> Line<'a> {
    /// One line of `-o json` or `--record`, as [`Line::write_json`] wrote it: a `type` no
    /// tagged record takes is a reflector event's, else an observation's. Errors are
    /// serde's for the record the `type` names (a missing field), or name the unknown
    /// `type`.
    pub fn parse(text: &'a str) -> serde_json::Result<Line<'a>> {
        // serde's wording for a tag that no variant takes.
        let unknown = |e: &serde_json::Error| e.to_string().starts_with("unknown variant");
        let tagged = match serde_json::from_str::<Tagged<'a>>(text) {
            Err(e) if unknown(&e) => e,
            tagged => return tagged.map(Line::Tagged),
        };
        let event = match serde_json::from_str::<EventLine<'a>>(text) {
            Err(e) if unknown(&e) => e,
            event => return event.map(Line::Event),
        };
        match serde_json::from_str::<ObservedLine<'a>>(text) {
            Err(e) if unknown(&e) => {
                #[derive(Deserialize)]
                struct Type<'t> {
                    #[serde(borrow, rename = "type")]
                    t: Cow<'t, str>,
                }
                let t = serde_json::from_str::<Type<'_>>(text).map(|t| t.t.into_owned());
                let what = t.map_or_else(|_| format!("{tagged}; {event}"), |t| format!("{t:?}"));
                Err(<serde_json::Error as serde::de::Error>::custom(format!(
                    "unknown record type {what}"
                )))
            }
            observed => observed.map(Line::Observed),
        }
    }

    /// The line for `rec`, without `changed`/`diff` (the printer adds them for its
    /// audience). `time`: `rec.time` as [`crate::text::format_time`] writes it, passed in so
    /// a printer can reuse it across records of the same millisecond.
    pub fn of(rec: &'a Record<'a>, time: &'a str) -> Line<'a> {
        let head = Head {
            context: rec.context.map(|c| Cow::Borrowed(c.as_str())),
            resource: Cow::Borrowed(rec.resource.name.as_str()),
            time: Cow::Borrowed(time),
        };
        let informer = InformerLine {
            client_go: rec.informer.client_go.map(Cow::Borrowed),
            queue: rec.informer.queue.map(Cow::Borrowed),
        };
        match &rec.body {
            Body::Delta {
                key,
                delta,
                initial_list,
                prev,
            } => delta_line(
                delta.kind,
                DeltaLine::of(rec, key, delta, *prev, *initial_list, time),
            ),
            Body::Synced => Line::Tagged(Tagged::Synced { head, informer }),
            // Only a List record carries the informer.
            Body::Event(e) => {
                let list = matches!(e, ReflectorEvent::List { .. });
                Line::Event(EventLine {
                    head,
                    event: Cow::Borrowed(*e),
                    informer: if list {
                        informer
                    } else {
                        InformerLine::default()
                    },
                })
            }
            Body::Observed(o) => Line::Observed(ObservedLine {
                head,
                observation: Cow::Borrowed(*o),
            }),
            Body::Handler { key, call, .. } => {
                Line::Tagged(Tagged::HandlerCall(HandlerLine::of(rec, key, call, time)))
            }
        }
    }

    /// `--diff`'s fields (`changed`, `diff`), on the records that have them.
    pub fn diff_mut(&mut self) -> Option<&mut Changes> {
        match self {
            Line::Tagged(Tagged::HandlerCall(h)) => Some(&mut h.changes),
            _ => self.delta_mut().map(|d| &mut d.changes),
        }
    }

    /// The delta's fields, if this is a delta.
    pub fn delta(&self) -> Option<(DeltaType, &DeltaLine<'a>)> {
        let Line::Tagged(t) = self else {
            return None;
        };
        Some(match t {
            Tagged::Added(d) => (DeltaType::Added, d),
            Tagged::Updated(d) => (DeltaType::Updated, d),
            Tagged::Deleted(d) => (DeltaType::Deleted, d),
            Tagged::Replaced(d) => (DeltaType::Replaced, d),
            Tagged::Sync(d) => (DeltaType::Sync, d),
            Tagged::ReplacedAll(d) => (DeltaType::ReplacedAll, d),
            Tagged::SyncAll(d) => (DeltaType::SyncAll, d),
            _ => return None,
        })
    }

    pub fn delta_mut(&mut self) -> Option<&mut DeltaLine<'a>> {
        let Line::Tagged(t) = self else {
            return None;
        };
        match t {
            Tagged::Added(d)
            | Tagged::Updated(d)
            | Tagged::Deleted(d)
            | Tagged::Replaced(d)
            | Tagged::Sync(d)
            | Tagged::ReplacedAll(d)
            | Tagged::SyncAll(d) => Some(d),
            _ => None,
        }
    }

    /// What the line says of the informer that delivered it (see [`InformerInfo`]).
    pub fn informer(&self) -> InformerInfo<'_> {
        match self {
            Line::Event(EventLine { informer, .. })
            | Line::Tagged(Tagged::Synced { informer, .. }) => InformerInfo {
                client_go: informer.client_go.as_deref(),
                queue: informer.queue.as_deref(),
                batch: None,
            },
            _ => InformerInfo {
                batch: self.delta().and_then(|(_, d)| d.batch),
                ..InformerInfo::default()
            },
        }
    }

    /// The line as JSON, then `object` (raw, as the server sent it) when given, then a
    /// newline. `scratch` is reused across calls to spare an allocation per record.
    pub fn write_json<W: Write>(
        &self,
        w: &mut W,
        object: Option<&str>,
        scratch: &mut Vec<u8>,
    ) -> io::Result<()> {
        self.write_objects(w, &[("object", object)], scratch)
    }

    /// [`Line::write_json`] with several raw objects, each `(field name, JSON)`, in
    /// order; `None`s are left out.
    pub fn write_objects<W: Write>(
        &self,
        w: &mut W,
        objects: &[(&str, Option<&str>)],
        scratch: &mut Vec<u8>,
    ) -> io::Result<()> {
        scratch.clear();
        match self.delta() {
            Some((t, d)) => d.write_json(t, scratch)?,
            None => serde_json::to_writer(&mut *scratch, self).map_err(io::Error::other)?,
        }
        if objects.iter().all(|(_, o)| o.is_none()) {
            w.write_all(scratch)?;
            return w.write_all(b"\n");
        }
        // The line is a JSON object: the object fields go before its last byte, `}`.
        w.write_all(&scratch[..scratch.len() - 1])?;
        for (name, o) in objects {
            if let Some(o) = o {
                w.write_all(b",\"")?;
                w.write_all(name.as_bytes())?;
                w.write_all(b"\":")?;
                w.write_all(o.as_bytes())?;
            }
        }
        w.write_all(b"}\n")
    }
}

impl<'a> DeltaLine<'a> {
    fn of(
        rec: &'a Record<'a>,
        key: &'a str,
        delta: &'a Delta,
        prev: Option<&ObjectRef>,
        initial_list: bool,
        time: &'a str,
    ) -> DeltaLine<'a> {
        DeltaLine {
            context: rec.context.map(|c| Cow::Borrowed(c.as_str())),
            resource: Some(Cow::Borrowed(rec.resource.name.as_str())),
            object: ObjectHead::of(rec, key),
            resource_version: delta
                .object
                .object()
                .map(|o| Cow::Borrowed(o.resource_version())),
            time: Cow::Borrowed(time),
            initial_list,
            final_state_unknown: delta.object.is_tombstone(),
            recreated: recreated(delta, prev),
            batch: rec.informer.batch,
            owner_path: rec.follow.map(|f| Cow::Borrowed(&*f.path)),
            graph: rec
                .follow
                .and_then(|f| f.change)
                .map(|c| Cow::Borrowed(c.as_str())),
            changes: Changes::default(),
        }
    }
}

/// Whether `delta`'s object is another object than `prev`, the store's under its key
/// ([`crate::cache::object::Object::recreated_from`]).
pub fn recreated(delta: &Delta, prev: Option<&ObjectRef>) -> bool {
    matches!((delta.object.object(), prev), (Some(o), Some(p)) if o.recreated_from(p))
}

impl<'a> HandlerLine<'a> {
    fn of(rec: &'a Record<'a>, key: &'a str, call: &'a HandlerCall, time: &'a str) -> Self {
        let rv = |o: Option<&'a crate::cache::object::ObjectRef>| {
            o.map(|o| Cow::Borrowed(o.resource_version()))
        };
        HandlerLine {
            context: rec.context.map(|c| Cow::Borrowed(c.as_str())),
            resource: Cow::Borrowed(rec.resource.name.as_str()),
            handler: match call {
                HandlerCall::OnAdd { .. } => HandlerName::OnAdd,
                HandlerCall::OnUpdate { .. } => HandlerName::OnUpdate,
                HandlerCall::OnDelete { .. } => HandlerName::OnDelete,
            },
            object: ObjectHead::of(rec, key),
            old_resource_version: rv(call.old()),
            resource_version: rv(call.object()),
            time: Cow::Borrowed(time),
            is_in_initial_list: match call {
                HandlerCall::OnAdd {
                    is_in_initial_list, ..
                } => Some(*is_in_initial_list),
                _ => None,
            },
            final_state_unknown: match call {
                HandlerCall::OnDelete { .. } => Some(call.final_state_unknown()),
                _ => None,
            },
            changes: Changes::default(),
        }
    }
}

/// The record of a delta of type `t`.
fn delta_line(t: DeltaType, d: DeltaLine<'_>) -> Line<'_> {
    Line::Tagged(match t {
        DeltaType::Added => Tagged::Added(d),
        DeltaType::Updated => Tagged::Updated(d),
        DeltaType::Deleted => Tagged::Deleted(d),
        DeltaType::Replaced => Tagged::Replaced(d),
        DeltaType::Sync => Tagged::Sync(d),
        DeltaType::ReplacedAll => Tagged::ReplacedAll(d),
        DeltaType::SyncAll => Tagged::SyncAll(d),
    })
}

/// The raw `object` of a JSON line, as written (never re-serialised: replay gives a
/// recording back byte for byte).
pub fn object_of(text: &str) -> serde_json::Result<Option<&RawValue>> {
    objects_of(text).map(|(_, o)| o)
}

/// The raw `oldObject` and `object` of a JSON line, as written.
pub fn objects_of(text: &str) -> serde_json::Result<(Option<&RawValue>, Option<&RawValue>)> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Objects<'a> {
        #[serde(borrow, default)]
        old_object: Option<&'a RawValue>,
        #[serde(borrow, default)]
        object: Option<&'a RawValue>,
    }
    serde_json::from_str::<Objects<'_>>(text).map(|o| (o.old_object, o.object))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::cache::delta::{DeltaObject, Tombstone};
    use crate::cache::retry::{Retry, Verb};
    use crate::cache::testutil::object;
    use crate::client::target::Resource;
    use crate::context::ContextName;
    use crate::informer::conflict::Conflict;
    use crate::informer::freshness::{Lag, Latency};

    fn events() -> Vec<ReflectorEvent> {
        let s = |x: &str| x.to_owned();
        vec![
            ReflectorEvent::list("0", 500, "initial", true),
            ReflectorEvent::listed("10", 3, "json+gzip", 412_345)
                .paged(2, true)
                .took(Duration::from_millis(12))
                .wire_bytes(31_234),
            ReflectorEvent::Watch {
                resource_version: s("10"),
                timeout_seconds: 347,
            },
            ReflectorEvent::WatchEnded {
                reason: s("410 \"Expired\"\u{1b}"),
                events: 7,
                bookmarks: 3,
                elapsed: Duration::from_millis(2699),
                error: true,
            },
            ReflectorEvent::Bookmark {
                resource_version: s("12"),
            },
            ReflectorEvent::Stalled {
                silent: Duration::from_millis(30_001),
                watch_age: Duration::from_millis(95_000),
                resource_version: s("12"),
                restart: true,
            },
            ReflectorEvent::Backoff {
                delay: Duration::from_millis(800),
                cause: s("refused"),
            },
            ReflectorEvent::Resync,
            ReflectorEvent::WatchListFallback { error: s("no") },
            ReflectorEvent::Retry(Retry {
                verb: Verb::List,
                code: Some(429),
                reason: s("TooManyRequests"),
                delay: Duration::from_secs(2),
                attempt: 1,
                max_retries: 10,
            }),
            ReflectorEvent::Retry(Retry {
                verb: Verb::Watch,
                code: None,
                reason: s("reset"),
                delay: Duration::from_secs(1),
                attempt: 10,
                max_retries: 10,
            }),
            ReflectorEvent::TimeTravel {
                request: s("list ?resourceVersion=12"),
                resource_version: s("8"),
                held: s("12"),
            },
            ReflectorEvent::OpaqueResourceVersion {
                resource_version: s("etcd\u{1b}:a1"),
            },
            ReflectorEvent::Protocol {
                problem: s("no-end-bookmark"),
                message: s("the streaming list has sent 3 initial events"),
            },
        ]
    }

    fn observations() -> Vec<Observation> {
        let s = |x: &str| x.to_owned();
        vec![
            Observation::Consistency(crate::cache::consistency::Report {
                resource_version: s("42"),
                consistent: Some(false),
                objects: 3,
                missing: vec![s("d/m")],
                extra: vec![s("d/x"), s("d/y")],
                stale: vec![s("d/\u{1b}k")],
                compacted: false,
                error: None,
            }),
            Observation::Consistency(crate::cache::consistency::Report {
                resource_version: s("7"),
                consistent: None,
                objects: 0,
                compacted: true,
                error: Some(s(
                    "410 Expired: The resourceVersion for the provided list is too old.",
                )),
                ..Default::default()
            }),
            Observation::Latency(Latency {
                probe: s("default/kwatch-probe-7f3k2"),
                seq: 12,
                sent: s("2026-11-23T10:00:01.123456789Z"),
                latency: Duration::from_micros(203_117),
            }),
            Observation::Freshness(Lag {
                lag: Duration::from_micros(1_500_250),
                server_resource_version: s("20"),
                store_resource_version: s("18"),
                recovered: true,
            }),
            Observation::Stale(Lag {
                lag: Duration::from_secs(5),
                server_resource_version: s("20"),
                store_resource_version: s("12"),
                recovered: false,
            }),
            Observation::CacheStats(crate::cache::cost::CacheCost {
                objects: 2,
                bytes: 900,
                fields: [(s("metadata.managedFields"), 400), (s("spec"), 300)]
                    .into_iter()
                    .collect(),
                relist_peak_bytes: 1800,
            }),
            Observation::Conflict(Conflict {
                key: s("default/shop"),
                path: s("spec.template.spec.containers[name=app].image"),
                managers: vec![s("a"), s("b")],
                flips: 3,
                window_seconds: 60,
            }),
        ]
    }

    #[test]
    fn every_reflector_event_reads_back_as_the_event_it_was() {
        let r = Resource::pods();
        for context in [None, Some("prod")] {
            let name = context.map(ContextName::from);
            for e in events() {
                let rec = Record::new(
                    &r,
                    name.as_ref(),
                    jiff::Timestamp::UNIX_EPOCH,
                    Body::Event(&e),
                );
                let line = Line::of(&rec, "1970-01-01T00:00:00.000Z");
                let text = serde_json::to_string(&line).unwrap();
                let back = Line::parse(&text).unwrap();
                assert_eq!(back, line, "{text}");
                let Line::Event(EventLine { head, event, .. }) = &back else {
                    panic!("not an event: {text}");
                };
                assert_eq!(**event, e, "{text}");
                assert_eq!(head.resource, "pods");
                assert_eq!(head.context.as_deref(), context);
                // `type` first, then `context` when present, then `resource` and `time`.
                let v: serde_json::Value = serde_json::from_str(&text).unwrap();
                let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
                let head_keys: &[&str] = match context {
                    Some(_) => &["type", "context", "resource", "time"],
                    None => &["type", "resource", "time"],
                };
                assert_eq!(&keys[..head_keys.len()], head_keys, "{text}");
            }
        }
    }

    #[test]
    fn every_observation_reads_back_as_the_observation_it_was() {
        let r = Resource::pods();
        for context in [None, Some("prod")] {
            let name = context.map(ContextName::from);
            for o in observations() {
                let rec = Record::new(
                    &r,
                    name.as_ref(),
                    jiff::Timestamp::UNIX_EPOCH,
                    Body::Observed(&o),
                );
                let line = Line::of(&rec, "1970-01-01T00:00:00.000Z");
                let text = serde_json::to_string(&line).unwrap();
                let back = Line::parse(&text).unwrap();
                assert_eq!(back, line, "{text}");
                let Line::Observed(ObservedLine { head, observation }) = &back else {
                    panic!("not an observation: {text}");
                };
                assert_eq!(**observation, o, "{text}");
                assert_eq!(head.context.as_deref(), context);
                let v: serde_json::Value = serde_json::from_str(&text).unwrap();
                let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
                let head_keys: &[&str] = match context {
                    Some(_) => &["type", "context", "resource", "time"],
                    None => &["type", "resource", "time"],
                };
                assert_eq!(&keys[..head_keys.len()], head_keys, "{text}");
            }
        }
    }

    #[test]
    fn a_record_of_an_unknown_type_is_refused_naming_it() {
        let text = r#"{"type":"Nonsense","resource":"pods","time":"1970-01-01T00:00:00.000Z"}"#;
        let e = Line::parse(text).unwrap_err().to_string();
        assert_eq!(e, r#"unknown record type "Nonsense""#);
    }

    #[test]
    fn fast_path_writes_what_serde_writes() {
        let odd = "q\"b\\c\u{1}\n\u{7f}é😀";
        let patch: json_patch::Patch =
            serde_json::from_str(r#"[{"op":"replace","path":"/a","value":"x\"y"}]"#).unwrap();
        let mut lines = Vec::new();
        for (i, t) in DeltaType::ALL.into_iter().enumerate() {
            for text in ["plain", odd] {
                let c = |s: &'static str| Cow::Borrowed(s);
                let text: &'static str = text;
                let d = DeltaLine {
                    context: (i % 2 == 0).then(|| c(text)),
                    resource: (i != 3).then(|| c("pods")),
                    object: ObjectHead {
                        key: c(text),
                        namespace: (i % 3 != 0).then(|| c(text)),
                        name: c(text),
                        kind: c("Pod"),
                        api_version: c(text),
                    },
                    resource_version: (i != 2).then(|| c("42")),
                    time: c("1970-01-01T00:00:00.000Z"),
                    initial_list: i % 2 == 1,
                    final_state_unknown: i == 2,
                    recreated: i == 4,
                    batch: (i > 3).then_some(1000 + i as u32),
                    owner_path: (i % 2 == 0).then(|| c(text)),
                    graph: (i == 1).then(|| c("orphaned")),
                    changes: Changes {
                        changed: [None, Some(true), Some(false)][i % 3],
                        diff: match i % 3 {
                            0 => None,
                            1 => Some(DiffField::Patch(patch.clone())),
                            _ => Some(DiffField::Lines(vec![odd.to_owned()])),
                        },
                        blame: (i % 2 == 1).then(|| {
                            vec![crate::informer::blame::Blame {
                                path: odd.to_owned(),
                                manager: (i % 3 == 0).then(|| c(text).into_owned()),
                                operation: Some("Apply".into()),
                                subresource: (i == 3).then(|| "status".into()),
                                time: None,
                                unowned: i % 3 != 0,
                            }]
                        }),
                    },
                };
                lines.push((t, d));
            }
        }
        for (t, d) in lines {
            let mut fast = Vec::new();
            d.write_json(t, &mut fast).unwrap();
            let line = delta_line(t, d);
            let serde = serde_json::to_vec(&line).unwrap();
            assert_eq!(
                String::from_utf8(fast).unwrap(),
                String::from_utf8(serde).unwrap()
            );
        }
    }

    #[test]
    fn every_delta_reads_back_with_its_type_and_object() {
        let r = Resource::pods();
        let obj =
            object(r#"{"metadata":{"name":"a","namespace":"d","resourceVersion":"4"},"x":1.50}"#);
        let tomb = |obj| {
            DeltaObject::Tombstone(Tombstone {
                key: "d/a".into(),
                obj,
            })
        };
        let mut deltas: Vec<Delta> = DeltaType::ALL
            .into_iter()
            .map(|t| Delta::new(t, obj.clone()))
            .collect();
        for o in [None, Some(obj.clone())] {
            deltas.push(Delta {
                kind: DeltaType::Deleted,
                object: tomb(o),
            });
        }
        let c = ContextName::from("c");
        for d in &deltas {
            let rec = Record::new(
                &r,
                Some(&c),
                jiff::Timestamp::UNIX_EPOCH,
                Body::Delta {
                    key: "d/a",
                    delta: d,
                    initial_list: true,
                    prev: None,
                },
            );
            let line = Line::of(&rec, "t");
            let mut out = Vec::new();
            line.write_json(
                &mut out,
                d.object.object().map(|o| o.raw()),
                &mut Vec::new(),
            )
            .unwrap();
            let text = String::from_utf8(out).unwrap();
            assert!(text.ends_with("}\n"), "{text}");
            let back = Line::parse(&text).unwrap();
            assert_eq!(back, line, "{text}");
            let (t, f) = back.delta().unwrap();
            assert_eq!(t, d.kind);
            assert_eq!(f.resource.as_deref(), Some("pods"));
            assert_eq!(f.final_state_unknown, d.object.is_tombstone());
            // The object comes back as the bytes written (`1.50` is not re-serialised).
            let raw = object_of(&text).unwrap().map(|o| o.get().to_owned());
            assert_eq!(raw.as_deref(), d.object.object().map(|o| o.raw()), "{text}");
        }
    }

    #[test]
    fn the_informer_is_on_list_and_synced_and_the_batch_on_deltas() {
        let r = Resource::pods();
        let list = ReflectorEvent::list("0", 0, "initial", true);
        let obj = object(r#"{"metadata":{"name":"a","namespace":"d","resourceVersion":"4"}}"#);
        let delta = Delta::new(DeltaType::ReplacedAll, obj);
        let informer = InformerInfo {
            client_go: Some("0.36"),
            queue: Some("RealFIFO+batch+atomic"),
            batch: Some(1),
        };
        let bodies = [
            Body::Event(&list),
            Body::Synced,
            Body::Delta {
                key: "d/a",
                delta: &delta,
                initial_list: true,
                prev: None,
            },
        ];
        let mut texts = Vec::new();
        for body in bodies {
            let rec = Record {
                resource: &r,
                context: None,
                time: jiff::Timestamp::UNIX_EPOCH,
                body,
                informer,
                blame: Default::default(),
                follow: None,
            };
            let line = Line::of(&rec, "t");
            let text = serde_json::to_string(&line).unwrap();
            let back = Line::parse(&text).unwrap();
            assert_eq!(back, line, "{text}");
            // Each line keeps what it carries of the informer, and only that.
            let want = match body {
                Body::Delta { .. } => InformerInfo {
                    batch: Some(1),
                    ..InformerInfo::default()
                },
                _ => InformerInfo {
                    batch: None,
                    ..informer
                },
            };
            assert_eq!(back.informer(), want, "{text}");
            texts.push(text.clone());
        }
        assert!(
            texts[0].ends_with(
                r#""streaming":true,"clientGo":"0.36","queue":"RealFIFO+batch+atomic"}"#
            ),
            "{}",
            texts[0]
        );
        assert_eq!(
            texts[1],
            r#"{"type":"Synced","resource":"pods","time":"t","clientGo":"0.36","queue":"RealFIFO+batch+atomic"}"#
        );
        assert!(
            texts[2].starts_with(r#"{"type":"ReplacedAll","resource":"pods","key":"d/a""#)
                && texts[2].ends_with(r#""initialList":true,"batch":1}"#),
            "{}",
            texts[2]
        );
    }

    #[test]
    fn every_handler_call_reads_back_with_its_fields_and_objects() {
        let r = Resource::pods();
        let obj = |rv: &str| {
            object(&format!(
                r#"{{"metadata":{{"name":"a","namespace":"d","resourceVersion":"{rv}"}},"x":1.50}}"#
            ))
        };
        let tomb = |obj| {
            DeltaObject::Tombstone(Tombstone {
                key: "d/a".into(),
                obj,
            })
        };
        let calls = [
            HandlerCall::OnAdd {
                obj: obj("4"),
                is_in_initial_list: true,
            },
            HandlerCall::OnUpdate {
                old: obj("4"),
                new: obj("5"),
            },
            HandlerCall::OnDelete {
                obj: DeltaObject::Object(obj("5")),
            },
            HandlerCall::OnDelete {
                obj: tomb(Some(obj("5"))),
            },
            HandlerCall::OnDelete { obj: tomb(None) },
        ];
        // (handler, the fields only some handlers have)
        let want: [(&str, &[&str]); 5] = [
            ("OnAdd", &["isInInitialList"]),
            ("OnUpdate", &["oldResourceVersion", "oldObject"]),
            ("OnDelete", &["finalStateUnknown"]),
            ("OnDelete", &["finalStateUnknown"]),
            ("OnDelete", &["finalStateUnknown"]),
        ];
        for (call, (handler, own)) in calls.iter().zip(want) {
            let rec = Record {
                resource: &r,
                context: None,
                time: jiff::Timestamp::UNIX_EPOCH,
                informer: InformerInfo::default(),
                body: Body::Handler {
                    key: "d/a",
                    call,
                    initial_list: false,
                },
                blame: Default::default(),
                follow: None,
            };
            let line = Line::of(&rec, "t");
            let mut out = Vec::new();
            let objects = [
                ("oldObject", call.old().map(|o| o.raw())),
                ("object", call.object().map(|o| o.raw())),
            ];
            line.write_objects(&mut out, &objects, &mut Vec::new())
                .unwrap();
            let text = String::from_utf8(out).unwrap();
            let back = Line::parse(&text).unwrap();
            assert_eq!(back, line, "{text}");
            let v: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(v["type"], "HandlerCall", "{text}");
            assert_eq!(v["handler"], handler, "{text}");
            for f in [
                "isInInitialList",
                "oldResourceVersion",
                "oldObject",
                "finalStateUnknown",
            ] {
                assert_eq!(v.get(f).is_some(), own.contains(&f), "{f}: {text}");
            }
            assert_eq!(v["finalStateUnknown"] == true, call.final_state_unknown());
            let (old, new) = objects_of(&text).unwrap();
            assert_eq!(old.map(|o| o.get()), call.old().map(|o| o.raw()), "{text}");
            assert_eq!(
                new.map(|o| o.get()),
                call.object().map(|o| o.raw()),
                "{text}"
            );
            // `object` is the last field.
            if call.object().is_some() {
                assert!(text.trim_end().ends_with(r#""x":1.50}}"#), "{text}");
            }
        }
    }
}
