//! `slotscope summary`: its arguments, its help and its run.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::cmd::recording_report;
use crate::report::summary;

/// `summary --format`.
// The variants have no doc comments on purpose: clap would print them as the possible values'
// help, changing `--help`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum Format {
    Text,
    Json,
}

/// Print what a recording holds: duration, nodes, topology changes, poll failures.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A recording (.jsonl or .jsonl.zst).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

/// Runs `slotscope summary`.
pub fn run(args: Args) -> ExitCode {
    let read = summary::read(&args.file);
    recording_report::print(
        read,
        |r| &r.input,
        |r| match args.format {
            Format::Text => print!("{}", summary::render_text(r)),
            Format::Json => {
                let mut v = serde_json::to_value(&r.summary).unwrap_or_default();
                if let Some(obj) = v.as_object_mut() {
                    let bad: Vec<String> =
                        r.input.bad_lines.iter().map(ToString::to_string).collect();
                    obj.insert("bad_lines".into(), bad.into());
                }
                println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
            }
        },
    )
}
