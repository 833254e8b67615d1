//! Response compression as kube-apiserver's APIResponseCompression does it (on by default
//! since 1.16; apiserver `endpoints/handlers/responsewriters/writers.go`,
//! `deferredResponseWriter`): a response to a request that accepts gzip is compressed at
//! level 1 when its body is over [`THRESHOLD`] bytes, with `Content-Encoding: gzip` and
//! `Vary: Accept-Encoding`; a smaller one goes as it is. The body is held only until it
//! passes the threshold, then compressed as it streams. Watch streams are not compressed
//! so: kube-apiserver serves them with a writer of their own, which from 1.37 compresses a
//! streaming list (`WatchListCompression`, beta and on by default:
//! kubernetes/kubernetes#139308) with a gzip writer closed at every flush, one member per
//! flushed chunk (kubernetes/kubernetes#139925): [`per_member`].

use std::io::Write as _;

use axum::body::{Body, BodyDataStream};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::Response;
use bytes::Bytes;
use flate2::write::GzEncoder;
use futures::StreamExt;

/// kube-apiserver's `defaultGzipThresholdBytes`: bodies up to this size are never
/// compressed.
pub const THRESHOLD: usize = 128 * 1024;

/// Whether the request's `Accept-Encoding` names gzip (a token of its comma-separated list,
/// parameters such as `;q=` ignored, as kube-apiserver reads it).
pub fn accepts(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|e| {
            let token = e.split(';').next().unwrap_or("").trim();
            token.eq_ignore_ascii_case("gzip")
        })
}

/// `resp` compressed when its body is over [`THRESHOLD`] bytes (the caller decides that
/// the request accepts gzip and that it is no watch). A body that fails before the
/// threshold is passed on with its error.
pub async fn compress(resp: Response) -> Response {
    if resp.headers().contains_key(header::CONTENT_ENCODING) {
        return resp;
    }
    let (mut parts, body) = resp.into_parts();
    let mut rest = body.into_data_stream();
    let mut head = Vec::new();
    while head.len() <= THRESHOLD {
        match rest.next().await {
            Some(Ok(data)) => head.extend_from_slice(&data),
            Some(Err(e)) => {
                let failed = futures::stream::iter([Ok(Bytes::from(head)), Err(e)]);
                return Response::from_parts(parts, Body::from_stream(failed));
            }
            None => return Response::from_parts(parts, Body::from(head)),
        }
    }
    gzipped(&mut parts.headers);
    // Level 1, kube-apiserver's `defaultGzipContentEncodingLevel`.
    let mut encoder = GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let first = encoder
        .write_all(&head)
        .map(|_| Bytes::from(take(&mut encoder)));
    let first = futures::stream::iter([first.map_err(axum::Error::new)]);
    let state = Gzip {
        encoder: Some(encoder),
        rest,
    };
    let body = first.chain(futures::stream::unfold(state, Gzip::next));
    Response::from_parts(parts, Body::from_stream(body))
}

/// The headers of a body that goes gzipped: its encoding, and no length.
fn gzipped(headers: &mut HeaderMap) {
    headers.remove(header::CONTENT_LENGTH);
    headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    headers.append(header::VARY, HeaderValue::from_static("Accept-Encoding"));
}

/// The compressed output produced so far.
fn take(encoder: &mut GzEncoder<Vec<u8>>) -> Vec<u8> {
    std::mem::take(encoder.get_mut())
}

/// The rest of a body being compressed; `encoder` is `None` once the trailer is out.
struct Gzip {
    encoder: Option<GzEncoder<Vec<u8>>>,
    rest: BodyDataStream,
}

