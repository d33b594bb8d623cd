"""The fidelity matrix's application: an asyncio redis-py cluster client, instrumented.

A separate program that `slotscope`'s fidelity matrix (tests/src/matrix/) starts once per case; it
implements the plug-in contract of docs/FIDELITY.md ("The application contract"), so that an
application written against another library (ioredis, node-redis, Valkey GLIDE, redis-rs) can
stand in its place.

Usage: app.py '<settings JSON>'

Settings (JSON object; every field but `startup` optional):

    startup           "127.0.0.1:7000"  the one startup node
    rate              200               commands scheduled per second
    in_flight         1                 commands in flight at most (asyncio tasks)
    duration_s        10                how long commands are scheduled, seconds (at most 600);
                                        SIGTERM or SIGINT ends the schedule earlier
    keys              1000              key names key:{0} .. key:{keys-1}, drawn uniformly
    key_prefix        "key"             the keys' prefix: <key_prefix>:{0} .. (an application
                                        beside another keeps to its own keys)
    command           "zadd"            zadd | set | get | incr
    address_remap     null              "host:port": every address the library meets maps to it
    socket_timeout_s  0.5
    connect_timeout_s 0.5
    client_name       "matrix"          CLIENT SETNAME of every connection
    seed              1                 seed of the key draw

The application: the i-th command is scheduled at start + i / rate (by index, so there is no
drift). Before issuing, the pacer takes one of `in_flight` permits (an asyncio semaphore) and starts
the command as a task that gives the permit back when it ends. When the pacer had to wait for a
permit, every command whose scheduled time passed meanwhile is skipped (counted in `skipped`), so
a stall is not followed by a burst. Each command's exception is caught and counted by class, as a
service that counts its failed writes and goes on. When the schedule ends, the commands in flight
get 15 s to finish; any left are cancelled and counted as failed (`CancelledError`).

The instrumentation wraps redis-py (5.0.0 and 8.x alike):

- `NodesManager.initialize`: calls and the ones that returned (`initializations`,
  `initializations_ok`);
- `ClusterNode.execute_command`, the one place both versions send one command to one node:
  `CLUSTER SLOTS` sent (`cluster_slots_calls`, failed ones included), and per application command
  the replies received (`calls`: success, MOVED, ASK or another error reply), `moved`, `ask` and
  the other error replies (`error_replies`);
- the connection's connect (`connect_check_health` in 8.x, `connect` in 5.0.0): connections that
  became connected (`new_connections`);
- the client's `nodes_manager.startup_nodes`, watched every 20 ms and after every command: the
  client is `wedged` when at the end it has no startup node left and every command since it lost
  the last one (and since its last success) failed; `wedged_since_ms` is that moment;
- the application itself: when the first command raised (`first_error_ms`, epoch ms of the moment
  the exception reached the application; null when none did) and when that command was issued
  (`first_error_issued_ms`: a timeout raises one socket timeout after the send; when the first
  errors are the commands still hanging at the drain, the earliest of their issues), the commands that ended per 250 ms
  since `started_ms` (`outcomes`: successes and failures by the bucket of the moment each ended,
  and per bucket when the earliest-issued of the commands that failed in it was issued),
  and each successful command's time from its start to its reply
  (`latency_p50_ms`, `latency_p90_ms`; redirections and re-initialisations included), and the
  median exchange with one node that got a reply (`exchange_p50_ms`), and before the client
  starts, the round trip to the startup node on a quiet socket (`rtt_ms`: the median of 20
  `PING`s on a plain socket, no library, no load): the replay's network round trip, where
  `exchange_p50_ms` also holds the time each reply waited for the busy event loop, which
  redis-py's model charges itself; and the process CPU time from the first command to the end
  of issuing (`cpu_ms`), beside the model's `client_cpu_ms`, and the full collections of
  CPython's garbage collector meanwhile (`gc_full_collections`, beside the initialisations: the
  model's `gc_full_every`).

At the end it prints ONE JSON line to stdout (the contract's shape; logs go to stderr):

    {"client": "redis-py", "version": "8.1.0", "issued": n, "succeeded": n, "failed": n,
     "skipped": n, "errors": {"ConnectionError": n, ...}, "moved": {"zadd": n}, "ask": {"zadd": n},
     "error_replies": {"zadd": n},
     "calls": {"zadd": n}, "initializations": n, "initializations_ok": n,
     "cluster_slots_calls": n, "new_connections": n, "wedged": false, "wedged_since_ms": null,
     "startup_nodes_end": n, "first_error": {"ConnectionError": "message"},
     "first_error_ms": epoch ms or null, "first_error_issued_ms": epoch ms or null,
     "outcomes": {"bucket_ms": 250, "ok": [n, ...], "failed": [n, ...],
                  "failed_issued": [epoch ms or null, ...]},
     "latency_p50_ms": 0.8, "latency_p90_ms": 2.1, "exchange_p50_ms": 0.6, "rtt_ms": 0.1,
     "cpu_ms": 9120.5, "gc_full_collections": n, "started_ms": epoch ms, "ended_ms": epoch ms}

With `SLOTSCOPE_APP_TRACE=FILE` in its environment it also appends one JSON line per library
event to FILE (`t_ms`, `event`): `init` / `init_ok` (with the slot cache built, as runs `[first,
last, node]`), `moved` (the node asked, the slot, the redirect, the node the slot cache named
then, the command's first arguments), `reply` (any other reply read, the node, the time since the
command's exchange started), `slots` (a `CLUSTER SLOTS` sent, the node, its error if
any), `conn_error` (a connection error or timeout of a command, the node), `close`
(`aclose()`/`close()` called), `connect`, `failed` (the exception class the application
caught), `issue` (a command issued, whether a default node was known), `rc_init` /
`rc_init_end` (`RedisCluster.initialize()` entered and left), `command_table` /
`command_table_end` (the `COMMAND` table fetched and parsed) and `lock` / `unlock` (`_lock`
taken, whether it was busy and how long the wait was; let go, how long it was held). Off by
default; the matrix never sets it.
It is how the default-node loss of redis-py 7.1+ was found (docs/FIDELITY.md).

Only standard-library modules and redis-py; it connects to the given addresses only.
"""

