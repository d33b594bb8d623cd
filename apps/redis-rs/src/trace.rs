//! The application's trace: with `SLOTSCOPE_APP_TRACE=FILE` in its environment (as
//! `tests/scenarios/app.py` and `apps/node/trace.mjs` take it), one JSON line per library event
//! is appended to FILE (`{"event": ..., "t_ms": ..., ...}`), to set a live run's timeline beside
//! a model's. Off without it.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::sync::{Mutex, OnceLock};

use serde_json::{Map, Value};

use crate::contract::now_ms;

fn file() -> Option<&'static Mutex<File>> {
    static FILE: OnceLock<Option<Mutex<File>>> = OnceLock::new();
    FILE.get_or_init(|| {
        let path = std::env::var_os("SLOTSCOPE_APP_TRACE")?;
        OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .ok()
            .map(Mutex::new)
    })
    .as_ref()
}

/// Whether events are traced.
pub fn tracing() -> bool {
    file().is_some()
}

/// Appends `event` with `fields` (an object) and the time (no-op unless tracing).
pub fn trace(event: &str, fields: Value) {
    let Some(file) = file() else {
        return;
    };
    let mut line = match fields {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    line.insert("event".into(), Value::from(event));
    line.insert("t_ms".into(), Value::from(now_ms()));
    if let Ok(mut f) = file.lock() {
        let _ = writeln!(f, "{}", Value::Object(line));
    }
}
