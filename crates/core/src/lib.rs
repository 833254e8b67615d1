//! kwatch-core: what a client-go informer sees, for any Kubernetes resource, as a library.
//!
//! An informer of a given client-go release (its DeltaFIFO or RealFIFO, its streaming
//! list or LIST) on any [`ListerWatcher`](cache::listwatch::ListerWatcher), with event
//! handlers, its store read while it runs ([`informer::builder::SharedInformer`]). Here on
//! the in-memory [`FakeSource`](cache::fake::FakeSource); against a cluster, on
//! [`KubeSource`](client::source::KubeSource) (`crates/core/examples/informer.rs`):
//!
//! ```
//! use kwatch_core::cache::fake::FakeSource;
//! use kwatch_core::cache::release::Release;
//! use kwatch_core::informer::builder::SharedInformer;
//! # use kwatch_core::client::target::{Resource, Target};
//! # fn pods() -> Target {
//! #     let (name, kind, api_version) = ("pods".into(), "Pod".into(), "v1".into());
//! #     let resource = Resource { name, kind, api_version, namespaced: true };
//! #     let (group, version, plural) = (String::new(), "v1".into(), "pods".into());
//! #     Target { resource, group, version, plural }
//! # }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let source = FakeSource::new();
//! let pod = serde_json::json!({"kind": "Pod", "metadata": {"name": "web", "namespace": "default"}});
//! source.apply(pod)?;
//! let mut informer = SharedInformer::new(pods(), Release::V0_36)
//!     .add_event_handler(|key, call| println!("{} {key}", call.name()))
//!     .run(source);
//! assert!(informer.synced().await);
//! assert_eq!(informer.store().list_keys(), ["default/web"]);
//! # Ok(())
//! # }
//! ```
//!
//! The layers, top to bottom. A module imports only from its own layer and the layers
//! below it (the test at the end of this file holds that, naming the file and line):
//!
//! ```text
//! hooks.rs  the test hooks (KWATCH_TEST_*, read only with the feature `test-hooks`)
//! output/   the printers, each a sink of the informer's records: table, JSON lines,
//!           YAML, kubectl's script formats, --live's model
//! informer/ the informer loop (pop → store → records → sinks → stop), the record and
//!           sink types, the owner graph, filters, --until, --diff, --blame and its
//!           conflicts, freshness; builder (one informer as a library runs it)
//! client/   talking to the API server: connect, source (the ListerWatcher over HTTP),
//!           discovery, target ("deploy" → a resource), expand (`all`, --every-resource),
//!           protobuf/ (the protobuf wire → the apiserver's JSON; imports nothing of the crate)
//! cache/    client-go's tools/cache: object, delta, listwatch (the contract), retry,
//!           reflector/, queue, delta_fifo, real_fifo, store, handlers, release,
//!           consistency/, fake (an in-memory ListerWatcher)
//! template  kubectl's JSONPath (template.rs and template/)
//! text.rs scan.rs der.rs selector.rs context.rs units.rs gofmt.rs
//!           the foundation: sanitize, the JSON scanner, DER reading, label and field
//!           selectors, kubeconfig context names, durations as records write them, Go's
//!           fmt and json.Marshal of values; each imports nothing of the crate
//! ```
//!
//! A watch flows: client::target / client::expand → cache::reflector (lists and watches
//! through client::source) → cache's queue → informer::consume → the sinks (output's
//! printers). The `kwatch` binary (the workspace's root package) wires them to the
//! command line; the simulated API server (`kwatch-sim`) uses this crate's public API only.
pub mod cache;
pub mod client;
pub mod context;
pub mod der;
pub mod gofmt;
pub mod hooks;
pub mod informer;
pub mod output;
pub mod scan;
pub mod selector;
pub mod template;
pub mod text;
pub mod units;

#[cfg(test)]
mod tests {
    //! The layers of the picture above, read from the source as text: every `crate::`
    //! path outside test code (`use` lines and paths in code alike; comments skipped).
    //! Test code may reach further.

    use std::path::Path;

    use crate::cache::testutil::files_with_extension;

    /// The layer of each top-level module, bottom (0) to top; `None`: not a module.
    fn layer(module: &str) -> Option<u8> {
        Some(match module {
            "text" | "scan" | "der" | "selector" | "context" | "gofmt" | "units" => 0,
            "template" => 1,
            "cache" => 2,
            "client" => 3,
            "informer" => 4,
            "output" => 5,
            "hooks" => 6,
            _ => return None,
        })
    }

