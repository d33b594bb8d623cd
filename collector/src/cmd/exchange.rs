//! The options `replay`, `hypotheses` and `preflight` share for how long a replayed exchange
//! takes.

use crate::cmd::value_parser::parse_rtt_ms;

/// The round trip and the service time, as the subcommands take them.
#[derive(clap::Args, Debug)]
pub struct ExchangeArgs {
    /// Network round trip per exchange, milliseconds [default: 0.25].
    #[arg(long = "rtt-ms", value_name = "MS", value_parser = parse_rtt_ms)]
    pub rtt_us: Option<u32>,
    /// Service time of every command, microseconds [default: each command's median usec_per_call
    /// in the recording's INFO commandstats, else 10].
    #[arg(long, value_name = "US", value_parser = clap::value_parser!(u32).range(0..=60_000_000))]
    pub service_us: Option<u32>,
}
