//! The app: owns the view state and the loaded recording, loads recordings, keeps the URL hash
//! and the test hook up to date, and lays out the toolbar, tracks and panels.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use gloo_events::{EventListener, EventListenerOptions};
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{DragEvent, KeyboardEvent};
use yew::prelude::*;

use crate::clock;
use crate::dataset::{Parser, Shared, Step};
use crate::js_error;
use crate::state::{Action, HashState, Panel, ViewState};
use crate::view::census::CensusPanel;
use crate::view::client_side::ClientSidePanel;
use crate::view::findings::FindingsPanel;
use crate::view::loader::{Loader, Source};
use crate::view::selection::SelectionPanel;
use crate::view::slotmap::SlotMapPanel;
use crate::view::topology_diff::TopologyDiffPanel;
use crate::view::tracks::TracksView;
use crate::view::whatif::WhatifPanel;

/// The recording shown when nothing else is asked for.
pub const DEFAULT_DEMO: &str = "demo/incident1.jsonl.zst";

/// Milliseconds of parsing between yields to the event loop.
const SLICE_MS: f64 = 30.0;
/// A recording still loading after this long is shown as far as it is read…
const PREVIEW_AFTER_MS: f64 = 600.0;
/// …unless this share of it is read already (the rest will not take long).
const PREVIEW_BEFORE: f64 = 0.6;

/// The reducer's state wrapped for Yew.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Model(pub ViewState);

impl Reducible for Model {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        Rc::new(Model(self.0.clone().reduce(action)))
    }
}

/// What `#status` shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Status {
    /// The text.
    pub text: String,
    /// Whether it reports an error.
    pub error: bool,
}

