//! Other services' traffic on the jobs database, as the simulator models it
//! (`engine/src/sim/db.rs`): queries arriving `background_queries_per_s`
//! times a second of the scenario's time (each gap drawn between half and one
//! and a half of the mean), `background_foreign_key_percent` of them inserts
//! into `job_events` and the rest plain reads, on the services' own pool of
//! `background_pool_size` connections. An insert's foreign-key check takes
//! `FOR KEY SHARE` on the jobs row, so it waits while an instance holds `FOR
//! UPDATE` there; a read waits for no row lock. A query waits for a free
//! connection in arrival order. A service waits as long as it takes, unless
//! the world sets `background_timeout_ms`: then the server cancels the
//! statement when it runs out (`statement_timeout` set to what is left), as a
//! client's timeout would. One the server refuses a connection is refused.
//! Every query that had to wait is recorded (`Background`), as the simulator
//! records them.
//!
//! Whether the row lock held a query up is read from the clock and from the
//! instances' own account of the row ([`RowHolds`]): an insert that took
//! longer than [`LOCK_WAIT_MS`] of the scenario's time while an instance held
//! the jobs row in a mode that blocks foreign-key checks waited for the row,
//! and a query that waited for a connection while such an insert held one
//! waited behind the lock too. The clock alone is not enough: on a busy
//! machine an insert into an idle table can take that long with no lock at
//! all, and a stall is not a lock.

