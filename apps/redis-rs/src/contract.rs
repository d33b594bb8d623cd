//! The application contract without a library (docs/FIDELITY.md, "The application contract";
//! `tests/scenarios/app.py` is the reference): the settings, pacing by index with `in_flight`
//! permits, skipped commands, outcomes per 250 ms bucket, the first error, the wedged moment and
//! the bounded drain.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Map, Value};
use tokio::sync::{Notify, Semaphore};
use tokio::task::JoinSet;

/// Width of an `outcomes` bucket.
pub const BUCKET_MS: u64 = 250;
/// The commands the contract knows.
pub const COMMANDS: [&str; 4] = ["zadd", "set", "get", "incr"];
/// A client is wedged when every command that ended for at least this long before the schedule
/// ended failed.
pub const WEDGED_MIN_MS: u64 = 1000;

/// Writes one line to stderr (stdout carries only the report).
pub fn log(msg: impl std::fmt::Display) {
    eprintln!("app: {msg}");
}

/// Milliseconds since the epoch (the recording's clock).
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// `host:port`, checked.
pub fn parse_addr(text: &str) -> Result<(String, u16), String> {
    let (host, port) = text
        .rsplit_once(':')
        .ok_or_else(|| format!("not host:port: {text:?}"))?;
    let port: u16 = port
        .parse()
        .ok()
        .filter(|&p| p > 0)
        .ok_or_else(|| format!("not host:port: {text:?}"))?;
    if host.is_empty() {
        return Err(format!("not host:port: {text:?}"));
    }
    Ok((host.to_owned(), port))
}

/// The settings, as understood (echoed in the report's `settings`).
#[derive(Clone, Debug)]
pub struct Settings {
    /// `host:port` of the one startup node.
    pub startup: String,
    /// Commands scheduled per second.
    pub rate: f64,
    /// Commands in flight at most.
    pub in_flight: u32,
    /// Seconds of schedule.
    pub duration_s: f64,
    /// Keys `<key_prefix>:{0}` … `<key_prefix>:{keys-1}`.
    pub keys: u64,
    /// The keys' prefix.
    pub key_prefix: String,
    /// `zadd`, `set`, `get` or `incr`.
    pub command: String,
    /// `host:port` every address maps to, if any.
    pub address_remap: Option<String>,
    /// The library's response timeout.
    pub socket_timeout_s: f64,
    /// The library's connection timeout.
    pub connect_timeout_s: f64,
    /// The name each connection gets (`CLIENT SETNAME`).
    pub client_name: String,
    /// Seed of the key draw.
    pub seed: u64,
    /// The library's own options (see main.rs), an object.
    pub library_options: Map<String, Value>,
}