import asyncio
import collections
import gc
import json
import math
import os
import random
import signal
import socket
import sys
import time

import redis
from redis.asyncio.cluster import ClusterNode, NodesManager, RedisCluster
from redis.asyncio.connection import AbstractConnection
from redis.exceptions import AskError, MovedError, ResponseError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from scenario_common import command_name

CLIENT = None  # the client, for the trace
TRACE = None  # a file object when SLOTSCOPE_APP_TRACE names a file


def trace(event, **fields):
    """One JSON line per library event to $SLOTSCOPE_APP_TRACE (off without it)."""
    if TRACE is not None:
        fields["t_ms"] = round(time.time() * 1000, 1)
        fields["event"] = event
        TRACE.write(json.dumps(fields) + "\n")


class TracedLock(asyncio.Lock):
    """`RedisCluster._lock` with its waits and holds in the trace (`lock`, `unlock`)."""

    async def acquire(self):
        t0 = time.monotonic()
        busy = self.locked()
        result = await super().acquire()
        trace("lock", busy=busy, waited_ms=round((time.monotonic() - t0) * 1000, 1))
        self.since = time.monotonic()
        return result

    def release(self):
        trace("unlock", held_ms=round((time.monotonic() - self.since) * 1000, 1))
        super().release()


WATCH_PERIOD_S = 0.02
DRAIN_LIMIT_S = 15.0
BUCKET_MS = 250
COMMANDS = ("zadd", "set", "get", "incr")


def log(*parts):
    print("app:", *parts, file=sys.stderr, flush=True)


def now_ms():
    return int(time.time() * 1000)


def parse_addr(text):
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise SystemExit(f"app: not host:port: {text!r}")
    return host, int(port)


