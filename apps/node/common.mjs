// The contract's part shared by the Node.js applications (docs/FIDELITY.md, "The application
// contract"; tests/scenarios/app.py is the reference): settings, pacing by index with `in_flight`
// permits, skipped commands, outcomes per 250 ms, wedged, and the one JSON line.
//
// An adapter (ioredis.mjs, node-redis.mjs, glide.mjs) opens the library's cluster client, counts what the
// library does into a `Counts` from the library's own hooks, and exposes one command call.

import { performance } from "node:perf_hooks";

export const BUCKET_MS = 250;
export const COMMANDS = ["zadd", "set", "get", "incr"];
// A client is wedged when every command for at least this long before the schedule ended failed.
export const WEDGED_MIN_MS = 1000;

export function log(...parts) {
  process.stderr.write(`app: ${parts.join(" ")}\n`);
}

export const nowMs = () => Date.now();

export function parseAddr(text) {
  const i = String(text).lastIndexOf(":");
  const host = text.slice(0, i);
  const port = Number(text.slice(i + 1));
  if (i <= 0 || !Number.isInteger(port) || port <= 0 || port > 65535) {
    throw new Error(`not host:port: ${JSON.stringify(text)}`);
  }
  return { host, port };
}

export function settingsFrom(text) {
  const s = JSON.parse(text);
  if (typeof s !== "object" || s === null || !s.startup) {
    throw new Error("settings must be a JSON object with `startup`");
  }
  const num = (v, d) => (v === undefined || v === null ? d : Number(v));
  const out = {
    startup: String(s.startup),
    rate: num(s.rate, 200),
    in_flight: Math.trunc(num(s.in_flight, 1)),
    duration_s: num(s.duration_s, 10),
    keys: Math.trunc(num(s.keys, 1000)),
    key_prefix: String(s.key_prefix ?? "key"),
    command: String(s.command ?? "zadd").toLowerCase(),
    address_remap: s.address_remap ?? null,
    socket_timeout_s: num(s.socket_timeout_s, 0.5),
    connect_timeout_s: num(s.connect_timeout_s, 0.5),
    client_name: String(s.client_name ?? "matrix"),
    seed: Math.trunc(num(s.seed, 1)),
    library_options: s.library_options ?? {},
  };
  parseAddr(out.startup);
  if (out.address_remap !== null) parseAddr(String(out.address_remap));
  if (!(out.rate > 0 && out.rate <= 100000) || !(out.duration_s > 0 && out.duration_s <= 600)) {
    throw new Error("rate must be in (0, 100000], duration_s in (0, 600]");
  }
  if (!(out.in_flight >= 1 && out.in_flight <= 10000) || !(out.keys >= 1)) {
    throw new Error("in_flight must be in [1, 10000], keys >= 1");
  }
  if (!COMMANDS.includes(out.command)) throw new Error(`command must be one of ${COMMANDS}`);
  if (!(out.socket_timeout_s > 0) || !(out.connect_timeout_s > 0)) {
    throw new Error("socket_timeout_s and connect_timeout_s must be > 0");
  }
  if (typeof out.library_options !== "object" || Array.isArray(out.library_options)) {
    throw new Error("library_options must be a JSON object");
  }
  return out;
}

// The q-quantile of `ms` (milliseconds, rounded to µs), null when empty (as app.py's quantile_ms).
export function quantileMs(ms, q) {
  if (ms.length === 0) return null;
  const v = Float64Array.from(ms).sort();
  return Math.round(1000 * v[Math.min(v.length - 1, Math.floor(q * v.length))]) / 1000;
}

// A seeded generator (mulberry32): the key draw. Not Python's Mersenne Twister, so the same seed
// draws other keys than app.py does; the same seed draws the same keys in both Node.js apps.
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// What the library did, counted by the adapter from the library's own hooks.
export class Counts {
  constructor(command) {
    this.command = command;
    this.initializations = 0;
    this.initializations_ok = 0;
    this.cluster_slots_calls = 0;
    this.new_connections = 0;
    this.calls = {};
    this.moved = {};
    this.ask = {};
    this.error_replies = {};
    // Milliseconds of every exchange with one node that got a reply (success, MOVED, ASK).
    this.exchanges = [];
  }

