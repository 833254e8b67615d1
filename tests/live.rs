//! `kwatch --live` on a real terminal: the built binary runs inside tmux
//! (`tmux -L <unique socket> new-session -d -x 120 -y 40`), keys go in with `send-keys`
//! and the screen comes back with `capture-pane -p`, against `kwatch sim` and the real
//! kubectl. Without tmux on the machine each test fails with the command that installs it.

use std::time::{Duration, Instant};

use crate::probe::probes_left;
use crate::util::kwatch::kubectl_f;
use crate::util::{tools, SimProcess};

/// A tmux server of the test's own, killed on drop.
struct Tmux {
    socket: String,
}

impl Tmux {
    /// Starts `kwatch --kubeconfig <sim's> ARGS` in a 120×40 pane; after kwatch exits
    /// the pane prints `EXIT=<code>` and stays, so the terminal's state can be read.
    fn start(name: &str, sim: &SimProcess, args: &str) -> Tmux {
        let shell = format!("{}; echo EXIT=$?; sleep 600", kwatch_line(sim, args));
        Tmux::run(name, &shell)
    }

    /// Starts `shell` (sh's syntax) in a 120×40 pane of a tmux server of its own.
    fn run(name: &str, shell: &str) -> Tmux {
        let t = Tmux {
            socket: format!("kwatch-live-{name}-{}", std::process::id()),
        };
        t.tmux(&["new-session", "-d", "-x", "120", "-y", "40", shell]);
        t
    }

