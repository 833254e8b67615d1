//! The property test: argument parsing and kubeconfig loading fed random and
//! hostile values (servers without schemes, odd ports, empty strings, unicode, control
//! characters, huge values, IPv6 literals, `http://` with paths, bad base64 and bad PEM in
//! the certificate data, …), each case run through the real binary against `kwatch sim`.
//!
//! For every case: no panic, the process ends by itself (a kill timer fails the test), an
//! exit code from README's table, and on stderr only kwatch's notices (`~ …`, `Warning: …`)
//! plus, when it failed, exactly one error line (clap's usage errors: its `error: …` line
//! and its standard `For more information, try '--help'.` trailer).
//!
//! Every address a case can reach is 127.0.0.1: a server value kwatch would accept is run
//! only if `kwatch::app::kubeconfig::server_url` makes it a URL for host 127.0.0.1 (else the case
//! is generated again). The generator is a fixed-seed `SmallRng`: a failure names its seed
//! and case number, and the same case comes back on the next run (`KWATCH_FUZZ_SEED=N
//! KWATCH_FUZZ_CASES=M` runs other cases).

use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};

use crate::util::kwatch::{command, Finished, Running};
use crate::util::SimProcess;

const SEED: u64 = 19;
const CASES: usize = 300;
/// A case that runs longer is a hang (each one is bounded by `--timeout 2s` and
/// `--request-timeout 2s` besides).
const KILL_AFTER: Duration = Duration::from_secs(20);

/// One generated run: the arguments and, optionally, a kubeconfig file's bytes.
#[derive(Debug)]
struct Case {
    args: Vec<String>,
    kubeconfig: Option<Vec<u8>>,
}

/// Strings that have broken command-line tools before, and random ones.
fn hostile(rng: &mut SmallRng) -> String {
    const FIXED: &[&str] = &[
        "",
        " ",
        "\t",
        "-",
        "--",
        "=",
        ",",
        "a,,b",
        "é🙂",
        "\u{202e}evil",
        "\u{feff}pods",
        "\x1b[2J\x1b[31mred",
        "\x01\x02\x7f",
        "line\nbreak",
        "%00%0a",
        "../../etc/passwd",
        "${HOME}",
        "'\"`",
        "pods",
        "get",
        "0",
        "-1",
        "18446744073709551616",
        "1e309",
        "NaN",
        "3s",
        "-3s",
        "99999999999999999999h",
        "½",
    ];
    match rng.random_range(0..10) {
        0 => "x".repeat(rng.random_range(1_000..100_000)),
        1 => (0..rng.random_range(1..40))
            .map(|_| char::from_u32(rng.random_range(1..0x3000)).unwrap_or('?'))
            .collect(),
        2 => (0..rng.random_range(1..20))
            .map(|_| char::from(rng.random_range(1u8..0x80)))
            .collect(),
        _ => FIXED.choose(rng).copied().unwrap_or_default().to_owned(),
    }
}

/// A server value: 127.0.0.1 (the sim's port or an odd one) with and without a scheme,
/// with paths, IPv6 literals and broken forms, or a hostile string.
fn server(rng: &mut SmallRng, port: u16) -> String {
    if rng.random_bool(0.5) {
        let well_formed = [
            format!("127.0.0.1:{port}"),
            format!("127.0.0.1:{port}/"),
            format!("https://127.0.0.1:{port}"),
            format!("HTTPS://127.0.0.1:{port}/"),
            format!("http://127.0.0.1:{port}"),
            format!("https://127.0.0.1:{port}/k8s/clusters/c-1"),
            format!("http://127.0.0.1:{port}/k8s/clusters/c-1"),
            "127.0.0.1:1".to_owned(),
            "127.0.0.1".to_owned(),
        ];
        return well_formed.choose(rng).cloned().unwrap_or_default();
    }
    let scheme = *[
        "",
        "",
        "https://",
        "http://",
        "HTTPS://",
        "ftp://",
        "https:/",
        "https:///",
        "//",
    ]
    .choose(rng)
    .unwrap_or(&"");
    let host = *[
        "127.0.0.1",
        "127.0.0.1",
        "[::1]",
        "::1",
        "[::ffff:127.0.0.1",
        "127.0.0.1.",
        "",
        "[]",
    ]
    .choose(rng)
    .unwrap_or(&"127.0.0.1");
    let port = match rng.random_range(0..9) {
        0..=3 => format!(":{port}"),
        4 => String::new(),
        5 => ":".to_owned(),
        6 => format!(":{}", rng.random_range(65_536u64..10_000_000_000)),
        7 => format!(
            ":{}",
            ["0", "1", "65535", "-1", "0x50", "６４４３"]
                .choose(rng)
                .unwrap_or(&"0")
        ),
        _ => format!(":{port}{port}"),
    };
    let path = *[
        "",
        "",
        "",
        "/",
        "/api",
        "/k8s/clusters/c-1",
        "?x=1",
        "#frag",
        "/../..",
        "/%zz",
    ]
    .choose(rng)
    .unwrap_or(&"");
    match rng.random_range(0..8) {
        0 => hostile(rng),
        1 => format!("{scheme}{host}{port}{path}{}", hostile(rng)),
        _ => format!("{scheme}{host}{port}{path}"),
    }
}

