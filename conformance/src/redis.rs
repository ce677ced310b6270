//! The Redis checks: short scripted exchanges, each run against the
//! engine's own Redis model ([`RedisProbe`]) and against a real
//! `redis-server`, replies compared in order; and the one check where timing
//! is the point, a key's expiry, compared within [`EXPIRY_TOLERANCE_MS`].

use crate::resp::Connection;
use crate::server::RedisServer;
use crate::{Outcome, Row, owner};
use locklab_engine::RedisProbe;
use locklab_engine::event::{LockValue, RedisCommand};
use locklab_engine::ids::InstanceId;
use std::time::{Duration, Instant};

/// How far a real expiry may come after the TTL (the polling client's
/// round trips and the server's clock tick), and never before it.
pub const EXPIRY_TOLERANCE_MS: u64 = 50;

/// A step of an exchange.
#[derive(Clone, Copy)]
enum Step {
    /// Client `0..3` (instances a, b, c) sends a command.
    Send(u8, RedisCommand),
    /// The node restarts without persistence.
    Restart,
    /// The node's wall clock is stepped by this many ms.
    ClockJump(i64),
}

/// A Redis exchange's steps (the suite's `Exchange`, with its own kind of step).
type Exchange = crate::Exchange<Step>;

fn value(client: u8) -> LockValue {
    LockValue::Owner(owner(client))
}

/// The client sets the key to its own value if it is free, for `ttl_ms`.
fn set_px(client: u8, ttl_ms: u64) -> Step {
    Step::Send(client, RedisCommand::SetNxPx { value: value(client), ttl_ms })
}

/// The client runs fencing's lock script: the key for 30 s and, if it set it, a token.
fn lock_with_token(client: u8) -> Step {
    Step::Send(client, RedisCommand::SetNxPxIncr { value: owner(client), ttl_ms: 30_000 })
}

/// Every exchange of one node, in the order the document lists them.
fn exchanges() -> Vec<Exchange> {
    [taking_exchanges(), releasing_and_extending_exchanges(), fault_exchanges()].into_iter().flatten().collect()
}

/// How a free key is taken (with the commands a recipe may use besides the
/// built-ins' own: `SETNX` then `EXPIRE`, a plain `SET`), and what a client
/// that finds it taken gets.
fn taking_exchanges() -> Vec<Exchange> {
    use RedisCommand as C;
    use Step::{ClockJump, Send};
    vec![
        Exchange {
            name: "SET NX PX takes a free key once",
            relies: "the first SET NX gets OK, every other (nil) while the key is held; GET reads the holder's value",
            steps: vec![set_px(0, 30_000), set_px(1, 30_000), Send(2, C::Get)],
        },
        Exchange {
            name: "SET NX EX, the post's literal lock",
            relies: "`SET job:daily-report locked NX EX 300` from two instances: OK, then (nil); the value names nobody",
            steps: vec![
                Send(0, C::SetNxEx { value: LockValue::Locked, ttl_s: 300 }),
                Send(1, C::SetNxEx { value: LockValue::Locked, ttl_s: 300 }),
                Send(1, C::Get),
            ],
        },
        Exchange {
            name: "The lock script takes the token in the same call",
            relies: "fencing's one script: SET NX PX and, only if it set the key, INCR of the token; a loser gets (nil) and no token",
            steps: vec![
                lock_with_token(0),
                lock_with_token(1),
                Send(0, C::CompareAndDelete { value: owner(0) }),
                lock_with_token(1),
                Send(1, C::Get),
            ],
        },
        Exchange {
            name: "SETNX then EXPIRE: two round trips",
            relies: "SETNX answers 1 and sets a key with no expiry, another client's SETNX 0; only the EXPIRE sent after it gives the key a TTL, so a clock stepped past that TTL ends it",
            steps: vec![
                Send(0, C::SetNx { value: value(0) }),
                Send(1, C::SetNx { value: value(1) }),
                Send(1, C::Get),
                Send(0, C::Expire { ttl_s: 10 }),
                ClockJump(10_001),
                Send(1, C::Get),
                Send(1, C::SetNx { value: value(1) }),
            ],
        },
        Exchange {
            name: "A key SETNX set without EXPIRE never expires",
            relies: "a client that dies between SETNX and EXPIRE leaves a lock no clock ends: a day later it is still there, and every SETNX answers 0",
            steps: vec![
                Send(0, C::SetNx { value: value(0) }),
                ClockJump(86_400_000),
                Send(1, C::Get),
                Send(1, C::SetNx { value: value(1) }),
            ],
        },
        Exchange {
            name: "A plain SET replaces another client's key",
            relies: "GET then SET: a SET with no NX answers OK whoever holds the key, and the holder's unlock script then finds another's value",
            steps: vec![
                set_px(0, 30_000),
                Send(1, C::SetPx { value: value(1), ttl_ms: 30_000 }),
                Send(0, C::Get),
                Send(0, C::CompareAndDelete { value: owner(0) }),
                Send(1, C::Get),
            ],
        },
    ]
}

