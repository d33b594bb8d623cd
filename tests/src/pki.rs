//! A private CA and a server certificate for 127.0.0.1 made with `rcgen`, for the tests of TLS
//! (the Redis ports, an https metrics API), with an expired one and one for another host.

use std::path::PathBuf;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use tempfile::TempDir;

/// A private CA and a server certificate it signed, as PEM files in a temporary directory.
pub struct Pki {
    _dir: TempDir,
    /// The CA's certificate.
    pub ca: PathBuf,
    /// The server's certificate (SAN `IP:127.0.0.1`, `DNS:localhost`).
    pub cert: PathBuf,
    /// The server's key.
    pub key: PathBuf,
    /// A certificate of the same key for 127.0.0.1 that expired on 2001-01-02.
    pub expired: PathBuf,
    /// A certificate of the same key, valid, for `wrong.example` only.
    pub wrong_host: PathBuf,
}

impl Pki {
    /// Makes the CA and the certificate.
    ///
    /// # Panics
    ///
    /// If a key, a certificate or a file cannot be made.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Pki {
        let dir = TempDir::new().expect("temporary directory for certificates");

        let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "slotscope test CA");
        ca_params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca_key = KeyPair::generate().expect("CA key");
        let ca_cert = ca_params.self_signed(&ca_key).expect("self-signed CA");
        let issuer = Issuer::new(ca_params, ca_key);

        let mut params =
            CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
                .expect("server params");
        params
            .distinguished_name
            .push(DnType::CommonName, "localhost");
        params.use_authority_key_identifier_extension = true;
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        // ClientAuth too: on the TLS cluster bus each node is also a client of the others.
        params.extended_key_usages = vec![
            ExtendedKeyUsagePurpose::ServerAuth,
            ExtendedKeyUsagePurpose::ClientAuth,
        ];
        let key = KeyPair::generate().expect("server key");
        let cert = params.signed_by(&key, &issuer).expect("server certificate");
        let mut old = params.clone();
        old.not_before = rcgen::date_time_ymd(2000, 1, 1);
        old.not_after = rcgen::date_time_ymd(2001, 1, 2);
        let expired = old.signed_by(&key, &issuer).expect("expired certificate");
        let mut elsewhere =
            CertificateParams::new(vec!["wrong.example".to_owned()]).expect("params");
        elsewhere
            .distinguished_name
            .push(DnType::CommonName, "wrong.example");
        elsewhere.use_authority_key_identifier_extension = true;
        elsewhere.key_usages = params.key_usages.clone();
        elsewhere.extended_key_usages = params.extended_key_usages.clone();
        let wrong_host = elsewhere
            .signed_by(&key, &issuer)
            .expect("wrong-host certificate");

        let write = |name: &str, pem: String| {
            let path = dir.path().join(name);
            std::fs::write(&path, pem).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
            path
        };
        let ca = write("ca.pem", ca_cert.pem());
        let cert = write("server.pem", cert.pem());
        let key = write("server-key.pem", key.serialize_pem());
        let expired = write("expired.pem", expired.pem());
        let wrong_host = write("wrong-host.pem", wrong_host.pem());
        Pki {
            _dir: dir,
            ca,
            cert,
            key,
            expired,
            wrong_host,
        }
    }
}
