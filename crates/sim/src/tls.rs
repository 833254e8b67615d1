//! The certificates generated at start and the kubeconfig that carries the CA, the bearer
//! token and a client certificate.
//!
//! The serving certificate comes in the shapes users' clusters have (`--cert-shape`), each
//! with the certificate the kubeconfig names as `certificate-authority-data`:
//!
//! | shape | served | kubeconfig CA |
//! |---|---|---|
//! | `ca` | a leaf for 127.0.0.1/localhost/kwatch-sim.test signed by the sim's CA | the CA |
//! | `self-signed` | one self-signed `CA:TRUE` certificate (`openssl req -x509`'s default) | that certificate |
//! | `pinned-leaf` | a leaf signed by a CA the kubeconfig does not hold | the leaf itself |
//! | `ca-true-leaf` | a `CA:TRUE` leaf signed by the sim's CA | the CA |
//!
//! In every shape the sim's CA (`kwatch-sim-ca`) verifies client certificates: one it signed
//! authenticates as its CN, with its O values as groups, as kube-apiserver's x509
//! authenticator does.

use std::sync::Arc;

use super::auth::PeerCert;
use super::freeze::{WithConn, WithExtension};
use anyhow::Context;
use base64::Engine;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, KeyUsagePurpose, SanType};

/// The shape of the serving certificate (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum CertShape {
    /// A CA and a serving certificate it signed.
    #[default]
    Ca,
    /// A self-signed CA:TRUE serving certificate, named as the kubeconfig's CA.
    SelfSigned,
    /// A serving certificate signed by an unnamed CA, pinned as the kubeconfig's CA.
    PinnedLeaf,
    /// A CA:TRUE serving certificate signed by the sim's CA (Go accepts it, webpki does not).
    CaTrueLeaf,
}

/// The DNS name (besides `localhost`) every serving certificate carries, for
/// `tls-server-name` tests.
pub const EXTRA_DNS_NAME: &str = "kwatch-sim.test";

/// The identity of the kubeconfig's client-certificate user (`kwatch-sim-cert`).
pub const CERT_USER: &str = "kwatch-sim-cert";
pub const CERT_GROUP: &str = "system:masters";

/// A generated certificate and its key, PEM.
#[derive(Debug, Clone)]
pub struct Pem {
    pub cert: String,
    pub key: String,
}

/// Everything TLS the simulator serves with and writes into its kubeconfig.
pub struct Certs {
    /// The kubeconfig's `certificate-authority-data` (PEM), per the shape.
    pub ca_pem: String,
    pub server_config: Arc<rustls::ServerConfig>,
    /// The kubeconfig's client certificate (CN [`CERT_USER`], O [`CERT_GROUP`]).
    pub client: Pem,
    /// The sim's CA, which signs client certificates.
    issuer: rcgen::Issuer<'static, KeyPair>,
}

impl Certs {
    /// A client certificate signed by the sim's CA: CN `user`, O `group` (rcgen keeps one
    /// value per attribute type, so one group).
    pub fn client_cert(&self, user: &str, group: Option<&str>) -> anyhow::Result<Pem> {
        let key = KeyPair::generate().context("generating a client key")?;
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params.distinguished_name.push(DnType::CommonName, user);
        if let Some(g) = group {
            params.distinguished_name.push(DnType::OrganizationName, g);
        }
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
        let cert = params
            .signed_by(&key, &self.issuer)
            .context("signing a client certificate")?;
        Ok(Pem {
            cert: cert.pem(),
            key: key.serialize_pem(),
        })
    }
}

/// A CA certificate and its issuer.
fn new_ca(name: &str) -> anyhow::Result<(rcgen::Certificate, rcgen::Issuer<'static, KeyPair>)> {
    let ca_key = KeyPair::generate().context("generating the CA key")?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
    ca_params.distinguished_name.push(DnType::CommonName, name);
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_cert = ca_params
        .self_signed(&ca_key)
        .context("self-signing the CA")?;
    Ok((ca_cert, rcgen::Issuer::new(ca_params, ca_key)))
}

/// Serving-certificate parameters: 127.0.0.1, localhost and [`EXTRA_DNS_NAME`].
fn server_params() -> anyhow::Result<CertificateParams> {
    let mut params =
        CertificateParams::new(vec!["localhost".to_string(), EXTRA_DNS_NAME.to_string()])?;
    params
        .subject_alt_names
        .push(SanType::IpAddress(std::net::IpAddr::V4(
            std::net::Ipv4Addr::LOCALHOST,
        )));
    params
        .distinguished_name
        .push(DnType::CommonName, "kwatch-sim");
    Ok(params)
}

