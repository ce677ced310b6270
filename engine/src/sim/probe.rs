//! The engine's Redis, PostgreSQL and consensus-store models, driven one
//! request at a time: what the conformance suite (`conformance/`) runs beside
//! a real `redis-server`, a real PostgreSQL and a real etcd.
//!
//! Nothing here is a second model. A probe is a [`Sim`] of the default world
//! whose instances never run: the suite's requests go to the code every
//! strategy's requests go through (`redis_execute`, `db_receive`,
//! `consensus_execute`), and time moves only when the suite says. A
//! [`RedisProbe`] and a [`ConsensusProbe`] answer at once, as
//! `redis_execute` and `consensus_execute` do; a [`DbProbe`]'s answers travel
//! back over the simulated network, and its statements take their time, as
//! in a run.

use super::{Action, Payload, Reply, Sim, TimerPurpose};
use crate::clock::ClockChange;
use crate::event::{ConsensusOp, ConsensusReply, Owner, RedisCommand, RedisReply, Sql, SqlOutcome};
use crate::ids::{InstanceId, LeaseId, Party, RedisNodeId, RunId, SessionId, Token};
use crate::scenario::{DbLockSettings, Scenario, StrategyId, StrategySettings};
use std::cmp::Reverse;

/// One run per client instance (`0..clients`), so a request has a sender
/// the servers' bookkeeping (who holds the lock) can name.
fn client_runs(sim: &mut Sim, clients: u8) -> Vec<RunId> {
    (0..clients).map(|index| sim.new_run_record(InstanceId(index))).collect()
}

/// Client `client`'s run.
fn run_of(runs: &[RunId], client: u8) -> RunId {
    runs.get(usize::from(client)).copied().unwrap_or(RunId(0))
}

/// The Redis nodes of the engine's world, with clients that send them commands.
pub struct RedisProbe {
    sim: Sim,
    /// One run per client instance, so a command has a sender the node's
    /// bookkeeping (who holds the lock) can name.
    runs: Vec<RunId>,
}

impl std::fmt::Debug for RedisProbe {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("RedisProbe").field("now_ms", &self.sim.now_ms).finish()
    }
}

impl Default for RedisProbe {
    fn default() -> Self {
        RedisProbe::new()
    }
}

impl RedisProbe {
    /// A single Redis node, no replica, at simulated time 0.
    pub fn new() -> RedisProbe {
        RedisProbe::of(&Scenario::default())
    }

    /// A primary and a replica that applies each write `lag_ms` after it.
    pub fn with_replica(lag_ms: u64) -> RedisProbe {
        let mut scenario = Scenario::default();
        scenario.world.redis_replica = true;
        scenario.world.replication_lag_ms = lag_ms;
        RedisProbe::of(&scenario)
    }

    /// Redlock's `nodes` independent nodes (`redis-1` … `redis-N`).
    pub fn redlock(nodes: u8) -> RedisProbe {
        let scenario = Scenario::default();
        let mut settings = scenario.settings_for(StrategyId::Redlock);
        if let StrategySettings::Redlock(redlock) = &mut settings {
            redlock.nodes = nodes;
        }
        RedisProbe::with_settings(&scenario, settings)
    }

    fn of(scenario: &Scenario) -> RedisProbe {
        RedisProbe::with_settings(scenario, scenario.settings_for(StrategyId::Naive))
    }

    fn with_settings(scenario: &Scenario, settings: StrategySettings) -> RedisProbe {
        let mut sim = Sim::new(scenario, settings);
        let runs = client_runs(&mut sim, scenario.world.instances);
        RedisProbe { sim, runs }
    }

