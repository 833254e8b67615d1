//! Connecting like kubectl: every certificate shape works with
//! kwatch exactly when it works with the real kubectl (both run here), kubectl's global
//! connection flags and their precedence over the kubeconfig, impersonation reaching a 403,
//! client certificates, exec plugins and `tls-server-name` in a kubeconfig, `KUBECONFIG`
//! lists with missing files, and `-n ''`.

use std::path::Path;
use std::path::PathBuf;
use std::process::Output;
use std::time::Duration;
use std::time::Instant;

use base64::Engine;
use serde_json::Value;

use crate::util::kwatch::Finished;
use crate::util::kwatch::{kwatch_using, on_new_sim};
use crate::util::shared::*;
use crate::util::SimProcess;

/// `kubectl args…` with the sim's HOME and no `--kubeconfig`.
fn kubectl(sim: &SimProcess, env: &[(&str, &str)], args: &[&str]) -> Output {
    crate::util::tools::kubectl()
        .args(args)
        .env_clear()
        .env("HOME", sim.dir())
        .env("PATH", "/usr/bin:/bin")
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("running kubectl")
}

fn stderr_of(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// kwatch synced: exit 0 and a `Synced` record, the sim's `default` pods listed.
fn assert_synced(f: &Finished, what: &str) {
    assert_eq!(f.code(), Some(0), "{what}: kwatch failed:\n{}", f.stderr);
    let records = f.json();
    assert!(
        records.iter().any(|r| r["type"] == "Synced"),
        "{what}: no Synced record:\n{}",
        f.stdout.join("\n")
    );
    assert!(
        records.iter().any(|r| r["type"] == "Replaced"),
        "{what}: no object listed:\n{}",
        f.stdout.join("\n")
    );
}

/// `kwatch FLAGS pods -o json --until-synced` (the sim's HOME, no `--kubeconfig` unless
/// FLAGS give one) synced: [`assert_synced`].
fn synced_with(sim: &SimProcess, flags: &[&str], what: &str) {
    let mut args = flags.to_vec();
    args.extend_from_slice(SYNC);
    assert_synced(&kwatch_env(sim, &[], &args[..]), what);
}

/// kwatch got nothing from the server: no object and never synced (within `--timeout`).
fn assert_refused(f: &Finished, what: &str) {
    let records: Vec<Value> = f
        .stdout
        .iter()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert!(
        !records
            .iter()
            .any(|r| r["type"] == "Synced" || r["type"] == "Replaced"),
        "{what}: kwatch got data:\n{}\n{}",
        f.stdout.join("\n"),
        f.stderr
    );
}

/// The sim's kubeconfig as YAML, for writing variants of it.
fn kubeconfig(sim: &SimProcess) -> serde_yaml::Value {
    serde_yaml::from_str(&std::fs::read_to_string(&sim.kubeconfig).unwrap()).unwrap()
}

fn write_yaml(dir: &Path, name: &str, v: &serde_yaml::Value) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, serde_yaml::to_string(v).unwrap()).unwrap();
    p
}

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

fn b64_decode(v: &serde_yaml::Value) -> String {
    String::from_utf8(
        base64::engine::general_purpose::STANDARD
            .decode(v.as_str().unwrap())
            .unwrap(),
    )
    .unwrap()
}

/// A CA that signed nothing the sim serves.
fn unrelated_ca_pem() -> String {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "kwatch-sim-ca");
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params.self_signed(&key).unwrap().pem()
}

const SYNC: &[&str] = &["pods", "-o", "json", "--until-synced"];

