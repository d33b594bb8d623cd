//! The topology track: who owns which slots over time, ranges being migrated highlighted.

use plotters::coord::Shift;
use plotters::prelude::*;

use slotscope_core::track::Tracks;
use slotscope_core::SLOT_COUNT;

use super::frame::{err, size, text, DrawError, Frame};
use super::palette::{color, MIGRATING};

/// The smallest height a migrating range is drawn with, in pixels.
pub const MIGRATING_MIN: i32 = 3;

/// The y of the top edge of `slot` on a track `h` pixels high (slot 0 at the top).
pub fn slot_y(slot: u32, h: i32) -> i32 {
    let slots = i64::from(SLOT_COUNT);
    let y = i64::from(slot).min(slots) * i64::from(h) / slots;
    i32::try_from(y).unwrap_or(h)
}

/// Draws the layouts of `tracks` that overlap the window.
pub fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    frame: &Frame<'_>,
    tracks: &Tracks,
) -> Result<(), DrawError> {
    let (_, h) = size(area);
    let scale = &frame.scale;
    let (start, end) = scale.window();
    let data_end = tracks.grid.span().end.as_millis();
    let layouts = &tracks.layouts;
    // The first layout that may be visible: the last one starting at or before the window.
    let first = layouts
        .partition_point(|l| l.t.as_millis() <= start)
        .saturating_sub(1);
    for (i, layout) in layouts.iter().enumerate().skip(first) {
        let from = layout.t.as_millis();
        if from > end {
            break;
        }
        let to = layouts
            .get(i + 1)
            .map_or(data_end, |next| next.t.as_millis())
            .max(from);
        let (x0, x1) = (scale.px(from), scale.px(to));
        // Several layouts in one pixel column: the last one wins (it is drawn over the others
        // anyway), so skip the ones that would not show.
        if x1 == x0
            && layouts
                .get(i + 1)
                .is_some_and(|n| scale.px(n.t.as_millis()) == x0)
        {
            continue;
        }
        let x1 = x1.max(x0 + 1);
        for (range, node) in &layout.owners {
            let y0 = slot_y(u32::from(range.start().get()), h);
            let y1 = slot_y(u32::from(range.end().get()) + 1, h).max(y0 + 1);
            area.draw(&Rectangle::new(
                [(x0, y0), (x1, y1)],
                color(*node).mix(0.55).filled(),
            ))
            .map_err(err)?;
        }
        for (range, _, _) in &layout.migrating {
            // At least a few pixels high: a single slot in flight must still show.
            let y0 = slot_y(u32::from(range.start().get()), h).min(h - MIGRATING_MIN);
            let y1 = slot_y(u32::from(range.end().get()) + 1, h).max(y0 + MIGRATING_MIN);
            area.draw(&Rectangle::new([(x0, y0), (x1, y1)], MIGRATING.filled()))
                .map_err(err)?;
        }
    }
    // Legend: node colours.
    let mut x = 6;
    for (i, node) in tracks.nodes.iter().enumerate() {
        let label = node.to_string();
        area.draw(&Rectangle::new([(x, 4), (x + 10, 14)], color(i).filled()))
            .map_err(err)?;
        text(area, label.clone(), (x + 14, 4), 12.0, frame.theme.ink)?;
        x += 24 + i32::try_from(label.len()).unwrap_or(20) * 7;
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
    fn slots_map_onto_the_track_height() {
        assert_eq!(slot_y(0, 100), 0);
        assert_eq!(slot_y(8192, 100), 50);
        assert_eq!(slot_y(16384, 100), 100);
        assert_eq!(slot_y(99_999, 100), 100);
    }

    #[test]
    fn incident_1_draws_the_migrating_range_and_both_owners() {
        let data = fixture("incident1-redis-py-5.0.0-valkey");
        let (a, b) = data.span();
        let state = ViewState::default().reduce(Action::loaded("i1", (a, b)));
        let svg = svg(TrackKind::Topology, &state, &data, 900);
        let migrating = format!(
            "fill=\"#{:02X}{:02X}{:02X}\"",
            MIGRATING.0, MIGRATING.1, MIGRATING.2
        );
        let ys: Vec<i32> = svg
            .lines()
            .filter(|l| l.contains(&migrating))
            .filter_map(|l| l.split("y=\"").nth(1)?.split('"').next()?.parse().ok())
            .collect();
        assert!(ys.len() > 3, "no migrating range drawn: {ys:?}");
        // The migration moves the upper half (slots 8192..16383, y 55..110) slot batch by slot
        // batch, upwards from the middle.
        assert!(ys.iter().all(|y| (55..110).contains(y)), "{ys:?}");
        assert!(ys.first() < ys.last(), "{ys:?}");
        for node in [0, 1] {
            let c = color(node);
            let fill = format!("fill=\"#{:02X}{:02X}{:02X}\"", c.0, c.1, c.2);
            assert!(svg.contains(&fill), "node {node} never drawn as an owner");
        }
        // Zoomed onto the first second (before the new node joins), only node 0 owns slots.
        let early = state.reduce(Action::ZoomAt {
            factor: 1000.0,
            at: a,
        });
        let svg = super::super::svg(TrackKind::Topology, &early, &data, 900);
        let c = color(1);
        let owner1 = format!(
            "opacity=\"0.55\" fill=\"#{:02X}{:02X}{:02X}\"",
            c.0, c.1, c.2
        );
        assert!(!svg.contains(&owner1), "node 1 owns nothing at the start");
    }
}
