//! The viewer's state and its reducer: plain data, no Yew or web-sys types, so every rule (zoom,
//! pan, cursor, selection, the URL hash) is tested natively.
//!
//! Times are milliseconds since the Unix epoch, as in the recording.

use std::collections::BTreeSet;

use serde::Serialize;
use slotscope_core::percent;

/// The narrowest window zoom goes down to, in milliseconds.
pub const MIN_WINDOW_MS: u64 = 200;

/// How much one zoom step (a key press, a wheel notch) narrows or widens the window.
pub const ZOOM_STEP: f64 = 1.25;

/// The share of the window one pan key press moves it by.
pub const PAN_STEP: f64 = 0.1;

/// The share of a finding's span added on each side when jumping to it.
pub const JUMP_MARGIN: f64 = 0.25;

/// The least time shown on each side of a finding brought into focus, milliseconds: what came
/// just before it (a node that stalled, slots that moved) and what followed.
pub const FOCUS_CONTEXT_MS: u64 = 3_000;

/// How much of a long finding (one that lasts to the end) focus frames, milliseconds: its
/// beginning is what to see; the shading shows the rest when zoomed out.
pub const FOCUS_FRAME_MS: u64 = 10_000;

/// A finding in focus: its interval shaded on every track, its events marked, and its name in
/// the URL hash (`f=KIND-START-END`), so a shared link opens on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Focus {
    /// The finding's kind (`client_group_lost`, …).
    pub kind: String,
    /// Its span `[start, end]`, epoch milliseconds.
    pub span: (u64, u64),
}

impl Focus {
    /// The hash value: `KIND-START-END`.
    pub fn encode(&self) -> String {
        format!("{}-{}-{}", self.kind, self.span.0, self.span.1)
    }

    /// Reads [`Focus::encode`]'s text; `None` when malformed.
    pub fn decode(text: &str) -> Option<Focus> {
        let mut parts = text.rsplitn(3, '-');
        let b = parts.next()?.parse::<u64>().ok()?;
        let a = parts.next()?.parse::<u64>().ok()?;
        let kind = parts.next()?;
        let valid = !kind.is_empty()
            && kind
                .bytes()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_');
        (valid && a <= b).then(|| Focus {
            kind: kind.to_owned(),
            span: (a, b),
        })
    }

    /// Whether it is the finding of `kind` over `span`.
    pub fn is(&self, kind: &str, span: (u64, u64)) -> bool {
        self.kind == kind && self.span == span
    }
}

/// A panel that can be opened or closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Panel {
    /// The findings list.
    Findings,
    /// The client census.
    Census,
    /// The 16384-slot map at the cursor.
    SlotMap,
    /// The topology diff between two instants.
    TopologyDiff,
    /// The what-if replay of a client model.
    Whatif,
}

impl Panel {
    /// Every panel, in display order.
    pub const ALL: [Panel; 5] = [
        Panel::Findings,
        Panel::Census,
        Panel::SlotMap,
        Panel::TopologyDiff,
        Panel::Whatif,
    ];

    /// The panels open on a first visit.
    pub const DEFAULT_OPEN: [Panel; 2] = [Panel::Findings, Panel::Census];

