//! Hostile or broken servers: a tiny HTTP/1.1 server on 127.0.0.1 that answers what a
//! real API server never should. kwatch reports, recovers or exits with a clear error;
//! it never panics or hangs without saying why.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::util::kwatch::{command, of_type, Args, Running};
use crate::util::LIMIT;

/// What the server answers to one request.
enum Reply {
    /// status, content type, body
    Full(u16, &'static str, Vec<u8>),
    /// 200 and these bytes, then the connection stays open for `hold`, then closes.
    Stream(Vec<u8>, Duration),
}

type Handler = dyn Fn(&str, usize) -> Reply + Send + Sync;

/// Serves `handler(path_and_query, nth request to that path kind)` until the test ends.
struct Hostile {
    dir: tempfile::TempDir,
}

impl Hostile {
    fn start(handler: Box<Handler>) -> Hostile {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let handler: Arc<Handler> = Arc::from(handler);
        let lists = Arc::new(AtomicUsize::new(0));
        let watches = Arc::new(AtomicUsize::new(0));
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { break };
                let (h, l, w) = (handler.clone(), lists.clone(), watches.clone());
                std::thread::spawn(move || serve(conn, &*h, &l, &w));
            }
        });
        let dir = tempfile::tempdir().unwrap();
        let kc = format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: h\nclusters:\n- name: h\n  cluster:\n    server: http://127.0.0.1:{port}\n\
             contexts:\n- name: h\n  context:\n    cluster: h\n    user: h\n    namespace: default\nusers:\n- name: h\n  user: {{}}\n"
        );
        std::fs::write(dir.path().join("kubeconfig"), kc).unwrap();
        Hostile { dir }
    }

    fn kwatch(&self, args: impl Args) -> Running {
        let mut cmd = command(self.dir.path());
        cmd.arg("--kubeconfig")
            .arg(self.dir.path().join("kubeconfig"))
            .args(args.words());
        Running::spawn(cmd)
    }
}

fn serve(mut conn: TcpStream, handler: &Handler, lists: &AtomicUsize, watches: &AtomicUsize) {
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
    }
    let target = request_line.split(' ').nth(1).unwrap_or("/").to_owned();
    let n = if target.contains("watch=") {
        watches.fetch_add(1, Ordering::SeqCst)
    } else if target.contains("/configmaps") {
        lists.fetch_add(1, Ordering::SeqCst)
    } else {
        0
    };
    let path = target.split('?').next().unwrap_or_default();
    let reply = if path == "/api" {
        let versions = json!({"kind": "APIVersions", "versions": ["v1"]});
        Reply::Full(200, "application/json", versions.to_string().into_bytes())
    } else if path == "/api/v1" {
        Reply::Full(200, "application/json", discovery())
    } else if path == "/version" {
        // kube-apiserver 1.32's (the default informer's release comes from it).
        let version = json!({"major": "1", "minor": "32", "gitVersion": "v1.32.13"});
        Reply::Full(200, "application/json", version.to_string().into_bytes())
    } else {
        handler(&target, n)
    };
    let _ = match reply {
        Reply::Full(status, ctype, body) => {
            let head = format!(
                "HTTP/1.1 {status} X\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            conn.write_all(head.as_bytes())
                .and_then(|_| conn.write_all(&body))
        }
        Reply::Stream(body, hold) => {
            let head =
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n";
            let r = conn
                .write_all(head.as_bytes())
                .and_then(|_| conn.write_all(&body));
            let _ = conn.flush();
            std::thread::sleep(hold);
            r
        }
    };
    let _ = conn.shutdown(std::net::Shutdown::Both);
    let _ = reader.read(&mut [0u8; 1]);
}

fn discovery() -> Vec<u8> {
    json!({"kind": "APIResourceList", "groupVersion": "v1", "resources": [{
        "name": "configmaps", "singularName": "configmap", "namespaced": true, "kind": "ConfigMap",
        "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"], "shortNames": ["cm"]}]})
    .to_string()
    .into_bytes()
}

