// A Node.js cluster library's own CPU cost of a topology refresh on this machine, as its replay
// model takes it.
//
// Usage: node apps/node/cpu-cost.mjs node-redis|ioredis|ioredis@5.4.1 PORT [CYCLES]
//
// node-redis (crates/core/src/replay/models/node_redis.rs, `rediscover_cpu_ms`): against the
// cluster node 127.0.0.1:PORT (a cluster with every slot assigned), connects one
// `createCluster` of redis 6.3.1 (@redis/client 6.3.1), then awaits CYCLES (default 200)
// `RedisClusterSlots#rediscover()` in a row (cluster/cluster-slots.js:618-631), the call a MOVED
// makes (cluster/index.js:445-456): each a throwaway client to a known master (`#getShards`,
// :472-490, connected, CLUSTER SLOTS, destroyed) and the 16384-slot table rebuilt from its answer
// (`#discover`, :185-245). Prints `{"rediscover_cpu_ms": <median>}`.
//
// ioredis (crates/core/src/replay/models/ioredis.rs, `refresh_cpu_ms`): connects one
// `Redis.Cluster` of ioredis 6.0.0 to the same node, then awaits CYCLES
// `Cluster#refreshSlotsCache(callback)` in a row (built/cluster/index.js:356-402), the refresh a
// MOVED starts (:470): each asks a shuffled pool node on a duplicate connection
// (`getInfoFromNode`, :811-829: connected, CLUSTER SLOTS, disconnected) and writes the answer
// into `slots` and the pool (:842-880). Prints `{"refresh_cpu_ms": <median>}`. `ioredis@5.4.1`
// times the same on ioredis 5.4.1 (the package `ioredis-5`; `refreshSlotsCache` at :290).
//
// Each call's process CPU (`process.cpuUsage`, user + system, so the socket work counts as
// well) is one sample; the first 20 calls warm the JIT and are not kept. The fidelity matrix runs
// it before each case of the library and gives the figure to every replay of the case (`--set
// NAME=VALUE`), as it does redis-py's (tests/scenarios/cpu_cost.py). A user can run it on their
// application's host.

import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const WARM = 20;

function usage(message) {
  process.stderr.write(`cpu-cost: ${message}\nusage: node apps/node/cpu-cost.mjs node-redis|ioredis|ioredis@5.4.1 PORT [CYCLES]\n`);
  process.exit(2);
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

async function nodeRedis(port, cycles) {
  const { createCluster } = require("redis");
  const cluster = createCluster({
    rootNodes: [{ url: `redis://127.0.0.1:${port}` }],
  });
  cluster.on("error", () => {});
  await cluster.connect();
  // `createCluster` returns the cluster (its `_self` is itself, cluster/index.js:127-137).
  const slots = (cluster._self ?? cluster)._slots;
  if (!slots || typeof slots.rediscover !== "function") {
    throw new Error("RedisClusterSlots#rediscover not found: not @redis/client 6.3.x?");
  }
  const samples = [];
  for (let i = 0; i < WARM + cycles; i += 1) {
    const before = process.cpuUsage();
    await slots.rediscover();
    const used = process.cpuUsage(before);
    if (i >= WARM) samples.push((used.user + used.system) / 1000);
  }
  await cluster.close();
  return { rediscover_cpu_ms: Number(median(samples).toFixed(4)) };
}

async function ioredis(port, cycles, pkg = "ioredis") {
  const Redis = require(pkg);
  const cluster = new Redis.Cluster([{ host: "127.0.0.1", port }]);
  cluster.on("error", () => {});
  await new Promise((resolve, reject) => {
    cluster.once("ready", resolve);
    cluster.once("end", () => reject(new Error("the cluster ended before it was ready")));
  });
  if (typeof cluster.refreshSlotsCache !== "function") {
    throw new Error("Cluster#refreshSlotsCache not found: not ioredis 5.4-6.1?");
  }
  const samples = [];
  for (let i = 0; i < WARM + cycles; i += 1) {
    const before = process.cpuUsage();
    await new Promise((resolve, reject) =>
      cluster.refreshSlotsCache((err) => (err ? reject(err) : resolve())),
    );
    const used = process.cpuUsage(before);
    if (i >= WARM) samples.push((used.user + used.system) / 1000);
  }
  cluster.disconnect();
  return { refresh_cpu_ms: Number(median(samples).toFixed(4)) };
}

const [library, portText, cyclesText] = process.argv.slice(2);
const port = Number(portText);
const cycles = cyclesText === undefined ? 200 : Number(cyclesText);
const timings = {
  "node-redis": nodeRedis,
  ioredis,
  "ioredis@5.4.1": (p, c) => ioredis(p, c, "ioredis-5"),
};
if (!Object.hasOwn(timings, library)) usage(`no timing for ${JSON.stringify(library)}`);
if (!Number.isInteger(port) || port <= 0 || port > 65535) usage(`not a port: ${JSON.stringify(portText)}`);
if (!Number.isInteger(cycles) || cycles < 1 || cycles > 100000) usage(`not a count of cycles: ${JSON.stringify(cyclesText)}`);
const out = await timings[library](port, cycles);
process.stdout.write(`${JSON.stringify(out)}\n`);
