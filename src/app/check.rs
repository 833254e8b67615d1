//! `kwatch check RESOURCE`: does this server speak the list/watch protocol client-go
//! expects? A battery of checks against one resource, each bounded in time, each a row:
//! the check, `ok`/`warn`/`fail`, what the server did (seconds, bytes, status codes), and
//! what client-go will do about it (with the upstream issue where there is one).
//!
//! Every request goes through kwatch-core's `KubeSource` (the reflector's ListerWatcher),
//! so that the checks speak the protocol exactly as kwatch's informer does. Read-only but
//! for `--write NAMESPACE` (a ConfigMap created, patched and deleted under a watch).
//! Exit 0 when no row failed, 1 when one did (README "Exit codes").

use std::io::Write as _;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use futures::StreamExt;
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use kube::api::{DeleteParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};

use crate::app::cli::{CheckArgs, CheckOutput};
use crate::app::exit::Exit;
use crate::cache::listwatch::{
    ListOptions, ListerWatcher, SourceError, Transfer, WatchEvent, WatchOptions,
};
use crate::cache::release::Release;
use crate::client::source::{KubeSource, Wire};
use crate::client::target::Target;
use crate::context::ContextName;

/// A check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Ok,
    Warn,
    Fail,
    /// The check could not provoke what it tests (a healthy server's history still
    /// reaches back, nothing to page): the row says why. No failure.
    Skip,
}

impl Verdict {
    fn as_str(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Warn => "warn",
            Verdict::Fail => "fail",
            Verdict::Skip => "skip",
        }
    }
}

/// One check's row (`-o json`: one JSON line, README "Output schemas").
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    /// The kubeconfig context checked, with several (`--context a,b`, `--all-contexts`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<ContextName>,
    pub check: &'static str,
    pub result: Verdict,
    /// What the server did, with its numbers.
    pub server: String,
    /// What client-go will do about it.
    pub client_go: String,
    /// The upstream issue about this behaviour, if there is one.
    pub issue: Option<&'static str>,
    /// How long the check took.
    pub seconds: f64,
}

/// How long a watch is asked to last (`timeoutSeconds`) when the check waits for its
/// bookmarks and its end: kube-apiserver sends a bookmark about 2 s before a watch's
/// timeout, so 4 s sees one.
const WATCH_SECONDS: u32 = 4;
/// The timeout of the watch from resourceVersion 1 (`watch.expired`).
const EXPIRED_SECONDS: u32 = 5;
/// How long a streaming list may go without an initial event before the check stops
/// waiting for its end bookmark.
const STREAM_IDLE: Duration = Duration::from_secs(5);
/// How long the check waits for a streaming list's end bookmark at most.
const STREAM_MAX: Duration = Duration::from_secs(20);
/// The bound of any one check (the streaming list and the full list get [`LONG`]).
const SHORT: Duration = Duration::from_secs(10);
const LONG: Duration = Duration::from_secs(30);
/// The page size of the paged LIST, client-go's pager's.
const PAGE: u32 = 500;

