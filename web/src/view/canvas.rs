//! Canvases sharp on high-DPI screens: the backing store has `devicePixelRatio` pixels per CSS
//! pixel, the context is scaled by it, and the drawing code keeps working in CSS pixels.

use plotters::coord::Shift;
use plotters::prelude::{DrawingArea, IntoDrawingArea};
use plotters_canvas::CanvasBackend;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

/// Device pixels per CSS pixel, between 1 and 4 (1 when unknown).
pub fn pixel_ratio() -> f64 {
    web_sys::window()
        .map(|w| w.device_pixel_ratio())
        .filter(|r| r.is_finite())
        .map_or(1.0, |r| r.clamp(1.0, 4.0))
}

/// Device pixels for `css` CSS pixels at `ratio` (rounded; canvases are at most 32767 wide).
fn device(css: u32, ratio: f64) -> u32 {
    // In 1..=32767 by the clamp, so the cast is exact.
    (f64::from(css) * ratio).round().clamp(1.0, 32_767.0) as u32
}

/// Sizes `canvas` to `width` × `height` CSS pixels at the screen's pixel ratio and returns a
/// drawing area of `width` × `height` on it. `None` when the canvas has no 2D context.
pub fn area(
    canvas: HtmlCanvasElement,
    width: u32,
    height: u32,
) -> Option<DrawingArea<CanvasBackend, Shift>> {
    let ratio = pixel_ratio();
    // Setting the size clears the canvas and resets its context's transform.
    canvas.set_width(device(width, ratio));
    canvas.set_height(device(height, ratio));
    let context: CanvasRenderingContext2d = canvas.get_context("2d").ok()??.dyn_into().ok()?;
    context.scale(ratio, ratio).ok()?;
    let backend = CanvasBackend::with_canvas_object(canvas)?;
    Some(backend.into_drawing_area().shrink((0, 0), (width, height)))
}
