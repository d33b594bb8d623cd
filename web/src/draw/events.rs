//! The events track: poll failures, node events and annotations as marks, and the time axis.

use plotters::coord::Shift;
use plotters::prelude::*;

use slotscope_core::track::{Mark, Tracks};

use super::frame::{err, size, text, DrawError, Frame};
use crate::clock;

/// Colour of poll failures.
pub const FAILURE: RGBColor = RGBColor(214, 40, 40);
/// Colour of node events.
pub const NODE_EVENT: RGBColor = RGBColor(31, 119, 180);
/// Colour of annotations.
pub const ANNOTATION: RGBColor = RGBColor(230, 120, 0);
/// Colour of the reader's own notes.
pub const NOTE: RGBColor = RGBColor(106, 27, 154);

/// Height of the time axis at the bottom, in pixels.
pub const AXIS: i32 = 16;
/// The width of a character of an axis label, pixels (at most, for the 11 px sans-serif).
const AXIS_CHAR_PX: i32 = 7;

/// Pixels a label needs before the next one in its lane.
const LABEL_PX: i32 = 160;
/// Height of a lane of labels, pixels.
const LANE_PX: i32 = 12;

/// Draws one row of marks. Labels that would collide take the next lane, and where none is left
/// give way by importance: the marks of the finding in focus first (drawn thicker), then nodes
/// joining or leaving, then other events, then the inventory at the recording's first instant
/// (context); by time within each.
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
    let focus = frame.state.focus.as_ref().map(|f| f.span);
    let first = marks.iter().map(|m| m.t.as_millis()).min();
    let mut last_x = i32::MIN;
    // (priority, x, text) of the marks that want a label.
    let mut wanted: Vec<(u8, i32, &str)> = Vec::new();
    for m in marks {
        let t = m.t.as_millis();
        let until = m.end.map_or(t, |e| e.as_millis());
        if until < start || t > end {
            continue;
        }
        let focused = focus.is_some_and(|(a, b)| t <= b && until >= a);
        let (x0, x1) = (scale.px(t), scale.px(until));
        if x1 > x0 {
            area.draw(&Rectangle::new(
                [(x0, y0), (x1, y1)],
                colour.mix(0.25).filled(),
            ))
            .map_err(err)?;
        }
        if x0 != last_x || focused {
            area.draw(&PathElement::new(
                vec![(x0, y0), (x0, y1)],
                colour.stroke_width(if focused { 3 } else { 2 }),
            ))
            .map_err(err)?;
            last_x = x0;
        }
        if labelled {
            let membership = matches!(m.kind.as_str(), "discovered" | "left");
            let priority = if focused {
                0
            } else if Some(t) == first {
                3
            } else if membership {
                1
            } else {
                2
            };
            wanted.push((priority, x0, m.text.as_str()));
        }
    }
    wanted.sort_by_key(|&(p, x, _)| (p, x));
    // Labels go in lanes of LANE_PX, as many as the row holds; a label with no room in any lane
    // is left out (its mark stays).
    let lanes = ((y1 - y0 - 2) / LANE_PX).max(1);
    let mut placed: Vec<(i32, i32)> = Vec::new();
    for (_, x, label) in wanted {
        let free = (0..lanes).find(|&lane| {
            !placed
                .iter()
                .any(|&(l, p)| l == lane && (p - x).abs() < LABEL_PX)
        });
        let Some(lane) = free else {
            continue;
        };
        let shown: String = label.chars().take(40).collect();
        text(area, shown, (x + 3, y0 + 2 + lane * LANE_PX), 11.0, colour)?;
        placed.push((lane, x));
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
    // The reader's notes, on the annotations' row.
    let notes: Vec<Mark> = frame
        .state
        .notes
        .iter()
        .map(|(t, text)| Mark {
            t: slotscope_core::Timestamp(*t),
            end: None,
            node: None,
            kind: "note".to_owned(),
            text: format!("✎ {text}"),
        })
        .collect();
    row(area, frame, &notes, (2 * third, body), NOTE, true)?;
    area.draw(&PathElement::new(
        vec![(0, body), (100_000, body)],
        frame.theme.ink.mix(0.4),
    ))
    .map_err(err)?;
    let (w, _) = size(area);
    for (t, x) in frame.scale.ticks(110.0) {
        let x = x.round() as i32;
        area.draw(&PathElement::new(
            vec![(x, body), (x, body + 4)],
            frame.theme.ink,
        ))
        .map_err(err)?;
        // A label that would run off the right edge ends at it instead (it is not clipped).
        let label = clock::tick_label(t, frame.offset);
        let width = i32::try_from(label.chars().count()).unwrap_or(12) * AXIS_CHAR_PX;
        let at = (x + 2).min(w - width - 2).max(0);
        text(area, label, (at, body + 3), 11.0, frame.theme.ink)?;
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
        // At full zoom on a narrow screen the node that joins keeps its label beside the
        // unreachable one two seconds before it (they take two lanes).
        let narrow = crate::draw::svg(TrackKind::Events, &state, &data, 600);
        let joined = data
            .tracks
            .node_events
            .iter()
            .filter(|m| m.t.as_millis() > a && m.text.contains("discovered"))
            .map(|m| m.text.chars().take(40).collect::<String>())
            .next()
            .expect("a node discovered after the start");
        assert!(narrow.contains(&joined), "{joined} is labelled at 600 px");
        // Axis labels are times of day, and none runs off the right edge, even when a tick
        // falls just before it (a window ending 0.3 s after a round 5 s).
        assert!(svg.contains(":"), "tick labels");
        let tick = (a + 10_000).div_ceil(5_000) * 5_000;
        let h = crate::state::HashState::decode(&format!("w={a}-{}", tick + 300)).unwrap();
        let edge = ViewState::default()
            .reduce(Action::Restore(h))
            .reduce(Action::loaded("i1", (a, b)));
        for width in [600, 777, 900, 1013] {
            let svg = crate::draw::svg(TrackKind::Events, &edge, &data, width);
            let lines: Vec<&str> = svg.lines().collect();
            for w in lines.windows(2) {
                let label = w[1].trim();
                let is_time = label.len() >= 5 && label.as_bytes()[2] == b':';
                let x: Option<i32> = w[0]
                    .split(" x=\"")
                    .nth(1)
                    .and_then(|r| r.split('"').next())
                    .and_then(|v| v.parse().ok());
                if let (true, Some(x)) = (is_time, x) {
                    let end = x + i32::try_from(label.len()).unwrap() * 7;
                    assert!(
                        end <= i32::try_from(width).unwrap(),
                        "{label} at {x} ends past {width}"
                    );
                }
            }
        }
    }
}
