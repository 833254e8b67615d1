//! Several contexts as a fleet: a cluster that is down or forbidden is left out with a `~`
//! line naming its context while the others sync and stream on, and the exit code says
//! whether every context synced (5 when not).

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use crate::util::kubeconfig::{closed_port, fleet_kubeconfig, Entry};
use crate::util::kwatch::{is_delta, kwatch_using, Finished};
use crate::util::{eventually, SimProcess, LIMIT};

/// The names of every namespace the simulator holds.
fn namespaces(sim: &SimProcess) -> BTreeSet<String> {
    sim.state()["objects"]["namespaces"]
        .as_object()
        .expect("namespaces in the state")
        .keys()
        .cloned()
        .collect()
}

/// The names of the objects of `context`'s deltas.
fn names_in(recs: &[Value], context: &str) -> BTreeSet<String> {
    recs.iter()
        .filter(|r| is_delta(r) && r["context"] == context)
        .map(|r| r["name"].as_str().expect("a name").to_owned())
        .collect()
}

/// `kwatch namespaces --context CONTEXTS -o json --until-synced --timeout 2m` to its end.
fn synced_namespaces(dir: &Path, kubeconfig: &Path, contexts: &str) -> Finished {
    let args = [
        "namespaces",
        "--context",
        contexts,
        "-o",
        "json",
        "--until-synced",
        "--timeout",
        "2m",
    ];
    kwatch_using(dir, kubeconfig, args)
}

#[test]
fn a_cluster_that_is_down_is_left_out_and_the_others_sync() {
    let a = SimProcess::start(&["--objects", "2"]);
    let b = SimProcess::start(&["--objects", "2", "--server-version", "1.36"]);
    let entries = [
        ("a", Entry::Live(&a)),
        ("b", Entry::Live(&b)),
        ("dead", Entry::Down(&a, closed_port())),
    ];
    let kc = fleet_kubeconfig(&entries, a.dir());
    let out = synced_namespaces(a.dir(), &kc, "a,b,dead").exits(5);
    let recs = out.json();
    assert_eq!(names_in(&recs, "a"), namespaces(&a), "{}", out.stderr);
    assert_eq!(names_in(&recs, "b"), namespaces(&b), "{}", out.stderr);
    assert!(names_in(&recs, "dead").is_empty());
    for c in ["a", "b"] {
        let synced = recs
            .iter()
            .filter(|r| r["type"] == "Synced" && r["context"] == c);
        assert_eq!(synced.count(), 1, "context {c}: {recs:#?}");
    }
    let left = out
        .stderr
        .lines()
        .find(|l| l.starts_with("~ leaving out context dead"))
        .unwrap_or_else(|| panic!("no line names the dead context:\n{}", out.stderr));
    assert!(left.contains("refused"), "{left}");
    assert!(!out.stderr.contains("context a") && !out.stderr.contains("context b"));
}

/// A context whose kubeconfig entry cannot be used is that context's trouble: left out
/// with its reason while the others sync (exit 5). Alone, it ends the run as before.
#[test]
fn a_context_whose_kubeconfig_entry_fails_is_left_out() {
    let a = SimProcess::start(&["--objects", "2"]);
    let entries = [
        ("a", Entry::Live(&a)),
        ("nocluster", Entry::Broken(&a, "no-cluster")),
        ("nocert", Entry::Broken(&a, "missing-cert")),
        ("noexec", Entry::Broken(&a, "failing-exec")),
    ];
    let kc = fleet_kubeconfig(&entries, a.dir());
    let out = synced_namespaces(a.dir(), &kc, "a,nocluster,nocert,noexec").exits(5);
    assert_eq!(names_in(&out.json(), "a"), namespaces(&a), "{}", out.stderr);
    for (context, why) in [
        ("nocluster", "does not exist in the kubeconfig"),
        ("nocert", "unable to read client-cert "),
        ("noexec", "exec"),
    ] {
        let left = out
            .stderr
            .lines()
            .find(|l| l.starts_with(&format!("~ leaving out context {context}")))
            .unwrap_or_else(|| panic!("no line names context {context}:\n{}", out.stderr));
        assert!(left.contains(why), "{left}");
    }
    // clientcmd's words, the user's name in the kubeconfig and Go's error.
    let nocert = out
        .stderr
        .lines()
        .find(|l| l.starts_with("~ leaving out context nocert"))
        .unwrap_or_default();
    let missing = a.dir().join("nocert-absent.pem");
    let missing = missing.display();
    assert!(
        nocert.ends_with(&format!(
            ": unable to read client-cert {missing} for nocert due to open {missing}: no such \
             file or directory"
        )),
        "{nocert}"
    );
    let alone = synced_namespaces(a.dir(), &kc, "nocluster").exits(1);
    assert!(alone.stdout.is_empty(), "{:?}", alone.stdout);
    assert!(
        alone
            .stderr
            .starts_with("error: cluster \"nocluster-absent\" does not exist"),
        "{}",
        alone.stderr
    );
}

