//! The fidelity matrix's application on redis-rs (crate `redis`) 1.8.1: its async cluster client
//! (`ClusterClient` → `ClusterConnection`, features `cluster-async` + `tokio-comp`), meeting
//! docs/FIDELITY.md's "application contract" as `tests/scenarios/app.py` does for redis-py.
//! README.md says where each figure comes from (file and line of the crate's source).
//!
//! `app '<settings JSON>'`: one JSON line on stdout at the end, logs on stderr; exit 2 on bad
//! settings.

mod contract;
mod counting;
mod trace;

use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::Duration;

use redis::cluster::{ClusterClient, ClusterClientBuilder};
use redis::cluster_async::ClusterConnection;
use redis::{ErrorKind, ProtocolVersion, RedisError, RedisResult, Value};
use serde_json::{json, Map, Value as Json};
use tokio::sync::Mutex;

use contract::{log, now_ms, quantile_ms, Ended, Settings};
use counting::{Counted, Remap};

/// The release of `redis` this binary was built with, read from the Cargo.lock it was built
/// `--locked` against.
fn redis_version() -> &'static str {
    let lock = include_str!("../Cargo.lock");
    let mut lines = lock.lines();
    while let Some(l) = lines.next() {
        if l == "name = \"redis\"" {
            if let Some(v) = lines.next().and_then(|v| v.strip_prefix("version = \"")) {
                return v.trim_end_matches('"');
            }
        }
    }
    "unknown"
}

/// Milliseconds from a `library_options` value.
fn ms(name: &str, v: &Json) -> Result<Duration, String> {
    v.as_u64()
        .filter(|&n| n <= 3_600_000)
        .map(Duration::from_millis)
        .ok_or(format!(
            "library_options.{name}: milliseconds (0..=3600000)"
        ))
}

fn count(name: &str, v: &Json) -> Result<u64, String> {
    v.as_u64()
        .ok_or(format!("library_options.{name}: a non-negative integer"))
}

/// What the application decided besides the builder: the overall bound of a request.
struct Built {
    client: ClusterClient,
    /// `overall_response_timeout` in effect (`None`: unbounded).
    overall: Option<Duration>,
}

/// The client, from the settings and `library_options` (each by its `ClusterClientBuilder`
/// method's name, durations in milliseconds).
fn build(s: &Settings) -> Result<Built, String> {
    let response = Duration::from_secs_f64(s.socket_timeout_s);
    let mut b: ClusterClientBuilder =
        ClusterClient::builder(vec![format!("redis://{}", s.startup)])
            .response_timeout(response)
            .connection_timeout(Duration::from_secs_f64(s.connect_timeout_s));
    // `ClusterParams::from` (client.rs line 378): unset, the overall timeout is the response
    // timeout.
    let mut overall = Some(response);
    let (mut min_wait, mut max_wait) = (None, None);
    for (name, v) in &s.library_options {
        b = match name.as_str() {
            "retries" => b.retries(u32::try_from(count(name, v)?).map_err(|e| e.to_string())?),
            "overall_response_timeout" => {
                overall = if v.is_null() {
                    None
                } else {
                    Some(ms(name, v)?)
                };
                b.overall_response_timeout(overall)
            }
            "min_retry_wait" => {
                min_wait = Some(count(name, v)?);
                b.min_retry_wait(count(name, v)?)
            }
            "max_retry_wait" => {
                max_wait = Some(count(name, v)?);
                b.max_retry_wait(count(name, v)?)
            }
            "retry_wait_formula" => {
                let pair = v
                    .as_array()
                    .filter(|a| a.len() == 2)
                    .ok_or("library_options.retry_wait_formula: [factor, exponent_base]")?;
                b.retry_wait_formula(count(name, &pair[0])?, count(name, &pair[1])?)
            }
            "max_connection_attempts" => {
                let n = usize::try_from(count(name, v)?).map_err(|e| e.to_string())?;
                b.max_connection_attempts(
                    NonZeroUsize::new(n).ok_or("library_options.max_connection_attempts: > 0")?,
                )
            }
            "connection_concurrency_limit" => b.connection_concurrency_limit(
                usize::try_from(count(name, v)?).map_err(|e| e.to_string())?,
            ),
            "read_from_replicas" => match v.as_bool() {
                #[allow(deprecated)]
                Some(true) => b.read_from_replicas(),
                Some(false) => b,
                None => return Err("library_options.read_from_replicas: a boolean".into()),
            },
            "protocol" => match v.as_str() {
                Some("resp2") => b.use_protocol(ProtocolVersion::RESP2),
                Some("resp3") => b.use_protocol(ProtocolVersion::RESP3),
                _ => return Err("library_options.protocol: \"resp2\" or \"resp3\"".into()),
            },
            "response_timeout" | "connection_timeout" => {
                return Err(format!(
                    "library_options.{name}: set by the settings (socket_timeout_s, \
                     connect_timeout_s)"
                ))
            }
            other => return Err(format!("library_options.{other}: unknown")),
        };
    }
    if let (Some(lo), Some(hi)) = (min_wait, max_wait) {
        if lo > hi {
            return Err("library_options: min_retry_wait > max_retry_wait".into());
        }
    }
    if let Some(remap) = &s.address_remap {
        b = b.async_dns_resolver(Remap::new(remap)?);
    }
    let client = b
        .build()
        .map_err(|e| format!("ClusterClientBuilder::build: {e}"))?;
    Ok(Built { client, overall })
}

