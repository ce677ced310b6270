//! Model behaviours, checked black-box through the event log: TTLs by the
//! node's own clock, FIFO row-lock waits, release on disconnect versus host
//! loss, the unique key, fencing refusals, Redlock's validity time, asynchronous
//! replication and failover, GC pauses, and PostgreSQL's lock and idle timeouts.

use locklab_engine::event::{
    ConnectionChange, ConsensusOp, ConsensusReply, DbClient, PutOutcome, RedisReply, RowLockChange, RowLockMode,
    RowWrite, RunPhase, Sql, SqlError, SqlOutcome, TerminateReason,
};
use locklab_engine::ids::{InstanceId, Party, RunId};
use locklab_engine::{Event, EventKind, Scenario, StrategyId};

fn scenario(json: &str) -> Scenario {
    Scenario::from_json(json).unwrap_or_else(|error| panic!("test scenario is invalid: {error}\n{json}"))
}

fn log(json: &str, strategy: StrategyId) -> Vec<Event> {
    locklab_engine::simulate(&scenario(json), strategy)
}

fn first(log: &[Event], what: impl Fn(&EventKind) -> bool) -> Option<&Event> {
    log.iter().find(|event| what(&event.kind))
}

#[test]
fn redis_expires_keys_by_its_own_clock() {
    let calm = r#"{"format": "locklab/1", "duration_ms": 60000, "strategies": {"fencing": {}}}"#;
    let events = log(calm, StrategyId::Fencing);
    assert!(
        first(&events, |kind| matches!(kind, EventKind::KeyExpired { .. })).is_none(),
        "renewed leases never expire"
    );

    let jumped = r#"{"format": "locklab/1", "duration_ms": 60000, "strategies": {"fencing": {}},
        "faults": [{"at_ms": 5000, "kind": "clock_jump", "target": "redis-1", "by_ms": 40000}]}"#;
    let events = log(jumped, StrategyId::Fencing);
    let expired = first(&events, |kind| matches!(kind, EventKind::KeyExpired { node: Party::Redis(_), .. }))
        .expect("the jump expires the key");
    assert_eq!(expired.at_ms, 5000, "a 30 s key is gone the moment its node's clock jumps 40 s");
}

#[test]
fn row_lock_waiters_are_served_in_arrival_order() {
    let json = r#"{"format": "locklab/1", "duration_ms": 200000, "world": {"background_queries_per_s": 0},
        "strategies": {"db-lock": {}}}"#;
    let events = log(json, StrategyId::DbLock);
    let order = |change: RowLockChange| -> Vec<u32> {
        events
            .iter()
            .filter_map(|event| match event.kind {
                EventKind::RowLock { session, change: seen, mode: RowLockMode::Update, .. } if seen == change => {
                    Some(session.0)
                }
                _ => None,
            })
            .collect()
    };
    let waiting = order(RowLockChange::Waiting);
    let granted = order(RowLockChange::Granted);
    assert_eq!(waiting.len(), 2, "two instances queue behind the first");
    assert_eq!(granted[1..], waiting[..], "the queue is first come, first served");
}

