//! The servers a live run plays on. By default they are its own, started on
//! loopback ports and stopped at the end: one `redis-server` (or one per
//! Redlock node), a PostgreSQL cluster, and etcd under consensus. Given URLs
//! (`--redis`, `--postgres`, `--etcd`), it plays on servers the user already
//! runs instead, and there it only creates and drops what it names, each
//! named for the run alone, so two runs on one server never share a key:
//! the lock key and the token counter on Redis and the lease key on etcd,
//! each under the run's prefix (`locklab-live:TAG:job:daily-report`), and a
//! schema of its own on PostgreSQL (every session's `search_path`). It
//! refuses to start where one of those is already there, so it never changes
//! or deletes anything of the user's; what it made is dropped when the run
//! ends, or by the supervisor if the run's process is killed. Faults that
//! need a server of its own (a restart, a failover, a stepped clock, a lost
//! leader) are refused on the user's; so is a replica, and so is a server
//! the strategy does not use.

use crate::supervisor::{Supervision, Undo, UrlWithPassword};
use locklab_clients::redis::Value;
use locklab_clients::{
    EtcdClient, EtcdEndpoint, EtcdError, PostgresEndpoint, PostgresError, PostgresSession, RedisClient, RedisEndpoint,
    RedisError, SessionSettings,
};
use locklab_engine::event::{LEASE_KEY, LOCK_KEY, TOKEN_KEY};
use locklab_engine::ids::{LeaseId, Party};
use locklab_engine::scenario::{Fault, Scenario, StrategyId, StrategySettings, Target};
use locklab_servers::server::{EtcdServer, PgServer, RedisServer};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// Servers the user already runs, by URL; any left out, live mode starts its own.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerUrls {
    /// `redis://[[USER]:PASSWORD@]HOST[:PORT][/0]` or `rediss://…[?cacert=CA.pem]`,
    /// one per node the strategy locks (five under Redlock).
    pub redis: Vec<String>,
    /// `postgres://[USER[:PASSWORD]@]HOST[:PORT][/DATABASE][?sslmode=…&sslrootcert=CA.pem]`.
    pub postgres: Option<String>,
    /// `http://[USER:PASSWORD@]HOST[:PORT]` or `https://…[?cacert=CA.pem]`, one member of the cluster.
    pub etcd: Option<String>,
}

/// The name every session of a live run gives the server, so that the
/// coordinator counts its own sessions on a server others use too.
pub(crate) const APPLICATION_NAME: &str = "locklab-live";

/// Where each server is, which of them the run started, and what it must
/// drop from the user's at the end (when this is dropped).
pub(crate) struct Servers {
    /// The Redis nodes live mode started, node by node (none when they are the user's).
    pub(crate) redis: Vec<RedisServer>,
    /// Each node's URL (with its credentials) and the address its proxies forward to.
    pub(crate) redis_urls: Vec<String>,
    pub(crate) redis_addresses: Vec<SocketAddr>,
    /// The cluster live mode started (none when it is the user's): its
    /// `Drop` stops it.
    pub(crate) postgres: Option<PgServer>,
    pub(crate) postgres_url: String,
    pub(crate) postgres_address: SocketAddr,
    /// The run's own schema on a server of the user's (every session's `search_path`).
    pub(crate) postgres_schema: Option<String>,
    /// etcd when live mode started it; `etcd_url` and `etcd_address` are set either way under consensus.
    pub(crate) etcd: Option<EtcdServer>,
    pub(crate) etcd_url: Option<String>,
    pub(crate) etcd_address: Option<SocketAddr>,
    /// Each server as it names its version; the user's are marked so.
    pub(crate) names: Vec<String>,
    /// What the names of the lock's keys begin with: the run's own prefix
    /// on servers of the user's, nothing on live mode's own.
    pub(crate) key_prefix: String,
    /// Held for its `Drop`, which removes what the run made on the user's servers.
    _borrowed: Borrowed,
}

/// How long a server of the user's has to answer the first request: a
/// server on this machine or next to it answers in ms, and something that
/// is not the server may never answer at all.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a PostgreSQL server takes to answer an SSL request, at most: at once.
const FIRST_ANSWER: Duration = Duration::from_millis(200);

