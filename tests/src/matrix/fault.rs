//! The faults a case injects into node 0 while the application runs (see [`Fault`]), a failover
//! through node 0's replica ([`FAULT_REPLICA`]) included.

use std::thread::sleep;
use std::time::{Duration, Instant};

use crate::cluster::Cluster;
use crate::matrix::case::Fault;

/// Node every fault strikes: the application's startup node; the migration does not touch it.
pub const FAULT_NODE: usize = 0;
/// The recorder's seed: a node no fault strikes.
pub const RECORDER_SEED: usize = 1;
/// Node 0's replica, in the cases whose fault needs one ([`Fault::needs_replica`]).
pub const FAULT_REPLICA: usize = 4;

/// Injects `fault` into [`FAULT_NODE`] and returns what was done (for the case's event list).
/// A stall returns after the node was resumed.
///
/// # Panics
///
/// If a signal cannot be sent or node 0 does not answer `CLIENT LIST`.
pub fn inject(cluster: &mut Cluster, fault: Fault, app_name: &str) -> String {
    match fault {
        Fault::None => "no fault".to_owned(),
        Fault::Stall(ms) => {
            cluster.pause(FAULT_NODE);
            sleep(Duration::from_millis(ms));
            cluster.resume(FAULT_NODE);
            format!("node 0 stopped {ms} ms (SIGSTOP, SIGCONT)")
        }
        Fault::KillClients => {
            let killed = kill_clients(cluster, app_name);
            format!("{killed} connections of {app_name:?} on node 0 killed (CLIENT KILL ID)")
        }
        Fault::KillNode => {
            cluster.kill(FAULT_NODE);
            "node 0 killed (SIGKILL)".to_owned()
        }
        Fault::Failover => {
            cluster.kill(FAULT_NODE);
            let killed = Instant::now();
            cluster.wait_promoted(FAULT_REPLICA);
            format!(
                "node 0 killed (SIGKILL); its replica, node {FAULT_REPLICA}, promoted {:.1} s later",
                killed.elapsed().as_secs_f64()
            )
        }
        Fault::ManualFailover(mode) => {
            let asked = Instant::now();
            cluster.failover(FAULT_REPLICA, mode.arg());
            format!(
                "CLUSTER FAILOVER{}{} on node {FAULT_REPLICA}: promoted in {:.1} s, node 0 its replica",
                if mode.arg().is_empty() { "" } else { " " },
                mode.arg(),
                asked.elapsed().as_secs_f64()
            )
        }
    }
}

/// Closes every connection `CLIENT LIST` of node 0 shows with the name `name`; returns how many.
fn kill_clients(cluster: &Cluster, name: &str) -> usize {
    let mut c = cluster.client(FAULT_NODE);
    let list = c
        .cmd_text(&["CLIENT", "LIST"])
        .unwrap_or_else(|e| panic!("CLIENT LIST on node 0: {e}"));
    let ids = client_ids_named(&list, name);
    for id in &ids {
        // A connection that closed meanwhile is not an error: KILL then answers "No such client".
        let _ = c.cmd(&["CLIENT", "KILL", "ID", id]);
    }
    ids.len()
}

/// The `id=` of every `CLIENT LIST` line whose `name=` is `name`.
pub fn client_ids_named(list: &str, name: &str) -> Vec<String> {
    list.lines()
        .filter(|l| l.split(' ').any(|f| f.strip_prefix("name=") == Some(name)))
        .filter_map(|l| {
            l.split(' ')
                .find_map(|f| f.strip_prefix("id="))
                .map(str::to_owned)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_named_clients_only() {
        let list = "id=3 addr=127.0.0.1:1 name=matrix age=1\n\
                    id=4 addr=127.0.0.1:2 name=slotscope age=1\n\
                    id=9 addr=127.0.0.1:3 name=matrix age=0\n";
        assert_eq!(client_ids_named(list, "matrix"), ["3", "9"]);
        assert!(client_ids_named(list, "other").is_empty());
    }
}
