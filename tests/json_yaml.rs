//! `-o json` and `-o yaml` records: objects with their kind and apiVersion, YAML that a
//! YAML 1.1 reader reads back as the JSON values, `--diff`'s JSON patch and `changed`.

use serde_json::{json, Value};

use crate::util::kwatch::{kubectl_f, of_type};
use crate::util::shared::*;
use crate::util::{eventually, SimProcess, LIMIT};

/// kube-apiserver leaves `kind` and `apiVersion` out of a JSON list's items; client-go's
/// decoder (and kubectl) fill them in from the list's type, and so must kwatch, in
/// every format that shows objects.
#[test]
fn objects_from_a_plain_list_carry_kind_and_api_version() {
    let sim = SimProcess::start(&[]);
    let raw = sim.get("/api/v1/namespaces/default/configmaps").json();
    assert!(
        raw["items"][0].get("kind").is_none(),
        "the server sends items without kind, as kube-apiserver does: {raw}"
    );
    for (resource, kind, api_version) in [
        ("configmaps", "ConfigMap", "v1"),
        ("deployments.apps", "Deployment", "apps/v1"),
    ] {
        for list in [&["--watch-list", "off"][..], &["--page-size", "1"]] {
            let mut args = vec![resource, "-n", "default", "--until-synced"];
            args.extend_from_slice(list);
            let what = format!("{resource} {list:?}");

            let mut events = args.clone();
            events.extend(["-o", "watch-events"]);
            let out = sim.kwatch(&events[..]).exits(0);
            let objects: Vec<Value> = out
                .json()
                .into_iter()
                .map(|e| e["object"].clone())
                .collect();
            assert!(!objects.is_empty(), "{what}");
            for o in &objects {
                assert_eq!(
                    (&o["kind"], &o["apiVersion"]),
                    (&json!(kind), &json!(api_version)),
                    "{what}: {o}"
                );
            }

            let mut cols = args.clone();
            cols.extend([
                "-o",
                "custom-columns=KIND:.kind,API:.apiVersion",
                "--no-headers",
            ]);
            let out = sim.kwatch(&cols[..]).exits(0);
            for line in &out.stdout {
                let cells: Vec<&str> = line.split_whitespace().collect();
                assert_eq!(cells, [kind, api_version], "{what}: {line:?}");
            }

            let mut records = args.clone();
            records.extend(["-o", "json"]);
            let out = sim.kwatch(&records[..]);
            for r in out.json().iter().filter(|r| r["type"] == "Replaced") {
                assert_eq!(r["object"]["kind"], kind, "{what}: {r}");
                assert_eq!(r["object"]["apiVersion"], api_version, "{what}: {r}");
            }
        }
    }
}

/// PyYAML (a YAML 1.1 reader) reads `-o yaml` back as the values `-o json` gives.
#[test]
fn yaml_reads_back_in_a_yaml_1_1_reader_as_the_json_values() {
    let sim = SimProcess::start(&["--objects", "1"]);
    let data = json!({"a": "no", "b": "yes", "c": "on", "d": "12:30:00", "e": "2024-01-01",
        "f": "", "g": "*", "h": "multi\nline\n", "i": "1e3", "j": "0x1F", "k": "~",
        "l": "a\u{1b}[2Jb", "m": "y", "n": "off", "o": "012", "p": ".inf", "q": "null",
        "r": "- x", "s": "a: b", "t": " lead", "u": "tab\there", "v": "2024-01-01T10:00:00Z",
        "w": "190:20:30", "x": "1_000", "y": "größe", "z": "=", "on": "key too"});
    kubectl_f(
        &sim,
        "create",
        &json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "yn", "namespace": "default",
                             "labels": {"enabled": "true", "flag": "no"}},
                "data": data}),
    );
    let args = |format: &'static str| {
        [
            "configmaps",
            "yn",
            "-n",
            "default",
            "--until-synced",
            "-o",
            format,
        ]
    };
    let as_json = sim.kwatch(&args("json")[..]).exits(0);
    let as_yaml = sim.kwatch(&args("yaml")[..]).exits(0);
    let yaml_file = sim.dir().join("out.yaml");
    std::fs::write(&yaml_file, as_yaml.stdout.join("\n") + "\n").unwrap();
    let py = crate::util::tools::python3_with_yaml()
        .args([
            "-c",
            "import json, sys, yaml\n\
             docs = list(yaml.safe_load_all(open(sys.argv[1])))\n\
             print(json.dumps(docs, default=lambda o: 'NOT A STRING: %r' % (o,)))",
            yaml_file.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        py.status.success(),
        "{}",
        String::from_utf8_lossy(&py.stderr)
    );
    let from_yaml: Vec<Value> = serde_json::from_slice(&py.stdout).unwrap();
    let from_json = as_json.json();
    let object = |recs: &[Value]| of_type(recs, "Replaced")[0]["object"].clone();
    assert_eq!(object(&from_yaml), object(&from_json));
    assert_eq!(object(&from_yaml)["data"], data);
    // The records around the object too, but for their times (two runs).
    let types = |recs: &[Value]| -> Vec<Value> {
        recs.iter()
            .map(|r| {
                let mut r = r.clone();
                for f in ["time", "ms", "object"] {
                    r.as_object_mut().unwrap().remove(f);
                }
                r
            })
            .collect()
    };
    assert_eq!(types(&from_yaml), types(&from_json));
}

#[test]
fn diff_carries_a_json_patch_and_replaced_says_whether_it_changed() {
    let sim = SimProcess::start(&["--objects", "2"]);
    let mut kw = sim.start_kwatch("configmaps -n default -o json --diff");
    kw.wait_for(LIMIT, "Synced", |v| !of_type(v, "Synced").is_empty());
    create(&sim, demo_configmap("d", "v1"));
    patch_configmap(&sim, "d", "v2");
    let recs = kw.wait_for(LIMIT, "the update", |v| !of_type(v, "Updated").is_empty());
    let added = recs.iter().find(|r| r["type"] == "Added").unwrap();
    assert!(added.get("diff").is_none() && added.get("changed").is_none());
    let upd = of_type(&recs, "Updated")[0];
    assert_eq!(upd["changed"], true);
    assert_eq!(
        upd["diff"],
        json!([{"op": "replace", "path": "/data/k", "value": "v2"}]),
        "noise (resourceVersion) is left out"
    );

    // Relist with nothing new: each Replaced says changed: false with an empty patch.
    force_relist(&sim);
    let recs = kw.wait_for(LIMIT, "a relist", |v| {
        v.iter()
            .filter(|r| r["type"] == "Replaced" && r["initialList"] == false)
            .count()
            >= 3
    });
    for r in recs
        .iter()
        .filter(|r| r["type"] == "Replaced" && r["initialList"] == false)
    {
        assert_eq!(r["changed"], false, "{r}");
        assert_eq!(r["diff"], json!([]), "{r}");
    }
    drop(kw);

    // The table: `path: old → new` under the row; --diff-all keeps the noise.
    let before = watches_of(&sim, "configmaps");
    let kw = sim.start_kwatch("configmaps -n default --diff-all");
    await_watch(&sim, "configmaps", before);
    patch_configmap(&sim, "d", "v3");
    eventually(LIMIT, "the diff under the row", || match kw.lines() {
        l if l.iter().any(|l| l.starts_with("    .data.k")) => Ok(()),
        l => Err(l),
    });
    let lines = kw.lines();
    assert!(
        lines.contains(&r#"    .data.k: "v2" → "v3""#.to_owned()),
        "{lines:#?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("    .metadata.resourceVersion: ")),
        "{lines:#?}"
    );
}
