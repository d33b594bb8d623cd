//! Rewriting node addresses in replies so that every connection a client makes goes through the
//! tap: `-MOVED` / `-ASK` errors, and the replies of `CLUSTER SLOTS`, `CLUSTER SHARDS` and
//! `CLUSTER NODES` (also `REPLICAS` / `SLAVES`), in RESP2 and RESP3. Only the address fields change;
//! every other byte of the reply is kept (the frame is re-encoded from a lossless tree).
//!
//! Which listener stands for which node is the caller's business ([`Listeners`]): the collector binds
//! a new listener the first time a node appears in a reply.

use crate::node::NodeAddr;
use crate::redirect::Redirect;
use crate::tap::command::TopologyQuery;
use crate::tap::frame::RawFrame;

/// The tap's listener for each node.
pub trait Listeners {
    /// The listener standing for `node`, made on first use; `None` if none can be made (the
    /// address is then left as it is).
    fn listener_for(&mut self, node: &NodeAddr) -> Option<NodeAddr>;
}

impl<F: FnMut(&NodeAddr) -> Option<NodeAddr>> Listeners for F {
    fn listener_for(&mut self, node: &NodeAddr) -> Option<NodeAddr> {
        self(node)
    }
}

/// `host:port` as servers write it in replies (IPv6 without brackets).
fn host_port(a: &NodeAddr) -> String {
    format!("{}:{}", a.host(), a.port())
}

/// The rewritten form of an error reply frame if it is a `-MOVED` / `-ASK` to a node the tap has a
/// listener for; `None` to forward the frame unchanged. `same_host` is the host of the node that
/// answered (for redirections with an empty host).
pub fn rewrite_redirect(
    frame: &[u8],
    same_host: &str,
    listeners: &mut dyn Listeners,
) -> Option<Vec<u8>> {
    let line = frame.strip_prefix(b"-")?.strip_suffix(b"\r\n")?;
    if !(line.starts_with(b"MOVED ") || line.starts_with(b"ASK ")) {
        return None;
    }
    let text = std::str::from_utf8(line).ok()?;
    let redirect = Redirect::parse(text, same_host)?;
    let listener = listeners.listener_for(redirect.to())?;
    Some(format!("-{}\r\n", redirect.with_to(listener)).into_bytes())
}

/// The rewritten form of a topology reply frame; `None` to forward it unchanged (an error reply,
/// or one the tap does not understand). `same_host` as in [`rewrite_redirect`].
pub fn rewrite_topology(
    query: TopologyQuery,
    frame: &[u8],
    same_host: &str,
    listeners: &mut dyn Listeners,
) -> Option<Vec<u8>> {
    let (mut raw, used) = RawFrame::parse(frame)?;
    if used != frame.len() {
        return None;
    }
    let changed = match query {
        TopologyQuery::Slots => slots(&mut raw, same_host, listeners),
        TopologyQuery::Shards => shards(&mut raw, same_host, listeners),
        TopologyQuery::Nodes => nodes_text(&mut raw, same_host, listeners),
    };
    if !changed {
        return None;
    }
    let mut out = Vec::with_capacity(frame.len() + 64);
    raw.encode(&mut out);
    Some(out)
}

fn text(f: &RawFrame) -> Option<String> {
    f.text().map(|t| String::from_utf8_lossy(t).into_owned())
}

fn port_of(f: &RawFrame) -> Option<u16> {
    u16::try_from(f.int()?).ok().filter(|&p| p != 0)
}

/// Sets an integer (or a string holding one) to `n`, keeping its type.
fn set_int(f: &mut RawFrame, n: u16) {
    match f {
        RawFrame::Line(b':', body) => *body = n.to_string().into_bytes(),
        other => {
            other.set_text(n.to_string().as_bytes());
        }
    }
}

/// `CLUSTER SLOTS`: `[[start, end, [host, port, id, {meta}], …], …]`.
fn slots(raw: &mut RawFrame, same_host: &str, listeners: &mut dyn Listeners) -> bool {
    let Some(ranges) = raw.items_mut() else {
        return false;
    };
    let mut changed = false;
    for range in ranges {
        let Some(items) = range.items_mut() else {
            continue;
        };
        for node in items.iter_mut().skip(2) {
            let Some(fields) = node.items_mut() else {
                continue;
            };
            let (Some(host), Some(port)) = (
                fields.first().and_then(text),
                fields.get(1).and_then(port_of),
            ) else {
                continue;
            };
            let host = if host.is_empty() || host == "?" {
                same_host.to_owned()
            } else {
                host
            };
            let Some(l) = NodeAddr::new(host, port).and_then(|n| listeners.listener_for(&n)) else {
                continue;
            };
            fields[0].set_text(l.host().as_bytes());
            set_int(&mut fields[1], l.port());
            // Metadata (Redis 7+): `ip` and `hostname` name the node too.
            if let Some(meta) = fields.get_mut(3).and_then(RawFrame::items_mut) {
                set_pairs(meta, &["ip", "hostname"], l.host(), None);
            }
            changed = true;
        }
    }
    changed
}

