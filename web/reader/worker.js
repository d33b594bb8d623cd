// The reader module in a worker (scripts/build-web copies this file beside the module's own
// JavaScript, as reader/worker.js): the page sends `{ call, name, args }`, the worker runs the
// module's exported function `name` with `args` and answers `{ call, value }`, or
// `{ call, error }` with what it threw as text. Reading a day-long recording takes seconds of
// work that would otherwise run on the page's own thread.
//
// A big zstd recording is decoded beside the reading: `open` then starts a second instance of
// this script (`worker.js?decoder`, the same module) that decodes the bytes into chunks of whole
// lines (the module's `decode_open`, `decode_next`) and posts them here, at most CHUNKS_AHEAD
// decoded and not yet read; they are fed to the read (`open_fed`, `feed`), and a `read` that has
// read all it was fed (STARVED) waits here for the next chunk before it answers. The page sees
// the same calls and answers either way.
//
// Typed arrays in an answer (a parcel's values and lengths) are transferred, not copied. The
// module is started once, on the first message; a module that cannot be fetched or started
// answers every call with why.
import init, * as reader from './slotscope_reader.js';

// The first bytes of a zstd frame.
const ZSTD_MAGIC = [0x28, 0xb5, 0x2f, 0xfd];
// What the module's `read` returns when it has read every chunk fed (lib.rs `STARVED`).
const STARVED = -2;
// Compressed recordings from this size on are decoded beside the reading; below, starting the
// second worker would cost more than it saves. (The viewer's tests lower it, setting
// `self.SLOTSCOPE_FED_FROM` before this script runs.)
const FED_FROM = self.SLOTSCOPE_FED_FROM ?? 1 << 20;
// Decoded text per chunk, and how many chunks may be decoded ahead of the reading.
const CHUNK_BYTES = 1 << 20;
const CHUNKS_AHEAD = 8;
// A chunk is cut after its last line, so it runs past CHUNK_BYTES by up to one read of the
// decoder (256 KiB) and a line; the buffers are made with this much room beyond.
const SLACK_BYTES = 1 << 19;

let started = null;
const start = () => {
    if (started === null) {
        started = init();
    }
    return started;
};
const text = (e) => (typeof e === 'string' ? e : String((e && e.message) || e));

