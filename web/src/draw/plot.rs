//! The plot of a line track, shared by the observed series and the prediction drawn over them:
//! the mapping of values to pixel rows, and down-sampled columns joined into polylines.

use super::column::Column;

/// The y of the top of the plot (the legend is above it), in pixels.
const PLOT_TOP: f32 = 18.0;

/// The y of value `v` on a track `h` pixels high whose plot reaches `top` at `PLOT_TOP` and 0
/// two pixels above the bottom (values outside 0..=`top` are clamped to it).
pub fn value_y(h: i32, top: f32) -> impl Fn(f32) -> i32 {
    let span = f32::from(u16::try_from(h).unwrap_or(u16::MAX)) - PLOT_TOP - 2.0;
    move |v| {
        let y = PLOT_TOP + span * (1.0 - (v / top).clamp(0.0, 1.0));
        // Within 0..h by the clamp.
        y.round() as i32
    }
}

/// The polylines of `columns` (column `x` at pixel `x`): one a run of columns with data, `points`
/// adding a column's points (`x` and its min and max) to its run. A last run of one point gets a
/// second one a pixel to the right, so it shows.
pub fn runs(
    columns: &[Column],
    points: impl Fn(i32, (f32, f32), &mut Vec<(i32, i32)>),
) -> Vec<Vec<(i32, i32)>> {
    let mut out = Vec::new();
    let mut run: Vec<(i32, i32)> = Vec::new();
    for (x, v) in columns.iter().enumerate() {
        let x = i32::try_from(x).unwrap_or(i32::MAX);
        match v {
            Some(range) => points(x, *range, &mut run),
            None if !run.is_empty() => out.push(std::mem::take(&mut run)),
            None => {}
        }
    }
    if run.len() == 1 {
        run.push((run[0].0 + 1, run[0].1));
    }
    if !run.is_empty() {
        out.push(run);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_map_between_the_plot_top_and_two_pixels_above_the_bottom() {
        let y = value_y(100, 10.0);
        assert_eq!(y(10.0), 18);
        assert_eq!(y(0.0), 98);
        assert_eq!(y(5.0), 58);
        assert_eq!(y(99.0), 18, "clamped");
        assert_eq!(y(-1.0), 98, "clamped");
    }

    #[test]
    fn runs_break_at_columns_without_data_and_a_last_lone_point_is_widened() {
        let cols = [
            Some((1.0, 1.0)),
            None,
            Some((2.0, 2.0)),
            Some((3.0, 3.0)),
            None,
            None,
        ];
        let mid = |x, (lo, hi): (f32, f32), run: &mut Vec<(i32, i32)>| {
            run.push((x, ((lo + hi) / 2.0) as i32));
        };
        assert_eq!(runs(&cols, mid), vec![vec![(0, 1)], vec![(2, 2), (3, 3)]]);
        assert_eq!(
            runs(&cols[..3], mid),
            vec![vec![(0, 1)], vec![(2, 2), (3, 2)]]
        );
        assert!(runs(&[None, None], mid).is_empty());
    }
}
