//! A real cluster of server processes, built with the cluster protocol itself (no `redis-cli`):
//! `CLUSTER ADDSLOTSRANGE`, `CLUSTER SET-CONFIG-EPOCH`, `CLUSTER MEET`, `CLUSTER REPLICATE`, and slot
//! migration with `CLUSTER SETSLOT … IMPORTING/MIGRATING/NODE` plus `MIGRATE`.
//!
//! Nodes are numbered in the order they were started: masters `0..masters`, then the replicas
//! (replica `k` of master `m` is `masters + m * replicas_per_master + k`), then nodes added later.
//! Every wait is bounded; a wait that runs out panics with what it last saw.

use std::collections::BTreeSet;
use std::fmt;
use std::io;
use std::thread;
use std::time::{Duration, Instant};

use slotscope_core::{NodeAddr, Slot, SlotRange, SLOT_COUNT};

use crate::client::Client;
use crate::kind::ServerKind;
use crate::router::Router;
use crate::server::{Server, ServerOptions, ServerState};
use crate::topology::{cluster_nodes, cluster_slots, info_field, NodeEntry, SlotOwner};

/// How long [`Cluster::wait_converged`] waits.
pub const CONVERGE_TIMEOUT: Duration = Duration::from_secs(20);

/// Keys moved by one `MIGRATE` during slot migration.
const MIGRATE_BATCH: usize = 100;

/// How a cluster is set up.
#[derive(Clone, Debug, Default)]
pub struct ClusterOptions {
    /// `requirepass` on every node (and `masterauth`, so replicas can sync); the harness then
    /// authenticates as `default`.
    pub password: Option<String>,
    /// ACL users on every node, each the rules of one `user` config line without the word `user`:
    /// `"slotscope on >secret ~* &* -@all +ping +info"`.
    pub acl_users: Vec<String>,
    /// Replicas started for each master.
    pub replicas_per_master: usize,
}

impl ClusterOptions {
    /// Options with the `default` user's password set.
    pub fn with_password(password: &str) -> ClusterOptions {
        ClusterOptions {
            password: Some(password.to_owned()),
            ..ClusterOptions::default()
        }
    }

    fn server_options(&self) -> ServerOptions {
        ServerOptions {
            password: self.password.clone(),
            masterauth: self.password.clone(),
            acl_users: self.acl_users.clone(),
            // Masters ping replicas through the replication stream every second, so a new replica's
            // offset becomes non-zero (and CLUSTER SLOTS lists it) without any write.
            extra: vec![("repl-ping-replica-period".into(), "1".into())],
        }
    }
}

/// A running cluster. Dropping it kills every node.
pub struct Cluster {
    kind: ServerKind,
    opts: ClusterOptions,
    nodes: Vec<Server>,
    ids: Vec<String>,
    /// For each node, the index of its master if it was started as a replica.
    master_of: Vec<Option<usize>>,
}

impl fmt::Debug for Cluster {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cluster")
            .field("kind", &self.kind)
            .field("nodes", &self.nodes)
            .field("ids", &self.ids)
            .finish()
    }
}

impl Cluster {
    /// Starts `masters` masters (plus replicas as `opts` asks), splits the 16384 slots evenly over
    /// the masters, joins everything and waits until the cluster has converged.
    ///
    /// # Panics
    ///
    /// If `masters` is 0, a server does not start, a command fails, or the cluster does not
    /// converge within [`CONVERGE_TIMEOUT`].
    pub fn start(kind: ServerKind, masters: usize, opts: ClusterOptions) -> Cluster {
        assert!(masters > 0, "a cluster needs at least one master");
        let total = masters * (1 + opts.replicas_per_master);
        let server_opts = opts.server_options();
        let nodes: Vec<Server> = (0..total)
            .map(|_| Server::start(kind, &server_opts))
            .collect();
        let mut master_of = vec![None; masters];
        for m in 0..masters {
            master_of.extend(std::iter::repeat_n(Some(m), opts.replicas_per_master));
        }
        let mut cluster = Cluster {
            kind,
            opts,
            nodes,
            ids: Vec::new(),
            master_of,
        };
        cluster.ids = (0..total).map(|i| cluster.fetch_id(i)).collect();

        cluster.add_slots_evenly(&(0..masters).collect::<Vec<_>>());
        cluster.meet();
        for i in 0..total {
            if let Some(m) = cluster.master_of[i] {
                let master_id = cluster.ids[m].clone();
                cluster.run(i, &["CLUSTER", "REPLICATE", &master_id]);
            }
        }
        cluster.wait_until("replicas follow their masters", |c| c.check_roles());
        cluster.wait_converged();
        cluster
    }

