//! What a resource request asks for, shared by the list handlers ([`super::http`]) and
//! the watch handler ([`super::watch`]): the resolved path, the query parameters, the
//! representation asked for, the selectors, and resourceVersion parsing and waiting.
//! Both handlers depend on this module and it depends on neither.

use std::collections::HashMap;
use std::time::Duration;

use super::resources;
use super::status::{Cause, Status};
use super::storage::{selectable_fields, Obj};
use super::App;
use kwatch_core::selector::{self, FieldSelector, LabelSelector};

/// Query parameters (the last value of a repeated key wins).
pub type Params = HashMap<String, String>;

/// What the client asked for in `Accept` ([`negotiate`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum As {
    Object,
    Table(TableOptions),
    /// `as=PartialObjectMetadata`: an object, or each object of a watch.
    PartialMetadata,
    /// `as=PartialObjectMetadataList`: a list.
    PartialMetadataList,
}

/// metav1.TableOptions: what a Table row carries as its `object` (`includeObject`), and
/// whether the column definitions are left out (a watch's events after its first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TableOptions {
    pub include: Include,
    pub no_headers: bool,
}

/// `includeObject`: `Metadata` (the default) a PartialObjectMetadata, `Object` the object
/// as stored, `None` no object (`null`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Include {
    #[default]
    Metadata,
    Object,
    None,
}

/// `accept` with the Table options of the query (apiserver's `optionsForTransform` and
/// `ValidateTableOptions`): a 400 for an `includeObject` it does not know.
pub fn table_options(accept: As, q: &Params) -> Result<As, Status> {
    let As::Table(mut o) = accept else {
        return Ok(accept);
    };
    o.include = match q.get("includeObject").map(String::as_str) {
        None | Some("" | "Metadata") => Include::Metadata,
        Some("Object") => Include::Object,
        Some("None") => Include::None,
        Some(other) => {
            return Err(Status::bad_request(format!(
            "Unable to convert to Table as requested: includeObject: Invalid value: \"{other}\": \
                 must be 'Metadata', 'Object', 'None', or empty"
        )))
        }
    };
    o.no_headers = q.get("noHeaders").is_some_and(|v| v == "true");
    Ok(As::Table(o))
}

/// kube-apiserver's serializers, as its 406 lists them.
const SERVED_MEDIA_TYPES: &str =
    "application/json, application/yaml, application/vnd.kubernetes.protobuf";

/// The representation `Accept` asks for, negotiated as kube-apiserver's
/// `NegotiateMediaTypeOptions` does: the first clause (in the header's order; q-values are
/// not weighed) whose media type the server has and whose conversion the endpoint allows
/// wins. A conversion (`as`, `g`, `v`) must be `Table` (JSON or YAML) of `meta.k8s.io`
/// `v1` or `v1beta1`, or `PartialObjectMetadata[List]` of `meta.k8s.io/v1` (the real server
/// serves `v1beta1` too; the simulator does not). A protobuf clause is answered in protobuf
/// for a built-in kind ([`asks_protobuf`]), in JSON for a custom resource.
/// An empty header is plain JSON; a header no clause of which is served gets the real
/// server's 406.
pub fn negotiate(accept: &str) -> Result<As, Status> {
    if accept.trim().is_empty() {
        return Ok(As::Object);
    }
    accept.split(',').find_map(clause).ok_or_else(|| {
        Status::not_acceptable(format!(
            "only the following media types are accepted: {SERVED_MEDIA_TYPES}"
        ))
    })
}

/// Whether the clause [`negotiate`] picks asks for Kubernetes' protobuf: kube-apiserver
/// then answers a built-in kind in protobuf (`super::wire`), a custom resource in JSON.
pub fn asks_protobuf(accept: &str) -> bool {
    accept
        .split(',')
        .find(|c| clause(c).is_some())
        .and_then(|c| c.split(';').next())
        .is_some_and(|m| m.trim().eq_ignore_ascii_case(PROTOBUF))
}

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// What one `Accept` clause (`type/subtype;k=v;…`) gets, if the server serves it.
fn clause(c: &str) -> Option<As> {
    let mut parts = c.split(';').map(str::trim);
    let media = parts.next()?.to_ascii_lowercase();
    let (mut kind, mut group, mut version) = (None, None, None);
    for p in parts {
        match p.split_once('=').map(|(k, v)| (k.trim(), v.trim())) {
            Some(("as", v)) => kind = Some(v),
            Some(("g", v)) => group = Some(v),
            Some(("v", v)) => version = Some(v),
            _ => {}
        }
    }
    let yaml_or_json = matches!(
        media.as_str(),
        "application/json" | "application/yaml" | "application/*" | "*/*"
    );
    if !yaml_or_json && media != PROTOBUF {
        return None;
    }
    if (kind, group, version) == (None, None, None) {
        return Some(As::Object);
    }
    if group != Some("meta.k8s.io") {
        return None;
    }
    match (kind?, version?) {
        ("Table", "v1" | "v1beta1") if yaml_or_json => Some(As::Table(TableOptions::default())),
        ("PartialObjectMetadata", "v1") => Some(As::PartialMetadata),
        ("PartialObjectMetadataList", "v1") => Some(As::PartialMetadataList),
        _ => None,
    }
}

