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
//! - [`load`]: a recording fetched or read, then read by the reader module in its worker, with a
//!   preview; [`reader`]: that module as the viewer calls it; [`worker`]: a module in a worker;
//!   [`module`]: the what-if module, fetched and called in the page.
//! - [`gesture`]: keys, drags and the wheel as reducer actions (plain data, tested natively).
//! - [`view`]: the Yew components; [`js_error`]: JavaScript errors as text; [`hook`]: what the
//!   end-to-end tests read.
//! - [`whatif`]: a client model replayed against the recording, as series over the tracks.

pub mod clock;
pub mod dataset;
pub mod diff;
pub mod draw;
pub mod gesture;
pub mod hook;
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
pub mod worker;

use wasm_bindgen::prelude::*;

pub use hook::{
    publish, record_draw_ms, slotscope_draw_ms, slotscope_first_draw_at, slotscope_state,
};

/// Entry point: exposes `window.slotscope_state` and mounts the app into `#app`.
#[wasm_bindgen(start)]
pub fn start() {
    let Some(window) = web_sys::window() else {
        return;
    };
    hook::expose(
        &window,
        "slotscope_state",
        Closure::<dyn Fn() -> String>::new(slotscope_state),
    );
    hook::expose(
        &window,
        "slotscope_draw_ms",
        Closure::<dyn Fn() -> f64>::new(slotscope_draw_ms),
    );
    hook::expose(
        &window,
        "slotscope_first_draw_at",
        Closure::<dyn Fn() -> f64>::new(slotscope_first_draw_at),
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
