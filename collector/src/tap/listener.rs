//! The tap's accept supervisor: it serves every listener the [registry](crate::tap::registry)
//! announces, each with an accept loop of its own that hands every client to
//! [`proxy::serve`], until the tap stops.

use std::sync::Arc;

use slotscope_core::NodeAddr;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

use crate::tap::proxy::{self, Shared};
use crate::tap::registry::NewListener;

/// The one task that starts serving the listeners the registry binds.
pub struct Supervisor {
    announced: mpsc::UnboundedReceiver<NewListener>,
    shared: Arc<Shared>,
}

impl Supervisor {
    /// A supervisor of the listeners announced on `announced`, whose clients share `shared`.
    pub fn new(announced: mpsc::UnboundedReceiver<NewListener>, shared: Arc<Shared>) -> Supervisor {
        Supervisor { announced, shared }
    }

    /// Starts serving the listeners announced so far (at start: before the client is told where
    /// to connect).
    pub fn serve_announced(&mut self) {
        while let Ok(new) = self.announced.try_recv() {
            self.serve(new);
        }
    }

    /// Serves each listener announced from now on, until the tap stops (then it lets go of the
    /// shared state, so that the recording can end).
    pub async fn run(mut self) {
        let mut stop = self.shared.stop.clone();
        loop {
            tokio::select! {
                biased;
                _ = stop.wait_for(|s| *s) => break,
                new = self.announced.recv() => match new {
                    Some(new) => self.serve(new),
                    None => break,
                },
            }
        }
    }

    fn serve(&self, new: NewListener) {
        if !self.shared.quiet {
            eprintln!("slotscope tap: {} -> {}", new.addr, new.node);
        }
        tokio::spawn(accept_loop(
            new.listener,
            new.node,
            new.addr,
            self.shared.clone(),
        ));
    }
}

/// Accepts clients on one listener until shutdown; each client is served by its own task, so a
/// failing node or client never affects another.
async fn accept_loop(listener: TcpListener, node: NodeAddr, addr: NodeAddr, shared: Arc<Shared>) {
    let mut stop = shared.stop.clone();
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            // `wait_for`, not `changed`: a loop started after the stop has nothing to wait for.
            _ = stop.wait_for(|s| *s) => break,
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