/// Sets the values of the keys `hosts` to `host` (and `port` to `port`) in a map's or flat
/// array's alternating keys and values.
fn set_pairs(kv: &mut [RawFrame], hosts: &[&str], host: &str, port: Option<u16>) {
    for pair in kv.chunks_exact_mut(2) {
        let Some(k) = text(&pair[0]) else { continue };
        if hosts.contains(&k.as_str()) {
            pair[1].set_text(host.as_bytes());
        } else if k == "port" {
            if let Some(p) = port {
                set_int(&mut pair[1], p);
            }
        }
    }
}

fn lookup<'a>(kv: &'a [RawFrame], key: &str) -> Option<&'a RawFrame> {
    kv.chunks_exact(2)
        .find(|p| text(&p[0]).as_deref() == Some(key))
        .map(|p| &p[1])
}

/// `CLUSTER SHARDS`: `[{slots: […], nodes: [{id, port, ip, endpoint, hostname, …}, …]}, …]`.
fn shards(raw: &mut RawFrame, same_host: &str, listeners: &mut dyn Listeners) -> bool {
    let Some(shards) = raw.items_mut() else {
        return false;
    };
    let mut changed = false;
    for shard in shards {
        let Some(kv) = shard.items_mut() else {
            continue;
        };
        for pair in kv.chunks_exact_mut(2) {
            if text(&pair[0]).as_deref() != Some("nodes") {
                continue;
            }
            let Some(nodes) = pair[1].items_mut() else {
                continue;
            };
            for node in nodes {
                let Some(fields) = node.items_mut() else {
                    continue;
                };
                let Some(port) = lookup(fields, "port").and_then(port_of) else {
                    continue;
                };
                let host = ["ip", "endpoint"]
                    .iter()
                    .filter_map(|k| lookup(fields, k).and_then(text))
                    .find(|h| !h.is_empty() && h != "?")
                    .unwrap_or_else(|| same_host.to_owned());
                let Some(l) = NodeAddr::new(host, port).and_then(|n| listeners.listener_for(&n))
                else {
                    continue;
                };
                set_pairs(
                    fields,
                    &["ip", "endpoint", "hostname"],
                    l.host(),
                    Some(l.port()),
                );
                changed = true;
            }
        }
    }
    changed
}