    /// Moves simulated time on to `at_ms` (never back), doing the Redis
    /// side's own work due by then: writes reaching the replica, a promotion.
    pub fn at(&mut self, at_ms: u64) {
        assert!(at_ms >= self.sim.now_ms, "time goes forward: {at_ms} < {}", self.sim.now_ms);
        while let Some(Reverse(next)) = self.sim.queue.peek()
            && next.at_ms() <= at_ms
        {
            let Some(Reverse(next)) = self.sim.queue.pop() else {
                break;
            };
            self.sim.now_ms = self.sim.now_ms.max(next.at_ms());
            match next.action {
                Action::Replicate { op, incarnation } => {
                    if let Some(op) = self.sim.replications.take(op) {
                        self.sim.replicate(op, incarnation);
                    }
                }
                Action::Promote => self.sim.promote_replica(),
                Action::RedisUp { node } => self.sim.redis_up(node),
                // The clients never run, and keys expire when next read.
                Action::Fault(_)
                | Action::Timer { .. }
                | Action::Deliver(_)
                | Action::Resume { .. }
                | Action::Restart { .. }
                | Action::LeaderUp
                | Action::StatementDone { .. }
                | Action::BackgroundGiveUp { .. }
                | Action::BackgroundDone { .. }
                | Action::KeepaliveExpiry { .. }
                | Action::RowRecheck => {}
            }
        }
        self.sim.now_ms = at_ms;
    }

    /// The primary fails and the replica is promoted, with whatever it had
    /// received (`redis_failover`): simulated time moves on by the world's
    /// failover time.
    pub fn failover(&mut self) {
        self.sim.redis_failover(Party::Redis(RedisNodeId(0)));
        let promoted_at_ms = self.sim.now_ms + self.sim.world.failover_ms;
        self.at(promoted_at_ms);
    }

    /// The primary's answer to `client`'s command (`client` is an instance
    /// index, `0..3`): what the simulation's clients get.
    pub fn command(&mut self, client: u8, command: RedisCommand) -> RedisReply {
        let node = self.sim.redis.primary();
        self.command_to(node, client, command)
    }

    /// Redlock node `node`'s (`0..N`) answer to `client`'s command.
    pub fn command_on(&mut self, node: u8, client: u8, command: RedisCommand) -> RedisReply {
        self.command_to(Party::Redis(RedisNodeId(node)), client, command)
    }

    fn command_to(&mut self, node: Party, client: u8, command: RedisCommand) -> RedisReply {
        let run = run_of(&self.runs, client);
        self.sim.redis_execute(node, InstanceId(client), run, command).unwrap_or(RedisReply::ConnectionRefused)
    }

    /// A restart of the primary without persistence: it goes down and comes back.
    pub fn restart(&mut self) {
        let node = self.sim.redis.primary();
        self.restart_party(node);
    }

    /// A restart of Redlock node `node` without persistence.
    pub fn restart_node(&mut self, node: u8) {
        self.restart_party(Party::Redis(RedisNodeId(node)));
    }

    fn restart_party(&mut self, node: Party) {
        self.sim.redis_down(node, None);
        self.sim.redis_up(node);
    }

    /// Steps the primary's clock by `by_ms` (forward if positive), as a
    /// `clock_jump` fault does.
    pub fn step_clock(&mut self, by_ms: i64) {
        let node = self.sim.redis.primary();
        self.sim.change_clock(node, ClockChange::Jump { by_ms });
    }

    /// Steps Redlock node `node`'s clock by `by_ms`.
    pub fn step_node_clock(&mut self, node: u8, by_ms: i64) {
        self.sim.change_clock(Party::Redis(RedisNodeId(node)), ClockChange::Jump { by_ms });
    }
}

/// The consensus store of the engine's world, with clients that send it the
/// consensus strategy's operations.
pub struct ConsensusProbe {
    sim: Sim,
    /// One run per client instance, as `RedisProbe` has.
    runs: Vec<RunId>,
}

impl std::fmt::Debug for ConsensusProbe {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("ConsensusProbe").field("now_ms", &self.sim.now_ms).finish()
    }
}

impl Default for ConsensusProbe {
    fn default() -> Self {
        ConsensusProbe::new()
    }
}

impl ConsensusProbe {
    /// The store of the default world, with a leader, at simulated time 0.
    pub fn new() -> ConsensusProbe {
        let scenario = Scenario::default();
        let mut sim = Sim::new(&scenario, scenario.settings_for(StrategyId::Consensus));
        let runs = client_runs(&mut sim, scenario.world.instances);
        ConsensusProbe { sim, runs }
    }

    /// Simulated time now.
    pub fn now_ms(&self) -> u64 {
        self.sim.now_ms
    }

    /// How long the store is without a leader after it loses one (the world's `failover_ms`).
    pub fn failover_ms(&self) -> u64 {
        self.sim.world.failover_ms
    }

