//! The printers' cells and headers against kubectl's, and the pod fast path against the
//! [`Value`] path on random and corrupted pods.

use serde_json::json;

use super::column::{Column, Getter, RowObject};
use super::format::age;
use super::network::{service_external_ip, service_ports};
use super::{crd::*, pod::*, registry::*};
use crate::client::target::Resource;
use crate::gofmt::go_float;
use serde_json::Value;

fn now() -> jiff::Timestamp {
    "2026-11-21T10:05:00Z".parse().unwrap()
}

/// A pod column's cell from the whole object (the [`Value`] path).
fn pod_cell(c: PodColumn, o: &Value) -> String {
    Column::pod(c, "").cell(o, None, now())
}

fn pod_ready(o: &Value, _: jiff::Timestamp) -> String {
    pod_cell(PodColumn::Ready, o)
}

fn pod_status(o: &Value, _: jiff::Timestamp) -> String {
    pod_cell(PodColumn::Status, o)
}

fn pod_restarts(o: &Value, _: jiff::Timestamp) -> String {
    pod_cell(PodColumn::Restarts, o)
}

#[test]
fn pod_status_follows_kubectl() {
    let p = json!({"spec": {"containers": [{"name": "a"}, {"name": "b"}]},
        "status": {"phase": "Running", "containerStatuses": [
            {"ready": true, "state": {"running": {}}, "restartCount": 2,
             "lastState": {"terminated": {"finishedAt": "2026-11-21T10:00:00Z"}}},
            {"ready": false, "state": {"waiting": {"reason": "CrashLoopBackOff"}}, "restartCount": 1}]}});
    assert_eq!(pod_ready(&p, now()), "1/2");
    assert_eq!(pod_status(&p, now()), "CrashLoopBackOff");
    assert_eq!(pod_restarts(&p, now()), "3 (5m ago)");
    let init = json!({"spec": {"initContainers": [{}, {}], "containers": [{}]},
        "status": {"phase": "Pending", "initContainerStatuses": [
            {"state": {"terminated": {"exitCode": 0}}}, {"state": {"running": {}}}]}});
    assert_eq!(pod_status(&init, now()), "Init:1/2");
    let gone = json!({"metadata": {"deletionTimestamp": "x"}, "status": {"phase": "Running"}});
    assert_eq!(pod_status(&gone, now()), "Terminating");
}

#[test]
fn services_print_ports_and_pending_load_balancers() {
    let s = json!({"spec": {"type": "LoadBalancer", "clusterIP": "10.0.0.1",
        "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"},
            {"port": 443, "nodePort": 0, "protocol": "TCP"}]}});
    assert_eq!(service_ports(&s, now()), "80:30080/TCP,53/UDP,443/TCP");
    assert_eq!(service_external_ip(&s, now()), "<pending>");
}

/// printers.go `loadBalancerStatusStringer`: an ingress point's IP, else its hostname,
/// empty ones left out, sorted and unique, then the external IPs.
#[test]
fn load_balancer_addresses_are_a_sorted_set() {
    let s = json!({"spec": {"type": "LoadBalancer", "externalIPs": ["192.0.2.9"]},
        "status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.9"}, {"ip": "", "hostname": "lb.example"},
            {"ip": ""}, {"hostname": ""}, {"ip": "10.0.0.2"}, {"ip": "10.0.0.9"}]}}});
    assert_eq!(
        service_external_ip(&s, now()),
        "10.0.0.2,10.0.0.9,lb.example,192.0.2.9"
    );
    let empty = json!({"spec": {"type": "LoadBalancer"},
        "status": {"loadBalancer": {"ingress": [{"ip": ""}]}}});
    assert_eq!(service_external_ip(&empty, now()), "<pending>");
    let other = json!({"spec": {"type": "Headless", "externalIPs": ["192.0.2.9"]}});
    assert_eq!(service_external_ip(&other, now()), "<unknown>");
}

/// A server's Table row: every column, the name's included, cells typed as
/// printers.go appends them (an int64 in a `string` column too, a string in a
/// `boolean` one), ages as the server prints them.
#[test]
fn server_rows_are_typed_as_the_printers_append_cells() {
    let row =
        |group: &str, kind: &str, o: Value| ServerPrinter::new(group, kind, None).row(&o, now());
    let created = json!({"name": "x", "creationTimestamp": "2026-11-21T10:04:00Z"});
    let cm = json!({"metadata": created, "data": {"a": "1", "b": "2"}, "binaryData": {"c": ""}});
    assert_eq!(
        row("", "ConfigMap", cm),
        [json!("x"), json!(3), json!("60s")]
    );
    let cj = json!({"metadata": created, "spec": {"schedule": "@daily", "suspend": false},
        "status": {"active": [{}, {}]}});
    assert_eq!(
        row("batch", "CronJob", cj)[..5],
        [
            json!("x"),
            json!("@daily"),
            json!("<none>"),
            json!("False"),
            json!(2)
        ]
    );
    let ev = ServerPrinter::new("", "Event", None);
    assert_eq!(ev.headers().last(), Some(&"NAME"));
    assert_eq!(ev.headers().len(), 10);
    // A kind without a printer: apiserver's default table convertor.
    let unknown = ServerPrinter::new("example.org", "Thing", None);
    assert_eq!(unknown.headers(), ["NAME", "CREATED AT"]);
    assert_eq!(
        unknown.row(&json!({"metadata": created}), now()),
        [json!("x"), json!("2026-11-21T10:04:00Z")]
    );
}

