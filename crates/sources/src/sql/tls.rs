//! TLS for the database servers: the settings a connection URI carries, read the same way for
//! every engine, and the rustls client configuration they mean.
//!
//! The names are libpq's (`sslmode`, `sslrootcert`, `sslcert`, `sslkey`), which most managed
//! databases print in their connection strings; MySQL's spellings (`ssl-mode=VERIFY_IDENTITY`,
//! `ssl-ca`, `ssl-cert`, `ssl-key`) and ClickHouse clients' `secure=true` mean the same.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore};

/// How much a connection asks of TLS, weakest first (libpq's `sslmode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TlsMode {
    /// Never: plain TCP.
    Disable,
    /// TLS when the server offers it, plain otherwise; the certificate is not checked.
    Prefer,
    /// TLS or no connection; the certificate is not checked (unless `sslrootcert` names a CA:
    /// then as `VerifyCa`, as libpq does).
    Require,
    /// TLS with a certificate issued by a trusted CA, for any host name.
    VerifyCa,
    /// TLS with a certificate issued by a trusted CA for the host connected to.
    VerifyFull,
}

impl TlsMode {
    /// The mode `text` names: libpq's names, MySQL's (`REQUIRED`, `VERIFY_IDENTITY`, …), any
    /// case, `-` or `_`.
    fn parse(text: &str) -> Option<Self> {
        let text = text.to_ascii_lowercase().replace('_', "-");
        Some(match text.as_str() {
            "disable" | "disabled" => TlsMode::Disable,
            "prefer" | "preferred" => TlsMode::Prefer,
            "require" | "required" => TlsMode::Require,
            "verify-ca" => TlsMode::VerifyCa,
            "verify-full" | "verify-identity" => TlsMode::VerifyFull,
            _ => return None,
        })
    }
}

/// The certificates a connection trusts as issuers of the server's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustedRoots {
    /// Mozilla's root CAs, built in (those public cloud databases' certificates chain to).
    Bundled,
    /// The operating system's store (`sslrootcert=system`).
    System,
    /// The CA certificates in a PEM (or DER) file.
    File(PathBuf),
}

/// The TLS settings of one connection URI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsSettings {
    /// What the connection asks of TLS.
    pub mode: TlsMode,
    /// Whose certificates the server's must chain to, when checked.
    pub roots: TrustedRoots,
    /// The client certificate (chain) and its key, for servers that authenticate by them.
    pub client_identity: Option<(PathBuf, PathBuf)>,
}

/// The URI parameters read here, each with the setting it gives.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Parameter {
    Mode,
    RootCert,
    ClientCert,
    ClientKey,
    /// ClickHouse clients' `secure=true|false`.
    Secure,
}

fn parameter(name: &str) -> Option<Parameter> {
    Some(match name.to_ascii_lowercase().replace('_', "-").as_str() {
        "sslmode" | "ssl-mode" => Parameter::Mode,
        "sslrootcert" | "ssl-ca" => Parameter::RootCert,
        "sslcert" | "ssl-cert" => Parameter::ClientCert,
        "sslkey" | "ssl-key" => Parameter::ClientKey,
        "secure" => Parameter::Secure,
        _ => return None,
    })
}

/// libpq's TLS parameters that are not supported, with why, so that none is silently ignored.
fn unsupported(name: &str) -> Option<&'static str> {
    Some(match name.to_ascii_lowercase().as_str() {
        "sslpassword" => {
            "an encrypted client key is not supported: give the key unencrypted (`openssl pkey -in KEY -out PLAIN`), readable by schemascope only"
        }
        "sslcrl" | "sslcrldir" => "certificate revocation lists are not supported",
        "sslnegotiation" => "only PostgreSQL's standard TLS negotiation is supported",
        "sslcompression" => "TLS compression is not supported",
        "sslsni" => "the server name is always sent (SNI)",
        "ssl-fips-mode" | "ssl-cipher" | "tls-version" | "tls-ciphersuites" | "ssl-crl"
        | "ssl-crlpath" | "ssl-capath" => {
            "this TLS option is not supported (schemascope uses rustls' safe defaults)"
        }
        _ => return None,
    })
}

