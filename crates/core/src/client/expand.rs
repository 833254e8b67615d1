//! The RESOURCE list → the targets to watch, including the resources a request names as a
//! group rather than one by one, chosen from discovery as kubectl chooses them:
//!
//! - `all`, alone or as a part of the list (`kwatch all,cm`, as `kubectl get all,cm`), is
//!   discovery's category `all`: every resource whose entry lists that category (legacy
//!   `APIResource.categories` or aggregated discovery's `categories`, which
//!   [`crate::client::discovery`] both keep), in discovery order — the core group, then the groups
//!   in the server's order, each group's versions in the server's order (client-go
//!   `restmapper.discoveryCategoryExpander`) —, once per group/resource (cli-runtime's
//!   `SplitResourceArgument`), at the first version in the group's order of preference
//!   that serves it (the REST mapper). As kubectl 1.32 has no built-in list for `all`, a
//!   server whose discovery puts nothing in it is told so.
//! - `--every-resource` ([`Every`]): every resource that allows list and watch, no
//!   subresources, once per group/resource at that same version, in that same order;
//!   only namespaced ones when one namespace is watched (cluster-scoped resources would
//!   say nothing about it). Events are left out unless named (`kwatch --every-resource
//!   events`): `events` and `events.events.k8s.io` are one object store served by two
//!   groups, and a busy cluster's events would drown every other change.
//!
//! Invariant: the targets come out in that order, each once.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{APIResource, APIResourceList};

use crate::client::discovery::Discovery;
use crate::client::http::notice;
use crate::client::target::{target_of, Resolver, Target};
use crate::text::sanitize;

/// Why the RESOURCE list could not be resolved.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// One argument of the list, with why it could not be resolved.
    #[error("resolving {arg:?}")]
    Resolving {
        /// The argument, sanitized.
        arg: String,
        #[source]
        source: crate::client::target::Error,
    },
    #[error(
        "the server doesn't have a resource type \"all\": its discovery puts no resource \
         in the category \"all\"; name the resources instead, e.g. `kwatch pods,services`"
    )]
    NothingInAll,
    #[error(
        "the server serves no resource that can be listed and watched here: name one, e.g. \
         `kwatch pods`"
    )]
    NothingToWatch,
    #[error(transparent)]
    Discovery(#[from] crate::client::discovery::Error),
}

/// The category `kubectl get all` expands.
pub const ALL: &str = "all";

/// `--every-resource`: every resource that allows list and watch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Every {
    /// One namespace is watched: leave cluster-scoped resources out.
    pub namespaced_only: bool,
}

/// Whether `list` names the category `all` (as one of its comma-separated parts).
pub fn names_all(list: &str) -> bool {
    list.split(',').any(|p| p.trim() == ALL)
}

/// One served group: its name (`""` for the core group), its preferred version, and the
/// resource list of each version whose discovery answered, in the server's order.
#[derive(Debug)]
struct Group {
    name: String,
    preferred: String,
    lists: Vec<APIResourceList>,
}

impl Group {
    /// The version of a group-version (`v1`, `apps/v1`).
    fn version(list: &APIResourceList) -> &str {
        let gv = list.group_version.as_str();
        gv.rsplit_once('/').map_or(gv, |(_, v)| v)
    }

    /// `resource`'s entry at the first version in the order of preference (the preferred
    /// version, then the others in the server's order) that serves it.
    fn entry(&self, resource: &str) -> Option<(&APIResource, &str)> {
        let preferred = self
            .lists
            .iter()
            .filter(|l| Group::version(l) == self.preferred);
        let others = self
            .lists
            .iter()
            .filter(|l| Group::version(l) != self.preferred);
        preferred.chain(others).find_map(|l| {
            let r = l.resources.iter().find(|r| r.name == resource)?;
            Some((r, Group::version(l)))
        })
    }
}

/// Every group/resource the groups serve (no subresources), in discovery order, once each.
fn walk(groups: &[Group]) -> Vec<(&Group, &str)> {
    let mut out: Vec<(&Group, &str)> = Vec::new();
    for g in groups {
        for r in g.lists.iter().flat_map(|l| &l.resources) {
            let seen = out.iter().any(|(og, n)| og.name == g.name && *n == r.name);
            if !r.name.contains('/') && !seen {
                out.push((g, r.name.as_str()));
            }
        }
    }
    out
}

/// The members of `category`: a resource belongs when any of its versions lists it.
fn category(groups: &[Group], category: &str) -> Vec<Target> {
    let member = |g: &Group, name: &str| {
        g.lists
            .iter()
            .flat_map(|l| &l.resources)
            .any(|r| r.name == name && r.categories.iter().flatten().any(|c| c == category))
    };
    walk(groups)
        .into_iter()
        .filter(|&(g, name)| member(g, name))
        .filter_map(|(g, name)| {
            let (r, version) = g.entry(name)?;
            target_of(r, &g.name, version)
                .map_err(|e| notice(&format!("leaving {name} out of `{category}`: {e}")))
                .ok()
        })
        .collect()
}