/// Whether kwatch may be run with `server`: it is refused before any connection, or it
/// is a URL for 127.0.0.1.
fn stays_local(server: &str) -> bool {
    match kwatch::app::kubeconfig::server_url(server, true, "fuzz") {
        Err(_) => true,
        Ok(url) => url
            .parse::<http::Uri>()
            .is_ok_and(|u| u.host() == Some("127.0.0.1")),
    }
}

/// Bad certificate data: not base64, base64 of garbage, an empty or truncated PEM.
fn bad_certificate_data(rng: &mut SmallRng, good: &str) -> String {
    use base64::Engine;
    let b64 = |s: &[u8]| base64::engine::general_purpose::STANDARD.encode(s);
    match rng.random_range(0..6) {
        0 => "!!!not base64!!!".to_owned(),
        1 => b64(hostile(rng).as_bytes()),
        2 => b64(b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"),
        3 => good[..good.len() / 2].to_owned(),
        4 => String::new(),
        _ => hostile(rng),
    }
}

/// The sim's kubeconfig with one to three fields set to hostile values, as YAML; now and
/// then not YAML at all.
fn kubeconfig(rng: &mut SmallRng, sim: &SimProcess, port: u16) -> Vec<u8> {
    if rng.random_range(0..12) == 0 {
        return (0..rng.random_range(0..200))
            .map(|_| rng.random::<u8>())
            .collect();
    }
    let text = std::fs::read_to_string(&sim.kubeconfig).expect("the sim's kubeconfig");
    let mut kc: serde_yaml::Value = serde_yaml::from_str(&text).expect("kubeconfig YAML");
    let good_ca = kc["clusters"][0]["cluster"]["certificate-authority-data"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let mut no_contexts = false;
    for _ in 0..rng.random_range(1..=3) {
        let cluster = &mut kc["clusters"][0]["cluster"];
        match rng.random_range(0..14) {
            0..=2 => {
                let s = loop {
                    let s = server(rng, port);
                    if stays_local(&s) {
                        break s;
                    }
                };
                cluster["server"] = s.into();
            }
            3 => cluster["certificate-authority-data"] = bad_certificate_data(rng, &good_ca).into(),
            4 => {
                cluster["certificate-authority"] = ["/nonexistent/ca.crt", "/dev/null", "/", ""]
                    .choose(rng)
                    .copied()
                    .unwrap_or("")
                    .into()
            }
            5 => cluster["tls-server-name"] = hostile(rng).into(),
            6 => cluster["insecure-skip-tls-verify"] = hostile(rng).into(),
            7 => cluster["proxy-url"] = "http://127.0.0.1:1".into(),
            8 => kc["users"][0]["user"]["token"] = hostile(rng).into(),
            9 => {
                kc["users"][0]["user"]["client-certificate-data"] =
                    bad_certificate_data(rng, &good_ca).into();
                kc["users"][0]["user"]["client-key-data"] = hostile(rng).into();
            }
            10 => kc["contexts"][0]["context"]["namespace"] = hostile(rng).into(),
            11 => kc["current-context"] = hostile(rng).into(),
            12 => kc["users"][0]["user"]["as"] = hostile(rng).into(),
            _ => no_contexts = true,
        }
    }
    if no_contexts {
        kc["contexts"] = serde_yaml::Value::Sequence(Vec::new());
    }
    serde_yaml::to_string(&kc).expect("YAML").into_bytes()
}

/// A flag of the watch and a hostile (or plain) value for it.
fn flag(rng: &mut SmallRng) -> Vec<String> {
    const FLAGS: &[&str] = &[
        "-n",
        "-l",
        "--field-selector",
        "-o",
        "--as",
        "--as-group",
        "--context",
        "--page-size",
        "--max-events",
        "--client-go",
        "--watch-list",
        "--resync",
        "--tls-server-name",
        "--label-columns",
        "--cluster",
        "--user",
    ];
    let name = FLAGS.choose(rng).copied().unwrap_or("-n");
    vec![name.to_owned(), hostile(rng)]
}

fn case(rng: &mut SmallRng, sim: &SimProcess, port: u16) -> Case {
    let resource = match rng.random_range(0..4) {
        0 => hostile(rng),
        _ => ["pods", "configmaps", "deploy", "pods,configmaps"]
            .choose(rng)
            .copied()
            .unwrap_or("pods")
            .to_owned(),
    };
    let mut args: Vec<String> = Vec::new();
    let mut kubeconfig_bytes = None;
    match rng.random_range(0..3) {
        0 => {
            let s = loop {
                let s = server(rng, port);
                if stays_local(&s) {
                    break s;
                }
            };
            args.extend(["-s".to_owned(), s, "--token".to_owned(), sim.token.clone()]);
            match rng.random_range(0..3) {
                0 => args.push("--insecure-skip-tls-verify".to_owned()),
                1 => {
                    let ca = sim.dir().join("ca.pem");
                    std::fs::write(&ca, &sim.ca_pem).expect("writing the CA");
                    args.extend([
                        "--certificate-authority".to_owned(),
                        ca.to_string_lossy().into_owned(),
                    ]);
                }
                _ => {}
            }
        }
        1 => kubeconfig_bytes = Some(kubeconfig(rng, sim, port)),
        _ => {
            kubeconfig_bytes = Some(std::fs::read(&sim.kubeconfig).expect("kubeconfig"));
            for _ in 0..rng.random_range(1..=3) {
                args.extend(flag(rng));
            }
        }
    }
    args.push(resource);
    args.extend(
        [
            "--until-synced",
            "--timeout",
            "2s",
            "--request-timeout",
            "2s",
        ]
        .map(str::to_owned),
    );
    // argv cannot carry NUL.
    for a in &mut args {
        a.retain(|c| c != '\0');
    }
    Case {
        args,
        kubeconfig: kubeconfig_bytes,
    }
}

/// The property (see the module docs); `Err` says what broke it.
fn check(f: &Finished) -> Result<(), String> {
    let code = f.code().ok_or("killed by a signal")?;
    if ![0, 1, 2, 3, 4].contains(&code) {
        return Err(format!("exit code {code} is not in README's table"));
    }
    if f.stderr.contains("panicked") {
        return Err("panicked".to_owned());
    }
    let notice = |l: &str| l.starts_with("~ ") || l.starts_with("Warning: ");
    let errors: Vec<&str> = f.stderr.lines().filter(|l| !notice(l)).collect();
    let errors: Vec<&str> = match code {
        // clap's usage errors end with its standard pointer to the help.
        2 => errors
            .into_iter()
            .filter(|l| !l.is_empty() && *l != "For more information, try '--help'.")
            .collect(),
        _ => errors,
    };
    let want = match code {
        0 => 0..=0,
        _ => 1..=1,
    };
    if !want.contains(&errors.len()) {
        return Err(format!(
            "{} error lines on stderr with exit {code}",
            errors.len()
        ));
    }
    if let Some(e) = errors.first() {
        if e.trim().is_empty() || e.starts_with(char::is_whitespace) {
            return Err(format!("the error line is blank or indented: {e:?}"));
        }
    }
    Ok(())
}

#[test]
fn hostile_arguments_and_kubeconfigs_never_panic_hang_or_say_more_than_one_error_line() {
    let sim = SimProcess::start(&["--objects", "3"]);
    let port: u16 = sim
        .url
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("the sim's port");
    // KWATCH_FUZZ_SEED / KWATCH_FUZZ_CASES explore further; the default run is fixed.
    let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    let seed = env("KWATCH_FUZZ_SEED").unwrap_or(SEED);
    let cases = env("KWATCH_FUZZ_CASES").map_or(CASES, |n| n as usize);
    let mut rng = SmallRng::seed_from_u64(seed);
    let started = Instant::now();
    let mut codes = std::collections::BTreeMap::<i32, usize>::new();
    let mut failures = Vec::new();
    for n in 0..cases {
        let case = case(&mut rng, &sim, port);
        let mut cmd = command(sim.dir());
        if let Some(bytes) = &case.kubeconfig {
            let path = sim.dir().join(format!("fuzz-{n}.kubeconfig"));
            std::fs::write(&path, bytes).expect("writing the kubeconfig");
            cmd.arg("--kubeconfig").arg(&path);
        }
        cmd.args(&case.args);
        let f = Running::spawn(cmd).finish(KILL_AFTER);
        *codes.entry(f.code().unwrap_or(-1)).or_default() += 1;
        if let Err(why) = check(&f) {
            let shown: Vec<String> = case
                .args
                .iter()
                .map(|a| a.chars().take(120).collect())
                .collect();
            failures.push(format!(
                "seed {seed} case {n}: {why}\n  args: {shown:?}\n  kubeconfig: {}\n  stderr:\n{}",
                case.kubeconfig
                    .as_ref()
                    .map(|b| String::from_utf8_lossy(b)
                        .chars()
                        .take(300)
                        .collect::<String>())
                    .unwrap_or_default(),
                f.stderr.chars().take(2000).collect::<String>()
            ));
        }
    }
    eprintln!(
        "seed {seed}: {cases} cases in {:.1}s; exit codes: {codes:?}",
        started.elapsed().as_secs_f64()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // The generator reaches both sides: runs that watch and runs that are refused.
    assert!(codes.get(&0).is_some_and(|n| *n >= 5), "{codes:?}");
    assert!(codes.get(&1).is_some_and(|n| *n >= 5), "{codes:?}");
    assert!(codes.get(&2).is_some_and(|n| *n >= 5), "{codes:?}");
}