/// The printers of the kinds kwatch shows through the server's Table, which only the
/// simulator's Tables print (printers.go).
#[test]
fn table_only_printers_follow_printers_go() {
    let printer = |group: &str, kind: &str| ServerPrinter::new(group, kind, None);
    let row = |group: &str, kind: &str, o: Value| printer(group, kind).row(&o, now());
    let created = json!({"name": "x", "creationTimestamp": "2026-11-21T10:04:00Z"});

    assert_eq!(
        printer("storage.k8s.io", "StorageClass").headers(),
        [
            "NAME",
            "PROVISIONER",
            "RECLAIMPOLICY",
            "VOLUMEBINDINGMODE",
            "ALLOWVOLUMEEXPANSION",
            "AGE"
        ]
    );
    let sc = json!({"metadata": {"name": "fast", "creationTimestamp": "2026-11-21T10:04:00Z",
        "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
        "provisioner": "example.com/nfs", "allowVolumeExpansion": true});
    assert_eq!(
        row("storage.k8s.io", "StorageClass", sc),
        [
            json!("fast (default)"),
            json!("example.com/nfs"),
            json!("Delete"),
            json!("Immediate"),
            json!(true),
            json!("60s")
        ]
    );
    let beta = json!({"metadata": {"name": "old",
        "annotations": {"storageclass.beta.kubernetes.io/is-default-class": "true"}}});
    assert_eq!(
        row("storage.k8s.io", "StorageClass", beta)[0],
        "old (default)"
    );
    let plain = json!({"metadata": {"name": "slow", "annotations": {"storageclass.kubernetes.io/is-default-class": "false"}},
        "reclaimPolicy": "Retain", "volumeBindingMode": "WaitForFirstConsumer"});
    assert_eq!(
        row("storage.k8s.io", "StorageClass", plain)[..5],
        [
            json!("slow"),
            json!(""),
            json!("Retain"),
            json!("WaitForFirstConsumer"),
            json!(false)
        ]
    );

    let pc = json!({"metadata": created, "value": 1000, "globalDefault": true, "preemptionPolicy": "Never"});
    assert_eq!(
        row("scheduling.k8s.io", "PriorityClass", pc),
        [
            json!("x"),
            json!(1000),
            json!(true),
            json!("60s"),
            json!("Never")
        ]
    );
    assert_eq!(
        row(
            "scheduling.k8s.io",
            "PriorityClass",
            json!({"metadata": created})
        ),
        [json!("x"), json!(0), json!(false), json!("60s"), json!("")]
    );

    let ic = json!({"metadata": created, "spec": {"controller": "k8s.io/ingress-nginx",
        "parameters": {"apiGroup": "k8s.example.com", "kind": "Params", "name": "external"}}});
    assert_eq!(
        row("networking.k8s.io", "IngressClass", ic)[1..3],
        [
            json!("k8s.io/ingress-nginx"),
            json!("Params.k8s.example.com/external")
        ]
    );
    let core = json!({"spec": {"parameters": {"kind": "ConfigMap", "name": "c"}}});
    assert_eq!(
        row("networking.k8s.io", "IngressClass", core)[2],
        "ConfigMap/c"
    );
    assert_eq!(
        row("networking.k8s.io", "IngressClass", json!({}))[1..3],
        [json!(""), json!("<none>")]
    );

    let np = json!({"spec": {"podSelector": {"matchLabels": {"tier": "front", "app": "web"},
        "matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["prod", "dev"]}]}}});
    assert_eq!(
        row("networking.k8s.io", "NetworkPolicy", np)[1],
        "app=web,env notin (dev,prod),tier=front"
    );
    let all = json!({"spec": {"podSelector": {}}});
    assert_eq!(row("networking.k8s.io", "NetworkPolicy", all)[1], "<none>");

    assert_eq!(
        printer("", "ResourceQuota").headers(),
        ["NAME", "AGE", "REQUEST", "LIMIT"]
    );
    let rq = json!({"metadata": created, "status": {
        "hard": {"pods": "10", "requests.cpu": "4", "limits.memory": "8Gi", "limits.cpu": "2"},
        "used": {"pods": "3", "requests.cpu": "500m", "limits.memory": "1Gi"}}});
    assert_eq!(
        row("", "ResourceQuota", rq),
        [
            json!("x"),
            json!("60s"),
            json!("pods: 3/10, requests.cpu: 500m/4"),
            json!("limits.cpu: 0/2, limits.memory: 1Gi/8Gi")
        ]
    );

    assert_eq!(
        printer("", "PersistentVolume").headers(),
        [
            "NAME",
            "CAPACITY",
            "ACCESS MODES",
            "RECLAIM POLICY",
            "STATUS",
            "CLAIM",
            "STORAGECLASS",
            "VOLUMEATTRIBUTESCLASS",
            "REASON",
            "AGE",
            "VOLUMEMODE"
        ]
    );
    let pv = json!({"metadata": {"name": "pv-1", "creationTimestamp": "2026-11-21T10:04:00Z",
            "annotations": {"volume.beta.kubernetes.io/storage-class": "beta"}},
        "spec": {"capacity": {"storage": "5Gi"}, "accessModes": ["ReadOnlyMany", "ReadWriteOnce"],
            "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "fast", "volumeMode": "Block",
            "volumeAttributesClassName": "", "claimRef": {"namespace": "default", "name": "data"}},
        "status": {"phase": "Bound"}});
    assert_eq!(
        row("", "PersistentVolume", pv),
        [
            "pv-1",
            "5Gi",
            "RWO,ROX",
            "Retain",
            "Bound",
            "default/data",
            "beta",
            "",
            "",
            "60s",
            "Block"
        ]
    );
    let bare = json!({"metadata": {"name": "pv-2", "deletionTimestamp": "2026-11-21T10:04:30Z"},
        "spec": {"claimRef": {}}, "status": {"phase": "Failed", "reason": "Recycle failed"}});
    assert_eq!(
        row("", "PersistentVolume", bare),
        [
            "pv-2",
            "0",
            "",
            "",
            "Terminating",
            "/",
            "",
            "<unset>",
            "Recycle failed",
            "<unknown>",
            "<unset>"
        ]
    );
}

/// A timestamp more than a second after `now` is clock skew: kwatch's own columns print
/// its age as 0s, a server's Table as kube-apiserver does (`HumanDuration`: `<invalid>`).
#[test]
fn ages_in_the_future_are_invalid_in_server_rows_only() {
    let o = json!({"metadata": {"name": "x", "creationTimestamp": "2026-11-21T10:05:05Z"},
        "status": {"startTime": "2026-11-21T10:05:05Z"}});
    let job = res("batch/v1", "Job");
    assert_eq!(cells(&job, false, &o)[2], "0s");
    assert_eq!(age(Some("2026-11-21T10:05:05Z"), now()), "0s");
    let server = ServerPrinter::new("batch", "Job", None).row(&o, now());
    assert_eq!(server[3..5], [json!("<invalid>"), json!("<invalid>")]);
    let skew = json!({"metadata": {"creationTimestamp": "2026-11-21T10:05:01Z"}});
    assert_eq!(
        ServerPrinter::new("", "ConfigMap", None).row(&skew, now())[2],
        "0s"
    );
    // The flag does not outlive the row.
    assert_eq!(cells(&job, false, &o)[2], "0s");
}

#[test]
fn crd_printer_columns_honour_priority_and_dates() {
    let crd = json!({"spec": {"versions": [{"name": "v1", "additionalPrinterColumns": [
        {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
        {"name": "Color", "type": "string", "jsonPath": ".spec.color", "priority": 1},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]}]}});
    let pc = PrinterColumn::from_crd(&crd, "v1");
    let r = Resource {
        name: "widgets.example.com".into(),
        kind: "Widget".into(),
        api_version: "example.com/v1".into(),
        namespaced: true,
    };
    let cols = resource_columns(&r, false, Some(&pc));
    let h: Vec<&str> = cols.iter().map(|c| c.header.as_str()).collect();
    assert_eq!(h, ["SIZE", "AGE"]);
    let w = json!({"metadata": {"creationTimestamp": "2026-11-21T10:04:00Z"}, "spec": {"size": 3}});
    let cells: Vec<String> = cols.iter().map(|c| c.cell(&w, None, now())).collect();
    assert_eq!(cells, ["3", "60s"]);
    // A missing value is an empty cell, as kubectl prints a null cell.
    let cells: Vec<String> = cols
        .iter()
        .map(|c| c.cell(&json!({}), None, now()))
        .collect();
    assert_eq!(cells, ["", ""]);
    assert_eq!(resource_columns(&r, true, Some(&pc)).len(), 3);
}

fn res(api_version: &str, kind: &str) -> Resource {
    Resource {
        name: kind.to_lowercase(),
        kind: kind.into(),
        api_version: api_version.into(),
        namespaced: true,
    }
}

/// Headers and cells of `obj` as `r`'s columns print them.
fn row(r: &Resource, wide: bool, obj: &Value) -> Vec<(String, String)> {
    resource_columns(r, wide, None)
        .iter()
        .map(|c| (c.header.clone(), c.cell(obj, None, now())))
        .collect()
}

fn cells(r: &Resource, wide: bool, obj: &Value) -> Vec<String> {
    row(r, wide, obj).into_iter().map(|(_, c)| c).collect()
}

fn headers(r: &Resource, wide: bool) -> Vec<String> {
    row(r, wide, &json!({}))
        .into_iter()
        .map(|(h, _)| h)
        .collect()
}

/// The columns of kubectl 1.32's printers for the workload kinds.
#[test]
fn workload_columns_follow_kubectl_printers() {
    let job = res("batch/v1", "Job");
    assert_eq!(
        headers(&job, false),
        ["STATUS", "COMPLETIONS", "DURATION", "AGE"]
    );
    assert_eq!(
        headers(&job, true),
        [
            "STATUS",
            "COMPLETIONS",
            "DURATION",
            "AGE",
            "CONTAINERS",
            "IMAGES",
            "SELECTOR"
        ]
    );
    let j = json!({"metadata": {"creationTimestamp": "2026-11-21T10:00:00Z"},
        "spec": {"completions": 3, "selector": {"matchLabels": {"b": "2", "a": "1"}},
                 "template": {"spec": {"containers": [{"name": "c1", "image": "i1"}, {"name": "c2", "image": "i2"}]}}},
        "status": {"succeeded": 1, "startTime": "2026-11-21T10:01:00Z",
                   "conditions": [{"type": "Complete", "status": "False"}]}});
    assert_eq!(
        cells(&job, true, &j),
        [
            "Running",
            "1/3",
            "4m",
            "<unknown>",
            "c1,c2",
            "i1,i2",
            "a=1,b=2"
        ]
    );
    let done = json!({"spec": {"parallelism": 2}, "status": {"succeeded": 2,
        "startTime": "2026-11-21T10:01:00Z", "completionTime": "2026-11-21T10:01:30Z",
        "conditions": [{"type": "Complete", "status": "True"}]}});
    assert_eq!(
        cells(&job, false, &done)[..3],
        ["Complete", "2/1 of 2", "30s"]
    );
    assert_eq!(cells(&job, false, &json!({}))[..3], ["Running", "0/1", ""]);

    let cj = res("batch/v1", "CronJob");
    assert_eq!(
        headers(&cj, false),
        [
            "SCHEDULE",
            "TIMEZONE",
            "SUSPEND",
            "ACTIVE",
            "LAST SCHEDULE",
            "AGE"
        ]
    );
    let c = json!({"spec": {"schedule": "*/5 * * * *", "suspend": false,
        "jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "x", "image": "busybox"}]}}}}},
        "status": {"active": [{}, {}], "lastScheduleTime": "2026-11-21T10:04:00Z"}});
    assert_eq!(
        cells(&cj, true, &c),
        [
            "*/5 * * * *",
            "<none>",
            "False",
            "2",
            "60s",
            "<unknown>",
            "x",
            "busybox",
            "<none>"
        ]
    );
    assert_eq!(
        cells(&cj, false, &json!({}))[2..5],
        ["<unset>", "0", "<none>"]
    );

    let sts = res("apps/v1", "StatefulSet");
    assert_eq!(
        headers(&sts, true),
        ["READY", "AGE", "CONTAINERS", "IMAGES"]
    );
    let s = json!({"spec": {"replicas": 3}, "status": {"readyReplicas": 2}});
    assert_eq!(cells(&sts, false, &s), ["2/3", "<unknown>"]);

    let ds = res("apps/v1", "DaemonSet");
    assert_eq!(
        headers(&ds, false),
        [
            "DESIRED",
            "CURRENT",
            "READY",
            "UP-TO-DATE",
            "AVAILABLE",
            "NODE SELECTOR",
            "AGE"
        ]
    );
    let d = json!({"spec": {"template": {"spec": {"nodeSelector": {"os": "linux", "arch": "arm"}}},
        "selector": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]},
                                           {"key": "app", "operator": "Exists"}]}},
        "status": {"desiredNumberScheduled": 3, "currentNumberScheduled": 3, "numberReady": 2,
                   "updatedNumberScheduled": 1, "numberAvailable": 2}});
    assert_eq!(
        cells(&ds, true, &d),
        [
            "3",
            "3",
            "2",
            "1",
            "2",
            "arch=arm,os=linux",
            "<unknown>",
            "",
            "",
            "app,tier in (a,b)"
        ]
    );
}

#[test]
fn network_columns_follow_kubectl_printers() {
    let ing = res("networking.k8s.io/v1", "Ingress");
    assert_eq!(
        headers(&ing, false),
        ["CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"]
    );
    let i = json!({"spec": {"ingressClassName": "nginx", "tls": [{}],
        "rules": [{"host": "a.example"}, {}, {"host": "b.example"}, {"host": "c.example"}, {"host": "d.example"}]},
        "status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.2"}, {"hostname": "lb.some.long.example"}]}}});
    assert_eq!(
        cells(&ing, false, &i),
        [
            "nginx",
            "a.example,b.example,c.example + 2 more...",
            // Uncut: kube-apiserver prints every Table wide.
            "10.0.0.2,lb.some.long.example",
            "80, 443",
            "<unknown>"
        ]
    );
    assert_eq!(cells(&ing, true, &i)[2], "10.0.0.2,lb.some.long.example");
    assert_eq!(
        cells(&ing, false, &json!({}))[..4],
        ["<none>", "*", "", "80"]
    );

    let eps = res("discovery.k8s.io/v1", "EndpointSlice");
    assert_eq!(
        headers(&eps, false),
        ["ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"]
    );
    let e = json!({"addressType": "IPv4", "ports": [{"port": 80}, {"name": "metrics"}, {}],
        "endpoints": [{"addresses": ["10.0.0.1", "10.0.0.2"]}, {"addresses": ["10.0.0.3", "10.0.0.4", "10.0.0.5"]}]});
    assert_eq!(
        cells(&eps, false, &e),
        [
            "IPv4",
            "80,metrics,*",
            "10.0.0.1,10.0.0.2,10.0.0.3 + 2 more...",
            "<unknown>"
        ]
    );
    assert_eq!(cells(&eps, false, &json!({}))[1..3], ["<unset>", "<unset>"]);
}