/// A name for one run, unique on this machine: the process and a count.
fn run_tag() -> String {
    static RUNS: AtomicU32 = AtomicU32::new(0);
    let run = RUNS.fetch_add(1, Ordering::SeqCst);
    format!("{}_{run}_{}", std::process::id(), crate::unix_us() % 1_000_000)
}

impl Servers {
    /// Starts the servers the run needs, or checks the user's: each answers
    /// as what it should be, and holds none of the keys the run will use.
    pub(crate) fn start(
        scenario: &Scenario,
        strategy: StrategyId,
        time_scale: u32,
        urls: &ServerUrls,
        supervision: &'static Supervision,
    ) -> Result<Servers, String> {
        let settings = scenario.settings_for(strategy);
        let tag = run_tag();
        let key_prefix =
            if urls.redis.is_empty() && urls.etcd.is_none() { String::new() } else { format!("locklab-live:{tag}:") };
        let mut borrowed = Borrowed { supervision: Some(supervision), undo: Vec::new() };
        let redis = if urls.redis.is_empty() {
            own_redis(settings.redis_nodes())?
        } else {
            let keys = [format!("{key_prefix}{LOCK_KEY}"), format!("{key_prefix}{TOKEN_KEY}")];
            users_redis(strategy, settings.redis_nodes(), &urls.redis, &keys, &mut borrowed)?
        };
        let postgres = match &urls.postgres {
            None => own_postgres(scenario)?,
            Some(url) => users_postgres(url, &format!("locklab_live_{tag}"), &mut borrowed)?,
        };
        let etcd = match (&settings, &urls.etcd) {
            (StrategySettings::Consensus(_), None) => Some(own_etcd(scenario, time_scale)?),
            (StrategySettings::Consensus(_), Some(url)) => {
                Some(users_etcd(url, &format!("{key_prefix}{LEASE_KEY}"), &mut borrowed)?)
            }
            (
                StrategySettings::Naive(_)
                | StrategySettings::Fencing(_)
                | StrategySettings::Redlock(_)
                | StrategySettings::DbLock(_)
                | StrategySettings::UniqueInsert,
                _,
            ) => None,
        };
        let names =
            [Some(redis.name), Some(postgres.name), etcd.as_ref().map(|etcd| etcd.name.clone())].into_iter().flatten();
        let (etcd_server, etcd_url, etcd_address) = match etcd {
            Some(etcd) => (etcd.server, Some(etcd.url), Some(etcd.address)),
            None => (None, None, None),
        };
        Ok(Servers {
            redis: redis.servers,
            redis_urls: redis.urls,
            redis_addresses: redis.addresses,
            postgres: postgres.server,
            postgres_url: postgres.url,
            postgres_address: postgres.address,
            postgres_schema: postgres.schema,
            etcd: etcd_server,
            etcd_url,
            etcd_address,
            names: names.collect(),
            key_prefix,
            _borrowed: borrowed,
        })
    }

    /// The PostgreSQL server's endpoint, reached at `address` (a proxy on
    /// the way to it, or the server itself).
    pub(crate) fn postgres_via(&self, address: SocketAddr) -> Result<PostgresEndpoint, String> {
        Ok(PostgresEndpoint::parse(&self.postgres_url).map_err(|error| error.to_string())?.via(address))
    }

    /// What a session of the run sets with its login: live mode's name, the run's schema.
    pub(crate) fn session_settings(&self) -> SessionSettings {
        SessionSettings {
            application_name: Some(APPLICATION_NAME.to_owned()),
            search_path: self.postgres_schema.clone(),
            ..SessionSettings::default()
        }
    }
}

/// The Redis nodes of a run: live mode's own (none when they are the
/// user's), each node's URL and address, and how the nodes name themselves.
struct RedisNodes {
    servers: Vec<RedisServer>,
    urls: Vec<String>,
    addresses: Vec<SocketAddr>,
    name: String,
}

/// A PostgreSQL server of a run: live mode's own cluster, or the user's.
struct Postgres {
    server: Option<PgServer>,
    url: String,
    address: SocketAddr,
    schema: Option<String>,
    name: String,
}

