//! What a server's URL says, read the same way for the three clients: the
//! host and port, who logs in and with what password, the path, the query's
//! parameters (each client names the ones it knows and refuses the others),
//! and which certificate authorities TLS trusts. A URL is only ever shown
//! with its password replaced by `***`.
//!
//! Apart from the URL, a client can be told to dial another address (`via`):
//! live mode reaches every server through a loopback proxy of its own, and
//! TLS must still check the certificate against the host the URL names.

use std::collections::BTreeMap;
use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;

/// A URL a client cannot use, and why, in one sentence that names it (its
/// password hidden).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndpointError(String);

impl EndpointError {
    pub(crate) fn new(message: impl Into<String>) -> EndpointError {
        EndpointError(message.into())
    }
}

impl fmt::Display for EndpointError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for EndpointError {}

/// The host a URL names: what TLS checks the certificate against, and where
/// the client dials unless it is routed elsewhere.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Host {
    Name(String),
    Address(IpAddr),
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Name(name) => f.write_str(name),
            Host::Address(address) => address.fmt(f),
        }
    }
}

/// Which certificate authorities a TLS connection trusts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum TrustedRoots {
    /// The system's (Debian's `ca-certificates`, read where OpenSSL keeps them).
    System,
    /// The certificates of a PEM file the URL names.
    File { path: PathBuf, pem: Vec<u8> },
}

/// A server URL read: its parts, the credentials percent-decoded.
#[derive(Clone)]
pub(crate) struct ServerUrl {
    pub(crate) scheme: String,
    pub(crate) host: Host,
    pub(crate) port: u16,
    pub(crate) user: Option<String>,
    pub(crate) password: Option<String>,
    /// The path without its leading `/`.
    pub(crate) path: String,
    pub(crate) parameters: BTreeMap<String, String>,
    /// The URL as it may be shown: its password replaced by `***`.
    pub(crate) shown: String,
}

impl fmt::Debug for ServerUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown)
    }
}

/// What a client accepts: its schemes, its default port, and the query
/// parameters it knows.
pub(crate) struct UrlRules<'a> {
    pub(crate) schemes: &'a [&'a str],
    pub(crate) default_port: u16,
    pub(crate) parameters: &'a [&'a str],
}

impl ServerUrl {
    /// Reads `text` by `rules`; a URL they do not allow is refused with a
    /// sentence that names what is wrong.
    pub(crate) fn parse(text: &str, rules: &UrlRules<'_>) -> Result<ServerUrl, EndpointError> {
        let shown = redacted(text);
        let url = url::Url::parse(text).map_err(|error| EndpointError(format!("`{shown}` is not a URL ({error})")))?;
        let scheme = url.scheme().to_owned();
        if !rules.schemes.contains(&scheme.as_str()) {
            let schemes: Vec<String> = rules.schemes.iter().map(|scheme| format!("{scheme}://")).collect();
            return Err(EndpointError(format!("`{shown}` is not a {} URL", schemes.join(" or "))));
        }
        let host = match url.host() {
            Some(url::Host::Domain(name)) if !name.is_empty() => Host::Name(name.to_owned()),
            Some(url::Host::Ipv4(address)) => Host::Address(IpAddr::V4(address)),
            Some(url::Host::Ipv6(address)) => Host::Address(IpAddr::V6(address)),
            Some(url::Host::Domain(_)) | None => return Err(EndpointError(format!("`{shown}` names no host"))),
        };
        let decode = |part: &str, what: &str| {
            percent_encoding::percent_decode_str(part)
                .decode_utf8()
                .map(|decoded| decoded.into_owned())
                .map_err(|_| EndpointError(format!("`{shown}`: the {what} is not UTF-8 once percent-decoded")))
        };
        let user = Some(url.username()).filter(|user| !user.is_empty()).map(|user| decode(user, "user")).transpose()?;
        let password = url.password().map(|password| decode(password, "password")).transpose()?;
        let mut parameters = BTreeMap::new();
        for (key, value) in url.query_pairs() {
            if !rules.parameters.contains(&key.as_ref()) {
                let known = if rules.parameters.is_empty() {
                    "it takes none".to_owned()
                } else {
                    format!("it knows {}", rules.parameters.join(", "))
                };
                return Err(EndpointError(format!(
                    "`{shown}`: the parameter `{key}` is not one this client knows ({known})"
                )));
            }
            if parameters.insert(key.clone().into_owned(), value.into_owned()).is_some() {
                return Err(EndpointError(format!("`{shown}`: the parameter `{key}` is given twice")));
            }
        }
        Ok(ServerUrl {
            scheme,
            host,
            port: url.port().unwrap_or(rules.default_port),
            user,
            password,
            path: url.path().trim_start_matches('/').to_owned(),
            parameters,
            shown,
        })
    }

    /// The certificate authorities a parameter names (a PEM file), or the
    /// system's when it names none.
    pub(crate) fn trusted_roots(&self, parameter: &str) -> Result<TrustedRoots, EndpointError> {
        let Some(path) = self.parameters.get(parameter) else { return Ok(TrustedRoots::System) };
        let path = PathBuf::from(path);
        let pem = std::fs::read(&path).map_err(|error| {
            EndpointError(format!("`{}`: cannot read the CA certificate {} ({error})", self.shown, path.display()))
        })?;
        crate::tls::certificates(&pem).map_err(|error| {
            EndpointError(format!("`{}`: {} holds no usable certificate ({error})", self.shown, path.display()))
        })?;
        Ok(TrustedRoots::File { path, pem })
    }
}

