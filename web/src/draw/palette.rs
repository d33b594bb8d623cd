//! The colours the tracks are drawn with: the marks, the light and dark themes, the nodes'.

use plotters::prelude::*;

/// Colour of the shared cursor line.
pub const CURSOR: RGBColor = RGBColor(214, 40, 40);
/// Colour of a slot range being migrated.
pub const MIGRATING: RGBColor = RGBColor(255, 183, 3);
/// Colour of the selection's shading.
pub const SELECTION: RGBColor = RGBColor(30, 120, 255);
/// Colour of the shading of the finding in focus.
pub const FOCUS: RGBColor = RGBColor(240, 120, 0);
/// The colours the tracks are drawn on and with: light, or dark when the system asks for it
/// (`prefers-color-scheme`), as the page's stylesheet does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Theme {
    /// The background.
    pub background: RGBColor,
    /// Grid lines.
    pub grid: RGBColor,
    /// Text and axes.
    pub ink: RGBColor,
}

impl Theme {
    /// Dark ink on white.
    pub const LIGHT: Theme = Theme {
        background: RGBColor(255, 255, 255),
        grid: RGBColor(226, 230, 236),
        ink: RGBColor(60, 64, 72),
    };
    /// Light ink on near-black (the stylesheet's dark panel colour).
    pub const DARK: Theme = Theme {
        background: RGBColor(28, 31, 36),
        grid: RGBColor(52, 57, 65),
        ink: RGBColor(210, 214, 222),
    };

    /// The theme the browser's colour scheme asks for (light outside a browser).
    pub fn current() -> Theme {
        let dark = web_sys::window()
            .and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
            .is_some_and(|m| m.matches());
        if dark {
            Theme::DARK
        } else {
            Theme::LIGHT
        }
    }
}

const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(23, 190, 207),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
];

/// The colour of node (or series) `i`.
pub fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}
