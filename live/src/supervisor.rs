//! Nothing a live run starts outlives the process that started it, however
//! that process ends: a run's guards stop its servers and instances when it
//! ends, fails or is interrupted, and for the one end no guard sees —
//! `kill -9` of the coordinator, or its crash — a supervisor does.
//!
//! The supervisor is a small process of its own (`locklab
//! live-supervisor ROOT`), started once per coordinator process before its
//! first server. It leads a process group that every server, `initdb`, the
//! clock shim's compiler and every instance joins (children such as
//! PostgreSQL's backends join it by being born in it), and the servers'
//! directories are made under one folder, ROOT. It reads its standard
//! input, a pipe from the coordinator, and when that pipe closes — the
//! kernel closes it when the coordinator exits, whichever way — it stops
//! every process left in the group (PostgreSQL first by its immediate
//! shutdown, which also frees its shared memory), undoes what a run made on
//! servers of the user's that was not undone yet, removes ROOT, and exits.
//!
//! Why a supervisor, and not `PR_SET_PDEATHSIG`: a parent-death signal is
//! delivered when the *thread* that started a child ends, not the process;
//! it is cleared when a child changes its user (PostgreSQL runs as
//! `postgres` when live mode runs as root); it reaches only direct children
//! (not PostgreSQL's backends, or what `initdb` starts); and no signal can
//! remove a folder. A process group alone has no one left to signal it
//! once the coordinator is gone. Being out of the terminal's foreground
//! group also keeps a Ctrl-C at the terminal from reaching `initdb` or an
//! instance: only the coordinator hears it, and stops them in order.

use locklab_clients::{EtcdClient, EtcdEndpoint, PostgresEndpoint, PostgresSession, RedisClient, RedisEndpoint};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::net::SocketAddr;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitCode, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// What the supervisor undoes on a server of the user's if the run that
/// made it could not: the run's Redis keys, its PostgreSQL schema, its etcd key.
/// Each names the server by its URL, with the credentials to log in, and the
/// address it was reached at (the URL's host resolved when the run began).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Undo {
    RedisKeys { url: UrlWithPassword, address: SocketAddr, keys: Vec<String> },
    PostgresSchema { url: UrlWithPassword, address: SocketAddr, schema: String },
    EtcdKey { url: UrlWithPassword, address: SocketAddr, key: String },
}

/// A server's URL with its password, which goes to the supervisor on its
/// standard input (a pipe only the two processes hold) and is only ever
/// shown with the password as `***`.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub(crate) struct UrlWithPassword(pub(crate) String);

impl std::fmt::Debug for UrlWithPassword {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&locklab_clients::endpoint::redacted(&self.0))
    }
}

/// A line on the supervisor's input.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Order {
    /// Undo this if the coordinator dies before it says `Done` with the same number.
    Undo {
        number: u64,
        undo: Undo,
    },
    Done {
        number: u64,
    },
}

/// The running supervisor, as the coordinator's process holds it.
#[derive(Debug)]
pub(crate) struct Supervision {
    /// The process group every process of a run joins: the supervisor's pid.
    pub(crate) group: u32,
    orders: Mutex<(ChildStdin, u64)>,
    /// Kept so the supervisor is never reaped as a zombie while it runs.
    _child: Child,
}

static SUPERVISION: OnceLock<Result<Supervision, String>> = OnceLock::new();

/// The room in memory a run's servers want before they are made there.
const MEMORY_ROOM_BYTES: u64 = 2 << 30;

/// The folder the servers of the live runs of process `pid` are made in:
/// in memory (`/dev/shm`, a tmpfs) where the system has one with room, else
/// the temporary folder. etcd syncs its log to disk on every write, and on
/// a disk busy with other work (a build's writeback) one sync took 0.8 s:
/// at ×15, 12 s of the scenario, a wait no watchdog sees (it is the
/// server's), which moved a lease grant past a pause aimed at the job. In
/// memory a sync costs nothing. (PostgreSQL runs with `fsync=off`, Redis
/// keeps nothing on disk.)
pub fn servers_root(pid: u32) -> PathBuf {
    let memory = Path::new("/dev/shm");
    let roomy = nix::sys::statvfs::statvfs(memory)
        .is_ok_and(|stats| stats.blocks_available().saturating_mul(stats.fragment_size()) >= MEMORY_ROOM_BYTES);
    let base = if roomy { memory.to_path_buf() } else { std::env::temp_dir() };
    base.join(format!("locklab-live-{pid}"))
}

/// The supervisor of this process's live runs, started on first use with
/// `program` (`locklab`); servers started from now on are placed under it.
pub(crate) fn ensure(program: &Path) -> Result<&'static Supervision, String> {
    let supervision = SUPERVISION.get_or_init(|| {
        let root = servers_root(std::process::id());
        std::fs::create_dir_all(&root).map_err(|error| format!("cannot make {}: {error}", root.display()))?;
        let mut child = Command::new(program)
            .arg("live-supervisor")
            .arg(&root)
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|error| format!("cannot start live mode's supervisor ({}): {error}", program.display()))?;
        let stdin = child.stdin.take().ok_or("the supervisor has no input")?;
        let group = child.id();
        locklab_servers::server::place_servers(group, root.clone());
        Ok(Supervision { group, orders: Mutex::new((stdin, 0)), _child: child })
    });
    supervision.as_ref().map_err(Clone::clone)
}

