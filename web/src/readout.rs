//! The exact values at an instant, for the hover text.

use slotscope_core::track::{Grid, Series, Tracks};
use slotscope_core::Timestamp;

use crate::draw::series::number;
use crate::whatif::Overlay;

fn value(series: &Series, bucket: Option<usize>) -> Option<f32> {
    let v = *series.values.get(bucket?)?;
    (!v.is_nan()).then_some(v)
}

/// One line per track: what it shows at `t` (missing values are left out).
pub fn at(tracks: &Tracks, t: u64) -> Vec<String> {
    let b = tracks.grid.bucket(Timestamp(t));
    let mut out = Vec::new();
    if let Some(l) = tracks.layout_at(Timestamp(t)) {
        let mut slots = vec![0u32; tracks.nodes.len()];
        for (r, n) in &l.owners {
            if let Some(s) = slots.get_mut(*n) {
                *s += u32::try_from(r.len()).unwrap_or(0);
            }
        }
        let owners: Vec<String> = slots
            .iter()
            .enumerate()
            .filter(|(_, s)| **s > 0)
            .map(|(i, s)| format!("{} {s} slots", tracks.nodes[i]))
            .collect();
        let mut line = format!("topology: {}", owners.join(", "));
        for (r, from, to) in &l.migrating {
            line.push_str(&format!(
                "; migrating {r} {} → {}",
                tracks.nodes[*from], tracks.nodes[*to]
            ));
        }
        out.push(line);
    }
    let list = |name: &str, series: &[Series], unit: &str| -> Option<String> {
        let parts: Vec<String> = series
            .iter()
            .filter_map(|s| Some(format!("{} {}{unit}", s.label, number(value(s, b)?))))
            .collect();
        (!parts.is_empty()).then(|| format!("{name}: {}", parts.join(", ")))
    };
    out.extend(list("commands/s", &tracks.node_rate, ""));
    let shares: Vec<Series> = tracks
        .moved_share
        .iter()
        .filter(|s| value(s, b).is_some_and(|v| v > 0.0))
        .map(|s| Series {
            label: s.label.clone(),
            values: s.values.iter().map(|v| v * 100.0).collect(),
        })
        .collect();
    out.extend(list("MOVED share", &shares, " %"));
    out.extend(list("errors/s", &tracks.errors, ""));
    out.extend(list(
        "connections",
        &[
            tracks.new_connections.clone(),
            tracks.open_connections.clone(),
        ],
        "",
    ));
    out.extend(list(
        "refreshes",
        std::slice::from_ref(&tracks.refreshes),
        "",
    ));
    out
}

/// The what-if prediction at `t`, in one line (`None` outside the replay).
pub fn predicted(overlay: &Overlay, grid: &Grid, t: u64) -> Option<String> {
    let b = grid.bucket(Timestamp(t));
    let mut parts: Vec<String> = Vec::new();
    let mut add = |label: &str, s: &Series, scale: f32, unit: &str| {
        if let Some(v) = value(s, b) {
            parts.push(format!("{label} {}{unit}", number(v * scale)));
        }
    };
    add("commands/s ok", &overlay.ok_rate, 1.0, "");
    for s in &overlay.moved_share {
        add(&format!("MOVED share {}", s.label), s, 100.0, " %");
    }
    add("new connections/s", &overlay.new_connections, 1.0, "");
    add("CLUSTER SLOTS/s", &overlay.refreshes, 1.0, "");
    if overlay.wedged.iter().any(|&(a, z)| a <= t && t < z) {
        parts.push("wedged".to_owned());
    }
    (!parts.is_empty()).then(|| format!("predicted ({}): {}", overlay.model, parts.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::fixture;

    #[test]
    fn incident_2_readout_names_both_nodes_and_the_storm() {
        let data = fixture("incident2-valkey");
        let g = data.tracks.grid;
        let t = g.time(g.buckets / 2).as_millis();
        let lines = at(&data.tracks, t);
        let text = lines.join("\n");
        assert!(text.starts_with("topology: "), "{text}");
        assert!(text.contains("8192 slots"), "{text}");
        for n in &data.tracks.nodes {
            assert!(text.contains(&n.to_string()), "{text}");
        }
        assert!(
            text.contains("MOVED share: ") && text.contains("zrevrange"),
            "{text}"
        );
        // Outside the recording there are no values.
        assert!(at(&data.tracks, 0).is_empty());
    }

    #[test]
    fn the_prediction_is_read_out_at_the_cursor() {
        let data = fixture("incident1-redis-py-5.0.0-valkey");
        let p = crate::whatif::run(
            &data,
            &crate::whatif::Request {
                model: "redis-py@5.0.0".into(),
                options: String::new(),
                rate: None,
                concurrency: 1,
            },
        )
        .unwrap();
        let g = data.tracks.grid;
        let early = predicted(&p.overlay, &g, data.span().0 + 2000).unwrap();
        assert!(
            early.starts_with("predicted (redis-py@5.0.0): commands/s ok "),
            "{early}"
        );
        assert!(early.contains("MOVED share zadd 0"), "{early}");
        assert!(!early.contains("wedged"), "{early}");
        let (since, _) = p.overlay.wedged[0];
        let late = predicted(&p.overlay, &g, since + 3000).unwrap();
        assert!(
            late.contains("commands/s ok 0,") && late.ends_with(", wedged"),
            "{late}"
        );
        assert_eq!(predicted(&p.overlay, &g, 0), None);
    }
}
