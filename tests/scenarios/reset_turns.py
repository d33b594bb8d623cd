"""How many turns of the event loop redis-py's asyncio cluster reset takes.

Usage: <venv>/bin/python reset_turns.py PORT [REPS] [IN_FLIGHT]

Against the cluster node 127.0.0.1:PORT: a `RedisCluster` runs IN_FLIGHT commands at once (so
each node's pool holds several connections), then `aclose()` (5.0.0: `close()`) with a ticker
task that yields to the loop in a loop: the ticks during the call are the loop turns it spans,
each of which, under load, lasts as long as everything else ready in it. REPS times; prints the
median and range of the turns, the median time the call took (with nothing else to run: its own
work) and the connections it closed. docs/FIDELITY.md ("The anatomy of redis-py 8.1.0's storm")
has what it measured and the model change tried with it.
"""

import asyncio
import statistics
import sys
import time

from redis.asyncio.cluster import RedisCluster


async def one(port, in_flight):
    client = RedisCluster(host="127.0.0.1", port=port)
    await client.initialize()
    await asyncio.gather(*(client.set(f"reset_turns:{i}", i) for i in range(in_flight)))
    open_conns = sum(
        len(node._connections) for node in client.nodes_manager.nodes_cache.values()
    )
    ticks = 0
    stop = False

    async def ticker():
        nonlocal ticks
        while not stop:
            ticks += 1
            await asyncio.sleep(0)

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    before = ticks
    t0 = time.perf_counter()
    await (client.aclose() if hasattr(client, "aclose") else client.close())
    took = time.perf_counter() - t0
    turns = ticks - before
    stop = True
    await task
    return turns, open_conns, took


async def main(port, reps, in_flight):
    rows = [await one(port, in_flight) for _ in range(reps)]
    turns = [r[0] for r in rows]
    conns = [r[1] for r in rows]
    took = statistics.median(r[2] for r in rows) * 1000
    print(
        "reset: %d loop turns (min %d, max %d), %.2f ms, %d connections open (n %d)"
        % (statistics.median(turns), min(turns), max(turns), took, statistics.median(conns), reps)
    )


if __name__ == "__main__":
    args = sys.argv[1:]
    asyncio.run(
        main(
            int(args[0]),
            int(args[1]) if len(args) > 1 else 20,
            int(args[2]) if len(args) > 2 else 30,
        )
    )
