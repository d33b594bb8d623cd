//! The client census panel: client groups with their library, connections, lifetimes, commands;
//! each column's header says what its numbers mean (the census's own legend), and the clients no
//! poll saw, inferred from the counters, follow the table.

use slotscope_core::census::COLUMNS;
use slotscope_core::moment::at_clock;
use slotscope_core::Timestamp;
use yew::prelude::*;

use crate::clock;
use crate::dataset::Shared;

/// Properties of [`CensusPanel`].
#[derive(Clone, PartialEq, Properties)]
pub struct CensusProps {
    /// The loaded recording.
    pub data: Shared,
    /// Local time offset in minutes, `None` for UTC.
    pub offset: Option<i32>,
}

/// What the census says a column means (its legend), for a header's tooltip.
fn meaning(column: &str) -> String {
    COLUMNS
        .iter()
        .find(|(name, _)| *name == column)
        .map_or_else(String::new, |(_, m)| (*m).to_owned())
}

/// The census table.
#[function_component(CensusPanel)]
pub fn census_panel(props: &CensusProps) -> Html {
    let census = &props.data.analysis.census;
    let groups = &census.groups;
    let start = Timestamp(props.data.span().0);
    html! {
        <section class="panel census-panel">
            <h2>{ format!("Client census ({} groups)", groups.len()) }</h2>
            <div id="census">
                if groups.is_empty() {
                    <p class="empty">{ "No CLIENT LIST samples in this recording." }</p>
                } else {
                    <table>
                        <thead><tr>
                            <th>{ "group" }</th><th title="lib-name / lib-ver (CLIENT SETINFO)">{ "library" }</th>
                            <th title={meaning("seen")}>{ "connections" }</th>
                            <th title={meaning("lifetime")}>{ "median life" }</th>
                            <th title={meaning("new/s")}>{ "new/s" }</th>
                            <th title={meaning("cmds")}>{ "commands" }</th>
                        </tr></thead>
                        <tbody>
                            { for groups.iter().map(|g| {
                                let lib = format!("{}/{}",
                                    g.key.lib_name.as_deref().unwrap_or("?"),
                                    g.key.lib_ver.as_deref().unwrap_or("?"));
                                let mut cmds: Vec<(&String, &u64)> = g.commands.iter().collect();
                                cmds.sort_by_key(|(_, n)| std::cmp::Reverse(**n));
                                let cmds: Vec<String> = cmds.iter().take(6).map(|(c, n)| format!("{c} ({n})")).collect();
                                let merged = g.merged_connections();
                                html! {
                                    <tr class="group">
                                        <td class="label">{ g.key.label() }</td>
                                        <td class="lib">{ lib }</td>
                                        <td class="num" title={meaning("merged")}>
                                            { format!("{} seen · {} open (max {})", g.connections_seen, g.open_last, g.open_max) }
                                            if merged > 0 { { format!(" · {merged} mid-handshake") } }
                                        </td>
                                        <td class="num">{ g.median_lifetime_secs().map_or_else(|| "–".to_owned(), |s| format!("{s} s")) }</td>
                                        <td class="num">{ format!("{:.1}", g.new_per_sec) }</td>
                                        <td class="commands">{ cmds.join(", ") }</td>
                                    </tr>
                                }
                            }) }
                        </tbody>
                    </table>
                }
                if !census.inferred.is_empty() {
                    <h3>{ "Inferred from counters (no CLIENT LIST poll saw them)" }</h3>
                    <ul id="inferred">
                        { for census.inferred.iter().map(|g| html! {
                            <li class="inferred">
                                <strong>{ g.label() }</strong>
                                { format!(" from {}: {}",
                                    at_clock(&clock::format(g.span.start.as_millis(), props.offset), g.span.start, start),
                                    g.reason) }
                            </li>
                        }) }
                    </ul>
                }
            </div>
        </section>
    }
}
