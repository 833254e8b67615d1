//! The config and storage printers: config maps, secrets, persistent volume claims,
//! and (for the server's Tables only) persistent volumes and storage classes
//! (printers.go).

use serde_json::Value;

use super::column::{and_wide, Column};
use super::format::{none, quantity, str_or_empty};

pub(super) fn configmap_columns(_wide: bool) -> Vec<Column> {
    vec![
        Column::new("DATA", |o, _| {
            let n = o["data"].as_object().map_or(0, |m| m.len())
                + o["binaryData"].as_object().map_or(0, |m| m.len());
            n.to_string()
        }),
        Column::age(),
    ]
}

pub(super) fn secret_columns(_wide: bool) -> Vec<Column> {
    vec![
        Column::new("TYPE", |o, _| none(&o["type"])),
        Column::new("DATA", |o, _| {
            o["data"].as_object().map_or(0, |m| m.len()).to_string()
        }),
        Column::age(),
    ]
}

/// printers.go `printPersistentVolumeClaim`: CAPACITY and ACCESS MODES only once bound
/// (`spec.volumeName` set).
pub(super) fn pvc_columns(wide: bool) -> Vec<Column> {
    let cols = vec![
        Column::new("STATUS", |o, _| {
            if o["metadata"]["deletionTimestamp"].is_string() {
                return "Terminating".into();
            }
            str_or_empty(&o["status"]["phase"])
        }),
        Column::new("VOLUME", |o, _| str_or_empty(&o["spec"]["volumeName"])),
        Column::new("CAPACITY", |o, _| {
            if pvc_bound(o) {
                quantity(&o["status"]["capacity"]["storage"])
            } else {
                String::new()
            }
        }),
        Column::new("ACCESS MODES", |o, _| {
            if pvc_bound(o) {
                access_modes(&o["status"]["accessModes"])
            } else {
                String::new()
            }
        }),
        // helper.GetPersistentVolumeClaimClass: the beta annotation wins over the field.
        Column::new("STORAGECLASS", |o, _| {
            match o["metadata"]["annotations"]["volume.beta.kubernetes.io/storage-class"].as_str() {
                Some(c) => c.to_owned(),
                None => str_or_empty(&o["spec"]["storageClassName"]),
            }
        }),
        Column::new("VOLUMEATTRIBUTESCLASS", |o, _| {
            unset(&o["spec"]["volumeAttributesClassName"])
        }),
        Column::age(),
    ];
    and_wide(cols, wide, || {
        vec![Column::new("VOLUMEMODE", |o, _| {
            unset(&o["spec"]["volumeMode"])
        })]
    })
}

/// printers.go `printPersistentVolume`: CLAIM is `namespace/name` when there is a
/// claimRef, VOLUMEATTRIBUTESCLASS and VOLUMEMODE `<unset>` when absent.
pub(super) fn pv_columns(wide: bool) -> Vec<Column> {
    let c = Column::new;
    let cols = vec![
        c("CAPACITY", |o, _| {
            quantity(&o["spec"]["capacity"]["storage"])
        }),
        c("ACCESS MODES", |o, _| {
            access_modes(&o["spec"]["accessModes"])
        }),
        c("RECLAIM POLICY", |o, _| {
            str_or_empty(&o["spec"]["persistentVolumeReclaimPolicy"])
        }),
        c("STATUS", |o, _| {
            if o["metadata"]["deletionTimestamp"].is_string() {
                return "Terminating".into();
            }
            str_or_empty(&o["status"]["phase"])
        }),
        c("CLAIM", |o, _| {
            let r = &o["spec"]["claimRef"];
            match r.is_object() {
                true => format!(
                    "{}/{}",
                    str_or_empty(&r["namespace"]),
                    str_or_empty(&r["name"])
                ),
                false => String::new(),
            }
        }),
        // helper.GetPersistentVolumeClass: the beta annotation wins over the field.
        c("STORAGECLASS", |o, _| {
            match o["metadata"]["annotations"]["volume.beta.kubernetes.io/storage-class"].as_str() {
                Some(c) => c.to_owned(),
                None => str_or_empty(&o["spec"]["storageClassName"]),
            }
        }),
        c("VOLUMEATTRIBUTESCLASS", |o, _| {
            unset_if_absent(&o["spec"]["volumeAttributesClassName"])
        }),
        c("REASON", |o, _| str_or_empty(&o["status"]["reason"])),
        Column::age(),
    ];
    and_wide(cols, wide, || {
        vec![c("VOLUMEMODE", |o, _| {
            unset_if_absent(&o["spec"]["volumeMode"])
        })]
    })
}

/// A string field as printers.go prints an optional one: `<unset>` when absent.
fn unset_if_absent(v: &Value) -> String {
    v.as_str().map_or("<unset>".into(), str::to_owned)
}

/// printers.go `printStorageClass`: the reclaim policy (`Delete` when unset), the volume
/// binding mode (`Immediate` when unset) and whether volumes expand (`false` when unset).
pub(super) fn storageclass_columns(_wide: bool) -> Vec<Column> {
    let c = Column::new;
    vec![
        c("PROVISIONER", |o, _| str_or_empty(&o["provisioner"])),
        c("RECLAIMPOLICY", |o, _| {
            o["reclaimPolicy"].as_str().unwrap_or("Delete").to_owned()
        }),
        c("VOLUMEBINDINGMODE", |o, _| {
            o["volumeBindingMode"]
                .as_str()
                .unwrap_or("Immediate")
                .to_owned()
        }),
        c("ALLOWVOLUMEEXPANSION", |o, _| {
            o["allowVolumeExpansion"]
                .as_bool()
                .unwrap_or(false)
                .to_string()
        }),
        Column::age(),
    ]
}

/// printers.go `printStorageClass`'s name cell: ` (default)` after the name of a class
/// annotated as the default (storageutil `IsDefaultAnnotation`: the GA or the beta
/// annotation is `true`).
pub(super) fn storageclass_name(o: &Value, name: String) -> String {
    let a = &o["metadata"]["annotations"];
    let default = [
        "storageclass.kubernetes.io/is-default-class",
        "storageclass.beta.kubernetes.io/is-default-class",
    ]
    .iter()
    .any(|k| a[*k] == "true");
    match default {
        true => format!("{name} (default)"),
        false => name,
    }
}

fn pvc_bound(o: &Value) -> bool {
    o["spec"]["volumeName"]
        .as_str()
        .is_some_and(|v| !v.is_empty())
}

/// A string field, `<unset>` when absent or empty.
fn unset(v: &Value) -> String {
    match v.as_str() {
        Some(s) if !s.is_empty() => s.to_owned(),
        _ => "<unset>".into(),
    }
}

/// `helper.GetAccessModesAsString`: RWO, ROX, RWX, RWOP in that order, each once.
pub fn access_modes(v: &Value) -> String {
    let modes: Vec<&str> = v
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ]
    .iter()
    .filter(|(m, _)| modes.contains(m))
    .map(|(_, short)| *short)
    .collect::<Vec<_>>()
    .join(",")
}
