//! The client census panel: client groups with their library, connections, lifetimes, commands.

use yew::prelude::*;

use crate::dataset::Shared;

/// Properties of [`CensusPanel`].
#[derive(Clone, PartialEq, Properties)]
pub struct CensusProps {
    /// The loaded recording.
    pub data: Shared,
}

/// The census table.
#[function_component(CensusPanel)]
pub fn census_panel(props: &CensusProps) -> Html {
    let groups = &props.data.analysis.census.groups;
    html! {
        <section class="panel census-panel">
            <h2>{ format!("Client census ({} groups)", groups.len()) }</h2>
            <div id="census">
                if groups.is_empty() {
                    <p class="empty">{ "No CLIENT LIST samples in this recording." }</p>
                } else {
                    <table>
                        <thead><tr>
                            <th>{ "group" }</th><th>{ "lib-name/lib-ver" }</th><th>{ "connections" }</th>
                            <th title="median lifetime of closed connections">{ "median life" }</th><th>{ "new/s" }</th><th>{ "commands" }</th>
                        </tr></thead>
                        <tbody>
                            { for groups.iter().map(|g| {
                                let lib = format!("{}/{}",
                                    g.key.lib_name.as_deref().unwrap_or("?"),
                                    g.key.lib_ver.as_deref().unwrap_or("?"));
                                let mut cmds: Vec<(&String, &u64)> = g.commands.iter().collect();
                                cmds.sort_by_key(|(_, n)| std::cmp::Reverse(**n));
                                let cmds: Vec<String> = cmds.iter().take(6).map(|(c, n)| format!("{c} ({n})")).collect();
                                html! {
                                    <tr class="group">
                                        <td class="label">{ g.key.label() }</td>
                                        <td class="lib">{ lib }</td>
                                        <td class="num">{ format!("{} seen · {} open (max {})", g.connections_seen, g.open_last, g.open_max) }</td>
                                        <td class="num">{ g.median_lifetime_secs().map_or_else(|| "–".to_owned(), |s| format!("{s} s")) }</td>
                                        <td class="num">{ format!("{:.1}", g.new_per_sec) }</td>
                                        <td class="commands">{ cmds.join(", ") }</td>
                                    </tr>
                                }
                            }) }
                        </tbody>
                    </table>
                }
            </div>
        </section>
    }
}