/// A resource path, resolved.
#[derive(Debug, Clone)]
pub struct Target {
    pub res: usize,
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub subresource: Option<String>,
}

/// A `FieldValueNotSupported` cause for `resourceVersionMatch`.
pub fn not_supported(value: &str, supported: &[&str]) -> Cause {
    let list: Vec<String> = supported.iter().map(|s| format!("\"{s}\"")).collect();
    Cause {
        reason: "FieldValueNotSupported",
        message: format!(
            "Unsupported value: \"{value}\": supported values: {}",
            list.join(", ")
        ),
        field: "resourceVersionMatch".into(),
    }
}

/// Label and field selectors of a request, validated for the resource.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub namespace: Option<String>,
    pub labels: LabelSelector,
    pub fields: FieldSelector,
}

impl Filter {
    pub fn from_params(t: &Target, q: &Params) -> Result<Filter, Status> {
        let labels =
            selector::parse_labels(q.get("labelSelector").map(String::as_str).unwrap_or(""))
                .map_err(|e| Status::bad_request(e.to_string()))?;
        let fields = selector::parse_fields(
            q.get("fieldSelector").map(String::as_str).unwrap_or(""),
            selectable_fields(t.res),
            matches!(t.res, resources::PODS | resources::EVENTS),
        )
        .map_err(|e| Status::bad_request(e.to_string()))?;
        Ok(Filter {
            namespace: t.namespace.clone(),
            labels,
            fields,
        })
    }

    /// Whether the filter is only a namespace restriction.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty() && self.fields.is_empty()
    }

    pub fn matches(&self, o: &Obj) -> bool {
        if let Some(ns) = &self.namespace {
            if &o.namespace != ns {
                return false;
            }
        }
        self.labels.matches(&o.labels) && self.fields.matches(|f| o.field(f))
    }
}

/// Parses a numeric resourceVersion parameter.
pub fn parse_rv(s: &str) -> Result<u64, Status> {
    s.parse::<u64>().map_err(|_| {
        Status::bad_request(format!(
            "resourceVersion: Invalid value: \"{s}\": must be a non-negative integer"
        ))
    })
}

/// Waits until the store reaches `rv`, at most `wait`. Returns the current revision.
pub async fn wait_for_rv(app: &App, rv: u64, wait: Duration) -> u64 {
    let mut rx = app.cluster.subscribe();
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let cur = app.cluster.read().rev();
        if cur >= rv {
            return cur;
        }
        tokio::select! {
            r = rx.changed() => if r.is_err() { return cur },
            _ = tokio::time::sleep_until(deadline) => return app.cluster.read().rev(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_is_negotiated_as_kube_apiserver_does() {
        let ok = |a: &str| negotiate(a).unwrap_or_else(|s| panic!("{a}: {:?}", s.message));
        assert_eq!(ok(""), As::Object);
        assert_eq!(ok("application/json, */*"), As::Object);
        assert_eq!(ok("application/vnd.kubernetes.protobuf"), As::Object);
        // kubectl get's.
        assert_eq!(
            ok("application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"),
            As::Table(TableOptions::default())
        );
        // client-go's metadata client, and kwatch's (its JSON alternatives).
        assert_eq!(
            ok("application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"),
            As::PartialMetadataList
        );
        assert_eq!(
            ok("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"),
            As::PartialMetadata
        );
        // A conversion the server does not have falls through to the next clause…
        assert_eq!(
            ok("application/json;as=Widget;g=meta.k8s.io;v=v1,application/json"),
            As::Object
        );
        assert_eq!(
            ok("application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1, application/json"),
            As::Object
        );
        // …and with none left, 406 with the real server's words.
        for bad in [
            "application/json;as=Widget;g=meta.k8s.io;v=v1",
            "application/json;as=PartialObjectMetadata;g=example.com;v=v1",
            "application/json;as=PartialObjectMetadata",
            "application/json;g=meta.k8s.io;v=v1",
            "text/html",
        ] {
            let s = negotiate(bad).unwrap_err();
            assert_eq!((s.code, s.reason), (406, Some("NotAcceptable")), "{bad}");
            assert_eq!(
                s.message.as_deref(),
                Some("only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf")
            );
        }
    }
}
