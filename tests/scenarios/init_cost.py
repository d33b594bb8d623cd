"""CPU time of redis-py's asyncio cluster initialisation, on a live cluster.

Usage: <venv>/bin/python init_cost.py PORT [ROUNDS] [REPS]

Times (process CPU time) `commands_parser.initialize()` (`COMMAND` and the parsing of its reply
into the command table) and `nodes_manager.initialize()` (the slot cache from a live answer),
REPS calls of each per round, ROUNDS rounds half a second apart, against the cluster node on
127.0.0.1:PORT, and prints the median and quartiles of each. Run it with the virtualenv of the
redis-py release to time; the replay model's `command_cpu_ms` and `initialize_cpu_ms` defaults
(crates/core/src/replay/models/redis_py/settings.rs) come from it. The machine's own speed
drifts between runs: time several runs and take the median of their medians.
"""

import asyncio
import statistics
import sys
import time

import redis
from redis.asyncio.cluster import RedisCluster


def summary(samples):
    q1, _, q3 = statistics.quantiles(samples, n=4)
    return "median %.1f ms (p25 %.1f, p75 %.1f, n %d)" % (
        1000 * statistics.median(samples),
        1000 * q1,
        1000 * q3,
        len(samples),
    )


async def main(port, rounds, reps):
    rc = RedisCluster(host="127.0.0.1", port=port)
    await rc.initialize()
    command, init = [], []
    for _ in range(rounds):
        for _ in range(reps):
            # The default node is rebuilt by each initialisation; let the old one's
            # disconnect finish before its successor is used.
            node = rc.get_default_node()
            await asyncio.sleep(0.01)
            t0 = time.process_time()
            await rc.commands_parser.initialize(node)
            command.append(time.process_time() - t0)
            t0 = time.process_time()
            await rc.nodes_manager.initialize()
            init.append(time.process_time() - t0)
        await asyncio.sleep(0.5)
    print(redis.__version__, port, "COMMAND table:", summary(command))
    print(redis.__version__, port, "nodes_manager.initialize:", summary(init))
    await (rc.aclose() if hasattr(rc, "aclose") else rc.close())


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:4]]
    if not args:
        sys.exit(__doc__)
    port, rounds, reps = (args + [6, 25])[:3]
    asyncio.run(main(port, rounds, reps))
