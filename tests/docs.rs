//! What the docs and comments point at exists: every repository path named in a Markdown
//! file or a Rust comment, and every `cargo test` filter they give, which must select at
//! least one test (a filter that selects none runs nothing and says nothing). And
//! ARCHITECTURE.md's "Every source file" names every `.rs` file of the three packages'
//! sources, and nothing that is not there.

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

/// The entries of ARCHITECTURE.md's "Every source file" listing (its first code block after
/// that heading): each line's first word, braces expanded (`v1.3{2,3}.json` is two).
fn architecture_listing() -> Vec<String> {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let section = text
        .split_once("## Every source file")
        .expect("ARCHITECTURE.md has its \"Every source file\" section")
        .1;
    let block = section.split("```").nth(1).unwrap_or_default();
    block
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .flat_map(expand_braces)
        .collect()
}

/// `a{b,c}d{e,f}` → `abde`, `abdf`, `acde`, `acdf`.
fn expand_braces(word: &str) -> Vec<String> {
    let (Some(open), Some(close)) = (word.find('{'), word.find('}')) else {
        return vec![word.to_owned()];
    };
    let (head, tail) = (&word[..open], &word[close + 1..]);
    word[open + 1..close]
        .split(',')
        .flat_map(|alt| expand_braces(&format!("{head}{alt}{tail}")))
        .collect()
}

/// Whether `path` matches `pattern`, whose `*` stands for any run of characters within one
/// path segment.
fn glob_match(pattern: &str, path: &str) -> bool {
    fn segment(p: &[u8], s: &[u8]) -> bool {
        match p.split_first() {
            None => s.is_empty(),
            Some((b'*', rest)) => (0..=s.len()).any(|i| segment(rest, &s[i..])),
            Some((c, rest)) => s.first() == Some(c) && segment(rest, &s[1..]),
        }
    }
    let (ps, ss): (Vec<&str>, Vec<&str>) =
        (pattern.split('/').collect(), path.split('/').collect());
    ps.len() == ss.len()
        && ps
            .iter()
            .zip(&ss)
            .all(|(p, s)| segment(p.as_bytes(), s.as_bytes()))
}

#[test]
fn architecture_md_names_every_source_file_and_only_files_that_exist() {
    let root = root();
    let named = architecture_listing();
    assert!(named.len() > 100, "{named:?}");
    let rel = |p: &PathBuf| {
        p.strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .into_owned()
    };
    let mut sources = Vec::new();
    for dir in ["src", "crates/core/src", "crates/sim/src"] {
        files(&root.join(dir), &[".rs"], &mut sources);
    }
    let unnamed: Vec<String> = sources
        .iter()
        .map(rel)
        .filter(|f| !named.iter().any(|n| glob_match(n, f)))
        .collect();
    assert!(
        unnamed.is_empty(),
        "ARCHITECTURE.md's \"Every source file\" does not name: {unnamed:#?}"
    );
    let mut every = Vec::new();
    for dir in ["src", "crates"] {
        files(&root.join(dir), &[""], &mut every);
    }
    let every: Vec<String> = every
        .iter()
        .map(rel)
        .chain(["Cargo.toml".to_owned()])
        .collect();
    let stale: Vec<&String> = named
        .iter()
        .filter(|n| !every.iter().any(|f| glob_match(n, f)))
        .collect();
    assert!(
        stale.is_empty(),
        "ARCHITECTURE.md's \"Every source file\" names what no file is: {stale:#?}"
    );
}

#[test]
fn the_listing_reader_expands_braces_and_globs_one_segment() {
    assert_eq!(
        expand_braces("a/v1.3{2,3}.json"),
        ["a/v1.32.json", "a/v1.33.json"]
    );
    assert_eq!(expand_braces("{x,y}/*.{pb,json}").len(), 4);
    assert!(glob_match("d/*.table.json", "d/pods.table.json"));
    assert!(!glob_match("d/*.json", "d/e/pods.json"));
    assert!(glob_match("d/v1/api/*.pb", "d/v1/api/core.v1.Pod.pb"));
    assert!(!glob_match("d/*.pb", "d/x.pb.gz"));
}
