// What the servers count of one client, read over plain RESP connections of the application's
// own (node:net, no library): for a library that does not expose its topology queries and its
// connections (Valkey GLIDE, whose cluster logic runs in its Rust core), the application reads
// them from every node of the cluster while it runs.
//
// Every POLL_MS each node the startup node's CLUSTER NODES names (asked again at each poll, so a
// node that joins is polled from then on) is asked `INFO commandstats` (its
// `cmdstat_cluster|slots` calls) and `CLIENT LIST` (the ids of the connections named by one of
// `names`). Counted:
//   - `cluster_slots_calls`: the rise of each node's `cmdstat_cluster|slots` calls since the
//     first poll, summed (a node whose count fell was restarted: its new count is added whole);
//     the calls made between a node's last poll and its death are missed, and so are other
//     clients' CLUSTER SLOTS (the matrix's recorder sends CLUSTER SHARDS).
//   - `query_polls`: the polls in which that count rose (a lower bound of the client's topology
//     queries, each of which may send several CLUSTER SLOTS at once).
//   - `new_connections`: the distinct (node, id) pairs seen with one of `names`, less those of
//     the first poll's that were already open before the client started (none: the first poll
//     runs before the client is created); a connection that opens and closes between two polls
//     is missed.
// A node that does not answer within REQUEST_MS is skipped for that poll.

import net from "node:net";

const POLL_MS = 200;
const REQUEST_MS = 300;

// One RESP request on a fresh or kept socket: resolves the reply's bulk string / simple string /
// array of them, rejects on error or after REQUEST_MS.
class Conn {
  constructor(host, port) {
    this.host = host;
    this.port = port;
    this.sock = null;
    this.buf = Buffer.alloc(0);
    this.waiter = null;
  }

  open() {
    return new Promise((resolve, reject) => {
      const s = net.createConnection({ host: this.host, port: this.port });
      s.setNoDelay(true);
      const fail = (e) => {
        s.destroy();
        reject(e);
      };
      s.once("error", fail);
      s.once("connect", () => {
        s.off("error", fail);
        s.on("error", () => this.drop());
        s.on("close", () => this.drop());
        s.on("data", (d) => this.data(d));
        this.sock = s;
        resolve();
      });
    });
  }

  drop() {
    if (this.sock) this.sock.destroy();
    this.sock = null;
    this.buf = Buffer.alloc(0);
    const w = this.waiter;
    this.waiter = null;
    if (w) w.reject(new Error("connection closed"));
  }

  data(d) {
    this.buf = Buffer.concat([this.buf, d]);
    if (!this.waiter) return;
    const r = parse(this.buf, 0);
    if (r === null) return;
    this.buf = this.buf.subarray(r.end);
    const w = this.waiter;
    this.waiter = null;
    if (r.value instanceof Error) w.reject(r.value);
    else w.resolve(r.value);
  }

  async request(args) {
    let timer;
    const limit = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error("timeout")), REQUEST_MS);
    });
    try {
      return await Promise.race([this.send(args), limit]);
    } catch (e) {
      this.drop();
      throw e;
    } finally {
      clearTimeout(timer);
    }
  }

  async send(args) {
    if (!this.sock) await this.open();
    const parts = [`*${args.length}\r\n`];
    for (const a of args) parts.push(`$${Buffer.byteLength(a)}\r\n${a}\r\n`);
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
      this.sock.write(parts.join(""));
    });
  }
}

// Parses one RESP2 value at `at`: {value, end}, or null when incomplete.
function parse(buf, at) {
  const eol = buf.indexOf("\r\n", at);
  if (eol < 0) return null;
  const head = buf.toString("utf8", at + 1, eol);
  switch (String.fromCharCode(buf[at])) {
    case "+":
      return { value: head, end: eol + 2 };
    case "-":
      return { value: new Error(head), end: eol + 2 };
    case ":":
      return { value: Number(head), end: eol + 2 };
    case "$": {
      const n = Number(head);
      if (n < 0) return { value: null, end: eol + 2 };
      if (buf.length < eol + 2 + n + 2) return null;
      return { value: buf.toString("utf8", eol + 2, eol + 2 + n), end: eol + 2 + n + 2 };
    }
    case "*": {
      const n = Number(head);
      const out = [];
      let end = eol + 2;
      for (let i = 0; i < n; i++) {
        const r = parse(buf, end);
        if (r === null) return null;
        out.push(r.value);
        end = r.end;
      }
      return { value: out, end };
    }
    default:
      return { value: new Error(`unexpected RESP type ${buf[at]}`), end: buf.length };
  }
}

