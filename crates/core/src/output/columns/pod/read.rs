//! [`PodView::read`]: a pod's view read straight from the object's bytes, borrowing its
//! strings, without serde and without copying the members it reads: each member the
//! view has is read where it is, every other one skipped by counting brackets
//! ([`crate::scan`]), and metadata.managedFields (often half a pod) jumped over by the
//! span the object's metadata reading found.
//!
//! It reads what serde's typed parse of the same bytes reads ([`PodView::parse`]), or
//! nothing: wherever that parse could differ or fail (a repeated member, a string with an
//! escape, a value of another type, a number that is not a plain integer, nesting deeper
//! than [`MAX_DEPTH`] inside a member it reads) it gives `None`, and the caller parses
//! as before.

use std::borrow::Cow;

use serde::de::IgnoredAny;

use super::{
    ContainerStatus, Inits, Labels, LastState, Len, Obj, PodCondition, PodMeta, PodSpec, PodStatus,
    PodView, ReadinessGate, State, Terminated, Text, Waiting,
};
use crate::scan::{each_member, skip_valid, skip_valid_within, skip_ws, to_special};

/// Nesting accepted inside the members the view reads, below them: far from serde_json's
/// limit (128) at the depth those members are at, and far beyond any pod's.
const MAX_DEPTH: usize = 32;

/// The bytes of one object and where its managedFields member's value ends, if known.
struct Reader<'a> {
    s: &'a str,
    b: &'a [u8],
    /// [`crate::cache::object::Object::managed_fields_span`].
    managed: Option<(usize, usize)>,
}

impl<'a> PodView<'a> {
    /// The view of `raw` (valid JSON) as [`PodView::parse`] gives it, read from the bytes;
    /// `managed`: the span of metadata.managedFields with the comma before it, as
    /// [`crate::cache::object::Object::managed_fields_span`] gives it (`None`: it is
    /// skipped as any other member). `None` wherever the typed parse may not give this
    /// view (see the module's comment).
    pub fn read(raw: &'a str, managed: Option<(usize, usize)>) -> Option<PodView<'a>> {
        let r = Reader {
            s: raw,
            b: raw.as_bytes(),
            managed,
        };
        let mut view = PodView {
            metadata: None,
            spec: None,
            status: None,
        };
        let mut seen = 0u8;
        each_member(r.b, skip_ws(r.b, 0), |key, at| match key {
            b"metadata" => {
                once(&mut seen, 0)?;
                let (v, end) = r.nullable(at, |at| r.metadata(at))?;
                view.metadata = v;
                Some(end)
            }
            b"spec" => {
                once(&mut seen, 1)?;
                let (v, end) = r.nullable(at, |at| r.spec(at))?;
                view.spec = v;
                Some(end)
            }
            b"status" => {
                once(&mut seen, 2)?;
                let (v, end) = r.nullable(at, |at| r.status(at))?;
                view.status = v;
                Some(end)
            }
            _ => skip_valid(r.b, at),
        })?;
        Some(view)
    }
}

/// Marks field `bit` seen; `None` when it was already (serde refuses a repeated field).
fn once(seen: &mut u8, bit: u8) -> Option<()> {
    let m = 1 << bit;
    (*seen & m == 0).then(|| *seen |= m)
}

impl<'a> Reader<'a> {
    /// `null` as `None`, else the value `f` reads; with the index after the value.
    fn nullable<T>(
        &self,
        at: usize,
        f: impl FnOnce(usize) -> Option<(T, usize)>,
    ) -> Option<(Option<T>, usize)> {
        if self.b.get(at) == Some(&b'n') {
            return Some((None, at + 4));
        }
        let (v, end) = f(at)?;
        Some((Some(v), end))
    }

    /// The object at `at` as a `T` built from its members by `member(value, key, at)`
    /// (returning the value's end); `None` when `at` is no object.
    fn object<T>(
        &self,
        at: usize,
        mut value: T,
        mut member: impl FnMut(&mut T, &[u8], usize) -> Option<usize>,
    ) -> Option<(Obj<T>, usize)> {
        let mut last = at + 1;
        each_member(self.b, at, |k, i| {
            let end = member(&mut value, k, i)?;
            last = end;
            Some(end)
        })?;
        // The object ends after its last member's value (or its `{`), then `}`.
        let close = skip_ws(self.b, last);
        (self.b.get(close) == Some(&b'}')).then_some((Obj(value), close + 1))
    }