/// An etcd of a run: live mode's own, or the user's.
struct Etcd {
    server: Option<EtcdServer>,
    url: String,
    address: SocketAddr,
    name: String,
}

/// `nodes` Redis servers of live mode's own.
fn own_redis(nodes: u8) -> Result<RedisNodes, String> {
    let servers: Vec<RedisServer> = (0..nodes).map(|_| RedisServer::start()).collect::<Result<_, _>>()?;
    let urls = servers.iter().map(|server| format!("redis://127.0.0.1:{}", server.port)).collect();
    let addresses = servers.iter().map(|server| crate::proxy::loopback(server.port)).collect();
    let name = format!("Redis {}", servers.first().map(RedisServer::version).unwrap_or_default());
    Ok(RedisNodes { servers, urls, addresses, name })
}

/// The user's Redis nodes, one per node the strategy locks, each a server of
/// its own, checked before any is asked anything, then each borrowed.
fn users_redis(
    strategy: StrategyId,
    nodes: u8,
    urls: &[String],
    keys: &[String; 2],
    borrowed: &mut Borrowed,
) -> Result<RedisNodes, String> {
    if urls.len() != usize::from(nodes) {
        return Err(format!(
            "{strategy} locks {nodes} Redis node(s): give --redis once per node (it was given {} time(s))",
            urls.len()
        ));
    }
    let mut endpoints: Vec<(RedisEndpoint, SocketAddr)> = Vec::new();
    for (url, given) in urls.iter().zip(1..) {
        let endpoint = redis_url(url)?;
        let address = address_of(&endpoint.to_string(), endpoint.host_and_port())?;
        if let Some(earlier) = endpoints.iter().position(|(_, earlier)| *earlier == address) {
            let (first, this) = (endpoints[earlier].0.to_string(), endpoint.to_string());
            let same = if urls[earlier] == *url {
                format!("`{this}` is given twice (as the {} and the {} --redis)", ordinal(earlier + 1), ordinal(given))
            } else {
                format!("`{first}` and `{this}` are the same server ({address})")
            };
            return Err(format!(
                "{same}: {strategy} locks {nodes} independent nodes, so each --redis must be a server of its own"
            ));
        }
        endpoints.push((endpoint, address));
    }
    let mut version = String::new();
    for ((endpoint, address), url) in endpoints.iter().zip(urls) {
        version = borrow_redis(endpoint, *address, keys)?;
        borrowed.keep(Undo::RedisKeys { url: UrlWithPassword(url.clone()), address: *address, keys: keys.to_vec() });
    }
    let addresses = endpoints.iter().map(|(_, address)| *address).collect();
    Ok(RedisNodes { servers: Vec::new(), urls: urls.to_vec(), addresses, name: format!("Redis {version} (yours)") })
}

/// A PostgreSQL cluster of live mode's own, which trusts loopback logins.
fn own_postgres(scenario: &Scenario) -> Result<Postgres, String> {
    let server = PgServer::start(&[
        format!("max_connections={}", scenario.world.db_max_connections.max(4)),
        "superuser_reserved_connections=0".to_owned(),
    ])?;
    let url = format!("postgres://postgres@127.0.0.1:{}/postgres?sslmode=disable", server.port);
    let name = format!("PostgreSQL {}", server.version());
    let address = crate::proxy::loopback(server.port);
    Ok(Postgres { server: Some(server), url, address, schema: None, name })
}

/// The user's PostgreSQL, with `schema` made on it for the run.
fn users_postgres(url: &str, schema: &str, borrowed: &mut Borrowed) -> Result<Postgres, String> {
    let endpoint = PostgresEndpoint::parse(url).map_err(|error| error.to_string())?;
    let address = address_of(&endpoint.to_string(), endpoint.host_and_port())?;
    let version = borrow_postgres(&endpoint, address, schema)?;
    let (url, schema) = (url.to_owned(), schema.to_owned());
    borrowed.keep(Undo::PostgresSchema { url: UrlWithPassword(url.clone()), address, schema: schema.clone() });
    Ok(Postgres { server: None, url, address, schema: Some(schema), name: format!("PostgreSQL {version} (yours)") })
}

