//! The pod printer and [`PodView`], the fields of a pod its cells read: parsed typed from
//! the raw bytes when the object allows it (the fast path), else read from the whole
//! object as a [`Value`] ([`PodView::from_value`]); both give the same cells.

use std::borrow::Cow;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use super::format::{age, Labels};

mod read;

/// The columns of a pod row that read past metadata.creationTimestamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PodColumn {
    Ready,
    Status,
    Restarts,
    Ip,
    Node,
    Nominated,
    ReadinessGates,
}

impl PodColumn {
    /// The cell of a pod: the one place where kubectl's pod printing rules live, for
    /// both the typed parse and the [`Value`] ([`PodView::from_value`]).
    pub(super) fn cell(self, p: &PodView<'_>, now: jiff::Timestamp) -> String {
        match self {
            PodColumn::Ready => p.ready(),
            PodColumn::Status => p.status(),
            PodColumn::Restarts => p.restarts(now),
            PodColumn::Ip => none_str(p.status.as_ref().and_then(|s| s.pod_ip.as_deref())),
            PodColumn::Node => none_str(p.spec.as_ref().and_then(|s| s.node_name.as_deref())),
            PodColumn::Nominated => none_str(
                p.status
                    .as_ref()
                    .and_then(|s| s.nominated_node_name.as_deref()),
            ),
            PodColumn::ReadinessGates => p.readiness_gates(),
        }
    }
}

/// The fields of a pod that the pod columns and `-L`/`--show-labels` read, parsed without
/// building the rest. Each field has the one JSON type on which the typed and the
/// [`Value`] readings of it agree (string, integer that fits i64, bool, object, array, or
/// null/absent); any other type, a repeated key (except within labels, see [`Labels`]) or
/// a string with escapes fails the parse, so the row falls back to the [`Value`] and
/// reads it through [`PodView::from_value`].
/// One difference remains: an object nested deeper than serde_json's limit for a
/// [`Value`] (128) has no [`Value`] (its cells are those of no object), while the skipped
/// parts of a [`PodView`] have no depth limit.
#[derive(Debug, Deserialize)]
pub struct PodView<'a> {
    #[serde(borrow, default)]
    metadata: Option<Obj<PodMeta<'a>>>,
    #[serde(borrow, default)]
    spec: Option<Obj<PodSpec<'a>>>,
    #[serde(borrow, default)]
    status: Option<Obj<PodStatus<'a>>>,
}

/// The members of `metadata`, `spec` and `status` a [`PodView`] reads: the serde names of
/// [`PodMeta`], [`PodSpec`] and [`PodStatus`] (a field added there is added here; the
/// columns' tests compare the cells of both ways).
const READ: [(&str, &[&str]); 3] = [
    ("metadata", &["deletionTimestamp", "labels"]),
    (
        "spec",
        &["containers", "initContainers", "nodeName", "readinessGates"],
    ),
    (
        "status",
        &[
            "reason",
            "phase",
            "podIP",
            "nominatedNodeName",
            "conditions",
            "initContainerStatuses",
            "containerStatuses",
        ],
    ),
];

/// Into `out`, the object `raw` (valid JSON) with only what a [`PodView`] reads: the
/// members of [`READ`], copied as they are; every other member is skipped by counting
/// brackets ([`crate::scan::skip_valid`]), not read by serde (managedFields alone are often
/// half a pod). serde's view of the copy is its view of the whole, as it ignores every
/// other member: a field written twice is still twice. `false` where a key has an escape
/// (its text is not its name): then `out` is left to be ignored.
pub fn project(raw: &str, out: &mut String) -> bool {
    use crate::scan::{each_member, skip_valid, skip_ws};
    let b = raw.as_bytes();
    out.clear();
    out.push('{');
    let mut first = true;
    let walked = each_member(b, skip_ws(b, 0), |key, at| {
        let Some((_, keep)) = READ.iter().find(|(k, _)| k.as_bytes() == key) else {
            return skip_valid(b, at);
        };
        if !first {
            out.push(',');
        }
        first = false;
        let key_start = key.as_ptr() as usize - b.as_ptr() as usize - 1;
        if b[at] != b'{' {
            let end = skip_valid(b, at)?;
            out.push_str(raw.get(key_start..end)?);
            return Some(end);
        }
        out.push_str(raw.get(key_start..=at)?);
        // Walked once: the object ends after its last member's value (or its `{`).
        let mut last = at + 1;
        let mut inner_first = true;
        each_member(b, at, |k, at| {
            let end = skip_valid(b, at)?;
            if keep.iter().any(|n| n.as_bytes() == k) {
                if !inner_first {
                    out.push(',');
                }
                inner_first = false;
                let k_start = k.as_ptr() as usize - b.as_ptr() as usize - 1;
                out.push_str(raw.get(k_start..end)?);
            }
            last = end;
            Some(end)
        })?;
        out.push('}');
        let close = skip_ws(b, last);
        (b.get(close) == Some(&b'}')).then_some(close + 1)
    });
    out.push('}');
    walked.is_some()
}