    /// The name used in the URL hash and the DOM (the `id` of the panel's element).
    pub fn name(self) -> &'static str {
        match self {
            Panel::Findings => "findings",
            Panel::Census => "census",
            Panel::SlotMap => "slotmap",
            Panel::TopologyDiff => "topology-diff",
            Panel::Whatif => "whatif",
        }
    }

    /// The panel called `name`.
    pub fn from_name(name: &str) -> Option<Panel> {
        Panel::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// What the viewer shows.
#[derive(Clone, Debug, PartialEq)]
pub struct ViewState {
    /// The span of the loaded recording `[start, end]`, if one is loaded.
    pub data: Option<(u64, u64)>,
    /// The visible time window `[start, end]`.
    pub window: (u64, u64),
    /// The shared cursor.
    pub cursor: Option<u64>,
    /// A selected range `[start, end]`.
    pub selection: Option<(u64, u64)>,
    /// The finding in focus.
    pub focus: Option<Focus>,
    /// The reader's own notes, `(instant, text)` in time order (kept in the hash, `n=`).
    pub notes: Vec<(u64, String)>,
    /// Series turned off by a click on their legend entry (`track:label`, see
    /// [`crate::draw::series::series_key`]).
    pub hidden: BTreeSet<String>,
    /// Open panels.
    pub panels: BTreeSet<Panel>,
    /// The name of the loaded recording.
    pub loaded: Option<String>,
    /// The URL the recording was loaded from, when it can be loaded again (not a local file).
    pub source: Option<String>,
    /// Number of findings of the loaded recording.
    pub findings: usize,
    /// Times in UTC (`true`) or local time.
    pub utc: bool,
    /// Set by [`Action::Restore`]: the next load keeps the restored window if it fits the data.
    pub restored: bool,
    /// The loaded data is a preview: the first part of a recording still loading.
    pub partial: bool,
    /// Where a pre-flight's predicted tracks end, past the recording's end: the window may go
    /// there (epoch milliseconds; `None`: the recording's span bounds it).
    pub beyond: Option<u64>,
}

impl Default for ViewState {
    fn default() -> Self {
        ViewState {
            data: None,
            window: (0, 0),
            cursor: None,
            selection: None,
            focus: None,
            notes: Vec::new(),
            hidden: BTreeSet::new(),
            panels: Panel::DEFAULT_OPEN.into_iter().collect(),
            loaded: None,
            source: None,
            findings: 0,
            utc: true,
            restored: false,
            partial: false,
            beyond: None,
        }
    }
}

/// Something that changes the state.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// A recording finished loading.
    Loaded {
        /// Its display name.
        name: String,
        /// Its URL when it came from one.
        source: Option<String>,
        /// The span it covers.
        span: (u64, u64),
        /// How many findings it has.
        findings: usize,
    },
    /// The first part of a recording that is still loading, shown while the rest loads. The
    /// `Loaded` of the same recording that follows keeps what the user did meanwhile.
    Preview {
        /// Its display name.
        name: String,
        /// Its URL when it came from one.
        source: Option<String>,
        /// The span read so far.
        span: (u64, u64),
        /// How many findings the part read so far has.
        findings: usize,
    },
    /// Zoom by `factor` (> 1 zooms in) keeping the instant `at` at the same place.
    ZoomAt {
        /// Above 1 zooms in, below 1 zooms out.
        factor: f64,
        /// The instant that stays put.
        at: u64,
    },
    /// Zoom in one step around the cursor (or the window's middle).
    ZoomIn,
    /// Zoom out one step around the cursor (or the window's middle).
    ZoomOut,
    /// Move the window by this many milliseconds (negative: earlier), clamped to the data.
    PanBy(i64),
    /// Move the window by a share of its width (negative: earlier).
    PanSteps(f64),
    /// Set the cursor.
    SetCursor(u64),
    /// Select a range (the ends in any order).
    Select(u64, u64),
    /// Drop the selection; with none, drop the focus.
    ClearSelection,
    /// Bring a finding into focus: shade it on every track and frame it with what came before
    /// and after.
    Focus(Focus),
    /// Jump to a span (a finding's): cursor at its start, the window around it.
    JumpTo(u64, u64),
    /// Open or close a panel.
    TogglePanel(Panel),
    /// Show times in UTC (`true`) or local time.
    SetUtc(bool),
    /// Add a note of the reader's own at an instant (blank text adds nothing).
    AddNote(u64, String),
    /// Remove the note at this index.
    RemoveNote(usize),
    /// Turn a series off, or on again (its `track:label` key).
    ToggleSeries(String),
    /// Restore what a URL hash held.
    Restore(HashState),
    /// A pre-flight's predicted tracks go on to this moment past the recording's end (`None`:
    /// they are gone): the window may go there, and shows the recording's end and all of them.
    Beyond(Option<u64>),
}

/// `x` rounded to whole milliseconds, clamped to `u64`.
fn ms(x: f64) -> u64 {
    if x.is_nan() || x <= 0.0 {
        0
    } else if x >= 1.8e19 {
        u64::MAX
    } else {
        // In range and non-negative (checked above).
        x.round() as u64
    }
}

fn to_f64(x: u64) -> f64 {
    // Epoch milliseconds are far below 2^53: exact.
    x as f64
}

impl ViewState {
    /// The visible window's width in milliseconds.
    pub fn width(&self) -> u64 {
        self.window.1.saturating_sub(self.window.0)
    }

    /// What the window may show: the recording's span, past its end to [`ViewState::beyond`].
    fn bounds(&self) -> Option<(u64, u64)> {
        self.data
            .map(|(lo, hi)| (lo, self.beyond.map_or(hi, |b| b.max(hi))))
    }

    fn min_width(&self) -> u64 {
        let span = self
            .bounds()
            .map_or(MIN_WINDOW_MS, |(a, b)| b.saturating_sub(a));
        MIN_WINDOW_MS.min(span.max(1))
    }

    /// `window` moved (not resized) to lie inside the data, or narrowed to it when wider.
    fn clamp_window(&self, (start, end): (u64, u64)) -> (u64, u64) {
        let Some((lo, hi)) = self.bounds() else {
            return (start, end);
        };
        let width = end.saturating_sub(start).min(hi - lo).max(self.min_width());
        let start = start.clamp(lo, hi.saturating_sub(width).max(lo));
        (start, start + width)
    }

    fn clamp_time(&self, t: u64) -> u64 {
        match self.bounds() {
            Some((lo, hi)) => t.clamp(lo, hi),
            None => t,
        }
    }

