//! etcd v3 through etcd-client (gRPC, tonic with rustls): the lease lock the
//! engine's `consensus` strategy takes. [`EtcdClient::execute`] plays a
//! [`ConsensusOp`]: `Acquire` is a lease grant and a transaction that puts
//! the lock key with that lease only if the key has never been created
//! (`create_revision == 0`), whose revision is the fencing token (the unused
//! lease is revoked when the key is taken); `KeepAlive` and `Revoke` act on
//! the lease. The engine numbers leases itself ([`LeaseId`]); the client maps
//! its numbers to etcd's.
//!
//! URLs: `http://[USER:PASSWORD@]HOST[:PORT]` and
//! `https://…[?cacert=CA.pem]` (the system's authorities when no CA file is
//! named; the chain and the host's name are checked). With a user, the
//! client authenticates (etcd's `Authenticate`) and sends its token with
//! every call. Calls require a leader, so a cluster without one answers
//! "no leader" at once rather than waiting.
//!
//! TTLs here are on the wall clock: etcd counts whole seconds, so a lease's
//! TTL is its milliseconds rounded down to seconds (at least one).
//!
//! [`ConsensusOp`]: locklab_engine::event::ConsensusOp

use crate::endpoint::{EndpointError, ServerUrl, TrustedRoots, UrlRules};
use crate::runtime::within;
use etcd_client::{Compare, CompareOp, ConnectOptions, EventType, PutOptions, Txn, TxnOp, TxnOpResponse, WatchOptions};
use locklab_engine::event::{ConsensusOp, ConsensusReply, LEASE_KEY, Owner};
use locklab_engine::ids::{LeaseId, Token};
use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::runtime::Runtime;

/// Where an etcd member is, who logs in, and whether TLS protects the way.
#[derive(Clone)]
pub struct EtcdEndpoint {
    url: ServerUrl,
    roots: Option<TrustedRoots>,
    via: Option<SocketAddr>,
}

crate::endpoint::endpoint_basics!(EtcdEndpoint);

impl EtcdEndpoint {
    /// Reads an `http://` or `https://` URL, and the CA file it names.
    pub fn parse(text: &str) -> Result<EtcdEndpoint, EndpointError> {
        let rules = UrlRules { schemes: &["http", "https"], default_port: 2379, parameters: &["cacert"] };
        let url = ServerUrl::parse(text, &rules)?;
        if !url.path.is_empty() {
            return Err(EndpointError::new(format!("`{}`: an etcd URL has no path", url.shown)));
        }
        if url.user.is_some() != url.password.is_some() {
            return Err(EndpointError::new(format!("`{}`: etcd takes a user and a password, or neither", url.shown)));
        }
        let roots = match url.scheme.as_str() {
            "https" => Some(url.trusted_roots("cacert")?),
            _ if url.parameters.contains_key("cacert") => {
                return Err(EndpointError::new(format!(
                    "`{}` names a CA file but is not an https:// URL: TLS is asked for by the scheme",
                    url.shown
                )));
            }
            _ => None,
        };
        Ok(EtcdEndpoint { url, roots, via: None })
    }

    /// The address etcd-client dials, and its options: the credentials,
    /// TLS naming the URL's host, a leader required.
    fn connection(&self, limit: Duration) -> (String, ConnectOptions) {
        let target = match self.via {
            Some(address) => address.to_string(),
            None => match &self.url.host {
                crate::endpoint::Host::Address(std::net::IpAddr::V6(address)) => {
                    format!("[{address}]:{}", self.url.port)
                }
                host => format!("{host}:{}", self.url.port),
            },
        };
        let mut options = ConnectOptions::new().with_require_leader(true).with_connect_timeout(limit);
        if let (Some(user), Some(password)) = (&self.url.user, &self.url.password) {
            options = options.with_user(user, password);
        }
        if let Some(roots) = &self.roots {
            let tls = etcd_client::TlsOptions::new().domain_name(self.url.host.to_string());
            let tls = match roots {
                TrustedRoots::System => tls.with_native_roots(),
                TrustedRoots::File { pem, .. } => tls.ca_certificate(etcd_client::Certificate::from_pem(pem)),
            };
            options = options.with_tls(tls);
        }
        (format!("{}://{target}", self.url.scheme), options)
    }
}

/// What went wrong that the engine's [`ConsensusReply`] has no word for, or,
/// from the other calls, anything that went wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EtcdError {
    /// etcd's answer: the gRPC status (`PermissionDenied`, `InvalidArgument`…)
    /// and etcd's message (`etcdserver: permission denied`…).
    Status { code: String, message: String },
    /// No connection: nothing answered, or the connection broke.
    Connection(String),
    /// The TLS handshake failed (an unknown authority, a certificate for another name…).
    Tls(String),
    /// No answer within the caller's limit.
    Timeout(Duration),
    /// An answer the call never gives (a lock key holding a value no instance writes).
    UnexpectedReply(String),
    /// The client could not be set up (its runtime, its options).
    Setup(String),
}

