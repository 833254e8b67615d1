//! Preloading many pods fast: a serialized running pod with holes for what differs
//! between pods ([`PodTemplate`]), so that 100k preloaded pods are mostly memcpy instead
//! of a JSON tree built and serialized per pod. Each filled template equals the pod
//! [`super::pods::pod`] would have built.

use rand::rngs::SmallRng;
use serde_json::json;

use super::pods::{pod, resize_pod, PodSize, NODE_NAMES};
use super::resources::PODS;

/// A serialized running pod with holes for what differs between pods: preloading 100k pods
/// is then mostly memcpy instead of building and serializing a JSON tree per pod.
pub(super) struct PodTemplate {
    /// `parts.len() == slots.len() + 1`; the pod is `parts[0] slots[0] parts[1] …`.
    parts: Vec<Vec<u8>>,
    slots: Vec<Slot>,
    namespace: String,
    labels: Vec<(String, String)>,
    /// The same for every pod of the template: its ReplicaSet, running and ready.
    links: super::storage::Links,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Name,
    Uid,
    Rv,
    Created,
    Vol,
    Node,
    HostIp,
    PodIp,
}

const SLOTS: &[(Slot, &str)] = &[
    (Slot::Name, "NAME"),
    (Slot::Uid, "UID"),
    (Slot::Rv, "RV"),
    (Slot::Created, "CREATED"),
    (Slot::Vol, "VOL"),
    (Slot::Node, "NODE"),
    (Slot::HostIp, "HOSTIP"),
    (Slot::PodIp, "PODIP"),
];

/// A placeholder string; U+0001 never occurs in real values and serializes as `\u0001`.
fn hole(tag: &str) -> String {
    format!("\u{1}{tag}\u{1}")
}

impl PodTemplate {
    pub(super) fn new(rng: &mut SmallRng, w: usize, rs_uid: &str, size: PodSize) -> PodTemplate {
        let mut v = pod(rng, w, &hole("NAME"), rs_uid, true);
        resize_pod(&mut v, size);
        // As stored (Go's JSON of a Pod) before the holes: each replaces a value in place.
        let mut v = super::storage::as_stored(&super::resources::RESOURCES[PODS], v);
        let links = super::storage::Links::of(PODS, &v);
        let vol = hole("VOL");
        // A small pod has no volume (pods::resize_pod).
        if let Some(volume) = v["spec"]["volumes"].get_mut(0) {
            volume["name"] = json!(vol);
        }
        let mount = v["spec"]["containers"]
            .get_mut(0)
            .and_then(|c| c["volumeMounts"].get_mut(0));
        if let Some(mount) = mount {
            mount["name"] = json!(vol);
        }
        v["spec"]["nodeName"] = json!(hole("NODE"));
        let st = &mut v["status"];
        st["hostIP"] = json!(hole("HOSTIP"));
        st["hostIPs"] = json!([{"ip": hole("HOSTIP")}]);
        st["podIP"] = json!(hole("PODIP"));
        st["podIPs"] = json!([{"ip": hole("PODIP")}]);
        let created = hole("CREATED");
        st["startTime"] = json!(created);
        for c in ["conditions", "containerStatuses"] {
            if let Some(items) = st[c].as_array_mut() {
                for item in items {
                    if item.get("lastTransitionTime").is_some() {
                        item["lastTransitionTime"] = json!(created);
                    }
                    if item["state"]["running"].get("startedAt").is_some() {
                        item["state"]["running"]["startedAt"] = json!(created);
                    }
                }
            }
        }
        let meta = &mut v["metadata"];
        meta["uid"] = json!(hole("UID"));
        meta["resourceVersion"] = json!(hole("RV"));
        meta["creationTimestamp"] = json!(created);
        let namespace = meta["namespace"].as_str().unwrap_or_default().to_string();
        let labels = super::storage::labels_of(meta);
        let bytes = crate::status::go_json(&super::storage::normalize(
            &super::resources::RESOURCES[PODS],
            v,
        ));
        let (mut parts, mut slots, mut rest) = (Vec::new(), Vec::new(), &bytes[..]);
        loop {
            let next = SLOTS
                .iter()
                .filter_map(|(slot, tag)| {
                    let pat = format!("\\u0001{tag}\\u0001");
                    find(rest, pat.as_bytes()).map(|i| (i, *slot, pat.len()))
                })
                .min_by_key(|(i, _, _)| *i);
            match next {
                Some((i, slot, len)) => {
                    parts.push(rest[..i].to_vec());
                    slots.push(slot);
                    rest = &rest[i + len..];
                }
                None => {
                    parts.push(rest.to_vec());
                    break;
                }
            }
        }
        PodTemplate {
            parts,
            slots,
            namespace,
            labels,
            links,
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn build(
        &self,
        name: &str,
        uid: &str,
        rv: u64,
        created: &str,
        vol: &str,
        node: usize,
        pod_ip: &str,
    ) -> super::storage::Obj {
        let rv_s = rv.to_string();
        let node_name = NODE_NAMES[node];
        let host_ip = format!("192.168.49.{}", 2 + node);
        let mut out = Vec::with_capacity(self.parts.iter().map(Vec::len).sum::<usize>() + 256);
        for (i, part) in self.parts.iter().enumerate() {
            out.extend_from_slice(part);
            if let Some(slot) = self.slots.get(i) {
                out.extend_from_slice(match slot {
                    Slot::Name => name.as_bytes(),
                    Slot::Uid => uid.as_bytes(),
                    Slot::Rv => rv_s.as_bytes(),
                    Slot::Created => created.as_bytes(),
                    Slot::Vol => vol.as_bytes(),
                    Slot::Node => node_name.as_bytes(),
                    Slot::HostIp => host_ip.as_bytes(),
                    Slot::PodIp => pod_ip.as_bytes(),
                });
            }
        }
        super::storage::Obj::from_parts(
            PODS,
            self.namespace.clone(),
            name.to_string(),
            uid.to_string(),
            rv,
            self.labels.clone(),
            "Running".to_string(),
            node_name.to_string(),
            self.links.clone(),
            out,
        )
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

pub(super) fn to_base36(mut n: usize) -> String {
    const D: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(D[n % 36]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    /// Every `--pod-size` preloads: a small pod has no volume for the template's hole.
    #[test]
    fn a_template_of_every_size_builds_its_pods() {
        for size in [
            PodSize::Default,
            PodSize::Small,
            PodSize::Medium,
            PodSize::Large,
            PodSize::Realistic,
        ] {
            let mut rng = SmallRng::seed_from_u64(1);
            let t = PodTemplate::new(&mut rng, 0, "rs-uid", size);
            let o = t.build(
                "web-0",
                "uid-0",
                7,
                "2026-11-21T21:10:56Z",
                "v",
                0,
                "10.0.0.7",
            );
            assert_eq!(o.name, "web-0", "{size:?}");
        }
    }
}
