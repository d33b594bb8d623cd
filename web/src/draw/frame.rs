//! What every drawing needs besides its data ([`Frame`]), its errors, and the pixel helpers
//! every track uses.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::palette::Theme;
use crate::scale::TimeScale;
use crate::state::ViewState;

/// What every drawing needs besides its data.
#[derive(Clone, Copy, Debug)]
pub struct Frame<'a> {
    /// The view.
    pub state: &'a ViewState,
    /// Time ↔ pixels.
    pub scale: TimeScale,
    /// Local time zone offset in minutes east of UTC; `None` for UTC.
    pub offset: Option<i32>,
    /// The colours.
    pub theme: Theme,
}

/// A drawing error, as text.
pub type DrawError = String;

/// A plotters error, as a [`DrawError`].
pub(super) fn err<E: std::fmt::Debug>(e: E) -> DrawError {
    format!("{e:?}")
}

/// The width and height of `area` in pixels, as drawing coordinates.
pub(super) fn size<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>) -> (i32, i32) {
    let (w, h) = area.dim_in_pixel();
    let px = |n: u32| i32::try_from(n).unwrap_or(i32::MAX);
    (px(w), px(h))
}

/// Writes `content` with its top left corner at `at`, in the sans-serif font `size` pixels high.
pub(super) fn text<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    content: impl std::borrow::Borrow<str>,
    at: (i32, i32),
    size: f64,
    colour: RGBColor,
) -> Result<(), DrawError> {
    area.draw(&Text::new(
        content,
        at,
        ("sans-serif", size).into_font().color(&colour),
    ))
    .map_err(err)
}
