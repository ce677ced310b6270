//! Redis: the lock key and the token counter on one node (with an optional
//! asynchronously replicated replica that a failover promotes), or on
//! `nodes` independent nodes for Redlock.
//!
//! Semantics that matter here and follow real Redis:
//! - `SET … NX PX|EX` stores an absolute expiry read from the node's own clock,
//!   so a jump of that clock expires the key early (Kleppmann 2016);
//! - a replica applies writes `replication_lag_ms` after the primary; a failover
//!   promotes it with whatever it had, so the lock and the `INCR` counter can
//!   both go back (the Redis documentation's failover caveat);
//! - a restart without persistence loses every key;
//! - `SETNX` sets a key with no expiry at all ([`LockKey::NO_EXPIRY`]), and
//!   only a later `EXPIRE` gives it one; a plain `SET` (no `NX`) and a plain
//!   `EXPIRE` act on whatever key is there, another client's lock included.
//!
//! The "truth" kept here (who the lock service counts as holder) is what the
//! report's epochs and the timeline's "granted" lane come from: on one node
//! that is the primary's key; under Redlock, a value present on a majority.

use super::{Action, Sim, TimerId, TimerPurpose, run_index};
use crate::event::{EventKind, LockKey, LockValue, Owner, RedisCommand, RedisReply, RevokeReason};
use crate::ids::{InstanceId, Party, RedisNodeId, RunId};

/// The lock key's entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LockEntry {
    pub(crate) value: LockValue,
    /// The run that set it (the simulation's knowledge, not Redis's).
    pub(crate) run: RunId,
    /// Absolute expiry on the clock of the node that set it.
    pub(crate) expires_at_local_ms: i64,
}

/// One Redis process.
#[derive(Clone, Debug)]
pub(crate) struct RedisNode {
    pub(crate) party: Party,
    pub(crate) up: bool,
    /// Bumped when the process dies: replication it had not sent is lost.
    pub(crate) incarnation: u32,
    pub(crate) lock: Option<LockEntry>,
    pub(crate) counter: i64,
    expiry_timer: Option<TimerId>,
}

impl RedisNode {
    fn new(party: Party) -> RedisNode {
        RedisNode { party, up: true, incarnation: 0, lock: None, counter: 0, expiry_timer: None }
    }
    fn key_count(&self) -> u32 {
        u32::from(self.lock.is_some()) + u32::from(self.counter != 0)
    }
}

/// A write the primary sends its replica.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReplicationOp {
    SetLock(LockEntry),
    DelLock,
    Counter(i64),
}

/// The Redis side of the world.
#[derive(Clone, Debug)]
pub(crate) struct RedisCluster {
    pub(crate) nodes: Vec<RedisNode>,
    pub(crate) replica: Option<RedisNode>,
    pub(crate) promoted: bool,
    failover_pending: bool,
    quorum: u8,
    /// Who the lock service counts as holder: the run whose value is on a majority of its authorities.
    pub(crate) holder: Option<RunId>,
    /// How much longer a restarted node stays unavailable (Redlock's delayed restarts).
    restart_delay_ms: u64,
}

impl RedisCluster {
    /// `redlock_nodes` is the node count under Redlock, `None` for one node.
    pub(crate) fn new(redlock_nodes: Option<u8>, with_replica: bool, restart_delay_ms: u64) -> RedisCluster {
        let count = redlock_nodes.unwrap_or(1);
        let nodes = (0..count).map(|index| RedisNode::new(Party::Redis(RedisNodeId(index)))).collect();
        RedisCluster {
            nodes,
            replica: with_replica.then(|| RedisNode::new(Party::RedisReplica)),
            promoted: false,
            failover_pending: false,
            quorum: count / 2 + 1,
            holder: None,
            restart_delay_ms,
        }
    }

    pub(crate) fn all_parties(&self) -> Vec<Party> {
        let mut parties: Vec<Party> = self.nodes.iter().map(|node| node.party).collect();
        if let Some(replica) = &self.replica {
            parties.push(replica.party);
        }
        parties
    }

