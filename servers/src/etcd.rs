//! A minimal client for etcd's JSON gateway (`POST /v3/...` over HTTP/1.1,
//! keys and values base64, 64-bit numbers as strings), enough for a lease
//! lock: grant, a transaction that creates the key only if it is absent,
//! keep-alive, revoke, and a watch read as a stream.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use locklab_engine::event::{ConsensusOp, ConsensusReply, LEASE_KEY, Owner};
use locklab_engine::ids::{LeaseId, Token};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::Duration;

/// A key or value as the gateway carries it.
pub fn encode(text: &str) -> String {
    STANDARD.encode(text)
}

/// A key or value the gateway sent, as text.
pub fn decode(text: &str) -> Option<String> {
    STANDARD.decode(text).ok().and_then(|bytes| String::from_utf8(bytes).ok())
}

/// One connection to the gateway, kept open between calls.
#[derive(Debug)]
pub struct EtcdClient {
    address: SocketAddr,
    stream: Option<BufReader<TcpStream>>,
}

impl EtcdClient {
    /// A client of the member on the loopback port `port`.
    pub fn new(port: u16) -> EtcdClient {
        EtcdClient::at(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))
    }

    /// A client of the member at `address`.
    pub fn at(address: SocketAddr) -> EtcdClient {
        EtcdClient { address, stream: None }
    }

    /// Posts `body` to `path` and reads the JSON answer, waiting at most `limit`.
    /// After an error the connection is dropped, and the next call opens another.
    pub fn post(
        &mut self,
        path: &str,
        body: &serde_json::Value,
        limit: Duration,
    ) -> std::io::Result<serde_json::Value> {
        let reused = self.stream.is_some();
        let mut answer = self.exchange(path, body, limit);
        // A kept-alive connection the server has since closed fails at once:
        // a client opens another and asks again; a timeout it does not repeat.
        let timed_out = |error: &std::io::Error| matches!(error.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut);
        if reused && answer.as_ref().is_err_and(|error| !timed_out(error)) {
            self.stream = None;
            answer = self.exchange(path, body, limit);
        }
        if answer.is_err() {
            self.stream = None;
        }
        answer
    }

    fn exchange(
        &mut self,
        path: &str,
        body: &serde_json::Value,
        limit: Duration,
    ) -> std::io::Result<serde_json::Value> {
        if self.stream.is_none() {
            let stream = TcpStream::connect_timeout(&self.address, limit.max(Duration::from_millis(1)))?;
            stream.set_nodelay(true)?;
            self.stream = Some(BufReader::new(stream));
        }
        let Some(reader) = self.stream.as_mut() else { return Err(ErrorKind::NotConnected.into()) };
        reader.get_ref().set_read_timeout(Some(limit.max(Duration::from_millis(1))))?;
        let body = body.to_string();
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        reader.get_mut().write_all(request.as_bytes())?;
        let (length, chunked) = headers(reader)?;
        let mut bytes = Vec::new();
        if chunked {
            while let Some(chunk) = next_chunk(reader)? {
                bytes.extend_from_slice(&chunk);
            }
        } else {
            bytes.resize(length, 0);
            reader.read_exact(&mut bytes)?;
        }
        serde_json::from_slice(&bytes).map_err(|error| std::io::Error::new(ErrorKind::InvalidData, error))
    }
}

/// Reads a response's status line and headers: the body's length, or whether it is chunked.
fn headers(reader: &mut BufReader<TcpStream>) -> std::io::Result<(usize, bool)> {
    let (mut length, mut chunked) = (0, false);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Err(ErrorKind::UnexpectedEof.into());
        }
        let line = line.trim_end();
        if line.is_empty() {
            return Ok((length, chunked));
        }
        let lower = line.to_ascii_lowercase();
        if let Some(value) = lower.strip_prefix("content-length:") {
            length = value.trim().parse().unwrap_or(0);
        }
        if lower.starts_with("transfer-encoding:") && lower.contains("chunked") {
            chunked = true;
        }
    }
}

/// The next chunk of a chunked body, or `None` after the last.
fn next_chunk(reader: &mut BufReader<TcpStream>) -> std::io::Result<Option<Vec<u8>>> {
    let mut size = String::new();
    if reader.read_line(&mut size)? == 0 {
        return Err(ErrorKind::UnexpectedEof.into());
    }
    let size = usize::from_str_radix(size.trim().split(';').next().unwrap_or(""), 16)
        .map_err(|error| std::io::Error::new(ErrorKind::InvalidData, error))?;
    let mut chunk = vec![0; size + 2];
    reader.read_exact(&mut chunk)?;
    chunk.truncate(size);
    Ok((size > 0).then_some(chunk))
}