/// How a holder lets go of its key or extends it (a plain `EXPIRE` too), and
/// what the same commands do to another client's key or to none.
fn releasing_and_extending_exchanges() -> Vec<Exchange> {
    use RedisCommand as C;
    use Step::{ClockJump, Send};
    vec![
        Exchange {
            name: "Compare-and-delete spares another client's key",
            relies: "the unlock script deletes only its own value: 0 for another's key, 1 for its own",
            steps: vec![
                set_px(0, 30_000),
                Send(1, C::CompareAndDelete { value: owner(1) }),
                Send(1, C::Get),
                Send(0, C::CompareAndDelete { value: owner(0) }),
                Send(0, C::Get),
            ],
        },
        Exchange {
            name: "Compare-and-PEXPIRE extends only its own lock",
            relies: "lease renewal: 0 when the key holds another's value or is gone, 1 for its own",
            steps: vec![
                set_px(0, 30_000),
                Send(1, C::CompareAndExtend { value: owner(1), ttl_ms: 30_000 }),
                Send(0, C::CompareAndExtend { value: owner(0), ttl_ms: 30_000 }),
                Send(0, C::Del),
                Send(0, C::CompareAndExtend { value: owner(0), ttl_ms: 30_000 }),
            ],
        },
        Exchange {
            name: "A plain DEL removes another client's key",
            relies: "the naive release (the overrun story): DEL answers 1 whoever set the key, and the next SET NX wins",
            steps: vec![set_px(0, 30_000), Send(1, C::Del), Send(2, C::Get), set_px(2, 30_000)],
        },
        Exchange {
            name: "PEXPIRE and INCR on missing keys",
            relies: "PEXPIRE of a missing key is 0; INCR of a missing counter starts it at 1",
            steps: vec![Send(0, C::Pexpire { ttl_ms: 30_000 }), Send(0, C::Incr), Send(1, C::Incr)],
        },
        Exchange {
            name: "A plain EXPIRE extends another client's key",
            relies: "renewal by plain EXPIRE: it answers 1 for whatever key is there and moves its expiry, another client's lock included; 0 when there is none",
            steps: vec![
                set_px(0, 10_000),
                Send(1, C::Expire { ttl_s: 30 }),
                ClockJump(10_001),
                Send(1, C::Get),
                Send(1, C::Del),
                Send(1, C::Expire { ttl_s: 30 }),
            ],
        },
    ]
}

/// What the node's faults do to the keys: a clock step and a restart.
fn fault_exchanges() -> Vec<Exchange> {
    use RedisCommand as C;
    use Step::{ClockJump, Restart, Send};
    vec![
        Exchange {
            name: "A clock stepped forward past the TTL expires the key",
            relies: "clock_jump on a Redis node: a key's expiry is read from the node's own wall clock, so a step forward ends the lock early (Kleppmann 2016)",
            // One ms past the TTL: a step of exactly the TTL lands on the
            // key's last millisecond, where a real server answers either way
            // depending on whether its clock ticked since the SET.
            steps: vec![set_px(0, 10_000), Send(1, C::Get), ClockJump(10_001), Send(1, C::Get), set_px(1, 10_000)],
        },
        Exchange {
            name: "A restart without persistence forgets every key",
            relies: "redis_restart: the lock and the token counter are both gone, so a token is handed out again",
            steps: vec![lock_with_token(0), Restart, Send(1, C::Get), lock_with_token(1)],
        },
    ]
}