impl Settings {
    /// Parses the one JSON argument (defaults as app.py's).
    pub fn parse(text: &str) -> Result<Settings, String> {
        let v: Value = serde_json::from_str(text).map_err(|e| format!("settings: {e}"))?;
        let o = v.as_object().ok_or("settings must be a JSON object")?;
        let num = |k: &str, d: f64| -> Result<f64, String> {
            match o.get(k) {
                None | Some(Value::Null) => Ok(d),
                Some(v) => v.as_f64().ok_or(format!("{k} must be a number")),
            }
        };
        let text = |k: &str, d: &str| -> Result<String, String> {
            match o.get(k) {
                None | Some(Value::Null) => Ok(d.to_owned()),
                Some(Value::String(s)) => Ok(s.clone()),
                Some(_) => Err(format!("{k} must be a string")),
            }
        };
        let startup = match o.get("startup") {
            Some(Value::String(s)) => s.clone(),
            _ => return Err("settings must have `startup` (host:port)".into()),
        };
        parse_addr(&startup)?;
        let address_remap = match o.get("address_remap") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => {
                parse_addr(s)?;
                Some(s.clone())
            }
            Some(_) => return Err("address_remap must be null or host:port".into()),
        };
        let library_options = match o.get("library_options") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(m)) => m.clone(),
            Some(_) => return Err("library_options must be a JSON object".into()),
        };
        let s = Settings {
            startup,
            rate: num("rate", 200.0)?,
            in_flight: num("in_flight", 1.0)?.trunc() as u32,
            duration_s: num("duration_s", 10.0)?,
            keys: num("keys", 1000.0)?.trunc() as u64,
            key_prefix: text("key_prefix", "key")?,
            command: text("command", "zadd")?.to_lowercase(),
            address_remap,
            socket_timeout_s: num("socket_timeout_s", 0.5)?,
            connect_timeout_s: num("connect_timeout_s", 0.5)?,
            client_name: text("client_name", "matrix")?,
            seed: match o.get("seed") {
                None | Some(Value::Null) => 1,
                Some(v) => v
                    .as_u64()
                    .or_else(|| v.as_f64().filter(|f| *f >= 0.0).map(|f| f.trunc() as u64))
                    .ok_or("seed must be a non-negative number")?,
            },
            library_options,
        };
        let within = |x: f64, hi: f64| x > 0.0 && x <= hi;
        if !within(s.rate, 100_000.0) || !within(s.duration_s, 600.0) {
            return Err("rate must be in (0, 100000], duration_s in (0, 600]".into());
        }
        if !(1..=10_000).contains(&s.in_flight) || s.keys < 1 {
            return Err("in_flight must be in [1, 10000], keys >= 1".into());
        }
        if !COMMANDS.contains(&s.command.as_str()) {
            return Err(format!("command must be one of {COMMANDS:?}"));
        }
        if !within(s.socket_timeout_s, 3600.0) || !within(s.connect_timeout_s, 3600.0) {
            return Err("socket_timeout_s and connect_timeout_s must be in (0, 3600]".into());
        }
        Ok(s)
    }

    /// The settings as a JSON object.
    pub fn to_json(&self) -> Value {
        json!({
            "startup": self.startup, "rate": self.rate, "in_flight": self.in_flight,
            "duration_s": self.duration_s, "keys": self.keys, "key_prefix": self.key_prefix,
            "command": self.command, "address_remap": self.address_remap,
            "socket_timeout_s": self.socket_timeout_s, "connect_timeout_s": self.connect_timeout_s,
            "client_name": self.client_name, "seed": self.seed,
            "library_options": Value::Object(self.library_options.clone()),
        })
    }
}

/// A seeded generator (SplitMix64): the key draw. Not Python's Mersenne Twister, so the same seed
/// draws other keys than app.py does.
pub struct KeyDraw(u64);

impl KeyDraw {
    /// Seeded by `seed`.
    pub fn new(seed: u64) -> KeyDraw {
        KeyDraw(seed)
    }

    /// Uniform in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        ((u128::from(z) * u128::from(n)) >> 64) as u64
    }
}

/// The q-quantile of `ms`, rounded to µs; `None` when empty (as app.py's `quantile_ms`).
pub fn quantile_ms(ms: &[f64], q: f64) -> Option<f64> {
    if ms.is_empty() {
        return None;
    }
    let mut v = ms.to_vec();
    v.sort_by(f64::total_cmp);
    let i = ((q * v.len() as f64).floor() as usize).min(v.len() - 1);
    Some((v[i] * 1000.0).round() / 1000.0)
}

/// How one command ended, as the application saw it.
pub enum Ended {
    /// It succeeded.
    Ok,
    /// It failed with the library's error, by its class name and its message.
    Failed {
        /// The class (the library's `ErrorKind`).
        class: String,
        /// A finer name (`error_kinds`), e.g. the I/O cause.
        kind: String,
        /// The message.
        message: String,
    },
}

/// What the application saw.
#[derive(Default)]
struct Outcomes {
    started_ms: u64,
    issued: u64,
    succeeded: u64,
    skipped: u64,
    errors: BTreeMap<String, u64>,
    error_kinds: BTreeMap<String, u64>,
    first_error: BTreeMap<String, String>,
    first_error_ms: Option<u64>,
    first_error_issued_ms: Option<u64>,
    first_error_drained: bool,
    ok_buckets: Vec<u64>,
    failed_buckets: Vec<u64>,
    failed_issued: Vec<Option<u64>>,
    first_fail_since_ok_ms: Option<u64>,
    last_ok_ms: Option<u64>,
    latencies: Vec<f64>,
    /// Commands in flight: index → issue time (epoch ms).
    in_flight: HashMap<u64, u64>,
    /// Set when the drain ended: a command that ends later is not counted again.
    closed: bool,
}

