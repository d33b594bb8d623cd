//! The findings panel: the one the root cause rests on first, then by importance (the analysis's
//! order); a click jumps to the finding's evidence.

use slotscope_core::finding::Finding;
use slotscope_core::moment::at_clock;
use slotscope_core::quantity::labelled;
use slotscope_core::time::format_millis;
use slotscope_core::Timestamp;
use yew::prelude::*;

use crate::clock;
use crate::dataset::Shared;
use crate::state::Action;

/// Properties of [`FindingsPanel`].
#[derive(Clone, PartialEq, Properties)]
pub struct FindingsProps {
    /// The loaded recording.
    pub data: Shared,
    /// Local time offset in minutes, `None` for UTC.
    pub offset: Option<i32>,
    /// Where actions go.
    pub dispatch: Callback<Action>,
}

fn severity(f: &Finding) -> &'static str {
    match f.severity {
        slotscope_core::finding::Severity::Critical => "critical",
        slotscope_core::finding::Severity::Warning => "warning",
        slotscope_core::finding::Severity::Info => "info",
    }
}

/// The findings list.
#[function_component(FindingsPanel)]
pub fn findings_panel(props: &FindingsProps) -> Html {
    let findings: Vec<&Finding> = props.data.analysis.findings.iter().collect();
    let start = props.data.span().0;
    html! {
        <section class="panel findings-panel">
            <h2>{ format!("Findings ({})", findings.len()) }</h2>
            if findings.is_empty() {
                <p class="empty">{ "No findings: nothing in this recording looks like a routing incident." }</p>
            }
            <ol id="findings">
                { for findings.into_iter().map(|f| {
                    let (a, b) = (f.span.start.as_millis(), f.span.end.as_millis());
                    let dispatch = props.dispatch.clone();
                    let onclick = Callback::from(move |_: MouseEvent| dispatch.emit(Action::JumpTo(a, b)));
                    let numbers: Vec<String> = f.numbers.iter().map(|(k, v)| labelled(k, *v)).collect();
                    html! {
                        <li class={classes!("finding", severity(f))} data-kind={f.kind.name()} {onclick}
                            title="Click to jump to the evidence">
                            <div class="finding-head">
                                <span class="severity">{ severity(f) }</span>
                                <span class="finding-title">{ f.title.clone() }</span>
                            </div>
                            <div class="finding-when">
                                { format!("{}, for {}",
                                    at_clock(&clock::format(a, props.offset), f.span.start, Timestamp(start)),
                                    format_millis(b.saturating_sub(a))) }
                                if let Some(n) = &f.node { { format!(" · node {n}") } }
                            </div>
                            if let Some(att) = &f.attribution {
                                <div class="attribution">{ format!("attributed to: {}", att.describe()) }</div>
                            }
                            if !numbers.is_empty() {
                                <div class="numbers">{ numbers.join(" · ") }</div>
                            }
                            <p class="explanation">{ f.explanation.clone() }</p>
                            { for f.context.iter().map(|c| html! { <div class="context">{ c.clone() }</div> }) }
                        </li>
                    }
                }) }
            </ol>
        </section>
    }
}
