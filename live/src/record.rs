//! From what a live run's processes reported to the engine's log.
//!
//! Each instance numbers its runs itself; here they are numbered across
//! instances in the order they first appear, as the simulator numbers them.
//! The lock service's truth (who Redis counts as holder: `Granted`,
//! `Revoked`, `KeyExpired`) is read off the servers' own replies, in order:
//! a `SET … NX` that got `OK` (or the lock script's token) gives that node to
//! the run until its TTL runs out, an extend that got 1 moves the end, a
//! delete that got 1 ends it; a run holds the lock while a majority of the
//! nodes give it to the run (one node of one). A TTL runs out by the
//! scenario's clock, as a real Redis expires a key at its deadline whether
//! or not anybody asks.
//!
//! With a replica, the primary's slot is the replica's once it is promoted:
//! the coordinator reads what the promoted replica holds ([`Promotion`]),
//! and commands that reached it through the repointed proxy are its own.

use locklab_engine::clock::LocalClock;
use locklab_engine::event::{
    ConnectionChange, ConsensusOp, ConsensusReply, DbClient, LockKey, LockValue, Owner, RedisCommand, RedisReply,
    RevokeReason, RunPhase, Sql, SqlError, SqlOutcome,
};
use locklab_engine::ids::{InstanceId, LeaseId, Party, RedisNodeId, RunId, SessionId, Token};
use locklab_engine::scenario::StrategySettings;
use locklab_engine::{Event, EventKind};
use std::collections::BTreeMap;

/// The lease the coordinator's etcd watch names on a deletion it saw: the
/// key left etcd, and the record decides whether a revoke or an expiry took it.
pub(crate) const KEY_GONE: LeaseId = LeaseId(u32::MAX);

/// How close (scenario ms) a revoke's reply and the key's deletion must be
/// for the deletion to be the revoke's: a few round trips, scaled.
const RELEASE_WINDOW_MS: u64 = 2_000;

/// What a promoted replica held when it became the primary: the lock key's
/// value and its expiry (scenario ms), if it had the key, and the token counter.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Promotion {
    pub(crate) key: Option<(LockValue, u64)>,
    pub(crate) counter: i64,
}

/// The log of a live run: what every process reported, in time order, its
/// runs numbered, with the lock service's truth among it.
pub(crate) fn assemble(
    mut collected: Vec<(Option<InstanceId>, Event)>,
    nodes: u8,
    promotions: Vec<Promotion>,
) -> Vec<Event> {
    collected.sort_by_key(|(_, event)| event.at_ms);
    let mut numbers: BTreeMap<(Option<InstanceId>, u32), RunId> = BTreeMap::new();
    let mut events = Vec::with_capacity(collected.len());
    let mut promoted = false;
    for (source, mut event) in collected {
        each_run(&mut event.kind, &mut |run| {
            let next = RunId(u32::try_from(numbers.len()).unwrap_or(u32::MAX));
            *numbers.entry((source, run.0)).or_insert(next)
        });
        // After the failover the clients' way to the primary leads to the replica.
        if let EventKind::RedisUp { node: Party::RedisReplica, promoted: true } = event.kind {
            promoted = true;
        } else if let EventKind::Redis { node, .. } = &mut event.kind
            && promoted
            && *node == PRIMARY
        {
            *node = Party::RedisReplica;
        }
        events.push(event);
    }
    let mut truth = Truth::new(nodes);
    truth.releases = releases(&events);
    truth.promotions = promotions;
    truth.woven_into(events)
}

/// How many Redis nodes hold the strategy's lock: none when its lock
/// service is the database or etcd, or when there is no lock.
pub(crate) fn lock_nodes(settings: &StrategySettings) -> u8 {
    match settings {
        StrategySettings::Naive(_) | StrategySettings::Fencing(_) | StrategySettings::Redlock(_) => {
            settings.redis_nodes()
        }
        StrategySettings::DbLock(_) | StrategySettings::UniqueInsert | StrategySettings::Consensus(_) => 0,
    }
}

