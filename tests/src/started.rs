//! A guard for the processes a test started itself (an exporter, a Prometheus): each is killed by
//! its own PID and reaped when the guard drops, whatever way the test ends.

use std::process::Child;

/// Processes a test started, ended by PID when the guard drops.
#[derive(Debug, Default)]
pub struct Started(pub Vec<Child>);

impl Drop for Started {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
