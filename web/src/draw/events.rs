//! The events track: poll failures, node events and annotations as marks, and the time axis.

use plotters::coord::Shift;
use plotters::prelude::*;

use slotscope_core::track::{Mark, Tracks};

use super::{err, size, text, DrawError, Frame, INK};
use crate::clock;

/// Colour of poll failures.
pub const FAILURE: RGBColor = RGBColor(214, 40, 40);
/// Colour of node events.
pub const NODE_EVENT: RGBColor = RGBColor(31, 119, 180);
/// Colour of annotations.
pub const ANNOTATION: RGBColor = RGBColor(230, 120, 0);

/// Height of the time axis at the bottom, in pixels.
pub const AXIS: i32 = 16;

fn row<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    frame: &Frame<'_>,
    marks: &[Mark],
    (y0, y1): (i32, i32),
    colour: RGBColor,
    labelled: bool,
) -> Result<(), DrawError> {
    let scale = &frame.scale;
    let (start, end) = scale.window();
    let mut last_label = i32::MIN;
    let mut last_x = i32::MIN;
    for m in marks {
        let t = m.t.as_millis();
        let until = m.end.map_or(t, |e| e.as_millis());
        if until < start || t > end {
            continue;
        }
        let (x0, x1) = (scale.px(t), scale.px(until));
        if x1 > x0 {
            area.draw(&Rectangle::new(
                [(x0, y0), (x1, y1)],
                colour.mix(0.25).filled(),
            ))
            .map_err(err)?;
        }
        if x0 != last_x {
            area.draw(&PathElement::new(
                vec![(x0, y0), (x0, y1)],
                colour.stroke_width(2),
            ))
            .map_err(err)?;
            last_x = x0;
        }
        if labelled && x0 > last_label.saturating_add(160) {
            let shown: String = m.text.chars().take(40).collect();
            text(area, shown, (x0 + 3, y0 + 2), 11.0, colour)?;
            last_label = x0;
        }
    }
    Ok(())
}

/// Draws the marks of `tracks` and the time axis.
pub fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    frame: &Frame<'_>,
    tracks: &Tracks,
) -> Result<(), DrawError> {
    let (_, h) = size(area);
    let body = h - AXIS;
    let third = body / 3;
    row(
        area,
        frame,
        &tracks.poll_failures,
        (0, third),
        FAILURE,
        true,
    )?;
    row(
        area,
        frame,
        &tracks.node_events,
        (third, 2 * third),
        NODE_EVENT,
        true,
    )?;
    row(
        area,
        frame,
        &tracks.annotations,
        (2 * third, body),
        ANNOTATION,
        true,
    )?;
    area.draw(&PathElement::new(
        vec![(0, body), (100_000, body)],
        INK.mix(0.4),
    ))
    .map_err(err)?;
    for (t, x) in frame.scale.ticks(110.0) {
        let x = x.round() as i32;
        area.draw(&PathElement::new(vec![(x, body), (x, body + 4)], INK))
            .map_err(err)?;
        text(
            area,
            clock::tick_label(t, frame.offset),
            (x + 2, body + 3),
            11.0,
            INK,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::fixture;
    use crate::draw::{svg, TrackKind};
    use crate::state::{Action, ViewState};

    #[test]
    fn incident_1_shows_the_poll_timeouts_and_the_new_node() {
        let data = fixture("incident1-redis-py-5.0.0-valkey");
        let (a, b) = data.span();
        let state = ViewState::default().reduce(Action::loaded("i1", (a, b)));
        let svg = svg(TrackKind::Events, &state, &data, 900);
        let hex = |c: RGBColor| format!("stroke=\"#{:02X}{:02X}{:02X}\"", c.0, c.1, c.2);
        assert!(svg.contains(&hex(FAILURE)), "poll failures drawn");
        assert!(svg.contains(&hex(NODE_EVENT)), "node events drawn");
        assert!(svg.contains("discovered"), "the new node is labelled");
        // Axis labels are times of day.
        assert!(svg.contains(":"), "tick labels");
    }
}
