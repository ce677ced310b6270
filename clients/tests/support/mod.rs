//! Throwaway servers for the clients' tests, on free loopback ports, each
//! owned by a guard whose `Drop` stops it and removes its directory, so a
//! failing test leaves nothing running: a Redis with a password (and TLS),
//! a PostgreSQL cluster that requires SCRAM (and TLS), an etcd member (with
//! TLS). Certificates are made here (rcgen): an authority, a server
//! certificate it signs for [`SERVER_NAME`] only, and an unrelated authority.
//! Debian's servers are the ones `scripts/setup.sh` installs.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The name the servers' certificates carry. No resolver knows it: the
/// tests dial the server's address (`via`) and TLS checks this name.
pub const SERVER_NAME: &str = "db.locklab.test";

/// How long a server may take to answer after it is started.
const START_LIMIT: Duration = Duration::from_secs(20);

/// A directory of the test's own, removed with everything in it on `Drop`.
#[derive(Debug)]
pub struct Scratch {
    pub path: PathBuf,
}

impl Scratch {
    pub fn new(what: &str) -> Scratch {
        let unique = format!("locklab-clients-{what}-{}-{}", std::process::id(), free_port());
        let path = std::env::temp_dir().join(unique);
        std::fs::create_dir_all(&path).unwrap_or_else(|error| panic!("cannot make {}: {error}", path.display()));
        Scratch { path }
    }

