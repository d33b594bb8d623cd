"""redis-py's own CPU costs on this machine, as the replay model of redis-py takes them.

Usage: <venv>/bin/python cpu_cost.py PORT [CYCLES]

Against the cluster node 127.0.0.1:PORT (a cluster with every slot assigned), with the
virtualenv of the redis-py release to time, measures process CPU time of:

- CYCLES re-initialisations of one asyncio `RedisCluster`, each after `aclose()` (`close()` in
  5.0.0) as a storm's are, split into `NodesManager.initialize()` (the slot cache) and
  `AsyncCommandsParser.initialize()` (the `COMMAND` table); each opens one connection, whose
  cost (below) is taken off, as the model charges it apart;
- the full collections of CPython's garbage collector (generation 2) during those cycles, timed
  through `gc.callbacks`: the slot caches the initialisations build are what fills the oldest
  generation, so their rate is per initialisation;
- 100 `Connection.connect()` + `disconnect()` in a row, handshake included;
- 1000 `ZADD` through the client, awaited in a row;
- 200 `ZADD`s whose connection ends under them (its stream at end-of-file when the reply is
  read, as a reset's `disconnect()` or a `CLIENT KILL` leaves it): the `ConnectionError` raised
  through `_execute_command`'s handler to the caller, no retry, the client's `close()` (5.0.0) /
  `aclose()` a no-op meanwhile as it is when a reset already came (the model charges a reset's
  closes apart). Beyond a `ZADD`'s own time: `closed_error_cpu_ms`;
- 200 `ZADD`s routed to a node whose port refuses connections (a `ClusterNode` of a port nothing
  listens on in the slot's place), the same way: the whole attempt, `refused_cpu_ms`.

Prints one JSON line of the model's option names (crates/core/src/replay/models/redis_py/
settings.rs) and their medians in milliseconds: `initialize_cpu_ms`, `command_cpu_ms`,
`connect_cpu_ms`, `reply_cpu_ms`, `closed_error_cpu_ms`, `refused_cpu_ms`, and `gc_full_ms` (the
median full collection) and `gc_full_every` (cycles per full collection; both left out when none
came). The fidelity matrix runs it before its redis-py cases and gives the figures to every
replay (`--set NAME=VALUE`): the machine's speed changes between days by more than the matrix's
targets allow. A user can run it on their application's host.
"""

import asyncio
import gc
import json
import socket
import statistics
import sys
import time
import warnings

from redis._parsers import AsyncCommandsParser
from redis.asyncio.cluster import ClusterNode, NodesManager, RedisCluster
from redis.asyncio.connection import Connection
from redis.exceptions import ConnectionError

CLOSED = 200
CONNECTS = 100
CYCLES = 60
REPLIES = 1000


def timed(cls, name, samples):
    """Wraps `cls.name` (a coroutine method) to append its process CPU time to `samples`."""
    inner = getattr(cls, name)

    async def wrapper(*args, **kwargs):
        start = time.process_time()
        try:
            return await inner(*args, **kwargs)
        finally:
            samples.append(time.process_time() - start)

    setattr(cls, name, wrapper)


def full_collections(samples):
    """Appends the process CPU time of every full collection from now on to `samples`; returns
    the callback, to be removed."""
    started = []

    def callback(phase, info):
        if info["generation"] != 2:
            return
        if phase == "start":
            started.append(time.process_time())
        elif started:
            samples.append(time.process_time() - started.pop())

    gc.callbacks.append(callback)
    return callback


async def close(client):
    await (client.aclose() if hasattr(client, "aclose") else client.close())


async def connect_cost(port):
    start = time.process_time()
    for _ in range(CONNECTS):
        conn = Connection(host="127.0.0.1", port=port)
        await conn.connect()
        await conn.disconnect()
    return (time.process_time() - start) / CONNECTS