/// The single Redis node, whose replica a failover promotes.
pub(crate) const PRIMARY: Party = Party::Redis(RedisNodeId(0));

/// The truth's slot for a Redis node's key: a promoted replica's is its primary's.
fn slot_of(node: Party) -> Option<usize> {
    match node {
        Party::Redis(RedisNodeId(node)) => Some(usize::from(node)),
        Party::RedisReplica => Some(0),
        Party::Instance(_) | Party::Db | Party::Storage | Party::Slack | Party::Consensus => None,
    }
}

/// When each run's lease was revoked (its reply), with the key's value it held.
fn releases(events: &[Event]) -> Vec<(Owner, u64)> {
    let mut owners: BTreeMap<RunId, Owner> = BTreeMap::new();
    let mut releases = Vec::new();
    for event in events {
        if let EventKind::Consensus { run, op, reply, .. } = &event.kind {
            match (op, reply) {
                (ConsensusOp::Acquire { value, .. }, ConsensusReply::Acquired { .. }) => {
                    owners.insert(*run, *value);
                }
                (ConsensusOp::Revoke { .. }, ConsensusReply::Revoked) => {
                    if let Some(owner) = owners.get(run) {
                        releases.push((*owner, event.at_ms));
                    }
                }
                (ConsensusOp::Acquire { .. } | ConsensusOp::KeepAlive { .. } | ConsensusOp::Revoke { .. }, _) => {}
            }
        }
    }
    releases
}

/// Calls `renumber` on every run id an event names, and keeps what it returns.
fn each_run(kind: &mut EventKind, renumber: &mut impl FnMut(RunId) -> RunId) {
    use EventKind as K;
    match kind {
        K::Run { run, phase, .. } => {
            *run = renumber(*run);
            if let RunPhase::Redelivered(from) = phase {
                *from = renumber(*from);
            }
        }
        K::Granted { run, .. }
        | K::Revoked { run, .. }
        | K::Belief { run, .. }
        | K::Redis { run, .. }
        | K::Put { run, .. }
        | K::Post { run, .. }
        | K::Consensus { run, .. }
        | K::RowApplied { run, .. } => *run = renumber(*run),
        K::Sql { run, statement, .. } => {
            if let Some(run) = run {
                *run = renumber(*run);
            }
            // The report row's statement names its run too: it reads in
            // the log's numbers, like every other line (the process sent
            // its own number, which only keys the row).
            if let Sql::WriteReport { run, .. } = statement {
                *run = renumber(*run);
            }
        }
        K::Fault { .. }
        | K::Cron { .. }
        | K::Process { .. }
        | K::Clock { .. }
        | K::Sent { .. }
        | K::Lost { .. }
        | K::KeyExpired { .. }
        | K::KeysLost { .. }
        | K::Replicated { .. }
        | K::RedisDown { .. }
        | K::RedisUp { .. }
        | K::Connection { .. }
        | K::RowLock { .. }
        | K::Pool { .. }
        | K::Background { .. }
        | K::LeaseExpired { .. }
        | K::Leader { .. }
        | K::LeaseRefreshed { .. }
        | K::DbSlow { .. } => {}
    }
}

/// One node's key, as its replies showed it.
#[derive(Clone, Copy, Debug)]
struct Held {
    run: RunId,
    instance: InstanceId,
    value: LockValue,
    /// The key's expiry by its node's clock, and when that clock reaches it.
    deadline_local_ms: i64,
    expires_ms: u64,
    /// The run whose key, unexpired by the record, this one's `SET … NX`
    /// replaced: at the server that key was gone first, so a delete by that
    /// run recorded after it ran before it (replies from two connections
    /// are sorted by when they came back).
    took_over: Option<RunId>,
}

