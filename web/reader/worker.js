// The reader module in a worker (scripts/build-web copies this file beside the module's own
// JavaScript, as reader/worker.js): the page sends `{ call, name, args }`, the worker runs the
// module's exported function `name` with `args` and answers `{ call, value }`, or
// `{ call, error }` with what it threw as text. Reading a day-long recording takes seconds of
// work that would otherwise run on the page's own thread.
//
// Typed arrays in an answer (a parcel's values and lengths) are transferred, not copied. The
// module is started once, on the first message; a module that cannot be fetched or started
// answers every call with why.
import init, * as reader from './slotscope_reader.js';

let started = null;

self.onmessage = async (event) => {
    const { call, name, args } = event.data;
    try {
        if (started === null) {
            started = init();
        }
        await started;
        const f = reader[name];
        if (typeof f !== 'function') {
            throw new Error(`the reader module has no \`${name}\` function`);
        }
        const value = f(...args);
        const transfer = Array.isArray(value)
            ? value.filter((v) => ArrayBuffer.isView(v)).map((v) => v.buffer)
            : [];
        self.postMessage({ call, value }, transfer);
    } catch (e) {
        self.postMessage({ call, error: typeof e === 'string' ? e : String((e && e.message) || e) });
    }
};
