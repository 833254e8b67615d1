//! The decoder against Kubernetes' own golden files (every built-in kind of 1.32 and
//! 1.36, `testdata/`), and lists and watch frames built by hand.

use std::path::{Path, PathBuf};

use super::*;

/// Fixtures whose JSON the decoder cannot reproduce, with the reason; empty is the goal.
const EXPECTED_FAILURES: &[&str] = &[];

fn fixtures(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            fixtures(&path, out);
        } else if path.extension().is_some_and(|e| e == "pb") {
            out.push(path);
        }
    }
}

fn compacted(path: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    json::compact(&mut out, &std::fs::read(path).unwrap());
    out
}

/// Decodes every `.pb` of one release's fixtures; returns (passed, failures).
fn golden(release: &str, minor: u32) -> (usize, Vec<String>) {
    let table = Table::for_minor(minor).unwrap().unwrap();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/client/protobuf/testdata")
        .join(release);
    let mut pbs = Vec::new();
    fixtures(&dir, &mut pbs);
    pbs.sort();
    assert!(pbs.len() > 150, "{release}: only {} fixtures", pbs.len());
    let (mut passed, mut failures) = (0, Vec::new());
    for pb in pbs {
        let name = pb.file_stem().unwrap().to_string_lossy().into_owned();
        let want = compacted(&pb.with_extension("json"));
        let mut got = Vec::new();
        let bytes = std::fs::read(&pb).unwrap();
        let result = match envelope(&bytes) {
            // A type without TypeMeta (WatchEvent): its envelope names no kind; the file does.
            Ok(env) if env.kind.is_empty() => {
                let (group_version, kind) = name.rsplit_once('.').unwrap();
                let (group, version) = group_version.rsplit_once('.').unwrap();
                let api_version = if group == "core" {
                    version.to_owned()
                } else {
                    format!("{group}/{version}")
                };
                let msg = table
                    .kind(&api_version, kind)
                    .unwrap_or_else(|| panic!("{name}: no kind"));
                message(table, msg, env.raw, &mut got)
            }
            _ => object(table, &bytes, &mut got),
        };
        let failure = match result {
            Err(e) => Some(format!("{name}: {e}")),
            Ok(()) if got == want => None,
            Ok(()) => {
                let (g, w): (serde_json::Value, serde_json::Value) = (
                    serde_json::from_slice(&got).unwrap(),
                    serde_json::from_slice(&want).unwrap(),
                );
                let at = got
                    .iter()
                    .zip(&want)
                    .position(|(a, b)| a != b)
                    .unwrap_or(got.len().min(want.len()));
                let around = |b: &[u8]| {
                    String::from_utf8_lossy(&b[at.saturating_sub(60)..(at + 60).min(b.len())])
                        .into_owned()
                };
                Some(format!(
                    "{name}: {} at byte {at}:\n  got  …{}…\n  want …{}…",
                    if g == w {
                        "equal as JSON, other bytes"
                    } else {
                        "another value"
                    },
                    around(&got),
                    around(&want)
                ))
            }
        };
        match failure {
            None => passed += 1,
            Some(f) if EXPECTED_FAILURES.contains(&name.as_str()) => {
                eprintln!("expected failure: {f}")
            }
            Some(f) => failures.push(f),
        }
    }
    (passed, failures)
}

#[test]
fn golden_files_of_1_32_decode_to_their_json() {
    let (passed, failures) = golden("v1.32.13", 32);
    eprintln!("v1.32.13: {passed} fixtures pass");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn golden_files_of_1_36_decode_to_their_json() {
    let (passed, failures) = golden("v1.36.2", 36);
    eprintln!("v1.36.2: {passed} fixtures pass");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
