//! The tracks: one canvas per track on one time axis, with zoom, pan, cursor, selection and the
//! hover readout.

use std::cell::RefCell;
use std::rc::Rc;

use gloo_events::{EventListener, EventListenerOptions};
use wasm_bindgen::JsCast;
use web_sys::{HtmlCanvasElement, WheelEvent};
use yew::prelude::*;

use crate::clock;
use crate::dataset::Shared;
use crate::draw::{self, Frame, TrackKind};
use crate::gesture::{self, Drag};
use crate::readout;
use crate::scale::TimeScale;
use crate::state::{Action, ViewState};

/// Properties of [`TracksView`].
#[derive(Clone, PartialEq, Properties)]
pub struct TracksProps {
    /// The view.
    pub state: ViewState,
    /// The loaded recording.
    pub data: Option<Shared>,
    /// Where actions go.
    pub dispatch: Callback<Action>,
    /// Local time offset in minutes, `None` for UTC.
    pub offset: Option<i32>,
    /// The what-if predictions to draw over the observed series (none, A, or A and B).
    #[prop_or_default]
    pub overlays: Vec<crate::whatif::Shared>,
}

fn width_of(root: &NodeRef) -> u32 {
    root.cast::<web_sys::HtmlElement>().map_or(800, |e| {
        u32::try_from(e.client_width()).unwrap_or(800).max(1)
    })
}

fn x_of(root: &NodeRef, client_x: i32) -> f64 {
    let left = root
        .cast::<web_sys::Element>()
        .map_or(0.0, |e| e.get_bounding_client_rect().left());
    f64::from(client_x) - left
}

/// The series whose legend entry is under the client point `(x, y)`, if any.
fn legend_at(
    canvases: &[NodeRef],
    tracks: &slotscope_core::track::Tracks,
    x: i32,
    y: i32,
) -> Option<String> {
    TrackKind::ALL
        .iter()
        .zip(canvases)
        .find_map(|(kind, node)| {
            let c = node.cast::<web_sys::Element>()?;
            let r = c.get_bounding_client_rect();
            let (lx, ly) = (f64::from(x) - r.left(), f64::from(y) - r.top());
            if lx < 0.0 || lx >= r.width() || ly < 0.0 || ly >= r.height() {
                return None;
            }
            draw::series::legend_hit(*kind, tracks, lx, ly)
        })
}

/// How long the wheel hint stays, milliseconds.
const WHEEL_HINT_MS: u32 = 2_500;

/// The pointer over the tracks.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Hover {
    /// The instant under it.
    t: u64,
    /// Where it is, client pixels.
    client: (i32, i32),
}

/// The tooltip's classes that flip it to the pointer's left or above it when the room to the
/// right or below runs out.
fn flip(h: Hover) -> Option<&'static str> {
    let w = web_sys::window()?;
    let width = w.inner_width().ok()?.as_f64()?;
    let height = w.inner_height().ok()?.as_f64()?;
    let left = f64::from(h.client.0) > width - 360.0;
    let up = f64::from(h.client.1) > height - 240.0;
    match (left, up) {
        (true, true) => Some("flip-x flip-y"),
        (true, false) => Some("flip-x"),
        (false, true) => Some("flip-y"),
        (false, false) => None,
    }
}

fn now() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

fn redraw(
    canvases: &[NodeRef],
    width: u32,
    state: &ViewState,
    data: &Shared,
    offset: Option<i32>,
    overlays: &[&crate::whatif::Overlay],
) {
    let began = now();
    let frame = Frame {
        state,
        scale: TimeScale::new(state.window, width),
        offset,
        theme: draw::Theme::current(),
    };
    for (kind, node) in TrackKind::ALL.iter().zip(canvases) {
        let Some(canvas) = node.cast::<HtmlCanvasElement>() else {
            continue;
        };
        let Some(area) = super::canvas::area(canvas, width, kind.height()) else {
            continue;
        };
        if let Err(e) = draw::track(*kind, &area, &frame, data, overlays) {
            web_sys::console::error_1(&format!("drawing {}: {e}", kind.name()).into());
        }
        let _ = area.present();
    }
    let ended = now();
    crate::hook::record_draw_ms(ended - began, ended);
}