impl<'a> PodView<'a> {
    /// `None` when `raw` does not have the types [`PodView`] expects.
    pub fn parse(raw: &'a str) -> Option<PodView<'a>> {
        serde_json::from_str::<Obj<PodView<'a>>>(raw)
            .ok()
            .map(|o| o.0)
    }

    pub(super) fn labels(&self) -> Option<&Labels<'a>> {
        self.metadata.as_ref()?.labels.as_ref()
    }

    fn container_statuses(&self) -> Option<&[Obj<ContainerStatus<'a>>]> {
        self.status.as_ref()?.container_statuses.as_deref()
    }

    /// READY: ready containers of the spec's containers (of the statuses without a spec).
    /// A sidecar (an init container with `restartPolicy: Always`) counts among them
    /// (printers.go `printPod`: `isRestartableInitContainer` → `totalContainers++`).
    fn ready(&self) -> String {
        let spec = self.spec.as_ref();
        let sidecars = spec
            .and_then(|s| s.init_containers.as_ref())
            .map_or(0, |l| l.sidecars as usize);
        let total = spec.and_then(|s| s.containers.as_ref()).map_or(0, |l| l.0) + sidecars;
        let statuses = self.container_statuses();
        let total = if total == 0 {
            statuses.map_or(0, <[_]>::len)
        } else {
            total
        };
        let ready = statuses.map_or(0, |s| s.iter().filter(|c| c.ready == Some(true)).count());
        format!("{ready}/{total}")
    }

    /// kubectl's pod STATUS (printPod, simplified): init container progress, the waiting or
    /// terminated reason of a container, Terminating, else the phase.
    fn status(&self) -> String {
        let st = self.status.as_ref();
        let st_reason = st.and_then(|s| s.reason);
        let mut reason = st_reason
            .or_else(|| st.and_then(|s| s.phase))
            .unwrap_or("Unknown")
            .to_owned();
        let inits = st.and_then(|s| s.init_container_statuses.as_deref());
        let n_inits = self
            .spec
            .as_ref()
            .and_then(|s| s.init_containers.as_ref())
            .map_or(inits.map_or(0, <[_]>::len), |l| l.len as usize);
        let mut initializing = false;
        for (i, c) in inits.into_iter().flatten().enumerate() {
            let term = c.terminated();
            if term.is_some_and(|t| t.exit_code == Some(0)) {
                continue;
            }
            initializing = true;
            reason = if let Some(t) = term {
                match t.reason {
                    Some(r) if !r.is_empty() => format!("Init:{r}"),
                    _ => format!("Init:ExitCode:{}", t.exit_code.unwrap_or(0)),
                }
            } else if let Some(r) = c.waiting_reason().filter(|r| *r != "PodInitializing") {
                format!("Init:{r}")
            } else {
                format!("Init:{i}/{n_inits}")
            };
            break;
        }
        if !initializing {
            let mut has_running = false;
            for c in self.container_statuses().into_iter().flatten().rev() {
                let term = c.terminated();
                if let Some(r) = c.waiting_reason() {
                    reason = r.to_owned();
                } else if let Some(r) = term.and_then(|t| t.reason) {
                    reason = r.to_owned();
                } else if let Some(t) = term {
                    reason = format!("ExitCode:{}", t.exit_code.unwrap_or(0));
                } else if c.ready == Some(true)
                    && c.state.as_ref().is_some_and(|s| s.running.is_some())
                {
                    has_running = true;
                }
            }
            if reason == "Completed" && has_running {
                reason = "Running".into();
            }
        }
        let deleting = self
            .metadata
            .as_ref()
            .is_some_and(|m| m.deletion_timestamp.is_some());
        if deleting {
            reason = if st_reason == Some("NodeLost") {
                "Unknown".into()
            } else {
                "Terminating".into()
            };
        }
        reason
    }