/// The lock service's truth, rebuilt from the servers' replies; fed events
/// in time order, it weaves its own in among them.
#[derive(Debug)]
pub(crate) struct Truth {
    nodes: Vec<Option<Held>>,
    /// Each node's clock, as its faults moved it.
    clocks: Vec<LocalClock>,
    /// The run the service counts as holder now, and its instance.
    pub(crate) holder: Option<(RunId, InstanceId)>,
    /// The session holding the jobs row's `FOR UPDATE`, under db-lock: the holder's.
    row_lock: Option<SessionId>,
    /// The consensus key's holder: its value and lease.
    lease: Option<(Owner, LeaseId)>,
    /// Revokes the record knows of ([`releases`]), so that the key's
    /// deletion they caused is not taken for an expiry.
    releases: Vec<(Owner, u64)>,
    /// What each replica promotion found, in order, taken as the promotions happen.
    pub(crate) promotions: Vec<Promotion>,
    /// Whether the replica is the primary now: node 0's key is the replica's.
    promoted: bool,
    /// Which run set each value it set, so a value a replica kept names its run.
    setters: Vec<(LockValue, RunId, InstanceId)>,
    log: Vec<Event>,
}

impl Truth {
    /// The truth of a run whose lock lives on `lock_nodes` Redis nodes
    /// (none when the lock service is the database, etcd, or nothing).
    pub(crate) fn new(lock_nodes: u8) -> Truth {
        Truth {
            nodes: vec![None; usize::from(lock_nodes)],
            clocks: vec![LocalClock::default(); usize::from(lock_nodes)],
            holder: None,
            row_lock: None,
            lease: None,
            releases: Vec::new(),
            promotions: Vec::new(),
            promoted: false,
            setters: Vec::new(),
            log: Vec::new(),
        }
    }

    fn woven_into(mut self, events: Vec<Event>) -> Vec<Event> {
        for event in events {
            self.feed(event);
        }
        self.log
    }

    /// Takes the next event: keys that expired before it expire first.
    pub(crate) fn feed(&mut self, event: Event) {
        self.expire_until(event.at_ms);
        let at_ms = event.at_ms;
        if let EventKind::LeaseExpired { lease: KEY_GONE, value } = event.kind {
            self.key_gone(at_ms, value);
            return;
        }
        let lease_change = self.lease_change(&event);
        self.node_changed(&event);
        let change = if let EventKind::Redis { node, client, run, command, reply } = &event.kind {
            slot_of(*node).map(|slot| (slot, *client, *run, *command, *reply))
        } else {
            None
        };
        let row_lock = self.row_lock_change(&event);
        let leader_elected = matches!(event.kind, EventKind::Leader { up: true });
        self.log.push(event);
        if leader_elected && let Some((_, lease)) = self.lease {
            // etcd's lessor refreshes every lease when its member becomes the
            // leader; the record writes it as the simulator logs it.
            self.log.push(Event { at_ms, kind: EventKind::LeaseRefreshed { lease } });
        }
        if let Some((node, client, run, command, reply)) = change {
            let reason = self.apply(node, client, run, command, reply, at_ms);
            self.recount(at_ms, reason);
        }
        if let Some(change) = row_lock {
            self.row_lock_moved(at_ms, change);
        }
        if let Some(change) = lease_change {
            self.lease_moved(at_ms, change, RevokeReason::Released);
        }
    }

    /// Under consensus etcd is the lock service: a create-if-absent that
    /// succeeded grants the lock to its run, with the put's revision for a
    /// token; a revoke that succeeded, by the holder, takes it back.
    #[allow(clippy::type_complexity)]
    fn lease_change(&self, event: &Event) -> Option<Option<(RunId, InstanceId, Owner, LeaseId, Token)>> {
        let EventKind::Consensus { client, run, op, reply } = &event.kind else { return None };
        match (op, reply) {
            (ConsensusOp::Acquire { value, .. }, ConsensusReply::Acquired { lease, revision }) => {
                Some(Some((*run, *client, *value, *lease, *revision)))
            }
            (ConsensusOp::Revoke { .. }, ConsensusReply::Revoked) => {
                self.holder.filter(|(holder, _)| holder == run).map(|_| None)
            }
            (ConsensusOp::Acquire { .. } | ConsensusOp::KeepAlive { .. } | ConsensusOp::Revoke { .. }, _) => None,
        }
    }