    fn zoom(&mut self, factor: f64, at: u64) {
        if factor <= 0.0 || factor.is_nan() {
            return;
        }
        let (start, end) = self.window;
        let at = at.clamp(start, end.max(start));
        let width = to_f64(end - start) / factor;
        let width = width.max(to_f64(self.min_width()));
        let left_share = if end > start {
            to_f64(at - start) / to_f64(end - start)
        } else {
            0.5
        };
        let new_start = ms(to_f64(at) - width * left_share);
        self.window = self.clamp_window((new_start, new_start.saturating_add(ms(width))));
    }

    fn zoom_anchor(&self) -> u64 {
        match self.cursor {
            Some(c) if self.window.0 <= c && c <= self.window.1 => c,
            _ => self.window.0 + self.width() / 2,
        }
    }

    fn pan(&mut self, delta: i64) {
        let (start, end) = self.window;
        let width = end - start;
        let new_start = if delta < 0 {
            start.saturating_sub(delta.unsigned_abs())
        } else {
            start.saturating_add(delta.unsigned_abs())
        };
        self.window = self.clamp_window((new_start, new_start.saturating_add(width)));
    }

    /// The state after `action`.
    pub fn reduce(mut self, action: Action) -> ViewState {
        match action {
            Action::Preview {
                name,
                source,
                span,
                findings,
            } => {
                let (lo, hi) = (span.0.min(span.1), span.0.max(span.1));
                self.data = Some((lo, hi));
                self.beyond = None;
                self.loaded = Some(name);
                self.source = source;
                self.findings = findings;
                self.partial = true;
                // A window restored from the URL waits for the whole recording.
                if !self.restored {
                    self.window = self.clamp_window((lo, hi));
                    self.cursor = Some(lo);
                    self.selection = None;
                    self.focus = None;
                    self.notes.clear();
                }
            }
            Action::Loaded {
                name,
                source,
                span,
                findings,
            } => {
                let (lo, hi) = (span.0.min(span.1), span.0.max(span.1));
                // The rest of a previewed recording: what the user did with the preview stays,
                // and a window showing all of the preview shows all of the recording.
                let grown = self.partial && self.loaded.as_deref() == Some(name.as_str());
                let whole = self
                    .data
                    .is_some_and(|d| self.window == self.clamp_window(d));
                self.partial = false;
                self.data = Some((lo, hi));
                self.beyond = None;
                self.loaded = Some(name);
                self.source = source;
                self.findings = findings;
                let keep = self.restored && self.window.0 < hi && self.window.1 > lo;
                self.restored = false;
                if keep || (grown && !whole) {
                    self.window = self.clamp_window(self.window);
                    self.cursor = self.cursor.map(|c| self.clamp_time(c));
                    self.selection = self
                        .selection
                        .map(|(a, b)| (self.clamp_time(a), self.clamp_time(b)));
                } else if grown {
                    self.window = self.clamp_window((lo, hi));
                } else {
                    self.window = self.clamp_window((lo, hi));
                    self.cursor = Some(lo);
                    self.selection = None;
                    self.focus = None;
                    self.notes.clear();
                }
            }
            Action::ZoomAt { factor, at } => self.zoom(factor, at),
            Action::ZoomIn => {
                let at = self.zoom_anchor();
                self.zoom(ZOOM_STEP, at);
            }
            Action::ZoomOut => {
                let at = self.zoom_anchor();
                self.zoom(1.0 / ZOOM_STEP, at);
            }
            Action::PanBy(delta) => self.pan(delta),
            Action::PanSteps(steps) => {
                let delta = to_f64(self.width()) * PAN_STEP * steps;
                let magnitude = ms(delta.abs());
                let magnitude = i64::try_from(magnitude).unwrap_or(i64::MAX);
                self.pan(if delta < 0.0 { -magnitude } else { magnitude });
            }
            Action::SetCursor(t) => self.cursor = Some(self.clamp_time(t)),
            Action::Select(a, b) => {
                let (a, b) = (self.clamp_time(a.min(b)), self.clamp_time(a.max(b)));
                self.selection = (b > a).then_some((a, b));
            }
            Action::ClearSelection => {
                if self.selection.take().is_none() {
                    self.focus = None;
                }
            }
            Action::Focus(f) => {
                let (a, b) = f.span;
                let b = b.min(a.saturating_add(FOCUS_FRAME_MS));
                let margin = ms(to_f64(b - a) * JUMP_MARGIN).max(FOCUS_CONTEXT_MS);
                self.window =
                    self.clamp_window((a.saturating_sub(margin), b.saturating_add(margin)));
                self.cursor = Some(self.clamp_time(a));
                self.focus = Some(f);
            }
            Action::JumpTo(a, b) => {
                let (a, b) = (a.min(b), a.max(b));
                let margin = ms(to_f64(b - a) * JUMP_MARGIN).max(MIN_WINDOW_MS);
                self.window =
                    self.clamp_window((a.saturating_sub(margin), b.saturating_add(margin)));
                self.cursor = Some(self.clamp_time(a));
            }
            Action::TogglePanel(p) => {
                if !self.panels.remove(&p) {
                    self.panels.insert(p);
                }
            }
            Action::SetUtc(utc) => self.utc = utc,
            Action::AddNote(t, text) => {
                let text: String = text.trim().chars().take(NOTE_MAX_CHARS).collect();
                if !text.is_empty() {
                    let t = self.clamp_time(t);
                    let at = self.notes.partition_point(|(x, _)| *x <= t);
                    self.notes.insert(at, (t, text));
                }
            }
            Action::ToggleSeries(key) => {
                if !self.hidden.remove(&key) {
                    self.hidden.insert(key);
                }
            }
            Action::RemoveNote(i) => {
                if i < self.notes.len() {
                    self.notes.remove(i);
                }
            }
            Action::Beyond(end) => {
                let Some((lo, hi)) = self.data else {
                    return self;
                };
                self.beyond = end.filter(|&b| b > hi);
                self.window = match self.beyond {
                    // As much of the recording before its end as the prediction after it.
                    Some(b) => self.clamp_window((lo.max(hi.saturating_sub(b - hi)), b)),
                    None => self.clamp_window(self.window),
                };
                self.cursor = self.cursor.map(|c| self.clamp_time(c));
            }
            Action::Restore(h) => {
                // A load follows when nothing is loaded yet or the hash names another recording:
                // that load keeps the restored window. Otherwise it applies to what is shown.
                let load_follows =
                    self.data.is_none() || (h.source.is_some() && h.source != self.source);
                if let Some(w) = h.window {
                    self.window = if load_follows {
                        w
                    } else {
                        self.clamp_window(w)
                    };
                    self.restored = load_follows;
                }
                self.cursor = h
                    .cursor
                    .map(|c| if load_follows { c } else { self.clamp_time(c) });
                self.selection = h.selection;
                self.focus = h.focus;
                if let Some(n) = h.notes {
                    self.notes = n;
                }
                if let Some(p) = h.panels {
                    self.panels = p;
                }
                if h.source.is_some() {
                    self.source = h.source;
                }
            }
        }
        self
    }

