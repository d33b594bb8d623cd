//! `slotscope summary`: its arguments, its help and its run.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::report;

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
    let read = match report::read(&args.file) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    match args.format {
        Format::Text => print!("{}", report::render_text(&read)),
        Format::Json => {
            let mut v = serde_json::to_value(&read.summary).unwrap_or_default();
            if let Some(obj) = v.as_object_mut() {
                let bad: Vec<String> = read
                    .input
                    .bad_lines
                    .iter()
                    .map(ToString::to_string)
                    .collect();
                obj.insert("bad_lines".into(), bad.into());
            }
            println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
        }
    }
    for e in &read.input.bad_lines {
        eprintln!("warning: {e}");
    }
    if read.input.bad_lines.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
