//! The server's discovery documents, got as kubectl gets them: aggregated discovery (`/api`
//! and `/apis` answer with every resource of every version) when the server offers it, else
//! the legacy documents, one request per group-version; through kubectl's disk cache
//! (`<cache-dir>/discovery/<host>/`: `servergroups.json`, `<group-version>/serverresources.json`,
//! each valid for [`CACHE_TTL`] after it was written), read and written in kubectl's format,
//! so either tool warms the cache for the other.
//!
//! Invariants: a document is fetched at most once per [`Discovery`] unless
//! [`Discovery::invalidate`] is called; `servergroups.json` is written only with the core
//! group in it (kubectl reads the core group from it too).

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    APIGroup, APIGroupList, APIResource, APIResourceList, APIVersions, GroupVersionForDiscovery,
};
use kube::core::discovery::v2::{APIGroupDiscoveryList, ACCEPT_AGGREGATED_DISCOVERY_V2};
use serde::{de::DeserializeOwned, Serialize};

use crate::cache::listwatch::SourceError;
use crate::client::http::notice;

/// Why discovery failed: each message starts `API discovery failed` and names the
/// document; a failed request keeps its [`SourceError`] as the cause.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("API discovery failed: GET {path}")]
    Get {
        path: String,
        #[source]
        source: SourceError,
    },
    #[error("API discovery failed: {path} is not a resource list")]
    NotAResourceList {
        path: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("API discovery failed: {path} is not a discovery document")]
    NotADiscoveryDocument {
        path: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("API discovery failed: /api answered with a group list")]
    ApiAnsweredGroups,
    #[error("API discovery failed: /apis answered with /api's document")]
    ApisAnsweredVersions,
    #[error("API discovery failed: the server did not describe {0}")]
    NotDescribed(String),
}

/// How long a cached document is used: kubectl's discovery cache TTL.
pub const CACHE_TTL: Duration = Duration::from_secs(6 * 3600);

/// kubectl's cache directory for the server at `server_url` (client-go's
/// `computeDiscoverCacheDir`): the URL without its scheme, every character other than
/// `[A-Za-z0-9_/.()]` replaced by `_`, under `<cache_dir>/discovery`.
pub fn cache_dir(cache_dir: &Path, server_url: &str) -> PathBuf {
    let host = server_url
        .replacen("https://", "", 1)
        .replacen("http://", "", 1);
    let safe: String = host
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_/.()".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    // Go's filepath.Join cleans the result; `..` never leaves the discovery directory.
    let mut dir = cache_dir.join("discovery");
    let mut depth = 0;
    for part in safe.split('/') {
        match part {
            "" | "." => {}
            ".." if depth > 0 => {
                dir.pop();
                depth -= 1;
            }
            ".." => {}
            p => {
                dir.push(p);
                depth += 1;
            }
        }
    }
    dir
}

/// kubectl's default cache directory, `~/.kube/cache` (`$KUBECACHEDIR` is `--cache-dir`'s).
pub fn default_cache_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .map(|h| Path::new(&h).join(".kube").join("cache"))
}

/// One server's directory in the disk cache.
struct DiskCache {
    dir: PathBuf,
}

impl DiskCache {
    /// The document at `rel`, if it was written less than [`CACHE_TTL`] ago and decodes.
    fn read<T: DeserializeOwned>(&self, rel: &str) -> Option<T> {
        let path = self.dir.join(rel);
        let age = std::fs::metadata(&path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| SystemTime::now().duration_since(t).ok())?;
        if age > CACHE_TTL {
            tracing::debug!("discovery cache {} expired", path.display());
            return None;
        }
        let doc = std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
        if doc.is_some() {
            tracing::debug!("discovery from the cache: {}", path.display());
        }
        doc
    }

    /// Writes `doc` at `rel` as kubectl does (directories 0750, file 0660 whatever the
    /// umask, replaced atomically). A cache that cannot be written is only logged.
    fn write<T: Serialize>(&self, rel: &str, doc: &T) {
        if let Err(e) = self.try_write(rel, doc) {
            tracing::debug!("cannot write the discovery cache {rel}: {e}");
        }
    }