    /// The name of the recording shown when it was opened from the disk (no URL reaches it).
    pub fn local_name(&self) -> Option<&str> {
        match (&self.source, &self.loaded) {
            (None, Some(name)) => Some(name.as_str()),
            _ => None,
        }
    }

    /// The part of the state the URL hash holds.
    pub fn hash_state(&self) -> HashState {
        HashState {
            window: Some(self.window),
            cursor: self.cursor,
            selection: self.selection,
            focus: self.focus.clone(),
            notes: (!self.notes.is_empty()).then(|| self.notes.clone()),
            panels: Some(self.panels.clone()),
            source: self.source.clone(),
            local: self.local_name().map(str::to_owned),
        }
    }

    /// The state as the JSON the test hook `slotscope_state()` returns.
    pub fn to_json(&self) -> String {
        #[derive(Serialize)]
        struct Snapshot<'a> {
            window: [u64; 2],
            cursor: Option<u64>,
            selection: Option<[u64; 2]>,
            focus: Option<String>,
            notes: &'a [(u64, String)],
            hidden: &'a BTreeSet<String>,
            panels: Vec<&'static str>,
            loaded: Option<&'a str>,
            findings: usize,
            utc: bool,
            partial: bool,
        }
        let snap = Snapshot {
            window: [self.window.0, self.window.1],
            cursor: self.cursor,
            selection: self.selection.map(|(a, b)| [a, b]),
            focus: self.focus.as_ref().map(Focus::encode),
            notes: &self.notes,
            hidden: &self.hidden,
            panels: self.panels.iter().map(|p| p.name()).collect(),
            loaded: self.loaded.as_deref(),
            findings: self.findings,
            utc: self.utc,
            partial: self.partial,
        };
        serde_json::to_string(&snap).unwrap_or_default()
    }
}

#[cfg(test)]
impl Action {
    /// `Loaded` of recording `name` over `span`, from no URL, with no findings (tests).
    pub(crate) fn loaded(name: &str, span: (u64, u64)) -> Action {
        Action::Loaded {
            name: name.into(),
            source: None,
            span,
            findings: 0,
        }
    }
}

/// What the URL hash holds: `#w=START-END&c=CURSOR&s=A-B&f=KIND-START-END&p=findings,census&r=URL`
/// (or `&l=NAME` for a recording opened from the disk).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HashState {
    /// The visible window.
    pub window: Option<(u64, u64)>,
    /// The cursor.
    pub cursor: Option<u64>,
    /// The selection.
    pub selection: Option<(u64, u64)>,
    /// The finding in focus.
    pub focus: Option<Focus>,
    /// The reader's notes (`None`: not given).
    pub notes: Option<Vec<(u64, String)>>,
    /// Open panels (`None`: not given, keep the defaults).
    pub panels: Option<BTreeSet<Panel>>,
    /// The recording's URL, when it came from one.
    pub source: Option<String>,
    /// The recording's name when it was opened from the disk (`l=NAME`): no URL reaches it, so a
    /// link that names it says so instead of opening the demo.
    pub local: Option<String>,
}