#[test]
fn a_closed_socket_releases_the_row_lock_at_once_a_lost_host_only_after_keepalive() {
    let kill = r#"{"format": "locklab/1", "duration_ms": 300000, "world": {"background_queries_per_s": 0, "tcp_keepalive_ms": 120000},
        "strategies": {"db-lock": {}}, "faults": [{"at_ms": 30000, "kind": "oom_kill", "target": "holder"}]}"#;
    let events = log(kill, StrategyId::DbLock);
    let ended = first(&events, |kind| {
        matches!(
            kind,
            EventKind::Connection { change: ConnectionChange::Terminated(TerminateReason::ClientDisconnected), .. }
        )
    })
    .expect("the FIN ends the session");
    assert!(ended.at_ms - 30_000 <= 10, "the server learns within one network hop, got {} ms", ended.at_ms - 30_000);

    let lost = kill.replace("oom_kill", "host_loss");
    let events = log(&lost, StrategyId::DbLock);
    assert!(
        first(&events, |kind| matches!(
            kind,
            EventKind::Connection { change: ConnectionChange::Terminated(TerminateReason::ClientDisconnected), .. }
        ))
        .is_none()
    );
    let ended = first(&events, |kind| {
        matches!(
            kind,
            EventKind::Connection { change: ConnectionChange::Terminated(TerminateReason::KeepaliveTimeout), .. }
        )
    })
    .expect("keepalive ends it");
    assert_eq!(ended.at_ms, 150_000, "no FIN from a vanished host: the lock waits for TCP keepalive");
    // And then the waiter behind it gets the row: the first grant after the session ended.
    let next = events
        .iter()
        .find(|event| event.at_ms >= ended.at_ms && matches!(event.kind, EventKind::Granted { .. }))
        .expect("a waiter gets the row once keepalive ends the session");
    assert!(next.at_ms - ended.at_ms <= 10, "granted {} ms after the session ended", next.at_ms - ended.at_ms);
}

#[test]
fn the_unique_key_keeps_the_first_row() {
    let json = r#"{"format": "locklab/1", "strategies": {"unique-insert": {}}}"#;
    let events = log(json, StrategyId::UniqueInsert);
    for period in 0..3 {
        let outcomes: Vec<SqlOutcome> = events
            .iter()
            .filter_map(|event| match event.kind {
                EventKind::Sql {
                    statement: Sql::WriteReport { period: written, how: RowWrite::InsertOrNothing, .. },
                    outcome,
                    ..
                } if written.0 == period => Some(outcome),
                _ => None,
            })
            .collect();
        assert_eq!(outcomes.len(), 3, "every instance tries to insert period {period}");
        assert_eq!(outcomes.iter().filter(|outcome| **outcome == SqlOutcome::Rows(1)).count(), 1);
        assert_eq!(outcomes.iter().filter(|outcome| **outcome == SqlOutcome::Rows(0)).count(), 2);
    }
}

#[test]
fn storage_refuses_a_lower_token_and_only_when_it_checks() {
    let json = r#"{"format": "locklab/1", "duration_ms": 300000, "strategies": {"fencing": {}},
        "faults": [{"at_ms": 36500, "kind": "gc_pause", "target": "holder", "duration_ms": 100000}]}"#;
    let events = log(json, StrategyId::Fencing);
    let rejected = first(&events, |kind| matches!(kind, EventKind::Put { outcome: PutOutcome::Rejected(_), .. }))
        .expect("the paused holder's write is refused");
    if let EventKind::Put { token: Some(token), outcome: PutOutcome::Rejected(highest), .. } = rejected.kind {
        assert!(token < highest, "refused because {token} < {highest}");
    } else {
        panic!("a rejected put carries its token: {rejected:?}");
    }
    let unchecked = json
        .replace(r#""duration_ms": 300000,"#, r#""duration_ms": 300000, "world": {"storage_checks_tokens": false},"#);
    let events = log(&unchecked, StrategyId::Fencing);
    assert!(first(&events, |kind| matches!(kind, EventKind::Put { outcome: PutOutcome::Rejected(_), .. })).is_none());
}

#[test]
fn redlock_refuses_a_majority_that_took_longer_than_the_validity_time() {
    // 100 ms TTL, 3 ms drift allowance, round trips of 60–80 ms: a majority says OK,
    // but by then less than nothing of the TTL is left.
    let slow = r#"{"format": "locklab/1", "duration_ms": 60000, "world": {"instances": 1, "network_latency_ms": [30, 40]},
        "strategies": {"redlock": {"ttl_ms": 100}}}"#;
    let events = log(slow, StrategyId::Redlock);
    let oks = events
        .iter()
        .filter(|event| matches!(event.kind, EventKind::Redis { reply: RedisReply::Ok, run: RunId(0), .. }))
        .count();
    assert!(oks >= 3, "a majority of nodes granted the key ({oks})");
    assert!(first(&events, |kind| matches!(kind, EventKind::Run { phase: RunPhase::Acquired, .. })).is_none());

    let fast = slow.replace("[30, 40]", "[1, 5]").replace(r#""ttl_ms": 100"#, r#""ttl_ms": 30000"#);
    let events = log(&fast, StrategyId::Redlock);
    assert!(first(&events, |kind| matches!(kind, EventKind::Run { phase: RunPhase::Acquired, .. })).is_some());
}

