//! The Redis client on a real `redis-server` that wants a password (the
//! default user's, and users of its own via ACL), and over TLS: the lock
//! commands the engine uses, each answered as the engine's model answers it
//! (`engine/src/sim/redis.rs`), error replies that keep their code, and a
//! connection that is refused, hangs, or was closed by a restart.

#[allow(dead_code, reason = "each test file uses the part of the servers it needs")]
mod support;

use locklab_clients::{RedisClient, RedisEndpoint, RedisError};
use locklab_engine::event::{LOCK_KEY, LockValue, Owner, RedisCommand, RedisReply};
use locklab_engine::ids::InstanceId;
use std::time::{Duration, Instant};
use support::{Certificates, Redis, SERVER_NAME, Scratch, Silent, free_port, loopback};

const LIMIT: Duration = Duration::from_secs(5);
const PASSWORD: &str = "s3cret";

/// The server's own users: the default one wants [`PASSWORD`]; `locklab`
/// may do anything to the lab's keys; `reader` may only read.
const USERS: &[&str] = &[
    "--requirepass",
    PASSWORD,
    "--user",
    "locklab",
    "on",
    ">lock-pw",
    "~job:*",
    "+@all",
    "--user",
    "reader",
    "on",
    ">read-pw",
    "~*",
    "+get",
    "+ping",
];

fn owner(instance: u8, nonce: u16) -> Owner {
    Owner { instance: InstanceId(instance), nonce }
}

fn client(url: &str) -> RedisClient {
    RedisClient::new(RedisEndpoint::parse(url).expect("a valid URL")).expect("a client")
}

/// Plays `command` and says what the engine would be told.
fn play(client: &mut RedisClient, command: RedisCommand) -> RedisReply {
    client.execute(command, LIMIT).unwrap_or_else(|error| panic!("{command}: {error}"))
}

/// The lock commands, as strategies send them, on `endpoint`'s server (empty at first).
fn lock_commands_answer_as_the_engine_models_them(endpoint: RedisEndpoint) {
    let mut redis = RedisClient::new(endpoint).expect("a client");
    let (a, b) = (owner(0, 0x7f3a), owner(1, 0x0801));
    // The seed's lock: the same literal value for everyone.
    let seed = RedisCommand::SetNxEx { value: LockValue::Locked, ttl_s: 300 };
    assert_eq!(play(&mut redis, seed), RedisReply::Ok);
    assert_eq!(play(&mut redis, seed), RedisReply::Nil);
    assert_eq!(play(&mut redis, RedisCommand::Get), RedisReply::Value(LockValue::Locked));
    assert_eq!(play(&mut redis, RedisCommand::Del), RedisReply::Integer(1));
    assert_eq!(play(&mut redis, RedisCommand::Get), RedisReply::Nil);
    // The lock script: the key and the token in one step; the token only when the key was set.
    assert_eq!(play(&mut redis, RedisCommand::SetNxPxIncr { value: a, ttl_ms: 60_000 }), RedisReply::Integer(1));
    assert_eq!(play(&mut redis, RedisCommand::SetNxPxIncr { value: b, ttl_ms: 60_000 }), RedisReply::Nil);
    assert_eq!(play(&mut redis, RedisCommand::Get), RedisReply::Value(LockValue::Owner(a)));
    // Extend and release only what is still one's own.
    assert_eq!(play(&mut redis, RedisCommand::CompareAndExtend { value: b, ttl_ms: 90_000 }), RedisReply::Integer(0));
    assert_eq!(play(&mut redis, RedisCommand::CompareAndExtend { value: a, ttl_ms: 90_000 }), RedisReply::Integer(1));
    let ttl_ms = redis.call(&["PTTL", LOCK_KEY], LIMIT).expect("PTTL");
    assert!(matches!(ttl_ms, redis::Value::Int(ttl_ms) if ttl_ms > 60_000), "the extend moved the expiry: {ttl_ms:?}");
    assert_eq!(play(&mut redis, RedisCommand::CompareAndDelete { value: b }), RedisReply::Integer(0));
    assert_eq!(play(&mut redis, RedisCommand::CompareAndDelete { value: a }), RedisReply::Integer(1));
    assert_eq!(play(&mut redis, RedisCommand::Get), RedisReply::Nil);
    // The counter the script increments is the one INCR does.
    assert_eq!(play(&mut redis, RedisCommand::Incr), RedisReply::Integer(2));
    assert_eq!(play(&mut redis, RedisCommand::Pexpire { ttl_ms: 1_000 }), RedisReply::Integer(0));
    assert_eq!(play(&mut redis, RedisCommand::SetNxPx { value: LockValue::Owner(b), ttl_ms: 50_000 }), RedisReply::Ok);
    assert_eq!(play(&mut redis, RedisCommand::Pexpire { ttl_ms: 100_000 }), RedisReply::Integer(1));
    assert_eq!(play(&mut redis, RedisCommand::SetNxPxIncr { value: a, ttl_ms: 60_000 }), RedisReply::Nil);
    assert_eq!(play(&mut redis, RedisCommand::Incr), RedisReply::Integer(3));
    assert_eq!(redis.call(&["DEL", LOCK_KEY, locklab_engine::event::TOKEN_KEY], LIMIT), Ok(redis::Value::Int(2)));
}