/// Bytes a hash parameter keeps as they are (readable URLs); the rest is percent-encoded.
const HASH_KEEP: &[u8] = b"/:?=,";
/// The same for a note's text (its `,` separates notes).
const NOTE_KEEP: &[u8] = b"/:?=";
/// The longest note kept, in characters.
pub const NOTE_MAX_CHARS: usize = 200;

fn range(text: &str) -> Option<(u64, u64)> {
    let (a, b) = text.split_once('-')?;
    let (a, b) = (a.parse::<u64>().ok()?, b.parse::<u64>().ok()?);
    (a <= b).then_some((a, b))
}

impl HashState {
    /// The hash text (without the leading `#`).
    pub fn encode(&self) -> String {
        let mut parts = Vec::new();
        if let Some((a, b)) = self.window {
            parts.push(format!("w={a}-{b}"));
        }
        if let Some(c) = self.cursor {
            parts.push(format!("c={c}"));
        }
        if let Some((a, b)) = self.selection {
            parts.push(format!("s={a}-{b}"));
        }
        if let Some(f) = &self.focus {
            parts.push(format!("f={}", f.encode()));
        }
        if let Some(notes) = &self.notes {
            let each: Vec<String> = notes
                .iter()
                .map(|(t, text)| format!("{t}-{}", percent::encode(text, NOTE_KEEP)))
                .collect();
            parts.push(format!("n={}", each.join(",")));
        }
        if let Some(p) = &self.panels {
            let names: Vec<&str> = p.iter().map(|p| p.name()).collect();
            parts.push(format!("p={}", names.join(",")));
        }
        if let Some(r) = &self.source {
            parts.push(format!("r={}", percent::encode(r, HASH_KEEP)));
        }
        if let Some(l) = &self.local {
            parts.push(format!("l={}", percent::encode(l, HASH_KEEP)));
        }
        parts.join("&")
    }

