//! The reader module (`slotscope-reader`, built with its `module` feature into `reader/` beside
//! the viewer) as the viewer calls it: one read of a recording, in steps, in the module's worker
//! (`reader/worker.js`), so that the page answers while a day-long recording is read.

use std::rc::Rc;

use slotscope_reader::{Deltas, Parcel, Read, DONE};
use wasm_bindgen::{JsCast, JsValue};

use crate::worker::Worker;

/// Where the reader module's worker script is, relative to the page.
pub const WORKER_URL: &str = "reader/worker.js";

/// Starts the reader module's worker, so that the module comes while the recording does.
pub fn prefetch() -> Worker {
    Worker::start(WORKER_URL)
}

/// One read, in the reader module's worker.
#[derive(Debug)]
pub struct Reader {
    worker: Worker,
    id: u32,
}

fn share(v: &JsValue) -> Result<Option<f64>, String> {
    let v = v.as_f64().ok_or("the reader module returned no number")?;
    Ok((v > DONE).then_some(v))
}

/// `v` as a `u32`, when it is one.
fn whole(v: f64) -> Option<u32> {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // kept only when in range
    ((0.0..=f64::from(u32::MAX)).contains(&v) && v.fract() == 0.0).then_some(v as u32)
}

impl Reader {
    /// Starts reading `bytes` in `worker` (from [`prefetch`]); the bytes are copied once, into
    /// the worker.
    pub async fn open(worker: Worker, bytes: &[u8]) -> Result<Reader, String> {
        let copy = js_sys::Uint8Array::from(bytes);
        let id = worker
            .call("open", &[copy.clone().into()], &[copy.buffer().into()])
            .await?;
        let id = id
            .as_f64()
            .and_then(whole)
            .ok_or("the reader module returned no read id")?;
        Ok(Reader { worker, id })
    }

    /// Reads up to `max_lines` more lines: the share of bytes read, or `None` when every line is.
    pub async fn read(&self, max_lines: u32) -> Result<Option<f64>, String> {
        share(
            &self
                .worker
                .call("read", &[self.id.into(), max_lines.into()], &[])
                .await?,
        )
    }

    /// The part read so far.
    pub async fn preview(&self) -> Result<Read, String> {
        unpack(&self.worker.call("preview", &[self.id.into()], &[]).await?)
    }

    /// Runs a step of finishing: the share of steps done, or `None` when finished.
    pub async fn finish(&self) -> Result<Option<f64>, String> {
        share(&self.worker.call("finish", &[self.id.into()], &[]).await?)
    }

    /// What the recording shows (once it is finished; given once).
    pub async fn result(&self) -> Result<Read, String> {
        unpack(&self.worker.call("result", &[self.id.into()], &[]).await?)
    }

    /// The counter deltas over `[start, end]` (epoch milliseconds); none when the module cannot
    /// say (a newer read finished since, whose dataset replaced this one's).
    pub async fn deltas(&self, (start, end): (u64, u64)) -> Deltas {
        let (a, b) = (
            slotscope_core::float::from_u64(start),
            slotscope_core::float::from_u64(end),
        );
        self.worker
            .call("deltas", &[self.id.into(), a.into(), b.into()], &[])
            .await
            .ok()
            .and_then(|v| v.as_string())
            .and_then(|json| serde_json::from_slice(json.as_bytes()).ok())
            .unwrap_or_default()
    }
}

/// A [`Parcel`] as the module hands it out, `[head, values, lengths]`, opened.
fn unpack(v: &JsValue) -> Result<Read, String> {
    let parts: &js_sys::Array = v.dyn_ref().ok_or("the reader module returned no parcel")?;
    let head = parts
        .get(0)
        .as_string()
        .ok_or("the reader module's parcel has no head")?;
    let values: js_sys::Float32Array = parts
        .get(1)
        .dyn_into()
        .map_err(|_| "the reader module's parcel has no values")?;
    let lengths: js_sys::Uint32Array = parts
        .get(2)
        .dyn_into()
        .map_err(|_| "the reader module's parcel has no lengths")?;
    Parcel {
        head,
        values: values.to_vec(),
        lengths: lengths.to_vec(),
    }
    .open()
}

/// Where a dataset's deltas over a selection come from.
#[derive(Clone, Debug, Default)]
pub enum DeltaSource {
    /// Nowhere: an overview, or a preview of a recording still loading.
    #[default]
    None,
    /// The read in the reader module that made it.
    Module(Rc<Reader>),
    /// Its metrics, in process (native builds: the tests).
    #[cfg(not(target_arch = "wasm32"))]
    Metrics(Rc<slotscope_core::metrics::Metrics>),
}

impl DeltaSource {
    /// The counter deltas over `window` (epoch milliseconds).
    pub async fn over(&self, window: (u64, u64)) -> Deltas {
        match self {
            DeltaSource::None => Deltas::default(),
            DeltaSource::Module(r) => r.deltas(window).await,
            #[cfg(not(target_arch = "wasm32"))]
            DeltaSource::Metrics(m) => slotscope_reader::delta::over(m, window),
        }
    }
}