    /// Moves simulated time on to `at_ms` (never back), doing the store's
    /// own work due by then: leases running out, a new leader.
    pub fn at(&mut self, at_ms: u64) {
        assert!(at_ms >= self.sim.now_ms, "time goes forward: {at_ms} < {}", self.sim.now_ms);
        while let Some(Reverse(next)) = self.sim.queue.peek()
            && next.at_ms() <= at_ms
        {
            let Some(Reverse(next)) = self.sim.queue.pop() else {
                break;
            };
            self.sim.now_ms = self.sim.now_ms.max(next.at_ms());
            match next.action {
                Action::Timer { id, epoch } => self.fire_timer(id, epoch),
                Action::LeaderUp => self.sim.leader_up(),
                // The clients never run, and nothing else is in this world.
                Action::Fault(_)
                | Action::Deliver(_)
                | Action::Resume { .. }
                | Action::Restart { .. }
                | Action::RedisUp { .. }
                | Action::Promote
                | Action::Replicate { .. }
                | Action::StatementDone { .. }
                | Action::BackgroundGiveUp { .. }
                | Action::BackgroundDone { .. }
                | Action::KeepaliveExpiry { .. }
                | Action::RowRecheck => {}
            }
        }
        self.sim.now_ms = at_ms;
    }

    /// The store's own timers fire (a lease's expiry); the instances' never do.
    fn fire_timer(&mut self, id: super::TimerId, epoch: u32) {
        let Some(entry) = self.sim.timers.get(id.0) else {
            return;
        };
        if self.sim.timer_epoch(entry) != epoch {
            return;
        }
        self.sim.timers.take(id.0);
        match entry.purpose {
            TimerPurpose::LeaseExpiry { lease } => self.sim.lease_expiry(lease),
            TimerPurpose::Instance { .. }
            | TimerPurpose::KeyExpiry { .. }
            | TimerPurpose::LockTimeout { .. }
            | TimerPurpose::IdleTimeout { .. } => {}
        }
    }

    /// The store's answer to `client`'s operation (`client` is an instance
    /// index, `0..3`): what the simulation's clients get.
    pub fn execute(&mut self, client: u8, op: ConsensusOp) -> ConsensusReply {
        let run = run_of(&self.runs, client);
        self.sim.consensus_execute(InstanceId(client), run, op).unwrap_or(ConsensusReply::Timeout)
    }

    /// The lock key, if it exists: its value and the revision that created it.
    pub fn key(&self) -> Option<(Owner, Token)> {
        self.sim.consensus_key()
    }

    /// How long lease `lease` has left, if it exists.
    pub fn lease_remaining_ms(&self, lease: LeaseId) -> Option<i64> {
        self.sim.lease_remaining_ms(lease)
    }

    /// Whether the store has a leader.
    pub fn has_leader(&self) -> bool {
        self.sim.consensus_has_leader()
    }

    /// The leader is lost (`consensus_leader_loss`); a new one is elected
    /// after [`ConsensusProbe::failover_ms`], when time reaches it.
    pub fn lose_leader(&mut self) {
        self.sim.leader_lost();
    }

    /// Steps the store's wall clock by `by_ms` (forward if positive), as a
    /// `clock_jump` fault on `consensus` does.
    pub fn step_clock(&mut self, by_ms: i64) {
        self.sim.change_clock(Party::Consensus, ClockChange::Jump { by_ms });
    }

    /// From now on the store's clocks run `ppm` parts per million fast (or
    /// slow), as a `clock_drift` fault on `consensus` makes them.
    pub fn set_drift(&mut self, ppm: i64) {
        self.sim.change_clock(Party::Consensus, ClockChange::Drift { ppm });
    }
}

/// What a [`DbProbe`] reports, in the order it happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DbAnswer {
    /// Client `client`'s statement was answered (the reply reached it).
    Sql { client: u8, outcome: SqlOutcome },
    /// Other services' query `query` got its `FOR KEY SHARE` on the jobs row.
    KeyShare { query: u32 },
}

