//! Polling one node: the only place that talks to a server. A poll sends the allowlisted commands
//! in one pipeline (`INFO`, `CLUSTER INFO`, `CLIENT LIST` when due) and turns the replies into core
//! values, stamped by [`crate::record::clock`]. The whole topology (`CLUSTER NODES`, `CLUSTER SHARDS` or
//! `SLOTS`) goes at the end of the same pipeline when it is due anyway, or in a second one on the
//! same connection when `CLUSTER INFO` says it changed ([`crate::record::topology_watch`]).

use std::time::Instant;

use slotscope_core::client_list::{parse_client_list, ClientEntry};
use slotscope_core::field_map::FieldMap;
use slotscope_core::info::{InfoReport, CLUSTER_INFO_SECTION};
use slotscope_core::recording::FailureKind;
use slotscope_core::resp::Value;
use slotscope_core::topology::TopologyView;
use slotscope_core::{NodeAddr, Timestamp};

use crate::node::allowlist::{Command, INFO_SECTIONS};
use crate::node::connection::{ConnError, ConnectOptions, Connection};
use crate::record::clock::now;
use crate::record::topology_watch::{TopologyWatch, DEFAULT_TOPOLOGY_EVERY};

/// A step of a poll that failed while the rest went on.
#[derive(Clone, Debug, PartialEq)]
pub struct StepFailure {
    /// The step (`connect`, `auth`, a command name, `timeout`).
    pub step: String,
    /// What kind of failure.
    pub kind: FailureKind,
    /// The error text (never a secret).
    pub error: String,
}

/// What one poll of one node gave.
#[derive(Clone, Debug, Default)]
pub struct Sample {
    /// When the replies arrived.
    pub t: Option<Timestamp>,
    /// Round trip of the pipeline, in microseconds.
    pub latency_us: u64,
    /// The node's view of the cluster, when asked this time.
    pub view: Option<TopologyView>,
    /// Its `INFO`.
    pub info: Option<InfoReport>,
    /// Its `CLIENT LIST`, when taken this time.
    pub clients: Option<Vec<ClientEntry>>,
    /// Steps that failed. A failure of the connection fails the whole poll.
    pub failures: Vec<StepFailure>,
}

impl Sample {
    /// Whether the poll got the node's replies (some steps may still have failed).
    pub fn is_ok(&self) -> bool {
        self.info.is_some() || self.view.is_some()
    }
}

/// A node's poller: its connection and what it learned about the server's abilities.
pub struct Poller {
    addr: NodeAddr,
    opts: ConnectOptions,
    conn: Option<Connection>,
    shards_unsupported: bool,
    multi_info_unsupported: bool,
    client_list_every: u64,
    /// Polls to go before the next `CLIENT LIST`.
    client_list_wait: u64,
    watch: TopologyWatch,
    /// Topology fetches sent since the last `INFO` reply read (they follow it in the pipeline).
    own_topology_calls: u32,
    /// `CLIENT LIST`s sent since the last `INFO` reply read (they follow it too).
    own_client_list_calls: u32,
}

/// Connections a `CLIENT LIST` may list per poll round on average: a node whose last list was
/// longer is asked every `ceil(n / 500)` rounds instead (5,000 connections: every 10th round),
/// so a crowded node costs about as much as one with 500 connections asked every round.
pub const CLIENT_LIST_ENTRIES_PER_ROUND: u64 = 500;

/// Rounds between two `CLIENT LIST`s of a node whose last one listed `n` connections, with
/// `every` rounds asked for.
pub fn client_list_every(every: u64, n: usize) -> u64 {
    let n = u64::try_from(n).unwrap_or(u64::MAX);
    every.max(n.div_ceil(CLIENT_LIST_ENTRIES_PER_ROUND)).max(1)
}

