//! [`KubeSource`]: the [`ListerWatcher`] over kube's HTTP client, and the GET of single
//! documents that discovery uses, both through the request layer's rule.
//!
//! Lists and watch streams are read as bytes and split as they arrive
//! ([`crate::client::list`], [`crate::client::watch`]), so that each object stays raw
//! JSON and is never parsed into a full `serde_json::Value` on this path; the request
//! itself, its Status and warnings are [`crate::client::http`]'s.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::cache::listwatch::{
    BodyBytes, ListOptions, ListPage, ListerWatcher, SourceError, Watch, WatchEvent, WatchOptions,
};
use crate::cache::object::{ObjectRef, TypeMeta};
use crate::cache::transform::Transform;
use crate::client::connect::{Carried, Carrier};
use crate::client::http::{get, notice, read_body};
use crate::client::list::{read_list, read_protobuf_list};
use crate::client::protobuf::{Omit, Table};
use crate::client::watch::{watch_lines, MAX_LINE_BYTES};
use futures::StreamExt;

/// The real source: kube's client against a collection URL such as
/// `/api/v1/namespaces/default/pods` or `/apis/apps/v1/deployments`.
#[derive(Clone)]
pub struct KubeSource {
    client: kube::Client,
    collection_path: String,
    label_selector: Option<String>,
    field_selector: Option<String>,
    request_timeout: Option<Duration>,
    /// The type of the collection's objects, for list items that do not carry it.
    type_meta: Option<Arc<TypeMeta>>,
    /// `--metadata-only`: ask for PartialObjectMetadata(List) ([`ACCEPT_METADATA_LIST`],
    /// [`ACCEPT_METADATA`]).
    metadata_only: bool,
    /// Ask for the server's Table with each row's whole object ([`ACCEPT_TABLE`],
    /// `includeObject=Object`): objects are unwrapped from the rows and carry their cells
    /// ([`crate::cache::object::TableRow`]).
    table: bool,
    /// The connection of the watch opened last, retired when it stalls
    /// ([`ListerWatcher::watch_stalled`]).
    watched_over: Arc<std::sync::Mutex<Option<Carrier>>>,
    /// `--wire`: the table protobuf is decoded with; `None`: JSON only (`--wire json`).
    protobuf: Option<&'static Table>,
    /// The collection's kind is one of the table's built-in types: its objects come in
    /// protobuf. Any collection's PartialObjectMetadata do (`--metadata-only`).
    built_in: bool,
    /// Set for good (shared by this source's clones) once a protobuf body could not be
    /// decoded: the resource is read in JSON from then on.
    protobuf_failed: Arc<AtomicBool>,
    /// What the objects are read without ([`KubeSource::drop_managed_fields`]).
    omit: Omit,
}

/// `--wire`: the encoding lists and watches ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Wire {
    /// Protobuf for built-in types (kube-controller-manager's choice), JSON for the rest.
    #[default]
    Auto,
    /// As `auto`: custom resources and the server's Tables have no protobuf to ask for.
    Protobuf,
    /// JSON only.
    Json,
}

impl Wire {
    /// The encodings' names, as `--wire` takes them.
    pub const NAMES: [&'static str; 3] = ["auto", "protobuf", "json"];

    pub fn as_str(self) -> &'static str {
        match self {
            Wire::Auto => "auto",
            Wire::Protobuf => "protobuf",
            Wire::Json => "json",
        }
    }
}

impl std::str::FromStr for Wire {
    type Err = crate::text::UnknownWord;

    fn from_str(s: &str) -> Result<Wire, Self::Err> {
        match s {
            "auto" => Ok(Wire::Auto),
            "protobuf" => Ok(Wire::Protobuf),
            "json" => Ok(Wire::Json),
            _ => Err(crate::text::UnknownWord {
                word: s.to_owned(),
                expected: &Wire::NAMES,
            }),
        }
    }
}

impl std::fmt::Display for Wire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `Accept` of a list or watch of a built-in type in protobuf: kube-controller-manager's
/// (`--kube-api-content-type`), protobuf first, JSON for a server that answers otherwise.
const ACCEPT_PROTOBUF: &str = "application/vnd.kubernetes.protobuf, application/json";

/// What carried a response's body ([`Carried`], put there by the client's stack).
fn carried<B>(res: &http::Response<B>) -> Carried {
    res.extensions()
        .get::<Carried>()
        .cloned()
        .unwrap_or_default()
}

/// A list page's transfer from what carried it, once its body has been read (every byte
/// of it counted by then).
fn fill(wire: &Carried, transfer: &mut crate::cache::listwatch::Transfer) {
    transfer.gzip = wire.gzip;
    transfer.wire_bytes = wire.bytes();
}

