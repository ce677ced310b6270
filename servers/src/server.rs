//! Throwaway servers on loopback ports, started by the suite and stopped by
//! it: a server is a child process owned by a guard whose `Drop` kills it, so
//! none is left behind when a check fails or panics. The system's own
//! services are never touched.

use crate::resp::Connection;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a server may take to answer after it is started. A start is
/// before a run's time 0, so a slow one costs only wall time; a busy
/// machine starting eight runs' servers at once kept a PostgreSQL from
/// answering for over 10 s, which failed its case (docs/live.md). A server
/// that cannot start says so sooner: its process exits.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// Where servers go when a supervisor watches them (live mode's, see
/// `live/src/supervisor.rs`): the process group each joins and the folder
/// their directories are made in. Unset, each goes in the caller's group
/// and the system's temporary folder.
static PLACEMENT: std::sync::OnceLock<(u32, PathBuf)> = std::sync::OnceLock::new();

/// Places every server started from now on (and what starts it: `initdb`,
/// the clock shim's compiler) in process group `group`, its directory under
/// `root`. The first placement holds for the process.
pub fn place_servers(group: u32, root: PathBuf) {
    let _ = PLACEMENT.set((group, root));
}

/// A command for a server's program, in the placement's process group.
fn placed(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut command = Command::new(program);
    if let Some((group, _)) = PLACEMENT.get() {
        use std::os::unix::process::CommandExt as _;
        command.process_group(i32::try_from(*group).unwrap_or(0));
    }
    command
}

/// The folder a server's directory is made in.
fn server_folder() -> PathBuf {
    PLACEMENT.get().map_or_else(std::env::temp_dir, |(_, root)| root.clone())
}

/// Waits until a server just started as `child` answers (`answers`), and
/// says why not if its process exits first (with `log`, what it wrote) or
/// it does not answer within [`START_TIMEOUT`].
fn wait_until_answering(
    child: &mut Child,
    what: &str,
    mut answers: impl FnMut() -> bool,
    log: impl Fn() -> String,
) -> Result<(), String> {
    let started = Instant::now();
    loop {
        if answers() {
            return Ok(());
        }
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("{what} exited at start ({status}){}", log()));
        }
        if started.elapsed() > START_TIMEOUT {
            return Err(format!("{what} did not answer within {START_TIMEOUT:?}"));
        }
        // Polling for the condition: the server answers.
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// How many times a server is started on fresh ports when a port it was
/// given was taken in the meantime.
const PORT_ATTEMPTS: u32 = 3;

/// Starts a server with `start`, again on fresh ports when a port found free
/// was taken before the server could bind it (another process got there
/// first, between [`free_port`] and the bind); any other failure, or the
/// last attempt's, is returned as it is.
fn on_fresh_ports<T>(mut start: impl FnMut() -> Result<T, String>) -> Result<T, String> {
    let mut attempt = 1;
    loop {
        match start() {
            Err(error) if attempt < PORT_ATTEMPTS && error.to_ascii_lowercase().contains("address already in use") => {
                attempt += 1;
            }
            started => return started,
        }
    }
}

/// How long a replica may take to connect to its primary and catch up.
const SYNC_TIMEOUT: Duration = Duration::from_secs(10);

/// A free loopback port: the system's choice for a listener, released.
fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|error| format!("no free loopback port: {error}"))?;
    listener.local_addr().map(|address| address.port()).map_err(|error| error.to_string())
}

/// Compiles the clock shim (`conformance/clock-shim.c`) into `dir`; the
/// library's path. The source stays beside the suite, which documents it
/// (`docs/conformance.md` names it there); the workspace holds both crates.
fn build_clock_shim(dir: &std::path::Path) -> Result<PathBuf, String> {
    let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/clock-shim.c");
    let library = dir.join("clock-shim.so");
    let status = placed("cc")
        .args(["-shared", "-fPIC", "-O2", "-o"])
        .arg(&library)
        .arg(&source)
        .status()
        .map_err(|error| format!("cannot run cc to build the clock shim: {error}"))?;
    if status.success() { Ok(library) } else { Err(format!("cc could not build {} ({status})", source.display())) }
}

