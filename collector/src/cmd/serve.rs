//! `slotscope serve`: its arguments, its help and its run.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::{runtime, viewer_server};

/// `serve --help`, above the options.
const LONG_ABOUT: &str = "\
Serve the browser viewer on 127.0.0.1 and open it on FILE, or on the bundled demo recordings.

The viewer is the static bundle that scripts/build-web builds into web/dist. Without --dist it is
looked for as web/dist in the current directory or any directory above it, then in the directories
above the slotscope executable (so target/debug/slotscope and target/release/slotscope of a
checkout find the checkout's web/dist); the first one holding an index.html wins.

FILE (a .jsonl or .jsonl.zst recording) is served at /recording/<file name>, and the printed URL
opens the viewer on it (?src=/recording/<file name>). Without FILE the URL opens the viewer's demo.

Only 127.0.0.1 is listened on. On a terminal the URL is also opened with xdg-open (if that fails,
open the printed URL yourself); --no-open, or output that is not a terminal, skips that. Ctrl-C
stops the server.";

/// `serve --help`, below the options.
const AFTER_HELP: &str = "\
Examples:
  scripts/build-web && slotscope serve                   # the demo recordings
  slotscope serve incident.jsonl.zst --port 8080
  slotscope serve --port 0 --no-open                     # any free port; the URL says which";

/// Worker threads of the viewer's server.
const WORKERS: usize = 2;

/// Serve the browser viewer on 127.0.0.1, on a recording or on the demo.
#[derive(clap::Args, Debug)]
#[command(long_about = LONG_ABOUT, after_help = AFTER_HELP)]
pub struct Args {
    /// A recording (.jsonl or .jsonl.zst) to open [default: the viewer's demo recordings].
    #[arg(value_name = "FILE")]
    file: Option<PathBuf>,
    /// TCP port on 127.0.0.1 (0: any free port; the printed URL names it).
    #[arg(long, value_name = "N", default_value_t = 7781)]
    port: u16,
    /// Directory of the built viewer [default: web/dist, see above].
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
    let runtime = match runtime::start(WORKERS) {
        Ok(r) => r,
        Err(code) => return code,
    };
    runtime.block_on(viewer_server::serve(
        site,
        args.port,
        !args.no_open,
        runtime::shutdown_signal(),
    ))
}
