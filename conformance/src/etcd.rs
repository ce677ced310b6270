//! A minimal client for etcd's JSON gateway (`POST /v3/...` over HTTP/1.1,
//! keys and values base64, 64-bit numbers as strings), enough for a lease
//! lock: grant, a transaction that creates the key only if it is absent,
//! keep-alive, revoke, and a watch read as a stream.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
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
