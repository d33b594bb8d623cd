"""Incident 1 client: an asyncio redis-py cluster client writing exposures with ZADD.

Runs unchanged on redis-py 5.0.0 (which loses its startup nodes on a connection error and stays
wedged) and 8.0.0 (which recovers). It connects through one startup node, writes
`ZADD device_imp:<n> <score> <member>` at a bounded rate for a bounded time, catches every exception
(the service in the write-up did the same: the write was the last step and its error was only
counted) and at the end prints one JSON line to stdout:

    ok, errors (by exception class), first_error (the first message of each class), messages,
    startup_nodes / nodes_cache (the client's own node lists at the end), wire (what was really sent
    to each node: per command, ok / MOVED / ASK / exception class), timeline (100 ms buckets).

With `--concurrency N`, N tasks share the client (each issues its next write when its previous one
is done; the pacer holds all of them to --rate together), and the summary also has `connections`
(per node: connections opened and connects that failed) and `connections_opened`.

Usage: incident1.py --host 127.0.0.1 --port 7000 --duration 20 [--rate 200] [--keys 4000]
                    [--timeout 0.5] [--name exposure] [--concurrency 1]
"""

import argparse
import asyncio

from redis.asyncio.cluster import RedisCluster

from scenario_common import Outcomes, Pacer, Wire, emit, log, run_until


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--duration", type=float, required=True, help="seconds, at most 600")
    p.add_argument("--rate", type=float, default=200.0, help="writes per second, at most 2000")
    p.add_argument("--keys", type=int, default=4000, help="distinct keys device_imp:0..N-1")
    p.add_argument("--timeout", type=float, default=0.5, help="socket (connect) timeout, seconds")
    p.add_argument("--name", default="exposure", help="connection name (CLIENT SETNAME)")
    p.add_argument("--concurrency", type=int, default=1, help="tasks sharing the client, 1-64")
    a = p.parse_args()
    if not 0 < a.duration <= 600 or not 0 < a.rate <= 2000 or a.keys < 1:
        p.error("duration must be in (0, 600], rate in (0, 2000], keys >= 1")
    if not 1 <= a.concurrency <= 64:
        p.error("concurrency must be in [1, 64]")
    return a


async def main():
    args = parse_args()
    wire = Wire().install()
    outcomes = Outcomes()
    client = RedisCluster(
        host=args.host,
        port=args.port,
        socket_timeout=args.timeout,
        socket_connect_timeout=args.timeout,
        client_name=args.name,
    )
    pacer = Pacer(args.rate)

    async def step(i):
        await pacer.wait()
        key = f"device_imp:{i % args.keys}"
        try:
            await client.zadd(key, {f"item:{i % 97}": i})
            outcomes.record_ok("zadd")
        except Exception as e:  # noqa: BLE001 - the service counted and went on
            if outcomes.first_error_ms is None:
                log(f"first error after {outcomes.ok} writes: {type(e).__name__}: {e}")
            outcomes.record_error("zadd", e)

    run = await run_until(args.duration, step, args.concurrency)
    nm = client.nodes_manager
    summary = outcomes.as_json()
    summary.update(run)
    summary["startup_nodes"] = sorted(nm.startup_nodes)
    summary["nodes_cache"] = sorted(nm.nodes_cache)
    summary["wire"] = wire.as_json()
    summary["connections"] = wire.connections_json()
    summary["connections_opened"] = wire.connections_opened()
    summary["moved_timeline"] = wire.moved_timeline()
    summary["zadd_ok_by_node"] = {
        node: cmds["zadd"].get("ok", 0) for node, cmds in summary["wire"].items() if "zadd" in cmds
    }
    try:
        close = getattr(client, "aclose", None) or client.close
        await asyncio.wait_for(close(), 2)
    except Exception as e:  # noqa: BLE001 - closing a wedged client may fail; the summary matters
        log(f"close: {type(e).__name__}: {e}")
    emit(summary)


if __name__ == "__main__":
    asyncio.run(main())