  // One reply to one application command from one node: `error` is the error reply (null for a
  // success); `exchangeMs` the time from the send to it (null when unknown).
  reply(name, error, exchangeMs) {
    const cmd = String(name).toLowerCase();
    const bump = (m) => (m[cmd] = (m[cmd] ?? 0) + 1);
    bump(this.calls);
    const msg = error ? String(error.message ?? error) : "";
    if (!error || msg.startsWith("MOVED ") || msg.startsWith("ASK ")) {
      if (exchangeMs !== null && exchangeMs !== undefined) this.exchanges.push(exchangeMs);
    }
    if (!error) return;
    if (msg.startsWith("MOVED ")) bump(this.moved);
    else if (msg.startsWith("ASK ")) bump(this.ask);
    else bump(this.error_replies);
  }
}

// What the application saw.
export class Outcomes {
  constructor() {
    this.issued = 0;
    this.succeeded = 0;
    this.skipped = 0;
    this.errors = {};
    this.first_error = {};
    this.first_error_ms = null;
    this.first_error_issued_ms = null;
    this.first_error_hung = false;
    this.started_ms = nowMs();
    this.ok_buckets = [];
    this.failed_buckets = [];
    this.failed_issued = [];
    this.last_ok_ms = null;
    this.first_fail_since_ok_ms = null;
    this.latencies = [];
  }

  bucket(t) {
    return Math.floor(Math.max(0, t - this.started_ms) / BUCKET_MS);
  }

  ok(latencyMs) {
    this.succeeded += 1;
    this.latencies.push(latencyMs);
    this.last_ok_ms = nowMs();
    const b = this.bucket(this.last_ok_ms);
    this.ok_buckets[b] = (this.ok_buckets[b] ?? 0) + 1;
    this.first_fail_since_ok_ms = null;
  }

  failed(cls, message, issuedMs, hung = false) {
    if (!(cls in this.errors)) log(`first ${cls}: ${message}`);
    this.errors[cls] = (this.errors[cls] ?? 0) + 1;
    if (!(cls in this.first_error)) this.first_error[cls] = String(message).slice(0, 300);
    const t = nowMs();
    const b = this.bucket(t);
    this.failed_buckets[b] = (this.failed_buckets[b] ?? 0) + 1;
    this.failed_issued[b] = Math.min(this.failed_issued[b] ?? issuedMs, issuedMs);
    if (this.first_error_ms === null) {
      this.first_error_ms = t;
      this.first_error_issued_ms = issuedMs;
      this.first_error_hung = hung;
    } else if (hung && this.first_error_hung) {
      // Commands that hung until the drain gave up on them end at once, in no order: the first
      // error is the give-up, issued when the first of them was.
      this.first_error_issued_ms = Math.min(this.first_error_issued_ms, issuedMs);
    }
    // A command the drain gave up on failed from when it was issued, or just after the
    // last success if that came later: the replay counts it there, and a client whose
    // commands all hang is wedged.
    const since = hung ? Math.max(issuedMs, (this.last_ok_ms ?? issuedMs - 1) + 1) : t;
    if (this.first_fail_since_ok_ms === null || since < this.first_fail_since_ok_ms) {
      this.first_fail_since_ok_ms = since;
    }
  }

  buckets() {
    const n = Math.max(this.ok_buckets.length, this.failed_buckets.length);
    const at = (a, i) => a[i] ?? 0;
    return {
      bucket_ms: BUCKET_MS,
      ok: Array.from({ length: n }, (_, i) => at(this.ok_buckets, i)),
      failed: Array.from({ length: n }, (_, i) => at(this.failed_buckets, i)),
      failed_issued: Array.from({ length: n }, (_, i) => this.failed_issued[i] ?? null),
    };
  }