    /// The node a single-Redis client talks to now.
    pub(crate) fn primary(&self) -> Party {
        if self.promoted { Party::RedisReplica } else { Party::Redis(RedisNodeId(0)) }
    }

    pub(crate) fn node(&self, party: Party) -> Option<&RedisNode> {
        match party {
            Party::RedisReplica => self.replica.as_ref(),
            Party::Redis(id) => self.nodes.get(id.index()),
            Party::Instance(_) | Party::Db | Party::Storage | Party::Slack | Party::Consensus => None,
        }
    }

    fn node_mut(&mut self, party: Party) -> Option<&mut RedisNode> {
        match party {
            Party::RedisReplica => self.replica.as_mut(),
            Party::Redis(id) => self.nodes.get_mut(id.index()),
            Party::Instance(_) | Party::Db | Party::Storage | Party::Slack | Party::Consensus => None,
        }
    }

    /// The nodes whose keys decide who holds the lock.
    fn authorities(&self) -> &[RedisNode] {
        if self.nodes.len() > 1 {
            return &self.nodes;
        }
        match &self.replica {
            Some(replica) if self.promoted || self.failover_pending => std::slice::from_ref(replica),
            _ => &self.nodes,
        }
    }

    /// The run whose value sits on a majority of the authorities, counted without allocating.
    fn majority_holder(&self) -> Option<RunId> {
        let mut tally: [(Option<RunId>, u8); 5] = [(None, 0); 5];
        for node in self.authorities().iter().filter(|node| node.up) {
            let Some(entry) = node.lock else { continue };
            if let Some(slot) = tally.iter_mut().find(|(run, _)| run.is_none() || *run == Some(entry.run)) {
                *slot = (Some(entry.run), slot.1 + 1);
            }
        }
        let mut winners = tally.iter().filter(|(run, count)| run.is_some() && *count >= self.quorum);
        let holder = winners.next().and_then(|(run, _)| *run);
        // Each node holds one value and two majorities of the same nodes cannot coexist: by the
        // service's own truth there is never more than one holder (clients may still believe otherwise).
        assert!(winners.next().is_none(), "the lock service counts two holders");
        holder
    }

    fn replicates(&self, party: Party) -> bool {
        self.replica.is_some() && !self.promoted && party == Party::Redis(RedisNodeId(0))
    }
}

impl Sim {
    /// Runs a command on a node; `None` when the node cannot answer at all.
    pub(crate) fn redis_execute(
        &mut self,
        node: Party,
        client: InstanceId,
        run: RunId,
        command: RedisCommand,
    ) -> Option<RedisReply> {
        let state = self.redis.node(node)?;
        if !state.up || (node == Party::RedisReplica && !self.redis.promoted) {
            let reply = RedisReply::ConnectionRefused;
            self.record(EventKind::Redis { node, client, run, command, reply });
            return Some(reply);
        }
        self.expire_if_due(node);
        let local = self.local_now(node);
        let state = self.redis.node_mut(node)?;
        let Applied { reply, replication, revoked } = state.apply(command, run, local);
        self.record(EventKind::Redis { node, client, run, command, reply });
        self.arm_expiry(node);
        if self.redis.replicates(node) {
            let incarnation = self.redis.nodes[0].incarnation;
            let at = self.now_ms + self.world.replication_lag_ms;
            for op in replication.into_iter().flatten() {
                let op = self.replications.push(op);
                self.schedule(at, Action::Replicate { op, incarnation });
            }
        }
        self.redis_truth(revoked.unwrap_or(RevokeReason::Released));
        Some(reply)
    }