/// The user's etcd, which must not hold `key`, the run's lease key.
fn users_etcd(url: &str, key: &str, borrowed: &mut Borrowed) -> Result<Etcd, String> {
    let endpoint = EtcdEndpoint::parse(url).map_err(|error| error.to_string())?;
    let address = address_of(&endpoint.to_string(), endpoint.host_and_port())?;
    let version = borrow_etcd(&endpoint, address, key)?;
    borrowed.keep(Undo::EtcdKey { url: UrlWithPassword(url.to_owned()), address, key: key.to_owned() });
    Ok(Etcd { server: None, url: url.to_owned(), address, name: format!("etcd {version} (yours)") })
}

/// etcd of live mode's own: one member, or three when the scenario loses
/// the leader. Their election timeout is then the world's failover time on
/// the wall clock, so the store is without a leader about that long (a
/// follower campaigns after one to two timeouts).
fn own_etcd(scenario: &Scenario, time_scale: u32) -> Result<Etcd, String> {
    let leader_loss = scenario.faults.iter().any(|fault| matches!(fault, Fault::ConsensusLeaderLoss { .. }));
    let server = if leader_loss {
        let election_timeout_ms = (scenario.world.failover_ms / u64::from(time_scale.max(1))).clamp(50, 50_000);
        EtcdServer::start_cluster(3, election_timeout_ms)?
    } else {
        EtcdServer::start()?
    };
    let (url, address) = (format!("http://127.0.0.1:{}", server.port()), crate::proxy::loopback(server.port()));
    let name = format!("etcd {}", server.version());
    Ok(Etcd { server: Some(server), url, address, name })
}

/// Why the run cannot play on the user's servers, if it cannot: a sentence
/// per fault or setting that needs a server live mode starts itself.
pub fn refused_on_theirs(scenario: &Scenario, strategy: StrategyId, urls: &ServerUrls) -> Vec<String> {
    let mut reasons = Vec::new();
    let theirs_redis = !urls.redis.is_empty();
    let theirs_etcd = urls.etcd.is_some();
    for fault in &scenario.faults {
        let on_redis = match fault {
            Fault::RedisRestart { .. } | Fault::RedisFailover { .. } => true,
            Fault::ClockJump { target, .. } | Fault::ClockDrift { target, .. } => {
                matches!(target, Target::AllRedis | Target::Party(Party::Redis(_) | Party::RedisReplica))
            }
            Fault::OomKill { .. }
            | Fault::HostLoss { .. }
            | Fault::GcPause { .. }
            | Fault::NetworkDelay { .. }
            | Fault::Partition { .. }
            | Fault::ConsensusLeaderLoss { .. }
            | Fault::DbSlow { .. } => false,
        };
        let on_etcd = matches!(fault, Fault::ConsensusLeaderLoss { .. })
            && matches!(scenario.settings_for(strategy), StrategySettings::Consensus(_));
        if (on_redis && theirs_redis) || (on_etcd && theirs_etcd) {
            reasons.push(format!(
                "the `{}` fault at t={} needs a server live mode starts itself: it does not restart, fail over, step the clock of or kill a member of yours",
                fault.kind_name(),
                locklab_engine::format::seconds(fault.at_ms())
            ));
        }
    }
    if theirs_redis && crate::coordinator::has_replica(scenario, strategy) {
        reasons.push(
            "the world has a Redis replica (`redis_replica`), which live mode starts only beside a primary of its own"
                .to_owned(),
        );
    }
    reasons
}

/// Servers given by URL that the strategy does not use: refused, so that
/// nothing is pinged, named "(yours)" or silently ignored for nothing.
pub fn unused_servers(scenario: &Scenario, strategy: StrategyId, urls: &ServerUrls) -> Vec<String> {
    let settings = scenario.settings_for(strategy);
    let (uses_redis, uses_etcd) = match settings {
        StrategySettings::Naive(_) | StrategySettings::Fencing(_) | StrategySettings::Redlock(_) => (true, false),
        StrategySettings::Consensus(_) => (false, true),
        StrategySettings::DbLock(_) | StrategySettings::UniqueInsert => (false, false),
    };
    let mut reasons = Vec::new();
    if !uses_redis && !urls.redis.is_empty() {
        reasons.push(format!(
            "--redis is for the strategies that lock on Redis (naive, fencing, redlock); {strategy} does not use Redis"
        ));
    }
    if !uses_etcd && urls.etcd.is_some() {
        reasons.push(format!("--etcd is for consensus, the strategy that locks on etcd; {strategy} does not use etcd"));
    }
    reasons
}

