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

use crate::supervisor::{Supervision, Undo};
use locklab_conformance::etcd::EtcdClient;
use locklab_conformance::pg::{PgConnection, PgLogin};
use locklab_conformance::resp::Connection;
use locklab_conformance::server::{EtcdServer, PgServer, RedisServer};
use locklab_engine::event::{LEASE_KEY, LOCK_KEY, TOKEN_KEY};
use locklab_engine::ids::Party;
use locklab_engine::scenario::{Fault, Scenario, StrategyId, StrategySettings, Target};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// Servers the user already runs, by URL; any left out, live mode starts its own.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerUrls {
    /// `redis://HOST[:PORT]`, one per node the strategy locks (five under Redlock).
    pub redis: Vec<String>,
    /// `postgres://USER@HOST[:PORT]/DATABASE`.
    pub postgres: Option<String>,
    /// `http://HOST[:PORT]`, one member of the cluster.
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
    pub(crate) redis_addresses: Vec<SocketAddr>,
    /// Held for its `Drop`, which stops the cluster live mode started.
    _postgres: Option<PgServer>,
    pub(crate) postgres_address: SocketAddr,
    pub(crate) login: PgLogin,
    /// etcd when live mode started it; `etcd_address` is set either way under consensus.
    pub(crate) etcd: Option<EtcdServer>,
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
        let nodes = settings.redis_nodes();
        let tag = run_tag();
        let key_prefix =
            if urls.redis.is_empty() && urls.etcd.is_none() { String::new() } else { format!("locklab-live:{tag}:") };
        let mut borrowed = Borrowed { supervision: Some(supervision), undo: Vec::new() };
        let (redis, redis_addresses, redis_name) = if urls.redis.is_empty() {
            let redis: Vec<RedisServer> = (0..nodes).map(|_| RedisServer::start()).collect::<Result<_, _>>()?;
            let addresses = redis.iter().map(|server| crate::proxy::loopback(server.port)).collect();
            let name = format!("Redis {}", redis.first().map(RedisServer::version).unwrap_or_default());
            (redis, addresses, name)
        } else {
            if urls.redis.len() != usize::from(nodes) {
                return Err(format!(
                    "{strategy} locks {nodes} Redis node(s): give --redis once per node (it was given {} time(s))",
                    urls.redis.len()
                ));
            }
            // Every node is a server of its own: checked before any is asked anything.
            let mut addresses: Vec<SocketAddr> = Vec::new();
            for (url, given) in urls.redis.iter().zip(1..) {
                let address = redis_url(url)?;
                if let Some(earlier) = addresses.iter().position(|earlier| *earlier == address) {
                    let same = if urls.redis[earlier] == *url {
                        format!(
                            "`{url}` is given twice (as the {} and the {} --redis)",
                            ordinal(earlier + 1),
                            ordinal(given)
                        )
                    } else {
                        format!("`{}` and `{url}` are the same server ({address})", urls.redis[earlier])
                    };
                    return Err(format!(
                        "{same}: {strategy} locks {nodes} independent nodes, so each --redis must be a server of its own"
                    ));
                }
                addresses.push(address);
            }
            let keys = [format!("{key_prefix}{LOCK_KEY}"), format!("{key_prefix}{TOKEN_KEY}")];
            let mut version = String::new();
            for (url, address) in urls.redis.iter().zip(&addresses) {
                version = borrow_redis(url, *address, &keys)?;
                borrowed.redis(*address, &keys);
            }
            (Vec::new(), addresses, format!("Redis {version} (yours)"))
        };
        let world = &scenario.world;
        let (postgres, postgres_address, login, postgres_name) = match &urls.postgres {
            None => {
                let server = PgServer::start(&[
                    format!("max_connections={}", world.db_max_connections.max(4)),
                    "superuser_reserved_connections=0".to_owned(),
                ])?;
                let login = PgLogin { application_name: APPLICATION_NAME.to_owned(), ..PgLogin::local("postgres") };
                let name = format!("PostgreSQL {}", server.version());
                let address = crate::proxy::loopback(server.port);
                (Some(server), address, login, name)
            }
            Some(url) => {
                let (address, mut login) = postgres_url(url)?;
                let schema = format!("locklab_live_{tag}");
                let version = borrow_postgres(url, address, &login, &schema)?;
                borrowed.postgres(address, &login, &schema);
                login.schema = Some(schema);
                (None, address, login, format!("PostgreSQL {version} (yours)"))
            }
        };
        let (etcd, etcd_address, etcd_name) = match (&settings, &urls.etcd) {
            (StrategySettings::Consensus(_), None) => {
                let etcd = own_etcd(scenario, time_scale)?;
                let address = crate::proxy::loopback(etcd.port());
                let name = format!("etcd {}", etcd.version());
                (Some(etcd), Some(address), Some(name))
            }
            (StrategySettings::Consensus(_), Some(url)) => {
                let address = etcd_url(url)?;
                let key = format!("{key_prefix}{LEASE_KEY}");
                let version = borrow_etcd(url, address, &key)?;
                borrowed.etcd(address, &key);
                (None, Some(address), Some(format!("etcd {version} (yours)")))
            }
            (
                StrategySettings::Naive(_)
                | StrategySettings::Fencing(_)
                | StrategySettings::Redlock(_)
                | StrategySettings::DbLock(_)
                | StrategySettings::UniqueInsert,
                _,
            ) => (None, None, None),
        };
        let names = [Some(redis_name), Some(postgres_name), etcd_name].into_iter().flatten().collect();
        Ok(Servers {
            redis,
            redis_addresses,
            _postgres: postgres,
            postgres_address,
            login,
            etcd,
            etcd_address,
            names,
            key_prefix,
            _borrowed: borrowed,
        })
    }
}