#[test]
fn every_cluster_live_syncs_and_exits_0() {
    let a = SimProcess::start(&["--objects", "2"]);
    let b = SimProcess::start(&["--objects", "2"]);
    let kc = fleet_kubeconfig(&[("a", Entry::Live(&a)), ("b", Entry::Live(&b))], a.dir());
    let out = synced_namespaces(a.dir(), &kc, "a,b").exits(0);
    let recs = out.json();
    assert_eq!(names_in(&recs, "a"), namespaces(&a));
    assert_eq!(names_in(&recs, "b"), namespaces(&b));
    assert!(!out.stderr.contains("leaving out"), "{}", out.stderr);
}

#[test]
fn a_forbidden_cluster_is_left_out_with_kubectls_words() {
    let a = SimProcess::start(&["--objects", "2"]);
    let nobody = "system:serviceaccount:default:nobody";
    let entries = [("a", Entry::Live(&a)), ("nope", Entry::As(&a, nobody))];
    let kc = fleet_kubeconfig(&entries, a.dir());
    let out = synced_namespaces(a.dir(), &kc, "a,nope").exits(5);
    assert_eq!(names_in(&out.json(), "a"), namespaces(&a));
    let left = out
        .stderr
        .lines()
        .find(|l| l.starts_with("~ leaving out namespaces in nope"))
        .unwrap_or_else(|| panic!("no line names the forbidden context:\n{}", out.stderr));
    assert!(left.contains("forbidden"), "{left}");
}

#[test]
fn every_cluster_down_is_an_error() {
    let a = SimProcess::start(&["--objects", "2"]);
    let entries = [
        ("x", Entry::Down(&a, closed_port())),
        ("y", Entry::Down(&a, closed_port())),
    ];
    let kc = fleet_kubeconfig(&entries, a.dir());
    let out = synced_namespaces(a.dir(), &kc, "x,y").exits(1);
    assert!(out.stdout.is_empty());
    let last = out.stderr.lines().last().unwrap_or_default();
    assert_eq!(
        last,
        "error: none of the 2 contexts can be watched: each failed, as said above"
    );
    for c in ["x", "y"] {
        assert!(
            out.stderr
                .contains(&format!("~ leaving out context {c} after 3 tries")),
            "{}",
            out.stderr
        );
    }
}

#[test]
fn at_timeout_a_cluster_not_synced_is_named_and_the_exit_is_5() {
    let a = SimProcess::start(&["--objects", "2"]);
    let b = SimProcess::start(&["--objects", "2"]);
    // b answers discovery but fails every list of namespaces: its reflector backs off
    // and retries, and never syncs.
    b.control(
        "POST",
        "/_sim/fail",
        serde_json::json!({"code": 503, "always": true, "verb": "list", "resource": "namespaces"}),
    );
    let kc = fleet_kubeconfig(&[("a", Entry::Live(&a)), ("b", Entry::Live(&b))], a.dir());
    let args = "namespaces --context a,b -o json --timeout 10s";
    let out = kwatch_using(a.dir(), &kc, args).exits(5);
    let recs = out.json();
    assert_eq!(names_in(&recs, "a"), namespaces(&a), "{}", out.stderr);
    assert!(names_in(&recs, "b").is_empty());
    assert!(
        out.stderr
            .contains("~ context b had not synced when --timeout came after 10s"),
        "{}",
        out.stderr
    );
}