/// "st", "nd", "rd" or "th" after a count.
fn ordinal_suffix(count: usize) -> &'static str {
    match (count % 10, count % 100) {
        (1, 11) | (2, 12) | (3, 13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    }
}

fn ordinal(count: usize) -> String {
    format!("{count}{}", ordinal_suffix(count))
}

/// What the run created on the user's servers, dropped when the run ends
/// however it ends (the supervisor drops it if the run's process is killed):
/// the Redis keys, the PostgreSQL schema, the etcd key.
struct Borrowed {
    supervision: Option<&'static Supervision>,
    /// Each thing to undo, and the supervisor's number for it.
    undo: Vec<(Undo, u64)>,
}

impl Borrowed {
    fn keep(&mut self, undo: Undo) {
        let number = self.supervision.map_or(0, |supervision| supervision.undo_later(undo.clone()));
        self.undo.push((undo, number));
    }
}

impl Drop for Borrowed {
    fn drop(&mut self) {
        for (undo, number) in self.undo.drain(..) {
            crate::supervisor::undo_now(&undo);
            if let Some(supervision) = self.supervision {
                supervision.done(number);
            }
        }
    }
}

/// The user's Redis node, reached at `address`: it answers PING as Redis
/// once logged in, and holds none of `keys`, the run's. Returns its version.
fn borrow_redis(endpoint: &RedisEndpoint, address: SocketAddr, keys: &[String]) -> Result<String, String> {
    let url = endpoint.to_string();
    TcpStream::connect_timeout(&address, PROBE_TIMEOUT).map_err(|error| nothing_answers(&url, &error))?;
    let refused = |error: RedisError| match error {
        RedisError::Reply { .. } => format!("{url} refused the login: {}", reply_error(&error)),
        RedisError::Tls(_) => format!("{url}: {error}"),
        RedisError::Connection(_)
        | RedisError::Timeout(_)
        | RedisError::UnexpectedReply { .. }
        | RedisError::Setup(_) => not_the_server(&url, "Redis", &error),
    };
    let mut client = RedisClient::new(endpoint.clone().via(address)).map_err(|error| error.to_string())?;
    match client.call(&["PING"], PROBE_TIMEOUT).map_err(refused)? {
        Value::SimpleString(pong) if pong == "PONG" => {}
        other => return Err(not_the_server(&url, "Redis", &format!("it answered PING with {other:?}"))),
    }
    let answered = |error: RedisError| format!("{url} answered {error}");
    for key in keys {
        if client.call(&["EXISTS", key], PROBE_TIMEOUT).map_err(answered)? != Value::Int(0) {
            return Err(format!(
                "{url} already has `{key}`: live mode uses only keys it creates, and will not touch this one"
            ));
        }
    }
    client.server_version(PROBE_TIMEOUT).map_err(answered)
}

/// A Redis error reply as the server wrote it: `-WRONGPASS invalid username-password pair…`.
fn reply_error(error: &RedisError) -> String {
    match error {
        RedisError::Reply { code, message } => format!("-{code} {message}"),
        RedisError::Connection(_)
        | RedisError::Tls(_)
        | RedisError::Timeout(_)
        | RedisError::UnexpectedReply { .. }
        | RedisError::Setup(_) => error.to_string(),
    }
}

