//! Helpers for every layer's unit tests: the one way to make an object ([`object`], and
//! [`meta_object`] for one that is only metadata) and an in-memory writer ([`Buf`]). They
//! live here, in cache/, because `Object` does: a test helper sits at the lowest layer its
//! type lives in, and test code of the layers above may import it.

use std::io::{self, Write};
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