/// The database of the engine's world, with clients that send it statements
/// and other services whose queries take `FOR KEY SHARE` on the jobs row.
pub struct DbProbe {
    sim: Sim,
    /// One run per client instance, as `RedisProbe` has.
    runs: Vec<RunId>,
    /// Each client's session once connected (`SessionId(0)` before).
    sessions: Vec<SessionId>,
    next_request: u32,
    /// Other services' queries the suite ends itself (an open transaction),
    /// and those not yet seen holding their key share.
    held: Vec<u32>,
    unseen: Vec<u32>,
    answers: Vec<(u64, DbAnswer)>,
}

impl std::fmt::Debug for DbProbe {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("DbProbe").field("now_ms", &self.sim.now_ms).finish()
    }
}

impl DbProbe {
    /// `clients` instances (`0..clients`) and a server that takes
    /// `max_connections` sessions, with the db-lock strategy's session
    /// settings; no traffic from other services but what the suite sends.
    pub fn new(clients: u8, max_connections: u16, settings: DbLockSettings) -> DbProbe {
        let mut scenario = Scenario::default();
        scenario.world.instances = clients;
        scenario.world.db_max_connections = max_connections;
        scenario.world.background_queries_per_s = 0;
        let mut sim = Sim::new(&scenario, StrategySettings::DbLock(settings));
        let runs = client_runs(&mut sim, clients);
        DbProbe {
            sim,
            runs,
            sessions: vec![SessionId(0); usize::from(clients)],
            next_request: 0,
            held: Vec::new(),
            unseen: Vec::new(),
            answers: Vec::new(),
        }
    }

    /// Simulated time now.
    pub fn now_ms(&self) -> u64 {
        self.sim.now_ms
    }

    /// The run client `client` writes its report rows as.
    pub fn run_of(&self, client: u8) -> RunId {
        run_of(&self.runs, client)
    }

    /// Client `client` sends `sql` (`Sql::Connect` opens its session); the
    /// answer comes as time moves.
    pub fn send(&mut self, client: u8, sql: Sql) {
        let request = self.next_request;
        self.next_request += 1;
        let session = self.sessions.get(usize::from(client)).copied().unwrap_or(SessionId(0));
        let run = self.run_of(client);
        self.sim.db_receive(Party::Instance(InstanceId(client)), request, run, session, sql);
    }

    /// Client `client`'s process dies: the kernel closes its socket, and the
    /// FIN reaches the server over the network (what `oom_kill` does).
    pub fn kill(&mut self, client: u8) {
        if let Some(session) = self.sessions.get_mut(usize::from(client)) {
            let closed = std::mem::replace(session, SessionId(0));
            self.sim.send_fin(InstanceId(client), closed);
        }
    }

    /// One of other services' plain reads arrives: it takes no row lock, so it
    /// runs as soon as it has a connection. Returns its number; it is
    /// answered (`DbAnswer::KeyShare`, its query running) when it runs.
    pub fn other_service_reads(&mut self) -> u32 {
        let query = self.sim.background_wait(crate::event::BackgroundQuery::Read);
        self.unseen.push(query);
        self.look_at_queries();
        query
    }

    /// One of other services' queries arrives: its foreign-key check asks
    /// for `FOR KEY SHARE`. A `held` one keeps it until
    /// [`DbProbe::other_service_ends`] (its transaction stays open); any
    /// other ends its query's time after it gets it. Returns its number.
    pub fn other_service_arrives(&mut self, held: bool) -> u32 {
        let query = self.sim.background_wait(crate::event::BackgroundQuery::ForeignKeyInsert);
        if held {
            self.held.push(query);
        }
        self.unseen.push(query);
        self.look_at_queries();
        query
    }

    /// A held query's transaction ends.
    pub fn other_service_ends(&mut self, query: u32) {
        self.held.retain(|held| *held != query);
        self.sim.background_done(query);
        self.look_at_queries();
    }

    /// Moves simulated time on to `at_ms` (never back), doing everything due by then.
    pub fn at(&mut self, at_ms: u64) {
        assert!(at_ms >= self.sim.now_ms, "time goes forward: {at_ms} < {}", self.sim.now_ms);
        while self.step(at_ms) {}
        self.sim.now_ms = at_ms;
    }

