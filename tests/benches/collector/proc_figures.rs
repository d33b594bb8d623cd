//! What `/proc` and `getconf` say about the machine and a collector process: peak and current
//! RSS, CPU ticks, the clock tick rate and the CPU model.

use std::fs;
use std::time::Duration;

use crate::to_f64;

/// `getconf CLK_TCK`, 100 if that fails.
pub use slotscope_tests::cpu::clock_ticks;

/// The `model name` of `/proc/cpuinfo`, `unknown CPU` if there is none.
pub fn cpu_model() -> String {
    fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned())
}

/// `VmRSS` of process `pid` now, in KiB (0 if unreadable).
pub use slotscope_tests::memory::rss_kib;

/// What `/proc` said about a collector just before it was stopped.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProcFigures {
    /// Peak RSS (`VmHWM`), in KiB.
    pub hwm_kib: u64,
    /// CPU time used (`utime + stime`), in clock ticks.
    pub cpu_ticks: u64,
    /// Wall time since the process was started.
    pub wall: Duration,
}

impl ProcFigures {
    /// Reads `/proc/<pid>/status` and `/proc/<pid>/stat` of a process that has run for `wall`.
    pub fn read(pid: u32, wall: Duration) -> ProcFigures {
        let status = fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc/PID/status");
        let hwm_kib = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .expect("VmHWM in /proc/PID/status");
        ProcFigures {
            hwm_kib,
            cpu_ticks: slotscope_tests::cpu::cpu_ticks(pid)
                .expect("utime and stime in /proc/PID/stat"),
            wall,
        }
    }
}

/// CPU time as a percentage of one core over the wall time, with `clk_tck` ticks per second.
pub fn cpu_percent(p: &ProcFigures, clk_tck: u64) -> f64 {
    to_f64(p.cpu_ticks) / to_f64(clk_tck) / p.wall.as_secs_f64() * 100.0
}
