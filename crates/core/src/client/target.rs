//! Target resolution: what the user typed (`po`, `Pod`, `deployments.apps`,
//! `widgets.v1.example.com`) → an API resource, through the server's discovery
//! documents ([`crate::client::discovery`]). Only what the argument needs is looked at: the core
//! group first when no group is named, the other groups only if the core group does not
//! have it. A name the (cached) documents do not know makes kwatch ask the server again
//! before it says the resource does not exist.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{APIGroup, APIResource};

use crate::client::discovery::Discovery;

/// Why a name, a namespace or a resource argument was refused: one line naming a fix.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An object name client-go would not put into a URL (apimachinery's reasons).
    #[error(
        "invalid resource name {name:?}: [{}]: give the object's name as `kubectl get` shows it",
        .why.join(", ")
    )]
    InvalidName { name: String, why: Vec<String> },
    /// A namespace client-go would not put into a URL (apimachinery's reasons).
    #[error(
        "invalid namespace {namespace:?}: [{}]: pass a namespace name (see `kubectl get namespaces`)",
        .why.join(", ")
    )]
    NamespacePath { namespace: String, why: Vec<String> },
    /// A namespace that is no DNS-1123 label.
    #[error(
        "invalid namespace {namespace:?}: {why}: pass a namespace name (see `kubectl get namespaces`)"
    )]
    NamespaceLabel {
        namespace: String,
        why: &'static str,
    },
    #[error("empty resource name: name a resource, e.g. `kwatch pods`")]
    EmptyResource,
    /// `resource` (sanitized) is no resource the server serves; `hint` says what to try.
    #[error("the server doesn't have a resource type {resource:?}{hint}")]
    NoSuchResource { resource: String, hint: Hint },
    #[error(
        "the server does not allow {verb} on {resource}: kwatch can only watch resources that \
         support list and watch"
    )]
    NotWatchable {
        verb: &'static str,
        resource: String,
    },
    #[error(transparent)]
    Discovery(#[from] crate::client::discovery::Error),
}

/// What [`Error::NoSuchResource`] suggests, written after the resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hint {
    /// The argument is a kubectl verb (`kwatch get pods`).
    KubectlVerb(String),
    /// A group-version whose discovery failed may serve it (with the failure).
    FailedDiscovery { group_version: String, why: String },
    /// A served name close to the argument.
    DidYouMean(String),
    /// Nothing close.
    ApiResources,
}

impl std::fmt::Display for Hint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Hint::KubectlVerb(verb) => write!(
                f,
                "; kwatch takes the resource directly: drop {verb:?} (`kwatch pods`, not \
                 `kwatch {verb} pods`)"
            ),
            Hint::FailedDiscovery { group_version, why } => write!(
                f,
                ", or it is in {group_version}, whose discovery failed ({why}); retry when \
                 that API is back"
            ),
            Hint::DidYouMean(name) => write!(f, "; did you mean {name:?}?"),
            Hint::ApiResources => write!(f, "; list the served types with `kubectl api-resources`"),
        }
    }
}

/// The resource a record is about, as resolved by discovery: what the printers and
/// `kwatch replay` know of it. Lives here, below output, so that output imports target
/// and never the other way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    /// What the user sees: the plural, with its group for non-core resources
    /// (`pods`, `deployments.apps`).
    pub name: String,
    pub kind: String,
    pub api_version: String,
    pub namespaced: bool,
}

/// A resolved, watchable resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub resource: Resource,
    pub group: String,
    pub version: String,
    pub plural: String,
}

/// The core `pods` resource: the tests' usual one.
#[cfg(any(test, feature = "test-hooks"))]
impl Resource {
    pub fn pods() -> Resource {
        Resource {
            name: "pods".into(),
            kind: "Pod".into(),
            api_version: "v1".into(),
            namespaced: true,
        }
    }
}

impl Target {
    /// The collection URL path: all namespaces (or a cluster-scoped resource) when
    /// `namespace` is `None`.
    pub fn collection_path(&self, namespace: Option<&str>) -> String {
        // Every segment is escaped even though the CLI and discovery have checked them: a
        // `?`, `#` or `/` must never change which URL is asked for.
        let (version, plural) = (segment(&self.version), segment(&self.plural));
        let base = if self.group.is_empty() {
            format!("/api/{version}")
        } else {
            format!("/apis/{}/{version}", segment(&self.group))
        };
        match namespace {
            Some(ns) if self.resource.namespaced => {
                format!("{base}/namespaces/{}/{plural}", segment(ns))
            }
            _ => format!("{base}/{plural}"),
        }
    }
}

