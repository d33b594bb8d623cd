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

/// SIGTERM and SIGINT (Ctrl-C), caught from the moment [`Shutdown::listen`] is called, not from
/// the first poll of [`Shutdown::wait`]: a signal that comes while a command is still starting
/// (creating its file, its first poll of the cluster) is kept, and the command ends cleanly at
/// its first chance rather than dying with its file half made.
pub struct Shutdown {
    term: Option<tokio::signal::unix::Signal>,
    int: Option<tokio::signal::unix::Signal>,
}

impl Shutdown {
    /// Starts listening, on `runtime`'s signal driver.
    pub fn listen(runtime: &tokio::runtime::Runtime) -> Shutdown {
        use tokio::signal::unix::{signal, SignalKind};
        let _inside = runtime.enter();
        Shutdown {
            term: signal(SignalKind::terminate()).ok(),
            int: signal(SignalKind::interrupt()).ok(),
        }
    }

    /// Resolves at the first SIGTERM or SIGINT since [`Shutdown::listen`]; never if neither
    /// could be listened for.
    pub async fn wait(self) {
        let Shutdown { mut term, mut int } = self;
        tokio::select! {
            _ = async { match term.as_mut() { Some(s) => { s.recv().await; } None => std::future::pending().await } } => {}
            _ = async { match int.as_mut() { Some(s) => { s.recv().await; } None => std::future::pending().await } } => {}
        }
    }
}
