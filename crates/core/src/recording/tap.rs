//! The recording lines `slotscope tap` writes: one per client connection opened or closed
//! ([`TapConn`]), one per command with the class of its reply ([`TapCommand`], [`ReplyClass`]).
//! They sit in the same file as the poller's lines (`"type":"tap_conn"`, `"type":"tap_command"`).
//! How a reply frame is classified is the tap's business (`crate::tap::reply`); this module is
//! only the schema.
//!
//! ```text
//! {"type":"tap_conn","t":1732000000000,"conn":1,"event":"opened","client":"127.0.0.1:51234","node":"127.0.0.1:7000","listener":"127.0.0.1:7400"}
//! {"type":"tap_command","t":1732000000001,"conn":1,"cmd":"get","slot":12182,"node":"127.0.0.1:7000","reply":{"class":"moved","slot":12182,"to":"127.0.0.1:7001"},"latency_us":84}
//! ```

use std::borrow::Cow;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::node::NodeAddr;
use crate::redirect::Redirect;
use crate::slot::Slot;
use crate::time::Timestamp;

/// What happened to a client connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConnEvent {
    /// The client connected to a listener and the tap reached the node behind it.
    Opened,
    /// The connection ended (either side closed it, or the tap stopped).
    Closed,
    /// The client connected but the node behind the listener could not be reached; the client's
    /// connection was closed at once.
    Refused,
}

/// A client connection through the tap opened or closed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TapConn {
    /// When.
    pub t: Timestamp,
    /// The connection's number, unique within the recording, from 1.
    pub conn: u64,
    /// What happened.
    pub event: ConnEvent,
    /// The client's address (`ip:port`).
    pub client: String,
    /// The real node the connection goes to.
    pub node: NodeAddr,
    /// The tap's listener the client connected to.
    pub listener: NodeAddr,
    /// Why it closed or was refused (an I/O error's text), if not simply by either side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One command a client sent through the tap, and what came back.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TapCommand {
    /// When the tap forwarded the command.
    pub t: Timestamp,
    /// The connection it came on ([`TapConn::conn`]).
    pub conn: u64,
    /// The command name in lower case, with the subcommand of container commands (`cluster
    /// slots`). Never an argument: `auth` and `hello` are recorded by name only.
    pub cmd: String,
    /// The slot of its first key, if it has keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<Slot>,
    /// The first key's name (lossy UTF-8), only when the tap ran with `--record-keys`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The real node it was sent to.
    pub node: NodeAddr,
    /// What came back.
    pub reply: ReplyClass,
    /// Time from forwarding the command until its whole reply had arrived, in microseconds.
    pub latency_us: u64,
}

/// The class of a command's reply, as recorded.
///
/// In the file it is one object tagged by `"class"`, a redirection's fields beside the tag:
/// `{"class":"ok"}`, `{"class":"moved","slot":12182,"to":"127.0.0.1:7001"}`,
/// `{"class":"error","code":"ERR"}` (see [`ReplyClass::name`] for every tag).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplyClass {
    /// Anything but an error.
    Ok,
    /// `-MOVED` / `-ASK`; `to` is the real node, not the tap's listener.
    Redirect(Redirect),
    /// `-TRYAGAIN` (a multi-key command during a migration).
    TryAgain,
    /// `-CLUSTERDOWN`.
    ClusterDown,
    /// Any other error; only its code (the first word, e.g. `ERR`, `WRONGTYPE`, `NOAUTH`), which
    /// never holds a value.
    Error {
        /// The error code.
        code: String,
    },
    /// The connection closed before the reply came.
    Closed,
}

impl ReplyClass {
    /// The class's name as written in the file (`ok`, `moved`, `ask`, `try_again`,
    /// `cluster_down`, `error`, `closed`).
    pub fn name(&self) -> &'static str {
        match self {
            ReplyClass::Ok => "ok",
            ReplyClass::Redirect(Redirect::Moved { .. }) => "moved",
            ReplyClass::Redirect(Redirect::Ask { .. }) => "ask",
            ReplyClass::TryAgain => "try_again",
            ReplyClass::ClusterDown => "cluster_down",
            ReplyClass::Error { .. } => "error",
            ReplyClass::Closed => "closed",
        }
    }
}