#[test]
fn each_certificate_shape_works_with_kwatch_exactly_when_with_kubectl() {
    for shape in ["ca", "self-signed", "pinned-leaf", "ca-true-leaf"] {
        let sim = SimProcess::start(&["--cert-shape", shape, "--objects", "4"]);
        let kc = sim.kubeconfig.to_str().unwrap();
        let k = kubectl(
            &sim,
            &[],
            &["--kubeconfig", kc, "get", "pods", "-o", "name"],
        );
        assert!(
            k.status.success(),
            "{shape}: kubectl refused:\n{}",
            stderr_of(&k)
        );
        synced_with(&sim, &["--kubeconfig", kc], shape);

        // The same server with a CA that did not sign it: refused by both.
        let mut wrong = kubeconfig(&sim);
        wrong["clusters"][0]["cluster"]["certificate-authority-data"] =
            b64(&unrelated_ca_pem()).into();
        let wrong = write_yaml(sim.dir(), "wrong-ca", &wrong);
        let wrong = wrong.to_str().unwrap();
        let k = kubectl(&sim, &[], &["--kubeconfig", wrong, "get", "pods"]);
        assert!(!k.status.success(), "{shape}: kubectl accepted a wrong CA");
        assert!(
            stderr_of(&k).contains("certificate signed by unknown authority"),
            "{shape}: {}",
            stderr_of(&k)
        );
        let f = kwatch_env(
            &sim,
            &[],
            format!("--kubeconfig {wrong} pods -o json --until-synced --timeout 3s"),
        );
        assert_refused(&f, &format!("{shape} with a wrong CA"));
    }
}

#[test]
fn server_token_and_certificate_authority_need_no_kubeconfig() {
    let sim = SimProcess::start(&["--objects", "4"]);
    let ca = sim.dir().join("ca.pem");
    std::fs::write(&ca, &sim.ca_pem).unwrap();
    let ca = ca.to_str().unwrap();
    let flags = [
        "--server",
        &sim.url,
        "--token",
        &sim.token,
        "--certificate-authority",
        ca,
    ];
    // HOME has no .kube/config and KUBECONFIG is unset: the flags are all there is.
    assert!(!sim.dir().join(".kube/config").exists());
    let mut k = flags.to_vec();
    k.extend(["get", "pods", "-o", "name"]);
    let out = kubectl(&sim, &[], &k);
    assert!(out.status.success(), "kubectl: {}", stderr_of(&out));
    synced_with(&sim, &flags, "--server --token --certificate-authority");
    // -s is --server.
    let short = ["-s", &sim.url, "--token", &sim.token];
    let with_ca = [&short[..], &["--certificate-authority", ca]].concat();
    synced_with(&sim, &with_ca, "-s");
    // --insecure-skip-tls-verify instead of a CA.
    let insecure = [&short[..], &["--insecure-skip-tls-verify"]].concat();
    synced_with(&sim, &insecure, "--insecure-skip-tls-verify");
}

#[test]
fn nothing_to_connect_to_is_one_line_and_exit_1() {
    let sim = SimProcess::start(&["--objects", "1"]);
    let f = kwatch_env(&sim, &[], "pods");
    assert_eq!(f.code(), Some(1), "{}", f.stderr);
    assert_eq!(f.stderr.trim().lines().count(), 1, "{}", f.stderr);
    assert!(f.stderr.contains("--server"), "{}", f.stderr);
    // An explicit --kubeconfig that is missing is an error (kubectl's too), naming the file.
    let f = kwatch_env(&sim, &[], "--kubeconfig /nonexistent/kc pods");
    assert_eq!(f.code(), Some(1), "{}", f.stderr);
    assert!(f.stderr.contains("/nonexistent/kc"), "{}", f.stderr);
    let out = kubectl(
        &sim,
        &[],
        &["--kubeconfig", "/nonexistent/kc", "get", "pods"],
    );
    assert!(!out.status.success());
}

#[test]
fn kubeconfig_lists_skip_missing_files_as_kubectl_does() {
    let sim = SimProcess::start(&["--objects", "4"]);
    let list = format!("/nonexistent/a:{}", sim.kubeconfig.display());
    let env = [("KUBECONFIG", list.as_str())];
    let out = kubectl(&sim, &env, &["get", "pods", "-o", "name"]);
    assert!(out.status.success(), "kubectl: {}", stderr_of(&out));
    assert_synced(
        &kwatch_env(&sim, &env, SYNC),
        "KUBECONFIG=/nonexistent:good",
    );
}

