//! An etcd-style consensus store, reduced to what a lock needs: a revision
//! counter that only goes up and survives a leader's loss (every committed
//! write is on a majority), leases with a TTL measured by the leader, and a
//! transaction that creates the lock key only if it is absent. The key's
//! revision is the fencing token (Jepsen's etcd analysis: the lock alone is not
//! safe; use the revision to fence).
//!
//! A lease's TTL is measured on the store's monotonic clock, not its wall
//! clock. etcd 3.4's lessor (`lease/lessor.go`) sets a lease's expiry to
//! `time.Now().Add(ttl)` and asks `Lease.expired()`, which is
//! `time.Until(expiry) <= 0`; Go's `time.Now()` carries a monotonic reading
//! and `Until`/`Sub` use it when both times have one, so stepping the
//! member's wall clock does not end a lease. (The lessor's expiry queue is
//! ordered by `expiry.UnixNano()`, a wall reading, so a step forward makes it
//! look at a lease early; `findExpiredLeases` then keeps it, since
//! `expired()` is false.) A drift still applies: the monotonic clock counts
//! the same oscillator's ticks.
//!
//! While no leader is elected every request fails; the new leader refreshes
//! every lease's TTL, as etcd does (`Promote`), so a leader change never
//! shortens a lease.

use super::{Sim, TimerId, TimerPurpose, run_index};
use crate::clock::ClockKind;
use crate::event::{ConsensusOp, ConsensusReply, EventKind, Owner, RevokeReason};
use crate::ids::{InstanceId, LeaseId, Party, RunId, Token};
use crate::table::Table;

#[derive(Clone, Copy, Debug)]
struct Lease {
    ttl_ms: u64,
    /// When it runs out, by the store's monotonic clock.
    expires_monotonic_ms: i64,
    timer: Option<TimerId>,
}

#[derive(Clone, Copy, Debug)]
struct LockKey {
    value: Owner,
    run: RunId,
    lease: LeaseId,
    /// The revision that created it: the holder's fencing token.
    created: Token,
}

/// The consensus store's state.
#[derive(Clone, Debug)]
pub(crate) struct ConsensusStore {
    leader_up: bool,
    revision: u64,
    key: Option<LockKey>,
    /// A few at a time, by id: the engine's sorted-vector map, which the
    /// pages' wasm carries anyway, in place of a `BTreeMap`.
    leases: Table<LeaseId, Lease>,
    next_lease: u32,
}

impl Default for ConsensusStore {
    fn default() -> Self {
        ConsensusStore { leader_up: true, revision: 1, key: None, leases: Table::new(), next_lease: 1 }
    }
}

impl Sim {
    pub(crate) fn consensus_execute(
        &mut self,
        client: InstanceId,
        run: RunId,
        op: ConsensusOp,
    ) -> Option<ConsensusReply> {
        let reply = if self.consensus.leader_up { self.consensus_apply(run, op) } else { ConsensusReply::NoLeader };
        self.record(EventKind::Consensus { client, run, op, reply });
        Some(reply)
    }

    fn consensus_apply(&mut self, run: RunId, op: ConsensusOp) -> ConsensusReply {
        let now = self.monotonic_now(Party::Consensus);
        match op {
            ConsensusOp::Acquire { value, ttl_ms } => {
                if let Some(key) = self.consensus.key {
                    return ConsensusReply::Taken { holder: key.value };
                }
                let lease = LeaseId(self.consensus.next_lease);
                self.consensus.next_lease += 1;
                let expires = now.saturating_add(i64::try_from(ttl_ms).unwrap_or(i64::MAX / 4));
                self.consensus.leases.insert(lease, Lease { ttl_ms, expires_monotonic_ms: expires, timer: None });
                self.arm_lease(lease);
                self.consensus.revision += 1;
                let revision = Token(self.consensus.revision);
                self.consensus.key = Some(LockKey { value, run, lease, created: revision });
                let record = &mut self.runs[run_index(run)];
                record.granted = true;
                let instance = record.instance;
                self.record(EventKind::Granted { run, instance, token: Some(revision) });
                ConsensusReply::Acquired { lease, revision }
            }
            ConsensusOp::KeepAlive { lease } => match self.consensus.leases.get_mut(&lease) {
                Some(state) => {
                    state.expires_monotonic_ms =
                        now.saturating_add(i64::try_from(state.ttl_ms).unwrap_or(i64::MAX / 4));
                    let ttl_ms = state.ttl_ms;
                    self.arm_lease(lease);
                    ConsensusReply::Alive { ttl_ms }
                }
                None => ConsensusReply::LeaseNotFound,
            },
            ConsensusOp::Revoke { lease } => {
                if self.drop_lease(lease, RevokeReason::Released) {
                    ConsensusReply::Revoked
                } else {
                    ConsensusReply::LeaseNotFound
                }
            }
        }
    }

