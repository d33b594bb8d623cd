//! The client-side evidence panel: what a client recorded through `slotscope tap` sent and got
//! back, per command, beside the servers' counters for the same commands (which count every
//! client). Shown only for recordings with tap lines.

use yew::prelude::*;

use crate::dataset::Shared;

/// Properties of [`ClientSidePanel`].
#[derive(Clone, PartialEq, Properties)]
pub struct ClientSideProps {
    /// The loaded recording.
    pub data: Shared,
}

fn share(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_owned(), |s| format!("{:.1} %", s * 100.0))
}

/// The per-command table and the per-node line of the tapped client.
#[function_component(ClientSidePanel)]
pub fn client_side_panel(props: &ClientSideProps) -> Html {
    let analysis = &props.data.analysis;
    let tap = &analysis.tap;
    let rows = &props.data.versus;
    html! {
        <section class="panel client-side-panel">
            <h2>{ format!("Client-side evidence (tap: {} commands, {} connections)", tap.total.sent, tap.connections_opened) }</h2>
            <div id="client-side">
                <p class="note">{ "MOVED share as the tapped client saw it (MOVED ÷ commands it sent), beside the servers' rejected_calls ÷ (calls + rejected_calls), which count every client." }</p>
                <table>
                    <thead><tr>
                        <th>{ "command" }</th><th>{ "sent" }</th><th>{ "MOVED" }</th><th>{ "ASK" }</th>
                        <th>{ "client share" }</th><th>{ "server share" }</th>
                    </tr></thead>
                    <tbody>
                        { for rows.iter().map(|r| html! {
                            <tr class="command" data-command={r.cmd.clone()}>
                                <td class="label">{ r.cmd.clone() }</td>
                                <td class="num">{ r.sent }</td>
                                <td class="num">{ r.moved }</td>
                                <td class="num">{ r.ask }</td>
                                <td class="num client-share">{ share(Some(r.client_moved_share)) }</td>
                                <td class="num server-share">{ share(r.server_share()) }</td>
                            </tr>
                        }) }
                    </tbody>
                </table>
                <ul class="nodes">
                    { for tap.per_node.iter().map(|(node, c)| html! {
                        <li>{ format!("{node}: sent {}, MOVED {}, ASK {}, mean latency {:.0} µs", c.sent, c.moved, c.ask, c.mean_latency_us()) }</li>
                    }) }
                </ul>
            </div>
        </section>
    }
}
