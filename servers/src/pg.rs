//! A minimal PostgreSQL client over the frontend/backend protocol 3.0: the
//! startup packet (the suite's cluster trusts loopback connections, so no
//! password exchange), simple queries, and replies read without blocking, so
//! that a statement can be left waiting on a lock while others run. Replies
//! are written the way the lab prints them (`1 row`, `ok`, `55P03 ERROR:
//! canceling statement due to lock timeout`), so the two compare as text.

use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::Duration;

/// The tables the lab's statements name. The reports table has no foreign
/// key, so a report's insert never waits for the jobs row's lock; other
/// services' inserts into job_events do, through their foreign-key check.
pub const SCHEMA: &str = "CREATE TABLE jobs (name text PRIMARY KEY);\
    INSERT INTO jobs VALUES ('daily-report');\
    CREATE TABLE reports (job text NOT NULL, day integer NOT NULL, period integer NOT NULL, run integer NOT NULL, token bigint, PRIMARY KEY (job, day));\
    CREATE TABLE job_events (id bigserial PRIMARY KEY, job text NOT NULL REFERENCES jobs (name))";

/// The protocol version the startup packet asks for: 3.0.
const PROTOCOL_3_0: i32 = 196_608;

/// What the server answered to one simple query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PgReply {
    /// Every statement completed: the last one's command tag, and the rows
    /// the statements returned.
    Done { tag: String, rows: Vec<Vec<Option<String>>> },
    /// An `ErrorResponse`: severity (`ERROR`, `FATAL`), SQLSTATE and message.
    Error { severity: String, code: String, message: String },
    /// The server closed the connection without saying why.
    Closed,
}

impl PgReply {
    /// The reply in the lab's notation.
    pub fn text(&self) -> String {
        match self {
            PgReply::Done { tag, .. } => {
                let count = tag.rsplit(' ').next().and_then(|count| count.parse::<u32>().ok());
                match (tag.split(' ').next(), count) {
                    (Some("SELECT" | "INSERT" | "UPDATE" | "DELETE"), Some(count)) => {
                        format!("{count} row{}", if count == 1 { "" } else { "s" })
                    }
                    _ => "ok".to_owned(),
                }
            }
            PgReply::Error { severity, code, message } => format!("{code} {severity}: {message}"),
            PgReply::Closed => "connection closed".to_owned(),
        }
    }

    /// The first column of the first row, for the suite's own queries.
    pub fn first_value(&self) -> Option<&str> {
        match self {
            PgReply::Done { rows, .. } => rows.first()?.first()?.as_deref(),
            PgReply::Error { .. } | PgReply::Closed => None,
        }
    }
}

/// One session with the server.
#[derive(Debug)]
pub struct PgConnection {
    stream: TcpStream,
    /// Bytes read but not yet parsed into whole messages.
    buffer: Vec<u8>,
    /// The reply being read: its rows, last tag and error so far.
    rows: Vec<Vec<Option<String>>>,
    tag: String,
    error: Option<PgReply>,
    /// The server process serving this session (`pg_stat_activity.pid`).
    pub backend_pid: i32,
}

/// Who a session logs in as, where, and how it is set up: the startup
/// packet's parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PgLogin {
    pub user: String,
    pub database: String,
    /// The schema the session's unqualified names resolve in, if not `public`.
    pub schema: Option<String>,
    pub application_name: String,
}

impl PgLogin {
    /// `user` on database `postgres`, as the suite's cluster has it.
    pub fn local(user: &str) -> PgLogin {
        PgLogin {
            user: user.to_owned(),
            database: "postgres".to_owned(),
            schema: None,
            application_name: "locklab-conformance".to_owned(),
        }
    }
}

impl PgConnection {
    /// Connects as `user` to database `postgres` on the loopback interface.
    /// A refusal the server explains (a FATAL error) comes back as `Ok(Err(reply))`.
    pub fn open(port: u16, user: &str) -> Result<Result<PgConnection, PgReply>, String> {
        PgConnection::open_as(port, &PgLogin::local(user))
    }

    /// Connects on the loopback port `port` as `login` says.
    pub fn open_as(port: u16, login: &PgLogin) -> Result<Result<PgConnection, PgReply>, String> {
        PgConnection::open_at(SocketAddr::from((Ipv4Addr::LOCALHOST, port)), login)
    }

