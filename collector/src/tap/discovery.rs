//! Best-effort discovery at start: one `CLUSTER SLOTS` sent to the upstream node, so that every
//! node of the cluster has its listener before the first client connects (listeners are otherwise
//! bound as nodes appear in replies). It does not log in: on a cluster that requires `AUTH`, the
//! listeners are bound on demand instead.

use std::time::Duration;

use slotscope_core::resp::{self, Value};
use slotscope_core::topology::TopologyView;
use slotscope_core::NodeAddr;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// How long discovery may take.
const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(3);
/// Largest `CLUSTER SLOTS` reply read.
const MAX_REPLY: usize = 16 * 1024 * 1024;

/// The node addresses `CLUSTER SLOTS` on `upstream` lists, the upstream first; empty if it does
/// not answer (or needs a login).
pub async fn nodes(upstream: &NodeAddr) -> Vec<NodeAddr> {
    tokio::time::timeout(DISCOVERY_TIMEOUT, ask(upstream))
        .await
        .ok()
        .flatten()
        .unwrap_or_default()
}

async fn ask(upstream: &NodeAddr) -> Option<Vec<NodeAddr>> {
    let mut s = TcpStream::connect((upstream.host(), upstream.port()))
        .await
        .ok()?;
    let mut req = Vec::new();
    resp::encode_command(&["CLUSTER", "SLOTS"], &mut req);
    s.write_all(&req).await.ok()?;
    let mut buf = Vec::with_capacity(16 * 1024);
    let reply = loop {
        if s.read_buf(&mut buf).await.ok()? == 0 || buf.len() > MAX_REPLY {
            return None;
        }
        if let Some((v, _)) = resp::parse(&buf).ok()? {
            break v;
        }
    };
    if matches!(reply, Value::Error(_)) {
        return None;
    }
    let mut view = TopologyView::from_slots(&reply).ok()?;
    view.fill_own_address(upstream);
    let mut out = vec![upstream.clone()];
    for a in view.addresses() {
        if !out.contains(&a) {
            out.push(a);
        }
    }
    Some(out)
}
