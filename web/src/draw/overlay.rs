//! The what-if overlay: a replay's predicted series drawn dashed over the observed ones on the
//! same tracks and scale, and the interval the predicted client was wedged on the events track.
//! Two predictions (A/B) are drawn in two colours and dash patterns, each named in its legend.

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

use slotscope_core::track::{Grid, Series};

use super::column::columns;
use super::events::AXIS;
use super::frame::{err, size, text, DrawError, Frame};
use super::plot;
use super::track_kind::TrackKind;
use crate::whatif::Overlay;

/// Colour of predicted series and of the wedged interval (prediction A).
pub const PREDICTED: RGBColor = RGBColor(199, 21, 133);
/// Colour of prediction B.
pub const PREDICTED_B: RGBColor = RGBColor(0, 137, 123);

/// Length of a dash and of the gap after it, in pixels, of prediction A and of B.
const DASHES: [(i32, i32); 2] = [(6, 4), (2, 3)];

/// The colour of prediction `slot` (0: A, 1: B).
pub fn colour(slot: usize) -> RGBColor {
    if slot == 0 {
        PREDICTED
    } else {
        PREDICTED_B
    }
}

/// The predicted series track `kind` shows.
pub fn of(kind: TrackKind, overlay: &Overlay) -> Vec<&Series> {
    match kind {
        TrackKind::NodeRate => vec![&overlay.ok_rate],
        TrackKind::MovedShare => overlay.moved_share.iter().collect(),
        TrackKind::Connections => vec![&overlay.new_connections],
        TrackKind::Refreshes => vec![&overlay.refreshes],
        TrackKind::Topology | TrackKind::Errors | TrackKind::Events => Vec::new(),
    }
}

/// The largest predicted value track `kind` shows in the visible window (the observed series'
/// scale is widened to it).
pub fn peak(kind: TrackKind, overlay: &Overlay, grid: &Grid, frame: &Frame<'_>) -> f32 {
    of(kind, overlay)
        .into_iter()
        .flat_map(|s| columns(s, grid, &frame.scale))
        .flatten()
        .map(|(_, hi)| hi)
        .fold(0.0f32, f32::max)
}

/// The legend text: `predicted (model)`, with `A: ` / `B: ` before it when `count` predictions
/// are drawn together.
pub fn legend(overlay: &Overlay, slot: usize, count: usize) -> String {
    let side = match (count, slot) {
        (0 | 1, _) => "",
        (_, 0) => "A: ",
        _ => "B: ",
    };
    format!("{side}predicted ({})", overlay.model)
}

/// Draws prediction `slot` of `count` (its series of line track `kind`) dashed, `top` being the
/// value at the top of the plot (as [`super::series::draw`] returned it), with a legend entry.
#[allow(clippy::too_many_arguments)] // the drawing's context, one prediction of several
pub fn draw<DB: DrawingBackend>(
    kind: TrackKind,
    area: &DrawingArea<DB, Shift>,
    frame: &Frame<'_>,
    grid: &Grid,
    overlay: &Overlay,
    top: f32,
    slot: usize,
    count: usize,
) -> Result<(), DrawError> {
    let list = of(kind, overlay);
    if list.is_empty() {
        return Ok(());
    }
    let (w, h) = size(area);
    // The same mapping as the observed series.
    let y = plot::value_y(h, if top > 0.0 { top } else { 1.0 });
    // One point per column (the middle of its range) keeps the dashes readable.
    let middle = |x, (lo, hi): (f32, f32), run: &mut Vec<(i32, i32)>| {
        run.push((x, y((lo + hi) / 2.0)));
    };
    let colour = colour(slot);
    let style = colour.stroke_width(2);
    let dash = DASHES[slot.min(1)];
    for s in list {
        for run in plot::runs(&columns(s, grid, &frame.scale), middle) {
            area.draw(&DashedPathElement::new(run, dash.0, dash.1, style))
                .map_err(err)?;
        }
    }
    // Legend entries at the top right, A's left of B's.
    let entry = legend(overlay, slot, count);
    let width = i32::try_from(entry.chars().count()).unwrap_or(40) * 6 + 24;
    let right = w - 70 - i32::try_from(count.saturating_sub(1 + slot)).unwrap_or(0) * (width + 8);
    let x = (right - width).max(0);
    area.draw(&DashedPathElement::new(
        vec![(x, 9), (x + 16, 9)],
        dash.0,
        dash.1,
        style,
    ))
    .map_err(err)?;
    text(area, entry, (x + 20, 3), 12.0, colour)?;
    Ok(())
}