    /// printers.go's READINESS GATES: `true/total` over the gates, a gate counting when
    /// the first condition of its type has status True; `<none>` without gates.
    fn readiness_gates(&self) -> String {
        let gates = self
            .spec
            .as_ref()
            .and_then(|s| s.readiness_gates.as_deref());
        let Some(gates) = gates.filter(|g| !g.is_empty()) else {
            return "<none>".into();
        };
        let conds = self.status.as_ref().and_then(|s| s.conditions.as_deref());
        let ready = gates
            .iter()
            .filter(|g| {
                let want = g.condition_type.unwrap_or_default();
                conds
                    .into_iter()
                    .flatten()
                    .find(|c| c.type_.unwrap_or_default() == want)
                    .is_some_and(|c| c.status == Some("True"))
            })
            .count();
        format!("{ready}/{}", gates.len())
    }

    /// RESTARTS: the sum of restarts, with how long ago the last one ended, as kubectl
    /// prints it.
    fn restarts(&self, now: jiff::Timestamp) -> String {
        let mut n = 0;
        let mut last: Option<jiff::Timestamp> = None;
        for c in self.container_statuses().into_iter().flatten() {
            n = c.restart_count.unwrap_or(0).saturating_add(n);
            let t = c
                .last_state
                .as_ref()
                .and_then(|l| l.terminated.as_ref())
                .and_then(|t| t.finished_at)
                .and_then(|s| s.parse::<jiff::Timestamp>().ok());
            if t > last {
                last = t;
            }
        }
        match last {
            Some(t) if n > 0 => format!("{n} ({} ago)", age(Some(&t.to_string()), now)),
            _ => n.to_string(),
        }
    }
}

/// [`none`] of a string field.
fn none_str(s: Option<&str>) -> String {
    match s {
        Some(s) if !s.is_empty() => s.to_owned(),
        _ => "<none>".into(),
    }
}

#[derive(Debug, Deserialize)]
struct PodMeta<'a> {
    #[serde(borrow, default, rename = "deletionTimestamp")]
    deletion_timestamp: Option<&'a str>,
    #[serde(borrow, default)]
    labels: Option<Labels<'a>>,
}

#[derive(Debug, Deserialize)]
struct PodSpec<'a> {
    #[serde(default)]
    containers: Option<Len>,
    #[serde(default, rename = "initContainers")]
    init_containers: Option<Inits>,
    #[serde(borrow, default, rename = "nodeName")]
    node_name: Option<Text<'a>>,
    #[serde(borrow, default, rename = "readinessGates")]
    readiness_gates: Option<Vec<Obj<ReadinessGate<'a>>>>,
}

#[derive(Debug, Deserialize)]
struct InitContainer<'a> {
    #[serde(borrow, default, rename = "restartPolicy")]
    restart_policy: Option<&'a str>,
}

/// The init containers: how many, and how many are sidecars (`restartPolicy: Always`).
/// Each must be an object, as the other arrays of the view. u32 counts (saturating) keep
/// [`PodView`] as small as a [`RowObject`](super::RowObject) needs it.
#[derive(Debug)]
struct Inits {
    len: u32,
    sidecars: u32,
}

impl Inits {
    fn of<'a>(containers: impl Iterator<Item = InitContainer<'a>>) -> Inits {
        let mut inits = Inits {
            len: 0,
            sidecars: 0,
        };
        for c in containers {
            inits.len = inits.len.saturating_add(1);
            let sidecar = c.restart_policy == Some("Always");
            inits.sidecars = inits.sidecars.saturating_add(u32::from(sidecar));
        }
        inits
    }
}

