//! The matrix's report: a progress block per case, and the Markdown document of a draw (per metric
//! and per axis value the share of cases within target, every case, every miss with its likely
//! cause), meant to be pasted into docs/FIDELITY.md.

use std::fmt::Write as _;

use crate::matrix::case::{Fault, REDIS_PY};
use crate::matrix::compare::{Comparison, Metric};
use crate::matrix::library::Library;
use crate::matrix::repeat::floor;
use crate::matrix::runner::CaseResult;

/// The progress block of one case: its seed and settings, then real against model per metric.
pub fn progress(r: &CaseResult) -> String {
    let mut s = format!("case seed {}: {}\n", r.case.seed, r.case);
    if let Some(e) = &r.error {
        let _ = writeln!(s, "  ERROR: {}", first_lines(e, 6));
        return s;
    }
    if let Some(a) = &r.app {
        let _ = writeln!(
            s,
            "  real: issued {}, succeeded {}, failed {}, skipped {}, errors {}",
            a.issued, a.succeeded, a.failed, a.skipped, a.raw["errors"]
        );
    }
    if !r.replay_args.is_empty() {
        let _ = writeln!(s, "  replay: slotscope {}", r.replay_args.join(" "));
    }
    if !r.fallbacks.is_empty() {
        let _ = writeln!(s, "  fallbacks: {}", r.fallbacks.join("; "));
    }
    for c in &r.comparisons {
        line(&mut s, "", c, ["real", "model"], ["met", "MISS"]);
    }
    if let Some(e) = &r.again_error {
        let _ = writeln!(s, "  again: ERROR: {}", first_lines(e, 3));
    }
    for c in &r.again {
        line(
            &mut s,
            "again: ",
            c,
            ["first", "second"],
            ["repeated", "NOT REPEATED"],
        );
    }
    s
}

/// One comparison's progress line: `lead` and the metric, its two figures named `names`, and
/// the verdict (`verdicts[0]` when met).
fn line(s: &mut String, lead: &str, c: &Comparison, names: [&str; 2], verdicts: [&str; 2]) {
    let metric = format!("{lead}{}", c.metric.name());
    let a = format!("{} {}", names[0], c.real);
    let b = format!("{} {}", names[1], c.model);
    let verdict = verdicts[usize::from(!c.met)];
    let _ = writeln!(s, "  {metric:<48} {a:<29} {b:<30} {verdict}");
}

fn first_lines(text: &str, n: usize) -> String {
    text.lines().take(n).collect::<Vec<_>>().join(" / ")
}

fn cell(within: usize, of: usize) -> String {
    if of == 0 {
        "—".to_owned()
    } else {
        format!("{within}/{of} ({:.0} %)", 100.0 * within as f64 / of as f64)
    }
}

/// `(within target, compared)` of `metric` over `results`.
fn tally<'a>(results: impl Iterator<Item = &'a CaseResult>, metric: Metric) -> (usize, usize) {
    let mut within = 0;
    let mut of = 0;
    for r in results {
        if let Some(c) = r.get(metric) {
            of += 1;
            within += usize::from(c.met);
        }
    }
    (within, of)
}

fn rate_bucket(rate: u32) -> &'static str {
    match rate {
        0..=149 => "50–149/s",
        150..=399 => "150–399/s",
        _ => "400–1000/s",
    }
}

fn in_flight_bucket(n: u32) -> &'static str {
    match n {
        0..=1 => "1",
        2..=10 => "2–10",
        11..=100 => "11–100",
        _ => "101–1000",
    }
}

/// The number a value starts with (rate and in-flight buckets sort by it), else 0.
fn leading_number(v: &str) -> u64 {
    v.chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap_or(0)
}

