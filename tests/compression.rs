//! gzip as client-go asks for it. kwatch sends
//! `Accept-Encoding: gzip` on every request, the simulator gzips answers over 128 KiB (never
//! watch streams) as kube-apiserver does, what kwatch prints does not change, and the
//! `Listed` record says what came over the connection; `--disable-compression` and the
//! kubeconfig's `disable-compression` turn it off. The simulator's slow link, which shows what the
//! bytes cost: kwatch and kubectl work through it.

use serde_json::{json, Value};

use crate::util::kwatch::{kwatch_using, of_type};
use crate::util::shared::is_watch;
use crate::util::{SimProcess, LIMIT};

/// The simulator's request log from entry `from` on.
fn requests_since(sim: &SimProcess, from: usize) -> Vec<Value> {
    let log = sim.get("/_sim/requests").json();
    let all = log["requests"].as_array().expect("the request log");
    all[from.min(all.len())..].to_vec()
}

/// The requests of pod lists (not watches) in `log`.
fn pod_lists(log: &[Value]) -> Vec<&Value> {
    log.iter()
        .filter(|r| {
            let p = r["path"].as_str().unwrap_or_default();
            p.starts_with("/api/v1/pods") && !is_watch(p)
        })
        .collect()
}

/// The records with what may differ between two runs of one list taken away: the time,
/// durations, and how the list came over the connection.
fn comparable(recs: &[Value]) -> Vec<Value> {
    recs.iter()
        .map(|r| {
            let mut r = r.clone();
            if let Some(m) = r.as_object_mut() {
                for k in ["time", "ms", "encoding", "wireBytes"] {
                    m.remove(k);
                }
            }
            r
        })
        .collect()
}

/// One pod list of 300 pods (over 128 KiB) read gzipped, then with `--disable-compression`:
/// the same records, and the request log shows what each run asked for and got. In JSON
/// (`--wire json`), whose share gzip saves is known; then in protobuf (the default),
/// gzipped too: `protobuf+gzip`, the same deltas.
#[test]
fn a_gzip_list_prints_what_an_uncompressed_one_prints() {
    let sim = SimProcess::start(&["--objects", "300"]);
    let args = "pods -A -o json --until-synced --page-size 0 --wire json";
    let gzip = sim.kwatch(args).success();
    let first_run = requests_since(&sim, 0);
    let plain = sim
        .kwatch(format!("{args} --disable-compression").as_str())
        .success();
    let second_run = requests_since(&sim, first_run.len());

    for r in &first_run {
        assert_eq!(
            r["acceptEncoding"], "gzip",
            "every request asks for gzip: {r}"
        );
    }
    let lists = pod_lists(&first_run);
    assert_eq!(lists.len(), 1, "{first_run:#?}");
    assert_eq!(lists[0]["contentEncoding"], "gzip", "{first_run:#?}");
    for r in &second_run {
        assert_eq!(r["acceptEncoding"], Value::Null, "{r}");
        assert_eq!(r["contentEncoding"], Value::Null, "{r}");
    }
    assert_eq!(pod_lists(&second_run).len(), 1, "{second_run:#?}");

    let (gzip, plain) = (gzip.json(), plain.json());
    assert_eq!(comparable(&gzip), comparable(&plain));
    let asked = |recs: &[Value]| of_type(recs, "List")[0]["encoding"].clone();
    assert_eq!(
        (asked(&gzip), asked(&plain)),
        ("json+gzip".into(), "json".into())
    );
    let (g, p) = (of_type(&gzip, "Listed")[0], of_type(&plain, "Listed")[0]);
    assert_eq!(
        (&g["encoding"], &p["encoding"]),
        (&"json+gzip".into(), &"json".into())
    );
    let bytes = p["bytes"].as_u64().expect("bytes");
    assert!(bytes > 128 * 1024, "{p}");
    assert_eq!(
        p["wireBytes"], bytes,
        "uncompressed, the bytes read are the bytes: {p}"
    );
    assert_eq!(g["bytes"], bytes, "{g}");
    let read = g["wireBytes"].as_u64().expect("wireBytes");
    assert!(read > 0 && read < bytes / 4, "gzip reads a fraction: {g}");

    let args = "pods -A -o json --until-synced --page-size 0";
    let protobuf = sim.kwatch(args).success().json();
    let deltas = |recs: &[Value]| -> Vec<Value> {
        comparable(recs)
            .into_iter()
            .filter(|r| r["type"] == "Replaced")
            .collect()
    };
    assert_eq!(deltas(&protobuf), deltas(&gzip));
    assert_eq!(of_type(&protobuf, "List")[0]["encoding"], "protobuf+gzip");
    let l = of_type(&protobuf, "Listed")[0];
    assert_eq!(l["encoding"], "protobuf+gzip", "{l}");
    let (bytes, read) = (l["bytes"].as_u64(), l["wireBytes"].as_u64());
    assert!(read > Some(0) && read < bytes, "gzip reads less: {l}");
}