/// `s` percent-encoded as one URL path segment: everything but RFC 3986's unreserved
/// characters is escaped, so the server decodes exactly `s`.
pub fn segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// apimachinery's `fields.EscapeValue`: `\`, `,` and `=` backslash-escaped, so a name
/// is one value of `metadata.name=NAME` whatever it holds (kubectl builds that selector
/// with `fields.OneTermEqualSelector`).
pub fn field_value(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '\\' | ',' | '=') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// apimachinery's `path.IsValidPathSegmentName`: what client-go checks before it puts a
/// name or namespace into a URL. The messages are apimachinery's.
fn path_segment_errors(s: &str) -> Vec<String> {
    if s == "." || s == ".." {
        return vec![format!("may not be '{s}'")];
    }
    ["/", "%"]
        .iter()
        .filter(|bad| s.contains(**bad))
        .map(|bad| format!("may not contain '{bad}'"))
        .collect()
}

/// An object name as client-go accepts it (`Request.Name`): any valid path segment, so
/// `system:node` passes and `..` or `a%2F` do not.
pub fn validate_name(name: &str) -> Result<(), Error> {
    let errs = path_segment_errors(name);
    if name.is_empty() || !errs.is_empty() {
        let why = if name.is_empty() {
            vec!["may not be empty".to_owned()]
        } else {
            errs
        };
        return Err(Error::InvalidName {
            name: name.to_owned(),
            why,
        });
    }
    Ok(())
}

/// A namespace: first client-go's path-segment check (kubectl's message, e.g.
/// `invalid namespace "..": [may not be '..']`), then the DNS-1123 label every namespace
/// name is (apimachinery's `IsDNS1123Label`), so `qa-live?x=1` is refused rather than
/// listed as an empty namespace.
pub fn validate_namespace(ns: &str) -> Result<(), Error> {
    let errs = path_segment_errors(ns);
    if !errs.is_empty() {
        return Err(Error::NamespacePath {
            namespace: ns.to_owned(),
            why: errs,
        });
    }
    let label = ns.len() <= 63
        && !ns.is_empty()
        && ns
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !ns.starts_with('-')
        && !ns.ends_with('-');
    if !label {
        let why = if ns.len() > 63 {
            "must be no more than 63 characters"
        } else {
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', \
             and must start and end with an alphanumeric character (e.g. 'my-name', or '123-abc')"
        };
        return Err(Error::NamespaceLabel {
            namespace: ns.to_owned(),
            why,
        });
    }
    Ok(())
}

/// One parsed argument: a name and, if given, a group and version.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Spec {
    name: String,
    group: Option<String>,
    version: Option<String>,
}

/// The readings of `arg`, most specific first (kubectl: `resource.version.group`, then
/// `resource.group`).
fn readings(arg: &str) -> Vec<Spec> {
    let Some((name, rest)) = arg.split_once('.') else {
        return vec![Spec {
            name: arg.to_owned(),
            group: None,
            version: None,
        }];
    };
    let mut out = Vec::new();
    if let Some((version, group)) = rest.split_once('.') {
        if looks_like_version(version) {
            out.push(Spec {
                name: name.to_owned(),
                group: Some(group.to_owned()),
                version: Some(version.to_owned()),
            });
        }
    }
    out.push(Spec {
        name: name.to_owned(),
        group: Some(rest.to_owned()),
        version: None,
    });
    out
}

fn looks_like_version(s: &str) -> bool {
    let Some(rest) = s.strip_prefix('v') else {
        return false;
    };
    let digits = rest.trim_start_matches(|c: char| c.is_ascii_digit());
    digits.len() < rest.len()
        && (digits.is_empty()
            || ["alpha", "beta"].iter().any(|p| {
                digits
                    .strip_prefix(p)
                    .is_some_and(|d| d.chars().all(|c| c.is_ascii_digit()))
            }))
}

fn matches(r: &APIResource, name: &str) -> bool {
    if r.name.contains('/') {
        return false;
    }
    let lower = name.to_ascii_lowercase();
    r.name == lower
        || r.singular_name == lower
        || r.kind.eq_ignore_ascii_case(name)
        || r.short_names.iter().flatten().any(|s| *s == lower)
}

/// Resolves arguments against one server's discovery documents.
pub struct Resolver {
    docs: Discovery,
    /// Group-versions whose discovery failed (a resource there cannot be resolved).
    failed: Vec<(String, String)>,
}

impl Resolver {
    pub fn new(docs: Discovery) -> Resolver {
        Resolver {
            docs,
            failed: Vec::new(),
        }
    }

