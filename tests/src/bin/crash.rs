//! `crash`: slotscope's commands killed with SIGKILL at drawn moments, and `record` and `cut` into
//! a full disk; every file left read back and held to the README's promises (see
//! `slotscope_tests::crash`). `scripts/crash` builds it and slotscope in release and runs it.
//!
//! ```sh
//! scripts/crash --kills 210 --seed 42 --out target/crash.md
//! ```
//!
//! `--kills N` (default 210: 30 per command), `--seed S` (default: the clock; printed), `--only
//! TARGET` (record, record-zstd, rotate, tap, import-metrics, cut, index), `--hours H` (the
//! synthetic recording `cut` and `index` read; default 0.5), `--no-full-disk`, `--out FILE`
//! (a Markdown report), `--keep DIR` (every file the kills left stays in DIR, a new directory,
//! rather than in a temporary one). Exit status 1 when any promise was broken.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use slotscope_tests::crash::full_disk::{self, DiskOutcome};
use slotscope_tests::crash::kill::{self, Outcome};
use slotscope_tests::crash::rig::Rig;
use slotscope_tests::crash::{Kill, Target};
use slotscope_tests::matrix::draw::run_seed;
use slotscope_tests::slotscope_bin;

struct Options {
    kills: u64,
    seed: u64,
    only: Option<Target>,
    hours: f64,
    full_disk: bool,
    out: Option<PathBuf>,
    keep: Option<PathBuf>,
}

fn target_named(name: &str) -> Option<Target> {
    Some(match name {
        "record" => Target::Record,
        "record-zstd" => Target::RecordZstd,
        "rotate" => Target::Rotate,
        "tap" => Target::Tap,
        "import-metrics" => Target::ImportMetrics,
        "cut" => Target::Cut,
        "index" => Target::Index,
        _ => return None,
    })
}

