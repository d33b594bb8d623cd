//! One connection to one node (TCP or TLS), logged in, speaking RESP2. The only place that writes
//! commands to a server, and so the place where the allowlist is enforced.

use std::sync::Arc;

use slotscope_core::recording::FailureKind;
use slotscope_core::resp::{self, Value};
use slotscope_core::NodeAddr;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::node::allowlist::{check_allowed, Command};
use crate::node::secret::Secret;
use crate::node::tls;

/// How to reach and log in to nodes.
#[derive(Clone, Debug)]
pub struct ConnectOptions {
    /// TLS configuration, when `--tls` is on.
    pub tls: Option<Arc<rustls::ClientConfig>>,
    /// ACL user name.
    pub user: Option<String>,
    /// Password.
    pub password: Option<Secret>,
}

/// Why talking to a node failed. Messages never contain command arguments.
#[derive(Debug, thiserror::Error)]
pub enum ConnError {
    /// TCP connect failed.
    #[error("connect to {addr}: {source}")]
    Connect {
        /// The address.
        addr: NodeAddr,
        /// Why.
        source: std::io::Error,
    },
    /// TLS handshake failed.
    #[error("TLS handshake with {addr}: {source}")]
    Tls {
        /// The address.
        addr: NodeAddr,
        /// Why.
        source: std::io::Error,
    },
    /// `AUTH` was refused.
    #[error("login refused: {0}")]
    Auth(String),
    /// The connection broke.
    #[error("{step}: connection lost: {source}")]
    Io {
        /// Command being sent or read.
        step: &'static str,
        /// Why.
        source: std::io::Error,
    },
    /// The reply was not valid RESP.
    #[error("{step}: bad reply: {source}")]
    Protocol {
        /// Command whose reply was bad.
        step: &'static str,
        /// Why.
        source: resp::RespError,
    },
    /// A command outside the allowlist was about to be sent (a bug; nothing was sent).
    #[error(transparent)]
    Forbidden(#[from] crate::node::allowlist::Forbidden),
}

impl ConnError {
    /// The failure kind recorded for this error.
    pub fn kind(&self) -> FailureKind {
        match self {
            ConnError::Connect { .. } | ConnError::Tls { .. } => FailureKind::Connect,
            ConnError::Auth(_) => FailureKind::Auth,
            ConnError::Io { .. } => FailureKind::Io,
            ConnError::Protocol { .. } | ConnError::Forbidden(_) => FailureKind::Protocol,
        }
    }

    /// The step that failed, for the failure event.
    pub fn step(&self) -> &'static str {
        match self {
            ConnError::Connect { .. } => "connect",
            ConnError::Tls { .. } => "tls",
            ConnError::Auth(_) => "auth",
            ConnError::Io { step, .. } | ConnError::Protocol { step, .. } => step,
            ConnError::Forbidden(_) => "allowlist",
        }
    }
}

trait Stream: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Stream for T {}

/// An open, logged-in connection.
pub struct Connection {
    stream: Box<dyn Stream>,
    buf: Vec<u8>,
}

impl Connection {
    /// Connects to `addr`, does the TLS handshake if configured, and logs in.
    pub async fn open(addr: &NodeAddr, opts: &ConnectOptions) -> Result<Connection, ConnError> {
        let tcp = TcpStream::connect((addr.host(), addr.port()))
            .await
            .map_err(|source| ConnError::Connect {
                addr: addr.clone(),
                source,
            })?;
        let _ = tcp.set_nodelay(true);
        let stream: Box<dyn Stream> = match &opts.tls {
            None => Box::new(tcp),
            Some(config) => {
                let name = tls::server_name(addr.host()).ok_or_else(|| ConnError::Tls {
                    addr: addr.clone(),
                    source: std::io::Error::other("host is not a valid TLS server name"),
                })?;
                let tls = tokio_rustls::TlsConnector::from(config.clone())
                    .connect(name, tcp)
                    .await
                    .map_err(|source| ConnError::Tls {
                        addr: addr.clone(),
                        source,
                    })?;
                Box::new(tls)
            }
        };
        let mut conn = Connection {
            stream,
            buf: Vec::with_capacity(16 * 1024),
        };
        if let Some(password) = &opts.password {
            let auth = Command::Auth {
                user: opts.user.as_deref(),
                password,
            };
            let reply = conn.pipeline(&[auth]).await?.remove(0);
            if let Value::Error(e) = reply {
                return Err(ConnError::Auth(e));
            }
        }
        Ok(conn)
    }

    /// Sends `commands` in one write and reads one reply per command, in order. Server error
    /// replies are returned as [`Value::Error`].
    pub async fn pipeline(&mut self, commands: &[Command<'_>]) -> Result<Vec<Value>, ConnError> {
        let mut out = Vec::new();
        for c in commands {
            let argv = c.argv();
            check_allowed(&argv)?;
            resp::encode_command(&argv, &mut out);
        }
        let first = commands.first().map_or("PING", Command::name);
        self.stream
            .write_all(&out)
            .await
            .map_err(|source| ConnError::Io {
                step: first,
                source,
            })?;
        let mut replies = Vec::with_capacity(commands.len());
        for c in commands {
            replies.push(self.read_reply(c.name()).await?);
        }
        Ok(replies)
    }

    async fn read_reply(&mut self, step: &'static str) -> Result<Value, ConnError> {
        loop {
            match resp::parse(&self.buf) {
                Ok(Some((v, used))) => {
                    self.buf.drain(..used);
                    return Ok(v);
                }
                Ok(None) => {}
                Err(source) => return Err(ConnError::Protocol { step, source }),
            }
            let mut chunk = [0u8; 16 * 1024];
            let n = self
                .stream
                .read(&mut chunk)
                .await
                .map_err(|source| ConnError::Io { step, source })?;
            if n == 0 {
                return Err(ConnError::Io {
                    step,
                    source: std::io::ErrorKind::UnexpectedEof.into(),
                });
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }
}
