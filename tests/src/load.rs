//! A background writer: one thread sending `SET <prefix><n> v<n>` through a [`Router`], bounded by
//! a number of operations and by time, stoppable at any moment, reporting how each write went.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use slotscope_core::resp::Value;
use slotscope_core::{Slot, SlotRange};

use crate::cluster::Cluster;
use crate::router::Router;

/// Error messages kept in a [`LoadReport`].
const ERROR_SAMPLES: usize = 10;

/// What a [`Load`] writes and for how long.
#[derive(Clone, Debug)]
pub struct LoadOptions {
    /// Key prefix; keys are `<prefix><n>` for n = 0, 1, 2, …
    pub prefix: String,
    /// Stop after this many writes (answered or failed).
    pub max_ops: u64,
    /// Stop after this much time.
    pub max_duration: Duration,
    /// Only write keys whose slot lies in this range (others are skipped, n still counts up).
    pub slots: Option<SlotRange>,
    /// Sleep between writes.
    pub interval: Duration,
    /// Read/write timeout of each connection.
    pub timeout: Duration,
}

impl Default for LoadOptions {
    fn default() -> LoadOptions {
        LoadOptions {
            prefix: "key:".to_owned(),
            max_ops: 50_000,
            max_duration: Duration::from_secs(20),
            slots: None,
            interval: Duration::ZERO,
            timeout: Duration::from_secs(2),
        }
    }
}

/// How the writes of a [`Load`] went.
#[derive(Clone, Debug, Default)]
pub struct LoadReport {
    /// Writes answered `OK`.
    pub ok: u64,
    /// `MOVED` redirects followed.
    pub moved: u64,
    /// `ASK` redirects followed.
    pub ask: u64,
    /// Writes that failed: transport errors, error replies, too many redirects.
    pub errors: u64,
    /// The first few error messages.
    pub error_samples: Vec<String>,
    /// Every `(key, value)` acknowledged with `OK`, in order.
    pub written: Vec<(String, String)>,
    /// How long the load ran.
    pub elapsed: Duration,
}

/// A running background writer. Dropping it stops it and waits for its thread.
#[derive(Debug)]
pub struct Load {
    stop: Arc<AtomicBool>,
    ops: Arc<AtomicU64>,
    handle: Option<JoinHandle<LoadReport>>,
}

impl Load {
    /// Starts writing to `cluster` through a new [`Cluster::router`].
    pub fn start(cluster: &Cluster, opts: LoadOptions) -> Load {
        Load::with_router(cluster.router(), opts)
    }

    /// Starts writing through `router`.
    pub fn with_router(mut router: Router, opts: LoadOptions) -> Load {
        router.set_timeout(opts.timeout);
        let stop = Arc::new(AtomicBool::new(false));
        let ops = Arc::new(AtomicU64::new(0));
        let (stop2, ops2) = (stop.clone(), ops.clone());
        let handle = thread::Builder::new()
            .name("slotscope-load".to_owned())
            .spawn(move || run(router, &opts, &stop2, &ops2))
            .expect("spawn the load thread");
        Load {
            stop,
            ops,
            handle: Some(handle),
        }
    }

    /// Writes attempted so far.
    pub fn ops(&self) -> u64 {
        self.ops.load(Ordering::Relaxed)
    }

    /// Whether the thread has ended (by reaching a bound or being stopped).
    pub fn is_finished(&self) -> bool {
        self.handle.as_ref().is_none_or(JoinHandle::is_finished)
    }

    /// Asks the thread to stop after its current write and returns its report.
    pub fn stop(mut self) -> LoadReport {
        self.stop.store(true, Ordering::Relaxed);
        self.finish()
    }

    /// Waits until the thread reaches one of its bounds and returns its report.
    pub fn join(mut self) -> LoadReport {
        self.finish()
    }

    fn finish(&mut self) -> LoadReport {
        let handle = self.handle.take().expect("a load is joined once");
        match handle.join() {
            Ok(report) => report,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// The load thread.
fn run(mut router: Router, opts: &LoadOptions, stop: &AtomicBool, ops: &AtomicU64) -> LoadReport {
    let started = Instant::now();
    let mut report = LoadReport::default();
    let mut n: u64 = 0;
    let fail = |report: &mut LoadReport, why: String| {
        report.errors += 1;
        if report.error_samples.len() < ERROR_SAMPLES {
            report.error_samples.push(why);
        }
    };
    while !stop.load(Ordering::Relaxed)
        && ops.load(Ordering::Relaxed) < opts.max_ops
        && started.elapsed() < opts.max_duration
    {
        let key = format!("{}{n}", opts.prefix);
        let value = format!("v{n}");
        n += 1;
        if let Some(r) = opts.slots {
            if !r.contains(Slot::for_key(key.as_bytes())) {
                continue;
            }
        }
        ops.fetch_add(1, Ordering::Relaxed);
        match router.cmd(&["SET", key.as_str(), value.as_str()]) {
            Ok(routed) => {
                report.moved += u64::from(routed.moved);
                report.ask += u64::from(routed.asked);
                match routed.value {
                    Value::Simple(s) if s == "OK" => {
                        report.ok += 1;
                        report.written.push((key, value));
                    }
                    other => fail(&mut report, format!("SET {key}: {other:?}")),
                }
            }
            Err(e) => {
                fail(&mut report, format!("SET {key}: {e}"));
                thread::sleep(Duration::from_millis(50));
                let _ = router.refresh();
            }
        }
        if !opts.interval.is_zero() {
            thread::sleep(opts.interval);
        }
    }
    report.elapsed = started.elapsed();
    report
}