#[test]
fn all_contexts_and_a_pattern_pick_contexts_from_the_kubeconfig() {
    let a = SimProcess::start(&["--objects", "2"]);
    let b = SimProcess::start(&["--objects", "2"]);
    let entries = [
        ("prod-a", Entry::Live(&a)),
        ("prod-b", Entry::Live(&b)),
        ("dev", Entry::Down(&a, closed_port())),
    ];
    let kc = fleet_kubeconfig(&entries, a.dir());

    let out = synced_namespaces(a.dir(), &kc, "prod-*").exits(0);
    let recs = out.json();
    assert_eq!(names_in(&recs, "prod-a"), namespaces(&a));
    assert_eq!(names_in(&recs, "prod-b"), namespaces(&b));
    assert!(!out.stderr.contains("dev"), "{}", out.stderr);

    let args = "namespaces --all-contexts -o json --until-synced --timeout 2m";
    let out = kwatch_using(a.dir(), &kc, args).exits(5);
    let recs = out.json();
    assert_eq!(names_in(&recs, "prod-a"), namespaces(&a));
    assert_eq!(names_in(&recs, "prod-b"), namespaces(&b));
    assert!(
        out.stderr
            .contains("~ leaving out context dev after 3 tries"),
        "{}",
        out.stderr
    );

    let out = synced_namespaces(a.dir(), &kc, "qa-*").exits(1);
    assert!(out.stdout.is_empty());
    assert_eq!(
        out.stderr.trim_end(),
        "error: --context \"qa-*\" matches no context of the kubeconfig: `kubectl config \
         get-contexts -o name` lists them (`*` stands for any characters, `?` for one)"
    );
    let out = kwatch_using(a.dir(), &kc, "namespaces --all-contexts --context dev").exits(2);
    assert!(out.stderr.contains("--all-contexts"), "{}", out.stderr);
}

#[test]
fn sim_clusters_serves_a_kubeconfig_of_n_contexts_for_kubectl_and_kwatch() {
    let sim = SimProcess::start(&["--clusters", "3", "--objects", "2"]);
    let contexts = ["kwatch-sim-1", "kwatch-sim-2", "kwatch-sim-3"];
    // Each context is a cluster of its own: kubectl reaches each, and a namespace made
    // in one is in that one only.
    sim.kubectl_ok("--context kwatch-sim-2 create namespace only-in-2");
    let mut want = Vec::new();
    for c in contexts {
        let names: BTreeSet<String> = sim
            .kubectl_ok(["--context", c, "get", "ns", "-o", "name"])
            .lines()
            .map(|l| l.trim_start_matches("namespace/").to_owned())
            .collect();
        assert_eq!(
            names.contains("only-in-2"),
            c == "kwatch-sim-2",
            "{c}: {names:?}"
        );
        want.push(names);
    }
    let out = synced_namespaces(sim.dir(), &sim.kubeconfig, "kwatch-sim-*").exits(0);
    let recs = out.json();
    for (c, names) in contexts.iter().zip(&want) {
        assert_eq!(&names_in(&recs, c), names, "context {c}");
    }
    let args = "pods -A --all-contexts -o json --until-synced --timeout 2m";
    let out = kwatch_using(sim.dir(), &sim.kubeconfig, args).exits(0);
    let recs = out.json();
    for c in contexts {
        assert_eq!(names_in(&recs, c).len(), 2, "context {c}: {}", out.stderr);
    }
}

#[test]
fn stats_say_each_context_synced_or_left_out() {
    let a = SimProcess::start(&["--objects", "2"]);
    let entries = [
        ("a", Entry::Live(&a)),
        ("dead", Entry::Down(&a, closed_port())),
    ];
    let kc = fleet_kubeconfig(&entries, a.dir());
    let args = "namespaces --context a,dead -o json --until-synced --timeout 2m --stats";
    let out = kwatch_using(a.dir(), &kc, args).exits(5);
    let line = |start: &str| {
        out.stderr
            .lines()
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("no line {start:?}:\n{}", out.stderr))
            .to_owned()
    };
    let deltas = namespaces(&a).len();
    let live = line("  context a: synced after ");
    assert!(
        live.ends_with(&format!(
            ", deltas {deltas}, lists 1 (0 relists), backoffs 0, retries 0"
        )),
        "{live}"
    );
    // Left out at its start, it is tried again in the background: said as a context that
    // fails later is, "retrying since" the time of its first failure.
    let dead = line("  context dead: ");
    let rest = dead
        .strip_prefix("  context dead: not watched, retrying since ")
        .unwrap_or_else(|| panic!("{dead}"));
    let (since, figures) = rest.split_once(", ").unwrap_or_else(|| panic!("{dead}"));
    assert!(since.parse::<jiff::Timestamp>().is_ok(), "{dead}");
    assert_eq!(
        figures,
        "deltas 0, lists 0 (0 relists), backoffs 0, retries 0"
    );
}

