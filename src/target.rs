//! Target resolution: what the user typed (`po`, `Pod`, `deployments.apps`,
//! `widgets.v1.example.com`) → an API resource, through the server's discovery
//! documents (kube's low-level discovery calls). Only what the argument needs is asked
//! for: a named group's resource list alone; without a group, the core group first and
//! the other groups only if the core group does not have it.

use std::collections::HashMap;

use anyhow::{anyhow, bail, Context, Result};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{APIGroup, APIResource, APIResourceList};

use crate::output::Resource;

/// A resolved, watchable resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub resource: Resource,
    pub group: String,
    pub version: String,
    pub plural: String,
}

impl Target {
    /// The collection URL path: all namespaces (or a cluster-scoped resource) when
    /// `namespace` is `None`.
    pub fn collection_path(&self, namespace: Option<&str>) -> String {
        let base = if self.group.is_empty() {
            format!("/api/{}", self.version)
        } else {
            format!("/apis/{}/{}", self.group, self.version)
        };
        match namespace {
            Some(ns) if self.resource.namespaced => {
                format!("{base}/namespaces/{ns}/{}", self.plural)
            }
            _ => format!("{base}/{}", self.plural),
        }
    }
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

/// Discovery documents fetched so far (each at most once per run).
pub struct Discovery {
    client: kube::Client,
    core: Option<APIResourceList>,
    groups: Option<Vec<APIGroup>>,
    lists: HashMap<String, APIResourceList>,
}

impl Discovery {
    pub fn new(client: kube::Client) -> Discovery {
        Discovery {
            client,
            core: None,
            groups: None,
            lists: HashMap::new(),
        }
    }

    async fn core(&mut self) -> Result<&APIResourceList> {
        if self.core.is_none() {
            let list = self
                .client
                .list_core_api_resources("v1")
                .await
                .map_err(discovery_error)?;
            self.core = Some(list);
        }
        self.core
            .as_ref()
            .ok_or_else(|| anyhow!("core discovery missing"))
    }

    async fn groups(&mut self) -> Result<&[APIGroup]> {
        if self.groups.is_none() {
            let g = self
                .client
                .list_api_groups()
                .await
                .map_err(discovery_error)?;
            self.groups = Some(g.groups);
        }
        Ok(self.groups.as_deref().unwrap_or_default())
    }

    async fn group_version(&mut self, gv: &str) -> Result<&APIResourceList> {
        if !self.lists.contains_key(gv) {
            let list = self
                .client
                .list_api_group_resources(gv)
                .await
                .map_err(discovery_error)?;
            self.lists.insert(gv.to_owned(), list);
        }
        self.lists
            .get(gv)
            .ok_or_else(|| anyhow!("discovery of {gv} missing"))
    }

    /// The group-versions to search for `spec`, in kubectl's priority order.
    async fn candidates(&mut self, spec: &Spec) -> Result<Vec<String>> {
        let groups = self.groups().await?;
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

    /// Resolves one argument.
    pub async fn resolve(&mut self, arg: &str) -> Result<Target> {
        if arg.is_empty() {
            bail!("empty resource name: name a resource, e.g. `kwatch pods`");
        }
        for spec in readings(arg) {
            let core_applies = spec.group.as_deref().is_none_or(str::is_empty)
                && spec.version.as_deref().is_none_or(|v| v == "v1");
            if core_applies {
                if let Some(r) = self
                    .core()
                    .await?
                    .resources
                    .iter()
                    .find(|r| matches(r, &spec.name))
                {
                    return target_of(r, "", "v1");
                }
            }
            for gv in self.candidates(&spec).await? {
                let list = self.group_version(&gv).await?;
                if let Some(r) = list.resources.iter().find(|r| matches(r, &spec.name)) {
                    let (group, version) = gv.split_once('/').unwrap_or(("", gv.as_str()));
                    return target_of(r, group, version);
                }
            }
        }
        Err(self.unknown(arg).await)
    }

    /// `the server doesn't have a resource type "podz"`, with a suggestion when one is close.
    async fn unknown(&mut self, arg: &str) -> anyhow::Error {
        let mut names: Vec<(usize, String)> = Vec::new();
        if let Ok(core) = self.core().await {
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
                if let Ok(list) = self.group_version(&gv).await {
                    names.extend(list.resources.iter().flat_map(names_of));
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
        let msg = format!(
            "the server doesn't have a resource type {:?}",
            crate::output::sanitize::sanitize(arg)
        );
        match best {
            Some((_, n)) => anyhow!("{msg}; did you mean {n:?}?"),
            None => anyhow!("{msg}; list the served types with `kubectl api-resources`"),
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

fn target_of(r: &APIResource, group: &str, version: &str) -> Result<Target> {
    for verb in ["list", "watch"] {
        if !r.verbs.iter().any(|v| v == verb) {
            bail!(
                "the server does not allow {verb} on {}: kwatch can only watch resources that support list and watch",
                r.name
            );
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

fn discovery_error(e: kube::Error) -> anyhow::Error {
    anyhow::Error::new(e).context("API discovery failed")
}

/// Resolves a comma-separated list, keeping the order and dropping repeats.
pub async fn resolve_all(client: &kube::Client, list: &str) -> Result<Vec<Target>> {
    let mut d = Discovery::new(client.clone());
    let mut out: Vec<Target> = Vec::new();
    for arg in list.split(',').map(str::trim) {
        let t = d
            .resolve(arg)
            .await
            .with_context(|| format!("resolving {:?}", crate::output::sanitize::sanitize(arg)))?;
        if !out.contains(&t) {
            out.push(t);
        }
    }
    Ok(out)
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
    }
}