/// events.k8s.io events print through the core printer, reading their own
/// field names (regarding, note, series, deprecated*).
#[test]
fn events_of_both_groups_print_as_kubectl() {
    let core = res("v1", "Event");
    let new = res("events.k8s.io/v1", "Event");
    assert_eq!(
        headers(&core, false),
        ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    );
    assert_eq!(headers(&new, false), headers(&core, false));
    assert_eq!(
        headers(&core, true),
        [
            "LAST SEEN",
            "TYPE",
            "REASON",
            "OBJECT",
            "SUBOBJECT",
            "SOURCE",
            "MESSAGE",
            "FIRST SEEN",
            "COUNT",
            "NAME"
        ]
    );
    let e = json!({"metadata": {"name": "web.1"}, "type": "Normal", "reason": "Scheduled",
        "regarding": {"kind": "Pod", "name": "web", "fieldPath": "spec.containers{a}"},
        "note": " assigned to node-a\n", "reportingController": "default-scheduler",
        "reportingInstance": "sched-1", "eventTime": "2026-11-21T10:03:00.000000Z",
        "series": {"count": 4, "lastObservedTime": "2026-11-21T10:04:30.000000Z"}});
    assert_eq!(
        cells(&new, true, &e),
        [
            "30s",
            "Normal",
            "Scheduled",
            "pod/web",
            "spec.containers{a}",
            "default-scheduler, sched-1",
            "assigned to node-a",
            "2m",
            "4",
            "web.1"
        ]
    );
    let old = json!({"metadata": {"name": "x"}, "type": "Warning", "reason": "BackOff",
        "involvedObject": {"kind": "Node"}, "message": "m", "source": {"component": "kubelet"},
        "firstTimestamp": "2026-11-21T10:00:00Z", "lastTimestamp": "2026-11-21T10:04:00Z", "count": 0});
    assert_eq!(
        cells(&core, true, &old),
        ["60s", "Warning", "BackOff", "node", "", "kubelet", "m", "5m", "1", "x"]
    );
    // Only eventTime: both ages come from it.
    let bare = json!({"eventTime": "2026-11-21T10:04:00.000000Z"});
    assert_eq!(cells(&new, false, &bare), ["60s", "", "", "", ""]);
}