#[test]
fn an_empty_namespace_flag_means_the_contexts_namespace() {
    let sim = SimProcess::start(&["--objects", "8"]);
    let all = sim.kwatch("pods -A -o json --until-synced");
    assert_synced(&all, "-A");
    let namespaces = |f: &Finished| -> std::collections::BTreeSet<String> {
        f.json()
            .iter()
            .filter(|r| r["type"] == "Replaced")
            .map(|r| r["namespace"].as_str().unwrap_or("").to_owned())
            .collect()
    };
    assert!(
        namespaces(&all).len() > 1,
        "the sim seeds several namespaces"
    );
    let empty = sim.kwatch(["pods", "-n", "", "-o", "json", "--until-synced"]);
    assert_synced(&empty, "-n ''");
    assert_eq!(
        namespaces(&empty).into_iter().collect::<Vec<_>>(),
        vec!["default".to_owned()]
    );
}

#[test]
fn token_user_and_cluster_flags_override_the_kubeconfig() {
    let sim = SimProcess::start(&["--objects", "4"]);
    // The kubeconfig's token is wrong; --token replaces it (kubectl too).
    let mut kc = kubeconfig(&sim);
    kc["users"][0]["user"]["token"] = "wrong".into();
    let bad = write_yaml(sim.dir(), "bad-token", &kc);
    let bad = bad.to_str().unwrap();
    let out = kubectl(&sim, &[], &["--kubeconfig", bad, "get", "pods"]);
    assert!(!out.status.success(), "the wrong token must be refused");
    let out = kubectl(
        &sim,
        &[],
        &["--kubeconfig", bad, "--token", &sim.token, "get", "pods"],
    );
    assert!(out.status.success(), "kubectl --token: {}", stderr_of(&out));
    synced_with(
        &sim,
        &["--kubeconfig", bad, "--token", &sim.token],
        "--token",
    );

    // --user picks the client-certificate user for the current context.
    let kcp = sim.kubeconfig.to_str().unwrap();
    synced_with(
        &sim,
        &["--kubeconfig", kcp, "--user", "kwatch-sim-cert"],
        "--user",
    );
    // A user or cluster the kubeconfig does not have: one line, exit 1.
    for flag in ["--user", "--cluster"] {
        let f = kwatch_env(&sim, &[], format!("--kubeconfig {kcp} {flag} nosuch pods"));
        assert_eq!(f.code(), Some(1), "{flag}: {}", f.stderr);
        assert!(
            f.stderr.contains("\"nosuch\" does not exist"),
            "{}",
            f.stderr
        );
    }
    // --cluster picks another cluster entry: one whose server is the sim.
    let mut kc = kubeconfig(&sim);
    let mut other = kc["clusters"][0].clone();
    other["name"] = "other".into();
    kc["clusters"][0]["cluster"]["server"] = "https://127.0.0.1:1".into();
    kc["clusters"].as_sequence_mut().unwrap().push(other);
    let two = write_yaml(sim.dir(), "two-clusters", &kc);
    synced_with(
        &sim,
        &["--kubeconfig", two.to_str().unwrap(), "--cluster", "other"],
        "--cluster",
    );
    // --server overrides the cluster's server.
    synced_with(
        &sim,
        &["--kubeconfig", two.to_str().unwrap(), "--server", &sim.url],
        "--server over a kubeconfig",
    );
}

