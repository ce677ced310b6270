//! Other services' traffic on the jobs database, as the simulator models it
//! (`engine/src/sim/db.rs`): inserts into `job_events` arriving
//! `background_queries_per_s` times a second of the scenario's time (each gap
//! drawn between half and one and a half of the mean), on the services' own
//! pool of ten connections. Each insert's foreign-key check takes `FOR KEY
//! SHARE` on the jobs row, so it waits while an instance holds `FOR UPDATE`
//! there; a service gives up five seconds (scaled) after the query arrived:
//! the server cancels the statement (`statement_timeout` set to what is left),
//! as a client's timeout would. A query that finds no free connection and no
//! room for another waits for one; one the server refuses a connection is
//! refused. Every query's end is recorded (`Background`).

use crate::ScaledClock;
use locklab_conformance::pg::{PgConnection, PgLogin, PgReply};
use locklab_engine::event::BackgroundOutcome;
use locklab_engine::ids::InstanceId;
use locklab_engine::rng::SimRng;
use locklab_engine::{Event, EventKind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long the other services wait before giving up on a query (the simulator's).
pub(crate) const BACKGROUND_TIMEOUT_MS: u64 = 5_000;
/// The other services' own connection pool (the simulator's).
const BACKGROUND_POOL_SIZE: usize = 10;
const INSERT: &str = "INSERT INTO job_events (job) VALUES ('daily-report')";

/// One arrival: its number and when it came, in the scenario's ms.
#[derive(Clone, Copy, Debug)]
struct Arrival {
    query: u32,
    arrived_ms: u64,
}

/// The running traffic; dropping it stops the arrivals (queries in flight end on their own).
#[derive(Debug)]
pub(crate) struct Background {
    stop: Arc<AtomicBool>,
}

impl Drop for Background {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// Starts other services' traffic against the server on `port`, recording to `events`.
pub(crate) fn start(
    port: u16,
    login: PgLogin,
    queries_per_s: u32,
    seed: u64,
    clock: ScaledClock,
    end_ms: u64,
    events: Sender<(Option<InstanceId>, Event)>,
) -> Background {
    let stop = Arc::new(AtomicBool::new(false));
    if queries_per_s == 0 {
        return Background { stop };
    }
    let (work, queue) = channel::<Arrival>();
    let queue = Arc::new(Mutex::new(queue));
    for _ in 0..BACKGROUND_POOL_SIZE {
        let (queue, events, stop, login) = (Arc::clone(&queue), events.clone(), Arc::clone(&stop), login.clone());
        std::thread::spawn(move || serve(port, &login, clock, &queue, &events, &stop));
    }
    let arrivals_stop = Arc::clone(&stop);
    std::thread::spawn(move || {
        let mean_gap_ms = 1_000 / u64::from(queries_per_s.max(1));
        let mut rng = SimRng::from_seed(seed ^ 0x6261_636b);
        let mut at_ms = 0;
        let mut query = 0;
        while at_ms < end_ms && !arrivals_stop.load(Ordering::SeqCst) {
            let now = u64::try_from(clock.now_ms()).unwrap_or(0);
            if at_ms > now {
                std::thread::sleep(clock.real(at_ms - now));
                continue;
            }
            if work.send(Arrival { query, arrived_ms: at_ms }).is_err() {
                return;
            }
            query += 1;
            at_ms += rng.between(mean_gap_ms / 2, mean_gap_ms + mean_gap_ms / 2).max(1);
        }
    });
    Background { stop }
}

/// One of the services' connections: takes arrivals in order, runs each.
fn serve(
    port: u16,
    login: &PgLogin,
    clock: ScaledClock,
    queue: &Mutex<Receiver<Arrival>>,
    events: &Sender<(Option<InstanceId>, Event)>,
    stop: &AtomicBool,
) {
    let mut connection: Option<PgConnection> = None;
    loop {
        let arrival = {
            let Ok(queue) = queue.lock() else { return };
            match queue.recv_timeout(Duration::from_millis(50)) {
                Ok(arrival) => arrival,
                Err(_) if stop.load(Ordering::SeqCst) => return,
                Err(_) => continue,
            }
        };
        let deadline_ms = arrival.arrived_ms + BACKGROUND_TIMEOUT_MS;
        let now = u64::try_from(clock.now_ms()).unwrap_or(0);
        let outcome = if now >= deadline_ms {
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
                    let left = clock.real(deadline_ms - now).max(Duration::from_millis(1));
                    let sql = format!("SET statement_timeout = {}; {INSERT}", left.as_millis().max(1));
                    open.send(&sql);
                    match open.wait(left + Duration::from_secs(2)) {
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
        let at_ms = u64::try_from(clock.now_ms()).unwrap_or(0);
        let latency_ms = at_ms.saturating_sub(arrival.arrived_ms);
        let kind = EventKind::Background { query: arrival.query, latency_ms, outcome };
        if events.send((None, Event { at_ms, kind })).is_err() {
            return;
        }
    }
}
