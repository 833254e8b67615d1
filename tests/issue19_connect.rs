//! Issue 19, items 3 and 10: a server without a scheme connects as client-go connects (it
//! panicked in kube's base_uri.rs and hung); a value that cannot be a server, and a panic
//! anywhere, give one line and exit 1; connection errors say what kubectl says and more
//! (exec plugin and its installHint, TLS handshake timeout, the certificate's names, the CA
//! file quoted once, `kwatch get pods`, discovery notices as `~` lines).

use std::time::{Duration, Instant};

use crate::util::kwatch::{command, Finished, Running};
use crate::util::{SimProcess, LIMIT};

/// `kwatch args…` with the sim's scrubbed HOME (no kubeconfig unless `args` name one).
fn kwatch(sim: &SimProcess, env: &[(&str, &str)], args: &[&str]) -> Finished {
    let mut cmd = command(sim.dir());
    cmd.envs(env.iter().copied()).args(args);
    Running::spawn(cmd).finish(LIMIT)
}

/// `127.0.0.1:PORT` of the sim.
fn host_port(sim: &SimProcess) -> String {
    sim.url.trim_start_matches("https://").to_owned()
}

/// Exit 1 and exactly one line on stderr, which is returned.
fn one_error_line(f: &Finished, what: &str) -> String {
    assert_eq!(f.code(), Some(1), "{what}: {f:?}");
    let lines: Vec<&str> = f.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{what}: not one stderr line:\n{}", f.stderr);
    assert!(!lines[0].contains("panicked"), "{what}: {}", lines[0]);
    lines[0].to_owned()
}

/// Exit 0 with the sim's pods listed as `pod/NAME`, and nothing on stderr.
fn assert_listed_pods(f: &Finished, what: &str) {
    assert_eq!(f.code(), Some(0), "{what}: {}", f.stderr);
    assert!(
        !f.stdout.is_empty(),
        "{what}: no output; stderr:\n{}",
        f.stderr
    );
    assert!(
        f.stdout.iter().all(|l| l.starts_with("pod/")),
        "{what}: {:?}",
        f.stdout
    );
    assert_eq!(f.stderr, "", "{what}");
}

/// The sim's kubeconfig with `edit` applied, written next to it; returns its path.
fn kubeconfig_with(sim: &SimProcess, name: &str, edit: impl Fn(&mut serde_yaml::Value)) -> String {
    let text = std::fs::read_to_string(&sim.kubeconfig).expect("the sim's kubeconfig");
    let mut kc: serde_yaml::Value = serde_yaml::from_str(&text).expect("kubeconfig YAML");
    edit(&mut kc);
    let path = sim.dir().join(name);
    std::fs::write(&path, serde_yaml::to_string(&kc).unwrap()).unwrap();
    path.to_str().unwrap().to_owned()
}

/// Issue 19 item 3: `-s 127.0.0.1:PORT` and `-s localhost:PORT` with TLS flags, and a
/// kubeconfig `server: 127.0.0.1:PORT` with its CA data, get `https://` as client-go's
/// `DefaultServerUrlFor` gives it, and work.
#[test]
fn a_server_without_a_scheme_connects_over_https_when_tls_is_configured() {
    let sim = SimProcess::start(&["--objects", "3"]);
    let port = host_port(&sim);
    let localhost = port.replace("127.0.0.1", "localhost");
    for server in [&port, &localhost] {
        let f = kwatch(
            &sim,
            &[],
            &[
                "-s",
                server,
                "--token",
                &sim.token,
                "--insecure-skip-tls-verify",
                "pods",
                "--until-synced",
                "-o",
                "name",
            ],
        );
        assert_listed_pods(&f, server);
    }
    let kc = kubeconfig_with(&sim, "no-scheme", |kc| {
        kc["clusters"][0]["cluster"]["server"] = port.clone().into();
    });
    let f = kwatch(
        &sim,
        &[],
        &["--kubeconfig", &kc, "pods", "--until-synced", "-o", "name"],
    );
    assert_listed_pods(&f, "kubeconfig server without a scheme");
}