def settings_from(argv):
    if len(argv) != 2:
        raise SystemExit("usage: app.py '<settings JSON>'")
    s = json.loads(argv[1])
    out = {
        "startup": s["startup"],
        "rate": float(s.get("rate", 200)),
        "in_flight": int(s.get("in_flight", 1)),
        "duration_s": float(s.get("duration_s", 10)),
        "keys": int(s.get("keys", 1000)),
        "key_prefix": str(s.get("key_prefix", "key")),
        "command": str(s.get("command", "zadd")).lower(),
        "address_remap": s.get("address_remap"),
        "socket_timeout_s": float(s.get("socket_timeout_s", 0.5)),
        "connect_timeout_s": float(s.get("connect_timeout_s", 0.5)),
        "client_name": str(s.get("client_name", "matrix")),
        "seed": int(s.get("seed", 1)),
    }
    if not 0 < out["rate"] <= 100_000 or not 0 < out["duration_s"] <= 600:
        raise SystemExit("app: rate must be in (0, 100000], duration_s in (0, 600]")
    if not 1 <= out["in_flight"] <= 10_000 or out["keys"] < 1:
        raise SystemExit("app: in_flight must be in [1, 10000], keys >= 1")
    if out["command"] not in COMMANDS:
        raise SystemExit(f"app: command must be one of {COMMANDS}")
    return out


def quantile_ms(seconds, q):
    """The q-quantile of `seconds`, in milliseconds (None when empty)."""
    if not seconds:
        return None
    v = sorted(seconds)
    return round(1000 * v[min(len(v) - 1, int(q * len(v)))], 3)


class Counts:
    """What the library did, counted by wrapping it."""

    def __init__(self):
        self.initializations = 0
        self.initializations_ok = 0
        self.cluster_slots_calls = 0
        self.new_connections = 0
        self.calls = collections.Counter()
        self.moved = collections.Counter()
        self.ask = collections.Counter()
        self.error_replies = collections.Counter()
        # Seconds of every exchange with one node that got a reply (the library's send to its
        # reply, connection taken and connect included): a network round trip as a replay takes it.
        self.exchanges = []

    def install(self):
        counts = self
        original_init = NodesManager.initialize

        async def initialize(manager, *args, **kwargs):
            counts.initializations += 1
            trace("init")
            result = await original_init(manager, *args, **kwargs)
            if TRACE is not None:
                runs = []
                for slot in range(16384):
                    nodes = manager.slots_cache.get(slot)
                    name = nodes[0].name if nodes else None
                    if runs and runs[-1][2] == name:
                        runs[-1][1] = slot
                    else:
                        runs.append([slot, slot, name])
                trace("init_ok", table=runs)
            counts.initializations_ok += 1
            return result

        NodesManager.initialize = initialize

        original_exec = ClusterNode.execute_command

        async def execute_command(node, *args, **kwargs):
            cmd = command_name(args)
            if cmd == "cluster slots" or (
                cmd == "cluster" and len(args) > 1 and command_name(args[1:]) == "slots"
            ):
                counts.cluster_slots_calls += 1
                try:
                    reply = await original_exec(node, *args, **kwargs)
                except Exception as e:
                    trace("slots", node=node.name, error=type(e).__name__)
                    raise
                trace("slots", node=node.name)
                return reply
            t0 = time.monotonic()
            try:
                reply = await original_exec(node, *args, **kwargs)
            except (RedisConnectionError, RedisTimeoutError) as e:
                trace("conn_error", node=node.name, error=type(e).__name__, cmd=cmd, msg=str(e)[:100])
                raise
            except MovedError as e:
                cached = CLIENT.nodes_manager.slots_cache.get(e.slot_id) if CLIENT else None
                trace("moved", node=node.name, slot=e.slot_id, to=f"{e.host}:{e.port}",
                      cached=cached[0].name if cached else None, args=[str(a) for a in args[:2]],
                      waited_ms=round((time.monotonic() - t0) * 1000, 1))
                counts.exchanges.append(time.monotonic() - t0)
                counts.calls[cmd] += 1
                counts.moved[cmd] += 1
                raise
            except AskError:
                counts.exchanges.append(time.monotonic() - t0)
                counts.calls[cmd] += 1
                counts.ask[cmd] += 1
                raise
            except ResponseError:
                # Any other error reply (CLUSTERDOWN, TRYAGAIN, ...) is a reply received.
                counts.calls[cmd] += 1
                counts.error_replies[cmd] += 1
                raise
            counts.exchanges.append(time.monotonic() - t0)
            counts.calls[cmd] += 1
            if TRACE is not None:
                trace("reply", node=node.name, cmd=cmd, waited_ms=round((time.monotonic() - t0) * 1000, 1))
            return reply

        ClusterNode.execute_command = execute_command

        closing = "aclose" if hasattr(RedisCluster, "aclose") else "close"
        original_close = getattr(RedisCluster, closing)

        async def close(client, *args, **kwargs):
            trace("close", initialize=client._initialize)
            return await original_close(client, *args, **kwargs)

        setattr(RedisCluster, closing, close)

        if TRACE is not None:
            original_rc_init = RedisCluster.initialize

            async def rc_initialize(client, *args, **kwargs):
                trace("rc_init", initialize=client._initialize)
                try:
                    return await original_rc_init(client, *args, **kwargs)
                finally:
                    trace("rc_init_end", initialize=client._initialize)

            RedisCluster.initialize = rc_initialize

            from redis._parsers import AsyncCommandsParser

            original_table = AsyncCommandsParser.initialize

            async def table(parser, *args, **kwargs):
                trace("command_table")
                try:
                    return await original_table(parser, *args, **kwargs)
                finally:
                    trace("command_table_end")

            AsyncCommandsParser.initialize = table

        name = (
            "connect_check_health"
            if hasattr(AbstractConnection, "connect_check_health")
            else "connect"
        )
        original_connect = getattr(AbstractConnection, name)

        async def connect(conn, *args, **kwargs):
            was = conn.is_connected
            result = await original_connect(conn, *args, **kwargs)
            if not was and conn.is_connected:
                counts.new_connections += 1
                trace("connect", node=f"{conn.host}:{conn.port}")
            return result

        setattr(AbstractConnection, name, connect)
        return self