/// Whether a response's body is protobuf (an object or list; `;stream=watch` for a watch):
/// the Content-Type decides, as in client-go, whatever was asked.
fn is_protobuf<B>(res: &http::Response<B>) -> bool {
    res.headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|m| {
            m.trim()
                .eq_ignore_ascii_case("application/vnd.kubernetes.protobuf")
        })
}

/// What lists and watches ask for by default.
const ACCEPT_JSON: &str = "application/json";

/// A metadata-only list's `Accept`, client-go's metadata client's (`metadata/metadata.go`):
/// PartialObjectMetadataList in protobuf, then in JSON, then plain JSON. kube-apiserver
/// serves it in protobuf for every resource, custom ones included (the conversion is
/// metav1's, not the resource's).
pub const ACCEPT_METADATA_LIST_PROTOBUF: &str = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";

/// [`ACCEPT_METADATA_LIST_PROTOBUF`] without protobuf (`--wire json`, or after a fallback).
pub const ACCEPT_METADATA_LIST: &str =
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";

/// A metadata-only watch's (a streaming list's too) `Accept`: PartialObjectMetadata
/// objects in every event, as client-go's metadata client asks for them.
const ACCEPT_METADATA_PROTOBUF: &str = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";

/// [`ACCEPT_METADATA_PROTOBUF`] without protobuf.
const ACCEPT_METADATA: &str =
    "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";

/// The `Accept` of a list or watch for the server's Table: kubectl get's
/// (`transformRequests` in kubectl's get.go), v1 then v1beta1 then plain JSON for a server
/// that has no Table.
const ACCEPT_TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

impl KubeSource {
    pub fn new(
        client: kube::Client,
        collection_path: String,
        label_selector: Option<String>,
        field_selector: Option<String>,
        request_timeout: Option<Duration>,
    ) -> Self {
        KubeSource {
            client,
            collection_path,
            label_selector,
            field_selector,
            request_timeout,
            type_meta: None,
            metadata_only: false,
            table: false,
            watched_over: Arc::default(),
            protobuf: None,
            built_in: false,
            protobuf_failed: Arc::default(),
            omit: Omit::default(),
        }
    }

    /// Reads every object without `metadata.managedFields`, for a run that never reads
    /// them (the application decides, in one place). A protobuf body's are stepped over,
    /// never decoded ([`Omit::managed_fields`]). A resource read in protobuf that comes
    /// in JSON (a server that answers JSON, or after a decode error) has them cut out too,
    /// so that its store holds one form whichever wire brought each version: versions
    /// compared byte for byte (`--quiet-relists`, watch-events' MODIFIED) then compare
    /// alike. A resource read in JSON only keeps them: its printers cut them as they
    /// write, at no cost to reading.
    pub fn drop_managed_fields(mut self, on: bool) -> Self {
        self.omit.managed_fields = on;
        self
    }

    /// Whether objects that came in JSON get their managedFields cut
    /// ([`KubeSource::drop_managed_fields`]).
    fn cuts_json(&self) -> bool {
        self.omit.managed_fields && self.configured_table().is_some()
    }

    /// A page that came in JSON, its items as this source keeps them.
    fn keep(&self, page: &mut ListPage) {
        if self.cuts_json() {
            for o in &mut page.items {
                *o = Transform::StripManagedFields.apply(o.clone());
            }
        }
    }

    /// `obj` as this source keeps an object that came in JSON.
    fn kept(&self, obj: ObjectRef) -> ObjectRef {
        match self.cuts_json() {
            true => Transform::StripManagedFields.apply(obj),
            false => obj,
        }
    }

    /// `--wire` for objects of `kind` and `api_version`, with the Kubernetes minor whose
    /// table decodes protobuf (the informer's client-go release's: the types a controller
    /// of that release decodes into). A kind the table does not have (a custom resource, or
    /// a type of an aggregated API such as kube-aggregator's APIService) stays JSON, said
    /// once in a `~` line with `--wire protobuf` (with `-v` under `auto`), but for its
    /// metadata (`--metadata-only`, set before), which every resource serves in protobuf.
    pub fn wire(mut self, wire: Wire, minor: u32, kind: &str, api_version: &str) -> Self {
        if wire == Wire::Json {
            return self;
        }
        self.protobuf = Table::for_minor(minor).and_then(Result::ok);
        self.built_in = self
            .protobuf
            .is_some_and(|t| t.kind(api_version, kind).is_some());
        if !self.built_in && !self.metadata_only {
            let why = format!(
                "{}: JSON on the wire: kwatch's protobuf table of Kubernetes 1.{minor} \
                 (k8s.io/api, apiextensions) has no {kind} of {api_version}: a custom \
                 resource, served in JSON only, or an aggregated API's type",
                self.collection_path
            );
            // Under `auto` JSON is what a custom resource is expected to come in: said
            // with -v only; `--wire protobuf` asked for protobuf, and is told.
            match wire {
                Wire::Protobuf => notice(&why),
                _ => tracing::info!("{why}"),
            }
        }
        self
    }

