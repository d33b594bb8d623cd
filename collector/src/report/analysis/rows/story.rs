//! The story at the top of `slotscope analyze`'s report: what happened, in time order, each step
//! with its evidence and how sure it is, the root cause marked, then what the recording cannot
//! tell.

use std::fmt::Write as _;

use slotscope_core::analysis::{Role, Step, Story};
use slotscope_core::moment::at;
use slotscope_core::Timestamp;

use super::{hang, wrap};

/// One step of the story.
#[derive(Clone, Debug, PartialEq)]
pub struct StoryRow {
    /// When (see [`at`]), and until when when it ended.
    pub when: String,
    /// What happened.
    pub text: String,
    /// Its part: `root cause`, `trigger`, `effect`, or empty.
    pub role: &'static str,
    /// How sure it is (`seen`, `likely`, `possible`).
    pub confidence: &'static str,
    /// What it rests on.
    pub evidence: Vec<String>,
}

impl StoryRow {
    /// The row of `s`; times from `start`.
    pub fn of(s: &Step, start: Timestamp) -> StoryRow {
        StoryRow {
            when: at(s.at, start),
            text: match s.finding {
                Some(i) => format!("{} (finding {})", s.text, i + 1),
                None => s.text.clone(),
            },
            role: match s.role {
                Role::RootCause => "root cause",
                Role::Trigger => "trigger",
                Role::Effect => "effect",
                Role::Context => "",
            },
            confidence: s.confidence.word(),
            evidence: s.evidence.clone(),
        }
    }

    /// `[root cause, likely]`, `[seen]`.
    fn tag(&self) -> String {
        if self.role.is_empty() {
            format!("[{}]", self.confidence)
        } else {
            format!("[{}, {}]", self.role, self.confidence)
        }
    }

    /// A line (marked `>>` for the root cause), its evidence wrapped below.
    pub fn text(&self) -> String {
        let mark = if self.role == "root cause" {
            ">>"
        } else {
            "  "
        };
        let mut o = String::new();
        let head = format!("{} {}", self.text, self.tag());
        let body = wrap(&head, 96, "");
        for (k, line) in body.lines().enumerate() {
            if k == 0 {
                let _ = writeln!(o, "{mark} {}  {line}", self.when);
            } else {
                let _ = writeln!(o, "   {:width$}  {line}", "", width = self.when.len());
            }
        }
        for e in &self.evidence {
            o.push_str(&hang(e, 94, "        - ", "          "));
        }
        o
    }

    /// A list item; the root cause in bold.
    pub fn markdown(&self) -> String {
        let text = if self.role == "root cause" {
            format!("**Root cause: {}**", self.text)
        } else {
            self.text.clone()
        };
        let mut o = format!("1. {} — {} {}\n", self.when, text, self.tag());
        for e in &self.evidence {
            let _ = writeln!(o, "   - {e}");
        }
        o
    }
}

/// The story section: its steps and what the recording cannot tell.
#[derive(Clone, Debug, PartialEq)]
pub struct StorySection {
    /// The steps, in time order.
    pub steps: Vec<StoryRow>,
    /// What the recording cannot tell.
    pub limits: Vec<String>,
}

impl StorySection {
    /// The section of `story`; times from `start`.
    pub fn of(story: &Story, start: Timestamp) -> StorySection {
        StorySection {
            steps: story.steps.iter().map(|s| StoryRow::of(s, start)).collect(),
            limits: story.limits.clone(),
        }
    }

    /// The section as text.
    pub fn text(&self) -> String {
        let mut o = String::from("\nWHAT HAPPENED (in time order; >> marks the root cause)\n");
        if self.steps.is_empty() {
            o.push_str("  nothing: no node stopped, no slots moved and no finding to tell\n");
        }
        for s in &self.steps {
            o.push_str(&s.text());
        }
        if !self.limits.is_empty() {
            o.push_str("\nWHAT THE RECORDING CANNOT TELL\n");
            for l in &self.limits {
                o.push_str(&hang(l, 96, "  - ", "    "));
            }
        }
        o
    }

    /// The section as Markdown.
    pub fn markdown(&self) -> String {
        let mut o = String::from("### What happened\n\n");
        if self.steps.is_empty() {
            o.push_str("Nothing to tell: no node stopped, no slots moved and no finding.\n");
        }
        for s in &self.steps {
            o.push_str(&s.markdown());
        }
        o.push('\n');
        if !self.limits.is_empty() {
            o.push_str("**What the recording cannot tell**\n\n");
            for l in &self.limits {
                let _ = writeln!(o, "- {l}");
            }
            o.push('\n');
        }
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(role: &'static str) -> StoryRow {
        StoryRow {
            when: "05:17:27 (+2.0s)".into(),
            text: "group api stops".into(),
            role,
            confidence: "likely",
            evidence: vec!["finding: api stopped".into()],
        }
    }

    #[test]
    fn the_root_cause_is_marked_in_text_and_markdown() {
        assert_eq!(
            row("root cause").text(),
            ">> 05:17:27 (+2.0s)  group api stops [root cause, likely]\n        - finding: api stopped\n"
        );
        assert_eq!(
            row("").text(),
            "   05:17:27 (+2.0s)  group api stops [likely]\n        - finding: api stopped\n"
        );
        assert_eq!(
            row("root cause").markdown(),
            "1. 05:17:27 (+2.0s) — **Root cause: group api stops** [root cause, likely]\n   - finding: api stopped\n"
        );
    }

    #[test]
    fn a_section_says_what_it_cannot_tell() {
        let s = StorySection {
            steps: vec![row("effect")],
            limits: vec!["The recording has no end line.".into()],
        };
        let t = s.text();
        assert!(t.starts_with("\nWHAT HAPPENED"), "{t}");
        assert!(
            t.contains("WHAT THE RECORDING CANNOT TELL\n  - The recording has no end line.\n"),
            "{t}"
        );
        assert!(s
            .markdown()
            .contains("**What the recording cannot tell**\n\n- The recording"));
        let empty = StorySection {
            steps: vec![],
            limits: vec![],
        };
        assert!(empty.text().contains("nothing:"));
    }
}
