//! What redis-rs does, counted from inside it: the node connection type the cluster client is
//! generic over (`cluster_async::ClusterConnection<C>`, `C: ConnectionLike + Connect`), wrapped.
//! [`Counted`] calls the library's own `MultiplexedConnection` unchanged and only counts:
//!
//! - `Connect::connect_with_config` (redis 1.8.1 `src/cluster_handling/async_connection/mod.rs`
//!   line 1806; the library's implementation for `MultiplexedConnection`, line 1813, is called
//!   as it is): every connection the cluster client opens goes through it (`connect_and_check`,
//!   line 1829, from the initial connections, line 1348, `connect_check_and_add` for a redirect,
//!   line 953, and `get_or_create_conn`, line 1647, for the refresh and the background
//!   `reconnect_loop`). An attempt is a `dial`; one that returned a connection (TCP connected and
//!   the library's handshake answered) is a `new_connection`.
//! - `ConnectionLike::req_packed_command` (redis 1.8.1 `src/aio/mod.rs` line 77): every command
//!   the cluster client sends to one node (`try_cmd_request`, mod.rs line 794; `query_slots`,
//!   line 970; `PING`s of `check_connection`, line 1890). `CLUSTER SLOTS` is counted before it
//!   is sent (failed ones included); the application's command when a reply came back (a
//!   success or an error reply: `MOVED`, `ASK`, other), with the time from send to reply.
//!
//! The application's own addition: `CLIENT SETNAME` on each new connection (redis-rs 1.8.1 has
//! no client-name option for the cluster client: `get_connection_info`,
//! `src/cluster_handling/mod.rs` line 166, builds each node's `RedisConnectionInfo` with no name),
//! sent on the new connection without waiting for its reply, so the library's connect is timed
//! as it is; the multiplexed connection keeps order, so the server names the connection before
//! it runs any later command on it.

use std::collections::BTreeMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use redis::aio::{ConnectionLike, MultiplexedConnection};
use redis::cluster_async::Connect;
use redis::io::AsyncDNSResolver;
use redis::{AsyncConnectionConfig, Cmd, IntoConnectionInfo, RedisFuture, Value};

use crate::contract::log;
use crate::trace::{trace, tracing};
use serde_json::json;

/// The counts, read at the end.
#[derive(Debug, Default)]
pub struct Counts {
    /// `CLUSTER SLOTS` sent.
    pub cluster_slots_calls: u64,
    /// `CLUSTER SLOTS` answered with the slots (each ends one `refresh_slots`).
    pub cluster_slots_ok: u64,
    /// `connect_with_config` calls.
    pub dials: u64,
    /// Connections made.
    pub new_connections: u64,
    /// Replies to the application's command.
    pub calls: u64,
    /// `MOVED` replies to it.
    pub moved: u64,
    /// `ASK` replies to it.
    pub ask: u64,
    /// Other error replies to it, by their first word.
    pub error_replies: BTreeMap<String, u64>,
    /// Milliseconds from send to reply of the application's command, for a success, `MOVED` or
    /// `ASK`.
    pub exchanges: Vec<f64>,
}

/// What the wrapper needs to know, set once before the client connects.
struct Hooks {
    /// The application's command, as sent (`ZADD`).
    command: String,
    /// The connections' name.
    client_name: Option<String>,
    counts: Mutex<Counts>,
}

static HOOKS: OnceLock<Hooks> = OnceLock::new();

/// Installs the counters for `command` (upper or lower case) and the name each connection gets.
pub fn install(command: &str, client_name: Option<String>) {
    let _ = HOOKS.set(Hooks {
        command: command.to_ascii_uppercase(),
        client_name,
        counts: Mutex::new(Counts::default()),
    });
}

fn hooks() -> &'static Hooks {
    HOOKS.get().expect("counting::install first")
}

/// Reads the counts.
pub fn with_counts<R>(f: impl FnOnce(&Counts) -> R) -> R {
    f(&hooks().counts.lock().expect("counts"))
}

fn count(f: impl FnOnce(&mut Counts)) {
    f(&mut hooks().counts.lock().expect("counts"));
}

/// What a command sent to one node is, for the counts.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Sent {
    Application,
    ClusterSlots,
    Other,
}

fn classify(cmd: &Cmd) -> Sent {
    let mut args = cmd.args_iter().filter_map(|a| match a {
        redis::Arg::Simple(b) => Some(b),
        _ => None,
    });
    let first = args.next().unwrap_or_default();
    if first.eq_ignore_ascii_case(hooks().command.as_bytes()) {
        Sent::Application
    } else if first.eq_ignore_ascii_case(b"CLUSTER")
        && args
            .next()
            .is_some_and(|a| a.eq_ignore_ascii_case(b"SLOTS"))
    {
        Sent::ClusterSlots
    } else {
        Sent::Other
    }
}

