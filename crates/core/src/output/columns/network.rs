//! The network printers: services, endpoints, endpoint slices, ingresses, and (for the
//! server's Tables only) ingress classes and network policies (printers.go).

use std::collections::BTreeSet;

use serde_json::Value;

use super::column::{and_wide, Column};
use super::format::{format_selector, int, list_with_more, map_pairs, none, str_or_empty};

pub(super) fn ingress_columns(_wide: bool) -> Vec<Column> {
    let c = Column::new;
    vec![
        c("CLASS", |o, _| none(&o["spec"]["ingressClassName"])),
        c("HOSTS", ingress_hosts),
        c("ADDRESS", ingress_address),
        c("PORTS", |o, _| {
            let tls = o["spec"]["tls"].as_array().is_some_and(|t| !t.is_empty());
            if tls { "80, 443" } else { "80" }.to_owned()
        }),
        Column::age(),
    ]
}

pub(super) fn endpointslice_columns(_wide: bool) -> Vec<Column> {
    let c = Column::new;
    vec![
        c("ADDRESSTYPE", |o, _| str_or_empty(&o["addressType"])),
        c("PORTS", |o, _| {
            let ports = o["ports"].as_array().map(Vec::as_slice).unwrap_or_default();
            list_with_more(
                ports
                    .iter()
                    .map(|p| match (p["port"].as_i64(), p["name"].as_str()) {
                        (Some(n), _) => n.to_string(),
                        (None, Some(name)) => name.to_owned(),
                        (None, None) => "*".to_owned(),
                    }),
            )
        }),
        c("ENDPOINTS", |o, _| {
            let eps = o["endpoints"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default();
            list_with_more(
                eps.iter()
                    .flat_map(|e| e["addresses"].as_array().into_iter().flatten())
                    .map(|a| a.as_str().unwrap_or_default().to_owned()),
            )
        }),
        Column::age(),
    ]
}

pub(super) fn service_columns(wide: bool) -> Vec<Column> {
    let c = Column::new;
    let cols = vec![
        c("TYPE", |o, _| none(&o["spec"]["type"])),
        c("CLUSTER-IP", |o, _| none(&o["spec"]["clusterIP"])),
        c("EXTERNAL-IP", service_external_ip),
        c("PORT(S)", service_ports),
        Column::age(),
    ];
    and_wide(cols, wide, || {
        vec![c("SELECTOR", |o, _| map_pairs(&o["spec"]["selector"]))]
    })
}

/// printers.go `printEndpoints`: `formatEndpoints(obj, nil)`.
pub(super) fn endpoints_columns(_wide: bool) -> Vec<Column> {
    vec![Column::new("ENDPOINTS", endpoints_list), Column::age()]
}

/// printers.go `formatEndpoints`: `ip:port` (`net.JoinHostPort`) per address and port
/// of every subset (the bare IP for a subset without ports), the first 3 comma-joined
/// and ` + N more...`; `<none>` without subsets.
fn endpoints_list(o: &Value, _: jiff::Timestamp) -> String {
    const MAX: usize = 3;
    let subsets = o["subsets"].as_array().map_or(&[][..], Vec::as_slice);
    if subsets.is_empty() {
        return "<none>".into();
    }
    let (mut list, mut count) = (Vec::new(), 0);
    for ss in subsets {
        let addrs = ss["addresses"].as_array().map_or(&[][..], Vec::as_slice);
        let ip = |a: &Value| a["ip"].as_str().unwrap_or_default().to_owned();
        match ss["ports"].as_array().filter(|p| !p.is_empty()) {
            None => {
                count += addrs.len();
                list.extend(addrs.iter().map(ip));
            }
            Some(ports) => {
                for p in ports {
                    count += addrs.len();
                    let port = p["port"].as_i64().unwrap_or(0);
                    list.extend(addrs.iter().map(|a| match ip(a) {
                        h if h.contains(':') => format!("[{h}]:{port}"),
                        h => format!("{h}:{port}"),
                    }));
                }
            }
        }
    }
    if list.len() > MAX {
        list.truncate(MAX);
        return format!("{} + {} more...", list.join(","), count - MAX);
    }
    list.join(",")
}

/// printers.go `formatHosts`: up to three hosts, `*` when no rule names one.
fn ingress_hosts(o: &Value, _: jiff::Timestamp) -> String {
    const MAX: usize = 3;
    let rules = o["spec"]["rules"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut list: Vec<&str> = Vec::new();
    let mut more = false;
    for r in rules {
        if list.len() == MAX {
            more = true;
        }
        match r["host"].as_str() {
            Some(h) if !more && !h.is_empty() => list.push(h),
            _ => {}
        }
    }
    if list.is_empty() {
        return "*".into();
    }
    let ret = list.join(",");
    if more {
        format!("{ret} + {} more...", rules.len() - MAX)
    } else {
        ret
    }
}

/// printers.go `ingressLoadBalancerStatusStringer`: [`load_balancer_ingress`] joined.
/// kube-apiserver makes every Table with `Wide: true`, so the printer's 16-byte cut of
/// the narrow form never reaches kubectl (the genuine server's Tables show it uncut).
fn ingress_address(o: &Value, _: jiff::Timestamp) -> String {
    load_balancer_ingress(o)
        .into_iter()
        .collect::<Vec<_>>()
        .join(",")
}

/// printers.go `loadBalancerStatusStringer` (and its ingress twin): each ingress point's
/// IP, else its hostname, empty ones left out, sorted and unique.
fn load_balancer_ingress(o: &Value) -> BTreeSet<&str> {
    o["status"]["loadBalancer"]["ingress"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| {
            i["ip"]
                .as_str()
                .filter(|s| !s.is_empty())
                .or_else(|| i["hostname"].as_str().filter(|s| !s.is_empty()))
        })
        .collect()
}

/// printers.go `getServiceExternalIP`: the external IPs (`<none>` without), a load
/// balancer's ingress points before them (`<pending>` without either), an ExternalName
/// service's name, `<unknown>` for another type (an absent type is ClusterIP, the
/// server's default).
pub(super) fn service_external_ip(o: &Value, _: jiff::Timestamp) -> String {
    let external: Vec<&str> = o["spec"]["externalIPs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    match o["spec"]["type"].as_str().unwrap_or("ClusterIP") {
        "ExternalName" => str_or_empty(&o["spec"]["externalName"]),
        "LoadBalancer" => {
            let all: Vec<&str> = load_balancer_ingress(o)
                .into_iter()
                .chain(external)
                .collect();
            match all.is_empty() {
                true => "<pending>".into(),
                false => all.join(","),
            }
        }
        "ClusterIP" | "NodePort" if external.is_empty() => "<none>".into(),
        "ClusterIP" | "NodePort" => external.join(","),
        _ => "<unknown>".into(),
    }
}

pub(super) fn service_ports(o: &Value, _: jiff::Timestamp) -> String {
    let ports: Vec<String> = o["spec"]["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            let proto = p["protocol"].as_str().unwrap_or("TCP");
            match p["nodePort"].as_i64() {
                Some(np) if np > 0 => format!("{}:{np}/{proto}", int(&p["port"])),
                _ => format!("{}/{proto}", int(&p["port"])),
            }
        })
        .collect();
    if ports.is_empty() {
        "<none>".into()
    } else {
        ports.join(",")
    }
}

/// printers.go `printIngressClass`: PARAMETERS is `Kind.apiGroup/name` (`Kind/name`
/// without a group), `<none>` without parameters.
pub(super) fn ingressclass_columns(_wide: bool) -> Vec<Column> {
    vec![
        Column::new("CONTROLLER", |o, _| str_or_empty(&o["spec"]["controller"])),
        Column::new("PARAMETERS", |o, _| {
            let p = &o["spec"]["parameters"];
            if !p.is_object() {
                return "<none>".into();
            }
            let kind = match p["apiGroup"].as_str() {
                Some(g) => format!("{}.{g}", str_or_empty(&p["kind"])),
                None => str_or_empty(&p["kind"]),
            };
            format!("{kind}/{}", str_or_empty(&p["name"]))
        }),
        Column::age(),
    ]
}

/// printers.go `printNetworkPolicy`: POD-SELECTOR as apimachinery's
/// `FormatLabelSelector` prints `.spec.podSelector`.
pub(super) fn networkpolicy_columns(_wide: bool) -> Vec<Column> {
    vec![
        Column::new("POD-SELECTOR", |o, _| {
            format_selector(&o["spec"]["podSelector"])
        }),
        Column::age(),
    ]
}
