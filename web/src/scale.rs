//! The one mapping between time and pixels that every track uses.

/// Maps the visible time window onto `width` pixels: the window's start at x = 0, its end at
/// x = `width`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeScale {
    start: u64,
    end: u64,
    width: f64,
}

fn to_f64(x: u64) -> f64 {
    // Epoch milliseconds are far below 2^53: exact.
    x as f64
}

impl TimeScale {
    /// A scale showing `[start, end]` (milliseconds) over `width` pixels.
    pub fn new((start, end): (u64, u64), width: u32) -> TimeScale {
        TimeScale {
            start,
            end: end.max(start + 1),
            width: f64::from(width.max(1)),
        }
    }

    /// The window's width in milliseconds.
    pub fn millis(&self) -> u64 {
        self.end - self.start
    }

    /// The visible window.
    pub fn window(&self) -> (u64, u64) {
        (self.start, self.end)
    }

    /// Width in pixels.
    pub fn pixels(&self) -> f64 {
        self.width
    }

    /// Milliseconds per pixel.
    pub fn ms_per_px(&self) -> f64 {
        to_f64(self.millis()) / self.width
    }

    /// The x of `t` (may lie outside `0..width` for times outside the window).
    pub fn x(&self, t: u64) -> f64 {
        (to_f64(t) - to_f64(self.start)) / self.ms_per_px()
    }

    /// The x of `t` as a pixel coordinate, clamped a little outside the canvas so that far-away
    /// times still draw as edges.
    pub fn px(&self, t: u64) -> i32 {
        let x = self.x(t).clamp(-10.0, self.width + 10.0);
        // Clamped to a small range above.
        x.round() as i32
    }

    /// The time at x (clamped to the window).
    pub fn time(&self, x: f64) -> u64 {
        let t = to_f64(self.start) + x.clamp(0.0, self.width) * self.ms_per_px();
        // Between start and end, both u64.
        (t.round() as u64).clamp(self.start, self.end)
    }

    /// The time span `[from, to)` covered by pixel column `col`.
    pub fn column(&self, col: u32) -> (u64, u64) {
        let a = self.time(f64::from(col));
        let b = self.time(f64::from(col) + 1.0);
        (a, b.max(a + 1))
    }

    /// Tick marks at a round step that gives about one per `spacing` pixels: `(time, x)`.
    pub fn ticks(&self, spacing: f64) -> Vec<(u64, f64)> {
        const STEPS: [u64; 26] = [
            1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 15_000, 30_000,
            60_000, 120_000, 300_000, 600_000, 900_000, 1_800_000, 3_600_000, 7_200_000,
            10_800_000, 21_600_000, 43_200_000,
        ];
        let want = self.ms_per_px() * spacing;
        let step = STEPS
            .iter()
            .copied()
            .find(|&s| to_f64(s) >= want)
            .unwrap_or(86_400_000);
        let mut t = self.start.div_ceil(step) * step;
        let mut out = Vec::new();
        while t <= self.end {
            out.push((t, self.x(t)));
            t += step;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_and_pixels_map_both_ways() {
        let s = TimeScale::new((10_000, 20_000), 1000);
        assert_eq!(s.ms_per_px(), 10.0);
        assert_eq!(s.x(10_000), 0.0);
        assert_eq!(s.x(15_000), 500.0);
        assert_eq!(s.x(20_000), 1000.0);
        assert_eq!(s.px(25_000), 1010, "far outside is clamped");
        assert_eq!(s.time(250.0), 12_500);
        assert_eq!(s.time(-5.0), 10_000);
        assert_eq!(s.time(5000.0), 20_000);
        assert_eq!(s.column(3), (10_030, 10_040));
    }

    #[test]
    fn an_empty_window_still_scales() {
        let s = TimeScale::new((5, 5), 0);
        assert_eq!(s.millis(), 1);
        assert!(s.x(6).is_finite());
    }

    #[test]
    fn ticks_fall_on_round_times() {
        let s = TimeScale::new((10_300, 70_300), 600);
        let t = s.ticks(100.0);
        // 100 ms per pixel, 100 px apart: every 10 s.
        assert_eq!(t.first().unwrap().0, 20_000);
        assert!(t.iter().all(|(t, _)| t % 10_000 == 0));
        assert_eq!(t.len(), 6);
        // Ten hours over 900 px: every two hours.
        let s = TimeScale::new((0, 36_000_000), 900);
        let t = s.ticks(110.0);
        assert_eq!(
            t.iter().map(|t| t.0).collect::<Vec<_>>()[..2],
            [0, 7_200_000]
        );
    }
}
