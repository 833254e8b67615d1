//! The decoder against Kubernetes' own golden files (every built-in kind of 1.32, 1.36 and
//! 1.37, `testdata/k8s-api/`), and lists and watch frames built by hand.

use std::path::Path;

use super::*;
use crate::cache::testutil::files_with_extension;
use crate::client::protobuf::minors;
use crate::client::protobuf::table::{Ty, SERVED_TYPE_META};

/// Fixtures whose JSON the decoder cannot reproduce, with the reason; empty is the goal.
const EXPECTED_FAILURES: &[&str] = &[];

fn compacted(path: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    crate::client::protobuf::json::compact(&mut out, &std::fs::read(path).unwrap());
    out
}

/// A golden file's JSON as kube-apiserver serves the object: with the TypeMeta its
/// conversions set in embedded objects (`table::SERVED_TYPE_META`), which Go's JSON of the
/// fixture's object leaves empty; the bytes unchanged where there is none.
pub(crate) fn served(table: &Table, msg: u32, json: &[u8]) -> Vec<u8> {
    let mut v: serde_json::Value = serde_json::from_slice(json).unwrap();
    let before = v.clone();
    table.serve_type_meta(msg, &mut v);
    if v == before {
        return json.to_vec();
    }
    serde_json::to_vec(&v).unwrap()
}

/// Decodes every `.pb` of one release's fixtures with the table of `minor`; returns
/// (passed, failures).
fn golden(release: &str, minor: u32) -> (usize, Vec<String>) {
    let table = Table::for_minor(minor).unwrap().unwrap();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/k8s-api")
        .join(release);
    let pbs = files_with_extension(&dir, "pb");
    assert!(pbs.len() > 150, "{release}: only {} fixtures", pbs.len());
    let (mut passed, mut failures) = (0, Vec::new());
    for pb in pbs {
        let name = pb.file_stem().unwrap().to_string_lossy().into_owned();
        let mut want = compacted(&pb.with_extension("json"));
        let mut got = Vec::new();
        let bytes = std::fs::read(&pb).unwrap();
        if let Some(msg) = envelope(&bytes)
            .ok()
            .and_then(|env| table.kind(env.api_version, env.kind))
        {
            want = served(table, msg, &want);
        }
        let result = match envelope(&bytes) {
            // A type without TypeMeta (WatchEvent): its envelope names no kind; the file does.
            Ok(env) if env.kind.is_empty() => {
                let (group_version, kind) = name.rsplit_once('.').unwrap();
                let (group, version) = group_version.rsplit_once('.').unwrap();
                let api_version = if group == "core" {
                    version.to_owned()
                } else {
                    format!("{group}/{version}")
                };
                let msg = table
                    .kind(&api_version, kind)
                    .unwrap_or_else(|| panic!("{name}: no kind"));
                message(table, msg, env.raw, &mut got)
            }
            _ => object(table, &bytes, &mut got),
        };
        let failure = match result {
            Err(e) => Some(format!("{name}: {e}")),
            Ok(()) => {
                // Equal as JSON values (what a reader of the object sees), and byte for byte
                // (what the printers and --diff see).
                let value = |b: &[u8]| serde_json::from_slice::<serde_json::Value>(b).ok();
                let (g, w) = (value(&got), value(&want));
                assert!(w.is_some(), "{name}.json is not JSON");
                let at = got
                    .iter()
                    .zip(&want)
                    .position(|(a, b)| a != b)
                    .unwrap_or(got.len().min(want.len()));
                let around = |b: &[u8]| {
                    String::from_utf8_lossy(&b[at.saturating_sub(60)..(at + 60).min(b.len())])
                        .into_owned()
                };
                (g != w || got != want).then(|| {
                    format!(
                        "{name}: {} at byte {at}:\n  got  …{}…\n  want …{}…",
                        if g == w {
                            "equal as JSON, other bytes"
                        } else {
                            "another value"
                        },
                        around(&got),
                        around(&want)
                    )
                })
            }
        };
        match failure {
            None => passed += 1,
            Some(f) if EXPECTED_FAILURES.contains(&name.as_str()) => {
                eprintln!("expected failure: {f}")
            }
            Some(f) => failures.push(f),
        }
    }
    (passed, failures)
}

