//! The certificates generated at start (a CA and a serving certificate for `127.0.0.1` and
//! `localhost`) and the kubeconfig that carries the CA and the bearer token.

use std::sync::Arc;

use anyhow::Context;
use base64::Engine;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, KeyUsagePurpose, SanType};

/// A generated CA and the serving certificate it signed.
pub struct Certs {
    pub ca_pem: String,
    pub server_config: Arc<rustls::ServerConfig>,
}

/// Generates the CA and the serving certificate and builds the rustls config (ring provider,
/// ALPN h2 and http/1.1).
pub fn generate() -> anyhow::Result<Certs> {
    let ca_key = KeyPair::generate().context("generating the CA key")?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "kwatch-sim-ca");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_cert = ca_params
        .self_signed(&ca_key)
        .context("self-signing the CA")?;
    let issuer = rcgen::Issuer::new(ca_params, ca_key);

    let key = KeyPair::generate().context("generating the server key")?;
    let mut params = CertificateParams::new(vec!["localhost".to_string()])?;
    params
        .subject_alt_names
        .push(SanType::IpAddress(std::net::IpAddr::V4(
            std::net::Ipv4Addr::LOCALHOST,
        )));
    params
        .distinguished_name
        .push(DnType::CommonName, "kwatch-sim");
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
    let cert = params
        .signed_by(&key, &issuer)
        .context("signing the server certificate")?;

    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let chain = vec![cert.der().clone(), ca_cert.der().clone()];
    let key_der = rustls::pki_types::PrivateKeyDer::try_from(key.serialize_der())
        .map_err(|e| anyhow::anyhow!("server key: {e}"))?;
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("TLS protocol versions")?
        .with_no_client_auth()
        .with_single_cert(chain, key_der)
        .context("TLS server config")?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Certs {
        ca_pem: ca_cert.pem(),
        server_config: Arc::new(config),
    })
}

/// A kubeconfig with context, cluster and user all named `kwatch-sim`, namespace `default`.
pub fn kubeconfig_yaml(url: &str, token: &str, ca_pem: Option<&str>) -> String {
    let ca_line = match ca_pem {
        Some(pem) => format!(
            "    certificate-authority-data: {}\n",
            base64::engine::general_purpose::STANDARD.encode(pem)
        ),
        None => String::new(),
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
         contexts:\n\
         - name: kwatch-sim\n\
         \x20 context:\n\
         \x20   cluster: kwatch-sim\n\
         \x20   user: kwatch-sim\n\
         \x20   namespace: default\n\
         current-context: kwatch-sim\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generates_certs_and_kubeconfig() {
        let c = generate().unwrap();
        assert!(c.ca_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        let y = kubeconfig_yaml("https://127.0.0.1:1", "tok", Some(&c.ca_pem));
        let v: serde_yaml::Value = serde_yaml::from_str(&y).unwrap();
        assert_eq!(v["clusters"][0]["cluster"]["server"], "https://127.0.0.1:1");
        assert_eq!(v["users"][0]["user"]["token"], "tok");
        assert_eq!(v["contexts"][0]["context"]["namespace"], "default");
        assert!(v["clusters"][0]["cluster"]["certificate-authority-data"].is_string());
    }
}