/// The track canvases and the hover readout.
#[function_component(TracksView)]
pub fn tracks_view(props: &TracksProps) -> Html {
    let root = use_node_ref();
    let canvases = use_memo((), |_| {
        TrackKind::ALL
            .iter()
            .map(|_| NodeRef::default())
            .collect::<Vec<_>>()
    });
    // The instant under the pointer and where the pointer is (client pixels), for the tooltip.
    let hover = use_state(|| None::<Hover>);
    // A plain wheel turn over the tracks shows how to zoom, for a moment.
    let wheel_hint = use_state(|| false);
    let drag = use_mut_ref(|| None::<Drag>);
    let live: Rc<RefCell<ViewState>> = use_mut_ref(|| props.state.clone());
    *live.borrow_mut() = props.state.clone();
    let resized = use_state(|| 0u32);

    // Wheel zoom with Control or Meta (not passive, so that the page does not also scroll; a
    // plain turn scrolls the page and shows the hint) and window resizes.
    {
        let root = root.clone();
        let live = live.clone();
        let dispatch = props.dispatch.clone();
        let resized = resized.setter();
        let wheel_hint = wheel_hint.setter();
        use_effect_with((), move |_| {
            let mut listeners = Vec::new();
            if let Some(el) = root.cast::<web_sys::Element>() {
                let root2 = root.clone();
                listeners.push(EventListener::new_with_options(
                    &el,
                    "wheel",
                    EventListenerOptions::enable_prevent_default(),
                    move |e| {
                        let Some(e) = e.dyn_ref::<WheelEvent>() else {
                            return;
                        };
                        let state = live.borrow();
                        let scale = TimeScale::new(state.window, width_of(&root2));
                        let x = x_of(&root2, e.client_x());
                        let held = gesture::Modifiers {
                            ctrl: e.ctrl_key(),
                            meta: e.meta_key(),
                            alt: e.alt_key(),
                        };
                        match gesture::wheel(&state, &scale, x, e.delta_y(), held) {
                            Some(action) => {
                                e.prevent_default();
                                dispatch.emit(action);
                            }
                            None if state.data.is_some() && !(held.ctrl || held.meta) => {
                                wheel_hint.set(true);
                                let hint = wheel_hint.clone();
                                gloo_timers::callback::Timeout::new(WHEEL_HINT_MS, move || {
                                    hint.set(false)
                                })
                                .forget();
                            }
                            None => {}
                        }
                    },
                ));
            }
            if let Some(w) = web_sys::window() {
                let root = root.clone();
                listeners.push(EventListener::new(&w, "resize", move |_| {
                    resized.set(width_of(&root));
                }));
            }
            move || drop(listeners)
        });
    }

    // A new recording: forget the hover position of the old one.
    {
        let hover = hover.clone();
        use_effect_with(props.data.clone(), move |_| hover.set(None));
    }

    // Redraw when the view, the data, the width or the time zone change (not on hover).
    {
        let canvases = canvases.clone();
        let root = root.clone();
        use_effect_with(
            (
                props.state.clone(),
                props.data.clone(),
                *resized,
                props.offset,
                props.overlays.clone(),
            ),
            move |(state, data, _, offset, overlays)| {
                if let Some(data) = data {
                    let overlays: Vec<&crate::whatif::Overlay> =
                        overlays.iter().map(|p| &p.0.overlay).collect();
                    redraw(&canvases, width_of(&root), state, data, *offset, &overlays);
                }
            },
        );
    }

    let scale_now = {
        let root = root.clone();
        let live = live.clone();
        move || TimeScale::new(live.borrow().window, width_of(&root))
    };
    let onmousedown = {
        let drag = drag.clone();
        let root = root.clone();
        let canvases = canvases.clone();
        let data = props.data.clone();
        let dispatch = props.dispatch.clone();
        Callback::from(move |e: MouseEvent| {
            // A click on a legend entry turns its series off or on, and does nothing else.
            if e.button() == 0 {
                if let Some(key) = data
                    .as_ref()
                    .and_then(|d| legend_at(&canvases, &d.tracks, e.client_x(), e.client_y()))
                {
                    e.prevent_default();
                    dispatch.emit(Action::ToggleSeries(key));
                    return;
                }
            }
            let x = x_of(&root, e.client_x());
            let Some(d) = Drag::press(e.button(), x, e.shift_key()) else {
                return;
            };
            e.prevent_default();
            *drag.borrow_mut() = Some(d);
        })
    };
    let onmousemove = {
        let drag = drag.clone();
        let root = root.clone();
        let live = live.clone();
        let hover = hover.clone();
        let dispatch = props.dispatch.clone();
        let scale_now = scale_now.clone();
        Callback::from(move |e: MouseEvent| {
            let x = x_of(&root, e.client_x());
            let mut d = drag.borrow_mut();
            let Some(d) = d.as_mut() else {
                if live.borrow().data.is_some() {
                    hover.set(Some(Hover {
                        t: scale_now().time(x),
                        client: (e.client_x(), e.client_y()),
                    }));
                }
                return;
            };
            if let Some(action) = d.move_to(x, &scale_now()) {
                dispatch.emit(action);
            }
        })
    };
    let onmouseup = {
        let drag = drag.clone();
        let root = root.clone();
        let dispatch = props.dispatch.clone();
        Callback::from(move |e: MouseEvent| {
            let Some(d) = drag.borrow_mut().take() else {
                return;
            };
            if let Some(action) = d.release(x_of(&root, e.client_x()), &scale_now()) {
                dispatch.emit(action);
            }
        })
    };
    let onmouseleave = {
        let drag = drag.clone();
        let hover = hover.clone();
        Callback::from(move |_: MouseEvent| {
            *drag.borrow_mut() = None;
            hover.set(None);
        })
    };

    let hovered = *hover;
    let hover_text = match (&props.data, hovered.map(|h| h.t).or(props.state.cursor)) {
        (Some(data), Some(t)) => {
            let mut lines = vec![format!(
                "{} {}",
                if hover.is_some() { "at" } else { "cursor" },
                clock::format(t, props.offset)
            )];
            lines.extend(readout::at(&data.tracks, t));
            for p in &props.overlays {
                lines.extend(readout::predicted(&p.0.overlay, &data.tracks.grid, t));
            }
            lines.join("\n")
        }
        _ => String::new(),
    };

    html! {
        <>
            <div id="tracks" ref={root} {onmousedown} {onmousemove} {onmouseup} {onmouseleave}>
                { for TrackKind::ALL.iter().zip(canvases.iter()).map(|(kind, node)| html! {
                    <div class="track">
                        <div class="track-title">{ kind.title() }</div>
                        <canvas data-track={kind.name()} ref={node.clone()} height={kind.height().to_string()}
                            style={format!("height:{}px", kind.height())} />
                    </div>
                }) }
                if props.data.is_none() {
                    <p class="empty">{ "No recording loaded yet." }</p>
                }
            </div>
            if *wheel_hint {
                <div id="wheel-hint" class="wheel-hint" role="status">
                    { "Hold Ctrl (⌘ on a Mac) and turn the wheel to zoom; + and − zoom too" }
                </div>
            }
            // While the pointer is over the tracks the readout follows it (kept inside the
            // window: it flips to the pointer's other side near an edge); otherwise it shows the
            // cursor's values below the tracks.
            <pre id="hover" class={classes!(hovered.is_some().then_some("tooltip"), hovered.and_then(flip))}
                style={hovered.map(|h| format!("left:{}px;top:{}px", h.client.0, h.client.1))}>
                { hover_text }
            </pre>
        </>
    }
}
