//! One finding of `slotscope analyze`'s report: its title, what it means, who it is put down to,
//! where it sits relative to what happened, and its numbers with labels and units.

use std::fmt::Write as _;

use slotscope_core::finding::{Finding, Severity};
use slotscope_core::moment::at;
use slotscope_core::quantity::labelled;
use slotscope_core::Timestamp;

use super::{hang, wrap};

/// One finding, numbered from 1 in the order the analysis gives (most important first).
#[derive(Clone, Debug, PartialEq)]
pub struct FindingEntry {
    /// Its number in the list.
    pub number: usize,
    /// How much it matters.
    pub severity: Severity,
    /// Its kind's name (`idle_shard`, …).
    pub kind: &'static str,
    /// Its kind in words (`idle shard`, …).
    pub kind_words: &'static str,
    /// When it starts (see [`at`]).
    pub from: String,
    /// When it ends.
    pub to: String,
    /// One line.
    pub title: String,
    /// What it means.
    pub explanation: String,
    /// The client group it is put down to.
    pub attribution: Option<String>,
    /// What else the recording shows around it.
    pub context: Vec<String>,
    /// The numbers behind it, `label: value unit`.
    pub numbers: Vec<String>,
}

impl FindingEntry {
    /// The finding numbered `number`; times from `start`.
    pub fn of(position: usize, f: &Finding, start: Timestamp) -> FindingEntry {
        FindingEntry {
            number: position,
            severity: f.severity,
            kind: f.kind.name(),
            kind_words: f.kind.words(),
            from: at(f.span.start, start),
            to: at(f.span.end, start),
            title: f.title.clone(),
            explanation: f.explanation.clone(),
            attribution: f.attribution.as_ref().map(|a| a.describe()),
            context: f.context.clone(),
            numbers: f.numbers.iter().map(|(k, v)| labelled(k, *v)).collect(),
        }
    }

    /// A numbered block, title and explanation wrapped at 100 characters.
    pub fn text(&self) -> String {
        let mut o = format!(
            "{:>3}. [{:?}] {} ({})  {} .. {}\n",
            self.number, self.severity, self.kind_words, self.kind, self.from, self.to
        );
        o.push_str(&wrap(&self.title, 100, "     "));
        o.push_str(&wrap(&self.explanation, 100, "       "));
        if let Some(attr) = &self.attribution {
            let _ = writeln!(o, "     attributed to: {attr}");
        }
        for c in &self.context {
            let _ = writeln!(o, "     context: {c}");
        }
        if !self.numbers.is_empty() {
            o.push_str(&hang(
                &self.numbers.join("; "),
                100,
                "     figures: ",
                "              ",
            ));
        }
        o
    }

    /// A numbered list item with its details as sub-items.
    pub fn markdown(&self) -> String {
        let mut o = format!(
            "{}. **{}** (`{}`, {:?}, {} – {}): {}\n\n",
            self.number, self.title, self.kind, self.severity, self.from, self.to, self.explanation
        );
        if let Some(attr) = &self.attribution {
            let _ = writeln!(o, "   - Attributed to: {attr}");
        }
        for c in &self.context {
            let _ = writeln!(o, "   - Context: {c}");
        }
        let _ = writeln!(o, "   - Figures: {}\n", self.numbers.join("; "));
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finding_as_text_and_markdown() {
        let f = FindingEntry {
            number: 2,
            severity: Severity::Warning,
            kind: "redirect_storm",
            kind_words: "redirect storm",
            from: "05:17:18 (+4.2s)".into(),
            to: "05:17:20 (+6.0s)".into(),
            title: "MOVED storm".into(),
            explanation: "Most commands were redirected.".into(),
            attribution: Some("api (via get)".into()),
            context: vec!["a slot move began 1.0s before".into()],
            numbers: vec!["MOVED replies: 120.0/s".into(), "share: 41.2 %".into()],
        };
        assert_eq!(
            f.text(),
            "  2. [Warning] redirect storm (redirect_storm)  05:17:18 (+4.2s) .. 05:17:20 (+6.0s)\n     \
             MOVED storm\n       \
             Most commands were redirected.\n     \
             attributed to: api (via get)\n     \
             context: a slot move began 1.0s before\n     \
             figures: MOVED replies: 120.0/s; share: 41.2 %\n"
        );
        assert_eq!(
            f.markdown(),
            "2. **MOVED storm** (`redirect_storm`, Warning, 05:17:18 (+4.2s) – 05:17:20 (+6.0s)): \
             Most commands were redirected.\n\n   \
             - Attributed to: api (via get)\n   \
             - Context: a slot move began 1.0s before\n   \
             - Figures: MOVED replies: 120.0/s; share: 41.2 %\n\n"
        );
    }
}