/// Marks the intervals predicted client `slot` of `count` was wedged on the events track (above its
/// axis; B's label a line above A's).
pub fn wedged<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    frame: &Frame<'_>,
    overlay: &Overlay,
    slot: usize,
    count: usize,
) -> Result<(), DrawError> {
    let colour = colour(slot);
    let lift = 13 * i32::try_from(slot).unwrap_or(0);
    let (_, h) = size(area);
    let body = h - AXIS;
    let (start, end) = frame.scale.window();
    for &(a, b) in &overlay.wedged {
        if b < start || a > end {
            continue;
        }
        let (x0, x1) = (frame.scale.px(a), frame.scale.px(b));
        area.draw(&Rectangle::new(
            [(x0, 0), (x1.max(x0 + 1), body)],
            colour.mix(0.12).filled(),
        ))
        .map_err(err)?;
        area.draw(&PathElement::new(
            vec![(x0, 0), (x0, body)],
            colour.stroke_width(2),
        ))
        .map_err(err)?;
        text(
            area,
            format!("{}: wedged", legend(overlay, slot, count)),
            (x0 + 4, body - 14 - lift),
            11.0,
            colour,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::{fixture, Dataset};
    use crate::draw::{svg_with, TrackKind};
    use crate::state::{Action, ViewState};
    use crate::whatif::{run, Prediction, Request};

    fn hex(c: RGBColor) -> String {
        format!("stroke=\"#{:02X}{:02X}{:02X}\"", c.0, c.1, c.2)
    }

    /// What redis-py 5.0.0 would have met in `data`, with model `options` and `rate`.
    fn predict(data: &Dataset, options: &str, rate: Option<u32>) -> Prediction {
        let req = Request {
            model: "redis-py@5.0.0".into(),
            options: options.into(),
            rate,
            concurrency: 1,
        };
        run(data, &req).unwrap()
    }

    fn loaded(span: (u64, u64)) -> ViewState {
        ViewState::default().reduce(Action::loaded("x", span))
    }

    /// The y of every point of the predicted lines in `svg`.
    fn predicted_ys(svg: &str) -> Vec<i32> {
        let stroke = hex(PREDICTED);
        svg.lines()
            .filter(|l| l.contains(&stroke) && l.contains("<polyline"))
            .flat_map(|l| {
                let pts = l.split("points=\"").nth(1).unwrap_or("");
                pts.split(' ')
                    .filter_map(|p| p.split(',').nth(1)?.parse::<i32>().ok())
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    #[test]
    fn incident_1_redis_py_5_is_drawn_wedged_with_its_rate_falling_to_zero() {
        let data = fixture("incident1-redis-py-5.0.0-valkey");
        let p = predict(&data, "", None);
        let state = loaded(data.span());
        let events = svg_with(TrackKind::Events, &state, &data, &[&p.overlay], 900);
        assert!(
            events.contains(&hex(PREDICTED)),
            "the wedged interval starts with a line"
        );
        assert!(events.contains("predicted (redis-py@5.0.0): wedged"));
        let rate = svg_with(TrackKind::NodeRate, &state, &data, &[&p.overlay], 900);
        assert!(rate.contains("predicted (redis-py@5.0.0)"), "legend");
        let ys = predicted_ys(&rate);
        assert!(!ys.is_empty(), "dashed predicted line drawn");
        // The predicted rate sits near the top before the wedge and at the bottom after it
        // (the track is 100 high: plot from 18 to 98).
        assert!(ys.iter().any(|&y| y < 40), "{ys:?}");
        assert!(ys.iter().any(|&y| y >= 97), "{ys:?}");
        // Without an overlay nothing predicted is drawn.
        let plain = svg_with(TrackKind::NodeRate, &state, &data, &[], 900);
        assert!(!plain.contains(&hex(PREDICTED)));
        assert!(!plain.contains("predicted"));
    }

    #[test]
    fn incident_2_remapped_moved_share_is_drawn_near_38_percent() {
        let data = fixture("incident2-valkey");
        let p = predict(&data, "address_remap=127.0.0.1:22809", None);
        let state = loaded(data.span());
        let svg = svg_with(TrackKind::MovedShare, &state, &data, &[&p.overlay], 800);
        let ys = predicted_ys(&svg);
        assert!(ys.len() > 20, "{}", ys.len());
        // The axis (ticks "20 %", "40 %" …, each label 12 px above its line) reads the median
        // predicted y as about 38 %.
        let ticks: Vec<(f32, f32)> = svg
            .lines()
            .collect::<Vec<_>>()
            .windows(2)
            .filter_map(|w| {
                let v: f32 = w[1].trim().strip_suffix(" %")?.parse().ok()?;
                let y: f32 = w[0].split("y=\"").nth(1)?.split('"').next()?.parse().ok()?;
                Some((v, y + 12.0))
            })
            .collect();
        assert!(ticks.len() >= 2, "{ticks:?}");
        let ((v0, y0), (v1, y1)) = (ticks[0], ticks[ticks.len() - 1]);
        let mut sorted = ys.clone();
        sorted.sort_unstable();
        let median = sorted[sorted.len() / 2] as f32;
        let read = v0 + (median - y0) * (v1 - v0) / (y1 - y0);
        assert!(
            (32.0..=44.0).contains(&read),
            "{read} % ({median} of {ys:?}, ticks {ticks:?})"
        );
        assert!(svg.contains("predicted (redis-py@5.0.0)"));
    }

    #[test]
    fn a_taller_prediction_widens_the_scale_of_the_observed_series() {
        let data = fixture("incident1-redis-py-5.0.0-valkey");
        let p = predict(&data, "", Some(5000));
        let state = loaded(data.span());
        let frame = Frame {
            state: &state,
            scale: crate::scale::TimeScale::new(state.window, 900),
            offset: None,
            theme: crate::draw::Theme::LIGHT,
        };
        let peak = peak(TrackKind::NodeRate, &p.overlay, &data.tracks.grid, &frame);
        assert!(peak > 4000.0, "{peak}");
        let svg = svg_with(TrackKind::NodeRate, &state, &data, &[&p.overlay], 900);
        let max: f32 = svg
            .lines()
            .filter_map(|l| l.trim().strip_suffix("/s")?.parse().ok())
            .fold(0.0, f32::max);
        assert!(max >= 2000.0, "the observed scale widened: top tick {max}");
    }
}
