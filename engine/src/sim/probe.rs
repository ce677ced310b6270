//! The engine's Redis model, driven one command at a time: what the
//! conformance suite (`conformance/`) runs beside a real `redis-server`.
//!
//! Nothing here is a second model. A [`RedisProbe`] is a [`Sim`] of the
//! default world (one node, a primary and its replica, or Redlock's nodes)
//! whose clients never run: the suite's commands go to `redis_execute`, the
//! code every strategy's commands go through, and time moves only when the
//! suite says. A key that expired is found gone on the next command, by the
//! node's own clock, as `redis_execute` finds it in a simulation.

use super::runtime::Stage;
use super::{Action, Sim};
use crate::event::{RedisCommand, RedisReply};
use crate::ids::{InstanceId, Party, Period, RedisNodeId, RunId};
use crate::scenario::{Scenario, StrategyId, StrategySettings};
use std::cmp::Reverse;

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
        let runs = (0..scenario.world.instances)
            .map(|index| sim.new_run(InstanceId(index), Period(0), Stage::Trying, None, false))
            .collect();
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
        let run = self.runs.get(usize::from(client)).copied().unwrap_or(RunId(0));
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
        self.sim.change_clock(node, |clock, now| clock.jump(now, by_ms));
    }

    /// Steps Redlock node `node`'s clock by `by_ms`.
    pub fn step_node_clock(&mut self, node: u8, by_ms: i64) {
        self.sim.change_clock(Party::Redis(RedisNodeId(node)), |clock, now| clock.jump(now, by_ms));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{LockValue, Owner};

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
}