impl Supervision {
    /// Asks the supervisor to undo `undo` should this process die first;
    /// the number to give [`Supervision::done`] once it is undone.
    pub(crate) fn undo_later(&self, undo: Undo) -> u64 {
        let Ok(mut orders) = self.orders.lock() else { return 0 };
        orders.1 += 1;
        let number = orders.1;
        let line = serde_json::to_string(&Order::Undo { number, undo }).unwrap_or_default();
        let _ = writeln!(orders.0, "{line}");
        number
    }

    /// What `undo_later` gave `number` for is undone: the supervisor forgets it.
    pub(crate) fn done(&self, number: u64) {
        let Ok(mut orders) = self.orders.lock() else { return };
        let line = serde_json::to_string(&Order::Done { number }).unwrap_or_default();
        let _ = writeln!(orders.0, "{line}");
    }
}

/// How long PostgreSQL gets to shut down on its own before it is killed.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);
/// How long the supervisor keeps at a group that does not empty.
const GIVE_UP_AFTER: Duration = Duration::from_secs(20);

/// The supervisor's process (`locklab live-supervisor ROOT`): waits for its
/// input to close, then leaves nothing of the coordinator's runs behind.
pub fn main(root: &Path) -> ExitCode {
    crate::keep_in_memory();
    let mut pending: Vec<(u64, Undo)> = Vec::new();
    for line in std::io::stdin().lock().lines().map_while(Result::ok) {
        match serde_json::from_str::<Order>(&line) {
            Ok(Order::Undo { number, undo }) => pending.push((number, undo)),
            Ok(Order::Done { number }) => pending.retain(|(pending_number, _)| *pending_number != number),
            Err(error) => eprintln!("locklab live-supervisor: a line it cannot read ({error}): {line}"),
        }
    }
    // The coordinator is gone.
    stop_group(std::process::id());
    for (_, undo) in pending {
        undo_now(&undo);
    }
    let _ = std::fs::remove_dir_all(root);
    ExitCode::SUCCESS
}

/// A process in the group: its pid, and whether it is a PostgreSQL process.
fn members(group: u32) -> Vec<(u32, bool)> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    let me = std::process::id();
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != me)
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // `pid (comm) state ppid pgrp …`; the name may hold spaces and parentheses.
            let (head, tail) = stat.rsplit_once(')')?;
            let name = head.split_once('(')?.1;
            let mut fields = tail.split_whitespace();
            let state = fields.next()?;
            let process_group: u32 = fields.nth(1)?.parse().ok()?;
            // A zombie has ended; its parent (init, by now) reaps it.
            (process_group == group && state != "Z").then_some((pid, name == "postgres"))
        })
        .collect()
}

fn signal(signal: &str, pids: &[u32]) {
    if pids.is_empty() {
        return;
    }
    let _ = Command::new("kill")
        .arg(signal)
        .args(pids.iter().map(u32::to_string))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// Stops every process of the group: PostgreSQL by its immediate shutdown
/// (SIGQUIT: the postmaster ends its backends and frees its shared memory),
/// then whatever is left by SIGKILL, woken first if it was stopped.
fn stop_group(group: u32) {
    let postgres: Vec<u32> = members(group).into_iter().filter(|(_, postgres)| *postgres).map(|(pid, _)| pid).collect();
    signal("-QUIT", &postgres);
    let asked = Instant::now();
    while members(group).iter().any(|(_, postgres)| *postgres) && asked.elapsed() < SHUTDOWN_GRACE {
        // Waiting for the condition: PostgreSQL has shut down.
        std::thread::sleep(Duration::from_millis(10));
    }
    loop {
        let left: Vec<u32> = members(group).into_iter().map(|(pid, _)| pid).collect();
        if left.is_empty() || asked.elapsed() > GIVE_UP_AFTER {
            return;
        }
        signal("-CONT", &left);
        signal("-KILL", &left);
        // Waiting for the condition: the killed processes are gone.
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// How long undoing one thing may take: a server that does not answer by
/// then keeps what the run made, and the run's end is not held up.
const UNDO_LIMIT: Duration = Duration::from_secs(2);

/// Undoes what a run made on a server of the user's, with short timeouts:
/// a server that is gone keeps nothing to undo.
pub(crate) fn undo_now(undo: &Undo) {
    match undo {
        Undo::RedisKeys { url, address, keys } => {
            let client =
                RedisEndpoint::parse(&url.0).ok().and_then(|endpoint| RedisClient::new(endpoint.via(*address)).ok());
            if let Some(mut client) = client {
                let mut command = vec!["DEL"];
                command.extend(keys.iter().map(String::as_str));
                let _ = client.call(&command, UNDO_LIMIT);
            }
        }
        Undo::PostgresSchema { url, address, schema } => {
            let settings = locklab_clients::SessionSettings {
                application_name: Some(crate::servers::APPLICATION_NAME.to_owned()),
                ..locklab_clients::SessionSettings::default()
            };
            let endpoint = PostgresEndpoint::parse(&url.0).ok().map(|endpoint| endpoint.via(*address));
            if let Some(Ok(mut session)) =
                endpoint.map(|endpoint| PostgresSession::connect(&endpoint, &settings, UNDO_LIMIT))
            {
                let _ = session.batch(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"), UNDO_LIMIT);
            }
        }
        Undo::EtcdKey { url, address, key } => {
            let endpoint = EtcdEndpoint::parse(&url.0).ok().map(|endpoint| endpoint.via(*address));
            let connected =
                endpoint.map(|endpoint| EtcdClient::connect(&endpoint, locklab_engine::ids::LeaseId(0), UNDO_LIMIT));
            if let Some(Ok(mut client)) = connected {
                let _ = client.delete_key(key, UNDO_LIMIT);
            }
        }
    }
}
