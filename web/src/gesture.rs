//! Keyboard and mouse gestures as [`Action`]s: which key does what, and what a press, a drag, a
//! release or a wheel notch over the tracks asks for. Plain data in and out (key names, modifier
//! flags, pixel positions, the view and its [`TimeScale`]); the components read the browser's
//! events and dispatch what these return, so every binding is tested natively.

use crate::scale::TimeScale;
use crate::state::{Action, ViewState, ZOOM_STEP};

/// Pixels a press must move to count as a drag rather than a click.
pub const CLICK_SLOP: f64 = 3.0;

/// The modifier keys held with a key press.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Modifiers {
    /// Control.
    pub ctrl: bool,
    /// Meta (Command on a Mac).
    pub meta: bool,
    /// Alt (Option on a Mac).
    pub alt: bool,
}

/// The action for the key called `key` (the DOM's `KeyboardEvent.key`): `+`/`=` zoom in, `-`/`_`
/// zoom out, ←/→ pan one step, Escape drops the selection (with none, the finding in focus). `None` for other keys and for any key
/// held with Control, Meta or Alt (the browser's shortcuts).
pub fn key(key: &str, modifiers: Modifiers) -> Option<Action> {
    if modifiers.ctrl || modifiers.meta || modifiers.alt {
        return None;
    }
    match key {
        "+" | "=" => Some(Action::ZoomIn),
        "-" | "_" => Some(Action::ZoomOut),
        "ArrowLeft" => Some(Action::PanSteps(-1.0)),
        "ArrowRight" => Some(Action::PanSteps(1.0)),
        "Escape" => Some(Action::ClearSelection),
        _ => None,
    }
}

/// The action for a wheel turn of `delta_y` (negative: away from the user) with the mouse `x`
/// pixels into the tracks, Control or Meta held (a trackpad pinch sends the same): zoom one step
/// in (away) or out (towards) keeping the instant under the mouse in place. `None` without the
/// modifier (the wheel scrolls the page, as everywhere else), with nothing loaded or no vertical
/// turn.
pub fn wheel(
    state: &ViewState,
    scale: &TimeScale,
    x: f64,
    delta_y: f64,
    held: Modifiers,
) -> Option<Action> {
    if !(held.ctrl || held.meta) || state.data.is_none() || delta_y == 0.0 {
        return None;
    }
    let factor = if delta_y < 0.0 {
        ZOOM_STEP
    } else {
        1.0 / ZOOM_STEP
    };
    Some(Action::ZoomAt {
        factor,
        at: scale.time(x),
    })
}

/// A mouse press on the tracks, followed until it is released: a drag pans the window (with
/// Shift: selects the range dragged over); a press released where it began is a click, which
/// sets the cursor (with Shift: drops the selection).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Drag {
    start_x: f64,
    last_x: f64,
    shift: bool,
    moved: bool,
}

impl Drag {
    /// A press of mouse `button` (0: the main one) at `x` pixels into the tracks; `None` for the
    /// other buttons, which the tracks leave alone.
    pub fn press(button: i16, x: f64, shift: bool) -> Option<Drag> {
        (button == 0).then_some(Drag {
            start_x: x,
            last_x: x,
            shift,
            moved: false,
        })
    }

    /// The mouse moved to `x` while pressed, over the tracks shown at `scale`. Within
    /// [`CLICK_SLOP`] of the press nothing happens (it may still be a click); beyond it, a drag
    /// pans the window by the distance moved since the last move, or with Shift selects from the
    /// press to `x`.
    pub fn move_to(&mut self, x: f64, scale: &TimeScale) -> Option<Action> {
        if (x - self.start_x).abs() > CLICK_SLOP {
            self.moved = true;
        }
        if !self.moved {
            return None;
        }
        let action = if self.shift {
            Some(Action::Select(scale.time(self.start_x), scale.time(x)))
        } else {
            let ms = ((x - self.last_x) * scale.ms_per_px()).round();
            // Bounded by the window width.
            let ms = ms.clamp(-9.0e15, 9.0e15) as i64;
            (ms != 0).then_some(Action::PanBy(-ms))
        };
        self.last_x = x;
        action
    }

