//! The real kubectl (/usr/bin/kubectl, v1.32) against `kwatch sim` over HTTPS, through the
//! kubeconfig the simulator writes (CA data and bearer token).

use std::process::Stdio;

use serde_json::Value;

use crate::util::{eventually, SimProcess, LIMIT};

#[test]
fn kubectl_gets_pods_in_all_namespaces() {
    let sim = SimProcess::start(&["--objects", "7"]);
    let out = sim.kubectl_ok("get pods -A");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("NAMESPACE"), "{out}");
    for col in ["NAME", "READY", "STATUS", "RESTARTS", "AGE"] {
        assert!(
            lines[0].contains(col),
            "server-side printing columns: {out}"
        );
    }
    assert_eq!(lines.len(), 1 + 7, "{out}");
    assert!(
        lines[1..]
            .iter()
            .all(|l| l.contains("Running") && l.contains("2/2")),
        "{out}"
    );
    assert!(out.contains("team-a") && out.contains("default"));
}

#[test]
fn kubectl_pages_with_continue_tokens() {
    let sim = SimProcess::start(&["--objects", "7"]);
    let out = sim.kubectl("get pods -A --chunk-size=2 -v=6");
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let gets: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("GET") && l.contains("/api/v1/pods?"))
        .collect();
    assert_eq!(gets.len(), 4, "7 pods in pages of 2: {stderr}");
    assert!(gets[0].contains("limit=2") && !gets[0].contains("continue="));
    assert!(
        gets[1..]
            .iter()
            .all(|l| l.contains("continue=") && l.contains("200 OK")),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout.lines().filter(|l| l.contains("Running")).count(),
        7,
        "{stdout}"
    );
}