/// What every endpoint type (`RedisEndpoint`, `PostgresEndpoint`,
/// `EtcdEndpoint`, each with a `url: ServerUrl` and a `via`) shows and how
/// each is routed: its URL without the password, in `Display` and `Debug`
/// alike, and `via`.
macro_rules! endpoint_basics {
    ($endpoint:ident) => {
        /// The URL without its password.
        impl std::fmt::Display for $endpoint {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.url.shown)
            }
        }

        impl std::fmt::Debug for $endpoint {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($endpoint)).field("url", &self.url).field("via", &self.via).finish()
            }
        }

        impl $endpoint {
            /// The same server, dialled at `address` (a proxy on the way to
            /// it); TLS still checks the certificate against the URL's host.
            pub fn via(mut self, address: std::net::SocketAddr) -> $endpoint {
                self.via = Some(address);
                self
            }

            /// The host the URL names (a name or an address), and its port.
            pub fn host_and_port(&self) -> (String, u16) {
                (self.url.host.to_string(), self.url.port)
            }
        }
    };
}
pub(crate) use endpoint_basics;

/// `text` with the password of its user information replaced by `***`, so
/// that no message or log shows it, whether or not the rest is a valid URL.
pub fn redacted(text: &str) -> String {
    let Some((scheme, rest)) = text.split_once("://") else { return text.to_owned() };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let Some(at) = rest[..authority_end].rfind('@') else { return text.to_owned() };
    match rest[..at].split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***{}", &rest[at..]),
        None => text.to_owned(),
    }
}

/// Where a client dials: `via` when it is given, else the URL's host and
/// port resolved (the first address they resolve to).
pub(crate) async fn dial_address(host: &Host, port: u16, via: Option<SocketAddr>) -> std::io::Result<SocketAddr> {
    if let Some(address) = via {
        return Ok(address);
    }
    match host {
        Host::Address(address) => Ok(SocketAddr::new(*address, port)),
        Host::Name(name) => tokio::net::lookup_host((name.as_str(), port))
            .await?
            .next()
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, format!("{name} resolves to no address"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULES: UrlRules<'static> =
        UrlRules { schemes: &["redis", "rediss"], default_port: 6379, parameters: &["cacert"] };

    #[test]
    fn a_url_is_read_with_its_defaults_and_its_credentials_decoded() {
        let url = ServerUrl::parse("rediss://app:p%40ss%3Aword@cache.example:7000/0?cacert=/tmp/ca.pem", &RULES)
            .expect("a valid URL");
        assert_eq!(url.scheme, "rediss");
        assert_eq!(url.host, Host::Name("cache.example".to_owned()));
        assert_eq!(url.port, 7000);
        assert_eq!(url.user.as_deref(), Some("app"));
        assert_eq!(url.password.as_deref(), Some("p@ss:word"));
        assert_eq!(url.path, "0");
        assert_eq!(url.parameters.get("cacert").map(String::as_str), Some("/tmp/ca.pem"));
        assert_eq!(url.shown, "rediss://app:***@cache.example:7000/0?cacert=/tmp/ca.pem");
        let url = ServerUrl::parse("redis://[::1]", &RULES).expect("a valid URL");
        assert_eq!((url.host.to_string().as_str(), url.port), ("::1", 6379));
        assert!(url.user.is_none() && url.password.is_none());
    }

    #[test]
    fn a_url_that_will_not_do_is_named_without_its_password() {
        let refused = |text: &str| ServerUrl::parse(text, &RULES).expect_err("refused").to_string();
        assert_eq!(refused("localhost:6379"), "`localhost:6379` is not a redis:// or rediss:// URL");
        assert_eq!(refused("http://127.0.0.1"), "`http://127.0.0.1` is not a redis:// or rediss:// URL");
        assert_eq!(
            refused("redis://u:secret@127.0.0.1?tls=1"),
            "`redis://u:***@127.0.0.1?tls=1`: the parameter `tls` is not one this client knows (it knows cacert)"
        );
        assert_eq!(
            refused("redis://127.0.0.1?cacert=a&cacert=b"),
            "`redis://127.0.0.1?cacert=a&cacert=b`: the parameter `cacert` is given twice"
        );
        let message = refused("redis://u:secret@127.0.0.1:99999");
        assert!(message.starts_with("`redis://u:***@127.0.0.1:99999` is not a URL"), "{message}");
        assert!(!message.contains("secret"), "{message}");
        let message = ServerUrl::parse("redis://127.0.0.1?cacert=/nonexistent/ca.pem", &RULES)
            .and_then(|url| url.trusted_roots("cacert"))
            .expect_err("refused")
            .to_string();
        assert!(message.contains("cannot read the CA certificate /nonexistent/ca.pem"), "{message}");
    }

    #[test]
    fn only_the_password_is_hidden() {
        assert_eq!(redacted("postgres://app:pw@db/x?sslmode=require"), "postgres://app:***@db/x?sslmode=require");
        assert_eq!(redacted("postgres://app@db/x"), "postgres://app@db/x");
        assert_eq!(redacted("redis://:pw@db"), "redis://:***@db");
        assert_eq!(redacted("no url at all"), "no url at all");
        // An @ after the authority is not user information.
        assert_eq!(redacted("https://db/a:b@c"), "https://db/a:b@c");
    }
}
