//! The client load: many idle-ish connections spread evenly over the nodes, each sending a `GET`
//! or `SET` every [`OP_PERIOD`] from a few threads.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use slotscope_core::resp::Value;
use slotscope_core::Slot;
use slotscope_tests::{Client, Cluster};

/// Load connections per node.
pub const CONNS_PER_NODE: usize = 16;
/// Threads driving the load connections.
pub const LOAD_THREADS: usize = 4;
/// Each load connection sends one command this often.
pub const OP_PERIOD: Duration = Duration::from_millis(100);
/// Distinct keys per node the load writes and reads.
const KEYS_PER_NODE: usize = 256;

/// What the load did, once stopped.
pub struct LoadFigures {
    /// Connections it opened.
    pub connections: usize,
    /// Commands answered with something other than an error.
    pub ok: u64,
    /// Commands answered with an error, or that failed on the connection.
    pub errors: u64,
    /// The first of those errors.
    pub first_error: Option<String>,
}

/// The running load: its threads and their connections.
pub struct Load {
    /// Set to stop the threads.
    stop: Arc<AtomicBool>,
    /// The threads; each returns (commands answered, commands failed, first error).
    handles: Vec<JoinHandle<(u64, u64, Option<String>)>>,
    /// Connections opened.
    pub connections: usize,
}

/// Keys owned by each node (by its index), from node 0's `CLUSTER SLOTS`.
fn keys_per_node(cluster: &Cluster) -> Vec<Vec<String>> {
    let owners = cluster.slots_seen_by(0);
    let mut keys = vec![Vec::new(); cluster.len()];
    let mut n = 0u64;
    while keys.iter().any(|k| k.len() < KEYS_PER_NODE) {
        assert!(n < 1_000_000, "could not find keys for every node");
        let key = format!("bench:{n}");
        n += 1;
        let slot = Slot::for_key(key.as_bytes());
        let owner = owners
            .iter()
            .find(|o| o.range.contains(slot))
            .and_then(|o| cluster.index_of(&o.id))
            .expect("every slot is served");
        if keys[owner].len() < KEYS_PER_NODE {
            keys[owner].push(key);
        }
    }
    keys
}

impl Load {
    /// Opens every connection (named `app-<node>-<k>`), then starts the threads. Each thread stops
    /// at `stop`, after `max_time`, or after `max_rounds` rounds, whichever comes first.
    pub fn start(cluster: &Cluster, max_time: Duration) -> Load {
        let keys = Arc::new(keys_per_node(cluster));
        let mut conns: Vec<Vec<(usize, Client)>> = (0..LOAD_THREADS).map(|_| Vec::new()).collect();
        let mut total = 0;
        for node in 0..cluster.len() {
            for k in 0..CONNS_PER_NODE {
                let mut c = Client::connect_timeout(&cluster.addr(node), Duration::from_secs(2))
                    .unwrap_or_else(|e| panic!("connect to node {node}: {e}"));
                c.cmd_ok(&["CLIENT", "SETNAME", &format!("app-{node}-{k}")])
                    .expect("CLIENT SETNAME");
                conns[total % LOAD_THREADS].push((node, c));
                total += 1;
            }
        }
        let stop = Arc::new(AtomicBool::new(false));
        let max_rounds = u64::try_from(max_time.as_millis() / OP_PERIOD.as_millis()).unwrap_or(0);
        let handles = conns
            .into_iter()
            .enumerate()
            .map(|(t, conns)| {
                let (stop, keys) = (stop.clone(), keys.clone());
                thread::Builder::new()
                    .name(format!("bench-load-{t}"))
                    .spawn(move || load_thread(t, conns, &keys, &stop, max_time, max_rounds))
                    .expect("spawn a load thread")
            })
            .collect();
        Load {
            stop,
            handles,
            connections: total,
        }
    }

    /// Stops the threads and adds up what they did.
    pub fn stop(self) -> LoadFigures {
        self.stop.store(true, Ordering::Relaxed);
        let mut f = LoadFigures {
            connections: self.connections,
            ok: 0,
            errors: 0,
            first_error: None,
        };
        for h in self.handles {
            let (ok, errors, first) = h.join().expect("load thread");
            f.ok += ok;
            f.errors += errors;
            f.first_error = f.first_error.or(first);
        }
        f
    }
}

/// One load thread: every OP_PERIOD, one command on each of its connections.
fn load_thread(
    t: usize,
    mut conns: Vec<(usize, Client)>,
    keys: &[Vec<String>],
    stop: &AtomicBool,
    max_time: Duration,
    max_rounds: u64,
) -> (u64, u64, Option<String>) {
    let started = Instant::now();
    // xorshift64: which key, GET or SET, and the value's length.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15 ^ (t as u64 + 1);
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let (mut ok, mut errors, mut first_error) = (0u64, 0u64, None);
    let mut round = 0u64;
    while !stop.load(Ordering::Relaxed) && round < max_rounds && started.elapsed() < max_time {
        let tick = started + OP_PERIOD * u32::try_from(round).unwrap_or(u32::MAX);
        round += 1;
        for (node, c) in &mut conns {
            let r = next();
            let key = &keys[*node][usize::try_from(r % KEYS_PER_NODE as u64).unwrap_or(0)];
            let reply = if (r >> 32) & 1 == 0 {
                let len = 16 + usize::try_from((r >> 40) % 256).unwrap_or(0);
                c.cmd(&["SET", key.as_str(), &"v".repeat(len)])
            } else {
                c.cmd(&["GET", key.as_str()])
            };
            match reply {
                Ok(Value::Error(e)) => {
                    errors += 1;
                    first_error.get_or_insert(e);
                }
                Ok(_) => ok += 1,
                Err(e) => {
                    errors += 1;
                    first_error.get_or_insert(e.to_string());
                }
            }
        }
        let next_tick = tick + OP_PERIOD;
        let now = Instant::now();
        if next_tick > now {
            thread::sleep(next_tick - now);
        }
    }
    (ok, errors, first_error)
}
