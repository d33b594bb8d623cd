//! Drawing the tracks with plotters on any backend: a canvas in the browser, SVG in native tests.
//!
//! Every track draws in pixel coordinates through the one [`TimeScale`](crate::scale::TimeScale); series are down-sampled
//! to one min/max pair per pixel column, so a day at one-second resolution draws as fast as a
//! minute.

pub mod column;
pub mod events;
pub mod frame;
pub mod overlay;
pub mod palette;
pub mod plot;
pub mod series;
pub mod slotmap;
pub mod topology;
pub mod track_kind;

pub use column::{columns, Column};
pub use frame::{DrawError, Frame};
pub use palette::{color, Theme, CURSOR, FOCUS, MIGRATING, SELECTION};
pub use track_kind::TrackKind;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::dataset::Dataset;
#[cfg(test)]
use crate::scale::TimeScale;
#[cfg(test)]
use crate::state::ViewState;
use frame::{err, size};
use slotscope_core::track::Grid;

/// Draws track `kind` of `data` onto `area`: background, grid, the data, selection and cursor,
/// with the what-if predictions in `predicted` (none, A, or A and B) drawn over the observed data
/// (see [`overlay`]).
pub fn track<DB: DrawingBackend>(
    kind: TrackKind,
    area: &DrawingArea<DB, Shift>,
    frame: &Frame<'_>,
    data: &Dataset,
    predicted: &[&crate::whatif::Overlay],
) -> Result<(), DrawError> {
    area.fill(&frame.theme.background).map_err(err)?;
    let (_, h) = size(area);
    for (_, x) in frame.scale.ticks(110.0) {
        let x = x.round() as i32;
        area.draw(&PathElement::new(vec![(x, 0), (x, h)], frame.theme.grid))
            .map_err(err)?;
    }
    match kind {
        TrackKind::Topology => topology::draw(area, frame, &data.tracks)?,
        TrackKind::Events => {
            events::draw(area, frame, &data.tracks)?;
            for (slot, p) in predicted.iter().enumerate() {
                overlay::wedged(area, frame, p, slot, predicted.len())?;
            }
        }
        _ => {
            let grid = &data.tracks.grid;
            let peak = predicted
                .iter()
                .map(|p| overlay::peak(kind, p, grid_of(p, grid), frame))
                .fold(0.0f32, f32::max);
            // A long window is drawn from a reduced level: as many points as pixels, not buckets.
            let tracks = data
                .pyramid
                .for_pixel(&data.tracks, frame.scale.ms_per_px());
            let top = series::draw(kind, area, frame, tracks, peak)?;
            for (slot, p) in predicted.iter().enumerate() {
                overlay::draw(
                    kind,
                    area,
                    frame,
                    grid_of(p, grid),
                    p,
                    top,
                    slot,
                    predicted.len(),
                )?;
            }
        }
    }
    focus(area, frame)?;
    selection(area, frame)?;
    cursor(area, frame)?;
    Ok(())
}

/// The grid `p`'s series are on: its own (a pre-flight's, past the recording's end), else the
/// recording's `grid`.
fn grid_of<'a>(p: &'a crate::whatif::Overlay, grid: &'a Grid) -> &'a Grid {
    p.grid.as_ref().unwrap_or(grid)
}

/// Shades the interval of the finding in focus, its edges drawn.
fn focus<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    frame: &Frame<'_>,
) -> Result<(), DrawError> {
    let Some(f) = &frame.state.focus else {
        return Ok(());
    };
    let (a, b) = f.span;
    let (start, end) = frame.scale.window();
    if b < start || a > end {
        return Ok(());
    }
    let (_, h) = size(area);
    let (xa, xb) = (frame.scale.px(a), frame.scale.px(b));
    area.draw(&Rectangle::new(
        [(xa, 0), (xb.max(xa + 1), h)],
        FOCUS.mix(0.12).filled(),
    ))
    .map_err(err)?;
    for x in [xa, xb] {
        area.draw(&PathElement::new(vec![(x, 0), (x, h)], FOCUS.mix(0.7)))
            .map_err(err)?;
    }
    Ok(())
}

