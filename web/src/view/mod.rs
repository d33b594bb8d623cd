//! The Yew components, one per file.

pub mod app;
pub mod canvas;
pub mod census;
pub mod client_side;
pub mod export;
pub mod findings;
pub mod loader;
pub mod notes;
pub mod preflight;
pub mod selection;
pub mod share;
pub mod slotmap;
pub mod story;
pub mod topology_diff;
pub mod tracks;
pub mod whatif;

/// The local time zone's offset at `ms`, in minutes east of UTC (browser only; 0 natively).
pub fn local_offset(ms: u64) -> i32 {
    #[cfg(target_arch = "wasm32")]
    {
        // Epoch milliseconds are exact in f64.
        let d = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(ms as f64));
        let west = d.get_timezone_offset();
        if west.is_finite() {
            // Minutes, within ±24 h.
            return -(west.clamp(-1440.0, 1440.0) as i32);
        }
        0
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        let _ = ms;
        0
    }
}