impl<'de> Deserialize<'de> for Inits {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::<Obj<InitContainer<'de>>>::deserialize(d)
            .map(|v| Inits::of(v.into_iter().map(|c| c.0)))
    }
}

#[derive(Debug, Deserialize)]
struct ReadinessGate<'a> {
    #[serde(borrow, default, rename = "conditionType")]
    condition_type: Option<&'a str>,
}

#[derive(Debug, Deserialize)]
struct PodCondition<'a> {
    #[serde(borrow, default, rename = "type")]
    type_: Option<&'a str>,
    #[serde(borrow, default)]
    status: Option<&'a str>,
}

#[derive(Debug, Deserialize)]
struct PodStatus<'a> {
    #[serde(borrow, default)]
    reason: Option<&'a str>,
    #[serde(borrow, default)]
    phase: Option<&'a str>,
    #[serde(borrow, default, rename = "podIP")]
    pod_ip: Option<Text<'a>>,
    #[serde(borrow, default, rename = "nominatedNodeName")]
    nominated_node_name: Option<Text<'a>>,
    #[serde(borrow, default)]
    conditions: Option<Vec<Obj<PodCondition<'a>>>>,
    #[serde(borrow, default, rename = "initContainerStatuses")]
    init_container_statuses: Option<Vec<Obj<ContainerStatus<'a>>>>,
    #[serde(borrow, default, rename = "containerStatuses")]
    container_statuses: Option<Vec<Obj<ContainerStatus<'a>>>>,
}

#[derive(Debug, Deserialize)]
struct ContainerStatus<'a> {
    #[serde(default)]
    ready: Option<bool>,
    #[serde(default, rename = "restartCount")]
    restart_count: Option<i64>,
    #[serde(borrow, default)]
    state: Option<Obj<State<'a>>>,
    #[serde(borrow, default, rename = "lastState")]
    last_state: Option<Obj<LastState<'a>>>,
}

impl<'a> ContainerStatus<'a> {
    fn terminated(&self) -> Option<&Terminated<'a>> {
        self.state.as_ref()?.terminated.as_deref()
    }

    fn waiting_reason(&self) -> Option<&'a str> {
        self.state.as_ref()?.waiting.as_ref()?.reason
    }
}

#[derive(Debug, Deserialize)]
struct State<'a> {
    #[serde(borrow, default)]
    waiting: Option<Obj<Waiting<'a>>>,
    #[serde(borrow, default)]
    terminated: Option<Obj<Terminated<'a>>>,
    #[serde(default)]
    running: Option<Obj<IgnoredAny>>,
}

#[derive(Debug, Deserialize)]
struct LastState<'a> {
    #[serde(borrow, default)]
    terminated: Option<Obj<Terminated<'a>>>,
}

#[derive(Debug, Deserialize)]
struct Waiting<'a> {
    #[serde(borrow, default)]
    reason: Option<&'a str>,
}

#[derive(Debug, Deserialize)]
struct Terminated<'a> {
    #[serde(borrow, default)]
    reason: Option<&'a str>,
    #[serde(default, rename = "exitCode")]
    exit_code: Option<i64>,
    #[serde(borrow, default, rename = "finishedAt")]
    finished_at: Option<&'a str>,
}

/// A string cell that [`none_str`] prints. Parsed, it is the JSON string (borrowed, so a
/// string with escapes fails the typed parse); from a [`Value`] of another type, it is
/// that value's JSON text, as kubectl's printer prints any value there.
#[derive(Debug)]
struct Text<'a>(Cow<'a, str>);

impl std::ops::Deref for Text<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <&'de str>::deserialize(d).map(|s| Text(Cow::Borrowed(s)))
    }
}

