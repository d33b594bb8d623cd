// The reader module in a worker (scripts/build-web copies this file beside the module's own
// JavaScript, as reader/worker.js): the page sends `{ call, name, args }`, the worker runs the
// module's exported function `name` with `args` and answers `{ call, value }`, or
// `{ call, error }` with what it threw as text. Reading a day-long recording takes seconds of
// work that would otherwise run on the page's own thread.
//
// Typed arrays in an answer (a parcel's values and lengths) are transferred, not copied. The
// module is started once, on the first message; a module that cannot be fetched or started
// answers every call with why. Two calls are the worker's own: `stream` fetches a recording and
// reads it as it arrives, and `read` of such a read pushes it the stream's chunks as it needs them.
import init, * as reader from './slotscope_reader.js';

let started = null;

// What the module's `read` returns when a recording read as it arrives needs more bytes.
const MORE = -2;

// The streams of the reads whose recording arrives as it is fetched, by read id.
const streams = new Map();

// `stream(url, lines)`: fetches the recording at `url` asking for its JSON Lines (a server that
// can sends a `.zst` file for the browser to decode, off this thread) and starts a read of it as
// it arrives (`lines`: how many its overview counted). The read's id.
async function stream(url, lines) {
    const response = await fetch(url, { headers: { Accept: 'application/x-ndjson' } });
    if (!response.ok) {
        throw new Error(`HTTP ${response.status} ${response.statusText}`);
    }
    const id = reader.open_stream(lines);
    // A newer read supersedes the others.
    for (const [old, body] of streams) {
        body.cancel().catch(() => {});
        streams.delete(old);
    }
    streams.set(id, response.body.getReader());
    return id;
}

// `read(id, max)` of a read whose recording arrives as it is fetched: pushes the next chunks
// until a step has whole lines to read (or the stream ends); of any other, the module's own.
async function read(id, max) {
    const body = streams.get(id);
    for (;;) {
        const share = reader.read(id, max);
        if (share !== MORE || body === undefined) {
            return share;
        }
        const { done, value } = await body.read();
        if (done) {
            streams.delete(id);
            reader.end(id);
        } else {
            reader.push(id, value);
        }
    }
}

const own = { stream, read };

self.onmessage = async (event) => {
    const { call, name, args } = event.data;
    try {
        if (started === null) {
            started = init();
        }
        await started;
        const f = own[name] || reader[name];
        if (typeof f !== 'function') {
            throw new Error(`the reader module has no \`${name}\` function`);
        }
        const value = await f(...args);
        const transfer = Array.isArray(value)
            ? value.filter((v) => ArrayBuffer.isView(v)).map((v) => v.buffer)
            : [];
        self.postMessage({ call, value }, transfer);
    } catch (e) {
        self.postMessage({ call, error: typeof e === 'string' ? e : String((e && e.message) || e) });
    }
};
