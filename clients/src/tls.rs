//! The TLS settings the Redis and PostgreSQL clients hand rustls (etcd's
//! goes through tonic's own): which authorities to trust, and how much of
//! the server's certificate to check. Full checking (the chain and the name)
//! is the rule; PostgreSQL's `sslmode` asks for less in two of its modes,
//! as libpq does: `require` encrypts without checking anything unless a CA
//! file is given, and `verify-ca` checks the chain but not the name.

use crate::endpoint::{Host, TrustedRoots};
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::sync::Arc;

/// How much of the server's certificate is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verification {
    /// The chain up to a trusted authority, and the name the URL gives.
    Full,
    /// The chain only (PostgreSQL's `verify-ca`).
    ChainOnly,
    /// Nothing: the connection is encrypted, the server not authenticated
    /// (PostgreSQL's `require` with no CA file, as libpq does it).
    Nothing,
}

/// The certificates of a PEM text, or why there are none.
pub(crate) fn certificates(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, String> {
    let certificates =
        CertificateDer::pem_slice_iter(pem).collect::<Result<Vec<_>, _>>().map_err(|error| error.to_string())?;
    if certificates.is_empty() {
        return Err("no PEM certificate in it".to_owned());
    }
    Ok(certificates)
}

/// The one cryptography provider this crate uses (ring), named rather than
/// taken from the process's default, so that no other crate's choice changes it.
#[expect(
    deprecated,
    reason = "rustls deprecates ring for lacking post-quantum key exchange; ring builds with the C compiler \
              alone (aws-lc-rs wants more of a C toolchain) and is the provider etcd-client's tonic uses here"
)]
fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The authorities `roots` names, as rustls holds them.
fn root_store(roots: &TrustedRoots) -> Result<RootCertStore, String> {
    let mut store = RootCertStore::empty();
    match roots {
        TrustedRoots::System => {
            let found = rustls_native_certs::load_native_certs();
            let (added, _) = store.add_parsable_certificates(found.certs);
            if added == 0 {
                return Err(format!(
                    "the system has no trusted certificate authorities ({} error(s) reading them); name a CA file in the URL",
                    found.errors.len()
                ));
            }
        }
        TrustedRoots::File { path, pem } => {
            for certificate in certificates(pem).map_err(|error| format!("{}: {error}", path.display()))? {
                store.add(certificate).map_err(|error| format!("{}: {error}", path.display()))?;
            }
        }
    }
    Ok(store)
}

/// A rustls client configuration that trusts `roots` and checks as much as `verification` says.
pub(crate) fn client_config(roots: &TrustedRoots, verification: Verification) -> Result<ClientConfig, String> {
    let builder = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|error| format!("TLS: {error}"))?;
    let chain = match verification {
        Verification::Full => return Ok(builder.with_root_certificates(root_store(roots)?).with_no_client_auth()),
        Verification::ChainOnly => Some(
            WebPkiServerVerifier::builder_with_provider(Arc::new(root_store(roots)?), provider())
                .build()
                .map_err(|error| format!("TLS: {error}"))?,
        ),
        Verification::Nothing => None,
    };
    let check = Arc::new(PartialCheck { chain, provider: provider() });
    let config = builder.dangerous().with_custom_certificate_verifier(check).with_no_client_auth();
    Ok(config)
}

/// The name TLS checks the server's certificate against: the URL's host.
pub(crate) fn server_name(host: &Host) -> Result<ServerName<'static>, String> {
    match host {
        Host::Address(address) => Ok(ServerName::IpAddress((*address).into())),
        Host::Name(name) => {
            ServerName::try_from(name.clone()).map_err(|error| format!("`{name}` cannot name a TLS server ({error})"))
        }
    }
}

/// The two partial checks libpq's `sslmode` asks for: the chain only
/// (`chain` given: checked as the full check does, a certificate whose only
/// fault is a name other than the URL's accepted), or nothing (any
/// certificate accepted). Either way the handshake's signatures are checked,
/// so the session is encrypted to whoever holds the certificate's key.
#[derive(Debug)]
struct PartialCheck {
    chain: Option<Arc<WebPkiServerVerifier>>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for PartialCheck {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else { return Ok(ServerCertVerified::assertion()) };
        // webpki checks the chain before the name, so a name error means the chain passed.
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            checked => checked,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        certificate: &CertificateDer<'_>,
        signature: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        rustls::crypto::verify_tls12_signature(message, certificate, signature, algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        certificate: &CertificateDer<'_>,
        signature: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        rustls::crypto::verify_tls13_signature(message, certificate, signature, algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}

/// The error and its causes, as one line.
pub(crate) fn full_message(error: &(dyn std::error::Error + 'static)) -> String {
    let mut message = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        message.push_str(": ");
        message.push_str(&inner.to_string());
        cause = inner.source();
    }
    message
}

/// What rustls said, when a TLS failure is among the error's causes
/// (tokio-rustls wraps it in an I/O error, which hides it from `source`).
pub(crate) fn tls_cause(error: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(inner) = cause {
        if let Some(tls) = inner.downcast_ref::<rustls::Error>() {
            return Some(tls.to_string());
        }
        let wrapped = inner.downcast_ref::<std::io::Error>().and_then(std::io::Error::get_ref);
        if let Some(tls) = wrapped.and_then(|wrapped| wrapped.downcast_ref::<rustls::Error>()) {
            return Some(tls.to_string());
        }
        cause = inner.source();
    }
    None
}