#[test]
fn a_password_protected_redis_plays_the_lock_commands_for_the_default_user_and_an_acl_user() {
    let redis = Redis::start(USERS, None);
    let port = redis.port;
    let endpoint = |url: String| RedisEndpoint::parse(&url).expect("a valid URL");
    lock_commands_answer_as_the_engine_models_them(endpoint(format!("redis://:{PASSWORD}@127.0.0.1:{port}")));
    lock_commands_answer_as_the_engine_models_them(endpoint(format!("redis://locklab:lock-pw@127.0.0.1:{port}/0")));
    let version = client(&format!("redis://:{PASSWORD}@127.0.0.1:{port}")).server_version(LIMIT).expect("INFO");
    assert!(version.starts_with('7'), "Debian's Redis 7: {version}");
}

/// The code of the error reply `command` got, or what it got instead.
fn error_code(client: &mut RedisClient, command: RedisCommand) -> String {
    match client.execute(command, LIMIT) {
        Err(RedisError::Reply { code, message }) => {
            assert!(!message.is_empty(), "{code} comes with the server's message");
            code
        }
        other => panic!("{command} got {other:?}, not an error reply"),
    }
}

#[test]
fn error_replies_keep_their_code() {
    let redis = Redis::start(USERS, None);
    let url = |credentials: &str| format!("redis://{credentials}127.0.0.1:{}", redis.port);
    let lock = RedisCommand::SetNxPxIncr { value: owner(2, 1), ttl_ms: 10_000 };
    assert_eq!(error_code(&mut client(&url(":wrong@")), RedisCommand::Get), "WRONGPASS");
    assert_eq!(error_code(&mut client(&url("locklab:wrong@")), RedisCommand::Get), "WRONGPASS");
    assert_eq!(error_code(&mut client(&url("")), RedisCommand::Get), "NOAUTH");
    let mut reader = client(&url("reader:read-pw@"));
    assert_eq!(play(&mut reader, RedisCommand::Get), RedisReply::Nil);
    assert_eq!(error_code(&mut reader, lock), "NOPERM");
    // A key of the wrong type: the server's WRONGTYPE, not a refused connection.
    let mut admin = client(&url(&format!(":{PASSWORD}@")));
    assert_eq!(admin.call(&["LPUSH", LOCK_KEY, "x"], LIMIT), Ok(redis::Value::Int(1)));
    assert_eq!(error_code(&mut admin, RedisCommand::Get), "WRONGTYPE");
    // Inside a script too: the unlock script's GET fails, and the reply keeps the GET's code.
    assert_eq!(error_code(&mut admin, RedisCommand::CompareAndDelete { value: owner(2, 1) }), "WRONGTYPE");
    // A value no instance writes is no lock value: said, not read as nil.
    assert_eq!(admin.call(&["DEL", LOCK_KEY], LIMIT), Ok(redis::Value::Int(1)));
    assert_eq!(admin.call(&["SET", LOCK_KEY, "somebody else"], LIMIT), Ok(redis::Value::Okay));
    let got = admin.execute(RedisCommand::Get, LIMIT);
    assert!(matches!(&got, Err(RedisError::UnexpectedReply { reply, .. }) if reply.contains("somebody")), "{got:?}");
    // The connection stays usable after an error reply.
    assert_eq!(play(&mut admin, RedisCommand::Del), RedisReply::Integer(1));
}

#[test]
fn a_node_that_cannot_be_reached_or_does_not_answer_is_what_the_engine_models() {
    let mut nobody = client(&format!("redis://127.0.0.1:{}", free_port()));
    assert_eq!(nobody.execute(RedisCommand::Get, LIMIT), Ok(RedisReply::ConnectionRefused));
    let silent = Silent::start();
    let mut hanging = client(&format!("redis://127.0.0.1:{}", silent.port));
    let asked = Instant::now();
    assert_eq!(hanging.execute(RedisCommand::Incr, Duration::from_millis(200)), Ok(RedisReply::Timeout));
    assert!(asked.elapsed() < Duration::from_secs(2), "the limit was kept: {:?}", asked.elapsed());
    assert!(!hanging.is_open(), "a connection that timed out is not used again");
}