#[test]
fn pod_wide_has_nominated_node_and_readiness_gates() {
    let pod = res("v1", "Pod");
    let p = json!({"spec": {"readinessGates": [{"conditionType": "x/a"}, {"conditionType": "x/b"}]},
        "status": {"nominatedNodeName": "node-b", "conditions": [
            {"type": "x/a", "status": "True"}, {"type": "x/b", "status": "False"}, {"type": "x/b", "status": "True"}]}});
    let c = cells(&pod, true, &p);
    assert_eq!(c[c.len() - 2..], ["node-b", "1/2"]);
    let c = cells(&pod, true, &json!({}));
    assert_eq!(c[c.len() - 2..], ["<none>", "<none>"]);
    let raw = p.to_string();
    assert!(cells_agree(&raw));
}

/// CRD cells as kube-apiserver types them and kubectl prints them.
#[test]
fn crd_cells_follow_the_table_convertor() {
    let n = now();
    assert_eq!(crd_cell("string", None, n), "");
    assert_eq!(crd_cell("string", Some(&json!(null)), n), "");
    assert_eq!(crd_cell("string", Some(&json!(1e-7)), n), "1e-07");
    assert_eq!(crd_cell("string", Some(&json!(1500000.0)), n), "1.5e+06");
    assert_eq!(crd_cell("string", Some(&json!(0.25)), n), "0.25");
    assert_eq!(crd_cell("string", Some(&json!(7)), n), "7");
    assert_eq!(
        crd_cell(
            "string",
            Some(&json!({"b": [1, "x"], "a": {"c": true, "d": null}})),
            n
        ),
        r#"{"a":{"c":true,"d":null},"b":[1,"x"]}"#
    );
    assert_eq!(
        crd_cell("string", Some(&json!({"a": 1, "b": "x"})), n),
        r#"{"a":1,"b":"x"}"#
    );
    assert_eq!(
        crd_cell("string", Some(&json!(["x", true])), n),
        r#"["x",true]"#
    );
    assert_eq!(
        crd_cell("string", Some(&json!([1e-7, 0.25, 1e21, "<a&b>\n"])), n),
        r#"[1e-7,0.25,1e+21,"\u003ca\u0026b\u003e\n"]"#
    );
    assert_eq!(crd_cell("integer", Some(&json!(2.7)), n), "2");
    assert_eq!(crd_cell("integer", Some(&json!("2")), n), "");
    assert_eq!(crd_cell("number", Some(&json!(3.0)), n), "3");
    assert_eq!(crd_cell("number", Some(&json!(1e-7)), n), "1e-07");
    assert_eq!(crd_cell("number", Some(&json!(0.5)), n), "0.5");
    assert_eq!(crd_cell("boolean", Some(&json!(true)), n), "true");
    assert_eq!(crd_cell("boolean", Some(&json!("true")), n), "");
    assert_eq!(
        crd_cell("date", Some(&json!("2026-11-21T10:04:00Z")), n),
        "60s"
    );
    assert_eq!(crd_cell("date", Some(&json!("yesterday")), n), "<invalid>");
    for (f, go) in [
        (1e-7, "1e-07"),
        (-2.5e-5, "-2.5e-05"),
        (1e21, "1e+21"),
        (123456.0, "123456"),
        (1234567.0, "1.234567e+06"),
        (0.0001, "0.0001"),
        (3.5, "3.5"),
    ] {
        assert_eq!(go_float(f), go, "{f}");
    }
}