use crate::ScaledClock;
use locklab_conformance::pg::{PgConnection, PgLogin, PgReply};
use locklab_engine::event::{BackgroundOutcome, BackgroundQuery, ConnectionChange, RowLockChange, RowLockMode};
use locklab_engine::ids::InstanceId;
use locklab_engine::ids::SessionId;
use locklab_engine::rng::SimRng;
use locklab_engine::scenario::World;
use locklab_engine::{Event, EventKind};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A query that took longer than this (scenario time, on top of its wait for
/// a connection) waited for a row lock: the simulator's statements take 20 ms.
const LOCK_WAIT_MS: u64 = 1_000;
/// A wait for a connection shorter than this is the threads' own scheduling,
/// not a full pool.
const CONNECTION_WAIT_NOISE_MS: u64 = 100;
const INSERT: &str = "INSERT INTO job_events (job) VALUES ('daily-report')";
const READ: &str = "SELECT count(*) FROM job_events";

/// One arrival: its number, what it does and when it came, in the scenario's ms.
#[derive(Clone, Copy, Debug)]
struct Arrival {
    query: u32,
    what: BackgroundQuery,
    arrived_ms: u64,
}

/// The running traffic; dropping it stops the arrivals (queries in flight end on their own).
#[derive(Debug)]
pub(crate) struct Background {
    stop: Arc<AtomicBool>,
    holds: Arc<RowHolds>,
}

impl Background {
    /// Where the coordinator notes who holds the jobs row, for the services to tell a lock from a stall.
    pub(crate) fn holds(&self) -> Arc<RowHolds> {
        Arc::clone(&self.holds)
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// When instances held the jobs row in a mode that blocks the services'
/// foreign-key checks (`FOR UPDATE`; `FOR NO KEY UPDATE` does not), from
/// the events of the run as the coordinator takes them: a hold starts when
/// its `FOR UPDATE` is granted and ends when it is released or its session
/// is ended.
#[derive(Debug, Default)]
pub(crate) struct RowHolds(Mutex<Vec<RowHold>>);

#[derive(Clone, Copy, Debug)]
struct RowHold {
    session: SessionId,
    from_ms: u64,
    /// `u64::MAX` while it is held.
    until_ms: u64,
}

impl RowHolds {
    /// Notes what `event` says of the jobs row's holders.
    pub(crate) fn note(&self, event: &Event) {
        let Ok(mut holds) = self.0.lock() else { return };
        let ended = |holds: &mut Vec<RowHold>, session: SessionId| {
            for hold in holds.iter_mut().filter(|hold| hold.session == session && hold.until_ms == u64::MAX) {
                hold.until_ms = event.at_ms;
            }
        };
        if let EventKind::RowLock { session, mode, change, .. } = event.kind
            && mode.is_job_lock()
        {
            match change {
                RowLockChange::Granted if mode.conflicts(RowLockMode::KeyShare) => {
                    holds.push(RowHold { session, from_ms: event.at_ms, until_ms: u64::MAX });
                }
                RowLockChange::Released => ended(&mut holds, session),
                RowLockChange::Granted | RowLockChange::Waiting | RowLockChange::GaveUp => {}
            }
        } else if let EventKind::Connection { session, change: ConnectionChange::Terminated(_), .. } = event.kind {
            ended(&mut holds, session);
        }
    }

    /// Whether an instance held the row so at some time in `from_ms..=until_ms`.
    fn held_during(&self, from_ms: u64, until_ms: u64) -> bool {
        self.0.lock().is_ok_and(|holds| holds.iter().any(|hold| hold.from_ms <= until_ms && hold.until_ms >= from_ms))
    }
}

/// What the services' connections share: the arrivals, and how many of their
/// inserts are waiting for the row now (in the scenario's time, past [`LOCK_WAIT_MS`]).
struct Shared {
    queue: Mutex<Receiver<Arrival>>,
    /// Per connection, when its insert in flight started (ms), or `u64::MAX`.
    inserts_since_ms: Vec<std::sync::atomic::AtomicU64>,
    stop: Arc<AtomicBool>,
    timeout_ms: u64,
    holds: Arc<RowHolds>,
}

impl Shared {
    /// Whether one of the services' inserts has been waiting for the row at `now_ms`.
    fn check_waits_for_row(&self, now_ms: u64) -> bool {
        self.inserts_since_ms.iter().any(|since| {
            let since = since.load(Ordering::SeqCst);
            since != u64::MAX && now_ms.saturating_sub(since) > LOCK_WAIT_MS
        })
    }
}

/// Starts other services' traffic against the server on `port`, recording to `events`.
pub(crate) fn start(
    port: u16,
    login: PgLogin,
    world: &World,
    seed: u64,
    clock: ScaledClock,
    end_ms: u64,
    events: Sender<(Option<InstanceId>, Event)>,
) -> Background {
    let stop = Arc::new(AtomicBool::new(false));
    let holds = Arc::new(RowHolds::default());
    let queries_per_s = world.background_queries_per_s;
    if queries_per_s == 0 {
        return Background { stop, holds };
    }
    let (work, queue) = channel::<Arrival>();
    let pool_size = usize::from(world.background_pool_size.max(1));
    let shared = Arc::new(Shared {
        queue: Mutex::new(queue),
        inserts_since_ms: (0..pool_size).map(|_| std::sync::atomic::AtomicU64::new(u64::MAX)).collect(),
        stop: Arc::clone(&stop),
        timeout_ms: world.background_timeout_ms,
        holds: Arc::clone(&holds),
    });
    for connection in 0..pool_size {
        let (shared, events, login) = (Arc::clone(&shared), events.clone(), login.clone());
        std::thread::spawn(move || serve(port, &login, clock, connection, &shared, &events));
    }
    let arrivals_stop = Arc::clone(&stop);
    let foreign_key_percent = world.background_foreign_key_percent;
    std::thread::spawn(move || {
        let mean_gap_ms = 1_000 / u64::from(queries_per_s.max(1));
        let mut rng = SimRng::from_seed(seed ^ 0x6261_636b);
        let mut at_ms = 0;
        let query = AtomicU32::new(0);
        while at_ms < end_ms && !arrivals_stop.load(Ordering::SeqCst) {
            let now = u64::try_from(clock.now_ms()).unwrap_or(0);
            if at_ms > now {
                std::thread::sleep(clock.real(at_ms - now));
                continue;
            }
            let what = if rng.below(100) < u64::from(foreign_key_percent) {
                BackgroundQuery::ForeignKeyInsert
            } else {
                BackgroundQuery::Read
            };
            let number = query.fetch_add(1, Ordering::SeqCst);
            if work.send(Arrival { query: number, what, arrived_ms: at_ms }).is_err() {
                return;
            }
            at_ms += rng.between(mean_gap_ms / 2, mean_gap_ms + mean_gap_ms / 2).max(1);
        }
    });
    Background { stop, holds }
}

/// One of the services' connections: takes arrivals in order, runs each.
fn serve(
    port: u16,
    login: &PgLogin,
    clock: ScaledClock,
    slot: usize,
    shared: &Shared,
    events: &Sender<(Option<InstanceId>, Event)>,
) {
    let mut connection: Option<PgConnection> = None;
    let now_ms = || u64::try_from(clock.now_ms()).unwrap_or(0);
    loop {
        let arrival = {
            let Ok(queue) = shared.queue.lock() else { return };
            match queue.recv_timeout(Duration::from_millis(50)) {
                Ok(arrival) => arrival,
                Err(_) if shared.stop.load(Ordering::SeqCst) => return,
                Err(_) => continue,
            }
        };
        let connected_ms = now_ms();
        let connection_wait_ms = match connected_ms.saturating_sub(arrival.arrived_ms) {
            waited if waited > CONNECTION_WAIT_NOISE_MS => waited,
            _ => 0,
        };
        // Waited for a connection while the row held the services' inserts?
        let mut behind_lock = connection_wait_ms > 0 && shared.check_waits_for_row(connected_ms);
        let deadline_ms = (shared.timeout_ms > 0).then(|| arrival.arrived_ms + shared.timeout_ms);
        let outcome = if deadline_ms.is_some_and(|deadline| connected_ms >= deadline) {
            BackgroundOutcome::Timeout
        } else {
            if connection.is_none() {
                connection = match PgConnection::open_as(port, login) {
                    Ok(Ok(open)) => Some(open),
                    Ok(Err(_)) | Err(_) => None,
                };
            }
            match connection.as_mut() {
                None => BackgroundOutcome::Refused,
                Some(open) => {
                    let statement = match arrival.what {
                        BackgroundQuery::ForeignKeyInsert => INSERT,
                        BackgroundQuery::Read => READ,
                    };
                    // 0 is PostgreSQL's "no timeout", as the world's 0 is.
                    let left = deadline_ms.map_or(Duration::ZERO, |deadline| {
                        clock.real(deadline - connected_ms).max(Duration::from_millis(1))
                    });
                    let sql = format!("SET statement_timeout = {}; {statement}", left.as_millis());
                    if arrival.what == BackgroundQuery::ForeignKeyInsert {
                        shared.inserts_since_ms[slot].store(connected_ms, Ordering::SeqCst);
                    }
                    open.send(&sql);
                    // Without a timeout the reply comes when the row is free,
                    // or when the run's end closes the server.
                    let patience = if left.is_zero() { Duration::from_secs(24 * 3600) } else { left };
                    let reply = open.wait(patience + Duration::from_secs(2));
                    shared.inserts_since_ms[slot].store(u64::MAX, Ordering::SeqCst);
                    let ran_ms = now_ms().saturating_sub(connected_ms);
                    let slow = ran_ms > LOCK_WAIT_MS;
                    if arrival.what == BackgroundQuery::ForeignKeyInsert
                        && slow
                        && shared.holds.held_during(connected_ms, connected_ms + ran_ms)
                    {
                        behind_lock = true;
                    }
                    match reply {
                        Ok(PgReply::Done { .. }) => BackgroundOutcome::Ok,
                        Ok(PgReply::Error { code, .. }) if code == "57014" => BackgroundOutcome::Timeout,
                        Ok(PgReply::Error { .. } | PgReply::Closed) | Err(_) => {
                            connection = None;
                            BackgroundOutcome::Timeout
                        }
                    }
                }
            }
        };
        let at_ms = now_ms();
        let latency_ms = at_ms.saturating_sub(arrival.arrived_ms);
        // As in the simulator, a query that waited for nothing leaves no event.
        if latency_ms <= LOCK_WAIT_MS && connection_wait_ms == 0 && outcome == BackgroundOutcome::Ok {
            continue;
        }
        let kind = EventKind::Background {
            query: arrival.query,
            what: arrival.what,
            latency_ms,
            connection_wait_ms,
            behind_lock,
            outcome,
        };
        if events.send((None, Event { at_ms, kind })).is_err() {
            return;
        }
    }
}