/// What one check leaves for the later ones.
#[derive(Debug, Default)]
struct Seen {
    /// The consistent LIST's first page.
    list: Option<Listed>,
    /// The LIST at resourceVersion 0, every page: the sync without streaming lists.
    full: Option<Listed>,
    /// Every resourceVersion seen, in order, with where it came from.
    rvs: Vec<(&'static str, String)>,
    /// The streaming list: initial events, seconds, end bookmark, transfer (decoded, wire
    /// bytes), gzip.
    stream: Option<Stream>,
    /// The server may not watch (a 403).
    watch_forbidden: bool,
}

/// A LIST read: its version, objects, answers, transfer and time.
#[derive(Debug, Clone, Default)]
struct Listed {
    rv: String,
    objects: usize,
    pages: usize,
    transfer: Transfer,
    seconds: f64,
}

#[derive(Debug, Default)]
struct Stream {
    events: usize,
    seconds: f64,
    ended: bool,
    bytes: u64,
    wire: u64,
    gzip: bool,
    /// The server refused a streaming list (its status).
    refused: Option<String>,
}

/// Where the checks run.
struct Ctx {
    client: kube::Client,
    source: KubeSource,
    target: Target,
    namespace: Option<String>,
    request_timeout: Option<Duration>,
    /// The server's `major.minor`, and its minor as a number.
    version: String,
    minor: u32,
    release: Release,
    selected: bool,
}

/// Runs `kwatch check`; `Ok(Exit::Error)` when a check failed. With several contexts
/// (`--context a,b`, a pattern, `--all-contexts`) the battery runs against each in turn,
/// every row naming its context; a context that cannot be checked is one line on stderr
/// and fails the run, the others are checked.
pub async fn run(args: CheckArgs) -> Result<Exit> {
    let sim = if args.sim {
        Some(crate::app::sim::LocalSim::start().await?)
    } else {
        None
    };
    let kc = sim.as_ref().map(|s| s.kubeconfig.clone());
    let result = check_all(&args, kc).await;
    if let Some(s) = sim {
        s.shutdown().await;
    }
    Ok(if result? { Exit::Ok } else { Exit::Error })
}

/// Checks every context asked for; whether none failed.
async fn check_all(args: &CheckArgs, kc: Option<Kubeconfig>) -> Result<bool> {
    let kc = match kc {
        Some(kc) => kc,
        None => crate::app::kubeconfig::load_kubeconfig(args.cluster.kubeconfig.as_deref())?,
    };
    let contexts = crate::app::config::contexts(&args.cluster, &kc)?;
    let mut out = Out::new(args.output, contexts.len() > 1);
    if contexts.len() <= 1 {
        let context = contexts.into_iter().flatten().next();
        let rows = check(args, &kc, context.as_ref(), &mut out).await?;
        return Ok(rows.iter().all(|r| r.result != Verdict::Fail));
    }
    let mut passed = true;
    for context in contexts.iter().flatten() {
        match check(args, &kc, Some(context), &mut out).await {
            Ok(rows) => passed &= rows.iter().all(|r| r.result != Verdict::Fail),
            Err(e) => {
                passed = false;
                let line = format!("{} (context {context})", crate::app::exit::message(&e));
                let _ = writeln!(std::io::stderr(), "{}", crate::text::sanitize(&line));
            }
        }
    }
    Ok(passed)
}

/// The kube client settings of `context` (`None`: the current one), with kubectl's flags.
async fn kube_config(
    args: &CheckArgs,
    kc: &Kubeconfig,
    context: Option<&ContextName>,
) -> Result<kube::Config> {
    let effective = crate::app::kubeconfig::effective_kubeconfig(
        kc,
        context.map(ContextName::as_str),
        &args.cluster,
    )?;
    crate::app::kubeconfig::files_readable(&effective)?;
    let mut kube = kube::Config::from_custom_kubeconfig(effective, &KubeConfigOptions::default())
        .await
        .context("invalid kubeconfig")?;
    let timeout = Some(args.cluster.request_timeout).filter(|d| !d.is_zero());
    if let Some(t) = timeout {
        kube.connect_timeout = Some(t);
    }
    kube.read_timeout = None;
    kube.default_retry = false;
    Ok(kube)
}

/// The resource to check on `context`, and when its discovery began.
async fn context(
    args: &CheckArgs,
    kc: &Kubeconfig,
    context: Option<&ContextName>,
) -> Result<(Ctx, Instant)> {
    let kube = kube_config(args, kc, context).await?;
    let url = kube.cluster_url.to_string();
    let request_timeout = Some(args.cluster.request_timeout).filter(|d| !d.is_zero());
    let namespace = crate::app::config::namespace(
        args.all_namespaces,
        args.namespace.as_deref(),
        &kube.default_namespace,
    );
    let client = crate::client::connect::client(&kube)?;
    let server = crate::client::discovery::Server {
        client: client.clone(),
        request_timeout,
    };
    let started = Instant::now();
    let docs = crate::client::discovery::Discovery::new(server.clone(), None);
    let targets = crate::client::expand::targets(docs, &args.resource, None)
        .await
        .map_err(|e| worded(e.into(), &url))?;
    let Some(target) = targets.into_iter().next() else {
        anyhow::bail!("{:?}: no such resource", args.resource);
    };
    let (version, minor) = server_version(&client, request_timeout).await;
    let release = Release::for_server("1", &minor.to_string()).unwrap_or(Release::FALLBACK);
    let namespace = namespace.filter(|_| target.resource.namespaced);
    let source = KubeSource::new(
        client.clone(),
        target.collection_path(namespace.as_deref()),
        args.selector.clone(),
        args.field_selector.clone(),
        request_timeout,
    )
    .with_type(&target.resource.kind, &target.resource.api_version)
    .wire(
        Wire::Auto,
        release.minor(),
        &target.resource.kind,
        &target.resource.api_version,
    );
    let ctx = Ctx {
        client,
        source,
        target,
        namespace,
        request_timeout,
        version,
        minor,
        release,
        selected: args.selector.is_some() || args.field_selector.is_some(),
    };
    Ok((ctx, started))
}

/// The battery against `name` (`None`: the current context), each row printed as it
/// comes.
async fn check(
    args: &CheckArgs,
    kc: &Kubeconfig,
    name: Option<&ContextName>,
    out: &mut Out,
) -> Result<Vec<Row>> {
    let (ctx, started) = context(args, kc, name).await?;
    out.context = name.filter(|_| out.contexts).cloned();
    let mut seen = Seen::default();
    let first = discovery(&ctx, started).await;
    out.row(&first)?;
    let mut rows = vec![first];
    macro_rules! step {
        ($name:literal, $bound:expr, $f:expr) => {{
            let row = bounded($name, $bound, $f).await;
            out.row(&row)?;
            rows.push(row);
        }};
    }
    step!("access", SHORT, access(&ctx, &mut seen));
    step!("list", LONG, list(&ctx, &mut seen));
    step!("list.paging", SHORT, paging(&ctx));
    step!("list.rv=0", LONG, list_at_zero(&ctx, &mut seen));
    step!("list.exact", LONG, list_match(&ctx, &seen, "Exact"));
    step!(
        "list.notOlderThan",
        LONG,
        list_match(&ctx, &seen, "NotOlderThan")
    );
    step!("list.expiredContinue", SHORT, expired_continue(&ctx));
    // The watch waits for its timeout: the streaming list runs meanwhile, each with what
    // it sees apart, merged after.
    let mut watched = Seen {
        list: seen.list.clone(),
        ..Seen::default()
    };
    let mut streamed = Seen::default();
    let (watch_row, stream_row) = tokio::join!(
        bounded("watch", LONG, watch(&ctx, &mut watched)),
        bounded("streaming-list", LONG, streaming_list(&ctx, &mut streamed)),
    );
    seen.rvs.extend(watched.rvs);
    seen.watch_forbidden |= watched.watch_forbidden;
    out.row(&watch_row)?;
    rows.push(watch_row);
    step!("watch.expired", SHORT, watch_expired(&ctx, &seen));
    seen.rvs.extend(streamed.rvs);
    seen.stream = streamed.stream;
    out.row(&stream_row)?;
    rows.push(stream_row);
    let rv_row = resource_versions(&seen);
    step!("resourceVersion", SHORT, async { rv_row });
    let gz = gzip_row(&seen);
    step!("encoding.gzip", SHORT, async { gz });
    let pb = protobuf_row(&ctx, &seen);
    step!("encoding.protobuf", SHORT, async { pb });
    let wg = watch_gzip_row(&ctx, &seen);
    step!("encoding.watch-gzip", SHORT, async { wg });
    step!("encoding.table", SHORT, table(&ctx));
    let sy = sync_row(&ctx, &seen);
    step!("sync", SHORT, async { sy });
    if let Some(ns) = &args.write {
        step!("write", LONG, write(&ctx, ns));
    }
    Ok(rows)
}

/// `f` within `bound` (else a failing row saying so), its row's `seconds` set.
async fn bounded(
    name: &'static str,
    bound: Duration,
    f: impl std::future::Future<Output = Row>,
) -> Row {
    let t = Instant::now();
    let row = match tokio::time::timeout(bound, f).await {
        Ok(row) => row,
        Err(_) => row(
            name,
            Verdict::Fail,
            format!("no answer within {bound:?}"),
            "client-go waits as long: its requests have no timeout of their own but the \
             watch's",
            None,
        ),
    };
    Row {
        seconds: round(t.elapsed().as_secs_f64()),
        ..row
    }
}

/// Seconds to the millisecond.
fn round(s: f64) -> f64 {
    (s * 1000.0).round() / 1000.0
}

/// An error of a request in kubectl's words, as the watch reports it.
fn worded(err: anyhow::Error, server: &str) -> anyhow::Error {
    match err.chain().find_map(|e| e.downcast_ref::<SourceError>()) {
        Some(e) if e.will_not_fix_itself() => {
            anyhow::Error::new(crate::app::exit::Worded(e.kubectl_message(server)))
        }
        _ => err.context(format!("cannot check at {server}")),
    }
}

/// The server's `major.minor` and minor (32 when `/version` cannot tell).
async fn server_version(client: &kube::Client, timeout: Option<Duration>) -> (String, u32) {
    let body =
        crate::client::source::get_document(client, "/version", "application/json", timeout).await;
    let info = body.ok().and_then(|b| {
        serde_json::from_slice::<k8s_openapi::apimachinery::pkg::version::Info>(&b).ok()
    });
    match info {
        Some(i) => {
            let minor = i.minor.trim_end_matches('+').parse().unwrap_or(32);
            (format!("{}.{}", i.major, i.minor), minor)
        }
        None => ("unknown".to_owned(), 32),
    }
}

/// A check's row when a request failed: `request` and the server's answer, and what
/// client-go does about it.
fn failed(
    check: &'static str,
    result: Verdict,
    request: &str,
    e: &SourceError,
    client_go: impl Into<String>,
) -> Row {
    row(
        check,
        result,
        format!("{request}: {}", failure(e)),
        client_go,
        None,
    )
}

fn row(
    check: &'static str,
    result: Verdict,
    server: impl Into<String>,
    client_go: impl Into<String>,
    issue: Option<&'static str>,
) -> Row {
    Row {
        context: None,
        check,
        result,
        server: server.into(),
        client_go: client_go.into(),
        issue,
        seconds: 0.0,
    }
}

/// Bytes for people: `812 B`, `14.2 KiB`, `3.1 MiB`.
fn bytes(n: u64) -> String {
    match n {
        0..1024 => format!("{n} B"),
        1024..1_048_576 => format!("{:.1} KiB", n as f64 / 1024.0),
        _ => format!("{:.1} MiB", n as f64 / 1_048_576.0),
    }
}

/// An error's status code and words (a long message cut after its first sentence).
fn failure(e: &SourceError) -> String {
    let text = match e.api() {
        Some(s) => s.summary(),
        None => e.to_string(),
    };
    match text.find(". ") {
        Some(i) if text.len() > 120 => format!("{}.", &text[..i]),
        _ => text,
    }
}

async fn discovery(ctx: &Ctx, started: Instant) -> Row {
    let t = &ctx.target;
    let gv = if t.group.is_empty() {
        t.version.clone()
    } else {
        format!("{}/{}", t.group, t.version)
    };
    let server = crate::client::discovery::Server {
        client: ctx.client.clone(),
        request_timeout: ctx.request_timeout,
    };
    let mut docs = crate::client::discovery::Discovery::new(server, None);
    let verbs = match docs.resources(&gv).await {
        Ok(list) => list
            .resources
            .iter()
            .find(|r| r.name == t.plural)
            .map(|r| r.verbs.clone())
            .unwrap_or_default(),
        Err(e) => {
            let mut r = row(
                "discovery",
                Verdict::Warn,
                format!("GET {gv}: {e}"),
                "client-go's RESTMapper would not find the resource either",
                None,
            );
            r.seconds = round(started.elapsed().as_secs_f64());
            return r;
        }
    };
    let has = |v: &str| verbs.iter().any(|x| x == v);
    let what = format!(
        "{} ({} {}, {}; Kubernetes {}): verbs {}",
        t.resource.name,
        t.resource.api_version,
        t.resource.kind,
        if t.resource.namespaced {
            "namespaced"
        } else {
            "cluster-scoped"
        },
        ctx.version,
        verbs.join(", ")
    );
    let missing: Vec<&str> = ["list", "watch"].into_iter().filter(|v| !has(v)).collect();
    let mut r = if missing.is_empty() {
        row(
            "discovery",
            Verdict::Ok,
            what,
            format!(
                "an informer can list and watch it (client-go {})",
                ctx.release
            ),
            None,
        )
    } else {
        row(
            "discovery",
            Verdict::Fail,
            format!("{what}: no {}", missing.join(", ")),
            "an informer needs both list and watch: its reflector fails at once",
            None,
        )
    };
    r.seconds = round(started.elapsed().as_secs_f64());
    r
}

/// `kubectl auth can-i VERB RESOURCE`: `Ok(allowed)`, or why the server could not say.
async fn can_i(ctx: &Ctx, verb: &str) -> std::result::Result<bool, String> {
    let review = SelfSubjectAccessReview {
        spec: SelfSubjectAccessReviewSpec {
            resource_attributes: Some(ResourceAttributes {
                namespace: ctx.namespace.clone(),
                verb: Some(verb.to_owned()),
                group: Some(ctx.target.group.clone()),
                resource: Some(ctx.target.plural.clone()),
                ..Default::default()
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    let api: kube::Api<SelfSubjectAccessReview> = kube::Api::all(ctx.client.clone());
    match api.create(&PostParams::default(), &review).await {
        Ok(r) => Ok(r.status.is_some_and(|s| s.allowed)),
        Err(e) => Err(failure(&crate::client::http::kube_error(e))),
    }
}

async fn access(ctx: &Ctx, seen: &mut Seen) -> Row {
    let (list, watch) = (can_i(ctx, "list").await, can_i(ctx, "watch").await);
    let say = |r: &std::result::Result<bool, String>| match r {
        Ok(true) => "yes".to_owned(),
        Ok(false) => "no".to_owned(),
        Err(e) => format!("cannot tell ({e})"),
    };
    let what = format!(
        "SelfSubjectAccessReview: list {}, watch {}",
        say(&list),
        say(&watch)
    );
    match (&list, &watch) {
        (Ok(true), Ok(true)) => row(
            "access",
            Verdict::Ok,
            what,
            "the informer may list and watch",
            None,
        ),
        (Ok(false), _) => row(
            "access",
            Verdict::Fail,
            what,
            "may not list: the informer's first LIST is 403 and it never syncs",
            None,
        ),
        (Ok(true), Ok(false)) => {
            seen.watch_forbidden = true;
            row(
                "access",
                Verdict::Fail,
                format!("{what}: the verb watch is missing"),
                "the LIST works, every WATCH is 403: client-go relists after each backoff \
                 (up to 30 s) for ever, a cache-sync timeout in controller-runtime; grant \
                 watch",
                Some("kubernetes-sigs/controller-runtime#1653"),
            )
        }
        _ => row(
            "access",
            Verdict::Warn,
            what,
            "no SelfSubjectAccessReview: the LIST and WATCH rows below tell",
            None,
        ),
    }
}

/// A LIST as client-go's pager reads it: `opts`, then each continue token.
async fn paged(ctx: &Ctx, mut opts: ListOptions, seen: &mut Seen) -> Result<Listed, SourceError> {
    let started = Instant::now();
    let mut l = Listed::default();
    loop {
        let page = ctx.source.list(opts.clone()).await?;
        l.pages += 1;
        l.objects += page.items.len();
        l.transfer.add(page.transfer);
        for o in page.items.iter().take(50) {
            seen.rvs
                .push(("an object", o.resource_version().to_owned()));
        }
        match page.continue_token.filter(|c| !c.is_empty()) {
            Some(c) => opts.continue_token = Some(c),
            None => {
                l.rv = page.resource_version;
                l.seconds = started.elapsed().as_secs_f64();
                return Ok(l);
            }
        }
    }
}

/// The consistent LIST's first page (resourceVersion unset, limit 500): the version the
/// watches start from.
async fn list(ctx: &Ctx, seen: &mut Seen) -> Row {
    let started = Instant::now();
    let opts = ListOptions {
        limit: Some(PAGE),
        ..ListOptions::default()
    };
    let page = match ctx.source.list(opts).await {
        Ok(page) => page,
        Err(e) => {
            return failed(
                "list",
                Verdict::Fail,
                "LIST",
                &e,
                "the informer cannot list: it never syncs",
            )
        }
    };
    for o in page.items.iter().take(50) {
        seen.rvs
            .push(("an object", o.resource_version().to_owned()));
    }
    let rv = page.resource_version.clone();
    seen.rvs.push(("the LIST", rv.clone()));
    let more = match page.remaining_item_count {
        Some(n) => format!(", {n} more"),
        None if page.continue_token.is_some() => ", more".to_owned(),
        None => String::new(),
    };
    let l = Listed {
        rv: rv.clone(),
        objects: page.items.len(),
        pages: 1,
        transfer: page.transfer,
        seconds: started.elapsed().as_secs_f64(),
    };
    let r = row(
        "list",
        Verdict::Ok,
        format!(
            "resourceVersion unset, limit={PAGE}: {} objects{more} in {:.2} s ({}, {} on the \
             wire), resourceVersion {rv}",
            l.objects,
            l.seconds,
            l.transfer.encoding(),
            bytes(l.transfer.wire_bytes)
        ),
        "a consistent read: client-go's relists after a 410 read so",
        None,
    );
    seen.list = Some(l);
    r
}

async fn paging(ctx: &Ctx) -> Row {
    let first = ListOptions {
        limit: Some(2),
        ..ListOptions::default()
    };
    let page = match ctx.source.list(first).await {
        Ok(p) => p,
        Err(e) => {
            return failed(
                "list.paging",
                Verdict::Fail,
                "LIST limit=2",
                &e,
                "client-go's pager fails the same way",
            )
        }
    };
    let Some(token) = page.continue_token.clone().filter(|c| !c.is_empty()) else {
        return if page.items.len() <= 2 {
            row(
                "list.paging",
                Verdict::Ok,
                format!("limit=2: {} object(s), one page", page.items.len()),
                "nothing to page",
                None,
            )
        } else {
            row(
                "list.paging",
                Verdict::Warn,
                format!(
                    "limit=2 ignored: {} objects in one answer, no continue",
                    page.items.len()
                ),
                "client-go's pager takes the whole list in one answer (more memory at once)",
                None,
            )
        };
    };
    let remaining = page.remaining_item_count;
    let next = ListOptions {
        limit: Some(2),
        continue_token: Some(token),
        ..ListOptions::default()
    };
    match ctx.source.list(next).await {
        Ok(p) => {
            let remaining = match remaining {
                Some(n) => format!("remainingItemCount {n}"),
                None if ctx.selected => {
                    "no remainingItemCount (a selector: none expected)".to_owned()
                }
                None => "no remainingItemCount".to_owned(),
            };
            row(
                "list.paging",
                Verdict::Ok,
                format!(
                    "limit=2: {} objects and a continue token, {remaining}; the next page {} \
                     objects",
                    page.items.len(),
                    p.items.len()
                ),
                "client-go's pager reads the pages the same way",
                None,
            )
        }
        Err(e) => failed(
            "list.paging",
            Verdict::Fail,
            "LIST continue",
            &e,
            "client-go's pager fails on the second page; on a 410 it lists again whole",
        ),
    }
}

/// The LIST at resourceVersion `"0"` (from the watch cache, any age) as client-go's
/// reflector makes its first one (limit 500, every page): the sync of an informer
/// without streaming lists.
async fn list_at_zero(ctx: &Ctx, seen: &mut Seen) -> Row {
    let opts = ListOptions {
        resource_version: "0".to_owned(),
        limit: Some(PAGE),
        ..ListOptions::default()
    };
    match paged(ctx, opts, seen).await {
        Ok(l) => {
            seen.rvs.push(("a LIST at 0", l.rv.clone()));
            let r = row(
                "list.rv=0",
                Verdict::Ok,
                format!(
                    "resourceVersion=0, limit={PAGE}: {} objects in {} answer(s), {:.2} s, {} \
                     ({} on the wire, {}), resourceVersion {}",
                    l.objects,
                    l.pages,
                    l.seconds,
                    bytes(l.transfer.bytes),
                    bytes(l.transfer.wire_bytes),
                    l.transfer.encoding(),
                    l.rv
                ),
                "client-go's reflector lists so first (any age, from the cache)",
                None,
            );
            seen.full = Some(l);
            r
        }
        Err(e) => failed(
            "list.rv=0",
            Verdict::Fail,
            "LIST resourceVersion=0",
            &e,
            "client-go's reflector's first LIST fails; it retries with backoff",
        ),
    }
}

/// A LIST at the consistent LIST's resourceVersion with resourceVersionMatch `m`.
async fn list_match(ctx: &Ctx, seen: &Seen, m: &'static str) -> Row {
    let name = if m == "Exact" {
        "list.exact"
    } else {
        "list.notOlderThan"
    };
    let Some(Listed { rv, .. }) = &seen.list else {
        return row(name, Verdict::Warn, "no LIST to start from", "", None);
    };
    let opts = ListOptions {
        resource_version: rv.clone(),
        resource_version_match: Some(m),
        limit: Some(PAGE),
        ..ListOptions::default()
    };
    match ctx.source.list(opts).await {
        Ok(p) => {
            let older = match (p.resource_version.parse::<u64>(), rv.parse::<u64>()) {
                (Ok(got), Ok(asked)) => got < asked,
                _ => false,
            };
            let exact_off = m == "Exact" && p.resource_version != *rv;
            let verdict = if older || exact_off {
                Verdict::Fail
            } else {
                Verdict::Ok
            };
            row(
                name,
                verdict,
                format!(
                    "resourceVersion={rv}&resourceVersionMatch={m}: {} objects at \
                     resourceVersion {}",
                    p.items.len(),
                    p.resource_version
                ),
                if verdict == Verdict::Ok {
                    "client-go relists at a known version so (the reflector after a 410, the \
                     consistency check)"
                } else {
                    "served at another version than asked: a relist goes back in time"
                },
                None,
            )
        }
        Err(e) if e.is_expired() => row(
            name,
            Verdict::Warn,
            format!(
                "resourceVersionMatch={m}: {} (history compacted meanwhile)",
                failure(&e)
            ),
            "client-go lists again at the newest version",
            None,
        ),
        Err(e) => failed(
            name,
            Verdict::Warn,
            &format!("resourceVersionMatch={m}"),
            &e,
            "client-go's reflector lists at resourceVersion 0 or \"\"; this matters to \
             clients that relist at a version",
        ),
    }
}

/// A continue token of a long compacted revision, as kube-apiserver encodes them
/// (`apiserver/pkg/storage/continue.go`: base64url, no padding, of
/// `{"v":"meta.k8s.io/v1","rv":1,"start":"a"}`): its answer must be 410 Expired.
const OLD_CONTINUE: &str = "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiJhIn0";

async fn expired_continue(ctx: &Ctx) -> Row {
    let opts = ListOptions {
        limit: Some(2),
        continue_token: Some(OLD_CONTINUE.to_owned()),
        ..ListOptions::default()
    };
    match ctx.source.list(opts).await {
        Err(e) if e.is_expired() => failed(
            "list.expiredContinue",
            Verdict::Ok,
            "a continue token of resourceVersion 1",
            &e,
            "client-go's pager then lists again whole (a full list at the newest version)",
        ),
        Err(e) => failed(
            "list.expiredContinue",
            Verdict::Warn,
            "a continue token of resourceVersion 1",
            &e,
            "client-go's pager falls back to a full list on 410 only: another error fails the \
             LIST (an opaque token of another format may explain it)",
        ),
        Ok(p) => row(
            "list.expiredContinue",
            Verdict::Skip,
            format!(
                "not tested: the server still serves resourceVersion 1's snapshot (a continue \
                 token of it answered with {} objects)",
                p.items.len()
            ),
            "client-go's pager reads the pages of that snapshot; on a 410 it lists again whole",
            None,
        ),
    }
}

/// What a bounded watch saw.
#[derive(Debug, Default)]
struct Watched {
    events: usize,
    bookmarks: Vec<f64>,
    end_bookmark: Option<f64>,
    error: Option<String>,
    /// Seconds until the server closed the stream (`None`: still open at the bound).
    closed: Option<f64>,
    last_event: f64,
}

/// Reads `w` until it ends, an end bookmark (when `until_end`), or `bound` (or, with
/// `idle`, that long without an object event).
async fn drain(
    mut events: crate::cache::listwatch::WatchStream,
    bound: Duration,
    idle: Option<Duration>,
    until_end: bool,
    rvs: &mut Vec<(&'static str, String)>,
) -> Watched {
    let started = Instant::now();
    let mut seen = Watched::default();
    let deadline = tokio::time::Instant::now() + bound;
    loop {
        let idle_at = idle.map(|i| {
            tokio::time::Instant::from_std(started + Duration::from_secs_f64(seen.last_event) + i)
        });
        let until = idle_at.map_or(deadline, |i| i.min(deadline));
        let next = tokio::time::timeout_at(until, events.next()).await;
        let now = started.elapsed().as_secs_f64();
        match next {
            Err(_) => return seen,
            Ok(None) => {
                seen.closed = Some(now);
                return seen;
            }
            Ok(Some(Ok(ev))) => match ev {
                WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o) => {
                    seen.events += 1;
                    seen.last_event = now;
                    if rvs.len() < 200 {
                        rvs.push(("a watch event", o.resource_version().to_owned()));
                    }
                }
                WatchEvent::Bookmark {
                    resource_version,
                    initial_events_end,
                } => {
                    rvs.push(("a bookmark", resource_version));
                    if initial_events_end {
                        seen.end_bookmark = Some(now);
                        if until_end {
                            return seen;
                        }
                    } else {
                        seen.bookmarks.push(now);
                        // kube-apiserver sends no other bookmark before a streaming
                        // list's end: one now means its initial events are over.
                        if until_end {
                            return seen;
                        }
                    }
                }
                WatchEvent::Error(s) => {
                    seen.error = Some(s.summary());
                    seen.closed = Some(now);
                    return seen;
                }
            },
            Ok(Some(Err(e))) => {
                seen.error = Some(failure(&e));
                seen.closed = Some(now);
                return seen;
            }
        }
    }
}

/// What one bounded watch from `rv` saw, worded: events, bookmarks, how it ended.
fn watched_text(rv: &str, got: &Watched) -> String {
    let bookmarks = match got.bookmarks.first() {
        Some(first) => format!(
            "{} bookmark(s), the first after {first:.1} s",
            got.bookmarks.len()
        ),
        None => "no bookmark".to_owned(),
    };
    let closed = match got.closed {
        Some(t) => format!("closed after {t:.1} s (timeoutSeconds={WATCH_SECONDS})"),
        None => format!("still open {} s after timeoutSeconds={WATCH_SECONDS}", 4),
    };
    format!(
        "WATCH from resourceVersion {rv}: {} event(s), {bookmarks}, {closed}{}",
        got.events,
        got.error
            .as_ref()
            .map(|e| format!(", ended by {e}"))
            .unwrap_or_default()
    )
}

/// A watch from `rv` asking for bookmarks, read until it ends (or a bound past its
/// timeout); `Err`: the server refused it.
async fn watch_from(ctx: &Ctx, rv: &str, seen: &mut Seen) -> Result<Watched, SourceError> {
    let opts = WatchOptions {
        resource_version: rv.to_owned(),
        timeout_seconds: WATCH_SECONDS,
        allow_bookmarks: true,
        send_initial_events: false,
    };
    let w = ctx.source.watch(opts).await?;
    let bound = Duration::from_secs(u64::from(WATCH_SECONDS) + 4);
    Ok(drain(w.events, bound, None, false, &mut seen.rvs).await)
}

/// The watch's row when the server refused it.
fn watch_refused(rv: &str, e: &SourceError, seen: &mut Seen) -> Row {
    let forbidden = e.api().is_some_and(|s| s.code == 403);
    seen.watch_forbidden |= forbidden;
    row(
        "watch",
        Verdict::Fail,
        format!("WATCH from resourceVersion {rv}: {}", failure(e)),
        if forbidden {
            "may list but not watch: client-go lists, each watch is 403, it relists after \
             each backoff for ever and never stays in sync; grant the verb watch"
        } else {
            "the informer cannot watch: it relists after each backoff"
        },
        forbidden.then_some("kubernetes-sigs/controller-runtime#1653"),
    )
}

/// The row of a watch that sent events but no bookmark although asked.
fn no_bookmarks(what: String) -> Row {
    row(
        "watch",
        Verdict::Fail,
        format!("{what}: no bookmarks although asked (allowWatchBookmarks)"),
        "client-go re-watches from the last event it saw: on a quiet resource that version \
         falls out of the server's history, and each re-watch ends in 410 and a full relist",
        None,
    )
}

/// The resourceVersions, older than the LIST's, from which a watch of a quiet resource
/// gets a bookmark from a healthy kube-apiserver: one before the LIST's (a consistent LIST
/// brings the watch cache to its revision since Kubernetes 1.31, ConsistentListFromCache),
/// and one before the newest object's (the cache has seen that change). Opaque versions
/// give none.
fn older_revisions(list_rv: &str, seen: &Seen) -> Vec<String> {
    let newest = seen
        .rvs
        .iter()
        .filter(|(from, _)| *from == "an object")
        .filter_map(|(_, rv)| rv.parse::<u64>().ok())
        .max();
    let mut older: Vec<u64> = [list_rv.parse::<u64>().ok(), newest]
        .into_iter()
        .flatten()
        .filter(|r| *r >= 2)
        .map(|r| r - 1)
        .collect();
    older.dedup();
    older.into_iter().map(|r| r.to_string()).collect()
}

/// The watch client-go's reflector makes after its LIST: from the LIST's resourceVersion,
/// asking for bookmarks. kube-apiserver's cacheWatcher sends a watch only what is newer
/// than its resourceVersion, bookmarks included (`cache_watcher.go`, v1.32): on a quiet
/// resource that watch gets nothing at all, which is healthy. Bookmarks are then tested
/// from an older resourceVersion, where a healthy server sends one before the watch's
/// timeout.
async fn watch(ctx: &Ctx, seen: &mut Seen) -> Row {
    let Some(Listed { rv, .. }) = &seen.list else {
        return row("watch", Verdict::Warn, "no LIST to watch from", "", None);
    };
    let rv = rv.clone();
    let got = match watch_from(ctx, &rv, seen).await {
        Ok(got) => got,
        Err(e) => return watch_refused(&rv, &e, seen),
    };
    let what = watched_text(&rv, &got);
    if got.bookmarks.is_empty() && (got.events > 0 || got.error.is_some()) {
        return no_bookmarks(what);
    }
    if got.bookmarks.is_empty() {
        return quiet_watch(ctx, &rv, what, seen).await;
    }
    if got.closed.is_none() {
        return row(
            "watch",
            Verdict::Warn,
            what,
            "timeoutSeconds not honoured: client-go's watch lasts until the server closes it",
            None,
        );
    }
    row(
        "watch",
        Verdict::Ok,
        what,
        "client-go's watch keeps its place with the bookmarks and re-watches from the last",
        None,
    )
}

/// The watch row of a resource that was quiet (no event, no bookmark from the LIST's
/// resourceVersion): bookmarks tested from [`older_revisions`].
async fn quiet_watch(ctx: &Ctx, rv: &str, first: String, seen: &mut Seen) -> Row {
    let quiet = format!(
        "{first}: no bookmark, the resource was quiet (a bookmark comes only for a revision \
         newer than the watch's)"
    );
    let mut untested = Vec::new();
    for older in older_revisions(rv, seen) {
        let got = match watch_from(ctx, &older, seen).await {
            Ok(got) => got,
            Err(e) if e.is_expired() => {
                untested.push(format!("from {older}: {}", failure(&e)));
                continue;
            }
            Err(e) => return watch_refused(&older, &e, seen),
        };
        let then = format!("{quiet}; {}", watched_text(&older, &got));
        if let Some(e) = got.error.as_ref().filter(|e| e.starts_with("410")) {
            untested.push(format!("from {older}: {e}"));
            continue;
        }
        if !got.bookmarks.is_empty() {
            return row(
                "watch",
                Verdict::Ok,
                then,
                "client-go's watch keeps its place with the bookmarks and re-watches from the \
                 last",
                None,
            );
        }
        if got.events > 0 || ctx.minor >= 31 {
            // The cache is past `older`: events came, or the LIST brought it to `rv`.
            return no_bookmarks(then);
        }
        untested.push(format!(
            "from {older}: nothing (Kubernetes {})",
            ctx.version
        ));
    }
    let why = match untested.is_empty() {
        true => "no integer resourceVersion to watch from".to_owned(),
        false => untested.join("; "),
    };
    row(
        "watch",
        Verdict::Skip,
        format!("{quiet}; bookmarks not tested: {why}"),
        "client-go re-watches from the last version it saw; bookmarks keep that version in \
         the server's history",
        None,
    )
}

async fn watch_expired(ctx: &Ctx, seen: &Seen) -> Row {
    if seen.watch_forbidden {
        return row(
            "watch.expired",
            Verdict::Warn,
            "not tried: watch is forbidden",
            "",
            None,
        );
    }
    let opts = WatchOptions {
        resource_version: "1".to_owned(),
        timeout_seconds: EXPIRED_SECONDS,
        allow_bookmarks: false,
        send_initial_events: false,
    };
    let w = match ctx.source.watch(opts).await {
        Ok(w) => w,
        Err(e) if e.is_expired() => {
            return failed(
                "watch.expired",
                Verdict::Ok,
                "WATCH from resourceVersion 1",
                &e,
                "client-go relists at once",
            )
        }
        Err(e) => {
            return failed(
                "watch.expired",
                Verdict::Fail,
                "WATCH from resourceVersion 1",
                &e,
                "client-go backs off and watches again",
            )
        }
    };
    let mut rvs = Vec::new();
    let got = drain(w.events, Duration::from_secs(8), None, false, &mut rvs).await;
    // A close at the requested timeout is the watch's own end, not the server ending a
    // too-old watch at once (kubernetes/kubernetes#137089).
    let at_timeout = |t: f64| t + 1.0 >= f64::from(EXPIRED_SECONDS);
    match (&got.error, got.closed) {
        (Some(e), _) if e.starts_with("410") => row(
            "watch.expired",
            Verdict::Ok,
            format!("WATCH from resourceVersion 1: an ERROR event, {e}"),
            "client-go relists at once",
            None,
        ),
        _ if got.events > 0 => row(
            "watch.expired",
            Verdict::Skip,
            format!(
                "not tested: the history still reaches resourceVersion 1 ({} event(s) of it \
                 came)",
                got.events
            ),
            "client-go replays them; a server that closes a too-old watch instead of \
             answering 410 Expired would show only once its history is compacted",
            None,
        ),
        (None, Some(t)) if at_timeout(t) => row(
            "watch.expired",
            Verdict::Skip,
            format!(
                "not tested: the history still reaches resourceVersion 1 (the watch lasted its \
                 timeoutSeconds={EXPIRED_SECONDS}, {t:.2} s, with no event: the selectors \
                 matched none of the history's)"
            ),
            "client-go replays the history it is sent; a 410 would make it relist",
            None,
        ),
        (None, Some(t)) => row(
            "watch.expired",
            Verdict::Fail,
            format!(
                "WATCH from resourceVersion 1 (too old): closed cleanly after {t:.2} s, no \
                 event, no 410 Expired"
            ),
            "client-go takes it for a very short watch and watches again from the same \
             version, in a loop, and never relists: its cache stays stale",
            Some("kubernetes/kubernetes#137089"),
        ),
        (Some(e), _) => row(
            "watch.expired",
            Verdict::Fail,
            format!("WATCH from resourceVersion 1: ended with {e}, not 410 Expired"),
            "client-go backs off and watches again from the same version",
            None,
        ),
        (None, None) => row(
            "watch.expired",
            Verdict::Warn,
            "WATCH from resourceVersion 1: neither an event nor an end in 8 s",
            "client-go waits on it",
            None,
        ),
    }
}

async fn streaming_list(ctx: &Ctx, seen: &mut Seen) -> Row {
    let opts = WatchOptions {
        resource_version: String::new(),
        timeout_seconds: 60,
        allow_bookmarks: true,
        send_initial_events: true,
    };
    let started = Instant::now();
    let w = match ctx.source.watch(opts).await {
        Ok(w) => w,
        Err(e) => return streaming_list_refused(&e, seen),
    };
    let (read, wire, gzip, protobuf) = (w.read.clone(), w.wire.clone(), w.gzip, w.protobuf);
    let mut initial = Vec::new();
    let got = drain(w.events, STREAM_MAX, Some(STREAM_IDLE), true, &mut initial).await;
    // The initial events carry their objects' versions, older than the list's: only the
    // bookmarks count as the stream's own.
    seen.rvs
        .extend(initial.into_iter().map(|(from, rv)| match from {
            "a watch event" => ("an initial event", rv),
            other => (other, rv),
        }));
    let secs = got
        .end_bookmark
        .unwrap_or_else(|| started.elapsed().as_secs_f64());
    let stream = Stream {
        events: got.events,
        seconds: secs,
        ended: got.end_bookmark.is_some(),
        bytes: read.as_ref().map_or(0, |r| r.get()),
        wire: wire.as_ref().map_or(0, |r| r.get()),
        gzip,
        refused: None,
    };
    let encoding = match (protobuf, gzip) {
        (true, true) => "protobuf+gzip",
        (true, false) => "protobuf",
        (false, true) => "json+gzip",
        (false, false) => "json",
    };
    let r = if let Some(t) = got.end_bookmark {
        row(
            "streaming-list",
            Verdict::Ok,
            format!(
                "{} initial event(s), then the bookmark annotated k8s.io/initial-events-end \
                 after {t:.2} s ({} on the wire, {encoding})",
                got.events,
                bytes(stream.wire)
            ),
            "client-go 0.35+ syncs from it (WatchListClient)",
            None,
        )
    } else {
        no_end_bookmark(&got)
    };
    seen.stream = Some(stream);
    r
}

/// The streaming list's row when the server refused the watch: client-go falls back.
fn streaming_list_refused(e: &SourceError, seen: &mut Seen) -> Row {
    let forbidden = e.api().is_some_and(|s| s.code == 403);
    seen.stream = Some(Stream {
        refused: Some(failure(e)),
        ..Stream::default()
    });
    row(
        "streaming-list",
        if forbidden {
            Verdict::Fail
        } else {
            Verdict::Warn
        },
        format!("WATCH sendInitialEvents=true: {}", failure(e)),
        "client-go 0.35+ falls back to LIST and WATCH",
        None,
    )
}

/// The streaming list's row when `got` ended without the end bookmark: how it ended.
fn no_end_bookmark(got: &Watched) -> Row {
    let how = match (&got.error, got.closed) {
        (Some(e), _) => format!("ended by {e}"),
        (None, Some(t)) => format!("closed after {t:.1} s"),
        (None, None) if !got.bookmarks.is_empty() => {
            "a bookmark without the annotation instead".to_owned()
        }
        (None, None) if got.last_event + 1.0 < STREAM_MAX.as_secs_f64() => {
            format!("nothing more for {} s", STREAM_IDLE.as_secs())
        }
        (None, None) => format!("still events after {} s", STREAM_MAX.as_secs()),
    };
    row(
        "streaming-list",
        Verdict::Fail,
        format!(
            "{} initial event(s) in {:.1} s, then no k8s.io/initial-events-end bookmark: {how}",
            got.events, got.last_event
        ),
        "client-go 0.35+ waits for it: the informer never syncs, the streaming list \
         starts over at each watch timeout; client-go before 0.35 (LIST then WATCH) is not \
         affected",
        Some("kubernetes/kubernetes#140890"),
    )
}

fn resource_versions(seen: &Seen) -> Row {
    let odd = seen
        .rvs
        .iter()
        .find(|(_, rv)| !rv.is_empty() && rv.parse::<u64>().is_err());
    if let Some((from, rv)) = odd {
        return row(
            "resourceVersion",
            Verdict::Warn,
            format!("{from}'s resourceVersion {rv:?} is not a decimal integer"),
            "client-go hands it back as an opaque string, so LIST and WATCH work (opaque \
             versions are legal before KEP-5504); what \
             compares versions cannot (comparable resourceVersions, KEP-5504; kwatch's \
             time-travel and consistency checks)",
            Some("karmada-io/karmada#3559"),
        );
    }
    let list = seen.list.as_ref().and_then(|l| l.rv.parse::<u64>().ok());
    let watched: Vec<u64> = seen
        .rvs
        .iter()
        .filter(|(from, _)| *from == "a watch event" || *from == "a bookmark")
        .filter_map(|(_, rv)| rv.parse().ok())
        .collect();
    let behind = list.and_then(|l| watched.iter().find(|w| **w < l).map(|w| (l, *w)));
    if let Some((l, w)) = behind {
        return row(
            "resourceVersion",
            Verdict::Warn,
            format!("a watch event at {w}, before the LIST's {l}"),
            "client-go takes versions as they come; kwatch reports the time travel",
            None,
        );
    }
    let watches = match watched.iter().max() {
        Some(top) => format!("watches up to {top}"),
        None => "no watch event or bookmark".to_owned(),
    };
    row(
        "resourceVersion",
        Verdict::Ok,
        format!(
            "{} seen, decimal integers; the LIST at {}, {watches}",
            seen.rvs.len(),
            list.map_or("?".to_owned(), |l| l.to_string()),
        ),
        "comparable as KEP-5504 defines them",
        None,
    )
}

fn gzip_row(seen: &Seen) -> Row {
    let Some(Listed {
        pages, transfer: t, ..
    }) = seen.full.as_ref().or(seen.list.as_ref())
    else {
        return row("encoding.gzip", Verdict::Warn, "no LIST", "", None);
    };
    let threshold = 128 * 1024;
    let per_page = t.bytes / (*pages as u64).max(1);
    if t.gzip {
        row(
            "encoding.gzip",
            Verdict::Ok,
            format!(
                "the LIST: {} sent as {} gzip",
                bytes(t.bytes),
                bytes(t.wire_bytes)
            ),
            "client-go asks gzip and reads it (Go's transport)",
            None,
        )
    } else if per_page > threshold {
        row(
            "encoding.gzip",
            Verdict::Warn,
            format!(
                "the LIST's pages ({} each) over 128 KiB came uncompressed",
                bytes(per_page)
            ),
            "more bytes on the wire: kube-apiserver gzips answers over 128 KiB \
             (APIResponseCompression) unless the client or a proxy turned it off",
            None,
        )
    } else {
        row(
            "encoding.gzip",
            Verdict::Ok,
            format!(
                "the LIST: {} per page, under kube-apiserver's 128 KiB threshold, sent as it is",
                bytes(per_page)
            ),
            "nothing to compress",
            None,
        )
    }
}

fn protobuf_row(ctx: &Ctx, seen: &Seen) -> Row {
    let asked = ctx.source.asks_protobuf();
    let got = seen.list.as_ref().is_some_and(|l| l.transfer.protobuf);
    match (asked, got) {
        (false, _) => row(
            "encoding.protobuf",
            Verdict::Ok,
            format!(
                "JSON: {} is not a built-in kind (custom resources are JSON only)",
                ctx.target.resource.kind
            ),
            "client-go's dynamic and typed clients read JSON",
            None,
        ),
        (true, true) => row(
            "encoding.protobuf",
            Verdict::Ok,
            "protobuf served for the built-in kind".to_owned(),
            "kube-controller-manager and typed clients that ask protobuf get it",
            None,
        ),
        (true, false) => row(
            "encoding.protobuf",
            Verdict::Warn,
            "asked protobuf first, answered JSON".to_owned(),
            "client-go reads the JSON (more CPU and bytes than protobuf)",
            None,
        ),
    }
}

fn watch_gzip_row(ctx: &Ctx, seen: &Seen) -> Row {
    let Some(s) = seen.stream.as_ref().filter(|s| s.refused.is_none()) else {
        return row(
            "encoding.watch-gzip",
            Verdict::Ok,
            "no streaming list to read",
            "",
            None,
        );
    };
    if s.gzip {
        row(
            "encoding.watch-gzip",
            Verdict::Ok,
            format!(
                "the streaming list came gzipped, one gzip member per flush (Kubernetes {}): \
                 {} decoded from {} on the wire",
                ctx.version,
                bytes(s.bytes),
                bytes(s.wire)
            ),
            "Go's gzip reader (client-go) reads every member; a reader that stops at the \
             first one loses the events after it",
            Some("kube-rs/kube#2079"),
        )
    } else {
        row(
            "encoding.watch-gzip",
            Verdict::Ok,
            format!(
                "the streaming list came uncompressed ({}{})",
                bytes(s.wire),
                if ctx.minor >= 37 {
                    ", though 1.37 compresses streaming lists by default"
                } else {
                    ", as before Kubernetes 1.37"
                }
            ),
            "nothing to decompress",
            None,
        )
    }
}

async fn table(ctx: &Ctx) -> Row {
    let path = format!(
        "{}?limit=1",
        ctx.target.collection_path(ctx.namespace.as_deref())
    );
    let accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
    match crate::client::source::get_document(&ctx.client, &path, accept, ctx.request_timeout).await
    {
        Ok(body) => {
            let v: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
            if v["kind"] == "Table" {
                let cols = v["columnDefinitions"].as_array().map_or(0, Vec::len);
                row(
                    "encoding.table",
                    Verdict::Ok,
                    format!("as=Table: a Table of {cols} columns"),
                    "kubectl get prints the server's columns",
                    None,
                )
            } else {
                row(
                    "encoding.table",
                    Verdict::Warn,
                    format!("as=Table: answered {} instead", v["kind"]),
                    "kubectl get falls back to NAME and AGE",
                    None,
                )
            }
        }
        Err(e) => failed(
            "encoding.table",
            Verdict::Warn,
            "as=Table",
            &e,
            "kubectl get cannot print the server's columns",
        ),
    }
}

fn sync_row(ctx: &Ctx, seen: &Seen) -> Row {
    let streaming = ctx.release >= Release::V0_35;
    let list = seen.full.as_ref();
    let stream = seen.stream.as_ref();
    let listed = list.map(|l| {
        format!(
            "a LIST at resourceVersion 0: {} objects, {} on the wire, {:.2} s",
            l.objects,
            bytes(l.transfer.wire_bytes),
            l.seconds
        )
    });
    match (streaming, stream) {
        (true, Some(s)) if s.ended => row(
            "sync",
            Verdict::Ok,
            format!(
                "a streaming list: {} objects, {} on the wire, {:.2} s",
                s.events,
                bytes(s.wire),
                s.seconds
            ),
            format!(
                "client-go {}'s informer (Kubernetes {}'s) syncs so",
                ctx.release, ctx.version
            ),
            None,
        ),
        (true, Some(s)) if s.refused.is_some() => row(
            "sync",
            if list.is_some() {
                Verdict::Ok
            } else {
                Verdict::Fail
            },
            listed.unwrap_or_else(|| "no LIST".to_owned()),
            format!(
                "client-go {}'s informer falls back to LIST and WATCH",
                ctx.release
            ),
            None,
        ),
        (true, _) => row(
            "sync",
            Verdict::Fail,
            "the streaming list never ended".to_owned(),
            format!(
                "client-go {}'s informer (Kubernetes {}'s) never syncs",
                ctx.release, ctx.version
            ),
            Some("kubernetes/kubernetes#140890"),
        ),
        (false, _) => row(
            "sync",
            if list.is_some() {
                Verdict::Ok
            } else {
                Verdict::Fail
            },
            listed.unwrap_or_else(|| "no LIST".to_owned()),
            format!(
                "client-go {}'s informer (Kubernetes {}'s) lists then watches",
                ctx.release, ctx.version
            ),
            None,
        ),
    }
}

/// `--write NAMESPACE`: a ConfigMap created, patched and deleted under a watch, each
/// change's arrival timed.
async fn write(ctx: &Ctx, ns: &str) -> Row {
    use k8s_openapi::api::core::v1::ConfigMap;
    let api: kube::Api<ConfigMap> = kube::Api::namespaced(ctx.client.clone(), ns);
    let w = match configmaps_watched(ctx, ns).await {
        Ok(w) => w,
        Err(why) => return row("write", Verdict::Fail, why, "", None),
    };
    let name = format!("kwatch-check-{:08x}", rand::random::<u32>());
    let mut events = w.events;
    let mut timings = Vec::new();
    let cm: ConfigMap = match serde_json::from_value(serde_json::json!({
        "metadata": {"name": name, "labels": {"app.kubernetes.io/managed-by": "kwatch-check"}},
        "data": {"step": "created"},
    })) {
        Ok(cm) => cm,
        Err(e) => return row("write", Verdict::Fail, e.to_string(), "", None),
    };
    let patch = serde_json::json!({"data": {"step": "patched"}});
    for step in ["create", "patch", "delete"] {
        let t = Instant::now();
        let done = match step {
            "create" => api.create(&PostParams::default(), &cm).await.map(|_| ()),
            "patch" => {
                let patch = kube::api::Patch::Merge(&patch);
                let params = kube::api::PatchParams::default();
                api.patch(&name, &params, &patch).await.map(|_| ())
            }
            _ => api
                .delete(&name, &DeleteParams::default())
                .await
                .map(|_| ()),
        };
        if let Err(e) = done {
            let e = failure(&crate::client::http::kube_error(e));
            return row(
                "write",
                Verdict::Fail,
                format!("{step} configmap {name} in {ns}: {e}"),
                "",
                None,
            );
        }
        let want = match step {
            "create" => "ADDED",
            "patch" => "MODIFIED",
            _ => "DELETED",
        };
        if !arrives(&mut events, &name, want).await {
            if step != "delete" {
                let _ = api.delete(&name, &DeleteParams::default()).await;
            }
            return row(
                "write",
                Verdict::Fail,
                format!("{step} configmap {name}: no {want} on the watch within {SHORT:?}"),
                "an informer would not see the change",
                None,
            );
        }
        timings.push(format!(
            "{step} → {want} in {:.3} s",
            t.elapsed().as_secs_f64()
        ));
    }
    row(
        "write",
        Verdict::Ok,
        format!("configmap {name} in {ns}: {}", timings.join(", ")),
        "an informer sees each change as fast",
        None,
    )
}

/// A watch of the ConfigMaps of `ns` from a LIST's resourceVersion; else what failed.
async fn configmaps_watched(ctx: &Ctx, ns: &str) -> Result<crate::cache::listwatch::Watch, String> {
    let path = format!(
        "/api/v1/namespaces/{}/configmaps",
        crate::client::target::segment(ns)
    );
    let source = KubeSource::new(ctx.client.clone(), path, None, None, ctx.request_timeout)
        .with_type("ConfigMap", "v1");
    let listed = source
        .list(ListOptions::default())
        .await
        .map_err(|e| format!("LIST configmaps in {ns}: {}", failure(&e)))?;
    let opts = WatchOptions {
        resource_version: listed.resource_version,
        timeout_seconds: 30,
        allow_bookmarks: false,
        send_initial_events: false,
    };
    source
        .watch(opts)
        .await
        .map_err(|e| format!("WATCH configmaps in {ns}: {}", failure(&e)))
}

/// Whether the watch's next events, within [`SHORT`], hold a `want` (`ADDED`,
/// `MODIFIED`, `DELETED`) of the object `name`.
async fn arrives<S>(events: &mut S, name: &str, want: &str) -> bool
where
    S: futures::Stream<Item = Result<WatchEvent, SourceError>> + Unpin,
{
    let seen = async {
        while let Some(ev) = events.next().await {
            let (kind, o) = match ev {
                Ok(WatchEvent::Added(o)) => ("ADDED", o),
                Ok(WatchEvent::Modified(o)) => ("MODIFIED", o),
                Ok(WatchEvent::Deleted(o)) => ("DELETED", o),
                Ok(_) => continue,
                Err(_) => return false,
            };
            if kind == want && o.meta().name == name {
                return true;
            }
        }
        false
    };
    tokio::time::timeout(SHORT, seen).await == Ok(true)
}

/// Where rows go: a table for people (padded as the rows come), or JSON lines.
struct Out {
    format: CheckOutput,
    header: bool,
    /// Several contexts: each row names its own (a CONTEXT column in the table).
    contexts: bool,
    /// The context of the rows printed now.
    context: Option<ContextName>,
}

impl Out {
    fn new(format: CheckOutput, contexts: bool) -> Out {
        Out {
            format,
            header: false,
            contexts,
            context: None,
        }
    }

    fn row(&mut self, r: &Row) -> Result<()> {
        let r = &Row {
            context: self.context.clone(),
            ..r.clone()
        };
        let mut out = std::io::stdout().lock();
        match self.format {
            CheckOutput::Json => {
                serde_json::to_writer(&mut out, r)?;
                out.write_all(b"\n")?;
            }
            CheckOutput::Table => {
                let width = match self.contexts {
                    true => 16,
                    false => 0,
                };
                let context = |c: &str| match self.contexts {
                    true => format!("{c:<width$} "),
                    false => String::new(),
                };
                if !self.header {
                    self.header = true;
                    writeln!(
                        out,
                        "{}{:<21} {:<6} {:<7} WHAT THE SERVER DID → WHAT CLIENT-GO DOES",
                        context("CONTEXT"),
                        "CHECK",
                        "RESULT",
                        "SECONDS"
                    )?;
                }
                let issue = r.issue.map(|i| format!(" ({i})")).unwrap_or_default();
                let client_go = match r.client_go.as_str() {
                    "" => String::new(),
                    c => format!(" → {c}"),
                };
                let line = format!(
                    "{}{:<21} {:<6} {:<7.3} {}{client_go}{issue}",
                    context(crate::context::or_empty(r.context.as_ref())),
                    r.check,
                    r.result.as_str(),
                    r.seconds,
                    r.server
                );
                writeln!(out, "{}", crate::text::sanitize(&line))?;
            }
        }
        out.flush()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_serialize_as_the_documented_schema() {
        let r = Row {
            context: None,
            check: "watch.expired",
            result: Verdict::Fail,
            server: "closed".into(),
            client_go: "loops".into(),
            issue: Some("kubernetes/kubernetes#137089"),
            seconds: 0.5,
        };
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"check":"watch.expired","result":"fail","server":"closed",
                "clientGo":"loops","issue":"kubernetes/kubernetes#137089","seconds":0.5})
        );
        // With several contexts, each row names its own, first.
        let r = Row {
            context: Some("prod".into()),
            result: Verdict::Skip,
            ..r
        };
        let text = serde_json::to_string(&r).unwrap();
        assert!(
            text.starts_with(r#"{"context":"prod","check":"watch.expired","result":"skip","#),
            "{text}"
        );
    }

    #[test]
    fn an_old_continue_token_decodes_as_kube_apiserver_encodes_them() {
        use base64::Engine;
        let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(OLD_CONTINUE)
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&raw).unwrap();
        assert_eq!(
            (v["v"].as_str(), v["rv"].as_i64()),
            (Some("meta.k8s.io/v1"), Some(1))
        );
    }
}
