//! client-go's transparent gzip, as Go's net/http does it: `Accept-Encoding: gzip` on a
//! request that names no encoding, and a `Content-Encoding: gzip` body decompressed as it
//! streams, read as a SERIES of gzip members. Go's `gzip.Reader` is multistream by
//! default; kube-apiserver 1.37 writes a compressed streaming list with a writer closed at
//! every flush, one member per event (kubernetes/kubernetes#139925, `WatchListCompression`),
//! which a one-member reader such as tower-http's refuses after the first event
//! (kube-rs/kube#2079). Each event's bytes are passed on as soon as they are decoded:
//! the decoder returns what it has whenever the connection has nothing more yet.

use std::task::{Context, Poll};

use async_compression::tokio::bufread::GzipDecoder;
use bytes::Bytes;
use futures::TryStreamExt as _;
use http::header::{ACCEPT_ENCODING, CONTENT_ENCODING, CONTENT_LENGTH};
use http::{HeaderValue, Request, Response};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt as _, BodyStream, StreamBody};
use hyper::body::{Body, Frame};
use tokio_util::io::{ReaderStream, StreamReader};

/// The error of a body that passed through [`Gunzip`].
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A layer that asks for gzip and decompresses it ([`Gunzip`]); off, it passes requests and
/// responses through untouched (kubeconfig's `disable-compression`).
#[derive(Debug, Clone, Copy)]
pub struct GunzipLayer {
    pub enabled: bool,
}

impl<S> tower::Layer<S> for GunzipLayer {
    type Service = Gunzip<S>;

    fn layer(&self, inner: S) -> Gunzip<S> {
        Gunzip {
            inner,
            enabled: self.enabled,
        }
    }
}

/// See [`GunzipLayer`] and the module's doc.
#[derive(Debug, Clone)]
pub struct Gunzip<S> {
    inner: S,
    enabled: bool,
}

impl<S, ReqBody, ResBody> tower::Service<Request<ReqBody>> for Gunzip<S>
where
    S: tower::Service<Request<ReqBody>, Response = Response<ResBody>>,
    S::Future: Send + 'static,
    ResBody: Body<Data = Bytes> + Send + Sync + 'static,
    ResBody::Error: Into<BoxError>,
{
    type Response = Response<BoxBody<Bytes, BoxError>>;
    type Error = S::Error;
    type Future = futures::future::BoxFuture<'static, Result<Self::Response, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request<ReqBody>) -> Self::Future {
        let enabled = self.enabled;
        if enabled && !req.headers().contains_key(ACCEPT_ENCODING) {
            req.headers_mut()
                .insert(ACCEPT_ENCODING, HeaderValue::from_static("gzip"));
        }
        let res = self.inner.call(req);
        Box::pin(async move { Ok(decompressed(res.await?, enabled)) })
    }
}

/// `res` with its body decompressed when it came gzipped (and `enabled`), else as it is.
fn decompressed<B>(res: Response<B>, enabled: bool) -> Response<BoxBody<Bytes, BoxError>>
where
    B: Body<Data = Bytes> + Send + Sync + 'static,
    B::Error: Into<BoxError>,
{
    let gzip = enabled
        && res
            .headers()
            .get(CONTENT_ENCODING)
            .is_some_and(|e| e.as_bytes().eq_ignore_ascii_case(b"gzip"));
    let (mut parts, body) = res.into_parts();
    if !gzip {
        return Response::from_parts(parts, body.map_err(Into::into).boxed());
    }
    // As Go's transport: the decoded body has neither the encoding nor its length.
    parts.headers.remove(CONTENT_ENCODING);
    parts.headers.remove(CONTENT_LENGTH);
    let compressed = BodyStream::new(body)
        .try_filter_map(|frame| async move { Ok(frame.into_data().ok()) })
        .map_err(|e| std::io::Error::other(e.into()));
    let mut decoder = GzipDecoder::new(StreamReader::new(compressed));
    decoder.multiple_members(true);
    let frames = ReaderStream::new(decoder)
        .map_ok(Frame::data)
        .map_err(BoxError::from);
    Response::from_parts(parts, StreamBody::new(frames).boxed())
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use futures::StreamExt as _;
    use http_body_util::Full;

    use super::*;

    fn member(text: &str) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(text.as_bytes()).unwrap();
        gz.finish().unwrap()
    }

    fn gzipped<B>(body: B) -> Response<B> {
        Response::builder()
            .header(CONTENT_ENCODING, "gzip")
            .body(body)
            .unwrap()
    }

    async fn text(res: Response<BoxBody<Bytes, BoxError>>) -> String {
        let bytes = res.into_body().collect().await.unwrap().to_bytes();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    /// Several members in one read, and a member cut across reads.
    #[tokio::test]
    async fn a_series_of_members_reads_as_one_body_however_it_is_cut() {
        let mut wire = member("{\"type\":\"ADDED\"}\n");
        wire.extend(member("{\"type\":\"BOOKMARK\"}\n"));
        wire.extend(member("{\"type\":\"DELETED\"}\n"));
        let want = "{\"type\":\"ADDED\"}\n{\"type\":\"BOOKMARK\"}\n{\"type\":\"DELETED\"}\n";
        let whole = decompressed(gzipped(Full::new(Bytes::from(wire.clone()))), true);
        assert!(whole.headers().get(CONTENT_ENCODING).is_none());
        assert_eq!(text(whole).await, want);
        for cut in [1, 7, 13, wire.len() - 3] {
            let chunks = [
                Bytes::copy_from_slice(&wire[..cut]),
                Bytes::copy_from_slice(&wire[cut..]),
            ];
            let stream = futures::stream::iter(chunks.map(|c| Ok::<_, BoxError>(Frame::data(c))));
            let res = decompressed(gzipped(StreamBody::new(stream)), true);
            assert_eq!(text(res).await, want, "cut at {cut}");
        }
    }

    /// An event is passed on as soon as its member has arrived, while the connection
    /// holds the next one back.
    #[tokio::test]
    async fn each_member_is_delivered_before_the_next_arrives() {
        let (tx, rx) = futures::channel::mpsc::unbounded::<Result<Frame<Bytes>, BoxError>>();
        let res = decompressed(gzipped(StreamBody::new(rx)), true);
        let mut body = BodyStream::new(res.into_body());
        tx.unbounded_send(Ok(Frame::data(Bytes::from(member("first\n")))))
            .unwrap();
        let first = body.next().await.unwrap().unwrap().into_data().unwrap();
        assert_eq!(first, "first\n");
        tx.unbounded_send(Ok(Frame::data(Bytes::from(member("second\n")))))
            .unwrap();
        let second = body.next().await.unwrap().unwrap().into_data().unwrap();
        assert_eq!(second, "second\n");
        drop(tx);
        assert!(body.next().await.is_none());
    }

    #[tokio::test]
    async fn off_or_not_gzipped_the_body_is_untouched() {
        let wire = member("x");
        let off = decompressed(gzipped(Full::new(Bytes::from(wire.clone()))), false);
        assert_eq!(off.headers()[CONTENT_ENCODING], "gzip");
        let bytes = off.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(bytes, wire);
        let plain = Response::new(Full::new(Bytes::from_static(b"plain")));
        assert_eq!(text(decompressed(plain, true)).await, "plain");
    }
}
