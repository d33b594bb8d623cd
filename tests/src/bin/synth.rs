//! `synth`: writes a large synthetic recording to stdout, for the viewer's performance measurement
//! (`web/e2e/bench/`, figures in `BENCHMARKS.md`).
//!
//! Every line is a real schema line: `INFO` and `CLIENT LIST` texts as a server writes them are
//! parsed by `slotscope_core`'s own parsers, topology views are deserialised into the recording
//! types, and each line is written through [`Line::to_json`]. The run is deterministic for a seed.
//!
//! The cluster: `--nodes` nodes (primaries and replicas in pairs), polled every `--interval-ms` for
//! `--hours`; a steady business load (get/set/zadd) with a daily swell, a MOVED storm with
//! connection churn and topology-refresh calls for ten minutes from the middle of the recording,
//! and a slot range moved between the first two shards at that moment. `CLIENT LIST` every 60
//! polls of a node, as `slotscope record --client-list-every 60` would.
//!
//! ```sh
//! cargo run --release -p slotscope-tests --bin synth -- --hours 24 --nodes 6 --interval-ms 1000 \
//!     | zstd -q -T0 -o target/synth-24h-6n.jsonl.zst
//! ```

use std::io::{BufWriter, Write};

use slotscope_core::client_list::parse_client_list;
use slotscope_core::info::InfoReport;
use slotscope_core::recording::{
    ClientListSample, End, EndReason, Header, InfoSample, Line, NodeDiscovered, PollRound,
    RecordOptions,
};
use slotscope_core::{NodeRef, Timestamp};

/// Options from the command line.
struct Options {
    hours: f64,
    nodes: usize,
    interval_ms: u64,
    seed: u64,
}