impl fmt::Display for EtcdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EtcdError::Status { code, message } => write!(f, "etcd answered {code}: {message}"),
            EtcdError::Connection(why) => write!(f, "no connection to etcd: {why}"),
            EtcdError::Tls(why) => write!(f, "TLS with etcd failed: {why}"),
            EtcdError::Timeout(limit) => write!(f, "etcd did not answer within {limit:?}"),
            EtcdError::UnexpectedReply(what) => write!(f, "etcd answered what it never does: {what}"),
            EtcdError::Setup(why) => write!(f, "cannot set up the etcd client: {why}"),
        }
    }
}

impl std::error::Error for EtcdError {}

impl EtcdError {
    /// What etcd-client reported, by kind: etcd's own status keeps its code
    /// and message; tonic's report of a connection that failed (also a
    /// status, `Unavailable`, but not etcd's words) is the connection's, or
    /// TLS's when rustls is among its causes.
    fn from_library(error: &etcd_client::Error) -> EtcdError {
        // etcd-client's error names no source: look through what it wraps.
        let tls = match error {
            etcd_client::Error::GRpcStatus(status) => crate::tls::tls_cause(status),
            etcd_client::Error::TransportError(transport) => crate::tls::tls_cause(transport),
            _ => None,
        };
        if let Some(cause) = tls {
            return EtcdError::Tls(cause);
        }
        match error {
            etcd_client::Error::GRpcStatus(status) if status.message().starts_with("etcdserver:") => {
                EtcdError::Status { code: format!("{:?}", status.code()), message: status.message().to_owned() }
            }
            etcd_client::Error::GRpcStatus(status) if status.code() == tonic::Code::Unavailable => {
                EtcdError::Connection(crate::tls::full_message(status))
            }
            etcd_client::Error::GRpcStatus(status) => {
                EtcdError::Status { code: format!("{:?}", status.code()), message: status.message().to_owned() }
            }
            etcd_client::Error::TransportError(transport) => EtcdError::Connection(crate::tls::full_message(transport)),
            etcd_client::Error::IoError(failure) => EtcdError::Connection(crate::tls::full_message(failure)),
            other => EtcdError::Setup(other.to_string()),
        }
    }

    /// The engine's reply for this error, when the engine models it: no
    /// leader, a lease etcd does not know, and no answer (a timeout, or a
    /// connection that failed: a client with one endpoint reports either as
    /// a failed call).
    fn engine_reply(&self) -> Option<ConsensusReply> {
        match self {
            EtcdError::Status { message, .. } if message.contains("no leader") => Some(ConsensusReply::NoLeader),
            EtcdError::Status { message, .. } if message.contains("requested lease not found") => {
                Some(ConsensusReply::LeaseNotFound)
            }
            EtcdError::Status { code, .. } if code == "DeadlineExceeded" => Some(ConsensusReply::Timeout),
            EtcdError::Timeout(_) | EtcdError::Connection(_) => Some(ConsensusReply::Timeout),
            EtcdError::Status { .. } | EtcdError::Tls(_) | EtcdError::UnexpectedReply(_) | EtcdError::Setup(_) => None,
        }
    }
}

/// A client of one etcd member. Blocking; see the crate's documentation.
pub struct EtcdClient {
    client: etcd_client::Client,
    /// The engine's lease numbers this client gave out: etcd's lease, and the TTL it was granted (s).
    leases: BTreeMap<LeaseId, (i64, u64)>,
    next_lease: u32,
    /// The key the lease lock is taken on: the engine's, or live mode's
    /// own for a run on an etcd of the user's.
    lease_key: String,
    runtime: Runtime,
}

impl fmt::Debug for EtcdClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EtcdClient").field("leases", &self.leases).finish()
    }
}

impl EtcdClient {
    /// A client of `endpoint`, authenticated when the URL names a user,
    /// within `limit` (etcd-client connects lazily: without a user, the
    /// first call is the first to reach the server). The engine's lease
    /// numbers it gives out start at `first_lease`, so that several clients
    /// (live mode's instances) never give out the same one.
    pub fn connect(endpoint: &EtcdEndpoint, first_lease: LeaseId, limit: Duration) -> Result<EtcdClient, EtcdError> {
        let runtime = crate::runtime::build().map_err(|error| EtcdError::Setup(error.to_string()))?;
        let (target, options) = endpoint.connection(limit);
        let connected = runtime.block_on(within(limit, etcd_client::Client::connect([target], Some(options))));
        let client = connected.ok_or(EtcdError::Timeout(limit))?.map_err(|error| EtcdError::from_library(&error))?;
        let lease_key = LEASE_KEY.to_owned();
        Ok(EtcdClient { client, leases: BTreeMap::new(), next_lease: first_lease.0, lease_key, runtime })
    }