thread_local! {
    static GENERATION: Cell<u32> = const { Cell::new(0) };
    /// The URL of the recording shown (for `hashchange`), `None` for a local file.
    static CURRENT_SOURCE: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// What a load reports back to the app.
#[derive(Clone)]
struct Sinks {
    dispatch: UseReducerDispatcher<Model>,
    data: UseStateSetter<Option<Shared>>,
    status: UseStateSetter<Status>,
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

fn percent(share: f64) -> u32 {
    // 0..=100 by the clamp.
    (share.clamp(0.0, 1.0) * 100.0).floor() as u32
}

/// Loads `source` in the background: fetch or read, then parse in time slices.
fn load(source: Source, sinks: Sinks) {
    let generation = GENERATION.with(|g| {
        g.set(g.get().wrapping_add(1));
        g.get()
    });
    let current = move || GENERATION.with(|g| g.get()) == generation;
    let (name, url) = match &source {
        Source::Url(u) => (u.clone(), Some(u.clone())),
        Source::File(f) => (f.name(), None),
    };
    sinks.status.set(Status {
        text: format!("Loading {name} …"),
        error: false,
    });
    wasm_bindgen_futures::spawn_local(async move {
        let fail = |message: String| {
            sinks.status.set(Status {
                text: format!("Could not load {name}: {message}"),
                error: true,
            })
        };
        let bytes = match &source {
            Source::Url(u) => fetch(u).await,
            Source::File(f) => read_file(f).await,
        };
        let bytes = match bytes {
            Ok(b) => b,
            Err(e) => return fail(e),
        };
        if !current() {
            return;
        }
        let mut parser = match Parser::new(name.clone(), bytes) {
            Ok(p) => p,
            Err(e) => return fail(e.message),
        };
        let load_began = js_sys::Date::now();
        let mut previewed = false;
        loop {
            let began = js_sys::Date::now();
            let mut share = 0.0;
            let mut done = false;
            while js_sys::Date::now() - began < SLICE_MS {
                match parser.step(200) {
                    Ok(Step::Progress(p)) => share = p,
                    Ok(Step::Done) => {
                        done = true;
                        break;
                    }
                    Err(e) => return fail(e.message),
                }
            }
            if done {
                // The tracks and the analysis, a step at a time: a day-long recording takes
                // seconds, and the page answers between the steps.
                let mut finisher = parser.finishing();
                let mut share = 0.0;
                loop {
                    sinks.status.set(Status {
                        text: format!("Analysing {name} … {} %", percent(share)),
                        error: false,
                    });
                    gloo_timers::future::TimeoutFuture::new(0).await;
                    if !current() {
                        return;
                    }
                    match finisher.step() {
                        Step::Progress(p) => share = p,
                        Step::Done => break,
                    }
                }
                let d = finisher.done();
                let span = d.span();
                let findings = d.analysis.findings.len();
                let lines = d.lines;
                sinks.status.set(Status {
                    text: format!("Loaded {name}: {lines} lines, {findings} findings"),
                    error: false,
                });
                sinks.data.set(Some(Shared(Rc::new(d))));
                sinks.dispatch.dispatch(Action::Loaded {
                    name: name.clone(),
                    source: url.clone(),
                    span,
                    findings,
                });
                return;
            }
            // A big recording: show what is read so far while the rest loads.
            if !previewed
                && share < PREVIEW_BEFORE
                && js_sys::Date::now() - load_began >= PREVIEW_AFTER_MS
            {
                previewed = true;
                let d = parser.preview();
                let (span, findings) = (d.span(), d.analysis.findings.len());
                sinks.data.set(Some(Shared(Rc::new(d))));
                sinks.dispatch.dispatch(Action::Preview {
                    name: name.clone(),
                    source: url.clone(),
                    span,
                    findings,
                });
            }
            let showing = if previewed {
                " (showing the part read so far)"
            } else {
                ""
            };
            sinks.status.set(Status {
                text: format!("Loading {name} … {} %{showing}", percent(share)),
                error: false,
            });
            gloo_timers::future::TimeoutFuture::new(0).await;
            if !current() {
                return;
            }
        }
    });
}

fn is_text_input(target: Option<web_sys::EventTarget>) -> bool {
    target
        .and_then(|t| t.dyn_into::<web_sys::HtmlElement>().ok())
        .is_some_and(|e| {
            let tag = e.tag_name().to_ascii_lowercase();
            tag == "textarea"
                || (tag == "input" && e.get_attribute("type").as_deref() != Some("checkbox"))
        })
}

/// The root component.
#[function_component(App)]
pub fn app() -> Html {
    let model = use_reducer(Model::default);
    let data = use_state(|| None::<Shared>);
    let status = use_state(Status::default);
    // The what-if prediction drawn over the tracks; a new recording drops it.
    let prediction = use_state(|| None::<crate::whatif::Shared>);
    {
        let prediction = prediction.clone();
        use_effect_with((*data).clone(), move |_| prediction.set(None));
    }
    let sinks = Sinks {
        dispatch: model.dispatcher(),
        data: data.setter(),
        status: status.setter(),
    };

    // Start: restore the hash, load ?src=, the hash's recording or the demo; keys; drag and drop.
    {
        let sinks = sinks.clone();
        use_effect_with((), move |_| {
            let window = web_sys::window().expect("a browser window");
            let location = window.location();
            let hash = HashState::decode(&location.hash().unwrap_or_default());
            let src = location
                .search()
                .ok()
                .and_then(|s| web_sys::UrlSearchParams::new_with_str(&s).ok())
                .and_then(|p| p.get("src"))
                .filter(|s| !s.is_empty());
            let from_hash = hash.as_ref().and_then(|h| h.source.clone());
            if let Some(h) = hash {
                sinks.dispatch.dispatch(Action::Restore(h));
            }
            let url = src.or(from_hash).unwrap_or_else(|| DEFAULT_DEMO.to_owned());
            load(Source::Url(url), sinks.clone());

            let keys = {
                let dispatch = sinks.dispatch.clone();
                // Not passive: the keys it handles must not also scroll the page.
                let active = EventListenerOptions::enable_prevent_default();
                EventListener::new_with_options(&window, "keydown", active, move |e| {
                    let Some(e) = e.dyn_ref::<KeyboardEvent>() else {
                        return;
                    };
                    if e.ctrl_key() || e.meta_key() || e.alt_key() || is_text_input(e.target()) {
                        return;
                    }
                    let action = match e.key().as_str() {
                        "+" | "=" => Action::ZoomIn,
                        "-" | "_" => Action::ZoomOut,
                        "ArrowLeft" => Action::PanSteps(-1.0),
                        "ArrowRight" => Action::PanSteps(1.0),
                        "Escape" => Action::ClearSelection,
                        _ => return,
                    };
                    e.prevent_default();
                    dispatch.dispatch(action);
                })
            };
            let hashchange = {
                let sinks = sinks.clone();
                EventListener::new(&window, "hashchange", move |_| {
                    let Some(w) = web_sys::window() else {
                        return;
                    };
                    let Some(h) = HashState::decode(&w.location().hash().unwrap_or_default())
                    else {
                        return;
                    };
                    let source = h.source.clone();
                    sinks.dispatch.dispatch(Action::Restore(h));
                    let shown = CURRENT_SOURCE.with(|c| c.borrow().clone());
                    if let Some(url) = source.filter(|s| Some(s) != shown.as_ref()) {
                        load(Source::Url(url), sinks.clone());
                    }
                })
            };
            let document = window.document().expect("a document");
            let over = EventListener::new_with_options(
                &document,
                "dragover",
                EventListenerOptions::enable_prevent_default(),
                |e| e.prevent_default(),
            );
            let drop = {
                let sinks = sinks.clone();
                EventListener::new_with_options(
                    &document,
                    "drop",
                    EventListenerOptions::enable_prevent_default(),
                    move |e| {
                        e.prevent_default();
                        let file = e
                            .dyn_ref::<DragEvent>()
                            .and_then(|d| d.data_transfer())
                            .and_then(|t| t.files())
                            .and_then(|f| f.get(0));
                        if let Some(f) = file {
                            load(Source::File(f), sinks.clone());
                        }
                    },
                )
            };
            move || drop_all((keys, hashchange, over, drop))
        });
    }

    // Every state change: the test hook and the URL hash.
    {
        let state = model.0.clone();
        use_effect_with(state, |state| {
            crate::publish(state);
            CURRENT_SOURCE.with(|c| c.borrow_mut().clone_from(&state.source));
            if state.data.is_some() {
                if let Some(w) = web_sys::window() {
                    let hash = format!("#{}", state.hash_state().encode());
                    if w.location().hash().ok().as_deref() != Some(hash.as_str()) {
                        if let Ok(h) = w.history() {
                            let _ = h.replace_state_with_url(
                                &wasm_bindgen::JsValue::NULL,
                                "",
                                Some(&hash),
                            );
                        }
                    }
                }
            }
        });
    }

    let state = &model.0;
    let offset = (!state.utc).then(|| crate::view::local_offset(state.window.0));
    let on_load = {
        let sinks = sinks.clone();
        Callback::from(move |s: Source| load(s, sinks.clone()))
    };
    let dispatch = {
        let d = model.dispatcher();
        Callback::from(move |a: Action| d.dispatch(a))
    };
    let on_utc = {
        let d = model.dispatcher();
        Callback::from(move |e: Event| {
            let checked = e
                .target_dyn_into::<web_sys::HtmlInputElement>()
                .is_some_and(|i| i.checked());
            d.dispatch(Action::SetUtc(!checked));
        })
    };
    let toggle = |p: Panel| {
        let d = model.dispatcher();
        Callback::from(move |_: MouseEvent| d.dispatch(Action::TogglePanel(p)))
    };
    let time = |ms: u64| clock::format(ms, offset);
    let cursor_text = state.cursor.map(time).unwrap_or_default();
    let has_data = state.data.is_some();

    html! {
        <div class="layout">
            <header class="toolbar">
                <h1>{ "slotscope" }</h1>
                <Loader on_load={on_load} status={(*status).clone()}
                    name={state.loaded.clone().unwrap_or_default()} />
            </header>
            <div class="timebar">
                <span class="label">{ "window" }</span>
                <span id="range-start">{ if has_data { time(state.window.0) } else { String::new() } }</span>
                <span class="sep">{ "→" }</span>
                <span id="range-end">{ if has_data { time(state.window.1) } else { String::new() } }</span>
                <span class="label">{ "cursor" }</span>
                <span id="cursor">{ cursor_text }</span>
                <label class="utc">
                    <input type="checkbox" id="utc-toggle" checked={!state.utc} onchange={on_utc} />
                    { " local time" }
                </label>
                <span class="panel-toggles">
                    { for Panel::ALL.into_iter().map(|p| html! {
                        <button id={format!("toggle-{}", p.name())}
                            class={classes!("toggle", state.panels.contains(&p).then_some("open"))}
                            onclick={toggle(p)}>{ p.name() }</button>
                    }) }
                </span>
                <span class="hint">{ "wheel/+/−: zoom · drag/←/→: pan · click: cursor · shift-drag: select" }</span>
            </div>
            <main class="main">
                <section class="timeline">
                    <TracksView state={state.clone()} data={(*data).clone()} dispatch={dispatch.clone()} offset={offset}
                        overlay={(*prediction).clone()} />
                    if let (Some(sel), Some(d)) = (state.selection, (*data).clone()) {
                        <SelectionPanel range={sel} data={d} offset={offset} dispatch={dispatch.clone()} />
                    }
                </section>
                <aside class="panels">
                    if let Some(d) = (*data).clone() {
                        // The slot map and diff follow the cursor: first, so they stay in view.
                        if state.panels.contains(&Panel::SlotMap) {
                            <SlotMapPanel data={d.clone()} cursor={state.cursor} offset={offset} />
                        }
                        if state.panels.contains(&Panel::TopologyDiff) {
                            <TopologyDiffPanel data={d.clone()} offset={offset}
                                instants={crate::diff::default_instants(state)}
                                from_selection={state.selection.is_some()} />
                        }
                        if state.panels.contains(&Panel::Findings) {
                            <FindingsPanel data={d.clone()} offset={offset} dispatch={dispatch.clone()} />
                        }
                        // Recorded through `slotscope tap`: the client's own counts.
                        if !d.analysis.tap.is_empty() {
                            <ClientSidePanel data={d.clone()} />
                        }
                        if state.panels.contains(&Panel::Census) {
                            <CensusPanel data={d.clone()} />
                        }
                        if state.panels.contains(&Panel::Whatif) {
                            <WhatifPanel data={d} offset={offset} prediction={(*prediction).clone()}
                                on_prediction={let p = prediction.setter(); Callback::from(move |x| p.set(x))} />
                        }
                    }
                </aside>
            </main>
        </div>
    }
}

fn drop_all<T>(_listeners: T) {}
