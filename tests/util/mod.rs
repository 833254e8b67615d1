//! Test fixture: a `kwatch sim` child process and clients for it.
//!
//! [`SimProcess::start`] runs the built binary as
//! `kwatch sim --port 0 --write-kubeconfig <tempdir>/kubeconfig [--scenario idle] <extra_args>`
//! with a scrubbed environment (`HOME` = the temp dir, `NO_COLOR=1`, no `KUBECONFIG`), waits
//! (at most 30 s) for the `kwatch sim: listening on …` stderr line and keeps draining stderr.
//! The scenario is `idle` (no churn, no faults) unless `extra_args` name one with
//! `--scenario`, so tests are deterministic unless they ask for churn.
//!
//! - `kubeconfig`, `url`, `token`, `ca_pem`: how to reach it (read from the written kubeconfig).
//! - [`SimProcess::control`] / [`SimProcess::state`]: the `/_sim/…` control API, blocking;
//!   [`SimProcess::forced_410`]: the informer relists after a 410, by construction.
//! - [`eventually`]: waits for a condition (never for the clock).
//! - [`SimProcess::kubectl`]: runs `/usr/bin/kubectl --kubeconfig <kubeconfig> …` with
//!   `HOME` = the temp dir; [`SimProcess::kubectl_cmd`] gives the `Command` to spawn yourself.
//! - [`SimProcess::get`] / [`SimProcess::request`]: raw HTTP (status, headers, body) with the
//!   token; [`SimProcess::request_with`] chooses headers (e.g. no token, `Accept`).
//! - [`SimProcess::watch`]: a streaming reader; [`WatchStream::next`] yields one line (or the
//!   clean end, or an abnormal end) within a timeout.
//!
//! Dropping a `SimProcess` kills the child; [`SimProcess::terminate`] stops it with SIGTERM.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use futures::StreamExt;
use serde_json::Value;

/// How long one kwatch run, or one wait for its output, may take before the test fails.
pub const LIMIT: Duration = Duration::from_secs(60);

/// How often [`eventually`] looks again.
const POLL: Duration = Duration::from_millis(25);

/// Polls `probe` until it answers `Ok`, and returns that. At `limit` the test fails naming
/// `what` it waited for and what the last probe saw (its `Err`). The one way to wait for a
/// condition; a test never sleeps for things to happen.
pub fn eventually<T, Seen: std::fmt::Debug>(
    limit: Duration,
    what: &str,
    mut probe: impl FnMut() -> Result<T, Seen>,
) -> T {
    let deadline = Instant::now() + limit;
    loop {
        let seen = match probe() {
            Ok(v) => return v,
            Err(seen) => seen,
        };
        if Instant::now() >= deadline {
            panic!("waited {limit:?} for {what}; last seen: {seen:#?}");
        }
        std::thread::sleep(POLL);
    }
}

/// A raw HTTP response.
#[derive(Debug, Clone)]
pub struct Resp {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: String,
}

impl Resp {
    /// The body as JSON (panics with the body if it is not).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }

    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    }
}

/// What a watch stream produced next.
#[derive(Debug, Clone, PartialEq)]
pub enum WatchItem {
    /// One line, without its `\n`.
    Line(String),
    /// The body ended cleanly.
    End,
    /// The connection broke (e.g. the simulator dropped the watch).
    Broken(String),
    /// Nothing within the timeout.
    Timeout,
}

/// Lines of a streaming response, read on the fixture's runtime.
pub struct WatchStream {
    pub status: u16,
    rx: mpsc::Receiver<WatchItem>,
    done: bool,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for WatchStream {
    /// Closes the connection.
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl WatchStream {
    /// The next item, waiting at most `timeout`.
    pub fn next(&mut self, timeout: Duration) -> WatchItem {
        if self.done {
            return WatchItem::End;
        }
        match self.rx.recv_timeout(timeout) {
            Ok(item) => {
                if matches!(item, WatchItem::End | WatchItem::Broken(_)) {
                    self.done = true;
                }
                item
            }
            Err(mpsc::RecvTimeoutError::Timeout) => WatchItem::Timeout,
            Err(mpsc::RecvTimeoutError::Disconnected) => WatchItem::End,
        }
    }

    /// The next line parsed as a watch event (panics on anything else).
    pub fn event(&mut self, timeout: Duration) -> Value {
        match self.next(timeout) {
            WatchItem::Line(l) => {
                serde_json::from_str(&l).unwrap_or_else(|e| panic!("bad event ({e}): {l}"))
            }
            other => panic!("expected an event, got {other:?}"),
        }
    }

    /// The events up to and with the first BOOKMARK, each awaited at most `timeout`.
    pub fn events_to_bookmark(&mut self, timeout: Duration) -> Vec<Value> {
        let mut events = Vec::new();
        loop {
            let e = self.event(timeout);
            let last = e["type"] == "BOOKMARK";
            events.push(e);
            if last {
                return events;
            }
        }
    }

    /// Every item until the stream ends or `total` elapses; the last item is the end.
    pub fn collect(&mut self, total: Duration) -> Vec<WatchItem> {
        let deadline = Instant::now() + total;
        let mut out = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let item = self.next(left);
            let stop = !matches!(item, WatchItem::Line(_));
            out.push(item);
            if stop {
                return out;
            }
        }
    }
}

/// The names of a list's `items`, in order.
pub fn item_names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap().to_string())
        .collect()
}

