"""Where a reply that redis-py's own reset closes ends up: a diagnostic, not a test.

redis-py 7.2+ (asyncio `RedisCluster`) closes every connection after each `reinitialize_steps`-th
MOVED, the ones commands are waiting on included. This script makes that happen all the time
(`address_remap` sends every address to one node, so the other nodes' slots are MOVED) and counts,
with thin wrappers that call the library's methods unchanged, the exceptions raised inside the
client by where they arose (a new connection's `connect_check_health`, `send_packed_command`,
`read_response`) next to what the application saw. docs/FIDELITY.md ("redis-py 8.1.0
`AttributeError` under `address_remap`") has the figures it gave.

Usage, against a running cluster (loopback only), with a redis-py environment made by
`scripts/setup`:

    .tools/py/redis-8.1.0/bin/python tests/scenarios/reset_probe.py HOST:PORT RATE IN_FLIGHT SECONDS

HOST:PORT is the startup node and the address every node is remapped to. One JSON line on stdout:
`outcomes` (what the application saw, by class) and `inside` ("where: class" counts; a connect
inside a send is counted in both).
"""

import asyncio
import collections
import json
import sys
import time

import redis.asyncio.connection as connection
from redis.asyncio.cluster import RedisCluster

inside = collections.Counter()


def count_raises(cls, name, where):
    """Wraps `cls.name` (a coroutine method) to count what it raises, then re-raise it."""
    original = getattr(cls, name)

    async def wrapper(self, *args, **kwargs):
        try:
            return await original(self, *args, **kwargs)
        except BaseException as e:
            inside[f"{where}: {type(e).__name__}"] += 1
            raise

    setattr(cls, name, wrapper)


count_raises(connection.AbstractConnection, "connect_check_health", "connect")
count_raises(connection.AbstractConnection, "send_packed_command", "send")
count_raises(connection.AbstractConnection, "read_response", "read")


async def main(node, rate, in_flight, seconds):
    host, port = node.rsplit(":", 1)
    client = RedisCluster(
        host=host,
        port=int(port),
        address_remap=lambda _addr: (host, int(port)),
        socket_timeout=0.5,
    )
    await client.initialize()
    outcomes = collections.Counter()
    permits = asyncio.Semaphore(in_flight)

    async def one(i):
        try:
            await client.zadd(f"key:{{{i * 7919 % 4530}}}", {"m": i})
            outcomes["ok"] += 1
        except Exception as e:  # noqa: BLE001 - counted by class, as the application sees it
            outcomes[type(e).__name__] += 1
        finally:
            permits.release()

    start = time.monotonic()
    tasks = []
    for i in range(int(rate * seconds)):
        delay = start + i / rate - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        await permits.acquire()
        tasks.append(asyncio.create_task(one(i)))
    await asyncio.gather(*tasks)
    await client.aclose()
    print(json.dumps({"rate": rate, "in_flight": in_flight, "outcomes": outcomes, "inside": inside}))


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    asyncio.run(main(sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])))
