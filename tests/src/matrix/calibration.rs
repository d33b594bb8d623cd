//! The library's own CPU costs, timed on the machine the cases run on and given to every replay
//! of them (`--set NAME=VALUE`), as the measured round trip is (`--rtt-ms`).
//!
//! A model that charges its client's own work (redis-py's: the `COMMAND` table and the slot cache
//! of each initialisation, a connection's handshake, a reply) carries costs timed on one machine
//! on one day; the matrix's machine runs faster or slower by more than the targets allow between
//! days, and within a day from one quarter of an hour to the next (the same script, the same
//! cluster: redis-py 5.0.0's slot cache 13.7-15.6 ms, then 9.1-9.5 ms in six runs forty minutes
//! later; docs/FIDELITY.md). So before each case of such a library the matrix starts a
//! throwaway cluster of the case's server, runs the library's timing script against it
//! (`tests/scenarios/cpu_cost.py` for redis-py, about 3 s; `apps/node/cpu-cost.mjs` for
//! node-redis, its rediscovery, and for ioredis, its refresh, about 1 s each) and gives the
//! figures to the case's replays; nothing of it reaches the case's cluster or recording. A
//! timing that fails leaves the model's own defaults, said in the case's events.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::cluster::{Cluster, ClusterOptions};
use crate::kind::ServerKind;
use crate::matrix::library::Library;
use crate::matrix::panic_payload::panic_text;
use crate::program::Program;

/// The timing script's bound.
const SCRIPT_LIMIT: Duration = Duration::from_secs(90);

/// The model options timed on this machine, `(name, value)` in the model's own units.
pub type MachineOptions = Vec<(String, String)>;

/// How a library's own costs are timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Timing {
    /// `tests/scenarios/<script>` in the virtualenv of redis-py `release`.
    Python {
        release: &'static str,
        script: &'static str,
    },
    /// `apps/node/cpu-cost.mjs <library>` (the library the Node.js apps pin).
    Node { library: &'static str },
}

/// How `library`'s costs are timed, if its model takes CPU costs.
fn timing(library: Library) -> Option<Timing> {
    match library {
        Library::RedisPy(release) => Some(Timing::Python {
            release,
            script: "cpu_cost.py",
        }),
        Library::NodeRedis | Library::Ioredis(_) => Some(Timing::Node {
            library: library.node_adapter(),
        }),
        _ => None,
    }
}

/// The options of `library`'s model timed now on this machine against a cluster of `server`;
/// empty when its model takes none.
///
/// # Errors
///
/// If the timing failed (the throwaway cluster or the script): the model's defaults stand.
pub fn machine_options(library: Library, server: ServerKind) -> Result<MachineOptions, String> {
    let Some(how) = timing(library) else {
        return Ok(Vec::new());
    };
    catch_unwind(AssertUnwindSafe(|| time(how, server))).map_err(|p| panic_text(p.as_ref()))?
}

/// Runs the timing `how` against a throwaway 3-master cluster of `server`.
fn time(how: Timing, server: ServerKind) -> Result<MachineOptions, String> {
    let root = crate::kind::workspace_root();
    if matches!(how, Timing::Node { .. }) && !root.join("apps/node/node_modules").is_dir() {
        return Err("apps/node is not built: run scripts/setup".to_owned());
    }
    let cluster = Cluster::start(server, 3, ClusterOptions::default());
    let port = cluster.addr(0).port().to_string();
    let (label, out) = match how {
        Timing::Python { release, script } => (
            script.to_owned(),
            crate::python::start_script(release, script, &[port], SCRIPT_LIMIT).wait(),
        ),
        Timing::Node { library } => {
            let mut command = Command::new("node");
            command
                .arg(root.join("apps/node/cpu-cost.mjs"))
                .arg(library)
                .arg(&port)
                .current_dir(&root);
            let label = format!("cpu-cost.mjs {library}");
            let out = Program::start(label.clone(), command, SCRIPT_LIMIT).wait();
            (label, out)
        }
    };
    drop(cluster);
    if !out.status.success() {
        return Err(format!("{label}: {}", out.stderr.trim()));
    }
    parse(out.stdout.lines().last().unwrap_or_default())
}

/// The script's JSON line (`{"name": number, …}`) as options.
fn parse(line: &str) -> Result<MachineOptions, String> {
    let v: Value = serde_json::from_str(line).map_err(|e| format!("not JSON ({e}): {line:?}"))?;
    let object = v
        .as_object()
        .ok_or_else(|| format!("not an object: {line:?}"))?;
    object
        .iter()
        .map(|(k, v)| match v.as_f64() {
            Some(x) if x.is_finite() && x >= 0.0 => Ok((k.clone(), x.to_string())),
            _ => Err(format!("{k} is not a duration: {v}")),
        })
        .collect()
}

/// `options` as the JSON object kept beside a case (`<seed>.live.json`).
pub fn to_json(options: &MachineOptions) -> Value {
    Value::Object(
        options
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect(),
    )
}

/// The options kept beside a case, read back (none from a case kept before they were).
pub fn from_json(v: &Value) -> MachineOptions {
    v.as_object()
        .map(|o| {
            o.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timing_line_reads_as_options_and_keeps_through_json() {
        let options = parse(r#"{"command_cpu_ms": 29.5, "reply_cpu_ms": 0.108}"#).unwrap();
        assert_eq!(
            options,
            [
                ("command_cpu_ms".to_owned(), "29.5".to_owned()),
                ("reply_cpu_ms".to_owned(), "0.108".to_owned())
            ]
        );
        assert_eq!(from_json(&to_json(&options)), options);
        assert_eq!(from_json(&Value::Null), MachineOptions::new());
        assert!(parse(r#"{"command_cpu_ms": -1}"#).is_err());
        assert!(parse(r#"{"command_cpu_ms": "fast"}"#).is_err());
        assert!(parse("COMMAND took 30 ms").is_err());
    }

    #[test]
    fn only_a_library_whose_model_takes_costs_is_timed() {
        assert_eq!(timing(Library::GoRedis), None);
        assert_eq!(
            timing(Library::Ioredis("6.0.0")),
            Some(Timing::Node { library: "ioredis" })
        );
        assert_eq!(
            timing(Library::Ioredis("5.4.1")),
            Some(Timing::Node {
                library: "ioredis@5.4.1"
            })
        );
        assert_eq!(
            machine_options(Library::Jedis, ServerKind::Redis),
            Ok(Vec::new())
        );
        assert_eq!(
            timing(Library::RedisPy("8.1.0")),
            Some(Timing::Python {
                release: "8.1.0",
                script: "cpu_cost.py"
            })
        );
        assert_eq!(
            timing(Library::NodeRedis),
            Some(Timing::Node {
                library: "node-redis"
            })
        );
    }
}