    /// The pid of the pane's kwatch (a child of the pane's shell).
    fn kwatch_pid(&self) -> u32 {
        let shell: u32 = self
            .tmux(&["display", "-p", "#{pane_pid}"])
            .trim()
            .parse()
            .expect("the pane's pid");
        let start = Instant::now();
        loop {
            if let Some(pid) = child_named(shell, "kwatch") {
                return pid;
            }
            assert!(
                start.elapsed() < SOON,
                "kwatch under the pane's shell {shell}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = tools::tmux()
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux runs");
        assert!(out.status.success(), "tmux {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn keys(&self, keys: &[&str]) {
        let mut a = vec!["send-keys"];
        a.extend(keys);
        self.tmux(&a);
    }

    fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p"])
    }

    /// Waits (up to `limit`) until the screen satisfies `ok`; the screen then.
    fn wait(&self, limit: Duration, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if ok(&s) {
                return s;
            }
            assert!(
                start.elapsed() < limit,
                "{what} within {limit:?}; the screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The pane's `alternate_on` and `cursor_flag` (1: cursor visible).
    fn terminal_state(&self) -> String {
        self.tmux(&["display", "-p", "#{alternate_on} #{cursor_flag}"])
            .trim()
            .to_owned()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = tools::tmux()
            .args(["-L", &self.socket, "kill-server"])
            .output();
    }
}

/// The command line that runs the built kwatch on `sim` with `args`, in a scrubbed
/// environment.
fn kwatch_line(sim: &SimProcess, args: &str) -> String {
    format!(
        "env -i HOME={home} PATH=/usr/bin:/bin TERM=xterm-256color NO_COLOR=1 {bin} \
         --kubeconfig {kc} {args}",
        home = sim.dir().display(),
        bin = env!("CARGO_BIN_EXE_kwatch"),
        kc = sim.kubeconfig.display(),
    )
}

/// A process's parent and command name, from /proc/PID/stat; `None` once it is gone
/// or a zombie (exited, not yet reaped).
fn parent_and_name(pid: u32) -> Option<(u32, String)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (name, rest) = stat.split_once(" (")?.1.rsplit_once(") ")?;
    let mut fields = rest.split(' ');
    let state = fields.next()?;
    let parent = fields.next()?.parse().ok()?;
    (state != "Z" && state != "X").then(|| (parent, name.to_owned()))
}

/// A live child of `parent` called `name`.
fn child_named(parent: u32, name: &str) -> Option<u32> {
    std::fs::read_dir("/proc")
        .ok()?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .find(|&pid| parent_and_name(pid).is_some_and(|(p, n)| p == parent && n == name))
}

/// Waits (up to `limit`) until `pid` has exited; the time it took.
fn gone_within(pid: u32, limit: Duration, what: &str) -> Duration {
    let start = Instant::now();
    while parent_and_name(pid).is_some() {
        assert!(
            start.elapsed() < limit,
            "{what}: kwatch (pid {pid}) still runs after {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    start.elapsed()
}

/// A sim with pods in `default` (at least two), their names sorted.
fn sim_with_pods() -> (SimProcess, Vec<String>) {
    let sim = SimProcess::start(&["--objects", "3"]);
    let names = sim.kubectl_ok("get pods -n default -o name");
    let mut pods: Vec<String> = names
        .lines()
        .filter_map(|l| l.strip_prefix("pod/"))
        .map(str::to_owned)
        .collect();
    pods.sort();
    assert!(pods.len() >= 2, "{names}");
    (sim, pods)
}

fn has_row(screen: &str, name: &str) -> bool {
    screen.lines().any(|l| l.contains(&format!(" {name} ")))
}

fn synced(s: &str) -> bool {
    s.contains("synced rv=")
}

const SOON: Duration = Duration::from_secs(10);

#[test]
fn shows_the_pods_and_a_patch_in_place_and_a_delete_leaves() {
    let (sim, pods) = sim_with_pods();
    let t = Tmux::start("patch", &sim, "pods -n default --live");
    let s = t.wait(SOON, "the pods", |s| {
        synced(s) && pods.iter().all(|p| has_row(s, p))
    });
    assert!(s.contains("RESOURCEVERSION") && s.contains("STATUS"), "{s}");
    let rows_before = s.lines().filter(|l| l.contains(&pods[0])).count();
    assert_eq!(rows_before, 1, "{s}");
    sim.kubectl_ok(format!(
        "patch pod {} -n default -p {{\"metadata\":{{\"labels\":{{\"live\":\"yes\"}}}}}}",
        pods[0]
    ));
    // In place: still one row for the pod, now an Updated one, within 2 s.
    let s = t.wait(Duration::from_secs(2), "the patch in place", |s| {
        s.lines()
            .any(|l| l.contains(&format!(" {} ", pods[0])) && l.contains("Updated"))
    });
    assert_eq!(s.lines().filter(|l| l.contains(&pods[0])).count(), 1, "{s}");
    sim.kubectl_ok(format!("delete pod {} -n default --wait=false", pods[1]));
    // Dimmed for a few seconds, then gone.
    t.wait(SOON, "the deleted pod leaves", |s| {
        synced(s) && has_row(s, &pods[0]) && !has_row(s, &pods[1])
    });
}

#[test]
fn filter_then_history_with_the_patch_diff_then_q_exits_0_and_restores() {
    let (sim, pods) = sim_with_pods();
    let t = Tmux::start("history", &sim, "pods -n default --live --live-history 5");
    t.wait(SOON, "the pods", |s| pods.iter().all(|p| has_row(s, p)));
    assert_eq!(
        t.terminal_state(),
        "1 0",
        "alternate screen on, cursor hidden"
    );
    sim.kubectl_ok(format!(
        "patch pod {} -n default -p {{\"metadata\":{{\"labels\":{{\"live\":\"yes\"}}}}}}",
        pods[1]
    ));
    t.wait(SOON, "the patch", |s| s.contains("Updated"));
    // `/` and a label: only the patched pod stays.
    t.keys(&["/", "live=yes", "Enter"]);
    let s = t.wait(SOON, "the filter", |s| {
        has_row(s, &pods[1]) && !has_row(s, &pods[0])
    });
    assert!(s.contains("filter: /live=yes"), "{s}");
    t.keys(&["Enter"]);
    let s = t.wait(SOON, "the history", |s| s.contains("history of pods"));
    assert!(s.contains("Updated"), "{s}");
    assert!(s.contains("(5 versions kept; Esc returns)"), "{s}");
    assert!(
        s.contains(".metadata.labels.live: ∅ → \"yes\""),
        "the patch's diff:\n{s}"
    );
    t.keys(&["Escape"]);
    t.wait(SOON, "back to the table", |s| s.contains("RESOURCEVERSION"));
    t.keys(&["q"]);
    let s = t.wait(SOON, "kwatch exits", |s| s.contains("EXIT="));
    assert!(s.contains("EXIT=0"), "{s}");
    assert!(
        !s.contains("RESOURCEVERSION"),
        "the live screen is gone:\n{s}"
    );
    assert_eq!(
        t.terminal_state(),
        "0 1",
        "no alternate screen, cursor visible"
    );
}

#[test]
fn q_deletes_the_probes_configmap_before_it_exits_0() {
    let (sim, pods) = sim_with_pods();
    let t = Tmux::start(
        "probe",
        &sim,
        "pods -n default --live --probe default --probe-interval 200ms",
    );
    t.wait(SOON, "the pods", |s| has_row(s, &pods[0]));
    let start = Instant::now();
    while probes_left(&sim).len() != 1 {
        assert!(
            start.elapsed() < SOON,
            "the probe's ConfigMap while it runs"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    t.keys(&["q"]);
    let s = t.wait(SOON, "kwatch exits", |s| s.contains("EXIT="));
    assert!(s.contains("EXIT=0"), "{s}");
    assert_eq!(probes_left(&sim), Vec::<String>::new(), "deleted after q");
}

/// The stop flags end `--live` as they end every printer, with their exit codes, the
/// terminal restored, and `--record` keeping what the screen showed.
#[test]
fn until_timeout_and_max_events_end_the_view_with_their_codes_and_record_keeps_it() {
    let (sim, pods) = sim_with_pods();
    let recording = sim.dir().join("live.jsonl");
    let t = Tmux::start(
        "stops",
        &sim,
        &format!(
            "pods -n default --live --until deleted --timeout 60s --record {}",
            recording.display()
        ),
    );
    t.wait(SOON, "the pods", |s| has_row(s, &pods[0]));
    sim.kubectl_ok(format!("delete pod {} -n default --wait=false", pods[0]));
    let s = t.wait(SOON, "--until deleted", |s| s.contains("EXIT="));
    assert!(s.contains("EXIT=0"), "{s}");
    assert_eq!(t.terminal_state(), "0 1", "restored:\n{s}");
    let recorded = std::fs::read_to_string(&recording).expect("the recording");
    let deleted = format!("\"key\":\"default/{}\"", pods[0]);
    assert!(
        recorded
            .lines()
            .any(|l| l.contains("\"type\":\"Deleted\"") && l.contains(&deleted)),
        "{recorded}"
    );
    drop(t);
    for (name, args, code) in [
        ("timeout", "--until deleted --timeout 2s", "EXIT=3"),
        ("max-events", "--max-events 1", "EXIT=0"),
    ] {
        let t = Tmux::start(name, &sim, &format!("pods -n default --live {args}"));
        let s = t.wait(SOON, args, |s| s.contains("EXIT="));
        assert!(s.contains(code), "{args}: {s}");
        assert_eq!(t.terminal_state(), "0 1", "{args}: restored:\n{s}");
    }
}

#[test]
fn ctrl_c_exits_130_and_restores() {
    let (sim, pods) = sim_with_pods();
    let t = Tmux::start("ctrlc", &sim, "pods -n default -i");
    t.wait(SOON, "the pods", |s| has_row(s, &pods[0]));
    t.keys(&["C-c"]);
    let s = t.wait(SOON, "kwatch exits", |s| s.contains("EXIT="));
    assert!(s.contains("EXIT=130"), "{s}");
    assert_eq!(
        t.terminal_state(),
        "0 1",
        "no alternate screen, cursor visible"
    );
}

/// The column header line of the table (the first line after the status line that names
/// NAME).
fn column_header(screen: &str) -> String {
    screen
        .lines()
        .find(|l| l.starts_with("  ") && l.contains("NAME  "))
        .unwrap_or_default()
        .to_owned()
}

/// The status line (the one that ends with the help's key).
fn status_line(screen: &str) -> String {
    screen
        .lines()
        .find(|l| l.trim_end().ends_with("? help"))
        .unwrap_or_default()
        .to_owned()
}

/// A resize lays the screen out for the new width: at 60 columns the header's counters
/// take a line of their own and the table is cut (`→ more columns`, AGE out of sight);
/// → scrolls DELTA out (`← 1 columns`); back at 120 columns every column fits again, so
/// DELTA comes back and the marker goes.
#[test]
fn a_resize_to_60_columns_relays_out() {
    let (sim, pods) = sim_with_pods();
    let t = Tmux::start("resize", &sim, "pods -n default --live");
    let s = t.wait(SOON, "the pods", |s| synced(s) && has_row(s, &pods[0]));
    let wide_header = column_header(&s);
    assert!(
        wide_header.starts_with("  DELTA") && wide_header.trim_end().ends_with("AGE"),
        "{s}"
    );
    assert!(!status_line(&s).contains("more columns"), "{s}");
    assert!(!s.lines().any(|l| l.starts_with("  relists ")), "{s}");
    t.tmux(&["resize-window", "-x", "60", "-y", "40"]);
    let s = t.wait(SOON, "the narrow layout", |s| {
        status_line(s).contains("→ more columns") && has_row(s, &pods[0])
    });
    assert!(s.lines().all(|l| l.chars().count() <= 60), "{s}");
    let header = column_header(&s);
    assert!(
        header.starts_with("  DELTA") && !header.contains("AGE"),
        "cut at 60 columns:\n{s}"
    );
    assert!(
        s.lines().any(|l| l.starts_with("  relists ")),
        "the counters on a line of their own:\n{s}"
    );
    t.keys(&["Right"]);
    let s = t.wait(SOON, "DELTA scrolled out", |s| {
        status_line(s).contains("← 1 columns")
    });
    assert!(column_header(&s).starts_with("  NAME"), "{s}");
    t.tmux(&["resize-window", "-x", "120", "-y", "40"]);
    let s = t.wait(SOON, "the wide layout again", |s| {
        column_header(s) == wide_header
    });
    assert!(!status_line(&s).contains('←'), "{s}");
}

/// The selection is an object: a pod created above the selected one (its
/// name sorts first) leaves the selection on the selected pod, and `y` shows its YAML.
#[test]
fn the_selection_stays_on_its_pod_when_a_pod_comes_above_it() {
    let (sim, pods) = sim_with_pods();
    let last = pods.last().expect("pods");
    let t = Tmux::start("select", &sim, "pods -n default --live");
    t.wait(SOON, "the pods", |s| pods.iter().all(|p| has_row(s, p)));
    let selected = |s: &str| {
        s.lines()
            .find(|l| l.starts_with('>'))
            .unwrap_or_default()
            .to_owned()
    };
    t.keys(&["End"]);
    t.wait(SOON, "the last pod selected", |s| {
        selected(s).contains(&format!(" {last} "))
    });
    kubectl_f(
        &sim,
        "create",
        &serde_json::json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "a-first", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}),
    );
    let s = t.wait(SOON, "the new pod", |s| has_row(s, "a-first"));
    assert!(selected(&s).contains(&format!(" {last} ")), "{s}");
    t.keys(&["y"]);
    let s = t.wait(SOON, "the YAML", |s| s.contains("apiVersion: v1"));
    assert!(s.contains(&format!("name: {last}")), "{s}");
}

#[test]
fn refused_when_stdout_is_not_a_terminal() {
    let sim = SimProcess::start(&[]);
    let out = sim.kwatch("pods --live").exits(2);
    let err = out.stderr.trim();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("--live needs a terminal") && err.contains("-o json"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "{:?}", out.stdout);
    // `--live-history` without `--live`, and out of its range: clap's one line each.
    for (args, want) in [
        ("pods --live-history 5", "error: the following required arguments were not provided: --live; see 'kwatch --help'"),
        ("pods --live --live-history 0", "error: invalid value '0' for '--live-history <N>': 0 is not in 1..=10000"),
    ] {
        let out = sim.kwatch(args).exits(2);
        let err = out.stderr.trim();
        assert_eq!(err.lines().count(), 1, "{args}: {err}");
        assert!(err.starts_with(want), "{args}: {err}");
    }
}

/// A terminal that goes away (tmux's session killed: the pane's
/// terminal hung up, its shell gone, kwatch re-parented and sent no signal) ends
/// `--live` within 2 s with 129, instead of spinning on `read(0) = 0` for ever.
#[test]
fn a_terminal_that_goes_away_ends_live_with_129_within_2s() {
    let (sim, pods) = sim_with_pods();
    let code = sim.dir().join("hangup-code");
    // The shell ignores SIGHUP so that it outlives the terminal to write kwatch's code.
    let shell = format!(
        "trap '' HUP; {}; echo $? > {}",
        kwatch_line(&sim, "pods -n default --live"),
        code.display()
    );
    let t = Tmux::run("hangup", &shell);
    t.wait(SOON, "the pods", |s| has_row(s, &pods[0]));
    let pid = t.kwatch_pid();
    drop(t);
    gone_within(pid, Duration::from_secs(2), "the terminal gone");
    let start = Instant::now();
    let code = loop {
        match std::fs::read_to_string(&code) {
            Ok(c) if c.ends_with('\n') => break c,
            _ => assert!(
                start.elapsed() < SOON,
                "the shell writes kwatch's exit code"
            ),
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(code.trim(), "129");
}

/// In `--live`, SIGTERM still ends the run with 143 and SIGINT with 130
/// (raw mode makes Ctrl-C a key, but `kill -INT` is still a signal).
#[test]
fn sigterm_exits_143_and_sigint_130_in_live() {
    let (sim, pods) = sim_with_pods();
    for (signal, code) in [("TERM", "EXIT=143"), ("INT", "EXIT=130")] {
        let t = Tmux::start(&format!("sig{signal}"), &sim, "pods -n default --live");
        t.wait(SOON, "the pods", |s| has_row(s, &pods[0]));
        let pid = t.kwatch_pid();
        let kill = std::process::Command::new("kill")
            .args([&format!("-{signal}"), &pid.to_string()])
            .status()
            .expect("kill runs");
        assert!(kill.success(), "kill -{signal} {pid}");
        let s = t.wait(SOON, "kwatch exits", |s| s.contains("EXIT="));
        assert!(s.contains(code), "SIG{signal}: {s}");
        assert_eq!(t.terminal_state(), "0 1", "SIG{signal}: restored:\n{s}");
    }
}

/// In the filter line Ctrl-W deletes a word and Ctrl-U the line, as in a shell (Ctrl-U
/// once typed a `u`).
#[test]
fn ctrl_w_and_ctrl_u_edit_the_filter_line() {
    let (sim, pods) = sim_with_pods();
    let t = Tmux::start("ctrlu", &sim, "pods -n default --live");
    t.wait(SOON, "the pods", |s| pods.iter().all(|p| has_row(s, p)));
    t.keys(&["/", "zz web"]);
    t.wait(SOON, "the typed filter", |s| s.contains("filter: /zz web_"));
    t.keys(&["C-w"]);
    t.wait(SOON, "a word deleted", |s| s.contains("filter: /zz _"));
    t.keys(&["C-u"]);
    t.wait(SOON, "the line cleared", |s| s.contains("filter: /_"));
    t.keys(&[&pods[0], "Enter"]);
    // Kept (Enter): no cursor after it; only its pod left.
    let kept = format!("filter: /{}  ", pods[0]);
    t.wait(SOON, "the filter kept", |s| {
        s.contains(&kept) && has_row(s, &pods[0]) && !has_row(s, &pods[1])
    });
}

/// `--follow --live` shows the owner graph as a tree in place (each object under
/// its owner, whatever order the lists popped in), and `c` collapses the selected row's
/// subtree, then expands it; an orphaned replica set's rows leave, its pods' with them.
#[test]
fn follow_shows_the_tree_and_c_collapses_a_subtree() {
    use crate::follow::{orphan, web_tree};
    let (sim, ns, _rs) = web_tree("live-follow", &["web-1-b", "web-1-a"]);
    let t = Tmux::start(
        "follow",
        &sim,
        &format!("deploy/web -n {ns} --follow --live"),
    );
    let names = ["web ", "└─ web-1 ", "  └─ web-1-a ", "  └─ web-1-b "];
    let at = |s: &str, n: &str| s.lines().position(|l| l.contains(n));
    let s = t.wait(SOON, "the tree", |s| {
        names.iter().all(|n| at(s, n).is_some())
    });
    let rows: Vec<Option<usize>> = names.iter().map(|n| at(&s, n)).collect();
    let mut sorted = rows.clone();
    sorted.sort();
    assert_eq!(rows, sorted, "each row under its owner:\n{s}");
    // The first row is selected: down to the replica set, and collapse it.
    t.keys(&["j", "c"]);
    let s = t.wait(SOON, "the pods hidden", |s| {
        at(s, "web-1-a").is_none() && at(s, "web-1-b").is_none() && s.contains("1 collapsed")
    });
    assert!(at(&s, "└─ web-1 ").is_some(), "the replica set stays:\n{s}");
    t.keys(&["c"]);
    t.wait(SOON, "the pods back", |s| {
        names.iter().all(|n| at(s, n).is_some()) && !s.contains("collapsed")
    });
    // Orphaned: the replica set leaves the tree, and each of its pods with it.
    orphan(&sim, &ns, "rs/web-1");
    // Gone rows stay dimmed a few seconds first: the suite's limit, not SOON.
    let s = t.wait(crate::util::LIMIT, "the subtree's rows gone", |s| {
        names[1..].iter().all(|n| at(s, n).is_none())
    });
    assert!(at(&s, "web ").is_some(), "the root stays:\n{s}");
    t.keys(&["q"]);
    t.wait(SOON, "kwatch exits 0", |s| s.contains("EXIT=0"));
}
