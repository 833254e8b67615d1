//! `--cache-stats`: what the informer's store costs, measured on the objects it holds —
//! their number, the bytes of their JSON as the server sent it, and how those bytes split
//! between the top-level fields, with the two that transforms usually strip
//! (`metadata.managedFields`, the last-applied annotation) apart from the rest of
//! `metadata`. What client-go users cut with a `TransformFunc` (shared_informer.go's
//! `SetTransform`), seen before writing one.
//!
//! [`StoreCost`] also keeps the relist peak: a relist holds the whole list it received
//! while the store still holds the objects it is about to replace (client-go's
//! reflector.go `list` → `syncWith` → the DeltaFIFO's `Replace`), so the most a store has
//! cost is its bytes plus the bytes of the list in flight at a replace.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::cache::object::ObjectRef;
use crate::cache::store::Store;

/// kubectl apply's annotation, the whole object again as JSON.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The field name a last-applied annotation is counted under.
pub const LAST_APPLIED_FIELD: &str =
    "metadata.annotations[kubectl.kubernetes.io/last-applied-configuration]";

/// The store's cost at one time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheCost {
    pub objects: usize,
    /// Bytes of the objects' JSON.
    pub bytes: u64,
    /// Bytes by field: each top-level member by its name (`spec`, `status`, `data`, …;
    /// `metadata` without the two below), `metadata.managedFields` and
    /// [`LAST_APPLIED_FIELD`]. The rest of `bytes` is JSON punctuation and keys.
    pub fields: BTreeMap<String, u64>,
    /// The largest, over the run so far, of the store's bytes plus the bytes of a list
    /// about to replace it (the list as received, before `--transform`); 0 before the
    /// first list. See [`StoreCost`].
    #[serde(default)]
    pub relist_peak_bytes: u64,
}

/// The bytes of `objects`' JSON.
fn bytes_of(objects: &[ObjectRef]) -> u64 {
    objects.iter().map(|o| o.raw().len() as u64).sum()
}

/// One informer's store, measured on demand, and its relist peak so far.
pub struct StoreCost {
    store: Arc<Store>,
    /// Invariant: only grows (`fetch_max`); written by the reflector at each replace.
    relist_peak: AtomicU64,
}

impl StoreCost {
    pub fn new(store: Arc<Store>) -> StoreCost {
        StoreCost {
            store,
            relist_peak: AtomicU64::new(0),
        }
    }

    /// A list of `list` about to replace the store: the store's bytes now (the informer
    /// has not applied the replace yet) plus the list's raise the peak.
    pub fn relisting(&self, list: &[ObjectRef]) {
        let held = bytes_of(&self.store.list()) + bytes_of(list);
        self.relist_peak.fetch_max(held, Ordering::Relaxed);
    }

    /// The store's cost now, with the relist peak so far.
    pub fn measure(&self) -> CacheCost {
        CacheCost {
            relist_peak_bytes: self.relist_peak.load(Ordering::Relaxed),
            ..CacheCost::measure(&self.store.list())
        }
    }
}

impl CacheCost {
    /// Measures `objects` (a store's list).
    pub fn measure(objects: &[ObjectRef]) -> CacheCost {
        let mut cost = CacheCost {
            objects: objects.len(),
            ..CacheCost::default()
        };
        for o in objects {
            let raw = o.raw();
            cost.bytes += raw.len() as u64;
            cost.add_fields(raw);
        }
        cost
    }

    fn add(&mut self, field: &str, bytes: usize) {
        *self.fields.entry(field.to_owned()).or_default() += bytes as u64;
    }

    fn add_fields(&mut self, raw: &str) {
        // An object that is not a JSON object (never from a server) counts in `bytes` only.
        let Ok(top) = serde_json::from_str::<HashMap<String, &RawValue>>(raw) else {
            return;
        };
        for (name, value) in top {
            let mut len = value.get().len();
            if name == "metadata" {
                len -= self.metadata_parts(value.get());
            }
            self.add(&name, len);
        }
    }