/// An object as the server holds it, for comparing with what kwatch prints: GET of `path`
/// without `metadata.managedFields` (kwatch prints none unless asked).
fn served(sim: &SimProcess, path: &str) -> Value {
    let mut object = sim.get(path).json();
    if let Some(m) = object["metadata"].as_object_mut() {
        m.remove("managedFields");
    }
    object
}

/// The object of the delta record of `key` and `type` (`Replaced`, `Added`, …) in `recs`.
fn printed<'a>(recs: &'a [Value], key: &str, ty: &str) -> &'a Value {
    let delta = recs.iter().find(|r| r["key"] == key && r["type"] == ty);
    let delta = delta.unwrap_or_else(|| panic!("no {ty} of {key}: {recs:#?}"));
    &delta["object"]
}

/// A list under 128 KiB and every watch come uncompressed though kwatch asks for gzip, on
/// either wire: kwatch's `List` says it asked for `+gzip`, its `Listed` that the list came
/// without (`wireBytes` the `bytes`), and the watch's events, passed through as they come,
/// print each object as the server holds it, created, changed and deleted.
#[test]
fn small_lists_and_watches_are_not_compressed() {
    let sim = SimProcess::start(&[]);
    let listed_names = ["app-config", "kube-root-ca.crt"];
    let path = |name: &str| format!("/api/v1/namespaces/default/configmaps/{name}");
    let listed_objects: Vec<Value> = listed_names
        .iter()
        .map(|n| served(&sim, &path(n)))
        .collect();
    let watching = |wire: &str| crate::util::kwatch::watching_configmaps(&sim, &["--wire", wire]);
    let mut runs = [
        ("json", watching("json")),
        ("protobuf", watching("protobuf")),
    ];
    crate::util::kwatch::create_configmap(&sim, "default", "gz", json!({"a": "1"}));
    let created = served(&sim, &path("gz"));
    sim.kubectl_ok(r#"patch configmap gz -n default --type merge -p {"data":{"a":"2"}}"#);
    let changed = served(&sim, &path("gz"));
    sim.kubectl_ok("delete configmap gz -n default");
    for (_, kw) in runs.iter_mut() {
        kw.wait_for(LIMIT, "the delete of gz", |v| {
            v.iter()
                .any(|r| r["key"] == "default/gz" && r["type"] == "Deleted")
        });
    }
    // kwatch's lists and watches (GETs of the collection, with a query): asked for
    // gzip, answered without.
    let log = requests_since(&sim, 0);
    let gets: Vec<&Value> = log
        .iter()
        .filter(|r| {
            let p = r["path"].as_str().unwrap_or_default();
            r["method"] == "GET" && p.starts_with("/api/v1/namespaces/default/configmaps?")
        })
        .collect();
    let watches = gets
        .iter()
        .filter(|r| is_watch(r["path"].as_str().unwrap()));
    assert_eq!((gets.len(), watches.count()), (4, 2), "{gets:#?}");
    for r in &gets {
        assert_eq!(r["acceptEncoding"], "gzip", "{r}");
        assert_eq!(r["contentEncoding"], Value::Null, "{r}");
    }
    for (wire, kw) in runs {
        let recs = kw.interrupt(LIMIT).json();
        let (lists, listed) = (of_type(&recs, "List"), of_type(&recs, "Listed"));
        assert_eq!((lists.len(), listed.len()), (1, 1), "{wire}: {recs:#?}");
        assert_eq!(
            lists[0]["encoding"],
            format!("{wire}+gzip"),
            "kwatch asked for gzip"
        );
        let listed = listed[0];
        assert_eq!(
            listed["encoding"], wire,
            "the list came uncompressed: {listed}"
        );
        assert_eq!(listed["items"], listed_names.len(), "{listed}");
        let bytes = listed["bytes"].as_u64().expect("bytes");
        assert!(bytes > 0 && bytes < 128 * 1024, "{listed}");
        assert_eq!(listed["wireBytes"], bytes, "read as it came: {listed}");
        for (name, object) in listed_names.iter().zip(&listed_objects) {
            let key = format!("default/{name}");
            assert_eq!(printed(&recs, &key, "Replaced"), object, "{wire}: {key}");
        }
        assert_eq!(printed(&recs, "default/gz", "Added"), &created, "{wire}");
        assert_eq!(printed(&recs, "default/gz", "Updated"), &changed, "{wire}");
        // The last state, at the resourceVersion of the delete.
        let mut deleted = printed(&recs, "default/gz", "Deleted").clone();
        let rv = |o: &Value| {
            o["metadata"]["resourceVersion"]
                .as_str()?
                .parse::<u64>()
                .ok()
        };
        assert!(rv(&deleted) > rv(&changed), "{deleted}");
        deleted["metadata"]["resourceVersion"] = changed["metadata"]["resourceVersion"].clone();
        assert_eq!(deleted, changed, "{wire}");
    }
}

/// The kubeconfig cluster's `disable-compression: true` turns gzip off, as client-go's
/// transport (`DisableCompression`).
#[test]
fn the_kubeconfigs_disable_compression_turns_it_off() {
    let sim = SimProcess::start(&["--objects", "300"]);
    let text = std::fs::read_to_string(&sim.kubeconfig).expect("the sim's kubeconfig");
    assert!(text.contains("\n    server: "), "{text}");
    let text = text.replacen(
        "\n    server: ",
        "\n    disable-compression: true\n    server: ",
        1,
    );
    let kubeconfig = sim.dir().join("no-gzip.kubeconfig");
    std::fs::write(&kubeconfig, text).expect("write the kubeconfig");
    let out = kwatch_using(
        sim.dir(),
        &kubeconfig,
        "pods -A -o json --until-synced --page-size 0",
    )
    .success();
    let log = requests_since(&sim, 0);
    assert_eq!(pod_lists(&log).len(), 1, "{log:#?}");
    for r in &log {
        assert_eq!(r["acceptEncoding"], Value::Null, "{r}");
        assert_eq!(r["contentEncoding"], Value::Null, "{r}");
    }
    let recs = out.json();
    assert_eq!(of_type(&recs, "List")[0]["encoding"], "protobuf");
    assert_eq!(of_type(&recs, "Listed")[0]["encoding"], "protobuf");
}

/// The bytes the simulator has written under a slow link, and its rate (`null`: none).
fn slow_link(sim: &SimProcess) -> (u64, Value) {
    let state = sim.state();
    let link = &state["slowLink"];
    (
        link["bytesPaced"].as_u64().expect("bytesPaced"),
        link["mbps"].clone(),
    )
}

/// Under `POST /_sim/slow-link` a gzipped list of 300 pods and kubectl's
/// get still arrive whole, every byte kwatch read off the connection went through the link
/// (what the state counts as paced), and `release` ends it.
#[test]
fn a_slow_link_paces_what_the_server_writes_and_clients_work_through_it() {
    let sim = SimProcess::start(&["--objects", "300"]);
    assert_eq!(
        slow_link(&sim),
        (0, Value::Null),
        "no slow link at the start"
    );
    let on = sim.control("POST", "slow-link", json!({"mbps": 20}));
    assert_eq!(on["mbps"], 20.0, "{on}");
    let (before, mbps) = slow_link(&sim);
    assert_eq!(mbps, 20.0);

    let out = sim
        .kwatch("pods -A -o json --until-synced --page-size 0")
        .success();
    let recs = out.json();
    let listed = of_type(&recs, "Listed")[0];
    assert_eq!(listed["encoding"], "protobuf+gzip", "{listed}");
    let wire = listed["wireBytes"].as_u64().expect("wireBytes");
    let (after, _) = slow_link(&sim);
    assert!(
        after - before >= wire,
        "the {wire} bytes of the list went through the link: {before} -> {after}"
    );
    let pods = sim.state()["objects"]["pods"]
        .as_object()
        .map_or(0, |m| m.len());
    assert_eq!(listed["items"], pods as u64, "{listed}");
    let names = sim.kubectl_ok("get pods -A -o name");
    assert_eq!(names.lines().count(), pods, "kubectl through the slow link");
    assert!(
        slow_link(&sim).0 > after,
        "kubectl's answers were paced too"
    );

    let released = sim.control("POST", "release", json!({"fault": "slow-link"}));
    assert_eq!(released["released"], json!(["slow-link"]), "{released}");
    assert_eq!(slow_link(&sim).1, Value::Null);
}

/// kube-apiserver 1.37 compresses a streaming list asked with gzip with a writer closed at
/// every flush: a series of gzip members (`WatchListCompression`,
/// kubernetes/kubernetes#139308 and kubernetes/kubernetes#139925). Go's gzip reader reads
/// them all, so client-go keeps the compression; a one-member reader fails after the first
/// event and falls back to a paged LIST on every sync (kube-rs/kube#2079). kwatch's default
/// informer syncs through the compressed streaming list, asks for gzip there, and the same
/// watch goes on delivering changes after the sync.
#[test]
fn a_compressed_streaming_list_of_1_37_syncs_and_its_watch_goes_on() {
    let sim = SimProcess::start(&["--server-version", "1.37"]);
    for i in 0..5 {
        crate::util::kwatch::create_configmap(&sim, "default", &format!("before-{i}"), json!({}));
    }
    let mut kw = sim.start_kwatch("configmaps -n default -o json");
    kw.wait_for(LIMIT, "the sync", |v| !of_type(v, "Synced").is_empty());
    crate::util::kwatch::create_configmap(&sim, "default", "after", json!({"a": "1"}));
    sim.kubectl_ok(&["delete", "configmap", "before-0", "-n", "default"][..]);
    let recs = kw.wait_for(LIMIT, "the changes after the sync", |v| {
        let has = |key: &str, ty: &str| v.iter().any(|r| r["key"] == key && r["type"] == ty);
        has("default/after", "Added") && has("default/before-0", "Deleted")
    });
    assert!(of_type(&recs, "WatchListFallback").is_empty(), "{recs:#?}");
    // A 1.37 server's default informer is client-go 0.37's.
    assert_eq!(of_type(&recs, "Synced")[0]["clientGo"], "0.37", "{recs:#?}");
    let lists = of_type(&recs, "List");
    assert_eq!(lists.len(), 1, "{recs:#?}");
    assert_eq!(lists[0]["streaming"], true, "{recs:#?}");
    let listed = of_type(&recs, "Listed");
    assert_eq!(listed.len(), 1, "{recs:#?}");
    assert_eq!(listed[0]["streaming"], true, "{listed:#?}");
    assert!(listed[0]["items"].as_u64() >= Some(5), "{listed:#?}");
    // What came over the connection: gzipped protobuf, fewer bytes read than decoded.
    assert_eq!(listed[0]["encoding"], "protobuf+gzip", "{listed:#?}");
    let (bytes, wire) = (&listed[0]["bytes"], &listed[0]["wireBytes"]);
    assert!(wire.as_u64() < bytes.as_u64(), "{listed:#?}");
    // The changes came on the streaming list's own watch: no other was opened.
    assert_eq!(of_type(&recs, "Watch").len(), 1, "{recs:#?}");
    let watches: Vec<Value> = requests_since(&sim, 0)
        .into_iter()
        .filter(|r| {
            let p = r["path"].as_str().unwrap_or_default();
            p.starts_with("/api/v1/namespaces/default/configmaps") && is_watch(p)
        })
        .collect();
    assert_eq!(watches.len(), 1, "{watches:#?}");
    assert!(
        watches[0]["path"]
            .as_str()
            .is_some_and(|p| p.contains("sendInitialEvents=true")),
        "{watches:#?}"
    );
    assert_eq!(watches[0]["acceptEncoding"], "gzip", "{watches:#?}");
    assert_eq!(watches[0]["contentEncoding"], "gzip", "{watches:#?}");
}

/// A streaming list's `Listed` says the bytes its initial events took on the wire: its
/// watch's body up to the initial-events-end bookmark (never compressed, so read and
/// decoded are one), which is each object's ADDED line and the bookmark's; the table's
/// `~ listed` line says them as it says a LIST's.
#[test]
fn a_streaming_lists_listed_says_the_bytes_of_its_initial_events() {
    let sim = SimProcess::start(&["--objects", "20", "--churn", "0"]);
    let out = sim
        .kwatch("pods -A -o json --until-synced --watch-list on --wire json --show-managed-fields")
        .success();
    let recs = out.json();
    let listed = of_type(&recs, "Listed")[0].clone();
    assert_eq!(listed["streaming"], true, "{listed}");
    assert_eq!(listed["encoding"], "json", "{listed}");
    let bytes = listed["bytes"].as_u64().expect("bytes");
    assert_eq!(listed["wireBytes"], bytes, "{listed}");
    // Each object came as `{"type":"ADDED","object":OBJECT}` and a newline, the object's
    // bytes as printed (spliced in as received); the end bookmark is one more line.
    let objects: u64 = out
        .stdout
        .iter()
        .filter(|l| l.starts_with(r#"{"type":"Replaced""#))
        .map(|l| {
            let at = l.find(r#","object":"#).expect("an object") + r#","object":"#.len();
            (l.len() - at - 1) as u64
        })
        .sum();
    let items = listed["items"].as_u64().expect("items");
    assert!(items >= 20, "{listed}");
    let lines = objects + items * (r#"{"type":"ADDED","object":}"#.len() as u64 + 1);
    assert!(
        (lines..lines + 1024).contains(&bytes),
        "{bytes} bytes for {items} objects of {objects} bytes: {listed}"
    );
    let table = sim
        .kwatch("pods -A --until-synced --watch-list on --wire json")
        .success();
    let line = table
        .stderr
        .lines()
        .find(|l| l.starts_with("~ listed pods: "))
        .unwrap_or_else(|| panic!("no `~ listed` line: {}", table.stderr));
    let size = line.rsplit_once(", ").map(|(_, s)| s).unwrap_or_default();
    assert!(
        size.ends_with(" json") && size.as_bytes()[0].is_ascii_digit(),
        "{line}"
    );
}

/// Over the simulator's slow link (every byte it writes counted), kube-apiserver 1.37's
/// compressed streaming list moves at most a tenth of the bytes the same list moves with
/// `--disable-compression`: what kube-rs's fix (kube-rs/kube#2080, `identity` on watches)
/// gives up.
#[test]
fn a_compressed_streaming_list_moves_at_most_a_tenth_of_the_bytes() {
    let sim = SimProcess::start(&[
        "--server-version",
        "1.37",
        "--objects",
        "1000",
        "--churn",
        "0",
    ]);
    sim.control("POST", "slow-link", json!({"mbps": 10000}));
    let moved = |extra: &str| {
        let before = slow_link(&sim).0;
        let args = format!("pods -A -o json --until-synced --wire json {extra}");
        let recs = sim.kwatch(args.as_str()).success().json();
        let listed = of_type(&recs, "Listed");
        assert_eq!(listed[0]["streaming"], true, "{listed:#?}");
        let moved = slow_link(&sim).0 - before;
        // The Listed record says what its body took on the wire: within what the link
        // carried (the discovery's, the handshake's and the headers' bytes besides).
        let wire = listed[0]["wireBytes"].as_u64().expect("wireBytes");
        assert!(
            wire <= moved && wire * 2 > moved,
            "{wire} of {moved}: {listed:#?}"
        );
        moved
    };
    // Uncompressed first: it also fills the discovery cache the compressed run reads.
    let plain = moved("--disable-compression");
    let gzip = moved("");
    eprintln!("the streaming list of 1,000 pods: {gzip} bytes compressed, {plain} not");
    assert!(
        gzip * 10 <= plain,
        "compressed {gzip} bytes, uncompressed {plain}"
    );
}