/// `--every-resource`'s resources (see the module docs).
fn every(groups: &[Group], every: Every) -> Vec<Target> {
    let allows = |r: &APIResource, verb: &str| r.verbs.iter().any(|v| v == verb);
    walk(groups)
        .into_iter()
        .filter(|(g, name)| !(*name == "events" && matches!(g.name.as_str(), "" | "events.k8s.io")))
        .filter_map(|(g, name)| {
            let (r, version) = g.entry(name)?;
            let wanted =
                allows(r, "list") && allows(r, "watch") && (r.namespaced || !every.namespaced_only);
            wanted
                .then(|| target_of(r, &g.name, version).ok())
                .flatten()
        })
        .collect()
}

/// Every served group with its resource lists, the core group first. A group-version
/// whose discovery fails is left out with a warning, as kubectl goes on without it.
async fn served(r: &mut Resolver) -> Result<Vec<Group>, Error> {
    let mut groups = vec![Group {
        name: String::new(),
        preferred: "v1".to_owned(),
        lists: Vec::new(),
    }];
    let mut versions = vec![vec!["v1".to_owned()]];
    for g in r.discovery().groups().await? {
        let preferred = g.preferred_version.as_ref().or(g.versions.first());
        let Some(preferred) = preferred else { continue };
        groups.push(Group {
            name: g.name.clone(),
            preferred: preferred.version.clone(),
            lists: Vec::new(),
        });
        versions.push(g.versions.iter().map(|v| v.group_version.clone()).collect());
    }
    for (g, gvs) in groups.iter_mut().zip(versions) {
        for gv in gvs {
            if let Some(resources) = r.resources(&gv).await {
                g.lists.push(APIResourceList {
                    group_version: gv,
                    resources: resources.to_vec(),
                });
            }
        }
    }
    Ok(groups)
}

/// The members of the category `all`; documents from the disk cache that put nothing in
/// it are asked of the server again first, as a resource name the cache lacks is.
async fn expand_all(r: &mut Resolver) -> Result<Vec<Target>, Error> {
    let found = category(&served(r).await?, ALL);
    if !found.is_empty() || !r.discovery().from_cache() {
        return Ok(found);
    }
    r.discovery().invalidate();
    Ok(category(&served(r).await?, ALL))
}