    /// The table to read protobuf with, when this request asks for it.
    fn protobuf_table(&self) -> Option<&'static Table> {
        self.configured_table()
            .filter(|_| !self.protobuf_failed.load(Ordering::Relaxed))
    }

    /// The table to read protobuf with as configured (`--wire`, the kind, `-o table`).
    fn configured_table(&self) -> Option<&'static Table> {
        match self.table {
            true => None,
            false => self
                .protobuf
                .filter(|_| self.built_in || self.metadata_only),
        }
    }

    /// A protobuf body could not be decoded: JSON for this resource from now on.
    fn protobuf_failed(&self) {
        self.protobuf_failed.store(true, Ordering::Relaxed);
    }

    /// Lists and watches the server's Table of the objects (for the table's cells).
    pub fn table(mut self, on: bool) -> Self {
        self.table = on;
        self
    }

    /// Lists and watches PartialObjectMetadata, as client-go's metadata informer does.
    pub fn metadata_only(mut self, on: bool) -> Self {
        self.metadata_only = on;
        self
    }

    /// Gives list items that lack them this `kind` and `apiVersion`, as client-go's
    /// decoder does.
    pub fn with_type(mut self, kind: &str, api_version: &str) -> Self {
        self.type_meta = Some(Arc::new(TypeMeta::new(kind, api_version)));
        self
    }

    fn url(&self, pairs: &[(&str, &str)]) -> String {
        let mut q = form_urlencoded::Serializer::new(String::new());
        if let Some(l) = &self.label_selector {
            q.append_pair("labelSelector", l);
        }
        if let Some(f) = &self.field_selector {
            q.append_pair("fieldSelector", f);
        }
        for (k, v) in pairs {
            q.append_pair(k, v);
        }
        if self.table {
            q.append_pair("includeObject", "Object");
        }
        let q = q.finish();
        if q.is_empty() {
            self.collection_path.clone()
        } else {
            format!("{}?{q}", self.collection_path)
        }
    }

    /// The `Accept` of a list (`list`) or a watch.
    fn accept(&self, list: bool) -> &'static str {
        if self.table {
            return ACCEPT_TABLE;
        }
        match (self.metadata_only, list, self.protobuf_table().is_some()) {
            (false, _, true) => ACCEPT_PROTOBUF,
            (false, _, false) => ACCEPT_JSON,
            (true, true, true) => ACCEPT_METADATA_LIST_PROTOBUF,
            (true, true, false) => ACCEPT_METADATA_LIST,
            (true, false, true) => ACCEPT_METADATA_PROTOBUF,
            (true, false, false) => ACCEPT_METADATA,
        }
    }
}

/// The largest document (discovery, a CRD) kwatch reads.
const MAX_DOCUMENT_BYTES: usize = 64 * 1024 * 1024;

/// GETs one document (discovery, a CRD) through the request layer ([`crate::cache::retry`]),
/// each attempt bounded by `timeout`; each retry is announced on stderr (a `~` notice).
pub async fn get_document(
    client: &kube::Client,
    path: &str,
    accept: &str,
    timeout: Option<Duration>,
) -> Result<Vec<u8>, SourceError> {
    let attempt = || async {
        let fetch = async {
            let res = get(client, path.to_owned(), accept).await?;
            read_body(res.into_body(), MAX_DOCUMENT_BYTES).await
        };
        within(timeout, fetch).await
    };
    let on_retry = |r: crate::cache::retry::Retry| {
        let code = r.code.map(|c| format!("{c} ")).unwrap_or_default();
        notice(&format!(
            "retrying GET {path} in {}s (attempt {} of {}): {code}{}",
            r.delay.as_secs(),
            r.attempt,
            r.max_retries,
            r.reason
        ));
    };
    crate::cache::retry::send(crate::cache::retry::Verb::Get, attempt, &on_retry).await
}

/// `fut`, or [`SourceError::Timeout`] once `timeout` has passed. The connection's own
/// connect timeout is the same `--request-timeout`, and counts as it.
async fn within<T>(
    timeout: Option<Duration>,
    fut: impl Future<Output = Result<T, SourceError>>,
) -> Result<T, SourceError> {
    let Some(t) = timeout else {
        return fut.await;
    };
    match tokio::time::timeout(t, fut).await {
        Err(_) => Err(SourceError::Timeout(t)),
        Ok(Err(SourceError::Transport(m))) if m.contains("deadline has elapsed") => {
            Err(SourceError::Timeout(t))
        }
        Ok(r) => r,
    }
}