/// `--stats`' elapsed is the run's wall time from its start, the contexts' starts included
/// (it used to count from after them: `elapsed: 53ms` for a run of 2.6 s). A context whose
/// server closes every connection at once is tried three times (client-go's backoff
/// between) before it is left out; the test times those tries at the server's end (its
/// first and last connection, both within the run) and elapsed is no less.
#[test]
fn stats_elapsed_includes_the_contexts_starts() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::Instant;
    let a = SimProcess::start(&["--objects", "2"]);
    let dead = std::net::TcpListener::bind("127.0.0.1:0").expect("binding a port");
    let port = dead.local_addr().expect("its address").port();
    let accepted: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let server = {
        let (accepted, stop) = (accepted.clone(), stop.clone());
        std::thread::spawn(move || {
            for conn in dead.incoming() {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                accepted.lock().unwrap().push(Instant::now());
                drop(conn);
            }
        })
    };
    let entries = [("a", Entry::Live(&a)), ("dead", Entry::Down(&a, port))];
    let kc = fleet_kubeconfig(&entries, a.dir());
    let args = "namespaces --context a,dead -o json --until-synced --timeout 2m --stats";
    let out = kwatch_using(a.dir(), &kc, args).exits(5);
    stop.store(true, Ordering::SeqCst);
    let _ = std::net::TcpStream::connect(("127.0.0.1", port));
    server.join().expect("the dead server's thread");
    let accepted = accepted.lock().unwrap().clone();
    assert!(accepted.len() >= 3, "{accepted:?}\n{}", out.stderr);
    let tries = accepted[accepted.len() - 1] - accepted[0];
    let elapsed: u128 = out
        .stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("elapsed: "))
        .and_then(|l| l.split("ms").next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no elapsed line:\n{}", out.stderr));
    assert!(
        elapsed >= tries.as_millis(),
        "elapsed {elapsed}ms, the dead context's tries took {tries:?}:\n{}",
        out.stderr
    );
}

/// A server that accepts connections and never answers (its TLS handshake never
/// completes) holds its context's start for half of `--timeout` at most: the other
/// cluster syncs within the other half.
#[test]
fn a_cluster_that_never_answers_is_left_out_at_half_the_timeout() {
    let a = SimProcess::start(&["--objects", "2"]);
    // Connections complete in the kernel's backlog; nothing ever reads them.
    let hung = std::net::TcpListener::bind("127.0.0.1:0").expect("binding a port");
    let port = hung.local_addr().expect("its address").port();
    let entries = [("a", Entry::Live(&a)), ("hung", Entry::Down(&a, port))];
    let kc = fleet_kubeconfig(&entries, a.dir());
    let args = "namespaces --context a,hung -o json --until-synced --timeout 20s";
    let out = kwatch_using(a.dir(), &kc, args).exits(5);
    assert_eq!(names_in(&out.json(), "a"), namespaces(&a), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("~ leaving out context hung: not started within 10s, half of --timeout"),
        "{}",
        out.stderr
    );
    drop(hung);
}

/// `--metrics`' `informer_synced` names, per context, which cluster is behind.
#[test]
fn metrics_say_which_context_has_synced() {
    use crate::metrics::{metrics_addr, parsed, sample, scrape};
    let a = SimProcess::start(&["--objects", "2"]);
    let b = SimProcess::start(&["--objects", "2"]);
    // b's lists of namespaces fail (503) for as long as the test runs: it never syncs.
    b.control(
        "POST",
        "/_sim/fail",
        serde_json::json!({"code": 503, "always": true, "verb": "list", "resource": "namespaces"}),
    );
    let entries = [
        ("a", Entry::Live(&a)),
        ("b", Entry::Live(&b)),
        ("dead", Entry::Down(&a, closed_port())),
    ];
    let kc = fleet_kubeconfig(&entries, a.dir());
    let mut cmd = crate::util::kwatch::command(a.dir());
    cmd.arg("--kubeconfig").arg(&kc).args([
        "namespaces",
        "--context",
        "a,b,dead",
        "-o",
        "json",
        "--metrics",
        "127.0.0.1:0",
    ]);
    let kw = crate::util::kwatch::Running::spawn(cmd);
    let addr = eventually(LIMIT, "the metrics address", || {
        let err = kw.stderr();
        match err.contains("kwatch: metrics on http://") {
            true => Ok(metrics_addr(&kw)),
            false => Err(err),
        }
    });
    let synced = |samples: &[Value], c: &str| {
        let labels = [("resource", "namespaces"), ("context", c)];
        sample(samples, "informer_synced", &labels)
    };
    // dead, left out at its start, is served at 0 under the resource the others watch.
    eventually(LIMIT, "a synced, b and dead not", || {
        let samples = parsed(&scrape(&addr).2);
        let seen = ["a", "b", "dead"].map(|c| synced(&samples, c));
        match seen {
            [Some(1.0), Some(0.0), Some(0.0)] => Ok(()),
            _ => Err(seen),
        }
    });
    kw.interrupt(LIMIT);
}