    /// Connects to the server at `address` as `login` says.
    pub fn open_at(address: SocketAddr, login: &PgLogin) -> Result<Result<PgConnection, PgReply>, String> {
        let stream = TcpStream::connect_timeout(&address, Duration::from_secs(5))
            .map_err(|error| format!("cannot connect to PostgreSQL: {error}"))?;
        stream.set_nodelay(true).map_err(|error| error.to_string())?;
        let mut connection = PgConnection {
            stream,
            buffer: Vec::new(),
            rows: Vec::new(),
            tag: String::new(),
            error: None,
            backend_pid: 0,
        };
        let mut body = PROTOCOL_3_0.to_be_bytes().to_vec();
        let options = login.schema.as_ref().map(|schema| format!("-c search_path={schema}"));
        let mut parameters = vec![
            ("user", login.user.as_str()),
            ("database", &login.database),
            ("application_name", &login.application_name),
        ];
        if let Some(options) = &options {
            parameters.push(("options", options));
        }
        for (key, value) in parameters {
            body.extend_from_slice(key.as_bytes());
            body.push(0);
            body.extend_from_slice(value.as_bytes());
            body.push(0);
        }
        body.push(0);
        let mut packet = length_prefix(body.len()).to_vec();
        packet.extend_from_slice(&body);
        connection.stream.write_all(&packet).map_err(|error| format!("cannot send the startup packet: {error}"))?;
        match connection.wait(Duration::from_secs(10))? {
            PgReply::Done { .. } => Ok(Ok(connection)),
            refused @ (PgReply::Error { .. } | PgReply::Closed) => Ok(Err(refused)),
        }
    }

    /// Sends a simple query (one or more statements) without waiting for the reply.
    pub fn send(&mut self, sql: &str) {
        let mut body = sql.as_bytes().to_vec();
        body.push(0);
        let mut message = vec![b'Q'];
        message.extend_from_slice(&length_prefix(body.len()));
        message.extend_from_slice(&body);
        // A session the server has ended may refuse the write; its reply (the
        // FATAL error it sent, or the close) is read next either way.
        let _ = self.stream.write_all(&message);
    }

    /// Sends a query and waits for its whole reply, up to `limit`.
    pub fn query(&mut self, sql: &str) -> Result<PgReply, String> {
        self.send(sql);
        self.wait(Duration::from_secs(10)).map_err(|error| format!("{sql}: {error}"))
    }

    /// The reply, waiting at most `limit` for it; a reply that does not come
    /// in that time is an error.
    pub fn wait(&mut self, limit: Duration) -> Result<PgReply, String> {
        let deadline = std::time::Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return Err(format!("no reply from PostgreSQL within {limit:?}"));
            }
            if let Some(reply) = self.poll(left)? {
                return Ok(reply);
            }
        }
    }

    /// The reply if it is complete within `within`, or `None`.
    pub fn poll(&mut self, within: Duration) -> Result<Option<PgReply>, String> {
        if let Some(reply) = self.parse()? {
            return Ok(Some(reply));
        }
        self.stream.set_read_timeout(Some(within.max(Duration::from_millis(1)))).map_err(|error| error.to_string())?;
        let mut chunk = [0_u8; 8192];
        match self.stream.read(&mut chunk) {
            Ok(0) => {
                // The server closed the connection: a FATAL error it sent first says why.
                let reply = self.parse()?.or_else(|| self.error.take()).unwrap_or(PgReply::Closed);
                Ok(Some(reply))
            }
            Ok(read) => {
                self.buffer.extend_from_slice(&chunk[..read]);
                self.parse()
            }
            Err(error) if matches!(error.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => Ok(None),
            Err(error) if error.kind() == ErrorKind::ConnectionReset => {
                Ok(Some(self.error.take().unwrap_or(PgReply::Closed)))
            }
            Err(error) => Err(format!("reading from PostgreSQL: {error}")),
        }
    }

    /// Takes whole messages off the buffer; the reply once `ReadyForQuery` ends it.
    fn parse(&mut self) -> Result<Option<PgReply>, String> {
        loop {
            if self.buffer.len() < 5 {
                return Ok(None);
            }
            let kind = self.buffer[0];
            let length = i32::from_be_bytes([self.buffer[1], self.buffer[2], self.buffer[3], self.buffer[4]]);
            let length = usize::try_from(length).map_err(|_| format!("a message of length {length}"))?;
            if length < 4 {
                return Err(format!("a message of length {length}"));
            }
            if self.buffer.len() < 1 + length {
                return Ok(None);
            }
            let body: Vec<u8> = self.buffer.drain(..=length).skip(5).collect();
            match kind {
                // Authentication: 0 is "ok"; anything else asks for a password.
                b'R' if body.get(..4) != Some(&[0, 0, 0, 0]) => {
                    return Err(
                        "PostgreSQL asks for a password, and this client sends none: it logs in where the server trusts it (the clusters locklab starts trust loopback connections)".into()
                    );
                }
                b'K' => {
                    if let Some(pid) = body.get(..4) {
                        self.backend_pid = i32::from_be_bytes([pid[0], pid[1], pid[2], pid[3]]);
                    }
                }
                b'C' => self.tag = cstring(&body),
                b'D' => self.rows.push(data_row(&body)),
                b'E' => self.error = Some(error_response(&body)),
                b'Z' => {
                    let rows = std::mem::take(&mut self.rows);
                    let tag = std::mem::take(&mut self.tag);
                    return Ok(Some(self.error.take().unwrap_or(PgReply::Done { tag, rows })));
                }
                // Parameter status, notices, row descriptions, empty queries: nothing to keep.
                _ => {}
            }
        }
    }
}

