//! Loading: the file picker, the demo buttons, the status line and the recording's name.

use wasm_bindgen::JsCast;
use yew::prelude::*;

use crate::load::{Source, Status};

/// The demo recordings shipped with the viewer: `(button id, label, URL)`.
pub const DEMOS: [(&str, &str, &str); 2] = [
    (
        "demo-1",
        "Demo: incident 1 (wedged client)",
        "demo/incident1.jsonl.zst",
    ),
    (
        "demo-2",
        "Demo: incident 2 (MOVED storm)",
        "demo/incident2.jsonl.zst",
    ),
];

/// Properties of [`Loader`].
#[derive(Clone, PartialEq, Properties)]
pub struct LoaderProps {
    /// Called with what to load.
    pub on_load: Callback<Source>,
    /// What `#status` shows.
    pub status: Status,
    /// The loaded recording's name.
    pub name: String,
}

/// The loading controls.
#[function_component(Loader)]
pub fn loader(props: &LoaderProps) -> Html {
    let on_file = {
        let on_load = props.on_load.clone();
        Callback::from(move |e: Event| {
            let input = e
                .target()
                .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok());
            if let Some(input) = input {
                if let Some(f) = input.files().and_then(|l| l.get(0)) {
                    on_load.emit(Source::File(f));
                }
                // Picking the same file again must load it again.
                input.set_value("");
            }
        })
    };
    let status_class = classes!("status", props.status.error.then_some("error"));
    html! {
        <div class="loader">
            <label class="file">
                { "Open recording " }
                <input type="file" id="file-input" accept=".jsonl,.zst,.json,application/zstd" onchange={on_file} />
            </label>
            { for DEMOS.iter().map(|&(id, label, url)| {
                let on_load = props.on_load.clone();
                let onclick = Callback::from(move |_: MouseEvent| on_load.emit(Source::Url(url.to_owned())));
                html! { <button id={id} class="demo" onclick={onclick}>{ label }</button> }
            }) }
            <span id="recording-name" title={props.name.clone()}>{ props.name.clone() }</span>
            <span id="status" class={status_class} role="status">{ props.status.text.clone() }</span>
        </div>
    }
}
