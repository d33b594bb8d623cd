//! Line tracks: per-node rates, MOVED shares, error rates, connections, refreshes.

use plotters::coord::Shift;
use plotters::prelude::*;

use slotscope_core::track::{Series, Tracks};

use super::{color, columns, err, plot, size, text, DrawError, Frame, TrackKind, INK};

/// The series a line track shows, each with its colour index.
pub fn of(kind: TrackKind, tracks: &Tracks) -> Vec<(usize, &Series)> {
    match kind {
        TrackKind::NodeRate => tracks.node_rate.iter().enumerate().collect(),
        TrackKind::MovedShare => active(&tracks.moved_share),
        TrackKind::Errors => active(&tracks.errors),
        TrackKind::Connections => vec![(0, &tracks.new_connections), (2, &tracks.open_connections)],
        TrackKind::Refreshes => vec![(2, &tracks.refreshes)],
        TrackKind::Topology | TrackKind::Events => Vec::new(),
    }
}

fn active(list: &[Series]) -> Vec<(usize, &Series)> {
    list.iter()
        .enumerate()
        .filter(|(_, s)| s.is_active())
        .collect()
}

/// A value with a sensible number of digits.
pub fn number(v: f32) -> String {
    let a = v.abs();
    if a >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

/// Draws the series of line track `kind` on a scale reaching at least `at_least` (so a series
/// drawn over them, e.g. a prediction, fits); returns the value at the top of the plot.
pub fn draw<DB: DrawingBackend>(
    kind: TrackKind,
    area: &DrawingArea<DB, Shift>,
    frame: &Frame<'_>,
    tracks: &Tracks,
    at_least: f32,
) -> Result<f32, DrawError> {
    let (w, h) = size(area);
    let list = of(kind, tracks);
    let cols: Vec<_> = list
        .iter()
        .map(|(c, s)| (*c, *s, columns(s, &tracks.grid, &frame.scale)))
        .collect();
    let top = if kind == TrackKind::MovedShare {
        1.0
    } else {
        cols.iter()
            .flat_map(|(_, _, c)| c.iter().flatten().map(|&(_, hi)| hi))
            .fold(at_least.max(0.0), f32::max)
    };
    let top = if top > 0.0 { top * 1.1 } else { 1.0 };
    let y = plot::value_y(h, top);
    // Each column's range as a vertical stroke: its max, and its min where that is another row.
    let range = |x, (lo, hi), run: &mut Vec<(i32, i32)>| {
        run.push((x, y(hi)));
        if y(lo) != y(hi) {
            run.push((x, y(lo)));
        }
    };
    for (c, _, col) in &cols {
        let style = color(*c).stroke_width(1);
        for run in plot::runs(col, range) {
            area.draw(&PathElement::new(run, style)).map_err(err)?;
        }
    }
    // Legend and scale.
    let mut x = 6;
    for (c, s, _) in &cols {
        text(area, s.label.as_str(), (x, 3), 12.0, color(*c))?;
        x += 16 + i32::try_from(s.label.len()).unwrap_or(20) * 7;
    }
    if cols.is_empty() {
        text(area, "none in this recording", (x, 3), 12.0, INK)?;
    }
    let label = if kind == TrackKind::MovedShare {
        "max 100 %".to_owned()
    } else {
        format!("max {}", number(top / 1.1))
    };
    text(area, label, (w - 90, 3), 12.0, INK)?;
    Ok(top)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::fixture;
    use crate::draw::svg;
    use crate::state::{Action, ViewState};

    #[test]
    fn numbers_read_well() {
        assert_eq!(number(1234.5), "1234");
        assert_eq!(number(3.0), "3");
        assert_eq!(number(2.25), "2.2");
        assert_eq!(number(0.371), "0.371");
    }

    #[test]
    fn incident_2_moved_share_draws_the_stormy_command_high() {
        let data = fixture("incident2-valkey");
        let labels: Vec<&str> = of(TrackKind::MovedShare, &data.tracks)
            .iter()
            .map(|(_, s)| s.label.as_str())
            .collect();
        assert!(labels.contains(&"zrevrange"), "{labels:?}");
        let (a, b) = data.span();
        let state = ViewState::default().reduce(Action::loaded("i2", (a, b)));
        let svg = svg(TrackKind::MovedShare, &state, &data, 600);
        assert!(svg.contains("\nzrevrange\n"), "legend names the command");
        // One polyline per visible run; the storm reaches above the middle of the track (share
        // around 0.37 on a 0..1.1 scale is at y ≈ 18 + 60 × 0.66 ≈ 58; the track is 80 high).
        let idx = labels.iter().position(|l| *l == "zrevrange").unwrap();
        let (c, _) = of(TrackKind::MovedShare, &data.tracks)[idx];
        let col = color(c);
        let stroke = format!("stroke=\"#{:02X}{:02X}{:02X}\"", col.0, col.1, col.2);
        let ys: Vec<i32> = svg
            .lines()
            .filter(|l| l.contains("<polyline") && l.contains(&stroke))
            .flat_map(|l| {
                let pts = l.split("points=\"").nth(1).unwrap_or("");
                pts.split(' ')
                    .filter_map(|p| p.split(',').nth(1)?.parse::<i32>().ok())
                    .collect::<Vec<_>>()
            })
            .collect();
        assert!(!ys.is_empty());
        assert!(ys.iter().any(|&y| y < 62), "{ys:?}");
    }
}
