//! A cluster-aware client: sends a keyed command to the master of the key's slot and follows
//! `MOVED` (updating its slot map) and `ASK` (sending `ASKING` first, without updating the map).

use std::collections::{HashMap, HashSet};
use std::io;
use std::time::Duration;

use slotscope_core::redirect::Redirect;
use slotscope_core::resp::Value;
use slotscope_core::{NodeAddr, Slot, SLOT_COUNT};

use crate::client::Client;
use crate::topology::cluster_slots;

/// Most redirects followed for one command before giving up with an error.
pub const MAX_REDIRECTS: u32 = 8;

/// The reply to a routed command and the redirects it took.
#[derive(Clone, Debug, PartialEq)]
pub struct Routed {
    /// The final reply (an error reply other than `MOVED`/`ASK` is returned as a value).
    pub value: Value,
    /// `MOVED` redirects followed.
    pub moved: u32,
    /// `ASK` redirects followed.
    pub asked: u32,
}

/// The redirection in an error reply from `from` (`MOVED <slot> <addr>` or `ASK <slot> <addr>`).
fn redirect(v: &Value, from: &NodeAddr) -> Option<Redirect> {
    Redirect::parse(v.as_error()?, from.host())
}

/// A cluster-aware client with a slot map and one connection per node.
#[derive(Debug)]
pub struct Router {
    seeds: Vec<NodeAddr>,
    password: Option<String>,
    timeout: Duration,
    slots: Vec<Option<NodeAddr>>,
    clients: HashMap<NodeAddr, Client>,
}

impl Router {
    /// Connects through the first of `seeds` that answers and loads the slot map. `password`, if
    /// given, authenticates as the `default` user on every connection.
    ///
    /// # Errors
    ///
    /// If no seed answers `CLUSTER SLOTS`.
    pub fn connect(seeds: &[NodeAddr], password: Option<&str>) -> io::Result<Router> {
        let mut r = Router {
            seeds: seeds.to_vec(),
            password: password.map(str::to_owned),
            timeout: crate::client::DEFAULT_TIMEOUT,
            slots: vec![None; usize::from(SLOT_COUNT)],
            clients: HashMap::new(),
        };
        r.refresh()?;
        Ok(r)
    }

    /// Sets the read/write timeout of every connection, present and future.
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
        self.clients.retain(|_, c| c.set_timeout(timeout).is_ok());
    }

    /// Reloads the slot map with `CLUSTER SLOTS` from the first seed (or known node) that answers.
    ///
    /// # Errors
    ///
    /// If none answers.
    pub fn refresh(&mut self) -> io::Result<()> {
        let mut candidates = self.seeds.clone();
        candidates.extend(self.slots.iter().flatten().cloned());
        let mut seen = HashSet::new();
        candidates.retain(|a| seen.insert(a.clone()));
        let mut last = io::Error::other("no seed addresses");
        for addr in candidates {
            match self.client(&addr).and_then(cluster_slots) {
                Ok(owners) => {
                    self.slots.iter_mut().for_each(|s| *s = None);
                    for o in owners {
                        for s in o.range.slots() {
                            self.slots[usize::from(s.get())] = Some(o.addr.clone());
                        }
                    }
                    return Ok(());
                }
                Err(e) => {
                    self.clients.remove(&addr);
                    last = e;
                }
            }
        }
        Err(last)
    }

    /// The master the slot map names for `slot`.
    pub fn owner(&self, slot: Slot) -> Option<&NodeAddr> {
        self.slots[usize::from(slot.get())].as_ref()
    }

    /// The connection to `addr`, opened (and authenticated) on first use.
    fn client(&mut self, addr: &NodeAddr) -> io::Result<&mut Client> {
        if !self.clients.contains_key(addr) {
            let mut c = Client::connect_timeout(addr, self.timeout)?;
            if let Some(p) = &self.password {
                c.auth("default", p)?;
            }
            self.clients.insert(addr.clone(), c);
        }
        Ok(self.clients.get_mut(addr).expect("just inserted"))
    }

    /// Sends a command whose key is `args[1]` (as `GET key`, `SET key value`).
    ///
    /// # Errors
    ///
    /// See [`Router::cmd_key`].
    ///
    /// # Panics
    ///
    /// If `args` has fewer than two elements.
    pub fn cmd<A: AsRef<[u8]>>(&mut self, args: &[A]) -> io::Result<Routed> {
        let key = args
            .get(1)
            .expect("a keyed command has a key")
            .as_ref()
            .to_vec();
        self.cmd_key(&key, args)
    }

    /// Sends `args` to the master of `key`'s slot, following redirects.
    ///
    /// # Errors
    ///
    /// On a transport failure (the connection is dropped and reopened on next use), an unknown
    /// slot owner, or more than [`MAX_REDIRECTS`] redirects.
    pub fn cmd_key<A: AsRef<[u8]>>(&mut self, key: &[u8], args: &[A]) -> io::Result<Routed> {
        let slot = Slot::for_key(key);
        let mut addr = match self.owner(slot) {
            Some(a) => a.clone(),
            None => {
                self.refresh()?;
                self.owner(slot)
                    .cloned()
                    .ok_or_else(|| io::Error::other(format!("slot {slot} has no owner")))?
            }
        };
        let mut asking = false;
        let (mut moved, mut asked) = (0, 0);
        for _ in 0..=MAX_REDIRECTS {
            let reply = self.send(&addr, args, asking);
            let value = match reply {
                Ok(v) => v,
                Err(e) => {
                    self.clients.remove(&addr);
                    return Err(io::Error::new(e.kind(), format!("{addr}: {e}")));
                }
            };
            match redirect(&value, &addr) {
                Some(Redirect::Moved { slot: s, to }) => {
                    moved += 1;
                    self.slots[usize::from(s.get())] = Some(to.clone());
                    addr = to;
                    asking = false;
                }
                Some(Redirect::Ask { to, .. }) => {
                    asked += 1;
                    addr = to;
                    asking = true;
                }
                None => {
                    return Ok(Routed {
                        value,
                        moved,
                        asked,
                    })
                }
            }
        }
        Err(io::Error::other(format!(
            "slot {slot}: more than {MAX_REDIRECTS} redirects ({moved} MOVED, {asked} ASK)"
        )))
    }

    /// Sends one command to `addr`, preceded by `ASKING` in the same write when `asking`.
    fn send<A: AsRef<[u8]>>(
        &mut self,
        addr: &NodeAddr,
        args: &[A],
        asking: bool,
    ) -> io::Result<Value> {
        let c = self.client(addr)?;
        if !asking {
            return c.cmd(args);
        }
        let cmds: Vec<Vec<&[u8]>> = vec![
            vec![b"ASKING".as_slice()],
            args.iter().map(AsRef::as_ref).collect(),
        ];
        let mut replies = c.pipeline(&cmds)?;
        let reply = replies.pop().expect("two replies");
        match replies.pop() {
            Some(Value::Error(e)) => Err(io::Error::other(format!("ASKING failed: {e}"))),
            _ => Ok(reply),
        }
    }
}
