//! Line tracks: per-node rates, MOVED shares, error rates, connections, refreshes.

use plotters::coord::Shift;
use plotters::prelude::*;

use slotscope_core::track::{Series, Tracks};

use super::column::columns;
use super::frame::{err, size, text, DrawError, Frame};
use super::palette::color;
use super::plot;
use super::track_kind::TrackKind;

/// The series a line track shows, each with its colour index.
pub fn of(kind: TrackKind, tracks: &Tracks) -> Vec<(usize, &Series)> {
    match kind {
        TrackKind::NodeRate => tracks.node_rate.iter().enumerate().collect(),
        TrackKind::MovedShare => active(&tracks.moved_share),
        TrackKind::Errors => active(&tracks.errors),
        // New connections per node (in the node's colour, so the node that churns shows), and
        // the open connections of all nodes; the sum alone where the split is not known.
        TrackKind::Connections => {
            let by_node: Vec<(usize, &Series)> = tracks
                .new_connections_by_node
                .iter()
                .enumerate()
                .filter(|(_, s)| s.is_active())
                .collect();
            let mut out = if by_node.is_empty() {
                vec![(0, &tracks.new_connections)]
            } else {
                by_node
            };
            out.push((OPEN_COLOUR, &tracks.open_connections));
            out
        }
        TrackKind::Refreshes => vec![(2, &tracks.refreshes)],
        TrackKind::Topology | TrackKind::Events => Vec::new(),
    }
}

/// The palette index of the open connections' line (one no node takes first).
const OPEN_COLOUR: usize = 7;

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
    // Series the reader turned off (a click on their legend entry) are left out of the plot and
    // its scale; their legend entry stays, struck through.
    let hidden = |s: &Series| frame.state.hidden.contains(&series_key(kind, &s.label));
    let cols: Vec<_> = list
        .iter()
        .filter(|(_, s)| !hidden(s))
        .map(|(c, s)| (*c, *s, columns(s, &tracks.grid, &frame.scale)))
        .collect();
    // Every track scales to what is visible (a 3.5 % MOVED share is not a flat line at the
    // bottom of 0–100 %).
    let top = cols
        .iter()
        .flat_map(|(_, _, c)| c.iter().flatten().map(|&(_, hi)| hi))
        .fold(at_least.max(0.0), f32::max);
    let top = if top > 0.0 { top * 1.1 } else { 1.0 };
    let y = plot::value_y(h, top);
    // The axis: a few round values with their unit, at the right edge, with faint lines.
    if !cols.is_empty() {
        // On a short track, a tick too close to the one below it is left out.
        let mut last_y = i32::MAX;
        for v in ticks(top / 1.1) {
            let ty = y(v);
            if last_y - ty < TICK_GAP_PX {
                continue;
            }
            last_y = ty;
            area.draw(&PathElement::new(vec![(0, ty), (w, ty)], frame.theme.grid))
                .map_err(err)?;
            let label = tick_label(kind, v);
            let width = i32::try_from(label.chars().count()).unwrap_or(8) * 7;
            text(area, label, (w - 4 - width, ty - 12), 11.0, frame.theme.ink)?;
        }
    }
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
    // The legend: every series, a click toggles it.
    for ((c, s), (x0, x1)) in list.iter().zip(legend_boxes(&list)) {
        let colour = if hidden(s) {
            frame.theme.grid
        } else {
            color(*c)
        };
        text(area, s.label.as_str(), (x0, 3), 12.0, colour)?;
        if hidden(s) {
            area.draw(&PathElement::new(
                vec![(x0, 10), (x1 - 10, 10)],
                frame.theme.ink,
            ))
            .map_err(err)?;
        }
    }
    let x = legend_boxes(&list).last().map_or(6, |b| b.1);
    if list.is_empty() {
        text(
            area,
            "none in this recording",
            (x, 3),
            12.0,
            frame.theme.ink,
        )?;
    }
    Ok(top)
}

/// How far down a legend entry reaches, pixels from the top of its track.
pub const LEGEND_PX: i32 = 16;

/// The key of series `label` of track `kind` among the hidden ones (`node-rate:10.0.0.1:7000`).
pub fn series_key(kind: TrackKind, label: &str) -> String {
    format!("{}:{label}", kind.name())
}

/// The legend entries' horizontal extents `[x0, x1)`, in the order of `list`.
pub fn legend_boxes(list: &[(usize, &Series)]) -> Vec<(i32, i32)> {
    let mut x = 6;
    list.iter()
        .map(|(_, s)| {
            let w = 16 + i32::try_from(s.label.chars().count()).unwrap_or(20) * 7;
            let b = (x, x + w);
            x += w;
            b
        })
        .collect()
}

/// The series of track `kind` whose legend entry is at `(x, y)` (pixels in the track), if any.
pub fn legend_hit(kind: TrackKind, tracks: &Tracks, x: f64, y: f64) -> Option<String> {
    if !(0.0..f64::from(LEGEND_PX)).contains(&y) {
        return None;
    }
    let list = of(kind, tracks);
    list.iter()
        .zip(legend_boxes(&list))
        .find(|(_, (x0, x1))| (f64::from(*x0)..f64::from(*x1)).contains(&x))
        .map(|((_, s), _)| series_key(kind, &s.label))
}

/// The least distance between two axis labels, pixels.
const TICK_GAP_PX: i32 = 14;

/// The axis values of a plot whose data reach `max`: multiples of 1, 2 or 5 × 10^k, one to four
/// of them, none above `max` (the plot's top is 10 % above it).
pub fn ticks(max: f32) -> Vec<f32> {
    if !(max > 0.0 && max.is_finite()) {
        return Vec::new();
    }
    let raw = max / 4.0;
    let magnitude = 10f32.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|f| f * magnitude)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * magnitude);
    (1..=4)
        .map(|i| step * i as f32)
        .filter(|&v| v <= max * 1.0001)
        .collect()
}