impl Poller {
    /// A poller for the node at `addr`; connects on the first poll.
    pub fn new(addr: NodeAddr, opts: ConnectOptions, client_list_every: u32) -> Poller {
        let watch = TopologyWatch::new(DEFAULT_TOPOLOGY_EVERY).phased(&addr.to_string());
        Poller {
            addr,
            opts,
            conn: None,
            shards_unsupported: false,
            multi_info_unsupported: false,
            client_list_every: u64::from(client_list_every.max(1)),
            client_list_wait: 0,
            watch,
            own_topology_calls: 0,
            own_client_list_calls: 0,
        }
    }

    /// Asks the whole topology at the latest every `every` polls (`1`: every poll; see
    /// [`crate::record::topology_watch`] for when it is asked sooner).
    pub fn with_topology_every(mut self, every: u32) -> Poller {
        self.watch = TopologyWatch::new(every).phased(&self.addr.to_string());
        self
    }

    /// The phase of the periodic topology fetches (they are the polls `p`, counted from 0, with
    /// `(p + phase) % every == 0`).
    #[cfg(test)]
    pub fn topology_phase(&self) -> u64 {
        self.watch.phase()
    }

    /// The next poll asks the whole topology whatever `CLUSTER INFO` says.
    pub fn ask_topology(&mut self) {
        self.watch.forget();
    }

    /// The node's address.
    pub fn addr(&self) -> &NodeAddr {
        &self.addr
    }

    /// Forgets the connection (after a timeout its state is unknown).
    pub fn reset(&mut self) {
        self.conn = None;
    }

    /// Polls the node once. Never fails: failures are part of the sample.
    pub async fn poll(&mut self) -> Sample {
        let take_clients = self.client_list_wait == 0;
        self.client_list_wait = self.client_list_wait.saturating_sub(1);
        match self.try_poll(take_clients).await {
            Ok(sample) => {
                if let Some(clients) = &sample.clients {
                    self.client_list_wait =
                        client_list_every(self.client_list_every, clients.len()) - 1;
                } else if take_clients {
                    // Not taken after all (the step failed): next poll again.
                    self.client_list_wait = 0;
                }
                sample
            }
            Err(e) => {
                self.conn = None;
                Sample {
                    t: Some(now()),
                    failures: vec![StepFailure {
                        step: e.step().to_owned(),
                        kind: e.kind(),
                        error: e.to_string(),
                    }],
                    ..Sample::default()
                }
            }
        }
    }

