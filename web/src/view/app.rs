//! The app: owns the view state and the loaded recording, starts loads ([`crate::load`]), maps
//! keys to actions ([`crate::gesture`]), keeps the URL hash and the test hook up to date, and lays
//! out the toolbar, tracks and panels.

use std::cell::RefCell;
use std::rc::Rc;

use gloo_events::{EventListener, EventListenerOptions};
use wasm_bindgen::JsCast;
use web_sys::{DragEvent, KeyboardEvent};
use yew::prelude::*;

use crate::clock;
use crate::dataset::Shared;
use crate::gesture::{self, Modifiers};
use crate::load::{self, Sinks, Source, Status};
use crate::state::{Action, HashState, Panel, ViewState};
use crate::view::census::CensusPanel;
use crate::view::client_side::ClientSidePanel;
use crate::view::export::ExportButtons;
use crate::view::findings::FindingsPanel;
use crate::view::loader::Loader;
use crate::view::notes::NotesPanel;
use crate::view::selection::SelectionPanel;
use crate::view::share::ShareButton;
use crate::view::slotmap::SlotMapPanel;
use crate::view::story::StoryPanel;
use crate::view::topology_diff::TopologyDiffPanel;
use crate::view::tracks::TracksView;
use crate::view::whatif::WhatifPanel;

/// The recording shown when nothing else is asked for.
pub const DEFAULT_DEMO: &str = "demo/incident1.jsonl.zst";

/// The reducer's state wrapped for Yew.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Model(pub ViewState);

impl Reducible for Model {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        Rc::new(Model(self.0.clone().reduce(action)))
    }
}

