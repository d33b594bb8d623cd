//! [`TapSummary`]: a recording's tap lines folded into per-command and per-node counts — the
//! client-side evidence (what one real client sent where, and what came back) to set beside the
//! servers' global counters.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::float;
use crate::node::NodeAddr;
use crate::recording::{Annotation, ConnEvent, Line, ReplyClass};
use crate::redirect::Redirect;
use crate::time::Timestamp;

/// Counts of commands by reply class.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TapCounts {
    /// Commands sent.
    pub sent: u64,
    /// Replies that were not errors.
    pub ok: u64,
    /// `-MOVED` replies.
    pub moved: u64,
    /// `-ASK` replies.
    pub ask: u64,
    /// `-TRYAGAIN` replies.
    pub try_again: u64,
    /// `-CLUSTERDOWN` replies.
    pub cluster_down: u64,
    /// Other error replies.
    pub errors: u64,
    /// Commands whose connection closed before the reply.
    pub closed: u64,
    /// Sum of the latencies of the replies, in microseconds.
    pub latency_us_sum: u64,
}

impl TapCounts {
    fn add(&mut self, reply: &ReplyClass, latency_us: u64) {
        self.sent += 1;
        match reply {
            ReplyClass::Ok => self.ok += 1,
            ReplyClass::Redirect(Redirect::Moved { .. }) => self.moved += 1,
            ReplyClass::Redirect(Redirect::Ask { .. }) => self.ask += 1,
            ReplyClass::TryAgain => self.try_again += 1,
            ReplyClass::ClusterDown => self.cluster_down += 1,
            ReplyClass::Error { .. } => self.errors += 1,
            ReplyClass::Closed => self.closed += 1,
        }
        if !matches!(reply, ReplyClass::Closed) {
            self.latency_us_sum = self.latency_us_sum.saturating_add(latency_us);
        }
    }

    /// MOVED replies per command sent (0 when none was sent): the client-side counterpart of a
    /// server's `rejected_calls / (calls + rejected_calls)`.
    pub fn moved_share(&self) -> f64 {
        float::ratio(self.moved, self.sent)
    }

    /// Mean reply latency in microseconds over the replies that came.
    pub fn mean_latency_us(&self) -> f64 {
        float::ratio(self.latency_us_sum, self.sent - self.closed)
    }
}

/// A recording's tap lines, folded.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TapSummary {
    /// Client connections opened through the tap.
    pub connections_opened: u64,
    /// Client connections closed.
    pub connections_closed: u64,
    /// Client connections refused because their node could not be reached.
    pub connections_refused: u64,
    /// All commands.
    pub total: TapCounts,
    /// Per command name.
    pub per_command: BTreeMap<String, TapCounts>,
    /// Per node the commands were sent to.
    pub per_node: BTreeMap<NodeAddr, TapCounts>,
    /// MOVED replies per slot they named, and the node they pointed to.
    pub moved_to: BTreeMap<NodeAddr, u64>,
    /// Slots named by MOVED or ASK replies (each once).
    pub redirected_slots: Vec<u16>,
    /// First and last tap line.
    pub span: Option<(Timestamp, Timestamp)>,
    /// Commands the tap forwarded but could not record (its writer had fallen behind: the tap
    /// drops lines rather than hold a client back), from its [`NOT_RECORDED`] annotation.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub not_recorded: u64,
    /// Connection events (opened, closed, refused) not recorded, likewise.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub events_not_recorded: u64,
}