impl ListerWatcher for KubeSource {
    async fn list(&self, opts: ListOptions) -> Result<ListPage, SourceError> {
        let limit = opts.limit.filter(|l| *l > 0).map(|l| l.to_string());
        let mut pairs: Vec<(&str, &str)> = Vec::new();
        if let Some(l) = &limit {
            pairs.push(("limit", l));
        }
        if let Some(c) = &opts.continue_token {
            pairs.push(("continue", c));
        } else if !opts.resource_version.is_empty() {
            pairs.push(("resourceVersion", &opts.resource_version));
            if let Some(m) = opts.resource_version_match {
                pairs.push(("resourceVersionMatch", m));
            }
        }
        let url = self.url(&pairs);
        let fetch = async {
            let res = get(&self.client, url.clone(), self.accept(true)).await?;
            let wire = carried(&res);
            let mut page = match self.protobuf_table() {
                Some(table) if is_protobuf(&res) => {
                    let typed = self.type_meta.is_some();
                    match read_protobuf_list(res.into_body(), table, typed, self.omit).await? {
                        Ok(page) => page,
                        Err(why) => {
                            // The same page again, in JSON.
                            self.protobuf_failed();
                            let res = get(&self.client, url, self.accept(true)).await?;
                            let wire = carried(&res);
                            let mut page =
                                read_list(res.into_body(), self.type_meta.clone()).await?;
                            self.keep(&mut page);
                            fill(&wire, &mut page.transfer);
                            page.wire_fallback = Some(why.to_string());
                            return Ok(page);
                        }
                    }
                }
                _ => {
                    let mut page = read_list(res.into_body(), self.type_meta.clone()).await?;
                    self.keep(&mut page);
                    page
                }
            };
            fill(&wire, &mut page.transfer);
            Ok(page)
        };
        within(self.request_timeout, fetch).await
    }

    async fn watch(&self, opts: WatchOptions) -> Result<Watch, SourceError> {
        let timeout = opts.timeout_seconds.to_string();
        let mut pairs: Vec<(&str, &str)> = vec![("watch", "true")];
        if opts.timeout_seconds > 0 {
            pairs.push(("timeoutSeconds", &timeout));
        }
        if opts.allow_bookmarks {
            pairs.push(("allowWatchBookmarks", "true"));
        }
        if opts.send_initial_events {
            pairs.push(("sendInitialEvents", "true"));
            pairs.push(("resourceVersionMatch", "NotOlderThan"));
        }
        pairs.push(("resourceVersion", &opts.resource_version));
        let url = self.url(&pairs);
        let res = within(
            self.request_timeout,
            get(&self.client, url, self.accept(false)),
        )
        .await?;
        let connection = res
            .extensions()
            .get::<crate::client::keepalive::ConnectionHealth>()
            .cloned()
            .map(|c| (c, res.version() == http::Version::HTTP_2));
        *self.watched_over.lock().unwrap_or_else(|e| e.into_inner()) =
            res.extensions().get::<Carrier>().cloned();
        let proto = self.protobuf_table().filter(|_| is_protobuf(&res));
        let wire = carried(&res);
        let read = BodyBytes::default();
        let events = watch_lines(
            res.into_body(),
            connection,
            MAX_LINE_BYTES,
            self.table,
            proto.map(|t| (t, self.omit)),
            read.clone(),
        );
        let source = self.clone();
        let cut_json = proto.is_none() && self.cuts_json();
        let events = events.map(move |e| match e {
            Ok(WatchEvent::Added(o)) if cut_json => Ok(WatchEvent::Added(source.kept(o))),
            Ok(WatchEvent::Modified(o)) if cut_json => Ok(WatchEvent::Modified(source.kept(o))),
            Ok(WatchEvent::Deleted(o)) if cut_json => Ok(WatchEvent::Deleted(source.kept(o))),
            // A frame the table cannot decode ends this watch (the reflector watches or
            // relists again), and the next requests ask JSON.
            Err(SourceError::Decode(why)) if proto.is_some() && why.starts_with("protobuf:") => {
                source.protobuf_failed();
                Err(SourceError::Protobuf(why))
            }
            other => other,
        });
        Ok(Watch {
            events: Box::pin(events),
            protobuf: proto.is_some(),
            gzip: wire.gzip,
            read: Some(read),
            wire: Some(wire.counter()),
        })
    }

    fn watch_stalled(&self) {
        let carrier = self
            .watched_over
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(c) = carrier {
            c.retire();
        }
    }

    fn asks_protobuf(&self) -> bool {
        self.configured_table().is_some()
    }
}