/// A `%XX`-escaped URI component decoded (`None` when an escape is malformed or the result is
/// not UTF-8).
pub(crate) fn percent_decoded(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

impl TlsSettings {
    /// Takes the TLS parameters out of `uri`'s query: the URI without them (for the engine's
    /// own parser) and the settings they give, `default` being the mode when none is named.
    /// The error says which parameter is wrong and how; it never repeats the URI (a password
    /// may be in it).
    pub fn take_from(uri: &str, default: TlsMode) -> Result<(String, TlsSettings), String> {
        // The query starts at the first `?` after the user info (a password may hold a `?`).
        let authority_end = uri.rfind('@').map_or(0, |at| at + 1);
        let Some(query_start) = uri[authority_end..].find('?').map(|at| authority_end + at) else {
            return Ok((uri.to_string(), TlsSettings::new(default, None, None, None)?));
        };
        let (base, query) = (&uri[..query_start], &uri[query_start + 1..]);
        let (query, fragment) = match query.split_once('#') {
            Some((query, fragment)) => (query, Some(fragment)),
            None => (query, None),
        };
        let mut kept = Vec::new();
        let (mut mode, mut root, mut cert, mut key, mut secure) = (None, None, None, None, None);
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            if let Some(reason) = unsupported(name) {
                return Err(format!("`{name}`: {reason}"));
            }
            let Some(which) = parameter(name) else {
                kept.push(pair);
                continue;
            };
            let value = percent_decoded(value)
                .ok_or_else(|| format!("`{name}` has a malformed %-escape"))?;
            let slot = match which {
                Parameter::Mode => &mut mode,
                Parameter::RootCert => &mut root,
                Parameter::ClientCert => &mut cert,
                Parameter::ClientKey => &mut key,
                Parameter::Secure => &mut secure,
            };
            if slot.as_ref().is_some_and(|(_, earlier): &(String, String)| *earlier != value) {
                return Err(format!("`{name}` is given twice with different values"));
            }
            *slot = Some((name.to_string(), value));
        }
        let named_mode = match (mode, secure) {
            (Some((name, value)), secure) => {
                if value.eq_ignore_ascii_case("allow") {
                    return Err(format!(
                        "`{name}=allow` (plain first, TLS only if the server insists) is not supported: use prefer"
                    ));
                }
                let parsed = TlsMode::parse(&value).ok_or_else(|| {
                    format!("`{name}={value}` is not a TLS mode (disable, prefer, require, verify-ca or verify-full)")
                })?;
                if let Some((_, secure)) = secure
                    && secure.eq_ignore_ascii_case("true") != (parsed >= TlsMode::Require)
                {
                    return Err(format!("`secure={secure}` and `{name}={value}` disagree"));
                }
                Some(parsed)
            }
            (None, Some((_, value))) => match value.to_ascii_lowercase().as_str() {
                "true" | "1" => Some(TlsMode::VerifyFull),
                "false" | "0" => Some(TlsMode::Disable),
                _ => return Err(format!("`secure={value}` is neither true nor false")),
            },
            (None, None) => None,
        };
        let settings = TlsSettings::new(
            named_mode.unwrap_or(default),
            root.map(|(_, v)| v),
            cert.map(|(_, v)| v),
            key.map(|(_, v)| v),
        )?;
        let mut rest = base.to_string();
        if !kept.is_empty() {
            rest.push('?');
            rest.push_str(&kept.join("&"));
        }
        if let Some(fragment) = fragment {
            rest.push('#');
            rest.push_str(fragment);
        }
        Ok((rest, settings))
    }

    fn new(
        mode: TlsMode,
        root: Option<String>,
        cert: Option<String>,
        key: Option<String>,
    ) -> Result<Self, String> {
        let roots = match root.as_deref() {
            None | Some("") => TrustedRoots::Bundled,
            Some("system") => TrustedRoots::System,
            Some(path) => TrustedRoots::File(PathBuf::from(path)),
        };
        // libpq: a CA named with `require` makes it `verify-ca`.
        let mode = match (&roots, mode) {
            (TrustedRoots::File(_) | TrustedRoots::System, TlsMode::Require) => TlsMode::VerifyCa,
            (_, mode) => mode,
        };
        let client_identity = match (cert, key) {
            (Some(cert), Some(key)) => Some((PathBuf::from(cert), PathBuf::from(key))),
            (None, None) => None,
            (Some(_), None) => {
                return Err("`sslcert` is given without `sslkey` (the client key)".into());
            }
            (None, Some(_)) => {
                return Err("`sslkey` is given without `sslcert` (the client certificate)".into());
            }
        };
        if mode == TlsMode::Disable && client_identity.is_some() {
            return Err("a client certificate is given but TLS is off (sslmode=disable, or ClickHouse without secure=true)".into());
        }
        if mode == TlsMode::Disable && roots != TrustedRoots::Bundled {
            return Err("a CA (sslrootcert) is given but TLS is off (sslmode=disable, or ClickHouse without secure=true)".into());
        }
        Ok(TlsSettings { mode, roots, client_identity })
    }

    /// The rustls configuration these settings mean: the trusted roots read and the client
    /// identity loaded now, so that a missing or unreadable file is reported when the source
    /// is added, not on the first statement.
    pub fn client_config(&self) -> Result<Arc<ClientConfig>, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS: {e}"))?;
        let builder =
            builder.dangerous().with_custom_certificate_verifier(self.verifier(provider)?);
        let config = match self.client_identity()? {
            Some((chain, key)) => builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| format!("TLS: the client certificate and key cannot be used: {e}"))?,
            None => builder.with_no_client_auth(),
        };
        Ok(Arc::new(config))
    }

    /// What checks the server's certificate, for the mode.
    fn verifier(
        &self,
        provider: Arc<CryptoProvider>,
    ) -> Result<Arc<dyn ServerCertVerifier>, String> {
        Ok(match self.mode {
            TlsMode::Disable | TlsMode::Prefer | TlsMode::Require => {
                Arc::new(Unchecked(provider.clone()))
            }
            TlsMode::VerifyCa | TlsMode::VerifyFull => {
                let roots = Arc::new(self.root_store()?);
                let webpki = WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
                    .build()
                    .map_err(|e| format!("TLS: the trusted certificates cannot be used: {e}"))?;
                let pinned = match &self.roots {
                    TrustedRoots::File(path) => certificates(path, "sslrootcert")?,
                    _ => Vec::new(),
                };
                Arc::new(Checked { webpki, pinned, names: self.mode == TlsMode::VerifyFull })
            }
        })
    }

    /// The trusted root certificates, read now.
    pub fn root_store(&self) -> Result<RootCertStore, String> {
        let mut store = RootCertStore::empty();
        match &self.roots {
            TrustedRoots::Bundled => {
                store.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
            }
            TrustedRoots::System => {
                let (added, _) = store.add_parsable_certificates(system_certificates()?);
                if added == 0 {
                    return Err(
                        "sslrootcert=system: the system's store holds no usable CA certificate"
                            .into(),
                    );
                }
            }
            TrustedRoots::File(path) => {
                for certificate in certificates(path, "sslrootcert")? {
                    store.add(certificate).map_err(|e| {
                        format!(
                            "sslrootcert `{}`: a certificate cannot be trusted: {e}",
                            path.display()
                        )
                    })?;
                }
            }
        }
        Ok(store)
    }

    /// The certificates of the trusted roots a client takes as certificates (not as a store),
    /// or `None` for the bundled Mozilla roots.
    pub fn root_certificates(&self) -> Result<Option<Vec<CertificateDer<'static>>>, String> {
        match &self.roots {
            TrustedRoots::Bundled => Ok(None),
            TrustedRoots::System => system_certificates().map(Some),
            TrustedRoots::File(path) => certificates(path, "sslrootcert").map(Some),
        }
    }

    /// The client certificate chain and key, read now.
    #[allow(clippy::type_complexity)]
    pub fn client_identity(
        &self,
    ) -> Result<Option<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)>, String> {
        let Some((cert, key)) = &self.client_identity else { return Ok(None) };
        let chain = certificates(cert, "sslcert")?;
        let bytes = read_bounded(key, "sslkey")?;
        if bytes.windows(9).any(|w| w == b"ENCRYPTED") {
            return Err(format!(
                "sslkey `{}` is encrypted; give the key unencrypted (`openssl pkey -in KEY -out PLAIN`), readable by schemascope only",
                key.display()
            ));
        }
        let key = PrivateKeyDer::from_pem_slice(&bytes)
            .or_else(|_| PrivateKeyDer::try_from(bytes.clone()).map_err(|_| ()))
            .map_err(|()| {
                format!(
                    "sslkey `{}` holds no private key (PEM or DER: PKCS#8, PKCS#1 or SEC1)",
                    key.display()
                )
            })?;
        Ok(Some((chain, key)))
    }
}

