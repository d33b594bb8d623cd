"""How redis-py's asyncio client lets other tasks run while it reads the `COMMAND` table.

Usage: <venv>/bin/python command_yield.py PORT [REPS]

Runs `AsyncCommandsParser.initialize(node)` (`COMMAND` to a `ClusterNode` and the parsing of its
reply into the command table, as every `RedisCluster.initialize()` ends) REPS times against the
server on 127.0.0.1:PORT (any Redis or Valkey; cluster mode not needed), with a ticker task that
yields to the event loop in a loop. A gap between two ticks is a stretch the parse held the loop.
Prints the medians of: the whole call, its longest hold, and all holds over 0.3 ms together; the
rest of the call the loop ran other tasks between the parser's reads. docs/FIDELITY.md (the
`COMMAND` table read a piece at a time) has what it measured and the model change tried with it.
"""

import asyncio
import statistics
import sys
import time

from redis.asyncio.cluster import ClusterNode
from redis._parsers import AsyncCommandsParser

WARMUP = 4


def callbacks():
    """The response callbacks a RedisCluster gives its nodes (RESP2), by release."""
    try:
        from redis._parsers.helpers import get_response_callbacks  # 8.x

        return get_response_callbacks(user_protocol=None, legacy_responses=True)
    except ImportError:
        from redis.asyncio.cluster import _RedisCallbacks, _RedisCallbacksRESP2  # 5.x

        cb = _RedisCallbacks.copy()
        cb.update(_RedisCallbacksRESP2)
        return cb


async def one(port):
    node = ClusterNode("127.0.0.1", port, response_callbacks=callbacks())
    await node.execute_command("PING")
    ticks = []
    stop = False

    async def ticker():
        while not stop:
            ticks.append(time.perf_counter())
            await asyncio.sleep(0)

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0.005)
    parser = AsyncCommandsParser()
    t0 = time.perf_counter()
    await parser.initialize(node)
    t1 = time.perf_counter()
    stop = True
    await task
    await node.disconnect()
    seen = [t for t in ticks if t >= t0]
    holds = [b - a for a, b in zip(seen, seen[1:]) if b - a > 0.3e-3]
    return (t1 - t0, max(holds, default=0.0), sum(holds))


async def main(port, reps):
    rows = [await one(port) for _ in range(reps + WARMUP)][WARMUP:]
    total, longest, held = (statistics.median(row[i] for row in rows) * 1000 for i in range(3))
    print(
        "call %.1f ms, longest hold %.1f ms, holds over 0.3 ms %.1f ms (%.0f %% of the call), n %d"
        % (total, longest, held, 100 * held / total, len(rows))
    )


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 30))