#[test]
fn client_certificates_in_the_kubeconfig_and_as_flags() {
    let sim = SimProcess::start(&["--objects", "4"]);
    let kc = sim.kubeconfig.to_str().unwrap();
    let out = kubectl(
        &sim,
        &[],
        &[
            "--kubeconfig",
            kc,
            "--context",
            "kwatch-sim-cert",
            "get",
            "pods",
        ],
    );
    assert!(out.status.success(), "kubectl: {}", stderr_of(&out));
    synced_with(
        &sim,
        &["--kubeconfig", kc, "--context", "kwatch-sim-cert"],
        "client certificate in the kubeconfig",
    );

    // The same certificate as files, with no kubeconfig.
    let y = kubeconfig(&sim);
    let cert = sim.dir().join("client.crt");
    let key = sim.dir().join("client.key");
    std::fs::write(
        &cert,
        b64_decode(&y["users"][1]["user"]["client-certificate-data"]),
    )
    .unwrap();
    std::fs::write(&key, b64_decode(&y["users"][1]["user"]["client-key-data"])).unwrap();
    let ca = sim.dir().join("ca.pem");
    std::fs::write(&ca, &sim.ca_pem).unwrap();
    let flags = [
        "-s",
        &sim.url,
        "--certificate-authority",
        ca.to_str().unwrap(),
        "--client-certificate",
        cert.to_str().unwrap(),
        "--client-key",
        key.to_str().unwrap(),
    ];
    let mut k = flags.to_vec();
    k.extend(["get", "pods"]);
    let out = kubectl(&sim, &[], &k);
    assert!(out.status.success(), "kubectl: {}", stderr_of(&out));
    synced_with(&sim, &flags, "--client-certificate/--client-key");
}

#[test]
fn exec_plugins_give_tokens_and_client_certificates() {
    let sim = SimProcess::start(&["--objects", "4"]);
    let y = kubeconfig(&sim);
    let token_cred = serde_json::json!({
        "apiVersion": "client.authentication.k8s.io/v1",
        "kind": "ExecCredential",
        "status": {"token": sim.token},
    });
    let cert_cred = serde_json::json!({
        "apiVersion": "client.authentication.k8s.io/v1",
        "kind": "ExecCredential",
        "status": {
            "clientCertificateData": b64_decode(&y["users"][1]["user"]["client-certificate-data"]),
            "clientKeyData": b64_decode(&y["users"][1]["user"]["client-key-data"]),
        },
    });
    for (name, cred) in [("token", token_cred), ("cert", cert_cred)] {
        let json = sim.dir().join(format!("{name}.json"));
        std::fs::write(&json, cred.to_string()).unwrap();
        let script = sim.dir().join(format!("{name}-plugin.sh"));
        std::fs::write(&script, format!("#!/bin/sh\ncat '{}'\n", json.display())).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let mut kc = y.clone();
        kc["users"][0]["user"] = serde_yaml::from_str(&format!(
            "exec:\n  apiVersion: client.authentication.k8s.io/v1\n  command: {}\n  \
             interactiveMode: Never\n",
            script.display()
        ))
        .unwrap();
        let path = write_yaml(sim.dir(), &format!("exec-{name}"), &kc);
        let path = path.to_str().unwrap();
        let out = kubectl(&sim, &[], &["--kubeconfig", path, "get", "pods"]);
        assert!(out.status.success(), "kubectl {name}: {}", stderr_of(&out));
        synced_with(
            &sim,
            &["--kubeconfig", path],
            &format!("exec plugin ({name})"),
        );
    }
}

#[test]
fn tls_server_name_in_the_kubeconfig_and_as_a_flag() {
    let sim = SimProcess::start(&["--objects", "4"]);
    for (name, works) in [("kwatch-sim.test", true), ("wrong.test", false)] {
        let mut kc = kubeconfig(&sim);
        kc["clusters"][0]["cluster"]["tls-server-name"] = name.into();
        let path = write_yaml(sim.dir(), &format!("tsn-{name}"), &kc);
        let path = path.to_str().unwrap();
        let out = kubectl(&sim, &[], &["--kubeconfig", path, "get", "pods"]);
        assert_eq!(
            out.status.success(),
            works,
            "kubectl {name}: {}",
            stderr_of(&out)
        );
        let f = kwatch_env(
            &sim,
            &[],
            format!("--kubeconfig {path} pods -o json --until-synced --timeout 5s"),
        );
        if works {
            assert_synced(&f, name);
        } else {
            assert_refused(&f, name);
        }
    }
    // The flag overrides the kubeconfig's.
    let kc = sim.kubeconfig.to_str().unwrap();
    let f = sim.kwatch("--tls-server-name wrong.test pods -o json --until-synced --timeout 3s");
    assert_refused(&f, "--tls-server-name wrong.test");
    synced_with(
        &sim,
        &["--kubeconfig", kc, "--tls-server-name", "kwatch-sim.test"],
        "--tls-server-name kwatch-sim.test",
    );
}