impl Outcomes {
    fn bucket(&mut self, t: u64) -> usize {
        let b = (t.saturating_sub(self.started_ms) / BUCKET_MS) as usize;
        if self.ok_buckets.len() <= b {
            self.ok_buckets.resize(b + 1, 0);
            self.failed_buckets.resize(b + 1, 0);
            self.failed_issued.resize(b + 1, None);
        }
        b
    }

    fn ok(&mut self, latency_ms: f64) {
        self.succeeded += 1;
        self.latencies.push(latency_ms);
        let t = now_ms();
        let b = self.bucket(t);
        self.ok_buckets[b] += 1;
        self.last_ok_ms = Some(t);
        self.first_fail_since_ok_ms = None;
    }

    fn failed(&mut self, class: &str, kind: &str, message: &str, issued_ms: u64, drained: bool) {
        if !self.errors.contains_key(class) {
            log(format!("first {class}: {message}"));
            let mut m = message.to_owned();
            m.truncate(300);
            self.first_error.insert(class.to_owned(), m);
        }
        *self.errors.entry(class.to_owned()).or_default() += 1;
        *self.error_kinds.entry(kind.to_owned()).or_default() += 1;
        let t = now_ms();
        let b = self.bucket(t);
        self.failed_buckets[b] += 1;
        let fi = &mut self.failed_issued[b];
        *fi = Some(fi.map_or(issued_ms, |x| x.min(issued_ms)));
        match self.first_error_ms {
            None => {
                self.first_error_ms = Some(t);
                self.first_error_issued_ms = Some(issued_ms);
                self.first_error_drained = drained;
            }
            // Commands the drain gave up on end at once, in no order: the first error is the
            // give-up, issued when the first of them was.
            Some(_) if drained && self.first_error_drained => {
                self.first_error_issued_ms = self.first_error_issued_ms.map(|x| x.min(issued_ms));
            }
            Some(_) => {}
        }
        // A command the drain gave up on failed from when it was issued, or just after the
        // last success if that came later: the replay counts it there, and a client whose
        // commands all hang is wedged.
        let since = if drained {
            issued_ms.max(self.last_ok_ms.map_or(issued_ms, |t| t + 1))
        } else {
            t
        };
        if self.first_fail_since_ok_ms.is_none_or(|f| since < f) {
            self.first_fail_since_ok_ms = Some(since);
        }
    }

    /// Every command since this moment failed, for at least [`WEDGED_MIN_MS`] before the
    /// schedule ended.
    fn wedged_since(&self, issuing_ended_ms: u64) -> Option<u64> {
        self.first_fail_since_ok_ms
            .filter(|&since| issuing_ended_ms.saturating_sub(since) >= WEDGED_MIN_MS)
    }
}

/// SIGTERM and SIGINT end the schedule.
pub struct Stop {
    flag: AtomicBool,
    notify: Notify,
}

impl Stop {
    /// Installs the handlers (call inside the runtime).
    pub fn install() -> Arc<Stop> {
        let stop = Arc::new(Stop {
            flag: AtomicBool::new(false),
            notify: Notify::new(),
        });
        let s = Arc::clone(&stop);
        tokio::spawn(async move {
            use tokio::signal::unix::{signal, SignalKind};
            let (Ok(mut term), Ok(mut int)) = (
                signal(SignalKind::terminate()),
                signal(SignalKind::interrupt()),
            ) else {
                log("cannot install the signal handlers");
                return;
            };
            let name = tokio::select! {
                _ = term.recv() => "SIGTERM",
                _ = int.recv() => "SIGINT",
            };
            log(format!("{name}: ending the schedule"));
            s.flag.store(true, Ordering::SeqCst);
            s.notify.notify_waiters();
        });
        stop
    }

    /// Whether a signal came.
    pub fn stopped(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }

    /// Sleeps until `deadline`, or less when a signal comes.
    async fn sleep_until(&self, deadline: Instant) {
        let notified = self.notify.notified();
        if self.stopped() {
            return;
        }
        tokio::select! {
            () = tokio::time::sleep_until(deadline.into()) => {}
            () = notified => {}
        }
    }
}

/// What the library adapter reports besides the outcomes (its counts), merged into the line.
pub type LibraryFields = Map<String, Value>;