/// Every fixture of `release` decodes with the table of `minor` to its JSON.
fn golden_files_decode(release: &str, minor: u32) {
    let (passed, failures) = golden(release, minor);
    eprintln!("{release}: {passed} fixtures pass");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn golden_files_of_1_32_decode_to_their_json() {
    golden_files_decode("v1.32.13", 32);
}

/// The tables of the minors between have no fixtures of their own: each decodes every
/// fixture of 1.32 whose kind it still has to the same JSON (alpha versions removed since,
/// such as resource.k8s.io/v1alpha3, are the only failures allowed).
#[test]
fn golden_files_of_1_32_decode_with_the_tables_of_1_33_to_1_35() {
    for minor in 33..=35 {
        let (passed, failures) = golden("v1.32.13", minor);
        eprintln!("v1.32.13 with 1.{minor}'s table: {passed} fixtures pass");
        let removed = format!("in kwatch's table of Kubernetes 1.{minor}");
        let other: Vec<_> = failures
            .iter()
            .filter(|f| !(f.contains(": protobuf: no ") && f.ends_with(&removed)))
            .collect();
        assert!(
            passed >= 165 && other.is_empty(),
            "1.{minor}: {passed} pass; {other:#?}"
        );
    }
}

#[test]
fn golden_files_of_1_36_decode_to_their_json() {
    golden_files_decode("v1.36.2", 36);
}

#[test]
fn golden_files_of_1_37_decode_to_their_json() {
    golden_files_decode("v1.37.0-beta.0", 37);
}

/// A field of a message being built by hand: tag, then value.
fn field(out: &mut Vec<u8>, num: u64, wire: u64, value: &[u8]) {
    varint(out, num << 3 | wire);
    if wire == 2 {
        varint(out, value.len() as u64);
    }
    out.extend_from_slice(value);
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn bytes(num: u64, value: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    field(&mut out, num, 2, value);
    out
}

fn int(num: u64, v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    varint(&mut out, num << 3);
    varint(&mut out, v);
    out
}

fn envelope_of(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let type_meta = [bytes(1, api_version.as_bytes()), bytes(2, kind.as_bytes())].concat();
    [&MAGIC[..], &bytes(1, &type_meta), &bytes(2, raw)].concat()
}

fn map_entry(num: u64, key: &str, value: &[u8]) -> Vec<u8> {
    bytes(num, &[bytes(1, key.as_bytes()), bytes(2, value)].concat())
}

fn table() -> &'static Table {
    Table::for_minor(32).unwrap().unwrap()
}

fn json_of(bytes: &[u8]) -> Result<String, DecodeError> {
    let mut out = Vec::new();
    object(table(), bytes, &mut out)?;
    Ok(String::from_utf8(out).unwrap())
}

/// A pod with a name, labels (given out of order and one twice) and one container.
fn pod(name: &str) -> Vec<u8> {
    let meta = [
        bytes(1, name.as_bytes()),
        map_entry(11, "b", b"2"),
        map_entry(11, "a", b"1"),
        map_entry(11, "a", b"3"),
    ]
    .concat();
    let container = [bytes(1, b"c"), bytes(2, b"i")].concat();
    let spec = bytes(2, &container);
    envelope_of("v1", "Pod", &[bytes(1, &meta), bytes(2, &spec)].concat())
}

#[test]
fn fields_in_any_wire_order_are_written_in_go_order() {
    // Labels already sorted but with a repeated key (no sort is needed; the last still
    // wins), metadata's name after a label, and a repeated field's elements on either side
    // of a field Go writes after it (each field's elements keep their wire order).
    let meta = [
        map_entry(11, "a", b"1"),
        bytes(1, b"n"),
        map_entry(11, "a", b"2"),
        map_entry(11, "b", b"3"),
    ]
    .concat();
    let spec = [
        bytes(2, &bytes(1, b"c1")),
        bytes(3, b"Always"),
        bytes(2, &bytes(1, b"c2")),
    ]
    .concat();
    assert_eq!(
        json_of(&envelope_of(
            "v1",
            "Pod",
            &[bytes(2, &spec), bytes(1, &meta)].concat()
        ))
        .unwrap(),
        r#"{"kind":"Pod","apiVersion":"v1","metadata":{"name":"n","creationTimestamp":null,"labels":{"a":"2","b":"3"}},"spec":{"containers":[{"name":"c1","resources":{}},{"name":"c2","resources":{}}],"restartPolicy":"Always"},"status":{}}"#
    );
}

#[test]
fn fields_absent_from_the_wire_are_go_zero_values() {
    // creationTimestamp: a value Time, never omitted, null when zero; resources: a value
    // struct under omitempty, still written; status: absent, a value struct, `{}`; map
    // keys sorted, the last of a repeated key winning.
    assert_eq!(
        json_of(&pod("a")).unwrap(),
        r#"{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","creationTimestamp":null,"labels":{"a":"3","b":"2"}},"spec":{"containers":[{"name":"c","image":"i","resources":{}}]},"status":{}}"#
    );
    // A nil slice without omitempty is null.
    assert_eq!(
        json_of(&envelope_of("v1", "Pod", &[])).unwrap(),
        r#"{"kind":"Pod","apiVersion":"v1","metadata":{"creationTimestamp":null},"spec":{"containers":null},"status":{}}"#
    );
    // Value scalars not on the wire (gogo writes them always; other encoders need not)
    // are their zero, written unless omitempty: a ContainerStatus of no bytes.
    let status = bytes(3, &bytes(8, &[]));
    let json = json_of(&envelope_of("v1", "Pod", &status)).unwrap();
    assert!(
        json.ends_with(r#""status":{"containerStatuses":[{"name":"","state":{},"lastState":{},"ready":false,"restartCount":0,"image":"","imageID":""}]}}"#),
        "{json}"
    );
    // []byte as base64; absent maps under omitempty are left out.
    let cm = envelope_of("v1", "ConfigMap", &map_entry(3, "k", &[0, 1]));
    assert_eq!(
        json_of(&cm).unwrap(),
        r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"creationTimestamp":null},"binaryData":{"k":"AAE="}}"#
    );
}

