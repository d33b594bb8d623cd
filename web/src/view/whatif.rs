//! The what-if panel: pick a client model and its options (it starts on the model of the group
//! the story is about), and optionally a second one to compare (A/B: 5.0.0 against 8.x), replay
//! them in the browser against the loaded recording, and read the predictions side by side; the
//! tracks draw them over the observed data. An error clears what an earlier run drew.

use std::rc::Rc;

use slotscope_core::replay::MODELS;
use yew::prelude::*;

use crate::dataset::Shared;
use crate::state::Action;
use crate::view::preflight::PreflightForm;
use crate::whatif::{self, Request};

/// Properties of [`WhatifPanel`].
#[derive(Clone, PartialEq, Properties)]
pub struct WhatifProps {
    /// The loaded recording.
    pub data: Shared,
    /// Local time offset in minutes, `None` for UTC.
    pub offset: Option<i32>,
    /// The predictions shown over the tracks (none, A, or A and B).
    pub predictions: Vec<whatif::Shared>,
    /// Called with new predictions, or none to clear them.
    pub on_predictions: Callback<Vec<whatif::Shared>>,
    /// The view's actions (a pre-flight widens the window past the recording's end).
    pub dispatch: Callback<Action>,
}

/// The value of an `<input>` or `<select>` an event came from.
fn value_of(e: &Event) -> String {
    e.target()
        .and_then(|t| js_sys::Reflect::get(&t, &"value".into()).ok())
        .and_then(|v| v.as_string())
        .unwrap_or_default()
}

/// The observed business rate of `data` as the rate field's default text.
fn default_rate(data: &Shared) -> String {
    data.business_rate
        .unwrap_or(whatif::DEFAULT_RATE)
        .to_string()
}

/// A positive whole number from a form field, or why not.
fn positive(text: &str, what: &str) -> Result<u32, String> {
    text.trim()
        .parse::<u32>()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| {
            format!(
                "{what} must be a whole number above 0, not `{}`",
                text.trim()
            )
        })
}

