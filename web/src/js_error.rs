//! JavaScript errors as text: what a rejected promise or a thrown value says, for the status line
//! and the what-if panel.

use wasm_bindgen::{JsCast, JsValue};

/// A JavaScript error or rejection as text: the string itself, an `Error`'s message, or else its
/// debug form.
pub fn text(e: &JsValue) -> String {
    e.as_string()
        .or_else(|| {
            e.dyn_ref::<js_sys::Error>()
                .map(|e| String::from(e.message()))
        })
        .unwrap_or_else(|| format!("{e:?}"))
}