// `cmdstat_cluster|slots:calls=N,...` of an INFO commandstats text (0 when absent).
export function clusterSlotsCalls(info) {
  const m = /^cmdstat_cluster\|slots:calls=(\d+)/m.exec(info);
  return m ? Number(m[1]) : 0;
}

// The ids of the CLIENT LIST lines whose name is one of `names`.
export function idsNamed(list, names) {
  const out = [];
  for (const line of list.split("\n")) {
    const f = Object.fromEntries(
      line
        .trim()
        .split(" ")
        .map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]),
    );
    if (f.id !== undefined && names.includes(f.name)) out.push(f.id);
  }
  return out;
}

// The addresses CLUSTER NODES names (`host:port` before `@`), the failed ones included.
export function nodeAddresses(nodes) {
  const out = [];
  for (const line of nodes.split("\n")) {
    const addr = line.split(" ")[1];
    if (!addr) continue;
    const hp = addr.split("@")[0].split(",")[0];
    if (hp && !hp.startsWith(":")) out.push(hp);
  }
  return out;
}

// Polls the cluster from `startup` ({host, port}) for the connections named `names`.
export class ServerCounts {
  constructor(startup, names) {
    this.startup = `${startup.host}:${startup.port}`;
    this.names = names;
    this.conns = new Map(); // addr -> Conn
    this.nodes = new Set([this.startup]);
    this.slots = new Map(); // addr -> {base, last, total}
    this.seen = new Set(); // `${addr}/${id}`
    this.cluster_slots_calls = 0;
    this.query_polls = 0;
    this.timer = null;
    this.running = null;
    this.stopped = false;
  }

  conn(addr) {
    let c = this.conns.get(addr);
    if (!c) {
      const i = addr.lastIndexOf(":");
      c = new Conn(addr.slice(0, i), Number(addr.slice(i + 1)));
      this.conns.set(addr, c);
    }
    return c;
  }

  async pollNode(addr) {
    const c = this.conn(addr);
    let rose = 0;
    try {
      const calls = clusterSlotsCalls(await c.request(["INFO", "commandstats"]));
      const s = this.slots.get(addr);
      if (!s) {
        this.slots.set(addr, { last: calls, counted: 0 });
      } else {
        // A count that fell: the node restarted, its new count is all new.
        const d = calls >= s.last ? calls - s.last : calls;
        s.last = calls;
        s.counted += d;
        rose = d;
      }
      for (const id of idsNamed(await c.request(["CLIENT", "LIST"]), this.names)) {
        this.seen.add(`${addr}/${id}`);
      }
    } catch {
      // Not answering now: skipped.
    }
    return rose;
  }

  async poll() {
    for (const addr of this.nodes) {
      try {
        const text = await this.conn(addr).request(["CLUSTER", "NODES"]);
        for (const a of nodeAddresses(text)) this.nodes.add(a);
        break;
      } catch {
        // Ask the next one.
      }
    }
    const rises = await Promise.all([...this.nodes].map((a) => this.pollNode(a)));
    const rose = rises.reduce((a, b) => a + b, 0);
    this.cluster_slots_calls += rose;
    if (rose > 0) this.query_polls += 1;
  }

  // The first poll (before the client is created), then one every POLL_MS.
  async start() {
    await this.poll();
    const loop = async () => {
      if (this.stopped) return;
      this.running = this.poll();
      await this.running;
      if (!this.stopped) this.timer = setTimeout(loop, POLL_MS);
    };
    this.timer = setTimeout(loop, POLL_MS);
  }

  // A last poll, then the counts.
  async stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = null;
    await this.running;
    await this.poll();
    for (const c of this.conns.values()) c.drop();
    return {
      cluster_slots_calls: this.cluster_slots_calls,
      query_polls: this.query_polls,
      new_connections: this.seen.size,
    };
  }
}
