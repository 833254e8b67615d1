//! What the docs and comments point at exists: every repository path named in a Markdown
//! file or a Rust comment, and every `cargo test` filter they give, which must select at
//! least one test (a filter that selects none runs nothing and says nothing).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The folders at the repository's root whose paths docs and comments name.
/// (Not `tools/`: the comments name client-go's `tools/cache` far more than ours.)
const ROOTS: [&str; 9] = [
    "crates/",
    "src/",
    "tests/",
    "docs/",
    "benches/",
    "examples/",
    "man/",
    "completions/",
    ".ci/",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every file under `dir` whose name ends in one of `exts`, `target/` and `.git/` aside.
fn files(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            if name != "target" && name != ".git" {
                files(&p, exts, out);
            }
        } else if exts.iter().any(|x| name.ends_with(x)) {
            out.push(p);
        }
    }
}

/// The text a reader sees: a Markdown file whole, a Rust file's comments.
fn prose(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    if path.extension().is_some_and(|e| e == "md") {
        return text;
    }
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The repository paths a text names: words that begin with a root folder, taken whole
/// (a word that begins elsewhere, like `staging/src/…`, is another repository's).
fn paths_named(text: &str) -> BTreeSet<String> {
    let word = |c: char| c.is_ascii_alphanumeric() || "_./-*{}<>…".contains(c);
    text.split(|c: char| !word(c))
        .filter(|w| ROOTS.iter().any(|r| w.starts_with(r)))
        .filter(|w| !w.contains(['*', '{', '<', '…']))
        .map(|w| w.trim_end_matches('.').to_owned())
        .collect()
}

/// The `cargo test` commands a text gives: lines that are one (in a code block, or a
/// comment), after any `VAR=value`, and inline code spans that are one, without a shell
/// comment.
fn commands(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut t = line.trim_start();
        // Environment assignments before the command (`KWATCH_BLESS=1 cargo test …`).
        while let Some((word, rest)) = t.split_once(' ') {
            if !word.contains('=') || word.starts_with('-') {
                break;
            }
            t = rest;
        }
        if t.starts_with("cargo test") {
            out.push(t.split(" #").next().unwrap_or_default());
        } else {
            let spans = line.split('`').skip(1).step_by(2);
            out.extend(spans.filter(|s| s.starts_with("cargo test")));
        }
    }
    out
}

/// The test filters of each `cargo test` command a text gives, with the kind of test
/// binary they select from.
fn filters_named(text: &str) -> Vec<(Selects, String)> {
    let mut out = Vec::new();
    for command in commands(text) {
        let words: Vec<&str> = command.split_whitespace().skip(2).collect();
        let mut selects = Selects::Any;
        let mut i = 0;
        while i < words.len() {
            match words[i] {
                "--test" => {
                    selects = Selects::Integration;
                    i += 1;
                }
                "--lib" => selects = Selects::Lib,
                // A package, not a filter.
                "-p" | "--package" => i += 1,
                w if w.starts_with('-') => {}
                w => out.push((selects, w.to_owned())),
            }
            i += 1;
        }
    }
    out
}

#[derive(Clone, Copy, Debug)]
enum Selects {
    Any,
    Lib,
    Integration,
}

/// The names of the tests in `file` as libtest lists them (`prefix::fn`, `prefix::mod::fn`
/// for a test inside an inline module).
fn test_names(file: &Path, prefix: &str, out: &mut Vec<String>) {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let mut modules: Vec<(usize, String)> = Vec::new();
    let mut pending = false;
    for line in text.lines() {
        let t = line.trim_start();
        if t.is_empty() {
            continue;
        }
        // A module opened at some indent ends at the first line indented no deeper.
        let indent = line.len() - t.len();
        modules.retain(|(depth, _)| *depth < indent);
        if let Some(name) = t.strip_prefix("mod ").and_then(|m| m.strip_suffix(" {")) {
            modules.push((indent, name.to_owned()));
        }
        if t.starts_with("#[test]") || t.starts_with("#[tokio::test") {
            pending = true;
        } else if pending {
            let f = t
                .trim_start_matches("pub ")
                .trim_start_matches("async ")
                .strip_prefix("fn ");
            if let Some(f) = f {
                let name = f.split(['(', '<']).next().unwrap_or_default();
                let mut path = vec![prefix.to_owned()];
                path.extend(modules.iter().map(|(_, m)| m.clone()));
                path.push(name.to_owned());
                out.push(path.join("::"));
                pending = false;
            }
        }
    }
}

/// Every test of the workspace: (lib tests, integration tests).
fn all_tests() -> (Vec<String>, Vec<String>) {
    let root = root();
    let (mut lib, mut integration) = (Vec::new(), Vec::new());
    // Every package's library: the workspace's `cargo test --lib` runs them all.
    for src in ["src", "crates/core/src", "crates/sim/src"] {
        let mut rs = Vec::new();
        files(&root.join(src), &[".rs"], &mut rs);
        for f in rs {
            let rel = f.strip_prefix(root.join(src)).unwrap().with_extension("");
            let module = rel
                .to_string_lossy()
                .replace('/', "::")
                .trim_end_matches("::mod")
                .to_owned();
            test_names(&f, &module, &mut lib);
        }
    }
    let mut rs = Vec::new();
    files(&root.join("tests"), &[".rs"], &mut rs);
    for f in rs {
        let rel = f
            .strip_prefix(root.join("tests"))
            .unwrap()
            .with_extension("");
        test_names(
            &f,
            &rel.to_string_lossy().replace('/', "::"),
            &mut integration,
        );
    }
    (lib, integration)
}

#[test]
fn every_path_and_test_filter_the_docs_and_comments_name_exists() {
    let root = root();
    let mut texts = Vec::new();
    files(&root, &[".md", ".rs"], &mut texts);
    texts.push(root.join(".ci/run"));
    let (lib, integration) = all_tests();
    assert!(lib.len() > 100 && integration.len() > 100, "{lib:?}");
    let mut missing = Vec::new();
    for file in &texts {
        let text = prose(file);
        let shown = file.strip_prefix(&root).unwrap().display();
        for p in paths_named(&text) {
            let path = p.split(':').next().unwrap_or_default();
            if !root.join(path).exists() {
                missing.push(format!("{shown}: no file {p}"));
            }
        }
        for (selects, filter) in filters_named(&text) {
            let candidates: Vec<&String> = match selects {
                Selects::Lib => lib.iter().collect(),
                Selects::Integration => integration.iter().collect(),
                Selects::Any => lib.iter().chain(&integration).collect(),
            };
            if !candidates.iter().any(|t| t.contains(&filter)) {
                missing.push(format!(
                    "{shown}: `cargo test` filter {filter} selects no test"
                ));
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}
