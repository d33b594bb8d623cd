//! The recording lines a tap writes: one per client connection opened or closed ([`TapConn`]), one
//! per command with its reply ([`TapCommand`]). They sit in the same file as the poller's lines
//! (`"type":"tap_conn"`, `"type":"tap_command"`).
//!
//! ```text
//! {"type":"tap_conn","t":1732000000000,"conn":1,"event":"opened","client":"127.0.0.1:51234","node":"127.0.0.1:7000","listener":"127.0.0.1:7400"}
//! {"type":"tap_command","t":1732000000001,"conn":1,"cmd":"get","slot":12182,"node":"127.0.0.1:7000","reply":{"class":"moved","slot":12182,"to":"127.0.0.1:7001"},"latency_us":84}
//! ```

use serde::{Deserialize, Serialize};

use crate::node::NodeAddr;
use crate::slot::Slot;
use crate::tap::reply::ReplyClass;
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
