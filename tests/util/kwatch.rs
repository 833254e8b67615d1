//! Runs the built `kwatch` binary as a user does, against a [`SimProcess`], with a
//! scrubbed environment, and collects its stdout lines (JSON lines parsed) as they come.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::SimProcess;

/// A `kwatch` command with the environment pinned: HOME in a temp dir, no KUBECONFIG,
/// NO_COLOR, COLUMNS.
pub fn command(home: &std::path::Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kwatch"));
    cmd.env_clear()
        .env("HOME", home)
        .env("NO_COLOR", "1")
        .env("COLUMNS", "120")
        .env("PATH", "/usr/bin:/bin")
        .stdin(Stdio::null());
    cmd
}

/// `kwatch --kubeconfig <sim's> args…` run to completion (bounded by `limit`).
pub fn run(sim: &SimProcess, args: &[&str], limit: Duration) -> Finished {
    let mut cmd = command(sim.dir());
    cmd.arg("--kubeconfig").arg(&sim.kubeconfig).args(args);
    Running::spawn(cmd).finish(limit)
}

/// What a finished kwatch left behind.
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: Vec<String>,
    pub stderr: String,
}

impl Finished {
    /// The stdout lines as JSON (panics on a non-JSON line).
    pub fn json(&self) -> Vec<Value> {
        self.stdout
            .iter()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    }

    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }
}

/// A kwatch still running.
pub struct Running {
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
    stderr: Arc<Mutex<String>>,
    readers: Vec<std::thread::JoinHandle<()>>,
}

impl Running {
    pub fn spawn(mut cmd: Command) -> Running {
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawning kwatch");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let stderr = Arc::new(Mutex::new(String::new()));
        let out = child.stdout.take().expect("stdout");
        let err = child.stderr.take().expect("stderr");
        let l = lines.clone();
        let e = stderr.clone();
        let readers = vec![
            std::thread::spawn(move || {
                for line in BufReader::new(out).lines() {
                    let Ok(line) = line else { break };
                    l.lock().unwrap().push(line);
                }
            }),
            std::thread::spawn(move || {
                for line in BufReader::new(err).lines() {
                    let Ok(line) = line else { break };
                    e.lock().unwrap().push_str(&format!("{line}\n"));
                }
            }),
        ];
        Running {
            child,
            lines,
            stderr,
            readers,
        }
    }

    /// `kwatch --kubeconfig <sim's> args…`, running.
    pub fn watch(sim: &SimProcess, args: &[&str]) -> Running {
        let mut cmd = command(sim.dir());
        cmd.arg("--kubeconfig").arg(&sim.kubeconfig).args(args);
        Running::spawn(cmd)
    }

    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }

    pub fn json(&self) -> Vec<Value> {
        self.lines()
            .iter()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// The process's peak resident set so far (VmHWM), in KiB.
    pub fn peak_rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }

    /// Waits until `pred` holds for the JSON lines so far; panics with the output if it
    /// does not within `limit`.
    pub fn wait_for(
        &mut self,
        limit: Duration,
        what: &str,
        pred: impl Fn(&[Value]) -> bool,
    ) -> Vec<Value> {
        let deadline = Instant::now() + limit;
        loop {
            let v = self.json();
            if pred(&v) {
                return v;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!(
                    "timed out waiting for {what}; stdout:\n{}\nstderr:\n{}",
                    self.lines().join("\n"),
                    self.stderr()
                );
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                std::thread::sleep(Duration::from_millis(100));
                if !pred(&self.json()) {
                    panic!(
                        "kwatch exited ({status}) before {what}; stdout:\n{}\nstderr:\n{}",
                        self.lines().join("\n"),
                        self.stderr()
                    );
                }
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// Waits for the process to exit (killing it after `limit`, which fails the test).
    pub fn finish(mut self, limit: Duration) -> Finished {
        let deadline = Instant::now() + limit;
        let status = loop {
            if let Some(s) = self.child.try_wait().expect("wait") {
                break s;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "kwatch did not exit within {limit:?}; stdout:\n{}\nstderr:\n{}",
                    self.lines().join("\n"),
                    self.stderr()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        for r in self.readers.drain(..) {
            let _ = r.join();
        }
        Finished {
            status,
            stdout: self.lines(),
            stderr: self.stderr(),
        }
    }

    /// Sends SIGINT, as Ctrl-C does, and waits for the exit.
    pub fn interrupt(self, limit: Duration) -> Finished {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-INT", &pid]).status();
        self.finish(limit)
    }

    /// Sends SIGTERM, as `kill` does, and waits for the exit.
    pub fn terminate(self, limit: Duration) -> Finished {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        self.finish(limit)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Records of one `type`.
pub fn of_type<'a>(v: &'a [Value], t: &str) -> Vec<&'a Value> {
    v.iter().filter(|r| r["type"] == t).collect()
}

/// A delta record (it has a `key`).
pub fn is_delta(r: &Value) -> bool {
    r.get("key").is_some()
}

/// `kubectl create|replace -f` of a JSON manifest (kubectl's `create configmap` sends
/// protobuf, which the simulator does not speak); returns the stored object.
pub fn kubectl_f(sim: &SimProcess, verb: &str, manifest: &Value) -> Value {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let file = sim.dir().join(format!("manifest-{n}.json"));
    std::fs::write(&file, manifest.to_string()).expect("writing the manifest");
    let out = sim.kubectl_ok(&[verb, "-f", file.to_str().expect("utf-8 path"), "-o", "json"]);
    serde_json::from_str(&out).expect("kubectl's JSON")
}

/// A ConfigMap manifest.
pub fn configmap(namespace: &str, name: &str, data: Value) -> Value {
    serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace}, "data": data})
}

/// A synced `kwatch configmaps -n default -o json --watch-list off EXTRA…` whose watch has
/// run for more than a second (so that cutting it is a clean close, not a very short
/// watch).
pub fn watching_configmaps(sim: &SimProcess, extra: &[&str]) -> Running {
    let mut args = vec![
        "configmaps",
        "-n",
        "default",
        "-o",
        "json",
        "--watch-list",
        "off",
    ];
    args.extend_from_slice(extra);
    let mut kw = Running::watch(sim, &args);
    kw.wait_for(Duration::from_secs(40), "Watch", |v| {
        !of_type(v, "Watch").is_empty()
    });
    std::thread::sleep(Duration::from_millis(1200));
    kw
}