    /// Sets the node's expiry timer for its lock key, by the node's own clock.
    fn arm_expiry(&mut self, node: Party) {
        let active =
            self.redis.node(node).is_some_and(|state| state.up) && (node != Party::RedisReplica || self.redis.promoted);
        let Some(state) = self.redis.node_mut(node) else {
            return;
        };
        let old = state.expiry_timer.take();
        // A key lives through its expiry's millisecond and is gone the next
        // one, by the node's clock (see `expire_if_due`); a key with no
        // expiry (`SETNX`) has no deadline at all.
        let deadline = state.lock.and_then(|entry| entry.expires_at_local_ms.checked_add(1));
        if let Some(old) = old {
            // Most commands leave the key's expiry where it was (a refused
            // `SET NX`, a read): the queued timer still stands, instead of a
            // new one queued behind whatever is due at the same millisecond.
            if active && deadline.is_some() && self.timer_deadline(old) == deadline {
                if let Some(state) = self.redis.node_mut(node) {
                    state.expiry_timer = Some(old);
                }
                return;
            }
            self.cancel_timer(old);
        }
        if let (true, Some(deadline)) = (active, deadline) {
            let timer = self.set_timer_at(node, deadline, TimerPurpose::KeyExpiry { node });
            if let Some(state) = self.redis.node_mut(node) {
                state.expiry_timer = Some(timer);
            }
        }
    }

    fn expire_if_due(&mut self, node: Party) {
        let local = self.local_now(node);
        let Some(state) = self.redis.node_mut(node) else {
            return;
        };
        // Redis keeps a key while its clock reads at most the expiry
        // (`expireIfNeeded`: `mstime() <= when` is not expired), so a key set
        // for `ttl` ms at `t` is still there at `t + ttl` and gone after.
        if let Some(entry) = state.lock
            && entry.expires_at_local_ms < local
        {
            state.lock = None;
            if let Some(timer) = state.expiry_timer.take() {
                self.cancel_timer(timer);
            }
            self.record(EventKind::KeyExpired { node, value: entry.value });
            if self.redis.replicates(node) {
                let incarnation = self.redis.nodes[0].incarnation;
                let at = self.now_ms + self.world.replication_lag_ms;
                let op = self.replications.push(ReplicationOp::DelLock);
                self.schedule(at, Action::Replicate { op, incarnation });
            }
            self.redis_truth(RevokeReason::Expired);
        }
    }

    pub(crate) fn redis_key_expiry(&mut self, node: Party) {
        if let Some(state) = self.redis.node_mut(node) {
            state.expiry_timer = None;
        }
        self.expire_if_due(node);
        // A clock that moved back may have pushed the deadline further: re-arm.
        self.arm_expiry(node);
    }

    pub(crate) fn replicate(&mut self, op: ReplicationOp, incarnation: u32) {
        if self.redis.promoted || self.redis.nodes[0].incarnation != incarnation {
            return; // the primary died before this write reached the replica
        }
        let Some(replica) = self.redis.replica.as_mut() else {
            return;
        };
        match op {
            ReplicationOp::SetLock(entry) => replica.lock = Some(entry),
            ReplicationOp::DelLock => replica.lock = None,
            ReplicationOp::Counter(value) => replica.counter = value,
        }
        let (lock, counter) = (replica.lock, replica.counter);
        let key = lock.map(|entry| LockKey {
            value: entry.value,
            setter: self.runs[run_index(entry.run)].instance,
            expires_local_ms: entry.expires_at_local_ms,
        });
        self.record(EventKind::Replicated { key, counter });
    }

    /// A restart without persistence (or, without a replica, a failover): every key is gone.
    pub(crate) fn redis_down(&mut self, node: Party, back_after_ms: Option<u64>) {
        let Some(state) = self.redis.node_mut(node) else {
            return;
        };
        if !state.up {
            return;
        }
        let keys = state.key_count();
        state.up = false;
        state.incarnation += 1;
        state.lock = None;
        state.counter = 0;
        if let Some(timer) = state.expiry_timer.take() {
            self.cancel_timer(timer);
        }
        self.record(EventKind::RedisDown { node });
        if keys > 0 {
            self.record(EventKind::KeysLost { node, keys });
        }
        self.redis_truth(RevokeReason::Forgotten);
        if let Some(after) = back_after_ms {
            // A delayed restart keeps the node out for one TTL more, so a lock it forgot has expired everywhere.
            self.schedule(self.now_ms + after + self.redis.restart_delay_ms, Action::RedisUp { node });
        }
    }