if (new URL(self.location.href).searchParams.has('decoder')) {
    // The decoder: `{ bytes, more }` starts decoding `bytes` (ending any decoding before) and
    // `{ more, spare }` asks for `more` chunks, handing back the buffers of chunks read; each
    // chunk is posted as `{ text, length, end, message, consumed }` (decode_next's parts), its
    // buffer transferred, or `{ error }`.
    let id = null;
    let wanted = 0;
    const spares = [];
    self.onmessage = async (event) => {
        const { bytes, more, spare } = event.data;
        try {
            await start();
            if (bytes !== undefined) {
                id = reader.decode_open(bytes);
                wanted = 0;
            }
            if (spare !== undefined) {
                spares.push(...spare.map((b) => new Uint8Array(b)));
            }
            wanted += more || 0;
            while (wanted > 0 && id !== null) {
                const into = spares.pop() || new Uint8Array(CHUNK_BYTES + SLACK_BYTES);
                const [chunk, length, end, message, consumed] = reader.decode_next(id, CHUNK_BYTES, into);
                wanted -= 1;
                if (chunk !== into) {
                    spares.push(into);
                }
                if (end !== 0) {
                    id = null;
                }
                self.postMessage({ text: chunk.buffer, length, end, message, consumed }, [chunk.buffer]);
            }
        } catch (e) {
            id = null;
            self.postMessage({ error: text(e) });
        }
    };
} else {
    // The read fed by a decoder, while it is the newest read.
    let pipe = null;

    const wake = (p) => {
        if (p.wake !== null) {
            const w = p.wake;
            p.wake = null;
            w();
        }
    };

    // Asks the decoder for as many chunks as keep CHUNKS_AHEAD decoded and not yet read.
    const topUp = (p) => {
        if (p.decoder === null || pipe !== p) {
            return;
        }
        const want = CHUNKS_AHEAD - reader.queued(p.id) - p.ahead;
        if (want > 0) {
            p.ahead += want;
            const spare = p.spare;
            p.spare = [];
            p.decoder.postMessage({ more: want, spare }, spare);
        }
    };

    const stop = (p) => {
        if (p.decoder !== null) {
            p.decoder.terminate();
            p.decoder = null;
        }
    };

    // Opens a read of the zstd recording `bytes` decoded by a second worker: the read's id. A
    // decoder that cannot be started, or fails before its first chunk, leaves the read to this
    // worker alone (the module's `open`), as for a small recording.
    const openFed = (bytes) => new Promise((resolve, reject) => {
        const total = bytes.length;
        let decoder;
        try {
            decoder = new Worker(new URL('./worker.js?decoder', import.meta.url), { type: 'module' });
        } catch {
            resolve(reader.open(bytes));
            return;
        }
        // `spare`: the buffers of the chunks fed, to hand back to the decoder; `held`: the
        // bytes until the first chunk came.
        const p = { id: null, decoder, ahead: CHUNKS_AHEAD, wake: null, error: null, spare: [] };
        let held = bytes;
        // `why` the read cannot go on; before the first chunk, a decoder's failure falls back.
        const fail = (why, decoding) => {
            stop(p);
            if (p.id === null && decoding && held !== null) {
                try {
                    resolve(reader.open(held));
                } catch (e) {
                    reject(text(e));
                }
            } else if (p.id === null) {
                reject(why);
            } else {
                p.error = why;
                wake(p);
            }
        };
        decoder.onmessage = (e) => {
            const d = e.data;
            p.ahead -= 1;
            if ('error' in d) {
                fail(`decoding the recording failed: ${d.error}`, true);
                return;
            }
            if (d.end !== 0) {
                stop(p);
            }
            try {
                const chunk = new Uint8Array(d.text, 0, d.length);
                if (p.id === null) {
                    held = null;
                    p.id = reader.open_fed(total, chunk, d.end, d.message, d.consumed);
                    pipe = p;
                    resolve(p.id);
                } else if (pipe === p) {
                    reader.feed(p.id, chunk, d.end, d.message, d.consumed);
                } else {
                    stop(p);
                    return;
                }
                p.spare.push(d.text);
                topUp(p);
            } catch (err) {
                fail(text(err), false);
            }
            wake(p);
        };
        decoder.onerror = (e) => {
            e.preventDefault();
            fail(`the decoding worker failed: ${e.message || 'its script could not be loaded'}`, true);
        };
        // Copied, not transferred: kept here should the decoder fail before its first chunk.
        decoder.postMessage({ bytes, more: CHUNKS_AHEAD });
    });

    // `read` of the fed read `p`: waits for chunks while it has read all it was fed.
    const readFed = async (p, args) => {
        for (;;) {
            if (p.error !== null) {
                throw p.error;
            }
            const v = reader.read(...args);
            topUp(p);
            if (v !== STARVED) {
                return v;
            }
            await new Promise((resolve) => {
                p.wake = resolve;
            });
        }
    };

    const fedWorth = (bytes) => bytes instanceof Uint8Array && bytes.length >= FED_FROM
        && ZSTD_MAGIC.every((b, i) => bytes[i] === b) && typeof Worker === 'function';

    self.onmessage = async (event) => {
        const { call, name, args } = event.data;
        try {
            await start();
            let value;
            if (name === 'open' || name === 'open_fed') {
                // A newer read: the one fed before it is given up.
                if (pipe !== null) {
                    stop(pipe);
                    pipe.error = 'the read was superseded';
                    wake(pipe);
                    pipe = null;
                }
            }
            if (name === 'open' && fedWorth(args[0])) {
                value = await openFed(args[0]);
            } else if (name === 'read' && pipe !== null && args[0] === pipe.id) {
                value = await readFed(pipe, args);
            } else {
                const f = reader[name];
                if (typeof f !== 'function') {
                    throw new Error(`the reader module has no \`${name}\` function`);
                }
                value = f(...args);
            }
            const transfer = Array.isArray(value)
                ? value.filter((v) => ArrayBuffer.isView(v)).map((v) => v.buffer)
                : [];
            self.postMessage({ call, value }, transfer);
        } catch (e) {
            self.postMessage({ call, error: text(e) });
        }
    };
}
