"""Incident 2 clients: a MOVED storm from a local-development `address_remap`, next to a healthy
service. Written for redis-py 8.x (asyncio `RedisCluster`); one process per service.

- `--role recommendation`: `address_remap` rewrites EVERY node address the cluster reports to one
  address (`--remap-to HOST:PORT`, node A), as the write-up's `.env` switch rewrote every node to the
  configuration endpoint. The routing table then points all 16384 slots at node A: commands for
  node B's slots are answered MOVED, the client patches one slot (the MOVED address is not
  remapped) and every `reinitialize_steps` (5) MOVED it closes all connections and rebuilds the
  table, remapped again. Reads only with ZREVRANGE and ZRANGEBYSCORE, alternately.
- `--role api`: no remap; reads only with ZREVRANGEBYSCORE. The command sets are disjoint, so the
  server's per-command counters tell the services apart.

Keys are `rank:<n>` for n in 0..keys-1 (sorted sets the test writes beforehand), drawn at random so
they spread over both shards. Each process names its connections (`--name`, CLIENT SETNAME) so the
two services are told apart on servers without CLIENT SETINFO (Redis 7.0). At the end one JSON line
goes to stdout: ok, errors, `wire` (per node and command: ok / MOVED / …, what the library really
sent), `moved` and `sent` per command, the MOVED share of calls per command (MOVED / calls sent, the
same ratio as the server's rejected_calls / (calls + rejected_calls)) and of application commands
(MOVED / commands issued), and the client's routing table at the end.

Usage: incident2.py --role recommendation --host 127.0.0.1 --port 7000 --remap-to 127.0.0.1:7000
                    --duration 20 [--rate 200] [--keys 2000] [--seed 1] [--protocol 3]
       incident2.py --role api --host 127.0.0.1 --port 7000 --duration 20 [--rate 100]
"""

import argparse
import asyncio
import collections
import random

from redis.asyncio.cluster import RedisCluster

from scenario_common import Outcomes, Pacer, Wire, emit, log, run_until

COMMANDS = {
    "recommendation": ["zrevrange", "zrangebyscore"],
    "api": ["zrevrangebyscore"],
}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--role", choices=sorted(COMMANDS), required=True)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--remap-to", help="HOST:PORT every node address is rewritten to")
    p.add_argument("--duration", type=float, required=True, help="seconds, at most 600")
    p.add_argument("--rate", type=float, default=200.0, help="commands per second, at most 2000")
    p.add_argument("--keys", type=int, default=2000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--timeout", type=float, default=2.0)
    p.add_argument("--name", help="connection name; default: the role")
    p.add_argument(
        "--protocol", type=int, choices=[2, 3], help="RESP version; default: the library's"
    )
    a = p.parse_args()
    if not 0 < a.duration <= 600 or not 0 < a.rate <= 2000 or a.keys < 1:
        p.error("duration must be in (0, 600], rate in (0, 2000], keys >= 1")
    return a


def remap_to(target):
    host, _, port = target.rpartition(":")
    port = int(port)

    def remap(address):
        return host, port

    return remap


async def issue(client, cmd, key):
    if cmd == "zrevrange":
        return await client.zrevrange(key, 0, 9)
    if cmd == "zrangebyscore":
        return await client.zrangebyscore(key, 0, 100, start=0, num=10)
    if cmd == "zrevrangebyscore":
        return await client.zrevrangebyscore(key, 100, 0, start=0, num=10)
    raise ValueError(cmd)


async def main():
    args = parse_args()
    wire = Wire().install()
    outcomes = Outcomes()
    kwargs = {}
    if args.remap_to:
        kwargs["address_remap"] = remap_to(args.remap_to)
        # What the service logged at startup in the write-up.
        log("Redis Cluster address_remap enabled for local development")
    if args.protocol:
        kwargs["protocol"] = args.protocol
    client = RedisCluster(
        host=args.host,
        port=args.port,
        socket_timeout=args.timeout,
        socket_connect_timeout=args.timeout,
        client_name=args.name or args.role,
        **kwargs,
    )
    rng = random.Random(args.seed)
    commands = COMMANDS[args.role]
    issued = collections.Counter()
    pacer = Pacer(args.rate)

    async def step(i):
        await pacer.wait()
        cmd = commands[i % len(commands)]
        key = f"rank:{rng.randrange(args.keys)}"
        issued[cmd] += 1
        try:
            await issue(client, cmd, key)
            outcomes.record_ok(cmd)
        except Exception as e:  # noqa: BLE001 - counted, the service went on
            if outcomes.first_error_ms is None:
                log(f"first error: {type(e).__name__}: {e}")
            outcomes.record_error(cmd, e)

    run = await run_until(args.duration, step)
    summary = outcomes.as_json()
    summary.update(run)
    summary["role"] = args.role
    summary["remap_to"] = args.remap_to
    summary["wire"] = wire.as_json()
    summary["moved_timeline"] = wire.moved_timeline()
    per_cmd = {}
    for cmd in commands:
        moved = wire.total(cmd, "MOVED")
        ok = wire.total(cmd, "ok")
        sent = sum(sum(c[cmd].values()) for c in wire.counts.values() if cmd in c)
        per_cmd[cmd] = {
            "issued": issued[cmd],
            "sent": sent,
            "ok_calls": ok,
            "moved": moved,
            "moved_share_of_calls": moved / sent if sent else 0.0,
            "moved_per_command": moved / issued[cmd] if issued[cmd] else 0.0,
        }
    summary["commands"] = per_cmd
    summary["cluster_slots_sent"] = wire.total("cluster slots", "ok")
    nm = client.nodes_manager
    owners = collections.Counter(
        nodes[0].name for nodes in nm.slots_cache.values() if nodes
    )
    summary["routing_table"] = dict(owners)
    summary["startup_nodes"] = sorted(nm.startup_nodes)
    summary["nodes_cache"] = sorted(nm.nodes_cache)
    try:
        await asyncio.wait_for(client.aclose(), 2)
    except Exception as e:  # noqa: BLE001
        log(f"close: {type(e).__name__}: {e}")
    emit(summary)


if __name__ == "__main__":
    asyncio.run(main())