fn selection<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    frame: &Frame<'_>,
) -> Result<(), DrawError> {
    let Some((a, b)) = frame.state.selection else {
        return Ok(());
    };
    let (_, h) = size(area);
    let (xa, xb) = (frame.scale.px(a), frame.scale.px(b));
    area.draw(&Rectangle::new(
        [(xa, 0), (xb.max(xa + 1), h)],
        SELECTION.mix(0.15).filled(),
    ))
    .map_err(err)?;
    Ok(())
}

/// Draws the shared cursor line, if the cursor is in the window.
pub fn cursor<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    frame: &Frame<'_>,
) -> Result<(), DrawError> {
    let Some(c) = frame.state.cursor else {
        return Ok(());
    };
    let (start, end) = frame.scale.window();
    if c < start || c > end {
        return Ok(());
    }
    let (_, h) = size(area);
    let x = frame.scale.px(c);
    area.draw(&PathElement::new(
        vec![(x, 0), (x, h)],
        CURSOR.stroke_width(1),
    ))
    .map_err(err)?;
    Ok(())
}

/// Renders a track to SVG text (native tests).
#[cfg(test)]
pub(crate) fn svg(kind: TrackKind, state: &ViewState, data: &Dataset, width: u32) -> String {
    svg_with(kind, state, data, &[], width)
}

/// Renders a track to SVG text with a what-if prediction over it (native tests).
#[cfg(test)]
pub(crate) fn svg_with(
    kind: TrackKind,
    state: &ViewState,
    data: &Dataset,
    predicted: &[&crate::whatif::Overlay],
    width: u32,
) -> String {
    let mut out = String::new();
    {
        let backend = SVGBackend::with_string(&mut out, (width, kind.height()));
        let area = backend.into_drawing_area();
        let frame = Frame {
            state,
            scale: TimeScale::new(state.window, width),
            offset: None,
            theme: Theme::LIGHT,
        };
        track(kind, &area, &frame, data, predicted).unwrap();
        area.present().unwrap();
    }
    out
}

#[cfg(test)]
mod tests {
    use slotscope_core::track::{Grid, Series};
    use slotscope_core::Timestamp;

    use super::*;
    use crate::dataset::fixture;
    use crate::state::Action;

    #[test]
    fn columns_keep_the_min_and_max_of_each_pixel() {
        let grid = Grid {
            start: Timestamp(0),
            bucket_ms: 1000,
            buckets: 8,
        };
        let s = Series {
            label: "x".into(),
            values: vec![1.0, 5.0, f32::NAN, f32::NAN, 2.0, 3.0, 9.0, 0.0],
        };
        // Two buckets per pixel.
        let scale = TimeScale::new((0, 8000), 4);
        assert_eq!(
            columns(&s, &grid, &scale),
            vec![Some((1.0, 5.0)), None, Some((2.0, 3.0)), Some((0.0, 9.0))]
        );
    }