/// Generates the certificates of `shape` and builds the rustls config (ring provider, ALPN
/// h2 and http/1.1, client certificates optional and verified against the sim's CA).
pub fn generate(shape: CertShape) -> anyhow::Result<Certs> {
    let (ca_cert, issuer) = new_ca("kwatch-sim-ca")?;
    let key = KeyPair::generate().context("generating the server key")?;
    let mut params = server_params()?;
    let (chain, ca_pem) = match shape {
        CertShape::Ca | CertShape::PinnedLeaf => {
            params.key_usages = vec![
                KeyUsagePurpose::DigitalSignature,
                KeyUsagePurpose::KeyEncipherment,
            ];
            params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
            if shape == CertShape::Ca {
                let cert = params
                    .signed_by(&key, &issuer)
                    .context("signing the server certificate")?;
                (
                    vec![cert.der().clone(), ca_cert.der().clone()],
                    ca_cert.pem(),
                )
            } else {
                let (other_cert, other) = new_ca("kwatch-sim-unnamed-ca")?;
                let cert = params
                    .signed_by(&key, &other)
                    .context("signing the server certificate")?;
                let pem = cert.pem();
                (vec![cert.der().clone(), other_cert.der().clone()], pem)
            }
        }
        CertShape::CaTrueLeaf => {
            params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
            let cert = params
                .signed_by(&key, &issuer)
                .context("signing the server certificate")?;
            (
                vec![cert.der().clone(), ca_cert.der().clone()],
                ca_cert.pem(),
            )
        }
        CertShape::SelfSigned => {
            // What `openssl req -x509` makes: basicConstraints CA:TRUE, no EKU.
            params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
            let cert = params
                .self_signed(&key)
                .context("self-signing the server certificate")?;
            let pem = cert.pem();
            (vec![cert.der().clone()], pem)
        }
    };

    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut client_roots = rustls::RootCertStore::empty();
    client_roots
        .add(ca_cert.der().clone())
        .context("client CA")?;
    let client_verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
        Arc::new(client_roots),
        provider.clone(),
    )
    .allow_unauthenticated()
    .build()
    .context("client certificate verifier")?;
    let key_der = rustls::pki_types::PrivateKeyDer::try_from(key.serialize_der())
        .map_err(|e| anyhow::anyhow!("server key: {e}"))?;
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("TLS protocol versions")?
        .with_client_cert_verifier(client_verifier)
        .with_single_cert(chain, key_der)
        .context("TLS server config")?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let mut certs = Certs {
        ca_pem,
        server_config: Arc::new(config),
        client: Pem {
            cert: String::new(),
            key: String::new(),
        },
        issuer,
    };
    certs.client = certs.client_cert(CERT_USER, Some(CERT_GROUP))?;
    Ok(certs)
}

/// Go's net/http answer to a plain HTTP request on a TLS port (`net/http/server.go`).
const PLAIN_HTTP_ANSWER: &[u8] =
    b"HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n";

/// The rustls acceptor (with TCP_NODELAY) plus, after the handshake, the client certificate
/// the connection presented (already verified against the sim's CA) put into each request's
/// extensions as an `Arc<PeerCert>`.
#[derive(Clone)]
pub struct PeerCertAcceptor(
    pub axum_server::tls_rustls::RustlsAcceptor<super::freeze::FreezeAcceptor>,
);

/// A connection's service with its client certificate, when it presented one.
type WithPeer<S> = WithExtension<WithConn<S>, Arc<PeerCert>>;

type Accepted<S> = std::io::Result<(
    tokio_rustls::server::TlsStream<super::freeze::Frozen<tokio::net::TcpStream>>,
    WithPeer<S>,
)>;