/// Runs the schedule: `call(index, key)` issues one command and resolves with how it ended.
/// Returns the contract's fields of what the application saw; `drain` bounds the wait for the
/// commands still in flight when the schedule ends.
pub async fn run<F, Fut>(s: &Settings, stop: &Stop, drain: Duration, call: F) -> LibraryFields
where
    F: Fn(u64, String) -> Fut,
    Fut: Future<Output = Ended> + Send + 'static,
{
    let out = Arc::new(Mutex::new(Outcomes::default()));
    let permits = Arc::new(Semaphore::new(s.in_flight as usize));
    let mut tasks = JoinSet::new();
    let mut draw = KeyDraw::new(s.seed);
    let period = Duration::from_secs_f64(1.0 / s.rate);
    let scheduled = (s.duration_s * s.rate).ceil() as u64;
    let started_ms = now_ms();
    out.lock().expect("outcomes").started_ms = started_ms;
    let start = Instant::now();
    let due = |i: u64| start + period.mul_f64(i as f64);
    let end = due(scheduled);
    // The first command from `i` whose due time has not passed yet: those before it came due
    // while the pacer waited for a permit, and are skipped (no burst), whether the wait ended
    // with a permit or with the schedule.
    let late_from = |i: u64| {
        let elapsed = start.elapsed().as_secs_f64();
        i.max((elapsed / period.as_secs_f64()).ceil() as u64)
    };

    let mut i = 0u64;
    while !stop.stopped() && i < scheduled {
        stop.sleep_until(due(i)).await;
        if stop.stopped() {
            break;
        }
        while tasks.try_join_next().is_some() {}
        let (permit, waited) = match Arc::clone(&permits).try_acquire_owned() {
            Ok(p) => (p, false),
            Err(_) => {
                // Waiting for a permit ends with the schedule (or a signal).
                let acquire = Arc::clone(&permits).acquire_owned();
                let got = tokio::select! {
                    p = acquire => p.ok(),
                    () = stop.sleep_until(end) => None,
                };
                match got {
                    Some(p) => (p, true),
                    None => {
                        let mut o = out.lock().expect("outcomes");
                        if !stop.stopped() {
                            o.skipped += scheduled - i;
                        } else {
                            // The schedule ended while the pacer waited.
                            o.skipped += late_from(i).min(scheduled) - i;
                        }
                        break;
                    }
                }
            }
        };
        if stop.stopped() {
            if waited {
                out.lock().expect("outcomes").skipped += late_from(i).min(scheduled) - i;
            }
            break;
        }
        if waited {
            let late = late_from(i);
            out.lock().expect("outcomes").skipped += late.min(scheduled) - i;
            if late >= scheduled {
                break;
            }
            i = late;
            stop.sleep_until(due(i)).await;
            if stop.stopped() {
                break;
            }
        }
        let key = format!("{}:{{{}}}", s.key_prefix, draw.below(s.keys));
        let issued_ms = now_ms();
        {
            let mut o = out.lock().expect("outcomes");
            o.issued += 1;
            o.in_flight.insert(i, issued_ms);
        }
        let fut = call(i, key);
        let out2 = Arc::clone(&out);
        tasks.spawn(async move {
            let t0 = Instant::now();
            let ended = fut.await;
            let latency = t0.elapsed().as_secs_f64() * 1000.0;
            let mut o = out2.lock().expect("outcomes");
            if o.closed || o.in_flight.remove(&i).is_none() {
                return;
            }
            match ended {
                Ended::Ok => o.ok(latency),
                Ended::Failed {
                    class,
                    kind,
                    message,
                } => o.failed(&class, &kind, &message, issued_ms, false),
            }
            drop(o);
            drop(permit);
        });
        i += 1;
    }
    let issuing_ended_ms = now_ms();

    // The drain, bounded; what is still in flight then is counted as failed and cancelled.
    let deadline = tokio::time::Instant::now() + drain;
    while !tasks.is_empty() {
        if tokio::time::timeout_at(deadline, tasks.join_next())
            .await
            .is_err()
        {
            break;
        }
    }
    let mut o = out.lock().expect("outcomes");
    o.closed = true;
    let left: Vec<(u64, u64)> = o.in_flight.drain().collect();
    if !left.is_empty() {
        log(format!(
            "{} commands still in flight after {} ms: counted as failed",
            left.len(),
            drain.as_millis()
        ));
        let mut left = left;
        left.sort_unstable();
        for (_, issued_ms) in left {
            o.failed(
                "DrainCancelled",
                "DrainCancelled",
                "still in flight when the drain ended",
                issued_ms,
                true,
            );
        }
    }
    drop(o);
    tasks.abort_all();

    let o = out.lock().expect("outcomes");
    let wedged_since = o.wedged_since(issuing_ended_ms);
    let failed: u64 = o.errors.values().sum();
    let mut m = Map::new();
    m.insert("issued".into(), json!(o.issued));
    m.insert("succeeded".into(), json!(o.succeeded));
    m.insert("failed".into(), json!(failed));
    m.insert("skipped".into(), json!(o.skipped));
    m.insert("errors".into(), json!(o.errors));
    m.insert("error_kinds".into(), json!(o.error_kinds));
    m.insert("first_error".into(), json!(o.first_error));
    m.insert("first_error_ms".into(), json!(o.first_error_ms));
    m.insert(
        "first_error_issued_ms".into(),
        json!(o.first_error_issued_ms),
    );
    m.insert(
        "outcomes".into(),
        json!({
            "bucket_ms": BUCKET_MS, "ok": o.ok_buckets, "failed": o.failed_buckets,
            "failed_issued": o.failed_issued,
        }),
    );
    m.insert("wedged".into(), json!(wedged_since.is_some()));
    m.insert("wedged_since_ms".into(), json!(wedged_since));
    m.insert(
        "latency_p50_ms".into(),
        json!(quantile_ms(&o.latencies, 0.5)),
    );
    m.insert(
        "latency_p90_ms".into(),
        json!(quantile_ms(&o.latencies, 0.9)),
    );
    m.insert("started_ms".into(), json!(started_ms));
    m.insert("issuing_ended_ms".into(), json!(issuing_ended_ms));
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_draw_is_seeded_and_in_range() {
        let (mut a, mut b) = (KeyDraw::new(7), KeyDraw::new(7));
        let xs: Vec<u64> = (0..1000).map(|_| a.below(10)).collect();
        let ys: Vec<u64> = (0..1000).map(|_| b.below(10)).collect();
        assert_eq!(xs, ys);
        assert!(xs.iter().all(|&x| x < 10));
        for k in 0..10 {
            let n = xs.iter().filter(|&&x| x == k).count();
            assert!((50..=150).contains(&n), "{k}: {n}");
        }
    }

    /// Outcomes counted from now.
    fn outcomes() -> Outcomes {
        Outcomes {
            started_ms: now_ms(),
            ..Outcomes::default()
        }
    }

    #[test]
    fn wedged_needs_a_second_of_failures_before_the_end() {
        let mut o = outcomes();
        o.ok(1.0);
        o.failed("Io", "Io", "x", 0, false);
        let since = o.first_fail_since_ok_ms.expect("a failure");
        assert_eq!(o.wedged_since(since + 999), None);
        assert_eq!(o.wedged_since(since + 1000), Some(since));
        o.ok(1.0);
        assert_eq!(o.wedged_since(since + 5000), None);
    }

    #[test]
    fn hung_commands_failed_from_their_issue() {
        let mut o = outcomes();
        o.ok(1.0);
        let last = o.last_ok_ms.expect("a success");
        // Issued before the last success: failing only after it.
        o.failed("Drained", "Drained", "still in flight", last - 500, true);
        assert_eq!(o.first_fail_since_ok_ms, Some(last + 1));
        let mut o = outcomes();
        o.ok(1.0);
        let issued = o.last_ok_ms.expect("a success") + 100;
        o.failed("Drained", "Drained", "still in flight", issued, true);
        assert_eq!(o.wedged_since(issued + 2000), Some(issued));
    }

    #[test]
    fn settings_are_checked() {
        let s = Settings::parse(r#"{"startup":"127.0.0.1:7000","command":"SET"}"#).unwrap();
        assert_eq!(s.command, "set");
        assert_eq!(s.in_flight, 1);
        let big = Settings::parse(r#"{"startup":"h:1","seed":16994299059644727681}"#).unwrap();
        assert_eq!(big.seed, 16_994_299_059_644_727_681);
        assert!(Settings::parse(r#"{"startup":"127.0.0.1"}"#).is_err());
        assert!(Settings::parse(r#"{"startup":"h:1","command":"del"}"#).is_err());
        assert!(Settings::parse(r#"{"startup":"h:1","library_options":[]}"#).is_err());
    }
}