def free_port():
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def failure_costs(port):
    """The median process CPU times of a `ZADD` whose connection ended under it, and of one
    whose node refuses connections (see above)."""
    with warnings.catch_warnings():
        # Deprecated from 6.0.0 for a `retry` object, still taken by 8.1.0.
        warnings.simplefilter("ignore", DeprecationWarning)
        client = RedisCluster(host="127.0.0.1", port=port, cluster_error_retry_attempts=0)
    await client.initialize()
    cls = type(client)
    resets = {m: getattr(cls, m) for m in ("close", "aclose") if hasattr(cls, m)}

    async def no_reset(*_args, **_kwargs):
        return None

    loop = asyncio.get_running_loop()
    # The server's reply reaches the ended stream later, which asyncio reports: not the client's.
    loop.set_exception_handler(lambda _loop, _context: None)
    closed, refused = [], []
    slot = client.keyslot("cpu-cost")
    closed_port = free_port()
    startup = dict(client.nodes_manager.startup_nodes)

    async def failing(member, score, into):
        """Times a `ZADD` of `member` at `score` that raises `ConnectionError` into `into`, the
        client's reset a no-op meanwhile; then undoes what its handler did (the node 5.0.0
        popped, the reset 8.1.0 asked for)."""
        for name in resets:
            setattr(cls, name, no_reset)
        start = time.process_time()
        try:
            await client.zadd("cpu-cost", {member: score})
        except ConnectionError:
            into.append(time.process_time() - start)
        finally:
            for name, method in resets.items():
                setattr(cls, name, method)
        client.nodes_manager.startup_nodes.update(startup)
        client._initialize = False

    for i in range(CLOSED):
        await client.zadd("cpu-cost", {"closed": i})
        node = client.get_node_from_key("cpu-cost")
        for conn in list(node._free):
            conn._reader.feed_eof()
        await failing("closed", i, closed)
        await node.disconnect()
        kwargs = {k: v for k, v in node.connection_kwargs.items() if k not in ("host", "port")}
        owners = client.nodes_manager.slots_cache[slot]
        client.nodes_manager.slots_cache[slot] = [
            ClusterNode("127.0.0.1", closed_port, server_type="primary", **kwargs)
        ]
        await failing("refused", i, refused)
        client.nodes_manager.slots_cache[slot] = owners
    loop.set_exception_handler(None)
    await close(client)
    median = lambda s: statistics.median(s) if s else None  # noqa: E731
    return median(closed), median(refused)


async def main(port, cycles):
    connect = await connect_cost(port)
    slots, command = [], []
    client = RedisCluster(host="127.0.0.1", port=port)
    await client.initialize()
    start = time.process_time()
    for i in range(REPLIES):
        await client.zadd("cpu-cost", {str(i % 100): i})
    reply = (time.process_time() - start) / REPLIES
    closed, refused = await failure_costs(port)
    await client.delete("cpu-cost")
    timed(NodesManager, "initialize", slots)
    timed(AsyncCommandsParser, "initialize", command)
    full = []
    callback = full_collections(full)
    for _ in range(cycles):
        await close(client)
        # The old connections' close finishes before the next initialisation, as in a storm's
        # loop turns.
        await asyncio.sleep(0.01)
        await client.initialize()
    gc.callbacks.remove(callback)
    await close(client)
    ms = lambda s: round(1000 * s, 3)  # noqa: E731
    figures = {
        "initialize_cpu_ms": ms(max(statistics.median(slots) - connect, 0.0)),
        "command_cpu_ms": ms(max(statistics.median(command) - connect, 0.0)),
        "connect_cpu_ms": ms(connect),
        "reply_cpu_ms": ms(reply),
    }
    if closed is not None:
        figures["closed_error_cpu_ms"] = ms(max(closed - reply, 0.0))
    if refused is not None:
        figures["refused_cpu_ms"] = ms(refused)
    if full:
        figures["gc_full_ms"] = ms(statistics.median(full))
        figures["gc_full_every"] = round(cycles / len(full), 2)
    print(json.dumps(figures))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else CYCLES))