    /// The group-versions to search for `spec`, in kubectl's priority order.
    async fn candidates(&mut self, spec: &Spec) -> Result<Vec<String>, Error> {
        let groups = self.docs.groups().await?;
        let pick = |g: &APIGroup| -> Option<String> {
            match &spec.version {
                Some(v) => g
                    .versions
                    .iter()
                    .find(|x| &x.version == v)
                    .map(|x| x.group_version.clone()),
                None => g
                    .preferred_version
                    .as_ref()
                    .or(g.versions.first())
                    .map(|x| x.group_version.clone()),
            }
        };
        Ok(match &spec.group {
            Some(group) => groups
                .iter()
                .filter(|g| &g.name == group)
                .filter_map(pick)
                .collect(),
            None => groups.iter().filter_map(pick).collect(),
        })
    }

    /// The discovery documents resolution reads (and [`crate::client::expand`] walks).
    pub(crate) fn discovery(&mut self) -> &mut Discovery {
        &mut self.docs
    }

    /// The resources of `gv`; `None` (and remembered) when its discovery fails, as kubectl
    /// goes on past a group whose server is down.
    pub(crate) async fn resources(&mut self, gv: &str) -> Option<&[APIResource]> {
        match self.docs.resources(gv).await {
            Ok(list) => Some(&list.resources),
            Err(e) => {
                let why = crate::text::Chain(&e).to_string();
                crate::client::http::notice(&format!("discovery of {gv} failed: {why}"));
                self.failed.push((gv.to_owned(), why));
                None
            }
        }
    }

    async fn find(&mut self, arg: &str) -> Result<Option<Target>, Error> {
        for spec in readings(arg) {
            let core_applies = spec.group.as_deref().is_none_or(str::is_empty)
                && spec.version.as_deref().is_none_or(|v| v == "v1");
            if core_applies {
                let core = self.docs.resources("v1").await?;
                if let Some(r) = core.resources.iter().find(|r| matches(r, &spec.name)) {
                    return target_of(r, "", "v1").map(Some);
                }
            }
            for gv in self.candidates(&spec).await? {
                let Some(resources) = self.resources(&gv).await else {
                    continue;
                };
                if let Some(r) = resources.iter().find(|r| matches(r, &spec.name)) {
                    let (group, version) = gv.split_once('/').unwrap_or(("", gv.as_str()));
                    return target_of(r, group, version).map(Some);
                }
            }
        }
        Ok(None)
    }

    /// Resolves one argument; a miss on cached documents asks the server again.
    pub async fn resolve(&mut self, arg: &str) -> Result<Target, Error> {
        if arg.is_empty() {
            return Err(Error::EmptyResource);
        }
        if let Some(t) = self.find(arg).await? {
            return Ok(t);
        }
        if self.docs.from_cache() {
            self.docs.invalidate();
            self.failed.clear();
            if let Some(t) = self.find(arg).await? {
                return Ok(t);
            }
        }
        Err(self.unknown(arg).await)
    }

    /// `the server doesn't have a resource type "podz"`, with a suggestion when one is close.
    async fn unknown(&mut self, arg: &str) -> Error {
        let mut names: Vec<(usize, String)> = Vec::new();
        if let Ok(core) = self.docs.resources("v1").await {
            names.extend(core.resources.iter().flat_map(names_of));
        }
        if let Ok(gvs) = self
            .candidates(&Spec {
                name: String::new(),
                group: None,
                version: None,
            })
            .await
        {
            for gv in gvs {
                if let Some(resources) = self.resources(&gv).await {
                    names.extend(resources.iter().flat_map(names_of));
                }
            }
        }
        let wanted = arg.split('.').next().unwrap_or(arg).to_ascii_lowercase();
        let best = names
            .iter()
            .map(|(rank, n)| (strsim::levenshtein(&wanted, n), *rank, n))
            .filter(|(d, _, n)| *d <= 2 && *d < n.len())
            .min()
            .map(|(d, _, n)| (d, n));
        // `kwatch get pods`: kubectl's habit; kwatch takes the resource directly.
        let verb = arg.to_ascii_lowercase();
        let hint = if ["get", "describe", "list", "watch"].contains(&verb.as_str()) {
            Hint::KubectlVerb(verb)
        } else if let Some((gv, e)) = self.failed.first() {
            Hint::FailedDiscovery {
                group_version: gv.clone(),
                why: e.clone(),
            }
        } else {
            match best {
                Some((_, n)) => Hint::DidYouMean(n.clone()),
                None => Hint::ApiResources,
            }
        };
        Error::NoSuchResource {
            resource: crate::text::sanitize(arg).into_owned(),
            hint,
        }
    }
}

