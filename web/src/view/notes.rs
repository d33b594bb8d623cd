//! The reader's own notes: added at the cursor, listed under the story (a click frames one, ×
//! removes it), drawn on the events track, kept in the URL hash and in the exported report.

use slotscope_core::moment::at_clock;
use slotscope_core::Timestamp;
use yew::prelude::*;

use crate::clock;
use crate::state::Action;

/// How much a click on a note frames on each side of it, milliseconds.
const NOTE_FRAME_MS: u64 = 5_000;

/// Properties of [`NotesPanel`].
#[derive(Clone, PartialEq, Properties)]
pub struct NotesProps {
    /// The notes, in time order.
    pub notes: Vec<(u64, String)>,
    /// The cursor, where a new note goes.
    pub cursor: Option<u64>,
    /// The recording's start, for "+5.5s".
    pub start: u64,
    /// Local time offset in minutes, `None` for UTC.
    pub offset: Option<i32>,
    /// Where actions go.
    pub dispatch: Callback<Action>,
}

/// The notes and the button that adds one.
#[function_component(NotesPanel)]
pub fn notes_panel(props: &NotesProps) -> Html {
    let on_add = {
        let (dispatch, cursor, offset) = (props.dispatch.clone(), props.cursor, props.offset);
        Callback::from(move |_: MouseEvent| {
            let Some(t) = cursor else {
                return;
            };
            let asked = format!(
                "A note at {} (kept in the link and the report):",
                clock::format(t, offset)
            );
            let text = web_sys::window()
                .and_then(|w| w.prompt_with_message(&asked).ok().flatten())
                .unwrap_or_default();
            dispatch.emit(Action::AddNote(t, text));
        })
    };
    let start = Timestamp(props.start);
    html! {
        <div class="notes">
            <button id="add-note" onclick={on_add} disabled={props.cursor.is_none()}
                title="Add a note of your own at the cursor: it is drawn on the events track, kept in the link and in the report">
                { "✎ Note at the cursor" }
            </button>
            if !props.notes.is_empty() {
                <ul id="notes">
                    { for props.notes.iter().enumerate().map(|(i, (t, text))| {
                        let t = *t;
                        let frame = {
                            let dispatch = props.dispatch.clone();
                            Callback::from(move |_: MouseEvent| dispatch.emit(Action::JumpTo(
                                t.saturating_sub(NOTE_FRAME_MS), t + NOTE_FRAME_MS)))
                        };
                        let remove = {
                            let dispatch = props.dispatch.clone();
                            Callback::from(move |e: MouseEvent| {
                                e.stop_propagation();
                                dispatch.emit(Action::RemoveNote(i));
                            })
                        };
                        html! {
                            <li class="note" onclick={frame} title="Click to frame it on the tracks">
                                <span class="note-when">{ at_clock(&clock::format(t, props.offset), Timestamp(t), start) }</span>
                                <span class="note-text">{ text.clone() }</span>
                                <button class="note-remove" onclick={remove} title="Remove this note">{ "×" }</button>
                            </li>
                        }
                    }) }
                </ul>
            }
        </div>
    }
}