const NOBODY: &str = "system:serviceaccount:default:nobody";

const LISTER: &str = "system:serviceaccount:default:lister";

const WATCHER: &str = "system:serviceaccount:default:watcher";

#[test]
fn impersonation_shows_what_that_identity_gets() {
    let sim = SimProcess::start(&["--objects", "4"]);
    // kubectl and the sim agree: nobody may not list, lister may list but not watch.
    let kc = sim.kubeconfig.to_str().unwrap();
    let forbidden = kubectl(
        &sim,
        &[],
        &["--kubeconfig", kc, "--as", NOBODY, "get", "pods"],
    );
    assert!(!forbidden.status.success());
    assert_eq!(
        stderr_of(&forbidden).trim(),
        format!(
            "Error from server (Forbidden): pods is forbidden: User \"{NOBODY}\" cannot list \
             resource \"pods\" in API group \"\" in the namespace \"default\""
        )
    );
    sim.kubectl_ok(["--as", LISTER, "get", "pods"]);
    let mut w = sim.kubectl_cmd(format!("--as {LISTER} get pods -w --request-timeout 5s"));
    let out = w.output().unwrap();
    assert!(
        stderr_of(&out).contains(&format!("User \"{LISTER}\" cannot watch resource \"pods\"")),
        "{}",
        stderr_of(&out)
    );
    sim.kubectl_ok([
        "--as",
        WATCHER,
        "--as-group",
        "team",
        "--as-uid",
        "42",
        "get",
        "pods",
    ]);

    // The 403 reaches the kwatch user (exit non-zero, the server's words on stderr).
    let f = sim.kwatch(["--as", NOBODY, "pods", "--timeout", "20s"]);
    assert_ne!(f.code(), Some(0), "{}", f.stderr);
    assert!(
        f.stderr
            .contains(&format!("pods is forbidden: User \"{NOBODY}\" cannot")),
        "{}",
        f.stderr
    );
    // The watcher syncs; the lister syncs from a LIST (its watch is refused afterwards).
    synced_with(&sim, &["--kubeconfig", kc, "--as", WATCHER], "--as watcher");
    synced_with(
        &sim,
        &["--kubeconfig", kc, "--as", LISTER, "--watch-list", "off"],
        "--as lister",
    );
}

#[test]
fn a_forbidden_identity_ends_kwatch_with_kubectls_one_line() {
    let sim = SimProcess::start(&["--objects", "4"]);
    let f = sim.kwatch(["--as", NOBODY, "pods"]).exits(1);
    let lines: Vec<&str> = f.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{}", f.stderr);
    assert!(
        lines[0].starts_with(&format!(
            "Error from server (Forbidden): pods is forbidden: User \"{NOBODY}\" cannot "
        )) && lines[0]
            .ends_with("resource \"pods\" in API group \"\" in the namespace \"default\""),
        "{}",
        lines[0]
    );
}

