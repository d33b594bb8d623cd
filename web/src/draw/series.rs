//! Line tracks: per-node rates, MOVED shares, error rates, connections, refreshes.

use plotters::coord::Shift;
use plotters::prelude::*;

use slotscope_core::track::{Series, Tracks};

use super::{color, columns, err, DrawError, Frame, TrackKind, INK};

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

/// Draws the series of line track `kind`.
pub fn draw<DB: DrawingBackend>(
    kind: TrackKind,
    area: &DrawingArea<DB, Shift>,
    frame: &Frame<'_>,
    tracks: &Tracks,
) -> Result<(), DrawError> {
    draw_scaled(kind, area, frame, tracks, 0.0).map(|_| ())
}

/// Draws the series of line track `kind` on a scale reaching at least `at_least` (so a series
/// drawn over them, e.g. a prediction, fits); returns the value at the top of the plot.
pub fn draw_scaled<DB: DrawingBackend>(
    kind: TrackKind,
    area: &DrawingArea<DB, Shift>,
    frame: &Frame<'_>,
    tracks: &Tracks,
    at_least: f32,
) -> Result<f32, DrawError> {
    let (_, h) = area.dim_in_pixel();
    let h = i32::try_from(h).unwrap_or(i32::MAX);
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
    let plot_top = 18.0f32;
    let span = f32::from(u16::try_from(h).unwrap_or(u16::MAX)) - plot_top - 2.0;
    let y = |v: f32| -> i32 {
        let y = plot_top + span * (1.0 - (v / top).clamp(0.0, 1.0));
        // In 0..h by the clamp above.
        y.round() as i32
    };
    for (c, _, col) in &cols {
        let style = color(*c).stroke_width(1);
        let mut run: Vec<(i32, i32)> = Vec::new();
        for (x, v) in col.iter().enumerate() {
            let x = i32::try_from(x).unwrap_or(i32::MAX);
            match v {
                Some((lo, hi)) => {
                    run.push((x, y(*hi)));
                    if y(*lo) != y(*hi) {
                        run.push((x, y(*lo)));
                    }
                }
                None if !run.is_empty() => {
                    area.draw(&PathElement::new(std::mem::take(&mut run), style))
                        .map_err(err)?;
                }
                None => {}
            }
        }
        if run.len() == 1 {
            run.push((run[0].0 + 1, run[0].1));
        }
        if !run.is_empty() {
            area.draw(&PathElement::new(run, style)).map_err(err)?;
        }
    }
    // Legend and scale.
    let font = ("sans-serif", 12).into_font();
    let mut x = 6;
    for (c, s, _) in &cols {
        area.draw(&Text::new(s.label.clone(), (x, 3), font.color(&color(*c))))
            .map_err(err)?;
        x += 16 + i32::try_from(s.label.len()).unwrap_or(20) * 7;
    }
    if cols.is_empty() {
        area.draw(&Text::new(
            "none in this recording",
            (x, 3),
            font.color(&INK),
        ))
        .map_err(err)?;
    }
    let (w, _) = area.dim_in_pixel();
    let w = i32::try_from(w).unwrap_or(i32::MAX);
    let label = if kind == TrackKind::MovedShare {
        "max 100 %".to_owned()
    } else {
        format!("max {}", number(top / 1.1))
    };
    area.draw(&Text::new(label, (w - 90, 3), font.color(&INK)))
        .map_err(err)?;
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
