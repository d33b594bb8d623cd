//! # slotscope-web
//!
//! The postmortem viewer: a Yew app compiled to WASM that opens a slotscope recording in the
//! browser and shows the incident on one time axis (topology, traffic, redirections, connection
//! churn, events), with the core's findings and client census beside it. The recording is read
//! and analysed by the reader module (`slotscope-reader`) and replayed by the what-if module
//! (`slotscope-whatif`), both fetched when first needed; there is no server logic.
//!
//! - [`state`]: the view state and its reducer (plain data, tested natively).
//! - [`scale`]: the one time ↔ pixel mapping; [`clock`]: times as text.
//! - [`dataset`]: a loaded recording: its tracks and its analysis.
//! - [`draw`]: the tracks drawn with plotters (canvas in the browser, SVG in tests).
//! - [`readout`]: hover values; [`diff`]: the topology diff.
//! - [`load`]: a recording fetched or read, then read by the reader module in time slices with a
//!   preview; [`module`]: the lazily fetched modules.
//! - [`gesture`]: keys, drags and the wheel as reducer actions (plain data, tested natively).
//! - [`view`]: the Yew components; [`js_error`]: JavaScript errors as text.
//! - [`whatif`]: a client model replayed against the recording, as series over the tracks.

pub mod clock;
pub mod dataset;
pub mod diff;
pub mod draw;
pub mod gesture;
pub mod js_error;
pub mod load;
pub mod module;
pub mod reader;
pub mod readout;
pub mod report;
pub mod scale;
pub mod state;
pub mod view;
pub mod whatif;

use std::cell::RefCell;

use wasm_bindgen::prelude::*;

thread_local! {
    static SNAPSHOT: RefCell<String> = RefCell::new(state::ViewState::default().to_json());
    static DRAW_MS: std::cell::Cell<f64> = const { std::cell::Cell::new(0.0) };
}

/// Records how long the last redraw of every track took (measured by the tracks view).
pub fn record_draw_ms(ms: f64) {
    DRAW_MS.with(|d| d.set(ms));
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

/// Entry point: exposes `window.slotscope_state` and mounts the app into `#app`.
#[wasm_bindgen(start)]
pub fn start() {
    let Some(window) = web_sys::window() else {
        return;
    };
    expose(
        &window,
        "slotscope_state",
        Closure::<dyn Fn() -> String>::new(slotscope_state),
    );
    expose(
        &window,
        "slotscope_draw_ms",
        Closure::<dyn Fn() -> f64>::new(slotscope_draw_ms),
    );
    let root = window.document().and_then(|d| d.get_element_by_id("app"));
    match root {
        Some(root) => {
            yew::Renderer::<view::app::App>::with_root(root).render();
        }
        None => {
            yew::Renderer::<view::app::App>::new().render();
        }
    }
}

/// Sets `window[name]` to `hook` for the end-to-end tests, for the life of the page. Failing to
/// set it only affects tests; the app still runs.
fn expose<T: ?Sized + wasm_bindgen::closure::WasmClosure>(
    window: &web_sys::Window,
    name: &str,
    hook: Closure<T>,
) {
    let _ = js_sys::Reflect::set(window, &JsValue::from_str(name), hook.as_ref());
    hook.forget();
}
