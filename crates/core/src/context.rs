//! [`ContextName`]: which cluster a record, an informer or a line belongs to, as the
//! kubeconfig names its context. A run of one cluster has none (`None` wherever a
//! context is optional); a fleet's every record carries one. Imports nothing of the crate.

use std::borrow::Borrow;
use std::fmt;
use std::sync::Arc;

/// A kubeconfig context's name. Cloning shares the name: a fleet's records, informers
/// and counters each hold one without copying it.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContextName(Arc<str>);

impl ContextName {
    pub fn new(name: &str) -> ContextName {
        ContextName(Arc::from(name))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for ContextName {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for ContextName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for ContextName {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<&str> for ContextName {
    fn from(name: &str) -> ContextName {
        ContextName::new(name)
    }
}

impl From<String> for ContextName {
    fn from(name: String) -> ContextName {
        ContextName(Arc::from(name))
    }
}

impl PartialEq<str> for ContextName {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for ContextName {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl fmt::Display for ContextName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for ContextName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

/// A context's name as `--stats`, `--metrics` and the `~` lines write an optional one:
/// the name, or nothing for a run of one cluster.
pub fn or_empty(context: Option<&ContextName>) -> &str {
    context.map_or("", ContextName::as_str)
}

impl serde::Serialize for ContextName {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> serde::Deserialize<'de> for ContextName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ContextName, D::Error> {
        String::deserialize(d).map(ContextName::from)
    }
}