#[test]
fn a_wrong_ca_with_a_warm_discovery_cache_is_one_line_and_exit_1_quickly() {
    let sim = SimProcess::start(&["--objects", "4"]);
    // kubectl warms the discovery cache in the shared HOME.
    sim.kubectl_ok(["get", "pods"]);
    let mut kc = kubeconfig(&sim);
    kc["clusters"][0]["cluster"]["certificate-authority-data"] = b64(&unrelated_ca_pem()).into();
    let wrong = write_yaml(sim.dir(), "wrong-ca", &kc);
    let started = Instant::now();
    let f = kwatch_env(&sim, &[], ["--kubeconfig", wrong.to_str().unwrap(), "pods"]);
    let took = started.elapsed();
    assert_eq!(f.code(), Some(1), "{}", f.stderr);
    assert!(took < Duration::from_secs(2), "took {took:?}");
    let lines: Vec<&str> = f.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{}", f.stderr);
    assert!(
        lines[0].contains("x509: certificate signed by unknown authority"),
        "{}",
        lines[0]
    );
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

/// `-s 127.0.0.1:PORT` and `-s localhost:PORT` with TLS flags, and a
/// kubeconfig `server: 127.0.0.1:PORT` with its CA data, get `https://` as client-go's
/// `DefaultServerUrlFor` gives it, and work.
#[test]
fn a_server_without_a_scheme_connects_over_https_when_tls_is_configured() {
    let sim = SimProcess::start(&["--objects", "3"]);
    let port = host_port(&sim);
    let localhost = port.replace("127.0.0.1", "localhost");
    for server in [&port, &localhost] {
        let f = kwatch_env(
            &sim,
            &[],
            [
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
    let f = kwatch_env(
        &sim,
        &[],
        ["--kubeconfig", &kc, "pods", "--until-synced", "-o", "name"],
    );
    assert_listed_pods(&f, "kubeconfig server without a scheme");
}

/// What cannot be a server is one line naming the value and the fix.
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
        // The value may hold a space: one word.
        let f = kwatch_env(
            &sim,
            &[],
            [
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
    let f = kwatch_env(&sim, &[], ["--kubeconfig", &kc, "pods", "--until-synced"]);
    let line = one_error_line(&f, "kubeconfig");
    assert!(
        line.contains("\"127.0.0.1:0x50\" (the kubeconfig's cluster \"kwatch-sim\")"),
        "{line}"
    );
}

/// A missing exec plugin names the command and the installHint, as
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
    let f = kwatch_env(&sim, &[], ["--kubeconfig", &kc, "pods", "--until-synced"]);
    let line = one_error_line(&f, "exec");
    assert!(
        line.contains("exec: executable kwatch-no-such-plugin not found")
            && line.ends_with("install it with: brew install kwatch-no-such-plugin"),
        "{line}"
    );
}

/// A server that accepts TCP and never answers the TLS handshake is
/// reported as Go reports it, after client-go's 10 s handshake timeout, naming the server.
#[test]
fn a_tls_handshake_that_never_completes_says_so_after_10s() {
    let sim = SimProcess::start(&["--objects", "1"]);
    let addr = silent_server();
    let started = Instant::now();
    let f = kwatch_env(
        &sim,
        &[],
        [
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

/// `--timeout` bounds the whole run, connecting included. Against a server that never
/// completes the TLS handshake, `--timeout 3s` ends at 3 s (not at the handshake's 10 s
/// with exit 1) with exit 3 (nothing was synced), with or without
/// `--until-synced` / `--until`, and one line naming the handshake still in progress.
#[test]
fn timeout_bounds_connecting_too() {
    let sim = SimProcess::start(&["--objects", "1"]);
    let addr = silent_server();
    let server = format!("https://{addr}");
    let want = format!(
        "error: timed out after 3s connecting to the server {server}: {addr} accepted the \
         connection but has not completed the TLS handshake"
    );
    for extra in [
        &[][..],
        &["--until-synced"],
        &["demo", "--until", "created"],
    ] {
        let mut args = vec!["-s", &server, "--insecure-skip-tls-verify", "configmaps"];
        args.extend_from_slice(&["--timeout", "3s"]);
        args.extend_from_slice(extra);
        let started = Instant::now();
        let f = kwatch_env(&sim, &[], &args[..]);
        let took = started.elapsed();
        assert_eq!(f.code(), Some(3), "{extra:?}: {f:?}");
        assert_eq!(f.stderr.trim_end(), want, "{extra:?}");
        assert!(f.stdout.is_empty(), "{extra:?}: {:?}", f.stdout);
        assert!(
            took >= Duration::from_secs(3) && took < Duration::from_secs(8),
            "{extra:?}: {took:?}"
        );
    }
}

/// A certificate for other names lists them, as Go's x509 does.
#[test]
fn a_wrong_tls_server_name_lists_the_names_the_certificate_is_valid_for() {
    let sim = SimProcess::start(&["--objects", "1"]);
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
        let f = sim.kwatch(format!("--tls-server-name {name} pods --until-synced"));
        let line = one_error_line(&f, name);
        assert!(
            line.starts_with("Unable to connect to the server: tls: failed to verify certificate")
                && line.ends_with(want),
            "{line}"
        );
    }
}

/// A missing CA file is named once, not `'"/nonexistent"'`, in clientcmd's words and Go's
/// error (`tools/clientcmd/validation.go`: `unable to read certificate-authority %v for %v
/// due to %v`; no kubeconfig entry here, so no ` for NAME`), not Rust's `(os error 2)`.
#[test]
fn a_missing_ca_file_is_quoted_once() {
    let sim = SimProcess::start(&["--objects", "1"]);
    let ca = "--certificate-authority /nonexistent/ca.crt";
    let args = format!("-s {} --token {} {ca} pods", sim.url, sim.token);
    let f = kwatch_env(&sim, &[], args);
    let line = one_error_line(&f, "CA file");
    assert_eq!(
        line,
        "error: unable to read certificate-authority /nonexistent/ca.crt due to open \
         /nonexistent/ca.crt: no such file or directory"
    );
}

/// Found by tests/hostile_input.rs's fuzzing: a token that is not a valid header value
/// (a newline in `--token` or the kubeconfig's token) panicked in tower-http's
/// `AddAuthorization::bearer`; it is one line that does not show the token.
#[test]
fn a_token_with_control_characters_is_one_line_not_a_panic() {
    let sim = SimProcess::start(&["--objects", "1"]);
    let f = kwatch_env(
        &sim,
        &[],
        [
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
    let f = kwatch_env(&sim, &[], ["--kubeconfig", &kc, "pods", "--until-synced"]);
    let line = one_error_line(&f, "kubeconfig token");
    assert!(line.contains("token holds control characters"), "{line}");
}

/// `--insecure-skip-tls-verify` with `--certificate-authority` is refused in
/// client-go's words; a kubeconfig CA with the flag is cleared by it, as kubectl does,
/// and a kubeconfig that has both is refused (exit 1: the kubeconfig is wrong).
#[test]
fn insecure_with_a_ca_is_refused_as_client_go_refuses_it() {
    let words = "specifying a root certificates file with the insecure flag is not allowed";
    usage_error(
        &refused(&[
            "pods",
            "--insecure-skip-tls-verify",
            "--certificate-authority",
            "/etc/hostname",
        ]),
        words,
        "both flags",
    );

    // The sim's kubeconfig has certificate-authority-data: the flag replaces it.
    let (sim, out) = on_new_sim(
        &[],
        "configmaps -n default -o name --until-synced --insecure-skip-tls-verify",
    );
    assert!(!out.stdout.is_empty(), "{}", out.stderr);

    let text = std::fs::read_to_string(&sim.kubeconfig).expect("kubeconfig");
    let mut kc: serde_yaml::Value = serde_yaml::from_str(&text).expect("YAML");
    kc["clusters"][0]["cluster"]["insecure-skip-tls-verify"] = true.into();
    let both = sim.dir().join("insecure-and-ca.kubeconfig");
    std::fs::write(&both, serde_yaml::to_string(&kc).expect("YAML")).expect("write");
    let out = kwatch_using(sim.dir(), &both, "configmaps -n default --until-synced");
    error_exit(&out, 1, words, "both in the kubeconfig");
}

/// The local half of impersonation: impersonating groups or a UID without a user is refused
/// before any request, in kubectl's words (the kubeconfig user's name), exit 2.
#[test]
fn impersonating_groups_without_a_user_is_refused_before_connecting() {
    let sim = SimProcess::start(&[]);
    for extra in [&["--as-group", "system:masters"][..], &["--as-uid", "7"]] {
        let before = request_paths(&sim).len();
        let out = sim.kwatch(format!(
            "configmaps -n default --until-synced --timeout 5s {}",
            extra.join(" ")
        ));
        usage_error(
            &out,
            "requesting uid, groups or user-extra for kwatch-sim without impersonating a user",
            &format!("{extra:?}"),
        );
        assert!(out.stderr.contains("--as"), "{}", out.stderr);
        // The log leaves out the control API's own requests.
        assert_eq!(request_paths(&sim).len(), before, "{extra:?}: no request");
    }
}

#[test]
fn the_most_verbose_diagnostics_never_show_the_token() {
    let (sim, out) = on_new_sim(&[], "pods -n default -vvv --until-synced -o json");
    assert!(
        out.stderr.contains("DEBUG"),
        "-vvv shows kube's requests: {}",
        out.stderr
    );
    assert!(
        !out.stderr.contains(&sim.token),
        "the token leaked: {}",
        out.stderr
    );
    assert!(
        !out.stderr.to_ascii_lowercase().contains("bearer"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains('\u{1b}'), "no colour on a pipe");
    // Data on stdout only: every stdout line is a JSON record.
    assert!(out.stdout.iter().all(|l| l.starts_with("{\"type\":")));
}

/// A self-signed CA certificate that signed nothing the simulator serves.
fn other_ca_pem() -> String {
    let mut params = rcgen::CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params
        .self_signed(&rcgen::KeyPair::generate().unwrap())
        .unwrap()
        .pem()
}

/// A client for `sim` trusting `ca_pem`.
async fn client_for(sim: &kwatch::sim::SimServer, ca_pem: &str) -> kube::Client {
    let mut kc = kube::config::Kubeconfig::from_yaml(&sim.kubeconfig_yaml()).unwrap();
    kc.clusters[0]
        .cluster
        .as_mut()
        .unwrap()
        .certificate_authority_data = Some(base64::Engine::encode(
        &base64::engine::general_purpose::STANDARD,
        ca_pem,
    ));
    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    kwatch::client::connect::client(&config).unwrap()
}

/// kube's error for a certificate kwatch's verifier refuses is found and said in Go's
/// words (crypto/x509's), in process against the simulator's self-signed CA.
#[tokio::test]
async fn kubes_error_for_a_refused_certificate_is_recognised() {
    let sim = kwatch::sim::SimServer::start(kwatch::sim::SimOptions {
        cert_shape: kwatch::sim::CertShape::SelfSigned,
        objects: 1,
        scenario: kwatch::sim::Scenario::Idle,
        ..Default::default()
    })
    .await
    .unwrap();
    let own = sim.ca_pem().unwrap().to_owned();
    client_for(&sim, &own)
        .await
        .list_core_api_versions()
        .await
        .expect("the served self-signed CA certificate is its own anchor");
    let wrong = other_ca_pem();
    let err = client_for(&sim, &wrong)
        .await
        .list_core_api_versions()
        .await
        .unwrap_err();
    let said = kwatch::client::connect::tls_failure(&err)
        .unwrap_or_else(|| panic!("not recognised: {err:?}"));
    assert!(
        said.starts_with(
            "tls: failed to verify certificate: x509: certificate signed by unknown authority"
        ),
        "{said}"
    );
    let refused = kube::Error::Service("connection refused".into());
    assert_eq!(kwatch::client::connect::tls_failure(&refused), None);
    sim.shutdown().await;
}