    fn lease_moved(
        &mut self,
        at_ms: u64,
        holder: Option<(RunId, InstanceId, Owner, LeaseId, Token)>,
        reason: RevokeReason,
    ) {
        if let Some((run, instance)) = self.holder.take() {
            self.log.push(Event { at_ms, kind: EventKind::Revoked { run, instance, reason } });
        }
        self.lease = holder.map(|(_, _, value, lease, _)| (value, lease));
        if let Some((run, instance, _, _, token)) = holder {
            self.log.push(Event { at_ms, kind: EventKind::Granted { run, instance, token: Some(token) } });
            self.holder = Some((run, instance));
        }
    }

    /// The key left etcd: the holder's lease expired, unless a revoke of it took it.
    fn key_gone(&mut self, at_ms: u64, value: Owner) {
        let released = self
            .releases
            .iter()
            .any(|(owner, released_ms)| *owner == value && released_ms.abs_diff(at_ms) <= RELEASE_WINDOW_MS);
        let Some((held, lease)) = self.lease else { return };
        if released || held != value {
            return;
        }
        self.log.push(Event { at_ms, kind: EventKind::LeaseExpired { lease, value } });
        self.lease_moved(at_ms, None, RevokeReason::Expired);
    }

    /// A Redis node's clock stepped or began to drift (its keys expire by
    /// it), or the node went down and forgot its keys.
    fn node_changed(&mut self, event: &Event) {
        if let EventKind::Clock { party: Party::Redis(RedisNodeId(node)), local_ms, drift_ppm } = event.kind {
            let (node, at_ms) = (usize::from(node), event.at_ms);
            if let Some(clock) = self.clocks.get_mut(node) {
                clock.jump(at_ms, local_ms - clock.local_at(at_ms));
                clock.set_drift(at_ms, drift_ppm);
                let clock = *clock;
                if let Some(Some(held)) = self.nodes.get_mut(node) {
                    // A key whose deadline the step passed expires now.
                    held.expires_ms = clock.true_when(held.deadline_local_ms, at_ms);
                }
            }
            self.expire_until(at_ms);
        }
        if let EventKind::RedisDown { node: Party::Redis(RedisNodeId(node)) } = event.kind {
            if let Some(slot) = self.nodes.get_mut(usize::from(node)) {
                *slot = None;
            }
            self.recount(event.at_ms, RevokeReason::Forgotten);
        }
        if let EventKind::RedisUp { node: Party::RedisReplica, promoted: true } = event.kind {
            self.promote(event.at_ms);
        }
    }

    /// The replica became the primary with whatever it had: its key (if
    /// any) is node 0's from now on, held by the run that set that value.
    fn promote(&mut self, at_ms: u64) {
        self.promoted = true;
        let promotion = if self.promotions.is_empty() { None } else { Some(self.promotions.remove(0)) };
        let held = promotion.and_then(|promotion| promotion.key).and_then(|(value, expires_ms)| {
            let (_, run, instance) = self.setters.iter().rev().find(|(set, ..)| *set == value)?;
            let deadline_local_ms = i64::try_from(expires_ms).unwrap_or(i64::MAX / 2);
            Some(Held { run: *run, instance: *instance, value, deadline_local_ms, expires_ms, took_over: None })
        });
        // The replication stream is not watched: what the replica held is
        // logged once, as read when it was promoted.
        let key = held.map(|held| LockKey {
            value: held.value,
            setter: held.instance,
            expires_local_ms: held.deadline_local_ms,
        });
        let counter = promotion.map_or(0, |promotion| promotion.counter);
        self.log.push(Event { at_ms, kind: EventKind::Replicated { key, counter } });
        if let Some(slot) = self.nodes.first_mut() {
            *slot = held;
        }
        self.expire_until(at_ms);
        self.recount(at_ms, RevokeReason::Forgotten);
    }