/// `CLUSTER NODES` text: the second field of each line is `ip:port@cport[,hostname…]`.
fn nodes_text(raw: &mut RawFrame, same_host: &str, listeners: &mut dyn Listeners) -> bool {
    let Some(body) = raw.text().map(<[u8]>::to_vec) else {
        return false;
    };
    let Ok(body) = String::from_utf8(body) else {
        return false;
    };
    let mut out = String::with_capacity(body.len() + 64);
    let mut changed = false;
    for line in body.split_inclusive('\n') {
        let mut fields = line.splitn(3, ' ');
        let (Some(id), Some(addr), Some(rest)) = (fields.next(), fields.next(), fields.next())
        else {
            out.push_str(line);
            continue;
        };
        let (hp, tail) = addr.split_at(addr.find('@').unwrap_or(addr.len()));
        let target = hp.rsplit_once(':').and_then(|(h, p)| {
            let port: u16 = p.parse().ok().filter(|&p| p != 0)?;
            let h = if h.is_empty() || h == "?" {
                same_host
            } else {
                h
            };
            NodeAddr::new(h, port)
        });
        match target.and_then(|n| listeners.listener_for(&n)) {
            Some(l) => {
                out.push_str(&format!("{id} {}{tail} {rest}", host_port(&l)));
                changed = true;
            }
            None => out.push_str(line),
        }
    }
    changed && raw.set_text(out.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Listeners on 127.0.0.9, port = node port + 1000.
    fn map() -> impl FnMut(&NodeAddr) -> Option<NodeAddr> {
        let mut seen = BTreeMap::new();
        move |n: &NodeAddr| {
            let l = NodeAddr::new("127.0.0.9", n.port() + 1000)?;
            seen.insert(n.clone(), l.clone());
            Some(l)
        }
    }

    fn rewrite(q: TopologyQuery, frame: &[u8]) -> Vec<u8> {
        rewrite_topology(q, frame, "127.0.0.1", &mut map()).expect("rewritten")
    }

    #[test]
    fn redirections_point_at_the_listener() {
        let out = rewrite_redirect(b"-MOVED 3999 127.0.0.1:7001\r\n", "x", &mut map());
        assert_eq!(out.unwrap(), b"-MOVED 3999 127.0.0.9:8001\r\n");
        let out = rewrite_redirect(b"-ASK 1 :7002\r\n", "127.0.0.1", &mut map());
        assert_eq!(out.unwrap(), b"-ASK 1 127.0.0.9:8002\r\n");
        assert_eq!(rewrite_redirect(b"-ERR x\r\n", "x", &mut map()), None);
        assert_eq!(rewrite_redirect(b"+OK\r\n", "x", &mut map()), None);
    }

    #[test]
    fn cluster_slots_resp2_and_resp3() {
        // Redis 7.0.15, two masters, CLUSTER SLOTS in RESP2 (ids shortened).
        let r2 = b"*2\r\n*3\r\n:0\r\n:8191\r\n*4\r\n$9\r\n127.0.0.1\r\n:7000\r\n$2\r\nid\r\n*0\r\n\
*3\r\n:8192\r\n:16383\r\n*4\r\n$9\r\n127.0.0.1\r\n:7001\r\n$2\r\nid\r\n*0\r\n";
        let want =
            b"*2\r\n*3\r\n:0\r\n:8191\r\n*4\r\n$9\r\n127.0.0.9\r\n:8000\r\n$2\r\nid\r\n*0\r\n\
*3\r\n:8192\r\n:16383\r\n*4\r\n$9\r\n127.0.0.9\r\n:8001\r\n$2\r\nid\r\n*0\r\n";
        assert_eq!(rewrite(TopologyQuery::Slots, r2), want);
        // RESP3 with metadata and an empty host.
        let r3 = b"*1\r\n*3\r\n:0\r\n:16383\r\n*4\r\n$0\r\n\r\n:7000\r\n$2\r\nid\r\n%1\r\n$8\r\nhostname\r\n$4\r\nnode\r\n";
        let want = b"*1\r\n*3\r\n:0\r\n:16383\r\n*4\r\n$9\r\n127.0.0.9\r\n:8000\r\n$2\r\nid\r\n%1\r\n$8\r\nhostname\r\n$9\r\n127.0.0.9\r\n";
        assert_eq!(rewrite(TopologyQuery::Slots, r3), want);
    }

    #[test]
    fn cluster_shards_resp3_map() {
        let r3 = b"*1\r\n%2\r\n$5\r\nslots\r\n*2\r\n:0\r\n:16383\r\n$5\r\nnodes\r\n*1\r\n%4\r\n\
$2\r\nid\r\n$2\r\nab\r\n$4\r\nport\r\n:7000\r\n$2\r\nip\r\n$9\r\n127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n";
        let want = b"*1\r\n%2\r\n$5\r\nslots\r\n*2\r\n:0\r\n:16383\r\n$5\r\nnodes\r\n*1\r\n%4\r\n\
$2\r\nid\r\n$2\r\nab\r\n$4\r\nport\r\n:8000\r\n$2\r\nip\r\n$9\r\n127.0.0.9\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.9\r\n";
        assert_eq!(rewrite(TopologyQuery::Shards, r3), want);
    }

    #[test]
    fn cluster_nodes_text_keeps_everything_but_the_address() {
        let text = "07c3 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-8191\n\
8a1f 127.0.0.1:7001@17001,host1 master - 0 1700 2 connected 8192-16383\n\
9b2e :0@0 master,noaddr - 0 0 0 disconnected\n";
        let mut frame = format!("${}\r\n{text}\r\n", text.len()).into_bytes();
        let out = rewrite(TopologyQuery::Nodes, &frame);
        let want = "07c3 127.0.0.9:8000@17000 myself,master - 0 0 1 connected 0-8191\n\
8a1f 127.0.0.9:8001@17001,host1 master - 0 1700 2 connected 8192-16383\n\
9b2e :0@0 master,noaddr - 0 0 0 disconnected\n";
        assert_eq!(out, format!("${}\r\n{want}\r\n", want.len()).into_bytes());
        // RESP3 verbatim string keeps its format prefix.
        frame = format!("={}\r\ntxt:{text}\r\n", text.len() + 4).into_bytes();
        let out = rewrite(TopologyQuery::Nodes, &frame);
        assert!(out.starts_with(b"="));
        assert!(String::from_utf8_lossy(&out).contains("txt:07c3 127.0.0.9:8000@17000"));
    }

    #[test]
    fn errors_and_strange_replies_pass_unchanged() {
        for f in [
            &b"-ERR This instance has cluster support disabled\r\n"[..],
            b"*0\r\n",
            b":1\r\n",
        ] {
            for q in [
                TopologyQuery::Slots,
                TopologyQuery::Shards,
                TopologyQuery::Nodes,
            ] {
                assert_eq!(rewrite_topology(q, f, "h", &mut map()), None);
            }
        }
    }
}
