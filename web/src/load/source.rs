//! Where a recording comes from, and its bytes: fetched from a URL or read from a local file.

use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use crate::js_error;

/// Where a recording comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// A URL (relative to the page or absolute).
    Url(String),
    /// A local file (picker or drop).
    File(web_sys::File),
}

impl Source {
    /// The name shown for it: the URL, or the file's name.
    pub fn name(&self) -> String {
        match self {
            Source::Url(u) => u.clone(),
            Source::File(f) => f.name(),
        }
    }

    /// The URL it can be loaded from again (`None` for a local file).
    pub fn url(&self) -> Option<String> {
        match self {
            Source::Url(u) => Some(u.clone()),
            Source::File(_) => None,
        }
    }

    /// All of its bytes, or why they could not be had.
    pub async fn bytes(&self) -> Result<Vec<u8>, String> {
        match self {
            Source::Url(u) => fetch(u).await,
            Source::File(f) => read_file(f).await,
        }
    }
}

async fn fetch(url: &str) -> Result<Vec<u8>, String> {
    let window = web_sys::window().ok_or("no window")?;
    let resp = JsFuture::from(window.fetch_with_str(url))
        .await
        .map_err(|e| js_error::text(&e))?;
    let resp: web_sys::Response = resp.dyn_into().map_err(|e| js_error::text(&e))?;
    if !resp.ok() {
        return Err(format!("HTTP {} {}", resp.status(), resp.status_text()));
    }
    let buf = JsFuture::from(resp.array_buffer().map_err(|e| js_error::text(&e))?)
        .await
        .map_err(|e| js_error::text(&e))?;
    Ok(js_sys::Uint8Array::new(&buf).to_vec())
}

async fn read_file(file: &web_sys::File) -> Result<Vec<u8>, String> {
    let buf = JsFuture::from(file.array_buffer())
        .await
        .map_err(|e| js_error::text(&e))?;
    Ok(js_sys::Uint8Array::new(&buf).to_vec())
}