    /// Under db-lock the database is the lock service: a `FOR UPDATE` that
    /// returned the row grants the lock to its run, and the end of its
    /// transaction (COMMIT, ROLLBACK, or the session's end) takes it back.
    fn row_lock_change(&self, event: &Event) -> Option<Option<(SessionId, RunId, InstanceId)>> {
        if let EventKind::Sql { session, client, run, statement, outcome, .. } = &event.kind {
            if let (DbClient::Instance(instance), Some(run), Sql::LockJobRow { .. }, SqlOutcome::Rows(1..)) =
                (client, run, statement, outcome)
            {
                return Some(Some((*session, *run, *instance)));
            }
            let ends = matches!(statement, Sql::Commit | Sql::Rollback)
                || matches!(
                    outcome,
                    SqlOutcome::Error(SqlError::ConnectionClosed | SqlError::IdleInTransactionTimeout)
                );
            return (ends && self.row_lock == Some(*session)).then_some(None);
        }
        if let EventKind::Connection { session, change: ConnectionChange::Terminated(_), .. } = &event.kind {
            return (self.row_lock == Some(*session)).then_some(None);
        }
        None
    }

    fn row_lock_moved(&mut self, at_ms: u64, holder: Option<(SessionId, RunId, InstanceId)>) {
        if let Some((run, instance)) = self.holder.take() {
            let reason = RevokeReason::TransactionEnded;
            self.log.push(Event { at_ms, kind: EventKind::Revoked { run, instance, reason } });
        }
        self.row_lock = holder.map(|(session, ..)| session);
        if let Some((_, run, instance)) = holder {
            self.log.push(Event { at_ms, kind: EventKind::Granted { run, instance, token: None } });
            self.holder = Some((run, instance));
        }
    }

    /// What a command's reply did to `node`'s key; the reason a holder would lose it.
    fn apply(
        &mut self,
        node: usize,
        client: InstanceId,
        run: RunId,
        command: RedisCommand,
        reply: RedisReply,
        at_ms: u64,
    ) -> RevokeReason {
        let done = reply == RedisReply::Integer(1);
        let took = matches!(reply, RedisReply::Ok | RedisReply::Integer(_));
        self.setters.extend(value_set(command, reply).map(|value| (value, run, client)));
        // A TTL counts on the node's own clock from the command's moment.
        let clock = self.clocks.get(node).copied().unwrap_or_default();
        let expiry = |ttl_ms: u64| {
            let deadline_local_ms = clock.local_at(at_ms).saturating_add(i64::try_from(ttl_ms).unwrap_or(i64::MAX / 4));
            (deadline_local_ms, clock.true_when(deadline_local_ms, at_ms))
        };
        let Some(slot) = self.nodes.get_mut(node) else { return RevokeReason::Released };
        let took_over = slot.filter(|held| held.run != run).map(|held| held.run);
        let held = |value: LockValue, ttl_ms: u64, took_over: Option<RunId>| {
            let (deadline_local_ms, expires_ms) =
                if ttl_ms == u64::MAX { (LockKey::NO_EXPIRY, u64::MAX) } else { expiry(ttl_ms) };
            Some(Held { run, instance: client, value, deadline_local_ms, expires_ms, took_over })
        };
        if ran_before_the_holders_set(slot.as_mut(), command, run, done) {
            return RevokeReason::Released;
        }
        if let (Some(ttl_ms), true, Some(held)) = (command.extended_ttl_ms(), done, slot.as_mut()) {
            (held.deadline_local_ms, held.expires_ms) = expiry(ttl_ms);
        }
        match command {
            RedisCommand::SetNxEx { value, ttl_s } if took => *slot = held(value, ttl_s * 1_000, took_over),
            RedisCommand::SetNxPx { value, ttl_ms } if took => *slot = held(value, ttl_ms, took_over),
            RedisCommand::SetNxPxIncr { value, ttl_ms } if took => {
                *slot = held(LockValue::Owner(value), ttl_ms, took_over);
            }
            // SETNX sets a key with no expiry: it stays until something deletes it.
            RedisCommand::SetNx { value } if done => *slot = held(value, u64::MAX, took_over),
            // A plain SET overwrites whatever is there, at the server too.
            RedisCommand::SetPx { value, ttl_ms } if took => {
                let theirs = slot.is_some_and(|held| held.run != run);
                *slot = held(value, ttl_ms, None);
                if theirs {
                    return RevokeReason::Overwritten;
                }
            }
            // A compare-and-delete that reaches here deleted its own key.
            RedisCommand::CompareAndDelete { .. } | RedisCommand::Del if done => {
                let theirs = slot.is_some_and(|held| held.run != run);
                *slot = None;
                if theirs {
                    return RevokeReason::DeletedByOther;
                }
            }
            RedisCommand::SetNxEx { .. }
            | RedisCommand::SetNxPx { .. }
            | RedisCommand::SetNxPxIncr { .. }
            | RedisCommand::SetNx { .. }
            | RedisCommand::SetPx { .. }
            | RedisCommand::Expire { .. }
            | RedisCommand::CompareAndExtend { .. }
            | RedisCommand::Pexpire { .. }
            | RedisCommand::CompareAndDelete { .. }
            | RedisCommand::Del
            | RedisCommand::Get
            | RedisCommand::Incr => {}
        }
        RevokeReason::Released
    }

