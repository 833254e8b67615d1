//! `--until CONDITION`: the condition a delta must meet for the watch to end, with
//! `kubectl wait --for`'s vocabulary (`created`, `deleted`, `jsonpath=…`,
//! `condition=…`). Exit codes: README "Exit codes" and the application's `src/app/exit.rs`.

use serde_json::Value;

use crate::cache::delta::{Delta, DeltaType};
use crate::cache::object::ObjectRef;
use crate::gofmt::go_value;
use crate::template::Template;

#[derive(Debug, Clone, PartialEq)]
pub enum Condition {
    /// An object kwatch did not know appears: Added, or a Replaced/Sync with no previous
    /// version (so an object already there at start meets it on the initial list).
    Created,
    /// A Deleted delta; or, once synced, no object matched at all.
    Deleted,
    /// A value selected by the template equals `want` (compared as kubectl wait compares:
    /// Go's `%v` of the value, spaces trimmed); without `want`, some selected value is
    /// present and not `false`, `null` or `""`.
    JsonPath {
        template: Template,
        want: Option<String>,
    },
    /// kubectl wait's `condition=TYPE[=STATUS]`: the first status condition whose type
    /// equals `type_` ignoring case has a status equal to `status` ignoring case, and is
    /// not older than the object's generation.
    Status { type_: String, status: String },
}

/// Why `--until`'s CONDITION was refused ([`Condition::parse`]), in one line.
#[derive(Debug, thiserror::Error)]
pub enum ConditionError {
    #[error(
        "--until {0:?}: expected jsonpath='{{.status.readyReplicas}}'=3 or \
         jsonpath='{{.status.readyReplicas}}' (one `=` outside brackets)"
    )]
    JsonPathForm(String),
    #[error("--until {0:?}: the jsonpath expression is empty")]
    EmptyPath(String),
    #[error("--until {0:?}: expected a path such as .status.phase or {{.status.phase}}")]
    NotAPath(String),
    #[error("--until {0:?}: the value after = is empty (drop `=` to wait for any value)")]
    EmptyValue(String),
    #[error(transparent)]
    Template(#[from] crate::template::Error),
    #[error("--until {0:?}: expected condition=TYPE[=STATUS]")]
    NoType(String),
    #[error(
        "unknown condition {0:?} (created, deleted, jsonpath={{.path}}[=VALUE], \
         condition=TYPE[=STATUS])"
    )]
    Unknown(String),
}

impl Condition {
    /// Parses CONDITION as kubectl wait's `--for` (kubectl 1.32 `conditionFuncFor`):
    /// `delete`/`create` in any case, `condition=TYPE[=STATUS]` (STATUS defaults to
    /// `true`), `jsonpath=EXPR[=VALUE]` where EXPR may drop its braces (`.data.a`, as
    /// kubectl's relaxed JSONPath) and an `=` inside brackets belongs to EXPR.
    pub fn parse(s: &str) -> Result<Condition, ConditionError> {
        match s.to_lowercase().as_str() {
            "created" | "create" => return Ok(Condition::Created),
            "deleted" | "delete" => return Ok(Condition::Deleted),
            _ => {}
        }
        if let Some(rest) = s.strip_prefix("jsonpath=") {
            let parts = split_jsonpath_input(rest);
            let (expr, want) = match parts.as_slice() {
                [e] => (*e, None),
                [e, v] => (*e, Some(*v)),
                _ => return Err(ConditionError::JsonPathForm(s.to_owned())),
            };
            if expr.is_empty() {
                return Err(ConditionError::EmptyPath(s.to_owned()));
            }
            let expr =
                relaxed_jsonpath(expr).ok_or_else(|| ConditionError::NotAPath(s.to_owned()))?;
            let want = match want.map(|v| v.trim_matches(['\'', '"'])) {
                Some("") => return Err(ConditionError::EmptyValue(s.to_owned())),
                w => w.map(str::to_owned),
            };
            return Ok(Condition::JsonPath {
                template: Template::parse(&expr)?,
                want,
            });
        }
        if let Some(rest) = s.strip_prefix("condition=") {
            let (ty, status) = rest.split_once('=').unwrap_or((rest, "true"));
            if ty.is_empty() {
                return Err(ConditionError::NoType(s.to_owned()));
            }
            return Ok(Condition::Status {
                type_: ty.to_owned(),
                status: status.to_owned(),
            });
        }
        Err(ConditionError::Unknown(s.to_owned()))
    }