    /// Counts managedFields and the last-applied annotation; returns their bytes.
    fn metadata_parts(&mut self, metadata: &str) -> usize {
        let Ok(meta) = serde_json::from_str::<HashMap<String, &RawValue>>(metadata) else {
            return 0;
        };
        let mut parts = 0;
        if let Some(mf) = meta.get("managedFields") {
            parts += mf.get().len();
            self.add("metadata.managedFields", mf.get().len());
        }
        let annotations = meta
            .get("annotations")
            .and_then(|a| serde_json::from_str::<HashMap<String, &RawValue>>(a.get()).ok());
        if let Some(la) = annotations.as_ref().and_then(|a| a.get(LAST_APPLIED)) {
            parts += la.get().len();
            self.add(LAST_APPLIED_FIELD, la.get().len());
        }
        parts
    }

    /// The heaviest fields first, with their share of `bytes` (0 to 1).
    pub fn shares(&self) -> Vec<(&str, f64)> {
        let mut v: Vec<(&str, f64)> = self
            .fields
            .iter()
            .map(|(k, b)| (k.as_str(), *b as f64 / self.bytes.max(1) as f64))
            .collect();
        v.sort_by(|a, b| b.1.total_cmp(&a.1));
        v
    }

    /// One line: `20 objects, 79214 bytes (relist peak 158428); metadata.managedFields
    /// 41%, status 20%, …` (the `top` heaviest fields).
    pub fn text(&self, top: usize) -> String {
        let fields: Vec<String> = self
            .shares()
            .into_iter()
            .take(top)
            .map(|(k, s)| format!("{k} {:.0}%", s * 100.0))
            .collect();
        format!(
            "{} objects, {} bytes (relist peak {}); {}",
            self.objects,
            self.bytes,
            self.relist_peak_bytes,
            fields.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::object::Object;
    use std::sync::Arc;

    #[test]
    fn splits_managed_fields_and_last_applied_from_metadata() {
        let raw = r#"{"kind":"ConfigMap","metadata":{"name":"a","managedFields":[{"manager":"kubectl"}],"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"x\":1}"}},"data":{"k":"v"}}"#;
        let obj = Arc::new(Object::from_json(raw).expect("object"));
        let c = CacheCost::measure(&[obj]);
        assert_eq!(c.objects, 1);
        assert_eq!(c.bytes, raw.len() as u64);
        let mf = r#"[{"manager":"kubectl"}]"#.len();
        assert_eq!(c.fields["metadata.managedFields"], mf as u64);
        assert_eq!(c.fields[LAST_APPLIED_FIELD], r#""{\"x\":1}""#.len() as u64);
        assert_eq!(c.fields["data"], 9);
        assert_eq!(c.fields["kind"], 11);
        let meta = raw.find(r#"{"name""#).unwrap();
        let meta_len = raw.len() - meta - r#","data":{"k":"v"}}"#.len();
        assert_eq!(
            c.fields["metadata"],
            (meta_len - mf - r#""{\"x\":1}""#.len()) as u64
        );
        assert!(c.text(2).starts_with("1 objects, "));
    }

    #[test]
    fn the_relist_peak_is_the_store_plus_the_list_in_flight_at_its_largest() {
        let o = |name: &str, pad: usize| -> ObjectRef {
            let raw = format!(
                r#"{{"metadata":{{"name":"{name}"}},"data":"{}"}}"#,
                "x".repeat(pad)
            );
            Arc::new(Object::from_json(&raw).expect("object"))
        };
        let store = Arc::new(Store::new());
        let cost = StoreCost::new(store.clone());
        assert_eq!(cost.measure().relist_peak_bytes, 0);
        let first = vec![o("a", 100), o("b", 100)];
        let first_bytes = bytes_of(&first);
        cost.relisting(&first);
        assert_eq!(cost.measure().relist_peak_bytes, first_bytes);
        store.replace(first);
        // A relist while the store holds the first list: both at once.
        let second = vec![o("a", 10)];
        cost.relisting(&second);
        let peak = first_bytes + bytes_of(&second);
        assert_eq!(cost.measure().relist_peak_bytes, peak);
        store.replace(second);
        // A smaller relist later leaves the peak where it was.
        cost.relisting(&[o("a", 1)]);
        let c = cost.measure();
        assert_eq!((c.objects, c.relist_peak_bytes), (1, peak));
        assert!(
            c.text(1).contains(&format!("(relist peak {peak})")),
            "{}",
            c.text(1)
        );
    }
}
