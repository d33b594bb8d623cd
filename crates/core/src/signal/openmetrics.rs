//! The OpenMetrics text format (1.0.0) of metric families: `# TYPE` and `# HELP` before each
//! family's samples, counters' samples named `<family>_total`, label values escaped, `# EOF` last.

use std::fmt::Write;

use super::{Family, Kind};

/// The content type of [`render`]'s output.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Writes `families` in the OpenMetrics text format, ending with `# EOF\n`.
pub fn render(families: &[Family]) -> String {
    let mut out = String::new();
    for f in families {
        let kind = match f.kind {
            Kind::Gauge => "gauge",
            Kind::Counter => "counter",
        };
        let _ = writeln!(out, "# TYPE {} {kind}", f.name);
        let _ = writeln!(out, "# HELP {} {}", f.name, escape(f.help, false));
        let suffix = if f.kind == Kind::Counter {
            "_total"
        } else {
            ""
        };
        for s in &f.samples {
            out.push_str(f.name);
            out.push_str(suffix);
            if !s.labels.is_empty() {
                out.push('{');
                for (k, (name, value)) in s.labels.iter().enumerate() {
                    if k > 0 {
                        out.push(',');
                    }
                    let _ = write!(out, "{name}=\"{}\"", escape(value, true));
                }
                out.push('}');
            }
            let _ = writeln!(out, " {}", number(s.value));
        }
    }
    out.push_str("# EOF\n");
    out
}

/// A value as OpenMetrics writes numbers (`NaN`, `+Inf`, `-Inf` for the non-finite).
fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v}")
    }
}

/// Escapes a backslash, a newline and (in label values) a double quote.
fn escape(s: &str, quote: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '"' if quote => out.push_str("\\\""),
            c => out.push(c),
        }
    }
    out
}
