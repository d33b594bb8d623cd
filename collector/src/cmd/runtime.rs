//! The tokio runtime the subcommands run on, and the shutdown signal they wait for: the process's
//! lifecycle, kept out of `main` so that no subcommand reaches back into it.

use std::process::ExitCode;

/// A tokio runtime with `workers` threads, or the exit status after saying why there is none.
pub fn start(workers: usize) -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .map_err(|e| {
            eprintln!("error: cannot start the runtime: {e}");
            ExitCode::FAILURE
        })
}

/// Resolves at the first SIGTERM or SIGINT (Ctrl-C); never if neither can be listened for.
pub async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).ok();
    let mut int = signal(SignalKind::interrupt()).ok();
    tokio::select! {
        _ = async { match term.as_mut() { Some(s) => { s.recv().await; } None => std::future::pending().await } } => {}
        _ = async { match int.as_mut() { Some(s) => { s.recv().await; } None => std::future::pending().await } } => {}
    }
}