/// The operating system's CA certificates (`sslrootcert=system`).
fn system_certificates() -> Result<Vec<CertificateDer<'static>>, String> {
    let found = rustls_native_certs::load_native_certs();
    if found.certs.is_empty() {
        return Err(format!(
            "sslrootcert=system: no certificate was found in the system's store{}",
            found.errors.first().map(|e| format!(" ({e})")).unwrap_or_default()
        ));
    }
    Ok(found.certs)
}

/// Most bytes a certificate or key file may have: a bundle of every public CA is about 250 kB.
const MAX_CERTIFICATE_FILE_BYTES: u64 = 4 << 20;

/// The bytes of the certificate or key file at `path` (named `parameter` in the URI), bounded;
/// only a regular file is read (a FIFO would block, a device never end).
pub(crate) fn read_bounded(path: &Path, parameter: &str) -> Result<Vec<u8>, String> {
    crate::file::read_bytes(path, MAX_CERTIFICATE_FILE_BYTES, "a certificate or key file")
        .map_err(|e| format!("{parameter}: {e}"))
}

/// The certificates in a PEM file (or the one in a DER file).
fn certificates(path: &Path, parameter: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let bytes = read_bounded(path, parameter)?;
    let pem: Result<Vec<_>, _> = CertificateDer::pem_slice_iter(&bytes).collect();
    let certificates = match pem {
        Ok(found) if !found.is_empty() => found,
        Ok(_) if bytes.first() == Some(&0x30) => vec![CertificateDer::from(bytes)],
        Ok(_) => {
            return Err(format!("{parameter} `{}` holds no certificate", path.display()));
        }
        Err(e) => {
            return Err(format!("{parameter} `{}` is not a PEM file: {e}", path.display()));
        }
    };
    Ok(certificates)
}