fn parse_args() -> Result<Options, String> {
    let mut o = Options {
        hours: 24.0,
        nodes: 6,
        interval_ms: 1000,
        seed: 1,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--hours" => o.hours = value()?.parse().map_err(|e| format!("--hours: {e}"))?,
            "--nodes" => o.nodes = value()?.parse().map_err(|e| format!("--nodes: {e}"))?,
            "--interval-ms" => {
                o.interval_ms = value()?.parse().map_err(|e| format!("--interval-ms: {e}"))?;
            }
            "--seed" => o.seed = value()?.parse().map_err(|e| format!("--seed: {e}"))?,
            "-h" | "--help" => {
                return Err(
                    "usage: synth [--hours 24] [--nodes 6] [--interval-ms 1000] [--seed 1] > FILE.jsonl"
                        .into(),
                )
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if o.nodes < 2
        || !o.nodes.is_multiple_of(2)
        || o.interval_ms == 0
        || o.hours.is_nan()
        || o.hours <= 0.0
    {
        return Err(
            "--nodes must be even and at least 2; --hours and --interval-ms positive".into(),
        );
    }
    Ok(o)
}

/// SplitMix64: a small deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, n)`.
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// One simulated node's cumulative counters.
#[derive(Default)]
struct Counters {
    get: u64,
    set: u64,
    zadd: u64,
    rejected: u64,
    slots_calls: u64,
    moved: u64,
    connections: u64,
    usec: u64,
}

fn node_ref(i: usize) -> NodeRef {
    serde_json::from_value(serde_json::json!({
        "addr": format!("10.0.0.{}:6379", i + 1),
        "id": format!("{:040x}", i + 1),
    }))
    .expect("a node reference")
}

/// The topology every node reports: shard k owns an even share of the slots; after `moved`, the
/// upper half of shard 0's range belongs to shard 1.
fn topology(nodes: usize, me: usize, t: u64, moved: bool) -> Line {
    let shards = nodes / 2;
    let per = 16384 / shards;
    let mut out = Vec::new();
    for k in 0..shards {
        let lo = k * per;
        let hi = if k + 1 == shards { 16383 } else { lo + per - 1 };
        let mut slots = vec![serde_json::json!([lo, hi])];
        if moved && k == 0 {
            slots = vec![serde_json::json!([lo, lo + per / 2 - 1])];
        }
        if moved && k == 1 {
            slots = vec![
                serde_json::json!([per / 2, per - 1]),
                serde_json::json!([lo, hi]),
            ];
        }
        let member = |i: usize, primary: bool| {
            let mut flags = vec![if primary { "master" } else { "slave" }];
            if i == me {
                flags.insert(0, "myself");
            }
            serde_json::json!({
                "id": format!("{:040x}", i + 1),
                "addr": format!("10.0.0.{}:6379", i + 1),
                "role": if primary { "primary" } else { "replica" },
                "health": "online",
                "flags": flags,
                "config_epoch": k + 1 + usize::from(moved),
                "link_connected": true,
            })
        };
        out.push(serde_json::json!({
            "slots": slots,
            "nodes": [member(2 * k, true), member(2 * k + 1, false)],
        }));
    }
    serde_json::from_value(serde_json::json!({
        "type": "topology",
        "t": t,
        "node": serde_json::to_value(node_ref(me)).expect("node"),
        "view": { "source": "shards", "myself": format!("{:040x}", me + 1), "shards": out },
    }))
    .expect("a topology line")
}

/// The node's `INFO` reply as the server writes it.
fn info_text(i: usize, c: &Counters, uptime: u64, clients: u64) -> String {
    format!(
        "# Server\r\nredis_version:7.2.4\r\nredis_mode:cluster\r\nuptime_in_seconds:{uptime}\r\nrun_id:{:040x}\r\n\
         # Clients\r\nconnected_clients:{clients}\r\ncluster_connections:{}\r\n\
         # Stats\r\ntotal_connections_received:{}\r\ntotal_commands_processed:{}\r\n\
         # Commandstats\r\n\
         cmdstat_get:calls={},usec={},usec_per_call=2.00,rejected_calls={},failed_calls=0\r\n\
         cmdstat_set:calls={},usec={},usec_per_call=3.00,rejected_calls=0,failed_calls=0\r\n\
         cmdstat_zadd:calls={},usec={},usec_per_call=4.00,rejected_calls=0,failed_calls=0\r\n\
         cmdstat_cluster|slots:calls={},usec={},usec_per_call=50.00,rejected_calls=0,failed_calls=0\r\n\
         # Errorstats\r\nerrorstat_MOVED:count={}\r\n\
         # Keyspace\r\ndb0:keys={},expires=0,avg_ttl=0\r\n",
        i + 1000,
        2 * 5,
        c.connections,
        c.get + c.set + c.zadd + c.slots_calls,
        c.get,
        c.usec / 3,
        c.rejected,
        c.set,
        c.usec / 3,
        c.zadd,
        c.usec / 3,
        c.slots_calls,
        c.slots_calls * 50,
        c.moved,
        100_000 + i * 17,
    )
}

/// The node's `CLIENT LIST` reply: a handful of application connections.
fn client_list_text(i: usize, n: u64, storm: bool) -> String {
    let mut s = String::new();
    for k in 0..n {
        let (lib, ver) = if k % 2 == 0 {
            ("redis-py", "5.0.0")
        } else {
            ("go-redis", "9.5.1")
        };
        let age = if storm && k % 2 == 0 { 1 } else { 3600 + k };
        s.push_str(&format!(
            "id={} addr=10.1.{}.{}:{} laddr=10.0.0.{}:6379 fd={} name= age={age} idle=0 flags=N db=0 sub=0 psub=0 \
             ssub=0 multi=-1 watch=0 qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=1024 rbp=0 obl=0 oll=0 \
             omem=0 tot-mem=1800 events=r cmd={} user=default redir=-1 resp=2 lib-name={lib} lib-ver={ver}\n",
            k + 10,
            i,
            k,
            40000 + k,
            i + 1,
            k + 8,
            if k % 2 == 0 { "get" } else { "zadd" },
        ));
    }
    s
}

fn main() {
    let o = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("synth: {e}");
            std::process::exit(2);
        }
    };
    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(1 << 20, stdout.lock());
    let mut emit = |line: Line| {
        // A closed pipe (`| head`) ends the run quietly.
        if writeln!(out, "{}", line.to_json()).is_err() {
            std::process::exit(0);
        }
    };
    let start: u64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z
    let rounds = (o.hours * 3_600_000.0 / o.interval_ms as f64).round() as u64;
    let storm = (rounds / 2, rounds / 2 + 600_000 / o.interval_ms);
    let header = Header {
        schema: 1,
        collector: "slotscope synth".into(),
        seed: "10.0.0.1:6379".parse().expect("an address"),
        started: Timestamp(start),
        options: RecordOptions {
            interval_ms: o.interval_ms,
            timeout_ms: o.interval_ms * 4 / 5,
            duration_ms: Some(rounds * o.interval_ms),
            tls: false,
            user: None,
            auth: false,
            client_list_every: 60,
            topology_every: None,
        },
        source: None,
    };
    emit(Line::Header(header));
    for i in 0..o.nodes {
        let via = if i == 0 {
            serde_json::json!({"kind": "seed"})
        } else {
            serde_json::json!({"kind": "topology", "from": "10.0.0.1:6379"})
        };
        let d: NodeDiscovered = serde_json::from_value(serde_json::json!({
            "t": start, "node": serde_json::to_value(node_ref(i)).expect("node"), "via": via,
        }))
        .expect("a node_discovered line");
        emit(Line::NodeDiscovered(d));
        emit(topology(o.nodes, i, start, false));
    }
    let mut rng = Rng(o.seed);
    let mut counters: Vec<Counters> = (0..o.nodes).map(|_| Counters::default()).collect();
    for r in 0..rounds {
        let t = start + r * o.interval_ms;
        let in_storm = r >= storm.0 && r < storm.1;
        if r == storm.0 {
            for i in 0..o.nodes {
                emit(topology(o.nodes, i, t + 5, true));
            }
        }
        // A daily swell: the load follows the hour of the day.
        let hour = ((r * o.interval_ms) / 3_600_000) % 24;
        let load = 800 + 40 * (12 - (hour as i64 - 12).abs()) as u64;
        for (i, c) in counters.iter_mut().enumerate() {
            let ti = t + 2 + i as u64;
            if i % 2 == 0 {
                let secs = o.interval_ms / 1000;
                let n = (load + rng.below(200)) * secs.max(1);
                c.get += n / 2;
                c.set += n / 4;
                c.zadd += n / 4;
                c.usec += n * 3;
                if in_storm {
                    let moved = n / 3;
                    c.rejected += moved;
                    c.moved += moved;
                    c.slots_calls += 20 + rng.below(10);
                    c.connections += 20 + rng.below(10);
                } else {
                    c.slots_calls += u64::from(rng.below(100) == 0);
                    c.connections += u64::from(rng.below(50) == 0);
                }
            }
            let clients = if i % 2 == 0 { 8 } else { 1 };
            let report = InfoReport::parse(&info_text(i, c, 86_400 + r, clients))
                .expect("the INFO text parses");
            emit(Line::Info(InfoSample {
                t: Timestamp(ti),
                node: node_ref(i),
                latency_us: 300 + rng.below(400),
                info: report,
            }));
            if (r + i as u64).is_multiple_of(60) {
                let clients = parse_client_list(&client_list_text(i, clients, in_storm))
                    .expect("the CLIENT LIST text parses");
                emit(Line::ClientList(ClientListSample {
                    t: Timestamp(ti + 1),
                    node: node_ref(i),
                    clients,
                }));
            }
        }
        emit(Line::PollRound(PollRound {
            t: Timestamp(t),
            elapsed_ms: 3 + rng.below(5),
            round: r,
            nodes: o.nodes as u32,
            ok: o.nodes as u32,
            failed: 0,
        }));
    }
    emit(Line::End(End {
        t: Timestamp(start + rounds * o.interval_ms),
        reason: EndReason::Duration,
        rounds,
    }));
    if out.flush().is_err() {
        std::process::exit(0);
    }
}
