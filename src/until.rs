//! `--until CONDITION`: the condition a delta must meet for the watch to end, with
//! `kubectl wait --for`'s vocabulary (`created`, `deleted`, `jsonpath=…`,
//! `condition=…`). Exit codes: README "Exit codes" and [`crate::exit::Exit`].

use serde_json::Value;

use crate::delta::{Delta, DeltaType};
use crate::object::ObjectRef;
use crate::output::template::{scalar, Template};

#[derive(Debug, Clone, PartialEq)]
pub enum Condition {
    /// An object kwatch did not know appears: Added, or a Replaced/Sync with no previous
    /// version (so an object already there at start meets it on the initial list).
    Created,
    /// A Deleted delta; or, once synced, no object matched at all.
    Deleted,
    /// A value selected by the template equals `want`; without `want`, some selected
    /// value is present and not `false`, `null` or `""`.
    JsonPath {
        template: Template,
        want: Option<String>,
    },
}

impl Condition {
    pub fn parse(s: &str) -> Result<Condition, String> {
        match s {
            "created" | "create" => return Ok(Condition::Created),
            "deleted" | "delete" => return Ok(Condition::Deleted),
            _ => {}
        }
        if let Some(rest) = s.strip_prefix("jsonpath=") {
            // The template is everything up to its last `}`; `=VALUE` may follow.
            let end = rest
                .rfind('}')
                .ok_or_else(|| format!("--until {s:?}: expected jsonpath={{.path}}[=VALUE]"))?;
            let (t, tail) = rest.split_at(end + 1);
            let want = match tail {
                "" => None,
                t => Some(
                    t.strip_prefix('=')
                        .ok_or_else(|| format!("--until {s:?}: expected =VALUE after }}"))?
                        .to_owned(),
                ),
            };
            return Ok(Condition::JsonPath {
                template: Template::parse(t)?,
                want,
            });
        }
        if let Some(rest) = s.strip_prefix("condition=") {
            // kubectl wait's condition=Ready[=True]: a status condition's status.
            let (ty, want) = rest.split_once('=').unwrap_or((rest, "True"));
            if ty.is_empty() || ty.contains(['"', '\'', ']']) {
                return Err(format!("--until {s:?}: expected condition=TYPE[=STATUS]"));
            }
            let t = format!("{{.status.conditions[?(@.type==\"{ty}\")].status}}");
            return Ok(Condition::JsonPath {
                template: Template::parse(&t)?,
                want: Some(want.to_owned()),
            });
        }
        Err(format!(
            "unknown condition {s:?} (created, deleted, jsonpath={{.path}}[=VALUE], \
             condition=TYPE[=STATUS])"
        ))
    }

    /// Whether `delta` (with the version known before it, `prev`) meets the condition.
    pub fn met_by(&self, delta: &Delta, prev: Option<&ObjectRef>) -> bool {
        match self {
            Condition::Created => match delta.kind {
                DeltaType::Added => true,
                DeltaType::Replaced | DeltaType::Sync => prev.is_none(),
                _ => false,
            },
            Condition::Deleted => delta.kind == DeltaType::Deleted,
            Condition::JsonPath { template, want } => {
                if delta.kind == DeltaType::Deleted {
                    return false;
                }
                let Some(o) = delta.object.object() else {
                    return false;
                };
                let v = o.to_value();
                let vals = template.values(&v);
                match want {
                    Some(w) => vals.iter().any(|x| scalar(x) == *w),
                    None => vals.iter().any(|x| {
                        !matches!(x, Value::Null | Value::Bool(false)) && x.as_str() != Some("")
                    }),
                }
            }
        }
    }

    /// Whether the condition is met by the state once synced, with `objects` known:
    /// `deleted` when nothing matched.
    pub fn met_when_synced(&self, objects: usize) -> bool {
        *self == Condition::Deleted && objects == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::object::Object;

    fn pod(phase: &str) -> ObjectRef {
        ObjectRef::new(
            Object::from_json(&format!(
                r#"{{"metadata":{{"name":"p","resourceVersion":"1"}},"status":{{"phase":"{phase}","conditions":[{{"type":"Ready","status":"True"}}]}}}}"#
            ))
            .unwrap(),
        )
    }

    #[test]
    fn conditions_parse_and_match() {
        let running = Condition::parse("jsonpath={.status.phase}=Running").unwrap();
        let d = Delta::new(DeltaType::Updated, pod("Running"));
        assert!(running.met_by(&d, None));
        assert!(!running.met_by(&Delta::new(DeltaType::Updated, pod("Pending")), None));
        assert!(!running.met_by(&Delta::new(DeltaType::Deleted, pod("Running")), None));
        let present = Condition::parse("jsonpath={.status.phase}").unwrap();
        assert!(present.met_by(&d, None));
        let ready = Condition::parse("condition=Ready").unwrap();
        assert!(ready.met_by(&d, None));
        let created = Condition::parse("created").unwrap();
        assert!(created.met_by(&Delta::new(DeltaType::Replaced, pod("x")), None));
        let p = pod("x");
        assert!(!created.met_by(&Delta::new(DeltaType::Replaced, pod("x")), Some(&p)));
        let deleted = Condition::parse("deleted").unwrap();
        assert!(deleted.met_by(&Delta::new(DeltaType::Deleted, pod("x")), None));
        assert!(deleted.met_when_synced(0));
        assert!(!created.met_when_synced(0));
        assert!(Condition::parse("ready").is_err());
        assert!(Condition::parse("jsonpath=.status").is_err());
        assert!(Condition::parse("jsonpath={.status}x").is_err());
    }
}
