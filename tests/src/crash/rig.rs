//! What the kills share: a real 3-master Redis cluster for `record` and `tap`, and for the
//! one-shot commands their inputs (a synthetic always-on directory for `cut` and `index`, saved
//! Prometheus responses for `import-metrics`) with the output and duration of one run left alone,
//! against which a killed run's output is held.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::cluster::{Cluster, ClusterOptions};
use crate::crash::Target;
use crate::kind::{workspace_root, ServerKind};

/// The poll interval of the recorders killed.
pub const INTERVAL: Duration = Duration::from_millis(200);

/// How long a recorder or a tap runs at most before its kill.
pub const RECORDING_WINDOW: Duration = Duration::from_secs(4);

/// How long an always-on recorder runs at most before its kill (several 1 s periods).
pub const ROTATE_WINDOW: Duration = Duration::from_secs(6);

/// What one run of a one-shot command wrote, left alone.
#[derive(Clone, Debug)]
pub struct Reference {
    /// The command's arguments, `OUT` standing for the output's path.
    pub args: Vec<String>,
    /// The bytes of its output.
    pub bytes: Vec<u8>,
    /// How long it took.
    pub took: Duration,
}

/// The kills' shared setting.
pub struct Rig {
    /// The `slotscope` binary.
    pub bin: PathBuf,
    /// The cluster `record` and `tap` run against.
    pub cluster: Cluster,
    /// Where every kill writes.
    pub work: PathBuf,
    /// `import-metrics`' reference run.
    pub import: Reference,
    /// `cut`'s reference run.
    pub cut: Reference,
    /// The recording `index` reads, and its reference run (the overview written beside it).
    pub index_source: PathBuf,
    /// `index`'s reference run.
    pub index: Reference,
}

/// Runs `bin ARGS…` (with `OUT` replaced by `out`) to completion; its duration, or why it failed.
pub fn run_alone(bin: &Path, args: &[String], out: &Path) -> Result<Duration, String> {
    let args = with_out(args, out);
    let start = Instant::now();
    let o = Command::new(bin)
        .args(&args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("run slotscope: {e}"))?;
    if !o.status.success() {
        return Err(format!(
            "slotscope {}: {}: {}",
            args.join(" "),
            o.status,
            String::from_utf8_lossy(&o.stderr).trim()
        ));
    }
    Ok(start.elapsed())
}

/// `args` with every `OUT` replaced by `out`.
pub fn with_out(args: &[String], out: &Path) -> Vec<String> {
    args.iter()
        .map(|a| {
            if a == "OUT" {
                out.display().to_string()
            } else {
                a.clone()
            }
        })
        .collect()
}

impl Rig {
    /// Starts the cluster and prepares every input in `work`: a synthetic recording of `hours`
    /// (made by the `synth` binary at `synth`) for `cut` and `index`.
    pub fn start(bin: &Path, synth: &Path, work: &Path, hours: f64) -> Result<Rig, String> {
        fs::create_dir_all(work).map_err(|e| format!("{}: {e}", work.display()))?;
        let cluster = Cluster::start(ServerKind::Redis, 3, ClusterOptions::default());
        // An always-on directory of one file: the synthetic recording under a period file's name.
        let always_on = work.join("always-on");
        fs::create_dir_all(&always_on).map_err(|e| e.to_string())?;
        let source = always_on.join("slotscope-20260301T000000Z.jsonl");
        let file = fs::File::create(&source).map_err(|e| e.to_string())?;
        let status = Command::new(synth)
            .args(["--hours", &hours.to_string(), "--nodes", "6", "--seed", "7"])
            .stdout(file)
            .status()
            .map_err(|e| format!("run {}: {e}", synth.display()))?;
        if !status.success() {
            return Err(format!("{} failed: {status}", synth.display()));
        }
        let index_source = work.join("indexed.jsonl");
        fs::copy(&source, &index_source).map_err(|e| e.to_string())?;
        let metrics_dir = workspace_root().join("tests/fixtures/metrics");
        let mut import_args: Vec<String> =
            vec!["import-metrics".into(), "--prometheus-json".into()];
        let mut saved: Vec<PathBuf> = fs::read_dir(&metrics_dir)
            .map_err(|e| format!("{}: {e}", metrics_dir.display()))?
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                let name = p.file_name().unwrap_or_default().to_string_lossy();
                name.starts_with("prometheus-2.42-redis_") && name.ends_with(".json")
            })
            .collect();
        saved.sort();
        import_args.extend(saved.iter().map(|p| p.display().to_string()));
        import_args.extend(["--out".into(), "OUT".into()]);
        let cut_args: Vec<String> = [
            "cut",
            &always_on.display().to_string(),
            "--from",
            "+0",
            "--to",
            "+1d",
            "--out",
            "OUT",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        let import = reference(bin, import_args, &work.join("reference-import.jsonl.zst"))?;
        let cut = reference(bin, cut_args, &work.join("reference-cut.jsonl.zst"))?;
        let overview = PathBuf::from(format!("{}.overview.json", index_source.display()));
        let took = run_alone(
            bin,
            &["index".to_owned(), index_source.display().to_string()],
            Path::new(""),
        )?;
        let index = Reference {
            args: vec!["index".to_owned(), index_source.display().to_string()],
            bytes: fs::read(&overview).map_err(|e| format!("{}: {e}", overview.display()))?,
            took,
        };
        fs::remove_file(&overview).map_err(|e| e.to_string())?;
        Ok(Rig {
            bin: bin.to_owned(),
            cluster,
            work: work.to_owned(),
            import,
            cut,
            index_source,
            index,
        })
    }

    /// The span a kill of `target` is drawn in: a few seconds of recording, or a little more
    /// than a whole run of a one-shot command (so that some kills come after it finished).
    pub fn window(&self, target: Target) -> Duration {
        match target {
            Target::Record | Target::RecordZstd | Target::Tap => RECORDING_WINDOW,
            Target::Rotate => ROTATE_WINDOW,
            Target::ImportMetrics => self.import.took.mul_f64(1.2),
            Target::Cut => self.cut.took.mul_f64(1.2),
            Target::Index => self.index.took.mul_f64(1.2),
        }
    }

    /// The overview `index` writes beside its source.
    pub fn overview(&self) -> PathBuf {
        PathBuf::from(format!("{}.overview.json", self.index_source.display()))
    }
}

fn reference(bin: &Path, args: Vec<String>, out: &Path) -> Result<Reference, String> {
    let took = run_alone(bin, &args, out)?;
    Ok(Reference {
        args,
        bytes: fs::read(out).map_err(|e| format!("{}: {e}", out.display()))?,
        took,
    })
}