#[test]
fn repeated_numbers_packed_or_not() {
    // PodSecurityContext.supplementalGroups (4): repeated int64.
    let unpacked = [int(4, 1), int(4, 2), int(4, 3)].concat();
    let mut packed_values = Vec::new();
    for v in [1, 2, 3] {
        varint(&mut packed_values, v);
    }
    for psc in [unpacked, bytes(4, &packed_values)] {
        let pod = envelope_of("v1", "Pod", &bytes(2, &bytes(14, &psc)));
        let json = json_of(&pod).unwrap();
        assert!(
            json.contains(r#""securityContext":{"supplementalGroups":[1,2,3]}"#),
            "{json}"
        );
    }
}

#[test]
fn an_unknown_field_is_an_error_naming_message_and_field() {
    let pod = envelope_of(
        "v1",
        "Pod",
        &[bytes(1, &bytes(99, b"x")), bytes(2, &[])].concat(),
    );
    assert_eq!(
        json_of(&pod).unwrap_err(),
        DecodeError::UnknownField {
            message: "k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta".into(),
            field: 99,
            minor: 32
        }
    );
    assert_eq!(
        json_of(&pod).unwrap_err().to_string(),
        "protobuf: field 99 of k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta is not in kwatch's table of Kubernetes 1.32"
    );
    let widget = envelope_of("example.com/v1", "Widget", &[]);
    assert!(matches!(
        json_of(&widget),
        Err(DecodeError::UnknownKind { .. })
    ));
    assert!(matches!(
        json_of(b"{\"kind\":\"Pod\"}"),
        Err(DecodeError::Malformed(_))
    ));
    // A length past the end is an error, not a panic.
    assert!(matches!(
        json_of(&envelope_of("v1", "Pod", &[0x0a, 0x05, 0x0a])),
        Err(DecodeError::Malformed(_))
    ));
    let odd_envelope = [&MAGIC[..], &bytes(9, b"x")].concat();
    assert_eq!(
        envelope(&odd_envelope).unwrap_err().to_string(),
        "protobuf: field 9 in a runtime.Unknown, which has none"
    );
}

#[test]
fn a_schema_nested_too_deep_is_an_error_not_a_stack_overflow() {
    // CustomResourceDefinition → spec (2) → versions (7) → schema (4) → openAPIV3Schema
    // (1) → items (24, JSONSchemaPropsOrArray) → schema (1) → items … 1000 deep.
    let mut schema = Vec::new();
    for _ in 0..1000 {
        schema = bytes(24, &bytes(1, &schema));
    }
    let crd = bytes(2, &bytes(7, &bytes(4, &bytes(1, &schema))));
    let env = envelope_of("apiextensions.k8s.io/v1", "CustomResourceDefinition", &crd);
    let err = json_of(&env).unwrap_err();
    assert_eq!(
        err,
        DecodeError::Malformed("messages nested deeper than 256".into())
    );
}

/// A list's ListMeta: `resourceVersion` `rv`, `continue` next.
fn list_meta(rv: &[u8]) -> Vec<u8> {
    [bytes(2, rv), bytes(3, b"next")].concat()
}

/// An object's message without its envelope: a list's item.
fn item_of(env: &[u8]) -> Vec<u8> {
    envelope(env).unwrap().raw.to_vec()
}

/// A PodList's message: [`list_meta`] of `rv`, then a pod of each of `names`.
fn pod_list(rv: &[u8], names: &[&str]) -> Vec<u8> {
    let mut raw = bytes(1, &list_meta(rv));
    for name in names {
        raw.extend(bytes(2, &item_of(&pod(name))));
    }
    raw
}

#[test]
fn a_list_gives_its_items_and_its_metadata() {
    let raw = pod_list(b"5", &["a", "b"]);
    let mut items = Vec::new();
    let head = list(table(), &envelope_of("v1", "PodList", &raw), |item| {
        items.push(String::from_utf8(item.to_vec()).unwrap())
    })
    .unwrap();
    assert_eq!(head.kind, "PodList");
    assert_eq!(head.api_version, "v1");
    assert_eq!(
        String::from_utf8(head.metadata).unwrap(),
        r#"{"resourceVersion":"5","continue":"next"}"#
    );
    // Items as the apiserver's JSON list holds them: no kind, no apiVersion.
    assert_eq!(items.len(), 2);
    assert!(
        items[1].starts_with(r#"{"metadata":{"name":"b","#),
        "{}",
        items[1]
    );

    // --metadata-only's list: the apiserver's JSON gives each item its kind.
    let partial = [bytes(1, &[]), bytes(2, &bytes(1, &bytes(1, b"a")))].concat();
    let mut items = Vec::new();
    let env = envelope_of("meta.k8s.io/v1", "PartialObjectMetadataList", &partial);
    let head = list(table(), &env, |item| {
        items.push(String::from_utf8(item.to_vec()).unwrap())
    });
    assert_eq!(String::from_utf8(head.unwrap().metadata).unwrap(), "{}");
    assert_eq!(
        items,
        [
            r#"{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"a","creationTimestamp":null}}"#
        ]
    );
}

/// A list fed as it arrives, cut at every point into two chunks and in
/// chunks of 1, 2, 3 and 7 bytes, gives each item as soon as its bytes are in and in the
/// end what the whole body gives; a body cut short, or a field the list does not have, is
/// an error wherever the cut falls.
#[test]
fn a_list_read_in_chunks_gives_what_the_whole_body_gives() {
    let raw = [pod_list(b"7", &["a", "bb"]), bytes(2, &[])].concat();
    let body = [
        envelope_of("v1", "PodList", &raw),
        bytes(4, b"application/vnd.kubernetes.protobuf"),
    ]
    .concat();
    let whole = |body: &[u8]| {
        let mut items = Vec::new();
        let head = list(table(), body, |i| items.push(i.to_vec()));
        head.map(|h| (h, items))
    };
    let (head, items) = whole(&body).unwrap();
    assert_eq!(items.len(), 3);
    assert_eq!(
        String::from_utf8(head.metadata.clone()).unwrap(),
        r#"{"resourceVersion":"7","continue":"next"}"#
    );
    let chunked = |body: &[u8], cuts: &mut dyn Iterator<Item = usize>| {
        let mut reader = ListReader::new(table());
        let (mut items, mut seen) = (Vec::new(), Vec::new());
        let mut from = 0;
        for to in cuts.chain([body.len()]) {
            reader.feed(&body[from..to], &mut |i: &[u8]| items.push(i.to_vec()))?;
            seen.push(items.len());
            from = to;
        }
        reader.finish().map(|h| (h, items, seen))
    };
    // Item i is out once the body holds its last byte.
    let ends: Vec<usize> = {
        let start = body.len() - raw.len() - bytes(4, b"application/vnd.kubernetes.protobuf").len();
        let mut at = start + bytes(1, &list_meta(b"7")).len();
        [&pod("a"), &pod("bb")]
            .iter()
            .map(|p| item_of(p))
            .chain([Vec::new()])
            .map(|i| {
                at += bytes(2, &i).len();
                at
            })
            .collect()
    };
    for cut in 0..=body.len() {
        let (h, got, seen) = chunked(&body, &mut [cut].into_iter()).unwrap();
        assert_eq!((h, got), (head.clone(), items.clone()), "cut at {cut}");
        let out_by_cut = ends.iter().filter(|e| **e <= cut).count();
        assert_eq!(seen[0], out_by_cut, "cut at {cut}");
    }
    for size in [1, 2, 3, 7] {
        let (h, got, _) = chunked(&body, &mut (size..body.len()).step_by(size)).unwrap();
        assert_eq!((h, got), (head.clone(), items.clone()), "chunks of {size}");
    }
    // Cut short anywhere (but after the optional trailer began): an error at the end.
    for end in 0..body.len() - bytes(4, b"application/vnd.kubernetes.protobuf").len() {
        let r = chunked(&body[..end], &mut std::iter::empty());
        assert!(r.is_err(), "a body of {end} bytes");
    }
    // A field the list message does not have: the table's gap, named, wherever it is cut.
    let unknown = envelope_of("v1", "PodList", &[raw.clone(), int(99, 1)].concat());
    for cut in 0..=unknown.len() {
        let err = chunked(&unknown, &mut [cut].into_iter()).unwrap_err();
        assert!(
            matches!(err, DecodeError::UnknownField { field: 99, .. }),
            "cut at {cut}: {err}"
        );
    }
}

#[test]
fn a_watch_stream_is_frames_of_events_with_enveloped_objects() {
    let event = |kind: &str, object: &[u8]| {
        let ev = [bytes(1, kind.as_bytes()), bytes(2, &bytes(1, object))].concat();
        [&(ev.len() as u32).to_be_bytes()[..], &ev].concat()
    };
    let status = [
        bytes(1, &[]),
        bytes(2, b"Failure"),
        bytes(3, b"too old resource version: 1 (5)"),
        bytes(4, b"Expired"),
        int(6, 410),
    ]
    .concat();
    let stream = [
        event("ADDED", &pod("a")),
        event("ERROR", &envelope_of("v1", "Status", &status)),
    ]
    .concat();

    // A partial frame waits for more bytes.
    assert_eq!(frame(&stream[..3]), None);
    let first_len = 4 + u32::from_be_bytes(stream[..4].try_into().unwrap()) as usize;
    assert_eq!(frame(&stream[..first_len - 1]), None);

    let (f, used) = frame(&stream).unwrap();
    assert_eq!(used, first_len);
    let added = watch_event(table(), f).unwrap();
    assert_eq!(added.event_type, "ADDED");
    assert_eq!(added.object, json_of(&pod("a")).unwrap().into_bytes());

    let (f, used) = frame(&stream[first_len..]).unwrap();
    assert_eq!(first_len + used, stream.len());
    let error = watch_event(table(), f).unwrap();
    assert_eq!(error.event_type, "ERROR");
    assert_eq!(
        String::from_utf8(error.object).unwrap(),
        r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410}"#
    );
}

#[test]
fn every_table_loads() {
    for minor in minors() {
        let table = Table::for_minor(minor).unwrap().unwrap();
        assert_eq!(table.minor(), minor);
        assert!(table.kind("apps/v1", "Deployment").is_some());
    }
    assert!(Table::for_minor(7).is_none());
}

/// Fields whose type has a TypeMeta that kube-apiserver serves empty, each with why: the
/// protobuf wire cannot carry it, and the JSON has none either.
const TYPE_META_LEFT_EMPTY: &[(&str, &str, &str)] = &[
    (
        "k8s.io.apimachinery.pkg.apis.meta.v1.APIGroupList",
        "groups",
        "discovery's groups have none (a genuine 1.32's /apis: testdata/discovery/)",
    ),
    (
        "k8s.io.api.policy.v1.Eviction",
        "deleteOptions",
        "an Eviction is only created (pods/eviction), never read, listed or watched",
    ),
    (
        "k8s.io.api.policy.v1beta1.Eviction",
        "deleteOptions",
        "an Eviction is only created (pods/eviction), never read, listed or watched",
    ),
    (
        "k8s.io.api.admission.v1.AdmissionResponse",
        "status",
        "an AdmissionReview goes to a webhook, never from the API",
    ),
    (
        "k8s.io.api.admission.v1beta1.AdmissionResponse",
        "status",
        "an AdmissionReview goes to a webhook, never from the API",
    ),
    (
        "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.ConversionResponse",
        "result",
        "a ConversionReview goes to a webhook, never from the API",
    ),
    (
        "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.ConversionResponse",
        "result",
        "a ConversionReview goes to a webhook, never from the API",
    ),
];

/// Every embedded object whose Go type has a TypeMeta, in every table: either
/// kube-apiserver serves it with its TypeMeta set (SERVED_TYPE_META, which the decoder
/// writes), or it serves it empty (a list's items, as a genuine server's JSON lists have
/// them, and TYPE_META_LEFT_EMPTY). A new one in a newer minor fails here until it is
/// looked up in Kubernetes and put in one list or the other.
#[test]
fn every_embedded_type_meta_is_either_served_or_left_empty() {
    let mut served_seen = std::collections::HashSet::new();
    for minor in minors() {
        let table = Table::for_minor(minor).unwrap().unwrap();
        let has_type_meta = |i: u32| {
            table.messages[i as usize]
                .fields
                .iter()
                .any(|f| f.type_meta)
        };
        for m in &table.messages {
            for f in &m.fields {
                let Ty::Msg(inner) = f.map_value.unwrap_or(f.ty) else {
                    continue;
                };
                if f.type_meta || f.inline || !has_type_meta(inner) {
                    assert!(f.served_type_meta.is_none(), "{} {}", m.name, f.name);
                    continue;
                }
                let list_items = m.name.ends_with("List") && &*f.name == "items";
                let left_empty = TYPE_META_LEFT_EMPTY
                    .iter()
                    .any(|(msg, field, _)| *msg == m.name && *field == &*f.name);
                match f.served_type_meta {
                    Some(_) => {
                        assert!(
                            !left_empty,
                            "1.{minor}: {} {} in both lists",
                            m.name, f.name
                        );
                        served_seen.insert((m.name.clone(), f.name.to_string()));
                    }
                    None => assert!(
                        list_items || left_empty,
                        "1.{minor}: {}.{} embeds {}, whose TypeMeta the protobuf wire drops: \
                         does kube-apiserver set it? Put it in SERVED_TYPE_META or \
                         TYPE_META_LEFT_EMPTY",
                        m.name,
                        f.name,
                        table.messages[inner as usize].name
                    ),
                }
            }
        }
    }
    // Each rule names a field of some table (no misspelt message or field).
    for (message, field, _, _) in SERVED_TYPE_META {
        assert!(
            served_seen.contains(&(message.to_string(), field.to_string())),
            "{message} {field}: in no table"
        );
    }
}

/// A StatefulSet's volumeClaimTemplates and a PartialObjectMetadataList's items come with
/// the TypeMeta kube-apiserver sets in them (the golden files cover StatefulSets of
/// apps/v1, v1beta1 and v1beta2 too); a list's items and other embedded objects without.
#[test]
fn embedded_objects_get_the_type_meta_the_apiserver_sets() {
    let pvc = [bytes(1, &bytes(1, b"data"))].concat();
    let spec = [bytes(4, &pvc), bytes(4, &pvc)].concat();
    let sts = envelope_of("apps/v1", "StatefulSet", &bytes(2, &spec));
    let json = json_of(&sts).unwrap();
    let template = r#"{"kind":"PersistentVolumeClaim","apiVersion":"v1","metadata":{"name":"data","creationTimestamp":null},"spec":{"resources":{}},"status":{}}"#;
    assert!(
        json.contains(&format!(
            r#""volumeClaimTemplates":[{template},{template}]"#
        )),
        "{json}"
    );
    // A metadata list's items, read as it arrives.
    let meta = bytes(1, &bytes(1, b"cm1"));
    let list = envelope_of(
        "meta.k8s.io/v1",
        "PartialObjectMetadataList",
        &[bytes(1, &bytes(2, b"5")), bytes(2, &meta)].concat(),
    );
    let mut items = Vec::new();
    super::list(table(), &list, |i| {
        items.push(String::from_utf8(i.to_vec()).unwrap())
    })
    .unwrap();
    assert_eq!(
        items,
        [
            r#"{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"cm1","creationTimestamp":null}}"#
        ]
    );
}

/// Every minor's table knows ObjectMeta's managedFields, which `Omit::managed_fields`
/// leaves out (without it nothing would be left out, and every byte decoded).
#[test]
fn every_table_knows_where_an_objects_managed_fields_are() {
    for minor in minors() {
        let table = Table::for_minor(minor).unwrap().unwrap();
        let (msg, field) = table.managed_fields.expect("ObjectMeta.managedFields");
        let m = &table.messages[msg as usize];
        assert!(
            m.name.ends_with(".meta.v1.ObjectMeta"),
            "1.{minor}: {}",
            m.name
        );
        assert_eq!(&*m.fields[field].name, "managedFields", "1.{minor}");
    }
}
