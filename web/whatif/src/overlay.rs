//! The prediction as series on the viewer's grid.

use serde::{Deserialize, Serialize};
use slotscope_core::float;
use slotscope_core::replay::ReplayReport;
use slotscope_core::track::{Grid, Series};

/// The predicted series, on the loaded recording's grid (NaN where the replay says nothing).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Overlay {
    /// The model's name (the legend says "predicted (model)").
    pub model: String,
    /// Per command: MOVED ÷ attempts that reached a server (label: the command).
    pub moved_share: Vec<Series>,
    /// Connections opened per second.
    pub new_connections: Series,
    /// `CLUSTER SLOTS` calls per second.
    pub refreshes: Series,
    /// Commands that succeeded per second, all nodes.
    pub ok_rate: Series,
    /// When the client was wedged: `[start, end]` in epoch milliseconds.
    pub wedged: Vec<(u64, u64)>,
    /// The grid the series are on when it is not the recording's (a pre-flight's, which goes on
    /// after the recording's end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grid: Option<Grid>,
}

fn ratio(part: u64, whole: u64) -> f32 {
    if whole == 0 {
        f32::NAN
    } else {
        // A share or a per-second rate: f32 precision is plenty for drawing.
        #[allow(clippy::cast_possible_truncation)]
        let v = (float::from_u64(part) / float::from_u64(whole)) as f32;
        v
    }
}

/// The seconds of the replay (index range into its timeline) that bucket `i` of `grid` covers.
fn seconds_of(grid: &Grid, i: usize, start: u64, len: usize) -> Option<std::ops::Range<usize>> {
    let t = grid.time(i).as_millis();
    let end = t.saturating_add(grid.bucket_ms.max(1));
    if end <= start {
        return None;
    }
    let a = usize::try_from(t.saturating_sub(start) / 1000).ok()?;
    let b = usize::try_from((end - 1).saturating_sub(start) / 1000).ok()?;
    (a < len).then(|| a..(b + 1).min(len))
}

/// The prediction as series on `grid`: counts per second averaged over the seconds each bucket
/// covers, MOVED shares as `moved ÷ attempts` over them.
pub(crate) fn overlay(report: &ReplayReport, names: &[String], grid: &Grid) -> Overlay {
    let timeline = &report.timeline;
    let start = timeline.first().map_or(0, |s| s.t.as_millis());
    let ranges: Vec<Option<std::ops::Range<usize>>> = (0..grid.buckets)
        .map(|i| seconds_of(grid, i, start, timeline.len()))
        .collect();
    let rate = |label: &str, f: &dyn Fn(usize) -> u64| Series {
        label: label.to_owned(),
        values: ranges
            .iter()
            .map(|r| match r {
                Some(r) if !r.is_empty() => {
                    let n = u64::try_from(r.len()).unwrap_or(u64::MAX);
                    ratio(r.clone().map(f).sum(), n)
                }
                _ => f32::NAN,
            })
            .collect(),
    };
    let new_connections = rate("new connections/s", &|s| timeline[s].new_connections);
    let ok_rate = rate("commands/s ok", &|s| timeline[s].ok);
    let refreshes = rate("CLUSTER SLOTS/s", &|s| timeline[s].cluster_slots_calls);
    let moved_share = names
        .iter()
        .enumerate()
        .map(|(n, name)| Series {
            label: name.clone(),
            values: ranges
                .iter()
                .map(|r| {
                    let (mut moved, mut calls) = (0, 0);
                    for t in r
                        .clone()
                        .into_iter()
                        .flatten()
                        .filter_map(|s| timeline.get(s))
                    {
                        moved += t.moved_by_command.get(n).copied().unwrap_or(0);
                        calls += t.calls_by_command.get(n).copied().unwrap_or(0);
                    }
                    ratio(moved, calls)
                })
                .collect(),
        })
        .collect();
    let mut wedged: Vec<(u64, u64)> = Vec::new();
    for s in timeline.iter().filter(|s| s.wedged) {
        let (a, b) = (s.t.as_millis(), s.t.as_millis().saturating_add(1000));
        match wedged.last_mut() {
            Some(last) if last.1 >= a => last.1 = b,
            _ => wedged.push((a, b)),
        }
    }
    if let (Some(since), Some(last)) = (report.wedged_since, wedged.last_mut()) {
        // The run that lasted to the end began when the client wedged, not at its second.
        if report.wedged && since.as_millis() >= last.0 {
            last.0 = since.as_millis();
        }
    }
    Overlay {
        model: report.model.clone(),
        moved_share,
        new_connections,
        refreshes,
        ok_rate,
        wedged,
        grid: None,
    }
}