    pub(crate) fn redis_up(&mut self, node: Party) {
        let Some(state) = self.redis.node_mut(node) else {
            return;
        };
        state.up = true;
        self.record(EventKind::RedisUp { node, promoted: false });
    }

    pub(crate) fn redis_failover(&mut self, node: Party) {
        let has_replica = self.redis.replica.is_some() && !self.redis.promoted;
        if node != Party::Redis(RedisNodeId(0)) || !has_replica {
            // Nothing to promote: the node is down for the failover time and comes back empty.
            self.redis_down(node, Some(self.world.failover_ms));
            return;
        }
        let primary = &mut self.redis.nodes[0];
        primary.up = false;
        primary.incarnation += 1;
        if let Some(timer) = primary.expiry_timer.take() {
            self.cancel_timer(timer);
        }
        self.redis.failover_pending = true;
        self.record(EventKind::RedisDown { node });
        self.redis_truth(RevokeReason::Forgotten);
        self.schedule(self.now_ms + self.world.failover_ms, Action::Promote);
    }

    pub(crate) fn promote_replica(&mut self) {
        let primary = self.redis.nodes[0].clone();
        let Some(replica) = self.redis.replica.as_mut() else {
            return;
        };
        let lost = u32::from(primary.lock.is_some() && primary.lock != replica.lock)
            + u32::from(primary.counter != replica.counter);
        replica.up = true;
        self.redis.promoted = true;
        self.redis.failover_pending = false;
        self.record(EventKind::RedisUp { node: Party::RedisReplica, promoted: true });
        if lost > 0 {
            self.record(EventKind::KeysLost { node: Party::RedisReplica, keys: lost });
        }
        self.arm_expiry(Party::RedisReplica);
        self.expire_if_due(Party::RedisReplica);
        self.redis_truth(RevokeReason::Forgotten);
    }

    /// Recomputes who the lock service counts as holder and logs the changes.
    pub(crate) fn redis_truth(&mut self, reason: RevokeReason) {
        let holder = self.redis.majority_holder();
        let before = std::mem::replace(&mut self.redis.holder, holder);
        if before == holder {
            return;
        }
        if let Some(run) = before {
            let record = &mut self.runs[run_index(run)];
            record.granted = false;
            let instance = record.instance;
            self.record(EventKind::Revoked { run, instance, reason });
        }
        if let Some(run) = holder {
            let record = &mut self.runs[run_index(run)];
            record.granted = true;
            let instance = record.instance;
            self.record(EventKind::Granted { run, instance, token: None });
        }
    }
}

/// What one command did on a node: its reply, what it sends to the
/// replica (a command writes at most the lock and then the counter), and
/// how the lock service's holder changed, if it did.
struct Applied {
    reply: RedisReply,
    replication: [Option<ReplicationOp>; 2],
    revoked: Option<RevokeReason>,
}

