//! The share button: a link to this view (recording, window, cursor, focus, panels: the URL hash).
//! A recording opened from the disk cannot be reached by whoever clicks the link: the button says
//! so, and how to share it, before offering the link anyway.

use wasm_bindgen::JsCast;
use yew::prelude::*;

/// Properties of [`ShareButton`].
#[derive(Clone, PartialEq, Properties)]
pub struct ShareProps {
    /// The name of the recording when it was opened from the disk (no URL reaches it).
    pub local: Option<String>,
}

/// The page's URL, hash included.
fn current_url() -> String {
    web_sys::window()
        .and_then(|w| w.location().href().ok())
        .unwrap_or_default()
}

/// Copies `text` to the clipboard (best effort: the link is also shown to copy by hand).
fn copy(text: &str) {
    if let Some(w) = web_sys::window() {
        let _ = w.navigator().clipboard().write_text(text);
    }
}

/// The share button and what it shows.
#[function_component(ShareButton)]
pub fn share_button(props: &ShareProps) -> Html {
    // The link shown (after a click), and whether the local-file warning is up.
    let link = use_state(|| None::<String>);
    let warning = use_state(|| false);
    let on_share = {
        let (link, warning, local) = (link.clone(), warning.clone(), props.local.clone());
        Callback::from(move |_: MouseEvent| {
            if local.is_some() {
                warning.set(true);
                link.set(None);
            } else {
                let url = current_url();
                copy(&url);
                link.set(Some(url));
            }
        })
    };
    let on_anyway = {
        let (link, warning) = (link.clone(), warning.clone());
        Callback::from(move |_: MouseEvent| {
            let url = current_url();
            copy(&url);
            link.set(Some(url));
            warning.set(false);
        })
    };
    let on_close = {
        let (link, warning) = (link.clone(), warning.clone());
        Callback::from(move |_: MouseEvent| {
            link.set(None);
            warning.set(false);
        })
    };
    let select_all = Callback::from(|e: FocusEvent| {
        if let Some(i) = e
            .target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
        {
            i.select();
        }
    });
    html! {
        <span class="share">
            <button id="share" onclick={on_share} title="A link to this view: recording, window, cursor, focus and panels">
                { "Share link" }
            </button>
            if *warning {
                <div id="share-warning" class="popover warning" role="alertdialog">
                    <p>
                        { format!(
                            "{} was opened from your disk: a link to this page cannot open it for \
                             anyone else (they would see the demo). To share it, serve it: \
                             `slotscope serve {}` prints a link that opens it for whoever can reach \
                             that address; or send the file with the link, which keeps the view \
                             (window, cursor, focus) for when they open it.",
                            props.local.clone().unwrap_or_default(),
                            props.local.clone().unwrap_or_default()
                        ) }
                    </p>
                    <button id="share-anyway" onclick={on_anyway}>{ "Copy the link anyway" }</button>
                    <button onclick={on_close.clone()}>{ "Close" }</button>
                </div>
            }
            if let Some(url) = &*link {
                <div id="share-box" class="popover">
                    <label>
                        { "Link (copied): " }
                        <input id="share-link" readonly=true value={url.clone()} onfocus={select_all} />
                    </label>
                    <button onclick={on_close}>{ "Close" }</button>
                </div>
            }
        </span>
    }
}