/// Somewhere the exchanges can run.
trait Redis {
    fn send(&mut self, client: u8, command: RedisCommand) -> Result<String, String>;
    fn restart(&mut self) -> Result<(), String>;
    fn step_clock(&mut self, by_ms: i64) -> Result<(), String>;
}

impl Redis for RedisProbe {
    fn send(&mut self, client: u8, command: RedisCommand) -> Result<String, String> {
        Ok(self.command(client, command).to_string())
    }
    fn restart(&mut self) -> Result<(), String> {
        RedisProbe::restart(self);
        Ok(())
    }
    fn step_clock(&mut self, by_ms: i64) -> Result<(), String> {
        RedisProbe::step_clock(self, by_ms);
        Ok(())
    }
}

/// A real server and one connection per client.
struct Real<'a> {
    server: &'a mut RedisServer,
    clients: Vec<Option<Connection>>,
}

impl Redis for Real<'_> {
    fn send(&mut self, client: u8, command: RedisCommand) -> Result<String, String> {
        let slot = usize::from(client);
        if self.clients.len() <= slot {
            self.clients.resize_with(slot + 1, || None);
        }
        if self.clients[slot].is_none() {
            self.clients[slot] = Some(self.server.connect()?);
        }
        let connection = self.clients[slot].as_mut().ok_or("no connection")?;
        connection.send(command)
    }
    fn restart(&mut self) -> Result<(), String> {
        self.clients.clear();
        self.server.restart()
    }
    fn step_clock(&mut self, by_ms: i64) -> Result<(), String> {
        self.server.step_clock(by_ms)
    }
}

/// The replies of an exchange, one line per step.
fn transcript(target: &mut dyn Redis, steps: &[Step]) -> Result<Vec<String>, String> {
    let mut lines = Vec::new();
    for step in steps {
        lines.push(match *step {
            Step::Send(client, command) => {
                let reply = target.send(client, command)?;
                format!("{}: {command} → {reply}", InstanceId(client))
            }
            Step::Restart => {
                target.restart()?;
                "restart without persistence".to_owned()
            }
            Step::ClockJump(by_ms) => {
                target.step_clock(by_ms)?;
                format!("the node's clock steps {by_ms:+} ms")
            }
        });
    }
    Ok(lines)
}

/// Runs every Redis check against a fresh model and a fresh server each.
pub fn check() -> Result<(String, Vec<Row>), String> {
    let mut server = RedisServer::start()?;
    let version = format!("Redis {} (Debian's redis-server)", server.version());
    let mut rows = Vec::new();
    for exchange in exchanges() {
        exchange.assert_has_steps();
        let mut model = RedisProbe::new();
        let engine = transcript(&mut model, &exchange.steps)?;
        // Each exchange starts from an empty server on the machine's clock, as the model does.
        server.reset_clock()?;
        server.connect()?.call(&["FLUSHALL"])?;
        let mut real = Real { server: &mut server, clients: Vec::new() };
        let actual = transcript(&mut real, &exchange.steps)?;
        let outcome = if engine == actual { Outcome::Same } else { Outcome::Different };
        rows.push(Row {
            name: exchange.name.to_owned(),
            relies: exchange.relies.to_owned(),
            engine: engine.join("\n"),
            server: actual.join("\n"),
            outcome,
        });
    }
    rows.push(expiry(&mut server)?);
    drop(server);
    rows.push(failover()?);
    rows.push(redlock()?);
    Ok((version, rows))
}