    async fn try_poll(&mut self, take_clients: bool) -> Result<Sample, ConnError> {
        if self.conn.is_none() {
            // A new connection: what the node said before may be stale.
            self.watch.forget();
            self.conn = Some(Connection::open(&self.addr, &self.opts).await?);
        }
        let conn = self.conn.as_mut().expect("connected above");
        let topo = if self.shards_unsupported {
            Command::ClusterSlots
        } else {
            Command::ClusterShards
        };
        let info_all: &[&str] = &["everything"];
        let info = if self.multi_info_unsupported {
            Command::Info(info_all)
        } else {
            Command::Info(INFO_SECTIONS)
        };
        let mut commands = vec![info, Command::ClusterInfo];
        // CLIENT LIST goes after INFO too: the next INFO says how many of its calls are ours.
        let lists_before = self.own_client_list_calls;
        if take_clients {
            commands.push(Command::ClientList);
            self.own_client_list_calls += 1;
        }
        // The topology goes after INFO, so the counters INFO reports never hold this poll's own
        // topology calls: the next INFO says how many it holds.
        let topology_due = self.watch.due();
        let calls_before = self.own_topology_calls;
        if topology_due {
            commands.push(Command::ClusterNodes);
            commands.push(topo);
            self.own_topology_calls += 1;
        }
        let started = Instant::now();
        let replies = conn.pipeline(&commands).await?;
        let latency_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        let mut sample = Sample {
            t: Some(now()),
            latency_us,
            ..Sample::default()
        };
        let mut failures = Vec::new();
        let mut replies = replies.into_iter();

        match replies.next() {
            Some(Value::Error(e)) => {
                let lower = e.to_ascii_lowercase();
                // Servers before 7.0 take one section only: ask for everything from now on.
                if !self.multi_info_unsupported
                    && (lower.contains("syntax") || lower.contains("wrong number of arguments"))
                {
                    self.multi_info_unsupported = true;
                }
                failures.push(server_error("INFO", e));
            }
            Some(v) => match v.as_text().map(|t| InfoReport::parse(&t)) {
                Some(Ok(info)) => sample.info = Some(info),
                Some(Err(e)) => failures.push(protocol_error("INFO", e.to_string())),
                None => failures.push(protocol_error("INFO", format!("unexpected reply {v}"))),
            },
            None => {}
        }

        // CLUSTER INFO: cluster_state and slot counts as this node sees them, kept with the INFO.
        match replies.next() {
            Some(Value::Error(e)) => failures.push(server_error("CLUSTER INFO", e)),
            Some(v) => match v.as_text().map(|t| InfoReport::parse(&t)) {
                Some(Ok(ci)) => {
                    if let Some(info) = sample.info.as_mut() {
                        let fields = ci.sections.values().flat_map(FieldMap::iter).collect();
                        info.sections
                            .insert(CLUSTER_INFO_SECTION.to_owned(), fields);
                    }
                }
                Some(Err(e)) => failures.push(protocol_error("CLUSTER INFO", e.to_string())),
                None => failures.push(protocol_error(
                    "CLUSTER INFO",
                    format!("unexpected reply {v}"),
                )),
            },
            None => {}
        }

        if take_clients {
            match replies.next() {
                Some(Value::Error(e)) => failures.push(server_error("CLIENT LIST", e)),
                Some(v) => match v.as_text().map(|t| parse_client_list(&t)) {
                    Some(Ok(clients)) => sample.clients = Some(clients),
                    Some(Err(e)) => failures.push(protocol_error("CLIENT LIST", e.to_string())),
                    None => failures.push(protocol_error(
                        "CLIENT LIST",
                        format!("unexpected reply {v}"),
                    )),
                },
                None => {}
            }
        }
        if let Some(info) = sample.info.as_mut() {
            info.own_topology_calls = Some(calls_before);
            self.own_topology_calls -= calls_before;
            info.own_client_list_calls = Some(lists_before);
            self.own_client_list_calls -= lists_before;
        }

        let changed = self.watch.changed(sample.info.as_ref());
        let topology_replies = if topology_due {
            Some((replies.next(), replies.next()))
        } else if changed {
            self.own_topology_calls += 1;
            let mut more = conn
                .pipeline(&[Command::ClusterNodes, topo])
                .await?
                .into_iter();
            Some((more.next(), more.next()))
        } else {
            None
        };
        match topology_replies {
            Some((nodes_reply, topo_reply)) => {
                let (view, complete) =
                    self.read_topology(topo, nodes_reply, topo_reply, &mut failures);
                match sample.info.as_ref() {
                    Some(info) if complete => self.watch.fetched(info),
                    // Asked again on the next poll.
                    _ => self.watch.forget(),
                }
                sample.view = view;
            }
            None => self.watch.skipped(),
        }
        sample.failures = failures;
        Ok(sample)
    }

