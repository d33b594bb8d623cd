//! `slotscope import` end to end: outside evidence appended to hand-made recordings (plain and
//! zstd), checked through `slotscope summary --format json`; refusals leave the file byte-identical.

mod common;

use common::{slotscope, temp_dir, text};

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

/// 2025-03-14T05:05:00Z, in milliseconds.
const START: u64 = 1_741_928_700_000;

/// Milliseconds of 2025-03-14 at the given UTC time.
fn at(h: u64, m: u64, s: u64) -> u64 {
    START - 5 * 3_600_000 - 5 * 60_000 + h * 3_600_000 + m * 60_000 + s * 1000
}

/// A small valid recording: header, a poll round every minute for 20 minutes, an end line.
fn recording() -> String {
    let mut r = format!(
        r#"{{"type":"header","schema":1,"collector":"slotscope test","seed":"127.0.0.1:7000","started":{START},"options":{{"interval_ms":60000,"timeout_ms":800,"tls":false}}}}"#
    );
    r.push('\n');
    for n in 0..20u64 {
        r.push_str(&format!(
            r#"{{"type":"poll_round","t":{},"round":{n},"nodes":3,"ok":3,"failed":0}}"#,
            START + n * 60_000
        ));
        r.push('\n');
    }
    r.push_str(&format!(
        r#"{{"type":"end","t":{},"reason":"duration","rounds":20}}"#,
        START + 20 * 60_000
    ));
    r.push('\n');
    r
}

const CLOUD: &str = "\
05:11:29  Scaling out from 1 to 2 node groups
05:15:39  node group 0002 added
05:17:18  Migrating slots from node groups 0001 to 0002 to rebalance slots
05:21:24  Completed migrating 8192 of 8192 slots
";

const APP: &str = "\
2025-03-14 05:17:29,870 INFO app.web GET /checkout 200
2025-03-14 05:17:30,123 ERROR app.cache RedisClusterException: Redis Cluster cannot be connected. Please provide at least one reachable node: None
2025-03-14 05:17:30,456 ERROR app.cache RedisClusterException: Redis Cluster cannot be connected. Please provide at least one reachable node: None
2025-03-14 05:17:31,002 ERROR app.cache request failed
Traceback (most recent call last):
  File \"/app/cache.py\", line 42, in get
redis.exceptions.ConnectionError: Error 111 connecting to 10.0.1.17:6379. Connection refused.
";