fn parse_args() -> Result<Options, String> {
    let mut o = Options {
        kills: 210,
        seed: run_seed(),
        only: None,
        hours: 0.5,
        full_disk: true,
        out: None,
        keep: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--kills" => o.kills = value()?.parse().map_err(|e| format!("--kills: {e}"))?,
            "--seed" => o.seed = value()?.parse().map_err(|e| format!("--seed: {e}"))?,
            "--only" => {
                let v = value()?;
                o.only = Some(target_named(&v).ok_or_else(|| {
                    format!("--only {v}: one of record, record-zstd, rotate, tap, import-metrics, cut, index")
                })?);
            }
            "--hours" => o.hours = value()?.parse().map_err(|e| format!("--hours: {e}"))?,
            "--no-full-disk" => o.full_disk = false,
            "--out" => o.out = Some(PathBuf::from(value()?)),
            "--keep" => o.keep = Some(PathBuf::from(value()?)),
            "-h" | "--help" => {
                return Err("usage: crash [--kills 210] [--seed S] [--only TARGET] [--hours 0.5] [--no-full-disk] [--out FILE.md] [--keep DIR]".into())
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if o.kills > 5_000 || !(o.hours > 0.0 && o.hours <= 24.0) {
        return Err("--kills at most 5000; --hours in (0, 24]".into());
    }
    Ok(o)
}

#[derive(Default)]
struct Tally {
    kills: u64,
    files: usize,
    cut_short: usize,
    temporary: usize,
    finished_first: u64,
    max_rounds_lost: Option<u64>,
    problems: usize,
}

fn main() -> ExitCode {
    let o = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let started = Instant::now();
    println!(
        "crash: seed {} ({} kills; re-run with --seed {})",
        o.seed, o.kills, o.seed
    );
    let synth = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(|d| d.join("synth")))
        .filter(|p| p.exists());
    let Some(synth) = synth else {
        eprintln!(
            "no synth binary beside this one: cargo build --release -p slotscope-tests --bin synth"
        );
        return ExitCode::from(2);
    };
    let work = match tempfile::TempDir::new() {
        Ok(w) => w,
        Err(e) => {
            eprintln!("a work directory: {e}");
            return ExitCode::from(2);
        }
    };
    let work_dir = o.keep.clone().unwrap_or_else(|| work.path().to_owned());
    let rig = match Rig::start(&slotscope_bin(), &synth, &work_dir, o.hours) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("setting up: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "references: import-metrics {} ms, cut {} ms ({} bytes), index {} ms",
        rig.import.took.as_millis(),
        rig.cut.took.as_millis(),
        rig.cut.bytes.len(),
        rig.index.took.as_millis()
    );
    let mut outcomes: Vec<(Kill, Outcome)> = Vec::new();
    let mut index = 0u64;
    let mut drawn = 0u64;
    while drawn < o.kills && index < o.kills * 8 {
        let k = Kill::nth(o.seed, index);
        index += 1;
        if o.only.is_some_and(|t| t != k.target) {
            continue;
        }
        drawn += 1;
        let out = kill::run(&rig, &k, index);
        println!(
            "kill {drawn}/{} (seed {}): {k}, {} ms: {} files ({} cut short, {} temporary){}{}{}",
            o.kills,
            k.seed,
            out.delay.as_millis(),
            out.files,
            out.cut_short,
            out.temporary,
            out.lost
                .map(|l| format!(", {} ms before the kill lost", l.as_millis()))
                .unwrap_or_default(),
            if out.finished_first {
                ", had finished"
            } else {
                ""
            },
            if out.problems.is_empty() {
                String::new()
            } else {
                format!("\n  PROBLEM: {}", out.problems.join("\n  PROBLEM: "))
            }
        );
        outcomes.push((k, out));
    }
    let disk: Vec<DiskOutcome> = if o.full_disk {
        full_disk::run_all(&rig)
    } else {
        Vec::new()
    };
    for d in &disk {
        println!(
            "{}: exit {:?} after {} ms{}: {}{}",
            d.what,
            d.status,
            d.took.as_millis(),
            d.rounds
                .map(|r| format!(", {r} rounds kept"))
                .unwrap_or_default(),
            d.message,
            if d.problems.is_empty() {
                String::new()
            } else {
                format!("\n  PROBLEM: {}", d.problems.join("\n  PROBLEM: "))
            }
        );
    }
    let doc = report(&o, &outcomes, &disk, started.elapsed());
    println!("\n{doc}");
    if let Some(path) = &o.out {
        if let Err(e) = std::fs::write(path, &doc) {
            eprintln!("{}: {e}", path.display());
        }
    }
    let problems = outcomes
        .iter()
        .map(|(_, x)| x.problems.len())
        .sum::<usize>()
        + disk.iter().map(|d| d.problems.len()).sum::<usize>();
    if problems == 0 {
        ExitCode::SUCCESS
    } else {
        println!("{problems} problems (see PROBLEM above)");
        ExitCode::FAILURE
    }
}

fn report(
    o: &Options,
    outcomes: &[(Kill, Outcome)],
    disk: &[DiskOutcome],
    took: Duration,
) -> String {
    let mut tally: BTreeMap<&str, Tally> = BTreeMap::new();
    for (k, x) in outcomes {
        let t = tally.entry(k.target.name()).or_default();
        t.kills += 1;
        t.files += x.files;
        t.cut_short += x.cut_short;
        t.temporary += x.temporary;
        t.finished_first += u64::from(x.finished_first);
        t.max_rounds_lost = t.max_rounds_lost.max(x.rounds_lost());
        t.problems += x.problems.len();
    }
    let mut d = String::new();
    let _ = writeln!(
        d,
        "Seed {}, {} kills, {:.0} s (`scripts/crash --kills {} --seed {}`).\n",
        o.seed,
        outcomes.len(),
        took.as_secs_f64(),
        o.kills,
        o.seed
    );
    let _ = writeln!(
        d,
        "| command | kills | files read back | of them cut short | temporary files left | finished before the kill | most poll intervals lost | problems |"
    );
    let _ = writeln!(d, "|---|---:|---:|---:|---:|---:|---:|---:|");
    for (name, t) in &tally {
        let _ = writeln!(
            d,
            "| `{name}` | {} | {} | {} | {} | {} | {} | {} |",
            t.kills,
            t.files,
            t.cut_short,
            t.temporary,
            t.finished_first,
            t.max_rounds_lost.map_or("–".to_owned(), |r| r.to_string()),
            t.problems
        );
    }
    if !disk.is_empty() {
        let _ = writeln!(
            d,
            "\n| full disk or bad directory | exit | rounds kept | message | problems |"
        );
        let _ = writeln!(d, "|---|---:|---:|---|---:|");
        for x in disk {
            let _ = writeln!(
                d,
                "| {} | {} | {} | {} | {} |",
                x.what,
                x.status.map_or("–".to_owned(), |s| s.to_string()),
                x.rounds.map_or("–".to_owned(), |r| r.to_string()),
                x.message.replace('|', "\\|"),
                x.problems.len()
            );
        }
    }
    d
}
