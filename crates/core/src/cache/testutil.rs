//! Helpers for every layer's unit tests: the one way to make an object ([`object`], and
//! [`meta_object`] for one that is only metadata), an in-memory writer ([`Buf`]) and the
//! walk of a directory of fixtures ([`files_with_extension`]). They live here, in cache/,
//! because `Object` does: a test helper sits at the lowest layer its type lives in, and
//! test code of the layers above may import it. kwatch-sim's tests use them too (the
//! `test-hooks` feature).

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::object::{Object, ObjectRef};

/// The object of this JSON text (panics if it is not an object's JSON).
pub fn object(json: &str) -> ObjectRef {
    ObjectRef::new(Object::from_json(json).unwrap_or_else(|e| panic!("{e}: {json}")))
}

/// An object that is only `metadata`: `name`, `resourceVersion` = `rv` and, unless `ns`
/// is empty (a cluster-scoped object), `namespace`.
pub fn meta_object(ns: &str, name: &str, rv: impl std::fmt::Display) -> ObjectRef {
    let ns = if ns.is_empty() {
        String::new()
    } else {
        format!(r#","namespace":"{ns}""#)
    };
    object(&format!(
        r#"{{"metadata":{{"name":"{name}"{ns},"resourceVersion":"{rv}"}}}}"#
    ))
}

/// A writer into a buffer the test reads back; clones share the buffer.
#[derive(Clone, Default)]
pub struct Buf(Arc<Mutex<Vec<u8>>>);

impl Write for Buf {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Buf {
    /// Everything written so far, as text (panics on invalid UTF-8).
    pub fn text(&self) -> String {
        let bytes = self.0.lock().unwrap_or_else(|e| e.into_inner()).clone();
        String::from_utf8(bytes).unwrap()
    }
}

/// Every JSON document under crates/core/testdata (genuine servers' objects, lists,
/// watches and Tables, Kubernetes' round-trip fixtures), with its file: a file that is
/// one JSON value as it is written there, else each line of it that is one (a watch's
/// JSON lines).
pub fn testdata_json() -> Vec<(PathBuf, String)> {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/testdata"));
    let mut out = Vec::new();
    for path in files_with_extension(root, "json") {
        let text = std::fs::read_to_string(&path).unwrap();
        if serde_json::from_str::<serde_json::Value>(&text).is_ok() {
            out.push((path, text));
            continue;
        }
        for line in text.lines() {
            if serde_json::from_str::<serde_json::Value>(line).is_ok() {
                out.push((path.clone(), line.to_owned()));
            }
        }
    }
    out
}

/// Every file below `dir`, in its subdirectories too, whose name ends in `.ext`, sorted.
pub fn files_with_extension(dir: &Path, ext: &str) -> Vec<PathBuf> {
    fn walk(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, ext, out);
            } else if path.extension().is_some_and(|e| e == ext) {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, ext, &mut out);
    out.sort();
    out
}
