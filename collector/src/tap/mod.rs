//! `slotscope tap`: a RESP proxy in front of a cluster that records a real client's routing — which
//! node each command went to and what came back — into the same recording format as `record`.
//!
//! - [`registry`]: one listener per cluster node, bound at start or when a reply first names the
//!   node, and announced over a channel to the accept supervisor.
//! - [`listener`]: the accept supervisor: serves every listener announced, handing each client to
//!   the proxy.
//! - [`proxy`]: one client connection: bytes forwarded unchanged, node addresses in redirections
//!   and topology replies rewritten to the listeners (through the registry), one recording line
//!   per command.
//! - [`writer`]: the recording file (shared with the poller under `--poll`).
//! - [`discovery`]: the cluster's nodes at start, best effort.
//!
//! The sans-IO parts (frames, key positions, reply classes, rewriting, the lines) are in
//! `slotscope_core::tap`.

pub mod discovery;
pub mod listener;
pub mod proxy;
pub mod registry;
pub mod writer;

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use slotscope_core::recording::{End, EndReason, Header, Line, RecordOptions, SCHEMA_VERSION};
use slotscope_core::tap::rewrite::Listeners;
use slotscope_core::tap::TapSummary;
use slotscope_core::NodeAddr;
use tokio::sync::watch;

use crate::progress::Progress;
use crate::record::clock::now;
use crate::record::recorder::{self, RecordConfig};
use crate::store::sink::{what_failed, Salvaged, Sink};
use crate::tap::proxy::Shared;
use crate::tap::registry::{NodePorts, Registry};

/// What `tap` needs.
pub struct TapConfig {
    /// The node clients would otherwise connect to.
    pub upstream: NodeAddr,
    /// The first listener (stands for `upstream`).
    pub listen: SocketAddr,
    /// Ports of the other listeners.
    pub node_ports: NodePorts,
    /// Record first keys' names.
    pub record_keys: bool,
    /// Also poll the cluster as `record` does, into the same file.
    pub poll: Option<RecordConfig>,
    /// Stop after this long.
    pub duration: Option<Duration>,
    /// No messages on stderr.
    pub quiet: bool,
    /// Lines waiting for the writer, at most, before more are dropped and counted
    /// ([`writer::QUEUED_LINES`]).
    pub queued_lines: usize,
}

/// Why the tap could not run.
#[derive(Debug, thiserror::Error)]
pub enum TapError {
    /// The first listener could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// Writing the recording failed.
    #[error("writing the recording: {0}")]
    Write(#[from] std::io::Error),
    /// Writing the recording failed while the tap ran; the clients were served to the end.
    #[error("{}", stopped(source, kept.is_some()))]
    Stopped {
        /// The write's error.
        source: std::io::Error,
        /// What became of the file (`None`: it could not be ended).
        kept: Option<Salvaged>,
    },
}

fn stopped(source: &std::io::Error, ended: bool) -> String {
    let what = what_failed(source);
    format!(
        "{what} ({source}): the tap served its clients to the end, but its recording stopped \
         when the write failed; {}",
        if ended {
            "the file ends at its last flush, with an end line saying so"
        } else {
            "the file is cut at its last flush (read as cut short)"
        }
    )
}

/// The header of a tap recording.
fn header(cfg: &TapConfig) -> Header {
    match &cfg.poll {
        Some(poll) => recorder::header(poll, now()),
        None => Header {
            schema: SCHEMA_VERSION,
            collector: format!("slotscope {} tap", env!("CARGO_PKG_VERSION")),
            seed: cfg.upstream.clone(),
            started: now(),
            // No polling: the interval is the bucket the viewer's tracks use.
            options: RecordOptions {
                interval_ms: 1000,
                timeout_ms: 1000,
                duration_ms: cfg
                    .duration
                    .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
                tls: false,
                user: None,
                auth: false,
                client_list_every: 1,
                topology_every: None,
            },
            source: None,
        },
    }
}

/// Runs the tap until `stop` resolves or the duration passes; returns the tap lines' summary.
pub async fn run(
    cfg: TapConfig,
    mut sink: Box<dyn Sink>,
    stop: impl std::future::Future<Output = ()>,
) -> Result<TapSummary, TapError> {
    let first = tokio::net::TcpListener::bind(cfg.listen)
        .await
        .map_err(|source| TapError::Listen {
            addr: cfg.listen,
            source,
        })?;
    let bound = first.local_addr()?;
    let ip: IpAddr = bound.ip();
    let first_addr = NodeAddr::new(ip.to_string(), bound.port())
        .ok_or_else(|| std::io::Error::other("bad listen address"))?;
    sink.write_line(&Line::Header(header(&cfg)))?;
    sink.flush()?;

    let (mut registry, announced) = Registry::new(ip, bound.port(), cfg.node_ports);
    registry.insert(cfg.upstream.clone(), first, first_addr);
    for node in discovery::nodes(&cfg.upstream).await {
        let _ = registry.listener_for(&node);
    }
    let file: writer::SharedFile = Arc::new(Mutex::new(Some(sink)));
    let end = Arc::new(Mutex::new(None));
    let (records, queue) = writer::records(cfg.queued_lines);
    let writer = writer::spawn(file.clone(), queue, end.clone());
    let (stop_tx, stop_rx) = watch::channel(false);
    let shared = Arc::new(Shared {
        registry: Mutex::new(registry),
        records,
        next_conn: AtomicU64::new(0),
        record_keys: cfg.record_keys,
        stop: stop_rx.clone(),
        quiet: cfg.quiet,
    });
    let mut supervisor = listener::Supervisor::new(announced, shared.clone());
    supervisor.serve_announced();
    tokio::spawn(supervisor.run());
    if !cfg.quiet {
        eprintln!(
            "slotscope tap: point the client at {bound}; recording until Ctrl-C / SIGTERM{}",
            cfg.duration
                .map(|d| format!(" or {} s", d.as_secs_f64()))
                .unwrap_or_default()
        );
    }

    let poller = cfg.poll.clone().map(|poll| {
        let sink = writer::SharedSink {
            file: file.clone(),
            end: end.clone(),
        };
        let mut rx = stop_rx.clone();
        let quiet = cfg.quiet;
        tokio::spawn(async move {
            let mut progress = Progress::disabled();
            let stopped = async move {
                let _ = rx.wait_for(|s| *s).await;
            };
            if let Err(e) = recorder::record(poll, Box::new(sink), &mut progress, stopped).await {
                if !quiet {
                    eprintln!("slotscope tap: polling stopped: {e}");
                }
            }
        })
    });

    let deadline = async {
        match cfg.duration {
            Some(d) => tokio::time::sleep(d).await,
            None => std::future::pending().await,
        }
    };
    let reason = tokio::select! {
        () = stop => EndReason::Signal,
        () = deadline => EndReason::Duration,
    };
    let _ = stop_tx.send(true);
    if let Some(p) = poller {
        let _ = p.await;
    }
    end.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get_or_insert(End {
            t: now(),
            reason,
            rounds: 0,
        });
    // Every connection task drops its handle on `shared` when it has recorded its end; the writer
    // stops when the last one has.
    drop(shared);
    let written = tokio::task::spawn_blocking(move || writer.join())
        .await
        .map_err(std::io::Error::other)?
        .map_err(|_| std::io::Error::other("the writer thread panicked"))?;
    match written.error {
        Some(source) => Err(TapError::Stopped {
            source,
            kept: written.kept,
        }),
        None => Ok(written.summary),
    }
}

#[cfg(test)]
mod tests;
