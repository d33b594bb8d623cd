//! The story panel, above the tracks: what happened in time order, the root cause marked, each
//! step with its evidence and how sure it is; a click (or Enter) frames the step on the tracks,
//! and a step that is a finding brings that finding into focus.
//! A recording cut short says so here, first.

use slotscope_core::analysis::{Role, Step};
use slotscope_core::finding::FindingKind;
use slotscope_core::moment::at_clock;
use slotscope_core::Timestamp;
use yew::prelude::*;

use crate::clock;
use crate::dataset::Shared;
use crate::state::{Action, Focus};

/// How much of a step a click frames at most, milliseconds (a group that stops stays stopped
/// to the end; its moment is what to see).
const FRAME_MS: u64 = 10_000;

/// Properties of [`StoryPanel`].
#[derive(Clone, PartialEq, Properties)]
pub struct StoryProps {
    /// The loaded recording.
    pub data: Shared,
    /// Local time offset in minutes, `None` for UTC.
    pub offset: Option<i32>,
    /// Where actions go.
    pub dispatch: Callback<Action>,
}

/// The class and the words of a step's role.
fn role(s: &Step) -> (&'static str, &'static str) {
    match s.role {
        Role::RootCause => ("root-cause", "root cause"),
        Role::Trigger => ("trigger", "trigger"),
        Role::Effect => ("effect", "effect"),
        Role::Context => ("context", ""),
    }
}

/// The story.
#[function_component(StoryPanel)]
pub fn story_panel(props: &StoryProps) -> Html {
    let story = &props.data.analysis.story;
    let (start, end) = props.data.span();
    html! {
        <section class="panel story-panel" aria-label="What happened">
            if let Some(cut) = &story.cut_short {
                <div id="cut-short" class="banner warning" role="alert">
                    { cut.text(Timestamp(start)) }
                </div>
            }
            <h2>{ "What happened" }</h2>
            if story.steps.is_empty() {
                <p class="empty">{ "Nothing to tell: no node stopped, no slots moved and no finding." }</p>
            }
            <ol id="story">
                { for story.steps.iter().map(|s| {
                    let (class, words) = role(s);
                    let a = s.at.as_millis();
                    // A step is a moment: frame its first seconds, with the margin the jump
                    // adds before and after.
                    let b = s
                        .until
                        .map_or(a, Timestamp::as_millis)
                        .clamp(a + 1, a + FRAME_MS)
                        .min(end.max(a + 1));
                    // A step that is a finding brings it into focus; others frame their moment.
                    let focus = s
                        .finding
                        .and_then(|i| props.data.analysis.findings.get(i))
                        .map(|f| Focus {
                            kind: f.kind.name().to_owned(),
                            span: (f.span.start.as_millis(), f.span.end.as_millis()),
                        });
                    let jump = {
                        let dispatch = props.dispatch.clone();
                        move || {
                            dispatch.emit(match &focus {
                                Some(f) => Action::Focus(f.clone()),
                                None => Action::JumpTo(a, b),
                            })
                        }
                    };
                    let onclick = { let jump = jump.clone(); Callback::from(move |_: MouseEvent| jump()) };
                    let onkeydown = Callback::from(move |e: KeyboardEvent| {
                        if e.key() == "Enter" || e.key() == " " {
                            e.prevent_default();
                            jump();
                        }
                    });
                    let tag = if words.is_empty() {
                        s.confidence.word().to_owned()
                    } else {
                        format!("{words}, {}", s.confidence.word())
                    };
                    html! {
                        <li class={classes!("step", class)} data-kind={s.finding_kind.map_or_else(|| step_kind(s), FindingKind::name)}
                            data-role={class} tabindex="0" {onclick} {onkeydown}
                            title="Click or press Enter to frame it on the tracks">
                            <span class="step-when">
                                { at_clock(&clock::format(a, props.offset), s.at, Timestamp(start)) }
                            </span>
                            <span class="step-text">{ s.text.clone() }</span>
                            <span class="step-tag">{ tag }</span>
                            if !s.evidence.is_empty() {
                                <ul class="evidence">
                                    { for s.evidence.iter().map(|e| html! { <li>{ e.clone() }</li> }) }
                                </ul>
                            }
                        </li>
                    }
                }) }
            </ol>
            if !story.limits.is_empty() {
                <details class="limits" open={story.cut_short.is_some()}>
                    <summary>{ "What the recording cannot tell" }</summary>
                    <ul>{ for story.limits.iter().map(|l| html! { <li>{ l.clone() }</li> }) }</ul>
                </details>
            }
        </section>
    }
}

/// A step's kind as its snake_case name, for `data-kind`.
fn step_kind(s: &Step) -> &'static str {
    use slotscope_core::analysis::StepKind;
    match s.kind {
        StepKind::Creation => "creation",
        StepKind::NodeStopped => "node_stopped",
        StepKind::NodeBack => "node_back",
        StepKind::NodeAdded => "node_added",
        StepKind::NodeLeft => "node_left",
        StepKind::ConnectionsKilled => "connections_killed",
        StepKind::SlotsMoved => "slots_moved",
        StepKind::Promotion => "promotion",
        StepKind::Finding => "finding",
        StepKind::RecordingCut => "recording_cut",
    }
}