    /// Reads a hash (with or without the leading `#`); unknown or malformed parts are ignored.
    /// `None` when it holds nothing this viewer understands.
    pub fn decode(hash: &str) -> Option<HashState> {
        let hash = hash.strip_prefix('#').unwrap_or(hash);
        let mut h = HashState::default();
        let mut any = false;
        for part in hash.split('&') {
            let Some((key, value)) = part.split_once('=') else {
                continue;
            };
            match key {
                "w" => h.window = range(value),
                "c" => h.cursor = value.parse().ok(),
                "s" => h.selection = range(value),
                "f" => h.focus = Focus::decode(value),
                "n" => {
                    let mut notes: Vec<(u64, String)> = value
                        .split(',')
                        .filter_map(|one| {
                            let (t, text) = one.split_once('-')?;
                            let text = percent::decode(text)?;
                            let text: String = text.chars().take(NOTE_MAX_CHARS).collect();
                            (!text.trim().is_empty()).then_some((t.parse().ok()?, text))
                        })
                        .collect();
                    notes.sort_by_key(|(t, _)| *t);
                    h.notes = Some(notes);
                }
                "p" => {
                    h.panels = Some(
                        value
                            .split(',')
                            .filter_map(Panel::from_name)
                            .collect::<BTreeSet<_>>(),
                    )
                }
                "r" => h.source = percent::decode(value).filter(|s| !s.is_empty()),
                "l" => h.local = percent::decode(value).filter(|s| !s.is_empty()),
                _ => continue,
            }
            any = true;
        }
        any.then_some(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loaded() -> ViewState {
        ViewState::default().reduce(Action::Loaded {
            name: "r.jsonl".into(),
            source: None,
            span: (10_000, 20_000),
            findings: 3,
        })
    }

    fn preview(hi: u64) -> ViewState {
        ViewState::default().reduce(Action::Preview {
            name: "r.jsonl".into(),
            source: None,
            span: (10_000, hi),
            findings: 1,
        })
    }

    fn rest_loaded(s: ViewState) -> ViewState {
        s.reduce(Action::Loaded {
            name: "r.jsonl".into(),
            source: None,
            span: (10_000, 20_000),
            findings: 3,
        })
    }

    #[test]
    fn a_preflight_lets_the_window_go_past_the_recordings_end_until_cleared() {
        let s = loaded();
        // Panning stops at the recording's end…
        assert_eq!(
            s.clone().reduce(Action::PanBy(50_000)).window,
            (10_000, 20_000)
        );
        // …until a pre-flight's tracks go on to 26 s: the window shows the last 6 s of the
        // recording and all of the prediction, and may pan there.
        let s = s.reduce(Action::Beyond(Some(26_000)));
        assert_eq!(s.window, (14_000, 26_000));
        let s = s.reduce(Action::ZoomIn).reduce(Action::PanBy(50_000));
        assert_eq!(s.window.1, 26_000);
        // Cleared: back inside the recording, the cursor too.
        let s = s
            .reduce(Action::SetCursor(25_000))
            .reduce(Action::Beyond(None));
        assert!(s.window.1 <= 20_000 && s.cursor == Some(20_000), "{s:?}");
        // An end inside the recording, or a new recording, changes nothing past its end.
        let s = loaded().reduce(Action::Beyond(Some(15_000)));
        assert_eq!((s.beyond, s.window), (None, (10_000, 20_000)));
        let s = loaded().reduce(Action::Beyond(Some(30_000)));
        assert_eq!(rest_loaded(s).beyond, None);
    }

    #[test]
    fn a_preview_shows_its_part_and_the_rest_widens_an_untouched_window() {
        let s = preview(12_000);
        assert!(s.partial);
        assert_eq!(s.window, (10_000, 12_000));
        assert_eq!(s.cursor, Some(10_000));
        let s = rest_loaded(s.reduce(Action::SetCursor(11_000)));
        assert!(!s.partial);
        assert_eq!(s.window, (10_000, 20_000), "all of the recording");
        assert_eq!(
            s.cursor,
            Some(11_000),
            "the cursor set during the preview stays"
        );
        assert_eq!(s.findings, 3);
    }

    #[test]
    fn a_window_zoomed_during_the_preview_stays_when_the_rest_arrives() {
        let s = preview(12_000).reduce(Action::Select(10_500, 11_000));
        let s = s.reduce(Action::ZoomIn);
        let zoomed = s.window;
        assert!(zoomed.1 - zoomed.0 < 2_000, "{zoomed:?}");
        let s = rest_loaded(s);
        assert_eq!(s.window, zoomed);
        assert_eq!(s.selection, Some((10_500, 11_000)));
        // Another recording after a preview starts afresh.
        let s = preview(12_000)
            .reduce(Action::ZoomIn)
            .reduce(Action::loaded("other.jsonl", (50_000, 60_000)));
        assert_eq!(s.window, (50_000, 60_000));
        assert_eq!(s.cursor, Some(50_000));
    }

    #[test]
    fn a_restored_window_waits_for_the_whole_recording() {
        let restored = ViewState::default().reduce(Action::Restore(HashState {
            window: Some((15_000, 16_000)),
            cursor: Some(15_500),
            ..HashState::default()
        }));
        let s = restored.reduce(Action::Preview {
            name: "r.jsonl".into(),
            source: None,
            span: (10_000, 12_000),
            findings: 1,
        });
        assert_eq!(s.window, (15_000, 16_000), "beyond the preview, kept");
        let s = rest_loaded(s);
        assert_eq!(s.window, (15_000, 16_000));
        assert_eq!(s.cursor, Some(15_500));
        assert!(!s.restored);
    }

    #[test]
    fn loading_shows_the_whole_recording_with_the_cursor_at_its_start() {
        let s = loaded();
        assert_eq!(s.window, (10_000, 20_000));
        assert_eq!(s.cursor, Some(10_000));
        assert_eq!(s.loaded.as_deref(), Some("r.jsonl"));
        assert_eq!(s.findings, 3);
    }

    #[test]
    fn zoom_in_keeps_the_cursor_in_place() {
        let s = loaded().reduce(Action::SetCursor(12_000));
        let z = s.reduce(Action::ZoomIn);
        assert_eq!(z.width(), 8_000);
        // The cursor was at 20 % of the window and stays there.
        assert_eq!(z.window, (10_400, 18_400));
        let back = z.reduce(Action::ZoomOut);
        assert_eq!(back.window, (10_000, 20_000));
    }

    #[test]
    fn zoom_at_the_mouse_keeps_that_instant_put() {
        let s = loaded().reduce(Action::ZoomAt {
            factor: 2.0,
            at: 15_000,
        });
        assert_eq!(s.window, (12_500, 17_500));
        let s = s.reduce(Action::ZoomAt {
            factor: 2.0,
            at: 17_500,
        });
        assert_eq!(s.window, (15_000, 17_500));
    }

    #[test]
    fn zoom_stops_at_the_minimum_width_and_the_data_span() {
        let mut s = loaded();
        for _ in 0..100 {
            s = s.reduce(Action::ZoomIn);
        }
        assert_eq!(s.width(), MIN_WINDOW_MS);
        for _ in 0..100 {
            s = s.reduce(Action::ZoomOut);
        }
        assert_eq!(s.window, (10_000, 20_000));
    }

    #[test]
    fn pan_is_clamped_to_the_data_span() {
        let s = loaded().reduce(Action::ZoomAt {
            factor: 4.0,
            at: 10_000,
        });
        assert_eq!(s.window, (10_000, 12_500));
        let right = s.clone().reduce(Action::PanBy(1_000));
        assert_eq!(right.window, (11_000, 13_500));
        let left = s.clone().reduce(Action::PanBy(-5_000));
        assert_eq!(left.window, (10_000, 12_500));
        let far = s.clone().reduce(Action::PanBy(1_000_000));
        assert_eq!(far.window, (17_500, 20_000));
        let key = s.reduce(Action::PanSteps(1.0));
        assert_eq!(key.window, (10_250, 12_750));
    }

    #[test]
    fn cursor_and_selection_stay_inside_the_data() {
        let s = loaded().reduce(Action::SetCursor(99_999));
        assert_eq!(s.cursor, Some(20_000));
        let s = s.reduce(Action::Select(15_000, 5_000));
        assert_eq!(s.selection, Some((10_000, 15_000)));
        let s = s.reduce(Action::Select(12_000, 12_000));
        assert_eq!(s.selection, None, "an empty range selects nothing");
    }

    #[test]
    fn jumping_to_a_finding_frames_its_span_with_a_margin() {
        let s = loaded().reduce(Action::JumpTo(14_000, 16_000));
        assert_eq!(s.cursor, Some(14_000));
        assert_eq!(s.window, (13_500, 16_500));
        // Near the edge the window is moved inside the data, keeping its width.
        let s = s.reduce(Action::JumpTo(10_000, 10_400));
        assert_eq!(s.window, (10_000, 10_800));
    }

    #[test]
    fn hash_round_trips() {
        let s = loaded()
            .reduce(Action::JumpTo(14_000, 16_000))
            .reduce(Action::Select(14_500, 15_000))
            .reduce(Action::TogglePanel(Panel::Census));
        let text = s.hash_state().encode();
        assert_eq!(
            text,
            "w=13500-16500&c=14000&s=14500-15000&p=findings&l=r.jsonl"
        );
        let h = HashState::decode(&format!("#{text}")).unwrap();
        assert_eq!(h, s.hash_state());
        let with_src = HashState {
            source: Some("demo/incident 2.jsonl.zst".into()),
            ..h
        };
        let back = HashState::decode(&with_src.encode()).unwrap();
        assert_eq!(back.source.as_deref(), Some("demo/incident 2.jsonl.zst"));
        assert!(with_src.encode().contains("r=demo/incident%202.jsonl.zst"));
    }

    #[test]
    fn a_restored_hash_survives_the_load() {
        let h = HashState::decode("w=14000-15000&c=14500&s=14200-14300&p=census").unwrap();
        let s = ViewState::default()
            .reduce(Action::Restore(h))
            .reduce(Action::loaded("r", (10_000, 20_000)));
        assert_eq!(s.window, (14_000, 15_000));
        assert_eq!(s.cursor, Some(14_500));
        assert_eq!(s.selection, Some((14_200, 14_300)));
        assert_eq!(s.panels, [Panel::Census].into_iter().collect());
        // A second load (another recording) starts from its own span.
        let s = s.reduce(Action::loaded("other", (50_000, 60_000)));
        assert_eq!(s.window, (50_000, 60_000));
    }

    #[test]
    fn a_hash_edited_while_a_recording_is_shown_applies_to_it() {
        let h = HashState::decode("w=12000-13000&c=99999").unwrap();
        let s = loaded().reduce(Action::Restore(h));
        assert_eq!(s.window, (12_000, 13_000));
        assert_eq!(s.cursor, Some(20_000), "clamped to the data");
        assert!(
            !s.restored,
            "no load follows, so the next load starts afresh"
        );
    }

    #[test]
    fn a_hash_outside_the_recording_is_dropped() {
        let h = HashState::decode("w=1-2&c=1").unwrap();
        let s = ViewState::default()
            .reduce(Action::Restore(h))
            .reduce(Action::loaded("r", (10_000, 20_000)));
        assert_eq!(s.window, (10_000, 20_000));
        assert_eq!(s.cursor, Some(10_000));
    }

    #[test]
    fn the_slot_map_and_topology_diff_panels_start_closed_and_round_trip() {
        let s = loaded();
        assert!(!s.panels.contains(&Panel::SlotMap));
        assert!(!s.panels.contains(&Panel::TopologyDiff));
        let s = s
            .reduce(Action::TogglePanel(Panel::SlotMap))
            .reduce(Action::TogglePanel(Panel::TopologyDiff));
        let text = s.hash_state().encode();
        assert!(
            text.ends_with("&p=findings,census,slotmap,topology-diff&l=r.jsonl"),
            "{text}"
        );
        let h = HashState::decode(&text).unwrap();
        assert_eq!(h.panels, Some(s.panels.clone()));
        let closed = s.reduce(Action::TogglePanel(Panel::SlotMap));
        assert!(!closed.panels.contains(&Panel::SlotMap));
    }

    #[test]
    fn a_focused_finding_frames_its_context_round_trips_and_survives_a_reload() {
        let f = Focus {
            kind: "client_group_lost".into(),
            span: (14_000, 15_000),
        };
        let s = loaded().reduce(Action::Focus(f.clone()));
        // At least FOCUS_CONTEXT_MS before and after, inside the data.
        assert_eq!(s.window, (11_000, 18_000));
        assert_eq!(s.cursor, Some(14_000));
        let text = s.hash_state().encode();
        assert!(text.contains("f=client_group_lost-14000-15000"), "{text}");
        // A reload: the hash restored before the recording loads keeps the focus.
        let h = HashState::decode(&text).unwrap();
        let back = ViewState::default()
            .reduce(Action::Restore(h))
            .reduce(Action::loaded("r", (10_000, 20_000)));
        assert_eq!(back.focus, Some(f.clone()));
        assert_eq!(back.window, (11_000, 18_000));
        // A long finding frames its first FOCUS_FRAME_MS, with the context around them.
        let long = Focus {
            kind: "client_group_lost".into(),
            span: (100_000, 500_000),
        };
        let wide = ViewState::default()
            .reduce(Action::loaded("w", (0, 1_000_000)))
            .reduce(Action::Focus(long.clone()));
        assert_eq!(wide.window, (97_000, 113_000));
        assert_eq!(wide.focus, Some(long));
        // Escape drops a selection first, then the focus; another recording drops it.
        let sel = back.clone().reduce(Action::Select(12_000, 13_000));
        let sel = sel.reduce(Action::ClearSelection);
        assert_eq!(sel.focus, Some(f));
        assert_eq!(sel.reduce(Action::ClearSelection).focus, None);
        assert_eq!(
            back.reduce(Action::loaded("other", (50_000, 60_000))).focus,
            None
        );
    }

    #[test]
    fn malformed_focus_values_are_ignored() {
        for bad in [
            "f=",
            "f=x-1",
            "f=-1-2",
            "f=Kind-1-2",
            "f=a-3-2",
            "f=a b-1-2",
            "f=a-1-x",
        ] {
            let h = HashState::decode(bad);
            assert_eq!(h.and_then(|h| h.focus), None, "{bad}");
        }
        let h = HashState::decode("f=idle_shard-1-2").unwrap();
        assert_eq!(h.focus.unwrap().span, (1, 2));
    }

    #[test]
    fn a_local_recording_is_named_in_the_hash_and_a_served_one_is_not() {
        let s = loaded();
        assert_eq!(s.local_name(), Some("r.jsonl"));
        let text = s.hash_state().encode();
        assert!(text.ends_with("&l=r.jsonl"), "{text}");
        assert_eq!(
            HashState::decode(&text).unwrap().local.as_deref(),
            Some("r.jsonl")
        );
        let served = ViewState::default().reduce(Action::Loaded {
            name: "demo/x.jsonl".into(),
            source: Some("demo/x.jsonl".into()),
            span: (1, 2),
            findings: 0,
        });
        assert_eq!(served.local_name(), None);
        assert!(!served.hash_state().encode().contains("l="));
    }

    #[test]
    fn notes_are_kept_in_time_order_and_round_trip_in_the_hash() {
        let s = loaded()
            .reduce(Action::AddNote(15_000, "deploy of api, v2.3".into()))
            .reduce(Action::AddNote(12_000, "  pager fired & ack'd  ".into()))
            .reduce(Action::AddNote(13_000, "   ".into()))
            .reduce(Action::AddNote(99_999, "after the end".into()));
        assert_eq!(
            s.notes,
            vec![
                (12_000, "pager fired & ack'd".to_owned()),
                (15_000, "deploy of api, v2.3".to_owned()),
                (20_000, "after the end".to_owned()),
            ]
        );
        let text = s.hash_state().encode();
        assert!(text.contains("n=12000-pager%20fired%20%26%20ack"), "{text}");
        let back = ViewState::default()
            .reduce(Action::Restore(HashState::decode(&text).unwrap()))
            .reduce(Action::loaded("r.jsonl", (10_000, 20_000)));
        assert_eq!(back.notes, s.notes);
        assert_eq!(back.clone().reduce(Action::RemoveNote(0)).notes.len(), 2);
        // Another recording starts without them.
        assert!(back
            .reduce(Action::loaded("other", (50_000, 60_000)))
            .notes
            .is_empty());
        assert!(HashState::decode("n=x-a,5-")
            .unwrap()
            .notes
            .unwrap()
            .is_empty());
    }

    #[test]
    fn malformed_hashes_are_ignored() {
        assert_eq!(HashState::decode(""), None);
        assert_eq!(HashState::decode("#foo=bar"), None);
        let h = HashState::decode("w=9-3&c=x&p=nope,census").unwrap();
        assert_eq!(h.window, None);
        assert_eq!(h.cursor, None);
        assert_eq!(h.panels, Some([Panel::Census].into_iter().collect()));
    }

    #[test]
    fn the_test_hook_json_has_the_documented_fields() {
        let s = loaded().reduce(Action::Select(11_000, 12_000));
        let v: serde_json::Value = serde_json::from_str(&s.to_json()).unwrap();
        assert_eq!(v["window"], serde_json::json!([10_000, 20_000]));
        assert_eq!(v["cursor"], 10_000);
        assert_eq!(v["selection"], serde_json::json!([11_000, 12_000]));
        assert_eq!(v["panels"], serde_json::json!(["findings", "census"]));
        assert_eq!(v["loaded"], "r.jsonl");
        assert_eq!(v["findings"], 3);
    }
}