impl<S: Send + 'static> axum_server::accept::Accept<tokio::net::TcpStream, S> for PeerCertAcceptor {
    type Stream = tokio_rustls::server::TlsStream<super::freeze::Frozen<tokio::net::TcpStream>>;
    type Service = WithPeer<S>;
    type Future = std::pin::Pin<Box<dyn std::future::Future<Output = Accepted<S>> + Send>>;

    fn accept(&self, stream: tokio::net::TcpStream, service: S) -> Self::Future {
        let acceptor = self.0.clone();
        Box::pin(async move {
            // A request in plain HTTP on the TLS port gets the answer Go's net/http gives
            // it for kube-apiserver (server.go: a `tls.RecordHeaderError` with its Conn set),
            // not a TLS alert: a first byte that is not a TLS handshake record (0x16).
            let mut first = [0u8; 1];
            if stream.peek(&mut first).await? == 1 && first[0] != 0x16 {
                use tokio::io::AsyncWriteExt;
                let mut stream = stream;
                let _ = stream.write_all(PLAIN_HTTP_ANSWER).await;
                let _ = stream.shutdown().await;
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "a plain HTTP request on the TLS port",
                ));
            }
            let (tls, service) = acceptor.accept(stream, service).await?;
            let peer = tls
                .get_ref()
                .1
                .peer_certificates()
                .and_then(|chain| chain.first())
                .and_then(|c| PeerCert::from_der(c))
                .map(Arc::new);
            Ok((
                tls,
                WithExtension {
                    inner: service,
                    value: peer,
                },
            ))
        })
    }
}

/// A kubeconfig with context, cluster and user all named `kwatch-sim` (the bearer token,
/// the current context) and a context and user `kwatch-sim-cert` (the client certificate),
/// namespace `default`.
pub fn kubeconfig_yaml(
    url: &str,
    token: &str,
    ca_pem: Option<&str>,
    client: Option<&Pem>,
) -> String {
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let ca_line = match ca_pem {
        Some(pem) => format!("    certificate-authority-data: {}\n", b64(pem)),
        None => String::new(),
    };
    let (cert_user, cert_context) = match client {
        Some(c) => (
            format!(
                "- name: {CERT_USER}\n\
                 \x20 user:\n\
                 \x20   client-certificate-data: {}\n\
                 \x20   client-key-data: {}\n",
                b64(&c.cert),
                b64(&c.key)
            ),
            format!(
                "- name: {CERT_USER}\n\
                 \x20 context:\n\
                 \x20   cluster: kwatch-sim\n\
                 \x20   user: {CERT_USER}\n\
                 \x20   namespace: default\n"
            ),
        ),
        None => (String::new(), String::new()),
    };
    format!(
        "apiVersion: v1\n\
         kind: Config\n\
         clusters:\n\
         - name: kwatch-sim\n\
         \x20 cluster:\n\
         \x20   server: {url}\n\
         {ca_line}\
         users:\n\
         - name: kwatch-sim\n\
         \x20 user:\n\
         \x20   token: {token}\n\
         {cert_user}\
         contexts:\n\
         - name: kwatch-sim\n\
         \x20 context:\n\
         \x20   cluster: kwatch-sim\n\
         \x20   user: kwatch-sim\n\
         \x20   namespace: default\n\
         {cert_context}\
         current-context: kwatch-sim\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generates_certs_and_kubeconfig() {
        let c = generate(CertShape::Ca).unwrap();
        assert!(c.ca_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        let y = kubeconfig_yaml(
            "https://127.0.0.1:1",
            "tok",
            Some(&c.ca_pem),
            Some(&c.client),
        );
        let v: serde_yaml::Value = serde_yaml::from_str(&y).unwrap();
        assert_eq!(v["clusters"][0]["cluster"]["server"], "https://127.0.0.1:1");
        assert_eq!(v["users"][0]["user"]["token"], "tok");
        assert_eq!(v["contexts"][0]["context"]["namespace"], "default");
        assert!(v["clusters"][0]["cluster"]["certificate-authority-data"].is_string());
        assert_eq!(v["users"][1]["name"], CERT_USER);
        assert!(v["users"][1]["user"]["client-certificate-data"].is_string());
        assert_eq!(v["contexts"][1]["context"]["user"], CERT_USER);
    }

    #[test]
    fn every_shape_generates() {
        for shape in [
            CertShape::Ca,
            CertShape::SelfSigned,
            CertShape::PinnedLeaf,
            CertShape::CaTrueLeaf,
        ] {
            let c = generate(shape).unwrap();
            assert!(
                c.ca_pem.starts_with("-----BEGIN CERTIFICATE-----"),
                "{shape:?}"
            );
            assert!(c.client.key.contains("PRIVATE KEY"), "{shape:?}");
        }
    }
}
