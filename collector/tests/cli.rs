//! The `slotscope` command line as a user meets it: help texts, refusals of bad input, and reading
//! recordings. (Recording real clusters is tested in the workspace's `tests` crate.)

mod common;

use common::{slotscope, temp_dir, text};

#[test]
fn record_help_documents_every_option_and_the_allowlist() {
    let o = slotscope(&["record", "--help"]);
    assert!(o.status.success());
    let help = text(&o);
    for needle in [
        "--seed",
        "--out",
        "--interval",
        "--duration",
        "--timeout",
        "--tls",
        "--cacert",
        "--insecure",
        "--user",
        "--password-file",
        "SLOTSCOPE_PASSWORD",
        "CLUSTER SHARDS",
        "CLIENT LIST",
        "SIGTERM",
        ".zst",
    ] {
        assert!(
            help.contains(needle),
            "record --help lacks {needle}:\n{help}"
        );
    }
    assert!(
        !help.contains("--password <"),
        "the refused --password must stay hidden"
    );
}

#[test]
fn a_password_on_the_command_line_is_refused_without_echoing_it() {
    let d = temp_dir("cli-pw");
    let out = d.join("r.jsonl");
    let o = slotscope(&[
        "record",
        "--seed",
        "127.0.0.1:1",
        "--out",
        out.to_str().unwrap(),
        "--password",
        "TopSecret-123",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let t = text(&o);
    assert!(t.contains("SLOTSCOPE_PASSWORD"), "{t}");
    assert!(!t.contains("TopSecret-123"), "{t}");
    assert!(
        !out.exists(),
        "nothing is created when the arguments are refused"
    );
}

#[test]
fn bad_seed_and_duration_are_explained() {
    let o = slotscope(&["record", "--seed", "localhost", "--out", "x.jsonl"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("not HOST:PORT"), "{}", text(&o));
    let o = slotscope(&[
        "record",
        "--seed",
        "h:1",
        "--out",
        "x.jsonl",
        "--interval",
        "fast",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("not a duration"), "{}", text(&o));
}

#[test]
fn an_existing_recording_is_never_overwritten_without_force() {
    let d = temp_dir("cli-exists");
    let out = d.join("r.jsonl");
    std::fs::write(&out, "precious").unwrap();
    let o = slotscope(&[
        "record",
        "--seed",
        "127.0.0.1:1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("already exists"), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "precious");
}

#[test]
fn an_unreachable_seed_fails_clearly_and_leaves_no_file() {
    let d = temp_dir("cli-unreachable");
    let out = d.join("r.jsonl");
    // Port 1 on loopback: nothing listens there, the connection is refused at once.
    let o = slotscope(&[
        "record",
        "--seed",
        "127.0.0.1:1",
        "--out",
        out.to_str().unwrap(),
        "--duration",
        "2s",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let t = text(&o);
    assert!(
        t.contains("cannot discover the cluster from 127.0.0.1:1"),
        "{t}"
    );
    assert!(!out.exists());
}

#[test]
fn summary_reports_bad_lines_with_their_numbers_and_goes_on() {
    let d = temp_dir("cli-summary");
    let f = d.join("r.jsonl");
    let header = r#"{"type":"header","schema":1,"collector":"slotscope test","seed":"127.0.0.1:7000","started":1000,"options":{"interval_ms":1000,"timeout_ms":800,"tls":false}}"#;
    let round = |n: u64| {
        format!(
            r#"{{"type":"poll_round","t":{},"round":{n},"nodes":1,"ok":1,"failed":0}}"#,
            2000 + n * 1000
        )
    };
    std::fs::write(
        &f,
        format!(
            "{header}\n{}\n{{oops\n{}\n{}",
            round(0),
            round(1),
            &round(2)[..20]
        ),
    )
    .unwrap();
    let o = slotscope(&["summary", f.to_str().unwrap()]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "bad lines make the exit status non-zero"
    );
    let t = text(&o);
    assert!(t.contains("line 3: not valid JSON"), "{t}");
    assert!(t.contains("2 rounds"), "{t}");
    assert!(t.contains("partial line 5"), "{t}");

    let o = slotscope(&["summary", d.join("missing.jsonl").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("cannot open"));

    let not = d.join("not.jsonl");
    std::fs::write(&not, "hello\n").unwrap();
    let o = slotscope(&["summary", not.to_str().unwrap()]);
    assert!(
        text(&o).contains("not a slotscope recording"),
        "{}",
        text(&o)
    );
}