/// What to do about a TLS failure the client reported in `message`, if it is one.
pub fn hint(message: &str) -> Option<&'static str> {
    let hints: [(&[&str], &str); 9] = [
        (
            &["CaUsedAsEndEntity"],
            "the server's certificate is a CA certificate (a self-signed one made with `openssl req -x509` is): name that very certificate with sslrootcert=PATH to trust it (PostgreSQL), or give the server a certificate issued by a CA",
        ),
        (
            &["InvalidPurpose", "ExtendedKeyUsage"],
            "the server's certificate is not for a TLS server (its extended key usage lacks serverAuth)",
        ),
        (
            &[
                "fatal alert: UnknownCA",
                "fatal alert: BadCertificate",
                "fatal alert: CertificateUnknown",
                "fatal alert: AccessDenied",
            ],
            "the server refused the client certificate: give one issued by a CA the server trusts, for this user (sslcert=PATH, sslkey=PATH)",
        ),
        (
            &["UnknownIssuer", "unknown issuer", "not signed by", "self-signed", "self signed"],
            "the server's certificate is not issued by a CA this source trusts: name the CA's certificate with sslrootcert=PATH (without it, Mozilla's public CAs are trusted), or use sslmode=require to encrypt without checking",
        ),
        (
            &["NotValidForName", "not valid for name"],
            "sslmode=verify-full checks that the certificate names the host connected to: connect by a name the certificate holds, or use sslmode=verify-ca to check the CA only",
        ),
        (
            &["certificate expired", "CertExpired", "certificate not valid yet", "NotValidYet"],
            "the server's certificate is outside its validity period",
        ),
        (
            &[
                "does not support TLS",
                "TlsNotSupported",
                "doesn't support SSL",
                "does not support SSL",
                "server does not have this capability",
            ],
            "the server does not offer TLS: use sslmode=prefer or sslmode=disable, or turn TLS on at the server",
        ),
        (
            &["CertificateRequired", "certificate required", "requires a valid client certificate"],
            "the server asks for a client certificate: give it with sslcert=PATH and sslkey=PATH",
        ),
        (
            &[
                "InvalidContentType",
                "CorruptMessage",
                "received corrupt message",
                "InvalidMessage",
                "HandshakeFailure",
                "tls handshake",
                "TLS handshake",
            ],
            "the TLS handshake failed: is the port the server's TLS port, and does the server speak TLS 1.2 or later?",
        ),
    ];
    hints
        .iter()
        .find(|(marks, _)| marks.iter().any(|mark| message.contains(mark)))
        .map(|(_, hint)| *hint)
}