/// Every pod column plus `-L` and `--show-labels`.
fn pod_columns() -> Vec<Column> {
    let r = Resource {
        name: "pods".into(),
        kind: "Pod".into(),
        api_version: "v1".into(),
        namespaced: true,
    };
    let mut cols = resource_columns(&r, true, None);
    for l in ["app", "missing"] {
        cols.push(Column {
            header: l.to_uppercase(),
            get: Getter::Label(l.into()),
        });
    }
    cols.push(Column {
        header: "LABELS".into(),
        get: Getter::Labels,
    });
    cols
}

/// The row's cells through [`RowObject`], and whether it used a [`PodView`]; asserts
/// they equal the cells from the whole object as a [`Value`].
fn cells_agree(raw: &str) -> bool {
    let cols = pod_columns();
    let v: Value = serde_json::from_str(raw).unwrap();
    let created = v["metadata"]["creationTimestamp"].as_str();
    let row = RowObject::parse(&cols, Some(raw));
    for c in &cols {
        assert_eq!(
            row.cell(c, created, now()),
            c.cell(&v, created, now()),
            "{} of {raw}",
            c.header
        );
    }
    // The same cells from the members a pod's view reads alone (the table's way).
    if let Ok(o) = crate::cache::object::Object::from_json(raw) {
        let mut scratch = String::new();
        let of = RowObject::of(&cols, Some(&o), &mut scratch);
        for c in &cols {
            assert_eq!(
                of.cell(c, created, now()),
                c.cell(&v, created, now()),
                "{} of {raw}, projected",
                c.header
            );
        }
    }
    matches!(row, RowObject::Pod(_))
}

/// A pick from `xs` (`None` leaves the key out).
fn pick<'a>(rng: &mut rand::rngs::SmallRng, xs: &'a [Option<Value>]) -> &'a Option<Value> {
    use rand::Rng;
    &xs[rng.random_range(0..xs.len())]
}

fn put(m: &mut serde_json::Map<String, Value>, k: &str, v: &Option<Value>) {
    if let Some(v) = v {
        m.insert(k.into(), v.clone());
    }
}

