//! A cluster of Redis masters, each with a plain and a TLS client port, built with the cluster
//! protocol rather than [`crate::Cluster`]: with `tls-cluster yes` the bus port is `tls-port +
//! 10000` and nodes `MEET` at their TLS port. The certificates are a [`Pki`]'s. Valkey is not
//! covered: the embedded Valkey 8.1.8 build has no TLS support.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::thread::sleep;
use std::time::{Duration, Instant};

use slotscope_core::resp::Value;
use slotscope_core::{NodeAddr, SLOT_COUNT};

use crate::kind::ServerKind;
use crate::pki::Pki;
use crate::port::{free_port, BUS_OFFSET};
use crate::server::{Server, ServerOptions};
use crate::topology::info_field;

/// How long a cluster may take to form.
pub const FORM_TIMEOUT: Duration = Duration::from_secs(20);
/// How the cluster bus runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bus {
    /// `tls-cluster yes`: the bus is TLS and `CLUSTER SHARDS` reports `port` and `tls-port`.
    Tls,
    /// `tls-cluster no`: the bus is plain and Redis 7.0 reports only the plain `port`.
    Plain,
}

/// A cluster of Redis masters, each with a plain and a TLS client port.
pub struct TlsCluster {
    /// The certificates.
    pub pki: Pki,
    bus: Bus,
    nodes: Vec<Server>,
    tls_ports: Vec<u16>,
    ids: Vec<String>,
}

