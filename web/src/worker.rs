//! A wasm module run in a Web Worker (the reader: `reader/worker.js`), its exported functions
//! called by name and answered asynchronously, so its work never holds up the page.
//!
//! One worker per script, started on first use and kept for the page's life. A call posts
//! `{ call, name, args }` and resolves with the worker's `{ call, value }` or rejects with its
//! `{ call, error }`; a worker that fails (its script or module cannot be fetched, or it dies)
//! rejects every call waiting and every call after, with why.

use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};

use crate::js_error;

#[wasm_bindgen(inline_js = r#"
const workers = new Map();
export function start_worker(path) {
    let w = workers.get(path);
    if (w !== undefined) {
        return w;
    }
    const waiting = new Map();
    let next = 0;
    let failed = null;
    const fail = (why) => {
        failed = why;
        for (const p of waiting.values()) {
            p.reject(why);
        }
        waiting.clear();
    };
    let worker = null;
    try {
        worker = new Worker(new URL(path, document.baseURI).href, { type: 'module' });
        worker.onmessage = (e) => {
            const p = waiting.get(e.data.call);
            if (p === undefined) {
                return;
            }
            waiting.delete(e.data.call);
            if ('error' in e.data) {
                p.reject(e.data.error);
            } else {
                p.resolve(e.data.value);
            }
        };
        worker.onerror = (e) => {
            e.preventDefault();
            fail(`the worker ${path} failed: ${e.message || 'its script could not be loaded'}`);
        };
    } catch (e) {
        failed = `cannot start the worker ${path}: ${e.message || e}`;
    }
    w = {
        call(name, args, transfer) {
            if (failed !== null) {
                return Promise.reject(failed);
            }
            return new Promise((resolve, reject) => {
                const call = next++;
                waiting.set(call, { resolve, reject });
                worker.postMessage({ call, name, args }, transfer);
            });
        },
    };
    workers.set(path, w);
    return w;
}
"#)]
extern "C" {
    fn start_worker(path: &str) -> JsValue;
}

/// A module running in a worker.
#[derive(Clone, Debug)]
pub struct Worker {
    /// Where the worker's script is, relative to the page (for messages).
    path: &'static str,
    handle: JsValue,
}

impl Worker {
    /// The worker whose script is at `path` (relative to the page): started on the first call,
    /// the same one after.
    pub fn start(path: &'static str) -> Worker {
        Worker {
            path,
            handle: start_worker(path),
        }
    }

    /// Calls the module's exported function `name` with `args`, the buffers in `transfer` handed
    /// over rather than copied: what it returns, or what it threw (or why the worker failed) as
    /// text.
    pub async fn call(
        &self,
        name: &str,
        args: &[JsValue],
        transfer: &[JsValue],
    ) -> Result<JsValue, String> {
        let call: js_sys::Function = js_sys::Reflect::get(&self.handle, &"call".into())
            .ok()
            .and_then(|f| f.dyn_into().ok())
            .ok_or_else(|| format!("the worker {} did not start", self.path))?;
        let args: js_sys::Array = args.iter().collect();
        let transfer: js_sys::Array = transfer.iter().collect();
        let promise: js_sys::Promise = call
            .call3(&self.handle, &name.into(), &args, &transfer)
            .map_err(|e| js_error::text(&e))?
            .dyn_into()
            .map_err(|_| format!("the worker {} returned no promise", self.path))?;
        wasm_bindgen_futures::JsFuture::from(promise)
            .await
            .map_err(|e| js_error::text(&e))
    }
}