/// The library's node connection, counted, with the address it was made to (for the trace).
#[derive(Clone)]
pub struct Counted(MultiplexedConnection, Arc<str>);

impl ConnectionLike for Counted {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        let sent = classify(cmd);
        if sent == Sent::ClusterSlots {
            count(|c| c.cluster_slots_calls += 1);
        }
        Box::pin(async move {
            let t0 = Instant::now();
            let result = self.0.req_packed_command(cmd).await;
            let ms = t0.elapsed().as_secs_f64() * 1000.0;
            if tracing() {
                let kind = match sent {
                    Sent::Application => "app",
                    Sent::ClusterSlots => "slots",
                    Sent::Other => "other",
                };
                let outcome = match &result {
                    Ok(Value::ServerError(e)) => e.code().to_owned(),
                    Ok(_) => "ok".to_owned(),
                    Err(e) => format!("{:?}", e.kind()),
                };
                // The application's successes are many: only their failures and redirects.
                if sent != Sent::Application || outcome != "ok" {
                    trace(
                        "cmd",
                        json!({"kind": kind, "node": &*self.1, "ms": ms, "outcome": outcome}),
                    );
                }
            }
            match (sent, &result) {
                (Sent::ClusterSlots, Ok(Value::Array(_))) => count(|c| c.cluster_slots_ok += 1),
                (Sent::Application, Ok(reply)) => count(|c| {
                    c.calls += 1;
                    match reply {
                        Value::ServerError(e) => match e.code() {
                            "MOVED" => {
                                c.moved += 1;
                                c.exchanges.push(ms);
                            }
                            "ASK" => {
                                c.ask += 1;
                                c.exchanges.push(ms);
                            }
                            code => *c.error_replies.entry(code.to_owned()).or_default() += 1,
                        },
                        _ => c.exchanges.push(ms),
                    }
                }),
                _ => {}
            }
            result
        })
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a redis::Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        // The cluster client sends pipelines only for the application's pipelines (none here).
        self.0.req_packed_commands(pipeline, offset, count)
    }

    fn get_db(&self) -> i64 {
        self.0.get_db()
    }
}

impl Connect for Counted {
    fn connect_with_config<'a, T>(info: T, config: AsyncConnectionConfig) -> RedisFuture<'a, Self>
    where
        T: IntoConnectionInfo + Send + 'a,
    {
        Box::pin(async move {
            count(|c| c.dials += 1);
            let info = info.into_connection_info()?;
            let node: Arc<str> = info.addr().to_string().into();
            let t0 = Instant::now();
            let made = <MultiplexedConnection as Connect>::connect_with_config(info, config).await;
            if tracing() {
                let outcome = match &made {
                    Ok(_) => "ok".to_owned(),
                    Err(e) => format!("{:?}", e.kind()),
                };
                let ms = t0.elapsed().as_secs_f64() * 1000.0;
                trace(
                    "connect",
                    json!({"node": &*node, "ms": ms, "outcome": outcome}),
                );
            }
            let conn = made?;
            count(|c| c.new_connections += 1);
            if let Some(name) = &hooks().client_name {
                let mut named = conn.clone();
                let mut setname = redis::cmd("CLIENT");
                setname.arg("SETNAME").arg(name);
                tokio::spawn(async move {
                    if let Err(e) = named.req_packed_command(&setname).await {
                        log(format!("CLIENT SETNAME: {e}"));
                    }
                });
            }
            Ok(Counted(conn, node))
        })
    }
}

/// `address_remap`: redis-rs has no address translation for every node (its `node_address_map`,
/// `ClusterClientBuilder::node_address_map` in `src/cluster_handling/client.rs` line 824, maps
/// given addresses one by one), so every host:port the library connects to resolves to this one
/// socket address, through the library's own `AsyncDNSResolver` hook (`src/io/dns.rs` line 6,
/// set by `ClusterClientBuilder::async_dns_resolver`, client.rs line 833, used for every node
/// connection, mod.rs line 1852). The library still names the nodes by their announced
/// addresses; only the TCP connection goes to the mapped one.
pub struct Remap(pub SocketAddr);

impl Remap {
    /// Resolves `host:port` once.
    pub fn new(addr: &str) -> Result<Remap, String> {
        addr.to_socket_addrs()
            .map_err(|e| format!("address_remap {addr}: {e}"))?
            .next()
            .map(Remap)
            .ok_or_else(|| format!("address_remap {addr}: no address"))
    }
}

impl AsyncDNSResolver for Remap {
    fn resolve<'a, 'b: 'a>(
        &'a self,
        _host: &'b str,
        _port: u16,
    ) -> RedisFuture<'a, Box<dyn Iterator<Item = SocketAddr> + Send + 'a>> {
        let addr = self.0;
        Box::pin(async move {
            Ok(Box::new(std::iter::once(addr)) as Box<dyn Iterator<Item = SocketAddr> + Send>)
        })
    }
}