    /// Directories inside a layer whose files import nothing of the crate, as the
    /// foundation's: they sit beside their only user.
    const SELF_CONTAINED: &[&[&str]] = &[&["client", "protobuf"]];

    /// Why `from` (a top-level module) may not import `to`, if it may not.
    fn refused(from: &str, to: &str) -> Option<String> {
        let (Some(lf), Some(lt)) = (layer(from), layer(to)) else {
            return Some(format!("`{to}` is no layer of lib.rs's picture"));
        };
        match (from, to) {
            _ if from == to => None,
            _ if lf == 0 => Some("the foundation imports nothing of the crate".into()),
            _ if lt >= lf => Some(format!("{from} is below {to}")),
            _ => None,
        }
    }

    /// The module path of a file below src/ (`cache/reflector/mod.rs` → cache, reflector).
    fn module_of(rel: &Path) -> Vec<String> {
        let mut parts: Vec<String> = rel
            .with_extension("")
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        if parts.last().is_some_and(|p| p == "mod") {
            parts.pop();
        }
        parts
    }

    /// Whether `line` puts the next item under test only.
    fn is_test_attr(line: &str) -> bool {
        let t = line.trim_start();
        t.starts_with("#[cfg(test)]") || t.starts_with("#[cfg(all(test,")
    }

    /// The lines of `text` outside test code, with their numbers. An item under a test
    /// attribute ends at its first line ending in `;` or at the `}` of its indentation
    /// (rustfmt's layout); a `mod NAME;` under one makes that whole file test code
    /// (`../F` in `test_mods` for a `#[path = "F.rs"]` one, a file beside this one).
    fn code_lines(text: &str, test_mods: &mut Vec<String>) -> Vec<(usize, String)> {
        let lines: Vec<&str> = text.lines().collect();
        let mut out = Vec::new();
        let mut i = 0;
        while i < lines.len() {
            if !is_test_attr(lines[i]) {
                out.push((i + 1, lines[i].to_owned()));
                i += 1;
                continue;
            }
            let indent = lines[i].len() - lines[i].trim_start().len();
            i += 1;
            // `#[path = "F.rs"]`: the module is the file F beside this one.
            let mut beside = None;
            while i < lines.len() && lines[i].trim_start().starts_with("#[") {
                let attr = lines[i].trim();
                if let Some(f) = attr.strip_prefix("#[path = \"") {
                    beside = Some(f.trim_end_matches("\"]").trim_end_matches(".rs").to_owned());
                }
                i += 1;
            }
            let Some(first) = lines.get(i) else { break };
            if first.trim_end().ends_with(';') {
                let decl = first.trim().trim_start_matches("pub ");
                if let Some(name) = decl.strip_prefix("mod ") {
                    test_mods.push(match beside {
                        Some(f) => format!("../{f}"),
                        None => name.trim_end_matches(';').to_owned(),
                    });
                }
                i += 1;
                continue;
            }
            let close = format!("{}}}", " ".repeat(indent));
            while i < lines.len() && !lines[i].trim_end().starts_with(&close) {
                i += 1;
            }
            i += 1;
        }
        out
    }

    /// `line` without its `//` comment (one outside a string literal).
    fn uncommented(line: &str) -> &str {
        let mut quotes = 0;
        let bytes = line.as_bytes();
        for (k, &b) in bytes.iter().enumerate() {
            match b {
                b'"' if k == 0 || bytes[k - 1] != b'\\' => quotes += 1,
                b'/' if quotes % 2 == 0 && bytes.get(k + 1) == Some(&b'/') => return &line[..k],
                _ => {}
            }
        }
        line
    }

    fn ident(s: &str) -> &str {
        let end = s
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(s.len());
        &s[..end]
    }