    /// Each element of the array at `at`, read by `f` (returning the element's end);
    /// `None` when `at` is no array.
    fn array(&self, at: usize, mut f: impl FnMut(usize) -> Option<usize>) -> Option<usize> {
        let b = self.b;
        if b.get(at) != Some(&b'[') {
            return None;
        }
        let mut i = skip_ws(b, at + 1);
        if b.get(i) == Some(&b']') {
            return Some(i + 1);
        }
        loop {
            i = skip_ws(b, f(i)?);
            match b.get(i)? {
                b',' => i = skip_ws(b, i + 1),
                b']' => return Some(i + 1),
                _ => return None,
            }
        }
    }

    /// An array of objects, each read by `f`.
    fn objects<T>(
        &self,
        at: usize,
        mut f: impl FnMut(usize) -> Option<(Obj<T>, usize)>,
    ) -> Option<(Vec<Obj<T>>, usize)> {
        let mut out = Vec::new();
        let end = self.array(at, |i| {
            let (v, end) = f(i)?;
            out.push(v);
            Some(end)
        })?;
        Some((out, end))
    }

    /// A string without escapes (serde borrows it), or `null`.
    fn str(&self, at: usize) -> Option<(Option<&'a str>, usize)> {
        match self.b.get(at)? {
            b'n' => Some((None, at + 4)),
            b'"' => {
                let end = to_special(self.b, at + 1);
                if self.b.get(end) != Some(&b'"') {
                    return None;
                }
                Some((Some(self.s.get(at + 1..end)?), end + 1))
            }
            _ => None,
        }
    }

    fn text(&self, at: usize) -> Option<(Option<Text<'a>>, usize)> {
        let (s, end) = self.str(at)?;
        Some((s.map(|s| Text(Cow::Borrowed(s))), end))
    }

    /// `true`, `false` or `null`.
    fn bool(&self, at: usize) -> Option<(Option<bool>, usize)> {
        match self.b.get(at)? {
            b'n' => Some((None, at + 4)),
            b't' => Some((Some(true), at + 4)),
            b'f' => Some((Some(false), at + 5)),
            _ => None,
        }
    }

    /// An integer written plainly (an optional `-`, at most 18 digits, not `-0`) or
    /// `null`: what serde reads as the same i64.
    fn int(&self, at: usize) -> Option<(Option<i64>, usize)> {
        if self.b.get(at) == Some(&b'n') {
            return Some((None, at + 4));
        }
        let end = skip_valid(self.b, at)?;
        let t = self.s.get(at..end)?;
        let digits = t.strip_prefix('-').unwrap_or(t);
        let plain = !digits.is_empty()
            && digits.len() <= 18
            && digits.bytes().all(|c| c.is_ascii_digit())
            && t != "-0";
        if !plain {
            return None;
        }
        Some((Some(t.parse().ok()?), end))
    }

    /// A member the view does not read, inside one it reads.
    fn skip(&self, at: usize) -> Option<usize> {
        skip_valid_within(self.b, at, MAX_DEPTH)
    }

    fn metadata(&self, at: usize) -> Option<(Obj<PodMeta<'a>>, usize)> {
        let mut seen = 0u8;
        let meta = PodMeta {
            deletion_timestamp: None,
            labels: None,
        };
        self.object(at, meta, |m, k, i| match k {
            b"deletionTimestamp" => {
                once(&mut seen, 0)?;
                let (v, end) = self.str(i)?;
                m.deletion_timestamp = v;
                Some(end)
            }
            b"labels" => {
                once(&mut seen, 1)?;
                let (v, end) = self.nullable(i, |i| self.labels(i))?;
                m.labels = v;
                Some(end)
            }
            b"managedFields" => match self.managed_end(k, i) {
                Some(end) => Some(end),
                None => skip_valid(self.b, i),
            },
            _ => skip_valid(self.b, i),
        })
    }

    /// Where the managedFields value at `at` (its key `key`) ends, when the object's span
    /// is this member's and starts at the comma before it.
    fn managed_end(&self, key: &[u8], at: usize) -> Option<usize> {
        let (start, end) = self.managed?;
        let before = self.s.get(start..self.key_start(key))?.trim();
        // The value ends there: a closing bracket or null, then the next member or `}`.
        let closes = matches!(self.b.get(end.checked_sub(1)?), Some(b']' | b'l'));
        let next = matches!(self.b.get(skip_ws(self.b, end)), Some(b',' | b'}'));
        (before == "," && at < end && closes && next).then_some(end)
    }