    /// Reads the replies to `CLUSTER NODES` and `topo` (`CLUSTER SHARDS` or `SLOTS`) into a view,
    /// and whether both were read.
    fn read_topology(
        &mut self,
        topo: Command<'_>,
        nodes_reply: Option<Value>,
        topo_reply: Option<Value>,
        failures: &mut Vec<StepFailure>,
    ) -> (Option<TopologyView>, bool) {
        // CLUSTER NODES: own id, flags, migrating / importing slots.
        let nodes_view = match nodes_reply {
            Some(Value::Error(e)) => {
                failures.push(server_error("CLUSTER NODES", e));
                None
            }
            Some(v) => match v.as_text().map(|t| TopologyView::from_nodes(&t)) {
                Some(Ok(view)) => Some(view),
                Some(Err(e)) => {
                    failures.push(protocol_error("CLUSTER NODES", e.to_string()));
                    None
                }
                None => {
                    failures.push(protocol_error(
                        "CLUSTER NODES",
                        format!("unexpected reply {v}"),
                    ));
                    None
                }
            },
            None => None,
        };
        // CLUSTER SHARDS (or SLOTS): endpoints, health.
        let topo_name = topo.name();
        let main_view = match topo_reply {
            Some(Value::Error(e)) => {
                if !self.shards_unsupported && is_unknown_command(&e) {
                    // Older server: use CLUSTER SLOTS from the next poll on.
                    self.shards_unsupported = true;
                } else {
                    failures.push(server_error(topo_name, e));
                }
                None
            }
            Some(v) => {
                let parsed = if self.shards_unsupported {
                    TopologyView::from_slots(&v)
                } else {
                    TopologyView::from_shards(&v)
                };
                match parsed {
                    Ok(view) => Some(view),
                    Err(e) => {
                        failures.push(protocol_error(topo_name, e.to_string()));
                        None
                    }
                }
            }
            None => None,
        };
        let complete = main_view.is_some() && nodes_view.is_some();
        let mut view = match (main_view, nodes_view) {
            (Some(mut main), Some(nodes)) => {
                main.merge_nodes(&nodes);
                Some(main)
            }
            (Some(main), None) => Some(main),
            (None, nodes) => nodes,
        };
        if let Some(v) = view.as_mut() {
            v.fill_own_address(&self.addr);
        }
        (view, complete)
    }
}

fn is_unknown_command(e: &str) -> bool {
    let e = e.to_ascii_lowercase();
    e.contains("unknown subcommand") || e.contains("unknown command")
}

fn server_error(step: &str, e: String) -> StepFailure {
    StepFailure {
        step: step.to_owned(),
        kind: FailureKind::ServerError,
        error: e,
    }
}