#[test]
fn a_key_prefix_names_the_lock_s_keys_and_nothing_else() {
    let redis = Redis::start(&["--requirepass", PASSWORD], None);
    let url = format!("redis://:{PASSWORD}@127.0.0.1:{}", redis.port);
    let mut run = client(&url).with_key_prefix("run-7:");
    let mut plain = client(&url);
    let a = owner(0, 1);
    let lock = RedisCommand::SetNxPxIncr { value: a, ttl_ms: 10_000 };
    assert_eq!(play(&mut run, lock), RedisReply::Integer(1));
    assert_eq!(play(&mut run, RedisCommand::Get), RedisReply::Value(LockValue::Owner(a)));
    // The engine's own names are left alone: a client without the prefix finds nothing there.
    assert_eq!(play(&mut plain, RedisCommand::Get), RedisReply::Nil);
    let held = plain.call(&["GET", &format!("run-7:{LOCK_KEY}")], LIMIT).expect("GET");
    assert_eq!(held, locklab_clients::redis::Value::BulkString(a.to_string().into_bytes()));
    let counter = plain.call(&["GET", &format!("run-7:{LOCK_KEY}:token")], LIMIT).expect("GET");
    assert_eq!(counter, locklab_clients::redis::Value::BulkString(b"1".to_vec()));
    assert_eq!(play(&mut run, RedisCommand::CompareAndDelete { value: a }), RedisReply::Integer(1));
    assert_eq!(play(&mut run, RedisCommand::Get), RedisReply::Nil);
}

#[test]
fn a_connection_the_server_closed_is_replaced_before_it_is_used() {
    let mut redis = Redis::start(&["--requirepass", PASSWORD], None);
    let mut lab = client(&format!("redis://:{PASSWORD}@127.0.0.1:{}", redis.port));
    assert_eq!(play(&mut lab, RedisCommand::Incr), RedisReply::Integer(1));
    assert!(lab.is_open());
    // A restart between two commands: the client sees the close and opens
    // a fresh connection, logged in again, instead of failing the next command.
    redis.kill();
    let deadline = Instant::now() + LIMIT;
    while lab.is_open() {
        assert!(Instant::now() < deadline, "the client did not see the server close the connection");
        // Polling for the condition: the client's driver has read the close.
        std::thread::sleep(Duration::from_millis(5));
    }
    redis.start_again();
    assert_eq!(play(&mut lab, RedisCommand::Incr), RedisReply::Integer(1), "the restarted node is empty");
    redis.kill();
    assert_eq!(lab.execute(RedisCommand::Incr, LIMIT), Ok(RedisReply::ConnectionRefused));
}

#[test]
fn tls_checks_the_certificate_against_the_url_host_while_dialling_another_address() {
    let scratch = Scratch::new("redis-certificates");
    let certificates = Certificates::write(&scratch);
    let redis = Redis::start(&["--requirepass", PASSWORD], Some(&certificates));
    let port = redis.port;
    let endpoint = |host: &str, authority: &std::path::Path| {
        let url = format!("rediss://:{PASSWORD}@{host}:{port}?cacert={}", authority.display());
        RedisEndpoint::parse(&url).expect("a valid URL").via(loopback(port))
    };
    let trusted = endpoint(SERVER_NAME, &certificates.authority);
    assert!(trusted.uses_tls());
    assert_eq!(
        trusted.to_string(),
        format!("rediss://:***@{SERVER_NAME}:{port}?cacert={}", certificates.authority.display())
    );
    lock_commands_answer_as_the_engine_models_them(trusted);
    let refused = |endpoint: RedisEndpoint| {
        RedisClient::new(endpoint).expect("a client").execute(RedisCommand::Get, LIMIT).expect_err("refused")
    };
    let unknown_authority = refused(endpoint(SERVER_NAME, &certificates.other_authority));
    assert!(matches!(&unknown_authority, RedisError::Tls(why) if why.contains("UnknownIssuer")), "{unknown_authority}");
    let other_name = refused(endpoint("cache.locklab.test", &certificates.authority));
    assert!(matches!(&other_name, RedisError::Tls(why) if why.contains("not valid for name")), "{other_name}");
}
