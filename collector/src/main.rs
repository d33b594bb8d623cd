//! `slotscope`: records a live Redis Cluster / Valkey cluster into one file, and reads it back.
//!
//! This file only parses the command line and hands it to the subcommand's module in [`cmd`].

mod cmd;
mod import;
mod node;
mod progress;
mod record;
mod report;
mod serve;
mod store;
mod tap;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Postmortem tool for Redis Cluster / Valkey cluster incidents on the client side of routing.
#[derive(Parser, Debug)]
#[command(name = "slotscope", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

/// The subcommands; each one's help is on its `Args`.
#[derive(Subcommand, Debug)]
enum Cmd {
    Record(cmd::record::Args),
    Cut(cmd::cut::Args),
    Summary(cmd::summary::Args),
    Analyze(cmd::analyze::Args),
    Import(cmd::import::Args),
    ImportMetrics(cmd::import_metrics::Args),
    Index(cmd::index::Args),
    Replay(cmd::replay::Args),
    Hypotheses(cmd::hypotheses::Args),
    Preflight(cmd::preflight::Args),
    Serve(cmd::serve::Args),
    Tap(cmd::tap::Args),
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Cmd::Record(args) => cmd::record::run(args),
        Cmd::Cut(args) => cmd::cut::run(args),
        Cmd::Summary(args) => cmd::summary::run(args),
        Cmd::Analyze(args) => cmd::analyze::run(args),
        Cmd::Import(args) => cmd::import::run(args),
        Cmd::ImportMetrics(args) => cmd::import_metrics::run(args),
        Cmd::Index(args) => cmd::index::run(args),
        Cmd::Replay(args) => cmd::replay::run(args),
        Cmd::Hypotheses(args) => cmd::hypotheses::run(args),
        Cmd::Preflight(args) => cmd::preflight::run(args),
        Cmd::Serve(args) => cmd::serve::run(args),
        Cmd::Tap(args) => cmd::tap::run(args),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
