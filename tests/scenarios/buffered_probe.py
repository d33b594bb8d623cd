"""Is a reply that has reached the client read after its connection is disconnected?

Usage: <venv>/bin/python buffered_probe.py PORT

Against the cluster node on 127.0.0.1:PORT, with the virtualenv of the redis-py release to
probe: a task sends `ZADD` and waits for its reply; the event loop is then held (a blocking
sleep) until the reply is in the client's socket buffer, and `ClusterNode.disconnect()` closes
every connection of the node before the task resumes, after 0-3 turns of the loop. Prints what
the task got, five trials per case. On 5.0.0 and 8.1.0 every trial read its reply: a reply the
event loop has taken in survives a reset (the replay models' rule, with when a busy loop takes a
reply in: crates/core/src/replay/models/redis_py/reset.rs).
"""

import asyncio
import sys
import time

import redis
from redis.asyncio.cluster import RedisCluster


async def trial(rc, turns):
    key = "probe:{buffered}"
    node = rc.get_node_from_key(key)
    task = asyncio.create_task(rc.zadd(key, {"m": 1}))
    for _ in range(3):
        await asyncio.sleep(0)  # the task writes and waits for its reply
    time.sleep(0.01)  # the reply reaches the socket buffer
    for _ in range(turns):
        await asyncio.sleep(0)
    await node.disconnect()
    try:
        return "read %r" % (await task,)
    except Exception as e:  # noqa: BLE001 - what the task met is the result
        return "lost (%s)" % type(e).__name__


async def main(port):
    rc = RedisCluster(host="127.0.0.1", port=port)
    await rc.initialize()
    for turns in range(4):
        results = [await trial(rc, turns) for _ in range(5)]
        print(redis.__version__, "turns", turns, results)
    await (rc.aclose() if hasattr(rc, "aclose") else rc.close())


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    asyncio.run(main(int(sys.argv[1])))
