//! Issue 15, "never lie": what kwatch shows is what the server said, in full — objects
//! from a plain LIST carry their kind and apiVersion, a slow handler slows only the
//! deltas, and the server's warnings reach the user.

use serde_json::{json, Value};

use crate::util::SimProcess;

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

/// `--pop-delay` is a slow event handler: it slows the deltas, not the reflector's own
/// records (which used to come 2 s apart, and `--stats` said synced after 2 s).
#[test]
fn pop_delay_slows_deltas_only() {
    let sim = SimProcess::start(&[]);
    let out = sim
        .kwatch("configmaps app-config -n default --pop-delay 2s --until-synced --stats -o json")
        .exits(0);
    let recs = out.json();
    let types: Vec<&str> = recs.iter().map(|r| r["type"].as_str().unwrap()).collect();
    assert!(types.starts_with(&["List", "Listed"]), "{types:?}");
    let at = |t: &str| -> jiff::Timestamp {
        recs.iter().find(|r| r["type"] == t).unwrap()["time"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap()
    };
    let gap = at("Synced").duration_since(at("List"));
    assert!(
        gap < jiff::SignedDuration::from_secs(1),
        "List → Synced took {gap}"
    );
    let synced_ms: u64 = out
        .stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("synced after: "))
        .and_then(|v| v.strip_suffix("ms"))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{}", out.stderr));
    assert!(synced_ms < 1000, "{}", out.stderr);
}

/// The server's warnings (e.g. a deprecated API version) are shown on stderr, once each,
/// as kubectl shows them; stdout stays data.
#[test]
fn server_warnings_are_shown_on_stderr_once() {
    let sim = SimProcess::start(&[]);
    let text = "example.com/v1beta1 Widget is deprecated; use example.com/v1 Widget";
    sim.control("POST", "/_sim/warn", json!({"text": text, "count": 50}));
    let out = sim
        .kwatch("configmaps -n default -o name --until-synced --page-size 1")
        .exits(0);
    let want = format!("Warning: {text}");
    assert_eq!(out.stderr.matches(&want).count(), 1, "{}", out.stderr);
    assert!(
        out.stdout.iter().all(|l| l.starts_with("configmap/")),
        "{:?}",
        out.stdout
    );
    sim.control("POST", "/_sim/warn", json!({"text": text, "count": 50}));
    let k = sim.kubectl(&["get", "configmaps", "-n", "default"]);
    assert!(
        String::from_utf8_lossy(&k.stderr).contains(&want),
        "kubectl shows it the same way: {k:?}"
    );
}