#[test]
fn kubectl_creates_patches_and_deletes() {
    let sim = SimProcess::start(&[]);
    let file = sim.dir().join("cm.yaml");
    std::fs::write(
        &file,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-file\n  labels:\n    app: kubectl\ndata:\n  k: v\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    // Default validation (strict) works: the simulator serves the OpenAPI v3 it needs.
    assert!(sim
        .kubectl_ok(format!("create -f {f}"))
        .contains("configmap/from-file created"));
    let dup = sim.kubectl(format!("create -f {f}"));
    assert!(!dup.status.success());
    assert!(String::from_utf8_lossy(&dup.stderr).contains("AlreadyExists"));
    assert!(sim
        .kubectl_ok([
            "patch",
            "configmap",
            "from-file",
            "--type",
            "merge",
            "-p",
            r#"{"data":{"k":"patched"}}"#
        ])
        .contains("patched"));
    let json: Value =
        serde_json::from_str(&sim.kubectl_ok("get configmap from-file -o json")).unwrap();
    assert_eq!(json["data"]["k"], "patched");
    assert_eq!(json["metadata"]["labels"]["app"], "kubectl");
    let state = sim.state();
    assert_eq!(
        state["objects"]["configmaps"]["default/from-file"],
        json["metadata"]["resourceVersion"]
    );
    assert!(sim
        .kubectl_ok("delete configmap from-file")
        .contains("deleted"));
    let gone = sim.kubectl("get configmap from-file");
    assert!(String::from_utf8_lossy(&gone.stderr).contains("NotFound"));
    // A pod delete returns the pod; kubectl waits for it to be gone.
    let first = first_pod(&sim, "get pods -n team-a -o name");
    assert!(sim
        .kubectl_ok(format!("delete pod -n team-a {first}"))
        .contains("deleted"));
    assert!(sim.state()["objects"]["pods"]
        .get(format!("team-a/{first}"))
        .is_none());
}

#[test]
fn kubectl_applies_client_and_server_side() {
    let sim = SimProcess::start(&[]);
    let file = sim.dir().join("w.yaml");
    let write = |size: u32| {
        let y = format!("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w5\nspec:\n  size: {size}\n");
        std::fs::write(&file, y).unwrap();
    };
    let f = file.to_str().unwrap();
    write(7);
    assert!(sim.kubectl_ok(format!("apply -f {f}")).contains("created"));
    assert!(sim
        .kubectl_ok(format!("apply -f {f}"))
        .contains("unchanged"));
    write(8);
    assert!(sim
        .kubectl_ok(format!("apply -f {f}"))
        .contains("configured"));
    write(9);
    assert!(sim
        .kubectl_ok(format!("apply --server-side -f {f}"))
        .contains("serverside-applied"));
    let w: Value = serde_json::from_str(&sim.kubectl_ok("get wd w5 -o json")).unwrap();
    assert_eq!(w["spec"]["size"], 9);
    assert_eq!(
        w["metadata"]["generation"], 3,
        "every spec change bumps the generation"
    );
}

#[test]
fn kubectl_logs_and_describe_work() {
    let sim = SimProcess::start(&["--objects", "2"]);
    let pod = first_pod(&sim, "get pods -o name");
    let logs = sim.kubectl_ok(format!("logs {pod} -c web"));
    assert_eq!(logs.lines().count(), 4, "{logs}");
    assert!(logs.contains("ready to serve requests"));
    let bad = sim.kubectl(format!("logs {pod} -c nope"));
    assert!(!bad.status.success());
    let d = sim.kubectl_ok("describe deployment web");
    assert!(
        d.contains("ScalingReplicaSet"),
        "events of the deployment: {d}"
    );
}

#[test]
fn kubectl_gets_widgets_with_printer_columns() {
    let sim = SimProcess::start(&[]);
    let out = sim.kubectl_ok(["get", "widgets"]);
    let lines: Vec<&str> = out.lines().collect();
    let header: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(header, ["NAME", "SIZE", "PHASE", "AGE"]);
    let w1: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(&w1[..3], ["w1", "3", "Ready"]);
    assert!(sim
        .kubectl_ok("get wd w2 -o name")
        .contains("widget.example.com/w2"));
    let crd = sim.kubectl_ok("get crd widgets.example.com -o json");
    let crd: Value = serde_json::from_str(&crd).unwrap();
    assert_eq!(
        crd["spec"]["versions"][0]["additionalPrinterColumns"][0]["name"],
        "Size"
    );
}

#[test]
fn kubectl_watch_sees_churn_events() {
    let sim = SimProcess::start(&["--scenario", "steady", "--churn", "40", "--objects", "10"]);
    let mut child = sim
        .kubectl_cmd("get pods -A -w --output-watch-events -o json")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    // Each event's (type, kind) as kubectl prints it: JSON documents one after another.
    let events = std::sync::Arc::new(std::sync::Mutex::new(Vec::<(String, String)>::new()));
    let sink = events.clone();
    std::thread::spawn(move || {
        let de = serde_json::Deserializer::from_reader(stdout).into_iter::<Value>();
        for ev in de {
            let ev = match ev {
                Ok(ev) => ev,
                // Ends with kubectl: killed, perhaps while writing an event.
                Err(e) if e.is_eof() || e.is_io() => break,
                Err(e) => {
                    let what = format!("kubectl printed non-JSON: {e}");
                    sink.lock().unwrap().push((what, String::new()));
                    break;
                }
            };
            let s = |v: &Value| v.as_str().unwrap_or_default().to_owned();
            sink.lock()
                .unwrap()
                .push((s(&ev["type"]), s(&ev["object"]["kind"])));
        }
    });
    let count = || {
        let mut types = std::collections::BTreeMap::new();
        for (t, kind) in events.lock().unwrap().iter() {
            assert_eq!(kind, "Pod", "{t}");
            *types.entry(t.clone()).or_insert(0) += 1;
        }
        types
    };
    // Until all three event types were printed, then stop kubectl.
    eventually(LIMIT, "ADDED, MODIFIED and DELETED events", || {
        let types = count();
        if types.len() >= 3 {
            Ok(())
        } else {
            Err(types)
        }
    });
    let _ = child.kill();
    let _ = child.wait();
    let types = count();
    for t in ["ADDED", "MODIFIED", "DELETED"] {
        assert!(
            types.get(t).copied().unwrap_or(0) > 0,
            "no {t} in {types:?}"
        );
    }
    assert!(
        types["ADDED"] >= 10,
        "the initial pods are ADDED: {types:?}"
    );
}

#[test]
fn kubectl_works_over_plain_http_without_a_token() {
    let sim = SimProcess::start(&["--insecure-http", "--objects", "3"]);
    assert!(sim.url.starts_with("http://127.0.0.1:"));
    let out = sim.kubectl_ok("get pods -A --no-headers");
    assert_eq!(out.lines().count(), 3, "{out}");
}

#[test]
fn sim_stops_cleanly_on_sigterm_and_tells_how_to_use_it() {
    let sim = SimProcess::start(&[]);
    let kubeconfig = sim.kubeconfig.display().to_string();
    // A watch is open while it stops.
    let _w = sim.watch("/api/v1/pods?watch=1&resourceVersion=0");
    let (status, stderr) = sim.terminate();
    assert!(status.success(), "{status:?}\n{stderr}");
    let first = stderr.lines().next().unwrap();
    assert!(
        first.starts_with("kwatch sim: listening on https://127.0.0.1:"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("export KUBECONFIG={kubeconfig}")),
        "{stderr}"
    );
    assert!(
        stderr.contains("kubectl get pods -A") && stderr.contains("kwatch pods -A"),
        "{stderr}"
    );
    assert!(stderr.contains("shutting down"), "{stderr}");
}

/// The first pod `kubectl GET_ARGS` names (`GET_ARGS` ends in `-o name`), without `pod/`.
fn first_pod(sim: &SimProcess, get_args: &str) -> String {
    let pods = sim.kubectl_ok(get_args);
    let first = pods.lines().next().expect("a pod");
    first.trim_start_matches("pod/").to_string()
}

/// kubectl's typed `create` subcommands and `auth can-i` send protobuf (`Content-Type:
/// application/vnd.kubernetes.protobuf`): their objects arrive as kubectl made them. A kind
/// the simulator's table does not have (a custom resource) is kube-apiserver's 415, and a
/// body that is not protobuf its 400, in their words; a DELETE's DeleteOptions in protobuf
/// are read.
#[test]
fn kubectl_create_subcommands_send_protobuf_and_their_objects_arrive() {
    let sim = SimProcess::start(&[]);
    let out =
        sim.kubectl("create configmap app --from-literal=a=1 --from-literal=b=two -n default -v=8");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("Content-Type: application/vnd.kubernetes.protobuf"),
        "kubectl sent protobuf: {stderr}"
    );
    let get = |what: &str| -> Value {
        serde_json::from_str(&sim.kubectl_ok(format!("get {what} -o json"))).expect("JSON")
    };
    let cm = get("configmap app -n default");
    assert_eq!(
        cm["data"],
        serde_json::json!({"a": "1", "b": "two"}),
        "{cm}"
    );
    sim.kubectl_ok("create secret generic s --from-literal=k=v -n default");
    let s = get("secret s -n default");
    assert_eq!(
        (&s["data"]["k"], &s["type"]),
        (&"dg==".into(), &"Opaque".into()),
        "{s}"
    );
    sim.kubectl_ok("create namespace team-z");
    assert_eq!(get("namespace team-z")["metadata"]["name"], "team-z");
    sim.kubectl_ok("create serviceaccount bot -n default");
    assert_eq!(
        get("serviceaccount bot -n default")["metadata"]["namespace"],
        "default"
    );
    // `kubectl auth can-i` sends its SelfSubjectAccessReview in protobuf too.
    assert_eq!(
        sim.kubectl_ok("auth can-i list pods -n default").trim(),
        "yes"
    );
    let widgets = "/apis/example.com/v1/namespaces/default/widgets";
    // `k8s\0` + runtime.Unknown{typeMeta{apiVersion: example.com/v1, kind: Widget}}.
    let widget = "k8s\0\x0a\x18\x0a\x0eexample.com/v1\x12\x06Widget\x12\x00";
    let r = sim.request("POST", widgets, Some(PROTOBUF), widget);
    assert_eq!(r.status, 415, "{}", r.body);
    assert_eq!(
        r.json()["message"],
        "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml"
    );
    let r = sim.request(
        "POST",
        "/api/v1/namespaces/default/configmaps",
        Some(PROTOBUF),
        "{}",
    );
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        r.json()["message"],
        "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"
    );
    // A DELETE's DeleteOptions in protobuf, as a typed client (`kubectl drain`) sends them,
    // are read: `preconditions: {uid: nope}` does not match.
    let options = "k8s\0\x0a\x13\x0a\x02v1\x12\x0dDeleteOptions\x12\x08\x12\x06\x0a\x04nope";
    let r = sim.request(
        "DELETE",
        "/api/v1/namespaces/default/configmaps/app",
        Some(PROTOBUF),
        options,
    );
    assert_eq!(r.status, 409, "{}", r.body);
    let message = r.json()["message"].as_str().unwrap_or_default().to_string();
    assert!(message.contains("UID in precondition: nope"), "{message}");
    get("configmap app -n default");
}

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// `v` without what the server sets: metadata's uid, resourceVersion, creationTimestamp,
/// generation, managedFields and annotations (a Deployment's revision), and the status.
fn as_sent(mut v: Value) -> Value {
    if let Some(meta) = v["metadata"].as_object_mut() {
        for server_set in [
            "uid",
            "resourceVersion",
            "creationTimestamp",
            "generation",
            "managedFields",
            "annotations",
        ] {
            meta.remove(server_set);
        }
    }
    if let Some(object) = v.as_object_mut() {
        object.remove("status");
    }
    v
}