    /// Whether `delta` (with the version known before it, `prev`) meets the condition.
    pub fn met_by(&self, delta: &Delta, prev: Option<&ObjectRef>) -> bool {
        match self {
            Condition::Created => match delta.kind {
                DeltaType::Added => true,
                DeltaType::Replaced
                | DeltaType::Sync
                | DeltaType::ReplacedAll
                | DeltaType::SyncAll => prev.is_none(),
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
                    // kubectl wait: a map or a list never equals a value.
                    Some(w) => vals
                        .iter()
                        .any(|x| !x.is_object() && !x.is_array() && go_value(x).trim() == w.trim()),
                    None => vals.iter().any(|x| {
                        !matches!(x, Value::Null | Value::Bool(false)) && x.as_str() != Some("")
                    }),
                }
            }
            Condition::Status { type_, status } => {
                if delta.kind == DeltaType::Deleted {
                    return false;
                }
                delta
                    .object
                    .object()
                    .is_some_and(|o| status_condition_met(&o.to_value(), type_, status))
            }
        }
    }

    /// Whether the condition is met by the state once synced, with `objects` known:
    /// `deleted` when nothing matched.
    pub fn met_when_synced(&self, objects: usize) -> bool {
        *self == Condition::Deleted && objects == 0
    }
}

/// The error line when `--timeout` comes before the condition, in kubectl wait's words
/// (`extendErrWaitTimeout` in kubectl's pkg/cmd/wait/wait.go: `wait.ErrWaitTimeout`'s
/// "timed out waiting for the condition" and ` on RESOURCE/NAME`, RESOURCE the plural
/// without its group). kubectl waits on each object in turn and names the first that
/// timed out; kwatch waits on all at once, so it names them all (the first three, then
/// how many more). With no object at all, kubectl's `no matching resources found`.
/// `objects`: (plural, name) in the order to name them.
pub fn timed_out(objects: &[(String, String)]) -> String {
    const NAMED: usize = 3;
    if objects.is_empty() {
        return "error: timed out waiting for the condition: no matching resources found"
            .to_owned();
    }
    let on: Vec<String> = objects
        .iter()
        .take(NAMED)
        .map(|(plural, name)| format!("{plural}/{name}"))
        .collect();
    let mut line = format!(
        "error: timed out waiting for the condition on {}",
        on.join(", ")
    );
    if objects.len() > NAMED {
        line.push_str(&format!(" and {} more", objects.len() - NAMED));
    }
    line
}

/// Unicode case-insensitive equality, as Go's `strings.EqualFold` (simple folding).
fn equal_fold(a: &str, b: &str) -> bool {
    a.chars()
        .flat_map(char::to_lowercase)
        .eq(b.chars().flat_map(char::to_lowercase))
}

/// kubectl wait's `checkCondition`: the first condition of the type (ignoring case) with
/// a string status decides; a condition (or status) observedGeneration older than
/// metadata.generation means the controller has not caught up yet.
fn status_condition_met(o: &Value, type_: &str, status: &str) -> bool {
    let Some(conds) = o["status"]["conditions"].as_array() else {
        return false;
    };
    for c in conds {
        if !c["type"].as_str().is_some_and(|t| equal_fold(t, type_)) {
            continue;
        }
        let Some(got) = c["status"].as_str() else {
            continue;
        };
        if let Some(generation) = o["metadata"]["generation"].as_i64() {
            let observed = c["observedGeneration"]
                .as_i64()
                .or_else(|| o["status"]["observedGeneration"].as_i64());
            if observed.is_some_and(|g| g < generation) {
                return false;
            }
        }
        return equal_fold(got, status);
    }
    false
}