/// The names a resource answers to, plural first (the preferred suggestion on a tie).
fn names_of(r: &APIResource) -> Vec<(usize, String)> {
    if r.name.contains('/') {
        return Vec::new();
    }
    let mut v = vec![(0, r.name.clone()), (1, r.singular_name.clone())];
    v.extend(r.short_names.iter().flatten().map(|s| (2, s.clone())));
    v.retain(|(_, s)| !s.is_empty());
    v
}

/// The target `r` of `group`/`version` names; an error when it cannot be listed and watched.
pub(crate) fn target_of(r: &APIResource, group: &str, version: &str) -> Result<Target, Error> {
    for verb in ["list", "watch"] {
        if !r.verbs.iter().any(|v| v == verb) {
            return Err(Error::NotWatchable {
                verb,
                resource: r.name.clone(),
            });
        }
    }
    let api_version = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    let name = if group.is_empty() {
        r.name.clone()
    } else {
        format!("{}.{group}", r.name)
    };
    Ok(Target {
        resource: Resource {
            name,
            kind: r.kind.clone(),
            api_version,
            namespaced: r.namespaced,
        },
        group: group.to_owned(),
        version: version.to_owned(),
        plural: r.name.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_of_dotted_names() {
        let r = readings("deployments.v1.apps");
        assert_eq!(r[0].version.as_deref(), Some("v1"));
        assert_eq!(r[0].group.as_deref(), Some("apps"));
        assert_eq!(r[1].group.as_deref(), Some("v1.apps"));
        let r = readings("widgets.example.com");
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].group.as_deref(), Some("example.com"));
        assert_eq!(readings("po")[0].group, None);
        assert!(looks_like_version("v1") && looks_like_version("v2beta1"));
        assert!(
            !looks_like_version("example")
                && !looks_like_version("v")
                && !looks_like_version("vx1")
        );
    }

    #[test]
    fn matches_plural_singular_short_and_kind() {
        let r = APIResource {
            name: "pods".into(),
            singular_name: "pod".into(),
            kind: "Pod".into(),
            short_names: Some(vec!["po".into()]),
            namespaced: true,
            verbs: vec!["list".into(), "watch".into()],
            ..APIResource::default()
        };
        for n in ["pods", "pod", "po", "Pod", "POD"] {
            assert!(matches(&r, n), "{n}");
        }
        assert!(!matches(&r, "podz"));
        let t = target_of(&r, "", "v1").unwrap();
        assert_eq!(
            t.collection_path(Some("default")),
            "/api/v1/namespaces/default/pods"
        );
        assert_eq!(t.collection_path(None), "/api/v1/pods");
        // Defence in depth: a namespace that slipped past validation stays one segment.
        assert_eq!(
            t.collection_path(Some("qa-live?x=1")),
            "/api/v1/namespaces/qa-live%3Fx%3D1/pods"
        );
        assert_eq!(
            t.collection_path(Some("../x")),
            "/api/v1/namespaces/..%2Fx/pods"
        );
    }

    #[test]
    fn names_and_namespaces_are_validated_as_kubectl_does() {
        assert_eq!(
            validate_namespace("..")
                .unwrap_err()
                .to_string()
                .split(": pass")
                .next(),
            Some(r#"invalid namespace "..": [may not be '..']"#)
        );
        for bad in [
            "qa-live?x=1",
            "Team",
            "-a",
            "a-",
            "",
            "a_b",
            &"a".repeat(64),
        ] {
            assert!(validate_namespace(bad).is_err(), "{bad:?}");
        }
        for good in ["default", "kube-system", "a", "0", &"a".repeat(63)] {
            assert!(validate_namespace(good).is_ok(), "{good:?}");
        }
        // Each check, the value it refuses, and what its error says.
        type Validate = fn(&str) -> Result<(), Error>;
        let refusals: [(Validate, &str, &str); 4] = [
            (validate_namespace, ".", "[may not be '.']"),
            (
                validate_namespace,
                "a/b%c",
                "[may not contain '/', may not contain '%']",
            ),
            (validate_name, "..", "[may not be '..']"),
            (validate_name, "a%2F", "may not contain '%'"),
        ];
        for (validate, bad, says) in refusals {
            let err = validate(bad).unwrap_err().to_string();
            assert!(err.contains(says), "{bad:?}: {err}");
        }
        assert!(validate_name("").is_err());
        for good in ["web", "system:node:n1", "a.b", "x?y"] {
            assert!(validate_name(good).is_ok(), "{good:?}");
        }
        assert_eq!(segment("system:node"), "system%3Anode");
        assert_eq!(field_value(r"a,b=c\d"), r"a\,b\=c\\d");
        assert_eq!(segment("a.b-c_d~"), "a.b-c_d~");
    }
}
