//! What came back for a command: the [`ReplyClass`] the tap records for a reply frame (the class
//! itself belongs to the recording schema, [`crate::recording::tap`]), and pub/sub frames that
//! arrive without a request.

use crate::recording::ReplyClass;
use crate::redirect::Redirect;

impl ReplyClass {
    /// The class of one complete reply frame; `same_host` as in [`Redirect::parse`].
    pub fn of_frame(frame: &[u8], same_host: &str) -> ReplyClass {
        match frame.first() {
            Some(b'-') => {
                let line = frame[1..].strip_suffix(b"\r\n").unwrap_or(&frame[1..]);
                ReplyClass::of_error(&String::from_utf8_lossy(line), same_host)
            }
            Some(b'!') => {
                // `!<len>\r\n<payload>\r\n`
                let payload = frame
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(&frame[..0], |i| &frame[i + 1..]);
                let payload = payload.strip_suffix(b"\r\n").unwrap_or(payload);
                ReplyClass::of_error(&String::from_utf8_lossy(payload), same_host)
            }
            _ => ReplyClass::Ok,
        }
    }

    /// The class of an error text (without the `-`).
    pub fn of_error(error: &str, same_host: &str) -> ReplyClass {
        let code = error.split(' ').next().unwrap_or_default();
        match code {
            "MOVED" | "ASK" => match Redirect::parse(error, same_host) {
                Some(r) => ReplyClass::Redirect(r),
                None => ReplyClass::Error { code: code.into() },
            },
            "TRYAGAIN" => ReplyClass::TryAgain,
            "CLUSTERDOWN" => ReplyClass::ClusterDown,
            _ => ReplyClass::Error {
                code: code
                    .chars()
                    .take(32)
                    .filter(|c| c.is_ascii_graphic())
                    .collect(),
            },
        }
    }
}

/// A frame that may arrive without a request of its own: pub/sub confirmations and messages
/// (RESP2 arrays on a subscribed connection, RESP3 pushes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PubSub {
    /// `subscribe` / `unsubscribe` / `psubscribe` / … confirmation, with the connection's
    /// subscription count after it.
    Confirmation {
        /// Subscriptions left (or made so far).
        count: i64,
    },
    /// `message`, `pmessage`, `smessage`: a published message.
    Message,
}

/// Whether a reply frame is a pub/sub confirmation or message, by its first element (an array or
/// push whose first element is one of the pub/sub kinds).
pub fn pubsub_kind(frame: &[u8]) -> Option<PubSub> {
    let rest = frame
        .strip_prefix(b"*")
        .or_else(|| frame.strip_prefix(b">"))?;
    let nl = rest.iter().position(|&b| b == b'\n')?;
    let n: usize = std::str::from_utf8(rest.get(..nl.checked_sub(1)?)?)
        .ok()?
        .parse()
        .ok()?;
    let rest = rest.get(nl + 1..)?.strip_prefix(b"$")?;
    let nl = rest.iter().position(|&b| b == b'\n')?;
    let len: usize = std::str::from_utf8(rest.get(..nl.checked_sub(1)?)?)
        .ok()?
        .parse()
        .ok()?;
    let kind = rest.get(nl + 1..nl + 1 + len)?;
    match kind {
        b"message" | b"pmessage" | b"smessage" => Some(PubSub::Message),
        b"subscribe" | b"unsubscribe" | b"psubscribe" | b"punsubscribe" | b"ssubscribe"
        | b"sunsubscribe"
            if n == 3 =>
        {
            // The count is the last element: `:<n>\r\n` at the end of the frame.
            let body = frame.strip_suffix(b"\r\n")?;
            let colon = body.iter().rposition(|&b| b == b':')?;
            let count = std::str::from_utf8(&body[colon + 1..]).ok()?.parse().ok()?;
            Some(PubSub::Confirmation { count })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reply_frames_are_classified() {
        let c = |f: &[u8]| ReplyClass::of_frame(f, "127.0.0.1");
        assert_eq!(c(b"+OK\r\n"), ReplyClass::Ok);
        assert_eq!(c(b"$-1\r\n"), ReplyClass::Ok);
        assert_eq!(c(b"-MOVED 5 127.0.0.1:7001\r\n").name(), "moved");
        assert_eq!(c(b"-ASK 5 127.0.0.1:7001\r\n").name(), "ask");
        assert_eq!(
            c(b"-MOVED 5 :7001\r\n"),
            ReplyClass::Redirect(Redirect::Moved {
                slot: crate::Slot::new(5).unwrap(),
                to: "127.0.0.1:7001".parse().unwrap()
            })
        );
        assert_eq!(
            c(b"-MOVED 16384 127.0.0.1:7001\r\n"),
            ReplyClass::Error {
                code: "MOVED".into()
            }
        );
        assert_eq!(
            c(b"-TRYAGAIN Multiple keys request during rehashing of slot\r\n"),
            ReplyClass::TryAgain
        );
        assert_eq!(
            c(b"-CLUSTERDOWN The cluster is down\r\n"),
            ReplyClass::ClusterDown
        );
        assert_eq!(
            c(b"-ERR unknown command 'x', with args beginning with: 'secret'\r\n"),
            ReplyClass::Error { code: "ERR".into() }
        );
        assert_eq!(
            c(b"!21\r\nSYNTAX invalid syntax\r\n"),
            ReplyClass::Error {
                code: "SYNTAX".into()
            }
        );
    }

    #[test]
    fn pubsub_frames_are_told_apart() {
        assert_eq!(
            pubsub_kind(b"*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n"),
            Some(PubSub::Confirmation { count: 1 })
        );
        assert_eq!(
            pubsub_kind(b">3\r\n$11\r\nunsubscribe\r\n_\r\n:0\r\n"),
            Some(PubSub::Confirmation { count: 0 })
        );
        assert_eq!(
            pubsub_kind(b"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhello\r\n"),
            Some(PubSub::Message)
        );
        assert_eq!(pubsub_kind(b"*2\r\n$4\r\npong\r\n$0\r\n\r\n"), None);
        assert_eq!(pubsub_kind(b"+OK\r\n"), None);
    }
}