/// `kubectl create deployment` and `create job` send their objects in protobuf: the
/// simulator stores what `--dry-run=client -o json` says kubectl sent, and with the
/// controllers the Deployment rolls out its 3 ready pods and the Job completes.
#[test]
fn kubectl_creates_deployments_and_jobs_in_protobuf() {
    let sim = SimProcess::start(&["--controllers"]);
    sim.kubectl_ok("create namespace demo");
    // (the command, its container's command after `--`, what it creates)
    for (create, command, kind) in [
        (
            "create deployment web --image=nginx --replicas=3 -n demo",
            "",
            "deployment/web",
        ),
        (
            "create job hello --image=busybox -n demo",
            "-- echo hi",
            "job/hello",
        ),
    ] {
        let sent: Value = serde_json::from_str(
            &sim.kubectl_ok(format!("{create} --dry-run=client -o json {command}")),
        )
        .expect("kubectl's JSON");
        assert!(sent["spec"].is_object(), "{sent}");
        let out = sim.kubectl(format!("{create} -o json -v=8 {command}"));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(
            stderr.contains(&format!("Content-Type: {PROTOBUF}")),
            "kubectl sent protobuf: {stderr}"
        );
        let created: Value = serde_json::from_slice(&out.stdout).expect("the server's JSON");
        assert_eq!(as_sent(created), as_sent(sent.clone()), "{kind}");
        let stored: Value =
            serde_json::from_str(&sim.kubectl_ok(format!("get {kind} -n demo -o json")))
                .expect("kubectl's JSON");
        assert_eq!(stored["spec"], sent["spec"], "{kind}");
    }
    sim.kubectl_ok("rollout status deployment/web -n demo --timeout=60s");
    let web: Value = serde_json::from_str(&sim.kubectl_ok("get deployment web -n demo -o json"))
        .expect("kubectl's JSON");
    assert_eq!(web["status"]["readyReplicas"], 3, "{web}");
    sim.kubectl_ok("wait --for=condition=Complete job/hello -n demo --timeout=60s");
}
