//! A process's CPU time, as Linux's `/proc` says it, and the clock tick it is counted in.

use std::process::Command;

/// `getconf CLK_TCK`, 100 if that fails.
pub fn clock_ticks() -> u64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .filter(|&n: &u64| n > 0)
        .unwrap_or(100)
}

/// The CPU time process `pid` has used (`utime + stime` of `/proc/<pid>/stat`), in clock ticks;
/// `None` if unreadable.
pub fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the `(comm)` one start at field 3 (state); utime and stime are fields 14, 15.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| -> Option<u64> { fields.get(i - 3)?.parse().ok() };
    Some(tick(14)? + tick(15)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_s_cpu_time_is_read_and_does_not_go_back() {
        let me = std::process::id();
        let before = cpu_ticks(me).expect("our own /proc/PID/stat");
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        assert!(cpu_ticks(me).unwrap() >= before);
        assert!(clock_ticks() > 0);
        assert_eq!(cpu_ticks(u32::MAX), None);
    }
}