class Outcomes:
    """What the application saw, and whether (since when) the client is wedged."""

    def __init__(self):
        self.issued = 0
        self.succeeded = 0
        self.skipped = 0
        self.errors = collections.Counter()
        self.first_error = {}
        # Epoch ms of the first exception the application caught (None until one).
        self.first_error_ms = None
        self.first_error_issued_ms = None
        # Whether the first error was a command cancelled at the drain (it hung until then).
        self.first_error_hung = False
        # Commands ended per BUCKET_MS since `started_ms` (set when the schedule starts).
        self.started_ms = now_ms()
        self.ok_buckets = collections.Counter()
        self.failed_buckets = collections.Counter()
        # Per bucket, when the earliest-issued of the commands that failed in it was issued.
        self.failed_issued = {}
        self.last_ok_ms = None
        self.first_fail_since_ok_ms = None
        self.empty_since_ms = None
        # Seconds from a command's start to its success, every success.
        self.latencies = []

    def latency_ms(self, q):
        """The q-quantile of the successes' latencies, milliseconds (None without a success)."""
        return quantile_ms(self.latencies, q)

    def watch(self, client):
        """Notes when the client's startup nodes become empty (and non-empty again)."""
        nm = getattr(client, "nodes_manager", None)
        if nm is None:
            return
        if len(nm.startup_nodes) == 0:
            if self.empty_since_ms is None:
                self.empty_since_ms = now_ms()
        else:
            self.empty_since_ms = None

    def bucket(self, t_ms):
        return max(0, t_ms - self.started_ms) // BUCKET_MS

    def buckets(self):
        """`outcomes`: successes and failures per BUCKET_MS since `started_ms`."""
        last = max(list(self.ok_buckets) + list(self.failed_buckets), default=-1)
        return {
            "bucket_ms": BUCKET_MS,
            "ok": [self.ok_buckets[b] for b in range(last + 1)],
            "failed": [self.failed_buckets[b] for b in range(last + 1)],
            "failed_issued": [self.failed_issued.get(b) for b in range(last + 1)],
        }

    def ok(self):
        self.succeeded += 1
        self.last_ok_ms = now_ms()
        self.ok_buckets[self.bucket(self.last_ok_ms)] += 1
        self.first_fail_since_ok_ms = None

    def failed(self, e, issued_ms=None, hung=False):
        cls = type(e).__name__
        if cls not in self.errors:
            log(f"first {cls}: {e}")
        self.errors[cls] += 1
        self.first_error.setdefault(cls, str(e)[:300])
        t = now_ms()
        b = self.bucket(t)
        self.failed_buckets[b] += 1
        issued = issued_ms if issued_ms is not None else t
        self.failed_issued[b] = min(self.failed_issued.get(b, issued), issued)
        if self.first_error_ms is None:
            self.first_error_ms = t
            # When the command that raised first was issued: what the servers last saw of it.
            self.first_error_issued_ms = issued_ms if issued_ms is not None else t
            self.first_error_hung = hung
        elif hung and self.first_error_hung and issued_ms is not None:
            # Commands that hung until the drain cancelled them all end at once, in no order:
            # the first error is the cancellation, issued when the first of them was.
            self.first_error_issued_ms = min(self.first_error_issued_ms, issued_ms)
        # A command the drain gave up on failed from when it was issued, or just after the last
        # success if that came later: the replay counts it there.
        since = t
        if hung and issued_ms is not None:
            after_ok = self.last_ok_ms + 1 if self.last_ok_ms is not None else issued_ms
            since = max(issued_ms, after_ok)
        if self.first_fail_since_ok_ms is None or since < self.first_fail_since_ok_ms:
            self.first_fail_since_ok_ms = since

    def wedged_since(self):
        """The moment from which the client had no startup node and every command failed."""
        if self.empty_since_ms is None or self.first_fail_since_ok_ms is None:
            return None
        since = max(self.empty_since_ms, self.first_fail_since_ok_ms)
        if self.last_ok_ms is not None and self.last_ok_ms >= since:
            return None
        return since