/// Whether what answers at `address` speaks PostgreSQL's protocol: an SSL
/// request, which a PostgreSQL server answers at once with one byte, `N` or
/// `S`. Something that does not answer it in [`FIRST_ANSWER`] is asked, on a
/// connection of its own, a line of text (`PING`), which a server of a line
/// protocol (Redis) answers, and an HTTP server (etcd) answers as a bad
/// request: what it says names it, and nothing waits for a login that would
/// never come.
fn probe_postgres(url: &str, address: SocketAddr) -> Result<(), String> {
    let not_postgres = |why: &str| not_the_server(url, "PostgreSQL", why);
    let ask = |question: &[u8], within: Duration| -> Result<Vec<u8>, String> {
        let mut stream =
            TcpStream::connect_timeout(&address, PROBE_TIMEOUT).map_err(|error| nothing_answers(url, &error))?;
        let _ = stream.set_read_timeout(Some(within));
        stream.write_all(question).map_err(|error| not_postgres(&error.to_string()))?;
        let mut answer = [0_u8; 64];
        match stream.read(&mut answer) {
            Ok(count) => Ok(answer[..count].to_vec()),
            Err(error) if matches!(error.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                Ok(Vec::new())
            }
            Err(error) => Err(not_postgres(&error.to_string())),
        }
    };
    let ssl_request = [0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f];
    if matches!(ask(&ssl_request, FIRST_ANSWER)?.first(), Some(b'N' | b'S')) {
        return Ok(());
    }
    let answer = ask(b"PING\r\n", PROBE_TIMEOUT)?;
    let said = String::from_utf8_lossy(&answer);
    match said.lines().next().map(str::trim) {
        Some(line) if !line.is_empty() => Err(not_postgres(&format!("it answered {line:?}"))),
        Some(_) | None => Err(not_postgres(&format!(
            "it answered neither PostgreSQL's SSL request nor a line of text within {PROBE_TIMEOUT:?}"
        ))),
    }
}

/// The user's PostgreSQL, reached at `address`: it lets the URL's user in,
/// and gets `schema`, the run's own. Returns the server's version.
fn borrow_postgres(endpoint: &PostgresEndpoint, address: SocketAddr, schema: &str) -> Result<String, String> {
    let url = endpoint.to_string();
    probe_postgres(&url, address)?;
    let settings =
        SessionSettings { application_name: Some(APPLICATION_NAME.to_owned()), ..SessionSettings::default() };
    let mut session = PostgresSession::connect(&endpoint.clone().via(address), &settings, PROBE_TIMEOUT).map_err(
        |error| match error {
            PostgresError::Server { .. } | PostgresError::Client(_) => format!("{url} refused the login: {error}"),
            PostgresError::Connection(_) | PostgresError::Timeout(_) => not_the_server(&url, "PostgreSQL", &error),
            PostgresError::Tls(_) | PostgresError::Statement(_) | PostgresError::Setup(_) => format!("{url}: {error}"),
        },
    )?;
    session
        .batch(&format!("CREATE SCHEMA {schema}"), PROBE_TIMEOUT)
        .map_err(|error| format!("{url} would not let {} create a schema: {error}", endpoint.user()))?;
    session.server_version(PROBE_TIMEOUT).map_err(|error| format!("{url} answered {error}"))
}

/// The user's etcd, reached at `address`: it answers as etcd, lets the
/// URL's user in, and has no `key`, the run's lease key. Returns its version.
fn borrow_etcd(endpoint: &EtcdEndpoint, address: SocketAddr, key: &str) -> Result<String, String> {
    let url = endpoint.to_string();
    TcpStream::connect_timeout(&address, PROBE_TIMEOUT).map_err(|error| nothing_answers(&url, &error))?;
    let refused = |error: EtcdError| match error {
        EtcdError::Status { .. } => format!("{url} refused the login: {error}"),
        EtcdError::Tls(_) => format!("{url}: {error}"),
        EtcdError::Connection(_) | EtcdError::Timeout(_) | EtcdError::UnexpectedReply(_) | EtcdError::Setup(_) => {
            not_the_server(&url, "etcd", &error)
        }
    };
    let mut client = EtcdClient::connect(&endpoint.clone().via(address), LeaseId(0), PROBE_TIMEOUT).map_err(refused)?;
    let (version, _) = client.status(PROBE_TIMEOUT).map_err(refused)?;
    if client.key_exists(key, PROBE_TIMEOUT).map_err(refused)? {
        return Err(format!(
            "{url} already has `{key}`: live mode uses only a key it creates, and will not touch this one"
        ));
    }
    Ok(version)
}

