//! Series down-sampled to pixel columns: the smallest and largest value each column covers.

use slotscope_core::track::{Grid, Series};
use slotscope_core::{TimeSpan, Timestamp};

use crate::scale::TimeScale;

/// One pixel column's values: the smallest and largest value of the buckets it covers.
pub type Column = Option<(f32, f32)>;

/// `series` down-sampled to the pixel columns of `scale`: min and max of the buckets each column
/// covers (`None` where there is no data).
pub fn columns(series: &Series, grid: &Grid, scale: &TimeScale) -> Vec<Column> {
    let width = scale.pixels().ceil().clamp(0.0, 100_000.0) as u32;
    (0..width)
        .map(|col| {
            let (a, b) = scale.column(col);
            let buckets = grid.range(TimeSpan::new(Timestamp(a), Timestamp(b)));
            let mut out: Column = None;
            for &v in series.values.get(buckets).unwrap_or(&[]) {
                if v.is_nan() {
                    continue;
                }
                out = Some(match out {
                    None => (v, v),
                    Some((lo, hi)) => (lo.min(v), hi.max(v)),
                });
            }
            out
        })
        .collect()
}