    /// The same client taking the lease lock on `key` instead of the engine's `LEASE_KEY`.
    pub fn with_lease_key(mut self, key: impl Into<String>) -> EtcdClient {
        self.lease_key = key.into();
        self
    }

    /// Plays one of the engine's operations within `limit` and answers as
    /// the engine's model does; what the engine models (no leader, a lease
    /// not found, no answer) comes back as that reply, anything else
    /// (refused credentials, a permission) as an error that keeps etcd's code.
    pub fn execute(&mut self, op: ConsensusOp, limit: Duration) -> Result<ConsensusReply, EtcdError> {
        let EtcdClient { client, leases, next_lease, lease_key, runtime } = self;
        let answer = runtime.block_on(within(limit, async {
            match op {
                ConsensusOp::Acquire { value, ttl_ms } => {
                    let acquired = acquire(client, lease_key, value, ttl_ms).await?;
                    Ok(acquired.map_or_else(
                        |holder| ConsensusReply::Taken { holder },
                        |(lease_id, ttl_s, revision)| {
                            let lease = LeaseId(*next_lease);
                            *next_lease += 1;
                            leases.insert(lease, (lease_id, ttl_s));
                            ConsensusReply::Acquired { lease, revision }
                        },
                    ))
                }
                ConsensusOp::KeepAlive { lease } => match leases.get(&lease) {
                    None => Ok(ConsensusReply::LeaseNotFound),
                    Some((id, ttl_s)) => keep_alive(client, *id, *ttl_s).await,
                },
                ConsensusOp::Revoke { lease } => match leases.remove(&lease) {
                    None => Ok(ConsensusReply::LeaseNotFound),
                    Some((id, _)) => client
                        .lease_revoke(id)
                        .await
                        .map(|_| ConsensusReply::Revoked)
                        .map_err(|error| EtcdError::from_library(&error)),
                },
            }
        }));
        match answer.unwrap_or(Err(EtcdError::Timeout(limit))) {
            Ok(reply) => Ok(reply),
            Err(error) => error.engine_reply().ok_or(error),
        }
    }

    /// The member's version, and which member leads (0 when none does), from its status.
    pub fn status(&mut self, limit: Duration) -> Result<(String, u64), EtcdError> {
        let client = &mut self.client;
        let answer = self.runtime.block_on(within(limit, client.status()));
        let status = answer.ok_or(EtcdError::Timeout(limit))?.map_err(|error| EtcdError::from_library(&error))?;
        Ok((status.version().to_owned(), status.leader()))
    }

    /// Whether `key` is there.
    pub fn key_exists(&mut self, key: &str, limit: Duration) -> Result<bool, EtcdError> {
        let client = &mut self.client;
        let answer = self.runtime.block_on(within(limit, client.get(key, None)));
        let got = answer.ok_or(EtcdError::Timeout(limit))?.map_err(|error| EtcdError::from_library(&error))?;
        Ok(!got.kvs().is_empty())
    }

    /// Deletes `key`; whether it was there.
    pub fn delete_key(&mut self, key: &str, limit: Duration) -> Result<bool, EtcdError> {
        let client = &mut self.client;
        let answer = self.runtime.block_on(within(limit, client.delete(key, None)));
        let deleted = answer.ok_or(EtcdError::Timeout(limit))?.map_err(|error| EtcdError::from_library(&error))?;
        Ok(deleted.deleted() > 0)
    }

    /// Watches `key` from now on and calls `seen` with the value it held each
    /// time it is deleted (a revoke, or its lease expiring), until `seen`
    /// returns false or the stream ends.
    pub fn watch_deletions(&mut self, key: &str, mut seen: impl FnMut(&[u8]) -> bool) -> Result<(), EtcdError> {
        let client = &mut self.client;
        self.runtime.block_on(async {
            let library = |error: etcd_client::Error| EtcdError::from_library(&error);
            // The stream holds the watch's request side too: dropping it would end the watch.
            let mut stream = client.watch(key, Some(WatchOptions::new().with_prev_key())).await.map_err(library)?;
            while let Some(response) = stream.message().await.map_err(library)? {
                for event in response.events() {
                    let deleted = event.prev_kv().filter(|_| event.event_type() == EventType::Delete);
                    if let Some(previous) = deleted
                        && !seen(previous.value())
                    {
                        return Ok(());
                    }
                }
            }
            Ok(())
        })
    }
}