  // Every command since this moment failed (none succeeded after it), for at least WEDGED_MIN_MS
  // before the schedule ended: the moment, else null.
  wedgedSince(issuingEndedMs) {
    const since = this.first_fail_since_ok_ms;
    if (since === null || issuingEndedMs - since < WEDGED_MIN_MS) return null;
    return since;
  }
}

// Permits: `acquire()` resolves when one is free (or when `cancel()` wakes every waiter).
class Permits {
  constructor(n) {
    this.free = n;
    this.waiters = [];
  }
  get locked() {
    return this.free === 0;
  }
  // Resolves true with a permit, false after `timeoutMs` (or on `cancel()`) without one.
  acquire(timeoutMs) {
    if (this.free > 0) {
      this.free -= 1;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const waiter = (got) => {
        clearTimeout(timer);
        resolve(got);
      };
      const timer = setTimeout(() => {
        const k = this.waiters.indexOf(waiter);
        if (k >= 0) this.waiters.splice(k, 1);
        resolve(false);
      }, Math.max(0, timeoutMs));
      this.waiters.push(waiter);
    });
  }
  release() {
    const w = this.waiters.shift();
    if (w) w(true);
    else this.free += 1;
  }
  cancel() {
    for (const w of this.waiters.splice(0)) w(false);
  }
}

// The name of an error's class as the library made it.
export const className = (e) =>
  (e && typeof e === "object" && e.constructor && e.constructor.name) || typeof e;

// SIGTERM and SIGINT end the schedule (installed on import, so a signal while the client
// connects ends it too); the drain and the line follow.
const control = { stop: false, wakers: new Set(), permits: null };
const onSignal = (sig) => {
  if (!control.stop) log(`${sig}: ending the schedule`);
  control.stop = true;
  for (const w of control.wakers) w();
  control.permits?.cancel();
};
process.on("SIGTERM", onSignal);
process.on("SIGINT", onSignal);