/// The Fleet records of `key`, in order.
fn fleet_lines<'a>(recs: &'a [Value], key: &str) -> Vec<&'a Value> {
    recs.iter()
        .filter(|r| r["type"] == "Fleet" && r["key"] == key)
        .collect()
}

/// `--view fleet`: every key once when every context has synced (what each cluster has,
/// an object missing from one marked), then a line per change: a Deployment's new
/// generation reaching cluster after cluster, until they agree again.
#[test]
fn the_fleet_view_shows_a_rollout_reaching_cluster_after_cluster() {
    let sim = SimProcess::start(&["--clusters", "3", "--objects", "2"]);
    let contexts = ["kwatch-sim-1", "kwatch-sim-2", "kwatch-sim-3"];
    sim.kubectl_ok("--context kwatch-sim-3 delete deployment api -n team-a");
    let mut kw = sim.start_kwatch("deployments -A --all-contexts --view fleet -o json");
    let recs = kw.wait_for(LIMIT, "every key once", |v| {
        v.iter().filter(|r| r["type"] == "Fleet").count() >= 2
    });
    // Nothing but Fleet records and the reflectors' own: no delta is printed.
    let deltas = ["Added", "Updated", "Deleted", "Replaced", "Sync"];
    assert!(
        !recs.iter().any(|r| deltas.iter().any(|d| r["type"] == *d)),
        "{recs:#?}"
    );
    let api = fleet_lines(&recs, "team-a/api");
    assert_eq!(api.len(), 1, "{recs:#?}");
    assert_eq!(api[0]["differs"], true, "{api:#?}");
    assert!(api[0]["clusters"]["kwatch-sim-3"].is_null(), "{api:#?}");
    let web = fleet_lines(&recs, "default/web");
    assert_eq!(web[0]["differs"], false, "{web:#?}");
    for c in contexts {
        assert_eq!(web[0]["clusters"][c]["generation"], 1, "{web:#?}");
    }
    let patch = r#"{"spec":{"replicas":5}}"#;
    for (i, c) in contexts.iter().enumerate() {
        sim.kubectl_ok([
            "--context",
            c,
            "patch",
            "deployment",
            "web",
            "-n",
            "default",
            "--type",
            "merge",
            "-p",
            patch,
        ]);
        let recs = kw.wait_for(LIMIT, "the new generation in this cluster", |v| {
            fleet_lines(v, "default/web")
                .last()
                .is_some_and(|r| r["clusters"][*c]["generation"] == 2)
        });
        let last = fleet_lines(&recs, "default/web").last().copied().cloned();
        let last = last.unwrap_or_default();
        assert_eq!(last["context"], *c, "{last:#}");
        // Differs until the last cluster has it.
        assert_eq!(last["differs"], i + 1 < contexts.len(), "{last:#}");
    }
}

/// A context whose resource is left out before it synced (a 403 on its list) is not
/// waited for: the others' keys are printed once they have synced, compared among them.
#[test]
fn the_fleet_view_does_not_wait_for_a_context_left_out() {
    let a = SimProcess::start(&["--objects", "2"]);
    let nobody = "system:serviceaccount:default:nobody";
    let entries = [("a", Entry::Live(&a)), ("nope", Entry::As(&a, nobody))];
    let kc = fleet_kubeconfig(&entries, a.dir());
    let args = [
        "namespaces",
        "--context",
        "a,nope",
        "--view",
        "fleet",
        "-o",
        "json",
        "--until-synced",
        "--timeout",
        "2m",
    ];
    let out = kwatch_using(a.dir(), &kc, args).exits(5);
    let recs = out.json();
    for ns in namespaces(&a) {
        let lines = fleet_lines(&recs, &ns);
        assert_eq!(lines.len(), 1, "{ns}: {recs:#?}\n{}", out.stderr);
        let clusters = lines[0]["clusters"].as_object().expect("clusters");
        assert_eq!(clusters.keys().collect::<Vec<_>>(), ["a"], "{}", lines[0]);
        assert_eq!(lines[0]["differs"], false, "{}", lines[0]);
    }
}

#[test]
fn the_fleet_view_prints_a_table_or_json_only() {
    let sim = SimProcess::start(&[]);
    let out = sim.kwatch("deployments -A --view fleet -o name").exits(2);
    assert!(
        out.stderr
            .starts_with("error: --view fleet prints a line per object across the contexts"),
        "{}",
        out.stderr
    );
}