def make_call(client, command, key, i):
    if command == "zadd":
        return client.zadd(key, {f"m:{i % 97}": i})
    if command == "set":
        return client.set(key, i)
    if command == "get":
        return client.get(key)
    return client.incr(key)


def quiet_rtt_ms(host, port, n=20):
    """The median round trip of `n` PINGs to host:port on a plain blocking socket, milliseconds
    (None when the node cannot be reached): the network and the server, no client library."""
    try:
        with socket.create_connection((host, port), timeout=1.0) as sock:
            times = []
            for _ in range(n):
                t0 = time.monotonic()
                sock.sendall(b"PING\r\n")
                reply = b""
                while not reply.endswith(b"\r\n"):
                    chunk = sock.recv(64)
                    if not chunk:
                        return None
                    reply += chunk
                times.append(time.monotonic() - t0)
            return quantile_ms(times, 0.5)
    except OSError:
        return None


async def main():
    global TRACE, CLIENT
    if os.environ.get("SLOTSCOPE_APP_TRACE"):
        TRACE = open(os.environ["SLOTSCOPE_APP_TRACE"], "a", encoding="utf-8")
    s = settings_from(sys.argv)
    counts = Counts().install()
    out = Outcomes()
    host, port = parse_addr(s["startup"])
    kwargs = {
        "host": host,
        "port": port,
        "socket_timeout": s["socket_timeout_s"],
        "socket_connect_timeout": s["connect_timeout_s"],
        "client_name": s["client_name"],
    }
    if s["address_remap"]:
        to = parse_addr(s["address_remap"])
        kwargs["address_remap"] = lambda _addr: to
    rtt_ms = quiet_rtt_ms(host, port)
    client = RedisCluster(**kwargs)
    CLIENT = client
    if TRACE is not None:
        client._lock = TracedLock()

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)

    async def watcher():
        while not stop.is_set():
            out.watch(client)
            await asyncio.sleep(WATCH_PERIOD_S)

    watch_task = asyncio.create_task(watcher())
    rng = random.Random(s["seed"])
    permits = asyncio.Semaphore(s["in_flight"])
    tasks = set()
    period = 1.0 / s["rate"]
    started_ms = now_ms()
    out.started_ms = started_ms
    cpu_started = time.process_time()
    gc_started = gc.get_stats()[2]["collections"]
    start = time.monotonic()
    scheduled = math.ceil(s["duration_s"] * s["rate"])

    async def one(i, key):
        t0 = time.monotonic()
        if TRACE is not None:
            trace("issue", default=client.nodes_manager.default_node is not None)
        try:
            await make_call(client, s["command"], key, i)
            out.latencies.append(time.monotonic() - t0)
            out.ok()
        except Exception as e:  # noqa: BLE001 - the service counts its failures and goes on
            trace("failed", error=type(e).__name__, key=key)
            out.failed(e, issued_ms=now_ms() - round((time.monotonic() - t0) * 1000))
        except asyncio.CancelledError as e:
            # Still in flight when the drain ran out: counted as failed, so issued adds up, with
            # when it was issued (a command that hung since then).
            out.failed(e, issued_ms=now_ms() - round((time.monotonic() - t0) * 1000), hung=True)
            raise
        finally:
            out.watch(client)
            permits.release()

    def late_from(i):
        # The first command from `i` whose due time has not passed yet: those before it came due
        # while the pacer waited for a permit, and are skipped (no burst), whether the wait ended
        # with a permit or with the schedule.
        return max(i, math.ceil((time.monotonic() - start) / period))

    i = 0
    while not stop.is_set():
        due = start + i * period
        if i >= scheduled:
            break
        delay = due - time.monotonic()
        if delay > 0:
            try:
                await asyncio.wait_for(stop.wait(), delay)
                break
            except asyncio.TimeoutError:
                pass
        waited = permits.locked()
        await permits.acquire()
        if stop.is_set():
            permits.release()
            if waited:
                # The schedule ended while the pacer waited.
                out.skipped += min(late_from(i), scheduled) - i
            break
        if waited:
            late = late_from(i)
            out.skipped += min(late, scheduled) - i
            if late >= scheduled:
                permits.release()
                break
            i = late
            delay = start + i * period - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
        key = f"{s['key_prefix']}:{{{rng.randrange(s['keys'])}}}"
        out.issued += 1
        t = asyncio.create_task(one(i, key))
        tasks.add(t)
        t.add_done_callback(tasks.discard)
        i += 1

    issuing_ended_ms = now_ms()
    cpu_ms = round(1000 * (time.process_time() - cpu_started), 1)
    gc_full = gc.get_stats()[2]["collections"] - gc_started
    if tasks:
        done, pending = await asyncio.wait(set(tasks), timeout=DRAIN_LIMIT_S)
        for t in pending:
            t.cancel()
        if pending:
            log(f"{len(pending)} commands still in flight after {DRAIN_LIMIT_S} s: cancelled")
            # Let each cancelled command count itself as failed.
            await asyncio.wait(pending, timeout=2.0)
    out.watch(client)
    stop.set()
    await watch_task
    nm = client.nodes_manager
    wedged_since = out.wedged_since()
    summary = {
        "client": "redis-py",
        "version": redis.__version__,
        "settings": s,
        "issued": out.issued,
        "succeeded": out.succeeded,
        "failed": sum(out.errors.values()),
        "skipped": out.skipped,
        "errors": dict(out.errors),
        "first_error": out.first_error,
        "first_error_ms": out.first_error_ms,
        "first_error_issued_ms": out.first_error_issued_ms,
        "outcomes": out.buckets(),
        "moved": dict(counts.moved),
        "ask": dict(counts.ask),
        "error_replies": dict(counts.error_replies),
        "calls": dict(counts.calls),
        "initializations": counts.initializations,
        "initializations_ok": counts.initializations_ok,
        "cluster_slots_calls": counts.cluster_slots_calls,
        "new_connections": counts.new_connections,
        "wedged": wedged_since is not None and len(nm.startup_nodes) == 0,
        "wedged_since_ms": wedged_since if len(nm.startup_nodes) == 0 else None,
        "startup_nodes_end": len(nm.startup_nodes),
        "latency_p50_ms": out.latency_ms(0.5),
        "latency_p90_ms": out.latency_ms(0.9),
        "exchange_p50_ms": quantile_ms(counts.exchanges, 0.5),
        "rtt_ms": rtt_ms,
        "cpu_ms": cpu_ms,
        "gc_full_collections": gc_full,
        "started_ms": started_ms,
        "issuing_ended_ms": issuing_ended_ms,
        "ended_ms": now_ms(),
    }
    try:
        close = getattr(client, "aclose", None) or client.close
        await asyncio.wait_for(close(), 2)
    except Exception as e:  # noqa: BLE001 - closing a wedged client may fail; the summary matters
        log(f"close: {type(e).__name__}: {e}")
    print(json.dumps(summary, sort_keys=True), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
