//! Runs the built `kwatch` binary as a user does, against a [`SimProcess`], with a
//! scrubbed environment, and collects its stdout lines (JSON lines parsed) as they come.
//!
//! A test reads as the command a user types:
//! `sim.kwatch("pods -n default --until-synced -o name").success()` runs
//! `kwatch --kubeconfig <sim's> pods -n default --until-synced -o name` to its end (within
//! [`LIMIT`]), asserts exit 0 and some stdout, and returns the [`Finished`] run;
//! `.exits(3)` asserts another code. A word with a space in it takes the array form,
//! `sim.kwatch(["cm", "-o", "jsonpath={.a} {.b}"])`. [`SimProcess::start_kwatch`] leaves it
//! running ([`Running`]); [`SimProcess::kwatch_cmd`] gives the `Command` to change first.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{SimProcess, LIMIT};

/// A kwatch command line: a `&str` is split on whitespace as a shell splits plain words;
/// an array, slice or `Vec` gives the words themselves.
pub trait Args {
    fn words(self) -> Vec<String>;
}

impl Args for &str {
    fn words(self) -> Vec<String> {
        self.split_whitespace().map(str::to_string).collect()
    }
}

impl<const N: usize> Args for [&str; N] {
    fn words(self) -> Vec<String> {
        self.iter().map(|w| w.to_string()).collect()
    }
}

impl<const N: usize> Args for &[&str; N] {
    fn words(self) -> Vec<String> {
        self.as_slice().words()
    }
}

impl Args for &[&str] {
    fn words(self) -> Vec<String> {
        self.iter().map(|w| w.to_string()).collect()
    }
}

impl Args for Vec<&str> {
    fn words(self) -> Vec<String> {
        self.as_slice().words()
    }
}

impl Args for &[String] {
    fn words(self) -> Vec<String> {
        self.to_vec()
    }
}

impl Args for &Vec<&str> {
    fn words(self) -> Vec<String> {
        self.as_slice().words()
    }
}

impl Args for String {
    fn words(self) -> Vec<String> {
        self.as_str().words()
    }
}

impl Args for Vec<String> {
    fn words(self) -> Vec<String> {
        self
    }
}

impl SimProcess {
    /// `kwatch --kubeconfig <sim's> ARGS`, not yet run.
    pub fn kwatch_cmd(&self, args: impl Args) -> Command {
        let mut cmd = command(self.dir());
        cmd.arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(args.words());
        cmd
    }

    /// `kwatch --kubeconfig <sim's> ARGS` run to its end (killed after [`LIMIT`], which
    /// fails the test).
    pub fn kwatch(&self, args: impl Args) -> Finished {
        Running::spawn(self.kwatch_cmd(args)).finish(LIMIT)
    }

    /// `kwatch --kubeconfig <sim's> ARGS`, left running.
    pub fn start_kwatch(&self, args: impl Args) -> Running {
        Running::spawn(self.kwatch_cmd(args))
    }

    /// `kwatch --kubeconfig <sim's> ARGS --record FILE`, left running, FILE (returned)
    /// named `name` in the sim's temp dir.
    pub fn start_recording(&self, name: &str, args: impl Args) -> (Running, PathBuf) {
        let file = self.dir().join(name);
        let mut words = args.words();
        words.extend(["--record".to_owned(), file.to_string_lossy().into_owned()]);
        (self.start_kwatch(words), file)
    }

    /// [`SimProcess::start_kwatch`] with `env` added: kwatch's test hooks
    /// (`KWATCH_TEST_SHORT_WATCH_MS`, `KWATCH_TEST_BACKOFF_START_MS`, docs/watch-health.md).
    pub fn start_kwatch_env(&self, env: &[(&str, &str)], args: impl Args) -> Running {
        let mut cmd = self.kwatch_cmd(args);
        cmd.envs(env.iter().copied());
        Running::spawn(cmd)
    }
}

/// `kwatch replay FILE ARGS` (HOME in `home`) run to its end, killed after `limit`.
pub fn replay_within(home: &Path, file: &Path, args: impl Args, limit: Duration) -> Finished {
    let mut cmd = command(home);
    cmd.arg("replay").arg(file).args(args.words());
    Running::spawn(cmd).finish(limit)
}

/// `kwatch replay FILE ARGS` (HOME in `home`) run to its end (within [`LIMIT`]).
pub fn replay(home: &Path, file: &Path, args: impl Args) -> Finished {
    replay_within(home, file, args, LIMIT)
}

/// [`replay`] of a recording whose text is `text`, in a temp dir of its own.
pub fn replay_text(text: &str, args: impl Args) -> Finished {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rec.jsonl");
    std::fs::write(&file, text).unwrap();
    replay(dir.path(), &file, args)
}

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

/// `kwatch --kubeconfig KUBECONFIG ARGS` with HOME = `home`, run to its end (within
/// [`LIMIT`]).
pub fn kwatch_using(
    home: &std::path::Path,
    kubeconfig: &std::path::Path,
    args: impl Args,
) -> Finished {
    let mut cmd = command(home);
    cmd.arg("--kubeconfig").arg(kubeconfig).args(args.words());
    Running::spawn(cmd).finish(LIMIT)
}

/// What a finished kwatch left behind.
#[derive(Debug)]
pub struct Finished {
    /// The words after the program name, for failure messages.
    pub argv: Vec<String>,
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

    /// Asserts the exit code (the run's words, stdout and stderr in the message).
    #[track_caller]
    pub fn exits(self, code: i32) -> Finished {
        assert_eq!(
            self.code(),
            Some(code),
            "kwatch {}\nstdout:\n{}\nstderr:\n{}",
            self.argv.join(" "),
            self.stdout.join("\n"),
            self.stderr
        );
        self
    }