#[test]
fn a_failover_keeps_what_was_replicated_and_loses_what_was_not() {
    let late = r#"{"format": "locklab/1", "duration_ms": 120000, "world": {"redis_replica": true, "replication_lag_ms": 50},
        "strategies": {"fencing": {}}, "faults": [{"at_ms": 20000, "kind": "redis_failover", "target": "redis-1"}]}"#;
    let events = log(late, StrategyId::Fencing);
    assert!(first(&events, |kind| matches!(kind, EventKind::KeysLost { .. })).is_none(), "all was replicated by 20 s");
    assert!(first(&events, |kind| matches!(kind, EventKind::RedisUp { promoted: true, .. })).is_some());

    let early = late
        .replace(r#""at_ms": 20000"#, r#""at_ms": 500"#)
        .replace(r#""replication_lag_ms": 50"#, r#""replication_lag_ms": 1000"#);
    let events = log(&early, StrategyId::Fencing);
    let lost = first(&events, |kind| matches!(kind, EventKind::KeysLost { node: Party::RedisReplica, .. }));
    assert!(lost.is_some(), "the lock and the counter had not reached the replica");
}

#[test]
fn a_paused_process_does_nothing_until_it_resumes() {
    let json = r#"{"format": "locklab/1", "duration_ms": 200000, "world": {"instances": 1}, "strategies": {"fencing": {}},
        "faults": [{"at_ms": 20000, "kind": "gc_pause", "target": "a", "duration_ms": 50000}]}"#;
    let events = log(json, StrategyId::Fencing);
    let acted = |event: &&Event| {
        matches!(
            event.kind,
            EventKind::Sent { from: Party::Instance(InstanceId(0)), .. }
                | EventKind::Run { instance: InstanceId(0), .. }
        )
    };
    let during: Vec<&Event> =
        events.iter().filter(|event| event.at_ms > 20_000 && event.at_ms < 70_000).filter(acted).collect();
    assert!(during.is_empty(), "nothing runs during a stop-the-world pause: {during:?}");
    assert!(
        events.iter().filter(|event| event.at_ms == 70_000).any(|event| acted(&event)),
        "overdue work runs at resume"
    );
}

#[test]
fn nowait_and_skip_locked_do_not_queue() {
    for (wait, expected) in
        [("nowait", SqlOutcome::Error(SqlError::LockNotAvailable)), ("skip_locked", SqlOutcome::Rows(0))]
    {
        let json = format!(
            r#"{{"format": "locklab/1", "duration_ms": 60000, "world": {{"background_queries_per_s": 0}},
            "strategies": {{"db-lock": {{"wait": "{wait}"}}}}}}"#
        );
        let events = log(&json, StrategyId::DbLock);
        assert!(first(&events, |kind| matches!(kind, EventKind::Sql { statement: Sql::LockJobRow { .. }, outcome, .. } if *outcome == expected)).is_some(), "{wait}");
        assert!(
            first(&events, |kind| matches!(kind, EventKind::RowLock { change: RowLockChange::Waiting, .. })).is_none(),
            "{wait}"
        );
    }
}