    /// The top-level modules `line` names through `crate::` or `super::` paths, from the
    /// file of module `me`.
    fn targets(line: &str, me: &[String]) -> Vec<String> {
        let mut out = Vec::new();
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            let before = rest[..at].chars().next_back();
            let after = &rest[at + "crate::".len()..];
            rest = after;
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
                continue;
            }
            match after.strip_prefix('{') {
                // `use crate::{a, b::c}`: each item's first name (rustfmt keeps it on one
                // line or one item per line).
                Some(group) => out.extend(
                    group
                        .split(',')
                        .map(|item| ident(item.trim()).to_owned())
                        .filter(|m| !m.is_empty()),
                ),
                None => out.push(ident(after).to_owned()),
            }
        }
        let mut rest = line;
        while let Some(at) = rest.find("super::") {
            let mut after = &rest[at..];
            let mut up = 0;
            while let Some(a) = after.strip_prefix("super::") {
                up += 1;
                after = a;
            }
            rest = after;
            if up >= me.len() {
                out.push(ident(after).to_owned());
            }
        }
        out
    }

    #[test]
    fn no_module_imports_a_layer_above_its_own() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let all = files_with_extension(&src, "rs");
        // First the test-only files (`#[cfg(test)] mod NAME;` in their parents), then the
        // check of every other file.
        let mut test_only: Vec<Vec<String>> = Vec::new();
        for path in &all {
            let rel = path.strip_prefix(&src).unwrap();
            let mut names = Vec::new();
            code_lines(&std::fs::read_to_string(path).unwrap(), &mut names);
            let mut dir = module_of(rel);
            if matches!(rel.to_str(), Some("lib.rs" | "main.rs")) {
                dir.clear();
            }
            test_only.extend(names.into_iter().map(|n| match n.strip_prefix("../") {
                Some(f) => [&dir[..dir.len().saturating_sub(1)], &[f.to_owned()]].concat(),
                None => [dir.clone(), vec![n]].concat(),
            }));
        }
        let mut refusals = Vec::new();
        for path in &all {
            let rel = path.strip_prefix(&src).unwrap();
            if matches!(rel.to_str(), Some("lib.rs" | "main.rs")) {
                continue;
            }
            let me = module_of(rel);
            if test_only.iter().any(|t| me.starts_with(t)) {
                continue;
            }
            if layer(&me[0]).is_none() {
                refusals.push(format!(
                    "src/{}: a top-level module lib.rs's picture does not place",
                    rel.display()
                ));
            }
            let text = std::fs::read_to_string(path).unwrap();
            let alone = SELF_CONTAINED
                .iter()
                .any(|d| me.len() >= d.len() && me.iter().zip(d.iter()).all(|(a, b)| a == b));
            for (n, line) in code_lines(&text, &mut Vec::new()) {
                for to in targets(uncommented(&line), &me) {
                    let why = match alone {
                        true => Some("client/protobuf/ imports nothing of the crate".into()),
                        false => refused(&me[0], &to),
                    };
                    if let Some(why) = why {
                        let line = line.trim();
                        let at = format!("src/{}:{n}", rel.display());
                        refusals.push(format!("{at}: {why}: {line}"));
                    }
                }
            }
        }
        assert!(refusals.is_empty(), "\n{}", refusals.join("\n"));
    }

    #[test]
    fn the_check_sees_paths_in_code_groups_and_supers_and_skips_tests_and_comments() {
        let me = ["cache".to_owned(), "delta".to_owned()];
        assert_eq!(targets("use crate::output::Body;", &me), ["output"]);
        assert_eq!(
            targets("    let x = crate::app::exit::Usage;", &me),
            ["app"]
        );
        assert_eq!(
            targets("use crate::{text, client::source};", &me),
            ["text", "client"]
        );
        assert_eq!(targets("use super::super::app::cli;", &me), ["app"]);
        assert!(targets("use super::queue::Queue;", &me).is_empty());
        assert!(targets(uncommented("f(); // see crate::app"), &me).is_empty());
        assert_eq!(
            targets(uncommented(r#"g("a//b", crate::sim::X)"#), &me),
            ["sim"]
        );
        let text = "use a;\n#[cfg(test)]\nmod t;\n#[cfg(test)]\nmod tests {\n    x\n}\nuse b;\n";
        let mut test_mods = Vec::new();
        let kept: Vec<String> = code_lines(text, &mut test_mods)
            .into_iter()
            .map(|(_, l)| l)
            .collect();
        assert_eq!(kept, ["use a;", "use b;"]);
        assert_eq!(test_mods, ["t"]);
        assert_eq!(
            refused("cache", "client").as_deref(),
            Some("cache is below client")
        );
        assert!(refused("output", "client").is_none());
        assert!(refused("client", "app").is_some());
        assert!(refused("text", "scan").is_some());
    }
}
