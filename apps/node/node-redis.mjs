// The node-redis adapter: `createCluster` of redis 6.3.1 (@redis/client 6.3.1), counted from
// inside the library: its own diagnostics channels (client/tracing.js) and two thin wrappers.
// The file:line cited are of the published package (node_modules/@redis/client/dist/lib/...),
// see README.md.

import { createRequire } from "node:module";
import diagnostics from "node:diagnostics_channel";
import { performance } from "node:perf_hooks";
import { Counts, log, parseAddr } from "./common.mjs";

const require = createRequire(import.meta.url);
const { createCluster } = require("redis");
const VERSION = require("redis/package.json").version;
const CLIENT_VERSION = require("@redis/client/package.json").version;
const RedisClusterSlots = require("@redis/client/dist/lib/cluster/cluster-slots").default;
const { CHANNELS } = require("@redis/client/dist/lib/client/tracing");
const { ErrorReply } = require("@redis/client/dist/lib/errors");

function install(counts) {
  // Topology discoveries: the first one, `RedisClusterSlots#connect` (cluster/cluster-slots.js:139),
  // and every `rediscover` (:618) that starts one: a call while one runs joins the running one
  // (`#runningRediscoverPromise ??=`, :619, cleared when it ends, :621). That field is private,
  // so a run counts as started when `rediscover` is called and no call of this wrapper is
  // pending; it ends when the promise of the call that started it settles (a few microtasks after
  // the library clears its field). It succeeded when that promise resolved: a node answered
  // CLUSTER SLOTS (:626-630; else RootNodesUnavailableError, :177).
  const connect = RedisClusterSlots.prototype.connect;
  RedisClusterSlots.prototype.connect = function (...args) {
    counts.initializations += 1;
    const p = connect.apply(this, args);
    p.then(() => (counts.initializations_ok += 1), () => {});
    return p;
  };
  const running = new WeakSet();
  const rediscover = RedisClusterSlots.prototype.rediscover;
  RedisClusterSlots.prototype.rediscover = function (...args) {
    const p = rediscover.apply(this, args);
    if (!running.has(this)) {
      running.add(this);
      counts.initializations += 1;
      p.then(
        () => {
          running.delete(this);
          counts.initializations_ok += 1;
        },
        () => running.delete(this),
      );
    }
    return p;
  };

  // Every command sent to one node: the `node-redis:command` tracing channel around
  // `RedisClient#sendCommand` (client/index.js:1126-1143): `start` when it is queued on the
  // node's connection, `asyncEnd` with `error` or `result` when it is answered or fails. CLUSTER
  // SLOTS goes the same way (cluster/cluster-slots.js:485).
  const startedAt = new WeakMap();
  diagnostics.tracingChannel(CHANNELS.TRACE_COMMAND).subscribe({
    start(ctx) {
      const args = ctx.args ?? [];
      if (String(args[0]).toUpperCase() === "CLUSTER" && String(args[1]).toUpperCase() === "SLOTS") {
        counts.cluster_slots_calls += 1;
      }
      startedAt.set(ctx, performance.now());
    },
    end() {},
    asyncStart() {},
    asyncEnd(ctx) {
      if (String(ctx.command).toLowerCase() !== counts.command) return;
      const t0 = startedAt.get(ctx);
      const ms = t0 === undefined ? null : performance.now() - t0;
      if (!ctx.error) counts.reply(ctx.command, null, ms);
      else if (ctx.error instanceof ErrorReply) counts.reply(ctx.command, ctx.error, ms);
    },
    error() {},
  });

  // Connections opened: `node-redis:connection:ready` (client/socket.js:212), published when a
  // socket connected and its handshake (HELLO with SETNAME) was answered.
  diagnostics.subscribe(CHANNELS.CONNECTION_READY, () => {
    counts.new_connections += 1;
  });
}

export async function open(s) {
  const counts = new Counts(s.command);
  install(counts);
  if (VERSION !== CLIENT_VERSION) log(`redis ${VERSION} loaded @redis/client ${CLIENT_VERSION}`);
  const startup = parseAddr(s.startup);
  const lib = { ...s.library_options };
  const defaults = lib.defaults ?? {};
  const options = {
    ...lib,
    rootNodes: [{ socket: { host: startup.host, port: startup.port } }],
    defaults: {
      name: s.client_name,
      ...defaults,
      socket: {
        connectTimeout: Math.round(s.connect_timeout_s * 1000),
        socketTimeout: Math.round(s.socket_timeout_s * 1000),
        ...(defaults.socket ?? {}),
      },
    },
  };
  if (s.address_remap) {
    const to = parseAddr(String(s.address_remap));
    options.nodeAddressMap = () => ({ host: to.host, port: to.port });
  }
  const cluster = createCluster(options);
  // The library's error events, logged (the first 5 of each kind, then every 100th).
  const seen = { cluster: 0, node: 0 };
  const note = (kind, where, e) => {
    seen[kind] += 1;
    if (seen[kind] <= 5 || seen[kind] % 100 === 0) {
      log(`${kind} error #${seen[kind]}${where}: ${e?.constructor?.name}: ${e?.message}`);
    }
  };
  cluster.on("error", (e) => note("cluster", "", e));
  cluster.on("node-error", (e, node) => note("node", ` ${`${node?.host}:${node?.port}`}`, e));
  // node-redis takes no command before its first discovery (cluster/cluster-slots.js:752-758),
  // so the application connects before its schedule; a failed connect leaves the client closed and
  // every command then raises.
  try {
    await cluster.connect();
  } catch (e) {
    log(`connect: ${e?.constructor?.name}: ${e?.message}`);
  }
  const call = (command, key, i) => {
    switch (command) {
      case "zadd":
        return cluster.zAdd(key, { score: i, value: `m:${i % 97}` });
      case "set":
        return cluster.set(key, String(i));
      case "get":
        return cluster.get(key);
      default:
        return cluster.incr(key);
    }
  };
  return {
    client: "node-redis",
    version: VERSION,
    counts,
    call,
    // node-redis keeps its root nodes and its known nodes whatever fails: not a signal.
    startupNodesEnd: () => null,
    close: () => cluster.destroy(),
  };
}