/// The error as the application sees it: the class (the `ErrorKind`, as redis-rs names it), a
/// finer kind and the message.
fn ended(e: &RedisError) -> Ended {
    let class = format!("{:?}", e.kind());
    let kind = if e.kind() == ErrorKind::Io {
        if e.is_timeout() {
            "Io (timed out)".to_owned()
        } else if e.is_connection_refusal() {
            "Io (connection refused)".to_owned()
        } else if e.is_connection_dropped() {
            "Io (connection dropped)".to_owned()
        } else {
            "Io".to_owned()
        }
    } else {
        class.clone()
    };
    Ended::Failed {
        class,
        kind,
        message: e.to_string(),
    }
}

/// The connection, made at the first command and again after a failed attempt (a client that
/// cannot reach its startup node at start fails its commands until it can).
struct Lazy {
    client: ClusterClient,
    conn: Mutex<Option<ClusterConnection<Counted>>>,
    attempts: std::sync::atomic::AtomicU64,
}

impl Lazy {
    async fn get(&self) -> RedisResult<ClusterConnection<Counted>> {
        let mut g = self.conn.lock().await;
        if let Some(c) = g.as_ref() {
            return Ok(c.clone());
        }
        self.attempts
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // `get_async_generic_connection` (client.rs line 1030): the cluster client over the
        // counted node connection; it returns once the initial connections and the first
        // `refresh_slots` are done (mod.rs lines 174-183, 1403-1417).
        let c = self
            .client
            .get_async_generic_connection::<Counted>()
            .await?;
        *g = Some(c.clone());
        Ok(c)
    }
}

async fn one(lazy: Arc<Lazy>, command: String, i: u64, key: String) -> Ended {
    let mut conn = match lazy.get().await {
        Ok(c) => c,
        Err(e) => return ended(&e),
    };
    let mut cmd = redis::cmd(&command.to_ascii_uppercase());
    match command.as_str() {
        "zadd" => cmd.arg(&key).arg(i).arg(format!("m:{}", i % 97)),
        "set" => cmd.arg(&key).arg(i.to_string()),
        _ => cmd.arg(&key),
    };
    let sent = contract::now_ms();
    match cmd.query_async::<Value>(&mut conn).await {
        Ok(_) => Ended::Ok,
        Err(e) => {
            // The request's end as the application saw it (its send is `t_ms - ms`).
            let ms = contract::now_ms().saturating_sub(sent);
            let kind = format!("{:?}", e.kind());
            trace::trace("failed", json!({"key": key, "ms": ms, "kind": kind}));
            ended(&e)
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let settings = match args.as_slice() {
        [one] => Settings::parse(one),
        _ => Err("usage: app '<settings JSON>'".to_owned()),
    };
    let s = match settings.and_then(|s| build(&s).map(|b| (s, b))) {
        Ok(x) => x,
        Err(e) => {
            log(e);
            std::process::exit(2);
        }
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let line = rt.block_on(run(s.0, s.1));
    println!("{line}");
    // The cluster client's background task and sockets must not keep the process alive.
    rt.shutdown_timeout(Duration::from_secs(2));
}

async fn run(s: Settings, built: Built) -> Json {
    let stop = contract::Stop::install();
    counting::install(&s.command, Some(s.client_name.clone()));
    let lazy = Arc::new(Lazy {
        client: built.client,
        conn: Mutex::new(None),
        attempts: 0.into(),
    });
    // The drain: a request ends within the overall timeout (`route_command`, mod.rs line
    // 302-305), a connect within the connection timeout, plus 5 s; without an overall timeout a
    // request may sleep between retries (≥ 1.28 s each): 60 s.
    let drain = match built.overall {
        Some(d) => d + Duration::from_secs_f64(s.connect_timeout_s) + Duration::from_secs(5),
        None => Duration::from_secs(60),
    };
    let command = s.command.clone();
    let lz = Arc::clone(&lazy);
    let mut m = contract::run(&s, &stop, drain, move |i, key| {
        one(Arc::clone(&lz), command.clone(), i, key)
    })
    .await;

    let cmd = s.command.clone();
    counting::with_counts(|c| {
        let per = |n: u64| json!({ cmd.clone(): n });
        m.insert("moved".into(), per(c.moved));
        m.insert("ask".into(), per(c.ask));
        m.insert("calls".into(), per(c.calls));
        let er: Map<String, Json> = if c.error_replies.is_empty() {
            Map::new()
        } else {
            let mut x = Map::new();
            x.insert(cmd.clone(), json!(c.error_replies.values().sum::<u64>()));
            x
        };
        m.insert("error_replies".into(), Json::Object(er));
        m.insert("error_reply_codes".into(), json!(c.error_replies));
        // refresh_slots stops at its first answered CLUSTER SLOTS (mod.rs lines 990-1000):
        // one answer is one refresh that succeeded.
        m.insert("initializations".into(), json!(c.cluster_slots_ok));
        m.insert("initializations_ok".into(), json!(c.cluster_slots_ok));
        m.insert("cluster_slots_calls".into(), json!(c.cluster_slots_calls));
        m.insert("new_connections".into(), json!(c.new_connections));
        m.insert("dials".into(), json!(c.dials));
        m.insert(
            "exchange_p50_ms".into(),
            json!(quantile_ms(&c.exchanges, 0.5)),
        );
    });
    m.insert(
        "connect_attempts".into(),
        json!(lazy.attempts.load(std::sync::atomic::Ordering::Relaxed)),
    );
    m.insert("client".into(), json!("redis-rs"));
    m.insert("version".into(), json!(redis_version()));
    m.insert("settings".into(), s.to_json());
    // The initial nodes are kept for the life of the connection (`InnerCore::initial_nodes`,
    // mod.rs line 535): redis-rs never loses its seed.
    m.insert("startup_nodes_end".into(), Json::Null);
    m.insert("ended_ms".into(), json!(now_ms()));
    Json::Object(m)
}
