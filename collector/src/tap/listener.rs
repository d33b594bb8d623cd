//! The tap's listeners: one per cluster node, each forwarding its clients to that node. The first is
//! the `--listen` address and stands for `--upstream`; a listener for any other node is bound the
//! first time the node's address appears in a reply (or in the discovery at start), on the same IP:
//! on the next free port after the previous listener's (`--node-ports next`), or on any free port the
//! system gives (`--node-ports any`).

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};

use slotscope_core::tap::rewrite::Listeners;
use slotscope_core::NodeAddr;
use tokio::net::TcpListener;

use crate::tap::proxy::{self, Shared};

/// How listeners for nodes other than the first choose their port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum NodePorts {
    /// The next free port above the previous listener's (easy to read in a client's logs).
    Next,
    /// Any free port the system hands out.
    Any,
}

/// Tries at most this many ports above the previous one before falling back to any free port.
const NEXT_PORT_TRIES: u16 = 64;

/// The listeners bound so far, by the node each stands for.
pub struct Registry {
    ip: IpAddr,
    ports: NodePorts,
    last_port: u16,
    by_node: BTreeMap<NodeAddr, NodeAddr>,
    /// Listeners bound but not yet serving (their accept loops are started outside the lock).
    fresh: Vec<(TcpListener, NodeAddr, NodeAddr)>,
}

impl Registry {
    /// A registry whose listeners bind on `ip`, after `first_port`.
    pub fn new(ip: IpAddr, first_port: u16, ports: NodePorts) -> Registry {
        Registry {
            ip,
            ports,
            last_port: first_port,
            by_node: BTreeMap::new(),
            fresh: Vec::new(),
        }
    }

    /// Adds an already bound listener for `node`.
    pub fn insert(&mut self, node: NodeAddr, listener: TcpListener, addr: NodeAddr) {
        self.by_node.insert(node.clone(), addr.clone());
        self.fresh.push((listener, node, addr));
    }

    /// Whether `addr` is one of the tap's own listeners (a reply naming it needs no listener).
    fn is_listener(&self, addr: &NodeAddr) -> bool {
        self.by_node.values().any(|l| l == addr)
    }

    fn bind(&mut self) -> Option<(TcpListener, u16)> {
        if self.ports == NodePorts::Next {
            for k in 1..=NEXT_PORT_TRIES {
                let Some(port) = self.last_port.checked_add(k) else {
                    break;
                };
                if let Some(l) = bind(SocketAddr::new(self.ip, port)) {
                    self.last_port = port;
                    return Some((l, port));
                }
            }
        }
        let l = bind(SocketAddr::new(self.ip, 0))?;
        let port = l.local_addr().ok()?.port();
        Some((l, port))
    }

    /// Takes the listeners bound since the last call.
    pub fn take_fresh(&mut self) -> Vec<(TcpListener, NodeAddr, NodeAddr)> {
        std::mem::take(&mut self.fresh)
    }
}

fn bind(addr: SocketAddr) -> Option<TcpListener> {
    let l = std::net::TcpListener::bind(addr).ok()?;
    l.set_nonblocking(true).ok()?;
    TcpListener::from_std(l).ok()
}

impl Listeners for Registry {
    fn listener_for(&mut self, node: &NodeAddr) -> Option<NodeAddr> {
        if let Some(l) = self.by_node.get(node) {
            return Some(l.clone());
        }
        if self.is_listener(node) {
            return Some(node.clone());
        }
        let (listener, port) = self.bind()?;
        let addr = NodeAddr::new(self.ip.to_string(), port)?;
        self.insert(node.clone(), listener, addr.clone());
        Some(addr)
    }
}

/// Starts serving the listeners bound since the last call.
pub fn serve_fresh(shared: &Arc<Shared>) {
    let fresh = shared
        .registry
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take_fresh();
    for (listener, node, addr) in fresh {
        if !shared.quiet {
            eprintln!("slotscope tap: {addr} -> {node}");
        }
        tokio::spawn(accept_loop(listener, node, addr, shared.clone()));
    }
}

/// Accepts clients on one listener until shutdown; each client is served by its own task, so a
/// failing node or client never affects another.
async fn accept_loop(listener: TcpListener, node: NodeAddr, addr: NodeAddr, shared: Arc<Shared>) {
    let mut stop = shared.stop.clone();
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = stop.changed() => break,
        };
        match accepted {
            Ok((stream, peer)) => {
                tokio::spawn(proxy::serve(
                    stream,
                    peer,
                    node.clone(),
                    addr.clone(),
                    shared.clone(),
                ));
            }
            Err(e) => {
                // Out of file descriptors and the like: wait a little rather than spin.
                if !shared.quiet {
                    eprintln!("slotscope tap: accept on {addr}: {e}");
                }
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
        }
    }
}

/// A registry behind a lock, as the proxies share it.
pub type SharedRegistry = Mutex<Registry>;