/// Redlock's two holders over five nodes, from the two faults the Redis
/// page and Kleppmann discuss: a node restarted without persistence forgets
/// the lock, and two nodes whose clocks jump forward expire it early; a
/// second client then sets the key on three of five, a majority, while the
/// first still holds its five grants' majority by its own clock.
fn redlock() -> Result<Row, String> {
    const NODES: u8 = 5;
    let set = |client: u8| RedisCommand::SetNxPx { value: value(client), ttl_ms: 30_000 };
    let majority = |replies: &[String]| replies.iter().filter(|reply| *reply == "OK").count();
    let round = |client: u8, replies: &[String]| {
        format!(
            "{}: SET NX PX 30000 on redis-1 … redis-{NODES} → {} ({} of {NODES})",
            InstanceId(client),
            replies.join(", "),
            majority(replies)
        )
    };

    let mut model = RedisProbe::redlock(NODES);
    let mut engine = Vec::new();
    let first: Vec<String> = (0..NODES).map(|node| model.command_on(node, 0, set(0)).to_string()).collect();
    engine.push(round(0, &first));
    model.restart_node(2);
    engine.push("redis-3 restarts without persistence".to_owned());
    model.step_node_clock(0, 30_001);
    model.step_node_clock(1, 30_001);
    engine.push("the clocks of redis-1 and redis-2 jump 30001 ms forward".to_owned());
    let second: Vec<String> = (0..NODES).map(|node| model.command_on(node, 1, set(1)).to_string()).collect();
    engine.push(round(1, &second));

    let mut servers: Vec<RedisServer> = (0..NODES).map(|_| RedisServer::start()).collect::<Result<_, _>>()?;
    let on = |servers: &mut [RedisServer], node: u8, command: RedisCommand| -> Result<String, String> {
        servers[usize::from(node)].connect()?.send(command)
    };
    let mut actual = Vec::new();
    let first: Vec<String> = (0..NODES).map(|node| on(&mut servers, node, set(0))).collect::<Result<_, _>>()?;
    actual.push(round(0, &first));
    servers[2].restart()?;
    actual.push("redis-3 restarts without persistence".to_owned());
    servers[0].step_clock(30_001)?;
    servers[1].step_clock(30_001)?;
    actual.push("the clocks of redis-1 and redis-2 jump 30001 ms forward".to_owned());
    let second: Vec<String> = (0..NODES).map(|node| on(&mut servers, node, set(1))).collect::<Result<_, _>>()?;
    actual.push(round(1, &second));
    Ok(Row {
        name: "Redlock: a restart and two clock jumps give a second majority".to_owned(),
        relies: "option B's two holders: each node keeps its own key by its own clock, so a forgotten key and two early expiries let b set three of five while a's lock is still valid by a's clock".to_owned(),
        outcome: if engine == actual { Outcome::Same } else { Outcome::Different },
        engine: engine.join("\n"),
        server: actual.join("\n"),
    })
}

/// The lock and the token counter written on a primary, the replica promoted
/// before the write reached it: both are gone, and the token is handed out
/// again. The engine's replica lags by `replication_lag_ms`; the real one is
/// held back by cutting its link (`CLIENT KILL TYPE replica`) after the
/// primary starts asking for a password it does not have, so it cannot come
/// back before the promotion (`REPLICAOF NO ONE`). `WAIT` is asked on the
/// real primary and reported; the lab never sends it.
fn failover() -> Result<Row, String> {
    let lock = |client: u8| RedisCommand::SetNxPxIncr { value: owner(client), ttl_ms: 30_000 };
    let mut model = RedisProbe::with_replica(2_000);
    let mut engine = vec![format!("a: {} → {}", lock(0), model.command(0, lock(0)))];
    model.at(100);
    model.failover();
    engine.push("failover: the replica is promoted before the write reached it".to_owned());
    engine.push(format!("b: {} → {}", RedisCommand::Get, model.command(1, RedisCommand::Get)));
    engine.push(format!("b: {} → {}", lock(1), model.command(1, lock(1))));

    let primary = RedisServer::start()?;
    let replica = RedisServer::start()?;
    let port = primary.port.to_string();
    // A primary waits five seconds for more replicas before a full sync by default.
    primary.connect()?.call(&["CONFIG", "SET", "repl-diskless-sync-delay", "0"])?;
    replica.connect()?.call(&["REPLICAOF", "127.0.0.1", &port])?;
    replica.wait_for(&["INFO", "replication"], |info| info.contains("master_link_status:up"), "replication")?;
    let mut client = primary.connect()?;
    client.call(&["CONFIG", "SET", "requirepass", "locklab-conformance"])?;
    client.call(&["CLIENT", "KILL", "TYPE", "replica"])?;
    replica.wait_for(&["INFO", "replication"], |info| info.contains("master_link_status:down"), "the cut")?;
    let first = client.send(lock(0))?;
    let waited = client.call(&["WAIT", "1", "100"])?;
    let mut promoted = replica.connect()?;
    promoted.call(&["REPLICAOF", "NO", "ONE"])?;
    drop(primary);
    let mut actual = vec![format!("a: {} → {first}", lock(0))];
    actual.push("failover: the replica is promoted before the write reached it".to_owned());
    let get = promoted.send(RedisCommand::Get)?;
    actual.push(format!("b: {} → {get}", RedisCommand::Get));
    let again = promoted.send(lock(1))?;
    actual.push(format!("b: {} → {again}", lock(1)));
    let outcome = if engine == actual { Outcome::Same } else { Outcome::Different };
    let mut server = actual.join("\n");
    server.push_str(&format!("\n(on the primary, before the failover: WAIT 1 100 → {waited})"));
    Ok(Row {
        name: "A failover before replication loses the lock and the token".to_owned(),
        relies: "redis_failover: a replica promoted without the last write has neither the lock nor the counter, so two runs get the same token; WAIT only reports that no replica has it".to_owned(),
        engine: engine.join("\n"),
        server,
        outcome,
    })
}

