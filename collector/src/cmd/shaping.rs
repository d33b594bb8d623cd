//! The options `replay` and `hypotheses` share: how the replayed application issues its commands
//! and the window replayed.

use crate::cmd::exchange::ExchangeArgs;
use crate::cmd::value_parser::parse_time;
use crate::report::replay::Shaping;
use slotscope_core::moment::Moment;

/// The application's shape and the window, as both subcommands take them.
#[derive(clap::Args, Debug)]
pub struct ShapingArgs {
    /// Commands the application has in flight at most, one after another per lane (tasks or
    /// threads sharing the client); with socket_timeout set, a command scheduled while all of them
    /// wait on a timeout is not issued.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    concurrency: u32,
    /// Issue commands as tasks with at most N in flight (instead of --concurrency lanes).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    in_flight: Option<u32>,
    /// How long an exchange takes.
    #[command(flatten)]
    exchange: ExchangeArgs,
    /// Start of the window replayed: +DURATION after the recording's start, epoch ms or RFC 3339
    /// [default: the first moment every slot is covered].
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    from: Option<Moment>,
    /// End of the window replayed (same forms as --from) [default: the recording's end].
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    to: Option<Moment>,
}

impl ShapingArgs {
    /// The options as the reports take them.
    pub fn shaping(&self) -> Shaping {
        Shaping {
            concurrency: self.concurrency,
            in_flight: self.in_flight,
            rtt_us: self.exchange.rtt_us,
            service_us: self.exchange.service_us,
            from: self.from,
            to: self.to,
        }
    }
}