/// A lease of `ttl_ms` (whole seconds) and the lock key put with it if the
/// key was never created: the lease, the TTL etcd granted (s) and the put's
/// revision, or, when the key is taken, its holder (the unused lease revoked).
async fn acquire(
    client: &mut etcd_client::Client,
    key: &str,
    value: Owner,
    ttl_ms: u64,
) -> Result<Result<(i64, u64, Token), Owner>, EtcdError> {
    let library = |error: etcd_client::Error| EtcdError::from_library(&error);
    let asked_s = i64::try_from(ttl_ms / 1_000).unwrap_or(i64::MAX).max(1);
    let granted = client.lease_grant(asked_s, None).await.map_err(library)?;
    let (lease, ttl_s) = (granted.id(), u64::try_from(granted.ttl()).unwrap_or(0));
    let txn = Txn::new()
        .when([Compare::create_revision(key, CompareOp::Equal, 0)])
        .and_then([TxnOp::put(key, value.to_string(), Some(PutOptions::new().with_lease(lease)))])
        .or_else([TxnOp::get(key, None)]);
    let answer = client.txn(txn).await.map_err(library)?;
    if answer.succeeded() {
        let revision = answer.header().map_or(0, etcd_client::ResponseHeader::revision);
        return Ok(Ok((lease, ttl_s, Token(u64::try_from(revision).unwrap_or(0)))));
    }
    // The lease would otherwise live out its TTL for nothing; a failed revoke changes nothing the caller sees.
    let _ = client.lease_revoke(lease).await;
    let held = answer.op_responses().into_iter().find_map(|response| match response {
        TxnOpResponse::Get(got) => got.kvs().first().map(|held| held.value().to_vec()),
        TxnOpResponse::Put(_) | TxnOpResponse::Delete(_) | TxnOpResponse::Txn(_) => None,
    });
    let text = held.as_deref().map(String::from_utf8_lossy).unwrap_or_default();
    Owner::parse(&text).map(Err).ok_or_else(|| EtcdError::UnexpectedReply(format!("{key} holds `{text}`")))
}

/// One keep-alive of etcd's lease `id`, granted for `ttl_s`: etcd-client
/// opens the keep-alive stream by sending one and reading etcd's answer, and
/// turns an answer of TTL 0 (etcd no longer has the lease) into its own
/// "lease not found" error, the only way it tells that case.
async fn keep_alive(client: &mut etcd_client::Client, id: i64, ttl_s: u64) -> Result<ConsensusReply, EtcdError> {
    match client.lease_keep_alive(id).await {
        Ok(_) => Ok(ConsensusReply::Alive { ttl_ms: ttl_s * 1_000 }),
        Err(etcd_client::Error::LeaseKeepAliveError(message)) if message == "lease not found" => {
            Ok(ConsensusReply::LeaseNotFound)
        }
        Err(error) => Err(EtcdError::from_library(&error)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_read_and_refused_by_name() {
        let endpoint = EtcdEndpoint::parse("http://root:secret@127.0.0.1:2381").expect("a valid URL");
        let (target, _) = endpoint.connection(Duration::from_secs(1));
        assert_eq!(target, "http://127.0.0.1:2381");
        assert_eq!(endpoint.to_string(), "http://root:***@127.0.0.1:2381");
        let routed = EtcdEndpoint::parse("http://[::1]").expect("a valid URL");
        assert_eq!(routed.connection(Duration::from_secs(1)).0, "http://[::1]:2379");
        let routed = routed.via(SocketAddr::from(([127, 0, 0, 1], 4000)));
        assert_eq!(routed.connection(Duration::from_secs(1)).0, "http://127.0.0.1:4000");
        let refused = |text: &str| EtcdEndpoint::parse(text).expect_err("refused").to_string();
        assert_eq!(refused("http://127.0.0.1/v3"), "`http://127.0.0.1/v3`: an etcd URL has no path");
        assert_eq!(
            refused("http://root@127.0.0.1"),
            "`http://root@127.0.0.1`: etcd takes a user and a password, or neither"
        );
        assert!(refused("http://127.0.0.1?cacert=/tmp/ca.pem").contains("not an https:// URL"));
    }

    #[test]
    fn errors_the_engine_models_become_its_replies() {
        let status =
            |code: &str, message: &str| EtcdError::Status { code: code.to_owned(), message: message.to_owned() };
        assert_eq!(status("Unavailable", "etcdserver: no leader").engine_reply(), Some(ConsensusReply::NoLeader));
        assert_eq!(
            status("NotFound", "etcdserver: requested lease not found").engine_reply(),
            Some(ConsensusReply::LeaseNotFound)
        );
        assert_eq!(EtcdError::Connection("refused".to_owned()).engine_reply(), Some(ConsensusReply::Timeout));
        assert_eq!(status("PermissionDenied", "etcdserver: permission denied").engine_reply(), None);
    }
}