    /// Starts `masters` masters without replicas and without any slot: they know each other
    /// (`CLUSTER MEET`, distinct config epochs) but the cluster is not usable until
    /// [`Cluster::assign_slots`]. For recordings that start before the slots are assigned.
    ///
    /// # Panics
    ///
    /// If `masters` is 0, a server does not start, a command fails, or the nodes do not meet
    /// within [`CONVERGE_TIMEOUT`].
    pub fn start_unassigned(kind: ServerKind, masters: usize, opts: ClusterOptions) -> Cluster {
        assert!(masters > 0, "a cluster needs at least one master");
        let opts = ClusterOptions {
            replicas_per_master: 0,
            ..opts
        };
        let server_opts = opts.server_options();
        let nodes: Vec<Server> = (0..masters)
            .map(|_| Server::start(kind, &server_opts))
            .collect();
        let mut cluster = Cluster {
            kind,
            opts,
            nodes,
            ids: Vec::new(),
            master_of: vec![None; masters],
        };
        cluster.ids = (0..masters).map(|i| cluster.fetch_id(i)).collect();
        cluster.meet();
        cluster
    }

    /// Gives every node a distinct config epoch up front (as redis-cli does, instead of waiting
    /// for collision handling), makes each meet node 0 and waits until all know each other.
    fn meet(&self) {
        let total = self.nodes.len();
        for i in 0..total {
            self.run(i, &["CLUSTER", "SET-CONFIG-EPOCH", &(i + 1).to_string()]);
        }
        let first_port = self.nodes[0].port().to_string();
        for i in 1..total {
            self.run(i, &["CLUSTER", "MEET", "127.0.0.1", &first_port]);
        }
        self.wait_until("all nodes know each other", |c| c.check_membership());
    }

    /// Splits the 16384 slots evenly over the masters `owners`, in order (`CLUSTER
    /// ADDSLOTSRANGE` on each).
    fn add_slots_evenly(&self, owners: &[usize]) {
        let slots = u32::from(SLOT_COUNT);
        let n = u32::try_from(owners.len()).expect("few masters");
        for (k, &m) in owners.iter().enumerate() {
            let k = u32::try_from(k).expect("few masters");
            let first = slots * k / n;
            let last = slots * (k + 1) / n - 1;
            self.run(
                m,
                &[
                    "CLUSTER",
                    "ADDSLOTSRANGE",
                    &first.to_string(),
                    &last.to_string(),
                ],
            );
        }
    }

    /// Splits the 16384 slots evenly over the masters `owners` (`CLUSTER ADDSLOTSRANGE` on each)
    /// and waits until the cluster has converged. For a cluster from [`Cluster::start_unassigned`].
    ///
    /// # Panics
    ///
    /// If `owners` is empty, a slot is already assigned, or the cluster does not converge within
    /// [`CONVERGE_TIMEOUT`].
    pub fn assign_slots(&self, owners: &[usize]) {
        assert!(
            !owners.is_empty(),
            "assign the slots to at least one master"
        );
        self.add_slots_evenly(owners);
        self.wait_converged();
    }

    /// The server kind of every node.
    pub fn kind(&self) -> ServerKind {
        self.kind
    }

    /// The options the cluster was started with.
    pub fn options(&self) -> &ClusterOptions {
        &self.opts
    }

    /// The `default` user's password, if the cluster has one.
    pub fn password(&self) -> Option<&str> {
        self.opts.password.as_deref()
    }

    /// Every node, in index order.
    pub fn nodes(&self) -> &[Server] {
        &self.nodes
    }

    /// Node `i`.
    pub fn node(&self, i: usize) -> &Server {
        &self.nodes[i]
    }

    /// Number of nodes (killed ones included).
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Always false: a cluster has at least one node. Present for clippy's `len_without_is_empty`.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Address of node `i`.
    pub fn addr(&self, i: usize) -> NodeAddr {
        self.nodes[i].addr()
    }

    /// Address of the first running node, the one to hand a tool as its seed.
    ///
    /// # Panics
    ///
    /// If no node is running.
    pub fn seed(&self) -> NodeAddr {
        let i = self.running().next().expect("some node is running");
        self.addr(i)
    }