impl RedisNode {
    /// Runs `command` from `client`'s `run` on this node, whose clock reads `local`.
    fn apply(&mut self, command: RedisCommand, run: RunId, local: i64) -> Applied {
        let expires_at = |ttl_ms: u64| local.saturating_add(i64::try_from(ttl_ms).unwrap_or(i64::MAX / 4));
        let entry = |value: LockValue, ttl_ms: u64| LockEntry { value, run, expires_at_local_ms: expires_at(ttl_ms) };
        let mine = |value: Owner| LockValue::Owner(value);
        let forever = |value: LockValue| LockEntry { value, run, expires_at_local_ms: LockKey::NO_EXPIRY };
        match command {
            RedisCommand::SetNxEx { value, ttl_s } => self.set_if_absent(entry(value, ttl_s * 1000), false),
            RedisCommand::SetNxPx { value, ttl_ms } => self.set_if_absent(entry(value, ttl_ms), false),
            RedisCommand::SetNxPxIncr { value, ttl_ms } => self.set_if_absent(entry(mine(value), ttl_ms), true),
            RedisCommand::SetNx { value } => {
                let mut applied = self.set_if_absent(forever(value), false);
                // SETNX answers 1 or 0 where SET … NX answers OK or (nil).
                applied.reply = RedisReply::Integer(i64::from(applied.reply == RedisReply::Ok));
                applied
            }
            RedisCommand::SetPx { value, ttl_ms } => self.set_whatever(entry(value, ttl_ms)),
            RedisCommand::Get => Applied::only(self.lock.map_or(RedisReply::Nil, |held| RedisReply::Value(held.value))),
            RedisCommand::Del => {
                let reason = |held: LockEntry| {
                    if held.run == run { RevokeReason::Released } else { RevokeReason::DeletedByOther }
                };
                self.delete_if(|_| true, reason)
            }
            // Plain PEXPIRE and EXPIRE move whatever key is there.
            RedisCommand::Pexpire { ttl_ms } => self.extend_if(|_| true, expires_at(ttl_ms)),
            RedisCommand::Expire { ttl_s } => self.extend_if(|_| true, expires_at(ttl_s.saturating_mul(1000))),
            RedisCommand::Incr => {
                self.counter += 1;
                let replication = [Some(ReplicationOp::Counter(self.counter)), None];
                Applied { reply: RedisReply::Integer(self.counter), replication, revoked: None }
            }
            RedisCommand::CompareAndDelete { value } => {
                self.delete_if(|held| held.value == mine(value), |_| RevokeReason::Released)
            }
            RedisCommand::CompareAndExtend { value, ttl_ms } => {
                self.extend_if(|held| held.value == mine(value), entry(mine(value), ttl_ms).expires_at_local_ms)
            }
        }
    }

    /// `SET … NX`: the lock, if nobody holds it; with the `INCR` of the
    /// fencing script, the counter too, its value the reply.
    fn set_if_absent(&mut self, entry: LockEntry, with_counter: bool) -> Applied {
        if self.lock.is_some() {
            return Applied::only(RedisReply::Nil);
        }
        self.lock = Some(entry);
        if !with_counter {
            return Applied {
                reply: RedisReply::Ok,
                replication: [Some(ReplicationOp::SetLock(entry)), None],
                revoked: None,
            };
        }
        self.counter += 1;
        let replication = [Some(ReplicationOp::SetLock(entry)), Some(ReplicationOp::Counter(self.counter))];
        Applied { reply: RedisReply::Integer(self.counter), replication, revoked: None }
    }

    /// A plain `SET`: the key is `entry`'s whatever was there; a lock of
    /// another run's is replaced, and the lock service's holder with it.
    fn set_whatever(&mut self, entry: LockEntry) -> Applied {
        let replaced = self.lock.replace(entry);
        let revoked = replaced.filter(|held| held.run != entry.run).map(|_| RevokeReason::Overwritten);
        Applied { reply: RedisReply::Ok, replication: [Some(ReplicationOp::SetLock(entry)), None], revoked }
    }

    /// Deletes the lock if it is held and `holds` says so: 1, else 0.
    fn delete_if(&mut self, holds: impl Fn(&LockEntry) -> bool, reason: impl Fn(LockEntry) -> RevokeReason) -> Applied {
        match self.lock {
            Some(held) if holds(&held) => {
                self.lock = None;
                let replication = [Some(ReplicationOp::DelLock), None];
                Applied { reply: RedisReply::Integer(1), replication, revoked: Some(reason(held)) }
            }
            Some(_) | None => Applied::only(RedisReply::Integer(0)),
        }
    }

    /// Moves the lock's expiry if it is held and `holds` says so: 1, else 0.
    fn extend_if(&mut self, holds: impl Fn(&LockEntry) -> bool, expires_at_local_ms: i64) -> Applied {
        match &mut self.lock {
            Some(held) if holds(held) => {
                held.expires_at_local_ms = expires_at_local_ms;
                let replication = [Some(ReplicationOp::SetLock(*held)), None];
                Applied { reply: RedisReply::Integer(1), replication, revoked: None }
            }
            Some(_) | None => Applied::only(RedisReply::Integer(0)),
        }
    }
}

impl Applied {
    /// A reply that changed nothing.
    fn only(reply: RedisReply) -> Applied {
        Applied { reply, replication: [None, None], revoked: None }
    }
}