    /// Keys whose TTL ran out before `at_ms` expire, in the order they do.
    fn expire_until(&mut self, at_ms: u64) {
        loop {
            let due = self
                .nodes
                .iter()
                .enumerate()
                .filter_map(|(node, held)| held.map(|held| (held.expires_ms, node, held.value)))
                .filter(|(expires_ms, ..)| *expires_ms <= at_ms)
                .min_by_key(|(expires_ms, node, _)| (*expires_ms, *node));
            let Some((expires_ms, node, value)) = due else { return };
            self.nodes[node] = None;
            let party = match (node, self.promoted) {
                (0, true) => Party::RedisReplica,
                _ => Party::Redis(RedisNodeId(u8::try_from(node).unwrap_or(u8::MAX))),
            };
            self.log.push(Event { at_ms: expires_ms, kind: EventKind::KeyExpired { node: party, value } });
            self.recount(expires_ms, RevokeReason::Expired);
        }
    }

    /// Who holds the lock now: the run a majority of nodes give it to.
    fn recount(&mut self, at_ms: u64, reason: RevokeReason) {
        if self.nodes.is_empty() {
            return; // Redis does not hold this strategy's lock: its keys decide nothing.
        }
        let mut counts: BTreeMap<(RunId, InstanceId), usize> = BTreeMap::new();
        for held in self.nodes.iter().flatten() {
            *counts.entry((held.run, held.instance)).or_default() += 1;
        }
        let majority = self.nodes.len() / 2 + 1;
        let holder = counts.into_iter().find(|(_, count)| *count >= majority).map(|(holder, _)| holder);
        if holder == self.holder {
            return;
        }
        if let Some((run, instance)) = self.holder {
            self.log.push(Event { at_ms, kind: EventKind::Revoked { run, instance, reason } });
        }
        if let Some((run, instance)) = holder {
            self.log.push(Event { at_ms, kind: EventKind::Granted { run, instance, token: None } });
        }
        self.holder = holder;
    }
}

/// Whether `command` by `run`, answered 1 (`done`), ran at the server
/// before the `SET … NX` that gave the key to its holder in the record.
/// Two clients' replies reach the record in either order. A
/// compare-and-delete or compare-and-extend that succeeded proves the key
/// held its own value: where the record has another's, that client's SET
/// NX is recorded first though the server ran it after this command, on a
/// key this command had deleted or that expired after it. So is a plain
/// DEL by the run whose unexpired key that SET NX took in the record
/// (`Held::took_over`): at the server that key was gone first; that DEL
/// is then accounted for.
fn ran_before_the_holders_set(held: Option<&mut Held>, command: RedisCommand, run: RunId, done: bool) -> bool {
    let Some(held) = held.filter(|_| done) else { return false };
    match command {
        RedisCommand::CompareAndDelete { value } | RedisCommand::CompareAndExtend { value, .. } => {
            held.value != LockValue::Owner(value)
        }
        RedisCommand::Del => held.took_over.take_if(|took_over| *took_over == run).is_some(),
        RedisCommand::SetNxEx { .. }
        | RedisCommand::SetNxPx { .. }
        | RedisCommand::SetNxPxIncr { .. }
        | RedisCommand::SetNx { .. }
        | RedisCommand::SetPx { .. }
        | RedisCommand::Expire { .. }
        | RedisCommand::Pexpire { .. }
        | RedisCommand::Get
        | RedisCommand::Incr => false,
    }
}

