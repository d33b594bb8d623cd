//! The entry points of the lazily fetched wasm module (feature `module`).
//!
//! The module reads one recording at a time. [`open`] starts a read and returns its id; every
//! other call names that id and is refused once a newer read started, so a load the viewer has
//! given up cannot step the next one. A read goes through [`read`] (lines, in steps), then
//! [`finish`] (the tracks and the analysis, in steps), then [`result`] (the [`Parcel`], once);
//! [`preview`] packs the part read so far while lines are still being read. After the result the
//! per-node metrics stay here to answer [`deltas`].

use std::cell::RefCell;

use js_sys::{Array, Float32Array, Uint32Array};
use slotscope_core::metrics::Metrics;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::JsValue;

use crate::delta;
use crate::parcel::{Parcel, Read};
use crate::parser::{Finisher, Parser, Step};

/// What [`read`] and [`finish`] return when their stage is over.
pub const DONE: f64 = -1.0;

/// Where the current read is.
enum Stage {
    /// Nothing opened yet.
    Idle,
    /// Reading lines.
    Reading(Box<Parser>),
    /// Every line read: finishing the tracks and the analysis.
    Finishing(Box<Finisher>),
    /// Finished: the result until it is taken, and the metrics for the deltas.
    Done(Option<Box<Read>>, Metrics),
}

struct Current {
    id: u32,
    stage: Stage,
}

thread_local! {
    static CURRENT: RefCell<Current> = const { RefCell::new(Current { id: 0, stage: Stage::Idle }) };
}

/// Runs `f` on the current read if it is read `id`.
fn with<T>(id: u32, f: impl FnOnce(&mut Stage) -> Result<T, String>) -> Result<T, String> {
    CURRENT.with(|c| {
        let mut c = c.borrow_mut();
        if c.id != id {
            return Err(format!("read {id} was superseded by read {}", c.id));
        }
        f(&mut c.stage)
    })
}

/// Starts reading the recording in `bytes` (plain JSON Lines or zstd): reads its header and
/// returns the read's id, or throws why it is not a recording.
#[wasm_bindgen]
pub fn open(bytes: Vec<u8>) -> Result<u32, String> {
    CURRENT.with(|c| {
        let mut c = c.borrow_mut();
        c.id = c.id.wrapping_add(1);
        // The read before is dropped first: its memory is what this one needs.
        c.stage = Stage::Idle;
        let parser = Parser::new(bytes).map_err(|e| e.message)?;
        c.stage = Stage::Reading(Box::new(parser));
        Ok(c.id)
    })
}

/// Reads up to `max_lines` more lines of read `id`: the share of the bytes read so far, or
/// [`DONE`] when every line is read (the read then finishes). Throws the first bad line.
#[wasm_bindgen]
pub fn read(id: u32, max_lines: usize) -> Result<f64, String> {
    with(id, |stage| {
        let Stage::Reading(parser) = stage else {
            return Ok(DONE);
        };
        match parser.step(max_lines).map_err(|e| e.message)? {
            Step::Progress(share) => Ok(share),
            Step::Done => {
                let Stage::Reading(parser) = std::mem::replace(stage, Stage::Idle) else {
                    unreachable!("matched above");
                };
                *stage = Stage::Finishing(Box::new(parser.finishing()));
                Ok(DONE)
            }
        }
    })
}

/// [`Parcel`] as the module hands it out: `[head, values, lengths]`.
fn packed(read: Read) -> Result<Array, String> {
    let p = Parcel::of(read)?;
    Ok(Array::of3(
        &JsValue::from_str(&p.head),
        &Float32Array::from(&p.values[..]),
        &Uint32Array::from(&p.lengths[..]),
    ))
}

/// The part of read `id` read so far, packed (see [`Parcel`]): `[head, values, lengths]`.
#[wasm_bindgen]
pub fn preview(id: u32) -> Result<Array, String> {
    with(id, |stage| match stage {
        Stage::Reading(parser) => packed(parser.preview()),
        _ => Err("the preview is of a read still reading lines".to_owned()),
    })
}

/// Runs the next step of finishing read `id`: the share of steps done, or [`DONE`].
#[wasm_bindgen]
pub fn finish(id: u32) -> Result<f64, String> {
    with(id, |stage| match stage {
        Stage::Finishing(finisher) => match finisher.step() {
            Step::Progress(share) => Ok(share),
            Step::Done => {
                let Stage::Finishing(finisher) = std::mem::replace(stage, Stage::Idle) else {
                    unreachable!("matched above");
                };
                let (read, metrics) = finisher.done();
                *stage = Stage::Done(Some(Box::new(read)), metrics);
                Ok(DONE)
            }
        },
        Stage::Done(..) => Ok(DONE),
        _ => Err("the read is not finishing: its lines are not all read".to_owned()),
    })
}

/// What read `id` shows, packed (see [`Parcel`]): `[head, values, lengths]`. Given once.
#[wasm_bindgen]
pub fn result(id: u32) -> Result<Array, String> {
    with(id, |stage| match stage {
        Stage::Done(read, _) => packed(*read.take().ok_or("the result was already taken")?),
        _ => Err("the read is not finished".to_owned()),
    })
}

/// The deltas of read `id` over `[start, end]` (epoch milliseconds), as JSON [`delta::Deltas`].
#[wasm_bindgen]
pub fn deltas(id: u32, start: f64, end: f64) -> Result<String, String> {
    let ms = |v: f64| -> u64 {
        // Whole milliseconds since the epoch, far inside f64's exact integers.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let v = v.max(0.0) as u64;
        v
    };
    with(id, |stage| match stage {
        Stage::Done(_, metrics) => {
            serde_json::to_string(&delta::over(metrics, (ms(start), ms(end))))
                .map_err(|e| e.to_string())
        }
        _ => Err("the read is not finished".to_owned()),
    })
}