#[test]
fn lock_timeout_and_idle_in_transaction_timeout_end_the_wait_and_the_session() {
    let json = r#"{"format": "locklab/1", "duration_ms": 120000, "world": {"background_queries_per_s": 0},
        "strategies": {"db-lock": {"lock_timeout_ms": 5000}}}"#;
    let events = log(json, StrategyId::DbLock);
    let timed_out =
        first(&events, |kind| matches!(kind, EventKind::Sql { outcome: SqlOutcome::Error(SqlError::LockTimeout), .. }))
            .expect("a waiter gives up after lock_timeout");
    if let EventKind::Sql { waited_ms, .. } = timed_out.kind {
        assert_eq!(waited_ms, 5000);
    }

    let idle = r#"{"format": "locklab/1", "duration_ms": 300000, "world": {"background_queries_per_s": 0},
        "strategies": {"db-lock": {"idle_in_transaction_timeout_ms": 30000}}}"#;
    let events = log(idle, StrategyId::DbLock);
    assert!(
        first(&events, |kind| matches!(
            kind,
            EventKind::Connection {
                change: ConnectionChange::Terminated(TerminateReason::IdleInTransactionTimeout),
                client: DbClient::Instance(_),
                ..
            }
        ))
        .is_some()
    );
    let aborted = first(&events, |kind| matches!(kind, EventKind::Run { phase: RunPhase::Aborted(_), .. }));
    assert!(aborted.is_some(), "the holder learns at its next statement that its session is gone");
}

#[test]
fn consensus_revisions_never_go_back_across_a_leader_loss() {
    let json = r#"{"format": "locklab/1", "strategies": {"consensus": {}},
        "faults": [{"at_ms": 50000, "kind": "consensus_leader_loss"}, {"at_ms": 320000, "kind": "consensus_leader_loss"}]}"#;
    let events = log(json, StrategyId::Consensus);
    let tokens: Vec<u64> = events
        .iter()
        .filter_map(|event| match event.kind {
            EventKind::Granted { token: Some(token), .. } => Some(token.0),
            _ => None,
        })
        .collect();
    assert!(tokens.len() >= 3);
    assert!(tokens.windows(2).all(|pair| pair[0] < pair[1]), "revisions only rise: {tokens:?}");
    assert!(first(&events, |kind| matches!(kind, EventKind::Leader { up: true })).is_some());
}

/// etcd's lessor measures a lease on Go's monotonic clock (`lease/lessor.go`:
/// `expired()` is `time.Until(expiry) <= 0`), so a step of the store's wall
/// clock ends no lease; a Redis node expires its key by its wall clock, so
/// the same step there ends the lock at once.
#[test]
fn a_step_of_the_consensus_stores_clock_ends_no_lease_a_redis_nodes_does() {
    let json = |strategy: &str, target: &str| {
        format!(
            r#"{{"format": "locklab/1", "duration_ms": 120000, "strategies": {{"{strategy}": {{}}}},
            "faults": [{{"at_ms": 5000, "kind": "clock_jump", "target": "{target}", "by_ms": 60000}}]}}"#
        )
    };
    let events = log(&json("consensus", "consensus"), StrategyId::Consensus);
    let stepped = first(&events, |kind| matches!(kind, EventKind::Clock { party: Party::Consensus, .. }))
        .expect("the store's clock is stepped");
    assert_eq!(stepped.at_ms, 5_000);
    let before_step = || events.iter().take_while(|event| event.at_ms <= 5_000);
    let holder = before_step()
        .filter_map(|event| if let EventKind::Granted { run, .. } = event.kind { Some(run) } else { None })
        .last()
        .expect("a run is granted the lease before the clock steps");
    assert!(
        !before_step().any(|event| matches!(event.kind, EventKind::Revoked { run, .. } if run == holder)),
        "and still holds it when the clock steps"
    );
    assert!(first(&events, |kind| matches!(kind, EventKind::LeaseExpired { .. })).is_none(), "no lease expires");
    let kept_alive = events.iter().any(|event| {
        event.at_ms > 5_000
            && matches!(event.kind, EventKind::Consensus { run, op: ConsensusOp::KeepAlive { .. }, reply: ConsensusReply::Alive { .. }, .. } if run == holder)
    });
    assert!(kept_alive, "the holder's keep-alives after the step find its lease");

    let events = log(&json("fencing", "redis-1"), StrategyId::Fencing);
    let expired = first(&events, |kind| matches!(kind, EventKind::KeyExpired { node: Party::Redis(_), .. }))
        .expect("the step expires the key");
    assert_eq!(expired.at_ms, 5_000, "a 30 s key is gone the moment its node's clock steps 60 s");
}