/// Random well-typed pods: container and init container states, readiness, restarts,
/// phases and reasons, deletion, IPs, nodes and labels in many combinations.
fn random_pod(rng: &mut rand::rngs::SmallRng) -> Value {
    use rand::Rng;
    let states = [
        None,
        Some(json!(null)),
        Some(json!({})),
        Some(json!({"running": {"startedAt": "2026-11-21T09:00:00Z"}})),
        Some(json!({"running": null})),
        Some(json!({"waiting": {"reason": "CrashLoopBackOff", "message": "back-off"}})),
        Some(json!({"waiting": {"reason": "ContainerCreating"}})),
        Some(json!({"waiting": {"reason": "PodInitializing"}})),
        Some(json!({"waiting": {"reason": ""}})),
        Some(json!({"waiting": {}})),
        Some(json!({"terminated": {"exitCode": 0, "reason": "Completed"}})),
        Some(json!({"terminated": {"exitCode": 0}})),
        Some(json!({"terminated": {"exitCode": 1, "reason": "Error"}})),
        Some(json!({"terminated": {"exitCode": 137, "reason": ""}})),
        Some(json!({"terminated": {"exitCode": 2}})),
        Some(json!({"terminated": {}})),
        Some(json!({"terminated": {"reason": "OOMKilled"}})),
        Some(json!({"terminated": {"exitCode": -1, "signal": 9}})),
    ];
    let last_states = [
        None,
        Some(json!({})),
        Some(json!(null)),
        Some(json!({"terminated": {"exitCode": 1, "finishedAt": "2026-11-21T10:00:00Z"}})),
        Some(json!({"terminated": {"finishedAt": "2026-11-20T08:30:00Z"}})),
        Some(json!({"terminated": {"finishedAt": "not a time"}})),
        Some(json!({"terminated": {"finishedAt": null}})),
        Some(json!({"terminated": null})),
    ];
    let bools = [
        None,
        Some(json!(true)),
        Some(json!(false)),
        Some(json!(null)),
    ];
    let counts = [
        None,
        Some(json!(0)),
        Some(json!(1)),
        Some(json!(7)),
        Some(json!(null)),
    ];
    let strs = [
        None,
        Some(json!(null)),
        Some(json!("")),
        Some(json!("10.0.0.7")),
        Some(json!("node-a")),
    ];
    let phases = [
        None,
        Some(json!("Running")),
        Some(json!("Pending")),
        Some(json!("Succeeded")),
        Some(json!("Failed")),
        Some(json!("Unknown")),
    ];
    let reasons = [
        None,
        Some(json!("NodeLost")),
        Some(json!("Evicted")),
        Some(json!("")),
        Some(json!(null)),
    ];
    let labels = [
        None,
        Some(json!(null)),
        Some(json!({})),
        Some(json!({"app": "web", "tier": "fe"})),
        Some(json!({"tier": "be", "app": ""})),
    ];
    let statuses = |rng: &mut rand::rngs::SmallRng, n: usize| -> Value {
        (0..n)
            .map(|i| {
                let mut c = serde_json::Map::new();
                c.insert("name".into(), json!(format!("c{i}")));
                put(&mut c, "state", pick(rng, &states));
                put(&mut c, "lastState", pick(rng, &last_states));
                put(&mut c, "ready", pick(rng, &bools));
                put(&mut c, "restartCount", pick(rng, &counts));
                put(&mut c, "started", pick(rng, &bools));
                Value::Object(c)
            })
            .collect()
    };
    let containers = |n: usize| -> Value {
        (0..n)
            .map(|i| json!({"name": format!("c{i}"), "image": "busybox"}))
            .collect()
    };
    let mut meta = serde_json::Map::new();
    meta.insert("name".into(), json!("p"));
    meta.insert("creationTimestamp".into(), json!("2026-11-21T09:00:00Z"));
    put(&mut meta, "labels", pick(rng, &labels));
    if rng.random_bool(0.2) {
        meta.insert("deletionTimestamp".into(), json!("2026-11-21T10:04:00Z"));
    } else if rng.random_bool(0.1) {
        meta.insert("deletionTimestamp".into(), json!(null));
    }
    let mut spec = serde_json::Map::new();
    let n_containers = rng.random_range(0..4);
    if n_containers > 0 || rng.random_bool(0.5) {
        spec.insert("containers".into(), containers(n_containers));
    }
    let n_inits = rng.random_range(0..3);
    if n_inits > 0 && rng.random_bool(0.7) {
        let mut inits = containers(n_inits);
        // Some are sidecars, which READY counts.
        for c in inits.as_array_mut().into_iter().flatten() {
            if rng.random_bool(0.3) {
                c["restartPolicy"] = json!("Always");
            }
        }
        spec.insert("initContainers".into(), inits);
    }
    put(&mut spec, "nodeName", pick(rng, &strs));
    spec.insert(
        "readinessGates".into(),
        json!([{"conditionType": "x/ready"}]),
    );
    let mut status = serde_json::Map::new();
    put(&mut status, "phase", pick(rng, &phases));
    put(&mut status, "reason", pick(rng, &reasons));
    put(&mut status, "podIP", pick(rng, &strs));
    if rng.random_bool(0.3) {
        status.insert("nominatedNodeName".into(), json!("node-b"));
    }
    status.insert(
        "conditions".into(),
        json!([{"type": "Ready", "status": "False", "reason": "ReadinessGatesNotReady"}]),
    );
    if n_inits > 0 || rng.random_bool(0.1) {
        let n = if rng.random_bool(0.8) { n_inits } else { 1 };
        status.insert("initContainerStatuses".into(), statuses(rng, n));
    }
    match rng.random_range(0..6) {
        0 => {}
        1 => {
            status.insert("containerStatuses".into(), json!(null));
        }
        _ => {
            let n = if rng.random_bool(0.8) {
                n_containers
            } else {
                rng.random_range(0..4)
            };
            status.insert("containerStatuses".into(), statuses(rng, n));
        }
    }
    let mut pod = serde_json::Map::new();
    pod.insert("kind".into(), json!("Pod"));
    pod.insert("metadata".into(), Value::Object(meta));
    if rng.random_bool(0.95) {
        pod.insert("spec".into(), Value::Object(spec));
    }
    if rng.random_bool(0.95) {
        pod.insert("status".into(), Value::Object(status));
    }
    Value::Object(pod)
}

#[test]
fn pod_view_cells_equal_the_value_cells() {
    use rand::SeedableRng;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
    let mut cells = std::collections::HashSet::new();
    for _ in 0..3000 {
        let raw = random_pod(&mut rng).to_string();
        assert!(cells_agree(&raw), "no PodView for {raw}");
        let v: Value = serde_json::from_str(&raw).unwrap();
        cells.insert(pod_status(&v, now()));
        cells.insert(pod_restarts(&v, now()));
    }
    // The pods reach the branches of the status and restart columns.
    for want in [
        "Init:0/2",
        "Init:1/2",
        "Init:CrashLoopBackOff",
        "Init:Error",
        "Init:ExitCode:2",
        "Init:OOMKilled",
        "Completed",
        "Running",
        "CrashLoopBackOff",
        "ExitCode:2",
        "ExitCode:-1",
        "Terminating",
        "Unknown",
        "Evicted",
        "Pending",
        "",
        "7 (5m ago)",
        "8 (25h ago)",
        "14",
    ] {
        assert!(cells.contains(want), "no pod gave {want:?}: {cells:?}");
    }
}