fn nothing_answers(url: &str, error: &(impl std::fmt::Display + ?Sized)) -> String {
    format!(
        "nothing answers at {url} ({error}): start the server, or leave the option out and live mode starts its own"
    )
}

fn not_the_server(url: &str, what: &str, why: &(impl std::fmt::Display + ?Sized)) -> String {
    format!("the port of {url} is in use by something that is not {what} ({why})")
}

/// A Redis URL as live mode takes it: any the client reads, on database 0
/// (the lab's Redis has one keyspace, and the keys are named for the run).
fn redis_url(url: &str) -> Result<RedisEndpoint, String> {
    let endpoint = RedisEndpoint::parse(url).map_err(|error| error.to_string())?;
    if endpoint.database() != 0 {
        return Err(format!("`{endpoint}`: live mode uses database 0, as the lab's Redis does"));
    }
    Ok(endpoint)
}

/// Where the proxies forward to: the URL's host and port resolved (`shown`
/// names the URL without its password).
fn address_of(shown: &str, (host, port): (String, u16)) -> Result<SocketAddr, String> {
    (host.as_str(), port)
        .to_socket_addrs()
        .map_err(|error| format!("`{shown}`: cannot resolve {host}: {error}"))?
        .next()
        .ok_or_else(|| format!("`{shown}`: {host} has no address"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_read_with_their_defaults_and_refused_by_name() {
        let port = |url: &str| redis_url(url).map(|endpoint| endpoint.host_and_port().1);
        assert_eq!(port("redis://127.0.0.1"), Ok(6379));
        assert_eq!(port("redis://:secret@127.0.0.1:7000/0"), Ok(7000));
        assert!(redis_url("localhost:6379").is_err_and(|error| error.contains("not a redis:// or rediss:// URL")));
        assert_eq!(
            redis_url("redis://:secret@127.0.0.1/3").map(|_| ()),
            Err("`redis://:***@127.0.0.1/3`: live mode uses database 0, as the lab's Redis does".to_owned())
        );
        let endpoint = PostgresEndpoint::parse("postgres://app:pw@127.0.0.1/jobs").expect("a valid URL");
        assert_eq!((endpoint.user(), endpoint.database()), ("app", "jobs"));
        assert_eq!(endpoint.to_string(), "postgres://app:***@127.0.0.1/jobs");
        let shown = "postgres://app:***@db.invalid/jobs";
        let refused = address_of(shown, ("db.invalid".to_owned(), 5432)).expect_err("refused");
        assert!(refused.starts_with("`postgres://app:***@db.invalid/jobs`: cannot resolve db.invalid"), "{refused}");
        assert_eq!(address_of("x", ("127.0.0.1".to_owned(), 2381)).map(|address| address.port()), Ok(2381));
    }

    #[test]
    fn a_key_of_the_users_where_the_runs_would_go_is_named_and_left_alone() {
        let server = RedisServer::start().expect("redis-server starts");
        let mut client = server.connect().expect("Redis answers");
        let keys = ["run-7:job:daily-report".to_owned(), "run-7:job:daily-report:token".to_owned()];
        client.call(&["SET", &keys[1], "41"]).expect("SET");
        let url = format!("redis://127.0.0.1:{}", server.port);
        let endpoint = redis_url(&url).expect("a valid URL");
        let refused = borrow_redis(&endpoint, crate::proxy::loopback(server.port), &keys).expect_err("refused");
        assert_eq!(
            refused,
            format!(
                "{url} already has `run-7:job:daily-report:token`: live mode uses only keys it creates, and will not touch this one"
            )
        );
        assert_eq!(client.call(&["GET", &keys[1]]).expect("GET"), "\"41\"");
    }

    #[test]
    fn a_port_that_is_not_postgresql_is_told_at_its_first_answer() {
        let server = RedisServer::start().expect("redis-server starts");
        let url = format!("postgres://postgres@127.0.0.1:{}/postgres", server.port);
        let refused = probe_postgres(&url, crate::proxy::loopback(server.port)).expect_err("refused");
        // Redis answers the line it is asked next, so the probe says what it answered, not that it waited.
        let expected =
            format!("the port of {url} is in use by something that is not PostgreSQL (it answered \"+PONG\")");
        assert_eq!(refused, expected);
    }
}