impl Drop for PgConnection {
    fn drop(&mut self) {
        // Terminate: the server ends the session at once rather than on the
        // socket's close.
        let _ = self.stream.write_all(&[b'X', 0, 0, 0, 4]);
    }
}

/// A message's length field, which counts itself.
fn length_prefix(body_len: usize) -> [u8; 4] {
    i32::try_from(body_len + 4).unwrap_or(i32::MAX).to_be_bytes()
}

fn cstring(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|byte| *byte == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

fn data_row(body: &[u8]) -> Vec<Option<String>> {
    let mut values = Vec::new();
    let mut at = 2;
    while at + 4 <= body.len() {
        let length = i32::from_be_bytes([body[at], body[at + 1], body[at + 2], body[at + 3]]);
        at += 4;
        match usize::try_from(length) {
            Ok(length) if at + length <= body.len() => {
                values.push(Some(String::from_utf8_lossy(&body[at..at + length]).into_owned()));
                at += length;
            }
            // -1 is NULL.
            Ok(_) | Err(_) => values.push(None),
        }
    }
    values
}

fn error_response(body: &[u8]) -> PgReply {
    let (mut severity, mut code, mut message) = (String::new(), String::new(), String::new());
    for field in body.split(|byte| *byte == 0) {
        let Some((&kind, value)) = field.split_first() else {
            continue;
        };
        let value = String::from_utf8_lossy(value).into_owned();
        match kind {
            // `V` is the severity that translations leave alone.
            b'V' => severity = value,
            b'C' => code = value,
            b'M' => message = value,
            _ => {}
        }
    }
    PgReply::Error { severity, code, message }
}

impl PgReply {
    /// One line of the process client's protocol (tabs separate the fields).
    fn to_line(&self) -> String {
        match self {
            PgReply::Done { tag, .. } => format!("done\t{tag}"),
            PgReply::Error { severity, code, message } => format!("error\t{severity}\t{code}\t{message}"),
            PgReply::Closed => "closed".to_owned(),
        }
    }

    fn from_line(line: &str) -> Result<PgReply, String> {
        let fields: Vec<&str> = line.split('\t').collect();
        match fields.as_slice() {
            ["done", tag] => Ok(PgReply::Done { tag: (*tag).to_owned(), rows: Vec::new() }),
            ["error", severity, code, message] => Ok(PgReply::Error {
                severity: (*severity).to_owned(),
                code: (*code).to_owned(),
                message: (*message).to_owned(),
            }),
            ["closed"] => Ok(PgReply::Closed),
            _ => Err(format!("the client process said {line:?}")),
        }
    }
}

/// The command that makes this program a client process (see [`serve`]).
pub const CLIENT_COMMAND: &str = "postgres-client";

/// A client that is its own OS process, so the suite can kill it (SIGKILL)
/// or stop it (SIGSTOP) as the lab's faults do to an instance: this program
/// run as `locklab-conformance postgres-client PORT`, sent one statement per
/// line on its standard input, answering one reply per line.
#[derive(Debug)]
pub struct ProcessClient {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    replies: std::sync::mpsc::Receiver<String>,
    pub backend_pid: i32,
}

impl ProcessClient {
    /// Starts one and waits until it is connected.
    pub fn start(port: u16) -> Result<ProcessClient, String> {
        let program = std::env::current_exe().map_err(|error| format!("cannot find this program: {error}"))?;
        let mut child = std::process::Command::new(program)
            .args([CLIENT_COMMAND, &port.to_string()])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .map_err(|error| format!("cannot start a client process: {error}"))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            return Err("the client process has no pipes".into());
        };
        let (sender, replies) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead as _;
            for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut client = ProcessClient { child, stdin, replies, backend_pid: 0 };
        let first =
            client.replies.recv_timeout(Duration::from_secs(10)).map_err(|_| "the client process did not connect")?;
        client.backend_pid = first
            .strip_prefix("pid\t")
            .and_then(|pid| pid.parse().ok())
            .ok_or_else(|| format!("the client process could not connect: {first}"))?;
        Ok(client)
    }

    pub fn send(&mut self, sql: &str) {
        // A killed process cannot be written to; the suite reads no reply from it.
        let _ = writeln!(self.stdin, "{sql}");
        let _ = self.stdin.flush();
    }

    /// The reply if one comes within `within`.
    pub fn poll(&mut self, within: Duration) -> Result<Option<PgReply>, String> {
        match self.replies.recv_timeout(within) {
            Ok(line) => PgReply::from_line(&line).map(Some),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Ok(None),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Ok(Some(PgReply::Closed)),
        }
    }

    /// SIGKILL, and the process reaped.
    pub fn kill(&mut self) -> Result<(), String> {
        self.child.kill().map_err(|error| format!("cannot kill the client process: {error}"))?;
        self.child.wait().map(drop).map_err(|error| format!("the killed client process: {error}"))
    }

    /// Sends `signal` (`STOP`, `CONT`) and waits until the process is
    /// stopped (`T` in `/proc/PID/stat`) or running again.
    pub fn signal(&mut self, signal: &str) -> Result<(), String> {
        let pid = self.child.id().to_string();
        let sent = std::process::Command::new("kill").args([&format!("-{signal}"), &pid]).status();
        if !sent.is_ok_and(|status| status.success()) {
            return Err(format!("cannot send SIG{signal} to the client process"));
        }
        let want_stopped = signal == "STOP";
        let started = std::time::Instant::now();
        loop {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // The state follows the command name, which is in parentheses.
            let stopped = stat.rsplit(')').next().and_then(|rest| rest.split_whitespace().next()) == Some("T");
            if stopped == want_stopped {
                return Ok(());
            }
            if started.elapsed() > Duration::from_secs(10) {
                return Err(format!("the client process did not take SIG{signal}"));
            }
            // Polling for the condition: the kernel has stopped or resumed it.
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

impl Drop for ProcessClient {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill")
            .args(["-CONT", &self.child.id().to_string()])
            .stderr(std::process::Stdio::null())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The client process's side: connects, says its backend's pid, then runs
/// each line of standard input as a query and writes the reply, until its
/// input ends.
pub fn serve(port: &str) -> std::process::ExitCode {
    use std::io::BufRead as _;
    let Ok(port) = port.parse::<u16>() else {
        eprintln!("{CLIENT_COMMAND}: not a port: {port}");
        return std::process::ExitCode::from(2);
    };
    let mut connection = match PgConnection::open(port, "postgres") {
        Ok(Ok(connection)) => connection,
        Ok(Err(refused)) => {
            println!("refused\t{}", refused.text());
            return std::process::ExitCode::from(1);
        }
        Err(error) => {
            println!("refused\t{error}");
            return std::process::ExitCode::from(1);
        }
    };
    let mut out = std::io::stdout();
    let _ = writeln!(out, "pid\t{}", connection.backend_pid);
    let _ = out.flush();
    for line in std::io::stdin().lock().lines().map_while(Result::ok) {
        let reply = connection.query(&line).unwrap_or(PgReply::Closed);
        let _ = writeln!(out, "{}", reply.to_line());
        let _ = out.flush();
    }
    std::process::ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_read_as_the_lab_prints_them() {
        let done = |tag: &str| PgReply::Done { tag: tag.to_owned(), rows: Vec::new() };
        assert_eq!(done("SELECT 1").text(), "1 row");
        assert_eq!(done("INSERT 0 0").text(), "0 rows");
        assert_eq!(done("COMMIT").text(), "ok");
        let mut body = b"SFATAL\0VFATAL\0C53300\0Msorry, too many clients already\0".to_vec();
        body.push(0);
        assert_eq!(error_response(&body).text(), "53300 FATAL: sorry, too many clients already");
        for reply in [done("SELECT 2"), error_response(&body), PgReply::Closed] {
            assert_eq!(PgReply::from_line(&reply.to_line()).map(|back| back.text()), Ok(reply.text()));
        }
        // Two columns: "15" and NULL.
        let row = [&[0, 2][..], &2_i32.to_be_bytes(), b"15", &(-1_i32).to_be_bytes()].concat();
        assert_eq!(data_row(&row), [Some("15".to_owned()), None]);
    }
}
