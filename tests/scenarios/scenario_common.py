"""Shared parts of the scenario clients in this directory (imported by incident1.py, incident2.py).

- `Wire`: counts what the library really sent, per node, command and outcome (`ok`, `MOVED`, `ASK`,
  or an exception class), by wrapping `redis.asyncio.cluster.ClusterNode.execute_command`, the one
  place where both redis-py 5.0.0 and 8.0.0 send a command to one node and read its reply. The
  library itself keeps no such counts; they are the client's own view to compare with the server's
  counters (commandstats `rejected_calls` counts exactly these MOVED replies). It also counts, per
  node, the connections the library opened (a connect and its handshake that succeeded on a
  connection that was not connected) and the connects that failed, by wrapping the connection's
  connect (`connect_check_health` in 8.x, `connect` in 5.0.0, both called whenever a command
  is sent on a connection that is not connected).
- `Outcomes`: per application command, ok / errors by class, the first message of each class, a
  timeline in 100 ms buckets (wall clock, epoch milliseconds, to compare with a recording).
- `Pacer`: a bounded rate without bursts after a stall.
- `run_until`: runs the loop (in `concurrency` tasks sharing the one client) until the duration is
  over or SIGTERM / SIGINT arrives.
- `emit`: prints one JSON summary line to stdout.

Only standard-library modules and redis-py; nothing here reaches beyond the given host and port.
"""

import asyncio
import collections
import json
import signal
import sys
import time

import redis
from redis.asyncio.cluster import ClusterNode
from redis.asyncio.connection import AbstractConnection
from redis.exceptions import AskError, MovedError

BUCKET_MS = 100
MESSAGES_KEPT = 8


def log(*parts):
    print("scenario:", *parts, file=sys.stderr, flush=True)


