//! A small synchronous RESP client over a blocking TCP stream, built on the core parser.
//!
//! Server error replies (`-ERR …`, `-MOVED …`) come back as [`Value::Error`] from [`Client::cmd`];
//! only transport failures (refused, reset, timed out, unparsable bytes) are `io::Error`s.

use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use slotscope_core::resp::{encode_command, parse, Value};
use slotscope_core::NodeAddr;

/// Read and write timeout of a new client.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// A connection to one server.
#[derive(Debug)]
pub struct Client {
    addr: NodeAddr,
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Client {
    /// Connects to `addr` with [`DEFAULT_TIMEOUT`] for connecting, reading and writing.
    pub fn connect(addr: &NodeAddr) -> io::Result<Client> {
        Client::connect_timeout(addr, DEFAULT_TIMEOUT)
    }

    /// Connects to `addr` with `timeout` for connecting, reading and writing.
    pub fn connect_timeout(addr: &NodeAddr, timeout: Duration) -> io::Result<Client> {
        let sock = (addr.host(), addr.port())
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| io::Error::other(format!("{addr}: no socket address")))?;
        let stream = TcpStream::connect_timeout(&sock, timeout)?;
        stream.set_nodelay(true)?;
        let mut client = Client {
            addr: addr.clone(),
            stream,
            buf: Vec::new(),
        };
        client.set_timeout(timeout)?;
        Ok(client)
    }

    /// Connects to `addr` and, if `password` is given, authenticates as the `default` user.
    pub fn connect_auth(addr: &NodeAddr, password: Option<&str>) -> io::Result<Client> {
        let mut c = Client::connect(addr)?;
        if let Some(p) = password {
            c.auth("default", p)?;
        }
        Ok(c)
    }

    /// The address this client is connected to.
    pub fn addr(&self) -> &NodeAddr {
        &self.addr
    }

    /// Sets the read and write timeout.
    pub fn set_timeout(&mut self, timeout: Duration) -> io::Result<()> {
        self.stream.set_read_timeout(Some(timeout))?;
        self.stream.set_write_timeout(Some(timeout))
    }

    /// Sends one command and reads its reply. An error reply is `Ok(Value::Error(_))`.
    pub fn cmd<A: AsRef<[u8]>>(&mut self, args: &[A]) -> io::Result<Value> {
        let mut out = Vec::new();
        encode_command(args, &mut out);
        self.stream.write_all(&out)?;
        self.read_reply()
    }

    /// Sends one command and reads its reply; an error reply becomes an `io::Error` naming the
    /// server and the command.
    pub fn cmd_ok<A: AsRef<[u8]>>(&mut self, args: &[A]) -> io::Result<Value> {
        match self.cmd(args)? {
            Value::Error(e) => Err(io::Error::other(format!(
                "{}: `{}` answered error: {e}",
                self.addr,
                show_command(args)
            ))),
            v => Ok(v),
        }
    }

    /// Sends one command and returns its reply as text (simple, bulk or verbatim string).
    pub fn cmd_text<A: AsRef<[u8]>>(&mut self, args: &[A]) -> io::Result<String> {
        let v = self.cmd_ok(args)?;
        v.as_text().ok_or_else(|| {
            io::Error::other(format!(
                "{}: `{}` answered {v}, not text",
                self.addr,
                show_command(args)
            ))
        })
    }

    /// Sends all `commands` in one write and reads their replies in order (error replies are
    /// values, as with [`Client::cmd`]).
    pub fn pipeline<C: AsRef<[A]>, A: AsRef<[u8]>>(
        &mut self,
        commands: &[C],
    ) -> io::Result<Vec<Value>> {
        let mut out = Vec::new();
        for c in commands {
            encode_command(c.as_ref(), &mut out);
        }
        self.stream.write_all(&out)?;
        (0..commands.len()).map(|_| self.read_reply()).collect()
    }

    /// `AUTH user pass`; a rejected login is an `io::Error`.
    pub fn auth(&mut self, user: &str, pass: &str) -> io::Result<()> {
        self.cmd_ok(&["AUTH", user, pass]).map(drop)
    }

    /// Reads the next reply from the stream.
    pub fn read_reply(&mut self) -> io::Result<Value> {
        loop {
            match parse(&self.buf) {
                Ok(Some((v, used))) => {
                    self.buf.drain(..used);
                    return Ok(v);
                }
                Ok(None) => {}
                Err(e) => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("{}: bad reply: {e}", self.addr),
                    ))
                }
            }
            let mut chunk = [0u8; 16 * 1024];
            let n = self.stream.read(&mut chunk)?;
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("{}: connection closed", self.addr),
                ));
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }
}

/// A command as text for error messages (arguments lossily decoded, long ones cut, the
/// arguments of `AUTH` hidden).
fn show_command<A: AsRef<[u8]>>(args: &[A]) -> String {
    if args
        .first()
        .is_some_and(|a| a.as_ref().eq_ignore_ascii_case(b"AUTH"))
    {
        return "AUTH ***".to_owned();
    }
    let words: Vec<String> = args
        .iter()
        .take(8)
        .map(|a| {
            let s = String::from_utf8_lossy(a.as_ref());
            if s.chars().count() > 40 {
                format!("{}…", s.chars().take(40).collect::<String>())
            } else {
                s.into_owned()
            }
        })
        .collect();
    let more = if args.len() > 8 { " …" } else { "" };
    format!("{}{more}", words.join(" "))
}