/// `message` of a failed connection with what to do about it when it is a TLS failure.
pub fn explained(message: &str) -> String {
    match hint(message) {
        Some(hint) => format!("{message} — {hint}"),
        None => message.to_string(),
    }
}

/// Accepts any server certificate (`prefer`, `require`: encryption without authentication, as
/// libpq's) but still checks the handshake's signatures, so the session key is the server's.
#[derive(Debug)]
struct Unchecked(Arc<CryptoProvider>);

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `verify-ca` and `verify-full`: the certificate must chain to a trusted root (WebPKI), and
/// for `verify-full` name the host. WebPKI checks the chain before the name, so a name error
/// means the chain was good (`verify-ca` accepts it).
///
/// A server certificate that is itself one of the certificates named with `sslrootcert` is
/// trusted as libpq trusts it (a self-signed certificate, made with `openssl req -x509` as
/// PostgreSQL's documentation shows, is a CA certificate WebPKI refuses as a server's): by its
/// exact bytes, within its validity period, and for `verify-full` naming the host.
#[derive(Debug)]
struct Checked {
    webpki: Arc<WebPkiServerVerifier>,
    pinned: Vec<CertificateDer<'static>>,
    names: bool,
}

impl Checked {
    /// Whether the pinned certificate `end_entity` is valid now and, when names are checked,
    /// for `server_name`; `None` when it cannot be read (WebPKI's refusal then stands).
    fn pinned_holds(
        &self,
        end_entity: &CertificateDer<'_>,
        server_name: &ServerName<'_>,
        now: UnixTime,
    ) -> Option<Result<(), rustls::Error>> {
        use x509_cert::der::Decode;
        let parsed = x509_cert::Certificate::from_der(end_entity.as_ref()).ok()?;
        let validity = &parsed.tbs_certificate.validity;
        let now = now.as_secs();
        if now < validity.not_before.to_unix_duration().as_secs() {
            return Some(Err(rustls::Error::InvalidCertificate(CertificateError::NotValidYet)));
        }
        if now > validity.not_after.to_unix_duration().as_secs() {
            return Some(Err(rustls::Error::InvalidCertificate(CertificateError::Expired)));
        }
        if self.names {
            let certificate = match rustls::server::ParsedCertificate::try_from(end_entity) {
                Ok(certificate) => certificate,
                Err(e) => return Some(Err(e)),
            };
            return Some(rustls::client::verify_server_name(&certificate, server_name));
        }
        Some(Ok(()))
    }
}