    /// Runs until client `client` is answered or nothing is left to do
    /// before `limit_ms`; when it was answered.
    pub fn wait_for(&mut self, client: u8, limit_ms: u64) -> Option<u64> {
        let answered = |answers: &[(u64, DbAnswer)], from: usize| {
            answers[from..].iter().find_map(|(at_ms, answer)| match answer {
                DbAnswer::Sql { client: to, .. } if *to == client => Some(*at_ms),
                DbAnswer::Sql { .. } | DbAnswer::KeyShare { .. } => None,
            })
        };
        let from = self.answers.len();
        while answered(&self.answers, from).is_none() && self.step(limit_ms) {}
        answered(&self.answers, from)
    }

    /// What happened since the last call, with when.
    pub fn take_answers(&mut self) -> Vec<(u64, DbAnswer)> {
        std::mem::take(&mut self.answers)
    }

    /// Does the next action due by `limit_ms`; whether there was one.
    fn step(&mut self, limit_ms: u64) -> bool {
        let Some(Reverse(next)) = self.sim.queue.peek() else {
            return false;
        };
        if next.at_ms() > limit_ms {
            return false;
        }
        let Some(Reverse(next)) = self.sim.queue.pop() else {
            return false;
        };
        self.sim.now_ms = self.sim.now_ms.max(next.at_ms());
        match next.action {
            Action::Deliver(message) => self.deliver(message),
            Action::StatementDone { session, statement } => self.sim.statement_done(session, statement),
            Action::Timer { id, epoch } => self.fire_timer(id, epoch),
            Action::BackgroundDone { query } => {
                if !self.held.contains(&query) {
                    self.sim.background_done(query);
                }
            }
            Action::BackgroundGiveUp { query } => self.sim.background_give_up(query),
            Action::KeepaliveExpiry { session } => self.sim.keepalive_expiry(session),
            Action::RowRecheck => self.sim.row_recheck(),
            // The instances never run; nothing else is in this world.
            Action::Fault(_)
            | Action::Resume { .. }
            | Action::Restart { .. }
            | Action::RedisUp { .. }
            | Action::Promote
            | Action::LeaderUp
            | Action::Replicate { .. } => {}
        }
        self.look_at_queries();
        true
    }

    fn deliver(&mut self, message: super::MessageId) {
        let Some(message) = self.sim.take_message(message) else {
            return;
        };
        match (message.to, message.payload) {
            (Party::Instance(instance), Payload::Reply { body: Reply::Sql(outcome), .. }) => {
                if let (SqlOutcome::Connected(session), Some(slot)) =
                    (outcome, self.sessions.get_mut(usize::from(instance.0)))
                {
                    *slot = session;
                }
                self.answers.push((self.sim.now_ms, DbAnswer::Sql { client: instance.0, outcome }));
            }
            (_, Payload::Fin { session }) => self.sim.client_disconnected(session),
            // The probe's clients send their statements straight to the server.
            (_, Payload::Request { .. } | Payload::Reply { .. }) => {}
        }
    }

    /// The database's own timers fire; the instances' never do.
    fn fire_timer(&mut self, id: super::TimerId, epoch: u32) {
        let Some(entry) = self.sim.timers.get(id.0) else {
            return;
        };
        if self.sim.timer_epoch(entry) != epoch {
            return;
        }
        self.sim.timers.take(id.0);
        match entry.purpose {
            TimerPurpose::LockTimeout { session } => self.sim.lock_timeout(session),
            TimerPurpose::IdleTimeout { session } => self.sim.idle_timeout(session),
            TimerPurpose::Instance { .. } | TimerPurpose::KeyExpiry { .. } | TimerPurpose::LeaseExpiry { .. } => {}
        }
    }