    /// Node id of node `i`.
    pub fn node_id(&self, i: usize) -> &str {
        &self.ids[i]
    }

    /// The index of the node with id `id`.
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.ids.iter().position(|x| x == id)
    }

    /// Indices of nodes started as masters (whether or not they hold slots now).
    pub fn masters(&self) -> Vec<usize> {
        (0..self.len())
            .filter(|&i| self.master_of[i].is_none())
            .collect()
    }

    /// Indices of the replicas of master `m`.
    pub fn replicas_of(&self, m: usize) -> Vec<usize> {
        (0..self.len())
            .filter(|&i| self.master_of[i] == Some(m))
            .collect()
    }

    /// A new connection to node `i`, authenticated when the cluster has a password.
    ///
    /// # Panics
    ///
    /// If the node cannot be reached.
    pub fn client(&self, i: usize) -> Client {
        self.nodes[i].client()
    }

    /// A cluster-aware client seeded with every running node.
    ///
    /// # Panics
    ///
    /// If no node answers `CLUSTER SLOTS`.
    pub fn router(&self) -> Router {
        let seeds: Vec<NodeAddr> = self.running().map(|i| self.addr(i)).collect();
        Router::connect(&seeds, self.password())
            .unwrap_or_else(|e| panic!("{} cluster: cannot route: {e}", self.kind))
    }

    /// `CLUSTER SLOTS` as node `i` reports it.
    ///
    /// # Panics
    ///
    /// If the node does not answer.
    pub fn slots_seen_by(&self, i: usize) -> Vec<SlotOwner> {
        cluster_slots(&mut self.client(i))
            .unwrap_or_else(|e| panic!("node {i} ({}): {e}", self.addr(i)))
    }

    /// The index of the master that node `i` says serves `slot`.
    pub fn owner_seen_by(&self, i: usize, slot: Slot) -> Option<usize> {
        self.slots_seen_by(i)
            .into_iter()
            .find(|o| o.range.contains(slot))
            .and_then(|o| self.index_of(&o.id))
    }

    /// Starts a new, empty master, introduces it with `CLUSTER MEET` and waits until every running
    /// node knows it and the cluster has converged. Returns its index.
    ///
    /// # Panics
    ///
    /// As [`Cluster::start`].
    pub fn add_master(&mut self) -> usize {
        let server = Server::start(self.kind, &self.opts.server_options());
        let i = self.nodes.len();
        let seed_port = self
            .node(self.running().next().expect("a running node"))
            .port();
        self.nodes.push(server);
        self.master_of.push(None);
        let id = self.fetch_id(i);
        self.ids.push(id);
        self.run(i, &["CLUSTER", "MEET", "127.0.0.1", &seed_port.to_string()]);
        self.wait_until("every node knows the new master", |c| c.check_membership());
        self.wait_converged();
        i
    }

    /// Starts a new node, introduces it with `CLUSTER MEET`, makes it a replica of master `m`
    /// (`CLUSTER REPLICATE`) and waits until every running node knows it and it follows `m`; when
    /// every slot has an owner, also until the cluster has converged (its replication link up and
    /// `CLUSTER SLOTS` listing it). Returns its index.
    ///
    /// # Panics
    ///
    /// As [`Cluster::start`].
    pub fn add_replica(&mut self, m: usize) -> usize {
        let server = Server::start(self.kind, &self.opts.server_options());
        let i = self.nodes.len();
        let seed_port = self.node(m).port();
        self.nodes.push(server);
        self.master_of.push(Some(m));
        let id = self.fetch_id(i);
        self.ids.push(id);
        self.run(i, &["CLUSTER", "MEET", "127.0.0.1", &seed_port.to_string()]);
        self.wait_until("every node knows the new replica", |c| c.check_membership());
        let master_id = self.ids[m].clone();
        self.run(i, &["CLUSTER", "REPLICATE", &master_id]);
        self.wait_until("the new replica follows its master", |c| c.check_roles());
        let all_owned = self
            .slots_seen_by(m)
            .iter()
            .map(|o| o.range.len())
            .sum::<usize>()
            == usize::from(SLOT_COUNT);
        if all_owned {
            self.wait_converged();
        }
        i
    }

    /// Asks replica `r` to take its master's place: `CLUSTER FAILOVER` with `mode` (`""`,
    /// `"FORCE"` or `"TAKEOVER"`), then [`Cluster::wait_promoted`].
    ///
    /// # Panics
    ///
    /// If the command fails or the promotion does not happen in time.
    pub fn failover(&mut self, r: usize, mode: &str) {
        let mut args = vec!["CLUSTER", "FAILOVER"];
        if !mode.is_empty() {
            args.push(mode);
        }
        self.run(r, &args);
        self.wait_promoted(r);
    }

    /// Waits until replica `r` is a master that serves slots in the view of every running node
    /// (after its master died, or a manual failover), for at most [`CONVERGE_TIMEOUT`]; then
    /// records the new roles: `r` a master, its old master (when it runs) its replica.
    ///
    /// # Panics
    ///
    /// If `r` was not started as a replica, or the promotion does not happen in time.
    pub fn wait_promoted(&mut self, r: usize) {
        let old = self.master_of[r].expect("wait_promoted is for a replica");
        let id = self.ids[r].clone();
        self.wait_until("the replica is promoted", |c| {
            for i in c.running() {
                let view = c.view(i)?;
                let e = view
                    .iter()
                    .find(|e| e.id == id)
                    .ok_or_else(|| format!("node {i} does not know node {r}"))?;
                if !e.is_master() || e.slots.is_empty() {
                    return Err(format!("node {i} sees node {r} as {:?}", e.flags));
                }
            }
            Ok(())
        });
        self.master_of[r] = None;
        self.master_of[old] = (self.nodes[old].state() == ServerState::Running).then_some(r);
        for m in self.master_of.iter_mut() {
            if *m == Some(old) {
                *m = Some(r);
            }
        }
    }

    /// Moves the slots of `range` from master `from` to master `to` with the per-slot protocol,
    /// keys included. See [`Cluster::migrate_slots_paced`].
    pub fn migrate_slots(&self, range: SlotRange, from: usize, to: usize) {
        self.migrate_slots_paced(range, from, to, 0, Duration::ZERO);
    }

    /// Moves the slots of `range` from master `from` to master `to`, holding every `pause_every`-th
    /// slot (0: none) open for `pause`, so that a migration can be stretched over time and watched
    /// mid-way: during a pause the slot is `MIGRATING` on the source and `IMPORTING` on the target,
    /// with none of its keys moved yet.
    ///
    /// For each slot: `CLUSTER SETSLOT s IMPORTING <from-id>` on the target, `CLUSTER SETSLOT s
    /// MIGRATING <to-id>` on the source, `CLUSTER GETKEYSINSLOT s 100` + `MIGRATE … KEYS …` until the
    /// slot is empty on the source, then `CLUSTER SETSLOT s NODE <to-id>` on the target, the source,
    /// and every other running master. Replicas learn the change by gossip: call
    /// [`Cluster::wait_converged`] to wait for that.
    ///
    /// # Panics
    ///
    /// If a command fails (for instance, a slot in `range` is not served by `from`).
    pub fn migrate_slots_paced(
        &self,
        range: SlotRange,
        from: usize,
        to: usize,
        pause_every: usize,
        pause: Duration,
    ) {
        assert_ne!(from, to, "migrate between two different masters");
        let (from_id, to_id) = (self.ids[from].clone(), self.ids[to].clone());
        let target = self.addr(to);
        let mut src = self.client(from);
        let mut dst = self.client(to);
        let others: Vec<usize> = self
            .masters()
            .into_iter()
            .filter(|&m| m != from && m != to && self.nodes[m].state() == ServerState::Running)
            .collect();
        for (n, slot) in range.slots().enumerate() {
            let s = slot.to_string();
            ok(&mut dst, &["CLUSTER", "SETSLOT", &s, "IMPORTING", &from_id]);
            ok(&mut src, &["CLUSTER", "SETSLOT", &s, "MIGRATING", &to_id]);
            if pause_every > 0 && (n + 1) % pause_every == 0 && !pause.is_zero() {
                // Hold the slot open, its keys still on the source: new keys go by ASK.
                thread::sleep(pause);
            }
            loop {
                let keys = ok(
                    &mut src,
                    &["CLUSTER", "GETKEYSINSLOT", &s, &MIGRATE_BATCH.to_string()],
                );
                let keys: Vec<Vec<u8>> = keys
                    .as_array()
                    .unwrap_or_default()
                    .iter()
                    .filter_map(|k| match k {
                        slotscope_core::resp::Value::Bulk(b) => Some(b.clone()),
                        other => other.as_text().map(String::into_bytes),
                    })
                    .collect();
                if keys.is_empty() {
                    break;
                }
                let mut args: Vec<Vec<u8>> = [
                    "MIGRATE",
                    target.host(),
                    &target.port().to_string(),
                    "",
                    "0",
                    "5000",
                ]
                .iter()
                .map(|a| a.as_bytes().to_vec())
                .collect();
                if let Some(p) = self.password() {
                    args.push(b"AUTH".to_vec());
                    args.push(p.as_bytes().to_vec());
                }
                args.push(b"KEYS".to_vec());
                args.extend(keys);
                let reply = src.cmd(&args).expect("MIGRATE reached the source");
                match reply.as_text().as_deref() {
                    Some("OK" | "NOKEY") => {}
                    _ => panic!(
                        "{}: MIGRATE of slot {s} from node {from} to node {to} answered {reply:?}",
                        self.kind
                    ),
                }
            }
            ok(&mut dst, &["CLUSTER", "SETSLOT", &s, "NODE", &to_id]);
            ok(&mut src, &["CLUSTER", "SETSLOT", &s, "NODE", &to_id]);
            for &m in &others {
                ok(
                    &mut self.client(m),
                    &["CLUSTER", "SETSLOT", &s, "NODE", &to_id],
                );
            }
        }
    }

    /// Waits until every running node reports `cluster_state:ok` and knows all nodes, no running
    /// node is seen as failing or in handshake, all running nodes agree which master serves each of
    /// the 16384 slots, every running replica has its replication link up, and every node's
    /// `CLUSTER SLOTS` lists exactly the running replicas of each master (servers list a replica only
    /// once it has replicated something; `repl-ping-replica-period 1` makes that quick).
    ///
    /// # Panics
    ///
    /// If that does not happen within [`CONVERGE_TIMEOUT`].
    pub fn wait_converged(&self) {
        self.wait_until("the cluster converges", |c| c.check_converged());
    }

    /// Stops node `i` with SIGSTOP.
    pub fn pause(&mut self, i: usize) {
        self.nodes[i].pause();
    }

    /// Continues node `i` with SIGCONT.
    pub fn resume(&mut self, i: usize) {
        self.nodes[i].resume();
    }

    /// Kills node `i` with SIGKILL.
    pub fn kill(&mut self, i: usize) {
        self.nodes[i].kill();
    }

    /// Indices of running nodes.
    fn running(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.len()).filter(|&i| self.nodes[i].state() == ServerState::Running)
    }

    /// Runs a command on node `i` and panics with context on any failure.
    fn run(&self, i: usize, args: &[&str]) -> slotscope_core::resp::Value {
        ok(&mut self.client(i), args)
    }

    /// `CLUSTER MYID` of node `i`.
    fn fetch_id(&self, i: usize) -> String {
        self.run(i, &["CLUSTER", "MYID"])
            .as_text()
            .unwrap_or_else(|| panic!("node {i}: CLUSTER MYID is not text"))
    }

    /// Calls `check` until it returns `Ok`, for at most [`CONVERGE_TIMEOUT`].
    fn wait_until(&self, what: &str, check: impl Fn(&Cluster) -> Result<(), String>) {
        let deadline = Instant::now() + CONVERGE_TIMEOUT;
        loop {
            let why = match check(self) {
                Ok(()) => return,
                Err(why) => why,
            };
            if Instant::now() > deadline {
                panic!(
                    "{} cluster: timed out after {CONVERGE_TIMEOUT:?} waiting until {what}: {why}",
                    self.kind
                );
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// `CLUSTER NODES` of running node `i`, as a check result.
    fn view(&self, i: usize) -> Result<Vec<NodeEntry>, String> {
        self.nodes[i]
            .try_client()
            .and_then(|mut c| cluster_nodes(&mut c))
            .map_err(|e| format!("node {i}: {e}"))
    }

    /// Whether the node with id `id` is one of ours and running.
    fn is_running_id(&self, id: &str) -> bool {
        self.index_of(id)
            .is_some_and(|j| self.nodes[j].state() == ServerState::Running)
    }

    /// Every node started as a replica follows the master it was started for.
    fn check_roles(&self) -> Result<(), String> {
        for i in self.running() {
            if let Some(m) = self.master_of[i] {
                let view = self.view(i)?;
                let me = view.iter().find(|e| e.has_flag("myself"));
                if me.and_then(|e| e.master.as_deref()) != Some(self.ids[m].as_str()) {
                    return Err(format!("node {i} does not follow node {m} yet"));
                }
            }
        }
        Ok(())
    }

    /// Every running node lists exactly the cluster's nodes, none in handshake.
    fn check_membership(&self) -> Result<(), String> {
        let expected: BTreeSet<&str> = self.ids.iter().map(String::as_str).collect();
        for i in self.running() {
            let view = self.view(i)?;
            let seen: BTreeSet<&str> = view.iter().map(|e| e.id.as_str()).collect();
            if seen != expected {
                return Err(format!(
                    "node {i} knows {} of {} nodes",
                    seen.len(),
                    expected.len()
                ));
            }
            if let Some(e) = view
                .iter()
                .find(|e| e.has_flag("handshake") || e.has_flag("noaddr"))
            {
                return Err(format!("node {i} sees {} as {:?}", e.id, e.flags));
            }
        }
        Ok(())
    }

    fn check_converged(&self) -> Result<(), String> {
        self.check_membership()?;
        let mut reference: Option<(usize, Vec<(SlotRange, String)>)> = None;
        for i in self.running() {
            let mut c = self.nodes[i]
                .try_client()
                .map_err(|e| format!("node {i}: {e}"))?;
            let info = c
                .cmd_text(&["CLUSTER", "INFO"])
                .map_err(|e| format!("node {i}: {e}"))?;
            let state = info_field(&info, "cluster_state");
            if state != Some("ok") {
                return Err(format!("node {i}: cluster_state:{}", state.unwrap_or("?")));
            }
            let known = info_field(&info, "cluster_known_nodes").and_then(|v| v.parse().ok());
            if known != Some(self.len()) {
                return Err(format!(
                    "node {i}: cluster_known_nodes {known:?} of {}",
                    self.len()
                ));
            }
            let view = self.view(i)?;
            for e in &view {
                let running = self.is_running_id(&e.id);
                if running && (e.has_flag("fail") || e.has_flag("fail?")) {
                    return Err(format!("node {i} sees {} as {:?}", e.id, e.flags));
                }
                if running && !e.has_flag("myself") && e.link != "connected" {
                    return Err(format!("node {i} has no link to {}", e.id));
                }
            }
            let mut owners: Vec<(SlotRange, String)> = view
                .iter()
                .filter(|e| e.is_master())
                .flat_map(|e| e.slots.iter().map(|r| (*r, e.id.clone())))
                .collect();
            owners.sort();
            let covered: usize = owners.iter().map(|(r, _)| r.len()).sum();
            if covered != usize::from(SLOT_COUNT) {
                return Err(format!("node {i}: {covered} slots assigned"));
            }
            match &reference {
                None => reference = Some((i, owners)),
                Some((r, theirs)) if *theirs != owners => {
                    return Err(format!("nodes {r} and {i} disagree on slot owners"));
                }
                Some(_) => {}
            }
            let me = view.iter().find(|e| e.has_flag("myself"));
            if let Some(master) = me.and_then(|e| e.master.as_deref()) {
                if self.is_running_id(master) {
                    let repl = c
                        .cmd_text(&["INFO", "replication"])
                        .map_err(|e| format!("node {i}: {e}"))?;
                    if info_field(&repl, "master_link_status") != Some("up") {
                        return Err(format!("node {i}: replication link to {master} not up"));
                    }
                }
            }
            // CLUSTER SLOTS lists a replica only once it has replicated something (offset > 0).
            let slots = cluster_slots(&mut c).map_err(|e| format!("node {i}: {e}"))?;
            for o in &slots {
                let mut expected: Vec<String> = view
                    .iter()
                    .filter(|e| e.master.as_deref() == Some(o.id.as_str()))
                    .filter(|e| self.is_running_id(&e.id))
                    .map(|e| e.addr.clone())
                    .collect();
                let mut listed: Vec<String> = o.replicas.iter().map(ToString::to_string).collect();
                expected.sort();
                listed.sort();
                if expected != listed {
                    return Err(format!(
                        "node {i}: CLUSTER SLOTS lists replicas {listed:?} for {}, expected {expected:?}",
                        o.range
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Runs `args` on `client` and panics with context on a transport failure or an error reply.
fn ok(client: &mut Client, args: &[&str]) -> slotscope_core::resp::Value {
    client
        .cmd_ok(args)
        .unwrap_or_else(|e: io::Error| panic!("{e}"))
}
