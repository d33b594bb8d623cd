//! One command's run through `ClusterClient.process` (`osscluster.go` l. 985-1051 at `v9.8.0`):
//! its attempts, and the pause at a retry's backoff.
//!
//! A retry that follows no redirect first sleeps `retryBackoff(attempt)` (l. 992-996). The
//! model pauses the command there ([`Step::Paused`]): on the timed clock the commands sent
//! before the sleep ends run first, so they take their turns at a full pool before the retry
//! asks for one. go-redis's `waitTurn` is a send on a channel (`internal/pool/pool.go`
//! l. 310-344) and the Go runtime hands a channel's free place to its blocked senders in the
//! order they came: a retry queues behind the commands that came during its timeout. Run whole,
//! a command's four attempts took their turns before any later command asked, and a node that
//! stalled a little longer than a command's attempts failed commands the real client held in
//! the queue until the node woke (docs/FIDELITY.md, "go-redis: a retry waits its turn"). On
//! the lanes' instant clock nothing runs meanwhile: the backoff is slept inside the command.

use super::{Client, ERRORS};
use crate::redirect::Redirect;
use crate::replay::client::Transport;
use crate::replay::cluster::Reply;
use crate::replay::outcome::{ClientError, Outcome};
use crate::replay::sequential::Step;
use crate::replay::Routed;
use crate::timeline::NodeIdx;

/// Where one command's `process` loop stands between its steps.
#[derive(Clone, Copy, Debug)]
pub(super) struct Run {
    cmd: Routed,
    /// The attempt to make next.
    attempt: u32,
    /// The node of the next attempt (`None`: the slot's, looked up then).
    node: Option<NodeIdx>,
    /// The next attempt sends `ASKING` first.
    ask: bool,
    /// The error the command fails with if no attempt is left.
    last: ClientError,
    /// The last attempt met `MOVED` or `ASK`: the next is sent at once.
    redirected: bool,
    /// The next attempt's backoff has been slept (the command paused at it).
    backed_off: bool,
}

impl Run {
    /// A command before its first attempt.
    pub(super) fn new(cmd: Routed) -> Run {
        Run {
            cmd,
            attempt: 0,
            node: None,
            ask: false,
            last: ERRORS.connection,
            redirected: false,
            backed_off: false,
        }
    }
}

impl Client {
    /// `ClusterClient.process` from where `run` stands: the command's end, or a pause at a
    /// retry's backoff (the clock at the sleep's end). A redirect's `LazyReload` is dated from
    /// the step's start.
    pub(super) fn process(&mut self, mut run: Run, net: &mut dyn Transport) -> Step {
        let began = net.now();
        while run.attempt <= self.limits.max_redirects {
            if run.attempt > 0 && !run.redirected && !run.backed_off {
                let sleep = self.limits.retry_backoff_us(run.attempt, &mut self.rng);
                net.sleep_us(sleep);
                if sleep > 0 && !self.lanes {
                    run.backed_off = true;
                    return self.paused.park(run);
                }
            }
            run.backed_off = false;
            run.redirected = false;
            let n = match run.node {
                Some(n) => n,
                None => match self.cmd_node(run.cmd, net) {
                    Ok(n) => n,
                    Err(class) => return Step::Done(Outcome::Failed(class)),
                },
            };
            run.node = Some(n);
            let reply = self.node_send(n, run.cmd, run.ask, net);
            run.ask = false;
            let attempt = run.attempt;
            run.attempt += 1;
            let reply = match reply {
                Ok(reply) => reply,
                Err(e) => {
                    run.last = e;
                    if attempt > 0 {
                        run.node = None;
                    }
                    continue;
                }
            };
            match reply {
                Reply::Ok => return Step::Done(Outcome::Ok),
                Reply::Redirect(Redirect::Moved { to, .. }) => {
                    run.redirected = true;
                    self.lazy_reload(began);
                    run.node = self.get_or_create(&to);
                    run.last = ERRORS.too_many_redirects;
                }
                Reply::Redirect(Redirect::Ask { to, .. }) => {
                    run.redirected = true;
                    self.lazy_reload(began);
                    run.node = self.get_or_create(&to);
                    run.ask = true;
                    run.last = ERRORS.too_many_redirects;
                }
                Reply::ConnectionError | Reply::Timeout | Reply::ClusterDown => {
                    run.last = ERRORS.of_reply(&reply);
                    if attempt > 0 {
                        // MarkAsFailing; slotMasterNode picks the master again.
                        run.node = None;
                    }
                }
            }
        }
        Step::Done(Outcome::Failed(run.last))
    }
}
