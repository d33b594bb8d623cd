//! One run's figures and how they are printed: the details after each run, and the summary
//! lines with the targets and whether they were met.

use slotscope_tests::ServerKind;

use crate::file_figures::{FileFigures, NodeCost};
use crate::proc_figures::{cpu_percent, ProcFigures};
use crate::to_f64;

/// Target: zstd bytes per node-hour.
const TARGET_ZSTD_PER_NODE_HOUR: f64 = 2e6;
/// Target: collector peak RSS in bytes.
const TARGET_RSS: f64 = 30e6;
/// Target: server milliseconds per node per poll (strictly below).
const TARGET_SERVER_MS: f64 = 1.0;

/// The figures of one run (one server kind).
pub struct RunResult {
    /// The server kind.
    pub kind: ServerKind,
    /// Its version line.
    pub version: String,
    /// Clock ticks per second, for the CPU figures.
    pub clk_tck: u64,
    /// The plain recording.
    pub plain: FileFigures,
    /// The zstd recording.
    pub zstd: FileFigures,
    /// The collector that wrote the plain recording.
    pub proc_plain: ProcFigures,
    /// The collector that wrote the zstd recording.
    pub proc_zstd: ProcFigures,
    /// Server time per node, from the plain recording.
    pub cost: Vec<NodeCost>,
}

/// Mean and maximum (0 for both if there are none).
pub fn mean_max(v: impl Iterator<Item = f64>) -> (f64, f64) {
    let v: Vec<f64> = v.collect();
    let mean = v.iter().sum::<f64>() / v.len().max(1) as f64;
    (mean, v.iter().copied().fold(0.0, f64::max))
}

/// `met` or `NOT met`.
fn verdict(ok: bool) -> &'static str {
    if ok {
        "met"
    } else {
        "NOT met"
    }
}

impl RunResult {
    /// Mean and maximum server milliseconds per node per poll.
    fn server_ms(&self) -> (f64, f64) {
        mean_max(self.cost.iter().map(NodeCost::ms_per_poll))
    }

    /// Prints the run's sizes, collector figures and server time per node; `cost_zstd` is the
    /// server time from the zstd recording.
    pub fn print_details(&self, cost_zstd: &[NodeCost]) {
        println!();
        for (name, f, p) in [
            ("plain", &self.plain, &self.proc_plain),
            ("zstd ", &self.zstd, &self.proc_zstd),
        ] {
            println!(
                "{name}: {} bytes, {} nodes, {:.1} s, {} rounds, {} poll failures -> {:.0} bytes/node-hour; \
                 collector VmHWM {} KiB, CPU {} ticks in {:.1} s = {:.2}% of a core",
                f.bytes,
                f.nodes,
                to_f64(f.span_ms) / 1000.0,
                f.rounds,
                f.failures,
                f.per_node_hour(),
                p.hwm_kib,
                p.cpu_ticks,
                p.wall.as_secs_f64(),
                cpu_percent(p, self.clk_tck)
            );
        }
        println!(
            "zstd / plain: {:.3} (size per node-hour)",
            self.zstd.per_node_hour() / self.plain.per_node_hour()
        );
        println!();
        println!("server time of the collector's commands, per node (from the plain recording; both collectors polled):");
        println!(
            "  {:<16} {:>6} {:>6} {:>9} {:>9}   per command: calls, usec/call",
            "node", "polls", "total", "usec", "ms/poll"
        );
        for c in &self.cost {
            let cmds: Vec<String> = c
                .per_cmd
                .iter()
                .map(|(n, &(calls, usec))| {
                    format!("{n} {calls}x{:.1}", to_f64(usec) / to_f64(calls.max(1)))
                })
                .collect();
            println!(
                "  {:<16} {:>6} {:>6} {:>9} {:>9.3}   {}",
                c.addr.to_string(),
                c.polls_recorded,
                c.polls_total,
                c.usec(),
                c.ms_per_poll(),
                cmds.join(", ")
            );
        }
        let (mean, max) = self.server_ms();
        let (zmean, zmax) = mean_max(cost_zstd.iter().map(NodeCost::ms_per_poll));
        println!(
            "  ms per node per poll: mean {mean:.3}, max {max:.3} (same window from the zstd recording: mean {zmean:.3}, max {zmax:.3})"
        );
    }

    /// Prints the run's summary lines with the targets and verdicts.
    pub fn print_summary(&self) {
        let rss = self.proc_plain.hwm_kib.max(self.proc_zstd.hwm_kib) * 1024;
        let (mean, max) = self.server_ms();
        let zstd = self.zstd.per_node_hour();
        println!("{} ({}):", self.kind, self.version);
        println!(
            "  plain size          {:>10.2} MB/node-hour",
            self.plain.per_node_hour() / 1e6
        );
        println!(
            "  zstd size           {:>10.2} MB/node-hour   target <= 2 MB: {}",
            zstd / 1e6,
            verdict(zstd <= TARGET_ZSTD_PER_NODE_HOUR)
        );
        println!(
            "  peak RSS            {:>10.2} MB (plain {} KiB, zstd {} KiB)   target <= 30 MB: {}",
            to_f64(rss) / 1e6,
            self.proc_plain.hwm_kib,
            self.proc_zstd.hwm_kib,
            verdict(to_f64(rss) <= TARGET_RSS)
        );
        println!(
            "  CPU                 {:>10.2} % of a core (plain), {:.2} % (zstd)",
            cpu_percent(&self.proc_plain, self.clk_tck),
            cpu_percent(&self.proc_zstd, self.clk_tck)
        );
        println!(
            "  server time         {:>10.3} ms/node/poll mean, {max:.3} max   target < 1 ms: {}",
            mean,
            verdict(max < TARGET_SERVER_MS)
        );
    }
}