#[test]
fn pod_view_falls_back_to_the_value_on_other_types() {
    let pods = [
        r#"{"status":{"containerStatuses":[{"ready":"true","state":{"running":{}}}]}}"#,
        r#"{"status":{"containerStatuses":[{"restartCount":1.0}]}}"#,
        r#"{"status":{"containerStatuses":[{"restartCount":9223372036854775808}]}}"#,
        r#"{"status":{"containerStatuses":[{"ready":true,"state":{"running":[]}}]}}"#,
        r#"{"status":{"containerStatuses":[{"state":{"terminated":[0,"Done"]}}]}}"#,
        r#"{"status":{"containerStatuses":[{"state":{"terminated":{"exitCode":"1"}}}]}}"#,
        r#"{"status":{"containerStatuses":[{"state":{"waiting":{"reason":5}}}]}}"#,
        r#"{"status":{"containerStatuses":[{"state":{"waiting":{"reason":"Crash\u004coop"}}}]}}"#,
        r#"{"status":{"containerStatuses":[["ready",true]]}}"#,
        r#"{"status":{"containerStatuses":{"0":{"ready":true}}}}"#,
        r#"{"status":{"initContainerStatuses":[{"state":{"terminated":{"exitCode":0.0}}}]}}"#,
        r#"{"status":{"phase":"Running","phase":"Failed"}}"#,
        r#"{"status":{"phase":"Running"},"status":{"phase":"Failed"}}"#,
        r#"{"status":{"podIP":5,"phase":"Running"}}"#,
        r#"{"status":["Running"]}"#,
        r#"{"spec":{"containers":{"a":{}}},"status":{"containerStatuses":[{}]}}"#,
        r#"{"spec":{"nodeName":{"n":1}}}"#,
        r#"{"metadata":{"deletionTimestamp":0},"status":{"phase":"Running"}}"#,
        r#"{"metadata":{"labels":{"app":1,"tier":"fe"}}}"#,
        r#"{"metadata":{"labels":["app"]}}"#,
        r#"{"metadata":{"labels":{"a\"pp":"web"}}}"#,
        r#"{"metadata":{"labels":{"app":"web"},"labels":{"tier":"fe"}}}"#,
    ];
    for raw in pods {
        assert!(PodView::parse(raw).is_none(), "{raw}");
        assert!(!cells_agree(raw), "{raw}");
    }
}

#[test]
fn restart_counts_that_overflow_saturate() {
    let raw = r#"{"status":{"containerStatuses":[{"restartCount":9223372036854775807},{"restartCount":5}]}}"#;
    assert!(cells_agree(raw));
    let row = RowObject::parse(&pod_columns(), Some(raw));
    let restarts = pod_columns()
        .into_iter()
        .find(|c| c.header == "RESTARTS")
        .unwrap();
    assert_eq!(row.cell(&restarts, None, now()), i64::MAX.to_string());
}

#[test]
fn pod_view_reads_repeated_label_keys_as_a_value_map_does() {
    let raw = r#"{"metadata":{"labels":{"app":"web","tier":"fe","app":"db"}}}"#;
    assert!(cells_agree(raw));
    let p = PodView::parse(raw).unwrap();
    assert_eq!(p.labels().unwrap().0, [("app", "db"), ("tier", "fe")]);
}

/// Replaces some members and elements of `v` (and adds some pod keys) with values of
/// other JSON types.
fn corrupt(rng: &mut rand::rngs::SmallRng, v: &mut Value) {
    use rand::Rng;
    let others = [
        json!(null),
        json!(1),
        json!(0),
        json!(2.5),
        json!(0.0),
        json!("x"),
        json!(""),
        json!(true),
        json!(false),
        json!([]),
        json!([{}]),
        json!({}),
        json!({"a": 1}),
        json!(["a"]),
        json!("Completed"),
        json!("True"),
        json!("NodeLost"),
        json!("2026-11-21T10:00:00Z"),
    ];
    match v {
        Value::Object(m) => {
            for (_, x) in m.iter_mut() {
                if rng.random_bool(0.08) {
                    *x = others[rng.random_range(0..others.len())].clone();
                } else {
                    corrupt(rng, x);
                }
            }
            if rng.random_bool(0.05) {
                let keys = [
                    "ready",
                    "state",
                    "running",
                    "terminated",
                    "waiting",
                    "reason",
                    "exitCode",
                    "restartCount",
                    "phase",
                    "podIP",
                    "nodeName",
                    "labels",
                    "deletionTimestamp",
                    "containers",
                    "initContainers",
                    "conditions",
                    "readinessGates",
                    "conditionType",
                    "type",
                    "status",
                    "lastState",
                    "finishedAt",
                    "nominatedNodeName",
                    "metadata",
                    "spec",
                    "containerStatuses",
                    "initContainerStatuses",
                ];
                m.insert(
                    keys[rng.random_range(0..keys.len())].into(),
                    others[rng.random_range(0..others.len())].clone(),
                );
            }
        }
        Value::Array(a) => {
            for x in a.iter_mut() {
                if rng.random_bool(0.08) {
                    *x = others[rng.random_range(0..others.len())].clone();
                } else {
                    corrupt(rng, x);
                }
            }
        }
        _ => {}
    }
}

