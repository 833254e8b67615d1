//! The decoder against a genuine kube-apiserver 1.32.13's protobuf answers
//! (`crates/core/testdata/protobuf-1.32/`), each held to the JSON the same server sent for
//! the same request, byte for byte once compacted: a list's envelope and paging fields
//! (`continue`, `remainingItemCount`), a watch's framing and events (a patch, a create, a
//! delete, bookmarks), a 410 ERROR event, a streaming list's end bookmark, a 404 Status; and
//! a PartialObjectMetadataList and a gzipped list, which have no JSON capture. The golden
//! files (`tests.rs`) are Kubernetes' own encoder's output; these are a server's.

use std::io::Read;
use std::path::PathBuf;

use super::*;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/protobuf-1.32")
}

fn read(name: &str) -> Vec<u8> {
    std::fs::read(dir().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// A capture's JSON as the server sent it: compact (the lists and the 404 were indented
/// for reading).
fn server_json(name: &str) -> String {
    let mut out = Vec::new();
    compact(&mut out, &read(name));
    String::from_utf8(out).unwrap()
}

fn table() -> &'static Table {
    Table::for_minor(32).unwrap().unwrap()
}

/// A protobuf list as the apiserver's JSON list: its envelope's kind and apiVersion, its
/// ListMeta, its items; read `chunk` bytes at a time as a body arrives.
fn list_json(bytes: &[u8], chunk: usize) -> String {
    let mut reader = ListReader::new(table());
    let mut items = Vec::new();
    for piece in bytes.chunks(chunk) {
        reader
            .feed(piece, &mut |item: &[u8]| items.push(item.to_vec()))
            .unwrap();
    }
    let head = reader.finish().unwrap();
    let mut out = format!(
        r#"{{"kind":"{}","apiVersion":"{}","metadata":"#,
        head.kind, head.api_version
    )
    .into_bytes();
    out.extend_from_slice(&head.metadata);
    out.extend_from_slice(br#","items":["#);
    out.extend_from_slice(&items.join(&b","[..]));
    out.extend_from_slice(b"]}");
    String::from_utf8(out).unwrap()
}

/// A protobuf watch body as the JSON watch's lines (`{"type":…,"object":…}` and `\n`).
fn watch_json(mut body: &[u8]) -> String {
    let mut out = String::new();
    while let Some((frame, used)) = frame(body) {
        let e = watch_event(table(), frame).unwrap();
        out.push_str(&format!(
            r#"{{"type":"{}","object":{}}}"#,
            e.event_type,
            String::from_utf8(e.object).unwrap()
        ));
        out.push('\n');
        body = &body[used..];
    }
    assert!(body.is_empty(), "{} bytes of a partial frame", body.len());
    out
}

/// The value of the first `"key":"…"` of a compact JSON text.
fn string_of<'a>(json: &'a str, key: &str) -> Option<&'a str> {
    let at = json.find(&format!("\"{key}\":\""))? + key.len() + 4;
    Some(&json[at..at + json[at..].find('"')?])
}