/// A key set with a TTL reads back until the TTL and is gone after it, by
/// the server's clock. The model is asked at the TTL's edges; the server is
/// polled until the key is gone, and the time that took must be the TTL,
/// give or take [`EXPIRY_TOLERANCE_MS`] (never less than the TTL).
fn expiry(server: &mut RedisServer) -> Result<Row, String> {
    const TTL_MS: u64 = 300;
    let set = RedisCommand::SetNxPx { value: value(0), ttl_ms: TTL_MS };
    let mut model = RedisProbe::new();
    let mut engine = vec![format!("a: {set} → {}", model.command(0, set))];
    model.at(TTL_MS);
    engine.push(format!("at {TTL_MS} ms: GET → {}", model.command(0, RedisCommand::Get)));
    model.at(TTL_MS + 1);
    engine.push(format!("at {} ms: GET → {}", TTL_MS + 1, model.command(0, RedisCommand::Get)));

    server.reset_clock()?;
    let mut connection = server.connect()?;
    connection.call(&["FLUSHALL"])?;
    let started = Instant::now();
    let first = connection.send(set)?;
    // Polling is the wait: the condition is the key's absence.
    let mut gone_after_ms = None;
    while started.elapsed() < Duration::from_millis(TTL_MS * 4) {
        let reply = connection.send(RedisCommand::Get)?;
        if reply == "(nil)" {
            gone_after_ms = Some(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX));
            break;
        }
    }
    let in_time = gone_after_ms.is_some_and(|ms| (TTL_MS..=TTL_MS + EXPIRY_TOLERANCE_MS).contains(&ms));
    // In time, the text is the same every run, so the generated document
    // changes only when the behaviour does.
    let gone = match gone_after_ms {
        Some(_) if in_time => format!("between {TTL_MS} and {} ms", TTL_MS + EXPIRY_TOLERANCE_MS),
        Some(ms) => format!("after {ms} ms"),
        None => format!("never within {} ms", TTL_MS * 4),
    };
    let server_text = format!("a: {set} → {first}\nGET → the value until (nil), {gone} after the SET");
    let engine_right = engine.last().is_some_and(|line| line.ends_with("(nil)"))
        && engine.get(1).is_some_and(|line| !line.ends_with("(nil)"));
    Ok(Row {
        name: "A key expires by the server's clock after its TTL".to_owned(),
        relies: format!(
            "every TTL in the lab: held until the TTL, gone after it (a 300 ms key; the server's expiry within {EXPIRY_TOLERANCE_MS} ms after)"
        ),
        engine: engine.join("\n"),
        server: server_text,
        outcome: if in_time && engine_right && first == "OK" { Outcome::Same } else { Outcome::Different },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The engine's side of every exchange gives a line per step, without a server.
    #[test]
    fn every_exchange_has_steps_and_runs_on_the_engine() {
        for exchange in exchanges() {
            exchange.assert_has_steps();
            let lines = transcript(&mut RedisProbe::new(), &exchange.steps).expect("the engine's side never fails");
            assert_eq!(lines.len(), exchange.steps.len(), "{}", exchange.name);
        }
    }
}