/// The value `command` set the key to, if its reply says it set one:
/// `SET … NX` answers OK, the lock script its token, SETNX 1 (0 set nothing).
fn value_set(command: RedisCommand, reply: RedisReply) -> Option<LockValue> {
    let took = matches!(reply, RedisReply::Ok | RedisReply::Integer(_));
    match command {
        RedisCommand::SetNxEx { value, .. }
        | RedisCommand::SetNxPx { value, .. }
        | RedisCommand::SetPx { value, .. } => took.then_some(value),
        RedisCommand::SetNx { value } => (reply == RedisReply::Integer(1)).then_some(value),
        RedisCommand::SetNxPxIncr { value, .. } => took.then_some(LockValue::Owner(value)),
        RedisCommand::CompareAndExtend { .. }
        | RedisCommand::Pexpire { .. }
        | RedisCommand::Expire { .. }
        | RedisCommand::CompareAndDelete { .. }
        | RedisCommand::Del
        | RedisCommand::Get
        | RedisCommand::Incr => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redis(at_ms: u64, instance: u8, run: u32, command: RedisCommand, reply: RedisReply) -> Event {
        let (client, run) = (InstanceId(instance), RunId(run));
        Event { at_ms, kind: EventKind::Redis { node: PRIMARY, client, run, command, reply } }
    }

    fn owner(instance: u8) -> Owner {
        Owner { instance: InstanceId(instance), nonce: 7 }
    }

    #[test]
    fn a_release_recorded_after_the_next_holders_set_is_the_one_the_server_ran_first() {
        // a holds the lock; it releases it and c takes it a moment later,
        // but c's reply reaches the record 1 ms before a's: with the unlock
        // script, and with the post's plain DEL.
        let lock = |instance: u8| RedisCommand::SetNxPxIncr { value: owner(instance), ttl_ms: 30_000 };
        for release in [RedisCommand::CompareAndDelete { value: owner(0) }, RedisCommand::Del] {
            let events = vec![
                redis(300_000, 0, 0, lock(0), RedisReply::Integer(1)),
                redis(320_217, 2, 1, lock(2), RedisReply::Integer(2)),
                redis(320_218, 0, 0, release, RedisReply::Integer(1)),
                redis(400_000, 1, 2, RedisCommand::Get, RedisReply::Nil),
            ];
            let log = Truth::new(1).woven_into(events);
            let truth: Vec<&EventKind> = log
                .iter()
                .map(|event| &event.kind)
                .filter(|kind| {
                    matches!(kind, EventKind::Granted { .. } | EventKind::Revoked { .. } | EventKind::KeyExpired { .. })
                })
                .collect();
            // c holds the key from its SET until its TTL ends: a's release took a's key.
            let (a, c) = ((RunId(0), InstanceId(0)), (RunId(1), InstanceId(2)));
            assert_eq!(
                truth,
                vec![
                    &EventKind::Granted { run: a.0, instance: a.1, token: None },
                    &EventKind::Revoked { run: a.0, instance: a.1, reason: RevokeReason::Released },
                    &EventKind::Granted { run: c.0, instance: c.1, token: None },
                    &EventKind::KeyExpired { node: PRIMARY, value: LockValue::Owner(owner(2)) },
                    &EventKind::Revoked { run: c.0, instance: c.1, reason: RevokeReason::Expired },
                ],
                "{release:?}"
            );
        }
    }
}
