//! A minimal RESP2 client: a command out as an array of bulk strings, one
//! reply back, written the way the lab's event log writes Redis replies
//! (`OK`, `(nil)`, `(integer) 3`, `"a:7f3a"`), so the two compare as text.

use locklab_engine::event::RedisCommand;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::Duration;

/// One connection to a server.
#[derive(Debug)]
pub struct Connection {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Connection {
    /// Connects to a server on the loopback interface. A reply that takes
    /// more than five seconds is an error, never a hang.
    pub fn open(port: u16) -> std::io::Result<Connection> {
        Connection::open_at(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))
    }

    /// Connects to a server at `address`, giving up after five seconds.
    pub fn open_at(address: SocketAddr) -> std::io::Result<Connection> {
        let stream = TcpStream::connect_timeout(&address, Duration::from_secs(5))?;
        stream.set_read_timeout(Some(Duration::from_secs(5)))?;
        stream.set_nodelay(true)?;
        Ok(Connection { reader: BufReader::new(stream.try_clone()?), writer: stream })
    }

    /// Sends a command and reads its reply, in the lab's notation; a failure
    /// is a message that names the command.
    pub fn call<T: AsRef<str>>(&mut self, args: &[T]) -> Result<String, String> {
        self.call_within(args, Duration::from_secs(5)).map_err(|error| {
            let words: Vec<&str> = args.iter().map(AsRef::as_ref).collect();
            format!("{}: {error}", words.join(" "))
        })
    }

    /// Sends a command and reads its reply, waiting at most `limit`; the
    /// error is the socket's, so a caller can tell a timeout
    /// (`WouldBlock`/`TimedOut`) from a refusal. After an error the
    /// connection is out of step and must be dropped.
    pub fn call_within<T: AsRef<str>>(&mut self, args: &[T], limit: Duration) -> std::io::Result<String> {
        let mut request = format!("*{}\r\n", args.len()).into_bytes();
        for arg in args {
            let arg = arg.as_ref();
            request.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
            request.extend_from_slice(arg.as_bytes());
            request.extend_from_slice(b"\r\n");
        }
        self.writer.set_read_timeout(Some(limit.max(Duration::from_millis(1))))?;
        self.writer.write_all(&request)?;
        self.reply()
    }

    /// Whether the server has closed the connection (a FIN or a reset is
    /// waiting on the socket), looked at without blocking: what a client's
    /// pool checks before it hands a connection out (go-redis's `connCheck`).
    pub fn peer_closed(&self) -> bool {
        if !self.reader.buffer().is_empty() {
            return false;
        }
        let stream = self.reader.get_ref();
        if stream.set_nonblocking(true).is_err() {
            return true;
        }
        let closed = match stream.peek(&mut [0_u8; 1]) {
            Ok(0) => true,
            Ok(_) => false,
            Err(error) => error.kind() != std::io::ErrorKind::WouldBlock,
        };
        closed || stream.set_nonblocking(false).is_err()
    }

    /// Sends one of the engine's commands as a real client does ([`RedisCommand::wire`]).
    pub fn send(&mut self, command: RedisCommand) -> Result<String, String> {
        self.call(&command.wire())
    }

    fn line(&mut self) -> std::io::Result<String> {
        let mut line = String::new();
        if self.reader.read_line(&mut line)? == 0 {
            return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "the server closed the connection"));
        }
        Ok(line.trim_end_matches(['\r', '\n']).to_owned())
    }

    fn reply(&mut self) -> std::io::Result<String> {
        let line = self.line()?;
        let (kind, rest) = line.split_at(line.len().min(1));
        let number = || rest.parse::<i64>().map_err(|_| bad(&line));
        match kind {
            "+" => Ok(rest.to_owned()),
            "-" => Ok(format!("(error) {rest}")),
            ":" => Ok(format!("(integer) {rest}")),
            "$" if number()? < 0 => Ok("(nil)".to_owned()),
            "$" => {
                let length = usize::try_from(number()?).map_err(|_| bad(&line))?;
                let mut bytes = vec![0; length + 2];
                self.reader.read_exact(&mut bytes)?;
                bytes.truncate(length);
                Ok(format!("\"{}\"", String::from_utf8_lossy(&bytes)))
            }
            "*" if number()? < 0 => Ok("(nil)".to_owned()),
            "*" => {
                let items: std::io::Result<Vec<String>> = (0..number()?).map(|_| self.reply()).collect();
                Ok(format!("[{}]", items?.join(", ")))
            }
            _ => Err(bad(&line)),
        }
    }
}

fn bad(line: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, format!("not a RESP reply: {line:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn replies_read_in_the_labs_notation() {
        // A server that answers each of five commands with a canned reply.
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let port = listener.local_addr().expect("bound").port();
        let server = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().expect("one client");
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            for reply in ["+OK\r\n", "$-1\r\n", ":7\r\n", "$6\r\na:0001\r\n", "-ERR wrong\r\n"] {
                // A command of one argument: `*1`, `$n`, the argument.
                for _ in 0..3 {
                    let mut line = String::new();
                    reader.read_line(&mut line).expect("a command line");
                }
                stream.write_all(reply.as_bytes()).expect("a reply");
            }
        });
        let mut connection = Connection::open(port).expect("connects");
        let replies: Vec<String> = (0..5).map(|_| connection.call(&["PING"]).expect("a reply")).collect();
        assert_eq!(replies, ["OK", "(nil)", "(integer) 7", "\"a:0001\"", "(error) ERR wrong"]);
        server.join().expect("the server ends");
    }
}
