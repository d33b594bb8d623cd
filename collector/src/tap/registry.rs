//! The tap's listeners by the node each stands for. The first is the `--listen` address and
//! stands for `--upstream`; a listener for any other node is bound the first time the node's
//! address appears in a reply (or in the discovery at start), on the same IP: on the next free
//! port after the previous listener's (`--node-ports next`), or on any free port the system gives
//! (`--node-ports any`). Each listener bound is announced over a channel to the accept supervisor
//! ([`crate::tap::listener`]), which serves it.

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Mutex;

use slotscope_core::tap::rewrite::Listeners;
use slotscope_core::NodeAddr;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

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

/// A listener just bound, not yet served.
pub struct NewListener {
    /// The bound socket.
    pub listener: TcpListener,
    /// The node it stands for.
    pub node: NodeAddr,
    /// Its own address, as written into rewritten replies.
    pub addr: NodeAddr,
}

/// The listeners bound so far, by the node each stands for.
pub struct Registry {
    ip: IpAddr,
    ports: NodePorts,
    last_port: u16,
    by_node: BTreeMap<NodeAddr, NodeAddr>,
    /// Where each new listener is announced (to the accept supervisor, outside any lock).
    announce: mpsc::UnboundedSender<NewListener>,
}

impl Registry {
    /// A registry whose listeners bind on `ip`, after `first_port`, and the receiving end of its
    /// announcements of new listeners.
    pub fn new(
        ip: IpAddr,
        first_port: u16,
        ports: NodePorts,
    ) -> (Registry, mpsc::UnboundedReceiver<NewListener>) {
        let (announce, announced) = mpsc::unbounded_channel();
        let registry = Registry {
            ip,
            ports,
            last_port: first_port,
            by_node: BTreeMap::new(),
            announce,
        };
        (registry, announced)
    }

    /// Adds an already bound listener for `node`, and announces it.
    pub fn insert(&mut self, node: NodeAddr, listener: TcpListener, addr: NodeAddr) {
        self.by_node.insert(node.clone(), addr.clone());
        // Fails only once the supervisor has stopped (shutdown): nothing is served any more.
        let _ = self.announce.send(NewListener {
            listener,
            node,
            addr,
        });
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

/// A registry behind a lock, as the proxies share it.
pub type SharedRegistry = Mutex<Registry>;
