//! Where a recording comes from, and its bytes: fetched from a URL or read from a local file.

use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use slotscope_core::overview::SUFFIX;

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

    /// The overview written beside a served recording (`slotscope index`), if the server has
    /// one: `slotscope serve` answers 204 when there is none.
    pub async fn overview(&self) -> Option<Vec<u8>> {
        let Source::Url(u) = self else {
            return None;
        };
        let (path, query) = u.split_at(u.find(['?', '#']).unwrap_or(u.len()));
        fetch(&format!("{path}{SUFFIX}{query}")).await.ok()
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
    if resp.status() == 204 {
        return Err("no content (HTTP 204)".to_owned());
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
