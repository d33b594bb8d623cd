//! The model under test with its transport tapped: what the core's per-second timeline does not
//! keep (per command attempts and `MOVED` replies, `CLUSTER SLOTS` calls), counted per second.

use slotscope_core::redirect::Redirect;
use slotscope_core::replay::{
    ClientModel, ClientSnapshot, ClientState, ErrorClass, Outcome, Reply, Routed, Transport,
    Workload,
};
use slotscope_core::slot::SlotRange;
use slotscope_core::{NodeAddr, Timestamp};

/// Counts per second of the replay that the core's timeline does not keep.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tally {
    /// Per command name index: attempts that reached a server.
    pub(crate) calls: Vec<u64>,
    /// Per command name index: `MOVED` replies.
    pub(crate) moved: Vec<u64>,
    /// `CLUSTER SLOTS` calls.
    pub(crate) slots: u64,
}

/// A transport that counts what passes through it.
struct Tap<'a> {
    net: &'a mut dyn Transport,
    calls: u64,
    moved: u64,
    slots: u64,
}

impl Transport for Tap<'_> {
    fn now(&self) -> Timestamp {
        self.net.now()
    }

    fn sleep(&mut self, ms: u64) {
        self.net.sleep(ms);
    }

    fn resume_at(&mut self, t: Timestamp) {
        self.net.resume_at(t);
    }

    fn send(&mut self, to: &NodeAddr, cmd: Routed, asking: bool) -> Reply {
        let r = self.net.send(to, cmd, asking);
        self.calls += u64::from(!matches!(r, Reply::ConnectionError | Reply::Timeout));
        self.moved += u64::from(matches!(r, Reply::Redirect(Redirect::Moved { .. })));
        r
    }

    fn cluster_slots(&mut self, to: &NodeAddr) -> Result<Vec<(SlotRange, NodeAddr)>, Reply> {
        self.slots += 1;
        self.net.cluster_slots(to)
    }
}

/// The model under test, its transport tapped: per second, per command attempts and `MOVED`
/// replies and `CLUSTER SLOTS` calls. It finds each command's name by matching its time and key
/// against the workload (the driver issues the workload's commands in order, skipping some).
pub(crate) struct Probe<'w> {
    inner: Box<dyn ClientModel>,
    workload: &'w Workload,
    next: usize,
    start: Timestamp,
    pub(crate) seconds: Vec<Tally>,
}

impl<'w> Probe<'w> {
    /// Wraps `inner`, which is to run `workload`.
    pub(crate) fn new(inner: Box<dyn ClientModel>, workload: &'w Workload) -> Probe<'w> {
        Probe {
            inner,
            workload,
            next: 0,
            start: workload.commands.first().map_or(Timestamp(0), |c| c.t),
            seconds: Vec::new(),
        }
    }
}

/// Seconds a probe keeps (as many as the core's timeline).
const MAX_SECONDS: usize = 1_000_000;

impl ClientModel for Probe<'_> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn execute(&mut self, cmd: Routed, net: &mut dyn Transport) -> Outcome {
        let t = net.now();
        let name = self.workload.commands[self.next.min(self.workload.commands.len())..]
            .iter()
            .position(|c| c.t == t && c.key == cmd.key)
            .map(|i| {
                self.next += i + 1;
                usize::from(self.workload.commands[self.next - 1].name)
            });
        let mut tap = Tap {
            net,
            calls: 0,
            moved: 0,
            slots: 0,
        };
        let outcome = self.inner.execute(cmd, &mut tap);
        let second = usize::try_from(t.millis_since(self.start) / 1000).unwrap_or(usize::MAX);
        if second < MAX_SECONDS {
            if self.seconds.len() <= second {
                let names = self.workload.names.len();
                self.seconds.resize(
                    second + 1,
                    Tally {
                        calls: vec![0; names],
                        moved: vec![0; names],
                        slots: 0,
                    },
                );
            }
            let s = &mut self.seconds[second];
            s.slots += tap.slots;
            if let Some(n) = name.filter(|&n| n < s.calls.len()) {
                s.calls[n] += tap.calls;
                s.moved[n] += tap.moved;
            }
        }
        outcome
    }

    fn state(&self) -> ClientState {
        self.inner.state()
    }

    fn snapshot(&self) -> ClientSnapshot {
        self.inner.snapshot()
    }

    fn error_name(&self, class: ErrorClass) -> &'static str {
        self.inner.error_name(class)
    }

    fn socket_timeout_ms(&self) -> Option<u64> {
        self.inner.socket_timeout_ms()
    }

    fn set_concurrency(&mut self, in_flight: u32) {
        self.inner.set_concurrency(in_flight);
    }
}
