//! Tracks folded from the real recordings of the founding incidents (`tests/fixtures/`).

use slotscope_core::metrics::Metrics;
use slotscope_core::reader::RecordingReader;
use slotscope_core::timeline::ClusterTimeline;
use slotscope_core::track::{Tracks, TracksBuilder};
use slotscope_core::{NodeAddr, Slot, TimeSpan};

fn tracks(name: &str) -> Tracks {
    let path = format!(
        "{}/../../tests/fixtures/{name}.jsonl.zst",
        env!("CARGO_MANIFEST_DIR")
    );
    let file = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    let mut reader = RecordingReader::detect(file).unwrap();
    let mut builder = TracksBuilder::new(&reader.header().unwrap().clone());
    let mut metrics = Metrics::default();
    let mut timeline = ClusterTimeline::new();
    for item in reader.by_ref() {
        let line = item.unwrap().1;
        builder.push(&line);
        timeline.push(&line);
        metrics.push_owned(line);
    }
    builder.finish(&metrics, &timeline)
}

fn series<'a>(list: &'a [slotscope_core::track::Series], label: &str) -> &'a [f32] {
    &list
        .iter()
        .find(|s| s.label == label)
        .unwrap_or_else(|| panic!("no series {label}"))
        .values
}

fn mean(v: &[f32]) -> f32 {
    let vals: Vec<f32> = v.iter().copied().filter(|x| !x.is_nan()).collect();
    vals.iter().sum::<f32>() / vals.len().max(1) as f32
}

#[test]
fn incident_2_shows_the_moved_storm_on_the_remapped_commands_only() {
    let t = tracks("incident2-valkey");
    assert_eq!(t.nodes.len(), 2);
    assert_eq!(t.grid.bucket_ms, 500);
    assert!(t.grid.buckets > 30, "{}", t.grid.buckets);
    // The remapped service's commands are rejected about 37 % of the time, the healthy one's
    // hardly ever (the recording's own counters).
    let storm = mean(series(&t.moved_share, "zrevrange"));
    let healthy = mean(series(&t.moved_share, "zrevrangebyscore"));
    assert!((0.25..0.5).contains(&storm), "{storm}");
    assert!(healthy < 0.05, "{healthy}");
    // Both shards serve traffic; connections churn; refreshes are visible.
    assert!(t.node_rate.iter().all(|s| s.is_active()));
    assert!(t.new_connections.max() > 5.0);
    assert!(t.refreshes.is_active());
    assert!(t.errors.iter().any(|s| s.label == "MOVED" && s.is_active()));
    // One layout: half the slots each.
    let l = t.layout_at(t.grid.time(t.grid.buckets - 1)).unwrap();
    assert_eq!(l.owners.len(), 2);
    assert_ne!(
        l.owner(Slot::new(0).unwrap()),
        l.owner(Slot::new(16383).unwrap())
    );
}

#[test]
fn incident_1_shows_the_stall_the_new_node_and_the_migration() {
    let t = tracks("incident1-redis-py-5.0.0-valkey");
    assert_eq!(t.nodes.len(), 2);
    // The 2 s SIGSTOP: poll timeouts of the only node.
    assert!(t
        .poll_failures
        .iter()
        .any(|m| m.kind == "timeout" && m.node == Some(0)));
    // The new node appears mid-recording, and slots 8192-16383 are seen migrating to it.
    let new: NodeAddr = t.nodes[1].clone();
    assert!(t
        .node_events
        .iter()
        .any(|m| m.kind == "discovered" && m.node == Some(1)));
    assert!(t
        .layouts
        .iter()
        .any(|l| l.migrating.iter().any(|m| m.2 == 1)));
    let first = &t.layouts[0];
    assert_eq!(first.owners.len(), 1);
    let last = t.layouts.last().unwrap();
    assert_eq!(last.owner(Slot::new(16383).unwrap()), Some(1), "{new}");
    assert_eq!(last.owner(Slot::new(0).unwrap()), Some(0));
    // The wedged client: the old node's rate falls to about zero at the end, the new node never
    // serves anything.
    let old = series(&t.node_rate, &t.nodes[0].to_string());
    let head = mean(&old[4..10]);
    let tail = mean(&old[old.len() - 6..]);
    assert!(head > 100.0 && tail < head / 10.0, "{head} -> {tail}");
    assert!(!t.node_rate[1].is_active());
    // The grid covers the recording.
    let span = t.grid.span();
    assert!(span.millis() >= 20_000, "{span:?}");
    assert_eq!(
        t.grid.range(TimeSpan::new(span.start, span.end)),
        0..t.grid.buckets
    );
}

/// New connections per node add up to the cluster's, bucket by bucket, and show the node that
/// churns: incident 2's remapped client rebuilds against the seed, which takes most of them.
#[test]
fn new_connections_split_per_node_add_up_and_show_where_the_churn_is() {
    let t = tracks("incident2-valkey");
    assert_eq!(t.new_connections_by_node.len(), t.nodes.len());
    for (b, &total) in t.new_connections.values.iter().enumerate() {
        let parts: Vec<f32> = t
            .new_connections_by_node
            .iter()
            .map(|s| s.values[b])
            .filter(|v| !v.is_nan())
            .collect();
        if total.is_nan() {
            continue;
        }
        let sum: f32 = parts.iter().sum();
        assert!(
            (sum - total).abs() <= 1e-3 * total.max(1.0),
            "bucket {b}: {sum} against {total}"
        );
    }
    for (i, s) in t.new_connections_by_node.iter().enumerate() {
        assert_eq!(s.label, t.nodes[i].to_string());
    }
    let means: Vec<f32> = t
        .new_connections_by_node
        .iter()
        .map(|s| mean(&s.values))
        .collect();
    assert!(
        means.iter().any(|&m| m > 1.0),
        "some node churns: {means:?}"
    );
}