/// Kleppmann 2016 on Redlock without persistence: a node that restarts empty
/// can give a second client its majority. antirez's answer, delayed restarts,
/// keeps the node out for one TTL, and then the second majority never forms.
#[test]
fn a_delayed_restart_keeps_a_forgetful_redlock_node_from_making_a_second_majority() {
    let world = |delayed: bool| {
        format!(
            r#"{{"format": "locklab/2", "seed": 2, "duration_ms": 120000, "world": {{"instances": 2}},
            "strategies": {{"redlock": {{"delayed_restart": {delayed}}}}},
            "faults": [
              {{"at_ms": 0, "kind": "partition", "between": ["a", "redis-4"], "duration_ms": 120000}},
              {{"at_ms": 0, "kind": "partition", "between": ["a", "redis-5"], "duration_ms": 120000}},
              {{"at_ms": 0, "kind": "partition", "between": ["b", "redis-1"], "duration_ms": 120000}},
              {{"at_ms": 0, "kind": "partition", "between": ["b", "redis-2"], "duration_ms": 120000}},
              {{"at_ms": 5000, "kind": "redis_restart", "target": "redis-3", "down_ms": 1000}}]}}"#
        )
    };
    let granted_to = |events: &[Event]| -> Vec<InstanceId> {
        events
            .iter()
            .filter_map(|event| match event.kind {
                EventKind::Granted { instance, .. } => Some(instance),
                _ => None,
            })
            .collect()
    };
    let forgetful = log(&world(false), StrategyId::Redlock);
    let report = locklab_engine::report::analyze(&scenario(&world(false)), StrategyId::Redlock, &forgetful);
    assert!(report.metrics.overlap_ms > 0, "without a delayed restart, b takes a majority while a holds");
    assert!(granted_to(&forgetful).len() >= 2);
    let delayed = log(&world(true), StrategyId::Redlock);
    let report = locklab_engine::report::analyze(&scenario(&world(true)), StrategyId::Redlock, &delayed);
    assert_eq!(report.metrics.overlap_ms, 0, "redis-3 stays out for one TTL: no second majority while a holds");
    let back = first(&delayed, |kind| matches!(kind, EventKind::RedisUp { node: Party::Redis(_), .. }))
        .expect("redis-3 comes back");
    assert_eq!(back.at_ms, 5000 + 1000 + 30_000, "down for its restart plus one TTL");
}

/// A partition between the holder and the database that outlasts TCP
/// keepalive ends the holder's session, as a lost host does; a shorter one
/// leaves it alone, and the holder goes on when the link comes back.
#[test]
fn a_partition_from_the_database_that_outlasts_keepalive_ends_the_session() {
    let cut = |duration_ms: u64| {
        format!(
            r#"{{"format": "locklab/2", "duration_ms": 300000, "world": {{"background_queries_per_s": 0, "tcp_keepalive_ms": 60000}},
            "strategies": {{"db-lock": {{}}}}, "faults": [{{"at_ms": 30000, "kind": "partition", "between": ["holder", "db"], "duration_ms": {duration_ms}}}]}}"#
        )
    };
    let keepalive_ended = |events: &[Event]| {
        first(events, |kind| {
            matches!(
                kind,
                EventKind::Connection { change: ConnectionChange::Terminated(TerminateReason::KeepaliveTimeout), .. }
            )
        })
        .map(|event| event.at_ms)
    };
    let long = log(&cut(120_000), StrategyId::DbLock);
    assert_eq!(keepalive_ended(&long), Some(90_000), "keepalive gives up 60 s into the partition");
    let short = log(&cut(20_000), StrategyId::DbLock);
    assert_eq!(keepalive_ended(&short), None, "a partition shorter than keepalive ends no session");
}