// Runs the schedule against `adapter` and returns the line's fields:
//   adapter.client, adapter.version          the library's name and loaded release
//   adapter.counts                           a Counts the library's hooks fill
//   adapter.call(command, key, i)            one command (a promise)
//   adapter.finish()                         optional: reads the counts (a promise), after the drain
//   adapter.startupNodesEnd()                known nodes at the end, or null
//   adapter.close()                          closes the client (a promise)
export async function run(settings, adapter) {
  const s = settings;
  const out = new Outcomes();
  const permits = new Permits(s.in_flight);
  control.permits = permits;
  const wakers = control.wakers;
  // Sleeps `ms`, or less when a signal comes.
  const sleep = (ms) =>
    new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        wakers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      wakers.add(done);
    });

  const draw = rng(s.seed);
  const period = 1000 / s.rate;
  const scheduled = Math.ceil(s.duration_s * s.rate);
  const inFlight = new Map(); // promise -> issued epoch ms
  const startedMs = nowMs();
  out.started_ms = startedMs;
  const start = performance.now();

  const one = (i, key) => {
    const t0 = performance.now();
    const issuedMs = nowMs();
    let p;
    try {
      p = Promise.resolve(adapter.call(s.command, key, i));
    } catch (e) {
      p = Promise.reject(e);
    }
    const settled = p.then(
      () => out.ok(performance.now() - t0),
      (e) => out.failed(className(e), e?.message ?? String(e), issuedMs),
    );
    const tracked = settled.finally(() => {
      if (inFlight.delete(tracked)) permits.release();
    });
    inFlight.set(tracked, issuedMs);
  };

  // The first command from `i` whose due time has not passed yet: those before it came due
  // while the pacer waited for a permit, and are skipped (no burst), whether the wait ended with
  // a permit or with the schedule.
  const lateFrom = (i) => Math.max(i, Math.ceil((performance.now() - start) / period));

  let i = 0;
  while (!control.stop && i < scheduled) {
    const delay = start + i * period - performance.now();
    if (delay > 0) {
      await sleep(delay);
      if (control.stop) break;
    }
    const waited = permits.locked;
    // Waiting for a permit ends with the schedule: commands that hang for good (no timeout in
    // the library) do not keep the application running.
    const got = await permits.acquire(start + scheduled * period - performance.now());
    if (control.stop || !got) {
      if (got) permits.release();
      if (!control.stop) out.skipped += scheduled - i;
      // The schedule ended while the pacer waited.
      else if (waited) out.skipped += Math.min(lateFrom(i), scheduled) - i;
      break;
    }
    if (waited) {
      const late = lateFrom(i);
      out.skipped += Math.min(late, scheduled) - i;
      if (late >= scheduled) {
        permits.release();
        break;
      }
      i = late;
      const d = start + i * period - performance.now();
      if (d > 0) await sleep(d);
      if (control.stop) {
        permits.release();
        break;
      }
    }
    const key = `${s.key_prefix}:{${Math.floor(draw() * s.keys)}}`;
    out.issued += 1;
    one(i, key);
    i += 1;
  }

  const issuingEndedMs = nowMs();
  // The drain: bounded, 2 x the socket timeout + 5 s.
  const drainMs = 2 * s.socket_timeout_s * 1000 + 5000;
  if (inFlight.size > 0) {
    let timer;
    const limit = new Promise((resolve) => (timer = setTimeout(resolve, drainMs)));
    await Promise.race([Promise.allSettled([...inFlight.keys()]), limit]);
    clearTimeout(timer);
    if (inFlight.size > 0) {
      log(`${inFlight.size} commands still in flight after ${drainMs} ms: counted as failed`);
      for (const [p, issuedMs] of inFlight) {
        inFlight.delete(p);
        out.failed("CancelledError", "still in flight when the drain ended", issuedMs, true);
      }
    }
  }

  // What the library (or the servers, for a library that exposes little) counted, read now.
  if (adapter.finish) {
    try {
      await adapter.finish();
    } catch (e) {
      log(`finish: ${className(e)}: ${e?.message}`);
    }
  }
  const wedgedSince = out.wedgedSince(issuingEndedMs);
  let startupNodesEnd = null;
  try {
    startupNodesEnd = adapter.startupNodesEnd();
  } catch (e) {
    log(`startup nodes: ${className(e)}: ${e?.message}`);
  }
  const failed = Object.values(out.errors).reduce((a, b) => a + b, 0);
  const summary = {
    client: adapter.client,
    version: adapter.version,
    settings: s,
    issued: out.issued,
    succeeded: out.succeeded,
    failed,
    skipped: out.skipped,
    errors: out.errors,
    first_error: out.first_error,
    first_error_ms: out.first_error_ms,
    first_error_issued_ms: out.first_error_issued_ms,
    outcomes: out.buckets(),
    moved: adapter.counts.moved,
    ask: adapter.counts.ask,
    error_replies: adapter.counts.error_replies,
    calls: adapter.counts.calls,
    initializations: adapter.counts.initializations,
    initializations_ok: adapter.counts.initializations_ok,
    cluster_slots_calls: adapter.counts.cluster_slots_calls,
    new_connections: adapter.counts.new_connections,
    wedged: wedgedSince !== null,
    wedged_since_ms: wedgedSince,
    startup_nodes_end: startupNodesEnd,
    latency_p50_ms: quantileMs(out.latencies, 0.5),
    latency_p90_ms: quantileMs(out.latencies, 0.9),
    exchange_p50_ms: quantileMs(adapter.counts.exchanges, 0.5),
    started_ms: startedMs,
    issuing_ended_ms: issuingEndedMs,
    ended_ms: nowMs(),
  };
  try {
    let timer;
    await Promise.race([
      Promise.resolve().then(() => adapter.close()),
      new Promise((resolve) => (timer = setTimeout(resolve, 2000))),
    ]);
    clearTimeout(timer);
  } catch (e) {
    log(`close: ${className(e)}: ${e?.message}`);
  }
  return summary;
}

// Prints the one line and exits (a library's timers or sockets must not keep the process alive).
export function printAndExit(summary, code = 0) {
  process.stdout.write(`${JSON.stringify(summary)}\n`, () => process.exit(code));
}
