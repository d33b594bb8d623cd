//! The slot map panel: the 16384 slots at the cursor coloured by owner, a legend with each node's
//! slot count, and the slot under the mouse.

use web_sys::HtmlCanvasElement;
use yew::prelude::*;

use slotscope_core::Timestamp;

use crate::clock;
use crate::dataset::Shared;
use crate::draw::slotmap::{self, SIZE};

/// Properties of [`SlotMapPanel`].
#[derive(Clone, PartialEq, Properties)]
pub struct SlotMapProps {
    /// The loaded recording.
    pub data: Shared,
    /// The instant shown (the cursor); `None`: the recording's start.
    pub cursor: Option<u64>,
    /// Local time offset in minutes, `None` for UTC.
    pub offset: Option<i32>,
}

/// "1 slot", "8192 slots".
fn slots(n: usize) -> String {
    if n == 1 {
        "1 slot".to_owned()
    } else {
        format!("{n} slots")
    }
}

/// The slot map at the cursor.
#[function_component(SlotMapPanel)]
pub fn slot_map_panel(props: &SlotMapProps) -> Html {
    let canvas = use_node_ref();
    let hover = use_state(|| None::<u16>);
    let t = props.cursor.unwrap_or(props.data.span().0);
    let tracks = &props.data.tracks;
    let layout = tracks.layout_at(Timestamp(t));

    {
        let canvas = canvas.clone();
        use_effect_with((props.data.clone(), t), move |(data, t)| {
            let Some(c) = canvas.cast::<HtmlCanvasElement>() else {
                return;
            };
            let Some(area) = super::canvas::area(c, SIZE, SIZE) else {
                return;
            };
            if let Err(e) = slotmap::draw(&area, data.tracks.layout_at(Timestamp(*t))) {
                web_sys::console::error_1(&format!("drawing the slot map: {e}").into());
            }
            let _ = area.present();
        });
    }

    let onmousemove = {
        let hover = hover.clone();
        let canvas = canvas.clone();
        Callback::from(move |e: MouseEvent| {
            let size = canvas
                .cast::<HtmlCanvasElement>()
                .map_or((0, 0), |c| (c.client_width(), c.client_height()));
            hover.set(slotmap::slot_at(e.offset_x(), e.offset_y(), size.0, size.1));
        })
    };
    let onmouseleave = {
        let hover = hover.clone();
        Callback::from(move |_: MouseEvent| hover.set(None))
    };

    let counts = slotmap::counts(layout, tracks.nodes.len());
    let assigned: usize = counts.iter().sum();
    let migrating = slotmap::migrating_count(layout);
    let hover_text = match *hover {
        Some(slot) => slotmap::describe(slot, layout, &tracks.nodes),
        None => "Hover a cell for its slot, owner and migration.".to_owned(),
    };
    let unassigned = usize::from(slotscope_core::SLOT_COUNT).saturating_sub(assigned);

    html! {
        <section class="panel slotmap-panel">
            <h2>{ format!("Slot map at {}", clock::format(t, props.offset)) }</h2>
            <div id="slotmap">
                <canvas data-panel="slotmap" ref={canvas} width={SIZE.to_string()} height={SIZE.to_string()}
                    {onmousemove} {onmouseleave} />
                <ul class="legend">
                    { for tracks.nodes.iter().zip(&counts).enumerate().map(|(i, (addr, n))| html! {
                        <li class="legend-node" data-node={addr.to_string()}>
                            <span class="swatch" style={format!("background:{}", slotmap::css_color(i))} />
                            <span class="addr">{ addr.to_string() }</span>
                            <span class="count">{ slots(*n) }</span>
                        </li>
                    }) }
                    <li class="legend-migrating">
                        <span class="swatch migrating" />
                        <span class="addr">{ "migrating" }</span>
                        <span class="count">{ slots(migrating) }</span>
                    </li>
                    if unassigned > 0 {
                        <li class="legend-unassigned">
                            <span class="swatch unassigned" />
                            <span class="addr">{ "unassigned" }</span>
                            <span class="count">{ slots(unassigned) }</span>
                        </li>
                    }
                </ul>
            </div>
            <div id="slotmap-hover">{ hover_text }</div>
        </section>
    }
}