    /// The mouse was released at `x` over the tracks shown at `scale`: a click (not moved beyond
    /// [`CLICK_SLOP`]) sets the cursor there, or with Shift drops the selection; a drag has done
    /// its work already.
    pub fn release(self, x: f64, scale: &TimeScale) -> Option<Action> {
        if self.moved {
            None
        } else if self.shift {
            Some(Action::ClearSelection)
        } else {
            Some(Action::SetCursor(scale.time(x)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NONE: Modifiers = Modifiers {
        ctrl: false,
        meta: false,
        alt: false,
    };
    const CTRL: Modifiers = Modifiers { ctrl: true, ..NONE };

    /// A recording over 10 s … 20 s, shown whole on 1000 px: 10 ms per pixel.
    fn loaded() -> (ViewState, TimeScale) {
        let s = ViewState::default().reduce(Action::loaded("r", (10_000, 20_000)));
        let scale = TimeScale::new(s.window, 1000);
        (s, scale)
    }

    fn zoomed() -> (ViewState, TimeScale) {
        let (s, _) = loaded();
        let s = s.reduce(Action::ZoomAt {
            factor: 2.0,
            at: 15_000,
        });
        let scale = TimeScale::new(s.window, 1000);
        (s, scale)
    }

    #[test]
    fn plus_and_equals_zoom_in() {
        assert_eq!(key("+", NONE), Some(Action::ZoomIn));
        assert_eq!(key("=", NONE), Some(Action::ZoomIn));
        let (s, _) = loaded();
        assert_eq!(s.reduce(key("+", NONE).unwrap()).width(), 8_000);
    }

    #[test]
    fn minus_and_underscore_zoom_out() {
        assert_eq!(key("-", NONE), Some(Action::ZoomOut));
        assert_eq!(key("_", NONE), Some(Action::ZoomOut));
        let (s, _) = zoomed();
        assert_eq!(s.reduce(key("-", NONE).unwrap()).width(), 6_250);
    }

    #[test]
    fn the_arrow_keys_pan_one_step() {
        assert_eq!(key("ArrowLeft", NONE), Some(Action::PanSteps(-1.0)));
        assert_eq!(key("ArrowRight", NONE), Some(Action::PanSteps(1.0)));
        let (s, _) = zoomed();
        assert_eq!(s.window, (12_500, 17_500));
        let right = s.clone().reduce(key("ArrowRight", NONE).unwrap());
        assert_eq!(right.window, (13_000, 18_000));
        let left = s.reduce(key("ArrowLeft", NONE).unwrap());
        assert_eq!(left.window, (12_000, 17_000));
    }

    #[test]
    fn escape_drops_the_selection() {
        assert_eq!(key("Escape", NONE), Some(Action::ClearSelection));
        let (s, _) = loaded();
        let s = s.reduce(Action::Select(11_000, 12_000));
        assert_eq!(s.reduce(key("Escape", NONE).unwrap()).selection, None);
    }

    #[test]
    fn other_keys_and_keys_with_ctrl_meta_or_alt_do_nothing() {
        for k in ["a", "ArrowUp", "Enter", " ", "Shift"] {
            assert_eq!(key(k, NONE), None, "{k}");
        }
        for held in [
            Modifiers { ctrl: true, ..NONE },
            Modifiers { meta: true, ..NONE },
            Modifiers { alt: true, ..NONE },
        ] {
            for k in ["+", "=", "-", "_", "ArrowLeft", "ArrowRight", "Escape"] {
                assert_eq!(key(k, held), None, "{k} with {held:?}");
            }
        }
    }

    #[test]
    fn the_wheel_zooms_at_the_mouse() {
        let (s, scale) = loaded();
        let up = wheel(&s, &scale, 500.0, -100.0, CTRL);
        assert_eq!(
            up,
            Some(Action::ZoomAt {
                factor: ZOOM_STEP,
                at: 15_000
            })
        );
        assert_eq!(s.clone().reduce(up.unwrap()).window, (11_000, 19_000));
        let down = wheel(&s, &scale, 250.0, 3.0, CTRL);
        assert_eq!(
            down,
            Some(Action::ZoomAt {
                factor: 1.0 / ZOOM_STEP,
                at: 12_500
            })
        );
        // Zooming out past the whole recording stops at it.
        assert_eq!(s.reduce(down.unwrap()).window, (10_000, 20_000));
    }

    #[test]
    fn the_wheel_does_nothing_without_a_modifier_a_recording_or_a_vertical_turn() {
        let empty = ViewState::default();
        let scale = TimeScale::new(empty.window, 1000);
        assert_eq!(wheel(&empty, &scale, 500.0, -100.0, CTRL), None);
        let (s, scale) = loaded();
        assert_eq!(wheel(&s, &scale, 500.0, 0.0, CTRL), None);
        // Without Control or Meta the wheel is the page's: it scrolls.
        assert_eq!(wheel(&s, &scale, 500.0, -100.0, NONE), None);
        let meta = Modifiers { meta: true, ..NONE };
        assert!(wheel(&s, &scale, 500.0, -100.0, meta).is_some());
    }

    #[test]
    fn a_drag_pans_by_the_distance_moved() {
        let (s, scale) = zoomed();
        // 5 ms per pixel.
        let mut d = Drag::press(0, 400.0, false).unwrap();
        assert_eq!(d.move_to(402.0, &scale), None, "within the slop");
        // Dragging right by 100 px shows what was 500 ms earlier.
        let a = d.move_to(500.0, &scale);
        assert_eq!(a, Some(Action::PanBy(-500)));
        let s = s.reduce(a.unwrap());
        assert_eq!(s.window, (12_000, 17_000));
        // The next move pans by the distance since the last one, back within the slop too.
        let scale = TimeScale::new(s.window, 1000);
        let a = d.move_to(399.0, &scale);
        assert_eq!(a, Some(Action::PanBy(505)));
        assert_eq!(s.reduce(a.unwrap()).window, (12_505, 17_505));
        assert_eq!(d.move_to(399.0, &scale), None, "no distance, no pan");
        assert_eq!(d.release(399.0, &scale), None, "a drag, not a click");
    }

    #[test]
    fn a_shift_drag_selects_from_the_press_to_the_mouse() {
        let (s, scale) = loaded();
        let mut d = Drag::press(0, 300.0, true).unwrap();
        assert_eq!(d.move_to(303.0, &scale), None, "within the slop");
        assert_eq!(
            d.move_to(350.0, &scale),
            Some(Action::Select(13_000, 13_500))
        );
        // Back past the press: the range runs the other way.
        let a = d.move_to(200.0, &scale);
        assert_eq!(a, Some(Action::Select(13_000, 12_000)));
        let s = s.reduce(a.unwrap());
        assert_eq!(s.selection, Some((12_000, 13_000)));
        assert_eq!(s.window, (10_000, 20_000), "the window stays");
        assert_eq!(d.release(200.0, &scale), None, "a drag, not a click");
    }

    #[test]
    fn a_click_sets_the_cursor_and_a_shift_click_drops_the_selection() {
        let (s, scale) = loaded();
        let mut d = Drag::press(0, 700.0, false).unwrap();
        assert_eq!(d.move_to(702.0, &scale), None);
        let a = d.release(702.0, &scale);
        assert_eq!(a, Some(Action::SetCursor(17_020)));
        let s = s.reduce(a.unwrap()).reduce(Action::Select(11_000, 12_000));
        assert_eq!(s.cursor, Some(17_020));
        let shift = Drag::press(0, 700.0, true).unwrap();
        let a = shift.release(700.0, &scale);
        assert_eq!(a, Some(Action::ClearSelection));
        assert_eq!(s.reduce(a.unwrap()).selection, None);
    }

    #[test]
    fn only_the_main_button_starts_a_gesture() {
        assert_eq!(Drag::press(1, 10.0, false), None);
        assert_eq!(Drag::press(2, 10.0, true), None);
        assert!(Drag::press(0, 10.0, false).is_some());
    }
}