fn cm(name: &str, rv: u64, data: Value) -> Value {
    json!({"metadata": {"name": name, "namespace": "default", "resourceVersion": rv.to_string()}, "data": data})
}

fn list(rv: u64, items: Vec<Value>) -> Vec<u8> {
    json!({"kind": "ConfigMapList", "apiVersion": "v1", "metadata": {"resourceVersion": rv.to_string()}, "items": items})
        .to_string()
        .into_bytes()
}

fn event(kind: &str, obj: Value) -> Vec<u8> {
    let mut v = json!({"type": kind, "object": obj})
        .to_string()
        .into_bytes();
    v.push(b'\n');
    v
}

#[test]
fn oversized_objects_and_odd_names_pass_through() {
    let big = "x".repeat(5 * 1024 * 1024);
    let odd = "red\u{1b}[31m-名前\u{7}";
    let (big2, odd2) = (big.clone(), odd.to_owned());
    let server = Hostile::start(Box::new(move |target, _| {
        if target.contains("watch=") {
            Reply::Stream(
                event("ADDED", cm("big-2", 12, json!({"k": big2}))),
                Duration::from_secs(30),
            )
        } else {
            Reply::Full(
                200,
                "application/json",
                list(
                    10,
                    vec![cm("big-1", 9, json!({"k": big2})), cm(&odd2, 10, json!({}))],
                ),
            )
        }
    }));
    let out = server
        .kwatch("configmaps -o json --max-events 3 --watch-list off")
        .finish(LIMIT);
    assert_eq!(out.code(), Some(0), "{}", out.stderr);
    let recs: Vec<Value> = out
        .stdout
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let deltas: Vec<&Value> = recs.iter().filter(|r| r.get("key").is_some()).collect();
    assert_eq!(deltas.len(), 3);
    assert_eq!(
        deltas[0]["object"]["data"]["k"].as_str().unwrap().len(),
        big.len()
    );
    assert_eq!(deltas[1]["name"], odd);
    assert_eq!(deltas[2]["name"], "big-2");
    assert_eq!(
        deltas[2]["object"]["data"]["k"].as_str().unwrap().len(),
        big.len()
    );

    let out = server
        .kwatch("configmaps --max-events 2 --watch-list off")
        .finish(LIMIT);
    assert_eq!(out.code(), Some(0), "{}", out.stderr);
    let table = out.stdout.join("\n");
    assert!(table.contains("red\\u{1b}[31m-名前\\u{7}"), "{table}");
    assert!(!table.contains('\u{1b}') && !table.contains('\u{7}'));
}

#[test]
fn deeply_nested_json_passes_through_without_recursion() {
    // kwatch reads only metadata and keeps the rest as raw bytes: nesting that would
    // overflow a recursive parser is passed on untouched.
    let deep = format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000));
    let server = Hostile::start(Box::new(move |target, _| {
        if target.contains("watch=") {
            let line = format!(
                "{{\"type\":\"ADDED\",\"object\":{{\"metadata\":{{\"name\":\"deep\",\"namespace\":\"default\",\"resourceVersion\":\"11\"}},\"data\":{deep}}}}}\n"
            );
            Reply::Stream(line.into_bytes(), Duration::from_secs(30))
        } else {
            Reply::Full(200, "application/json", list(10, vec![]))
        }
    }));
    for format in ["json", "table", "yaml"] {
        let out = server
            .kwatch([
                "configmaps",
                "-o",
                format,
                "--max-events",
                "1",
                "--watch-list",
                "off",
            ])
            .finish(LIMIT);
        assert_eq!(out.code(), Some(0), "{format}: {}", out.stderr);
        // The table's `~` lines are on stderr; nothing else is.
        assert!(
            out.stderr
                .lines()
                .all(|l| format == "table" && l.starts_with("~ ")),
            "{}",
            out.stderr
        );
        let line = out
            .stdout
            .iter()
            .find(|l| l.contains("deep"))
            .expect("the deep object");
        if format == "json" {
            assert!(line.len() > 200_000 && line.ends_with(&format!("{}}}}}", "]".repeat(10))));
        }
        if format == "yaml" {
            let text = out.stdout.join("\n");
            assert!(
                text.contains("objectError: recursion limit exceeded"),
                "{text}"
            );
        }
    }
}