/// Issue 19 item 3: what cannot be a server is one line naming the value and the fix.
#[test]
fn a_value_that_cannot_be_a_server_is_one_line_naming_it() {
    let sim = SimProcess::start(&["--objects", "1"]);
    for (server, why) in [
        ("ht tp://x", "spaces"),
        ("127.0.0.1:99999", "invalid port \"99999\""),
        (
            "127.0.0.1:6443/api",
            "host must be a URL or a host:port pair",
        ),
        ("ftp://127.0.0.1:6443", "unsupported scheme \"ftp\""),
    ] {
        let f = kwatch(
            &sim,
            &[],
            &[
                "-s",
                server,
                "--insecure-skip-tls-verify",
                "pods",
                "--until-synced",
            ],
        );
        let line = one_error_line(&f, server);
        assert!(line.contains(&format!("{server:?} (--server)")), "{line}");
        assert!(
            line.contains(why) && line.contains("https://HOST[:PORT]"),
            "{line}"
        );
    }
    let kc = kubeconfig_with(&sim, "bad-server", |kc| {
        kc["clusters"][0]["cluster"]["server"] = "127.0.0.1:0x50".into();
    });
    let f = kwatch(&sim, &[], &["--kubeconfig", &kc, "pods", "--until-synced"]);
    let line = one_error_line(&f, "kubeconfig");
    assert!(
        line.contains("\"127.0.0.1:0x50\" (the kubeconfig's cluster \"kwatch-sim\")"),
        "{line}"
    );
}

/// Issue 19 item 3: a panicking tokio task (debug builds' test switch) ends kwatch at once
/// with one line and exit 1, instead of a report with a backtrace and a hang.
#[test]
fn a_panic_in_a_task_is_one_line_and_exit_1_not_a_hang() {
    let sim = SimProcess::start(&["--objects", "1"]);
    let started = Instant::now();
    let f = kwatch(
        &sim,
        &[("KWATCH_TEST_PANIC_IN_TASK", "1")],
        &["--kubeconfig", sim.kubeconfig.to_str().unwrap(), "pods"],
    );
    assert!(started.elapsed() < Duration::from_secs(10), "{f:?}");
    assert_eq!(f.code(), Some(1), "{f:?}");
    let lines: Vec<&str> = f.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", f.stderr);
    assert!(
        lines[0].starts_with("error: kwatch panicked at src/main.rs:")
            && lines[0].contains("a test panic on two lines (a bug: please report it"),
        "{}",
        lines[0]
    );
}

/// Issue 19 item 10: a missing exec plugin names the command and the installHint, as
/// client-go's exec.go does.
#[test]
fn a_missing_exec_plugin_names_the_command_and_the_install_hint() {
    let sim = SimProcess::start(&["--objects", "1"]);
    let kc = kubeconfig_with(&sim, "exec-missing", |kc| {
        let exec: serde_yaml::Value = serde_yaml::from_str(
            "apiVersion: client.authentication.k8s.io/v1\ncommand: kwatch-no-such-plugin\n\
             installHint: 'install it with: brew install kwatch-no-such-plugin'\n\
             interactiveMode: Never\n",
        )
        .unwrap();
        kc["users"][0]["user"] = serde_yaml::Value::Mapping(Default::default());
        kc["users"][0]["user"]["exec"] = exec;
    });
    let f = kwatch(&sim, &[], &["--kubeconfig", &kc, "pods", "--until-synced"]);
    let line = one_error_line(&f, "exec");
    assert!(
        line.contains("exec: executable kwatch-no-such-plugin not found")
            && line.ends_with("install it with: brew install kwatch-no-such-plugin"),
        "{line}"
    );
}