    fn try_write<T: Serialize>(&self, rel: &str, doc: &T) -> std::io::Result<()> {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        let path = self.dir.join(rel);
        let dir = path
            .parent()
            .ok_or_else(|| std::io::Error::other("no parent directory"))?;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o750)
            .create(dir)?;
        let tmp = dir.join(format!(
            ".{}.{}",
            path.file_name().and_then(|n| n.to_str()).unwrap_or("doc"),
            std::process::id()
        ));
        let bytes = serde_json::to_vec(doc)?;
        let written = std::fs::File::create(&tmp)
            .and_then(|mut f| f.write_all(&bytes))
            .and_then(|()| std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o660)))
            .and_then(|()| std::fs::rename(&tmp, &path));
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written
    }
}

/// A root discovery document (`/api` or `/apis`) in whichever form the server chose.
enum Root {
    Aggregated(APIGroupDiscoveryList),
    Versions(APIVersions),
    Groups(APIGroupList),
}

/// The connection discovery documents are fetched over.
#[derive(Clone)]
pub struct Server {
    pub client: kube::Client,
    /// `--request-timeout`, for each request.
    pub request_timeout: Option<Duration>,
}

impl Server {
    /// GETs `path` through the request layer; a failure keeps its [`SourceError`] as the
    /// cause (the error's first line says which document).
    async fn get(&self, path: &str, accept: &str) -> Result<Vec<u8>, Error> {
        crate::client::source::get_document(&self.client, path, accept, self.request_timeout)
            .await
            .map_err(|source| Error::Get {
                path: path.to_owned(),
                source,
            })
    }

    /// A legacy resource list: `/api/v1` or `/apis/GROUP/VERSION`.
    async fn resource_list(&self, gv: &str) -> Result<APIResourceList, Error> {
        let path = if gv.contains('/') {
            format!("/apis/{gv}")
        } else {
            format!("/api/{gv}")
        };
        let body = self.get(&path, "application/json").await?;
        serde_json::from_slice(&body).map_err(|source| Error::NotAResourceList { path, source })
    }
}

/// GET `path`, offering aggregated discovery first, as kubectl does.
async fn get_root(server: &Server, path: &str) -> Result<Root, Error> {
    let body = server.get(path, ACCEPT_AGGREGATED_DISCOVERY_V2).await?;
    let text = String::from_utf8_lossy(&body);
    #[derive(serde::Deserialize)]
    struct Head {
        #[serde(default)]
        kind: String,
    }
    let decode = || -> serde_json::Result<Root> {
        Ok(match serde_json::from_str::<Head>(&text)?.kind.as_str() {
            "APIGroupDiscoveryList" => Root::Aggregated(serde_json::from_str(&text)?),
            "APIVersions" => Root::Versions(serde_json::from_str(&text)?),
            _ => Root::Groups(serde_json::from_str(&text)?),
        })
    };
    decode().map_err(|source| Error::NotADiscoveryDocument {
        path: path.to_owned(),
        source,
    })
}

fn group_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    }
}

/// An aggregated document as kubectl's cache holds it: the groups (versions in the server's
/// order of preference) and a resource list per group-version that is not stale.
pub(crate) fn split_aggregated(
    list: APIGroupDiscoveryList,
) -> (Vec<APIGroup>, Vec<APIResourceList>) {
    let mut groups = Vec::new();
    let mut lists = Vec::new();
    for item in list.items {
        let name = item.metadata.and_then(|m| m.name).unwrap_or_default();
        let mut versions = Vec::new();
        for v in item.versions {
            let Some(version) = v.version.filter(|v| !v.is_empty()) else {
                continue;
            };
            let gv = group_version(&name, &version);
            versions.push(GroupVersionForDiscovery {
                group_version: gv.clone(),
                version,
            });
            if v.freshness.as_deref() == Some("Stale") {
                notice(&format!(
                    "the server's discovery of {gv} is stale; skipping it"
                ));
                continue;
            }
            let mut resources = Vec::new();
            for r in v.resources {
                let parent = convert_resource(r.resource.unwrap_or_default(), &r.response_kind);
                let parent = APIResource {
                    singular_name: r.singular_resource.unwrap_or_default(),
                    namespaced: r.scope.as_deref() == Some("Namespaced"),
                    verbs: r.verbs,
                    short_names: Some(r.short_names).filter(|s| !s.is_empty()),
                    categories: Some(r.categories).filter(|c| !c.is_empty()),
                    ..parent
                };
                let subs: Vec<APIResource> = r
                    .subresources
                    .into_iter()
                    .map(|s| APIResource {
                        singular_name: parent.singular_name.clone(),
                        namespaced: parent.namespaced,
                        verbs: s.verbs,
                        ..convert_resource(
                            format!("{}/{}", parent.name, s.subresource.unwrap_or_default()),
                            &s.response_kind,
                        )
                    })
                    .collect();
                resources.push(parent);
                resources.extend(subs);
            }
            lists.push(APIResourceList {
                group_version: gv,
                resources,
            });
        }
        if let Some(preferred) = versions.first().cloned() {
            groups.push(APIGroup {
                name,
                preferred_version: Some(preferred),
                server_address_by_client_cidrs: None,
                versions,
            });
        }
    }
    (groups, lists)
}

