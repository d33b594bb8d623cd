//! The entry points of the lazily fetched wasm module (feature `module`).
//!
//! The module reads one recording at a time. [`open`] starts a read and returns its id; every
//! other call names that id and is refused once a newer read started, so a load the viewer has
//! given up cannot step the next one. A read goes through [`read`] (lines, in steps), then
//! [`finish`] (the tracks and the analysis, in steps), then [`result`] (the [`Parcel`], once);
//! [`preview`] packs the part read so far while lines are still being read.
//!
//! A zstd recording can be decoded in another instance of the module (another worker) while
//! this one reads: [`decode_open`] and [`decode_next`] there give chunks of whole lines, which
//! [`open_fed`] and [`feed`] take in here; [`read`] then says when it has read all it was fed.
//!
//! The per-node metrics of the last read finished stay here to answer [`deltas`]: that read is
//! the one the viewer shows until a newer one finishes (a newer one that fails, or is still
//! reading, leaves it shown).

use std::cell::RefCell;

use js_sys::{Array, Float32Array, Uint32Array, Uint8Array};
use slotscope_core::metrics::Metrics;
use slotscope_core::reader::{Chunk, ChunkEnd, LineChunks};
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::JsValue;

use crate::delta;
use crate::parcel::{Parcel, Read};
use crate::parser::{Finisher, Parser, Step};
use crate::{DONE, STARVED};

/// The heap grown ahead in doublings: the reads allocate hundreds of MiB, and each small grow
/// of the wasm memory costs the engine a fraction of a millisecond (see [`slotscope_core::heap`]).
#[cfg(target_arch = "wasm32")]
#[global_allocator]
static HEAP: slotscope_core::heap::AheadHeap = slotscope_core::heap::AheadHeap;

/// Where the current read is.
enum Stage {
    /// Nothing opened yet.
    Idle,
    /// Reading lines.
    Reading(Box<Parser>),
    /// Every line read: finishing the tracks and the analysis.
    Finishing(Box<Finisher>),
    /// Finished: the result until it is taken.
    Done(Option<Box<Read>>),
}

/// The newest read, and the last one finished.
struct Reads {
    /// The newest read's id.
    id: u32,
    /// Where the newest read is.
    stage: Stage,
    /// The last read finished, by id, with its per-node metrics (for the deltas).
    shown: Option<(u32, Metrics)>,
}

thread_local! {
    static READS: RefCell<Reads> = const {
        RefCell::new(Reads { id: 0, stage: Stage::Idle, shown: None })
    };
    /// The newest decoding (its id) in this instance, when it decodes for another.
    static DECODING: RefCell<(u32, Option<LineChunks>)> = const { RefCell::new((0, None)) };
}

/// Runs `f` on the reads if read `id` is the newest.
fn with<T>(id: u32, f: impl FnOnce(&mut Reads) -> Result<T, String>) -> Result<T, String> {
    READS.with(|r| {
        let mut r = r.borrow_mut();
        if r.id != id {
            return Err(format!("read {id} was superseded by read {}", r.id));
        }
        f(&mut r)
    })
}

/// Starts reading the recording in `bytes` (plain JSON Lines or zstd): reads its header and
/// returns the read's id, or throws why it is not a recording.
#[wasm_bindgen]
pub fn open(bytes: Vec<u8>) -> Result<u32, String> {
    READS.with(|r| {
        let mut r = r.borrow_mut();
        r.id = r.id.wrapping_add(1);
        // A read under way is dropped first: its memory is what this one needs.
        r.stage = Stage::Idle;
        let parser = Parser::new(bytes).map_err(|e| e.message)?;
        r.stage = Stage::Reading(Box::new(parser));
        Ok(r.id)
    })
}

/// Starts decoding the zstd recording in `bytes` for a read in another instance: returns the
/// decoding's id for [`decode_next`]. A newer decoding ends the one before.
#[wasm_bindgen]
pub fn decode_open(bytes: Vec<u8>) -> u32 {
    DECODING.with(|d| {
        let mut d = d.borrow_mut();
        d.0 = d.0.wrapping_add(1);
        d.1 = Some(LineChunks::new(bytes));
        d.0
    })
}

/// The next chunk of decoding `id`, of about `max_bytes` (see [`LineChunks::next_chunk`]):
/// `[text, length, end, message, consumed]`. The text is copied into `into` when it fits there
/// (a buffer handed back by the reading, so that a day's text does not make hundreds of new
/// buffers for the garbage collector), else into a new array; `length` is how much of it is the
/// chunk's. `end` is 0 when more follow, 1 at the end, 2 when the zstd was cut short and 3 when
/// it is damaged (`message` then says how), `consumed` the compressed bytes decoded so far.
#[wasm_bindgen]
pub fn decode_next(id: u32, max_bytes: usize, into: Option<Uint8Array>) -> Result<Array, String> {
    DECODING.with(|d| {
        let mut d = d.borrow_mut();
        if d.0 != id {
            return Err(format!("decoding {id} was superseded by decoding {}", d.0));
        }
        let chunks = d.1.as_mut().ok_or("nothing is being decoded")?;
        let chunk = chunks.next_chunk(max_bytes);
        let (end, message) = match chunk.end {
            ChunkEnd::More => (0, String::new()),
            ChunkEnd::Eof => (1, String::new()),
            ChunkEnd::Cut(m) => (2, m),
            ChunkEnd::Failed(m) => (3, m),
        };
        if end != 0 {
            d.1 = None;
        }
        let len = u32::try_from(chunk.text.len()).map_err(|_| "a chunk over 4 GiB")?;
        let text = match into.filter(|b| b.length() >= len) {
            Some(buffer) => {
                buffer.subarray(0, len).copy_from(&chunk.text);
                buffer
            }
            None => Uint8Array::from(&chunk.text[..]),
        };
        let parts = Array::of3(&text.into(), &JsValue::from(len), &JsValue::from(end));
        parts.push(&JsValue::from_str(&message));
        parts.push(&JsValue::from(slotscope_core::float::from_u64(
            chunk.consumed,
        )));
        Ok(parts)
    })
}