type Axis = (&'static str, fn(&CaseResult) -> String);

const AXES: [Axis; 8] = [
    ("library", |r| {
        format!("{} {}", r.case.library.name(), r.case.library.version())
    }),
    ("rate", |r| rate_bucket(r.case.rate).to_owned()),
    ("in flight", |r| {
        in_flight_bucket(r.case.in_flight).to_owned()
    }),
    ("fault", |r| r.case.fault.name().to_owned()),
    ("when", |r| {
        if r.case.fault == Fault::None {
            "(no fault)".to_owned()
        } else {
            format!("{} migration", r.case.when.name())
        }
    }),
    ("address_remap", |r| {
        if r.case.remap { "one node" } else { "none" }.to_owned()
    }),
    ("server", |r| r.case.server.name().to_owned()),
    ("recording starts", |r| {
        r.case.record_start.name().to_owned()
    }),
];

/// The Markdown document of a draw of `results` seeded with `seed` over `libraries`.
pub fn markdown(results: &[CaseResult], seed: u64, libraries: &[Library]) -> String {
    let mut s = String::new();
    let compared = results.iter().filter(|r| r.error.is_none()).count();
    let _ = writeln!(
        s,
        "### Fidelity matrix, seed {seed}: {} cases ({compared} compared, {} harness errors)\n",
        results.len(),
        results.len() - compared
    );
    let libs = if libraries == REDIS_PY {
        String::new()
    } else {
        let names: Vec<String> = libraries.iter().map(|l| l.label()).collect();
        format!(" --libs {}", names.join(","))
    };
    let _ = writeln!(
        s,
        "Drawn and run with `scripts/fidelity --cases {} --seed {seed}{libs}`; each case again \
         alone with `scripts/fidelity --case-seed <case seed>{libs}`.\n",
        results.len()
    );
    let mut fallbacks: Vec<&str> = results
        .iter()
        .flat_map(|r| r.fallbacks.iter().map(String::as_str))
        .map(|f| f.split(':').next().unwrap_or(f))
        .collect();
    fallbacks.sort_unstable();
    fallbacks.dedup();
    if !fallbacks.is_empty() {
        let _ = writeln!(
            s,
            "Replay fallbacks taken (the binary lacked an option): {}.\n",
            fallbacks.join("; ")
        );
    }

    let _ = writeln!(
        s,
        "| metric | target | cases within target | wanted | met |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|");
    for m in Metric::ALL {
        let (w, of) = tally(results.iter(), m);
        let met = of > 0 && w as f64 >= m.wanted_share() * of as f64;
        let _ = writeln!(
            s,
            "| {} | {} | {} | ≥ {:.0} % | {} |",
            m.name(),
            m.target(),
            cell(w, of),
            100.0 * m.wanted_share(),
            if met { "yes" } else { "**no**" }
        );
    }

    let _ = writeln!(
        s,
        "\nPer axis value (cases within target / cases compared):\n"
    );
    let _ = write!(s, "| axis | value |");
    for m in Metric::ALL {
        let _ = write!(s, " {} |", m.name());
    }
    let _ = writeln!(s, "\n|---|---|{}", "---|".repeat(Metric::ALL.len()));
    for (axis, value_of) in AXES {
        let mut values: Vec<String> = results.iter().map(value_of).collect();
        values.sort_by_key(|v| (leading_number(v), v.clone()));
        values.dedup();
        for v in values {
            let _ = write!(s, "| {axis} | {v} |");
            for m in Metric::ALL {
                let (w, of) = tally(results.iter().filter(|r| value_of(r) == v), m);
                let _ = write!(s, " {} |", cell(w, of));
            }
            let _ = writeln!(s);
        }
    }

    let _ = writeln!(s, "\nEvery case (real / model):\n");
    let _ = write!(s, "| case seed | case |");
    for m in Metric::ALL {
        let _ = write!(s, " {} |", m.name());
    }
    let _ = writeln!(s, "\n|---|---|{}", "---|".repeat(Metric::ALL.len()));
    for r in results {
        let _ = write!(s, "| {} | {} |", r.case.seed, r.case);
        for m in Metric::ALL {
            match (r.get(m), &r.error) {
                (Some(c), _) => {
                    let mark = if c.met { "" } else { " **miss**" };
                    let _ = write!(s, " {} / {}{mark} |", c.real, c.model);
                }
                (None, Some(_)) => {
                    let _ = write!(s, " error |");
                }
                (None, None) => {
                    let _ = write!(s, " — |");
                }
            }
        }
        let _ = writeln!(s);
    }

    let _ = writeln!(s, "\nMisses and their likely causes:\n");
    let _ = writeln!(
        s,
        "| case seed | case | metric | real | model | likely cause |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|");
    let mut any = false;
    for r in results {
        for c in r.comparisons.iter().filter(|c| !c.met) {
            any = true;
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} |",
                r.case.seed,
                r.case,
                c.metric.name(),
                c.real,
                c.model,
                c.cause.as_deref().unwrap_or("not told by the figures")
            );
        }
        if let Some(e) = &r.error {
            any = true;
            let _ = writeln!(
                s,
                "| {} | {} | harness | — | — | {} |",
                r.case.seed,
                r.case,
                first_lines(e, 3).replace('|', "\\|")
            );
        }
    }
    if !any {
        let _ = writeln!(s, "| — | — | none | | | |");
    }
    repeat_section(&mut s, results);
    s
}

/// The cases run twice (`--twice`): per library and metric, how often the real library repeated
/// itself within target, and the model on the cases where it did and did not; then every case's
/// two live figures.
fn repeat_section(s: &mut String, results: &[CaseResult]) {
    let twice: Vec<&CaseResult> = results.iter().filter(|r| !r.again.is_empty()).collect();
    if twice.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "\nThe real library against itself: {} cases run live twice (`--twice`), the second run \
         judged against the first by the same targets. A metric the library does not repeat is \
         one no model can meet on that case.\n",
        twice.len()
    );
    let _ = writeln!(
        s,
        "| library | metric | live repeated | model within target, where live repeated | \
         model within target, where it did not | model within target of either run |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|");
    let (_, library_of) = AXES[0];
    let mut libraries: Vec<String> = twice.iter().map(|r| library_of(r)).collect();
    libraries.sort();
    libraries.dedup();
    for lib in &libraries {
        for m in Metric::ALL {
            let f = floor(
                twice.iter().filter(|r| &library_of(r) == lib).map(|r| {
                    (
                        r.comparisons.as_slice(),
                        r.again.as_slice(),
                        r.model_again.as_slice(),
                    )
                }),
                m,
            );
            let _ = writeln!(s, "| {lib} | {} | {} |", m.name(), f.cells());
        }
    }
    let _ = writeln!(s, "\nEvery case run twice (first / second live run):\n");
    let _ = write!(s, "| case seed | case |");
    for m in Metric::ALL {
        let _ = write!(s, " {} |", m.name());
    }
    let _ = writeln!(s, "\n|---|---|{}", "---|".repeat(Metric::ALL.len()));
    for r in twice {
        let _ = write!(s, "| {} | {} |", r.case.seed, r.case);
        for c in &r.again {
            let mark = if c.met { "" } else { " **differs**" };
            let _ = write!(s, " {} / {}{mark} |", c.real, c.model);
        }
        let _ = writeln!(s);
    }
}