fn protocol_error(step: &str, e: String) -> StepFailure {
    StepFailure {
        step: step.to_owned(),
        kind: FailureKind::Protocol,
        error: e,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};

    use slotscope_core::topology::TopologySource;
    use slotscope_core::Slot;

    use super::*;
    use crate::node::allowlist::check_allowed;
    use crate::node::scripted_server::{old_server_reply, scripted_server, MYID};

    fn opts() -> ConnectOptions {
        ConnectOptions {
            tls: None,
            user: None,
            password: None,
        }
    }

    #[tokio::test]
    async fn an_old_server_is_polled_through_cluster_slots_and_info_everything() {
        let (addr, seen) = scripted_server(old_server_reply).await;
        let mut poller = Poller::new(addr.clone(), opts(), 1);

        let first = poller.poll().await;
        let view = first.view.expect("a view from CLUSTER NODES alone");
        assert_eq!(view.source, TopologySource::Nodes);
        assert_eq!(view.assigned_slots(), 16384);
        assert_eq!(
            view.myself.as_ref().map(|m| m.as_str()),
            Some(MYID),
            "CLUSTER NODES names the node"
        );
        assert_eq!(
            view.node(view.myself.as_ref().unwrap()).unwrap().addr,
            Some(addr.clone()),
            "an empty own address is the polled one"
        );
        assert!(
            first.failures.iter().all(|f| f.step != "CLUSTER SHARDS"),
            "a missing CLUSTER SHARDS is no failure: {:?}",
            first.failures
        );
        assert!(first.failures.iter().any(|f| f.step == "INFO"));
        assert_eq!(first.clients.as_ref().map(Vec::len), Some(1));

        let second = poller.poll().await;
        assert!(second.failures.is_empty(), "{:?}", second.failures);
        let view = second.view.expect("a view");
        assert_eq!(view.source, TopologySource::Slots);
        assert_eq!(
            view.owner_of(Slot::new(42).unwrap()).map(|i| i.as_str()),
            Some(MYID)
        );
        let info = second.info.expect("INFO everything");
        assert_eq!(info.commandstats["get"].calls, 3);
        assert_eq!(
            info.get(slotscope_core::info::CLUSTER_INFO_SECTION, "cluster_state"),
            Some("ok")
        );

        let seen = seen.lock().unwrap();
        let names: Vec<String> = seen
            .iter()
            .map(|argv| {
                argv.iter()
                    .take(2)
                    .map(|w| String::from_utf8_lossy(w).to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        assert!(names.contains(&"CLUSTER SLOTS".to_owned()));
        assert_eq!(
            names.iter().filter(|n| *n == "CLUSTER SHARDS").count(),
            1,
            "CLUSTER SHARDS is not asked again once refused"
        );
        for argv in seen.iter() {
            assert_eq!(check_allowed(argv), Ok(()), "sent {names:?}");
        }
    }

    #[test]
    fn a_crowded_node_is_asked_for_its_clients_less_often() {
        assert_eq!(client_list_every(1, 0), 1);
        assert_eq!(client_list_every(1, 500), 1);
        assert_eq!(client_list_every(1, 501), 2);
        assert_eq!(client_list_every(1, 5000), 10);
        assert_eq!(
            client_list_every(4, 800),
            4,
            "what was asked for, when larger"
        );
        assert_eq!(client_list_every(0, 0), 1);
    }

    /// What the node of [`the_topology_is_asked_only_when_cluster_info_says_it_changed`] holds.
    static EPOCH: AtomicU64 = AtomicU64::new(1);
    static ASK: AtomicU64 = AtomicU64::new(0);
    static MOVED: AtomicU64 = AtomicU64::new(0);

    /// A Redis 7 node whose epoch and `ASK` count the test sets; `MOVED` grows on every `INFO`.
    fn modern_server_reply(argv: &[Vec<u8>]) -> Vec<u8> {
        let words: Vec<String> = argv
            .iter()
            .map(|w| String::from_utf8_lossy(w).to_ascii_uppercase())
            .collect();
        let bulk = |s: &str| format!("${}\r\n{s}\r\n", s.len()).into_bytes();
        let text = |s: &str| format!("${}\r\n{s}\r\n", s.len());
        match words.iter().map(String::as_str).collect::<Vec<_>>()[..] {
            ["CLUSTER", "SHARDS"] => format!(
                "*1\r\n*4\r\n{}*2\r\n:0\r\n:16383\r\n{}*1\r\n*10\r\n{}{}{}:7000\r\n{}{}{}{}{}{}",
                text("slots"),
                text("nodes"),
                text("id"),
                text(MYID),
                text("port"),
                text("ip"),
                text("127.0.0.1"),
                text("role"),
                text("master"),
                text("health"),
                text("online"),
            )
            .into_bytes(),
            ["CLUSTER", "NODES"] => bulk(&format!(
                "{MYID} 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-16383\n"
            )),
            ["CLUSTER", "INFO"] => bulk(&format!(
                "cluster_state:ok\r\ncluster_slots_assigned:16384\r\ncluster_slots_ok:16384\r\n\
                 cluster_known_nodes:1\r\ncluster_size:1\r\ncluster_current_epoch:{}\r\n\
                 cluster_my_epoch:1\r\n",
                EPOCH.load(Ordering::SeqCst)
            )),
            ["INFO", ..] => bulk(&format!(
                "# Server\r\nredis_version:7.0.15\r\n\r\n# Errorstats\r\n\
                 errorstat_ASK:count={}\r\nerrorstat_MOVED:count={}\r\n",
                ASK.load(Ordering::SeqCst),
                MOVED.fetch_add(100, Ordering::SeqCst) + 100
            )),
            ["CLIENT", "LIST"] => {
                bulk("id=7 addr=127.0.0.1:5000 fd=8 name= age=9 idle=0 cmd=get\n")
            }
            _ => b"-ERR unexpected command\r\n".to_vec(),
        }
    }

    #[tokio::test]
    async fn the_topology_is_asked_only_when_cluster_info_says_it_changed() {
        let (addr, seen) = scripted_server(modern_server_reply).await;
        let mut poller = Poller::new(addr, opts(), 1).with_topology_every(5);
        let asked_so_far = || {
            let seen = seen.lock().unwrap();
            let count = |sub: &[u8]| {
                seen.iter()
                    .filter(|argv| argv.len() == 2 && argv[0] == b"CLUSTER" && argv[1] == sub)
                    .count()
            };
            assert_eq!(count(b"NODES"), count(b"SHARDS"), "both or neither");
            assert_eq!(
                count(b"INFO"),
                seen.iter().filter(|a| a[0] == b"INFO").count()
            );
            count(b"NODES")
        };
        // Poll 0: the first; 1, 2: nothing changed (MOVED grows all along); 3: the current epoch
        // changes; 4: not again; 5: ASK grows (a slot mid-migration, no epoch changed); 6..11:
        // quiet. Besides, the node's periodic fetches: polls p with (p + phase) % 5 == 0.
        let script = [
            (1, 0),
            (1, 0),
            (1, 0),
            (2, 0),
            (2, 0),
            (2, 4),
            (2, 4),
            (2, 4),
            (2, 4),
            (2, 4),
            (2, 4),
            (2, 4),
        ];
        let phase = poller.topology_phase();
        let expected: Vec<bool> = (0..script.len() as u64)
            .map(|p| p == 0 || p == 3 || p == 5 || (p + phase).is_multiple_of(5))
            .collect();
        let mut asked = Vec::new();
        let mut own = Vec::new();
        let mut fetches = Vec::new();
        for (epoch, ask) in script {
            EPOCH.store(epoch, Ordering::SeqCst);
            ASK.store(ask, Ordering::SeqCst);
            let s = poller.poll().await;
            assert!(s.failures.is_empty(), "{:?}", s.failures);
            asked.push(s.view.is_some());
            own.push(s.info.and_then(|i| i.own_topology_calls));
            fetches.push(asked_so_far());
        }
        assert_eq!(asked, expected, "phase {phase}");
        let mut total = 0;
        let counted: Vec<usize> = expected
            .iter()
            .map(|&a| {
                total += usize::from(a);
                total
            })
            .collect();
        assert_eq!(fetches, counted);
        // Each INFO holds the fetches sent after the previous one.
        let calls_before: Vec<Option<u32>> = std::iter::once(0)
            .chain(asked.iter().map(|&a| u32::from(a)))
            .take(asked.len())
            .map(Some)
            .collect();
        assert_eq!(own, calls_before);
        // With the topology asked every poll: one fetch per poll.
        let (addr, seen) = scripted_server(modern_server_reply).await;
        let mut every = Poller::new(addr, opts(), 1).with_topology_every(1);
        for _ in 0..4 {
            assert!(every.poll().await.view.is_some());
        }
        let seen = seen.lock().unwrap();
        assert_eq!(
            seen.iter()
                .filter(|a| a[..] == [b"CLUSTER".to_vec(), b"NODES".to_vec()])
                .count(),
            4
        );
        for argv in seen.iter() {
            assert_eq!(check_allowed(argv), Ok(()));
        }
    }

    #[tokio::test]
    async fn a_refused_connection_is_a_connect_failure_not_an_error() {
        // Bind then drop a listener: its port is closed, so the connection is refused at once.
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let mut poller = Poller::new(NodeAddr::new("127.0.0.1", port).unwrap(), opts(), 1);
        let s = poller.poll().await;
        assert!(!s.is_ok());
        assert_eq!(s.failures.len(), 1);
        assert_eq!(s.failures[0].kind, FailureKind::Connect);
        assert_eq!(s.failures[0].step, "connect");
    }
}