/// A chunk as [`decode_next`] hands it out.
fn chunk(text: Vec<u8>, end: u32, message: String, consumed: f64) -> Result<Chunk, String> {
    let end = match end {
        0 => ChunkEnd::More,
        1 => ChunkEnd::Eof,
        2 => ChunkEnd::Cut(message),
        3 => ChunkEnd::Failed(message),
        other => return Err(format!("a chunk cannot end in {other}")),
    };
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // a byte count
    let consumed = consumed.max(0.0) as u64;
    Ok(Chunk {
        text,
        end,
        consumed,
    })
}

/// Starts reading a zstd recording of `total` compressed bytes that another instance decodes
/// ([`decode_next`]), from its first chunk: returns the read's id, or throws why it is not a
/// recording. The chunks after come through [`feed`].
#[wasm_bindgen]
pub fn open_fed(
    total: f64,
    text: Vec<u8>,
    end: u32,
    message: String,
    consumed: f64,
) -> Result<u32, String> {
    let first = chunk(text, end, message, consumed)?;
    READS.with(|r| {
        let mut r = r.borrow_mut();
        r.id = r.id.wrapping_add(1);
        r.stage = Stage::Idle;
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // a byte count
        let total = total.max(0.0) as u64;
        let parser = Parser::fed(total, first).map_err(|e| e.message)?;
        r.stage = Stage::Reading(Box::new(parser));
        Ok(r.id)
    })
}

/// Feeds read `id` (from [`open_fed`]) its next chunk, as [`decode_next`] gave it.
#[wasm_bindgen]
pub fn feed(
    id: u32,
    text: Vec<u8>,
    end: u32,
    message: String,
    consumed: f64,
) -> Result<(), String> {
    let chunk = chunk(text, end, message, consumed)?;
    with(id, |r| {
        if let Stage::Reading(parser) = &mut r.stage {
            parser.feed(chunk);
        }
        Ok(())
    })
}

/// The chunks fed to read `id` and not yet read.
#[wasm_bindgen]
pub fn queued(id: u32) -> Result<usize, String> {
    with(id, |r| match &mut r.stage {
        Stage::Reading(parser) => Ok(parser.queued()),
        _ => Ok(0),
    })
}

/// Reads up to `max_lines` more lines of read `id`: the share of the bytes read so far, or
/// [`DONE`] when every line is read (the read then finishes), or [`STARVED`] when a read fed
/// in chunks has read every one fed so far. Throws the first bad line.
#[wasm_bindgen]
pub fn read(id: u32, max_lines: usize) -> Result<f64, String> {
    with(id, |r| {
        let Stage::Reading(parser) = &mut r.stage else {
            return Ok(DONE);
        };
        match parser.step(max_lines).map_err(|e| e.message)? {
            Step::Progress(share) => Ok(share),
            Step::Starved => Ok(STARVED),
            Step::Done => {
                let Stage::Reading(parser) = std::mem::replace(&mut r.stage, Stage::Idle) else {
                    unreachable!("matched above");
                };
                r.stage = Stage::Finishing(Box::new(parser.finishing()));
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
    with(id, |r| match &r.stage {
        Stage::Reading(parser) => packed(parser.preview()),
        _ => Err("the preview is of a read still reading lines".to_owned()),
    })
}

/// Runs the next step of finishing read `id`: the share of steps done, or [`DONE`].
#[wasm_bindgen]
pub fn finish(id: u32) -> Result<f64, String> {
    with(id, |r| match &mut r.stage {
        Stage::Finishing(finisher) => match finisher.step() {
            Step::Progress(share) => Ok(share),
            Step::Starved => Err("finishing waits for nothing".to_owned()),
            Step::Done => {
                let Stage::Finishing(finisher) = std::mem::replace(&mut r.stage, Stage::Idle)
                else {
                    unreachable!("matched above");
                };
                let (read, metrics) = finisher.done();
                r.stage = Stage::Done(Some(Box::new(read)));
                r.shown = Some((id, metrics));
                Ok(DONE)
            }
        },
        Stage::Done(_) => Ok(DONE),
        _ => Err("the read is not finishing: its lines are not all read".to_owned()),
    })
}

/// What read `id` shows, packed (see [`Parcel`]): `[head, values, lengths]`. Given once.
#[wasm_bindgen]
pub fn result(id: u32) -> Result<Array, String> {
    with(id, |r| match &mut r.stage {
        Stage::Done(read) => packed(*read.take().ok_or("the result was already taken")?),
        _ => Err("the read is not finished".to_owned()),
    })
}

/// The deltas of read `id` over `[start, end]` (epoch milliseconds), as JSON [`delta::Deltas`];
/// read `id` must be the last one finished.
#[wasm_bindgen]
pub fn deltas(id: u32, start: f64, end: f64) -> Result<String, String> {
    let ms = |v: f64| -> u64 {
        // Whole milliseconds since the epoch, far inside f64's exact integers.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let v = v.max(0.0) as u64;
        v
    };
    READS.with(|r| match &r.borrow().shown {
        Some((shown, metrics)) if *shown == id => {
            serde_json::to_string(&delta::over(metrics, (ms(start), ms(end))))
                .map_err(|e| e.to_string())
        }
        _ => Err(format!("read {id} is not the last one finished")),
    })
}