/// Issue 19 item 10: a server that accepts TCP and never answers the TLS handshake is
/// reported as Go reports it, after client-go's 10 s handshake timeout, naming the server.
#[test]
fn a_tls_handshake_that_never_completes_says_so_after_10s() {
    let sim = SimProcess::start(&["--objects", "1"]);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    // Accepts and holds every connection, never writing a byte.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in listener.incoming() {
            held.push(conn);
        }
    });
    let started = Instant::now();
    let f = kwatch(
        &sim,
        &[],
        &[
            "-s",
            &format!("https://{addr}"),
            "--insecure-skip-tls-verify",
            "pods",
            "--until-synced",
        ],
    );
    let took = started.elapsed();
    let line = one_error_line(&f, "handshake");
    assert!(
        line.starts_with("Unable to connect to the server: net/http: TLS handshake timeout")
            && line.contains(&addr),
        "{line}"
    );
    assert!(
        took >= Duration::from_secs(10) && took < Duration::from_secs(20),
        "{took:?}"
    );
}

/// Issue 19 item 10: a certificate for other names lists them, as Go's x509 does.
#[test]
fn a_wrong_tls_server_name_lists_the_names_the_certificate_is_valid_for() {
    let sim = SimProcess::start(&["--objects", "1"]);
    let kc = sim.kubeconfig.to_str().unwrap();
    for (name, want) in [
        (
            "wrong.example",
            "x509: certificate is valid for localhost, kwatch-sim.test, not wrong.example",
        ),
        (
            "10.9.8.7",
            "x509: certificate is valid for 127.0.0.1, not 10.9.8.7",
        ),
    ] {
        let f = kwatch(
            &sim,
            &[],
            &[
                "--kubeconfig",
                kc,
                "--tls-server-name",
                name,
                "pods",
                "--until-synced",
            ],
        );
        let line = one_error_line(&f, name);
        assert!(
            line.starts_with("Unable to connect to the server: tls: failed to verify certificate")
                && line.ends_with(want),
            "{line}"
        );
    }
}

/// Issue 19 item 10: a missing CA file is named once, not `'"/nonexistent"'`.
#[test]
fn a_missing_ca_file_is_quoted_once() {
    let sim = SimProcess::start(&["--objects", "1"]);
    let f = kwatch(
        &sim,
        &[],
        &[
            "-s",
            &sim.url,
            "--token",
            &sim.token,
            "--certificate-authority",
            "/nonexistent/ca.crt",
            "pods",
        ],
    );
    let line = one_error_line(&f, "CA file");
    assert_eq!(
        line,
        "error: unable to read certificate-authority /nonexistent/ca.crt: No such file or \
         directory (os error 2)"
    );
}

/// Issue 19 item 10: `kwatch get pods` (kubectl's habit) says to drop `get`.
#[test]
fn kwatch_get_pods_says_to_drop_get() {
    let sim = SimProcess::start(&["--objects", "1"]);
    let kc = sim.kubeconfig.to_str().unwrap();
    let f = kwatch(
        &sim,
        &[],
        &["--kubeconfig", kc, "get", "pods", "--until-synced"],
    );
    let line = one_error_line(&f, "get pods");
    assert!(
        line.contains("resource type \"get\"")
            && line.contains("drop \"get\" (`kwatch pods`, not `kwatch get pods`)"),
        "{line}"
    );
}