    #[test]
    fn a_day_drawn_from_the_pyramid_keeps_every_pixels_extremes() {
        // A day at one second, drawn 1,200 pixels wide: from a reduced level, each pixel's
        // extremes are those of its own seconds or of their neighbours within half a pixel.
        let n = 86_400;
        let mut x: u32 = 12_345;
        let values: Vec<f32> = (0..n)
            .map(|_| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                f32::from(u16::try_from(x >> 20).unwrap())
            })
            .collect();
        let s = Series {
            label: "x".into(),
            values,
        };
        let mut tracks = fixture("incident2-valkey").tracks;
        tracks.grid = Grid {
            start: Timestamp(0),
            bucket_ms: 1000,
            buckets: n,
        };
        tracks.node_rate = vec![s.clone()];
        let pyramid = crate::dataset::Pyramid::of(&tracks);
        let scale = TimeScale::new((0, 86_400_000), 1_200);
        let level = pyramid.for_pixel(&tracks, scale.ms_per_px());
        // At most a sixth of the buckets (runs of at most half a pixel: 14,400 here).
        assert!(level.grid.buckets <= n / 6, "{}", level.grid.buckets);
        let full = columns(&s, &tracks.grid, &scale);
        let reduced = columns(&level.node_rate[0], &level.grid, &scale);
        assert_eq!(full.len(), reduced.len());
        let half_px = 36; // seconds
        for (col, (f, r)) in full.iter().zip(&reduced).enumerate() {
            let (lo, hi) = r.unwrap();
            assert!(f.is_some());
            let a = (col * 72).saturating_sub(half_px);
            let b = ((col + 1) * 72 + half_px).min(n);
            let near = &s.values[a..b];
            let (nlo, nhi) = near
                .iter()
                .fold((f32::MAX, f32::MIN), |(l, h), &v| (l.min(v), h.max(v)));
            assert!(
                lo >= nlo && hi <= nhi,
                "col {col}: {lo}..{hi} outside {nlo}..{nhi}"
            );
        }
        let peak = |c: &[Column]| c.iter().flatten().map(|&(_, h)| h).fold(0.0, f32::max);
        assert_eq!(peak(&full), peak(&reduced), "the day's peak is drawn");
        // A window of ten minutes is drawn from the recording itself.
        let zoomed = TimeScale::new((0, 600_000), 1_200);
        assert!(std::ptr::eq(
            pyramid.for_pixel(&tracks, zoomed.ms_per_px()),
            &tracks
        ));
    }

    #[test]
    fn a_day_at_one_second_down_samples_to_the_width() {
        let grid = Grid {
            start: Timestamp(0),
            bucket_ms: 1000,
            buckets: 86_400,
        };
        let s = Series {
            label: "x".into(),
            values: (0..86_400u32)
                .map(|i| f32::from(u16::try_from(i % 72).unwrap()))
                .collect(),
        };
        let scale = TimeScale::new((0, 86_400_000), 1200);
        let c = columns(&s, &grid, &scale);
        assert_eq!(c.len(), 1200);
        assert!(c.iter().all(|c| *c == Some((0.0, 71.0))), "{:?}", &c[..3]);
    }

    #[test]
    fn the_cursor_line_is_drawn_at_its_x_on_every_track() {
        let data = fixture("incident2-valkey");
        let (a, b) = data.span();
        let state = ViewState::default()
            .reduce(Action::loaded("i2", (a, b)))
            .reduce(Action::SetCursor(a + (b - a) / 4));
        let x = TimeScale::new(state.window, 800).px(a + (b - a) / 4);
        assert!((195..=205).contains(&x), "{x}");
        for kind in TrackKind::ALL {
            let svg = svg(kind, &state, &data, 800);
            let line = format!("points=\"{x},0 {x},{} \"", kind.height());
            let found = svg
                .lines()
                .any(|l| l.contains("stroke=\"#D62828\"") && l.contains(&line));
            assert!(found, "{}: no cursor line {line}", kind.name());
        }
    }

    #[test]
    fn the_finding_in_focus_is_shaded_on_every_track_with_its_edges() {
        let data = fixture("incident1-redis-py-5.0.0-valkey");
        let f = &data.analysis.findings[0];
        let focus = crate::state::Focus {
            kind: f.kind.name().to_owned(),
            span: (f.span.start.as_millis(), f.span.end.as_millis()),
        };
        let (a, b) = data.span();
        let state = ViewState::default()
            .reduce(Action::loaded("i1", (a, b)))
            .reduce(Action::Focus(focus.clone()));
        let scale = TimeScale::new(state.window, 800);
        let (xa, xb) = (scale.px(focus.span.0), scale.px(focus.span.1));
        let edge = |x: i32, h: u32| format!("points=\"{x},0 {x},{h} \"");
        let orange = "stroke=\"#F07800\"";
        for kind in TrackKind::ALL {
            let svg = svg(kind, &state, &data, 800);
            // Its start is framed; its end, when inside the window.
            for x in [xa, xb].into_iter().filter(|&x| x <= 800) {
                let line = edge(x, kind.height());
                assert!(
                    svg.lines().any(|l| l.contains(orange) && l.contains(&line)),
                    "{}: no focus edge {line}",
                    kind.name()
                );
            }
            assert!(
                svg.contains("fill=\"#F07800\""),
                "{}: not shaded",
                kind.name()
            );
        }
        // Without a focus nothing is drawn in its colour.
        let plain = ViewState::default().reduce(Action::loaded("i1", (a, b)));
        assert!(!svg(TrackKind::NodeRate, &plain, &data, 800).contains("#F07800"));
    }
}