    /// Asserts exit 0 and at least one stdout line.
    #[track_caller]
    pub fn success(self) -> Finished {
        let out = self.exits(0);
        assert!(
            !out.stdout.is_empty(),
            "kwatch {}: exit 0 with nothing on stdout; stderr:\n{}",
            out.argv.join(" "),
            out.stderr
        );
        out
    }
}

/// A new sim started with `sim_args` and `kwatch ARGS` run against it to exit 0: the
/// opening of most tests. The sim is returned alive for what the test asks it next.
#[track_caller]
pub fn on_new_sim(sim_args: &[&str], args: impl Args) -> (SimProcess, Finished) {
    let sim = SimProcess::start(sim_args);
    let out = sim.kwatch(args).exits(0);
    (sim, out)
}

/// A kwatch still running.
pub struct Running {
    argv: Vec<String>,
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
    stderr: Arc<Mutex<String>>,
    readers: Vec<std::thread::JoinHandle<()>>,
}

impl Running {
    pub fn spawn(cmd: Command) -> Running {
        Running::spawn_read_until(cmd, |_| false)
    }

    /// Spawns `cmd` with a reader of its stdout that goes away after the first line for
    /// which `last` holds, as `grep -m1` or `head` in a pipeline does: kwatch then sees
    /// its stdout closed.
    pub fn spawn_read_until(
        mut cmd: Command,
        last: impl Fn(&str) -> bool + Send + 'static,
    ) -> Running {
        let argv = cmd
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
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
                    let done = last(&line);
                    l.lock().unwrap().push(line);
                    if done {
                        break;
                    }
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
            argv,
            child,
            lines,
            stderr,
            readers,
        }
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
            argv: std::mem::take(&mut self.argv),
            status,
            stdout: self.lines(),
            stderr: self.stderr(),
        }
    }

    /// Kills it with SIGKILL, as `kill -9` does (nothing of kwatch runs after it), and
    /// waits for the exit.
    pub fn kill9(mut self, limit: Duration) -> Finished {
        let _ = self.child.kill();
        self.finish(limit)
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
    let out = sim.kubectl_ok([verb, "-f", file.to_str().expect("utf-8 path"), "-o", "json"]);
    serde_json::from_str(&out).expect("kubectl's JSON")
}

/// `kubectl create -f` of a ConfigMap with `data`; returns the stored object.
pub fn create_configmap(sim: &SimProcess, namespace: &str, name: &str, data: Value) -> Value {
    kubectl_f(sim, "create", &configmap(namespace, name, data))
}

/// A ConfigMap manifest.
pub fn configmap(namespace: &str, name: &str, data: Value) -> Value {
    serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace}, "data": data})
}

/// A synced `kwatch configmaps -n default -o json --watch-list off EXTRA…`, watching,
/// without client-go's very-short-watch rule (`KWATCH_TEST_SHORT_WATCH_MS=0`): cutting
/// its watch at once is a clean close, not a very short watch, with no second to wait.
pub fn watching_configmaps(sim: &SimProcess, extra: &[&str]) -> Running {
    let hooks = [("KWATCH_TEST_SHORT_WATCH_MS", "0")];
    let mut kw = sim.start_kwatch_env(&hooks, &configmaps_args(extra)[..]);
    kw.wait_for(LIMIT, "Watch", |v| !of_type(v, "Watch").is_empty());
    kw
}

/// [`watching_configmaps`] with the very-short-watch rule in force, for the tests of that
/// rule: the first watch has delivered a bookmark (an event: cutting it is a clean close),
/// so that only a later watch can be very short. The bookmark comes of a ConfigMap changed
/// in another namespace ([`stir_configmaps`]).
pub fn watching_configmaps_with_the_short_watch_rule(sim: &SimProcess, extra: &[&str]) -> Running {
    let mut kw = sim.start_kwatch(&configmaps_args(extra)[..]);
    kw.wait_for(LIMIT, "Watch", |v| !of_type(v, "Watch").is_empty());
    stir_configmaps(sim);
    kw.wait_for(LIMIT, "a bookmark on the watch", |v| {
        v.iter()
            .skip_while(|r| r["type"] != "Watch")
            .any(|r| r["type"] == "Bookmark")
    });
    kw
}

/// A ConfigMap created in namespace team-a: the configmaps' watch cache moves, so that a
/// watch of `-n default`'s gets a bookmark (and no event). kube-apiserver sends a watch a
/// bookmark only for a revision of its resource newer than the watch's (`cache_watcher.go`):
/// a watch of a quiet resource gets none.
pub fn stir_configmaps(sim: &SimProcess) {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    create_configmap(sim, "team-a", &format!("stir-{n}"), serde_json::json!({}));
}

/// `configmaps -n default -o json --watch-list off EXTRA…`.
pub fn configmaps_args(extra: &[&str]) -> Vec<String> {
    let words = "configmaps -n default -o json --watch-list off".split(' ');
    words
        .chain(extra.iter().copied())
        .map(str::to_owned)
        .collect()
}

/// A new sim started with `sim_args`, and a [`watching_configmaps`] kwatch with `extra`
/// against it: the opening of the tests that break a running watch.
pub fn watching_a_new_sim(sim_args: &[&str], extra: &[&str]) -> (SimProcess, Running) {
    let sim = SimProcess::start(sim_args);
    let kw = watching_configmaps(&sim, extra);
    (sim, kw)
}
