//! Several `--context`s in one stream: every record and script line names its context, each
//! context gets its own server's client-go release, a context named twice is watched once.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use crate::util::kubeconfig::{fleet_kubeconfig, Entry};
use crate::util::kwatch::is_delta;
use crate::util::kwatch::kwatch_using;
use crate::util::kwatch::of_type;
use crate::util::kwatch::Finished;
use crate::util::shared::*;
use crate::util::SimProcess;

/// A kubeconfig with the simulator's context and a second one, `second`, for the same
/// cluster; returns its path and the first context's name.
fn two_contexts(sim: &SimProcess) -> (std::path::PathBuf, String) {
    let text = std::fs::read_to_string(&sim.kubeconfig).unwrap();
    let mut kc: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    let ctx = kc["contexts"][0].clone();
    let first = ctx["name"].as_str().unwrap().to_owned();
    let mut second = ctx.clone();
    second["name"] = "second".into();
    kc["contexts"].as_sequence_mut().unwrap().push(second);
    let path = sim.dir().join("two-contexts");
    std::fs::write(&path, serde_yaml::to_string(&kc).unwrap()).unwrap();
    (path, first)
}

/// `kwatch configmaps -n default --until-synced --context CONTEXTS EXTRA…` with the
/// kubeconfig at `path`, run to its end.
fn kwatch_contexts(sim: &SimProcess, path: &Path, contexts: &str, extra: &[&str]) -> Finished {
    let mut args = vec![
        "configmaps",
        "-n",
        "default",
        "--until-synced",
        "--context",
        contexts,
    ];
    args.extend_from_slice(extra);
    kwatch_using(sim.dir(), path, args)
}

#[test]
fn several_contexts_share_one_stream_each_record_tagged() {
    let sim = SimProcess::start(&["--objects", "2"]);
    let (path, first) = two_contexts(&sim);

    let out = kwatch_contexts(&sim, &path, &format!("{first},second"), &["-o", "json"]);
    assert_eq!(out.code(), Some(0), "{}", out.stderr);
    let recs = out.json();
    let names = live_names(&sim, "configmaps", "default");
    for c in [first.as_str(), "second"] {
        let mine: BTreeSet<String> = recs
            .iter()
            .filter(|r| is_delta(r) && r["context"] == c)
            .map(|r| r["name"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(mine, names, "context {c}");
        assert_eq!(
            recs.iter()
                .filter(|r| r["type"] == "Synced" && r["context"] == c)
                .count(),
            1
        );
    }
    assert!(
        recs.iter().all(|r| r.get("context").is_some()),
        "every record is tagged"
    );

    // The table gets a CONTEXT column; an unknown context is an error.
    let out = kwatch_using(
        sim.dir(),
        &path,
        "configmaps -n default --until-synced --context second,nope",
    );
    assert_eq!(out.code(), Some(1));
    assert!(out.stderr.contains("nope"), "{}", out.stderr);
    let out = kwatch_contexts(&sim, &path, &format!("second,{first}"), &[]);
    let header = out.stdout.iter().find(|l| l.starts_with("DELTA")).unwrap();
    assert_eq!(cells(header)[1], "CONTEXT");
}

#[test]
fn with_several_contexts_every_script_line_names_its_context() {
    let sim = SimProcess::start(&["--objects", "2"]);
    let (path, first) = two_contexts(&sim);
    let contexts = format!("{first},second");
    let kw = |format: &str| {
        let out = kwatch_contexts(&sim, &path, &contexts, &["-o", format]);
        assert_eq!(out.code(), Some(0), "{format}: {}", out.stderr);
        out.stdout
    };
    let names: BTreeSet<String> = sim
        .kubectl_ok("get configmaps -n default -o name")
        .lines()
        .map(str::to_owned)
        .collect();
    let want = |sep: &str| -> BTreeSet<String> {
        [first.as_str(), "second"]
            .iter()
            .flat_map(|c| names.iter().map(move |n| format!("{c}{sep}{n}")))
            .collect()
    };
    let by_name: BTreeSet<String> = kw("name").into_iter().collect();
    assert_eq!(by_name, want("/"));

    let table = kw("custom-columns=NAME:.metadata.name");
    let header: Vec<&str> = table[0].split_whitespace().collect();
    assert_eq!(header, ["CONTEXT", "NAME"]);
    let got: BTreeSet<String> = table[1..]
        .iter()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    let want_rows: BTreeSet<String> = want(" ")
        .into_iter()
        .map(|r| r.replace("configmap/", ""))
        .collect();
    assert_eq!(got, want_rows);

    let events: Vec<Value> = kw("watch-events")
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let got: BTreeSet<String> = events
        .iter()
        .map(|e| {
            format!(
                "{}/configmap/{}",
                e["context"].as_str().unwrap_or("<none>"),
                e["object"]["metadata"]["name"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(got, want("/"));
    assert!(events.iter().all(|e| e["type"] == "ADDED"));
}

/// With `--context a,b` each cluster gets its own server's release.
#[test]
fn each_context_gets_its_own_servers_release() {
    let old = SimProcess::start(&[]);
    let new = SimProcess::start(&["--server-version", "1.36"]);
    let path = fleet_kubeconfig(
        &[("old", Entry::Live(&old)), ("new", Entry::Live(&new))],
        old.dir(),
    );
    let out = kwatch_using(
        old.dir(),
        &path,
        "configmaps -n default -o json --until-synced --context old,new",
    );
    assert_eq!(out.code(), Some(0), "{}", out.stderr);
    assert!(!out.stdout.is_empty(), "{}", out.stderr);
    let recs = out.json();
    for (ctx, want) in [
        ("old", ("0.32", "DeltaFIFO", false)),
        ("new", ("0.36", "RealFIFO+batch+atomic", true)),
    ] {
        let mine: Vec<Value> = recs
            .iter()
            .filter(|r| r["context"] == ctx)
            .cloned()
            .collect();
        assert_eq!(
            informer(&mine),
            (want.0.into(), want.1.into(), want.2),
            "context {ctx}"
        );
    }
    assert!(!streamed(&old));
    assert!(streamed(&new));
}

/// `--context a,a` watches the cluster once.
#[test]
fn a_context_named_twice_is_watched_once() {
    let sim = SimProcess::start(&[]);
    let ctx = "kwatch-sim";
    let recs = synced_configmaps(&sim, &["--context", &format!("{ctx},{ctx}")]);
    assert_eq!(of_type(&recs, "Synced").len(), 1, "{recs:#?}");
    assert_eq!(of_type(&recs, "List").len(), 1, "{recs:#?}");
    assert_eq!(recs.iter().filter(|r| is_delta(r)).count(), 2, "{recs:#?}");
}