#[test]
fn error_bodies_that_are_not_status_objects() {
    let server = Hostile::start(Box::new(|target, n| {
        if target.contains("watch=") {
            Reply::Stream(Vec::new(), Duration::from_secs(30))
        } else if n < 2 {
            Reply::Full(
                503,
                "text/html",
                b"<html><body>\x1b[2J upstream gone</body></html>".to_vec(),
            )
        } else {
            Reply::Full(
                200,
                "application/json",
                list(20, vec![cm("a", 20, json!({}))]),
            )
        }
    }));
    let mut kw = server.kwatch("configmaps -o json --watch-list off");
    let recs = kw.wait_for(LIMIT, "Synced", |v| !of_type(v, "Synced").is_empty());
    let backoffs = of_type(&recs, "Backoff");
    assert_eq!(backoffs.len(), 2, "{recs:#?}");
    let cause = backoffs[0]["cause"].as_str().unwrap();
    assert!(cause.starts_with("503"), "{cause}");
    assert!(cause.contains("upstream gone"), "{cause}");

    // A permanent error with a plain-text body on the first list: one line, exit 1.
    let server = Hostile::start(Box::new(|_, _| {
        Reply::Full(404, "text/plain", b"404 page not found\n".to_vec())
    }));
    let out = server.kwatch("configmaps --watch-list off").finish(LIMIT);
    assert_eq!(out.code(), Some(1), "{}", out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    // In client-go's words (kubectl's for the same answer), not Go's
    // `404 page not found` behind two more 404s.
    assert!(
        out.stderr
            .contains("(NotFound): the server could not find the requested resource"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stderr.matches("404").count(), 0, "{}", out.stderr);
}

#[test]
fn a_watch_that_never_ends_a_line_is_cut_at_the_line_limit() {
    // 130 MiB without a newline, then the connection stays open.
    let server = Hostile::start(Box::new(|target, n| {
        if target.contains("watch=") && n == 0 {
            let mut body = b"{\"type\":\"ADDED\",\"object\":{\"data\":\"".to_vec();
            body.resize(130 * 1024 * 1024, b'x');
            Reply::Stream(body, Duration::from_secs(30))
        } else if target.contains("watch=") {
            Reply::Stream(
                event("ADDED", cm("after", 31, json!({}))),
                Duration::from_secs(30),
            )
        } else {
            Reply::Full(200, "application/json", list(30, vec![]))
        }
    }));
    let mut kw = server.kwatch("configmaps -o json --watch-list off");
    let recs = kw.wait_for(LIMIT, "recovery", |v| {
        v.iter().any(|r| r["key"] == "default/after")
    });
    let ended = of_type(&recs, "WatchEnded");
    assert!(
        ended[0]["reason"]
            .as_str()
            .unwrap()
            .contains("without a newline"),
        "{}",
        ended[0]
    );
    assert_eq!(ended[0]["error"], true);
}

/// A server whose resourceVersions are not integers (opaque, as the API
/// conventions allowed before KEP-5504; some aggregated API servers serve such) gets one
/// note and no TimeTravel, even where two of its versions read as integers going back.
#[test]
fn opaque_resource_versions_are_noted_once_and_never_called_time_travel() {
    let server = Hostile::start(Box::new(|target, _| {
        let cm = |name: &str, rv: &str| json!({"metadata": {"name": name, "namespace": "default", "resourceVersion": rv}});
        if target.contains("watch=") {
            let events = [
                event("ADDED", cm("b", "7")),
                event("MODIFIED", cm("b", "3")),
            ];
            Reply::Stream(events.concat(), Duration::from_secs(30))
        } else {
            let list = json!({"kind": "ConfigMapList", "apiVersion": "v1",
                "metadata": {"resourceVersion": "z9"}, "items": [cm("a", "z8")]});
            Reply::Full(200, "application/json", list.to_string().into_bytes())
        }
    }));
    let args = "configmaps --max-events 3 --watch-list off";
    let out = server
        .kwatch(format!("{args} -o json --stats"))
        .finish(LIMIT);
    assert_eq!(out.code(), Some(0), "{}", out.stderr);
    let recs = out.json();
    let opaque = of_type(&recs, "OpaqueResourceVersion");
    assert_eq!(opaque.len(), 1, "{recs:#?}");
    assert_eq!(opaque[0]["resourceVersion"], "z9");
    assert!(of_type(&recs, "TimeTravel").is_empty(), "{recs:#?}");
    assert!(
        out.stderr
            .contains("opaque resourceVersions: 1 (time travel not looked for)"),
        "{}",
        out.stderr
    );

    let out = server.kwatch(args).finish(LIMIT);
    assert_eq!(out.code(), Some(0), "{}", out.stderr);
    let note = "~ opaque resource versions configmaps: served rv=\"z9\", not an unsigned integer";
    assert!(out.stderr.contains(note), "{}", out.stderr);
}

/// A protobuf list with a field kwatch's table does not know (a newer
/// server's) is never read with the field dropped: the same list is asked again in JSON,
/// with one `WireFallback` record, and the resource stays JSON.
#[test]
fn a_protobuf_field_the_table_does_not_know_falls_back_to_json() {
    use kwatch::client::protobuf::Table;
    use kwatch::sim::protobuf_encode as encode;
    let table = Table::for_minor(32).unwrap().unwrap();
    let configmap = table.kind("v1", "ConfigMap").unwrap();
    let mut item = Vec::new();
    encode::message(table, configmap, &cm("a", 20, json!({"k": "v"})), &mut item).unwrap();
    item.extend_from_slice(&[0x98, 0x06, 0x01]); // field 99, varint 1
    let meta = [0x12, 0x02, b'2', b'0']; // ListMeta.resourceVersion = "20"
    let mut raw = vec![0x0a, meta.len() as u8];
    raw.extend_from_slice(&meta);
    raw.extend_from_slice(&[0x12, item.len() as u8]);
    raw.extend_from_slice(&item);
    let mut body = Vec::new();
    encode::envelope("v1", "ConfigMapList", &raw, &mut body);
    let server = Hostile::start(Box::new(move |target, n| {
        if target.contains("watch=") {
            Reply::Stream(Vec::new(), Duration::from_secs(30))
        } else if n == 0 {
            Reply::Full(200, "application/vnd.kubernetes.protobuf", body.clone())
        } else {
            Reply::Full(
                200,
                "application/json",
                list(20, vec![cm("a", 20, json!({"k": "v"}))]),
            )
        }
    }));
    let mut kw = server.kwatch("configmaps -o json --watch-list off --wire protobuf");
    let recs = kw.wait_for(LIMIT, "Synced", |v| !of_type(v, "Synced").is_empty());
    let replaced = of_type(&recs, "Replaced");
    assert_eq!(replaced.len(), 1, "{recs:#?}");
    assert_eq!(replaced[0]["object"]["data"], json!({"k": "v"}));
    // One WireFallback record (a `~` line at a terminal) naming the field.
    let fallback = of_type(&recs, "WireFallback");
    assert_eq!(fallback.len(), 1, "{recs:#?}");
    assert!(
        fallback[0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("field 99 of k8s.io.api.core.v1.ConfigMap")),
        "{recs:#?}"
    );
}