/// The what-if form, its status and the prediction's summary.
#[function_component(WhatifPanel)]
pub fn whatif_panel(props: &WhatifProps) -> Html {
    let model = use_state(|| whatif::suggested_model(&props.data));
    let options = use_state(String::new);
    // Prediction B: a model to compare ("" for none) and its options.
    let model_b = use_state(String::new);
    let options_b = use_state(String::new);
    let rate = use_state(|| default_rate(&props.data));
    let concurrency = use_state(|| "1".to_owned());
    let status = use_state(String::new);
    let error = use_state(|| None::<String>);
    let running = use_state(|| false);

    // A new recording: its observed rate and suggested model, no stale error.
    {
        let (rate, model) = (rate.clone(), model.clone());
        let error = error.clone();
        let status = status.clone();
        use_effect_with(props.data.clone(), move |data| {
            rate.set(default_rate(data));
            model.set(whatif::suggested_model(data));
            error.set(None);
            status.set(String::new());
        });
    }

    let field = |state: &UseStateHandle<String>| {
        let state = state.clone();
        Callback::from(move |e: Event| state.set(value_of(&e)))
    };
    let on_input = |state: &UseStateHandle<String>| {
        let state = state.clone();
        Callback::from(move |e: InputEvent| {
            let e: &Event = &e;
            state.set(value_of(e));
        })
    };

    let on_run = {
        let (model, options, rate, concurrency) = (
            model.clone(),
            options.clone(),
            rate.clone(),
            concurrency.clone(),
        );
        let (model_b, options_b) = (model_b.clone(), options_b.clone());
        let (status, error, running) = (status.clone(), error.clone(), running.clone());
        let data = props.data.clone();
        let observed = default_rate(&props.data);
        let on_predictions = props.on_predictions.clone();
        let dispatch = props.dispatch.clone();
        Callback::from(move |_: MouseEvent| {
            if *running {
                return;
            }
            // A model's replay is drawn on the recording: a pre-flight's span goes.
            dispatch.emit(Action::Beyond(None));
            let rate = if rate.trim().is_empty() || rate.trim() == observed {
                Ok(None)
            } else {
                positive(&rate, "the rate").map(Some)
            };
            let concurrency = if concurrency.trim().is_empty() {
                Ok(1)
            } else {
                positive(&concurrency, "concurrency")
            };
            let (rate, concurrency) = match (rate, concurrency) {
                (Ok(r), Ok(c)) => (r, c),
                (Err(e), _) | (_, Err(e)) => {
                    // What an earlier run drew no longer answers the form: clear it.
                    error.set(Some(e));
                    status.set(String::new());
                    on_predictions.emit(Vec::new());
                    return;
                }
            };
            let mut requests = vec![Request {
                model: (*model).clone(),
                options: (*options).clone(),
                rate,
                concurrency,
            }];
            if !model_b.is_empty() {
                requests.push(Request {
                    model: (*model_b).clone(),
                    options: (*options_b).clone(),
                    rate,
                    concurrency,
                });
            }
            error.set(None);
            let names: Vec<&str> = requests.iter().map(|r| r.model.as_str()).collect();
            status.set(format!("Replaying {} …", names.join(" and ")));
            running.set(true);
            let (data, status, error, running, on_predictions) = (
                data.clone(),
                status.clone(),
                error.clone(),
                running.clone(),
                on_predictions.clone(),
            );
            wasm_bindgen_futures::spawn_local(async move {
                // Let the page paint "Replaying …" before the replay takes the thread.
                gloo_timers::future::TimeoutFuture::new(30).await;
                let began = js_sys::Date::now();
                let mut out = Vec::new();
                for (side, req) in ["A", "B"].iter().zip(&requests) {
                    match whatif::run_in_module(&data, req).await {
                        Ok(p) => out.push(whatif::Shared(Rc::new(p))),
                        Err(e) => {
                            // An error clears the old summaries and overlays.
                            status.set(String::new());
                            error.set(Some(if requests.len() > 1 {
                                format!("{side} ({}): {e}", req.model)
                            } else {
                                e
                            }));
                            on_predictions.emit(Vec::new());
                            running.set(false);
                            return;
                        }
                    }
                }
                let commands: u64 = out.iter().map(|p| p.0.report.commands).sum();
                status.set(format!(
                    "Replayed {commands} commands in {:.0} ms",
                    js_sys::Date::now() - began
                ));
                on_predictions.emit(out);
                running.set(false);
            });
        })
    };
    let on_clear = {
        let on_predictions = props.on_predictions.clone();
        let status = status.clone();
        let dispatch = props.dispatch.clone();
        Callback::from(move |_: MouseEvent| {
            on_predictions.emit(Vec::new());
            dispatch.emit(Action::Beyond(None));
            status.set(String::new());
        })
    };

    let chosen = MODELS.iter().find(|m| m.name == model.as_str());
    let help = chosen.map(|m| {
        let own: Vec<&str> = m.options.iter().map(|o| o.name).collect();
        let mut text = String::from("options: startup_nodes, socket_timeout");
        for k in own {
            text.push_str(", ");
            text.push_str(k);
        }
        text
    });
    let option_help: Html = chosen.map_or(Html::default(), |m| {
        html! {
            { for m.options.iter().map(|o| html! {
                <li><code>{ o.name }</code>{ " — " }{ o.doc }</li>
            }) }
        }
    });

    html! {
        <section class="panel whatif-panel">
            <h2>{ "What-if: replay a client model" }</h2>
            <div id="whatif">
                <label class="whatif-row">
                    <span>{ "model" }</span>
                    <select id="whatif-model" onchange={field(&model)}>
                        { for MODELS.iter().map(|m| html! {
                            <option value={m.name} selected={m.name == model.as_str()} title={m.about}>
                                { format!("{} — {}", m.name, m.about) }
                            </option>
                        }) }
                    </select>
                </label>
                <label class="whatif-row">
                    <span>{ "options" }</span>
                    <input id="whatif-options" type="text" spellcheck="false"
                        placeholder="key=value … e.g. address_remap=127.0.0.1:22809 socket_timeout=0.5"
                        value={(*options).clone()} oninput={on_input(&options)} />
                </label>
                <label class="whatif-row">
                    <span>{ "B" }</span>
                    <select id="whatif-model-b" onchange={field(&model_b)}
                        title="a second model to compare with the first (A/B), drawn in another colour">
                        <option value="" selected={model_b.is_empty()}>{ "compare with: none" }</option>
                        { for MODELS.iter().map(|m| html! {
                            <option value={m.name} selected={m.name == model_b.as_str()} title={m.about}>
                                { format!("{} — {}", m.name, m.about) }
                            </option>
                        }) }
                    </select>
                </label>
                if !model_b.is_empty() {
                    <label class="whatif-row">
                        <span>{ "B options" }</span>
                        <input id="whatif-options-b" type="text" spellcheck="false"
                            placeholder="key=value … for B"
                            value={(*options_b).clone()} oninput={on_input(&options_b)} />
                    </label>
                }
                <details class="whatif-help">
                    <summary>{ help.unwrap_or_default() }</summary>
                    <ul>{ option_help }</ul>
                </details>
                <div class="whatif-row">
                    <label>
                        <span>{ "rate/s" }</span>
                        <input id="whatif-rate" type="text" inputmode="numeric" size="7"
                            title="commands per second; default: the business rate the recording shows"
                            value={(*rate).clone()} oninput={on_input(&rate)} />
                    </label>
                    <label>
                        <span>{ "in flight" }</span>
                        <input id="whatif-concurrency" type="text" inputmode="numeric" size="4"
                            title="commands the application has in flight at most"
                            value={(*concurrency).clone()} oninput={on_input(&concurrency)} />
                    </label>
                    <button id="whatif-run" disabled={*running} onclick={on_run}>{ "run" }</button>
                    <button id="whatif-clear" disabled={props.predictions.is_empty()} onclick={on_clear}>{ "clear" }</button>
                </div>
                <p id="whatif-status" class="whatif-status">{ (*status).clone() }</p>
                if let Some(e) = &*error {
                    <p id="whatif-error" class="whatif-error">{ e.clone() }</p>
                }
                if !props.predictions.is_empty() {
                    <div class={classes!("whatif-ab", (props.predictions.len() > 1).then_some("two"))}>
                        { for props.predictions.iter().enumerate().map(|(slot, p)| {
                            let side = if slot == 0 { "a" } else { "b" };
                            let id = if slot == 0 { "whatif-summary".to_owned() } else { "whatif-summary-b".to_owned() };
                            let two = props.predictions.len() > 1;
                            html! {
                                <div class={classes!("whatif-side", side)}>
                                    <p id={id} class={classes!("whatif-summary", side, p.0.report.wedged.then_some("wedged"))}>
                                        if two { <strong>{ if slot == 0 { "A: " } else { "B: " } }</strong> }
                                        { whatif::summary(&p.0, props.offset) }
                                    </p>
                                    <p class={classes!("whatif-legend", side)}>
                                        <span class={classes!("whatif-swatch", side)}></span>
                                        { format!("predicted ({}) drawn {} over the observed tracks",
                                            p.0.overlay.model, if slot == 0 { "dashed" } else { "dotted" }) }
                                    </p>
                                </div>
                            }
                        }) }
                    </div>
                }
                <PreflightForm data={props.data.clone()} on_predictions={props.on_predictions.clone()}
                    dispatch={props.dispatch.clone()} />
            </div>
        </section>
    }
}