    /// Where `key` (a slice of the object's bytes, after its opening quote) starts.
    fn key_start(&self, key: &[u8]) -> usize {
        key.as_ptr() as usize - self.b.as_ptr() as usize - 1
    }

    /// String labels, a repeated key keeping its first place and its last value (as
    /// [`Labels`]' deserializer).
    fn labels(&self, at: usize) -> Option<(Labels<'a>, usize)> {
        let (labels, end) = self.object(at, Labels(Vec::new()), |l, k, i| {
            let from = self.key_start(k) + 1;
            let key = self.s.get(from..from + k.len())?;
            let (v, end) = self.str(i)?;
            let v = v?;
            match l.0.iter_mut().find(|(pk, _)| *pk == key) {
                Some(p) => p.1 = v,
                None => l.0.push((key, v)),
            }
            Some(end)
        })?;
        Some((labels.0, end))
    }

    fn spec(&self, at: usize) -> Option<(Obj<PodSpec<'a>>, usize)> {
        let mut seen = 0u8;
        let spec = PodSpec {
            containers: None,
            init_containers: None,
            node_name: None,
            readiness_gates: None,
        };
        self.object(at, spec, |s, k, i| match k {
            b"containers" => {
                once(&mut seen, 0)?;
                let (v, end) = self.nullable(i, |i| {
                    let mut n = 0;
                    let end = self.array(i, |e| {
                        n += 1;
                        self.skip(e)
                    })?;
                    Some((Len(n), end))
                })?;
                s.containers = v;
                Some(end)
            }
            b"initContainers" => {
                once(&mut seen, 1)?;
                let (v, end) = self.nullable(i, |i| self.inits(i))?;
                s.init_containers = v;
                Some(end)
            }
            b"nodeName" => {
                once(&mut seen, 2)?;
                let (v, end) = self.text(i)?;
                s.node_name = v;
                Some(end)
            }
            b"readinessGates" => {
                once(&mut seen, 3)?;
                let (v, end) = self.nullable(i, |i| {
                    self.objects(i, |g| {
                        let mut seen = 0u8;
                        let gate = ReadinessGate {
                            condition_type: None,
                        };
                        self.object(g, gate, |g, k, i| match k {
                            b"conditionType" => {
                                once(&mut seen, 0)?;
                                let (v, end) = self.str(i)?;
                                g.condition_type = v;
                                Some(end)
                            }
                            _ => self.skip(i),
                        })
                    })
                })?;
                s.readiness_gates = v;
                Some(end)
            }
            _ => skip_valid(self.b, i),
        })
    }

    fn inits(&self, at: usize) -> Option<(Inits, usize)> {
        let mut inits = Inits {
            len: 0,
            sidecars: 0,
        };
        let end = self.array(at, |c| {
            let mut seen = 0u8;
            let mut sidecar = false;
            let (_, end) = self.object(c, (), |_, k, i| match k {
                b"restartPolicy" => {
                    once(&mut seen, 0)?;
                    let (v, end) = self.str(i)?;
                    sidecar = v == Some("Always");
                    Some(end)
                }
                _ => self.skip(i),
            })?;
            inits.len = inits.len.saturating_add(1);
            inits.sidecars = inits.sidecars.saturating_add(u32::from(sidecar));
            Some(end)
        })?;
        Some((inits, end))
    }

    fn status(&self, at: usize) -> Option<(Obj<PodStatus<'a>>, usize)> {
        let mut seen = 0u8;
        let status = PodStatus {
            reason: None,
            phase: None,
            pod_ip: None,
            nominated_node_name: None,
            conditions: None,
            init_container_statuses: None,
            container_statuses: None,
        };
        self.object(at, status, |s, k, i| match k {
            b"reason" => {
                once(&mut seen, 0)?;
                let (v, end) = self.str(i)?;
                s.reason = v;
                Some(end)
            }
            b"phase" => {
                once(&mut seen, 1)?;
                let (v, end) = self.str(i)?;
                s.phase = v;
                Some(end)
            }
            b"podIP" => {
                once(&mut seen, 2)?;
                let (v, end) = self.text(i)?;
                s.pod_ip = v;
                Some(end)
            }
            b"nominatedNodeName" => {
                once(&mut seen, 3)?;
                let (v, end) = self.text(i)?;
                s.nominated_node_name = v;
                Some(end)
            }
            b"conditions" => {
                once(&mut seen, 4)?;
                let (v, end) = self.nullable(i, |i| self.objects(i, |c| self.condition(c)))?;
                s.conditions = v;
                Some(end)
            }
            b"initContainerStatuses" => {
                once(&mut seen, 5)?;
                let (v, end) =
                    self.nullable(i, |i| self.objects(i, |c| self.container_status(c)))?;
                s.init_container_statuses = v;
                Some(end)
            }
            b"containerStatuses" => {
                once(&mut seen, 6)?;
                let (v, end) =
                    self.nullable(i, |i| self.objects(i, |c| self.container_status(c)))?;
                s.container_statuses = v;
                Some(end)
            }
            _ => skip_valid(self.b, i),
        })
    }

