//! What the end-to-end tests read from the page: the view state as JSON and how long the last
//! redraw took, set by the app as it runs and exposed on `window`.

use std::cell::RefCell;

use wasm_bindgen::prelude::*;

use crate::state;

thread_local! {
    static SNAPSHOT: RefCell<String> = RefCell::new(state::ViewState::default().to_json());
    static DRAW_MS: std::cell::Cell<f64> = const { std::cell::Cell::new(0.0) };
    static DRAWS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    static FIRST_DRAW_AT: std::cell::Cell<f64> = const { std::cell::Cell::new(0.0) };
}

/// Records how long the last redraw of every track took (measured by the tracks view), which
/// ended at `at` (the page's `performance.now()`).
pub fn record_draw_ms(ms: f64, at: f64) {
    DRAW_MS.with(|d| d.set(ms));
    DRAWS.with(|d| {
        if d.get() == 0 {
            FIRST_DRAW_AT.with(|f| f.set(at));
        }
        d.set(d.get().wrapping_add(1));
    });
}

/// How many times the tracks were drawn since the page opened.
pub fn draws() -> u32 {
    DRAWS.with(std::cell::Cell::get)
}

/// When the tracks were first drawn (the page's `performance.now()`, 0 before), for the
/// measurement of what the first view costs.
#[wasm_bindgen]
pub fn slotscope_first_draw_at() -> f64 {
    FIRST_DRAW_AT.with(std::cell::Cell::get)
}

/// Milliseconds the last redraw of all tracks took, for performance measurements.
#[wasm_bindgen]
pub fn slotscope_draw_ms() -> f64 {
    DRAW_MS.with(|d| d.get())
}

/// Records the state the test hook returns (called by the app on every change).
pub fn publish(state: &state::ViewState) {
    SNAPSHOT.with(|s| *s.borrow_mut() = state.to_json());
}

/// The view state as JSON, for end-to-end tests:
/// `{"window":[start_ms,end_ms],"cursor":ms,"selection":null|[a,b],"focus":null|"KIND-START-END","notes":[[ms,"text"],…],"hidden":["track:series",…],"panels":[…],"loaded":"name","findings":n,"utc":true,"partial":false}` (`partial`: a preview of a
/// recording still loading).
#[wasm_bindgen]
pub fn slotscope_state() -> String {
    SNAPSHOT.with(|s| s.borrow().clone())
}

/// Sets `window[name]` to `hook` for the end-to-end tests, for the life of the page. Failing to
/// set it only affects tests; the app still runs.
pub(crate) fn expose<T: ?Sized + wasm_bindgen::closure::WasmClosure>(
    window: &web_sys::Window,
    name: &str,
    hook: Closure<T>,
) {
    let _ = js_sys::Reflect::set(window, &JsValue::from_str(name), hook.as_ref());
    hook.forget();
}