    pub fn file(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// A free loopback port: the system's choice for a listener, released.
pub fn free_port() -> u16 {
    let [port] = free_ports();
    port
}

/// `N` free loopback ports, all different: each is held until all are
/// chosen, since a port given back can be the next one handed out (two
/// calls of [`free_port`] in a row once gave etcd the same port for its
/// clients and its peers).
pub fn free_ports<const N: usize>() -> [u16; N] {
    let listeners: [TcpListener; N] =
        std::array::from_fn(|_| TcpListener::bind("127.0.0.1:0").expect("a free loopback port"));
    listeners.map(|listener| listener.local_addr().expect("the listener's address").port())
}

pub fn loopback(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

/// A CA, a server certificate it signed for [`SERVER_NAME`], and another
/// CA that signed nothing here, as PEM files.
#[derive(Debug)]
pub struct Certificates {
    pub authority: PathBuf,
    pub other_authority: PathBuf,
    pub certificate: PathBuf,
    pub key: PathBuf,
}

impl Certificates {
    pub fn write(scratch: &Scratch) -> Certificates {
        let authority = |name: &str| {
            let key = rcgen::KeyPair::generate().expect("a CA key");
            let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
            params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
            params.distinguished_name.push(rcgen::DnType::CommonName, name);
            params.key_usages = vec![rcgen::KeyUsagePurpose::KeyCertSign, rcgen::KeyUsagePurpose::DigitalSignature];
            rcgen::CertifiedIssuer::self_signed(params, key).expect("a self-signed CA")
        };
        let issuer = authority("locklab test authority");
        let other = authority("an authority nobody asked");
        let key = rcgen::KeyPair::generate().expect("a server key");
        let mut params = rcgen::CertificateParams::new(vec![SERVER_NAME.to_owned()]).expect("server parameters");
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
        let certificate = params.signed_by(&key, &issuer).expect("a server certificate");
        let files = Certificates {
            authority: scratch.file("ca.pem"),
            other_authority: scratch.file("other-ca.pem"),
            certificate: scratch.file("server.pem"),
            key: scratch.file("server.key"),
        };
        let contents = [
            (&files.authority, issuer.pem()),
            (&files.other_authority, other.pem()),
            (&files.certificate, certificate.pem()),
            (&files.key, key.serialize_pem()),
        ];
        for (path, text) in contents {
            std::fs::write(path, text).unwrap_or_else(|error| panic!("cannot write {}: {error}", path.display()));
        }
        files
    }
}

/// How a server is asked to stop.
#[derive(Clone, Copy, Debug)]
enum Stop {
    Kill,
    /// SIGQUIT, PostgreSQL's immediate shutdown: the postmaster ends its backends, then itself.
    Quit,
}

/// A server's process, stopped on `Drop`.
#[derive(Debug)]
pub struct ServerProcess {
    child: Option<Child>,
    stop: Stop,
}

impl ServerProcess {
    /// Starts `command` (its output to `log`) and waits until `ready` says
    /// it answers; panics with its log if it exits or does not answer in time.
    fn start(mut command: Command, stop: Stop, log: &Path, mut ready: impl FnMut() -> bool) -> ServerProcess {
        let log_file = std::fs::File::create(log).expect("the server's log");
        let error_log = log_file.try_clone().expect("the server's log");
        let child = command.stdout(log_file).stderr(error_log).spawn();
        let child = child.unwrap_or_else(|error| {
            panic!("cannot start {command:?} ({error}); scripts/setup.sh installs Debian's servers")
        });
        let mut process = ServerProcess { child: Some(child), stop };
        let started = Instant::now();
        let log_text = || std::fs::read_to_string(log).unwrap_or_default();
        while !ready() {
            if let Some(Ok(Some(status))) = process.child.as_mut().map(Child::try_wait) {
                panic!("{command:?} exited at start ({status}):\n{}", log_text());
            }
            assert!(
                started.elapsed() < START_LIMIT,
                "{command:?} did not answer within {START_LIMIT:?}:\n{}",
                log_text()
            );
            // Polling for the condition: the server answers.
            std::thread::sleep(Duration::from_millis(20));
        }
        process
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let Some(mut child) = self.child.take() else { return };
        match self.stop {
            Stop::Kill => {
                let _ = child.kill();
            }
            Stop::Quit => {
                let _ = Command::new("kill").args(["-QUIT", &child.id().to_string()]).status();
            }
        }
        let asked = Instant::now();
        while !matches!(child.try_wait(), Ok(Some(_)) | Err(_)) {
            if asked.elapsed() > START_LIMIT {
                let _ = child.kill();
                break;
            }
            // Polling for the condition: the process has exited.
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = child.wait();
    }
}

/// Whether something accepts connections on `port`.
pub fn accepts(port: u16) -> bool {
    TcpStream::connect_timeout(&loopback(port), Duration::from_millis(200)).is_ok()
}

/// A `redis-server` with no persistence, given `settings` (its own
/// command-line options: a password, users…), listening on `port` for plain
/// connections, or for TLS ones only when started with certificates.
#[derive(Debug)]
pub struct Redis {
    pub port: u16,
    process: Option<ServerProcess>,
    arguments: Vec<String>,
    pub scratch: Scratch,
}

impl Redis {
    pub fn start(settings: &[&str], tls: Option<&Certificates>) -> Redis {
        let scratch = Scratch::new("redis");
        let port = free_port();
        let mut arguments: Vec<String> = match tls {
            None => vec!["--port".to_owned(), port.to_string()],
            Some(certificates) => {
                let path = |path: &Path| path.to_string_lossy().into_owned();
                let tls = ["--port", "0", "--tls-port", &port.to_string(), "--tls-auth-clients", "no"];
                let mut arguments: Vec<String> = tls.iter().map(|argument| (*argument).to_owned()).collect();
                arguments.extend(["--tls-cert-file".to_owned(), path(&certificates.certificate)]);
                arguments.extend(["--tls-key-file".to_owned(), path(&certificates.key)]);
                arguments.extend(["--tls-ca-cert-file".to_owned(), path(&certificates.authority)]);
                arguments
            }
        };
        arguments.extend(settings.iter().map(|setting| (*setting).to_owned()));
        let mut redis = Redis { port, process: None, arguments, scratch };
        redis.start_again();
        redis
    }

    /// Starts the server again on the same port, empty.
    pub fn start_again(&mut self) {
        let mut command = Command::new("redis-server");
        command.args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir"]).arg(&self.scratch.path);
        command.args(&self.arguments);
        let port = self.port;
        let log = self.scratch.file("redis.log");
        // Ready when this server says so in its own log, not only when
        // something answers on the port: tests run side by side, and
        // another test's server that took the same port in the meantime
        // would answer for it (with the same password).
        let said_ready =
            || std::fs::read_to_string(&log).is_ok_and(|text| text.contains("Ready to accept connections"));
        self.process = Some(ServerProcess::start(command, Stop::Kill, &log, || said_ready() && accepts(port)));
    }

    /// Stops the server as a crash would (SIGKILL): it closes every connection.
    pub fn kill(&mut self) {
        self.process = None;
    }
}

/// Where Debian's PostgreSQL 15 keeps its server programs.
const POSTGRES_BIN: &str = "/usr/lib/postgresql/15/bin";

/// An id `id` prints (`id -u postgres`…).
fn id(arguments: &[&str]) -> Option<u32> {
    let output = Command::new("id").args(arguments).output().ok()?;
    String::from_utf8_lossy(&output.stdout).trim().parse().ok().filter(|_| output.status.success())
}

/// The user and group ids PostgreSQL runs as when the tests run as root,
/// which it refuses to run as: Debian's `postgres` account, which its
/// package makes. `None` when the tests are not root.
fn postgres_account() -> Option<(u32, u32)> {
    if id(&["-u"]) != Some(0) {
        return None;
    }
    let account = id(&["-u", "postgres"]).zip(id(&["-g", "postgres"]));
    assert!(account.is_some(), "no postgres account: scripts/setup.sh installs Debian's PostgreSQL, which makes it");
    account
}

/// A throwaway PostgreSQL cluster whose every login needs a password
/// checked with SCRAM-SHA-256 (`initdb --auth=scram-sha-256 --pwfile`).
#[derive(Debug)]
pub struct Postgres {
    pub port: u16,
    pub password: String,
    /// Declared before the scratch directory, so the server stops before its files go.
    _process: ServerProcess,
    pub scratch: Scratch,
}

impl Postgres {
    /// Makes the cluster, writes `hba` as its `pg_hba.conf` when given, and
    /// starts it with `settings` (`name=value`), and TLS on with the
    /// certificate when given one; `ready` says when it takes logins (it is
    /// asked with the port and the password).
    pub fn start(
        hba: Option<&str>,
        settings: &[String],
        tls: Option<&Certificates>,
        ready: impl Fn(u16, &str) -> bool,
    ) -> Postgres {
        let scratch = Scratch::new("postgres");
        let mut settings = settings.to_vec();
        if let Some(certificates) = tls {
            // The server's own copies: its key must be its account's, and private.
            for (from, name) in [(&certificates.certificate, "server.pem"), (&certificates.key, "server.key")] {
                std::fs::copy(from, scratch.file(name)).expect("a copy of the certificate for the server");
            }
            settings.push("ssl=on".to_owned());
            settings.push(format!("ssl_cert_file={}", scratch.file("server.pem").display()));
            settings.push(format!("ssl_key_file={}", scratch.file("server.key").display()));
        }
        let account = postgres_account();
        let as_postgres = |program: &str| {
            let mut command = Command::new(Path::new(POSTGRES_BIN).join(program));
            if let Some((uid, gid)) = account {
                command.uid(uid).gid(gid);
            }
            command.current_dir(&scratch.path);
            command
        };
        let password = format!("pw-{}", free_port());
        std::fs::write(scratch.file("password"), &password).expect("the password file");
        Postgres::give_files(&scratch, account);
        let data = scratch.file("data");
        let initdb = as_postgres("initdb")
            .arg("-D")
            .arg(&data)
            .args(["-U", "postgres", "--auth=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync", "--pwfile"])
            .arg(scratch.file("password"))
            .stdout(Stdio::null())
            .output()
            .expect("initdb runs (scripts/setup.sh installs PostgreSQL 15)");
        assert!(initdb.status.success(), "initdb failed: {}", String::from_utf8_lossy(&initdb.stderr));
        if let Some(hba) = hba {
            std::fs::write(data.join("pg_hba.conf"), hba).expect("pg_hba.conf");
        }
        let port = free_port();
        let mut command = as_postgres("postgres");
        command.arg("-D").arg(&data).args(["-p", &port.to_string(), "-k"]).arg(&scratch.path);
        command.args(["-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"]);
        for setting in &settings {
            command.args(["-c", setting]);
        }
        let log = scratch.file("postgres.log");
        let process = ServerProcess::start(command, Stop::Quit, &log, || accepts(port) && ready(port, &password));
        Postgres { port, password, _process: process, scratch }
    }

    /// Gives the scratch directory and its files to the server's account;
    /// a TLS key must be its own and private.
    fn give_files(scratch: &Scratch, account: Option<(u32, u32)>) {
        let entries = std::fs::read_dir(&scratch.path).expect("the scratch directory");
        for path in entries.flatten().map(|entry| entry.path()).chain([scratch.path.clone()]) {
            if let Some((uid, gid)) = account {
                std::os::unix::fs::chown(&path, Some(uid), Some(gid)).expect("chown to postgres");
            }
            if path.extension().is_some_and(|extension| extension == "key") {
                use std::os::unix::fs::PermissionsExt as _;
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod 600");
            }
        }
    }
}

/// One etcd member on loopback ports (10 ms heartbeat and 100 ms election
/// timeout, so that a one-second lease stays one second), over TLS when
/// given a certificate and key.
#[derive(Debug)]
pub struct Etcd {
    pub port: u16,
    _process: ServerProcess,
    pub scratch: Scratch,
}

impl Etcd {
    pub fn start(tls: Option<&Certificates>, ready: impl Fn(u16) -> bool) -> Etcd {
        let scratch = Scratch::new("etcd");
        let [port, peer] = free_ports();
        let scheme = if tls.is_some() { "https" } else { "http" };
        let client_url = format!("{scheme}://127.0.0.1:{port}");
        let peer_url = format!("http://127.0.0.1:{peer}");
        let mut command = Command::new("etcd");
        command.args(["--name", "test", "--data-dir"]).arg(scratch.file("data"));
        command.args(["--listen-client-urls", &client_url, "--advertise-client-urls", &client_url]);
        command.args(["--listen-peer-urls", &peer_url, "--initial-advertise-peer-urls", &peer_url]);
        command.args(["--initial-cluster", &format!("test={peer_url}")]);
        command.args(["--heartbeat-interval", "10", "--election-timeout", "100", "--log-level", "error"]);
        if let Some(certificates) = tls {
            command.arg("--cert-file").arg(&certificates.certificate).arg("--key-file").arg(&certificates.key);
        }
        let log = scratch.file("etcd.log");
        let process = ServerProcess::start(command, Stop::Kill, &log, || accepts(port) && ready(port));
        Etcd { port, _process: process, scratch }
    }
}

/// A listener that accepts connections and never answers: a server that hangs.
#[derive(Debug)]
pub struct Silent {
    pub port: u16,
    _listener: TcpListener,
}

impl Silent {
    pub fn start() -> Silent {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback listener");
        let port = listener.local_addr().expect("its address").port();
        // The kernel completes the handshakes into the backlog: nothing need accept them.
        Silent { port, _listener: listener }
    }
}
