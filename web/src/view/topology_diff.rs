//! The topology diff panel: which slot ranges moved where between two instants, and which nodes
//! joined or left.

use yew::prelude::*;

use crate::clock;
use crate::dataset::Shared;
use crate::diff;

/// Rows shown before the rest is summed up in one line.
const MAX_ROWS: usize = 200;

/// Properties of [`TopologyDiffPanel`].
#[derive(Clone, PartialEq, Properties)]
pub struct TopologyDiffProps {
    /// The loaded recording.
    pub data: Shared,
    /// The instants compared, A then B (see [`diff::default_instants`]).
    pub instants: (u64, u64),
    /// Whether the instants are the selection's ends (else window start and cursor).
    pub from_selection: bool,
    /// Local time offset in minutes, `None` for UTC.
    pub offset: Option<i32>,
}

/// The diff from A to B.
#[function_component(TopologyDiffPanel)]
pub fn topology_diff_panel(props: &TopologyDiffProps) -> Html {
    let d = use_memo((props.data.clone(), props.instants), |(data, (a, b))| {
        diff::diff(&data.tracks, *a, *b)
    });
    let nodes = &props.data.tracks.nodes;
    let name = |n: Option<usize>| match n {
        Some(i) => nodes
            .get(i)
            .map_or_else(|| format!("node {i}"), |a| a.to_string()),
        None => "unassigned".to_owned(),
    };
    let (a, b) = props.instants;
    let basis = if props.from_selection {
        "selection start → end"
    } else {
        "window start → cursor"
    };
    let more = d.moved.len().saturating_sub(MAX_ROWS);

    html! {
        <section class="panel topology-diff-panel">
            <h2>{ "Topology diff" }</h2>
            <div id="topology-diff">
                <p class="instants">
                    { "A " }<span id="diff-a">{ clock::format(a, props.offset) }</span>
                    { " → B " }<span id="diff-b">{ clock::format(b, props.offset) }</span>
                    <span class="basis">{ format!(" ({basis})") }</span>
                </p>
                <p id="diff-summary">{ d.summary() }</p>
                if !d.moved.is_empty() {
                    <table>
                        <thead><tr><th>{ "slots" }</th><th>{ "owner A → B" }</th><th>{ "count" }</th></tr></thead>
                        <tbody>
                            { for d.moved.iter().take(MAX_ROWS).map(|m| {
                                let what = if m.range.len() == 1 { "slot" } else { "slots" };
                                html! {
                                    <tr class="moved-range">
                                        <td class="range">{ format!("{what} {}", m.range) }</td>
                                        <td class="change">{ format!("{} → {}", name(m.from), name(m.to)) }</td>
                                        <td class="num">{ m.range.len() }</td>
                                    </tr>
                                }
                            }) }
                            if more > 0 {
                                <tr class="more"><td colspan="3">{ format!("… {more} more ranges") }</td></tr>
                            }
                        </tbody>
                    </table>
                }
                if !d.added.is_empty() || !d.removed.is_empty() {
                    <ul class="nodes">
                        { for d.added.iter().map(|n| html! {
                            <li class="node-added">{ format!("+ {} added", name(Some(*n))) }</li>
                        }) }
                        { for d.removed.iter().map(|n| html! {
                            <li class="node-removed">{ format!("− {} removed", name(Some(*n))) }</li>
                        }) }
                    </ul>
                }
            </div>
        </section>
    }
}
