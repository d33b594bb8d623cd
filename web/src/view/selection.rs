//! The selected range: its bounds and a table of per-node and per-command deltas over it.

use std::rc::Rc;

use slotscope_core::time::format_millis;
use slotscope_reader::Deltas;
use yew::prelude::*;

use crate::clock;
use crate::dataset::Shared;
use crate::state::Action;

/// Properties of [`SelectionPanel`].
#[derive(Clone, PartialEq, Properties)]
pub struct SelectionProps {
    /// The selected range.
    pub range: (u64, u64),
    /// The loaded recording.
    pub data: Shared,
    /// Local time offset in minutes, `None` for UTC.
    pub offset: Option<i32>,
    /// Where actions go.
    pub dispatch: Callback<Action>,
}

/// The selection and its deltas.
#[function_component(SelectionPanel)]
pub fn selection_panel(props: &SelectionProps) -> Html {
    let (a, b) = props.range;
    // The deltas come from the reader's worker: the tables fill in when it answers (an answer
    // for a range or a recording no longer shown is dropped).
    let deltas = use_state(|| None::<((u64, u64), Shared, Rc<Deltas>)>);
    {
        let deltas = deltas.clone();
        use_effect_with((props.range, props.data.clone()), move |(range, data)| {
            let (range, data) = (*range, data.clone());
            wasm_bindgen_futures::spawn_local(async move {
                let d = data.deltas(range).await;
                deltas.set(Some((range, data, Rc::new(d))));
            });
        });
    }
    let d = match &*deltas {
        Some((range, data, d)) if *range == props.range && *data == props.data => d.clone(),
        _ => Rc::new(Deltas::default()),
    };
    let clear = {
        let dispatch = props.dispatch.clone();
        Callback::from(move |_: MouseEvent| dispatch.emit(Action::ClearSelection))
    };
    let zoom = {
        let dispatch = props.dispatch.clone();
        Callback::from(move |_: MouseEvent| dispatch.emit(Action::JumpTo(a, b)))
    };
    html! {
        <div id="selection" class="panel">
            <div class="selection-head">
                <strong>{ "Selection " }</strong>
                { format!("{} → {} ({})", clock::format(a, props.offset), clock::format(b, props.offset), format_millis(b - a)) }
                <button onclick={zoom}>{ "zoom to" }</button>
                <button onclick={clear}>{ "clear" }</button>
            </div>
            <div class="tables">
                <table class="deltas nodes">
                    <thead><tr><th>{ "node" }</th><th>{ "calls" }</th><th>{ "rejected" }</th><th>{ "failed" }</th><th>{ "MOVED" }</th><th>{ "new conns" }</th></tr></thead>
                    <tbody>
                        { for d.nodes.iter().map(|n| html! {
                            <tr class="node"><td>{ n.node.clone() }</td><td class="num">{ n.calls }</td><td class="num">{ n.rejected }</td>
                            <td class="num">{ n.failed }</td><td class="num">{ n.moved }</td><td class="num">{ n.new_connections }</td></tr>
                        }) }
                    </tbody>
                </table>
                <table class="deltas commands">
                    <thead><tr><th>{ "command" }</th><th>{ "calls" }</th><th>{ "rejected" }</th><th>{ "failed" }</th></tr></thead>
                    <tbody>
                        { for d.commands.iter().map(|c| html! {
                            <tr class="command"><td>{ c.command.clone() }</td><td class="num">{ c.calls }</td>
                            <td class="num">{ c.rejected }</td><td class="num">{ c.failed }</td></tr>
                        }) }
                    </tbody>
                </table>
            </div>
        </div>
    }
}
