//! The reader module (`slotscope-reader`, built with its `module` feature into `reader/` beside
//! the viewer) as the viewer calls it: one read of a recording, in steps.

use std::rc::Rc;

use slotscope_reader::{Deltas, Parcel, Read, DONE};
use wasm_bindgen::{JsCast, JsValue};

use crate::module::{self, Module};

/// Where the reader module's JavaScript is, relative to the page.
pub const MODULE_URL: &str = "reader/slotscope_reader.js";

/// Starts fetching the reader module, so that it comes while the recording does.
pub fn prefetch() -> js_sys::Promise {
    module::start(MODULE_URL)
}

/// One read, in the reader module.
#[derive(Debug)]
pub struct Reader {
    module: Module,
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
    /// Starts reading `bytes` in the module that `fetching` (from [`prefetch`]) resolves to.
    pub async fn open(fetching: js_sys::Promise, bytes: &[u8]) -> Result<Reader, String> {
        let module = Module::of(MODULE_URL, fetching).await?;
        let id = module.call("open", &[js_sys::Uint8Array::from(bytes).into()])?;
        let id = id
            .as_f64()
            .and_then(whole)
            .ok_or("the reader module returned no read id")?;
        Ok(Reader { module, id })
    }

    /// Reads up to `max_lines` more lines: the share of bytes read, or `None` when every line is.
    pub fn read(&self, max_lines: u32) -> Result<Option<f64>, String> {
        share(
            &self
                .module
                .call("read", &[self.id.into(), max_lines.into()])?,
        )
    }

    /// The part read so far.
    pub fn preview(&self) -> Result<Read, String> {
        unpack(&self.module.call("preview", &[self.id.into()])?)
    }

    /// Runs a step of finishing: the share of steps done, or `None` when finished.
    pub fn finish(&self) -> Result<Option<f64>, String> {
        share(&self.module.call("finish", &[self.id.into()])?)
    }

    /// What the recording shows (once it is finished; given once).
    pub fn result(&self) -> Result<Read, String> {
        unpack(&self.module.call("result", &[self.id.into()])?)
    }

    /// The counter deltas over `[start, end]` (epoch milliseconds); none when the module cannot
    /// say (a newer read finished since, whose dataset replaced this one's).
    pub fn deltas(&self, (start, end): (u64, u64)) -> Deltas {
        let (a, b) = (
            slotscope_core::float::from_u64(start),
            slotscope_core::float::from_u64(end),
        );
        self.module
            .call("deltas", &[self.id.into(), a.into(), b.into()])
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
    pub fn over(&self, window: (u64, u64)) -> Deltas {
        match self {
            DeltaSource::None => Deltas::default(),
            DeltaSource::Module(r) => r.deltas(window),
            #[cfg(not(target_arch = "wasm32"))]
            DeltaSource::Metrics(m) => slotscope_reader::delta::over(m, window),
        }
    }
}