/// Resolves the comma-separated RESOURCE list (`all` expanded), after `--every-resource`'s
/// resources when asked; the order kept, repeats dropped.
pub async fn targets(
    docs: Discovery,
    list: &str,
    every_resource: Option<Every>,
) -> Result<Vec<Target>, Error> {
    let mut r = Resolver::new(docs);
    let mut out: Vec<Target> = Vec::new();
    if let Some(e) = every_resource {
        out = every(&served(&mut r).await?, e);
    }
    // With --every-resource the list may be empty; otherwise an empty name is refused.
    let parts = list.split(',').map(str::trim);
    for arg in parts.filter(|a| !a.is_empty() || every_resource.is_none()) {
        let found = if arg == ALL {
            let all = expand_all(&mut r).await?;
            if all.is_empty() {
                return Err(Error::NothingInAll);
            }
            all
        } else {
            let t = r.resolve(arg).await.map_err(|source| Error::Resolving {
                arg: sanitize(arg).into_owned(),
                source,
            })?;
            vec![t]
        };
        for t in found {
            if !out.contains(&t) {
                out.push(t);
            }
        }
    }
    if out.is_empty() {
        return Err(Error::NothingToWatch);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use kube::core::discovery::v2::APIGroupDiscoveryList;

    use super::*;

    /// kube-apiserver 1.32's aggregated discovery (`/api`, `/apis`), as captured.
    fn real_aggregated() -> Vec<Group> {
        let core: APIGroupDiscoveryList = serde_json::from_str(include_str!(
            "../../testdata/discovery/aggregated-api-1.32.json"
        ))
        .unwrap();
        let apis: APIGroupDiscoveryList = serde_json::from_str(include_str!(
            "../../testdata/discovery/aggregated-apis-1.32.json"
        ))
        .unwrap();
        let (_, core_lists) = crate::client::discovery::split_aggregated(core);
        let (groups, lists) = crate::client::discovery::split_aggregated(apis);
        let mut out = vec![Group {
            name: String::new(),
            preferred: "v1".into(),
            lists: core_lists,
        }];
        for g in groups {
            let gvs: Vec<String> = g.versions.iter().map(|v| v.group_version.clone()).collect();
            out.push(Group {
                preferred: g.preferred_version.unwrap().version,
                name: g.name,
                lists: gvs
                    .iter()
                    .filter_map(|gv| lists.iter().find(|l| &l.group_version == gv).cloned())
                    .collect(),
            });
        }
        out
    }

    fn names(targets: &[Target]) -> Vec<String> {
        targets
            .iter()
            .map(|t| format!("{}@{}", t.resource.name, t.version))
            .collect()
    }

    /// What `all` lists from the core and apps groups of a 1.32 server, in order.
    const CORE_AND_APPS: [&str; 7] = [
        "pods@v1",
        "replicationcontrollers@v1",
        "services@v1",
        "daemonsets.apps@v1",
        "deployments.apps@v1",
        "replicasets.apps@v1",
        "statefulsets.apps@v1",
    ];

    #[test]
    fn all_is_what_kubectl_get_all_lists_on_a_real_1_32_server() {
        assert_eq!(
            names(&category(&real_aggregated(), ALL)),
            [
                &CORE_AND_APPS[..],
                &[
                    // Listed with `all` in v2 and v1: once, at the preferred v2.
                    "horizontalpodautoscalers.autoscaling@v2",
                    "cronjobs.batch@v1",
                    "jobs.batch@v1",
                ],
            ]
            .concat()
        );
        let api_extensions = category(&real_aggregated(), "api-extensions");
        assert_eq!(
            names(&api_extensions)[..2],
            [
                "apiservices.apiregistration.k8s.io@v1",
                "mutatingwebhookconfigurations.admissionregistration.k8s.io@v1"
            ]
        );
    }

    #[test]
    fn the_legacy_documents_categories_count_too() {
        let core: APIResourceList =
            serde_json::from_str(include_str!("../../testdata/discovery/api-v1-1.32.json"))
                .unwrap();
        let apps: APIResourceList = serde_json::from_str(include_str!(
            "../../testdata/discovery/apis-apps-v1-1.32.json"
        ))
        .unwrap();
        let groups = [("", core), ("apps", apps)].map(|(name, list)| Group {
            name: name.into(),
            preferred: "v1".into(),
            lists: vec![list],
        });
        assert_eq!(names(&category(&groups, ALL)), CORE_AND_APPS);
    }

    #[test]
    fn every_resource_lists_and_watches_without_events_or_subresources() {
        let groups = real_aggregated();
        let namespaced = names(&every(
            &groups,
            Every {
                namespaced_only: true,
            },
        ));
        let all = names(&every(
            &groups,
            Every {
                namespaced_only: false,
            },
        ));
        for want in [
            "configmaps@v1",
            "secrets@v1",
            "pods@v1",
            "deployments.apps@v1",
            "horizontalpodautoscalers.autoscaling@v2",
            "leases.coordination.k8s.io@v1",
            "widgets.example.com@v1",
        ] {
            assert!(
                namespaced.contains(&want.to_owned()),
                "{want}: {namespaced:?}"
            );
            assert!(all.contains(&want.to_owned()), "{want}: {all:?}");
        }
        for cluster in [
            "nodes@v1",
            "namespaces@v1",
            "clusterroles.rbac.authorization.k8s.io@v1",
        ] {
            assert!(!namespaced.contains(&cluster.to_owned()), "{cluster}");
            assert!(all.contains(&cluster.to_owned()), "{cluster}");
        }
        // Neither `events` nor `events.events.k8s.io`.
        for list in [&namespaced, &all] {
            assert!(!list.iter().any(|n| n.starts_with("events")), "{list:?}");
        }
        // No subresource, nothing that cannot be watched (bindings: create only;
        // componentstatuses: get and list; the *reviews: create only).
        for n in &all {
            assert!(!n.contains('/'), "{n}");
        }
        for gone in [
            "bindings@v1",
            "componentstatuses@v1",
            "tokenreviews.authentication.k8s.io@v1",
            "selfsubjectaccessreviews.authorization.k8s.io@v1",
        ] {
            assert!(!all.contains(&gone.to_owned()), "{gone}");
        }
        // Once per group/resource, core first, in discovery order.
        let unique: std::collections::HashSet<&String> = all.iter().collect();
        assert_eq!(unique.len(), all.len());
        assert_eq!(all[0], "configmaps@v1");
        let hpa = all
            .iter()
            .filter(|n| n.starts_with("horizontalpodautoscalers"))
            .count();
        assert_eq!(hpa, 1);
        assert!(
            all.iter().position(|n| n == "pods@v1")
                < all.iter().position(|n| n == "deployments.apps@v1")
        );
    }

    #[test]
    fn all_is_recognized_as_a_part_of_the_list() {
        assert!(names_all("all"));
        assert!(names_all("all,cm"));
        assert!(names_all("cm, all"));
        assert!(!names_all("pods,svc"));
        assert!(!names_all("allx"));
        assert!(!names_all(""));
    }
}