/// etcd of live mode's own: one member, or three when the scenario loses
/// the leader. Their election timeout is then the world's failover time on
/// the wall clock, so the store is without a leader about that long (a
/// follower campaigns after one to two timeouts).
fn own_etcd(scenario: &Scenario, time_scale: u32) -> Result<EtcdServer, String> {
    let leader_loss = scenario.faults.iter().any(|fault| matches!(fault, Fault::ConsensusLeaderLoss { .. }));
    if leader_loss {
        let election_timeout_ms = (scenario.world.failover_ms / u64::from(time_scale.max(1))).clamp(50, 50_000);
        EtcdServer::start_cluster(3, election_timeout_ms)
    } else {
        EtcdServer::start()
    }
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

    fn redis(&mut self, address: SocketAddr, keys: &[String]) {
        self.keep(Undo::RedisKeys { address, keys: keys.to_vec() });
    }

    fn postgres(&mut self, address: SocketAddr, login: &PgLogin, schema: &str) {
        let (user, database, schema) = (login.user.clone(), login.database.clone(), schema.to_owned());
        self.keep(Undo::PostgresSchema { address, user, database, schema });
    }

    fn etcd(&mut self, address: SocketAddr, key: &str) {
        self.keep(Undo::EtcdKey { address, key: key.to_owned() });
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

/// The user's Redis node at `address`: it answers PING as Redis, and holds
/// none of `keys`, the run's. Returns its version.
fn borrow_redis(url: &str, address: SocketAddr, keys: &[String]) -> Result<String, String> {
    let mut connection = Connection::open_at(address).map_err(|error| nothing_answers(url, &error))?;
    match connection.call(&["PING"]) {
        Ok(reply) if reply == "PONG" => {}
        Ok(reply) => return Err(not_the_server(url, "Redis", &format!("it answered PING with {reply}"))),
        Err(error) => return Err(not_the_server(url, "Redis", &error)),
    }
    for key in keys {
        if connection.call(&["EXISTS", key])? != "(integer) 0" {
            return Err(format!(
                "{url} already has `{key}`: live mode uses only keys it creates, and will not touch this one"
            ));
        }
    }
    let info = connection.call(&["INFO", "server"])?;
    Ok(info.split(['\r', '\n']).find_map(|line| line.strip_prefix("redis_version:")).unwrap_or("unknown").to_owned())
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

/// The user's PostgreSQL at `address`: it lets `login` in, and gets
/// `schema`, the run's own. Returns the server's version.
fn borrow_postgres(url: &str, address: SocketAddr, login: &PgLogin, schema: &str) -> Result<String, String> {
    probe_postgres(url, address)?;
    let mut connection = match PgConnection::open_at(address, login) {
        Ok(Ok(connection)) => connection,
        Ok(Err(refused)) => return Err(format!("{url} refused the login: {}", refused.text())),
        Err(error) if error.contains("cannot connect") => return Err(format!("nothing answers at {url}: {error}")),
        Err(error) => return Err(not_the_server(url, "PostgreSQL", &error)),
    };
    let created = connection.query(&format!("CREATE SCHEMA {schema}"))?;
    if let locklab_conformance::pg::PgReply::Error { .. } = created {
        return Err(format!("{url} would not let {} create a schema: {}", login.user, created.text()));
    }
    let version = connection.query("SHOW server_version")?.first_value().unwrap_or("unknown").to_owned();
    Ok(version)
}

/// The user's etcd at `address`: it answers as etcd, and has no `key`, the
/// run's lease key. Returns its version.
fn borrow_etcd(url: &str, address: SocketAddr, key: &str) -> Result<String, String> {
    TcpStream::connect_timeout(&address, PROBE_TIMEOUT).map_err(|error| nothing_answers(url, &error))?;
    let version = locklab_conformance::etcd::version(address)
        .ok_or_else(|| not_the_server(url, "etcd", "it did not answer GET /version as etcd does"))?;
    let body = serde_json::json!({"key": locklab_conformance::etcd::encode(key)});
    let range = EtcdClient::at(address)
        .post("/v3/kv/range", &body, PROBE_TIMEOUT)
        .map_err(|error| not_the_server(url, "etcd", &error))?;
    if range.get("kvs").is_some_and(|kvs| kvs.as_array().is_some_and(|kvs| !kvs.is_empty())) {
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

/// `redis://HOST[:PORT][/0]`.
fn redis_url(url: &str) -> Result<SocketAddr, String> {
    let rest = url.strip_prefix("redis://").ok_or_else(|| format!("`{url}` is not a redis:// URL"))?;
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    if !matches!(path, "" | "0") {
        return Err(format!("`{url}`: live mode uses database 0, as the lab's Redis does"));
    }
    if authority.contains('@') {
        return Err(format!("`{url}` carries a user or password, and live mode sends no AUTH"));
    }
    address(url, authority, 6379)
}

/// `postgres://USER@HOST[:PORT]/DATABASE` (or `postgresql://`); the user
/// defaults to `postgres`, the database to the user's name.
fn postgres_url(url: &str) -> Result<(SocketAddr, PgLogin), String> {
    let rest = url
        .strip_prefix("postgres://")
        .or_else(|| url.strip_prefix("postgresql://"))
        .ok_or_else(|| format!("`{url}` is not a postgres:// URL"))?;
    if rest.contains('?') {
        return Err(format!("`{url}`: live mode takes no connection parameters after `?`"));
    }
    let (authority, database) = rest.split_once('/').unwrap_or((rest, ""));
    let (user, host) = authority.rsplit_once('@').unwrap_or(("postgres", authority));
    if user.contains(':') {
        return Err(format!(
            "`{url}` carries a password, and live mode's client sends none: it logs in where the server trusts it"
        ));
    }
    let database = if database.is_empty() { user } else { database };
    let login = PgLogin {
        user: user.to_owned(),
        database: database.to_owned(),
        schema: None,
        application_name: APPLICATION_NAME.to_owned(),
    };
    Ok((address(url, host, 5432)?, login))
}

/// `http://HOST[:PORT]`.
fn etcd_url(url: &str) -> Result<SocketAddr, String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("`{url}` is not an http:// URL (live mode speaks plain HTTP to etcd's gateway)"))?;
    address(url, rest.trim_end_matches('/'), 2379)
}

/// `HOST[:PORT]` resolved; `default_port` when the URL names none.
fn address(url: &str, authority: &str, default_port: u16) -> Result<SocketAddr, String> {
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) => (host, port.parse().map_err(|_| format!("`{url}`: `{port}` is not a port"))?),
        None => (authority, default_port),
    };
    if host.is_empty() {
        return Err(format!("`{url}` names no host"));
    }
    (host, port)
        .to_socket_addrs()
        .map_err(|error| format!("`{url}`: cannot resolve {host}: {error}"))?
        .next()
        .ok_or_else(|| format!("`{url}`: {host} has no address"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_read_with_their_defaults_and_refused_by_name() {
        assert_eq!(redis_url("redis://127.0.0.1").map(|address| address.port()), Ok(6379));
        assert_eq!(redis_url("redis://127.0.0.1:7000/0").map(|address| address.port()), Ok(7000));
        assert!(redis_url("127.0.0.1:6379").is_err_and(|error| error.contains("not a redis:// URL")));
        assert!(redis_url("redis://:secret@127.0.0.1").is_err_and(|error| error.contains("AUTH")));
        assert!(redis_url("redis://127.0.0.1/3").is_err_and(|error| error.contains("database 0")));
        assert!(redis_url("redis://127.0.0.1:http").is_err_and(|error| error.contains("is not a port")));
        let (address, login) = postgres_url("postgres://app@127.0.0.1/jobs").expect("a valid URL");
        assert_eq!((address.port(), login.user.as_str(), login.database.as_str()), (5432, "app", "jobs"));
        let (_, login) = postgres_url("postgresql://127.0.0.1:5433").expect("a valid URL");
        assert_eq!((login.user.as_str(), login.database.as_str()), ("postgres", "postgres"));
        assert!(postgres_url("postgres://app:pw@127.0.0.1/jobs").is_err_and(|error| error.contains("password")));
        assert_eq!(etcd_url("http://127.0.0.1:2381/").map(|address| address.port()), Ok(2381));
        assert!(etcd_url("https://127.0.0.1").is_err_and(|error| error.contains("plain HTTP")));
    }

    #[test]
    fn a_key_of_the_users_where_the_runs_would_go_is_named_and_left_alone() {
        let server = RedisServer::start().expect("redis-server starts");
        let mut client = server.connect().expect("Redis answers");
        let keys = ["run-7:job:daily-report".to_owned(), "run-7:job:daily-report:token".to_owned()];
        client.call(&["SET", &keys[1], "41"]).expect("SET");
        let url = format!("redis://127.0.0.1:{}", server.port);
        let refused = borrow_redis(&url, crate::proxy::loopback(server.port), &keys).expect_err("refused");
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