/// A resource named `name` whose objects are `kind` (group and version set only when they
/// differ from the containing group-version, as the server sends them).
fn convert_resource(
    name: String,
    kind: &Option<kube::core::discovery::v2::GroupVersionKind>,
) -> APIResource {
    let non_empty = |s: &Option<String>| s.clone().filter(|s| !s.is_empty());
    APIResource {
        name,
        kind: kind
            .as_ref()
            .and_then(|k| k.kind.clone())
            .unwrap_or_default(),
        group: kind.as_ref().and_then(|k| non_empty(&k.group)),
        version: kind.as_ref().and_then(|k| non_empty(&k.version)),
        ..APIResource::default()
    }
}

/// The core group as `servergroups.json` lists it (client-go: first, name "").
fn core_group(versions: &[String]) -> Option<APIGroup> {
    let versions: Vec<GroupVersionForDiscovery> = versions
        .iter()
        .map(|v| GroupVersionForDiscovery {
            group_version: v.clone(),
            version: v.clone(),
        })
        .collect();
    Some(APIGroup {
        name: String::new(),
        preferred_version: Some(versions.first()?.clone()),
        server_address_by_client_cidrs: None,
        versions,
    })
}

/// An `APIGroupList` as client-go writes it: the groups without their own `kind` and
/// `apiVersion` (which k8s-openapi's `APIGroup` adds).
fn group_list<'a>(groups: impl Iterator<Item = &'a APIGroup>) -> serde_json::Value {
    let groups: Vec<serde_json::Value> = groups
        .map(|g| {
            serde_json::json!({
                "name": g.name,
                "versions": g.versions,
                "preferredVersion": g.preferred_version,
            })
        })
        .collect();
    serde_json::json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

fn cache_file(gv: &str) -> String {
    format!("{gv}/serverresources.json")
}

const GROUPS_FILE: &str = "servergroups.json";

/// Discovery documents of one server, each fetched at most once.
pub struct Discovery {
    server: Server,
    cache: Option<DiskCache>,
    /// The disk cache may be read (false after [`Discovery::invalidate`]).
    read_cache: bool,
    /// Some document in hand came from the disk cache.
    from_cache: bool,
    /// The core group's versions, once `/api` has been fetched.
    core_versions: Option<Vec<String>>,
    /// The groups other than the core group.
    groups: Option<Vec<APIGroup>>,
    lists: HashMap<String, APIResourceList>,
}

impl Discovery {
    /// `cache`: the server's directory in kubectl's discovery cache ([`cache_dir`]), or
    /// `None` to use none.
    pub fn new(server: Server, cache: Option<PathBuf>) -> Discovery {
        Discovery {
            server,
            cache: cache.map(|dir| DiskCache { dir }),
            read_cache: true,
            from_cache: false,
            core_versions: None,
            groups: None,
            lists: HashMap::new(),
        }
    }

    /// Whether some document in hand came from the disk cache (and so may be out of date).
    pub fn from_cache(&self) -> bool {
        self.from_cache
    }

    /// Forgets every document; from now on they come from the server (and are cached
    /// again), as kubectl does when the cache does not know a resource.
    pub fn invalidate(&mut self) {
        tracing::debug!("discovery: asking the server again");
        self.read_cache = false;
        self.from_cache = false;
        self.core_versions = None;
        self.groups = None;
        self.lists.clear();
    }

    fn cached<T: DeserializeOwned>(&mut self, rel: &str) -> Option<T> {
        let doc = self.cache.as_ref().filter(|_| self.read_cache)?.read(rel)?;
        self.from_cache = true;
        Some(doc)
    }

    fn store(&mut self, list: APIResourceList) {
        if let Some(c) = &self.cache {
            c.write(&cache_file(&list.group_version), &list);
        }
        self.lists.insert(list.group_version.clone(), list);
    }

    /// Takes `/api` as fetched: the core versions, and their resources if aggregated.
    fn take_core(&mut self, root: Root) -> Result<(), Error> {
        match root {
            Root::Aggregated(list) => {
                let (groups, lists) = split_aggregated(list);
                self.core_versions = Some(
                    groups
                        .into_iter()
                        .flat_map(|g| g.versions)
                        .map(|v| v.version)
                        .collect(),
                );
                lists.into_iter().for_each(|l| self.store(l));
            }
            Root::Versions(v) => self.core_versions = Some(v.versions),
            Root::Groups(_) => return Err(Error::ApiAnsweredGroups),
        }
        Ok(())
    }

    /// The resources of `gv` (`v1` for the core group, `group/version` otherwise).
    pub async fn resources(&mut self, gv: &str) -> Result<&APIResourceList, Error> {
        if !self.lists.contains_key(gv) {
            if let Some(list) = self.cached::<APIResourceList>(&cache_file(gv)) {
                self.lists.insert(gv.to_owned(), list);
            } else {
                let core = !gv.contains('/');
                if core && self.core_versions.is_none() {
                    let root = get_root(&self.server, "/api").await?;
                    self.take_core(root)?;
                }
                if !self.lists.contains_key(gv) {
                    let list = self.server.resource_list(gv).await?;
                    self.store(list);
                }
            }
        }
        self.lists
            .get(gv)
            .ok_or_else(|| Error::NotDescribed(gv.to_owned()))
    }

    /// The groups other than the core group, in the server's order.
    pub async fn groups(&mut self) -> Result<&[APIGroup], Error> {
        if self.groups.is_none() {
            if let Some(list) = self.cached::<APIGroupList>(GROUPS_FILE) {
                self.groups = Some(
                    list.groups
                        .into_iter()
                        .filter(|g| !g.name.is_empty())
                        .collect(),
                );
            } else {
                self.fetch_groups().await?;
            }
        }
        Ok(self.groups.as_deref().unwrap_or_default())
    }

    /// `/apis`, and `/api` beside it when not yet fetched (the cached group list holds both).
    async fn fetch_groups(&mut self) -> Result<(), Error> {
        let need_core = self.core_versions.is_none();
        let (apis, api) = tokio::join!(get_root(&self.server, "/apis"), async {
            match need_core {
                true => Some(get_root(&self.server, "/api").await),
                false => None,
            }
        });
        if let Some(api) = api {
            self.take_core(api?)?;
        }
        let groups = match apis? {
            Root::Aggregated(list) => {
                let (groups, lists) = split_aggregated(list);
                lists.into_iter().for_each(|l| self.store(l));
                groups
            }
            Root::Groups(list) => list.groups,
            Root::Versions(_) => return Err(Error::ApisAnsweredVersions),
        };
        if let (Some(cache), Some(core)) = (
            &self.cache,
            self.core_versions.as_deref().and_then(core_group),
        ) {
            cache.write(
                GROUPS_FILE,
                &group_list(std::iter::once(&core).chain(&groups)),
            );
        }
        self.groups = Some(groups);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_dir_is_kubectls() {
        let base = Path::new("/h/.kube/cache");
        assert_eq!(
            cache_dir(base, "https://127.0.0.1:6443/"),
            Path::new("/h/.kube/cache/discovery/127.0.0.1_6443")
        );
        assert_eq!(
            cache_dir(base, "https://rancher.example.com/k8s/clusters/c-m-1"),
            Path::new("/h/.kube/cache/discovery/rancher.example.com/k8s/clusters/c_m_1")
        );
        assert_eq!(
            cache_dir(base, "http://[::1]:8080"),
            Path::new("/h/.kube/cache/discovery/___1__8080")
        );
        assert_eq!(
            cache_dir(base, "https://h/../../../etc"),
            Path::new("/h/.kube/cache/discovery/etc")
        );
    }

    #[test]
    fn aggregated_documents_split_as_client_go_does() {
        let list: APIGroupDiscoveryList = serde_json::from_str(include_str!(
            "../../testdata/discovery/aggregated-apis-1.32.json"
        ))
        .unwrap();
        let (groups, lists) = split_aggregated(list);
        let apps = groups.iter().find(|g| g.name == "apps").unwrap();
        assert_eq!(
            apps.preferred_version.as_ref().unwrap().group_version,
            "apps/v1"
        );
        let apps_v1 = lists.iter().find(|l| l.group_version == "apps/v1").unwrap();
        let names: Vec<&str> = apps_v1.resources.iter().map(|r| r.name.as_str()).collect();
        // kube-apiserver's order (alphabetical), each resource followed by its subresources.
        let top: Vec<&str> = names.iter().copied().filter(|n| !n.contains('/')).collect();
        assert_eq!(
            top,
            [
                "controllerrevisions",
                "daemonsets",
                "deployments",
                "replicasets",
                "statefulsets"
            ]
        );
        let at = names.iter().position(|n| *n == "deployments").unwrap();
        assert_eq!(
            names[at..at + 3],
            ["deployments", "deployments/scale", "deployments/status"]
        );
        let deploy = &apps_v1.resources[at];
        assert_eq!(
            (deploy.kind.as_str(), deploy.singular_name.as_str()),
            ("Deployment", "deployment")
        );
        assert!(deploy.namespaced && deploy.group.is_none());
        assert_eq!(
            deploy.short_names.as_deref(),
            Some(&["deploy".to_owned()][..])
        );
        assert_eq!(
            deploy.categories.as_deref(),
            Some(&["all".to_owned()][..]),
            "aggregated discovery's categories are kept"
        );
        let scale = &apps_v1.resources[at + 1];
        assert_eq!(
            (
                scale.group.as_deref(),
                scale.version.as_deref(),
                scale.kind.as_str()
            ),
            (Some("autoscaling"), Some("v1"), "Scale")
        );
        assert_eq!(scale.singular_name, "deployment");
    }

    #[test]
    fn stale_versions_are_listed_without_resources() {
        let list: APIGroupDiscoveryList = serde_json::from_value(serde_json::json!({
            "items": [{"metadata": {"name": "example.com"}, "versions": [
                {"version": "v2", "freshness": "Stale", "resources": [{"resource": "a"}]},
                {"version": "v1", "freshness": "Current", "resources": [{"resource": "b"}]}
            ]}]
        }))
        .unwrap();
        let (groups, lists) = split_aggregated(list);
        assert_eq!(groups[0].versions.len(), 2);
        assert_eq!(lists.len(), 1);
        assert_eq!(lists[0].group_version, "example.com/v1");
    }

    #[test]
    fn cache_round_trip_and_ttl() {
        let dir = tempfile::tempdir().unwrap();
        let cache = DiskCache {
            dir: dir.path().join("host"),
        };
        let list = APIResourceList {
            group_version: "apps/v1".into(),
            resources: vec![],
        };
        cache.write(&cache_file("apps/v1"), &list);
        let path = dir.path().join("host/apps/v1/serverresources.json");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(r#""kind":"APIResourceList""#), "{text}");
        assert_eq!(
            cache.read::<APIResourceList>("apps/v1/serverresources.json"),
            Some(list)
        );
        let old = SystemTime::now() - CACHE_TTL - Duration::from_secs(1);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(old)
            .unwrap();
        assert_eq!(
            cache.read::<APIResourceList>("apps/v1/serverresources.json"),
            None
        );
    }
}