/// [`ReplyClass`] as written in the file: `moved` and `ask` are classes of their own, flat beside
/// the tag. Borrowed to write, owned when read.
#[derive(Serialize, Deserialize)]
#[serde(rename = "ReplyClass", tag = "class", rename_all = "snake_case")]
enum ReplyClassLine<'a> {
    Ok,
    Moved { slot: Slot, to: Cow<'a, NodeAddr> },
    Ask { slot: Slot, to: Cow<'a, NodeAddr> },
    TryAgain,
    ClusterDown,
    Error { code: Cow<'a, str> },
    Closed,
}

impl<'a> From<&'a ReplyClass> for ReplyClassLine<'a> {
    fn from(c: &'a ReplyClass) -> Self {
        match c {
            ReplyClass::Ok => ReplyClassLine::Ok,
            ReplyClass::Redirect(Redirect::Moved { slot, to }) => ReplyClassLine::Moved {
                slot: *slot,
                to: Cow::Borrowed(to),
            },
            ReplyClass::Redirect(Redirect::Ask { slot, to }) => ReplyClassLine::Ask {
                slot: *slot,
                to: Cow::Borrowed(to),
            },
            ReplyClass::TryAgain => ReplyClassLine::TryAgain,
            ReplyClass::ClusterDown => ReplyClassLine::ClusterDown,
            ReplyClass::Error { code } => ReplyClassLine::Error {
                code: Cow::Borrowed(code),
            },
            ReplyClass::Closed => ReplyClassLine::Closed,
        }
    }
}

impl From<ReplyClassLine<'_>> for ReplyClass {
    fn from(c: ReplyClassLine<'_>) -> Self {
        match c {
            ReplyClassLine::Ok => ReplyClass::Ok,
            ReplyClassLine::Moved { slot, to } => ReplyClass::Redirect(Redirect::Moved {
                slot,
                to: to.into_owned(),
            }),
            ReplyClassLine::Ask { slot, to } => ReplyClass::Redirect(Redirect::Ask {
                slot,
                to: to.into_owned(),
            }),
            ReplyClassLine::TryAgain => ReplyClass::TryAgain,
            ReplyClassLine::ClusterDown => ReplyClass::ClusterDown,
            ReplyClassLine::Error { code } => ReplyClass::Error {
                code: code.into_owned(),
            },
            ReplyClassLine::Closed => ReplyClass::Closed,
        }
    }
}

impl Serialize for ReplyClass {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        ReplyClassLine::from(self).serialize(s)
    }
}

impl<'de> Deserialize<'de> for ReplyClass {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        ReplyClassLine::deserialize(d).map(ReplyClass::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moved() -> ReplyClass {
        ReplyClass::Redirect(Redirect::Moved {
            slot: Slot::new(7).unwrap(),
            to: "127.0.0.1:7001".parse().unwrap(),
        })
    }

    #[test]
    fn classes_serialise_with_a_tag() {
        let j = serde_json::to_string(&moved()).unwrap();
        assert_eq!(j, r#"{"class":"moved","slot":7,"to":"127.0.0.1:7001"}"#);
        assert_eq!(
            serde_json::to_string(&ReplyClass::TryAgain).unwrap(),
            r#"{"class":"try_again"}"#
        );
    }

    #[test]
    fn every_class_reads_back_under_its_name() {
        let ask = ReplyClass::Redirect(Redirect::Ask {
            slot: Slot::new(16383).unwrap(),
            to: "[::1]:7002".parse().unwrap(),
        });
        for c in [
            ReplyClass::Ok,
            moved(),
            ask,
            ReplyClass::TryAgain,
            ReplyClass::ClusterDown,
            ReplyClass::Error { code: "ERR".into() },
            ReplyClass::Closed,
        ] {
            let j = serde_json::to_string(&c).unwrap();
            assert!(
                j.starts_with(&format!(r#"{{"class":"{}""#, c.name())),
                "{j}"
            );
            assert_eq!(serde_json::from_str::<ReplyClass>(&j).unwrap(), c, "{j}");
        }
    }

    #[test]
    fn bad_classes_are_refused_by_name() {
        let e = serde_json::from_str::<ReplyClass>(r#"{"class":"redirect"}"#).unwrap_err();
        assert!(e.to_string().contains("unknown variant `redirect`"), "{e}");
        let e = serde_json::from_str::<ReplyClass>(r#"{"class":"moved","slot":16384,"to":"a:1"}"#);
        assert!(e.is_err());
    }
}