    fn condition(&self, at: usize) -> Option<(Obj<PodCondition<'a>>, usize)> {
        let mut seen = 0u8;
        let cond = PodCondition {
            type_: None,
            status: None,
        };
        self.object(at, cond, |c, k, i| match k {
            b"type" => {
                once(&mut seen, 0)?;
                let (v, end) = self.str(i)?;
                c.type_ = v;
                Some(end)
            }
            b"status" => {
                once(&mut seen, 1)?;
                let (v, end) = self.str(i)?;
                c.status = v;
                Some(end)
            }
            _ => self.skip(i),
        })
    }

    fn container_status(&self, at: usize) -> Option<(Obj<ContainerStatus<'a>>, usize)> {
        let mut seen = 0u8;
        let status = ContainerStatus {
            ready: None,
            restart_count: None,
            state: None,
            last_state: None,
        };
        self.object(at, status, |c, k, i| match k {
            b"ready" => {
                once(&mut seen, 0)?;
                let (v, end) = self.bool(i)?;
                c.ready = v;
                Some(end)
            }
            b"restartCount" => {
                once(&mut seen, 1)?;
                let (v, end) = self.int(i)?;
                c.restart_count = v;
                Some(end)
            }
            b"state" => {
                once(&mut seen, 2)?;
                let (v, end) = self.nullable(i, |i| self.state(i))?;
                c.state = v;
                Some(end)
            }
            b"lastState" => {
                once(&mut seen, 3)?;
                let (v, end) = self.nullable(i, |i| {
                    let mut seen = 0u8;
                    let last = LastState { terminated: None };
                    self.object(i, last, |l, k, i| match k {
                        b"terminated" => {
                            once(&mut seen, 0)?;
                            let (v, end) = self.nullable(i, |i| self.terminated(i))?;
                            l.terminated = v;
                            Some(end)
                        }
                        _ => self.skip(i),
                    })
                })?;
                c.last_state = v;
                Some(end)
            }
            _ => self.skip(i),
        })
    }

    fn state(&self, at: usize) -> Option<(Obj<State<'a>>, usize)> {
        let mut seen = 0u8;
        let state = State {
            waiting: None,
            terminated: None,
            running: None,
        };
        self.object(at, state, |s, k, i| match k {
            b"waiting" => {
                once(&mut seen, 0)?;
                let (v, end) = self.nullable(i, |i| {
                    let mut seen = 0u8;
                    self.object(i, Waiting { reason: None }, |w, k, i| match k {
                        b"reason" => {
                            once(&mut seen, 0)?;
                            let (v, end) = self.str(i)?;
                            w.reason = v;
                            Some(end)
                        }
                        _ => self.skip(i),
                    })
                })?;
                s.waiting = v;
                Some(end)
            }
            b"terminated" => {
                once(&mut seen, 1)?;
                let (v, end) = self.nullable(i, |i| self.terminated(i))?;
                s.terminated = v;
                Some(end)
            }
            b"running" => {
                once(&mut seen, 2)?;
                let (v, end) =
                    self.nullable(i, |i| self.object(i, IgnoredAny, |_, _, i| self.skip(i)))?;
                s.running = v;
                Some(end)
            }
            _ => self.skip(i),
        })
    }

    fn terminated(&self, at: usize) -> Option<(Obj<Terminated<'a>>, usize)> {
        let mut seen = 0u8;
        let term = Terminated {
            reason: None,
            exit_code: None,
            finished_at: None,
        };
        self.object(at, term, |t, k, i| match k {
            b"reason" => {
                once(&mut seen, 0)?;
                let (v, end) = self.str(i)?;
                t.reason = v;
                Some(end)
            }
            b"exitCode" => {
                once(&mut seen, 1)?;
                let (v, end) = self.int(i)?;
                t.exit_code = v;
                Some(end)
            }
            b"finishedAt" => {
                once(&mut seen, 2)?;
                let (v, end) = self.str(i)?;
                t.finished_at = v;
                Some(end)
            }
            _ => self.skip(i),
        })
    }
}
