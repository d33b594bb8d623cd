//! The output format of the reports of `analyze`, `replay` and `hypotheses`.

/// `--format` of a report.
// The variants have no doc comments on purpose: clap would print them as the possible values'
// help, changing `--help`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub(super) enum ReportFormat {
    Text,
    Json,
    Markdown,
}