/// Counts a reply under `key`, looked up before an entry is made: a name or node seen before
/// costs no copy of its key.
fn count_in<K: Ord + Clone>(
    map: &mut BTreeMap<K, TapCounts>,
    key: &K,
    reply: &ReplyClass,
    latency_us: u64,
) {
    match map.get_mut(key) {
        Some(counts) => counts.add(reply, latency_us),
        None => map.entry(key.clone()).or_default().add(reply, latency_us),
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The `source` of the annotation a tap writes before its end line when it dropped lines: its
/// fields `commands` and `events` count what was not recorded.
pub const NOT_RECORDED: &str = "tap_not_recorded";

/// The annotation a tap writes at `t` when it forwarded `commands` commands and `events`
/// connection events it could not record.
pub fn not_recorded(t: Timestamp, commands: u64, events: u64) -> Line {
    Line::Annotation(Annotation {
        t,
        source: NOT_RECORDED.to_owned(),
        text: format!(
            "slotscope tap: {commands} commands and {events} connection events were forwarded but \
             not recorded (the recording's writer fell behind; the clients were not held back)"
        ),
        end: None,
        fields: BTreeMap::from([
            ("commands".to_owned(), commands.to_string()),
            ("events".to_owned(), events.to_string()),
        ]),
    })
}

impl TapSummary {
    /// Folds every line of a recording (lines other than tap lines are ignored).
    pub fn from_lines<'a>(lines: impl IntoIterator<Item = &'a Line>) -> TapSummary {
        let mut s = TapSummary::default();
        for l in lines {
            s.push(l);
        }
        s.finish()
    }

    /// Folds one line.
    pub fn push(&mut self, line: &Line) {
        let t = match line {
            Line::TapConn(c) => {
                match c.event {
                    ConnEvent::Opened => self.connections_opened += 1,
                    ConnEvent::Closed => self.connections_closed += 1,
                    ConnEvent::Refused => self.connections_refused += 1,
                }
                c.t
            }
            Line::TapCommand(c) => {
                self.total.add(&c.reply, c.latency_us);
                count_in(&mut self.per_command, &c.cmd, &c.reply, c.latency_us);
                count_in(&mut self.per_node, &c.node, &c.reply, c.latency_us);
                match &c.reply {
                    ReplyClass::Redirect(Redirect::Moved { slot, to }) => {
                        *self.moved_to.entry(to.clone()).or_default() += 1;
                        self.redirected_slots.push(slot.get());
                    }
                    ReplyClass::Redirect(Redirect::Ask { slot, .. }) => {
                        self.redirected_slots.push(slot.get());
                    }
                    _ => {}
                }
                c.t
            }
            Line::Annotation(a) if a.source == NOT_RECORDED => {
                let count = |name: &str| a.fields.get(name).and_then(|v| v.parse::<u64>().ok());
                self.not_recorded += count("commands").unwrap_or(0);
                self.events_not_recorded += count("events").unwrap_or(0);
                return;
            }
            _ => return,
        };
        self.span = Some(match self.span {
            None => (t, t),
            Some((a, b)) => (a.min(t), b.max(t)),
        });
    }

    /// Sorts and de-duplicates what needs it; call once after the last line.
    pub fn finish(mut self) -> TapSummary {
        self.redirected_slots.sort_unstable();
        self.redirected_slots.dedup();
        self
    }

    /// Whether the recording held any tap line.
    pub fn is_empty(&self) -> bool {
        self.span.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recording::{TapCommand, TapConn};
    use crate::slot::Slot;

    fn cmd(name: &str, node: &str, reply: ReplyClass) -> Line {
        Line::TapCommand(TapCommand {
            t: Timestamp(5),
            conn: 1,
            cmd: name.into(),
            slot: Slot::new(1),
            key: None,
            node: node.parse().unwrap(),
            reply,
            latency_us: 10,
        })
    }

    #[test]
    fn the_tap_s_not_recorded_annotation_is_counted() {
        let s = TapSummary::from_lines(&[
            cmd("get", "127.0.0.1:7000", ReplyClass::Ok),
            not_recorded(Timestamp(9), 1234, 5),
        ]);
        assert_eq!(
            (s.total.sent, s.not_recorded, s.events_not_recorded),
            (1, 1234, 5)
        );
        let json = serde_json::to_string(&s).unwrap();
        assert!(json.contains("\"not_recorded\":1234"), "{json}");
        let none = TapSummary::from_lines(&[cmd("get", "127.0.0.1:7000", ReplyClass::Ok)]);
        assert!(!serde_json::to_string(&none)
            .unwrap()
            .contains("not_recorded"));
    }

    #[test]
    fn moved_share_per_command_and_node() {
        let moved = ReplyClass::Redirect(Redirect::Moved {
            slot: Slot::new(9).unwrap(),
            to: "127.0.0.1:7001".parse().unwrap(),
        });
        let lines = vec![
            Line::TapConn(TapConn {
                t: Timestamp(1),
                conn: 1,
                event: ConnEvent::Opened,
                client: "127.0.0.1:5000".into(),
                node: "127.0.0.1:7000".parse().unwrap(),
                listener: "127.0.0.1:7400".parse().unwrap(),
                error: None,
            }),
            cmd("zrevrange", "127.0.0.1:7000", moved.clone()),
            cmd("zrevrange", "127.0.0.1:7001", ReplyClass::Ok),
            cmd("zrevrange", "127.0.0.1:7000", ReplyClass::Ok),
            cmd("zrevrange", "127.0.0.1:7000", moved),
            cmd("get", "127.0.0.1:7000", ReplyClass::Closed),
        ];
        let s = TapSummary::from_lines(&lines);
        assert_eq!(s.connections_opened, 1);
        assert_eq!(s.per_command["zrevrange"].sent, 4);
        assert!((s.per_command["zrevrange"].moved_share() - 0.5).abs() < 1e-12);
        assert_eq!(s.per_node[&"127.0.0.1:7000".parse().unwrap()].moved, 2);
        assert_eq!(s.per_command["get"].closed, 1);
        assert_eq!(s.redirected_slots, vec![9]);
        assert_eq!(s.span, Some((Timestamp(1), Timestamp(5))));
        assert!(TapSummary::from_lines(&[]).is_empty());
    }
}
