//! What a consistency check found ([`Report`]) and the comparison of store and LIST ([`compare`]), both pure.

use std::collections::BTreeMap;

use crate::cache::listwatch::SourceError;

/// What one check found: the `Consistency` record's fields, in its order (serde's form is
/// the record's, written after the record's head).
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The resourceVersion the store was at, and the LIST was made at (when the queue never
    /// emptied for a whole period, [`Report::lagging`]: where the watch was).
    pub resource_version: String,
    /// Whether the store and the LIST hold the same keys at the same resourceVersions;
    /// `None` when no comparison was made (`error` says why).
    pub consistent: Option<bool>,
    /// Objects in the store at `resource_version`.
    pub objects: usize,
    /// Keys of the objects the LIST has and the store lacks, sorted.
    pub missing: Vec<String>,
    /// Keys of the objects the store has and the LIST lacks, sorted.
    pub extra: Vec<String>,
    /// Keys of the objects both have, at different resourceVersions, sorted.
    pub stale: Vec<String>,
    /// The LIST failed with 410 Expired: the server has compacted `resource_version`
    /// away. The next check is made at the store's resourceVersion of then.
    pub compacted: bool,
    /// Why no comparison was made (the LIST failed), in the words of the other records.
    pub error: Option<String>,
}

impl Report {
    /// A check whose LIST answered: `diff` between the store's `objects` and it.
    pub fn compared(resource_version: &str, objects: usize, diff: Diff) -> Report {
        Report {
            resource_version: resource_version.to_owned(),
            consistent: Some(diff.is_empty()),
            objects,
            missing: diff.missing,
            extra: diff.extra,
            stale: diff.stale,
            compacted: false,
            error: None,
        }
    }

    /// A check whose LIST failed with `e`: nothing was compared.
    pub fn failed(resource_version: &str, objects: usize, e: &SourceError) -> Report {
        Report {
            resource_version: resource_version.to_owned(),
            objects,
            compacted: e.is_expired(),
            error: Some(e.to_string()),
            ..Report::default()
        }
    }
}

impl Report {
    /// No sync point for a whole `period`: the informer's queue always held deltas, so its
    /// store was at no single resourceVersion; `resource_version` is where the watch was.
    pub fn lagging(resource_version: &str, period: std::time::Duration) -> Report {
        let p = humantime::format_duration(period);
        Report {
            resource_version: resource_version.to_owned(),
            error: Some(format!(
                "the informer's queue never emptied in {p}: its store lags the watch and is \
                 at no single resourceVersion (a handler slower than the events?)"
            )),
            ..Report::default()
        }
    }
}

/// How the store differs from a LIST, key by key; each list sorted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diff {
    /// In the LIST, not in the store.
    pub missing: Vec<String>,
    /// In the store, not in the LIST.
    pub extra: Vec<String>,
    /// In both, with different resourceVersions.
    pub stale: Vec<String>,
}

impl Diff {
    pub fn is_empty(&self) -> bool {
        self.missing.is_empty() && self.extra.is_empty() && self.stale.is_empty()
    }
}

/// Compares the store's key → resourceVersion pairs with the LIST's. resourceVersions are
/// compared for equality only (they are opaque). A key given twice on one side counts once,
/// with its last resourceVersion.
pub fn compare(
    store: impl IntoIterator<Item = (String, String)>,
    listed: impl IntoIterator<Item = (String, String)>,
) -> Diff {
    let store: BTreeMap<String, String> = store.into_iter().collect();
    let mut listed: BTreeMap<String, String> = listed.into_iter().collect();
    let mut diff = Diff::default();
    for (key, rv) in store {
        match listed.remove(&key) {
            None => diff.extra.push(key),
            Some(l) if l != rv => diff.stale.push(key),
            Some(_) => {}
        }
    }
    // What is left was listed and is not in the store; a BTreeMap's keys come sorted.
    diff.missing = listed.into_keys().collect();
    diff
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::listwatch::ApiStatus;

    fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(k, rv)| (k.to_string(), rv.to_string()))
            .collect()
    }

    fn keys(v: &[&str]) -> Vec<String> {
        v.iter().map(|k| k.to_string()).collect()
    }

    #[test]
    fn the_same_keys_at_the_same_versions_are_consistent() {
        let both = pairs(&[("a/x", "5"), ("b/y", "7"), ("node1", "2")]);
        let d = compare(both.clone(), both.into_iter().rev());
        assert!(d.is_empty(), "{d:?}");
        assert!(compare(Vec::new(), Vec::new()).is_empty());
    }

    #[test]
    fn missing_extra_and_stale_are_told_apart_and_sorted() {
        let store = pairs(&[
            ("ns/z-extra", "3"),
            ("ns/same", "4"),
            ("ns/b-stale", "5"),
            ("ns/a-extra", "1"),
            ("ns/a-stale", "6"),
        ]);
        let listed = pairs(&[
            ("ns/y-missing", "9"),
            ("ns/a-stale", "10"),
            ("ns/same", "4"),
            ("ns/b-stale", "11"),
            ("ns/c-missing", "12"),
        ]);
        let d = compare(store, listed);
        assert_eq!(d.missing, keys(&["ns/c-missing", "ns/y-missing"]));
        assert_eq!(d.extra, keys(&["ns/a-extra", "ns/z-extra"]));
        assert_eq!(d.stale, keys(&["ns/a-stale", "ns/b-stale"]));
        assert!(!d.is_empty());
    }

    #[test]
    fn resource_versions_are_compared_as_opaque_strings() {
        // "010" and "10" are the same number, not the same resourceVersion.
        let d = compare(pairs(&[("k", "010")]), pairs(&[("k", "10")]));
        assert_eq!(d.stale, keys(&["k"]));
        let d = compare(pairs(&[("k", "abc")]), pairs(&[("k", "abc")]));
        assert!(d.is_empty());
    }

    #[test]
    fn one_side_empty_is_all_missing_or_all_extra() {
        let some = pairs(&[("b", "2"), ("a", "1")]);
        assert_eq!(compare(Vec::new(), some.clone()).missing, keys(&["a", "b"]));
        assert_eq!(compare(some, Vec::new()).extra, keys(&["a", "b"]));
    }

    #[test]
    fn reports_say_whether_a_comparison_was_made() {
        let d = Diff {
            stale: keys(&["ns/k"]),
            ..Diff::default()
        };
        let r = Report::compared("42", 3, d);
        assert_eq!(r.consistent, Some(false));
        assert_eq!((r.objects, r.stale.clone()), (3, keys(&["ns/k"])));
        assert!(!r.compacted && r.error.is_none());
        assert_eq!(
            Report::compared("42", 3, Diff::default()).consistent,
            Some(true)
        );

        let gone = SourceError::Api(ApiStatus {
            code: 410,
            reason: "Expired".into(),
            message: "The resourceVersion for the provided list is too old.".into(),
            ..ApiStatus::default()
        });
        let r = Report::failed("42", 3, &gone);
        assert_eq!(r.consistent, None);
        assert!(r.compacted);
        assert_eq!(
            r.error.as_deref(),
            Some("410 Expired: The resourceVersion for the provided list is too old.")
        );
        let refused = SourceError::ConnectionRefused("refused".into());
        let r = Report::failed("42", 3, &refused);
        assert_eq!((r.consistent, r.compacted), (None, false));
        assert_eq!(r.error.as_deref(), Some("refused"));
    }
}