/// The version a member at `address` says it runs (`GET /version`), if it answers as etcd.
pub fn version(address: SocketAddr) -> Option<String> {
    let mut stream = TcpStream::connect_timeout(&address, Duration::from_secs(2)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    stream.write_all(b"GET /version HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut text = String::new();
    stream.read_to_string(&mut text).ok()?;
    let body = text.split("\r\n\r\n").nth(1)?;
    let json: serde_json::Value = serde_json::from_str(body).ok()?;
    json.get("etcdserver")?.as_str().map(str::to_owned)
}

/// The wall clock of the member at `address`, as the `Date` header of its
/// answer reads it (unix seconds): Go's HTTP server writes it from
/// `time.Now()`, the clock etcd's lessor reads too.
pub fn server_date(address: SocketAddr) -> Option<i64> {
    let mut stream = TcpStream::connect_timeout(&address, Duration::from_secs(2)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    stream.write_all(b"GET /version HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut text = String::new();
    stream.read_to_string(&mut text).ok()?;
    let head = text.split("\r\n\r\n").next()?;
    head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        if name.eq_ignore_ascii_case("date") { http_date(value.trim()) } else { None }
    })
}

/// An HTTP date (`Sat, 05 Dec 2026 19:24:31 GMT`) in unix seconds.
fn http_date(text: &str) -> Option<i64> {
    let fields: Vec<&str> = text.split([' ', ':']).collect();
    let [_, day, month, year, hours, minutes, seconds, "GMT"] = fields.as_slice() else { return None };
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let month = i64::try_from(MONTHS.iter().position(|name| name == month)?).ok()? + 1;
    let (year, day): (i64, i64) = (year.parse().ok()?, day.parse().ok()?);
    // Days from the civil date (Howard Hinnant's algorithm): March-based
    // years put the leap day last.
    let shifted_year = if month <= 2 { year - 1 } else { year };
    let era = shifted_year.div_euclid(400);
    let year_of_era = shifted_year - era * 400;
    let day_of_year = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    let days = era * 146_097 + day_of_era - 719_468;
    let (hours, minutes, seconds): (i64, i64, i64) =
        (hours.parse().ok()?, minutes.parse().ok()?, seconds.parse().ok()?);
    Some(days * 86_400 + hours * 3_600 + minutes * 60 + seconds)
}

/// Watches `key` from now on: calls `seen` with every event the gateway
/// streams (`{"result": {"events": [...]}}`), until it returns false or the
/// stream ends.
pub fn watch(port: u16, key: &str, mut seen: impl FnMut(&serde_json::Value) -> bool) -> std::io::Result<()> {
    let stream = TcpStream::connect(("127.0.0.1", port))?;
    let mut reader = BufReader::new(stream);
    let body = serde_json::json!({"create_request": {"key": encode(key), "prev_kv": true}}).to_string();
    let request = format!(
        "POST /v3/watch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    reader.get_mut().write_all(request.as_bytes())?;
    let (_, chunked) = headers(&mut reader)?;
    let mut pending = Vec::new();
    loop {
        let bytes = if chunked {
            match next_chunk(&mut reader)? {
                Some(bytes) => bytes,
                None => return Ok(()),
            }
        } else {
            let mut line = Vec::new();
            if reader.read_until(b'\n', &mut line)? == 0 {
                return Ok(());
            }
            line
        };
        pending.extend_from_slice(&bytes);
        // Each message is one JSON object; a chunk may hold part of one or several.
        let mut stream = serde_json::Deserializer::from_slice(&pending).into_iter::<serde_json::Value>();
        let mut used = 0;
        while let Some(Ok(message)) = stream.next() {
            used = stream.byte_offset();
            if !seen(&message) {
                return Ok(());
            }
        }
        pending.drain(..used);
    }
}

/// One operation as etcd calls: a lease grant and a create-if-absent
/// transaction (the unused lease revoked when the key is taken), a
/// keep-alive, or a revoke.
pub fn consensus_call(
    client: &mut EtcdClient,
    op: ConsensusOp,
    limit: Duration,
    time_scale: u32,
    leases: &mut BTreeMap<LeaseId, String>,
    next: &mut u32,
) -> std::io::Result<ConsensusReply> {
    consensus_call_on(LEASE_KEY, client, op, limit, time_scale, leases, next)
}

/// [`consensus_call`] on a lease key of the caller's (live mode's on an
/// etcd of the user's carries a prefix of its run).
pub fn consensus_call_on(
    lease_key: &str,
    client: &mut EtcdClient,
    op: ConsensusOp,
    limit: Duration,
    time_scale: u32,
    leases: &mut BTreeMap<LeaseId, String>,
    next: &mut u32,
) -> std::io::Result<ConsensusReply> {
    let key = encode(lease_key);
    let no_leader = |answer: &serde_json::Value| {
        answer.get("error").and_then(serde_json::Value::as_str).is_some_and(|error| error.contains("no leader"))
    };
    match op {
        ConsensusOp::Acquire { value, ttl_ms } => {
            let ttl_s = ttl_ms / u64::from(time_scale.max(1)) / 1_000;
            let granted = client.post("/v3/lease/grant", &serde_json::json!({"TTL": ttl_s.max(1)}), limit)?;
            if no_leader(&granted) {
                return Ok(ConsensusReply::NoLeader);
            }
            if granted.get("ID").is_none() {
                return Err(std::io::Error::other(format!("etcd granted no lease: {granted}")));
            }
            let id = granted.get("ID").and_then(serde_json::Value::as_str).unwrap_or("0").to_owned();
            let txn = serde_json::json!({
                "compare": [{"key": key, "target": "CREATE", "create_revision": "0"}],
                "success": [{"request_put": {"key": key, "value": encode(&value.to_string()), "lease": id}}],
                "failure": [{"request_range": {"key": key}}],
            });
            let answer = client.post("/v3/kv/txn", &txn, limit)?;
            if no_leader(&answer) {
                return Ok(ConsensusReply::NoLeader);
            }
            if answer.get("succeeded").and_then(serde_json::Value::as_bool) == Some(true) {
                let revision = number(&answer["header"]["revision"]);
                let lease = LeaseId(*next);
                *next += 1;
                leases.insert(lease, id);
                return Ok(ConsensusReply::Acquired { lease, revision: Token(revision) });
            }
            let _ = client.post("/v3/lease/revoke", &serde_json::json!({"ID": id}), limit);
            let holder = answer["responses"][0]["response_range"]["kvs"][0]["value"]
                .as_str()
                .and_then(decode)
                .and_then(|text| Owner::parse(&text));
            Ok(holder.map_or(ConsensusReply::NoLeader, |holder| ConsensusReply::Taken { holder }))
        }
        ConsensusOp::KeepAlive { lease } => {
            let Some(id) = leases.get(&lease) else { return Ok(ConsensusReply::LeaseNotFound) };
            let answer = client.post("/v3/lease/keepalive", &serde_json::json!({"ID": id}), limit)?;
            let ttl_s = number(&answer["result"]["TTL"]);
            if ttl_s == 0 {
                return Ok(ConsensusReply::LeaseNotFound);
            }
            Ok(ConsensusReply::Alive { ttl_ms: ttl_s * 1_000 * u64::from(time_scale.max(1)) })
        }
        ConsensusOp::Revoke { lease } => {
            let Some(id) = leases.remove(&lease) else { return Ok(ConsensusReply::LeaseNotFound) };
            let answer = client.post("/v3/lease/revoke", &serde_json::json!({"ID": id}), limit)?;
            if answer.get("error").is_some() {
                return Ok(ConsensusReply::LeaseNotFound);
            }
            Ok(ConsensusReply::Revoked)
        }
    }
}

/// A 64-bit number as the gateway writes it (a string), or 0.
pub fn number(value: &serde_json::Value) -> u64 {
    value.as_str().and_then(|text| text.parse().ok()).or_else(|| value.as_u64()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_http_date_reads_as_unix_seconds() {
        assert_eq!(http_date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        assert_eq!(http_date("Sat, 05 Dec 2026 19:24:31 GMT"), Some(1_796_498_671));
        assert_eq!(http_date("Tue, 29 Feb 2000 12:00:00 GMT"), Some(951_825_600));
        assert_eq!(http_date("yesterday"), None);
    }
}