fn write(dir: &Path, name: &str, content: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, content).unwrap();
    p
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `summary --format json`'s annotations as (t, source, text).
fn annotations(file: &Path) -> Vec<(u64, String, String)> {
    let o = slotscope(&["summary", s(file), "--format", "json"]);
    assert!(o.status.success(), "summary failed: {}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["bad_lines"], Value::Array(vec![]), "{v}");
    v["annotations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a[0].as_u64().unwrap(),
                a[1].as_str().unwrap().to_string(),
                a[2].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn expected_cloud() -> Vec<(u64, String, String)> {
    [
        (at(5, 11, 29), "Scaling out from 1 to 2 node groups"),
        (at(5, 15, 39), "node group 0002 added"),
        (
            at(5, 17, 18),
            "Migrating slots from node groups 0001 to 0002 to rebalance slots",
        ),
        (at(5, 21, 24), "Completed migrating 8192 of 8192 slots"),
    ]
    .into_iter()
    .map(|(t, m)| (t, "cloud_event_log".to_string(), m.to_string()))
    .collect()
}

fn expected_app() -> Vec<(u64, String, String)> {
    vec![
        (
            at(5, 17, 30),
            "app_log".into(),
            "2 × RedisClusterException: Redis Cluster cannot be connected. Please provide at least one reachable node: None".into(),
        ),
        (
            at(5, 17, 31),
            "app_log".into(),
            "1 × ConnectionError: Error 111 connecting to 10.0.1.17:6379. Connection refused.".into(),
        ),
    ]
}

/// Imports the incident's cloud and app logs into `file` and checks what summary sees.
fn import_both(dir: &Path, file: &Path) {
    let cloud = write(dir, "events.txt", CLOUD.as_bytes());
    let app = write(dir, "app.log", APP.as_bytes());
    let o = slotscope(&["import", s(file), "--events", s(&cloud)]);
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    assert!(
        out.contains("read as a cloud event log (detected)"),
        "{out}"
    );
    assert!(
        out.contains("added 4 annotations (source cloud_event_log)")
            && out.contains("from 2025-03-14T05:11:29.000Z to 2025-03-14T05:21:24.000Z"),
        "{out}"
    );
    for kind in [
        "scaling_start",
        "node_group_added",
        "migration_start",
        "migration_done",
    ] {
        assert!(out.contains(kind), "{kind} missing: {out}");
    }
    assert!(!out.contains("warning"), "{out}");
    assert_eq!(annotations(file), expected_cloud());

    let o = slotscope(&["import", s(file), "--events", s(&app)]);
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    assert!(
        out.contains("3 error lines counted into 2 annotations"),
        "{out}"
    );
    assert!(out.contains("RedisClusterException: 2 errors"), "{out}");
    let mut want = expected_cloud();
    want.extend(expected_app());
    assert_eq!(annotations(file), want);

    // Importing the same evidence again adds nothing.
    let before = std::fs::read(file).unwrap();
    let o = slotscope(&["import", s(file), "--events", s(&cloud)]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("already in"), "{}", text(&o));
    assert!(text(&o).contains("nothing to add"), "{}", text(&o));
    assert_eq!(std::fs::read(file).unwrap(), before);
}

#[test]
fn cloud_and_app_logs_are_appended_to_a_plain_recording() {
    let d = temp_dir("import-plain");
    let original = recording();
    let file = write(&d, "r.jsonl", original.as_bytes());
    import_both(&d, &file);
    let after = std::fs::read_to_string(&file).unwrap();
    assert!(
        after.starts_with(&original),
        "the original lines are intact"
    );
    assert!(after.ends_with('\n'));
    let added: Vec<&str> = after[original.len()..].lines().collect();
    assert_eq!(added.len(), 6);
    assert!(added
        .iter()
        .all(|l| l.starts_with(r#"{"type":"annotation","t":"#)));
    let json: Value = serde_json::from_str(added[4]).unwrap();
    assert_eq!(json["fields"]["class"], "RedisClusterException");
    assert_eq!(json["fields"]["count"], "2");
    assert_eq!(json["fields"]["kind"], "app_error");
    assert_eq!(json["end"], at(5, 17, 31));
}

/// One zstd frame with the recorder's settings (level 9, checksum, long-distance matching).
fn compress_like_the_recorder(data: &[u8]) -> Vec<u8> {
    let mut enc = zstd::Encoder::new(Vec::new(), 9).unwrap();
    enc.include_checksum(true).unwrap();
    enc.long_distance_matching(true).unwrap();
    enc.window_log(24).unwrap();
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

#[test]
fn cloud_and_app_logs_are_appended_to_a_zstd_recording_as_new_frames() {
    let d = temp_dir("import-zstd");
    let original = recording();
    let compressed = compress_like_the_recorder(original.as_bytes());
    let file = write(&d, "r.jsonl.zst", &compressed);
    import_both(&d, &file);
    let after = std::fs::read(&file).unwrap();
    assert!(
        after.starts_with(&compressed),
        "the original frame is intact"
    );
    assert!(
        after[compressed.len()..].starts_with(&[0x28, 0xb5, 0x2f, 0xfd]),
        "a new frame follows"
    );
    let plain = String::from_utf8(zstd::decode_all(&after[..]).unwrap()).unwrap();
    assert!(plain.starts_with(&original));
    assert_eq!(plain[original.len()..].lines().count(), 6);
}

#[test]
fn a_complete_last_line_without_newline_gets_one_first() {
    let d = temp_dir("import-nonl");
    let original = recording();
    let trimmed = original.trim_end_matches('\n');
    let file = write(&d, "r.jsonl", trimmed.as_bytes());
    let cloud = write(&d, "events.txt", CLOUD.as_bytes());
    let o = slotscope(&["import", s(&file), "--events", s(&cloud)]);
    assert!(o.status.success(), "{}", text(&o));
    let after = std::fs::read_to_string(&file).unwrap();
    assert!(
        after.starts_with(&original),
        "a newline was added, nothing else changed"
    );
    assert_eq!(annotations(&file), expected_cloud());
}

#[test]
fn a_recording_cut_short_is_refused_and_left_untouched() {
    let d = temp_dir("import-cut");
    let cloud = write(&d, "events.txt", CLOUD.as_bytes());
    let original = recording();
    // A plain file ending in a partial line.
    let cut = &original[..original.len() - 30];
    let file = write(&d, "r.jsonl", cut.as_bytes());
    let o = slotscope(&["import", s(&file), "--events", s(&cloud)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("partial line (line 22)"), "{t}");
    assert!(t.contains("head -n 21"), "{t}");
    assert!(t.contains("nothing was written"), "{t}");
    assert_eq!(std::fs::read(&file).unwrap(), cut.as_bytes());
    // A zstd file ending inside its frame.
    let compressed = compress_like_the_recorder(original.as_bytes());
    let cut = &compressed[..compressed.len() - 10];
    let file = write(&d, "r.jsonl.zst", cut);
    let o = slotscope(&["import", s(&file), "--events", s(&cloud)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("partial zstd frame"), "{}", text(&o));
    assert_eq!(std::fs::read(&file).unwrap(), cut);
}

#[test]
fn a_recording_still_being_written_is_refused() {
    let d = temp_dir("import-live");
    let cloud = write(&d, "events.txt", CLOUD.as_bytes());
    // No end line, just written: a recorder seems to be at work.
    let original = recording();
    let live = original[..original.rfind(r#"{"type":"end""#).unwrap()].to_string();
    let file = write(&d, "r.jsonl", live.as_bytes());
    let o = slotscope(&["import", s(&file), "--events", s(&cloud)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("seems to be still writing it"),
        "{}",
        text(&o)
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), live);
    // A dry run is harmless.
    let o = slotscope(&["import", s(&file), "--events", s(&cloud), "--dry-run"]);
    assert!(o.status.success(), "{}", text(&o));
    // Untouched for an hour: a recording cut short by a crash, which can be added to.
    let an_hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(an_hour_ago)
        .unwrap();
    let o = slotscope(&["import", s(&file), "--events", s(&cloud)]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(std::fs::read_to_string(&file).unwrap().starts_with(&live));
    assert_eq!(annotations(&file), expected_cloud());
}

#[test]
fn errors_exit_2_and_leave_the_file_byte_identical() {
    let d = temp_dir("import-errors");
    let original = recording();
    let file = write(&d, "r.jsonl", original.as_bytes());
    let no_times = write(&d, "notes.txt", b"Migrating slots\nsome note\n");
    let bad_time = write(&d, "bad.txt", b"2025-02-30 05:17:18 Migrating slots\n");
    let cloud = write(&d, "events.txt", CLOUD.as_bytes());
    let not_rec = write(&d, "not.jsonl", b"hello\n");
    let missing = d.join("missing.txt");
    let no_file = d.join("none.jsonl");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["import", s(&file), "--events", s(&missing)],
            "cannot read the events file",
        ),
        (
            vec!["import", s(&file), "--events", s(&no_times)],
            "no timestamps found in 2 lines",
        ),
        (
            vec!["import", s(&file), "--events", s(&bad_time)],
            "line 1: `2025-02-30 05:17:18` is not a valid date and time",
        ),
        (
            vec![
                "import",
                s(&file),
                "--events",
                s(&cloud),
                "--date",
                "14/03/2025",
            ],
            "not a date (expected YYYY-MM-DD",
        ),
        (
            vec!["import", s(&file), "--events", s(&cloud), "--format", "xml"],
            "invalid value 'xml'",
        ),
        (
            vec!["import", s(&not_rec), "--events", s(&cloud)],
            "not a slotscope recording",
        ),
        (
            vec!["import", s(&no_file), "--events", s(&cloud)],
            "cannot open",
        ),
    ];
    for (args, needle) in cases {
        let o = slotscope(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(needle), "{args:?}: {}", text(&o));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
    }
    assert_eq!(std::fs::read(&not_rec).unwrap(), b"hello\n");
}

#[test]
fn dry_run_prints_and_writes_nothing() {
    let d = temp_dir("import-dry");
    let original = recording();
    let file = write(&d, "r.jsonl", original.as_bytes());
    let app = write(&d, "app.log", APP.as_bytes());
    let o = slotscope(&["import", s(&file), "--events", s(&app), "--dry-run"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("dry run: 2 annotations would be added"),
        "{out}"
    );
    assert!(
        out.contains("2025-03-14T05:17:30.000Z  app_error          2 × RedisClusterException"),
        "{out}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
}

#[test]
fn date_source_format_and_stdin_options() {
    let d = temp_dir("import-options");
    let original = recording();
    let file = write(&d, "r.jsonl", original.as_bytes());
    // --date puts time-only lines on that day (and warns they fall outside the recording).
    let cloud = write(
        &d,
        "events.txt",
        b"05:17:18  Migrating slots from node groups 0001 to 0002\n",
    );
    let o = slotscope(&[
        "import",
        s(&file),
        "--events",
        s(&cloud),
        "--date",
        "2025-03-15",
        "--source",
        "aws-console",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("fall outside the recording"),
        "{}",
        text(&o)
    );
    let day = 86_400_000;
    assert_eq!(
        annotations(&file),
        vec![(
            at(5, 17, 18) + day,
            "aws-console".to_string(),
            "Migrating slots from node groups 0001 to 0002".to_string()
        )]
    );
    // JSON lines from standard input, format forced.
    let mut child = Command::new(env!("CARGO_BIN_EXE_slotscope"))
        .args(["import", s(&file), "--events", "-", "--format", "applog"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(
            br#"{"timestamp": "2025-03-14T05:17:40.250Z", "level": "error", "message": "MOVED 3999 10.0.1.18:6379", "exc_type": "MovedError"}
{"timestamp": "2025-03-14T05:17:40.750Z", "level": "error", "message": "MOVED 12182 10.0.1.17:6379", "exc_type": "MovedError"}
"#,
        )
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let all = annotations(&file);
    assert_eq!(
        all[1],
        (
            at(5, 17, 40),
            "app_log".to_string(),
            "2 × MovedError: MOVED 3999 10.0.1.18:6379".to_string()
        )
    );
}

#[test]
fn import_help_explains_each_format_with_an_example() {
    let o = slotscope(&["import", "--help"]);
    assert!(o.status.success());
    let help = text(&o);
    for needle in [
        "--events",
        "--format",
        "--date",
        "--source",
        "--dry-run",
        "auto",
        "cloud",
        "applog",
        "05:17:18  Migrating slots",
        "2025-03-14 05:17:30,123 ERROR",
        "\"exc_type\"",
        "describe-events",
        "UTC",
        "never rewritten",
    ] {
        assert!(
            help.contains(needle),
            "import --help lacks {needle}:\n{help}"
        );
    }
}