class Wire:
    """Counts every command sent to one node, by node name, command and outcome."""

    def __init__(self):
        # node -> command -> outcome -> count
        self.counts = collections.defaultdict(
            lambda: collections.defaultdict(collections.Counter)
        )
        # 100 ms bucket (epoch ms) -> MOVED replies received
        self.moved_buckets = collections.Counter()
        # node -> {"opened": n, "failed": n}
        self.connections = collections.defaultdict(collections.Counter)

    def install(self):
        original = ClusterNode.execute_command
        wire = self

        async def counted(node, *args, **kwargs):
            cmd = command_name(args)
            try:
                reply = await original(node, *args, **kwargs)
            except MovedError:
                wire.counts[node.name][cmd]["MOVED"] += 1
                now_ms = int(time.time() * 1000)
                wire.moved_buckets[now_ms // BUCKET_MS * BUCKET_MS] += 1
                raise
            except AskError:
                wire.counts[node.name][cmd]["ASK"] += 1
                raise
            except BaseException as e:  # noqa: BLE001 - counted and re-raised
                wire.counts[node.name][cmd][type(e).__name__] += 1
                raise
            wire.counts[node.name][cmd]["ok"] += 1
            return reply

        ClusterNode.execute_command = counted
        self._install_connect_counter()
        return self

    def _install_connect_counter(self):
        name = (
            "connect_check_health"
            if hasattr(AbstractConnection, "connect_check_health")
            else "connect"
        )
        original = getattr(AbstractConnection, name)
        wire = self

        async def counted_connect(conn, *args, **kwargs):
            was = conn.is_connected
            node = f"{getattr(conn, 'host', '?')}:{getattr(conn, 'port', '?')}"
            try:
                result = await original(conn, *args, **kwargs)
            except BaseException:
                if not was:
                    wire.connections[node]["failed"] += 1
                raise
            if not was and conn.is_connected:
                wire.connections[node]["opened"] += 1
            return result

        setattr(AbstractConnection, name, counted_connect)

    def connections_json(self):
        return {node: dict(c) for node, c in sorted(self.connections.items())}

    def connections_opened(self):
        return sum(c["opened"] for c in self.connections.values())

    def total(self, cmd, outcome):
        return sum(c[cmd][outcome] for c in self.counts.values() if cmd in c)

    def moved_timeline(self):
        return [[t, n] for t, n in sorted(self.moved_buckets.items())]

    def as_json(self):
        return {
            node: {cmd: dict(outcomes) for cmd, outcomes in cmds.items()}
            for node, cmds in sorted(self.counts.items())
        }


def command_name(args):
    if not args:
        return "?"
    first = args[0]
    if isinstance(first, bytes):
        first = first.decode(errors="replace")
    return str(first).lower()


class Outcomes:
    """What the application saw: each command either returned or raised."""

    def __init__(self):
        self.ok = 0
        self.errors = collections.Counter()
        self.first_error = {}
        self.messages = collections.Counter()
        self.first_error_ms = None
        self.last_error_ms = None
        self.last_ok_ms = None
        self.first_ok_after_error_ms = None
        self.buckets = {}
        self.per_command = collections.defaultdict(collections.Counter)

    def _bucket(self, now_ms):
        key = now_ms // BUCKET_MS * BUCKET_MS
        return self.buckets.setdefault(key, [0, 0])

    def record_ok(self, cmd):
        now_ms = int(time.time() * 1000)
        self.ok += 1
        self.per_command[cmd]["ok"] += 1
        self._bucket(now_ms)[0] += 1
        if self.last_error_ms is not None and self.first_ok_after_error_ms is None:
            self.first_ok_after_error_ms = now_ms
        self.last_ok_ms = now_ms

    def record_error(self, cmd, e):
        now_ms = int(time.time() * 1000)
        cls = type(e).__name__
        msg = str(e)
        self.errors[cls] += 1
        self.per_command[cmd][cls] += 1
        self.first_error.setdefault(cls, msg)
        if msg in self.messages or len(self.messages) < MESSAGES_KEPT:
            self.messages[msg] += 1
        self._bucket(now_ms)[1] += 1
        if self.first_error_ms is None:
            self.first_error_ms = now_ms
        self.last_error_ms = now_ms
        # A recovery is the first success after the last error.
        self.first_ok_after_error_ms = None

    def as_json(self):
        return {
            "ok": self.ok,
            "errors": dict(self.errors),
            "error_total": sum(self.errors.values()),
            "first_error": self.first_error,
            "messages": dict(self.messages.most_common()),
            "first_error_ms": self.first_error_ms,
            "last_error_ms": self.last_error_ms,
            "last_ok_ms": self.last_ok_ms,
            "first_ok_after_last_error_ms": self.first_ok_after_error_ms,
            "per_command": {c: dict(v) for c, v in sorted(self.per_command.items())},
            "timeline": [[t, v[0], v[1]] for t, v in sorted(self.buckets.items())],
        }


class Pacer:
    """Paces a loop at `rate` per second; after a stall it resumes the rate instead of bursting."""

    def __init__(self, rate):
        self.period = 1.0 / rate
        self.next = time.monotonic()

    async def wait(self):
        now = time.monotonic()
        if self.next > now:
            await asyncio.sleep(self.next - now)
        elif now - self.next > 0.1:
            self.next = now
        self.next += self.period


async def run_until(duration, step, concurrency=1):
    """Calls `await step(i)` for i = 0, 1, … until `duration` seconds passed or SIGTERM/SIGINT,
    from `concurrency` tasks at once (each takes the next i when its previous step is done)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    deadline = time.monotonic() + duration
    started_ms = int(time.time() * 1000)
    counter = [0]

    async def lane():
        while not stop.is_set() and time.monotonic() < deadline:
            i = counter[0]
            counter[0] += 1
            await step(i)

    await asyncio.gather(*(lane() for _ in range(max(1, concurrency))))
    return {
        "started_ms": started_ms,
        "ended_ms": int(time.time() * 1000),
        "iterations": counter[0],
        "concurrency": max(1, concurrency),
    }


def emit(summary):
    summary["redis_py"] = redis.__version__
    summary["python"] = sys.version.split()[0]
    print(json.dumps(summary, sort_keys=True), flush=True)
