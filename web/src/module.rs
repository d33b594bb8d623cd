//! The viewer's lazily fetched wasm modules run in the page (the what-if replay; the reader runs
//! in a worker, [`crate::worker`]): each fetched and started once, on first use, and its exported
//! functions called by name.

use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};

use crate::js_error;

#[wasm_bindgen(inline_js = r#"
const pending = new Map();
export function fetch_module(path) {
    let p = pending.get(path);
    if (p === undefined) {
        const url = new URL(path, document.baseURI).href;
        p = import(url).then(async (m) => { await m.default(); return m; });
        // A failed fetch is tried again on the next use.
        p.catch(() => { pending.delete(path); });
        pending.set(path, p);
    }
    return p;
}
"#)]
extern "C" {
    fn fetch_module(path: &str) -> js_sys::Promise;
}

/// A started module.
#[derive(Clone, Debug)]
pub struct Module {
    /// Where its JavaScript is, relative to the page (for messages).
    path: &'static str,
    exports: JsValue,
}

impl Module {
    /// Fetches (on first use) and starts the module whose JavaScript is at `path` (relative to
    /// the page): the same one on every later call.
    pub async fn load(path: &'static str) -> Result<Module, String> {
        let exports = wasm_bindgen_futures::JsFuture::from(fetch_module(path))
            .await
            .map_err(|e| format!("cannot load {path}: {}", js_error::text(&e)))?;
        Ok(Module { path, exports })
    }

    /// Calls its exported function `name` with `args`: what it returns, or what it threw as
    /// text.
    pub fn call(&self, name: &str, args: &[JsValue]) -> Result<JsValue, String> {
        let f: js_sys::Function = js_sys::Reflect::get(&self.exports, &name.into())
            .ok()
            .and_then(|f| f.dyn_into().ok())
            .ok_or_else(|| format!("{} has no `{name}` function", self.path))?;
        let args: js_sys::Array = args.iter().collect();
        f.apply(&JsValue::NULL, &args)
            .map_err(|e| js_error::text(&e))
    }
}