impl TlsCluster {
    /// Starts `masters` masters, splits the slots evenly, joins them over the bus and waits until
    /// every node reports `cluster_state:ok` and lists every node with its ports.
    pub fn start(masters: usize, bus: Bus) -> TlsCluster {
        let pki = Pki::new();
        let mut nodes = Vec::new();
        let mut tls_ports = Vec::new();
        for _ in 0..masters {
            // free_port checks P and P + 10000: the TLS port and, with tls-cluster, the bus.
            let tls_port = free_port();
            let path = |p: &Path| p.display().to_string();
            let extra: Vec<(String, String)> = [
                ("tls-port", tls_port.to_string()),
                ("tls-cert-file", path(&pki.cert)),
                ("tls-key-file", path(&pki.key)),
                ("tls-ca-cert-file", path(&pki.ca)),
                ("tls-auth-clients", "no".to_owned()),
                (
                    "tls-cluster",
                    if bus == Bus::Tls { "yes" } else { "no" }.to_owned(),
                ),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
            let opts = ServerOptions {
                extra,
                ..ServerOptions::default()
            };
            nodes.push(Server::start(ServerKind::Redis, &opts));
            tls_ports.push(tls_port);
        }
        let mut cluster = TlsCluster {
            pki,
            bus,
            nodes,
            tls_ports,
            ids: Vec::new(),
        };
        cluster.ids = (0..masters)
            .map(|i| {
                cluster
                    .run(i, &["CLUSTER", "MYID"])
                    .as_text()
                    .expect("CLUSTER MYID is text")
            })
            .collect();
        let slots = usize::from(SLOT_COUNT);
        for m in 0..masters {
            let first = slots * m / masters;
            let last = slots * (m + 1) / masters - 1;
            cluster.run(
                m,
                &[
                    "CLUSTER",
                    "ADDSLOTSRANGE",
                    &first.to_string(),
                    &last.to_string(),
                ],
            );
            cluster.run(m, &["CLUSTER", "SET-CONFIG-EPOCH", &(m + 1).to_string()]);
        }
        // With tls-cluster yes a node's announced port is its TLS port, its bus that port + 10000.
        let meet_port = match bus {
            Bus::Tls => cluster.tls_ports[0],
            Bus::Plain => cluster.nodes[0].port(),
        };
        for i in 1..masters {
            cluster.run(
                i,
                &[
                    "CLUSTER",
                    "MEET",
                    "127.0.0.1",
                    &meet_port.to_string(),
                    &(meet_port + BUS_OFFSET).to_string(),
                ],
            );
        }
        let deadline = Instant::now() + FORM_TIMEOUT;
        loop {
            let why = match cluster.check_formed() {
                Ok(()) => break,
                Err(why) => why,
            };
            if Instant::now() > deadline {
                let logs: String = cluster
                    .nodes
                    .iter()
                    .map(|n| format!("--- {} ---\n{}", n.addr(), n.log_tail(15)))
                    .collect();
                panic!("TLS cluster did not form within {FORM_TIMEOUT:?}: {why}\n{logs}");
            }
            sleep(Duration::from_millis(50));
        }
        cluster
    }

    /// Node `i`'s cluster id.
    pub fn id(&self, i: usize) -> &str {
        &self.ids[i]
    }

    /// Its nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether it has no node (never: it starts with at least one).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Runs `args` on node `i` over its plain port; panics on any failure or error reply.
    pub fn run(&self, i: usize, args: &[&str]) -> Value {
        self.nodes[i]
            .client()
            .cmd_ok(args)
            .unwrap_or_else(|e| panic!("node {i} ({}): {e}", self.nodes[i].addr()))
    }

    /// `127.0.0.1:<tls-port>` of node `i`.
    pub fn tls_addr(&self, i: usize) -> NodeAddr {
        NodeAddr::new("127.0.0.1", self.tls_ports[i]).expect("host is not empty")
    }

    /// Every node's TLS address.
    pub fn tls_addrs(&self) -> BTreeSet<NodeAddr> {
        (0..self.len()).map(|i| self.tls_addr(i)).collect()
    }

    /// Every node's plain address.
    pub fn plain_addrs(&self) -> BTreeSet<NodeAddr> {
        self.nodes.iter().map(Server::addr).collect()
    }

    /// The CA's certificate file, as `--cacert` takes it.
    pub fn ca(&self) -> String {
        self.pki.ca.display().to_string()
    }

    /// Every node: `cluster_state:ok`, knows all nodes, and its `CLUSTER SHARDS` lists each node
    /// online with its plain `port` and, with a TLS bus, its `tls-port`.
    fn check_formed(&self) -> Result<(), String> {
        let expected: BTreeMap<String, (u16, Option<u16>)> = (0..self.len())
            .map(|i| {
                let tls = (self.bus == Bus::Tls).then_some(self.tls_ports[i]);
                (self.ids[i].clone(), (self.nodes[i].port(), tls))
            })
            .collect();
        for (i, node) in self.nodes.iter().enumerate() {
            let mut c = node.try_client().map_err(|e| format!("node {i}: {e}"))?;
            let info = c
                .cmd_text(&["CLUSTER", "INFO"])
                .map_err(|e| format!("node {i}: {e}"))?;
            if info_field(&info, "cluster_state") != Some("ok") {
                return Err(format!("node {i}: cluster_state is not ok"));
            }
            let known: Option<usize> =
                info_field(&info, "cluster_known_nodes").and_then(|v| v.parse().ok());
            if known != Some(self.len()) {
                return Err(format!("node {i}: cluster_known_nodes {known:?}"));
            }
            let shards = c
                .cmd_ok(&["CLUSTER", "SHARDS"])
                .map_err(|e| format!("node {i}: {e}"))?;
            let seen = shard_ports(&shards).map_err(|e| format!("node {i}: {e}"))?;
            if seen != expected {
                return Err(format!(
                    "node {i}: CLUSTER SHARDS lists {seen:?}, expected {expected:?}"
                ));
            }
        }
        Ok(())
    }
}

/// From a `CLUSTER SHARDS` reply: each online node's id with its `port` and `tls-port`.
fn shard_ports(reply: &Value) -> Result<BTreeMap<String, (u16, Option<u16>)>, String> {
    let mut out = BTreeMap::new();
    for shard in reply.as_array().ok_or("CLUSTER SHARDS is not an array")? {
        let pairs = shard.as_pairs().ok_or("a shard is not a map")?;
        let nodes = pairs
            .iter()
            .find(|(k, _)| k.as_text().as_deref() == Some("nodes"))
            .and_then(|(_, v)| v.as_array())
            .ok_or("a shard without nodes")?;
        for node in nodes {
            let fields: BTreeMap<String, &Value> = node
                .as_pairs()
                .ok_or("a node is not a map")?
                .into_iter()
                .filter_map(|(k, v)| Some((k.as_text()?, v)))
                .collect();
            let text = |k: &str| fields.get(k).and_then(|v| v.as_text());
            let port = |k: &str| {
                fields
                    .get(k)
                    .and_then(|v| v.as_int())
                    .and_then(|p| u16::try_from(p).ok())
            };
            if text("health").as_deref() != Some("online") {
                return Err(format!("node {:?} is not online yet", text("id")));
            }
            let id = text("id").ok_or("a node without id")?;
            let plain = port("port").ok_or_else(|| format!("node {id} lacks port: {fields:?}"))?;
            out.insert(id, (plain, port("tls-port")));
        }
    }
    Ok(out)
}
