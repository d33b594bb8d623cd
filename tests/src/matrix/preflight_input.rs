//! What `slotscope preflight` is given in the pre-flight check (issue 25): the case's recording
//! cut where the change begins (the settled cluster before it, the application running), and the
//! plan the case then carried out, written as the plan a user writes.
//!
//! The plan's times are the harness's: each step at the moment it began, counted from the first;
//! a move at the rate its slots went (slots ÷ the time the move took); a stall for its drawn
//! length; a kill; an automatic failover after a kill with the servers' `cluster-node-timeout`
//! (the plan's own election time added by `preflight`); a manual failover. A case whose fault
//! is not a planned change (the application's connections killed) has no plan.

use std::fs::File;
use std::io::{BufReader, BufWriter, Write as _};
use std::path::Path;

use serde_json::{json, Value};
use slotscope_core::reader::RecordingReader;
use slotscope_core::recording::Line;

use crate::matrix::case::{Case, Fault};
use crate::matrix::fault::{FAULT_NODE, FAULT_REPLICA};
use crate::matrix::live::LiveRun;
use crate::matrix::migration::{SOURCE, TARGET};
use crate::server::NODE_TIMEOUT_MS;

/// The plan of a case, with the moment it starts.
#[derive(Clone, Debug, PartialEq)]
pub struct CasePlan {
    /// The plan as JSON.
    pub plan: Value,
    /// When its first step began, epoch ms.
    pub origin_ms: u64,
    /// When its last step ended, epoch ms.
    pub last_end_ms: u64,
}

/// The plan `case` carried out in `live`.
///
/// # Errors
///
/// A fault that is not a planned change, or a run without the nodes or the steps it needs.
pub fn case_plan(case: &Case, live: &LiveRun) -> Result<CasePlan, String> {
    if case.fault == Fault::KillClients {
        return Err("the application's connections killed is no planned change".into());
    }
    let node = |i: usize| {
        live.nodes
            .get(i)
            .cloned()
            .ok_or_else(|| format!("the run holds no address of node {i}"))
    };
    let app_started = live
        .events
        .iter()
        .find(|e| e.what.starts_with("application started"))
        .map(|e| e.at_ms)
        .ok_or("the run holds no application start")?;
    let changes: Vec<_> = live
        .events
        .iter()
        .filter(|e| e.began_ms >= app_started && !e.what.starts_with("application started"))
        .filter(|e| !e.what.starts_with("companion started"))
        .collect();
    let origin_ms = changes
        .iter()
        .map(|e| e.began_ms)
        .min()
        .ok_or("the run made no change after the application started")?;
    let last_end_ms = changes.iter().map(|e| e.at_ms).max().unwrap_or(origin_ms);
    let at = |ms: u64| format!("{}ms", ms - origin_ms);
    let mut steps = Vec::new();
    for e in changes {
        let is_fault = live.fault_started_ms == Some(e.began_ms) && !e.what.starts_with("slots ");
        if !is_fault {
            // `slots 300-399 moved from node 2 to node 3`
            let range = e
                .what
                .split_whitespace()
                .nth(1)
                .ok_or_else(|| format!("no slots in {:?}", e.what))?;
            let (a, b) = range.split_once('-').unwrap_or((range, range));
            let count = b.parse::<u64>().unwrap_or(0) - a.parse::<u64>().unwrap_or(0) + 1;
            let took = (e.at_ms - e.began_ms).max(1);
            let rate = (count * 1000).div_ceil(took).max(1);
            steps.push(json!({"at": at(e.began_ms), "move": {
                "slots": range, "from": node(SOURCE)?, "to": node(TARGET)?,
                "rate": format!("{rate}/s")}}));
            continue;
        }
        let n0 = node(FAULT_NODE)?;
        let step = match case.fault {
            Fault::Stall(ms) => json!({"at": at(e.began_ms),
                "stall": {"node": n0, "for": format!("{ms}ms")}}),
            Fault::KillNode => json!({"at": at(e.began_ms), "kill": n0}),
            Fault::Failover => json!({"at": at(e.began_ms), "failover": {
                "replica_of": n0, "after_kill": true,
                "node_timeout": format!("{NODE_TIMEOUT_MS}ms")}}),
            Fault::ManualFailover(_) => {
                node(FAULT_REPLICA)?;
                json!({"at": at(e.began_ms), "failover": {"replica_of": n0}})
            }
            Fault::None | Fault::KillClients => continue,
        };
        steps.push(step);
    }
    Ok(CasePlan {
        plan: json!({ "steps": steps }),
        origin_ms,
        last_end_ms,
    })
}

/// Writes the lines of the recording `full` from before `before_ms` (epoch ms) to `out` (plain
/// JSON Lines): the recording an always-on recorder holds when the change begins.
///
/// # Errors
///
/// If the recording cannot be read or the cut written.
pub fn cut_before(full: &Path, before_ms: u64, out: &Path) -> Result<(), String> {
    let file = File::open(full).map_err(|e| format!("{}: {e}", full.display()))?;
    let mut reader = RecordingReader::detect(BufReader::new(file)).map_err(|e| format!("{e}"))?;
    let header = reader.header().map_err(|e| format!("{e}"))?.clone();
    let mut w = BufWriter::new(File::create(out).map_err(|e| format!("{}: {e}", out.display()))?);
    let put = |w: &mut BufWriter<File>, v: &Value| writeln!(w, "{v}").map_err(|e| e.to_string());
    let mut head = serde_json::to_value(&header).map_err(|e| e.to_string())?;
    head["type"] = json!("header");
    put(&mut w, &head)?;
    for item in reader.by_ref() {
        let (_, line) = item.map_err(|e| format!("{}: {e}", full.display()))?;
        if line.time().0 >= before_ms {
            break;
        }
        if matches!(line, Line::End(_)) {
            continue;
        }
        put(
            &mut w,
            &serde_json::to_value(&line).map_err(|e| e.to_string())?,
        )?;
    }
    w.flush().map_err(|e| e.to_string())
}
