//! `--blame` against `kwatch sim` driven by the real kubectl: the simulator keeps
//! managedFields as kube-apiserver does (server-side apply, `kubectl patch`), kwatch names
//! the manager of each changed path, and a replay of the recording blames the same.

use serde_json::Value;

use crate::util::kwatch::{is_delta, kubectl_f, replay};
use crate::util::{SimProcess, LIMIT};

/// A deployment `shop` with one container `app`, as `kubectl apply -f` reads it.
fn manifest(replicas: u32, image: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: shop\n  namespace: default\n\
         spec:\n  replicas: {replicas}\n  selector:\n    matchLabels: {{app: shop}}\n  template:\n\
         \x20   metadata:\n      labels: {{app: shop}}\n    spec:\n      containers:\n\
         \x20     - name: app\n        image: {image}\n"
    )
}

fn apply(sim: &SimProcess, manager: &str, replicas: u32, image: &str, extra: &[&str]) {
    let file = sim.dir().join(format!("shop-{manager}-{replicas}.yaml"));
    std::fs::write(&file, manifest(replicas, image)).unwrap();
    let mut args = vec![
        "apply".to_owned(),
        "--server-side".into(),
        format!("--field-manager={manager}"),
        "-f".into(),
        file.to_string_lossy().into_owned(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    sim.kubectl_ok(args);
}

/// The `blame` of the Updated deltas of `shop` so far.
fn blames(lines: &[Value]) -> Vec<Value> {
    lines
        .iter()
        .filter(|r| r["type"] == "Updated" && r["name"] == "shop")
        .filter_map(|r| r.get("blame").cloned())
        .collect()
}

#[test]
fn blame_names_the_applier_and_kubectl_patch_and_replay_blames_the_same() {
    let sim = SimProcess::start(&[]);
    let (mut kw, rec) = sim.start_recording("rec.jsonl", "deploy -n default -o json --blame");
    kw.wait_for(LIMIT, "Synced", |l| l.iter().any(|r| r["type"] == "Synced"));
    apply(&sim, "x", 2, "nginx:1", &[]);
    kw.wait_for(LIMIT, "Added shop", |l| {
        l.iter()
            .any(|r| r["type"] == "Added" && r["name"] == "shop")
    });
    // The applier changes the replicas it owns.
    apply(&sim, "x", 3, "nginx:1", &[]);
    let l = kw.wait_for(LIMIT, "the apply's blame", |l| blames(l).len() == 1);
    assert_eq!(
        blames(&l)[0],
        serde_json::json!([{"path": ".spec.replicas", "manager": "x", "operation": "Apply",
            "time": blames(&l)[0][0]["time"]}])
    );
    // A strategic merge patch of one container's image: that field is kubectl-patch's,
    // found inside the containers list by the container's name.
    sim.kubectl_ok(
        r#"patch deploy shop -n default -p {"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:2"}]}}}}"#,
    );
    let l = kw.wait_for(LIMIT, "the patch's blame", |l| blames(l).len() == 2);
    let b = &blames(&l)[1];
    assert_eq!(b.as_array().map(Vec::len), Some(1), "{b}");
    assert_eq!(
        b[0]["path"],
        ".spec.template.spec.containers[name=app].image"
    );
    assert_eq!(b[0]["manager"], "kubectl-patch");
    assert_eq!(b[0]["operation"], "Update");
    // kubectl reads the simulator's managedFields: per field, as kube-apiserver keeps them.
    let yaml = sim.kubectl_ok("get deploy shop -n default -o yaml --show-managed-fields");
    let doc: Value = serde_yaml::from_str(&yaml).unwrap();
    let entries = doc["metadata"]["managedFields"].as_array().unwrap();
    let by = |m: &str| entries.iter().find(|e| e["manager"] == m).unwrap().clone();
    let container = r#"k:{"name":"app"}"#;
    let x = &by("x")["fieldsV1"]["f:spec"];
    assert_eq!(by("x")["operation"], "Apply");
    assert!(x.get("f:replicas").is_some(), "{x}");
    assert!(x["f:template"]["f:spec"]["f:containers"][container]["f:image"].is_null());
    let p = &by("kubectl-patch")["fieldsV1"]["f:spec"];
    assert_eq!(
        p["f:template"]["f:spec"]["f:containers"][container],
        serde_json::json!({"f:image": {}})
    );
    let live = kw.interrupt(LIMIT).exits(130);
    // Replayed from the recording, the records (blame included) come back byte for byte.
    let replayed = replay(sim.dir(), &rec, ["-o", "json", "--blame"]).success();
    let deltas = |lines: &[String]| -> Vec<String> {
        lines
            .iter()
            .filter(|l| serde_json::from_str::<Value>(l).is_ok_and(|v| is_delta(&v)))
            .cloned()
            .collect()
    };
    let live_deltas = deltas(&live.stdout);
    assert!(
        live_deltas
            .iter()
            .filter(|l| l.contains("\"blame\""))
            .count()
            == 2
    );
    assert_eq!(deltas(&replayed.stdout), live_deltas);
}

#[test]
fn a_conflicting_apply_is_refused_unless_forced() {
    let sim = SimProcess::start(&[]);
    apply(&sim, "a", 2, "nginx:1", &[]);
    let file = sim.dir().join("b.yaml");
    std::fs::write(&file, manifest(4, "nginx:1")).unwrap();
    let f = file.to_string_lossy().into_owned();
    let out = sim.kubectl(["apply", "--server-side", "--field-manager=b", "-f", &f]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(r#"Apply failed with 1 conflict: conflict with "a": .spec.replicas"#),
        "{err}"
    );
    apply(&sim, "b", 4, "nginx:1", &["--force-conflicts"]);
    let json: Value = serde_json::from_str(
        &sim.kubectl_ok("get deploy shop -n default -o json --show-managed-fields"),
    )
    .unwrap();
    assert_eq!(json["spec"]["replicas"], 4);
    let owners: Vec<&str> = json["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["fieldsV1"]["f:spec"].get("f:replicas").is_some())
        .filter_map(|e| e["manager"].as_str())
        .collect();
    assert_eq!(owners, ["b"]);
}

#[test]
fn two_managers_flipping_replicas_give_exactly_one_conflict() {
    let sim = SimProcess::start(&[]);
    apply(&sim, "x", 1, "nginx:1", &[]);
    let (mut kw, rec) =
        sim.start_recording("rec.jsonl", "deploy -n default -o json --blame --stats");
    // The same changes recorded without --blame: its replay with --blame finds the fight.
    let (mut plain, plain_rec) = sim.start_recording("plain.jsonl", "deploy -n default -o json");
    for kw in [&mut kw, &mut plain] {
        kw.wait_for(LIMIT, "Synced", |l| l.iter().any(|r| r["type"] == "Synced"));
    }
    // a, b, a: a conflict; b, a again within the window: still the one.
    for (i, manager) in ["a", "b", "a", "b", "a"].iter().enumerate() {
        let replicas = 2 + i % 2;
        sim.kubectl_ok(format!(
            r#"patch deploy shop -n default --type merge --field-manager={manager} -p {{"spec":{{"replicas":{replicas}}}}}"#
        ));
        kw.wait_for(LIMIT, "the patch's Updated", |l| blames(l).len() == i + 1);
    }
    plain.wait_for(LIMIT, "the five patches' Updated", |l| {
        l.iter()
            .filter(|r| r["type"] == "Updated" && r["name"] == "shop")
            .count()
            == 5
    });
    plain.interrupt(LIMIT).exits(130);
    let live = kw.interrupt(LIMIT).exits(130);
    let records = live.json();
    assert!(!records.is_empty());
    let conflicts: Vec<&Value> = records.iter().filter(|r| r["type"] == "Conflict").collect();
    assert_eq!(conflicts.len(), 1, "{:#?}", live.stdout);
    let c = conflicts[0];
    assert_eq!(c["resource"], "deployments.apps");
    assert_eq!(c["key"], "default/shop");
    assert_eq!(c["path"], ".spec.replicas");
    assert_eq!(c["managers"], serde_json::json!(["a", "b"]));
    assert_eq!(c["flips"], 3);
    assert!(live.stderr.contains("  conflicts: 1"), "{}", live.stderr);
    // The recording carries it; replay gives it back as it was.
    let replayed = replay(sim.dir(), &rec, ["-o", "json"]).success();
    let line = |lines: &[String]| -> Vec<String> {
        lines
            .iter()
            .filter(|l| l.contains(r#""type":"Conflict""#))
            .cloned()
            .collect()
    };
    assert_eq!(line(&replayed.stdout), line(&live.stdout));
    // Replayed with --blame, the fight is found in the deltas as the watch found it: the
    // same one Conflict (at its delta's time), from either recording.
    let without_time = |lines: &[String]| -> Vec<Value> {
        line(lines)
            .iter()
            .map(|l| {
                let mut v: Value = serde_json::from_str(l).unwrap();
                v.as_object_mut().unwrap().remove("time");
                v
            })
            .collect()
    };
    for file in [&rec, &plain_rec] {
        let blamed = replay(sim.dir(), file, ["-o", "json", "--blame", "--stats"]).success();
        assert_eq!(
            without_time(&blamed.stdout),
            without_time(&live.stdout),
            "{}: {:#?}",
            file.display(),
            blamed.stdout
        );
        assert!(
            blamed.stderr.contains("  conflicts: 1"),
            "{}",
            blamed.stderr
        );
    }
    // And the table says it on a `~` line.
    let table = replay(sim.dir(), &rec, "").success();
    assert!(
        table.stderr.contains(
            "~ conflict on deployments.apps default/shop .spec.replicas: a and b changed it back and forth 3 times within 60s"
        ),
        "{}",
        table.stderr
    );
}

/// kube-controller-manager reordering a Deployment's conditions while it
/// changes Progressing's reason. Compared by key, Available did not change and no
/// condition's `type` did: the reorder is one line, the reason the only change, blamed on
/// the controller.
#[test]
fn a_reorder_of_conditions_is_one_line_and_no_type_changes() {
    let sim = SimProcess::start(&[]);
    apply(&sim, "x", 1, "nginx:1", &[]);
    let (mut kw, rec) = sim.start_recording("rec.jsonl", "deploy -n default -o json --blame");
    kw.wait_for(LIMIT, "Synced", |l| l.iter().any(|r| r["type"] == "Synced"));
    let progressing =
        |reason: &str| format!(r#"{{"type":"Progressing","status":"True","reason":"{reason}"}}"#);
    let available = r#"{"type":"Available","status":"True","reason":"MinimumReplicasAvailable"}"#;
    for (i, conditions) in [
        format!("[{},{available}]", progressing("NewReplicaSetCreated")),
        format!("[{available},{}]", progressing("NewReplicaSetAvailable")),
    ]
    .iter()
    .enumerate()
    {
        sim.kubectl_ok(format!(
            r#"patch deploy shop -n default --subresource=status --type merge --field-manager=kube-controller-manager -p {{"status":{{"conditions":{conditions}}}}}"#
        ));
        kw.wait_for(LIMIT, "the status patch's Updated", |l| {
            blames(l).len() == i + 1
        });
    }
    let live = kw.interrupt(LIMIT).exits(130);
    let b = blames(&live.json())[1].clone();
    let paths: Vec<&str> = b
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|x| x["path"].as_str())
        .collect();
    assert_eq!(
        paths,
        [
            ".status.conditions",
            ".status.conditions[type=Progressing].reason"
        ],
        "{b}"
    );
    assert_eq!(b[1]["manager"], "kube-controller-manager", "{b}");
    assert_eq!(b[1]["subresource"], "status", "{b}");
    // The table's --diff says the same.
    let table = replay(sim.dir(), &rec, ["--diff"]).success();
    let out = table.stdout.join("\n");
    assert!(out.contains("    .status.conditions: reordered\n"), "{out}");
    assert!(
        out.contains(
            r#"    .status.conditions[type=Progressing].reason: "NewReplicaSetCreated" → "NewReplicaSetAvailable""#
        ),
        "{out}"
    );
    assert!(!out.contains(".type:"), "{out}");
    assert!(!out.contains("[type=Available]"), "{out}");
}

/// Three managers each changing the image once, in turn, fought nobody:
/// no manager came back to the path another changed after it.
#[test]
fn three_managers_changing_an_image_once_each_are_no_conflict() {
    let sim = SimProcess::start(&[]);
    apply(&sim, "x", 1, "nginx:1", &[]);
    let mut kw = sim.start_kwatch([
        "deploy", "-n", "default", "-o", "json", "--blame", "--stats",
    ]);
    kw.wait_for(LIMIT, "Synced", |l| l.iter().any(|r| r["type"] == "Synced"));
    sim.kubectl_ok(
        r#"patch deploy shop -n default -p {"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:2"}]}}}}"#,
    );
    kw.wait_for(LIMIT, "the patch's Updated", |l| blames(l).len() == 1);
    sim.kubectl_ok("set image deploy/shop -n default app=nginx:3");
    kw.wait_for(LIMIT, "set image's Updated", |l| blames(l).len() == 2);
    let mut v: Value =
        serde_json::from_str(&sim.kubectl_ok("get deploy shop -n default -o json")).unwrap();
    v["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:4".into();
    kubectl_f(&sim, "replace", &v);
    let l = kw.wait_for(LIMIT, "the replace's Updated", |l| blames(l).len() == 3);
    let managers: Vec<Value> = blames(&l).iter().map(|b| b[0]["manager"].clone()).collect();
    assert_eq!(
        managers,
        ["kubectl-patch", "kubectl-set", "kubectl-replace"],
        "{:#?}",
        blames(&l)
    );
    let live = kw.interrupt(LIMIT).exits(130);
    let conflicts = live
        .json()
        .into_iter()
        .filter(|r| r["type"] == "Conflict")
        .count();
    assert_eq!(conflicts, 0, "{:#?}", live.stdout);
    assert!(live.stderr.contains("  conflicts: 0"), "{}", live.stderr);
}

/// --blame reads the managedFields `--transform strip-managed-fields` drops; together
/// every path would be `unowned`, silently. Refused as clap refuses a pair.
#[test]
fn blame_with_managed_fields_stripped_is_refused_in_clap_words() {
    let sim = SimProcess::start(&[]);
    let out = sim
        .kwatch(["deploy", "--transform", "strip-managed-fields", "--blame"])
        .exits(2);
    assert_eq!(
        out.stderr.trim_end(),
        "error: the argument '--transform strip-managed-fields' cannot be used with '--blame'; \
         --blame names managers from the managedFields that transform drops; see 'kwatch --help'"
    );
    assert!(out.stdout.is_empty());
}

/// `--record` keeps managedFields whatever is printed, so a recording
/// made without --blame blames as the watch would; a recording whose objects carry none
/// says so in one `~` line instead of blaming everything on nobody.
#[test]
fn a_recording_keeps_managed_fields_and_replay_says_when_it_has_none() {
    let sim = SimProcess::start(&[]);
    apply(&sim, "x", 1, "nginx:1", &[]);
    let (mut plain, kept) = sim.start_recording("kept.jsonl", "deploy -n default -o json");
    let (mut bare, stripped) = sim.start_recording(
        "stripped.jsonl",
        "deploy -n default -o json --transform strip-managed-fields",
    );
    let updated = |l: &[Value]| {
        l.iter()
            .any(|r| r["type"] == "Updated" && r["name"] == "shop")
    };
    for kw in [&mut plain, &mut bare] {
        kw.wait_for(LIMIT, "Synced", |l| l.iter().any(|r| r["type"] == "Synced"));
    }
    sim.kubectl_ok(r#"patch deploy shop -n default -p {"spec":{"replicas":2}}"#);
    for kw in [&mut plain, &mut bare] {
        kw.wait_for(LIMIT, "the patch's Updated", updated);
    }
    plain.interrupt(LIMIT).exits(130);
    bare.interrupt(LIMIT).exits(130);
    let replay = |file: &std::path::Path| replay(sim.dir(), file, "-o json --blame").success();
    let out = replay(&kept);
    assert_eq!(
        blames(&out.json()),
        [
            serde_json::json!([{"path": ".spec.replicas", "manager": "kubectl-patch",
            "operation": "Update", "time": blames(&out.json())[0][0]["time"]}])
        ]
    );
    assert!(!out.stderr.contains("managedFields"), "{}", out.stderr);
    let out = replay(&stripped);
    assert_eq!(
        out.stderr
            .lines()
            .filter(|l| l.starts_with("~ "))
            .collect::<Vec<_>>(),
        ["~ this recording's objects carry no managedFields: --blame cannot name managers"],
        "{}",
        out.stderr
    );
}