/// A `redis-server` with no persistence, on its own port and directory, whose
/// wall clock the suite can step (`clock-shim.c`, preloaded).
#[derive(Debug)]
pub struct RedisServer {
    child: Option<Child>,
    pub port: u16,
    dir: PathBuf,
    /// The clock's offset in ms, kept in a file the shim reads.
    offset_ms: i64,
    /// Its drift in ppm, and since when it counts (unix ms).
    drift_ppm: i64,
    drift_anchor_unix_ms: i64,
}

impl RedisServer {
    /// The server's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Starts one and waits until it answers `PING`.
    pub fn start() -> Result<RedisServer, String> {
        on_fresh_ports(RedisServer::start_once)
    }

    fn start_once() -> Result<RedisServer, String> {
        let port = free_port()?;
        let dir = server_folder().join(format!("locklab-redis-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|error| format!("cannot make {}: {error}", dir.display()))?;
        let mut server = RedisServer { child: None, port, dir, offset_ms: 0, drift_ppm: 0, drift_anchor_unix_ms: 0 };
        server.build_shim()?;
        server.set_offset(0)?;
        server.spawn()?;
        Ok(server)
    }

    /// Compiles the clock shim into the server's directory; servers that
    /// are placed share one compiled copy (a compiler run is most of a
    /// Redis node's start, and Redlock starts five).
    fn build_shim(&self) -> Result<(), String> {
        let Some((_, root)) = PLACEMENT.get() else { return build_clock_shim(&self.dir).map(|_| ()) };
        static SHIM: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
        let built = SHIM.get_or_init(|| build_clock_shim(root)).clone()?;
        std::fs::copy(&built, self.dir.join("clock-shim.so"))
            .map(|_| ())
            .map_err(|error| format!("cannot copy the clock shim: {error}"))
    }

    fn set_offset(&mut self, offset_ms: i64) -> Result<(), String> {
        self.offset_ms = offset_ms;
        self.write_clock()
    }

    /// Writes the clock's change where the shim reads it.
    fn write_clock(&self) -> Result<(), String> {
        let text = format!("{} {} {}", self.offset_ms, self.drift_ppm, self.drift_anchor_unix_ms);
        std::fs::write(self.dir.join("clock-offset"), text)
            .map_err(|error| format!("cannot change the server's clock: {error}"))
    }

    /// From now on the server's wall clock runs `ppm` parts per million
    /// fast (or slow), as a `clock_drift` fault makes a node's; the drift
    /// so far is kept as an offset.
    pub fn set_drift(&mut self, ppm: i64) -> Result<(), String> {
        let now_ms = i64::try_from(
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |since| since.as_millis()),
        )
        .unwrap_or(i64::MAX / 2);
        if self.drift_ppm != 0 {
            self.offset_ms += (now_ms - self.drift_anchor_unix_ms) * self.drift_ppm / 1_000_000;
        }
        self.drift_ppm = ppm;
        self.drift_anchor_unix_ms = now_ms;
        self.write_clock()
    }

    /// Steps the server's wall clock by `by_ms` (forward if positive), as a
    /// `clock_jump` fault steps a node's.
    pub fn step_clock(&mut self, by_ms: i64) -> Result<(), String> {
        self.set_offset(self.offset_ms + by_ms)
    }

    /// Puts the server's clock back to the machine's.
    pub fn reset_clock(&mut self) -> Result<(), String> {
        self.drift_ppm = 0;
        self.set_offset(0)
    }

    fn spawn(&mut self) -> Result<(), String> {
        let child = placed("redis-server")
            .env("LD_PRELOAD", self.dir.join("clock-shim.so"))
            .env("LOCKLAB_CLOCK_OFFSET_FILE", self.dir.join("clock-offset"))
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--daemonize", "no", "--logfile"])
            .arg(self.dir.join("redis.log"))
            .arg("--dir")
            .arg(&self.dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|error| {
                format!("cannot start redis-server ({error}); scripts/setup.sh installs it from Debian's packages")
            })?;
        let port = self.port;
        let child = self.child.insert(child);
        let answers = || {
            Connection::open(port)
                .is_ok_and(|mut connection| connection.call(&["PING"]).is_ok_and(|reply| reply == "PONG"))
        };
        let log_path = self.dir.join("redis.log");
        let log = || format!(": {}", std::fs::read_to_string(&log_path).unwrap_or_default().trim());
        wait_until_answering(child, &format!("redis-server on port {port}"), answers, log)
    }

    pub fn connect(&self) -> Result<Connection, String> {
        Connection::open(self.port).map_err(|error| format!("cannot connect to redis-server: {error}"))
    }

    /// Stops the server as a crash would (`SHUTDOWN NOSAVE`: nothing is
    /// written) and starts it again on the same port.
    pub fn restart(&mut self) -> Result<(), String> {
        self.shut_down()?;
        self.start_again()
    }

    /// Stops the server as a crash would (`SHUTDOWN NOSAVE`: nothing is written).
    pub fn shut_down(&mut self) -> Result<(), String> {
        let mut connection = self.connect()?;
        // The server closes the connection instead of answering.
        let _ = connection.call(&["SHUTDOWN", "NOSAVE"]);
        if let Some(mut child) = self.child.take() {
            child.wait().map_err(|error| format!("redis-server did not stop: {error}"))?;
        }
        Ok(())
    }

    /// Kills the server as the OOM killer or a lost machine would
    /// (SIGKILL): it writes nothing, and a replica gets nothing more from it.
    /// `SHUTDOWN` is not the same: it first waits for lagging replicas.
    pub fn kill(&mut self) -> Result<(), String> {
        if let Some(mut child) = self.child.take() {
            child.kill().map_err(|error| format!("cannot kill redis-server: {error}"))?;
            child.wait().map_err(|error| format!("redis-server did not stop: {error}"))?;
        }
        Ok(())
    }

    /// Starts a server that was shut down again, on the same port, empty.
    pub fn start_again(&mut self) -> Result<(), String> {
        self.spawn()
    }

    /// Polls the server with `args` until the reply satisfies `done`, for at
    /// most [`SYNC_TIMEOUT`]: the way to wait for replication without sleeping blind.
    pub fn wait_for(&self, args: &[&str], done: impl Fn(&str) -> bool, what: &str) -> Result<(), String> {
        let mut connection = self.connect()?;
        let started = Instant::now();
        while started.elapsed() < SYNC_TIMEOUT {
            if done(&connection.call(args)?) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Err(format!("{what} did not happen within {SYNC_TIMEOUT:?}"))
    }

    /// The server's version, from `INFO server`.
    pub fn version(&self) -> String {
        let reply = self.connect().and_then(|mut connection| connection.call(&["INFO", "server"]));
        reply
            .ok()
            .and_then(|info| {
                info.split(['\r', '\n']).find_map(|line| line.strip_prefix("redis_version:").map(str::to_owned))
            })
            .unwrap_or_else(|| "unknown".to_owned())
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Where Debian's PostgreSQL 15 keeps its server programs.
const POSTGRES_BIN: &str = "/usr/lib/postgresql/15/bin";

/// The account a PostgreSQL server runs as: the suite's own when it is not
/// root; `postgres` (made if missing) when it is, since PostgreSQL refuses root.
struct Account {
    ids: Option<(u32, u32)>,
}

impl Account {
    fn find() -> Result<Account, String> {
        let status =
            std::fs::read_to_string("/proc/self/status").map_err(|error| format!("/proc/self/status: {error}"))?;
        let effective_uid = status
            .lines()
            .find_map(|line| line.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().nth(1))
            .and_then(|id| id.parse::<u32>().ok());
        if effective_uid != Some(0) {
            return Ok(Account { ids: None });
        }
        if let Some(ids) = Account::postgres()? {
            return Ok(Account { ids: Some(ids) });
        }
        let made = Command::new("useradd")
            .args([
                "--system",
                "--user-group",
                "--home-dir",
                "/nonexistent",
                "--shell",
                "/usr/sbin/nologin",
                "postgres",
            ])
            .status()
            .map_err(|error| format!("cannot run useradd to make the postgres user: {error}"))?;
        if !made.success() {
            return Err(format!("useradd could not make the postgres user ({made})"));
        }
        Account::postgres()?
            .map(|ids| Account { ids: Some(ids) })
            .ok_or_else(|| "no postgres user after useradd".into())
    }

    /// The `postgres` user's uid and gid, from `/etc/passwd`.
    fn postgres() -> Result<Option<(u32, u32)>, String> {
        let passwd = std::fs::read_to_string("/etc/passwd").map_err(|error| format!("/etc/passwd: {error}"))?;
        Ok(passwd.lines().find_map(|line| {
            let fields: Vec<&str> = line.split(':').collect();
            match fields.as_slice() {
                ["postgres", _, uid, gid, ..] => Some((uid.parse().ok()?, gid.parse().ok()?)),
                _ => None,
            }
        }))
    }

    fn command(&self, program: &std::path::Path) -> Command {
        let mut command = placed(program);
        if let Some((uid, gid)) = self.ids {
            use std::os::unix::process::CommandExt as _;
            command.uid(uid).gid(gid);
        }
        command
    }
}

/// What every throwaway PostgreSQL runs with: loopback only; no sync to
/// disk (a throwaway cluster needs no durability, and a sync waits on a
/// busy disk); and its dynamic shared memory as files in its own folder,
/// not in /dev/shm beside everyone's, so that a server killed mid-run
/// (kill -9 of the coordinator, then the supervisor's SIGKILL) leaves
/// nothing the folder's removal does not take.
const POSTGRES_SETTINGS: [&str; 4] =
    ["listen_addresses=127.0.0.1", "fsync=off", "synchronous_commit=off", "dynamic_shared_memory_type=mmap"];

/// A throwaway PostgreSQL cluster: `initdb` in a temporary directory, the
/// server on a free loopback port with its socket in that directory, run as
/// a non-root user. Stopped (an immediate shutdown) and removed on `Drop`.
#[derive(Debug)]
pub struct PgServer {
    child: Option<Child>,
    pub port: u16,
    dir: PathBuf,
}

impl PgServer {
    /// Makes the cluster and starts its server with `settings` (`name=value`
    /// pairs for `-c`); waits until it takes a connection.
    pub fn start(settings: &[String]) -> Result<PgServer, String> {
        on_fresh_ports(|| PgServer::start_once(settings))
    }

    fn start_once(settings: &[String]) -> Result<PgServer, String> {
        let bin = std::path::Path::new(POSTGRES_BIN);
        if !bin.join("postgres").exists() {
            return Err(format!(
                "PostgreSQL 15 is not installed ({POSTGRES_BIN}/postgres is missing); scripts/setup.sh installs it from Debian's packages"
            ));
        }
        let account = Account::find()?;
        let port = free_port()?;
        let dir = server_folder().join(format!("locklab-postgres-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|error| format!("cannot make {}: {error}", dir.display()))?;
        // From here on the guard removes the directory, whatever fails.
        let mut server = PgServer { child: None, port, dir };
        if let Some((uid, gid)) = account.ids {
            std::os::unix::fs::chown(&server.dir, Some(uid), Some(gid))
                .map_err(|error| format!("cannot give {} to the postgres user: {error}", server.dir.display()))?;
        }
        let data = server.dir.join("data");
        match PLACEMENT.get() {
            // Placed servers copy one cluster made once: `initdb` is most of a start.
            Some((_, root)) => {
                static TEMPLATE: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
                let template = TEMPLATE
                    .get_or_init(|| {
                        let template = root.join("postgres-template");
                        std::fs::create_dir_all(&template)
                            .map_err(|error| format!("cannot make {}: {error}", template.display()))?;
                        if let Some((uid, gid)) = account.ids {
                            std::os::unix::fs::chown(&template, Some(uid), Some(gid))
                                .map_err(|error| format!("cannot give {} to postgres: {error}", template.display()))?;
                        }
                        initdb(&account, bin, &template.join("data"), &template)?;
                        Ok(template.join("data"))
                    })
                    .clone()?;
                let copied = placed("cp")
                    .arg("-a")
                    .arg(&template)
                    .arg(&data)
                    .status()
                    .map_err(|error| format!("cannot run cp: {error}"))?;
                if !copied.success() {
                    return Err(format!("cannot copy the PostgreSQL cluster made at start ({copied})"));
                }
            }
            None => initdb(&account, bin, &data, &server.dir)?,
        }
        let log_path = server.dir.join("postgres.log");
        let log = std::fs::File::create(&log_path).map_err(|error| format!("cannot make the server's log: {error}"))?;
        let mut command = account.command(&bin.join("postgres"));
        command.arg("-D").arg(&data).args(["-p", &port.to_string(), "-k"]).arg(&server.dir);
        for setting in POSTGRES_SETTINGS.into_iter().chain(settings.iter().map(String::as_str)) {
            command.args(["-c", setting]);
        }
        let child = command
            .current_dir(&server.dir)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|error| format!("cannot start postgres: {error}"))?;
        let child = server.child.insert(child);
        let answers = || match crate::pg::PgConnection::open(port, "postgres") {
            Ok(Ok(mut connection)) => connection.query("SELECT 1").is_ok_and(|reply| reply.first_value() == Some("1")),
            Ok(Err(_)) | Err(_) => false,
        };
        let log = || format!(": {}", std::fs::read_to_string(&log_path).unwrap_or_default().trim());
        wait_until_answering(child, &format!("postgres on port {port}"), answers, log)?;
        Ok(server)
    }

    /// The postmaster's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The server's version (`SHOW server_version`).
    pub fn version(&self) -> String {
        let reply = crate::pg::PgConnection::open(self.port, "postgres")
            .ok()
            .and_then(Result::ok)
            .and_then(|mut connection| connection.query("SHOW server_version").ok());
        reply.and_then(|reply| reply.first_value().map(str::to_owned)).unwrap_or_else(|| "unknown".to_owned())
    }
}

/// Makes a PostgreSQL cluster in `data` as `account` (`initdb`, run in `dir`).
fn initdb(
    account: &Account,
    bin: &std::path::Path,
    data: &std::path::Path,
    dir: &std::path::Path,
) -> Result<(), String> {
    let initdb = account
        .command(&bin.join("initdb"))
        .arg("-D")
        .arg(data)
        .args(["-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync"])
        .current_dir(dir)
        .output()
        .map_err(|error| format!("cannot run initdb: {error}"))?;
    if initdb.status.success() {
        Ok(())
    } else {
        Err(format!("initdb failed ({}): {}", initdb.status, String::from_utf8_lossy(&initdb.stderr).trim()))
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            // SIGQUIT is PostgreSQL's immediate shutdown: the postmaster ends
            // its backends and then itself. SIGKILL would leave them behind.
            let _ = Command::new("kill").args(["-QUIT", &child.id().to_string()]).status();
            let asked = Instant::now();
            while !matches!(child.try_wait(), Ok(Some(_)) | Err(_)) {
                if asked.elapsed() > START_TIMEOUT {
                    let _ = child.kill();
                    let _ = child.wait();
                    break;
                }
                // Polling for the condition: the postmaster has exited.
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// An etcd cluster of one or more members in a temporary directory, on free
/// loopback ports. Its heartbeat is a tenth of its election timeout; the
/// default 100 ms election timeout makes its shortest lease a second
/// (etcd's floor is one and a half election timeouts, rounded up to whole
/// seconds). A member can be killed (a lost leader) and started again; it
/// comes back from its data directory as a follower.
#[derive(Debug)]
pub struct EtcdServer {
    members: Vec<EtcdMember>,
    dir: PathBuf,
    /// The wall-clock offset in ms the preloaded clock shim is told, when
    /// the members run with it ([`EtcdServer::start_with_clock_shim`]).
    clock_offset_ms: Option<i64>,
}

/// One member: its process (while it runs), its client port, and how to start it.
#[derive(Debug)]
struct EtcdMember {
    child: Option<Child>,
    port: u16,
    /// Its id, as the cluster's status calls it.
    id: String,
    arguments: Vec<String>,
    log_path: PathBuf,
    /// The clock shim to preload and the file it reads its offset from.
    clock_shim: Option<(PathBuf, PathBuf)>,
}

impl EtcdServer {
    /// Each running member's process id.
    pub fn pids(&self) -> Vec<u32> {
        self.members.iter().filter_map(|member| member.child.as_ref().map(Child::id)).collect()
    }

    /// A one-member cluster, started and answering.
    pub fn start() -> Result<EtcdServer, String> {
        EtcdServer::start_cluster(1, 100)
    }

    /// A cluster of `size` members with an election timeout of
    /// `election_timeout_ms` (wall ms), once every member answers.
    pub fn start_cluster(size: u8, election_timeout_ms: u64) -> Result<EtcdServer, String> {
        on_fresh_ports(|| EtcdServer::start_cluster_once(size, election_timeout_ms, false))
    }

    /// A one-member cluster started with the clock shim preloaded, as
    /// `redis-server` is, so that [`EtcdServer::step_clock`] tells the shim
    /// to step its wall clock. Whether that reaches the server is for the
    /// caller to find out ([`crate::etcd::server_date`]): etcd is a Go
    /// program, and Go's runtime reads the clock through the vDSO, not libc.
    pub fn start_with_clock_shim() -> Result<EtcdServer, String> {
        on_fresh_ports(|| EtcdServer::start_cluster_once(1, 100, true))
    }

    /// Tells the clock shim to step the members' wall clocks by `by_ms`
    /// (forward if positive); an error if they run without it.
    pub fn step_clock(&mut self, by_ms: i64) -> Result<(), String> {
        let offset_ms = self.clock_offset_ms.ok_or("the members run without the clock shim")? + by_ms;
        self.clock_offset_ms = Some(offset_ms);
        std::fs::write(self.dir.join("clock-offset"), offset_ms.to_string())
            .map_err(|error| format!("cannot change the members' clocks: {error}"))
    }

    fn start_cluster_once(size: u8, election_timeout_ms: u64, with_clock_shim: bool) -> Result<EtcdServer, String> {
        let ports: Vec<(u16, u16)> =
            (0..size).map(|_| Ok((free_port()?, free_port()?))).collect::<Result<_, String>>()?;
        let first = ports.first().map_or(0, |(port, _)| *port);
        let dir = server_folder().join(format!("locklab-etcd-{}-{first}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|error| format!("cannot make {}: {error}", dir.display()))?;
        let mut server = EtcdServer { members: Vec::new(), dir, clock_offset_ms: None };
        let clock_shim = if with_clock_shim {
            let library = build_clock_shim(&server.dir)?;
            server.clock_offset_ms = Some(0);
            server.step_clock(0)?;
            Some((library, server.dir.join("clock-offset")))
        } else {
            None
        };
        let name = |index: usize| format!("locklab-{index}");
        let cluster: Vec<String> = ports
            .iter()
            .enumerate()
            .map(|(index, (_, peer))| format!("{}=http://127.0.0.1:{peer}", name(index)))
            .collect();
        let heartbeat_ms = (election_timeout_ms / 10).max(1);
        for (index, (port, peer)) in ports.iter().enumerate() {
            let (client_url, peer_url) = (format!("http://127.0.0.1:{port}"), format!("http://127.0.0.1:{peer}"));
            let data = server.dir.join(name(index));
            let arguments = vec![
                "--name".to_owned(),
                name(index),
                "--data-dir".to_owned(),
                data.to_string_lossy().into_owned(),
                "--listen-client-urls".to_owned(),
                client_url.clone(),
                "--advertise-client-urls".to_owned(),
                client_url,
                "--listen-peer-urls".to_owned(),
                peer_url.clone(),
                "--initial-advertise-peer-urls".to_owned(),
                peer_url,
                "--initial-cluster".to_owned(),
                cluster.join(","),
                "--heartbeat-interval".to_owned(),
                heartbeat_ms.to_string(),
                "--election-timeout".to_owned(),
                election_timeout_ms.to_string(),
                "--log-level".to_owned(),
                "error".to_owned(),
            ];
            let log_path = server.dir.join(format!("{}.log", name(index)));
            let mut member = EtcdMember {
                child: None,
                port: *port,
                id: String::new(),
                arguments,
                log_path,
                clock_shim: clock_shim.clone(),
            };
            member.spawn()?;
            server.members.push(member);
        }
        // A member answers once the cluster has a quorum, so all are started before any is waited for.
        for member in &mut server.members {
            member.wait_until_answering()?;
            member.id = status(member.port)
                .and_then(|status| Some(status["header"]["member_id"].as_str()?.to_owned()))
                .unwrap_or_default();
        }
        Ok(server)
    }

    /// The client port of the first member still running.
    pub fn port(&self) -> u16 {
        self.members.iter().find(|member| member.child.is_some()).map_or(0, |member| member.port)
    }

    /// The members still running: each one's client port and id.
    pub fn running(&self) -> Vec<(u16, String)> {
        self.members
            .iter()
            .filter(|member| member.child.is_some())
            .map(|member| (member.port, member.id.clone()))
            .collect()
    }

    /// The member that leads now (one still running), by their own status.
    pub fn leader(&self) -> Option<usize> {
        let leader = leader_among(&self.running())?;
        self.members.iter().position(|member| member.id == leader)
    }

    /// How many members the cluster has, running or not.
    pub fn size(&self) -> usize {
        self.members.len()
    }

    /// Kills a member as a crash would (SIGKILL).
    pub fn kill(&mut self, index: usize) -> Result<(), String> {
        if let Some(mut child) = self.members.get_mut(index).and_then(|member| member.child.take()) {
            child.kill().map_err(|error| format!("cannot kill an etcd member: {error}"))?;
            let _ = child.wait();
        }
        Ok(())
    }

    /// Starts a killed member again, from its data directory: it rejoins as a follower.
    pub fn start_again(&mut self, index: usize) -> Result<(), String> {
        match self.members.get_mut(index) {
            Some(member) if member.child.is_none() => member.spawn(),
            Some(_) | None => Ok(()),
        }
    }

    /// The server's version (`GET /version`).
    pub fn version(&self) -> String {
        crate::etcd::version(std::net::SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, self.port())))
            .unwrap_or_else(|| "unknown".to_owned())
    }
}

/// The id of the member that leads `members` (client ports and ids), if one
/// of them does: a follower keeps naming a dead leader until it has elected
/// another, so only a leader among `members` counts.
pub fn leader_among(members: &[(u16, String)]) -> Option<String> {
    members.iter().find_map(|(port, _)| {
        let leader = status(*port)?["leader"].as_str()?.to_owned();
        members.iter().any(|(_, id)| *id == leader).then_some(leader)
    })
}

/// A member's status (`/v3/maintenance/status`): its id and the leader's it knows.
fn status(port: u16) -> Option<serde_json::Value> {
    let mut client = crate::etcd::EtcdClient::new(port);
    client.post("/v3/maintenance/status", &serde_json::json!({}), Duration::from_millis(200)).ok()
}

impl EtcdMember {
    fn spawn(&mut self) -> Result<(), String> {
        let log = std::fs::File::options()
            .create(true)
            .append(true)
            .open(&self.log_path)
            .map_err(|error| format!("cannot make etcd's log: {error}"))?;
        let mut command = placed("etcd");
        if let Some((library, offset_file)) = &self.clock_shim {
            command.env("LD_PRELOAD", library).env("LOCKLAB_CLOCK_OFFSET_FILE", offset_file);
        }
        let child = command.args(&self.arguments).stdout(Stdio::null()).stderr(log).spawn().map_err(|error| {
            format!("cannot start etcd ({error}); scripts/setup.sh installs it from Debian's packages")
        })?;
        self.child = Some(child);
        Ok(())
    }

    fn wait_until_answering(&mut self) -> Result<(), String> {
        let port = self.port;
        let answers = || {
            let mut client = crate::etcd::EtcdClient::new(port);
            let probe = serde_json::json!({"key": crate::etcd::encode("locklab")});
            client
                .post("/v3/kv/range", &probe, Duration::from_millis(200))
                .is_ok_and(|reply| reply.get("header").is_some())
        };
        let log_path = self.log_path.clone();
        let log = || format!(": {}", std::fs::read_to_string(&log_path).unwrap_or_default().trim());
        let Some(child) = self.child.as_mut() else { return Err("an etcd member is not running".to_owned()) };
        wait_until_answering(child, &format!("etcd on port {port}"), answers, log)
    }
}

impl Drop for EtcdServer {
    fn drop(&mut self) {
        for member in &mut self.members {
            if let Some(mut child) = member.child.take() {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_taken_meanwhile_is_tried_again_and_other_failures_are_not() {
        let taken = || Err::<u8, String>("etcd exited at start: bind: Address already in use".to_owned());
        let mut tries = 0;
        let started = on_fresh_ports(|| {
            tries += 1;
            if tries < PORT_ATTEMPTS { taken() } else { Ok(7) }
        });
        assert_eq!((started, tries), (Ok(7), PORT_ATTEMPTS));
        let mut tries = 0;
        let given_up = on_fresh_ports(|| {
            tries += 1;
            taken()
        });
        assert!(given_up.is_err() && tries == PORT_ATTEMPTS, "gives up after {PORT_ATTEMPTS} tries: {tries}");
        let mut tries = 0;
        let other = on_fresh_ports(|| {
            tries += 1;
            Err::<u8, String>("initdb failed".to_owned())
        });
        assert_eq!((other, tries), (Err("initdb failed".to_owned()), 1));
    }
}
