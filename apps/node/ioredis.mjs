// The ioredis adapter: `Redis.Cluster` of ioredis 6.0.0 (or of 5.4.1, the package `ioredis-5`,
// as `ioredis@5.4.1`), counted from inside the library. Every hook calls the original unchanged;
// the file:line cited are of the published 6.0.0 package (node_modules/ioredis/built/...), see
// README.md; 5.4.1 has each hooked method (its `refreshSlotsCache` at cluster/index.js:290,
// `getInfoFromNode` :645, `handleError` :502, `Redis#sendCommand` Redis.js:326, `setStatus` :601).

import { createRequire } from "node:module";
import { performance } from "node:perf_hooks";
import { Counts, log, parseAddr } from "./common.mjs";
import { trace } from "./trace.mjs";

const require = createRequire(import.meta.url);
/** The package of each release the app runs. */
const PACKAGES = { ioredis: "ioredis", "ioredis@5.4.1": "ioredis-5" };

/** A connection's node, as `HOST:PORT`. */
const nodeOf = (redis) => `${redis.options.host}:${redis.options.port}`;

function install(counts, pkg) {
  const { Cluster, Redis } = require(pkg);
  const DataHandler = require(`${pkg}/built/DataHandler`).default;
  // Topology refreshes: `refreshSlotsCache` (cluster/index.js:356) starts one unless one is
  // running (`isRefreshing`, :360); it ends by calling back without an error on success (:397).
  const refresh = Cluster.prototype.refreshSlotsCache;
  Cluster.prototype.refreshSlotsCache = function (callback) {
    trace("refresh", { joined: this.isRefreshing });
    if (this.isRefreshing) return refresh.call(this, callback);
    counts.initializations += 1;
    return refresh.call(this, (err) => {
      trace("refresh_end", { error: err?.message ?? null });
      if (!err) counts.initializations_ok += 1;
      if (callback) callback(err);
    });
  };

  // CLUSTER SLOTS: `getInfoFromNode` (cluster/index.js:811) sends it on a duplicate of the node's
  // connection (:829) unless it has no node (:812); failed ones included.
  const info = Cluster.prototype.getInfoFromNode;
  Cluster.prototype.getInfoFromNode = function (redis, callback) {
    if (redis) counts.cluster_slots_calls += 1;
    const node = redis ? nodeOf(redis) : null;
    trace("slots", { node });
    return info.call(this, redis, (err) => {
      trace("slots_end", { node, error: err?.message ?? null });
      callback(err);
    });
  };

  // The send of one command to one node: `Redis#sendCommand` (Redis.js:354), also for each
  // redirection's resend (cluster/index.js:628); the first send to a connection is kept until
  // its reply (a command queued while the connection connects is sent again when it is ready,
  // redis/event_handler.js:424).
  const sentAt = new WeakMap();
  const send = Redis.prototype.sendCommand;
  Redis.prototype.sendCommand = function (command, stream) {
    const seen = sentAt.get(command);
    if (!seen || seen.redis !== this) sentAt.set(command, { redis: this, t: performance.now() });
    return send.call(this, command, stream);
  };

  // Replies: the parser hands each reply to `DataHandler#returnReply` (DataHandler.js:75) and
  // each error reply to `returnError` (:56); the command it answers is the head of the
  // connection's queue (:283).
  const replyOf = (handler, error) => {
    const item = handler.redis.commandQueue.peekFront();
    if (!item || String(item.command.name).toLowerCase() !== counts.command) return;
    const seen = sentAt.get(item.command);
    sentAt.delete(item.command);
    counts.reply(item.command.name, error, seen ? performance.now() - seen.t : null);
    trace("reply", { node: nodeOf(handler.redis), error: error ? String(error.message).slice(0, 40) : null });
  };
  const returnReply = DataHandler.prototype.returnReply;
  DataHandler.prototype.returnReply = function (reply) {
    if (this.redis.status !== "monitoring" && !this.redis.condition?.subscriber) {
      replyOf(this, null);
    }
    return returnReply.call(this, reply);
  };
  const returnError = DataHandler.prototype.returnError;
  DataHandler.prototype.returnError = function (err) {
    replyOf(this, err);
    return returnError.call(this, err);
  };

  // Errors a cluster command met (`handleError`, cluster/index.js:653): traced only.
  const handleError = Cluster.prototype.handleError;
  Cluster.prototype.handleError = function (error, ttl, handlers) {
    trace("handle_error", { error: String(error?.message).slice(0, 60), ttl: ttl.value ?? null });
    return handleError.call(this, error, ttl, handlers);
  };

  // Connections opened: a connection's status becomes "connect" when its socket connected
  // (redis/event_handler.js:120, `setStatus`, Redis.js).
  const setStatus = Redis.prototype.setStatus;
  Redis.prototype.setStatus = function (status, arg) {
    if (status === "connect") counts.new_connections += 1;
    trace("status", { node: nodeOf(this), status, name: this.options.connectionName ?? null });
    return setStatus.call(this, status, arg);
  };
}

export function open(s, release = "ioredis") {
  const pkg = PACKAGES[release];
  if (!pkg) throw new Error(`no ioredis package for ${release}`);
  // The version from the package itself (6.0.0's `built/utils/version` is new in 6.0.0).
  const version = require(`${pkg}/package.json`).version;
  const counts = new Counts(s.command);
  install(counts, pkg);
  const startup = parseAddr(s.startup);
  const lib = { ...s.library_options };
  const options = {
    ...lib,
    redisOptions: {
      connectionName: s.client_name,
      socketTimeout: Math.round(s.socket_timeout_s * 1000),
      connectTimeout: Math.round(s.connect_timeout_s * 1000),
      ...(lib.redisOptions ?? {}),
    },
  };
  if (s.address_remap) {
    const to = parseAddr(String(s.address_remap));
    const mapped = () => ({ host: to.host, port: to.port });
    // Before 5.5.0 `natMap` is read only as an object (5.4.1 cluster/index.js:630-643): one
    // that maps every `HOST:PORT` key it is asked for.
    options.natMap = version.startsWith("5.")
      ? new Proxy({}, { get: (_, key) => (typeof key === "string" && key.includes(":") ? mapped() : undefined) })
      : mapped;
  }
  const { Cluster } = require(pkg);
  const cluster = new Cluster([startup], options);
  // The library's error events, logged (the first 5 of each kind, then every 100th).
  const seen = { cluster: 0, node: 0 };
  const note = (kind, where, e) => {
    seen[kind] += 1;
    if (seen[kind] <= 5 || seen[kind] % 100 === 0) {
      log(`${kind} error #${seen[kind]}${where}: ${e?.constructor?.name}: ${e?.message}`);
    }
  };
  cluster.on("error", (e) => note("cluster", "", e));
  cluster.on("node error", (e, key) => note("node", ` ${key}`, e));
  const call = (command, key, i) => {
    switch (command) {
      case "zadd":
        return cluster.zadd(key, i, `m:${i % 97}`);
      case "set":
        return cluster.set(key, String(i));
      case "get":
        return cluster.get(key);
      default:
        return cluster.incr(key);
    }
  };
  return {
    client: "ioredis",
    version,
    counts,
    call,
    // The nodes ioredis knows (its connection pool, which it asks for the topology).
    startupNodesEnd: () => cluster.nodes("all").length,
    close: () => cluster.disconnect(),
  };
}