impl Gzip {
    /// The next compressed chunk: as soon as the encoder has output, the trailer at the
    /// end.
    async fn next(mut self) -> Option<(Result<Bytes, axum::Error>, Gzip)> {
        let encoder = self.encoder.as_mut()?;
        loop {
            match self.rest.next().await {
                Some(Ok(data)) => {
                    if let Err(e) = encoder.write_all(&data) {
                        self.encoder = None;
                        return Some((Err(axum::Error::new(e)), self));
                    }
                    let out = take(encoder);
                    if !out.is_empty() {
                        return Some((Ok(Bytes::from(out)), self));
                    }
                }
                Some(Err(e)) => {
                    self.encoder = None;
                    return Some((Err(e), self));
                }
                None => {
                    let end = self.encoder.take()?.finish();
                    return Some((end.map(Bytes::from).map_err(axum::Error::new), self));
                }
            }
        }
    }
}

/// The first minor whose streaming lists are compressed ([`per_member`]).
pub const MEMBERS_FROM_MINOR: u32 = 37;

/// Whether a watch with the query `q` is a streaming list as 1.37 compresses it:
/// `sendInitialEvents=true`, or a watch from resourceVersion `""` or `"0"` with bookmarks,
/// which the server turns into one.
pub fn streaming_list(q: &std::collections::HashMap<String, String>) -> bool {
    let on = |k: &str| q.get(k).is_some_and(|v| v == "true" || v == "1");
    let legacy = q
        .get("resourceVersion")
        .is_none_or(|rv| rv.is_empty() || rv == "0");
    on("sendInitialEvents") || (legacy && on("allowWatchBookmarks"))
}

/// A watch stream compressed as kube-apiserver 1.37 compresses a streaming list: each
/// chunk the watch flushes, its own gzip member (level 1), so that a client reads each
/// event as soon as its member has arrived.
pub fn per_member(resp: Response) -> Response {
    let (mut parts, body) = resp.into_parts();
    gzipped(&mut parts.headers);
    let members = body.into_data_stream().map(|chunk| {
        let chunk = chunk?;
        let mut encoder = GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(&chunk).map_err(axum::Error::new)?;
        encoder.finish().map(Bytes::from).map_err(axum::Error::new)
    });
    Response::from_parts(parts, Body::from_stream(members))
}

#[cfg(test)]
mod tests {
    use std::io::Read as _;

    use super::*;

    fn body_of(len: usize) -> Vec<u8> {
        (0..len).map(|i| b"{\"kind\":\"Pod\"},"[i % 15]).collect()
    }

    async fn answer(chunks: Vec<Vec<u8>>) -> (Option<String>, Vec<u8>) {
        let stream = futures::stream::iter(chunks.into_iter().map(Ok::<_, axum::Error>));
        let resp = compress(Response::new(Body::from_stream(stream))).await;
        let encoding = resp
            .headers()
            .get(header::CONTENT_ENCODING)
            .map(|v| v.to_str().unwrap().to_owned());
        let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
            .await
            .unwrap();
        (encoding, bytes.to_vec())
    }

    #[tokio::test]
    async fn bodies_over_128_kib_are_gzipped_and_smaller_ones_are_not() {
        let small = body_of(THRESHOLD);
        let (encoding, got) = answer(vec![small[..1].to_vec(), small[1..].to_vec()]).await;
        assert_eq!((encoding, got), (None, small));

        let large = body_of(3 * THRESHOLD + 7);
        let chunks = large.chunks(50_000).map(<[u8]>::to_vec).collect();
        let (encoding, got) = answer(chunks).await;
        assert_eq!(encoding.as_deref(), Some("gzip"));
        assert!(got.len() < large.len() / 10, "{} bytes", got.len());
        let mut plain = Vec::new();
        flate2::read::GzDecoder::new(&got[..])
            .read_to_end(&mut plain)
            .unwrap();
        assert!(plain == large);
    }

    #[test]
    fn accept_encoding_is_a_list_of_tokens() {
        let of = |v: &str| {
            let mut h = HeaderMap::new();
            h.insert(header::ACCEPT_ENCODING, v.parse().unwrap());
            accepts(&h)
        };
        assert!(of("gzip"));
        assert!(of("deflate, GZIP;q=0.5"));
        assert!(!of("identity"));
        assert!(!of("x-gzip2"));
        assert!(!accepts(&HeaderMap::new()));
    }
}