thread_local! {
    /// The URL of the recording shown (for `hashchange`), `None` for a local file.
    static CURRENT_SOURCE: RefCell<Option<String>> = const { RefCell::new(None) };
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
    // The what-if predictions drawn over the tracks (A, or A and B); a new recording drops them.
    let predictions = use_state(Vec::<crate::whatif::Shared>::new);
    // A link naming a recording that was opened from the sender's disk (`l=NAME`): not reachable
    // here, so nothing is loaded and the page says so.
    let unreachable = use_state(|| None::<String>);
    {
        let unreachable = unreachable.clone();
        use_effect_with((*data).clone(), move |d| {
            if d.is_some() {
                unreachable.set(None);
            }
        });
    }
    {
        let predictions = predictions.clone();
        use_effect_with((*data).clone(), move |_| predictions.set(Vec::new()));
    }
    let sinks = {
        let (dispatch, data, status) = (model.dispatcher(), data.setter(), status.setter());
        Sinks {
            dispatch: Callback::from(move |a| dispatch.dispatch(a)),
            data: Callback::from(move |d| data.set(d)),
            status: Callback::from(move |s| status.set(s)),
        }
    };

    // Start: restore the hash, load ?src=, the hash's recording or the demo; keys; drag and drop.
    {
        let sinks = sinks.clone();
        let unreachable = unreachable.setter();
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
            let local = hash.as_ref().and_then(|h| h.local.clone());
            if let Some(h) = hash {
                sinks.dispatch.emit(Action::Restore(h));
            }
            match (src.or(from_hash), local) {
                (Some(url), _) => load::start(Source::Url(url), sinks.clone()),
                (None, Some(name)) => unreachable.set(Some(name)),
                (None, None) => load::start(Source::Url(DEFAULT_DEMO.to_owned()), sinks.clone()),
            }

            let keys = {
                let dispatch = sinks.dispatch.clone();
                // Not passive: the keys it handles must not also scroll the page.
                let active = EventListenerOptions::enable_prevent_default();
                EventListener::new_with_options(&window, "keydown", active, move |e| {
                    let Some(e) = e.dyn_ref::<KeyboardEvent>() else {
                        return;
                    };
                    let held = Modifiers {
                        ctrl: e.ctrl_key(),
                        meta: e.meta_key(),
                        alt: e.alt_key(),
                    };
                    let Some(action) = gesture::key(&e.key(), held) else {
                        return;
                    };
                    if is_text_input(e.target()) {
                        return;
                    }
                    e.prevent_default();
                    dispatch.emit(action);
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
                    sinks.dispatch.emit(Action::Restore(h));
                    let shown = CURRENT_SOURCE.with(|c| c.borrow().clone());
                    if let Some(url) = source.filter(|s| Some(s) != shown.as_ref()) {
                        load::start(Source::Url(url), sinks.clone());
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
                            load::start(Source::File(f), sinks.clone());
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
            crate::hook::publish(state);
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
        Callback::from(move |s: Source| load::start(s, sinks.clone()))
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
    // Opening a panel brings it into view (the panels column can be taller than the screen).
    let toggle = |p: Panel| {
        let d = model.dispatcher();
        let opening = !model.0.panels.contains(&p);
        Callback::from(move |_: MouseEvent| {
            d.dispatch(Action::TogglePanel(p));
            if opening {
                scroll_into_view_soon(p.name());
            }
        })
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
                if let Some(d) = (*data).clone() {
                    <span class="share-export">
                        <ShareButton local={state.local_name().map(str::to_owned)} />
                        <ExportButtons data={d} window={state.window} offset={offset} notes={state.notes.clone()} />
                    </span>
                }
            </header>
            if let Some(name) = &*unreachable {
                <div id="unreachable" class="banner warning" role="alert">
                    { format!(
                        "This link names {name}, a recording opened from the sender's disk: it \
                         cannot be loaded from here. Open the file yourself (Open recording, or \
                         drop it on the page) and the link's view (window, cursor, focus) applies \
                         to it; or ask for a link from `slotscope serve {name}`."
                    ) }
                </div>
            }
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
                <span class="hint">{ "ctrl+wheel/+/−: zoom · drag/←/→: pan · click: cursor · shift-drag: select · Esc: clear" }</span>
            </div>
            <main class="main">
                <section class="timeline">
                    if let Some(d) = (*data).clone() {
                        <StoryPanel data={d.clone()} offset={offset} dispatch={dispatch.clone()} />
                        <NotesPanel notes={state.notes.clone()} cursor={state.cursor} start={d.span().0}
                            offset={offset} dispatch={dispatch.clone()} />
                    }
                    <TracksView state={state.clone()} data={(*data).clone()} dispatch={dispatch.clone()} offset={offset}
                        overlays={(*predictions).clone()} />
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
                            <FindingsPanel data={d.clone()} offset={offset} focus={state.focus.clone()}
                                dispatch={dispatch.clone()} />
                        }
                        // Recorded through `slotscope tap`: the client's own counts.
                        if !d.analysis.tap.is_empty() {
                            <ClientSidePanel data={d.clone()} />
                        }
                        if state.panels.contains(&Panel::Census) {
                            <CensusPanel data={d.clone()} offset={offset} />
                        }
                        if state.panels.contains(&Panel::Whatif) {
                            <WhatifPanel data={d} offset={offset} predictions={(*predictions).clone()}
                                on_predictions={let p = predictions.setter(); Callback::from(move |x| p.set(x))}
                                dispatch={dispatch.clone()} />
                        }
                    }
                </aside>
            </main>
        </div>
    }
}

fn drop_all<T>(_listeners: T) {}

/// Scrolls the element `id` into view once it is rendered (after this event's redraw).
fn scroll_into_view_soon(id: &'static str) {
    gloo_timers::callback::Timeout::new(50, move || {
        let el = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.get_element_by_id(id));
        if let Some(el) = el {
            let opts = web_sys::ScrollIntoViewOptions::new();
            opts.set_block(web_sys::ScrollLogicalPosition::Nearest);
            opts.set_behavior(web_sys::ScrollBehavior::Smooth);
            el.scroll_into_view_with_scroll_into_view_options(&opts);
        }
    })
    .forget();
}