/// kubectl wait's split of `jsonpath=` input: at each `=` outside `[…]`, `{…}` and `(…)`,
/// so the `==` of a filter stays in the expression.
fn split_jsonpath_input(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '[' | '{' | '(' => depth += 1,
            ']' | '}' | ')' => depth -= 1,
            '=' if depth <= 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

/// kubectl's `RelaxedJSONPathExpression`: `{.a.b}`, `{a.b}`, `.a.b` and `a.b` all mean
/// `{.a.b}`; braces inside are not allowed.
fn relaxed_jsonpath(expr: &str) -> Option<String> {
    let inner = match expr.strip_prefix('{') {
        Some(rest) => rest.strip_suffix('}')?,
        None => expr,
    };
    let inner = inner.strip_prefix('.').unwrap_or(inner);
    if inner.is_empty() || inner.contains(['{', '}']) {
        return None;
    }
    Some(format!("{{.{inner}}}"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn timed_out_names_the_objects_as_kubectl_wait() {
        let objs = |names: &[&str]| -> Vec<(String, String)> {
            names
                .iter()
                .map(|n| ("deployments".to_owned(), (*n).to_owned()))
                .collect()
        };
        assert_eq!(
            super::timed_out(&objs(&["web"])),
            "error: timed out waiting for the condition on deployments/web"
        );
        assert_eq!(
            super::timed_out(&objs(&["a", "b", "c", "d", "e"])),
            "error: timed out waiting for the condition on deployments/a, deployments/b, \
             deployments/c and 2 more"
        );
        assert_eq!(
            super::timed_out(&[]),
            "error: timed out waiting for the condition: no matching resources found"
        );
    }

    use super::*;
    use crate::cache::testutil::object;

    fn pod(phase: &str) -> ObjectRef {
        object(&format!(
            r#"{{"metadata":{{"name":"p","resourceVersion":"1"}},"status":{{"phase":"{phase}","conditions":[{{"type":"Ready","status":"True"}}]}}}}"#
        ))
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
        assert!(Condition::parse("jsonpath={.status}x").is_err());
        assert!(Condition::parse("jsonpath=").is_err());
        assert!(Condition::parse("jsonpath={.a}=").is_err());
        assert!(Condition::parse("jsonpath={.a}=b=c").is_err());
        assert_eq!(Condition::parse("DELETE").unwrap(), Condition::Deleted);
    }

    /// kubectl wait's relaxed paths and case-insensitive condition status.
    #[test]
    fn kubectl_wait_forms() {
        let cm = object(
            r#"{"metadata":{"name":"c","resourceVersion":"1","generation":2},"data":{"a":"b","n":1e-7},
                "status":{"observedGeneration":2,"conditions":[{"type":"Available","status":"False"}]}}"#,
        );
        let d = Delta::new(DeltaType::Updated, cm);
        for (cond, met) in [
            ("jsonpath=.data.a=b", true),
            ("jsonpath=data.a=b", true),
            ("jsonpath={.data.a}='b'", true),
            ("jsonpath=.data.a=c", false),
            ("jsonpath=.data.n=1e-07", true),
            ("jsonpath=.data", true),
            ("jsonpath=.data=x", false),
            (
                r#"jsonpath={.status.conditions[?(@.type=="Available")].status}=False"#,
                true,
            ),
            (
                r#"jsonpath=.status.conditions[?(@.type=="Available")].status=False"#,
                true,
            ),
            ("condition=Available=false", true),
            ("condition=available=FALSE", true),
            ("condition=Available", false),
            ("condition=Available=True", false),
            ("condition=Ready=false", false),
        ] {
            let c = Condition::parse(cond).unwrap_or_else(|e| panic!("{cond}: {e}"));
            assert_eq!(c.met_by(&d, None), met, "{cond}");
        }
        let stale = object(
            r#"{"metadata":{"name":"c","resourceVersion":"1","generation":3},
                "status":{"observedGeneration":2,"conditions":[{"type":"Available","status":"True"}]}}"#,
        );
        let c = Condition::parse("condition=Available").unwrap();
        assert!(!c.met_by(&Delta::new(DeltaType::Updated, stale), None));
    }
}
