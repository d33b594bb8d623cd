"""How long redis-py's asyncio cluster client takes for its first initialisation in a fresh process.

Usage: <venv>/bin/python first_init.py PORT [PROCESSES]

Starts PROCESSES fresh Python processes one after the other; each creates a `RedisCluster` on the
cluster node 127.0.0.1:PORT and times its first `initialize()` (as an application's first command
triggers it), split into `nodes_manager.initialize()` (the slot cache) and
`commands_parser.initialize()` (the `COMMAND` table), then ten more initialisations of the same
client after `aclose()`. Prints the medians over the processes, wall clock and process CPU, of
the first and of the later ones: what the first costs beyond `init_cost.py`'s warm figures.
"""

import asyncio
import json
import statistics
import subprocess
import sys
import time

LATER = 10


async def child(port):
    from redis._parsers import AsyncCommandsParser
    from redis.asyncio.cluster import NodesManager, RedisCluster

    out = {"slots": [], "command": []}

    def timed(cls, name, key):
        inner = getattr(cls, name)

        async def wrapper(*args, **kwargs):
            w, c = time.perf_counter(), time.process_time()
            try:
                return await inner(*args, **kwargs)
            finally:
                out[key].append((time.perf_counter() - w, time.process_time() - c))

        setattr(cls, name, wrapper)

    timed(NodesManager, "initialize", "slots")
    timed(AsyncCommandsParser, "initialize", "command")
    client = RedisCluster(host="127.0.0.1", port=port)
    await client.initialize()
    for _ in range(LATER):
        await client.aclose() if hasattr(client, "aclose") else await client.close()
        await client.initialize()
    await client.aclose() if hasattr(client, "aclose") else await client.close()
    print(json.dumps(out))


def main(port, processes):
    runs = []
    for _ in range(processes):
        text = subprocess.run(
            [sys.executable, __file__, "--child", str(port)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        runs.append(json.loads(text))
    for key in ("slots", "command"):
        first = [r[key][0] for r in runs]
        later = [x for r in runs for x in r[key][1:]]
        print(
            "%-8s first: wall %.1f ms, CPU %.1f ms; later: wall %.1f ms, CPU %.1f ms (%d processes)"
            % (
                key,
                1000 * statistics.median(w for w, _ in first),
                1000 * statistics.median(c for _, c in first),
                1000 * statistics.median(w for w, _ in later),
                1000 * statistics.median(c for _, c in later),
                processes,
            )
        )


if __name__ == "__main__":
    if sys.argv[1] == "--child":
        asyncio.run(child(int(sys.argv[2])))
    else:
        main(int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 10)
