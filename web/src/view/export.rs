//! The export buttons: the Markdown report with a PNG of each track of the window shown, and the
//! visible series as CSV ([`crate::report`]), saved by the browser as downloads.

use wasm_bindgen::JsCast;
use web_sys::{HtmlAnchorElement, HtmlCanvasElement};
use yew::prelude::*;

use crate::dataset::Shared;
use crate::draw::TrackKind;
use crate::report;

/// Properties of [`ExportButtons`].
#[derive(Clone, PartialEq, Properties)]
pub struct ExportProps {
    /// The loaded recording.
    pub data: Shared,
    /// The window shown.
    pub window: (u64, u64),
    /// Local time offset in minutes, `None` for UTC.
    pub offset: Option<i32>,
    /// The reader's notes.
    pub notes: Vec<(u64, String)>,
}

/// Saves `href` (a data or object URL) as `name`.
fn save(href: &str, name: &str) -> Result<(), String> {
    let document = web_sys::window()
        .and_then(|w| w.document())
        .ok_or("no document")?;
    let a: HtmlAnchorElement = document
        .create_element("a")
        .map_err(|e| crate::js_error::text(&e))?
        .dyn_into()
        .map_err(|_| "not an anchor".to_owned())?;
    a.set_href(href);
    a.set_download(name);
    a.click();
    Ok(())
}

/// Saves `text` as `name` (of MIME type `mime`).
fn save_text(text: &str, name: &str, mime: &str) -> Result<(), String> {
    let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(text));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options)
        .map_err(|e| crate::js_error::text(&e))?;
    let url =
        web_sys::Url::create_object_url_with_blob(&blob).map_err(|e| crate::js_error::text(&e))?;
    let saved = save(&url, name);
    // The download has its copy once the click is handled.
    let revoke = url.clone();
    gloo_timers::callback::Timeout::new(10_000, move || {
        let _ = web_sys::Url::revoke_object_url(&revoke);
    })
    .forget();
    saved
}

/// The tracks drawn now, as `(kind, PNG data URL)`.
fn track_images() -> Vec<(TrackKind, String)> {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return Vec::new();
    };
    TrackKind::ALL
        .iter()
        .filter_map(|&kind| {
            let canvas: HtmlCanvasElement = document
                .query_selector(&format!("#tracks canvas[data-track=\"{}\"]", kind.name()))
                .ok()
                .flatten()?
                .dyn_into()
                .ok()?;
            Some((kind, canvas.to_data_url().ok()?))
        })
        .collect()
}

/// The export buttons.
#[function_component(ExportButtons)]
pub fn export_buttons(props: &ExportProps) -> Html {
    let status = use_state(String::new);
    let on_report = {
        let (data, window, offset, status) = (
            props.data.clone(),
            props.window,
            props.offset,
            status.clone(),
        );
        let notes = props.notes.clone();
        Callback::from(move |_: MouseEvent| {
            let stem = report::file_stem(&data.name);
            let images = track_images();
            let kinds: Vec<TrackKind> = images.iter().map(|(k, _)| *k).collect();
            let md = report::markdown(&data, window, offset, &kinds, &notes);
            let mut result = save_text(&md, &format!("{stem}-report.md"), "text/markdown");
            for (kind, url) in &images {
                result = result.and(save(url, &report::image_name(&stem, *kind)));
            }
            status.set(match result {
                Ok(()) => format!(
                    "saved {stem}-report.md and {} track images beside it",
                    images.len()
                ),
                Err(e) => format!("could not save the report: {e}"),
            });
        })
    };
    let on_csv = {
        let (data, window, status) = (props.data.clone(), props.window, status.clone());
        Callback::from(move |_: MouseEvent| {
            let stem = report::file_stem(&data.name);
            let name = format!("{stem}-window.csv");
            status.set(
                match save_text(&report::csv(&data, window), &name, "text/csv") {
                    Ok(()) => format!("saved {name}"),
                    Err(e) => format!("could not save the CSV: {e}"),
                },
            );
        })
    };
    html! {
        <span class="export">
            <button id="export-report" onclick={on_report}
                title="A Markdown report (story, findings, census) with a PNG of each track of the window shown">
                { "Export report" }
            </button>
            <button id="export-csv" onclick={on_csv} title="The series of the window shown, one row per time bucket">
                { "CSV" }
            </button>
            if !status.is_empty() {
                <span id="export-status" class="hint" role="status">{ (*status).clone() }</span>
            }
        </span>
    }
}