/// Issue 19 item 10: a group-version whose discovery fails (an aggregated API that is
/// down, here one the cached group list names and the server does not serve) is a `~`
/// line like kwatch's other notices, not a `…Z WARN …` log line.
#[test]
fn a_discovery_failure_is_a_tilde_notice() {
    let sim = SimProcess::start(&["--objects", "1"]);
    let kc = sim.kubeconfig.to_str().unwrap();
    let cache = sim.dir().join("cache");
    let cache_arg = cache.to_str().unwrap();
    let warm = kwatch(
        &sim,
        &[],
        &[
            "--kubeconfig",
            kc,
            "--cache-dir",
            cache_arg,
            "ingresses",
            "--until-synced",
        ],
    );
    assert_eq!(warm.code(), Some(0), "{}", warm.stderr);
    let groups = cache
        .join("discovery")
        .join(host_port(&sim).replace(':', "_"))
        .join("servergroups.json");
    let text = std::fs::read_to_string(&groups).expect("the cached group list");
    let mut list: serde_json::Value = serde_json::from_str(&text).unwrap();
    let broken = serde_json::json!({"name": "metrics.k8s.io",
        "versions": [{"groupVersion": "metrics.k8s.io/v1beta1", "version": "v1beta1"}],
        "preferredVersion": {"groupVersion": "metrics.k8s.io/v1beta1", "version": "v1beta1"}});
    list["groups"].as_array_mut().unwrap().insert(1, broken);
    std::fs::write(&groups, list.to_string()).unwrap();
    let f = kwatch(
        &sim,
        &[],
        &[
            "--kubeconfig",
            kc,
            "--cache-dir",
            cache_arg,
            "ingresses",
            "--until-synced",
        ],
    );
    assert_eq!(f.code(), Some(0), "{}", f.stderr);
    let notices: Vec<&str> = f
        .stderr
        .lines()
        .filter(|l| l.contains("metrics.k8s.io/v1beta1"))
        .collect();
    assert_eq!(notices.len(), 1, "{}", f.stderr);
    assert!(
        notices[0].starts_with("~ discovery of metrics.k8s.io/v1beta1 failed: "),
        "{}",
        notices[0]
    );
    assert!(!f.stderr.contains("WARN"), "{}", f.stderr);
}

/// Issue 19, found by tests/issue19_fuzz.rs: a token that is not a valid header value
/// (a newline in `--token` or the kubeconfig's token) panicked in tower-http's
/// `AddAuthorization::bearer`; it is one line that does not show the token.
#[test]
fn a_token_with_control_characters_is_one_line_not_a_panic() {
    let sim = SimProcess::start(&["--objects", "1"]);
    let f = kwatch(
        &sim,
        &[],
        &[
            "-s",
            &sim.url,
            "--insecure-skip-tls-verify",
            "--token",
            "secret\nline",
            "pods",
            "--until-synced",
        ],
    );
    let line = one_error_line(&f, "--token");
    assert!(line.contains("token holds control characters"), "{line}");
    assert!(!line.contains("secret"), "{line}");
    let kc = kubeconfig_with(&sim, "bad-token", |kc| {
        kc["users"][0]["user"]["token"] = "secret\u{7f}".into();
    });
    let f = kwatch(&sim, &[], &["--kubeconfig", &kc, "pods", "--until-synced"]);
    let line = one_error_line(&f, "kubeconfig token");
    assert!(line.contains("token holds control characters"), "{line}");
}

/// Issue 19: plain HTTP to the TLS port gets Go's `400 Client sent an HTTP request to an
/// HTTPS server.` from the sim, as from kube-apiserver (it sent a TLS alert, which kwatch
/// retried silently until `--timeout`), and kubectl says what it says to a real server.
#[test]
fn plain_http_to_the_tls_port_is_answered_as_kube_apiserver_answers_it() {
    let sim = SimProcess::start(&["--objects", "1"]);
    let http = sim.url.replace("https://", "http://");
    let f = kwatch(
        &sim,
        &[],
        &["-s", &http, "pods", "--until-synced", "--timeout", "5s"],
    );
    let line = one_error_line(&f, "http://");
    assert!(
        line.ends_with("400 Bad Request: Client sent an HTTP request to an HTTPS server."),
        "{line}"
    );
    let out = std::process::Command::new("/usr/bin/kubectl")
        .args(["-s", &http, "get", "pods"])
        .env_clear()
        .env("HOME", sim.dir())
        .output()
        .expect("running kubectl");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(
            "Error from server (BadRequest): the server rejected our request for an unknown reason"
        ),
        "{said}"
    );
}