#[test]
fn list_pages_decode_to_the_servers_json_with_their_paging_fields() {
    for name in ["list-page1", "list-page2", "list-all-at-rv"] {
        let pb = read(&format!("{name}.pb"));
        let want = server_json(&format!("{name}.json"));
        // Whole, and a few bytes at a time (a varint, a header, an item split anywhere).
        for chunk in [pb.len(), 7, 1] {
            let mut got = list_json(&pb, chunk);
            // The server gave the two requests two continue tokens (the protobuf one's
            // `start` is "/cm2\u0000", the JSON one's "cm2\u0000"): the token is the
            // protobuf body's, verbatim, and the rest is the JSON's byte for byte.
            if let (Some(token), Some(theirs)) =
                (string_of(&got, "continue"), string_of(&want, "continue"))
            {
                let token = token.to_owned();
                assert!(pb.windows(token.len()).any(|w| w == token.as_bytes()));
                got = got.replace(&token, theirs);
            }
            assert_eq!(got, want, "{name} read {chunk} bytes at a time");
        }
    }
    // The first page's paging fields, as the reflector's pager reads them.
    let page1 = list_json(&read("list-page1.pb"), 64);
    assert!(
        page1.contains(r#""metadata":{"resourceVersion":"22205","continue":"eyJ"#)
            && page1.contains(r#","remainingItemCount":2},"items":["#),
        "{page1}"
    );
}

#[test]
fn a_watch_decodes_to_the_servers_events_frame_by_frame() {
    let want = String::from_utf8(read("watch.json")).unwrap();
    let got = watch_json(&read("watch.pb"));
    assert_eq!(got, want);
    let types: Vec<&str> = got.lines().map(|l| &l[9..l.find("\",").unwrap()]).collect();
    assert_eq!(
        types[..3],
        ["MODIFIED", "ADDED", "DELETED"],
        "the patch, the create, the delete"
    );
}

#[test]
fn an_expired_watch_is_one_error_event_with_its_410_status() {
    let got = watch_json(&read("watch-expired.pb"));
    assert_eq!(got, String::from_utf8(read("watch-expired.json")).unwrap());
    assert!(got.contains(r#""reason":"Expired","code":410"#), "{got}");
}

/// The end bookmark's `kubernetes.io/initial-events-list-blueprint` is the empty list in
/// the response's own encoding (apiserver's watch handler): protobuf in the protobuf
/// stream, JSON in the JSON one. The protobuf blueprint decodes to the JSON blueprint (Go's
/// `"items":null` and its encoder's `\n`), and the events are the JSON's byte for byte.
#[test]
fn a_streaming_list_ends_with_its_initial_events_end_bookmark() {
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut got = watch_json(&read("streaming-list.pb"));
    let want = String::from_utf8(read("streaming-list.json")).unwrap();
    let key = "kubernetes.io/initial-events-list-blueprint";
    let (ours, theirs) = (
        string_of(&got, key).unwrap(),
        string_of(&want, key).unwrap(),
    );
    let mut blueprint = Vec::new();
    object(table(), &b64.decode(ours).unwrap(), &mut blueprint).unwrap();
    blueprint.push(b'\n');
    assert_eq!(
        String::from_utf8(blueprint).unwrap(),
        String::from_utf8(b64.decode(theirs).unwrap()).unwrap()
    );
    got = got.replace(&ours.to_owned(), theirs);
    assert_eq!(got, want);
    let last = got.lines().last().unwrap();
    assert!(
        last.starts_with(r#"{"type":"BOOKMARK""#)
            && last.contains(r#""annotations":{"k8s.io/initial-events-end":"true","#),
        "{last}"
    );
}

#[test]
fn a_404_is_the_servers_status() {
    let mut got = Vec::new();
    object(table(), &read("notfound.pb"), &mut got).unwrap();
    assert_eq!(
        String::from_utf8(got).unwrap(),
        server_json("notfound.json")
    );
}

/// A metadata informer's list: kube-apiserver's JSON gives each item `kind` and
/// `apiVersion` (its protobuf has no field for them), as the genuine JSON capture of another
/// such list shows (`{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1",…}`).
#[test]
fn a_partial_object_metadata_list_gives_each_item_its_kind() {
    let got = list_json(&read("meta-list.pb"), 5);
    assert_eq!(
        got,
        r#"{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"22209"},"items":[{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"s1","namespace":"pbcap","uid":"782b2c97-e5e3-48ce-ae7b-3e962b792aaa","resourceVersion":"22205","creationTimestamp":"2026-11-27T16:35:49Z","managedFields":[{"manager":"kubectl-create","operation":"Update","apiVersion":"v1","time":"2026-11-27T16:35:49Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:p":{}},"f:type":{}}}]}}]}"#
    );
}

/// A list over 128 KiB comes gzipped (`Content-Encoding: gzip`, which client-go's
/// transport undoes): once gunzipped, the same decoder, whole or in chunks.
#[test]
fn a_gzipped_list_decodes_once_gunzipped() {
    let mut pb = Vec::new();
    flate2::read::GzDecoder::new(&read("gzip-list.pb.gz")[..])
        .read_to_end(&mut pb)
        .unwrap();
    assert!(pb.len() > 128 << 10, "{} bytes", pb.len());
    let whole = list_json(&pb, pb.len());
    assert_eq!(list_json(&pb, 4096), whole);
    let v: serde_json::Value = serde_json::from_str(&whole).unwrap();
    assert_eq!(v["kind"], "ConfigMapList");
    let items = v["items"].as_array().unwrap();
    assert!(items.len() > 30, "{} items", items.len());
    for item in items {
        assert!(
            item.get("kind").is_none(),
            "a list's items have no kind: {item}"
        );
        assert!(item["metadata"]["name"].is_string(), "{item}");
        assert!(item["data"].is_object(), "{item}");
    }
}