    /// Reports the queries that got their key share since the last look.
    fn look_at_queries(&mut self) {
        let now_ms = self.sim.now_ms;
        let sim = &self.sim;
        let answers = &mut self.answers;
        self.unseen.retain(|query| match sim.background_has_key_share(*query) {
            Some(true) => {
                answers.push((now_ms, DbAnswer::KeyShare { query: *query }));
                false
            }
            Some(false) => true,
            None => false,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{EventKind, LockValue, Owner, RevokeReason};
    use crate::ids::Period;

    #[test]
    fn the_probe_answers_as_the_simulation_node_does() {
        let value = LockValue::Owner(Owner { instance: InstanceId(0), nonce: 1 });
        let mut probe = RedisProbe::new();
        assert_eq!(probe.command(0, RedisCommand::SetNxPx { value, ttl_ms: 1_000 }), RedisReply::Ok);
        assert_eq!(probe.command(1, RedisCommand::SetNxPx { value, ttl_ms: 1_000 }), RedisReply::Nil);
        probe.at(1_000);
        assert_eq!(probe.command(1, RedisCommand::Get), RedisReply::Value(value), "there through its last ms");
        probe.at(1_001);
        assert_eq!(probe.command(1, RedisCommand::Get), RedisReply::Nil, "gone after its TTL, by the node's clock");
        assert_eq!(probe.command(0, RedisCommand::Incr), RedisReply::Integer(1));
        probe.restart();
        assert_eq!(probe.command(0, RedisCommand::Incr), RedisReply::Integer(1), "a restart forgets the counter");
        assert_eq!(probe.command(0, RedisCommand::SetNxPx { value, ttl_ms: 1_000 }), RedisReply::Ok);
        probe.step_clock(1_001);
        assert_eq!(probe.command(1, RedisCommand::Get), RedisReply::Nil, "a clock stepped past the TTL expires it");
    }

    #[test]
    fn setnx_keeps_its_key_until_an_expire_and_a_plain_set_takes_anothers() {
        let value = |client: u8| LockValue::Owner(Owner { instance: InstanceId(client), nonce: 1 });
        let mut probe = RedisProbe::new();
        assert_eq!(probe.command(0, RedisCommand::SetNx { value: value(0) }), RedisReply::Integer(1));
        assert_eq!(probe.command(1, RedisCommand::SetNx { value: value(1) }), RedisReply::Integer(0));
        probe.step_clock(86_400_000);
        assert_eq!(probe.command(1, RedisCommand::Get), RedisReply::Value(value(0)), "no TTL, no expiry");
        assert_eq!(probe.command(1, RedisCommand::Expire { ttl_s: 10 }), RedisReply::Integer(1), "anyone's key");
        probe.step_clock(10_001);
        assert_eq!(probe.command(1, RedisCommand::Get), RedisReply::Nil, "the EXPIRE gave it a TTL");
        assert_eq!(probe.command(1, RedisCommand::Expire { ttl_s: 10 }), RedisReply::Integer(0), "no key");
        let take = RedisCommand::SetNxPx { value: value(0), ttl_ms: 30_000 };
        assert_eq!(probe.command(0, take), RedisReply::Ok);
        let overwrite = RedisCommand::SetPx { value: value(1), ttl_ms: 30_000 };
        assert_eq!(probe.command(1, overwrite), RedisReply::Ok, "a SET with no NX takes a held key");
        assert_eq!(probe.command(0, RedisCommand::Get), RedisReply::Value(value(1)));
        let revoked = probe
            .sim
            .log
            .iter()
            .rev()
            .find_map(|event| if let EventKind::Revoked { reason, .. } = event.kind { Some(reason) } else { None });
        assert_eq!(revoked, Some(RevokeReason::Overwritten), "the lock service's holder changed with it");
    }

    #[test]
    fn a_failover_before_replication_loses_the_lock_and_the_token() {
        let owner = Owner { instance: InstanceId(0), nonce: 1 };
        let mut probe = RedisProbe::with_replica(2_000);
        assert_eq!(
            probe.command(0, RedisCommand::SetNxPxIncr { value: owner, ttl_ms: 30_000 }),
            RedisReply::Integer(1)
        );
        probe.at(100);
        probe.failover();
        assert_eq!(probe.command(1, RedisCommand::Get), RedisReply::Nil, "the replica never had the lock");
        let again = RedisCommand::SetNxPxIncr { value: Owner { instance: InstanceId(1), nonce: 1 }, ttl_ms: 30_000 };
        assert_eq!(probe.command(1, again), RedisReply::Integer(1), "the same token, handed out twice");
        let mut replicated = RedisProbe::with_replica(2_000);
        replicated.command(0, RedisCommand::SetNxPxIncr { value: owner, ttl_ms: 30_000 });
        replicated.at(2_000);
        replicated.failover();
        assert_eq!(replicated.command(1, RedisCommand::Get), RedisReply::Value(LockValue::Owner(owner)));
    }

    #[test]
    fn redlock_nodes_keep_their_own_keys_by_their_own_clocks() {
        let set = |client: u8| RedisCommand::SetNxPx {
            value: LockValue::Owner(Owner { instance: InstanceId(client), nonce: 1 }),
            ttl_ms: 30_000,
        };
        let mut probe = RedisProbe::redlock(5);
        assert!((0..5).all(|node| probe.command_on(node, 0, set(0)) == RedisReply::Ok));
        probe.restart_node(2);
        probe.step_node_clock(0, 30_001);
        let granted: Vec<bool> = (0..5).map(|node| probe.command_on(node, 1, set(1)) == RedisReply::Ok).collect();
        assert_eq!(granted, [true, false, true, false, false], "redis-1's early expiry and redis-3's restart");
    }

    #[test]
    fn a_lease_runs_on_the_stores_monotonic_clock() {
        let owner = |client: u8| Owner { instance: InstanceId(client), nonce: 1 };
        let acquire = |client: u8| ConsensusOp::Acquire { value: owner(client), ttl_ms: 10_000 };
        let mut probe = ConsensusProbe::new();
        let ConsensusReply::Acquired { lease, revision } = probe.execute(0, acquire(0)) else {
            panic!("a free key is taken");
        };
        probe.at(1_000);
        probe.step_clock(60_000);
        probe.at(1_001);
        assert_eq!(probe.key(), Some((owner(0), revision)), "a step of the wall clock ends no lease");
        assert_eq!(probe.lease_remaining_ms(lease), Some(8_999));
        assert_eq!(probe.execute(1, acquire(1)), ConsensusReply::Taken { holder: owner(0) });
        probe.at(9_999);
        assert!(probe.key().is_some(), "held until its TTL of elapsed time");
        probe.at(10_000);
        assert_eq!(probe.key(), None, "gone at it, as etcd's `expired()` is `Remaining() <= 0`");
        assert_eq!(probe.execute(0, ConsensusOp::KeepAlive { lease }), ConsensusReply::LeaseNotFound);

        // A drift still applies: the monotonic clock counts the oscillator's ticks.
        let mut fast = ConsensusProbe::new();
        fast.set_drift(250_000);
        assert!(matches!(fast.execute(0, acquire(0)), ConsensusReply::Acquired { .. }));
        fast.at(7_999);
        assert!(fast.key().is_some(), "10 s at 1.25× is 8 s");
        fast.at(8_000);
        assert_eq!(fast.key(), None);
    }

    #[test]
    fn revisions_rise_across_revokes_expiries_and_a_new_leader_that_refreshes_leases() {
        let owner = |client: u8| Owner { instance: InstanceId(client), nonce: 1 };
        let acquire = |client: u8| ConsensusOp::Acquire { value: owner(client), ttl_ms: 10_000 };
        let granted = |reply: ConsensusReply| {
            let ConsensusReply::Acquired { lease, revision } = reply else { panic!("not granted: {reply}") };
            (lease, revision)
        };
        let mut probe = ConsensusProbe::new();
        let (first_lease, first) = granted(probe.execute(0, acquire(0)));
        assert_eq!(probe.execute(0, ConsensusOp::Revoke { lease: first_lease }), ConsensusReply::Revoked);
        let (lease, second) = granted(probe.execute(1, acquire(1)));
        assert!(second > first, "{second} after {first}");
        probe.at(4_000);
        probe.lose_leader();
        assert_eq!(probe.execute(1, ConsensusOp::KeepAlive { lease }), ConsensusReply::NoLeader);
        probe.at(4_000 + probe.failover_ms());
        assert!(probe.has_leader());
        assert_eq!(probe.lease_remaining_ms(lease), Some(10_000), "the new leader gives it its whole TTL");
        assert_eq!(probe.execute(1, ConsensusOp::KeepAlive { lease }), ConsensusReply::Alive { ttl_ms: 10_000 });
        probe.at(probe.now_ms() + 10_001);
        assert_eq!(probe.key(), None, "expired");
        let (_, third) = granted(probe.execute(2, acquire(2)));
        assert!(third > second, "{third} after {second}");
    }

    fn sql_answers(probe: &mut DbProbe, client: u8) -> Vec<SqlOutcome> {
        let answers = probe.take_answers().into_iter();
        answers
            .filter_map(|(_, answer)| match answer {
                DbAnswer::Sql { client: to, outcome } if to == client => Some(outcome),
                DbAnswer::Sql { .. } | DbAnswer::KeyShare { .. } => None,
            })
            .collect()
    }

    #[test]
    fn a_key_share_passes_a_for_update_that_only_waits() {
        use crate::scenario::{DbWait, LockStrength};
        let mut probe = DbProbe::new(2, 20, DbLockSettings::default());
        probe.send(1, Sql::Connect);
        probe.at(50);
        probe.take_answers();
        let held = probe.other_service_arrives(true);
        probe.send(1, Sql::LockJobRow { strength: LockStrength::ForUpdate, wait: DbWait::Block });
        probe.at(100);
        assert_eq!(sql_answers(&mut probe, 1), [], "FOR UPDATE waits for the held key share");
        let passing = probe.other_service_arrives(false);
        assert_eq!(probe.take_answers(), [(100, DbAnswer::KeyShare { query: passing })], "granted at once");
        probe.other_service_ends(held);
        probe.at(110);
        assert_eq!(sql_answers(&mut probe, 1), [], "the passing query still holds its key share");
        probe.at(200);
        assert_eq!(sql_answers(&mut probe, 1), [SqlOutcome::Rows(1)]);
    }

    #[test]
    fn a_killed_holder_hands_the_row_on_and_a_waiter_times_out() {
        use crate::event::SqlError;
        use crate::scenario::{DbWait, LockStrength};
        let settings = DbLockSettings { lock_timeout_ms: 300, ..DbLockSettings::default() };
        let mut probe = DbProbe::new(3, 20, settings);
        for client in 0..3 {
            probe.send(client, Sql::Connect);
        }
        probe.at(50);
        probe.take_answers();
        for client in 0..3 {
            probe.send(client, Sql::LockJobRow { strength: LockStrength::ForUpdate, wait: DbWait::Block });
        }
        probe.at(100);
        assert_eq!(sql_answers(&mut probe, 0), [SqlOutcome::Rows(1)]);
        probe.kill(0);
        let answered = probe.wait_for(1, 1_000).expect("the next waiter gets the row");
        assert!(answered < 120, "at once, not after a timeout: {answered} ms");
        let timed_out = probe.wait_for(2, 1_000).expect("the last waiter gives up");
        assert!((350..=420).contains(&timed_out), "after lock_timeout: {timed_out} ms");
        let answers = probe.take_answers();
        assert!(
            answers
                .contains(&(timed_out, DbAnswer::Sql { client: 2, outcome: SqlOutcome::Error(SqlError::LockTimeout) }))
        );
    }

    #[test]
    fn a_second_insert_waits_for_an_uncommitted_row() {
        use crate::event::RowWrite;
        use crate::ids::ReportOf;
        use crate::scenario::{DbWait, LockStrength};
        for (end, second_gets) in [(Sql::Commit, SqlOutcome::Rows(0)), (Sql::Rollback, SqlOutcome::Rows(1))] {
            let mut probe = DbProbe::new(3, 20, DbLockSettings::default());
            let write = |client: u8| Sql::WriteReport {
                period: Period(1),
                report: ReportOf::Day(0),
                run: RunId(u32::from(client)),
                token: None,
                how: RowWrite::InsertOrNothing,
            };
            for client in 1..3 {
                probe.send(client, Sql::Connect);
            }
            probe.at(50);
            probe.send(1, Sql::LockJobRow { strength: LockStrength::ForUpdate, wait: DbWait::Block });
            probe.at(100);
            probe.send(1, write(1));
            probe.at(150);
            probe.take_answers();
            probe.send(2, write(2));
            probe.at(500);
            assert_eq!(sql_answers(&mut probe, 2), [], "the second insert waits for the open transaction");
            probe.send(1, end);
            probe.at(600);
            assert_eq!(sql_answers(&mut probe, 2), [second_gets], "after {end}");
        }
    }
}