/// Parses the `Line` items of `items` as JSON events.
pub fn events(items: &[WatchItem]) -> Vec<Value> {
    items
        .iter()
        .filter_map(|i| match i {
            WatchItem::Line(l) => {
                Some(serde_json::from_str(l).unwrap_or_else(|e| panic!("bad event ({e}): {l}")))
            }
            _ => None,
        })
        .collect()
}

/// `(type, name, resourceVersion)` of an event.
pub fn brief(ev: &Value) -> (String, String, String) {
    let s = |v: &Value| v.as_str().unwrap_or("").to_string();
    (
        s(&ev["type"]),
        s(&ev["object"]["metadata"]["name"]),
        s(&ev["object"]["metadata"]["resourceVersion"]),
    )
}

/// A running `kwatch sim`.
pub struct SimProcess {
    child: Child,
    dir: tempfile::TempDir,
    pub kubeconfig: PathBuf,
    pub url: String,
    pub token: String,
    pub ca_pem: String,
    stderr: Arc<Mutex<String>>,
    rt: tokio::runtime::Runtime,
    client: reqwest::Client,
}

impl SimProcess {
    /// Starts `kwatch sim` (see the module doc) and waits until it listens.
    pub fn start(extra_args: &[&str]) -> SimProcess {
        let dir = tempfile::tempdir().expect("tempdir");
        let kubeconfig = dir.path().join("kubeconfig");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_kwatch"));
        cmd.arg("sim").arg("--write-kubeconfig").arg(&kubeconfig);
        if !extra_args.contains(&"--port") {
            cmd.args(["--port", "0"]);
        }
        if !extra_args.contains(&"--scenario") {
            cmd.args(["--scenario", "idle"]);
        }
        cmd.args(extra_args)
            .env_clear()
            .env("HOME", dir.path())
            .env("NO_COLOR", "1")
            .env("PATH", "/usr/bin:/bin")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawning kwatch sim");
        let stderr = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = mpsc::channel::<String>();
        let pipe = child.stderr.take().expect("stderr pipe");
        let sink = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines() {
                let Ok(line) = line else { break };
                sink.lock().unwrap().push_str(&format!("{line}\n"));
                let _ = tx.send(line);
            }
        });
        let deadline = Instant::now() + Duration::from_secs(30);
        let url = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) => {
                    if let Some(u) = line.strip_prefix("kwatch sim: listening on ") {
                        break u.trim().to_string();
                    }
                }
                Err(_) => {
                    let _ = child.kill();
                    panic!(
                        "kwatch sim did not start; stderr:\n{}",
                        stderr.lock().unwrap()
                    );
                }
            }
        };
        // The kubeconfig is written right after the listening line.
        let mut text = String::new();
        while Instant::now() < deadline {
            text = std::fs::read_to_string(&kubeconfig).unwrap_or_default();
            if text.contains("current-context") {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let kc: serde_yaml::Value = serde_yaml::from_str(&text).expect("kubeconfig YAML");
        let token = kc["users"][0]["user"]["token"]
            .as_str()
            .expect("token")
            .to_string();
        let ca_pem = kc["clusters"][0]["cluster"]["certificate-authority-data"]
            .as_str()
            .map(|b| {
                String::from_utf8(
                    base64::engine::general_purpose::STANDARD
                        .decode(b)
                        .expect("CA base64"),
                )
                .expect("CA PEM")
            })
            .unwrap_or_default();
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        let mut builder = reqwest::Client::builder();
        if !ca_pem.is_empty() {
            builder = builder
                .add_root_certificate(
                    reqwest::Certificate::from_pem(ca_pem.as_bytes()).expect("CA"),
                )
                .tls_built_in_root_certs(false);
        }
        let client = {
            let _g = rt.enter();
            builder.build().expect("client")
        };
        SimProcess {
            child,
            dir,
            kubeconfig,
            url,
            token,
            ca_pem,
            stderr,
            rt,
            client,
        }
    }

    /// Sends SIGTERM and waits (at most 10 s) for the exit; returns the status and stderr.
    pub fn terminate(mut self) -> (std::process::ExitStatus, String) {
        let pid = self.child.id().to_string();
        let ok = Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("kill");
        assert!(ok.success());
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(st) = self.child.try_wait().expect("wait") {
                // Let the stderr thread catch up.
                std::thread::sleep(Duration::from_millis(50));
                return (st, self.stderr());
            }
            assert!(
                Instant::now() < deadline,
                "kwatch sim did not stop on SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Everything the child wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// The temp dir (HOME of the child and of kubectl).
    pub fn dir(&self) -> &std::path::Path {
        self.dir.path()
    }

    /// A raw request with the token. `body` is sent with `content_type` when given.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        content_type: Option<&str>,
        body: &str,
    ) -> Resp {
        let mut headers = vec![(
            "authorization".to_string(),
            format!("Bearer {}", self.token),
        )];
        if let Some(ct) = content_type {
            headers.push(("content-type".to_string(), ct.to_string()));
        }
        self.request_with(method, path, &headers, body)
    }

    /// A raw request with exactly these headers (no token unless given).
    pub fn request_with(
        &self,
        method: &str,
        path: &str,
        headers: &[(String, String)],
        body: &str,
    ) -> Resp {
        let url = format!("{}{path}", self.url);
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let mut req = self.client.request(method, url).body(body.to_string());
        for (k, v) in headers {
            req = req.header(k.as_str(), v.as_str());
        }
        self.rt.block_on(async move {
            let r = req.send().await.expect("request");
            let status = r.status().as_u16();
            let headers = r.headers().clone();
            let body = r.text().await.expect("body");
            Resp {
                status,
                headers,
                body,
            }
        })
    }

    /// GET with the token and these headers; the body as bytes, read to its end (a watch
    /// must be given `timeoutSeconds`). For bodies that are not text: protobuf.
    pub fn get_bytes(&self, path: &str, headers: &[(&str, &str)]) -> (u16, String, Vec<u8>) {
        let req = self.get_with(path, headers);
        self.rt.block_on(async move {
            let r = req.send().await.expect("request");
            let status = r.status().as_u16();
            let content_type = r
                .headers()
                .get("content-type")
                .map(|v| v.to_str().unwrap_or_default().to_string())
                .unwrap_or_default();
            (
                status,
                content_type,
                r.bytes().await.expect("body").to_vec(),
            )
        })
    }

    /// A GET with the token and these headers, to send.
    fn get_with(&self, path: &str, headers: &[(&str, &str)]) -> reqwest::RequestBuilder {
        let url = format!("{}{path}", self.url);
        let mut req = self
            .client
            .get(url)
            .header("authorization", format!("Bearer {}", self.token));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        req
    }

    /// GET with the token.
    pub fn get(&self, path: &str) -> Resp {
        self.request("GET", path, None, "")
    }

    /// DELETE with the token, without a body (the server's default options).
    pub fn delete(&self, path: &str) -> Resp {
        self.request("DELETE", path, None, "")
    }

    /// A request with the token and a JSON body.
    pub fn send_json(&self, method: &str, path: &str, body: &str) -> Resp {
        self.request(method, path, Some("application/json"), body)
    }

    /// A control API call; panics unless it answers 200.
    pub fn control(&self, method: &str, path: &str, body: Value) -> Value {
        let path = if path.starts_with('/') {
            path.to_string()
        } else {
            format!("/_sim/{path}")
        };
        let body = if body.is_null() {
            String::new()
        } else {
            body.to_string()
        };
        let r = self.request(method, &path, Some("application/json"), &body);
        assert_eq!(r.status, 200, "control {path}: {}", r.body);
        r.json()
    }

    /// `POST /_sim/fail`: the next requests that `body` matches get its error answer.
    pub fn fail_next(&self, body: Value) {
        self.control("POST", "/_sim/fail", body);
    }

    /// A 410 by construction, whatever the machine's load: holds every watch
    /// (`stall {"until":"released"}`), makes `changes` (which no watch has sent, so they must
    /// change something), forgets the history up to them (`compact`) and releases the
    /// watches, which find their revision compacted and end with 410 Expired; a watch
    /// opened meanwhile from an older resourceVersion gets it too. The informer relists.
    /// Returns what `changes` returns.
    pub fn forced_410<T>(&self, changes: impl FnOnce(&SimProcess) -> T) -> T {
        let held = serde_json::json!({"until": "released"});
        self.control("POST", "/_sim/stall", held);
        let made = changes(self);
        self.control("POST", "/_sim/compact", serde_json::json!({}));
        let released = self.control(
            "POST",
            "/_sim/release",
            serde_json::json!({"fault": "stall"}),
        );
        assert_eq!(
            released["released"],
            serde_json::json!(["stall"]),
            "{released}"
        );
        made
    }

    /// `POST /_sim/drop-watches`: every open watch is cut.
    pub fn drop_watches(&self) {
        self.control("POST", "/_sim/drop-watches", serde_json::json!({}));
    }

    /// `GET /_sim/state`.
    pub fn state(&self) -> Value {
        self.control("GET", "/_sim/state", Value::Null)
    }

    /// The current revision from the state endpoint.
    pub fn revision(&self) -> u64 {
        self.state()["revision"]
            .as_str()
            .and_then(|r| r.parse().ok())
            .expect("revision")
    }

    /// Opens a streaming GET (with the token) and reads it line by line in the background.
    pub fn watch(&self, path: &str) -> WatchStream {
        self.watch_with(path, &[])
    }

    /// [`SimProcess::watch`] of `path` (with its query) from the current revision.
    pub fn watch_from_now(&self, path: &str) -> WatchStream {
        let rev = self.revision();
        self.watch(&format!("{path}&resourceVersion={rev}"))
    }

    /// [`SimProcess::watch`] with extra headers.
    pub fn watch_with(&self, path: &str, extra: &[(&str, &str)]) -> WatchStream {
        let req = self.get_with(path, extra);
        let (tx, rx) = mpsc::channel();
        let (status_tx, status_rx) = mpsc::channel();
        let task = self.rt.spawn(async move {
            let resp = match req.send().await {
                Ok(r) => r,
                Err(e) => {
                    let _ = status_tx.send(0);
                    let _ = tx.send(WatchItem::Broken(e.to_string()));
                    return;
                }
            };
            let _ = status_tx.send(resp.status().as_u16());
            let mut stream = resp.bytes_stream();
            let mut buf: Vec<u8> = Vec::new();
            loop {
                match stream.next().await {
                    Some(Ok(chunk)) => {
                        buf.extend_from_slice(&chunk);
                        while let Some(i) = buf.iter().position(|b| *b == b'\n') {
                            let line: Vec<u8> = buf.drain(..=i).collect();
                            let text = String::from_utf8_lossy(&line[..line.len() - 1]).to_string();
                            if tx.send(WatchItem::Line(text)).is_err() {
                                return;
                            }
                        }
                    }
                    Some(Err(e)) => {
                        let _ = tx.send(WatchItem::Broken(format!("{e:?}")));
                        return;
                    }
                    None => {
                        if !buf.is_empty() {
                            let _ =
                                tx.send(WatchItem::Line(String::from_utf8_lossy(&buf).to_string()));
                        }
                        let _ = tx.send(WatchItem::End);
                        return;
                    }
                }
            }
        });
        let status = status_rx.recv_timeout(Duration::from_secs(10)).unwrap_or(0);
        WatchStream {
            status,
            rx,
            done: false,
            task,
        }
    }

    /// A `kubectl` command bound to this cluster (not yet run).
    pub fn kubectl_cmd(&self, args: impl kwatch::Args) -> Command {
        let mut cmd = tools::kubectl();
        cmd.arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(args.words())
            .env_clear()
            .env("HOME", self.dir.path())
            .env("PATH", "/usr/bin:/bin")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null());
        cmd
    }

    /// Runs kubectl to completion.
    pub fn kubectl(&self, args: impl kwatch::Args) -> Output {
        self.kubectl_cmd(args).output().expect("running kubectl")
    }

    /// Runs kubectl, panicking with its stderr unless it succeeds; returns stdout.
    pub fn kubectl_ok(&self, args: impl kwatch::Args) -> String {
        let args = args.words();
        let out = self.kubectl(&args[..]);
        assert!(
            out.status.success(),
            "kubectl {args:?} failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).to_string()
    }
}

impl Drop for SimProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub mod browser;
pub mod kubeconfig;
pub mod kwatch;
pub mod postgres;
pub mod shared;
pub mod tools;
