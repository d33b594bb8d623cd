//! Free TCP ports on 127.0.0.1 for test servers.
//!
//! A cluster node listens on two ports: its client port `P` and its cluster bus `P + 10000`. Both
//! must be free, so candidates come from `20000..30000` (buses in `30000..40000`) and each is
//! bind-checked on both. A process-wide counter hands every candidate out once, so tests running in
//! parallel threads of one binary never race for the same port; the counter starts at an offset
//! derived from the process id, so test binaries running at the same time start far apart.

use std::net::{Ipv4Addr, TcpListener};
use std::sync::atomic::{AtomicU32, Ordering};

/// First client port handed out.
pub const FIRST_PORT: u16 = 20000;
/// Number of client ports in the pool (`FIRST_PORT..FIRST_PORT + PORT_POOL`).
pub const PORT_POOL: u16 = 10000;
/// Distance from a node's client port to its cluster bus port.
pub const BUS_OFFSET: u16 = 10000;

static NEXT: AtomicU32 = AtomicU32::new(0);

/// Where this process starts in the pool: blocks of 100 ports apart for consecutive pids.
fn start_offset() -> u32 {
    (std::process::id() % 100) * 100
}

/// Whether `port` can be bound on 127.0.0.1 right now.
fn bindable(port: u16) -> bool {
    TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_ok()
}

/// A client port `P` on 127.0.0.1 such that both `P` and `P + 10000` are free right now.
///
/// No two calls in one process return the same port (until the pool of 10000 wraps around).
///
/// # Panics
///
/// If no free pair is found in the whole pool.
pub fn free_port() -> u16 {
    for _ in 0..PORT_POOL {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let step = (start_offset() + n) % u32::from(PORT_POOL);
        let port = FIRST_PORT + u16::try_from(step).expect("step is below PORT_POOL");
        if bindable(port) && bindable(port + BUS_OFFSET) {
            return port;
        }
    }
    panic!(
        "no free port pair (P, P+10000) in {FIRST_PORT}..{}",
        FIRST_PORT + PORT_POOL
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_distinct_and_in_range() {
        let ports: Vec<u16> = (0..50).map(|_| free_port()).collect();
        let mut sorted = ports.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), ports.len());
        for p in ports {
            assert!((FIRST_PORT..FIRST_PORT + PORT_POOL).contains(&p));
        }
    }
}
