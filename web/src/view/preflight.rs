//! The what-if panel's pre-flight: a planned change (`scale-out:+1`, `failover:HOST:PORT` or JSON
//! steps) replayed in the browser against each client group of the loaded recording, after its
//! end; each group's verdict and why, and the two most harmed groups' predicted tracks drawn past
//! the recording's end (A and B), the window widened to show them.

use yew::prelude::*;

use crate::dataset::Shared;
use crate::state::Action;
use crate::whatif::{self, PlanPrediction, PlanRequest};

/// Properties of [`PreflightForm`].
#[derive(Clone, PartialEq, Properties)]
pub struct PreflightProps {
    /// The loaded recording.
    pub data: Shared,
    /// Called with the predictions to draw, or none to clear them.
    pub on_predictions: Callback<Vec<whatif::Shared>>,
    /// The view's actions (the window goes past the recording's end, and back).
    pub dispatch: Callback<Action>,
}

/// The text of the `<input>` or `<textarea>` an event came from.
fn value_of(e: &InputEvent) -> String {
    let e: &Event = e;
    e.target()
        .and_then(|t| js_sys::Reflect::get(&t, &"value".into()).ok())
        .and_then(|v| v.as_string())
        .unwrap_or_default()
}

/// The plan form and its result.
#[function_component(PreflightForm)]
pub fn preflight_form(props: &PreflightProps) -> Html {
    let plan = use_state(|| "scale-out:+1".to_owned());
    let assume = use_state(String::new);
    let result = use_state(|| None::<PlanPrediction>);
    let error = use_state(|| None::<String>);
    let running = use_state(|| false);
    {
        let (result, error) = (result.clone(), error.clone());
        use_effect_with(props.data.clone(), move |_| {
            result.set(None);
            error.set(None);
        });
    }
    let on_input = |state: &UseStateHandle<String>| {
        let state = state.clone();
        Callback::from(move |e: InputEvent| state.set(value_of(&e)))
    };
    let on_run = {
        let (plan, assume) = (plan.clone(), assume.clone());
        let (result, error, running) = (result.clone(), error.clone(), running.clone());
        let (data, on_predictions, dispatch) = (
            props.data.clone(),
            props.on_predictions.clone(),
            props.dispatch.clone(),
        );
        Callback::from(move |_: MouseEvent| {
            if *running {
                return;
            }
            let req = PlanRequest {
                plan: (*plan).clone(),
                assume: (*assume).clone(),
            };
            running.set(true);
            error.set(None);
            let (result, error, running) = (result.clone(), error.clone(), running.clone());
            let (data, on_predictions, dispatch) =
                (data.clone(), on_predictions.clone(), dispatch.clone());
            wasm_bindgen_futures::spawn_local(async move {
                // Let the page paint the disabled button before the replays take the thread.
                gloo_timers::future::TimeoutFuture::new(30).await;
                match whatif::plan_in_module(&data, &req).await {
                    Ok(p) => {
                        on_predictions.emit(whatif::drawn(&p));
                        dispatch.emit(Action::Beyond(Some(p.end)));
                        result.set(Some(p));
                    }
                    Err(e) => {
                        // What an earlier run drew no longer answers the form: clear it.
                        on_predictions.emit(Vec::new());
                        dispatch.emit(Action::Beyond(None));
                        result.set(None);
                        error.set(Some(e));
                    }
                }
                running.set(false);
            });
        })
    };
    html! {
        <div id="preflight" class="preflight">
            <h3>{ "Pre-flight: a planned change, replayed per client group after the recording" }</h3>
            <label class="whatif-row">
                <span>{ "plan" }</span>
                <textarea id="preflight-plan" rows="2" spellcheck="false"
                    placeholder={r#"scale-out:+1, failover:HOST:PORT, or {"steps": [{"at": "0s", "add_master": "new1"}, …]}"#}
                    value={(*plan).clone()} oninput={on_input(&plan)} />
            </label>
            <label class="whatif-row">
                <span>{ "assume" }</span>
                <input id="preflight-assume" type="text" spellcheck="false"
                    placeholder="GROUP=LIB@VERSION[,option=value] … for a group the recording cannot name"
                    value={(*assume).clone()} oninput={on_input(&assume)} />
                <button id="preflight-run" disabled={*running} onclick={on_run}>{ "pre-flight" }</button>
            </label>
            if let Some(e) = &*error {
                <p id="preflight-error" class="whatif-error">{ e.clone() }</p>
            }
            if let Some(p) = &*result {
                <ol class="preflight-steps">
                    { for p.steps.iter().map(|s| html! { <li>{ s.clone() }</li> }) }
                </ol>
                <table id="preflight-result" class="preflight-result">
                    <tr><th>{ "group" }</th><th>{ "verdict" }</th><th>{ "why, and what makes it safe" }</th></tr>
                    { for p.groups.iter().enumerate().map(|(i, g)| html! {
                        <tr class={classes!(g.harmed.then_some("harmed"))}>
                            <td>{ g.short.clone() }{ match i { 0 => " (A)", 1 => " (B)", _ => "" } }</td>
                            <td class="preflight-verdict">{ g.verdict.clone() }</td>
                            <td>
                                { g.why.clone() }
                                if !g.remedies.is_empty() {
                                    <ul>{ for g.remedies.iter().map(|r| html! { <li>{ format!("safer with {r}") }</li> }) }</ul>
                                }
                            </td>
                        </tr>
                    }) }
                </table>
            }
        </div>
    }
}
