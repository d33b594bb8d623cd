//! The findings panel: the one the root cause rests on first, then by importance (the analysis's
//! order). A click (or Enter, each finding is reachable with Tab) brings a finding into focus:
//! its interval shaded on every track, framed with what came before and after, and named in the
//! URL hash.

use slotscope_core::finding::Finding;
use slotscope_core::moment::at_clock;
use slotscope_core::quantity::labelled;
use slotscope_core::time::format_millis;
use slotscope_core::Timestamp;
use yew::prelude::*;

use crate::clock;
use crate::dataset::Shared;
use crate::state::{Action, Focus};

/// Properties of [`FindingsPanel`].
#[derive(Clone, PartialEq, Properties)]
pub struct FindingsProps {
    /// The loaded recording.
    pub data: Shared,
    /// Local time offset in minutes, `None` for UTC.
    pub offset: Option<i32>,
    /// The finding in focus.
    pub focus: Option<Focus>,
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
                    let focused = props.focus.as_ref().is_some_and(|x| x.is(f.kind.name(), (a, b)));
                    let focus = {
                        let dispatch = props.dispatch.clone();
                        let kind = f.kind.name().to_owned();
                        move || dispatch.emit(Action::Focus(Focus { kind: kind.clone(), span: (a, b) }))
                    };
                    let onclick = { let focus = focus.clone(); Callback::from(move |_: MouseEvent| focus()) };
                    let onkeydown = Callback::from(move |e: KeyboardEvent| {
                        if e.key() == "Enter" || e.key() == " " {
                            e.prevent_default();
                            focus();
                        }
                    });
                    let numbers: Vec<String> = f.numbers.iter().map(|(k, v)| labelled(k, *v)).collect();
                    html! {
                        <li class={classes!("finding", severity(f), focused.then_some("focused"))}
                            data-kind={f.kind.name()} tabindex="0" aria-current={focused.then_some("true")}
                            {onclick} {onkeydown}
                            title="Click or press Enter to shade it on the tracks (Escape drops it)">
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