/// Pods with members of unexpected types: whether the typed parse takes them or the row
/// falls back to the [`Value`], the cells are those of the [`Value`].
#[test]
fn pod_cells_agree_on_members_of_other_types() {
    use rand::SeedableRng;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(11);
    let (mut typed, mut fallback) = (0, 0);
    for _ in 0..3000 {
        let mut v = random_pod(&mut rng);
        corrupt(&mut rng, &mut v);
        if cells_agree(&v.to_string()) {
            typed += 1;
        } else {
            fallback += 1;
        }
    }
    // Both paths are exercised.
    assert!(
        typed > 100 && fallback > 100,
        "{typed} typed, {fallback} fallback"
    );
}

/// The genuine captures have no node rows (their cluster had no node),
/// so printers.go `printNode`'s rules are pinned here: `Unknown` without a Ready
/// condition, the last Ready condition wins, roles sorted from both labels, `<unknown>`
/// node info and an empty VERSION.
#[test]
fn node_cells_follow_print_node() {
    let node = res("v1", "Node");
    let n = json!({"metadata": {"labels": {"node-role.kubernetes.io/worker": "",
            "node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "edge"}},
        "status": {"addresses": [{"type": "ExternalIP", "address": "203.0.113.1"}]}});
    assert_eq!(
        cells(&node, true, &n),
        [
            "Unknown",
            "control-plane,edge,worker",
            "<unknown>",
            "",
            "<none>",
            "203.0.113.1",
            "<unknown>",
            "<unknown>",
            "<unknown>"
        ]
    );
    let flapped = json!({"spec": {"unschedulable": true}, "status": {"conditions": [
        {"type": "Ready", "status": "True"}, {"type": "Ready", "status": "False"}]}});
    assert_eq!(
        cells(&node, false, &flapped)[0],
        "NotReady,SchedulingDisabled"
    );
}

/// [`PodView::read`] of `raw`: `None`, or what the typed parse gives (compared by their
/// debug forms), with managedFields' span as the object's metadata reading found it.
/// Whether it read a view.
fn read_agrees(raw: &str) -> bool {
    let span = crate::cache::object::Object::from_json(raw)
        .ok()
        .and_then(|o| o.managed_fields_span());
    let Some(read) = PodView::read(raw, span) else {
        return false;
    };
    let parsed = PodView::parse(raw);
    assert_eq!(
        Some(format!("{read:?}")),
        parsed.map(|p| format!("{p:?}")),
        "{raw}"
    );
    true
}

/// Every JSON object under crates/core/testdata (each line of a file of JSON lines, each
/// item of a list), compact and as written.
fn testdata_objects() -> Vec<String> {
    let mut out = Vec::new();
    for (_, doc) in crate::cache::testutil::testdata_json() {
        let v: Value = serde_json::from_str(&doc).unwrap();
        for item in v["items"].as_array().into_iter().flatten() {
            out.push(item.to_string());
        }
        out.push(v.to_string());
        out.push(doc);
    }
    out
}

/// Reading a pod's view from its bytes gives what the typed parse gives, or nothing (the
/// caller then parses): on random pods (all read), corrupted ones, the typed parse's
/// refusals, and every object of crates/core/testdata.
#[test]
fn reading_a_pod_from_its_bytes_gives_the_typed_parse() {
    use rand::SeedableRng;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
    for _ in 0..3000 {
        let raw = random_pod(&mut rng).to_string();
        assert!(read_agrees(&raw), "not read: {raw}");
    }
    let mut rng = rand::rngs::SmallRng::seed_from_u64(11);
    let mut read = 0;
    for _ in 0..3000 {
        let mut v = random_pod(&mut rng);
        corrupt(&mut rng, &mut v);
        read += usize::from(read_agrees(&v.to_string()));
    }
    assert!(read > 100, "{read} corrupted pods read");
    let objects = testdata_objects();
    assert!(objects.len() > 400, "{} objects", objects.len());
    let read = objects.iter().filter(|raw| read_agrees(raw)).count();
    assert!(
        read > 100,
        "{read} of {} testdata objects read",
        objects.len()
    );
    for raw in [
        r#"{"status":{"phase":"Running","phase":"Failed"}}"#,
        r#"{"metadata":{"labels":{"app":"web"},"labels":{"tier":"fe"}}}"#,
        r#"{"metadata":{"labels":{"app":"web","tier":"fe","app":"db"}}}"#,
        r#"{"status":{"containerStatuses":[{"restartCount":-0}]}}"#,
        r#"{"status":{"containerStatuses":[{"restartCount":-7}]}}"#,
        r#"{"spec":{"containers":[1,"a",{"b":[]}],"initContainers":[{"restartPolicy":"Always"},{}]}}"#,
        r#"{"spec":{"initContainers":[{"restartPolicy":null},{"restartPolicy":"Always","restartPolicy":"Never"}]}}"#,
    ] {
        read_agrees(raw);
    }
}

/// managedFields is jumped over by its span only where the span is that member's; a
/// member after it is still read, and nesting a recursive parser refuses is not read.
#[test]
fn reading_a_pod_jumps_over_managed_fields_by_their_span() {
    let raw = r#"{"metadata":{"name":"a", "managedFields" : [{"manager":"x","fieldsV1":{"f:a":{}}}],"labels":{"app":"web"}}}"#;
    let o = crate::cache::object::Object::from_json(raw).unwrap();
    let span = o.managed_fields_span().unwrap();
    assert!(read_agrees(raw));
    let p = PodView::read(raw, Some(span)).unwrap();
    assert_eq!(p.labels().unwrap().0, [("app", "web")]);
    // A span that is not the member's is not followed.
    for wrong in [
        (0, span.1),
        (span.0, span.1 - 1),
        (span.0 + 1, span.1),
        (span.0, raw.len()),
    ] {
        let p = PodView::read(raw, Some(wrong)).unwrap();
        assert_eq!(p.labels().unwrap().0, [("app", "web")], "{wrong:?}");
    }
    let deep = format!(
        r#"{{"spec":{{"containers":[{}{}]}}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    assert!(PodView::read(&deep, None).is_none());
}
