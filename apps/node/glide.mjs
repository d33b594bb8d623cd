// The Valkey GLIDE adapter: `GlideClusterClient` of @valkey/valkey-glide 2.5.2. GLIDE's cluster
// logic (routing, MOVED, topology refreshes, connections) runs in its Rust core (glide-core, in
// the native package @valkey/valkey-glide-linux-x64-gnu); the JavaScript side only sees each
// command's final result. What the library itself exposes is counted from it:
//   - MOVED replies: the OpenTelemetry counter `glide.moved_errors` (glide-core
//     telemetry/src/open_telemetry.rs:34, incremented by the core's reply parser for every MOVED,
//     redis-rs/redis/src/parser.rs:39), exported by `OpenTelemetry.init({metrics: {endpoint:
//     "file://..."}})` to a file of JSON lines, read at the end.
//   - each command's result and its error class (`RequestError`, `TimeoutError`,
//     `ConnectionError`, `ClosingError`, ...; build-ts/Errors.js:20-44).
// What it does not expose (its CLUSTER SLOTS, its refreshes, the connections it opens) is read
// from the servers while it runs (server-counts.mjs). See README.md.

import { createRequire } from "node:module";
import { readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Counts, log, parseAddr } from "./common.mjs";
import { ServerCounts } from "./server-counts.mjs";

const require = createRequire(import.meta.url);
const glide = require("@valkey/valkey-glide");
// The release loaded: the package.json beside the entry point require resolves (the package's
// `exports` does not export `./package.json`).
const VERSION = JSON.parse(
  readFileSync(
    join(dirname(require.resolve("@valkey/valkey-glide")), "..", "package.json"),
    "utf8",
  ),
).version;
const { GlideClusterClient, Logger, OpenTelemetry, RequestError } = glide;

// The OpenTelemetry exporter's flush interval, ms (the counters are cumulative: the last line
// written holds the totals).
const FLUSH_MS = 100;
// GLIDE names its management connections so, whatever the client's name
// (redis-rs/redis/src/cluster_async/connections_logic.rs:373).
const MANAGEMENT_CONN_NAME = "glide_management_connection";
// How the core words a server's error reply.
const SERVER_ERROR = "An error was signalled by the server";

// The last `glide.moved_errors` value of the metrics file (0 when never written).
export function movedFromMetrics(text) {
  let moved = 0;
  for (const line of text.split("\n")) {
    if (!line.includes("glide.moved_errors")) continue;
    try {
      for (const scope of JSON.parse(line).scope_metrics ?? []) {
        for (const m of scope.metrics ?? []) {
          if (m.name === "glide.moved_errors") {
            moved = (m.data_points ?? []).reduce((a, p) => a + Number(p.value ?? 0), 0);
          }
        }
      }
    } catch {
      // A line cut by the exporter: the next one holds the totals.
    }
  }
  return moved;
}

export async function open(s) {
  const counts = new Counts(s.command);
  const metricsFile = join(tmpdir(), `slotscope-glide-${process.pid}-metrics.jsonl`);
  rmSync(metricsFile, { force: true });
  // GLIDE's own log (glide-core's `logger_core`) is off unless GLIDE_LOG names a level; it goes
  // to the file GLIDE_LOG_FILE names, else to the console (stdout: keep it off in the matrix).
  Logger.init(process.env.GLIDE_LOG ?? "off", process.env.GLIDE_LOG_FILE);
  OpenTelemetry.init({ metrics: { endpoint: `file://${metricsFile}` }, flushIntervalMs: FLUSH_MS });

  const startup = parseAddr(s.startup);
  const lib = { ...s.library_options };
  const options = {
    ...lib,
    addresses: [{ host: startup.host, port: startup.port }],
    clientName: s.client_name,
    requestTimeout: Math.round(s.socket_timeout_s * 1000),
    advancedConfiguration: {
      connectionTimeout: Math.round(s.connect_timeout_s * 1000),
      ...(lib.advancedConfiguration ?? {}),
    },
  };
  if (lib.requestTimeout !== undefined) options.requestTimeout = lib.requestTimeout;
  if (lib.clientName !== undefined) options.clientName = lib.clientName;
  if (s.address_remap) {
    // `addressResolver` (BaseClient.d.ts:582): every address of the startup list and of each
    // CLUSTER SLOTS answer becomes this one; a MOVED's address is not translated.
    const to = parseAddr(String(s.address_remap));
    options.addressResolver = () => [to.host, to.port];
  }

  const servers = new ServerCounts(startup, [options.clientName, MANAGEMENT_CONN_NAME]);
  await servers.start();
  const client = await GlideClusterClient.createClient(options);

  // A success and a server's error reply are replies; a timeout, a connection error, a closed
  // client or an error of the client's own (a `RequestError` too, e.g. a connection not found)
  // are not. The core writes a server's error reply as "An error was signalled by the server:
  // ..." (redis-rs `ErrorRepr` display).
  const replied = (p) =>
    p.then(
      (v) => {
        counts.reply(s.command, null, null);
        return v;
      },
      (e) => {
        const reply =
          e instanceof RequestError &&
          e.constructor === RequestError &&
          String(e.message ?? "").startsWith(SERVER_ERROR);
        if (reply) {
          // The last redirect of a command that used its retries comes back as the error
          // ("An error was signalled by the server: - Moved: 6848 127.0.0.1:28910"): a MOVED is
          // already in `glide.moved_errors` (added at the end), an ASK is counted here.
          const msg = String(e.message ?? "");
          if (/- Moved: \d+ /.test(msg)) {
            // Counted with the others.
          } else if (/- Ask: \d+ /.test(msg)) {
            counts.reply(s.command, new Error(`ASK ${msg.split("- Ask: ")[1]}`), null);
          } else {
            counts.reply(s.command, e, null);
          }
        }
        throw e;
      },
    );
  const call = (command, key, i) => {
    switch (command) {
      case "zadd":
        return replied(client.zadd(key, { [`m:${i % 97}`]: i }));
      case "set":
        return replied(client.set(key, String(i)));
      case "get":
        return replied(client.get(key));
      default:
        return replied(client.incr(key));
    }
  };

  let finished = false;
  return {
    client: "glide",
    version: VERSION,
    counts,
    call,
    // Read what GLIDE and the servers counted (before the line is written).
    finish: async () => {
      if (finished) return;
      finished = true;
      const fromServers = await servers.stop();
      counts.cluster_slots_calls = fromServers.cluster_slots_calls;
      counts.initializations = fromServers.query_polls;
      counts.initializations_ok = fromServers.query_polls;
      counts.new_connections = fromServers.new_connections;
      await new Promise((resolve) => setTimeout(resolve, 3 * FLUSH_MS));
      let moved = 0;
      try {
        moved = movedFromMetrics(readFileSync(metricsFile, "utf8"));
      } catch (e) {
        log(`metrics file: ${e?.message}`);
      }
      if (moved > 0) {
        counts.moved[s.command] = moved;
        counts.calls[s.command] = (counts.calls[s.command] ?? 0) + moved;
      }
      log(
        `counted: MOVED ${moved} (glide.moved_errors); from the servers: CLUSTER SLOTS ` +
          `${fromServers.cluster_slots_calls} in ${fromServers.query_polls} polls, ` +
          `${fromServers.new_connections} connections`,
      );
    },
    // GLIDE does not expose the nodes it knows.
    startupNodesEnd: () => null,
    close: () => {
      client.close();
      rmSync(metricsFile, { force: true });
    },
  };
}