impl<'a> Text<'a> {
    pub(super) fn from_value(v: &'a Value) -> Option<Text<'a>> {
        match v {
            Value::Null => None,
            Value::String(s) => Some(Text(Cow::Borrowed(s))),
            other => Some(Text(Cow::Owned(other.to_string()))),
        }
    }
}

/// `v` read by `f` when it is a JSON object (absent otherwise, as indexing a [`Value`]
/// that is not an object finds nothing).
fn object<'a, T>(v: &'a Value, f: impl FnOnce(&'a Value) -> T) -> Option<Obj<T>> {
    v.is_object().then(|| Obj(f(v)))
}

/// Each element of the array `v` read by `f`. An element that is not an object reads as
/// one with no fields, as indexing it finds nothing.
fn array<'a, T>(v: &'a Value, f: impl Fn(&'a Value) -> T) -> Option<Vec<Obj<T>>> {
    v.as_array().map(|a| a.iter().map(|x| Obj(f(x))).collect())
}

impl<'a> PodView<'a> {
    /// The view of an object already parsed into a [`Value`] (the typed parse refused it,
    /// or no object was parsed): a field of its expected type reads as the typed parse
    /// reads it, a field of another type as absent (a [`Text`] keeps its JSON text). So
    /// the pod rules above serve both paths.
    pub fn from_value(v: &'a Value) -> PodView<'a> {
        PodView {
            metadata: object(&v["metadata"], |m| PodMeta {
                deletion_timestamp: m["deletionTimestamp"].as_str(),
                labels: Labels::from_value(&m["labels"]),
            }),
            spec: object(&v["spec"], |s| PodSpec {
                containers: s["containers"].as_array().map(|a| Len(a.len())),
                init_containers: s["initContainers"].as_array().map(|a| {
                    Inits::of(a.iter().map(|c| InitContainer {
                        restart_policy: c["restartPolicy"].as_str(),
                    }))
                }),
                node_name: Text::from_value(&s["nodeName"]),
                readiness_gates: array(&s["readinessGates"], |g| ReadinessGate {
                    condition_type: g["conditionType"].as_str(),
                }),
            }),
            status: object(&v["status"], |s| PodStatus {
                reason: s["reason"].as_str(),
                phase: s["phase"].as_str(),
                pod_ip: Text::from_value(&s["podIP"]),
                nominated_node_name: Text::from_value(&s["nominatedNodeName"]),
                conditions: array(&s["conditions"], |c| PodCondition {
                    type_: c["type"].as_str(),
                    status: c["status"].as_str(),
                }),
                init_container_statuses: array(
                    &s["initContainerStatuses"],
                    ContainerStatus::from_value,
                ),
                container_statuses: array(&s["containerStatuses"], ContainerStatus::from_value),
            }),
        }
    }
}

impl<'a> ContainerStatus<'a> {
    fn from_value(c: &'a Value) -> ContainerStatus<'a> {
        ContainerStatus {
            ready: c["ready"].as_bool(),
            restart_count: c["restartCount"].as_i64(),
            state: object(&c["state"], |s| State {
                waiting: object(&s["waiting"], |w| Waiting {
                    reason: w["reason"].as_str(),
                }),
                terminated: object(&s["terminated"], Terminated::from_value),
                running: object(&s["running"], |_| IgnoredAny),
            }),
            last_state: object(&c["lastState"], |l| LastState {
                terminated: object(&l["terminated"], Terminated::from_value),
            }),
        }
    }
}

impl<'a> Terminated<'a> {
    fn from_value(t: &'a Value) -> Terminated<'a> {
        Terminated {
            reason: t["reason"].as_str(),
            exit_code: t["exitCode"].as_i64(),
            finished_at: t["finishedAt"].as_str(),
        }
    }
}

/// A JSON object read as `T`. A derived struct alone also accepts a JSON array (its
/// fields by position), which a [`Value`] reading would not treat as an object.
#[derive(Debug)]
struct Obj<T>(T);

impl<T> std::ops::Deref for Obj<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Obj<T>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Obj<T>, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map)).map(Obj)
            }
        }
        d.deserialize_map(V(PhantomData))
    }
}

/// The length of a JSON array; its elements are skipped.
#[derive(Debug)]
struct Len(usize);

impl<'de> Deserialize<'de> for Len {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Len;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON array")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Len, A::Error> {
                let mut n = 0;
                while seq.next_element::<IgnoredAny>()?.is_some() {
                    n += 1;
                }
                Ok(Len(n))
            }
        }
        d.deserialize_seq(V)
    }
}