impl ServerCertVerifier for Checked {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let verified = self.webpki.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        );
        match verified {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.names => Ok(ServerCertVerified::assertion()),
            Err(refused) if self.pinned.iter().any(|p| p.as_ref() == end_entity.as_ref()) => {
                match self.pinned_holds(end_entity, server_name, now) {
                    Some(Ok(())) => Ok(ServerCertVerified::assertion()),
                    Some(Err(failure)) => Err(failure),
                    None => Err(refused),
                }
            }
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn take(uri: &str) -> Result<(String, TlsSettings), String> {
        TlsSettings::take_from(uri, TlsMode::Prefer)
    }

    #[test]
    fn parameters_are_taken_out_and_the_rest_kept_in_order() {
        let (rest, tls) = take(
            "postgres://u:p%3Fw@h:5/db?application_name=x&sslmode=verify-full&sslrootcert=%2Ftmp%2Fmy%20ca.pem&connect_timeout=3",
        )
        .unwrap();
        assert_eq!(rest, "postgres://u:p%3Fw@h:5/db?application_name=x&connect_timeout=3");
        assert_eq!(tls.mode, TlsMode::VerifyFull);
        assert_eq!(tls.roots, TrustedRoots::File("/tmp/my ca.pem".into()));
        assert_eq!(tls.client_identity, None);
    }

    #[test]
    fn the_default_holds_without_parameters_and_a_query_in_the_password_is_not_a_query() {
        let (rest, tls) = take("mysql://u:a?b=c@h/db").unwrap();
        assert_eq!(rest, "mysql://u:a?b=c@h/db");
        assert_eq!(tls.mode, TlsMode::Prefer);
        assert_eq!(tls.roots, TrustedRoots::Bundled);
        let (rest, tls) = TlsSettings::take_from("clickhouse://h/db", TlsMode::Disable).unwrap();
        assert_eq!((rest.as_str(), tls.mode), ("clickhouse://h/db", TlsMode::Disable));
    }

    #[test]
    fn mysql_and_clickhouse_spellings_mean_the_same() {
        let (rest, tls) = take(
            "mysql://h/db?ssl-mode=VERIFY_IDENTITY&ssl-ca=ca.pem&ssl-cert=c.pem&ssl-key=c.key",
        )
        .unwrap();
        assert_eq!(rest, "mysql://h/db");
        assert_eq!(tls.mode, TlsMode::VerifyFull);
        assert_eq!(tls.client_identity, Some(("c.pem".into(), "c.key".into())));
        assert_eq!(take("mysql://h/db?ssl_mode=required").unwrap().1.mode, TlsMode::Require);
        assert_eq!(take("clickhouse://h/db?secure=true").unwrap().1.mode, TlsMode::VerifyFull);
        assert_eq!(take("clickhouse://h/db?secure=false").unwrap().1.mode, TlsMode::Disable);
        assert_eq!(
            take("clickhouse://h/db?secure=true&sslmode=require").unwrap().1.mode,
            TlsMode::Require
        );
    }

    #[test]
    fn require_with_a_ca_verifies_the_chain_as_libpq_does() {
        assert_eq!(take("postgres://h/db?sslmode=require").unwrap().1.mode, TlsMode::Require);
        assert_eq!(
            take("postgres://h/db?sslmode=require&sslrootcert=ca.pem").unwrap().1.mode,
            TlsMode::VerifyCa
        );
    }

    #[test]
    fn wrong_settings_are_refused_with_what_is_wrong() {
        let wrong = |uri: &str| take(uri).unwrap_err();
        assert!(wrong("postgres://h/db?sslmode=verify").contains("not a TLS mode"));
        assert!(wrong("postgres://h/db?sslcert=c.pem").contains("without `sslkey`"));
        assert!(wrong("postgres://h/db?sslkey=c.key").contains("without `sslcert`"));
        assert!(wrong("postgres://h/db?sslpassword=x").contains("encrypted client key"));
        assert!(wrong("postgres://h/db?sslcrl=x").contains("revocation"));
        assert!(wrong("postgres://h/db?sslmode=require&ssl-mode=disabled").contains("twice"));
        assert!(wrong("clickhouse://h/db?secure=maybe").contains("neither true nor false"));
        assert!(wrong("clickhouse://h/db?secure=false&sslmode=require").contains("disagree"));
        assert!(wrong("postgres://h/db?sslmode=disable&sslcert=a&sslkey=b").contains("TLS is off"));
        assert!(wrong("clickhouse://h/db?sslrootcert=ca.pem&secure=false").contains("TLS is off"));
        assert!(wrong("postgres://h/db?sslmode=allow").contains("use prefer"));
        assert!(wrong("postgres://h/db?sslrootcert=%zz").contains("malformed"));
    }

    #[test]
    fn files_that_are_missing_or_not_certificates_are_reported_when_read() {
        let dir = tempfile::tempdir().unwrap();
        let not_pem = dir.path().join("notes.txt");
        std::fs::write(&not_pem, "hello").unwrap();
        let settings = |root: &Path| TlsSettings {
            mode: TlsMode::VerifyFull,
            roots: TrustedRoots::File(root.to_path_buf()),
            client_identity: None,
        };
        let missing = settings(&dir.path().join("nope.pem")).client_config().unwrap_err();
        assert!(missing.starts_with("sslrootcert: cannot read"), "{missing}");
        // A FIFO would block the reader: only regular files are read.
        let fifo = dir.path().join("fifo.pem");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let blocked = settings(&fifo).client_config().unwrap_err();
        assert!(blocked.contains("not a regular file"), "{blocked}");
        let empty = settings(&not_pem).client_config().unwrap_err();
        assert!(empty.contains("holds no certificate"), "{empty}");
        let bundled = TlsSettings { roots: TrustedRoots::Bundled, ..settings(&not_pem) };
        assert!(bundled.root_store().unwrap().len() > 100);
    }

    #[test]
    fn a_self_signed_server_certificate_named_as_the_root_is_trusted_as_libpq_does() {
        let dir = tempfile::tempdir().unwrap();
        let (cert, key) = (dir.path().join("self.pem"), dir.path().join("self.key"));
        // As PostgreSQL's documentation makes one: `req -x509` marks it a CA.
        let made = std::process::Command::new("openssl")
            .args(["req", "-x509", "-new", "-nodes", "-newkey", "ec", "-pkeyopt"])
            .args(["ec_paramgen_curve:prime256v1", "-days", "30", "-subj", "/CN=db.example.com"])
            .args(["-addext", "subjectAltName=DNS:db.example.com", "-keyout"])
            .arg(&key)
            .arg("-out")
            .arg(&cert)
            .output()
            .unwrap();
        assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
        let settings = |mode| TlsSettings {
            mode,
            roots: TrustedRoots::File(cert.clone()),
            client_identity: None,
        };
        let der = certificates(&cert, "test").unwrap().remove(0);
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let check = |mode, name: &str, now: UnixTime| {
            let verifier = settings(mode).verifier(provider.clone()).unwrap();
            let name = ServerName::try_from(name.to_string()).unwrap();
            verifier.verify_server_cert(&der, &[], &name, &[], now).map(|_| ())
        };
        let today = UnixTime::now();
        assert_eq!(check(TlsMode::VerifyFull, "db.example.com", today), Ok(()));
        assert!(check(TlsMode::VerifyFull, "other.example.com", today).is_err());
        assert_eq!(check(TlsMode::VerifyCa, "other.example.com", today), Ok(()));
        let in_a_year =
            UnixTime::since_unix_epoch(Duration::from_secs(today.as_secs() + 365 * 86_400));
        assert_eq!(
            check(TlsMode::VerifyFull, "db.example.com", in_a_year),
            Err(rustls::Error::InvalidCertificate(CertificateError::Expired))
        );
        // Trusted only when named: under another root it is the CA WebPKI refuses.
        let other = TlsSettings { roots: TrustedRoots::Bundled, ..settings(TlsMode::VerifyCa) };
        let name = ServerName::try_from("db.example.com").unwrap();
        let refused = other.verifier(provider.clone()).unwrap().verify_server_cert(
            &der,
            &[],
            &name,
            &[],
            today,
        );
        assert!(refused.is_err());
    }

    #[test]
    fn hints_name_what_to_change() {
        assert!(explained("invalid peer certificate: UnknownIssuer").contains("sslrootcert=PATH"));
        assert!(
            explained("certificate not valid for name \"127.0.0.1\"; certificate is only valid for DnsName(\"localhost\")")
                .contains("verify-ca")
        );
        assert_eq!(explained("password authentication failed"), "password authentication failed");
    }
}
