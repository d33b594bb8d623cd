//! The entry point of the lazily fetched wasm module (feature `module`): JSON in, JSON out.

use slotscope_core::track::Grid;
use wasm_bindgen::prelude::wasm_bindgen;

use crate::preflight::{preflight as plan, PlanRequest};
use crate::run::{run, Request};

/// The heap grown ahead in doublings, as the reader module's: each small grow of the wasm memory
/// costs the engine a fraction of a millisecond (see [`slotscope_core::heap`]).
#[cfg(target_arch = "wasm32")]
#[global_allocator]
static HEAP: slotscope_core::heap::AheadHeap = slotscope_core::heap::AheadHeap;

/// Replays `request` (a JSON [`Request`]) against the recording in `bytes` on `grid` (a JSON
/// [`Grid`]); returns the JSON [`crate::Prediction`], or throws the reason as a string.
#[wasm_bindgen]
pub fn replay(bytes: &[u8], grid: &str, request: &str) -> Result<String, String> {
    let grid: Grid = serde_json::from_str(grid).map_err(|e| format!("bad grid: {e}"))?;
    let request: Request =
        serde_json::from_str(request).map_err(|e| format!("bad request: {e}"))?;
    let prediction = run(bytes, &grid, &request)?;
    serde_json::to_string(&prediction).map_err(|e| e.to_string())
}

/// Pre-flights `request` (a JSON [`PlanRequest`]) against the recording in `bytes` on `grid` (a
/// JSON [`Grid`], made longer); returns the JSON [`crate::PlanPrediction`], or throws the reason.
#[wasm_bindgen]
pub fn preflight(bytes: &[u8], grid: &str, request: &str) -> Result<String, String> {
    let grid: Grid = serde_json::from_str(grid).map_err(|e| format!("bad grid: {e}"))?;
    let request: PlanRequest =
        serde_json::from_str(request).map_err(|e| format!("bad request: {e}"))?;
    let prediction = plan(bytes, &grid, &request)?;
    serde_json::to_string(&prediction).map_err(|e| e.to_string())
}
