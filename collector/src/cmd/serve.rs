//! `slotscope serve`: its arguments, its help and its run.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::cmd::runtime;
use crate::serve::bundle::Bundle;
use crate::serve::server as viewer_server;
use crate::store::overview_file;

/// `serve --help`, above the options, before the line on this binary's own bundle.
const LONG_ABOUT: &str = "\
Serve the browser viewer on 127.0.0.1 and open it on FILE, or on the bundled demo recordings.

The viewer is the static bundle that scripts/build-web builds into web/dist. It is served from the
first of:
  1. --dist DIR, when given;
  2. the viewer embedded in this binary: building slotscope (cargo build -p slotscope, cargo install
     --path collector) embeds a built web/dist, and cargo embeds it again whenever web/dist changes,
     so rebuild slotscope after scripts/build-web (a binary not rebuilt serves its old bundle, and
     says so at start when it differs from the web/dist it finds; --dist web/dist serves the new one);
  3. web/dist on disk, looked for in the current directory or any directory above it, then in the
     directories above the slotscope executable (so target/debug/slotscope of a checkout finds the
     checkout's web/dist); the first one holding an index.html wins.
The start-up line on stderr says which one is served.

FILE (a .jsonl or .jsonl.zst recording) is served at /recording/<file name>, and the printed URL
opens the viewer on it (?src=/recording/<file name>). Its overview (FILE.overview.json, see
`slotscope index --help`), which the viewer shows while it reads the recording, is written first
when none is beside FILE or FILE is newer. Without FILE the URL opens the viewer's demo.

Only 127.0.0.1 is listened on. On a terminal the URL is also opened with xdg-open (if that fails,
open the printed URL yourself); --no-open, or output that is not a terminal, skips that. Ctrl-C
stops the server.";

/// `serve --help` above the options: [`LONG_ABOUT`] and whether this binary embeds the viewer.
fn long_about() -> String {
    let bundle = match Bundle::embedded() {
        Some(b) => format!(
            "This slotscope embeds the viewer ({} files, {} KB{}).",
            b.len(),
            b.bytes().div_ceil(1000),
            Bundle::embedded_source()
                .map(|s| format!(", built from {s}"))
                .unwrap_or_default()
        ),
        None => "This slotscope was built without the viewer (no built web/dist at compile time): \
                 run scripts/build-web in a slotscope checkout, then rebuild slotscope, or use 1 or 3."
            .to_string(),
    };
    format!("{LONG_ABOUT}\n\n{bundle}")
}

/// `serve --help`, below the options.
const AFTER_HELP: &str = "\
Examples:
  scripts/build-web && cargo build -p slotscope     # a viewer embedded in the binary
  slotscope serve                                   # the demo recordings
  slotscope serve incident.jsonl.zst --port 8080
  slotscope serve --port 0 --no-open                # any free port; the URL says which";

/// Worker threads of the viewer's server.
const WORKERS: usize = 2;

/// Serve the browser viewer on 127.0.0.1, on a recording or on the demo.
#[derive(clap::Args, Debug)]
#[command(long_about = long_about(), after_help = AFTER_HELP)]
pub struct Args {
    /// A recording (.jsonl or .jsonl.zst) to open [default: the viewer's demo recordings].
    #[arg(value_name = "FILE")]
    file: Option<PathBuf>,
    /// TCP port on 127.0.0.1 (0: any free port; the printed URL names it).
    #[arg(long, value_name = "N", default_value_t = 7781)]
    port: u16,
    /// Directory of the built viewer [default: the embedded one, else web/dist, see above].
    #[arg(long, value_name = "DIR")]
    dist: Option<PathBuf>,
    /// Do not try to open a browser (the default when stdout is not a terminal).
    #[arg(long)]
    no_open: bool,
}

/// Runs `slotscope serve` until Ctrl-C / SIGTERM.
pub fn run(args: Args) -> ExitCode {
    let site = match viewer_server::site(args.dist.as_deref(), args.file.as_deref()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(file) = args.file.as_deref() {
        overview(file);
    }
    let runtime = match runtime::start(WORKERS) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let shutdown = runtime::Shutdown::listen(&runtime);
    runtime.block_on(viewer_server::serve(
        site,
        args.port,
        !args.no_open,
        shutdown.wait(),
    ))
}

/// Writes the overview of `file` unless a fresh one is beside it: the viewer shows it first
/// (`slotscope index --help`). Without one the viewer reads the whole recording first.
fn overview(file: &Path) {
    if overview_file::is_fresh(file) {
        return;
    }
    eprintln!(
        "slotscope: writing the overview of {} for the viewer …",
        file.display()
    );
    match overview_file::write(file) {
        Ok(w) => eprintln!(
            "slotscope: wrote {} in {:.1} s",
            w.path.display(),
            w.took.as_secs_f64()
        ),
        Err(e) => eprintln!("slotscope: no overview ({e}); the viewer reads the whole recording"),
    }
}