/// An axis value of track `kind` with its unit: `20 %` (MOVED share), `150/s` (rates), `12`
/// (the connections track mixes a rate and a count).
pub fn tick_label(kind: TrackKind, v: f32) -> String {
    match kind {
        TrackKind::MovedShare => format!("{} %", number(v * 100.0)),
        TrackKind::Connections => number(v),
        _ => format!("{}/s", number(v)),
    }
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
        // Scaled to what is visible: the storm's top (about 40 %) is near the plot's top.
        assert!(ys.iter().any(|&y| y < 30), "{ys:?}");
        assert!(svg.contains(" %\n"), "the axis reads in per cent");
    }

    #[test]
    fn ticks_are_round_numbers_under_the_data() {
        let close = |a: Vec<f32>, b: &[f32]| {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-4 * y)
        };
        assert!(close(ticks(0.35), &[0.1, 0.2, 0.3]), "{:?}", ticks(0.35));
        assert!(close(ticks(204.0), &[100.0, 200.0]));
        assert!(close(ticks(12.0), &[5.0, 10.0]));
        assert!(close(ticks(1.0), &[0.5, 1.0]));
        assert!(ticks(0.0).is_empty());
        assert_eq!(tick_label(TrackKind::MovedShare, 0.2), "20 %");
        assert_eq!(tick_label(TrackKind::NodeRate, 150.0), "150/s");
        for max in [0.003, 0.07, 3.3, 47.0, 999.0, 12_345.0] {
            let t = ticks(max);
            assert!((1..=4).contains(&t.len()), "{max}: {t:?}");
            assert!(t.iter().all(|&v| v <= max * 1.0001), "{max}: {t:?}");
        }
    }

    #[test]
    fn an_empty_track_says_none_and_shows_no_axis() {
        let data = fixture("incident1-redis-py-5.0.0-valkey");
        let (a, b) = data.span();
        let state = ViewState::default().reduce(Action::loaded("i1", (a, b)));
        let svg = svg(TrackKind::MovedShare, &state, &data, 600);
        assert!(svg.contains("none in this recording"));
        assert!(!svg.contains(" %\n"), "no axis on an empty track");
        let rate = svg_of_rate(&state, &data);
        assert!(rate.contains("/s\n"), "the commands track reads in /s");
    }

    #[test]
    fn axis_labels_on_a_short_track_do_not_overlap() {
        let data = fixture("incident1-redis-py-5.0.0-valkey");
        let (a, b) = data.span();
        let state = ViewState::default().reduce(Action::loaded("i1", (a, b)));
        for kind in [
            TrackKind::Refreshes,
            TrackKind::Connections,
            TrackKind::NodeRate,
        ] {
            let svg = svg(kind, &state, &data, 600);
            let lines: Vec<&str> = svg.lines().collect();
            let mut ys: Vec<i32> = lines
                .windows(2)
                .filter(|w| {
                    let t = w[1].trim();
                    t.ends_with("/s") && t.chars().next().is_some_and(|c| c.is_ascii_digit())
                        || t.parse::<f32>().is_ok()
                })
                .filter_map(|w| w[0].split("y=\"").nth(1)?.split('"').next()?.parse().ok())
                .collect();
            ys.sort_unstable();
            assert!(!ys.is_empty(), "{}: no axis labels", kind.name());
            for pair in ys.windows(2) {
                assert!(pair[1] - pair[0] >= TICK_GAP_PX, "{}: {ys:?}", kind.name());
            }
        }
    }

    #[test]
    fn a_click_on_a_legend_entry_turns_its_series_off_and_on() {
        let data = fixture("incident2-valkey");
        let (a, b) = data.span();
        let state = ViewState::default().reduce(Action::loaded("i2", (a, b)));
        let list = of(TrackKind::NodeRate, &data.tracks);
        let boxes = legend_boxes(&list);
        let second = list[1].1.label.clone();
        let key = legend_hit(
            TrackKind::NodeRate,
            &data.tracks,
            f64::from(boxes[1].0 + 3),
            5.0,
        )
        .expect("the second entry");
        assert_eq!(key, series_key(TrackKind::NodeRate, &second));
        assert_eq!(
            legend_hit(
                TrackKind::NodeRate,
                &data.tracks,
                f64::from(boxes[1].0 + 3),
                40.0
            ),
            None,
            "below the legend is the plot"
        );
        let col = color(list[1].0);
        let stroke = format!("stroke=\"#{:02X}{:02X}{:02X}\"", col.0, col.1, col.2);
        let lines_of = |svg: &str| {
            svg.lines()
                .filter(|l| l.contains("<polyline") && l.contains(&stroke))
                .count()
        };
        let shown = svg(TrackKind::NodeRate, &state, &data, 600);
        assert!(lines_of(&shown) > 0);
        let off = state.clone().reduce(Action::ToggleSeries(key.clone()));
        let hidden = svg(TrackKind::NodeRate, &off, &data, 600);
        assert_eq!(lines_of(&hidden), 0, "the series is not drawn");
        assert!(
            hidden.contains(&format!("\n{second}\n")),
            "its legend entry stays"
        );
        let on = off.reduce(Action::ToggleSeries(key));
        assert_eq!(
            lines_of(&svg(TrackKind::NodeRate, &on, &data, 600)),
            lines_of(&shown)
        );
    }

    fn svg_of_rate(state: &ViewState, data: &crate::dataset::Dataset) -> String {
        svg(TrackKind::NodeRate, state, data, 600)
    }
}