    fn arm_lease(&mut self, lease: LeaseId) {
        let Some(state) = self.consensus.leases.get_mut(&lease) else {
            return;
        };
        let old = state.timer.take();
        let deadline = state.expires_monotonic_ms;
        if let Some(old) = old {
            self.cancel_timer(old);
        }
        let purpose = TimerPurpose::LeaseExpiry { lease };
        let timer = self.set_timer_on(Party::Consensus, ClockKind::Monotonic, deadline, purpose);
        if let Some(state) = self.consensus.leases.get_mut(&lease) {
            state.timer = Some(timer);
        }
    }

    /// Removes a lease and the key attached to it; returns whether it existed.
    fn drop_lease(&mut self, lease: LeaseId, reason: RevokeReason) -> bool {
        let Some(state) = self.consensus.leases.remove(&lease) else {
            return false;
        };
        if let Some(timer) = state.timer {
            self.cancel_timer(timer);
        }
        if let Some(key) = self.consensus.key
            && key.lease == lease
        {
            self.consensus.key = None;
            self.consensus.revision += 1;
            if reason == RevokeReason::Expired {
                self.record(EventKind::LeaseExpired { lease, value: key.value });
            }
            let record = &mut self.runs[run_index(key.run)];
            record.granted = false;
            let instance = record.instance;
            self.record(EventKind::Revoked { run: key.run, instance, reason });
        }
        true
    }

    pub(crate) fn lease_expiry(&mut self, lease: LeaseId) {
        let now = self.monotonic_now(Party::Consensus);
        let Some(state) = self.consensus.leases.get_mut(&lease) else {
            return;
        };
        state.timer = None;
        if !self.consensus.leader_up {
            return; // no leader, no expiry: the new leader refreshes leases
        }
        if state.expires_monotonic_ms <= now {
            self.drop_lease(lease, RevokeReason::Expired);
        } else {
            self.arm_lease(lease);
        }
    }

    /// The lock key, if it exists: its value and the revision that created it.
    pub(crate) fn consensus_key(&self) -> Option<(Owner, Token)> {
        self.consensus.key.map(|key| (key.value, key.created))
    }

    /// How long lease `lease` has left by the store's monotonic clock, if it exists.
    pub(crate) fn lease_remaining_ms(&self, lease: LeaseId) -> Option<i64> {
        let state = self.consensus.leases.get(&lease)?;
        Some(state.expires_monotonic_ms - self.monotonic_now(Party::Consensus))
    }

    /// Whether the store has a leader.
    pub(crate) fn consensus_has_leader(&self) -> bool {
        self.consensus.leader_up
    }

    pub(crate) fn leader_lost(&mut self) {
        if !self.consensus.leader_up {
            return;
        }
        self.consensus.leader_up = false;
        self.record(EventKind::Leader { up: false });
        self.schedule(self.now_ms + self.world.failover_ms, super::Action::LeaderUp);
    }

    pub(crate) fn leader_up(&mut self) {
        self.consensus.leader_up = true;
        self.record(EventKind::Leader { up: true });
        let now = self.monotonic_now(Party::Consensus);
        let leases: Vec<LeaseId> = self.consensus.leases.iter().map(|(lease, _)| *lease).collect();
        for lease in leases {
            if let Some(state) = self.consensus.leases.get_mut(&lease) {
                state.expires_monotonic_ms = now.saturating_add(i64::try_from(state.ttl_ms).unwrap_or(i64::MAX / 4));
                self.record(EventKind::LeaseRefreshed { lease });
            }
            self.arm_lease(lease);
        }
    }
}
